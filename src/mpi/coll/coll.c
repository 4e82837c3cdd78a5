/* Collective entry points: argument checks, MPI_IN_PLACE, datatype
 * staging, and the choice of algorithm. */
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
    if (rc != MPI_SUCCESS)
        return rc;
    px_mpi_req_wait(sr);
    px_mpi_req_wait(rr);
    int a = px_mpi_req_complete(sr, MPI_STATUS_IGNORE);
    int b = px_mpi_req_complete(rr, MPI_STATUS_IGNORE);
    px_mpi_req_free(sr);
    px_mpi_req_free(rr);
    return a != MPI_SUCCESS ? a : b;
}

int px_mpi_coll_barrier(px_mpi_comm_t *c) { return px_coll_barrier_dissemination(c); }

int px_mpi_coll_allgather_bytes(const void *sbuf, void *rbuf, size_t bytes, px_mpi_comm_t *c)
{
    return px_coll_allgather_ring(sbuf, rbuf, bytes, c);
}

int px_mpi_coll_bcast(void *buf, int count, MPI_Datatype dt, int root, px_mpi_comm_t *c)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    size_t bytes = (size_t)count * (size_t)d->size;
    if (d->contig || !bytes)
        return px_coll_bcast_binomial((char *)buf + d->true_lb, bytes, root, c);
    char *tmp = malloc(bytes);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    if (c->rank == root)
        d->pack(d, count, buf, tmp);
    int rc = px_coll_bcast_binomial(tmp, bytes, root, c);
    if (rc == MPI_SUCCESS && c->rank != root)
        d->unpack(d, count, tmp, buf);
    free(tmp);
    return rc;
}

int px_mpi_coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       int root, px_mpi_comm_t *c)
{
    int commute = 1;
    px_mpi_op_check(op, dt, &commute);
    if (commute)
        return px_coll_reduce_binomial(sbuf, rbuf, count, dt, op, root, c);
    return px_coll_reduce_ordered(sbuf, rbuf, count, dt, op, root, c);
}

int px_mpi_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                          px_mpi_comm_t *c)
{
    int commute = 1;
    px_mpi_op_check(op, dt, &commute);
    if (commute)
        return px_coll_allreduce_recursive_doubling(sbuf, rbuf, count, dt, op, c);
    int rc = px_coll_reduce_ordered(sbuf, rbuf, count, dt, op, 0, c);
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_bcast(rbuf, count, dt, 0, c);
    return rc;
}

/* ---------- MPI entry points ---------- */

static int px_coll_check_buf(px_mpi_comm_t *c, int count, MPI_Datatype dt, const char *fn)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (count < 0)
        return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %d", count);
    if (!d)
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "invalid datatype");
    if (!d->committed)
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "datatype not committed");
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Barrier)(MPI_Comm comm)
{
    PX_CHECK_INIT("MPI_Barrier");
    PX_GET_COMM(c, comm, "MPI_Barrier");
    int rc = px_mpi_coll_barrier(c);
    return rc == MPI_SUCCESS ? rc : px_mpi_error(c, rc, "MPI_Barrier", "communication failed");
}
PX_WEAK(MPI_Barrier)

PX_PMPI(MPI_Bcast)(void *buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    PX_CHECK_INIT("MPI_Bcast");
    PX_GET_COMM(c, comm, "MPI_Bcast");
    int rc = px_coll_check_buf(c, count, dt, "MPI_Bcast");
    if (rc != MPI_SUCCESS)
        return rc;
    if (root < 0 || root >= c->size)
        return px_mpi_error(c, MPI_ERR_ROOT, "MPI_Bcast", "invalid root %d (size %d)", root,
                            c->size);
    rc = px_mpi_coll_bcast(buffer, count, dt, root, c);
    return rc == MPI_SUCCESS ? rc : px_mpi_error(c, rc, "MPI_Bcast", "communication failed");
}
PX_WEAK(MPI_Bcast)

PX_PMPI(MPI_Reduce)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                    int root, MPI_Comm comm)
{
    int commute;
    PX_CHECK_INIT("MPI_Reduce");
    PX_GET_COMM(c, comm, "MPI_Reduce");
    int rc = px_coll_check_buf(c, count, dt, "MPI_Reduce");
    if (rc != MPI_SUCCESS)
        return rc;
    if (root < 0 || root >= c->size)
        return px_mpi_error(c, MPI_ERR_ROOT, "MPI_Reduce", "invalid root %d (size %d)", root,
                            c->size);
    rc = px_mpi_op_check(op, dt, &commute);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Reduce", "operation not valid for the datatype");
    if (sendbuf == MPI_IN_PLACE && c->rank != root)
        return px_mpi_error(c, MPI_ERR_BUFFER, "MPI_Reduce", "MPI_IN_PLACE is only valid at the root");
    rc = px_mpi_coll_reduce(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf, count, dt, op,
                            root, c);
    return rc == MPI_SUCCESS ? rc : px_mpi_error(c, rc, "MPI_Reduce", "communication failed");
}
PX_WEAK(MPI_Reduce)

PX_PMPI(MPI_Allreduce)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm)
{
    int commute;
    PX_CHECK_INIT("MPI_Allreduce");
    PX_GET_COMM(c, comm, "MPI_Allreduce");
    int rc = px_coll_check_buf(c, count, dt, "MPI_Allreduce");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = px_mpi_op_check(op, dt, &commute);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Allreduce", "operation not valid for the datatype");
    rc = px_mpi_coll_allreduce(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf, count, dt, op,
                               c);
    return rc == MPI_SUCCESS ? rc : px_mpi_error(c, rc, "MPI_Allreduce", "communication failed");
}
PX_WEAK(MPI_Allreduce)
