/* Support of the mpi_f08 bindings (see px_f08.h). */
#include "px_f08.h"
#include "../op_builtin.h"

#include <stdio.h>
#include <string.h>

void *px_f08_addr(const CFI_cdesc_t *d)
{
    void *p = d->base_addr;
    if (p == (void *)&MPIR_F08_MPI_BOTTOM)
        return MPI_BOTTOM;
    if (p == (void *)&MPIR_F08_MPI_IN_PLACE)
        return MPI_IN_PLACE;
    return p;
}

/* Whether the elements are adjacent in Fortran (column-major) order. */
static int contiguous(const CFI_cdesc_t *d)
{
    CFI_index_t want = (CFI_index_t)d->elem_len;
    for (int i = 0; i < d->rank; i++) {
        if (d->dim[i].extent == 0)
            return 1;
    }
    for (int i = 0; i < d->rank; i++) {
        if (d->dim[i].extent != 1 && d->dim[i].sm != want)
            return 0;
        want *= d->dim[i].extent;
    }
    return 1;
}

static size_t elements(const CFI_cdesc_t *d)
{
    size_t n = 1;
    for (int i = 0; i < d->rank; i++)
        n *= d->dim[i].extent > 0 ? (size_t)d->dim[i].extent : 0;
    return n;
}

/* Byte offsets from base_addr of the first n elements, in array element order. */
static void offsets(const CFI_cdesc_t *d, size_t n, MPI_Aint *off)
{
    CFI_index_t idx[CFI_MAX_RANK] = {0};
    for (size_t k = 0; k < n; k++) {
        MPI_Aint o = 0;
        for (int i = 0; i < d->rank; i++)
            o += (MPI_Aint)idx[i] * (MPI_Aint)d->dim[i].sm;
        off[k] = o;
        for (int i = 0; i < d->rank; i++) {
            if (++idx[i] < d->dim[i].extent)
                break;
            idx[i] = 0;
        }
    }
}

/* Copy between the section and a packed buffer of its elements. */
static void copy_section(const CFI_cdesc_t *d, char *packed, int to_section)
{
    size_t n = elements(d), e = d->elem_len;
    MPI_Aint *off = malloc(sizeof(MPI_Aint) * (n ? n : 1));
    if (!off)
        abort();
    offsets(d, n, off);
    char *base = d->base_addr;
    for (size_t k = 0; k < n; k++) {
        if (to_section)
            memcpy(base + off[k], packed + k * e, e);
        else
            memcpy(packed + k * e, base + off[k], e);
    }
    free(off);
}

void *px_f08_tmp_begin(px_f08_tmp_t *t, const CFI_cdesc_t *d, int out)
{
    t->d = d;
    t->tmp = NULL;
    t->out = out;
    if (d->rank == 0 || contiguous(d))
        return px_f08_addr(d);
    /* copied in also for output buffers: what the call does not write keeps
     * its value */
    t->tmp = malloc(elements(d) * d->elem_len + 1);
    if (!t->tmp)
        abort();
    copy_section(d, t->tmp, 0);
    return t->tmp;
}

void px_f08_tmp_end(px_f08_tmp_t *t)
{
    if (!t->tmp)
        return;
    if (t->out)
        copy_section(t->d, t->tmp, 1);
    free(t->tmp);
    t->tmp = NULL;
}

static int unsupported(const char *routine, const char *why)
{
    fprintf(stderr, "Plexus mpi_f08: %s: non-contiguous buffer: %s\n", routine, why);
    return MPI_ERR_BUFFER;
}

int px_f08_contig(const CFI_cdesc_t *d, void **addr, const char *routine)
{
    *addr = px_f08_addr(d);
    if (d->rank == 0 || contiguous(d))
        return MPI_SUCCESS;
    return unsupported(routine, "this argument must be contiguous here (the call keeps using "
                                "it and has no datatype of its own to describe the section)");
}

static int same_layout(const CFI_cdesc_t *a, const CFI_cdesc_t *b)
{
    if (a->rank != b->rank || a->elem_len != b->elem_len)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dim[i].extent != b->dim[i].extent || a->dim[i].sm != b->dim[i].sm)
            return 0;
    return 1;
}

/* Counts and displacements in units of type index the elements of a 1-d
 * section if the type's extent becomes the section's stride. */
static int strided_type(const CFI_cdesc_t *d, MPI_Count per, MPI_Datatype type, MPI_Datatype *out,
                        const char *routine)
{
    int dim = -1;
    for (int i = 0; i < d->rank; i++) {
        if (d->dim[i].extent > 1) {
            if (dim >= 0)
                return unsupported(routine, "a section of more than one dimension described by "
                                            "counts and displacements");
            dim = i;
        }
    }
    if (per != 1 || dim < 0 || d->dim[dim].sm <= 0)
        return unsupported(routine, "counts and displacements need a datatype of one array "
                                    "element and a positive stride");
    MPI_Datatype t;
    int err = MPI_Type_create_resized(type, 0, d->dim[dim].sm, &t);
    if (err == MPI_SUCCESS)
        err = MPI_Type_commit(&t);
    if (err == MPI_SUCCESS)
        *out = t;
    return err;
}

/* The section as one element of a new datatype: its first count / per
 * array elements, each per elements of type. */
static int section_type(const CFI_cdesc_t *d, MPI_Count count, MPI_Count per, MPI_Datatype type,
                        MPI_Datatype *out, const char *routine)
{
    if (count % per != 0)
        return unsupported(routine, "the count ends inside an array element");
    size_t n = elements(d), m = (size_t)(count / per);
    if (m > n)
        return unsupported(routine, "the count exceeds the array section");
    MPI_Datatype leaf = type, cur;
    int err = MPI_SUCCESS;
    if (per > 1 && (err = MPI_Type_contiguous_c(per, type, &leaf)) != MPI_SUCCESS)
        return err;
    if (m == n) {
        /* the whole section: one strided vector per dimension */
        cur = leaf;
        for (int i = 0; i < d->rank && err == MPI_SUCCESS; i++) {
            MPI_Datatype next;
            err = MPI_Type_create_hvector_c(d->dim[i].extent, 1, d->dim[i].sm, cur, &next);
            if (cur != type)
                MPI_Type_free(&cur);
            cur = next;
        }
    } else {
        /* its first m elements */
        MPI_Aint *off = malloc(sizeof(MPI_Aint) * m);
        MPI_Count *coff = malloc(sizeof(MPI_Count) * m);
        if (!off || !coff)
            abort();
        offsets(d, m, off);
        for (size_t k = 0; k < m; k++)
            coff[k] = off[k];
        err = MPI_Type_create_hindexed_block_c((MPI_Count)m, 1, coff, leaf, &cur);
        free(coff);
        free(off);
        if (leaf != type)
            MPI_Type_free(&leaf);
    }
    if (err == MPI_SUCCESS)
        err = MPI_Type_commit(&cur);
    if (err == MPI_SUCCESS)
        *out = cur;
    return err;
}

int px_f08_sect_begin(px_f08_sect_t *s, const CFI_cdesc_t *const *bufs, int nbufs, MPI_Count count,
                      MPI_Datatype type, int shared, MPI_Op op, const char *routine)
{
    s->count = count;
    s->type = type;
    s->owned = 0;
    const CFI_cdesc_t *d = NULL;
    for (int i = 0; i < nbufs && !d; i++)
        if (bufs[i]->rank > 0 && !contiguous(bufs[i]))
            d = bufs[i];
    if (!d || count == 0)
        return MPI_SUCCESS;
    if (op != MPI_OP_NULL && !px_mpi_op_is_builtin(op))
        return unsupported(routine, "a user-defined operation would get the section's datatype "
                                    "in place of its own");
    /* buffers that share the datatype (a reduction's send and receive
     * buffers) must be laid out alike, or be MPI_IN_PLACE (or a scalar: a
     * receive buffer where it is not used) */
    for (int i = 0; shared && i < nbufs; i++)
        if (bufs[i]->base_addr != (void *)&MPIR_F08_MPI_IN_PLACE && bufs[i]->rank > 0 &&
            !same_layout(bufs[i], d))
            return unsupported(routine, "the buffers described by one datatype are laid out "
                                        "differently");
    MPI_Count size, lb, extent, tlb, textent;
    int err = MPI_Type_size_c(type, &size);
    if (err == MPI_SUCCESS)
        err = MPI_Type_get_extent_c(type, &lb, &extent);
    if (err == MPI_SUCCESS)
        err = MPI_Type_get_true_extent_c(type, &tlb, &textent);
    if (err != MPI_SUCCESS)
        return err;
    if (size == 0)
        return MPI_SUCCESS;
    /* The datatype describes the section as if it were contiguous; only a
     * datatype without gaps maps element by element onto the section. */
    if (lb != 0 || tlb != 0 || extent != size || textent != size)
        return unsupported(routine, "the datatype has gaps or a non-zero lower bound");
    MPI_Count elem = (MPI_Count)d->elem_len;
    if (elem % size != 0)
        return unsupported(routine, "an element of the datatype spans several array elements");
    MPI_Datatype t;
    if (count < 0)
        err = strided_type(d, elem / size, type, &t, routine);
    else
        err = section_type(d, count, elem / size, type, &t, routine);
    if (err != MPI_SUCCESS)
        return err;
    s->type = t;
    s->count = count < 0 ? count : 1;
    s->owned = 1;
    return MPI_SUCCESS;
}

void px_f08_sect_end(px_f08_sect_t *s)
{
    if (s->owned)
        MPI_Type_free(&s->type);
    s->owned = 0;
}

/* MPI_F_SYNC_REG(buf): an opaque call makes the compiler store buf before and
 * reload it after. */
void PMPI_F_sync_reg_f08(CFI_cdesc_t *buf);
void PMPI_F_sync_reg_f08(CFI_cdesc_t *buf) { (void)buf; }
extern __typeof__(PMPI_F_sync_reg_f08) MPI_F_sync_reg_f08
    __attribute__((weak, alias("PMPI_F_sync_reg_f08")));

/* MPI_SIZEOF(x, size): the storage size of one element of x. */
void PMPI_Sizeof_f08(CFI_cdesc_t *x, MPI_Fint *size, MPI_Fint *ierror);
void PMPI_Sizeof_f08(CFI_cdesc_t *x, MPI_Fint *size, MPI_Fint *ierror)
{
    *size = (MPI_Fint)x->elem_len;
    px_f08_err(ierror, MPI_SUCCESS);
}
extern __typeof__(PMPI_Sizeof_f08) MPI_Sizeof_f08 __attribute__((weak, alias("PMPI_Sizeof_f08")));

/* Operators == and /= of module mpi_f08 on each handle type. */
#define PX_F08_COMPARE(t)                                                                          \
    MPI_Fint px_f08_##t##_eq(const MPI_Fint *a, const MPI_Fint *b);                                \
    MPI_Fint px_f08_##t##_eq(const MPI_Fint *a, const MPI_Fint *b) { return *a == *b; }            \
    MPI_Fint px_f08_##t##_ne(const MPI_Fint *a, const MPI_Fint *b);                                \
    MPI_Fint px_f08_##t##_ne(const MPI_Fint *a, const MPI_Fint *b) { return *a != *b; }
PX_F08_COMPARE(comm)
PX_F08_COMPARE(datatype)
PX_F08_COMPARE(group)
PX_F08_COMPARE(request)
PX_F08_COMPARE(op)
PX_F08_COMPARE(info)
PX_F08_COMPARE(errhandler)
PX_F08_COMPARE(win)
PX_F08_COMPARE(file)
PX_F08_COMPARE(message)
PX_F08_COMPARE(session)

char px_f08_argv_null[1];
char px_f08_argvs_null[1];
MPI_Fint px_f08_errcodes_ignore[1];
