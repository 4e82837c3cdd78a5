/* Tree barrier: binomial fan-in to rank 0, then binomial fan-out. Twice the
 * rounds of dissemination but n-1 messages each way instead of n log2 n, and
 * rank 0 leaves first: among ranks sharing cores this is the cheaper one, and
 * the next operation rooted at rank 0 starts as early as it can. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_barrier_tree)
{
    (void)a;
    int n = c->size, r = c->rank, top = 1;
    /* children: r + m for every m below r's lowest set bit (all m for 0) */
    while (top < n && !(r & top))
        top <<= 1;
    for (int m = 1; m < top; m <<= 1)
        if (r + m < n)
            px_coll_sched_recv(s, c, NULL, 0, MPI_BYTE, r + m);
    px_coll_sched_round(s);
    if (r) {
        px_coll_sched_send(s, c, NULL, 0, MPI_BYTE, r - top);
        px_coll_sched_recv(s, c, NULL, 0, MPI_BYTE, r - top);
        px_coll_sched_round(s);
    }
    for (int m = top >> 1; m > 0; m >>= 1)
        if (r + m < n)
            px_coll_sched_send(s, c, NULL, 0, MPI_BYTE, r + m);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
