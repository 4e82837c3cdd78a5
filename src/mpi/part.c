/* Partitioned communication (MPI-4.0 chapter 4): MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready, MPI_Pready_range, MPI_Pready_list,
 * MPI_Parrived, on persistent requests that MPI_Start, the Wait and Test
 * families and MPI_Request_free handle.
 *
 * Everything travels as ordinary messages of the protocol layer on the
 * communicator's hidden partitioned context (its context id with the top
 * bit set), so partitioned and ordinary messages never match each other,
 * and large partitions take the rendezvous path like any large message.
 *
 * The init call matches the request with the other side, so that requests
 * match in the order of their init calls: the sender sends a handshake
 * {total bytes, its partitions, a reply tag} tagged with the program's
 * tag, which the receiver's init posts a receive for (matching by
 * communicator, source and tag, in order, as any message does); the
 * receiver checks the sizes and answers on the reply tag with the first of
 * as many consecutive tags as the sender has partitions, or with a refusal
 * (total sizes differ: both sides' starts complete with MPI_ERR_TRUNCATE).
 * From then on, every start of the receiver posts one receive per send
 * partition on those tags, and every MPI_Pready sends its partition at once
 * as one message; before the answer has come, readied partitions wait for
 * it and go as soon as it arrives (a background poll sees to that, from
 * the init call on, while the program waits elsewhere). The sides may use
 * different partition counts: a receive partition has arrived once every
 * send partition overlapping it has. The tags are negative, allocated from
 * one counter per process for whatever that process receives, so they
 * never meet the program's tags (the handshakes) nor each other.
 *
 * A non-contiguous datatype goes through a packed copy: a send partition is
 * packed when it is readied, a receive partition unpacked when MPI_Parrived
 * first sees it arrived, the rest when the request completes. */
#include "mpi_impl.h"
#include "dtype_engine.h"
#include "../util/scratch.h"

#include <limits.h>
#include <stdlib.h>

enum {
    PX_PART_NEW,     /* being initialised: not matched yet */
    PX_PART_HS,      /* handshake under way (from the init call) */
    PX_PART_MATCHED, /* matched; the tags are known */
    PX_PART_FAILED,  /* matching failed: every start completes with err */
    PX_PART_NULL,    /* MPI_PROC_NULL: every start completes at once */
};

typedef struct px_part {
    int send; /* MPI_Psend_init, else MPI_Precv_init */
    int state;
    int err;         /* PX_PART_FAILED: the error class */
    int nparts;      /* this side's partitions */
    MPI_Count count; /* items of the datatype per partition */
    size_t pbytes;   /* bytes of each of this side's partitions */
    size_t total;    /* nparts * pbytes */
    px_mpi_dt_t *d;  /* the datatype (held by the request) */
    int peer;        /* world rank of the other side */
    uint32_t hctx;   /* the communicator's partitioned context */
    uint8_t *flag;   /* per own partition: sender readied / receiver unpacked */
    int nready;      /* sender: partitions readied in this start */
    int nsent;       /* sender: messages posted in this start */
    int finished;    /* this start is complete */
    /* the messages: one per send partition */
    int nmsg;
    size_t mbytes;
    int tag0;
    px_proto_req_t *msg;
    /* matching */
    px_proto_req_t hs_out, hs_in; /* sender: handshake out, answer in; receiver: the reverse */
    int hs_out_used;
    uint64_t hs[3];     /* total, partitions, reply tag */
    uint64_t answer[2]; /* 0 and the first tag, or 1 and the receiver's total */
    px_mpi_req_t *bg;   /* polled by every progress call while the handshake is under way */
    px_mpi_req_t *req;  /* the request this is part of */
} px_part_t;

/* Tags for what this process receives on partitioned contexts: from
 * INT_MIN up, far from MPI_ANY_TAG (-1) and the program's tags (>= 0). */
#define PX_PART_TAG_SPAN 0x7ffffff0u
static uint32_t px_part_next_tag;

static int px_part_tags(int n)
{
    if ((uint32_t)n > PX_PART_TAG_SPAN - px_part_next_tag)
        px_part_next_tag = 0; /* wrapped: the oldest are long done */
    int t = (int)((int64_t)INT_MIN + (int64_t)px_part_next_tag);
    px_part_next_tag += (uint32_t)n;
    return t;
}

static inline uint32_t px_part_ctx(const px_mpi_comm_t *c) { return c->ctx | 0x80000000u; }

static int px_part_class(px_status_t st)
{
    return st == PX_ERR_PEER_UNREACHABLE ? MPI_ERR_OTHER : px_mpi_status_to_class(st);
}

/* Where message j lives at this side (packed copy or the program's buffer). */
static char *px_part_base(px_part_t *p)
{
    px_mpi_req_t *r = p->req;
    return r->packbuf ? (char *)r->packbuf : (char *)r->ubuf + p->d->true_lb;
}

static void px_part_fail(px_part_t *p, int err)
{
    p->state = PX_PART_FAILED;
    p->err = err;
}

/* Sender: message j (its partition j) goes now. */
static void px_part_send_msg(px_part_t *p, int j)
{
    px_mpi_req_t *r = p->req;
    px_proto_req_t *m = &p->msg[j];
    px_status_t st =
        px_proto_isend(m, p->peer, p->hctx, r->comm->rank, p->tag0 + j,
                       px_part_base(p) + (size_t)j * p->mbytes, p->mbytes, PX_PROTO_MODE_STD);
    p->nsent++;
    if (st != PX_OK) {
        m->st_error = st;
        m->done = 1;
    }
}

/* Receiver: one receive per send partition, for this start. */
static void px_part_post_recvs(px_part_t *p)
{
    px_mpi_req_t *r = p->req;
    char *base = px_part_base(p);
    for (int j = 0; j < p->nmsg; j++)
        px_proto_irecv(&p->msg[j], p->peer, p->hctx, r->rank, p->tag0 + j,
                       base + (size_t)j * p->mbytes, p->mbytes);
}

/* The handshake's next step, once its message has come. */
static void px_part_advance(px_part_t *p)
{
    if (p->state != PX_PART_HS || !p->hs_in.done)
        return;
    px_mpi_req_t *r = p->req;
    if (p->hs_in.st_error != PX_OK) {
        px_part_fail(p, px_part_class(p->hs_in.st_error));
        return;
    }
    if (p->send) {
        if (p->answer[0] != 0) {
            px_warn("mpi",
                    "partitioned send of %zu bytes to rank %d tag %d: the receive takes %llu",
                    p->total, r->rank, r->tag, (unsigned long long)p->answer[1]);
            px_part_fail(p, MPI_ERR_TRUNCATE);
            return;
        }
        p->tag0 = (int)(int64_t)p->answer[1];
        p->state = PX_PART_MATCHED;
        for (int j = 0; j < p->nmsg; j++) /* those readied meanwhile */
            if (p->flag[j])
                px_part_send_msg(p, j);
        return;
    }
    /* receiver: the sender's handshake */
    uint64_t total = p->hs[0], n = p->hs[1];
    int ok = total == p->total && n >= 1 && n <= INT_MAX && total % n == 0;
    if (ok && !(p->msg = calloc((size_t)n, sizeof(*p->msg)))) {
        px_part_fail(p, MPI_ERR_NO_MEM);
        ok = 0;
    }
    if (ok) {
        p->nmsg = (int)n;
        p->mbytes = (size_t)(total / n);
        p->tag0 = px_part_tags(p->nmsg);
    } else if (p->state == PX_PART_HS) {
        px_warn("mpi",
                "partitioned receive of %zu bytes from rank %d tag %d: the send has %llu in %llu "
                "partitions",
                p->total, r->rank, r->tag, (unsigned long long)total, (unsigned long long)n);
        px_part_fail(p, MPI_ERR_TRUNCATE);
    }
    p->answer[0] = ok ? 0 : 1;
    p->answer[1] = ok ? (uint64_t)(int64_t)p->tag0 : p->total;
    px_status_t st =
        px_proto_isend(&p->hs_out, p->peer, p->hctx, r->comm->rank, (int)(int64_t)p->hs[2],
                       p->answer, sizeof(p->answer), PX_PROTO_MODE_STD);
    p->hs_out_used = 1;
    if (st != PX_OK) {
        p->hs_out.done = 1;
        if (ok)
            px_part_fail(p, px_part_class(st));
        return;
    }
    if (ok) {
        p->state = PX_PART_MATCHED;
        if (r->active) /* else its start posts them: the buffer is the program's till then */
            px_part_post_recvs(p);
    }
}

static int px_part_bg_poll(px_mpi_req_t *bg)
{
    px_part_t *p = bg->sched;
    px_part_advance(p);
    return p->state != PX_PART_HS;
}

/* Receive partition i is in place (unpacked too); the caller has advanced. */
static int px_part_arrived(px_part_t *p, int i)
{
    if (p->state != PX_PART_MATCHED)
        return p->state != PX_PART_HS;
    if (p->flag[i])
        return 1;
    int j0 = 0, j1 = p->nmsg - 1;
    if (p->pbytes) {
        size_t lo = (size_t)i * p->pbytes, hi = lo + p->pbytes;
        j0 = (int)(lo / p->mbytes);
        j1 = (int)((hi - 1) / p->mbytes);
    }
    for (int j = j0; j <= j1; j++)
        if (!p->msg[j].done)
            return 0;
    px_mpi_req_t *r = p->req;
    if (r->packbuf && p->pbytes)
        p->d->unpack(p->d, (MPI_Aint)p->count, (char *)r->packbuf + (size_t)i * p->pbytes,
                     (char *)r->ubuf + (size_t)i * (size_t)p->count * (size_t)p->d->extent);
    p->flag[i] = 1;
    return 1;
}

/* The request's poll: whether this start is complete (then its status is set). */
static int px_part_poll(px_mpi_req_t *r)
{
    px_part_t *p = r->sched;
    if (p->finished)
        return 1;
    px_part_advance(p);
    switch (p->state) {
    case PX_PART_HS:
        return 0;
    case PX_PART_FAILED:
        if (p->hs_out_used && !p->hs_out.done)
            return 0;
        r->st_error = p->err;
        break;
    case PX_PART_MATCHED: {
        if (p->hs_out_used && !p->hs_out.done)
            return 0;
        if (p->send && p->nsent < p->nmsg)
            return 0;
        int err = MPI_SUCCESS;
        for (int j = 0; j < p->nmsg; j++) {
            if (!p->msg[j].done)
                return 0;
            if (p->msg[j].st_error != PX_OK && err == MPI_SUCCESS)
                err = px_part_class(p->msg[j].st_error);
        }
        if (!p->send) {
            for (int i = 0; i < p->nparts; i++)
                px_part_arrived(p, i);
            r->st_source = r->rank;
            r->st_tag = r->tag;
            r->st_count = (MPI_Count)p->total;
        }
        r->st_error = err;
        break;
    }
    default: /* PX_PART_NULL */
        if (!p->send)
            r->st_source = MPI_PROC_NULL;
        break;
    }
    p->finished = 1;
    return 1;
}

static void px_part_release(px_mpi_req_t *r)
{
    px_part_t *p = r->sched;
    if (!p)
        return;
    if (p->bg)
        px_mpi_req_free(p->bg);
    if (p->state == PX_PART_HS) /* freed before it was matched */
        px_proto_cancel_recv(&p->hs_in);
    if (p->hs_out_used) /* the handshake or its answer: the layer below still holds it */
        px_proto_wait(&p->hs_out);
    px_mpi_dt_release(r->dtype);
    r->dtype = MPI_DATATYPE_NULL;
    free(p->msg);
    free(p->flag);
    free(p);
    r->sched = NULL;
}

/* The handshake, from MPI_Psend_init / MPI_Precv_init: the init calls
 * match in their order (MPI-4.0 4.2.1), as the handshakes do. */
static int px_part_handshake(px_part_t *p)
{
    px_mpi_req_t *r = p->req;
    px_status_t st;
    if (p->send) {
        int rtag = px_part_tags(1);
        px_proto_irecv(&p->hs_in, p->peer, p->hctx, r->rank, rtag, p->answer, sizeof(p->answer));
        p->hs[0] = p->total;
        p->hs[1] = (uint64_t)p->nparts;
        p->hs[2] = (uint64_t)(int64_t)rtag;
        st = px_proto_isend(&p->hs_out, p->peer, p->hctx, r->comm->rank, r->tag, p->hs,
                            sizeof(p->hs), PX_PROTO_MODE_STD);
        if (st != PX_OK) {
            px_proto_cancel_recv(&p->hs_in);
            return px_part_class(st);
        }
        p->hs_out_used = 1;
    } else {
        px_proto_irecv(&p->hs_in, p->peer, p->hctx, r->rank, r->tag, p->hs, sizeof(p->hs));
    }
    p->state = PX_PART_HS;
    px_part_advance(p);
    if (p->state == PX_PART_HS)
        px_mpi_req_poll_start(p->bg);
    return MPI_SUCCESS;
}

int px_mpi_part_start(px_mpi_req_t *r)
{
    px_part_t *p = r->sched;
    px_mpi_req_status_empty(r);
    memset(p->flag, 0, (size_t)p->nparts);
    p->nready = 0;
    p->nsent = 0;
    p->finished = 0;
    /* a receiver matched before its start posts its receives now; one
     * still matching does when the match completes */
    if (p->state == PX_PART_MATCHED && !p->send)
        px_part_post_recvs(p);
    return MPI_SUCCESS; /* failed or MPI_PROC_NULL: completes at once */
}

/* ---------- initialisation ---------- */

static int px_part_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype dt, int rank,
                        int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request, int send,
                        const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    if (!request)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null request pointer");
    if (partitions <= 0)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "partitions must be positive (%d)", partitions);
    if (count < 0)
        return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %ld", (long)count);
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (!d)
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "invalid datatype");
    if (!d->committed)
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "datatype not committed");
    int npeers = px_mpi_comm_peer_size(c);
    if ((rank < 0 || rank >= npeers) && rank != MPI_PROC_NULL)
        return px_mpi_error(c, MPI_ERR_RANK, fn, "invalid rank %d (%s size %d)", rank,
                            c->remote ? "remote group" : "communicator", npeers);
    if (tag < 0)
        return px_mpi_error(c, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_mpi_error(c, MPI_ERR_INFO, fn, "invalid info object");
    if (d->size && (size_t)count > SIZE_MAX / (size_t)d->size / (size_t)partitions)
        return px_mpi_error(c, MPI_ERR_COUNT, fn, "%d partitions of %ld items are too large",
                            partitions, (long)count);
    px_part_t *p = calloc(1, sizeof(*p));
    uint8_t *flag = calloc((size_t)partitions, 1);
    px_proto_req_t *msg = send ? calloc((size_t)partitions, sizeof(*msg)) : NULL;
    px_mpi_req_t *bg = px_mpi_req_new_internal(PX_MPI_REQ_COLL);
    px_mpi_req_t *r = px_mpi_req_new(PX_MPI_REQ_PART);
    size_t pbytes = (size_t)count * (size_t)d->size;
    void *packbuf = !d->contig && pbytes ? px_scratch_get(pbytes * (size_t)partitions) : NULL;
    if (!p || !flag || (send && !msg) || !bg || !r || (!d->contig && pbytes && !packbuf)) {
        free(p);
        free(flag);
        free(msg);
        px_scratch_put(packbuf);
        if (bg)
            px_mpi_req_free(bg);
        if (r)
            px_mpi_req_free(r);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *p = (px_part_t){.send = send,
                     .state = rank == MPI_PROC_NULL ? PX_PART_NULL : PX_PART_NEW,
                     .nparts = partitions,
                     .count = count,
                     .pbytes = pbytes,
                     .total = pbytes * (size_t)partitions,
                     .d = d,
                     .peer = rank == MPI_PROC_NULL ? -1 : px_mpi_comm_world_rank(c, rank),
                     .hctx = px_part_ctx(c),
                     .flag = flag,
                     .nmsg = send ? partitions : 0,
                     .mbytes = pbytes,
                     .msg = msg,
                     .bg = bg,
                     .req = r};
    bg->sched = p;
    bg->poll = px_part_bg_poll;
    r->comm = c;
    c->refs++;
    r->ubuf = (void *)buf;
    r->dtype = dt;
    px_mpi_dt_retain(dt); /* released by px_part_release */
    r->rank = rank;
    r->tag = tag;
    r->packbuf = packbuf;
    r->persistent = 1;
    r->sched = p;
    r->poll = px_part_poll;
    r->release = px_part_release;
    int rc = p->state == PX_PART_NEW ? px_part_handshake(p) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        px_mpi_req_free(r);
        return px_mpi_error(c, rc, fn, "cannot reach rank %d", rank);
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Psend_init)
(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_part_init(buf, partitions, count, datatype, dest, tag, comm, info, request, 1,
                        "MPI_Psend_init");
}
PX_WEAK(MPI_Psend_init)

PX_PMPI(MPI_Precv_init)
(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_part_init(buf, partitions, count, datatype, source, tag, comm, info, request, 0,
                        "MPI_Precv_init");
}
PX_WEAK(MPI_Precv_init)

/* ---------- readying and arrival ---------- */

static int px_part_initialized(const char *fn)
{
    PX_CHECK_INIT(fn);
    return MPI_SUCCESS;
}

/* The partitioned request of the side wanted (send: MPI_Pready*), once MPI
 * is initialized; NULL with the error raised in *err. */
static px_part_t *px_part_get(MPI_Request h, int send, int *err, const char *fn)
{
    if ((*err = px_part_initialized(fn)) != MPI_SUCCESS)
        return NULL;
    px_mpi_req_t *r = px_mpi_req_get(h);
    if (!r || r->kind != PX_MPI_REQ_PART || ((px_part_t *)r->sched)->send != send) {
        *err = px_mpi_error(NULL, MPI_ERR_REQUEST, fn, "not a partitioned %s request",
                            send ? "send" : "receive");
        return NULL;
    }
    return r->sched;
}

/* Checks partition k of an active send request: 0, or the error raised. */
static int px_part_check_ready(px_part_t *p, int k, const char *fn)
{
    px_mpi_req_t *r = p->req;
    if (!r->active)
        return px_mpi_error(r->comm, MPI_ERR_REQUEST, fn, "the request is not active (MPI_Start)");
    if (k < 0 || k >= p->nparts)
        return px_mpi_error(r->comm, MPI_ERR_ARG, fn, "partition %d out of range (0..%d)", k,
                            p->nparts - 1);
    if (p->flag[k])
        return px_mpi_error(r->comm, MPI_ERR_ARG, fn, "partition %d is already ready in this start",
                            k);
    return MPI_SUCCESS;
}

/* Partition k (checked) is ready: packed if need be, sent once matched. */
static void px_part_ready(px_part_t *p, int k)
{
    px_mpi_req_t *r = p->req;
    p->flag[k] = 1;
    p->nready++;
    if (r->packbuf && p->pbytes)
        p->d->pack(p->d, (MPI_Aint)p->count,
                   (const char *)r->ubuf + (size_t)k * (size_t)p->count * (size_t)p->d->extent,
                   (char *)r->packbuf + (size_t)k * p->pbytes);
    if (p->state == PX_PART_MATCHED)
        px_part_send_msg(p, k);
}

PX_PMPI(MPI_Pready)(int partition, MPI_Request request)
{
    PX_CS_ENTER();
    int err;
    px_part_t *p = px_part_get(request, 1, &err, "MPI_Pready");
    if (!p)
        return err;
    if ((err = px_part_check_ready(p, partition, "MPI_Pready")) != MPI_SUCCESS)
        return err;
    px_part_advance(p);
    px_part_ready(p, partition);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Pready)

PX_PMPI(MPI_Pready_range)(int partition_low, int partition_high, MPI_Request request)
{
    PX_CS_ENTER();
    int err;
    const char *fn = "MPI_Pready_range";
    px_part_t *p = px_part_get(request, 1, &err, fn);
    if (!p)
        return err;
    if (partition_low > partition_high)
        return px_mpi_error(p->req->comm, MPI_ERR_ARG, fn, "empty range %d..%d", partition_low,
                            partition_high);
    /* all checked before any is readied */
    for (int k = partition_low; k <= partition_high; k++)
        if ((err = px_part_check_ready(p, k, fn)) != MPI_SUCCESS)
            return err;
    px_part_advance(p);
    for (int k = partition_low; k <= partition_high; k++)
        px_part_ready(p, k);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Pready_range)

PX_PMPI(MPI_Pready_list)(int length, int array_of_partitions[], MPI_Request request)
{
    PX_CS_ENTER();
    int err = MPI_SUCCESS;
    const char *fn = "MPI_Pready_list";
    px_part_t *p = px_part_get(request, 1, &err, fn);
    if (!p)
        return err;
    if (length < 0 || (length && !array_of_partitions))
        return px_mpi_error(p->req->comm, MPI_ERR_ARG, fn, "invalid partition list");
    /* all checked before any is readied; a partition listed twice is
     * marked (2) by its first appearance */
    int i;
    for (i = 0; i < length; i++) {
        if ((err = px_part_check_ready(p, array_of_partitions[i], fn)) != MPI_SUCCESS)
            break;
        p->flag[array_of_partitions[i]] = 2;
    }
    for (int k = 0; k < i; k++)
        p->flag[array_of_partitions[k]] = 0;
    if (err != MPI_SUCCESS)
        return err;
    px_part_advance(p);
    for (i = 0; i < length; i++)
        px_part_ready(p, array_of_partitions[i]);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Pready_list)

PX_PMPI(MPI_Parrived)(MPI_Request request, int partition, int *flag)
{
    PX_CS_ENTER();
    int err;
    px_part_t *p = px_part_get(request, 0, &err, "MPI_Parrived");
    if (!p)
        return err;
    px_mpi_req_t *r = p->req;
    if (!flag)
        return px_mpi_error(r->comm, MPI_ERR_ARG, "MPI_Parrived", "null flag");
    if (partition < 0 || partition >= p->nparts)
        return px_mpi_error(r->comm, MPI_ERR_ARG, "MPI_Parrived",
                            "partition %d out of range (0..%d)", partition, p->nparts - 1);
    if (!r->active) { /* inactive: everything of the last start is in place */
        *flag = 1;
        return MPI_SUCCESS;
    }
    px_part_advance(p);
    if (!px_part_arrived(p, partition)) {
        px_proto_progress();
        px_part_advance(p);
        *flag = px_part_arrived(p, partition);
        return MPI_SUCCESS;
    }
    *flag = 1;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Parrived)
