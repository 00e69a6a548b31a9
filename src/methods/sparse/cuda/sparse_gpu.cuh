/*
 * Internals shared by the GPU sparse methods (Anzt et al. sections 3.3-3.4):
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

#include "core/error.h"
#include "core/tuning.h"
#include "methods/sparse/sparse_internal.h"

/* ------------------------------------------------------------ checked calls */

/* Writes "call failed at file:line: name: text" into r->err; returns the status that
 * the 2-D backend's hri_cuda_fail maps the error to. */
hr_status hri_sp_cuda_fail(hr_sparse_run *r, cudaError_t e, const char *call, const char *file, int line);
/* Same for a library status (cuSPARSE) that is not a cudaError_t. */
hr_status hri_sp_lib_fail(hr_sparse_run *r, const char *what, const char *call, const char *file, int line);

#define HR_SPCU(r, call)                                                                                     \
    do {                                                                                                     \
        cudaError_t hr_spcu_e_ = (call);                                                                     \
        if (hr_spcu_e_ != cudaSuccess) return hri_sp_cuda_fail((r), hr_spcu_e_, #call, __FILE__, __LINE__);   \
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
hr_status hri_sp_blocks_build(hr_sparse_run *r, const hr_csr *A, int row0, int nrows, int B, int split,
                             hr_sp_blocks *L);
/* Frees the device arrays (on the current device); accepts a zeroed layout. */
void hri_sp_blocks_free(hr_sp_blocks *L);

/* Largest rows per block the async kernel takes (3 doubles of shared memory a row). */
#define HR_SP_MAX_BLOCK 8192
/* Threads per block of the async kernel for B rows. */
static inline int hr_sp_threads(int B)
{
    int t = (B + 31) / 32 * 32;
    return t > 1024 ? 1024 : t;
}

/* -------------------------------------------------------------- launchers */

/* Device-side checks (sparse_residual.cu): the control block a solve's kernels share.
 * A device loop runs bodies of U iterations; position j of a body is iteration
 * k = base + j + 1 of the solve, and does nothing once a check stopped the solve or
 * past the call's end (target). */
typedef struct hr_sp_ctl {
    int stop;                  /* 1: a check stopped the solve */
    int from;                  /* lean body's end: position (0..U) of the iterate the loop continues from */
    long long done;            /* the last iteration checked in this solve */
    long long stop_at;         /* the first iteration a check stopped at (checks may finish
                                * out of order: async runs two chains of them) */
    double rel_at[2];          /* residual of the last checked iteration of each parity */
    double tol, divref, bnorm; /* per solve (graph arguments are fixed at capture) */
    long long base;            /* iterations before the running body's first */
    long long target;          /* the current call ends after this iteration */
    long long bodies;          /* bodies run (profile) */
    int last_u;                /* the length of the last lean body run */
    double lrate; /* variable lean bodies: d ln(residual) / d iteration seen last (0: none yet) */
    double *hist; /* deferred monitors: residual of k at (k / mon_every) % ring */
    long long mon_every;
    long long ring;
} hr_sp_ctl;

#ifdef __CUDACC__
/* Iteration number (1-based) of body position j, or 0 when it must do nothing: a check
 * stopped the solve, or k is past the call's end (target + lag; lag 1: jacobi's sweep
 * after the call's last iteration, which checks that iteration). `stop` may be set by
 * a check on another stream meanwhile: kernels with barriers take the block's answer
 * from one thread (hr_sp_gate_block), and the vectors they write are not the ones
 * returned after a stop (docs/gpu-sparse.md). */
__device__ __forceinline__ long long hr_sp_gate(const hr_sp_ctl *c, int j, int lag = 0)
{
    const volatile hr_sp_ctl *v = c;
    if (v->stop) return 0;
    const long long k = v->base + j + 1;
    return k <= v->target + lag ? k : 0;
}

/* The same, one answer for the whole thread block (call from every thread). */
__device__ __forceinline__ long long hr_sp_gate_block(const hr_sp_ctl *c, int j, int lag = 0)
{
    __shared__ long long k_block;
    __syncthreads(); /* k_block of an earlier call has been read */
    if (threadIdx.x == 0) k_block = hr_sp_gate(c, j, lag);
    __syncthreads();
    return k_block;
}

/* max (MAX) or sum over the thread block; every thread gets the result. sm: 32 doubles. */
template <bool MAX> __device__ double hr_sp_block_reduce(double v, double *sm)
{
    for (int o = 16; o > 0; o >>= 1) {
        const double w = __shfl_down_sync(0xffffffffu, v, o);
        v = MAX ? fmax(v, w) : v + w;
    }
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    __syncthreads(); /* sm may still be read from the previous call */
    if (lane == 0) sm[wid] = v;
    __syncthreads();
    if (wid == 0) {
        v = lane < nw ? sm[lane] : 0.0; /* 0 is the identity of both: values are >= 0 */
        for (int o = 16; o > 0; o >>= 1) {
            const double w = __shfl_down_sync(0xffffffffu, v, o);
            v = MAX ? fmax(v, w) : v + w;
        }
        if (lane == 0) sm[0] = v;
    }
    __syncthreads();
    return sm[0];
}

/* A thread block's part of a scaled norm: (m, s) = (max |r_i|, sum (r_i / m)^2) over
 * its threads' r (NaN counts as Inf). */
__device__ __forceinline__ void hr_sp_block_norm(double ri, double *sm, double *m_out, double *s_out)
{
    double a = fabs(ri);
    if (!(a <= INFINITY)) a = INFINITY;
    const double m = hr_sp_block_reduce<true>(a, sm);
    const double t = m > 0.0 && m < INFINITY ? (ri / m) * (ri / m) : 0.0;
    *m_out = m;
    *s_out = hr_sp_block_reduce<false>(t, sm);
}

/* Combines nb pairs (m_b, s_b) the LAPACK dnrm2 way into ||r|| / bn (Inf when not
 * finite); every thread gets it. The pairs were written by other blocks of this launch
 * before their ticket: loaded from L2 (__ldcg), several in flight at once. (They were
 * volatile loads, each waiting for the last: ~0.5 us a load, 150 us for a check of
 * 2500 blocks' pairs on 8 snapshots, H100.) */
__device__ __forceinline__ double hr_sp_combine_norm(const double *part, unsigned nb, double bn, double *sm)
{
    double M = 0.0;
#pragma unroll 4
    for (unsigned k = threadIdx.x; k < nb; k += blockDim.x)
        M = fmax(M, __ldcg(part + 2 * k));
    M = hr_sp_block_reduce<true>(M, sm);
    double S = 0.0;
    if (M > 0.0 && M < INFINITY)
#pragma unroll 4
        for (unsigned k = threadIdx.x; k < nb; k += blockDim.x) {
            const double mk = __ldcg(part + 2 * k), sk = __ldcg(part + 2 * k + 1);
            if (mk > 0.0) S += sk * ((mk / M) * (mk / M));
        }
    S = hr_sp_block_reduce<false>(S, sm);
    bn = bn > 0.0 ? bn : 1.0; /* b = 0: ||r||, as on the host */
    return M < INFINITY ? (M / bn) * sqrt(S) : INFINITY;
}

/* A check's verdict on iteration k (one thread): counts it, keeps its residual (and a
 * deferred monitor point), stops on converged or diverged (NaN, Inf or growth). */
__device__ __forceinline__ void hr_sp_ctl_record(hr_sp_ctl *ctl, long long k, double rel)
{
    atomicMax((unsigned long long *)&ctl->done, (unsigned long long)k);
    ctl->rel_at[k & 1] = rel;
    if (ctl->hist && k % ctl->mon_every == 0) ctl->hist[(k / ctl->mon_every) % ctl->ring] = rel;
    if (rel < ctl->tol || !(rel <= ctl->divref)) {
        atomicMin((unsigned long long *)&ctl->stop_at, (unsigned long long)k);
        __threadfence(); /* stop_at before stop, for a reader that sees stop */
        ctl->stop = 1;
    }
}
#endif

/* One global iteration of async-(K) (Algorithm 1) over the blocks of L: each thread
 * block reads x from xr, forms the off-block part once, runs K local Jacobi sweeps in
 * shared memory and writes its rows to xw. frozen: fault mask by global row, or NULL.
 * ctl: device loop position j (NULL: always runs); then every row (frozen ones too) is
 * also written to snapshot k % snap_v of the ring snap (snap_v vectors of snap_n), the
 * copy of iterate k that its check reads (NULL snap: none). Without ctl, snap itself
 * (the lean body's fixed snapshot of its position). */
cudaError_t hri_sp_async_launch(const hr_sp_blocks *L, const double *diag, const double *b, const double *xr,
                               double *xw, int K, const unsigned char *frozen, const hr_sp_ctl *ctl, int j,
                               double *snap, int snap_v, long long snap_n, cudaStream_t st);
/* Prepares the async kernel for B rows per block (shared-memory opt-in, module load). */
cudaError_t hri_sp_async_prepare(int B);

/* One Jacobi sweep xn = x + tau D^-1 (b - A x) over L (built without split). The
 * device loop's sweeps, fused with the residual, are in sparse_jacobi.cu. */
cudaError_t hri_sp_jacobi_launch(const hr_sp_blocks *L, const double *diag, const double *b, const double *x,
                                double *xn, double tau, const unsigned char *frozen, cudaStream_t st);
cudaError_t hri_sp_jacobi_prepare(void);

/* Devices first..first+count-1 present? Else r->err says so in the CLI's words:
 * "gpu: no CUDA device D (found N)" (HR_ERR_NO_DEVICE) or, for several GPUs on a
 * machine with fewer, "gpus: ..." (HR_ERR_INVALID_ARG). */
hr_status hri_sp_check_devices(hr_sparse_run *r, int first, int count);

/* ------------------------------------------------- residual on the device */

/* ||b - A x|| / ||b|| on the device (sparse_residual.cu): one kernel, scaled norms,
 * one 8-byte copy back.
 * Device-side checks (tol > 0, checked every iteration, one GPU): after each iteration
 * a check kernel computes the residual, records the iteration and, when the residual
 * is below tol or above divref (or not finite), sets stop: the later kernels then do
 * nothing, so the iterate stays the one that met the test and `done` is the exact
 * iteration count. */
typedef struct hr_sp_resid {
    int n, nblk, dev;
    int wide_rows;     /* mean entries per row >= 16: the lean check reads the matrix once per 8 snapshots */
    int multi;         /* that one pass per 8 snapshots: wide_rows, or tuning.sparse_multi */
    long long *d_rowp; /* A in CSR (NULL when the caller gives q = A x) */
    int *d_col;
    double *d_val;
    double *d_xh;             /* the host hub's x, uploaded (async AMC on several GPUs) */
    double *d_part;           /* per thread block: max |r_i|, sum (r_i / max)^2 (two chains) */
    double *d_out;            /* the result (one a chain, then the two tickets) */
    unsigned int *d_ticket;   /* blocks done: the last combines (one a chain) */
    double *h_out;            /* pinned */
    double bnorm;             /* ||b||_2 of the b on the device, set by the method's load */
    hr_sp_ctl *d_ctl, *h_ctl; /* device-side checks (h_ctl pinned) */
    long long *h_range;       /* pinned: the next call's base and target, copied to d_ctl */
    cudaEvent_t ev[2];        /* profile: a call's first and last operation */
    double *d_hist, *h_hist;  /* deferred monitors: the ring on the device, its host copy */
    long mon_every;
    int ring;
    /* batched checks (batch = U > 0): the body's U residuals are computed by one kernel
     * at its end into d_brel[j] (position j), and the body's end records them in order */
    int batch;
    int bcap;                /* positions allocated (>= batch: the long lean body's too) */
    double *d_brel;          /* [bcap] */
    double *d_bpart;         /* [bcap][2 * bparts]: each position's block parts */
    unsigned int *d_bticket; /* [bcap] (hri_sp_resid_check_batch) */
} hr_sp_resid;

/* Allocates on the current device; with_matrix uploads A's CSR, with_hub a vector for
 * the hub's x. */
hr_status hri_sp_resid_setup(hr_sparse_run *r, hr_sp_resid *R, int with_matrix, int with_hub);
/* *rel for x (d_q NULL: A x formed from the CSR) or for q = A x given (d_x unused),
 * on stream st, which it synchronises. */
hr_status hri_sp_resid_run(hr_sparse_run *r, hr_sp_resid *R, const double *d_b, const double *d_x,
                          const double *d_q, cudaStream_t st, double *rel);
/* Enqueues the device-side check of body position j (iteration k): of x_k = d_x0 or
 * d_x1 by the parity of k (d_q NULL), or of q = A x_k given. No host sync. chain (0 or
 * 1) picks the scratch: checks of one chain must run in order (one stream), the two
 * chains may run at the same time. */
cudaError_t hri_sp_resid_check(hr_sp_resid *R, const double *d_b, const double *d_x0, const double *d_x1,
                              const double *d_q, int j, int chain, cudaStream_t st);
/* Batched checks (see hr_sp_resid): allocates the scratch of max(U, cap) positions with
 * bparts block parts each (R->nblk for hri_sp_resid_check_batch) and sets R->batch = U
 * (cap: the long lean body's length, or 0). */
hr_status hri_sp_resid_batch_setup(hr_sparse_run *r, hr_sp_resid *R, int U, int bparts, int cap);
/* Enqueues the batched check of a body's U positions (R->batch): of iterate k = base +
 * j + 1 in snapshot k % snap_v of the ring snap (vectors of R->n), into d_brel[j]; no
 * verdicts (the body's end records them). Position j's residual has the same bits as
 * hri_sp_resid_run of that snapshot (same kernel, same blocks). */
cudaError_t hri_sp_resid_check_batch(hr_sp_resid *R, const double *d_b, const double *snap, int snap_v,
                                    cudaStream_t st);
/* Batched checks wanted for a ring of `bytes` (tuning.sparse_batch, default on, and
 * bytes <= HR_SP_BATCH_BYTES): else per-iteration checks, whose sweeps dominate anyway. */
#define HR_SP_BATCH_BYTES (64ull << 20)
int hri_sp_batch_wanted(const hr_sparse_run *r, double bytes);
/* The lean WHILE body (hr_sp_lean) wanted with batched checks: tuning.sparse_lean
 * (default on; off: the gated batched body in the WHILE graph too, for comparison). */
int hri_sp_lean_wanted(const hr_sparse_run *r);
/* Variable lean bodies (hr_sp_lean.variable) wanted: tuning.sparse_predict (default on;
 * off: bodies of the full length, for comparison). */
int hri_sp_predict_wanted(const hr_sparse_run *r);
/* Starts a solve's device-side checks: stop = 0, done = base = 0, tol, r->divref and
 * R->bnorm (set those first); on st, synchronised. */
hr_status hri_sp_ctl_reset(hr_sparse_run *r, hr_sp_resid *R, cudaStream_t st);
/* After a call: copies the control block back on st, after the call's work, and
 * synchronises st (so it stands for the call's own final sync); fills r->checked_*. */
hr_status hri_sp_ctl_fetch(hr_sparse_run *r, hr_sp_resid *R, cudaStream_t st);
/* Frees; accepts a zeroed struct. */
void hri_sp_resid_free(hr_sp_resid *R);
/* max |v_i| (Inf for a NaN) and ||v|| of n values in device memory, on stream st (waits). */
hr_status hri_sp_device_norm(hr_sparse_run *r, const double *v, int n, cudaStream_t st, double *maxabs, double *norm);

/* ------------------------------------------------------ the device loop */

/* Enqueues one body of U iterations (positions 0..U-1, each gated by hr_sp_gate and
 * followed by its check, or with R->batch one batched check after the last) on st,
 * ending with a join on st; works live and under capture. The body's end
 * (hri_sp_body_end, which with R->batch records the batch's verdicts) is added by the
 * loop builder. */
typedef hr_status (*hr_sp_body_fn)(hr_sparse_run *r, void *ctx, int U, cudaStream_t st);

/* The lean body of a WHILE graph (batched checks, jacobi and async): the body's kernels
 * have pointers fixed at capture and read nothing of the control block. Position j
 * (iteration base + j + 1) runs the plain kernel (jacobi: ring slot j into slot
 * (j + 1) % U; async: in place, its rows also into snapshot j), then one batched check
 * of the U positions into R->d_brel (lag 0, no gates: positions past a stop or past
 * the call's end run in vain and are not recorded). The body's end records the
 * verdicts and sets ctl->from = p, the position of the iterate the loop continues from
 * (the stopping one, the call's last, or U). The loop only goes on after a whole body
 * (p = U), whose last iterate is where the next body starts; after the loop, one kernel
 * (once a call) copies ring slot (p + shift) % mod (n doubles) into dst, unless p is 0
 * or skip (dst holds it already); mod or skip 0: the last body's length (ctl->last_u).
 * variable > 0: bodies of any length from `variable` to U work (async: in place, from 1;
 * jacobi: a ring of the body's length, from 2), and each body's end picks the next
 * one's length (a SWITCH node over the lengths, hri_sp_loop_build) from the rate its
 * residuals fell at: as many iterations as the tolerance is predicted to need, plus a
 * margin, so that a solve's last body runs few iterations in vain. */
typedef struct hr_sp_lean {
    hr_sp_body_fn body; /* the U iterations and the batched check */
    int U;
    const double *ring;
    int shift, mod, skip;
    double *dst;
    long long n;
    /* NULL, or called (live) before body replays take over from the lean WHILE graph
     * (refused at launch): moves the iterate to where the replayed body reads it */
    hr_sp_body_fn to_replay;
    int variable;
} hr_sp_lean;

/* A solve's device loop for one fault state: `body` replays U iterations; `loop` (when
 * conditional nodes work here) is a graph with a WHILE node around the same body (or,
 * with `lean`, around the lean body of lean_def.U iterations), which runs bodies until the
 * call's end or a stop without returning to the host. */
typedef struct hr_sp_loop {
    cudaGraphExec_t body, loop;
    int U, lag; /* lag 1: the body's sweeps check the iteration before (jacobi) */
    int lean;   /* loop runs lean_def.body (lag 0); 2: its copy is launched after it, not in it */
    hr_sp_lean lean_def;
    void *ctx;
    /* body-length policy (hri_sp_loop_add_long): a second lean WHILE graph of long_def.U
     * iterations a body, used from iteration switch_at of a solve on (a call that
     * straddles switch_at is run in two parts, one host wait between them); short
     * solves keep the short body, whose stop wastes fewer iterations */
    cudaGraphExec_t loop_long;
    int long_lean; /* as lean, for loop_long */
    hr_sp_lean long_def;
    long switch_at;
} hr_sp_loop;

/* Captures the body (and, unless allow_while is 0 or the runtime refuses, the WHILE
 * graph, around lean->body when lean is not NULL) on st. A refused capture leaves
 * L->body NULL and returns HR_OK: the caller then checks on the host. */
hr_status hri_sp_loop_build(hr_sparse_run *r, hr_sp_resid *R, hr_sp_loop *L, int U, int lag, int allow_while,
                           hr_sp_body_fn body, void *ctx, const hr_sp_lean *lean, cudaStream_t st);
/* Adds the long lean WHILE graph (lean->U iterations a body, same ring: a lean body
 * starts and ends in slot 0) to a loop whose short lean WHILE graph was built; used from
 * iteration switch_at on. Refused by the runtime: the loop keeps the short body. */
hr_status hri_sp_loop_add_long(hr_sparse_run *r, hr_sp_resid *R, hr_sp_loop *L, const hr_sp_lean *lean,
                              long switch_at, cudaStream_t st);
/* The lean body's batched check for async: position j's residual from snapshot j of
 * snap (vectors of R->n) into d_brel[j], no gates (same kernel and blocks as
 * hri_sp_resid_run: the same bits). */
cudaError_t hri_sp_resid_check_lean(hr_sp_resid *R, const double *d_b, const double *snap, int U,
                                   cudaStream_t st);
/* Runs `count` iterations from r->done: sets the call's range (base = r->done, target =
 * r->done + count) on the device, launches the WHILE graph once (or the body
 * ceil((count + lag) / U) times), then fetches the control block (one host wait).
 * Fills r->checked_* and the profile. After it, L->loop && L->lean says whether the
 * lean body ran (a WHILE graph refused at launch is dropped for good). */
hr_status hri_sp_loop_run(hr_sparse_run *r, hr_sp_resid *R, hr_sp_loop *L, long count, cudaStream_t st);
void hri_sp_loop_free(hr_sp_loop *L);
/* The device loop's settings: tuning.sparse_device_checks (off: host checks),
 * tuning.sparse_while (off: body replays only, hri_sp_while_wanted) and tuning.sparse_body
 * (iterations a body; default from the monitor interval). */
int hri_sp_loop_wanted(const hr_sparse_run *r);
int hri_sp_loop_body_len(const hr_sparse_run *r);
int hri_sp_while_wanted(const hr_sparse_run *r);
/* The body-length policy: the long lean body's length (tuning.sparse_body_long, default
 * 64; -1: off), or 0 when it does not apply: tuning.sparse_body forces one length, or
 * monitors cut the calls at an interval that is not a multiple of it. *switch_at: the
 * iterations of a solve run with the short body first (tuning.sparse_body_switch,
 * default 256). The caller also checks that its ring of that many vectors fits. */
int hri_sp_loop_body_long(const hr_sparse_run *r, long *switch_at);

/* Profile helpers (tuning.sparse_profile): the host clock, and a timed wait. */
double hri_sp_now(void);
hr_status hri_sp_sync(hr_sparse_run *r, cudaStream_t st);

/* The profile's name of how a solve is checked (after device_checks is set). */
const char *hri_sp_mode_name(const hr_sparse_run *r, const hr_sp_loop *L, int batch);

#endif
