/* The machine a rank runs on: which ranks of the job share it (emulated
 * nodes on one machine count as one), whether they outnumber its CPUs, and
 * where this rank runs (PX_BIND). */
#ifndef PX_BOOT_MACHINE_H
#define PX_BOOT_MACHINE_H

#include "../util/px_status.h"

struct px_boot_info;

typedef struct px_boot_machine {
    int ranks;   /* ranks on this physical machine */
    int index;   /* this rank's index among them */
    int cpus;    /* CPUs this process may use */
    int oversub; /* the ranks outnumber the CPUs */
} px_boot_machine_t;

/* Collective over the job (one bootstrap fence, which also publishes the
 * puts made before it). */
px_status_t px_boot_machine_detect(const struct px_boot_info *boot);
/* What px_boot_machine_detect found (all zero before). */
const px_boot_machine_t *px_boot_machine(void);
/* PX_BIND=core binds this rank to its CPU now; spread remembers it for
 * px_boot_spread. */
void px_boot_bind(void);
/* PX_BIND=spread, at the end of MPI_Init: moves once to this rank's CPU. */
void px_boot_spread(void);
/* PX_BIND=spread with MPI_THREAD_MULTIPLE: binds this rank, and the
 * threads it creates from then on, to its share of the machine's CPUs when
 * the ranks here fit them and the launcher did not bind it already. */
void px_boot_share_cpus(void);

#endif
