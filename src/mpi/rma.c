/* One-sided communication is not implemented yet. Window creation fails
 * through the communicator's error handler with MPI_ERR_UNSUPPORTED_OPERATION
 * and a message saying so; programs that only link these symbols (many
 * benchmark suites do) build and run their other parts. */
#include "mpi_impl.h"

#define PX_RMA_MSG "one-sided communication (MPI_Win) is not supported by this version of Plexus"

PX_PMPI(MPI_Win_create)
(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    PX_CS_ENTER();
    (void)base, (void)size, (void)disp_unit, (void)info;
    PX_GET_COMM(c, comm, "MPI_Win_create");
    if (win)
        *win = MPI_WIN_NULL;
    return px_mpi_error(c, MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_create", PX_RMA_MSG);
}
PX_WEAK(MPI_Win_create)

PX_PMPI(MPI_Win_allocate)
(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    PX_CS_ENTER();
    (void)size, (void)disp_unit, (void)info, (void)baseptr;
    PX_GET_COMM(c, comm, "MPI_Win_allocate");
    if (win)
        *win = MPI_WIN_NULL;
    return px_mpi_error(c, MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_allocate", PX_RMA_MSG);
}
PX_WEAK(MPI_Win_allocate)

PX_PMPI(MPI_Win_create_dynamic)(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    PX_CS_ENTER();
    (void)info;
    PX_GET_COMM(c, comm, "MPI_Win_create_dynamic");
    if (win)
        *win = MPI_WIN_NULL;
    return px_mpi_error(c, MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_create_dynamic", PX_RMA_MSG);
}
PX_WEAK(MPI_Win_create_dynamic)

/* No window can exist, so every window argument is invalid. */
PX_PMPI(MPI_Win_attach)(MPI_Win win, void *base, MPI_Aint size)
{
    PX_CS_ENTER();
    (void)win, (void)base, (void)size;
    return px_mpi_error(NULL, MPI_ERR_WIN, "MPI_Win_attach", "invalid window (" PX_RMA_MSG ")");
}
PX_WEAK(MPI_Win_attach)

PX_PMPI(MPI_Win_detach)(MPI_Win win, const void *base)
{
    PX_CS_ENTER();
    (void)win, (void)base;
    return px_mpi_error(NULL, MPI_ERR_WIN, "MPI_Win_detach", "invalid window (" PX_RMA_MSG ")");
}
PX_WEAK(MPI_Win_detach)

PX_PMPI(MPI_Win_free)(MPI_Win *win)
{
    PX_CS_ENTER();
    if (win && *win == MPI_WIN_NULL)
        return px_mpi_error(NULL, MPI_ERR_WIN, "MPI_Win_free", "MPI_WIN_NULL");
    return px_mpi_error(NULL, MPI_ERR_WIN, "MPI_Win_free", "invalid window (" PX_RMA_MSG ")");
}
PX_WEAK(MPI_Win_free)

/* Window attributes: the keyvals are in attr.c; no window exists to carry
 * one. */
PX_PMPI(MPI_Win_set_attr)(MPI_Win win, int keyval, void *attribute_val)
{
    PX_CS_ENTER();
    (void)win, (void)keyval, (void)attribute_val;
    return px_mpi_error(NULL, MPI_ERR_WIN, "MPI_Win_set_attr", "invalid window (" PX_RMA_MSG ")");
}
PX_WEAK(MPI_Win_set_attr)

PX_PMPI(MPI_Win_get_attr)(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    PX_CS_ENTER();
    (void)win, (void)keyval, (void)attribute_val, (void)flag;
    return px_mpi_error(NULL, MPI_ERR_WIN, "MPI_Win_get_attr", "invalid window (" PX_RMA_MSG ")");
}
PX_WEAK(MPI_Win_get_attr)

PX_PMPI(MPI_Win_delete_attr)(MPI_Win win, int keyval)
{
    PX_CS_ENTER();
    (void)win, (void)keyval;
    return px_mpi_error(NULL, MPI_ERR_WIN, "MPI_Win_delete_attr",
                        "invalid window (" PX_RMA_MSG ")");
}
PX_WEAK(MPI_Win_delete_attr)
