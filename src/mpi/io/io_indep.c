/* Independent data access: explicit offsets, the individual file pointer
 * and the shared one, blocking and nonblocking; noncontiguous pieces by
 * data sieving; byte-range locks for atomic mode. */
#include "io_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

void px_io_status_set(MPI_Status *st, MPI_Aint bytes)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->count_lo = (int)bytes;
    st->count_hi_and_cancelled = (int)(((unsigned long long)bytes >> 32) << 1);
}

int px_io_check_access(px_io_file_t *f, int write, int seq_ok, const char *fn)
{
    if (write && (f->amode & MPI_MODE_RDONLY))
        return px_io_error(f, MPI_ERR_READ_ONLY, fn, "%s: opened read-only", f->name);
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return px_io_error(f, MPI_ERR_ACCESS, fn, "%s: opened write-only", f->name);
    if (!seq_ok && (f->amode & MPI_MODE_SEQUENTIAL))
        return px_io_error(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                           "%s: opened with MPI_MODE_SEQUENTIAL (shared file pointer only)",
                           f->name);
    return MPI_SUCCESS;
}

/* The checks of every data access: the access mode, an explicit offset
 * (at), the buffer and its type. */
int px_io_check_data(px_io_file_t *f, int write, int seq_ok, int at, MPI_Offset off,
                     const void *buf, int count, MPI_Datatype dt, const char *fn)
{
    int rc = px_io_check_access(f, write, seq_ok, fn);
    MPI_Aint bytes;
    if (rc == MPI_SUCCESS && at && off < 0)
        rc = px_io_error(f, MPI_ERR_ARG, fn, "%s: negative offset %lld", f->name, (long long)off);
    if (rc == MPI_SUCCESS)
        rc = px_io_check_buf(f, buf, count, dt, fn, &bytes);
    return rc;
}

/* ---------- pieces of the file ---------- */

static int px_io_sys_error(px_io_file_t *f, int err, const char *what, const char *fn)
{
    return px_io_error(f, px_io_errno_class(err), fn, "%s: %s: %s", f->name, what, strerror(-err));
}

/* Reads or writes each piece on its own; reads stop at the end of the file. */
static int px_io_pieces_each(px_io_file_t *f, const px_io_piece_t *p, MPI_Aint n, char *stream,
                             int write, MPI_Aint *got_p, const char *fn)
{
    MPI_Aint pos = 0;
    for (MPI_Aint i = 0; i < n; i++) {
        ssize_t r = write ? px_io_pwrite(f, stream + pos, (size_t)p[i].len, (off_t)p[i].off)
                          : f->drv->pread(f->fd, stream + pos, (size_t)p[i].len, (off_t)p[i].off);
        if (r < 0)
            return px_io_sys_error(f, (int)r, write ? "write" : "read", fn);
        pos += r;
        if (r < p[i].len)
            break; /* end of file */
    }
    *got_p = pos;
    return MPI_SUCCESS;
}

/* Data sieving: the range the pieces cover is read in windows of `bufsize`
 * bytes, and for writes the pieces copied in and the window written back,
 * under an exclusive lock since the bytes between them are written too
 * (unless `locked`: the caller holds a lock over everything). */
static int px_io_sieve(px_io_file_t *f, const px_io_piece_t *p, MPI_Aint n, char *stream, int write,
                       MPI_Offset bufsize, int locked, MPI_Aint *got_p, const char *fn)
{
    MPI_Offset lo = p[0].off, hi = 0;
    for (MPI_Aint i = 0; i < n; i++)
        if (p[i].off + p[i].len > hi)
            hi = p[i].off + p[i].len;
    if (bufsize > hi - lo)
        bufsize = hi - lo;
    char *buf = malloc((size_t)bufsize);
    if (!buf)
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    MPI_Aint i = 0, spos = 0;
    MPI_Offset in = 0; /* bytes of piece i done */
    int rc = MPI_SUCCESS, eof = 0;
    while (i < n && !eof) {
        MPI_Offset ws = p[i].off + in, we = ws + bufsize, end = ws;
        for (MPI_Aint j = i; j < n && p[j].off < we; j++) {
            MPI_Offset e = p[j].off + p[j].len < we ? p[j].off + p[j].len : we;
            if (e > end)
                end = e;
        }
        size_t span = (size_t)(end - ws);
        int lk = write && !locked;
        int err = lk ? f->drv->lock(f->fd, (off_t)ws, (off_t)span, 1) : 0;
        ssize_t r = err ? err : f->drv->pread(f->fd, buf, span, (off_t)ws);
        if (r < 0) {
            if (lk && !err)
                f->drv->unlock(f->fd, (off_t)ws, (off_t)span);
            rc = px_io_sys_error(f, (int)r, err ? "lock" : "read", fn);
            break;
        }
        if (write && (size_t)r < span)
            memset(buf + r, 0, span - (size_t)r);
        MPI_Offset valid = write ? (MPI_Offset)span : r;
        while (i < n) {
            MPI_Offset ps = p[i].off + in;
            if (ps < ws || ps >= ws + (MPI_Offset)span)
                break; /* a piece behind the window (overlapping filetype) or past it */
            MPI_Offset pe = p[i].off + p[i].len < ws + (MPI_Offset)span ? p[i].off + p[i].len
                                                                        : ws + (MPI_Offset)span;
            MPI_Offset len = pe - ps;
            if (!write && ps + len > ws + valid) {
                len = ws + valid - ps;
                if (len < 0)
                    len = 0;
                eof = 1;
            }
            if (write)
                memcpy(buf + (ps - ws), stream + spos, (size_t)len);
            else
                memcpy(stream + spos, buf + (ps - ws), (size_t)len);
            spos += len;
            in += len;
            if (eof)
                break;
            if (in == p[i].len) {
                i++;
                in = 0;
            }
        }
        if (write) {
            ssize_t w = px_io_pwrite(f, buf, span, (off_t)ws);
            if (w < 0)
                rc = px_io_sys_error(f, (int)w, "write", fn);
        }
        if (lk)
            f->drv->unlock(f->fd, (off_t)ws, (off_t)span);
        if (rc != MPI_SUCCESS)
            break;
    }
    free(buf);
    *got_p = spos;
    return rc;
}

int px_io_pieces_rw(px_io_file_t *f, const px_io_piece_t *p, MPI_Aint n, char *stream, int write,
                    int crowded, MPI_Aint *got_p, const char *fn)
{
    *got_p = 0;
    if (!n)
        return MPI_SUCCESS;
    MPI_Offset lo = p[0].off, hi = 0, data = 0;
    for (MPI_Aint i = 0; i < n; i++) {
        if (p[i].off < lo)
            lo = p[i].off;
        if (p[i].off + p[i].len > hi)
            hi = p[i].off + p[i].len;
        data += p[i].len;
    }
    /* atomic mode: the whole range the access touches is locked */
    if (f->atomic) {
        int err = f->drv->lock(f->fd, (off_t)lo, (off_t)(hi - lo), write);
        if (err)
            return px_io_sys_error(f, err, "lock", fn);
    }
    int mode = write ? f->hints.ds_write : f->hints.ds_read;
    /* automatic: sieve when the pieces fill a good part of what is read,
     * and for writes only when no other process is known to be writing
     * between them right now (its read-modify-write would wait for
     * theirs, range lock after range lock) */
    int sieve = n > 1 && mode != PX_IO_DISABLE && (!write || f->can_read) &&
                (mode == PX_IO_ENABLE || (data * 4 >= hi - lo && !(write && crowded)));
    int rc = sieve ? px_io_sieve(f, p, n, stream, write,
                                 write ? f->hints.ind_wr_buffer_size : f->hints.ind_rd_buffer_size,
                                 f->atomic, got_p, fn)
                   : px_io_pieces_each(f, p, n, stream, write, got_p, fn);
    if (f->atomic)
        f->drv->unlock(f->fd, (off_t)lo, (off_t)(hi - lo));
    return rc;
}

int px_io_access(px_io_file_t *f, MPI_Offset off, void *buf, int count, MPI_Datatype dt, int write,
                 MPI_Aint *got_p, const char *fn)
{
    MPI_Aint bytes = px_io_file_bytes(&f->view, dt, count);
    *got_p = 0;
    if (!bytes)
        return MPI_SUCCESS;
    px_io_piece_t one, *p = &one; /* a contiguous view: one piece, nothing to allocate */
    MPI_Aint n = 1;
    if (f->view.contig)
        one = (px_io_piece_t){f->view.disp + off * f->view.esize, bytes};
    else if (px_io_view_pieces(&f->view, off, bytes, &p, &n) != MPI_SUCCESS)
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    char *stream;
    int own, rc;
    if (write) {
        rc = px_io_stream_out(f, buf, count, dt, &stream, &own, fn);
        if (rc == MPI_SUCCESS) {
            rc = px_io_pieces_rw(f, p, n, stream, 1, 0, got_p, fn);
            if (own)
                free(stream);
        }
    } else {
        rc = px_io_stream_in_buf(f, buf, count, dt, bytes, &stream, &own);
        if (rc != MPI_SUCCESS) {
            rc = px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
        } else {
            rc = px_io_pieces_rw(f, p, n, stream, 0, 0, got_p, fn);
            int rc2 =
                px_io_stream_in(f, stream, own, rc == MPI_SUCCESS ? *got_p : 0, buf, count, dt, fn);
            if (rc == MPI_SUCCESS)
                rc = rc2;
        }
    }
    if (p != &one)
        free(p);
    *got_p = px_io_map_bytes(&f->view, dt, *got_p, 0);
    return rc;
}

/* ---------- explicit offsets and the individual pointer ---------- */

/* One independent access: checked, done, status filled. ptr: at the
 * individual file pointer (advanced), else at `off`. */
static int px_io_indep(MPI_File fh, MPI_Offset off, int ptr, void *buf, int count, MPI_Datatype dt,
                       int write, MPI_Aint *got_p, const char *fn)
{
    PX_GET_FILE(f, fh, fn);
    int rc = px_io_check_data(f, write, 0, !ptr, off, buf, count, dt, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = px_io_access(f, ptr ? f->fp : off, buf, count, dt, write, got_p, fn);
    if (ptr)
        f->fp += px_io_map_bytes(&f->view, dt, *got_p, 1) / f->view.esize;
    return rc;
}

static int px_io_req_done(px_io_file_t *f, MPI_Aint bytes, MPI_Request *request, const char *fn)
{
    px_mpi_req_t *r = px_mpi_req_new(PX_MPI_REQ_DONE);
    if (!r)
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    r->dtype = MPI_DATATYPE_NULL;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->st_count = bytes;
    *request = r->handle;
    return MPI_SUCCESS;
}

enum { PX_IO_AT, PX_IO_PTR, PX_IO_SHARED }; /* where a nonblocking access goes */
static int px_io_shared(MPI_File fh, void *buf, int count, MPI_Datatype dt, int write,
                        MPI_Aint *got_p, const char *fn);

/* The nonblocking calls complete the access at once and return a request
 * that is already complete; its status carries the count. */
static int px_io_nb(MPI_File fh, MPI_Offset off, int where, void *buf, int count, MPI_Datatype dt,
                    int write, MPI_Request *request, const char *fn)
{
    PX_GET_FILE(f, fh, fn);
    if (!request)
        return px_io_error(f, MPI_ERR_ARG, fn, "null request");
    MPI_Aint got = 0;
    int rc = where == PX_IO_SHARED
                 ? px_io_shared(fh, buf, count, dt, write, &got, fn)
                 : px_io_indep(fh, off, where == PX_IO_PTR, buf, count, dt, write, &got, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    return px_io_req_done(f, got, request, fn);
}

#define PX_IO_AT(name, write, cbuf)                                                                \
    PX_PMPI(name)                                                                                  \
    (MPI_File fh, MPI_Offset offset, cbuf void *buf, int count, MPI_Datatype datatype,             \
     MPI_Status *status)                                                                           \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        MPI_Aint got = 0;                                                                          \
        int rc = px_io_indep(fh, offset, 0, (void *)buf, count, datatype, write, &got, #name);     \
        if (rc == MPI_SUCCESS)                                                                     \
            px_io_status_set(status, got);                                                         \
        return rc;                                                                                 \
    }                                                                                              \
    PX_WEAK(name)

#define PX_IO_PTR(name, write, cbuf)                                                               \
    PX_PMPI(name)                                                                                  \
    (MPI_File fh, cbuf void *buf, int count, MPI_Datatype datatype, MPI_Status *status)            \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        MPI_Aint got = 0;                                                                          \
        int rc = px_io_indep(fh, 0, 1, (void *)buf, count, datatype, write, &got, #name);          \
        if (rc == MPI_SUCCESS)                                                                     \
            px_io_status_set(status, got);                                                         \
        return rc;                                                                                 \
    }                                                                                              \
    PX_WEAK(name)

#define PX_IO_IAT(name, write, cbuf)                                                               \
    PX_PMPI(name)                                                                                  \
    (MPI_File fh, MPI_Offset offset, cbuf void *buf, int count, MPI_Datatype datatype,             \
     MPI_Request *request)                                                                         \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_io_nb(fh, offset, PX_IO_AT, (void *)buf, count, datatype, write, request,        \
                        #name);                                                                    \
    }                                                                                              \
    PX_WEAK(name)

#define PX_IO_IPTR(name, write, cbuf)                                                              \
    PX_PMPI(name)                                                                                  \
    (MPI_File fh, cbuf void *buf, int count, MPI_Datatype datatype, MPI_Request *request)          \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_io_nb(fh, 0, PX_IO_PTR, (void *)buf, count, datatype, write, request, #name);    \
    }                                                                                              \
    PX_WEAK(name)

/* clang-format off */
PX_IO_AT(MPI_File_read_at, 0, )
PX_IO_AT(MPI_File_write_at, 1, const)
PX_IO_PTR(MPI_File_read, 0, )
PX_IO_PTR(MPI_File_write, 1, const)
PX_IO_IAT(MPI_File_iread_at, 0, )
PX_IO_IAT(MPI_File_iwrite_at, 1, const)
PX_IO_IPTR(MPI_File_iread, 0, )
PX_IO_IPTR(MPI_File_iwrite, 1, const)
/* The nonblocking collectives do their access independently, so that
 * nothing waits for the other processes (they may start theirs later,
 * after other communication). */
PX_IO_IAT(MPI_File_iread_at_all, 0, )
PX_IO_IAT(MPI_File_iwrite_at_all, 1, const)
PX_IO_IPTR(MPI_File_iread_all, 0, )
PX_IO_IPTR(MPI_File_iwrite_all, 1, const)
/* clang-format on */

/* The new value of a pointer for MPI_File_seek(_shared); -1 when negative. */
static int px_io_seek_to(px_io_file_t *f, MPI_Offset cur, MPI_Offset offset, int whence,
                         MPI_Offset *to_p, const char *fn)
{
    MPI_Offset to;
    switch (whence) {
    case MPI_SEEK_SET:
        to = offset;
        break;
    case MPI_SEEK_CUR:
        to = cur + offset;
        break;
    case MPI_SEEK_END: {
        off_t size;
        int err = f->drv->get_size(f->fd, &size);
        if (err)
            return px_io_sys_error(f, err, "size", fn);
        to = px_io_view_eof(&f->view, size) + offset;
        break;
    }
    default:
        return px_io_error(f, MPI_ERR_ARG, fn, "%s: invalid whence %d", f->name, whence);
    }
    if (to < 0)
        return px_io_error(f, MPI_ERR_ARG, fn, "%s: the pointer would be negative (%lld)", f->name,
                           (long long)to);
    *to_p = to;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_File_seek)(MPI_File fh, MPI_Offset offset, int whence)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_seek";
    PX_GET_FILE(f, fh, fn);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return px_io_error(f, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s: opened sequential", f->name);
    return px_io_seek_to(f, f->fp, offset, whence, &f->fp, fn);
}
PX_WEAK(MPI_File_seek)

PX_PMPI(MPI_File_get_position)(MPI_File fh, MPI_Offset *offset)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_get_position";
    PX_GET_FILE(f, fh, fn);
    if (!offset)
        return px_io_error(f, MPI_ERR_ARG, fn, "null argument");
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return px_io_error(f, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s: opened sequential", f->name);
    *offset = f->fp;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_position)

/* ---------- the shared file pointer ---------- */

/* It lives in a small file next to the data file (px_io_file_t.shfp_path),
 * an 8-byte count of etypes, so that processes that share only the file
 * system (other nodes, other network namespaces) share it too: changed
 * under an fcntl lock there. When every process of the file is on this
 * machine (shfp_local), the same 8 bytes are mapped and changed with one
 * atomic instruction. The file is made on first use. */
static int px_io_shfp_open(px_io_file_t *f, int create)
{
    if (f->shfp_fd >= 0)
        return 0;
    return f->drv->open(f->shfp_path, O_RDWR | (create ? O_CREAT : 0), 0644, &f->shfp_fd);
}

#define PX_IO_SHFP_MAP 8

void px_io_shfp_close(px_io_file_t *f)
{
    if (f->shfp_word)
        f->drv->unmap((void *)f->shfp_word, PX_IO_SHFP_MAP);
    f->shfp_word = NULL;
    if (f->shfp_fd >= 0)
        f->drv->close(f->shfp_fd);
    f->shfp_fd = -1;
}

/* Maps the pointer's word (shfp_local, file open). A file system that
 * cannot map it gives the same answer to every process of the file: they
 * all keep to the lock then. */
static int px_io_shfp_map(px_io_file_t *f)
{
    void *p = NULL;
    int err = f->drv->map ? f->drv->map(f->shfp_fd, PX_IO_SHFP_MAP, &p) : -ENODEV;
    if (err == -ENODEV || err == -EINVAL || err == -EACCES || err == -EPERM || err == -EOPNOTSUPP) {
        f->shfp_local = 0;
        return 0;
    }
    if (!err)
        f->shfp_word = p;
    return err;
}

/* Returns an MPI error class (not raised). Setting or reading 0 does not
 * make the file when nobody has used it yet. */
int px_io_shfp_fetch_add(px_io_file_t *f, MPI_Offset add, int set, MPI_Offset *old_p,
                         const char *fn)
{
    (void)fn;
    int64_t v = 0;
    if (f->shfp_word) {
        v = set ? atomic_exchange(f->shfp_word, (int64_t)add)
                : atomic_fetch_add(f->shfp_word, (int64_t)add);
        if (old_p)
            *old_p = v;
        return MPI_SUCCESS;
    }
    int err = px_io_shfp_open(f, add != 0);
    if (err == -ENOENT && !add) {
        if (old_p)
            *old_p = 0;
        return MPI_SUCCESS;
    }
    if (!err && f->shfp_local && (err = px_io_shfp_map(f)) == 0 && f->shfp_word)
        return px_io_shfp_fetch_add(f, add, set, old_p, fn);
    if (err)
        return px_io_errno_class(err);
    if ((err = f->drv->lock(f->shfp_fd, 0, 8, 1)) != 0)
        return px_io_errno_class(err);
    ssize_t r = f->drv->pread(f->shfp_fd, &v, sizeof(v), 0);
    if (r >= 0 && r < (ssize_t)sizeof(v))
        v = 0;
    int64_t nv = set ? add : v + add;
    if (r >= 0 && (nv != v || set))
        r = f->drv->pwrite(f->shfp_fd, &nv, sizeof(nv), 0);
    f->drv->unlock(f->shfp_fd, 0, 8);
    if (r < 0)
        return px_io_errno_class((int)r);
    if (old_p)
        *old_p = v;
    return MPI_SUCCESS;
}

static int px_io_shared(MPI_File fh, void *buf, int count, MPI_Datatype dt, int write,
                        MPI_Aint *got_p, const char *fn)
{
    PX_GET_FILE(f, fh, fn);
    int rc = px_io_check_data(f, write, 1, 0, 0, buf, count, dt, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint bytes = px_io_file_bytes(&f->view, dt, count);
    MPI_Offset at;
    rc = px_io_shfp_fetch_add(f, bytes / f->view.esize, 0, &at, fn);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: cannot update the shared file pointer (%s)", f->name,
                           f->shfp_path);
    return px_io_access(f, at, buf, count, dt, write, got_p, fn);
}

PX_PMPI(MPI_File_read_shared)
(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PX_CS_ENTER();
    MPI_Aint got = 0;
    int rc = px_io_shared(fh, buf, count, datatype, 0, &got, "MPI_File_read_shared");
    if (rc == MPI_SUCCESS)
        px_io_status_set(status, got);
    return rc;
}
PX_WEAK(MPI_File_read_shared)

PX_PMPI(MPI_File_write_shared)
(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PX_CS_ENTER();
    MPI_Aint got = 0;
    int rc = px_io_shared(fh, (void *)buf, count, datatype, 1, &got, "MPI_File_write_shared");
    if (rc == MPI_SUCCESS)
        px_io_status_set(status, got);
    return rc;
}
PX_WEAK(MPI_File_write_shared)

PX_PMPI(MPI_File_iread_shared)
(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_io_nb(fh, 0, PX_IO_SHARED, buf, count, datatype, 0, request, "MPI_File_iread_shared");
}
PX_WEAK(MPI_File_iread_shared)

PX_PMPI(MPI_File_iwrite_shared)
(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_io_nb(fh, 0, PX_IO_SHARED, (void *)buf, count, datatype, 1, request,
                    "MPI_File_iwrite_shared");
}
PX_WEAK(MPI_File_iwrite_shared)

/* Collective: every process passes the same offset and whence. */
PX_PMPI(MPI_File_seek_shared)(MPI_File fh, MPI_Offset offset, int whence)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_seek_shared";
    PX_GET_FILE(f, fh, fn);
    int64_t mine[4] = {offset, -offset, whence, -whence}, all[4];
    int rc = px_mpi_coll_allreduce(mine, all, 4, MPI_INT64_T, MPI_MAX, f->comm);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: a process of the file is lost", f->name);
    if (all[0] != -all[1] || all[2] != -all[3])
        return px_io_error(f, MPI_ERR_NOT_SAME, fn,
                           "%s: the processes gave different offsets or whence", f->name);
    int res = MPI_SUCCESS;
    if (f->comm->rank == 0) {
        MPI_Offset cur = 0, to = 0;
        res = px_io_shfp_fetch_add(f, 0, 0, &cur, fn);
        if (res == MPI_SUCCESS) {
            /* reported below, by every process alike */
            MPI_Errhandler eh = f->errh;
            f->errh = MPI_ERRORS_RETURN;
            int src = px_io_seek_to(f, cur, offset, whence, &to, fn);
            f->errh = eh;
            res = src == MPI_SUCCESS ? MPI_SUCCESS : px_mpi_error_class_of(src);
            if (res == MPI_SUCCESS)
                res = px_io_shfp_fetch_add(f, to, 1, NULL, fn);
        }
    }
    rc = px_mpi_coll_bcast(&res, 1, MPI_INT, 0, f->comm);
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_barrier(f->comm);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: a process of the file is lost", f->name);
    if (res != MPI_SUCCESS)
        return px_io_error(f, res, fn, "%s: cannot move the shared file pointer", f->name);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_seek_shared)

PX_PMPI(MPI_File_get_position_shared)(MPI_File fh, MPI_Offset *offset)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_get_position_shared";
    PX_GET_FILE(f, fh, fn);
    if (!offset)
        return px_io_error(f, MPI_ERR_ARG, fn, "null argument");
    int rc = px_io_shfp_fetch_add(f, 0, 0, offset, fn);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: cannot read the shared file pointer (%s)", f->name,
                           f->shfp_path);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_position_shared)
