! MPI_Comm_spawn and MPI_Comm_spawn_multiple through mpif.h, the program
! spawning itself: arguments as arrays of blank-padded strings (the first
! blank element ends them; trailing blanks dropped, inner ones kept),
! MPI_ARGV_NULL, MPI_ARGVS_NULL, MPI_ERRCODES_IGNORE, the error codes of
! every child, MPI_APPNUM of each command, and data both ways over the
! inter-communicator. The parents' rank 0 prints the result.
! px-np: 1 2
! px-requires: MPI_Comm_spawn MPI_Comm_spawn_multiple MPI_Comm_get_parent
! px-requires: MPI_Comm_disconnect
program f_spawn_mpif
    implicit none
    include 'mpif.h'
    integer :: ierr, parent, rank, nprocs
    character(len=512) :: prog

    call MPI_Init(ierr)
    call MPI_Comm_get_parent(parent, ierr)
    if (parent /= MPI_COMM_NULL) then
        call child(parent)
    else
        call get_command_argument(0, prog)
        call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
        call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
        call parents(trim(prog), rank, nprocs)
    end if
    call MPI_Finalize(ierr)

contains

    subroutine fail(what)
        character(len=*), intent(in) :: what
        integer :: e
        write (*, '(A,A)') 'FAIL f_spawn_mpif: ', what
        call MPI_Abort(MPI_COMM_WORLD, 1, e)
        stop 1
    end subroutine fail

    ! Rank 0 of the parents sends each child c of ic (n of them) the values
    ! c*10+1..c*10+4; each answers their sum plus its check word (tag 2), then
    ! every child gets the sum of all answers back from every parent.
    subroutine exchange(ic, n, want_word, what)
        integer, intent(in) :: ic, n, want_word
        character(len=*), intent(in) :: what
        integer :: c, i, v(4), ans, st(MPI_STATUS_SIZE), total, e
        total = 0
        call MPI_Comm_rank(MPI_COMM_WORLD, rank, e)
        if (rank == 0) then
            do c = 0, n - 1
                v = (/ (c * 10 + i, i = 1, 4) /)
                call MPI_Send(v, 4, MPI_INTEGER, c, 1, ic, e)
            end do
            do c = 0, n - 1
                call MPI_Recv(ans, 1, MPI_INTEGER, c, 2, ic, st, e)
                if (ans /= 40 * c + 10 + want_word) then
                    write (*, '(A,A,I0,A,I0)') what, ': child ', c, ' answered ', ans
                    call fail(what)
                end if
                total = total + ans
            end do
        end if
        call MPI_Bcast(total, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, e)
        do c = 0, n - 1
            call MPI_Send(total, 1, MPI_INTEGER, c, 3, ic, e)
        end do
        call MPI_Comm_disconnect(ic, e)
        if (ic /= MPI_COMM_NULL) call fail(what // ': disconnect')
    end subroutine exchange

    subroutine parents(prog, rank, nprocs)
        character(len=*), intent(in) :: prog
        integer, intent(in) :: rank, nprocs
        character(len=12) :: args(4), argvs(2, 3)
        character(len=len(prog)) :: cmds(2)
        integer :: ic, e, codes(3), maxp(2), infos(2), i

        ! 2 children with arguments; codes of each
        args(1) = 'plain'
        args(2) = 'two words'
        args(3) = 'x'
        args(4) = ' '
        codes = -1
        call MPI_Comm_spawn(prog, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, ic, codes, e)
        if (e /= MPI_SUCCESS) call fail('spawn')
        if (codes(1) /= MPI_SUCCESS .or. codes(2) /= MPI_SUCCESS .or. codes(3) /= -1) &
            call fail('spawn: error codes')
        call MPI_Comm_remote_size(ic, i, e)
        if (i /= 2) call fail('spawn: remote size')
        call exchange(ic, 2, 1, 'spawn')

        ! no arguments, codes ignored; the root is the last parent
        call MPI_Comm_spawn(prog, MPI_ARGV_NULL, 1, MPI_INFO_NULL, nprocs - 1, MPI_COMM_WORLD, &
                            ic, MPI_ERRCODES_IGNORE, e)
        if (e /= MPI_SUCCESS) call fail('spawn with MPI_ARGV_NULL')
        call exchange(ic, 1, 2, 'MPI_ARGV_NULL')

        ! two commands: argvs(i, :) are the arguments of command i
        cmds = prog
        argvs = ' '
        argvs(1, 1) = 'multi'
        argvs(1, 2) = 'app0'
        argvs(2, 1) = 'multi'
        argvs(2, 2) = 'app1'
        maxp = (/ 1, 2 /)
        infos = MPI_INFO_NULL
        codes = -1
        call MPI_Comm_spawn_multiple(2, cmds, argvs, maxp, infos, 0, MPI_COMM_WORLD, ic, codes, e)
        if (e /= MPI_SUCCESS) call fail('spawn_multiple')
        if (any(codes /= MPI_SUCCESS)) call fail('spawn_multiple: error codes')
        call exchange(ic, 3, 3, 'spawn_multiple')

        call MPI_Comm_spawn_multiple(1, cmds, MPI_ARGVS_NULL, maxp, infos, 0, MPI_COMM_WORLD, &
                                     ic, MPI_ERRCODES_IGNORE, e)
        if (e /= MPI_SUCCESS) call fail('spawn_multiple with MPI_ARGVS_NULL')
        call exchange(ic, 1, 2, 'MPI_ARGVS_NULL')

        if (rank == 0) write (*, '(A,I0,A)') 'PASS f_spawn_mpif np=', nprocs, ': 4 spawns'
    end subroutine parents

    ! Answers the sum of the 4 values it gets plus a word that says whether
    ! its arguments are those of its spawn (1: the list of 3, 2: none,
    ! 3: 'multi' and its command's name), 0 if not.
    subroutine child(parent)
        integer, intent(in) :: parent
        integer :: v(4), st(MPI_STATUS_SIZE), e, word, total, n, me
        integer(kind=MPI_ADDRESS_KIND) :: appnum
        logical :: flag
        character(len=32) :: a1, a2, a3, want

        n = command_argument_count()
        call get_command_argument(1, a1)
        call get_command_argument(2, a2)
        call get_command_argument(3, a3)
        word = 0
        if (n == 3 .and. a1 == 'plain' .and. a2 == 'two words' .and. a3 == 'x') then
            word = 1
        else if (n == 0) then
            word = 2
        else if (n == 2 .and. a1 == 'multi') then
            call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, appnum, flag, e)
            write (want, '(A,I0)') 'app', appnum
            if (flag .and. a2 == want) word = 3
        end if
        call MPI_Comm_rank(MPI_COMM_WORLD, me, e)
        call MPI_Recv(v, 4, MPI_INTEGER, 0, 1, parent, st, e)
        v(1) = sum(v) + word
        call MPI_Send(v(1), 1, MPI_INTEGER, 0, 2, parent, e)
        call MPI_Comm_remote_size(parent, n, e)
        do e = 0, n - 1
            call MPI_Recv(total, 1, MPI_INTEGER, e, 3, parent, st, me)
        end do
        call MPI_Comm_disconnect(parent, e)
    end subroutine child
end program f_spawn_mpif
