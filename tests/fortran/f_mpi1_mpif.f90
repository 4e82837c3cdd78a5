! MPI-1 era interfaces still found in Fortran codes, through mpif.h:
! MPI_Keyval_create/MPI_Attr_put/MPI_Attr_get with INTEGER callbacks and
! values, MPI_Address/MPI_Type_struct/MPI_Type_extent with INTEGER addresses,
! and the MPI_BOTTOM common block as the buffer of absolute-address types.
! px-requires: MPI_Keyval_create MPI_Attr_put MPI_Attr_get MPI_Keyval_free
! px-requires: MPI_Address MPI_Type_struct MPI_Type_extent MPI_Type_commit
! px-requires: MPI_Type_create_struct MPI_Get_address MPI_Comm_dup
subroutine copy1(oldcomm, keyval, extra, valin, valout, flag, ierr)
    implicit none
    include 'mpif.h'
    integer :: oldcomm, keyval, extra, valin, valout, ierr
    logical :: flag
    valout = valin * extra
    flag = .true.
    ierr = MPI_SUCCESS
    if (oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) ierr = MPI_ERR_OTHER
end subroutine copy1

program f_mpi1_mpif
    implicit none
    include 'mpif.h'
    external copy1
    integer :: ierr, rank, nprocs, kv, dup, val, stype, atype, ext, peer, left
    integer :: blens(2), types(2), displs(2), base, status(MPI_STATUS_SIZE)
    integer(kind=MPI_ADDRESS_KIND) :: adispl(2)
    logical :: flag
    integer :: ival
    double precision :: dval
    ! written through MPI_BOTTOM only: the compiler must not assume them unchanged
    integer, volatile :: jval
    double precision, volatile :: eval

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    call MPI_Keyval_create(copy1, MPI_NULL_DELETE_FN, kv, 3, ierr)
    call check(ierr == MPI_SUCCESS, 'keyval_create')
    call MPI_Attr_put(MPI_COMM_WORLD, kv, 14 + rank, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    val = -1
    call MPI_Attr_get(dup, kv, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. val == 3 * (14 + rank), 'attr copied')
    call MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
    call check(flag .and. val >= 32767, 'attr_get MPI_TAG_UB')
    call MPI_Comm_free(dup, ierr)
    call MPI_Keyval_free(kv, ierr)

    ! {integer, double precision} at two separate addresses, as an MPI-1 struct
    ! relative to the first one.
    call MPI_Address(ival, base, ierr)
    call MPI_Address(dval, displs(2), ierr)
    displs(1) = 0
    displs(2) = displs(2) - base
    blens = 1
    types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
    call MPI_Type_struct(2, blens, displs, types, stype, ierr)
    call MPI_Type_commit(stype, ierr)
    call check(ierr == MPI_SUCCESS, 'type_struct')
    call MPI_Type_extent(stype, ext, ierr)
    call check(ext >= abs(displs(2)), 'type_extent')

    ! Absolute addresses with MPI_BOTTOM.
    call MPI_Get_address(jval, adispl(1), ierr)
    call MPI_Get_address(eval, adispl(2), ierr)
    call MPI_Type_create_struct(2, blens, adispl, types, atype, ierr)
    call MPI_Type_commit(atype, ierr)

    peer = mod(rank + 1, nprocs)
    left = mod(rank - 1 + nprocs, nprocs)
    ival = 100 + rank
    dval = 0.5d0 + rank
    jval = -1
    eval = -1.0d0
    call MPI_Sendrecv(ival, 1, stype, peer, 1, MPI_BOTTOM, 1, atype, left, 1, &
                      MPI_COMM_WORLD, status, ierr)
    call check(ierr == MPI_SUCCESS, 'sendrecv structs')
    call check(jval == 100 + left .and. eval == 0.5d0 + left, 'struct data via MPI_BOTTOM')
    call MPI_Type_free(stype, ierr)
    call MPI_Type_free(atype, ierr)

    if (rank == 0) write (*, '(A,I0,A)') 'PASS f_mpi1_mpif np=', nprocs, ':'
    call MPI_Finalize(ierr)

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: e
        if (.not. ok) then
            write (*, '(A,A)') 'FAIL f_mpi1_mpif: ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
            stop 1
        end if
    end subroutine check
end program f_mpi1_mpif
