/* MPI_T_init_thread and MPI_T_finalize: reference counted, usable before
 * MPI_Init and after MPI_Finalize (MPI-4.0 15.3.4). The variables,
 * categories and events are set up once per process, at the first
 * MPI_T_init_thread, and stay; handles, sessions and registrations end
 * with the last MPI_T_finalize. */
#include "tool_impl.h"

#include <pthread.h>
#include <string.h>

int px_t_refs;

void px_t_str(char *dst, int *len, const char *src)
{
    if (!len)
        return;
    if (!src)
        src = "";
    size_t n = strlen(src);
    if (!dst || *len <= 0) {
        *len = (int)n + 1;
        return;
    }
    if (n >= (size_t)*len)
        n = (size_t)*len - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
    *len = (int)n + 1;
}

int px_t_lookup(const char *name, int *index_p, int n, const char *(*name_of)(int i))
{
    if (!name || !index_p)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < n; i++)
        if (!strcmp(name, name_of(i))) {
            *index_p = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

void *px_t_list_find(px_t_link_t *head, const void *x)
{
    for (px_t_link_t *p = head; p && x; p = p->next)
        if (p == x)
            return p;
    return NULL;
}

int px_t_list_remove(px_t_link_t **head_p, const void *x)
{
    for (px_t_link_t **pp = head_p; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = (*pp)->next;
            return 0;
        }
    return -1;
}

void px_t_list_push(px_t_link_t **head_p, void *x)
{
    px_t_link_t *l = x;
    l->next = *head_p;
    *head_p = l;
}

void *px_t_list_pop(px_t_link_t **head_p)
{
    px_t_link_t *x = *head_p;
    if (x)
        *head_p = x->next;
    return x;
}

static void px_t_setup(void)
{
    px_t_cvar_setup();
    px_t_pvar_setup();
    px_t_event_setup();
}

PX_PMPI(MPI_T_init_thread)(int required, int *provided)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    /* A tool's threads may call MPI_T while the program calls MPI: the
     * library's lock then serialises every call, as under
     * MPI_THREAD_MULTIPLE (set before the first call that takes it). */
    if (required >= MPI_THREAD_MULTIPLE)
        px_cs_on = 1;
    PX_CS_ENTER();
    if (!provided)
        return MPI_T_ERR_INVALID;
    /* the parameters as MPI_Init will read them (later calls return the
     * first result; a bad value makes MPI_Init fail, not this) */
    (void)px_param_init();
    pthread_once(&once, px_t_setup);
    *provided = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                 : required;
    if (px_t_refs++ == 0)
        px_tool_event_hook = px_t_event_dispatch;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_init_thread)

PX_PMPI(MPI_T_finalize)(void)
{
    PX_T_BEGIN();
    if (--px_t_refs == 0) {
        px_tool_event_hook = NULL;
        px_t_event_release_all();
        px_t_pvar_release_all();
        px_t_cvar_release_all();
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_finalize)
