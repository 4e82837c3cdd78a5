#include "param.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

px_params_t px_params;

typedef enum { PX_PT_BOOL, PX_PT_INT, PX_PT_SIZE, PX_PT_DOUBLE, PX_PT_STRING } px_param_type_t;

typedef struct px_param_desc {
    const char *name;
    px_param_type_t type;
    const char *def;
    const char *group;
    const char *doc;
    size_t offset;
} px_param_desc_t;

static const px_param_desc_t px_param_table[] = {
#define PX_PARAM(name, type, def, group, doc)                                 \
    {#name, PX_PT_##type, def, group, doc, offsetof(px_params_t, name)},
#include "params.def"
#undef PX_PARAM
};

#define PX_PARAM_COUNT (sizeof(px_param_table) / sizeof(px_param_table[0]))

/* Set by pxrun (or a resource manager) for each rank. */
static const char *const px_launcher_vars[] = {
    "PX_RANK",     "PX_SIZE",       "PX_NODE_ID",   "PX_NUM_NODES",
    "PX_LOCAL_RANK", "PX_LOCAL_SIZE", "PX_BOOT_ADDR", "PX_JOB_SECRET",
    "PX_JOB_ID",   "PX_UNIVERSE_SIZE", "PX_NODE_NAME", NULL};

int px_param_is_launcher_var(const char *name)
{
    for (int i = 0; px_launcher_vars[i]; i++)
        if (!strcmp(name, px_launcher_vars[i]))
            return 1;
    return 0;
}

px_status_t px_param_parse_size(const char *s, size_t *value_p)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || s[0] == '-')
        return PX_ERR_INVALID_PARAM;
    switch (tolower((unsigned char)*end)) {
    case 'k': v <<= 10; end++; break;
    case 'm': v <<= 20; end++; break;
    case 'g': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end)
        return PX_ERR_INVALID_PARAM;
    *value_p = (size_t)v;
    return PX_OK;
}

static px_status_t px_param_parse(const px_param_desc_t *d, const char *s, void *field)
{
    char *end;
    switch (d->type) {
    case PX_PT_BOOL:
        if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") ||
            !strcasecmp(s, "on"))
            *(int *)field = 1;
        else if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false") ||
                 !strcasecmp(s, "off"))
            *(int *)field = 0;
        else
            return PX_ERR_INVALID_PARAM;
        return PX_OK;
    case PX_PT_INT: {
        errno = 0;
        long v = strtol(s, &end, 0);
        if (errno || end == s || *end)
            return PX_ERR_INVALID_PARAM;
        *(long *)field = v;
        return PX_OK;
    }
    case PX_PT_SIZE:
        /* a size whose default is "auto" is chosen at run time */
        if (!strcasecmp(s, "auto") && !strcasecmp(d->def, "auto")) {
            *(size_t *)field = PX_PARAM_SIZE_AUTO;
            return PX_OK;
        }
        return px_param_parse_size(s, (size_t *)field);
    case PX_PT_DOUBLE: {
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end == s || *end)
            return PX_ERR_INVALID_PARAM;
        *(double *)field = v;
        return PX_OK;
    }
    case PX_PT_STRING:
        *(const char **)field = s;
        return PX_OK;
    }
    return PX_ERR_INVALID_PARAM;
}

static void px_param_env_name(const char *name, char *buf, size_t len)
{
    size_t i = 0;
    snprintf(buf, len, "PX_%s", name);
    for (i = 3; buf[i]; i++)
        buf[i] = (char)toupper((unsigned char)buf[i]);
}

px_status_t px_param_init(void)
{
    static int done;
    char env[128];
    if (done)
        return PX_OK;
    done = 1;

    for (size_t i = 0; i < PX_PARAM_COUNT; i++) {
        const px_param_desc_t *d = &px_param_table[i];
        void *field = (char *)&px_params + d->offset;
        px_status_t st = px_param_parse(d, d->def, field);
        (void)st; /* defaults are checked by the unit test */
    }
    px_log_init(); /* logging reads its own two parameters below */
    for (size_t i = 0; i < PX_PARAM_COUNT; i++) {
        const px_param_desc_t *d = &px_param_table[i];
        void *field = (char *)&px_params + d->offset;
        px_param_env_name(d->name, env, sizeof(env));
        const char *v = getenv(env);
        if (!v)
            continue;
        if (px_param_parse(d, v, field) != PX_OK) {
            px_log(PX_LOG_WARN, "util", "invalid value '%s' for %s; using default '%s'", v,
                   env, d->def);
            px_param_parse(d, d->def, field);
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
        if (px_param_is_launcher_var(env))
            continue;
        int known = 0;
        char want[128];
        for (size_t i = 0; i < PX_PARAM_COUNT && !known; i++) {
            px_param_env_name(px_param_table[i].name, want, sizeof(want));
            known = !strcmp(want, env);
        }
        if (!known)
            px_log(PX_LOG_WARN, "util", "unknown parameter %s ignored (see pxinfo --params)", env);
    }
    return PX_OK;
}

void px_param_print(FILE *out, const char *format)
{
    char env[128];
    int md = format && !strcmp(format, "markdown");
    const char *group = NULL;
    static const char *const tname[] = {"bool", "int", "size", "double", "string"};

    if (md) {
        fprintf(out, "# Plexus parameters\n\n"
                     "Generated by `pxinfo --params --markdown` from `src/util/params.def`; "
                     "do not edit by hand.\n"
                     "Every parameter is read from the environment variable shown. Sizes accept "
                     "`k`, `m`, `g` suffixes.\n");
    }
    for (size_t i = 0; i < PX_PARAM_COUNT; i++) {
        const px_param_desc_t *d = &px_param_table[i];
        px_param_env_name(d->name, env, sizeof(env));
        if (!group || strcmp(group, d->group)) {
            group = d->group;
            if (md)
                fprintf(out, "\n## %s\n\n| variable | type | default | description |\n"
                             "|---|---|---|---|\n",
                        group);
            else
                fprintf(out, "\n[%s]\n", group);
        }
        if (md)
            fprintf(out, "| `%s` | %s | `%s` | %s |\n", env, tname[d->type], d->def, d->doc);
        else {
            const char *cur = getenv(env);
            fprintf(out, "  %-24s %-7s default=%-10s%s%s%s\n      %s\n", env, tname[d->type],
                    d->def[0] ? d->def : "\"\"", cur ? " current=" : "", cur ? cur : "", "",
                    d->doc);
        }
    }
    if (md) {
        fprintf(out, "\n## set by the launcher\n\nThese are set by `pxrun` for each rank and are "
                     "not tunables:");
        for (int i = 0; px_launcher_vars[i]; i++)
            fprintf(out, "%s `%s`", i ? "," : "", px_launcher_vars[i]);
        fprintf(out, ".\n");
    }
}
