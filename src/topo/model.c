/* The fabric model: building it, reading a description in any of the
 * formats, the compact form the job shares, and lookups by name. */
#include "topo_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void px_topo_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ names */

static uint64_t px_topo_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int px_topo_names_get(const px_topo_names_t *m, const char *key)
{
    if (!m->cap)
        return -1;
    for (size_t i = px_topo_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i])
            return -1;
        if (!strcmp(m->keys[i], key))
            return m->vals[i];
    }
}

/* key is owned by the vertex that holds it */
static int px_topo_names_put(px_topo_names_t *m, char *key, int val)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        char **keys = calloc(cap, sizeof(*keys));
        int *vals = calloc(cap, sizeof(*vals));
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            size_t j = px_topo_hash(m->keys[i]) & (cap - 1);
            while (keys[j])
                j = (j + 1) & (cap - 1);
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    size_t i = px_topo_hash(key) & (m->cap - 1);
    while (m->keys[i])
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return 0;
}

int px_topo_natcmp(const char *a, const char *b)
{
    while (*a || *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            size_t na = 0, nb = 0;
            while (isdigit((unsigned char)a[na]))
                na++;
            while (isdigit((unsigned char)b[nb]))
                nb++;
            if (na != nb)
                return na < nb ? -1 : 1;
            int c = strncmp(a, b, na);
            if (c)
                return c;
            a += na;
            b += nb;
            continue;
        }
        /* a digit run against text: Python compares the text chunk that
         * ends there, so the side whose text ended first is smaller */
        if (isdigit((unsigned char)*a) || !*a)
            return *b ? -1 : 1;
        if (isdigit((unsigned char)*b) || !*b)
            return 1;
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return 0;
}

/* ------------------------------------------------------------ building */

px_topo_t *px_topo_new(const char *format)
{
    px_topo_t *t = calloc(1, sizeof(*t));
    if (t)
        t->format = format;
    return t;
}

static int px_topo_grow(void **arr, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

static int px_topo_add_vertex(px_topo_t *t, const char *name, int is_host, int level)
{
    px_topo_names_t *names = is_host ? &t->host_names : &t->switch_names;
    int v = px_topo_names_get(names, name);
    if (v >= 0) {
        if (!is_host && level >= 0)
            t->v[v].level = level;
        return v;
    }
    int **list = is_host ? &t->hosts : &t->switches;
    int *n = is_host ? &t->nhosts : &t->nswitches;
    int *cap = is_host ? &t->hcap : &t->scap;
    if (px_topo_grow((void **)&t->v, &t->vcap, t->nv + 1, sizeof(*t->v)) ||
        px_topo_grow((void **)list, cap, *n + 1, sizeof(int)))
        return -1;
    px_topo_vertex_t *x = &t->v[t->nv];
    memset(x, 0, sizeof(*x));
    x->name = strdup(name);
    if (!x->name || px_topo_names_put(names, x->name, t->nv)) {
        free(x->name);
        return -1;
    }
    x->is_host = is_host;
    x->index = *n;
    x->level = is_host ? -1 : level;
    (*list)[(*n)++] = t->nv;
    t->ready = t->clustered = 0;
    return t->nv++;
}

int px_topo_add_host(px_topo_t *t, const char *name) { return px_topo_add_vertex(t, name, 1, -1); }

int px_topo_add_switch(px_topo_t *t, const char *name, int level)
{
    return px_topo_add_vertex(t, name, 0, level);
}

int px_topo_add_port(px_topo_t *t, int vertex, const char *name)
{
    px_topo_vertex_t *x = &t->v[vertex];
    for (int i = 0; i < x->nports; i++)
        if (!strcmp(x->ports[i].name, name))
            return i;
    if (px_topo_grow((void **)&x->ports, &x->portcap, x->nports + 1, sizeof(*x->ports)))
        return -1;
    x->ports[x->nports].name = strdup(name);
    x->ports[x->nports].link = -1;
    if (!x->ports[x->nports].name)
        return -1;
    return x->nports++;
}

px_status_t px_topo_connect(px_topo_t *t, int va, int pa, int vb, int pb, uint64_t rate)
{
    int la = t->v[va].ports[pa].link, lb = t->v[vb].ports[pb].link;
    if (la >= 0 || lb >= 0) {
        px_topo_link_t *l = &t->links[la >= 0 ? la : lb];
        int same =
            la == lb && ((l->v[0] == va && l->p[0] == pa && l->v[1] == vb && l->p[1] == pb) ||
                         (l->v[0] == vb && l->p[0] == pb && l->v[1] == va && l->p[1] == pa));
        if (!same)
            return PX_ERR_EXISTS;
        if (!l->rate)
            l->rate = rate;
        return PX_OK;
    }
    if (px_topo_grow((void **)&t->links, &t->lcap, t->nlinks + 1, sizeof(*t->links)))
        return PX_ERR_NO_MEMORY;
    t->links[t->nlinks] = (px_topo_link_t){{va, vb}, {pa, pb}, rate};
    t->v[va].ports[pa].link = t->nlinks;
    t->v[vb].ports[pb].link = t->nlinks;
    t->nlinks++;
    t->ready = t->clustered = 0;
    return PX_OK;
}

px_status_t px_topo_add_fwd(px_topo_t *t, int sw, int host, int rail, int path, int port)
{
    px_topo_vertex_t *x = &t->v[sw];
    if (px_topo_grow((void **)&x->fwd, &x->fwdcap, x->nfwd + 1, sizeof(*x->fwd)))
        return PX_ERR_NO_MEMORY;
    x->fwd[x->nfwd++] = (px_topo_fwd_t){host, rail, path, port};
    return PX_OK;
}

static int px_topo_fwd_cmp(const void *a, const void *b)
{
    const px_topo_fwd_t *x = a, *y = b;
    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    if (x->rail != y->rail)
        return x->rail < y->rail ? -1 : 1;
    return x->path < y->path ? -1 : x->path > y->path;
}

px_status_t px_topo_finish(px_topo_t *t, char *err, size_t errlen)
{
    if (!t->nhosts) {
        px_topo_err(err, errlen, "the description has no hosts");
        return PX_ERR_INVALID_PARAM;
    }
    for (int i = 0; i < t->nv; i++)
        if (t->v[i].nfwd)
            qsort(t->v[i].fwd, (size_t)t->v[i].nfwd, sizeof(px_topo_fwd_t), px_topo_fwd_cmp);
    return PX_OK;
}

void px_topo_free(px_topo_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nv; i++) {
        for (int p = 0; p < t->v[i].nports; p++)
            free(t->v[i].ports[p].name);
        free(t->v[i].ports);
        free(t->v[i].fwd);
        free(t->v[i].name);
    }
    if (t->updn)
        for (int s = 0; s < t->nswitches; s++) {
            free(t->updn[s].down);
            free(t->updn[s].any);
        }
    free(t->updn);
    free(t->sw_rank);
    free(t->cluster);
    free(t->nclusters);
    free(t->host_names.keys);
    free(t->host_names.vals);
    free(t->switch_names.keys);
    free(t->switch_names.vals);
    free(t->v);
    free(t->hosts);
    free(t->switches);
    free(t->links);
    free(t);
}

/* ------------------------------------------------------------ reading */

char *px_topo_next_line(const char **pos)
{
    const char *p = *pos;
    if (!*p)
        return NULL;
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    *pos = e ? e + 1 : p + n;
    if (n && p[n - 1] == '\r')
        n--;
    return strndup(p, n);
}

#define PX_TOPO_MODEL_MAGIC "pxtopo-model 1"

px_status_t px_topo_parse(const char *text, size_t len, const char *name, px_topo_t **topo_p,
                          char *err, size_t errlen)
{
    const char *p = text;
    while (p < text + len && isspace((unsigned char)*p))
        p++;
    px_topo_t *t;
    px_status_t st;
    if (*p == '{') {
        t = px_topo_new("plexus-json");
        st = t ? px_topo_parse_json(t, text, len, name, err, errlen) : PX_ERR_NO_MEMORY;
    } else if (!strncmp(p, PX_TOPO_MODEL_MAGIC, strlen(PX_TOPO_MODEL_MAGIC))) {
        t = px_topo_new("model");
        st = t ? px_topo_parse_model(t, text, name, err, errlen) : PX_ERR_NO_MEMORY;
    } else {
        /* ibnetdiscover output has Switch/Ca/Rt blocks; topology.conf has
         * SwitchName= lines (either may start with comments) */
        int ibnet = 0;
        const char *q = text;
        char *line;
        while (!ibnet && (line = px_topo_next_line(&q))) {
            ibnet = !strncmp(line, "Switch", 6) && isspace((unsigned char)line[6]);
            ibnet |= (!strncmp(line, "Ca", 2) || !strncmp(line, "Rt", 2)) &&
                     isspace((unsigned char)line[2]);
            ibnet |= !strncmp(line, "switchguid=", 11) || !strncmp(line, "caguid=", 7);
            free(line);
        }
        t = px_topo_new(ibnet ? "ibnetdiscover" : "slurm");
        if (!t)
            st = PX_ERR_NO_MEMORY;
        else if (ibnet)
            st = px_topo_parse_ibnet(t, text, name, err, errlen);
        else
            st = px_topo_parse_slurm(t, text, name, err, errlen);
    }
    if (st == PX_OK)
        st = px_topo_finish(t, err, errlen);
    if (st != PX_OK) {
        if (st == PX_ERR_NO_MEMORY)
            px_topo_err(err, errlen, "%s: out of memory", name);
        px_topo_free(t);
        return st;
    }
    *topo_p = t;
    return PX_OK;
}

px_status_t px_topo_load(const char *path, px_topo_t **topo_p, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        px_topo_err(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return PX_ERR_IO;
    }
    size_t cap = 1 << 16, len = 0, n;
    char *buf = malloc(cap + 1);
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        px_topo_err(err, errlen, "cannot read %s", path);
        return bad ? PX_ERR_IO : PX_ERR_NO_MEMORY;
    }
    buf[len] = '\0';
    px_status_t st = px_topo_parse(buf, len, path, topo_p, err, errlen);
    free(buf);
    return st;
}

const char *px_topo_format(const px_topo_t *t) { return t->format; }

/* ------------------------------------------------------------ the compact form */

/* Names may hold spaces (ibnetdiscover node descriptions): %XX escapes
 * keep every field one token. */
static int px_topo_put_name(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c == '%' || c >= 0x7f)
            fprintf(f, "%%%02X", c);
        else
            fputc(c, f);
    }
    return 0;
}

px_status_t px_topo_serialize(const px_topo_t *t, char **text_p, size_t *len_p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return PX_ERR_NO_MEMORY;
    fprintf(f, PX_TOPO_MODEL_MAGIC " %s\n", t->format);
    for (int i = 0; i < t->nv; i++) {
        const px_topo_vertex_t *x = &t->v[i];
        fprintf(f, x->is_host ? "H " : "S %d ", x->level);
        px_topo_put_name(f, x->name);
        fputc('\n', f);
        for (int p = 0; p < x->nports; p++) {
            fputs("p ", f);
            px_topo_put_name(f, x->ports[p].name);
            fputc('\n', f);
        }
    }
    for (int l = 0; l < t->nlinks; l++) {
        const px_topo_link_t *k = &t->links[l];
        fprintf(f, "L %d %d %d %d %llu\n", k->v[0], k->p[0], k->v[1], k->p[1],
                (unsigned long long)k->rate);
    }
    for (int i = 0; i < t->nv; i++)
        for (int e = 0; e < t->v[i].nfwd; e++) {
            const px_topo_fwd_t *w = &t->v[i].fwd[e];
            fprintf(f, "F %d %d %d %d %d\n", i, w->host, w->rail, w->path, w->port);
        }
    if (fclose(f)) {
        free(buf);
        return PX_ERR_NO_MEMORY;
    }
    *text_p = buf;
    *len_p = len;
    return PX_OK;
}

static void px_topo_unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (*s == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
            char hex[3] = {s[1], s[2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

px_status_t px_topo_parse_model(px_topo_t *t, const char *text, const char *name, char *err,
                                size_t errlen)
{
    const char *pos = text;
    char *line = px_topo_next_line(&pos);
    char fmt[32];
    if (!line || sscanf(line, PX_TOPO_MODEL_MAGIC " %31s", fmt) != 1) {
        free(line);
        px_topo_err(err, errlen, "%s: not a topology model", name);
        return PX_ERR_INVALID_PARAM;
    }
    free(line);
    /* the loaders' names, so that the job reports the file's format */
    const char *known[] = {"plexus-json", "ibnetdiscover", "slurm"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (!strcmp(fmt, known[i]))
            t->format = known[i];
    int last = -1, lineno = 1;
    px_status_t st = PX_OK;
    while (st == PX_OK && (line = px_topo_next_line(&pos))) {
        lineno++;
        char word[1024];
        int a, b, c, d, e, level;
        unsigned long long rate;
        if (sscanf(line, "H %1023s", word) == 1) {
            px_topo_unescape(word);
            last = px_topo_add_host(t, word);
            st = last < 0 ? PX_ERR_NO_MEMORY : PX_OK;
        } else if (sscanf(line, "S %d %1023s", &level, word) == 2) {
            px_topo_unescape(word);
            last = px_topo_add_switch(t, word, level);
            st = last < 0 ? PX_ERR_NO_MEMORY : PX_OK;
        } else if (sscanf(line, "p %1023s", word) == 1 && last >= 0) {
            px_topo_unescape(word);
            st = px_topo_add_port(t, last, word) < 0 ? PX_ERR_NO_MEMORY : PX_OK;
        } else if (sscanf(line, "L %d %d %d %d %llu", &a, &b, &c, &d, &rate) == 5 && a >= 0 &&
                   a < t->nv && c >= 0 && c < t->nv && b >= 0 && b < t->v[a].nports && d >= 0 &&
                   d < t->v[c].nports) {
            st = px_topo_connect(t, a, b, c, d, rate);
        } else if (sscanf(line, "F %d %d %d %d %d", &a, &b, &c, &d, &e) == 5 && a >= 0 &&
                   a < t->nv && b >= 0 && b < t->nhosts) {
            st = px_topo_add_fwd(t, a, b, c, d, e);
        } else {
            px_topo_err(err, errlen, "%s:%d: not a line of a topology model", name, lineno);
            st = PX_ERR_INVALID_PARAM;
        }
        free(line);
    }
    return st;
}

/* ------------------------------------------------------------ lookups */

int px_topo_num_hosts(const px_topo_t *t) { return t->nhosts; }
int px_topo_num_switches(const px_topo_t *t) { return t->nswitches; }
int px_topo_num_links(const px_topo_t *t) { return t->nlinks; }

const char *px_topo_host_name(const px_topo_t *t, int h)
{
    return h >= 0 && h < t->nhosts ? t->v[t->hosts[h]].name : NULL;
}

const char *px_topo_switch_name(const px_topo_t *t, int s)
{
    return s >= 0 && s < t->nswitches ? t->v[t->switches[s]].name : NULL;
}

uint64_t px_topo_link_rate(const px_topo_t *t, int l)
{
    return l >= 0 && l < t->nlinks ? t->links[l].rate : 0;
}

int px_topo_link_end(const px_topo_t *t, int l, int end, int *is_host)
{
    if (l < 0 || l >= t->nlinks || end < 0 || end > 1)
        return -1;
    const px_topo_vertex_t *x = &t->v[t->links[l].v[end]];
    *is_host = x->is_host;
    return x->index;
}

int px_topo_host_find(const px_topo_t *t, const char *name)
{
    int v = px_topo_names_get(&t->host_names, name);
    if (v < 0) {
        const char *dot = strchr(name, '.');
        if (!dot || dot == name)
            return -1;
        char *short_name = strndup(name, (size_t)(dot - name));
        if (!short_name)
            return -1;
        v = px_topo_names_get(&t->host_names, short_name);
        free(short_name);
    }
    return v < 0 ? -1 : t->v[v].index;
}
