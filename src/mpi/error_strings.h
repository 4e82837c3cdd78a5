/* Text of the predefined MPI error classes. */
#ifndef PX_MPI_ERROR_STRINGS_H
#define PX_MPI_ERROR_STRINGS_H

/* Human-readable description of a predefined error class (MPI_SUCCESS ..
 * MPI_T_ERR_NOT_SUPPORTED); "Unknown error class" for any other value.
 * The string is static and never longer than MPI_MAX_ERROR_STRING - 1. */
const char *px_mpi_error_string(int errorcode);

#endif
