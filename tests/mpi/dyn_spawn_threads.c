/* MPI_Comm_spawn from several threads at once (MPI_THREAD_MULTIPLE): each
 * of 4 threads of every rank spawns one child of its own on MPI_COMM_SELF,
 * twice, while the others spawn and disconnect theirs. A meeting that makes
 * room for newcomers (forgetting the processes of other jobs no
 * communicator names) runs while another thread's meeting has its children
 * as peers but no communicator yet: those must not be forgotten. Each
 * child gets a checked value from its parent, answers with it changed, and
 * disconnects. A lost peer shows as a hang (the test's timeout). */
#include <pthread.h>

#include "px_test.h"

#define NTHREADS 4
#define ROUNDS 4

static char *prog;
static int nerr;

static void *spawner(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Comm ic = MPI_COMM_NULL;
        int code = -1;
        char *args[] = {"child", NULL};
        int rc = MPI_Comm_spawn(prog, args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic, &code);
        if (rc != MPI_SUCCESS || code != MPI_SUCCESS || ic == MPI_COMM_NULL) {
            fprintf(stderr, "FAIL dyn_spawn_threads rank %d thread %d: spawn %d, code %d\n",
                    px_test_rank, t, rc, code);
            __atomic_add_fetch(&nerr, 1, __ATOMIC_RELAXED);
            continue;
        }
        int v = 1000 * px_test_rank + 10 * t + round, back = -1;
        MPI_Send(&v, 1, MPI_INT, 0, 7, ic);
        MPI_Recv(&back, 1, MPI_INT, 0, 8, ic, MPI_STATUS_IGNORE);
        if (back != 3 * v + 1) {
            fprintf(stderr, "FAIL dyn_spawn_threads rank %d thread %d: child answered %d to %d\n",
                    px_test_rank, t, back, v);
            __atomic_add_fetch(&nerr, 1, __ATOMIC_RELAXED);
        }
        MPI_Comm_disconnect(&ic);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, 0, 7, parent, MPI_STATUS_IGNORE);
        v = 3 * v + 1;
        MPI_Send(&v, 1, MPI_INT, 0, 8, parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    px_test_begin("dyn_spawn_threads");
    PX_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    prog = argv[0];
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, spawner, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    px_test_errors += nerr;
    return px_test_finish("%d threads x %d spawns of one child each, at once", NTHREADS, ROUNDS);
}
