/* MPI_Comm_idup is truly nonblocking:
 *   - overlapping duplications: each rank is in two pair communicators and
 *     starts the two idups in an order its partners do not share (with
 *     MPI_Comm_dup this deadlocks);
 *   - several idups in flight on one communicator with other nonblocking
 *     collectives between them, completed together;
 *   - on communicators of different members started in different orders
 *     on different ranks;
 *   - MPI_Comm_create_group after an idup still in flight;
 * and every duplicate works (an allreduce on each gives its own value, so
 * no two share a context). */
#include "px_test.h"

static void check_comm(MPI_Comm c, int salt, const char *what)
{
    int n, me, v, sum = -1;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    v = salt * 1000 + me;
    PX_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
    PX_CHECK(sum == salt * 1000 * n + n * (n - 1) / 2, "%s: allreduce %d", what, sum);
}

/* MPICH's pattern: rank i's "primary" is {i, i+1}, its "secondary" {i-1, i}. */
static void overlapping_pairs(void)
{
    int n = px_test_size, me = px_test_rank;
    MPI_Comm primary[2] = {MPI_COMM_NULL, MPI_COMM_NULL},
             secondary[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
    MPI_Request req[2];
    if (n < 2)
        return;
    for (int i = 0; i < n; i++) {
        MPI_Comm tmp;
        if (me == i)
            PX_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &primary[0]));
        else if (me == (i + 1) % n)
            PX_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, 1, &secondary[0]));
        else {
            PX_MPI(MPI_Comm_split(MPI_COMM_WORLD, 1, 0, &tmp));
            MPI_Comm_free(&tmp);
        }
    }
    /* every rank starts with its primary; its partner in it starts with
     * the other communicator */
    PX_MPI(MPI_Comm_idup(primary[0], &primary[1], &req[0]));
    PX_MPI(MPI_Comm_idup(secondary[0], &secondary[1], &req[1]));
    PX_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    /* blocking calls on the pairs go in the order of the pair's index (i
     * for {i, i+1}: rank i's primary, rank i+1's secondary), the same at
     * every member, so they wait for each other in no cycle */
    MPI_Comm *first = me == 0 ? primary : secondary, *second = me == 0 ? secondary : primary;
    check_comm(first[1], 1, "overlapping idup, first pair");
    check_comm(second[1], 1, "overlapping idup, second pair");
    for (int i = 0; i < 2; i++) {
        MPI_Comm_free(&first[i]);
        MPI_Comm_free(&second[i]);
    }
}

static void many_on_one(void)
{
    enum { K = 5 };
    MPI_Comm dup[K];
    MPI_Request req[2 * K];
    int in[K], out[K];
    for (int i = 0; i < K; i++) {
        in[i] = px_test_rank + i;
        PX_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &dup[i], &req[2 * i]));
        PX_MPI(
            MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[2 * i + 1]));
    }
    PX_MPI(MPI_Waitall(2 * K, req, MPI_STATUSES_IGNORE));
    int n = px_test_size;
    for (int i = 0; i < K; i++) {
        PX_CHECK(out[i] == n * (n - 1) / 2 + n * i, "iallreduce %d between idups: %d", i, out[i]);
        check_comm(dup[i], 10 + i, "idup among other collectives");
    }
    for (int i = K - 1; i >= 0; i--)
        MPI_Comm_free(&dup[i]);
}

/* Two communicators with different members; the ranks in both start the
 * two idups in an order that depends on their rank. */
static void different_orders(void)
{
    int n = px_test_size, me = px_test_rank;
    MPI_Comm half, dh = MPI_COMM_NULL, dw = MPI_COMM_NULL;
    MPI_Request req[2];
    PX_MPI(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    if (me % 2) {
        PX_MPI(MPI_Comm_idup(half, &dh, &req[0]));
        PX_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &dw, &req[1]));
    } else {
        PX_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &dw, &req[1]));
        PX_MPI(MPI_Comm_idup(half, &dh, &req[0]));
    }
    PX_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    check_comm(dh, 20 + me % 2, "idup of a half");
    check_comm(dw, 30, "idup of the world, in another order");
    (void)n;
    MPI_Comm_free(&dh);
    MPI_Comm_free(&dw);
    MPI_Comm_free(&half);
}

static void before_create_group(void)
{
    MPI_Comm dup, sub = MPI_COMM_NULL;
    MPI_Request req;
    MPI_Group world, evens;
    int n = px_test_size, me = px_test_rank, ne = (n + 1) / 2;
    int ranks[64];
    for (int i = 0; i < ne && i < 64; i++)
        ranks[i] = 2 * i;
    PX_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, ne, ranks, &evens);
    if (me % 2 == 0)
        PX_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 7, &sub));
    PX_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_comm(dup, 40, "idup before create_group");
    if (sub != MPI_COMM_NULL) {
        check_comm(sub, 41, "create_group after idup");
        MPI_Comm_free(&sub);
    }
    MPI_Group_free(&evens);
    MPI_Group_free(&world);
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "comm_idup_overlap");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int round = 0; round < 3; round++) {
        overlapping_pairs();
        many_on_one();
        different_orders();
        before_create_group();
    }
    return px_test_finish("overlapping, interleaved and reordered idups");
}
