! MPI_Register_datarep through mpif.h: a representation whose Fortran
! conversions store each INTEGER XOR a mask (the file holds the masked
! values, as a native view shows, and reads through it give the originals;
! the read, write and extent procedures were called with MPI_INTEGER and
! the extra state), one registered with MPI_CONVERSION_FN_NULL (the data
! goes to the file unconverted), and a name registered twice
! (MPI_ERR_DUP_DATAREP).
! px-requires: MPI_Register_datarep MPI_File_open MPI_File_set_view
! px-requires: MPI_File_write_at MPI_File_read_at MPI_File_delete
program f_datarep_mpif
    implicit none
    include 'mpif.h'
    integer, parameter :: n = 40, mask = 1515870810
    integer :: ierr, rank, nprocs, fh, i, cls, pid, dlen
    integer :: buf(n), got(n), st(MPI_STATUS_SIZE)
    integer(kind=MPI_OFFSET_KIND) :: off
    character(len=256) :: path, dir
    integer :: calls(3), bad
    common /dr/ calls, bad
    external xor_read, xor_write, xor_extent

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    calls = 0
    bad = 0
    pid = 0
    if (rank == 0) pid = getpid()
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call get_environment_variable('TMPDIR', dir, dlen)
    if (dlen == 0) then
        dir = '/tmp'
        dlen = 4
    end if
    write (path, '(A,A,I0,A)') dir(1:dlen), '/f_datarep_mpif.', pid, '.dat'

    call MPI_Register_datarep('px-fxor', xor_read, xor_write, xor_extent, &
                              99_MPI_ADDRESS_KIND, ierr)
    if (ierr /= MPI_SUCCESS) call fail('register')
    call MPI_Register_datarep('px-fxor', xor_read, xor_write, xor_extent, &
                              0_MPI_ADDRESS_KIND, ierr)
    call MPI_Error_class(ierr, cls, i)
    if (cls /= MPI_ERR_DUP_DATAREP) call fail('a name registered twice')
    call MPI_Register_datarep('px-fnull', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, &
                              xor_extent, 99_MPI_ADDRESS_KIND, ierr)
    if (ierr /= MPI_SUCCESS) call fail('register with MPI_CONVERSION_FN_NULL')

    call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, &
                       fh, ierr)
    if (ierr /= MPI_SUCCESS) call fail('open')
    do i = 1, n
        buf(i) = rank * 1000 + i
    end do

    ! the first n*nprocs integers through px-fxor
    off = rank * n
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'px-fxor', &
                           MPI_INFO_NULL, ierr)
    if (ierr /= MPI_SUCCESS) call fail('set_view px-fxor')
    call MPI_File_write_at(fh, off, buf, n, MPI_INTEGER, st, ierr)
    if (ierr /= MPI_SUCCESS .or. calls(2) == 0) call fail('write through px-fxor')
    got = -1
    call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, st, ierr)
    if (ierr /= MPI_SUCCESS .or. any(got /= buf) .or. calls(1) == 0) &
        call fail('read back through px-fxor')
    ! the next n*nprocs through px-fnull
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'px-fnull', &
                           MPI_INFO_NULL, ierr)
    if (ierr /= MPI_SUCCESS) call fail('set_view px-fnull')
    call MPI_File_write_at(fh, off + n * nprocs, buf, n, MPI_INTEGER, st, ierr)
    if (ierr /= MPI_SUCCESS) call fail('write through px-fnull')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)

    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', &
                           MPI_INFO_NULL, ierr)
    call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, st, ierr)
    if (any(got /= ieor(buf, mask))) call fail('the file holds the masked values')
    call MPI_File_read_at(fh, off + n * nprocs, got, n, MPI_INTEGER, st, ierr)
    if (any(got /= buf)) call fail('MPI_CONVERSION_FN_NULL converts nothing')
    if (calls(3) == 0 .or. bad /= 0) call fail('extent procedure, datatype or extra state')
    call MPI_File_close(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_File_delete(path, MPI_INFO_NULL, ierr)

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_datarep_mpif np=', nprocs, ': ok'
    call MPI_Finalize(ierr)

contains

    subroutine fail(what)
        character(len=*), intent(in) :: what
        integer :: e
        write (*, '(A,A,A,I0)') 'FAIL f_datarep_mpif: ', what, ', ierr ', ierr
        call MPI_Abort(MPI_COMM_WORLD, 1, e)
        stop 1
    end subroutine fail
end program f_datarep_mpif

subroutine xor_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    implicit none
    include 'mpif.h'
    integer, parameter :: mask = 1515870810
    integer :: userbuf(*), filebuf(*), datatype, count, ierror, i
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: calls(3), bad
    common /dr/ calls, bad
    if (datatype /= MPI_INTEGER .or. extra_state /= 99) bad = bad + 1
    do i = 1, count
        filebuf(i) = ieor(userbuf(position + i), mask)
    end do
    calls(2) = calls(2) + 1
    ierror = MPI_SUCCESS
end subroutine xor_write

subroutine xor_read(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    implicit none
    include 'mpif.h'
    integer, parameter :: mask = 1515870810
    integer :: userbuf(*), filebuf(*), datatype, count, ierror, i
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: calls(3), bad
    common /dr/ calls, bad
    if (datatype /= MPI_INTEGER .or. extra_state /= 99) bad = bad + 1
    do i = 1, count
        userbuf(position + i) = ieor(filebuf(i), mask)
    end do
    calls(1) = calls(1) + 1
    ierror = MPI_SUCCESS
end subroutine xor_read

subroutine xor_extent(datatype, extent, extra_state, ierror)
    implicit none
    include 'mpif.h'
    integer :: datatype, ierror, sz
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
    integer :: calls(3), bad
    common /dr/ calls, bad
    if (extra_state /= 99) bad = bad + 1
    call MPI_Type_size(datatype, sz, ierror)
    extent = sz
    calls(3) = calls(3) + 1
    ierror = MPI_SUCCESS
end subroutine xor_extent
