/* Test program for the bootstrap layer (no MPI). Run under pxrun, or alone
 * for the singleton case. The mode is argv[1]; extra trailing arguments are
 * ignored (tests pass a unique marker to find leftover processes).
 *
 *   kv [NKEYS]          put rank-dependent values, fence, check every rank's, barrier
 *   nodemap             print the node map
 *   exit R K            rank R exits with K after a barrier; the others wait in a barrier
 *   abort R K           rank R calls px_boot_abort(K); the others wait in a barrier
 *   kill R              rank R raises SIGKILL; the others wait in a barrier
 *   sleep               init, barrier, print "ready", sleep forever
 *   hang-noinit R       rank R sleeps without connecting; the others init and wait
 *   stdin               rank 0 counts its stdin; the others check theirs is empty
 *   env VAR...          print VAR=value (or "VAR unset") for each VAR
 *   lines N             print N long lines quickly (line integrity through pxrun)
 *   badsecret           init with a corrupted PX_JOB_SECRET; exit 3 when refused
 *   dup                 init as an already connected rank; exit 3 when refused
 *   authwait FILE       rank 0 prints PX_BOOT_ADDR and the secret, waits for FILE, then kv
 *   singleton           check the singleton job
 *   noinit K            exit with K without touching the bootstrap (a non-MPI program)
 *   shutkv R            rank R shuts its kv connection down but keeps running */
#include "boot/boot.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static px_boot_info_t info;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "boot_prog rank %d: check failed at line %d: ", info.rank, __LINE__);  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void init_or_die(void)
{
    px_status_t st = px_boot_init(&info);
    CHECK(st == PX_OK, "px_boot_init: %s", px_status_name(st));
    CHECK(info.rank >= 0 && info.rank < info.size, "rank %d size %d", info.rank, info.size);
    CHECK(info.node_of[info.rank] == info.node_id, "node_of[self] %d != node_id %d",
          info.node_of[info.rank], info.node_id);
    CHECK(info.local_rank < info.local_size, "local rank %d of %d", info.local_rank,
          info.local_size);
}

/* Deterministic value of (rank, key index, round): length and bytes vary. */
static size_t make_value(int rank, int i, int round, char *buf)
{
    size_t len = (size_t)((rank * 37 + i * 11 + round * 5) % 900) + 1;
    if (i == 1)
        len = 0; /* an empty value is legal */
    for (size_t k = 0; k < len; k++)
        buf[k] = (char)('A' + (rank * 7 + i * 3 + round + (int)k) % 26);
    return len;
}

static void kv_round(int nkeys, int round)
{
    char key[PX_BOOT_KEY_MAX], val[PX_BOOT_VAL_MAX], got[PX_BOOT_VAL_MAX];
    size_t len;
    for (int i = 0; i < nkeys; i++) {
        snprintf(key, sizeof(key), "key.%d", i);
        size_t n = make_value(info.rank, i, round, val);
        CHECK(px_boot_put(key, val, n) == PX_OK, "put %s", key);
    }
    /* before the fence nothing of this round is visible */
    if (round == 0) {
        CHECK(px_boot_get(info.rank, "key.0", got, sizeof(got), &len) == PX_ERR_NOT_FOUND,
              "own put visible before fence");
    }
    CHECK(px_boot_fence() == PX_OK, "fence");
    for (int r = 0; r < info.size; r++) {
        for (int i = 0; i < nkeys; i++) {
            snprintf(key, sizeof(key), "key.%d", i);
            size_t want = make_value(r, i, round, val);
            px_status_t st = px_boot_get(r, key, got, sizeof(got), &len);
            CHECK(st == PX_OK, "get rank %d %s: %s", r, key, px_status_name(st));
            CHECK(len == want && !memcmp(got, val, len), "value of rank %d %s round %d differs", r,
                  key, round);
        }
        CHECK(px_boot_get(r, "nokey", got, sizeof(got), &len) == PX_ERR_NOT_FOUND,
              "missing key found");
    }
    CHECK(px_boot_barrier() == PX_OK, "barrier");
}

static int mode_kv(int nkeys)
{
    char got[4];
    size_t len;
    init_or_die();
    CHECK(px_boot_put("", "x", 1) == PX_ERR_INVALID_PARAM, "empty key accepted");
    char big[PX_BOOT_VAL_MAX + 1] = {0};
    CHECK(px_boot_put("big", big, sizeof(big)) == PX_ERR_INVALID_PARAM, "oversized value accepted");
    kv_round(nkeys, 0);
    kv_round(nkeys, 1); /* same keys again: the new values replace the old */
    int peer = (info.rank + 1) % info.size;
    size_t want = make_value(peer, 0, 1, big);
    if (want > sizeof(got))
        CHECK(px_boot_get(peer, "key.0", got, sizeof(got), &len) == PX_ERR_TRUNCATED,
              "short buffer not reported");
    CHECK(px_boot_get(peer, "key.0", NULL, 0, &len) == PX_OK && len == want, "length query");
    CHECK(px_boot_get(info.size, "key.0", got, sizeof(got), &len) == PX_ERR_INVALID_PARAM,
          "rank out of range accepted");
    CHECK(px_boot_finalize() == PX_OK, "finalize");
    printf("kv ok rank %d size %d\n", info.rank, info.size);
    return 0;
}

static int mode_nodemap(void)
{
    char map[4096] = "";
    size_t n = 0;
    init_or_die();
    for (int r = 0; r < info.size && n < sizeof(map) - 16; r++)
        n += (size_t)snprintf(map + n, sizeof(map) - n, "%s%d", r ? "," : "", info.node_of[r]);
    const char *host = getenv("BOOTTEST_HOST");
    const char *name = getenv("PX_NODE_NAME");
    printf("nodemap rank=%d size=%d node=%d nnodes=%d lrank=%d lsize=%d universe=%d name=%s "
           "host=%s map=%s\n",
           info.rank, info.size, info.node_id, info.num_nodes, info.local_rank, info.local_size,
           info.universe_size, name ? name : "-", host ? host : "-", map);
    CHECK(px_boot_barrier() == PX_OK, "barrier");
    CHECK(px_boot_finalize() == PX_OK, "finalize");
    return 0;
}

static void sleep_forever(void)
{
    for (;;)
        pause();
}

static int mode_fail(const char *how, int victim, int code)
{
    init_or_die();
    CHECK(px_boot_barrier() == PX_OK, "barrier");
    printf("ready rank %d\n", info.rank);
    fflush(stdout);
    if (info.rank == victim) {
        usleep(200000); /* let every rank reach the second barrier */
        printf("rank %d failing now (%s)\n", info.rank, how);
        fflush(stdout);
        if (!strcmp(how, "exit"))
            exit(code);
        if (!strcmp(how, "abort"))
            px_boot_abort(code, "boot_prog abort test");
        raise(SIGKILL);
    }
    px_boot_barrier(); /* never completes: the victim does not come */
    fprintf(stderr, "boot_prog rank %d: barrier returned although rank %d failed\n", info.rank,
            victim);
    return 1;
}

static int mode_stdin(void)
{
    char buf[65536];
    long lines = 0, bytes = 0;
    ssize_t n;
    init_or_die();
    while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0) {
        bytes += n;
        for (ssize_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
    }
    if (info.rank == 0)
        printf("stdin rank 0 lines=%ld bytes=%ld\n", lines, bytes);
    else
        printf("stdin rank %d %s\n", info.rank, bytes ? "NOT EMPTY" : "empty");
    CHECK(px_boot_barrier() == PX_OK, "barrier");
    CHECK(px_boot_finalize() == PX_OK, "finalize");
    return 0;
}

static int mode_env(int argc, char **argv)
{
    init_or_die();
    for (int i = 0; i < argc; i++) {
        char cwd[4096];
        const char *v = strcmp(argv[i], "_CWD") ? getenv(argv[i]) : getcwd(cwd, sizeof(cwd));
        if (v)
            printf("env rank %d %s=%s\n", info.rank, argv[i], v);
        else
            printf("env rank %d %s unset\n", info.rank, argv[i]);
    }
    CHECK(px_boot_barrier() == PX_OK, "barrier");
    CHECK(px_boot_finalize() == PX_OK, "finalize");
    return 0;
}

static int mode_lines(int n)
{
    char pad[301];
    memset(pad, 'x', 300);
    pad[300] = 0;
    init_or_die();
    /* fully buffered stdout: the pipe sees big chunks that split lines */
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    for (int i = 0; i < n; i++)
        printf("line %d %d %s\n", info.rank, i, pad);
    fflush(stdout);
    fprintf(stderr, "partial line without newline from rank %d", info.rank);
    CHECK(px_boot_barrier() == PX_OK, "barrier");
    CHECK(px_boot_finalize() == PX_OK, "finalize");
    return 0;
}

static int mode_refused(int corrupt)
{
    if (corrupt) {
        const char *s = getenv("PX_JOB_SECRET");
        CHECK(s && strlen(s) == 64, "no PX_JOB_SECRET");
        char bad[65];
        memcpy(bad, s, 65);
        bad[0] = bad[0] == '0' ? '1' : '0';
        setenv("PX_JOB_SECRET", bad, 1);
    }
    px_status_t st = px_boot_init(&info);
    printf("init %s: %s\n", st == PX_OK ? "succeeded" : "failed", px_status_name(st));
    fflush(stdout);
    return st == PX_ERR_AUTH ? 3 : 4;
}

/* Rank 0 also starts a copy of itself claiming the connected rank 0. */
static int mode_authwait(const char *file)
{
    struct stat st;
    int status = 0;
    init_or_die();
    if (info.rank == 0) {
        printf("authwait addr=%s secret=%s\n", getenv("PX_BOOT_ADDR"), getenv("PX_JOB_SECRET"));
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            execl("/proc/self/exe", "boot_prog", "dup", (char *)NULL);
            _exit(5);
        }
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork dup");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3,
              "duplicate rank 0 was not refused (status %d)", status);
        for (int i = 0; i < 2000 && stat(file, &st) < 0; i++)
            usleep(10000);
        CHECK(stat(file, &st) == 0, "%s never appeared", file);
    }
    kv_round(3, 0);
    CHECK(px_boot_finalize() == PX_OK, "finalize");
    printf("authwait ok rank %d\n", info.rank);
    return 0;
}

static int mode_singleton(void)
{
    char got[16];
    size_t len;
    size_t slen;
    init_or_die();
    CHECK(info.singleton == 1 && info.rank == 0 && info.size == 1 && info.num_nodes == 1 &&
              info.local_size == 1 && info.node_of[0] == 0,
          "not a singleton job");
    CHECK(px_boot_secret(&slen) && slen == 32, "no secret");
    CHECK(px_boot_put("k", "v1", 2) == PX_OK && px_boot_fence() == PX_OK, "put/fence");
    CHECK(px_boot_get(0, "k", got, sizeof(got), &len) == PX_OK && len == 2 && !memcmp(got, "v1", 2),
          "get");
    CHECK(px_boot_barrier() == PX_OK, "barrier");
    CHECK(px_boot_finalize() == PX_OK, "finalize");
    printf("singleton ok rank %d size %d job %016llx\n", info.rank, info.size,
           (unsigned long long)info.job_id);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int a = argc > 2 ? atoi(argv[2]) : 0;
    int b = argc > 3 ? atoi(argv[3]) : 0;

    if (!strcmp(mode, "kv"))
        return mode_kv(argc > 2 ? a : 8);
    if (!strcmp(mode, "nodemap"))
        return mode_nodemap();
    if (!strcmp(mode, "exit") || !strcmp(mode, "abort"))
        return mode_fail(mode, a, b);
    if (!strcmp(mode, "kill"))
        return mode_fail(mode, a, 0);
    if (!strcmp(mode, "sleep")) {
        init_or_die();
        CHECK(px_boot_barrier() == PX_OK, "barrier");
        printf("ready rank %d\n", info.rank);
        fflush(stdout);
        sleep_forever();
    }
    if (!strcmp(mode, "hang-noinit")) {
        const char *r = getenv("PX_RANK");
        if (r && atoi(r) == a)
            sleep_forever();
        init_or_die();
        px_boot_barrier();
        return 1;
    }
    if (!strcmp(mode, "stdin"))
        return mode_stdin();
    if (!strcmp(mode, "env"))
        return mode_env(argc - 2, argv + 2);
    if (!strcmp(mode, "lines"))
        return mode_lines(a);
    if (!strcmp(mode, "badsecret"))
        return mode_refused(1);
    if (!strcmp(mode, "dup"))
        return mode_refused(0);
    if (!strcmp(mode, "authwait") && argc > 2)
        return mode_authwait(argv[2]);
    if (!strcmp(mode, "singleton"))
        return mode_singleton();
    if (!strcmp(mode, "shutkv")) {
        init_or_die();
        CHECK(px_boot_barrier() == PX_OK, "barrier");
        printf("ready rank %d\n", info.rank);
        fflush(stdout);
        if (info.rank == a) {
            /* the kv connection is the first socket boot opened */
            for (int fd = 3; fd < 1024; fd++) {
                int type;
                socklen_t sl = sizeof(type);
                if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &sl) == 0) {
                    shutdown(fd, SHUT_RDWR);
                    break;
                }
            }
        }
        sleep_forever();
    }
    if (!strcmp(mode, "noinit")) {
        printf("noinit rank %s\n", getenv("PX_RANK") ? getenv("PX_RANK") : "-");
        return a;
    }
    fprintf(stderr, "boot_prog: unknown mode '%s'\n", mode);
    return 2;
}
