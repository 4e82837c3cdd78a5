! One-sided communication through mpif.h: a window on a Fortran array
! (MPI_Win_create), puts and gets between fences, an accumulate under
! lock/unlock, MPI_Fetch_and_op, the window's attributes as
! INTEGER(KIND=MPI_ADDRESS_KIND) values, and MPI_Win_allocate's base
! address.
! px-requires: MPI_Win_create MPI_Win_fence MPI_Put MPI_Get MPI_Accumulate
! px-requires: MPI_Win_lock MPI_Win_unlock MPI_Fetch_and_op MPI_Win_get_attr
! px-requires: MPI_Win_allocate MPI_Win_free
program f_rma_mpif
    implicit none
    include 'mpif.h'
    integer, parameter :: n = 100
    integer :: ierr, rank, nprocs, right, left, i, errs, total, win, win2, flag
    integer :: mem(n + 1), src(n), got(n), one, old
    integer(kind=MPI_ADDRESS_KIND) :: wsize, disp, attr, base
    integer :: isize

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    right = mod(rank + 1, nprocs)
    left = mod(rank + nprocs - 1, nprocs)
    errs = 0
    call MPI_Type_size(MPI_INTEGER, isize, ierr)
    wsize = (n + 1) * isize
    mem = 0
    call MPI_Win_create(mem, wsize, isize, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    call MPI_Win_get_attr(win, MPI_WIN_SIZE, attr, flag, ierr)
    if (flag == 0 .or. attr /= wsize) errs = errs + 1
    call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, attr, flag, ierr)
    if (flag == 0 .or. attr /= isize) errs = errs + 1

    do i = 1, n
        src(i) = rank * 1000 + i
    end do
    call MPI_Win_fence(0, win, ierr)
    disp = 0
    call MPI_Put(src, n, MPI_INTEGER, right, disp, n, MPI_INTEGER, win, ierr)
    call MPI_Win_fence(0, win, ierr)
    do i = 1, n
        if (mem(i) /= left * 1000 + i) errs = errs + 1
    end do
    got = -1
    call MPI_Get(got, n, MPI_INTEGER, right, disp, n, MPI_INTEGER, win, ierr)
    call MPI_Win_fence(0, win, ierr)
    do i = 1, n
        if (got(i) /= src(i)) errs = errs + 1
    end do

    one = rank + 1
    disp = n
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
    call MPI_Accumulate(one, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_SUM, win, ierr)
    call MPI_Win_unlock(0, win, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0 .and. mem(n + 1) /= nprocs * (nprocs + 1) / 2) errs = errs + 1
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
    call MPI_Fetch_and_op(one, old, MPI_INTEGER, 0, disp, MPI_NO_OP, win, ierr)
    call MPI_Win_unlock(0, win, ierr)
    if (old /= nprocs * (nprocs + 1) / 2) errs = errs + 1
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Win_free(win, ierr)

    ! MPI_Win_allocate returns the base address as an integer
    call MPI_Win_allocate(wsize, isize, MPI_INFO_NULL, MPI_COMM_WORLD, base, win2, ierr)
    call MPI_Win_get_attr(win2, MPI_WIN_BASE, attr, flag, ierr)
    if (ierr /= MPI_SUCCESS .or. flag == 0 .or. attr /= base .or. base == 0) errs = errs + 1
    call MPI_Win_free(win2, ierr)

    call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        if (total == 0) then
            print '(A,I0,A)', 'PASS f_rma_mpif np=', nprocs, ': put, get, accumulate, fetch_and_op, attributes'
        else
            print '(A,I0,A,I0,A)', 'FAIL f_rma_mpif np=', nprocs, ': ', total, ' errors'
        end if
    end if
    call MPI_Finalize(ierr)
    if (total /= 0) stop 1
end program f_rma_mpif
