/* Run with PX_TOPO naming tests/topo/pxfab-fattree.json and ranks on the
 * emulated hosts node0..node3 (node0, node1 on leaf0; node2, node3 on
 * leaf1): every rank must map every rank onto its host and see the same,
 * correct hop counts (0 on one host, 1 on one leaf, 3 across the spines).
 * With PXTEST_FLAT=1 (no PX_TOPO) the job must be flat: no hops known.
 * With PXTEST_HOPS_FROM=FILE the hop counts wanted are those of FILE loaded
 * here, by the model alone (a description with forwarding tables: the
 * job's shared copy must keep them). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int flat = getenv("PXTEST_FLAT") != NULL;
    const char *from = getenv("PXTEST_HOPS_FROM");
    px_topo_t *ref = NULL;
    char err[256];
    if (from && px_topo_load(from, &ref, err, sizeof(err)) != PX_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char name[MPI_MAX_PROCESSOR_NAME], *names = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    int len;
    MPI_Get_processor_name(name, &len);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    int *mine = malloc(sizeof(int) * (size_t)size * (size_t)size);
    int *root = malloc(sizeof(int) * (size_t)size * (size_t)size);
    for (int a = 0; a < size; a++)
        for (int b = 0; b < size; b++) {
            int h = px_topo_job_hops(a, b);
            mine[a * size + b] = h;
            const char *na = names + (size_t)a * MPI_MAX_PROCESSOR_NAME;
            const char *nb = names + (size_t)b * MPI_MAX_PROCESSOR_NAME;
            /* node<i>: leaf i / 2 */
            int want =
                flat  ? -1
                : ref ? px_topo_hops(ref, px_topo_host_find(ref, na), px_topo_host_find(ref, nb))
                : !strcmp(na, nb)                        ? 0
                : (na[4] - '0') / 2 == (nb[4] - '0') / 2 ? 1
                                                         : 3;
            if (h != want) {
                fprintf(stderr, "rank %d: hops %d (%s) -> %d (%s) = %d, want %d\n", rank, a, na, b,
                        nb, h, want);
                bad++;
            }
        }
    for (int r = 0; r < size && !flat; r++) {
        px_topo_t *t = px_topo_job();
        int h = px_topo_job_host(r);
        if (!t || h < 0 ||
            strcmp(px_topo_host_name(t, h), names + (size_t)r * MPI_MAX_PROCESSOR_NAME)) {
            fprintf(stderr, "rank %d: rank %d is not mapped onto its host\n", rank, r);
            bad++;
        }
    }
    if (flat && px_topo_job() != NULL) {
        fprintf(stderr, "rank %d: a fabric without PX_TOPO\n", rank);
        bad++;
    }
    memcpy(root, mine, sizeof(int) * (size_t)size * (size_t)size);
    MPI_Bcast(root, size * size, MPI_INT, 0, MPI_COMM_WORLD);
    if (memcmp(root, mine, sizeof(int) * (size_t)size * (size_t)size)) {
        fprintf(stderr, "rank %d: hop counts differ from rank 0's\n", rank);
        bad++;
    }
    int total = 0;
    MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (!total)
            printf("PASS topo_ranks np=%d: %s\n", size, flat ? "flat" : "hop counts agree");
        else
            printf("FAIL topo_ranks np=%d: %d errors\n", size, total);
    }
    free(names);
    free(mine);
    free(root);
    if (ref)
        px_topo_free(ref);
    MPI_Finalize();
    return total ? 1 : 0;
}
