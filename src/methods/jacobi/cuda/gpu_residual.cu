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
#include <stdio.h>

#include "reference/stencil_cpu.h"
#include "runtime/cuda/gpu_internal.cuh"
#include "runtime/cuda/grid_device.h"
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

/* What one residual reads (points (0, 0, 0) of u and h^2 f) and where it reduces. */
struct res_job {
    const void *u, *hf;
    size_t pitch, plane;
    int dim, nx, ny, nz, dbl;
    hr_rhs_view sp;
    cudaStream_t st;
    double *d_part, *h_res; /* 4 (nparts + 1) partials on the device; 4 totals where the host reads */
    int nparts;
};

template <typename T> static hr_gargs<T> job_args(const res_job &j)
{
    hr_gargs<T> a = {};
    a.u = (const T *)j.u;
    a.hf = (const T *)j.hf;
    a.pitch = j.pitch;
    a.plane = j.plane;
    a.n = a.nx = j.nx;
    a.ny = j.ny;
    a.nz = j.nz;
    a.sp = j.sp;
    return a;
}

/* One pass with scales rs, bs: h_res = {sum (|r|/rs)^2, sum (|b|/bs)^2, max |r|/rs, max |b|/bs}. */
static cudaError_t residual_pass(const res_job &j, double rs, double bs)
{
    if (j.dbl)
        hr_residual_partials<double><<<j.nparts, RES_THREADS, 0, j.st>>>(job_args<double>(j), j.dim, rs, bs, j.d_part);
    else
        hr_residual_partials<float><<<j.nparts, RES_THREADS, 0, j.st>>>(job_args<float>(j), j.dim, rs, bs, j.d_part);
    cudaError_t e = HR_LAUNCHED();
    double *tot = j.d_part + 4 * (size_t)j.nparts;
    if (e == cudaSuccess) {
        hr_norm_total<<<1, 32, 0, j.st>>>(j.d_part, j.nparts, tot);
        e = HR_LAUNCHED();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(j.h_res, tot, 4 * sizeof(double), cudaMemcpyDeviceToHost, j.st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(j.st);
    return e;
}

static cudaError_t residual_of(const res_job &j, double *rel)
{
    cudaError_t e = residual_pass(j, 1.0, 1.0);
    if (e != cudaSuccess) return e;
    double r2 = j.h_res[0], b2 = j.h_res[1], rmax = j.h_res[2], bmax = j.h_res[3];
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
        if ((e = residual_pass(j, rs, bs)) != cudaSuccess) return e;
        r2 = j.h_res[0];
        b2 = j.h_res[1];
        rmax = j.h_res[2];
        bmax = j.h_res[3];
        rn.scale = rmax > 0.0 ? rs : 0.0;
        rn.ssq = r2;
        bn.scale = bmax > 0.0 ? bs : 0.0;
        bn.ssq = b2;
    }
    *rel = hr_norm2_relative(rn, bn);
    return cudaSuccess;
}

int hri_gpu_residual_parts(int ny, int nz)
{
    const long rows = (long)ny * nz;
    return rows < 1024 ? (int)rows : 1024;
}

hr_status hri_gpu_residual_compute(hr_solver *s, hr_gpu *g, double *rel)
{
    res_job j = {(const char *)g->d_u[g->dcur] + g->offset * g->esize,
                 g->d_hf ? (const char *)g->d_hf + g->offset * g->esize : NULL,
                 g->pitch,
                 g->plane,
                 g->dim,
                 g->nx,
                 g->ny,
                 g->nz,
                 g->dbl,
                 g->spike,
                 g->stream,
                 g->d_part,
                 g->h_res,
                 g->nparts};
    HR_CU(s, residual_of(j, rel));
    return HR_OK;
}

/* For kernels that keep no reduction buffers of their own (the red-black kernels): the
 * partials in stream-ordered memory, the totals in pageable memory (read after a sync). */
extern "C" hr_status hri_dev_grid_residual(const hri_dev_grid *g, const void *u, double *rel, char *why,
                                          size_t why_size)
{
    double h_res[4];
    res_job j = {(const char *)u + g->offset * g->esize,
                 g->hf ? (const char *)g->hf + g->offset * g->esize : NULL,
                 g->pitch,
                 g->plane,
                 g->dim,
                 g->nx,
                 g->ny,
                 g->dim == 3 ? g->nz : 1,
                 g->esize == 8,
                 {NULL, g->hf ? -1 : g->spike_i, g->spike_j, g->spike_k},
                 (cudaStream_t)g->stream,
                 NULL,
                 h_res,
                 hri_gpu_residual_parts(g->ny, g->dim == 3 ? g->nz : 1)};
    cudaError_t e = cudaSetDevice(g->device);
    if (e == cudaSuccess)
        e = cudaMallocAsync((void **)&j.d_part, 4 * sizeof(double) * ((size_t)j.nparts + 1), j.st);
    if (e == cudaSuccess) {
        e = residual_of(j, rel);
        const cudaError_t fe = cudaFreeAsync(j.d_part, j.st);
        if (e == cudaSuccess) e = fe;
    }
    if (e == cudaSuccess) return HR_OK;
    if (why && why_size) snprintf(why, why_size, "device residual: %s", cudaGetErrorString(e));
    (void)cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? HR_ERR_NO_MEMORY : HR_ERR_DEVICE;
}
