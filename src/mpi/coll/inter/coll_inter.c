/* Collectives on inter-communicators. Rooted ones run directly between the
 * root and the other group (each member of the other group addresses the
 * root by its remote rank) or through the other group's leader (local rank
 * 0) with a local phase over c->local_comm; the all-to-all patterns post one
 * transfer per remote peer; reductions reduce inside each group to its
 * leader, swap the partial results between the leaders and spread them in
 * the group. */
#include "coll_inter.h"

#include <stdlib.h>

/* Intra-communicator collectives use tags below 0x40000000 and the leaders'
 * agreements of intercomm.c use 0x60000000 and up, both on the contexts
 * these schedules share. */
#define PX_INTER_TAG_BASE 0x40000000
#define PX_INTER_TAG_MASK 0x1fffffff

px_coll_sched_t *px_coll_inter_sched_new(px_mpi_comm_t *c)
{
    px_coll_sched_t *s = px_coll_sched_new(c);
    if (s)
        s->tag = PX_INTER_TAG_BASE | (s->tag & PX_INTER_TAG_MASK);
    return s;
}

static char *px_inter_at(const void *buf, MPI_Aint items, MPI_Datatype dt)
{
    return (char *)buf + items * px_mpi_dt_get(dt)->extent;
}

/* Reduces count items of sbuf inside the local group into `acc` at the
 * leader (local rank 0). */
static int px_inter_local_reduce(px_coll_sched_t *s, const px_coll_args_t *a, const void *sbuf,
                                 void *acc, MPI_Aint count, px_mpi_comm_t *c)
{
    px_coll_args_t r = {.sbuf = sbuf,
                        .rbuf = acc,
                        .count = (int)count,
                        .dt = a->dt,
                        .op = a->op,
                        .commute = a->commute,
                        .root = 0};
    r.bytes = (size_t)count * (size_t)px_mpi_dt_get(a->dt)->size;
    int rc = px_coll_build_into(s, PX_COLL_REDUCE, &r, c->local_comm);
    px_coll_sched_round(s);
    return rc;
}

PX_COLL_BUILDER(px_coll_inter_barrier)
{
    (void)a;
    /* everyone here has arrived, the leaders learn that the other group has
     * too, and the second local barrier releases the members */
    int rc = px_coll_build_into(s, PX_COLL_BARRIER, a, c->local_comm);
    px_coll_sched_round(s);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->rank == 0) {
        px_coll_sched_send(s, c, NULL, 0, MPI_BYTE, 0);
        px_coll_sched_recv(s, c, NULL, 0, MPI_BYTE, 0);
        px_coll_sched_round(s);
    }
    rc = px_coll_build_into(s, PX_COLL_BARRIER, a, c->local_comm);
    px_coll_sched_round(s);
    return rc;
}

PX_COLL_BUILDER(px_coll_inter_bcast)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT) {
        px_coll_sched_send(s, c, a->rbuf, a->count, a->dt, 0);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    if (c->rank == 0) {
        px_coll_sched_recv(s, c, a->rbuf, a->count, a->dt, a->root);
        px_coll_sched_round(s);
    }
    int rc = px_coll_bcast_sched(s, a->rbuf, a->count, a->dt, 0, c->local_comm);
    px_coll_sched_round(s);
    return rc;
}

PX_COLL_BUILDER(px_coll_inter_reduce)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT) {
        px_coll_recv_items(s, c, a->rbuf, 0, a->count, a->dt, 0);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    void *acc = NULL;
    if (c->rank == 0 && !(acc = px_coll_tmp_items(s, a->dt, a->count)))
        return MPI_ERR_NO_MEM;
    int rc = px_inter_local_reduce(s, a, a->sbuf, acc, a->count, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->rank == 0) {
        px_coll_send_items(s, c, acc, 0, a->count, a->dt, a->root);
        px_coll_sched_round(s);
    }
    return MPI_SUCCESS;
}

PX_COLL_BUILDER(px_coll_inter_allreduce)
{
    void *acc = NULL;
    if (c->rank == 0 && !(acc = px_coll_tmp_items(s, a->dt, a->count)))
        return MPI_ERR_NO_MEM;
    int rc = px_inter_local_reduce(s, a, a->sbuf, acc, a->count, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->rank == 0) {
        /* the other group's result lands in the leader's receive buffer */
        px_coll_recv_items(s, c, a->rbuf, 0, a->count, a->dt, 0);
        px_coll_send_items(s, c, acc, 0, a->count, a->dt, 0);
        px_coll_sched_round(s);
    }
    rc = px_coll_bcast_sched(s, a->rbuf, a->count, a->dt, 0, c->local_comm);
    px_coll_sched_round(s);
    return rc;
}

/* Gather(v) and Scatter(v): the root receives from (gather) or sends to
 * (scatter) every member of the other group, which sends or receives one
 * block. */
static int px_inter_rooted(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c, int v,
                           int gather)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT) {
        for (int i = 0; i < c->remote->size; i++) {
            if (gather) {
                MPI_Aint at = v ? a->rdispls[i] : (MPI_Aint)i * a->rcount;
                px_coll_sched_recv(s, c, px_inter_at(a->rbuf, at, a->rtype),
                                   v ? a->rcounts[i] : a->rcount, a->rtype, i);
            } else {
                MPI_Aint at = v ? a->sdispls[i] : (MPI_Aint)i * a->scount;
                px_coll_sched_send(s, c, px_inter_at(a->sbuf, at, a->stype),
                                   v ? a->scounts[i] : a->scount, a->stype, i);
            }
        }
    } else if (gather) {
        px_coll_sched_send(s, c, a->sbuf, a->scount, a->stype, a->root);
    } else {
        px_coll_sched_recv(s, c, a->rbuf, a->rcount, a->rtype, a->root);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}

PX_COLL_BUILDER(px_coll_inter_gather) { return px_inter_rooted(s, a, c, 0, 1); }
PX_COLL_BUILDER(px_coll_inter_gatherv) { return px_inter_rooted(s, a, c, 1, 1); }
PX_COLL_BUILDER(px_coll_inter_scatter) { return px_inter_rooted(s, a, c, 0, 0); }
PX_COLL_BUILDER(px_coll_inter_scatterv) { return px_inter_rooted(s, a, c, 1, 0); }

/* Allgather(v): my contribution goes to every remote member, whose
 * contributions fill my receive buffer in remote rank order. */
static int px_inter_allgather_common(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c,
                                     int v)
{
    for (int i = 0; i < c->remote->size; i++) {
        MPI_Aint at = v ? a->rdispls[i] : (MPI_Aint)i * a->rcount;
        px_coll_sched_recv(s, c, px_inter_at(a->rbuf, at, a->rtype), v ? a->rcounts[i] : a->rcount,
                           a->rtype, i);
        px_coll_sched_send(s, c, a->sbuf, a->scount, a->stype, i);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}

PX_COLL_BUILDER(px_coll_inter_allgather) { return px_inter_allgather_common(s, a, c, 0); }
PX_COLL_BUILDER(px_coll_inter_allgatherv) { return px_inter_allgather_common(s, a, c, 1); }

PX_COLL_BUILDER(px_coll_inter_alltoall)
{
    for (int i = 0; i < c->remote->size; i++) {
        px_coll_sched_recv(s, c, px_inter_at(a->rbuf, (MPI_Aint)i * a->rcount, a->rtype), a->rcount,
                           a->rtype, i);
        px_coll_sched_send(s, c, px_inter_at(a->sbuf, (MPI_Aint)i * a->scount, a->stype), a->scount,
                           a->stype, i);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}

PX_COLL_BUILDER(px_coll_inter_alltoallv)
{
    for (int i = 0; i < c->remote->size; i++) {
        px_coll_sched_recv(s, c, px_inter_at(a->rbuf, a->rdispls[i], a->rtype), a->rcounts[i],
                           a->rtype, i);
        px_coll_sched_send(s, c, px_inter_at(a->sbuf, a->sdispls[i], a->stype), a->scounts[i],
                           a->stype, i);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}

PX_COLL_BUILDER(px_coll_inter_alltoallw)
{
    /* Alltoallw displacements are in bytes */
    for (int i = 0; i < c->remote->size; i++) {
        px_coll_sched_recv(s, c, (char *)a->rbuf + a->rdispls[i], a->rcounts[i], a->rtypes[i], i);
        px_coll_sched_send(s, c, (const char *)a->sbuf + a->sdispls[i], a->scounts[i], a->stypes[i],
                           i);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}

/* Reduce_scatter(_block): the group's vectors (sum of the local rcounts
 * items, the same total in both groups) are reduced at the leader, the
 * leaders swap them, and each leader scatters the other group's result
 * over its group by rcounts. */
PX_COLL_BUILDER(px_coll_inter_reduce_scatter)
{
    px_mpi_comm_t *lc = c->local_comm;
    int n = lc->size;
    MPI_Aint *cnts = px_coll_sched_alloc(s, sizeof(MPI_Aint) * (size_t)n);
    MPI_Aint *displs = px_coll_sched_alloc(s, sizeof(MPI_Aint) * (size_t)n);
    if (!cnts || !displs)
        return MPI_ERR_NO_MEM;
    MPI_Aint total = 0;
    for (int i = 0; i < n; i++) {
        cnts[i] = a->rcounts[i];
        displs[i] = total;
        total += a->rcounts[i];
    }
    void *acc = NULL, *theirs = NULL;
    if (c->rank == 0) {
        acc = px_coll_tmp_items(s, a->dt, total);
        theirs = px_coll_tmp_items(s, a->dt, total);
        if (!acc || !theirs)
            return MPI_ERR_NO_MEM;
    }
    int rc = px_inter_local_reduce(s, a, a->sbuf, acc, total, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->rank == 0) {
        px_coll_recv_items(s, c, theirs, 0, total, a->dt, 0);
        px_coll_send_items(s, c, acc, 0, total, a->dt, 0);
        px_coll_sched_round(s);
    }
    px_coll_args_t sv = {.sbuf = theirs,
                         .scounts = cnts,
                         .sdispls = displs,
                         .stype = a->dt,
                         .rbuf = a->rbuf,
                         .rcount = (int)cnts[lc->rank],
                         .rtype = a->dt,
                         .root = 0};
    rc = px_coll_build_into(s, PX_COLL_SCATTERV, &sv, lc);
    px_coll_sched_round(s);
    return rc;
}
