/*
 * The red-black point update and the one-thread-per-point kernel on the device, shared by
 * the one-GPU (redblack_gpu.cu) and two-GPU (redblack_gpu2.cu) files.
 */
#ifndef HR_REDBLACK_POINT_CUH
#define HR_REDBLACK_POINT_CUH

#include <cuda_runtime.h>

#include "core/stencil.h"

/* The grid geometry a kernel needs. */
struct rb_geo {
    size_t p, q;
    int dim, nx, ny, nz;
    int si, sj, sk; /* spike (si < 0: none, or hf present) */
    int weighted;
};

template <typename T, bool LDG> __device__ __forceinline__ T rb_ld(const T *a)
{
    if (LDG) return __ldg(a);
    return *a;
}

/* The new value of point x (row i, column j, plane k): neighbours through LDG loads when asked;
 * the centre always by a plain load (it is written by this launch). */
template <typename T, bool LDG>
__device__ __forceinline__ T rb_point(const T *u, const T *hf, const rb_geo &g, size_t x, int i, int j, int k,
                                      T c0, T c1)
{
    const size_t p = g.p, q = g.q;
    const bool spike = !hf && i == g.si && j == g.sj && k == g.sk;
    T jac;
    if (g.dim == 3) {
        const T w = rb_ld<T, LDG>(u + x - 1), e = rb_ld<T, LDG>(u + x + 1), n = rb_ld<T, LDG>(u + x - p),
                s = rb_ld<T, LDG>(u + x + p), d = rb_ld<T, LDG>(u + x - q), up = rb_ld<T, LDG>(u + x + q);
        if (hf)
            jac = HR_JACOBI7F(T, w, e, n, s, d, up, hf[x]);
        else if (spike)
            jac = HR_JACOBI7F(T, w, e, n, s, d, up, (T)HR_SPIKE_H2F);
        else
            jac = HR_JACOBI7(T, w, e, n, s, d, up);
    } else {
        const T n = rb_ld<T, LDG>(u + x - p), s = rb_ld<T, LDG>(u + x + p), w = rb_ld<T, LDG>(u + x - 1),
                e = rb_ld<T, LDG>(u + x + 1);
        if (hf)
            jac = HR_JACOBI5F(T, n, s, w, e, hf[x]);
        else if (spike)
            jac = HR_JACOBI5F(T, n, s, w, e, (T)HR_SPIKE_H2F);
        else
            jac = HR_JACOBI5(T, n, s, w, e);
    }
    return HR_RB_UPDATE(u[x], jac, c0, c1, g.weighted);
}

/* First column of `colour` in row i, plane k (k = 0 in 2-D): (i + j + k) & 1 == colour. */
__device__ __forceinline__ int rb_first(int i, int k, int colour)
{
    return 1 + ((1 + i + k + colour) & 1);
}

/* v1 / ldg: one thread per point of the colour; blocks bx x by, grid z = planes in 3-D. */
template <typename T, bool LDG> __global__ void rb_v1(T *u, const T *hf, rb_geo g, int colour, T c0, T c1)
{
    const int i = blockIdx.y * blockDim.y + threadIdx.y + 1;
    const int k = g.dim == 3 ? (int)blockIdx.z + 1 : 0;
    const int j = rb_first(i, k, colour) + 2 * (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i > g.ny || j > g.nx) return;
    const size_t x = (size_t)k * g.q + (size_t)i * g.p + (size_t)j;
    u[x] = rb_point<T, LDG>(u, hf, g, x, i, j, k, c0, c1);
}

#endif
