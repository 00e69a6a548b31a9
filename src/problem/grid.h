/*
 * The one grid layout every backend shares.
 *
 * An (n+2) x (n+2) grid (boundary ring included) is stored row-major with a row
 * pitch that is a multiple of 128 bytes, and shifted so that the first interior
 * point of every row, (i, 1), sits on a 128-byte boundary: loads of interior rows
 * start aligned on the CPU (vector loads) and on the GPU (full memory transactions).
 *
 *   element (i, j) lives at  base[offset + i * pitch + j],   0 <= i, j <= n + 1
 *
 * This header is plain C so CUDA code can include it.
 */
#ifndef HR_GRID_H
#define HR_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_GRID_ALIGN 128

typedef struct hr_layout2d {
    int n;         /* interior points per side */
    size_t esize;  /* bytes per element: 4 or 8 */
    size_t pitch;  /* elements per row, a multiple of HR_GRID_ALIGN / esize */
    size_t offset; /* elements from the aligned base to (0, 0) */
    size_t count;  /* elements to allocate from the aligned base */
} hr_layout2d;

/* Fills the layout; returns 0 if the size overflows size_t. */
static inline int hr_layout2d_init(hr_layout2d *l, int n, size_t esize)
{
    size_t a = HR_GRID_ALIGN / esize, rows = (size_t)n + 2;
    l->n = n;
    l->esize = esize;
    l->offset = a - 1;
    l->pitch = (rows + a - 1) / a * a;
    if (rows > SIZE_MAX / esize / l->pitch - 1) return 0;
    l->count = l->offset + rows * l->pitch;
    return 1;
}

static inline size_t hr_layout2d_index(const hr_layout2d *l, size_t i, size_t j)
{
    return l->offset + i * l->pitch + j;
}

static inline size_t hr_layout2d_bytes(const hr_layout2d *l)
{
    return l->count * l->esize;
}

/* A host grid: a layout plus its 128-byte aligned storage. */
typedef struct hr_grid {
    hr_layout2d l;
    void *base; /* aligned allocation, hr_layout2d_bytes() long */
} hr_grid;

/* Allocates without touching the pages (so threads can first-touch their own). */
hr_status hr_grid_alloc(hr_grid *g, int n, hr_precision p);
void hr_grid_free(hr_grid *g);

/* Pointer to element (0, 0), typed by the caller. */
static inline void *hr_grid_origin(const hr_grid *g)
{
    return (char *)g->base + g->l.offset * g->l.esize;
}

/* Element (i, j) converted to double. */
double hr_grid_get(const hr_grid *g, int i, int j);
void hr_grid_set(hr_grid *g, int i, int j, double v);

/* Sets rows [r0, r1) of the whole padded width: interior 0, boundary ring `bc`.
 * Called by the owning thread so the pages are placed near it. */
void hr_grid_init_rows(hr_grid *g, int r0, int r1, double bc);

#ifdef __cplusplus
}
#endif
#endif
