/*
 * The CUDA backend of the general-problem engine beyond its table (stencil_kernels.h): what a
 * benchmark or a test asks of an opened backend (hr_st_exec whose `dev` the table's open set).
 */
#ifndef HR_STENCIL_CUDA_H
#define HR_STENCIL_CUDA_H

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hr_st_exec;

/* The block shape of the sweeps, residuals and vector steps on grids of dimension `dim`:
 * bx threads along x (a multiple of 32; narrower on grids narrower than bx), by along y (bx
 * and by 0: keep the current ones), and h rows (2-D) or planes (3-D) each thread marches (0:
 * the default, up to 32, fewer where the grid has too few points to keep the device busy).
 * HR_ERR_INVALID_ARG when bx * by > 1024 or bx is not a multiple of 32. The shape never
 * changes a result's bits. */
hr_status hri_st_cuda_set_shape(struct hr_st_exec *ex, int dim, int bx, int by, int h);
void hri_st_cuda_get_shape(const struct hr_st_exec *ex, int dim, int *bx, int *by, int *h);

/* For tests, process-wide: the marching one-pass Gauss-Seidel sweeps (the star stencils', and
 * the 2-D box stencils') run on levels of at least this many unknowns (0: the default, 2^23),
 * the parity passes and the box tiles on smaller ones. All make the same bits. */
void hri_st_cuda_set_pair_min(size_t unknowns);

/* Waits for the backend's stream: HR_OK, or the status of the first CUDA failure since open. */
hr_status hri_st_cuda_sync(struct hr_st_exec *ex);

/* The first CUDA failure's text ("" when none). */
const char *hri_st_cuda_error(const struct hr_st_exec *ex);

#ifdef __cplusplus
}
#endif
#endif
