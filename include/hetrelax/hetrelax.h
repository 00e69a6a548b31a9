/*
 * hetrelax: tuned and asynchronous relaxation solvers for CPUs, GPUs and clusters.
 *
 * One public header, one prefix (hr_). Every function that can fail returns an
 * hr_status; the library never prints to stdout and never calls exit().
 */
#ifndef HETRELAX_H
#define HETRELAX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HR_VERSION_MAJOR  0
#define HR_VERSION_MINOR  1
#define HR_VERSION_PATCH  0
#define HR_VERSION_NUMBER (HR_VERSION_MAJOR * 10000 + HR_VERSION_MINOR * 100 + HR_VERSION_PATCH)

/*! hr_version_string() :
 *  @return the library version as "MAJOR.MINOR.PATCH" (static storage). */
const char *hr_version_string(void);

/*! hr_version_number() :
 *  @return HR_VERSION_NUMBER of the library that was linked (may differ from the header's). */
unsigned hr_version_number(void);

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
    HR_ERR_DIVERGED,    /* NaN/Inf or a growing residual */
    HR_ERR_INTERNAL,    /* a bug: please report */
    HR_STATUS_COUNT
} hr_status;

/*! hr_status_string() :
 *  @return a short, static, human-readable description of `s`. */
const char *hr_status_string(hr_status s);

/* ----------------------------------------------------------------- options */

typedef enum { HR_PREC_SINGLE = 0, HR_PREC_DOUBLE = 1 } hr_precision;

typedef enum {
    HR_BACKEND_AUTO = 0,    /* best available: gpu if present, else cpu-threads */
    HR_BACKEND_CPU_SEQ,     /* sequential reference */
    HR_BACKEND_CPU_THREADS, /* SPMD threads, 2-D block partition, one barrier per sweep */
    HR_BACKEND_GPU,         /* CUDA */
    HR_BACKEND_COUNT
} hr_backend;

typedef enum { HR_BIND_NONE = 0, HR_BIND_CORE } hr_bind;

/* flat: one shared padded grid; blocks: per-thread tiles with ghost cells (NUMA variant) */
typedef enum { HR_LAYOUT_FLAT = 0, HR_LAYOUT_BLOCKS } hr_layout;

typedef enum {
    HR_RHS_SPIKE = 0,    /* point source h^2 f = 1 at the centre point, evaluated inline */
    HR_RHS_MANUFACTURED, /* f = 2 pi^2 sin(pi x) sin(pi y); exact u = sin(pi x) sin(pi y) */
    HR_RHS_ARRAY         /* f given by the caller (options.rhs_values) */
} hr_rhs;

typedef enum { HR_HOST_PINNED = 0, HR_HOST_PAGEABLE } hr_host_memory;

/*! Monitor callback: called every `monitor_every` sweeps (and at the end) with the
 *  sweep count and the relative residual ||f - A u|| / ||f||. Return non-zero to stop. */
typedef int (*hr_monitor_fn)(long iteration, double residual, void *user);

typedef struct hr_options {
    int n;            /* interior points per side (grid is (n+2)^2), >= 1 */
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
    const double *rhs_values; /* n*n row-major values of f for HR_RHS_ARRAY (copied) */
    double boundary;          /* Dirichlet boundary value */
    int alpha;                /* async factor / sweeps per pass for kernels that use it */
    long monitor_every;       /* 0: no monitor calls */
    hr_monitor_fn monitor;
    void *monitor_user;
    int keep_history;      /* record (iteration, residual) at every check */
    double reference_gbps; /* bandwidth to report the fraction against; 0: none */
    hr_host_memory host_memory;
    int device; /* GPU ordinal */
    int verify; /* GPU: compare against cpu-seq after the run */
} hr_options;

/*! hr_options_default() :
 *  Fills `o` with defaults: n=1024, iters=1000, tol=0, check_every=100, single
 *  precision, automatic backend, spike right-hand side. */
void hr_options_default(hr_options *o);

/*! hr_options_validate() :
 *  @return HR_OK or HR_ERR_INVALID_ARG; on error, writes the offending field name and
 *  reason into `why` (may be NULL) of size `why_size`. */
hr_status hr_options_validate(const hr_options *o, char *why, size_t why_size);

/* ------------------------------------------------------------------ result */

typedef enum {
    HR_REASON_ITERS = 0, /* ran the requested number of sweeps */
    HR_REASON_CONVERGED, /* residual fell below tol */
    HR_REASON_STOPPED,   /* the monitor asked to stop */
    HR_REASON_DIVERGED   /* NaN/Inf or a growing residual */
} hr_reason;

typedef struct hr_result {
    long iterations;      /* sweeps done (Teff for the async kernels, docs/async.md) */
    long global_syncs;    /* syncs of all workers between sweeps (barriers, launches); = iterations
                             for synchronous kernels */
    double time_s;        /* wall time of the iteration loop (sweeps + checks) */
    double time_sweeps_s; /* time in sweeps only */
    double time_per_sweep_s;
    double time_setup_s;       /* allocation, first touch, host-to-device */
    double time_h2d_s;         /* host-to-device copies (GPU) */
    double time_d2h_s;         /* device-to-host copies (GPU) */
    double relative_residual;  /* recomputed on the host at the end, in double */
    double max_error;          /* vs exact solution (manufactured), else NaN */
    double gflops;             /* 5 flops per point per sweep */
    double gbps;               /* under the byte model below */
    double bytes_per_point;    /* byte model: u read once + u written once (+ f read) */
    double reference_gbps;     /* the options' reference bandwidth */
    double bandwidth_fraction; /* gbps / reference_gbps, or NaN */
    hr_reason reason;
    char backend[32];
    char kernel[32];
    char device_name[96];
} hr_result;

const char *hr_reason_string(hr_reason r);
const char *hr_backend_name(hr_backend b);
const char *hr_precision_name(hr_precision p);

/* ------------------------------------------------------------------ solver */

typedef struct hr_solver hr_solver;

/*! hr_solver_create() :
 *  Validates `o`, allocates the grids (padded rows, first interior point of each row
 *  aligned to 128 bytes) and prepares the backend. The options are copied.
 *  @return HR_OK and a handle in *out, or an error with *out = NULL. */
hr_status hr_solver_create(const hr_options *o, hr_solver **out);

/*! hr_solver_run() :
 *  Runs the iteration from the current state (u = boundary, interior 0 on first call).
 *  Fills `res` (may be NULL). Returns HR_ERR_DIVERGED if the iteration blew up. */
hr_status hr_solver_run(hr_solver *s, hr_result *res);

/*! hr_solver_free() : releases everything; accepts NULL. */
void hr_solver_free(hr_solver *s);

/*! hr_last_error() :
 *  @return why the last hr_solver_create() on this thread failed ("" if it did not or no
 *  detail is known): the field and reason for invalid options, the failing call for
 *  device errors. Valid until the next hr_solver_create() on this thread. */
const char *hr_last_error(void);

/*! hr_solver_last_error() : a message describing the last failure of `s` ("" if none). */
const char *hr_solver_last_error(const hr_solver *s);

/*! hr_solver_solution() :
 *  Copies the n*n interior solution, row-major without padding, converted to
 *  `prec`, into dst (room for `count` elements). */
hr_status hr_solver_solution(const hr_solver *s, hr_precision prec, void *dst, size_t count);

/*! hr_solver_history() :
 *  @return the number of recorded residual checks; *iters and *res point into the
 *  solver (valid until the next run or free). */
size_t hr_solver_history(const hr_solver *s, const long **iters, const double **res);

/* --------------------------------------------------------------- utilities */

typedef struct hr_bandwidth {
    double copy_gbps;  /* a[i] = b[i]: 2 words moved per element */
    double triad_gbps; /* a[i] = b[i] + s*c[i]: 3 words moved per element */
    size_t bytes;      /* size of each array */
    int threads;
    int repeats; /* best of this many timed runs (one warm-up discarded) */
} hr_bandwidth;

/*! hr_measure_host_bandwidth() :
 *  STREAM-style copy and triad on `threads` threads (0: all cores) over arrays of
 *  `bytes` each (0: 4x the last-level cache, at least 64 MiB). Rates count
 *  bytes read + bytes written, times 1e-9 per second. */
hr_status hr_measure_host_bandwidth(int threads, size_t bytes, int repeats, hr_bandwidth *out);

typedef struct hr_sysinfo {
    int cores; /* physical cores (hwloc), or logical CPUs without hwloc */
    int pus;   /* logical processors */
    int numa_nodes;
    int gpus; /* CUDA devices visible, 0 without CUDA */
    int have_cuda, have_hwloc, have_png;
    char cpu_model[128];
} hr_sysinfo;

hr_status hr_sysinfo_get(hr_sysinfo *out);

/*! hr_gpu_name() : name of GPU `ordinal` into buf; HR_ERR_NO_DEVICE if none. */
hr_status hr_gpu_name(int ordinal, char *buf, size_t size);

/*! hr_measure_device_bandwidth() : device-to-device copy rate (read + write bytes). */
hr_status hr_measure_device_bandwidth(int ordinal, size_t bytes, int repeats, double *gbps);

#ifdef __cplusplus
}
#endif
#endif /* HETRELAX_H */
