/* What the rest of the MPI layer calls of the tool interface. */
#ifndef PX_MPI_TOOL_H
#define PX_MPI_TOOL_H

/* In MPI_Finalize, before the layers below close: the performance
 * variables keep the values they reached, which reads after MPI_Finalize
 * return. */
void px_mpi_tool_finalize(void);

#endif
