/*
 * Multigrid on the GPU: the fp64 outer level (mixed precision's defect correction, CG and
 * its preconditioner hand-over) and the reductions. Reductions use a fixed grid of MGG_NB
 * blocks and a fixed tree, so norms and CG scalars are the same from run to run (their
 * order differs from the CPU's per-slice sums: values agree to rounding, not bitwise).
 */
#ifndef HR_MG_GPU_OUTER_CUH
#define HR_MG_GPU_OUTER_CUH

#include "methods/krylov/cg_rules.h"
#include "methods/mg/cuda/mg_gpu_ops.cuh"

#define MGG_NB 1024 /* blocks of every reduction kernel: partial sums per sum */
#define MGG_BT 256  /* threads per block of the reduction kernels */

enum { MGG_FIN_CHECK = 16 };

/* max that keeps a NaN (fmax would drop it) */
__device__ __forceinline__ double mgg_nan_max(double a, double b)
{
    return a != a || b != b ? NAN : (a > b ? a : b);
}

/* A fixed tree over the block: the block's sum (MAX: maximum) lands in out (thread 0). */
template <int NT, bool MAX = false>
__device__ __forceinline__ void mgg_block_reduce(double v, double *sh, double *out)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int w = NT / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            sh[threadIdx.x] = MAX ? mgg_nan_max(sh[threadIdx.x], sh[threadIdx.x + w])
                                  : sh[threadIdx.x] + sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = sh[0];
    __syncthreads();
}

/* The interior points of L. 2-D: the blocks take rows in turn, a block's threads the row's
 * points (no division per point: 2.7-3.6% faster multigrid solves at 4095^2 and 8191^2 on an
 * H200, the fp64 check being one pass a cycle). 3-D: a flat index over the points, x fastest,
 * a thread per point (rows of 511 points a block made 511^3 5% slower). In 3-D the inner loop
 * runs once (jn_ = j). */
#define MGG_POINT_LOOP(L, D)                                                                                 \
    const unsigned n_ = D == 2 ? (unsigned)(L).ny : (unsigned)(L).nx * (unsigned)(L).ny * (unsigned)(L).nz;   \
    const unsigned s_ = D == 2 ? gridDim.x : gridDim.x * blockDim.x;                                         \
    for (unsigned a_ = D == 2 ? blockIdx.x : blockIdx.x * blockDim.x + threadIdx.x; a_ < n_; a_ += s_)       \
        for (int j = D == 2 ? (int)threadIdx.x + 1 : (int)(a_ % (unsigned)(L).nx) + 1, jn_ = D == 2 ? (L).nx : j, \
                 i = D == 2 ? (int)a_ + 1 : (int)((a_ / (unsigned)(L).nx) % (unsigned)(L).ny) + 1,             \
                 k = D == 3 ? (int)(a_ / (unsigned)(L).nx / (unsigned)(L).ny) + 1 : 0;                         \
             j <= jn_; j += D == 2 ? (int)blockDim.x : jn_ + 1)

/* The check: residual and right-hand side norms of the solution u on level L, in the order
 * of the operator layer's residual (hri_cpu_residual_box, every face Dirichlet), as sums of
 * (|r| * irs)^2 and (|b| * ibs)^2 with the maxima of |r| * irs and |b| * ibs (irs, ibs:
 * reciprocals of powers of two; 1 in the plain pass). rdst (the defect correction): the
 * residual times ds (a power of two), rounded to TR, also goes to rdst and zdst = 0 (level
 * 0's right-hand side and iterate, layout R). part: MGG_NB partials of each of the four. */
template <typename T, int D, typename TR>
__global__ void __launch_bounds__(MGG_BT)
    mgg_check_kernel(mgg_lev L, const T *u, mgg_lev R, TR *rdst, TR *zdst, double ds, double irs, double ibs,
                     double *part)
{
    __shared__ double sh[MGG_BT];
    const T *hf = (const T *)L.hf;
    const size_t p = (size_t)L.pitch, q = (size_t)L.plane;
    const double diag = D == 3 ? 6.0 : 4.0;
    double sr = 0.0, sb = 0.0, mr = 0.0, mb = 0.0;
    MGG_POINT_LOOP(L, D)
    {
        const size_t x = MGG_AT(L, i, j, k);
        const double f = hf ? (double)hf[x] : (i == L.si && j == L.sj && k == L.sk ? HR_SPIKE_H2F : 0.0);
        const double w = u[x - 1], e = u[x + 1], n = u[x - p], s = u[x + p];
        double nb = (j == 1 ? w : 0.0) + (j == L.nx ? e : 0.0) + (i == 1 ? n : 0.0) + (i == L.ny ? s : 0.0);
        double au = diag * (double)u[x] - n - s - w - e;
        if (D == 3) {
            const double dn = u[x - q], up = u[x + q];
            nb += (k == 1 ? dn : 0.0) + (k == L.nz ? up : 0.0);
            au = au - dn - up;
        }
        const double r = f - au, b = f + nb;
        if (rdst) {
            const size_t xr = MGG_AT(R, i, j, k);
            rdst[xr] = (TR)(r * ds);
            if (zdst) zdst[xr] = (TR)0;
        }
        const double ar = fabs(r) * irs, ab = fabs(b) * ibs; /* x * 1.0 == x: the plain pass */
        sr += ar * ar;
        sb += ab * ab;
        mr = mgg_nan_max(mr, ar);
        mb = mgg_nan_max(mb, ab);
    }
    mgg_block_reduce<MGG_BT>(sr, sh, &part[blockIdx.x]);
    mgg_block_reduce<MGG_BT>(sb, sh, &part[MGG_NB + blockIdx.x]);
    mgg_block_reduce<MGG_BT, true>(mr, sh, &part[2 * MGG_NB + blockIdx.x]);
    mgg_block_reduce<MGG_BT, true>(mb, sh, &part[3 * MGG_NB + blockIdx.x]);
}

/* Sums the partials (one block of MGG_NB threads, a fixed tree) into the scalars. */
__global__ void __launch_bounds__(MGG_NB) hri_mgg_fin_kernel(const double *part, mgg_scalars *sc, int which)
{
    __shared__ double sh[MGG_NB];
    __shared__ double s0, s1, s2, s3;
    mgg_block_reduce<MGG_NB>(part[threadIdx.x], sh, &s0);
    if (which == MGG_FIN_CHECK) {
        mgg_block_reduce<MGG_NB>(part[MGG_NB + threadIdx.x], sh, &s1);
        mgg_block_reduce<MGG_NB, true>(part[2 * MGG_NB + threadIdx.x], sh, &s2);
        mgg_block_reduce<MGG_NB, true>(part[3 * MGG_NB + threadIdx.x], sh, &s3);
    }
    if (threadIdx.x != 0) return;
    const double S = s0;
    switch (which) {
    case MGG_FIN_CHECK: /* the norms are finished on the host (hri_mg_gpu_check) */
        sc->chk[0] = S;
        sc->chk[1] = s1;
        sc->chk[2] = s2;
        sc->chk[3] = s3;
        break;
    case MGG_FIN_PQ:
        sc->pq = S;
        sc->alpha = hri_cg_alpha(sc->rz, S);
        break;
    case MGG_FIN_RR: sc->rr = S; break;
    case MGG_FIN_RR_Z:
    case MGG_FIN_RZ1:
        if (which == MGG_FIN_RR_Z) sc->rr = S;
        sc->rz1 = S;
        sc->beta = hri_cg_beta(S, sc->rz);
        sc->rz = S;
        break;
    case MGG_FIN_START_RZ: sc->rz = S; break;
    case MGG_FIN_START_RR: sc->rr = S; break;
    case MGG_FIN_START_R:
        sc->rz = S;
        sc->rr = S;
        break;
    default: break;
    }
}

/* One outer-level operator K over every point of O (fp64); L0: level 0 of the hierarchy
 * (element type TH). Reducing operators write MGG_NB partials. */
template <int D, typename TH, int K>
__global__ void __launch_bounds__(MGG_BT)
    mgg_outer_kernel(mgg_op o, mgg_lev O, mgg_lev L0, const mgg_scalars *sc, double *part)
{
    __shared__ double sh[MGG_BT];
    double *u = (double *)O.u[0], *pv = (double *)O.u[1], *r = (double *)O.r, *q = (double *)O.d,
           *cp = (double *)O.cp;
    const double *z = o.a ? cp : r;
    double acc = 0.0;
    const double alpha = K == OPK_CG_UPDATE ? sc->alpha : 0.0, beta = K == OPK_CG_XPAY ? sc->beta : 0.0;
    MGG_POINT_LOOP(O, D)
    {
        const size_t x = MGG_AT(O, i, j, k);
        if (K == OPK_OUT_RESID) {
            r[x] = mgg_res<double, D>(O, u, x, i, j, k) * o.x;
        } else if (K == OPK_TO_L0) {
            const size_t x0 = MGG_AT(L0, i, j, k);
            ((TH *)L0.hf)[x0] = (TH)(r[x] * o.x);
            if (!o.b) ((TH *)MGG_BUF(L0, o.a))[x0] = (TH)0; /* b: the next sweep knows it is zero */
        } else if (K == OPK_FROM_L0) {
            const double c = (double)((const TH *)MGG_BUF(L0, o.a))[MGG_AT(L0, i, j, k)] * o.x;
            if (o.c)
                cp[x] = c;
            else
                u[x] = o.b ? u[x] + c : c;
        } else if (K == OPK_CG_APPLY_DOT) {
            q[x] = mgg_au<double, D>(O, pv, x);
            acc += pv[x] * q[x];
        } else if (K == OPK_CG_UPDATE) {
            u[x] += (alpha * pv[x]) * o.x;
            r[x] += (-alpha) * q[x];
            acc += r[x] * r[x];
        } else if (K == OPK_CG_DOT) {
            acc += r[x] * z[x];
        } else if (K == OPK_CG_XPAY) {
            pv[x] = z[x] + beta * pv[x];
        } else if (K == OPK_CG_COPY) {
            pv[x] = z[x];
        }
    }
    if (K == OPK_CG_APPLY_DOT || K == OPK_CG_UPDATE || K == OPK_CG_DOT)
        mgg_block_reduce<MGG_BT>(acc, sh, &part[blockIdx.x]);
}

/* Sets the ring of a grid (layout L, element T) to v. */
template <typename T> __global__ void mgg_ring_kernel(mgg_lev L, T *g, int dim, T v)
{
    const unsigned nx2 = L.nx + 2, ny2 = L.ny + 2, nz2 = dim == 3 ? L.nz + 2 : 1;
    const unsigned n = nx2 * ny2 * nz2;
    for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
        const int j = (int)(t % nx2), i = (int)(t / nx2 % ny2), k = (int)(t / nx2 / ny2);
        const int ring =
            j == 0 || j == L.nx + 1 || i == 0 || i == L.ny + 1 || (dim == 3 && (k == 0 || k == L.nz + 1));
        if (ring) g[MGG_AT(L, i, j, k)] = v;
    }
}

#endif
