/* Bootstrap: rank, size, node map, key-value exchange, barrier, abort.
 * Backends: the pxrun server (TCP, every connection authenticated with the
 * per-job secret) and singleton (started without a launcher). */
#ifndef PX_BOOT_H
#define PX_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "../util/px_status.h"

#define PX_BOOT_KEY_MAX 64
#define PX_BOOT_VAL_MAX 1024

typedef struct px_boot_info {
    int rank;
    int size;
    int node_id; /* index of this rank's node (from the launcher's host assignment) */
    int num_nodes;
    int local_rank; /* rank among the ranks of this node */
    int local_size;
    int universe_size;
    const int *node_of;    /* node_of[r] for every rank r; owned by boot */
    uint64_t job_id;       /* unique per job; also names shared-memory segments */
    const char *boot_host; /* address of the bootstrap server ("" for singleton) */
    const char *node_name; /* the launcher's name for this rank's host ("": none) */
    int singleton;
} px_boot_info_t;

/* Connects to pxrun (PX_BOOT_ADDR, PX_JOB_SECRET, PX_RANK, ... set) or sets up
 * a singleton job. Also starts a watcher that ends this process promptly when
 * the job is aborted or pxrun goes away. */
px_status_t px_boot_init(px_boot_info_t *info_p);

/* Publish a value under key for this rank; visible to others after the next fence. */
px_status_t px_boot_put(const char *key, const void *val, size_t len);
/* Collective over all ranks: every put made before it becomes visible. */
px_status_t px_boot_fence(void);
/* Value published by `rank` under key (after a fence). */
px_status_t px_boot_get(int rank, const char *key, void *val, size_t maxlen, size_t *len_p);
px_status_t px_boot_barrier(void);
/* Tells the launcher to end the job with `code`; never returns. */
void px_boot_abort(int code, const char *msg) __attribute__((noreturn));
/* Set when pxrun asks this rank to print what it waits for (a job that
 * reached --timeout); the progress engine prints and clears it. */
extern _Atomic int px_boot_dump_req;
/* Orderly end of this rank (after MPI_Finalize's last barrier). */
px_status_t px_boot_finalize(void);

/* Local IP address of this process's bootstrap connection ("" for singleton):
 * the address through which the management network reaches this rank. */
const char *px_boot_local_addr(void);

/* The per-job secret (32 bytes), for authenticating data connections too. */
const uint8_t *px_boot_secret(size_t *len_p);

/* The backends this build has, whether each can work here, and which one
 * the environment selects (for pxinfo). */
void px_boot_print_backends(FILE *f);

/* Computes HMAC-SHA256(key, msg) into out[32]; used by boot and net handshakes. */
void px_hmac_sha256(const uint8_t *key, size_t keylen, const uint8_t *msg, size_t msglen,
                    uint8_t out[32]);

#endif
