/* Fault-injection stream: numbered, checksummed messages between ranks for
 * as long as a duration or a byte budget lasts, while a driver breaks the
 * network underneath. Plain MPI only (C11), so any MPI library can run it.
 *
 * Every message starts with a header (source, destination, tag, sequence
 * number, size, checksum of the body); the body is a pattern derived from
 * (source, destination, tag, sequence). Messages of a stream go through a
 * window of nonblocking sends/receives (tag 0) and one blocking exchange
 * per epoch (tag 1); every epoch ends with an MPI_Allreduce whose result is
 * checked and which decides, for everyone at once, whether to stop. At the
 * end the ranks exchange how many messages they sent and each receiver
 * checks that every message arrived exactly once, in order per
 * (source, tag), and intact.
 *
 * Output: "FT_START epoch=<s>" (rank 0, when streaming starts, wall clock),
 * "PROG t=<s> bytes=<n>" every --progress-ms on the first receiving rank
 * (cumulative bytes it received), "TIMELINE <ms> <MB per bin>..." (all
 * receivers), then one JSON line and "PASS ft_stream np=<N>: ..." on
 * success. The JSON has the longest time without a completed message over
 * the whole run (max_stall_s) and, with --fault-at, the longest such gap
 * ending after the fault (stall_after_fault_s: what the fault cost, not the
 * start-up; stall_after_fault_end_s: when it ended, seconds after
 * FT_START). Exit status 1 when anything was lost, duplicated or corrupted.
 *
 * Usage: ft_stream [--seconds S] [--bytes B] [--sizes 1k,48k,1m,4m]
 *                  [--window W] [--every N] [--mode pairs|bidir|all]
 *                  [--fault-at T] [--fault-end T] [--progress-ms MS]
 *                  [--exchange blocking|watched] [--layout bytes|swapped]
 *   --seconds S     stop after S seconds (default 2; 0: only --bytes)
 *   --bytes B       stop once all senders together sent B bytes (k/m/g)
 *   --sizes LIST    message sizes, cycled by sequence number (>= 64 bytes)
 *   --window W      nonblocking messages in flight per peer (default 4)
 *   --every N       messages per peer between two allreduces (default 16)
 *   --mode          pairs: rank 2i sends to 2i+1 (default); bidir: both ways;
 *                   all: every rank to every other rank
 *   --fault-at T, --fault-end T
 *                   seconds after FT_START when a fault begins/ends, for the
 *                   rates before, during and after it (permanent fault:
 *                   leave out --fault-end; "after" starts 1 s after T)
 *   --exchange      blocking: the epoch's exchange is MPI_Sendrecv (default);
 *                   watched: it is MPI_Isend/MPI_Irecv, and the rank tests
 *                   the window while it waits, so that every completion is
 *                   timed as it happens (in a blocking call the window's
 *                   completions go unseen, and the gap measured around it
 *                   is the call's, not the network's)
 *   --layout        bytes: messages are MPI_BYTE (default); swapped: each
 *                   8 KB of a message is one item of a type whose two 4 KB
 *                   halves are swapped, so that the library packs and
 *                   unpacks it as a non-contiguous type (sizes must be
 *                   multiples of 8 KB) */
#include <mpi.h>

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_NB 0
#define TAG_BLK 1
#define NTAGS 2
#define MAGIC UINT64_C(0x46545354524d3031) /* "FTSTRM01" */
#define HDR_BYTES 64
#define MAX_SIZES 16
#define BIN_S 0.1
#define UNIT_SWAPPED 8192

/* What messages are made of (--layout): g_unit_bytes bytes each */
static MPI_Datatype g_unit = MPI_BYTE;
static size_t g_unit_bytes = 1;

typedef struct {
    uint64_t magic;
    int32_t src, dst, tag, pad;
    uint64_t seq;
    uint64_t size;
    uint64_t sum; /* checksum of the body */
    uint64_t spare[2];
} ft_hdr_t;

typedef struct {
    double seconds, fault_at, fault_end;
    uint64_t bytes;
    size_t sizes[MAX_SIZES];
    int nsizes, window, every, progress_ms, watched, swapped;
    char mode[8];
} ft_opts_t;

/* One in-flight message: a buffer with its request. */
typedef struct {
    int peer; /* index into the send or receive peer list */
    int is_send;
    uint64_t post; /* receives: how many were posted before this one (same peer, tag) */
    char *buf;
} ft_slot_t;

static int g_rank, g_size;

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t mix64(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static uint64_t seed_of(int src, int dst, int tag, uint64_t seq)
{
    return mix64(((uint64_t)(uint32_t)src << 40) ^ ((uint64_t)(uint32_t)dst << 20) ^
                 ((uint64_t)tag << 60) ^ mix64(seq));
}

static size_t size_of(const ft_opts_t *o, int src, int dst, int tag, uint64_t seq)
{
    return o
        ->sizes[(seq + (uint64_t)src + (uint64_t)dst * 3 + (uint64_t)tag) % (uint64_t)o->nsizes];
}

/* Body word i: cheap to generate and to check (xorshift of the seed). */
static void fill(char *buf, size_t size, int src, int dst, int tag, uint64_t seq)
{
    ft_hdr_t h = {MAGIC, src, dst, tag, 0, seq, size, 0, {0, 0}};
    uint64_t x = seed_of(src, dst, tag, seq) | 1, sum = 0;
    size_t nw = (size - HDR_BYTES) / 8;
    uint64_t *w = (uint64_t *)(buf + HDR_BYTES);
    for (size_t i = 0; i < nw; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w[i] = x;
        sum += x * (2 * i + 1);
    }
    for (size_t i = HDR_BYTES + nw * 8; i < size; i++) {
        buf[i] = (char)(x >> ((i & 7) * 8));
        sum += (unsigned char)buf[i];
    }
    h.sum = sum;
    memcpy(buf, &h, sizeof(h));
}

/* 0: intact; 1: the header is not the expected one's or the body is wrong. */
static int check_body(const char *buf, size_t got, const ft_hdr_t *h)
{
    uint64_t x = seed_of(h->src, h->dst, h->tag, h->seq) | 1, sum = 0;
    size_t nw = (got - HDR_BYTES) / 8;
    const uint64_t *w = (const uint64_t *)(buf + HDR_BYTES);
    int bad = 0;
    for (size_t i = 0; i < nw; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bad |= w[i] != x;
        sum += w[i] * (2 * i + 1);
    }
    for (size_t i = HDR_BYTES + nw * 8; i < got; i++) {
        bad |= buf[i] != (char)(x >> ((i & 7) * 8));
        sum += (unsigned char)buf[i];
    }
    return bad || sum != h->sum;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k':
    case 'K':
        v *= 1024;
        break;
    case 'm':
    case 'M':
        v *= 1024 * 1024;
        break;
    case 'g':
    case 'G':
        v *= 1024.0 * 1024 * 1024;
        break;
    default:
        break;
    }
    return (size_t)v;
}

static int usage(const char *why)
{
    if (g_rank == 0)
        fprintf(stderr, "ft_stream: %s\n(see the comment at the top of ft_stream.c)\n", why);
    MPI_Finalize();
    return 2;
}

static int parse(int argc, char **argv, ft_opts_t *o)
{
    o->seconds = 2;
    o->bytes = 0;
    o->fault_at = -1;
    o->fault_end = -1;
    o->window = 4;
    o->every = 16;
    o->progress_ms = 100;
    o->watched = 0;
    o->swapped = 0;
    strcpy(o->mode, "pairs");
    const char *sizes = "1k,48k,1m,4m";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return -1;
        if (!strcmp(a, "--seconds"))
            o->seconds = atof(v);
        else if (!strcmp(a, "--bytes"))
            o->bytes = parse_size(v);
        else if (!strcmp(a, "--sizes"))
            sizes = v;
        else if (!strcmp(a, "--window"))
            o->window = atoi(v);
        else if (!strcmp(a, "--every"))
            o->every = atoi(v);
        else if (!strcmp(a, "--fault-at"))
            o->fault_at = atof(v);
        else if (!strcmp(a, "--fault-end"))
            o->fault_end = atof(v);
        else if (!strcmp(a, "--progress-ms"))
            o->progress_ms = atoi(v);
        else if (!strcmp(a, "--mode") && strlen(v) < sizeof(o->mode))
            strcpy(o->mode, v);
        else if (!strcmp(a, "--exchange") && (!strcmp(v, "blocking") || !strcmp(v, "watched")))
            o->watched = !strcmp(v, "watched");
        else if (!strcmp(a, "--layout") && (!strcmp(v, "bytes") || !strcmp(v, "swapped")))
            o->swapped = !strcmp(v, "swapped");
        else
            return -1;
        i++;
    }
    if (strcmp(o->mode, "pairs") && strcmp(o->mode, "bidir") && strcmp(o->mode, "all"))
        return -1;
    if (o->window < 1 || o->every < 1 || (o->seconds <= 0 && o->bytes == 0))
        return -1;
    char tmp[256];
    snprintf(tmp, sizeof(tmp), "%s", sizes);
    o->nsizes = 0;
    for (char *t = strtok(tmp, ","); t && o->nsizes < MAX_SIZES; t = strtok(NULL, ",")) {
        size_t s = parse_size(t);
        if (s < HDR_BYTES || s > (size_t)1 << 30 || (o->swapped && s % UNIT_SWAPPED))
            return -1;
        o->sizes[o->nsizes++] = s;
    }
    return o->nsizes ? 0 : -1;
}

/* Receiver-side bookkeeping. */
typedef struct {
    uint64_t *next; /* receives posted so far per (source peer, tag) */
    uint8_t **seen; /* bitmap of sequence numbers received per (source peer, tag) */
    uint64_t *seen_cap, *distinct;
    uint64_t lost, dup, corrupt, order, msgs, bytes, complaints;
    double last_done, max_stall, t0;
    double fault_t, fault_stall; /* the longest gap ending after the fault (--fault-at) */
    double fault_stall_end;      /* when it ended, seconds since t0 */
    double *bins;                /* bytes received per BIN_S since t0 */
    size_t nbins;
} ft_rx_t;

static void rx_note_time(ft_rx_t *rx, double t, uint64_t bytes)
{
    double gap = t - rx->last_done;
    if (gap > rx->max_stall)
        rx->max_stall = gap;
    if (rx->fault_t > 0 && t >= rx->fault_t && gap > rx->fault_stall) {
        rx->fault_stall = gap;
        rx->fault_stall_end = t - rx->t0;
    }
    rx->last_done = t;
    size_t b = (size_t)((t - rx->t0) / BIN_S);
    if (b >= rx->nbins) {
        size_t n = rx->nbins * 2 > b + 1 ? rx->nbins * 2 : b + 64;
        rx->bins = realloc(rx->bins, n * sizeof(double));
        memset(rx->bins + rx->nbins, 0, (n - rx->nbins) * sizeof(double));
        rx->nbins = n;
    }
    rx->bins[b] += (double)bytes;
}

/* The receive posted as number `post` of stream (srcs[p], tag) completed.
 * MPI matches a stream's messages in posting order, so it must hold message
 * number `post`; each sequence number must arrive once. */
static void rx_check(ft_rx_t *rx, const ft_opts_t *o, const char *buf, MPI_Status *st, int src,
                     int tag, int p, uint64_t post)
{
    int got;
    MPI_Get_count(st, MPI_BYTE, &got);
    rx->msgs++;
    rx->bytes += (uint64_t)got;
    rx_note_time(rx, now_wall(), (uint64_t)got);
    ft_hdr_t h;
    memset(&h, 0, sizeof(h));
    if (got >= HDR_BYTES)
        memcpy(&h, buf, sizeof(h));
    int speak = rx->complaints < 10;
    if (got < HDR_BYTES || h.magic != MAGIC || h.src != src || h.dst != g_rank || h.tag != tag ||
        h.size != (uint64_t)got || size_of(o, src, g_rank, tag, h.seq) != (size_t)got ||
        check_body(buf, (size_t)got, &h)) {
        rx->corrupt++;
        if (speak)
            fprintf(stderr,
                    "ft_stream: rank %d: corrupt message from %d tag %d (%d bytes, "
                    "header seq %" PRIu64 " size %" PRIu64 ", receive #%" PRIu64 ")\n",
                    g_rank, src, tag, got, h.seq, h.size, post);
        rx->complaints++;
        return;
    }
    int k = p * NTAGS + tag;
    if (h.seq >> 3 >= rx->seen_cap[k]) {
        uint64_t n = (h.seq >> 3) * 2 + 64;
        rx->seen[k] = realloc(rx->seen[k], n);
        memset(rx->seen[k] + rx->seen_cap[k], 0, n - rx->seen_cap[k]);
        rx->seen_cap[k] = n;
    }
    uint8_t bit = (uint8_t)(1u << (h.seq & 7));
    if (rx->seen[k][h.seq >> 3] & bit) {
        rx->dup++;
        if (speak)
            fprintf(stderr, "ft_stream: rank %d: duplicate seq %" PRIu64 " from %d tag %d\n",
                    g_rank, h.seq, src, tag);
        rx->complaints++;
        return;
    }
    rx->seen[k][h.seq >> 3] |= bit;
    rx->distinct[k]++;
    if (h.seq != post) {
        rx->order++;
        if (speak)
            fprintf(stderr,
                    "ft_stream: rank %d: from %d tag %d receive #%" PRIu64 " got seq %" PRIu64 "\n",
                    g_rank, src, tag, post, h.seq);
        rx->complaints++;
    }
}

/* MB/s received in [a, b) seconds from the 100 ms bins (partial bins pro rata);
 * -1 when the interval is empty. */
static double rate_between(const double *bins, int nb, double a, double b)
{
    if (b - a < 1e-6)
        return -1;
    double sum = 0;
    for (int i = 0; i < nb; i++) {
        double lo = i * BIN_S, hi = lo + BIN_S;
        double ov = (hi < b ? hi : b) - (lo > a ? lo : a);
        if (ov > 0)
            sum += bins[i] * ov / BIN_S;
    }
    return sum / (b - a) / 1e6;
}

/* Tests the window's requests once and accounts for those that completed
 * (the receives checked and timed). */
#define TEST_WINDOW()                                                                              \
    do {                                                                                           \
        int n_ = 0;                                                                                \
        MPI_Testsome(nslot, req, &n_, idx, sts);                                                   \
        for (int i_ = 0; i_ < n_ && n_ != MPI_UNDEFINED; i_++) {                                   \
            ft_slot_t *sl_ = &slot[idx[i_]];                                                       \
            if (sl_->is_send) {                                                                    \
                inflight_tx[sl_->peer]--;                                                          \
            } else {                                                                               \
                inflight_rx[sl_->peer]--;                                                          \
                rx_check(&rx, &o, sl_->buf, &sts[i_], srcs[sl_->peer], TAG_NB, sl_->peer,          \
                         sl_->post);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    ft_opts_t o;
    if (parse(argc, argv, &o) != 0)
        return usage("bad arguments");
    if (g_size < 2)
        return usage("needs 2 or more ranks");
    if (o.swapped) {
        int half = UNIT_SWAPPED / 2, len[2] = {half, half};
        MPI_Aint disp[2] = {half, 0};
        MPI_Type_create_hindexed(2, len, disp, MPI_BYTE, &g_unit);
        MPI_Type_commit(&g_unit);
        g_unit_bytes = UNIT_SWAPPED;
    }

    /* who this rank sends to and receives from */
    int *dsts = malloc(sizeof(int) * (size_t)g_size), *srcs = malloc(sizeof(int) * (size_t)g_size);
    int ndst = 0, nsrc = 0;
    if (!strcmp(o.mode, "all")) {
        for (int k = 1; k < g_size; k++) {
            dsts[ndst++] = (g_rank + k) % g_size;
            srcs[nsrc++] = (g_rank - k + g_size) % g_size;
        }
    } else if ((g_rank ^ 1) < g_size) {
        int partner = g_rank ^ 1;
        if (!strcmp(o.mode, "bidir") || g_rank % 2 == 0)
            dsts[ndst++] = partner;
        if (!strcmp(o.mode, "bidir") || g_rank % 2 == 1)
            srcs[nsrc++] = partner;
    }
    size_t maxsz = 0;
    for (int i = 0; i < o.nsizes; i++)
        if (o.sizes[i] > maxsz)
            maxsz = o.sizes[i];

    int nslot = (ndst + nsrc) * o.window;
    ft_slot_t *slot = calloc((size_t)nslot + 1, sizeof(*slot));
    MPI_Request *req = malloc(sizeof(MPI_Request) * ((size_t)nslot + 1));
    int *idx = malloc(sizeof(int) * ((size_t)nslot + 1));
    MPI_Status *sts = malloc(sizeof(MPI_Status) * ((size_t)nslot + 1));
    int *inflight_tx = calloc((size_t)ndst + 1, sizeof(int));
    int *inflight_rx = calloc((size_t)nsrc + 1, sizeof(int));
    uint64_t *seq_tx = calloc((size_t)(ndst + 1) * NTAGS, sizeof(uint64_t));
    uint64_t *posted_rx = calloc((size_t)nsrc + 1, sizeof(uint64_t));
    for (int i = 0; i < nslot; i++) {
        slot[i].buf = malloc(maxsz);
        req[i] = MPI_REQUEST_NULL;
    }
    char *bsend = malloc(maxsz), *brecv = malloc(maxsz);
    ft_rx_t rx = {0};
    rx.next = calloc((size_t)(nsrc + 1) * NTAGS, sizeof(uint64_t));
    rx.seen = calloc((size_t)(nsrc + 1) * NTAGS, sizeof(uint8_t *));
    rx.seen_cap = calloc((size_t)(nsrc + 1) * NTAGS, sizeof(uint64_t));
    rx.distinct = calloc((size_t)(nsrc + 1) * NTAGS, sizeof(uint64_t));
    rx.nbins = 256;
    rx.bins = calloc(rx.nbins, sizeof(double));
    uint64_t sent_bytes = 0, coll_bad = 0;
    int first_rx = g_size; /* the lowest rank that receives prints the progress lines */
    int my_rx = nsrc > 0 ? g_rank : g_size;
    MPI_Allreduce(&my_rx, &first_rx, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_wall();
    MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); /* one time origin (same host clock) */
    rx.t0 = t0;
    rx.fault_t = o.fault_at > 0 ? t0 + o.fault_at : -1;
    rx.last_done = now_wall();
    if (g_rank == 0) {
        printf("FT_START epoch=%.6f np=%d mode=%s\n", t0, g_size, o.mode);
        fflush(stdout);
    }
    double next_prog = t0 + o.progress_ms / 1000.0;
    int stop = 0;
    uint64_t epoch = 0;

    while (!stop) {
        uint64_t end = (epoch + 1) * (uint64_t)o.every;
        /* nonblocking window: post while a peer has room, until the epoch is posted */
        for (;;) {
            int more = 0;
            for (int p = 0; p < ndst; p++) {
                uint64_t *s = &seq_tx[p * NTAGS + TAG_NB];
                while (*s < end && inflight_tx[p] < o.window) {
                    int k = 0;
                    while (req[k] != MPI_REQUEST_NULL)
                        k++;
                    size_t sz = size_of(&o, g_rank, dsts[p], TAG_NB, *s);
                    fill(slot[k].buf, sz, g_rank, dsts[p], TAG_NB, *s);
                    slot[k].peer = p;
                    slot[k].is_send = 1;
                    MPI_Isend(slot[k].buf, (int)(sz / g_unit_bytes), g_unit, dsts[p], TAG_NB,
                              MPI_COMM_WORLD, &req[k]);
                    inflight_tx[p]++;
                    sent_bytes += sz;
                    (*s)++;
                }
                more |= *s < end;
            }
            for (int p = 0; p < nsrc; p++) {
                while (posted_rx[p] < end && inflight_rx[p] < o.window) {
                    int k = 0;
                    while (req[k] != MPI_REQUEST_NULL)
                        k++;
                    slot[k].peer = p;
                    slot[k].is_send = 0;
                    slot[k].post = rx.next[p * NTAGS + TAG_NB]++;
                    MPI_Irecv(slot[k].buf, (int)(maxsz / g_unit_bytes), g_unit, srcs[p], TAG_NB,
                              MPI_COMM_WORLD, &req[k]);
                    inflight_rx[p]++;
                    posted_rx[p]++;
                }
                more |= posted_rx[p] < end;
            }
            if (!more)
                break;
            TEST_WINDOW();
            double t = now_wall();
            if (o.progress_ms > 0 && g_rank == first_rx && t >= next_prog) {
                printf("PROG t=%.2f bytes=%" PRIu64 "\n", t - t0, rx.bytes);
                fflush(stdout);
                while (next_prog <= t)
                    next_prog += o.progress_ms / 1000.0;
            }
        }

        /* one blocking exchange per epoch (pairs: a plain send / receive) */
        {
            int dst = MPI_PROC_NULL, src = MPI_PROC_NULL, pd = -1, ps = -1;
            if (ndst) {
                pd = (int)(epoch % (uint64_t)ndst);
                dst = dsts[pd];
            }
            if (nsrc) {
                /* in "all" mode srcs[k] sends to us when we send to dsts[k] */
                ps = (int)(epoch % (uint64_t)nsrc);
                src = srcs[ps];
            }
            size_t sz = 0;
            if (dst != MPI_PROC_NULL) {
                uint64_t *s = &seq_tx[pd * NTAGS + TAG_BLK];
                sz = size_of(&o, g_rank, dst, TAG_BLK, *s);
                fill(bsend, sz, g_rank, dst, TAG_BLK, *s);
                (*s)++;
                sent_bytes += sz;
            }
            MPI_Status st;
            if (o.watched) {
                /* the same exchange, the window tested while it is under way */
                MPI_Request x[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
                MPI_Status xs[2];
                if (src != MPI_PROC_NULL)
                    MPI_Irecv(brecv, (int)(maxsz / g_unit_bytes), g_unit, src, TAG_BLK,
                              MPI_COMM_WORLD, &x[0]);
                if (dst != MPI_PROC_NULL)
                    MPI_Isend(bsend, (int)(sz / g_unit_bytes), g_unit, dst, TAG_BLK, MPI_COMM_WORLD,
                              &x[1]);
                for (int done = 0; !done;) {
                    TEST_WINDOW();
                    MPI_Testall(2, x, &done, xs);
                }
                st = xs[0];
            } else if (dst != MPI_PROC_NULL && src != MPI_PROC_NULL)
                MPI_Sendrecv(bsend, (int)(sz / g_unit_bytes), g_unit, dst, TAG_BLK, brecv,
                             (int)(maxsz / g_unit_bytes), g_unit, src, TAG_BLK, MPI_COMM_WORLD,
                             &st);
            else if (dst != MPI_PROC_NULL)
                MPI_Send(bsend, (int)(sz / g_unit_bytes), g_unit, dst, TAG_BLK, MPI_COMM_WORLD);
            else if (src != MPI_PROC_NULL)
                MPI_Recv(brecv, (int)(maxsz / g_unit_bytes), g_unit, src, TAG_BLK, MPI_COMM_WORLD,
                         &st);
            if (src != MPI_PROC_NULL)
                rx_check(&rx, &o, brecv, &st, src, TAG_BLK, ps, rx.next[ps * NTAGS + TAG_BLK]++);
        }

        /* collective: a checked sum, the bytes sent so far, and the stop vote */
        epoch++;
        long long v[3] = {(long long)(epoch * (uint64_t)(g_rank + 1)), (long long)sent_bytes, 0};
        double el = now_wall() - t0;
        if (g_rank == 0 && o.seconds > 0 && el >= o.seconds)
            v[2] = 1;
        long long r[3];
        MPI_Allreduce(v, r, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (r[0] != (long long)(epoch * (uint64_t)g_size * (uint64_t)(g_size + 1) / 2))
            coll_bad++;
        stop = r[2] > 0 || (o.bytes > 0 && (uint64_t)r[1] >= o.bytes);
    }

    /* drain what is still in flight */
    for (;;) {
        int n = 0;
        MPI_Testsome(nslot, req, &n, idx, sts);
        if (n == MPI_UNDEFINED)
            break;
        for (int i = 0; i < n; i++) {
            ft_slot_t *sl = &slot[idx[i]];
            if (!sl->is_send)
                rx_check(&rx, &o, sl->buf, &sts[i], srcs[sl->peer], TAG_NB, sl->peer, sl->post);
        }
    }
    double t_end = now_wall();

    /* how many messages each sender sent on each tag; what is missing was lost */
    uint64_t *cnt_out = calloc((size_t)g_size * NTAGS, sizeof(uint64_t));
    uint64_t *cnt_in = calloc((size_t)g_size * NTAGS, sizeof(uint64_t));
    for (int p = 0; p < ndst; p++)
        for (int t = 0; t < NTAGS; t++)
            cnt_out[dsts[p] * NTAGS + t] = seq_tx[p * NTAGS + t];
    MPI_Alltoall(cnt_out, NTAGS, MPI_UINT64_T, cnt_in, NTAGS, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int p = 0; p < nsrc; p++)
        for (int t = 0; t < NTAGS; t++) {
            uint64_t want = cnt_in[srcs[p] * NTAGS + t], got = rx.distinct[p * NTAGS + t];
            if (want > got) {
                fprintf(stderr,
                        "ft_stream: rank %d: from %d tag %d: %" PRIu64 " sent, %" PRIu64
                        " received\n",
                        g_rank, srcs[p], t, want, got);
                rx.lost += want - got;
            }
        }
    /* anything still arriving after everyone finished is a duplicate */
    MPI_Barrier(MPI_COMM_WORLD);
    for (;;) {
        int flag;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag)
            break;
        MPI_Recv(brecv, (int)maxsz, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        fprintf(stderr, "ft_stream: rank %d: extra message from %d tag %d\n", g_rank, st.MPI_SOURCE,
                st.MPI_TAG);
        rx.dup++;
    }

    /* totals and the timeline, summed over receivers */
    uint64_t loc[7] = {rx.lost, rx.dup, rx.corrupt, rx.bytes, rx.msgs, coll_bad, rx.order}, tot[7];
    MPI_Allreduce(loc, tot, 7, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    double dmax[3] = {rx.max_stall, t_end - t0, rx.fault_stall}, gmax[3];
    if (nsrc > 0 && t_end - rx.last_done > dmax[0])
        dmax[0] = t_end - rx.last_done;
    if (nsrc > 0 && rx.fault_t > 0 && t_end - rx.last_done > dmax[2]) {
        dmax[2] = t_end - rx.last_done;
        rx.fault_stall_end = t_end - t0;
    }
    MPI_Allreduce(dmax, gmax, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* when the longest gap after the fault ended, from the rank that saw it */
    double at = dmax[2] == gmax[2] ? rx.fault_stall_end : -1, gat;
    MPI_Allreduce(&at, &gat, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int nb = (int)(gmax[1] / BIN_S) + 1;
    double *bins = calloc((size_t)nb, sizeof(double)), *all = calloc((size_t)nb, sizeof(double));
    for (int i = 0; i < nb && (size_t)i < rx.nbins; i++)
        bins[i] = rx.bins[i];
    MPI_Reduce(bins, all, nb, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int ok = tot[0] == 0 && tot[1] == 0 && tot[2] == 0 && tot[5] == 0 && tot[6] == 0 && tot[4] > 0;

    if (g_rank == 0) {
        double secs = gmax[1];
        double before = -1, during = -1, after = -1;
        if (o.fault_at > 0) {
            double a = o.fault_end > 0 ? o.fault_end : o.fault_at + 1;
            before = rate_between(all, nb, 0, o.fault_at);
            during = rate_between(all, nb, o.fault_at, o.fault_end > 0 ? o.fault_end : secs);
            after = rate_between(all, nb, a, secs);
        }
        printf("TIMELINE %d", (int)(BIN_S * 1000));
        for (int i = 0; i < nb; i++)
            printf(" %.2f", all[i] / 1e6);
        printf("\n");
        printf("{\"ok\":%s,\"lost\":%" PRIu64 ",\"dup\":%" PRIu64 ",\"corrupt\":%" PRIu64
               ",\"order\":%" PRIu64 ",\"coll_bad\":%" PRIu64 ",\"msgs\":%" PRIu64
               ",\"bytes\":%" PRIu64 ",\"seconds\":%.3f,\"max_stall_s\":%.3f,\"rate_MBs\":%.2f",
               ok ? "true" : "false", tot[0], tot[1], tot[2], tot[6], tot[5], tot[4], tot[3], secs,
               gmax[0], secs > 0 ? (double)tot[3] / secs / 1e6 : 0.0);
        if (o.fault_at > 0)
            printf(",\"rate_before_MBs\":%.2f,\"rate_during_MBs\":%.2f,\"rate_after_MBs\":%.2f"
                   ",\"stall_after_fault_s\":%.3f,\"stall_after_fault_end_s\":%.3f",
                   before, during, after, gmax[2], gat);
        printf("}\n");
        if (ok)
            printf("PASS ft_stream np=%d: %" PRIu64 " messages, %.1f MB in %.1f s\n", g_size,
                   tot[4], (double)tot[3] / 1e6, secs);
        fflush(stdout);
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
