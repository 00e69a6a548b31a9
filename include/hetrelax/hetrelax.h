/*
 * hetrelax: tuned and asynchronous relaxation solvers for CPUs, GPUs and clusters.
 *
 * One public header, one prefix (hr_). Every function that can fail returns an
 * hr_status; the library never prints to stdout and never calls exit().
 */
#ifndef HETRELAX_H
#define HETRELAX_H

#include <stddef.h>

#include "hetrelax/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_VERSION_MAJOR  0
#define HR_VERSION_MINOR  2
#define HR_VERSION_PATCH  0
#define HR_VERSION_NUMBER (HR_VERSION_MAJOR * 10000 + HR_VERSION_MINOR * 100 + HR_VERSION_PATCH)

/*! hr_version_string() :
 *  @return the library version as "MAJOR.MINOR.PATCH" (static storage). */
HR_API const char *hr_version_string(void);

/*! hr_version_number() :
 *  @return HR_VERSION_NUMBER of the library that was linked (may differ from the header's). */
HR_API unsigned hr_version_number(void);

/* ------------------------------------------------------------------ status */

typedef enum {
    HR_OK = 0,
    HR_ERR_INVALID_ARG, /* an option or argument is out of range */
    HR_ERR_NO_MEMORY,   /* host allocation failed or the problem is too large */
    HR_ERR_IO,          /* a file could not be opened, read or written */
    HR_ERR_FORMAT,      /* a file's contents are malformed */
    HR_ERR_UNSUPPORTED, /* feature not compiled in (CUDA, hwloc, libpng, ...) */
    HR_ERR_NO_DEVICE,   /* backend asked for but no device present */
    HR_ERR_DEVICE,      /* a device (CUDA) call failed */
    HR_ERR_DIVERGED,    /* NaN/Inf, a growing residual, or a breakdown (HR_REASON_BREAKDOWN) */
    HR_ERR_INTERNAL,    /* a bug: please report */
    HR_STATUS_COUNT
} hr_status;

/*! hr_status_string() :
 *  @return a short, static, human-readable description of `s`. */
HR_API const char *hr_status_string(hr_status s);

/* ----------------------------------------------------------------- options */

/* One precision enum for every options struct and array argument of the library. 0 (what a
 * zeroed struct holds) is HR_PREC_DEFAULT, the library default: double, everywhere.
 * hr_options_default() asks for single explicitly (the relaxation benchmarks' precision). */
typedef enum {
    HR_PREC_DEFAULT = 0, /* double */
    HR_PREC_SINGLE,      /* fp32 */
    HR_PREC_DOUBLE,      /* fp64 */
    HR_PREC_MIXED        /* multigrid and CG only: fp32 cycles inside an fp64 defect correction */
} hr_precision;

typedef enum {
    HR_BACKEND_AUTO = 0,    /* best available: gpu if present, else cpu-threads */
    HR_BACKEND_CPU_SEQ,     /* sequential reference */
    HR_BACKEND_CPU_THREADS, /* SPMD threads, 2-D block partition, one barrier per sweep */
    HR_BACKEND_GPU,         /* CUDA */
    HR_BACKEND_HYBRID,      /* rows (2-D) or planes (3-D) split between CPU threads and a GPU (hybrid.h) */
    HR_BACKEND_COUNT
} hr_backend;

typedef enum { HR_BIND_NONE = 0, HR_BIND_CORE } hr_bind;

/* flat: one shared padded grid; blocks: per-thread tiles with ghost cells (NUMA variant) */
typedef enum { HR_LAYOUT_FLAT = 0, HR_LAYOUT_BLOCKS } hr_layout;

typedef enum {
    HR_RHS_SPIKE = 0,    /* point source h^2 f = 1 at the centre point, evaluated inline */
    HR_RHS_MANUFACTURED, /* f = d pi^2 prod sin(pi x_a); exact u = prod sin(pi x_a) (unit square/cube) */
    HR_RHS_ARRAY,        /* f given by the caller (options.rhs_values) */
    HR_RHS_ZERO,         /* f = 0 (Laplace): only the boundary drives the solution */
    HR_RHS_RANDOM        /* f in [0, 1) from a seed, per unknown (hetrelax/problem.h; problems only) */
} hr_rhs;

/* Initial interior values (the boundary ring always holds options.boundary). */
typedef enum {
    HR_INIT_ZERO = 0, /* u0 = 0 */
    HR_INIT_SINE,     /* u0 = prod_a sin(pi i_a / (n_a + 1)): an eigenvector of the Jacobi iteration */
    HR_INIT_ARRAY     /* given by the caller (options.init_values) */
} hr_init;

typedef enum { HR_HOST_PINNED = 0, HR_HOST_PAGEABLE } hr_host_memory;

/* The methods on the structured grids (docs/redblack.md, docs/multigrid.md). hr_solver runs
 * the relaxation methods (Jacobi, red-black, SOR); hr_grid_solver (grid_solver.h) runs all. */
typedef enum {
    HR_METHOD_JACOBI = 0, /* two grids, every point from the previous sweep (weighted by omega); the
                             asynchronous variants are kernels of it (async0..async3) */
    HR_METHOD_REDBLACK,   /* in place: colour 0 ((i + j [+ k]) even), then colour 1; omega 0 or 1: plain
                             Gauss-Seidel, else u' = (1 - omega) u + omega gs(u) */
    HR_METHOD_SOR,        /* red-black with omega; omega 0 (or HR_OMEGA_AUTO): the optimum for the
                             Dirichlet Laplacian, 2 / (1 + sin(pi h)) on a square or cube */
    HR_METHOD_MG,         /* geometric multigrid cycles (hr_grid_solver only) */
    HR_METHOD_CG,         /* matrix-free conjugate gradient (hr_grid_solver only) */
    HR_METHOD_MGCG,       /* CG preconditioned by one multigrid V-cycle (hr_grid_solver only) */
    HR_METHOD_COUNT
} hr_method;

/* options.omega for HR_METHOD_REDBLACK / HR_METHOD_SOR: the optimal SOR weight
 * 2 / (1 + sqrt(1 - rho^2)), rho the Jacobi spectral radius (resolved in hr_solver_config). */
#define HR_OMEGA_AUTO (-1.0)

/*! hr_method_name() : "jacobi", "redblack", "sor", "mg", "cg", "mgcg", or NULL for an unknown value. */
HR_API const char *hr_method_name(hr_method m);

/*! Monitor callback: called every `monitor_every` sweeps (and at the end) with the
 *  sweep count and the relative residual ||f - A u|| / ||f||. Return non-zero to stop. */
typedef int (*hr_monitor_fn)(long iteration, double residual, void *user);

/* ------------------------------------------------------------------ tuning */

/* Switches of hr_tuning: 0 is the library's default, HR_TUNE_ON / HR_TUNE_OFF force it. */
#define HR_TUNE_ON  1
#define HR_TUNE_OFF (-1)

/* Tuning knobs: how a run goes about its work, never what it computes (every knob keeps the
 * deterministic kernels bitwise equal to cpu-seq). The library reads no environment variable;
 * the `hetrelax` command maps the HETRELAX_* variable named after each knob onto it (and
 * some onto flags too). Every field 0 (a zeroed struct, hr_options_default()) is the library's
 * default. Switches take 0, HR_TUNE_ON or HR_TUNE_OFF; where 0 of a count is meaningful,
 * -1 asks for it. Knobs marked "tests" exist so tests and benchmarks can reach a code path.
 * Paths are borrowed: they must stay valid until the handle that took them is freed.
 * docs/configuration.md lists every knob with its variable and default. */
typedef struct hr_tuning {
    /* host memory and CPU threads */
    int hugepages;        /* ON: advise big grids (>= 8 MiB) MADV_HUGEPAGE; default off */
    int cpu_stream;       /* cpu-threads stores of the new grid: ON streaming (non-temporal), OFF
                             ordinary; 0: spmd streams when the grids exceed its cache share, pencil
                             takes the tuning cache's or its default choice */
    int cpu_block;        /* pencil (3-D cpu-threads): y rows per pencil, 1..2^20 (0: tuning cache,
                             else the default); given, it wins over the cache */
    int cpu_block_stream; /* pencil, with cpu_block: ON streaming, OFF ordinary stores (0: as
                             cpu_stream); cpu_stream, when set, wins */
    int rb_tile[2];       /* cpu red-black (not fused): tile rows x columns; 0: the default (4 rows,
                             full width), -1: untiled (rows) / full width (columns) */
    /* the tuning cache (`hetrelax tune`) that runs look their shapes up in */
    const char *tune_file; /* the cache file, used as given (its folder must exist) */
    const char *cache_dir; /* else gpu-tune.txt in this folder, created when missing (NULL:
                              ~/.cache/hetrelax of the user's home directory) */
    /* GPU (backend gpu) */
    int gpu_shape[3];    /* Jacobi GPU kernels: block BX x BY and H rows (planes) per thread, all
                            three or none (0: tuning cache, shipped table, default) */
    int gpu_pdl;         /* OFF: no programmatic dependent launch on compute capability >= 9 */
    int gpu_split;       /* tests: `tuned` sweeps as two regions cut at this row (2-D) or plane (3-D)
                            when 1 < gpu_split <= n (0: one region) */
    int rb_gpu_shape[3]; /* red-black GPU kernels: BX x BY [x H] (H 0: the kernel's); 0: cache,
                            shipped or default */
    /* red-black on several GPUs (rb-mgpu, rb-2gpu) */
    int rb2_v1;       /* ON: the two-GPU in-place scheme, v1 (2 GPUs only) */
    int rb2_old;      /* ON: the two-GPU fused in-place scheme (2 GPUs only; rb2_v1 wins) */
    int rb2_one;      /* tests: ON puts every slab on the first device (the code path, not the speed) */
    int rb2_kcopy;    /* ON: the exchange by a copy kernel, also without graphs */
    int rb2_shape[3]; /* streaming scheme BX x BY x H; in-place schemes BX x 0 x H (0: the default,
                         or rb-tuned's cached shape) */
    int rb2_srows;    /* streaming scheme: rows per strip, >= 2 (0: 2) */
    int rb2_graph;    /* CUDA graphs of this many iterations, even, 2..1000 (0: none) */
    /* multigrid on a GPU (hr_mg_options.backend gpu) */
    long mg_gpu_small;      /* levels of at most this many points inside one one-block kernel (0: 1024
                               in 2-D, 512 in 3-D) */
    int mg_gpu_nograph;     /* ON: no CUDA graph, kernels launched one by one */
    int mg_gpu_rb;          /* 2: red-black smoothing in two passes (0: one pass) */
    long mg_gpu_march;      /* one-pass red-black marches on levels of >= this many points (0: the
                               default, 1e6; -1: never) */
    long mg_gpu_fuse;       /* 2-D: red-black sweeps (and the prolongation before them) fused into one
                               pass on levels of >= this many points (0: the default, 1e6 in fp64, 3e7 in fp32; -1:
                               never) */
    int mg_gpu_async_local; /* smoother async: local red-black sweeps per pass (0: 2) */
    /* sparse methods on GPUs (hr_sparse_options) */
    int sparse_streams;       /* async: streams per GPU, 1..32 (0: 1) */
    int sparse_graph;         /* async: iterations per CUDA graph, 1..4096 (0: 32; -1: no graphs) */
    int sparse_amc_serial;    /* ON: AMC exchange serial to the kernels (comparison) */
    int sparse_amc_every;     /* AMC: an exchange every this many kernels, 1..1024 (0: 1) */
    int sparse_while;         /* OFF: body replays instead of the device's WHILE graph */
    int sparse_device_checks; /* OFF: residual checks on the host instead of on the device */
    int sparse_body;          /* iterations per loop body, 1..256 (0: from the monitor interval) */
    int sparse_body_switch;   /* iterations after which long bodies start, 1..2^30 (0: 256) */
    int sparse_body_long;     /* iterations per long body, 1..256 (0: 64; -1: none) */
    int sparse_multi;         /* lean check reading the matrix once per 8 snapshots: ON, OFF (0: for
                                 rows of 16 entries or more) */
    int sparse_lean;          /* OFF: no lean loop body of plain kernels */
    int sparse_predict;       /* OFF: no predicted body lengths */
    int sparse_batch;         /* OFF: a residual check per iteration, not batched */
    int sparse_profile;       /* ON: where a GPU solve's host time went, printed to stderr */
    /* the hybrid backend, chains of GPUs and the CPU crews */
    double crew_spin_us;     /* microseconds a crew spins before it sleeps (0: 200 unpinned, 50000
                                pinned; < 0: sleep at once) */
    int crew_pin;            /* ON: pin crews wherever they fit (also two CPU parts), OFF: never */
    int crew_steal;          /* OFF: each crew worker runs exactly its own pieces */
    int crew_pieces;         /* pieces per crew worker, 1..64 (0: 4) */
    int cpu_pull;            /* tests: ON gives CPU parts the direct-copy schedule of peer GPUs */
    int peer;                /* OFF: stage every exchange through the host; ON: trust peer copies (no
                                start-up trial) */
    int peer_push;           /* ON: the source GPU pushes its rows (default: the receiver pulls) */
    int split_mapped;        /* OFF: every host edge staged through the engine's buffers */
    int chain_graph;         /* OFF: no CUDA graphs in a chain of GPUs */
    int exchange_trial;      /* tests: ON runs the start-up exchange trial wherever copies are direct */
    double auto_watch;       /* --split auto's watch: the margin over GPU-only that ends a split
                                (0: 0.01; < 0: no watch) */
    int auto_watch_force;    /* tests: ON ends any split of both parts after its first window */
    const char *split_trace; /* append one JSON line per split engine and crew jobs to this file */
    /* decomposed runs: MPI ranks, GPU subdomains */
    int mpi_mapped;            /* OFF: no mapped ghost planes between ranks of one node */
    int mpi_inplace;           /* OFF: shared-memory halos copied through the bound buffers */
    int mpi_shm;               /* OFF: MPI point-to-point halos instead of shared memory on a node */
    int mpi_cuda_aware;        /* OFF: treat the MPI library as not CUDA-aware (stage through the host) */
    int dsolver_pencil;        /* OFF: 3-D CPU subdomains swept without the pencil blocking */
    int dsolver_queued;        /* tests: ON runs the device schedule on CPU ranks */
    int dsolver_progress;      /* OFF: no MPI progress calls while the inner points are swept */
    int dgpu_generic;          /* tests: ON sweeps every GPU subdomain box with the generic kernel */
    const char *dsolver_trace; /* write each rank's exchange timeline to PATH.RANK */
    double nccl_timeout;       /* seconds an NCCL wait may take (0: 120; < 0: no limit) */
} hr_tuning;

/* Grids: element (i, j[, k]) is row i (y), column j (x, contiguous) [, plane k (z)].
 * Arrays passed in or out (rhs_values, init_values, solutions) hold the interior only,
 * x fastest: index ((k-1) * ny + (i-1)) * nx + (j-1). */
typedef struct hr_options {
    int n;            /* interior points per axis where nx/ny/nz are 0, >= 1 */
    int dim;          /* 2 (5-point, default) or 3 (7-point); 0 means 2 */
    int nx, ny, nz;   /* interior points per axis (0: n); nz only in 3-D */
    long iters;       /* maximum number of sweeps T, >= 0 */
    double tol;       /* stop when relative residual < tol; 0 runs all T sweeps */
    long check_every; /* residual check interval K when tol > 0 */
    hr_precision precision;
    hr_backend backend;
    const char *kernel; /* NULL: the backend's default kernel */
    int threads;        /* CPU threads; 0: one per core */
    hr_bind bind;
    hr_layout layout;
    int thread_rows; /* CPU thread grid shape (rows x cols); 0: automatic */
    int thread_cols;
    hr_rhs rhs;
    const double *rhs_values; /* nx*ny[*nz] values of f for HR_RHS_ARRAY (copied) */
    hr_init init;
    const double *init_values; /* nx*ny[*nz] initial values for HR_INIT_ARRAY (copied) */
    double boundary;           /* Dirichlet boundary value */
    double omega;              /* weight: u' = (1 - omega) u + omega jacobi(u); 0 or 1: plain */
    double divtol;             /* diverged when the checked relative residual exceeds this
                                  (0: 1e3; the relative residual starts at 1 from u0 = 0) */
    int alpha;                 /* async factor / sweeps per pass for kernels that use it */
    long monitor_every;        /* 0: no monitor calls */
    hr_monitor_fn monitor;
    void *monitor_user;
    int keep_history;      /* record (iteration, residual) at every check */
    double reference_gbps; /* bandwidth to report the fraction against; 0: none */
    hr_host_memory host_memory;
    int device; /* GPU ordinal */
    int verify; /* GPU: compare against cpu-seq after the run */
    /* --- added with the red-black methods; keep new fields below --- */
    hr_method method; /* HR_METHOD_JACOBI (0, default), HR_METHOD_REDBLACK or HR_METHOD_SOR: needs a
                         kernel with HR_CAP_REDBLACK for the red-black methods, one without for Jacobi */
    /* hybrid backend (include/hetrelax/hybrid.h, docs/hybrid.md) */
    double split;               /* fraction of rows (2-D) or planes (3-D) on the CPU, taken from
                                   the low end; < 0: auto (the model's best, 0 when the CPU cannot help) */
    int split_ghost;            /* g: ghost rows exchanged every g sweeps (0: 1, overlapped) */
    int split_second;           /* the second placement: HR_SPLIT_GPU, or HR_SPLIT_CPU (a CPU team, tests) */
    int split_schedule;         /* HR_SPLIT_NESTED or HR_SPLIT_NAIVE (Sourouri et al. listings 3 and 2) */
    int split_boundary_threads; /* nested: threads of the boundary team (0: automatic) */
    int gpus;             /* backend hybrid: > 1 runs a chain of that many equal slabs of the slowest axis on
                             GPUs device..device+gpus-1 (split_second HR_SPLIT_CPU: CPU crews); 0 or 1: as before.
                             Backend gpu with a kernel of HR_CAP_GPUS (rb-mgpu): the GPUs it runs on */
    hr_tuning tuning;     /* how the run goes about it (all 0: the defaults) */
    int flush_subnormals; /* 1: cpu-seq and cpu-threads flush subnormal results and operands to zero
                             in every thread of a run (x86-64 MXCSR FTZ + DAZ, aarch64 FPCR.FZ), the
                             caller's mode put back after it; faster where subnormals are slow, and
                             bitwise cpu-seq with the same setting. 0 (default): IEEE subnormals. gpu
                             and hybrid keep subnormals (hr_config.flush_subnormals: what runs); other
                             CPUs: HR_ERR_UNSUPPORTED. docs/cpu.md */
} hr_options;

enum { HR_SPLIT_GPU = 0, HR_SPLIT_CPU = 1 };
enum { HR_SPLIT_NESTED = 0, HR_SPLIT_NAIVE = 1 };

/*! hr_options_default() :
 *  Fills `o` with defaults: n=1024, iters=1000, tol=0, check_every=100, single
 *  precision, automatic backend, spike right-hand side. */
HR_API void hr_options_default(hr_options *o);

/*! hr_options_validate() :
 *  @return HR_OK or HR_ERR_INVALID_ARG; on error, writes the offending field name and
 *  reason into `why` (may be NULL) of size `why_size`. */
HR_API hr_status hr_options_validate(const hr_options *o, char *why, size_t why_size);

/* ------------------------------------------------------------------ result */

typedef enum {
    HR_REASON_ITERS = 0, /* ran the requested number of sweeps */
    HR_REASON_CONVERGED, /* residual fell below tol */
    HR_REASON_STOPPED,   /* the monitor (the user) asked to stop */
    HR_REASON_DIVERGED,  /* the residual grew beyond the divergence tolerance */
    HR_REASON_NAN,       /* the residual became NaN or Inf */
    HR_REASON_BREAKDOWN, /* CG: p^T A p <= 0 (A not symmetric positive definite); the iterate
                            is the last one before it */
    HR_REASON_STAGNATED  /* CG: its recurrence passed tol far below while the true residual b - A x stays
                            above it: the accuracy double precision attains on this problem */
} hr_reason;

typedef struct hr_result {
    int dim, nx, ny, nz;  /* the grid that ran */
    long iterations;      /* sweeps done (Teff for the async kernels, docs/async.md) */
    long global_syncs;    /* syncs of all workers between sweeps (barriers, launches); = iterations
                             for synchronous kernels */
    double time_s;        /* wall time of the iteration loop (sweeps + checks) */
    double time_sweeps_s; /* time in sweeps only (several processes: the slowest one's) */
    double time_per_sweep_s;
    double time_setup_s;       /* allocation, first touch, host-to-device */
    double time_h2d_s;         /* host-to-device copies (GPU) */
    double time_d2h_s;         /* device-to-host copies (GPU) */
    double time_compute_s;     /* per phase, inside time_s: sweeps (time_sweeps_s less exchange) */
    double time_exchange_s;    /* halo exchange not hidden behind compute (multi-device runs);
                                  several processes: each phase the largest of any process */
    double time_residual_s;    /* residual checks and monitors */
    double relative_residual;  /* recomputed on the host at the end, in double */
    double max_error;          /* vs exact solution (manufactured), else NaN */
    double flops_per_point;    /* per sweep: 5 (2-D) or 8 (3-D), + 3 with a weight omega */
    double gflops;             /* flops_per_point per interior point per sweep */
    double gbps;               /* under the byte model below */
    double bytes_per_point;    /* byte model: u read once + u written once (+ f read) */
    double reference_gbps;     /* the options' reference bandwidth */
    double bandwidth_fraction; /* gbps / reference_gbps, or NaN */
    hr_reason reason;
    char backend[32];
    char kernel[32];
    char device_name[96];
    /* appended with hr_grid_solver, which fills them (hr_solver_run leaves them 0) */
    hr_method method;
    hr_precision precision;    /* what ran (HR_PREC_DEFAULT resolved) */
    int levels;                /* multigrid levels (mg, mgcg), else 0 */
    int ranks;                 /* MPI ranks of the solve (1 in one process) */
    double convergence_factor; /* mg, cg: (final / initial residual)^(1 / iterations), else NaN */
    double last_factor;        /* mg, cg: the last iteration's residual ratio, else NaN */
    double rhs_projection;     /* a singular problem (no Dirichlet face): how much of b was removed to
                                  make it compatible, ||b - b_projected|| / ||b||; else 0 */
} hr_result;

HR_API const char *hr_reason_string(hr_reason r);
HR_API const char *hr_backend_name(hr_backend b);
HR_API const char *hr_precision_name(hr_precision p);

/* ------------------------------------------------------------------ solver */

typedef struct hr_solver hr_solver;

/*! hr_solver_create() :
 *  Validates `o`, allocates the grids (padded rows, first interior point of each row
 *  aligned to 128 bytes) and prepares the backend. The options are copied.
 *  @return HR_OK and a handle in *out, or an error with *out = NULL. */
HR_API hr_status hr_solver_create(const hr_options *o, hr_solver **out);

/*! hr_solver_run() :
 *  Runs the iteration from the current state (u = boundary, interior 0 on first call).
 *  Fills `res` (may be NULL). Returns HR_ERR_DIVERGED if the iteration blew up.
 *  HR_ERR_INVALID_ARG while a run of `s` is under way (a call from its own monitor, or from
 *  another thread), and when the count of sweeps done would pass LONG_MAX. */
HR_API hr_status hr_solver_run(hr_solver *s, hr_result *res);

/*! hr_solver_free() : releases everything; accepts NULL. Ignored when called during a run of
 *  `s` (from its monitor): the run's caller still holds the handle and frees it after. */
HR_API void hr_solver_free(hr_solver *s);

/*! hr_last_error() :
 *  @return why the last failing call without a handle on this thread failed: a create
 *  (hr_solver_create, hr_grid_solver_create, hr_sparse_solver_create) or a problem setter;
 *  "field: reason" for invalid options and arguments, the failing call for device errors.
 *  A create clears it first. Calls with a handle say why in the handle
 *  (hr_solver_last_error, hr_grid_solver_last_error, hr_sparse_solver_last_error). The
 *  multigrid, MPI and hybrid-calibration calls write here too: hr_mg_last_error,
 *  hr_mpi_last_error, hr_mpi_hybrid_last_error and hr_hybrid_last_error return this text. */
HR_API const char *hr_last_error(void);

/*! hr_solver_last_error() : a message describing the last failure of `s` ("" if none). */
HR_API const char *hr_solver_last_error(const hr_solver *s);

/*! hr_solver_solution() :
 *  Copies the n*n interior solution, row-major without padding, converted to
 *  `prec`, into dst (room for `count` elements). */
HR_API hr_status hr_solver_solution(const hr_solver *s, hr_precision prec, void *dst, size_t count);

/*! hr_solver_set_solution() :
 *  Replaces the current interior solution by `src` (nx*ny[*nz] values of precision
 *  `prec`, the layout of hr_solver_solution) and sets the count of sweeps done to
 *  `done`: a checkpoint restart. Synchronous kernels then continue bitwise as the
 *  uninterrupted run would. `done` must leave room for options.iters more sweeps
 *  (0 <= done <= LONG_MAX - iters); refused during a run of `s`. */
HR_API hr_status hr_solver_set_solution(hr_solver *s, hr_precision prec, const void *src, size_t count,
                                        long done);

/*! hr_solver_sweeps_done() : sweeps done since create (or the last set_solution); -1 for NULL. */
HR_API long hr_solver_sweeps_done(const hr_solver *s);

/*! hr_solver_run_sweeps() :
 *  Runs `count` sweeps (options.iters is ignored) with the options' checks and monitors,
 *  for callers that run in chunks (checkpoints). Unlike hr_solver_run it computes no final
 *  host residual: res->relative_residual is the last checked one (NaN when none was due). */
HR_API hr_status hr_solver_run_sweeps(hr_solver *s, long count, hr_result *res);

/*! hr_solver_request_stop() :
 *  Asks a running hr_solver_run (another thread, or a signal handler: it only stores to a
 *  volatile sig_atomic_t) to stop after its current chunk of sweeps (at the latest the next
 *  check or monitor point), reason HR_REASON_STOPPED. A request made between runs stops
 *  the next run after its first chunk; the run that stops answers it. Kernels with
 *  HR_CAP_ALPHA, whose calls are part of their schedule, stop at checks and monitors only. */
HR_API void hr_solver_request_stop(hr_solver *s);

/*! hr_solver_history() :
 *  @return the number of recorded residual checks; *iters and *res point into the
 *  solver (valid until the next run or free). */
HR_API size_t hr_solver_history(const hr_solver *s, const long **iters, const double **res);

/* ----------------------------------------------------------- introspection */

/* The registry: every kernel, structured method, multigrid smoother and sparse method of this
 * build, one entry each, with what it can do. The command's --list-* listings, its --help
 * choices and its errors for unknown names come from here. */
typedef enum {
    HR_KIND_KERNEL = 0, /* a sweep of the structured methods on one backend (--kernel) */
    HR_KIND_METHOD,     /* a structured method (poisson2d/3d --method) */
    HR_KIND_SMOOTHER,   /* a multigrid smoother (hetrelax/mg.h, --smoother) */
    HR_KIND_SPARSE,     /* a sparse method (hetrelax/sparse.h, sparse --method) */
    HR_KIND_COUNT
} hr_kind;

/* What an entry can do (hr_entry_info.caps). */
enum {
    HR_CAP_DETERMINISTIC = 1u << 0,    /* kernels: bitwise equal to cpu-seq for every thread count /
                                          shape; others: the same iterates for every thread count */
    HR_CAP_ALPHA = 1u << 1,            /* uses options.alpha (async factor, sweeps per pass) */
    HR_CAP_2D = 1u << 2,               /* runs the 2-D 5-point problem */
    HR_CAP_3D = 1u << 3,               /* runs the 3-D 7-point problem */
    HR_CAP_RECT = 1u << 4,             /* any extents per axis (else square / cubic only) */
    HR_CAP_OMEGA = 1u << 5,            /* honours options.omega */
    HR_CAP_TUNABLE = 1u << 6,          /* has shapes that `hetrelax tune` measures and caches */
    HR_CAP_REDBLACK = 1u << 7,         /* kernels: run the red-black methods (redblack, sor) and not
                                          Jacobi; methods: run on those kernels */
    HR_CAP_EXACT_AT_ALPHA1 = 1u << 8,  /* not deterministic in general, but bitwise cpu-seq at alpha 1 */
    HR_CAP_GPUS = 1u << 9,             /* runs on options.gpus GPUs of this process (--gpus N) itself */
    HR_CAP_SINGLE = 1u << 10,          /* runs in single precision */
    HR_CAP_DOUBLE = 1u << 11,          /* runs in double precision */
    HR_CAP_MIXED = 1u << 12,           /* runs fp32 iterations inside an fp64 defect correction */
    HR_CAP_SYMMETRIC = 1u << 13,       /* smoothers: symmetric (may precondition CG, pc mg) */
    HR_CAP_MG_HANDLE = 1u << 14,       /* methods: solved by the multigrid handle (hetrelax/mg.h) */
    HR_CAP_NEEDS_DIAGONAL = 1u << 15,  /* sparse: divides by a_ii (present and non-zero) */
    HR_CAP_NEEDS_SYMMETRIC = 1u << 16, /* sparse: its theory needs A = A^T (warns otherwise) */
    HR_CAP_TAU = 1u << 17,             /* sparse: honours options.tau */
    HR_CAP_FAULTS = 1u << 18,          /* sparse: honours the fault mask (options.fault_*) */
    HR_CAP_DEFAULT = 1u << 19          /* the default of its kind where no name is given, ahead of
                                          the first entry (which is the default otherwise) */
};

/* Which problems an entry handles (hr_entry_info.problems). */
enum {
    HR_PROBLEM_MODEL = 1u << 0,  /* -Laplace(u) = f on the unit square or cube: uniform spacing, unit
                                    coefficient, one constant Dirichlet value on every face */
    HR_PROBLEM_MATRIX = 1u << 1, /* A x = b with an assembled sparse matrix A (CSR) */
    HR_PROBLEM_GENERAL = 1u << 2 /* any structured problem (hetrelax/problem.h): extents, lengths,
                                    boundary conditions per face, a coefficient field */
};

typedef struct hr_entry_info {
    const char *name;    /* the command-line value (unique per kind, backend and dimension) */
    hr_backend backend;  /* HR_BACKEND_AUTO: every backend its handle has */
    const char *summary; /* one line */
    unsigned caps;       /* HR_CAP_* */
    hr_kind kind;
    unsigned problems; /* HR_PROBLEM_* */
    int id;            /* methods: the hr_method value (HR_CAP_MG_HANDLE: the hr_mg_method);
                          smoothers: the hr_mg_smoother; kernels: the variant its code runs */
} hr_entry_info;

/* A kernel's description: a registry entry of kind HR_KIND_KERNEL. */
typedef hr_entry_info hr_kernel_info;

/*! hr_kind_name() : "kernel", "method", "smoother", "sparse method", or NULL. */
HR_API const char *hr_kind_name(hr_kind kind);

/*! hr_registry_count() : @return the number of entries of `kind` in this build (0 for an
 *  unknown kind). */
HR_API int hr_registry_count(hr_kind kind);

/*! hr_registry_info_at() : describes entry i of `kind` (0 <= i < hr_registry_count(kind)), in
 *  registry order. */
HR_API hr_status hr_registry_info_at(hr_kind kind, int i, hr_entry_info *out);

/*! hr_registry_find() :
 *  The first entry of `kind` named `name` that runs on `backend` (HR_BACKEND_AUTO: any; an
 *  entry of backend AUTO runs on every one) in `dim` dimensions (0: any). A NULL name finds
 *  the default there: the first such entry marked HR_CAP_DEFAULT, else the first that is not
 *  red-black-only. HR_OK, or HR_ERR_INVALID_ARG when there is none. */
HR_API hr_status hr_registry_find(hr_kind kind, hr_backend backend, const char *name, int dim,
                                  hr_entry_info *out);

/*! hr_registry_default() : @return the name of the default entry of `kind` on `backend` in
 *  `dim` dimensions (0: any), or NULL. For kernels HR_BACKEND_AUTO resolves to the best
 *  backend present (hr_kernel_default). */
HR_API const char *hr_registry_default(hr_kind kind, hr_backend backend, int dim);

/*! hr_kernel_count() : @return the number of kernels in this build. */
HR_API int hr_kernel_count(void);

/*! hr_kernel_info_at() : describes kernel i (0 <= i < hr_kernel_count()). */
HR_API hr_status hr_kernel_info_at(int i, hr_kernel_info *out);

/*! hr_kernel_default() : @return the default kernel's name of `backend` in `dim` dimensions
 *  (HR_BACKEND_AUTO resolves to the best backend present), or NULL if there is none. */
HR_API const char *hr_kernel_default(hr_backend backend, int dim);

/* The configuration a solver resolved: what actually runs. */
typedef struct hr_config {
    hr_backend backend;
    char kernel[32];
    unsigned caps;
    int dim, nx, ny, nz;
    int threads;                  /* CPU threads that sweep (0: none) */
    int thread_rows, thread_cols; /* CPU thread grid (0: not used) */
    int shape[3];                 /* GPU tile (bx, by, h) or CPU block (x, y, z); 0: none */
    char shape_source[24];        /* "cache", "shipped", "default", "env", "candidate", "" */
    int streams;                  /* GPU streams used (0: none) */
    int device;                   /* GPU ordinal, -1 for the CPU */
    char device_name[96];
    double omega;         /* the weight that runs (HR_OMEGA_AUTO resolved) */
    hr_method method;     /* added with the red-black methods */
    int gpus;             /* GPUs the run uses at once (--gpus N chain; 0: see device) */
    int flush_subnormals; /* 1: runs flush subnormals to zero (options.flush_subnormals on a CPU backend) */
} hr_config;

/*! hr_solver_config() : fills `out` with what `s` resolved (backend, kernel, threads, shapes). */
HR_API hr_status hr_solver_config(const hr_solver *s, hr_config *out);

/* --------------------------------------------------------------- utilities */

typedef struct hr_bandwidth {
    double copy_gbps;  /* a[i] = b[i]: 2 words moved per element */
    double triad_gbps; /* a[i] = b[i] + s*c[i]: 3 words moved per element */
    size_t bytes;      /* size of each array */
    int threads;
    int repeats; /* best of this many timed runs (one warm-up discarded) */
    /* the spread of the timed runs (copy_gbps / triad_gbps above are their best) */
    double copy_gbps_min, copy_gbps_median;
    double triad_gbps_min, triad_gbps_median;
    double copy_s, triad_s; /* seconds of the best run: copy_gbps = 2 * bytes * 1e-9 / copy_s */
    hr_bind bind;           /* placement the probe's threads ran with */
} hr_bandwidth;

/*! hr_measure_host_bandwidth() :
 *  STREAM-style copy and triad on `threads` threads (0: all cores), unbound, over arrays of
 *  `bytes` each (0: the two copy arrays together 4x the last-level cache, at least 64 MiB and
 *  at most 1 GiB each). Every thread first-touches the part of the arrays it copies. Rates
 *  count bytes read + bytes written, times 1e-9 per second; best of `repeats` (0: 10) timed
 *  runs after a warm-up, with min and median. hr_measure_host_bandwidth_bound() (at the end of
 *  this header) takes the run's binding too. */
HR_API hr_status hr_measure_host_bandwidth(int threads, size_t bytes, int repeats, hr_bandwidth *out);

typedef struct hr_sysinfo {
    int cores; /* physical cores (hwloc), or logical CPUs without hwloc */
    int pus;   /* logical processors */
    int numa_nodes;
    int gpus; /* CUDA devices visible, 0 without CUDA */
    int have_cuda, have_hwloc, have_png;
    char cpu_model[128];
} hr_sysinfo;

HR_API hr_status hr_sysinfo_get(hr_sysinfo *out);

/*! hr_available_memory() : bytes of host memory a new allocation can use now (MemAvailable,
 *  capped by physical memory and by the address-space limit of ulimit -v). */
HR_API size_t hr_available_memory(void);

/*! hr_gpu_name() : name of GPU `ordinal` into buf; HR_ERR_NO_DEVICE if none. */
HR_API hr_status hr_gpu_name(int ordinal, char *buf, size_t size);

/*! hr_measure_device_bandwidth() : device-to-device copy rate (read + write bytes). */
HR_API hr_status hr_measure_device_bandwidth(int ordinal, size_t bytes, int repeats, double *gbps);

/* ---------------------------------------------- CPU placement and tuning (branch h-cpu3d) */

/*! hr_measure_host_bandwidth_bound() : hr_measure_host_bandwidth() with the threads placed as a
 *  run's are (`bind`, as hr_options.bind), so a run and its reference share thread count and
 *  placement. */
HR_API hr_status hr_measure_host_bandwidth_bound(int threads, hr_bind bind, size_t bytes, int repeats,
                                                 hr_bandwidth *out);

/*! hr_measure_host_bandwidth_tuned() : hr_measure_host_bandwidth_bound() with the arrays
 *  allocated as a run's grids are under `tune` (its hugepages knob; NULL: the defaults). */
HR_API hr_status hr_measure_host_bandwidth_tuned(int threads, hr_bind bind, size_t bytes, int repeats,
                                                 const hr_tuning *tune, hr_bandwidth *out);

typedef struct hr_cpu_tune_result {
    int block[3];        /* the fastest pencil: x (full rows), y rows, z planes per thread */
    int stream;          /* 1: streaming (non-temporal) stores of the new grid, 0: ordinary */
    double best_gbps;    /* its rate (8 or 16 B per point per sweep) */
    double default_gbps; /* the rate of the untuned default choice */
    int candidates;      /* shapes measured (every one bitwise equal to the first) */
    char cache_path[512];
} hr_cpu_tune_result;

/*! hr_cpu_tune() :
 *  Measures the 3-D cpu-threads kernel `pencil` on the problem `o` (dim 3, extents, precision,
 *  threads, bind): every pencil height with ordinary and streaming stores, `sweeps` sweeps each
 *  (0: about 2e9 point updates), median of 3 after a warm-up; checks that every candidate gives
 *  bitwise the same grid; appends the fastest to the tuning cache (`cache_path`, or
 *  o->tuning.tune_file, else gpu-tune.txt in o->tuning.cache_dir, else
 *  ~/.cache/hetrelax/gpu-tune.txt: the GPU cache file, with a "cpu:"
 *  device key). Later pencil runs with the same CPU model, thread count and precision take
 *  the entry of the nearest size. */
HR_API hr_status hr_cpu_tune(const hr_options *o, long sweeps, const char *cache_path,
                             hr_cpu_tune_result *out, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

/* the problem description and the one structured-grid handle */
#include "hetrelax/grid_solver.h"
#include "hetrelax/problem.h"

#endif /* HETRELAX_H */
