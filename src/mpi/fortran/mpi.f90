! Plexus MPI: module mpi. Same constants, common blocks and function
! declarations as mpif.h; routines are called through implicit interfaces,
! as with mpif.h, so any buffer type can be passed.
module mpi
    implicit none
    include 'mpif.h'
end module mpi
