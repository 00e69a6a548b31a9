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

#include "common/error.h"
#include "common/stencil.h"
#include "solver/solver_internal.h"

/* ------------------------------------------------------------ checked calls */

/* Records "call failed at file:line: name: text" in the solver and maps the CUDA error
 * to an hr_status. Returns that status. */
hr_status hr_cuda_fail(hr_solver *s, cudaError_t e, const char *call, const char *file, int line);

/* Every CUDA call in a solver path goes through HR_CU: on failure the call, file and
 * line go into the solver's error text and the function returns the status. */
#define HR_CU(s, call)                                                                  \
    do {                                                                                \
        cudaError_t hr_cu_e_ = (call);                                                  \
        if (hr_cu_e_ != cudaSuccess) return hr_cuda_fail((s), hr_cu_e_, #call, __FILE__, __LINE__); \
    } while (0)

/* Same, jumping to a cleanup label with st set. */
#define HR_CU_GOTO(s, st, call, label)                                                  \
    do {                                                                                \
        cudaError_t hr_cu_e_ = (call);                                                  \
        if (hr_cu_e_ != cudaSuccess) {                                                  \
            (st) = hr_cuda_fail((s), hr_cu_e_, #call, __FILE__, __LINE__);              \
            goto label;                                                                 \
        }                                                                               \
    } while (0)

/* A launch is checked by the error it leaves behind (bad configuration, no image). */
#define HR_LAUNCHED() cudaGetLastError()

/* -------------------------------------------------------------- the state */

typedef struct hr_gpu_shape {
    int bx, by, h; /* block edges in threads; h: rows per thread / strip / tile (per family) */
} hr_gpu_shape;

struct hr_gpu_family;

typedef struct hr_gpu {
    const struct hr_gpu_family *fam;
    int dev, sms;
    size_t smem_optin;    /* largest dynamic shared memory a block may opt into */
    size_t tex_align, tex_pitch_align;
    int tex2d_max_w, tex2d_max_h;
    cudaStream_t stream;
    int n, dbl, spike;
    size_t esize;
    size_t pitch, offset; /* device layout in elements: padded (hr_grid_layout) or (n+2, 0) */
    size_t alloc_elems;   /* per grid: the layout's count plus one spare row */
    void *d_u[2], *d_hf;
    int dcur;             /* grid holding the current solution */
    hr_gpu_shape shape;
    const char *shape_from; /* "default", "cache" or "HETRELAX_GPU_SHAPE" */
    int alpha;
    cudaTextureObject_t tex[2];
    double *d_part, *h_res;
    int nparts;
    cudaGraphExec_t graph[2]; /* G full passes starting from parity 0 / 1 */
    long graph_sweeps;        /* sweeps one replay does */
    int registered_u, registered_hf;
} hr_gpu;

/* One kernel family. */
typedef struct hr_gpu_family {
    const char *name;
    int padded;     /* device grid on the padded layout (else rows of n+2, no padding) */
    int hilo;       /* doubles as separate hi/lo words in shared memory */
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
} hr_gpu_family;

/* Families, defined next to their kernels. */
extern const hr_gpu_family hr_fam_naive, hr_fam_padded, hr_fam_texture;
extern const hr_gpu_family hr_fam_smem, hr_fam_smem_padded, hr_fam_unrolled;
extern const hr_gpu_family hr_fam_smem_hilo, hr_fam_smem_padded_hilo, hr_fam_unrolled_hilo;
extern const hr_gpu_family hr_fam_tuned, hr_fam_tb;
extern const hr_gpu_family hr_fam_async0, hr_fam_async1, hr_fam_async2, hr_fam_async3;

/* One sweep per launch: the synchronous ladder. */
int hr_gpu_pass_one(const hr_gpu *g, long remaining);
/* Shape checks shared by several families. */
int hr_gpu_check_block(const hr_gpu *g, hr_gpu_shape sh, int rows_per_thread, char *why, size_t len);

/* Device residual ||f - A u|| / ||b|| of grid d_u[dcur] (same formula as the CPU). */
hr_status hr_gpu_residual_compute(hr_solver *s, hr_gpu *g, double *rel);

/* Applies a shape: checks it, prepares the family and rebuilds the graphs. */
hr_status hr_gpu_apply_shape(hr_solver *s, hr_gpu *g, hr_gpu_shape sh);
/* Copies the current device grid into `dst` (host, the solver's layout). */
hr_status hr_gpu_download(hr_solver *s, hr_gpu *g, void *dst);

/* Tuning candidates and the cache file (gpu_tune.cu). */
int hr_gpu_cache_lookup(const char *device, const char *kernel, int dbl, int n, int alpha,
                        hr_gpu_shape *out);

/* ------------------------------------------------------- kernel arguments */

template <typename T>
struct hr_gargs {
    const T *u; /* element (0, 0) of the grid read */
    T *un;      /* element (0, 0) of the grid written */
    const T *hf;/* element (0, 0) of h^2 f, or NULL for the inline spike */
    size_t pitch;
    int n, spike;
};

template <typename T>
static inline hr_gargs<T> hr_gpu_args(const hr_gpu *g)
{
    hr_gargs<T> a;
    a.u = (const T *)g->d_u[g->dcur] + g->offset;
    a.un = (T *)g->d_u[1 - g->dcur] + g->offset;
    a.hf = g->d_hf ? (const T *)g->d_hf + g->offset : NULL;
    a.pitch = g->pitch;
    a.n = g->n;
    a.spike = g->spike;
    return a;
}

/* The point update, with the right-hand side as the CPU reference applies it: the same
 * macro, the same order, so results are bitwise equal (CUDA built with -fmad=false). */
template <typename T>
__device__ __forceinline__ T hr_point(T un, T us, T uw, T ue, const T *hf, size_t k, int i, int j,
                                      int spike)
{
    if (hf) return HR_JACOBI5F(T, un, us, uw, ue, hf[k]);
    if (i == spike && j == spike) return HR_JACOBI5F(T, un, us, uw, ue, (T)HR_SPIKE_H2F);
    return HR_JACOBI5(T, un, us, uw, ue);
}

/* Grid dimension for `tiles` tiles along y (hardware limit 65535; kernels stride). */
static inline unsigned hr_grid_y(long tiles) { return (unsigned)(tiles < 65535 ? (tiles > 0 ? tiles : 1) : 65535); }

#endif
