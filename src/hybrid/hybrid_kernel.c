/*
 * The hybrid backend's kernel (`--backend hybrid`, kernel `split`): the grid's rows
 * (2-D) or planes (3-D) split between a CPU crew and a GPU by the split engine
 * (split.c), with the split chosen by the model after a start-up calibration
 * (`split` < 0) or given. Goes through hr_solver_create/run like every kernel.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/timer.h"
#include "cpu/team.h"
#include "cuda/cuda_api.h"
#include "hetrelax/hybrid.h"
#include "hybrid/split.h"

typedef struct hybrid_state {
    hr_split *e;
    hr_hybrid_info info;
} hybrid_state;

/* Sweeps a calibration run does per timing, and timings per figure (median). */
#define CAL_SWEEPS  8
#define CAL_REPEATS 3
/* A split must be predicted this much faster than GPU-only to be chosen. */
#define AUTO_MARGIN 0.01

static int split_extent(const hr_options *o)
{
    return hr_options_extent(o, hr_options_dim(o) == 3 ? 2 : 1);
}

/* Threads of the CPU part: all cores less the one driving the second placement. */
static void thread_plan(const hr_options *o, int two_cpus, int *interior, int *boundary, int *second)
{
    int total = o->threads > 0 ? o->threads : hr_cpu_count();
    if (two_cpus) {
        /* tests: the cores shared by the two CPU parts */
        *second = total / 2 > 0 ? total / 2 : 1;
        total = total - *second > 0 ? total - *second : 1;
    } else {
        *second = 0;
        total = total > 1 ? total - 1 : 1;
    }
    int b = 0;
    if (o->split_schedule == HR_SPLIT_NESTED) {
        b = o->split_boundary_threads > 0 ? o->split_boundary_threads
                                          : (hr_options_dim(o) == 3 && total >= 8 ? total / 8 : 1);
        if (b >= total && total > 1) b = total - 1;
        total = total - b > 0 ? total - b : 1;
    }
    *interior = total;
    *boundary = b;
}

void hr_split_spec_from_options(const hr_options *o, const hr_problem *p, int rows_a, hr_solver *s,
                                hr_split_spec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->dim = p->dim;
    sp->nx = p->nx;
    sp->ny = p->ny;
    sp->nz = p->nz;
    sp->esize = o->precision == HR_PREC_DOUBLE ? 8 : 4;
    sp->omega = p->omega;
    sp->spike_i = p->spike_i;
    sp->spike_j = p->spike_j;
    sp->spike_k = p->spike_k;
    sp->has_hf = !(p->rhs == HR_RHS_SPIKE || p->rhs == HR_RHS_ZERO);
    sp->rows_a = rows_a;
    sp->ghost = o->split_ghost > 0 ? o->split_ghost : 1;
    sp->second = o->split_second;
    sp->schedule = o->split_schedule;
    thread_plan(o, o->split_second == HR_SPLIT_CPU, &sp->threads_a, &sp->boundary_threads, &sp->threads_b);
    sp->device = o->device;
    sp->s = s;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median seconds per sweep of an engine on zeros (two warm-up sweeps discarded), in blocks of
 * `sweeps`; with `graphs` > 0 also in blocks of that many sweeps (a GPU part alone replays
 * CUDA graphs of 16 sweeps, a split sweeps one at a time) into *graph_s. */
static hr_status time_engine_blocks(const hr_split_spec *sp, int sweeps, double *per_sweep, int graphs,
                                    double *graph_s, char *err, size_t es)
{
    hr_split *e;
    HR_TRY(hr_split_create(sp, NULL, NULL, &e, err, es));
    double t[CAL_REPEATS], tg[CAL_REPEATS];
    hr_status st = hr_split_sweeps(e, 2);
    for (int r = 0; r < CAL_REPEATS && st == HR_OK; r++) {
        const double t0 = hr_now();
        st = hr_split_sweeps(e, sweeps);
        t[r] = (hr_now() - t0) / sweeps;
    }
    if (st == HR_OK && graphs > 0) st = hr_split_sweeps(e, graphs); /* builds the graphs */
    for (int r = 0; r < CAL_REPEATS && st == HR_OK && graphs > 0; r++) {
        const double t0 = hr_now();
        st = hr_split_sweeps(e, graphs);
        tg[r] = (hr_now() - t0) / graphs;
    }
    if (st != HR_OK) snprintf(err, es, "calibration: %.200s", e->err);
    hr_split_free(e);
    if (st != HR_OK) return st;
    qsort(t, CAL_REPEATS, sizeof t[0], cmp_double);
    *per_sweep = t[CAL_REPEATS / 2];
    if (graphs > 0) {
        qsort(tg, CAL_REPEATS, sizeof tg[0], cmp_double);
        *graph_s = tg[CAL_REPEATS / 2];
    }
    return HR_OK;
}

static hr_status time_engine(const hr_split_spec *sp, double *per_sweep, char *err, size_t es)
{
    return time_engine_blocks(sp, CAL_SWEEPS, per_sweep, 0, NULL, err, es);
}

/* The CPU part's slabs (rows along the split axis) for the size-aware term: working sets of
 * an eighth of the last-level cache, 0.7 of it (still inside) and 2.5 times it (streaming from
 * memory), plus the old slab max(64, n/16) unless one is close; each at most n rows. */
static int cpu_knot_rows(int n, double ws_row, double llc, int rows[HR_SPLIT_KNOTS])
{
    const double target[3] = {llc / 8, 0.7 * llc, 2.5 * llc};
    int cand[4], k = 0, count = 0;
    for (int i = 0; i < 3; i++) {
        double r = target[i] / ws_row;
        if (r > 2.0 * 1024 * 1024 * 1024 / ws_row) r = 2.0 * 1024 * 1024 * 1024 / ws_row; /* 2 GiB */
        cand[k++] = r < 8 ? 8 : r > n ? n : (int)r;
    }
    const int old = n / 16 > 64 ? n / 16 : (n < 64 ? n : 64);
    int near = 0;
    for (int i = 0; i < k; i++)
        near |= old <= 1.3 * cand[i] && cand[i] <= 1.3 * old;
    if (!near) cand[k++] = old;
    for (int i = 1; i < k; i++) /* sort */
        for (int j = i; j > 0 && cand[j - 1] > cand[j]; j--) {
            const int x = cand[j];
            cand[j] = cand[j - 1];
            cand[j - 1] = x;
        }
    for (int i = 0; i < k; i++) {
        const int r = cand[i] < n ? cand[i] : n;
        if (count && r <= 1.3 * rows[count - 1]) continue; /* too close to the last one */
        rows[count++] = r;
    }
    return count;
}

/* The parts' times at rows_a on the model so far: *busy = max(a, b). */
static double model_busy(const hr_split_model *m, int rows_a)
{
    const double a = hr_split_model_part_a(m, rows_a), b = hr_split_model_part_b(m, rows_a);
    return a > b ? a : b;
}

static hr_status calibrate(const hr_options *o, unsigned flags, hr_hybrid_calibration *c, hr_split_model *m,
                           char *err, size_t es)
{
    memset(c, 0, sizeof *c);
    memset(m, 0, sizeof *m);
    const double t_start = hr_now();
    hr_problem p;
    hr_problem_resolve(o, &p);
    const int n = split_extent(o);
    const int g = o->split_ghost > 0 ? o->split_ghost : 1;
    hr_split_spec sp;
    hr_grid_layout l;
    memset(&l, 0, sizeof l);
    hr_split_spec_from_options(o, &p, 0, NULL, &sp);
    hr_layout_init(&l, p.dim, p.nx, p.ny, p.nz, sp.esize);
    c->row_bytes = (double)hr_layout_outer_stride(&l) * (double)sp.esize;
    m->rows = n;
    m->messages = 2;
    m->row_bytes = c->row_bytes;
    /* t_g: the second placement alone on the whole grid, sweep by sweep as in a split, and
     * with its graphs as GPU-only runs (T(0)) */
    HR_TRY(time_engine_blocks(&sp, CAL_SWEEPS, &c->t_gpu, 16, &c->gpu_alone_s, err, es));
    /* the floor of B's part: B alone on a few rows, sweep by sweep (launch latency) */
    c->floor_rows = n < 16 ? n : 16;
    hr_split_spec_from_options(o, &p, 0, NULL, &sp);
    if (p.dim == 3)
        sp.nz = c->floor_rows;
    else
        sp.ny = c->floor_rows;
    HR_TRY(time_engine(&sp, &c->gpu_floor_s, err, es));
    /* t_c(rows): the CPU part alone on slabs in and out of the cache */
    m->a_ws_per_row = c->row_bytes * (2.0 + sp.has_hf);
    c->llc_bytes = (double)hr_cache_llc_bytes();
    if (!(c->llc_bytes > 0)) c->llc_bytes = 32.0 * 1024 * 1024;
    c->cpu_knots = cpu_knot_rows(n, m->a_ws_per_row, c->llc_bytes, c->cpu_knot_rows);
    for (int k = 0; k < c->cpu_knots; k++) {
        const int slab = c->cpu_knot_rows[k];
        hr_split_spec_from_options(o, &p, slab, NULL, &sp);
        if (p.dim == 3)
            sp.nz = slab;
        else
            sp.ny = slab;
        double t;
        HR_TRY(time_engine(&sp, &t, err, es));
        m->a_knot_ws[k] = slab * m->a_ws_per_row;
        m->a_knot_row_s[k] = t / slab;
    }
    m->a_knots = c->cpu_knots;
    c->cpu_slab_rows = n / 16 > 64 ? n / 16 : (n < 64 ? n : 64);
    c->t_cpu = n * hr_split_model_row_s(m, c->cpu_slab_rows * m->a_ws_per_row);
    m->t_a = c->t_cpu;
    m->t_b = c->t_gpu;
    m->b_alone = c->gpu_alone_s;
    m->b_floor = c->gpu_floor_s;
    /* X: the real schedule at the balance of the two parts, less its compute; then once
     * more off the balance (half the rows) to tell the exchange from the balance's jitter */
    int probe = 1;
    double tbest = HUGE_VAL;
    for (int r = 1; r < n; r++) {
        const double t = model_busy(m, r);
        if (t < tbest) {
            tbest = t;
            probe = r;
        }
    }
    if (probe < g) probe = g;
    if (probe > n - g) probe = n - g;
    if (n >= 2 * g) {
        hr_split_spec_from_options(o, &p, probe, NULL, &sp);
        HR_TRY(time_engine(&sp, &c->probe_s, err, es));
        c->probe_rows = probe;
        c->x_exposed = c->probe_s > model_busy(m, probe) ? c->probe_s - model_busy(m, probe) : 0.0;
        c->x_off = c->x_exposed;
        int off = probe / 2; /* B the slower part; A when the balance is too near the edge */
        if (off < g) off = 2 * probe < n - g ? 2 * probe : n - g;
        if (off >= g && off != probe && off <= n - g) {
            hr_split_spec_from_options(o, &p, off, NULL, &sp);
            HR_TRY(time_engine(&sp, &c->off_s, err, es));
            c->off_rows = off;
            /* X0 and sigma, least squares over the two probes: X0 + E max(a, b; sigma) = probe.
             * Near the balance the parts wait for the later of two jittery times; off it for
             * the slower one. sigma on a log grid, 1e-6 to 0.3 of the balance probe, and 0. */
            const double a1 = hr_split_model_part_a(m, probe), b1 = hr_split_model_part_b(m, probe);
            const double a2 = hr_split_model_part_a(m, off), b2 = hr_split_model_part_b(m, off);
            double x0 = c->x_exposed, sigma = 0.0, best = HUGE_VAL;
            for (int i = -1; i < 220; i++) { /* up to 0.3 of the sweep: no wilder jitter */
                const double sg = i < 0 ? 0.0 : c->probe_s * pow(10.0, -6.0 + i / 40.0);
                const double c1 = hr_split_model_max(a1, b1, sg), c2 = hr_split_model_max(a2, b2, sg);
                double x = 0.5 * ((c->probe_s - c1) + (c->off_s - c2));
                if (x < 0) x = 0;
                const double e1 = x + c1 - c->probe_s, e2 = x + c2 - c->off_s, err = e1 * e1 + e2 * e2;
                if (err < best) {
                    best = err;
                    x0 = x;
                    sigma = sg;
                }
            }
            c->x_off = x0;
            c->x_sigma = sigma;
        }
    }
    if (o->split_second == HR_SPLIT_GPU) {
        double small, row;
        HR_TRY(hr_place_gpu_roundtrip(o->device, sp.esize, 21, &small));
        HR_TRY(hr_place_gpu_roundtrip(o->device, (size_t)c->row_bytes, 21, &row));
        c->x_latency = small / 2;
        c->x_bandwidth = row > small ? 2.0 * c->row_bytes / (row - small) : 0.0;
    }
    if (flags & HR_HYBRID_CAL_STREAM) {
        hr_bandwidth bw;
        int ti, tb, t2;
        thread_plan(o, o->split_second == HR_SPLIT_CPU, &ti, &tb, &t2);
        if (hr_measure_host_bandwidth(ti + tb, 0, 3, &bw) == HR_OK) c->cpu_stream_gbps = bw.triad_gbps;
        if (o->split_second == HR_SPLIT_GPU) {
            double d;
            if (hr_measure_device_bandwidth(o->device, 0, 3, &d) == HR_OK) c->gpu_stream_gbps = d;
        } else if (hr_measure_host_bandwidth(t2, 0, 3, &bw) == HR_OK) {
            c->gpu_stream_gbps = bw.triad_gbps;
        }
    }
    m->x_latency = c->x_off / 2; /* X = 2 messages x latency: the measured exposed cost */
    m->x_bandwidth = 0.0;
    m->x_sigma = c->x_sigma;
    c->seconds = hr_now() - t_start;
    return HR_OK;
}

/* The checks every hybrid run needs before anything is allocated. */
static hr_status check_placements(const hr_options *o, char *err, size_t es)
{
    if (o->split_second == HR_SPLIT_GPU) {
        const int count = hr_cuda_device_count();
        if (count < 1) {
            snprintf(err, es, "backend: hybrid needs a CUDA device");
            return HR_ERR_NO_DEVICE;
        }
        if (o->gpus > 1 && o->device + o->gpus > count) {
            snprintf(err, es, "gpus: %d GPUs from device %d, but %d CUDA device(s) present", o->gpus,
                     o->device, count);
            return HR_ERR_NO_DEVICE;
        }
        if (o->device >= count) {
            snprintf(err, es, "device: ordinal %d, but %d CUDA device(s) present", o->device, count);
            return HR_ERR_NO_DEVICE;
        }
    }
    return HR_OK;
}

static _Thread_local char calibrate_error[256];

const char *hr_hybrid_last_error(void)
{
    return calibrate_error;
}

hr_status hr_hybrid_calibrate(const hr_options *o, unsigned flags, hr_hybrid_calibration *c,
                              hr_split_model *m)
{
    char err[256] = "";
    hr_status st = o && c && m ? hr_options_validate(o, err, sizeof err) : HR_ERR_INVALID_ARG;
    if (st == HR_OK) st = check_placements(o, err, sizeof err);
    if (st == HR_OK) st = calibrate(o, flags, c, m, err, sizeof err);
    snprintf(calibrate_error, sizeof calibrate_error, "%s", st != HR_OK ? err : "");
    return st;
}

/* The rows on the CPU for a given fraction, checked against the parts' needs. */
static hr_status rows_for_split(hr_solver *s, int n, int g, int *rows)
{
    const double f = s->o.split;
    const int r = (int)lround(f * n);
    if (f > 0.0 && f < 1.0 && (r == 0 || r == n)) {
        hr_solver_set_error(s, "split: %g leaves the %s part with no rows (%d %s)", f, r == 0 ? "CPU" : "GPU",
                            n, s->p.dim == 3 ? "planes" : "rows");
        return HR_ERR_INVALID_ARG;
    }
    if (r > 0 && r < n && (r < g || n - r < g)) {
        hr_solver_set_error(s,
                            "split-ghost: %d ghost rows need at least %d rows in each part (got %d and %d)",
                            g, g, r, n - r);
        return HR_ERR_INVALID_ARG;
    }
    *rows = r;
    return HR_OK;
}

/* --gpus N: the chain of N equal parts, every part a GPU (or, split_second HR_SPLIT_CPU,
 * a CPU crew: CI), no CPU share. */
static hr_status chain_setup(hr_solver *s, hybrid_state *h)
{
    hr_hybrid_info *in = &h->info;
    in->rows = split_extent(&s->o);
    in->ghost = s->o.split_ghost > 0 ? s->o.split_ghost : 1;
    in->schedule = s->o.split_schedule;
    in->second = s->o.split_second;
    in->predicted_s = NAN;
    in->gpu_only_s = NAN;
    hr_solver_init_rows(s, 0, hr_layout_outer(&s->u[0].l));
    s->cur = 0;
    hr_split_spec sp;
    hr_split_spec_from_options(&s->o, &s->p, 0, s, &sp);
    sp.parts = s->o.gpus;
    if (sp.second == HR_SPLIT_CPU) { /* the cores shared by the parts */
        const int t = s->o.threads > 0 ? s->o.threads : hr_cpu_count();
        sp.threads_b = t / sp.parts > 0 ? t / sp.parts : 1;
    }
    char err[256] = "";
    hr_status st = hr_split_create(&sp, &s->u[0], s->hf.base ? &s->hf : NULL, &h->e, err, sizeof err);
    if (st != HR_OK) {
        if (err[0]) hr_solver_set_error(s, "%s", err);
        return st;
    }
    const int gpu = sp.second == HR_SPLIT_GPU;
    s->cfg.threads = gpu ? 0 : sp.parts * (sp.threads_b + (sp.schedule == HR_SPLIT_NESTED));
    s->cfg.device = gpu ? s->o.device : -1;
    s->cfg.streams = gpu ? 3 * sp.parts : 0; /* two boundary sides and the interior */
    s->cfg.gpus = gpu ? sp.parts : 0;
    snprintf(s->device_name, sizeof s->device_name, "%d x %.40s (%.45s)", sp.parts, h->e->p[0]->desc,
             h->e->exchange);
    return HR_OK;
}

static hr_status hybrid_setup(hr_solver *s)
{
    HR_TRY(check_placements(&s->o, s->err, sizeof s->err));
    if (s->o.gpus > 1) {
        hybrid_state *hc = calloc(1, sizeof *hc);
        if (!hc) return HR_ERR_NO_MEMORY;
        s->impl = hc;
        return chain_setup(s, hc);
    }
    hybrid_state *h = calloc(1, sizeof *h);
    if (!h) return HR_ERR_NO_MEMORY;
    s->impl = h;
    hr_hybrid_info *in = &h->info;
    const int n = split_extent(&s->o), g = s->o.split_ghost > 0 ? s->o.split_ghost : 1;
    in->rows = n;
    in->ghost = g;
    in->schedule = s->o.split_schedule;
    in->second = s->o.split_second;
    in->predicted_s = NAN;
    in->gpu_only_s = NAN;
    int rows_a = 0;
    if (s->o.split < 0.0) {
        hr_hybrid_calibration cal;
        hr_split_model m;
        const int stream = s->o.split <= HR_SPLIT_STREAM;
        HR_TRY(calibrate(&s->o, stream ? HR_HYBRID_CAL_STREAM : 0, &cal, &m, s->err, sizeof s->err));
        HR_TRY(hr_hybrid_choose(&s->o, &cal, &m, in));
        if (stream) { /* seed 003's rule, within what the parts need */
            const double share = hr_split_stream_share(cal.cpu_stream_gbps, cal.gpu_stream_gbps);
            int r = isnan(share) ? 0 : (int)lround(share * n);
            if (r > 0 && r < g) r = g;
            if (r < n && r > n - g) r = n - g;
            in->rows_cpu = r < 0 ? 0 : r;
            in->auto_split = 2;
        }
        rows_a = in->rows_cpu;
    } else {
        HR_TRY(rows_for_split(s, n, g, &rows_a));
    }
    in->rows_cpu = rows_a;
    in->split = (double)rows_a / n;
    if (in->have_model) {
        in->predicted_s = hr_split_model_time(&in->model, rows_a);
        in->gpu_only_s = hr_split_model_time(&in->model, 0);
    }
    hr_solver_init_rows(s, 0, hr_layout_outer(&s->u[0].l));
    s->cur = 0;
    hr_split_spec sp;
    hr_split_spec_from_options(&s->o, &s->p, rows_a, s, &sp);
    in->cpu_threads = rows_a > 0 ? sp.threads_a : 0;
    in->boundary_threads = rows_a > 0 && rows_a < n ? sp.boundary_threads : 0;
    char err[256] = "";
    hr_status st = hr_split_create(&sp, &s->u[0], s->hf.base ? &s->hf : NULL, &h->e, err, sizeof err);
    if (st != HR_OK) {
        if (err[0]) hr_solver_set_error(s, "%s", err);
        return st;
    }
    s->cfg.threads = in->cpu_threads + in->boundary_threads;
    s->cfg.device = sp.second == HR_SPLIT_GPU && rows_a < n ? s->o.device : -1;
    s->cfg.streams = s->cfg.device >= 0 ? 3 : 0;
    const hr_place *B = h->e->p[h->e->nparts - 1];
    if (rows_a == 0)
        snprintf(s->device_name, sizeof s->device_name, "%s", B->desc);
    else if (rows_a == n)
        snprintf(s->device_name, sizeof s->device_name, "%s", h->e->p[0]->desc);
    else
        snprintf(s->device_name, sizeof s->device_name, "%.40s | %.50s", h->e->p[0]->desc, B->desc);
    return HR_OK;
}

static hr_status hybrid_sweeps(hr_solver *s, long count)
{
    hybrid_state *h = s->impl;
    hr_status st = hr_split_sweeps(h->e, count);
    if (st != HR_OK) hr_solver_set_error(s, "%s", h->e->err);
    return st;
}

static hr_status hybrid_sync_host(hr_solver *s)
{
    hybrid_state *h = s->impl;
    const double t0 = hr_now();
    hr_status st = hr_split_download(h->e, &s->u[0]);
    if (st != HR_OK) hr_solver_set_error(s, "%s", h->e->err);
    s->t_d2h += hr_now() - t0;
    s->cur = 0;
    return st;
}

static hr_status hybrid_residual(hr_solver *s, double *rel)
{
    hybrid_state *h = s->impl;
    /* u[1] is free once sync_host keeps the solution in u[0]: the GPU part's scratch */
    hr_status st = hr_split_residual(h->e, &s->u[1], rel);
    if (st != HR_OK) hr_solver_set_error(s, "%s", h->e->err);
    return st;
}

static hr_status hybrid_upload(hr_solver *s)
{
    hybrid_state *h = s->impl;
    hr_status st = hr_split_load(h->e, &s->u[s->cur], s->hf.base ? &s->hf : NULL, 0);
    if (st != HR_OK) hr_solver_set_error(s, "%s", h->e->err);
    return st;
}

static void hybrid_teardown(hr_solver *s)
{
    hybrid_state *h = s->impl;
    if (!h) return;
    hr_split_free(h->e);
    free(h);
    s->impl = NULL;
}

hr_status hr_hybrid_choose(const hr_options *o, const hr_hybrid_calibration *c, const hr_split_model *m,
                           hr_hybrid_info *out)
{
    if (!o || !c || !m || !out || m->rows < 1) return HR_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    const int n = m->rows, g = o->split_ghost > 0 ? o->split_ghost : 1;
    out->rows = n;
    out->ghost = g;
    out->schedule = o->split_schedule;
    out->second = o->split_second;
    out->have_model = 1;
    out->auto_split = 1;
    out->model = *m;
    out->cal = *c;
    out->rows_cpu = hr_split_model_best_range(m, g, n - g, AUTO_MARGIN, NULL);
    out->split = (double)out->rows_cpu / n;
    out->predicted_s = hr_split_model_time(m, out->rows_cpu);
    out->gpu_only_s = hr_split_model_time(m, 0);
    return HR_OK;
}

hr_status hr_solver_hybrid_info(const hr_solver *s, hr_hybrid_info *out)
{
    if (!s || !out || s->o.backend != HR_BACKEND_HYBRID || !s->impl) return HR_ERR_INVALID_ARG;
    const hybrid_state *h = s->impl;
    *out = h->info;
    out->sweeps = h->e->st.sweeps;
    out->exchanges = h->e->st.exchanges;
    out->wait_s = h->e->st.wait_s;
    snprintf(out->exchange, sizeof out->exchange, "%s", h->e->exchange);
    return HR_OK;
}

const hr_kernel_desc hr_kernel_hybrid = {"split",
                                         HR_BACKEND_HYBRID,
                                         "rows (2-D) / planes (3-D) split between CPU threads and a GPU, "
                                         "boundary rows exchanged behind the interior",
                                         HR_CAP_2D | HR_CAP_3D | HR_CAP_DETERMINISTIC | HR_CAP_RECT |
                                             HR_CAP_OMEGA,
                                         hybrid_setup,
                                         hybrid_sweeps,
                                         hybrid_sync_host,
                                         hybrid_residual,
                                         hybrid_teardown,
                                         NULL,
                                         hybrid_upload};
