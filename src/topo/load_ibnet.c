/* ibnetdiscover's topology file: one block per node,
 *
 *   Switch  36 "S-0002c90200400010"   # "leaf-1" enhanced port 0 lid 3 lmc 0
 *   [1]     "H-0002c90300a0c001"[1](2c90300a0c002)   # "node01 HCA-1" lid 5 4xQDR
 *   [13]    "S-0002c90200400020"[1]   # "spine-1" lid 7 4xQDR
 *
 *   Ca      1 "H-0002c90300a0c001"    # "node01 HCA-1"
 *   [1](2c90300a0c002)  "S-0002c90200400010"[1]   # lid 5 lmc 0 "leaf-1" lid 3 4xQDR
 *
 * A host is named by the first word of its CA's node description; the CAs
 * of one host are its rails, in the order of their ports. A switch is
 * named by its description, or by its GUID where descriptions repeat. The
 * rate is the link's width and speed (4xQDR = 40 Gbit/s), or pxfab's
 * "rate 10Gbit".
 *
 * OpenSM's forwarding tables may follow, as `ibroute` and dump_lfts.sh
 * print them or as OpenSM writes them to opensm-lfts.dump (the text of
 * one after ibnetdiscover's in the same file):
 *
 *   Unicast lids [0x0-0xc] of switch Lid 3 guid 0x0002c90200500011 (leaf-1):
 *     Lid  Out   Destination
 *          Port     Info
 *   0x0006 001 : (Channel Adapter portguid 0x0002c90300b0c101: 'node01 HCA-1')
 *   0x000c 008 : (path #2 out of 2: portguid 0x0002c90300b0c106)
 *   12 valid lids dumped
 *
 *   Unicast lids [0-12] of switch Lid 3 guid 0x0002c90200500011 ('leaf-1'):
 *   0x0006 001 # Channel Adapter portguid 0x0002c90300b0c101: 'node01 HCA-1'
 *   12 lids dumped
 *
 * A switch is found by its GUID; a destination LID by the host ports'
 * LIDs ibnetdiscover gives ("lid 7 lmc 1": LIDs 7 and 8, paths 0 and 1).
 * Entries toward switches are skipped. A switch with a table then forwards
 * by it, as the subnet manager set it, instead of the computed route. */
#include "topo_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct px_topo_ibport {
    int port, peer_port;
    char peer[24]; /* "S-..." / "H-..." */
    char peer_desc[128];
    uint64_t rate;
    int lid, lmc; /* a Ca's line: its port's; a switch's line: the peer's (lmc -1) */
} px_topo_ibport_t;

typedef struct px_topo_ibnode {
    char guid[24];
    char desc[128];
    int is_switch;
    int vertex;
    px_topo_ibport_t *ports;
    int nports;
} px_topo_ibnode_t;

static const char *px_topo_skip(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* A quoted string at p into out; returns what follows, or NULL. */
static const char *px_topo_quoted(const char *p, char *out, size_t outsz)
{
    p = px_topo_skip(p);
    if (*p != '"')
        return NULL;
    const char *e = strchr(p + 1, '"');
    if (!e)
        return NULL;
    size_t n = (size_t)(e - p - 1) < outsz - 1 ? (size_t)(e - p - 1) : outsz - 1;
    memcpy(out, p + 1, n);
    out[n] = '\0';
    return e + 1;
}

/* Gbit/s per lane of IB's speeds, by name. */
static uint64_t px_topo_ib_rate(const char *comment)
{
    static const struct {
        const char *name;
        uint64_t mbps;
    } speeds[] = {{"SDR", 2500},  {"DDR", 5000},  {"QDR", 10000},  {"FDR10", 10000}, {"FDR", 14000},
                  {"EDR", 25000}, {"HDR", 50000}, {"NDR", 100000}, {"XDR", 200000},  {NULL, 0}};
    for (const char *p = comment; *p; p++) {
        if (!strncmp(p, "rate ", 5)) {
            char *end;
            double v = strtod(p + 5, &end);
            double mult = !strncmp(end, "Gbit", 4)   ? 1e9
                          : !strncmp(end, "Mbit", 4) ? 1e6
                          : !strncmp(end, "Kbit", 4) ? 1e3
                          : !strncmp(end, "bit", 3)  ? 1
                                                     : 0;
            if (end != p + 5 && mult > 0)
                return (uint64_t)(v * mult);
        }
        if (isdigit((unsigned char)*p) && (p == comment || isspace((unsigned char)p[-1]))) {
            char *end;
            long width = strtol(p, &end, 10);
            if (*end != 'x')
                continue;
            for (int i = 0; speeds[i].name; i++) {
                size_t n = strlen(speeds[i].name);
                if (!strncmp(end + 1, speeds[i].name, n) &&
                    (!end[1 + n] || isspace((unsigned char)end[1 + n])))
                    return (uint64_t)width * speeds[i].mbps * 1000000ull;
            }
        }
    }
    return 0;
}

/* "[1](portguid)  "S-..."[3](portguid)  # comment" */
static int px_topo_ib_port_line(const char *line, px_topo_ibport_t *pp)
{
    char *end;
    memset(pp, 0, sizeof(*pp));
    if (*line != '[')
        return -1;
    pp->port = (int)strtol(line + 1, &end, 10);
    if (*end != ']')
        return -1;
    const char *p = end + 1;
    if (*p == '(')
        p = strchr(p, ')') ? strchr(p, ')') + 1 : p;
    p = px_topo_quoted(p, pp->peer, sizeof(pp->peer));
    if (!p || *p != '[')
        return -1;
    pp->peer_port = (int)strtol(p + 1, &end, 10);
    if (*end != ']')
        return -1;
    const char *c = strchr(end, '#');
    if (c) {
        /* the switch side names the peer: # "node01 HCA-1" lid 5 4xQDR */
        const char *q = px_topo_skip(c + 1);
        if (*q == '"')
            q = px_topo_quoted(q, pp->peer_desc, sizeof(pp->peer_desc));
        pp->rate = px_topo_ib_rate(c + 1);
        pp->lmc = -1;
        const char *l = q ? strstr(q, "lid ") : NULL;
        if (l && sscanf(l, "lid %d lmc %d", &pp->lid, &pp->lmc) < 1)
            pp->lid = 0;
    }
    return 0;
}

static px_topo_ibnode_t *px_topo_ib_find(px_topo_ibnode_t *nodes, int n, const char *guid)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(nodes[i].guid, guid))
            return &nodes[i];
    return NULL;
}

static int px_topo_ib_add(px_topo_ibnode_t **nodes, int *n, const char *guid, const char *desc,
                          int is_switch)
{
    px_topo_ibnode_t *nn = realloc(*nodes, sizeof(**nodes) * (size_t)(*n + 1));
    if (!nn)
        return -1;
    *nodes = nn;
    px_topo_ibnode_t *x = &nn[(*n)++];
    memset(x, 0, sizeof(*x));
    snprintf(x->guid, sizeof(x->guid), "%s", guid);
    snprintf(x->desc, sizeof(x->desc), "%s", desc);
    x->is_switch = is_switch;
    x->vertex = -1;
    return 0;
}

/* The vertex of a node: hosts by the first word of their description. */
static int px_topo_ib_vertex(px_topo_t *t, px_topo_ibnode_t *nodes, int n, px_topo_ibnode_t *x)
{
    if (x->vertex >= 0)
        return x->vertex;
    if (!x->is_switch) {
        char host[128];
        size_t k = strcspn(x->desc, " \t");
        snprintf(host, sizeof(host), "%.*s", (int)k, x->desc);
        x->vertex = px_topo_add_host(t, k ? host : x->guid);
        return x->vertex;
    }
    int repeated = !x->desc[0];
    for (int i = 0; i < n && !repeated; i++)
        repeated = &nodes[i] != x && nodes[i].is_switch && !strcmp(nodes[i].desc, x->desc);
    x->vertex = px_topo_add_switch(t, repeated ? x->guid : x->desc, -1);
    return x->vertex;
}

/* A port's name: the switch's port number, or the CA's description after
 * the host name with the port ("HCA-1/1"), so two CAs of a host differ. */
static int px_topo_ib_port(px_topo_t *t, px_topo_ibnode_t *x, int port)
{
    char name[160];
    const char *rest = x->desc + strcspn(x->desc, " \t");
    rest = px_topo_skip(rest);
    if (x->is_switch || !*rest)
        snprintf(name, sizeof(name), "%d", port);
    else
        snprintf(name, sizeof(name), "%s/%d", rest, port);
    return px_topo_add_port(t, x->vertex, name);
}

#define PX_TOPO_IB_LIDS 0xc000 /* unicast LIDs are below */

typedef struct px_topo_iblid {
    int host, rail, path;
} px_topo_iblid_t;

/* Maps the LIDs of a host port (base LID and its 2^lmc paths), unless
 * already known. */
static void px_topo_ib_map(px_topo_iblid_t *map, int lid, int lmc, int host, int rail)
{
    for (int p = 0; lid > 0 && p < (1 << (lmc > 0 && lmc < 8 ? lmc : 0)); p++)
        if (lid + p < PX_TOPO_IB_LIDS && map[lid + p].host < 0)
            map[lid + p] = (px_topo_iblid_t){host, rail, p};
}

static px_status_t px_topo_ib_lfts(px_topo_t *t, px_topo_ibnode_t *nodes, int n, const char *text,
                                   const char *name, char *err, size_t errlen)
{
    px_topo_iblid_t *map = malloc(sizeof(*map) * PX_TOPO_IB_LIDS);
    if (!map)
        return PX_ERR_NO_MEMORY;
    for (int i = 0; i < PX_TOPO_IB_LIDS; i++)
        map[i].host = -1;
    /* a host port's own block first (it gives the LMC), then switches' lines */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            px_topo_ibnode_t *x = &nodes[i];
            if (x->is_switch != pass)
                continue;
            for (int k = 0; k < x->nports; k++) {
                px_topo_ibport_t *pp = &x->ports[k];
                px_topo_ibnode_t *y = pass ? px_topo_ib_find(nodes, n, pp->peer) : x;
                if (!y || y->is_switch || pp->lid <= 0)
                    continue;
                int rail = px_topo_ib_port(t, y, pass ? pp->peer_port : pp->port);
                if (rail < 0) {
                    free(map);
                    return PX_ERR_NO_MEMORY;
                }
                px_topo_ib_map(map, pp->lid, pass ? 0 : pp->lmc, t->v[y->vertex].index, rail);
            }
        }
    px_status_t st = PX_OK;
    const char *pos = text;
    char *line;
    int lineno = 0, sw = -1;
    while (st == PX_OK && (line = px_topo_next_line(&pos))) {
        lineno++;
        const char *p = px_topo_skip(line), *g;
        if (!strncmp(p, "Unicast lids", 12)) {
            unsigned long long guid = (g = strstr(p, " guid 0x")) ? strtoull(g + 8, NULL, 16) : 0;
            sw = -1;
            for (int i = 0; i < n && sw < 0; i++)
                if (nodes[i].is_switch && strtoull(nodes[i].guid + 2, NULL, 16) == guid)
                    sw = nodes[i].vertex;
            if (sw < 0) {
                px_topo_err(err, errlen,
                            "%s:%d: forwarding table of switch 0x%016llx, which the description "
                            "lacks",
                            name, lineno, guid);
                st = PX_ERR_INVALID_PARAM;
            }
        } else if (strstr(p, "lids dumped")) {
            sw = -1;
        } else if (sw >= 0 && !strncmp(p, "0x", 2)) {
            char *e, *e2;
            long lid = strtol(p, &e, 16), port = strtol(e, &e2, 10);
            if (e2 == e || lid <= 0 || lid >= PX_TOPO_IB_LIDS || map[lid].host < 0) {
                free(line);
                continue; /* a switch's LID, or one the description does not give */
            }
            char pname[16];
            snprintf(pname, sizeof(pname), "%ld", port);
            int pi = px_topo_add_port(t, sw, pname);
            if (pi < 0)
                st = PX_ERR_NO_MEMORY;
            else if (t->v[sw].ports[pi].link < 0) {
                px_topo_err(err, errlen, "%s:%d: switch %s sends LID %ld to port %ld, not cabled",
                            name, lineno, t->v[sw].name, lid, port);
                st = PX_ERR_INVALID_PARAM;
            } else {
                st = px_topo_add_fwd(t, sw, map[lid].host, map[lid].rail, map[lid].path, pi);
            }
        }
        free(line);
    }
    free(map);
    return st;
}

px_status_t px_topo_parse_ibnet(px_topo_t *t, const char *text, const char *name, char *err,
                                size_t errlen)
{
    px_topo_ibnode_t *nodes = NULL;
    int n = 0, lineno = 0;
    px_status_t st = PX_ERR_INVALID_PARAM;
    const char *pos = text;
    char *line;
    while ((line = px_topo_next_line(&pos))) {
        lineno++;
        const char *p = px_topo_skip(line);
        int is_switch = !strncmp(p, "Switch", 6) && isspace((unsigned char)p[6]);
        int is_ca = (!strncmp(p, "Ca", 2) || !strncmp(p, "Rt", 2)) && isspace((unsigned char)p[2]);
        if (is_switch || is_ca) {
            char guid[24] = "", desc[128] = "";
            const char *q = p + (is_switch ? 6 : 2);
            strtol(q, (char **)&q, 10);
            q = px_topo_quoted(q, guid, sizeof(guid));
            const char *c = q ? strchr(q, '#') : NULL;
            if (c)
                px_topo_quoted(c + 1, desc, sizeof(desc));
            if (!q) {
                px_topo_err(err, errlen, "%s:%d: a %s line without its \"GUID\"", name, lineno,
                            is_switch ? "Switch" : "Ca");
                free(line);
                goto out;
            }
            if (px_topo_ib_add(&nodes, &n, guid, desc, is_switch || p[0] == 'R') < 0) {
                free(line);
                goto oom;
            }
        } else if (*p == '[' && n > 0) {
            px_topo_ibnode_t *x = &nodes[n - 1];
            px_topo_ibport_t pp;
            if (px_topo_ib_port_line(p, &pp) < 0) {
                px_topo_err(err, errlen, "%s:%d: not a port line: %s", name, lineno, p);
                free(line);
                goto out;
            }
            px_topo_ibport_t *np = realloc(x->ports, sizeof(*np) * (size_t)(x->nports + 1));
            if (!np) {
                free(line);
                goto oom;
            }
            x->ports = np;
            x->ports[x->nports++] = pp;
        }
        free(line);
    }
    /* peers only named from the other side's lines */
    for (int i = 0, total = n; i < total; i++)
        for (int k = 0; k < nodes[i].nports; k++) {
            px_topo_ibport_t *pp = &nodes[i].ports[k];
            if (!px_topo_ib_find(nodes, n, pp->peer) &&
                px_topo_ib_add(&nodes, &n, pp->peer, pp->peer_desc, pp->peer[0] != 'H') < 0)
                goto oom;
        }
    /* hosts in the order of their CA blocks, then the switches */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if (nodes[i].is_switch == pass && px_topo_ib_vertex(t, nodes, n, &nodes[i]) < 0)
                goto oom;
    /* a host's rails in the order of its own blocks' ports, whichever
     * block names them first */
    for (int i = 0; i < n; i++)
        for (int k = 0; !nodes[i].is_switch && k < nodes[i].nports; k++)
            if (px_topo_ib_port(t, &nodes[i], nodes[i].ports[k].port) < 0)
                goto oom;
    for (int i = 0; i < n; i++) {
        px_topo_ibnode_t *x = &nodes[i];
        for (int k = 0; k < x->nports; k++) {
            px_topo_ibport_t *pp = &x->ports[k];
            px_topo_ibnode_t *y = px_topo_ib_find(nodes, n, pp->peer);
            int pa = px_topo_ib_port(t, x, pp->port), pb = px_topo_ib_port(t, y, pp->peer_port);
            if (pa < 0 || pb < 0)
                goto oom;
            if (px_topo_connect(t, x->vertex, pa, y->vertex, pb, pp->rate) != PX_OK) {
                px_topo_err(err, errlen, "%s: port %d of %s is cabled to two places", name,
                            pp->port, x->guid);
                goto out;
            }
        }
    }
    st = strstr(text, "Unicast lids") ? px_topo_ib_lfts(t, nodes, n, text, name, err, errlen)
                                      : PX_OK;
    goto out;
oom:
    st = PX_ERR_NO_MEMORY;
out:
    for (int i = 0; i < n; i++)
        free(nodes[i].ports);
    free(nodes);
    return st;
}
