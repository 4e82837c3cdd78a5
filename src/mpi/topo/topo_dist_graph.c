/* Distributed graph topologies: Dist_graph_create_adjacent, the general
 * Dist_graph_create (edges given anywhere, redistributed to both ends) and
 * the neighbour queries. */
#include "topo_impl.h"

#include <stdlib.h>

/* Weights given as MPI_WEIGHTS_EMPTY (or NULL) with a zero degree mean a
 * weighted graph without edges here. */
static int px_dg_is_unweighted(const int *w) { return w == MPI_UNWEIGHTED; }

static int px_dg_check_list(px_mpi_comm_t *c, int n, const int *ranks, const int *w,
                            const char *what, const char *fn)
{
    if (n < 0)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "negative %s degree %d", what, n);
    if (n > 0 && !ranks)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null %s list", what);
    if (n > 0 && w == MPI_WEIGHTS_EMPTY)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "MPI_WEIGHTS_EMPTY with %d %s edges", n, what);
    if (n > 0 && !w)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null %s weights", what);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= c->size)
            return px_mpi_error(c, MPI_ERR_RANK, fn, "%s[%d] = %d is outside 0..%d", what, i,
                                ranks[i], c->size - 1);
        if (!px_dg_is_unweighted(w) && w[i] < 0)
            return px_mpi_error(c, MPI_ERR_ARG, fn, "negative weight %d for %s[%d]", w[i], what, i);
    }
    return MPI_SUCCESS;
}

static px_mpi_topo_t *px_dg_topo(int indeg, const int *in, const int *in_w, int outdeg,
                                 const int *out, const int *out_w, int weighted)
{
    px_mpi_topo_t *t = px_mpi_topo_new(MPI_DIST_GRAPH);
    if (!t)
        return NULL;
    t->weighted = weighted;
    t->indeg = indeg;
    t->outdeg = outdeg;
    int ok = 1;
    if (indeg > 0) {
        t->in = malloc(sizeof(int) * (size_t)indeg);
        t->in_w = weighted ? malloc(sizeof(int) * (size_t)indeg) : NULL;
        ok = t->in && (!weighted || t->in_w);
        if (ok) {
            memcpy(t->in, in, sizeof(int) * (size_t)indeg);
            if (weighted)
                memcpy(t->in_w, in_w, sizeof(int) * (size_t)indeg);
        }
    }
    if (ok && outdeg > 0) {
        t->out = malloc(sizeof(int) * (size_t)outdeg);
        t->out_w = weighted ? malloc(sizeof(int) * (size_t)outdeg) : NULL;
        ok = t->out && (!weighted || t->out_w);
        if (ok) {
            memcpy(t->out, out, sizeof(int) * (size_t)outdeg);
            if (weighted)
                memcpy(t->out_w, out_w, sizeof(int) * (size_t)outdeg);
        }
    }
    if (!ok || px_mpi_topo_graph_tags(t) != MPI_SUCCESS) {
        px_mpi_topo_free(t);
        return NULL;
    }
    return t;
}

/* reorder=1: every process's lists go to all (the graph's vertices are
 * old's ranks), the graph of their out-edges is placed, and each process
 * takes the lists of the vertex it becomes, whose peers are vertices and
 * so new ranks already. *t_p is replaced when the order changes. */
static int px_dg_reorder(px_mpi_comm_t *c, px_mpi_topo_t **t_p, int **order_p)
{
    px_mpi_topo_t *t = *t_p;
    int n = c->size, me = c->rank, len = 2 + 2 * (t ? t->indeg + t->outdeg : 0), maxlen = 0;
    *order_p = NULL;
    if (!px_mpi_topo_may_reorder(c, n))
        return MPI_SUCCESS;
    int *lens = malloc(sizeof(int) * (size_t)n);
    int rc = px_mpi_coll_allgather_bytes(&len, lens ? lens : &maxlen, lens ? sizeof(int) : 0, c);
    if (!lens)
        return MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        free(lens);
        return rc;
    }
    for (int r = 0; r < n; r++)
        maxlen = lens[r] > maxlen ? lens[r] : maxlen;
    /* indeg outdeg in[] in_w[] out[] out_w[], each padded to maxlen */
    int *mine = calloc((size_t)maxlen, sizeof(int));
    int *all = malloc(sizeof(int) * (size_t)maxlen * (size_t)n);
    int *order = malloc(sizeof(int) * (size_t)n);
    long long ne = 0;
    if (mine && t) {
        int *p = mine;
        *p++ = t->indeg;
        *p++ = t->outdeg;
        for (int i = 0; i < t->indeg; i++) {
            p[i] = t->in[i];
            p[t->indeg + i] = t->weighted ? t->in_w[i] : 1;
        }
        p += 2 * t->indeg;
        for (int i = 0; i < t->outdeg; i++) {
            p[i] = t->out[i];
            p[t->outdeg + i] = t->weighted ? t->out_w[i] : 1;
        }
    }
    rc = px_mpi_coll_allgather_bytes(mine, all, all && mine ? sizeof(int) * (size_t)maxlen : 0, c);
    free(mine);
    free(lens);
    for (int r = 0; all && r < n; r++)
        ne += all[(size_t)r * maxlen + 1];
    int *src = malloc(sizeof(int) * (size_t)(ne + 1)),
        *dst = malloc(sizeof(int) * (size_t)(ne + 1));
    int *w = malloc(sizeof(int) * (size_t)(ne + 1)), k = 0, newrank = me;
    for (int r = 0; src && dst && w && all && r < n; r++) {
        const int *v = all + (size_t)r * maxlen;
        const int *out = v + 2 + 2 * v[0];
        for (int i = 0; i < v[1]; i++, k++) {
            src[k] = r;
            dst[k] = out[i];
            w[k] = out[v[1] + i];
        }
    }
    int ok = rc == MPI_SUCCESS && all && order && src && dst && w;
    /* everyone takes part, with no edges after a failure */
    int rc2 = px_mpi_topo_reorder(c, n, ok ? k : 0, src, dst, w, order, &newrank);
    free(src);
    free(dst);
    free(w);
    if (rc == MPI_SUCCESS && !ok)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = rc2;
    if (rc == MPI_SUCCESS && newrank != me && t) {
        const int *v = all + (size_t)newrank * maxlen, *in = v + 2, *out = in + 2 * v[0];
        px_mpi_topo_t *nt = px_dg_topo(v[0], in, in + v[0], v[1], out, out + v[1], t->weighted);
        if (nt) {
            px_mpi_topo_free(t);
            *t_p = nt;
        } else
            rc = MPI_ERR_NO_MEM;
    }
    free(all);
    if (rc != MPI_SUCCESS)
        free(order);
    else
        *order_p = order;
    return rc;
}

PX_PMPI(MPI_Dist_graph_create_adjacent)
(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[], int outdegree,
 const int destinations[], const int destweights[], MPI_Info info, int reorder,
 MPI_Comm *comm_dist_graph)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(comm_dist_graph);
    const char *fn = "MPI_Dist_graph_create_adjacent";
    (void)info;
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm_old, fn);
    if (!comm_dist_graph)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null comm_dist_graph");
    int rc = px_dg_check_list(c, indegree, sources, sourceweights, "sources", fn);
    if (rc == MPI_SUCCESS)
        rc = px_dg_check_list(c, outdegree, destinations, destweights, "destinations", fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (px_dg_is_unweighted(sourceweights) != px_dg_is_unweighted(destweights))
        return px_mpi_error(c, MPI_ERR_ARG, fn,
                            "MPI_UNWEIGHTED given for only one of the weight arrays");
    px_mpi_topo_t *t = px_dg_topo(indegree, sources, sourceweights, outdegree, destinations,
                                  destweights, !px_dg_is_unweighted(sourceweights));
    int *order = NULL;
    rc = reorder ? px_dg_reorder(c, &t, &order) : MPI_SUCCESS;
    if (!t || rc != MPI_SUCCESS) {
        uint32_t ctx;
        px_mpi_comm_alloc_ctx(c, &ctx); /* keep the others from waiting */
        px_mpi_topo_free(t);
        return px_mpi_error(c, t ? rc : MPI_ERR_NO_MEM, fn, "out of memory");
    }
    rc = px_mpi_topo_comm_create(c, c->size, order, t, comm_dist_graph, fn);
    free(order);
    return rc;
}
PX_WEAK(MPI_Dist_graph_create_adjacent)

/* One edge end as shipped to the process that owns it: the peer and the
 * weight, and whether it is an out-edge (1) or an in-edge (0) there. */
typedef struct {
    int out, peer, weight;
} px_dg_rec_t;

typedef struct {
    px_dg_rec_t *r;
    int n, cap;
} px_dg_vec_t;

static int px_dg_push(px_dg_vec_t *v, int out, int peer, int weight)
{
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 8;
        px_dg_rec_t *r = realloc(v->r, sizeof(*r) * (size_t)cap);
        if (!r)
            return MPI_ERR_NO_MEM;
        v->r = r;
        v->cap = cap;
    }
    v->r[v->n++] = (px_dg_rec_t){out, peer, weight};
    return MPI_SUCCESS;
}

/* Sends every process the edge ends it owns and receives its own, in the
 * order (giving process, position in its list): both ends of the edges
 * between one pair then come in the same order, which the neighbour
 * collectives rely on to pair repeated edges. */

/* Waits for n internal requests and frees them; returns rc, or the first
 * error among them when rc was a success. */
static int px_dg_waitall(px_mpi_req_t **reqs, int n, int rc)
{
    for (int i = 0; i < n; i++) {
        px_mpi_req_wait(reqs[i]);
        int e = px_mpi_req_complete(reqs[i], MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = e;
        px_mpi_req_free(reqs[i]);
    }
    return rc;
}

static int px_dg_exchange(px_mpi_comm_t *c, px_dg_vec_t *to, px_dg_vec_t *mine_in,
                          px_dg_vec_t *mine_out)
{
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    int *cnt_in = calloc((size_t)n, sizeof(int));
    px_dg_rec_t **data_in = calloc((size_t)n, sizeof(*data_in));
    px_mpi_req_t **reqs = calloc((size_t)(4 * n), sizeof(*reqs));
    int nreq = 0;
    if (!cnt_in || !data_in || !reqs) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    /* counts first */
    for (int p = 0; p < n && rc == MPI_SUCCESS; p++) {
        if (p == me)
            continue;
        rc = px_mpi_irecv_internal(&reqs[nreq], &cnt_in[p], 1, MPI_INT, p,
                                   PX_MPI_TOPO_TAG_DGRAPH_COUNT, c, c->ctx + 1);
        if (rc == MPI_SUCCESS)
            nreq++;
    }
    for (int p = 0; p < n && rc == MPI_SUCCESS; p++) {
        if (p == me)
            continue;
        rc = px_mpi_isend_internal(&reqs[nreq], &to[p].n, 1, MPI_INT, p,
                                   PX_MPI_TOPO_TAG_DGRAPH_COUNT, c, c->ctx + 1, PX_PROTO_MODE_STD);
        if (rc == MPI_SUCCESS)
            nreq++;
    }
    rc = px_dg_waitall(reqs, nreq, rc);
    nreq = 0;
    if (rc != MPI_SUCCESS)
        goto out;
    /* then the records, 3 ints each */
    for (int p = 0; p < n && rc == MPI_SUCCESS; p++) {
        if (p == me || cnt_in[p] == 0)
            continue;
        if (cnt_in[p] < 0 || cnt_in[p] > INT32_MAX / 3) {
            rc = MPI_ERR_INTERN;
            break;
        }
        data_in[p] = malloc(sizeof(px_dg_rec_t) * (size_t)cnt_in[p]);
        if (!data_in[p]) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        rc = px_mpi_irecv_internal(&reqs[nreq], data_in[p], 3 * cnt_in[p], MPI_INT, p,
                                   PX_MPI_TOPO_TAG_DGRAPH_DATA, c, c->ctx + 1);
        if (rc == MPI_SUCCESS)
            nreq++;
    }
    for (int p = 0; p < n && rc == MPI_SUCCESS; p++) {
        if (p == me || to[p].n == 0)
            continue;
        rc = px_mpi_isend_internal(&reqs[nreq], to[p].r, 3 * to[p].n, MPI_INT, p,
                                   PX_MPI_TOPO_TAG_DGRAPH_DATA, c, c->ctx + 1, PX_PROTO_MODE_STD);
        if (rc == MPI_SUCCESS)
            nreq++;
    }
    rc = px_dg_waitall(reqs, nreq, rc);
    nreq = 0;
    if (rc != MPI_SUCCESS)
        goto out;
    /* sort into my in and out lists, by giving process */
    for (int p = 0; p < n && rc == MPI_SUCCESS; p++) {
        const px_dg_rec_t *r = p == me ? to[me].r : data_in[p];
        int m = p == me ? to[me].n : cnt_in[p];
        for (int i = 0; i < m && rc == MPI_SUCCESS; i++)
            rc = px_dg_push(r[i].out ? mine_out : mine_in, r[i].out, r[i].peer, r[i].weight);
    }
out:
    if (data_in)
        for (int p = 0; p < n; p++)
            free(data_in[p]);
    free(data_in);
    free(cnt_in);
    free(reqs);
    return rc;
}

PX_PMPI(MPI_Dist_graph_create)
(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
 const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(comm_dist_graph);
    const char *fn = "MPI_Dist_graph_create";
    (void)info;
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm_old, fn);
    if (!comm_dist_graph)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null comm_dist_graph");
    if (n < 0)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "negative n %d", n);
    if (n > 0 && (!sources || !degrees))
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null sources or degrees");
    long long total = 0;
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= c->size)
            return px_mpi_error(c, MPI_ERR_RANK, fn, "sources[%d] = %d is outside 0..%d", i,
                                sources[i], c->size - 1);
        if (degrees[i] < 0)
            return px_mpi_error(c, MPI_ERR_ARG, fn, "negative degrees[%d] = %d", i, degrees[i]);
        total += degrees[i];
    }
    if (total > INT32_MAX / 3)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "too many edges (%lld)", total);
    int weighted = !px_dg_is_unweighted(weights);
    int rc = px_dg_check_list(c, (int)total, destinations, weights, "destinations", fn);
    if (rc != MPI_SUCCESS)
        return rc;

    /* Every process must know every other's edge count, so the exchange
     * always runs, even with nothing to give. */
    px_dg_vec_t *to = calloc((size_t)c->size, sizeof(*to));
    px_dg_vec_t in = {0}, out = {0};
    px_mpi_topo_t *t = NULL;
    rc = to ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int i = 0, e = 0; i < n && rc == MPI_SUCCESS; i++)
        for (int j = 0; j < degrees[i] && rc == MPI_SUCCESS; j++, e++) {
            int s = sources[i], d = destinations[e], w = weighted ? weights[e] : 1;
            rc = px_dg_push(&to[s], 1, d, w);
            if (rc == MPI_SUCCESS)
                rc = px_dg_push(&to[d], 0, s, w);
        }
    /* a failure here still has to let the others finish the exchange */
    if (rc != MPI_SUCCESS && to)
        for (int p = 0; p < c->size; p++)
            to[p].n = 0;
    int rc2 = to ? px_dg_exchange(c, to, &in, &out) : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = rc2;
    if (rc == MPI_SUCCESS) {
        int *buf = malloc(sizeof(int) * (size_t)(2 * (in.n + out.n) + 1));
        if (buf) {
            int *ip = buf, *iw = ip + in.n, *op = iw + in.n, *ow = op + out.n;
            for (int i = 0; i < in.n; i++) {
                ip[i] = in.r[i].peer;
                iw[i] = in.r[i].weight;
            }
            for (int i = 0; i < out.n; i++) {
                op[i] = out.r[i].peer;
                ow[i] = out.r[i].weight;
            }
            t = px_dg_topo(in.n, ip, iw, out.n, op, ow, weighted);
            free(buf);
        }
        if (!t)
            rc = MPI_ERR_NO_MEM;
    }
    if (to)
        for (int p = 0; p < c->size; p++)
            free(to[p].r);
    free(to);
    free(in.r);
    free(out.r);
    int *order = NULL;
    if (reorder) /* every member takes part, also after a failure */
        rc2 = px_dg_reorder(c, &t, &order);
    if (rc == MPI_SUCCESS && reorder)
        rc = rc2;
    if (rc != MPI_SUCCESS) {
        uint32_t ctx;
        px_mpi_comm_alloc_ctx(c, &ctx); /* keep the others from waiting */
        px_mpi_topo_free(t);
        return px_mpi_error(c, rc, fn, "cannot distribute the graph's edges");
    }
    rc = px_mpi_topo_comm_create(c, c->size, order, t, comm_dist_graph, fn);
    free(order);
    return rc;
}
PX_WEAK(MPI_Dist_graph_create)

PX_PMPI(MPI_Dist_graph_neighbors_count)(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    PX_CS_ENTER();
    int rc;
    const char *fn = "MPI_Dist_graph_neighbors_count";
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_DIST_GRAPH, fn, &rc);
    if (!t)
        return rc;
    if (!indegree || !outdegree || !weighted)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null argument");
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Dist_graph_neighbors_count)

PX_PMPI(MPI_Dist_graph_neighbors)
(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
 int destinations[], int destweights[])
{
    PX_CS_ENTER();
    int rc;
    const char *fn = "MPI_Dist_graph_neighbors";
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_DIST_GRAPH, fn, &rc);
    if (!t)
        return rc;
    if (maxindegree < 0 || maxoutdegree < 0)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "negative maxindegree or maxoutdegree");
    int ni = maxindegree < t->indeg ? maxindegree : t->indeg;
    int no = maxoutdegree < t->outdeg ? maxoutdegree : t->outdeg;
    if ((ni > 0 && !sources) || (no > 0 && !destinations))
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null sources or destinations");
    int sw = t->weighted && sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY;
    int dw = t->weighted && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY;
    if ((sw && ni > 0 && !sourceweights) || (dw && no > 0 && !destweights))
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null weight array for a weighted graph");
    if (ni > 0) {
        memcpy(sources, t->in, sizeof(int) * (size_t)ni);
        if (sw)
            memcpy(sourceweights, t->in_w, sizeof(int) * (size_t)ni);
    }
    if (no > 0) {
        memcpy(destinations, t->out, sizeof(int) * (size_t)no);
        if (dw)
            memcpy(destweights, t->out_w, sizeof(int) * (size_t)no);
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Dist_graph_neighbors)
