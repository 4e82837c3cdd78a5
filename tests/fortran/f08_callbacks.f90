! use mpi_f08: procedures passed to MPI. A user reduction (MPI_Op_create,
! MPI_User_function with TYPE(C_PTR) buffers), a communicator error handler,
! attribute keyvals with copy and delete callbacks and the predefined
! MPI_COMM_NULL_COPY_FN / MPI_COMM_DUP_FN / MPI_TYPE_NULL_DELETE_FN.
! px-np: 2 3
module f08_callbacks_fns
    use mpi_f08
    use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
    implicit none
    integer :: handler_calls = 0, handler_code = MPI_SUCCESS
    integer :: deletes = 0
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

    subroutine on_error(comm, error_code)
        type(MPI_Comm) :: comm
        integer :: error_code
        handler_calls = handler_calls + 1
        handler_code = error_code
        if (comm /= MPI_COMM_WORLD) handler_calls = -100
    end subroutine on_error

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
    integer :: rank, nprocs, v(2), r(2), kv, kv2, tkv, ierr
    character(len=*), parameter :: prog = 'f08_callbacks'
    integer(kind=MPI_ADDRESS_KIND) :: val
    logical :: flag
    type(MPI_Op) :: op
    type(MPI_Errhandler) :: eh
    type(MPI_Comm) :: dup
    type(MPI_Datatype) :: t

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

    call MPI_Op_create(maxabs, .true., op)
    v = (/ -rank * 3, rank /)
    call MPI_Allreduce(v, r, 2, MPI_INTEGER, op, MPI_COMM_WORLD)
    call check(r(1) == 3 * (nprocs - 1) .and. r(2) == nprocs - 1, 'user operation')
    call MPI_Op_free(op)
    call check(op == MPI_OP_NULL, 'op_free')

    call MPI_Comm_create_errhandler(on_error, eh)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh)
    call MPI_Send(v, 1, MPI_INTEGER, nprocs + 1, 0, MPI_COMM_WORLD, ierr)
    call check(handler_calls == 1 .and. handler_code == ierr .and. ierr /= MPI_SUCCESS, &
               'communicator error handler')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
    call MPI_Errhandler_free(eh)

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
