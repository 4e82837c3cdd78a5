! use mpi_f08: one-sided communication and MPI-IO. MPI_Win_allocate (the
! base as TYPE(C_PTR)), MPI_Win_create on an array, put/get/accumulate in
! fence epochs, lock/unlock, MPI_Rput and MPI_Raccumulate of strided
! sections, window attributes; MPI_File_open, write_at/read_at, a strided
! section written with iwrite_at, set_view, get_size, collective
! write_at_all, close, delete.
! px-np: 2 3 4
program f08_rma_io
    use mpi_f08
    use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
    implicit none
    character(len=*), parameter :: prog = 'f08_rma_io'
    integer, parameter :: n = 8
    integer :: rank, nprocs, i, right, left, buf(n), rbuf(n), sz
    integer, pointer :: wmem(:)
    integer :: local(n)
    integer(kind=MPI_ADDRESS_KIND) :: wsize, aval
    integer(kind=MPI_OFFSET_KIND) :: off, fsize
    type(c_ptr) :: base
    type(MPI_Win) :: win, win2
    type(MPI_File) :: fh
    type(MPI_Request) :: req
    type(MPI_Status) :: st
    logical :: flag
    character(len=64) :: fname

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    right = mod(rank + 1, nprocs)
    left = mod(rank - 1 + nprocs, nprocs)

    ! Window from MPI_Win_allocate.
    call MPI_Sizeof(i, sz)
    wsize = n * sz
    call MPI_Win_allocate(wsize, sz, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
    call c_f_pointer(base, wmem, (/ n /))
    wmem = -1
    call MPI_Win_get_attr(win, MPI_WIN_SIZE, aval, flag)
    call check(flag .and. aval == wsize, 'MPI_WIN_SIZE')
    call MPI_Win_fence(0, win)
    buf = (/ (rank * 100 + i, i = 1, n) /)
    call MPI_Put(buf, 4, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 4, MPI_INTEGER, win)
    call MPI_Win_fence(0, win)
    call check(wmem(1) == left * 100 + 1 .and. wmem(4) == left * 100 + 4 .and. wmem(5) == -1, &
               'put/fence')
    rbuf = 0
    call MPI_Get(rbuf, 2, MPI_INTEGER, right, 2_MPI_ADDRESS_KIND, 2, MPI_INTEGER, win)
    call MPI_Win_fence(0, win)
    call check(rbuf(1) == rank * 100 + 3 .and. rbuf(2) == rank * 100 + 4, 'get/fence')
    ! Accumulate: every rank adds 1 to element 8 of rank 0.
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)
    call MPI_Accumulate(1, 1, MPI_INTEGER, 0, 7_MPI_ADDRESS_KIND, 1, MPI_INTEGER, MPI_SUM, win)
    call MPI_Win_unlock(0, win)
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) then
        call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win)
        call check(wmem(8) == -1 + nprocs, 'accumulate under lock')
        call MPI_Win_unlock(0, win)
    end if
    call MPI_Barrier(MPI_COMM_WORLD)
    ! Rput of a strided section (elements 1, 3, 5, 7) into the right's 5..8.
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win)
    call MPI_Rput(buf(1:n:2), 4, MPI_INTEGER, right, 4_MPI_ADDRESS_KIND, 4, MPI_INTEGER, win, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call MPI_Win_unlock(right, win)
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win)
    call check(wmem(5) == left * 100 + 1 .and. wmem(6) == left * 100 + 3 .and. &
               wmem(8) == left * 100 + 7, 'rput of a section')
    call MPI_Win_unlock(rank, win)
    ! Raccumulate of a strided section: MPI_SUM applies to its integers.
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win)
    wmem = 0
    call MPI_Win_unlock(rank, win)
    call MPI_Barrier(MPI_COMM_WORLD)
    buf = 1
    buf(2:n:2) = rank + 1
    call MPI_Win_lock_all(0, win)
    call MPI_Raccumulate(buf(2:n:2), n / 2, MPI_INTEGER, 0, 0_MPI_ADDRESS_KIND, n / 2, &
                         MPI_INTEGER, MPI_SUM, win, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call MPI_Win_unlock_all(win)
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) then
        call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win)
        call check(all(wmem(1:n / 2) == nprocs * (nprocs + 1) / 2) .and. &
                   all(wmem(n / 2 + 1:n) == 0), 'raccumulate of a section')
        call MPI_Win_unlock(0, win)
    end if
    call MPI_Win_free(win)
    call check(win == MPI_WIN_NULL, 'win_free')

    ! Window on an array.
    local = rank
    call MPI_Win_create(local, int(n * sz, MPI_ADDRESS_KIND), sz, MPI_INFO_NULL, &
                        MPI_COMM_WORLD, win2)
    call MPI_Win_fence(0, win2)
    call MPI_Get(rbuf, n, MPI_INTEGER, left, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, win2)
    call MPI_Win_fence(0, win2)
    call check(all(rbuf == left), 'win_create/get')
    call MPI_Win_free(win2)

    ! MPI-IO: each rank writes its block, reads the left's.
    write (fname, '(A,I0,A)') 'f08_rma_io.', nprocs, '.dat'
    call MPI_File_open(MPI_COMM_WORLD, trim(fname), ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                       MPI_INFO_NULL, fh)
    call check(fh /= MPI_FILE_NULL, 'file_open')
    off = rank * n * sz
    buf = (/ (rank * 1000 + i, i = 1, n) /)
    call MPI_File_write_at(fh, off, buf, n, MPI_INTEGER, st)
    call MPI_Get_count(st, MPI_INTEGER, i)
    call check(i == n, 'write_at count')
    call MPI_File_sync(fh)
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_File_sync(fh)
    rbuf = 0
    call MPI_File_read_at(fh, int(left * n * sz, MPI_OFFSET_KIND), rbuf, n, MPI_INTEGER, st)
    call check(all(rbuf == (/ (left * 1000 + i, i = 1, n) /)), 'read_at')
    call MPI_File_get_size(fh, fsize)
    call check(fsize == nprocs * n * sz, 'get_size')
    call MPI_Barrier(MPI_COMM_WORLD)
    ! A strided section through the nonblocking interface, read back blocking
    ! into a strided section.
    off = (nprocs + rank) * n * sz
    call MPI_File_iwrite_at(fh, off, buf(2:n:2), n / 2, MPI_INTEGER, req)
    call MPI_Wait(req, st)
    rbuf = 0
    call MPI_File_read_at(fh, off, rbuf(1:n:2), n / 2, MPI_INTEGER, st)
    call check(rbuf(1) == buf(2) .and. rbuf(7) == buf(8) .and. rbuf(2) == 0, &
               'iwrite_at / read_at of sections')
    ! Collective write through a view of integers.
    call MPI_File_set_view(fh, int(2 * nprocs * n * sz, MPI_OFFSET_KIND), MPI_INTEGER, &
                           MPI_INTEGER, 'native', MPI_INFO_NULL)
    call MPI_File_write_at_all(fh, int(rank, MPI_OFFSET_KIND), rank + 1, 1, MPI_INTEGER, &
                               MPI_STATUS_IGNORE)
    call MPI_File_read_at_all(fh, int(left, MPI_OFFSET_KIND), i, 1, MPI_INTEGER, &
                              MPI_STATUS_IGNORE)
    call check(i == left + 1, 'write_at_all/read_at_all')
    call MPI_File_close(fh)
    call check(fh == MPI_FILE_NULL, 'file_close')
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) call MPI_File_delete(trim(fname), MPI_INFO_NULL)

    if (rank == 0) write (*, '(A,A,A,I0,A)') 'PASS ', prog, ' np=', nprocs, ':'
    call MPI_Finalize()

contains

    include 'f08_check.inc'
end program f08_rma_io
