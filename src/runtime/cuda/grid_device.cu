/*
 * The interior of a relaxation kernel's device grid from and to the caller's arrays in GPU
 * memory (grid_device.h): one thread per value, the arithmetic of the host's copies (the
 * build uses -fmad=false, and each value is at most two products), so a solve from device
 * arrays has the iterates of the same solve from host arrays.
 */
#include <cuda_runtime.h>
#include <stdio.h>

#include "runtime/cuda/grid_device.h"

/* Where interior value t (x fastest) lies in the grid, from point (0, 0, 0). */
struct dg_map {
    int nx, ny;
    size_t pitch, plane;
    long long count;
};

static __device__ __forceinline__ size_t dg_at(const dg_map &m, long long t)
{
    const long long line = t / m.nx;
    const int x = (int)(t - line * m.nx);
    const long long y = line % m.ny, z = line / m.ny;
    return (size_t)(z + (m.plane ? 1 : 0)) * m.plane + (size_t)(y + 1) * m.pitch + (size_t)x + 1;
}

#define DG_FOR_EACH(m, t)                                                                                    \
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < (m).count;                     \
         t += (long long)gridDim.x * blockDim.x)

template <typename G, typename S> static __global__ void k_grid_in(G *grid, const S *src, dg_map m, double pre, double mul)
{
    DG_FOR_EACH(m, t)
    {
        double v = (double)src[t];
        if (pre != 1.0) v = v * pre;
        if (mul != 1.0) v = mul * v;
        grid[dg_at(m, t)] = (G)v;
    }
}

template <typename G, typename O> static __global__ void k_grid_out(O *dst, const G *grid, dg_map m)
{
    DG_FOR_EACH(m, t)
    dst[t] = (O)grid[dg_at(m, t)];
}

/* 2-D grids have no plane padding: plane 0 marks them (z stays 0). */
static dg_map map_of(const hri_dev_grid *g)
{
    const int nz = g->dim == 3 ? g->nz : 1;
    dg_map m = {g->nx, g->ny, g->pitch, g->dim == 3 ? g->plane : 0, (long long)g->nx * g->ny * nz};
    return m;
}

static unsigned blocks_for(long long n)
{
    return (unsigned)((n + 255) / 256 < 8192 ? (n + 255) / 256 : 8192);
}

static hr_status finish(const hri_dev_grid *g, cudaError_t e, const char *what, char *why, size_t why_size)
{
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaStreamSynchronize((cudaStream_t)g->stream);
    if (e == cudaSuccess) return HR_OK;
    if (why && why_size) snprintf(why, why_size, "%s: %s", what, cudaGetErrorString(e));
    (void)cudaGetLastError();
    return HR_ERR_DEVICE;
}

extern "C" hr_status hri_dev_grid_in(const hri_dev_grid *g, void *dst, const void *src, int single, double pre,
                                     double mul, char *why, size_t why_size)
{
    const dg_map m = map_of(g);
    cudaError_t e = cudaSetDevice(g->device);
    if (e == cudaSuccess && m.count > 0) {
        const unsigned nb = blocks_for(m.count);
        cudaStream_t st = (cudaStream_t)g->stream;
        char *o = (char *)dst + g->offset * g->esize;
        if (g->esize == 8 && !single)
            k_grid_in<<<nb, 256, 0, st>>>((double *)o, (const double *)src, m, pre, mul);
        else if (g->esize == 8)
            k_grid_in<<<nb, 256, 0, st>>>((double *)o, (const float *)src, m, pre, mul);
        else if (!single)
            k_grid_in<<<nb, 256, 0, st>>>((float *)o, (const double *)src, m, pre, mul);
        else
            k_grid_in<<<nb, 256, 0, st>>>((float *)o, (const float *)src, m, pre, mul);
    }
    return finish(g, e, "array to device grid", why, why_size);
}

extern "C" hr_status hri_dev_grid_out(const hri_dev_grid *g, const void *src, void *dst, int single, char *why,
                                      size_t why_size)
{
    const dg_map m = map_of(g);
    cudaError_t e = cudaSetDevice(g->device);
    if (e == cudaSuccess && m.count > 0) {
        const unsigned nb = blocks_for(m.count);
        cudaStream_t st = (cudaStream_t)g->stream;
        const char *o = (const char *)src + g->offset * g->esize;
        if (g->esize == 8 && !single)
            k_grid_out<<<nb, 256, 0, st>>>((double *)dst, (const double *)o, m);
        else if (g->esize == 8)
            k_grid_out<<<nb, 256, 0, st>>>((float *)dst, (const double *)o, m);
        else if (!single)
            k_grid_out<<<nb, 256, 0, st>>>((double *)dst, (const float *)o, m);
        else
            k_grid_out<<<nb, 256, 0, st>>>((float *)dst, (const float *)o, m);
    }
    return finish(g, e, "device grid to array", why, why_size);
}

hr_status hri_dev_grid_io(const hri_dev_grid *g, hr_devio what, void *u, void *u2, void *ptr, int single, double pre,
                          double h2, char *why, size_t why_size)
{
    switch (what) {
    case HR_DEVIO_X: return hri_dev_grid_out(g, u, ptr, single, why, why_size);
    case HR_DEVIO_RHS: return hri_dev_grid_in(g, (void *)g->hf, ptr, single, pre, h2, why, why_size);
    case HR_DEVIO_X0: {
        const hr_status st = hri_dev_grid_in(g, u, ptr, single, 1.0, 1.0, why, why_size);
        return st != HR_OK || !u2 ? st : hri_dev_grid_in(g, u2, ptr, single, 1.0, 1.0, why, why_size);
    }
    }
    return HR_ERR_INVALID_ARG;
}
