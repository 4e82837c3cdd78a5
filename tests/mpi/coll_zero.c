/* Collectives that move no data (count 0, or a datatype of size 0) complete
 * at once on each rank, blocking and nonblocking, without waiting for the
 * other ranks: every rank but 0 runs them all and then sends rank 0 a
 * token, which rank 0 waits for (10 s at most) before it runs them itself;
 * a call that waited for rank 0 would keep the token from coming. Their
 * argument checks still apply, and collectives with data right after them,
 * with rotating roots, still match up (results checked). The v-variants
 * with all counts 0 are not among them (a rank's zero counts say nothing of
 * the others') but must work. */
#include "px_test.h"

static int rank, size;
static int ncalls;

/* Every zero-byte collective, blocking then nonblocking, on comm with
 * datatype dt and count n (n * size(dt) == 0). */
static void zero_calls(MPI_Comm comm, MPI_Datatype dt, int n, int root)
{
    int *rcounts = calloc((size_t)size, sizeof(int)), *displs = calloc((size_t)size, sizeof(int));
    char sbuf[16] = {0}, rbuf[16] = {0};
    PX_REQUIRE(rcounts && displs, "out of memory");
    for (int nb = 0; nb < 2; nb++) {
        MPI_Request r[12];
        int k = 0;
        if (!nb) {
            PX_MPI(MPI_Bcast(sbuf, n, dt, root, comm));
            PX_MPI(MPI_Reduce(sbuf, rbuf, n, dt, MPI_SUM, root, comm));
            PX_MPI(MPI_Allreduce(sbuf, rbuf, n, dt, MPI_SUM, comm));
            PX_MPI(MPI_Scan(sbuf, rbuf, n, dt, MPI_SUM, comm));
            PX_MPI(MPI_Exscan(sbuf, rbuf, n, dt, MPI_SUM, comm));
            PX_MPI(MPI_Gather(sbuf, n, dt, rbuf, n, dt, root, comm));
            PX_MPI(MPI_Scatter(sbuf, n, dt, rbuf, n, dt, root, comm));
            PX_MPI(MPI_Allgather(sbuf, n, dt, rbuf, n, dt, comm));
            PX_MPI(MPI_Allgatherv(sbuf, n, dt, rbuf, rcounts, displs, dt, comm));
            PX_MPI(MPI_Alltoall(sbuf, n, dt, rbuf, n, dt, comm));
            PX_MPI(MPI_Reduce_scatter(sbuf, rbuf, rcounts, dt, MPI_SUM, comm));
            PX_MPI(MPI_Reduce_scatter_block(sbuf, rbuf, n, dt, MPI_SUM, comm));
            ncalls += 12;
            continue;
        }
        PX_MPI(MPI_Ibcast(sbuf, n, dt, root, comm, &r[k++]));
        PX_MPI(MPI_Ireduce(sbuf, rbuf, n, dt, MPI_SUM, root, comm, &r[k++]));
        PX_MPI(MPI_Iallreduce(sbuf, rbuf, n, dt, MPI_SUM, comm, &r[k++]));
        PX_MPI(MPI_Iscan(sbuf, rbuf, n, dt, MPI_SUM, comm, &r[k++]));
        PX_MPI(MPI_Iexscan(sbuf, rbuf, n, dt, MPI_SUM, comm, &r[k++]));
        PX_MPI(MPI_Igather(sbuf, n, dt, rbuf, n, dt, root, comm, &r[k++]));
        PX_MPI(MPI_Iscatter(sbuf, n, dt, rbuf, n, dt, root, comm, &r[k++]));
        PX_MPI(MPI_Iallgather(sbuf, n, dt, rbuf, n, dt, comm, &r[k++]));
        PX_MPI(MPI_Iallgatherv(sbuf, n, dt, rbuf, rcounts, displs, dt, comm, &r[k++]));
        PX_MPI(MPI_Ialltoall(sbuf, n, dt, rbuf, n, dt, comm, &r[k++]));
        PX_MPI(MPI_Ireduce_scatter(sbuf, rbuf, rcounts, dt, MPI_SUM, comm, &r[k++]));
        PX_MPI(MPI_Ireduce_scatter_block(sbuf, rbuf, n, dt, MPI_SUM, comm, &r[k++]));
        /* each is complete already: one MPI_Testall finds them all done */
        int flag = 0;
        PX_MPI(MPI_Testall(k, r, &flag, MPI_STATUSES_IGNORE));
        PX_CHECK(flag, "zero-byte nonblocking collectives not complete at their start");
        if (!flag)
            PX_MPI(MPI_Waitall(k, r, MPI_STATUSES_IGNORE));
        ncalls += k;
    }
    free(rcounts);
    free(displs);
}

/* Collectives with data after the empty ones: an allreduce, a bcast and an
 * alltoall from a rotating root, checked. */
static void data_round(MPI_Comm comm, int salt)
{
    int root = salt % size, v = rank * 7 + salt, sum = 0, b = rank == root ? salt * 3 + 1 : -1;
    PX_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm));
    PX_CHECK(sum == 7 * size * (size - 1) / 2 + salt * size, "allreduce %d, want %d", sum,
             7 * size * (size - 1) / 2 + salt * size);
    PX_MPI(MPI_Bcast(&b, 1, MPI_INT, root, comm));
    PX_CHECK(b == salt * 3 + 1, "bcast from %d gave %d", root, b);
    int *s = malloc(sizeof(int) * (size_t)size), *r = malloc(sizeof(int) * (size_t)size);
    PX_REQUIRE(s && r, "out of memory");
    for (int i = 0; i < size; i++)
        s[i] = rank * 1000 + i + salt;
    PX_MPI(MPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, comm));
    for (int i = 0; i < size; i++)
        PX_CHECK(r[i] == i * 1000 + rank + salt, "alltoall from %d: %d", i, r[i]);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "coll_zero");
    rank = px_test_rank;
    size = px_test_size;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Datatype empty; /* a datatype of size 0 */
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);

    /* 1. no waiting for rank 0 */
    if (rank != 0) {
        zero_calls(comm, MPI_INT, 0, 0);
        zero_calls(comm, empty, 5, size - 1);
        int token = rank;
        PX_MPI(MPI_Send(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD));
    } else {
        int *tokens = malloc(sizeof(int) * (size_t)size);
        MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)size);
        PX_REQUIRE(tokens && r, "out of memory");
        for (int i = 1; i < size; i++)
            PX_MPI(MPI_Irecv(&tokens[i], 1, MPI_INT, i, 99, MPI_COMM_WORLD, &r[i]));
        int flag = size == 1;
        double until = MPI_Wtime() + 10;
        while (!flag && MPI_Wtime() < until)
            PX_MPI(MPI_Testall(size - 1, r + 1, &flag, MPI_STATUSES_IGNORE));
        PX_REQUIRE(flag, "the other ranks' zero-byte collectives waited for rank 0");
        for (int i = 1; i < size; i++)
            PX_CHECK(tokens[i] == i, "token %d from %d", tokens[i], i);
        free(tokens);
        free(r);
        zero_calls(comm, MPI_INT, 0, 0);
        zero_calls(comm, empty, 5, size - 1);
    }

    /* 2. collectives with data match up after them, and between them */
    for (int salt = 0; salt < 6; salt++) {
        data_round(comm, salt);
        zero_calls(comm, salt % 2 ? empty : MPI_INT, salt % 2 ? 3 : 0, salt % size);
    }
    data_round(comm, 7);

    /* 3. the v-variants with every count 0 still work */
    int *zc = calloc((size_t)size, sizeof(int)), x = 0;
    PX_REQUIRE(zc, "out of memory");
    PX_MPI(MPI_Gatherv(&x, 0, MPI_INT, &x, zc, zc, MPI_INT, 0, comm));
    PX_MPI(MPI_Scatterv(&x, zc, zc, MPI_INT, &x, 0, MPI_INT, size - 1, comm));
    PX_MPI(MPI_Alltoallv(&x, zc, zc, MPI_INT, &x, zc, zc, MPI_INT, comm));
    free(zc);
    data_round(comm, 11);

    /* 4. the argument checks still apply to calls without data */
    int buf = 0;
    PX_EXPECT_CLASS(MPI_Bcast(&buf, 0, MPI_INT, size, comm), MPI_ERR_ROOT);
    PX_EXPECT_CLASS(MPI_Allreduce(&buf, &buf, 0, MPI_DATATYPE_NULL, MPI_SUM, comm), MPI_ERR_TYPE);
    PX_EXPECT_CLASS(MPI_Reduce(&buf, &buf, 0, MPI_INT, MPI_OP_NULL, 0, comm), MPI_ERR_OP);
    PX_EXPECT_CLASS(MPI_Allgather(&buf, -1, MPI_INT, &buf, 0, MPI_INT, comm), MPI_ERR_COUNT);
    MPI_Request req;
    PX_EXPECT_CLASS(MPI_Iallreduce(&buf, &buf, 0, MPI_INT, MPI_OP_NULL, comm, &req), MPI_ERR_OP);
    data_round(comm, 13);

    MPI_Type_free(&empty);
    MPI_Comm_free(&comm);
    return px_test_finish("%d collectives without data, none waited", ncalls);
}
