/*
 * Multigrid cycles on a thread team: smoothing, residual, restriction, coarse solve and
 * prolongation per level, as one SPMD job. Levels below HR_MG_THREADED_POINTS run on worker 0
 * alone (their sweeps are shorter than a barrier); barriers go only where a threaded
 * operation follows a serial one or ends.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "methods/krylov/cg.h"
#include "methods/mg/mg_gpu.h"
#include "methods/mg/mg_internal.h"
#include "methods/mg/mg_walk.h"

void hri_mg_part(const mg_worker *w, int threaded, int slices, int *s0, int *s1)
{
    if (!threaded || w->nt == 1) {
        *s0 = 1;
        *s1 = w->tid == 0 ? slices + 1 : 1;
        return;
    }
    const int base = slices / w->nt, extra = slices % w->nt, t = w->tid;
    *s0 = 1 + t * base + (t < extra ? t : extra);
    *s1 = *s0 + base + (t < extra ? 1 : 0);
}

void hri_mg_begin(const mg_worker *w, int threaded)
{
    if (w->team && threaded && w->tls->last_serial) hri_team_barrier(w->team);
}

void hri_mg_end(const mg_worker *w, int threaded)
{
    if (w->team && threaded) hri_team_barrier(w->team);
    w->tls->last_serial = !threaded;
}

static hr_grid *cur_u(mg_hier *H, const mg_worker *w, int l)
{
    return &H->lev[l].u[w->tls->cur[l]];
}

/* One weighted Jacobi sweep (the operator layer's region sweep) u[cur] -> u[1 - cur]. */
static void sweep(mg_hier *H, const mg_worker *w, int l, double omega)
{
    mg_level *L = &H->lev[l];
    int s0, s1;
    hri_mg_begin(w, L->threaded);
    hri_mg_part(w, L->threaded, L->slices, &s0, &s1);
    const int c = w->tls->cur[l];
    if (s0 < s1) {
        hr_sweep_args a = {&L->l,  hr_grid_origin(&L->u[c]), hr_grid_origin(&L->u[1 - c]),
                           L->rhs, mg_slice_box(L, s0, s1),  omega};
        hri_cpu_sweep_box(&a);
    }
    hri_mg_end(w, L->threaded);
    w->tls->cur[l] = 1 - c;
}

/* One red-black sweep in one pass: colour c1 on slice s, then colour c2 on slice s - 1 (whose
 * c1 neighbours are final by then). The c2 update of a worker's first and last slices needs
 * its neighbours' c1, so it waits for a barrier. Bitwise the two-pass sweep, for any split. */
static void rb_sweep(mg_hier *H, const mg_worker *w, int l, int c1, int c2)
{
    mg_level *L = &H->lev[l];
    hr_grid *u = cur_u(H, w, l);
    int s0, s1;
    hri_mg_begin(w, L->threaded);
    hri_mg_part(w, L->threaded, L->slices, &s0, &s1);
    /* slices next to another worker's: strict (see hri_mg_redblack) */
    const int shared = w->team && L->threaded;
    for (int s = s0; s < s1; s++) {
        hri_mg_redblack(L, u, c1, shared && (s == s0 || s == s1 - 1), s, s + 1);
        if (s - 1 > s0) hri_mg_redblack(L, u, c2, 0, s - 1, s);
    }
    if (shared) hri_team_barrier(w->team);
    if (s0 < s1) hri_mg_redblack(L, u, c2, shared, s0, s0 + 1);
    if (s1 - 1 > s0) hri_mg_redblack(L, u, c2, shared, s1 - 1, s1);
    hri_mg_end(w, L->threaded);
}

/* The level operations the smoothers are made of (mg_smoother.h), on this worker. */
typedef struct cpu_level {
    mg_hier *H;
    const mg_worker *w;
} cpu_level;

static void cpu_jacobi(void *ctx, int l)
{
    cpu_level *c = ctx;
    sweep(c->H, c->w, l, c->H->omega);
}

static void cpu_redblack(void *ctx, int l, int first)
{
    cpu_level *c = ctx;
    rb_sweep(c->H, c->w, l, first, 1 - first);
}

static void cpu_cheby(void *ctx, int l, int m)
{
    cpu_level *c = ctx;
    mg_hier *H = c->H;
    const mg_worker *w = c->w;
    mg_level *L = &H->lev[l];
    const int cu = w->tls->cur[l];
    sweep(H, w, l, 1.0); /* u[1 - cu] = J(u[cu]) */
    w->tls->cur[l] = cu;
    int s0, s1;
    hri_mg_begin(w, L->threaded);
    hri_mg_part(w, L->threaded, L->slices, &s0, &s1);
    const int mm = m < HR_MG_CHEBY_MAX ? m : HR_MG_CHEBY_MAX - 1;
    if (s0 < s1) hri_mg_cheby_update(L, &L->u[cu], &L->u[1 - cu], &L->d, H->cheby_a[mm], H->cheby_b[mm], s0, s1);
    hri_mg_end(w, L->threaded);
}

/* no asynchronous passes on the CPU: async3 smooths red-black here */
static const mg_level_ops cpu_ops = {cpu_jacobi, cpu_redblack, cpu_cheby, NULL};

/* `n` smoothing steps; `post` reverses the order of a symmetric cycle's smoother (the
 * V-cycle is then symmetric). */
static void smooth(mg_hier *H, const mg_worker *w, int l, int n, int post)
{
    cpu_level c = {H, w};
    for (int m = 0; m < n; m++)
        H->smoother->smooth(&cpu_ops, &c, l, m, post && H->symmetric);
}

/* Serial dot product over a whole level, in slice order. */
static double serial_dot(mg_hier *H, const mg_level *L, const hr_grid *x, const hr_grid *y)
{
    hri_mg_dot_slices(L, x, y, H->part, 1, L->slices + 1);
    double s = 0.0;
    for (int i = 1; i <= L->slices; i++)
        s += H->part[i];
    return s;
}

/* The coarsest level's CG vectors (worker 0 alone: no barriers): x = u[cur], p = cp, q = d, r;
 * sc: the scale of r and p, divided out of x's update. */
typedef struct coarse_cg {
    mg_hier *H;
    mg_level *L;
    hr_grid *x, *p, *q, *r;
    double sc, stop;
    int S;
} coarse_cg;

static double coarse_apply_dot(void *ctx)
{
    coarse_cg *c = ctx;
    hri_mg_apply(c->L, c->p, c->q, 1, c->S);
    return serial_dot(c->H, c->L, c->p, c->q);
}

static double coarse_update(void *ctx, double alpha)
{
    coarse_cg *c = ctx;
    hri_mg_axpy_scaled(c->L, alpha, 1.0 / c->sc, c->p, c->x, 1, c->S);
    hri_mg_axpy(c->L, -alpha, c->q, c->r, 1, c->S);
    return serial_dot(c->H, c->L, c->r, c->r);
}

static void coarse_xpay(void *ctx, double beta)
{
    coarse_cg *c = ctx;
    hri_mg_xpay(c->L, c->r, beta, c->p, 1, c->S);
}

/* to rounding: r . r below `stop` (relative to the start) ends the solve */
static int coarse_check(void *ctx, long k, double rr)
{
    (void)k;
    return !(rr > ((coarse_cg *)ctx)->stop);
}

/* The coarsest level solved to rounding: one exact Jacobi update for a single point, else
 * CG on worker 0 (x = u[cur] starts at zero; scratch: u[1 - cur] as p, d as A p, r). An
 * fp64 level's r and p are scaled into range first (mg_range_scale), x's update divides the
 * scale out: squares of 1e-200 underflow, and the CG would stop before its first step (fp32
 * values square within fp64's range). A breakdown (p . A p <= 0, rounding on a nearly solved
 * level) ends it where it is. */
static void coarse_solve(mg_hier *H, const mg_worker *w, int l)
{
    mg_level *L = &H->lev[l];
    if (hr_layout_points(&L->l) == 1) {
        sweep(H, w, l, 1.0);
        return;
    }
    hri_mg_begin(w, 0);
    if (w->tid == 0) {
        const int S = L->slices + 1;
        coarse_cg c = {H, L, &L->u[w->tls->cur[l]], &L->cp, &L->d, &L->r, 1.0, 0.0, S};
        hri_mg_resid(L, c.x, c.r, 1, S);
        if (H->esize == 8) {
            hri_mg_absmax_slices(L, c.r, H->part, 1, S);
            double mx = 0.0;
            for (int i = 1; i < S; i++)
                if (!(H->part[i] <= mx)) mx = H->part[i];
            c.sc = mg_range_scale(mx);
            if (c.sc != 1.0) hri_mg_convert(L, c.r, c.r, 0, c.sc, 1, S);
        }
        hri_mg_convert(L, c.r, c.p, 0, 1.0, 1, S);
        hr_cg_scalars sc;
        sc.rr = sc.rz = serial_dot(H, L, c.r, c.r);
        c.stop = sc.rr * (H->esize == 8 ? 1e-28 : 1e-12);
        /* no step unless rr > stop (the recurrence itself tests rr > 0); the check hook
         * tests it after every step */
        const hr_cg_ops ops = {.ctx = &c,
                               .apply_dot = coarse_apply_dot,
                               .update = coarse_update,
                               .xpay = coarse_xpay,
                               .check = coarse_check};
        hr_cg_out out;
        hri_cg_iterate(&ops, &sc, sc.rr > c.stop ? 4 * (long)hr_layout_points(&L->l) + 50 : 0, &out);
    }
    hri_mg_end(w, 0);
}

/* Residual and restriction slice by slice, while the residual is in cache: a worker owns
 * coarse slices [S0, S1) and the fine slices 2S and 2S + 1 of each (and fine slice 1 with
 * coarse slice 1); coarse slice S0 also needs fine slice 2 S0 - 1 of the previous worker, so
 * it is restricted after a barrier. The same arithmetic as the two separate passes. */
static void resid_restrict(mg_hier *H, const mg_worker *w, int l)
{
    mg_level *L = &H->lev[l], *C = &H->lev[l + 1];
    const hr_grid *u = cur_u(H, w, l);
    int S0, S1;
    hri_mg_begin(w, L->threaded);
    hri_mg_part(w, L->threaded, C->slices, &S0, &S1);
    for (int S = S0; S < S1; S++) {
        hri_mg_resid(L, u, &L->r, S == 1 ? 1 : 2 * S, 2 * S + 2);
        if (S > S0 || S == 1) hri_mg_restrict(L, C, S, S + 1);
    }
    if (w->team && L->threaded) hri_team_barrier(w->team);
    if (S0 < S1 && S0 > 1) hri_mg_restrict(L, C, S0, S0 + 1);
    hri_mg_end(w, L->threaded);
}

/* Residual of level l restricted to the right-hand side of level l + 1, whose iterate is zeroed. */
static void descend(mg_hier *H, const mg_worker *w, int l)
{
    mg_level *L = &H->lev[l], *C = &H->lev[l + 1];
    if (H->separate_passes) {
        MG_SLICE_OP(w, L, hri_mg_resid(L, cur_u(H, w, l), &L->r, s0, s1));
        MG_SLICE_OP(w, C, hri_mg_restrict(L, C, s0, s1));
    } else {
        resid_restrict(H, w, l);
    }
    MG_SLICE_OP(w, C, hri_mg_zero(C, cur_u(H, w, l + 1), s0, s1));
}

static void ascend(mg_hier *H, const mg_worker *w, int l, int add)
{
    mg_level *L = &H->lev[l], *C = &H->lev[l + 1];
    MG_SLICE_OP(w, L, hri_mg_prolong(C, cur_u(H, w, l + 1), L, cur_u(H, w, l), add, s0, s1));
}

/* The cycle's level operations (mg_walk.h) on this worker. */
static void walk_pre(void *ctx, int l)
{
    cpu_level *c = ctx;
    smooth(c->H, c->w, l, c->H->pre, 0);
}

static void walk_post(void *ctx, int l)
{
    cpu_level *c = ctx;
    smooth(c->H, c->w, l, c->H->post, 1);
}

static void walk_down(void *ctx, int l)
{
    cpu_level *c = ctx;
    descend(c->H, c->w, l);
}

static void walk_up(void *ctx, int l, int add)
{
    cpu_level *c = ctx;
    ascend(c->H, c->w, l, add);
}

static void walk_coarse(void *ctx, int l)
{
    cpu_level *c = ctx;
    coarse_solve(c->H, c->w, l);
}

/* the full multigrid descent: level l's iterate zeroed, its residual (its right-hand side)
 * restricted */
static void walk_fmg_down(void *ctx, int l)
{
    cpu_level *c = ctx;
    mg_level *L = &c->H->lev[l];
    const mg_worker *w = c->w;
    MG_SLICE_OP(w, L, hri_mg_zero(L, cur_u(c->H, w, l), s0, s1));
    descend(c->H, w, l);
}

static hri_mg_walk cpu_walk(mg_hier *H, cpu_level *c)
{
    hri_mg_walk k = {.ctx = c,
                     .last = H->nlev - 1,
                     .fmg_cycles = H->fmg_cycles,
                     .pre = walk_pre,
                     .post = walk_post,
                     .down = walk_down,
                     .up = walk_up,
                     .coarse = walk_coarse,
                     .fmg_down = walk_fmg_down,
                     .take = NULL};
    return k;
}

void hri_mg_cycle(mg_hier *H, const mg_worker *w, int l, hr_mg_cycle type, int symmetric)
{
    (void)symmetric;
    cpu_level c = {H, w};
    const hri_mg_walk k = cpu_walk(H, &c);
    hri_mg_walk_cycle(&k, l, type);
}

void hri_mg_fmg(mg_hier *H, const mg_worker *w, int symmetric)
{
    hri_mg_fmg_part(H, w, symmetric, 1);
}

void hri_mg_fmg_part(mg_hier *H, const mg_worker *w, int symmetric, int add0)
{
    (void)symmetric;
    cpu_level c = {H, w};
    const hri_mg_walk k = cpu_walk(H, &c);
    hri_mg_walk_fmg(&k, add0);
}

static void free_grid(hr_grid *g)
{
    if (g->base) hri_grid_free(g);
    g->base = NULL;
}

hr_status hri_mg_hier_build(mg_hier *H, int dim, int nx, int ny, int nz, int nlev, size_t esize, int threads)
{
    (void)threads;
    H->nlev = nlev;
    H->esize = esize;
    /* trilinear interpolation leaves about 1.5 pi^2 h^2 of error on each new level, more than
     * one V-cycle (factor ~0.07) takes below the discretisation error (~0.8 h^2): two in 3-D */
    H->fmg_cycles = dim == 3 ? 2 : 1;
    int maxslices = 0;
    for (int l = 0; l < nlev; l++) {
        mg_level *L = &H->lev[l];
        if (!hr_layout_init(&L->l, dim, nx, ny, nz, esize)) return HR_ERR_NO_MEMORY;
        L->slices = dim == 3 ? nz : ny;
        if (L->slices > maxslices) maxslices = L->slices;
        L->threaded = hr_layout_points(&L->l) >= HR_MG_THREADED_POINTS;
        hr_status st;
        for (int b = 0; b < 2; b++)
            if ((st = hri_grid_alloc_huge(&L->u[b], &L->l, H->hugepages)) != HR_OK) return st;
        if ((st = hri_grid_alloc_huge(&L->hf, &L->l, H->hugepages)) != HR_OK) return st;
        if ((st = hri_grid_alloc_huge(&L->r, &L->l, H->hugepages)) != HR_OK) return st;
        if ((H->smoother->scratch || l == nlev - 1) &&
            (st = hri_grid_alloc_huge(&L->d, &L->l, H->hugepages)) != HR_OK)
            return st;
        if (l == nlev - 1 && (st = hri_grid_alloc_huge(&L->cp, &L->l, H->hugepages)) != HR_OK) return st;
        L->rhs = (hr_rhs_view){hr_grid_origin(&L->hf), -1, -1, -1};
        nx = (nx - 1) / 2;
        ny = (ny - 1) / 2;
        nz = dim == 3 ? (nz - 1) / 2 : nz;
    }
    H->part = calloc((size_t)maxslices + 2, sizeof *H->part);
    if (!H->part) return HR_ERR_NO_MEMORY;
    hri_mg_cheby_coeffs(dim, H->cheby_a, H->cheby_b);
    return HR_OK;
}

/* Chebyshev on [lo, 2] of D^-1 A: the high frequencies (lo = 1/2 in 2-D, 1/3 in 3-D). */
void hri_mg_cheby_coeffs(int dim, double *a, double *b)
{
    const double lo = dim == 3 ? 1.0 / 3.0 : 0.5, hi = 2.0;
    const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
    double rho = 1.0 / sigma;
    a[0] = 0.0;
    b[0] = 1.0 / theta;
    for (int m = 1; m < HR_MG_CHEBY_MAX; m++) {
        const double rho1 = 1.0 / (2.0 * sigma - rho);
        a[m] = rho1 * rho;
        b[m] = 2.0 * rho1 / delta;
        rho = rho1;
    }
}

void hri_mg_hier_free(mg_hier *H)
{
    for (int l = 0; l < H->nlev; l++) {
        mg_level *L = &H->lev[l];
        free_grid(&L->u[0]);
        free_grid(&L->u[1]);
        free_grid(&L->hf);
        free_grid(&L->r);
        free_grid(&L->d);
        free_grid(&L->cp);
    }
    free(H->part);
    H->part = NULL;
}

/* First touch by the worker that will use the slices: rings and interiors. */
void hri_mg_hier_init(mg_hier *H, const mg_worker *w, double bc0)
{
    for (int l = 0; l < H->nlev; l++) {
        mg_level *L = &H->lev[l];
        int s0, s1;
        hri_mg_begin(w, L->threaded);
        hri_mg_part(w, L->threaded, L->slices, &s0, &s1);
        /* the ring slices go with the first and last workers */
        if (s0 == 1 && s1 > s0) s0 = 0;
        if (s1 == L->slices + 1 && s1 > s0) s1 = L->slices + 2;
        if (s0 < s1) {
            for (int b = 0; b < 2; b++)
                hri_grid_init_rows(&L->u[b], s0, s1, l == 0 ? bc0 : 0.0);
            hri_grid_init_rows(&L->hf, s0, s1, 0.0);
            hri_grid_init_rows(&L->r, s0, s1, 0.0);
            if (L->d.base) hri_grid_init_rows(&L->d, s0, s1, 0.0);
            if (L->cp.base) hri_grid_init_rows(&L->cp, s0, s1, 0.0);
        }
        hri_mg_end(w, L->threaded);
        w->tls->cur[l] = 0;
    }
}
