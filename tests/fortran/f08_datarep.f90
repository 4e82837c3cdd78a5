! MPI_Register_datarep and MPI_Register_datarep_c through mpi_f08:
! conversions with TYPE(C_PTR) buffers that store each INTEGER XOR a mask
! (another mask for the large-count ones, which must be the ones called),
! the file checked through a native view, MPI_CONVERSION_FN_NULL (no
! conversion), and a name registered twice (MPI_ERR_DUP_DATAREP).
! px-np: 1 2 4
! px-requires: MPI_Register_datarep MPI_Register_datarep_c MPI_File_set_view
program f08_datarep
    use mpi_f08
    implicit none
    character(len=*), parameter :: prog = 'f08_datarep'
    integer, parameter :: n = 32, mask = 1515870810, mask_c = 252645135
    integer :: rank, nprocs, ierr, cls, i, pid, dlen
    integer :: buf(n), got(n)
    integer(kind=MPI_OFFSET_KIND) :: off, stride
    type(MPI_File) :: fh
    character(len=256) :: path, dir
    integer :: calls(4) = 0, bad = 0

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    pid = 0
    if (rank == 0) pid = getpid()
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    call get_environment_variable('TMPDIR', dir, dlen)
    if (dlen == 0) then
        dir = '/tmp'
        dlen = 4
    end if
    write (path, '(A,A,I0,A)') dir(1:dlen), '/f08_datarep.', pid, '.dat'

    call MPI_Register_datarep('px-f8xor', xor_read, xor_write, extent_of, 7_MPI_ADDRESS_KIND)
    call MPI_Register_datarep_c('px-f8xor-c', xor_read_c, xor_write_c, extent_of, &
                                7_MPI_ADDRESS_KIND)
    call MPI_Register_datarep('px-f8null', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, &
                              extent_of, 7_MPI_ADDRESS_KIND)
    call MPI_Register_datarep_c('px-f8xor', xor_read_c, xor_write_c, extent_of, &
                                7_MPI_ADDRESS_KIND, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_DUP_DATAREP, 'a name registered twice')

    call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh)
    buf = (/ (rank * 1000 + i, i = 1, n) /)
    off = rank * n
    stride = n * nprocs
    call roundtrip('px-f8xor', 0_MPI_OFFSET_KIND, ieor(buf, mask), 1, 2)
    call roundtrip('px-f8xor-c', stride, ieor(buf, mask_c), 3, 4)
    call roundtrip('px-f8null', 2 * stride, buf, 0, 0)
    call check(bad == 0, 'datatype or extra state given to a conversion')
    call MPI_File_close(fh)
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) call MPI_File_delete(path, MPI_INFO_NULL)

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f08_datarep np=', nprocs, ': ok'
    call MPI_Finalize()

contains

    ! Writes buf at base + off through representation rep and reads it back;
    ! a native view must show want there; counters rd and wr (0: none) of
    ! the conversions must have moved.
    subroutine roundtrip(rep, base, want, rd, wr)
        character(len=*), intent(in) :: rep
        integer(kind=MPI_OFFSET_KIND), intent(in) :: base
        integer, intent(in) :: want(n), rd, wr
        integer :: before(4)
        before = calls
        call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, rep, MPI_INFO_NULL)
        call MPI_File_write_at(fh, base + off, buf, n, MPI_INTEGER, MPI_STATUS_IGNORE)
        got = -1
        call MPI_File_read_at(fh, base + off, got, n, MPI_INTEGER, MPI_STATUS_IGNORE)
        call check(all(got == buf), rep // ': read back')
        call MPI_Barrier(MPI_COMM_WORLD)
        call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', &
                               MPI_INFO_NULL)
        call MPI_File_read_at(fh, base + off, got, n, MPI_INTEGER, MPI_STATUS_IGNORE)
        call check(all(got == want), rep // ': the file')
        if (rd > 0) call check(calls(rd) > before(rd) .and. calls(wr) > before(wr), &
                               rep // ': conversions called')
        if (rd == 0) call check(all(calls == before), rep // ': no conversion called')
    end subroutine roundtrip

    ! The four conversions: each masks count integers between the user
    ! buffer (from element position) and the file buffer, and counts its
    ! call in calls(which).
    subroutine convert(userbuf, datatype, count, filebuf, position, extra_state, m, to_file, &
                       which)
        use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
        type(c_ptr), intent(in) :: userbuf, filebuf
        type(MPI_Datatype), intent(in) :: datatype
        integer(kind=MPI_COUNT_KIND), intent(in) :: count
        integer(kind=MPI_OFFSET_KIND), intent(in) :: position
        integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state
        integer, intent(in) :: m, which
        logical, intent(in) :: to_file
        integer, pointer :: u(:), f(:)
        call c_f_pointer(userbuf, u, (/ position + count /))
        call c_f_pointer(filebuf, f, (/ count /))
        if (datatype /= MPI_INTEGER .or. extra_state /= 7) bad = bad + 1
        if (to_file) then
            f = ieor(u(position + 1:position + count), m)
        else
            u(position + 1:position + count) = ieor(f, m)
        end if
        calls(which) = calls(which) + 1
    end subroutine convert

    subroutine xor_read(userbuf, datatype, count, filebuf, position, extra_state, ierror)
        use, intrinsic :: iso_c_binding, only : c_ptr
        type(c_ptr), value :: userbuf, filebuf
        type(MPI_Datatype) :: datatype
        integer :: count, ierror
        integer(kind=MPI_OFFSET_KIND) :: position
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        call convert(userbuf, datatype, int(count, MPI_COUNT_KIND), filebuf, position, &
                     extra_state, mask, .false., 1)
        ierror = MPI_SUCCESS
    end subroutine xor_read

    subroutine xor_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
        use, intrinsic :: iso_c_binding, only : c_ptr
        type(c_ptr), value :: userbuf, filebuf
        type(MPI_Datatype) :: datatype
        integer :: count, ierror
        integer(kind=MPI_OFFSET_KIND) :: position
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        call convert(userbuf, datatype, int(count, MPI_COUNT_KIND), filebuf, position, &
                     extra_state, mask, .true., 2)
        ierror = MPI_SUCCESS
    end subroutine xor_write

    subroutine xor_read_c(userbuf, datatype, count, filebuf, position, extra_state, ierror)
        use, intrinsic :: iso_c_binding, only : c_ptr
        type(c_ptr), value :: userbuf, filebuf
        type(MPI_Datatype) :: datatype
        integer(kind=MPI_COUNT_KIND) :: count
        integer :: ierror
        integer(kind=MPI_OFFSET_KIND) :: position
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        call convert(userbuf, datatype, count, filebuf, position, extra_state, mask_c, .false., 3)
        ierror = MPI_SUCCESS
    end subroutine xor_read_c

    subroutine xor_write_c(userbuf, datatype, count, filebuf, position, extra_state, ierror)
        use, intrinsic :: iso_c_binding, only : c_ptr
        type(c_ptr), value :: userbuf, filebuf
        type(MPI_Datatype) :: datatype
        integer(kind=MPI_COUNT_KIND) :: count
        integer :: ierror
        integer(kind=MPI_OFFSET_KIND) :: position
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        call convert(userbuf, datatype, count, filebuf, position, extra_state, mask_c, .true., 4)
        ierror = MPI_SUCCESS
    end subroutine xor_write_c

    subroutine extent_of(datatype, extent, extra_state, ierror)
        type(MPI_Datatype) :: datatype
        integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
        integer :: ierror, sz
        call MPI_Type_size(datatype, sz)
        extent = sz
        if (extra_state /= 7) bad = bad + 1
        ierror = MPI_SUCCESS
    end subroutine extent_of

    include 'f08_check.inc'
end program f08_datarep
