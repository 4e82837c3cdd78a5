! TYPE(MPI_Status) and the status conversions through `use mpi`
! (MPI-4.0 19.3.5): a status from a receive converted to TYPE(MPI_Status)
! and back keeps source, tag, error, count, a count above 2**31 and the
! cancelled flag; PMPI_ names; MPI_SIZEOF; and the TYPE(MPI_Status) of module mpi is the
! one of module mpi_f08 (a procedure using mpi_f08 reads the count of a
! status converted under module mpi).
! px-mpich-abi: no (MPICH's module mpi declares the conversions but its
! library has no mpi_status_f082f_ to link them to)
module f_status_f08_side
    use mpi_f08
    implicit none
contains
    ! count of MPI_INTEGER in s, read through mpi_f08
    subroutine f08_count(s, n)
        type(MPI_Status), intent(in) :: s
        integer, intent(out) :: n
        call MPI_Get_count(s, MPI_INTEGER, n)
    end subroutine f08_count
end module f_status_f08_side

program f_status_usempi
    use mpi
    use f_status_f08_side, only : f08_count
    implicit none
    integer :: ierr, rank, nprocs, left, right, i, n
    integer :: sbuf(16), rbuf(16)
    integer :: fs(MPI_STATUS_SIZE), fs2(MPI_STATUS_SIZE)
    integer(kind=MPI_COUNT_KIND) :: big, got
    type(MPI_Status) :: s8, s8b
    logical :: flag

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    right = mod(rank + 1, nprocs)
    left = mod(rank + nprocs - 1, nprocs)

    ! A ring of messages whose length and tag name the sender.
    do i = 1, 16
        sbuf(i) = rank * 100 + i
    end do
    rbuf = -1
    call MPI_Sendrecv(sbuf, rank + 3, MPI_INTEGER, right, 100 + rank, &
                      rbuf, 16, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, &
                      MPI_COMM_WORLD, fs, ierr)
    call check(ierr == MPI_SUCCESS .and. rbuf(1) == left * 100 + 1, 'sendrecv')

    ! Integer status -> TYPE(MPI_Status): the public fields.
    call MPI_Status_f2f08(fs, s8, ierr)
    call check(ierr == MPI_SUCCESS, 'f2f08 ierror')
    call check(s8%MPI_SOURCE == left .and. s8%MPI_TAG == 100 + left, 'f2f08 source and tag')
    call check(s8%MPI_ERROR == fs(MPI_ERROR), 'f2f08 error field')

    ! The count is hidden in TYPE(MPI_Status): read through mpi_f08.
    n = -1
    call f08_count(s8, n)
    call check(n == left + 3, 'count through mpi_f08')

    ! Back: the same integer status, count included.
    fs2 = -9
    call MPI_Status_f082f(s8, fs2, ierr)
    call check(ierr == MPI_SUCCESS .and. all(fs2 == fs), 'f082f round trip')
    call MPI_Get_count(fs2, MPI_INTEGER, n, ierr)
    call check(n == left + 3, 'count after round trip')

    ! A count above 2**31 and the cancelled flag survive both ways.
    big = 2_MPI_COUNT_KIND**33 + 5_MPI_COUNT_KIND * rank + 1
    call MPI_Status_set_elements_x(fs, MPI_BYTE, big, ierr)
    call MPI_Status_set_cancelled(fs, .true., ierr)
    call MPI_Status_f2f08(fs, s8, ierr)
    fs2 = 0
    call MPI_Status_f082f(s8, fs2, ierr)
    got = -1
    call MPI_Get_elements_x(fs2, MPI_BYTE, got, ierr)
    call check(got == big, 'large count round trip')
    flag = .false.
    call MPI_Test_cancelled(fs2, flag, ierr)
    call check(flag, 'cancelled round trip')
    call MPI_Status_set_cancelled(fs, .false., ierr)
    call MPI_Status_f2f08(fs, s8, ierr)
    call MPI_Status_f082f(s8, fs2, ierr)
    call MPI_Test_cancelled(fs2, flag, ierr)
    call check(.not. flag, 'not cancelled round trip')

    ! PMPI_ names, and a TYPE(MPI_Status) assigned like any derived type.
    fs(MPI_SOURCE) = 7
    fs(MPI_TAG) = 11
    call PMPI_Status_f2f08(fs, s8, ierr)
    s8b = s8
    fs2 = 0
    call PMPI_Status_f082f(s8b, fs2, ierr)
    call check(ierr == MPI_SUCCESS .and. fs2(MPI_SOURCE) == 7 .and. fs2(MPI_TAG) == 11, &
               'PMPI conversions')

    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    ! MPI_SIZEOF of module mpi: the bytes of one element, any type or rank
    call MPI_Sizeof(sbuf, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n == 4, 'MPI_Sizeof of an INTEGER array')
    call MPI_Sizeof(big, n, ierr)
    call check(n == 8, 'MPI_Sizeof of an INTEGER(KIND=MPI_COUNT_KIND)')
    call MPI_Sizeof((1d0, 2d0), n, ierr)
    call check(n == 16, 'MPI_Sizeof of a double precision complex')
    n = -1
    call PMPI_Sizeof(.true., n, ierr)
    call check(ierr == MPI_SUCCESS .and. n == 4, 'PMPI_Sizeof of a LOGICAL')

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_status_usempi np=', nprocs, ':'
    call MPI_Finalize(ierr)

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: e
        if (.not. ok) then
            write (*, '(A,I0,2A)') 'FAIL rank ', rank, ': ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
        end if
    end subroutine check

end program f_status_usempi
