! use mpi_f08: error handling. With MPI_ERRORS_RETURN an invalid rank gives
! an error code in ierror (class MPI_ERR_RANK, with a string); without
! ierror the error is returned and dropped; errhandler handles compare;
! a non-contiguous section where the binding cannot describe it (buffers
! of a nonblocking reduction laid out differently) fails with MPI_ERR_BUFFER instead of moving wrong
! data; MPI_SUBARRAYS_SUPPORTED, MPI_ASYNC_PROTECTS_NONBLOCKING, MPI_F_sync_reg.
! px-np: 2 4
program f08_errors
    use mpi_f08
    implicit none
    character(len=*), parameter :: prog = 'f08_errors'
    integer :: rank, nprocs, ierr, cls, resl, x(8), y(8)
    character(len=MPI_MAX_ERROR_STRING) :: msg
    type(MPI_Errhandler) :: eh
    type(MPI_Request) :: req
    type(MPI_Datatype) :: gappy

    call MPI_Init(ierr)
    call check(ierr == MPI_SUCCESS, 'init with ierror')
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    call check(.not. MPI_SUBARRAYS_SUPPORTED .and. .not. MPI_ASYNC_PROTECTS_NONBLOCKING, &
               'MPI_SUBARRAYS_SUPPORTED / MPI_ASYNC_PROTECTS_NONBLOCKING')

    call MPI_Comm_get_errhandler(MPI_COMM_WORLD, eh)
    call check(eh == MPI_ERRORS_ARE_FATAL, 'default errhandler')
    call MPI_Errhandler_free(eh)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Comm_get_errhandler(MPI_COMM_WORLD, eh)
    call check(ierr == MPI_SUCCESS .and. eh == MPI_ERRORS_RETURN .and. &
               eh /= MPI_ERRORS_ARE_FATAL, 'set_errhandler')
    call MPI_Errhandler_free(eh)

    ! Invalid rank: an error code, class MPI_ERR_RANK, and a message.
    x = rank
    ierr = MPI_SUCCESS
    call MPI_Send(x, 1, MPI_INTEGER, nprocs + 3, 0, MPI_COMM_WORLD, ierr)
    call check(ierr /= MPI_SUCCESS, 'invalid rank gives an error code')
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_RANK, 'error class MPI_ERR_RANK')
    msg = ''
    call MPI_Error_string(ierr, msg, resl)
    call check(resl > 0 .and. len_trim(msg) == resl, 'error string')
    ! The same without ierror: returns, the program goes on.
    call MPI_Send(x, 1, MPI_INTEGER, nprocs + 3, 0, MPI_COMM_WORLD)
    call MPI_Recv(y, 1, MPI_INTEGER, -17, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    ! Invalid datatype handle.
    call MPI_Send(x, 1, MPI_Datatype(12345), 0, 0, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_TYPE, 'invalid datatype handle')

    ! A nonblocking reduction of a strided section into a contiguous one: one
    ! datatype cannot describe both, so MPI_ERR_BUFFER.
    call MPI_Iallreduce(x(1:8:2), y(1:4), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_BUFFER, &
               'iallreduce of sections laid out differently: MPI_ERR_BUFFER')
    ! A reduce_scatter_block of a section: its buffers differ in length.
    call MPI_Ireduce_scatter_block(x(1:8:2), y(1:1), 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                                   req, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_BUFFER, 'ireduce_scatter_block of a section: MPI_ERR_BUFFER')
    ! A datatype with gaps on a strided section of a nonblocking send.
    call MPI_Type_create_resized(MPI_INTEGER, 0_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND, gappy)
    call MPI_Type_commit(gappy)
    call MPI_Isend(x(1:8:2), 2, gappy, rank, 5, MPI_COMM_WORLD, req, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_BUFFER, 'isend of a section with a gappy type: MPI_ERR_BUFFER')
    call MPI_Type_free(gappy)
    ! The blocking reduction of the same section works (through a copy).
    x = rank + 1
    y = 0
    call MPI_Allreduce(x(1:8:2), y(1:4), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(y(1:4) == nprocs * (nprocs + 1) / 2) .and. &
               all(y(5:8) == 0), 'allreduce of a section')

    call MPI_F_sync_reg(y)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
    if (rank == 0) write (*, '(A,A,A,I0,A)') 'PASS ', prog, ' np=', nprocs, ':'
    call MPI_Finalize(ierr)

contains

    include 'f08_check.inc'
end program f08_errors
