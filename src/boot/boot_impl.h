/* Inside the bootstrap layer: what a backend provides and what boot.c
 * offers the backends. */
#ifndef PX_BOOT_IMPL_H
#define PX_BOOT_IMPL_H

#include "boot.h"
#include "boot_wire.h"

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

/* Whether the backend's client library loads here: "" when it does, else
 * why not (for pxinfo). */
const char *px_boot_pmi2_missing(void);
const char *px_boot_pmix_missing(void);

/* Inserts or replaces (rank, key) in the local store. */
px_status_t px_boot_store_insert(int rank, const uint8_t *key, size_t klen, const uint8_t *val,
                                 size_t vlen);

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
