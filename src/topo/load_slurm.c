/* Slurm's topology.conf (topology/tree):
 *
 *   SwitchName=leaf0 Nodes=node[01-16] LinkSpeed=100000
 *   SwitchName=spine0 Switches=leaf[0-1]
 *
 * Nodes and switches are Slurm host lists. A switch's LinkSpeed (Slurm
 * leaves its unit open; pxfab's export writes Mbit/s, read so here) is the
 * rate of the links its line lists. Hosts are numbered in the order the
 * file first names them. */
#include "topo_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef int (*px_topo_name_cb_t)(void *arg, const char *name);

/* Calls cb for each name of a host list item such as "a[01-03,7]b[1-2]"
 * (every bracket expands, the first one slowest). */
static int px_topo_expand(const char *item, px_topo_name_cb_t cb, void *arg)
{
    const char *lb = strchr(item, '[');
    if (!lb)
        return cb(arg, item);
    const char *rb = strchr(lb, ']');
    if (!rb)
        return -2;
    size_t plen = (size_t)(lb - item);
    for (const char *r = lb + 1; r < rb;) {
        const char *comma = memchr(r, ',', (size_t)(rb - r));
        const char *end = comma ? comma : rb;
        char *dash = memchr(r, '-', (size_t)(end - r));
        char *e;
        long lo = strtol(r, &e, 10), hi = lo;
        int width = (int)(e - r);
        if (e == r || (dash && e != dash) || (!dash && e != end))
            return -2;
        if (dash) {
            hi = strtol(dash + 1, &e, 10);
            if (e != end || hi < lo)
                return -2;
        }
        for (long v = lo; v <= hi; v++) {
            size_t need = plen + 32 + strlen(rb + 1);
            char *name = malloc(need);
            if (!name)
                return -1;
            snprintf(name, need, "%.*s%0*ld%s", (int)plen, item, width, v, rb + 1);
            int rc = px_topo_expand(name, cb, arg);
            free(name);
            if (rc)
                return rc;
        }
        r = end + 1;
    }
    return 0;
}

/* The items of a host list: commas outside brackets separate them. */
static int px_topo_hostlist(const char *list, px_topo_name_cb_t cb, void *arg)
{
    int depth = 0;
    const char *start = list;
    for (const char *p = list;; p++) {
        if (*p == '[')
            depth++;
        else if (*p == ']')
            depth--;
        if ((*p == ',' && depth == 0) || !*p) {
            if (p > start) {
                char *item = strndup(start, (size_t)(p - start));
                int rc = item ? px_topo_expand(item, cb, arg) : -1;
                free(item);
                if (rc)
                    return rc;
            }
            if (!*p)
                return depth ? -2 : 0;
            start = p + 1;
        }
    }
}

typedef struct px_topo_slurm_ctx {
    px_topo_t *t;
    int sw;
    int hosts; /* adding hosts (1) or switches (0) */
    uint64_t rate;
    const char *missing;
    char missing_buf[128];
} px_topo_slurm_ctx_t;

static int px_topo_slurm_link(void *arg, const char *name)
{
    px_topo_slurm_ctx_t *c = arg;
    px_topo_t *t = c->t;
    int v = c->hosts ? px_topo_add_host(t, name) : px_topo_names_get(&t->switch_names, name);
    if (v < 0 && !c->hosts) {
        snprintf(c->missing_buf, sizeof(c->missing_buf), "%s", name);
        c->missing = c->missing_buf;
        return -3;
    }
    int pa = v < 0 ? -1 : px_topo_add_port(t, c->sw, name);
    int pb = pa < 0 ? -1 : px_topo_add_port(t, v, c->hosts ? "hca0" : t->v[c->sw].name);
    if (pb < 0)
        return -1;
    return px_topo_connect(t, c->sw, pa, v, pb, c->rate) == PX_OK ? 0 : -4;
}

/* The value of KEY= in a line (case-insensitive key), copied. */
static char *px_topo_slurm_value(const char *line, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = line; *p;) {
        while (isspace((unsigned char)*p))
            p++;
        const char *e = p;
        while (*e && !isspace((unsigned char)*e))
            e++;
        if ((size_t)(e - p) > klen && p[klen] == '=' && !strncasecmp(p, key, klen))
            return strndup(p + klen + 1, (size_t)(e - p) - klen - 1);
        p = e;
    }
    return NULL;
}

px_status_t px_topo_parse_slurm(px_topo_t *t, const char *text, const char *name, char *err,
                                size_t errlen)
{
    /* the switches first, as a line may name a switch that a later line
     * describes */
    for (int pass = 0; pass < 2; pass++) {
        const char *pos = text;
        char *line;
        int lineno = 0;
        while ((line = px_topo_next_line(&pos))) {
            lineno++;
            line[strcspn(line, "#")] = '\0';
            char *sw = px_topo_slurm_value(line, "SwitchName");
            const char *p = line;
            while (isspace((unsigned char)*p))
                p++;
            if (!sw && *p) {
                px_topo_err(err, errlen, "%s:%d: expected SwitchName=...: %s", name, lineno, p);
                free(line);
                return PX_ERR_INVALID_PARAM;
            }
            int rc = 0;
            if (sw && pass == 0) {
                rc = px_topo_add_switch(t, sw, -1) < 0 ? -1 : 0;
            } else if (sw) {
                px_topo_slurm_ctx_t c = {t, px_topo_names_get(&t->switch_names, sw), 1, 0, NULL,
                                         ""};
                char *speed = px_topo_slurm_value(line, "LinkSpeed");
                char *nodes = px_topo_slurm_value(line, "Nodes");
                char *below = px_topo_slurm_value(line, "Switches");
                c.rate = speed ? strtoull(speed, NULL, 10) * 1000000ull : 0;
                if (nodes)
                    rc = px_topo_hostlist(nodes, px_topo_slurm_link, &c);
                c.hosts = 0;
                if (below && !rc)
                    rc = px_topo_hostlist(below, px_topo_slurm_link, &c);
                free(speed);
                free(nodes);
                free(below);
                if (rc == -3)
                    px_topo_err(err, errlen, "%s:%d: switch %s is not described", name, lineno,
                                c.missing);
                else if (rc == -4)
                    px_topo_err(err, errlen, "%s:%d: %s is listed twice", name, lineno, sw);
                else if (rc == -2)
                    px_topo_err(err, errlen, "%s:%d: bad host list", name, lineno);
            }
            free(sw);
            free(line);
            if (rc)
                return rc == -1 ? PX_ERR_NO_MEMORY : PX_ERR_INVALID_PARAM;
        }
    }
    return PX_OK;
}
