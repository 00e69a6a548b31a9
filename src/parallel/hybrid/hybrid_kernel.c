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

#include "core/error.h"
#include "core/precision.h"
#include "core/timer.h"
#include "core/tune_util.h"
#include "core/tuning.h"
#include "hetrelax/hybrid.h"
#include "parallel/hybrid/split.h"
#include "runtime/cpu/team.h"
#include "runtime/cuda/cuda_api.h"

typedef struct hybrid_state {
    hr_split *e;
    hr_hybrid_info info;
    /* auto's watch over the run (hybrid_sweeps): the sweeps and seconds of the current window,
     * windows in a row slower than GPU-only, sweeps and exchanges of engines given up */
    double watch_margin; /* NaN: not watching */
    int watch_force;     /* tuning.auto_watch_force (tests): fall back after the first window */
    double window_s, run_s;
    long window_sweeps, run_sweeps, sweeps_before, exchanges_before;
    int strikes, windows;
} hybrid_state;

/* Auto's watch: a window is at least this long and this many sweeps; this many windows in a
 * row slower than GPU-only by the auto margin, or the split's whole run so far (after this
 * many windows), make the run fall back to GPU-only. */
#define WATCH_WINDOW_S      0.05
#define WATCH_WINDOW_SWEEPS 16
#define WATCH_STRIKES       2

/* A one- or two-part engine with rows_a rows on the CPU, loaded from the solver's host grid
 * u[0] (and its right-hand side). */
static hr_status engine_from_host(hr_solver *s, int rows_a, hr_split **e, char *err, size_t es)
{
    hr_split_spec sp;
    hri_split_spec_from_options(&s->o, &s->p, rows_a, s, &sp);
    return hri_split_create(&sp, &s->u[0], s->hf.base ? &s->hf : NULL, e, err, es);
}

/* The model with A's part `s` times slower (auto's choice, HR_AUTO_CPU_HEADROOM). */
hr_split_model hri_split_model_slowed(const hr_split_model *m, double s)
{
    hr_split_model v = *m;
    v.t_a *= s;
    for (int k = 0; k < v.a_knots && k < HR_SPLIT_KNOTS; k++)
        v.a_knot_row_s[k] *= s;
    return v;
}

hr_split_model hri_split_model_ramped(const hr_split_model *m, int n, const double *rows, const double *k)
{
    hr_split_model v = *m;
    v.a_ramp = n < 0 ? 0 : n > HR_SPLIT_RAMP ? HR_SPLIT_RAMP : n;
    for (int i = 0; i < v.a_ramp; i++) {
        v.a_ramp_rows[i] = rows[i];
        v.a_ramp_k[i] = k[i];
    }
    return v;
}

void hri_split_crew_sizes(int total, int rows, int faces, int *interior, int *boundary)
{
    int b = 1;
    if (rows > 0 && faces > 0) b = (int)lround((double)total * faces / rows);
    if (b > total - 1) b = total - 1;
    if (b < 1) b = 1;
    *boundary = b;
    *interior = total - b > 0 ? total - b : 1;
}

static int split_extent(const hr_options *o)
{
    return hri_options_extent(o, hri_options_dim(o) == 3 ? 2 : 1);
}

/* Threads of the CPU part: all cores less the one driving the second placement. */
static void thread_plan(const hr_options *o, int two_cpus, int *interior, int *boundary, int *second)
{
    int total = o->threads > 0 ? o->threads : hri_cpu_count();
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
                                          : (hri_options_dim(o) == 3 && total >= 8 ? total / 8 : 1);
        if (b >= total && total > 1) b = total - 1;
        total = total - b > 0 ? total - b : 1;
    }
    *interior = total;
    *boundary = b;
}

void hri_split_spec_from_options(const hr_options *o, const hr_run_problem *p, int rows_a, hr_solver *s,
                                hr_split_spec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->dim = p->dim;
    sp->nx = p->nx;
    sp->ny = p->ny;
    sp->nz = p->nz;
    sp->esize = hr_prec_bytes(o->precision);
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
    sp->boundary_auto = o->split_schedule == HR_SPLIT_NESTED && o->split_boundary_threads <= 0;
    sp->device = o->device;
    sp->s = s;
    sp->tune = o->tuning;
}

/* Timed blocks last at least this long (short blocks measure the OS, not the sweep), and a
 * figure is the median of CAL_BLOCKS of them after CAL_WARM warm-up sweeps. */
#define CAL_BLOCK_S 0.01
#define CAL_BLOCKS  5
#define CAL_WARM    3

/* Median seconds per sweep of a running engine: blocks of whole multiples of `unit` sweeps
 * (16: a GPU part alone replays graphs of 16), sized from one untimed block to last
 * CAL_BLOCK_S. */
static hr_status time_running(hr_split *e, int unit, double *per_sweep)
{
    hr_status st = hri_split_sweeps(e, unit > CAL_WARM ? unit : CAL_WARM);
    const double t0 = hr_now();
    if (st == HR_OK) st = hri_split_sweeps(e, unit);
    if (st != HR_OK) return st;
    const double est = (hr_now() - t0) / unit;
    long k = est > 0 ? (long)ceil(CAL_BLOCK_S / (est * unit)) : 64;
    k = (k < 1 ? 1 : k > 4096 / unit ? 4096 / unit : k) * unit;
    double t[CAL_BLOCKS];
    for (int r = 0; r < CAL_BLOCKS && st == HR_OK; r++) {
        const double t1 = hr_now();
        st = hri_split_sweeps(e, k);
        t[r] = (hr_now() - t1) / (double)k;
    }
    if (st != HR_OK) return st;
    *per_sweep = hri_median(t, CAL_BLOCKS);
    return HR_OK;
}

/* An engine of spec `sp` loaded from `u` (NULL: zeros), timed sweep by sweep into *per_sweep
 * and, with graph_s, in blocks of 16 (B alone replays CUDA graphs) into *graph_s. */
static hr_status time_engine(const hr_split_spec *sp, const hr_grid *u, double *per_sweep, double *graph_s,
                             char *err, size_t es)
{
    hr_split *e;
    HR_TRY(hri_split_create(sp, u, NULL, &e, err, es));
    hr_status st = time_running(e, 1, per_sweep);
    if (st == HR_OK && graph_s) st = time_running(e, 16, graph_s);
    if (st != HR_OK) snprintf(err, es, "calibration: %.200s", e->err);
    hri_split_free(e);
    return st;
}

/* Values that differ from point to point, none zero: the run's data is not zeros, and a
 * CPU may skip stores of zeros over zeros (the first model's in-cache slabs ran 3x faster
 * on zeros than the same rows did in the measured 3-D split). */
void hri_split_fill_nonzero(hr_grid *u)
{
    const hr_grid_layout *l = &u->l;
    const size_t count = hr_layout_bytes(l) / l->esize;
    for (size_t x = 0; x < count; x++) {
        const double v = (double)(1 + (x * 2654435761u >> 7) % 61) / 64.0;
        if (l->esize == 8)
            ((double *)u->base)[x] = v;
        else
            ((float *)u->base)[x] = (float)v;
    }
}

/* The ladder of CPU shares the split is measured at: n/64 up to n in steps of sqrt 2 (at least
 * g rows, at most n - g), then n (the CPU alone). Steps of 2 left the cache transitions between
 * rungs (a share in the L3 runs well above STREAM, the next rung not), so the model missed the
 * splits between them by up to 2x. */
static int ladder_rows(int n, int g, int rows[HR_SPLIT_KNOTS])
{
    int count = 0;
    const double r0 = n / 64 > g ? n / 64 : g;
    for (int k = 0; count < HR_SPLIT_KNOTS - 1; k++) {
        const int r = (int)lround(r0 * pow(2.0, 0.5 * k));
        if (r > n - g) break;
        if (!count || r > rows[count - 1]) rows[count++] = r;
    }
    rows[count++] = n;
    return count;
}

static hr_status calibrate(const hr_options *o, unsigned flags, hr_hybrid_calibration *c, hr_split_model *m,
                           char *err, size_t es)
{
    memset(c, 0, sizeof *c);
    memset(m, 0, sizeof *m);
    const double t_start = hr_now();
    hr_run_problem p;
    hri_problem_resolve(o, &p);
    const int n = split_extent(o);
    const int g = o->split_ghost > 0 ? o->split_ghost : 1;
    hr_split_spec sp;
    hr_grid_layout l;
    memset(&l, 0, sizeof l);
    hri_split_spec_from_options(o, &p, 0, NULL, &sp);
    hr_layout_init(&l, p.dim, p.nx, p.ny, p.nz, sp.esize);
    c->row_bytes = (double)hr_layout_outer_stride(&l) * (double)sp.esize;
    m->rows = n;
    m->messages = 2;
    m->row_bytes = c->row_bytes;
    m->a_ws_per_row = c->row_bytes * (2.0 + sp.has_hf);
    c->llc_bytes = (double)hri_cache_llc_bytes();
    if (!(c->llc_bytes > 0)) c->llc_bytes = 32.0 * 1024 * 1024;
    hr_grid u;
    if (hri_grid_alloc_huge(&u, &l, hr_tune_on(sp.tune.hugepages, 0)) != HR_OK) {
        snprintf(err, es, "calibration: no memory for a grid of %.0f MiB", hr_layout_bytes(&l) / 1048576.0);
        return HR_ERR_NO_MEMORY;
    }
    hri_split_fill_nonzero(&u);
    hr_status st;
    /* t_g: the second placement alone on the whole grid, sweep by sweep as in a split, and in
     * blocks of its graphs as GPU-only runs (T(0)) */
    st = time_engine(&sp, &u, &c->t_gpu, &c->gpu_alone_s, err, es);
    /* the floor of B's part: B alone on a few rows, sweep by sweep (launch latency) */
    if (st == HR_OK) {
        c->floor_rows = n < 16 ? n : 16;
        hri_split_spec_from_options(o, &p, 0, NULL, &sp);
        if (p.dim == 3)
            sp.nz = c->floor_rows;
        else
            sp.ny = c->floor_rows;
        st = time_engine(&sp, NULL, &c->gpu_floor_s, NULL, err, es);
    }
    m->t_b = c->t_gpu;
    m->b_alone = c->gpu_alone_s;
    /* a part of 16 rows cannot take longer than the whole grid (a noisy floor would) */
    m->b_floor = c->gpu_floor_s < c->t_gpu ? c->gpu_floor_s : c->t_gpu;
    /* X0: the split with g rows on the CPU (B is surely the later part) less B's part */
    if (st == HR_OK && n >= 2 * g) {
        hri_split_spec_from_options(o, &p, g, NULL, &sp);
        st = time_engine(&sp, &u, &c->probe_s, NULL, err, es);
        c->probe_rows = g;
        const double b0 = hr_split_model_part_b(m, g);
        c->x_off = c->probe_s > b0 ? c->probe_s - b0 : 0.0;
        c->x_exposed = c->x_off;
    }
    /* The CPU term inside the real split (its threads next to the host thread and the busy GPU,
     * on nonzero data): CPU slabs timed alone missed it by 0.4x to 3x on the H100 machine. */
    c->ladder = ladder_rows(n, g, c->ladder_rows);
    for (int k = 0; k < c->ladder && st == HR_OK; k++) {
        hri_split_spec_from_options(o, &p, c->ladder_rows[k], NULL, &sp);
        st = time_engine(&sp, &u, &c->ladder_s[k], NULL, err, es);
    }
    /* and down again, the faster of the two kept: a slow spell of the host (seconds long on
     * the H100 machine) hit a run of neighbouring rungs in the one pass up, and the model
     * overstated every split between them by up to 2.5x (n = 16384) */
    for (int k = c->ladder - 1; k >= 0 && st == HR_OK; k--) {
        double t;
        hri_split_spec_from_options(o, &p, c->ladder_rows[k], NULL, &sp);
        st = time_engine(&sp, &u, &t, NULL, err, es);
        if (st == HR_OK && t < c->ladder_s[k]) c->ladder_s[k] = t;
    }
    /* A rung well above the line through its neighbours (the last: through the two before it;
     * the first: above the second, as T(r) does not fall with r) is an engine that ran slow as
     * a whole (T(r) is near-linear between rungs sqrt 2 apart: cache exits only bend it up
     * gently; slow rungs measured 1.7x to 4.8x their line, a first naive rung 3.7x the
     * second): it is measured again in fresh engines, at most twice, and the fastest
     * kept. */
    for (int k = 0; k < c->ladder && st == HR_OK; k++) {
        const int last = k + 1 == c->ladder;
        if (last && k < 2) break;
        if (k == 0 && c->ladder < 2) continue;
        const int k0 = k == 0 ? 1 : last ? k - 2 : k - 1, k1 = k == 0 ? 1 : last ? k - 1 : k + 1;
        const double r0 = c->ladder_rows[k0], r = c->ladder_rows[k], r1 = c->ladder_rows[k1];
        const double line =
            k == 0 ? c->ladder_s[1]
                   : c->ladder_s[k0] + (r - r0) / (r1 - r0) * (c->ladder_s[k1] - c->ladder_s[k0]);
        for (int again = 0; again < 2 && st == HR_OK && c->ladder_s[k] > 1.2 * line; again++) {
            double t;
            hri_split_spec_from_options(o, &p, c->ladder_rows[k], NULL, &sp);
            st = time_engine(&sp, &u, &t, NULL, err, es);
            if (st == HR_OK && t < c->ladder_s[k]) c->ladder_s[k] = t;
            c->remeasured++;
        }
    }
    /* X0 is at most what any rung left above B's part: T(r) >= b(r) + X0 at every split. A slow
     * probe engine otherwise lifts the whole GPU-bound side of the model (fig. 5d, nested:
     * probe 2.1 ms, rungs at 16-32 planes 1.54-1.56 ms, the model 35 % high from 0.5 to 4 %) */
    for (int k = 0; k < c->ladder && st == HR_OK; k++) {
        const int r = c->ladder_rows[k];
        const double room = c->ladder_s[k] - hr_split_model_part_b(m, r);
        if (r < n && r >= g && room < c->x_off) c->x_off = room > 0.0 ? room : 0.0;
    }
    c->x_exposed = c->x_off;
    if (st == HR_OK) {
        const int fastest =
            hr_split_model_set_knots(m, c->ladder_rows, c->ladder_s, c->ladder, c->x_off, c->cpu_knot_rows);
        c->cpu_slab_rows = fastest >= 0 ? c->cpu_knot_rows[fastest] : 0;
        c->cpu_knots = m->a_knots;
        /* t_c: the whole grid at the fastest rate measured (the bound 1 + t_g/t_c holds) */
        c->t_cpu = fastest >= 0 ? n * m->a_knot_row_s[fastest] : 0.0;
        m->t_a = c->t_cpu;
        m->x_latency = c->x_off / 2; /* X = 2 messages x latency: the measured exposed cost */
        m->x_bandwidth = 0.0;
        m->x_sigma = 0.0;
    }
    /* auto: the best split of the model with the CPU's headroom, and two smaller ones, measured
     * (none larger: those leave the CPU part less headroom) */
    if (st == HR_OK && n >= 2 * g) {
        const hr_split_model safe = hri_split_model_slowed(m, HR_AUTO_CPU_HEADROOM);
        int best = g;
        double tbest = HUGE_VAL;
        for (int r = g; r <= n - g; r++) {
            const double t = hr_split_model_time(&safe, r);
            if (t < tbest) {
                tbest = t;
                best = r;
            }
        }
        const int cand[HR_SPLIT_CANDIDATES] = {best, (int)lround(0.8 * best), (int)lround(0.64 * best)};
        for (int k = 0; k < HR_SPLIT_CANDIDATES && st == HR_OK; k++) {
            int r = cand[k] < g ? g : cand[k] > n - g ? n - g : cand[k], dup = 0;
            for (int q = 0; q < c->candidates; q++)
                dup |= c->cand_rows[q] == r;
            if (dup) continue;
            hri_split_spec_from_options(o, &p, r, NULL, &sp);
            st = time_engine(&sp, &u, &c->cand_s[c->candidates], NULL, err, es);
            /* well above the model (which the ladder's rungs around it made): an engine that
             * ran slow as a whole, measured again like a rung (n = 16384: candidates
             * at 317-495 rows 0.84-1.68 ms between rungs of 0.70 ms; auto took GPU-only, 5 %
             * slower than the best split its sweep measured) */
            const double line = hr_split_model_time(m, r);
            for (int again = 0; again < 2 && st == HR_OK && c->cand_s[c->candidates] > 1.2 * line; again++) {
                double t;
                st = time_engine(&sp, &u, &t, NULL, err, es);
                if (st == HR_OK && t < c->cand_s[c->candidates]) c->cand_s[c->candidates] = t;
                c->cand_remeasured++;
            }
            c->cand_rows[c->candidates++] = r;
        }
        /* a candidate that pays is measured again in a fresh engine, fastest first, until one pays
         * twice: engines of one split differ by up to 4x on the H100 machine, and one auto
         * took 35 planes at 1.535 ms (GPU-only 1.579) that its sweep measured at 1.739 ms */
        const double t0 = c->gpu_alone_s;
        int tried[HR_SPLIT_CANDIDATES] = {0};
        for (int round = 0; round < c->candidates && st == HR_OK; round++) {
            int k = -1;
            for (int q = 0; q < c->candidates; q++)
                if (!tried[q] && (k < 0 || c->cand_s[q] < c->cand_s[k])) k = q;
            if (k < 0 || !(c->cand_s[k] < (1.0 - HR_AUTO_MARGIN) * t0)) break;
            tried[k] = 1;
            hri_split_spec_from_options(o, &p, c->cand_rows[k], NULL, &sp);
            st = time_engine(&sp, &u, &c->cand_again_s[k], NULL, err, es);
            if (st == HR_OK && c->cand_again_s[k] < (1.0 - HR_AUTO_MARGIN) * t0) break;
        }
    }
    hri_grid_free(&u);
    if (st != HR_OK) return st;
    if (o->split_second == HR_SPLIT_GPU) {
        double small, row;
        HR_TRY(hri_place_gpu_roundtrip(o->device, sp.esize, 21, &small));
        HR_TRY(hri_place_gpu_roundtrip(o->device, (size_t)c->row_bytes, 21, &row));
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
    c->seconds = hr_now() - t_start;
    return HR_OK;
}

/* The checks every hybrid run needs before anything is allocated. */
static hr_status check_placements(const hr_options *o, char *err, size_t es)
{
    if (o->split_second == HR_SPLIT_GPU) {
        const int count = hri_cuda_device_count();
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

/* the thread's one error channel (hr_last_error()): every handle's messages go there */
#define calibrate_error (hri_last_error_buf())

const char *hr_hybrid_last_error(void)
{
    return hr_last_error();
}

hr_status hr_hybrid_calibrate(const hr_options *o, unsigned flags, hr_hybrid_calibration *c,
                              hr_split_model *m)
{
    char err[256] = "";
    hr_status st = o && c && m ? hr_options_validate(o, err, sizeof err) : HR_ERR_INVALID_ARG;
    if (st == HR_OK) st = check_placements(o, err, sizeof err);
    if (st == HR_OK) st = calibrate(o, flags, c, m, err, sizeof err);
    snprintf(calibrate_error, HR_LAST_ERROR_SIZE, "%s", st != HR_OK ? err : "");
    return st;
}

/* The rows on the CPU for a given fraction, checked against the parts' needs. */
static hr_status rows_for_split(hr_solver *s, int n, int g, int *rows)
{
    const double f = s->o.split;
    const int r = (int)lround(f * n);
    if (f > 0.0 && f < 1.0 && (r == 0 || r == n)) {
        hri_solver_set_error(s, "split: %g leaves the %s part with no rows (%d %s)", f, r == 0 ? "CPU" : "GPU",
                            n, s->p.dim == 3 ? "planes" : "rows");
        return HR_ERR_INVALID_ARG;
    }
    if (r > 0 && r < n && (r < g || n - r < g)) {
        hri_solver_set_error(s,
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
    hri_solver_init_rows(s, 0, hr_layout_outer(&s->u[0].l));
    s->cur = 0;
    hr_split_spec sp;
    hri_split_spec_from_options(&s->o, &s->p, 0, s, &sp);
    sp.parts = s->o.gpus;
    if (sp.second == HR_SPLIT_CPU) { /* the cores shared by the parts */
        const int t = s->o.threads > 0 ? s->o.threads : hri_cpu_count();
        sp.threads_b = t / sp.parts > 0 ? t / sp.parts : 1;
    }
    char err[256] = "";
    hr_status st = hri_split_create(&sp, &s->u[0], s->hf.base ? &s->hf : NULL, &h->e, err, sizeof err);
    if (st != HR_OK) {
        if (err[0]) hri_solver_set_error(s, "%s", err);
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

/* Whether auto's watch runs: a split auto chose with both parts non-empty, against the
 * calibration's GPU-only time. tuning.auto_watch: the margin (0: HR_AUTO_MARGIN, < 0: off);
 * tuning.auto_watch_force (tests): any split with both parts falls back after its first window. */
static void watch_init(hybrid_state *h, const hr_tuning *tu)
{
    const hr_hybrid_info *in = &h->info;
    h->watch_margin = NAN;
    h->watch_force = tu->auto_watch_force > 0;
    if (in->rows_cpu <= 0 || in->rows_cpu >= in->rows || h->e->nparts != 2) return;
    if (h->watch_force) {
        h->watch_margin = 0.0;
        return;
    }
    if (in->auto_split != 1 || !in->have_model || !(in->cal.gpu_alone_s > 0)) return;
    h->watch_margin = tu->auto_watch != 0.0 ? tu->auto_watch : HR_AUTO_MARGIN;
    if (!(h->watch_margin > 0)) h->watch_margin = NAN;
}

static hr_status hybrid_setup(hr_solver *s)
{
    HR_TRY(check_placements(&s->o, s->err, sizeof s->err));
    if (s->o.gpus > 1) {
        hybrid_state *hc = calloc(1, sizeof *hc);
        if (!hc) return HR_ERR_NO_MEMORY;
        hc->watch_margin = NAN; /* chains of GPUs: no auto, no watch */
        s->impl = hc;
        return chain_setup(s, hc);
    }
    hybrid_state *h = calloc(1, sizeof *h);
    if (!h) return HR_ERR_NO_MEMORY;
    h->watch_margin = NAN;
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
        if (stream) { /* Sourouri et al.'s rule, within what the parts need */
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
    hri_solver_init_rows(s, 0, hr_layout_outer(&s->u[0].l));
    s->cur = 0;
    char err[256] = "";
    hr_status st = engine_from_host(s, rows_a, &h->e, err, sizeof err);
    if (st != HR_OK) {
        if (err[0]) hri_solver_set_error(s, "%s", err);
        return st;
    }
    /* the crews as built (nested sizes them to the part's rows unless given) */
    in->cpu_threads = rows_a > 0 ? h->e->p[0]->spec.threads : 0;
    in->boundary_threads = rows_a > 0 && rows_a < n ? h->e->p[0]->spec.boundary_threads : 0;
    s->cfg.threads = in->cpu_threads + in->boundary_threads;
    s->cfg.device = s->o.split_second == HR_SPLIT_GPU && rows_a < n ? s->o.device : -1;
    s->cfg.streams = s->cfg.device >= 0 ? 3 : 0;
    const hr_place *B = h->e->p[h->e->nparts - 1];
    if (rows_a == 0)
        snprintf(s->device_name, sizeof s->device_name, "%s", B->desc);
    else if (rows_a == n)
        snprintf(s->device_name, sizeof s->device_name, "%s", h->e->p[0]->desc);
    else
        snprintf(s->device_name, sizeof s->device_name, "%.40s | %.50s", h->e->p[0]->desc, B->desc);
    watch_init(h, &s->o.tuning);
    return HR_OK;
}

/* The split ran slower than GPU-only: the grid as it is now goes to an engine with every row on
 * the second placement, bitwise the same sweeps from here on. If that engine cannot be made, the
 * split goes on (and is no longer watched). */
static hr_status fall_back(hr_solver *s, hybrid_state *h, double split_s)
{
    hr_status st = hri_split_download(h->e, &s->u[0]);
    if (st != HR_OK) {
        hri_solver_set_error(s, "%s", h->e->err);
        return st;
    }
    s->cur = 0;
    hr_split *e = NULL;
    char err[256] = "";
    h->watch_margin = NAN;
    if (engine_from_host(s, 0, &e, err, sizeof err) != HR_OK) return HR_OK;
    hr_hybrid_info *in = &h->info;
    h->sweeps_before += h->e->st.sweeps;
    h->exchanges_before += h->e->st.exchanges;
    in->fallback_rows_cpu = in->rows_cpu;
    in->fallback_sweep = h->sweeps_before;
    in->fallback_split_s = split_s;
    hri_split_free(h->e);
    h->e = e;
    in->rows_cpu = 0;
    in->split = 0.0;
    in->cpu_threads = in->boundary_threads = 0;
    if (in->have_model) in->predicted_s = hr_split_model_time(&in->model, 0);
    s->cfg.threads = 0;
    snprintf(s->device_name, sizeof s->device_name, "%.60s (auto fell back from the split)",
             e->p[e->nparts - 1]->desc);
    return HR_OK;
}

/* One window's sweeps (or the rest of count) on the watched split; the window is judged when
 * it is full. The first window warms up and is not judged. */
static hr_status watched_sweeps(hr_solver *s, hybrid_state *h, long count)
{
    const double t0 = hr_now();
    hr_status st = hri_split_sweeps(h->e, count);
    if (st != HR_OK) return st;
    h->window_s += hr_now() - t0;
    h->window_sweeps += count;
    if (h->window_s < WATCH_WINDOW_S || h->window_sweeps < WATCH_WINDOW_SWEEPS) return HR_OK;
    const double per = h->window_s / (double)h->window_sweeps;
    const double limit = (1.0 + h->watch_margin) * h->info.cal.gpu_alone_s;
    const int judged = h->windows++ > 0;
    if (judged) {
        h->run_s += h->window_s;
        h->run_sweeps += h->window_sweeps;
        h->strikes = per > limit ? h->strikes + 1 : 0;
    }
    h->window_s = 0.0;
    h->window_sweeps = 0;
    if (h->watch_force) return fall_back(s, h, per);
    /* two judged windows in a row over the limit, or the split's judged run so far over it
     * (windows alternating about the limit: a nested split averaged 6.7 % over
     * GPU-only for 3064 sweeps with the strikes alone) */
    const int slow =
        h->strikes >= WATCH_STRIKES || (h->windows > WATCH_STRIKES && h->run_s / h->run_sweeps > limit);
    return slow ? fall_back(s, h, per) : HR_OK;
}

static hr_status hybrid_sweeps(hr_solver *s, long count)
{
    hybrid_state *h = s->impl;
    hr_status st = HR_OK;
    /* watched: in pieces of about a window (the driver may ask for every sweep at once) */
    const double t = h->info.cal.gpu_alone_s > 0 ? h->info.cal.gpu_alone_s : 1e-3;
    const long window = (long)(WATCH_WINDOW_S / t) + 1,
               piece = window > WATCH_WINDOW_SWEEPS ? window : WATCH_WINDOW_SWEEPS;
    while (st == HR_OK && count > 0 && !isnan(h->watch_margin)) {
        const long k = piece < count ? piece : count;
        st = watched_sweeps(s, h, k);
        count -= k;
    }
    if (st == HR_OK && count > 0) st = hri_split_sweeps(h->e, count);
    if (st != HR_OK && h->e->err[0]) hri_solver_set_error(s, "%s", h->e->err);
    return st;
}

static hr_status hybrid_sync_host(hr_solver *s)
{
    hybrid_state *h = s->impl;
    const double t0 = hr_now();
    hr_status st = hri_split_download(h->e, &s->u[0]);
    if (st != HR_OK) hri_solver_set_error(s, "%s", h->e->err);
    s->t_d2h += hr_now() - t0;
    s->cur = 0;
    return st;
}

static hr_status hybrid_residual(hr_solver *s, double *rel)
{
    hybrid_state *h = s->impl;
    /* u[1] is free once sync_host keeps the solution in u[0]: the GPU part's scratch */
    hr_status st = hri_split_residual(h->e, &s->u[1], rel);
    if (st != HR_OK) hri_solver_set_error(s, "%s", h->e->err);
    return st;
}

static hr_status hybrid_upload(hr_solver *s)
{
    hybrid_state *h = s->impl;
    hr_status st = hri_split_load(h->e, &s->u[s->cur], s->hf.base ? &s->hf : NULL, 0);
    if (st != HR_OK) hri_solver_set_error(s, "%s", h->e->err);
    return st;
}

static void hybrid_teardown(hr_solver *s)
{
    hybrid_state *h = s->impl;
    if (!h) return;
    hri_split_free(h->e);
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
    const hr_split_model safe = hri_split_model_slowed(m, HR_AUTO_CPU_HEADROOM);
    out->rows_cpu = hr_split_model_best_range(&safe, g, n - g, HR_AUTO_MARGIN, NULL);
    if (c->candidates > 0) { /* measured beats modelled: the fastest candidate, if it pays */
        const double t0 = c->gpu_alone_s > 0 ? c->gpu_alone_s : hr_split_model_time(m, 0);
        int best = -1, confirmed = 0;
        for (int k = 0; k < c->candidates; k++)
            confirmed |= c->cand_again_s[k] > 0.0;
        double tbest = HUGE_VAL;
        for (int k = 0; k < c->candidates; k++) {
            /* measured twice: the slower of the two; else (a calibration by hand) once */
            const double t =
                confirmed ? (c->cand_again_s[k] > 0.0
                                 ? (c->cand_again_s[k] > c->cand_s[k] ? c->cand_again_s[k] : c->cand_s[k])
                                 : HUGE_VAL)
                          : c->cand_s[k];
            if (t < tbest) {
                tbest = t;
                best = k;
            }
        }
        out->rows_cpu = best >= 0 && tbest < (1.0 - HR_AUTO_MARGIN) * t0 ? c->cand_rows[best] : 0;
    }
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
    out->sweeps = h->sweeps_before + h->e->st.sweeps;
    out->exchanges = h->exchanges_before + h->e->st.exchanges;
    out->wait_s = h->e->st.wait_s;
    snprintf(out->exchange, sizeof out->exchange, "%s", h->e->exchange);
    return HR_OK;
}

const hr_kernel_ops hri_kernel_hybrid = {
    .setup = hybrid_setup,
    .sweeps = hybrid_sweeps,
    .sync_host = hybrid_sync_host,
    .residual = hybrid_residual,
    .teardown = hybrid_teardown,
    .upload = hybrid_upload,
};
