/* Prints every MPI_T control variable, one per line, without MPI_Init:
 *   name <TAB> category <TAB> datatype <TAB> value <TAB> description
 * (an enumeration's value by its item's name); with --pvars the
 * performance variables instead. mpit_params.py compares these with
 * `pxinfo --params` and docs/tools.md. Exits 1 when a call fails. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed;

#define T(call)                                                                                    \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            fprintf(stderr, "%s returned %d\n", #call, rc_);                                       \
            failed = 1;                                                                            \
        }                                                                                          \
    } while (0)

/* --pvars: name <TAB> class <TAB> bound to a communicator (0/1) <TAB> description */
static int print_pvars(void)
{
    int n = 0;
    T(MPI_T_pvar_get_num(&n));
    for (int i = 0; i < n; i++) {
        char name[128], desc[4096];
        int nl = sizeof(name), dl = sizeof(desc), verbosity, cls, bind, ro, cont, atomic;
        MPI_Datatype type;
        MPI_T_enum en;
        T(MPI_T_pvar_get_info(i, name, &nl, &verbosity, &cls, &type, &en, desc, &dl, &bind, &ro,
                              &cont, &atomic));
        const char *cname = cls == MPI_T_PVAR_CLASS_COUNTER ? "COUNTER"
                            : cls == MPI_T_PVAR_CLASS_LEVEL ? "LEVEL"
                            : cls == MPI_T_PVAR_CLASS_TIMER ? "TIMER"
                                                            : "?";
        printf("%s\t%s\t%d\t%s\n", name, cname, bind == MPI_T_BIND_MPI_COMM, desc);
    }
    T(MPI_T_finalize());
    return failed;
}

int main(int argc, char **argv)
{
    int provided, n = 0, ncat = 0;
    T(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    if (argc > 1 && !strcmp(argv[1], "--pvars"))
        return print_pvars();
    T(MPI_T_cvar_get_num(&n));
    T(MPI_T_category_get_num(&ncat));
    char(*cat)[64] = calloc((size_t)n + 1, sizeof(*cat));
    for (int c = 0; c < ncat; c++) {
        char name[64];
        int len = sizeof(name), nc = 0;
        T(MPI_T_category_get_info(c, name, &len, NULL, NULL, &nc, NULL, NULL));
        int *idx = malloc(sizeof(int) * (size_t)(nc + 1));
        T(MPI_T_category_get_cvars(c, nc, idx));
        for (int k = 0; k < nc; k++)
            if (idx[k] >= 0 && idx[k] < n)
                snprintf(cat[idx[k]], sizeof(cat[0]), "%s", name);
        free(idx);
    }
    for (int i = 0; i < n; i++) {
        char name[128], desc[4096], value[1024] = "";
        int nl = sizeof(name), dl = sizeof(desc), verbosity, bind, scope, count;
        MPI_Datatype type;
        MPI_T_enum en;
        MPI_T_cvar_handle h;
        T(MPI_T_cvar_get_info(i, name, &nl, &verbosity, &type, &en, desc, &dl, &bind, &scope));
        T(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        const char *tname = "?";
        if (type == MPI_CHAR) {
            tname = "MPI_CHAR";
            if (count <= (int)sizeof(value))
                T(MPI_T_cvar_read(h, value));
        } else if (type == MPI_INT) {
            int v = 0;
            T(MPI_T_cvar_read(h, &v));
            tname = en == MPI_T_ENUM_NULL ? "MPI_INT" : "MPI_INT+enum";
            if (en == MPI_T_ENUM_NULL) {
                snprintf(value, sizeof(value), "%d", v);
            } else {
                int iv, len = sizeof(value);
                T(MPI_T_enum_get_item(en, v, &iv, value, &len));
            }
        } else if (type == MPI_UNSIGNED_LONG_LONG) {
            unsigned long long v = 0;
            T(MPI_T_cvar_read(h, &v));
            tname = "MPI_UNSIGNED_LONG_LONG";
            snprintf(value, sizeof(value), "%llu", v);
        } else if (type == MPI_DOUBLE) {
            double v = 0;
            T(MPI_T_cvar_read(h, &v));
            tname = "MPI_DOUBLE";
            snprintf(value, sizeof(value), "%.17g", v);
        }
        T(MPI_T_cvar_handle_free(&h));
        printf("%s\t%s\t%s\t%s\t%s\n", name, cat[i], tname, value, desc);
    }
    T(MPI_T_finalize());
    free(cat);
    return failed;
}
