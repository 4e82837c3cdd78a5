! Through mpif.h: generalized requests with Fortran callbacks (the query
! fills the status, the free callback gets the caller's extra state variable, the cancel
! callback learns whether the request is complete), MPI_Info_get_string
! (lengths without C's NUL, truncation, a length-only query, a missing key),
! MPI_Info_create_env (its "maxprocs" the job's size), and MPI_Session_get_nth_pset.
! px-requires: MPI_Grequest_start MPI_Grequest_complete MPI_Info_get_string
! px-requires: MPI_Info_create_env MPI_Session_get_nth_pset MPI_Session_init
program f_greq_info_mpif
    implicit none
    include 'mpif.h'
    integer :: ierr, rank, nprocs, req, info, session, n, buflen, cnt, errs
    integer :: st(MPI_STATUS_SIZE)
    logical :: flag
    character(len=64) :: val, want
    integer :: freed, cancels
    integer(kind=MPI_ADDRESS_KIND) :: state
    common /greq/ freed, cancels
    external greq_query, greq_free, greq_cancel

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    errs = 0
    freed = 0
    cancels = 0

    state = 17
    call MPI_Grequest_start(greq_query, greq_free, greq_cancel, state, req, ierr)
    call MPI_Test(req, flag, st, ierr)
    if (ierr /= MPI_SUCCESS .or. flag) call fail('grequest pending')
    call MPI_Cancel(req, ierr)
    if (cancels /= 1) call fail('cancel callback of a pending request')
    call MPI_Grequest_complete(req, ierr)
    call MPI_Wait(req, st, ierr)
    call MPI_Get_count(st, MPI_INTEGER, cnt, ierr)
    if (req /= MPI_REQUEST_NULL .or. st(MPI_SOURCE) /= 17 .or. st(MPI_TAG) /= 42 .or. &
        cnt /= 3 .or. freed /= 17 .or. state /= 117) call fail('generalized request')

    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, 'planet', 'saturn', ierr)
    buflen = 0
    call MPI_Info_get_string(info, 'planet', buflen, val, flag, ierr)
    if (.not. flag .or. buflen /= 6) call fail('info_get_string length')
    buflen = 3
    val = 'x'
    call MPI_Info_get_string(info, 'planet', buflen, val, flag, ierr)
    if (.not. flag .or. buflen /= 6 .or. val /= 'sat') call fail('info_get_string truncated')
    buflen = len(val)
    call MPI_Info_get_string(info, 'planet  ', buflen, val, flag, ierr)
    if (.not. flag .or. val /= 'saturn' .or. buflen /= 6) call fail('info_get_string')
    call MPI_Info_get_string(info, 'moon', buflen, val, flag, ierr)
    if (ierr /= MPI_SUCCESS .or. flag) call fail('info_get_string of a missing key')
    call MPI_Info_free(info, ierr)

    call MPI_Info_create_env(info, ierr)
    if (ierr /= MPI_SUCCESS .or. info == MPI_INFO_NULL) call fail('info_create_env')
    buflen = len(val)
    call MPI_Info_get_string(info, 'maxprocs', buflen, val, flag, ierr)
    write (want, '(I0)') nprocs
    if (.not. flag .or. val /= want) call fail('info_create_env: maxprocs')
    call MPI_Info_free(info, ierr)

    call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
    call MPI_Session_get_num_psets(session, MPI_INFO_NULL, n, ierr)
    buflen = len(val)
    call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, buflen, val, ierr)
    if (ierr /= MPI_SUCCESS .or. n < 2 .or. val(1:6) /= 'mpi://' .or. &
        buflen /= len_trim(val)) call fail('session_get_nth_pset')
    buflen = 0
    call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 1, buflen, val, ierr)
    if (ierr /= MPI_SUCCESS .or. buflen < 7) call fail('session_get_nth_pset length')
    call MPI_Session_finalize(session, ierr)

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_greq_info_mpif np=', nprocs, ': ok'
    call MPI_Finalize(ierr)

contains

    subroutine fail(what)
        character(len=*), intent(in) :: what
        integer :: e
        write (*, '(A,A)') 'FAIL f_greq_info_mpif: ', what
        call MPI_Abort(MPI_COMM_WORLD, 1, e)
        stop 1
    end subroutine fail
end program f_greq_info_mpif

subroutine greq_query(extra_state, status, ierror)
    implicit none
    include 'mpif.h'
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: status(MPI_STATUS_SIZE), ierror
    status(MPI_SOURCE) = int(extra_state)
    status(MPI_TAG) = 42
    call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierror)
    call MPI_Status_set_cancelled(status, .false., ierror)
    ierror = MPI_SUCCESS
end subroutine greq_query

subroutine greq_free(extra_state, ierror)
    implicit none
    include 'mpif.h'
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    integer :: freed, cancels
    common /greq/ freed, cancels
    freed = int(extra_state)
    extra_state = extra_state + 100 ! the caller's variable, as with MPICH and Open MPI
    ierror = MPI_SUCCESS
end subroutine greq_free

subroutine greq_cancel(extra_state, complete, ierror)
    implicit none
    include 'mpif.h'
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    integer :: freed, cancels
    common /greq/ freed, cancels
    ierror = MPI_SUCCESS
    if (complete .or. extra_state /= 17) then
        ierror = MPI_ERR_OTHER
    else
        cancels = cancels + 1
    end if
end subroutine greq_cancel
