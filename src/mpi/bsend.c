/* Buffered sends: data is copied into the buffer the user attached, then
 * sent from there; segments are reclaimed when their send completes. */
#include "mpi_impl.h"

#include <stdlib.h>

typedef struct px_bseg {
    size_t off, len;
    px_mpi_req_t *req;
} px_bseg_t;

static char *px_bbuf;
static size_t px_bsize;
static px_bseg_t *px_bsegs; /* sorted by offset */
static int px_nbsegs, px_capbsegs;

static void px_bsend_reclaim(void)
{
    int k = 0;
    for (int i = 0; i < px_nbsegs; i++) {
        px_mpi_req_t *r = px_bsegs[i].req;
        if (r && px_mpi_req_is_done(r)) {
            px_mpi_req_complete(r, MPI_STATUS_IGNORE);
            px_mpi_req_free(r);
            continue;
        }
        px_bsegs[k++] = px_bsegs[i];
    }
    px_nbsegs = k;
}

/* First fit; each segment pays MPI_BSEND_OVERHEAD besides its data, as
 * the standard says. */
static int px_bsend_alloc(size_t need, size_t *off_p, int *pos_p)
{
    size_t prev_end = 0;
    for (int i = 0; i <= px_nbsegs; i++) {
        size_t next = i < px_nbsegs ? px_bsegs[i].off : px_bsize;
        if (next >= prev_end && next - prev_end >= need) {
            *off_p = prev_end;
            *pos_p = i;
            return 1;
        }
        if (i < px_nbsegs)
            prev_end = px_bsegs[i].off + px_bsegs[i].len;
    }
    return 0;
}

int px_mpi_bsend_start(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                       px_mpi_comm_t *c, px_mpi_req_t **req_p)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    size_t nbytes = (size_t)count * (size_t)d->size;
    /* a message takes its bytes and MPI_BSEND_OVERHEAD, no more (a buffer
     * sized by the standard's formula must hold it): the overhead holds
     * the padding that aligns the data to 16 bytes */
    size_t need = nbytes + MPI_BSEND_OVERHEAD;
    size_t off;
    int pos;
    unsigned idle = 0;

    *req_p = NULL;
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (!px_bbuf)
        return MPI_ERR_BUFFER;
    px_bsend_reclaim();
    while (!px_bsend_alloc(need, &off, &pos)) {
        if (px_nbsegs == 0)
            return MPI_ERR_BUFFER; /* can never fit */
        /* pending buffered sends may free room: progress them */
        px_proto_wait_step(&idle);
        px_bsend_reclaim();
        if (idle > 1000000)
            return MPI_ERR_BUFFER;
    }
    if (px_nbsegs == px_capbsegs) {
        int cap = px_capbsegs ? px_capbsegs * 2 : 16;
        px_bseg_t *s = realloc(px_bsegs, sizeof(*s) * (size_t)cap);
        if (!s)
            return MPI_ERR_NO_MEM;
        px_bsegs = s;
        px_capbsegs = cap;
    }
    char *data = px_bbuf + ((off + 15) & ~(size_t)15);
    if (d->contig)
        memcpy(data, (const char *)buf + d->true_lb, nbytes);
    else if (nbytes)
        d->pack(d, count, buf, data);
    px_mpi_req_t *r;
    int rc = px_mpi_isend_internal(&r, data, (int)nbytes, MPI_BYTE, dest, tag, c, c->ctx,
                                   PX_PROTO_MODE_STD);
    if (rc != MPI_SUCCESS)
        return rc;
    memmove(&px_bsegs[pos + 1], &px_bsegs[pos], sizeof(*px_bsegs) * (size_t)(px_nbsegs - pos));
    px_bsegs[pos] = (px_bseg_t){off, need, r};
    px_nbsegs++;
    *req_p = r;
    return MPI_SUCCESS;
}

void px_mpi_bsend_finalize(void)
{
    unsigned idle = 0;
    px_bsend_reclaim();
    while (px_nbsegs) {
        px_proto_wait_step(&idle);
        px_bsend_reclaim();
    }
}

static int px_buffer_attach(void *buffer, MPI_Count size, const char *fn)
{
    PX_CHECK_INIT(fn);
    if (size < 0 || (size && !buffer))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid buffer");
    if (px_bbuf)
        return px_mpi_error(NULL, MPI_ERR_BUFFER, fn, "a buffer is already attached");
    px_bbuf = buffer;
    px_bsize = (size_t)size;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Buffer_attach)(void *buffer, int size)
{
    PX_CS_ENTER();
    return px_buffer_attach(buffer, size, "MPI_Buffer_attach");
}
PX_WEAK(MPI_Buffer_attach)

PX_PMPI(MPI_Buffer_attach_c)(void *buffer, MPI_Count size)
{
    PX_CS_ENTER();
    return px_buffer_attach(buffer, size, "MPI_Buffer_attach_c");
}
PX_WEAK(MPI_Buffer_attach_c)

PX_PMPI(MPI_Buffer_detach_c)(void *buffer_addr, MPI_Count *size)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Buffer_detach");
    if (!buffer_addr || !size)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Buffer_detach", "null argument");
    px_mpi_bsend_finalize(); /* waits for every buffered send */
    *(void **)buffer_addr = px_bbuf;
    *size = (MPI_Count)px_bsize;
    px_bbuf = NULL;
    px_bsize = 0;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Buffer_detach_c)

PX_PMPI(MPI_Buffer_detach)(void *buffer_addr, int *size)
{
    PX_CS_ENTER();
    MPI_Count n = 0;
    int rc = PMPI_Buffer_detach_c(buffer_addr, size ? &n : NULL);
    if (rc == MPI_SUCCESS)
        *size = n > 0x7fffffff ? 0x7fffffff : (int)n;
    return rc;
}
PX_WEAK(MPI_Buffer_detach)

static int px_bsend_user(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                         MPI_Comm comm, const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    px_mpi_req_t *r;
    if (count < 0)
        return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %d", count);
    if (!d || !d->committed)
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "invalid datatype");
    if ((dest < 0 || dest >= c->size) && dest != MPI_PROC_NULL)
        return px_mpi_error(c, MPI_ERR_RANK, fn, "invalid rank %d", dest);
    if (tag < 0)
        return px_mpi_error(c, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    int rc = px_mpi_bsend_start(buf, count, dt, dest, tag, c, &r);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "%s",
                            rc == MPI_ERR_BUFFER ? "attached buffer too small or missing"
                                                 : "cannot send");
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Bsend)(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_bsend_user(buf, count, dt, dest, tag, comm, "MPI_Bsend");
}
PX_WEAK(MPI_Bsend)

PX_PMPI(MPI_Ibsend)
(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
 MPI_Request *request)
{
    PX_CS_ENTER();
    if (!request)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Ibsend", "null request pointer");
    int rc = px_bsend_user(buf, count, dt, dest, tag, comm, "MPI_Ibsend");
    if (rc != MPI_SUCCESS)
        return rc;
    px_mpi_req_t *r = px_mpi_req_new(PX_MPI_REQ_DONE);
    if (!r)
        return MPI_ERR_NO_MEM;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    *request = r->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Ibsend)
