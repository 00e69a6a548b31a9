/*
 * Multigrid on the GPU: the level operators as point functions, shared by the per-level
 * kernels (one thread per point) and the one-block kernel that runs the small levels.
 *
 * Every point function is the CPU operator of src/methods/mg/mg_ops_impl.h (smoothers, residual,
 * restriction, prolongation, coarse CG) or the operator layer's region sweep at one point:
 * the same stencil macros and the same order of operations, so with -fmad=false the
 * iterates are bitwise the CPU backend's.
 */
#ifndef HR_MG_GPU_OPS_CUH
#define HR_MG_GPU_OPS_CUH

#include <cuda_runtime.h>

#include "core/stencil.h"
#include "methods/mg/mg_gpu.h"

/* A level on the device (by value in kernel arguments; an array of them for the one-block
 * kernel). Pointers are element (0, 0, 0) of grids in this level's layout. */
struct mgg_lev {
    int nx, ny, nz; /* nz = 1 in 2-D */
    long long pitch, plane;
    void *u[2], *hf, *r, *d, *cp;
    int si, sj, sk; /* inline spike where hf is NULL (si < 0: none) */
    int slices;
};

enum {
    /* hierarchy operators (per-level kernels, or the one-block kernel on small levels) */
    OPK_JACOBI = 0, /* u[a] -> u[a ^ 1], weight x (1: plain) */
    OPK_RB,         /* u[a] -> u[a ^ 1]: a red-black sweep, colour b first (both colours, one pass);
                     * x != 0: u[a] is zero (not read) */
    OPK_CHEBY,      /* u[a] -> u[a ^ 1] and d: one Chebyshev step, coefficients x, y */
    OPK_RESTRICT,   /* level+1 hf = 4 FW(residual of u[a]), level+1 u[b] = 0 unless c (per coarse point) */
    OPK_ZERO,       /* u[a] = 0 */
    OPK_PROLONG,    /* u[a] (+)= P (level+1 u[b]); c: add */
    OPK_COARSE_CG,  /* CG on u[a] to rounding (one-block kernel only) */
    OPK_RB_HALF,    /* colour b of u[a], in place (two of them: a sweep in two passes) */
    OPK_RB_OUT,     /* OPK_RB on level 0 whose result goes to the outer level (C) as
                     * OPK_FROM_L0 would put it: c = 0: u (+)= (y != 0: add y times the
                     * value), c = 1: cp = */
    OPK_ASYNC,      /* u[a] in place: tiles relaxed by b local red-black sweeps, colour c first
                     * (the asynchronous smoother, mg_gpu_async.cuh; big levels only) */
    OPK_RBF,        /* u[a] -> u[a ^ 1]: one or two red-black sweeps in one pass (mg_gpu_fused.cuh),
                     * colour b first; x != 0: u[a] is zero; e: MGG_RBF_* (a second sweep and its
                     * first colour, a prolongation added on the way in, the result to the outer
                     * level as OPK_RB_OUT puts it: c, y as there) */
    OPK_HIER_END,
    /* the fp64 outer level (mixed precision, CG): always per-level kernels */
    /* x: a power of two that keeps the vectors in range (mg_range_scale; 1: none) */
    OPK_OUT_RESID = 16, /* r = x (h^2 f - h^2 A u) */
    OPK_TO_L0,          /* level 0 hf = x r (rounded), level 0 u[a] = 0 unless b */
    OPK_FROM_L0,        /* c = 0: u (+)= x level 0 u[a] (b: add); c = 1: cp = x level 0 u[a] */
    OPK_CG_APPLY_DOT,   /* d = h^2 A u[1] (q = A p), partials p . q */
    OPK_CG_UPDATE,      /* u += (alpha p) x, r -= alpha q, partials r . r */
    OPK_CG_DOT,         /* partials r . z (a = 1: z = cp; a = 0: z = r) */
    OPK_CG_XPAY,        /* p = z + beta p (a as OPK_CG_DOT) */
    OPK_CG_COPY,        /* p = z */
    OPK_CG_FIN,         /* sums the partials in a fixed order: a = which scalar (MGG_FIN_*) */
    /* --coarse-on cpu: level `lev` onward on the CPU: its hf to the host, one cycle of type a
     * (hr_mg_cycle; fmg: the FMG pass) there from zero, the iterate back into u[b] */
    OPK_HOST = 32
};

enum {
    MGG_FIN_PQ = 0,
    MGG_FIN_RR,
    MGG_FIN_RR_Z,
    MGG_FIN_RZ1,
    MGG_FIN_START_RZ,
    MGG_FIN_START_RR,
    MGG_FIN_START_R
};

struct mgg_op {
    int kind, lev, a, b, c, e;
    double x, y;
};

/* OPK_RBF's flags (mgg_op.e) */
enum {
    MGG_RBF_TWO = 1,  /* two sweeps */
    MGG_RBF_C2 = 2,   /* the second sweep starts with colour 1 (else 0) */
    MGG_RBF_PRO = 4,  /* u[a] (+)= P (level+1 u[MGG_RBF_CBUF ? 1 : 0]) first, as OPK_PROLONG */
    MGG_RBF_ADD = 8,  /* the prolongation adds */
    MGG_RBF_CBUF = 16,
    MGG_RBF_OUT = 32 /* the last sweep's values to the outer level (OPK_RB_OUT) */
};

/* CG scalars and the last check, on the device (the host reads them after a check): chk
 * holds the check's sum of (|r| / rs)^2, of (|b| / bs)^2, max |r| / rs and max |b| / bs. */
struct mgg_scalars {
    double rz, rr, pq, alpha, beta, rz1;
    double chk[4];
};

/* Buffer a (0 or 1) of a level: a select, not an index (kernel parameters stay in the
 * constant bank instead of being copied to local memory). */
#define MGG_BUF(L, a)         ((a) ? (L).u[1] : (L).u[0])
#define MGG_AT(L, i, j, k)    ((size_t)(k) * (size_t)(L).plane + (size_t)(i) * (size_t)(L).pitch + (size_t)(j))
#define MGG_SPIKE(L, i, j, k) (!(L).hf && (i) == (L).si && (j) == (L).sj && (k) == (L).sk)

/* The Jacobi value at point (i, j, k) from its neighbours' values and f, the point's h^2 f
 * where the level has an h^2 f grid: the *F form with f there, with 1 at the inline spike,
 * else (a zero right-hand side) the plain form, as the region sweep and hri_mg_redblack write
 * it (dn, up: 3-D only). */
template <typename T, int D>
__device__ __forceinline__ T mgg_jac_f(const mgg_lev &L, T n, T s, T w, T e, T dn, T up, T f, int i, int j,
                                       int k)
{
    if (D == 3) {
        if (L.hf) return HR_JACOBI7F(T, w, e, n, s, dn, up, f);
        if (MGG_SPIKE(L, i, j, k)) return HR_JACOBI7F(T, w, e, n, s, dn, up, (T)HR_SPIKE_H2F);
        return HR_JACOBI7(T, w, e, n, s, dn, up);
    }
    if (L.hf) return HR_JACOBI5F(T, n, s, w, e, f);
    if (MGG_SPIKE(L, i, j, k)) return HR_JACOBI5F(T, n, s, w, e, (T)HR_SPIKE_H2F);
    return HR_JACOBI5(T, n, s, w, e);
}

/* The same at point x of the level, h^2 f read from its grid. */
template <typename T, int D>
__device__ __forceinline__ T mgg_jac_v(const mgg_lev &L, T n, T s, T w, T e, T dn, T up, size_t x, int i,
                                       int j, int k)
{
    const T *hf = (const T *)L.hf;
    return mgg_jac_f<T, D>(L, n, s, w, e, dn, up, hf ? hf[x] : (T)0, i, j, k);
}

/* The Jacobi value at x from grid u. */
template <typename T, int D>
__device__ __forceinline__ T mgg_jac(const mgg_lev &L, const T *u, size_t x, int i, int j, int k)
{
    const size_t p = (size_t)L.pitch, q = (size_t)L.plane;
    return mgg_jac_v<T, D>(L, u[x - p], u[x + p], u[x - 1], u[x + 1], D == 3 ? u[x - q] : (T)0,
                           D == 3 ? u[x + q] : (T)0, x, i, j, k);
}

/* The Jacobi value at x; Z: the iterate is zero (not read; the ring is zero too). */
template <typename T, int D, bool Z>
__device__ __forceinline__ T mgg_jac_z(const mgg_lev &L, const T *u, size_t x, int i, int j, int k)
{
    if (Z) return mgg_jac_v<T, D>(L, (T)0, (T)0, (T)0, (T)0, (T)0, (T)0, x, i, j, k);
    return mgg_jac<T, D>(L, u, x, i, j, k);
}

/* A point after the first colour's half sweep: updated when interior, else the ring value. */
template <typename T, int D, bool Z>
__device__ __forceinline__ T mgg_rb_first(const mgg_lev &L, const T *u, size_t x, int i, int j, int k)
{
    const bool inside = i >= 1 && i <= L.ny && j >= 1 && j <= L.nx && (D == 2 || (k >= 1 && k <= L.nz));
    return inside ? mgg_jac_z<T, D, Z>(L, u, x, i, j, k) : u[x];
}

/* One-pass red-black at the column pair (j, j + 1), j odd, colour c1 first: the new values
 * va at (i, j, k) and vb at (i, j + 1, k) (has_b: j + 1 is interior). The second colour takes
 * the pair's own first-colour value and recomputes its other first-colour neighbours from
 * the old values: the same arithmetic as two in-place half sweeps. Z: the old iterate is
 * zero and is not read (the first sweep after a coarse-grid or defect right-hand side). */
template <typename T, int D, bool Z>
__device__ __forceinline__ void mgg_rb_pair(const mgg_lev &L, const T *u, int c1, int i, int j, int k,
                                            bool has_b, T *va, T *vb)
{
    const size_t xa = MGG_AT(L, i, j, k), p = (size_t)L.pitch, q = (size_t)L.plane;
    if (HR_RB_COLOUR(i, j, k) == c1) {
        *va = mgg_jac_z<T, D, Z>(L, u, xa, i, j, k); /* first colour at a = (i, j, k) */
        if (has_b) {                                 /* second colour at b = (i, j + 1, k) */
            const size_t xb = xa + 1;
            const T n = mgg_rb_first<T, D, Z>(L, u, xb - p, i - 1, j + 1, k),
                    s = mgg_rb_first<T, D, Z>(L, u, xb + p, i + 1, j + 1, k);
            const T e = mgg_rb_first<T, D, Z>(L, u, xb + 1, i, j + 2, k);
            const T dn = D == 3 ? mgg_rb_first<T, D, Z>(L, u, xb - q, i, j + 1, k - 1) : (T)0;
            const T up = D == 3 ? mgg_rb_first<T, D, Z>(L, u, xb + q, i, j + 1, k + 1) : (T)0;
            *vb = mgg_jac_v<T, D>(L, n, s, *va, e, dn, up, xb, i, j + 1, k);
        }
    } else {
        if (has_b) *vb = mgg_jac_z<T, D, Z>(L, u, xa + 1, i, j + 1, k); /* first colour at b */
        const T n = mgg_rb_first<T, D, Z>(L, u, xa - p, i - 1, j, k),
                s = mgg_rb_first<T, D, Z>(L, u, xa + p, i + 1, j, k);
        const T w = mgg_rb_first<T, D, Z>(L, u, xa - 1, i, j - 1, k), e = has_b ? *vb : u[xa + 1];
        const T dn = D == 3 ? mgg_rb_first<T, D, Z>(L, u, xa - q, i, j, k - 1) : (T)0;
        const T up = D == 3 ? mgg_rb_first<T, D, Z>(L, u, xa + q, i, j, k + 1) : (T)0;
        *va = mgg_jac_v<T, D>(L, n, s, w, e, dn, up, xa, i, j, k);
    }
}

/* h^2 A u at x (hri_mg_apply's order). */
template <typename T, int D> __device__ __forceinline__ T mgg_au(const mgg_lev &L, const T *c, size_t x)
{
    const size_t p = (size_t)L.pitch, q = (size_t)L.plane;
    if (D == 3)
        return (T)6 * c[x] - (((c[x - 1] + c[x + 1]) + (c[x - p] + c[x + p])) + (c[x - q] + c[x + q]));
    return (T)4 * c[x] - ((c[x - p] + c[x + p]) + (c[x - 1] + c[x + 1]));
}

/* The residual h^2 f - h^2 A u at x (hri_mg_resid's order, the spike added afterwards). */
template <typename T, int D>
__device__ __forceinline__ T mgg_res(const mgg_lev &L, const T *u, size_t x, int i, int j, int k)
{
    const T *hf = (const T *)L.hf;
    if (hf) return hf[x] - mgg_au<T, D>(L, u, x);
    T r = -mgg_au<T, D>(L, u, x);
    if (i == L.si && j == L.sj && k == L.sk) r += (T)HR_SPIKE_H2F;
    return r;
}

/* The residual at x from values already loaded (mgg_res's arithmetic; dn, up: 3-D only). */
template <typename T, int D>
__device__ __forceinline__ T mgg_res_v(const mgg_lev &L, T c, T n, T s, T w, T e, T dn, T up, size_t x, int i,
                                       int j, int k)
{
    const T *hf = (const T *)L.hf;
    const T au = D == 3 ? (T)6 * c - (((w + e) + (n + s)) + (dn + up)) : (T)4 * c - ((n + s) + (w + e));
    if (hf) return hf[x] - au;
    T r = -au;
    if (i == L.si && j == L.sj && k == L.sk) r += (T)HR_SPIKE_H2F;
    return r;
}

/* Coarse h^2 f at (I, J, K): 4 x full weighting of the fine residual, the fine residuals
 * recomputed from u (never stored). Each needed u value is loaded once into registers: the
 * 5 x 5 cross around the 3 x 3 fine block (2-D); in 3-D plane by plane, keeping the 3 x 3
 * centres of the planes below and above. Same sums in the same order as mg restrict. */
template <typename T, int D>
__device__ __forceinline__ T mgg_restrict_at(const mgg_lev &L, const T *u, int I, int J, int K)
{
    const int i0 = 2 * I - 2, j0 = 2 * J - 2; /* fine corner of the 5 x 5 window */
    T acc = (T)0;
    if (D == 2) {
        T v[5][5];
#pragma unroll
        for (int a = 0; a < 5; a++)
#pragma unroll
            for (int b = 0; b < 5; b++)
                v[a][b] = ((a == 0 || a == 4) && (b == 0 || b == 4)) ? (T)0 : u[MGG_AT(L, i0 + a, j0 + b, 0)];
#pragma unroll
        for (int di = 0; di < 3; di++) {
            const int a = di + 1;
            T r[3];
#pragma unroll
            for (int t = 0; t < 3; t++) {
                const int b = t + 1;
                r[t] = mgg_res_v<T, D>(L, v[a][b], v[a - 1][b], v[a + 1][b], v[a][b - 1], v[a][b + 1], (T)0,
                                       (T)0, MGG_AT(L, i0 + a, j0 + b, 0), i0 + a, j0 + b, 0);
            }
            const T w = (T)(di == 1 ? 2 : 1);
            acc += w * ((r[0] + r[2]) + (T)2 * r[1]);
        }
        return (T)0.25 * acc;
    }
    T cm[3][3], cc[3][3], cp[3][3];
    const int k0 = 2 * K - 2;
#pragma unroll
    for (int a = 0; a < 3; a++)
#pragma unroll
        for (int b = 0; b < 3; b++) {
            cm[a][b] = u[MGG_AT(L, i0 + 1 + a, j0 + 1 + b, k0)];
            cc[a][b] = u[MGG_AT(L, i0 + 1 + a, j0 + 1 + b, k0 + 1)];
        }
#pragma unroll 1
    for (int dk = 0; dk < 3; dk++) {
        const int kf = k0 + 1 + dk;
        T an[3], as[3], aw[3], ae[3]; /* the arms of plane kf around the 3 x 3 centre */
#pragma unroll
        for (int t = 0; t < 3; t++) {
            cp[0][t] = u[MGG_AT(L, i0 + 1, j0 + 1 + t, kf + 1)];
            cp[1][t] = u[MGG_AT(L, i0 + 2, j0 + 1 + t, kf + 1)];
            cp[2][t] = u[MGG_AT(L, i0 + 3, j0 + 1 + t, kf + 1)];
            an[t] = u[MGG_AT(L, i0, j0 + 1 + t, kf)];
            as[t] = u[MGG_AT(L, i0 + 4, j0 + 1 + t, kf)];
            aw[t] = u[MGG_AT(L, i0 + 1 + t, j0, kf)];
            ae[t] = u[MGG_AT(L, i0 + 1 + t, j0 + 4, kf)];
        }
#pragma unroll
        for (int di = 0; di < 3; di++) {
            T r[3];
#pragma unroll
            for (int t = 0; t < 3; t++) {
                const T n = di == 0 ? an[t] : cc[di - 1][t], s = di == 2 ? as[t] : cc[di + 1][t];
                const T w = t == 0 ? aw[di] : cc[di][t - 1], e = t == 2 ? ae[di] : cc[di][t + 1];
                r[t] = mgg_res_v<T, D>(L, cc[di][t], n, s, w, e, cm[di][t], cp[di][t],
                                       MGG_AT(L, i0 + 1 + di, j0 + 1 + t, kf), i0 + 1 + di, j0 + 1 + t, kf);
            }
            const T w = (T)((di == 1 ? 2 : 1) * (dk == 1 ? 2 : 1));
            acc += w * ((r[0] + r[2]) + (T)2 * r[1]);
        }
#pragma unroll
        for (int a = 0; a < 3; a++)
#pragma unroll
            for (int b = 0; b < 3; b++) {
                cm[a][b] = cc[a][b];
                cc[a][b] = cp[a][b];
            }
    }
    return (T)(1.0 / 16.0) * acc;
}

/* The prolongation at fine point (i, j, k) from coarse grid c of level C (mg prolong's sums in
 * its order), in two steps so that a kernel can load early and add late: the coarse values
 * it takes, cv[(a * 2 + b) * 2 + t] for coarse plane (k >> 1) + a, row (i >> 1) + b and column
 * (j >> 1) + t (0 where not taken), then their weighted sum. */
template <typename T, int D>
__device__ __forceinline__ void mgg_prolong_load(const mgg_lev &C, const T *c, int i, int j, int k, T *cv)
{
    const int nk = D == 3 && (k & 1) ? 2 : 1, ni = (i & 1) ? 2 : 1, J0 = j >> 1;
#pragma unroll
    for (int t = 0; t < 2; t++) {
        const int J = J0 + t;
        const bool none = J == 0 || (t == 1 && !(j & 1)); /* column 0: the CPU loop's literal zero */
#pragma unroll
        for (int a = 0; a < 2; a++)
#pragma unroll
            for (int b = 0; b < 2; b++)
                cv[(a * 2 + b) * 2 + t] = !none && a < nk && b < ni
                                              ? c[MGG_AT(C, (i >> 1) + b, J, D == 3 ? (k >> 1) + a : 0)]
                                              : (T)0;
    }
}

template <typename T, int D> __device__ __forceinline__ T mgg_prolong_v(const T *cv, int i, int j, int k)
{
    const int nk = D == 3 && (k & 1) ? 2 : 1, ni = (i & 1) ? 2 : 1, J0 = j >> 1;
    const T wt = (T)(1.0 / (double)(nk * ni));
    T s[2];
#pragma unroll
    for (int t = 0; t < 2; t++) {
        const int J = J0 + t;
        T acc = (T)0;
        if (!(J == 0 || (t == 1 && !(j & 1))))
#pragma unroll
            for (int a = 0; a < 2; a++)
#pragma unroll
                for (int b = 0; b < 2; b++)
                    if (a < nk && b < ni) acc += wt * cv[(a * 2 + b) * 2 + t];
        s[t] = acc;
    }
    return (j & 1) ? (T)0.5 * (s[0] + s[1]) : s[0];
}

template <typename T, int D>
__device__ __forceinline__ T mgg_prolong_at(const mgg_lev &C, const T *c, int i, int j, int k)
{
    T cv[8];
    mgg_prolong_load<T, D>(C, c, i, j, k, cv);
    return mgg_prolong_v<T, D>(cv, i, j, k);
}

/* Iteration space of a hierarchy operator: (ex, ey, ez) from 0-based (ix, iy, iz). */
__host__ __device__ inline void mgg_extent(const mgg_op &o, const mgg_lev &L, const mgg_lev &C, int *ex,
                                           int *ey, int *ez)
{
    if (o.kind == OPK_RESTRICT) {
        *ex = C.nx, *ey = C.ny, *ez = C.nz;
    } else if (o.kind == OPK_RB_HALF || o.kind == OPK_RB || o.kind == OPK_RB_OUT) {
        *ex = (L.nx + 1) / 2, *ey = L.ny, *ez = L.nz;
    } else {
        *ex = L.nx, *ey = L.ny, *ez = L.nz;
    }
}

/* One point of hierarchy operator K (D: 2 or 3; k = 0 in 2-D). */
template <typename T, int D, int K>
__device__ __forceinline__ void mgg_point(const mgg_op &o, const mgg_lev &L, const mgg_lev &C, int ix, int iy,
                                          int iz)
{
    const int i = iy + 1, k = D == 3 ? iz + 1 : 0;
    if (K == OPK_JACOBI) {
        const int j = ix + 1;
        const size_t x = MGG_AT(L, i, j, k);
        const T *in = (const T *)MGG_BUF(L, o.a);
        T *out = (T *)MGG_BUF(L, o.a ^ 1);
        const T jac = mgg_jac<T, D>(L, in, x, i, j, k);
        if (o.x != 1.0) {
            const T c0 = (T)(1.0 - o.x), c1 = (T)o.x;
            out[x] = HR_WEIGHTED(in[x], jac, c0, c1);
        } else {
            out[x] = jac;
        }
    } else if (K == OPK_RB || K == OPK_RB_OUT) {
        /* red-black in one pass, into the other buffer (x != 0: from a zero iterate), one
         * thread per pair of columns: one point of each colour, the same colours along the
         * whole warp (no divergence) */
        const int j = 2 * ix + 1;
        const bool has_b = j + 1 <= L.nx; /* nx is odd: the last pair is (nx, ring) */
        const size_t xa = MGG_AT(L, i, j, k);
        const T *u = (const T *)MGG_BUF(L, o.a);
        T *out = (T *)MGG_BUF(L, o.a ^ 1);
        T va, vb = (T)0;
        if (o.x != 0.0)
            mgg_rb_pair<T, D, true>(L, u, o.b, i, j, k, has_b, &va, &vb);
        else
            mgg_rb_pair<T, D, false>(L, u, o.b, i, j, k, has_b, &va, &vb);
        if (K == OPK_RB_OUT) { /* the last sweep of a cycle, straight into the fp64 outer level */
            double *dst = o.c ? (double *)C.cp : (double *)C.u[0];
            const size_t xo = MGG_AT(C, i, j, k);
            dst[xo] = o.y != 0.0 ? dst[xo] + (double)va * o.y : (double)va;
            if (has_b) dst[xo + 1] = o.y != 0.0 ? dst[xo + 1] + (double)vb * o.y : (double)vb;
        } else {
            out[xa] = va;
            if (has_b) out[xa + 1] = vb;
        }
    } else if (K == OPK_RB_HALF) {
        /* the colour's columns have j % 2 == par (hri_mg_redblack); reads only the other colour */
        const int par = (o.b - i - k) & 1, j = (par ? 1 : 2) + 2 * ix;
        if (j > L.nx) return;
        T *u = (T *)MGG_BUF(L, o.a);
        const size_t x = MGG_AT(L, i, j, k);
        u[x] = mgg_jac<T, D>(L, u, x, i, j, k);
    } else if (K == OPK_CHEBY) {
        /* jx = J(x) (the plain sweep), d = a d + b (jx - x), x + d into the other buffer */
        const int j = ix + 1;
        const size_t x = MGG_AT(L, i, j, k);
        const T *xin = (const T *)MGG_BUF(L, o.a);
        T *xout = (T *)MGG_BUF(L, o.a ^ 1), *d = (T *)L.d;
        const T jx = mgg_jac<T, D>(L, xin, x, i, j, k), xv = xin[x];
        const T ta = (T)o.x, tb = (T)o.y;
        const T dv = o.x == 0.0 ? tb * (jx - xv) : ta * d[x] + tb * (jx - xv);
        d[x] = dv;
        xout[x] = xv + dv;
    } else if (K == OPK_RESTRICT) {
        /* coarse point (I, J, K): 4 x full weighting of the fine residual (mg restrict) */
        const int I = i, J = ix + 1, KK = k;
        const T acc = mgg_restrict_at<T, D>(L, (const T *)MGG_BUF(L, o.a), I, J, KK);
        const size_t xc = MGG_AT(C, I, J, KK);
        ((T *)C.hf)[xc] = acc;
        if (!o.c) ((T *)MGG_BUF(C, o.b))[xc] = (T)0; /* c: the next sweep knows it is zero */
    } else if (K == OPK_ZERO) {
        ((T *)MGG_BUF(L, o.a))[MGG_AT(L, i, ix + 1, k)] = (T)0;
    } else if (K == OPK_PROLONG) {
        const int j = ix + 1;
        const T val = mgg_prolong_at<T, D>(C, (const T *)MGG_BUF(C, o.b), i, j, k);
        T *f = (T *)MGG_BUF(L, o.a);
        const size_t x = MGG_AT(L, i, j, k);
        f[x] = o.c ? f[x] + val : val;
    }
}

/* Runtime dispatch over the hierarchy operators (the one-block kernel). */
template <typename T, int D>
__device__ __forceinline__ void mgg_point_any(const mgg_op &o, const mgg_lev &L, const mgg_lev &C, int ix,
                                              int iy, int iz)
{
    switch (o.kind) {
    case OPK_JACOBI: mgg_point<T, D, OPK_JACOBI>(o, L, C, ix, iy, iz); break;
    case OPK_RB: mgg_point<T, D, OPK_RB>(o, L, C, ix, iy, iz); break;
    case OPK_RB_HALF: mgg_point<T, D, OPK_RB_HALF>(o, L, C, ix, iy, iz); break;
    case OPK_CHEBY: mgg_point<T, D, OPK_CHEBY>(o, L, C, ix, iy, iz); break;
    case OPK_RESTRICT: mgg_point<T, D, OPK_RESTRICT>(o, L, C, ix, iy, iz); break;
    case OPK_ZERO: mgg_point<T, D, OPK_ZERO>(o, L, C, ix, iy, iz); break;
    case OPK_PROLONG: mgg_point<T, D, OPK_PROLONG>(o, L, C, ix, iy, iz); break;
    default: break;
    }
}

/* A level operator over the whole level: one thread per point of its iteration space. */
template <typename T, int D, int K>
__global__ void mgg_level_kernel(mgg_op o, mgg_lev L, mgg_lev C, int ex, int ey)
{
    const int ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix < ex && iy < ey) mgg_point<T, D, K>(o, L, C, ix, iy, (int)blockIdx.z);
}

/* The restriction on fp32 levels of 3-D, held to 64 registers: four blocks of 256 threads an SM
 * instead of three (72 registers as mgg_level_kernel). */
template <typename T, int D>
__global__ void __launch_bounds__(256, 4)
    mgg_restrict_held_kernel(mgg_op o, mgg_lev L, mgg_lev C, int ex, int ey)
{
    const int ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix < ex && iy < ey) mgg_point<T, D, OPK_RESTRICT>(o, L, C, ix, iy, (int)blockIdx.z);
}

#define MGG_SMALL_THREADS 512

/* x . y over one level in the CPU's order (per slice, rows and columns in order, in double;
 * the slices summed in order), inside one block. part: slices + 1 doubles. */
template <typename T, int D>
__device__ double mgg_block_dot(const mgg_lev &L, const T *x, const T *y, double *part, double *shared_sum)
{
    for (int s = 1 + (int)threadIdx.x; s <= L.slices; s += blockDim.x) {
        double acc = 0.0;
        const int i0 = D == 3 ? 1 : s, i1 = D == 3 ? L.ny : s, k = D == 3 ? s : 0;
        for (int i = i0; i <= i1; i++)
            for (int j = 1; j <= L.nx; j++) {
                const size_t at = MGG_AT(L, i, j, k);
                acc += (double)x[at] * (double)y[at];
            }
        part[s] = acc;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double sum = 0.0;
        for (int s = 1; s <= L.slices; s++)
            sum += part[s];
        *shared_sum = sum;
    }
    __syncthreads();
    const double v = *shared_sum;
    __syncthreads();
    return v;
}

/* max |x| over one level inside one block (exact: any order agrees with the CPU's). */
template <typename T, int D>
__device__ double mgg_block_absmax(const mgg_lev &L, const T *x, double *part, double *shared_max)
{
    for (int s = 1 + (int)threadIdx.x; s <= L.slices; s += blockDim.x) {
        double m = 0.0;
        const int i0 = D == 3 ? 1 : s, i1 = D == 3 ? L.ny : s, k = D == 3 ? s : 0;
        for (int i = i0; i <= i1; i++)
            for (int j = 1; j <= L.nx; j++) {
                const double a = fabs((double)x[MGG_AT(L, i, j, k)]);
                if (!(a <= m)) m = a;
            }
        part[s] = m;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double m = 0.0;
        for (int s = 1; s <= L.slices; s++)
            if (!(part[s] <= m)) m = part[s];
        *shared_max = m;
    }
    __syncthreads();
    const double v = *shared_max;
    __syncthreads();
    return v;
}

/* Every interior point of L: body(x, i, j, k), strided over the block. */
#define MGG_BLOCK_POINTS(L, D, ...)                                                                          \
    do {                                                                                                     \
        const unsigned n_ = (unsigned)(L).nx * (unsigned)(L).ny * (unsigned)(L).nz;                          \
        for (unsigned t_ = threadIdx.x; t_ < n_; t_ += blockDim.x) {                                         \
            const int j = (int)(t_ % (unsigned)(L).nx) + 1;                                                  \
            const unsigned q_ = t_ / (unsigned)(L).nx;                                                       \
            const int i = (int)(q_ % (unsigned)(L).ny) + 1,                                                  \
                      k = D == 3 ? (int)(q_ / (unsigned)(L).ny) + 1 : 0;                                     \
            const size_t x = MGG_AT(L, i, j, k);                                                             \
            (void)i, (void)j, (void)k;                                                                       \
            __VA_ARGS__;                                                                                     \
        }                                                                                                    \
        __syncthreads();                                                                                     \
    } while (0)

/* The coarsest level's CG (coarse_solve in mg_cycle.c), in one block. */
template <typename T, int D> __device__ void mgg_coarse_cg(const mgg_lev &L, int a, double *part, double *sh)
{
    T *xv = (T *)MGG_BUF(L, a), *p = (T *)L.cp, *q = (T *)L.d, *r = (T *)L.r;
    MGG_BLOCK_POINTS(L, D, r[x] = mgg_res<T, D>(L, xv, x, i, j, k));
    /* fp64: r and p scaled into range, x's update divides the scale out (coarse_solve) */
    const double sc = sizeof(T) == 8 ? mg_range_scale(mgg_block_absmax<T, D>(L, r, part, sh)) : 1.0;
    if (sc != 1.0) MGG_BLOCK_POINTS(L, D, r[x] = (T)((double)r[x] * sc));
    const double isc = 1.0 / sc;
    MGG_BLOCK_POINTS(L, D, p[x] = r[x]);
    double rr = mgg_block_dot<T, D>(L, r, r, part, sh);
    const double stop = rr * (sizeof(T) == 8 ? 1e-28 : 1e-12);
    const long maxit = 4 * (long)L.nx * L.ny * L.nz + 50;
    for (long it = 0; it < maxit && rr > stop; it++) {
        MGG_BLOCK_POINTS(L, D, q[x] = mgg_au<T, D>(L, p, x));
        const double pq = mgg_block_dot<T, D>(L, p, q, part, sh);
        if (!(pq > 0.0)) break;
        const double alpha = rr / pq;
        const T ta = (T)alpha, tna = (T)(-alpha);
        if (sc == 1.0)
            MGG_BLOCK_POINTS(L, D, (xv[x] += ta * p[x], r[x] += tna * q[x]));
        else
            MGG_BLOCK_POINTS(L, D, (xv[x] += (T)((double)(ta * p[x]) * isc), r[x] += tna * q[x]));
        const double rr1 = mgg_block_dot<T, D>(L, r, r, part, sh);
        const T tb = (T)(rr1 / rr);
        MGG_BLOCK_POINTS(L, D, p[x] = r[x] + tb * p[x]);
        rr = rr1;
    }
}

/* The small levels: a run of hierarchy operators in one block, a barrier between them. */
template <typename T, int D>
__global__ void __launch_bounds__(MGG_SMALL_THREADS)
    mgg_small_kernel(const mgg_lev *levs, const mgg_op *ops, int nops, double *part)
{
    __shared__ double sh;
    for (int n = 0; n < nops; n++) {
        const mgg_op o = ops[n];
        const mgg_lev L = levs[o.lev];
        if (o.kind == OPK_COARSE_CG) {
            mgg_coarse_cg<T, D>(L, o.a, part, &sh);
            __syncthreads();
            continue;
        }
        const mgg_lev C = o.kind == OPK_RESTRICT || o.kind == OPK_PROLONG ? levs[o.lev + 1] : L;
        int ex, ey, ez;
        mgg_extent(o, L, C, &ex, &ey, &ez);
        const unsigned total = (unsigned)ex * (unsigned)ey * (unsigned)ez;
        for (unsigned t = threadIdx.x; t < total; t += blockDim.x) {
            const int ix = (int)(t % (unsigned)ex);
            const unsigned rest = t / (unsigned)ex;
            mgg_point_any<T, D>(o, L, C, ix, (int)(rest % (unsigned)ey), (int)(rest / (unsigned)ey));
        }
        __syncthreads();
    }
}

#endif
