/*
 * Internals shared by the GPU sparse methods (issue 6, seed 002 sections 3.3-3.4):
 * checked calls that write into the run's error text, the sliced block layout of a
 * CSR row range, and the relaxation kernels' launchers.
 *
 * The sliced block layout cuts rows [row0, row0 + nrows) into blocks of B rows. Within
 * a block, entry p of local row t sits at ptr[blk] + p * B + t (column-major, so the
 * threads of a block read consecutive words), padded to the block's widest row with
 * column -1. With `split`, entries whose column lies inside the row's own block go to
 * the "in" part (column stored relative to the block) and the rest to the "off" part;
 * without it every off-diagonal entry is "off". The diagonal is stored apart and
 * divided by (not multiplied by its inverse) so that results match the CPU formula.
 */
#ifndef HR_SPARSE_GPU_CUH
#define HR_SPARSE_GPU_CUH

#include <cuda_runtime.h>

#include "common/error.h"
#include "sparse/sparse_internal.h"

/* ------------------------------------------------------------ checked calls */

/* Writes "call failed at file:line: name: text" into r->err; returns the status that
 * the 2-D backend's hr_cuda_fail maps the error to. */
hr_status hr_sp_cuda_fail(hr_sparse_run *r, cudaError_t e, const char *call, const char *file, int line);
/* Same for a library status (cuSPARSE, cuBLAS) that is not a cudaError_t. */
hr_status hr_sp_lib_fail(hr_sparse_run *r, const char *what, const char *call, const char *file, int line);

#define HR_SPCU(r, call)                                                                                     \
    do {                                                                                                     \
        cudaError_t hr_spcu_e_ = (call);                                                                     \
        if (hr_spcu_e_ != cudaSuccess) return hr_sp_cuda_fail((r), hr_spcu_e_, #call, __FILE__, __LINE__);   \
    } while (0)

/* ------------------------------------------------------------- the layout */

typedef struct hr_sp_blocks {
    int row0, nrows, B, nblocks, split;
    int *off_w, *in_w;           /* per block: padded row width of each part */
    long long *off_ptr, *in_ptr; /* per block: first slot of each part */
    int *off_col, *in_col;       /* global column (off), column - block start (in) */
    double *off_val, *in_val;
    long long off_slots, in_slots; /* total slots, padding included */
    int max_in_w, max_off_w;
} hr_sp_blocks;

/* Builds the layout of rows [row0, row0 + nrows) of A on the current device.
 * Returns HR_ERR_NO_MEMORY / HR_ERR_DEVICE with r->err set on failure. */
hr_status hr_sp_blocks_build(hr_sparse_run *r, const hr_csr *A, int row0, int nrows, int B, int split,
                             hr_sp_blocks *L);
/* Frees the device arrays (on the current device); accepts a zeroed layout. */
void hr_sp_blocks_free(hr_sp_blocks *L);

/* Largest rows per block the async kernel takes (3 doubles of shared memory a row). */
#define HR_SP_MAX_BLOCK 8192
/* Threads per block of the async kernel for B rows. */
static inline int hr_sp_threads(int B)
{
    int t = (B + 31) / 32 * 32;
    return t > 1024 ? 1024 : t;
}

/* -------------------------------------------------------------- launchers */

/* One global iteration of async-(K) (Algorithm 1) over the blocks of L: each thread
 * block reads x from xr, forms the off-block part once, runs K local Jacobi sweeps in
 * shared memory and writes its rows to xw. frozen: fault mask by global row, or NULL.
 * stop: device flag (hr_sp_ctl.stop) that makes the launch do nothing, or NULL. */
cudaError_t hr_sp_async_launch(const hr_sp_blocks *L, const double *diag, const double *b, const double *xr,
                               double *xw, int K, const unsigned char *frozen, const int *stop,
                               cudaStream_t st);
/* Prepares the async kernel for B rows per block (shared-memory opt-in, module load). */
cudaError_t hr_sp_async_prepare(int B);

/* One Jacobi sweep xn = x + tau D^-1 (b - A x) over L (built without split). */
cudaError_t hr_sp_jacobi_launch(const hr_sp_blocks *L, const double *diag, const double *b, const double *x,
                                double *xn, double tau, const unsigned char *frozen, const int *stop,
                                cudaStream_t st);
cudaError_t hr_sp_jacobi_prepare(void);

/* Devices first..first+count-1 present? Else r->err says so in the CLI's words:
 * "gpu: no CUDA device D (found N)" (HR_ERR_NO_DEVICE) or, for several GPUs on a
 * machine with fewer, "gpus: ..." (HR_ERR_INVALID_ARG). */
hr_status hr_sp_check_devices(hr_sparse_run *r, int first, int count);

/* ------------------------------------------------- residual on the device */

/* ||b - A x|| / ||b|| on the device (sparse_residual.cu): one kernel, scaled norms,
 * one 8-byte copy back. */
/* Device-side checks (tol > 0, checked every iteration, one GPU): after each iteration
 * a check kernel computes the residual, counts the iteration and, when the residual is
 * below tol or above divref (or not finite), sets stop: the later kernels of the call
 * (graph replays included) then do nothing, so the iterate stays the one that met the
 * test and `done` is the exact iteration count. One small copy back per call. */
typedef struct hr_sp_ctl {
    int stop; /* 1: a check stopped the solve */
    int pad;
    long long done;            /* iterations checked since the solve's load */
    double rel;                /* the last check's residual */
    double tol, divref, bnorm; /* per solve (graph arguments are fixed at capture) */
} hr_sp_ctl;

typedef struct hr_sp_resid {
    int n, nblk, dev;
    long long *d_rowp; /* A in CSR (NULL when the caller gives q = A x) */
    int *d_col;
    double *d_val;
    double *d_xh;             /* the host hub's x, uploaded (async AMC on several GPUs) */
    double *d_part;           /* per thread block: max |r_i|, sum (r_i / max)^2 */
    double *d_out;            /* the result (2 doubles, then the ticket) */
    unsigned int *d_ticket;   /* blocks done: the last combines */
    double *h_out;            /* pinned */
    double bnorm;             /* ||b||_2 of the b on the device, set by the method's load */
    hr_sp_ctl *d_ctl, *h_ctl; /* device-side checks (h_ctl pinned) */
} hr_sp_resid;

/* Allocates on the current device; with_matrix uploads A's CSR, with_hub a vector for
 * the hub's x. */
hr_status hr_sp_resid_setup(hr_sparse_run *r, hr_sp_resid *R, int with_matrix, int with_hub);
/* *rel for x (d_q NULL: A x formed from the CSR) or for q = A x given (d_x unused),
 * on stream st, which it synchronises. */
hr_status hr_sp_resid_run(hr_sparse_run *r, hr_sp_resid *R, const double *d_b, const double *d_x,
                          const double *d_q, cudaStream_t st, double *rel);
/* Enqueues one device-side check of x (or of q = A x given; d_q NULL: from the CSR)
 * after an iteration, on st: no host sync. */
cudaError_t hr_sp_resid_check(hr_sp_resid *R, const double *d_b, const double *d_x, const double *d_q,
                              cudaStream_t st);
/* Starts a solve's device-side checks: stop = 0, done = 0, tol, r->divref and
 * R->bnorm (set those first); on st, synchronised. */
hr_status hr_sp_ctl_reset(hr_sparse_run *r, hr_sp_resid *R, cudaStream_t st);
/* After a call: copies the control block back on st, after the call's work, and
 * synchronises st (so it stands for the call's own final sync); fills r->checked_*. */
hr_status hr_sp_ctl_fetch(hr_sparse_run *r, hr_sp_resid *R, cudaStream_t st);
/* Frees; accepts a zeroed struct. */
void hr_sp_resid_free(hr_sp_resid *R);

/* Environment knobs shared by the relaxation methods (docs/gpu-sparse.md). */
int hr_sp_env_int(const char *name, int def, int lo, int hi);

#endif
