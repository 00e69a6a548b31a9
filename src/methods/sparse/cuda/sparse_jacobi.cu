/*
 * GPU synchronous Jacobi for sparse systems (Anzt et al., the GPU Jacobi of sections 4.2-4.4):
 * one kernel launch per sweep between two device vectors. Launches are replayed from
 * CUDA graphs of HR_SP_JACOBI_GRAPH sweeps (one per starting vector and fault state),
 * which removes most of the launch overhead that dominates these small systems. With
 * device-side checks (sparse_residual.cu) the sweeps run in a device loop, fused with
 * the residual: sweep k forms b - A x_{k-1} row by row anyway (r_i = acc_i - a_ii x_i),
 * so it also writes its blocks' parts of ||r_{k-1}||, and a one-block kernel on a second
 * stream combines them and applies the tests while sweep k + 1 runs. Iterate k lives in
 * vector k % 3, so that x_{k-1} survives the two sweeps that may start before its
 * verdict; sweep k + 2 waits for it. The check of a call's last iteration T is sweep
 * T + 1 (the loop's lag): the next call computes that sweep again. The host-checked
 * path computes its residuals with the same kernels, so both see the same bits.
 * Deterministic: bitwise equal to the CPU Jacobi (same formula, order, no FMA).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/sparse/cuda/sparse_gpu.cuh"

#define HR_SP_JACOBI_GRAPH 32  /* even: a replay ends on the vector it began on */
#define HR_SP_JACOBI_ROWS  128 /* rows per thread block (one thread per row) */

typedef struct jac_state {
    hr_sp_blocks L;
    double *d_diag, *d_b, *d_x[2]; /* the host-checked path's two vectors: d_xs's first two */
    double *d_xs;                  /* V vectors of n: the device loop's ring; x is in vector cur */
    int V;                         /* 3, or batched U + 1 */
    int batch;                     /* batched checks (hr_sp_resid.batch) */
    double *d_part, *d_rout;       /* blocks' norm parts (two sets); a residual */
    double *h_rout;                /* pinned */
    unsigned char *d_frozen;
    int cur;             /* vector holding the iterate (device loop: done % 3) */
    cudaStream_t st, cs; /* cs: the checks of the device loop */
    cudaEvent_t ev_sweep, ev_check[2];
    cudaGraphExec_t graph[2][2]; /* [fault active][starting vector] */
    hr_sp_loop loop[2];          /* device-side checks: [fault active] */
    hr_sp_resid R;               /* residual checks on the device */
    int dc;                      /* device-side checks after every sweep (r->device_checks) */
    int body_fault;              /* the fault state of the body being captured */
} jac_state;

/* One sweep from d_x[from] (host checks). */
static hr_status launch(hr_sparse_run *r, jac_state *s, int from, int fault)
{
    HR_SPCU(r, hri_sp_jacobi_launch(&s->L, s->d_diag, s->d_b, s->d_x[from], s->d_x[1 - from], r->tau,
                                   fault ? s->d_frozen : NULL, s->st));
    return HR_OK;
}

/* Row i's b_i - sum_{j != i} a_ij x_j in the CPU's order (the sweep's numerator). */
__device__ __forceinline__ double jac_acc(const hr_sp_blocks &L, const double *__restrict__ b,
                                          const double *x, int blk, int t, int i)
{
    const int w = L.off_w[blk];
    const long long base = L.off_ptr[blk] + t;
    double acc = b[i];
#pragma unroll 4
    for (int p = 0; p < w; p++) {
        const int c = L.off_col[base + (long long)p * L.B];
        if (c >= 0) acc -= L.off_val[base + (long long)p * L.B] * x[c];
    }
    return acc;
}

/* One block's part of ||b - A x|| into part[2 blk], and with xn the sweep x -> xn (the
 * same bits as hri_sp_jacobi_kernel). Every thread of the block must call it. */
__device__ __forceinline__ void jac_fused(const hr_sp_blocks &L, const double *__restrict__ diag,
                                          const double *__restrict__ b, const double *x, double *xn,
                                          double tau, const unsigned char *__restrict__ frozen, double *part)
{
    __shared__ double sm[32];
    const int blk = blockIdx.x, t = threadIdx.x;
    const int i = L.row0 + blk * L.B + t;
    double ri = 0.0;
    if (t < L.B && i < L.row0 + L.nrows) {
        const double acc = jac_acc(L, b, x, blk, t, i), xi = x[i], di = diag[i];
        ri = acc - di * xi;
        if (xn) {
            const double d = acc / di;
            xn[i] = frozen && frozen[i] ? xi : tau == 1.0 ? d : (1.0 - tau) * xi + tau * d;
        }
    }
    double m, sq;
    hr_sp_block_norm(ri, sm, &m, &sq);
    if (t == 0) part[2 * blk] = m, part[2 * blk + 1] = sq;
}

/* Sweep k of the device loop (body position j): x_k = sweep(x_{k-1}) into vector k % V
 * of the ring xs (vectors of n), and the parts of ||r_{k-1}|| into set (k - 1) & 1, or
 * batched (by_pos) into set j. */
__global__ void __launch_bounds__(HR_SP_JACOBI_ROWS)
    hri_sp_jacobi_loop_kernel(hr_sp_blocks L, const double *__restrict__ diag, const double *__restrict__ b,
                             double *xs, long long n, int V, double tau,
                             const unsigned char *__restrict__ frozen, const hr_sp_ctl *ctl, int j,
                             double *part, int by_pos)
{
    const long long k = hr_sp_gate_block(ctl, j, 1);
    if (k == 0) return; /* stopped, or past the sweep that checks the call's last iteration */
    const double *x = xs + ((k - 1) % V) * n;
    double *xn = xs + (k % V) * n;
    const long long set = by_pos ? j : (k - 1) & 1;
    jac_fused(L, diag, b, x, xn, tau, frozen, part + set * 2 * (long long)L.nblocks);
}

/* The host-checked path's residual: the same parts, no sweep. */
__global__ void __launch_bounds__(HR_SP_JACOBI_ROWS)
    hri_sp_jacobi_resid_kernel(hr_sp_blocks L, const double *__restrict__ diag, const double *__restrict__ b,
                              const double *x, double *part)
{
    jac_fused(L, diag, b, x, NULL, 1.0, NULL, part);
}

/* The lean body's batched check: position y = blockIdx.y of U, x_{base + y + 1} in ring
 * slot (y + 1) % U, its parts into set y (the same as the sweep's, jac_fused); the last
 * block of a position (ticket[y]) combines them into out[y] as hri_sp_jacobi_combine
 * does (same function and block size: the same bits). No gate. */
__global__ void __launch_bounds__(HR_SP_JACOBI_ROWS)
    hri_sp_jacobi_check_lean(hr_sp_blocks L, const double *__restrict__ diag, const double *__restrict__ b,
                            const double *xs, long long n, int U, double *part, unsigned int *ticket,
                            double *out, const hr_sp_ctl *ctl)
{
    __shared__ double sm[32];
    __shared__ bool last;
    const int y = (int)blockIdx.y;
    part += (long long)y * 2 * L.nblocks;
    jac_fused(L, diag, b, xs + (long long)((y + 1) % U) * n, NULL, 1.0, NULL, part);
    if (threadIdx.x == 0) {
        __threadfence(); /* the block's pair is visible before the ticket says so */
        last = atomicAdd(ticket + y, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    const double rel = hr_sp_combine_norm(part, (unsigned)L.nblocks, ctl->bnorm, sm);
    if (threadIdx.x == 0) {
        out[y] = rel;
        ticket[y] = 0u; /* ready for the next body (stream order) */
    }
}

/* One block: ||r|| / ||b|| from nb parts. With ctl (the check after body position j's
 * sweep k): of iteration k - 1, from set (k - 1) & 1, applying the driver's tests;
 * without: into *out. Batched (ctl too): block j checks position j from set j into
 * out[j], no verdict (the body's end records them in order). */
__global__ void __launch_bounds__(HR_SP_JACOBI_ROWS)
    hri_sp_jacobi_combine(const double *part, int nb, double bnorm, hr_sp_ctl *ctl, int j, double *out,
                         int batch)
{
    __shared__ double sm[32];
    long long m = 0;
    if (batch) {
        j = (int)blockIdx.x;
        part += 2 * (long long)nb * j;
        out += j;
        const long long k = hr_sp_gate_block(ctl, j, 1);
        m = k - 1;
        if (k == 0 || m < 1 || m > ctl->target) return;
        bnorm = ctl->bnorm;
        ctl = NULL; /* no verdict here */
    } else if (ctl) {
        const long long k = hr_sp_gate_block(ctl, j, 1);
        m = k - 1;
        if (k == 0 || m < 1 || m > ctl->target) return; /* x_0 was checked on the host */
        part += (m & 1) * 2 * (long long)nb;
        bnorm = ctl->bnorm;
    }
    const double rel = hr_sp_combine_norm(part, (unsigned)nb, bnorm, sm);
    if (threadIdx.x == 0) {
        if (out) *out = rel;
        if (ctl) hr_sp_ctl_record(ctl, m, rel);
    }
}

/* The device loop's body (hr_sp_body_fn): U sweeps, each checked (its input) on cs
 * while the next one runs; sweep j + 2 overwrites the parts check j reads and the vector
 * it may return, so it waits for it. */
static hr_status loop_body(hr_sparse_run *r, void *ctx, int U, cudaStream_t st)
{
    jac_state *s = (jac_state *)ctx;
    const unsigned char *fz = s->body_fault ? s->d_frozen : NULL;
    const int nb = s->L.nblocks;
    const long long n = r->A->n_rows;
    if (s->batch) { /* U sweeps, then one kernel combines their U residuals (one stream) */
        for (int j = 0; j < U && nb > 0; j++)
            hri_sp_jacobi_loop_kernel<<<nb, HR_SP_JACOBI_ROWS, 0, st>>>(
                s->L, s->d_diag, s->d_b, s->d_xs, n, s->V, r->tau, fz, s->R.d_ctl, j, s->R.d_bpart, 1);
        HR_SPCU(r, cudaGetLastError());
        hri_sp_jacobi_combine<<<U, HR_SP_JACOBI_ROWS, 0, st>>>(s->R.d_bpart, nb, 0.0, s->R.d_ctl, 0,
                                                              s->R.d_brel, 1);
        HR_SPCU(r, cudaGetLastError());
        return HR_OK;
    }
    for (int j = 0; j < U; j++) {
        if (j >= 2) HR_SPCU(r, cudaStreamWaitEvent(st, s->ev_check[j & 1], 0));
        if (nb > 0)
            hri_sp_jacobi_loop_kernel<<<nb, HR_SP_JACOBI_ROWS, 0, st>>>(
                s->L, s->d_diag, s->d_b, s->d_xs, n, 3, r->tau, fz, s->R.d_ctl, j, s->d_part, 0);
        HR_SPCU(r, cudaGetLastError());
        HR_SPCU(r, cudaEventRecord(s->ev_sweep, st));
        HR_SPCU(r, cudaStreamWaitEvent(s->cs, s->ev_sweep, 0));
        hri_sp_jacobi_combine<<<1, HR_SP_JACOBI_ROWS, 0, s->cs>>>(s->d_part, nb, 0.0, s->R.d_ctl, j, NULL, 0);
        HR_SPCU(r, cudaGetLastError());
        HR_SPCU(r, cudaEventRecord(s->ev_check[j & 1], s->cs));
    }
    HR_SPCU(r, cudaStreamWaitEvent(st, s->ev_check[(U - 1) & 1], 0));
    return HR_OK;
}

/* The lean body (hr_sp_lean; U >= 2): sweep j from ring slot j into slot (j + 1) % U
 * with the plain kernel, so that a body starts and (whole) ends in slot 0; then one
 * kernel checks the U iterates. */
static hr_status lean_body(hr_sparse_run *r, void *ctx, int U, cudaStream_t st)
{
    jac_state *s = (jac_state *)ctx;
    const unsigned char *fz = s->body_fault ? s->d_frozen : NULL;
    const int nb = s->L.nblocks;
    const long long n = r->A->n_rows;
    if (nb == 0) return HR_OK; /* (no rows: nothing to sweep; rel stays 0) */
    for (int j = 0; j < U; j++)
        HR_SPCU(r, hri_sp_jacobi_launch(&s->L, s->d_diag, s->d_b, s->d_xs + j * n, s->d_xs + (j + 1) % U * n,
                                       r->tau, fz, st));
    hri_sp_jacobi_check_lean<<<dim3((unsigned)nb, (unsigned)U), HR_SP_JACOBI_ROWS, 0, st>>>(
        s->L, s->d_diag, s->d_b, s->d_xs, n, U, s->R.d_bpart, s->R.d_bticket, s->R.d_brel, s->R.d_ctl);
    HR_SPCU(r, cudaGetLastError());
    return HR_OK;
}

/* Moves x_done to where the next call's body reads it: slot 0 (lean WHILE graph) or
 * vector done % V (the other bodies). Live, on st. */
static hr_status place_iterate(hr_sparse_run *r, jac_state *s, int lean, cudaStream_t st)
{
    const int want = lean ? 0 : (int)(r->done % s->V);
    if (s->cur == want) return HR_OK;
    const size_t n = (size_t)r->A->n_rows;
    HR_SPCU(r, cudaMemcpyAsync(s->d_xs + (size_t)want * n, s->d_xs + (size_t)s->cur * n, n * sizeof(double),
                               cudaMemcpyDeviceToDevice, st));
    s->cur = want;
    return HR_OK;
}

/* hr_sp_lean.to_replay */
static hr_status to_replay(hr_sparse_run *r, void *ctx, int U, cudaStream_t st)
{
    (void)U;
    return place_iterate(r, (jac_state *)ctx, 0, st);
}

static hr_status build_graph(hr_sparse_run *r, jac_state *s, int fault, int from, int len,
                             cudaGraphExec_t *out)
{
    cudaGraph_t g = NULL;
    HR_SPCU(r, cudaStreamBeginCapture(s->st, cudaStreamCaptureModeThreadLocal));
    hr_status st = HR_OK;
    for (int k = 0; k < len && st == HR_OK; k++)
        st = launch(r, s, (from + k) & 1, fault);
    cudaError_t ce = cudaStreamEndCapture(s->st, &g);
    if (st != HR_OK) {
        if (g) cudaGraphDestroy(g);
        return st;
    }
    HR_SPCU(r, ce);
    cudaError_t ie = cudaGraphInstantiate(out, g, 0);
    cudaGraphDestroy(g);
    HR_SPCU(r, ie);
    HR_SPCU(r, cudaGraphUpload(*out, s->st));
    return HR_OK;
}

static hr_status jac_setup(hr_sparse_run *r)
{
    jac_state *s = (jac_state *)calloc(1, sizeof *s);
    if (!s) return HR_ERR_NO_MEMORY;
    r->impl = s;
    const hr_csr *A = r->A;
    const int n = A->n_rows;
    if (r->o.gpus > 1) {
        snprintf(r->err, sizeof r->err, "gpus: several GPUs are only for --method async");
        return HR_ERR_INVALID_ARG;
    }
    HR_TRY(hri_sp_check_devices(r, r->o.device, 1));
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPCU(r, cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking));
    HR_SPCU(r, cudaStreamCreateWithFlags(&s->cs, cudaStreamNonBlocking));
    HR_SPCU(r, cudaEventCreateWithFlags(&s->ev_sweep, cudaEventDisableTiming));
    for (int e = 0; e < 2; e++)
        HR_SPCU(r, cudaEventCreateWithFlags(&s->ev_check[e], cudaEventDisableTiming));
    HR_TRY(hri_sp_blocks_build(r, A, 0, n, HR_SP_JACOBI_ROWS, 0, &s->L));
    double *diag = (double *)malloc((size_t)n * sizeof *diag);
    if (!diag) return HR_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++)
        diag[i] = A->val[A->diag[i]];
    const size_t bytes = (size_t)n * sizeof(double);
    cudaError_t e = cudaMalloc((void **)&s->d_diag, bytes);
    if (e == cudaSuccess) e = cudaMemcpy(s->d_diag, diag, bytes, cudaMemcpyHostToDevice);
    free(diag);
    HR_SPCU(r, e);
    HR_SPCU(r, cudaStreamSynchronize(
                   cudaStreamLegacy)); /* legacy-stream copy done before the non-blocking streams read it */
    HR_SPCU(r, cudaMalloc((void **)&s->d_b, bytes)); /* b and x0: jac_load, per solve */
    /* checked every sweep: the device loop (tuning.sparse_device_checks off: host checks),
     * of bodies of U sweeps: one sweep more than the calls' usual length, which checks the
     * call's last iteration; batched checks keep x_{k-1} of every sweep k of a body, in a
     * ring of U + 1 vectors */
    s->dc = hri_sp_loop_wanted(r);
    const int U = hri_sp_loop_body_len(r) + 1;
    s->batch = s->dc && hri_sp_batch_wanted(r, (double)(U + 1) * (double)bytes);
    /* body-length policy: the long lean body's ring of UL vectors (the same ring: a lean
     * body starts and ends in slot 0), where it fits the budget */
    long sw = 0;
    int UL = s->batch && U - 1 >= 2 && hri_sp_lean_wanted(r) ? hri_sp_loop_body_long(r, &sw) : 0;
    if (UL > 0 && (double)UL * (double)bytes > (double)HR_SP_BATCH_BYTES) UL = 0;
    s->V = s->batch ? (UL > U + 1 ? UL : U + 1) : 3;
    HR_SPCU(r, cudaMalloc((void **)&s->d_xs, (size_t)s->V * (bytes > 0 ? bytes : 1)));
    for (int v = 0; v < 2; v++)
        s->d_x[v] = s->d_xs + (size_t)v * n;
    const int nb = s->L.nblocks > 0 ? s->L.nblocks : 1;
    HR_SPCU(r, cudaMalloc((void **)&s->d_part, 4 * (size_t)nb * sizeof(double)));
    HR_SPCU(r, cudaMalloc((void **)&s->d_rout, sizeof(double)));
    HR_SPCU(r, cudaHostAlloc((void **)&s->h_rout, sizeof(double), cudaHostAllocPortable));
    cudaFuncAttributes fa; /* load the kernels now, outside any capture or timed region */
    HR_SPCU(r, cudaFuncGetAttributes(&fa, hri_sp_jacobi_loop_kernel));
    HR_SPCU(r, cudaFuncGetAttributes(&fa, hri_sp_jacobi_resid_kernel));
    HR_SPCU(r, cudaFuncGetAttributes(&fa, hri_sp_jacobi_combine));
    HR_SPCU(r, cudaFuncGetAttributes(&fa, hri_sp_jacobi_check_lean));
    HR_TRY(hri_sp_resid_setup(r, &s->R, 0, 0)); /* the control block (residuals: the kernels here) */
    if (s->batch) HR_TRY(hri_sp_resid_batch_setup(r, &s->R, U, s->L.nblocks, UL));
    if (r->frozen) {
        HR_SPCU(r, cudaMalloc((void **)&s->d_frozen, (size_t)n));
        HR_SPCU(r, cudaMemcpy(s->d_frozen, r->frozen, (size_t)n, cudaMemcpyHostToDevice));
        HR_SPCU(r,
                cudaStreamSynchronize(
                    cudaStreamLegacy)); /* legacy-stream work done before the non-blocking streams read it */
    }
    HR_SPCU(r, hri_sp_jacobi_prepare());
    for (int f = 0; f < (r->frozen ? 2 : 1); f++)
        for (int from = 0; from < 2; from++)
            HR_TRY(build_graph(r, s, f, from, HR_SP_JACOBI_GRAPH, &s->graph[f][from]));
    /* batched, the WHILE graph runs the lean body: U - 1 sweeps (no checking sweep), in
     * ring slots 0..U - 2; after it, slot p % (U - 1) is copied into slot 0 unless p is
     * U - 1 (a whole body ends there) */
    const int Ul = U - 1;
    /* variable bodies (from 2: a sweep is not in place): a body of u runs the ring of u,
     * so the copy's ring and skip are the last body's length (0) */
    const int var = hri_sp_predict_wanted(r) ? 2 : 0;
    hr_sp_lean lean = {lean_body,    Ul,      s->d_xs,      0,         var ? 0 : Ul,
                       var ? 0 : Ul, s->d_xs, (long long)n, to_replay, var};
    hr_sp_lean lean_long = {lean_body,    UL,      s->d_xs,      0,         var ? 0 : UL,
                            var ? 0 : UL, s->d_xs, (long long)n, to_replay, var};
    int whiles = 0;
    for (int f = 0; f < (r->frozen ? 2 : 1) && s->dc; f++) {
        s->body_fault = f;
        HR_TRY(hri_sp_loop_build(r, &s->R, &s->loop[f], U, 1, hri_sp_while_wanted(r), loop_body, s,
                                s->batch && Ul >= 2 && hri_sp_lean_wanted(r) ? &lean : NULL, s->st));
        if (!s->loop[f].body) s->dc = 0; /* capture refused: host checks */
        whiles += s->loop[f].loop != NULL;
        if (UL > 0 && s->loop[f].lean)
            HR_TRY(hri_sp_loop_add_long(r, &s->R, &s->loop[f], &lean_long, sw, s->st));
    }
    r->device_checks = !s->dc ? 0 : whiles == (r->frozen ? 2 : 1) ? 2 : 1;
    r->prof.mode = hri_sp_mode_name(r, &s->loop[0], s->batch);
    r->prof.body = !s->dc ? HR_SP_JACOBI_GRAPH : s->loop[0].lean ? s->loop[0].lean_def.U : s->loop[0].U;
    HR_SPCU(r, cudaStreamSynchronize(s->st));
    return HR_OK;
}

/* A new right-hand side and initial guess: the graphs read the vectors in place. */
static hr_status jac_load(hr_sparse_run *r)
{
    jac_state *s = (jac_state *)r->impl;
    const size_t bytes = (size_t)r->A->n_rows * sizeof(double);
    HR_SPCU(r, cudaSetDevice(r->o.device));
    /* on the stream: a pageable cudaMemcpy may return before its DMA lands (Default: b and x
     * may be the caller's device vectors) */
    HR_SPCU(r, cudaMemcpyAsync(s->d_b, r->b, bytes, cudaMemcpyDefault, s->st));
    HR_SPCU(r, cudaMemcpyAsync(s->d_x[0], r->x, bytes, cudaMemcpyDefault, s->st));
    HR_SPCU(r, cudaStreamSynchronize(s->st)); /* r->b and r->x may change after the solve */
    s->cur = 0;
    double bmax;
    if (r->on_device)
        HR_TRY(hri_sp_device_norm(r, s->d_b, r->A->n_rows, s->st, &bmax, &s->R.bnorm));
    else
        s->R.bnorm = hri_sparse_norm2(r->b, r->A->n_rows);
    if (s->dc) HR_TRY(hri_sp_ctl_reset(r, &s->R, s->st));
    return HR_OK;
}

/* The residual where the iterate lives, with the device loop's kernels (same bits). */
static hr_status jac_residual(hr_sparse_run *r, double *rel)
{
    jac_state *s = (jac_state *)r->impl;
    const int nb = s->L.nblocks;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    if (nb == 0) {
        *rel = 0.0;
        return HR_OK;
    }
    const double *x = s->d_xs + (size_t)s->cur * (size_t)r->A->n_rows;
    hri_sp_jacobi_resid_kernel<<<nb, HR_SP_JACOBI_ROWS, 0, s->st>>>(s->L, s->d_diag, s->d_b, x, s->d_part);
    HR_SPCU(r, cudaGetLastError());
    hri_sp_jacobi_combine<<<1, HR_SP_JACOBI_ROWS, 0, s->st>>>(s->d_part, nb, s->R.bnorm, NULL, 0, s->d_rout,
                                                             0);
    HR_SPCU(r, cudaGetLastError());
    HR_SPCU(r, cudaMemcpyAsync(s->h_rout, s->d_rout, sizeof(double), cudaMemcpyDeviceToHost, s->st));
    HR_TRY(hri_sp_sync(r, s->st));
    *rel = *s->h_rout;
    return HR_OK;
}

static hr_status jac_iterate(hr_sparse_run *r, long count)
{
    jac_state *s = (jac_state *)r->impl;
    const int f = r->fault_active && s->d_frozen ? 1 : 0;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    if (s->dc) { /* x_done ends in slot 0 (lean), or in vector done % V (later sweeps wrote the others) */
        hr_sp_loop *L = &s->loop[f];
        HR_TRY(place_iterate(r, s, L->loop && L->lean, s->st)); /* the fault states' loops may differ */
        HR_TRY(hri_sp_loop_run(r, &s->R, L, count, s->st));
        s->cur = L->loop && L->lean ? 0 : (int)(r->checked_done % s->V);
        return HR_OK;
    }
    const double t0 = r->prof.on ? hri_sp_now() : 0.0;
    for (; count >= HR_SP_JACOBI_GRAPH; count -= HR_SP_JACOBI_GRAPH, r->prof.launches++)
        HR_SPCU(r, cudaGraphLaunch(s->graph[f][s->cur], s->st));
    for (; count > 0; count--, r->prof.live++) {
        HR_TRY(launch(r, s, s->cur, f));
        s->cur ^= 1;
    }
    if (r->prof.on) r->prof.t_enqueue += hri_sp_now() - t0;
    return hri_sp_sync(r, s->st);
}

static hr_status jac_sync_host(hr_sparse_run *r)
{
    jac_state *s = (jac_state *)r->impl;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPCU(r, cudaMemcpy(r->x, s->d_xs + (size_t)s->cur * (size_t)r->A->n_rows,
                          (size_t)r->A->n_rows * sizeof(double), cudaMemcpyDefault));
    return HR_OK;
}

static void jac_teardown(hr_sparse_run *r)
{
    jac_state *s = (jac_state *)r->impl;
    if (!s) return;
    cudaSetDevice(r->o.device);
    for (int f = 0; f < 2; f++)
        for (int v = 0; v < 2; v++)
            if (s->graph[f][v]) cudaGraphExecDestroy(s->graph[f][v]);
    if (s->st) cudaStreamSynchronize(s->st);
    for (int f = 0; f < 2; f++)
        hri_sp_loop_free(&s->loop[f]);
    if (s->st) cudaStreamDestroy(s->st);
    if (s->cs) cudaStreamSynchronize(s->cs), cudaStreamDestroy(s->cs);
    if (s->ev_sweep) cudaEventDestroy(s->ev_sweep);
    for (int e = 0; e < 2; e++)
        if (s->ev_check[e]) cudaEventDestroy(s->ev_check[e]);
    hri_sp_blocks_free(&s->L);
    hri_sp_resid_free(&s->R);
    cudaSetDevice(r->o.device);
    cudaFree(s->d_diag), cudaFree(s->d_b), cudaFree(s->d_xs), cudaFree(s->d_frozen);
    cudaFree(s->d_part), cudaFree(s->d_rout);
    if (s->h_rout) cudaFreeHost(s->h_rout);
    (void)cudaGetLastError(); /* teardown after a failure must not leave an error behind */
    free(s);
    r->impl = NULL;
}

extern "C" const hr_sparse_ops hri_sparse_gpu_jacobi = {
    .setup = jac_setup,
    .iterate = jac_iterate,
    .sync_host = jac_sync_host,
    .teardown = jac_teardown,
    .load = jac_load,
    .residual = jac_residual,
    .host_row_bytes = 16.0, /* staging of the diagonal and the row offsets */
    .host_entry_bytes = 0.0,
    .device_vectors = 5,
};
