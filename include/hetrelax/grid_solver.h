/*
 * hetrelax: one handle for every structured-grid method and placement. Included by
 * hetrelax.h.
 *
 *     hr_problem p;
 *     hr_problem_init_model(&p, 2, 255, 255, 0);        // hetrelax/problem.h
 *     hr_grid_options o;
 *     hr_grid_options_default(&o);                       // all zero: every field's default
 *     o.method = HR_METHOD_MG;
 *     o.tol = 1e-8;
 *     hr_grid_solver *s;
 *     if (hr_grid_solver_create(&p, &o, &s) != HR_OK) puts(hr_last_error());
 *     hr_result r;
 *     hr_grid_solver_solve(s, NULL, NULL, &r);           // the problem's f and initial guess
 *     hr_grid_solver_solve(s, f, x0, &r);                // another f, another guess: same setup
 *     hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, hr_problem_unknowns(&p));
 *     hr_grid_solver_free(s);
 *
 * Method (options.method, with its kernel, weight and multigrid settings) and placement
 * (options.backend, threads, device, gpus, split; MPI ranks through
 * hr_grid_solver_create_mpi in hetrelax/mpi.h) are independent fields. Every combination
 * that runs is bitwise the engine that runs it (the relaxation solver hr_solver, multigrid
 * and CG hr_mg, the decomposed and split solvers of hetrelax/mpi.h and mpi_hybrid.h). What
 * runs today:
 *
 *   method              cpu-seq  cpu-threads  gpu  gpu, gpus > 1   hybrid  MPI ranks
 *   jacobi (omega)      yes      yes          yes  yes (chain)     yes     yes (cpu-seq, gpu or
 *                                                                          hybrid per rank)
 *   jacobi, kernel      yes      yes          yes  no              no      no
 *     async0..3, tb, ...
 *   redblack, sor       yes      yes          yes  yes (rb-mgpu)   no      yes (the general engine:
 *                                                                          cpu-seq, cpu-threads or
 *                                                                          gpu per rank)
 *   cg                  yes      yes          yes  yes (slabs)     no      yes (as redblack)
 *   mg, mgcg            yes      yes          yes  yes (slabs)     no      yes (as redblack)
 *
 * The model problem (problem.h: Dirichlet with one constant value on every face, a = 1, one
 * spacing on every axis; for mg and mgcg 2^k - 1 points per axis) runs on the engines above.
 * Every other problem runs on the general-problem engine (docs/problems.md): every method on
 * cpu-seq, cpu-threads and one GPU in double precision, on several GPUs of one process
 * (gpus > 1: a slab of the last axis per GPU, a thread each, engine "general-gpus"; the model
 * problem's CG and multigrid too), and on MPI ranks every method (hr_grid_info.general says
 * which engine runs; kernel "general" asks for it on the model problem too).
 * A combination that does not run yet is refused by create with HR_ERR_UNSUPPORTED and
 * "field: reason" naming the option; a value out of range with HR_ERR_INVALID_ARG. Errors: a status from
 * every call, the handle's message (hr_grid_solver_last_error) for calls with a handle, the thread's
 * hr_last_error() for create.
 */
#include "hetrelax/hetrelax.h" /* outside the guard: hetrelax.h includes this file at its end */

#ifndef HETRELAX_GRID_SOLVER_H
#define HETRELAX_GRID_SOLVER_H

#include "hetrelax/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The multigrid cycles. */
typedef enum {
    HR_CYCLE_V = 0, /* one coarse correction per level */
    HR_CYCLE_W,     /* two per level */
    HR_CYCLE_F,     /* between V and W */
    HR_CYCLE_FMG    /* full multigrid: the first cycle starts on the coarsest level, then V-cycles */
} hr_cycle;

/* A count whose 0 means "the default": HR_NONE asks for none (smoothing sweeps). */
#define HR_NONE (-1)

/* Every field's 0 is its default (a zeroed struct is a valid request: Jacobi, double, the best
 * placement present, 1000 sweeps). */
typedef struct hr_grid_options {
    /* --- the method */
    hr_method method;   /* HR_METHOD_JACOBI (0), REDBLACK, SOR, MG, CG, MGCG */
    double omega;       /* the weight; 0: the method's default (jacobi, redblack: 1, plain; sor: the
                           optimal weight, as HR_OMEGA_AUTO; mg's jacobi smoother: 4/5 in 2-D, 6/7 in
                           3-D). jacobi: (0, 2) weighted Jacobi; redblack, sor: (0, 2) */
    const char *kernel; /* jacobi, redblack, sor: a kernel of the placement (hr_kernel_info_at) or NULL
                           for its default; the asynchronous variants are kernels ("async0".."async3",
                           with alpha). Borrowed for create only */
    int alpha;          /* kernels with HR_CAP_ALPHA: the async factor or sweeps per pass (0: 1) */
    hr_precision
        precision; /* HR_PREC_DEFAULT (0): double; single; mixed (mg, cg, mgcg: fp32 cycles in fp64) */
    /* --- multigrid: method mg, and mgcg's preconditioner */
    hr_cycle cycle;       /* HR_CYCLE_V (0); mgcg takes V only */
    int pre, post;        /* smoothing sweeps before and after the coarse correction (0: 2; HR_NONE: none) */
    const char *smoother; /* "redblack" (NULL), "jacobi", "cheby", "async3" (gpu, not mgcg) */
    int levels;           /* levels including the finest (0: all the grid allows) */
    int symmetric;        /* mg: post-smoothing reverses the smoother's order, so that one cycle is a
                             symmetric operator (a preconditioner for CG; mgcg always does) */
    /* --- the placement */
    hr_backend backend; /* HR_BACKEND_AUTO (0): a GPU when one is present and runs the method, else
                           cpu-threads; cpu-seq (one thread), cpu-threads, gpu, hybrid (CPU + GPU) */
    int threads;        /* CPU threads (0: one per core) */
    hr_bind bind;       /* CPU thread placement (0: none) */
    int device;         /* the GPU (the first of `gpus`) */
    int gpus;           /* backend gpu: GPUs of this process, devices device..device+gpus-1 (0, 1: one) */
    double split;       /* backend hybrid: the fraction of rows (3-D: planes) on the CPU, in (0, 1];
                           0: the model's choice (hybrid.h's HR_SPLIT_AUTO); HR_SPLIT_STREAM */
    /* --- MPI ranks (hr_grid_solver_create_mpi in hetrelax/mpi.h; 0 in one process) */
    int decomp[3]; /* subdomains per axis (0: chosen for the rank count) */
    int ghost;     /* halo layers, exchanged every `ghost` sweeps (0: 1) */
    int transport; /* GPU ranks' halo transport, an hr_mpi_transport (0: auto) */
    /* --- stopping */
    double tol;       /* stop when the relative residual ||b - A u|| / ||b|| < tol; 0: run max_iters */
    long max_iters;   /* at most (0: 1000 sweeps; mg: 100 cycles; cg, mgcg: 1000 iterations) */
    long check_every; /* jacobi, redblack, sor with tol > 0: sweeps between checks (0: 100); mg, cg and
                         mgcg check every iteration */
    double divtol;    /* diverged when the checked residual grows past this (0: 1e3) */
    /* --- watching */
    hr_monitor_fn monitor; /* hr_monitor_fn (hetrelax.h): (iteration, relative residual, user); return
                              non-zero to stop (HR_REASON_STOPPED) */
    void *monitor_user;
    long monitor_every; /* iterations between monitor calls (0: relaxation every check_every sweeps, mg,
                           cg and mgcg every iteration); relaxation also calls it at the end */
    int keep_history;   /* record (iteration, residual) at every check: hr_grid_solver_history */
    /* --- arithmetic */
    int flush_subnormals; /* 1: cpu-seq and cpu-threads flush subnormal results and operands to zero in
                             every thread of a solve (x86-64 MXCSR FTZ + DAZ, aarch64 FPCR.FZ; the
                             caller's mode is put back after it): faster where subnormals are slow,
                             and still bitwise cpu-seq with the same setting. 0 (default): IEEE
                             subnormals, the bits of before. gpu and hybrid keep subnormals
                             (hr_grid_info.flush_subnormals says what runs); a CPU without such a
                             switch: HR_ERR_UNSUPPORTED. docs/cpu.md */
    /* --- tuning */
    hr_tuning tuning; /* the engines' knobs (hetrelax.h, docs/configuration.md; all 0: the defaults),
                         passed to the relaxation and multigrid engines as their options' tuning */
} hr_grid_options;

/*! hr_grid_options_default() : zeroes `o` (every field's default). */
HR_API void hr_grid_options_default(hr_grid_options *o);

typedef struct hr_grid_solver hr_grid_solver;

/*! hr_grid_solver_create() :
 *  Validates the problem and the options, refuses what does not run yet (above), and sets up
 *  the engine: grids, threads, the device, multigrid levels. Both structs are copied, and
 *  the problem's arrays (kept as the defaults of later solves).
 *  @return HR_OK and a handle in *out; else *out = NULL and hr_last_error() says why. */
HR_API hr_status hr_grid_solver_create(const hr_problem *p, const hr_grid_options *o, hr_grid_solver **out);

/*! hr_grid_solver_solve() :
 *  Solves once. `rhs`: f at every unknown (the grid array layout, fp64), or NULL for the
 *  problem's right-hand side; `x0`: the initial guess, or NULL for the problem's. Every solve
 *  starts afresh (iterations count from 0); the arrays are read during the call only. A new
 *  f is taken in place where the engine can (multigrid and CG: on the CPU, and on the GPU
 *  when the engine keeps an array for f), else by setting
 *  the engine up again (its time in res->time_setup_s); a new x0 likewise (relaxation: in
 *  place for the deterministic kernels). mg, cg and mgcg start from a zero guess only so far
 *  (another x0: HR_ERR_UNSUPPORTED). Fills `res` (may be NULL).
 *  @return HR_OK (converged, or ran max_iters, or stopped: see res->reason), HR_ERR_DIVERGED,
 *  or an error with the handle's message; HR_ERR_INVALID_ARG during a solve of the handle (a
 *  call from its own monitor or another thread). */
HR_API hr_status hr_grid_solver_solve(hr_grid_solver *s, const double *rhs, const double *x0, hr_result *res);

/* Arrays in the GPU's memory, for hr_grid_solver_solve_device. */
typedef struct hr_device_arrays {
    hr_precision prec; /* the element type of rhs, x0 and x: HR_PREC_DOUBLE (or DEFAULT) or SINGLE */
    const void *rhs;   /* f at every unknown (the grid array layout), or NULL: the problem's */
    const void *x0;    /* the initial guess, or NULL: the problem's */
    void *x;           /* where the solution goes (the grid array layout), or NULL: nowhere */
    void *stream;      /* a cudaStream_t whose work so far the call waits for before it reads rhs
                          and x0 (NULL: the legacy default stream) */
} hr_device_arrays;

/*! hr_grid_solver_solve_device() :
 *  hr_grid_solver_solve with the arrays in the memory of the handle's GPU (device or managed
 *  memory; CUDA array interface pointers), never copied through the host: f is formed into the
 *  engine's right-hand side and the solution written into a->x by kernels on the GPU. The
 *  same iterates, bit for bit, as hr_grid_solver_solve with the same values in host arrays.
 *  Runs where the engine lives on one GPU of this process (backend gpu, gpus 1): every
 *  method, on the model problem (its relaxation kernels, async ones included, and mg, cg,
 *  mgcg) and on the others. Elsewhere HR_ERR_UNSUPPORTED naming what runs. The call
 *  returns when a->x is written; the final residual is computed on the device (max_error
 *  NaN). The first device solve of a handle whose problem has no right-hand side array
 *  (zero, spike) sets its engine up again with room for one (time_setup_s says so).
 *  @return as hr_grid_solver_solve; HR_ERR_INVALID_ARG for a pointer that is not memory of
 *  the handle's GPU or a precision other than single or double. */
HR_API hr_status hr_grid_solver_solve_device(hr_grid_solver *s, const hr_device_arrays *a, hr_result *res);

/*! hr_grid_solver_solution() :
 *  The last solve's solution (before any solve: the initial guess) into dst, `count` >=
 *  hr_problem_unknowns() values of precision `prec` (default, single, double), the grid
 *  array layout. */
HR_API hr_status hr_grid_solver_solution(const hr_grid_solver *s, hr_precision prec, void *dst, size_t count);

/*! hr_grid_solver_history() :
 *  The (iteration, relative residual) pairs the last solve recorded with keep_history;
 *  *iters and *res point into the handle (valid until the next solve or free). */
HR_API size_t hr_grid_solver_history(const hr_grid_solver *s, const long **iters, const double **res);

/*! hr_grid_solver_request_stop() :
 *  Asks a running solve (another thread, or a signal handler) to stop at its next check
 *  (reason HR_REASON_STOPPED); a request between solves stops the next one early. */
HR_API void hr_grid_solver_request_stop(hr_grid_solver *s);

/*! hr_grid_solver_last_error() : why the handle's last failing call failed ("" if none). */
HR_API const char *hr_grid_solver_last_error(const hr_grid_solver *s);

/* What a handle resolved to run. */
typedef struct hr_grid_info {
    hr_method method;
    hr_precision precision; /* resolved */
    hr_backend backend;     /* resolved (auto: what it chose) */
    char engine[24];        /* "solver", "mg", "general", "mpi-solver", "mpi-hybrid" */
    char kernel[32];        /* the relaxation kernel, or multigrid's smoother ("" for cg) */
    int threads;            /* CPU threads per process (0: none) */
    int gpus;               /* GPUs per process (0: none) */
    int ranks;              /* MPI ranks (1 in one process) */
    double omega;           /* the weight that runs (resolved) */
    int general;            /* 1: the general-problem engine runs it (not the model kernels) */
    int singular;           /* the problem has no Dirichlet face (hr_problem_is_singular) */
    int flush_subnormals;   /* 1: the solves flush subnormals (options.flush_subnormals on a CPU backend) */
    int transport;          /* general problems on GPU ranks or on several GPUs of one process: how
                               the halos travel, an hr_mpi_transport (HR_MPI_TRANSPORT_HOST or _NCCL
                               of hetrelax/mpi.h); 0 otherwise */
    int rhs_zero;           /* general problems: 1 when the problem's discrete right-hand side is zero
                               (a singular problem's after its projection), so the residuals the
                               solves report are absolute, not relative to it */
} hr_grid_info;

/*! hr_grid_solver_info() : what `s` runs. */
HR_API hr_status hr_grid_solver_info(const hr_grid_solver *s, hr_grid_info *out);

/*! hr_grid_solver_free() : releases everything; accepts NULL; ignored during a solve of `s`.
 *  With MPI ranks: collective. */
HR_API void hr_grid_solver_free(hr_grid_solver *s);

/*! hr_cycle_name() : "v", "w", "f", "fmg", or NULL. */
HR_API const char *hr_cycle_name(hr_cycle c);

#ifdef __cplusplus
}
#endif
#endif /* HETRELAX_GRID_SOLVER_H */
