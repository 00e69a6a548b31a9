/*
 * Red-black Gauss-Seidel / SOR on the CPU: in-place colour sweeps over boxes (the
 * operator-layer form, reusable by subdomains and multigrid smoothers). A point (i, j, k)
 * has colour (i + j + k) & 1 (k = 0 in 2-D); each point of one colour reads only points of
 * the other colour, so the order inside one colour never changes a bit of the result.
 * The update is HR_RB_UPDATE in common/stencil.h.
 */
#ifndef HR_REDBLACK_CPU_H
#define HR_REDBLACK_CPU_H

#include "reference/stencil_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The threaded red-black kernels (their registry ids): rb-tiles, rb-fused. */
enum { HR_RB_CPU_TILES = 0, HR_RB_CPU_FUSED = 1 };

typedef struct hr_rb_args {
    const hr_grid_layout *l;
    void *u; /* element (0, 0, 0) of the one grid, updated in place */
    hr_rhs_view rhs;
    double omega; /* 1: plain Gauss-Seidel */
} hr_rb_args;

/* The points of `colour` in `box`, row by row with stride 2: the reference. */
void hri_cpu_rb_box(const hr_rb_args *a, const hr_box *box, int colour);

/* Same result, the red-black report's unrolling: rows by four, the colour's points by two (a 4 x 4
 * mini-tile holds 8 points of one colour); rows with the inline spike take the row path. */
void hri_cpu_rb_box_unrolled(const hr_rb_args *a, const hr_box *box, int colour);

/* One full iteration (colour 0, then colour 1) over the interior: the sequential reference. */
void hri_cpu_rb_iteration(const hr_rb_args *a);

#ifdef __cplusplus
}
#endif
#endif
