/* Events (MPI-4.0 15.3.8). The rail layer raises one where a subchannel
 * changes state (px_rail_set_state, through px_tool_event); the callbacks
 * run there and then, inside the progress engine under the library's
 * lock, so they are called with MPI_T_CB_REQUIRE_MPI_RESTRICTED (the
 * callback of the least demanding level at or above it is chosen). A
 * registration whose only callback needs a freer context
 * (MPI_T_CB_REQUIRE_NONE) has the event dropped: its dropped handler is
 * called at once with the count. Nothing is buffered, so an instance is
 * valid only during its callback.
 *
 * One source: the process's monotonic clock in nanoseconds, the same
 * clock as the timestamps of Plexus's log. */
#include "tool_impl.h"
#include "../../util/clock.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct px_t_event {
    const char *name, *desc, *category;
    int verbosity;
    int n;
    MPI_Datatype type[PX_TOOL_EV_DATA_MAX];
    MPI_Aint displ[PX_TOOL_EV_DATA_MAX];
    const struct MPIR_T_enum_s *en;
} px_t_event_t;

/* The elements are the ints the layer passes, one after the other. */
static const px_t_event_t px_t_events[PX_TOOL_EV_N] = {
    [PX_TOOL_EV_SUB_STATE] = {"rail_subchannel_state",
                              "A subchannel to a network peer changed state. Elements (MPI_INT): "
                              "the peer's rank in MPI_COMM_WORLD, the subchannel's index among "
                              "that peer's, the old and the new state (enumeration "
                              "rail_subchannel_state: 0 UP, 1 SUSPECT, 2 DOWN), and 1 on a "
                              "datagram rail (PX_NET udp), 0 on a connection",
                              "rail",
                              MPI_T_VERBOSITY_TUNER_BASIC,
                              5,
                              {MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT},
                              {0, 4, 8, 12, 16},
                              &px_t_enum_sub_state},
};

struct MPIR_T_event_registration_s {
    px_t_link_t link;
    int event;
    struct {
        MPI_T_event_cb_function *fn;
        void *user_data;
    } cb[MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE + 1];
    MPI_T_event_dropped_cb_function *dropped;
    MPI_Count ndropped;
};

struct MPIR_T_event_instance_s {
    int event;
    MPI_Count timestamp;
    int data[PX_TOOL_EV_DATA_MAX];
};

/* The registrations of each event type, newest first. */
static px_t_link_t *px_t_regs[PX_TOOL_EV_N];
/* The instance whose callbacks run now (the only valid one). */
static struct MPIR_T_event_instance_s *px_t_cur;

void px_t_event_setup(void)
{
    for (int i = 0; i < PX_TOOL_EV_N; i++)
        px_t_cat_add_event(px_t_cat_of(px_t_events[i].category), i);
}

/* Tells r's dropped handler how many events it missed since it was last
 * told, if any. */
static void px_t_dropped(struct MPIR_T_event_registration_s *r, void *user_data)
{
    if (r->ndropped && r->dropped) {
        MPI_Count n = r->ndropped;
        r->ndropped = 0;
        r->dropped(n, r, 0, MPI_T_CB_REQUIRE_MPI_RESTRICTED, user_data);
    }
}

void px_t_event_dispatch(int event, const int *data, int n)
{
    if (event < 0 || event >= PX_TOOL_EV_N || !px_t_regs[event])
        return;
    struct MPIR_T_event_instance_s inst = {event, (MPI_Count)px_time_ns(), {0}};
    memcpy(inst.data, data,
           sizeof(int) * (size_t)(n < PX_TOOL_EV_DATA_MAX ? n : PX_TOOL_EV_DATA_MAX));
    struct MPIR_T_event_instance_s *outer = px_t_cur;
    px_t_cur = &inst;
    for (px_t_link_t *l = px_t_regs[event], *next; l; l = next) {
        struct MPIR_T_event_registration_s *r = (struct MPIR_T_event_registration_s *)l;
        next = l->next;
        int k = MPI_T_CB_REQUIRE_MPI_RESTRICTED;
        while (k <= MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE && !r->cb[k].fn)
            k++;
        if (k > MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE) {
            r->ndropped++;
            if (r->dropped) /* told at once, in this context */
                px_t_dropped(r, r->cb[MPI_T_CB_REQUIRE_NONE].user_data);
            continue;
        }
        px_t_dropped(r, r->cb[k].user_data);
        r->cb[k].fn(&inst, r, MPI_T_CB_REQUIRE_MPI_RESTRICTED, r->cb[k].user_data);
    }
    px_t_cur = outer;
}

static struct MPIR_T_event_registration_s *px_t_reg_find(MPI_T_event_registration reg)
{
    struct MPIR_T_event_registration_s *r = NULL;
    for (int i = 0; i < PX_TOOL_EV_N && !r; i++)
        r = px_t_list_find(px_t_regs[i], reg);
    return r;
}

void px_t_event_release_all(void)
{
    void *r;
    for (int i = 0; i < PX_TOOL_EV_N; i++)
        while ((r = px_t_list_pop(&px_t_regs[i])))
            free(r);
}

/* ---------- sources ---------- */

PX_PMPI(MPI_T_source_get_num)(int *num_sources)
{
    PX_T_BEGIN();
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = 1;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_source_get_num)

PX_PMPI(MPI_T_source_get_info)
(int source_index, char *name, int *name_len, char *desc, int *desc_len,
 MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks, MPI_Info *info)
{
    PX_T_BEGIN();
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    px_t_str(name, name_len, "plexus_clock");
    px_t_str(desc, desc_len,
             "The process's monotonic clock (CLOCK_MONOTONIC) in nanoseconds; events are "
             "raised and timed where they happen, in the order they happen");
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = INT64_MAX;
    if (info)
        *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_source_get_info)

PX_PMPI(MPI_T_source_get_timestamp)(int source_index, MPI_Count *timestamp)
{
    PX_T_BEGIN();
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    if (!timestamp)
        return MPI_T_ERR_INVALID;
    *timestamp = (MPI_Count)px_time_ns();
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_source_get_timestamp)

/* ---------- event types ---------- */

PX_PMPI(MPI_T_event_get_num)(int *num_events)
{
    PX_T_BEGIN();
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = PX_TOOL_EV_N;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_event_get_num)

PX_PMPI(MPI_T_event_get_info)
(int event_index, char *name, int *name_len, int *verbosity, MPI_Datatype array_of_datatypes[],
 MPI_Aint array_of_displacements[], int *num_elements, MPI_T_enum *enumtype, MPI_Info *info,
 char *desc, int *desc_len, int *bind)
{
    PX_T_BEGIN();
    if (event_index < 0 || event_index >= PX_TOOL_EV_N)
        return MPI_T_ERR_INVALID_INDEX;
    const px_t_event_t *e = &px_t_events[event_index];
    px_t_str(name, name_len, e->name);
    px_t_str(desc, desc_len, e->desc);
    if (verbosity)
        *verbosity = e->verbosity;
    if (num_elements) {
        /* as many as the arrays hold (*num_elements on input), then the
         * number there are */
        for (int i = 0; i < *num_elements && i < e->n; i++) {
            if (array_of_datatypes)
                array_of_datatypes[i] = e->type[i];
            if (array_of_displacements)
                array_of_displacements[i] = e->displ[i];
        }
        *num_elements = e->n;
    }
    if (enumtype)
        *enumtype = (MPI_T_enum)e->en;
    if (info)
        *info = MPI_INFO_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_event_get_info)

static const char *px_t_event_name(int i) { return px_t_events[i].name; }

PX_PMPI(MPI_T_event_get_index)(const char *name, int *event_index)
{
    PX_T_BEGIN();
    return px_t_lookup(name, event_index, PX_TOOL_EV_N, px_t_event_name);
}
PX_WEAK(MPI_T_event_get_index)

/* ---------- registrations ---------- */

/* No hints are taken: any info is accepted, and an empty one is returned. */
static int px_t_info_out(MPI_Info *info_used)
{
    if (!info_used)
        return MPI_T_ERR_INVALID;
    return PMPI_Info_create(info_used) == MPI_SUCCESS ? MPI_SUCCESS : MPI_T_ERR_MEMORY;
}

PX_PMPI(MPI_T_event_handle_alloc)
(int event_index, void *obj_handle, MPI_Info info, MPI_T_event_registration *event_registration)
{
    PX_T_BEGIN();
    (void)obj_handle; /* bound to no object */
    (void)info;
    if (event_index < 0 || event_index >= PX_TOOL_EV_N)
        return MPI_T_ERR_INVALID_INDEX;
    if (!event_registration)
        return MPI_T_ERR_INVALID;
    struct MPIR_T_event_registration_s *r = calloc(1, sizeof(*r));
    if (!r)
        return MPI_T_ERR_MEMORY;
    r->event = event_index;
    px_t_list_push(&px_t_regs[event_index], r);
    *event_registration = r;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_event_handle_alloc)

PX_PMPI(MPI_T_event_handle_set_info)(MPI_T_event_registration event_registration, MPI_Info info)
{
    PX_T_BEGIN();
    (void)info;
    return px_t_reg_find(event_registration) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}
PX_WEAK(MPI_T_event_handle_set_info)

PX_PMPI(MPI_T_event_handle_get_info)
(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    PX_T_BEGIN();
    if (!px_t_reg_find(event_registration))
        return MPI_T_ERR_INVALID_HANDLE;
    return px_t_info_out(info_used);
}
PX_WEAK(MPI_T_event_handle_get_info)

static int px_t_safety_ok(MPI_T_cb_safety s)
{
    return s >= MPI_T_CB_REQUIRE_NONE && s <= MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE;
}

PX_PMPI(MPI_T_event_register_callback)
(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety, MPI_Info info,
 void *user_data, MPI_T_event_cb_function event_cb_function)
{
    PX_T_BEGIN();
    (void)info;
    struct MPIR_T_event_registration_s *r = px_t_reg_find(event_registration);
    if (!r)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!px_t_safety_ok(cb_safety))
        return MPI_T_ERR_INVALID;
    /* a NULL function removes the callback of that level */
    r->cb[cb_safety].fn = event_cb_function;
    r->cb[cb_safety].user_data = user_data;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_event_register_callback)

PX_PMPI(MPI_T_event_callback_set_info)
(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety, MPI_Info info)
{
    PX_T_BEGIN();
    (void)info;
    if (!px_t_reg_find(event_registration))
        return MPI_T_ERR_INVALID_HANDLE;
    return px_t_safety_ok(cb_safety) ? MPI_SUCCESS : MPI_T_ERR_INVALID;
}
PX_WEAK(MPI_T_event_callback_set_info)

PX_PMPI(MPI_T_event_callback_get_info)
(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    PX_T_BEGIN();
    if (!px_t_reg_find(event_registration))
        return MPI_T_ERR_INVALID_HANDLE;
    if (!px_t_safety_ok(cb_safety))
        return MPI_T_ERR_INVALID;
    return px_t_info_out(info_used);
}
PX_WEAK(MPI_T_event_callback_get_info)

PX_PMPI(MPI_T_event_handle_free)
(MPI_T_event_registration event_registration, void *user_data,
 MPI_T_event_free_cb_function free_cb_function)
{
    PX_T_BEGIN();
    struct MPIR_T_event_registration_s *r = px_t_reg_find(event_registration);
    if (!r)
        return MPI_T_ERR_INVALID_HANDLE;
    px_t_list_remove(&px_t_regs[r->event], r);
    /* no callback of it can be running or pending any more: the tool may
     * free its data now */
    if (free_cb_function)
        free_cb_function(r, MPI_T_CB_REQUIRE_NONE, user_data);
    free(r);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_event_handle_free)

PX_PMPI(MPI_T_event_set_dropped_handler)
(MPI_T_event_registration event_registration, MPI_T_event_dropped_cb_function dropped_cb_function)
{
    PX_T_BEGIN();
    struct MPIR_T_event_registration_s *r = px_t_reg_find(event_registration);
    if (!r)
        return MPI_T_ERR_INVALID_HANDLE;
    r->dropped = dropped_cb_function;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_event_set_dropped_handler)

/* ---------- instances (inside a callback) ---------- */

static const struct MPIR_T_event_instance_s *px_t_instance(MPI_T_event_instance inst)
{
    return inst && inst == px_t_cur ? inst : NULL;
}

PX_PMPI(MPI_T_event_read)(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    PX_T_BEGIN();
    const struct MPIR_T_event_instance_s *in = px_t_instance(event_instance);
    if (!in)
        return MPI_T_ERR_INVALID_HANDLE;
    if (element_index < 0 || element_index >= px_t_events[in->event].n)
        return MPI_T_ERR_INVALID_INDEX;
    if (!buffer)
        return MPI_T_ERR_INVALID;
    memcpy(buffer, &in->data[element_index], sizeof(int));
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_event_read)

PX_PMPI(MPI_T_event_copy)(MPI_T_event_instance event_instance, void *buffer)
{
    PX_T_BEGIN();
    const struct MPIR_T_event_instance_s *in = px_t_instance(event_instance);
    if (!in)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buffer)
        return MPI_T_ERR_INVALID;
    /* every element at its displacement */
    memcpy(buffer, in->data, sizeof(int) * (size_t)px_t_events[in->event].n);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_event_copy)

PX_PMPI(MPI_T_event_get_timestamp)(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    PX_T_BEGIN();
    const struct MPIR_T_event_instance_s *in = px_t_instance(event_instance);
    if (!in)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!event_timestamp)
        return MPI_T_ERR_INVALID;
    *event_timestamp = in->timestamp;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_event_get_timestamp)

PX_PMPI(MPI_T_event_get_source)(MPI_T_event_instance event_instance, int *source_index)
{
    PX_T_BEGIN();
    if (!px_t_instance(event_instance))
        return MPI_T_ERR_INVALID_HANDLE;
    if (!source_index)
        return MPI_T_ERR_INVALID;
    *source_index = 0;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_event_get_source)
