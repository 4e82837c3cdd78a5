! Plexus MPI: module mpi. Same constants, common blocks and function
! declarations as mpif.h; routines are called through implicit interfaces,
! as with mpif.h, so any buffer type can be passed. TYPE(MPI_Status) and the
! conversions MPI_Status_f082f and MPI_Status_f2f08 (MPI-4.0 19.3.5) and
! MPI_SIZEOF are those of module mpi_f08, from module mpi_f08_types.
module mpi
    use mpi_f08_types, only : MPI_Status, MPI_Status_f082f, MPI_Status_f2f08, &
                              PMPI_Status_f082f, PMPI_Status_f2f08, MPI_Sizeof, PMPI_Sizeof
    implicit none
    include 'mpif.h'
end module mpi
