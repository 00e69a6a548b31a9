/* The decomposed solver's schedule (see dsolver.h): halo exchanges, the sweep rounds, the
 * overlapped host and device sweeps, the residual and the run through hri_drive. Setup,
 * the placements and teardown are in dsolver.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/precision.h"
#include "core/timer.h"
#include "methods/jacobi/cpu/stencil_box_stream.h"
#include "parallel/decomp/dsolver.h"
#include "runtime/cpu/fpmode.h"
#include "runtime/cpu/team.h"
#include "runtime/cpu/threadstat.h"

/* Waits for the queued work of `lane` in every owned subdomain (device placements). */
static hr_status sync_all(hr_dsolver *s, int lane)
{
    if (!s->fops->sync) return HR_OK;
    for (int l = 0; l < s->nlocal; l++)
        HR_TRY(s->fops->sync(s->subs[l].ctx, lane));
    return HR_OK;
}

/* Packs the faces of phase ph and posts its messages. */
/* Where a bound message buffer's data goes or comes from this round: the transport's
 * slot where it has in-place messages (hr_transport_ops.slot) for faces of this kind (host
 * faces; device faces of a device-buffer transport such as CUDA IPC), else the buffer
 * itself (tuning.mpi_inplace off: always the buffer). */
static void *in_place(hr_dsolver *s, int ph, void *buf)
{
    if (!s->t->ops->slot || !s->inplace) return buf;
    if (s->fops != &hri_field_ops_host && !(s->dplace && s->t->device_buffers)) return buf;
    return s->t->ops->slot(s->t, ph, buf);
}

static hr_status exchange_begin(hr_dsolver *s, int ph)
{
    const int corners = s->nphases > 1;
    const double t0 = hr_now();
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++) {
                if (!hr_dsolver_phase_has_axis(s, ph, a) || d->g.nb[a][side] < 0) continue;
                const hr_box b = hri_subdomain_face(&d->g, s->d.ghost, a, side, 0, corners);
                void *to = in_place(s, ph, d->sbuf[a][side]);
                if (!to) return HR_ERR_INTERNAL;
                HR_TRY(s->fops->pack(d->ctx, 2 * a + side, &d->g.l, d->org[s->cur], &b, to));
            }
    }
    HR_TRY(sync_all(s, HR_DLANE_FACES)); /* the buffers hold the faces before they travel */
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
    for (int l = 0; l < s->nlocal; l++) /* where each face will be (in place: the transport's slot) */
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++)
                if (hr_dsolver_phase_has_axis(s, ph, a) && s->subs[l].g.nb[a][side] >= 0) {
                    s->subs[l].rfrom[a][side] = in_place(s, ph, s->subs[l].rbuf[a][side]);
                    if (!s->subs[l].rfrom[a][side]) return HR_ERR_INTERNAL;
                }
    HR_TRY(s->t->ops->wait(s->t, ph));
    const double t1 = hr_now();
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++) {
                if (!hr_dsolver_phase_has_axis(s, ph, a) || d->g.nb[a][side] < 0) continue;
                const hr_box b = hri_subdomain_face(&d->g, s->d.ghost, a, side, 1, corners);
                HR_TRY(s->fops->unpack(d->ctx, 2 * a + side, &d->g.l, d->org[s->cur], &b, d->rfrom[a][side]));
            }
    }
    HR_TRY(sync_all(s, HR_DLANE_FACES)); /* the ghost zones are in place before the sweeps */
    s->xt.transfer += t1 - t0;
    s->xt.unpack += hr_now() - t1;
    return HR_OK;
}

/* Fills every ghost zone from the neighbours' current own points. */
static hr_status exchange(hr_dsolver *s)
{
    if (s->mapped) { /* the ghost planes are the neighbours' own: agree on the round */
        const double t0 = hr_now();
        HR_TRY(s->t->ops->round(s->t, ++s->mround, s->subs[0].g.nb[2]));
        s->xt.transfer += hr_now() - t0;
        s->xt.rounds++;
        s->fresh = 1;
        return HR_OK;
    }
    for (int ph = 0; ph < s->nphases; ph++) {
        HR_TRY(exchange_begin(s, ph));
        HR_TRY(exchange_end(s, ph));
    }
    s->xt.rounds++;
    s->fresh = 1;
    return HR_OK;
}

static hr_status sweep_box(hr_dsolver *s, hr_dsub *d, hr_box box, int lane)
{
    hr_sweep_args a = {&d->g.l, d->org[s->cur], d->org[1 - s->cur], d->rhs, box, s->p.omega};
    int rows = d->pencil_rows;
    if (s->progress_phase >= 0) rows = rows > 0 && rows < 32 ? rows : 32; /* a progress call per 32 rows */
    if (rows > 0 && s->fops == &hri_field_ops_host) { /* points are independent: same bits */
        for (int y = box.lo[1]; y < box.hi[1]; y += rows) {
            a.box.lo[1] = y;
            a.box.hi[1] = y + rows < box.hi[1] ? y + rows : box.hi[1];
            if (d->pencil_stream)
                hri_cpu_sweep_box_stream(&a); /* ends with a store fence */
            else
                hri_cpu_sweep_box(&a);
            if (s->progress_phase >= 0) HR_TRY(s->t->ops->progress(s->t, s->progress_phase));
        }
        return HR_OK;
    }
    return s->fops->sweep(d->ctx, &a, lane);
}

/* Which boxes of every owned subdomain a sweep job covers. */
enum { SWEEP_ROUND, SWEEP_INNER, SWEEP_SHELL };

typedef struct sweep_job {
    hr_dsolver *s;
    int kind, m, step;
    hr_status st; /* a device placement's failure (CPU sweeps cannot fail) */
} sweep_job;

/* Thread tid of nt sweeps its share of the outer axis (z in 3-D, y in 2-D) of every box:
 * points are independent within a sweep, so any split gives the same bits. */
static void sweep_job_run(void *ctx, int tid, int nt)
{
    sweep_job *j = ctx;
    hr_dsolver *s = j->s;
    const int outer = s->p.dim == 3 ? 2 : 1;
    for (int l = 0; l < s->nlocal; l++) {
        hr_box boxes[6], inner;
        int n = 1;
        if (j->kind == SWEEP_ROUND) {
            boxes[0] = hri_subdomain_sweep_box(&s->subs[l].g, j->m, j->step);
        } else {
            n = hri_subdomain_split(&s->subs[l].g, &inner, boxes);
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
            const hr_status st = sweep_box(s, &s->subs[l], part, HR_DLANE_SHELL);
            if (st != HR_OK) j->st = st;
        }
    }
}

static hr_status run_sweeps(hr_dsolver *s, int kind, int m, int step)
{
    sweep_job j = {s, kind, m, step, HR_OK};
    if (s->team)
        hri_team_run(s->team, sweep_job_run, &j);
    else
        sweep_job_run(&j, 0, 1);
    return j.st;
}

/* One sweep with a single-layer exchange in flight (Sourouri et al., Listing 1, on the CPU):
 * post the halos, sweep the inner points, complete the halos, sweep the shell. */
static hr_status overlapped_sweep(hr_dsolver *s, hr_phase_times *t)
{
    const double sw0 = s->trace ? (double)hri_thread_preempted() : 0.0;
    double t0 = hr_now();
    HR_TRY(exchange_begin(s, 0));
    double t1 = hr_now();
    /* one thread per rank (MPI_THREAD_FUNNELED: only this thread may call MPI): keep the
     * messages moving while the inner points are swept (tuning.dsolver_progress off: none) */
    if (!s->team && s->t->ops->progress && s->fops == &hri_field_ops_host && s->o.tuning.dsolver_progress >= 0)
        s->progress_phase = 0;
    const double c1 = s->trace ? hri_thread_cpu_s() : 0.0;
    const hr_status st = run_sweeps(s, SWEEP_INNER, 1, 1);
    const double c2 = s->trace ? hri_thread_cpu_s() : 0.0;
    s->progress_phase = -1;
    HR_TRY(st);
    double t2 = hr_now();
    HR_TRY(exchange_end(s, 0));
    double t3 = hr_now();
    HR_TRY(run_sweeps(s, SWEEP_SHELL, 1, 1));
    if (s->trace) {
        const double v[HR_TRACE_FIELDS] = {
            t0, t1, t2, t3, hr_now(), c2 - c1, (double)hri_thread_preempted() - sw0};
        hri_dsolver_trace_add(s, v);
    }
    s->xt.rounds++;
    s->xt.hidden += t2 - t1;
    t->exchange += (t1 - t0) + (t3 - t2);
    return HR_OK;
}

/* Adds the device times of the last closed sweep (the slowest subdomain's). */
static void account_device_sweep(hr_dsolver *s, hr_phase_times *t)
{
    double m[5] = {0, 0, 0, 0, 0};
    int have = 0;
    for (int l = 0; s->dplace && l < s->nlocal; l++) {
        double v[5];
        if (!s->dplace->lagged(s->subs[l].ctx, v)) continue;
        have = 1;
        for (int q = 0; q < 5; q++)
            if (v[q] > m[q]) m[q] = v[q];
    }
    if (!have) return;
    const double exposed = m[3] < m[0] ? m[3] : m[0];
    s->xt.pack += m[1];
    s->xt.unpack += m[4] > s->last_transfer ? m[4] - s->last_transfer : 0.0;
    s->xt.wait += exposed;
    s->xt.hidden += m[2] > exposed ? m[2] - exposed : 0.0;
    s->xt.compute += m[0] - exposed;
    t->exchange += exposed;
}

/* One sweep on devices, Sourouri et al.'s Listing 1 and better: the shell (boundary layers) on the
 * high-priority lane, each face packed on its own stream as soon as the shell is done,
 * device-to-host, the messages, host-to-device and unpack into the NEW grid's ghost
 * layers on that stream, while the interior runs on the low-priority lane. The sweep ends
 * with fresh ghost zones (no exchange at the start of the next one). With `mark` the next
 * sweep is queued at once behind device events: the host waits only for the packed faces
 * it sends, and the times come from the events one sweep later. */
static hr_status device_overlapped_sweep(hr_dsolver *s, hr_phase_times *t)
{
    const int nxt = 1 - s->cur, chained = s->fops->mark != NULL;
    const double t0 = hr_now();
    for (int l = 0; chained && l < s->nlocal; l++)
        HR_TRY(s->fops->mark(s->subs[l].ctx, HR_DMARK_SWEEP));
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        hr_box inner, shell[6];
        const int n = hri_subdomain_split(&d->g, &inner, shell);
        for (int b = 0; b < n; b++)
            HR_TRY(sweep_box(s, d, shell[b], HR_DLANE_SHELL));
        if (!hr_box_empty(&inner)) HR_TRY(sweep_box(s, d, inner, HR_DLANE_INNER));
    }
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        for (int a = 0; a < s->p.dim; a++)
            for (int side = 0; side < 2; side++) {
                if (d->g.nb[a][side] < 0) continue;
                const hr_box b = hri_subdomain_face(&d->g, 1, a, side, 0, 0);
                void *to = in_place(s, 0, d->sbuf[a][side]);
                if (!to) return HR_ERR_INTERNAL;
                HR_TRY(s->fops->pack(d->ctx, 2 * a + side, &d->g.l, d->org[nxt], &b, to));
            }
        if (chained) HR_TRY(s->fops->mark(d->ctx, HR_DMARK_PACKED));
    }
    HR_TRY(sync_all(s, HR_DLANE_FACES));
    const double t1 = hr_now();
    if (chained) account_device_sweep(s, t); /* the sweep before: its events are complete now */
    HR_TRY(s->t->ops->start(s->t, 0));
    for (int l = 0; l < s->nlocal; l++) /* where each face will be (in place: the transport's slot) */
        for (int a = 0; a < s->p.dim; a++)
            for (int side = 0; side < 2; side++)
                if (s->subs[l].g.nb[a][side] >= 0) {
                    s->subs[l].rfrom[a][side] = in_place(s, 0, s->subs[l].rbuf[a][side]);
                    if (!s->subs[l].rfrom[a][side]) return HR_ERR_INTERNAL;
                }
    HR_TRY(s->t->ops->wait(s->t, 0));
    const double t2 = hr_now();
    s->last_transfer = t2 - t1;
    s->xt.transfer += t2 - t1;
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        for (int a = 0; a < s->p.dim; a++)
            for (int side = 0; side < 2; side++) {
                if (d->g.nb[a][side] < 0) continue;
                const hr_box b = hri_subdomain_face(&d->g, 1, a, side, 1, 0);
                HR_TRY(s->fops->unpack(d->ctx, 2 * a + side, &d->g.l, d->org[nxt], &b, d->rfrom[a][side]));
            }
    }
    if (!chained) { /* host clock: waiting for the packs, the messages, the rest of the sweep */
        HR_TRY(sync_all(s, HR_DLANE_ALL));
        const double t3 = hr_now();
        s->xt.pack += t1 - t0;
        s->xt.unpack += t3 - t2;
        s->xt.compute += (t3 - t0) - (t2 - t1);
        s->xt.wait += t2 - t1;
        t->exchange += t2 - t1;
    }
    s->xt.rounds++;
    s->cur = nxt;
    s->fresh = 1; /* queued behind the unpacks: the sync at the end of advance makes it so */
    s->done++;
    return HR_OK;
}

static hr_status advance(void *ctx, long count, hr_phase_times *t)
{
    hr_dsolver *s = ctx;
    if (s->fops->async && s->overlap && s->nphases == 1 && s->d.count > 1) {
        if (!s->fresh) {
            const double t0 = hr_now();
            HR_TRY(exchange(s));
            t->exchange += hr_now() - t0;
        }
        for (; count > 0; count--)
            HR_TRY(device_overlapped_sweep(s, t));
        for (int l = 0; s->fops->mark && l < s->nlocal; l++)
            HR_TRY(s->fops->mark(s->subs[l].ctx, HR_DMARK_END));
        HR_TRY(sync_all(s, HR_DLANE_ALL));
        account_device_sweep(s, t);
        return HR_OK;
    }
    while (count > 0) {
        /* ghost 1 (one phase, rounds of one sweep): hide the exchange behind the inner points */
        const int overlapped = !s->fresh && s->overlap && !s->mapped && s->nphases == 1 && s->d.count > 1;
        const int m = overlapped || count < s->d.ghost ? (int)(overlapped ? 1 : count) : s->d.ghost;
        if (overlapped) {
            HR_TRY(overlapped_sweep(s, t));
            s->cur = 1 - s->cur;
        } else {
            const double sw0 = s->trace ? (double)hri_thread_preempted() : 0.0, t0 = hr_now();
            if (!s->fresh) {
                HR_TRY(exchange(s));
                t->exchange += hr_now() - t0;
            }
            const double t1 = hr_now(), c1 = s->trace ? hri_thread_cpu_s() : 0.0;
            for (int step = 1; step <= m; step++) {
                HR_TRY(run_sweeps(s, SWEEP_ROUND, m, step));
                s->cur = 1 - s->cur;
            }
            if (s->trace) { /* a round without inner points: the exchange, then the whole sweep */
                const double v[HR_TRACE_FIELDS] = {
                    t0, t0, t0, t1, hr_now(), hri_thread_cpu_s() - c1, (double)hri_thread_preempted() - sw0};
                hri_dsolver_trace_add(s, v);
            }
        }
        s->fresh = 0;
        s->done += m;
        count -= m;
    }
    return sync_all(s, HR_DLANE_ALL); /* device sweeps count as compute, not as the next exchange */
}

hr_status hri_dsolver_residual(hr_dsolver *s, double *rel)
{
    if (!s->fresh) HR_TRY(exchange(s));
    hr_norm2 *v = s->norms;
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        const hr_resid_args a = {&d->g.l, d->org[s->cur], d->rhs, d->g.own, d->g.dirichlet, NULL, NULL};
        HR_TRY(s->fops->residual(d->ctx, &a, &v[2 * l], &v[2 * l + 1]));
    }
    hr_status st = s->t->ops->sum_norms(s->t, v, 2);
    if (st == HR_OK) *rel = hr_norm2_relative(v[0], v[1]);
    return st;
}

static hr_status drv_residual(void *ctx, double *rel)
{
    return hri_dsolver_residual(ctx, rel);
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

/* Before the timed sweeps (collective): once per solver, one round of every exchange phase
 * with the message buffers as they are (nothing is unpacked), so that what a transport sets
 * up at its first messages (NCCL's peer channels, the CUDA IPC mappings, MPI's first
 * rendezvous) is not timed as the first exchange; then, every run, every process waits for
 * the others, so that the clocks start together and one process's slower setup is not
 * counted as its neighbours' exchange time. The time goes to setup. */
static hr_status warm_up(hr_dsolver *s)
{
    const double t0 = hr_now();
    if (!s->warm && !s->mapped && s->d.count > 1)
        for (int ph = 0; ph < s->nphases; ph++) {
            HR_TRY(s->t->ops->start(s->t, ph));
            HR_TRY(s->t->ops->wait(s->t, ph));
        }
    s->warm = 1;
    int together = 0;
    HR_TRY(s->t->ops->max_int(s->t, &together, 1));
    s->t_setup += hr_now() - t0;
    return HR_OK;
}

static hr_status run_held(hr_dsolver *s, hr_result *res);

hr_status hri_dsolver_run(hr_dsolver *s, hr_result *res)
{
    if (!s) return HR_ERR_INVALID_ARG;
    /* CPU subdomains flush when asked; GPU ones keep subnormals, as one GPU does */
    const int flush = s->o.flush_subnormals && !s->dplace;
    const unsigned fp = hr_fp_flush_begin(flush);
    const hr_status st = run_held(s, res);
    hr_fp_flush_end(flush, fp);
    return st;
}

static hr_status run_held(hr_dsolver *s, hr_result *res)
{
    HR_TRY(warm_up(s));
    const hr_options *o = &s->o;
    const hr_run_problem *p = &s->p;
    s->hist.len = 0;
    memset(&s->xt, 0, sizeof s->xt);
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
    HR_TRY(hri_drive(&ops, &cfg, o->keep_history ? &s->hist : NULL, &t, &dout));
    if (s->xt.compute == 0.0) s->xt.compute = t.compute; /* not the device overlap: the driver's split */
    hr_result r;
    memset(&r, 0, sizeof r);
    r.dim = p->dim;
    r.nx = p->nx;
    r.ny = p->ny;
    r.nz = p->nz;
    r.iterations = dout.done;
    r.global_syncs = s->xt.rounds;
    /* the slowest process's times: what the run cost. Its sweeps are taken as one sum per
     * process: the sum of the largest compute and the largest exchange, from different
     * processes, overstated 16 CPU ranks' sweeps by 3 ms in 14 (docs/results/mpi-cpu.md) */
    double tm[6] = {t.total, t.compute, t.exchange, t.residual, s->t_setup, t.compute + t.exchange};
    HR_TRY(s->t->ops->max_double(s->t, tm, 6));
    r.time_s = tm[0];
    r.time_compute_s = tm[1];
    r.time_exchange_s = tm[2];
    r.time_residual_s = tm[3];
    r.time_setup_s = tm[4];
    r.time_sweeps_s = tm[5];
    r.time_per_sweep_s = r.iterations > 0 ? r.time_sweeps_s / (double)r.iterations : 0.0;
    HR_TRY(hri_dsolver_residual(s, &r.relative_residual));
    r.reason = hri_driver_final_reason(dout.reason, r.relative_residual, o->tol, o->divtol);
    for (int l = 0; s->dplace && l < s->nlocal; l++) /* the host grids get the solution */
        HR_TRY(s->dplace->download(s->subs[l].ctx, &s->subs[l], s->cur));
    r.max_error = hri_dsolver_max_error(s);
    HR_TRY(s->t->ops->max_double(s->t, &r.max_error, 1));
    const double pts = (double)p->nx * (double)p->ny * (double)p->nz * (double)r.iterations;
    const double es = hr_prec_bytes(o->precision);
    r.bytes_per_point = 2.0 * es + (s->subs[0].hf.base ? es : 0.0);
    r.flops_per_point = (p->dim == 3 ? 8.0 : 5.0) + (p->omega != 1.0 ? 3.0 : 0.0);
    r.gflops = r.time_sweeps_s > 0 ? r.flops_per_point * pts / r.time_sweeps_s * 1e-9 : 0.0;
    r.gbps = r.time_sweeps_s > 0 ? r.bytes_per_point * pts / r.time_sweeps_s * 1e-9 : 0.0;
    r.reference_gbps = o->reference_gbps;
    r.bandwidth_fraction = o->reference_gbps > 0 ? r.gbps / o->reference_gbps : NAN;
    snprintf(r.backend, sizeof r.backend, "%s",
             hr_backend_name(s->dplace ? HR_BACKEND_GPU : HR_BACKEND_CPU_SEQ));
    snprintf(r.kernel, sizeof r.kernel, "%s", s->dplace ? "tuned" : "seq");
    if (s->dplace)
        snprintf(r.device_name, sizeof r.device_name, "%d subdomains (%s), %.60s", s->d.count,
                 s->t->ops->name, s->dplace->device_name(s->subs[0].ctx));
    else
        snprintf(r.device_name, sizeof r.device_name, "%d subdomains (%s)", s->d.count, s->t->ops->name);
    if (res) *res = r;
    if (o->monitor && !(o->monitor_every > 0 && r.iterations % o->monitor_every == 0 && r.iterations > 0))
        o->monitor(r.iterations, r.relative_residual, o->monitor_user);
    return r.reason == HR_REASON_DIVERGED || r.reason == HR_REASON_NAN ? HR_ERR_DIVERGED : HR_OK;
}
