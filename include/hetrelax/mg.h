/*
 * hetrelax multigrid: converged Poisson solves on the structured 2-D 5-point and 3-D 7-point
 * grids of hetrelax (same discretisation, h, right-hand sides and Dirichlet boundary), with
 * the relaxation sweeps as smoothers. Geometric multigrid (V, W, F cycles and FMG),
 * matrix-free CG and MG-preconditioned CG, in fp64, fp32 or mixed precision (fp32 cycles
 * inside an fp64 defect correction). A handle is set up once and solved many times.
 *
 * Grids: n = 2^k - 1 interior points per axis (vertex-centred coarsening by 2); arrays
 * in and out hold the interior only, x fastest (as in hetrelax.h).
 */
#ifndef HETRELAX_MG_H
#define HETRELAX_MG_H

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { HR_MG_METHOD_MG = 0, HR_MG_METHOD_CG } hr_mg_method;
typedef enum { HR_MG_PC_NONE = 0, HR_MG_PC_MG } hr_mg_pc; /* a preconditioner for cg */
/* the cycles are hetrelax's hr_cycle (grid_solver.h); the HR_MG_CYCLE_ names stay as aliases */
typedef hr_cycle hr_mg_cycle;
#define HR_MG_CYCLE_V   HR_CYCLE_V
#define HR_MG_CYCLE_W   HR_CYCLE_W
#define HR_MG_CYCLE_F   HR_CYCLE_F
#define HR_MG_CYCLE_FMG HR_CYCLE_FMG
typedef enum {
    HR_MG_SMOOTH_JACOBI = 0, /* weighted Jacobi, omega 4/5 (2-D) or 6/7 (3-D) */
    HR_MG_SMOOTH_REDBLACK,   /* red-black Gauss-Seidel (red then black; post: black then red) */
    HR_MG_SMOOTH_CHEBY,      /* Chebyshev-Jacobi on the upper part of the spectrum of D^-1 A */
    HR_MG_SMOOTH_ASYNC       /* "async3", backend gpu only: tiles of the big levels relaxed by
                              * local red-black sweeps in shared memory, their halos read from
                              * the neighbours without synchronisation (non-deterministic);
                              * red-black on the small levels. Not with pc mg. */
} hr_mg_smoother;
/* The library's one precision enum (hetrelax.h): HR_PREC_DEFAULT (0) is double, single runs
 * every level in fp32 (accurate to about 1e-6), mixed fp32 cycles in an fp64 defect
 * correction (fp64 accuracy). The HR_MG_PREC_ names stay as aliases. */
typedef hr_precision hr_mg_precision;
#define HR_MG_PREC_DOUBLE HR_PREC_DOUBLE
#define HR_MG_PREC_SINGLE HR_PREC_SINGLE
#define HR_MG_PREC_MIXED  HR_PREC_MIXED
typedef enum {
    HR_MG_BACKEND_CPU = 0, /* the thread team (default) */
    HR_MG_BACKEND_GPU      /* every level on CUDA device `device` (HR_ERR_NO_DEVICE without one) */
} hr_mg_backend;
typedef enum {
    HR_MG_COARSE_ON_GPU = 0, /* backend gpu: every level on the device (default) */
    HR_MG_COARSE_ON_CPU      /* backend gpu: levels from coarse_level down on the CPU cores */
} hr_mg_coarse_on;

/*! Progress per iteration (a cycle, or a CG iteration): hetrelax's one monitor signature
 *  (hr_monitor_fn, hetrelax.h: iteration, relative residual, user). Return non-zero to stop.
 *  The convergence factor (this residual over the previous one): hr_mg_last_factor(). */
typedef hr_monitor_fn hr_mg_monitor_fn;

typedef struct hr_mg_options {
    int dim;                  /* 2 (default) or 3; 0 means 2 */
    int n;                    /* interior points per axis where nx/ny/nz are 0: 2^k - 1 */
    int nx, ny, nz;           /* per axis, each 2^k - 1 (nz only in 3-D) */
    hr_rhs rhs;               /* spike, manufactured, zero or array (as hetrelax.h) */
    const double *rhs_values; /* f for HR_RHS_ARRAY (read during create only) */
    double boundary;          /* Dirichlet boundary value */
    hr_mg_method method;
    hr_mg_pc pc;
    hr_mg_cycle cycle; /* for cg + pc mg: V only (a symmetric V-cycle) */
    int pre, post;     /* smoothing sweeps before and after the coarse correction, >= 0 */
    hr_mg_smoother smoother;
    double omega;  /* Jacobi weight; 0: 4/5 in 2-D, 6/7 in 3-D */
    int levels;    /* levels including the finest; 0: all the grid allows */
    int symmetric; /* method mg: post-smoothing reverses the smoother's order, so that one cycle
                      is a symmetric operator (as pc mg always does) */
    hr_mg_precision precision;
    double tol;     /* stop at relative residual < tol (> 0) */
    long max_iters; /* cycles or CG iterations at most */
    int threads;    /* CPU threads; 0: one per core (backend cpu) */
    hr_mg_backend backend;
    int device; /* CUDA device ordinal (backend gpu) */
    /* backend gpu, coarse_on cpu: levels coarse_level.. (0: from the first level with fewer
     * than 65536 points, at least level 1) run on `threads` CPU threads on host copies */
    hr_mg_coarse_on coarse_on;
    int coarse_level;
    hr_mg_monitor_fn monitor;
    void *monitor_user;
    hr_tuning tuning;     /* knobs of the GPU cycle and the grids (hetrelax.h; all 0: the defaults) */
    int flush_subnormals; /* 1: backend cpu flushes subnormals to zero in every thread of a solve (as
                             hr_options.flush_subnormals); backend gpu keeps them. 0: IEEE (default) */
} hr_mg_options;

/*! Defaults: 2-D, n = 255, spike, mg, V(2,2), red-black, all levels, double, tol 1e-8,
 *  100 cycles, one thread per core. */
HR_API void hr_mg_options_default(hr_mg_options *o);

/*! HR_OK or HR_ERR_INVALID_ARG with "field: reason" written to `why`. */
HR_API hr_status hr_mg_options_validate(const hr_mg_options *o, char *why, size_t why_size);

typedef struct hr_mg_result {
    int dim, nx, ny, nz, levels;
    long iterations;           /* cycles (mg) or CG iterations (cg) */
    hr_reason reason;          /* converged, iters, stopped, diverged, nan */
    double time_s;             /* the solve (iteration loop, residual checks included) */
    double time_setup_s;       /* hr_mg_create: allocation, first touch, right-hand side */
    double ns_per_unknown;     /* time_s / unknowns, in ns */
    double relative_residual;  /* recomputed in fp64 at the end */
    double convergence_factor; /* geometric mean per iteration: (final / initial)^(1 / iterations) */
    double last_factor;        /* the last iteration's residual ratio */
    double max_error;          /* against the manufactured solution, else NaN */
    int threads;               /* CPU threads that ran the solve (options.threads 0 resolved; 0 for
                                  backend gpu) */
    /* time_setup_s in parts (seconds): the GPU's context and stream; allocation (and, on the
     * CPU, the first touch of every level); the right-hand side prepared on the host (h^2 f
     * in the solve's layout); its upload; the GPU's programs run once, recorded as graphs and
     * run once more (so that no solve records or loads anything). 0 where a part does not
     * apply. */
    double time_setup_device_s, time_setup_alloc_s, time_setup_rhs_s, time_setup_upload_s,
        time_setup_graphs_s;
    /* time_s in parts: the starting residual (and CG's start), then the iterations with
     * their residual checks */
    double time_first_check_s, time_iterations_s;
} hr_mg_result;

typedef struct hr_mg hr_mg;

/*! Validates, builds the level hierarchy and the thread team (or, backend gpu, the
 *  hierarchy on the device). On HR_ERR_INVALID_ARG or HR_ERR_NO_DEVICE the reason is in
 *  hr_mg_last_error(). */
HR_API hr_status hr_mg_create(const hr_mg_options *o, hr_mg **out);
HR_API void hr_mg_free(hr_mg *m);

/*! Why the last hr_mg_create on this thread failed ("field: reason"), or "" (backend gpu:
 *  also why the last hr_mg_solve failed with a device error). */
HR_API const char *hr_mg_last_error(void); /* the same text as hr_last_error() */

/*! Solves from a zero interior guess (the boundary holds options.boundary). HR_ERR_DIVERGED
 *  when the reason is diverged or NaN; HR_ERR_INVALID_ARG while a solve of `m` is under way
 *  (a call from its own monitor or another thread). hr_mg_free(m) from the monitor is
 *  ignored (the solve's caller frees m after). */
HR_API hr_status hr_mg_solve(hr_mg *m, hr_mg_result *res);

/*! The interior solution in fp64, nx*ny[*nz] values. */
HR_API hr_status hr_mg_solution(const hr_mg *m, double *dst, size_t count);

/*! hr_mg_last_factor() : from a solve's monitor, the last iteration's relative residual over
 *  the one before it (the first iteration's: over the starting residual); NaN before it. */
HR_API double hr_mg_last_factor(const hr_mg *m);

HR_API const char *hr_mg_cycle_name(hr_mg_cycle c);
HR_API const char *hr_mg_smoother_name(hr_mg_smoother s);

#ifdef __cplusplus
}
#endif
#endif
