/* The decomposed solver (see dsolver.h). */
#include "decomp/dsolver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/sysmem.h"
#include "common/timer.h"
#include "cpu/jacobi3d_pencil.h"
#include "cpu/stencil_box_stream.h"
#include "cpu/team.h"

/* ------------------------------------------------ the host placement */

static hr_status host_sweep(void *ctx, const hr_sweep_args *a, int lane)
{
    (void)ctx;
    (void)lane;
    hr_cpu_sweep_box(a);
    return HR_OK;
}

static hr_status host_residual(void *ctx, const hr_resid_args *a, hr_norm2 *r, hr_norm2 *b)
{
    (void)ctx;
    hr_cpu_residual_box(a, r, b);
    return HR_OK;
}

static hr_status host_pack(void *ctx, int face, const hr_grid_layout *l, const void *origin, const hr_box *b,
                           void *buf)
{
    (void)ctx;
    (void)face;
    hr_pack_box(l, origin, b, buf);
    return HR_OK;
}

static hr_status host_unpack(void *ctx, int face, const hr_grid_layout *l, void *origin, const hr_box *b,
                             const void *buf)
{
    (void)ctx;
    (void)face;
    hr_unpack_box(l, origin, b, buf);
    return HR_OK;
}

const hr_field_ops hr_field_ops_host = {"host",    0,           host_sweep, host_residual,
                                        host_pack, host_unpack, NULL,       NULL};

static hr_status host_sync(void *ctx, int lane)
{
    (void)ctx;
    (void)lane;
    return HR_OK;
}

const hr_field_ops hr_field_ops_host_queued = {"host (queued)", 1,           host_sweep, host_residual,
                                               host_pack,       host_unpack, host_sync,  NULL};

#ifndef HR_HAVE_CUDA
/* Without CUDA: no device placement (the solver refuses --backend gpu through create). */
static hr_status nogpu_create(hr_dsolver *s, hr_dsub *d, int device, char *err, size_t es)
{
    (void)s;
    (void)d;
    (void)device;
    if (err && es) snprintf(err, es, "backend: gpu: this build has no CUDA support");
    return HR_ERR_NO_DEVICE;
}

const hr_field_ops hr_field_ops_gpu = {"gpu (not built)", 0,           host_sweep, host_residual,
                                       host_pack,         host_unpack, NULL,       NULL};
const hr_dplace_ops hr_dplace_gpu = {nogpu_create, NULL, NULL, NULL, NULL, NULL, NULL};

int hr_dsolver_gpu_count(void)
{
    return 0;
}

hr_status hr_transport_cuda_create(int count, const int *device, hr_transport **out)
{
    (void)count;
    (void)device;
    *out = NULL;
    return HR_ERR_NO_DEVICE;
}
#endif

/* Where subdomain id lives: GPU o->device + id * G / count (G = max(1, o->gpus)). */
static int device_of(const hr_dsolver *s, int id)
{
    const int g = s->o.gpus > 1 ? s->o.gpus : 1;
    return s->o.device + (int)((long)id * g / s->d.count);
}

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
    d->org[0] = hr_grid_origin(&d->u[0]);
    d->org[1] = hr_grid_origin(&d->u[1]);
    d->device = -1;
    if (s->p.dim == 3 && !s->dplace) {
        /* the cpu-threads 3-D kernel's blocking (pencils in the L2, streaming stores when the
         * grids exceed the cache share) for the same bits: without it a rank sweeps 1.5x
         * slower than a thread of cpu-threads (docs/results/mpi-gpu.md) */
        const char *e = getenv("HETRELAX_DSOLVER_PENCIL");
        const int threads = s->o.backend == HR_BACKEND_CPU_THREADS && s->o.threads > 1 ? s->o.threads : 1;
        if (!(e && strcmp(e, "0") == 0))
            hr_pencil_default_choice(&d->g.l, d->g.l.ny, grids, threads, &d->pencil_rows, &d->pencil_stream);
    }
    init_sub(s, d);
    if (s->dplace) { /* device grids from the initialised host grids */
        d->device = device_of(s, id);
        const hr_status st = s->dplace->create(s, d, d->device, err, es);
        if (st != HR_OK && err && es && !err[0] && s->err[0]) snprintf(err, es, "%s", s->err);
        if (st != HR_OK) return st;
    }
    const int corners = s->nphases > 1;
    for (int a = 0; a < s->p.dim; a++)
        for (int side = 0; side < 2; side++) {
            if (d->g.nb[a][side] < 0) continue;
            const hr_box b = hr_subdomain_face(&d->g, s->d.ghost, a, side, 0, corners);
            const size_t bytes = hr_box_points(&b) * esize;
            d->bytes[a][side] = bytes;
            if (d->ctx) {
                const int dev = s->t->device_buffers;
                d->sbuf[a][side] = s->dplace->buf_alloc(d->ctx, 2 * a + side, 0, bytes, dev);
                d->rbuf[a][side] = s->dplace->buf_alloc(d->ctx, 2 * a + side, 1, bytes, dev);
            } else {
                d->sbuf[a][side] = s->t->ops->alloc(s->t, bytes);
                d->rbuf[a][side] = s->t->ops->alloc(s->t, bytes);
            }
            if (!d->sbuf[a][side] || !d->rbuf[a][side]) {
                set_err(err, es, "n: no memory for the halo buffers");
                return HR_ERR_NO_MEMORY;
            }
        }
    return HR_OK;
}

static hr_status check_options(const hr_options *o, char *err, size_t es)
{
    hr_options v = *o;
    v.gpus = 0; /* here: GPUs the subdomains spread over (the library's check is the chain's) */
    HR_TRY(hr_options_validate(&v, err, es));
    if (o->gpus < 0 || o->gpus > 64) {
        set_err(err, es, "gpus: must be between 1 and 64");
        return HR_ERR_INVALID_ARG;
    }
    if (o->gpus > 1 && o->backend != HR_BACKEND_GPU) {
        set_err(err, es, "gpus: needs --backend gpu");
        return HR_ERR_INVALID_ARG;
    }
    if (o->backend == HR_BACKEND_HYBRID) {
        set_err(err, es, "backend: hybrid: decomposed runs place subdomains on CPUs or on GPUs");
        return HR_ERR_UNSUPPORTED;
    }
    if (o->backend == HR_BACKEND_GPU && o->kernel && strcmp(o->kernel, "tuned") != 0) {
        set_err(err, es, "kernel: decomposed GPU runs sweep each subdomain with the box form of tuned");
        return HR_ERR_INVALID_ARG;
    }
    if (o->backend != HR_BACKEND_GPU && o->kernel && strcmp(o->kernel, "seq") != 0) {
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
    if (o->backend == HR_BACKEND_GPU) {
        s->fops = &hr_field_ops_gpu;
        s->dplace = &hr_dplace_gpu;
    } else {
        const char *q = getenv("HETRELAX_DSOLVER_QUEUED"); /* tests: the device schedule on CPU ranks */
        if (q && strcmp(q, "1") == 0) s->fops = &hr_field_ops_host_queued;
    }
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
    s->progress_phase = -1;
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
                void *b[2] = {d->sbuf[a][side], d->rbuf[a][side]};
                for (int q = 0; q < 2; q++) {
                    if (!b[q]) continue;
                    if (d->ctx)
                        s->dplace->buf_free(d->ctx, b[q]);
                    else
                        s->t->ops->release(s->t, b[q]);
                }
            }
        if (d->ctx) s->dplace->destroy(d->ctx);
    }
    if (s->team) hr_team_free(s->team);
    free(s->subs);
    free(s->norms);
    if (s->t) s->t->ops->destroy(s->t);
    hr_history_free(&s->hist);
    free(s);
}

/* Waits for the queued work of `lane` in every owned subdomain (device placements). */
static hr_status sync_all(hr_dsolver *s, int lane)
{
    if (!s->fops->sync) return HR_OK;
    for (int l = 0; l < s->nlocal; l++)
        HR_TRY(s->fops->sync(s->subs[l].ctx, lane));
    return HR_OK;
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
                HR_TRY(s->fops->pack(d->ctx, 2 * a + side, &d->g.l, d->org[s->cur], &b, d->sbuf[a][side]));
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
    HR_TRY(s->t->ops->wait(s->t, ph));
    const double t1 = hr_now();
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++) {
                if (!phase_has_axis(s, ph, a) || d->g.nb[a][side] < 0) continue;
                const hr_box b = hr_subdomain_face(&d->g, s->d.ghost, a, side, 1, corners);
                HR_TRY(s->fops->unpack(d->ctx, 2 * a + side, &d->g.l, d->org[s->cur], &b, d->rbuf[a][side]));
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
    if (rows > 0 && s->fops == &hr_field_ops_host) { /* points are independent: same bits */
        for (int y = box.lo[1]; y < box.hi[1]; y += rows) {
            a.box.lo[1] = y;
            a.box.hi[1] = y + rows < box.hi[1] ? y + rows : box.hi[1];
            if (d->pencil_stream)
                hr_cpu_sweep_box_stream(&a); /* ends with a store fence */
            else
                hr_cpu_sweep_box(&a);
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
            const hr_status st = sweep_box(s, &s->subs[l], part, HR_DLANE_SHELL);
            if (st != HR_OK) j->st = st;
        }
    }
}

static hr_status run_sweeps(hr_dsolver *s, int kind, int m, int step)
{
    sweep_job j = {s, kind, m, step, HR_OK};
    if (s->team)
        hr_team_run(s->team, sweep_job_run, &j);
    else
        sweep_job_run(&j, 0, 1);
    return j.st;
}

/* One sweep with a single-layer exchange in flight (seed 003, Listing 1, on the CPU):
 * post the halos, sweep the inner points, complete the halos, sweep the shell. */
static hr_status overlapped_sweep(hr_dsolver *s, hr_phase_times *t)
{
    double t0 = hr_now();
    HR_TRY(exchange_begin(s, 0));
    double t1 = hr_now();
    /* one thread per rank (MPI_THREAD_FUNNELED: only this thread may call MPI): keep the
     * messages moving while the inner points are swept (HETRELAX_DSOLVER_PROGRESS=0: off) */
    const char *pe = getenv("HETRELAX_DSOLVER_PROGRESS");
    if (!s->team && s->t->ops->progress && s->fops == &hr_field_ops_host && !(pe && strcmp(pe, "0") == 0))
        s->progress_phase = 0;
    const hr_status st = run_sweeps(s, SWEEP_INNER, 1, 1);
    s->progress_phase = -1;
    HR_TRY(st);
    double t2 = hr_now();
    HR_TRY(exchange_end(s, 0));
    double t3 = hr_now();
    HR_TRY(run_sweeps(s, SWEEP_SHELL, 1, 1));
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

/* One sweep on devices, seed 003's Listing 1 and better: the shell (boundary layers) on the
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
        const int n = hr_subdomain_split(&d->g, &inner, shell);
        for (int b = 0; b < n; b++)
            HR_TRY(sweep_box(s, d, shell[b], HR_DLANE_SHELL));
        if (!hr_box_empty(&inner)) HR_TRY(sweep_box(s, d, inner, HR_DLANE_INNER));
    }
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        for (int a = 0; a < s->p.dim; a++)
            for (int side = 0; side < 2; side++) {
                if (d->g.nb[a][side] < 0) continue;
                const hr_box b = hr_subdomain_face(&d->g, 1, a, side, 0, 0);
                HR_TRY(s->fops->pack(d->ctx, 2 * a + side, &d->g.l, d->org[nxt], &b, d->sbuf[a][side]));
            }
        if (chained) HR_TRY(s->fops->mark(d->ctx, HR_DMARK_PACKED));
    }
    HR_TRY(sync_all(s, HR_DLANE_FACES));
    const double t1 = hr_now();
    if (chained) account_device_sweep(s, t); /* the sweep before: its events are complete now */
    HR_TRY(s->t->ops->start(s->t, 0));
    HR_TRY(s->t->ops->wait(s->t, 0));
    const double t2 = hr_now();
    s->last_transfer = t2 - t1;
    s->xt.transfer += t2 - t1;
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        for (int a = 0; a < s->p.dim; a++)
            for (int side = 0; side < 2; side++) {
                if (d->g.nb[a][side] < 0) continue;
                const hr_box b = hr_subdomain_face(&d->g, 1, a, side, 1, 0);
                HR_TRY(s->fops->unpack(d->ctx, 2 * a + side, &d->g.l, d->org[nxt], &b, d->rbuf[a][side]));
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
                HR_TRY(run_sweeps(s, SWEEP_ROUND, m, step));
                s->cur = 1 - s->cur;
            }
        }
        s->fresh = 0;
        s->done += m;
        count -= m;
    }
    return sync_all(s, HR_DLANE_ALL); /* device sweeps count as compute, not as the next exchange */
}

hr_status hr_dsolver_residual(hr_dsolver *s, double *rel)
{
    if (!s->fresh) HR_TRY(exchange(s));
    hr_norm2 *v = s->norms;
    for (int l = 0; l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        const hr_resid_args a = {&d->g.l, d->org[s->cur], d->rhs, d->g.own, d->g.dirichlet, NULL};
        HR_TRY(s->fops->residual(d->ctx, &a, &v[2 * l], &v[2 * l + 1]));
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

hr_status hr_dsolver_run(hr_dsolver *s, hr_result *res)
{
    if (!s) return HR_ERR_INVALID_ARG;
    const hr_options *o = &s->o;
    const hr_problem *p = &s->p;
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
    HR_TRY(hr_drive(&ops, &cfg, o->keep_history ? &s->hist : NULL, &t, &dout));
    if (s->xt.compute == 0.0) s->xt.compute = t.compute; /* not the device overlap: the driver's split */
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
    for (int l = 0; s->dplace && l < s->nlocal; l++) /* the host grids get the solution */
        HR_TRY(s->dplace->download(s->subs[l].ctx, &s->subs[l], s->cur));
    r.max_error = hr_dsolver_max_error(s);
    HR_TRY(s->t->ops->max_double(s->t, &r.max_error, 1));
    const double pts = (double)p->nx * (double)p->ny * (double)p->nz * (double)r.iterations;
    const double es = o->precision == HR_PREC_DOUBLE ? 8.0 : 4.0;
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
    if (o->backend == HR_BACKEND_GPU) {
        /* device buffers and peer copies; the placement of each id as hr_dsolver_create's */
        int *dev = malloc((size_t)count * sizeof *dev);
        if (!dev) return HR_ERR_NO_MEMORY;
        const int g = o->gpus > 1 ? o->gpus : 1;
        for (long id = 0; id < count; id++)
            dev[id] = o->device + (int)(id * g / count);
        const int have = hr_dsolver_gpu_count();
        hr_status st = HR_OK;
        if (have == 0) {
            set_err(err, es, "backend: gpu: no CUDA device (or a build without CUDA)");
            st = HR_ERR_NO_DEVICE;
        } else if (o->device < 0 || o->device + g > have) {
            if (err && es)
                snprintf(err, es, "gpus: %d GPUs from device %d, but %d present", g, o->device, have);
            st = HR_ERR_INVALID_ARG;
        }
        if (st == HR_OK) st = hr_transport_cuda_create((int)count, dev, &t);
        free(dev);
        HR_TRY(st);
        return hr_dsolver_create(o, parts, ghost, t, out, err, es);
    }
    HR_TRY(hr_transport_inproc_create((int)count, &t));
    return hr_dsolver_create(o, parts, ghost, t, out, err, es);
}
