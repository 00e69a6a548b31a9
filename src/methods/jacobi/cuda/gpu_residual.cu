/*
 * The relative residual on the device, so residual checks do not copy the grid back.
 * Same formula, order and scaled norms as hri_cpu_residual_box (common/stencil.h,
 * cpu/stencil_box_impl.h), 2-D and 3-D, double accumulation: one pass sums the squares
 * and finds the largest |r| and |b|; only when a plain square would overflow or
 * underflow (a value outside [1e-150, 1e150]) a second pass sums (|r| / max)^2. The
 * sums are reduced in a fixed order (per-block partials, then one thread), so the
 * value is reproducible run to run.
 */
#include <math.h>

#include "reference/stencil_cpu.h"
#include "runtime/cuda/gpu_internal.cuh"
#include "runtime/cuda/norm_reduce.cuh"

#define RES_THREADS 256

template <typename T>
__global__ void __launch_bounds__(RES_THREADS)
    hr_residual_partials(hr_gargs<T> a, int dim, double rs, double bs, double *part)
{
    const size_t p = a.pitch, q = dim == 3 ? a.plane : 0;
    const int nx = a.nx, ny = a.ny, nz = a.nz;
    const double diag = dim == 3 ? 6.0 : 4.0;
    const long rows = (long)ny * (dim == 3 ? nz : 1);
    const T *u = a.u;
    double sr = 0.0, sb = 0.0, mr = 0.0, mb = 0.0;
    for (long row = blockIdx.x; row < rows; row += gridDim.x) {
        const int i = (int)(row % ny) + 1, k = dim == 3 ? (int)(row / ny) + 1 : 0;
        for (int j = threadIdx.x + 1; j <= nx; j += blockDim.x) {
            const size_t x = (size_t)k * q + (size_t)i * p + (size_t)j;
            const double f = a.hf ? (double)a.hf[x] : (HR_IS_SPIKE(a.sp, i, j, k) ? HR_SPIKE_H2F : 0.0);
            const double w = u[x - 1], e = u[x + 1], n = u[x - p], s = u[x + p];
            double nb = (j == 1 ? w : 0.0) + (j == nx ? e : 0.0) + (i == 1 ? n : 0.0) + (i == ny ? s : 0.0);
            double au = diag * (double)u[x] - n - s - w - e;
            if (dim == 3) {
                const double dn = u[x - q], up = u[x + q];
                nb += (k == 1 ? dn : 0.0) + (k == nz ? up : 0.0);
                au = au - dn - up;
            }
            const double r = f - au, b = f + nb;
            const double ar = fabs(r) / rs, ab = fabs(b) / bs;
            sr += ar * ar;
            sb += ab * ab;
            mr = hr_nan_max(mr, ar);
            mb = hr_nan_max(mb, ab);
        }
    }
    hr_norm_block_reduce<RES_THREADS>(sr, sb, mr, mb, part);
}

/* One pass with scales rs, bs: h_res = {sum (|r|/rs)^2, sum (|b|/bs)^2, max |r|/rs, max |b|/bs}. */
static hr_status residual_pass(hr_solver *s, hr_gpu *g, double rs, double bs)
{
    if (g->dbl)
        hr_residual_partials<double>
            <<<g->nparts, RES_THREADS, 0, g->stream>>>(hr_gpu_args<double>(g), g->dim, rs, bs, g->d_part);
    else
        hr_residual_partials<float>
            <<<g->nparts, RES_THREADS, 0, g->stream>>>(hr_gpu_args<float>(g), g->dim, rs, bs, g->d_part);
    HR_CU(s, HR_LAUNCHED());
    double *tot = g->d_part + 4 * (size_t)g->nparts;
    hr_norm_total<<<1, 32, 0, g->stream>>>(g->d_part, g->nparts, tot);
    HR_CU(s, HR_LAUNCHED());
    HR_CU(s, cudaMemcpyAsync(g->h_res, tot, 4 * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    HR_CU(s, cudaStreamSynchronize(g->stream));
    return HR_OK;
}

hr_status hri_gpu_residual_compute(hr_solver *s, hr_gpu *g, double *rel)
{
    HR_TRY(residual_pass(s, g, 1.0, 1.0));
    double r2 = g->h_res[0], b2 = g->h_res[1], rmax = g->h_res[2], bmax = g->h_res[3];
    hr_norm2 rn, bn;
    /* the decision of hri_cpu_residual_box, value for value */
    const int r_ok = isfinite(r2) && (rmax == 0.0 || rmax >= 1e-150),
              b_ok = isfinite(b2) && (bmax == 0.0 || bmax >= 1e-150);
    if (isnan(rmax) || isnan(bmax) || (r_ok && b_ok)) {
        rn.scale = bn.scale = 1.0;
        rn.ssq = isnan(rmax) ? NAN : r2;
        bn.ssq = isnan(bmax) ? NAN : b2;
    } else if (isinf(rmax) || isinf(bmax)) {
        rn.scale = bn.scale = 1.0;
        rn.ssq = isinf(rmax) ? INFINITY : r2;
        bn.ssq = isinf(bmax) ? INFINITY : b2;
    } else {
        const double rs = rmax > 0.0 ? hr_norm2_scale(rmax) : 1.0,
                     bs = bmax > 0.0 ? hr_norm2_scale(bmax) : 1.0;
        HR_TRY(residual_pass(s, g, rs, bs));
        r2 = g->h_res[0];
        b2 = g->h_res[1];
        rmax = g->h_res[2];
        bmax = g->h_res[3];
        rn.scale = rmax > 0.0 ? rs : 0.0;
        rn.ssq = r2;
        bn.scale = bmax > 0.0 ? bs : 0.0;
        bn.ssq = b2;
    }
    *rel = hr_norm2_relative(rn, bn);
    return HR_OK;
}
