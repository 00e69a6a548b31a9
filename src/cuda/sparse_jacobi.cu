/*
 * GPU synchronous Jacobi for sparse systems (seed 002, the GPU Jacobi of sections 4.2-4.4):
 * one kernel launch per sweep between two device vectors. Launches are replayed from
 * CUDA graphs of HR_SP_JACOBI_GRAPH sweeps (one per starting vector and fault state),
 * which removes most of the launch overhead that dominates these small systems. With
 * device-side checks (sparse_residual.cu) the sweeps run in a device loop, fused with
 * the residual: sweep k forms b - A x_{k-1} row by row anyway (r_i = acc_i - a_ii x_i),
 * so each block also forms its pair of ||r_{k-1}||, and one extra block of the same
 * launch combines the pairs of the launch before (the verdict on k - 2) and applies the
 * tests: one kernel a sweep. Iterate k lives in vector k % 3, so x_{k-2} survives the
 * two sweeps that run before its verdict. The check of a call's last iteration T ends
 * in launch T + 2 (the loop's lag): the next call computes sweep T + 1 again. The
 * host-checked path computes its residuals with the same arithmetic and grouping, so
 * both see the same bits.
 * Deterministic: bitwise equal to the CPU Jacobi (same formula, order, no FMA).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/sparse_gpu.cuh"

#define HR_SP_JACOBI_GRAPH 32  /* even: a replay ends on the vector it began on */
#define HR_SP_JACOBI_ROWS  128 /* rows per thread block (one thread per row) */

typedef struct jac_state {
    hr_sp_blocks L;
    double *d_diag, *d_b, *d_x[3]; /* [2]: the device loop's third vector */
    double *d_part, *d_rout;       /* blocks' norm pairs; a residual */
    double *h_rout;                /* pinned */
    unsigned char *d_frozen;
    int cur; /* vector holding the iterate (device loop: done % 3) */
    cudaStream_t st;
    cudaGraphExec_t graph[2][2]; /* [fault active][starting vector] */
    hr_sp_loop loop[2];          /* device-side checks: [fault active] */
    hr_sp_resid R;               /* residual checks on the device */
    int dc;                      /* device-side checks after every sweep (r->device_checks) */
    int body_fault;              /* the fault state of the body being captured */
} jac_state;

/* One sweep from d_x[from] (host checks). */
static hr_status launch(hr_sparse_run *r, jac_state *s, int from, int fault)
{
    HR_SPCU(r, hr_sp_jacobi_launch(&s->L, s->d_diag, s->d_b, s->d_x[from], s->d_x[1 - from], r->tau,
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

/* One block's pair (m, s) of ||b - A x|| (every thread gets it), and with xn the sweep
 * x -> xn (the same bits as hr_sp_jacobi_kernel). Every thread of the block must call it. */
__device__ __forceinline__ void jac_fused(const hr_sp_blocks &L, const double *__restrict__ diag,
                                          const double *__restrict__ b, const double *x, double *xn,
                                          double tau, const unsigned char *__restrict__ frozen, double *sm,
                                          double *m_out, double *s_out)
{
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
    hr_sp_block_norm(ri, sm, m_out, s_out);
}

/* Sweep k of the device loop (body position j): x_k = sweep(x_{k-1}) into vector k % 3
 * and the pairs of ||r_{k-1}|| into set (k - 1) & 1; the extra block (the combiner)
 * gives the verdict on iterate k - 2 from the pairs launch k - 1 wrote, beside the
 * sweep (hr_sp_combine_record: one kernel a sweep, no block waits for another). At
 * k = target + 2 only the combiner works (target + 1 sweeps: its pairs check target). */
__global__ void __launch_bounds__(HR_SP_JACOBI_ROWS)
    hr_sp_jacobi_loop_kernel(hr_sp_blocks L, const double *__restrict__ diag, const double *__restrict__ b,
                             double *x0, double *x1, double *x2, double tau,
                             const unsigned char *__restrict__ frozen, hr_sp_ctl *ctl, int j, double *part)
{
    __shared__ double sm[64];
    const long long k = hr_sp_gate_block(ctl, j, 2);
    if (k == 0) return; /* stopped, or past the launch that checks the call's last iteration */
    if (blockIdx.x == L.nblocks) {
        hr_sp_combine_record(ctl, k - 2, part, (unsigned)L.nblocks, sm);
        return;
    }
    if (k > ctl->target + 1) return;
    const int in = (int)((k - 1) % 3), out = (int)(k % 3);
    const double *x = in == 0 ? x0 : in == 1 ? x1 : x2;
    double *xn = out == 0 ? x0 : out == 1 ? x1 : x2;
    double m, sq;
    jac_fused(L, diag, b, x, xn, tau, frozen, sm, &m, &sq);
    if (threadIdx.x == 0) {
        double *pp = part + ((k - 1) & 1) * 2 * (long long)L.nblocks;
        pp[2 * blockIdx.x] = m, pp[2 * blockIdx.x + 1] = sq;
    }
}

/* The host-checked path's residual: the same pairs, no sweep. */
__global__ void __launch_bounds__(HR_SP_JACOBI_ROWS)
    hr_sp_jacobi_resid_kernel(hr_sp_blocks L, const double *__restrict__ diag, const double *__restrict__ b,
                              const double *x, double *part)
{
    __shared__ double sm[64];
    double m, sq;
    jac_fused(L, diag, b, x, NULL, 1.0, NULL, sm, &m, &sq);
    if (threadIdx.x == 0) part[2 * blockIdx.x] = m, part[2 * blockIdx.x + 1] = sq;
}

/* One block: ||r|| / ||b|| from nb pairs into *out (the bits of the fused check's
 * combine: same function, same block size). */
__global__ void __launch_bounds__(HR_SP_JACOBI_ROWS)
    hr_sp_jacobi_combine(const double *part, int nb, double bnorm, double *out)
{
    __shared__ double sm[64];
    const double rel = hr_sp_combine_norm(part, (unsigned)nb, bnorm, sm);
    if (threadIdx.x == 0) *out = rel;
}

/* The device loop's body (hr_sp_body_fn): U sweeps, one kernel each (one block more:
 * the combiner). Before, a one-block combine kernel on a second stream checked each sweep,
 * which about doubled a short sweep (laplace2d:100: 5.4 us against 2.75 unchecked). */
static hr_status loop_body(hr_sparse_run *r, void *ctx, int U, cudaStream_t st)
{
    jac_state *s = (jac_state *)ctx;
    const unsigned char *fz = s->body_fault ? s->d_frozen : NULL;
    const int nb = s->L.nblocks;
    for (int j = 0; j < U && nb > 0; j++) {
        hr_sp_jacobi_loop_kernel<<<nb + 1, HR_SP_JACOBI_ROWS, 0, st>>>(
            s->L, s->d_diag, s->d_b, s->d_x[0], s->d_x[1], s->d_x[2], r->tau, fz, s->R.d_ctl, j, s->d_part);
        HR_SPCU(r, cudaGetLastError());
    }
    return HR_OK;
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
    HR_TRY(hr_sp_check_devices(r, r->o.device, 1));
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPCU(r, cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking));
    HR_TRY(hr_sp_blocks_build(r, A, 0, n, HR_SP_JACOBI_ROWS, 0, &s->L));
    double *diag = (double *)malloc((size_t)n * sizeof *diag);
    if (!diag) return HR_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++)
        diag[i] = A->val[A->diag[i]];
    const size_t bytes = (size_t)n * sizeof(double);
    cudaError_t e = cudaMalloc((void **)&s->d_diag, bytes);
    if (e == cudaSuccess) e = cudaMemcpy(s->d_diag, diag, bytes, cudaMemcpyHostToDevice);
    free(diag);
    HR_SPCU(r, e);
    HR_SPCU(r, cudaMalloc((void **)&s->d_b, bytes)); /* b and x0: jac_load, per solve */
    for (int v = 0; v < 3; v++)
        HR_SPCU(r, cudaMalloc((void **)&s->d_x[v], bytes));
    const int nb = s->L.nblocks > 0 ? s->L.nblocks : 1;
    HR_SPCU(r, cudaMalloc((void **)&s->d_part, 4 * (size_t)nb * sizeof(double)));
    HR_SPCU(r, cudaMalloc((void **)&s->d_rout, sizeof(double)));
    HR_SPCU(r, cudaHostAlloc((void **)&s->h_rout, sizeof(double), cudaHostAllocPortable));
    cudaFuncAttributes fa; /* load the kernels now, outside any capture or timed region */
    HR_SPCU(r, cudaFuncGetAttributes(&fa, hr_sp_jacobi_loop_kernel));
    HR_SPCU(r, cudaFuncGetAttributes(&fa, hr_sp_jacobi_resid_kernel));
    HR_SPCU(r, cudaFuncGetAttributes(&fa, hr_sp_jacobi_combine));
    HR_TRY(hr_sp_resid_setup(r, &s->R, 0, 0)); /* the control block (residuals: the kernels here) */
    if (r->frozen) {
        HR_SPCU(r, cudaMalloc((void **)&s->d_frozen, (size_t)n));
        HR_SPCU(r, cudaMemcpy(s->d_frozen, r->frozen, (size_t)n, cudaMemcpyHostToDevice));
    }
    HR_SPCU(r, hr_sp_jacobi_prepare());
    for (int f = 0; f < (r->frozen ? 2 : 1); f++)
        for (int from = 0; from < 2; from++)
            HR_TRY(build_graph(r, s, f, from, HR_SP_JACOBI_GRAPH, &s->graph[f][from]));
    /* checked every sweep: the device loop (HETRELAX_SPARSE_DEVICE_CHECKS=0: host checks) */
    s->dc = hr_sp_loop_wanted(r);
    int whiles = 0;
    for (int f = 0; f < (r->frozen ? 2 : 1) && s->dc; f++) {
        s->body_fault = f;
        /* two launches more than the calls' usual length: they check the call's last iteration */
        HR_TRY(hr_sp_loop_build(r, &s->R, &s->loop[f], hr_sp_loop_body_len(r) + 2, 2,
                                hr_sp_env_int("HETRELAX_SPARSE_WHILE", 1, 0, 1), loop_body, s, s->st));
        if (!s->loop[f].body) s->dc = 0; /* capture refused: host checks */
        whiles += s->loop[f].loop != NULL;
    }
    r->device_checks = !s->dc ? 0 : whiles == (r->frozen ? 2 : 1) ? 2 : 1;
    r->prof.mode = r->device_checks == 2 ? "while-graph"
                   : r->device_checks    ? "body-replay"
                   : r->o.tol > 0.0      ? "host-checks"
                                         : "unchecked";
    r->prof.body = s->dc ? s->loop[0].U - s->loop[0].lag : HR_SP_JACOBI_GRAPH; /* iterations a body */
    HR_SPCU(r, cudaStreamSynchronize(s->st));
    return HR_OK;
}

/* A new right-hand side and initial guess: the graphs read the vectors in place. */
static hr_status jac_load(hr_sparse_run *r)
{
    jac_state *s = (jac_state *)r->impl;
    const size_t bytes = (size_t)r->A->n_rows * sizeof(double);
    HR_SPCU(r, cudaSetDevice(r->o.device));
    /* on the stream: a pageable cudaMemcpy may return before its DMA lands */
    HR_SPCU(r, cudaMemcpyAsync(s->d_b, r->b, bytes, cudaMemcpyHostToDevice, s->st));
    HR_SPCU(r, cudaMemcpyAsync(s->d_x[0], r->x, bytes, cudaMemcpyHostToDevice, s->st));
    HR_SPCU(r, cudaStreamSynchronize(s->st)); /* r->b and r->x may change after the solve */
    s->cur = 0;
    s->R.bnorm = hr_sparse_norm2(r->b, r->A->n_rows);
    if (s->dc) HR_TRY(hr_sp_ctl_reset(r, &s->R, s->st));
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
    hr_sp_jacobi_resid_kernel<<<nb, HR_SP_JACOBI_ROWS, 0, s->st>>>(s->L, s->d_diag, s->d_b, s->d_x[s->cur],
                                                                   s->d_part);
    HR_SPCU(r, cudaGetLastError());
    hr_sp_jacobi_combine<<<1, HR_SP_JACOBI_ROWS, 0, s->st>>>(s->d_part, nb, s->R.bnorm, s->d_rout);
    HR_SPCU(r, cudaGetLastError());
    HR_SPCU(r, cudaMemcpyAsync(s->h_rout, s->d_rout, sizeof(double), cudaMemcpyDeviceToHost, s->st));
    HR_TRY(hr_sp_sync(r, s->st));
    *rel = *s->h_rout;
    return HR_OK;
}

static hr_status jac_iterate(hr_sparse_run *r, long count)
{
    jac_state *s = (jac_state *)r->impl;
    const int f = r->fault_active && s->d_frozen ? 1 : 0;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    if (s->dc) { /* x_done is in vector done % 3 (later sweeps wrote the others) */
        HR_TRY(hr_sp_loop_run(r, &s->R, &s->loop[f], count, s->st));
        s->cur = (int)(r->checked_done % 3);
        return HR_OK;
    }
    const double t0 = r->prof.on ? hr_sp_now() : 0.0;
    for (; count >= HR_SP_JACOBI_GRAPH; count -= HR_SP_JACOBI_GRAPH, r->prof.launches++)
        HR_SPCU(r, cudaGraphLaunch(s->graph[f][s->cur], s->st));
    for (; count > 0; count--, r->prof.live++) {
        HR_TRY(launch(r, s, s->cur, f));
        s->cur ^= 1;
    }
    if (r->prof.on) r->prof.t_enqueue += hr_sp_now() - t0;
    return hr_sp_sync(r, s->st);
}

static hr_status jac_sync_host(hr_sparse_run *r)
{
    jac_state *s = (jac_state *)r->impl;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPCU(r,
            cudaMemcpy(r->x, s->d_x[s->cur], (size_t)r->A->n_rows * sizeof(double), cudaMemcpyDeviceToHost));
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
        hr_sp_loop_free(&s->loop[f]);
    if (s->st) cudaStreamDestroy(s->st);
    hr_sp_blocks_free(&s->L);
    hr_sp_resid_free(&s->R);
    cudaSetDevice(r->o.device);
    cudaFree(s->d_diag), cudaFree(s->d_b), cudaFree(s->d_x[0]), cudaFree(s->d_x[1]), cudaFree(s->d_frozen);
    cudaFree(s->d_x[2]), cudaFree(s->d_part), cudaFree(s->d_rout);
    if (s->h_rout) cudaFreeHost(s->h_rout);
    (void)cudaGetLastError(); /* teardown after a failure must not leave an error behind */
    free(s);
    r->impl = NULL;
}

extern "C" const hr_sparse_method hr_sparse_gpu_jacobi = {
    .name = "jacobi",
    .backend = HR_BACKEND_GPU,
    .summary = "Jacobi on the GPU, one kernel per sweep (graph replays), bitwise = CPU",
    .caps = HR_SPARSE_CAP_DETERMINISTIC | HR_SPARSE_CAP_DIAGONAL | HR_SPARSE_CAP_TAU | HR_SPARSE_CAP_FAULTS,
    .setup = jac_setup,
    .iterate = jac_iterate,
    .sync_host = jac_sync_host,
    .teardown = jac_teardown,
    .load = jac_load,
    .residual = jac_residual,
};
