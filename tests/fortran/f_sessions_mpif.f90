! Sessions from Fortran (mpif.h), without MPI_Init: the group of the process
! set mpi://WORLD and its "mpi_size", a communicator made from the group
! (sizes and a checked allreduce), an unknown process set (MPI_ERR_ARG
! through the session's MPI_ERRORS_RETURN), and MPI_Session_finalize.
! px-requires: MPI_Session_init MPI_Session_finalize MPI_Group_from_session_pset
! px-requires: MPI_Session_get_pset_info MPI_Comm_create_from_group
program f_sessions_mpif
    implicit none
    include 'mpif.h'
    integer :: ierr, rc, session, wgroup, bgroup, comm, info, errclass
    integer :: rank, nprocs, gsize, grank, msize, mine, total, errs, allerrs
    logical :: flag
    character(len=MPI_MAX_INFO_VAL) :: val

    errs = 0
    call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
    if (ierr /= MPI_SUCCESS) then
        write (*, '(A)') 'FAIL f_sessions_mpif: MPI_Session_init'
        stop 1
    end if
    call MPI_Initialized(flag, ierr)
    if (flag) errs = errs + 1

    call MPI_Group_from_session_pset(session, 'mpi://WORLD', wgroup, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    call MPI_Group_size(wgroup, gsize, ierr)
    call MPI_Group_rank(wgroup, grank, ierr)
    call MPI_Session_get_pset_info(session, 'mpi://WORLD', info, ierr)
    val = ' '
    call MPI_Info_get(info, 'mpi_size', MPI_MAX_INFO_VAL, val, flag, ierr)
    msize = -1
    if (flag) read (val, *) msize
    if (msize /= gsize) errs = errs + 1
    call MPI_Info_free(info, ierr)

    call MPI_Group_from_session_pset(session, 'mpi://NO-SUCH-SET', bgroup, rc)
    call MPI_Error_class(rc, errclass, ierr)
    if (errclass /= MPI_ERR_ARG) errs = errs + 1

    call MPI_Comm_create_from_group(wgroup, 'org.plexus.test.fortran', MPI_INFO_NULL, &
                                    MPI_ERRORS_RETURN, comm, ierr)
    if (ierr /= MPI_SUCCESS) then
        write (*, '(A)') 'FAIL f_sessions_mpif: MPI_Comm_create_from_group'
        stop 1
    end if
    call MPI_Comm_rank(comm, rank, ierr)
    call MPI_Comm_size(comm, nprocs, ierr)
    if (rank /= grank .or. nprocs /= gsize) errs = errs + 1
    mine = rank + 1
    call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
    if (total /= nprocs * (nprocs + 1) / 2) errs = errs + 1
    call MPI_Allreduce(errs, allerrs, 1, MPI_INTEGER, MPI_SUM, comm, ierr)

    call MPI_Comm_free(comm, ierr)
    call MPI_Group_free(wgroup, ierr)
    call MPI_Session_finalize(session, ierr)
    if (ierr /= MPI_SUCCESS) allerrs = allerrs + 1
    if (allerrs /= 0) then
        write (*, '(A,I0,A)') 'FAIL f_sessions_mpif: ', allerrs, ' failed checks'
        stop 1
    end if
    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_sessions_mpif np=', nprocs, ':'
end program f_sessions_mpif
