#include "problem/grid.h"

#include <stdlib.h>
#include <string.h>

hr_status hr_grid_alloc(hr_grid *g, int n, hr_precision p)
{
    memset(g, 0, sizeof *g);
    if (n < 1) return HR_ERR_INVALID_ARG;
    if (!hr_layout2d_init(&g->l, n, p == HR_PREC_DOUBLE ? 8 : 4)) return HR_ERR_NO_MEMORY;
    size_t bytes = hr_layout2d_bytes(&g->l);
    bytes = (bytes + HR_GRID_ALIGN - 1) / HR_GRID_ALIGN * HR_GRID_ALIGN;
    g->base = aligned_alloc(HR_GRID_ALIGN, bytes);
    return g->base ? HR_OK : HR_ERR_NO_MEMORY;
}

void hr_grid_free(hr_grid *g)
{
    if (!g) return;
    free(g->base);
    g->base = NULL;
}

double hr_grid_get(const hr_grid *g, int i, int j)
{
    size_t k = hr_layout2d_index(&g->l, (size_t)i, (size_t)j);
    return g->l.esize == 8 ? ((const double *)g->base)[k] : (double)((const float *)g->base)[k];
}

void hr_grid_set(hr_grid *g, int i, int j, double v)
{
    size_t k = hr_layout2d_index(&g->l, (size_t)i, (size_t)j);
    if (g->l.esize == 8)
        ((double *)g->base)[k] = v;
    else
        ((float *)g->base)[k] = (float)v;
}

void hr_grid_init_rows(hr_grid *g, int r0, int r1, double bc)
{
    const int n = g->l.n;
    for (int i = r0; i < r1; i++) {
        /* whole padded row, padding included, so every page is touched here */
        size_t first = (i == 0) ? 0 : hr_layout2d_index(&g->l, (size_t)i, 0);
        size_t last = hr_layout2d_index(&g->l, (size_t)i + 1, 0);
        if (i == n + 1) last = g->l.count;
        memset((char *)g->base + first * g->l.esize, 0, (last - first) * g->l.esize);
        int edge = (i == 0 || i == n + 1);
        for (int j = 0; j <= n + 1; j++)
            if (edge || j == 0 || j == n + 1) hr_grid_set(g, i, j, bc);
    }
}
