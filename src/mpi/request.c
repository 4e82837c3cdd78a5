/* Requests: handles, completion, Wait/Test families, persistent requests,
 * cancel. */
#include "mpi_impl.h"
#include "dtype_engine.h"
#include "../util/scratch.h"

#include <stdlib.h>

static px_htab_t px_req_tab;
static px_mpi_req_t *px_req_free_list;
#define PX_REQ_DYN 0xac000000u

/* A request that never becomes an MPI_Request handle (a collective
 * schedule's sends and receives): no handle-table entry. */
px_mpi_req_t *px_mpi_req_new_internal(int kind)
{
    px_mpi_req_t *r = px_req_free_list;
    if (r)
        px_req_free_list = r->free_next;
    else if (!(r = malloc(sizeof(*r))))
        return NULL;
    memset(r, 0, sizeof(*r));
    r->handle = MPI_REQUEST_NULL;
    r->kind = (uint8_t)kind;
    return r;
}

/* Requests that advance in steps, polled by every progress call. */
static px_mpi_req_t **px_polled;
static int px_npolled, px_polled_cap, px_polling;

static void px_req_poll_stop(px_mpi_req_t *r)
{
    for (int i = 0; i < px_npolled; i++)
        if (px_polled[i] == r) {
            px_polled[i] = px_polled[--px_npolled];
            break;
        }
    r->polled = 0;
    if (!px_npolled)
        px_proto_set_progress_hook(NULL);
}

static int px_req_poll_all(void)
{
    if (px_polling) /* a poll that progresses the engine itself */
        return 0;
    px_polling = 1;
    int n = 0;
    for (int i = 0; i < px_npolled;) {
        px_mpi_req_t *r = px_polled[i];
        if (r->poll(r)) {
            px_req_poll_stop(r);
            n++;
        } else {
            i++;
        }
    }
    px_polling = 0;
    return n;
}

void px_mpi_req_poll_start(px_mpi_req_t *r)
{
    if (r->polled || !r->poll)
        return;
    if (px_npolled == px_polled_cap) {
        int cap = px_polled_cap ? 2 * px_polled_cap : 16;
        px_mpi_req_t **p = realloc(px_polled, sizeof(*p) * (size_t)cap);
        if (!p)
            return; /* it still advances when waited for */
        px_polled = p;
        px_polled_cap = cap;
    }
    px_polled[px_npolled++] = r;
    r->polled = 1;
    px_proto_set_progress_hook(px_req_poll_all);
}

px_mpi_req_t *px_mpi_req_polled(px_mpi_comm_t *c, px_mpi_req_poll_fn poll, void *sched)
{
    px_mpi_req_t *r = px_mpi_req_new(PX_MPI_REQ_COLL);
    if (!r)
        return NULL;
    r->comm = c;
    c->refs++;
    r->sched = sched;
    r->poll = poll;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    if (!poll(r))
        px_mpi_req_poll_start(r);
    return r;
}

px_mpi_req_t *px_mpi_req_new(int kind)
{
    px_mpi_req_t *r = px_mpi_req_new_internal(kind);
    if (!r)
        return NULL;
    int idx = px_htab_add(&px_req_tab, r);
    if (idx < 0) {
        free(r);
        return NULL;
    }
    r->handle = (int)(PX_REQ_DYN | (unsigned)idx);
    r->kind = (uint8_t)kind;
    return r;
}

void px_mpi_req_free(px_mpi_req_t *r)
{
    if (r->polled)
        px_req_poll_stop(r);
    if (r->release)
        r->release(r);
    if (r->kind == PX_MPI_REQ_SEND || r->kind == PX_MPI_REQ_RECV || r->kind == PX_MPI_REQ_DONE)
        px_mpi_dt_release(r->dtype);
    r->dtype = MPI_DATATYPE_NULL;
    if (PX_HANDLE_HI(r->handle) == PX_REQ_DYN)
        px_htab_del(&px_req_tab, PX_HANDLE_IDX(r->handle));
    px_scratch_put(r->packbuf);
    r->packbuf = NULL;
    if (r->comm)
        px_mpi_comm_release(r->comm);
    r->comm = NULL;
    r->handle = MPI_REQUEST_NULL;
    r->free_next = px_req_free_list;
    px_req_free_list = r;
}

px_mpi_req_t *px_mpi_req_get(MPI_Request h)
{
    if (PX_HANDLE_HI(h) != PX_REQ_DYN)
        return NULL;
    px_mpi_req_t *r = px_htab_get(&px_req_tab, PX_HANDLE_IDX(h));
    return r && r->handle == h ? r : NULL;
}

/* ---------- generalized requests ----------
 * The program completes them (MPI_Grequest_complete); completing one in
 * MPI_Wait or MPI_Test calls its query function for the status, freeing
 * it its free function, MPI_Cancel its cancel function. */
typedef struct px_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    int done;
} px_greq_t;

static int px_greq_poll(px_mpi_req_t *r) { return ((px_greq_t *)r->sched)->done; }

static int px_greq_query(px_mpi_req_t *r, MPI_Status *status)
{
    px_greq_t *g = r->sched;
    MPI_Status st;
    memset(&st, 0, sizeof(st));
    st.MPI_SOURCE = MPI_ANY_SOURCE;
    st.MPI_TAG = MPI_ANY_TAG;
    int rc = g->query ? g->query(g->extra, &st) : MPI_SUCCESS;
    if (status != MPI_STATUS_IGNORE) {
        st.MPI_ERROR = status->MPI_ERROR; /* set by the Wait family only where it says so */
        *status = st;
    }
    return rc;
}

/* The free function, once: its error is what the MPI_Wait or MPI_Test
 * that frees the request returns (when the query succeeded). */
static int px_greq_free(px_mpi_req_t *r)
{
    px_greq_t *g = r->sched;
    MPI_Grequest_free_function *f = g ? g->free : NULL;
    if (!f)
        return MPI_SUCCESS;
    g->free = NULL;
    return f(g->extra);
}

static void px_greq_release(px_mpi_req_t *r)
{
    px_greq_free(r);
    free(r->sched);
    r->sched = NULL;
}

PX_PMPI(MPI_Grequest_start)
(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
 MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Grequest_start");
    if (!request)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Grequest_start", "null request pointer");
    px_greq_t *g = malloc(sizeof(*g));
    px_mpi_req_t *r = g ? px_mpi_req_new(PX_MPI_REQ_GREQ) : NULL;
    if (!r) {
        free(g);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start", "out of memory");
    }
    *g = (px_greq_t){query_fn, free_fn, cancel_fn, extra_state, 0};
    r->sched = g;
    r->poll = px_greq_poll;
    r->release = px_greq_release;
    r->dtype = MPI_DATATYPE_NULL;
    *request = r->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Grequest_start)

PX_PMPI(MPI_Grequest_complete)(MPI_Request request)
{
    PX_CS_ENTER();
    px_mpi_req_t *r = px_mpi_req_get(request);
    if (!r || r->kind != PX_MPI_REQ_GREQ || !r->sched)
        return px_mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                            "not a generalized request");
    ((px_greq_t *)r->sched)->done = 1;
    px_proto_wake();   /* another thread may wait for it */
    if (r->user_freed) /* MPI_Request_free came first */
        px_mpi_req_free(r);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Grequest_complete)

int px_mpi_req_group_poll(px_mpi_req_t *r)
{
    px_mpi_req_group_t *g = r->sched;
    if (!g)
        return 1;
    int pending = 0;
    for (int i = 0; i < g->n; i++) {
        px_mpi_req_t *q = g->reqs[i];
        if (!q)
            continue;
        if (!px_mpi_req_is_done(q)) {
            pending = 1;
            continue;
        }
        int e = px_mpi_req_complete(q, MPI_STATUS_IGNORE); /* unpacks receives */
        if (e != MPI_SUCCESS && g->err == MPI_SUCCESS)
            g->err = e;
        px_mpi_req_free(q);
        g->reqs[i] = NULL;
    }
    if (pending)
        return 0;
    px_mpi_req_status_empty(r);
    r->st_error = g->err;
    free(g->reqs);
    free(g);
    r->sched = NULL;
    return 1;
}

int px_mpi_req_is_done(px_mpi_req_t *r)
{
    if (r->kind == PX_MPI_REQ_DONE)
        return 1;
    if (r->poll)
        return r->poll(r);
    return r->p.done;
}

static inline void px_status_fill(MPI_Status *s, int src, int tag, MPI_Count bytes, int cancelled)
{
    if (s == MPI_STATUS_IGNORE)
        return;
    s->MPI_SOURCE = src;
    s->MPI_TAG = tag;
    s->count_lo = (int)bytes;
    s->count_hi_and_cancelled = (int)(((unsigned long long)bytes >> 32) << 1) | (cancelled & 1);
}

static void px_status_empty(MPI_Status *s) { px_status_fill(s, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 0); }

int px_mpi_req_complete(px_mpi_req_t *r, MPI_Status *status)
{
    int rc = MPI_SUCCESS;
    switch (r->kind) {
    case PX_MPI_REQ_RECV:
        if (r->p.cancelled) {
            px_status_fill(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 1);
            break;
        }
        if (r->packbuf) {
            px_mpi_dt_t *d = px_mpi_dt_get(r->dtype);
            /* what was not unpacked as it came; a partial last item is stored too */
            if (d)
                px_mpi_dt_range(d, r->ubuf, r->packbuf, r->p.drained, r->p.st_count, 0);
            px_scratch_put(r->packbuf);
            r->packbuf = NULL;
        }
        px_status_fill(status, r->p.st_source, r->p.st_tag, (MPI_Count)r->p.st_count, 0);
        if (r->p.st_error)
            rc = px_mpi_status_to_class(r->p.st_error);
        break;
    case PX_MPI_REQ_SEND:
        px_scratch_put(r->packbuf);
        r->packbuf = NULL;
        px_status_fill(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 0);
        if (r->p.st_error)
            rc = px_mpi_status_to_class(r->p.st_error);
        break;
    case PX_MPI_REQ_DONE:
        px_status_fill(status, r->st_source, r->st_tag, r->st_count, r->st_cancelled);
        rc = r->st_error;
        break;
    case PX_MPI_REQ_GREQ:
        rc = px_greq_query(r, status);
        break;
    default:
        px_status_fill(status, r->st_source, r->st_tag, r->st_count, r->st_cancelled);
        rc = r->st_error;
        break;
    }
    return rc;
}

void px_mpi_req_wait(px_mpi_req_t *r)
{
    unsigned idle = 0;
    while (!px_mpi_req_is_done(r))
        px_proto_wait_step(&idle);
}

/* Completes r into status and releases or deactivates it. */
static int px_req_finish(MPI_Request *h, px_mpi_req_t *r, MPI_Status *status)
{
    int rc = px_mpi_req_complete(r, status);
    if (r->persistent) {
        r->active = 0;
        if (r->kind == PX_MPI_REQ_DONE && r->p.kind) /* PROC_NULL persistent: restore */
            r->kind = (uint8_t)(r->p.kind == PX_PROTO_REQ_SEND ? PX_MPI_REQ_SEND : PX_MPI_REQ_RECV);
    } else {
        int frc = r->kind == PX_MPI_REQ_GREQ ? px_greq_free(r) : MPI_SUCCESS;
        if (rc == MPI_SUCCESS)
            rc = frc;
        px_mpi_req_free(r);
        *h = MPI_REQUEST_NULL;
    }
    return rc;
}

/* Inactive (null or persistent-not-started) requests complete with an empty status. */
static int px_req_inactive(px_mpi_req_t *r) { return !r || (r->persistent && !r->active); }

static px_mpi_req_t *px_req_lookup(MPI_Request h, int *bad)
{
    *bad = 0;
    if (h == MPI_REQUEST_NULL)
        return NULL;
    px_mpi_req_t *r = px_mpi_req_get(h);
    if (!r)
        *bad = 1;
    return r;
}

PX_PMPI(MPI_Wait)(MPI_Request *request, MPI_Status *status)
{
    PX_CS_ENTER();
    int bad;
    if (!request)
        return px_mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Wait", "null request pointer");
    px_mpi_req_t *r = px_req_lookup(*request, &bad);
    if (bad)
        return px_mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Wait", "invalid request");
    if (px_req_inactive(r)) {
        px_status_empty(status);
        return MPI_SUCCESS;
    }
    px_mpi_req_wait(r);
    px_mpi_comm_t *c = r->comm;
    int rc = px_req_finish(request, r, status);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Wait", "request completed with an error");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Wait)

PX_PMPI(MPI_Test)(MPI_Request *request, int *flag, MPI_Status *status)
{
    PX_CS_ENTER();
    int bad;
    if (!request || !flag)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Test", "null argument");
    px_mpi_req_t *r = px_req_lookup(*request, &bad);
    if (bad)
        return px_mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Test", "invalid request");
    if (px_req_inactive(r)) {
        *flag = 1;
        px_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!px_mpi_req_is_done(r)) {
        px_proto_progress();
        if (!px_mpi_req_is_done(r)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    px_mpi_comm_t *c = r->comm;
    int rc = px_req_finish(request, r, status);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Test", "request completed with an error");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Test)

static int px_req_check_array(int count, MPI_Request reqs[], const char *fn)
{
    if (count < 0 || (count > 0 && !reqs))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid request array");
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL && !px_mpi_req_get(reqs[i]))
            return px_mpi_error(NULL, MPI_ERR_REQUEST, fn, "invalid request at index %d", i);
    return MPI_SUCCESS;
}

/* Completes every done request of the array; used by Waitall/Testall. */
static int px_req_finish_all(int count, MPI_Request reqs[], MPI_Status *statuses, const char *fn)
{
    int err = 0;
    px_mpi_comm_t *ec = NULL;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        px_mpi_req_t *r = reqs[i] == MPI_REQUEST_NULL ? NULL : px_mpi_req_get(reqs[i]);
        int rc = MPI_SUCCESS;
        if (px_req_inactive(r))
            px_status_empty(st);
        else {
            px_mpi_comm_t *c = r->comm;
            rc = px_req_finish(&reqs[i], r, st);
            if (rc != MPI_SUCCESS && !ec)
                ec = c;
        }
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = rc;
        if (rc != MPI_SUCCESS)
            err = 1;
    }
    if (err)
        return px_mpi_error(ec, MPI_ERR_IN_STATUS, fn, "a request completed with an error");
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Waitall)(int count, MPI_Request reqs[], MPI_Status *statuses)
{
    PX_CS_ENTER();
    int rc = px_req_check_array(count, reqs, "MPI_Waitall");
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < count; i++) {
        px_mpi_req_t *r = reqs[i] == MPI_REQUEST_NULL ? NULL : px_mpi_req_get(reqs[i]);
        if (!px_req_inactive(r))
            px_mpi_req_wait(r);
    }
    return px_req_finish_all(count, reqs, statuses, "MPI_Waitall");
}
PX_WEAK(MPI_Waitall)

PX_PMPI(MPI_Testall)(int count, MPI_Request reqs[], int *flag, MPI_Status *statuses)
{
    PX_CS_ENTER();
    int rc = px_req_check_array(count, reqs, "MPI_Testall");
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Testall", "null flag");
    px_proto_progress();
    for (int i = 0; i < count; i++) {
        px_mpi_req_t *r = reqs[i] == MPI_REQUEST_NULL ? NULL : px_mpi_req_get(reqs[i]);
        if (!px_req_inactive(r) && !px_mpi_req_is_done(r)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return px_req_finish_all(count, reqs, statuses, "MPI_Testall");
}
PX_WEAK(MPI_Testall)

/* Index of a done request, MPI_UNDEFINED if all are inactive, -1 if none done yet. */
static int px_req_find_done(int count, MPI_Request reqs[])
{
    int active = 0;
    for (int i = 0; i < count; i++) {
        px_mpi_req_t *r = reqs[i] == MPI_REQUEST_NULL ? NULL : px_mpi_req_get(reqs[i]);
        if (px_req_inactive(r))
            continue;
        active = 1;
        if (px_mpi_req_is_done(r))
            return i;
    }
    return active ? -1 : MPI_UNDEFINED;
}

PX_PMPI(MPI_Waitany)(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    PX_CS_ENTER();
    int rc = px_req_check_array(count, reqs, "MPI_Waitany");
    unsigned idle = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    if (!index)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Waitany", "null index");
    int i;
    while ((i = px_req_find_done(count, reqs)) == -1)
        px_proto_wait_step(&idle);
    *index = i;
    if (i == MPI_UNDEFINED) {
        px_status_empty(status);
        return MPI_SUCCESS;
    }
    px_mpi_req_t *r = px_mpi_req_get(reqs[i]);
    px_mpi_comm_t *c = r->comm;
    rc = px_req_finish(&reqs[i], r, status);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Waitany", "request completed with an error");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Waitany)

PX_PMPI(MPI_Testany)(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    PX_CS_ENTER();
    int rc = px_req_check_array(count, reqs, "MPI_Testany");
    if (rc != MPI_SUCCESS)
        return rc;
    if (!index || !flag)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Testany", "null argument");
    px_proto_progress();
    int i = px_req_find_done(count, reqs);
    if (i == -1) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *flag = 1;
    *index = i;
    if (i == MPI_UNDEFINED) {
        px_status_empty(status);
        return MPI_SUCCESS;
    }
    px_mpi_req_t *r = px_mpi_req_get(reqs[i]);
    px_mpi_comm_t *c = r->comm;
    rc = px_req_finish(&reqs[i], r, status);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Testany", "request completed with an error");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Testany)

static int px_req_some(int incount, MPI_Request reqs[], int *outcount, int indices[],
                       MPI_Status *statuses, int wait, const char *fn)
{
    int rc = px_req_check_array(incount, reqs, fn);
    unsigned idle = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    if (!outcount || (incount && !indices))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    for (;;) {
        int active = 0, n = 0, err = 0;
        px_mpi_comm_t *ec = NULL;
        if (!wait)
            px_proto_progress();
        for (int i = 0; i < incount; i++) {
            px_mpi_req_t *r = reqs[i] == MPI_REQUEST_NULL ? NULL : px_mpi_req_get(reqs[i]);
            if (px_req_inactive(r))
                continue;
            active = 1;
            if (!px_mpi_req_is_done(r))
                continue;
            MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
            px_mpi_comm_t *c = r->comm;
            int e = px_req_finish(&reqs[i], r, st);
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = e;
            if (e != MPI_SUCCESS) {
                err = 1;
                if (!ec)
                    ec = c;
            }
            indices[n++] = i;
        }
        if (!active) {
            *outcount = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        if (n || !wait) {
            *outcount = n;
            if (err)
                return px_mpi_error(ec, MPI_ERR_IN_STATUS, fn, "a request completed with an error");
            return MPI_SUCCESS;
        }
        px_proto_wait_step(&idle);
    }
}

PX_PMPI(MPI_Waitsome)
(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status *statuses)
{
    PX_CS_ENTER();
    return px_req_some(incount, reqs, outcount, indices, statuses, 1, "MPI_Waitsome");
}
PX_WEAK(MPI_Waitsome)

PX_PMPI(MPI_Testsome)
(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status *statuses)
{
    PX_CS_ENTER();
    return px_req_some(incount, reqs, outcount, indices, statuses, 0, "MPI_Testsome");
}
PX_WEAK(MPI_Testsome)

static void px_req_autofree(px_proto_req_t *p) { px_mpi_req_free((px_mpi_req_t *)p); }

PX_PMPI(MPI_Request_free)(MPI_Request *request)
{
    PX_CS_ENTER();
    int bad;
    if (!request)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Request_free", "null argument");
    px_mpi_req_t *r = px_req_lookup(*request, &bad);
    if (bad || !r)
        return px_mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Request_free", "invalid request");
    if (r->kind == PX_MPI_REQ_GREQ && !px_mpi_req_is_done(r)) {
        r->user_freed = 1; /* MPI_Grequest_complete frees it */
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    if (r->kind == PX_MPI_REQ_PART && !px_req_inactive(r) && !px_mpi_req_is_done(r))
        return px_mpi_error(r->comm, MPI_ERR_REQUEST, "MPI_Request_free",
                            "the partitioned request is active: complete it first");
    if (px_req_inactive(r) || px_mpi_req_is_done(r) || r->kind == PX_MPI_REQ_COLL) {
        if (!px_req_inactive(r) && r->kind == PX_MPI_REQ_COLL)
            px_mpi_req_wait(r);
        px_scratch_put(r->packbuf);
        r->packbuf = NULL;
        px_mpi_req_free(r);
    } else {
        /* still in flight: released by its completion */
        if (r->packbuf && r->kind == PX_MPI_REQ_RECV) {
            /* unpacking would need the request: finish it now */
            px_mpi_req_wait(r);
            px_mpi_req_complete(r, MPI_STATUS_IGNORE);
            px_mpi_req_free(r);
        } else {
            r->user_freed = 1;
            r->p.cb = px_req_autofree;
        }
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Request_free)

PX_PMPI(MPI_Cancel)(MPI_Request *request)
{
    PX_CS_ENTER();
    int bad;
    if (!request)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Cancel", "null argument");
    px_mpi_req_t *r = px_req_lookup(*request, &bad);
    if (bad || !r)
        return px_mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Cancel", "invalid request");
    if (r->kind == PX_MPI_REQ_RECV && !r->p.done)
        px_proto_cancel_recv(&r->p);
    if (r->kind == PX_MPI_REQ_GREQ) {
        px_greq_t *g = r->sched;
        int rc = g->cancel ? g->cancel(g->extra, g->done) : MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            return px_mpi_error(NULL, rc, "MPI_Cancel", "the cancel function failed");
    }
    /* sends are not cancelled: once started they complete (allowed by MPI) */
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Cancel)

PX_PMPI(MPI_Test_cancelled)(const MPI_Status *status, int *flag)
{
    PX_CS_ENTER();
    if (!status || !flag)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Test_cancelled", "null argument");
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Test_cancelled)

PX_PMPI(MPI_Request_get_status)(MPI_Request request, int *flag, MPI_Status *status)
{
    PX_CS_ENTER();
    int bad;
    px_mpi_req_t *r = px_req_lookup(request, &bad);
    if (bad)
        return px_mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Request_get_status", "invalid request");
    if (!flag)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Request_get_status", "null argument");
    if (px_req_inactive(r)) {
        *flag = 1;
        px_status_empty(status);
        return MPI_SUCCESS;
    }
    px_proto_progress();
    *flag = px_mpi_req_is_done(r);
    if (*flag && status != MPI_STATUS_IGNORE) {
        if (r->kind == PX_MPI_REQ_RECV)
            px_status_fill(status, r->p.st_source, r->p.st_tag, (MPI_Count)r->p.st_count,
                           r->p.cancelled);
        else
            px_status_fill(status, r->st_source, r->st_tag, r->st_count, r->st_cancelled);
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Request_get_status)

/* ---------- counts ---------- */

PX_PMPI(MPI_Get_count_c)(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    PX_CS_ENTER();
    px_mpi_dt_t *d = px_mpi_dt_get(datatype);
    if (!status || !count)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Get_count", "null argument");
    if (!d)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Get_count", "invalid datatype");
    MPI_Count bytes = (MPI_Count)(unsigned)status->count_lo |
                      ((MPI_Count)((unsigned)status->count_hi_and_cancelled >> 1) << 32);
    if (d->size == 0)
        *count = bytes ? MPI_UNDEFINED : 0;
    else if (bytes % d->size)
        *count = MPI_UNDEFINED;
    else
        *count = bytes / d->size;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Get_count_c)

PX_PMPI(MPI_Get_count)(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    PX_CS_ENTER();
    MPI_Count n;
    int rc = PMPI_Get_count_c(status, datatype, &n);
    if (rc == MPI_SUCCESS)
        *count = n > 0x7fffffff ? MPI_UNDEFINED : (int)n;
    return rc;
}
PX_WEAK(MPI_Get_count)

PX_PMPI(MPI_Get_elements_x)(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    PX_CS_ENTER();
    px_mpi_dt_t *d = px_mpi_dt_get(datatype);
    if (!status || !count)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Get_elements", "null argument");
    if (!d)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Get_elements", "invalid datatype");
    MPI_Count bytes = (MPI_Count)(unsigned)status->count_lo |
                      ((MPI_Count)((unsigned)status->count_hi_and_cancelled >> 1) << 32);
    if (d->size == 0) {
        *count = 0;
        return MPI_SUCCESS;
    }
    *count = px_mpi_dt_count_elements(d, bytes);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Get_elements_x)

PX_PMPI(MPI_Get_elements_c)(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    PX_CS_ENTER();
    return PMPI_Get_elements_x(status, datatype, count);
}
PX_WEAK(MPI_Get_elements_c)

PX_PMPI(MPI_Get_elements)(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    PX_CS_ENTER();
    MPI_Count n;
    int rc = PMPI_Get_elements_x(status, datatype, &n);
    if (rc == MPI_SUCCESS)
        *count = n > 0x7fffffff ? MPI_UNDEFINED : (int)n;
    return rc;
}
PX_WEAK(MPI_Get_elements)

PX_PMPI(MPI_Status_set_elements_x)(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    PX_CS_ENTER();
    px_mpi_dt_t *d = px_mpi_dt_get(datatype);
    if (!d)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Status_set_elements", "invalid datatype");
    if (!status || count < 0)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Status_set_elements", "invalid argument");
    MPI_Count bytes = (MPI_Count)count * (d->elements ? d->size / d->elements : 0);
    px_status_fill(status, status->MPI_SOURCE, status->MPI_TAG, bytes,
                   status->count_hi_and_cancelled & 1);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Status_set_elements_x)

PX_PMPI(MPI_Status_set_elements)(MPI_Status *status, MPI_Datatype datatype, int count)
{
    PX_CS_ENTER();
    return PMPI_Status_set_elements_x(status, datatype, count);
}
PX_WEAK(MPI_Status_set_elements)

PX_PMPI(MPI_Status_set_cancelled)(MPI_Status *status, int flag)
{
    PX_CS_ENTER();
    if (!status)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled", "null argument");
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Status_set_cancelled)
