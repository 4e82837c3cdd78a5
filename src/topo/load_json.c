/* Plexus JSON, as pxfab exports it (python/plexus/fab/export.py): nodes
 * with their rails (interface, addresses, switch and port), switches with
 * levels, links with rates, and every router's table of /32 routes, which
 * becomes the switches' forwarding tables (an address is a (host, rail,
 * path): the rail's position and the address's position in its list). */
#include "topo_impl.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct px_topo_addr {
    char ip[48];
    int host, rail, path;
} px_topo_addr_t;

static const char *px_topo_jstr(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static uint64_t px_topo_jrate(json_t *o)
{
    json_t *v = json_object_get(o, "rate_bps");
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v)
           : json_is_real(v) && json_real_value(v) > 0     ? (uint64_t)json_real_value(v)
                                                           : 0;
}

/* A link end: a host's interface or a switch's port (named after the
 * peer when the description leaves it out, as pxfab does). */
static int px_topo_jend(px_topo_t *t, const char *owner, const char *port, const char *peer,
                        int *port_p)
{
    int v = px_topo_names_get(&t->host_names, owner);
    if (v < 0)
        v = px_topo_names_get(&t->switch_names, owner);
    if (v < 0)
        return -1;
    *port_p = px_topo_add_port(t, v, port ? port : peer);
    return *port_p < 0 ? -1 : v;
}

px_status_t px_topo_parse_json(px_topo_t *t, const char *text, size_t len, const char *name,
                               char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root) {
        px_topo_err(err, errlen, "%s:%d:%d: invalid JSON: %s", name, je.line, je.column, je.text);
        return PX_ERR_INVALID_PARAM;
    }
    px_status_t st = PX_ERR_INVALID_PARAM;
    px_topo_addr_t *addrs = NULL;
    size_t naddrs = 0;
    json_t *nodes = json_object_get(root, "nodes"), *switches = json_object_get(root, "switches");
    json_t *links = json_object_get(root, "links"), *x;
    size_t i, j, k;
    const char *fmt = px_topo_jstr(root, "format");
    if (!fmt || strcmp(fmt, "plexus-topology") || !json_is_array(nodes) || !json_is_array(links)) {
        px_topo_err(err, errlen,
                    "%s: not a Plexus topology (\"format\": \"plexus-topology\" with nodes and "
                    "links; pxfab export --format plexus-json writes one)",
                    name);
        goto out;
    }
    json_array_foreach(switches, i, x)
    {
        const char *sname = px_topo_jstr(x, "name");
        json_t *lv = json_object_get(x, "level");
        if (!sname) {
            px_topo_err(err, errlen, "%s: switch %zu has no name", name, i);
            goto out;
        }
        if (px_topo_add_switch(t, sname, json_is_integer(lv) ? (int)json_integer_value(lv) : -1) <
            0)
            goto oom;
    }
    json_array_foreach(nodes, i, x)
    {
        const char *hname = px_topo_jstr(x, "name");
        json_t *rails = json_object_get(x, "rails"), *r, *a;
        int hv = hname ? px_topo_add_host(t, hname) : -1;
        if (!hname) {
            px_topo_err(err, errlen, "%s: node %zu has no name", name, i);
            goto out;
        }
        if (hv < 0)
            goto oom;
        json_array_foreach(rails, j, r)
        {
            const char *iface = px_topo_jstr(r, "iface");
            char fallback[32];
            snprintf(fallback, sizeof(fallback), "rail%zu", j);
            if (px_topo_add_port(t, hv, iface ? iface : fallback) < 0)
                goto oom;
            json_array_foreach(json_object_get(r, "addresses"), k, a)
            {
                if (!json_is_string(a))
                    continue;
                px_topo_addr_t *na = realloc(addrs, sizeof(*addrs) * (naddrs + 1));
                if (!na)
                    goto oom;
                addrs = na;
                snprintf(addrs[naddrs].ip, sizeof(addrs[naddrs].ip), "%s", json_string_value(a));
                addrs[naddrs].ip[strcspn(addrs[naddrs].ip, "/")] = '\0';
                addrs[naddrs].host = t->v[hv].index;
                addrs[naddrs].rail = (int)j;
                addrs[naddrs].path = (int)k;
                naddrs++;
            }
        }
    }
    json_array_foreach(links, i, x)
    {
        const char *a = px_topo_jstr(x, "a"), *b = px_topo_jstr(x, "b");
        int pa, pb, va = a && b ? px_topo_jend(t, a, px_topo_jstr(x, "a_port"), b, &pa) : -1;
        int vb = va >= 0 ? px_topo_jend(t, b, px_topo_jstr(x, "b_port"), a, &pb) : -1;
        if (va < 0 || vb < 0) {
            px_topo_err(err, errlen, "%s: link %zu: unknown end %s", name, i,
                        !a       ? "(none)"
                        : va < 0 ? a
                        : b      ? b
                                 : "(none)");
            goto out;
        }
        if (px_topo_connect(t, va, pa, vb, pb, px_topo_jrate(x)) != PX_OK) {
            px_topo_err(err, errlen, "%s: link %zu: a port of %s-%s is cabled twice", name, i, a,
                        b);
            goto out;
        }
    }
    json_t *routes = json_object_get(json_object_get(root, "routing"), "routes"), *table, *port;
    const char *sw, *ip;
    json_object_foreach(routes, sw, table)
    {
        int sv = px_topo_names_get(&t->switch_names, sw);
        if (sv < 0) {
            px_topo_err(err, errlen, "%s: routes of unknown switch %s", name, sw);
            goto out;
        }
        json_object_foreach(table, ip, port)
        {
            size_t n;
            for (n = 0; n < naddrs && strcmp(addrs[n].ip, ip); n++)
                ;
            int p = json_is_string(port) ? px_topo_add_port(t, sv, json_string_value(port)) : -1;
            if (n == naddrs || p < 0 || t->v[sv].ports[p].link < 0) {
                px_topo_err(err, errlen, "%s: switch %s: route to %s: unknown %s", name, sw, ip,
                            n == naddrs ? "address" : "port");
                goto out;
            }
            if (px_topo_add_fwd(t, sv, addrs[n].host, addrs[n].rail, addrs[n].path, p) != PX_OK)
                goto oom;
        }
    }
    st = PX_OK;
    goto out;
oom:
    st = PX_ERR_NO_MEMORY;
out:
    free(addrs);
    json_decref(root);
    return st;
}
