/* Environment: init, finalize, abort, clocks, versions, memory. */
#include "mpi_impl.h"
#include "../util/clock.h"
#include "../util/lanes.h"
#include "../util/scratch.h"
#include "../boot/machine.h"
#include "../topo/topo.h"
#include "tool/tool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int px_mpi_initialized, px_mpi_finalized;
static int px_mpi_thread_level = MPI_THREAD_SINGLE;
static pthread_t px_mpi_main_thread;
static px_boot_info_t px_mpi_boot;

/* Objects whose addresses the MPICH ABI exposes. */
static int px_unweighted_obj, px_weights_empty_obj;
int *const MPI_UNWEIGHTED = &px_unweighted_obj;
int *const MPI_WEIGHTS_EMPTY = &px_weights_empty_obj;
MPI_F08_status MPIR_F08_MPI_STATUS_IGNORE_OBJ;
MPI_F08_status MPIR_F08_MPI_STATUSES_IGNORE_OBJ[1];
int MPIR_F08_MPI_IN_PLACE;
int MPIR_F08_MPI_BOTTOM;
MPI_Fint *MPI_F_STATUS_IGNORE = (MPI_Fint *)&MPIR_F08_MPI_STATUS_IGNORE_OBJ;
MPI_Fint *MPI_F_STATUSES_IGNORE = (MPI_Fint *)MPIR_F08_MPI_STATUSES_IGNORE_OBJ;
MPI_F08_status *MPI_F08_STATUS_IGNORE = &MPIR_F08_MPI_STATUS_IGNORE_OBJ;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = MPIR_F08_MPI_STATUSES_IGNORE_OBJ;

int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int px_mpi_comm_init_world(const px_boot_info_t *boot); /* comm.c */
void px_mpi_comm_finalize(void);
void px_mpi_bsend_finalize(void);

/* The runtime under the world model and the sessions: brought up by its
 * first user. MPI_Finalize as its last user tears it down (collective
 * over the job, as MPI_Finalize is). A session as its last user leaves it
 * at rest instead: MPI_Session_finalize is not collective over the job, and
 * a new session may follow (MPI-4.0 11.3); a process whose runtime is at
 * rest tears it down as it exits, where every process of the job does the
 * same. Set up once per process: the bootstrap cannot be joined again once
 * left. */
int px_mpi_rt_up, px_mpi_rt_gone;
static int px_mpi_rt_users;

static void px_mpi_rt_teardown(void);

/* At exit: the runtime at rest goes down (not one still in use: a program
 * that ends without finalizing is ended by the launcher as before). */
static void px_mpi_rt_exit(void)
{
    if (px_mpi_rt_up && px_mpi_rt_users == 0)
        px_mpi_rt_teardown();
}

static void px_mpi_rt_start(const char *fn)
{
    px_status_t st;
    char prefix[32];

    px_status_t pst = px_param_init();
    st = px_boot_init(&px_mpi_boot);
    if (st != PX_OK) {
        fprintf(stderr, "Plexus: %s: bootstrap failed: %s\n", fn, px_status_string(st));
        exit(1);
    }
    snprintf(prefix, sizeof(prefix), "rank %d", px_mpi_boot.rank);
    px_log_set_prefix(prefix);
    if (pst == PX_OK && px_lane_plan_init() != PX_OK)
        pst = PX_ERR_INVALID_PARAM;
    if (pst != PX_OK) {
        /* through the launcher, so that the job ends now and says why,
         * instead of the other ranks waiting for this one */
        char msg[1100];
        snprintf(msg, sizeof(msg), "%s: %s", fn,
                 *px_param_error() ? px_param_error() : px_lane_plan_error());
        fprintf(stderr, "Plexus: rank %d: %s\n", px_mpi_boot.rank, msg);
        if (px_mpi_boot.singleton)
            exit(1);
        px_boot_abort(1, msg);
    }
    char topo_err[600] = "";
    st = px_topo_job_init(&px_mpi_boot, topo_err, sizeof(topo_err));
    if (st != PX_OK) {
        /* a named description that cannot be used fails the job, on every
         * rank alike, rather than leaving it flat unnoticed */
        char msg[700];
        snprintf(msg, sizeof(msg), "%s: %s", fn, topo_err[0] ? topo_err : px_status_string(st));
        fprintf(stderr, "Plexus: rank %d: %s\n", px_mpi_boot.rank, msg);
        if (px_mpi_boot.singleton)
            exit(1);
        px_boot_abort(1, msg);
    }
    st = px_proto_init(&px_mpi_boot);
    if (st != PX_OK) {
        char msg[160];
        snprintf(msg, sizeof(msg), "%s: cannot set up communication: %s", fn, px_status_string(st));
        fprintf(stderr, "Plexus: rank %d: %s\n", px_mpi_boot.rank, msg);
        px_boot_abort(1, msg);
    }
    px_boot_bind(); /* PX_BIND, now that the ranks of this machine are known */
    px_mpi_dt_init();
    if (px_mpi_comm_init_world(&px_mpi_boot) != MPI_SUCCESS)
        px_boot_abort(1, "cannot create MPI_COMM_WORLD");
    px_mpi_rt_up = 1;
    atexit(px_mpi_rt_exit);
    px_boot_spread();
    px_mpi_profile_start();
    if (px_params.async_progress) {
        /* the progress thread and the program's calls take turns under
         * the library's lock, as with MPI_THREAD_MULTIPLE */
        px_cs_on = 1;
        if (px_proto_async_start() != PX_OK)
            px_boot_abort(1, "cannot start the progress thread (PX_ASYNC_PROGRESS)");
    }
}

int px_mpi_rt_acquire(const char *fn)
{
    if (px_mpi_rt_gone)
        return MPI_ERR_OTHER;
    if (px_mpi_rt_users++ == 0 && !px_mpi_rt_up)
        px_mpi_rt_start(fn);
    return MPI_SUCCESS;
}

void px_mpi_rt_release(void)
{
    if (px_mpi_rt_users <= 0 || --px_mpi_rt_users > 0)
        return;
    if (!px_mpi_initialized) {
        /* the last session: at rest, with everything it sent acknowledged */
        px_proto_flush(PX_FLUSH_ACKED);
        return;
    }
    px_mpi_rt_teardown();
}

static void px_mpi_rt_teardown(void)
{
    /* files the program left open, on any communicator */
    px_mpi_io_finalize();
    /* what the program sent, before the library's own last messages */
    px_mpi_profile_finish(&px_mpi_boot);
    /* everything sent has reached its peer (acknowledged: a rail failing
     * now still cannot lose it) */
    px_proto_flush(PX_FLUSH_ACKED);
    /* everyone has sent everything before anyone closes a connection */
    px_mpi_coll_barrier(px_mpi_comm_world);
    /* the barrier's own last messages may still be queued (a small send
     * completes once its data is copied, not when it is on the wire); over
     * a connection their acknowledgements are not waited for, the peer may
     * have left; over datagrams the peers wait for each other's last word */
    px_proto_flush(PX_FLUSH_LAST);
    px_mpi_tool_finalize();
    if (px_profile_counters())
        px_proto_print_stats();
    px_proto_async_stop();
    px_proto_finalize();
    px_mpi_comm_finalize();
    px_scratch_release();
    px_mpi_rt_up = 0;
    px_mpi_rt_gone = 1;
    px_topo_job_finalize();
    px_boot_finalize();
}

static int px_mpi_init_common(const char *fn)
{
    if (px_mpi_initialized)
        return px_mpi_error(NULL, MPI_ERR_OTHER, fn, "MPI is already initialized");
    if (px_mpi_finalized || px_mpi_rt_gone)
        return px_mpi_error(NULL, MPI_ERR_OTHER, fn,
                            "MPI cannot be initialized again after it was finalized");
    px_mpi_rt_acquire(fn);
    px_mpi_main_thread = pthread_self();
    px_mpi_initialized = 1;
    /* a spawned job meets its parent before the program goes on */
    px_mpi_spawn_init();
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Init)(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return px_mpi_init_common("MPI_Init");
}
PX_WEAK(MPI_Init)

PX_PMPI(MPI_Init_thread)(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    int rc = px_mpi_init_common("MPI_Init_thread");
    if (rc != MPI_SUCCESS)
        return rc;
    /* Up to MPI_THREAD_SERIALIZED calls never overlap and take no lock;
     * MPI_THREAD_MULTIPLE turns on the library's critical section
     * (src/util/cs.h): one call at a time, waits let other threads in. */
    px_mpi_thread_level = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                          : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                           : required;
    if (px_mpi_thread_level == MPI_THREAD_MULTIPLE) {
        px_cs_on = 1;
        px_boot_share_cpus(); /* its threads poll in turn: keep them off the other ranks' CPUs */
    }
    if (provided)
        *provided = px_mpi_thread_level;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Init_thread)

PX_PMPI(MPI_Finalize)(void)
{
    PX_CS_ENTER();
    if (!px_mpi_initialized || px_mpi_finalized)
        return px_mpi_error(NULL, MPI_ERR_OTHER, "MPI_Finalize",
                            px_mpi_finalized ? "called after MPI_Finalize"
                                             : "called before MPI_Init");
    /* MPI_COMM_SELF's attributes go first, as if it were freed: their
     * delete callbacks run in the reverse order of setting and may still
     * call MPI (MPI-3.1 8.7.1) */
    px_mpi_attr_delete_all(px_mpi_comm_self);
    px_mpi_bsend_finalize();
    px_mpi_finalized = 1;
    /* the runtime stays up while a session is open */
    px_mpi_rt_release();
    /* finalize is collective over connected processes: the jobs this
     * process spawned end first */
    px_mpi_spawn_finalize();
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Finalize)

PX_PMPI(MPI_Initialized)(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = px_mpi_initialized;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Initialized)

PX_PMPI(MPI_Finalized)(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = px_mpi_finalized;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Finalized)

PX_PMPI(MPI_Abort)(MPI_Comm comm, int errorcode)
{
    PX_CS_ENTER();
    char msg[128];
    snprintf(msg, sizeof(msg), "MPI_Abort(comm=0x%x, errorcode=%d) called", (unsigned)comm,
             errorcode);
    if (!px_mpi_rt_up) {
        fprintf(stderr, "Plexus: %s\n", msg);
        exit(errorcode ? errorcode : 1);
    }
    px_boot_abort(errorcode, msg);
}
PX_WEAK(MPI_Abort)

PX_PMPI(MPI_Query_thread)(int *provided)
{
    if (!provided)
        return MPI_ERR_ARG;
    *provided = px_mpi_thread_level;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Query_thread)

PX_PMPI(MPI_Is_thread_main)(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = pthread_equal(pthread_self(), px_mpi_main_thread);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Is_thread_main)

double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#pragma weak MPI_Wtime = PMPI_Wtime

double PMPI_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#pragma weak MPI_Wtick = PMPI_Wtick

PX_PMPI(MPI_Get_processor_name)(char *name, int *resultlen)
{
    PX_CS_ENTER();
    char host[256] = "";
    const char *node = px_mpi_boot.node_name;
    if (!name || !resultlen)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Get_processor_name", "null argument");
    if (!node || !node[0] || !strcmp(node, "localhost")) {
        gethostname(host, sizeof(host) - 1);
        node = host;
    }
    int n = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", node);
    *resultlen = n < MPI_MAX_PROCESSOR_NAME ? n : MPI_MAX_PROCESSOR_NAME - 1;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Get_processor_name)

PX_PMPI(MPI_Get_version)(int *version, int *subversion)
{
    if (!version || !subversion)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Get_version)

PX_PMPI(MPI_Get_library_version)(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return MPI_ERR_ARG;
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "Plexus %s (MPI %d.%d; MPICH ABI)",
                     PX_VERSION, MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Get_library_version)

PX_PMPI(MPI_Alloc_mem)(MPI_Aint size, MPI_Info info, void *baseptr)
{
    PX_CS_ENTER();
    (void)info;
    void *p = NULL;
    if (size < 0 || !baseptr)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Alloc_mem", "invalid size %ld", (long)size);
    if (posix_memalign(&p, 64, size ? (size_t)size : 1))
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "cannot allocate %ld bytes",
                            (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Alloc_mem)

PX_PMPI(MPI_Free_mem)(void *base)
{
    PX_CS_ENTER();
    free(base);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Free_mem)

PX_PMPI(MPI_Pcontrol)(const int level, ...)
{
    PX_CS_ENTER();
    (void)level;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Pcontrol)
