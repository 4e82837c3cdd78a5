/* Environment queries: Init_thread/Query_thread, Initialized/Finalized before
 * and after, versions, processor name, Wtime/Wtick, Alloc_mem/Free_mem. */
#include "px_test.h"

static void check_wtime(void)
{
    double prev = MPI_Wtime(), t0, t1, tick = MPI_Wtick();
    int backwards = 0;

    for (int i = 0; i < 100000; i++) {
        double t = MPI_Wtime();
        if (t < prev)
            backwards++;
        prev = t;
    }
    PX_CHECK(backwards == 0, "MPI_Wtime went backwards %d times", backwards);
    PX_CHECK(tick > 0.0 && tick <= 0.01, "MPI_Wtick = %g", tick);

    t0 = MPI_Wtime();
    px_sleep_ms(50);
    t1 = MPI_Wtime();
    /* Seconds, not ticks or milliseconds. */
    PX_CHECK(t1 - t0 >= 0.045 && t1 - t0 < 5.0, "50 ms sleep measured as %g s", t1 - t0);
}

static void check_names(void)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1, version = -1, subversion = -1;

    memset(name, 0x7f, sizeof(name));
    MPI_Get_processor_name(name, &len);
    PX_CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "processor name len %d", len);
    if (len > 0 && len < MPI_MAX_PROCESSOR_NAME)
        PX_CHECK(name[len] == '\0' && (int)strlen(name) == len,
                 "processor name not terminated at its length %d", len);

    MPI_Get_version(&version, &subversion);
    PX_CHECK(version >= 3, "MPI_Get_version = %d.%d", version, subversion);
    PX_CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION,
             "MPI_Get_version %d.%d but mpi.h says %d.%d", version, subversion, MPI_VERSION,
             MPI_SUBVERSION);

    memset(lib, 0x7f, sizeof(lib));
    len = -1;
    MPI_Get_library_version(lib, &len);
    PX_CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING, "library version len %d", len);
    if (len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING)
        PX_CHECK(lib[len] == '\0' && (int)strlen(lib) == len,
                 "library version not terminated at its length %d", len);
}

static void check_alloc_mem(void)
{
    const size_t sizes[] = {0, 1, 4096, 1u << 20, 8u << 20};

    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        void *p = NULL;
        int rc = MPI_Alloc_mem((MPI_Aint)sizes[k], MPI_INFO_NULL, &p);
        PX_CHECK(rc == MPI_SUCCESS, "Alloc_mem(%zu) rc %d", sizes[k], rc);
        if (rc != MPI_SUCCESS)
            continue;
        if (sizes[k] > 0) {
            PX_CHECK(p != NULL, "Alloc_mem(%zu) returned NULL", sizes[k]);
            if (p == NULL)
                continue;
            px_fill(p, sizes[k], sizes[k]);
            PX_CHECK(px_verify(p, sizes[k], sizes[k]) == sizes[k],
                     "Alloc_mem(%zu) memory not usable", sizes[k]);
        }
        PX_CHECK(MPI_Free_mem(p) == MPI_SUCCESS, "Free_mem(%zu)", sizes[k]);
    }

    /* Memory from Alloc_mem works as a communication buffer. */
    {
        int n = 1 << 16, peer = (px_test_rank + 1) % px_test_size;
        int from = (px_test_rank + px_test_size - 1) % px_test_size;
        char *s = NULL, *r = NULL;
        MPI_Alloc_mem(n, MPI_INFO_NULL, &s);
        MPI_Alloc_mem(n, MPI_INFO_NULL, &r);
        px_fill(s, n, 1000 + px_test_rank);
        MPI_Sendrecv(s, n, MPI_BYTE, peer, 5, r, n, MPI_BYTE, from, 5, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        PX_CHECK(px_verify(r, n, 1000 + from) == (size_t)n, "Alloc_mem buffer data from %d wrong",
                 from);
        MPI_Free_mem(s);
        MPI_Free_mem(r);
    }
}

int main(int argc, char **argv)
{
    int flag = -1, provided = -1, queried = -1, rc;

    /* Queries allowed before MPI_Init. */
    MPI_Initialized(&flag);
    if (flag != 0) {
        fprintf(stderr, "FAIL env_query: MPI_Initialized true before init\n");
        return 1;
    }
    MPI_Finalized(&flag);
    if (flag != 0) {
        fprintf(stderr, "FAIL env_query: MPI_Finalized true before init\n");
        return 1;
    }

    rc = MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    px_test_begin("env_query");
    PX_CHECK(rc == MPI_SUCCESS, "Init_thread rc %d", rc);
    PX_CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
                 MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
                 MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
             "thread level constants not ordered");
    /* FUNNELED is the least Plexus promises; a stronger level is allowed. */
    PX_CHECK(provided >= MPI_THREAD_FUNNELED && provided <= MPI_THREAD_MULTIPLE,
             "provided thread level %d", provided);
    MPI_Query_thread(&queried);
    PX_CHECK(queried == provided, "Query_thread %d, Init_thread said %d", queried, provided);
    flag = -1;
    MPI_Initialized(&flag);
    PX_CHECK(flag == 1, "MPI_Initialized = %d after init", flag);
    flag = -1;
    MPI_Finalized(&flag);
    PX_CHECK(flag == 0, "MPI_Finalized = %d before finalize", flag);

    check_wtime();
    check_names();
    check_alloc_mem();

    {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int len = 0, version = 0, subversion = 0, total = 0, fin = -1, ini = -1;
        MPI_Get_library_version(lib, &len);
        MPI_Get_version(&version, &subversion);
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = '\0';
        MPI_Allreduce(&px_test_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Finalize();
        /* Both stay queryable, and true, after finalize. */
        MPI_Finalized(&fin);
        MPI_Initialized(&ini);
        if (fin != 1 || ini != 1) {
            fprintf(stderr,
                    "FAIL env_query rank %d: after finalize Finalized=%d "
                    "Initialized=%d\n",
                    px_test_rank, fin, ini);
            return 1;
        }
        if (total != 0) {
            if (px_test_rank == 0)
                printf("FAIL env_query np=%d: %d failed checks\n", px_test_size, total);
            return 1;
        }
        if (px_test_rank == 0)
            printf("PASS env_query np=%d: MPI %d.%d, thread level %d, '%.60s'\n", px_test_size,
                   version, subversion, provided, lib);
    }
    return 0;
}
