/* Dynamic processes (MPI-3.1 chapter 10): ports, MPI_Comm_accept,
 * MPI_Comm_connect, MPI_Comm_join, the name service, and MPI_Comm_spawn's
 * entry points.
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
 * The peers of a process are the ranks of its job: two groups of one job
 * meet, groups of two different jobs are refused with
 * MPI_ERR_UNSUPPORTED_OPERATION (adding another job's processes as peers
 * is not implemented yet), and MPI_Comm_spawn fails with MPI_ERR_SPAWN. */
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

static int px_dyn_timeout_ms(void)
{
    double ms = px_params.port_timeout * 1000.0;
    return ms >= (double)INT_MAX ? INT_MAX : ms < 1 ? 1 : (int)ms;
}

/* While a root waits on its socket, the others' messages still move. */
static void px_dyn_idle(void *arg)
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
        if (px_port_swap(a->fd, out, 4, in, 4, px_dyn_timeout_ms(), px_dyn_idle, NULL) != PX_OK)
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

/* The root's side of the exchange: the other group's world ranks into
 * *rworld_p (malloc'ed) and their number into *rn_p. */
static px_status_t px_dyn_swap_groups(px_mpi_comm_t *c, int fd, int **rworld_p, int *rn_p)
{
    const px_boot_info_t *b = px_mpi_boot_info();
    uint8_t hdr[12], rhdr[12];
    px_dyn_put32(hdr, (uint32_t)(b->job_id >> 32));
    px_dyn_put32(hdr + 4, (uint32_t)b->job_id);
    px_dyn_put32(hdr + 8, (uint32_t)c->size);
    int tmo = px_dyn_timeout_ms();
    px_status_t st = px_port_swap(fd, hdr, 12, rhdr, 12, tmo, px_dyn_idle, NULL);
    if (st != PX_OK)
        return st;
    /* both roots see the same two ids: both stop here, or neither */
    if (memcmp(hdr, rhdr, 8))
        return PX_ERR_UNSUPPORTED;
    uint32_t rn = px_dyn_get32(rhdr + 8);
    if (rn == 0 || rn > (uint32_t)b->size)
        return PX_ERR_PROTOCOL;
    uint8_t *out = malloc(4 * (size_t)c->size), *in = malloc(4 * (size_t)rn);
    int *rw = malloc(sizeof(int) * rn);
    uint8_t *mine = calloc((size_t)b->size, 1);
    st = out && in && rw && mine ? PX_OK : PX_ERR_NO_MEMORY;
    if (st == PX_OK) {
        for (int i = 0; i < c->size; i++) {
            px_dyn_put32(out + 4 * i, (uint32_t)c->group->world[i]);
            mine[c->group->world[i]] = 1;
        }
        st = px_port_swap(fd, out, 4 * (size_t)c->size, in, 4 * (size_t)rn, tmo, px_dyn_idle, NULL);
    }
    /* ranks of this job, none twice, none in this group */
    for (uint32_t i = 0; st == PX_OK && i < rn; i++) {
        uint32_t w = px_dyn_get32(in + 4 * i);
        if (w >= (uint32_t)b->size || mine[w])
            st = PX_ERR_PROTOCOL;
        else
            mine[w] = 2, rw[i] = (int)w;
    }
    free(out);
    free(in);
    free(mine);
    if (st != PX_OK) {
        free(rw);
        return st;
    }
    *rworld_p = rw;
    *rn_p = (int)rn;
    return PX_OK;
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
        return "the other group belongs to another job; connecting the processes of two jobs is "
               "not implemented yet";
    case PX_ERR_PROTOCOL:
        return "the other side sent a group that is not valid here (the groups must be disjoint)";
    default:
        return "the connection between the roots failed";
    }
}

static int px_dyn_class(px_status_t st)
{
    return st == PX_ERR_UNSUPPORTED ? MPI_ERR_UNSUPPORTED_OPERATION
           : st == PX_ERR_NO_MEMORY ? MPI_ERR_NO_MEM
                                    : MPI_ERR_PORT;
}

/* Collective over c: the root (which has fd, or has failed with st) meets
 * the other group's root; everyone gets the inter-communicator. low: this
 * side goes first in an Intercomm_merge where both pass the same `high`. */
static int px_dyn_meet(px_mpi_comm_t *c, int root, int fd, px_status_t st, int low,
                       MPI_Comm *newcomm, const char *fn)
{
    int hdr[2] = {st, 0}, *rworld = NULL;
    *newcomm = MPI_COMM_NULL; /* what a failure leaves */
    if (c->rank == root && st == PX_OK)
        hdr[0] = px_dyn_swap_groups(c, fd, &rworld, &hdr[1]);
    int rc = px_mpi_coll_bcast(hdr, 2, MPI_INT, root, c);
    if (rc != MPI_SUCCESS || hdr[0] != PX_OK) {
        free(rworld);
        if (rc != MPI_SUCCESS)
            return px_mpi_error(c, rc, fn, "communication failed in the local group");
        return px_mpi_error(c, px_dyn_class(hdr[0]), fn, "%s", px_dyn_why(hdr[0]));
    }
    px_mpi_group_t *rg = px_mpi_group_new(hdr[1]);
    if (!rg) {
        free(rworld);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    if (rworld)
        memcpy(rg->world, rworld, sizeof(int) * (size_t)hdr[1]);
    free(rworld);
    rg->rank = MPI_UNDEFINED;
    rc = px_mpi_coll_bcast(rg->world, hdr[1], MPI_INT, root, c);
    uint32_t ctx = 0;
    px_dyn_max_t a = {c, root, fd};
    if (rc == MPI_SUCCESS)
        rc = px_mpi_comm_agree_ctx(4, px_dyn_max, &a, &ctx);
    if (rc != MPI_SUCCESS) {
        px_mpi_group_release(rg);
        return px_mpi_error(c, rc, fn,
                            rc == MPI_ERR_PORT ? "the connection between the roots failed"
                                               : "cannot agree on a context id");
    }
    px_mpi_comm_t *nc;
    c->group->refs++;
    rc = px_mpi_intercomm_build(c, c->group, rg, ctx, low, &nc);
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
static int px_dyn_check(px_mpi_comm_t *c, MPI_Info info, int root, MPI_Comm *newcomm,
                        const char *fn)
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
static int px_dyn_accept_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                                 MPI_Comm *newcomm, int acc, const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    int rc = px_dyn_check(c, info, root, newcomm, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    int fd = -1;
    px_status_t st = PX_OK;
    if (c->rank == root && !port_name)
        st = PX_ERR_INVALID_PARAM;
    else if (c->rank == root && acc) {
        /* the port must be this process's: an unknown one is not a name */
        px_dyn_port_t *d = *px_dyn_port_find(port_name);
        st = d ? px_port_accept(d->port, -1, px_dyn_idle, NULL, &fd) : PX_ERR_INVALID_PARAM;
    } else if (c->rank == root)
        st = px_port_connect(port_name, px_dyn_timeout_ms(), px_dyn_idle, NULL, &fd);
    rc = px_dyn_meet(c, root, fd, st, acc, newcomm, fn);
    if (fd >= 0)
        close(fd);
    return rc;
}

PX_PMPI(MPI_Comm_accept)
(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    return px_dyn_accept_connect(port_name, info, root, comm, newcomm, 1, "MPI_Comm_accept");
}
PX_WEAK(MPI_Comm_accept)

PX_PMPI(MPI_Comm_connect)
(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    return px_dyn_accept_connect(port_name, info, root, comm, newcomm, 0, "MPI_Comm_connect");
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
    px_status_t st = px_port_join(fd, secret, slen, id, pid, px_dyn_timeout_ms());
    if (st == PX_ERR_AUTH && memcmp(id, pid, 8))
        st = PX_ERR_UNSUPPORTED;
    if (st != PX_OK)
        return px_mpi_error(NULL, px_dyn_class(st), fn, "%s",
                            st == PX_ERR_AUTH ? "the other end did not prove this job's secret"
                                              : px_dyn_why(st));
    /* the lower world rank goes first in a merge */
    int low = (uint32_t)b->rank < px_dyn_get32(pid + 8);
    return px_dyn_meet(px_mpi_comm_self, 0, fd, PX_OK, low, intercomm, fn);
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

/* ---------- spawning ---------- */

static int px_dyn_spawn_fail(int n, int *errcodes, const char *fn, px_mpi_comm_t *c)
{
    if (errcodes)
        for (int i = 0; i < n; i++)
            errcodes[i] = MPI_ERR_SPAWN;
    return px_mpi_error(c, MPI_ERR_SPAWN, fn,
                        "starting processes is not implemented yet (no process was started)");
}

PX_PMPI(MPI_Comm_spawn)
(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
 MPI_Comm *intercomm, int array_of_errcodes[])
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Comm_spawn";
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    (void)command, (void)argv, (void)info;
    int rc = px_dyn_check(c, MPI_INFO_NULL, root, intercomm, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    *intercomm = MPI_COMM_NULL;
    /* maxprocs is the root's: everyone learns it for array_of_errcodes */
    int n = c->rank == root && maxprocs > 0 ? maxprocs : 0;
    px_mpi_coll_bcast(&n, 1, MPI_INT, root, c);
    return px_dyn_spawn_fail(n, array_of_errcodes, fn, c);
}
PX_WEAK(MPI_Comm_spawn)

PX_PMPI(MPI_Comm_spawn_multiple)
(int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[],
 const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm,
 int array_of_errcodes[])
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Comm_spawn_multiple";
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    (void)array_of_commands, (void)array_of_argv, (void)array_of_info;
    int rc = px_dyn_check(c, MPI_INFO_NULL, root, intercomm, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = 0;
    if (c->rank == root && count > 0 && array_of_maxprocs)
        for (int i = 0; i < count; i++)
            n += array_of_maxprocs[i] > 0 ? array_of_maxprocs[i] : 0;
    *intercomm = MPI_COMM_NULL;
    px_mpi_coll_bcast(&n, 1, MPI_INT, root, c);
    return px_dyn_spawn_fail(n, array_of_errcodes, fn, c);
}
PX_WEAK(MPI_Comm_spawn_multiple)

/* No process of a Plexus job was started by MPI_Comm_spawn. */
PX_PMPI(MPI_Comm_get_parent)(MPI_Comm *parent)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Comm_get_parent";
    PX_CHECK_INIT(fn);
    if (!parent)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_get_parent)
