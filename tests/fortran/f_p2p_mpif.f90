! Point-to-point through mpif.h: ranks, Wtime, processor name, send/recv with
! status and MPI_STATUS_IGNORE, isend/irecv/waitall, waitany index, error
! handler MPI_ERRORS_RETURN with an invalid rank.
program f_p2p_mpif
    implicit none
    include 'mpif.h'
    integer :: ierr, rank, nprocs, i, n, peer, count, errclass, reslen, idx
    integer :: status(MPI_STATUS_SIZE)
    integer :: reqs(2), statuses(MPI_STATUS_SIZE, 2)
    integer :: sbuf(100), rbuf(100), ibuf(8), jbuf(8)
    double precision :: t0, t1, dsend(4), drecv(4)
    character(len=MPI_MAX_PROCESSOR_NAME) :: pname
    character(len=MPI_MAX_ERROR_STRING) :: estr
    logical :: flag

    call MPI_Init(ierr)
    call check(ierr == MPI_SUCCESS, 'init')
    call MPI_Initialized(flag, ierr)
    call check(flag, 'initialized')
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call check(rank >= 0 .and. rank < nprocs, 'rank range')

    t0 = MPI_Wtime()
    call check(MPI_Wtick() > 0.0d0 .and. MPI_Wtick() < 1.0d0, 'wtick')

    pname = 'x'
    call MPI_Get_processor_name(pname, reslen, ierr)
    call check(ierr == MPI_SUCCESS .and. reslen > 0 .and. reslen <= MPI_MAX_PROCESSOR_NAME, &
               'processor name length')
    call check(len_trim(pname) == reslen, 'processor name blank padded')

    ! Ring: send 100 integers to the right, receive from the left with status.
    do i = 1, 100
        sbuf(i) = rank * 1000 + i
    end do
    peer = mod(rank + 1, nprocs)
    if (nprocs > 1) then
        if (mod(rank, 2) == 0) then
            call MPI_Send(sbuf, 100, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, ierr)
            call MPI_Recv(rbuf, 100, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, &
                          MPI_COMM_WORLD, status, ierr)
        else
            call MPI_Recv(rbuf, 100, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, &
                          MPI_COMM_WORLD, status, ierr)
            call MPI_Send(sbuf, 100, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, ierr)
        end if
        call check(ierr == MPI_SUCCESS, 'send/recv')
        call check(status(MPI_SOURCE) == mod(rank - 1 + nprocs, nprocs), 'status source')
        call check(status(MPI_TAG) == 7, 'status tag')
        call MPI_Get_count(status, MPI_INTEGER, count, ierr)
        call check(count == 100, 'get_count')
        do i = 1, 100
            call check(rbuf(i) == mod(rank - 1 + nprocs, nprocs) * 1000 + i, 'recv data')
        end do

        ! Same with MPI_STATUS_IGNORE and double precision data; the common
        ! block the receive does not write into must be left alone.
        dsend = (/ 1.5d0, 2.5d0, 3.5d0, dble(rank) /)
        call MPI_Sendrecv(dsend, 4, MPI_DOUBLE_PRECISION, peer, 9, drecv, 4, &
                          MPI_DOUBLE_PRECISION, mod(rank - 1 + nprocs, nprocs), 9, &
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call check(ierr == MPI_SUCCESS, 'sendrecv')
        call check(drecv(3) == 3.5d0 .and. drecv(4) == dble(mod(rank - 1 + nprocs, nprocs)), &
                   'sendrecv data')
    end if

    ! Nonblocking exchange with both neighbours, waitall with statuses.
    do i = 1, 8
        ibuf(i) = rank + i
    end do
    jbuf = -1
    call MPI_Irecv(jbuf, 8, MPI_INTEGER, mod(rank - 1 + nprocs, nprocs), 3, MPI_COMM_WORLD, &
                   reqs(1), ierr)
    call MPI_Isend(ibuf, 8, MPI_INTEGER, peer, 3, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, statuses, ierr)
    call check(ierr == MPI_SUCCESS, 'waitall')
    call check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, 'requests freed')
    call check(statuses(MPI_SOURCE, 1) == mod(rank - 1 + nprocs, nprocs), 'waitall status')
    do i = 1, 8
        call check(jbuf(i) == mod(rank - 1 + nprocs, nprocs) + i, 'irecv data')
    end do

    ! Waitall with MPI_STATUSES_IGNORE, then Waitany's 1-based index.
    call MPI_Irecv(jbuf, 8, MPI_INTEGER, mod(rank - 1 + nprocs, nprocs), 4, MPI_COMM_WORLD, &
                   reqs(1), ierr)
    call MPI_Isend(ibuf, 8, MPI_INTEGER, peer, 4, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'waitall statuses_ignore')
    reqs(1) = MPI_REQUEST_NULL
    call MPI_Irecv(jbuf, 8, MPI_INTEGER, mod(rank - 1 + nprocs, nprocs), 5, MPI_COMM_WORLD, &
                   reqs(2), ierr)
    call MPI_Send(ibuf, 8, MPI_INTEGER, peer, 5, MPI_COMM_WORLD, ierr)
    call MPI_Waitany(2, reqs, idx, status, ierr)
    call check(ierr == MPI_SUCCESS .and. idx == 2, 'waitany index is 1-based')
    call check(status(MPI_TAG) == 5, 'waitany status')

    ! Errors returned, not fatal: a rank outside the communicator.
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Send(sbuf, 1, MPI_INTEGER, nprocs + 5, 0, MPI_COMM_WORLD, ierr)
    call check(ierr /= MPI_SUCCESS, 'invalid rank fails')
    call MPI_Error_class(ierr, errclass, ierr)
    call check(errclass == MPI_ERR_RANK, 'MPI_ERR_RANK')
    estr = ''
    call MPI_Error_string(MPI_ERR_RANK, estr, reslen, ierr)
    call check(reslen > 0 .and. len_trim(estr) == reslen, 'error string')

    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t1 = MPI_Wtime()
    call check(t1 >= t0, 'wtime monotonic')
    n = nprocs
    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_p2p_mpif np=', n, ':'
    call MPI_Finalize(ierr)
    call check(ierr == MPI_SUCCESS, 'finalize')

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: e
        if (.not. ok) then
            write (*, '(A,A)') 'FAIL f_p2p_mpif: ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
            stop 1
        end if
    end subroutine check
end program f_p2p_mpif
