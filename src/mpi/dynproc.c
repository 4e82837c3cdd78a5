/* Dynamic processes (MPI-3.1 chapter 10): ports, MPI_Comm_accept,
 * MPI_Comm_connect, MPI_Comm_join and the name service.
 *
 * Two groups meet through their roots: the accepting root waits on a port
 * (src/boot/port.c, a listening socket named with a random token both ends
 * prove), the connecting root connects to it; MPI_Comm_join starts from a
 * socket the program connected, both ends proving the job's secret. Over
 * that socket the roots swap their job ids, their groups (world ranks) and,
 * with px_mpi_comm_agree_ctx, the largest context id each group can take;
 * each root broadcasts what it learnt in its group, and both sides build an
 * inter-communicator whose remote group holds the other side's world ranks.
 * The socket is closed then (join leaves the program's socket open); the
 * inter-communicator's traffic goes over the ordinary channels.
 *
 * Groups of two jobs meet the same way, and each member then makes
 * channels to the other job's processes (px_proto_peer_add) with a key
 * both roots derive from the port's token; MPI_Comm_spawn (spawn.c)
 * starts a job whose processes connect to a port of the parent's root. */
#include "mpi_impl.h"
#include "../boot/port.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Ports this process opened and has not closed. */
typedef struct px_dyn_port {
    px_port_t *port;
    struct px_dyn_port *next;
} px_dyn_port_t;
static px_dyn_port_t *px_dyn_ports;

static px_dyn_port_t **px_dyn_port_find(const char *name)
{
    px_dyn_port_t **pp = &px_dyn_ports;
    while (*pp && strcmp(px_port_name((*pp)->port), name))
        pp = &(*pp)->next;
    return pp;
}

int px_mpi_dyn_timeout_ms(void)
{
    double ms = px_params.port_timeout * 1000.0;
    return ms >= (double)INT_MAX ? INT_MAX : ms < 1 ? 1 : (int)ms;
}

/* While a root waits on its socket, the others' messages still move. */
void px_mpi_dyn_idle(void *arg)
{
    (void)arg;
    px_proto_progress();
    px_cs_yield();
}

/* Integers on the roots' socket are big-endian. */
static void px_dyn_put32(uint8_t *b, uint32_t v)
{
    v = htonl(v);
    memcpy(b, &v, 4);
}

static uint32_t px_dyn_get32(const uint8_t *b)
{
    uint32_t v;
    memcpy(&v, b, 4);
    return ntohl(v);
}

/* The largest context id over both groups (px_mpi_comm_agree_ctx's max):
 * each group reduces, the roots swap over the socket, each root tells its
 * group. */
typedef struct {
    px_mpi_comm_t *c;
    int root, fd;
} px_dyn_max_t;

static int px_dyn_max(void *arg, int *val)
{
    px_dyn_max_t *a = arg;
    int lmax = 0;
    int rc = px_mpi_coll_allreduce(val, &lmax, 1, MPI_INT, MPI_MAX, a->c);
    if (rc != MPI_SUCCESS)
        return rc;
    int res[2] = {lmax, MPI_SUCCESS};
    if (a->c->rank == a->root) {
        uint8_t out[4], in[4];
        px_dyn_put32(out, (uint32_t)lmax);
        if (px_port_swap(a->fd, out, 4, in, 4, px_mpi_dyn_timeout_ms(), px_mpi_dyn_idle, NULL) !=
            PX_OK)
            res[1] = MPI_ERR_PORT;
        else if (px_dyn_get32(in) > 0x7ffffff0u)
            res[1] = MPI_ERR_PORT;
        else if ((int)px_dyn_get32(in) > lmax)
            res[0] = (int)px_dyn_get32(in);
    }
    rc = px_mpi_coll_bcast(res, 2, MPI_INT, a->root, a->c);
    *val = res[0];
    return rc != MPI_SUCCESS ? rc : res[1];
}

/* What each member tells the other group about itself: its identity (job
 * id and rank there), its machine and, when the groups are of different
 * jobs, its address card (px_proto_card; "" otherwise). */
enum {
    PX_DYN_NODE = 64,
    PX_DYN_CARD = PX_BOOT_VAL_MAX,
    PX_DYN_REC = 12 + PX_DYN_NODE + PX_DYN_CARD
};

/* This process's record, for the other group (cards: other jobs there). */
static px_status_t px_dyn_record(int cards, uint8_t *rec)
{
    const px_boot_info_t *b = px_mpi_boot_info();
    memset(rec, 0, PX_DYN_REC);
    px_dyn_put32(rec, (uint32_t)(b->job_id >> 32));
    px_dyn_put32(rec + 4, (uint32_t)b->job_id);
    px_dyn_put32(rec + 8, (uint32_t)b->rank);
    snprintf((char *)rec + 12, PX_DYN_NODE, "%s", px_boot_node_ident());
    return cards ? px_proto_card((char *)rec + 12 + PX_DYN_NODE, PX_DYN_CARD) : PX_OK;
}

/* What the root learnt, for its group: the outcome, the other group's
 * size, whether it holds processes of other jobs, and the key both jobs
 * derived from the port. */
typedef struct {
    int32_t st, rn, cards;
    uint8_t key[32];
} px_dyn_hdr_t;

/* Root: the first swap with the other root: job ids, group sizes, nonces. */
static px_status_t px_dyn_swap_hdr(px_mpi_comm_t *c, int fd, const char *port, int acc,
                                   px_dyn_hdr_t *h)
{
    const px_boot_info_t *b = px_mpi_boot_info();
    uint8_t out[28], in[28], salt[32];
    px_dyn_put32(out, (uint32_t)(b->job_id >> 32));
    px_dyn_put32(out + 4, (uint32_t)b->job_id);
    px_dyn_put32(out + 8, (uint32_t)c->size);
    px_status_t st = px_boot_random(out + 12, 16);
    if (st == PX_OK)
        st = px_port_swap(fd, out, 28, in, 28, px_mpi_dyn_timeout_ms(), px_mpi_dyn_idle, NULL);
    if (st != PX_OK)
        return st;
    uint32_t rn = px_dyn_get32(in + 8);
    if (rn == 0 || rn > (uint32_t)b->peer_cap)
        return PX_ERR_PROTOCOL;
    h->rn = (int32_t)rn;
    h->cards = memcmp(out, in, 8) != 0;
    if (h->cards) {
        /* both roots order the nonces the same way: the acceptor's first */
        memcpy(salt, acc ? out + 12 : in + 12, 16);
        memcpy(salt + 16, acc ? in + 12 : out + 12, 16);
        /* join has no port: two processes of one job only */
        st = port ? px_port_derive(port, salt, sizeof(salt), h->key) : PX_ERR_UNSUPPORTED;
    }
    return st;
}

/* Root: swaps the two groups' records and the outcome of gathering them. */
static px_status_t px_dyn_swap_recs(px_mpi_comm_t *c, int fd, px_status_t st, const uint8_t *mine,
                                    uint8_t *theirs, int rn)
{
    uint8_t o[4], i[4];
    int tmo = px_mpi_dyn_timeout_ms();
    px_dyn_put32(o, (uint32_t)-st);
    px_status_t s2 = px_port_swap(fd, o, 4, i, 4, tmo, px_mpi_dyn_idle, NULL);
    if (s2 != PX_OK)
        return s2;
    if (st != PX_OK)
        return st;
    if (px_dyn_get32(i) != 0) /* the other group could not say where it is */
        return PX_ERR_PEER_UNREACHABLE;
    return px_port_swap(fd, mine, (size_t)c->size * PX_DYN_REC, theirs, (size_t)rn * PX_DYN_REC,
                        tmo, px_mpi_dyn_idle, NULL);
}

/* Every member: the other group's records into peer numbers (channels to
 * processes of other jobs made now). PX_ERR_PROTOCOL for a record that is
 * not valid here: malformed, twice, or one of this group. */
static px_status_t px_dyn_peers(px_mpi_comm_t *c, const px_dyn_hdr_t *h, const uint8_t *recs,
                                int *rworld)
{
    px_status_t st = PX_OK;
    if (h->cards) /* room for the newcomers: those who left give theirs back */
        px_mpi_dyn_gc();
    for (int i = 0; i < h->rn && st == PX_OK; i++) {
        const uint8_t *r = recs + (size_t)i * PX_DYN_REC;
        uint64_t job = (uint64_t)px_dyn_get32(r) << 32 | px_dyn_get32(r + 4);
        uint32_t rank = px_dyn_get32(r + 8);
        const char *node = (const char *)r + 12, *card = node + PX_DYN_NODE;
        if (!memchr(node, 0, PX_DYN_NODE) || !memchr(card, 0, PX_DYN_CARD))
            return PX_ERR_PROTOCOL;
        int p = px_boot_peer_find(job, rank);
        if (p < 0 && !h->cards)
            return PX_ERR_PROTOCOL; /* one job: a rank it does not have */
        if (p < 0 || (p >= px_mpi_boot_info()->size && !card[0]))
            st = card[0] ? px_proto_peer_add(job, rank, h->key, card, node, &p) : PX_ERR_PROTOCOL;
        rworld[i] = p;
    }
    /* disjoint from this group, none twice */
    for (int i = 0; i < h->rn && st == PX_OK; i++) {
        for (int j = 0; j < c->size && st == PX_OK; j++)
            if (rworld[i] == c->group->world[j])
                st = PX_ERR_PROTOCOL;
        for (int j = 0; j < i && st == PX_OK; j++)
            if (rworld[i] == rworld[j])
                st = PX_ERR_PROTOCOL;
    }
    return st;
}

/* The other group's processes of each meeting under way, from the moment
 * they are peers until a communicator names them: a meeting of another
 * thread (MPI_THREAD_MULTIPLE) that makes room in between, while this one
 * waits for its group, must not forget them. */
typedef struct px_dyn_pin {
    const int *world;
    int n;
    struct px_dyn_pin *next;
} px_dyn_pin_t;
static px_dyn_pin_t *px_dyn_pins;

static void px_dyn_unpin(px_dyn_pin_t *pin)
{
    for (px_dyn_pin_t **p = &px_dyn_pins; *p; p = &(*p)->next)
        if (*p == pin) {
            *p = pin->next;
            return;
        }
}

void px_mpi_dyn_gc(void)
{
    const px_boot_info_t *b = px_mpi_boot_info();
    int room = b->peer_cap - b->size;
    uint8_t *named = room > 0 ? calloc((size_t)room, 1) : NULL;
    if (!named)
        return;
    px_mpi_comms_mark(named, b->size, room);
    px_mpi_groups_mark(named, b->size, room);
    for (const px_dyn_pin_t *pin = px_dyn_pins; pin; pin = pin->next)
        for (int i = 0; i < pin->n; i++)
            if (pin->world[i] >= b->size && pin->world[i] < b->size + room)
                named[pin->world[i] - b->size] = 1;
    for (int i = 0; i < room; i++) {
        uint64_t job;
        uint32_t rank;
        /* busy (acknowledgements on the way): at the next meeting */
        if (!named[i] && !px_boot_peer_ident(b->size + i, &job, &rank))
            px_proto_peer_remove(b->size + i);
    }
    free(named);
}

static const char *px_dyn_why(px_status_t st)
{
    switch (st) {
    case PX_ERR_INVALID_PARAM:
        return "not the name of a port (MPI_Open_port makes them; MPI_Comm_accept takes only "
               "the ports its own process opened)";
    case PX_ERR_NOT_FOUND:
        return "nobody listens on the port (closed, or its process has ended)";
    case PX_ERR_TIMEOUT:
        return "the other side did not answer within PX_PORT_TIMEOUT";
    case PX_ERR_AUTH:
        return "the other side refused the connection: it could not prove the port's token";
    case PX_ERR_UNSUPPORTED:
        return "the other side belongs to another job: MPI_Comm_join meets processes of one job "
               "only (use ports)";
    case PX_ERR_PROTOCOL:
        return "the other side sent a group that is not valid here (the groups must be disjoint)";
    case PX_ERR_NO_MEMORY:
        return "out of memory, or no room left for more processes of other jobs (PX_DYN_PEERS)";
    case PX_ERR_PEER_UNREACHABLE:
        return "the other group could not complete the meeting (its members report why)";
    default:
        return "the connection between the roots failed";
    }
}

static int px_dyn_class(px_status_t st)
{
    return st == PX_ERR_UNSUPPORTED        ? MPI_ERR_UNSUPPORTED_OPERATION
           : st == PX_ERR_NO_MEMORY        ? MPI_ERR_NO_MEM
           : st == PX_ERR_PEER_UNREACHABLE ? MPI_ERR_OTHER
                                           : MPI_ERR_PORT;
}

/* The outcome of a step for both groups: each group's worst, then the
 * roots swap theirs (when the socket still works) and each tells its group. */
static px_status_t px_dyn_agree(px_mpi_comm_t *c, int root, int fd, px_status_t st)
{
    int mine = -(int)st, worst = 0;
    if (px_mpi_coll_allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, c) != MPI_SUCCESS)
        worst = -PX_ERR_IO;
    if (c->rank == root) {
        uint8_t o[4], i[4];
        px_dyn_put32(o, (uint32_t)worst);
        if (px_port_swap(fd, o, 4, i, 4, px_mpi_dyn_timeout_ms(), px_mpi_dyn_idle, NULL) != PX_OK)
            worst = -PX_ERR_IO;
        else if (!worst && px_dyn_get32(i))
            worst = -PX_ERR_PEER_UNREACHABLE; /* the other group failed */
    }
    if (px_mpi_coll_bcast(&worst, 1, MPI_INT, root, c) != MPI_SUCCESS)
        worst = -PX_ERR_IO;
    return (px_status_t)-worst;
}

/* Collective over c: the root (which has fd, or has failed with st) meets
 * the other group's root; everyone gets the inter-communicator. low: this
 * side goes first in an Intercomm_merge where both pass the same `high`;
 * acc: this side accepted on `port` (NULL for join). */
int px_mpi_dyn_meet(px_mpi_comm_t *c, int root, int fd, px_status_t st, int low, int acc,
                    const char *port, MPI_Comm *newcomm, const char *fn)
{
    px_dyn_hdr_t h = {.st = st};
    uint8_t *mine = NULL, *theirs = NULL, rec[PX_DYN_REC];
    int *rworld = NULL, rc;
    *newcomm = MPI_COMM_NULL; /* what a failure leaves */
    if (c->rank == root && st == PX_OK)
        h.st = px_dyn_swap_hdr(c, fd, port, acc, &h);
    rc = px_mpi_coll_bcast(&h, (int)sizeof(h), MPI_BYTE, root, c);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "communication failed in the local group");
    if (h.st != PX_OK)
        return px_mpi_error(c, px_dyn_class(h.st), fn, "%s", px_dyn_why(h.st));
    /* every member's record to the root, the two roots swap them, each
     * root gives its group the other's */
    st = px_dyn_record(h.cards, rec);
    int ok = st == PX_OK, all = 0;
    mine = c->rank == root ? malloc((size_t)c->size * PX_DYN_REC) : NULL;
    theirs = malloc((size_t)h.rn * PX_DYN_REC);
    rworld = malloc(sizeof(int) * (size_t)h.rn);
    if ((c->rank == root && !mine) || !theirs || !rworld)
        ok = 0, st = PX_ERR_NO_MEMORY;
    rc = px_mpi_coll_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c);
    if (rc == MPI_SUCCESS && all)
        rc = px_mpi_coll_gather_bytes(rec, mine, PX_DYN_REC, root, c);
    if (rc != MPI_SUCCESS) {
        st = PX_ERR_IO;
    } else if (!all && st == PX_OK) {
        st = PX_ERR_UNSUPPORTED; /* another member could not give its card */
    }
    int sw = st;
    if (c->rank == root)
        sw = px_dyn_swap_recs(c, fd, st, mine, theirs, h.rn);
    rc = px_mpi_coll_bcast(&sw, 1, MPI_INT, root, c);
    if (rc == MPI_SUCCESS && sw == PX_OK)
        rc = px_mpi_coll_bcast(theirs, (int)((size_t)h.rn * PX_DYN_REC), MPI_BYTE, root, c);
    st = rc != MPI_SUCCESS ? PX_ERR_IO : (px_status_t)sw;
    /* channels to the other job's processes, then both groups agree that
     * every member has them before anyone sends */
    px_dyn_pin_t pin = {.world = rworld, .n = rworld ? h.rn : 0, .next = px_dyn_pins};
    if (rworld)
        memset(rworld, 0xff, sizeof(int) * (size_t)h.rn); /* -1: not a peer yet */
    px_dyn_pins = &pin;
    if (st == PX_OK) {
        st = px_dyn_agree(c, root, fd, px_dyn_peers(c, &h, theirs, rworld));
    }
    free(mine);
    free(theirs);
    if (st != PX_OK) {
        px_dyn_unpin(&pin);
        free(rworld);
        return px_mpi_error(c, px_dyn_class(st), fn, "%s",
                            st == PX_ERR_UNSUPPORTED
                                ? "a process of this group cannot reach processes of another job "
                                  "(over tcp)"
                                : px_dyn_why(st));
    }
    px_mpi_group_t *rg = px_mpi_group_new(h.rn);
    if (!rg) {
        px_dyn_unpin(&pin);
        free(rworld);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    memcpy(rg->world, rworld, sizeof(int) * (size_t)h.rn);
    pin.world = rg->world;
    free(rworld);
    rg->rank = MPI_UNDEFINED;
    uint32_t ctx = 0;
    px_dyn_max_t a = {c, root, fd};
    rc = px_mpi_comm_agree_ctx(4, px_dyn_max, &a, &ctx);
    if (rc != MPI_SUCCESS) {
        px_dyn_unpin(&pin);
        px_mpi_group_release(rg);
        return px_mpi_error(c, rc, fn,
                            rc == MPI_ERR_PORT ? "the connection between the roots failed"
                                               : "cannot agree on a context id");
    }
    px_mpi_comm_t *nc;
    c->group->refs++;
    rc = px_mpi_intercomm_build(c, c->group, rg, ctx, low, &nc);
    px_dyn_unpin(&pin); /* named by the communicator from here */
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "out of memory");
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

/* ---------- ports ---------- */

PX_PMPI(MPI_Open_port)(MPI_Info info, char *port_name)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Open_port";
    PX_CHECK_INIT(fn);
    if (!port_name)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_mpi_error(NULL, MPI_ERR_INFO, fn, "invalid info object");
    px_dyn_port_t *d = malloc(sizeof(*d));
    if (!d)
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    px_status_t st = px_port_open(px_boot_local_addr(), &d->port, port_name);
    if (st != PX_OK) {
        free(d);
        return px_mpi_error(NULL, st == PX_ERR_NO_MEMORY ? MPI_ERR_NO_MEM : MPI_ERR_PORT, fn,
                            "cannot listen on %s: %s",
                            *px_boot_local_addr() ? px_boot_local_addr() : "127.0.0.1",
                            px_status_string(st));
    }
    d->next = px_dyn_ports;
    px_dyn_ports = d;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Open_port)

PX_PMPI(MPI_Close_port)(const char *port_name)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Close_port";
    PX_CHECK_INIT(fn);
    if (!port_name)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    px_dyn_port_t **pp = px_dyn_port_find(port_name), *d = *pp;
    if (!d)
        return px_mpi_error(NULL, MPI_ERR_PORT, fn, "'%.64s' is not a port this process opened",
                            port_name);
    *pp = d->next;
    px_port_close(d->port);
    free(d);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Close_port)

/* Arguments every accept and connect checks; MPI_SUCCESS or raised. */
int px_mpi_dyn_check(px_mpi_comm_t *c, MPI_Info info, int root, MPI_Comm *newcomm, const char *fn)
{
    if (!newcomm)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null argument");
    if (c->is_inter)
        return px_mpi_error(c, MPI_ERR_COMM, fn, "comm must be an intra-communicator");
    if (root < 0 || root >= c->size)
        return px_mpi_error(c, MPI_ERR_ROOT, fn, "invalid root %d (size %d)", root, c->size);
    if (c->rank == root && info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_mpi_error(c, MPI_ERR_INFO, fn, "invalid info object");
    return MPI_SUCCESS;
}

/* MPI_Comm_accept (acc) and MPI_Comm_connect: the root waits on its port or
 * connects to one, then the groups meet (the accepting one first in a merge). */
int px_mpi_dyn_accept_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                              MPI_Comm *newcomm, int acc, const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    int rc = px_mpi_dyn_check(c, info, root, newcomm, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    int fd = -1;
    px_status_t st = PX_OK;
    if (c->rank == root && !port_name)
        st = PX_ERR_INVALID_PARAM;
    else if (c->rank == root && acc) {
        /* the port must be this process's: an unknown one is not a name */
        px_dyn_port_t *d = *px_dyn_port_find(port_name);
        st = d ? px_port_accept(d->port, -1, px_mpi_dyn_idle, NULL, &fd) : PX_ERR_INVALID_PARAM;
    } else if (c->rank == root)
        st = px_port_connect(port_name, px_mpi_dyn_timeout_ms(), px_mpi_dyn_idle, NULL, &fd);
    rc = px_mpi_dyn_meet(c, root, fd, st, acc, acc, port_name, newcomm, fn);
    if (fd >= 0)
        close(fd);
    return rc;
}

PX_PMPI(MPI_Comm_accept)
(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    return px_mpi_dyn_accept_connect(port_name, info, root, comm, newcomm, 1, "MPI_Comm_accept");
}
PX_WEAK(MPI_Comm_accept)

PX_PMPI(MPI_Comm_connect)
(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    return px_mpi_dyn_accept_connect(port_name, info, root, comm, newcomm, 0, "MPI_Comm_connect");
}
PX_WEAK(MPI_Comm_connect)

PX_PMPI(MPI_Comm_join)(int fd, MPI_Comm *intercomm)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Comm_join";
    PX_CHECK_INIT(fn);
    if (!intercomm)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    if (fd < 0)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid socket %d", fd);
    *intercomm = MPI_COMM_NULL;
    const px_boot_info_t *b = px_mpi_boot_info();
    uint8_t id[12], pid[12];
    px_dyn_put32(id, (uint32_t)(b->job_id >> 32));
    px_dyn_put32(id + 4, (uint32_t)b->job_id);
    px_dyn_put32(id + 8, (uint32_t)b->rank);
    size_t slen;
    const uint8_t *secret = px_boot_secret(&slen);
    /* the other end may still need this process's progress to get here
     * (a message of ours it waits for, lost and to be sent again) */
    px_status_t st =
        px_port_join(fd, secret, slen, id, pid, px_mpi_dyn_timeout_ms(), px_mpi_dyn_idle, NULL);
    if (st == PX_ERR_AUTH && memcmp(id, pid, 8))
        st = PX_ERR_UNSUPPORTED;
    if (st != PX_OK)
        return px_mpi_error(NULL, px_dyn_class(st), fn, "%s",
                            st == PX_ERR_AUTH ? "the other end did not prove this job's secret"
                                              : px_dyn_why(st));
    /* the lower world rank goes first in a merge */
    int low = (uint32_t)b->rank < px_dyn_get32(pid + 8);
    return px_mpi_dyn_meet(px_mpi_comm_self, 0, fd, PX_OK, low, 0, NULL, intercomm, fn);
}
PX_WEAK(MPI_Comm_join)

/* ---------- the name service ---------- */

static int px_dyn_name_args(const char *service, MPI_Info info, const void *port, const char *fn)
{
    if (!service || !port)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_mpi_error(NULL, MPI_ERR_INFO, fn, "invalid info object");
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Publish_name)(const char *service_name, MPI_Info info, const char *port_name)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Publish_name";
    PX_CHECK_INIT(fn);
    int rc = px_dyn_name_args(service_name, info, port_name, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    px_status_t st = px_name_publish(service_name, port_name);
    if (st == PX_ERR_INVALID_PARAM)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn,
                            "service and port names must have 1 to 100 and 1 to %d characters",
                            MPI_MAX_PORT_NAME - 1);
    if (st != PX_OK)
        return px_mpi_error(NULL, MPI_ERR_SERVICE, fn, "cannot publish '%.100s': %s", service_name,
                            st == PX_ERR_EXISTS ? "it is published already" : px_status_string(st));
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Publish_name)

PX_PMPI(MPI_Lookup_name)(const char *service_name, MPI_Info info, char *port_name)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Lookup_name";
    PX_CHECK_INIT(fn);
    int rc = px_dyn_name_args(service_name, info, port_name, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    px_status_t st = px_name_lookup(service_name, port_name);
    if (st != PX_OK)
        return px_mpi_error(NULL, MPI_ERR_NAME, fn, "'%.100s' %s", service_name,
                            st == PX_ERR_NOT_FOUND ? "is not published" : "cannot be looked up");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Lookup_name)

PX_PMPI(MPI_Unpublish_name)(const char *service_name, MPI_Info info, const char *port_name)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Unpublish_name";
    PX_CHECK_INIT(fn);
    int rc = px_dyn_name_args(service_name, info, port_name, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    /* only the name's own port may take it back */
    char cur[PX_PORT_NAME_MAX];
    px_status_t st = px_name_lookup(service_name, cur);
    if (st == PX_OK && strcmp(cur, port_name))
        return px_mpi_error(NULL, MPI_ERR_SERVICE, fn, "'%.100s' is published with another port",
                            service_name);
    if (st == PX_OK)
        st = px_name_unpublish(service_name);
    if (st != PX_OK)
        return px_mpi_error(NULL, MPI_ERR_SERVICE, fn, "cannot unpublish '%.100s': %s",
                            service_name,
                            st == PX_ERR_NOT_FOUND ? "it is not published" : px_status_string(st));
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Unpublish_name)
