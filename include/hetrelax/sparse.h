/*
 * hetrelax sparse: A x = b for a general sparse matrix in CSR form, by Jacobi,
 * Gauss-Seidel, block-asynchronous async-(K) and conjugate gradient.
 *
 * Ownership rules
 *  - An hr_csr is created only by this library (hr_csr_from_coo, hr_sparse_generate,
 *    hr_mm_read_csr, hr_mm_parse_csr) and released with hr_csr_free(), which accepts
 *    NULL. Its arrays belong to it: read them freely, do not free or resize them.
 *    Values may be changed in place (keep the diagonal index consistent: it is not).
 *  - Vectors returned by the reader (hr_mm_read_vector, hr_mm_parse_vector) are
 *    allocated with malloc(); the caller releases them with free().
 *  - hr_sparse_solve() never keeps a pointer to its arguments after it returns; x is
 *    read as the initial guess and overwritten with the final iterate.
 *  - Strings in options (method) are borrowed for the duration of the call only.
 */
#ifndef HETRELAX_SPARSE_H
#define HETRELAX_SPARSE_H

#include <stdint.h>

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -------------------------------------------------------------------- CSR */

typedef struct hr_csr {
    int n_rows, n_cols;
    int64_t nnz;
    int64_t *row_ptr; /* n_rows + 1 offsets into col/val */
    int32_t *col;     /* 0-based columns, strictly increasing within a row */
    double *val;
    int64_t *diag; /* position of A(i,i) in col/val, or -1 when row i has none */
} hr_csr;

/* Limits on what the library builds: 32-bit column indices, and nnz small enough that
 * the arrays fit size_t arithmetic on any 64-bit host. */
#define HR_CSR_MAX_DIM 2147483000
#define HR_CSR_MAX_NNZ ((int64_t)1 << 40)

/*! hr_csr_from_coo() :
 *  Builds a CSR matrix from `nnz` 0-based triplets (copied). Duplicate entries are
 *  summed; explicit zeros are kept. @return HR_ERR_INVALID_ARG for an index out of
 *  range, a non-finite value or duplicates whose sum overflows, HR_ERR_NO_MEMORY when
 *  the arrays cannot be allocated. */
HR_API hr_status hr_csr_from_coo(int n_rows, int n_cols, int64_t nnz, const int32_t *ri, const int32_t *ci,
                                 const double *v, hr_csr **out);

/*! hr_csr_free() : releases the matrix; accepts NULL. */
HR_API void hr_csr_free(hr_csr *A);

/*! hr_csr_spmv() : y = A x (y has n_rows entries, x n_cols). */
HR_API void hr_csr_spmv(const hr_csr *A, const double *x, double *y);

/*! hr_csr_relative_residual() : ||b - A x||_2 / ||b||_2 in double (||b - A x|| when b = 0). */
HR_API double hr_csr_relative_residual(const hr_csr *A, const double *b, const double *x);

/*! hr_csr_is_symmetric() : 1 when A equals its transpose exactly (values and pattern). */
HR_API int hr_csr_is_symmetric(const hr_csr *A);

/*! hr_csr_check_diagonal() :
 *  @return HR_OK when A is square and every diagonal entry is present, finite and
 *  non-zero; else HR_ERR_INVALID_ARG with *bad_row set to the 0-based offending row
 *  (-1 for a non-square matrix). */
HR_API hr_status hr_csr_check_diagonal(const hr_csr *A, int *bad_row);

/*! hr_problem_matrix() :
 *  The assembled operator A of a structured problem (hetrelax/problem.h: the discrete
 *  system, symmetric), one row per unknown in the grid array order; b is hr_problem_rhs().
 *  @return HR_OK and *out, HR_ERR_INVALID_ARG (an invalid problem, or more than
 *  HR_CSR_MAX_DIM unknowns; the reason in hr_last_error()), HR_ERR_NO_MEMORY. */
HR_API hr_status hr_problem_matrix(const hr_problem *p, hr_csr **out);

/* ---------------------------------------------------------- Matrix Market */

/* Where and why a file was rejected: line is 1-based (0 when no line applies). */
typedef struct hr_mm_error {
    long line;
    char msg[200];
} hr_mm_error;

/*! hr_mm_parse_csr() :
 *  Parses a Matrix Market `coordinate` matrix (fields real, integer, pattern;
 *  symmetry general or symmetric, expanded on read) from memory. Indices are 1-based
 *  in the file; duplicates are summed. Sizes are checked against the bytes present
 *  before anything is allocated. @return HR_ERR_FORMAT with err filled on bad input. */
HR_API hr_status hr_mm_parse_csr(const char *buf, size_t len, hr_csr **out, hr_mm_error *err);

/*! hr_mm_read_csr() : hr_mm_parse_csr() on the contents of `path` (HR_ERR_IO if unreadable). */
HR_API hr_status hr_mm_read_csr(const char *path, hr_csr **out, hr_mm_error *err);

/*! hr_mm_parse_vector() :
 *  Parses a dense vector: `array real|integer general` of size N x 1 (or 1 x N).
 *  *out is malloc()ed, *n its length. */
HR_API hr_status hr_mm_parse_vector(const char *buf, size_t len, double **out, int *n, hr_mm_error *err);
HR_API hr_status hr_mm_read_vector(const char *path, double **out, int *n, hr_mm_error *err);

/*! hr_mm_write_csr() : writes A as `coordinate real general` (comment may be NULL). */
HR_API hr_status hr_mm_write_csr(const char *path, const hr_csr *A, const char *comment);

/*! hr_mm_write_vector() : writes x as `array real general` N x 1, 17 significant digits. */
HR_API hr_status hr_mm_write_vector(const char *path, const double *x, int n, const char *comment);

/* ------------------------------------------------------------- generators */

/*! hr_sparse_generate() :
 *  Builds a test matrix from a spec:
 *    trefethen:N            primes on the diagonal, 1 where |i-j| is a power of two
 *    laplace2d:M            5-point Laplacian on an M x M grid (n = M^2)
 *    laplace3d:M            7-point Laplacian on an M x M x M grid (n = M^3)
 *    fv2d:M                 9-point SPD stencil, symmetrically rescaled (n = M^2)
 *    random-spd:N:DENSITY:SEED  symmetric, strictly diagonally dominant, positive diagonal
 *  @return HR_ERR_INVALID_ARG with a reason in `why` for a malformed spec. */
HR_API hr_status hr_sparse_generate(const char *spec, hr_csr **out, char *why, size_t why_size);

/* ------------------------------------------------------- spectral checks */

typedef struct hr_spectral {
    double rho_B;      /* spectral radius of B = I - D^-1 A */
    double rho_absB;   /* spectral radius of |B| */
    double lambda_min; /* extreme eigenvalues of D^-1 A (NaN when A is not symmetric) */
    double lambda_max;
    double tau;    /* 2 / (lambda_min + lambda_max), NaN when unknown */
    int symmetric; /* 1: Lanczos on the symmetric scaling; 0: power iteration */
    int steps;     /* Lanczos or power steps used */
} hr_spectral;

/*! hr_sparse_spectral() :
 *  Estimates rho(B) and rho(|B|) for B = I - D^-1 A. For symmetric A with a positive
 *  diagonal, Lanczos runs on D^-1/2 A D^-1/2 (similar to D^-1 A) and on
 *  |D|^-1/2 |A - D| |D|^-1/2 (similar to |B|); otherwise power iteration is used.
 *  Needs a square A with a non-zero diagonal. `max_steps` <= 0 picks 300. */
HR_API hr_status hr_sparse_spectral(const hr_csr *A, int max_steps, hr_spectral *out);

/* ---------------------------------------------------------------- solving */

/* tau value asking the solver to compute 2 / (lambda_min + lambda_max) itself. */
#define HR_SPARSE_TAU_AUTO (-1.0)

typedef enum {
    HR_SPARSE_COMM_AUTO = 0, /* one GPU: x stays on it; several: AMC */
    HR_SPARSE_COMM_AMC,      /* host memory as hub, asynchronous copies on streams */
    HR_SPARSE_COMM_DC,       /* peer copies to and from a master GPU holding x */
    HR_SPARSE_COMM_DK,       /* kernels read and write the master GPU's x directly */
    HR_SPARSE_COMM_COUNT
} hr_sparse_comm;

typedef struct hr_sparse_options {
    const char *method; /* a sparse method (hr_registry_find, HR_KIND_SPARSE); default "jacobi" */
    hr_backend backend; /* AUTO: the method's first backend in the table */
    int threads;        /* CPU threads; 0: one per core */
    hr_bind bind;
    int local_iters;    /* K of async-(K) (default 5) */
    int block;          /* rows per block for async (default 128) */
    double tol;         /* stop when ||b - A x|| / ||b|| < tol; 0: run max_iters */
    long max_iters;     /* global iterations (default 1000) */
    long check_every;   /* residual check interval (default 1) */
    long monitor_every; /* call monitor every K iterations (0: never) */
    hr_monitor_fn monitor;
    void *monitor_user;
    double tau;          /* jacobi: 0 = plain (refused when rho(B) >= 1 unless
                          * allow_divergent), > 0 = x += tau D^-1 r, or HR_SPARSE_TAU_AUTO */
    int allow_divergent; /* skip the rho(B) < 1 refusal for plain jacobi */
    double divtol;       /* diverged when residual > divtol * initial (default 1e4) */
    /* Fault injection (Anzt et al. section 4.5): from global iteration fault_iter a random
     * fault_fraction of the components is no longer updated; with fault_recover >= 0
     * they are updated again fault_recover iterations later. fraction 0: no fault. */
    double fault_fraction;
    long fault_iter;
    long fault_recover; /* -1: never */
    uint64_t fault_seed;
    int device; /* GPU ordinal, for GPU methods */
    /* GPU async on several GPUs (Anzt et al. section 3.4): devices device..device+gpus-1
     * share the rows (0 or 1: one GPU); comm says how they exchange x. */
    int gpus;
    hr_sparse_comm comm;
    /* 1: the monitor only observes (its return value is ignored). GPU methods checked on
     * the device then call it after the fact, with the same iterations and residuals
     * from a history kept on the device, instead of returning to the host at every
     * monitor point. */
    int monitor_deferred;
    hr_tuning tuning; /* knobs of the GPU methods (hetrelax.h; all 0: the defaults) */
} hr_sparse_options;

typedef struct hr_sparse_result {
    long iterations;        /* global iterations done */
    double time_s;          /* the iteration loop, residual checks included */
    double time_iter_s;     /* iterations only */
    double time_per_iter_s; /* time_iter_s / iterations */
    double time_setup_s;
    double initial_residual;  /* ||b - A x0|| / ||b|| */
    double relative_residual; /* recomputed at the end (device vectors: on the device) */
    double tau;               /* jacobi: the relaxation factor used (1 for plain) */
    long faulty_components;   /* rows frozen by fault injection */
    int colors;               /* gs-mc: colours of the row colouring (0 for other methods) */
    hr_reason reason;
    char method[16];
    char backend[16];
    char message[256]; /* why a call failed, or a note ("" if none) */
    char warning[160]; /* something the caller should show even on success ("" if none),
                        * e.g. cg on a matrix that is not symmetric */
    int setups;        /* method setups the handle has done (1: setup paid once) */
} hr_sparse_result;

HR_API void hr_sparse_options_default(hr_sparse_options *o);

/*! hr_sparse_solve() :
 *  Solves A x = b from the initial guess in x (length n): hr_sparse_solver_create,
 *  one solve, free. Fills res (may be NULL; on failure res->message says why).
 *  @return HR_ERR_DIVERGED for NaN/Inf or a residual above divtol times the initial one
 *  (cg on a matrix that is not symmetric: above min(divtol, 10) times, with
 *  res->warning set), HR_ERR_INVALID_ARG for bad options, a non-square matrix or a
 *  missing/zero diagonal where the method divides by it, HR_ERR_NO_DEVICE for the gpu
 *  backend without a CUDA device. A 0 x 0 system returns HR_OK with 0 iterations
 *  (reason converged when tol > 0). Residual norms are scaled: no overflow for
 *  entries up to the largest double. */
HR_API hr_status hr_sparse_solve(const hr_csr *A, const double *b, double *x, const hr_sparse_options *o,
                                 hr_sparse_result *res);

/* A persistent solver (PETSc's setup/solve split): create pays the setup once (options
 * checked, thread team started, spectral estimate for jacobi, fault mask, device
 * upload of A), then solve takes any number of right-hand sides. The handle borrows A:
 * it must stay alive and unchanged until hr_sparse_solver_free(). The options are
 * copied (the method string is not kept; monitor and monitor_user are). One solve at a
 * time per handle. After a solve that failed with a status other than HR_OK or
 * HR_ERR_DIVERGED (a device error), free the handle. */
typedef struct hr_sparse_solver hr_sparse_solver;

/*! hr_sparse_solver_create() :
 *  Checks and sets up. res (may be NULL) gets the reason of a failure in res->message
 *  (the statuses of hr_sparse_solve) and, on success, res->warning.
 *  A 0 x 0 matrix is accepted: its solves return HR_OK at once with 0 iterations. */
HR_API hr_status hr_sparse_solver_create(const hr_csr *A, const hr_sparse_options *o, hr_sparse_solver **out,
                                         hr_sparse_result *res);

/*! hr_sparse_solver_solve() :
 *  Solves A x = b from the initial guess in x, as hr_sparse_solve() does, reusing the
 *  handle's setup (res->time_setup_s: the handle's setup on its first solve, then only
 *  the upload of b and x0). A second solve on the handle while one is under way (from its
 *  monitor, or another thread) is refused with HR_ERR_INVALID_ARG, and
 *  hr_sparse_solver_free() from the monitor is ignored. */
HR_API hr_status hr_sparse_solver_solve(hr_sparse_solver *h, const double *b, double *x,
                                        hr_sparse_result *res);

/*! hr_sparse_solver_solve_device() :
 *  hr_sparse_solver_solve with b and x (the initial guess in, the solution out; n doubles
 *  each) in the memory of the handle's GPU (device or managed memory; CUDA array interface
 *  pointers), for a gpu method on one GPU: they are copied on the device into the method's
 *  vectors and back, never through the host, and the initial and final residuals are
 *  computed there. `stream` is a cudaStream_t whose work so far the call waits for before
 *  it reads b and x (NULL: the legacy default stream); the call returns when x is written.
 *  The iterates are those of hr_sparse_solver_solve from the same values.
 *  @return as hr_sparse_solver_solve; HR_ERR_UNSUPPORTED for a CPU method, several GPUs or
 *  async's host hub (comm amc); HR_ERR_INVALID_ARG for a pointer that is not memory of the
 *  handle's GPU, or for b or x0 holding a value that is not finite. */
HR_API hr_status hr_sparse_solver_solve_device(hr_sparse_solver *h, const double *b, double *x, void *stream,
                                               hr_sparse_result *res);

/*! hr_sparse_solve_device() : hr_sparse_solve with b and x in the GPU's memory (create,
 *  hr_sparse_solver_solve_device, free). A stays on the host: the set-up reads it there. */
HR_API hr_status hr_sparse_solve_device(const hr_csr *A, const double *b, double *x, void *stream,
                                        const hr_sparse_options *o, hr_sparse_result *res);

/*! hr_sparse_solver_free() : releases the handle (device memory, threads); accepts NULL. */
HR_API void hr_sparse_solver_free(hr_sparse_solver *h);

/*! hr_sparse_method_at() : name, backend and summary of the registry's sparse method i (as
 *  hr_registry_info_at(HR_KIND_SPARSE, i, ...)), or NULL past the end. */
HR_API const char *hr_sparse_method_at(int i, hr_backend *backend, const char **summary);

#ifdef __cplusplus
}
#endif
#endif /* HETRELAX_SPARSE_H */
