/* MPI_Comm_idup of an inter-communicator runs in the background: the even
 * ranks start it and then send to the odd group, whose leader receives
 * before it starts its own idup (with an idup that completed at the call,
 * as a blocking duplication, the even group would wait in it for the odd
 * group, which waits for the message: a deadlock). Two idups of the same
 * inter-communicator are outstanding at once, together with an idup of
 * MPI_COMM_WORLD started in a different order in the two groups. The
 * duplicates are congruent, carry their own traffic apart from the
 * original's, and their collectives work. */
#include "px_test.h"

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "comm_idup_inter");
    int me = px_test_rank, n = px_test_size;
    if (n < 2)
        return px_test_finish("nothing to do on one rank");
    int color = me % 2;
    MPI_Comm half, inter, dup[2], wdup;
    MPI_Request req[3];
    PX_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, me, &half));
    /* leaders: world rank 0 (even) and 1 (odd) */
    PX_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter));
    int lrank, lsize, rsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);

    int token = -1;
    if (color == 0) {
        PX_MPI(MPI_Comm_idup(inter, &dup[0], &req[0]));
        PX_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &wdup, &req[2]));
        PX_MPI(MPI_Comm_idup(inter, &dup[1], &req[1]));
        if (lrank == 0) {
            token = 4242;
            PX_MPI(MPI_Send(&token, 1, MPI_INT, 0, 5, inter));
        }
    } else {
        if (lrank == 0) {
            PX_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE));
            PX_CHECK(token == 4242, "token %d", token);
        }
        PX_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &wdup, &req[2]));
        PX_MPI(MPI_Comm_idup(inter, &dup[0], &req[0]));
        PX_MPI(MPI_Comm_idup(inter, &dup[1], &req[1]));
    }
    PX_MPI(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));

    for (int k = 0; k < 2; k++) {
        int result, l, r, flag;
        PX_MPI(MPI_Comm_compare(inter, dup[k], &result));
        PX_CHECK(result == MPI_CONGRUENT, "dup %d compares %d", k, result);
        PX_MPI(MPI_Comm_test_inter(dup[k], &flag));
        MPI_Comm_size(dup[k], &l);
        MPI_Comm_remote_size(dup[k], &r);
        PX_CHECK(flag && l == lsize && r == rsize, "dup %d: inter %d sizes %d/%d", k, flag, l, r);
    }
    int wres;
    PX_MPI(MPI_Comm_compare(MPI_COMM_WORLD, wdup, &wres));
    PX_CHECK(wres == MPI_CONGRUENT, "world dup compares %d", wres);

    /* the same tag on the original and both duplicates: each receive gets
     * its own communicator's message, whatever the order of the sends */
    int peer = lrank % rsize;
    int out[3], in[3] = {-1, -1, -1};
    MPI_Comm cs[3] = {inter, dup[0], dup[1]};
    MPI_Request rr[3], sr[3];
    for (int k = 0; k < 3; k++)
        PX_MPI(MPI_Irecv(&in[k], 1, MPI_INT, MPI_ANY_SOURCE, 3, cs[k], &rr[k]));
    /* every rank of the other group that maps to me sends; count them */
    int senders = 0;
    for (int j = 0; j < rsize; j++)
        senders += j % lsize == lrank;
    for (int k = 2; k >= 0; k--) {
        out[k] = 100 * k + color;
        PX_MPI(MPI_Isend(&out[k], 1, MPI_INT, peer, 3, cs[k], &sr[k]));
    }
    PX_MPI(MPI_Waitall(3, sr, MPI_STATUSES_IGNORE));
    if (senders) {
        PX_MPI(MPI_Waitall(3, rr, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 3; k++)
            PX_CHECK(in[k] == 100 * k + (1 - color), "communicator %d got %d", k, in[k]);
        /* the others that map to me */
        for (int s = 1; s < senders; s++)
            for (int k = 0; k < 3; k++) {
                int v = -1;
                PX_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, cs[k], MPI_STATUS_IGNORE));
                PX_CHECK(v == 100 * k + (1 - color), "communicator %d got %d", k, v);
            }
    } else {
        for (int k = 0; k < 3; k++) {
            PX_MPI(MPI_Cancel(&rr[k]));
            PX_MPI(MPI_Wait(&rr[k], MPI_STATUS_IGNORE));
        }
    }

    /* an inter-communicator allreduce on a duplicate: the other group's sum */
    int mine = me + 1, sum = 0, expect = 0;
    for (int w = 0; w < n; w++)
        if (w % 2 != color)
            expect += w + 1;
    PX_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, dup[1]));
    PX_CHECK(sum == expect, "allreduce over the duplicate: %d, expected %d", sum, expect);

    MPI_Comm_free(&dup[0]);
    MPI_Comm_free(&dup[1]);
    MPI_Comm_free(&wdup);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    return px_test_finish("idup of an inter-communicator in the background");
}
