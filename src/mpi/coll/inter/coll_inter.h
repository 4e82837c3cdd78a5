/* Collectives on inter-communicators (MPI-3.1 §5.2.2): schedule builders
 * for the entry points in coll_mpi.c, which check the arguments first.
 *
 * Transfers between the groups use the inter-communicator's collective
 * context (peers are remote ranks); phases inside one group reuse the
 * intra-communicator algorithms over c->local_comm, all in one schedule, so
 * the nonblocking versions come from the same builders. */
#ifndef PX_MPI_COLL_INTER_H
#define PX_MPI_COLL_INTER_H

#include "../coll_impl.h"

/* A schedule for a collective on inter-communicator c. Its tags are kept
 * apart from those of the agreements in intercomm.c and of the local
 * communicator's own collectives, which share the contexts it uses. */
px_coll_sched_t *px_coll_inter_sched_new(px_mpi_comm_t *c);

/* Builders: `a` as for the intra-communicator algorithms, except that
 * counts and displacement arrays indexed by peer have the remote size, the
 * root is MPI_ROOT, MPI_PROC_NULL or a remote rank, and MPI_IN_PLACE never
 * occurs. Reduce_scatter takes rcounts over the local group. */
PX_COLL_BUILDER(px_coll_inter_barrier);
PX_COLL_BUILDER(px_coll_inter_bcast);
PX_COLL_BUILDER(px_coll_inter_reduce);
PX_COLL_BUILDER(px_coll_inter_allreduce);
PX_COLL_BUILDER(px_coll_inter_gather);
PX_COLL_BUILDER(px_coll_inter_gatherv);
PX_COLL_BUILDER(px_coll_inter_scatter);
PX_COLL_BUILDER(px_coll_inter_scatterv);
PX_COLL_BUILDER(px_coll_inter_allgather);
PX_COLL_BUILDER(px_coll_inter_allgatherv);
PX_COLL_BUILDER(px_coll_inter_alltoall);
PX_COLL_BUILDER(px_coll_inter_alltoallv);
PX_COLL_BUILDER(px_coll_inter_alltoallw);
PX_COLL_BUILDER(px_coll_inter_reduce_scatter);

#endif
