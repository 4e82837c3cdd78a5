/* MPI-IO (MPI-3.1 chapter 13) in the MPI layer: file objects and hints
 * (file.c), views (view.c), data representations (datarep.c), independent access
 * with data sieving, atomic mode and shared file pointers (io_indep.c),
 * collective buffering (io_coll.c), and the file-system drivers behind
 * them (driver_posix.c). See docs/io.md. */
#ifndef PX_MPI_IO_IMPL_H
#define PX_MPI_IO_IMPL_H

#include "../mpi_impl.h"

#include <sys/types.h>
#include <sys/uio.h>

/* ---------- drivers ---------- */

/* One file system's operations on an open file, named by an int handle
 * (a descriptor for POSIX). Every call returns 0 (or a byte count) on
 * success and -errno on failure. */
typedef struct px_io_driver {
    const char *name;
    /* flags: O_RDONLY / O_WRONLY / O_RDWR, O_CREAT, O_EXCL */
    int (*open)(const char *path, int flags, mode_t perm, int *h_p);
    int (*close)(int h);
    /* whole transfers: short only at the end of the file (pread) */
    ssize_t (*pread)(int h, void *buf, size_t len, off_t off);
    ssize_t (*pwrite)(int h, const void *buf, size_t len, off_t off);
    /* the same from and into the n pieces of iov, which they consume */
    ssize_t (*preadv)(int h, struct iovec *iov, int n, off_t off);
    ssize_t (*pwritev)(int h, struct iovec *iov, int n, off_t off);
    int (*fsync)(int h);
    int (*set_size)(int h, off_t size);
    int (*get_size)(int h, off_t *size_p);
    /* the file system's preferred block for this file (0: unknown) */
    int64_t (*block_size)(int h);
    int (*preallocate)(int h, off_t size);
    /* byte-range locks, waiting for conflicting ones; len 0: to the end */
    int (*lock)(int h, off_t off, off_t len, int exclusive);
    int (*unlock)(int h, off_t off, off_t len);
    int (*remove)(const char *path);
    /* the first len bytes of the file mapped shared, the file made that
     * long if shorter (its bytes kept); -ENODEV where the file system
     * cannot map it. unmap takes it back. */
    int (*map)(int h, size_t len, void **p_p);
    void (*unmap)(void *p, size_t len);
} px_io_driver_t;

extern const px_io_driver_t px_io_driver_posix;

/* The driver a file name selects and the path without its prefix ("ufs:",
 * "posix:"; a plain path selects POSIX). NULL for an unknown prefix. */
const px_io_driver_t *px_io_driver_for(const char *name, const char **path_p);

/* ---------- hints ---------- */

enum { PX_IO_DISABLE, PX_IO_ENABLE, PX_IO_AUTO };

/* The hints in effect; the same on every process of the file (rank 0's). */
typedef struct px_io_hints {
    int64_t cb_buffer_size;
    int64_t cb_block_size;
    int64_t ind_rd_buffer_size, ind_wr_buffer_size;
    int64_t striping_unit;
    int32_t striping_factor;
    int32_t cb_nodes;                             /* aggregators asked for (0: one per node) */
    char cb_config[256];                          /* cb_config_list, checked ("*:1") */
    int32_t cb_read, cb_write, ds_read, ds_write; /* PX_IO_* */
    int32_t block_size_set;
    int32_t config_set; /* cb_config_list given */
} px_io_hints_t;

/* ---------- data representations ---------- */

typedef struct px_io_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function *read_fn, *write_fn;
    /* MPI_Register_datarep_c's: called with MPI_Count counts instead */
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;
    MPI_Datarep_extent_function *extent_fn;
    void *extra;
    struct px_io_datarep *next;
} px_io_datarep_t;

enum { PX_IO_REP_NATIVE, PX_IO_REP_EXTERNAL32, PX_IO_REP_USER };

/* ---------- views ---------- */

typedef struct px_io_view {
    MPI_Offset disp;
    MPI_Datatype etype, filetype; /* retained */
    /* sizes and offsets in the file representation: an etype's size, the
     * filetype's size and extent, its blocks (native ones unless resized) */
    MPI_Aint esize;
    MPI_Aint ft_size, ft_extent;
    MPI_Aint nblks;
    MPI_Aint *boff, *blen; /* the filetype's data blocks, in type-map order */
    MPI_Aint *bpre;        /* data bytes before each block */
    int contig;            /* one block filling the extent: the file is a byte stream */
    int rep;               /* PX_IO_REP_* */
    int resized;           /* etype or filetype holds types whose size differs in rep */
    const px_io_datarep_t *urep;
    char datarep[MPI_MAX_DATAREP_STRING];
} px_io_view_t;

/* A contiguous range of the file an access touches. */
typedef struct px_io_piece {
    MPI_Offset off, len;
} px_io_piece_t;

/* ---------- files ---------- */

typedef struct px_io_file {
    uintptr_t handle;
    px_mpi_comm_t *comm; /* private duplicate: internal collectives and the two-phase exchange */
    char *name;          /* as the program gave it */
    char *path;          /* without the driver prefix */
    const px_io_driver_t *drv;
    int fd;
    int can_read; /* opened with read access (data sieving writes need it) */
    int amode;
    int atomic;
    int dirty; /* written through since the last MPI_File_sync (which fsyncs only then) */
    MPI_Errhandler errh;
    MPI_Info info; /* the hints the program gave, merged (MPI_INFO_NULL: none) */
    px_io_hints_t hints;
    int *aggr; /* ranks of f->comm that aggregate, naggr of them */
    int naggr;
    int naggr_max; /* with neither cb_nodes nor cb_config_list given, a large
                    * access may use up to this many of aggr (io_coll.c) */
    px_io_view_t view;
    MPI_Offset fp;   /* individual file pointer, in etypes of the view */
    char *shfp_path; /* the shared file pointer's file */
    int shfp_fd;     /* -1 until first used */
    /* every process of the file on this machine (agreed at open): the
     * pointer is the file's first 8 bytes mapped, changed atomically in
     * memory, not under a lock */
    int shfp_local;
    _Atomic int64_t *shfp_word; /* mapped, NULL until first used */
    /* split collective under way: its outcome, for the _end call */
    int split, split_rc;
    MPI_Status split_status;
    const void *split_buf;
    struct px_io_file *next;
} px_io_file_t;

/* Writes to the file's data, marking it for the next MPI_File_sync. */
static inline ssize_t px_io_pwrite(px_io_file_t *f, const void *buf, size_t len, off_t off)
{
    f->dirty = 1;
    return f->drv->pwrite(f->fd, buf, len, off);
}

static inline ssize_t px_io_pwritev(px_io_file_t *f, struct iovec *iov, int n, off_t off)
{
    f->dirty = 1;
    return f->drv->pwritev(f->fd, iov, n, off);
}

/* Collective buffering's send, receive and window buffers, kept until
 * MPI_Finalize: rounds, calls and files reuse them, so the page faults of
 * fresh large allocations (a cb_buffer_size each) are paid once. Buffer
 * `which`, at least len bytes, its contents not kept (NULL: no memory). */
enum { PX_IO_SCRATCH_SEND, PX_IO_SCRATCH_RECV, PX_IO_SCRATCH_WINDOW, PX_IO_SCRATCH_N };
char *px_io_scratch(px_io_file_t *f, int which, size_t len);

px_io_file_t *px_io_file_get(MPI_File fh);
/* Reports through f's error handler (the default one of MPI_FILE_NULL when
 * f is NULL); the code carries the message. */
int px_io_error(px_io_file_t *f, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The class of a failed system call's -errno. */
int px_io_errno_class(int neg_errno);

#define PX_GET_FILE(var, fh, fn)                                                                   \
    px_io_file_t *var = px_io_file_get(fh);                                                        \
    if (__builtin_expect(!var, 0))                                                                 \
    return px_io_error(NULL, MPI_ERR_FILE, fn, "invalid file handle")

/* file.c: hints from an info object over the current ones (rank 0's win:
 * collective over f->comm), and the aggregators they give. */
int px_io_hints_apply(px_io_file_t *f, MPI_Info info);

/* view.c */
int px_io_view_set(px_io_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                   const char *datarep, const char *fn);
void px_io_view_free(px_io_view_t *v);
/* The file ranges of nbytes of data from view offset `off` (etypes), merged
 * where adjacent, in the order of the data. */
int px_io_view_pieces(const px_io_view_t *v, MPI_Offset off, MPI_Offset nbytes, px_io_piece_t **p_p,
                      MPI_Aint *n_p);
MPI_Offset px_io_view_byte_offset(const px_io_view_t *v, MPI_Offset off);
/* The view offset (etypes) of the first etype at or past byte `size`. */
MPI_Offset px_io_view_eof(const px_io_view_t *v, MPI_Offset size);
/* Checks a memory datatype for an access on f's view; the size of its
 * data in the file. */
int px_io_check_buf(px_io_file_t *f, const void *buf, int count, MPI_Datatype dt, const char *fn,
                    MPI_Aint *bytes_p);

/* datarep.c */
int px_io_rep_builtin(const char *name); /* PX_IO_REP_*, or -1 */
const px_io_datarep_t *px_io_datarep_find(const char *name);
/* The size of basic (predefined, not a pair) type b in v's representation;
 * -1 when the program's extent function fails. */
MPI_Aint px_io_rep_basic_size(const px_io_view_t *v, MPI_Datatype b);
/* The size of t's data in v's representation (-1 as above); *resized
 * (may be NULL) set when it differs from the native size. */
MPI_Aint px_io_rep_size(const px_io_view_t *v, MPI_Datatype t, int *resized);
/* The file bytes of count items of t (their data, packed). */
MPI_Aint px_io_file_bytes(const px_io_view_t *v, MPI_Datatype t, MPI_Aint count);
/* The bytes the whole basic elements in `bytes` of a packed stream of t
 * take on the other side: in the file (to_file) or in memory. */
MPI_Aint px_io_map_bytes(const px_io_view_t *v, MPI_Datatype t, MPI_Aint bytes, int to_file);
/* Data of an access in the file representation, contiguous: *own is set
 * when *stream_p was allocated (free it). */
int px_io_stream_out(px_io_file_t *f, const void *buf, int count, MPI_Datatype dt, char **stream_p,
                     int *own_p, const char *fn);
/* A buffer of `bytes` (file bytes) to read into (the user's when it can
 * be), and back: `got` bytes read are converted and unpacked into buf. */
int px_io_stream_in_buf(px_io_file_t *f, void *buf, int count, MPI_Datatype dt, MPI_Aint bytes,
                        char **stream_p, int *own_p);
int px_io_stream_in(px_io_file_t *f, char *stream, int own, MPI_Aint got, void *buf, int count,
                    MPI_Datatype dt, const char *fn);
void px_io_datarep_finalize(void);

/* io_indep.c: independent access of count dt at view offset off; *got_p:
 * the bytes of memory data done. */
int px_io_access(px_io_file_t *f, MPI_Offset off, void *buf, int count, MPI_Datatype dt, int write,
                 MPI_Aint *got_p, const char *fn);
/* Reads or writes pieces to/from a contiguous stream (data sieving,
 * locks in atomic mode); crowded: other processes write between the
 * pieces at the same time (a collective access), so writes are not
 * sieved. *got_p: bytes of the stream read before the end of the file. */
int px_io_pieces_rw(px_io_file_t *f, const px_io_piece_t *p, MPI_Aint n, char *stream, int write,
                    int crowded, MPI_Aint *got_p, const char *fn);
/* The shared file pointer: fetch-and-add of `add` etypes (seek when set). */
int px_io_shfp_fetch_add(px_io_file_t *f, MPI_Offset add, int set, MPI_Offset *old_p,
                         const char *fn);
void px_io_shfp_close(px_io_file_t *f);
/* The status of a data access: `bytes` of the memory type. */
void px_io_status_set(MPI_Status *st, MPI_Aint bytes);
int px_io_check_access(px_io_file_t *f, int write, int seq_ok, const char *fn);
int px_io_check_data(px_io_file_t *f, int write, int seq_ok, int at, MPI_Offset off,
                     const void *buf, int count, MPI_Datatype dt, const char *fn);

/* io_coll.c: collective access at view offset off (each process its
 * own); local_rc is the outcome of this process's checks (an error
 * already raised), shared with the others so that all return. */
int px_io_coll(px_io_file_t *f, MPI_Offset off, void *buf, int count, MPI_Datatype dt, int write,
               int local_rc, MPI_Aint *got_p, const char *fn);

#endif
