/* Pairwise-exchange alltoallv/alltoallw: n-1 steps, in step k a rank sends
 * to r+k and receives from r-k, each block with its own count, displacement
 * and (for alltoallw) datatype. */
#include "../coll_impl.h"

#include <stdint.h>

/* Address and datatype of block i (Alltoallv: displacements in items of
 * the single type; Alltoallw: in bytes, one type per block). */
static void px_coll_alltoallw_block(const px_coll_args_t *a, int send, int i, char **buf_p,
                                    MPI_Datatype *dt_p)
{
    const MPI_Datatype *types = send ? a->stypes : a->rtypes;
    const MPI_Aint *displs = send ? a->sdispls : a->rdispls;
    char *base = send ? (char *)a->sbuf : (char *)a->rbuf;
    if (types) {
        *dt_p = types[i];
        *buf_p = base + displs[i];
    } else {
        *dt_p = send ? a->stype : a->rtype;
        *buf_p = base + displs[i] * px_mpi_dt_get(*dt_p)->extent;
    }
}

void px_coll_alltoallw_recv(px_coll_sched_t *s, px_mpi_comm_t *c, const px_coll_args_t *a, int i)
{
    char *p;
    MPI_Datatype dt;
    px_coll_alltoallw_block(a, 0, i, &p, &dt);
    px_coll_sched_recv(s, c, p, a->rcounts[i], dt, i);
}

void px_coll_alltoallw_send(px_coll_sched_t *s, px_mpi_comm_t *c, const px_coll_args_t *a, int i)
{
    char *p;
    MPI_Datatype dt;
    px_coll_alltoallw_block(a, 1, i, &p, &dt);
    px_coll_sched_send(s, c, p, a->scounts[i], dt, i);
}

/* MPI_IN_PLACE: the send data is the receive buffer, copied aside first. */
int px_coll_alltoallw_resolve(px_coll_sched_t *s, const px_coll_args_t *a, px_coll_args_t *out)
{
    *out = *a;
    if (a->sbuf != MPI_IN_PLACE)
        return MPI_SUCCESS;
    MPI_Aint lo = 0, hi = 0;
    int any = 0;
    for (int i = 0; i < s->comm->size; i++) {
        char *p;
        MPI_Datatype dt;
        if (!a->rcounts[i])
            continue;
        px_coll_alltoallw_block(a, 0, i, &p, &dt);
        px_mpi_dt_t *d = px_mpi_dt_get(dt);
        MPI_Aint l = (p - (char *)a->rbuf) + d->true_lb;
        MPI_Aint h = l + (MPI_Aint)px_coll_span(d, a->rcounts[i]);
        if (!any || l < lo)
            lo = l;
        if (!any || h > hi)
            hi = h;
        any = 1;
    }
    char *tmp = px_coll_sched_alloc(s, (size_t)(hi - lo));
    if (!tmp)
        return MPI_ERR_NO_MEM;
    px_coll_sched_copy(s, (char *)a->rbuf + lo, tmp, (size_t)(hi - lo));
    /* same layout as rbuf, shifted: block addresses are computed from it */
    out->sbuf = (void *)((uintptr_t)tmp - (uintptr_t)lo);
    out->scounts = a->rcounts;
    out->sdispls = a->rdispls;
    out->stypes = a->rtypes;
    out->stype = a->rtype;
    return MPI_SUCCESS;
}

PX_COLL_BUILDER(px_coll_alltoallw_pairwise)
{
    px_coll_args_t b;
    int rc = px_coll_alltoallw_resolve(s, a, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = c->size, r = c->rank;
    for (int k = 0; k < n; k++) {
        /* the own block goes through the transport too: it converts types */
        px_coll_alltoallw_recv(s, c, &b, (r - k + n) % n);
        px_coll_alltoallw_send(s, c, &b, (r + k) % n);
        px_coll_sched_round(s);
    }
    return MPI_SUCCESS;
}
