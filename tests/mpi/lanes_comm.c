/* A communicator's lane (info key plexus_lane_class, docs/lanes.md), run
 * with PX_LANES=4 and policy class over a network transport: lane 0 small,
 * 1 collectives, 2 medium, 3 bulk. Each rank sends its right neighbour
 *   - 4 MB messages on MPI_COMM_WORLD: bulk data, on lane 3 (all but the
 *     head that travels with the rendezvous request);
 *   - the same on a duplicate whose hint is "small": on lane 0;
 *   - 64-byte messages on a duplicate whose hint is "bulk": on lane 3;
 *   - 4 MB messages on the "small" one after its hint is set to "auto":
 *     on lane 3 again;
 * and reads how many bytes each lane carried (MPI_T performance variables
 * rail_lane<i>_bytes_sent) around each phase: all of a phase's messages but
 * one on the lane it names, at most one on the other, after a
 * first round has brought every lane up (until then a frame whose lane is
 * not connected yet takes another). Every message is checked.
 * The hint also survives MPI_Comm_dup and is returned by MPI_Comm_get_info. */
#include "px_test.h"

#include <stdlib.h>

#define BIG (4u << 20)
#define NBIG 6
#define NSMALL 2000
#define SMALL 64

static MPI_T_pvar_session ses;
static MPI_T_pvar_handle lane[4];

static void lanes_read(unsigned long long v[4])
{
    for (int i = 0; i < 4; i++)
        MPI_T_pvar_read(ses, lane[i], &v[i]);
}

/* n messages of len bytes to the right, from the left, on comm. */
static void ring(MPI_Comm comm, int n, size_t len, unsigned char *sbuf, unsigned char *rbuf,
                 int phase)
{
    int right = (px_test_rank + 1) % px_test_size;
    int left = (px_test_rank + px_test_size - 1) % px_test_size;
    for (int i = 0; i < n; i++) {
        MPI_Request rq[2];
        px_fill(sbuf, len, (uint64_t)px_test_rank << 32 | (uint64_t)phase << 20 | (uint64_t)i);
        MPI_Irecv(rbuf, (int)len, MPI_BYTE, left, i, comm, &rq[0]);
        MPI_Isend(sbuf, (int)len, MPI_BYTE, right, i, comm, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        size_t bad =
            px_verify(rbuf, len, (uint64_t)left << 32 | (uint64_t)phase << 20 | (uint64_t)i);
        PX_CHECK(bad == len, "phase %d message %d: wrong byte at %zu", phase, i, bad);
    }
}

/* The lane counters once they stop moving: a frame's bytes may be counted
 * a little after its message completes, so they are read until two reads
 * 20 ms apart agree (progressing meanwhile), for at most 2 s. */
static void lanes_settled(unsigned long long v[4])
{
    unsigned long long w[4];
    double t0 = MPI_Wtime();
    lanes_read(v);
    for (;;) {
        double t = MPI_Wtime();
        while (MPI_Wtime() - t < 0.02) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
        lanes_read(w);
        if (!memcmp(v, w, sizeof(w)) || MPI_Wtime() - t0 > 2.0)
            return;
        memcpy(v, w, sizeof(w));
    }
}

/* The bytes each lane carried while ring(...) ran. */
static void phase(MPI_Comm comm, int n, size_t len, unsigned char *sbuf, unsigned char *rbuf,
                  int id, unsigned long long d[4])
{
    unsigned long long a[4], b[4];
    MPI_Barrier(MPI_COMM_WORLD);
    lanes_settled(a);
    MPI_Barrier(MPI_COMM_WORLD);
    ring(comm, n, len, sbuf, rbuf, id);
    MPI_Barrier(MPI_COMM_WORLD);
    lanes_settled(b);
    for (int i = 0; i < 4; i++)
        d[i] = b[i] - a[i];
}

static MPI_Comm with_hint(MPI_Comm comm, const char *cls)
{
    MPI_Info info;
    MPI_Comm nc;
    MPI_Info_create(&info);
    MPI_Info_set(info, "plexus_lane_class", cls);
    MPI_Comm_dup_with_info(comm, info, &nc);
    MPI_Info_free(&info);
    return nc;
}

int main(int argc, char **argv)
{
    int provided;
    px_test_init(&argc, &argv, "lanes_comm");
    if (px_test_size < 2)
        return px_test_skip("needs 2 ranks");
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&ses);
    for (int i = 0; i < 4; i++) {
        char name[64];
        int idx = -1, count = 0;
        snprintf(name, sizeof(name), "rail_lane%d_bytes_sent", i);
        PX_REQUIRE(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS,
                   "no performance variable %s", name);
        MPI_T_pvar_handle_alloc(ses, idx, NULL, &lane[i], &count);
        MPI_T_pvar_start(ses, lane[i]);
    }
    unsigned char *sbuf = malloc(BIG), *rbuf = malloc(BIG);
    PX_REQUIRE(sbuf && rbuf, "out of memory");
    MPI_Comm small = with_hint(MPI_COMM_WORLD, "small");
    MPI_Comm bulk = with_hint(MPI_COMM_WORLD, "bulk");
    MPI_Comm small2;
    MPI_Comm_dup(small, &small2); /* keeps the hint */

    MPI_Info got;
    char v[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_Comm_get_info(small2, &got);
    MPI_Info_get(got, "plexus_lane_class", MPI_MAX_INFO_VAL, v, &flag);
    MPI_Info_free(&got);
    PX_CHECK(flag && strcmp(v, "small") == 0, "the duplicate's hint: %s", flag ? v : "(none)");

    /* lanes connect at first use, and a frame whose lane is not up yet
     * takes another: every lane is used once before anything is counted */
    ring(MPI_COMM_WORLD, 1, BIG, sbuf, rbuf, 0);
    ring(small2, 1, BIG, sbuf, rbuf, 0);
    ring(bulk, 1, SMALL, sbuf, rbuf, 0);
    ring(MPI_COMM_WORLD, 1, SMALL, sbuf, rbuf, 0);

    /* all messages but one on the lane the phase names, at most one on the
     * other: now and then one 4 MB message's bytes show in another phase's
     * counts (at 3 ranks), which no misrouting could explain */
    const unsigned long long most = (NBIG - 1) * (unsigned long long)BIG / 10 * 9,
                             one = BIG + BIG / 8;
    unsigned long long d[4];
    phase(MPI_COMM_WORLD, NBIG, BIG, sbuf, rbuf, 1, d);
    PX_CHECK(d[3] >= most && d[0] <= one, "world, 4 MB: lane 0 %llu, lane 3 %llu bytes", d[0],
             d[3]);
    phase(small2, NBIG, BIG, sbuf, rbuf, 2, d);
    PX_CHECK(d[0] >= most && d[3] <= one, "hint small, 4 MB: lane 0 %llu, lane 3 %llu bytes", d[0],
             d[3]);
    phase(bulk, NSMALL, SMALL, sbuf, rbuf, 3, d);
    PX_CHECK(d[3] >= (unsigned long long)NSMALL * SMALL,
             "hint bulk, 64 B: lane 0 %llu, lane 3 %llu bytes", d[0], d[3]);
    MPI_Info auto_;
    MPI_Info_create(&auto_);
    MPI_Info_set(auto_, "plexus_lane_class", "auto");
    MPI_Comm_set_info(small2, auto_);
    MPI_Info_free(&auto_);
    phase(small2, NBIG, BIG, sbuf, rbuf, 4, d);
    PX_CHECK(d[3] >= most && d[0] <= one, "hint auto, 4 MB: lane 0 %llu, lane 3 %llu bytes", d[0],
             d[3]);

    MPI_Comm_free(&small);
    MPI_Comm_free(&small2);
    MPI_Comm_free(&bulk);
    for (int i = 0; i < 4; i++)
        MPI_T_pvar_handle_free(ses, &lane[i]);
    MPI_T_pvar_session_free(&ses);
    MPI_T_finalize();
    free(sbuf);
    free(rbuf);
    return px_test_finish("4 MB on lane 0 by hint, 64 B on lane 3 by hint, by size otherwise");
}
