/*
 * The solver handle and the kernel table: the seam between the iteration driver
 * (schedules, stopping, metrics) and the sweep implementations (CPU and CUDA).
 *
 * Adding a kernel: write one file that defines its hr_kernel_ops, and add one line to
 * src/core/registry.def (its name, backend, capabilities and summary).
 */
#ifndef HR_SOLVER_INTERNAL_H
#define HR_SOLVER_INTERNAL_H

#include "core/driver.h"
#include "core/grid.h"
#include "core/internal_api.h"
#include "core/registry.h"
#include "hetrelax/hetrelax.h"
#include "methods/jacobi/cpu/jacobi2d_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel's entry points; its registry entry (s->k, an hr_entry) holds its name, backend,
 * capabilities and the variant (id) these run. */
/* What a kernel's device_io moves. */
typedef enum { HR_DEVIO_X0, HR_DEVIO_RHS, HR_DEVIO_X } hr_devio;

typedef struct hr_kernel_ops {
    /* Prepares the kernel: allocates its state, initialises (first-touches) the host
     * grids or uploads them. Called once by hr_solver_create. */
    hr_status (*setup)(hr_solver *s);
    /* Runs `count` sweeps starting from the current solution. */
    hr_status (*sweeps)(hr_solver *s, long count);
    /* Makes s->u[s->cur] hold the current solution (NULL when it always does). */
    hr_status (*sync_host)(hr_solver *s);
    /* Relative residual computed where the data lives (NULL: host residual). */
    hr_status (*residual)(hr_solver *s, double *rel);
    void (*teardown)(hr_solver *s);
    /* Kernel-specific limits on the options (e.g. alpha against the block size), checked
     * by hr_options_validate; writes "field: reason" into why. NULL: none. */
    hr_status (*check)(const hr_options *o, char *why, size_t why_size);
    /* Makes the device copy (if any) match s->u[s->cur] after the host grid was changed
     * (a restart). NULL: the host grid is the state. */
    hr_status (*upload)(hr_solver *s);
    /* The caller's array `ptr` in the GPU's memory (x fastest; fp32 when single, else fp64;
     * hr_grid_solver_solve_device): HR_DEVIO_X0 writes it into the current solution (every
     * device grid the kernel reads, as a set-up would), HR_DEVIO_RHS writes h^2 * pre * ptr
     * into the h^2 f grid (HR_ERR_UNSUPPORTED without one), HR_DEVIO_X reads the current
     * solution out into it. NULL: host arrays only. */
    hr_status (*device_io)(hr_solver *s, hr_devio what, void *ptr, int single, double pre);
} hr_kernel_ops;

/* The problem a run resolved from its options (the model problem: one mesh width, one
 * Dirichlet value); the public description is hr_problem (hetrelax/problem.h). */
typedef struct hr_run_problem {
    int dim, nx, ny, nz; /* interior extents (nz = 1 in 2-D) */
    double h;            /* mesh width, equal on every axis: 1 / (largest extent + 1) */
    hr_rhs rhs;
    hr_init init;
    double boundary, omega;
    int spike_i, spike_j, spike_k; /* the inline spike, or -1 */
    hr_method method;              /* Jacobi, or red-black (omega resolved, HR_OMEGA_AUTO too) */
} hr_run_problem;

struct hr_solver {
    hr_options o;
    hr_run_problem p;
    const hr_entry *k;   /* the kernel's registry entry; its entry points: k->kernel */
    hr_grid u[2];        /* host grids: current and next */
    int cur;             /* index of the current solution in u */
    hr_grid hf;          /* h^2 f (base NULL for the inline spike and a zero right-hand side) */
    void *impl;          /* kernel state */
    long done;           /* sweeps done so far */
    long syncs;          /* global syncs counted by kernels whose passes span several sweeps */
    double t_setup;      /* time spent in the kernel's setup */
    double t_h2d, t_d2h; /* accumulated by kernels that move data */
    hr_history hist;
    hr_config cfg;              /* what runs: kernels fill threads, thread grid, shape, streams */
    volatile sig_atomic_t stop; /* hr_solver_request_stop */
    int running;                /* inside hr_solver_run(_sweeps): its monitor must not re-enter */
    char device_name[96];
    char err[256];
};

/* The problem the options describe (extents, h, spike), and its right-hand side (h^2 f)
 * and initial value at global interior point (i, j, k), k = 0 in 2-D; `values` are the
 * options' rhs_values / init_values. Subdomains of a decomposition use these so their
 * data is bitwise that of the whole grid. */
HR_INTERNAL_API void hri_problem_resolve(const hr_options *o, hr_run_problem *p);
/* The divergence threshold when options leave divtol 0 (residual growth factor). */
#define HR_DIVTOL 1e3
/* The backend `b` runs on (auto: the GPU when one is present and has a kernel for dim,
 * else cpu-threads; options.c). */
hr_backend hri_resolve_backend(hr_backend b, int dim);
HR_INTERNAL_API double hri_problem_rhs_at(const hr_run_problem *p, const double *values, int i, int j, int k);
HR_INTERNAL_API double hri_problem_init_at(const hr_run_problem *p, const double *values, int i, int j, int k);

/* Helpers shared by kernels. */
hr_rhs_view hri_solver_rhs_view(const hr_solver *s);
/* Initialises outer slices [r0, r1) (rows in 2-D, planes in 3-D) of u[0], u[1] and hf:
 * boundary ring, initial interior values, right-hand side. */
void hri_solver_init_rows(hr_solver *s, int r0, int r1);
/* Records a formatted message in s->err. */
void hri_solver_set_error(hr_solver *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Host residual of grid u[cur], in double. */
double hri_solver_host_residual(const hr_solver *s);

/* The caller's device arrays through the kernel's device_io (the relaxation engine of
 * hr_grid_solver_solve_device): HR_ERR_UNSUPPORTED, with the reason in the solver's error,
 * where the kernel takes host arrays only. HR_DEVIO_X0 restarts the count of sweeps. */
hr_status hri_solver_device_io(hr_solver *s, hr_devio what, void *ptr, int single, double pre);
/* Whether the kernel takes device arrays (has device_io). */
int hri_solver_takes_device(const hr_solver *s);
/* Whether the solver has an h^2 f grid (set up with a right-hand side array or a formula). */
int hri_solver_has_rhs_grid(const hr_solver *s);
/* Whether the kernel can restart from another solution (hr_solver_set_solution). */
int hri_solver_can_restart(const hr_solver *s);
/* hr_solver_run with the solution left on the device: no copy to the host at the end, the
 * final residual computed by the kernel (max_error NaN). */
hr_status hri_solver_run_device(hr_solver *s, hr_result *res);

/* The resolved extent of the options along axis 0 (x), 1 (y) or 2 (z; 1 in 2-D). */
HR_INTERNAL_API int hri_options_extent(const hr_options *o, int axis);
/* The dimension the options ask for (2 or 3). */
HR_INTERNAL_API int hri_options_dim(const hr_options *o);

/* Splits [0, len) into `parts` nearly equal ranges; returns [*lo, *hi) of part p. */
static inline void hr_split_range(int len, int parts, int p, int *lo, int *hi)
{
    int base = len / parts, extra = len % parts;
    *lo = p * base + (p < extra ? p : extra);
    *hi = *lo + base + (p < extra ? 1 : 0);
}

/* Thread grid for P threads: rows x cols with rows >= cols, as square as P allows. */
void hri_thread_grid(int threads, int *rows, int *cols);

#ifdef __cplusplus
}
#endif
#endif
