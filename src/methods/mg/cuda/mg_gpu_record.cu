/*
 * Multigrid on the GPU: the recorder. It walks the cycle's recursion (mg_walk.h: V, W, F,
 * the FMG pass) over recording level operations, and the steps of mg_solve.c (the defect
 * correction, a CG iteration, the CG start), and writes the operators of one iteration into
 * g->ops, tracking which of each level's two buffers holds the iterate. Three rewrites keep
 * the arithmetic and save passes: the cycle's last level-0 red-black sweep writes straight
 * into the fp64 outer level, a sweep that starts from a freshly zeroed iterate reads no
 * iterate (its zeroing is dropped), and on big 2-D levels two red-black sweeps, and the
 * prolongation before them, are one pass (OPK_RBF).
 */
#include <stdlib.h>
#include <string.h>

#include "methods/mg/cuda/mg_gpu_internal.cuh"
#include "methods/mg/mg_walk.h"

static void append(mg_gpu *g, mgg_op o)
{
    if (g->nops == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 256;
        g->ops = (mgg_op *)realloc(g->ops, (size_t)g->cap * sizeof *g->ops);
        if (!g->ops) abort(); /* host memory for a few thousand operators */
    }
    g->ops[g->nops++] = o;
}

/* Before an operator that uses level l's iterate: a pending zero is now needed (written by
 * its producer as recorded; after the check, an explicit zeroing). */
static void zero_needed(mg_gpu *g, int l)
{
    if (g->zpend[l] == -2) {
        mgg_op z = {OPK_ZERO, l, cur_of(g, l), 0, 0, 0, 0.0, 0.0};
        append(g, z);
    }
    g->zpend[l] = -1;
}

/* Appends an operator. A one-pass red-black sweep on a level whose iterate was just zeroed
 * reads no iterate, and the zeroing is dropped (nothing else reads that buffer before the
 * sweep's output replaces it). */
static void rec(mg_gpu *g, int kind, int lev, int a, int b, int c, double x, double y)
{
    mgg_op o = {kind, lev, a, b, c, 0, x, y};
    if ((kind == OPK_RB || kind == OPK_RBF) && g->zpend[lev] != -1) {
        const int p = g->zpend[lev];
        if (p >= 0 && g->ops[p].kind == OPK_RESTRICT) g->ops[p].c = 1;
        if (p >= 0 && g->ops[p].kind == OPK_TO_L0) g->ops[p].b = 1;
        g->zpend[lev] = -1;
        o.x = 1.0;
    } else if (kind < OPK_HIER_END) {
        zero_needed(g, lev);
        if (kind == OPK_PROLONG) zero_needed(g, lev + 1);
    } else if (kind == OPK_FROM_L0 && g->nlev > 0) {
        zero_needed(g, 0);
    }
    append(g, o);
    if (kind == OPK_RESTRICT) g->zpend[lev + 1] = g->nops - 1;
    if (kind == OPK_TO_L0) g->zpend[0] = g->nops - 1;
}

static void flip(mg_gpu *g, int l)
{
    g->cur ^= 1u << l;
}

static void rec_sweep(mg_gpu *g, int l, double omega)
{
    rec(g, OPK_JACOBI, l, cur_of(g, l), 0, 0, omega, 0.0);
    flip(g, l);
}

/* The level operations the smoothers are made of (mg_smoother.h), recorded. */
static void rec_jacobi(void *ctx, int l)
{
    mg_gpu *g = (mg_gpu *)ctx;
    rec_sweep(g, l, g->s.omega);
}

/* Red-black on level l fused across sweeps (OPK_RBF): 2-D levels of at least fuse_points
 * points that run their own kernels. */
static int fusable(const mg_gpu *g, int l)
{
    const mgg_lev *L = &g->lev[l];
    return g->s.dim == 2 && l < g->first_small && g->s.fuse_points > 0 &&
           (long)L->nx * L->ny >= g->s.fuse_points;
}

static void rec_redblack(void *ctx, int l, int c1)
{
    mg_gpu *g = (mg_gpu *)ctx;
    mgg_op *last = g->nops ? &g->ops[g->nops - 1] : NULL;
    if (g->s.rb_passes == 2) {
        rec(g, OPK_RB_HALF, l, cur_of(g, l), c1, 0, 0.0, 0.0);
        rec(g, OPK_RB_HALF, l, cur_of(g, l), 1 - c1, 0, 0.0, 0.0);
    } else if (!fusable(g, l)) {
        rec(g, OPK_RB, l, cur_of(g, l), c1, 0, 0.0, 0.0);
        flip(g, l);
    } else if (last && last->lev == l && last->kind == OPK_RBF && !(last->e & MGG_RBF_TWO)) {
        /* the second sweep joins the first: read u[a], written into u[a ^ 1] once (no flip) */
        last->e |= MGG_RBF_TWO | (c1 ? MGG_RBF_C2 : 0);
    } else if (last && last->lev == l && last->kind == OPK_PROLONG && last->a == cur_of(g, l)) {
        /* the prolongation is added as the rows come in (u[a] itself is not written) */
        const int cbuf = last->b, add = last->c;
        *last = mgg_op{OPK_RBF, l, cur_of(g, l), c1, 0, MGG_RBF_PRO | (add ? MGG_RBF_ADD : 0) | (cbuf ? MGG_RBF_CBUF : 0),
                       0.0, 0.0};
        flip(g, l);
    } else {
        rec(g, OPK_RBF, l, cur_of(g, l), c1, 0, 0.0, 0.0);
        flip(g, l);
    }
}

static void rec_cheby(void *ctx, int l, int m)
{
    mg_gpu *g = (mg_gpu *)ctx;
    const int mm = m < MG_GPU_CHEBY_MAX ? m : MG_GPU_CHEBY_MAX - 1;
    rec(g, OPK_CHEBY, l, cur_of(g, l), 0, 0, g->s.cheby_a[mm], g->s.cheby_b[mm]);
    flip(g, l);
}

/* the big levels only (in place); the small ones are not tiled */
static int rec_async(void *ctx, int l)
{
    mg_gpu *g = (mg_gpu *)ctx;
    if (l >= g->first_small) return 0;
    rec(g, OPK_ASYNC, l, cur_of(g, l), g->s.async_local, 0, 0.0, 0.0);
    return 1;
}

static const mg_level_ops rec_ops = {rec_jacobi, rec_redblack, rec_cheby, rec_async};

static void rec_smooth(mg_gpu *g, int l, int n, int post)
{
    for (int m = 0; m < n; m++)
        g->s.smoother->smooth(&rec_ops, g, l, m, post && g->s.symmetric);
}

static void rec_coarse(mg_gpu *g, int l)
{
    const mgg_lev *L = &g->lev[l];
    if ((long)L->nx * L->ny * L->nz == 1)
        rec_sweep(g, l, 1.0);
    else
        rec(g, OPK_COARSE_CG, l, cur_of(g, l), 0, 0, 0.0, 0.0);
}

static void rec_descend(mg_gpu *g, int l)
{
    rec(g, OPK_RESTRICT, l, cur_of(g, l), cur_of(g, l + 1), 0, 0.0, 0.0);
}

static void rec_ascend(mg_gpu *g, int l, int add)
{
    rec(g, OPK_PROLONG, l, cur_of(g, l), cur_of(g, l + 1), add, 0.0, 0.0);
}

/* The cycle's level operations (mg_walk.h), recorded. */
static void walk_pre(void *ctx, int l)
{
    mg_gpu *g = (mg_gpu *)ctx;
    rec_smooth(g, l, g->s.pre, 0);
}

static void walk_post(void *ctx, int l)
{
    mg_gpu *g = (mg_gpu *)ctx;
    rec_smooth(g, l, g->s.post, 1);
}

static void walk_down(void *ctx, int l)
{
    rec_descend((mg_gpu *)ctx, l);
}

static void walk_up(void *ctx, int l, int add)
{
    rec_ascend((mg_gpu *)ctx, l, add);
}

static void walk_coarse(void *ctx, int l)
{
    rec_coarse((mg_gpu *)ctx, l);
}

static void walk_fmg_down(void *ctx, int l)
{
    mg_gpu *g = (mg_gpu *)ctx;
    rec(g, OPK_ZERO, l, cur_of(g, l), 0, 0, 0.0, 0.0);
    rec_descend(g, l);
}

/* --coarse-on cpu: from level cpu_level down, the cycle (or the full multigrid pass's coarse
 * part) is the CPU's. A cycle starts there from zero right after the restriction, else (the
 * second visit of a W- or F-cycle) from the iterate the CPU left. */
static int walk_take(void *ctx, int l, hr_cycle type)
{
    mg_gpu *g = (mg_gpu *)ctx;
    if (l != g->s.cpu_level) return 0;
    const mgg_op *prev = g->nops ? &g->ops[g->nops - 1] : NULL;
    const int fresh =
        type == HR_MG_CYCLE_FMG || (prev && prev->kind == OPK_RESTRICT && prev->lev == l - 1);
    rec(g, OPK_HOST, l, (int)type, cur_of(g, l), fresh, 0.0, 0.0);
    return 1;
}

static hri_mg_walk gpu_walk(mg_gpu *g)
{
    hri_mg_walk k = {g, g->nlev - 1, g->s.fmg_cycles, walk_pre, walk_post, walk_down,
                     walk_up, walk_coarse, walk_fmg_down, walk_take, NULL, NULL};
    return k;
}

static void rec_cycle(mg_gpu *g, int l, hr_mg_cycle type)
{
    const hri_mg_walk k = gpu_walk(g);
    hri_mg_walk_cycle(&k, l, type);
}

static void rec_fmg(mg_gpu *g)
{
    const hri_mg_walk k = gpu_walk(g);
    hri_mg_walk_fmg(&k, 1);
}

/* z = M r: one symmetric V-cycle from zero on r, into cp (precondition in mg_solve.c; r is
 * scaled into range already: factors 1). */
static void rec_precondition(mg_gpu *g)
{
    rec(g, OPK_TO_L0, 0, cur_of(g, 0), 0, 0, 1.0, 0.0);
    rec_cycle(g, 0, HR_MG_CYCLE_V);
    rec(g, OPK_FROM_L0, 0, cur_of(g, 0), 0, 1, 1.0, 0.0);
}

/* A one-pass (or fused) red-black sweep of (big) level 0 followed by the hand-over to the outer level
 * becomes one kernel: the sweep's values go straight to the fp64 grid (the fp32 iterate is
 * not written; nothing reads it before the next check zeroes it). */
static void fuse_last_sweep(mg_gpu *g)
{
    for (int n = 1; n < g->nops; n++) {
        mgg_op *rb = &g->ops[n - 1], *from = &g->ops[n];
        if (from->kind != OPK_FROM_L0 || (rb->kind != OPK_RB && rb->kind != OPK_RBF) || rb->lev != 0 ||
            g->first_small == 0 || (rb->a ^ 1) != from->a)
            continue;
        if (rb->kind == OPK_RBF)
            rb->e |= MGG_RBF_OUT;
        else
            rb->kind = OPK_RB_OUT;
        rb->c = from->c;
        rb->y = from->b ? from->x : 0.0; /* adding: the correction's factor (1 / the defect's scale) */
        memmove(from, from + 1, (size_t)(g->nops - n - 1) * sizeof *from);
        g->nops--;
    }
}

void hri_mgg_record(mg_gpu *g, int prog, int r_valid)
{
    const int use_h = g->nlev > 0;
    const hr_mg_cycle type = g->s.cycle == HR_MG_CYCLE_FMG ? HR_MG_CYCLE_V : g->s.cycle;
    g->nops = 0;
    for (int l = 0; l < MGG_MAX_LEV; l++)
        g->zpend[l] = -1;
    if (g->s.mode == MG_GPU_DEFECT && r_valid && g->check_skips_zero) g->zpend[0] = -2;
    switch (prog) {
    case PROG_CYCLE:
    case PROG_FMG:
        if (g->s.mode == MG_GPU_DEFECT && !r_valid) {
            rec(g, OPK_OUT_RESID, 0, 0, 0, 0, 1.0, 0.0);
            rec(g, OPK_TO_L0, 0, cur_of(g, 0), 0, 0, g->dscale, 0.0);
        }
        if (prog == PROG_FMG)
            rec_fmg(g);
        else
            rec_cycle(g, 0, type);
        if (g->s.mode == MG_GPU_DEFECT) rec(g, OPK_FROM_L0, 0, cur_of(g, 0), 1, 0, 1.0 / g->dscale, 0.0);
        break;
    case PROG_CG_START:
        rec(g, OPK_OUT_RESID, 0, 0, 0, 0, g->cg_s, 0.0);
        if (use_h) rec_precondition(g);
        rec(g, OPK_CG_COPY, 0, use_h, 0, 0, 0.0, 0.0);
        rec(g, OPK_CG_DOT, 0, use_h, 0, 0, 0.0, 0.0);
        rec(g, OPK_CG_FIN, 0, use_h ? MGG_FIN_START_RZ : MGG_FIN_START_R, 0, 0, 0.0, 0.0);
        if (use_h) {
            rec(g, OPK_CG_DOT, 0, 0, 0, 0, 0.0, 0.0);
            rec(g, OPK_CG_FIN, 0, MGG_FIN_START_RR, 0, 0, 0.0, 0.0);
        }
        break;
    case PROG_CG_ITER:
        rec(g, OPK_CG_APPLY_DOT, 0, 0, 0, 0, 0.0, 0.0);
        rec(g, OPK_CG_FIN, 0, MGG_FIN_PQ, 0, 0, 0.0, 0.0);
        rec(g, OPK_CG_UPDATE, 0, 0, 0, 0, 1.0 / g->cg_s, 0.0);
        rec(g, OPK_CG_FIN, 0, use_h ? MGG_FIN_RR : MGG_FIN_RR_Z, 0, 0, 0.0, 0.0);
        if (use_h) {
            rec_precondition(g);
            rec(g, OPK_CG_DOT, 0, 1, 0, 0, 0.0, 0.0);
            rec(g, OPK_CG_FIN, 0, MGG_FIN_RZ1, 0, 0, 0.0, 0.0);
        }
        rec(g, OPK_CG_XPAY, 0, use_h, 0, 0, 0.0, 0.0);
        break;
    }
    fuse_last_sweep(g);
}
