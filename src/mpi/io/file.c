/* File objects: handles, open and close, size, hints, atomicity, error
 * handlers, and what MPI_Finalize does with files left open. */
#include "io_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static px_htab_t px_file_tab;
#define PX_FILE_DYN 0x90000000u
static px_io_file_t *px_file_list; /* open files, for MPI_Finalize */
/* MPI_FILE_NULL's handler: the one new files get */
static MPI_Errhandler px_io_default_errh = MPI_ERRORS_RETURN;

px_io_file_t *px_io_file_get(MPI_File fh)
{
    uintptr_t h = (uintptr_t)fh;
    if ((h & ~(uintptr_t)0x03ffffffu) != PX_FILE_DYN)
        return NULL;
    px_io_file_t *f = px_htab_get(&px_file_tab, PX_HANDLE_IDX((unsigned)h));
    return f && f->handle == h ? f : NULL;
}

int px_io_error(px_io_file_t *f, int errclass, const char *fn, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    MPI_File obj = f ? (MPI_File)f->handle : MPI_FILE_NULL;
    return px_mpi_error_at(f ? f->errh : px_io_default_errh, &obj, errclass, fn, msg);
}

int px_io_errno_class(int neg_errno)
{
    switch (-neg_errno) {
    case 0:
        return MPI_SUCCESS;
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
        return MPI_ERR_BAD_FILE;
    case ETXTBSY:
        return MPI_ERR_FILE_IN_USE;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_IO;
    }
}

/* ---------- hints ---------- */

static const px_io_hints_t px_io_hints_default = {
    .cb_buffer_size = 16 << 20,
    .cb_block_size = 4096,
    .ind_rd_buffer_size = 4 << 20,
    .ind_wr_buffer_size = 512 << 10,
    .cb_nodes = 0,
    .cb_config = "*:1",
    .cb_read = PX_IO_AUTO,
    .cb_write = PX_IO_AUTO,
    .ds_read = PX_IO_AUTO,
    .ds_write = PX_IO_AUTO,
};

static int px_io_hint_size(const char *v, int64_t *out)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || x <= 0 || x > (1LL << 30))
        return 0; /* a hint the library cannot use is ignored */
    *out = x;
    return 1;
}

static void px_io_hint_mode(const char *v, int32_t *out)
{
    if (!strcmp(v, "enable"))
        *out = PX_IO_ENABLE;
    else if (!strcmp(v, "disable"))
        *out = PX_IO_DISABLE;
    else if (!strcmp(v, "automatic"))
        *out = PX_IO_AUTO;
}

/* How many aggregators cb_config_list ("host:N,host:*,*:N", ROMIO's form;
 * a name alone means one) allows on the node named `host`, which has n
 * processes: the first entry naming it, else the first "*" entry, else 0.
 * -1 when the list is malformed. */
static int px_io_config_count(const char *list, const char *host, int n)
{
    int named = -1, any = -1;
    for (const char *e = list; *e;) {
        const char *end = strchr(e, ','), *colon;
        size_t len = end ? (size_t)(end - e) : strlen(e);
        char ent[256];
        if (!len || len >= sizeof(ent))
            return -1;
        memcpy(ent, e, len);
        ent[len] = 0;
        int cnt = 1;
        colon = strrchr(ent, ':');
        if (colon) {
            char *stop;
            long x = strtol(colon + 1, &stop, 10);
            if (!strcmp(colon + 1, "*"))
                cnt = n;
            else if (colon[1] && !*stop && x >= 0 && x <= INT32_MAX)
                cnt = (int)x;
            else
                return -1;
            ent[colon - ent] = 0;
        }
        if (!ent[0])
            return -1;
        if (!strcmp(ent, "*")) {
            if (any < 0)
                any = cnt;
        } else if (named < 0 && !strcmp(ent, host)) {
            named = cnt;
        }
        e += len + (end ? 1 : 0);
    }
    int cnt = named >= 0 ? named : any >= 0 ? any : 0;
    return cnt < n ? cnt : n;
}

static void px_io_hints_parse(px_io_hints_t *h, MPI_Info info)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    int64_t x;
#define PX_IO_GET(key) (PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
    if (PX_IO_GET("cb_buffer_size") && px_io_hint_size(v, &x))
        h->cb_buffer_size = x;
    if (PX_IO_GET("cb_block_size") && px_io_hint_size(v, &x)) {
        h->cb_block_size = x;
        h->block_size_set = 1;
    }
    if (PX_IO_GET("ind_rd_buffer_size") && px_io_hint_size(v, &x))
        h->ind_rd_buffer_size = x;
    if (PX_IO_GET("ind_wr_buffer_size") && px_io_hint_size(v, &x))
        h->ind_wr_buffer_size = x;
    if (PX_IO_GET("striping_unit") && px_io_hint_size(v, &x)) {
        h->striping_unit = x;
        if (!h->block_size_set)
            h->cb_block_size = x;
    }
    if (PX_IO_GET("striping_factor") && px_io_hint_size(v, &x))
        h->striping_factor = (int32_t)x;
    if (PX_IO_GET("cb_nodes") && px_io_hint_size(v, &x))
        h->cb_nodes = (int32_t)x;
    if (PX_IO_GET("collective_buffering")) {
        if (!strcmp(v, "true"))
            h->cb_read = h->cb_write = PX_IO_ENABLE;
        else if (!strcmp(v, "false"))
            h->cb_read = h->cb_write = PX_IO_DISABLE;
    }
    if (PX_IO_GET("romio_cb_read"))
        px_io_hint_mode(v, &h->cb_read);
    if (PX_IO_GET("romio_cb_write"))
        px_io_hint_mode(v, &h->cb_write);
    if (PX_IO_GET("romio_ds_read"))
        px_io_hint_mode(v, &h->ds_read);
    if (PX_IO_GET("romio_ds_write"))
        px_io_hint_mode(v, &h->ds_write);
    if (PX_IO_GET("cb_config_list") && strlen(v) < sizeof(h->cb_config) &&
        px_io_config_count(v, "", 0) >= 0) {
        memcpy(h->cb_config, v, strlen(v) + 1); /* fits: checked above */
        h->config_set = 1;
    }
#undef PX_IO_GET
}

/* The aggregators: the k-th process of every node in turn, for k below
 * the number cb_config_list allows on that node (nodes named by
 * MPI_Get_processor_name), the first cb_nodes of them. Collective. */
static int px_io_pick_aggregators(px_io_file_t *f)
{
    px_mpi_comm_t *c = f->comm;
    int n = c->size;
    int *node = malloc(sizeof(int) * (size_t)n), *seen = malloc(sizeof(int) * (size_t)n);
    int *list = malloc(sizeof(int) * (size_t)n), *allow = malloc(sizeof(int) * (size_t)n);
    int *procs = calloc((size_t)n, sizeof(int));
    char *names = NULL;
    /* host names are exchanged only when the list names hosts */
    int by_name = strspn(f->hints.cb_config, "*:0123456789,") != strlen(f->hints.cb_config);
    if (by_name)
        names = malloc((size_t)n * MPI_MAX_PROCESSOR_NAME);
    int rc = !node || !seen || !list || !allow || !procs || (by_name && !names) ? MPI_ERR_NO_MEM
                                                                                : MPI_SUCCESS;
    if (by_name) {
        /* all or none exchange (one may have run out of memory) */
        int bad = rc != MPI_SUCCESS, worst = 1;
        int rc2 = px_mpi_coll_allreduce(&bad, &worst, 1, MPI_INT, MPI_MAX, c);
        char me[MPI_MAX_PROCESSOR_NAME] = "";
        int len = 0;
        PMPI_Get_processor_name(me, &len);
        if (rc2 == MPI_SUCCESS && !worst)
            rc2 = px_mpi_coll_allgather_bytes(me, names, MPI_MAX_PROCESSOR_NAME, c);
        if (rc == MPI_SUCCESS)
            rc = rc2 != MPI_SUCCESS ? rc2 : worst ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    }
    if (rc != MPI_SUCCESS) {
        free(node);
        free(seen);
        free(list);
        free(allow);
        free(procs);
        free(names);
        return rc;
    }
    int nnodes = 0;
    for (int r = 0; r < n; r++) {
        int id = px_mpi_comm_node_of(c, r), j;
        for (j = 0; j < nnodes && seen[j] != id; j++) {
        }
        if (j == nnodes) {
            /* a node's name: its first process's */
            allow[nnodes] = r;
            seen[nnodes++] = id;
        }
        node[r] = j; /* nodes numbered by first appearance */
        procs[j]++;
    }
    /* without cb_nodes and cb_config_list every process may aggregate, in
     * that order, for large accesses; naggr is the usual one per node */
    int sized = !f->hints.cb_nodes && !f->hints.config_set;
    for (int j = 0; j < nnodes; j++)
        allow[j] =
            sized ? procs[j]
                  : px_io_config_count(
                        f->hints.cb_config,
                        by_name ? names + (size_t)allow[j] * MPI_MAX_PROCESSOR_NAME : "", procs[j]);
    int cnt = 0;
    for (int k = 0; cnt < n; k++) {
        int added = 0;
        for (int j = 0; j < nnodes; j++) {
            int seen_k = 0;
            for (int r = 0; r < n && k < allow[j]; r++)
                if (node[r] == j && seen_k++ == k) {
                    list[cnt++] = r;
                    added = 1;
                    break;
                }
        }
        if (!added)
            break;
    }
    int want = f->hints.cb_nodes > 0 ? f->hints.cb_nodes : nnodes;
    f->naggr = want < cnt ? want : cnt;
    f->naggr_max = sized ? cnt : f->naggr;
    free(f->aggr);
    f->aggr = list;
    free(node);
    free(seen);
    free(allow);
    free(procs);
    free(names);
    return MPI_SUCCESS;
}

/* Collective over f->comm: info's hints over the current ones, rank 0's
 * taken by all, so that every process splits collective accesses alike. */
int px_io_hints_apply(px_io_file_t *f, MPI_Info info)
{
    px_io_hints_t h = f->hints;
    if (info != MPI_INFO_NULL)
        px_io_hints_parse(&h, info);
    int rc = px_mpi_coll_bcast(&h, (int)sizeof(h), MPI_BYTE, 0, f->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    f->hints = h;
    if (info != MPI_INFO_NULL) {
        /* keep what the program gave, merged over earlier hints */
        int nkeys = 0;
        if (f->info == MPI_INFO_NULL && PMPI_Info_create(&f->info) != MPI_SUCCESS)
            return MPI_ERR_NO_MEM;
        PMPI_Info_get_nkeys(info, &nkeys);
        for (int i = 0; i < nkeys; i++) {
            char k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
            int flag = 0;
            if (PMPI_Info_get_nthkey(info, i, k) == MPI_SUCCESS &&
                PMPI_Info_get(info, k, MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
                PMPI_Info_set(f->info, k, v);
        }
    }
    return px_io_pick_aggregators(f);
}

/* ---------- open and close ---------- */

/* The checks of a file name and hints, and the driver the name selects. */
static int px_io_name_check(const char *filename, MPI_Info info, const px_io_driver_t **drv_p,
                            const char **path_p, const char *fn)
{
    if (!filename)
        return px_io_error(NULL, MPI_ERR_ARG, fn, "null file name");
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_io_error(NULL, MPI_ERR_INFO, fn, "invalid info object");
    *drv_p = px_io_driver_for(filename, path_p);
    if (!*drv_p)
        return px_io_error(NULL, MPI_ERR_IO, fn, "%s: unknown file system prefix", filename);
    return MPI_SUCCESS;
}

/* Rank 0's part of closing: the shared pointer's file, and the file itself
 * when it was opened with MPI_MODE_DELETE_ON_CLOSE. */
static void px_io_remove_at_close(px_io_file_t *f)
{
    if (f->comm->rank != 0)
        return;
    px_io_shfp_close(f);
    f->drv->remove(f->shfp_path);
    if (f->amode & MPI_MODE_DELETE_ON_CLOSE)
        f->drv->remove(f->path);
}

static char *px_io_scratch_buf[PX_IO_SCRATCH_N];
static size_t px_io_scratch_len[PX_IO_SCRATCH_N];

char *px_io_scratch(px_io_file_t *f, int which, size_t len)
{
    (void)f;
    if (!len)
        len = 1;
    if (px_io_scratch_len[which] < len) {
        free(px_io_scratch_buf[which]); /* its contents are not kept */
        px_io_scratch_buf[which] = malloc(len);
        px_io_scratch_len[which] = px_io_scratch_buf[which] ? len : 0;
    }
    return px_io_scratch_buf[which];
}

static void px_io_file_free(px_io_file_t *f)
{
    if (f->handle)
        px_htab_del(&px_file_tab, PX_HANDLE_IDX((unsigned)f->handle));
    for (px_io_file_t **p = &px_file_list; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    px_io_shfp_close(f);
    if (f->fd >= 0)
        f->drv->close(f->fd);
    px_io_view_free(&f->view);
    if (f->info != MPI_INFO_NULL)
        PMPI_Info_free(&f->info);
    if (f->comm)
        px_mpi_comm_release(f->comm);
    free(f->aggr);
    free(f->shfp_path);
    free(f->name);
    free(f->path);
    free(f);
}

static int px_io_amode_ok(int amode, const char **why)
{
    int n = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_RDWR) + !!(amode & MPI_MODE_WRONLY);
    int known = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |
                MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL | MPI_MODE_APPEND |
                MPI_MODE_SEQUENTIAL;
    if (amode & ~known)
        *why = "unknown access mode bits";
    else if (n != 1)
        *why = "exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_WRONLY is needed";
    else if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        *why = "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
    else if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        *why = "MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
    else
        return 1;
    return 0;
}

/* Opens f's file on this process; write-only files are opened for reading
 * too where allowed, since data sieving reads before it writes. */
static int px_io_fd_open(px_io_file_t *f, int create, mode_t perm)
{
    int flags = 0;
    if (create && (f->amode & MPI_MODE_CREATE))
        flags |= O_CREAT;
    if (create && (f->amode & MPI_MODE_EXCL))
        flags |= O_EXCL;
    int rc;
    if (f->amode & MPI_MODE_RDONLY) {
        rc = f->drv->open(f->path, O_RDONLY | flags, perm, &f->fd);
        f->can_read = 1;
        return rc;
    }
    rc = f->drv->open(f->path, O_RDWR | flags, perm, &f->fd);
    f->can_read = rc == 0;
    if (rc == -EACCES && (f->amode & MPI_MODE_WRONLY))
        rc = f->drv->open(f->path, O_WRONLY | flags, perm, &f->fd);
    return rc;
}

/* The shared file pointer's file: hidden, next to the file, named by a
 * number rank 0 chose (every process of the job sees the same name, and
 * two openings of one file do not share it). */
static char *px_io_shfp_name(const char *path, uint64_t id)
{
    const char *slash = strrchr(path, '/');
    int dlen = slash ? (int)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(path) + 64;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%.*s.%s.shfp.%016llx", dlen, path, base, (unsigned long long)id);
    return s;
}

PX_PMPI(MPI_File_open)
(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_open";
    PX_CHECK_INIT(fn);
    px_mpi_comm_t *c = px_mpi_comm_get(comm);
    if (!c)
        return px_io_error(NULL, MPI_ERR_COMM, fn, "invalid communicator");
    if (c->is_inter)
        return px_io_error(NULL, MPI_ERR_COMM, fn, "files need an intra-communicator");
    if (!fh)
        return px_io_error(NULL, MPI_ERR_ARG, fn, "null argument");
    const char *path;
    const px_io_driver_t *drv;
    int rc = px_io_name_check(filename, info, &drv, &path, fn);
    if (rc != MPI_SUCCESS)
        return rc;

    px_io_file_t *f = calloc(1, sizeof(*f));
    if (!f)
        return px_io_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    f->fd = f->shfp_fd = -1;
    f->drv = drv;
    f->amode = amode;
    f->errh = px_io_default_errh;
    f->info = MPI_INFO_NULL;
    f->hints = px_io_hints_default;
    f->name = strdup(filename);
    f->path = strdup(path);
    uint32_t ctx;
    rc = px_mpi_comm_alloc_ctx(c, &ctx);
    if (rc == MPI_SUCCESS) {
        c->group->refs++;
        rc = px_mpi_comm_create_from_group(c, c->group, ctx, &f->comm);
        if (rc != MPI_SUCCESS)
            c->group->refs--;
    }
    if (rc != MPI_SUCCESS) {
        px_io_file_free(f);
        return px_io_error(NULL, rc, fn, "%s: cannot make the file's communicator", filename);
    }
    f->comm->errh = MPI_ERRORS_RETURN;
    px_mpi_comm_t *fc = f->comm;

    /* the access mode: valid here, and the same everywhere */
    const char *why = NULL;
    int ok = px_io_amode_ok(amode, &why) && f->name && f->path;
    int mine[3] = {amode, -amode, !ok}, all[3];
    rc = px_mpi_coll_allreduce(mine, all, 3, MPI_INT, MPI_MAX, fc);
    if (rc == MPI_SUCCESS && all[2]) {
        px_io_file_free(f);
        return px_io_error(NULL, MPI_ERR_AMODE, fn, "%s: %s", filename,
                           why ? why : "a process gave an invalid access mode");
    }
    if (rc == MPI_SUCCESS && all[0] != -all[1]) {
        px_io_file_free(f);
        return px_io_error(NULL, MPI_ERR_NOT_SAME, fn,
                           "%s: the processes gave different access modes", filename);
    }
    if (rc == MPI_SUCCESS)
        rc = px_io_hints_apply(f, info);
    if (rc != MPI_SUCCESS) {
        px_io_file_free(f);
        return px_io_error(NULL, rc, fn, "%s: cannot agree with the other processes", filename);
    }

    mode_t perm = 0666;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (info != MPI_INFO_NULL &&
        PMPI_Info_get(info, "file_perm", MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
        perm = (mode_t)strtol(v, NULL, 8) & 07777;
    /* rank 0 creates the file, then the others open it: none of them finds
     * it missing, nor creates it under rank 0's feet */
    int err = 0;
    struct {
        int32_t err;
        int32_t pad;
        uint64_t id;
        int64_t size;
        int64_t blksize;
    } root = {0, 0, 0, 0, 0};
    if (fc->rank == 0) {
        static unsigned seq;
        err = px_io_fd_open(f, 1, perm);
        root.err = err;
        root.id = px_proto_job_id() ^ ((uint64_t)getpid() << 20) ^ ((uint64_t)++seq << 44);
        off_t sz = 0;
        if (!err && (amode & MPI_MODE_APPEND) && f->drv->get_size(f->fd, &sz) == 0)
            root.size = sz;
        if (!err)
            root.blksize = f->drv->block_size(f->fd);
    }
    rc = px_mpi_coll_bcast(&root, (int)sizeof(root), MPI_BYTE, 0, fc);
    if (rc == MPI_SUCCESS && fc->rank != 0 && !root.err)
        err = px_io_fd_open(f, 0, perm);
    else if (fc->rank != 0)
        err = root.err;
    /* with the outcome, whether every process sees every other on this
     * machine (the shared pointer in memory then) */
    int opened[2] = {err, 1}, agreed[2] = {0, 0};
    for (int r = 0; r < fc->size; r++)
        if (!px_proto_peer_local(px_mpi_comm_world_rank(fc, r)))
            opened[1] = 0;
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_allreduce(opened, agreed, 2, MPI_INT, MPI_MIN, fc);
    int worst = agreed[0];
    f->shfp_local = agreed[1];
    if (rc == MPI_SUCCESS && worst) {
        int cls = px_io_errno_class(worst);
        px_io_file_free(f);
        return px_io_error(NULL, cls, fn, "%s: %s%s", filename, strerror(-worst),
                           err ? "" : " (on another process)");
    }
    if (rc != MPI_SUCCESS) {
        px_io_file_free(f);
        return px_io_error(NULL, rc, fn, "%s: cannot agree with the other processes", filename);
    }
    /* file domains aligned to the file system's block unless the hints
     * say otherwise (rank 0's file, as for every hint) */
    if (!f->hints.block_size_set && !f->hints.striping_unit && root.blksize >= 512 &&
        root.blksize <= (64 << 20))
        f->hints.cb_block_size = root.blksize;
    f->shfp_path = px_io_shfp_name(f->path, root.id);
    rc = px_io_view_set(f, 0, MPI_BYTE, MPI_BYTE, "native", fn);
    if (rc == MPI_SUCCESS && !f->shfp_path)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && (amode & MPI_MODE_APPEND)) {
        /* both pointers start at the end of the file */
        f->fp = root.size;
        if (fc->rank == 0 && root.size)
            rc = px_io_shfp_fetch_add(f, root.size, 1, NULL, fn);
        int all_ok = 0;
        int me = rc == MPI_SUCCESS;
        if (px_mpi_coll_allreduce(&me, &all_ok, 1, MPI_INT, MPI_MIN, fc) != MPI_SUCCESS || !all_ok)
            rc = MPI_ERR_IO;
    }
    int idx = rc == MPI_SUCCESS ? px_htab_add(&px_file_tab, f) : -1;
    if (idx < 0) {
        px_io_file_free(f);
        return px_io_error(NULL, rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM, fn,
                           "%s: cannot set up the file", filename);
    }
    f->handle = PX_FILE_DYN | (unsigned)idx;
    f->next = px_file_list;
    px_file_list = f;
    *fh = (MPI_File)f->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_open)

PX_PMPI(MPI_File_close)(MPI_File *fh)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_close";
    if (!fh)
        return px_io_error(NULL, MPI_ERR_ARG, fn, "null argument");
    PX_GET_FILE(f, *fh, fn);
    if (f->split)
        return px_io_error(f, MPI_ERR_IO, fn, "%s: a split collective access is not ended",
                           f->name);
    /* everyone is done with the file before its pointer file or the file
     * itself goes */
    int rc = px_mpi_coll_barrier(f->comm);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: a process of the file is lost", f->name);
    int err = f->drv->close(f->fd);
    f->fd = -1;
    px_io_remove_at_close(f);
    px_io_file_free(f);
    *fh = MPI_FILE_NULL;
    if (err)
        return px_io_error(NULL, px_io_errno_class(err), fn, "close: %s", strerror(-err));
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_close)

PX_PMPI(MPI_File_delete)(const char *filename, MPI_Info info)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_delete";
    PX_CHECK_INIT(fn);
    const char *path;
    const px_io_driver_t *drv;
    int rc = px_io_name_check(filename, info, &drv, &path, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    int err = drv->remove(path);
    if (err)
        return px_io_error(NULL, px_io_errno_class(err), fn, "%s: %s", filename, strerror(-err));
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_delete)

/* set_size and preallocate: the same size everywhere, one process acts. */
static int px_io_resize(MPI_File fh, MPI_Offset size, int prealloc, const char *fn)
{
    PX_GET_FILE(f, fh, fn);
    if (size < 0)
        return px_io_error(f, MPI_ERR_ARG, fn, "%s: negative size %lld", f->name, (long long)size);
    if (f->amode & MPI_MODE_RDONLY)
        return px_io_error(f, MPI_ERR_READ_ONLY, fn, "%s: opened read-only", f->name);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return px_io_error(f, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s: opened sequential", f->name);
    int64_t mine[2] = {size, -size}, all[2];
    int rc = px_mpi_coll_allreduce(mine, all, 2, MPI_INT64_T, MPI_MAX, f->comm);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: a process of the file is lost", f->name);
    if (all[0] != -all[1])
        return px_io_error(f, MPI_ERR_NOT_SAME, fn, "%s: the processes gave different sizes",
                           f->name);
    int err = 0;
    if (f->comm->rank == 0) {
        off_t cur = 0;
        f->dirty = 1;
        if (prealloc)
            err = f->drv->preallocate(f->fd, (off_t)size);
        else if (!(err = f->drv->get_size(f->fd, &cur)) && cur != size)
            err = f->drv->set_size(f->fd, (off_t)size);
    }
    rc = px_mpi_coll_bcast(&err, 1, MPI_INT, 0, f->comm);
    if (rc == MPI_SUCCESS && err)
        return px_io_error(f, px_io_errno_class(err), fn, "%s: %s", f->name, strerror(-err));
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: a process of the file is lost", f->name);
    return MPI_SUCCESS;
}

PX_PMPI(MPI_File_set_size)(MPI_File fh, MPI_Offset size)
{
    PX_CS_ENTER();
    return px_io_resize(fh, size, 0, "MPI_File_set_size");
}
PX_WEAK(MPI_File_set_size)

PX_PMPI(MPI_File_preallocate)(MPI_File fh, MPI_Offset size)
{
    PX_CS_ENTER();
    return px_io_resize(fh, size, 1, "MPI_File_preallocate");
}
PX_WEAK(MPI_File_preallocate)

PX_PMPI(MPI_File_get_size)(MPI_File fh, MPI_Offset *size)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_get_size";
    PX_GET_FILE(f, fh, fn);
    if (!size)
        return px_io_error(f, MPI_ERR_ARG, fn, "null argument");
    off_t sz;
    int err = f->drv->get_size(f->fd, &sz);
    if (err)
        return px_io_error(f, px_io_errno_class(err), fn, "%s: %s", f->name, strerror(-err));
    *size = sz;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_size)

PX_PMPI(MPI_File_get_amode)(MPI_File fh, int *amode)
{
    PX_CS_ENTER();
    PX_GET_FILE(f, fh, "MPI_File_get_amode");
    if (!amode)
        return px_io_error(f, MPI_ERR_ARG, "MPI_File_get_amode", "null argument");
    *amode = f->amode;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_amode)

PX_PMPI(MPI_File_get_group)(MPI_File fh, MPI_Group *group)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_get_group";
    PX_GET_FILE(f, fh, fn);
    if (!group)
        return px_io_error(f, MPI_ERR_ARG, fn, "null argument");
    px_mpi_group_t *g = f->comm->group;
    g->refs++;
    *group = px_mpi_group_handle(g);
    if (*group == MPI_GROUP_NULL) {
        g->refs--;
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_group)

PX_PMPI(MPI_File_set_info)(MPI_File fh, MPI_Info info)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_set_info";
    PX_GET_FILE(f, fh, fn);
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_io_error(f, MPI_ERR_INFO, fn, "invalid info object");
    int rc = px_io_hints_apply(f, info);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: cannot apply the hints", f->name);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_set_info)

static const char *px_io_mode_name(int m)
{
    return m == PX_IO_ENABLE ? "enable" : m == PX_IO_DISABLE ? "disable" : "automatic";
}

/* The hints in effect, with the values the library uses. */
PX_PMPI(MPI_File_get_info)(MPI_File fh, MPI_Info *info_used)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_get_info";
    PX_GET_FILE(f, fh, fn);
    if (!info_used)
        return px_io_error(f, MPI_ERR_ARG, fn, "null argument");
    MPI_Info ni;
    if (PMPI_Info_create(&ni) != MPI_SUCCESS)
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    const px_io_hints_t *h = &f->hints;
    char v[64];
#define PX_IO_SET_NUM(key, val)                                                                    \
    do {                                                                                           \
        snprintf(v, sizeof(v), "%lld", (long long)(val));                                          \
        PMPI_Info_set(ni, key, v);                                                                 \
    } while (0)
    PX_IO_SET_NUM("cb_buffer_size", h->cb_buffer_size);
    PX_IO_SET_NUM("cb_nodes", f->naggr);
    PX_IO_SET_NUM("cb_block_size", h->cb_block_size);
    PMPI_Info_set(ni, "romio_cb_read", px_io_mode_name(h->cb_read));
    PMPI_Info_set(ni, "romio_cb_write", px_io_mode_name(h->cb_write));
    PMPI_Info_set(ni, "collective_buffering",
                  h->cb_read == PX_IO_DISABLE && h->cb_write == PX_IO_DISABLE ? "false" : "true");
    PMPI_Info_set(ni, "romio_ds_read", px_io_mode_name(h->ds_read));
    PMPI_Info_set(ni, "romio_ds_write", px_io_mode_name(h->ds_write));
    PX_IO_SET_NUM("ind_rd_buffer_size", h->ind_rd_buffer_size);
    PX_IO_SET_NUM("ind_wr_buffer_size", h->ind_wr_buffer_size);
    PMPI_Info_set(ni, "cb_config_list", h->cb_config);
    if (h->striping_unit)
        PX_IO_SET_NUM("striping_unit", h->striping_unit);
    if (h->striping_factor)
        PX_IO_SET_NUM("striping_factor", h->striping_factor);
#undef PX_IO_SET_NUM
    *info_used = ni;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_info)

PX_PMPI(MPI_File_sync)(MPI_File fh)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_sync";
    PX_GET_FILE(f, fh, fn);
    /* as ROMIO: a process that wrote nothing since its last sync has
     * nothing to send to the device (an fsync of a clean file still waits
     * for the journal and the device's cache on many file systems) */
    int err = 0;
    if (f->dirty) {
        err = f->drv->fsync(f->fd);
        px_mpi_io_stats[PX_IO_STAT_FSYNC]++;
        if (!err)
            f->dirty = 0;
    }
    int worst = 0;
    int rc = px_mpi_coll_allreduce(&err, &worst, 1, MPI_INT, MPI_MIN, f->comm);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: a process of the file is lost", f->name);
    if (worst)
        return px_io_error(f, px_io_errno_class(worst), fn, "%s: fsync: %s%s", f->name,
                           strerror(-worst), err ? "" : " (on another process)");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_sync)

PX_PMPI(MPI_File_set_atomicity)(MPI_File fh, int flag)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_set_atomicity";
    PX_GET_FILE(f, fh, fn);
    int mine[2] = {!!flag, -!!flag}, all[2];
    int rc = px_mpi_coll_allreduce(mine, all, 2, MPI_INT, MPI_MAX, f->comm);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: a process of the file is lost", f->name);
    if (all[0] != -all[1])
        return px_io_error(f, MPI_ERR_NOT_SAME, fn, "%s: the processes gave different flags",
                           f->name);
    f->atomic = !!flag;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_set_atomicity)

PX_PMPI(MPI_File_get_atomicity)(MPI_File fh, int *flag)
{
    PX_CS_ENTER();
    PX_GET_FILE(f, fh, "MPI_File_get_atomicity");
    if (!flag)
        return px_io_error(f, MPI_ERR_ARG, "MPI_File_get_atomicity", "null argument");
    *flag = f->atomic;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_atomicity)

/* ---------- error handlers ---------- */

/* A file's handler is called the same way as a communicator's, with a
 * pointer to the file's handle. */
PX_PMPI(MPI_File_create_errhandler)(MPI_File_errhandler_function *fn, MPI_Errhandler *eh)
{
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)fn, eh);
}
PX_WEAK(MPI_File_create_errhandler)

PX_PMPI(MPI_File_set_errhandler)(MPI_File fh, MPI_Errhandler errhandler)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_set_errhandler";
    px_io_file_t *f = NULL;
    if (fh != MPI_FILE_NULL && !(f = px_io_file_get(fh)))
        return px_io_error(NULL, MPI_ERR_FILE, fn, "invalid file handle");
    if (!px_mpi_errh_valid(errhandler))
        return px_io_error(f, MPI_ERR_ARG, fn, "invalid error handler");
    if (f)
        f->errh = errhandler;
    else
        px_io_default_errh = errhandler;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_set_errhandler)

PX_PMPI(MPI_File_get_errhandler)(MPI_File fh, MPI_Errhandler *errhandler)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_get_errhandler";
    px_io_file_t *f = NULL;
    if (fh != MPI_FILE_NULL && !(f = px_io_file_get(fh)))
        return px_io_error(NULL, MPI_ERR_FILE, fn, "invalid file handle");
    if (!errhandler)
        return px_io_error(f, MPI_ERR_ARG, fn, "null argument");
    *errhandler = f ? f->errh : px_io_default_errh;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_errhandler)

PX_PMPI(MPI_File_call_errhandler)(MPI_File fh, int errorcode)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_call_errhandler";
    px_io_file_t *f = NULL;
    if (fh != MPI_FILE_NULL && !(f = px_io_file_get(fh)))
        return px_io_error(NULL, MPI_ERR_FILE, fn, "invalid file handle");
    if (px_mpi_error_class_of(errorcode) < 0)
        return px_io_error(f, MPI_ERR_ARG, fn, "invalid error code %d", errorcode);
    /* the program's own code goes to the handler unchanged */
    MPI_File obj = fh;
    px_mpi_error_call(f ? f->errh : px_io_default_errh, &obj, errorcode, fn,
                      "error raised by the application");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_call_errhandler)

/* ---------- Fortran handles ---------- */

/* A file handle is the same 32-bit value in C and Fortran. */
MPI_Fint PMPI_File_c2f(MPI_File fh) { return (MPI_Fint)(uint32_t)(uintptr_t)fh; }
#pragma weak MPI_File_c2f = PMPI_File_c2f

MPI_File PMPI_File_f2c(MPI_Fint fh) { return (MPI_File)(uintptr_t)(uint32_t)fh; }
#pragma weak MPI_File_f2c = PMPI_File_f2c

/* ---------- finalize ---------- */

/* Files a program leaves open: closed here without talking to the other
 * processes (they may have closed theirs), with a warning. */
void px_mpi_io_finalize(void)
{
    while (px_file_list) {
        px_io_file_t *f = px_file_list;
        px_warn("io", "file %s was not closed before MPI_Finalize; closing it", f->name);
        px_io_remove_at_close(f);
        px_io_file_free(f);
    }
    px_io_datarep_finalize();
    for (int i = 0; i < PX_IO_SCRATCH_N; i++) {
        free(px_io_scratch_buf[i]);
        px_io_scratch_buf[i] = NULL;
        px_io_scratch_len[i] = 0;
    }
}
