/* Internal collective entry points used by the rest of the MPI layer
 * (communicator set-up, MPI_Init/Finalize) and the blocking byte helpers. */
#include "coll_impl.h"

#include <stdlib.h>

int px_coll_send(const void *buf, size_t bytes, int dest, int tag, px_mpi_comm_t *c)
{
    px_mpi_req_t *r;
    int rc = px_mpi_isend_internal(&r, buf, (int)bytes, MPI_BYTE, dest, tag, c, c->ctx + 1,
                                   PX_PROTO_MODE_STD);
    if (rc != MPI_SUCCESS)
        return rc;
    px_mpi_req_wait(r);
    rc = px_mpi_req_complete(r, MPI_STATUS_IGNORE);
    px_mpi_req_free(r);
    return rc;
}

int px_coll_recv(void *buf, size_t bytes, int src, int tag, px_mpi_comm_t *c)
{
    px_mpi_req_t *r;
    int rc = px_mpi_irecv_internal(&r, buf, (int)bytes, MPI_BYTE, src, tag, c, c->ctx + 1);
    if (rc != MPI_SUCCESS)
        return rc;
    px_mpi_req_wait(r);
    rc = px_mpi_req_complete(r, MPI_STATUS_IGNORE);
    px_mpi_req_free(r);
    return rc;
}

int px_coll_sendrecv(const void *sbuf, size_t sbytes, int dest, void *rbuf, size_t rbytes, int src,
                     int tag, px_mpi_comm_t *c)
{
    px_mpi_req_t *rr, *sr;
    int rc = px_mpi_irecv_internal(&rr, rbuf, (int)rbytes, MPI_BYTE, src, tag, c, c->ctx + 1);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = px_mpi_isend_internal(&sr, sbuf, (int)sbytes, MPI_BYTE, dest, tag, c, c->ctx + 1,
                               PX_PROTO_MODE_STD);
    if (rc != MPI_SUCCESS) {
        px_mpi_req_wait(rr);
        px_mpi_req_free(rr);
        return rc;
    }
    px_mpi_req_wait(sr);
    px_mpi_req_wait(rr);
    int a = px_mpi_req_complete(sr, MPI_STATUS_IGNORE);
    int b = px_mpi_req_complete(rr, MPI_STATUS_IGNORE);
    px_mpi_req_free(sr);
    px_mpi_req_free(rr);
    return a != MPI_SUCCESS ? a : b;
}

static int px_coll_run(px_coll_id_t id, const px_coll_args_t *a, px_mpi_comm_t *c)
{
    px_coll_sched_t *s;
    int rc = px_coll_build(id, a, c, &s);
    return rc == MPI_SUCCESS ? px_coll_sched_run(s) : rc;
}

int px_mpi_coll_barrier(px_mpi_comm_t *c)
{
    px_coll_args_t a = {0};
    return px_coll_run(PX_COLL_BARRIER, &a, c);
}

/* A collective of `bytes` from each member (gather, allgather); top: as
 * the program's would go (px_coll_run_top). */
static int px_coll_run_bytes(px_coll_id_t id, const void *sbuf, void *rbuf, size_t bytes, int root,
                             px_mpi_comm_t *c, int top)
{
    px_coll_args_t a = {.sbuf = sbuf,
                        .rbuf = rbuf,
                        .scount = (int)bytes,
                        .rcount = (int)bytes,
                        .stype = MPI_BYTE,
                        .rtype = MPI_BYTE,
                        .root = root,
                        .bytes = bytes};
    return top ? px_coll_run_top(id, &a, c) : px_coll_run(id, &a, c);
}

int px_mpi_coll_allgather_bytes(const void *sbuf, void *rbuf, size_t bytes, px_mpi_comm_t *c)
{
    return px_coll_run_bytes(PX_COLL_ALLGATHER, sbuf, rbuf, bytes, 0, c, 0);
}

int px_mpi_coll_allgather_top(const void *sbuf, void *rbuf, size_t bytes, px_mpi_comm_t *c)
{
    return px_coll_run_bytes(PX_COLL_ALLGATHER, sbuf, rbuf, bytes, 0, c, 1);
}

int px_mpi_coll_bcast_top(void *buf, size_t bytes, int root, px_mpi_comm_t *c)
{
    px_coll_args_t a = {
        .rbuf = buf, .count = (int)bytes, .dt = MPI_BYTE, .root = root, .bytes = bytes};
    return px_coll_run_top(PX_COLL_BCAST, &a, c);
}

int px_mpi_coll_gather_bytes(const void *sbuf, void *rbuf, size_t bytes, int root, px_mpi_comm_t *c)
{
    return px_coll_run_bytes(PX_COLL_GATHER, sbuf, rbuf, bytes, root, c, 0);
}

int px_mpi_coll_gatherv_bytes(const void *sbuf, size_t bytes, void *rbuf, const MPI_Aint *rcounts,
                              const MPI_Aint *rdispls, int root, px_mpi_comm_t *c)
{
    px_coll_args_t a = {.sbuf = sbuf,
                        .rbuf = rbuf,
                        .scount = (int)bytes,
                        .stype = MPI_BYTE,
                        .rtype = MPI_BYTE,
                        .rcounts = rcounts,
                        .rdispls = rdispls,
                        .root = root};
    return px_coll_run(PX_COLL_GATHERV, &a, c);
}

/* Broadcast of any datatype: the algorithms move contiguous bytes, so
 * non-contiguous data is packed at the root and unpacked elsewhere. */
int px_coll_bcast_sched(px_coll_sched_t *s, void *buf, int count, MPI_Datatype dt, int root,
                        px_mpi_comm_t *c)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    px_coll_args_t a = {.count = count, .dt = dt, .root = root};
    a.bytes = (size_t)count * (size_t)d->size;
    if (d->contig || !a.bytes) {
        a.rbuf = (char *)buf + d->true_lb;
        return px_coll_build_into(s, PX_COLL_BCAST, &a, c);
    }
    a.rbuf = px_coll_sched_alloc(s, a.bytes);
    if (!a.rbuf)
        return MPI_ERR_NO_MEM;
    if (c->rank == root)
        px_coll_sched_pack(s, buf, count, dt, a.rbuf);
    int rc = px_coll_build_into(s, PX_COLL_BCAST, &a, c);
    px_coll_sched_round(s);
    if (c->rank != root)
        px_coll_sched_unpack(s, a.rbuf, count, dt, buf);
    return rc;
}

int px_mpi_coll_bcast(void *buf, int count, MPI_Datatype dt, int root, px_mpi_comm_t *c)
{
    px_coll_sched_t *s = px_coll_sched_new(c);
    if (!s)
        return MPI_ERR_NO_MEM;
    return px_coll_sched_run_built(s, px_coll_bcast_sched(s, buf, count, dt, root, c));
}

int px_mpi_coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       int root, px_mpi_comm_t *c)
{
    px_coll_args_t a = {.sbuf = sbuf == MPI_IN_PLACE ? rbuf : sbuf,
                        .rbuf = rbuf,
                        .count = count,
                        .dt = dt,
                        .op = op,
                        .root = root,
                        .commute = 1};
    if (px_mpi_op_check(op, dt, &a.commute) != MPI_SUCCESS)
        return MPI_ERR_OP;
    a.bytes = (size_t)count * (size_t)px_mpi_dt_get(dt)->size;
    return px_coll_run(PX_COLL_REDUCE, &a, c);
}

int px_mpi_coll_tag_take(px_mpi_comm_t *c)
{
    int tag = c->coll_tag & 0x3fffffff;
    c->coll_tag = (c->coll_tag + 1) & 0x3fffffff;
    return tag;
}

void *px_mpi_coll_iallreduce_tag(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                                 MPI_Op op, px_mpi_comm_t *c, int tag)
{
    px_coll_args_t a = {
        .sbuf = sbuf, .rbuf = rbuf, .count = count, .dt = dt, .op = op, .commute = 1};
    if (px_mpi_op_check(op, dt, &a.commute) != MPI_SUCCESS)
        return NULL;
    a.bytes = (size_t)count * (size_t)px_mpi_dt_get(dt)->size;
    px_coll_sched_t *s = px_coll_sched_new_tag(c, tag);
    if (!s)
        return NULL;
    if (px_coll_build_into(s, PX_COLL_ALLREDUCE, &a, c) != MPI_SUCCESS || s->err) {
        px_coll_sched_free(s);
        return NULL;
    }
    px_coll_sched_progress(s); /* posts the first round */
    return s;
}

void *px_mpi_coll_ibcast_tag(void *buf, int count, MPI_Datatype dt, int root, px_mpi_comm_t *c,
                             int tag)
{
    px_coll_sched_t *s = px_coll_sched_new_tag(c, tag);
    if (!s)
        return NULL;
    if (px_coll_bcast_sched(s, buf, count, dt, root, c) != MPI_SUCCESS || s->err) {
        px_coll_sched_free(s);
        return NULL;
    }
    px_coll_sched_progress(s); /* posts the first round */
    return s;
}

int px_mpi_coll_sched_test(void *sched, int *err)
{
    px_coll_sched_t *s = sched;
    if (!px_coll_sched_progress(s))
        return 0;
    *err = s->err;
    px_coll_sched_free(s);
    return 1;
}

int px_mpi_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                          px_mpi_comm_t *c)
{
    px_coll_args_t a = {.sbuf = sbuf == MPI_IN_PLACE ? rbuf : sbuf,
                        .rbuf = rbuf,
                        .count = count,
                        .dt = dt,
                        .op = op,
                        .commute = 1};
    if (px_mpi_op_check(op, dt, &a.commute) != MPI_SUCCESS)
        return MPI_ERR_OP;
    a.bytes = (size_t)count * (size_t)px_mpi_dt_get(dt)->size;
    return px_coll_run(PX_COLL_ALLREDUCE, &a, c);
}
