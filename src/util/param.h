/* Parameter table: every tunable of Plexus, read once from PX_* variables. */
#ifndef PX_PARAM_H
#define PX_PARAM_H

#include <stddef.h>
#include <stdio.h>
#include "px_status.h"

typedef int px_param_BOOL_t;
typedef long px_param_INT_t;
typedef size_t px_param_SIZE_t;

/* A SIZE parameter whose default is "auto" holds this until it is chosen. */
#define PX_PARAM_SIZE_AUTO ((size_t)-1)
typedef double px_param_DOUBLE_t;
typedef const char *px_param_STRING_t;

typedef struct px_params {
#define PX_PARAM(name, type, def, group, doc) px_param_##type##_t name;
#include "params.def"
#undef PX_PARAM
} px_params_t;

extern px_params_t px_params;

/* Reads the environment (idempotent). Invalid values are reported and the
 * default kept; unknown PX_* variables produce one warning each. */
px_status_t px_param_init(void);

/* Prints the table: format "text" (pxinfo) or "markdown" (docs/params.md). */
void px_param_print(FILE *out, const char *format);

/* Variables the launcher sets; not tunables but known names. */
int px_param_is_launcher_var(const char *name);

/* Parses "64k", "1m", "2g", plain numbers. */
px_status_t px_param_parse_size(const char *s, size_t *value_p);

#endif
