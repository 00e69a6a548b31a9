/* The decomposed solver (see dsolver.h). */
#include "decomp/dsolver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/sysmem.h"
#include "common/timer.h"
#include "cpu/team.h"

#define HR_PI 3.14159265358979323846

const hr_field_ops hr_field_ops_host = {"host", hr_cpu_sweep_box, hr_cpu_residual_box, hr_pack_box,
                                        hr_unpack_box};

static void set_err(char *err, size_t size, const char *msg)
{
    if (err && size) snprintf(err, size, "%s", msg);
}

/* Fills the whole local array: boundary ring and interior (init values), and h^2 f at
 * every local point that is a global interior point (the ghost zone is swept too). */
static void init_sub(const hr_dsolver *s, hr_dsub *d)
{
    const hr_problem *p = &s->p;
    const hr_subdomain *g = &d->g;
    for (int q = 0; q < 2; q++)
        hr_grid_init_rows(&d->u[q], 0, hr_layout_outer(&g->l), p->boundary);
    if (d->hf.base) hr_grid_init_rows(&d->hf, 0, hr_layout_outer(&g->l), 0.0);
    if (p->init == HR_INIT_ZERO && !d->hf.base) return;
    const int n[3] = {p->nx, p->ny, p->nz};
    for (int k = 0; k < hr_subdomain_span(g, 2); k++)
        for (int i = 0; i < hr_subdomain_span(g, 1); i++)
            for (int j = 0; j < hr_subdomain_span(g, 0); j++) {
                const int G[3] = {hr_subdomain_global(g, 0, j), hr_subdomain_global(g, 1, i),
                                  hr_subdomain_global(g, 2, k)};
                int inside = 1;
                for (int a = 0; a < p->dim; a++)
                    inside &= G[a] >= 1 && G[a] <= n[a];
                if (!inside) continue;
                if (p->init != HR_INIT_ZERO) {
                    const double v = hr_problem_init_at(p, s->o.init_values, G[1], G[0], G[2]);
                    hr_grid_set3(&d->u[0], i, j, k, v);
                    hr_grid_set3(&d->u[1], i, j, k, v);
                }
                if (d->hf.base)
                    hr_grid_set3(&d->hf, i, j, k, hr_problem_rhs_at(p, s->o.rhs_values, G[1], G[0], G[2]));
            }
}

/* Axes exchanged in phase ph. */
static int phase_has_axis(const hr_dsolver *s, int ph, int a)
{
    return s->nphases == 1 ? a < s->p.dim : a == ph;
}

static hr_status bind_phases(hr_dsolver *s)
{
    const int maxmsg = 2 * s->p.dim * s->nlocal;
    hr_halo_msg *snd = calloc((size_t)maxmsg, sizeof *snd), *rcv = calloc((size_t)maxmsg, sizeof *rcv);
    hr_status st = HR_OK;
    if (!snd || !rcv) st = HR_ERR_NO_MEMORY;
    for (int ph = 0; ph < s->nphases && st == HR_OK; ph++) {
        int ns = 0, nr = 0;
        for (int l = 0; l < s->nlocal; l++) {
            const hr_dsub *d = &s->subs[l];
            for (int a = 0; a < 3; a++)
                for (int side = 0; side < 2; side++) {
                    if (!phase_has_axis(s, ph, a) || d->g.nb[a][side] < 0) continue;
                    snd[ns++] = (hr_halo_msg){d->g.id, d->g.nb[a][side], 2 * a + side, d->sbuf[a][side],
                                              d->bytes[a][side]};
                    rcv[nr++] = (hr_halo_msg){d->g.nb[a][side], d->g.id, 2 * a + (1 - side), d->rbuf[a][side],
                                              d->bytes[a][side]};
                }
        }
        st = s->t->ops->bind(s->t, ph, snd, ns, rcv, nr);
    }
    free(snd);
    free(rcv);
    return st;
}

static hr_status alloc_sub(hr_dsolver *s, hr_dsub *d, int id, size_t esize, char *err, size_t es)
{
    if (!hr_subdomain_init(&s->d, id, esize, &d->g)) {
        set_err(err, es, "n: the subdomain is too large");
        return HR_ERR_NO_MEMORY;
    }
    const int grids = s->p.rhs == HR_RHS_SPIKE || s->p.rhs == HR_RHS_ZERO ? 2 : 3;
    if (hr_layout_bytes(&d->g.l) > hr_host_available_bytes() / (size_t)grids / (size_t)s->nlocal) {
        set_err(err, es, "n: the subdomains do not fit in the available memory");
        return HR_ERR_NO_MEMORY;
    }
    HR_TRY(hr_grid_alloc(&d->u[0], &d->g.l));
    HR_TRY(hr_grid_alloc(&d->u[1], &d->g.l));
    if (grids == 3) HR_TRY(hr_grid_alloc(&d->hf, &d->g.l));
    if (d->hf.base) {
        d->rhs = (hr_rhs_view){hr_grid_origin(&d->hf), -1, -1, -1};
    } else {
        d->rhs = hr_subdomain_spike(&d->g, s->p.spike_i, s->p.spike_j, s->p.spike_k);
    }
    const int corners = s->nphases > 1;
    for (int a = 0; a < s->p.dim; a++)
        for (int side = 0; side < 2; side++) {
            if (d->g.nb[a][side] < 0) continue;
            const hr_box b = hr_subdomain_face(&d->g, s->d.ghost, a, side, 0, corners);
            d->bytes[a][side] = hr_box_points(&b) * esize;
            d->sbuf[a][side] = s->t->ops->alloc(s->t, d->bytes[a][side]);
            d->rbuf[a][side] = s->t->ops->alloc(s->t, d->bytes[a][side]);
            if (!d->sbuf[a][side] || !d->rbuf[a][side]) return HR_ERR_NO_MEMORY;
        }
    init_sub(s, d);
    return HR_OK;
}

static hr_status check_options(const hr_options *o, char *err, size_t es)
{
    HR_TRY(hr_options_validate(o, err, es));
    if (o->backend == HR_BACKEND_GPU) {
        set_err(err, es, "backend: decomposed runs sweep on CPU ranks only so far (docs/mpi.md)");
        return HR_ERR_UNSUPPORTED;
    }
    if (o->kernel && strcmp(o->kernel, "seq") != 0) {
        set_err(err, es, "kernel: decomposed runs sweep each subdomain with seq");
        return HR_ERR_INVALID_ARG;
    }
    if (o->method != HR_METHOD_JACOBI) {
        /* the colour phases would need an exchange each; refused rather than run as Jacobi */
        set_err(err, es, "method: decomposed runs do Jacobi only so far");
        return HR_ERR_UNSUPPORTED;
    }
    return HR_OK;
}

hr_status hr_dsolver_create(const hr_options *o, const int parts[3], int ghost, hr_transport *t,
                            hr_dsolver **out, char *err, size_t es)
{
    *out = NULL;
    set_err(err, es, "");
    hr_status st = check_options(o, err, es);
    hr_dsolver *s = st == HR_OK ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        t->ops->destroy(t);
        return st != HR_OK ? st : HR_ERR_NO_MEMORY;
    }
    s->t = t;
    s->fops = &hr_field_ops_host;
    s->o = *o;
    hr_problem_resolve(o, &s->p);
    s->o.dim = s->p.dim;
    if (s->o.divtol == 0.0) s->o.divtol = 1e3;
    const int n[3] = {s->p.nx, s->p.ny, s->p.nz};
    HR_CHECK_GOTO(st, hr_decomp_init(&s->d, s->p.dim, n, parts, ghost, err, es), fail);
    if (t->first < 0 || t->nlocal < 1 || t->first + t->nlocal > s->d.count) {
        set_err(err, es, "decomp: the subdomain count differs from the processes");
        st = HR_ERR_INVALID_ARG;
        goto fail;
    }
    s->nphases = ghost > 1 ? s->p.dim : 1;
    s->overlap = 1;
    s->nlocal = t->nlocal;
    s->subs = calloc((size_t)s->nlocal, sizeof *s->subs);
    s->norms = calloc((size_t)s->nlocal * 2, sizeof *s->norms);
    if (!s->subs || !s->norms) {
        st = HR_ERR_NO_MEMORY;
        goto fail;
    }
    const double t0 = hr_now();
    const size_t esize = o->precision == HR_PREC_DOUBLE ? 8 : 4;
    for (int l = 0; l < s->nlocal; l++)
        HR_CHECK_GOTO(st, alloc_sub(s, &s->subs[l], t->first + l, esize, err, es), fail);
    HR_CHECK_GOTO(st, bind_phases(s), fail);
    /* cpu-threads: each process sweeps its boxes with a team (threads per process) */
    if (o->backend == HR_BACKEND_CPU_THREADS && o->threads > 1) {
        st = hr_team_create(o->threads, o->bind, &s->team);
        if (st != HR_OK) {
            set_err(err, es,
                    st == HR_ERR_UNSUPPORTED ? "bind: built without hwloc"
                                             : "threads: cannot start the team");
            goto fail;
        }
    }
    s->t_setup = hr_now() - t0;
    s->o.kernel = NULL;
    s->o.rhs_values = s->o.init_values = NULL;
    *out = s;
    return HR_OK;
fail:
    if (err && es && !err[0]) snprintf(err, es, "%s", hr_status_string(st));
    hr_dsolver_free(s);
    return st;
}

void hr_dsolver_free(hr_dsolver *s)
{
    if (!s) return;
    for (int l = 0; s->subs && l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        for (int q = 0; q < 2; q++)
            hr_grid_free(&d->u[q]);
        hr_grid_free(&d->hf);
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++) {
                if (d->sbuf[a][side]) s->t->ops->release(s->t, d->sbuf[a][side]);
                if (d->rbuf[a][side]) s->t->ops->release(s->t, d->rbuf[a][side]);
            }
    }
    if (s->team) hr_team_free(s->team);
    free(s->subs);
    free(s->norms);
    if (s->t) s->t->ops->destroy(s->t);
    hr_history_free(&s->hist);
    free(s);
}

/* Packs the faces of phase ph and posts its messages. */
static hr_status exchange_begin(hr_dsolver *s, int ph)
{
    const int corners = s->nphases > 1;
    const double t0 = hr_now();
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++) {
                if (!phase_has_axis(s, ph, a) || d->g.nb[a][side] < 0) continue;
                const hr_box b = hr_subdomain_face(&d->g, s->d.ghost, a, side, 0, corners);
                s->fops->pack(&d->g.l, hr_grid_origin(&d->u[s->cur]), &b, d->sbuf[a][side]);
            }
    }
    const double t1 = hr_now();
    const hr_status st = s->t->ops->start(s->t, ph);
    s->xt.pack += t1 - t0;
    s->xt.transfer += hr_now() - t1;
    return st;
}

/* Waits for phase ph and unpacks its ghost layers. */
static hr_status exchange_end(hr_dsolver *s, int ph)
{
    const int corners = s->nphases > 1;
    const double t0 = hr_now();
    HR_TRY(s->t->ops->wait(s->t, ph));
    const double t1 = hr_now();
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++) {
                if (!phase_has_axis(s, ph, a) || d->g.nb[a][side] < 0) continue;
                const hr_box b = hr_subdomain_face(&d->g, s->d.ghost, a, side, 1, corners);
                s->fops->unpack(&d->g.l, hr_grid_origin(&d->u[s->cur]), &b, d->rbuf[a][side]);
            }
    }
    s->xt.transfer += t1 - t0;
    s->xt.unpack += hr_now() - t1;
    return HR_OK;
}

/* Fills every ghost zone from the neighbours' current own points. */
static hr_status exchange(hr_dsolver *s)
{
    for (int ph = 0; ph < s->nphases; ph++) {
        HR_TRY(exchange_begin(s, ph));
        HR_TRY(exchange_end(s, ph));
    }
    s->xt.rounds++;
    s->fresh = 1;
    return HR_OK;
}

static void sweep_box(hr_dsolver *s, hr_dsub *d, hr_box box)
{
    const hr_sweep_args a = {
        &d->g.l, hr_grid_origin(&d->u[s->cur]), hr_grid_origin(&d->u[1 - s->cur]), d->rhs, box, s->p.omega};
    s->fops->sweep(&a);
}

/* Which boxes of every owned subdomain a sweep job covers. */
enum { SWEEP_ROUND, SWEEP_INNER, SWEEP_SHELL };

typedef struct sweep_job {
    hr_dsolver *s;
    int kind, m, step;
} sweep_job;

/* Thread tid of nt sweeps its share of the outer axis (z in 3-D, y in 2-D) of every box:
 * points are independent within a sweep, so any split gives the same bits. */
static void sweep_job_run(void *ctx, int tid, int nt)
{
    const sweep_job *j = ctx;
    hr_dsolver *s = j->s;
    const int outer = s->p.dim == 3 ? 2 : 1;
    for (int l = 0; l < s->nlocal; l++) {
        hr_box boxes[6], inner;
        int n = 1;
        if (j->kind == SWEEP_ROUND) {
            boxes[0] = hr_subdomain_sweep_box(&s->subs[l].g, j->m, j->step);
        } else {
            n = hr_subdomain_split(&s->subs[l].g, &inner, boxes);
            if (j->kind == SWEEP_INNER) {
                boxes[0] = inner;
                n = 1;
            }
        }
        for (int b = 0; b < n; b++) {
            hr_box part = boxes[b];
            if (nt > 1) {
                int lo, hi;
                hr_split_range(part.hi[outer] - part.lo[outer], nt, tid, &lo, &hi);
                part.hi[outer] = part.lo[outer] + hi;
                part.lo[outer] += lo;
            }
            sweep_box(s, &s->subs[l], part);
        }
    }
}

static void run_sweeps(hr_dsolver *s, int kind, int m, int step)
{
    sweep_job j = {s, kind, m, step};
    if (s->team)
        hr_team_run(s->team, sweep_job_run, &j);
    else
        sweep_job_run(&j, 0, 1);
}

/* One sweep with a single-layer exchange in flight (seed 003, Listing 1, on the CPU):
 * post the halos, sweep the inner points, complete the halos, sweep the shell. */
static hr_status overlapped_sweep(hr_dsolver *s, hr_phase_times *t)
{
    double t0 = hr_now();
    HR_TRY(exchange_begin(s, 0));
    double t1 = hr_now();
    run_sweeps(s, SWEEP_INNER, 1, 1);
    double t2 = hr_now();
    HR_TRY(exchange_end(s, 0));
    double t3 = hr_now();
    run_sweeps(s, SWEEP_SHELL, 1, 1);
    s->xt.rounds++;
    s->xt.hidden += t2 - t1;
    t->exchange += (t1 - t0) + (t3 - t2);
    return HR_OK;
}

static hr_status advance(void *ctx, long count, hr_phase_times *t)
{
    hr_dsolver *s = ctx;
    while (count > 0) {
        /* ghost 1 (one phase, rounds of one sweep): hide the exchange behind the inner points */
        const int overlapped = !s->fresh && s->overlap && s->nphases == 1 && s->d.count > 1;
        const int m = overlapped || count < s->d.ghost ? (int)(overlapped ? 1 : count) : s->d.ghost;
        if (overlapped) {
            HR_TRY(overlapped_sweep(s, t));
            s->cur = 1 - s->cur;
        } else {
            if (!s->fresh) {
                const double t0 = hr_now();
                HR_TRY(exchange(s));
                t->exchange += hr_now() - t0;
            }
            for (int step = 1; step <= m; step++) {
                run_sweeps(s, SWEEP_ROUND, m, step);
                s->cur = 1 - s->cur;
            }
        }
        s->fresh = 0;
        s->done += m;
        count -= m;
    }
    return HR_OK;
}

hr_status hr_dsolver_residual(hr_dsolver *s, double *rel)
{
    if (!s->fresh) HR_TRY(exchange(s));
    hr_norm2 *v = s->norms;
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        const hr_resid_args a = {&d->g.l, hr_grid_origin(&d->u[s->cur]), d->rhs, d->g.own, d->g.dirichlet,
                                 NULL};
        s->fops->residual(&a, &v[2 * l], &v[2 * l + 1]);
    }
    hr_status st = s->t->ops->sum_norms(s->t, v, 2);
    if (st == HR_OK) *rel = hr_norm2_relative(v[0], v[1]);
    return st;
}

static hr_status drv_residual(void *ctx, double *rel)
{
    return hr_dsolver_residual(ctx, rel);
}

/* The user's monitor, its stop request agreed by every process (a stop on one rank
 * alone would leave the others waiting in the next exchange). */
typedef struct monitor_ctx {
    hr_dsolver *s;
    hr_monitor_fn fn;
    void *user;
} monitor_ctx;

static int agreed_monitor(long it, double rel, void *user)
{
    monitor_ctx *m = user;
    int stop = m->fn(it, rel, m->user) != 0;
    if (m->s->t->ops->max_int(m->s->t, &stop, 1) != HR_OK) return 1;
    return stop;
}

/* Largest error against the known exact solution over the own points, or NaN. */
static double max_error(const hr_dsolver *s)
{
    hr_problem p = s->p;
    double scale;
    if (p.rhs == HR_RHS_MANUFACTURED) {
        scale = 1.0;
    } else if (p.init == HR_INIT_SINE && p.rhs == HR_RHS_ZERO && p.boundary == 0.0) {
        double lam = cos(HR_PI / (p.nx + 1.0)) + cos(HR_PI / (p.ny + 1.0));
        lam = p.dim == 3 ? (lam + cos(HR_PI / (p.nz + 1.0))) / 3.0 : lam / 2.0;
        lam = 1.0 - p.omega + p.omega * lam;
        scale = pow(lam, (double)s->done);
    } else {
        return NAN;
    }
    p.init = HR_INIT_SINE; /* the sine mode of the box */
    double e = 0.0;
    for (int l = 0; l < s->nlocal; l++) {
        const hr_dsub *d = &s->subs[l];
        const hr_box *b = &d->g.own;
        for (int k = b->lo[2]; k < b->hi[2]; k++)
            for (int i = b->lo[1]; i < b->hi[1]; i++)
                for (int j = b->lo[0]; j < b->hi[0]; j++) {
                    const double x = hr_problem_init_at(&p, NULL, hr_subdomain_global(&d->g, 1, i),
                                                        hr_subdomain_global(&d->g, 0, j),
                                                        hr_subdomain_global(&d->g, 2, k));
                    const double dd = fabs(hr_grid_get3(&d->u[s->cur], i, j, k) - scale * x);
                    if (!(dd <= e)) e = dd;
                }
    }
    return e;
}

hr_status hr_dsolver_run(hr_dsolver *s, hr_result *res)
{
    if (!s) return HR_ERR_INVALID_ARG;
    const hr_options *o = &s->o;
    const hr_problem *p = &s->p;
    s->hist.len = 0;
    s->xt = (hr_exchange_times){0, 0, 0, 0, 0};
    monitor_ctx mc = {s, o->monitor, o->monitor_user};
    hr_driver_ops ops = {.ctx = s, .advance = advance, .residual = drv_residual};
    hr_driver_cfg cfg = {.max_iters = o->iters,
                         .tol = o->tol,
                         .check_every = o->check_every,
                         .monitor_every = o->monitor_every,
                         .monitor = o->monitor ? agreed_monitor : NULL,
                         .monitor_user = &mc,
                         .divref = o->divtol,
                         .first = s->done};
    hr_phase_times t = {0, 0, 0, 0};
    hr_driver_out dout;
    HR_TRY(hr_drive(&ops, &cfg, o->keep_history ? &s->hist : NULL, &t, &dout));
    hr_result r;
    memset(&r, 0, sizeof r);
    r.dim = p->dim;
    r.nx = p->nx;
    r.ny = p->ny;
    r.nz = p->nz;
    r.iterations = dout.done;
    r.global_syncs = s->xt.rounds;
    /* the slowest process's times: what the run cost */
    double tm[5] = {t.total, t.compute, t.exchange, t.residual, s->t_setup};
    HR_TRY(s->t->ops->max_double(s->t, tm, 5));
    r.time_s = tm[0];
    r.time_compute_s = tm[1];
    r.time_exchange_s = tm[2];
    r.time_residual_s = tm[3];
    r.time_setup_s = tm[4];
    r.time_sweeps_s = r.time_compute_s + r.time_exchange_s;
    r.time_per_sweep_s = r.iterations > 0 ? r.time_sweeps_s / (double)r.iterations : 0.0;
    HR_TRY(hr_dsolver_residual(s, &r.relative_residual));
    r.reason = hr_driver_final_reason(dout.reason, r.relative_residual, o->tol, o->divtol);
    r.max_error = max_error(s);
    HR_TRY(s->t->ops->max_double(s->t, &r.max_error, 1));
    const double pts = (double)p->nx * (double)p->ny * (double)p->nz * (double)r.iterations;
    const double es = o->precision == HR_PREC_DOUBLE ? 8.0 : 4.0;
    r.bytes_per_point = 2.0 * es + (s->subs[0].hf.base ? es : 0.0);
    r.flops_per_point = (p->dim == 3 ? 8.0 : 5.0) + (p->omega != 1.0 ? 3.0 : 0.0);
    r.gflops = r.time_sweeps_s > 0 ? r.flops_per_point * pts / r.time_sweeps_s * 1e-9 : 0.0;
    r.gbps = r.time_sweeps_s > 0 ? r.bytes_per_point * pts / r.time_sweeps_s * 1e-9 : 0.0;
    r.reference_gbps = o->reference_gbps;
    r.bandwidth_fraction = o->reference_gbps > 0 ? r.gbps / o->reference_gbps : NAN;
    snprintf(r.backend, sizeof r.backend, "%s", hr_backend_name(HR_BACKEND_CPU_SEQ));
    snprintf(r.kernel, sizeof r.kernel, "seq");
    snprintf(r.device_name, sizeof r.device_name, "%d subdomains (%s)", s->d.count, s->t->ops->name);
    if (res) *res = r;
    if (o->monitor && !(o->monitor_every > 0 && r.iterations % o->monitor_every == 0 && r.iterations > 0))
        o->monitor(r.iterations, r.relative_residual, o->monitor_user);
    return r.reason == HR_REASON_DIVERGED || r.reason == HR_REASON_NAN ? HR_ERR_DIVERGED : HR_OK;
}

/* Copies the own points of d row by row between the grid and a row-major array whose
 * element (x, y, z) of the own block sits at dst + ((z * ny + y) * nx + x) * es, with
 * extents and a base offset given by the caller. */
static void own_rows(const hr_dsub *d, const hr_grid *g, hr_precision prec, char *dst, const size_t stride[3])
{
    const size_t es = g->l.esize, ues = prec == HR_PREC_DOUBLE ? 8 : 4;
    const hr_box *b = &d->g.own;
    for (int k = b->lo[2]; k < b->hi[2]; k++)
        for (int i = b->lo[1]; i < b->hi[1]; i++) {
            const char *row =
                (const char *)g->base + hr_layout_index(&g->l, (size_t)i, (size_t)b->lo[0], (size_t)k) * es;
            char *urow =
                dst + ((size_t)(k - b->lo[2]) * stride[2] + (size_t)(i - b->lo[1]) * stride[1]) * ues;
            const int nx = b->hi[0] - b->lo[0];
            if (es == ues) {
                memcpy(urow, row, (size_t)nx * es);
                continue;
            }
            for (int j = 0; j < nx; j++) {
                const double v = es == 8 ? ((const double *)row)[j] : ((const float *)row)[j];
                if (ues == 8)
                    ((double *)urow)[j] = v;
                else
                    ((float *)urow)[j] = (float)v;
            }
        }
}

void hr_dsolver_own_to_global(const hr_dsolver *s, hr_precision prec, void *global)
{
    const size_t ues = prec == HR_PREC_DOUBLE ? 8 : 4;
    const size_t stride[3] = {1, (size_t)s->p.nx, (size_t)s->p.nx * (size_t)s->p.ny};
    for (int l = 0; l < s->nlocal; l++) {
        const hr_dsub *d = &s->subs[l];
        const size_t base =
            (size_t)d->g.off[2] * stride[2] + (size_t)d->g.off[1] * stride[1] + (size_t)d->g.off[0];
        own_rows(d, &d->u[s->cur], prec, (char *)global + base * ues, stride);
    }
}

void hr_dsolver_own_to_block(const hr_dsolver *s, int local, hr_precision prec, void *block)
{
    const hr_dsub *d = &s->subs[local];
    const size_t stride[3] = {1, (size_t)d->g.n[0], (size_t)d->g.n[0] * (size_t)d->g.n[1]};
    own_rows(d, &d->u[s->cur], prec, block, stride);
}

void hr_block_to_global(const hr_decomp *d, int id, hr_precision prec, const void *block, void *global)
{
    hr_subdomain g;
    hr_subdomain_init(d, id, 4, &g);
    const size_t ues = prec == HR_PREC_DOUBLE ? 8 : 4, row = (size_t)g.n[0] * ues;
    const char *src = block;
    for (int z = 0; z < g.n[2]; z++)
        for (int y = 0; y < g.n[1]; y++) {
            const size_t at =
                ((size_t)(g.off[2] + z) * (size_t)d->n[1] + (size_t)(g.off[1] + y)) * (size_t)d->n[0] +
                (size_t)g.off[0];
            memcpy((char *)global + at * ues, src, row);
            src += row;
        }
}

hr_status hr_inproc_solver_create(const hr_options *o, const int parts[3], int ghost, hr_dsolver **out,
                                  char *err, size_t es)
{
    *out = NULL;
    const int dim = hr_options_dim(o);
    long count = (long)parts[0] * parts[1] * (dim == 3 ? parts[2] : 1);
    if (parts[0] < 1 || parts[1] < 1 || (dim == 3 && parts[2] < 1) || count > 1 << 24) {
        set_err(err, es, "decomp: parts must be >= 1");
        return HR_ERR_INVALID_ARG;
    }
    hr_transport *t;
    HR_TRY(hr_transport_inproc_create((int)count, &t));
    return hr_dsolver_create(o, parts, ghost, t, out, err, es);
}
