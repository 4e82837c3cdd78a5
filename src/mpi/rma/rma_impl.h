/* One-sided communication in the MPI layer: windows (win.c), operations
 * (rma_ops.c) and synchronisation (rma_sync.c). What travels, and how
 * completion is proved, is the protocol layer's (proto.h, px_proto_rma_*);
 * here are datatypes, epochs, errors and the MPI objects. */
#ifndef PX_MPI_RMA_IMPL_H
#define PX_MPI_RMA_IMPL_H

#include "../mpi_impl.h"

#include <sched.h>

/* An operation whose completion this side waits for: a get or fetching
 * operation (its result arrives in res), or one whose origin data had to
 * be packed (snd counts its frames). Held by the window until a
 * synchronisation finishes it, and by its request (MPI_Rput ...). */
typedef struct px_rma_op {
    px_proto_req_t snd, res;
    int refs;
    int finished;
    int err;    /* MPI error class */
    void *sbuf; /* packed origin data */
    void *rbuf; /* packed result, unpacked into (ubuf, count, dtype) at the end */
    void *ubuf;
    int count;
    MPI_Datatype dtype;
    const px_dtype_builtin_t *spread; /* rbuf holds these pairs with their gap */
    struct px_mpi_win *win;
    struct px_rma_op *next;
} px_rma_op_t;

enum { PX_WIN_LOCK_NOCHECK = 4 }; /* or'ed with MPI_LOCK_* in locked[] */

/* A direct window's locks of one member, in the shared segment: the
 * window's lock (readers, or PX_WIN_WRITER) and the mutex that makes
 * accumulates atomic. */
typedef struct px_win_ctl {
    uint32_t lock;
    uint32_t acc;
    char pad[56];
} px_win_ctl_t;
#define PX_WIN_WRITER 0x80000000u

typedef struct px_mpi_win {
    int handle;
    px_mpi_comm_t *comm; /* the window's own communicator (a private context) */
    px_proto_win_t *pw;
    void *base;
    MPI_Aint size;
    int disp_unit;
    int flavor, model;
    MPI_Aint *sizes; /* of every member's part */
    int *disp_units;
    void *alloc; /* MPI_Win_allocate's memory */
    void *seg;   /* the shared segment of every member's part (px_win_ctl_t
                * of each first), when they all share the machine */
    size_t seg_len;
    MPI_Aint *seg_off; /* where each member's part begins in it */
    int direct;        /* operations are loads and stores into seg */
    MPI_Errhandler errh;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Info info; /* hints the program gave (MPI_INFO_NULL: none) */
    /* epochs of this process as origin */
    int fence;         /* a fence opened an epoch (no MPI_MODE_NOSUCCEED) */
    int lock_all;      /* 0, or MPI_LOCK_SHARED | PX_WIN_LOCK_NOCHECK bits */
    uint8_t *locked;   /* per target: 0, or MPI_LOCK_* (| PX_WIN_LOCK_NOCHECK) */
    uint64_t *flushed; /* per target: bytes sent at its last flush */
    uint8_t *started;  /* per target: in the access epoch of MPI_Win_start */
    int *start_list, nstart;
    /* exposure epoch of MPI_Win_post: its origins, and which completed */
    int *post_list, npost;
    uint8_t *post_done;
    px_rma_op_t *ops;
} px_mpi_win_t;

px_mpi_win_t *px_mpi_win_get(MPI_Win h);
int px_mpi_win_error(px_mpi_win_t *w, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Waits until every operation of this side is complete here (results in
 * place, origin buffers free); finishes and drops them. */
int px_rma_wait_local(px_mpi_win_t *w);
/* An accumulate applied at the target (the protocol layer's apply, and
 * direct windows'): 0, or -1 when op and type do not go together. */
int px_rma_apply(uint32_t op, uint32_t type, void *dst, const void *src, size_t n);
/* A pair type whose index is apart from its value (MPI_SHORT_INT): the
 * accumulates move each such pair with its gap, as it lies in memory. */
static inline int px_rma_pair_apart(const px_dtype_builtin_t *b)
{
    return b->is_pair && b->second_offset != px_mpi_dtype_builtin(b->pair_first)->size;
}

/* Direct windows: member t's part in this process, its locks. */
static inline char *px_rma_part(px_mpi_win_t *w, int t) { return (char *)w->seg + w->seg_off[t]; }
static inline px_win_ctl_t *px_rma_ctl(px_mpi_win_t *w, int t)
{
    return (px_win_ctl_t *)w->seg + t;
}
/* Spins on a lock word held by another process of the machine; yields
 * now and then, since the holder may be waiting for this CPU. */
static inline void px_rma_spin(unsigned *n)
{
    if (++*n % 64 == 0)
        sched_yield();
#if defined(__x86_64__) || defined(__i386__)
    else
        __builtin_ia32_pause();
#elif defined(__aarch64__)
    else
        __asm__ volatile("yield");
#endif
}
static inline void px_rma_acc_lock(px_mpi_win_t *w, int t)
{
    uint32_t *l = &px_rma_ctl(w, t)->acc;
    unsigned n = 0;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            px_rma_spin(&n);
}
static inline void px_rma_acc_unlock(px_mpi_win_t *w, int t)
{
    __atomic_store_n(&px_rma_ctl(w, t)->acc, 0, __ATOMIC_RELEASE);
}

/* Whether an access epoch includes target. */
int px_rma_access_ok(px_mpi_win_t *w, int target);
void px_rma_op_release(px_rma_op_t *op);
int px_rma_op_finish(px_rma_op_t *op);

#define PX_GET_WIN(var, handle, fn)                                                                \
    px_mpi_win_t *var = px_mpi_win_get(handle);                                                    \
    if (__builtin_expect(!var, 0))                                                                 \
    return px_mpi_error(NULL, MPI_ERR_WIN, fn, "invalid window")

#endif
