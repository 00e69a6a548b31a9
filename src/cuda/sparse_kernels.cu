/*
 * The relaxation kernels of the GPU sparse methods, on the sliced block layout:
 *  - jacobi: one thread per row, x_i' = (1 - tau) x_i + tau (b_i - sum_{j!=i} a_ij x_j) / a_ii,
 *    the CPU formula in the CPU's order (bitwise equal with -fmad=false);
 *  - async-(K), seed 002 Algorithm 1: one thread block per block of rows. It reads x
 *    from global memory once, forms the off-block part s_i = b_i - sum_{j not in block}
 *    a_ij x_j once, runs K Jacobi sweeps on the block in shared memory with s frozen,
 *    and writes the rows back. No block waits for another: blocks of this launch and
 *    of launches on other streams read whatever x holds at that moment.
 */
#include <string.h>

#include "cuda/sparse_gpu.cuh"

/* x is read with plain loads: the L1 holds nothing older than the launch (it is not
 * kept across kernels), and values other blocks write during this launch may or may
 * not be seen, which is the asynchronous iteration's premise. */
__global__ void hr_sp_jacobi_kernel(hr_sp_blocks L, const double *__restrict__ diag,
                                    const double *__restrict__ b, const double *__restrict__ x,
                                    double *__restrict__ xn, double tau,
                                    const unsigned char *__restrict__ frozen)
{
    const int blk = blockIdx.x, t = threadIdx.x, B = L.B;
    const int i = L.row0 + blk * B + t;
    if (t >= B || i >= L.row0 + L.nrows) return;
    if (frozen && frozen[i]) {
        xn[i] = x[i];
        return;
    }
    const int w = L.off_w[blk];
    const long long base = L.off_ptr[blk] + t;
    double acc = b[i];
#pragma unroll 4
    for (int p = 0; p < w; p++) {
        const int c = L.off_col[base + (long long)p * B];
        if (c >= 0) acc -= L.off_val[base + (long long)p * B] * x[c];
    }
    const double d = acc / diag[i];
    xn[i] = tau == 1.0 ? d : (1.0 - tau) * x[i] + tau * d;
}

/* b_i - sum of the off-block entries of local row t, from x as it is now */
__device__ __forceinline__ double off_block_part(const hr_sp_blocks &L, const double *__restrict__ b,
                                                 const double *xr, int blk, int lo, int t)
{
    const int ow = L.off_w[blk];
    const long long op = L.off_ptr[blk] + t;
    double acc = b[lo + t];
#pragma unroll 4
    for (int p = 0; p < ow; p++) {
        const long long q = op + (long long)p * L.B;
        const int c = L.off_col[q];
        if (c >= 0) acc -= L.off_val[q] * xr[c];
    }
    return acc;
}

/* The off-block part of local row t for the sweep (acc = b_i - sum a_ij xr_j, when
 * sweep) and for a check (racc = b_i - sum a_ij prev_j, when prev): one pass over the
 * entries, so a check costs the launch only its loads of prev. */
__device__ __forceinline__ void off_parts(const hr_sp_blocks &L, const double *__restrict__ b,
                                          const double *xr, const double *prev, bool sweep, int blk, int lo,
                                          int t, double *acc_out, double *racc_out)
{
    const int ow = L.off_w[blk];
    const long long op = L.off_ptr[blk] + t;
    double acc = b[lo + t], racc = acc;
#pragma unroll 4
    for (int p = 0; p < ow; p++) {
        const long long q = op + (long long)p * L.B;
        const int c = L.off_col[q];
        if (c >= 0) {
            const double v = L.off_val[q];
            if (sweep) acc -= v * xr[c];
            if (prev) racc -= v * prev[c];
        }
    }
    *acc_out = acc;
    *racc_out = racc;
}

/* Row lo + t of b - A x in the check's order: off-block entries, in-block entries (each
 * in CSR order), the diagonal last. The fused check computes the same operations. */
__device__ __forceinline__ double block_resid_row(const hr_sp_blocks &L, const double *__restrict__ diag,
                                                  const double *__restrict__ b, const double *x, int blk,
                                                  int lo, int t)
{
    double acc, r;
    off_parts(L, b, NULL, x, false, blk, lo, t, &acc, &r);
    const int iw = L.in_w[blk];
    const long long ip = L.in_ptr[blk] + t;
    for (int p = 0; p < iw; p++) {
        const long long q = ip + (long long)p * L.B;
        const int c = L.in_col[q];
        if (c >= 0) r -= L.in_val[q] * x[lo + c];
    }
    return r - diag[lo + t] * x[lo + t];
}

/* W > 0: one row per thread with its (at most W) in-block entries held in registers
 * for the K local sweeps; W = 0: any block size, entries re-read (L1) every sweep.
 * Both subtract in the CSR order, so the two give the same bits.
 * With C (the device loop, gated with lag 2; without, the kernel is the plain one): launch k also forms the
 * pairs of the residual of iterate k - 1 from snap[(k - 1) % 3] (complete: the launch before has finished),
 * and its extra block combines those of k - 2 (hr_sp_combine_record), so an iteration is one kernel
 * (hr_sp_fused). The check's loads share the sweep's pass over the entries (block_resid_row's order), its
 * reduction runs after the rows are written (W > 0; r waits in s, unused there) or before the local sweeps
 * (W = 0; r waits in xc until the first sweep). */
template <int W, bool C>
__global__ void __launch_bounds__(W > 8 ? 512 : 1024)
    hr_sp_async_kernel(hr_sp_blocks L, const double *__restrict__ diag, const double *__restrict__ b,
                       const double *xr, double *xw, int K, const unsigned char *__restrict__ frozen,
                       hr_sp_fused F)
{
    __shared__ double red[64];
    double *snap = NULL;       /* device loop: iterate k also goes to snap[k % 3] for its check */
    const double *prev = NULL; /* iterate k - 1, whose pairs this launch forms */
    bool sweep = true;
    long long it = 0; /* iteration number */
    if (C) {          /* one answer a block, from the control block the last launch left */
        it = hr_sp_gate_block(F.ctl, F.j, 2);
        if (it == 0) return;           /* a check ended the solve, or past the call's last check */
        if (blockIdx.x == L.nblocks) { /* the combiner: the verdict on iterate k - 2 */
            hr_sp_combine_record(F.ctl, it - 2, F.part, (unsigned)L.nblocks, red);
            return;
        }
        const long long target = F.ctl->target; /* uniform: it changes between calls only */
        if (it > target + 1) return;            /* target + 2: the combiner's launch */
        snap = F.snap[it % 3];
        if (it >= 2) prev = F.snap[(it - 1) % 3];
        sweep = it <= target;
    }
    extern __shared__ double sm[];
    const int blk = blockIdx.x, B = L.B;
    const int lo = L.row0 + blk * B;
    const int m = min(B, L.row0 + L.nrows - lo);
    double *s = sm, *xa = sm + B, *xc = sm + 2 * B;
    const int iw = L.in_w[blk];
    const long long ip = L.in_ptr[blk];
    double cm = 0.0, cs = 0.0; /* the check's pair */
    if constexpr (W > 0) {
        const int t = threadIdx.x;
        const bool live = t < m;
        int ic[W > 0 ? W : 1];
        double iv[W > 0 ? W : 1], st = 0.0, dg = 1.0;
        bool fz = false;
        if (live) {
#pragma unroll
            for (int p = 0; p < W; p++) {
                const long long q = ip + (long long)p * B + t;
                ic[p] = p < iw ? L.in_col[q] : -1;
                iv[p] = p < iw ? L.in_val[q] : 0.0;
            }
            double racc;
            off_parts(L, b, xr, prev, sweep, blk, lo, t, &st, &racc);
            dg = diag[lo + t];
            if (sweep) {
                xa[t] = xr[lo + t];
                fz = frozen && frozen[lo + t];
            }
            if (prev) {
#pragma unroll
                for (int p = 0; p < W; p++)
                    if (ic[p] >= 0) racc -= iv[p] * prev[lo + ic[p]];
                s[t] = racc - dg * prev[lo + t];
            }
        }
        if (sweep) {
            __syncthreads();
            for (int k = 0; k < K; k++) {
                if (live) {
                    double acc = st;
#pragma unroll
                    for (int p = 0; p < W; p++)
                        if (ic[p] >= 0) acc -= iv[p] * xa[ic[p]];
                    xc[t] = fz ? xa[t] : acc / dg;
                }
                __syncthreads();
                double *tmp = xa;
                xa = xc;
                xc = tmp;
            }
            if (live && !fz) __stcg(xw + lo + t, xa[t]);
            if (live && snap) snap[lo + t] = xa[t]; /* frozen rows too: their unchanged value */
        }
        if (prev) hr_sp_rows_norm(s, m, red, &cm, &cs); /* a thread reads its own s[t] */
    } else {
        for (int t = threadIdx.x; t < m; t += blockDim.x) {
            double acc, racc;
            off_parts(L, b, xr, prev, sweep, blk, lo, t, &acc, &racc);
            if (sweep) {
                s[t] = acc;
                xa[t] = xr[lo + t];
            }
            if (prev) {
                for (int p = 0; p < iw; p++) {
                    const long long q = ip + (long long)p * B + t;
                    const int c = L.in_col[q];
                    if (c >= 0) racc -= L.in_val[q] * prev[lo + c];
                }
                xc[t] = racc - diag[lo + t] * prev[lo + t];
            }
        }
        if (prev) hr_sp_rows_norm(xc, m, red, &cm, &cs); /* before the first sweep writes xc */
        __syncthreads();
        for (int k = 0; k < K && sweep; k++) {
            for (int t = threadIdx.x; t < m; t += blockDim.x) {
                if (frozen && frozen[lo + t]) {
                    xc[t] = xa[t];
                    continue;
                }
                double acc = s[t];
#pragma unroll 4
                for (int p = 0; p < iw; p++) {
                    const long long q = ip + (long long)p * B + t;
                    const int c = L.in_col[q];
                    if (c >= 0) acc -= L.in_val[q] * xa[c];
                }
                xc[t] = acc / diag[lo + t];
            }
            __syncthreads();
            double *tmp = xa;
            xa = xc;
            xc = tmp;
        }
        for (int t = threadIdx.x; t < m && sweep; t += blockDim.x) {
            if (!(frozen && frozen[lo + t])) __stcg(xw + lo + t, xa[t]);
            if (snap) snap[lo + t] = xa[t];
        }
    }
    if (prev && threadIdx.x == 0) { /* set (k - 1) & 1: the combiner of launch k + 1 reads it */
        double *pp = F.part + ((it - 1) & 1) * 2 * (long long)L.nblocks;
        pp[2 * blk] = cm;
        pp[2 * blk + 1] = cs;
    }
}

/* The fused check alone (host-checked path, monitors): the same rows, pairs and
 * combine as hr_sp_async_kernel's check. Dynamic shared memory: B doubles. */
__global__ void hr_sp_async_resid_kernel(hr_sp_blocks L, const double *__restrict__ diag,
                                         const double *__restrict__ b, const double *x, double *part,
                                         unsigned int *ticket, double bnorm, double *out)
{
    __shared__ double red[64];
    extern __shared__ double rv[];
    const int blk = blockIdx.x;
    const int lo = L.row0 + blk * L.B;
    const int m = min(L.B, L.row0 + L.nrows - lo);
    for (int t = threadIdx.x; t < m; t += blockDim.x)
        rv[t] = block_resid_row(L, diag, b, x, blk, lo, t);
    double cm, cs;
    hr_sp_rows_norm(rv, m, red, &cm, &cs);
    hr_sp_ticket_combine(cm, cs, part, ticket, red, NULL, 0, bnorm, out);
}

/* The register width for a layout: 0 (generic) when the rows are too wide or a
 * thread must take several rows. */
static int width_for(const hr_sp_blocks *L)
{
    const int threads = hr_sp_threads(L->B), w = L->max_in_w;
    if (L->B > 1024) return 0;
    if (w <= 4) return 4;
    if (w <= 8) return 8;
    if (w <= 16 && threads <= 512) return 16;
    return 0;
}

template <int W, bool C> static cudaError_t prepare_one(size_t smem)
{
    cudaFuncAttributes fa; /* loads the module now, outside any timed region */
    cudaError_t e = cudaFuncGetAttributes(&fa, hr_sp_async_kernel<W, C>);
    if (e == cudaSuccess && smem > 48 * 1024)
        e = cudaFuncSetAttribute(hr_sp_async_kernel<W, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem);
    return e;
}

template <int W> static cudaError_t prepare_two(size_t smem)
{
    cudaError_t e = prepare_one<W, false>(smem);
    return e == cudaSuccess ? prepare_one<W, true>(smem) : e;
}

cudaError_t hr_sp_async_prepare(int B)
{
    const size_t smem = 3 * (size_t)B * sizeof(double);
    cudaError_t e = prepare_two<0>(smem);
    if (e == cudaSuccess) e = prepare_two<4>(smem);
    if (e == cudaSuccess) e = prepare_two<8>(smem);
    if (e == cudaSuccess) e = prepare_two<16>(smem);
    cudaFuncAttributes fa;
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&fa, hr_sp_async_resid_kernel);
    if (e == cudaSuccess && B * sizeof(double) > 48 * 1024)
        e = cudaFuncSetAttribute(hr_sp_async_resid_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)(B * sizeof(double)));
    return e;
}

cudaError_t hr_sp_async_launch(const hr_sp_blocks *L, const double *diag, const double *b, const double *xr,
                               double *xw, int K, const unsigned char *frozen, const hr_sp_fused *fused,
                               cudaStream_t st)
{
    if (L->nblocks == 0) return cudaSuccess;
    const size_t smem = 3 * (size_t)L->B * sizeof(double);
    const unsigned threads = (unsigned)hr_sp_threads(L->B);
    hr_sp_fused F;
    memset(&F, 0, sizeof F);
    if (fused) F = *fused;
    const int w = width_for(L);
#define HR_SP_ASYNC_CASE(W_)                                                                                 \
    if (fused) /* one block more: the combiner */                                                            \
        hr_sp_async_kernel<W_, true>                                                                         \
            <<<L->nblocks + 1, threads, smem, st>>>(*L, diag, b, xr, xw, K, frozen, F);                      \
    else                                                                                                     \
        hr_sp_async_kernel<W_, false><<<L->nblocks, threads, smem, st>>>(*L, diag, b, xr, xw, K, frozen, F);
    if (w == 4) {
        HR_SP_ASYNC_CASE(4)
    } else if (w == 8) {
        HR_SP_ASYNC_CASE(8)
    } else if (w == 16) {
        HR_SP_ASYNC_CASE(16)
    } else {
        HR_SP_ASYNC_CASE(0)
    }
#undef HR_SP_ASYNC_CASE
    return cudaGetLastError();
}

cudaError_t hr_sp_async_resid_launch(const hr_sp_blocks *L, const double *diag, const double *b,
                                     const double *x, double *part, unsigned int *ticket, double bnorm,
                                     double *out, cudaStream_t st)
{
    if (L->nblocks == 0) return cudaSuccess;
    hr_sp_async_resid_kernel<<<L->nblocks, hr_sp_threads(L->B), (size_t)L->B * sizeof(double), st>>>(
        *L, diag, b, x, part, ticket, bnorm, out);
    return cudaGetLastError();
}

cudaError_t hr_sp_jacobi_prepare(void)
{
    cudaFuncAttributes fa;
    return cudaFuncGetAttributes(&fa, hr_sp_jacobi_kernel);
}

cudaError_t hr_sp_jacobi_launch(const hr_sp_blocks *L, const double *diag, const double *b, const double *x,
                                double *xn, double tau, const unsigned char *frozen, cudaStream_t st)
{
    if (L->nblocks == 0) return cudaSuccess;
    hr_sp_jacobi_kernel<<<L->nblocks, L->B, 0, st>>>(*L, diag, b, x, xn, tau, frozen);
    return cudaGetLastError();
}
