/* CPU sweep and residual building blocks, in single and double precision. */
#ifndef HR_JACOBI2D_CPU_H
#define HR_JACOBI2D_CPU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The right-hand side as a kernel sees it: an h^2 f grid (same layout as u), or,
 * when hf is NULL, the inline spike h^2 f = 1 at (spike_i, spike_j). */
typedef struct hr_rhs_view {
    const void *hf; /* pointer to element (0, 0) of the h^2 f grid, or NULL */
    int spike_i;    /* spike position (row, column) when hf is NULL */
    int spike_j;
} hr_rhs_view;

/* One Jacobi sweep over rows [i0, i1) and columns [j0, j1) of the grid whose (0, 0)
 * elements are u and un (same pitch). */
void hr_cpu_sweep_f32(const float *u, float *un, hr_rhs_view rhs, size_t pitch, int i0, int i1, int j0,
                      int j1);
void hr_cpu_sweep_f64(const double *u, double *un, hr_rhs_view rhs, size_t pitch, int i0, int i1, int j0,
                      int j1);

/* The same sweep with streaming (non-temporal) stores of the new grid; ends with a store
 * fence so the results are visible to other threads after the caller's barrier. */
void hr_cpu_sweep_stream_f32(const float *u, float *un, hr_rhs_view rhs, size_t pitch, int i0, int i1, int j0,
                             int j1);
void hr_cpu_sweep_stream_f64(const double *u, double *un, hr_rhs_view rhs, size_t pitch, int i0, int i1,
                             int j0, int j1);

/* Adds to *rr and *bb the sums of r^2 and b^2 over interior rows [i0, i1) of an n x n
 * grid, in double: A u = b with A = 4I - neighbours (scaled by h^2), b = h^2 f plus the
 * boundary values, r = b - A u. */
void hr_cpu_residual_f32(const float *u, hr_rhs_view rhs, size_t pitch, int n, int i0, int i1, double *rr,
                         double *bb);
void hr_cpu_residual_f64(const double *u, hr_rhs_view rhs, size_t pitch, int n, int i0, int i1, double *rr,
                         double *bb);

/* Type-dispatching wrappers (esize 4 or 8). */
static inline void hr_cpu_sweep_stream(size_t esize, const void *u, void *un, hr_rhs_view rhs, size_t pitch,
                                       int i0, int i1, int j0, int j1)
{
    if (esize == 8)
        hr_cpu_sweep_stream_f64((const double *)u, (double *)un, rhs, pitch, i0, i1, j0, j1);
    else
        hr_cpu_sweep_stream_f32((const float *)u, (float *)un, rhs, pitch, i0, i1, j0, j1);
}

static inline void hr_cpu_sweep(size_t esize, const void *u, void *un, hr_rhs_view rhs, size_t pitch, int i0,
                                int i1, int j0, int j1)
{
    if (esize == 8)
        hr_cpu_sweep_f64((const double *)u, (double *)un, rhs, pitch, i0, i1, j0, j1);
    else
        hr_cpu_sweep_f32((const float *)u, (float *)un, rhs, pitch, i0, i1, j0, j1);
}

static inline void hr_cpu_residual(size_t esize, const void *u, hr_rhs_view rhs, size_t pitch, int n, int i0,
                                   int i1, double *rr, double *bb)
{
    if (esize == 8)
        hr_cpu_residual_f64((const double *)u, rhs, pitch, n, i0, i1, rr, bb);
    else
        hr_cpu_residual_f32((const float *)u, rhs, pitch, n, i0, i1, rr, bb);
}

#ifdef __cplusplus
}
#endif
#endif
