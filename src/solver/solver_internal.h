/*
 * The solver handle and the kernel table: the seam between the iteration driver
 * (schedules, stopping, metrics) and the sweep implementations (CPU and CUDA).
 *
 * Adding a kernel: write one file that defines an hr_kernel_desc, and add it to the
 * table in src/solver/kernels.c.
 */
#ifndef HR_SOLVER_INTERNAL_H
#define HR_SOLVER_INTERNAL_H

#include "cpu/jacobi2d_cpu.h"
#include "hetrelax/hetrelax.h"
#include "problem/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hr_kernel_desc {
    const char *name;    /* --kernel value */
    hr_backend backend;  /* the backend it belongs to; first entry is its default */
    const char *summary; /* one line for --help */
    int deterministic;   /* same result as cpu-seq (bitwise) */
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
} hr_kernel_desc;

struct hr_solver {
    hr_options o;
    const hr_kernel_desc *k;
    hr_grid u[2];        /* host grids: current and next */
    int cur;             /* index of the current solution in u */
    hr_grid hf;          /* h^2 f (base NULL for the inline spike) */
    int spike;           /* spike position (0 when hf is used) */
    double h;            /* mesh width 1/(n+1) */
    void *impl;          /* kernel state */
    long done;           /* sweeps done so far */
    long syncs;          /* global syncs counted by kernels whose passes span several sweeps */
    double t_setup;      /* time spent in the kernel's setup */
    double t_h2d, t_d2h; /* accumulated by kernels that move data */
    long *hist_it;
    double *hist_res;
    size_t hist_len, hist_cap;
    char device_name[96];
    char err[256];
};

/* Kernel lookup: NULL name picks the backend's default. */
const hr_kernel_desc *hr_kernel_find(hr_backend b, const char *name);
/* Iterates the table: returns entry i or NULL past the end. */
const hr_kernel_desc *hr_kernel_at(int i);

/* Helpers shared by kernels. */
hr_rhs_view hr_solver_rhs_view(const hr_solver *s);
/* Initialises rows [r0, r1) of u[0], u[1] and hf (boundary, zero interior, rhs). */
void hr_solver_init_rows(hr_solver *s, int r0, int r1);
/* Records a formatted message in s->err. */
void hr_solver_set_error(hr_solver *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Host residual of grid u[cur], in double. */
double hr_solver_host_residual(const hr_solver *s);

/* Splits [0, len) into `parts` nearly equal ranges; returns [*lo, *hi) of part p. */
static inline void hr_split_range(int len, int parts, int p, int *lo, int *hi)
{
    int base = len / parts, extra = len % parts;
    *lo = p * base + (p < extra ? p : extra);
    *hi = *lo + base + (p < extra ? 1 : 0);
}

/* Thread grid for P threads: rows x cols with rows >= cols, as square as P allows. */
void hr_thread_grid(int threads, int *rows, int *cols);

#ifdef __cplusplus
}
#endif
#endif
