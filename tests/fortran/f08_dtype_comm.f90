! use mpi_f08: derived datatypes (vector, indexed, struct with
! MPI_Get_address, resized, subarray, names, envelope), pack/unpack,
! communicators and groups (dup, split, compare, create, group ops, names,
! attributes of kind MPI_ADDRESS_KIND, cartesian topology with LOGICAL
! periods), MPI_Info_get_string and MPI_Session_get_nth_pset, status
! conversions (MPI_Status_f082f/f2f08 and C's MPI_Status_f082c/c2f08),
! MPI_Sizeof, MPI_Wtime/MPI_Wtick, PMPI_ names.
! px-np: 2 3 4
program f08_dtype_comm
    use mpi_f08
    use, intrinsic :: iso_c_binding, only : c_int
    implicit none
    character(len=*), parameter :: prog = 'f08_dtype_comm'
    interface
        integer(c_int) function c_status_f082c(f08, c) bind(C, name="MPI_Status_f082c")
            import :: MPI_Status, c_int
            type(MPI_Status), intent(in) :: f08
            integer(c_int) :: c(5)
        end function c_status_f082c
        integer(c_int) function c_status_c2f08(c, f08) bind(C, name="MPI_Status_c2f08")
            import :: MPI_Status, c_int
            integer(c_int), intent(in) :: c(5)
            type(MPI_Status) :: f08
        end function c_status_c2f08
    end interface
    type :: particle
        integer :: id
        double precision :: x(3)
    end type particle
    integer :: rank, nprocs, i, j, n, resl, res, pos, ierr, csize, ni, na, nd, comb
    integer :: a(20), b(20), sizes(2), subs(2), starts(2), dims(2), coords(2), fstat(MPI_STATUS_SIZE)
    integer :: cstat(5), iblk(2)
    double precision :: m(5, 4), mm(5, 4), t0, t1
    character :: packbuf(200)
    character(len=MPI_MAX_OBJECT_NAME) :: name
    integer(kind=MPI_ADDRESS_KIND) :: disp(2), base, lb, ext, aval
    type(particle) :: p(3), q(3)
    type(MPI_Datatype) :: vec, idx, ptype, ptype2, sub, dtypes(2)
    type(MPI_Comm) :: dup, half, cart, fromgroup
    type(MPI_Group) :: world_group, even_group, g2
    type(MPI_Status) :: st, st2
    type(MPI_Info) :: info
    type(MPI_Session) :: session
    logical :: periods(2), flag

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

    ! Vector: every other integer, rank 0 to the last rank.
    call MPI_Type_vector(5, 1, 2, MPI_INTEGER, vec)
    call MPI_Type_commit(vec)
    call MPI_Type_size(vec, n)
    call check(n == 20, 'vector size')
    a = (/ (i, i = 1, 20) /)
    b = 0
    if (rank == 0) call MPI_Send(a, 2, vec, nprocs - 1, 1, MPI_COMM_WORLD)
    if (rank == nprocs - 1) then
        call MPI_Recv(b, 10, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, st)
        call MPI_Get_count(st, MPI_INTEGER, n)
        call check(n == 10 .and. b(1) == 1 .and. b(5) == 9 .and. b(6) == 10 .and. &
                   b(10) == 18 .and. b(11) == 0, 'vector send')
        ! MPI_Get_elements with the vector type: 10 integers in 2 vectors
        call MPI_Get_elements(st, MPI_INTEGER, n)
        call check(n == 10, 'get_elements')
    end if
    call MPI_Type_set_name(vec, 'evens')
    call MPI_Type_get_name(vec, name, resl)
    call check(name == 'evens' .and. resl == 5, 'type name')
    call MPI_Type_get_envelope(vec, ni, na, nd, comb)
    call check(comb == MPI_COMBINER_VECTOR .and. ni == 3 .and. nd == 1, 'envelope')
    call MPI_Type_free(vec)
    call check(vec == MPI_DATATYPE_NULL, 'type_free')

    ! Indexed on the same array, bcast.
    iblk = (/ 2, 3 /)
    call MPI_Type_indexed(2, iblk, (/ 0, 10 /), MPI_INTEGER, idx)
    call MPI_Type_commit(idx)
    b = 0
    if (rank == 0) b = a
    call MPI_Bcast(b, 1, idx, 0, MPI_COMM_WORLD)
    call check(b(1) == 1 .and. b(2) == 2 .and. (rank == 0 .or. b(3) == 0) .and. b(11) == 11 &
               .and. b(13) == 13, 'indexed bcast')
    call MPI_Type_free(idx)

    ! Struct of a derived type, addresses from MPI_Get_address.
    call MPI_Get_address(p(1)%id, base)
    call MPI_Get_address(p(1)%x, disp(2))
    disp(1) = 0
    disp(2) = MPI_Aint_diff(disp(2), base)
    dtypes = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
    call MPI_Type_create_struct(2, (/ 1, 3 /), disp, dtypes, ptype)
    call MPI_Get_address(p(2), aval)
    call MPI_Type_create_resized(ptype, 0_MPI_ADDRESS_KIND, MPI_Aint_diff(aval, base), ptype2)
    call MPI_Type_commit(ptype2)
    call MPI_Type_get_extent(ptype2, lb, ext)
    call check(lb == 0 .and. ext == MPI_Aint_diff(aval, base), 'resized extent')
    do i = 1, 3
        p(i)%id = rank * 10 + i
        p(i)%x = (/ dble(i), dble(rank), -1d0 /)
    end do
    call MPI_Sendrecv(p, 3, ptype2, mod(rank + 1, nprocs), 2, q, 3, ptype2, &
                      mod(rank - 1 + nprocs, nprocs), 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    j = mod(rank - 1 + nprocs, nprocs)
    call check(q(3)%id == j * 10 + 3 .and. q(2)%x(1) == 2d0 .and. q(3)%x(2) == dble(j), &
               'struct sendrecv')
    call MPI_Type_free(ptype)
    call MPI_Type_free(ptype2)

    ! Subarray: the 3x2 block at (2,2) of a 5x4 matrix.
    sizes = (/ 5, 4 /)
    subs = (/ 3, 2 /)
    starts = (/ 1, 1 /)
    call MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, &
                                  MPI_DOUBLE_PRECISION, sub)
    call MPI_Type_commit(sub)
    m = reshape((/ (dble(i), i = 1, 20) /), (/ 5, 4 /))
    mm = 0
    call MPI_Sendrecv(m, 1, sub, rank, 3, mm, 1, sub, rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call check(mm(2, 2) == 7 .and. mm(4, 3) == 14 .and. mm(1, 1) == 0 .and. sum(mm) == 63, &
               'subarray')
    call MPI_Type_free(sub)

    ! Pack / unpack.
    pos = 0
    call MPI_Pack(a, 3, MPI_INTEGER, packbuf, 200, pos, MPI_COMM_WORLD)
    call MPI_Pack(m(1:5:2, 1), 3, MPI_DOUBLE_PRECISION, packbuf, 200, pos, MPI_COMM_WORLD)
    call MPI_Pack_size(3, MPI_INTEGER, MPI_COMM_WORLD, n)
    call check(pos >= 36 .and. n >= 12, 'pack position')
    b = 0
    mm = 0
    pos = 0
    call MPI_Unpack(packbuf, 200, pos, b, 3, MPI_INTEGER, MPI_COMM_WORLD)
    call MPI_Unpack(packbuf, 200, pos, mm(2, 1:3), 3, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
    call check(b(3) == 3 .and. b(4) == 0 .and. mm(2, 1) == 1 .and. mm(2, 2) == 3 .and. &
               mm(2, 3) == 5 .and. mm(1, 1) == 0, 'unpack')

    ! Communicators and groups.
    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call MPI_Comm_compare(dup, MPI_COMM_WORLD, res)
    call check(res == MPI_CONGRUENT .and. dup /= MPI_COMM_WORLD, 'comm_dup/compare')
    call MPI_Comm_split(dup, mod(rank, 2), -rank, half)
    call MPI_Comm_size(half, n)
    call check(n == (nprocs - mod(rank, 2) + 1) / 2, 'split size')
    call MPI_Comm_set_name(half, 'half')
    call MPI_Comm_get_name(half, name, resl)
    call check(name == 'half' .and. resl == 4, 'comm name')
    call MPI_Comm_test_inter(half, flag)
    call check(.not. flag, 'test_inter')
    call MPI_Comm_group(MPI_COMM_WORLD, world_group)
    call MPI_Group_incl(world_group, (nprocs + 1) / 2, (/ (2 * i, i = 0, (nprocs + 1) / 2 - 1) /), &
                        even_group)
    call MPI_Group_size(even_group, n)
    call MPI_Group_rank(even_group, j)
    call check(n == (nprocs + 1) / 2 .and. (j == MPI_UNDEFINED .eqv. mod(rank, 2) == 1), &
               'group_incl')
    call MPI_Group_translate_ranks(even_group, 1, (/ n - 1 /), world_group, coords)
    call check(coords(1) == 2 * (n - 1), 'translate_ranks')
    call MPI_Comm_create(MPI_COMM_WORLD, even_group, fromgroup)
    call check((fromgroup == MPI_COMM_NULL) .eqv. (mod(rank, 2) == 1), 'comm_create')
    if (fromgroup /= MPI_COMM_NULL) then
        call MPI_Comm_group(fromgroup, g2)
        call MPI_Group_compare(g2, even_group, res)
        call check(res == MPI_IDENT, 'group_compare')
        call MPI_Group_free(g2)
        call MPI_Comm_free(fromgroup)
    end if
    call MPI_Group_free(even_group)
    call MPI_Group_free(world_group)
    call check(world_group == MPI_GROUP_NULL, 'group_free')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag)
    call check(flag .and. aval >= 32767, 'MPI_TAG_UB attribute')
    call MPI_Comm_free(half)
    call MPI_Comm_free(dup)

    ! Strings with in/out lengths (Fortran's count no NUL).
    call MPI_Info_create(info)
    call MPI_Info_set(info, 'planet', 'saturn')
    resl = 0
    call MPI_Info_get_string(info, 'planet', resl, name, flag)
    call check(flag .and. resl == 6, 'info_get_string length')
    resl = 3
    name = 'x'
    call MPI_Info_get_string(info, 'planet', resl, name, flag)
    call check(flag .and. resl == 6 .and. name == 'sat', 'info_get_string truncated')
    resl = len(name)
    call MPI_Info_get_string(info, 'planet', resl, name, flag)
    call check(flag .and. name == 'saturn', 'info_get_string')
    call MPI_Info_get_string(info, 'moon', resl, name, flag)
    call check(.not. flag .and. name == 'saturn', 'info_get_string of a missing key')
    ! a missing key leaves the value as it was
    name = 'untouched'
    call MPI_Info_get(info, 'moon', len(name), name, flag)
    call check(.not. flag .and. name == 'untouched', 'info_get of a missing key')
    call MPI_Info_get(info, 'planet', len(name), name, flag)
    call check(flag .and. name == 'saturn', 'info_get')
    call MPI_Info_free(info)
    call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session)
    call MPI_Session_get_num_psets(session, MPI_INFO_NULL, n)
    resl = len(name)
    call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, resl, name)
    call check(n >= 2 .and. name(1:6) == 'mpi://' .and. resl == len_trim(name), &
               'session_get_nth_pset')
    call MPI_Session_finalize(session)

    ! Cartesian topology with LOGICAL periods.
    dims = 0
    call MPI_Dims_create(nprocs, 2, dims)
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, (/ .true., .false. /), .false., cart)
    call MPI_Cart_get(cart, 2, dims, periods, coords)
    call check(periods(1) .and. .not. periods(2) .and. dims(1) * dims(2) == nprocs, 'cart_get')
    call MPI_Cart_rank(cart, coords, j)
    call check(j == rank, 'cart_rank')
    call MPI_Comm_free(cart)

    ! Status conversions: the f08 status, the mpif.h array and C's struct agree.
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, rank, 77, i, 1, MPI_INTEGER, rank, 77, &
                      MPI_COMM_WORLD, st)
    call MPI_Status_f082f(st, fstat)
    call check(fstat(MPI_SOURCE) == rank .and. fstat(MPI_TAG) == 77, 'status_f082f')
    call MPI_Status_f2f08(fstat, st2)
    call MPI_Get_count(st2, MPI_INTEGER, n)
    call check(st2%MPI_SOURCE == rank .and. st2%MPI_TAG == 77 .and. n == 1, 'status_f2f08')
    ierr = c_status_f082c(st, cstat)
    call check(ierr == MPI_SUCCESS .and. cstat(3) == rank .and. cstat(4) == 77 .and. &
               cstat(5) == st%MPI_ERROR, 'MPI_Status_f082c')
    cstat(3:5) = (/ 7, 8, 9 /)
    ierr = c_status_c2f08(cstat, st2)
    call MPI_Get_count(st2, MPI_INTEGER, n)
    call check(ierr == MPI_SUCCESS .and. st2%MPI_SOURCE == 7 .and. st2%MPI_TAG == 8 .and. &
               st2%MPI_ERROR == 9 .and. n == 1, 'MPI_Status_c2f08')

    call MPI_Sizeof(m, csize)
    call check(csize == 8, 'MPI_Sizeof')
    t0 = MPI_Wtime()
    t1 = MPI_Wtime()
    call check(t1 >= t0 .and. MPI_Wtick() > 0d0 .and. MPI_Wtick() < 1d0, 'MPI_Wtime')
    ! The profiling interface: PMPI_ names of the same routines.
    call PMPI_Comm_size(MPI_COMM_WORLD, n)
    call check(n == nprocs .and. PMPI_Wtime() >= t1 .and. &
               PMPI_Aint_add(8_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND) == 16, 'PMPI_ names')

    if (rank == 0) write (*, '(A,A,A,I0,A)') 'PASS ', prog, ' np=', nprocs, ':'
    call MPI_Finalize()

contains

    include 'f08_check.inc'
end program f08_dtype_comm
