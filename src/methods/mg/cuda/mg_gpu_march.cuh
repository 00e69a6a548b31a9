/*
 * The one-pass red-black sweep on big levels, marching along the slowest axis: a thread
 * owns a column pair (j, j + 1) and MGG_ZCHUNK planes (3-D) or rows (2-D). On every plane
 * (row) the pair holds one point of each colour, and the second-colour point's neighbours
 * along the march are the pair's own first-colour points on the planes (rows) before and
 * after, which the march computes anyway: per pair it recomputes three first-colour
 * neighbours instead of five in 3-D, one instead of three in 2-D (mgg_rb_pair). The same
 * values, computed with the same functions, as the two in-place half sweeps.
 */
#ifndef HR_MG_GPU_MARCH_CUH
#define HR_MG_GPU_MARCH_CUH

#include "methods/mg/cuda/mg_gpu_ops.cuh"

#define MGG_ZCHUNK       8
#define MGG_MARCH_POINTS 1000000L /* default: levels from 1023^2 / 127^3 up march, smaller per pair */

/* The first-colour value of the pair (j, j + 1) on plane k: interior planes computed, the
 * ring (plane 0 or nz + 1, or column nx + 1) read. */
template <typename T, bool Z>
__device__ __forceinline__ T mgg_rb3_first(const mgg_lev &L, const T *u, int c1, int i, int j, int k)
{
    const int jc = HR_RB_COLOUR(i, j, k) == c1 ? j : j + 1;
    return mgg_rb_first<T, 3, Z>(L, u, MGG_AT(L, i, jc, k), i, jc, k);
}

/* o as OPK_RB (OUT: OPK_RB_OUT, C the outer level); x: pairs, y: rows, z: plane chunks. */
template <typename T, bool Z, bool OUT>
__global__ void mgg_rb3_kernel(mgg_op o, mgg_lev L, mgg_lev C, int ex, int ey)
{
    const int ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix >= ex || iy >= ey) return;
    const int i = iy + 1, j = 2 * ix + 1, c1 = o.b;
    const int k0 = (int)blockIdx.z * MGG_ZCHUNK + 1, k1 = min(k0 + MGG_ZCHUNK - 1, L.nz);
    const bool has_b = j + 1 <= L.nx;
    const size_t p = (size_t)L.pitch;
    const T *u = (const T *)MGG_BUF(L, o.a);
    T *out = (T *)MGG_BUF(L, o.a ^ 1);
    T below = mgg_rb3_first<T, Z>(L, u, c1, i, j, k0 - 1), here = mgg_rb3_first<T, Z>(L, u, c1, i, j, k0);
    for (int k = k0; k <= k1; k++) {
        const T above = mgg_rb3_first<T, Z>(L, u, c1, i, j, k + 1);
        const bool a_first = HR_RB_COLOUR(i, j, k) == c1;
        const int j2 = a_first ? j + 1 : j; /* the second-colour column */
        T va, vb = (T)0;
        if (j2 <= L.nx) {
            const size_t x2 = MGG_AT(L, i, j2, k);
            const T n = mgg_rb_first<T, 3, Z>(L, u, x2 - p, i - 1, j2, k),
                    s = mgg_rb_first<T, 3, Z>(L, u, x2 + p, i + 1, j2, k);
            /* the pair's own first-colour point is the west (a first) or east neighbour */
            const T w = a_first ? here : mgg_rb_first<T, 3, Z>(L, u, x2 - 1, i, j2 - 1, k);
            const T e = a_first ? mgg_rb_first<T, 3, Z>(L, u, x2 + 1, i, j2 + 1, k) : here;
            const T v2 = mgg_jac_v<T, 3>(L, n, s, w, e, below, above, x2, i, j2, k);
            va = a_first ? here : v2;
            vb = a_first ? v2 : here;
        } else {
            va = here; /* the last pair (nx, ring): a is first-colour */
        }
        const size_t xa = MGG_AT(L, i, j, k);
        if (OUT) {
            double *dst = o.c ? (double *)C.cp : (double *)C.u[0];
            const size_t xo = MGG_AT(C, i, j, k);
            dst[xo] = o.y != 0.0 ? dst[xo] + (double)va * o.y : (double)va;
            if (has_b) dst[xo + 1] = o.y != 0.0 ? dst[xo + 1] + (double)vb * o.y : (double)vb;
        } else {
            out[xa] = va;
            if (has_b) out[xa + 1] = vb;
        }
        below = here;
        here = above;
    }
}

/* The first-colour value of the pair (j, j + 1) on row i (2-D). */
template <typename T, bool Z>
__device__ __forceinline__ T mgg_rb2_first(const mgg_lev &L, const T *u, int c1, int i, int j)
{
    const int jc = HR_RB_COLOUR(i, j, 0) == c1 ? j : j + 1;
    return mgg_rb_first<T, 2, Z>(L, u, MGG_AT(L, i, jc, 0), i, jc, 0);
}

/* 2-D: o as OPK_RB (OUT: OPK_RB_OUT); x: pairs, y: chunks of MGG_ZCHUNK rows. */
template <typename T, bool Z, bool OUT>
__global__ void mgg_rb2_kernel(mgg_op o, mgg_lev L, mgg_lev C, int ex, int chunks)
{
    const int ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix >= ex || iy >= chunks) return;
    const int j = 2 * ix + 1, c1 = o.b;
    const int i0 = iy * MGG_ZCHUNK + 1, i1 = min(i0 + MGG_ZCHUNK - 1, L.ny);
    const bool has_b = j + 1 <= L.nx;
    const T *u = (const T *)MGG_BUF(L, o.a);
    T *out = (T *)MGG_BUF(L, o.a ^ 1);
    T north = mgg_rb2_first<T, Z>(L, u, c1, i0 - 1, j), here = mgg_rb2_first<T, Z>(L, u, c1, i0, j);
    for (int i = i0; i <= i1; i++) {
        const T south = mgg_rb2_first<T, Z>(L, u, c1, i + 1, j);
        const bool a_first = HR_RB_COLOUR(i, j, 0) == c1;
        const int j2 = a_first ? j + 1 : j; /* the second-colour column */
        T va, vb = (T)0;
        if (j2 <= L.nx) {
            const size_t x2 = MGG_AT(L, i, j2, 0);
            const T w = a_first ? here : mgg_rb_first<T, 2, Z>(L, u, x2 - 1, i, j2 - 1, 0);
            const T e = a_first ? mgg_rb_first<T, 2, Z>(L, u, x2 + 1, i, j2 + 1, 0) : here;
            const T v2 = mgg_jac_v<T, 2>(L, north, south, w, e, (T)0, (T)0, x2, i, j2, 0);
            va = a_first ? here : v2;
            vb = a_first ? v2 : here;
        } else {
            va = here; /* the last pair (nx, ring): a is first-colour */
        }
        const size_t xa = MGG_AT(L, i, j, 0);
        if (OUT) {
            double *dst = o.c ? (double *)C.cp : (double *)C.u[0];
            const size_t xo = MGG_AT(C, i, j, 0);
            dst[xo] = o.y != 0.0 ? dst[xo] + (double)va * o.y : (double)va;
            if (has_b) dst[xo + 1] = o.y != 0.0 ? dst[xo + 1] + (double)vb * o.y : (double)vb;
        } else {
            out[xa] = va;
            if (has_b) out[xa + 1] = vb;
        }
        north = here;
        here = south;
    }
}

/* The coarse values a fine point (i, j, *) takes from coarse plane K, as mgg_prolong_load takes
 * them for either of its planes: s[b * 2 + t] for coarse row (i >> 1) + b and column
 * (j >> 1) + t, 0 where not taken (mgg_prolong_load's for fine plane 2 K, which takes plane K
 * alone). */
template <typename T>
__device__ __forceinline__ void mgg_prolong_slice(const mgg_lev &C, const T *c, int i, int j, int K, T *s)
{
    T cv[8];
    mgg_prolong_load<T, 3>(C, c, i, j, 2 * K, cv);
#pragma unroll
    for (int e = 0; e < 4; e++)
        s[e] = cv[e];
}

/* The prolongation (o as OPK_PROLONG, C the coarse level), 3-D, marching along z: a thread owns
 * the fine column (i, j) on MGG_ZCHUNK planes and keeps the coarse values of the two coarse
 * planes its fine planes take, loading one coarse plane's every second fine plane instead of up
 * to eight values a fine point. The same values and sums as mgg_prolong_at (mgg_prolong_v). */
template <typename T> __global__ void mgg_prolong3_kernel(mgg_op o, mgg_lev L, mgg_lev C, int ex, int ey)
{
    const int ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix >= ex || iy >= ey) return;
    const int i = iy + 1, j = ix + 1;
    const int k0 = (int)blockIdx.z * MGG_ZCHUNK + 1, k1 = min(k0 + MGG_ZCHUNK - 1, L.nz);
    const T *c = (const T *)MGG_BUF(C, o.b);
    T *f = (T *)MGG_BUF(L, o.a);
    int K = k0 >> 1; /* lo: coarse plane K, hi: K + 1 (the ring at most) */
    T lo[4], hi[4];
    mgg_prolong_slice<T>(C, c, i, j, K, lo);
    mgg_prolong_slice<T>(C, c, i, j, K + 1, hi);
    for (int k = k0; k <= k1; k++) {
        if ((k >> 1) != K) {
            K = k >> 1;
#pragma unroll
            for (int e = 0; e < 4; e++)
                lo[e] = hi[e];
            mgg_prolong_slice<T>(C, c, i, j, K + 1, hi);
        }
        T cv[8];
#pragma unroll
        for (int e = 0; e < 4; e++) { /* cv[(a * 2 + b) * 2 + t], e = b * 2 + t */
            cv[e] = lo[e];
            cv[4 + e] = (k & 1) ? hi[e] : (T)0;
        }
        const T val = mgg_prolong_v<T, 3>(cv, i, j, k);
        const size_t x = MGG_AT(L, i, j, k);
        f[x] = o.c ? f[x] + val : val;
    }
}

#endif
