/* Windows: creation of the four kinds, their memory, attributes, names,
 * hints, error handlers and freeing. */
#include "rma_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static px_htab_t px_win_tab;
#define PX_WIN_DYN 0xa0000000u

px_mpi_win_t *px_mpi_win_get(MPI_Win h)
{
    if (PX_HANDLE_HI(h) != PX_WIN_DYN)
        return NULL;
    px_mpi_win_t *w = px_htab_get(&px_win_tab, PX_HANDLE_IDX(h));
    return w && w->handle == h ? w : NULL;
}

int px_mpi_win_valid(MPI_Win win) { return px_mpi_win_get(win) != NULL; }

int px_mpi_win_error(px_mpi_win_t *w, int errclass, const char *fn, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return px_mpi_error_obj(w->errh, w->handle, errclass, fn, "%s", msg);
}

int px_mpi_win_raise(MPI_Win win, int errclass, const char *fn, const char *msg)
{
    return px_mpi_win_error(px_mpi_win_get(win), errclass, fn, "%s", msg);
}

/* Accumulates arriving at this process (proto's apply): the operation and
 * the basic type travel as their handles; both are checked, since they
 * came from the network. */
/* Pairs whose index lies apart from their value (MPI_SHORT_INT) travel
 * with their gap, as they lie in memory: each is combined in an aligned
 * copy, and only its value and its index are stored back. */
static int px_rma_apply_apart(MPI_Op o, const px_dtype_builtin_t *b, char *dst, const char *src,
                              size_t n)
{
    union {
        long double ld;
        char c[64];
    } in, io;
    size_t ext = (size_t)b->true_extent, f = (size_t)px_mpi_dtype_builtin(b->pair_first)->size;
    size_t so = (size_t)b->second_offset, s = (size_t)b->size - f;
    if (n % ext || ext > sizeof(in.c) ||
        (o != MPI_REPLACE && o != MPI_NO_OP &&
         (!px_mpi_op_is_builtin(o) || px_mpi_op_builtin_check(o, b->handle) != MPI_SUCCESS)))
        return -1;
    if (o == MPI_NO_OP)
        return 0;
    for (size_t k = 0; k < n; k += ext) {
        memcpy(in.c, src + k, ext);
        memcpy(io.c, dst + k, ext);
        if (o == MPI_REPLACE)
            memcpy(io.c, in.c, ext);
        else
            px_mpi_op_builtin_apply(o, in.c, io.c, 1, b->handle);
        memcpy(dst + k, io.c, f);
        memcpy(dst + k + so, io.c + so, s);
    }
    return 0;
}

int px_rma_apply(uint32_t op, uint32_t type, void *dst, const void *src, size_t n)
{
    MPI_Op o = (MPI_Op)op;
    MPI_Datatype t = (MPI_Datatype)type;
    const px_dtype_builtin_t *b = px_mpi_dtype_builtin(t);
    if (b && px_rma_pair_apart(b))
        return px_rma_apply_apart(o, b, dst, src, n);
    if (!b || !b->size || n % (size_t)b->size)
        return -1;
    if (o == MPI_NO_OP)
        return 0;
    if (o == MPI_REPLACE) {
        memcpy(dst, src, n);
        return 0;
    }
    if (!px_mpi_op_is_builtin(o) || px_mpi_op_builtin_check(o, t) != MPI_SUCCESS)
        return -1;
    if (b->size != b->extent) {
        /* pairs come without their padding, so they may sit unaligned:
         * each is combined in aligned copies */
        union {
            long double ld;
            char c[64];
        } in, io;
        size_t sz = (size_t)b->size;
        if (sz > sizeof(in.c))
            return -1;
        for (size_t k = 0; k < n; k += sz) {
            memcpy(in.c, (const char *)src + k, sz);
            memcpy(io.c, (char *)dst + k, sz);
            px_mpi_op_builtin_apply(o, in.c, io.c, 1, t);
            memcpy((char *)dst + k, io.c, sz);
        }
        return 0;
    }
    px_mpi_op_builtin_apply(o, src, dst, (MPI_Aint)(n / (size_t)b->size), t);
    return 0;
}

static void px_win_destroy(px_mpi_win_t *w)
{
    if (w->handle != MPI_WIN_NULL)
        px_htab_del(&px_win_tab, PX_HANDLE_IDX(w->handle));
    px_proto_win_free(w->pw);
    if (w->comm)
        px_mpi_comm_release(w->comm);
    if (w->seg)
        munmap(w->seg, w->seg_len);
    if (w->info != MPI_INFO_NULL)
        PMPI_Info_free(&w->info);
    free(w->alloc);
    free(w->seg_off);
    free(w->sizes);
    free(w->disp_units);
    free(w->locked);
    free(w->flushed);
    free(w->started);
    free(w->start_list);
    free(w->post_list);
    free(w->post_done);
    free(w);
}

/* What every member publishes at creation. */
typedef struct {
    uint64_t base, size;
    int64_t disp_unit;
} px_win_part_t;

/* The common part of window creation (collective over comm): the
 * window's communicator and protocol object, every member's part. */
static int px_win_setup(px_mpi_comm_t *c, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                        int flavor, const char *fn, px_mpi_win_t **w_p)
{
    if (c->is_inter)
        return px_mpi_error(c, MPI_ERR_COMM, fn, "windows need an intra-communicator");
    if (size < 0)
        return px_mpi_error(c, MPI_ERR_SIZE, fn, "negative size");
    if (disp_unit <= 0)
        return px_mpi_error(c, MPI_ERR_DISP, fn, "displacement unit must be positive");
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_mpi_error(c, MPI_ERR_INFO, fn, "invalid info object");
    px_mpi_win_t *w = calloc(1, sizeof(*w));
    if (!w)
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    w->handle = MPI_WIN_NULL;
    w->info = MPI_INFO_NULL;
    w->base = base;
    w->size = size;
    w->disp_unit = disp_unit;
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->errh = MPI_ERRORS_ARE_FATAL;
    uint32_t ctx;
    int rc = px_mpi_comm_alloc_ctx(c, &ctx);
    if (rc == MPI_SUCCESS) {
        c->group->refs++;
        rc = px_mpi_comm_create_from_group(c, c->group, ctx, &w->comm);
        if (rc != MPI_SUCCESS)
            c->group->refs--;
    }
    if (rc != MPI_SUCCESS) {
        free(w);
        return px_mpi_error(c, rc, fn, "cannot make the window's communicator");
    }
    int n = c->size;
    w->sizes = malloc(sizeof(MPI_Aint) * (size_t)n);
    w->disp_units = malloc(sizeof(int) * (size_t)n);
    w->locked = calloc((size_t)n, 1);
    w->flushed = calloc((size_t)n, sizeof(uint64_t));
    w->started = calloc((size_t)n, 1);
    px_win_part_t *parts = malloc(sizeof(*parts) * (size_t)n);
    uint64_t *rb = malloc(sizeof(uint64_t) * 2 * (size_t)n);
    /* registered before the exchange: once a member has every part it
     * may send operations here */
    if (w->sizes && w->disp_units && w->locked && w->flushed && w->started && parts && rb)
        w->pw = px_proto_win_new(ctx, c->rank, n, c->group->world, base, (size_t)size,
                                 flavor == MPI_WIN_FLAVOR_DYNAMIC, px_rma_apply);
    int ok = w->pw != NULL, all = 0;
    rc = px_mpi_coll_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, w->comm);
    if (rc == MPI_SUCCESS && !all)
        rc = MPI_ERR_NO_MEM;
    px_win_part_t me = {(uint64_t)(uintptr_t)base, (uint64_t)size, disp_unit};
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_allgather_bytes(&me, parts, sizeof(me), w->comm);
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < n; i++) {
            w->sizes[i] = (MPI_Aint)parts[i].size;
            w->disp_units[i] = (int)parts[i].disp_unit;
            rb[i] = parts[i].base;
            rb[n + i] = parts[i].size;
        }
        if (flavor != MPI_WIN_FLAVOR_DYNAMIC)
            px_proto_win_parts(w->pw, rb, rb + n); /* without them: no direct copies */
    }
    free(parts);
    free(rb);
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL)
        rc = PMPI_Info_dup(info, &w->info);
    int idx = rc == MPI_SUCCESS ? px_htab_add(&px_win_tab, w) : -1;
    if (idx < 0) {
        px_win_destroy(w);
        return px_mpi_error(c, rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM, fn,
                            "cannot create the window");
    }
    w->handle = (int)(PX_WIN_DYN | (unsigned)idx);
    *w_p = w;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Win_create)
(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Win_create");
    PX_GET_COMM(c, comm, "MPI_Win_create");
    if (!win)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Win_create", "null argument");
    px_mpi_win_t *w;
    int rc =
        px_win_setup(c, base, size, disp_unit, info, MPI_WIN_FLAVOR_CREATE, "MPI_Win_create", &w);
    if (rc != MPI_SUCCESS)
        return rc;
    *win = w->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_create)

/* Whether every member of c runs on this machine (as
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) sees it). */
static int px_win_all_local(px_mpi_comm_t *c)
{
    for (int i = 0; i < c->size; i++)
        if (px_mpi_comm_node_of(c, i) != px_mpi_comm_node_of(c, c->rank))
            return 0;
    return 1;
}

/* One shared segment for every member's part (collective over c, whose
 * members share the machine): first a cache line of locks per member
 * (px_win_ctl_t), then the parts, each after the previous one (each on its
 * own pages when noncontig). The segment is unlinked as soon as every
 * member has mapped it. */
static int px_win_segment(px_mpi_win_t *w, px_mpi_comm_t *c, MPI_Aint size, int noncontig)
{
    int n = c->size;
    MPI_Aint *sizes = malloc(sizeof(MPI_Aint) * (size_t)n);
    MPI_Aint *off = malloc(sizeof(MPI_Aint) * ((size_t)n + 1));
    int rc = sizes && off ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_allgather_bytes(&size, sizes, sizeof(size), c);
    long page = sysconf(_SC_PAGESIZE);
    MPI_Aint align = noncontig ? page : 64;
    MPI_Aint ctl = ((MPI_Aint)sizeof(px_win_ctl_t) * n + page - 1) / page * page;
    if (rc == MPI_SUCCESS) {
        off[0] = ctl;
        for (int i = 0; i < n; i++) {
            MPI_Aint s = noncontig ? (sizes[i] + align - 1) / align * align : sizes[i];
            off[i + 1] = off[i] + s;
        }
    }
    free(sizes);
    size_t len = rc == MPI_SUCCESS ? (size_t)((off[n] + page - 1) / page * page) : 0;
    char name[96];
    void *seg = NULL;
    int fd = -1, ok = rc == MPI_SUCCESS, root_ok = 0;
    static unsigned seq; /* the name: the root's rank and a number it chose */
    unsigned s = ++seq;
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_bcast(&s, 1, MPI_UNSIGNED, 0, c);
    snprintf(name, sizeof(name), "/plexus-%016llx-w%u-%d", (unsigned long long)px_proto_job_id(), s,
             px_mpi_comm_world_rank(c, 0));
    if (c->rank == 0 && rc == MPI_SUCCESS) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno == EEXIST) { /* left by a process of this job that died */
            shm_unlink(name);
            fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        }
        /* the pages are reserved now: a full /dev/shm fails here, not
         * with SIGBUS at a later store */
        if (fd >= 0 && posix_fallocate(fd, 0, (off_t)len) != 0) {
            close(fd);
            shm_unlink(name);
            fd = -1;
        }
        ok = fd >= 0;
    }
    root_ok = ok;
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_bcast(&root_ok, 1, MPI_INT, 0, c);
    if (rc == MPI_SUCCESS && root_ok && c->rank != 0) {
        fd = shm_open(name, O_RDWR, 0600);
        ok = fd >= 0;
    }
    ok = ok && root_ok && rc == MPI_SUCCESS;
    if (ok) {
        seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (seg == MAP_FAILED) {
            seg = NULL;
            ok = 0;
        }
    }
    if (fd >= 0)
        close(fd);
    int all = 0;
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c);
    if (c->rank == 0 && root_ok)
        shm_unlink(name); /* every member has it mapped, or has failed */
    if (rc == MPI_SUCCESS && !all)
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        if (seg)
            munmap(seg, len);
        free(off);
        return rc;
    }
    w->seg = seg;
    w->seg_len = len;
    w->seg_off = off;
    return MPI_SUCCESS;
}

/* MPI_Win_allocate (shared 0) and MPI_Win_allocate_shared: when every
 * member shares the machine, the parts are in one shared segment and the
 * window's operations are loads and stores (w->direct). */
static int px_win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                           void *baseptr, MPI_Win *win, int shared, const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    if (!win || !baseptr)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null argument");
    if (c->is_inter)
        return px_mpi_error(c, MPI_ERR_COMM, fn, "windows need an intra-communicator");
    if (size < 0)
        return px_mpi_error(c, MPI_ERR_SIZE, fn, "negative size");
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_mpi_error(c, MPI_ERR_INFO, fn, "invalid info object");
    int local = px_win_all_local(c), noncontig = 0;
    if (shared && !local)
        return px_mpi_error(c, MPI_ERR_RMA_SHARED, fn,
                            "the communicator's processes do not share a machine");
    if (info != MPI_INFO_NULL) {
        char v[16];
        int flag = 0;
        PMPI_Info_get(info, "alloc_shared_noncontig", (int)sizeof(v) - 1, v, &flag);
        noncontig = flag && !strcmp(v, "true");
    }
    px_mpi_win_t tmp = {0};
    void *mem = NULL;
    int rc = MPI_SUCCESS;
    if (local) {
        rc = px_win_segment(&tmp, c, size, noncontig);
        if (rc != MPI_SUCCESS && shared)
            return px_mpi_error(c, rc, fn, "cannot make the shared segment");
        if (rc == MPI_SUCCESS)
            mem = (char *)tmp.seg + tmp.seg_off[c->rank];
        else
            local = 0; /* MPI_Win_allocate: private memory then */
    }
    if (!local && size && posix_memalign(&mem, 64, (size_t)size))
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    px_mpi_win_t *w;
    rc = px_win_setup(c, mem, size, disp_unit, info,
                      shared ? MPI_WIN_FLAVOR_SHARED : MPI_WIN_FLAVOR_ALLOCATE, fn, &w);
    if (rc != MPI_SUCCESS) {
        if (tmp.seg)
            munmap(tmp.seg, tmp.seg_len);
        else
            free(mem);
        free(tmp.seg_off);
        return rc;
    }
    if (local) {
        w->seg = tmp.seg;
        w->seg_len = tmp.seg_len;
        w->seg_off = tmp.seg_off;
        w->direct = 1;
    } else {
        w->alloc = mem;
    }
    *(void **)baseptr = mem;
    *win = w->handle;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Win_allocate)
(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    PX_CS_ENTER();
    return px_win_allocate(size, disp_unit, info, comm, baseptr, win, 0, "MPI_Win_allocate");
}
PX_WEAK(MPI_Win_allocate)

PX_PMPI(MPI_Win_allocate_shared)
(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    PX_CS_ENTER();
    return px_win_allocate(size, disp_unit, info, comm, baseptr, win, 1, "MPI_Win_allocate_shared");
}
PX_WEAK(MPI_Win_allocate_shared)

PX_PMPI(MPI_Win_shared_query)
(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_shared_query";
    PX_GET_WIN(w, win, fn);
    if (!size || !disp_unit || !baseptr)
        return px_mpi_win_error(w, MPI_ERR_ARG, fn, "null argument");
    int n = w->comm->size;
    if (rank == MPI_PROC_NULL) { /* the first member with memory */
        rank = 0;
        while (rank < n - 1 && !w->sizes[rank])
            rank++;
    }
    if (rank < 0 || rank >= n)
        return px_mpi_win_error(w, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    *disp_unit = w->disp_units[rank];
    /* any flavor (MPI-4.0): a part this process cannot load from directly
     * is reported empty, with a null address; so is an empty part */
    void *at = NULL;
    if (w->seg)
        at = (char *)w->seg + w->seg_off[rank];
    else if (rank == w->comm->rank && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        at = w->base;
    *size = at ? w->sizes[rank] : 0;
    *(void **)baseptr = *size ? at : NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_shared_query)

PX_PMPI(MPI_Win_create_dynamic)(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Win_create_dynamic");
    PX_GET_COMM(c, comm, "MPI_Win_create_dynamic");
    if (!win)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Win_create_dynamic", "null argument");
    px_mpi_win_t *w;
    int rc =
        px_win_setup(c, NULL, 0, 1, info, MPI_WIN_FLAVOR_DYNAMIC, "MPI_Win_create_dynamic", &w);
    if (rc != MPI_SUCCESS)
        return rc;
    *win = w->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_create_dynamic)

PX_PMPI(MPI_Win_attach)(MPI_Win win, void *base, MPI_Aint size)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_attach");
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return px_mpi_win_error(w, MPI_ERR_RMA_FLAVOR, "MPI_Win_attach",
                                "not a window of MPI_Win_create_dynamic");
    if (size < 0)
        return px_mpi_win_error(w, MPI_ERR_SIZE, "MPI_Win_attach", "negative size");
    if (size && !base)
        return px_mpi_win_error(w, MPI_ERR_ARG, "MPI_Win_attach", "null base");
    if (size && px_proto_win_attach(w->pw, base, (size_t)size))
        return px_mpi_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_attach", "out of memory");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_attach)

PX_PMPI(MPI_Win_detach)(MPI_Win win, const void *base)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_detach");
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return px_mpi_win_error(w, MPI_ERR_RMA_FLAVOR, "MPI_Win_detach",
                                "not a window of MPI_Win_create_dynamic");
    if (px_proto_win_detach(w->pw, base))
        return px_mpi_win_error(w, MPI_ERR_RMA_ATTACH, "MPI_Win_detach", "no memory attached at %p",
                                base);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_detach)

PX_PMPI(MPI_Win_free)(MPI_Win *win)
{
    PX_CS_ENTER();
    if (!win)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Win_free", "null argument");
    PX_GET_WIN(w, *win, "MPI_Win_free");
    int n = w->comm->size;
    int open = w->lock_all || w->start_list || w->post_list;
    for (int i = 0; i < n; i++)
        open |= w->locked[i];
    if (open)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_free",
                                "an access or exposure epoch is still open");
    int rc = px_rma_wait_local(w);
    /* nothing may arrive for the window once every member is here */
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_barrier(w->comm);
    if (rc != MPI_SUCCESS)
        return px_mpi_win_error(w, rc, "MPI_Win_free", "a member is lost");
    px_mpi_win_attr_delete_all(w->handle);
    px_win_destroy(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_free)

int px_mpi_win_predef_attr(MPI_Win win, int keyval, void *val, int *flag)
{
    px_mpi_win_t *w = px_mpi_win_get(win);
    void *p;
    switch (keyval) {
    case MPI_WIN_BASE:
        p = w->base;
        break;
    case MPI_WIN_SIZE:
        p = &w->size;
        break;
    case MPI_WIN_DISP_UNIT:
        p = &w->disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        p = &w->flavor;
        break;
    case MPI_WIN_MODEL:
        p = &w->model;
        break;
    default:
        return 0;
    }
    if (val) {
        *(void **)val = p;
        *flag = 1;
    }
    return 1;
}

PX_PMPI(MPI_Win_get_group)(MPI_Win win, MPI_Group *group)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_get_group");
    if (!group)
        return px_mpi_win_error(w, MPI_ERR_ARG, "MPI_Win_get_group", "null argument");
    px_mpi_group_t *g = w->comm->group;
    g->refs++;
    *group = px_mpi_group_handle(g);
    if (*group == MPI_GROUP_NULL) {
        g->refs--;
        return px_mpi_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_get_group", "out of memory");
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_get_group)

PX_PMPI(MPI_Win_set_name)(MPI_Win win, const char *win_name)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_set_name");
    if (!win_name)
        return px_mpi_win_error(w, MPI_ERR_ARG, "MPI_Win_set_name", "null name");
    snprintf(w->name, sizeof(w->name), "%s", win_name);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_set_name)

PX_PMPI(MPI_Win_get_name)(MPI_Win win, char *win_name, int *resultlen)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_get_name");
    if (!win_name || !resultlen)
        return px_mpi_win_error(w, MPI_ERR_ARG, "MPI_Win_get_name", "null argument");
    snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_get_name)

PX_PMPI(MPI_Win_set_info)(MPI_Win win, MPI_Info info)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_set_info");
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_mpi_win_error(w, MPI_ERR_INFO, "MPI_Win_set_info", "invalid info object");
    MPI_Info ni = MPI_INFO_NULL;
    if (info != MPI_INFO_NULL && PMPI_Info_dup(info, &ni) != MPI_SUCCESS)
        return px_mpi_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_set_info", "out of memory");
    if (w->info != MPI_INFO_NULL)
        PMPI_Info_free(&w->info);
    w->info = ni;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_set_info)

/* The hints in use: the window's own, with what the program set over them. */
PX_PMPI(MPI_Win_get_info)(MPI_Win win, MPI_Info *info_used)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_get_info");
    if (!info_used)
        return px_mpi_win_error(w, MPI_ERR_ARG, "MPI_Win_get_info", "null argument");
    static const char *const keys[][2] = {
        {"no_locks", "false"},
        {"accumulate_ordering", "rar,raw,war,waw"},
        {"accumulate_ops", "same_op_no_op"},
        {"same_size", "false"},
        {"same_disp_unit", "false"},
        {"alloc_shared_noncontig", "false"},
    };
    MPI_Info ni;
    if (PMPI_Info_create(&ni) != MPI_SUCCESS)
        return px_mpi_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_get_info", "out of memory");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (w->info != MPI_INFO_NULL)
            PMPI_Info_get(w->info, keys[i][0], MPI_MAX_INFO_VAL, v, &flag);
        PMPI_Info_set(ni, keys[i][0], flag ? v : keys[i][1]);
    }
    *info_used = ni;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_get_info)

PX_PMPI(MPI_Win_set_errhandler)(MPI_Win win, MPI_Errhandler errhandler)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_set_errhandler");
    if (!px_mpi_errh_valid(errhandler))
        return px_mpi_win_error(w, MPI_ERR_ARG, "MPI_Win_set_errhandler", "invalid error handler");
    w->errh = errhandler;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_set_errhandler)

PX_PMPI(MPI_Win_get_errhandler)(MPI_Win win, MPI_Errhandler *errhandler)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_get_errhandler");
    if (!errhandler)
        return px_mpi_win_error(w, MPI_ERR_ARG, "MPI_Win_get_errhandler", "null argument");
    *errhandler = w->errh;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_get_errhandler)

PX_PMPI(MPI_Win_call_errhandler)(MPI_Win win, int errorcode)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_call_errhandler");
    px_mpi_win_error(w, errorcode, "MPI_Win_call_errhandler", "error raised by the application");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_call_errhandler)
