/* Large-count entry points (MPI-4.0, the _c functions) of the calls whose
 * implementation takes int counts. A count that fits in an int goes to the
 * int function unchanged (so the small-message path is the usual one, and
 * the int function checks and reports the arguments); a larger one is
 * described by one item of a datatype that holds count elements (BigMPI's
 * construction, px_mpi_big_type). Reductions cannot take such a datatype
 * with a predefined operation, so they run in pieces of PX_BIG_PIECE
 * elements, which element-wise operations allow. The arrays of counts and
 * displacements of a neighbourhood collective become int arrays when every
 * value fits; otherwise the collective becomes a neighbourhood alltoallw
 * with one datatype per neighbour that holds its block, displacement
 * included. The functions whose implementation takes MPI_Count or MPI_Aint
 * already are in their own files (the other v and w collectives:
 * coll/coll_mpi.c). */
#include "mpi_impl.h"
#include "topo/topo_impl.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

/* Elements per piece of a split reduction: at most INT_MAX; a power of two
 * keeps the pieces aligned. */
#define PX_BIG_PIECE ((MPI_Count)1 << 30)

int px_mpi_big_type(MPI_Count count, MPI_Datatype t, MPI_Datatype *out)
{
    MPI_Aint lb, extent;
    MPI_Count nchunks = count / INT_MAX, rest = count % INT_MAX;
    MPI_Datatype chunk = MPI_DATATYPE_NULL, chunks = MPI_DATATYPE_NULL;
    MPI_Datatype tail = MPI_DATATYPE_NULL, both = MPI_DATATYPE_NULL;
    int rc = PMPI_Type_get_extent(t, &lb, &extent);
    if (rc == MPI_SUCCESS && nchunks > INT_MAX)
        rc = MPI_ERR_COUNT;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_contiguous(INT_MAX, t, &chunk);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_contiguous((int)nchunks, chunk, &chunks);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_contiguous((int)rest, t, &tail);
    if (rc == MPI_SUCCESS) {
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {0, (MPI_Aint)(nchunks * INT_MAX) * extent};
        MPI_Datatype parts[2] = {chunks, tail};
        rc = PMPI_Type_create_struct(2, bl, disp, parts, &both);
    }
    /* a struct rounds its extent up to the alignment: count extents of t */
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_create_resized(both, lb, (MPI_Aint)count * extent, out);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(out);
    MPI_Datatype *made[4] = {&chunk, &chunks, &tail, &both};
    for (int i = 0; i < 4; i++)
        if (*made[i] != MPI_DATATYPE_NULL)
            PMPI_Type_free(made[i]);
    return rc;
}

/* ---------- one count and its datatype ---------- */

int px_mpi_big_of(MPI_Count n, MPI_Datatype t, px_mpi_big_t *b, const char *fn)
{
    b->made = MPI_DATATYPE_NULL;
    b->type = t;
    b->count = 1;
    if (n <= INT_MAX) { /* a negative count is reported by the int function */
        b->count = n < 0 ? -1 : (int)n;
        return MPI_SUCCESS;
    }
    px_mpi_dt_t *d = px_mpi_dt_get(t);
    if (!d || !d->committed)
        return MPI_SUCCESS; /* the int function reports the datatype */
    int rc = px_mpi_big_type(n, t, &b->made);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(NULL, rc, fn, "cannot describe %lld elements", (long long)n);
    b->type = b->made;
    return MPI_SUCCESS;
}

void px_mpi_big_free(px_mpi_big_t *b)
{
    if (b->made != MPI_DATATYPE_NULL)
        PMPI_Type_free(&b->made);
}

/* An entry point whose one count (two, three: a send and a receive side,
 * RMA's origin, result and target) goes through px_big_of before the int
 * function of the same name takes the call's arguments, where b[k].count
 * and b[k].type stand for the k-th count and datatype. */
#define PX_BIG_ENTRY(name, params, nb, counts, types, args)                                        \
    PX_PMPI(name##_c) params                                                                       \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        const MPI_Count n_[] = {PX_BIG_EXPAND counts};                                             \
        const MPI_Datatype t_[] = {PX_BIG_EXPAND types};                                           \
        px_mpi_big_t b[nb];                                                                        \
        int rc = MPI_SUCCESS, k = 0;                                                               \
        for (; k < (nb) && rc == MPI_SUCCESS; k++)                                                 \
            rc = px_mpi_big_of(n_[k], t_[k], &b[k], #name "_c");                                   \
        if (rc == MPI_SUCCESS)                                                                     \
            rc = P##name args;                                                                     \
        while (k-- > 0)                                                                            \
            px_mpi_big_free(&b[k]);                                                                \
        return rc;                                                                                 \
    }                                                                                              \
    PX_WEAK(name##_c)
#define PX_BIG_EXPAND(...) __VA_ARGS__

/* clang-format off */
#define PX_BIG_P2P(name, bufq)                                                                     \
    PX_BIG_ENTRY(name, (bufq void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag,      \
                        MPI_Comm comm), 1, (count), (dt),                                          \
                 (buf, b[0].count, b[0].type, peer, tag, comm))
#define PX_BIG_P2P_REQ(name, bufq)                                                                 \
    PX_BIG_ENTRY(name, (bufq void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag,      \
                        MPI_Comm comm, MPI_Request *req), 1, (count), (dt),                        \
                 (buf, b[0].count, b[0].type, peer, tag, comm, req))
/* clang-format on */

/* ---------- point-to-point ---------- */

PX_BIG_P2P(MPI_Send, const)
PX_BIG_P2P(MPI_Bsend, const)
PX_BIG_P2P(MPI_Ssend, const)
PX_BIG_P2P(MPI_Rsend, const)
PX_BIG_P2P_REQ(MPI_Isend, const)
PX_BIG_P2P_REQ(MPI_Ibsend, const)
PX_BIG_P2P_REQ(MPI_Issend, const)
PX_BIG_P2P_REQ(MPI_Irsend, const)
PX_BIG_P2P_REQ(MPI_Irecv, )
PX_BIG_P2P_REQ(MPI_Send_init, const)
PX_BIG_P2P_REQ(MPI_Bsend_init, const)
PX_BIG_P2P_REQ(MPI_Ssend_init, const)
PX_BIG_P2P_REQ(MPI_Rsend_init, const)
PX_BIG_P2P_REQ(MPI_Recv_init, )

PX_BIG_ENTRY(MPI_Recv,
             (void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
              MPI_Status *status),
             1, (count), (dt), (buf, b[0].count, b[0].type, source, tag, comm, status))

PX_BIG_ENTRY(MPI_Mrecv,
             (void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message,
              MPI_Status *status),
             1, (count), (dt), (buf, b[0].count, b[0].type, message, status))

PX_BIG_ENTRY(MPI_Imrecv,
             (void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message, MPI_Request *req),
             1, (count), (dt), (buf, b[0].count, b[0].type, message, req))

PX_BIG_ENTRY(MPI_Sendrecv,
             (const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
              void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
              MPI_Status *status),
             2, (scount, rcount), (stype, rtype),
             (sbuf, b[0].count, b[0].type, dest, stag, rbuf, b[1].count, b[1].type, source, rtag,
              comm, status))

PX_BIG_ENTRY(MPI_Isendrecv,
             (const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
              void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
              MPI_Request *req),
             2, (scount, rcount), (stype, rtype),
             (sbuf, b[0].count, b[0].type, dest, stag, rbuf, b[1].count, b[1].type, source, rtag,
              comm, req))

PX_BIG_ENTRY(MPI_Sendrecv_replace,
             (void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int source, int rtag,
              MPI_Comm comm, MPI_Status *status),
             1, (count), (dt), (buf, b[0].count, b[0].type, dest, stag, source, rtag, comm, status))

PX_BIG_ENTRY(MPI_Isendrecv_replace,
             (void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int source, int rtag,
              MPI_Comm comm, MPI_Request *req),
             1, (count), (dt), (buf, b[0].count, b[0].type, dest, stag, source, rtag, comm, req))

/* ---------- collectives with one count per side ---------- */

PX_BIG_ENTRY(MPI_Bcast, (void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm), 1,
             (count), (dt), (buf, b[0].count, b[0].type, root, comm))
PX_BIG_ENTRY(MPI_Ibcast,
             (void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm,
              MPI_Request *req),
             1, (count), (dt), (buf, b[0].count, b[0].type, root, comm, req))

/* clang-format off */
#define PX_BIG_TWO_SIDED(name, extra_params, extra_args)                                           \
    PX_BIG_ENTRY(name, (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,       \
                        MPI_Count rcount, MPI_Datatype rtype PX_BIG_EXPAND extra_params),          \
                 2, (scount, rcount), (stype, rtype),                                              \
                 (sbuf, b[0].count, b[0].type, rbuf, b[1].count, b[1].type                         \
                  PX_BIG_EXPAND extra_args))
/* clang-format on */

PX_BIG_TWO_SIDED(MPI_Gather, (, int root, MPI_Comm comm), (, root, comm))
PX_BIG_TWO_SIDED(MPI_Igather, (, int root, MPI_Comm comm, MPI_Request *req), (, root, comm, req))
PX_BIG_TWO_SIDED(MPI_Scatter, (, int root, MPI_Comm comm), (, root, comm))
PX_BIG_TWO_SIDED(MPI_Iscatter, (, int root, MPI_Comm comm, MPI_Request *req), (, root, comm, req))
PX_BIG_TWO_SIDED(MPI_Allgather, (, MPI_Comm comm), (, comm))
PX_BIG_TWO_SIDED(MPI_Iallgather, (, MPI_Comm comm, MPI_Request *req), (, comm, req))
PX_BIG_TWO_SIDED(MPI_Alltoall, (, MPI_Comm comm), (, comm))
PX_BIG_TWO_SIDED(MPI_Ialltoall, (, MPI_Comm comm, MPI_Request *req), (, comm, req))
PX_BIG_TWO_SIDED(MPI_Neighbor_allgather, (, MPI_Comm comm), (, comm))
PX_BIG_TWO_SIDED(MPI_Ineighbor_allgather, (, MPI_Comm comm, MPI_Request *req), (, comm, req))
PX_BIG_TWO_SIDED(MPI_Neighbor_alltoall, (, MPI_Comm comm), (, comm))
PX_BIG_TWO_SIDED(MPI_Ineighbor_alltoall, (, MPI_Comm comm, MPI_Request *req), (, comm, req))

/* ---------- one-sided ---------- */

/* clang-format off */
#define PX_BIG_RMA(name, oq, extra_params, extra_args)                                             \
    PX_BIG_ENTRY(name, (oq void *obuf, MPI_Count ocount, MPI_Datatype otype, int target,           \
                        MPI_Aint tdisp, MPI_Count tcount, MPI_Datatype ttype                       \
                        PX_BIG_EXPAND extra_params),                                               \
                 2, (ocount, tcount), (otype, ttype),                                              \
                 (obuf, b[0].count, b[0].type, target, tdisp, b[1].count, b[1].type                \
                  PX_BIG_EXPAND extra_args))
#define PX_BIG_RMA_FETCH(name, extra_params, extra_args)                                           \
    PX_BIG_ENTRY(name, (const void *obuf, MPI_Count ocount, MPI_Datatype otype, void *rbuf,       \
                        MPI_Count rcount, MPI_Datatype rtype, int target, MPI_Aint tdisp,          \
                        MPI_Count tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win               \
                        PX_BIG_EXPAND extra_params),                                               \
                 3, (ocount, rcount, tcount), (otype, rtype, ttype),                               \
                 (obuf, b[0].count, b[0].type, rbuf, b[1].count, b[1].type, target, tdisp,        \
                  b[2].count, b[2].type, op, win PX_BIG_EXPAND extra_args))
/* clang-format on */

PX_BIG_RMA(MPI_Put, const, (, MPI_Win win), (, win))
PX_BIG_RMA(MPI_Rput, const, (, MPI_Win win, MPI_Request *req), (, win, req))
PX_BIG_RMA(MPI_Get, , (, MPI_Win win), (, win))
PX_BIG_RMA(MPI_Rget, , (, MPI_Win win, MPI_Request *req), (, win, req))
PX_BIG_RMA(MPI_Accumulate, const, (, MPI_Op op, MPI_Win win), (, op, win))
PX_BIG_RMA(MPI_Raccumulate, const, (, MPI_Op op, MPI_Win win, MPI_Request *req), (, op, win, req))
PX_BIG_RMA_FETCH(MPI_Get_accumulate, (), ())
PX_BIG_RMA_FETCH(MPI_Rget_accumulate, (, MPI_Request *req), (, req))

/* ---------- files ---------- */

/* clang-format off */
#define PX_BIG_FILE_(name, bufq, last, last_name)                                                   \
    PX_BIG_ENTRY(name, (MPI_File fh, bufq void *buf, MPI_Count count, MPI_Datatype dt, last),     \
                 1, (count), (dt), (fh, buf, b[0].count, b[0].type, last_name))
#define PX_BIG_FILE_AT_(name, bufq, last, last_name)                                                \
    PX_BIG_ENTRY(name, (MPI_File fh, MPI_Offset off, bufq void *buf, MPI_Count count,             \
                        MPI_Datatype dt, last), 1, (count), (dt),                                  \
                 (fh, off, buf, b[0].count, b[0].type, last_name))
#define PX_BIG_FILE_BEGIN(name, bufq)                                                              \
    PX_BIG_ENTRY(name, (MPI_File fh, bufq void *buf, MPI_Count count, MPI_Datatype dt), 1,        \
                 (count), (dt), (fh, buf, b[0].count, b[0].type))
#define PX_BIG_FILE_AT_BEGIN(name, bufq)                                                           \
    PX_BIG_ENTRY(name, (MPI_File fh, MPI_Offset off, bufq void *buf, MPI_Count count,             \
                        MPI_Datatype dt), 1, (count), (dt),                                        \
                 (fh, off, buf, b[0].count, b[0].type))
/* the last parameter, then its name: expanded before PX_BIG_FILE_ takes them */
#define PX_BIG_FILE(name, bufq, last) PX_BIG_FILE_(name, bufq, last)
#define PX_BIG_FILE_AT(name, bufq, last) PX_BIG_FILE_AT_(name, bufq, last)
#define PX_BIG_STATUS MPI_Status *status, status
#define PX_BIG_REQ MPI_Request *req, req
/* clang-format on */

PX_BIG_FILE(MPI_File_read, , PX_BIG_STATUS)
PX_BIG_FILE(MPI_File_read_all, , PX_BIG_STATUS)
PX_BIG_FILE(MPI_File_read_shared, , PX_BIG_STATUS)
PX_BIG_FILE(MPI_File_read_ordered, , PX_BIG_STATUS)
PX_BIG_FILE(MPI_File_write, const, PX_BIG_STATUS)
PX_BIG_FILE(MPI_File_write_all, const, PX_BIG_STATUS)
PX_BIG_FILE(MPI_File_write_shared, const, PX_BIG_STATUS)
PX_BIG_FILE(MPI_File_write_ordered, const, PX_BIG_STATUS)
PX_BIG_FILE(MPI_File_iread, , PX_BIG_REQ)
PX_BIG_FILE(MPI_File_iread_all, , PX_BIG_REQ)
PX_BIG_FILE(MPI_File_iread_shared, , PX_BIG_REQ)
PX_BIG_FILE(MPI_File_iwrite, const, PX_BIG_REQ)
PX_BIG_FILE(MPI_File_iwrite_all, const, PX_BIG_REQ)
PX_BIG_FILE(MPI_File_iwrite_shared, const, PX_BIG_REQ)
PX_BIG_FILE_AT(MPI_File_read_at, , PX_BIG_STATUS)
PX_BIG_FILE_AT(MPI_File_read_at_all, , PX_BIG_STATUS)
PX_BIG_FILE_AT(MPI_File_write_at, const, PX_BIG_STATUS)
PX_BIG_FILE_AT(MPI_File_write_at_all, const, PX_BIG_STATUS)
PX_BIG_FILE_AT(MPI_File_iread_at, , PX_BIG_REQ)
PX_BIG_FILE_AT(MPI_File_iread_at_all, , PX_BIG_REQ)
PX_BIG_FILE_AT(MPI_File_iwrite_at, const, PX_BIG_REQ)
PX_BIG_FILE_AT(MPI_File_iwrite_at_all, const, PX_BIG_REQ)
PX_BIG_FILE_BEGIN(MPI_File_read_all_begin, )
PX_BIG_FILE_BEGIN(MPI_File_read_ordered_begin, )
PX_BIG_FILE_BEGIN(MPI_File_write_all_begin, const)
PX_BIG_FILE_BEGIN(MPI_File_write_ordered_begin, const)
PX_BIG_FILE_AT_BEGIN(MPI_File_read_at_all_begin, )
PX_BIG_FILE_AT_BEGIN(MPI_File_write_at_all_begin, const)

/* ---------- reductions, in pieces ---------- */

enum { PX_BIG_REDUCE, PX_BIG_ALLREDUCE, PX_BIG_SCAN, PX_BIG_EXSCAN, PX_BIG_LOCAL };

/* p + off, except for MPI_IN_PLACE and buffers that are not used */
static void *px_big_at(const void *p, MPI_Aint off)
{
    return p == MPI_IN_PLACE || !p ? (void *)p : (void *)((uintptr_t)p + (uintptr_t)off);
}

static int px_big_reduce_piece(int kind, const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                               int root, MPI_Comm comm, MPI_Request *req)
{
    switch (kind) {
    case PX_BIG_REDUCE:
        return req ? PMPI_Ireduce(s, r, n, t, op, root, comm, req)
                   : PMPI_Reduce(s, r, n, t, op, root, comm);
    case PX_BIG_ALLREDUCE:
        return req ? PMPI_Iallreduce(s, r, n, t, op, comm, req)
                   : PMPI_Allreduce(s, r, n, t, op, comm);
    case PX_BIG_SCAN:
        return req ? PMPI_Iscan(s, r, n, t, op, comm, req) : PMPI_Scan(s, r, n, t, op, comm);
    case PX_BIG_EXSCAN:
        return req ? PMPI_Iexscan(s, r, n, t, op, comm, req) : PMPI_Exscan(s, r, n, t, op, comm);
    default:
        return PMPI_Reduce_local(s, r, n, t, op);
    }
}

/* Nonblocking parts as one request (the parts are waited for and freed
 * when it fails). */
static int px_big_group(MPI_Comm comm, MPI_Request *parts, int n, MPI_Request *req, const char *fn)
{
    px_mpi_comm_t *c = px_mpi_comm_get(comm);
    px_mpi_req_group_t *g = calloc(1, sizeof(*g));
    px_mpi_req_t *r = g ? px_mpi_req_new(PX_MPI_REQ_COLL) : NULL;
    if (g && r && n > 0)
        g->reqs = malloc(sizeof(*g->reqs) * (size_t)n);
    if (!c || !r || (n > 0 && !g->reqs)) {
        PMPI_Waitall(n, parts, MPI_STATUSES_IGNORE);
        if (r)
            px_mpi_req_free(r);
        if (g)
            free(g->reqs);
        free(g);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    for (int i = 0; i < n; i++)
        g->reqs[i] = px_mpi_req_get(parts[i]);
    g->n = n;
    r->comm = c;
    c->refs++;
    r->sched = g;
    r->poll = px_mpi_req_group_poll;
    *req = r->handle;
    return MPI_SUCCESS;
}

static int px_big_reduce(int kind, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype t,
                         MPI_Op op, int root, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    MPI_Aint lb, extent;
    if (count <= INT_MAX || !px_mpi_dt_get(t) || PMPI_Type_get_extent(t, &lb, &extent))
        return px_big_reduce_piece(kind, sbuf, rbuf,
                                   count < 0         ? -1
                                   : count > INT_MAX ? 1
                                                     : (int)count,
                                   t, op, root, comm, req);
    int n = (int)((count + PX_BIG_PIECE - 1) / PX_BIG_PIECE), k = 0, rc = MPI_SUCCESS;
    MPI_Request *parts = req ? malloc(sizeof(*parts) * (size_t)n) : NULL;
    if (req && !parts)
        return px_mpi_error(px_mpi_comm_get(comm), MPI_ERR_NO_MEM, fn, "out of memory");
    for (; k < n && rc == MPI_SUCCESS; k++) {
        MPI_Count first = (MPI_Count)k * PX_BIG_PIECE;
        MPI_Count len = count - first < PX_BIG_PIECE ? count - first : PX_BIG_PIECE;
        MPI_Aint off = (MPI_Aint)first * extent;
        rc = px_big_reduce_piece(kind, px_big_at(sbuf, off), px_big_at(rbuf, off), (int)len, t, op,
                                 root, comm, req ? &parts[k] : NULL);
    }
    if (req && rc != MPI_SUCCESS)
        PMPI_Waitall(k - 1, parts, MPI_STATUSES_IGNORE);
    else if (req)
        rc = px_big_group(comm, parts, n, req, fn);
    free(parts);
    return rc;
}

/* clang-format off */
#define PX_BIG_REDUCTION(name, iname, kind, root_param, root)                                             \
    PX_PMPI(MPI_##name##_c)(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,       \
                            MPI_Op op                                                              \
                      PX_BIG_EXPAND root_param, MPI_Comm comm)                                     \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_big_reduce(kind, sbuf, rbuf, count, dt, op, root, comm, NULL, "MPI_" #name "_c");\
    }                                                                                              \
    PX_WEAK(MPI_##name##_c)                                                                              \
    PX_PMPI(MPI_##iname##_c)(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,      \
                             MPI_Op op PX_BIG_EXPAND root_param, MPI_Comm comm, MPI_Request *req)  \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        if (!req)                                                                                  \
            return px_mpi_error(px_mpi_comm_get(comm), MPI_ERR_ARG, "MPI_" #iname "_c",           \
                                "null request pointer");                                           \
        return px_big_reduce(kind, sbuf, rbuf, count, dt, op, root, comm, req, "MPI_" #iname "_c");\
    }                                                                                              \
    PX_WEAK(MPI_##iname##_c)
/* clang-format on */

PX_BIG_REDUCTION(Reduce, Ireduce, PX_BIG_REDUCE, (, int root), root)
PX_BIG_REDUCTION(Allreduce, Iallreduce, PX_BIG_ALLREDUCE, (), 0)
PX_BIG_REDUCTION(Scan, Iscan, PX_BIG_SCAN, (), 0)
PX_BIG_REDUCTION(Exscan, Iexscan, PX_BIG_EXSCAN, (), 0)

PX_PMPI(MPI_Reduce_local_c)
(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op)
{
    PX_CS_ENTER();
    return px_big_reduce(PX_BIG_LOCAL, inbuf, inoutbuf, count, dt, op, 0, MPI_COMM_NULL, NULL,
                         "MPI_Reduce_local_c");
}
PX_WEAK(MPI_Reduce_local_c)

/* ---------- arrays of counts ---------- */

/* counts[0..n) and displs[0..n) as int arrays in *ic_p and *id_p (NULL
 * arrays stay NULL): 1 when every value fits, 0 when one does not (nothing
 * allocated), -1 when out of memory. */
static int px_big_ints(int n, const MPI_Count *counts, const MPI_Aint *displs, int **ic_p,
                       int **id_p)
{
    *ic_p = *id_p = NULL;
    for (int i = 0; i < n; i++)
        if ((counts && counts[i] > INT_MAX) ||
            (displs && (displs[i] > INT_MAX || displs[i] < INT_MIN)))
            return 0;
    size_t sz = sizeof(int) * (size_t)(n > 0 ? n : 1);
    if ((counts && !(*ic_p = malloc(sz))) || (displs && !(*id_p = malloc(sz)))) {
        free(*ic_p);
        *ic_p = NULL;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (counts)
            (*ic_p)[i] = counts[i] < 0 ? -1 : (int)counts[i];
        if (displs)
            (*id_p)[i] = (int)displs[i];
    }
    return 1;
}

/* The int arrays of a call: both sides' counts and displacements. */
typedef struct px_big_arrays {
    int *sc, *sd, *rc, *rd;
} px_big_arrays_t;

static void px_big_arrays_free(px_big_arrays_t *a)
{
    free(a->sc);
    free(a->sd);
    free(a->rc);
    free(a->rd);
}

/* Both sides as int arrays (sn and rn entries): 1, 0 or -1 as px_big_ints. */
static int px_big_arrays(px_big_arrays_t *a, int sn, const MPI_Count *sc, const MPI_Aint *sd,
                         int rn, const MPI_Count *rc, const MPI_Aint *rd)
{
    memset(a, 0, sizeof(*a));
    int ok = px_big_ints(sn, sc, sd, &a->sc, &a->sd);
    if (ok == 1)
        ok = px_big_ints(rn, rc, rd, &a->rc, &a->rd);
    if (ok != 1)
        px_big_arrays_free(a);
    return ok;
}

/* ---------- the alltoallw that stands for a large v-collective ---------- */

/* One side: per peer an int count (0 or 1), displacement 0 and a datatype
 * that holds the peer's whole block at its displacement. */
typedef struct px_big_w {
    int n;
    int *counts, *displs;
    MPI_Aint *adispls; /* zeros, for the neighbourhood alltoallw */
    MPI_Datatype *types;
} px_big_w_t;

static int px_big_w_init(px_big_w_t *w, int n)
{
    size_t m = (size_t)(n > 0 ? n : 1);
    w->n = n;
    w->counts = calloc(m, sizeof(int));
    w->displs = calloc(m, sizeof(int));
    w->adispls = calloc(m, sizeof(MPI_Aint));
    w->types = malloc(m * sizeof(MPI_Datatype));
    for (int i = 0; w->types && i < n; i++)
        w->types[i] = MPI_BYTE;
    return w->counts && w->displs && w->adispls && w->types ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void px_big_w_free(px_big_w_t *w)
{
    for (int i = 0; w->types && i < w->n; i++)
        if (w->counts[i])
            PMPI_Type_free(&w->types[i]);
    free(w->counts);
    free(w->displs);
    free(w->adispls);
    free(w->types);
}

/* Peer i's block: count elements of t at byte displacement disp. */
static int px_big_w_set(px_big_w_t *w, int i, MPI_Count count, MPI_Aint disp, MPI_Datatype t)
{
    if (count <= 0)
        return count < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;
    px_mpi_dt_t *d = px_mpi_dt_get(t);
    if (!d || !d->committed)
        return MPI_ERR_TYPE;
    MPI_Datatype block;
    int rc = count > INT_MAX ? px_mpi_big_type(count, t, &block)
                             : PMPI_Type_contiguous((int)count, t, &block);
    if (rc != MPI_SUCCESS)
        return rc;
    int one = 1;
    rc = PMPI_Type_create_struct(1, &one, &disp, &block, &w->types[i]);
    PMPI_Type_free(&block);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&w->types[i]);
    if (rc == MPI_SUCCESS)
        w->counts[i] = 1;
    return rc;
}

/* A v-side: counts[i] elements of t at displs[i] extents of t (w: types[i]
 * at displs[i] bytes); peers with skip set take nothing. */
static int px_big_w_side(px_big_w_t *w, const MPI_Count *counts, const MPI_Aint *displs,
                         MPI_Datatype t, const MPI_Datatype *types, int skip)
{
    MPI_Aint lb, extent = 1;
    if (!types && PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < w->n && rc == MPI_SUCCESS; i++)
        if (i != skip)
            rc = px_big_w_set(w, i, counts[i], displs[i] * extent, types ? types[i] : t);
    return rc;
}

/* Which collective a px_big_v call stands for: the neighbourhood ones (the
 * others take large counts as they are, coll/coll_mpi.c). */
enum {
    PX_BIG_NBR_ALLGATHERV,
    PX_BIG_NBR_ALLTOALLV,
    PX_BIG_NBR_ALLTOALLW,
};

/* The arguments of any of them: allgatherv's one block is scount/st. */
typedef struct px_big_v {
    int kind;
    const void *sbuf;
    MPI_Count scount;
    const MPI_Count *scounts;
    const MPI_Aint *sdispls;
    MPI_Datatype st;
    const MPI_Datatype *sts;
    void *rbuf;
    const MPI_Count *rcounts;
    const MPI_Aint *rdispls;
    MPI_Datatype rt;
    const MPI_Datatype *rts;
    MPI_Comm comm;
} px_big_v_t;

/* The alltoallw's two sides for a v-collective, and its buffers: a side
 * with nothing to move gets the other side's buffer (never MPI_IN_PLACE,
 * which means something else to an alltoallw). */
static int px_big_v_sides(const px_big_v_t *v, px_mpi_comm_t *c, px_big_w_t *s, px_big_w_t *r,
                          const void **sbuf_p, void **rbuf_p)
{
    int me = c->is_inter ? -1 : c->rank, rc = MPI_SUCCESS;
    int in_place = v->sbuf == MPI_IN_PLACE || v->rbuf == MPI_IN_PLACE;
    *sbuf_p = v->sbuf == MPI_IN_PLACE ? v->rbuf : v->sbuf;
    *rbuf_p = v->rbuf == MPI_IN_PLACE ? (void *)v->sbuf : v->rbuf;
    switch (v->kind) {
    case PX_BIG_NBR_ALLGATHERV:
        rc = px_big_w_side(r, v->rcounts, v->rdispls, v->rt, NULL, in_place ? me : -1);
        for (int i = 0; i < s->n && rc == MPI_SUCCESS; i++) {
            if (!in_place) {
                rc = px_big_w_set(s, i, v->scount, 0, v->st);
            } else if (i != me) { /* every peer gets this rank's block of the receive buffer */
                MPI_Aint lb, extent;
                PMPI_Type_get_extent(v->rt, &lb, &extent);
                rc = px_big_w_set(s, i, v->rcounts[me], v->rdispls[me] * extent, v->rt);
            }
        }
        break;
    default: /* alltoallv and alltoallw */
        rc = px_big_w_side(r, v->rcounts, v->rdispls, v->rt, v->rts, -1);
        if (rc == MPI_SUCCESS && !in_place)
            rc = px_big_w_side(s, v->scounts, v->sdispls, v->st, v->sts, -1);
        *sbuf_p = v->sbuf; /* an alltoallw in place is one */
        break;
    }
    return rc;
}

/* How many blocks each side has: one per peer, or per neighbour. */
static int px_big_peers(px_mpi_comm_t *c, int nbr, int *ns, int *nr, const char *fn)
{
    int rc = MPI_SUCCESS;
    *ns = *nr = px_mpi_comm_peer_size(c);
    if (nbr) {
        px_mpi_topo_t *t = px_mpi_topo_of(c, 0, fn, &rc);
        if (!t)
            return rc;
        *ns = t->outdeg;
        *nr = t->indeg;
    }
    return MPI_SUCCESS;
}

static int px_big_v_w(const px_big_v_t *v, px_mpi_comm_t *c, MPI_Request *req, const char *fn)
{
    int ns, nr, rc = px_big_peers(c, 1, &ns, &nr, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    px_big_w_t s, r;
    const void *sbuf;
    void *rbuf;
    rc = px_big_w_init(&s, ns);
    if (px_big_w_init(&r, nr) != MPI_SUCCESS)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = px_big_v_sides(v, c, &s, &r, &sbuf, &rbuf);
    if (rc != MPI_SUCCESS) {
        px_big_w_free(&s);
        px_big_w_free(&r);
        return px_mpi_error(c, rc, fn, "invalid arguments or out of memory");
    }
    if (req)
        rc = PMPI_Ineighbor_alltoallw(sbuf, s.counts, s.adispls, s.types, rbuf, r.counts, r.adispls,
                                      r.types, v->comm, req);
    else
        rc = PMPI_Neighbor_alltoallw(sbuf, s.counts, s.adispls, s.types, rbuf, r.counts, r.adispls,
                                     r.types, v->comm);
    px_big_w_free(&s);
    px_big_w_free(&r);
    return rc;
}

/* A neighbourhood v-collective: its int function when every count and
 * displacement fits, else a neighbourhood alltoallw (the transfers match
 * block by block whatever entry point each rank took,
 * topo/topo_neighbor.c). */
static int px_big_v(const px_big_v_t *v, MPI_Request *req, const char *fn)
{
    px_mpi_comm_t *c = px_mpi_comm_get(v->comm);
    if (!c)
        return px_mpi_error(NULL, MPI_ERR_COMM, fn, "invalid communicator");
    int ns, nr, rc = px_big_peers(c, 1, &ns, &nr, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    px_big_arrays_t a;
    int two = v->kind != PX_BIG_NBR_ALLGATHERV;
    int w = v->kind == PX_BIG_NBR_ALLTOALLW; /* byte displacements stay MPI_Aint */
    int ok = px_big_arrays(&a, two ? ns : 0, v->scounts, w ? NULL : v->sdispls, nr, v->rcounts,
                           w ? NULL : v->rdispls);
    if (ok < 0)
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    if (!ok)
        return px_big_v_w(v, c, req, fn);
    px_mpi_big_t b;
    rc = px_mpi_big_of(v->scount, v->st, &b, fn);
    if (rc == MPI_SUCCESS) {
        switch (v->kind) {
        case PX_BIG_NBR_ALLGATHERV:
            rc = req ? PMPI_Ineighbor_allgatherv(v->sbuf, b.count, b.type, v->rbuf, a.rc, a.rd,
                                                 v->rt, v->comm, req)
                     : PMPI_Neighbor_allgatherv(v->sbuf, b.count, b.type, v->rbuf, a.rc, a.rd,
                                                v->rt, v->comm);
            break;
        case PX_BIG_NBR_ALLTOALLV:
            rc = req ? PMPI_Ineighbor_alltoallv(v->sbuf, a.sc, a.sd, v->st, v->rbuf, a.rc, a.rd,
                                                v->rt, v->comm, req)
                     : PMPI_Neighbor_alltoallv(v->sbuf, a.sc, a.sd, v->st, v->rbuf, a.rc, a.rd,
                                               v->rt, v->comm);
            break;
        default:
            rc = req ? PMPI_Ineighbor_alltoallw(v->sbuf, a.sc, v->sdispls, v->sts, v->rbuf, a.rc,
                                                v->rdispls, v->rts, v->comm, req)
                     : PMPI_Neighbor_alltoallw(v->sbuf, a.sc, v->sdispls, v->sts, v->rbuf, a.rc,
                                               v->rdispls, v->rts, v->comm);
            break;
        }
        px_mpi_big_free(&b);
    }
    px_big_arrays_free(&a);
    return rc;
}

/* clang-format off */
/* The blocking and nonblocking entry points of a v-collective: params is
 * the parameter list without the request, init the px_big_v_t it makes. */
#define PX_BIG_V(name, iname, params, ...)                                                                \
    PX_PMPI(MPI_##name##_c) params                                                                 \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        px_big_v_t v = {__VA_ARGS__};                                                              \
        return px_big_v(&v, NULL, "MPI_" #name "_c");                                              \
    }                                                                                              \
    PX_WEAK(MPI_##name##_c)                                                                        \
    PX_PMPI(MPI_##iname##_c)(PX_BIG_EXPAND params, MPI_Request *req)                               \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        px_big_v_t v = {__VA_ARGS__};                                                              \
        if (!req)                                                                                  \
            return px_mpi_error(px_mpi_comm_get(comm), MPI_ERR_ARG, "MPI_" #iname "_c",           \
                                "null request pointer");                                           \
        return px_big_v(&v, req, "MPI_" #iname "_c");                                              \
    }                                                                                              \
    PX_WEAK(MPI_##iname##_c)
/* clang-format on */

PX_BIG_V(Neighbor_allgatherv, Ineighbor_allgatherv,
         (const void *sbuf, MPI_Count scount, MPI_Datatype st, void *rbuf,
          const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rt, MPI_Comm comm),
         .kind = PX_BIG_NBR_ALLGATHERV, .sbuf = sbuf, .scount = scount, .st = st, .rbuf = rbuf,
         .rcounts = rcounts, .rdispls = displs, .rt = rt, .comm = comm)
PX_BIG_V(Neighbor_alltoallv, Ineighbor_alltoallv,
         (const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype st,
          void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rt,
          MPI_Comm comm),
         .kind = PX_BIG_NBR_ALLTOALLV, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls,
         .st = st, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rt = rt, .comm = comm)
PX_BIG_V(Neighbor_alltoallw, Ineighbor_alltoallw,
         (const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
          const MPI_Datatype sts[], void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
          const MPI_Datatype rts[], MPI_Comm comm),
         .kind = PX_BIG_NBR_ALLTOALLW, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls,
         .sts = sts, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rts = rts, .comm = comm)

/* ---------- reduce-scatter ---------- */

/* Int counts when every block and their sum fit; else one reduction to
 * each rank in turn (the counts are the same at every rank, so all take
 * the same way). In place, a rank's block is reduced where it lies in the
 * receive buffer and moved to its start afterwards, which only a blocking
 * call can do. */
static int px_big_rs(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Count rcount,
                     MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    px_mpi_comm_t *c = px_mpi_comm_get(comm);
    if (!c)
        return px_mpi_error(NULL, MPI_ERR_COMM, fn, "invalid communicator");
    if (!rcounts && rcount <= INT_MAX && rcount * c->size <= INT_MAX)
        return req ? PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount < 0 ? -1 : (int)rcount, dt, op,
                                                comm, req)
                   : PMPI_Reduce_scatter_block(sbuf, rbuf, rcount < 0 ? -1 : (int)rcount, dt, op,
                                               comm);
    MPI_Count total = 0;
    for (int i = 0; rcounts && i < c->size; i++)
        total += rcounts[i];
    int *ic, *id, ok = 0;
    if (rcounts && total <= INT_MAX && (ok = px_big_ints(c->size, rcounts, NULL, &ic, &id)) == 1) {
        int rc = req ? PMPI_Ireduce_scatter(sbuf, rbuf, ic, dt, op, comm, req)
                     : PMPI_Reduce_scatter(sbuf, rbuf, ic, dt, op, comm);
        free(ic);
        return rc;
    }
    MPI_Aint lb, extent;
    if (ok < 0 || c->is_inter || (sbuf == MPI_IN_PLACE && req) ||
        PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS)
        return px_mpi_error(c, ok < 0 ? MPI_ERR_NO_MEM : MPI_ERR_COUNT, fn,
                            ok < 0 ? "out of memory"
                                   : "more than INT_MAX elements in all: not on an "
                                     "inter-communicator, in place only when blocking");
    MPI_Request *parts = req ? malloc(sizeof(*parts) * (size_t)c->size) : NULL;
    if (req && !parts)
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    MPI_Aint off = 0;
    int rc = MPI_SUCCESS, i = 0;
    for (; i < c->size && rc == MPI_SUCCESS; i++) {
        MPI_Count n = rcounts ? rcounts[i] : rcount;
        const void *in = px_big_at(sbuf == MPI_IN_PLACE ? rbuf : sbuf, off);
        void *out = i != c->rank ? NULL : sbuf == MPI_IN_PLACE ? px_big_at(rbuf, off) : rbuf;
        if (i == c->rank && sbuf == MPI_IN_PLACE)
            in = MPI_IN_PLACE;
        rc = req ? PMPI_Ireduce_c(in, out, n, dt, op, i, comm, &parts[i])
                 : PMPI_Reduce_c(in, out, n, dt, op, i, comm);
        if (rc == MPI_SUCCESS && i == c->rank && sbuf == MPI_IN_PLACE && off)
            memmove(rbuf, out, (size_t)n * (size_t)extent);
        off += (MPI_Aint)n * extent;
    }
    if (req && rc != MPI_SUCCESS)
        PMPI_Waitall(i - 1, parts, MPI_STATUSES_IGNORE);
    else if (req)
        rc = px_big_group(comm, parts, c->size, req, fn);
    free(parts);
    return rc;
}

PX_PMPI(MPI_Reduce_scatter_block_c)
(const void *sbuf, void *rbuf, MPI_Count rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_big_rs(sbuf, rbuf, NULL, rcount, dt, op, comm, NULL, "MPI_Reduce_scatter_block_c");
}
PX_WEAK(MPI_Reduce_scatter_block_c)

PX_PMPI(MPI_Ireduce_scatter_block_c)
(const void *sbuf, void *rbuf, MPI_Count rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
 MPI_Request *req)
{
    PX_CS_ENTER();
    if (!req)
        return px_mpi_error(px_mpi_comm_get(comm), MPI_ERR_ARG, "MPI_Ireduce_scatter_block_c",
                            "null request pointer");
    return px_big_rs(sbuf, rbuf, NULL, rcount, dt, op, comm, req, "MPI_Ireduce_scatter_block_c");
}
PX_WEAK(MPI_Ireduce_scatter_block_c)

PX_PMPI(MPI_Reduce_scatter_c)
(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    PX_CS_ENTER();
    if (!rcounts)
        return px_mpi_error(px_mpi_comm_get(comm), MPI_ERR_ARG, "MPI_Reduce_scatter_c",
                            "null receive counts");
    return px_big_rs(sbuf, rbuf, rcounts, 0, dt, op, comm, NULL, "MPI_Reduce_scatter_c");
}
PX_WEAK(MPI_Reduce_scatter_c)

PX_PMPI(MPI_Ireduce_scatter_c)
(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
 MPI_Request *req)
{
    PX_CS_ENTER();
    if (!rcounts || !req)
        return px_mpi_error(px_mpi_comm_get(comm), MPI_ERR_ARG, "MPI_Ireduce_scatter_c",
                            "null receive counts or request pointer");
    return px_big_rs(sbuf, rbuf, rcounts, 0, dt, op, comm, req, "MPI_Ireduce_scatter_c");
}
PX_WEAK(MPI_Ireduce_scatter_c)

/* ---------- windows and files: the _c calls of MPI_Aint arguments ---------- */

/* A displacement unit is an int inside; a larger one is refused. */
static int px_big_disp_unit(MPI_Aint disp_unit, MPI_Comm comm, const char *fn)
{
    if (disp_unit <= INT_MAX)
        return MPI_SUCCESS;
    return px_mpi_error(px_mpi_comm_get(comm), MPI_ERR_DISP, fn,
                        "displacement unit %lld above INT_MAX", (long long)disp_unit);
}

PX_PMPI(MPI_Win_create_c)
(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    PX_CS_ENTER();
    int rc = px_big_disp_unit(disp_unit, comm, "MPI_Win_create_c");
    return rc ? rc : PMPI_Win_create(base, size, (int)disp_unit, info, comm, win);
}
PX_WEAK(MPI_Win_create_c)

PX_PMPI(MPI_Win_allocate_c)
(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    PX_CS_ENTER();
    int rc = px_big_disp_unit(disp_unit, comm, "MPI_Win_allocate_c");
    return rc ? rc : PMPI_Win_allocate(size, (int)disp_unit, info, comm, baseptr, win);
}
PX_WEAK(MPI_Win_allocate_c)

PX_PMPI(MPI_Win_allocate_shared_c)
(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    PX_CS_ENTER();
    int rc = px_big_disp_unit(disp_unit, comm, "MPI_Win_allocate_shared_c");
    return rc ? rc : PMPI_Win_allocate_shared(size, (int)disp_unit, info, comm, baseptr, win);
}
PX_WEAK(MPI_Win_allocate_shared_c)

PX_PMPI(MPI_Win_shared_query_c)
(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    PX_CS_ENTER();
    int du = 0;
    int rc = PMPI_Win_shared_query(win, rank, size, disp_unit ? &du : NULL, baseptr);
    if (rc == MPI_SUCCESS)
        *disp_unit = du;
    return rc;
}
PX_WEAK(MPI_Win_shared_query_c)

PX_PMPI(MPI_File_get_type_extent_c)(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    PX_CS_ENTER();
    MPI_Aint e = 0;
    int rc = PMPI_File_get_type_extent(fh, datatype, extent ? &e : NULL);
    if (rc == MPI_SUCCESS)
        *extent = e;
    return rc;
}
PX_WEAK(MPI_File_get_type_extent_c)
