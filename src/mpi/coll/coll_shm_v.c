/* The blocks of gatherv, scatterv and alltoallv that do not fit their part
 * of a slot (px_cshm_vfits) go as messages, in blocking calls
 * (px_coll_shm_run) and on lanes (coll_shm_lane.c) alike; a blocking call
 * waits only for the writers of the blocks it reads from the slots. */
#include "coll_shm_impl.h"

/* Block `cnt` items of dt at buf, to or from peer: a message on `tag` if
 * it does not fit its part of a slot of v, added to reqs[*nreqs]. */
static int px_cshm_vmsg(const struct px_coll_shm *v, px_coll_id_t id, px_mpi_comm_t *c, int tag,
                        int send, const void *buf, MPI_Aint cnt, MPI_Datatype dt, int peer,
                        px_mpi_req_t **reqs, int *nreqs)
{
    if (px_cshm_vfits(v, id, cnt, dt))
        return MPI_SUCCESS;
    px_mpi_req_t **q = &reqs[*nreqs];
    int rc =
        send ? px_mpi_isend_nohandle(q, buf, cnt, dt, peer, tag, c, c->ctx + 1, PX_PROTO_MODE_STD)
             : px_mpi_irecv_nohandle(q, (void *)buf, cnt, dt, peer, tag, c, c->ctx + 1);
    if (rc == MPI_SUCCESS)
        (*nreqs)++;
    return rc;
}

int px_cshm_vmsgs(const struct px_coll_shm *v, px_coll_id_t id, const px_coll_args_t *a,
                  px_mpi_comm_t *c, int tag, px_mpi_req_t **reqs, int *nreqs)
{
    int n = v->n, me = v->me, root = a->root, rc = MPI_SUCCESS;
    /* a side's datatype is only significant where this rank has that side */
    int sside = id == PX_COLL_ALLTOALLV || (id == PX_COLL_SCATTERV && me == root);
    int rside = id == PX_COLL_ALLTOALLV || (id == PX_COLL_GATHERV && me == root);
    MPI_Aint sext = sside ? px_mpi_dt_get(a->stype)->extent : 0;
    MPI_Aint rext = rside ? px_mpi_dt_get(a->rtype)->extent : 0;
    const char *sbuf = a->sbuf;
    char *rbuf = a->rbuf;
    *nreqs = 0;
    switch (id) {
    case PX_COLL_GATHERV:
        for (int r = 0; r < n && me == root && rc == MPI_SUCCESS; r++)
            if (r != me || a->sbuf != MPI_IN_PLACE)
                rc = px_cshm_vmsg(v, id, c, tag, 0, rbuf + a->rdispls[r] * rext, a->rcounts[r],
                                  a->rtype, r, reqs, nreqs);
        if (a->sbuf != MPI_IN_PLACE && rc == MPI_SUCCESS)
            rc = px_cshm_vmsg(v, id, c, tag, 1, sbuf, a->scount, a->stype, root, reqs, nreqs);
        break;
    case PX_COLL_SCATTERV:
        if (me != root || a->rbuf != MPI_IN_PLACE)
            rc = px_cshm_vmsg(v, id, c, tag, 0, rbuf, a->rcount, a->rtype, root, reqs, nreqs);
        for (int r = 0; r < n && me == root && rc == MPI_SUCCESS; r++)
            if (r != me || a->rbuf != MPI_IN_PLACE)
                rc = px_cshm_vmsg(v, id, c, tag, 1, sbuf + a->sdispls[r] * sext, a->scounts[r],
                                  a->stype, r, reqs, nreqs);
        break;
    case PX_COLL_ALLTOALLV:
        for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
            rc = px_cshm_vmsg(v, id, c, tag, 0, rbuf + a->rdispls[r] * rext, a->rcounts[r],
                              a->rtype, r, reqs, nreqs);
        for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
            rc = px_cshm_vmsg(v, id, c, tag, 1, sbuf + a->sdispls[r] * sext, a->scounts[r],
                              a->stype, r, reqs, nreqs);
        break;
    default:
        break;
    }
    return rc;
}

int px_cshm_vmsgs_done(px_mpi_req_t **reqs, int *nreqs)
{
    for (int i = 0; i < *nreqs; i++)
        if (!px_mpi_req_is_done(reqs[i]))
            return 0;
    int rc = 1;
    for (int i = 0; i < *nreqs; i++) {
        if (px_mpi_req_complete(reqs[i], MPI_STATUS_IGNORE) != MPI_SUCCESS)
            rc = -1;
        px_mpi_req_free(reqs[i]);
    }
    *nreqs = 0;
    return rc;
}

/* A blocking v-variant waits only for the writers of the blocks it takes
 * from the slots: with every block a message, for none. */
int px_cshm_vwait(struct px_coll_shm *m, px_coll_id_t id, const px_coll_args_t *a, uint64_t k)
{
    int me = m->me, rc = MPI_SUCCESS;
    switch (id) {
    case PX_COLL_GATHERV:
        for (int r = 0; r < m->n && me == a->root && rc == MPI_SUCCESS; r++)
            if (r != me && px_cshm_vfits(m, id, a->rcounts[r], a->rtype))
                rc = px_cshm_wait(m, 0, r, k);
        break;
    case PX_COLL_SCATTERV:
        if (me != a->root && px_cshm_vfits(m, id, a->rcount, a->rtype))
            rc = px_cshm_wait(m, 0, a->root, k);
        break;
    default: /* alltoallv */
        for (int r = 0; r < m->n && rc == MPI_SUCCESS; r++)
            if (r != me && px_cshm_vfits(m, id, a->rcounts[r], a->rtype))
                rc = px_cshm_wait(m, 0, r, k);
        break;
    }
    return rc;
}

/* Waits for the messages of a blocking v-variant. */
int px_cshm_vmsgs_wait(px_mpi_req_t **reqs, int *nreqs)
{
    int done = 1;
    unsigned idle = 0;
    while (*nreqs && !(done = px_cshm_vmsgs_done(reqs, nreqs)))
        px_proto_wait_step(&idle);
    return done < 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
}
