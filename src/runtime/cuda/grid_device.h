/*
 * A relaxation kernel's device grid (the solver's padded layout, hr_grid_layout) and the
 * caller's arrays in GPU memory (hr_grid_solver_solve_device): the interior in and out,
 * converted between fp32 and fp64 on the device, and the relative residual computed where
 * the grid lives. C, so that the C glue of the red-black kernels calls it too.
 */
#ifndef HR_GRID_DEVICE_H
#define HR_GRID_DEVICE_H

#include <stddef.h>

#include "core/solver_internal.h" /* hr_devio */
#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hri_dev_grid {
    int device;
    void *stream;        /* the kernel's cudaStream_t: every copy is ordered with its sweeps */
    int dim, nx, ny, nz; /* interior extents (nz = 1 in 2-D) */
    size_t esize;        /* 4 or 8 */
    size_t pitch, plane; /* elements per row and per plane */
    size_t offset;       /* elements from an allocation's start to point (0, 0, 0) */
    const void *hf;      /* allocation start of the h^2 f grid, or NULL: the inline spike below */
    int spike_i, spike_j, spike_k; /* spike_i < 0: f = 0 */
} hri_dev_grid;

/* The interior of grid `dst` (an allocation start of g's layout) from the caller's array
 * `src` (x fastest; fp32 when single, else fp64): dst = mul * (pre * src), each product
 * skipped when its factor is 1, as the host forms h^2 f from a scaled f (pre: the problem's
 * scale, mul: h^2) and an initial guess (1, 1). Waits for the copy. */
hr_status hri_dev_grid_in(const hri_dev_grid *g, void *dst, const void *src, int single, double pre, double mul,
                          char *why, size_t why_size);

/* The interior of grid `src` (an allocation start) into the caller's array `dst` (x fastest;
 * fp32 when single, else fp64). Waits for the copy. */
hr_status hri_dev_grid_out(const hri_dev_grid *g, const void *src, void *dst, int single, char *why,
                           size_t why_size);

/* A kernel's device_io (solver_internal.h) on its grids: HR_DEVIO_X the interior of u out,
 * HR_DEVIO_RHS the h^2 f grid (g->hf) from f scaled by pre and h2, HR_DEVIO_X0 the initial guess
 * into u and, where the kernel has a second grid, into u2 (may be NULL). */
hr_status hri_dev_grid_io(const hri_dev_grid *g, hr_devio what, void *u, void *u2, void *ptr, int single, double pre,
                          double h2, char *why, size_t why_size);

/* ||h^2 f - A u|| / ||h^2 f + boundary terms|| of grid `u` (an allocation start), the value
 * the host's residual gives (the device residual of the Jacobi kernels, same reductions). */
hr_status hri_dev_grid_residual(const hri_dev_grid *g, const void *u, double *rel, char *why, size_t why_size);

#ifdef __cplusplus
}
#endif
#endif
