/*
 * The relative residual ||b - A x|| / ||b|| of a GPU method's iterate, computed on the
 * device (issue 15: the driver copied x to the host and ran an SpMV on the CPU at every
 * check, 25x the kernels' time on small systems).
 *
 * One kernel: each thread forms one row of r = b - A x (from the CSR arrays, or
 * r = b - q when the caller already has q = A x, as cg does with cuSPARSE), each thread
 * block reduces its rows to (m, s) = (max |r_i|, sum (r_i / m)^2), and the last block to
 * finish (a ticket counter) combines the blocks' pairs the LAPACK dnrm2 way,
 * ||r|| = M sqrt(sum s_b (m_b / M)^2), so that no square overflows or underflows. The
 * result goes to pinned host memory: one 8-byte copy per check instead of x.
 *
 * Device-side checks (hr_sp_ctl, sparse_gpu.cuh): the same kernel, enqueued after
 * every iteration inside the methods' graphs, also applies the driver's tests and
 * stops the later kernels, so a solve checked every iteration costs one host round
 * trip per call instead of one per iteration.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/sparse_gpu.cuh"

#define HR_SP_RES_THREADS 256

/* max (MAX) or sum over the block; every thread gets the result. sm: 32 doubles. */
template <bool MAX> __device__ double block_reduce(double v, double *sm)
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

__global__ void __launch_bounds__(HR_SP_RES_THREADS)
    hr_sp_resid_kernel(int n, const long long *__restrict__ rowp, const int *__restrict__ col,
                       const double *__restrict__ val, const double *__restrict__ b, const double *x,
                       const double *__restrict__ q, double *part, unsigned int *ticket, double *out,
                       double bnorm, hr_sp_ctl *ctl)
{
    __shared__ double sm[32];
    __shared__ bool last;
    /* a check after the one that stopped the solve: nothing to do (every block alike:
     * stop changes only in the last block of a check, after all blocks passed here) */
    if (ctl && *(const volatile int *)&ctl->stop) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double ri = 0.0;
    if (i < n) {
        if (q) {
            ri = b[i] - q[i];
        } else {
            double s = b[i];
            for (long long p = rowp[i]; p < rowp[i + 1]; p++)
                s -= val[p] * x[col[p]];
            ri = s;
        }
    }
    double a = fabs(ri);
    if (!(a <= INFINITY)) a = INFINITY; /* NaN: reported as Inf, diverged either way */
    const double m = block_reduce<true>(a, sm);
    const double t = m > 0.0 && m < INFINITY ? (ri / m) * (ri / m) : 0.0;
    const double s = block_reduce<false>(t, sm);
    if (threadIdx.x == 0) {
        part[2 * blockIdx.x] = m;
        part[2 * blockIdx.x + 1] = s;
        __threadfence(); /* the pair is visible before the ticket says so */
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    const volatile double *vp = part;
    double M = 0.0;
    for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x)
        M = fmax(M, vp[2 * k]);
    M = block_reduce<true>(M, sm);
    double S = 0.0;
    if (M > 0.0 && M < INFINITY)
        for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x) {
            const double mk = vp[2 * k];
            if (mk > 0.0) S += vp[2 * k + 1] * ((mk / M) * (mk / M));
        }
    S = block_reduce<false>(S, sm);
    if (threadIdx.x == 0) {
        if (ctl) bnorm = ctl->bnorm; /* graphs keep arguments: per-solve values live on the device */
        const double bn = bnorm > 0.0 ? bnorm : 1.0; /* b = 0: ||r||, as on the host */
        const double rel = M < INFINITY ? (M / bn) * sqrt(S) : INFINITY;
        *out = rel;
        if (ctl) { /* the driver's tests: converged, or diverged (NaN, Inf or growth) */
            ctl->done++;
            ctl->rel = rel;
            if (rel < ctl->tol || !(rel <= ctl->divref)) ctl->stop = 1;
        }
        *ticket = 0u; /* ready for the next launch (stream order) */
    }
}

hr_status hr_sp_resid_setup(hr_sparse_run *r, hr_sp_resid *R, int with_matrix, int with_hub)
{
    const hr_csr *A = r->A;
    const int n = R->n = A->n_rows;
    R->nblk = (n + HR_SP_RES_THREADS - 1) / HR_SP_RES_THREADS;
    HR_SPCU(r, cudaGetDevice(&R->dev));
    cudaFuncAttributes fa; /* loads the kernel now, before any capture or timed region */
    HR_SPCU(r, cudaFuncGetAttributes(&fa, hr_sp_resid_kernel));
    if (with_matrix) {
        const size_t nz = (size_t)(A->nnz > 0 ? A->nnz : 1);
        HR_SPCU(r, cudaMalloc((void **)&R->d_rowp, ((size_t)n + 1) * sizeof(long long)));
        HR_SPCU(r, cudaMalloc((void **)&R->d_col, nz * sizeof(int)));
        HR_SPCU(r, cudaMalloc((void **)&R->d_val, nz * sizeof(double)));
        static_assert(sizeof(long long) == sizeof(int64_t), "row pointers are copied as they are");
        HR_SPCU(r, cudaMemcpy(R->d_rowp, A->row_ptr, ((size_t)n + 1) * sizeof(long long),
                              cudaMemcpyHostToDevice));
        HR_SPCU(r, cudaMemcpy(R->d_col, A->col, (size_t)A->nnz * sizeof(int), cudaMemcpyHostToDevice));
        HR_SPCU(r, cudaMemcpy(R->d_val, A->val, (size_t)A->nnz * sizeof(double), cudaMemcpyHostToDevice));
    }
    if (with_hub) HR_SPCU(r, cudaMalloc((void **)&R->d_xh, (size_t)(n > 0 ? n : 1) * sizeof(double)));
    HR_SPCU(r, cudaMalloc((void **)&R->d_part, 2 * (size_t)(R->nblk > 0 ? R->nblk : 1) * sizeof(double)));
    HR_SPCU(r, cudaMalloc((void **)&R->d_out, 2 * sizeof(double) + sizeof(unsigned int)));
    R->d_ticket = (unsigned int *)(R->d_out + 2);
    HR_SPCU(r, cudaMemset(R->d_out, 0, 2 * sizeof(double) + sizeof(unsigned int)));
    HR_SPCU(r, cudaHostAlloc((void **)&R->h_out, sizeof(double), cudaHostAllocPortable));
    HR_SPCU(r, cudaMalloc((void **)&R->d_ctl, sizeof(hr_sp_ctl)));
    HR_SPCU(r, cudaMemset(R->d_ctl, 0, sizeof(hr_sp_ctl)));
    HR_SPCU(r, cudaHostAlloc((void **)&R->h_ctl, sizeof(hr_sp_ctl), cudaHostAllocPortable));
    return HR_OK;
}

cudaError_t hr_sp_resid_check(hr_sp_resid *R, const double *d_b, const double *d_x, const double *d_q,
                              cudaStream_t st)
{
    if (R->n == 0) return cudaSuccess;
    hr_sp_resid_kernel<<<R->nblk, HR_SP_RES_THREADS, 0, st>>>(R->n, R->d_rowp, R->d_col, R->d_val, d_b, d_x,
                                                              d_q, R->d_part, R->d_ticket, R->d_out, R->bnorm,
                                                              R->d_ctl);
    return cudaGetLastError();
}

hr_status hr_sp_ctl_reset(hr_sparse_run *r, hr_sp_resid *R, cudaStream_t st)
{
    hr_sp_ctl c;
    memset(&c, 0, sizeof c);
    c.rel = NAN;
    c.tol = r->o.tol;
    c.divref = r->divref;
    c.bnorm = R->bnorm;
    *R->h_ctl = c;
    HR_SPCU(r, cudaSetDevice(R->dev));
    HR_SPCU(r, cudaMemcpyAsync(R->d_ctl, R->h_ctl, sizeof c, cudaMemcpyHostToDevice, st));
    HR_SPCU(r, cudaStreamSynchronize(st));
    return HR_OK;
}

hr_status hr_sp_ctl_fetch(hr_sparse_run *r, hr_sp_resid *R, cudaStream_t st)
{
    HR_SPCU(r, cudaSetDevice(R->dev));
    HR_SPCU(r, cudaMemcpyAsync(R->h_ctl, R->d_ctl, sizeof(hr_sp_ctl), cudaMemcpyDeviceToHost, st));
    HR_SPCU(r, cudaStreamSynchronize(st));
    r->checked_done = (long)R->h_ctl->done;
    r->checked_stop = R->h_ctl->stop;
    r->checked_rel = R->h_ctl->rel;
    return HR_OK;
}

hr_status hr_sp_resid_run(hr_sparse_run *r, hr_sp_resid *R, const double *d_b, const double *d_x,
                          const double *d_q, cudaStream_t st, double *rel)
{
    HR_SPCU(r, cudaSetDevice(R->dev));
    if (R->n == 0) {
        *rel = 0.0;
        return HR_OK;
    }
    hr_sp_resid_kernel<<<R->nblk, HR_SP_RES_THREADS, 0, st>>>(
        R->n, R->d_rowp, R->d_col, R->d_val, d_b, d_x, d_q, R->d_part, R->d_ticket, R->d_out, R->bnorm, NULL);
    HR_SPCU(r, cudaGetLastError());
    HR_SPCU(r, cudaMemcpyAsync(R->h_out, R->d_out, sizeof(double), cudaMemcpyDeviceToHost, st));
    HR_SPCU(r, cudaStreamSynchronize(st));
    *rel = *R->h_out;
    return HR_OK;
}

void hr_sp_resid_free(hr_sp_resid *R)
{
    if (R->d_part || R->h_out) cudaSetDevice(R->dev);
    cudaFree(R->d_rowp), cudaFree(R->d_col), cudaFree(R->d_val), cudaFree(R->d_xh);
    cudaFree(R->d_part), cudaFree(R->d_out), cudaFree(R->d_ctl);
    if (R->h_out) cudaFreeHost(R->h_out);
    if (R->h_ctl) cudaFreeHost(R->h_ctl);
    (void)cudaGetLastError();
    memset(R, 0, sizeof *R);
}
