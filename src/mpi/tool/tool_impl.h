/* The MPI tool information interface (MPI-4.0 chapter 15, docs/tools.md):
 *   tool.c        MPI_T_init_thread / MPI_T_finalize, shared helpers
 *   tool_cvar.c   control variables: one per row of src/util/params.def,
 *                 and the enumerations of its ENUM rows
 *   tool_pvar.c   performance variables: the counters of every layer
 *                 (src/util/counters.def), sessions and handles
 *   tool_cat.c    categories: one per layer (parameter group)
 *   tool_event.c  event types, sources, registrations and callbacks
 * Every entry point takes the library's lock (PX_CS_ENTER), so calls from
 * several threads are serialised as the other MPI calls are. */
#ifndef PX_MPI_TOOL_IMPL_H
#define PX_MPI_TOOL_IMPL_H

#include "../mpi_impl.h"
#include "../../util/tool.h"
#include "tool.h"

/* MPI_T_init_thread calls not yet matched by MPI_T_finalize. */
extern int px_t_refs;

/* First statements of an MPI_T_ entry point. */
#define PX_T_BEGIN()                                                                               \
    PX_CS_ENTER();                                                                                 \
    do {                                                                                           \
        if (px_t_refs <= 0)                                                                        \
            return MPI_T_ERR_NOT_INITIALIZED;                                                      \
    } while (0)

/* A string out (MPI-4.0 15.3.3): with a buffer and a length, copied
 * (truncated, always terminated) and *len set to what was copied plus the
 * terminator; with no buffer or a zero length, *len set to what the whole
 * string needs. NULL len: nothing. */
void px_t_str(char *dst, int *len, const char *src);

/* The handles, sessions and registrations the tools hold: singly linked
 * lists of objects that start with a px_t_link_t (a handle is valid while
 * it is on its list). */
typedef struct px_t_link {
    struct px_t_link *next;
} px_t_link_t;
/* x, when it is on the list at head (NULL, or x NULL: NULL). */
void *px_t_list_find(px_t_link_t *head, const void *x);
/* Takes x off the list at *head_p: 0, or -1 when it was not on it. */
int px_t_list_remove(px_t_link_t **head_p, const void *x);
void px_t_list_push(px_t_link_t **head_p, void *x);
/* Takes the first object off (NULL when empty). */
void *px_t_list_pop(px_t_link_t **head_p);

/* get_index of the variables, events and categories: sets *index_p to
 * the first i below n whose name_of(i) is `name`; MPI_T_ERR_INVALID_NAME
 * when there is none. */
int px_t_lookup(const char *name, int *index_p, int n, const char *(*name_of)(int i));

/* ---------- enumerations (tool_cvar.c) ---------- */

struct MPIR_T_enum_s {
    const char *name;
    int param; /* its ENUM row of the parameter table, or -1 */
    int n;
    const char *const *items; /* param < 0 */
};
/* NULL unless e is one of the interface's enumerations. */
const struct MPIR_T_enum_s *px_t_enum_get(MPI_T_enum e);
/* The states of a subchannel (UP, SUSPECT, DOWN), as the rail events
 * carry them. */
extern struct MPIR_T_enum_s px_t_enum_sub_state;

/* ---------- the variables' categories (tool_cat.c) ---------- */

/* Index of the category named `name`, created (with its parents, the
 * names before each '.') when new. Called while the variables are set up,
 * before any category query. */
int px_t_cat_of(const char *name);
/* The variables and events of each category. */
void px_t_cat_add_cvar(int cat, int cvar);
void px_t_cat_add_pvar(int cat, int pvar);
void px_t_cat_add_event(int cat, int event);

/* Set-up, once per process, in this order (categories follow the
 * parameter table's groups, then the layers of the counters). */
void px_t_cvar_setup(void);
void px_t_pvar_setup(void);
void px_t_event_setup(void);

/* MPI_T_finalize of the last reference: frees every handle, session and
 * registration the tools still hold. */
void px_t_cvar_release_all(void);
void px_t_pvar_release_all(void);
void px_t_event_release_all(void);

/* Events: installed as px_tool_event_hook while initialized. */
void px_t_event_dispatch(int event, const int *data, int n);

#endif
