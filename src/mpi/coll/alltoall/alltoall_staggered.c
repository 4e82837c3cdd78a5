/* Staggered alltoall, for ranks on two nodes: the ranks are ordered node by
 * node, and in phase p the rank at position p on the first node exchanges
 * with every later rank (all transfers at once) while each of those spends
 * the phase on that one exchange. The link between the nodes stays full,
 * but the first node's ranks finish one after the other instead of all
 * together at the end, so their mean time drops while the whole collective
 * takes about as long as pairwise exchange. The exchanges among the last
 * node's ranks are spread over the phases before the last.
 *
 * Every exchange has one phase, known alike at both ends, and each rank
 * goes through its phases in order: the lowest phase not yet complete can
 * always progress, so there is no deadlock whatever the placement. */
#include <stdlib.h>
#include "../coll_impl.h"

typedef struct {
    int node, rank;
} px_stag_t;

static int px_stag_cmp(const void *x, const void *y)
{
    const px_stag_t *a = x, *b = y;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

PX_COLL_BUILDER(px_coll_alltoall_staggered)
{
    px_coll_args_t b;
    MPI_Aint sblk, rblk;
    int rc = px_coll_alltoall_start(s, a, c, &b, &sblk, &rblk);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = c->size, r = c->rank;
    /* order[] sorts the ranks node by node; pos[] is each rank's place in
     * it, phase[] the phase of this rank's exchange with each, first[] (zeroed
     * by calloc) counts, then bounds, each phase's partners in by_phase[] */
    px_stag_t *order = malloc(sizeof(*order) * (size_t)n);
    int *pos = calloc((size_t)n * 4 + 1, sizeof(int));
    if (!order || !pos) {
        free(order);
        free(pos);
        return MPI_ERR_NO_MEM;
    }
    int *phase = pos + n, *first = phase + n, *by_phase = first + n + 1;
    for (int i = 0; i < n; i++)
        order[i] = (px_stag_t){px_mpi_comm_node_of(c, i), i};
    qsort(order, (size_t)n, sizeof(*order), px_stag_cmp);
    int last_first = n - 1; /* where the last node's ranks start */
    while (last_first > 0 && order[last_first - 1].node == order[n - 1].node)
        last_first--;
    for (int i = 0; i < n; i++)
        pos[order[i].rank] = i;
    int me = pos[r], last_node = order[n - 1].node, my_node = px_mpi_comm_node_of(c, r);
    /* the last node's own exchanges go in the phases before the last one,
     * which only moves data between the nodes */
    int spread = last_first > 1 ? last_first - 1 : 1;
    for (int y = 0; y < n; y++) {
        if (y == r)
            continue;
        int q = pos[y], lo = me < q ? me : q;
        int within_last = my_node == last_node && px_mpi_comm_node_of(c, y) == last_node;
        phase[y] =
            within_last && last_first > 0 ? ((me - last_first) + (q - last_first)) % spread : lo;
        first[phase[y] + 1]++;
    }
    for (int i = 0; i < n; i++)
        first[i + 1] += first[i];
    for (int y = 0; y < n; y++)
        if (y != r)
            by_phase[first[phase[y]]++] = y;
    /* first[p] now ends phase p's partners: phase p is by_phase[end(p-1)..end(p)) */
    for (int p = 0, k = 0; p < n; p++) {
        if (k == first[p])
            continue;
        int from = k;
        for (; k < first[p]; k++) {
            int y = by_phase[k];
            px_coll_sched_recv(s, c, (char *)b.rbuf + y * rblk, b.rcount, b.rtype, y);
        }
        for (int j = from; j < first[p]; j++) {
            int y = by_phase[j];
            px_coll_sched_send(s, c, (const char *)b.sbuf + y * sblk, b.scount, b.stype, y);
        }
        px_coll_sched_round(s);
    }
    px_coll_sched_round(s);
    free(order);
    free(pos);
    return MPI_SUCCESS;
}
