! use mpi_f08: collectives, blocking and nonblocking: bcast, reduce,
! allreduce (also MPI_IN_PLACE), gather(v), scatter, allgather, alltoall,
! scan, barrier, ibcast/iallreduce/iallgather/ibarrier with wait/test, a
! persistent allreduce, the large-count interface (INTEGER(MPI_COUNT_KIND)
! counts), and non-contiguous sections as collective buffers, also of
! nonblocking and persistent reductions.
! px-np: 2 3 4
program f08_coll
    use mpi_f08
    implicit none
    character(len=*), parameter :: prog = 'f08_coll'
    integer :: rank, nprocs, i, root, ierr, t, w(8), mi(4, 6), mo(4, 6)
    integer :: ival(3), isum(3)
    integer, allocatable :: gat(:), cnts(:), displs(:), sbuf(:), rbuf(:)
    double precision :: dval(2), m(4, 6), v(8)
    integer(kind=MPI_COUNT_KIND) :: bigcount
    type(MPI_Request) :: req, reqs(3)
    logical :: flag

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    allocate (gat(nprocs * 3), cnts(nprocs), displs(nprocs), sbuf(nprocs * 2), rbuf(nprocs * 2))

    do root = 0, nprocs - 1
        ival = -1
        if (rank == root) ival = (/ root, root * 2, 42 /)
        call MPI_Bcast(ival, 3, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
        call check(ierr == MPI_SUCCESS .and. all_eq(ival, (/ root, 2 * root, 42 /)), 'bcast')
    end do

    ival = (/ rank, 1, rank * rank /)
    isum = -7
    call MPI_Reduce(ival, isum, 3, MPI_INTEGER, MPI_SUM, nprocs - 1, MPI_COMM_WORLD)
    if (rank == nprocs - 1) then
        call check(isum(1) == nprocs * (nprocs - 1) / 2 .and. isum(2) == nprocs, 'reduce')
    else
        call check(isum(1) == -7, 'reduce leaves non-root buffer')
    end if

    dval = (/ dble(rank + 1), -dble(rank) /)
    call MPI_Allreduce(MPI_IN_PLACE, dval, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
    call check(dval(1) == dble(nprocs) .and. dval(2) == 0d0, 'allreduce in place')

    ! Gather and gatherv to rank 0, scatter back.
    gat = -1
    call MPI_Gather(ival, 3, MPI_INTEGER, gat, 3, MPI_INTEGER, 0, MPI_COMM_WORLD)
    if (rank == 0) call check(gat(3 * nprocs - 2) == nprocs - 1 .and. gat(3) == 0, 'gather')
    cnts = (/ (mod(i, 3) + 1, i = 0, nprocs - 1) /)
    displs(1) = 0
    do i = 2, nprocs
        displs(i) = displs(i - 1) + cnts(i - 1)
    end do
    gat = -1
    ival = rank
    call MPI_Gatherv(ival, cnts(rank + 1), MPI_INTEGER, gat, cnts, displs, MPI_INTEGER, 0, &
                     MPI_COMM_WORLD)
    if (rank == 0) call check(gat(displs(nprocs) + 1) == nprocs - 1 .and. &
                              gat(displs(nprocs) + cnts(nprocs)) == nprocs - 1, 'gatherv')
    if (rank == 0) gat = (/ (i, i = 1, 3 * nprocs) /)
    ival = 0
    call MPI_Scatter(gat, 3, MPI_INTEGER, ival, 3, MPI_INTEGER, 0, MPI_COMM_WORLD)
    call check(all_eq(ival, (/ 3 * rank + 1, 3 * rank + 2, 3 * rank + 3 /)), 'scatter')

    call MPI_Allgather(rank * 10, 1, MPI_INTEGER, cnts, 1, MPI_INTEGER, MPI_COMM_WORLD)
    call check(all_eq(cnts, (/ (i * 10, i = 0, nprocs - 1) /)), 'allgather')

    sbuf = (/ (rank * 1000 + i, i = 0, 2 * nprocs - 1) /)
    call MPI_Alltoall(sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, MPI_COMM_WORLD)
    call check(rbuf(1) == 2 * rank .and. rbuf(2 * nprocs) == (nprocs - 1) * 1000 + 2 * rank + 1, &
               'alltoall')

    call MPI_Scan(1, i, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call check(i == rank + 1, 'scan')
    call MPI_Barrier(MPI_COMM_WORLD)

    ! Nonblocking collectives.
    ival = -1
    if (rank == 0) ival = (/ 5, 6, 7 /)
    call MPI_Ibcast(ival, 3, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(1))
    call MPI_Iallreduce(rank, i, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, reqs(2))
    call MPI_Ibarrier(MPI_COMM_WORLD, reqs(3))
    call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE)
    call check(all_eq(ival, (/ 5, 6, 7 /)) .and. i == nprocs - 1, 'ibcast/iallreduce/ibarrier')
    cnts = -1
    call MPI_Iallgather(rank + 1, 1, MPI_INTEGER, cnts, 1, MPI_INTEGER, MPI_COMM_WORLD, req)
    flag = .false.
    do while (.not. flag)
        call MPI_Test(req, flag, MPI_STATUS_IGNORE)
    end do
    call check(all_eq(cnts, (/ (i, i = 1, nprocs) /)), 'iallgather + test')

    ! Persistent allreduce, started twice.
    call MPI_Allreduce_init(ival, isum, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, req)
    do i = 1, 2
        ival = (/ i, rank, 1 /)
        call MPI_Start(req)
        call MPI_Wait(req, MPI_STATUS_IGNORE)
        call check(all_eq(isum, (/ i * nprocs, nprocs * (nprocs - 1) / 2, nprocs /)), &
                   'persistent allreduce')
    end do
    call MPI_Request_free(req)

    ! Large-count interface: the same generic name with an MPI_COUNT_KIND count.
    bigcount = 3
    ival = (/ 1, 2, rank /)
    call MPI_Allreduce(ival, isum, bigcount, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call check(all_eq(isum, (/ nprocs, 2 * nprocs, nprocs * (nprocs - 1) / 2 /)), &
               'allreduce with MPI_COUNT_KIND count')

    ! Sections: a matrix row (stride 4) reduced into a column slice, a 2-d
    ! block broadcast blocking and nonblocking.
    m = reshape((/ (dble(i), i = 1, 24) /), (/ 4, 6 /)) + rank
    v = -1
    call MPI_Allreduce(m(2, :), v(1:8:2), 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call check(all(v(1:8:2) == nprocs * m(2, 1:4) - rank * nprocs + nprocs * (nprocs - 1) / 2) &
               .and. all(v(2:8:2) == -1), 'allreduce of a matrix row into a strided slice')
    if (rank /= 0) m = 0
    call MPI_Bcast(m(2:3, 2:5), 8, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
    if (rank /= 0) call check(m(2, 2) == 6 .and. m(3, 5) == 19 .and. m(1, 2) == 0 .and. &
                              m(4, 5) == 0 .and. m(2, 1) == 0, 'bcast of a 2-d block')
    if (rank /= 0) m = 0
    call MPI_Ibcast(m(1:4:3, 1:6:5), 4, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    if (rank /= 0) call check(m(1, 1) == 1 .and. m(4, 1) == 4 .and. m(1, 6) == 21 .and. &
                              m(4, 6) == 24 .and. sum(m) == 50, 'ibcast of a 2-d strided section')

    ! A nonblocking gatherv into a strided section (counts and displacements
    ! count its elements).
    gat = -1
    cnts = 1
    displs = (/ (nprocs - 1 - i, i = 0, nprocs - 1) /)
    call MPI_Igatherv(rank + 50, 1, MPI_INTEGER, gat(1:3 * nprocs:3), cnts, displs, MPI_INTEGER, &
                      0, MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    if (rank == 0) call check(gat(1) == 50 + nprocs - 1 .and. gat(3 * nprocs - 2) == 50 .and. &
                              gat(2) == -1 .and. gat(3) == -1, 'igatherv into a section')

    ! Nonblocking gather, allgather, scatter and alltoall with strided
    ! sections on either side (the count of a gather's receive buffer is per
    ! process); the elements between stay untouched.
    sbuf = (/ (rank * 100 + i, i = 1, 2 * nprocs) /)
    gat = -1
    call MPI_Igather(sbuf(1:4:3), 2, MPI_INTEGER, gat, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    if (rank == 0) call check(all(gat(1:2 * nprocs) == (/ (100 * (i / 2) + 1 + 3 * mod(i, 2), &
                              i = 0, 2 * nprocs - 1) /)) .and. gat(2 * nprocs + 1) == -1, &
                              'igather from a section')
    gat = -1
    call MPI_Iallgather(sbuf, 1, MPI_INTEGER, gat(1:2 * nprocs:2), 1, MPI_INTEGER, &
                        MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call check(all(gat(1:2 * nprocs:2) == (/ (100 * i + 1, i = 0, nprocs - 1) /)) .and. &
               all(gat(2:2 * nprocs:2) == -1), 'iallgather into a section')
    rbuf = -1
    if (rank == 0) gat(1:3 * nprocs) = (/ (i, i = 1, 3 * nprocs) /)
    call MPI_Iscatter(gat(1:3 * nprocs:3), 1, MPI_INTEGER, rbuf(2:4:2), 1, MPI_INTEGER, 0, &
                      MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call check(rbuf(2) == 3 * rank + 1 .and. rbuf(1) == -1 .and. rbuf(3) == -1 .and. &
               rbuf(4) == -1, 'iscatter from a section')
    rbuf = -1
    call MPI_Ialltoall(sbuf(1:2 * nprocs:2), 1, MPI_INTEGER, rbuf(1:2 * nprocs:2), 1, &
                       MPI_INTEGER, MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call check(all(rbuf(1:2 * nprocs:2) == (/ (100 * i + 2 * rank + 1, i = 0, nprocs - 1) /)) &
               .and. all(rbuf(2:2 * nprocs:2) == -1), 'ialltoall of sections')

    ! Nonblocking and persistent reductions of sections laid out alike (a
    ! predefined operation applies to the section's elements, the elements
    ! between stay untouched): 2-d strided sections, matrix rows to each
    ! root, a scan in place, an exscan, a persistent allreduce started twice.
    t = nprocs * (nprocs - 1) / 2
    mi = reshape((/ (i, i = 1, 24) /), (/ 4, 6 /)) + rank
    mo = -1
    call MPI_Iallreduce(mi(1:4:3, 1:6:5), mo(1:4:3, 1:6:5), 4, MPI_INTEGER, MPI_SUM, &
                        MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call check(mo(1, 1) == nprocs + t .and. mo(4, 1) == 4 * nprocs + t .and. &
               mo(1, 6) == 21 * nprocs + t .and. mo(4, 6) == 24 * nprocs + t .and. &
               count(mo == -1) == 20, 'iallreduce of 2-d strided sections')
    do root = 0, nprocs - 1
        mo = -1
        call MPI_Ireduce(mi(2, :), mo(3, :), 6, MPI_INTEGER, MPI_MAX, root, MPI_COMM_WORLD, req)
        call MPI_Wait(req, MPI_STATUS_IGNORE)
        if (rank == root) call check(all(mo(3, :) == mi(2, :) - rank + nprocs - 1) .and. &
                                     count(mo == -1) == 18, 'ireduce of a matrix row')
    end do
    w = rank + 1
    call MPI_Iscan(MPI_IN_PLACE, w(1:8:2), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call check(all(w(1:8:2) == (rank + 1) * (rank + 2) / 2) .and. all(w(2:8:2) == rank + 1), &
               'iscan in place on a section')
    mo = -1
    call MPI_Iexscan(mi(1, 1:6:2), mo(1, 1:6:2), 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    if (rank > 0) call check(mo(1, 1) == rank + rank * (rank - 1) / 2 .and. &
                             mo(1, 5) == 17 * rank + rank * (rank - 1) / 2 .and. &
                             count(mo == -1) == 21, 'iexscan of a section')
    mo = -1
    call MPI_Allreduce_init(mi(2, :), mo(2, :), 6, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, &
                            MPI_INFO_NULL, req)
    do i = 1, 2
        call MPI_Start(req)
        call MPI_Wait(req, MPI_STATUS_IGNORE)
        call check(all(mo(2, :) == (/ (2 + 4 * (root - 1) + (i - 1) * 100, root = 1, 6) /)) &
                   .and. count(mo == -1) == 18, 'persistent allreduce of a matrix row')
        mi = mi + 100
    end do
    call MPI_Request_free(req)

    if (rank == 0) write (*, '(A,A,A,I0,A)') 'PASS ', prog, ' np=', nprocs, ':'
    call MPI_Finalize()

contains

    logical function all_eq(a, b)
        integer, intent(in) :: a(:), b(:)
        all_eq = all(a == b)
    end function all_eq

    include 'f08_check.inc'
end program f08_coll
