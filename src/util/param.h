/* Parameter table: every tunable of Plexus, read once from PX_* variables
 * (rows in params.def, which also describes the types). */
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
/* In the unit of its row (every duration row so far: seconds). */
typedef double px_param_DURATION_t;
/* One of the row's values, spelled as in the row: callers compare it with
 * strcmp like a STRING, but never see a value outside the list. */
typedef const char *px_param_ENUM_t;
typedef const char *px_param_STRING_t;

typedef struct px_params {
#define PX_PARAM(name, type, def, values, group, doc) px_param_##type##_t name;
#include "params.def"
#undef PX_PARAM
} px_params_t;

extern px_params_t px_params;

/* PX_PROFILE: the counters printed at MPI_Finalize (yes, all), the
 * topology profile written (topo, all). */
static inline int px_profile_counters(void)
{
    return px_params.profile && (px_params.profile[0] == 'y' || px_params.profile[0] == 'a');
}
static inline int px_profile_topo(void)
{
    return px_params.profile && (px_params.profile[0] == 't' || px_params.profile[0] == 'a');
}

typedef enum {
    PX_PT_BOOL,
    PX_PT_INT,
    PX_PT_SIZE,
    PX_PT_DOUBLE,
    PX_PT_DURATION,
    PX_PT_ENUM,
    PX_PT_STRING
} px_param_type_t;

/* One row of params.def. */
typedef struct px_param_desc {
    const char *name;
    px_param_type_t type;
    const char *def;
    const char *values;
    const char *group;
    const char *doc;
    size_t offset; /* of its field in px_params */
} px_param_desc_t;

/* Reads the environment once; later calls return the first call's result.
 * A value its row does not accept keeps the default and makes this return
 * PX_ERR_INVALID_PARAM, px_param_error() then naming every such variable
 * with what it accepts. Unknown PX_* variables produce one warning each. */
px_status_t px_param_init(void);

/* Why px_param_init failed ("" when it did not). */
const char *px_param_error(void);

/* Parses `value` as the environment variable `var` (e.g. "PX_BIND") would
 * be read and stores it in px_params. On a bad value (or an unknown
 * variable) returns PX_ERR_INVALID_PARAM, leaves px_params as it was and
 * writes the reason, naming the variable and what it accepts, to err. */
px_status_t px_param_set(const char *var, const char *value, char *err, size_t errlen);

/* The same check without storing anything (a launcher's own options). */
px_status_t px_param_check(const char *var, const char *value, char *err, size_t errlen);

/* The rows one by one, for the tool interface (src/mpi/tool): row i of
 * px_param_count(), NULL past the end. */
size_t px_param_count(void);
const px_param_desc_t *px_param_row(size_t i);
/* "PX_" and the row's name in upper case. */
void px_param_env_name(const char *name, char *buf, size_t len);
/* ENUM rows: the number of values, the name of value idx (into buf, as
 * the row spells it; 0, or -1 past the end) and the index of the value the
 * field holds now. */
int px_param_enum_count(size_t i);
int px_param_enum_item(size_t i, int idx, char *buf, size_t len);
int px_param_enum_current(size_t i);
/* px_param_set for row i. A STRING row keeps the pointer: value must
 * outlive its use. */
px_status_t px_param_set_row(size_t i, const char *value, char *err, size_t errlen);

/* Prints the table: format "text" (pxinfo) or "markdown" (docs/params.md). */
void px_param_print(FILE *out, const char *format);

/* Variables a launcher sets for each rank: its protocol, not tunables. The
 * one list of them (NULL-terminated); src/boot and pxrun read and write
 * them directly. */
extern const char *const px_param_launcher_vars[];
int px_param_is_launcher_var(const char *name);

/* Parses "64k", "1m", "2g", plain numbers. */
px_status_t px_param_parse_size(const char *s, size_t *value_p);

/* Parses "500ms", "0.5s", "2us", "3min", or a plain number in `unit`
 * ("ns", "us", "ms", "s" or "min"); the result is in `unit`. */
px_status_t px_param_parse_duration(const char *s, const char *unit, double *value_p);

#endif
