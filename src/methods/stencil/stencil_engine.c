/*
 * The general-problem engine behind hr_grid_solver: every structured method (Jacobi and
 * weighted Jacobi, red-black Gauss-Seidel and SOR, multigrid with every cycle and smoother,
 * CG and MG-preconditioned CG) on any problem of hetrelax/problem.h, on one thread or a
 * team. The relaxation methods are multigrid's smoothers on one level; the algorithms are
 * written once, over the kernels of stencil_kernels.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/grid_solver_internal.h"
#include "core/timer.h"
#include "methods/krylov/cg.h"
#include "methods/stencil/stencil_mg.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct st_engine {
    hr_grid_solver *s;
    hr_team *team;
    hr_st_exec ex;
    const hr_st_backend *k;
    double *hb;                         /* a padded host array: set-up, transfers to and from the backend */
    hr_st_mg mg;                        /* level 0 holds A; one level for the relaxation methods and CG */
    hr_problem p;                       /* the problem, its arrays the copies below */
    double *coef, *face[6];             /* copies */
    double *x, *b, *t, *p_, *q, *z, *r; /* r: CG's residual (level 0's r is the cycle's) */
    hr_system_info si;
    double bnorm;
    int b_is_problem; /* b holds the problem's own right-hand side */
    int x_zero;       /* x is all zero (as allocated, or zeroed since the last solve) */
    int fmg_first;
    int breakdown;
    int stagnated;
    long cg_done; /* CG steps of this solve */
    hr_cg_scalars cg;
    double first_rel; /* the residual before the first iteration (convergence factors) */
    double prev_rel, last_factor;
    double setup_s;  /* create's set-up, reported by the first solve */
    int lo, hi;      /* this process's rows of the last axis (MPI ranks; else the whole axis) */
    size_t offset;   /* the grid array index of the slab's first unknown */
    double *lb, *lv; /* the singular projection's per-line sums */
    double *b0;      /* device arrays: b with f = 0 (the boundary's part), made at the first use */
} st_engine;

static const hr_sgrid *grid(const st_engine *e)
{
    return &e->mg.lv[0].A.g;
}

/* ------------------------------------------------------------------ the right-hand side */

/* The sums of two per-line arrays over every rank, line by line in order. */
static void sum_lines2(const st_engine *e, double *s0, double *s1)
{
    const hr_sgrid *g = grid(e);
    const size_t lines = (size_t)g->n[1] * g->n[2];
    const hr_st_comm *c = e->ex.comm;
    double a = 0.0, b = 0.0;
    if (c) {
        a = c->sum(c->ctx, e->lb, lines);
        b = c->sum(c->ctx, e->lv, lines);
    } else {
        for (size_t l = 0; l < lines; l++)
            a += e->lb[l], b += e->lv[l];
    }
    *s0 = a, *s1 = b;
}

/* The projection's size from the per-line sums of b^2 and of what was removed, squared. */
static void projection_size(st_engine *e)
{
    double nb, nd;
    sum_lines2(e, &nb, &nd);
    e->si.rhs_projection = nb > 0.0 ? sqrt(nd / nb) : sqrt(nd);
}

static void take_bnorm(st_engine *e, int is_problem)
{
    e->b_is_problem = is_problem;
    const double bb = e->k->dot(&e->ex, grid(e), e->b, e->b);
    e->bnorm = sqrt(bb);
}

/* Whether the backend's arrays are host memory that the host set-up may write in place (the
 * CPU's: its upload is a copy). */
static int host_arrays(const st_engine *e)
{
    return e->k == &hri_st_cpu;
}

static hr_status take_rhs(st_engine *e, const double *f)
{
    const hr_sgrid *g = grid(e);
    double *hb = host_arrays(e) ? e->b : e->hb; /* b made in place where it can be */
    HR_TRY(hri_discretize_part_on(e->team, &e->p, e->lo, e->hi, f, NULL, hb, e->lb, e->lv));
    memset(&e->si, 0, sizeof e->si);
    if (hr_problem_is_singular(&e->p)) {
        double bs, vs;
        sum_lines2(e, &bs, &vs);
        e->si.singular = 1;
        hri_discretize_project(&e->p, e->lo, e->hi, bs, vs, hb, e->lb, e->lv, &e->si.rhs_shift);
        projection_size(e);
    }
    if (hb != e->b) e->k->upload(&e->ex, g, e->b, hb);
    take_bnorm(e, f == NULL);
    return HR_OK;
}

/* The Neumann faces' halved cells (one process: the slab is the whole grid). */
static hr_st_vol vol_of(const hr_problem *p)
{
    hr_st_vol v;
    memset(&v, 0, sizeof v);
    for (int a = 0; a < 3; a++) {
        v.n[a] = a < p->dim ? p->n[a] : 1;
        if (a >= p->dim || p->bc[2 * a].kind == HR_BC_PERIODIC) continue;
        v.half_lo[a] = p->bc[2 * a].kind == HR_BC_NEUMANN;
        v.half_hi[a] = p->bc[2 * a + 1].kind == HR_BC_NEUMANN;
    }
    return v;
}

/* b from the caller's f in device memory: b0 + vol f on the device (b0, the boundary's part,
 * discretised on the host once), then the singular projection there with its sums read home. */
static hr_status take_rhs_device(st_engine *e, const void *f, int single)
{
    const hr_sgrid *g = grid(e);
    if (!e->b0) {
        hr_problem pz = e->p;
        pz.rhs = HR_RHS_ZERO;
        pz.rhs_values = NULL;
        HR_TRY(hri_discretize_part_on(e->team, &pz, e->lo, e->hi, NULL, NULL, e->hb, NULL, NULL));
        if (!(e->b0 = e->k->alloc(&e->ex, g))) return HR_ERR_NO_MEMORY;
        e->k->upload(&e->ex, g, e->b0, e->hb);
    }
    const hr_st_vol v = vol_of(&e->p);
    memset(&e->si, 0, sizeof e->si);
    const int singular = hr_problem_is_singular(&e->p);
    e->k->rhs_in(&e->ex, g, &v, e->b, e->b0, f, single, singular ? e->lb : NULL, singular ? e->lv : NULL);
    if (singular) {
        double bs, vs;
        sum_lines2(e, &bs, &vs);
        e->si.singular = 1;
        e->si.rhs_shift = bs / vs; /* per unit volume (hri_discretize_project) */
        e->k->project(&e->ex, g, &v, e->b, e->si.rhs_shift, e->lb, e->lv);
        projection_size(e);
    }
    take_bnorm(e, 0);
    return HR_OK;
}

static double rel_of(const st_engine *e, double rr)
{
    const double r = sqrt(rr > 0.0 ? rr : 0.0);
    return e->bnorm > 0.0 ? r / e->bnorm : r;
}

static void take_init(st_engine *e, const double *x0)
{
    const hr_sgrid *g = grid(e);
    if (!x0 && e->p.init == HR_INIT_ZERO) { /* zeros: on the backend, and only where x is not */
        if (!e->x_zero) e->k->zero(&e->ex, g, e->x);
        e->x_zero = 1;
        return;
    }
    e->x_zero = 0;
    double *h = e->hb;
    hri_st_zero(g, h);
    const int last = g->dim - 1;
    if (x0) {
        hri_sgrid_unpack(g, x0 + e->offset, h);
    } else if (e->p.init == HR_INIT_ARRAY) {
        hri_sgrid_unpack(g, e->p.init_values + e->offset, h);
    } else if (e->p.init == HR_INIT_SINE) {
        const int N[3] = {e->p.n[0], e->p.n[1], g->dim == 3 ? e->p.n[2] : 1};
        for (int k = 0; k < g->n[2]; k++)
            for (int j = 0; j < g->n[1]; j++)
                for (int i = 0; i < g->n[0]; i++) {
                    const int J = last == 1 ? j + e->lo : j, K = last == 2 ? k + e->lo : k;
                    double v = sin(M_PI * (i + 1) / (N[0] + 1)) * sin(M_PI * (J + 1) / (N[1] + 1));
                    if (g->dim == 3) v *= sin(M_PI * (K + 1) / (N[2] + 1));
                    h[hr_sgrid_index(g, i, j, k)] = v;
                }
    }
    e->k->upload(&e->ex, g, e->x, h);
}

/* ------------------------------------------------------------------ CG over the kernels */

static double cg_apply_dot(void *ctx)
{
    st_engine *e = ctx;
    return e->k->apply_dot(&e->ex, &e->mg.lv[0].dA, e->p_, e->q);
}

static double cg_update(void *ctx, double alpha)
{
    st_engine *e = ctx;
    return e->k->update(&e->ex, grid(e), e->x, e->r, e->p_, e->q, alpha);
}

static double cg_precondition(void *ctx)
{
    st_engine *e = ctx;
    hri_st_mg_apply(&e->mg, e->r, e->z);
    return e->k->dot(&e->ex, grid(e), e->r, e->z);
}

static void cg_xpay(void *ctx, double beta)
{
    st_engine *e = ctx;
    e->k->xpay(&e->ex, grid(e), e->s->o.method == HR_METHOD_MGCG ? e->z : e->r, e->p_, beta);
}

static void cg_start(st_engine *e)
{
    const hr_sgrid *g = grid(e);
    double *r = e->r;
    const double rr = e->k->residual(&e->ex, &e->mg.lv[0].dA, e->x, e->b, r);
    double rz = rr;
    const double *z = r;
    if (e->s->o.method == HR_METHOD_MGCG) {
        hri_st_mg_apply(&e->mg, r, e->z);
        rz = e->k->dot(&e->ex, g, r, e->z);
        z = e->z;
    }
    e->k->copy(&e->ex, g, e->p_, z);
    e->cg.rr = rr;
    e->cg.rz = rz;
    e->breakdown = 0;
}

/* ------------------------------------------------------------------ the driver's client */

static hr_status advance(void *ctx, long count, hr_phase_times *t)
{
    st_engine *e = ctx;
    (void)t;
    hr_st_mg *mg = &e->mg;
    switch (e->s->o.method) {
    case HR_METHOD_JACOBI:
    case HR_METHOD_REDBLACK:
    case HR_METHOD_SOR: hri_st_smooth(mg, 0, e->x, e->b, (int)count, 0); break;
    case HR_METHOD_MG:
        for (long i = 0; i < count; i++) {
            mg->want_rr = i == count - 1; /* the driver's check reads the last cycle's residual */
            hri_st_mg_cycle(mg, e->x, e->b, e->fmg_first);
            e->fmg_first = 0;
        }
        mg->want_rr = 0;
        break;
    default: {
        hr_cg_ops ops = {
            e,       cg_apply_dot, cg_update, e->s->o.method == HR_METHOD_MGCG ? cg_precondition : NULL,
            cg_xpay, NULL,         0};
        hr_cg_out out;
        hri_cg_iterate(&ops, &e->cg, count, &out);
        e->cg_done += out.done;
        if (out.stop == HR_CG_BREAKDOWN) {
            e->breakdown = 1;
            return HR_ERR_DIVERGED;
        }
        break;
    }
    }
    return HR_OK;
}

static hr_status residual(void *ctx, double *rel)
{
    st_engine *e = ctx;
    const int cg = e->s->o.method == HR_METHOD_CG || e->s->o.method == HR_METHOD_MGCG;
    /* multigrid: the norm the cycle's last pass took, where it did */
    double rr = cg             ? e->cg.rr
                : e->mg.rr_ok ? e->mg.rr
                               : e->k->residual(&e->ex, &e->mg.lv[0].dA, e->x, e->b, NULL);
    e->mg.rr_ok = 0;
    if (cg && e->s->o.keep_history) /* CG's history: its recurrence's residuals */
        hri_history_push(&e->s->hist, e->cg_done, rel_of(e, rr));
    if (cg &&
        rel_of(e, rr) < e->s->o.tol) { /* the recurrence drifts from b - A x: converge on the true one */
        const double rec = rel_of(e, rr);
        rr = e->k->residual(&e->ex, &e->mg.lv[0].dA, e->x, e->b, NULL);
        if (rel_of(e, rr) >= e->s->o.tol && rec < 1e-3 * e->s->o.tol) {
            e->stagnated = 1; /* x no longer improves in double precision */
            e->s->stop = 1;
        }
    }
    *rel = rel_of(e, rr);
    if (e->prev_rel > 0.0) e->last_factor = *rel / e->prev_rel;
    e->prev_rel = *rel;
    return HR_OK;
}

static int is_levels(hr_method m)
{
    return m == HR_METHOD_MG || m == HR_METHOD_MGCG;
}

static hr_status st_run(hr_grid_solver *s, double t0, int own_rhs, hr_result *res);

static hr_status st_solve(hr_grid_solver *s, const double *rhs, const double *x0, hr_result *res)
{
    st_engine *e = s->engine;
    const double t0 = hr_now();
    if (rhs || !e->b_is_problem) {
        const hr_status st = take_rhs(e, rhs);
        if (st != HR_OK) {
            hri_gs_set_error(s, "rhs: no memory for the discrete right-hand side");
            return st;
        }
    }
    take_init(e, x0);
    return st_run(s, t0, rhs == NULL, res);
}

static hr_status st_solve_device(hr_grid_solver *s, const hr_device_arrays *a, hr_result *res)
{
    st_engine *e = s->engine;
    const hr_st_backend *k = e->k;
    if (!k->rhs_in || e->ex.comm) {
        hri_gs_set_error(s, "device arrays: the general engine on %s takes host arrays", k->name);
        return HR_ERR_UNSUPPORTED;
    }
    const int single = a->prec == HR_PREC_SINGLE;
    const double t0 = hr_now();
    hr_status st = HR_OK;
    if (a->rhs)
        st = take_rhs_device(e, a->rhs, single);
    else if (!e->b_is_problem)
        st = take_rhs(e, NULL);
    if (st != HR_OK) {
        hri_gs_set_error(s, "rhs: no memory for the discrete right-hand side");
        return st;
    }
    if (a->x0) {
        k->dense_in(&e->ex, grid(e), e->x, a->x0, single);
        e->x_zero = 0;
    } else {
        take_init(e, NULL);
    }
    st = st_run(s, t0, a->rhs == NULL, res);
    if ((st == HR_OK || st == HR_ERR_DIVERGED) && a->x) {
        char why[200];
        const hr_status cst = k->dense_out(&e->ex, grid(e), a->x, e->x, single, why, sizeof why);
        if (cst != HR_OK) {
            hri_gs_set_error(s, "x: %s", why);
            return cst;
        }
    }
    return st;
}

/* One solve from b and x as they are; t0: when the solve's preparation began. */
static hr_status st_run(hr_grid_solver *s, double t0, int own_rhs, hr_result *res)
{
    st_engine *e = s->engine;
    const double tsetup = hr_now() - t0 + e->setup_s;
    e->setup_s = 0.0;
    e->x_zero = 0; /* the solve writes x */
    const hr_method m = s->o.method;
    const int cg = m == HR_METHOD_CG || m == HR_METHOD_MGCG;
    e->fmg_first = m == HR_METHOD_MG && s->o.cycle == HR_CYCLE_FMG;
    e->prev_rel = 0.0;
    e->last_factor = NAN;
    e->stagnated = 0;
    e->cg_done = 0;
    const double r0 = e->k->residual(&e->ex, &e->mg.lv[0].dA, e->x, e->b, NULL);
    e->first_rel = rel_of(e, r0);
    if (cg) cg_start(e);
    s->hist.len = 0;
    hr_driver_ops ops = {e, advance, residual, NULL, NULL};
    const int every_iter = m == HR_METHOD_MG || cg;
    hr_driver_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.max_iters = s->max_iters;
    cfg.tol = s->o.tol;
    cfg.check_every = every_iter ? 1 : s->o.check_every > 0 ? s->o.check_every : 100;
    cfg.monitor = s->o.monitor;
    cfg.monitor_user = s->o.monitor_user;
    cfg.monitor_every = !s->o.monitor ? 0 : s->o.monitor_every > 0 ? s->o.monitor_every : cfg.check_every;
    cfg.divref = (s->o.divtol > 0.0 ? s->o.divtol : 1e3) * (e->first_rel > 0.0 ? e->first_rel : 1.0);
    if (!every_iter) cfg.divref = s->o.divtol > 0.0 ? s->o.divtol : 1e3;
    cfg.stop = &s->stop;
    cfg.poll = 1;
    hr_phase_times pt;
    memset(&pt, 0, sizeof pt);
    hr_driver_out out;
    const double ta = hr_now();
    hr_status st = hri_drive(&ops, &cfg, s->o.keep_history && !cg ? &s->hist : NULL, &pt, &out);
    const double tloop = hr_now() - ta;
    if (st == HR_ERR_DIVERGED && e->breakdown) st = HR_OK;
    s->stop = 0;
    if (st != HR_OK) {
        hri_gs_set_error(s, "solve: the engine failed (%s)", hr_status_string(st));
        return st;
    }
    if (e->si.singular) e->k->remove_mean(&e->ex, grid(e), e->x);
    const double rr = e->k->residual(&e->ex, &e->mg.lv[0].dA, e->x, e->b, NULL);
    hr_result r;
    memset(&r, 0, sizeof r);
    const hr_sgrid *g = grid(e);
    r.dim = g->dim;
    r.nx = g->n[0];
    r.ny = g->n[1];
    r.nz = g->dim == 3 ? g->n[2] : 1;
    r.iterations = out.done;
    r.global_syncs = out.done;
    r.time_s = tloop;
    r.time_sweeps_s = pt.compute;
    r.time_compute_s = pt.compute;
    r.time_residual_s = pt.residual;
    r.time_per_sweep_s = out.done > 0 ? pt.compute / (double)out.done : 0.0;
    r.time_setup_s = tsetup;
    r.relative_residual = rel_of(e, rr);
    r.max_error = NAN;
    r.bandwidth_fraction = NAN;
    r.reason = e->breakdown   ? HR_REASON_BREAKDOWN
               : e->stagnated ? HR_REASON_STAGNATED
                              : hri_driver_final_reason(out.reason, r.relative_residual, s->o.tol, cfg.divref);
    if (out.reason == HR_REASON_ITERS && r.reason == HR_REASON_DIVERGED && s->o.tol == 0.0)
        r.reason = HR_REASON_ITERS;
    snprintf(r.backend, sizeof r.backend, "%s", hr_backend_name(s->backend));
    snprintf(r.kernel, sizeof r.kernel, "%s", s->info.kernel);
    if (s->backend == HR_BACKEND_GPU) hr_gpu_name(s->o.device, r.device_name, sizeof r.device_name);
    r.levels = is_levels(m) ? e->mg.nlv : 0;
    r.convergence_factor = is_levels(m) || cg ? (out.done > 0 && e->first_rel > 0.0
                                                     ? pow(r.relative_residual / e->first_rel, 1.0 / out.done)
                                                     : NAN)
                                              : NAN;
    r.last_factor = is_levels(m) || cg ? e->last_factor : NAN;
    r.rhs_projection = e->si.rhs_projection;
    r.flops_per_point = NAN;
    if (s->p.rhs == HR_RHS_MANUFACTURED && own_rhs && !hr_problem_is_singular(&e->p) && !e->coef) {
        /* u* = prod sin(pi x_a / L_a) is exact for a = 1 and homogeneous Dirichlet faces */
        int exact = e->p.coef == 1.0;
        for (int f = 0; f < 2 * g->dim; f++)
            exact &= e->p.bc[f].kind == HR_BC_DIRICHLET && !e->p.bc[f].values && e->p.bc[f].value == 0.0;
        if (exact) {
            double err = 0.0;
            e->k->download(&e->ex, g, e->hb, e->x);
            for (int k = 0; k < g->n[2]; k++)
                for (int j = 0; j < g->n[1]; j++)
                    for (int i = 0; i < g->n[0]; i++) {
                        double u = sin(M_PI * (i + 1) * hr_problem_spacing(&e->p, 0) / e->p.length[0]) *
                                   sin(M_PI * (j + 1) * hr_problem_spacing(&e->p, 1) / e->p.length[1]);
                        if (g->dim == 3)
                            u *= sin(M_PI * (k + 1) * hr_problem_spacing(&e->p, 2) / e->p.length[2]);
                        const double d = fabs(e->hb[hr_sgrid_index(g, i, j, k)] - u);
                        if (d > err) err = d;
                    }
            r.max_error = err;
        }
    }
    hri_gs_finish_result(s, &r);
    r.levels = is_levels(m) ? e->mg.nlv : 0;
    if (res) *res = r;
    return r.reason == HR_REASON_DIVERGED || r.reason == HR_REASON_NAN || r.reason == HR_REASON_BREAKDOWN
               ? HR_ERR_DIVERGED
               : HR_OK;
}

static hr_status st_solution(const hr_grid_solver *s, hr_precision prec, void *dst, size_t count)
{
    st_engine *e = s->engine;
    if (!e) return HR_ERR_INVALID_ARG;
    const hr_sgrid *g = grid(e);
    if (!e->ex.comm && count < s->count) return HR_ERR_INVALID_ARG;
    e->k->download(&e->ex, g, e->hb, e->x);
    if (e->ex.comm) { /* collective: dst and count matter on rank 0 only */ /* rank 0 gets the whole grid (in
                                                                               double, then converted) */
        double *slab = malloc(g->count * sizeof *slab), *all = NULL;
        const size_t total = e->ex.comm->count;
        int rank0 = dst != NULL;
        if (rank0 && prec == HR_PREC_SINGLE) all = malloc(total * sizeof *all);
        if (slab) hri_sgrid_pack(g, e->hb, slab);
        hr_status st = e->ex.comm->gather(e->ex.comm->ctx, slab, slab ? g->count : 0,
                                          prec == HR_PREC_SINGLE ? all : dst, count);
        if (st == HR_OK && all)
            for (size_t i = 0; i < total; i++)
                ((float *)dst)[i] = (float)all[i];
        free(slab);
        free(all);
        return st;
    }
    if (prec != HR_PREC_SINGLE) {
        hri_sgrid_pack(g, e->hb, dst);
        return HR_OK;
    }
    size_t q = 0;
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++)
                ((float *)dst)[q++] = (float)e->hb[hr_sgrid_index(g, i, j, k)];
    return HR_OK;
}

static size_t st_history(const hr_grid_solver *s, const long **iters, const double **res)
{
    *iters = s->hist.it;
    *res = s->hist.res;
    return s->hist.len;
}

static void st_request_stop(hr_grid_solver *s)
{
    (void)s; /* the driver reads s->stop */
}

static void engine_free(st_engine *e)
{
    if (!e) return;
    hri_st_mg_free(&e->mg);
    if (e->k) {
        double *v[] = {e->x, e->b, e->t, e->p_, e->q, e->z, e->r, e->b0};
        for (size_t i = 0; i < sizeof v / sizeof *v; i++)
            if (v[i]) e->k->release(&e->ex, v[i]);
        if (e->k->close) e->k->close(&e->ex);
    }
    free(e->hb);
    free(e->lb);
    free(e->lv);
    free(e->coef);
    for (int f = 0; f < 6; f++)
        free(e->face[f]);
    free(e->ex.part);
    hri_team_free(e->team);
    free(e);
}

void hri_gs_general_release(hr_grid_solver *s)
{
    engine_free(s->engine);
    s->engine = NULL;
}

static void st_release(hr_grid_solver *s)
{
    engine_free(s->engine);
    s->engine = NULL;
}

static const hr_gs_ops st_ops = {"general",  st_solve,        st_solution,   st_history, st_request_stop,
                                 st_release, st_solve_device};

const hr_gs_ops *hri_gs_general_ops(void)
{
    return &st_ops;
}

static double *dup_array(const double *v, size_t n)
{
    double *c = malloc(n * sizeof *c);
    if (c) memcpy(c, v, n * sizeof *c);
    return c;
}

/* The problem's arrays, copied (the problem's are borrowed for create only). */
static hr_status keep_problem(st_engine *e, const hr_problem *p)
{
    e->p = *p;
    e->p.rhs_values = e->s->rhs;
    e->p.init_values = e->s->init;
    if (p->coef_values) {
        if (!(e->coef = dup_array(p->coef_values, hr_problem_unknowns(p)))) return HR_ERR_NO_MEMORY;
        e->p.coef_values = e->coef;
    }
    for (int f = 0; f < 2 * p->dim; f++)
        if (p->bc[f].values) {
            if (!(e->face[f] = dup_array(p->bc[f].values, hr_problem_face_points(p, (hr_face)f))))
                return HR_ERR_NO_MEMORY;
            e->p.bc[f].values = e->face[f];
        }
    return HR_OK;
}

hr_status hri_gs_general_create(hr_grid_solver *s, const hr_problem *p)
{
    return hri_gs_general_create_slab(s, p, 0, p->dim == 3 ? p->n[2] : p->n[1], NULL);
}

/* The slab's operator as arrays (A's grid g, rows [lo, hi) of the last axis). */
static hr_status operator_arrays(st_engine *e, const hr_sgrid *g, int lo, int hi, hr_sop *A)
{
    HR_TRY(hri_sop_alloc(A, g, 0));
    return hri_discretize_part_on(e->team, &e->p, lo, hi, NULL, A, NULL, NULL, NULL);
}

hr_status hri_gs_general_create_slab(hr_grid_solver *s, const hr_problem *p, int lo, int hi,
                                    const hr_st_comm *comm)
{
    const double t0 = hr_now();
    st_engine *e = calloc(1, sizeof *e);
    if (!e) {
        hri_gs_set_error(s, "problem: no memory for the engine");
        return HR_ERR_NO_MEMORY;
    }
    e->s = s;
    e->lo = lo;
    e->hi = hi;
    e->ex.comm = comm;
    e->offset = (size_t)lo * (p->dim == 3 ? (size_t)p->n[0] * p->n[1] : (size_t)p->n[0]);
    e->k = s->backend == HR_BACKEND_GPU ? hri_st_cuda_backend() : &hri_st_cpu;
    if (!e->k) {
        free(e);
        hri_gs_set_error(s, "backend: this build has no CUDA");
        return HR_ERR_UNSUPPORTED;
    }
    hr_status st = keep_problem(e, p);
    const hr_method m = s->o.method;
    /* cpu-seq: one thread; cpu-threads and a GPU's set-up: options.threads (on MPI ranks
     * general_mpi.c has shared the node's cores among its ranks), else every core */
    int threads = s->backend == HR_BACKEND_CPU_SEQ ? 1 : s->o.threads > 0 ? s->o.threads : hri_cpu_count();
    if (threads < 1) threads = 1;
    if (st == HR_OK && threads > 1) st = hri_team_create(threads, s->o.bind, &e->team);
    e->ex.team = e->team;
    int n[3] = {p->n[0], p->n[1], p->dim == 3 ? p->n[2] : 1}, per[3] = {0, 0, 0}, flo[3] = {0}, fhi[3] = {0};
    const int whole = lo == 0 && hi == n[p->dim - 1];
    n[p->dim - 1] = hi - lo;
    for (int a = 0; a < p->dim; a++) {
        per[a] = p->bc[2 * a].kind == HR_BC_PERIODIC && (whole || a != p->dim - 1);
        flo[a] = p->bc[2 * a].kind == HR_BC_NEUMANN;
        fhi[a] = p->bc[2 * a + 1].kind == HR_BC_NEUMANN;
    }
    hr_sgrid g;
    hri_sgrid_init(&g, p->dim, n, per);
    const int last = p->dim - 1; /* a slab of the whole grid: the colours follow the whole axis */
    g.goff[last] = lo;
    g.gn[last] = p->dim == 3 ? p->n[2] : p->n[1];
    g.gper[last] = p->bc[2 * last].kind == HR_BC_PERIODIC;
    hr_sop A;
    memset(&A, 0, sizeof A);
    if (st == HR_OK) {
        e->ex.part_len = (size_t)g.n[1] * g.n[2];
        e->ex.part = malloc(e->ex.part_len * sizeof *e->ex.part);
        e->lb = malloc(e->ex.part_len * sizeof *e->lb);
        e->lv = malloc(e->ex.part_len * sizeof *e->lv);
        if (!e->lb || !e->lv) st = HR_ERR_NO_MEMORY;
        if (st == HR_OK && e->k->open && (st = e->k->open(&e->ex, s->o.device, e->ex.part_len)) != HR_OK)
            st = st == HR_ERR_NO_DEVICE ? st : HR_ERR_DEVICE;
    }
    if (st == HR_OK) {
        hr_st_exec *ex = &e->ex;
        const hr_st_backend *k = e->k;
        e->hb = hri_sgrid_alloc(&g);
        e->x = k->alloc(ex, &g), e->b = k->alloc(ex, &g), e->t = k->alloc(ex, &g);
        if (m == HR_METHOD_CG || m == HR_METHOD_MGCG)
            e->p_ = k->alloc(ex, &g), e->q = k->alloc(ex, &g), e->r = k->alloc(ex, &g);
        if (m == HR_METHOD_MGCG) e->z = k->alloc(ex, &g);
        e->x_zero = host_arrays(e); /* the CPU's arrays come zeroed */
        if (!e->hb || !e->ex.part || !e->x || !e->b || !e->t ||
            ((m == HR_METHOD_CG || m == HR_METHOD_MGCG) && (!e->p_ || !e->q || !e->r)) ||
            (m == HR_METHOD_MGCG && !e->z))
            st = HR_ERR_NO_MEMORY;
    }
    /* a uniform star (constant coefficient, no Neumann face) is its scalars from the start: no
     * arrays to fill, scan and drop (at 1023^3 they were 43 GB and most of the set-up) */
    const int scalars = st == HR_OK && hri_sop_uniform_of(&e->p, &g, &A);
    if (st == HR_OK && !scalars) st = operator_arrays(e, &g, lo, hi, &A);
    if (st == HR_OK && !scalars) hri_sop_detect_uniform(&A);
    if (st == HR_OK && comm) { /* uniform on every rank, with rank 0's scalars, or on none */
        double v[4] = {A.ud, A.uc[0], A.uc[1], A.uc[2]};
        comm->bcast(comm->ctx, v, 4);
        const int same = A.uniform && v[0] == A.ud && v[1] == A.uc[0] && v[2] == A.uc[1] && v[3] == A.uc[2];
        A.uniform = comm->all(comm->ctx, same);
        if (!A.uniform && scalars) /* another rank's is not (a rank without rows): the arrays */
            st = operator_arrays(e, &g, lo, hi, &A);
    }
    /* the smoother (the relaxation methods: the method itself on one level) */
    hr_st_mg *mg = &e->mg;
    const char *sm = s->o.smoother;
    const int relax = m == HR_METHOD_JACOBI || m == HR_METHOD_REDBLACK || m == HR_METHOD_SOR;
    if (relax) {
        mg->smoother = m == HR_METHOD_JACOBI ? HR_ST_JACOBI : HR_ST_GS;
        mg->omega = s->o.omega > 0.0 ? s->o.omega : 1.0;
        if (m == HR_METHOD_SOR && !(s->o.omega > 0.0)) { /* the model problem's optimum for the finest axis */
            int nmax = 1;
            for (int a = 0; a < p->dim; a++)
                nmax = p->n[a] > nmax ? p->n[a] : nmax;
            mg->omega = 2.0 / (1.0 + sin(M_PI / (nmax + 1)));
        }
    } else {
        mg->smoother = !sm || !strcmp(sm, "redblack") ? HR_ST_GS
                       : !strcmp(sm, "jacobi")        ? HR_ST_JACOBI
                                                      : HR_ST_CHEBY;
        mg->omega = mg->smoother == HR_ST_JACOBI ? (s->o.omega > 0.0 ? s->o.omega
                                                    : p->dim == 3    ? 6.0 / 7.0
                                                                     : 0.8)
                                                 : 1.0;
    }
    mg->pre = s->o.pre == HR_NONE ? 0 : s->o.pre > 0 ? s->o.pre : 2;
    mg->post = s->o.post == HR_NONE ? 0 : s->o.post > 0 ? s->o.post : 2;
    mg->cycle = s->o.cycle;
    mg->symmetric = s->o.symmetric;
    const int levels = is_levels(m) ? s->o.levels : 1;
    mg->constant = p->coef_values == NULL;
    if (st == HR_OK)
        st = hri_st_mg_setup(mg, &e->ex, e->k, &A, flo, fhi, levels, hr_problem_is_singular(p), e->t,
                            is_levels(m));
    hri_sop_free(&A);
    if (st == HR_OK) st = take_rhs(e, NULL);
    if (st == HR_OK) take_init(e, NULL);
    s->engine = e;
    if (st != HR_OK) {
        if (st == HR_ERR_DEVICE || st == HR_ERR_NO_DEVICE)
            hri_gs_set_error(s, "device: GPU %d could not be opened (%s)", s->o.device, hr_status_string(st));
        else
            hri_gs_set_error(s, "%s",
                            st == HR_ERR_NO_MEMORY
                                ? "problem: the general-problem engine does not fit in memory"
                                : "problem: the multigrid hierarchy could not be built");
        return st;
    }
    s->ops = &st_ops;
    snprintf(s->info.engine, sizeof s->info.engine, "%s", st_ops.engine);
    snprintf(s->info.kernel, sizeof s->info.kernel, "%s",
             relax                          ? "general"
             : m == HR_METHOD_CG            ? ""
             : mg->smoother == HR_ST_GS     ? "redblack"
             : mg->smoother == HR_ST_JACOBI ? "jacobi"
                                            : "cheby");
    s->info.threads = s->backend == HR_BACKEND_GPU ? 0 : threads;
    s->info.gpus = s->backend == HR_BACKEND_GPU;
    s->info.omega = mg->omega;
    s->info.general = 1;
    s->info.singular = hr_problem_is_singular(p);
    s->info.rhs_zero = e->bnorm == 0.0; /* the problem's b, summed over every rank's slab */
    e->setup_s = hr_now() - t0;
    return HR_OK;
}
