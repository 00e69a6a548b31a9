/*
 * Internal pieces shared by the CUDA sources: the device state of a GPU solver, the
 * checked-call macros, the kernel-family interface and the point update.
 *
 * A kernel family is one templated kernel (float and double from one source) plus its
 * launcher. One launch reads grid d_u[dcur] and writes d_u[1 - dcur]; the driver in
 * gpu_solver.cu flips dcur after every launch, so "one launch" is one logical swap.
 */
#ifndef HR_GPU_INTERNAL_CUH
#define HR_GPU_INTERNAL_CUH

#include <cuda_runtime.h>

#include "core/error.h"
#include "core/solver_internal.h"
#include "core/stencil.h"

/* ------------------------------------------------------------ checked calls */

/* Records "call failed at file:line: name: text" in the solver and maps the CUDA error
 * to an hr_status. Returns that status. */
hr_status hri_cuda_fail(hr_solver *s, cudaError_t e, const char *call, const char *file, int line);

/* Every CUDA call in a solver path goes through HR_CU: on failure the call, file and
 * line go into the solver's error text and the function returns the status. */
#define HR_CU(s, call)                                                                                       \
    do {                                                                                                     \
        cudaError_t hr_cu_e_ = (call);                                                                       \
        if (hr_cu_e_ != cudaSuccess) return hri_cuda_fail((s), hr_cu_e_, #call, __FILE__, __LINE__);          \
    } while (0)

/* Same, jumping to a cleanup label with st set. */
#define HR_CU_GOTO(s, st, call, label)                                                                       \
    do {                                                                                                     \
        cudaError_t hr_cu_e_ = (call);                                                                       \
        if (hr_cu_e_ != cudaSuccess) {                                                                       \
            (st) = hri_cuda_fail((s), hr_cu_e_, #call, __FILE__, __LINE__);                                   \
            goto label;                                                                                      \
        }                                                                                                    \
    } while (0)

/* A launch is checked by the error it leaves behind (bad configuration, no image). */
#define HR_LAUNCHED() cudaGetLastError()

/* -------------------------------------------------------------- the state */

typedef struct hr_gpu_shape {
    int bx, by, h; /* block edges in threads; h: rows (2-D) or planes (3-D) per thread, per family */
} hr_gpu_shape;

struct hr_gpu_family;

typedef struct hr_gpu {
    const struct hr_gpu_family *fam;
    const char *name; /* the kernel's name (the table entry's) */
    unsigned caps;    /* the table entry's HR_CAP_* */
    int dev, sms, cc_major, cc_minor;
    size_t smem_optin; /* largest dynamic shared memory a block may opt into */
    size_t tex_align, tex_pitch_align;
    int tex2d_max_w, tex2d_max_h;
    cudaStream_t stream;
    int dim, nx, ny, nz; /* interior extents (nz = 1 in 2-D) */
    int n;               /* nx: the square-only families read it */
    int dbl;
    hr_rhs_view spike; /* spike_i < 0: none (or an h^2 f grid) */
    double omega;      /* 1: plain Jacobi */
    size_t esize;
    size_t pitch, offset; /* device layout in elements: padded (hr_grid_layout) or (nx+2, 0) */
    size_t plane;         /* elements per plane: pitch * (ny + 2) */
    size_t alloc_elems;   /* per grid: the layout's count plus one spare row */
    void *d_u[2], *d_hf;
    int dcur; /* grid holding the current solution */
    hr_gpu_shape shape;
    const char *shape_from; /* "env" (tuning.gpu_shape), "cache", "shipped", "default" or "candidate" */
    int alpha;
    int split; /* > 0: `tuned` sweeps as two regions split at this row/plane (tuning.gpu_split, tests) */
    const hr_tuning *tune; /* the options' knobs (the cache file, PDL); NULL: the defaults */
    cudaTextureObject_t tex[2];
    double *d_part, *h_res;
    int nparts;
    cudaGraphExec_t graph[2]; /* G full passes starting from parity 0 / 1 */
    long graph_sweeps;        /* sweeps one replay does */
    int registered_u, registered_hf;
} hr_gpu;

/* One kernel family. */
typedef struct hr_gpu_family {
    int padded;          /* device grid on the padded layout (else rows of nx+2, no padding) */
    int hilo;            /* doubles as separate hi/lo words in shared memory */
    hr_gpu_shape def[2]; /* default shape for float, double */
    const hr_gpu_shape *cands;
    int ncands;
    /* 0 if shape `sh` can run this problem; else writes why. */
    int (*check)(const hr_gpu *g, hr_gpu_shape sh, char *why, size_t len);
    /* Per-shape preparation (shared-memory limits, textures); may be NULL. */
    cudaError_t (*prepare)(hr_gpu *g);
    /* One launch doing `sweeps` sweeps from d_u[dcur] into d_u[1 - dcur]. */
    cudaError_t (*launch)(hr_gpu *g, int sweeps, cudaStream_t st);
    /* Sweeps the next launch does, given `remaining` (>= 1) still to do. */
    int (*pass)(const hr_gpu *g, long remaining);
    int variant; /* which instantiation a shared launcher uses (per file) */
} hr_gpu_family;

/* Families, defined next to their kernels: one per HR_GPU_KERNEL line of the registry
 * (src/core/registry.def), whose table points at them. */
#define HR_GPU_KERNEL(name, family, problems, caps, summary) extern "C" const hr_gpu_family family;
#include "core/registry.def"

/* One sweep per launch: the synchronous ladder. */
int hri_gpu_pass_one(const hr_gpu *g, long remaining);
/* Shape checks shared by several families. */
int hri_gpu_check_block(const hr_gpu *g, hr_gpu_shape sh, int rows_per_thread, char *why, size_t len);

/* Device residual ||f - A u|| / ||b|| of grid d_u[dcur] (same formula and scaled norms
 * as hri_cpu_residual_box). */
hr_status hri_gpu_residual_compute(hr_solver *s, hr_gpu *g, double *rel);
/* The residual's partial sums for ny * nz rows: one block a row, at most 1024. */
int hri_gpu_residual_parts(int ny, int nz);

/* 1: launch sweeps with programmatic dependent launch (compute capability >= 9 and
 * tuning.gpu_pdl not off). Kernels launched so must call cudaGridDependencySynchronize()
 * before touching memory. */
int hri_gpu_pdl(const hr_gpu *g);

/* Applies a shape: checks it, prepares the family and rebuilds the graphs. */
hr_status hri_gpu_apply_shape(hr_solver *s, hr_gpu *g, hr_gpu_shape sh);
/* Copies the current device grid into `dst` (host, the solver's layout). */
hr_status hri_gpu_download(hr_solver *s, hr_gpu *g, void *dst);

/* The tuning cache (gpu_tune.cu): the entry for this device, kernel, precision, dimension
 * and alpha with the nearest extents; then the shapes shipped for the device's
 * architecture. Return 1 when found. */
int hri_gpu_cache_lookup(const hr_gpu *g, const char *device, hr_gpu_shape *out);
int hri_gpu_shipped_lookup(const hr_gpu *g, hr_gpu_shape *out);

/* ------------------------------------------------------- kernel arguments */

template <typename T> struct hr_gargs {
    const T *u;  /* element (0, 0, 0) of the grid read */
    T *un;       /* element (0, 0, 0) of the grid written */
    const T *hf; /* element (0, 0, 0) of h^2 f, or NULL for the inline spike */
    size_t pitch, plane;
    int n; /* nx (square-only families) */
    int nx, ny, nz;
    int lo, hi;     /* outer range swept: rows [lo, hi) in 2-D, planes in 3-D */
    hr_rhs_view sp; /* the inline spike (HR_IS_SPIKE); spike_i < 0: none */
    T c0, c1;       /* weights (1 - omega), omega: used by the weighted instantiations */
};

template <typename T> static inline hr_gargs<T> hr_gpu_args(const hr_gpu *g)
{
    hr_gargs<T> a;
    a.u = (const T *)g->d_u[g->dcur] + g->offset;
    a.un = (T *)g->d_u[1 - g->dcur] + g->offset;
    a.hf = g->d_hf ? (const T *)g->d_hf + g->offset : NULL;
    a.pitch = g->pitch;
    a.plane = g->plane;
    a.n = g->nx;
    a.nx = g->nx;
    a.ny = g->ny;
    a.nz = g->nz;
    a.lo = 1;
    a.hi = (g->dim == 3 ? g->nz : g->ny) + 1;
    a.sp = g->spike;
    a.c0 = (T)(1.0 - g->omega);
    a.c1 = (T)g->omega;
    return a;
}

/* Whether the weighted (omega) instantiation must run. */
static inline bool hr_gpu_weighted(const hr_gpu *g)
{
    return g->omega != 1.0;
}

/* The point update, with the right-hand side as the CPU reference applies it: the same
 * macro, the same order, so results are bitwise equal (CUDA built with -fmad=false).
 * W: the weighted update c0 u + c1 jacobi (uc: the point's own old value). */
template <typename T, bool W = false>
__device__ __forceinline__ T hr_point(T un, T us, T uw, T ue, const T *hf, size_t k, int i, int j,
                                      const hr_rhs_view &sp, T uc = (T)0, T c0 = (T)0, T c1 = (T)0)
{
    T jac;
    if (hf)
        jac = HR_JACOBI5F(T, un, us, uw, ue, hf[k]);
    else if (HR_IS_SPIKE(sp, i, j, 0))
        jac = HR_JACOBI5F(T, un, us, uw, ue, (T)HR_SPIKE_H2F);
    else
        jac = HR_JACOBI5(T, un, us, uw, ue);
    if (W) return HR_WEIGHTED(uc, jac, c0, c1);
    return jac;
}

/* The 3-D point update (same macros and order as hri_cpu_sweep_box). */
template <typename T, bool W>
__device__ __forceinline__ T hr_point7(T uw, T ue, T un, T us, T ud, T uu, T uc, const T *hf, size_t k, int i,
                                       int j, int kk, const hr_rhs_view &sp, T c0, T c1)
{
    T jac;
    if (hf)
        jac = HR_JACOBI7F(T, uw, ue, un, us, ud, uu, hf[k]);
    else if (HR_IS_SPIKE(sp, i, j, kk))
        jac = HR_JACOBI7F(T, uw, ue, un, us, ud, uu, (T)HR_SPIKE_H2F);
    else
        jac = HR_JACOBI7(T, uw, ue, un, us, ud, uu);
    if (W) return HR_WEIGHTED(uc, jac, c0, c1);
    return jac;
}

/* Grid dimension for `tiles` tiles along y (hardware limit 65535; kernels stride). */
static inline unsigned hr_grid_y(long tiles)
{
    return (unsigned)(tiles < 65535 ? (tiles > 0 ? tiles : 1) : 65535);
}

#endif
