! MPI_Comm_spawn and MPI_Comm_spawn_multiple through mpi_f08, the program
! spawning itself: CHARACTER(LEN=*) arrays of arguments (the first blank
! element ends them), MPI_ARGV_NULL, MPI_ARGVS_NULL, MPI_ERRCODES_IGNORE,
! the error codes, MPI_APPNUM, and data both ways.
! px-np: 1 2
! px-requires: MPI_Comm_spawn MPI_Comm_spawn_multiple MPI_Comm_get_parent
! px-requires: MPI_Comm_disconnect
program f08_spawn
    use mpi_f08
    implicit none
    character(len=*), parameter :: prog = 'f08_spawn'
    type(MPI_Comm) :: parent, ic
    integer :: rank, nprocs, codes(3), maxp(2)
    type(MPI_Info) :: infos(2)
    character(len=512) :: self
    character(len=8) :: args(3), argvs(2, 3)
    character(len=512) :: cmds(2)

    call MPI_Init()
    call MPI_Comm_get_parent(parent)
    if (parent /= MPI_COMM_NULL) then
        call child(parent)
        call MPI_Finalize()
        stop
    end if
    call get_command_argument(0, self)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

    args = (/ 'f08     ', 'a b     ', '        ' /)
    codes = -1
    call MPI_Comm_spawn(trim(self), args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, ic, codes)
    call check(all(codes(1:2) == MPI_SUCCESS) .and. codes(3) == -1, 'spawn: error codes')
    call exchange(ic, 2, 1)

    call MPI_Comm_spawn(trim(self), MPI_ARGV_NULL, 1, MPI_INFO_NULL, nprocs - 1, MPI_COMM_WORLD, &
                        ic, MPI_ERRCODES_IGNORE)
    call exchange(ic, 1, 2)

    cmds = self
    argvs = ' '
    argvs(:, 1) = 'multi'
    argvs(1, 2) = 'app0'
    argvs(2, 2) = 'app1'
    maxp = (/ 2, 1 /)
    infos = MPI_INFO_NULL
    codes = -1
    call MPI_Comm_spawn_multiple(2, cmds, argvs, maxp, infos, 0, MPI_COMM_WORLD, ic, codes)
    call check(all(codes == MPI_SUCCESS), 'spawn_multiple: error codes')
    call exchange(ic, 3, 3)

    call MPI_Comm_spawn_multiple(1, cmds, MPI_ARGVS_NULL, maxp, infos, 0, MPI_COMM_WORLD, ic, &
                                 MPI_ERRCODES_IGNORE)
    call exchange(ic, 2, 2)

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f08_spawn np=', nprocs, ': 4 spawns'
    call MPI_Finalize()

contains

    ! Rank 0 sends child c the value 100+c; each answers it plus its check
    ! word; then every parent sends every child the number of children.
    subroutine exchange(ic, n, want)
        type(MPI_Comm), intent(inout) :: ic
        integer, intent(in) :: n, want
        integer :: c, v
        call MPI_Comm_remote_size(ic, v)
        call check(v == n, 'remote size')
        if (rank == 0) then
            do c = 0, n - 1
                call MPI_Send(100 + c, 1, MPI_INTEGER, c, 1, ic)
            end do
            do c = 0, n - 1
                call MPI_Recv(v, 1, MPI_INTEGER, c, 2, ic, MPI_STATUS_IGNORE)
                call check(v == 100 + c + want, 'answer of a child')
            end do
        end if
        do c = 0, n - 1
            call MPI_Send(n, 1, MPI_INTEGER, c, 3, ic)
        end do
        call MPI_Comm_disconnect(ic)
        call check(ic == MPI_COMM_NULL, 'disconnect')
    end subroutine exchange

    ! Check word: 1 for the arguments 'f08' and 'a b', 2 for none, 3 for
    ! 'multi' and the name of its command (MPI_APPNUM); 0 otherwise.
    subroutine child(parent)
        type(MPI_Comm), intent(inout) :: parent
        integer :: n, v, word, i
        integer(kind=MPI_ADDRESS_KIND) :: appnum
        logical :: flag
        character(len=16) :: a1, a2, want

        n = command_argument_count()
        call get_command_argument(1, a1)
        call get_command_argument(2, a2)
        word = 0
        if (n == 2 .and. a1 == 'f08' .and. a2 == 'a b') then
            word = 1
        else if (n == 0) then
            word = 2
        else if (n == 2 .and. a1 == 'multi') then
            call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, appnum, flag)
            write (want, '(A,I0)') 'app', appnum
            if (flag .and. a2 == want) word = 3
        end if
        call MPI_Recv(v, 1, MPI_INTEGER, 0, 1, parent, MPI_STATUS_IGNORE)
        call MPI_Send(v + word, 1, MPI_INTEGER, 0, 2, parent)
        call MPI_Comm_remote_size(parent, n)
        do i = 0, n - 1
            call MPI_Recv(v, 1, MPI_INTEGER, i, 3, parent, MPI_STATUS_IGNORE)
        end do
        call MPI_Comm_disconnect(parent)
    end subroutine child

    include 'f08_check.inc'
end program f08_spawn
