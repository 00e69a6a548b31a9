/*
 * The relaxation kernels of the GPU sparse methods, on the sliced block layout:
 *  - jacobi: one thread per row, x_i' = (1 - tau) x_i + tau (b_i - sum_{j!=i} a_ij x_j) / a_ii,
 *    the CPU formula in the CPU's order (bitwise equal with -fmad=false);
 *  - async-(K), Anzt et al. Algorithm 1: one thread block per block of rows. It reads x
 *    from global memory once, forms the off-block part s_i = b_i - sum_{j not in block}
 *    a_ij x_j once, runs K Jacobi sweeps on the block in shared memory with s frozen,
 *    and writes the rows back. No block waits for another: blocks of this launch and
 *    of launches on other streams read whatever x holds at that moment.
 */
#include "methods/sparse/cuda/sparse_gpu.cuh"

/* x is read with plain loads: the L1 holds nothing older than the launch (it is not
 * kept across kernels), and values other blocks write during this launch may or may
 * not be seen, which is the asynchronous iteration's premise. */
__global__ void hri_sp_jacobi_kernel(hr_sp_blocks L, const double *__restrict__ diag,
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

/* W > 0: one row per thread with its (at most W) in-block entries held in registers
 * for the K local sweeps; W = 0: any block size, entries re-read (L1) every sweep.
 * Both subtract in the CSR order, so the two give the same bits. */
template <int W>
__global__ void __launch_bounds__(W > 8 ? 512 : 1024)
    hr_sp_async_kernel(hr_sp_blocks L, const double *__restrict__ diag, const double *__restrict__ b,
                       const double *xr, double *xw, int K, const unsigned char *__restrict__ frozen,
                       const hr_sp_ctl *ctl, int j, double *snap_ring, int snap_v, long long snap_n)
{
    /* device loop: iterate k also goes to snapshot k % snap_v for its check; without ctl
     * (the lean body) to snap_ring itself */
    double *snap = ctl ? NULL : snap_ring;
    if (ctl) { /* one answer a block: a check on the other stream may set stop meanwhile */
        const long long k = hr_sp_gate_block(ctl, j);
        if (k == 0) return; /* a device check ended the solve, or past the call's end */
        if (snap_ring) snap = snap_ring + (k % snap_v) * snap_n;
    }
    extern __shared__ double sm[];
    const int blk = blockIdx.x, B = L.B;
    const int lo = L.row0 + blk * B;
    const int m = min(B, L.row0 + L.nrows - lo);
    double *s = sm, *xa = sm + B, *xc = sm + 2 * B;
    const int iw = L.in_w[blk];
    const long long ip = L.in_ptr[blk];
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
            st = off_block_part(L, b, xr, blk, lo, t);
            xa[t] = xr[lo + t];
            dg = diag[lo + t];
            fz = frozen && frozen[lo + t];
        }
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
    } else {
        for (int t = threadIdx.x; t < m; t += blockDim.x) {
            s[t] = off_block_part(L, b, xr, blk, lo, t);
            xa[t] = xr[lo + t];
        }
        __syncthreads();
        for (int k = 0; k < K; k++) {
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
        for (int t = threadIdx.x; t < m; t += blockDim.x) {
            if (!(frozen && frozen[lo + t])) __stcg(xw + lo + t, xa[t]);
            if (snap) snap[lo + t] = xa[t];
        }
    }
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

template <int W> static cudaError_t prepare_one(size_t smem)
{
    cudaFuncAttributes fa; /* loads the module now, outside any timed region */
    cudaError_t e = cudaFuncGetAttributes(&fa, hr_sp_async_kernel<W>);
    if (e == cudaSuccess && smem > 48 * 1024)
        e = cudaFuncSetAttribute(hr_sp_async_kernel<W>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem);
    return e;
}

cudaError_t hri_sp_async_prepare(int B)
{
    const size_t smem = 3 * (size_t)B * sizeof(double);
    cudaError_t e = prepare_one<0>(smem);
    if (e == cudaSuccess) e = prepare_one<4>(smem);
    if (e == cudaSuccess) e = prepare_one<8>(smem);
    if (e == cudaSuccess) e = prepare_one<16>(smem);
    return e;
}

cudaError_t hri_sp_async_launch(const hr_sp_blocks *L, const double *diag, const double *b, const double *xr,
                               double *xw, int K, const unsigned char *frozen, const hr_sp_ctl *ctl, int j,
                               double *snap, int snap_v, long long snap_n, cudaStream_t st)
{
    if (L->nblocks == 0) return cudaSuccess;
    const size_t smem = 3 * (size_t)L->B * sizeof(double);
    const unsigned threads = (unsigned)hr_sp_threads(L->B);
    switch (width_for(L)) {
    case 4:
        hr_sp_async_kernel<4>
            <<<L->nblocks, threads, smem, st>>>(*L, diag, b, xr, xw, K, frozen, ctl, j, snap, snap_v, snap_n);
        break;
    case 8:
        hr_sp_async_kernel<8>
            <<<L->nblocks, threads, smem, st>>>(*L, diag, b, xr, xw, K, frozen, ctl, j, snap, snap_v, snap_n);
        break;
    case 16:
        hr_sp_async_kernel<16>
            <<<L->nblocks, threads, smem, st>>>(*L, diag, b, xr, xw, K, frozen, ctl, j, snap, snap_v, snap_n);
        break;
    default:
        hr_sp_async_kernel<0>
            <<<L->nblocks, threads, smem, st>>>(*L, diag, b, xr, xw, K, frozen, ctl, j, snap, snap_v, snap_n);
        break;
    }
    return cudaGetLastError();
}

cudaError_t hri_sp_jacobi_prepare(void)
{
    cudaFuncAttributes fa;
    return cudaFuncGetAttributes(&fa, hri_sp_jacobi_kernel);
}

cudaError_t hri_sp_jacobi_launch(const hr_sp_blocks *L, const double *diag, const double *b, const double *x,
                                double *xn, double tau, const unsigned char *frozen, cudaStream_t st)
{
    if (L->nblocks == 0) return cudaSuccess;
    hri_sp_jacobi_kernel<<<L->nblocks, L->B, 0, st>>>(*L, diag, b, x, xn, tau, frozen);
    return cudaGetLastError();
}
