/* Point-to-point: send modes, receives, probes, persistent requests. */
#include "mpi_impl.h"
#include "dtype_engine.h"
#include "../util/scratch.h"

#include <limits.h>
#include <stdlib.h>

static px_htab_t px_msg_tab;
#define PX_MSG_DYN 0xec000000u

static inline __attribute__((always_inline)) int px_p2p_check(px_mpi_comm_t *c, int count,
                                                              MPI_Datatype *dt, int rank, int tag,
                                                              int recv, const char *fn,
                                                              px_mpi_dt_t **d_p)
{
    px_mpi_dt_t *d = NULL;
    if (__builtin_expect(count < 0, 0))
        return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %d", count);
    d = px_mpi_dt_get(*dt);
    /* When no data moves (MPI_PROC_NULL, count 0), MPI_DATATYPE_NULL is
     * accepted (as MPICH does), read as bytes. */
    if (__builtin_expect(!d, 0) && *dt == MPI_DATATYPE_NULL &&
        (rank == MPI_PROC_NULL || count == 0)) {
        *dt = MPI_BYTE;
        d = px_mpi_dt_get(MPI_BYTE);
    }
    if (__builtin_expect(!d, 0))
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "invalid datatype");
    if (__builtin_expect(!d->committed, 0))
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "datatype not committed");
    /* on inter-communicators ranks name members of the remote group */
    int npeers = px_mpi_comm_peer_size(c);
    if (__builtin_expect((rank < 0 || rank >= npeers) && rank != MPI_PROC_NULL &&
                             !(recv && rank == MPI_ANY_SOURCE),
                         0))
        return px_mpi_error(c, MPI_ERR_RANK, fn, "invalid rank %d (%s size %d)", rank,
                            c->remote ? "remote group" : "communicator", npeers);
    if (__builtin_expect(tag < 0 && !(recv && tag == MPI_ANY_TAG), 0))
        return px_mpi_error(c, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    *d_p = d;
    return MPI_SUCCESS;
}

/* Communication with MPI_PROC_NULL completes at once with an empty status;
 * p.kind remembers the direction for persistent requests. */
static int px_req_procnull(px_mpi_req_t *r, int proto_kind)
{
    r->p.kind = (uint8_t)proto_kind;
    r->kind = PX_MPI_REQ_DONE;
    r->st_source = MPI_PROC_NULL;
    r->st_tag = MPI_ANY_TAG;
    r->st_count = 0;
    r->st_error = MPI_SUCCESS;
    return MPI_SUCCESS;
}

/* Packs bytes [from, to) of a non-contiguous send as the protocol layer
 * needs them (px_proto_isend_fill): a large message sent as frames after
 * the receiver's go-ahead is packed frame by frame while the earlier
 * frames travel. */
static void px_send_fill(px_proto_req_t *p, void *at, size_t from, size_t to)
{
    px_mpi_req_t *r = px_container_of(p, px_mpi_req_t, p);
    px_mpi_dt_range(px_mpi_dt_get(r->dtype), r->ubuf, (char *)at - from, from, to, 1);
}

/* Starts the send described by r (also persistent ones). */
static int px_send_start(px_mpi_req_t *r, uint32_t ctx)
{
    px_mpi_comm_t *c = r->comm;
    if (r->rank == MPI_PROC_NULL)
        return px_req_procnull(r, PX_PROTO_REQ_SEND);
    px_mpi_dt_t *d = px_mpi_dt_get(r->dtype);
    size_t nbytes = (size_t)r->count * (size_t)d->size;
    char *ptr = (char *)r->ubuf + d->true_lb;
    int packed = !d->contig && nbytes;
    size_t ring = 0;
    if (packed) {
        ring = px_proto_ring_size(nbytes); /* a large message window by window */
        r->packbuf = px_scratch_get(ring);
        if (!r->packbuf)
            return MPI_ERR_NO_MEM;
        ptr = r->packbuf;
    }
    r->p.cb = NULL;
    /* collectives use the odd contexts (px_mpi_comm_t) */
    int mode = r->mode | c->lane_mode | ((ctx & 1) ? PX_PROTO_MODE_COLL : 0);
    px_status_t st =
        px_proto_isend_fill(&r->p, px_mpi_comm_world_rank(c, r->rank), ctx, c->rank, r->tag, ptr,
                            nbytes, (px_proto_mode_t)mode, packed ? px_send_fill : NULL, ring);
    if (st != PX_OK)
        return st == PX_ERR_PEER_UNREACHABLE ? MPI_ERR_OTHER : px_mpi_status_to_class(st);
    return MPI_SUCCESS;
}

/* Unpacks bytes [from, to) of a non-contiguous receive as they land in
 * order (px_proto_irecv_drain), while the rest of the message travels; the
 * rest is unpacked at completion (px_mpi_req_complete). */
static void px_recv_drain(px_proto_req_t *p, const void *at, size_t from, size_t to)
{
    px_mpi_req_t *r = px_container_of(p, px_mpi_req_t, p);
    px_mpi_dt_range(px_mpi_dt_get(r->dtype), r->ubuf, (char *)at - from, from, to, 0);
}

static int px_recv_start(px_mpi_req_t *r, uint32_t ctx)
{
    px_mpi_comm_t *c = r->comm;
    if (r->rank == MPI_PROC_NULL)
        return px_req_procnull(r, PX_PROTO_REQ_RECV);
    px_mpi_dt_t *d = px_mpi_dt_get(r->dtype);
    size_t nbytes = (size_t)r->count * (size_t)d->size;
    char *ptr = (char *)r->ubuf + d->true_lb;
    size_t ring = 0;
    if (!d->contig && nbytes) {
        ring = px_proto_ring_size(nbytes); /* a large message window by window */
        r->packbuf = px_scratch_get(ring);
        if (!r->packbuf)
            return MPI_ERR_NO_MEM;
        ptr = r->packbuf;
    }
    r->p.cb = NULL;
    int src_peer = r->rank >= 0 ? px_mpi_comm_world_rank(c, r->rank) : -1;
    px_proto_irecv_drain(&r->p, src_peer, ctx, r->rank, r->tag, ptr, nbytes,
                         r->packbuf ? px_recv_drain : NULL, ring);
    return MPI_SUCCESS;
}

static inline void px_req_args(px_mpi_req_t *r, px_mpi_comm_t *c, const void *buf, MPI_Aint count,
                               MPI_Datatype dt, int rank, int tag, int mode)
{
    r->comm = c;
    r->ubuf = (void *)buf;
    r->count = count;
    r->dtype = dt;
    r->rank = rank;
    r->tag = tag;
    r->mode = mode;
    r->packbuf = NULL;
    r->p.cb = NULL;
}

static int px_isend_make(px_mpi_req_t **req_p, const void *buf, MPI_Aint count, MPI_Datatype dt,
                         int dest, int tag, px_mpi_comm_t *c, uint32_t ctx, int mode, int handle)
{
    px_mpi_req_t *r =
        handle ? px_mpi_req_new(PX_MPI_REQ_SEND) : px_mpi_req_new_internal(PX_MPI_REQ_SEND);
    if (!r)
        return MPI_ERR_NO_MEM;
    px_req_args(r, c, buf, count, dt, dest, tag, mode);
    px_mpi_dt_retain(dt); /* released by px_mpi_req_free */
    c->refs++;
    int rc = px_send_start(r, ctx);
    if (rc != MPI_SUCCESS) {
        px_mpi_req_free(r);
        return rc;
    }
    *req_p = r;
    return MPI_SUCCESS;
}

int px_mpi_isend_internal(px_mpi_req_t **req_p, const void *buf, int count, MPI_Datatype dt,
                          int dest, int tag, px_mpi_comm_t *c, uint32_t ctx, int mode)
{
    return px_isend_make(req_p, buf, count, dt, dest, tag, c, ctx, mode, 1);
}

/* The same for a request the library keeps to itself (no MPI_Request handle). */
int px_mpi_isend_nohandle(px_mpi_req_t **req_p, const void *buf, MPI_Aint count, MPI_Datatype dt,
                          int dest, int tag, px_mpi_comm_t *c, uint32_t ctx, int mode)
{
    return px_isend_make(req_p, buf, count, dt, dest, tag, c, ctx, mode, 0);
}

static int px_irecv_make(px_mpi_req_t **req_p, void *buf, MPI_Aint count, MPI_Datatype dt, int src,
                         int tag, px_mpi_comm_t *c, uint32_t ctx, int handle)
{
    px_mpi_req_t *r =
        handle ? px_mpi_req_new(PX_MPI_REQ_RECV) : px_mpi_req_new_internal(PX_MPI_REQ_RECV);
    if (!r)
        return MPI_ERR_NO_MEM;
    px_req_args(r, c, buf, count, dt, src, tag, 0);
    px_mpi_dt_retain(dt); /* released by px_mpi_req_free */
    c->refs++;
    int rc = px_recv_start(r, ctx);
    if (rc != MPI_SUCCESS) {
        px_mpi_req_free(r);
        return rc;
    }
    *req_p = r;
    return MPI_SUCCESS;
}

int px_mpi_irecv_internal(px_mpi_req_t **req_p, void *buf, int count, MPI_Datatype dt, int src,
                          int tag, px_mpi_comm_t *c, uint32_t ctx)
{
    return px_irecv_make(req_p, buf, count, dt, src, tag, c, ctx, 1);
}

int px_mpi_irecv_nohandle(px_mpi_req_t **req_p, void *buf, MPI_Aint count, MPI_Datatype dt, int src,
                          int tag, px_mpi_comm_t *c, uint32_t ctx)
{
    return px_irecv_make(req_p, buf, count, dt, src, tag, c, ctx, 0);
}

/* Blocking send on a request that lives on the stack. */
static int px_send_blocking(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                            MPI_Comm comm, int mode, const char *fn)
{
    px_mpi_dt_t *d = NULL;
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    int rc = px_p2p_check(c, count, &dt, dest, tag, 0, fn, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    px_mpi_req_t r;
    r.kind = PX_MPI_REQ_SEND;
    r.poll = NULL;
    px_req_args(&r, c, buf, count, dt, dest, tag, mode | PX_PROTO_MODE_BLOCKING);
    rc = px_send_start(&r, c->ctx);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "cannot send to rank %d", dest);
    if (!r.p.done)
        px_proto_wait(&r.p);
    px_status_t why = r.p.st_error;
    rc = px_mpi_req_complete(&r, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "send to rank %d failed%s", dest,
                            why == PX_ERR_PEER_UNREACHABLE ? ": no network path to it is left"
                                                           : "");
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Send)(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_send_blocking(buf, count, dt, dest, tag, comm, PX_PROTO_MODE_STD, "MPI_Send");
}
PX_WEAK(MPI_Send)

PX_PMPI(MPI_Ssend)(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_send_blocking(buf, count, dt, dest, tag, comm, PX_PROTO_MODE_SYNC, "MPI_Ssend");
}
PX_WEAK(MPI_Ssend)

PX_PMPI(MPI_Rsend)(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_send_blocking(buf, count, dt, dest, tag, comm, PX_PROTO_MODE_READY, "MPI_Rsend");
}
PX_WEAK(MPI_Rsend)

static int px_isend_user(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                         MPI_Comm comm, int mode, MPI_Request *request, const char *fn)
{
    px_mpi_dt_t *d = NULL;
    px_mpi_req_t *r;
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    int rc = px_p2p_check(c, count, &dt, dest, tag, 0, fn, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return px_mpi_error(c, MPI_ERR_REQUEST, fn, "null request pointer");
    rc = px_mpi_isend_internal(&r, buf, count, dt, dest, tag, c, c->ctx, mode);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "cannot send to rank %d", dest);
    *request = r->handle;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Isend)
(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
 MPI_Request *request)
{
    PX_CS_ENTER();
    return px_isend_user(buf, count, dt, dest, tag, comm, PX_PROTO_MODE_STD, request, "MPI_Isend");
}
PX_WEAK(MPI_Isend)

PX_PMPI(MPI_Issend)
(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
 MPI_Request *request)
{
    PX_CS_ENTER();
    return px_isend_user(buf, count, dt, dest, tag, comm, PX_PROTO_MODE_SYNC, request,
                         "MPI_Issend");
}
PX_WEAK(MPI_Issend)

PX_PMPI(MPI_Irsend)
(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
 MPI_Request *request)
{
    PX_CS_ENTER();
    return px_isend_user(buf, count, dt, dest, tag, comm, PX_PROTO_MODE_READY, request,
                         "MPI_Irsend");
}
PX_WEAK(MPI_Irsend)

PX_PMPI(MPI_Recv)
(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    PX_CS_ENTER();
    px_mpi_dt_t *d = NULL;
    PX_CHECK_INIT("MPI_Recv");
    PX_GET_COMM(c, comm, "MPI_Recv");
    int rc = px_p2p_check(c, count, &dt, source, tag, 1, "MPI_Recv", &d);
    if (rc != MPI_SUCCESS)
        return rc;
    px_mpi_req_t r;
    r.kind = PX_MPI_REQ_RECV;
    r.poll = NULL;
    px_req_args(&r, c, buf, count, dt, source, tag, 0);
    rc = px_recv_start(&r, c->ctx);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Recv", "cannot post the receive");
    if (r.kind == PX_MPI_REQ_RECV && !r.p.done)
        px_proto_wait(&r.p);
    px_status_t why = r.p.st_error;
    rc = px_mpi_req_complete(&r, status);
    if (rc != MPI_SUCCESS && why == PX_ERR_PEER_UNREACHABLE)
        return px_mpi_error(c, rc, "MPI_Recv",
                            "receive from rank %d failed: no network path to "
                            "it is left",
                            source);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(
            c, rc, "MPI_Recv",
            "receive from rank %d failed (message of %zu bytes into %d x %ld-byte buffer)",
            r.p.st_source, r.p.st_count, count, (long)d->size);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Recv)

PX_PMPI(MPI_Irecv)
(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    PX_CS_ENTER();
    px_mpi_dt_t *d = NULL;
    px_mpi_req_t *r;
    PX_CHECK_INIT("MPI_Irecv");
    PX_GET_COMM(c, comm, "MPI_Irecv");
    int rc = px_p2p_check(c, count, &dt, source, tag, 1, "MPI_Irecv", &d);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return px_mpi_error(c, MPI_ERR_REQUEST, "MPI_Irecv", "null request pointer");
    rc = px_mpi_irecv_internal(&r, buf, count, dt, source, tag, c, c->ctx);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Irecv", "cannot post the receive");
    *request = r->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Irecv)

PX_PMPI(MPI_Sendrecv)
(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    PX_CS_ENTER();
    px_mpi_dt_t *d = NULL;
    px_mpi_req_t *rr, *sr;
    PX_CHECK_INIT("MPI_Sendrecv");
    PX_GET_COMM(c, comm, "MPI_Sendrecv");
    int rc = px_p2p_check(c, sendcount, &sendtype, dest, sendtag, 0, "MPI_Sendrecv", &d);
    if (rc == MPI_SUCCESS)
        rc = px_p2p_check(c, recvcount, &recvtype, source, recvtag, 1, "MPI_Sendrecv", &d);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = px_mpi_irecv_internal(&rr, recvbuf, recvcount, recvtype, source, recvtag, c, c->ctx);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Sendrecv", "cannot post the receive");
    rc = px_mpi_isend_internal(&sr, sendbuf, sendcount, sendtype, dest, sendtag, c, c->ctx,
                               PX_PROTO_MODE_STD);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Sendrecv", "cannot send to rank %d", dest);
    px_mpi_req_wait(sr);
    px_mpi_req_wait(rr);
    int rs = px_mpi_req_complete(sr, MPI_STATUS_IGNORE);
    int rv = px_mpi_req_complete(rr, status);
    px_mpi_req_free(sr);
    px_mpi_req_free(rr);
    if (rs != MPI_SUCCESS || rv != MPI_SUCCESS)
        return px_mpi_error(c, rv != MPI_SUCCESS ? rv : rs, "MPI_Sendrecv", "transfer failed");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Sendrecv)

PX_PMPI(MPI_Sendrecv_replace)
(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag,
 MPI_Comm comm, MPI_Status *status)
{
    PX_CS_ENTER();
    px_mpi_dt_t *d = NULL;
    PX_CHECK_INIT("MPI_Sendrecv_replace");
    PX_GET_COMM(c, comm, "MPI_Sendrecv_replace");
    int rc = px_p2p_check(c, count, &dt, dest, sendtag, 0, "MPI_Sendrecv_replace", &d);
    if (rc == MPI_SUCCESS)
        rc = px_p2p_check(c, count, &dt, source, recvtag, 1, "MPI_Sendrecv_replace", &d);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t nbytes = (size_t)count * (size_t)d->size;
    void *tmp = px_scratch_get(nbytes);
    if (!tmp)
        return px_mpi_error(c, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace", "out of memory");
    if (d->contig)
        memcpy(tmp, (char *)buf + d->true_lb, nbytes);
    else if (nbytes)
        d->pack(d, count, buf, tmp);
    /* send the packed copy as bytes, receive in place */
    rc = PMPI_Sendrecv(tmp, (int)nbytes, MPI_BYTE, dest, sendtag, buf, count, dt, source, recvtag,
                       comm, status);
    px_scratch_put(tmp);
    return rc;
}
PX_WEAK(MPI_Sendrecv_replace)

/* ---------- MPI_Isendrecv, MPI_Isendrecv_replace (MPI-4.0) ----------
 * A receive and a send posted at once under one request, done when both
 * are; its status is the receive's. The send of the replace variant goes
 * from a packed copy the request keeps (packbuf). */
typedef struct px_sendrecv {
    px_mpi_req_t *send, *recv;
} px_sendrecv_t;

static int px_sendrecv_poll(px_mpi_req_t *r)
{
    px_sendrecv_t *sr = r->sched;
    if (!sr)
        return 1;
    if (!px_mpi_req_is_done(sr->send) || !px_mpi_req_is_done(sr->recv))
        return 0;
    MPI_Status st;
    int rc = px_mpi_req_complete(sr->recv, &st);
    int src = px_mpi_req_complete(sr->send, MPI_STATUS_IGNORE);
    r->st_source = st.MPI_SOURCE;
    r->st_tag = st.MPI_TAG;
    r->st_count = (MPI_Count)st.count_lo | (MPI_Count)(st.count_hi_and_cancelled >> 1) << 32;
    r->st_error = rc != MPI_SUCCESS ? rc : src;
    px_mpi_req_free(sr->send);
    px_mpi_req_free(sr->recv);
    free(sr);
    r->sched = NULL;
    return 1;
}

static int px_isendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                        void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                        MPI_Comm comm, MPI_Request *request, void *keep, const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    if (!request)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null request pointer");
    px_mpi_dt_t *d = NULL;
    int rc = px_p2p_check(c, scount, &stype, dest, stag, 0, fn, &d);
    if (rc == MPI_SUCCESS)
        rc = px_p2p_check(c, rcount, &rtype, source, rtag, 1, fn, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    px_sendrecv_t *sr = calloc(1, sizeof(*sr));
    px_mpi_req_t *r = sr ? px_mpi_req_new(PX_MPI_REQ_COLL) : NULL;
    if (!r) {
        free(sr);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    MPI_Request hr, hs;
    rc = PMPI_Irecv(rbuf, rcount, rtype, source, rtag, comm, &hr);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Isend(sbuf, scount, stype, dest, stag, comm, &hs);
        if (rc != MPI_SUCCESS)
            PMPI_Cancel(&hr), PMPI_Wait(&hr, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) {
        free(sr);
        px_mpi_req_free(r);
        return rc;
    }
    sr->recv = px_mpi_req_get(hr);
    sr->send = px_mpi_req_get(hs);
    r->comm = c;
    c->refs++;
    r->sched = sr;
    r->poll = px_sendrecv_poll;
    r->packbuf = keep;
    px_mpi_req_poll_start(r);
    *request = r->handle;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Isendrecv)
(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                        request, NULL, "MPI_Isendrecv");
}
PX_WEAK(MPI_Isendrecv)

PX_PMPI(MPI_Isendrecv_replace)
(void *buf, int count, MPI_Datatype dt, int dest, int stag, int source, int rtag, MPI_Comm comm,
 MPI_Request *request)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Isendrecv_replace";
    px_mpi_dt_t *d = NULL;
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    int rc = px_p2p_check(c, count, &dt, dest, stag, 0, fn, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t nbytes = (size_t)count * (size_t)d->size;
    void *tmp = px_scratch_get(nbytes);
    if (!tmp)
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    if (d->contig)
        memcpy(tmp, (char *)buf + d->true_lb, nbytes);
    else if (nbytes)
        d->pack(d, count, buf, tmp);
    /* the packed copy goes as bytes; the request frees it */
    rc = px_isendrecv(tmp, (int)nbytes, MPI_BYTE, dest, stag, buf, count, dt, source, rtag, comm,
                      request, tmp, fn);
    if (rc != MPI_SUCCESS)
        px_scratch_put(tmp);
    return rc;
}
PX_WEAK(MPI_Isendrecv_replace)

/* ---------- probes ---------- */

static void px_probe_status(MPI_Status *status, int src, int tag, size_t len)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = src;
    status->MPI_TAG = tag;
    status->count_lo = (int)len;
    status->count_hi_and_cancelled = (int)(((unsigned long long)len >> 32) << 1);
}

static int px_probe_check(px_mpi_comm_t *c, int source, int tag, const char *fn)
{
    if ((source < 0 || source >= px_mpi_comm_peer_size(c)) && source != MPI_ANY_SOURCE &&
        source != MPI_PROC_NULL)
        return px_mpi_error(c, MPI_ERR_RANK, fn, "invalid rank %d", source);
    if (tag < 0 && tag != MPI_ANY_TAG)
        return px_mpi_error(c, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Iprobe)(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    PX_CS_ENTER();
    int src, mtag;
    size_t len;
    PX_CHECK_INIT("MPI_Iprobe");
    PX_GET_COMM(c, comm, "MPI_Iprobe");
    int rc = px_probe_check(c, source, tag, "MPI_Iprobe");
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        px_probe_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    px_proto_progress();
    *flag = px_proto_iprobe(c->ctx, source, tag, &src, &mtag, &len);
    if (*flag)
        px_probe_status(status, src, mtag, len);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Iprobe)

PX_PMPI(MPI_Probe)(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    PX_CS_ENTER();
    int src, mtag;
    size_t len;
    unsigned idle = 0;
    PX_CHECK_INIT("MPI_Probe");
    PX_GET_COMM(c, comm, "MPI_Probe");
    int rc = px_probe_check(c, source, tag, "MPI_Probe");
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        px_probe_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    while (!px_proto_iprobe(c->ctx, source, tag, &src, &mtag, &len))
        px_proto_wait_step(&idle);
    px_probe_status(status, src, mtag, len);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Probe)

typedef struct px_mpi_msg {
    px_proto_unexp_t *u;
    px_mpi_comm_t *comm;
} px_mpi_msg_t;

static int px_msg_new(px_proto_unexp_t *u, px_mpi_comm_t *c, MPI_Message *message)
{
    px_mpi_msg_t *m = malloc(sizeof(*m));
    if (!m)
        return MPI_ERR_NO_MEM;
    m->u = u;
    m->comm = c;
    int idx = px_htab_add(&px_msg_tab, m);
    if (idx < 0) {
        free(m);
        return MPI_ERR_NO_MEM;
    }
    *message = (MPI_Message)(PX_MSG_DYN | (unsigned)idx);
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Improbe)
(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    PX_CS_ENTER();
    int src, mtag;
    size_t len;
    PX_CHECK_INIT("MPI_Improbe");
    PX_GET_COMM(c, comm, "MPI_Improbe");
    int rc = px_probe_check(c, source, tag, "MPI_Improbe");
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag || !message)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Improbe", "null argument");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        px_probe_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    px_proto_progress();
    px_proto_unexp_t *u = px_proto_improbe(c->ctx, source, tag, &src, &mtag, &len);
    *flag = u != NULL;
    if (!u)
        return MPI_SUCCESS;
    rc = px_msg_new(u, c, message);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Improbe", "out of memory");
    px_probe_status(status, src, mtag, len);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Improbe)

PX_PMPI(MPI_Mprobe)(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    PX_CS_ENTER();
    int flag = 0;
    unsigned idle = 0;
    for (;;) {
        int rc = PMPI_Improbe(source, tag, comm, &flag, message, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        px_proto_wait_step(&idle);
    }
}
PX_WEAK(MPI_Mprobe)

static int px_mrecv_start(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                          px_mpi_req_t *r, const char *fn)
{
    if (!message)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null message");
    if (*message == MPI_MESSAGE_NO_PROC) {
        r->kind = PX_MPI_REQ_DONE;
        r->st_source = MPI_PROC_NULL;
        r->st_tag = MPI_ANY_TAG;
        r->st_count = 0;
        r->st_error = MPI_SUCCESS;
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    px_mpi_msg_t *m = PX_HANDLE_HI(*message) == PX_MSG_DYN
                          ? px_htab_get(&px_msg_tab, PX_HANDLE_IDX(*message))
                          : NULL;
    if (!m)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid message handle");
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (!d || count < 0)
        return px_mpi_error(m->comm, d ? MPI_ERR_COUNT : MPI_ERR_TYPE, fn, "invalid arguments");
    px_req_args(r, m->comm, buf, count, dt, 0, 0, 0);
    size_t nbytes = (size_t)count * (size_t)d->size;
    char *ptr = (char *)buf + d->true_lb;
    size_t ring = 0;
    if (!d->contig && nbytes) {
        ring = px_proto_ring_size(nbytes);
        r->packbuf = px_scratch_get(ring);
        if (!r->packbuf)
            return px_mpi_error(m->comm, MPI_ERR_NO_MEM, fn, "out of memory");
        ptr = r->packbuf;
    }
    px_proto_mrecv(&r->p, m->u, ptr, nbytes, r->packbuf ? px_recv_drain : NULL, ring);
    px_htab_del(&px_msg_tab, PX_HANDLE_IDX(*message));
    free(m);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Mrecv)(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
    PX_CS_ENTER();
    px_mpi_req_t r;
    PX_CHECK_INIT("MPI_Mrecv");
    r.kind = PX_MPI_REQ_RECV;
    r.poll = NULL;
    r.comm = NULL;
    int rc = px_mrecv_start(buf, count, dt, message, &r, "MPI_Mrecv");
    if (rc != MPI_SUCCESS)
        return rc;
    if (r.kind == PX_MPI_REQ_RECV && !r.p.done)
        px_proto_wait(&r.p);
    rc = px_mpi_req_complete(&r, status);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(r.comm, rc, "MPI_Mrecv", "receive failed");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Mrecv)

PX_PMPI(MPI_Imrecv)
(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Request *request)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Imrecv");
    px_mpi_req_t *r = px_mpi_req_new(PX_MPI_REQ_RECV);
    if (!r || !request)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Imrecv", "invalid arguments");
    int rc = px_mrecv_start(buf, count, dt, message, r, "MPI_Imrecv");
    if (rc != MPI_SUCCESS) {
        r->comm = NULL;
        r->dtype = MPI_DATATYPE_NULL;
        px_mpi_req_free(r);
        return rc;
    }
    if (r->comm)
        r->comm->refs++;
    px_mpi_dt_retain(dt); /* released by px_mpi_req_free */
    *request = r->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Imrecv)

/* ---------- persistent requests ---------- */

static int px_persist_init(const void *buf, int count, MPI_Datatype dt, int rank, int tag,
                           MPI_Comm comm, int kind, int mode, int bsend, MPI_Request *request,
                           const char *fn)
{
    px_mpi_dt_t *d = NULL;
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    int rc = px_p2p_check(c, count, &dt, rank, tag, kind == PX_MPI_REQ_RECV, fn, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null request pointer");
    px_mpi_req_t *r = px_mpi_req_new(kind);
    if (!r)
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    px_req_args(r, c, buf, count, dt, rank, tag, mode);
    px_mpi_dt_retain(dt); /* released by px_mpi_req_free */
    c->refs++;
    r->persistent = 1;
    r->bsend = bsend;
    r->p.kind = kind == PX_MPI_REQ_RECV ? PX_PROTO_REQ_RECV : PX_PROTO_REQ_SEND;
    *request = r->handle;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Send_init)
(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
 MPI_Request *request)
{
    PX_CS_ENTER();
    return px_persist_init(buf, count, dt, dest, tag, comm, PX_MPI_REQ_SEND, PX_PROTO_MODE_STD, 0,
                           request, "MPI_Send_init");
}
PX_WEAK(MPI_Send_init)

PX_PMPI(MPI_Ssend_init)
(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
 MPI_Request *request)
{
    PX_CS_ENTER();
    return px_persist_init(buf, count, dt, dest, tag, comm, PX_MPI_REQ_SEND, PX_PROTO_MODE_SYNC, 0,
                           request, "MPI_Ssend_init");
}
PX_WEAK(MPI_Ssend_init)

PX_PMPI(MPI_Rsend_init)
(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
 MPI_Request *request)
{
    PX_CS_ENTER();
    return px_persist_init(buf, count, dt, dest, tag, comm, PX_MPI_REQ_SEND, PX_PROTO_MODE_READY, 0,
                           request, "MPI_Rsend_init");
}
PX_WEAK(MPI_Rsend_init)

PX_PMPI(MPI_Bsend_init)
(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
 MPI_Request *request)
{
    PX_CS_ENTER();
    return px_persist_init(buf, count, dt, dest, tag, comm, PX_MPI_REQ_SEND, PX_PROTO_MODE_STD, 1,
                           request, "MPI_Bsend_init");
}
PX_WEAK(MPI_Bsend_init)

PX_PMPI(MPI_Recv_init)
(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_persist_init(buf, count, dt, source, tag, comm, PX_MPI_REQ_RECV, 0, 0, request,
                           "MPI_Recv_init");
}
PX_WEAK(MPI_Recv_init)

static int px_start_one(MPI_Request *request, const char *fn)
{
    px_mpi_req_t *r = request ? px_mpi_req_get(*request) : NULL;
    if (!r || !r->persistent)
        return px_mpi_error(NULL, MPI_ERR_REQUEST, fn, "not a persistent request");
    if (r->active)
        return px_mpi_error(r->comm, MPI_ERR_REQUEST, fn, "request is already active");
    r->active = 1;
    int rc;
    if (r->kind == PX_MPI_REQ_COLL) {
        rc = px_mpi_pcoll_start(r);
    } else if (r->kind == PX_MPI_REQ_PART) {
        rc = px_mpi_part_start(r);
    } else if (r->kind == PX_MPI_REQ_RECV) {
        rc = px_recv_start(r, r->comm->ctx);
    } else if (r->bsend) {
        px_mpi_req_t *inner;
        rc = px_mpi_bsend_start(r->ubuf, (int)r->count, r->dtype, r->rank, r->tag, r->comm, &inner);
        r->p.done = 1; /* data is in the attached buffer */
        r->p.st_error = PX_OK;
    } else {
        rc = px_send_start(r, r->comm->ctx);
    }
    if (rc != MPI_SUCCESS) {
        r->active = 0;
        return px_mpi_error(r->comm, rc, fn, "cannot start the request");
    }
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Start)(MPI_Request *request)
{
    PX_CS_ENTER();
    return px_start_one(request, "MPI_Start");
}
PX_WEAK(MPI_Start)

PX_PMPI(MPI_Startall)(int count, MPI_Request reqs[])
{
    PX_CS_ENTER();
    if (count < 0 || (count && !reqs))
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Startall", "invalid arguments");
    for (int i = 0; i < count; i++) {
        int rc = px_start_one(&reqs[i], "MPI_Startall");
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Startall)
