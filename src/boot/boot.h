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
    /* Room in the per-peer tables of every layer: the job's ranks, then
     * processes of other jobs (px_boot_peer_add), size + PX_DYN_PEERS. */
    int peer_cap;
} px_boot_info_t;

/* The room of per-peer tables: peer_cap, at least the job (a description
 * made by hand may leave peer_cap 0). */
static inline int px_boot_peer_room(const px_boot_info_t *b)
{
    return b->peer_cap > b->size ? b->peer_cap : b->size;
}

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
struct in_addr;
/* The local IPv4 address that routes towards host, a numeric address (no
 * packet is sent): 0, or -1 when there is none. */
int px_boot_route(const char *host, struct in_addr *out);

/* The per-job secret (32 bytes), for authenticating data connections too. */
const uint8_t *px_boot_secret(size_t *len_p);

/* Fills buf with random bytes (getrandom, /dev/urandom fallback). */
px_status_t px_boot_random(void *buf, size_t len);

/* The value this process put under key last (whether fenced or not). */
px_status_t px_boot_own(const char *key, void *val, size_t maxlen, size_t *len_p);

/* ---------- processes of other jobs ----------
 * A process's peers are the ranks of its job, 0 .. size-1, then the
 * processes of other jobs it met (MPI_Comm_connect, MPI_Comm_accept,
 * MPI_Comm_spawn), numbered from size up in the order they were met, below
 * peer_cap. Each has an identity (its job id and its rank there), a key
 * that authenticates data connections between the two processes (the job's
 * secret for the job's own ranks; for the others derived by both sides from
 * what they shared when their groups met), and what it published under
 * one transport's name (its address card), given when it was added and
 * read back with px_boot_get. */

/* Adds (job_id, rank), or finds it when met before (its key and card stay
 * those of the first meeting). PX_ERR_NO_MEMORY when peer_cap is reached,
 * PX_ERR_INVALID_PARAM for this job's own id. */
px_status_t px_boot_peer_add(uint64_t job_id, uint32_t rank, const uint8_t key[32], const char *net,
                             const char *card, const char *node, int *peer_p);
/* Forgets a peer of another job: its number may be given to another. */
void px_boot_peer_remove(int peer);
/* The peer of (job_id, rank), or -1 when it is not one. */
int px_boot_peer_find(uint64_t job_id, uint32_t rank);
/* The identity of a peer; -1 when peer is not one. */
int px_boot_peer_ident(int peer, uint64_t *job_id, uint32_t *rank);
/* The key of connections with peer (32 bytes), NULL when peer is not one. */
const uint8_t *px_boot_peer_key(int peer, size_t *len_p);
/* Whether two peers run on one machine (node ids for the job's ranks; for
 * those of other jobs the machine's name they gave). */
int px_boot_peer_same_node(int a, int b);
/* Whether peer a comes before peer b in the order every job agrees on
 * (job id, then rank): a < b for two ranks of this job. */
int px_boot_peer_before(int a, int b);
/* The name of this process's machine as px_boot_peer_add wants it. */
const char *px_boot_node_ident(void);

/* The backends this build has, whether each can work here, and which one
 * the environment selects (for pxinfo). */
void px_boot_print_backends(FILE *f);

/* Computes HMAC-SHA256(key, msg) into out[32]; used by boot and net handshakes. */
void px_hmac_sha256(const uint8_t *key, size_t keylen, const uint8_t *msg, size_t msglen,
                    uint8_t out[32]);

#endif
