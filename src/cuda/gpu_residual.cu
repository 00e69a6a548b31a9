/* The relative residual on the device, so residual checks do not copy the grid back.
 * Same formula as hr_cpu_residual (double accumulation); the sums are reduced in a
 * fixed order (per-block partials, then one block), so the value is reproducible. */
#include "cuda/gpu_internal.cuh"

#define RES_THREADS 256

template <typename T>
__global__ void __launch_bounds__(RES_THREADS) hr_residual_partials(hr_gargs<T> a, double *part)
{
    __shared__ double sr[RES_THREADS / 32], sb[RES_THREADS / 32];
    const size_t p = a.pitch;
    const int n = a.n;
    double r2 = 0.0, b2 = 0.0;
    for (int i = blockIdx.x + 1; i <= n; i += gridDim.x) {
        for (int j = threadIdx.x + 1; j <= n; j += blockDim.x) {
            const size_t k = (size_t)i * p + (size_t)j;
            const T *u = a.u;
            double f = a.hf ? (double)a.hf[k] : ((i == a.spike && j == a.spike) ? HR_SPIKE_H2F : 0.0);
            double b = f + (i == 1 ? (double)u[k - p] : 0.0) + (i == n ? (double)u[k + p] : 0.0) +
                       (j == 1 ? (double)u[k - 1] : 0.0) + (j == n ? (double)u[k + 1] : 0.0);
            double au = 4.0 * (double)u[k] - (double)u[k - p] - (double)u[k + p] - (double)u[k - 1] -
                        (double)u[k + 1];
            double r = f - au;
            r2 += r * r;
            b2 += b * b;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        r2 += __shfl_down_sync(0xffffffffu, r2, o);
        b2 += __shfl_down_sync(0xffffffffu, b2, o);
    }
    const int w = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        sr[w] = r2;
        sb[w] = b2;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double tr = 0.0, tb = 0.0;
        for (int q = 0; q < RES_THREADS / 32; q++) {
            tr += sr[q];
            tb += sb[q];
        }
        part[2 * blockIdx.x] = tr;
        part[2 * blockIdx.x + 1] = tb;
    }
}

__global__ void hr_residual_total(const double *part, int nparts, double *out)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    double tr = 0.0, tb = 0.0;
    for (int q = 0; q < nparts; q++) {
        tr += part[2 * q];
        tb += part[2 * q + 1];
    }
    out[0] = tr;
    out[1] = tb;
}

hr_status hr_gpu_residual_compute(hr_solver *s, hr_gpu *g, double *rel)
{
    if (g->dbl)
        hr_residual_partials<double><<<g->nparts, RES_THREADS, 0, g->stream>>>(hr_gpu_args<double>(g), g->d_part);
    else
        hr_residual_partials<float><<<g->nparts, RES_THREADS, 0, g->stream>>>(hr_gpu_args<float>(g), g->d_part);
    HR_CU(s, HR_LAUNCHED());
    double *tot = g->d_part + 2 * (size_t)g->nparts;
    hr_residual_total<<<1, 32, 0, g->stream>>>(g->d_part, g->nparts, tot);
    HR_CU(s, HR_LAUNCHED());
    HR_CU(s, cudaMemcpyAsync(g->h_res, tot, 2 * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    HR_CU(s, cudaStreamSynchronize(g->stream));
    const double rr = g->h_res[0], bb = g->h_res[1];
    *rel = bb == 0.0 ? sqrt(rr) : sqrt(rr / bb);
    return HR_OK;
}
