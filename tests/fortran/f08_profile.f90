! use mpi_f08 and the profiling interface: MPI-4.0's specific procedure
! names (MPI_Send_f08ts for a routine with choice buffers, MPI_Comm_rank_f08
! for one without) exist in the module, and a tool that defines the linker
! name of a specific with BIND(C) is called in place of the library, which
! it reaches through the PMPI_ generic; the buffer it forwards (an array
! section) arrives as the standard C descriptor and reaches the receiver
! intact. A direct PMPI_ call does not reach the tool.
! px-np: 2
module f08_profile_tool
    use mpi_f08, only: MPI_Datatype, MPI_Comm, PMPI_Send, PMPI_Comm_rank
    use, intrinsic :: iso_c_binding, only: c_int
    implicit none
    integer :: sends = 0, sent = 0, ranks = 0
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
    integer :: rank, nprocs, i, ierr, a(6), b(3)

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
    else if (rank == 1) then
        call MPI_Recv(b, 3, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call check(all(b == (/ 10, 30, 50 /)), 'data sent through the tool')
        call MPI_Recv(b, 3, MPI_INTEGER, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call check(all(b == (/ 20, 40, 60 /)), 'data sent through PMPI_Send')
        call check(sends == 0, 'a receiver counted sends')
    end if

    if (rank == 0) write (*, '(A,A,A,I0,A)') 'PASS ', prog, ' np=', nprocs, ':'
    call MPI_Finalize()

contains

    include 'f08_check.inc'
end program f08_profile
