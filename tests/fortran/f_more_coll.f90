! More collectives through `use mpi`: alltoall, allgather, gatherv, scan,
! nonblocking iallreduce (in place) / ibcast / ibarrier completed by
! waitall, and Comm_split_type(MPI_COMM_TYPE_SHARED).
! px-requires: MPI_Alltoall MPI_Allgather MPI_Gatherv MPI_Scan MPI_Iallreduce
! px-requires: MPI_Ibcast MPI_Ibarrier MPI_Comm_split_type
program f_more_coll
    use mpi
    implicit none
    integer :: ierr, rank, nprocs, i, node, nrank, nsize, total
    integer, allocatable :: sbuf(:), rbuf(:), counts(:), displs(:)
    integer :: reqs(3), ival, bval, flagged
    double precision :: dsum(3)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    allocate (sbuf(2 * nprocs), rbuf(2 * nprocs * nprocs), counts(nprocs), displs(nprocs))

    ! alltoall: element j (1-based) sent to rank j-1 is 100*rank + j-1
    do i = 1, nprocs
        sbuf(i) = 100 * rank + (i - 1)
    end do
    call MPI_Alltoall(sbuf, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    do i = 1, nprocs
        call check(rbuf(i) == 100 * (i - 1) + rank, 'alltoall')
    end do

    ! allgather of two integers per rank
    sbuf(1:2) = (/ rank, -rank /)
    call MPI_Allgather(sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    do i = 0, nprocs - 1
        call check(rbuf(2 * i + 1) == i .and. rbuf(2 * i + 2) == -i, 'allgather')
    end do

    ! gatherv: rank r contributes r+1 copies of r, gathered at the last rank
    sbuf(1:rank + 1) = rank
    total = 0
    do i = 1, nprocs
        counts(i) = i
        displs(i) = total
        total = total + i
    end do
    rbuf = -5
    call MPI_Gatherv(sbuf, rank + 1, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, &
                     nprocs - 1, MPI_COMM_WORLD, ierr)
    if (rank == nprocs - 1) then
        do i = 1, nprocs
            call check(all(rbuf(displs(i) + 1:displs(i) + counts(i)) == i - 1), 'gatherv')
        end do
    end if

    ! inclusive scan
    call MPI_Scan(rank + 1, ival, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(ival == (rank + 1) * (rank + 2) / 2, 'scan')

    ! nonblocking collectives, completed together
    dsum = (/ 1.0d0, dble(rank), 2.0d0 /)
    bval = -1
    if (rank == 0) bval = 4242
    call MPI_Iallreduce(MPI_IN_PLACE, dsum, 3, MPI_DOUBLE_PRECISION, MPI_SUM, &
                        MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Ibcast(bval, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Ibarrier(MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'waitall nbc')
    call check(dsum(1) == dble(nprocs) .and. dsum(2) == dble(nprocs * (nprocs - 1) / 2) &
               .and. dsum(3) == 2.0d0 * nprocs, 'iallreduce in place')
    call check(bval == 4242, 'ibcast')

    ! all ranks of a single-node job share memory
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node, ierr)
    call check(ierr == MPI_SUCCESS .and. node /= MPI_COMM_NULL, 'split_type')
    call MPI_Comm_rank(node, nrank, ierr)
    call MPI_Comm_size(node, nsize, ierr)
    call MPI_Allreduce(nsize, flagged, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
    call check(nsize >= 1 .and. nsize <= nprocs .and. nrank < nsize .and. flagged >= 1, &
               'split_type sizes')
    call MPI_Comm_free(node, ierr)

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_more_coll np=', nprocs, ':'
    call MPI_Finalize(ierr)

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: e
        if (.not. ok) then
            write (*, '(A,A)') 'FAIL f_more_coll: ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
            stop 1
        end if
    end subroutine check
end program f_more_coll
