/*
 * Conjugate gradient on the GPU (seed 002 section 4.4, the "highly tuned CG"
 * competitor): cuSPARSE SpMV (CSR), cuBLAS dot products in device pointer mode, and
 * two fused vector kernels that read alpha and beta from device memory. Nothing
 * returns to the host inside iterate(), and runs of HR_SP_CG_GRAPH iterations are
 * replayed from a CUDA graph when the libraries allow capture (else issued live).
 * Unpreconditioned, like the CPU cg: one CG step is one global iteration.
 */
#include <cublas_v2.h>
#include <cusparse.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/sparse_gpu.cuh"

#define HR_SP_CG_GRAPH 16 /* even: r.r slots alternate, a replay ends on its starting slot */
/* With device-side checks the calls are long (the monitors' cuts): graphs of 2 steps,
 * so that any call is graphs plus at most one live step. */
#define HR_SP_CG_GRAPH_DC 2

#define HR_SPSPARSE(r, call)                                                                                 \
    do {                                                                                                     \
        cusparseStatus_t hr_e_ = (call);                                                                     \
        if (hr_e_ != CUSPARSE_STATUS_SUCCESS)                                                                \
            return hr_sp_lib_fail((r), cusparseGetErrorString(hr_e_), #call, __FILE__, __LINE__);            \
    } while (0)
#define HR_SPBLAS(r, call)                                                                                   \
    do {                                                                                                     \
        cublasStatus_t hr_e_ = (call);                                                                       \
        if (hr_e_ != CUBLAS_STATUS_SUCCESS)                                                                  \
            return hr_sp_lib_fail((r), cublasGetStatusString(hr_e_), #call, __FILE__, __LINE__);             \
    } while (0)

typedef struct cg_state {
    int n, cur; /* cur: slot of r.r holding the current value */
    cudaStream_t st;
    cusparseHandle_t sp;
    cublasHandle_t bl;
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t vp, vq, vx, vw;
    int *d_rowp, *d_col;
    double *d_val, *d_b, *d_x, *d_res, *d_p, *d_q, *d_sc; /* d_sc: r.r [2], p.q, scratch */
    void *d_buf;
    cudaGraphExec_t graph[2];
    hr_sp_resid R; /* residual checks: q = A x by cuSPARSE, then the reduction */
    int dc, G;     /* device-side checks after every step (w = A x); steps per graph */
    double *d_w;
    /* b and x live on the device divided by sc, a power of two (1 unless they are beyond
     * 2^+-500): r.r cannot overflow, the iterates are those of plain CG times 1/sc
     * exactly, and the relative residual does not change. */
    double sc;
} cg_state;

/* v *= f (f a power of two: exact) */
__global__ void hr_sp_cg_scale(int n, double *__restrict__ v, double f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= f;
}

__global__ void hr_sp_cg_init(int n, const double *__restrict__ b, const double *__restrict__ q,
                              double *__restrict__ res, double *__restrict__ p)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = res[i] = b[i] - q[i];
}

/* x += alpha p, r -= alpha q with alpha = r.r / p.q (0 once r.r is 0: converged exactly) */
__global__ void hr_sp_cg_update_xr(int n, double *__restrict__ x, double *__restrict__ res,
                                   const double *__restrict__ p, const double *__restrict__ q,
                                   const double *__restrict__ rr, const double *__restrict__ pq,
                                   const int *stop)
{
    if (stop && *(const volatile int *)stop) return; /* a device check ended the solve: x stays */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const double a = *rr > 0.0 && *pq != 0.0 ? *rr / *pq : 0.0;
    if (i < n) {
        x[i] += a * p[i];
        res[i] -= a * q[i];
    }
}

/* p = r + beta p with beta = r.r(new) / r.r(old) */
__global__ void hr_sp_cg_update_p(int n, double *__restrict__ p, const double *__restrict__ res,
                                  const double *__restrict__ rn, const double *__restrict__ rr,
                                  const int *stop)
{
    if (stop && *(const volatile int *)stop) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const double beta = *rr > 0.0 ? *rn / *rr : 0.0;
    if (i < n) p[i] = res[i] + beta * p[i];
}

static unsigned grid_of(int n)
{
    return (unsigned)((n + 255) / 256 > 0 ? (n + 255) / 256 : 1);
}

/* One CG step reading r.r from slot c and writing the new one into slot 1 - c. */
static hr_status step(hr_sparse_run *r, cg_state *s, int c)
{
    const double one = 1.0, zero = 0.0;
    double *rr = s->d_sc + c, *rn = s->d_sc + (1 - c), *pq = s->d_sc + 2;
    HR_SPSPARSE(r, cusparseSpMV(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->vp, &zero, s->vq,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s->d_buf));
    HR_SPBLAS(r, cublasDdot(s->bl, s->n, s->d_p, 1, s->d_q, 1, pq));
    hr_sp_cg_update_xr<<<grid_of(s->n), 256, 0, s->st>>>(s->n, s->d_x, s->d_res, s->d_p, s->d_q, rr, pq,
                                                         s->dc ? &s->R.d_ctl->stop : NULL);
    HR_SPCU(r, cudaGetLastError());
    HR_SPBLAS(r, cublasDdot(s->bl, s->n, s->d_res, 1, s->d_res, 1, rn));
    hr_sp_cg_update_p<<<grid_of(s->n), 256, 0, s->st>>>(s->n, s->d_p, s->d_res, rn, rr,
                                                        s->dc ? &s->R.d_ctl->stop : NULL);
    HR_SPCU(r, cudaGetLastError());
    if (s->dc) { /* the true residual of the new x: w = A x, then the check */
        HR_SPSPARSE(r, cusparseSpMV(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->vx, &zero, s->vw,
                                    CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s->d_buf));
        HR_SPCU(r, hr_sp_resid_check(&s->R, s->d_b, NULL, s->d_w, s->st));
    }
    return HR_OK;
}

/* Captures HR_SP_CG_GRAPH steps from slot c; a library that refuses capture leaves
 * graph[c] NULL and the steps are issued live. */
static hr_status build_graph(hr_sparse_run *r, cg_state *s, int c)
{
    cudaGraph_t g = NULL;
    HR_SPCU(r, cudaStreamBeginCapture(s->st, cudaStreamCaptureModeThreadLocal));
    hr_status st = HR_OK;
    for (int k = 0; k < s->G && st == HR_OK; k++)
        st = step(r, s, (c + k) & 1);
    cudaError_t ce = cudaStreamEndCapture(s->st, &g);
    if (st == HR_OK && ce == cudaSuccess && cudaGraphInstantiate(&s->graph[c], g, 0) == cudaSuccess &&
        cudaGraphUpload(s->graph[c], s->st) == cudaSuccess) {
        cudaGraphDestroy(g);
        return HR_OK;
    }
    if (g) cudaGraphDestroy(g);
    if (s->graph[c]) cudaGraphExecDestroy(s->graph[c]);
    s->graph[c] = NULL;
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
    HR_TRY(hr_sp_check_devices(r, r->o.device, 1));
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPCU(r, cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking));
    HR_SPSPARSE(r, cusparseCreate(&s->sp));
    HR_SPSPARSE(r, cusparseSetStream(s->sp, s->st));
    HR_SPBLAS(r, cublasCreate(&s->bl));
    HR_SPBLAS(r, cublasSetStream(s->bl, s->st));
    HR_SPBLAS(r, cublasSetPointerMode(s->bl, CUBLAS_POINTER_MODE_DEVICE));
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
    HR_SPCU(r, cudaMalloc((void **)&s->d_sc, 4 * sizeof(double)));
    HR_SPCU(r, cudaMemset(s->d_sc, 0, 4 * sizeof(double)));
    HR_SPSPARSE(r, cusparseCreateCsr(&s->A, n, n, A->nnz, s->d_rowp, s->d_col, s->d_val, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    HR_SPSPARSE(r, cusparseCreateDnVec(&s->vp, n, s->d_p, CUDA_R_64F));
    HR_SPSPARSE(r, cusparseCreateDnVec(&s->vq, n, s->d_q, CUDA_R_64F));
    HR_SPSPARSE(r, cusparseCreateDnVec(&s->vx, n, s->d_x, CUDA_R_64F));
    HR_SPSPARSE(r, cusparseCreateDnVec(&s->vw, n, s->d_w, CUDA_R_64F));
    const double one = 1.0, zero = 0.0;
    size_t buf = 0;
    HR_SPSPARSE(r, cusparseSpMV_bufferSize(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->vp, &zero,
                                           s->vq, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &buf));
    HR_SPCU(r, cudaMalloc(&s->d_buf, buf > 0 ? buf : 16));
    HR_TRY(hr_sp_resid_setup(r, &s->R, 0, 0));
    /* one SpMV and one dot before any capture (as when the first residual was formed
     * here): the libraries' first calls may do what a capture refuses */
    HR_SPCU(r, cudaMemsetAsync(s->d_x, 0, vb, s->st));
    HR_SPCU(r, cudaMemsetAsync(s->d_res, 0, vb, s->st));
    HR_SPSPARSE(r, cusparseSpMV(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->vx, &zero, s->vq,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s->d_buf));
    HR_SPBLAS(r, cublasDdot(s->bl, n, s->d_res, 1, s->d_res, 1, s->d_sc + 3));
    HR_SPCU(r, cudaStreamSynchronize(s->st));
    /* checked every step: the checks go into the graphs (HETRELAX_SPARSE_DEVICE_CHECKS=0: host) */
    s->dc = r->device_checks =
        r->o.tol > 0.0 && r->o.check_every == 1 && hr_sp_env_int("HETRELAX_SPARSE_DEVICE_CHECKS", 1, 0, 1);
    s->G = s->dc ? HR_SP_CG_GRAPH_DC : HR_SP_CG_GRAPH;
    /* one graph per starting slot: a live odd remainder flips the slot */
    for (int c = 0; c < 2; c++)
        HR_TRY(build_graph(r, s, c));
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
    double m = 0.0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fmax(fabs(r->b[i]), fabs(r->x[i])));
    s->sc = hr_sparse_pow2_scale(m);
    HR_SPCU(r, cudaSetDevice(r->o.device));
    /* on the stream: a pageable cudaMemcpy may return before its DMA lands */
    HR_SPCU(r, cudaMemcpyAsync(s->d_b, r->b, (size_t)n * sizeof(double), cudaMemcpyHostToDevice, s->st));
    HR_SPCU(r, cudaMemcpyAsync(s->d_x, r->x, (size_t)n * sizeof(double), cudaMemcpyHostToDevice, s->st));
    if (s->sc != 1.0) {
        hr_sp_cg_scale<<<grid_of(n), 256, 0, s->st>>>(n, s->d_b, 1.0 / s->sc);
        hr_sp_cg_scale<<<grid_of(n), 256, 0, s->st>>>(n, s->d_x, 1.0 / s->sc);
        HR_SPCU(r, cudaGetLastError());
    }
    HR_SPCU(r, cudaMemsetAsync(s->d_sc, 0, 4 * sizeof(double), s->st));
    HR_SPSPARSE(r, cusparseSpMV(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->vx, &zero, s->vq,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s->d_buf));
    hr_sp_cg_init<<<grid_of(n), 256, 0, s->st>>>(n, s->d_b, s->d_q, s->d_res, s->d_p);
    HR_SPCU(r, cudaGetLastError());
    HR_SPBLAS(r, cublasDdot(s->bl, n, s->d_res, 1, s->d_res, 1, s->d_sc));
    HR_SPCU(r, cudaStreamSynchronize(s->st));
    s->cur = 0;
    s->R.bnorm = hr_sparse_norm2(r->b, n) / s->sc;
    if (s->dc) HR_TRY(hr_sp_ctl_reset(r, &s->R, s->st));
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
    return hr_sp_resid_run(r, &s->R, s->d_b, NULL, s->d_q, s->st, rel);
}

static hr_status cg_iterate(hr_sparse_run *r, long count)
{
    cg_state *s = (cg_state *)r->impl;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    while (count > 0) {
        if (count >= s->G && s->graph[s->cur]) {
            HR_SPCU(r, cudaGraphLaunch(s->graph[s->cur], s->st));
            count -= s->G;
            continue;
        }
        HR_TRY(step(r, s, s->cur));
        s->cur ^= 1;
        count--;
    }
    if (s->dc) /* steps after a stopping check left x alone; the copy after the work: one sync */
        HR_TRY(hr_sp_ctl_fetch(r, &s->R, s->st));
    else
        HR_SPCU(r, cudaStreamSynchronize(s->st));
    return HR_OK;
}

static hr_status cg_sync_host(hr_sparse_run *r)
{
    cg_state *s = (cg_state *)r->impl;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPCU(r, cudaMemcpy(r->x, s->d_x, (size_t)s->n * sizeof(double), cudaMemcpyDeviceToHost));
    if (s->sc != 1.0)
        for (int i = 0; i < s->n; i++)
            r->x[i] *= s->sc;
    return HR_OK;
}

static void cg_teardown(hr_sparse_run *r)
{
    cg_state *s = (cg_state *)r->impl;
    if (!s) return;
    cudaSetDevice(r->o.device);
    if (s->st) cudaStreamSynchronize(s->st);
    for (int c = 0; c < 2; c++)
        if (s->graph[c]) cudaGraphExecDestroy(s->graph[c]);
    if (s->A) cusparseDestroySpMat(s->A);
    if (s->vp) cusparseDestroyDnVec(s->vp);
    if (s->vq) cusparseDestroyDnVec(s->vq);
    if (s->vx) cusparseDestroyDnVec(s->vx);
    if (s->vw) cusparseDestroyDnVec(s->vw);
    if (s->sp) cusparseDestroy(s->sp);
    if (s->bl) cublasDestroy(s->bl);
    hr_sp_resid_free(&s->R);
    cudaSetDevice(r->o.device);
    cudaFree(s->d_rowp), cudaFree(s->d_col), cudaFree(s->d_val), cudaFree(s->d_b), cudaFree(s->d_x);
    cudaFree(s->d_res), cudaFree(s->d_p), cudaFree(s->d_q), cudaFree(s->d_sc), cudaFree(s->d_buf);
    cudaFree(s->d_w);
    if (s->st) cudaStreamDestroy(s->st);
    (void)cudaGetLastError();
    free(s);
    r->impl = NULL;
}

extern "C" const hr_sparse_method hr_sparse_gpu_cg = {
    .name = "cg",
    .backend = HR_BACKEND_GPU,
    .summary = "conjugate gradient on the GPU: cuSPARSE SpMV, cuBLAS dots, no host sync per step",
    .caps = HR_SPARSE_CAP_SYMMETRIC,
    .setup = cg_setup,
    .iterate = cg_iterate,
    .sync_host = cg_sync_host,
    .teardown = cg_teardown,
    .load = cg_load,
    .residual = cg_residual,
};
