/* Neighbour collectives on Cartesian, graph and distributed graph
 * communicators, blocking and nonblocking. Every variant posts all its
 * receives and sends at once on the collective context; the request's poll
 * completes when all of them have. Each message carries the tag its edge
 * was given when the topology was built, so repeated neighbours match
 * their blocks in the right order. */
#include "topo_impl.h"

#include <stdlib.h>

/* One block to move: where, how many, which type. */
typedef struct {
    const char *buf;
    int count;
    MPI_Datatype dt;
} px_nbr_blk_t;

/* Posts the transfers of one neighbour collective into a new request. */
static int px_nbr_start(px_mpi_comm_t *c, const px_mpi_topo_t *t, const px_nbr_blk_t *sb,
                        const px_nbr_blk_t *rb, px_mpi_req_t **req_p)
{
    px_mpi_req_group_t *s = calloc(1, sizeof(*s));
    px_mpi_req_t *r = px_mpi_req_new(PX_MPI_REQ_COLL);
    int rc = MPI_SUCCESS;
    /* the start of a persistent one (coll_tag_next is the tag its init
     * took, + 1) runs on tags of its own, so that the starts of several
     * match whatever their order at each member */
    int base = c->coll_tag_next ? PX_MPI_TOPO_TAG_PNBR +
                                      (int)(((unsigned)(c->coll_tag_next - 1) & 0xfffffu) << 8)
                                : PX_MPI_TOPO_TAG_NBR;
    if (!s || !r ||
        (t->indeg + t->outdeg > 0 &&
         !(s->reqs = calloc((size_t)(t->indeg + t->outdeg), sizeof(*s->reqs))))) {
        rc = MPI_ERR_NO_MEM;
        goto fail;
    }
    /* receives first, so early data finds them posted */
    for (int i = 0; i < t->indeg && rc == MPI_SUCCESS; i++) {
        if (t->in[i] == MPI_PROC_NULL)
            continue;
        rc = px_mpi_irecv_internal(&s->reqs[s->n], (void *)rb[i].buf, rb[i].count, rb[i].dt,
                                   t->in[i], base + t->in_tag[i], c, c->ctx + 1);
        if (rc == MPI_SUCCESS)
            s->n++;
    }
    for (int j = 0; j < t->outdeg && rc == MPI_SUCCESS; j++) {
        if (t->out[j] == MPI_PROC_NULL)
            continue;
        rc = px_mpi_isend_internal(&s->reqs[s->n], sb[j].buf, sb[j].count, sb[j].dt, t->out[j],
                                   base + t->out_tag[j], c, c->ctx + 1, PX_PROTO_MODE_STD);
        if (rc == MPI_SUCCESS)
            s->n++;
    }
    if (rc != MPI_SUCCESS) {
        /* what was posted must still finish before its buffers go away */
        for (int i = 0; i < s->n; i++) {
            px_mpi_req_wait(s->reqs[i]);
            px_mpi_req_complete(s->reqs[i], MPI_STATUS_IGNORE);
            px_mpi_req_free(s->reqs[i]);
        }
        goto fail;
    }
    r->comm = c;
    c->refs++;
    r->sched = s;
    r->poll = px_mpi_req_group_poll;
    *req_p = r;
    return MPI_SUCCESS;
fail:
    if (s)
        free(s->reqs);
    free(s);
    if (r)
        px_mpi_req_free(r);
    return rc;
}

/* Either completes the request (blocking call) or hands it to the user. */
static int px_nbr_finish(px_mpi_comm_t *c, px_mpi_req_t *r, MPI_Request *request, const char *fn)
{
    if (request) {
        *request = r->handle;
        return MPI_SUCCESS;
    }
    px_mpi_req_wait(r);
    int rc = px_mpi_req_complete(r, MPI_STATUS_IGNORE);
    px_mpi_req_free(r);
    return rc == MPI_SUCCESS ? rc : px_mpi_error(c, rc, fn, "communication failed");
}

/* ---------- argument checks ---------- */

static int px_nbr_check_type(px_mpi_comm_t *c, MPI_Datatype dt, const char *fn, px_mpi_dt_t **d_p)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (!d)
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "invalid datatype");
    if (!d->committed)
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "datatype not committed");
    if (d_p)
        *d_p = d;
    return MPI_SUCCESS;
}

static int px_nbr_check_count(px_mpi_comm_t *c, int count, const char *fn)
{
    return count < 0 ? px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %d", count) : MPI_SUCCESS;
}

/* Common start: communicator with a topology, no MPI_IN_PLACE. */
static px_mpi_topo_t *px_nbr_begin(MPI_Comm comm, const void *sendbuf, int nonblocking,
                                   MPI_Request *request, const char *fn, px_mpi_comm_t **c_p,
                                   int *rc)
{
    px_mpi_comm_t *c = px_mpi_comm_get(comm);
    *rc = MPI_SUCCESS;
    if (!c) {
        *rc = px_mpi_error(NULL, MPI_ERR_COMM, fn, "invalid communicator");
        return NULL;
    }
    *c_p = c;
    px_mpi_topo_t *t = px_mpi_topo_of(c, 0, fn, rc);
    if (!t)
        return NULL;
    if (sendbuf == MPI_IN_PLACE) {
        *rc = px_mpi_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed");
        return NULL;
    }
    if (nonblocking && !request) {
        *rc = px_mpi_error(c, MPI_ERR_ARG, fn, "null request");
        return NULL;
    }
    return t;
}

static int px_nbr_alloc(px_mpi_comm_t *c, const px_mpi_topo_t *t, px_nbr_blk_t **sb,
                        px_nbr_blk_t **rb, const char *fn)
{
    *sb = malloc(sizeof(px_nbr_blk_t) * (size_t)(t->outdeg + 1));
    *rb = malloc(sizeof(px_nbr_blk_t) * (size_t)(t->indeg + 1));
    if (!*sb || !*rb) {
        free(*sb);
        free(*rb);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return MPI_SUCCESS;
}

static int px_nbr_run(px_mpi_comm_t *c, const px_mpi_topo_t *t, px_nbr_blk_t *sb, px_nbr_blk_t *rb,
                      MPI_Request *request, const char *fn)
{
    px_mpi_req_t *r;
    int rc = px_nbr_start(c, t, sb, rb, &r);
    free(sb);
    free(rb);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "cannot start the transfers");
    return px_nbr_finish(c, r, request, fn);
}

/* ---------- allgather(v) ---------- */

static int px_nbr_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            int nb, MPI_Request *request, const char *fn)
{
    px_mpi_comm_t *c = NULL;
    px_mpi_dt_t *rd;
    px_nbr_blk_t *sb, *rb;
    int rc;
    PX_CHECK_INIT(fn);
    px_mpi_topo_t *t = px_nbr_begin(comm, sendbuf, nb, request, fn, &c, &rc);
    if (!t)
        return rc;
    if ((rc = px_nbr_check_count(c, sendcount, fn)) ||
        (rc = px_nbr_check_count(c, recvcount, fn)) ||
        (rc = px_nbr_check_type(c, sendtype, fn, NULL)) ||
        (rc = px_nbr_check_type(c, recvtype, fn, &rd)))
        return rc;
    if ((rc = px_nbr_alloc(c, t, &sb, &rb, fn)))
        return rc;
    for (int j = 0; j < t->outdeg; j++)
        sb[j] = (px_nbr_blk_t){sendbuf, sendcount, sendtype};
    for (int i = 0; i < t->indeg; i++)
        rb[i] = (px_nbr_blk_t){(char *)recvbuf + (MPI_Aint)i * recvcount * rd->extent, recvcount,
                               recvtype};
    return px_nbr_run(c, t, sb, rb, request, fn);
}

static int px_nbr_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, int nb, MPI_Request *request,
                             const char *fn)
{
    px_mpi_comm_t *c = NULL;
    px_mpi_dt_t *rd;
    px_nbr_blk_t *sb, *rb;
    int rc;
    PX_CHECK_INIT(fn);
    px_mpi_topo_t *t = px_nbr_begin(comm, sendbuf, nb, request, fn, &c, &rc);
    if (!t)
        return rc;
    if ((rc = px_nbr_check_count(c, sendcount, fn)) ||
        (rc = px_nbr_check_type(c, sendtype, fn, NULL)) ||
        (rc = px_nbr_check_type(c, recvtype, fn, &rd)))
        return rc;
    if (t->indeg > 0 && (!recvcounts || !displs))
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null recvcounts or displs");
    for (int i = 0; i < t->indeg; i++)
        if ((rc = px_nbr_check_count(c, recvcounts[i], fn)))
            return rc;
    if ((rc = px_nbr_alloc(c, t, &sb, &rb, fn)))
        return rc;
    for (int j = 0; j < t->outdeg; j++)
        sb[j] = (px_nbr_blk_t){sendbuf, sendcount, sendtype};
    for (int i = 0; i < t->indeg; i++)
        rb[i] = (px_nbr_blk_t){(char *)recvbuf + (MPI_Aint)displs[i] * rd->extent, recvcounts[i],
                               recvtype};
    return px_nbr_run(c, t, sb, rb, request, fn);
}

/* ---------- alltoall(v,w) ---------- */

static int px_nbr_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, int nb,
                           MPI_Request *request, const char *fn)
{
    px_mpi_comm_t *c = NULL;
    px_mpi_dt_t *sd, *rd;
    px_nbr_blk_t *sb, *rb;
    int rc;
    PX_CHECK_INIT(fn);
    px_mpi_topo_t *t = px_nbr_begin(comm, sendbuf, nb, request, fn, &c, &rc);
    if (!t)
        return rc;
    if ((rc = px_nbr_check_count(c, sendcount, fn)) ||
        (rc = px_nbr_check_count(c, recvcount, fn)) ||
        (rc = px_nbr_check_type(c, sendtype, fn, &sd)) ||
        (rc = px_nbr_check_type(c, recvtype, fn, &rd)))
        return rc;
    if ((rc = px_nbr_alloc(c, t, &sb, &rb, fn)))
        return rc;
    for (int j = 0; j < t->outdeg; j++)
        sb[j] = (px_nbr_blk_t){(const char *)sendbuf + (MPI_Aint)j * sendcount * sd->extent,
                               sendcount, sendtype};
    for (int i = 0; i < t->indeg; i++)
        rb[i] = (px_nbr_blk_t){(char *)recvbuf + (MPI_Aint)i * recvcount * rd->extent, recvcount,
                               recvtype};
    return px_nbr_run(c, t, sb, rb, request, fn);
}

static int px_nbr_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, int nb,
                            MPI_Request *request, const char *fn)
{
    px_mpi_comm_t *c = NULL;
    px_mpi_dt_t *sd, *rd;
    px_nbr_blk_t *sb, *rb;
    int rc;
    PX_CHECK_INIT(fn);
    px_mpi_topo_t *t = px_nbr_begin(comm, sendbuf, nb, request, fn, &c, &rc);
    if (!t)
        return rc;
    if ((rc = px_nbr_check_type(c, sendtype, fn, &sd)) ||
        (rc = px_nbr_check_type(c, recvtype, fn, &rd)))
        return rc;
    if (t->outdeg > 0 && (!sendcounts || !sdispls))
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null sendcounts or sdispls");
    if (t->indeg > 0 && (!recvcounts || !rdispls))
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null recvcounts or rdispls");
    for (int j = 0; j < t->outdeg; j++)
        if ((rc = px_nbr_check_count(c, sendcounts[j], fn)))
            return rc;
    for (int i = 0; i < t->indeg; i++)
        if ((rc = px_nbr_check_count(c, recvcounts[i], fn)))
            return rc;
    if ((rc = px_nbr_alloc(c, t, &sb, &rb, fn)))
        return rc;
    for (int j = 0; j < t->outdeg; j++)
        sb[j] = (px_nbr_blk_t){(const char *)sendbuf + (MPI_Aint)sdispls[j] * sd->extent,
                               sendcounts[j], sendtype};
    for (int i = 0; i < t->indeg; i++)
        rb[i] = (px_nbr_blk_t){(char *)recvbuf + (MPI_Aint)rdispls[i] * rd->extent, recvcounts[i],
                               recvtype};
    return px_nbr_run(c, t, sb, rb, request, fn);
}

static int px_nbr_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            int nb, MPI_Request *request, const char *fn)
{
    px_mpi_comm_t *c = NULL;
    px_nbr_blk_t *sb, *rb;
    int rc;
    PX_CHECK_INIT(fn);
    px_mpi_topo_t *t = px_nbr_begin(comm, sendbuf, nb, request, fn, &c, &rc);
    if (!t)
        return rc;
    if (t->outdeg > 0 && (!sendcounts || !sdispls || !sendtypes))
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null sendcounts, sdispls or sendtypes");
    if (t->indeg > 0 && (!recvcounts || !rdispls || !recvtypes))
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null recvcounts, rdispls or recvtypes");
    for (int j = 0; j < t->outdeg; j++)
        if ((rc = px_nbr_check_count(c, sendcounts[j], fn)) ||
            (rc = px_nbr_check_type(c, sendtypes[j], fn, NULL)))
            return rc;
    for (int i = 0; i < t->indeg; i++)
        if ((rc = px_nbr_check_count(c, recvcounts[i], fn)) ||
            (rc = px_nbr_check_type(c, recvtypes[i], fn, NULL)))
            return rc;
    if ((rc = px_nbr_alloc(c, t, &sb, &rb, fn)))
        return rc;
    for (int j = 0; j < t->outdeg; j++)
        sb[j] = (px_nbr_blk_t){(const char *)sendbuf + sdispls[j], sendcounts[j], sendtypes[j]};
    for (int i = 0; i < t->indeg; i++)
        rb[i] = (px_nbr_blk_t){(char *)recvbuf + rdispls[i], recvcounts[i], recvtypes[i]};
    return px_nbr_run(c, t, sb, rb, request, fn);
}

/* ---------- entry points ---------- */

PX_PMPI(MPI_Neighbor_allgather)
(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
 MPI_Datatype recvtype, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0,
                            NULL, "MPI_Neighbor_allgather");
}
PX_WEAK(MPI_Neighbor_allgather)

PX_PMPI(MPI_Ineighbor_allgather)
(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 1,
                            request, "MPI_Ineighbor_allgather");
}
PX_WEAK(MPI_Ineighbor_allgather)

PX_PMPI(MPI_Neighbor_allgatherv)
(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
 const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_nbr_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                             comm, 0, NULL, "MPI_Neighbor_allgatherv");
}
PX_WEAK(MPI_Neighbor_allgatherv)

PX_PMPI(MPI_Ineighbor_allgatherv)
(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
 const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_nbr_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                             comm, 1, request, "MPI_Ineighbor_allgatherv");
}
PX_WEAK(MPI_Ineighbor_allgatherv)

PX_PMPI(MPI_Neighbor_alltoall)
(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
 MPI_Datatype recvtype, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_nbr_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0,
                           NULL, "MPI_Neighbor_alltoall");
}
PX_WEAK(MPI_Neighbor_alltoall)

PX_PMPI(MPI_Ineighbor_alltoall)
(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_nbr_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 1,
                           request, "MPI_Ineighbor_alltoall");
}
PX_WEAK(MPI_Ineighbor_alltoall)

PX_PMPI(MPI_Neighbor_alltoallv)
(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
 void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_nbr_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm, 0, NULL, "MPI_Neighbor_alltoallv");
}
PX_WEAK(MPI_Neighbor_alltoallv)

PX_PMPI(MPI_Ineighbor_alltoallv)
(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
 void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
 MPI_Request *request)
{
    PX_CS_ENTER();
    return px_nbr_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm, 1, request, "MPI_Ineighbor_alltoallv");
}
PX_WEAK(MPI_Ineighbor_alltoallv)

PX_PMPI(MPI_Neighbor_alltoallw)
(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
 const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
 const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_nbr_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                            recvtypes, comm, 0, NULL, "MPI_Neighbor_alltoallw");
}
PX_WEAK(MPI_Neighbor_alltoallw)

PX_PMPI(MPI_Ineighbor_alltoallw)
(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
 const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_nbr_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                            recvtypes, comm, 1, request, "MPI_Ineighbor_alltoallw");
}
PX_WEAK(MPI_Ineighbor_alltoallw)
