! use mpi_f08: procedures passed to MPI. A user reduction (MPI_Op_create,
! MPI_User_function with TYPE(C_PTR) buffers; refused on sections of a
! nonblocking reduction), communicator and file error
! handlers, a generalized request, attribute keyvals with copy and delete
! callbacks and the predefined MPI_COMM_NULL_COPY_FN / MPI_COMM_DUP_FN /
! MPI_TYPE_NULL_DELETE_FN.
! px-np: 2 3
module f08_callbacks_fns
    use mpi_f08
    use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
    implicit none
    integer :: handler_calls = 0, handler_code = MPI_SUCCESS
    integer :: deletes = 0, file_handler_calls = 0, greq_freed = 0
    ! a module's variable: the compiler reloads it after a call (the free
    ! callback changes it through the library)
    integer(kind=MPI_ADDRESS_KIND) :: greq_state
    type(MPI_File) :: handled_file
contains
    ! inoutvec(i) = max(|invec(i)|, |inoutvec(i)|) for integers
    subroutine maxabs(invec, inoutvec, len, datatype)
        type(c_ptr), value :: invec, inoutvec
        integer :: len
        type(MPI_Datatype) :: datatype
        integer, pointer :: a(:), b(:)
        if (datatype /= MPI_INTEGER) return
        call c_f_pointer(invec, a, (/ len /))
        call c_f_pointer(inoutvec, b, (/ len /))
        b = max(abs(a), abs(b))
    end subroutine maxabs

    subroutine on_file_error(file, error_code)
        type(MPI_File) :: file
        integer :: error_code
        call note_error(error_code, file == handled_file, file_handler_calls)
    end subroutine on_file_error

    subroutine on_error(comm, error_code)
        type(MPI_Comm) :: comm
        integer :: error_code
        call note_error(error_code, comm == MPI_COMM_WORLD, handler_calls)
    end subroutine on_error

    ! Counts a call of a handler (-100: it got the wrong handle).
    subroutine note_error(code, right_handle, calls)
        integer, intent(in) :: code
        logical, intent(in) :: right_handle
        integer, intent(inout) :: calls
        calls = calls + 1
        if (.not. right_handle) calls = -100
        handler_code = code
    end subroutine note_error

    ! Generalized request: the query sets the source to the extra state.
    subroutine greq_query(extra_state, status, ierror)
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        type(MPI_Status) :: status
        integer :: ierror
        status%MPI_SOURCE = int(extra_state)
        status%MPI_TAG = 42
        call MPI_Status_set_elements(status, MPI_INTEGER, 3)
        call MPI_Status_set_cancelled(status, .false.)
        ierror = MPI_SUCCESS
    end subroutine greq_query

    subroutine greq_free(extra_state, ierror)
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        integer :: ierror
        greq_freed = int(extra_state)
        extra_state = extra_state + 100 ! the caller's variable, as with MPICH and Open MPI
        ierror = MPI_SUCCESS
    end subroutine greq_free

    subroutine greq_cancel(extra_state, complete, ierror)
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        logical :: complete
        integer :: ierror
        ierror = MPI_SUCCESS
        if (complete .or. extra_state < 0) ierror = MPI_ERR_OTHER
    end subroutine greq_cancel

    ! Copies the attribute doubled.
    subroutine copy_double(oldcomm, comm_keyval, extra_state, attribute_val_in, &
                           attribute_val_out, flag, ierror)
        type(MPI_Comm) :: oldcomm
        integer :: comm_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
        logical :: flag
        attribute_val_out = attribute_val_in * 2 + extra_state
        flag = .true.
        ierror = MPI_SUCCESS
        if (oldcomm == MPI_COMM_NULL .or. comm_keyval == MPI_KEYVAL_INVALID) &
            ierror = MPI_ERR_OTHER
    end subroutine copy_double

    subroutine count_delete(comm, comm_keyval, attribute_val, extra_state, ierror)
        type(MPI_Comm) :: comm
        integer :: comm_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
        deletes = deletes + 1
        ierror = MPI_SUCCESS
        if (comm == MPI_COMM_NULL .or. comm_keyval == MPI_KEYVAL_INVALID .or. &
            attribute_val /= 21 .and. attribute_val /= 47 .or. extra_state /= 5) &
            ierror = MPI_ERR_OTHER
    end subroutine count_delete
end module f08_callbacks_fns

program f08_callbacks
    use mpi_f08
    use f08_callbacks_fns
    implicit none
    integer :: rank, nprocs, v(2), r(2), w(8), kv, kv2, tkv, ierr, cls
    character(len=32) :: fname
    character(len=*), parameter :: prog = 'f08_callbacks'
    integer(kind=MPI_ADDRESS_KIND) :: val
    logical :: flag
    type(MPI_Op) :: op
    type(MPI_Errhandler) :: eh
    type(MPI_Comm) :: dup
    type(MPI_Datatype) :: t
    type(MPI_Request) :: req
    type(MPI_Status) :: st

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

    call MPI_Op_create(maxabs, .true., op)
    v = (/ -rank * 3, rank /)
    call MPI_Allreduce(v, r, 2, MPI_INTEGER, op, MPI_COMM_WORLD)
    call check(r(1) == 3 * (nprocs - 1) .and. r(2) == nprocs - 1, 'user operation')
    ! The same on strided sections, nonblocking: the function would get the
    ! section's datatype in place of MPI_INTEGER, so MPI_ERR_BUFFER.
    w = 1
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    call MPI_Iallreduce(w(1:4:2), w(5:8:2), 2, MPI_INTEGER, op, MPI_COMM_WORLD, req, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_BUFFER .and. all(w == 1), &
               'iallreduce of a section with a user operation: MPI_ERR_BUFFER')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
    call MPI_Op_free(op)
    call check(op == MPI_OP_NULL, 'op_free')

    call MPI_Comm_create_errhandler(on_error, eh)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh)
    call MPI_Send(v, 1, MPI_INTEGER, nprocs + 1, 0, MPI_COMM_WORLD, ierr)
    call check(handler_calls == 1 .and. handler_code == ierr .and. ierr /= MPI_SUCCESS, &
               'communicator error handler')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
    call MPI_Errhandler_free(eh)

    ! A file error handler gets the file as TYPE(MPI_File): reading a file
    ! opened write-only calls it.
    write (fname, '(A,I0,A)') 'f08_callbacks.', rank, '.dat'
    call MPI_File_open(MPI_COMM_SELF, trim(fname), ior(MPI_MODE_CREATE, MPI_MODE_WRONLY), &
                       MPI_INFO_NULL, handled_file)
    call MPI_File_create_errhandler(on_file_error, eh)
    call MPI_File_set_errhandler(handled_file, eh)
    call MPI_File_read(handled_file, v, 1, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call MPI_Error_class(ierr, cls)
    call check(file_handler_calls == 1 .and. handler_code == ierr .and. &
               cls == MPI_ERR_ACCESS, 'file error handler')
    call MPI_Errhandler_free(eh)
    call MPI_File_close(handled_file)
    call MPI_File_delete(trim(fname), MPI_INFO_NULL)

    ! A generalized request completed by the program.
    greq_state = 17
    call MPI_Grequest_start(greq_query, greq_free, greq_cancel, greq_state, req)
    call MPI_Test(req, flag, st)
    call check(.not. flag, 'grequest pending')
    call MPI_Grequest_complete(req)
    call MPI_Wait(req, st)
    call MPI_Get_count(st, MPI_INTEGER, v(1))
    call check(req == MPI_REQUEST_NULL .and. st%MPI_SOURCE == 17 .and. st%MPI_TAG == 42 .and. &
               v(1) == 3 .and. greq_freed == 17 .and. greq_state == 117, 'generalized request')

    call MPI_Comm_create_keyval(copy_double, count_delete, kv, 5_MPI_ADDRESS_KIND)
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv2, &
                                0_MPI_ADDRESS_KIND)
    call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, 21_MPI_ADDRESS_KIND)
    call MPI_Comm_set_attr(MPI_COMM_WORLD, kv2, 9_MPI_ADDRESS_KIND)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call MPI_Comm_get_attr(dup, kv, val, flag)
    call check(flag .and. val == 47, 'copy callback')
    call MPI_Comm_get_attr(dup, kv2, val, flag)
    call check(.not. flag, 'MPI_COMM_NULL_COPY_FN')
    call MPI_Comm_free(dup)
    call check(deletes == 1, 'delete callback on comm_free')
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv)
    call check(deletes == 2, 'delete callback on delete_attr')
    call MPI_Comm_free_keyval(kv)
    call MPI_Comm_free_keyval(kv2)
    call check(kv == MPI_KEYVAL_INVALID, 'free_keyval')

    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv, &
                                0_MPI_ADDRESS_KIND)
    call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, 1234_MPI_ADDRESS_KIND)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call MPI_Comm_get_attr(dup, kv, val, flag)
    call check(flag .and. val == 1234, 'MPI_COMM_DUP_FN')
    call MPI_Comm_free(dup)
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv)
    call MPI_Comm_free_keyval(kv)

    call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tkv, &
                                0_MPI_ADDRESS_KIND)
    call MPI_Type_contiguous(2, MPI_INTEGER, t)
    call MPI_Type_set_attr(t, tkv, 77_MPI_ADDRESS_KIND)
    call MPI_Type_get_attr(t, tkv, val, flag)
    call check(flag .and. val == 77, 'type attribute')
    call MPI_Type_free(t)
    call MPI_Type_free_keyval(tkv)

    if (rank == 0) write (*, '(A,A,A,I0,A)') 'PASS ', prog, ' np=', nprocs, ':'
    call MPI_Finalize()

contains

    include 'f08_check.inc'
end program f08_callbacks
