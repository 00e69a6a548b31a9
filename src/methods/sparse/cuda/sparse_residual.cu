/*
 * The relative residual ||b - A x|| / ||b|| of a GPU method's iterate, computed on the
 * device (a copy of x to the host and an SpMV on the CPU at every check cost 25x the
 * kernels' time on small systems).
 *
 * One kernel: each thread forms one row of r = b - A x (from the CSR arrays, or
 * r = b - q when the caller already has q = A x, as cg does with cuSPARSE), each thread
 * block reduces its rows to (m, s) = (max |r_i|, sum (r_i / m)^2), and the last block to
 * finish (a ticket counter) combines the blocks' pairs the LAPACK dnrm2 way,
 * ||r|| = M sqrt(sum s_b (m_b / M)^2), so that no square overflows or underflows. The
 * result goes to pinned host memory: one 8-byte copy per check instead of x.
 *
 * Device-side checks (hr_sp_ctl, sparse_gpu.cuh): the same kernel, run beside the next
 * iteration in the methods' device loops, also applies the driver's tests and gates the
 * later kernels; batched, one launch checks a whole body of iterations. The device
 * loop that runs them is in sparse_loop.cu.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "methods/sparse/cuda/sparse_gpu.cuh"

#define HR_SP_RES_THREADS 256
#define HR_SP_MON_RING    1024 /* deferred monitor points a call may hold */

/* Row i's residual b_i - (A x)_i for the ng <= G vectors x + g n: b_i minus the
 * entries in CSR order, one thread a row (0 where the row does not exist). Both check
 * kernels form their rows with it, so every check of a vector has the same bits.
 * (Groups of 2 to 32 lanes a row, tried on trefethen:20000's 28-entry rows, were no
 * faster with 2 and slower with more: 1.51x-2.84x the driver against 1.53x,
 * docs/results/sparse.md.) */
template <int G>
__device__ __forceinline__ void hr_sp_row_resid(bool in, int i, const long long *__restrict__ rowp,
                                                const int *__restrict__ col, const double *__restrict__ val,
                                                const double *__restrict__ b, const double *x, long long n,
                                                int ng, double (&s)[G])
{
#pragma unroll
    for (int g = 0; g < G; g++)
        s[g] = 0.0;
    if (!in) return;
    const double bi = b[i];
#pragma unroll
    for (int g = 0; g < G; g++)
        s[g] = bi;
    for (long long p = rowp[i]; p < rowp[i + 1]; p++) {
        const long long c = col[p];
        const double v = val[p];
#pragma unroll
        for (int g = 0; g < G; g++)
            if (g < ng) s[g] -= v * x[(long long)g * n + c];
    }
}

__global__ void __launch_bounds__(HR_SP_RES_THREADS)
    hri_sp_resid_kernel(int n, const long long *__restrict__ rowp, const int *__restrict__ col,
                       const double *__restrict__ val, const double *__restrict__ b, const double *x,
                       const double *x1, const double *__restrict__ q, double *part, unsigned int *ticket,
                       double *out, double bnorm, hr_sp_ctl *ctl, int j, int batch_v)
{
    __shared__ double sm[32];
    __shared__ bool last;
    if (batch_v != 0) { /* batched: position j = blockIdx.y, its own parts, ticket and result */
        j = (int)blockIdx.y;
        part += 2 * (long long)gridDim.x * j;
        ticket += j;
        out += j;
    }
    /* a check after the one that stopped the solve, or past the call's end: nothing to
     * do (every block alike: checks run in order on one stream, and stop changes only
     * in the last block of a check, after all blocks passed here; batched, stop changes
     * only in the body's end) */
    long long k = 0;
    if (batch_v < 0) {
        x += (long long)j * n; /* lean body: snapshot j, no gate (ctl: bnorm only) */
    } else if (ctl) {
        k = hr_sp_gate_block(ctl, j);
        if (k == 0) return;
        if (batch_v > 0)
            x += (long long)(k % batch_v) * n; /* snapshot k of the ring */
        else if (k & 1)
            x = x1; /* iterate k of a double-buffered method */
    }
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double ri = 0.0;
    if (q) {
        if (i < n) ri = b[i] - q[i];
    } else {
        double s1[1];
        hr_sp_row_resid<1>(i < n, i, rowp, col, val, b, x, n, 1, s1);
        ri = s1[0];
    }
    double a = fabs(ri);
    if (!(a <= INFINITY)) a = INFINITY; /* NaN: reported as Inf, diverged either way */
    const double m = hr_sp_block_reduce<true>(a, sm);
    const double t = m > 0.0 && m < INFINITY ? (ri / m) * (ri / m) : 0.0;
    const double s = hr_sp_block_reduce<false>(t, sm);
    if (threadIdx.x == 0) {
        part[2 * blockIdx.x] = m;
        part[2 * blockIdx.x + 1] = s;
        __threadfence(); /* the pair is visible before the ticket says so */
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    if (ctl) bnorm = ctl->bnorm; /* graphs keep arguments: per-solve values live on the device */
    const double rel = hr_sp_combine_norm(part, gridDim.x, bnorm, sm);
    if (threadIdx.x == 0) {
        *out = rel;
        if (ctl && batch_v == 0) hr_sp_ctl_record(ctl, k, rel); /* the driver's tests */
        *ticket = 0u;                                           /* ready for the next launch (stream order) */
    }
}

hr_status hri_sp_resid_setup(hr_sparse_run *r, hr_sp_resid *R, int with_matrix, int with_hub)
{
    const hr_csr *A = r->A;
    const int n = R->n = A->n_rows;
    R->wide_rows = n > 0 && (double)A->nnz >= 16.0 * (double)n;
    R->multi = hr_tune_on(r->o.tuning.sparse_multi, R->wide_rows);
    R->nblk = (n + HR_SP_RES_THREADS - 1) / HR_SP_RES_THREADS;
    HR_SPCU(r, cudaGetDevice(&R->dev));
    cudaFuncAttributes fa; /* loads the kernel now, before any capture or timed region */
    HR_SPCU(r, cudaFuncGetAttributes(&fa, hri_sp_resid_kernel));
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
    HR_SPCU(r, cudaMalloc((void **)&R->d_part, 4 * (size_t)(R->nblk > 0 ? R->nblk : 1) * sizeof(double)));
    HR_SPCU(r, cudaMalloc((void **)&R->d_out, 2 * sizeof(double) + 2 * sizeof(unsigned int)));
    R->d_ticket = (unsigned int *)(R->d_out + 2);
    HR_SPCU(r, cudaMemset(R->d_out, 0, 2 * sizeof(double) + 2 * sizeof(unsigned int)));
    HR_SPCU(r, cudaHostAlloc((void **)&R->h_out, sizeof(double), cudaHostAllocPortable));
    HR_SPCU(r, cudaMalloc((void **)&R->d_ctl, sizeof(hr_sp_ctl)));
    HR_SPCU(r, cudaMemset(R->d_ctl, 0, sizeof(hr_sp_ctl)));
    HR_SPCU(r, cudaStreamSynchronize(
                   cudaStreamLegacy)); /* legacy-stream work done before the non-blocking streams read it */
    HR_SPCU(r, cudaHostAlloc((void **)&R->h_ctl, sizeof(hr_sp_ctl), cudaHostAllocPortable));
    HR_SPCU(r, cudaHostAlloc((void **)&R->h_range, 2 * sizeof(long long), cudaHostAllocPortable));
    for (int e = 0; e < 2; e++)
        HR_SPCU(r, cudaEventCreate(&R->ev[e]));
    if (hri_sp_loop_wanted(r) && r->o.monitor_deferred && r->o.monitor && r->o.monitor_every > 0) {
        R->mon_every = r->o.monitor_every;
        R->ring = HR_SP_MON_RING;
        HR_SPCU(r, cudaMalloc((void **)&R->d_hist, HR_SP_MON_RING * sizeof(double)));
        HR_SPCU(r,
                cudaHostAlloc((void **)&R->h_hist, HR_SP_MON_RING * sizeof(double), cudaHostAllocPortable));
    }
    return HR_OK;
}

cudaError_t hri_sp_resid_check(hr_sp_resid *R, const double *d_b, const double *d_x0, const double *d_x1,
                              const double *d_q, int j, int chain, cudaStream_t st)
{
    if (R->n == 0) return cudaSuccess;
    const size_t c = chain ? 1 : 0;
    hri_sp_resid_kernel<<<R->nblk, HR_SP_RES_THREADS, 0, st>>>(
        R->n, R->d_rowp, R->d_col, R->d_val, d_b, d_x0, d_x1 ? d_x1 : d_x0, d_q, R->d_part + c * 2 * R->nblk,
        R->d_ticket + c, R->d_out + c, R->bnorm, R->d_ctl, j, 0);
    return cudaGetLastError();
}

hr_status hri_sp_resid_batch_setup(hr_sparse_run *r, hr_sp_resid *R, int U, int bparts, int cap)
{
    HR_SPCU(r, cudaSetDevice(R->dev));
    const size_t np = (size_t)(bparts > 0 ? bparts : 1);
    const int P = cap > U ? cap : U;
    HR_SPCU(r, cudaMalloc((void **)&R->d_brel, (size_t)P * sizeof(double)));
    HR_SPCU(r, cudaMalloc((void **)&R->d_bpart, (size_t)P * 2 * np * sizeof(double)));
    HR_SPCU(r, cudaMalloc((void **)&R->d_bticket, (size_t)P * sizeof(unsigned int)));
    HR_SPCU(r, cudaMemset(R->d_brel, 0, (size_t)P * sizeof(double)));
    HR_SPCU(r, cudaMemset(R->d_bticket, 0, (size_t)P * sizeof(unsigned int)));
    HR_SPCU(r, cudaStreamSynchronize(
                   cudaStreamLegacy)); /* legacy-stream work done before the non-blocking streams read it */
    R->batch = U;
    R->bcap = P;
    return HR_OK;
}

/* hr_sp_block_reduce of G values at once: per value the same shuffles and the same
 * cross-warp order (so the same bits), with two barriers for all G instead of 2 G.
 * sm: 32 G doubles. */
template <bool MAX, int G> __device__ __forceinline__ void warp_reduce_g(double (&v)[G])
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int g = 0; g < G; g++) {
            const double w = __shfl_down_sync(0xffffffffu, v[g], o);
            v[g] = MAX ? fmax(v[g], w) : v[g] + w;
        }
}

template <bool MAX, int G> __device__ void block_reduce_g(double (&v)[G], double *sm)
{
    warp_reduce_g<MAX, G>(v);
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    __syncthreads(); /* sm may still be read from the previous call */
    if (lane == 0)
#pragma unroll
        for (int g = 0; g < G; g++)
            sm[32 * g + wid] = v[g];
    __syncthreads();
    if (wid == 0) {
#pragma unroll
        for (int g = 0; g < G; g++)
            v[g] = lane < nw ? sm[32 * g + lane] : 0.0;
        warp_reduce_g<MAX, G>(v);
        if (lane == 0)
#pragma unroll
            for (int g = 0; g < G; g++)
                sm[32 * g] = v[g];
    }
    __syncthreads();
#pragma unroll
    for (int g = 0; g < G; g++)
        v[g] = sm[32 * g];
}

/* The lean body's check of G snapshots per pass over the matrix (blockIdx.y: snapshots
 * G y .. G y + G - 1 of U): each row's entries are read once and applied to the G
 * snapshots, each in the CSR order of hri_sp_resid_kernel, and every snapshot's parts,
 * combine and result are that kernel's operations in the same order, so the bits are
 * the same; the G reductions share their barriers. One ticket per group: the group's
 * last block combines its G. */
template <int G>
__global__ void __launch_bounds__(HR_SP_RES_THREADS)
    hr_sp_resid_multi(int n, const long long *__restrict__ rowp, const int *__restrict__ col,
                      const double *__restrict__ val, const double *__restrict__ b, const double *snap, int U,
                      double *part, unsigned int *ticket, double *out, const hr_sp_ctl *ctl)
{
    __shared__ double sm[32 * G];
    __shared__ bool last;
    const int j0 = (int)blockIdx.y * G;
    const int ng = U - j0 < G ? U - j0 : G;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double s[G], a[G];
    hr_sp_row_resid<G>(i < n, i, rowp, col, val, b, snap + (long long)j0 * n, n, ng, s);
#pragma unroll
    for (int g = 0; g < G; g++) {
        a[g] = fabs(s[g]);
        if (!(a[g] <= INFINITY)) a[g] = INFINITY; /* NaN: reported as Inf */
    }
    block_reduce_g<true, G>(a, sm); /* a: the block's max per snapshot */
#pragma unroll
    for (int g = 0; g < G; g++)
        s[g] = a[g] > 0.0 && a[g] < INFINITY ? (s[g] / a[g]) * (s[g] / a[g]) : 0.0;
    block_reduce_g<false, G>(s, sm);
    const long long np = 2 * (long long)gridDim.x;
    if (threadIdx.x == 0) {
        for (int g = 0; g < ng; g++) {
            part[(j0 + g) * np + 2 * blockIdx.x] = a[g];
            part[(j0 + g) * np + 2 * blockIdx.x + 1] = s[g];
        }
        __threadfence(); /* the pairs are visible before the ticket says so */
        last = atomicAdd(ticket + j0, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    /* hr_sp_combine_norm for the G snapshots at once (its loads, its order per snapshot) */
    const double *vp = part + j0 * np;
    double M[G], S[G];
#pragma unroll
    for (int g = 0; g < G; g++)
        M[g] = S[g] = 0.0;
    for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x)
#pragma unroll
        for (int g = 0; g < G; g++)
            if (g < ng) M[g] = fmax(M[g], __ldcg(vp + g * np + 2 * k));
    block_reduce_g<true, G>(M, sm);
    for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x)
#pragma unroll
        for (int g = 0; g < G; g++)
            if (g < ng && M[g] > 0.0 && M[g] < INFINITY) {
                const double mk = __ldcg(vp + g * np + 2 * k), sk = __ldcg(vp + g * np + 2 * k + 1);
                if (mk > 0.0) S[g] += sk * ((mk / M[g]) * (mk / M[g]));
            }
    block_reduce_g<false, G>(S, sm);
    if (threadIdx.x == 0) {
        const double bn = ctl->bnorm > 0.0 ? ctl->bnorm : 1.0; /* b = 0: ||r||, as on the host */
        for (int g = 0; g < ng; g++)
            out[j0 + g] = M[g] < INFINITY ? (M[g] / bn) * sqrt(S[g]) : INFINITY;
        ticket[j0] = 0u; /* ready for the next body (stream order) */
    }
}

#define HR_SP_MULTI_G 8

cudaError_t hri_sp_resid_check_lean(hr_sp_resid *R, const double *d_b, const double *snap, int U,
                                   cudaStream_t st)
{
    if (R->n == 0) return cudaSuccess;
    /* one pass per 8 snapshots pays where rows are long (trefethen:20000, 28 entries a
     * row: 1.69x the driver against 2.01x); on 5-point rows its fewer blocks cost more
     * than the passes save (fv2d:99 1.64x against 1.30x).
     * tuning.sparse_multi forces it either way. */
    if (R->d_rowp && R->multi) {
        const dim3 g((unsigned)R->nblk, (unsigned)((U + HR_SP_MULTI_G - 1) / HR_SP_MULTI_G));
        hr_sp_resid_multi<HR_SP_MULTI_G><<<g, HR_SP_RES_THREADS, 0, st>>>(
            R->n, R->d_rowp, R->d_col, R->d_val, d_b, snap, U, R->d_bpart, R->d_bticket, R->d_brel, R->d_ctl);
        return cudaGetLastError();
    }
    const dim3 grid((unsigned)R->nblk, (unsigned)U);
    hri_sp_resid_kernel<<<grid, HR_SP_RES_THREADS, 0, st>>>(R->n, R->d_rowp, R->d_col, R->d_val, d_b, snap,
                                                           snap, NULL, R->d_bpart, R->d_bticket, R->d_brel,
                                                           R->bnorm, R->d_ctl, 0, -1);
    return cudaGetLastError();
}

cudaError_t hri_sp_resid_check_batch(hr_sp_resid *R, const double *d_b, const double *snap, int snap_v,
                                    cudaStream_t st)
{
    if (R->n == 0) return cudaSuccess;
    const dim3 grid((unsigned)R->nblk, (unsigned)R->batch);
    hri_sp_resid_kernel<<<grid, HR_SP_RES_THREADS, 0, st>>>(R->n, R->d_rowp, R->d_col, R->d_val, d_b, snap,
                                                           snap, NULL, R->d_bpart, R->d_bticket, R->d_brel,
                                                           R->bnorm, R->d_ctl, 0, snap_v);
    return cudaGetLastError();
}

const char *hri_sp_mode_name(const hr_sparse_run *r, const hr_sp_loop *L, int batch)
{
    if (r->device_checks == 2)
        return L->lean
                   ? (L->loop_long
                          ? (L->lean_def.variable ? "while-graph/lean+long+predict" : "while-graph/lean+long")
                          : (L->lean_def.variable ? "while-graph/lean+predict" : "while-graph/lean"))
               : batch ? "while-graph/batched"
                       : "while-graph";
    if (r->device_checks) return batch ? "body-replay/batched" : "body-replay";
    return r->o.tol > 0.0 ? "host-checks" : "unchecked";
}

int hri_sp_lean_wanted(const hr_sparse_run *r)
{
    return hr_tune_on(r->o.tuning.sparse_lean, 1);
}

int hri_sp_predict_wanted(const hr_sparse_run *r)
{
    return hr_tune_on(r->o.tuning.sparse_predict, 1);
}

int hri_sp_batch_wanted(const hr_sparse_run *r, double bytes)
{
    return hr_tune_on(r->o.tuning.sparse_batch, 1) && bytes <= (double)HR_SP_BATCH_BYTES;
}

hr_status hri_sp_ctl_reset(hr_sparse_run *r, hr_sp_resid *R, cudaStream_t st)
{
    hr_sp_ctl c;
    memset(&c, 0, sizeof c);
    c.rel_at[0] = c.rel_at[1] = NAN;
    c.stop_at = 0x7fffffffffffffffLL;
    c.tol = r->o.tol;
    c.divref = r->divref;
    c.bnorm = R->bnorm;
    c.hist = R->d_hist;
    c.mon_every = R->mon_every > 0 ? R->mon_every : 1;
    c.ring = R->ring > 0 ? R->ring : 1;
    r->mon_hist = R->h_hist; /* the device loop runs this solve: monitors may be deferred */
    r->mon_every = R->mon_every;
    r->mon_ring = R->ring;
    *R->h_ctl = c;
    HR_SPCU(r, cudaSetDevice(R->dev));
    HR_SPCU(r, cudaMemcpyAsync(R->d_ctl, R->h_ctl, sizeof c, cudaMemcpyHostToDevice, st));
    /* a check racing the one that stopped the last solve may have left its blocks' ticket
     * short (some blocks saw stop, some not): start from zero */
    HR_SPCU(r, cudaMemsetAsync(R->d_ticket, 0, 2 * sizeof(unsigned int), st));
    if (R->d_bticket)
        HR_SPCU(r, cudaMemsetAsync(R->d_bticket, 0, (size_t)R->bcap * sizeof(unsigned int), st));
    HR_SPCU(r, cudaStreamSynchronize(st));
    return HR_OK;
}

hr_status hri_sp_ctl_fetch(hr_sparse_run *r, hr_sp_resid *R, cudaStream_t st)
{
    HR_SPCU(r, cudaSetDevice(R->dev));
    HR_SPCU(r, cudaMemcpyAsync(R->h_ctl, R->d_ctl, sizeof(hr_sp_ctl), cudaMemcpyDeviceToHost, st));
    HR_TRY(hri_sp_sync(r, st));
    const hr_sp_ctl *c = R->h_ctl;
    r->checked_stop = c->stop;
    r->checked_done = (long)(c->stop ? c->stop_at : c->done); /* the first stop, not a later check */
    r->checked_rel = c->rel_at[r->checked_done & 1];
    r->prof.bodies = c->bodies; /* this solve's so far */
    return HR_OK;
}

double hri_sp_now(void)
{
    return hr_now();
}

hr_status hri_sp_sync(hr_sparse_run *r, cudaStream_t st)
{
    const double t0 = r->prof.on ? hr_now() : 0.0;
    HR_SPCU(r, cudaStreamSynchronize(st));
    r->prof.syncs++;
    if (r->prof.on) r->prof.t_wait += hr_now() - t0;
    return HR_OK;
}

hr_status hri_sp_resid_run(hr_sparse_run *r, hr_sp_resid *R, const double *d_b, const double *d_x,
                          const double *d_q, cudaStream_t st, double *rel)
{
    HR_SPCU(r, cudaSetDevice(R->dev));
    if (R->n == 0) {
        *rel = 0.0;
        return HR_OK;
    }
    hri_sp_resid_kernel<<<R->nblk, HR_SP_RES_THREADS, 0, st>>>(R->n, R->d_rowp, R->d_col, R->d_val, d_b, d_x,
                                                              d_x, d_q, R->d_part, R->d_ticket, R->d_out,
                                                              R->bnorm, NULL, 0, 0);
    HR_SPCU(r, cudaGetLastError());
    HR_SPCU(r, cudaMemcpyAsync(R->h_out, R->d_out, sizeof(double), cudaMemcpyDeviceToHost, st));
    HR_TRY(hri_sp_sync(r, st));
    *rel = *R->h_out;
    return HR_OK;
}

/* Vectors the caller hands over in device memory (hr_sparse_solver_solve_device): max |v_i|
 * and ||v|| (scaled as hri_sparse_norm2 scales it) on the device. Each block reduces its
 * entries to (m, s); one block combines the pairs in a fixed order. */
__global__ void __launch_bounds__(HR_SP_RES_THREADS) hri_sp_norm_parts(const double *__restrict__ v, int n, double *part)
{
    __shared__ double sm[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double m, q;
    hr_sp_block_norm(i < n ? v[i] : 0.0, sm, &m, &q);
    if (threadIdx.x == 0) part[2 * blockIdx.x] = m, part[2 * blockIdx.x + 1] = q;
}

__global__ void __launch_bounds__(HR_SP_RES_THREADS) hri_sp_norm_total(const double *part, unsigned nb, double *out)
{
    __shared__ double sm[32];
    double M = 0.0;
    for (unsigned k = threadIdx.x; k < nb; k += blockDim.x)
        M = fmax(M, part[2 * k]);
    M = hr_sp_block_reduce<true>(M, sm);
    const double norm = hr_sp_combine_norm(part, nb, 1.0, sm);
    if (threadIdx.x == 0) out[0] = M, out[1] = norm;
}

hr_status hri_sp_device_norm(hr_sparse_run *r, const double *v, int n, cudaStream_t st, double *maxabs, double *norm)
{
    if (n <= 0) {
        *maxabs = *norm = 0.0;
        return HR_OK;
    }
    const unsigned nb = (unsigned)((n + HR_SP_RES_THREADS - 1) / HR_SP_RES_THREADS);
    double *d = NULL, h[2];
    HR_SPCU(r, cudaMallocAsync((void **)&d, (2 * (size_t)nb + 2) * sizeof(double), st));
    hri_sp_norm_parts<<<nb, HR_SP_RES_THREADS, 0, st>>>(v, n, d);
    hri_sp_norm_total<<<1, HR_SP_RES_THREADS, 0, st>>>(d, nb, d + 2 * (size_t)nb);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemcpyAsync(h, d + 2 * (size_t)nb, sizeof h, cudaMemcpyDeviceToHost, st);
    const cudaError_t fe = cudaFreeAsync(d, st);
    if (e == cudaSuccess) e = fe;
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    if (e != cudaSuccess) return hri_sp_cuda_fail(r, e, "device norm", __FILE__, __LINE__);
    *maxabs = h[0];
    *norm = h[1];
    return HR_OK;
}

void hri_sp_resid_free(hr_sp_resid *R)
{
    if (R->d_part || R->h_out) cudaSetDevice(R->dev);
    cudaFree(R->d_rowp), cudaFree(R->d_col), cudaFree(R->d_val), cudaFree(R->d_xh);
    cudaFree(R->d_part), cudaFree(R->d_out), cudaFree(R->d_ctl), cudaFree(R->d_hist);
    cudaFree(R->d_brel), cudaFree(R->d_bpart), cudaFree(R->d_bticket);
    if (R->h_hist) cudaFreeHost(R->h_hist);
    if (R->h_out) cudaFreeHost(R->h_out);
    if (R->h_ctl) cudaFreeHost(R->h_ctl);
    if (R->h_range) cudaFreeHost(R->h_range);
    for (int e = 0; e < 2; e++)
        if (R->ev[e]) cudaEventDestroy(R->ev[e]);
    (void)cudaGetLastError();
    memset(R, 0, sizeof *R);
}
