/* Invalid collective arguments under MPI_ERRORS_RETURN: every rank makes
 * the same bad call, gets the right error class back (no hang, no crash),
 * and the communicator still works afterwards. Classes follow the
 * standard: bad root -> MPI_ERR_ROOT, negative count -> MPI_ERR_COUNT,
 * null or uncommitted datatype -> MPI_ERR_TYPE, null operation or one not
 * defined for the type -> MPI_ERR_OP, MPI_IN_PLACE where not allowed, and
 * send and receive buffers that alias -> MPI_ERR_BUFFER. */
#include "px_test.h"

static int rank, size;

static void expect(int rc, int cls, const char *what)
{
    int got = -1;
    if (rc == MPI_SUCCESS) {
        PX_CHECK(0, "%s: succeeded, expected error class %d", what, cls);
        return;
    }
    MPI_Error_class(rc, &got);
    PX_CHECK(got == cls, "%s: error class %d, expected %d", what, got, cls);
}

int main(int argc, char **argv)
{
    int a[64] = {0}, b[64 * 64] = {0}, cnt[64], dsp[64];
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Datatype unc;
    px_test_init(&argc, &argv, "coll_badinput");
    rank = px_test_rank;
    size = px_test_size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Type_contiguous(2, MPI_INT, &unc); /* never committed */
    for (int i = 0; i < size; i++) {
        cnt[i] = 1;
        dsp[i] = i;
    }

    expect(MPI_Bcast(a, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT, "Bcast root=size");
    expect(MPI_Bcast(a, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT, "Bcast root=-1");
    expect(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, size + 3, MPI_COMM_WORLD), MPI_ERR_ROOT,
           "Reduce bad root");
    expect(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, -2, MPI_COMM_WORLD), MPI_ERR_ROOT,
           "Gather bad root");
    expect(MPI_Scatterv(b, cnt, dsp, MPI_INT, a, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT,
           "Scatterv bad root");
    expect(MPI_Ibcast(a, 1, MPI_INT, size, MPI_COMM_WORLD, &req), MPI_ERR_ROOT, "Ibcast bad root");

    expect(MPI_Bcast(a, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "Bcast count -1");
    expect(MPI_Allreduce(a, b, -5, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT,
           "Allreduce count -5");
    expect(MPI_Allgather(a, -1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
           "Allgather send count -1");
    expect(MPI_Alltoall(a, 1, MPI_INT, b, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
           "Alltoall recv count -1");
    expect(MPI_Reduce_scatter_block(b, a, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT,
           "Reduce_scatter_block count -1");
    cnt[size - 1] = -1;
    expect(MPI_Allgatherv(a, 1, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
           "Allgatherv negative count");
    cnt[size - 1] = 1;

    expect(MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE,
           "Bcast MPI_DATATYPE_NULL");
    expect(MPI_Bcast(a, 1, unc, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "Bcast uncommitted type");
    expect(MPI_Allgather(a, 1, unc, b, 2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TYPE,
           "Allgather uncommitted send type");
    {
        /* the type and the (type-dependent) operation are both wrong here;
         * either class is a correct report */
        int rc = MPI_Iallreduce(a, b, 1, unc, MPI_SUM, MPI_COMM_WORLD, &req), cls = -1;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        PX_CHECK(cls == MPI_ERR_TYPE || cls == MPI_ERR_OP, "Iallreduce uncommitted type: class %d",
                 cls);
    }

    expect(MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP,
           "Allreduce MPI_OP_NULL");
    expect(MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP,
           "Allreduce BAND on double");
    expect(MPI_Reduce(a, b, 1, MPI_FLOAT, MPI_LXOR, 0, MPI_COMM_WORLD), MPI_ERR_OP,
           "Reduce LXOR on float");
    expect(MPI_Scan(a, b, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP,
           "Scan MAXLOC on int");
    expect(MPI_Iallreduce(a, b, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &req), MPI_ERR_OP,
           "Iallreduce MPI_OP_NULL");

    expect(MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER,
           "Allreduce IN_PLACE as receive buffer");
    expect(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
           "Bcast IN_PLACE");
    if (size > 1) {
        /* all ranks agree on a root that makes IN_PLACE invalid for most of them;
         * the root itself gets a different bad argument (count) */
        int r = rank == 0 ? MPI_Reduce(a, b, -1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD)
                          : MPI_Reduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        expect(r, rank == 0 ? MPI_ERR_COUNT : MPI_ERR_BUFFER, "Reduce IN_PLACE at a non-root");
    }
    /* send and receive buffers that alias, where MPI_IN_PLACE is meant:
     * every rank that gives them finds out at once (rooted ones on
     * MPI_COMM_SELF, where the caller is the root) */
    for (int i = 0; i < size; i++)
        cnt[i] = 1, dsp[i] = i;
    expect(MPI_Allreduce(b, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER,
           "Allreduce aliased");
    expect(MPI_Allgather(&b[rank], 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER,
           "Allgather from its own block");
    expect(MPI_Allgatherv(&b[rank], 1, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD),
           MPI_ERR_BUFFER, "Allgatherv from its own block");
    expect(MPI_Alltoall(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER,
           "Alltoall aliased");
    expect(MPI_Alltoallv(b, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD),
           MPI_ERR_BUFFER, "Alltoallv aliased");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    expect(MPI_Gather(b, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_BUFFER,
           "Gather aliased at the root");
    expect(MPI_Scatter(b, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_BUFFER,
           "Scatter aliased at the root");
    expect(MPI_Gatherv(b, 1, MPI_INT, b, cnt, dsp, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_BUFFER,
           "Gatherv aliased at the root");
    /* MPI_BOTTOM on both sides of a collective whose send and receive have
     * datatypes of their own is no aliasing: the datatypes hold the
     * addresses (absolute displacements) */
    {
        int out[64], in[64], one = 1, wc[64], wd[64];
        MPI_Datatype so[64], ri[64], tout, tin;
        for (int i = 0; i < size; i++) {
            MPI_Aint a, b;
            out[i] = 100 * rank + i, in[i] = -1, wc[i] = 1, wd[i] = 0;
            MPI_Get_address(&out[i], &a);
            MPI_Get_address(&in[i], &b);
            PX_MPI(MPI_Type_create_hindexed(1, &one, &a, MPI_INT, &so[i]));
            PX_MPI(MPI_Type_create_hindexed(1, &one, &b, MPI_INT, &ri[i]));
            PX_MPI(MPI_Type_commit(&so[i]));
            PX_MPI(MPI_Type_commit(&ri[i]));
        }
        PX_MPI(MPI_Alltoallw(MPI_BOTTOM, wc, wd, so, MPI_BOTTOM, wc, wd, ri, MPI_COMM_WORLD));
        int bad = 0;
        for (int i = 0; i < size; i++)
            bad += in[i] != 100 * i + rank;
        PX_CHECK(!bad, "Alltoallw from and to MPI_BOTTOM: %d wrong", bad);
        tout = so[0], tin = ri[0]; /* out[0] and in[0] */
        out[0] = rank + 1;
        in[0] = -1;
        PX_MPI(MPI_Gather(MPI_BOTTOM, 1, tout, MPI_BOTTOM, 1, tin, 0, MPI_COMM_SELF));
        PX_CHECK(in[0] == rank + 1, "Gather from and to MPI_BOTTOM: %d", in[0]);
        in[0] = -1;
        PX_MPI(MPI_Allgather(MPI_BOTTOM, 1, tout, MPI_BOTTOM, 1, tin, MPI_COMM_SELF));
        PX_CHECK(in[0] == rank + 1, "Allgather from and to MPI_BOTTOM: %d", in[0]);
        for (int i = 0; i < size; i++) {
            MPI_Type_free(&so[i]);
            MPI_Type_free(&ri[i]);
        }
    }
    expect(MPI_Ibarrier(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "Ibarrier null request");
    expect(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "Barrier MPI_COMM_NULL");

    /* the communicator still works, and results are right */
    int one = rank + 1, sum = 0;
    PX_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    PX_CHECK(sum == size * (size + 1) / 2, "Allreduce after errors: %d", sum);
    PX_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    PX_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Type_free(&unc);
    return px_test_finish("bad roots, counts, types, ops and IN_PLACE give the right classes");
}
