! Fortran strings through `use mpi`: Info keys and values (blank padding,
! trailing blanks dropped on input, value lengths), object names.
! px-requires: MPI_Info_create MPI_Info_set MPI_Info_get MPI_Info_get_nkeys
! px-requires: MPI_Info_get_nthkey MPI_Info_get_valuelen MPI_Info_delete MPI_Info_free
! px-requires: MPI_Type_set_name MPI_Type_get_name MPI_Type_dup
program f_info_names
    use mpi
    implicit none
    integer :: ierr, rank, nprocs, info, nkeys, vlen, reslen, dtype
    logical :: flag
    character(len=MPI_MAX_INFO_VAL) :: val
    character(len=MPI_MAX_INFO_KEY) :: key
    character(len=MPI_MAX_OBJECT_NAME) :: tname

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    call MPI_Info_create(info, ierr)
    call check(ierr == MPI_SUCCESS .and. info /= MPI_INFO_NULL, 'info_create')
    call MPI_Info_set(info, 'plexus_key   ', 'some value  ', ierr)
    call MPI_Info_set(info, 'second', 'x', ierr)
    call MPI_Info_get_nkeys(info, nkeys, ierr)
    call check(nkeys == 2, 'nkeys')
    call MPI_Info_get_valuelen(info, 'plexus_key', vlen, flag, ierr)
    call check(flag .and. vlen == 10, 'valuelen ignores trailing blanks')
    val = '#'
    call MPI_Info_get(info, 'plexus_key', MPI_MAX_INFO_VAL, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. val == 'some value', 'info_get')
    call check(val(11:11) == ' ' .and. val(MPI_MAX_INFO_VAL:MPI_MAX_INFO_VAL) == ' ', &
               'value blank padded')
    val = 'untouched'
    call MPI_Info_get(info, 'missing', MPI_MAX_INFO_VAL, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag .and. val == 'untouched', &
               'missing key (the value left as it was)')
    key = '#'
    call MPI_Info_get_nthkey(info, 1, key, ierr)
    call check(key == 'second', 'nthkey')
    call MPI_Info_delete(info, 'second', ierr)
    call MPI_Info_get_nkeys(info, nkeys, ierr)
    call check(nkeys == 1, 'info_delete')
    call MPI_Info_free(info, ierr)
    call check(info == MPI_INFO_NULL, 'info_free')

    call MPI_Type_dup(MPI_INTEGER, dtype, ierr)
    call MPI_Type_set_name(dtype, 'my integer', ierr)
    tname = '#'
    call MPI_Type_get_name(dtype, tname, reslen, ierr)
    call check(reslen == 10 .and. tname == 'my integer', 'type name')
    call MPI_Type_free(dtype, ierr)

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_info_names np=', nprocs, ':'
    call MPI_Finalize(ierr)

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: e
        if (.not. ok) then
            write (*, '(A,A)') 'FAIL f_info_names: ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
            stop 1
        end if
    end subroutine check
end program f_info_names
