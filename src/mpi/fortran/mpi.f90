! Plexus MPI: module mpi. Same constants, common blocks and function
! declarations as mpif.h; routines are called through implicit interfaces,
! as with mpif.h, so any buffer type can be passed. TYPE(MPI_Status) and the
! conversions MPI_Status_f082f and MPI_Status_f2f08 are those of module
! mpi_f08 (MPI-4.0 19.3.5), from module mpi_f08_types.
module mpi
    use mpi_f08_types, only : MPI_Status, MPI_Status_f082f, MPI_Status_f2f08, &
                              PMPI_Status_f082f, PMPI_Status_f2f08
    implicit none
    include 'mpif.h'

    interface
        ! MPI_SIZEOF(x, size, ierror): the bytes of one element of x, any
        ! type (MPI-4.0 19.1.9), the very procedure of module mpi_f08
        subroutine MPI_Sizeof(x, size, ierror) bind(C, name="MPI_Sizeof_f08")
            type(*), dimension(..) :: x
            integer, intent(out) :: size
            integer, optional, intent(out) :: ierror
        end subroutine MPI_Sizeof
        subroutine PMPI_Sizeof(x, size, ierror) bind(C, name="PMPI_Sizeof_f08")
            type(*), dimension(..) :: x
            integer, intent(out) :: size
            integer, optional, intent(out) :: ierror
        end subroutine PMPI_Sizeof
    end interface
end module mpi
