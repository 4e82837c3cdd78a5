! use mpi_f08 and the profiling interface: MPI-4.0's specific procedure
! names (MPI_Send_f08ts for a routine with choice buffers, MPI_Comm_rank_f08
! for one without) exist in the module, and a tool that defines the linker
! name of a specific with BIND(C) is called in place of the library, which
! it reaches through the PMPI_ generic; the buffer it forwards (an array
! section) arrives as the standard C descriptor and reaches the receiver
! intact. A tool written as a plain Fortran subroutine MPI_Recv_f08ts (as
! MPI-4.0 19.1.5 has tools written) takes the place of the library's too,
! and the array section it is given and passes on is received into. A
! direct PMPI_ call does not reach the tool.
! px-np: 2
module f08_profile_tool
    use mpi_f08, only: MPI_Datatype, MPI_Comm, PMPI_Send, PMPI_Comm_rank
    use, intrinsic :: iso_c_binding, only: c_int
    implicit none
    integer :: sends = 0, sent = 0, ranks = 0, recvs = 0
contains
    subroutine tool_send(buf, count, datatype, dest, tag, comm, ierror) &
            bind(C, name="MPI_Send_f08ts")
        type(*), dimension(..), intent(in) :: buf
        integer(c_int), intent(in) :: count, dest, tag
        type(MPI_Datatype), intent(in) :: datatype
        type(MPI_Comm), intent(in) :: comm
        integer(c_int), optional, intent(out) :: ierror
        sends = sends + 1
        sent = sent + count
        call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
    end subroutine tool_send

    subroutine tool_comm_rank(comm, rank, ierror) bind(C, name="MPI_Comm_rank_f08")
        type(MPI_Comm), intent(in) :: comm
        integer(c_int), intent(out) :: rank
        integer(c_int), optional, intent(out) :: ierror
        ranks = ranks + 1
        call PMPI_Comm_rank(comm, rank, ierror)
    end subroutine tool_comm_rank
end module f08_profile_tool

program f08_profile
    use mpi_f08, lib_send => MPI_Send_f08ts, lib_rank => MPI_Comm_rank_f08, &
        lib_psend => PMPI_Send_f08ts, lib_send_c => MPI_Send_c_f08ts
    use f08_profile_tool
    implicit none
    character(len=*), parameter :: prog = 'f08_profile'
    integer :: rank, nprocs, i, ierr, a(6), b(3), c(6)

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call check(ierr == MPI_SUCCESS .and. ranks == 1, 'MPI_Comm_rank through the tool')
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    if (rank == 0) then
        a = (/ (10 * i, i = 1, 6) /)
        call MPI_Send(a(1:6:2), 3, MPI_INTEGER, 1, 5, MPI_COMM_WORLD)
        call check(sends == 1 .and. sent == 3, 'MPI_Send through the tool')
        call PMPI_Send(a(2:6:2), 3, MPI_INTEGER, 1, 6, MPI_COMM_WORLD)
        call check(sends == 1, 'PMPI_Send reached the tool')
        call PMPI_Send((/ 1, 2, 3 /), 3, MPI_INTEGER, 1, 7, MPI_COMM_WORLD)
        call PMPI_Send((/ 4, 5, 6 /), 3, MPI_INTEGER, 1, 8, MPI_COMM_WORLD)
    else if (rank == 1) then
        call MPI_Recv(b, 3, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call check(all(b == (/ 10, 30, 50 /)), 'data sent through the tool')
        call MPI_Recv(b, 3, MPI_INTEGER, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call check(all(b == (/ 20, 40, 60 /)), 'data sent through PMPI_Send')
        call check(sends == 0, 'a receiver counted sends')
        call check(recvs == 2, 'MPI_Recv through the Fortran tool')
        c = -1
        call MPI_Recv(c(2:6:2), 3, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call check(ierr == MPI_SUCCESS .and. recvs == 3, 'section received through the tool')
        call check(all(c == (/ -1, 1, -1, 2, -1, 3 /)), 'data in the section')
        call PMPI_Recv(b, 3, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call check(recvs == 3 .and. all(b == (/ 4, 5, 6 /)), 'PMPI_Recv reached the tool')
    end if

    if (rank == 0) write (*, '(A,A,A,I0,A)') 'PASS ', prog, ' np=', nprocs, ':'
    call MPI_Finalize()

contains

    include 'f08_check.inc'
end program f08_profile

! The Fortran tool: an external subroutine with the specific's name.
subroutine MPI_Recv_f08ts(buf, count, datatype, source, tag, comm, status, ierror)
    use mpi_f08, lib_recv => MPI_Recv_f08ts
    use f08_profile_tool, only: recvs
    implicit none
    type(*), dimension(..) :: buf
    integer, intent(in) :: count, source, tag
    type(MPI_Datatype), intent(in) :: datatype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Status) :: status
    integer, optional, intent(out) :: ierror
    recvs = recvs + 1
    call PMPI_Recv(buf, count, datatype, source, tag, comm, status, ierror)
end subroutine MPI_Recv_f08ts
