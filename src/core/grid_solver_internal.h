/*
 * The structured-grid handle's insides (include/hetrelax/grid_solver.h), shared by the
 * one-process engines (grid_solver.c) and the MPI ones (src/parallel/mpi/grid_solver_mpi.c,
 * in hetrelax_mpi): a facade over the engines, each behind an hr_gs_ops table. The functions
 * marked HR_INTERNAL_API are the ones hetrelax_mpi calls.
 */
#ifndef HR_GRID_SOLVER_INTERNAL_H
#define HR_GRID_SOLVER_INTERNAL_H

#include <signal.h>

#include "core/driver.h"
#include "core/internal_api.h"
#include "hetrelax/hetrelax.h"
#include "hetrelax/mg.h"

typedef struct hr_gs_ops {
    const char *engine; /* hr_grid_info.engine */
    /* one solve: rhs / x0 as hr_grid_solver_solve takes them (NULL: the problem's) */
    hr_status (*solve)(hr_grid_solver *s, const double *rhs, const double *x0, hr_result *res);
    hr_status (*solution)(const hr_grid_solver *s, hr_precision prec, void *dst, size_t count);
    size_t (*history)(const hr_grid_solver *s, const long **iters, const double **res);
    void (*request_stop)(hr_grid_solver *s); /* only stores (a signal handler may call it) */
    void (*release)(hr_grid_solver *s);      /* frees the engine (MPI: collective) */
    /* one solve from arrays in the GPU's memory (hr_grid_solver_solve_device: pointers and
     * precision checked, the caller's stream waited for); NULL: the engine takes host arrays only */
    hr_status (*solve_device)(hr_grid_solver *s, const hr_device_arrays *a, hr_result *res);
} hr_gs_ops;

struct hr_grid_solver {
    hr_problem p;      /* the caller's, its arrays pointing at the copies below */
    hr_grid_options o; /* the caller's, its strings pointing at the copies below */
    char kernel[32], smoother[16];
    double *rhs, *init; /* copies of the problem's arrays (rhs scaled by rhs_scale), or NULL */
    size_t count;       /* unknowns */
    double rhs_scale;   /* (h / the engine's h)^2: 1 on the model problem's own box */
    hr_precision prec;  /* resolved: single, double or mixed */
    hr_backend backend; /* resolved (auto: what it chose) */
    long max_iters;     /* resolved */
    const hr_gs_ops *ops;
    void *engine;     /* hr_solver, hr_mg, hr_mpi_solver or hr_mpi_hybrid */
    hr_mg_options mo; /* mg, cg, mgcg: the engine's options (rhs_values set per set-up) */
    double *eng_rhs;  /* a solve's f, scaled (allocated once) */
    int eng_has_rhs;  /* the engine was set up with eng_rhs (0: with the problem's f) */
    int eng_rhs_device; /* the engine holds an f that eng_rhs does not have (from device arrays, or
                           a host f uploaded straight to the GPU) */
    int fresh;        /* the engine's state is the problem's initial guess (no solve since set-up) */
    hr_history hist;  /* mg, cg, mgcg with keep_history */
    volatile sig_atomic_t stop;
    int running; /* inside a solve: its monitor must not re-enter */
    hr_grid_info info;
    void *mpi;   /* the MPI engines' state (grid_solver_mpi.c) */
    int general; /* the general-problem engine runs it (methods/stencil) */
    char err[256];
};

/* Everything create checks before an engine exists: the problem, the options' values, what
 * does not run yet (mpi: for the MPI ranks), the resolved method, precision and backend,
 * and copies of the strings and arrays. On failure "field: reason" in why and *out NULL. */
HR_INTERNAL_API hr_status hri_gs_prepare(const hr_problem *p, const hr_grid_options *o, int mpi,
                                        hr_grid_solver **out, char *why, size_t why_size);

/* The relaxation engines' options for s, with the right-hand side `rhs` (scaled; NULL: the
 * problem's) and initial guess `x0` (NULL: the problem's). The arrays are borrowed. */
HR_INTERNAL_API void hri_gs_relax_options(const hr_grid_solver *s, const double *rhs, const double *x0,
                                         hr_options *eo);

/* A solve's f scaled for the engine, into s->eng_rhs (allocated once). */
HR_INTERNAL_API hr_status hri_gs_take_rhs(hr_grid_solver *s, const double *rhs);

/* 1 when the engine holds f (a solve's array, scaled) already: no new set-up needed. */
HR_INTERNAL_API int hri_gs_same_rhs(const hr_grid_solver *s, const double *rhs);

/* Fills the fields every engine's result shares (method, precision, ranks, ...). */
HR_INTERNAL_API void hri_gs_finish_result(const hr_grid_solver *s, hr_result *r);

/* Records a formatted message in s->err. */
HR_INTERNAL_API void hri_gs_set_error(hr_grid_solver *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The general-problem engine (methods/stencil/stencil_engine.c) for s on problem p. */
hr_status hri_gs_general_create(hr_grid_solver *s, const hr_problem *p);
/* The same on rows [lo, hi) of the last axis, for MPI ranks (comm: the ranks' halo, sums and
 * gather; methods/stencil/stencil_kernels.h). Relaxation and CG only: the multigrid levels are
 * not cut. */
struct hr_st_comm;
/* The general engine's entry points (the MPI facade wraps them). */
HR_INTERNAL_API const hr_gs_ops *hri_gs_general_ops(void);
HR_INTERNAL_API hr_status hri_gs_general_create_slab(hr_grid_solver *s, const hr_problem *p, int lo, int hi,
                                                    const struct hr_st_comm *comm);
/* Frees the general engine of s (also a half-built one). */
void hri_gs_general_release(hr_grid_solver *s);

/* Frees the facade (the engine must be released already). */
HR_INTERNAL_API void hri_gs_free(hr_grid_solver *s);

/* Entered a solve (0: one is under way; the message is in s->err). */
int hri_gs_enter(hr_grid_solver *s);
void hri_gs_leave(hr_grid_solver *s);

#endif
