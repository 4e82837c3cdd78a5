/* Collective data access: two-phase collective buffering (aggregators,
 * file domains, rounds of cb_buffer_size), the calls that use it
 * (_all, _at_all, _ordered), their split (_begin/_end) and nonblocking
 * forms. */
#include "io_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

uint64_t px_mpi_io_stats[PX_IO_STAT_N];

/* What every process tells the others at the start of a collective
 * access. */
typedef struct {
    int64_t err;    /* MPI error class of this process's arguments, 0 if fine */
    int64_t lo, hi; /* the file range it touches (lo == hi: none) */
    int64_t sorted; /* its pieces do not overlap and go forwards */
    int64_t pieces; /* how many contiguous pieces, of how many bytes */
    int64_t bytes;
} px_io_range_t;

/* A piece's share of one aggregator's window in one round. */
typedef struct {
    int64_t off, len;
    MPI_Aint spos; /* where its data is in the stream */
} px_io_sub_t;

typedef struct {
    int64_t off, len;
    char *data;
} px_io_ent_t;

static int px_io_ent_cmp(const void *a, const void *b)
{
    const px_io_ent_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Whether the processes' ranges interleave (collective buffering pays). */
static int px_io_interleaved(const px_io_range_t *all, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (all[i].lo < all[i].hi && all[j].lo < all[j].hi && all[i].lo < all[j].hi &&
                all[j].lo < all[i].hi)
                return 1;
    return 0;
}

/* The aggregator's side of a write round: the pieces every process sent
 * for its window, written with one pwrite (after reading the window when
 * the pieces leave holes in it). Returns an MPI error class (raised). */
static int px_io_agg_write(px_io_file_t *f, px_io_ent_t *e, MPI_Aint ne, const char *fn)
{
    if (!ne)
        return MPI_SUCCESS;
    px_io_ent_t *s = malloc(sizeof(*s) * (size_t)ne);
    struct iovec *iov = malloc(sizeof(*iov) * (size_t)ne);
    if (!s || !iov) {
        free(s);
        free(iov);
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    memcpy(s, e, sizeof(*s) * (size_t)ne);
    qsort(s, (size_t)ne, sizeof(*s), px_io_ent_cmp);
    int64_t lo = s[0].off, hi = lo, gaps = 0, tiles = 1;
    for (MPI_Aint i = 0; i < ne; i++) {
        if (s[i].off > hi)
            gaps = 1;
        if (s[i].off != hi)
            tiles = 0; /* a hole or an overlap */
        if (s[i].off + s[i].len > hi)
            hi = s[i].off + s[i].len;
        iov[i] = (struct iovec){s[i].data, (size_t)s[i].len};
    }
    int rc = MPI_SUCCESS, err = 0, locked = 0;
    if (tiles) {
        /* the pieces cover the window once: written from where they came in */
        ssize_t w = px_io_pwritev(f, iov, (int)ne, (off_t)lo);
        err = w < 0 ? (int)w : 0;
        goto done;
    }
    char *buf = px_io_scratch(f, PX_IO_SCRATCH_WINDOW, (size_t)(hi - lo));
    if (!buf) {
        free(s);
        free(iov);
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    if (gaps && f->can_read) {
        /* read-modify-write: nobody else's write may fall in a hole meanwhile */
        err = f->drv->lock(f->fd, (off_t)lo, (off_t)(hi - lo), 1);
        locked = !err;
        ssize_t r = err ? err : f->drv->pread(f->fd, buf, (size_t)(hi - lo), (off_t)lo);
        if (r < 0)
            err = (int)r;
        else if (r < hi - lo)
            memset(buf + r, 0, (size_t)(hi - lo - r));
    }
    /* in the order the processes sent them: a later rank's bytes win */
    for (MPI_Aint i = 0; i < ne && !err; i++)
        memcpy(buf + (e[i].off - lo), e[i].data, (size_t)e[i].len);
    if (!err && (!gaps || f->can_read)) {
        ssize_t w = px_io_pwrite(f, buf, (size_t)(hi - lo), (off_t)lo);
        err = w < 0 ? (int)w : 0;
    } else if (!err) {
        /* a write-only file that cannot be read: the covered runs one by one */
        for (MPI_Aint i = 0; i < ne && !err;) {
            int64_t a = s[i].off, b = s[i].off + s[i].len;
            for (i++; i < ne && s[i].off <= b; i++)
                if (s[i].off + s[i].len > b)
                    b = s[i].off + s[i].len;
            ssize_t w = px_io_pwrite(f, buf + (a - lo), (size_t)(b - a), (off_t)a);
            err = w < 0 ? (int)w : 0;
        }
    }
    if (locked)
        f->drv->unlock(f->fd, (off_t)lo, (off_t)(hi - lo));
done:
    if (err)
        rc = px_io_error(f, px_io_errno_class(err), fn, "%s: collective write at %lld: %s", f->name,
                         (long long)lo, strerror(-err));
    free(s);
    free(iov);
    return rc;
}

/* The aggregator's side of a read round: the pieces asked for (e, in the
 * order asked) into out, one after the other. Pieces that cover the window
 * once are read straight into place; otherwise the window is read whole
 * and they are copied out of it. Past the end of the file: zeros. Returns
 * an MPI error class (raised). */
static int px_io_agg_read(px_io_file_t *f, const px_io_ent_t *e, MPI_Aint ne, char *out, int64_t lo,
                          int64_t hi, const char *fn)
{
    px_io_ent_t *s = malloc(sizeof(*s) * (size_t)ne);
    struct iovec *iov = malloc(sizeof(*iov) * (size_t)ne);
    if (!s || !iov) {
        free(s);
        free(iov);
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    char *at = out;
    for (MPI_Aint i = 0; i < ne; i++) { /* where each piece goes */
        s[i] = (px_io_ent_t){e[i].off, e[i].len, at};
        at += e[i].len;
    }
    qsort(s, (size_t)ne, sizeof(*s), px_io_ent_cmp);
    int tiles = 1;
    for (MPI_Aint i = 0; i < ne; i++) {
        if (s[i].off != (i ? s[i - 1].off + s[i - 1].len : lo))
            tiles = 0;
        iov[i] = (struct iovec){s[i].data, (size_t)s[i].len};
    }
    ssize_t r;
    if (tiles) {
        r = f->drv->preadv(f->fd, iov, (int)ne, (off_t)lo);
        for (MPI_Aint i = 0; r >= 0 && i < ne; i++) { /* past the end: zeros */
            int64_t got = r - (s[i].off - lo);
            if (got < s[i].len)
                memset(s[i].data + (got > 0 ? got : 0), 0,
                       (size_t)(s[i].len - (got > 0 ? got : 0)));
        }
    } else {
        char *buf = px_io_scratch(f, PX_IO_SCRATCH_WINDOW, (size_t)(hi - lo));
        r = buf ? f->drv->pread(f->fd, buf, (size_t)(hi - lo), (off_t)lo) : -ENOMEM;
        if (r >= 0 && r < hi - lo)
            memset(buf + r, 0, (size_t)(hi - lo - r));
        for (MPI_Aint i = 0; r >= 0 && i < ne; i++)
            memcpy(s[i].data, buf + (s[i].off - lo), (size_t)s[i].len);
    }
    free(s);
    free(iov);
    if (r < 0)
        return px_io_error(f, px_io_errno_class((int)r), fn, "%s: collective read at %lld: %s",
                           f->name, (long long)lo, strerror((int)-r));
    return MPI_SUCCESS;
}

/* One alltoallv of bytes on f's communicator: the receive displacements
 * from the counts, into f's receive scratch buffer. */
static int px_io_alltoallv(px_io_file_t *f, const char *sbuf, const int *scnt, const int *sdsp,
                           char **rbuf_p, const int *rcnt, int *rdsp)
{
    px_mpi_comm_t *c = f->comm;
    int64_t tot = 0;
    for (int r = 0; r < c->size; r++) {
        rdsp[r] = (int)tot;
        tot += rcnt[r];
    }
    int big = tot > INT_MAX, any = 0;
    if (px_mpi_coll_allreduce(&big, &any, 1, MPI_INT, MPI_MAX, c) != MPI_SUCCESS || any)
        return MPI_ERR_IO;
    *rbuf_p = px_io_scratch(f, PX_IO_SCRATCH_RECV, (size_t)tot);
    if (!*rbuf_p)
        return MPI_ERR_NO_MEM;
    return PMPI_Alltoallv(sbuf, scnt, sdsp, MPI_BYTE, *rbuf_p, rcnt, rdsp, MPI_BYTE, c->handle);
}

/* Two-phase collective buffering. The range every process touches is cut
 * into one file domain per aggregator (aligned to cb_block_size), each
 * domain handled in rounds of at most cb_buffer_size bytes; in a round
 * each process sends every aggregator its pieces (and for writes their
 * data) in that aggregator's window, through an alltoallv on the file's
 * communicator, and the aggregator does one large access for the window.
 * Reads go back the same way. p: this process's pieces (sorted), spre:
 * where each piece's data is in the stream. */
static int px_io_two_phase(px_io_file_t *f, const px_io_piece_t *p, MPI_Aint n, char *stream,
                           int write, const px_io_range_t *all, const char *fn)
{
    px_mpi_comm_t *c = f->comm;
    int P = c->size, A = f->naggr, me = -1;
    int64_t gmin = INT64_MAX, gmax = 0;
    for (int r = 0; r < P; r++)
        if (all[r].lo < all[r].hi) {
            if (all[r].lo < gmin)
                gmin = all[r].lo;
            if (all[r].hi > gmax)
                gmax = all[r].hi;
        }
    int64_t align = f->hints.cb_block_size, cbs = f->hints.cb_buffer_size;
    /* unless the hints fix them: one aggregator per cb_buffer_size of the
     * range, so that a large access is spread over the nodes' processes
     * (and cores) in one or few rounds instead of many rounds of one
     * process per node */
    if (f->naggr_max > A && gmax > gmin) {
        int64_t want = (gmax - gmin + cbs - 1) / cbs;
        A = want < A ? A : want > f->naggr_max ? f->naggr_max : (int)want;
    }
    for (int i = 0; i < A; i++)
        if (f->aggr[i] == c->rank)
            me = i;
    int64_t base = gmin - gmin % align;
    int64_t dlen = (gmax - base + A - 1) / A;
    dlen = (dlen + align - 1) / align * align;
    int64_t nrounds = (dlen + cbs - 1) / cbs;
    px_debug("io", "%s: two-phase %s of [%lld, %lld): %d aggregators, %lld rounds", f->name,
             write ? "write" : "read", (long long)gmin, (long long)gmax, A, (long long)nrounds);

    MPI_Aint *spre = malloc(sizeof(MPI_Aint) * (size_t)(n + 1));
    MPI_Aint *cur = calloc((size_t)A, sizeof(MPI_Aint));
    MPI_Aint *sub_start = malloc(sizeof(MPI_Aint) * (size_t)(A + 1));
    int *scnt = calloc((size_t)P, sizeof(int)), *rcnt = calloc((size_t)P, sizeof(int));
    int *sdsp = calloc((size_t)P, sizeof(int)), *rdsp = calloc((size_t)P, sizeof(int));
    int64_t *wlo = malloc(sizeof(int64_t) * (size_t)A), *whi = malloc(sizeof(int64_t) * (size_t)A);
    MPI_Aint sub_cap = 64, nsub = 0;
    px_io_sub_t *sub = malloc(sizeof(*sub) * (size_t)sub_cap);
    /* out of memory here: the first round's agreement below tells the
     * others, so that every process returns the error (none waits) */
    int nomem =
        !spre || !cur || !sub_start || !scnt || !rcnt || !sdsp || !rdsp || !sub || !wlo || !whi;
    if (!nomem) {
        spre[0] = 0;
        for (MPI_Aint j = 0; j < n; j++)
            spre[j + 1] = spre[j] + p[j].len;
    }

    int rc = MPI_SUCCESS, io_rc = MPI_SUCCESS;
    char *sbuf = NULL, *rbuf = NULL;
    px_io_ent_t *ent = NULL;
    for (int64_t round = 0; round < nrounds && rc == MPI_SUCCESS; round++) {
        int64_t stot = 0;
        if (nomem)
            rc = MPI_ERR_NO_MEM;
        else {
            /* my pieces in each aggregator's window */
            nsub = 0;
            for (int i = 0; i < A; i++) {
                int64_t dlo = base + i * dlen, dhi = dlo + dlen;
                if (dlo < gmin)
                    dlo = gmin;
                if (dhi > gmax)
                    dhi = gmax;
                wlo[i] = dlo + round * cbs;
                whi[i] = wlo[i] + cbs < dhi ? wlo[i] + cbs : dhi;
                sub_start[i] = nsub;
                if (wlo[i] >= whi[i])
                    continue;
                while (cur[i] < n && p[cur[i]].off + p[cur[i]].len <= wlo[i])
                    cur[i]++;
                for (MPI_Aint j = cur[i]; j < n && p[j].off < whi[i]; j++) {
                    int64_t s = p[j].off > wlo[i] ? p[j].off : wlo[i];
                    int64_t e = p[j].off + p[j].len < whi[i] ? p[j].off + p[j].len : whi[i];
                    if (s >= e)
                        continue;
                    if (nsub == sub_cap) {
                        px_io_sub_t *ns = realloc(sub, sizeof(*sub) * (size_t)(sub_cap * 2));
                        if (!ns) {
                            rc = MPI_ERR_NO_MEM;
                            break;
                        }
                        sub = ns;
                        sub_cap *= 2;
                    }
                    sub[nsub++] = (px_io_sub_t){s, e - s, spre[j] + (MPI_Aint)(s - p[j].off)};
                }
            }
            sub_start[A] = nsub;
            /* requests: count, (offset, length) pairs, and for writes the data */
            memset(scnt, 0, sizeof(int) * (size_t)P);
            for (int i = 0; i < A && rc == MPI_SUCCESS; i++) {
                int64_t k = sub_start[i + 1] - sub_start[i], bytes = 8 + 16 * k;
                if (write)
                    for (MPI_Aint s = sub_start[i]; s < sub_start[i + 1]; s++)
                        bytes += sub[s].len;
                if (k == 0)
                    bytes = 0;
                if (bytes > INT_MAX)
                    rc = MPI_ERR_IO;
                scnt[f->aggr[i]] = (int)bytes;
                stot += bytes;
            }
            if (stot > INT_MAX)
                rc = MPI_ERR_IO;
        }
        int mine = rc, worst = 0;
        if (px_mpi_coll_allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, c) != MPI_SUCCESS ||
            worst != MPI_SUCCESS) {
            rc = worst == MPI_ERR_NO_MEM ? MPI_ERR_NO_MEM : MPI_ERR_IO;
            break;
        }
        sbuf = px_io_scratch(f, PX_IO_SCRATCH_SEND, (size_t)stot);
        if (!sbuf) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        int64_t pos = 0;
        for (int r = 0; r < P; r++)
            sdsp[r] = 0;
        for (int i = 0; i < A; i++) {
            int64_t k = sub_start[i + 1] - sub_start[i];
            sdsp[f->aggr[i]] = (int)pos;
            if (!k)
                continue;
            memcpy(sbuf + pos, &k, 8);
            pos += 8;
            for (MPI_Aint s = sub_start[i]; s < sub_start[i + 1]; s++) {
                memcpy(sbuf + pos, &sub[s].off, 8);
                memcpy(sbuf + pos + 8, &sub[s].len, 8);
                pos += 16;
            }
            if (write)
                for (MPI_Aint s = sub_start[i]; s < sub_start[i + 1]; s++) {
                    memcpy(sbuf + pos, stream + sub[s].spos, (size_t)sub[s].len);
                    pos += sub[s].len;
                }
        }
        rc = PMPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, c->handle);
        if (rc != MPI_SUCCESS)
            break;
        rc = px_io_alltoallv(f, sbuf, scnt, sdsp, &rbuf, rcnt, rdsp);
        if (rc != MPI_SUCCESS)
            break;

        /* the aggregator: every process's pieces of its window */
        MPI_Aint ne = 0, ecap = 0;
        if (me >= 0) {
            for (int r = 0; r < P; r++) {
                if (!rcnt[r])
                    continue;
                int64_t k;
                memcpy(&k, rbuf + rdsp[r], 8);
                ecap += (MPI_Aint)k;
            }
            free(ent);
            ent = malloc(sizeof(*ent) * (size_t)(ecap ? ecap : 1));
            if (!ent) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
            for (int r = 0; r < P; r++) {
                if (!rcnt[r])
                    continue;
                char *q = rbuf + rdsp[r];
                int64_t k;
                memcpy(&k, q, 8);
                char *data = q + 8 + 16 * k;
                for (int64_t s = 0; s < k; s++) {
                    memcpy(&ent[ne].off, q + 8 + 16 * s, 8);
                    memcpy(&ent[ne].len, q + 16 + 16 * s, 8);
                    ent[ne].data = data;
                    if (write)
                        data += ent[ne].len;
                    ne++;
                }
            }
        }
        for (MPI_Aint k = 0; k < ne; k++)
            px_mpi_io_stats[PX_IO_STAT_AGG_BYTES] += (uint64_t)ent[k].len;
        if (write) {
            if (me >= 0 && io_rc == MPI_SUCCESS)
                io_rc = px_io_agg_write(f, ent, ne, fn);
            continue;
        }
        /* reads: one pread of the window's requested range, each process's
         * bytes sent back in the order it asked */
        int64_t lo = INT64_MAX, hi = 0;
        for (MPI_Aint s = 0; s < ne; s++) {
            if (ent[s].off < lo)
                lo = ent[s].off;
            if (ent[s].off + ent[s].len > hi)
                hi = ent[s].off + ent[s].len;
        }
        memset(scnt, 0, sizeof(int) * (size_t)P);
        int64_t reply = 0;
        if (me >= 0 && ne) {
            for (int rr = 0; rr < P; rr++) {
                if (!rcnt[rr])
                    continue;
                int64_t k, bytes = 0;
                memcpy(&k, rbuf + rdsp[rr], 8);
                for (int64_t s = 0; s < k; s++) {
                    int64_t l;
                    memcpy(&l, rbuf + rdsp[rr] + 16 + 16 * s, 8);
                    bytes += l;
                }
                scnt[rr] = (int)bytes;
                reply += bytes;
            }
        }
        sbuf = px_io_scratch(f, PX_IO_SCRATCH_SEND, (size_t)reply);
        if (!sbuf) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        if (me >= 0 && ne) {
            int e = px_io_agg_read(f, ent, ne, sbuf, lo, hi, fn);
            if (e && io_rc == MPI_SUCCESS)
                io_rc = e;
        }
        pos = 0;
        for (int rr = 0; rr < P; rr++) {
            sdsp[rr] = (int)pos;
            pos += scnt[rr];
        }
        /* what comes back to me: my bytes of each aggregator's window */
        memset(rcnt, 0, sizeof(int) * (size_t)P);
        for (int i = 0; i < A; i++) {
            int64_t bytes = 0;
            for (MPI_Aint t = sub_start[i]; t < sub_start[i + 1]; t++)
                bytes += sub[t].len;
            rcnt[f->aggr[i]] = (int)bytes;
        }
        rc = px_io_alltoallv(f, sbuf, scnt, sdsp, &rbuf, rcnt, rdsp);
        if (rc != MPI_SUCCESS)
            break;
        for (int i = 0; i < A; i++) {
            char *q = rbuf + rdsp[f->aggr[i]];
            for (MPI_Aint t = sub_start[i]; t < sub_start[i + 1]; t++) {
                memcpy(stream + sub[t].spos, q, (size_t)sub[t].len);
                q += sub[t].len;
            }
        }
    }
    if (nomem)
        rc = MPI_ERR_NO_MEM; /* also when there was no round */
    free(ent);
    free(spre);
    free(cur);
    free(sub_start);
    free(scnt);
    free(rcnt);
    free(sdsp);
    free(rdsp);
    free(sub);
    free(wlo);
    free(whi);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: collective buffering failed%s", f->name,
                           rc == MPI_ERR_IO ? " (a round is too large: lower cb_buffer_size)" : "");
    return io_rc;
}

/* A collective read gets what lies before the end of the file (as it is
 * once every process has started the access): the pieces are cut there.
 * On failure nothing is read, but the process still takes part. */
static int px_io_trim_eof(px_io_file_t *f, px_io_piece_t *p, MPI_Aint *n_p, MPI_Aint *bytes_p,
                          const char *fn)
{
    off_t size = 0;
    int err = f->drv->get_size(f->fd, &size);
    MPI_Aint keep = 0, bytes = 0;
    for (; !err && keep < *n_p && p[keep].off < size; keep++) {
        if (p[keep].off + p[keep].len > size) {
            p[keep].len = size - p[keep].off;
            bytes += p[keep++].len;
            break;
        }
        bytes += p[keep].len;
    }
    *n_p = keep;
    *bytes_p = bytes;
    if (err)
        return px_io_error(f, px_io_errno_class(err), fn, "%s: size: %s", f->name, strerror(-err));
    return MPI_SUCCESS;
}

int px_io_coll(px_io_file_t *f, MPI_Offset off, void *buf, int count, MPI_Datatype dt, int write,
               int local_rc, MPI_Aint *got_p, const char *fn)
{
    int rc = local_rc;
    px_io_piece_t *p = NULL;
    MPI_Aint n = 0, bytes = 0;
    char *stream = NULL;
    int own = 0;
    *got_p = 0;
    if (rc == MPI_SUCCESS) {
        bytes = px_io_file_bytes(&f->view, dt, count);
        if (bytes && px_io_view_pieces(&f->view, off, bytes, &p, &n) != MPI_SUCCESS)
            rc = px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
        if (rc == MPI_SUCCESS && write)
            rc = px_io_stream_out(f, buf, count, dt, &stream, &own, fn);
        else if (rc == MPI_SUCCESS &&
                 px_io_stream_in_buf(f, buf, count, dt, bytes, &stream, &own) != MPI_SUCCESS)
            rc = px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    px_io_range_t me = {rc == MPI_SUCCESS ? 0 : px_mpi_error_class_of(rc), 0, 0, 1, 0, 0}, *all;
    if (rc == MPI_SUCCESS && n) {
        me.pieces = n;
        me.bytes = bytes;
        me.lo = p[0].off;
        me.hi = p[0].off + p[0].len;
        for (MPI_Aint i = 1; i < n; i++) {
            if (p[i].off < p[i - 1].off + p[i - 1].len)
                me.sorted = 0;
            if (p[i].off + p[i].len > me.hi)
                me.hi = p[i].off + p[i].len;
        }
    }
    all = malloc(sizeof(*all) * (size_t)f->comm->size);
    int crc = all ? px_mpi_coll_allgather_top(&me, all, sizeof(me), f->comm) : MPI_ERR_NO_MEM;
    int other = 0, sorted = 1, data = 0;
    int64_t pieces = 0, total = 0;
    for (int r = 0; crc == MPI_SUCCESS && r < f->comm->size; r++) {
        if (all[r].err && !other)
            other = (int)all[r].err;
        sorted &= all[r].sorted != 0;
        data |= all[r].lo < all[r].hi;
        pieces += all[r].pieces;
        total += all[r].bytes;
    }
    if (crc != MPI_SUCCESS) {
        if (rc == MPI_SUCCESS)
            rc = px_io_error(f, crc, fn, "%s: a process of the file is lost", f->name);
    } else if (other) {
        if (rc == MPI_SUCCESS)
            rc = px_io_error(f, other, fn, "%s: another process's access was refused", f->name);
    } else if (data) {
        /* automatic: two-phase when the ranges interleave in pieces
         * smaller than a block of the file system on average, which the
         * aggregators then write or read as whole blocks; pieces of a block
         * or more gain nothing from the detour and each process does its
         * own (cb_block_size: the file system's block unless set) */
        int mode = write ? f->hints.cb_write : f->hints.cb_read;
        int mixed = px_io_interleaved(all, f->comm->size);
        int small = pieces && total / pieces < f->hints.cb_block_size;
        int two = !f->atomic && sorted && mode != PX_IO_DISABLE && f->naggr > 0 &&
                  (mode == PX_IO_ENABLE || (mixed && small));
        int rc2;
        px_mpi_io_stats[two ? PX_IO_STAT_TWO_PHASE : PX_IO_STAT_DIRECT]++;
        if (two) {
            /* the aggregators read whole blocks: what lies past the end
             * of the file is cut here (a direct read stops there itself) */
            rc2 = !write && n ? px_io_trim_eof(f, p, &n, &bytes, fn) : MPI_SUCCESS;
            int rc3 = px_io_two_phase(f, p, n, stream, write, all, fn);
            if (rc2 == MPI_SUCCESS)
                rc2 = rc3;
            *got_p = rc2 == MPI_SUCCESS ? bytes : 0;
        } else {
            rc2 = px_io_pieces_rw(f, p, n, stream, write, mixed, got_p, fn);
        }
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    free(all);
    free(p);
    if (!write && stream) {
        int rc2 =
            px_io_stream_in(f, stream, own, rc == MPI_SUCCESS ? *got_p : 0, buf, count, dt, fn);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    } else if (own) {
        free(stream);
    }
    *got_p = px_io_map_bytes(&f->view, dt, *got_p, 0);
    return rc;
}

/* ---------- the calls ---------- */

/* A collective access by every process of the file: checked here, and
 * the outcome of the checks shared, so that a process with bad arguments
 * does not leave the others waiting. */
static int px_io_coll_call(MPI_File fh, MPI_Offset off, int ptr, void *buf, int count,
                           MPI_Datatype dt, int write, MPI_Status *status, const char *fn)
{
    PX_GET_FILE(f, fh, fn);
    int rc = px_io_check_data(f, write, 0, !ptr, off, buf, count, dt, fn);
    if (rc == MPI_SUCCESS && f->split)
        rc = px_io_error(f, MPI_ERR_IO, fn, "%s: a split collective access is under way", f->name);
    MPI_Aint got = 0;
    rc = px_io_coll(f, ptr ? f->fp : off, buf, count, dt, write, rc, &got, fn);
    if (rc == MPI_SUCCESS) {
        if (ptr)
            f->fp += px_io_map_bytes(&f->view, dt, got, 1) / f->view.esize;
        px_io_status_set(status, got);
    }
    return rc;
}

/* Ordered access: the shared pointer moves once by the whole amount; each
 * process's part starts after those of the lower ranks. */
static int px_io_ordered(MPI_File fh, void *buf, int count, MPI_Datatype dt, int write,
                         MPI_Status *status, const char *fn)
{
    PX_GET_FILE(f, fh, fn);
    px_mpi_comm_t *c = f->comm;
    int rc = px_io_check_data(f, write, 1, 0, 0, buf, count, dt, fn);
    MPI_Aint bytes = rc == MPI_SUCCESS ? px_io_file_bytes(&f->view, dt, count) : 0;
    if (rc == MPI_SUCCESS && f->split)
        rc = px_io_error(f, MPI_ERR_IO, fn, "%s: a split collective access is under way", f->name);
    int64_t mine = rc == MPI_SUCCESS ? bytes / f->view.esize : 0;
    int64_t *cnt = malloc(sizeof(int64_t) * (size_t)c->size);
    int crc = cnt ? px_mpi_coll_allgather_top(&mine, cnt, sizeof(mine), c) : MPI_ERR_NO_MEM;
    int64_t before = 0, total = 0;
    for (int r = 0; crc == MPI_SUCCESS && r < c->size; r++) {
        if (r < c->rank)
            before += cnt[r];
        total += cnt[r];
    }
    free(cnt);
    int64_t root[2] = {0, MPI_SUCCESS}; /* the pointer before, rank 0's outcome */
    if (crc == MPI_SUCCESS && c->rank == 0) {
        MPI_Offset at = 0;
        root[1] = px_io_shfp_fetch_add(f, total, 0, &at, fn);
        root[0] = at;
    }
    if (crc == MPI_SUCCESS)
        crc = px_mpi_coll_bcast_top(root, sizeof(root), 0, c);
    if (crc != MPI_SUCCESS && rc == MPI_SUCCESS)
        rc = px_io_error(f, crc, fn, "%s: a process of the file is lost", f->name);
    if (crc != MPI_SUCCESS)
        return rc;
    if (rc == MPI_SUCCESS && root[1] != MPI_SUCCESS)
        rc = px_io_error(f, (int)root[1], fn, "%s: cannot update the shared file pointer (%s)",
                         f->name, f->shfp_path);
    MPI_Aint got = 0;
    rc = px_io_coll(f, root[0] + before, buf, count, dt, write, rc, &got, fn);
    if (rc == MPI_SUCCESS)
        px_io_status_set(status, got);
    return rc;
}

#define PX_IO_ALL(name, write, cbuf)                                                               \
    PX_PMPI(name)                                                                                  \
    (MPI_File fh, cbuf void *buf, int count, MPI_Datatype datatype, MPI_Status *status)            \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_io_coll_call(fh, 0, 1, (void *)buf, count, datatype, write, status, #name);      \
    }                                                                                              \
    PX_WEAK(name)

#define PX_IO_AT_ALL(name, write, cbuf)                                                            \
    PX_PMPI(name)                                                                                  \
    (MPI_File fh, MPI_Offset offset, cbuf void *buf, int count, MPI_Datatype datatype,             \
     MPI_Status *status)                                                                           \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_io_coll_call(fh, offset, 0, (void *)buf, count, datatype, write, status, #name); \
    }                                                                                              \
    PX_WEAK(name)

#define PX_IO_ORDERED(name, write, cbuf)                                                           \
    PX_PMPI(name)                                                                                  \
    (MPI_File fh, cbuf void *buf, int count, MPI_Datatype datatype, MPI_Status *status)            \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_io_ordered(fh, (void *)buf, count, datatype, write, status, #name);              \
    }                                                                                              \
    PX_WEAK(name)

/* clang-format off */
PX_IO_ALL(MPI_File_read_all, 0, )
PX_IO_ALL(MPI_File_write_all, 1, const)
PX_IO_AT_ALL(MPI_File_read_at_all, 0, )
PX_IO_AT_ALL(MPI_File_write_at_all, 1, const)
PX_IO_ORDERED(MPI_File_read_ordered, 0, )
PX_IO_ORDERED(MPI_File_write_ordered, 1, const)
/* clang-format on */

/* ---------- split collectives ---------- */

/* The _begin call does the whole collective access (as ROMIO does); _end
 * hands out its status. One may be under way per file. */
enum { PX_IO_SPLIT_ALL, PX_IO_SPLIT_AT, PX_IO_SPLIT_ORDERED };

static int px_io_split_begin(MPI_File fh, int kind, MPI_Offset off, const void *buf, int count,
                             MPI_Datatype dt, int write, const char *fn)
{
    PX_GET_FILE(f, fh, fn);
    if (f->split)
        return px_io_error(f, MPI_ERR_IO, fn, "%s: a split collective access is already under way",
                           f->name);
    MPI_Status st;
    memset(&st, 0, sizeof(st));
    int rc = kind == PX_IO_SPLIT_ORDERED ? px_io_ordered(fh, (void *)buf, count, dt, write, &st, fn)
                                         : px_io_coll_call(fh, off, kind == PX_IO_SPLIT_ALL,
                                                           (void *)buf, count, dt, write, &st, fn);
    f->split = 1;
    f->split_rc = rc;
    f->split_status = st;
    f->split_buf = buf;
    return rc;
}

static int px_io_split_end(MPI_File fh, const void *buf, MPI_Status *status, const char *fn)
{
    PX_GET_FILE(f, fh, fn);
    if (!f->split)
        return px_io_error(f, MPI_ERR_IO, fn, "%s: no split collective access is under way",
                           f->name);
    if (buf != f->split_buf)
        return px_io_error(f, MPI_ERR_ARG, fn, "%s: not the buffer the _begin call was given",
                           f->name);
    f->split = 0;
    if (status != MPI_STATUS_IGNORE) {
        int e = status->MPI_ERROR;
        *status = f->split_status;
        status->MPI_ERROR = e;
    }
    return f->split_rc;
}

#define PX_IO_BEGIN(name, kind, write, cbuf)                                                       \
    PX_PMPI(name)(MPI_File fh, cbuf void *buf, int count, MPI_Datatype datatype)                   \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_io_split_begin(fh, kind, 0, buf, count, datatype, write, #name);                 \
    }                                                                                              \
    PX_WEAK(name)

#define PX_IO_AT_BEGIN(name, write, cbuf)                                                          \
    PX_PMPI(name)                                                                                  \
    (MPI_File fh, MPI_Offset offset, cbuf void *buf, int count, MPI_Datatype datatype)             \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_io_split_begin(fh, PX_IO_SPLIT_AT, offset, buf, count, datatype, write, #name);  \
    }                                                                                              \
    PX_WEAK(name)

#define PX_IO_END(name, cbuf)                                                                      \
    PX_PMPI(name)(MPI_File fh, cbuf void *buf, MPI_Status *status)                                 \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_io_split_end(fh, buf, status, #name);                                            \
    }                                                                                              \
    PX_WEAK(name)

/* clang-format off */
PX_IO_BEGIN(MPI_File_read_all_begin, PX_IO_SPLIT_ALL, 0, )
PX_IO_BEGIN(MPI_File_write_all_begin, PX_IO_SPLIT_ALL, 1, const)
PX_IO_BEGIN(MPI_File_read_ordered_begin, PX_IO_SPLIT_ORDERED, 0, )
PX_IO_BEGIN(MPI_File_write_ordered_begin, PX_IO_SPLIT_ORDERED, 1, const)
PX_IO_AT_BEGIN(MPI_File_read_at_all_begin, 0, )
PX_IO_AT_BEGIN(MPI_File_write_at_all_begin, 1, const)
PX_IO_END(MPI_File_read_all_end, )
PX_IO_END(MPI_File_write_all_end, const)
PX_IO_END(MPI_File_read_ordered_end, )
PX_IO_END(MPI_File_write_ordered_end, const)
PX_IO_END(MPI_File_read_at_all_end, )
PX_IO_END(MPI_File_write_at_all_end, const)
/* clang-format on */
