! Partitioned communication through mpif.h: around a ring, 4 send partitions
! of 10 integers against 2 receive partitions of 20, readied in reverse
! order, arrivals polled with MPI_Parrived (partition numbers from 0), over
! three starts with fresh data; a partition readied twice is MPI_ERR_ARG.
! px-requires: MPI_Psend_init MPI_Precv_init MPI_Pready MPI_Pready_range MPI_Parrived
program f_partitioned
    implicit none
    include 'mpif.h'
    integer :: ierr, rank, nprocs, right, left, round, i, k, n, errclass
    integer :: sbuf(40), rbuf(40), reqs(2)
    integer(kind=MPI_COUNT_KIND) :: scount, rcount
    logical :: flag, got(0:1)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    right = mod(rank + 1, nprocs)
    left = mod(rank + nprocs - 1, nprocs)
    scount = 10
    rcount = 20
    call MPI_Precv_init(rbuf, 2, rcount, MPI_INTEGER, left, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &
                        reqs(1), ierr)
    call check(ierr == MPI_SUCCESS, 'precv_init')
    call MPI_Psend_init(sbuf, 4, scount, MPI_INTEGER, right, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &
                        reqs(2), ierr)
    call check(ierr == MPI_SUCCESS, 'psend_init')
    do round = 1, 3
        do i = 1, 40
            sbuf(i) = rank * 10000 + round * 100 + i
            rbuf(i) = -1
        end do
        call MPI_Startall(2, reqs, ierr)
        call check(ierr == MPI_SUCCESS, 'startall')
        do k = 3, 1, -1
            call MPI_Pready(k, reqs(2), ierr)
            call check(ierr == MPI_SUCCESS, 'pready')
        end do
        call MPI_Pready(3, reqs(2), ierr)
        call MPI_Error_class(ierr, errclass, ierr)
        call check(errclass == MPI_ERR_ARG, 'partition readied twice')
        call MPI_Pready_range(0, 0, reqs(2), ierr)
        call check(ierr == MPI_SUCCESS, 'pready_range')
        got = .false.
        n = 0
        do while (n < 2)
            do k = 0, 1
                if (got(k)) cycle
                call MPI_Parrived(reqs(1), k, flag, ierr)
                call check(ierr == MPI_SUCCESS, 'parrived')
                if (flag) then
                    got(k) = .true.
                    n = n + 1
                    do i = k * 20 + 1, k * 20 + 20
                        call check(rbuf(i) == left * 10000 + round * 100 + i, 'partition data')
                    end do
                end if
            end do
        end do
        call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
        call check(ierr == MPI_SUCCESS, 'waitall')
    end do
    call MPI_Request_free(reqs(1), ierr)
    call MPI_Request_free(reqs(2), ierr)
    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_partitioned np=', nprocs, ':'
    call MPI_Finalize(ierr)

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: e
        if (.not. ok) then
            write (*, '(A,A)') 'FAIL f_partitioned: ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
            stop 1
        end if
    end subroutine check
end program f_partitioned
