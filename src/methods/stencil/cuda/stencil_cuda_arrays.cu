/*
 * The general engine's arrays from and to the caller's device memory (hr_grid_solver_solve_device):
 * the right-hand side formed from f, the singular projection, the initial guess and the
 * solution, each computed as the host computes it (src/core/discretize.c, stencil_engine.c) so
 * that a solve from device arrays has the iterates of the same solve from host arrays.
 */
#include <stdio.h>

#include "methods/stencil/cuda/stencil_cuda_internal.cuh"

/* The unknowns of g as (line, x): line = y + ny z. */
struct st_box {
    int nx, ny;
    long long lines;
    ptrdiff_t origin, sy, sz;
};

static st_box box_of(const hr_sgrid *g)
{
    st_box b = {g->n[0], g->n[1], (long long)g->n[1] * g->n[2], g->origin, g->st[1], g->st[2]};
    return b;
}

static __device__ __forceinline__ ptrdiff_t box_at(const st_box &b, long long line, int x)
{
    return b.origin + x + (line % b.ny) * b.sy + (line / b.ny) * b.sz;
}

/* The cell volume over h^dim of unknown (x, line): 0.5 per Neumann face it lies on. */
static __device__ __forceinline__ double box_vol(const st_box &b, const hr_st_vol &v, long long line, int x)
{
    const int idx[3] = {x, (int)(line % b.ny), (int)(line / b.ny)};
    double w = 1.0;
    for (int a = 0; a < 3; a++)
        if ((idx[a] == 0 && v.half_lo[a]) || (idx[a] == v.n[a] - 1 && v.half_hi[a])) w *= 0.5;
    return w;
}

static unsigned blocks_for(long long n)
{
    return (unsigned)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
}

#define ST_FOR_EACH(total, t)                                                                                \
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < (total);                     \
         t += (long long)gridDim.x * blockDim.x)

template <typename S> static __global__ void k_dense_in(double *dst, const S *src, st_box b)
{
    ST_FOR_EACH(b.lines * b.nx, t)
    dst[box_at(b, t / b.nx, (int)(t % b.nx))] = (double)src[t];
}

template <typename O> static __global__ void k_dense_out(O *dst, const double *src, st_box b)
{
    ST_FOR_EACH(b.lines * b.nx, t)
    dst[t] = (O)src[box_at(b, t / b.nx, (int)(t % b.nx))];
}

/* b = b0 + vol f, point by point (the host's bp + vol * f with bp from b0) */
template <typename S> static __global__ void k_rhs(double *bv, const double *b0, const S *f, st_box b, hr_st_vol v)
{
    ST_FOR_EACH(b.lines * b.nx, t)
    {
        const long long line = t / b.nx;
        const int x = (int)(t % b.nx);
        const ptrdiff_t p = box_at(b, line, x);
        bv[p] = b0[p] + box_vol(b, v, line, x) * (double)f[t];
    }
}

/* The same, a thread per line, with the line's sums of b and of vol in x order (the host's) */
template <typename S>
static __global__ void k_rhs_lines(double *bv, const double *b0, const S *f, st_box b, hr_st_vol v, double *lb,
                            double *lv)
{
    ST_FOR_EACH(b.lines, line)
    {
        double sb = 0.0, sv = 0.0;
        for (int x = 0; x < b.nx; x++) {
            const ptrdiff_t p = box_at(b, line, x);
            const double w = box_vol(b, v, line, x);
            bv[p] = b0[p] + w * (double)f[line * b.nx + x];
            sb += bv[p];
            sv += w;
        }
        lb[line] = sb;
        lv[line] = sv;
    }
}

/* b -= c vol, with the line's sums of b^2 (before) and (c vol)^2 (hri_discretize_project) */
static __global__ void k_project(double *bv, double c, st_box b, hr_st_vol v, double *nb, double *nd)
{
    ST_FOR_EACH(b.lines, line)
    {
        double sb = 0.0, sd = 0.0;
        for (int x = 0; x < b.nx; x++) {
            const ptrdiff_t p = box_at(b, line, x);
            const double d = c * box_vol(b, v, line, x);
            sb += bv[p] * bv[p];
            sd += d * d;
            bv[p] -= d;
        }
        nb[line] = sb;
        nd[line] = sd;
    }
}

/* Two per-line arrays of the device into the host's. */
static void lines_home(st_cuda *d, const double *dev, long long lines, double *h0, double *h1)
{
    ST_CU(d, cudaMemcpyAsync(h0, dev, (size_t)lines * sizeof *h0, cudaMemcpyDeviceToHost, d->st));
    ST_CU(d, cudaMemcpyAsync(h1, dev + lines, (size_t)lines * sizeof *h1, cudaMemcpyDeviceToHost, d->st));
    ST_CU(d, cudaStreamSynchronize(d->st));
}

/* Scratch for two per-line arrays (NULL: no memory, recorded). */
static double *line_scratch(st_cuda *d, long long lines)
{
    double *p = NULL;
    ST_CU(d, cudaMalloc((void **)&p, 2 * (size_t)lines * sizeof *p));
    return d->err == cudaSuccess ? p : NULL;
}

void hri_st_cu_dense_in(hr_st_exec *ex, const hr_sgrid *g, double *dst, const void *src, int single)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    const st_box b = box_of(g);
    ST_CU(d, cudaMemsetAsync(dst, 0, g->padded * sizeof *dst, d->st));
    if (single)
        k_dense_in<float><<<blocks_for(b.lines * b.nx), 256, 0, d->st>>>(dst, (const float *)src, b);
    else
        k_dense_in<double><<<blocks_for(b.lines * b.nx), 256, 0, d->st>>>(dst, (const double *)src, b);
    ST_LAUNCHED(d);
}

hr_status hri_st_cu_dense_out(hr_st_exec *ex, const hr_sgrid *g, void *dst, const double *src, int single,
                              char *why, size_t why_size)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    const st_box b = box_of(g);
    if (single)
        k_dense_out<float><<<blocks_for(b.lines * b.nx), 256, 0, d->st>>>((float *)dst, src, b);
    else
        k_dense_out<double><<<blocks_for(b.lines * b.nx), 256, 0, d->st>>>((double *)dst, src, b);
    ST_LAUNCHED(d);
    ST_CU(d, cudaStreamSynchronize(d->st));
    if (d->err == cudaSuccess) return HR_OK;
    snprintf(why, why_size, "%s", d->msg);
    return d->err == cudaErrorMemoryAllocation ? HR_ERR_NO_MEMORY : HR_ERR_DEVICE;
}

void hri_st_cu_rhs_in(hr_st_exec *ex, const hr_sgrid *g, const hr_st_vol *v, double *bv, const double *b0,
                      const void *f, int single, double *line_b, double *line_v)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    const st_box b = box_of(g);
    if (!line_b) {
        if (single)
            k_rhs<float><<<blocks_for(b.lines * b.nx), 256, 0, d->st>>>(bv, b0, (const float *)f, b, *v);
        else
            k_rhs<double><<<blocks_for(b.lines * b.nx), 256, 0, d->st>>>(bv, b0, (const double *)f, b, *v);
        ST_LAUNCHED(d);
        return;
    }
    double *s = line_scratch(d, b.lines);
    if (!s) return;
    if (single)
        k_rhs_lines<float>
            <<<blocks_for(b.lines), 256, 0, d->st>>>(bv, b0, (const float *)f, b, *v, s, s + b.lines);
    else
        k_rhs_lines<double>
            <<<blocks_for(b.lines), 256, 0, d->st>>>(bv, b0, (const double *)f, b, *v, s, s + b.lines);
    ST_LAUNCHED(d);
    lines_home(d, s, b.lines, line_b, line_v);
    cudaFree(s);
}

void hri_st_cu_project(hr_st_exec *ex, const hr_sgrid *g, const hr_st_vol *v, double *bv, double c,
                       double *line_nb, double *line_nd)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    const st_box b = box_of(g);
    double *s = line_scratch(d, b.lines);
    if (!s) return;
    k_project<<<blocks_for(b.lines), 256, 0, d->st>>>(bv, c, b, *v, s, s + b.lines);
    ST_LAUNCHED(d);
    lines_home(d, s, b.lines, line_nb, line_nd);
    cudaFree(s);
}
