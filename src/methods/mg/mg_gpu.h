/*
 * The GPU backend of hr_mg (src/methods/mg/cuda/mg_gpu*.cu; without CUDA, mg_gpu_stub.c refuses).
 *
 * mg_solve.c keeps the iteration loop (hri_drive), the options and the result; the device
 * side holds every level, the fp64 outer level (mixed precision, CG) and the CG scalars,
 * and runs an iteration as one captured CUDA graph. Kernels use the same stencil macros
 * and order of operations as src/methods/mg/mg_ops_impl.h and the operator layer's region sweep
 * and residual (CUDA compiled with -fmad=false), so iterates are bitwise the CPU's; only
 * reductions (norms, CG dots) are summed in another order.
 *
 * Plain C so that both sides include it.
 */
#ifndef HR_MG_GPU_H
#define HR_MG_GPU_H

#include <math.h>
#include <stddef.h>

#include "core/grid.h"
#include "core/stencil.h"
#include "hetrelax/mg.h"
#include "methods/mg/mg_smoother.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MG_GPU_CHEBY_MAX 16 /* = HR_MG_CHEBY_MAX */

typedef enum {
    MG_GPU_DIRECT = 0, /* level 0 of the hierarchy holds the solution */
    MG_GPU_DEFECT,     /* fp64 outer level, one cycle per iteration on its residual */
    MG_GPU_CG          /* fp64 CG on the outer level, optionally preconditioned by a V-cycle */
} mg_gpu_mode;

typedef struct mg_gpu_setup {
    int device;
    int dim, nx, ny, nz;
    mg_gpu_mode mode;
    /* the hierarchy (nlev 0: none, plain CG) */
    int nlev;
    size_t esize;
    hr_mg_cycle cycle; /* fmg: the FMG pass first, V-cycles after */
    const hr_smoother_ops *smoother; /* the registry entry's */
    int pre, post;
    double omega;
    double cheby_a[MG_GPU_CHEBY_MAX], cheby_b[MG_GPU_CHEBY_MAX];
    int fmg_cycles;
    int symmetric; /* post-smoothing is the adjoint (pc mg) */
    /* the problem on the solution level (level 0 in direct mode, else the outer level) */
    hr_rhs_view spike;  /* hf unused; spike_i < 0: no spike */
    const hr_grid *rhs; /* h^2 f in the solution level's layout and precision, or NULL */
    /* or f itself, x fastest with no padding (the caller's array, read during create only),
     * and h^2: the device computes h^2 f in the layout, as the host would */
    const double *rhs_values;
    double rhs_h2;
    double boundary;
    /* tuning (0: defaults): levels with at most small_points points run inside one
     * one-block kernel; no_graph: launch the kernels one by one (tests compare); from the
     * options' knobs hr_tuning.mg_gpu_small, _nograph, _rb (docs/configuration.md) */
    long small_points;
    int no_graph;
    int rb_passes;     /* red-black: 1 (default) one pass into the other buffer, 2 two in-place passes */
    long march_points; /* one-pass red-black marches along y / z on levels of at least this
                        * many points (0: default 1000000; < 0: never) */
    long fuse_points;  /* 2-D: red-black sweeps (and a prolongation before them) fused into one
                        * pass on levels of at least this many points (0: default 1e6 in fp64, 4e6 in fp32; < 0: never) */
    int async_local;   /* smoother async: local red-black sweeps per pass (0: default 2) */
    /* --coarse-on cpu: levels cpu_level.. run on cpu_threads CPU threads (0: all on the GPU) */
    int cpu_level, cpu_threads;
    int hugepages; /* host grids advised for huge pages (hr_tuning.hugepages resolved) */
    int rhs_slot;  /* no rhs or rhs_values (f = 0): keep an array for f all the same, zero until
                      hri_mg_gpu_rhs_host / _device fill it */
} mg_gpu_setup;

/* Vectors that reach fp32 grids (mixed precision's defect, the CG vectors and the fp32
 * preconditioner they feed) are kept in [2^-64, 2^64], far from fp32's overflow and
 * subnormals: the power of two s that puts s * max there, or 1 when max is in range already,
 * 0 or not finite. The corrections are scale-invariant and a power of two changes no digit,
 * so a run whose values stay in range gives bitwise the same iterates with any such s. */
#if defined(__CUDACC__)
#define MG_RANGE_HD __host__ __device__ /* the device's coarse CG takes it too */
#else
#define MG_RANGE_HD
#endif
static inline MG_RANGE_HD double mg_range_scale(double max)
{
    if (!(max > 0.0) || !isfinite(max) || (max >= ldexp(1.0, -64) && max <= ldexp(1.0, 64))) return 1.0;
    int e = ilogb(max);
    if (e < -1022) e = -1022; /* 1 / s stays a normal number */
    return ldexp(1.0, -e);
}

typedef struct mg_gpu mg_gpu;

/* HR_OK, HR_ERR_NO_DEVICE, HR_ERR_NO_MEMORY or HR_ERR_DEVICE with a reason in `why`. */
hr_status hri_mg_gpu_create(const mg_gpu_setup *s, mg_gpu **out, char *why, size_t why_size);
void hri_mg_gpu_free(mg_gpu *g);
/* A fresh start: zero iterates, boundary rings, the right-hand side in place. */
hr_status hri_mg_gpu_reset(mg_gpu *g);
/* Relative residual of the solution (and ||b||, max |r|; either may be NULL), with norms
 * scaled where a square would overflow or underflow. want_r (defect mode): the residual also
 * becomes the next cycle's right-hand side, times a power of two (mg_range_scale) that the
 * cycle's correction is divided by again. */
hr_status hri_mg_gpu_check(mg_gpu *g, int want_r, double *rel, double *bnorm, double *rmax);
/* `count` iterations (cycles, or CG iterations); fmg_first: the first is the FMG pass;
 * r_valid: the last check left the residual in place (defect mode). */
hr_status hri_mg_gpu_advance(mg_gpu *g, long count, int fmg_first, int r_valid);
/* CG: r = s (b - A u), z = M r, p = z and the dots; rr = r . r. s (a power of two from
 * mg_range_scale) scales every CG vector but x, whose update divides by it again. */
hr_status hri_mg_gpu_cg_start(mg_gpu *g, double s, double *rr);
/* CG: the current r . r. */
hr_status hri_mg_gpu_cg_rr(mg_gpu *g, double *rr);
/* The solution level's grid into `host` (allocated here on first use: layout and precision
 * of the solution level). */
hr_status hri_mg_gpu_download(mg_gpu *g, hr_grid *host);
/* A new f into the solution level's right-hand side (as create forms it, times scale where
 * scale != 1): from the host through the pinned chunks, or from device memory (single: fp32
 * values). HR_ERR_UNSUPPORTED when the engine keeps no array for f (a spike or zero f
 * created without rhs_slot). */
hr_status hri_mg_gpu_rhs_host(mg_gpu *g, const double *f);
hr_status hri_mg_gpu_rhs_device(mg_gpu *g, const void *f, int single, double scale);
/* The solution level's unknowns into device memory dst (single: fp32), x fastest. */
hr_status hri_mg_gpu_solution_device(mg_gpu *g, void *dst, int single);
/* The same into host memory, packed on the device and staged through pinned chunks. */
hr_status hri_mg_gpu_solution_host(mg_gpu *g, void *dst, int single);
/* The last device error ("call failed at file:line: ..."). */
const char *hri_mg_gpu_error(const mg_gpu *g);

/* Where hri_mg_gpu_create spent its time (seconds): context and stream, allocation and
 * initialisation, the right-hand side's upload, the programs' warm-up and graphs. */
typedef struct mg_gpu_times {
    double device, alloc, upload, graphs;
} mg_gpu_times;
void hri_mg_gpu_setup_times(const mg_gpu *g, mg_gpu_times *t);

#ifdef __cplusplus
}
#endif
#endif
