/*
 * Multigrid smoothers, each written once over the level operations a backend provides: the
 * CPU hierarchy (mg_cycle.c) runs them, the GPU one (cuda/mg_gpu_record.cu) records them into
 * its graph. A smoother is its hr_smoother_ops (mg_smoothers.c) plus its line in the registry
 * (src/core/registry.def), which gives its name, hr_mg_smoother id and capabilities.
 *
 * Plain C so that both sides include it.
 */
#ifndef HR_MG_SMOOTHER_H
#define HR_MG_SMOOTHER_H

#ifdef __cplusplus
extern "C" {
#endif

/* What a backend does on level l of its hierarchy (ctx: the backend's state). */
typedef struct mg_level_ops {
    void (*jacobi)(void *ctx, int l);              /* one sweep weighted by the hierarchy's omega */
    void (*redblack)(void *ctx, int l, int first); /* one red-black sweep, colour `first` first */
    void (*cheby)(void *ctx, int l, int step);     /* Chebyshev-Jacobi step `step` (its coefficients) */
    int (*async)(void *ctx, int l); /* one asynchronous tile pass; 0 where the backend has none */
} mg_level_ops;

typedef struct hr_smoother_ops {
    /* Smoothing step `step` (0, 1, ...) of one smoothing on level l; reverse: the adjoint
     * order (post-smoothing of a symmetric cycle). */
    void (*smooth)(const mg_level_ops *ops, void *ctx, int l, int step, int reverse);
    int scratch; /* 1: needs the scratch grid d on every level (not only the coarsest) */
} hr_smoother_ops;

#ifdef __cplusplus
}
#endif
#endif
