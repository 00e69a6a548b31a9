/* CPU sweep and residual building blocks, in single and double precision. */
#ifndef HR_JACOBI2D_CPU_H
#define HR_JACOBI2D_CPU_H

#include <stddef.h>

#include "core/stencil.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The variants of the spmd kernel (their registry ids): streaming stores when the grids
 * exceed the last-level cache, or always (spmd-nt). */
enum { HR_SPMD_AUTO_STORES = 0, HR_SPMD_NT = 1 };

/* One Jacobi sweep over rows [i0, i1) and columns [j0, j1) of the grid whose (0, 0)
 * elements are u and un (same pitch). */
void hri_cpu_sweep_f32(const float *u, float *un, hr_rhs_view rhs, size_t pitch, int i0, int i1, int j0,
                      int j1);
void hri_cpu_sweep_f64(const double *u, double *un, hr_rhs_view rhs, size_t pitch, int i0, int i1, int j0,
                      int j1);

/* Type-dispatching wrappers (esize 4 or 8). */
static inline void hr_cpu_sweep(size_t esize, const void *u, void *un, hr_rhs_view rhs, size_t pitch, int i0,
                                int i1, int j0, int j1)
{
    if (esize == 8)
        hri_cpu_sweep_f64((const double *)u, (double *)un, rhs, pitch, i0, i1, j0, j1);
    else
        hri_cpu_sweep_f32((const float *)u, (float *)un, rhs, pitch, i0, i1, j0, j1);
}

#ifdef __cplusplus
}
#endif
#endif
