/*
 * The sweeps of the general-problem engine's CUDA backend: Jacobi and Chebyshev steps, the
 * residual and the product (with their reductions), and Gauss-Seidel on one colour.
 *
 * The finest level's star stencils have their own kernels: a thread marches h rows (2-D) or
 * planes (3-D), keeping u and the coupling of the marching axis at the previous and the
 * current line in registers, so u, b, diag and each coupling array are read once from memory
 * (the x and, in 3-D, y neighbours come from the cache lines the neighbouring threads load).
 * The box stencils of multigrid's coarse levels take the table's offsets, unrolled.
 * (A u)_p and the diagonal are the CPU backend's (cpu/stencil_cpu.c, au_k), term for term: the
 * star stencils in flux form (exc_p u_p + sum c (u_q - u_p), the diagonal exc - sum c), or
 * with the scalars of a uniform star stencil; the box stencils from their arrays.
 * Gauss-Seidel runs one colour (class) a launch, or, on the star stencils, one parity a launch
 * (hri_st_cu_parity): the classes of one parity do not couple, so the two passes make the
 * classes' updates, bit for bit, in a quarter (2-D) or an eighth (3-D) of the launches and of the
 * ranks' halo exchanges.
 */
#include <math.h>
#include <string.h>

#include "methods/stencil/cuda/stencil_cuda.h"
#include "methods/stencil/cuda/stencil_cuda_internal.cuh"
#include "runtime/cuda/march_rows.h"

typedef struct st_args {
    const double *u, *b, *prev;
    double *out; /* jacobi, cheby: the new iterate; residual: r (NULL: the norm only); product: q */
    double *seg;
    const double *d, *e; /* the diagonal; the star stencils' exc */
    int uni;             /* a uniform star stencil: the scalars below */
    double ud, uc0, uc1, uc2;
    const double *c[HR_ST_MAX_HALF];
    ptrdiff_t doff[HR_ST_MAX_HALF];
    double al, be;
    /* the box stencils of a whole grid: the box [blo, bhi) of rows that are all one row
     * (hr_sop.rlo; empty: blo[0] = bhi[0] = 0) and that row's diagonal and couplings out and in,
     * read there instead of the arrays (they hold the same values, bitwise) */
    int blo[3], bhi[3];
    double rd, rc[HR_ST_MAX_HALF], rcm[HR_ST_MAX_HALF];
    double rexc; /* a star stencil's exc there (its couplings: rc) */
} st_args;

/* Whether whole-grid point (i, j, k) lies in the box of equal rows. */
__device__ __forceinline__ bool st_in_box(const st_args &a, int i, int j, int k)
{
    return i >= a.blo[0] && i < a.bhi[0] && j >= a.blo[1] && j < a.bhi[1] && k >= a.blo[2] && k < a.bhi[2];
}

/* Read-only loads through the non-coherent cache where the kernel never writes the array. */
template <bool NC> __device__ __forceinline__ double st_ld(const double *p)
{
    return NC ? __ldg(p) : *p;
}

/* (A u)_p of a 2-D star stencil from the point's value uc and its neighbours (x-, x+, y-, y+),
 * and the diagonal in dg: with a uniform star's scalars, or in flux form from the couplings
 * (x+, x-, y+, y-) and exc, as the CPU's. */
template <bool UNI>
__device__ __forceinline__ double st_star2_au(const st_args &a, double uc, double ul, double ur, double ud, double uu,
                                              double cxp, double cxm, double cyp, double cym, double ec, double &dg)
{
    if (UNI) {
        dg = a.ud;
        return a.ud * uc + a.uc0 * (ur + ul) + a.uc1 * (uu + ud);
    }
    const double s = cxp * (ur - uc) + cxm * (ul - uc) + cyp * (uu - uc) + cym * (ud - uc);
    dg = ec - (cxp + cxm + cyp + cym);
    return ec * uc + s;
}

/* (A u)_p of a 3-D star stencil from the point's value and its neighbours (x-, x+, y-, y+, z-,
 * z+), and the diagonal in dg, as the CPU's: the couplings read at p (k_star3, which carries
 * the z couplings from plane to plane, writes the same terms with its own). */
template <bool UNI>
__device__ __forceinline__ double st_star3_au(const st_args &a, double uc, double xm, double xp, double ym, double yp,
                                              double zm, double zp, ptrdiff_t p, ptrdiff_t sy, ptrdiff_t sz,
                                              double &dg)
{
    if (UNI) {
        double s = a.ud * uc + a.uc0 * (xp + xm) + a.uc1 * (yp + ym);
        s += a.uc2 * (zp + zm);
        dg = a.ud;
        return s;
    }
    const double cxp = __ldg(a.c[0] + p), cxm = __ldg(a.c[0] + p - 1), cyp = __ldg(a.c[1] + p),
                 cym = __ldg(a.c[1] + p - sy);
    double s = cxp * (xp - uc) + cxm * (xm - uc) + cyp * (yp - uc) + cym * (ym - uc);
    double cs = cxp + cxm + cyp + cym;
    const double czp = __ldg(a.c[2] + p), czm = __ldg(a.c[2] + p - sz);
    s += czp * (zp - uc) + czm * (zm - uc);
    cs += czp + czm;
    const double ec = __ldg(a.e + p);
    dg = ec - cs;
    return ec * uc + s;
}

/* (A u)_p of the stencil kinds (2 and 3 the star stencils, 4 and 13 the box stencils) and the
 * diagonal in dg; a box stencil's row from the scalars of the box of equal rows where `in`. */
template <int KIND, bool NC>
__device__ __forceinline__ double st_au(const st_args &a, const double *u, ptrdiff_t p, double &dg, bool in = false)
{
    const double up = st_ld<NC>(u + p);
    if (KIND == 2 || KIND == 3) {
        const ptrdiff_t sy = a.doff[1];
        const double xm = st_ld<NC>(u + p - 1), xp = st_ld<NC>(u + p + 1), ym = st_ld<NC>(u + p - sy),
                     yp = st_ld<NC>(u + p + sy);
        if (KIND == 2) {
            if (a.uni) return st_star2_au<true>(a, up, xm, xp, ym, yp, 0.0, 0.0, 0.0, 0.0, 0.0, dg);
            return st_star2_au<false>(a, up, xm, xp, ym, yp, __ldg(a.c[0] + p), __ldg(a.c[0] + p - 1),
                                      __ldg(a.c[1] + p), __ldg(a.c[1] + p - sy), __ldg(a.e + p), dg);
        }
        const ptrdiff_t sz = a.doff[2];
        const double zm = st_ld<NC>(u + p - sz), zp = st_ld<NC>(u + p + sz);
        return a.uni ? st_star3_au<true>(a, up, xm, xp, ym, yp, zm, zp, p, sy, sz, dg)
                     : st_star3_au<false>(a, up, xm, xp, ym, yp, zm, zp, p, sy, sz, dg);
    }
    if (in) { /* the same terms, the values the arrays hold there */
        double s = a.rd * up;
#pragma unroll
        for (int k = 0; k < KIND; k++) {
            const ptrdiff_t o = a.doff[k];
            s += a.rc[k] * st_ld<NC>(u + p + o) + a.rcm[k] * st_ld<NC>(u + p - o);
        }
        dg = a.rd;
        return s;
    }
    double s = __ldg(a.d + p) * up;
#pragma unroll
    for (int k = 0; k < KIND; k++) {
        const ptrdiff_t o = a.doff[k];
        s += __ldg(a.c[k] + p) * st_ld<NC>(u + p + o) + __ldg(a.c[k] + p - o) * st_ld<NC>(u + p - o);
    }
    dg = __ldg(a.d + p);
    return s;
}

/* b_p where OP reads it (the product does not; its b may be NULL) */
template <int OP> __device__ __forceinline__ double st_b(const st_args &a, ptrdiff_t p)
{
    return OP == ST_OP_APPLY ? 0.0 : __ldg(a.b + p);
}

/* A point's result from (A u)_p and b_p (bp): writes it and returns its share of the reduction. */
template <int OP>
__device__ __forceinline__ double st_finish(const st_args &a, ptrdiff_t p, double uc, double au, double dp, double bp)
{
    if (OP == ST_OP_JAC) {
        a.out[p] = uc + a.al * (bp - au) / dp;
        return 0.0;
    }
    if (OP == ST_OP_CHEB) {
        a.out[p] = uc + a.al * (bp - au) / dp + a.be * (uc - a.prev[p]);
        return 0.0;
    }
    if (OP == ST_OP_RES) {
        const double r = bp - au;
        if (a.out) a.out[p] = r;
        return r * r;
    }
    a.out[p] = au;
    return au * uc;
}

#define ST_REDUCES(OP) ((OP) == ST_OP_RES || (OP) == ST_OP_APPLY)

/* A 2-D star's array at p, the point (i, j) of a whole grid: inside the box of equal rows the
 * value every row there holds (v: rc[0] for cx, rc[1] for cy, rexc for exc), read from memory
 * outside it (the same bits either way). */
__device__ __forceinline__ double st_star_at(const st_args &a, const double *arr, ptrdiff_t p, double v, int i, int j)
{
    return st_in_box(a, i, j, 0) ? v : __ldg(arr + p);
}

/* The 2-D star stencil, marching along y. */
template <int OP> static __global__ void __launch_bounds__(1024) k_star2(st_geo g, st_args a)
{
    const st_walk w = st_walk_of<false>(g);
    if (w.cnt <= 0) return;
    const bool act = w.i < g.nx;
    if (!act && (!ST_REDUCES(OP) || (w.i & ~31) >= g.nx)) return;
    const double *__restrict__ u = a.u;
    const double *__restrict__ cx = a.c[0];
    const double *__restrict__ cy = a.c[1];
    const ptrdiff_t sy = g.sy;
    ptrdiff_t p = w.p;
    double um = 0.0, uc = 0.0, cym = 0.0, un = 0.0, bn = 0.0;
    if (act) {
        um = __ldg(u + p - sy);
        uc = __ldg(u + p);
        /* a uniform stencil has no arrays on the device; in the box of equal rows the arrays hold
         * its scalars */
        cym = a.uni ? 0.0 : st_star_at(a, cy, p - sy, a.rc[1], w.i, (int)w.line - 1);
        un = __ldg(u + p + sy);
        bn = st_b<OP>(a, p);
    }
    long line = w.line;
#pragma unroll 1
    for (int t = 0; t < w.cnt; t++, p += sy, line++) {
        double v = 0.0;
        /* the next line's u and b are loaded a step ahead (their latency behind this step) */
        const double up = un, bp = bn;
        if (act && t + 1 < w.cnt) un = __ldg(u + p + 2 * sy), bn = st_b<OP>(a, p + sy);
        if (act) {
            const int j = (int)line;
            const double cyc = a.uni ? 0.0 : st_star_at(a, cy, p, a.rc[1], w.i, j);
            const double ul = __ldg(u + p - 1), ur = __ldg(u + p + 1);
            double au, dp;
            if (a.uni)
                au = st_star2_au<true>(a, uc, ul, ur, um, up, 0.0, 0.0, 0.0, 0.0, 0.0, dp);
            else
                au = st_star2_au<false>(a, uc, ul, ur, um, up, st_star_at(a, cx, p, a.rc[0], w.i, j),
                                        st_star_at(a, cx, p - 1, a.rc[0], w.i - 1, j), cyc, cym,
                                        st_star_at(a, a.e, p, a.rexc, w.i, j), dp);
            v = st_finish<OP>(a, p, uc, au, dp, bp);
            um = uc, uc = up, cym = cyc;
        }
        if (ST_REDUCES(OP)) st_seg_put(a.seg, g, line, w.i, v);
    }
}

/* The 3-D star stencil, marching along z. */
template <int OP> static __global__ void __launch_bounds__(1024) k_star3(st_geo g, st_args a)
{
    const st_walk w = st_walk_of<true>(g);
    if (w.cnt <= 0) return;
    const bool act = w.i < g.nx;
    if (!act && (!ST_REDUCES(OP) || (w.i & ~31) >= g.nx)) return;
    const double *__restrict__ u = a.u;
    const double *__restrict__ cx = a.c[0];
    const double *__restrict__ cy = a.c[1];
    const double *__restrict__ cz = a.c[2];
    const ptrdiff_t sy = g.sy, sz = g.sz;
    ptrdiff_t p = w.p;
    double um = 0.0, uc = 0.0, czm = 0.0, un = 0.0, bn = 0.0;
    if (act) {
        um = __ldg(u + p - sz);
        uc = __ldg(u + p);
        czm = a.uni ? 0.0 : __ldg(cz + p - sz);
        un = __ldg(u + p + sz);
        bn = st_b<OP>(a, p);
    }
    long line = w.line;
#pragma unroll 1
    for (int t = 0; t < w.cnt; t++, p += sz, line += w.lstep) {
        double v = 0.0;
        const double up = un, bp = bn; /* loaded a step ahead, as in k_star2 */
        if (act && t + 1 < w.cnt) un = __ldg(u + p + 2 * sz), bn = st_b<OP>(a, p + sz);
        if (act) {
            const double czc = a.uni ? 0.0 : __ldg(cz + p);
            double au, dp;
            if (a.uni) {
                au = a.ud * uc + a.uc0 * (__ldg(u + p + 1) + __ldg(u + p - 1)) +
                     a.uc1 * (__ldg(u + p + sy) + __ldg(u + p - sy));
                au += a.uc2 * (up + um);
                dp = a.ud;
            } else { /* flux form, as the CPU's */
                const double cxp = __ldg(cx + p), cxm = __ldg(cx + p - 1), cyp = __ldg(cy + p),
                             cym = __ldg(cy + p - sy), ec = __ldg(a.e + p);
                double s = cxp * (__ldg(u + p + 1) - uc) + cxm * (__ldg(u + p - 1) - uc) +
                           cyp * (__ldg(u + p + sy) - uc) + cym * (__ldg(u + p - sy) - uc);
                s += czc * (up - uc) + czm * (um - uc);
                double cs = cxp + cxm + cyp + cym;
                cs += czc + czm;
                dp = ec - cs;
                au = ec * uc + s;
            }
            v = st_finish<OP>(a, p, uc, au, dp, bp);
            um = uc, uc = up, czm = czc;
        }
        if (ST_REDUCES(OP)) st_seg_put(a.seg, g, line, w.i, v);
    }
}

/* The box stencils (and any stencil of the table's form), NK half offsets. */
template <int NK, int OP> static __global__ void __launch_bounds__(1024) k_box(st_geo g, st_args a)
{
    const st_walk w = st_walk_of<NK == 13>(g);
    if (w.cnt <= 0) return;
    const bool act = w.i < g.nx;
    if (!act && (!ST_REDUCES(OP) || (w.i & ~31) >= g.nx)) return;
    ptrdiff_t p = w.p;
    long line = w.line;
    /* the point's whole-grid indices (the box of equal rows is a whole grid's) */
    int j = NK == 13 ? (int)(w.line % g.ny) : (int)w.line, k = NK == 13 ? (int)(w.line / g.ny) : 0;
    for (int t = 0; t < w.cnt; t++, p += w.step, line += w.lstep, NK == 13 ? k++ : j++) {
        double v = 0.0;
        if (act) {
            double dg;
            const double au = st_au<NK, true>(a, a.u, p, dg, st_in_box(a, w.i, j, k));
            v = st_finish<OP>(a, p, __ldg(a.u + p), au, dg, st_b<OP>(a, p));
        }
        if (ST_REDUCES(OP)) st_seg_put(a.seg, g, line, w.i, v);
    }
}

/* Which kernel family runs A: its stencil kind (0: none). */
static int kind_of(const hr_sop *A)
{
    if (A->g.dim == 2 && A->nk == 2) return 2;
    if (A->g.dim == 3 && A->nk == 3) return 3;
    if (A->g.dim == 2 && A->nk == 4) return 4;
    if (A->g.dim == 3 && A->nk == 13) return 13;
    return 0;
}

static st_args args_of(const hr_sop *A)
{
    st_args a;
    memset(&a, 0, sizeof a);
    a.d = A->diag;
    a.e = A->exc;
    a.uni = A->uniform;
    a.ud = A->ud, a.uc0 = A->uc[0], a.uc1 = A->uc[1], a.uc2 = A->uc[2];
    for (int k = 0; k < A->nk; k++) {
        a.c[k] = A->c[k];
        a.doff[k] = A->doff[k];
    }
    /* the box of equal rows: a whole grid's box stencil or star stencil with arrays (a slab's A
     * has none) */
    const hr_sgrid *g = &A->g;
    int box = (A->nk > g->dim || (A->exc && !A->uniform)) && A->rlo[0] < A->rhi[0] && A->rlo[1] < A->rhi[1] &&
              A->rlo[2] < A->rhi[2];
    for (int d = 0; d < 3; d++)
        box &= g->goff[d] == 0 && g->n[d] == g->gn[d];
    if (box) {
        for (int d = 0; d < 3; d++)
            a.blo[d] = A->rlo[d], a.bhi[d] = A->rhi[d];
        a.rd = A->rd;
        a.rexc = A->rexc;
        for (int k = 0; k < A->nk; k++)
            a.rc[k] = A->rc[k], a.rcm[k] = A->rcm[k];
    }
    return a;
}

template <int OP>
static void sweep_launch(st_cuda *d, int kind, const st_geo &G, dim3 grid, dim3 block, const st_args &a)
{
    switch (kind) {
    case 2: k_star2<OP><<<grid, block, 0, d->st>>>(G, a); break;
    case 3: k_star3<OP><<<grid, block, 0, d->st>>>(G, a); break;
    case 4: k_box<4, OP><<<grid, block, 0, d->st>>>(G, a); break;
    default: k_box<13, OP><<<grid, block, 0, d->st>>>(G, a); break;
    }
    ST_LAUNCHED(d);
}

double hri_st_cu_sweep(st_cuda *d, const hr_sop *A, int op, const double *u, const double *b,
                       const double *prev, double *out, double al, double be)
{
    hri_st_cu_use(d);
    const int kind = kind_of(A);
    st_geo G;
    dim3 grid, block;
    if (!kind || !hri_st_cu_geo(d, &A->g, &G, &grid, &block)) {
        ST_CU(d, cudaErrorInvalidConfiguration);
        return NAN;
    }
    hri_st_cu_fill_ghosts(d, &A->g, (double *)u);
    st_args a = args_of(A);
    a.u = u, a.b = b, a.prev = prev, a.out = out, a.al = al, a.be = be;
    const int red = op == ST_OP_RES || op == ST_OP_APPLY;
    if (red && !(a.seg = hri_st_cu_seg(d, G))) return NAN;
    switch (op) {
    case ST_OP_JAC: sweep_launch<ST_OP_JAC>(d, kind, G, grid, block, a); break;
    case ST_OP_CHEB: sweep_launch<ST_OP_CHEB>(d, kind, G, grid, block, a); break;
    case ST_OP_RES: sweep_launch<ST_OP_RES>(d, kind, G, grid, block, a); break;
    default: sweep_launch<ST_OP_APPLY>(d, kind, G, grid, block, a); break;
    }
    return red && !d->quiet ? hri_st_cu_reduce(d, G) : 0.0;
}

/* ------------------------------------------------------------------ one colour of Gauss-Seidel */

/* The colour's points per axis: start, step and count (index = start + step t). */
typedef struct st_cgeo {
    int s[3], st[3], n[3];
    ptrdiff_t sy, sz, origin;
} st_cgeo;

template <int KIND> static __global__ void k_colour(st_cgeo c, st_args a, double *u, double omega)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (t >= c.n[0] || r >= c.n[1]) return;
    const int i = c.s[0] + c.st[0] * t, j = c.s[1] + c.st[1] * r, k = c.s[2] + c.st[2] * (int)blockIdx.z;
    const ptrdiff_t p = c.origin + i + j * c.sy + k * c.sz;
    /* u is written here (this colour's points only; their neighbours are other colours) */
    double dg;
    const double au = st_au<KIND, false>(a, u, p, dg, st_in_box(a, i, j, k));
    u[p] = u[p] + omega * (__ldg(a.b + p) - au) / dg;
}

/* The CPU backend's class_of rule per axis, in whole-grid indices (a slab of MPI ranks starts
 * at goff): class 2 is the last point of an odd periodic axis, classes 0 and 1 the parities of
 * the others; an axis of one point has every point. */
static void colour_axis(const hr_sgrid *g, int a, int cls, int *s, int *st, int *n)
{
    const int len = g->n[a], off = g->goff[a], glen = g->gn[a];
    const int odd_per = g->gper[a] && (glen & 1);
    *st = 2;
    if (glen == 1) {
        *s = 0, *st = 1, *n = cls == 0 ? 1 : 0;
        return;
    }
    if (cls == 2) { /* the whole axis's last point, where this slab holds it */
        const int i = glen - 1 - off;
        *s = i, *st = 1, *n = odd_per && i >= 0 && i < len ? 1 : 0;
        return;
    }
    const int first = ((cls - off) % 2 + 2) % 2; /* the first local index of this parity */
    const int end = len - (odd_per && off + len == glen ? 1 : 0);
    *s = first;
    *n = end > first ? (end - first + 1) / 2 : 0;
}

void hri_st_cu_colour(st_cuda *d, const hr_sop *A, double *u, const double *b, double omega, const int cls[3])
{
    hri_st_cu_use(d);
    const hr_sgrid *g = &A->g;
    const int kind = kind_of(A);
    st_cgeo c;
    for (int a = 0; a < 3; a++)
        colour_axis(g, a, cls[a], &c.s[a], &c.st[a], &c.n[a]);
    hri_st_cu_fill_ghosts(d, g, u); /* as the CPU: also where a slab holds none of the colour */
    if (c.n[0] == 0 || c.n[1] == 0 || c.n[2] == 0) return;
    c.sy = g->st[1];
    c.sz = g->dim == 3 ? g->st[2] : 0;
    c.origin = g->origin;
    const dim3 block(64, 4, 1), grid((c.n[0] + 63) / 64, (c.n[1] + 3) / 4, c.n[2]);
    if (!kind || grid.y > 65535 || grid.z > 65535) {
        ST_CU(d, cudaErrorInvalidConfiguration);
        return;
    }
    st_args a = args_of(A);
    a.b = b;
    switch (kind) {
    case 2: k_colour<2><<<grid, block, 0, d->st>>>(c, a, u, omega); break;
    case 3: k_colour<3><<<grid, block, 0, d->st>>>(c, a, u, omega); break;
    case 4: k_colour<4><<<grid, block, 0, d->st>>>(c, a, u, omega); break;
    default: k_colour<13><<<grid, block, 0, d->st>>>(c, a, u, omega); break;
    }
    ST_LAUNCHED(d);
}

/* The star stencils' points of one parity of the whole-grid index sum: a thread per point,
 * x stepping by two from the row's first point of that parity. */
template <int KIND> static __global__ void k_parity(st_cgeo c, st_args a, double *u, double omega, int first0)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
    const int k = (int)blockIdx.z;
    if (j >= c.n[1]) return;
    const int i = ((first0 + j + k) & 1) + 2 * t;
    if (i >= c.n[0]) return;
    const ptrdiff_t p = c.origin + i + j * c.sy + k * c.sz;
    double dg;
    const double au = st_au<KIND, false>(a, u, p, dg);
    u[p] = u[p] + omega * (__ldg(a.b + p) - au) / dg;
}

int hri_st_cu_parity_ok(const hr_sop *A)
{
    const hr_sgrid *g = &A->g;
    const int kind = kind_of(A);
    if ((kind != 2 && kind != 3) || !(A->exc != NULL || A->uniform)) return 0;
    for (int a = 0; a < g->dim; a++)
        if (g->gper[a] && (g->gn[a] & 1)) return 0; /* its last point is a class of its own */
    return 1;
}

/* One parity's points of the rows [r0, r0 + rows) of the last axis. */
static void parity_rows(st_cuda *d, const hr_sop *A, double *u, const double *b, double omega, int parity,
                        int r0, int rows)
{
    const hr_sgrid *g = &A->g;
    const int kind = kind_of(A), last = g->dim - 1;
    st_cgeo c;
    memset(&c, 0, sizeof c);
    c.n[0] = g->n[0], c.n[1] = g->n[1], c.n[2] = g->dim == 3 ? g->n[2] : 1;
    c.n[last] = rows;
    if (c.n[0] <= 0 || c.n[1] <= 0 || c.n[2] <= 0) return;
    c.sy = g->st[1];
    c.sz = g->dim == 3 ? g->st[2] : 0;
    c.origin = g->origin + (ptrdiff_t)r0 * g->st[last];
    /* row (j, k)'s first point of the parity: i + j + k + the offsets = parity (mod 2) */
    const int off = g->goff[0] + g->goff[1] + (g->dim == 3 ? g->goff[2] : 0) + r0;
    const int first0 = ((parity - off) % 2 + 2) % 2;
    const int half = (c.n[0] + 1) / 2;
    const dim3 block(64, 4, 1), grid((half + 63) / 64, (c.n[1] + 3) / 4, c.n[2]);
    if ((kind != 2 && kind != 3) || grid.y > 65535 || grid.z > 65535) {
        ST_CU(d, cudaErrorInvalidConfiguration);
        return;
    }
    st_args a = args_of(A);
    a.b = b;
    if (kind == 2)
        k_parity<2><<<grid, block, 0, d->st>>>(c, a, u, omega, first0);
    else
        k_parity<3><<<grid, block, 0, d->st>>>(c, a, u, omega, first0);
    ST_LAUNCHED(d);
}

#define ST_OVERLAP_MIN ((size_t)1 << 20) /* a slab's unknowns from which its halo hides behind it */

void hri_st_cu_parity(st_cuda *d, const hr_sop *A, double *u, const double *b, double omega, int parity)
{
    hri_st_cu_use(d);
    const hr_sgrid *g = &A->g;
    const int last = g->dim - 1, n = g->n[last];
    int periodic = 0;
    for (int a = 0; a < g->dim; a++)
        periodic |= g->periodic[a];
    /* GPU ranks by NCCL on a large slab: the interior rows (they read no ghost row) run while
     * the exchange stream swaps the edge rows, then the two edge rows: each point's update reads
     * the other parity's values only, so the values are the one pass's after the halo */
    if (d->comm && d->comm->nccl && !periodic && n >= 3 && g->count >= ST_OVERLAP_MIN &&
        hri_st_cu_xstream(d) == 0) {
        ST_CU(d, cudaEventRecord(d->x_ready, d->st));
        ST_CU(d, cudaStreamWaitEvent(d->xs, d->x_ready, 0));
        hri_st_cu_halo_on(d, g, u, d->xs);
        ST_CU(d, cudaEventRecord(d->x_done, d->xs));
        parity_rows(d, A, u, b, omega, parity, 1, n - 2);
        ST_CU(d, cudaStreamWaitEvent(d->st, d->x_done, 0));
        parity_rows(d, A, u, b, omega, parity, 0, 1);
        parity_rows(d, A, u, b, omega, parity, n - 1, 1);
        return;
    }
    hri_st_cu_fill_ghosts(d, g, u); /* as the classes: also where a slab holds none of it */
    parity_rows(d, A, u, b, omega, parity, 0, n);
}

/* ------------------------------------------------------------------ a whole 2-D sweep in one pass */

/* One Gauss-Seidel sweep of a 2-D star stencil, the points of parity p0 first and then the
 * others (the two passes of hri_st_cu_parity), read from u and written to out: one read of u,
 * b and the stencil's arrays and one write per point, where the two passes read and write the
 * grid twice.
 *
 * A warp takes 64 neighbouring columns, two a lane (c0 = x0 + 2 lane and c1 = c0 + 1), and
 * marches down a segment of rows (march_rows). When row R comes in, the first half sweep
 * updates row R - 1 and the second row R - 2: the first half's neighbours are then all
 * untouched (the other parity),
 * and the second half's are all the first half's results (row R - 3's too, two steps earlier),
 * so each update is the function of the same values as in the passes one by one: bitwise their
 * result. In a row each lane updates one of its two columns (the same one on every lane: c0's
 * parity is x0's), so no lane idles; the x neighbour that is not the lane's own comes from the
 * neighbouring lane (a shuffle). The warp's outermost columns lack a neighbour: the first half is
 * right on columns x0 + 1 .. x0 + 62, the second on x0 + 2 .. x0 + 61, and lanes 1..30 write
 * theirs (neighbouring warps overlap by four columns). A segment of rows starts two rows early so
 * that its first row's second half has its neighbours. Out of place: a warp reads columns its
 * neighbours write. */
#define ST_RB_OWN 60

/* The Gauss-Seidel update of one point of a 2-D star (k_parity's step, term for term). */
template <bool UNI>
__device__ __forceinline__ double st_rb_point(const st_args &a, double uc, double ul, double ur, double ud, double uu,
                                              double bp, double cxp, double cxm, double cyp, double cym, double ec,
                                              double omega)
{
    double dg;
    const double au = st_star2_au<UNI>(a, uc, ul, ur, ud, uu, cxp, cxm, cyp, cym, ec, dg);
    return uc + omega * (bp - au) / dg;
}

/* A row of a lane's two columns: u, and (of the row below the one u is of: the step's row
 * R - 1) b and the couplings. */
typedef struct st_rb_row {
    double u[2], b[2], cx[2], cy[2], e[2];
} st_rb_row;

/* A prolongation added to the iterate as its rows come in (the first sweep after it): fine
 * u += P ec at every unknown, k_prolong's sum term for term (st_gather), so that the sweep reads
 * the values the prolongation would have written. */
typedef struct st_pro {
    st_dax ax, ay;
    const double *ec;
    ptrdiff_t corg, csy;
} st_pro;

/* One coarse row's interpolation along x at a column (its x terms): st_gather's inner sum. */
__device__ __forceinline__ double st_pro_line(const st_pro &pro, int J, const int xi[3], const double xw[3], int nx)
{
    const double *row = pro.ec + pro.corg + J * pro.csy;
    double t = 0.0;
#pragma unroll
    for (int a = 0; a < 3; a++)
        if (a < nx) t += xw[a] * __ldg(row + xi[a]);
    return t;
}

/* Row r's prolongation into a lane's two columns v (pxi, pxw, pxn: the columns' x terms):
 * st_gather's sum over the y terms, term for term. (Keeping the coarse rows' sums from row to
 * row, two or three fine rows taking the same, made the sweep slower: 869 against 728 us at
 * 8000^2 on an H200; each row's sum then waits for the loads of the row before.) */
__device__ __forceinline__ void st_pro_add(const st_pro &pro, int r, int ny, const bool inner[2], const int pxi[2][3],
                                           const double pxw[2][3], const int pxn[2], double v[2])
{
    if (r < 0 || r >= ny) return;
    int yi[3] = {0, 0, 0};
    double yw[3] = {0, 0, 0};
    const int nyt = st_pterms(pro.ay, r, yi, yw);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        if (!inner[h]) continue;
        double s = 0.0;
#pragma unroll
        for (int t = 0; t < 2; t++) {
            if (t >= nyt) break;
            s += 1.0 * yw[t] * st_pro_line(pro, yi[t], pxi[h], pxw[h], pxn[h]);
        }
        v[h] = v[h] + s;
    }
}

/* The residual taken after a uniform star's sweep (k_rb2<.., .., true>): r = b - A u of the swept
 * iterate into r (NULL: not stored) and, with seg, each warp's sum of r^2 over its columns of a
 * row into seg[row * nseg + warp] (NULL: none). */
typedef struct st_rres {
    double *r, *seg;
    int nseg;
} st_rres;

/* With the residual, a warp owns 58 columns (x0 + 3 .. x0 + 60): a residual reads its row's
 * neighbours, which are final on x0 + 2 .. x0 + 61 only. */
#define ST_RB_OWN_RES 58

template <bool UNI, bool PRO, bool RES>
static __global__ void __launch_bounds__(256) k_rb2(st_cgeo c, st_args a, st_pro pro, const double *__restrict__ u,
                                                    double *__restrict__ out, double omega, int p0, int rows,
                                                    st_rres res)
{
    static_assert(!RES || UNI, "the residual after the sweep is of a uniform star only");
    constexpr int OWN = RES ? ST_RB_OWN_RES : ST_RB_OWN, LEAD = RES ? 3 : 2;
    const int lane = (int)(threadIdx.x & 31), wx = (int)(blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5));
    const int nx = c.n[0], ny = c.n[1];
    if (wx * OWN >= nx) return; /* the whole warp */
    const int x0 = wx * OWN - LEAD, c0 = x0 + 2 * lane;
    bool col[2], inner[2], own[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        col[h] = c0 + h >= -1 && c0 + h <= nx;
        inner[h] = c0 + h >= 0 && c0 + h < nx;
        own[h] = (RES ? 2 * lane + h >= 3 && 2 * lane + h <= 60 : lane >= 1 && lane <= 30) && inner[h];
    }
    /* PRO: the columns' prolongation terms (the same on every row) */
    int pxi[2][3], pxn[2];
    double pxw[2][3];
    if (PRO) {
#pragma unroll
        for (int h = 0; h < 2; h++)
            pxn[h] = inner[h] ? st_pterms(pro.ax, c0 + h, pxi[h], pxw[h]) : 0;
    }
    /* the march starts at row R0 (one row earlier with the residual, whose first row needs the
     * row below it final) */
    const int r0 = (int)blockIdx.y * rows, r1 = min(r0 + rows, ny), R0 = r0 - (RES ? 1 : 0);
    const ptrdiff_t sy = c.sy, base = c.origin + c0;
    const double *__restrict__ b = a.b;
    const double *__restrict__ cx = a.c[0];
    const double *__restrict__ cy = a.c[1];
    const double *__restrict__ ex = a.e;
    const int par0 = (c0 + c.s[2]) & 1; /* c0's parity on row 0 (the same on every lane) */
    /* rows R - 3 .. R of the two columns (u: as far as the half sweeps have taken them); a row
     * outside [-1, ny] holds 0 and is never an update's neighbour */
#define ST_RB_IN(h, r) (col[h] && (r) >= -1 && (r) <= ny)
    double u4[2] = {0.0, 0.0}, u3[2] = {0.0, 0.0}, u2[2] = {0.0, 0.0}, u1[2] = {0.0, 0.0};
    double b3[2] = {0.0, 0.0}, b2[2] = {0.0, 0.0}, cx2[2] = {0.0, 0.0}, e2[2] = {0.0, 0.0};
    double cyb[2] = {0.0, 0.0}, cy3[2] = {0.0, 0.0}; /* the couplings up of rows R - 2 and R - 3 */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        if (ST_RB_IN(h, R0 - 2)) {
            u2[h] = __ldg(u + base + h + (ptrdiff_t)(R0 - 2) * sy);
            if (!UNI) cyb[h] = st_star_at(a, cy, base + h + (ptrdiff_t)(R0 - 2) * sy, a.rc[1], c0 + h, R0 - 2);
        }
        if (ST_RB_IN(h, R0 - 1)) u1[h] = __ldg(u + base + h + (ptrdiff_t)(R0 - 1) * sy);
    }
    if (PRO) {
        st_pro_add(pro, R0 - 2, ny, inner, pxi, pxw, pxn, u2);
        st_pro_add(pro, R0 - 1, ny, inner, pxi, pxw, pxn, u1);
    }
    /* the loads of the next two steps are in flight during this step's updates */
    st_rb_row nx0, nx1;
#define ST_RB_LOAD(w, r)                                                                                     \
    do {                                                                                                     \
        _Pragma("unroll") for (int h = 0; h < 2; h++)                                                        \
        {                                                                                                    \
            const ptrdiff_t pr_ = base + h + (ptrdiff_t)(r) * sy, pb_ = pr_ - sy;                            \
            (w).u[h] = ST_RB_IN(h, r) ? __ldg(u + pr_) : 0.0;                                                \
            (w).b[h] = (w).cx[h] = (w).cy[h] = (w).e[h] = 0.0;                                               \
            if (ST_RB_IN(h, (r) - 1)) {                                                                      \
                (w).b[h] = __ldg(b + pb_);                                                                   \
                if (!UNI)                                                                                    \
                    (w).cx[h] = st_star_at(a, cx, pb_, a.rc[0], c0 + h, (r) - 1),                            \
                    (w).cy[h] = st_star_at(a, cy, pb_, a.rc[1], c0 + h, (r) - 1),                            \
                    (w).e[h] = st_star_at(a, ex, pb_, a.rexc, c0 + h, (r) - 1);                              \
            }                                                                                                \
        }                                                                                                    \
        if (PRO) st_pro_add(pro, (r), ny, inner, pxi, pxw, pxn, (w).u);                                      \
    } while (0)
    ST_RB_LOAD(nx0, R0);
    ST_RB_LOAD(nx1, R0 + 1);
#pragma unroll 1
    for (int R = R0; R <= r1 + 1 + (RES ? 1 : 0); R++) {
        const st_rb_row cur = nx0;
        nx0 = nx1;
        ST_RB_LOAD(nx1, R + 2);
        /* the first half on row R - 1 (its coupling down: row R - 2's coupling up, cyb) */
        {
            const int q = R - 1, h = ((par0 + q) & 1) == p0 ? 0 : 1; /* the column it updates */
            const double left = __shfl_up_sync(0xffffffffu, u1[1], 1), right = __shfl_down_sync(0xffffffffu, u1[0], 1);
            const double cxl = UNI ? 0.0 : __shfl_up_sync(0xffffffffu, cur.cx[1], 1);
            if (q >= 0 && q < ny) {
                if (h == 0 && inner[0])
                    u1[0] = st_rb_point<UNI>(a, u1[0], left, u1[1], u2[0], cur.u[0], cur.b[0], cur.cx[0], cxl,
                                             cur.cy[0], cyb[0], cur.e[0], omega);
                else if (h == 1 && inner[1])
                    u1[1] = st_rb_point<UNI>(a, u1[1], u1[0], right, u2[1], cur.u[1], cur.b[1], cur.cx[1],
                                             cur.cx[0], cur.cy[1], cyb[1], cur.e[1], omega);
            }
        }
        /* the second half on row R - 2 (its coupling down: row R - 3's, cy3) */
        {
            const int q = R - 2, h = ((par0 + q) & 1) != p0 ? 0 : 1;
            const double left = __shfl_up_sync(0xffffffffu, u2[1], 1), right = __shfl_down_sync(0xffffffffu, u2[0], 1);
            const double cxl = UNI ? 0.0 : __shfl_up_sync(0xffffffffu, cx2[1], 1);
            if (q >= 0 && q < ny) {
                if (h == 0 && inner[0])
                    u2[0] = st_rb_point<UNI>(a, u2[0], left, u2[1], u3[0], u1[0], b2[0], cx2[0], cxl, cyb[0],
                                             cy3[0], e2[0], omega);
                else if (h == 1 && inner[1])
                    u2[1] = st_rb_point<UNI>(a, u2[1], u2[0], right, u3[1], u1[1], b2[1], cx2[1], cx2[0], cyb[1],
                                             cy3[1], e2[1], omega);
            }
            if (q >= r0 && q < r1) {
                if (own[0]) out[base + (ptrdiff_t)q * sy] = u2[0];
                if (own[1]) out[base + 1 + (ptrdiff_t)q * sy] = u2[1];
            }
        }
        /* RES: row R - 3's residual, its rows below and above (R - 4, R - 2) final now (the
         * residual kernel's terms, st_star2_au, in its order) */
        if (RES) {
            const int q = R - 3;
            const double left = __shfl_up_sync(0xffffffffu, u3[1], 1), right = __shfl_down_sync(0xffffffffu, u3[0], 1);
            if (q >= r0 && q < r1) {
                double v = 0.0;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    if (!own[h]) continue;
                    double dg;
                    const double au = st_star2_au<true>(a, u3[h], h ? u3[0] : left, h ? right : u3[1], u4[h], u2[h],
                                                        0.0, 0.0, 0.0, 0.0, 0.0, dg);
                    const double r = b3[h] - au;
                    if (res.r) res.r[base + h + (ptrdiff_t)q * sy] = r;
                    v += r * r;
                }
                if (res.seg) {
                    v = st_warp_sum(v);
                    if (lane == 0) res.seg[(size_t)q * res.nseg + wx] = v;
                }
            }
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            u4[h] = u3[h], u3[h] = u2[h], u2[h] = u1[h], u1[h] = cur.u[h];
            b3[h] = b2[h], b2[h] = cur.b[h], cx2[h] = cur.cx[h], e2[h] = cur.e[h];
            cy3[h] = cyb[h], cyb[h] = cur.cy[h];
        }
    }
#undef ST_RB_LOAD
#undef ST_RB_IN
}

/* ------------------------------------------------------------------ a whole 3-D sweep in one pass */

/* The 3-D star stencil's one-pass sweep: k_rb2's march along z, planes for rows. A block of
 * ST_RB3_W warps takes a tile of 64 columns (two a lane) by ST_RB3_W rows, warp w on row
 * y0 + w, and marches along z. When plane R comes in, the first half sweep updates
 * plane R - 1 and the second plane R - 2, as in k_rb2. The in-plane neighbours come from shared
 * memory: each step the block lays down its planes R - 1 and R - 2 as they stand (double
 * buffered, one barrier a step). The first half reads the other parity of plane R - 1 (not yet
 * touched) and the second the first half's results on plane R - 2 (a step old), so that one
 * snapshot serves both. The first half is right on the tile less its outermost columns and rows,
 * the second on the tile less two: lanes 1..30 of warps 2 .. ST_RB3_W - 3 write theirs
 * (neighbouring tiles overlap by four columns and four rows). A block marches `planes` planes
 * (64, fewer on small grids: hri_st_cu_rb_sweep). */
#define ST_RB3_W     16
#define ST_RB3_OWN_Y (ST_RB3_W - 4)

/* The Gauss-Seidel update of one point of a 3-D star (k_parity's step, term for term). */
template <bool UNI>
__device__ __forceinline__ double st_rb3_point(const st_args &a, double uc, double xm, double xp, double ym, double yp,
                                               double zm, double zp, double bp, ptrdiff_t p, ptrdiff_t sy,
                                               ptrdiff_t sz, double omega)
{
    double dg;
    const double au = st_star3_au<UNI>(a, uc, xm, xp, ym, yp, zm, zp, p, sy, sz, dg);
    return uc + omega * (bp - au) / dg;
}

/* A plane of a lane's two columns: u, and b of the plane below (the step's plane R - 1). */
typedef struct st_rb3_plane {
    double u[2], b[2];
} st_rb3_plane;

template <bool UNI>
static __global__ void __launch_bounds__(32 * ST_RB3_W, 2)
    k_rb3(st_cgeo c, st_args a, const double *__restrict__ u, double *__restrict__ out, double omega, int p0,
          int planes)
{
    __shared__ double sm[2][2][ST_RB3_W][64]; /* [buffer][plane R - 1, R - 2][row][column] */
    const int lane = (int)(threadIdx.x & 31), w = (int)(threadIdx.x >> 5);
    const int nx = c.n[0], ny = c.n[1], nz = c.n[2];
    const int x0 = (int)blockIdx.x * ST_RB_OWN - 2, c0 = x0 + 2 * lane;
    const int y = (int)blockIdx.y * ST_RB3_OWN_Y - 2 + w;
    const bool yin = y >= 0 && y < ny, yload = y >= -1 && y <= ny;
    bool col[2], inner[2], own[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        col[h] = yload && c0 + h >= -1 && c0 + h <= nx;
        inner[h] = yin && c0 + h >= 0 && c0 + h < nx;
        own[h] = lane >= 1 && lane <= 30 && w >= 2 && w <= ST_RB3_W - 3 && inner[h];
    }
    const int z0 = (int)blockIdx.z * planes, z1 = min(z0 + planes, nz);
    const ptrdiff_t sy = c.sy, sz = c.sz, base = c.origin + c0 + (ptrdiff_t)y * sy;
    const double *__restrict__ b = a.b;
    const int par0 = (c0 + y + c.s[2]) & 1; /* c0's parity on plane 0 */
    /* neighbours in shared memory: x- and x+ of the lane's pair, y- and y+ (the tile's outermost
     * rows read their own: they are never right, as said above) */
    const int xl = 2 * lane - 1, xr = 2 * lane + 2, wd = w > 0 ? w - 1 : w, wu = w < ST_RB3_W - 1 ? w + 1 : w;
#define ST_RB3_IN(h, z)  (col[h] && (z) >= -1 && (z) <= nz)
#define ST_RB3_INB(h, z) (inner[h] && (z) >= 0 && (z) < nz)
    double u3[2] = {0.0, 0.0}, u2[2] = {0.0, 0.0}, u1[2] = {0.0, 0.0}, b2[2] = {0.0, 0.0};
#pragma unroll
    for (int h = 0; h < 2; h++) {
        if (ST_RB3_IN(h, z0 - 2)) u2[h] = __ldg(u + base + h + (ptrdiff_t)(z0 - 2) * sz);
        if (ST_RB3_IN(h, z0 - 1)) u1[h] = __ldg(u + base + h + (ptrdiff_t)(z0 - 1) * sz);
    }
    st_rb3_plane nx0;
#define ST_RB3_LOAD(v, z)                                                                                    \
    do {                                                                                                     \
        _Pragma("unroll") for (int h = 0; h < 2; h++)                                                        \
        {                                                                                                    \
            const ptrdiff_t pz_ = base + h + (ptrdiff_t)(z) * sz;                                            \
            (v).u[h] = ST_RB3_IN(h, z) ? __ldg(u + pz_) : 0.0;                                               \
            (v).b[h] = ST_RB3_INB(h, (z) - 1) ? __ldg(b + pz_ - sz) : 0.0;                                   \
        }                                                                                                    \
    } while (0)
    ST_RB3_LOAD(nx0, z0);
#pragma unroll 1
    for (int R = z0; R <= z1 + 1; R++) {
        const st_rb3_plane cur = nx0;
        ST_RB3_LOAD(nx0, R + 1); /* in flight during this step */
        double(*const s1)[64] = sm[R & 1][0];
        double(*const s2)[64] = sm[R & 1][1];
        s1[w][2 * lane] = u1[0], s1[w][2 * lane + 1] = u1[1];
        s2[w][2 * lane] = u2[0], s2[w][2 * lane + 1] = u2[1];
        __syncthreads();
        /* the first half on plane R - 1, then the second on plane R - 2: each updates one of
         * the lane's two columns (constant indices, so that the columns stay in registers) */
        {
            const int q = R - 1;
            if (q >= 0 && q < nz) {
                if (((par0 + q) & 1) == p0) {
                    if (inner[0])
                        u1[0] = st_rb3_point<UNI>(a, u1[0], lane > 0 ? s1[w][xl] : 0.0, u1[1], s1[wd][2 * lane],
                                                  s1[wu][2 * lane], u2[0], cur.u[0], cur.b[0], base + q * sz,
                                                  sy, sz, omega);
                } else if (inner[1]) {
                    u1[1] = st_rb3_point<UNI>(a, u1[1], u1[0], lane < 31 ? s1[w][xr] : 0.0, s1[wd][2 * lane + 1],
                                              s1[wu][2 * lane + 1], u2[1], cur.u[1], cur.b[1], base + 1 + q * sz,
                                              sy, sz, omega);
                }
            }
        }
        {
            const int q = R - 2;
            if (q >= 0 && q < nz) {
                if (((par0 + q) & 1) != p0) {
                    if (inner[0])
                        u2[0] = st_rb3_point<UNI>(a, u2[0], lane > 0 ? s2[w][xl] : 0.0, u2[1], s2[wd][2 * lane],
                                                  s2[wu][2 * lane], u3[0], u1[0], b2[0], base + q * sz, sy, sz,
                                                  omega);
                } else if (inner[1]) {
                    u2[1] = st_rb3_point<UNI>(a, u2[1], u2[0], lane < 31 ? s2[w][xr] : 0.0, s2[wd][2 * lane + 1],
                                              s2[wu][2 * lane + 1], u3[1], u1[1], b2[1], base + 1 + q * sz, sy,
                                              sz, omega);
                }
            }
            if (q >= z0 && q < z1) {
                if (own[0]) out[base + (ptrdiff_t)q * sz] = u2[0];
                if (own[1]) out[base + 1 + (ptrdiff_t)q * sz] = u2[1];
            }
        }
#pragma unroll
        for (int h = 0; h < 2; h++)
            u3[h] = u2[h], u2[h] = u1[h], u1[h] = cur.u[h], b2[h] = cur.b[h];
    }
#undef ST_RB3_LOAD
#undef ST_RB3_INB
#undef ST_RB3_IN
}

/* ------------------------------------------------------------------ a whole 2-D box sweep in one pass */

/* One Gauss-Seidel sweep of a 2-D box (9-point) stencil, its four colours in order, read from u
 * and written to out: a block loads a tile of ST_BT x ST_BT points of u into shared memory and
 * sweeps the colours there one after another (a barrier between them). A point's eight
 * neighbours are all of other colours, so each colour's updates read only values the earlier
 * colours have set or left: the colour passes' values, bitwise. An update needs its neighbours
 * in the tile, and the k-th colour's values are right only where the (k-1)-th's were one point
 * further in, so after four colours the tile is right but for a ring of ST_BT_RING points;
 * neighbouring tiles overlap by twice that, and a block writes its middle. Where the colour
 * passes read u, b and write a quarter of the grid four times a sweep, this reads u about 1.3
 * times and b and out once. */
#define ST_BT      64
#define ST_BT_RING 4
#define ST_BT_OWN  (ST_BT - 2 * ST_BT_RING)

/* the colours in sweep order (parities of x and y) and the stencil's offsets o_k (x, y) */
typedef struct st_bt {
    int cx[4], cy[4], ox[4], oy[4];
} st_bt;

#define ST_BT_THREADS 512

/* A tile point of colour `col` that thread slot k (0 .. ST_BT^2 / 4 - 1) updates: its tile and
 * whole-grid indices; false where it has no update (the tile's edge, outside the grid). */
__device__ __forceinline__ bool st_bt_point(const st_cgeo &c, const st_bt &t, int col, int k, int x0, int y0, int &tx,
                                            int &ty, ptrdiff_t &p)
{
    const int fx = (((t.cx[col] - c.s[0] - x0) % 2) + 2) % 2, fy = (((t.cy[col] - c.s[1] - y0) % 2) + 2) % 2;
    tx = fx + 2 * (k % (ST_BT / 2)), ty = fy + 2 * (k / (ST_BT / 2));
    const int i = x0 + tx, j = y0 + ty;
    p = c.origin + i + (ptrdiff_t)j * c.sy;
    return tx >= 1 && tx <= ST_BT - 2 && ty >= 1 && ty <= ST_BT - 2 && i >= 0 && i < c.n[0] && j >= 0 && j < c.n[1];
}

/* A hint to bring p's line into the L1 cache (none in the host emulation). */
__device__ __forceinline__ void st_prefetch(const double *p)
{
#ifdef __CUDA_ARCH__
    asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
#else
    (void)p;
#endif
}

static __global__ void __launch_bounds__(ST_BT_THREADS, 2) k_box2t(st_cgeo c, st_args a, st_bt t,
                                                                const double *__restrict__ u,
                                                                double *__restrict__ out, double omega)
{
    __shared__ double s[ST_BT][ST_BT];
    constexpr int LOADS = ST_BT * ST_BT / ST_BT_THREADS, UPD = ST_BT * ST_BT / 4 / ST_BT_THREADS;
    const int nx = c.n[0], ny = c.n[1];
    const int x0 = (int)blockIdx.x * ST_BT_OWN - ST_BT_RING, y0 = (int)blockIdx.y * ST_BT_OWN - ST_BT_RING;
    const ptrdiff_t sy = c.sy;
    /* the operator's arrays on the tile's lines outside the box of equal rows (the rows y0 - 1 ..
     * y0 + ST_BT - 1, columns x0 - 1 .. x0 + ST_BT: the shifted couplings too), asked into the
     * cache now: each colour's loads then wait for the cache, not for memory (a small level's
     * block is a chain of four colours, each of which waited for its loads) */
    if (a.d) {
        constexpr int SEGS = (ST_BT + 2 + 15) / 16, LINES = (ST_BT + 1) * SEGS;
#pragma unroll 1
        for (int k = (int)threadIdx.x; k < 5 * LINES; k += ST_BT_THREADS) {
            const int arr = k / LINES, l = k % LINES, j = y0 - 1 + l / SEGS;
            const int i0 = max(x0 - 1 + 16 * (l % SEGS), -1), i1 = min(i0 + 15, nx);
            if (j < -1 || j > ny || i0 > i1) continue;
            if (j >= a.blo[1] && j < a.bhi[1] && i0 >= a.blo[0] && i1 < a.bhi[0]) continue; /* inside */
            const double *base = (arr == 0 ? a.d : a.c[arr - 1]) + c.origin + (ptrdiff_t)j * sy;
            st_prefetch(base + i0);
            st_prefetch(base + i1);
        }
    }
    /* every load of the block at once: the tile, and b at the thread's points of each colour */
    double v[LOADS], bv[4][UPD];
#pragma unroll
    for (int r = 0; r < LOADS; r++) {
        const int k = (int)threadIdx.x + r * ST_BT_THREADS, i = x0 + (k % ST_BT), j = y0 + k / ST_BT;
        v[r] = i >= -1 && i <= nx && j >= -1 && j <= ny ? __ldg(u + c.origin + i + (ptrdiff_t)j * sy) : 0.0;
    }
#pragma unroll
    for (int col = 0; col < 4; col++)
#pragma unroll
        for (int r = 0; r < UPD; r++) {
            int tx, ty;
            ptrdiff_t p;
            bv[col][r] = st_bt_point(c, t, col, (int)threadIdx.x + r * ST_BT_THREADS, x0, y0, tx, ty, p)
                             ? __ldg(a.b + p)
                             : 0.0;
        }
#pragma unroll
    for (int r = 0; r < LOADS; r++) {
        const int k = (int)threadIdx.x + r * ST_BT_THREADS;
        s[k / ST_BT][k % ST_BT] = v[r];
    }
    __syncthreads();
#pragma unroll
    for (int col = 0; col < 4; col++) {
#pragma unroll
        for (int r = 0; r < UPD; r++) {
            int tx, ty;
            ptrdiff_t p;
            if (!st_bt_point(c, t, col, (int)threadIdx.x + r * ST_BT_THREADS, x0, y0, tx, ty, p)) continue;
            const double up = s[ty][tx];
            double au, dg;
            /* st_au<4>'s terms in its order */
            if (st_in_box(a, x0 + tx, y0 + ty, 0)) {
                au = a.rd * up;
#pragma unroll
                for (int q = 0; q < 4; q++)
                    au += a.rc[q] * s[ty + t.oy[q]][tx + t.ox[q]] + a.rcm[q] * s[ty - t.oy[q]][tx - t.ox[q]];
                dg = a.rd;
            } else {
                au = __ldg(a.d + p) * up;
#pragma unroll
                for (int q = 0; q < 4; q++)
                    au += __ldg(a.c[q] + p) * s[ty + t.oy[q]][tx + t.ox[q]] +
                          __ldg(a.c[q] + p - a.doff[q]) * s[ty - t.oy[q]][tx - t.ox[q]];
                dg = __ldg(a.d + p);
            }
            s[ty][tx] = up + omega * (bv[col][r] - au) / dg;
        }
        __syncthreads();
    }
    for (int k = (int)threadIdx.x; k < ST_BT_OWN * ST_BT_OWN; k += ST_BT_THREADS) {
        const int tx = ST_BT_RING + k % ST_BT_OWN, ty = ST_BT_RING + k / ST_BT_OWN;
        const int i = x0 + tx, j = y0 + ty;
        if (i < nx && j < ny) out[c.origin + i + (ptrdiff_t)j * sy] = s[ty][tx];
    }
}

/* The same sweep on large levels, marching: a warp takes 64 neighbouring columns, two a lane
 * (c0 = x0 + 2 lane and c0 + 1), and marches down the rows as k_rb2 does, four stages behind one
 * another. The colours alternate between the rows' two parities (hri_st_colours' order, either
 * way), so when rows e and e + 1 come in (e a row of the first colour), the first colour is
 * updated on row e, the second on row e - 1, the third on e - 2 and the fourth on e - 3, in that
 * order: each update then reads its neighbours as the colour passes leave them (the earlier
 * colours' results, the later colours' old values), and rows e - 2 and e - 3 are done. In each
 * stage every lane updates one of its columns (the colour's, the same on every lane), and the x
 * neighbour that is not the lane's own comes from the next lane. The warp's outermost columns
 * lack a neighbour, so the k-th colour is right one column further in than the (k-1)-th: lanes
 * 2..29 write theirs (neighbouring warps overlap by eight columns). A segment of rows starts
 * three or four rows early, so that its first row's stages have their neighbours. One read of u
 * and b and one write a sweep, where the colour passes read u four times. */
#define ST_BM_OWN  56
#define ST_BM_ROWS 64 /* a segment's rows (fewer blocks in whole waves measured no faster) */

/* The Gauss-Seidel update of a box stencil's point from its 3 x 3 neighbourhood (rows below,
 * the point's, above; columns left, centre, right): st_au<4>'s terms in its order (the offsets
 * (1, 0), (-1, 1), (0, 1), (1, 1) of hri_sop_shape), from the box of equal rows' scalars where
 * `in`, else from the arrays. */
__device__ __forceinline__ double st_box_point(const st_args &a, bool in, ptrdiff_t p, double omega, double bp,
                                               double dl, double dc, double dr, double ml, double mc, double mr,
                                               double ul, double uc, double ur)
{
    double au, dg;
    if (in) {
        au = a.rd * mc;
        au += a.rc[0] * mr + a.rcm[0] * ml;
        au += a.rc[1] * ul + a.rcm[1] * dr;
        au += a.rc[2] * uc + a.rcm[2] * dc;
        au += a.rc[3] * ur + a.rcm[3] * dl;
        dg = a.rd;
    } else {
        dg = __ldg(a.d + p);
        au = dg * mc;
        au += __ldg(a.c[0] + p) * mr + __ldg(a.c[0] + p - a.doff[0]) * ml;
        au += __ldg(a.c[1] + p) * ul + __ldg(a.c[1] + p - a.doff[1]) * dr;
        au += __ldg(a.c[2] + p) * uc + __ldg(a.c[2] + p - a.doff[2]) * dc;
        au += __ldg(a.c[3] + p) * ur + __ldg(a.c[3] + p - a.doff[3]) * dl;
    }
    return mc + omega * (bp - au) / dg;
}

/* A lane's two columns of one row. */
typedef struct st_bm_row {
    double v[2];
} st_bm_row;

/* One stage: the colour's points (column h of the lane) on row q, from rows D (q - 1), M (q)
 * and U (q + 1); M's value is replaced. Every lane takes part in the shuffles. */
__device__ __forceinline__ void st_bm_stage(const st_args &a, int lane_c0, int h, int q, bool upd, ptrdiff_t p,
                                            double omega, double bp, const st_bm_row &D, st_bm_row &M,
                                            const st_bm_row &U)
{
    if (h == 0) {
        const double dl = __shfl_up_sync(0xffffffffu, D.v[1], 1), ml = __shfl_up_sync(0xffffffffu, M.v[1], 1),
                     ul = __shfl_up_sync(0xffffffffu, U.v[1], 1);
        if (upd)
            M.v[0] = st_box_point(a, st_in_box(a, lane_c0, q, 0), p, omega, bp, dl, D.v[0], D.v[1], ml, M.v[0],
                                  M.v[1], ul, U.v[0], U.v[1]);
    } else {
        const double dr = __shfl_down_sync(0xffffffffu, D.v[0], 1), mr = __shfl_down_sync(0xffffffffu, M.v[0], 1),
                     ur = __shfl_down_sync(0xffffffffu, U.v[0], 1);
        if (upd)
            M.v[1] = st_box_point(a, st_in_box(a, lane_c0 + 1, q, 0), p + 1, omega, bp, D.v[0], D.v[1], dr,
                                  M.v[0], M.v[1], mr, U.v[0], U.v[1], ur);
    }
}

static __global__ void __launch_bounds__(256) k_box2m(st_cgeo c, st_args a, st_bt t, const double *__restrict__ u,
                                                      double *__restrict__ out, double omega)
{
    const int lane = (int)(threadIdx.x & 31), wx = (int)(blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5));
    const int nx = c.n[0], ny = c.n[1];
    if (wx * ST_BM_OWN >= nx) return; /* the whole warp */
    const int x0 = wx * ST_BM_OWN - 4, c0 = x0 + 2 * lane;
    bool col[2], inner[2], own[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        col[h] = c0 + h >= -1 && c0 + h <= nx;
        inner[h] = c0 + h >= 0 && c0 + h < nx;
        own[h] = lane >= 2 && lane <= 29 && inner[h];
    }
    /* each colour's column of the lane (x0 is even: the same on every lane), and the rows of the
     * first colour (whole-grid parities: the grid starts at c.s) */
    int hc[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
        hc[k] = ((t.cx[k] - c.s[0]) % 2 + 2) % 2;
    const int py = ((t.cy[0] - c.s[1]) % 2 + 2) % 2;
    const int r0 = (int)blockIdx.y * ST_BM_ROWS, r1 = min(r0 + ST_BM_ROWS, ny);
    int e = r0 - 2;
    e -= ((e - py) % 2 + 2) % 2; /* the first colour's row at or below r0 - 2 */
    const ptrdiff_t sy = c.sy, base = c.origin + c0;
    const double *__restrict__ b = a.b;
#define ST_BM_U(w, r)                                                                                        \
    do {                                                                                                     \
        _Pragma("unroll") for (int h = 0; h < 2; h++)(w).v[h] =                                              \
            col[h] && (r) >= -1 && (r) <= ny ? __ldg(u + base + h + (ptrdiff_t)(r) * sy) : 0.0;             \
    } while (0)
#define ST_BM_B(w, r)                                                                                        \
    do {                                                                                                     \
        _Pragma("unroll") for (int h = 0; h < 2; h++)(w).v[h] =                                              \
            inner[h] && (r) >= 0 && (r) < ny ? __ldg(b + base + h + (ptrdiff_t)(r) * sy) : 0.0;             \
    } while (0)
    /* u of rows e - 4 .. e + 1 (as far as the stages have taken them), b of rows e - 3 .. e */
    st_bm_row w0, w1, w2, w3, w4, w5, b1, b2, b3, b4, nu4, nu5, nb3, nb4;
    ST_BM_U(w0, e - 4);
    ST_BM_U(w1, e - 3);
    ST_BM_U(w2, e - 2);
    ST_BM_U(w3, e - 1);
    ST_BM_B(b1, e - 3);
    ST_BM_B(b2, e - 2);
    ST_BM_U(nu4, e);
    ST_BM_U(nu5, e + 1);
    ST_BM_B(nb3, e - 1);
    ST_BM_B(nb4, e);
#pragma unroll 1
    for (; e <= r1 + 2; e += 2) {
        w4 = nu4, w5 = nu5, b3 = nb3, b4 = nb4;
        /* the next step's loads are in flight during this step's updates */
        ST_BM_U(nu4, e + 2);
        ST_BM_U(nu5, e + 3);
        ST_BM_B(nb3, e + 1);
        ST_BM_B(nb4, e + 2);
#define ST_BM_STAGE(k, q, D, M, U, B)                                                                         \
    st_bm_stage(a, c0, hc[k], (q), (q) >= 0 && (q) < ny && (hc[k] ? inner[1] : inner[0]),                  \
                base + (ptrdiff_t)(q) * sy, omega, hc[k] ? (B).v[1] : (B).v[0], D, M, U)
        ST_BM_STAGE(0, e, w3, w4, w5, b4);
        ST_BM_STAGE(1, e - 1, w2, w3, w4, b3);
        ST_BM_STAGE(2, e - 2, w1, w2, w3, b2);
        ST_BM_STAGE(3, e - 3, w0, w1, w2, b1);
#undef ST_BM_STAGE
        /* rows e - 2 and e - 3 are done */
#pragma unroll
        for (int h = 0; h < 2; h++) {
            if (!own[h]) continue;
            if (e - 2 >= r0 && e - 2 < r1) out[base + h + (ptrdiff_t)(e - 2) * sy] = w2.v[h];
            if (e - 3 >= r0 && e - 3 < r1) out[base + h + (ptrdiff_t)(e - 3) * sy] = w1.v[h];
        }
        w0 = w2, w1 = w3, w2 = w4, w3 = w5, b1 = b3, b2 = b4;
    }
#undef ST_BM_U
#undef ST_BM_B
}

/* The one-pass sweeps from this many unknowns: the star stencils' (k_rb2, k_rb3) and the box
 * stencils' march (k_box2m), where smaller box levels take the tiles. A warp's march is a chain of
 * steps (each waits for its shuffles), so it wins where the grid gives enough warps to hide that
 * and the passes it replaces read more (one H200: the star's 0.87x the parity passes' time at
 * 4095^2, 1.1x at 2047^2, 5x on a 63^2 level). The tiles' blocks are a chain too (their loads,
 * four colours, a barrier after each: about 10 us), which the four colour passes' launches cost
 * on small levels (250^2 and smaller: 17 us a sweep in tiles, 18-22 in colour passes; 2000^2:
 * 77.5 and 78 us; 4000^2: 274 and 257 us). */
#define ST_RB_MIN ((size_t)1 << 23)
static size_t st_rb_min = ST_RB_MIN;

extern "C" void hri_st_cuda_set_pair_min(size_t unknowns)
{
    st_rb_min = unknowns ? unknowns : ST_RB_MIN;
}

int hri_st_cu_box_pair_ok(const st_cuda *d, const hr_sop *A)
{
    const hr_sgrid *g = &A->g;
    if (d->comm || kind_of(A) != 4) return 0;
    for (int a = 0; a < 2; a++)
        if (g->periodic[a] || g->gper[a] || g->gn[a] < 2 || g->n[a] <= 0) return 0;
    for (int q = 0; q < 4; q++)
        if (A->off[q][0] < -1 || A->off[q][0] > 1 || A->off[q][1] < -1 || A->off[q][1] > 1) return 0;
    return 1;
}

/* The rows a block of 256 threads marches in a one-pass sweep of a grid of bx blocks across and
 * n rows: the count in [32, 128] whose launch takes the fewest steps (hri_march_rows; `extra`:
 * the rows a segment starts early and ends late). A last wave with a few blocks costs as much
 * as a full one (8000^2, the uniform star at three blocks an SM of an H200: 2125 blocks of 64
 * rows are 5.4 waves, 1173 of 116 rows 2.96). */
static int march_rows(st_cuda *d, const void *kernel, int bx, int n, int extra)
{
    int sms = 0, per = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d->dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, 256, 0) != cudaSuccess || sms < 1 || per < 1) {
        (void)cudaGetLastError();
        return 64;
    }
    return hri_march_rows((long)sms * per, bx, n, extra, 32, 128);
}

/* Whether k_box2m takes A with the colours of t: its offsets in hri_sop_shape's order (its terms
 * are written out in that order), the colours alternating between the two row parities and the
 * two colours of a row on different columns. */
static int box_march_ok(const hr_sop *A, const st_bt *t)
{
    static const int off[4][2] = {{1, 0}, {-1, 1}, {0, 1}, {1, 1}};
    for (int q = 0; q < 4; q++)
        if (A->off[q][0] != off[q][0] || A->off[q][1] != off[q][1]) return 0;
    for (int q = 0; q < 2; q++)
        if (t->cy[q] != t->cy[q + 2] || t->cy[q] == t->cy[q + 1] || t->cx[q] == t->cx[q + 2]) return 0;
    return 1;
}

void hri_st_cu_box_sweep(st_cuda *d, const hr_sop *A, const double *u, const double *b, double *out, double omega,
                         int reverse)
{
    hri_st_cu_use(d);
    const hr_sgrid *g = &A->g;
    int cls[27][3];
    if (hri_st_colours(A, cls) != 4) {
        ST_CU(d, cudaErrorInvalidConfiguration);
        return;
    }
    st_bt t;
    for (int q = 0; q < 4; q++) {
        const int k = reverse ? 3 - q : q;
        t.cx[q] = cls[k][0], t.cy[q] = cls[k][1];
        t.ox[q] = A->off[q][0], t.oy[q] = A->off[q][1];
    }
    st_cgeo c;
    memset(&c, 0, sizeof c);
    c.n[0] = g->n[0], c.n[1] = g->n[1];
    c.sy = g->st[1];
    c.origin = g->origin;
    c.s[0] = g->goff[0], c.s[1] = g->goff[1];
    const int march = g->count >= st_rb_min && box_march_ok(A, &t);
    const dim3 grid = march ? dim3((unsigned)(((g->n[0] + ST_BM_OWN - 1) / ST_BM_OWN + 7) / 8),
                                   (unsigned)((g->n[1] + ST_BM_ROWS - 1) / ST_BM_ROWS), 1)
                            : dim3((unsigned)((g->n[0] + ST_BT_OWN - 1) / ST_BT_OWN),
                                   (unsigned)((g->n[1] + ST_BT_OWN - 1) / ST_BT_OWN), 1);
    if (grid.y > 65535) {
        ST_CU(d, cudaErrorInvalidConfiguration);
        return;
    }
    st_args a = args_of(A);
    a.b = b;
    if (march)
        k_box2m<<<grid, 256, 0, d->st>>>(c, a, t, u, out, omega);
    else
        k_box2t<<<grid, ST_BT_THREADS, 0, d->st>>>(c, a, t, u, out, omega);
    ST_LAUNCHED(d);
}

int hri_st_cu_rb_pair_ok(const st_cuda *d, const hr_sop *A)
{
    const hr_sgrid *g = &A->g;
    if (d->comm || g->count < st_rb_min || !hri_st_cu_parity_ok(A)) return 0;
    for (int a = 0; a < g->dim; a++)
        if (g->periodic[a] || g->gper[a] || g->n[a] <= 0) return 0;
    return 1;
}

void hri_st_cu_rb_sweep(st_cuda *d, const hr_sop *A, const double *u, const double *b, double *out, double omega,
                        int p0, const st_prolong *pro, const st_after *after)
{
    hri_st_cu_use(d);
    const hr_sgrid *g = &A->g;
    st_cgeo c;
    memset(&c, 0, sizeof c);
    c.n[0] = g->n[0], c.n[1] = g->n[1], c.n[2] = g->dim == 3 ? g->n[2] : 1;
    c.sy = g->st[1];
    c.sz = g->dim == 3 ? g->st[2] : 0;
    c.origin = g->origin;
    c.s[2] = g->goff[0] + g->goff[1] + (g->dim == 3 ? g->goff[2] : 0); /* the whole-grid parity's offset */
    st_args a = args_of(A);
    a.b = b;
    if ((g->dim == 3 && pro) || (after && !hri_st_cu_rb_res_ok(d, A))) { /* k_rb3 adds no prolongation */
        ST_CU(d, cudaErrorInvalidConfiguration);
        return;
    }
    if (g->dim == 3) {
        /* 64 planes a block, fewer (down to 16) until the grid has 1024 blocks: a block's march
         * is a chain of steps, and a few waves of blocks leave SMs idle at its end (one H200,
         * 255^3: 250 us a sweep with 440 blocks of 64 planes, two parity passes 230 us) */
        const unsigned bx = (unsigned)((g->n[0] + ST_RB_OWN - 1) / ST_RB_OWN),
                       by = (unsigned)((g->n[1] + ST_RB3_OWN_Y - 1) / ST_RB3_OWN_Y);
        int planes = 64;
        while (planes > 16 && (size_t)bx * by * (size_t)((g->n[2] + planes - 1) / planes) < 1024)
            planes /= 2;
        const dim3 block3(32 * ST_RB3_W, 1, 1), grid3(bx, by, (unsigned)((g->n[2] + planes - 1) / planes));
        if (grid3.y > 65535 || grid3.z > 65535) {
            ST_CU(d, cudaErrorInvalidConfiguration);
            return;
        }
        if (A->uniform)
            k_rb3<true><<<grid3, block3, 0, d->st>>>(c, a, u, out, omega, p0, planes);
        else
            k_rb3<false><<<grid3, block3, 0, d->st>>>(c, a, u, out, omega, p0, planes);
        ST_LAUNCHED(d);
        return;
    }
    const int own = after ? ST_RB_OWN_RES : ST_RB_OWN, warps = (g->n[0] + own - 1) / own, bx = (warps + 7) / 8;
    typedef void (*rb2_fn)(st_cgeo, st_args, st_pro, const double *, double *, double, int, int, st_rres);
    const rb2_fn kern = after ? (pro ? k_rb2<true, true, true> : k_rb2<true, false, true>)
                        : pro ? (A->uniform ? k_rb2<true, true, false> : k_rb2<false, true, false>)
                              : (A->uniform ? k_rb2<true, false, false> : k_rb2<false, false, false>);
    const int rows = march_rows(d, (const void *)kern, bx, g->n[1], after ? 5 : 4);
    const dim3 block(256, 1, 1), grid(bx, (g->n[1] + rows - 1) / rows, 1);
    if (grid.y > 65535) {
        ST_CU(d, cudaErrorInvalidConfiguration);
        return;
    }
    st_pro P;
    memset(&P, 0, sizeof P);
    if (pro) {
        P.ax = hri_st_cu_dax(&pro->ax[0], 1), P.ay = hri_st_cu_dax(&pro->ax[1], 1);
        P.ec = pro->ec, P.corg = pro->cg->origin, P.csy = pro->cg->st[1];
    }
    st_rres R = {after ? after->r : NULL, NULL, warps};
    st_geo G; /* the norm's partials: a row's warps, as k_red_chunks sums a grid's segments */
    memset(&G, 0, sizeof G);
    G.ny = g->n[1], G.nz = 1, G.nsegx = warps;
    if (after && after->rr && !(R.seg = hri_st_cu_seg(d, G))) return;
    kern<<<grid, block, 0, d->st>>>(c, a, P, u, out, omega, p0, rows, R);
    ST_LAUNCHED(d);
    if (after && after->rr) *after->rr = hri_st_cu_reduce(d, G);
}

int hri_st_cu_rb_res_ok(const st_cuda *d, const hr_sop *A)
{
    return A->g.dim == 2 && A->uniform && hri_st_cu_rb_pair_ok(d, A);
}
