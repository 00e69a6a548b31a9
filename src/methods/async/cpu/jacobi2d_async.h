/*
 * cpu-threads async0..async3: the asynchronous schedules of Venkatasubramanian & Vuduc section 3.4
 * (figures 7-10) on CPU threads. Definitions (alpha, passes, Teff) in docs/async.md.
 *
 * One CPU thread plays one CUDA thread block: it owns a rectangle of the grid and keeps
 * private tiles ("shared memory" B1, B2 or B) of that rectangle plus a one-point ring.
 * The global grids u[0], u[1] play device memory.
 */
#ifndef HR_JACOBI2D_ASYNC_H
#define HR_JACOBI2D_ASYNC_H

#include <stddef.h>

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The variants; the numbers are the paper's. */
enum { HR_ASYNC0 = 0, HR_ASYNC1 = 1, HR_ASYNC2 = 2, HR_ASYNC3 = 3 };

/* Sweeps in one full pass (between two global synchronisations) for a variant and
 * alpha: async0-2 run the figures' alpha/2 double sweeps (integer division) and one
 * final Jacobi step, so 2*floor(alpha/2) + 1 (alpha = 1: one synchronous sweep);
 * async3 runs alpha in-place sweeps and the final step, alpha + 1. */
static inline int hr_async_pass_sweeps(int variant, int alpha)
{
    return variant == HR_ASYNC3 ? alpha + 1 : 2 * (alpha / 2) + 1;
}

/* What one thread's pass works on. Global pointers are shifted so that tile element
 * (ii, jj) and global element (i0 + ii, j0 + jj) have the same indices. */
typedef struct hr_async_view {
    void *tile[2];                  /* B1, B2 (async3: B only), element (0, 0) */
    const void *hf;                 /* h^2 f tile (pitch tp) or NULL for the inline spike */
    void *row;                      /* async3: one row of scratch, index 0..bj+1 */
    size_t tp;                      /* tile pitch (elements) */
    void *gin, *gout;               /* device-memory grids: pass input (and fringe exchange), output */
    size_t gp;                      /* global pitch */
    int bi, bj;                     /* block rows and columns */
    int si, sj;                     /* spike in tile coordinates; 0 when not in this block */
    int has_n, has_s, has_w, has_e; /* a neighbouring thread block on that side */
} hr_async_view;

#ifdef __cplusplus
}
#endif
#endif
