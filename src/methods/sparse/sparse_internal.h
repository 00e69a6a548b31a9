/*
 * Internals of the sparse solvers: a method's entry points and the state of one solve.
 *
 * Adding a method or a backend: write one file that defines its hr_sparse_ops and add one
 * line to the registry (src/core/registry.def: name, backend, capabilities, summary). The
 * driver (sparse_solve.c) owns stopping, monitors, divergence, fault scheduling and
 * metrics; a method only advances the iterate by `count` global iterations.
 */
#ifndef HR_SPARSE_INTERNAL_H
#define HR_SPARSE_INTERNAL_H

#include "core/error.h"
#include "core/registry.h"
#include "hetrelax/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hr_sparse_run hr_sparse_run;

/* Opt-in timing of the GPU methods' host side (tuning.sparse_profile on, printed to
 * stderr by the driver after each solve): where a solve's loop time goes. */
typedef struct hr_sparse_prof {
    int on;
    const char *mode;                    /* "while-graph", "body-replay", "graphs", "host-checks" */
    long calls;                          /* iterate() calls */
    long launches, live, syncs;          /* graph launches, live kernel launches, host waits */
    long captures;                       /* graphs captured and instantiated inside the loop */
    double t_enqueue, t_wait, t_capture; /* seconds: issuing work, waiting for it, captures */
    double t_device;                     /* device time from the first to the last op of each call */
    int body;                            /* device loop: iterations per graph body */
    long bodies;                         /* device loop: bodies run */
} hr_sparse_prof;

/* A sparse method's entry points; its registry entry (r->m, an hr_entry) holds its name,
 * backend and capabilities (HR_CAP_NEEDS_DIAGONAL, _TAU, _FAULTS, _NEEDS_SYMMETRIC, ...). */
typedef struct hr_sparse_ops {
    /* Allocates the method's state (r->impl), uploads data. */
    hr_status (*setup)(hr_sparse_run *r);
    /* Advances r->x (or the device copy) by `count` global iterations. The fault state
     * (r->fault_active) is constant during one call. */
    hr_status (*iterate)(hr_sparse_run *r, long count);
    /* Makes r->x hold the current iterate (NULL when it always does). */
    hr_status (*sync_host)(hr_sparse_run *r);
    void (*teardown)(hr_sparse_run *r);
    /* (Re)starts from r->b and r->x, a new right-hand side and initial guess: uploads
     * them, forms what depends on them (CG's first residual). Called before each solve
     * of a handle, after setup; setup itself must not read b or x. NULL: iterate() reads
     * r->b and r->x directly. */
    hr_status (*load)(hr_sparse_run *r);
    /* ||b - A x|| / ||b|| of the current iterate where it lives (the GPU methods: on the
     * device, no copy of x). NULL: the driver calls sync_host and computes it on the host. */
    hr_status (*residual)(hr_sparse_run *r, double *rel);
    /* What it allocates beside A, b and x, for the estimate made before anything is: host
     * bytes per row and per stored entry, and the vectors of n doubles it keeps on a device. */
    double host_row_bytes, host_entry_bytes;
    int device_vectors;
} hr_sparse_ops;

struct hr_sparse_run {
    const hr_csr *A;
    const double *b;
    double *x; /* the caller's vector: initial guess in, iterate out */
    int on_device; /* b and x are the caller's vectors in the GPU's memory (a GPU method's
                      load and sync_host copy them on the device; norms are taken there) */
    hr_sparse_options o;
    const hr_entry *m;     /* the method's registry entry; its entry points: m->sparse */
    int threads;           /* resolved thread count (>= 1) */
    double tau;            /* relaxation factor for jacobi (1: plain) */
    long done;             /* global iterations done */
    unsigned char *frozen; /* fault mask: 1 = component not updated (NULL: no fault) */
    int fault_active;      /* whether the mask applies in the current iterate() call */
    int colors;            /* gs-mc: colours of the row colouring (0: not coloured) */
    int setups;            /* times setup ran (a handle: once) */
    double divref;         /* the solve's divergence threshold (set before load) */
    /* Device-side checks: a GPU method's setup sets device_checks when it tests every
     * iteration against tol and divref itself (tol > 0, check_every 1); the driver then
     * does not cut its calls at checks, and after each iterate() reads the iterations
     * done (this solve, all calls), whether a check stopped it and the last residual.
     * 1: a call costs launches in proportion to its length (body replays: the driver
     * caps the calls); 2: one launch whatever the length (a WHILE graph). */
    int device_checks;
    int checked_stop;
    long checked_done;
    double checked_rel;
    /* Deferred monitors (options.monitor_deferred, device checks): the method keeps the
     * residual of every multiple k of mon_every in a ring, entry (k / mon_every) %
     * mon_ring, and each iterate() call copies the call's entries to mon_hist (host).
     * mon_hist NULL: the method does not; monitors then cut the calls. */
    long mon_every;
    int mon_ring;
    const double *mon_hist;
    /* CG: > 0 when p^T A p was not positive: the global iteration (1-based) that broke
     * down, x holding the iterate before it; iterate() then returns HR_ERR_DIVERGED */
    long breakdown;
    double breakdown_pq;
    hr_sparse_prof prof;
    void *impl; /* method state */
    char err[256];
};

/* CSR helpers shared inside the library (csr.c). */
hr_status hri_csr_alloc(int n_rows, int n_cols, int64_t nnz, hr_csr **out);
/* hr_csr_from_coo, and when a sum of duplicates overflows: HR_ERR_INVALID_ARG with
 * overflow_at (may be NULL) = {row, column} of that entry, 0-based. */
hr_status hri_csr_from_coo_at(int n_rows, int n_cols, int64_t nnz, const int32_t *ri, const int32_t *ci,
                             const double *v, hr_csr **out, int32_t overflow_at[2]);
void hri_csr_locate_diagonal(hr_csr *A);
void hri_csr_spmv_rows(const hr_csr *A, const double *x, double *y, int r0, int r1);
/* ||v||_2 scaled by max |v_i|: no overflow for entries up to DBL_MAX. */
double hri_sparse_norm2(const double *v, int n);
/* A power of two 2^e with max |v_i| / 2^e in [1, 2) when max |v_i| is beyond 2^+-500
 * (1 otherwise): CG runs on v / 2^e, exactly, so that r.r cannot overflow. */
double hri_sparse_pow2_scale(double maxabs);

/* Memory, counted before it is touched (with overcommit a malloc that cannot be backed
 * succeeds, and the process is killed later without a word). All in bytes. */
/* A CSR matrix of n rows and nnz entries (row_ptr, diag, col, val). */
double hri_csr_bytes(int64_t n, int64_t nnz);
/* What hr_sparse_generate(spec) builds, without building it: rows, entries (the triplets
 * it reserves, an upper bound) and its peak (triplets, scratch and the CSR at once).
 * HR_ERR_INVALID_ARG with `why` for a bad spec. */
hr_status hri_sparse_generate_size(const char *spec, int64_t *n, int64_t *nnz, double *peak, char *why,
                                  size_t why_size);
/* What a solve with method m adds beside A, b and x: host bytes of its setup (and of the
 * spectral estimate that plain Jacobi's check runs), device bytes of a GPU method (A on
 * the device and its vectors). Estimates, on the high side. */
double hri_sparse_solve_host_bytes(const hr_entry *m, const hr_sparse_options *o, int64_t n, int64_t nnz);
double hri_sparse_solve_device_bytes(const hr_entry *m, const hr_sparse_options *o, int64_t n, int64_t nnz);
/* The spectral estimate's vectors (hr_sparse_spectral). */
double hri_sparse_spectral_bytes(int64_t n);
/* "12.3 GB" or "45.6 MB" into buf. */
const char *hri_sparse_bytes_text(double bytes, char *buf, size_t size);

/* Greedy colouring of the pattern of A + A^T in row order (cpu_gs_color.c): color[i] is
 * the smallest colour no coupled row j < i has; *ncolors the number used. */
hr_status hri_sparse_color_rows(const hr_csr *A, int *color, int *ncolors);

/* The relaxation update of row i, defined once for every CPU method:
 *   x_i' = (1 - tau) x_i + tau (b_i - sum_{j != i} a_ij x_j) / a_ii
 * With tau = 1 this is exactly the textbook Jacobi / Gauss-Seidel formula (eq. 2 of
 * Anzt et al.). `X(j)` reads component j (plain or relaxed-atomic access). */
#define HR_SPARSE_ROW_UPDATE(A, b, i, tau, xi, X, out)                                                       \
    do {                                                                                                     \
        double s_ = (b)[i];                                                                                  \
        for (int64_t p_ = (A)->row_ptr[i]; p_ < (A)->row_ptr[(i) + 1]; p_++)                                 \
            if ((A)->col[p_] != (i)) s_ -= (A)->val[p_] * X((A)->col[p_]);                                   \
        double d_ = s_ / (A)->val[(A)->diag[i]];                                                             \
        (out) = (tau) == 1.0 ? d_ : (1.0 - (tau)) * (xi) + (tau)*d_;                                         \
    } while (0)

/* Deterministic dot product: fixed chunks summed in order, so the value does not
 * depend on how chunks are spread over threads. */
#define HR_SPARSE_CHUNK 2048

/* Small, seedable generator (splitmix64) for generators, right-hand sides and faults. */
static inline uint64_t hr_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* Uniform in [0, 1). */
static inline double hr_uniform01(uint64_t *state)
{
    return (double)(hr_splitmix64(state) >> 11) * 0x1.0p-53;
}

#ifdef __cplusplus
}
#endif
#endif
