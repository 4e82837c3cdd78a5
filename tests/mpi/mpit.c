/* The tool information interface (MPI_T): before MPI_Init, during the job
 * and after MPI_Finalize.
 *   - control variables: every one read, with its enumeration; each PX_*
 *     variable of the environment that names one reads back as the
 *     environment says (the testlist runs a variant with non-default
 *     values); writes where allowed, refusals where not;
 *   - a write of PX_BCAST_ALGORITHM on every rank changes the algorithm the
 *     next MPI_Bcast uses, as its per-algorithm counter shows;
 *   - categories cover every variable exactly once;
 *   - performance variables in a session: rank 0 sends messages to rank 1
 *     and the byte counters of the layer that carried them grow by at least
 *     what was sent, stopped handles do not, reset and readreset start
 *     again from 0; a communicator's queues count its unexpected messages
 *     and posted receives, and no one else's;
 *   - events and sources are described;
 *   - bad indices, names, handles and sessions give the MPI_T error codes;
 *   - MPI_T_init_thread/MPI_T_finalize nest, and the counters keep their
 *     values after MPI_Finalize. */
#include "px_test.h"

#include <ctype.h>
#include <strings.h>

extern char **environ;

#define T(call) PX_CHECK((rc = (call)) == MPI_SUCCESS, "%s returned %d", #call, rc)
#define T_ERR(call, want)                                                                          \
    PX_CHECK((rc = (call)) == (want), "%s returned %d, expected %s (%d)", #call, rc, #want, want)

static int rc;

/* ---------- control variables ---------- */

static int cvar_index(const char *name)
{
    int i = -1;
    T(MPI_T_cvar_get_index(name, &i));
    return i;
}

/* The variable's value as text, and its type. */
static void cvar_text(int i, char *out, size_t len, MPI_Datatype *type_p, MPI_T_enum *en_p)
{
    char name[128];
    int nlen = sizeof(name), verb, bind, scope, count;
    MPI_T_cvar_handle h;
    T(MPI_T_cvar_get_info(i, name, &nlen, &verb, type_p, en_p, NULL, NULL, &bind, &scope));
    T(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    if (*type_p == MPI_CHAR) {
        char *s = malloc((size_t)count);
        T(MPI_T_cvar_read(h, s));
        PX_CHECK(strlen(s) < (size_t)count, "%s: string longer than its count %d", name, count);
        snprintf(out, len, "%s", s);
        free(s);
    } else if (*type_p == MPI_INT) {
        int v = -12345;
        T(MPI_T_cvar_read(h, &v));
        snprintf(out, len, "%d", v);
    } else if (*type_p == MPI_UNSIGNED_LONG_LONG) {
        unsigned long long v = 0;
        T(MPI_T_cvar_read(h, &v));
        snprintf(out, len, "%llu", v);
    } else if (*type_p == MPI_DOUBLE) {
        double v = -1;
        T(MPI_T_cvar_read(h, &v));
        snprintf(out, len, "%.17g", v);
    } else {
        PX_CHECK(0, "%s: unexpected datatype", name);
        out[0] = 0;
    }
    PX_CHECK(count == 1 || *type_p == MPI_CHAR, "%s: count %d", name, count);
    T(MPI_T_cvar_handle_free(&h));
    PX_CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not reset by MPI_T_cvar_handle_free");
}

/* The value the environment's text stands for, as the variable's type reads it. */
static int env_matches(const char *env, const char *got, MPI_Datatype type, MPI_T_enum en)
{
    char *end;
    if (type == MPI_CHAR)
        return !strcmp(env, got);
    if (type == MPI_INT && en != MPI_T_ENUM_NULL) {
        int num, len;
        char ename[64];
        len = sizeof(ename);
        T(MPI_T_enum_get_info(en, &num, ename, &len));
        for (int k = 0; k < num; k++) {
            char item[64];
            int v, l = sizeof(item);
            T(MPI_T_enum_get_item(en, k, &v, item, &l));
            if (!strcasecmp(item, env))
                return v == atoi(got);
        }
        return 0;
    }
    if (type == MPI_INT) {
        if (!strcasecmp(env, "yes") || !strcasecmp(env, "true") || !strcasecmp(env, "on"))
            return atoi(got) == 1;
        if (!strcasecmp(env, "no") || !strcasecmp(env, "false") || !strcasecmp(env, "off"))
            return atoi(got) == 0;
        return strtol(env, NULL, 0) == strtol(got, NULL, 0);
    }
    if (type == MPI_UNSIGNED_LONG_LONG) {
        if (!strcasecmp(env, "auto"))
            return 1; /* what the layer chose */
        unsigned long long v = strtoull(env, &end, 0);
        int c = tolower((unsigned char)*end);
        v <<= c == 'k' ? 10 : c == 'm' ? 20 : c == 'g' ? 30 : 0;
        return v == strtoull(got, NULL, 10);
    }
    double v = strtod(env, &end), scale = 1;
    while (*end == ' ')
        end++;
    if (!strcmp(end, "ns"))
        scale = 1e-9;
    else if (!strcmp(end, "us"))
        scale = 1e-6;
    else if (!strcmp(end, "ms"))
        scale = 1e-3;
    else if (!strcmp(end, "min"))
        scale = 60;
    double g = strtod(got, NULL);
    return g >= v * scale * (1 - 1e-12) && g <= v * scale * (1 + 1e-12);
}

/* Every variable read; those set in the environment compared with it.
 * Returns how many were compared. */
static int check_cvars_against_env(const char *when)
{
    int n = 0, compared = 0, env_cvars = 0;
    T(MPI_T_cvar_get_num(&n));
    PX_CHECK(n > 50, "only %d control variables", n);
    for (int i = 0; i < n; i++) {
        char name[128], text[512];
        int nlen = sizeof(name), verb, bind, scope;
        MPI_Datatype type;
        MPI_T_enum en;
        T(MPI_T_cvar_get_info(i, name, &nlen, &verb, &type, &en, NULL, NULL, &bind, &scope));
        PX_CHECK(nlen == (int)strlen(name) + 1, "%s: name_len %d", name, nlen);
        PX_CHECK(!strncmp(name, "PX_", 3), "cvar %d named %s", i, name);
        PX_CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s: bind %d", name, bind);
        PX_CHECK(scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_LOCAL ||
                     scope == MPI_T_SCOPE_ALL_EQ,
                 "%s: scope %d", name, scope);
        PX_CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL,
                 "%s: verbosity %d", name, verb);
        int j = -1;
        T(MPI_T_cvar_get_index(name, &j));
        PX_CHECK(j == i, "%s: index %d, get_index says %d", name, i, j);
        cvar_text(i, text, sizeof(text), &type, &en);
        if (en != MPI_T_ENUM_NULL) {
            int num, len = 0;
            T(MPI_T_enum_get_info(en, &num, NULL, &len));
            PX_CHECK(num >= 2 && atoi(text) >= 0 && atoi(text) < num, "%s: value %s of %d", name,
                     text, num);
        }
        const char *env = getenv(name);
        if (env && *env) {
            env_cvars++;
            PX_CHECK(env_matches(env, text, type, en), "%s: %s=%s but MPI_T reads %s", when, name,
                     env, text);
            compared++;
        }
    }
    /* every PX_ variable of the environment that names a control variable */
    int named = 0;
    for (char **e = environ; *e; e++) {
        char var[128];
        size_t k = strcspn(*e, "=");
        if (strncmp(*e, "PX_", 3) || k >= sizeof(var) || !(*e)[k + 1])
            continue;
        memcpy(var, *e, k);
        var[k] = 0;
        int idx;
        named += MPI_T_cvar_get_index(var, &idx) == MPI_SUCCESS;
    }
    PX_CHECK(named == env_cvars && compared == named,
             "%s: %d PX_ variables name control variables, %d compared", when, named, compared);
    return compared;
}

static int cvar_scope(int i)
{
    int scope = -1, bind;
    MPI_Datatype type;
    MPI_T_enum en;
    T(MPI_T_cvar_get_info(i, NULL, NULL, NULL, &type, &en, NULL, NULL, &bind, &scope));
    return scope;
}

/* An enumeration's index for item `name`, or -1. */
static int enum_value(MPI_T_enum en, const char *name)
{
    int num = 0, len = 0;
    T(MPI_T_enum_get_info(en, &num, NULL, &len));
    for (int k = 0; k < num; k++) {
        char item[64];
        int v, l = sizeof(item);
        T(MPI_T_enum_get_item(en, k, &v, item, &l));
        if (!strcmp(item, name))
            return v;
    }
    return -1;
}

static void cvar_write_int(const char *var, int v, int want)
{
    MPI_T_cvar_handle h;
    int count;
    T(MPI_T_cvar_handle_alloc(cvar_index(var), NULL, &h, &count));
    rc = MPI_T_cvar_write(h, &v);
    PX_CHECK(rc == want, "writing %d to %s returned %d, expected %d", v, var, rc, want);
    if (want == MPI_SUCCESS) {
        int back = -1;
        T(MPI_T_cvar_read(h, &back));
        PX_CHECK(back == v, "%s: wrote %d, read %d", var, v, back);
    }
    T(MPI_T_cvar_handle_free(&h));
}

static void check_cvar_writes(void)
{
    MPI_T_enum en;
    MPI_Datatype type;
    int bind, scope, count;
    /* read once at MPI_Init: refused */
    PX_CHECK(cvar_scope(cvar_index("PX_NET")) == MPI_T_SCOPE_READONLY, "PX_NET not read-only");
    T(MPI_T_cvar_get_info(cvar_index("PX_RAIL_POLICY"), NULL, NULL, NULL, &type, &en, NULL, NULL,
                          &bind, &scope));
    cvar_write_int("PX_RAIL_POLICY", enum_value(en, "rr"), MPI_T_ERR_CVAR_SET_NEVER);
    /* read at every use */
    PX_CHECK(cvar_scope(cvar_index("PX_LOG_LEVEL")) == MPI_T_SCOPE_LOCAL, "PX_LOG_LEVEL scope");
    PX_CHECK(cvar_scope(cvar_index("PX_BCAST_ALGORITHM")) == MPI_T_SCOPE_ALL_EQ,
             "PX_BCAST_ALGORITHM scope");
    T(MPI_T_cvar_get_info(cvar_index("PX_LOG_LEVEL"), NULL, NULL, NULL, &type, &en, NULL, NULL,
                          &bind, &scope));
    char was[32];
    cvar_text(cvar_index("PX_LOG_LEVEL"), was, sizeof(was), &type, &en);
    cvar_write_int("PX_LOG_LEVEL", enum_value(en, "error"), MPI_SUCCESS);
    cvar_write_int("PX_LOG_LEVEL", 99, MPI_T_ERR_INVALID); /* no such value */
    cvar_write_int("PX_LOG_LEVEL", atoi(was), MPI_SUCCESS);
    /* the row's limits hold: the k-nomial radix is at least 2 */
    cvar_write_int("PX_BCAST_KNOMIAL_RADIX", 1, MPI_T_ERR_INVALID);
    cvar_write_int("PX_BCAST_KNOMIAL_RADIX", 4, MPI_SUCCESS);
    /* a string */
    MPI_T_cvar_handle h;
    T(MPI_T_cvar_handle_alloc(cvar_index("PX_LOG_SUBSYS"), NULL, &h, &count));
    PX_CHECK(count >= 64, "PX_LOG_SUBSYS: count %d", count);
    char buf[256] = "";
    T(MPI_T_cvar_read(h, buf));
    char old[256];
    snprintf(old, sizeof(old), "%s", buf);
    T(MPI_T_cvar_write(h, "rail,proto"));
    T(MPI_T_cvar_read(h, buf));
    PX_CHECK(!strcmp(buf, "rail,proto"), "PX_LOG_SUBSYS reads '%s'", buf);
    T(MPI_T_cvar_write(h, old));
    T(MPI_T_cvar_handle_free(&h));
}

/* ---------- categories ---------- */

static void check_categories(void)
{
    int ncat = 0, ncvar = 0, npvar = 0, nev = 0, sum_c = 0, sum_p = 0, sum_e = 0;
    T(MPI_T_category_get_num(&ncat));
    T(MPI_T_cvar_get_num(&ncvar));
    T(MPI_T_pvar_get_num(&npvar));
    T(MPI_T_event_get_num(&nev));
    char *seen_c = calloc((size_t)ncvar, 1), *seen_p = calloc((size_t)npvar, 1);
    for (int i = 0; i < ncat; i++) {
        char name[64], desc[512];
        int nl = sizeof(name), dl = sizeof(desc), nc, np, nk, ne;
        T(MPI_T_category_get_info(i, name, &nl, desc, &dl, &nc, &np, &nk));
        T(MPI_T_category_get_num_events(i, &ne));
        PX_CHECK(dl > 1, "category %s has no description", name);
        int j = -1;
        T(MPI_T_category_get_index(name, &j));
        PX_CHECK(j == i, "category %s: index %d, get_index %d", name, i, j);
        int *idx = malloc(sizeof(int) * (size_t)(nc + np + nk + ne + 1));
        T(MPI_T_category_get_cvars(i, nc, idx));
        for (int k = 0; k < nc; k++) {
            PX_CHECK(idx[k] >= 0 && idx[k] < ncvar && !seen_c[idx[k]], "%s: cvar %d", name, idx[k]);
            if (idx[k] >= 0 && idx[k] < ncvar)
                seen_c[idx[k]] = 1;
        }
        T(MPI_T_category_get_pvars(i, np, idx));
        for (int k = 0; k < np; k++) {
            PX_CHECK(idx[k] >= 0 && idx[k] < npvar && !seen_p[idx[k]], "%s: pvar %d", name, idx[k]);
            if (idx[k] >= 0 && idx[k] < npvar)
                seen_p[idx[k]] = 1;
        }
        T(MPI_T_category_get_categories(i, nk, idx));
        for (int k = 0; k < nk; k++) {
            char sub[64];
            int sl = sizeof(sub);
            T(MPI_T_category_get_info(idx[k], sub, &sl, NULL, NULL, NULL, NULL, NULL));
            PX_CHECK(!strncmp(sub, name, strlen(name)) && sub[strlen(name)] == '.',
                     "%s is a subcategory of %s", sub, name);
        }
        T(MPI_T_category_get_events(i, ne, idx));
        free(idx);
        sum_c += nc;
        sum_p += np;
        sum_e += ne;
    }
    PX_CHECK(sum_c == ncvar && sum_p == npvar && sum_e == nev,
             "categories hold %d cvars of %d, %d pvars of %d, %d events of %d", sum_c, ncvar, sum_p,
             npvar, sum_e, nev);
    const char *layers[] = {"util", "boot", "net", "net.tcp", "rail", "chan", "proto", "mpi.coll"};
    for (size_t k = 0; k < sizeof(layers) / sizeof(layers[0]); k++) {
        int j;
        T(MPI_T_category_get_index(layers[k], &j));
    }
    int stamp1 = -1, stamp2 = -2;
    T(MPI_T_category_changed(&stamp1));
    T(MPI_T_category_changed(&stamp2));
    PX_CHECK(stamp1 == stamp2, "categories changed (%d, %d)", stamp1, stamp2);
    free(seen_c);
    free(seen_p);
}

/* ---------- performance variables ---------- */

static int pvar(const char *name, int cls)
{
    int i = -1;
    T(MPI_T_pvar_get_index(name, cls, &i));
    return i;
}

static MPI_T_pvar_handle palloc(MPI_T_pvar_session s, const char *name, int cls, void *obj,
                                int *count)
{
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int one;
    T(MPI_T_pvar_handle_alloc(s, pvar(name, cls), obj, &h, count ? count : &one));
    return h;
}

static unsigned long long pread(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    T(MPI_T_pvar_read(s, h, &v));
    return v;
}

static void check_pvar_info(void)
{
    int n = 0;
    T(MPI_T_pvar_get_num(&n));
    PX_CHECK(n > 50, "only %d performance variables", n);
    for (int i = 0; i < n; i++) {
        char name[128], desc[1024];
        int nl = sizeof(name), dl = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype type;
        MPI_T_enum en;
        T(MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &type, &en, desc, &dl, &bind, &ro, &cont,
                              &atomic));
        PX_CHECK(dl > 10, "%s: description '%s'", name, desc);
        PX_CHECK(cls == MPI_T_PVAR_CLASS_COUNTER || cls == MPI_T_PVAR_CLASS_LEVEL ||
                     cls == MPI_T_PVAR_CLASS_TIMER,
                 "%s: class %d", name, cls);
        PX_CHECK(type == (cls == MPI_T_PVAR_CLASS_TIMER ? MPI_DOUBLE : MPI_UNSIGNED_LONG_LONG),
                 "%s: datatype", name);
        PX_CHECK(cls == MPI_T_PVAR_CLASS_LEVEL ? ro && cont : !ro && !cont && atomic,
                 "%s: readonly %d continuous %d atomic %d", name, ro, cont, atomic);
        PX_CHECK(bind == MPI_T_BIND_NO_OBJECT || bind == MPI_T_BIND_MPI_COMM, "%s: bind %d", name,
                 bind);
        int j = -1;
        T(MPI_T_pvar_get_index(name, cls, &j));
        PX_CHECK(j == i, "%s: index %d, get_index %d", name, i, j);
    }
}

/* Bytes a rank sends to the next: one large message (rendezvous), some small. */
#define BIG (1 << 20)
#define SMALL 1000
#define NSMALL 20

static void exchange(char *buf, int to, int from, int tag)
{
    if (px_test_rank == from)
        for (int k = 0; k <= NSMALL; k++)
            MPI_Send(buf, k ? SMALL : BIG, MPI_CHAR, to, tag, MPI_COMM_WORLD);
    if (px_test_rank == to)
        for (int k = 0; k <= NSMALL; k++)
            MPI_Recv(buf, k ? SMALL : BIG, MPI_CHAR, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void check_pvars_traffic(const char *net)
{
    MPI_T_pvar_session s, s2;
    T(MPI_T_pvar_session_create(&s));
    T(MPI_T_pvar_session_create(&s2));
    const int C = MPI_T_PVAR_CLASS_COUNTER, L = MPI_T_PVAR_CLASS_LEVEL;
    MPI_T_pvar_handle sent = palloc(s, "proto_bytes_sent", C, NULL, NULL);
    MPI_T_pvar_handle recvd = palloc(s, "proto_bytes_received", C, NULL, NULL);
    MPI_T_pvar_handle rsent = palloc(s, "rail_bytes_sent", C, NULL, NULL);
    MPI_T_pvar_handle rrecv = palloc(s, "rail_bytes_received", C, NULL, NULL);
    MPI_T_pvar_handle shm = palloc(s, "chan_shm_bytes", C, NULL, NULL);
    MPI_T_pvar_handle udp = palloc(s, "chan_udp_bytes", C, NULL, NULL);
    MPI_T_pvar_handle tcp = palloc(s, "chan_tcp_bytes", C, NULL, NULL);
    MPI_T_pvar_handle msgs = palloc(s, "proto_msgs_sent", C, NULL, NULL);
    MPI_T_pvar_handle subs = palloc(s, "rail_subchannels", L, NULL, NULL);
    MPI_T_pvar_handle uq = palloc(s, "proto_unexpected_queue", L, NULL, NULL);
    MPI_T_pvar_handle other = palloc(s2, "proto_bytes_sent", C, NULL, NULL);
    int count = 0;
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_T_pvar_handle to = palloc(s, "proto_bytes_sent_to", C, &world, &count);
    PX_CHECK(count == px_test_size, "proto_bytes_sent_to: count %d, size %d", count, px_test_size);
    int to_peer = (px_test_rank + 1) % px_test_size,
        from_peer = (px_test_rank + px_test_size - 1) % px_test_size;

    /* allocated handles of counters start at 0, stopped */
    PX_CHECK(pread(s, sent) == 0, "a new handle reads %llu", pread(s, sent));
    T_ERR(MPI_T_pvar_start(s, uq), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_ERR(MPI_T_pvar_reset(s, uq), MPI_T_ERR_PVAR_NO_WRITE);
    T(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES)); /* the levels are left out */

    char *buf = calloc(1, BIG);
    MPI_Barrier(MPI_COMM_WORLD);
    if (px_test_size > 1)
        for (int r = 0; r < px_test_size; r++)
            exchange(buf, (r + 1) % px_test_size, r, 5);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long want = px_test_size > 1 ? BIG + NSMALL * SMALL : 0;
    unsigned long long v_sent = pread(s, sent), v_recv = pread(s, recvd);
    PX_CHECK(v_sent >= want, "proto_bytes_sent %llu < %llu sent", v_sent, want);
    PX_CHECK(v_recv >= want, "proto_bytes_received %llu < %llu received", v_recv, want);
    PX_CHECK(pread(s, msgs) >= (px_test_size > 1 ? NSMALL + 1 : 0), "proto_msgs_sent %llu",
             pread(s, msgs));
    PX_CHECK(pread(s2, other) == 0, "a handle of another session, never started, reads %llu",
             pread(s2, other));
    unsigned long long *per = calloc((size_t)px_test_size, sizeof(*per));
    T(MPI_T_pvar_read(s, to, per));
    PX_CHECK(px_test_size == 1 || per[to_peer] >= want, "proto_bytes_sent_to[%d] %llu < %llu",
             to_peer, per[to_peer], want);
    /* the layer that carried the data: shared memory between the ranks of
     * one machine when PX_NET has it, else the rails */
    unsigned long long v_shm = pread(s, shm), v_net = pread(s, udp) + pread(s, tcp);
    unsigned long long v_rsent = pread(s, rsent), v_rrecv = pread(s, rrecv);
    if (px_test_size > 1 && strstr(net, "shm")) {
        PX_CHECK(v_shm >= BIG + NSMALL * SMALL, "chan_shm_bytes %llu", v_shm);
    } else if (px_test_size > 1) {
        PX_CHECK(v_net >= want, "chan_udp_bytes + chan_tcp_bytes %llu < %llu", v_net, want);
        PX_CHECK(v_rsent >= want, "rail_bytes_sent %llu < %llu", v_rsent, want);
        PX_CHECK(v_rrecv >= want, "rail_bytes_received %llu < %llu", v_rrecv, want);
        PX_CHECK(pread(s, subs) >= 1, "rail_subchannels %llu", pread(s, subs));
    }

    /* stopped: no longer follows; started again: on from where it was */
    T(MPI_T_pvar_stop(s, sent));
    unsigned long long frozen = pread(s, sent);
    if (px_test_size > 1)
        exchange(buf, 1, 0, 6);
    MPI_Barrier(MPI_COMM_WORLD);
    PX_CHECK(pread(s, sent) == frozen, "stopped handle moved from %llu to %llu", frozen,
             pread(s, sent));
    /* reset (stopped), write, readreset */
    T(MPI_T_pvar_reset(s, sent));
    PX_CHECK(pread(s, sent) == 0, "after reset %llu", pread(s, sent));
    unsigned long long seven = 7;
    T(MPI_T_pvar_write(s, sent, &seven));
    PX_CHECK(pread(s, sent) == 7, "after write %llu", pread(s, sent));
    T(MPI_T_pvar_start(s, sent));
    if (px_test_rank == 0 && px_test_size > 1)
        MPI_Send(buf, SMALL, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
    if (px_test_rank == 1)
        MPI_Recv(buf, SMALL, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    unsigned long long rr = 0;
    T(MPI_T_pvar_readreset(s, sent, &rr));
    PX_CHECK(rr >= 7 + (px_test_rank == 0 && px_test_size > 1 ? SMALL : 0), "readreset %llu", rr);
    PX_CHECK(pread(s, sent) == 0, "after readreset %llu (was %llu)", pread(s, sent), rr);

    /* a communicator's queues: an unexpected message on world, none on a
     * duplicate; a posted receive on the duplicate */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_T_pvar_handle uq_world = palloc(s, "proto_unexpected_queue_comm", L, &world, NULL);
    MPI_T_pvar_handle uq_dup = palloc(s, "proto_unexpected_queue_comm", L, &dup, NULL);
    MPI_T_pvar_handle pq_dup = palloc(s, "proto_posted_queue_comm", L, &dup, NULL);
    MPI_Request req = MPI_REQUEST_NULL;
    int peer = px_test_size > 1 ? from_peer : px_test_rank;
    MPI_Irecv(buf, 1, MPI_CHAR, peer, 9, dup, &req);
    PX_CHECK(pread(s, pq_dup) == 1, "posted receives on dup %llu", pread(s, pq_dup));
    MPI_Send(buf, 1, MPI_CHAR, to_peer, 8, MPI_COMM_WORLD);
    int flag = 0;
    while (!flag)
        MPI_Iprobe(peer, 8, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    PX_CHECK(pread(s, uq_world) == 1, "unexpected on world %llu", pread(s, uq_world));
    PX_CHECK(pread(s, uq) >= 1, "unexpected queue %llu", pread(s, uq));
    PX_CHECK(pread(s, uq_dup) == 0, "unexpected on dup %llu", pread(s, uq_dup));
    MPI_Recv(buf, 1, MPI_CHAR, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    PX_CHECK(pread(s, uq_world) == 0, "unexpected on world after the receive %llu",
             pread(s, uq_world));
    MPI_Send(buf, 1, MPI_CHAR, to_peer, 9, dup);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    PX_CHECK(pread(s, pq_dup) == 0, "posted receives on dup after the match %llu",
             pread(s, pq_dup));
    MPI_Comm_free(&dup);
    T_ERR(MPI_T_pvar_read(s, uq_dup, &rr), MPI_T_ERR_INVALID_HANDLE); /* its communicator is gone */

    /* errors */
    T_ERR(MPI_T_pvar_read(s, MPI_T_PVAR_HANDLE_NULL, &rr), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &rr), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_read(s2, sent, &rr), MPI_T_ERR_INVALID_HANDLE); /* another session's */
    T_ERR(MPI_T_pvar_write(s, uq, &rr), MPI_T_ERR_PVAR_NO_WRITE);
    T_ERR(MPI_T_pvar_readreset(s, uq, &rr), MPI_T_ERR_PVAR_NO_WRITE);
    MPI_T_pvar_handle bad;
    int cnt;
    MPI_Comm null = MPI_COMM_NULL;
    T_ERR(MPI_T_pvar_handle_alloc(s, pvar("proto_bytes_sent_to", C), &null, &bad, &cnt),
          MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_handle_alloc(s, -1, NULL, &bad, &cnt), MPI_T_ERR_INVALID_INDEX);
    int npvar;
    T(MPI_T_pvar_get_num(&npvar));
    T_ERR(MPI_T_pvar_handle_alloc(s, npvar, NULL, &bad, &cnt), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_pvar_get_info(npvar, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
    int idx;
    T_ERR(MPI_T_pvar_get_index("proto_bytes_sent", L, &idx), MPI_T_ERR_INVALID_NAME);
    T_ERR(MPI_T_pvar_get_index("no_such_variable", C, &idx), MPI_T_ERR_INVALID_NAME);

    T(MPI_T_pvar_handle_free(s, &msgs));
    PX_CHECK(msgs == MPI_T_PVAR_HANDLE_NULL, "handle not reset by MPI_T_pvar_handle_free");
    MPI_T_pvar_session gone = s2;
    T(MPI_T_pvar_session_free(&s2));
    PX_CHECK(s2 == MPI_T_PVAR_SESSION_NULL, "session not reset by MPI_T_pvar_session_free");
    T_ERR(MPI_T_pvar_read(gone, other, &rr), MPI_T_ERR_INVALID_SESSION);
    T_ERR(MPI_T_pvar_session_free(&gone), MPI_T_ERR_INVALID_SESSION);
    T(MPI_T_pvar_session_free(&s));
    free(per);
    free(buf);
}

/* A write of PX_BCAST_ALGORITHM (every rank alike) decides the next bcast. */
static void check_coll_write(void)
{
    if (px_test_size < 2)
        return;
    MPI_T_pvar_session s;
    T(MPI_T_pvar_session_create(&s));
    const int C = MPI_T_PVAR_CLASS_COUNTER;
    MPI_T_pvar_handle lin = palloc(s, "coll_bcast_linear_calls", C, NULL, NULL);
    MPI_T_pvar_handle bin = palloc(s, "coll_bcast_binomial_calls", C, NULL, NULL);
    MPI_T_pvar_handle binb = palloc(s, "coll_bcast_binomial_bytes", C, NULL, NULL);
    T(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    MPI_T_enum en;
    MPI_Datatype type;
    int bind, scope;
    int alg = cvar_index("PX_BCAST_ALGORITHM");
    T(MPI_T_cvar_get_info(alg, NULL, NULL, NULL, &type, &en, NULL, NULL, &bind, &scope));
    int data[256] = {0};
    cvar_write_int("PX_BCAST_ALGORITHM", enum_value(en, "linear"), MPI_SUCCESS);
    MPI_Bcast(data, 256, MPI_INT, 0, MPI_COMM_WORLD);
    PX_CHECK(pread(s, lin) == 1 && pread(s, bin) == 0, "forced linear: linear %llu binomial %llu",
             pread(s, lin), pread(s, bin));
    cvar_write_int("PX_BCAST_ALGORITHM", enum_value(en, "binomial"), MPI_SUCCESS);
    MPI_Bcast(data, 256, MPI_INT, 0, MPI_COMM_WORLD);
    PX_CHECK(pread(s, lin) == 1 && pread(s, bin) == 1, "forced binomial: linear %llu binomial %llu",
             pread(s, lin), pread(s, bin));
    PX_CHECK(pread(s, binb) == sizeof(data), "coll_bcast_binomial_bytes %llu", pread(s, binb));
    cvar_write_int("PX_BCAST_ALGORITHM", enum_value(en, "auto"), MPI_SUCCESS);
    T(MPI_T_pvar_session_free(&s));
}

/* ---------- events ---------- */

static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety cbs,
                     void *data)
{
    (void)ev;
    (void)reg;
    (void)cbs;
    ++*(int *)data;
}

static void check_events(void)
{
    int n = 0, ns = 0;
    T(MPI_T_event_get_num(&n));
    T(MPI_T_source_get_num(&ns));
    PX_CHECK(n >= 1 && ns == 1, "%d events, %d sources", n, ns);
    int ev = -1;
    T(MPI_T_event_get_index("rail_subchannel_state", &ev));
    char name[64];
    int nl = sizeof(name), verb, nel = 8, bind;
    MPI_Datatype types[8];
    MPI_Aint displ[8];
    MPI_T_enum en;
    MPI_Info info;
    T(MPI_T_event_get_info(ev, name, &nl, &verb, types, displ, &nel, &en, &info, NULL, NULL,
                           &bind));
    PX_CHECK(nel == 5 && types[0] == MPI_INT && types[4] == MPI_INT && displ[4] == 16,
             "event elements %d", nel);
    int num = 0, len = 0;
    T(MPI_T_enum_get_info(en, &num, NULL, &len));
    PX_CHECK(num == 3 && enum_value(en, "DOWN") == 2, "subchannel states %d", num);
    MPI_T_source_order order;
    MPI_Count tps, maxt, t1 = 0, t2 = 0;
    T(MPI_T_source_get_info(0, NULL, NULL, NULL, NULL, &order, &tps, &maxt, &info));
    PX_CHECK(order == MPI_T_SOURCE_ORDERED && tps == 1000000000, "source %d %lld", (int)order,
             (long long)tps);
    T(MPI_T_source_get_timestamp(0, &t1));
    T(MPI_T_source_get_timestamp(0, &t2));
    PX_CHECK(t2 >= t1 && t1 > 0, "timestamps %lld %lld", (long long)t1, (long long)t2);
    static int calls;
    MPI_T_event_registration reg;
    T(MPI_T_event_handle_alloc(ev, NULL, MPI_INFO_NULL, &reg));
    T(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &calls,
                                    on_event));
    T(MPI_T_event_handle_get_info(reg, &info));
    MPI_Info_free(&info);
    T_ERR(MPI_T_event_register_callback(reg, (MPI_T_cb_safety)7, MPI_INFO_NULL, &calls, on_event),
          MPI_T_ERR_INVALID);
    int elem;
    T_ERR(MPI_T_event_read((MPI_T_event_instance)&elem, 0, &elem), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(
        MPI_T_event_get_info(n, NULL, NULL, &verb, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bind),
        MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_source_get_timestamp(1, &t1), MPI_T_ERR_INVALID_INDEX);
    T(MPI_T_event_handle_free(reg, NULL, NULL));
    T_ERR(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    /* the subchannels of this job stay up: no event was raised */
    PX_CHECK(calls == 0, "%d subchannel events without a failure", calls);
}

/* ---------- errors of the control variables ---------- */

static void check_cvar_errors(void)
{
    int n, idx, count;
    MPI_T_cvar_handle h;
    MPI_T_enum en;
    MPI_Datatype type;
    int bind, scope;
    T(MPI_T_cvar_get_num(&n));
    T_ERR(MPI_T_cvar_get_info(n, NULL, NULL, NULL, &type, &en, NULL, NULL, &bind, &scope),
          MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, &type, &en, NULL, NULL, &bind, &scope),
          MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_cvar_handle_alloc(n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_cvar_get_index("PX_NO_SUCH_PARAMETER", &idx), MPI_T_ERR_INVALID_NAME);
    T_ERR(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &idx), MPI_T_ERR_INVALID_HANDLE);
    int ncat;
    T(MPI_T_category_get_num(&ncat));
    T_ERR(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_category_get_cvars(-1, 0, NULL), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_category_get_index("no.such.category", &idx), MPI_T_ERR_INVALID_NAME);
    T(MPI_T_cvar_get_info(cvar_index("PX_RAIL_POLICY"), NULL, NULL, NULL, &type, &en, NULL, NULL,
                          &bind, &scope));
    int num, v, len = 0;
    T(MPI_T_enum_get_info(en, &num, NULL, &len));
    T_ERR(MPI_T_enum_get_item(en, num, &v, NULL, &len), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &num, NULL, &len), MPI_T_ERR_INVALID_HANDLE);
    /* a name buffer too short: truncated, terminated */
    char small[4];
    int sl = sizeof(small);
    T(MPI_T_cvar_get_info(cvar_index("PX_RAIL_POLICY"), small, &sl, NULL, &type, &en, NULL, NULL,
                          &bind, &scope));
    PX_CHECK(!strcmp(small, "PX_") && sl == 4, "truncated name '%s' (%d)", small, sl);
}

int main(int argc, char **argv)
{
    int provided = -1, n = 0;
    char net[256] = "";

    /* before MPI_Init, and nested */
    T_ERR(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    PX_CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    T(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided));
    int compared = check_cvars_against_env("before MPI_Init");
    check_cvar_errors();
    {
        MPI_T_enum en;
        MPI_Datatype type;
        cvar_text(cvar_index("PX_NET"), net, sizeof(net), &type, &en);
    }
    MPI_T_cvar_handle early;
    int count;
    T(MPI_T_cvar_handle_alloc(cvar_index("PX_NET"), NULL, &early, &count));
    T(MPI_T_finalize());
    T(MPI_T_cvar_get_num(&n)); /* one reference left */
    T(MPI_T_finalize());
    T_ERR(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);

    px_test_init(&argc, &argv, "mpit");
    T(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    /* a handle of an earlier initialization is gone */
    T_ERR(MPI_T_cvar_read(early, net), MPI_T_ERR_INVALID_HANDLE);
    check_cvars_against_env("after MPI_Init");
    check_cvar_writes();
    check_categories();
    check_pvar_info();
    check_pvars_traffic(net);
    check_coll_write();
    check_events();

    /* counters after MPI_Finalize: the values they reached */
    MPI_T_pvar_session s;
    T(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle all = palloc(s, "proto_bytes_sent", MPI_T_PVAR_CLASS_COUNTER, NULL, NULL);
    T(MPI_T_pvar_start(s, all));
    char buf[SMALL];
    memset(buf, 0, sizeof(buf));
    MPI_Sendrecv(buf, SMALL, MPI_CHAR, (px_test_rank + 1) % px_test_size, 3, buf + 0, SMALL,
                 MPI_CHAR, (px_test_rank + px_test_size - 1) % px_test_size, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int total = 0;
    MPI_Allreduce(&px_test_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    unsigned long long before = pread(s, all);
    MPI_Finalize();
    unsigned long long after = pread(s, all);
    PX_CHECK(after >= before && before >= SMALL,
             "proto_bytes_sent %llu before MPI_Finalize, %llu after", before, after);
    T(MPI_T_cvar_get_num(&n));
    T(MPI_T_pvar_session_free(&s));
    T(MPI_T_finalize());
    if (px_test_rank == 0) {
        if (total == 0 && px_test_errors == 0)
            printf("PASS mpit np=%d: %d control variables (%d set in the environment)\n",
                   px_test_size, n, compared);
        else
            printf("FAIL mpit np=%d: %d failed checks\n", px_test_size, total + px_test_errors);
    }
    return px_test_errors ? 1 : 0;
}
