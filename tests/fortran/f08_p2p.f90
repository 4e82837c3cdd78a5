! use mpi_f08: point-to-point. Blocking and nonblocking send/receive with
! statuses and MPI_Get_count, MPI_STATUS(ES)_IGNORE, waitany/waitsome/testall
! indices, sendrecv, probe/iprobe, mprobe/mrecv and improbe/imrecv, handle
! comparisons, and non-contiguous array sections as buffers.
! px-np: 2 3 4
program f08_p2p
    use mpi_f08
    implicit none
    character(len=*), parameter :: prog = 'f08_p2p'
    integer :: rank, nprocs, peer, i, n, idx, outcount, ierr
    integer :: ibuf(10), jbuf(10), big(20), idxs(4)
    double precision :: d(12), e(12)
    type(MPI_Status) :: st, sts(4)
    type(MPI_Request) :: reqs(4), req
    type(MPI_Message) :: msg
    type(MPI_Comm) :: comm
    logical :: flag

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    comm = MPI_COMM_WORLD
    call check(comm == MPI_COMM_WORLD .and. comm /= MPI_COMM_SELF .and. &
               comm%MPI_VAL == MPI_COMM_WORLD%MPI_VAL, 'handle comparison')
    call check(MPI_REQUEST_NULL .eq. MPI_REQUEST_NULL .and. MPI_INTEGER .ne. MPI_REAL, &
               '.eq. / .ne. on handles')

    ! Ring: blocking send to the right, receive from the left with a status.
    peer = mod(rank + 1, nprocs)
    ibuf = (/ (rank * 100 + i, i = 1, 10) /)
    jbuf = -1
    if (mod(rank, 2) == 0) then
        call MPI_Send(ibuf, 7, MPI_INTEGER, peer, 11, MPI_COMM_WORLD)
        call MPI_Recv(jbuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st)
    else
        call MPI_Recv(jbuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st)
        call MPI_Send(ibuf, 7, MPI_INTEGER, peer, 11, MPI_COMM_WORLD)
    end if
    call MPI_Get_count(st, MPI_INTEGER, n)
    call check(st%MPI_SOURCE == mod(rank - 1 + nprocs, nprocs) .and. st%MPI_TAG == 11 .and. &
               n == 7, 'recv status and count')
    call check(jbuf(1) == st%MPI_SOURCE * 100 + 1 .and. jbuf(7) == st%MPI_SOURCE * 100 + 7 &
               .and. jbuf(8) == -1, 'recv data')

    ! Nonblocking: irecv from the left, isend to the right, waitall.
    jbuf = -1
    call MPI_Irecv(jbuf, 10, MPI_INTEGER, mod(rank - 1 + nprocs, nprocs), 12, MPI_COMM_WORLD, &
                   reqs(1))
    call MPI_Isend(ibuf, 10, MPI_INTEGER, peer, 12, MPI_COMM_WORLD, reqs(2))
    call check(reqs(1) /= MPI_REQUEST_NULL, 'irecv request')
    call MPI_Waitall(2, reqs, sts)
    call MPI_Get_count(sts(1), MPI_INTEGER, n)
    call check(n == 10 .and. sts(1)%MPI_TAG == 12 .and. jbuf(10) == sts(1)%MPI_SOURCE * 100 &
               + 10 .and. reqs(1) == MPI_REQUEST_NULL, 'waitall')

    ! Waitany / waitsome / testall: indices are 1-based.
    call MPI_Irecv(jbuf, 10, MPI_INTEGER, mod(rank - 1 + nprocs, nprocs), 13, MPI_COMM_WORLD, &
                   reqs(1))
    reqs(2) = MPI_REQUEST_NULL
    call MPI_Isend(ibuf, 10, MPI_INTEGER, peer, 13, MPI_COMM_WORLD, reqs(3))
    call MPI_Waitany(3, reqs, idx, st)
    call check(idx == 1 .or. idx == 3, 'waitany index')
    call MPI_Waitsome(3, reqs, outcount, idxs, MPI_STATUSES_IGNORE)
    call check(outcount == 1 .and. idxs(1) == 4 - idx, 'waitsome index')
    call MPI_Testall(3, reqs, flag, MPI_STATUSES_IGNORE)
    call check(flag, 'testall of null requests')

    ! Sendrecv with MPI_STATUS_IGNORE and an ierror argument.
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, peer, 14, i, 1, MPI_INTEGER, &
                      mod(rank - 1 + nprocs, nprocs), 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. i == mod(rank - 1 + nprocs, nprocs), 'sendrecv')

    ! Probe, iprobe, mprobe/mrecv, improbe/imrecv: rank 0 sends rank 1 three messages.
    if (rank == 0) then
        big = (/ (i, i = 1, 20) /)
        call MPI_Send(big, 20, MPI_INTEGER, 1, 20, MPI_COMM_WORLD)
        call MPI_Send(big, 5, MPI_INTEGER, 1, 21, MPI_COMM_WORLD)
        call MPI_Send(big, 3, MPI_INTEGER, 1, 22, MPI_COMM_WORLD)
    else if (rank == 1) then
        call MPI_Probe(0, 20, MPI_COMM_WORLD, st)
        call MPI_Get_count(st, MPI_INTEGER, n)
        call check(n == 20 .and. st%MPI_SOURCE == 0, 'probe')
        big = 0
        call MPI_Recv(big, n, MPI_INTEGER, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call check(big(20) == 20, 'recv after probe')
        flag = .false.
        do while (.not. flag)
            call MPI_Iprobe(0, 21, MPI_COMM_WORLD, flag, st)
        end do
        call MPI_Mprobe(0, 21, MPI_COMM_WORLD, msg, st)
        call MPI_Get_count(st, MPI_INTEGER, n)
        call check(n == 5 .and. msg /= MPI_MESSAGE_NULL, 'mprobe')
        big = 0
        call MPI_Mrecv(big, n, MPI_INTEGER, msg, st)
        call check(big(5) == 5 .and. big(6) == 0 .and. msg == MPI_MESSAGE_NULL, 'mrecv')
        flag = .false.
        do while (.not. flag)
            call MPI_Improbe(0, 22, MPI_COMM_WORLD, flag, msg, st)
        end do
        big = 0
        call MPI_Imrecv(big, 3, MPI_INTEGER, msg, req)
        call MPI_Wait(req, st)
        call MPI_Get_count(st, MPI_INTEGER, n)
        call check(n == 3 .and. big(3) == 3 .and. big(4) == 0, 'improbe/imrecv')
    end if

    ! Non-contiguous sections: every other element, blocking and nonblocking,
    ! and a 2-d section received into a strided slice.
    d = (/ (dble(rank * 1000 + i), i = 1, 12) /)
    e = -1
    if (rank == 0) then
        call MPI_Send(d(1:12:2), 6, MPI_DOUBLE_PRECISION, 1, 30, MPI_COMM_WORLD)
        call MPI_Isend(d(2:12:2), 6, MPI_DOUBLE_PRECISION, 1, 31, MPI_COMM_WORLD, req)
        call MPI_Wait(req, MPI_STATUS_IGNORE)
        call MPI_Send(d(12:1:-3), 4, MPI_DOUBLE_PRECISION, 1, 32, MPI_COMM_WORLD)
    else if (rank == 1) then
        call MPI_Recv(e(2:12:2), 6, MPI_DOUBLE_PRECISION, 0, 30, MPI_COMM_WORLD, st)
        call MPI_Get_count(st, MPI_DOUBLE_PRECISION, n)
        call check(n == 6 .and. all(e(2:12:2) == (/ (dble(i), i = 1, 12, 2) /)) .and. &
                   all(e(1:11:2) == -1), 'blocking strided section')
        call MPI_Irecv(e(1:11:2), 6, MPI_DOUBLE_PRECISION, 0, 31, MPI_COMM_WORLD, req)
        call MPI_Wait(req, st)
        call check(all(e(1:11:2) == (/ (dble(i), i = 2, 12, 2) /)) .and. &
                   all(e(2:12:2) == (/ (dble(i), i = 1, 12, 2) /)), 'nonblocking strided section')
        e = -1
        ! 4 elements into the first 4 of a 6-element section (nonblocking)
        call MPI_Irecv(e(1:12:2), 4, MPI_DOUBLE_PRECISION, 0, 32, MPI_COMM_WORLD, req)
        call MPI_Wait(req, st)
        call check(all(e(1:7:2) == (/ 12d0, 9d0, 6d0, 3d0 /)) .and. e(9) == -1 .and. &
                   all(e(2:12:2) == -1), 'partial count in a section')
    end if

    if (rank == 0) write (*, '(A,A,A,I0,A)') 'PASS ', prog, ' np=', nprocs, ':'
    call MPI_Finalize()

contains

    include 'f08_check.inc'
end program f08_p2p
