! Collectives and communicators through `use mpi`: bcast, reduce, allreduce
! with MPI_IN_PLACE, comm_split, attributes of kind MPI_ADDRESS_KIND,
! communicator names.
program f_coll_usempi
    use mpi
    implicit none
    integer :: ierr, rank, nprocs, i, root, color, sub, srank, ssize, reslen
    integer :: ival(3), isum(3)
    double precision :: dval(2)
    integer(kind=MPI_ADDRESS_KIND) :: aval
    logical :: flag
    character(len=MPI_MAX_OBJECT_NAME) :: cname

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    ! Bcast from every root.
    do root = 0, nprocs - 1
        ival = -1
        if (rank == root) ival = (/ root, root * 2, 42 /)
        call MPI_Bcast(ival, 3, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
        call check(ierr == MPI_SUCCESS .and. ival(1) == root .and. ival(2) == 2 * root &
                   .and. ival(3) == 42, 'bcast')
    end do

    ! Reduce to the last rank.
    ival = (/ rank, 1, rank * rank /)
    isum = -7
    call MPI_Reduce(ival, isum, 3, MPI_INTEGER, MPI_SUM, nprocs - 1, MPI_COMM_WORLD, ierr)
    if (rank == nprocs - 1) then
        call check(isum(1) == nprocs * (nprocs - 1) / 2 .and. isum(2) == nprocs, 'reduce sum')
    else
        call check(isum(1) == -7, 'reduce leaves non-root buffer')
    end if

    ! Allreduce in place (MPI_IN_PLACE from the common block).
    dval = (/ dble(rank + 1), -dble(rank) /)
    call MPI_Allreduce(MPI_IN_PLACE, dval, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. dval(1) == dble(nprocs) .and. dval(2) == 0.0d0, &
               'allreduce in place')
    ival = (/ rank, 1, 0 /)
    call MPI_Allreduce(MPI_IN_PLACE, ival, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(ival(1) == nprocs * (nprocs - 1) / 2 .and. ival(2) == nprocs, 'allreduce sum')

    ! Reduce in place at the root.
    ival = (/ 1, rank, 0 /)
    if (rank == 0) then
        call MPI_Reduce(MPI_IN_PLACE, ival, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
        call check(ival(1) == nprocs .and. ival(2) == nprocs * (nprocs - 1) / 2, &
                   'reduce in place')
    else
        call MPI_Reduce(ival, ival, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    end if

    ! Split into even and odd ranks, reverse order by key.
    color = mod(rank, 2)
    call MPI_Comm_split(MPI_COMM_WORLD, color, -rank, sub, ierr)
    call check(ierr == MPI_SUCCESS .and. sub /= MPI_COMM_NULL, 'comm_split')
    call MPI_Comm_rank(sub, srank, ierr)
    call MPI_Comm_size(sub, ssize, ierr)
    call check(ssize == (nprocs - color + 1) / 2, 'split size')
    call check(srank == (nprocs - 1 - color) / 2 - rank / 2, 'split rank order')
    call MPI_Allreduce(rank, i, 1, MPI_INTEGER, MPI_MIN, sub, ierr)
    call check(i == color, 'allreduce on split comm')
    call MPI_Comm_set_name(sub, 'halves   ', ierr)
    cname = 'garbage'
    call MPI_Comm_get_name(sub, cname, reslen, ierr)
    call check(ierr == MPI_SUCCESS .and. reslen == 6 .and. cname == 'halves', 'comm name')
    call MPI_Comm_free(sub, ierr)
    call check(sub == MPI_COMM_NULL, 'comm_free')

    ! Attribute value of kind MPI_ADDRESS_KIND.
    aval = -1
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. aval >= 32767, 'MPI_TAG_UB')

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_coll_usempi np=', nprocs, ':'
    call MPI_Finalize(ierr)

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: e
        if (.not. ok) then
            write (*, '(A,A)') 'FAIL f_coll_usempi: ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
            stop 1
        end if
    end subroutine check
end program f_coll_usempi
