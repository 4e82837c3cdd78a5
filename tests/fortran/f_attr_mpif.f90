! Attributes and keyvals through mpif.h: Fortran copy and delete callbacks
! with INTEGER(KIND=MPI_ADDRESS_KIND) values, the predefined
! MPI_COMM_NULL_COPY_FN / MPI_COMM_DUP_FN, predefined attributes; plus
! MPI_IN_PLACE and MPI_STATUS_IGNORE handled through the common blocks; a
! value set in Fortran read by C through a pointer to it, and one set in C
! read in Fortran as the pointer's integer (MPI-4.0 19.3.7), the C calls made
! directly through BIND(C) interfaces.
! px-requires: MPI_Comm_create_keyval MPI_Comm_set_attr MPI_Comm_get_attr
! px-requires: MPI_Comm_delete_attr MPI_Comm_free_keyval MPI_Comm_dup
module f_attr_counts
    implicit none
    integer :: ncopy = 0, ndelete = 0
end module f_attr_counts

! The C functions themselves (handles are C ints in this ABI).
module f_attr_c
    use, intrinsic :: iso_c_binding
    implicit none
    interface
        integer(c_int) function c_get_attr(comm, keyval, val, flag) &
            bind(C, name='MPI_Comm_get_attr')
            import :: c_int, c_ptr
            integer(c_int), value :: comm, keyval
            type(c_ptr) :: val
            integer(c_int) :: flag
        end function c_get_attr
        integer(c_int) function c_set_attr(comm, keyval, val) bind(C, name='MPI_Comm_set_attr')
            import :: c_int, c_ptr
            integer(c_int), value :: comm, keyval
            type(c_ptr), value :: val
        end function c_set_attr
    end interface
end module f_attr_c

subroutine my_copy(oldcomm, keyval, extra, valin, valout, flag, ierr)
    use f_attr_counts
    implicit none
    include 'mpif.h'
    integer :: oldcomm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
    logical :: flag
    ncopy = ncopy + 1
    ! extra state and the value both arrive by reference as 8-byte integers
    valout = valin + extra
    flag = .true.
    ierr = MPI_SUCCESS
    if (oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) ierr = MPI_ERR_OTHER
end subroutine my_copy

subroutine my_delete(comm, keyval, val, extra, ierr)
    use f_attr_counts
    implicit none
    include 'mpif.h'
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    ndelete = ndelete + 1
    ierr = MPI_SUCCESS
    if (val < 1000000000000_MPI_ADDRESS_KIND .or. extra /= 5) ierr = MPI_ERR_OTHER
    if (comm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) ierr = MPI_ERR_OTHER
end subroutine my_delete

program f_attr_mpif
    use f_attr_counts
    use f_attr_c
    implicit none
    include 'mpif.h'
    external my_copy, my_delete
    integer :: ierr, rank, nprocs, kv, kv2, dup, dup2, ival(2)
    integer(kind=MPI_ADDRESS_KIND) :: val, extra, big
    integer(kind=MPI_ADDRESS_KIND), pointer :: seen
    integer(c_int) :: cflag
    integer(c_int), target :: cval
    type(c_ptr) :: p
    logical :: flag

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    ! A value that needs more than 32 bits survives set/get and the copy.
    extra = 5
    big = 1000000000000_MPI_ADDRESS_KIND + rank
    call MPI_Comm_create_keyval(my_copy, my_delete, kv, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'create_keyval')
    call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, big, ierr)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, kv, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. val == big, 'get_attr 64-bit value')

    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call check(ncopy == 1, 'copy callback called once')
    val = 0
    call MPI_Comm_get_attr(dup, kv, val, flag, ierr)
    call check(flag .and. val == big + 5, 'copied value')

    ! Predefined callbacks: NULL_COPY drops the attribute, DUP_FN keeps it.
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv2, extra, ierr)
    call MPI_Comm_set_attr(dup, kv2, 77_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_dup(dup, dup2, ierr)
    call MPI_Comm_get_attr(dup2, kv2, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag, 'null copy fn')
    call MPI_Comm_free(dup2, ierr)
    call MPI_Comm_free_keyval(kv2, ierr)
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv2, extra, ierr)
    call MPI_Comm_set_attr(dup, kv2, 78_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_dup(dup, dup2, ierr)
    call MPI_Comm_get_attr(dup2, kv2, val, flag, ierr)
    call check(flag .and. val == 78, 'dup fn')
    call MPI_Comm_free(dup2, ierr)

    ! Each dup2 carried kv too (copied, then deleted when freed).
    call check(ncopy == 3 .and. ndelete == 2, 'callbacks on dup and free')

    ! Delete callback on explicit delete and on free.
    call MPI_Comm_delete_attr(dup, kv, ierr)
    call check(ierr == MPI_SUCCESS .and. ndelete == 3, 'delete callback')
    call MPI_Comm_get_attr(dup, kv, val, flag, ierr)
    call check(.not. flag, 'attribute deleted')
    call MPI_Comm_free(dup, ierr)
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv, ierr)
    call check(ndelete == 4, 'delete on world')
    call MPI_Comm_free_keyval(kv, ierr)
    call check(kv == MPI_KEYVAL_INVALID, 'free_keyval')
    call MPI_Comm_free_keyval(kv2, ierr)

    ! Predefined attributes (Fortran keyvals differ from the C ones).
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
    call check(flag .and. val >= 32767, 'MPI_TAG_UB')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. (.not. flag .or. val == 0 .or. val == 1), &
               'MPI_WTIME_IS_GLOBAL')

    ! Across languages: set in Fortran, C gets a pointer to the integer (and
    ! sees a later Fortran set); set in C, Fortran gets the pointer's value
    ! and C the pointer itself.
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv, extra, ierr)
    call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, big, ierr)
    cflag = 0
    ierr = c_get_attr(MPI_COMM_WORLD, kv, p, cflag)
    call check(ierr == MPI_SUCCESS .and. cflag /= 0, 'C get of a Fortran value')
    call c_f_pointer(p, seen)
    call check(seen == big, 'C reads the Fortran value through a pointer')
    call MPI_Attr_put(MPI_COMM_WORLD, kv, 4321, ierr)
    ierr = c_get_attr(MPI_COMM_WORLD, kv, p, cflag)
    call check(ierr == MPI_SUCCESS .and. cflag /= 0, 'C get of an MPI_ATTR_PUT value')
    call c_f_pointer(p, seen)
    call check(seen == 4321, 'C reads the MPI_ATTR_PUT value through a pointer')
    call MPI_Attr_get(MPI_COMM_WORLD, kv, ival(1), flag, ierr)
    call check(flag .and. ival(1) == 4321, 'MPI_ATTR_GET of an MPI_ATTR_PUT value')
    cval = 99
    ierr = c_set_attr(MPI_COMM_WORLD, kv, c_loc(cval))
    call check(ierr == MPI_SUCCESS, 'C set')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, kv, val, flag, ierr)
    call check(flag .and. val == transfer(c_loc(cval), val), 'Fortran get of a C value')
    ierr = c_get_attr(MPI_COMM_WORLD, kv, p, cflag)
    call check(ierr == MPI_SUCCESS .and. c_associated(p, c_loc(cval)), 'C get of a C value')
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv, ierr)
    call MPI_Comm_free_keyval(kv, ierr)

    ! MPI_IN_PLACE through mpif.h.
    ival = (/ rank, 2 /)
    call MPI_Allreduce(MPI_IN_PLACE, ival, 2, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check(ival(1) == nprocs - 1 .and. ival(2) == 2, 'allreduce in place')

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_attr_mpif np=', nprocs, ':'
    call MPI_Finalize(ierr)

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: e
        if (.not. ok) then
            write (*, '(A,A)') 'FAIL f_attr_mpif: ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
            stop 1
        end if
    end subroutine check
end program f_attr_mpif
