! MPI-IO through mpif.h: a file opened by every rank, each rank's block
! written with MPI_File_write_at and read back by the next rank with
! MPI_File_read_at; a view of INTEGERs with a displacement, written with
! MPI_File_write_all after MPI_File_seek and read with MPI_File_read_all;
! MPI_File_get_size, MPI_File_close (the handle becomes MPI_FILE_NULL),
! MPI_File_delete, MPI_Get_count on the statuses, and a file error handler
! (MPI_File_create_errhandler), which gets the Fortran file handle.
! px-requires: MPI_File_open MPI_File_close MPI_File_write_at MPI_File_read_at
! px-requires: MPI_File_set_view MPI_File_write_all MPI_File_read_all
! px-requires: MPI_File_get_size MPI_File_seek MPI_File_delete MPI_File_create_errhandler
program f_io_mpif
    implicit none
    include 'mpif.h'
    integer, parameter :: n = 50
    integer :: ierr, rank, nprocs, nxt, i, errs, total, fh, cnt, isize
    integer :: buf(n), got(n), status(MPI_STATUS_SIZE)
    integer(kind=MPI_OFFSET_KIND) :: off, fsize, disp
    character(len=256) :: path, dir
    integer :: dlen, eh, eh_file, eh_code
    common /f_io_eh/ eh_file, eh_code
    external on_file_error

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    nxt = mod(rank + 1, nprocs)
    errs = 0
    call MPI_Type_size(MPI_INTEGER, isize, ierr)
    i = 0
    if (rank == 0) call getpid_into(i)
    call MPI_Bcast(i, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call get_environment_variable('TMPDIR', dir, dlen)
    if (dlen == 0) then
        dir = '/tmp'
        dlen = 4
    end if
    write (path, '(A,A,I0,A)') dir(1:dlen), '/f_io_mpif.', i, '.dat'

    call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_RDWR, &
                       MPI_INFO_NULL, fh, ierr)
    if (ierr /= MPI_SUCCESS .or. fh == MPI_FILE_NULL) then
        print *, 'FAIL open', ierr
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
    do i = 1, n
        buf(i) = rank * 1000 + i
    end do
    off = rank * n * isize
    call MPI_File_write_at(fh, off, buf, n, MPI_INTEGER, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
    if (ierr /= MPI_SUCCESS .or. cnt /= n) errs = errs + 1
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    off = nxt * n * isize
    got = -1
    call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, status, ierr)
    do i = 1, n
        if (got(i) /= nxt * 1000 + i) errs = errs + 1
    end do
    call MPI_File_get_size(fh, fsize, ierr)
    if (fsize /= nprocs * n * isize) errs = errs + 1

    ! a view of INTEGERs after the first region
    disp = nprocs * n * isize
    call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    off = rank * n
    call MPI_File_seek(fh, off, MPI_SEEK_SET, ierr)
    buf = buf + 500000
    call MPI_File_write_all(fh, buf, n, MPI_INTEGER, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
    if (cnt /= n) errs = errs + 1
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    off = nxt * n
    call MPI_File_seek(fh, off, MPI_SEEK_SET, ierr)
    got = -1
    call MPI_File_read_all(fh, got, n, MPI_INTEGER, status, ierr)
    do i = 1, n
        if (got(i) /= nxt * 1000 + i + 500000) errs = errs + 1
    end do
    ! A file error handler gets the file handle: seeking to a negative
    ! offset calls it.
    call MPI_File_create_errhandler(on_file_error, eh, ierr)
    call MPI_File_set_errhandler(fh, eh, ierr)
    eh_file = -1
    off = -5
    call MPI_File_seek(fh, off, MPI_SEEK_SET, ierr)
    if (ierr == MPI_SUCCESS .or. eh_file /= fh .or. eh_code /= ierr) errs = errs + 1
    call MPI_Errhandler_free(eh, ierr)
    call MPI_File_close(fh, ierr)
    if (fh /= MPI_FILE_NULL) errs = errs + 1
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        call MPI_File_delete(path, MPI_INFO_NULL, ierr)
        if (ierr /= MPI_SUCCESS) errs = errs + 1
    end if

    call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        if (total == 0) then
            print '(A,I0,A)', 'PASS f_io_mpif np=', nprocs, ': file I/O from Fortran'
        else
            print '(A,I0,A,I0)', 'FAIL f_io_mpif np=', nprocs, ': ', total
        end if
    end if
    call MPI_Finalize(ierr)

contains

    subroutine getpid_into(v)
        integer, intent(out) :: v
        v = getpid()
    end subroutine getpid_into
end program f_io_mpif

! The file error handler: records the handle and the code it was called with.
subroutine on_file_error(file, code)
    implicit none
    integer :: file, code, eh_file, eh_code
    common /f_io_eh/ eh_file, eh_code
    eh_file = file
    eh_code = code
end subroutine on_file_error
