#include "core/grid.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/sysmem.h"

hr_status hri_grid_alloc(hr_grid *g, const hr_grid_layout *l)
{
    return hri_grid_alloc_huge(g, l, 0);
}

hr_status hri_grid_alloc_huge(hr_grid *g, const hr_grid_layout *l, int hugepages)
{
    memset(g, 0, sizeof *g);
    if (l->nx < 1 || l->ny < 1 || l->nz < 1) return HR_ERR_INVALID_ARG;
    g->l = *l;
    size_t bytes = hr_layout_bytes(&g->l);
    bytes = (bytes + HR_GRID_ALIGN - 1) / HR_GRID_ALIGN * HR_GRID_ALIGN;
    g->base = hri_alloc_big(HR_GRID_ALIGN, bytes, hugepages);
    return g->base ? HR_OK : HR_ERR_NO_MEMORY;
}

void hri_grid_free(hr_grid *g)
{
    if (!g) return;
    free(g->base);
    g->base = NULL;
}

double hri_grid_get3(const hr_grid *g, int i, int j, int k)
{
    size_t x = hr_layout_index(&g->l, (size_t)i, (size_t)j, (size_t)k);
    return g->l.esize == 8 ? ((const double *)g->base)[x] : (double)((const float *)g->base)[x];
}

void hri_grid_set3(hr_grid *g, int i, int j, int k, double v)
{
    size_t x = hr_layout_index(&g->l, (size_t)i, (size_t)j, (size_t)k);
    if (g->l.esize == 8)
        ((double *)g->base)[x] = v;
    else
        ((float *)g->base)[x] = (float)v;
}

double hri_grid_get(const hr_grid *g, int i, int j)
{
    return hri_grid_get3(g, i, j, 0);
}

void hri_grid_set(hr_grid *g, int i, int j, double v)
{
    hri_grid_set3(g, i, j, 0, v);
}

/* Sets the ring of one 2-D slice (plane k) to bc; the whole plane when `all`. */
static void ring_slice(hr_grid *g, int k, int all, double bc)
{
    const int nx = g->l.nx, ny = g->l.ny;
    for (int i = 0; i <= ny + 1; i++) {
        if (all || i == 0 || i == ny + 1) {
            for (int j = 0; j <= nx + 1; j++)
                hri_grid_set3(g, i, j, k, bc);
        } else {
            hri_grid_set3(g, i, 0, k, bc);
            hri_grid_set3(g, i, nx + 1, k, bc);
        }
    }
}

void hri_grid_init_rows(hr_grid *g, int r0, int r1, double bc)
{
    const hr_grid_layout *l = &g->l;
    const int last = hr_layout_outer(l) - 1;
    const size_t stride = hr_layout_outer_stride(l);
    if (r0 < 0) r0 = 0;
    if (r1 > last + 1) r1 = last + 1;
    if (r0 >= r1) return;
    /* whole outer slices, padding included, so every page is touched here */
    size_t first = r0 == 0 ? 0 : l->offset + (size_t)r0 * stride;
    size_t end = r1 == last + 1 ? l->count : l->offset + (size_t)r1 * stride;
    memset((char *)g->base + first * l->esize, 0, (end - first) * l->esize);
    if (bc == 0.0) return;
    for (int r = r0; r < r1; r++) {
        if (l->dim == 3) {
            ring_slice(g, r, r == 0 || r == last, bc);
        } else {
            const int nx = l->nx;
            for (int j = 0; j <= nx + 1; j++)
                if (r == 0 || r == last || j == 0 || j == nx + 1) hri_grid_set3(g, r, j, 0, bc);
        }
    }
}
