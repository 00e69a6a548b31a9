/*
 * Conjugate gradient on the GPU (Anzt et al. section 4.4, the "highly tuned CG"
 * competitor): cuSPARSE SpMV (CSR), dot products that leave their result in device memory
 * (two kernels: block sums, then their sum in a fixed order), and two fused vector kernels
 * that read alpha and beta from device memory. (The paper's CG took its dots from cuBLAS;
 * linking cuBLAS cost every process that loads the library 0.15 s of start-up, for four
 * calls.) Nothing returns to the host inside iterate(), and runs of HR_SP_CG_GRAPH iterations are
 * replayed from a CUDA graph when the libraries allow capture (else issued live).
 * Unpreconditioned, like the CPU cg: one CG step is one global iteration.
 * r.r lives in two fixed slots (new, old): x's update copies new to old before the dot
 * writes the next new, so a graph does not depend on the parity of its first step.
 * With device-side checks the steps run in a device loop (sparse_residual.cu); the
 * check of step k (w = A x_k on a second stream, then the reduction) overlaps step
 * k + 1's SpMV and p.q, and step k + 1's update of x waits for it.
 */
#include <cusparse.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/krylov/cg_rules.h"
#include "methods/sparse/cuda/sparse_gpu.cuh"

#define HR_SP_CG_GRAPH     16         /* steps a graph replays (host checks) */
#define HR_SP_DOT_BLOCKS   512        /* a dot's block sums, at most */

#define HR_SPSPARSE(r, call)                                                                                 \
    do {                                                                                                     \
        cusparseStatus_t hr_e_ = (call);                                                                     \
        if (hr_e_ != CUSPARSE_STATUS_SUCCESS)                                                                \
            return hri_sp_lib_fail((r), cusparseGetErrorString(hr_e_), #call, __FILE__, __LINE__);            \
    } while (0)

typedef struct cg_state {
    int n;
    cudaStream_t st, cs; /* cs: the checks of the device loop */
    cudaEvent_t ev_x, ev_check;
    cusparseHandle_t sp, sp2; /* sp2: on cs, with its own matrix descriptor and buffer */
    cusparseSpMatDescr_t A, A2;
    cusparseDnVecDescr_t vp, vq, vx, vw, vx2;
    int *d_rowp, *d_col;
    double *d_val, *d_b, *d_x, *d_res, *d_p, *d_q;
    double *d_sc; /* r.r old, new; p.q; scratch; steps that found p.q <= 0 (a breakdown) */
    void *d_buf, *d_buf2;
    double *d_part; /* the dots' block sums */
    cudaGraphExec_t graph;
    hr_sp_loop loop;
    hr_sp_resid R; /* residual checks: q = A x by cuSPARSE, then the reduction */
    int dc;        /* device-side checks after every step (the device loop) */
    double *d_w;
    /* b and x live on the device divided by sc, a power of two (1 unless they are beyond
     * 2^+-500): r.r cannot overflow, the iterates are those of plain CG times 1/sc
     * exactly, and the relative residual does not change. */
    double sc;
} cg_state;

/* v *= f (f a power of two: exact) */
__global__ void hri_sp_cg_scale(int n, double *__restrict__ v, double f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= f;
}

__global__ void hri_sp_cg_init(int n, const double *__restrict__ b, const double *__restrict__ q,
                              double *__restrict__ res, double *__restrict__ p)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = res[i] = b[i] - q[i];
}

/* x += alpha p, r -= alpha q with alpha = r.r / p.q (0 once r.r is 0: converged
 * exactly); r.r moves to the old slot for p's update (the dot then writes the new).
 * p.q <= 0 with r.r > 0 is a breakdown (A not positive definite): x stays, and the step
 * is counted in *broke for the host. */
__global__ void hri_sp_cg_update_xr(int n, double *__restrict__ x, double *__restrict__ res,
                                   const double *__restrict__ p, const double *__restrict__ q,
                                   const double *rr, double *rr_old, const double *__restrict__ pq,
                                   double *broke, const hr_sp_ctl *ctl, int j)
{
    if (ctl && hr_sp_gate(ctl, j) == 0) return; /* a device check ended the solve: x stays */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int bad = *rr > 0.0 && !(*pq > 0.0);
    const double a = hri_cg_alpha(*rr, *pq);
    if (i == 0) {
        *rr_old = *rr; /* every block has read *rr, not *rr_old */
        if (bad) *broke += 1.0;
    }
    if (i < n) {
        x[i] += a * p[i];
        res[i] -= a * q[i];
    }
}

/* p = r + beta p with beta = r.r(new) / r.r(old) */
__global__ void hri_sp_cg_update_p(int n, double *__restrict__ p, const double *__restrict__ res,
                                  const double *__restrict__ rn, const double *__restrict__ rr,
                                  const hr_sp_ctl *ctl, int j)
{
    if (ctl && hr_sp_gate(ctl, j) == 0) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const double beta = hri_cg_beta(*rn, *rr);
    if (i < n) p[i] = res[i] + beta * p[i];
}

static unsigned grid_of(int n)
{
    return (unsigned)((n + 255) / 256 > 0 ? (n + 255) / 256 : 1);
}

/* x.y: each block sums its threads' strided products and then its threads in a fixed order
 * into part[block]; one block then sums the parts. The same bits on every call. */
__global__ void hri_sp_dot_part(int n, const double *__restrict__ x, const double *__restrict__ y,
                                double *__restrict__ part)
{
    __shared__ double sm[32];
    double v = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v += x[i] * y[i];
    v = hr_sp_block_reduce<false>(v, sm);
    if (threadIdx.x == 0) part[blockIdx.x] = v;
}

__global__ void hri_sp_dot_sum(int nb, const double *__restrict__ part, double *__restrict__ out)
{
    __shared__ double sm[32];
    double v = 0.0;
    for (int k = threadIdx.x; k < nb; k += blockDim.x)
        v += part[k];
    v = hr_sp_block_reduce<false>(v, sm);
    if (threadIdx.x == 0) *out = v;
}

/* *out (device memory) = x.y, on s's stream */
static hr_status dot(hr_sparse_run *r, const cg_state *s, const double *x, const double *y, double *out)
{
    const unsigned nb = grid_of(s->n) < HR_SP_DOT_BLOCKS ? grid_of(s->n) : HR_SP_DOT_BLOCKS;
    hri_sp_dot_part<<<nb, 256, 0, s->st>>>(s->n, x, y, s->d_part);
    hri_sp_dot_sum<<<1, 256, 0, s->st>>>((int)nb, s->d_part, out);
    HR_SPCU(r, cudaGetLastError());
    return HR_OK;
}

/* One CG step; with ctl, position j of the device loop's body, checked on cs. */
static hr_status step(hr_sparse_run *r, cg_state *s, const hr_sp_ctl *ctl, int j)
{
    const double one = 1.0, zero = 0.0;
    double *rold = s->d_sc, *rnew = s->d_sc + 1, *pq = s->d_sc + 2;
    HR_SPSPARSE(r, cusparseSpMV(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->vp, &zero, s->vq,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s->d_buf));
    HR_TRY(dot(r, s, s->d_p, s->d_q, pq));
    if (ctl && j > 0) /* the previous check read x and may have stopped the solve */
        HR_SPCU(r, cudaStreamWaitEvent(s->st, s->ev_check, 0));
    hri_sp_cg_update_xr<<<grid_of(s->n), 256, 0, s->st>>>(s->n, s->d_x, s->d_res, s->d_p, s->d_q, rnew, rold,
                                                         pq, s->d_sc + 4, ctl, j);
    HR_SPCU(r, cudaGetLastError());
    if (ctl) { /* the true residual of the new x: w = A x on cs, then the check */
        HR_SPCU(r, cudaEventRecord(s->ev_x, s->st));
        HR_SPCU(r, cudaStreamWaitEvent(s->cs, s->ev_x, 0));
        HR_SPSPARSE(r, cusparseSpMV(s->sp2, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A2, s->vx2, &zero,
                                    s->vw, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s->d_buf2));
        HR_SPCU(r, hri_sp_resid_check(&s->R, s->d_b, NULL, NULL, s->d_w, j, 0, s->cs));
        HR_SPCU(r, cudaEventRecord(s->ev_check, s->cs));
    }
    HR_TRY(dot(r, s, s->d_res, s->d_res, rnew));
    hri_sp_cg_update_p<<<grid_of(s->n), 256, 0, s->st>>>(s->n, s->d_p, s->d_res, rnew, rold, ctl, j);
    HR_SPCU(r, cudaGetLastError());
    return HR_OK;
}

/* The device loop's body (hr_sp_body_fn). */
static hr_status loop_body(hr_sparse_run *r, void *ctx, int U, cudaStream_t st)
{
    cg_state *s = (cg_state *)ctx;
    (void)st; /* s->st, the stream the handles are bound to */
    for (int j = 0; j < U; j++)
        HR_TRY(step(r, s, s->R.d_ctl, j));
    HR_SPCU(r, cudaStreamWaitEvent(s->st, s->ev_check, 0));
    return HR_OK;
}

/* Captures HR_SP_CG_GRAPH steps; a library that refuses capture leaves the graph NULL
 * and the steps are issued live. */
static hr_status build_graph(hr_sparse_run *r, cg_state *s)
{
    cudaGraph_t g = NULL;
    HR_SPCU(r, cudaStreamBeginCapture(s->st, cudaStreamCaptureModeThreadLocal));
    hr_status st = HR_OK;
    for (int k = 0; k < HR_SP_CG_GRAPH && st == HR_OK; k++)
        st = step(r, s, NULL, 0);
    cudaError_t ce = cudaStreamEndCapture(s->st, &g);
    if (st == HR_OK && ce == cudaSuccess && cudaGraphInstantiate(&s->graph, g, 0) == cudaSuccess &&
        cudaGraphUpload(s->graph, s->st) == cudaSuccess) {
        cudaGraphDestroy(g);
        return HR_OK;
    }
    if (g) cudaGraphDestroy(g);
    if (s->graph) cudaGraphExecDestroy(s->graph);
    s->graph = NULL;
    (void)cudaGetLastError();
    r->err[0] = '\0';
    return HR_OK;
}

static hr_status cg_setup(hr_sparse_run *r)
{
    cg_state *s = (cg_state *)calloc(1, sizeof *s);
    if (!s) return HR_ERR_NO_MEMORY;
    r->impl = s;
    const hr_csr *A = r->A;
    const int n = s->n = A->n_rows;
    if (r->o.gpus > 1) {
        snprintf(r->err, sizeof r->err, "gpus: several GPUs are only for --method async");
        return HR_ERR_INVALID_ARG;
    }
    if (A->nnz > 2147483647LL) {
        snprintf(r->err, sizeof r->err,
                 "cg on the GPU takes at most 2^31-1 non-zeros (32-bit cuSPARSE indices)");
        return HR_ERR_UNSUPPORTED;
    }
    HR_TRY(hri_sp_check_devices(r, r->o.device, 1));
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPCU(r, cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking));
    HR_SPCU(r, cudaStreamCreateWithFlags(&s->cs, cudaStreamNonBlocking));
    HR_SPCU(r, cudaEventCreateWithFlags(&s->ev_x, cudaEventDisableTiming));
    HR_SPCU(r, cudaEventCreateWithFlags(&s->ev_check, cudaEventDisableTiming));
    HR_SPSPARSE(r, cusparseCreate(&s->sp));
    HR_SPSPARSE(r, cusparseSetStream(s->sp, s->st));
    HR_SPSPARSE(r, cusparseCreate(&s->sp2));
    HR_SPSPARSE(r, cusparseSetStream(s->sp2, s->cs));
    HR_SPCU(r, cudaMalloc((void **)&s->d_part, HR_SP_DOT_BLOCKS * sizeof(double)));
    int *rowp = (int *)malloc(((size_t)n + 1) * sizeof *rowp);
    if (!rowp) return HR_ERR_NO_MEMORY;
    for (int i = 0; i <= n; i++)
        rowp[i] = (int)A->row_ptr[i];
    const size_t vb = (size_t)(n > 0 ? n : 1) * sizeof(double), nz = (size_t)(A->nnz > 0 ? A->nnz : 1);
    cudaError_t e = cudaMalloc((void **)&s->d_rowp, ((size_t)n + 1) * sizeof(int));
    if (e == cudaSuccess)
        e = cudaMemcpy(s->d_rowp, rowp, ((size_t)n + 1) * sizeof(int), cudaMemcpyHostToDevice);
    free(rowp);
    HR_SPCU(r, e);
    HR_SPCU(r, cudaMalloc((void **)&s->d_col, nz * sizeof(int)));
    HR_SPCU(r, cudaMalloc((void **)&s->d_val, nz * sizeof(double)));
    HR_SPCU(r, cudaMemcpy(s->d_col, A->col, (size_t)A->nnz * sizeof(int), cudaMemcpyHostToDevice));
    HR_SPCU(r, cudaMemcpy(s->d_val, A->val, (size_t)A->nnz * sizeof(double), cudaMemcpyHostToDevice));
    double **vecs[] = {&s->d_b, &s->d_x, &s->d_res, &s->d_p, &s->d_q, &s->d_w};
    for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; v++)
        HR_SPCU(r, cudaMalloc((void **)vecs[v], vb));
    HR_SPCU(r, cudaMalloc((void **)&s->d_sc, 5 * sizeof(double)));
    HR_SPCU(r, cudaMemset(s->d_sc, 0, 5 * sizeof(double)));
    HR_SPCU(r, cudaStreamSynchronize(
                   cudaStreamLegacy)); /* legacy-stream work done before the non-blocking streams read it */
    HR_SPSPARSE(r, cusparseCreateCsr(&s->A, n, n, A->nnz, s->d_rowp, s->d_col, s->d_val, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    HR_SPSPARSE(r, cusparseCreateDnVec(&s->vp, n, s->d_p, CUDA_R_64F));
    HR_SPSPARSE(r, cusparseCreateDnVec(&s->vq, n, s->d_q, CUDA_R_64F));
    HR_SPSPARSE(r, cusparseCreateDnVec(&s->vx, n, s->d_x, CUDA_R_64F));
    HR_SPSPARSE(r, cusparseCreateDnVec(&s->vw, n, s->d_w, CUDA_R_64F));
    HR_SPSPARSE(r, cusparseCreateCsr(&s->A2, n, n, A->nnz, s->d_rowp, s->d_col, s->d_val, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    HR_SPSPARSE(r, cusparseCreateDnVec(&s->vx2, n, s->d_x, CUDA_R_64F));
    const double one = 1.0, zero = 0.0;
    size_t buf = 0;
    HR_SPSPARSE(r, cusparseSpMV_bufferSize(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->vp, &zero,
                                           s->vq, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &buf));
    HR_SPCU(r, cudaMalloc(&s->d_buf, buf > 0 ? buf : 16));
    buf = 0;
    HR_SPSPARSE(r, cusparseSpMV_bufferSize(s->sp2, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A2, s->vx2,
                                           &zero, s->vw, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &buf));
    HR_SPCU(r, cudaMalloc(&s->d_buf2, buf > 0 ? buf : 16));
    HR_TRY(hri_sp_resid_setup(r, &s->R, 0, 0));
    /* one SpMV and one dot before any capture (as when the first residual was formed
     * here): the libraries' first calls may do what a capture refuses */
    HR_SPCU(r, cudaMemsetAsync(s->d_x, 0, vb, s->st));
    HR_SPCU(r, cudaMemsetAsync(s->d_res, 0, vb, s->st));
    HR_SPSPARSE(r, cusparseSpMV(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->vx, &zero, s->vq,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s->d_buf));
    HR_TRY(dot(r, s, s->d_res, s->d_res, s->d_sc + 3));
    HR_SPSPARSE(r, cusparseSpMV(s->sp2, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A2, s->vx2, &zero, s->vw,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s->d_buf2));
    HR_SPCU(r, cudaStreamSynchronize(s->st));
    HR_SPCU(r, cudaStreamSynchronize(s->cs));
    /* checked every step: the device loop (tuning.sparse_device_checks off: host checks) */
    s->dc = hri_sp_loop_wanted(r);
    if (s->dc) {
        HR_TRY(hri_sp_loop_build(r, &s->R, &s->loop, hri_sp_loop_body_len(r), 0, hri_sp_while_wanted(r),
                                loop_body, s, NULL, s->st));
        if (!s->loop.body) s->dc = 0; /* capture refused: host checks */
    }
    r->device_checks = !s->dc ? 0 : s->loop.loop ? 2 : 1;
    r->prof.mode = r->device_checks == 2 ? "while-graph"
                   : r->device_checks    ? "body-replay"
                   : r->o.tol > 0.0      ? "host-checks"
                                         : "unchecked";
    r->prof.body = s->dc ? s->loop.U : HR_SP_CG_GRAPH;
    if (!s->dc) HR_TRY(build_graph(r, s));
    HR_SPCU(r, cudaStreamSynchronize(s->st));
    return HR_OK;
}

/* A new right-hand side and initial guess (scaled by 1/sc): r = b - A x, p = r, r.r
 * into slot 0. */
static hr_status cg_load(hr_sparse_run *r)
{
    cg_state *s = (cg_state *)r->impl;
    const int n = s->n;
    const double one = 1.0, zero = 0.0;
    double m = 0.0, bnorm = 0.0;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    /* on the stream: a pageable cudaMemcpy may return before its DMA lands (Default: b and x
     * may be the caller's device vectors, whose largest values the device finds) */
    HR_SPCU(r, cudaMemcpyAsync(s->d_b, r->b, (size_t)n * sizeof(double), cudaMemcpyDefault, s->st));
    HR_SPCU(r, cudaMemcpyAsync(s->d_x, r->x, (size_t)n * sizeof(double), cudaMemcpyDefault, s->st));
    if (r->on_device) {
        double xmax, xnorm;
        HR_TRY(hri_sp_device_norm(r, s->d_b, n, s->st, &m, &bnorm));
        HR_TRY(hri_sp_device_norm(r, s->d_x, n, s->st, &xmax, &xnorm));
        m = fmax(m, xmax);
    } else {
        for (int i = 0; i < n; i++)
            m = fmax(m, fmax(fabs(r->b[i]), fabs(r->x[i])));
        bnorm = hri_sparse_norm2(r->b, n);
    }
    s->sc = hri_sparse_pow2_scale(m);
    if (s->sc != 1.0) {
        hri_sp_cg_scale<<<grid_of(n), 256, 0, s->st>>>(n, s->d_b, 1.0 / s->sc);
        hri_sp_cg_scale<<<grid_of(n), 256, 0, s->st>>>(n, s->d_x, 1.0 / s->sc);
        HR_SPCU(r, cudaGetLastError());
    }
    HR_SPCU(r, cudaMemsetAsync(s->d_sc, 0, 5 * sizeof(double), s->st));
    HR_SPSPARSE(r, cusparseSpMV(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->vx, &zero, s->vq,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s->d_buf));
    hri_sp_cg_init<<<grid_of(n), 256, 0, s->st>>>(n, s->d_b, s->d_q, s->d_res, s->d_p);
    HR_SPCU(r, cudaGetLastError());
    HR_TRY(dot(r, s, s->d_res, s->d_res, s->d_sc + 1)); /* the new slot */
    HR_SPCU(r, cudaStreamSynchronize(s->st));
    s->R.bnorm = bnorm / s->sc;
    if (s->dc) HR_TRY(hri_sp_ctl_reset(r, &s->R, s->st));
    return HR_OK;
}

/* q = A x (q is scratch between steps: each step forms q = A p first), then the
 * reduction of b - q. */
static hr_status cg_residual(hr_sparse_run *r, double *rel)
{
    cg_state *s = (cg_state *)r->impl;
    const double one = 1.0, zero = 0.0;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPSPARSE(r, cusparseSpMV(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->vx, &zero, s->vq,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s->d_buf));
    return hri_sp_resid_run(r, &s->R, s->d_b, NULL, s->d_q, s->st, rel);
}

/* After a call that ended at global iteration `end`: a breakdown in it (steps counted on the
 * device; the first of them, as a breakdown persists: x has not moved since) ends the solve. */
static hr_status check_breakdown(hr_sparse_run *r, cg_state *s, long end)
{
    double d[5];
    HR_SPCU(r, cudaMemcpy(d, s->d_sc, sizeof d, cudaMemcpyDeviceToHost));
    if (!(d[4] > 0.0)) return HR_OK;
    r->breakdown = end - (long)d[4] + 1;
    r->breakdown_pq = d[2];
    return HR_ERR_DIVERGED;
}

static hr_status cg_iterate(hr_sparse_run *r, long count)
{
    cg_state *s = (cg_state *)r->impl;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    if (s->dc) { /* steps after a stopping check left x alone; one host wait */
        HR_TRY(hri_sp_loop_run(r, &s->R, &s->loop, count, s->st));
        return check_breakdown(r, s, r->checked_done);
    }
    const long end = r->done + count;
    const double t0 = r->prof.on ? hri_sp_now() : 0.0;
    for (; count >= HR_SP_CG_GRAPH && s->graph; count -= HR_SP_CG_GRAPH, r->prof.launches++)
        HR_SPCU(r, cudaGraphLaunch(s->graph, s->st));
    for (; count > 0; count--, r->prof.live++)
        HR_TRY(step(r, s, NULL, 0));
    if (r->prof.on) r->prof.t_enqueue += hri_sp_now() - t0;
    HR_TRY(hri_sp_sync(r, s->st));
    return check_breakdown(r, s, end);
}

static hr_status cg_sync_host(hr_sparse_run *r)
{
    cg_state *s = (cg_state *)r->impl;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPCU(r, cudaMemcpy(r->x, s->d_x, (size_t)s->n * sizeof(double), cudaMemcpyDefault));
    if (s->sc != 1.0 && r->on_device) {
        hri_sp_cg_scale<<<grid_of(s->n), 256, 0, s->st>>>(s->n, r->x, s->sc);
        HR_SPCU(r, cudaGetLastError());
        HR_SPCU(r, cudaStreamSynchronize(s->st));
    } else if (s->sc != 1.0) {
        for (int i = 0; i < s->n; i++)
            r->x[i] *= s->sc;
    }
    return HR_OK;
}

static void cg_teardown(hr_sparse_run *r)
{
    cg_state *s = (cg_state *)r->impl;
    if (!s) return;
    cudaSetDevice(r->o.device);
    if (s->st) cudaStreamSynchronize(s->st);
    if (s->cs) cudaStreamSynchronize(s->cs);
    if (s->graph) cudaGraphExecDestroy(s->graph);
    hri_sp_loop_free(&s->loop);
    if (s->A) cusparseDestroySpMat(s->A);
    if (s->A2) cusparseDestroySpMat(s->A2);
    if (s->vx2) cusparseDestroyDnVec(s->vx2);
    if (s->sp2) cusparseDestroy(s->sp2);
    if (s->vp) cusparseDestroyDnVec(s->vp);
    if (s->vq) cusparseDestroyDnVec(s->vq);
    if (s->vx) cusparseDestroyDnVec(s->vx);
    if (s->vw) cusparseDestroyDnVec(s->vw);
    if (s->sp) cusparseDestroy(s->sp);
    hri_sp_resid_free(&s->R);
    cudaSetDevice(r->o.device);
    cudaFree(s->d_rowp), cudaFree(s->d_col), cudaFree(s->d_val), cudaFree(s->d_b), cudaFree(s->d_x);
    cudaFree(s->d_res), cudaFree(s->d_p), cudaFree(s->d_q), cudaFree(s->d_sc), cudaFree(s->d_buf);
    cudaFree(s->d_w), cudaFree(s->d_buf2), cudaFree(s->d_part);
    if (s->st) cudaStreamDestroy(s->st);
    if (s->cs) cudaStreamDestroy(s->cs);
    if (s->ev_x) cudaEventDestroy(s->ev_x);
    if (s->ev_check) cudaEventDestroy(s->ev_check);
    (void)cudaGetLastError();
    free(s);
    r->impl = NULL;
}

extern "C" const hr_sparse_ops hri_sparse_gpu_cg = {
    .setup = cg_setup,
    .iterate = cg_iterate,
    .sync_host = cg_sync_host,
    .teardown = cg_teardown,
    .load = cg_load,
    .residual = cg_residual,
    .host_row_bytes = 16.0, /* staging of the diagonal and the row offsets */
    .host_entry_bytes = 0.0,
    .device_vectors = 6,
};
