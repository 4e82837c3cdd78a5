/* Inside the bootstrap layer: what a backend provides and what boot.c
 * offers the backends. */
#ifndef PX_BOOT_IMPL_H
#define PX_BOOT_IMPL_H

#include "boot.h"
#include "boot_wire.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>

typedef struct px_boot_backend_ops {
    const char *name;
    /* Makes the puts in `pending` (wire form: u16 klen, u32 vlen, key,
     * value; npending of them) visible everywhere. A backend that answers
     * gets itself (get below) may leave its store alone; the others feed
     * every new pair, own ones included, to px_boot_store_insert. */
    px_status_t (*fence)(const px_boot_buf_t *pending, uint32_t npending);
    /* Fetches (rank, key) from the resource manager into the store, when
     * the store does not have it; NULL: the store has all there is. */
    px_status_t (*get)(int rank, const char *key);
    px_status_t (*finalize)(void);
    void (*abort)(int code, const char *msg) __attribute__((noreturn));
} px_boot_backend_ops_t;

/* The bootstrap's state, one per process (boot.c), shared by the backends. */
typedef struct px_boot_state {
    int initialized;
    const px_boot_backend_ops_t *ops;
    px_boot_info_t info;
    int *node_of;
    uint8_t secret[PX_BOOT_SECRET_LEN];
    char boot_host[80];
    char boot_addr[96];
    char local_addr[INET6_ADDRSTRLEN];
    int kv_fd, ctl_fd; /* pxrun's two connections */
    pthread_mutex_t ctl_lock;
    atomic_int finalized;
    px_boot_buf_t pending; /* puts since the last fence, wire form */
    uint32_t npending;
    struct px_boot_kv **buckets; /* the local store */
    size_t nbuckets, nkv;
} px_boot_state_t;

extern px_boot_state_t px_boot;

/* What a resource manager's backend found at its start. */
typedef struct px_boot_rm_job {
    int rank, size, universe_size;
    int *node_of; /* malloc'ed, node_of[r] in [0, num_nodes) for every rank; NULL:
                      * the ranks exchange node_label to make it */
    int num_nodes;
    char node_label[256]; /* this rank's node, when node_of is NULL */
    char id[320];         /* the manager's name for the job (step), the same at every rank */
    const char *via;      /* "srun", "PMIx server", ...: for messages */
} px_boot_rm_job_t;

/* Opens the backend when its variables are in the environment: returns
 * PX_ERR_NOT_FOUND when they are not (another backend is tried), else
 * PX_OK with *job and *ops filled, or an error already reported. */
px_status_t px_boot_pmi2_open(px_boot_rm_job_t *job, const px_boot_backend_ops_t **ops_p);
px_status_t px_boot_pmix_open(px_boot_rm_job_t *job, const px_boot_backend_ops_t **ops_p);

/* Starts under pxrun, whose server listens at addr ("host:port"); the
 * rest of the job's description comes from PX_RANK, PX_SIZE, PX_JOB_ID and
 * PX_JOB_SECRET (boot_pxrun.c). */
px_status_t px_boot_pxrun_init(const char *addr);

/* Whether the backend's client library loads here: "" when it does, else
 * why not (for pxinfo). */
const char *px_boot_pmi2_missing(void);
const char *px_boot_pmix_missing(void);

/* Inserts or replaces (rank, key) in the local store. */
px_status_t px_boot_store_insert(int rank, const uint8_t *key, size_t klen, const uint8_t *val,
                                 size_t vlen);

/* peers.c: this process's own puts, the peers of other jobs, and forgetting both. */
void px_boot_own_keep(const char *key, const void *val, size_t len);
px_status_t px_boot_peer_get(int peer, const char *key, void *val, size_t maxlen, size_t *len_p);
void px_boot_peers_clear(void);

/* This process's rank (for backends' keys and messages). */
int px_boot_self_rank(void);

/* Prints "plexus rank R: why" and exits with code. */
void px_boot_die(const char *why, int code) __attribute__((noreturn));

/* Parses a PMI "PMI_process_mapping" value, "(vector,(start,nodes,ranks),...)",
 * into node_of[size]; returns the number of nodes, or -1 when the value is
 * malformed or does not cover exactly `size` ranks. */
int px_boot_parse_mapping(const char *s, int size, int *node_of);

/* Hex encoding for managers whose values are strings. */
void px_boot_hex(char *dst, const uint8_t *src, size_t len);
/* Returns the bytes decoded, or -1 when src is not even-length hex. */
long px_boot_unhex(uint8_t *dst, size_t max, const char *src, size_t srclen);

#endif
