/*
 * The coarse part of a GPU multigrid cycle on the CPU cores (--coarse-on cpu): levels L..nlev-1
 * of the hierarchy as a CPU hierarchy of their own (its level 0 is the GPU's level L), run by a
 * thread team. The GPU restricts down to level L, its right-hand
 * side comes over, the CPU runs the rest of the cycle from a zero iterate, and the
 * correction goes back. The CPU operators are bitwise the GPU's, so the cycle is too.
 *
 * Plain C so that both sides include it.
 */
#ifndef HR_MG_CPU_PART_H
#define HR_MG_CPU_PART_H

#include <stddef.h>

#include "hetrelax/mg.h"
#include "methods/mg/mg_smoother.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mg_cpu_part mg_cpu_part;

typedef struct mg_cpu_part_setup {
    int dim, nx, ny, nz; /* the part's finest level (the GPU's level L) */
    int nlev;            /* levels of the part */
    size_t esize;
    const hr_smoother_ops *smoother; /* no asynchronous passes here: async3 smooths red-black */
    int pre, post;
    double omega;
    int symmetric;
    int threads;   /* 0: one per core */
    int hugepages; /* grids advised for huge pages (hr_tuning.hugepages resolved) */
} mg_cpu_part_setup;

hr_status hri_mg_cpu_part_create(const mg_cpu_part_setup *s, mg_cpu_part **out);
void hri_mg_cpu_part_free(mg_cpu_part *p);
/* Bytes of one grid of the part's finest level (its whole layout, ring included). */
size_t hri_mg_cpu_part_bytes(const mg_cpu_part *p);
/* On right-hand side `hf` (h^2 f, a whole grid in the finest level's layout), from a zero
 * iterate (fresh) or from the iterate the previous run left (the second visit of a W- or
 * F-cycle): one cycle of `type` (HR_MG_CYCLE_FMG: the FMG pass, the finest level prolonged
 * into, not added to), the iterate written to `u_out` (a whole grid). */
void hri_mg_cpu_part_run(mg_cpu_part *p, const void *hf, void *u_out, hr_mg_cycle type, int fresh);

#ifdef __cplusplus
}
#endif
#endif
