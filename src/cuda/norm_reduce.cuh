/*
 * The device side of the scaled residual norms (hr_norm2): per-block partials of
 * (sum |r|^2, sum |b|^2, max |r|, max |b|) reduced in a fixed order, then one thread adds the
 * block partials in block order, so the value is the same every run. Shared by the grid
 * solver's residual (gpu_residual.cu) and the decomposed solver's box residual
 * (dsolver_gpu.cu).
 */
#ifndef HR_NORM_REDUCE_CUH
#define HR_NORM_REDUCE_CUH

#include <cuda_runtime.h>

/* max that keeps a NaN (the CPU's `if (!(a <= m)) m = a`) */
__device__ __forceinline__ double hr_nan_max(double m, double a)
{
    return (m != m) ? m : (!(a <= m) ? a : m);
}

/* Reduces this thread's four values over the block (THREADS threads, a multiple of 32) and
 * writes them to part[4 * blockIdx.x .. + 3]; every thread of the block must call it. */
template <int THREADS>
__device__ __forceinline__ void hr_block_norms_store(double sr, double sb, double mr, double mb, double *part)
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

/* One thread adds `nparts` block partials in block order into out[0..3] (gpu_residual.cu). */
__global__ void hr_residual_total(const double *part, int nparts, double *out);

#endif
