/* Processes of other jobs (boot.h): the peers a process met beyond its
 * job's ranks, and the values this process itself published. */
#include "boot.h"
#include "boot_impl.h"
#include "../util/log.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct px_boot_peer {
    int used;
    uint64_t job_id;
    uint32_t rank;
    uint8_t key[32];
    char net[16];
    char node[64];
    char *card;
} px_boot_peer_t;

/* Those met: peer size + i is px_boot_peers[i] (used: met and not
 * removed); npeers: the highest number given, + 1 - size. */
static px_boot_peer_t *px_boot_peers;
static int px_boot_npeers;

/* This process's own puts, newest first. */
typedef struct px_boot_own_kv {
    struct px_boot_own_kv *next;
    char key[PX_BOOT_KEY_MAX];
    size_t len;
    uint8_t val[];
} px_boot_own_kv_t;
static px_boot_own_kv_t *px_boot_owns;

void px_boot_own_keep(const char *key, const void *val, size_t len)
{
    px_boot_own_kv_t **pp = &px_boot_owns;
    while (*pp && strcmp((*pp)->key, key))
        pp = &(*pp)->next;
    px_boot_own_kv_t *e = malloc(sizeof(*e) + len);
    if (!e)
        return; /* px_boot_own will not find it: reported where it is wanted */
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->len = len;
    if (len)
        memcpy(e->val, val, len);
    e->next = *pp ? (*pp)->next : NULL;
    free(*pp);
    *pp = e;
}

px_status_t px_boot_own(const char *key, void *val, size_t maxlen, size_t *len_p)
{
    for (px_boot_own_kv_t *e = px_boot_owns; e; e = e->next)
        if (!strcmp(e->key, key)) {
            if (e->len > maxlen)
                return PX_ERR_TRUNCATED;
            memcpy(val, e->val, e->len);
            if (len_p)
                *len_p = e->len;
            return PX_OK;
        }
    return PX_ERR_NOT_FOUND;
}

void px_boot_peers_clear(void)
{
    for (int i = 0; i < px_boot_npeers; i++)
        free(px_boot_peers[i].card);
    free(px_boot_peers);
    px_boot_peers = NULL;
    px_boot_npeers = 0;
    while (px_boot_owns) {
        px_boot_own_kv_t *e = px_boot_owns;
        px_boot_owns = e->next;
        free(e);
    }
}

const char *px_boot_node_ident(void)
{
    static char host[64];
    if (px_boot.info.node_name && px_boot.info.node_name[0])
        return px_boot.info.node_name;
    if (!host[0] && gethostname(host, sizeof(host) - 1) < 0)
        snprintf(host, sizeof(host), "?");
    return host;
}

int px_boot_peer_find(uint64_t job_id, uint32_t rank)
{
    if (job_id == px_boot.info.job_id)
        return rank < (uint32_t)px_boot.info.size ? (int)rank : -1;
    for (int i = 0; i < px_boot_npeers; i++)
        if (px_boot_peers[i].used && px_boot_peers[i].job_id == job_id &&
            px_boot_peers[i].rank == rank)
            return px_boot.info.size + i;
    return -1;
}

static const px_boot_peer_t *px_boot_peer_of(int peer)
{
    int i = peer - px_boot.info.size;
    return i >= 0 && i < px_boot_npeers && px_boot_peers[i].used ? &px_boot_peers[i] : NULL;
}

px_status_t px_boot_peer_add(uint64_t job_id, uint32_t rank, const uint8_t key[32], const char *net,
                             const char *card, const char *node, int *peer_p)
{
    if (!px_boot.initialized || job_id == px_boot.info.job_id || strlen(net) >= 16)
        return PX_ERR_INVALID_PARAM;
    int p = px_boot_peer_find(job_id, rank);
    if (p >= 0) {
        *peer_p = p;
        return PX_OK;
    }
    int room = px_boot.info.peer_cap - px_boot.info.size, i = 0;
    if (!px_boot_peers && room > 0 &&
        !(px_boot_peers = calloc((size_t)room, sizeof(*px_boot_peers))))
        return PX_ERR_NO_MEMORY;
    while (i < px_boot_npeers && px_boot_peers[i].used) /* the first number free again */
        i++;
    if (i >= room)
        return PX_ERR_NO_MEMORY;
    px_boot_peer_t *e = &px_boot_peers[i];
    if (!(e->card = strdup(card)))
        return PX_ERR_NO_MEMORY;
    e->job_id = job_id;
    e->rank = rank;
    memcpy(e->key, key, 32);
    snprintf(e->net, sizeof(e->net), "%s", net);
    snprintf(e->node, sizeof(e->node), "%s", node);
    e->used = 1;
    if (i == px_boot_npeers)
        px_boot_npeers++;
    *peer_p = px_boot.info.size + i;
    px_debug("boot", "peer %d: rank %u of job %016llx on %s", *peer_p, rank,
             (unsigned long long)job_id, e->node);
    return PX_OK;
}

void px_boot_peer_remove(int peer)
{
    px_boot_peer_t *e = (px_boot_peer_t *)px_boot_peer_of(peer);
    if (!e)
        return;
    px_debug("boot", "peer %d (rank %u of job %016llx) forgotten", peer, e->rank,
             (unsigned long long)e->job_id);
    free(e->card);
    memset(e, 0, sizeof(*e));
}

int px_boot_peer_ident(int peer, uint64_t *job_id, uint32_t *rank)
{
    if (peer >= 0 && peer < px_boot.info.size) {
        *job_id = px_boot.info.job_id;
        *rank = (uint32_t)peer;
        return 0;
    }
    const px_boot_peer_t *e = px_boot_peer_of(peer);
    if (!e)
        return -1;
    *job_id = e->job_id;
    *rank = e->rank;
    return 0;
}

const uint8_t *px_boot_peer_key(int peer, size_t *len_p)
{
    if (peer >= 0 && peer < px_boot.info.size)
        return px_boot_secret(len_p);
    const px_boot_peer_t *e = px_boot_peer_of(peer);
    if (len_p)
        *len_p = e ? 32 : 0;
    return e ? e->key : NULL;
}

int px_boot_peer_same_node(int a, int b)
{
    const px_boot_info_t *i = &px_boot.info;
    if (a >= 0 && a < i->size && b >= 0 && b < i->size)
        return i->node_of ? i->node_of[a] == i->node_of[b] : a == b;
    const px_boot_peer_t *pa = px_boot_peer_of(a), *pb = px_boot_peer_of(b);
    const char *na = pa ? pa->node : a == i->rank ? px_boot_node_ident() : NULL;
    const char *nb = pb ? pb->node : b == i->rank ? px_boot_node_ident() : NULL;
    return na && nb && !strcmp(na, nb);
}

int px_boot_peer_before(int a, int b)
{
    uint64_t ja, jb;
    uint32_t ra, rb;
    if (px_boot_peer_ident(a, &ja, &ra) || px_boot_peer_ident(b, &jb, &rb))
        return a < b;
    return ja != jb ? ja < jb : ra < rb;
}

/* px_boot_get of a peer of another job: its card under its transport. */
px_status_t px_boot_peer_get(int peer, const char *key, void *val, size_t maxlen, size_t *len_p)
{
    const px_boot_peer_t *e = px_boot_peer_of(peer);
    if (!e)
        return PX_ERR_INVALID_PARAM;
    if (strcmp(key, e->net))
        return PX_ERR_NOT_FOUND;
    size_t n = strlen(e->card) + 1;
    if (val) {
        if (n > maxlen)
            return PX_ERR_TRUNCATED;
        memcpy(val, e->card, n);
    }
    if (len_p)
        *len_p = n;
    return PX_OK;
}
