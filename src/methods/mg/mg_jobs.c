/*
 * The multigrid / CG handle's problem values and the SPMD jobs its team runs (one job
 * per driver call: init, CG start, cycles or CG iterations, the residual), see
 * mg_handle.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "methods/krylov/cg.h"
#include "methods/mg/mg_handle.h"

/* ------------------------------------------------------------------ the problem */

static double axis_sine(const hr_mg *m, int n, int i)
{
    const int nmax = m->nx > m->ny ? (m->nx > m->nz ? m->nx : m->nz) : (m->ny > m->nz ? m->ny : m->nz);
    return n == nmax ? sin(M_PI * i * m->h) : sin(M_PI * i / ((double)n + 1.0));
}

/* The manufactured solution prod_a sin(pi x_a / L_a), as hetrelax defines it. */
double hri_mgs_exact(const hr_mg *m, int i, int j, int k)
{
    double v = axis_sine(m, m->ny, i) * axis_sine(m, m->nx, j);
    return m->dim == 3 ? v * axis_sine(m, m->nz, k) : v;
}

static double rhs_value(const hr_mg *m, int i, int j, int k)
{
    const double h = m->h;
    if (m->o.rhs == HR_RHS_MANUFACTURED) {
        const int ext[3] = {m->nx, m->ny, m->nz};
        double c = 0.0;
        for (int a = 0; a < m->dim; a++) {
            const double L = ((double)ext[a] + 1.0) * h;
            c += M_PI * M_PI / (L * L);
        }
        return h * h * c * hri_mgs_exact(m, i, j, k);
    }
    const size_t kk = m->dim == 3 ? (size_t)(k - 1) : 0;
    return h * h * m->o.rhs_values[(kk * (size_t)m->ny + (size_t)(i - 1)) * (size_t)m->nx + (size_t)(j - 1)];
}

/* The problem's right-hand side as a kernel sees it; `grid` receives h^2 f where needed. */
hr_rhs_view hri_mgs_problem_view(const hr_mg *m, hr_grid *grid)
{
    hr_rhs_view v = {NULL, -1, -1, -1};
    if (m->o.rhs == HR_RHS_SPIKE) {
        v.spike_i = HR_SPIKE_INDEX(m->ny);
        v.spike_j = HR_SPIKE_INDEX(m->nx);
        v.spike_k = m->dim == 3 ? HR_SPIKE_INDEX(m->nz) : 0;
    } else if (m->o.rhs != HR_RHS_ZERO) {
        v.hf = hr_grid_origin(grid);
    }
    return v;
}

void hri_mgs_fill_rhs(const hr_mg *m, hr_grid *g, int s0, int s1)
{
    for (int s = s0; s < s1; s++)
        for (int i = 1; i <= m->ny; i++) {
            if (m->dim == 2 && i != s) continue;
            for (int j = 1; j <= m->nx; j++) {
                const int k = m->dim == 3 ? s : 0;
                hri_grid_set3(g, i, j, k, rhs_value(m, i, j, k));
            }
        }
}

/* The fp64 (or direct-mode) level that holds the solution. */
mg_level *hri_mgs_sol_level(hr_mg *m)
{
    return m->has_out ? &m->out : &m->H.lev[0];
}

hr_grid *hri_mgs_sol_grid(hr_mg *m)
{
    if (m->gpu) return &m->host_sol;
    return m->has_out ? &m->out.u[0] : &m->H.lev[0].u[m->tls[0].cur[0]];
}

/* ------------------------------------------------------------------ SPMD jobs */

/* The partials buffer for the next reduction (two halves alternate, so a worker that runs
 * ahead never overwrites partials another worker is still summing). */
static double *next_part(hr_mg *m, int *flip)
{
    double *part = m->part + (size_t)(*flip) * (size_t)(m->out.slices + 2);
    *flip ^= 1;
    return part;
}

/* The slice partials summed in slice order. On a serial level only worker 0 computed them
 * (and only it uses the sum): the others do not read them. */
static double sum_part(const hr_mg *m, const mg_worker *w, const double *part)
{
    if (!m->out.threaded && w->tid != 0) return 0.0;
    double s = 0.0;
    for (int i = 1; i <= m->out.slices; i++)
        s += part[i];
    return s;
}

/* Sum over the level of x . y: per-slice partials, summed in slice order by every worker
 * (so all workers hold the same value); two halves of the partials buffer alternate. */
static double reduce_dot(hr_mg *m, const mg_worker *w, int *flip, const hr_grid *x, const hr_grid *y)
{
    mg_level *L = &m->out;
    double *part = next_part(m, flip);
    int s0, s1;
    hri_mg_begin(w, L->threaded);
    hri_mg_part(w, L->threaded, L->slices, &s0, &s1);
    if (s0 < s1) hri_mg_dot_slices(L, x, y, part, s0, s1);
    hri_mg_end(w, L->threaded);
    return sum_part(m, w, part);
}

/* z = M r: one symmetric V-cycle from zero on r (copied into level 0's right-hand side). */
static void precondition(hr_mg *m, const mg_worker *w)
{
    mg_level *O = &m->out, *L0 = &m->H.lev[0];
    MG_SLICE_OP(w, O, hri_mg_convert(O, &O->r, &L0->hf, 0, 1.0, s0, s1));
    MG_SLICE_OP(w, O, hri_mg_zero(L0, &L0->u[w->tls->cur[0]], s0, s1));
    hri_mg_cycle(&m->H, w, 0, HR_MG_CYCLE_V, 1);
    MG_SLICE_OP(w, O, hri_mg_convert(O, &L0->u[w->tls->cur[0]], &O->cp, 0, 1.0, s0, s1));
}

/* The largest |r| of the last residual (its slices' maxima; exact, so any order agrees). */
static double slices_max(const hr_mg *m, int slices)
{
    double mx = 0.0;
    for (int s = 1; s <= slices; s++)
        if (!(m->rmax[s] <= mx)) mx = m->rmax[s]; /* NaN sticks */
    return mx;
}

/* CG start: r = s (b - A u) (s = cg_s: dots neither overflow nor underflow), z = M r, p = z. */
static void cg_start(hr_mg *m, const mg_worker *w, int *flip)
{
    mg_level *O = &m->out;
    MG_SLICE_OP(w, O, hri_mg_resid(O, &O->u[0], &O->r, s0, s1));
    if (m->cg_s != 1.0) MG_SLICE_OP(w, O, hri_mg_convert(O, &O->r, &O->r, 0, m->cg_s, s0, s1));
    const hr_grid *z = &O->r;
    if (m->use_h) {
        precondition(m, w);
        z = &O->cp;
    }
    MG_SLICE_OP(w, O, hri_mg_convert(O, z, &O->u[1], 0, 1.0, s0, s1));
    const double rz = reduce_dot(m, w, flip, &O->r, z);
    const double rr = m->use_h ? reduce_dot(m, w, flip, &O->r, &O->r) : rz;
    if (w->tid == 0) {
        m->rz = rz;
        m->rr = rr;
    }
}

/* One team member's view of the (P)CG vectors on the outer level: u, p = u[1], q = d, r,
 * z = cp (r without the preconditioner). */
typedef struct cg_member {
    hr_mg *m;
    const mg_worker *w;
    int *flip;
} cg_member;

/* q = A p with p . q, in one pass */
static double op_apply_dot(void *ctx)
{
    cg_member *c = ctx;
    hr_mg *m = c->m;
    mg_level *O = &m->out;
    double *part = next_part(m, c->flip);
    MG_SLICE_OP(c->w, O, hri_mg_apply_dot(O, &O->u[1], &O->d, part, s0, s1));
    return sum_part(m, c->w, part);
}

/* u += alpha p / cg_s, r -= alpha q with r . r, in one pass */
static double op_update(void *ctx, double alpha)
{
    cg_member *c = ctx;
    hr_mg *m = c->m;
    mg_level *O = &m->out;
    double *part = next_part(m, c->flip);
    MG_SLICE_OP(c->w, O,
                hri_mg_update_dot(O, alpha, 1.0 / m->cg_s, &O->u[1], &O->d, &O->u[0], &O->r, part, s0, s1));
    return sum_part(m, c->w, part);
}

/* z = M r (one symmetric V-cycle), then r . z */
static double op_precondition(void *ctx)
{
    cg_member *c = ctx;
    hr_mg *m = c->m;
    precondition(m, c->w);
    return reduce_dot(m, c->w, c->flip, &m->out.r, &m->out.cp);
}

static void op_xpay(void *ctx, double beta)
{
    cg_member *c = ctx;
    mg_level *O = &c->m->out;
    const hr_grid *z = c->m->use_h ? &O->cp : &O->r;
    MG_SLICE_OP(c->w, O, hri_mg_xpay(O, z, beta, &O->u[1], s0, s1));
}

/* (P)CG iterations. Lockstep: on a serial outer level only worker 0 holds the sums, so no
 * data-dependent branch may skip a barrier (alpha = 0 when done). */
static void cg_iterations(hr_mg *m, const mg_worker *w, int *flip, long count, double rz, double rr)
{
    cg_member c = {m, w, flip};
    const hr_cg_ops ops = {.ctx = &c,
                           .apply_dot = op_apply_dot,
                           .update = op_update,
                           .precondition = m->use_h ? op_precondition : NULL,
                           .xpay = op_xpay,
                           .lockstep = 1};
    hr_cg_scalars sc = {rz, rr};
    hr_cg_out out;
    hri_cg_iterate(&ops, &sc, count, &out);
    if (w->tid == 0) {
        m->rz = sc.rz;
        m->rr = sc.rr;
    }
}

/* One multigrid iteration: a cycle (or the FMG pass first), direct or as a defect correction. */
static void mg_iteration(hr_mg *m, const mg_worker *w, int fmg, int r_valid)
{
    mg_hier *H = &m->H;
    const hr_mg_cycle type = m->o.cycle == HR_MG_CYCLE_FMG ? HR_MG_CYCLE_V : m->o.cycle;
    if (!m->has_out) {
        if (fmg)
            hri_mg_fmg(H, w, 1);
        else
            hri_mg_cycle(H, w, 0, type, 1);
        return;
    }
    mg_level *O = &m->out, *L0 = &H->lev[0];
    if (!r_valid)
        MG_SLICE_OP(w, O,
                    (hri_mg_resid(O, &O->u[0], &O->r, s0, s1), hri_mg_absmax_slices(O, &O->r, m->rmax, s0, s1)));
    /* the defect enters the fp32 hierarchy times ds (in range: mg_range_scale), the correction
     * comes back divided by it; only the workers that hold slices of O read the maxima */
    const double ds = O->threaded || w->tid == 0 ? mg_range_scale(slices_max(m, O->slices)) : 1.0;
    MG_SLICE_OP(w, O,
                (hri_mg_convert(O, &O->r, &L0->hf, 0, ds, s0, s1), hri_mg_zero(L0, &L0->u[w->tls->cur[0]], s0, s1)));
    if (fmg)
        hri_mg_fmg(H, w, 1);
    else
        hri_mg_cycle(H, w, 0, type, 1);
    MG_SLICE_OP(w, O, hri_mg_convert(O, &L0->u[w->tls->cur[0]], &O->u[0], 1, 1.0 / ds, s0, s1));
}

static void job_fn(void *ctx, int tid, int nt)
{
    job *jb = ctx;
    hr_mg *m = jb->m;
    mg_worker w = {m->team, tid, nt, &m->tls[tid]};
    w.tls->last_serial = 0;
    int flip = 0;
    switch (jb->kind) {
    case JOB_INIT: {
        if (m->use_h) hri_mg_hier_init(&m->H, &w, m->direct ? m->o.boundary : 0.0);
        mg_level *S = hri_mgs_sol_level(m);
        if (m->has_out) {
            mg_level *O = &m->out;
            int s0, s1;
            hri_mg_begin(&w, O->threaded);
            hri_mg_part(&w, O->threaded, O->slices, &s0, &s1);
            if (s0 == 1 && s1 > s0) s0 = 0;
            if (s1 == O->slices + 1 && s1 > s0) s1 = O->slices + 2;
            if (s0 < s1) {
                hri_grid_init_rows(&O->u[0], s0, s1, m->o.boundary);
                hri_grid_init_rows(&O->u[1], s0, s1, 0.0);
                hri_grid_init_rows(&O->r, s0, s1, 0.0);
                hri_grid_init_rows(&O->d, s0, s1, 0.0);
                hri_grid_init_rows(&O->cp, s0, s1, 0.0);
                if (O->hf.base) hri_grid_init_rows(&O->hf, s0, s1, 0.0);
            }
            hri_mg_end(&w, O->threaded);
        }
        if (S->rhs.hf)
            MG_SLICE_OP(&w, S,
                        hri_mgs_fill_rhs(m, (hr_grid *)(m->has_out ? &m->out.hf : &m->H.lev[0].hf), s0, s1));
        break;
    }
    case JOB_START:
        if (m->o.method == HR_MG_METHOD_CG) cg_start(m, &w, &flip);
        break;
    case JOB_ADVANCE:
        if (m->o.method == HR_MG_METHOD_CG) {
            cg_iterations(m, &w, &flip, jb->count, jb->rz, jb->rr);
        } else {
            /* the main thread clears fmg_pending and r_valid after the job */
            for (long c = 0; c < jb->count; c++)
                mg_iteration(m, &w, c == 0 && m->fmg_pending, c == 0 && m->r_valid);
        }
        break;
    case JOB_RESIDUAL: {
        mg_level *S = hri_mgs_sol_level(m);
        MG_SLICE_OP(&w, S,
                    hri_mg_residual_slices(S, hri_mgs_sol_grid(m), jb->faces, jb->want_r ? &S->r : NULL, m->rn, m->bn,
                                       m->rmax, s0, s1));
        break;
    }
    }
}

void hri_mgs_run_job(hr_mg *m, job *jb)
{
    if (m->team)
        hri_team_run(m->team, job_fn, jb);
    else
        job_fn(jb, 0, 1);
}

/* The relative residual of the current solution (fp64 norms, slice order); want_r keeps r;
 * bnorm, rmax (either may be NULL): ||b|| and max |r|. */
double hri_mgs_true_residual(hr_mg *m, int want_r, double *bnorm, double *rmax)
{
    if (m->gpu) {
        double rel = NAN;
        const hr_status st = hri_mg_gpu_check(m->gpu, want_r, &rel, bnorm, rmax);
        if (st != HR_OK) hri_mgs_gpu_failed(m, st);
        return rel;
    }
    job jb = {m, JOB_RESIDUAL, 0, HR_FACE_ALL, want_r, 0.0, 0.0};
    hri_mgs_run_job(m, &jb);
    hr_norm2 rn = {0.0, 0.0}, bn = {0.0, 0.0};
    const int slices = hri_mgs_sol_level(m)->slices;
    for (int s = 1; s <= slices; s++) {
        hr_norm2_add(&rn, m->rn[s]);
        hr_norm2_add(&bn, m->bn[s]);
    }
    if (bnorm) *bnorm = hr_norm2_value(bn);
    if (rmax) *rmax = slices_max(m, slices);
    return hr_norm2_relative(rn, bn);
}
