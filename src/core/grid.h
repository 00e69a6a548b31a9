/*
 * The one grid layout every backend shares, for 2-D and 3-D grids.
 *
 * A grid of nx x ny [x nz] interior points plus a one-point boundary ring (a ghost ring
 * for subdomains) is stored with x (column j) contiguous, then y (row i), then z
 * (plane k). The row pitch is a multiple of 128 bytes and the grid is shifted so that
 * the first interior point of every row, (i, 1[, k]), sits on a 128-byte boundary:
 * loads of interior rows start aligned on the CPU (vector loads) and on the GPU (full
 * memory transactions). The plane stride is pitch * (ny + 2).
 *
 *   element (i, j, k) lives at  base[offset + k * plane + i * pitch + j]
 *   0 <= j <= nx + 1,  0 <= i <= ny + 1,  k = 0 in 2-D, 0 <= k <= nz + 1 in 3-D
 *
 * This header is plain C so CUDA code can include it.
 */
#ifndef HR_GRID_H
#define HR_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal_api.h"
#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_GRID_ALIGN 128

typedef struct hr_grid_layout {
    int dim;        /* 2 or 3 */
    int nx, ny, nz; /* interior points per axis (nz = 1 in 2-D) */
    size_t esize;   /* bytes per element: 4 or 8 */
    size_t pitch;   /* elements per row, a multiple of HR_GRID_ALIGN / esize, >= nx + 2 */
    size_t plane;   /* elements per plane: pitch * (ny + 2) */
    size_t offset;  /* elements from the aligned base to (0, 0, 0) */
    size_t count;   /* elements to allocate from the aligned base */
} hr_grid_layout;

/* Fills the layout of a dim-D grid (nz ignored in 2-D); returns 0 if a size overflows. */
static inline int hr_layout_init(hr_grid_layout *l, int dim, int nx, int ny, int nz, size_t esize)
{
    size_t a = HR_GRID_ALIGN / esize, cols = (size_t)nx + 2, rows = (size_t)ny + 2;
    size_t planes = dim == 3 ? (size_t)nz + 2 : 1;
    l->dim = dim;
    l->nx = nx;
    l->ny = ny;
    l->nz = dim == 3 ? nz : 1;
    l->esize = esize;
    l->offset = a - 1;
    l->pitch = (cols + a - 1) / a * a;
    if (rows > SIZE_MAX / esize / l->pitch) return 0;
    l->plane = l->pitch * rows;
    if (planes > (SIZE_MAX / esize - l->offset) / l->plane - 1) return 0;
    l->count = l->offset + planes * l->plane;
    return 1;
}

/* The outer (slowest) extent including the ring: rows in 2-D, planes in 3-D. */
static inline int hr_layout_outer(const hr_grid_layout *l)
{
    return (l->dim == 3 ? l->nz : l->ny) + 2;
}

/* Elements between consecutive outer slices (a row in 2-D, a plane in 3-D). */
static inline size_t hr_layout_outer_stride(const hr_grid_layout *l)
{
    return l->dim == 3 ? l->plane : l->pitch;
}

static inline size_t hr_layout_index(const hr_grid_layout *l, size_t i, size_t j, size_t k)
{
    return l->offset + k * l->plane + i * l->pitch + j;
}

static inline size_t hr_layout_bytes(const hr_grid_layout *l)
{
    return l->count * l->esize;
}

/* Interior points. */
static inline size_t hr_layout_points(const hr_grid_layout *l)
{
    return (size_t)l->nx * (size_t)l->ny * (size_t)l->nz;
}

/* A host grid: a layout plus its 128-byte aligned storage. */
typedef struct hr_grid {
    hr_grid_layout l;
    void *base; /* aligned allocation, hr_layout_bytes() long */
} hr_grid;

/* Allocates without touching the pages (so threads can first-touch their own). */
hr_status hri_grid_alloc(hr_grid *g, const hr_grid_layout *l);
/* The same, big grids advised for transparent huge pages when `hugepages` (the knob
 * hr_tuning.hugepages resolved: 0 or 1). */
HR_INTERNAL_API hr_status hri_grid_alloc_huge(hr_grid *g, const hr_grid_layout *l, int hugepages);
HR_INTERNAL_API void hri_grid_free(hr_grid *g);

/* Pointer to element (0, 0, 0), typed by the caller. */
static inline void *hr_grid_origin(const hr_grid *g)
{
    return (char *)g->base + g->l.offset * g->l.esize;
}

/* Element (i, j[, k]) converted to double. */
double hri_grid_get(const hr_grid *g, int i, int j);
void hri_grid_set(hr_grid *g, int i, int j, double v);
HR_INTERNAL_API double hri_grid_get3(const hr_grid *g, int i, int j, int k);
HR_INTERNAL_API void hri_grid_set3(hr_grid *g, int i, int j, int k, double v);

/* Sets outer slices [r0, r1) (rows in 2-D, planes in 3-D) of the whole padded extent:
 * interior 0, boundary ring `bc`. Called by the owning thread so the pages are placed
 * near it. */
void hri_grid_init_rows(hr_grid *g, int r0, int r1, double bc);

#ifdef __cplusplus
}
#endif
#endif
