/*
 * The fixed-order reduction of the device residuals (gpu_residual.cu for a whole grid,
 * dsolver_gpu.cu for a subdomain's box): four values per thread, {sum (|r|/s)^2,
 * sum (|b|/s)^2, max |r|/s, max |b|/s}, reduced within a block by warp shuffles and then
 * warp by warp in order, and the block partials by one thread in block order. The order
 * never depends on timing, so the value is the same every run; the host then makes
 * hri_cpu_residual_box's scaled-norm decision from the four totals.
 */
#ifndef HR_NORM_REDUCE_CUH
#define HR_NORM_REDUCE_CUH

#include <cuda_runtime.h>

/* max that keeps a NaN (as the CPU's `if (!(a <= m)) m = a`) */
__device__ __forceinline__ double hr_nan_max(double m, double a)
{
    return (m != m) ? m : (!(a <= m) ? a : m);
}

/* The block's partials of the four values into part[4 * blockIdx.x ...]; every thread of
 * the block (THREADS of them, a multiple of 32) calls it once. */
template <int THREADS>
__device__ __forceinline__ void hr_norm_block_reduce(double sr, double sb, double mr, double mb, double *part)
{
    __shared__ double sh[4][THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) {
        sr += __shfl_down_sync(0xffffffffu, sr, o);
        sb += __shfl_down_sync(0xffffffffu, sb, o);
        mr = hr_nan_max(mr, __shfl_down_sync(0xffffffffu, mr, o));
        mb = hr_nan_max(mb, __shfl_down_sync(0xffffffffu, mb, o));
    }
    const int wi = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        sh[0][wi] = sr;
        sh[1][wi] = sb;
        sh[2][wi] = mr;
        sh[3][wi] = mb;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double t[4] = {0.0, 0.0, 0.0, 0.0};
        for (int w = 0; w < THREADS / 32; w++) {
            t[0] += sh[0][w];
            t[1] += sh[1][w];
            t[2] = hr_nan_max(t[2], sh[2][w]);
            t[3] = hr_nan_max(t[3], sh[3][w]);
        }
        for (int c = 0; c < 4; c++)
            part[4 * blockIdx.x + c] = t[c];
    }
}

/* One thread adds the block partials in block order: out = the four totals. Launch
 * <<<1, 32>>>. (static: each source that includes this has its own copy.) */
static __global__ void hr_norm_total(const double *part, int nparts, double *out)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    double t[4] = {0.0, 0.0, 0.0, 0.0};
    for (int b = 0; b < nparts; b++) {
        t[0] += part[4 * b];
        t[1] += part[4 * b + 1];
        t[2] = hr_nan_max(t[2], part[4 * b + 2]);
        t[3] = hr_nan_max(t[3], part[4 * b + 3]);
    }
    for (int c = 0; c < 4; c++)
        out[c] = t[c];
}

#endif
