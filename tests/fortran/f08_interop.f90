! `use mpi` and `use mpi_f08` in one program: handles cross over as
! handle%MPI_VAL (and back as TYPE(MPI_Comm)(i) etc.), constants agree,
! a request started through one binding completes through the other, and
! a communicator and datatype made by one are used by the other.
! px-np: 2 3
module old_style
    implicit none
contains
    ! Sums rank+1 over comm with the `use mpi` bindings, from integer handles.
    integer function sum_ranks(comm, dtype)
        use mpi
        integer, intent(in) :: comm, dtype
        integer :: rank, ierr, s
        call MPI_Comm_rank(comm, rank, ierr)
        call MPI_Allreduce(rank + 1, s, 1, dtype, MPI_SUM, comm, ierr)
        sum_ranks = s
    end function sum_ranks

    ! Copies rank+7 to itself through dtype with the `use mpi` bindings.
    integer function self_copy(comm, dtype)
        use mpi
        integer, intent(in) :: comm, dtype
        integer :: rank, ierr, r
        call MPI_Comm_rank(comm, rank, ierr)
        call MPI_Sendrecv(rank + 7, 1, dtype, rank, 3, r, 1, dtype, rank, 3, comm, &
                          MPI_STATUS_IGNORE, ierr)
        self_copy = r
    end function self_copy

    ! Waits for a request with an mpif.h status array; returns its tag.
    integer function wait_tag(req)
        use mpi
        integer, intent(inout) :: req
        integer :: st(MPI_STATUS_SIZE), ierr
        call MPI_Wait(req, st, ierr)
        wait_tag = st(MPI_TAG)
        if (req /= MPI_REQUEST_NULL) wait_tag = -1
    end function wait_tag

    ! Constants of `use mpi`, for comparison.
    subroutine old_constants(world, intg, sum, null_req, anysrc, undef)
        use mpi
        integer, intent(out) :: world, intg, sum, null_req, anysrc, undef
        world = MPI_COMM_WORLD
        intg = MPI_INTEGER
        sum = MPI_SUM
        null_req = MPI_REQUEST_NULL
        anysrc = MPI_ANY_SOURCE
        undef = MPI_UNDEFINED
    end subroutine old_constants

    ! Splits comm with `use mpi`; the new communicator goes back as an integer.
    integer function old_split(comm)
        use mpi
        integer, intent(in) :: comm
        integer :: rank, ierr, newc
        call MPI_Comm_rank(comm, rank, ierr)
        call MPI_Comm_split(comm, 0, -rank, newc, ierr)
        old_split = newc
    end function old_split
end module old_style

program f08_interop
    use mpi_f08
    use old_style
    implicit none
    character(len=*), parameter :: prog = 'f08_interop'
    integer :: rank, nprocs, world, intg, sum, null_req, anysrc, undef, x, y
    type(MPI_Comm) :: rev
    type(MPI_Request) :: req
    type(MPI_Datatype) :: one

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

    call old_constants(world, intg, sum, null_req, anysrc, undef)
    call check(world == MPI_COMM_WORLD%MPI_VAL .and. intg == MPI_INTEGER%MPI_VAL .and. &
               sum == MPI_SUM%MPI_VAL .and. null_req == MPI_REQUEST_NULL%MPI_VAL .and. &
               anysrc == MPI_ANY_SOURCE .and. undef == MPI_UNDEFINED, 'constants agree')
    call check(MPI_Comm(world) == MPI_COMM_WORLD, 'integer to TYPE(MPI_Comm)')

    call check(sum_ranks(MPI_COMM_WORLD%MPI_VAL, MPI_INTEGER%MPI_VAL) == &
               nprocs * (nprocs + 1) / 2, 'f08 handles used by use mpi')

    ! A communicator made by `use mpi`, used with mpi_f08.
    rev%MPI_VAL = old_split(MPI_COMM_WORLD%MPI_VAL)
    call MPI_Comm_rank(rev, x)
    call check(x == nprocs - 1 - rank, 'use mpi communicator in mpi_f08')
    call MPI_Comm_free(rev)

    ! A derived datatype from mpi_f08 used by `use mpi`.
    call MPI_Type_contiguous(1, MPI_INTEGER, one)
    call MPI_Type_commit(one)
    call check(self_copy(MPI_COMM_WORLD%MPI_VAL, one%MPI_VAL) == rank + 7, &
               'mpi_f08 datatype in use mpi')
    call MPI_Type_free(one)

    ! A request from mpi_f08 completed with `use mpi`.
    call MPI_Irecv(y, 1, MPI_INTEGER, mod(rank - 1 + nprocs, nprocs), 42, MPI_COMM_WORLD, req)
    x = rank
    call MPI_Send(x, 1, MPI_INTEGER, mod(rank + 1, nprocs), 42, MPI_COMM_WORLD)
    call check(wait_tag(req%MPI_VAL) == 42 .and. y == mod(rank - 1 + nprocs, nprocs), &
               'mpi_f08 request waited by use mpi')

    if (rank == 0) write (*, '(A,A,A,I0,A)') 'PASS ', prog, ' np=', nprocs, ':'
    call MPI_Finalize()

contains

    include 'f08_check.inc'
end program f08_interop
