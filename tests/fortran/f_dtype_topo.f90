! Derived datatypes and virtual topologies through `use mpi`: a strided
! vector type sent and received as contiguous integers, Dims_create, a 2-D
! Cartesian grid with periodic and non-periodic dimensions.
! px-requires: MPI_Type_vector MPI_Type_commit MPI_Type_free MPI_Dims_create
! px-requires: MPI_Cart_create MPI_Cart_coords MPI_Cart_shift MPI_Cart_get
program f_dtype_topo
    use mpi
    implicit none
    integer :: ierr, rank, nprocs, i, j, vtype, status(MPI_STATUS_SIZE)
    integer :: mat(4, 5), col(5)
    integer(kind=MPI_ADDRESS_KIND) :: lb, extent
    integer :: cart, dims(2), coords(2), periods_ok, src, dst
    logical :: periods(2)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    ! Column of a 4x5 matrix (Fortran is column major, so a row is strided).
    do j = 1, 5
        do i = 1, 4
            mat(i, j) = 10 * i + j
        end do
    end do
    call MPI_Type_vector(5, 1, 4, MPI_INTEGER, vtype, ierr)
    call MPI_Type_commit(vtype, ierr)
    call check(ierr == MPI_SUCCESS, 'type_vector')
    call MPI_Type_get_extent(vtype, lb, extent, ierr)
    call check(lb == 0 .and. extent == 4 * (4 * 4 + 1), 'vector extent')
    col = 0
    if (nprocs > 1) then
        if (rank == 0) call MPI_Send(mat(2, 1), 1, vtype, 1, 11, MPI_COMM_WORLD, ierr)
        if (rank == 1) then
            call MPI_Recv(col, 5, MPI_INTEGER, 0, 11, MPI_COMM_WORLD, status, ierr)
            do j = 1, 5
                call check(col(j) == 20 + j, 'vector row data')
            end do
        end if
    end if
    call MPI_Type_free(vtype, ierr)
    call check(vtype == MPI_DATATYPE_NULL, 'type_free')

    ! 2-D periodic Cartesian grid.
    dims = 0
    call MPI_Dims_create(nprocs, 2, dims, ierr)
    call check(dims(1) * dims(2) == nprocs .and. dims(1) >= dims(2), 'dims_create')
    periods = (/ .true., .false. /)
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
    call check(ierr == MPI_SUCCESS, 'cart_create')
    call MPI_Cart_coords(cart, rank, 2, coords, ierr)
    call check(coords(1) == rank / dims(2) .and. coords(2) == mod(rank, dims(2)), 'cart_coords')
    call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
    call check(dst == mod(coords(1) + 1, dims(1)) * dims(2) + coords(2), 'cart_shift periodic')
    call MPI_Cart_shift(cart, 1, 1, src, dst, ierr)
    if (coords(2) == dims(2) - 1) then
        call check(dst == MPI_PROC_NULL, 'cart_shift edge')
    end if
    periods = (/ .false., .true. /)
    call MPI_Cart_get(cart, 2, dims, periods, coords, ierr)
    periods_ok = 0
    if (periods(1) .and. .not. periods(2)) periods_ok = 1
    call check(periods_ok == 1, 'cart_get periods logical')
    call MPI_Comm_free(cart, ierr)

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_dtype_topo np=', nprocs, ':'
    call MPI_Finalize(ierr)

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: e
        if (.not. ok) then
            write (*, '(A,A)') 'FAIL f_dtype_topo: ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
            stop 1
        end if
    end subroutine check
end program f_dtype_topo
