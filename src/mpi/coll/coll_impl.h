/* Helpers shared by the collective algorithms: byte transfers on the
 * communicator's collective context. */
#ifndef PX_MPI_COLL_IMPL_H
#define PX_MPI_COLL_IMPL_H

#include "../mpi_impl.h"

enum {
    PX_COLL_TAG_BARRIER = 1,
    PX_COLL_TAG_BCAST,
    PX_COLL_TAG_REDUCE,
    PX_COLL_TAG_ALLREDUCE,
    PX_COLL_TAG_ALLGATHER,
};

int px_coll_send(const void *buf, size_t bytes, int dest, int tag, px_mpi_comm_t *c);
int px_coll_recv(void *buf, size_t bytes, int src, int tag, px_mpi_comm_t *c);
int px_coll_sendrecv(const void *sbuf, size_t sbytes, int dest, void *rbuf, size_t rbytes, int src,
                     int tag, px_mpi_comm_t *c);

int px_coll_barrier_dissemination(px_mpi_comm_t *c);
int px_coll_bcast_binomial(void *buf, size_t bytes, int root, px_mpi_comm_t *c);
int px_coll_reduce_binomial(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                            int root, px_mpi_comm_t *c);
int px_coll_reduce_ordered(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                           int root, px_mpi_comm_t *c);
int px_coll_allreduce_recursive_doubling(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                                         MPI_Op op, px_mpi_comm_t *c);
int px_coll_allgather_ring(const void *sbuf, void *rbuf, size_t bytes, px_mpi_comm_t *c);

#endif
