#include "param.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

px_params_t px_params;

static const px_param_desc_t px_param_table[] = {
#define PX_PARAM(name, type, def, values, group, doc)                                              \
    {#name, PX_PT_##type, def, values, group, doc, offsetof(px_params_t, name)},
#include "params.def"
#undef PX_PARAM
};

#define PX_PARAM_COUNT (sizeof(px_param_table) / sizeof(px_param_table[0]))

/* An ENUM field points to its row's buffer here, which holds the value
 * chosen as the row spells it (the row's list is one string). */
#define PX_PARAM_ENUM_MAX 32
static char px_param_enum_val[PX_PARAM_COUNT][PX_PARAM_ENUM_MAX];

/* What px_param_init found wrong: every bad variable in turn, separated
 * by "; " (which no single message holds). */
static char px_param_err[1024];

typedef union {
    int b;
    long i;
    size_t z;
    double d;
    const char *s;
    int e; /* ENUM: index in the row's list */
} px_param_value_t;

/* Set by pxrun (or a resource manager) for each rank. */
const char *const px_param_launcher_vars[] = {
    "PX_RANK", "PX_SIZE", "PX_NODE_ID", "PX_NUM_NODES", "PX_LOCAL_RANK", "PX_LOCAL_SIZE",
    "PX_UNIVERSE_SIZE", "PX_NODE_NAME", "PX_BOOT_ADDR", "PX_JOB_SECRET", "PX_JOB_ID", "PX_APPNUM",
    /* what MPI_Comm_spawn starts its children with */
    "PX_PXRUN", "PX_PXRUN_HOSTS", "PX_PXRUN_LAUNCHER", "PX_PARENT_PORT", NULL};

int px_param_is_launcher_var(const char *name)
{
    for (int i = 0; px_param_launcher_vars[i]; i++)
        if (!strcmp(name, px_param_launcher_vars[i]))
            return 1;
    return 0;
}

/* ---------- parsers ---------- */

px_status_t px_param_parse_size(const char *s, size_t *value_p)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || s[0] == '-')
        return PX_ERR_INVALID_PARAM;
    int shift = 0;
    switch (tolower((unsigned char)*end)) {
    case 'k':
        shift = 10;
        end++;
        break;
    case 'm':
        shift = 20;
        end++;
        break;
    case 'g':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if (v > (SIZE_MAX >> shift))
        return PX_ERR_INVALID_PARAM;
    v <<= shift;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end)
        return PX_ERR_INVALID_PARAM;
    *value_p = (size_t)v;
    return PX_OK;
}

static const struct {
    const char *name;
    const char *words;
    double sec;
} px_param_units[] = {
    {"ns", "nanoseconds", 1e-9}, {"us", "microseconds", 1e-6}, {"ms", "milliseconds", 1e-3},
    {"s", "seconds", 1.0},       {"min", "minutes", 60.0},
};

static int px_param_unit_find(const char *u, size_t len)
{
    for (size_t i = 0; i < sizeof(px_param_units) / sizeof(px_param_units[0]); i++)
        if (strlen(px_param_units[i].name) == len && !strncmp(u, px_param_units[i].name, len))
            return (int)i;
    return -1;
}

px_status_t px_param_parse_duration(const char *s, const char *unit, double *value_p)
{
    char *end;
    int to = px_param_unit_find(unit, strlen(unit)), from = to;
    if (to < 0)
        return PX_ERR_INVALID_PARAM;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v))
        return PX_ERR_INVALID_PARAM;
    while (*end == ' ')
        end++;
    if (*end) {
        from = px_param_unit_find(end, strlen(end));
        if (from < 0)
            return PX_ERR_INVALID_PARAM;
    }
    *value_p = v * (px_param_units[from].sec / px_param_units[to].sec);
    return PX_OK;
}

/* The row's unit: the "unit=" word of a DURATION row's values. */
static const char *px_param_unit_of(const px_param_desc_t *d, char *buf, size_t len)
{
    const char *u = strstr(d->values, "unit=");
    size_t n = 0;
    if (u)
        for (u += 5; u[n] && u[n] != ' ' && n + 1 < len; n++)
            buf[n] = u[n];
    buf[n] = 0;
    return n ? buf : "s";
}

/* Index of s among the values "a|b=alias|c=alias1=alias2" (matched
 * without regard to case, by name or by any alias), or -1. */
static int px_param_enum_find(const char *values, const char *s)
{
    size_t sl = strlen(s);
    int idx = 0;
    for (const char *p = values; *p; idx++) {
        size_t n = strcspn(p, "|");
        for (const char *w = p; w < p + n;) {
            size_t wl = strcspn(w, "|=");
            if (wl == sl && !strncasecmp(w, s, sl))
                return idx;
            w += wl + (w[wl] == '=');
        }
        p += n;
        if (*p)
            p++;
    }
    return -1;
}

/* The name of value idx of an ENUM row, copied into buf. */
static void px_param_enum_name(const char *values, int idx, char *buf, size_t len)
{
    const char *p = values;
    for (int i = 0; i < idx && *p; i++) {
        p += strcspn(p, "|");
        if (*p)
            p++;
    }
    size_t n = strcspn(p, "|=");
    if (n >= len)
        n = len - 1;
    memcpy(buf, p, n);
    buf[n] = 0;
}

static px_status_t px_param_parse(const px_param_desc_t *d, const char *s, px_param_value_t *v)
{
    char *end;
    switch (d->type) {
    case PX_PT_BOOL:
        if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") ||
            !strcasecmp(s, "on"))
            v->b = 1;
        else if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false") ||
                 !strcasecmp(s, "off"))
            v->b = 0;
        else
            return PX_ERR_INVALID_PARAM;
        return PX_OK;
    case PX_PT_INT:
        errno = 0;
        v->i = strtol(s, &end, 0);
        return errno || end == s || *end ? PX_ERR_INVALID_PARAM : PX_OK;
    case PX_PT_SIZE:
        /* a size whose default is "auto" is chosen at run time */
        if (!strcasecmp(s, "auto") && !strcasecmp(d->def, "auto")) {
            v->z = PX_PARAM_SIZE_AUTO;
            return PX_OK;
        }
        return px_param_parse_size(s, &v->z);
    case PX_PT_DOUBLE:
        errno = 0;
        v->d = strtod(s, &end);
        return errno || end == s || *end || isnan(v->d) ? PX_ERR_INVALID_PARAM : PX_OK;
    case PX_PT_DURATION: {
        char unit[8];
        return px_param_parse_duration(s, px_param_unit_of(d, unit, sizeof(unit)), &v->d);
    }
    case PX_PT_ENUM:
        v->e = px_param_enum_find(d->values, s);
        return v->e < 0 ? PX_ERR_INVALID_PARAM : PX_OK;
    case PX_PT_STRING:
        v->s = s;
        return PX_OK;
    }
    return PX_ERR_INVALID_PARAM;
}

/* The next space-separated word of a row's limits into w; returns what
 * follows it. */
static const char *px_param_word(const char *p, char *w, size_t len)
{
    size_t n = strcspn(p, " ");
    snprintf(w, len, "%.*s", (int)n, p);
    p += n;
    while (*p == ' ')
        p++;
    return p;
}

/* Whether v meets every limit word of the row (">=N", "pow2", ...). */
static int px_param_within(const px_param_desc_t *d, const px_param_value_t *v)
{
    double x;
    unsigned long long u;
    int whole = 0;
    switch (d->type) {
    case PX_PT_INT:
        x = (double)v->i;
        u = (unsigned long long)v->i;
        whole = v->i >= 0;
        break;
    case PX_PT_SIZE:
        if (v->z == PX_PARAM_SIZE_AUTO)
            return 1;
        x = (double)v->z;
        u = v->z;
        whole = 1;
        break;
    case PX_PT_DOUBLE:
    case PX_PT_DURATION:
        x = v->d;
        u = 0;
        break;
    default:
        return 1;
    }
    for (const char *p = d->values; *p;) {
        char w[32];
        p = px_param_word(p, w, sizeof(w));
        if (!strcmp(w, "pow2")) {
            if (!whole || !u || (u & (u - 1)))
                return 0;
        } else if (!strncmp(w, "mult=", 5)) {
            unsigned long long m = strtoull(w + 5, NULL, 10);
            if (!whole || (m && u % m))
                return 0;
        } else if (w[0] == '>' || w[0] == '<') {
            int eq = w[1] == '=';
            double lim = strtod(w + 1 + eq, NULL);
            if (w[0] == '>' ? (eq ? !(x >= lim) : !(x > lim)) : (eq ? !(x <= lim) : !(x < lim)))
                return 0;
        }
    }
    return 1;
}

/* What the row accepts, e.g. "an integer >= 4, a power of two"; md: for
 * docs/params.md (values in backticks). Empty for STRING rows. */
static void px_param_describe(const px_param_desc_t *d, int md, char *buf, size_t len)
{
    static const char *const noun[] = {
        [PX_PT_BOOL] = "1, 0, yes, no, true, false, on or off",
        [PX_PT_INT] = "an integer",
        [PX_PT_SIZE] = "a size in bytes",
        [PX_PT_DOUBLE] = "a number",
        [PX_PT_DURATION] = "a duration",
        [PX_PT_ENUM] = "one of",
        [PX_PT_STRING] = "",
    };
    const char *q = md ? "`" : "";
    size_t k = 0;
#define PX_PUT(...)                                                                                \
    do {                                                                                           \
        if (k < len)                                                                               \
            k += (size_t)snprintf(buf + k, len - k, __VA_ARGS__);                                  \
    } while (0)
    buf[0] = 0;
    PX_PUT("%s", noun[d->type]);
    if (d->type == PX_PT_ENUM) {
        int nv = 1;
        for (const char *p = d->values; *p; p++)
            nv += *p == '|';
        const char *p = d->values;
        for (int i = 0; i < nv; i++) {
            size_t n = strcspn(p, "|");
            const char *eq = memchr(p, '=', n);
            size_t nl = eq ? (size_t)(eq - p) : n;
            PX_PUT("%s %s%.*s%s", i == 0 ? "" : i == nv - 1 ? " or" : ",", q, (int)nl, p, q);
            /* the aliases: " (or `x`)", " (or `x`, `y` or `z`)" */
            for (const char *w = eq; w && w < p + n;) {
                size_t wl = strcspn(w + 1, "|=");
                int last = w + 1 + wl >= p + n;
                PX_PUT("%s%s%.*s%s%s",
                       w == eq ? " (or "
                       : last  ? " or "
                               : ", ",
                       q, (int)wl, w + 1, q, last ? ")" : "");
                w += 1 + wl;
            }
            p += n + (p[n] == '|');
        }
        return;
    }
    int first = 1;
    for (const char *p = d->values; *p;) {
        char w[32];
        p = px_param_word(p, w, sizeof(w));
        if (!strcmp(w, "pow2")) {
            PX_PUT(", a power of two");
        } else if (!strncmp(w, "mult=", 5)) {
            PX_PUT(", a multiple of %s", w + 5);
        } else if (w[0] == '>' || w[0] == '<') {
            int eq = w[1] == '=';
            PX_PUT("%s %.*s %s", first ? "" : " and", 1 + eq, w, w + 1 + eq);
            first = 0;
        }
    }
    if (d->type == PX_PT_SIZE)
        PX_PUT(" (k, m, g suffixes)%s", strcasecmp(d->def, "auto") ? "" : ", or auto");
    if (d->type == PX_PT_DURATION) {
        char buf_u[8];
        const char *unit = px_param_unit_of(d, buf_u, sizeof(buf_u));
        int u = px_param_unit_find(unit, strlen(unit));
        PX_PUT(" (a number with a unit ns, us, ms, s or min, or a plain number of %s)",
               u >= 0 ? px_param_units[u].words : "seconds");
    }
#undef PX_PUT
}

void px_param_env_name(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "PX_%s", name);
    for (size_t i = 3; buf[i]; i++)
        buf[i] = (char)toupper((unsigned char)buf[i]);
}

static int px_param_find(const char *var)
{
    char env[128];
    for (size_t i = 0; i < PX_PARAM_COUNT; i++) {
        px_param_env_name(px_param_table[i].name, env, sizeof(env));
        if (!strcmp(env, var))
            return (int)i;
    }
    return -1;
}

/* Parses s for row i and, when it is accepted and `store`, sets the field. */
static px_status_t px_param_apply(size_t i, const char *s, int store, char *err, size_t errlen)
{
    const px_param_desc_t *d = &px_param_table[i];
    px_param_value_t v;
    if (!*s && d->type != PX_PT_STRING)
        s = d->def;
    if (px_param_parse(d, s, &v) != PX_OK || !px_param_within(d, &v)) {
        char env[128], what[512];
        px_param_env_name(d->name, env, sizeof(env));
        px_param_describe(d, 0, what, sizeof(what));
        snprintf(err, errlen, "%s=%s: invalid value, expected %s", env, s, what);
        return PX_ERR_INVALID_PARAM;
    }
    if (!store)
        return PX_OK;
    void *field = (char *)&px_params + d->offset;
    switch (d->type) {
    case PX_PT_BOOL:
        *(int *)field = v.b;
        break;
    case PX_PT_INT:
        *(long *)field = v.i;
        break;
    case PX_PT_SIZE:
        *(size_t *)field = v.z;
        break;
    case PX_PT_DOUBLE:
    case PX_PT_DURATION:
        *(double *)field = v.d;
        break;
    case PX_PT_ENUM:
        px_param_enum_name(d->values, v.e, px_param_enum_val[i], PX_PARAM_ENUM_MAX);
        *(const char **)field = px_param_enum_val[i];
        break;
    case PX_PT_STRING:
        *(const char **)field = v.s;
        break;
    }
    return PX_OK;
}

static px_status_t px_param_set_or_check(const char *var, const char *value, int store, char *err,
                                         size_t errlen)
{
    int i = px_param_find(var);
    if (i < 0) {
        snprintf(err, errlen, "%s: unknown parameter (see pxinfo --params)", var);
        return PX_ERR_INVALID_PARAM;
    }
    return px_param_apply((size_t)i, value, store, err, errlen);
}

size_t px_param_count(void) { return PX_PARAM_COUNT; }

const px_param_desc_t *px_param_row(size_t i)
{
    return i < PX_PARAM_COUNT ? &px_param_table[i] : NULL;
}

int px_param_enum_count(size_t i)
{
    if (i >= PX_PARAM_COUNT || px_param_table[i].type != PX_PT_ENUM)
        return 0;
    int n = 1;
    for (const char *p = px_param_table[i].values; *p; p++)
        n += *p == '|';
    return n;
}

int px_param_enum_item(size_t i, int idx, char *buf, size_t len)
{
    if (idx < 0 || idx >= px_param_enum_count(i) || !len)
        return -1;
    px_param_enum_name(px_param_table[i].values, idx, buf, len);
    return 0;
}

int px_param_enum_current(size_t i)
{
    if (!px_param_enum_count(i))
        return -1;
    const char *v = *(const char **)((const char *)&px_params + px_param_table[i].offset);
    return px_param_enum_find(px_param_table[i].values, v ? v : px_param_table[i].def);
}

px_status_t px_param_set_row(size_t i, const char *value, char *err, size_t errlen)
{
    if (i >= PX_PARAM_COUNT) {
        snprintf(err, errlen, "no parameter %zu", i);
        return PX_ERR_INVALID_PARAM;
    }
    return px_param_apply(i, value, 1, err, errlen);
}

px_status_t px_param_set(const char *var, const char *value, char *err, size_t errlen)
{
    return px_param_set_or_check(var, value, 1, err, errlen);
}

px_status_t px_param_check(const char *var, const char *value, char *err, size_t errlen)
{
    return px_param_set_or_check(var, value, 0, err, errlen);
}

const char *px_param_error(void) { return px_param_err; }

static void px_param_note(const char *msg)
{
    size_t k = strlen(px_param_err);
    if (k + 3 < sizeof(px_param_err))
        snprintf(px_param_err + k, sizeof(px_param_err) - k, "%s%s", k ? "; " : "", msg);
}

px_status_t px_param_init(void)
{
    static int done;
    static px_status_t result = PX_OK;
    char env[128], err[600];
    if (done)
        return result;
    done = 1;

    for (size_t i = 0; i < PX_PARAM_COUNT; i++)
        if (px_param_apply(i, px_param_table[i].def, 1, err, sizeof(err)) != PX_OK) {
            px_param_note(err); /* a row whose default its own values refuse */
            result = PX_ERR_INVALID_PARAM;
        }
    for (size_t i = 0; i < PX_PARAM_COUNT; i++) {
        px_param_env_name(px_param_table[i].name, env, sizeof(env));
        const char *v = getenv(env);
        if (v && px_param_apply(i, v, 1, err, sizeof(err)) != PX_OK) {
            px_param_note(err);
            result = PX_ERR_INVALID_PARAM;
        }
    }
    px_log_init();

    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "PX_", 3))
            continue;
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
        if (n >= sizeof(env))
            continue;
        memcpy(env, *e, n);
        env[n] = 0;
        if (!px_param_is_launcher_var(env) && px_param_find(env) < 0)
            px_log(PX_LOG_WARN, "util", "unknown parameter %s ignored (see pxinfo --params)", env);
    }
    return result;
}

/* ---------- reference ---------- */

void px_param_print(FILE *out, const char *format)
{
    char env[128], what[512];
    int md = format && !strcmp(format, "markdown");
    const char *group = NULL;
    static const char *const tname[] = {
        [PX_PT_BOOL] = "bool",     [PX_PT_INT] = "int",           [PX_PT_SIZE] = "size",
        [PX_PT_DOUBLE] = "double", [PX_PT_DURATION] = "duration", [PX_PT_ENUM] = "enum",
        [PX_PT_STRING] = "string",
    };

    if (md) {
        fprintf(out, "# Plexus parameters\n\n"
                     "Generated by `pxinfo --params --markdown` from `src/util/params.def`; "
                     "do not edit by hand.\n"
                     "Every parameter is read from the environment variable shown. Sizes accept "
                     "`k`, `m`, `g` suffixes; durations accept the units `ns`, `us`, `ms`, `s` "
                     "and `min` (`500ms`, `0.5s`), a plain number being in the unit the row "
                     "names; enumerations match without regard to case. An empty variable means "
                     "the default (strings excepted). A value outside what a row accepts makes "
                     "`MPI_Init` fail with a message naming the variable and what it accepts.\n");
    }
    for (size_t i = 0; i < PX_PARAM_COUNT; i++) {
        const px_param_desc_t *d = &px_param_table[i];
        px_param_env_name(d->name, env, sizeof(env));
        px_param_describe(d, md, what, sizeof(what));
        if (!group || strcmp(group, d->group)) {
            group = d->group;
            if (md)
                fprintf(out,
                        "\n## %s\n\n| variable | type | default | accepts | description |\n"
                        "|---|---|---|---|---|\n",
                        group);
            else
                fprintf(out, "\n[%s]\n", group);
        }
        if (md) {
            fprintf(out, "| `%s` | %s | `%s` | %s | %s |\n", env, tname[d->type], d->def, what,
                    d->doc);
        } else {
            const char *cur = getenv(env);
            fprintf(out, "  %-24s %-8s default=%s%s%s\n", env, tname[d->type],
                    d->def[0] ? d->def : "\"\"", cur ? "  current=" : "", cur ? cur : "");
            if (what[0])
                fprintf(out, "      accepts %s\n", what);
            fprintf(out, "      %s\n", d->doc);
        }
    }
    if (md) {
        fprintf(out, "\n## set by the launcher\n\nThese are set by `pxrun` for each rank and are "
                     "not tunables:");
        for (int i = 0; px_param_launcher_vars[i]; i++)
            fprintf(out, "%s `%s`", i ? "," : "", px_param_launcher_vars[i]);
        fprintf(out, ".\n");
    }
}
