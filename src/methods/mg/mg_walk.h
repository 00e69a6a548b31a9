/*
 * The multigrid cycle's recursion, written once: the V-, W- and F-cycles and the full
 * multigrid pass, over a table of per-level operations. Three backends walk it: the model
 * problem's CPU hierarchy runs its operations (mg_cycle.c), its GPU hierarchy records them
 * into a graph (cuda/mg_gpu_record.cu), and the general engine runs its backend table's
 * (src/methods/stencil/stencil_mg.c).
 *
 * Plain C so that both sides include it.
 */
#ifndef HRI_MG_WALK_H
#define HRI_MG_WALK_H

#include "hetrelax/grid_solver.h" /* hr_cycle */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hri_mg_walk {
    void *ctx;      /* the backend's state, passed to every operation */
    int last;       /* the coarsest level's index */
    int fmg_cycles; /* V-cycles per level on the full multigrid pass's way up */
    /* level l < last: pre- and post-smoothing */
    void (*pre)(void *ctx, int l);
    void (*post)(void *ctx, int l);
    /* the residual of level l restricted to the right-hand side of l + 1, whose iterate is
     * zeroed */
    void (*down)(void *ctx, int l);
    /* level l's iterate += P (level l + 1's iterate); add 0: = P (...) */
    void (*up)(void *ctx, int l, int add);
    /* the coarsest level solved */
    void (*coarse)(void *ctx, int l);
    /* the full multigrid descent below level 0: the right-hand side of level l (its iterate
     * zero) restricted to the right-hand side of l + 1 */
    void (*fmg_down)(void *ctx, int l);
    /* optional: 1 where the rest of the cycle from level l > 0 down (of `type`; HR_CYCLE_FMG
     * on the full multigrid pass's descent) is taken elsewhere, as the GPU hands its coarse
     * levels to the CPU */
    int (*take)(void *ctx, int l, hr_cycle type);
    /* optional: up(l, 1) and then post(l) as one operation (a backend that adds the
     * prolongation inside its first smoothing pass); NULL: the two */
    void (*up_post)(void *ctx, int l);
    /* optional: pre(l) and then down(l) as one operation (a backend whose last smoothing pass
     * takes the residual as well); NULL: the two */
    void (*pre_down)(void *ctx, int l);
} hri_mg_walk;

/* One cycle of `type` (V, W or F) at level l. */
void hri_mg_walk_cycle(const hri_mg_walk *w, int l, hr_cycle type);

/* The full multigrid pass on the correction: level 0's residual down to the coarsest level,
 * solved there, then interpolated up with fmg_cycles V-cycles per level; level 0 adds its
 * interpolated correction (add0 1) or takes it (add0 0). */
void hri_mg_walk_fmg(const hri_mg_walk *w, int add0);

#ifdef __cplusplus
}
#endif
#endif
