/* MPI_T events of the rail layer under a real failure (run by
 * tests/python/test_mpit_events.py while a rail's packets are dropped and
 * let through again): ranks 0 and 1 exchange messages for --seconds while a
 * callback records every rail_subchannel_state event, and a tool thread
 * (MPI_T_init_thread with MPI_THREAD_MULTIPLE) reads every process-wide
 * performance variable over and over. Each rank prints one JSON line: the
 * events (peer, subchannel, old state, new state, datagram rail,
 * timestamp), what a second registration with only an
 * MPI_T_CB_REQUIRE_NONE callback got (every event dropped, told to its
 * dropped handler), the rail counters over the same time, and how many
 * rounds of reads the tool thread made.
 *   mpit_events --seconds S */
#include "px_test.h"

#include <pthread.h>

#define MAX_EV 256

static struct {
    int d[5];
    long long ts;
} ev[MAX_EV];
static int nev, bad_copy, bad_source;
static long long none_calls, dropped, dropped_calls;

static void on_event(MPI_T_event_instance inst, MPI_T_event_registration reg,
                     MPI_T_cb_safety safety, void *user)
{
    (void)reg;
    (void)user;
    int d[5], e[5], src = -1;
    MPI_Count ts = 0;
    if (safety != MPI_T_CB_REQUIRE_MPI_RESTRICTED)
        bad_copy++;
    MPI_T_event_copy(inst, d);
    for (int i = 0; i < 5; i++)
        MPI_T_event_read(inst, i, &e[i]);
    bad_copy += memcmp(d, e, sizeof(d)) != 0;
    MPI_T_event_get_source(inst, &src);
    bad_source += src != 0;
    MPI_T_event_get_timestamp(inst, &ts);
    if (nev < MAX_EV) {
        memcpy(ev[nev].d, d, sizeof(d));
        ev[nev].ts = (long long)ts;
        nev++;
    }
}

static void on_event_none(MPI_T_event_instance inst, MPI_T_event_registration reg,
                          MPI_T_cb_safety safety, void *user)
{
    (void)inst;
    (void)reg;
    (void)safety;
    (void)user;
    none_calls++;
}

static void on_dropped(MPI_Count count, MPI_T_event_registration reg, int source,
                       MPI_T_cb_safety safety, void *user)
{
    (void)reg;
    (void)source;
    (void)safety;
    (void)user;
    dropped += count;
    dropped_calls++;
}

static volatile int reader_stop;
static long reader_rounds, reader_errors;

/* A tool's thread: every variable bound to no object, read while the
 * program communicates. */
static void *reader(void *arg)
{
    (void)arg;
    MPI_T_pvar_session s;
    int n = 0, count;
    if (MPI_T_pvar_session_create(&s) != MPI_SUCCESS || MPI_T_pvar_get_num(&n) != MPI_SUCCESS)
        return NULL;
    MPI_T_pvar_handle *h = calloc((size_t)n, sizeof(*h));
    int nh = 0;
    for (int i = 0; i < n; i++) {
        int bind, cls, ro, cont, atomic, verb;
        MPI_Datatype type;
        MPI_T_enum en;
        MPI_T_pvar_get_info(i, NULL, NULL, &verb, &cls, &type, &en, NULL, NULL, &bind, &ro, &cont,
                            &atomic);
        if (bind == MPI_T_BIND_NO_OBJECT &&
            MPI_T_pvar_handle_alloc(s, i, NULL, &h[nh], &count) == MPI_SUCCESS)
            nh++;
    }
    reader_errors += MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES) != MPI_SUCCESS;
    while (!reader_stop) {
        for (int i = 0; i < nh; i++) {
            double v[2]; /* a counter, a level or a timer */
            reader_errors += MPI_T_pvar_read(s, h[i], v) != MPI_SUCCESS;
        }
        reader_rounds++;
        px_sleep_ms(1);
    }
    MPI_T_pvar_session_free(&s);
    free(h);
    return NULL;
}

static unsigned long long read_pvar(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    MPI_T_pvar_read(s, h, &v);
    return v;
}

int main(int argc, char **argv)
{
    double seconds = 10;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
    int provided, idx;
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    px_test_init(&argc, &argv, "mpit_events");
    PX_REQUIRE(px_test_size >= 2, "needs 2 ranks");

    MPI_T_event_registration reg, reg_none;
    PX_MPI(MPI_T_event_get_index("rail_subchannel_state", &idx));
    PX_MPI(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg));
    PX_MPI(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, NULL,
                                         on_event));
    PX_MPI(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg_none));
    PX_MPI(MPI_T_event_register_callback(reg_none, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL,
                                         on_event_none));
    PX_MPI(MPI_T_event_set_dropped_handler(reg_none, on_dropped));

    const char *names[] = {"rail_downs", "rail_recoveries", "rail_suspects", "rail_bytes_sent"};
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[4];
    PX_MPI(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < 4; i++) {
        int count;
        PX_MPI(MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx));
        PX_MPI(MPI_T_pvar_handle_alloc(s, idx, NULL, &h[i], &count));
    }
    PX_MPI(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));

    size_t len = 256 * 1024;
    char *a = calloc(1, len), *b = calloc(1, len);
    pthread_t tool;
    PX_REQUIRE(pthread_create(&tool, NULL, reader, NULL) == 0, "no thread");
    MPI_Barrier(MPI_COMM_WORLD);
    if (px_test_rank == 0)
        printf("FT_START epoch=%.6f\n", px_epoch_now());
    double end = MPI_Wtime() + seconds;
    int go = 1, rounds = 0;
    while (go) {
        if (px_test_rank == 0)
            go = MPI_Wtime() < end;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (px_test_rank < 2 && go)
            MPI_Sendrecv(a, (int)len, MPI_CHAR, 1 - px_test_rank, 1, b, (int)len, MPI_CHAR,
                         1 - px_test_rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rounds++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    reader_stop = 1;
    pthread_join(tool, NULL);

    char line[16384];
    size_t o = (size_t)snprintf(line, sizeof(line), "{\"rank\": %d, \"rounds\": %d, \"events\": [",
                                px_test_rank, rounds);
    for (int i = 0; i < nev && o < sizeof(line) - 200; i++)
        o += (size_t)snprintf(line + o, sizeof(line) - o, "%s[%d, %d, %d, %d, %d, %lld]",
                              i ? ", " : "", ev[i].d[0], ev[i].d[1], ev[i].d[2], ev[i].d[3],
                              ev[i].d[4], ev[i].ts);
    o += (size_t)snprintf(line + o, sizeof(line) - o,
                          "], \"bad_copy\": %d, \"bad_source\": %d, \"none_calls\": %lld, "
                          "\"dropped\": %lld, \"dropped_calls\": %lld, \"reader_rounds\": %ld, "
                          "\"reader_errors\": %ld",
                          bad_copy, bad_source, none_calls, dropped, dropped_calls, reader_rounds,
                          reader_errors);
    for (int i = 0; i < 4; i++)
        o += (size_t)snprintf(line + o, sizeof(line) - o, ", \"%s\": %llu", names[i],
                              read_pvar(s, h[i]));
    snprintf(line + o, sizeof(line) - o, "}");
    printf("%s\n", line);
    fflush(stdout);
    PX_MPI(MPI_T_event_handle_free(reg, NULL, NULL));
    PX_MPI(MPI_T_event_handle_free(reg_none, NULL, NULL));
    PX_MPI(MPI_T_pvar_session_free(&s));
    free(a);
    free(b);
    return px_test_finish("%d events on rank 0", nev);
}
