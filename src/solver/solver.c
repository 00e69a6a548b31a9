/*
 * The iteration driver for the 2-D Poisson problem: options, grids, the sweep loop
 * with residual checks and monitors, and the metrics of the result.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/stencil.h"
#include "common/sysmem.h"
#include "common/timer.h"
#include "cuda/cuda_api.h"
#include "solver/solver_internal.h"

/* The largest n accepted: (n+2)^2 doubles must stay far from size_t limits and the
 * int index range used by the kernels. Memory is checked separately at allocation. */
#define HR_MAX_N 1000000

void hr_options_default(hr_options *o)
{
    memset(o, 0, sizeof *o);
    o->n = 1024;
    o->iters = 1000;
    o->tol = 0.0;
    o->check_every = 100;
    o->precision = HR_PREC_SINGLE;
    o->backend = HR_BACKEND_AUTO;
    o->bind = HR_BIND_NONE;
    o->layout = HR_LAYOUT_FLAT;
    o->rhs = HR_RHS_SPIKE;
    o->alpha = 1;
    o->host_memory = HR_HOST_PINNED;
}

static hr_status why(char *buf, size_t size, const char *msg)
{
    if (buf && size) snprintf(buf, size, "%s", msg);
    return HR_ERR_INVALID_ARG;
}

static hr_backend resolve_backend(hr_backend b);

hr_status hr_options_validate(const hr_options *o, char *w, size_t ws)
{
    if (!o) return why(w, ws, "options: NULL");
    if (o->n < 1 || o->n > HR_MAX_N) return why(w, ws, "n: must be between 1 and 1000000");
    if (o->iters < 0) return why(w, ws, "iters: must be >= 0");
    if (!(o->tol >= 0.0) || !isfinite(o->tol)) return why(w, ws, "tol: must be a finite value >= 0");
    if (o->tol > 0.0 && o->check_every < 1) return why(w, ws, "check: must be >= 1");
    if (o->precision != HR_PREC_SINGLE && o->precision != HR_PREC_DOUBLE)
        return why(w, ws, "precision: must be single or double");
    if ((unsigned)o->backend >= HR_BACKEND_COUNT) return why(w, ws, "backend: unknown");
    if (o->threads < 0 || o->threads > 4096) return why(w, ws, "threads: must be between 1 and 4096");
    if ((o->thread_rows > 0) != (o->thread_cols > 0) || o->thread_rows < 0 || o->thread_cols < 0 ||
        (o->thread_rows > 0 && o->thread_rows * o->thread_cols > 4096))
        return why(w, ws, "thread-grid: give both rows and columns (product <= 4096)");
    if (o->thread_rows > 0 && o->threads > 0 && o->thread_rows * o->thread_cols != o->threads)
        return why(w, ws, "thread-grid: rows x columns must equal threads");
    if (o->bind != HR_BIND_NONE && o->bind != HR_BIND_CORE) return why(w, ws, "bind: none or core");
    if (o->layout != HR_LAYOUT_FLAT && o->layout != HR_LAYOUT_BLOCKS)
        return why(w, ws, "layout: flat or blocks");
    if (o->rhs != HR_RHS_SPIKE && o->rhs != HR_RHS_MANUFACTURED && o->rhs != HR_RHS_ARRAY)
        return why(w, ws, "rhs: unknown");
    if (o->rhs == HR_RHS_ARRAY && !o->rhs_values) return why(w, ws, "rhs: array without values");
    if (!isfinite(o->boundary)) return why(w, ws, "boundary: must be finite");
    if (o->alpha < 1) return why(w, ws, "alpha: must be >= 1");
    if (o->monitor_every < 0) return why(w, ws, "monitor: must be >= 0");
    if (o->device < 0) return why(w, ws, "device: must be >= 0");
    const hr_kernel_desc *k = o->kernel ? hr_kernel_find(resolve_backend(o->backend), o->kernel) : NULL;
    if (k && k->check) return k->check(o, w, ws);
    return HR_OK;
}

void hr_thread_grid(int threads, int *rows, int *cols)
{
    int c = 1;
    for (int d = 1; (long)d * d <= threads; d++)
        if (threads % d == 0) c = d;
    *cols = c;
    *rows = threads / c;
}

void hr_solver_set_error(hr_solver *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
}

const char *hr_solver_last_error(const hr_solver *s)
{
    return s ? s->err : "";
}

hr_rhs_view hr_solver_rhs_view(const hr_solver *s)
{
    hr_rhs_view v = {NULL, 0, 0};
    if (s->hf.base)
        v.hf = hr_grid_origin(&s->hf);
    else
        v.spike_i = v.spike_j = s->spike;
    return v;
}

static double rhs_value(const hr_solver *s, int i, int j)
{
    const double h = s->h;
    if (s->o.rhs == HR_RHS_MANUFACTURED) {
        const double pi = 3.14159265358979323846;
        return h * h * 2.0 * pi * pi * sin(pi * i * h) * sin(pi * j * h);
    }
    return h * h * s->o.rhs_values[(size_t)(i - 1) * (size_t)s->o.n + (size_t)(j - 1)];
}

void hr_solver_init_rows(hr_solver *s, int r0, int r1)
{
    for (int k = 0; k < 2; k++)
        hr_grid_init_rows(&s->u[k], r0, r1, s->o.boundary);
    if (!s->hf.base) return;
    hr_grid_init_rows(&s->hf, r0, r1, 0.0);
    for (int i = r0 > 1 ? r0 : 1; i < r1 && i <= s->o.n; i++)
        for (int j = 1; j <= s->o.n; j++)
            hr_grid_set(&s->hf, i, j, rhs_value(s, i, j));
}

double hr_solver_host_residual(const hr_solver *s)
{
    const hr_grid *g = &s->u[s->cur];
    double rr = 0.0, bb = 0.0;
    hr_cpu_residual(g->l.esize, hr_grid_origin(g), hr_solver_rhs_view(s), g->l.pitch, s->o.n, 1, s->o.n + 1,
                    &rr, &bb);
    if (bb == 0.0) return sqrt(rr); /* zero right-hand side: report the absolute residual */
    return sqrt(rr / bb);
}

static hr_backend resolve_backend(hr_backend b)
{
    if (b != HR_BACKEND_AUTO) return b;
    if (hr_cuda_device_count() > 0 && hr_kernel_find(HR_BACKEND_GPU, NULL)) return HR_BACKEND_GPU;
    return HR_BACKEND_CPU_THREADS;
}

/* Why the last hr_solver_create on this thread failed (the handle is gone by then). */
static _Thread_local char create_error[256];

const char *hr_last_error(void)
{
    return create_error;
}

hr_status hr_solver_create(const hr_options *o, hr_solver **out)
{
    create_error[0] = '\0';
    if (!out) return HR_ERR_INVALID_ARG;
    *out = NULL;
    HR_TRY(hr_options_validate(o, create_error, sizeof create_error));
    hr_solver *s = calloc(1, sizeof *s);
    if (!s) return HR_ERR_NO_MEMORY;
    s->o = *o;
    s->o.backend = resolve_backend(o->backend);
    const char *kname = o->kernel;
    if (!kname && s->o.backend == HR_BACKEND_CPU_THREADS && o->layout == HR_LAYOUT_BLOCKS) kname = "blocks";
    s->k = hr_kernel_find(s->o.backend, kname);
    hr_status st = HR_OK;
    if (!s->k) {
        st = (s->o.backend == HR_BACKEND_GPU && !hr_kernel_find(HR_BACKEND_GPU, NULL)) ? HR_ERR_UNSUPPORTED
                                                                                       : HR_ERR_INVALID_ARG;
        hr_solver_set_error(s, "kernel: backend %s has no kernel '%s'", hr_backend_name(s->o.backend),
                            kname ? kname : "(default)");
        goto fail;
    }
    s->h = 1.0 / ((double)o->n + 1.0);
    s->spike = HR_SPIKE_INDEX(o->n);
    /* refuse what cannot fit before touching it: with overcommit, a too-large malloc can
     * succeed and the first sweep would then be killed by the kernel */
    hr_layout2d need;
    if (!hr_layout2d_init(&need, o->n, o->precision == HR_PREC_DOUBLE ? 8 : 4) ||
        hr_layout2d_bytes(&need) > hr_host_available_bytes() / (o->rhs == HR_RHS_SPIKE ? 2 : 3)) {
        hr_solver_set_error(s, "n: %d x %d grids do not fit in the available memory", o->n + 2, o->n + 2);
        st = HR_ERR_NO_MEMORY;
        goto fail;
    }
    HR_CHECK_GOTO(st, hr_grid_alloc(&s->u[0], o->n, o->precision), fail);
    HR_CHECK_GOTO(st, hr_grid_alloc(&s->u[1], o->n, o->precision), fail);
    if (o->rhs != HR_RHS_SPIKE) {
        HR_CHECK_GOTO(st, hr_grid_alloc(&s->hf, o->n, o->precision), fail);
        s->spike = 0;
    }
    double t0 = hr_now();
    HR_CHECK_GOTO(st, s->k->setup(s), fail);
    s->t_setup = hr_now() - t0;
    s->o.kernel = NULL; /* the caller's string need not outlive create */
    *out = s;
    return HR_OK;
fail:
    snprintf(create_error, sizeof create_error, "%s", s->err);
    hr_solver_free(s);
    return st;
}

void hr_solver_free(hr_solver *s)
{
    if (!s) return;
    if (s->k && s->k->teardown) s->k->teardown(s);
    hr_grid_free(&s->u[0]);
    hr_grid_free(&s->u[1]);
    hr_grid_free(&s->hf);
    free(s->hist_it);
    free(s->hist_res);
    free(s);
}

static hr_status history_push(hr_solver *s, long it, double r)
{
    if (!s->o.keep_history) return HR_OK;
    if (s->hist_len == s->hist_cap) {
        size_t cap = s->hist_cap ? 2 * s->hist_cap : 64;
        long *a = realloc(s->hist_it, cap * sizeof *a);
        if (!a) return HR_ERR_NO_MEMORY;
        s->hist_it = a;
        double *b = realloc(s->hist_res, cap * sizeof *b);
        if (!b) return HR_ERR_NO_MEMORY;
        s->hist_res = b;
        s->hist_cap = cap;
    }
    s->hist_it[s->hist_len] = it;
    s->hist_res[s->hist_len] = r;
    s->hist_len++;
    return HR_OK;
}

size_t hr_solver_history(const hr_solver *s, const long **iters, const double **res)
{
    if (iters) *iters = s->hist_it;
    if (res) *res = s->hist_res;
    return s->hist_len;
}

static hr_status current_residual(hr_solver *s, double *r)
{
    if (s->k->residual) return s->k->residual(s, r);
    if (s->k->sync_host) HR_TRY(s->k->sync_host(s));
    *r = hr_solver_host_residual(s);
    return HR_OK;
}

static long next_event(long done, long every)
{
    return every > 0 ? (done / every + 1) * every : -1;
}

static double max_error_manufactured(const hr_solver *s)
{
    const double pi = 3.14159265358979323846;
    double e = 0.0;
    for (int i = 1; i <= s->o.n; i++)
        for (int j = 1; j <= s->o.n; j++) {
            double ex = sin(pi * i * s->h) * sin(pi * j * s->h);
            double d = fabs(hr_grid_get(&s->u[s->cur], i, j) - ex);
            if (d > e) e = d;
        }
    return e;
}

hr_status hr_solver_run(hr_solver *s, hr_result *res)
{
    if (!s) return HR_ERR_INVALID_ARG;
    const hr_options *o = &s->o;
    hr_result r;
    memset(&r, 0, sizeof r);
    hr_reason reason = HR_REASON_ITERS;
    hr_status st = HR_OK;
    const long check = o->tol > 0.0 ? o->check_every : 0;
    const long start = s->done, syncs0 = s->syncs;
    double t_sweeps = 0.0, t0 = hr_now();
    s->hist_len = 0;
    while (s->done - start < o->iters) {
        long stop = start + o->iters;
        long ev_check = next_event(s->done - start, check),
             ev_mon = next_event(s->done - start, o->monitor_every);
        if (ev_check > 0 && start + ev_check < stop) stop = start + ev_check;
        if (ev_mon > 0 && start + ev_mon < stop) stop = start + ev_mon;
        double ts = hr_now();
        st = s->k->sweeps(s, stop - s->done);
        t_sweeps += hr_now() - ts;
        if (st != HR_OK) break;
        s->done = stop;
        long k = s->done - start;
        int at_check = check > 0 && k % check == 0;
        int at_mon = o->monitor_every > 0 && k % o->monitor_every == 0;
        if (!at_check && !at_mon) continue;
        double rel;
        if ((st = current_residual(s, &rel)) != HR_OK) break;
        if ((st = history_push(s, k, rel)) != HR_OK) break;
        if (at_mon && o->monitor && o->monitor(k, rel, o->monitor_user)) {
            reason = HR_REASON_STOPPED;
            break;
        }
        if (!isfinite(rel) || rel > 1e3) {
            reason = HR_REASON_DIVERGED;
            break;
        }
        if (at_check && rel < o->tol) {
            reason = HR_REASON_CONVERGED;
            break;
        }
    }
    r.time_s = hr_now() - t0;
    if (st == HR_OK && s->k->sync_host) st = s->k->sync_host(s);
    if (st != HR_OK) return st;

    r.iterations = s->done - start;
    r.global_syncs = s->syncs != syncs0 ? s->syncs - syncs0 : r.iterations;
    r.time_sweeps_s = t_sweeps;
    r.time_per_sweep_s = r.iterations > 0 ? t_sweeps / (double)r.iterations : 0.0;
    r.time_setup_s = s->t_setup;
    r.time_h2d_s = s->t_h2d;
    r.time_d2h_s = s->t_d2h;
    r.relative_residual = hr_solver_host_residual(s);
    if (!isfinite(r.relative_residual)) reason = HR_REASON_DIVERGED;
    if (reason == HR_REASON_ITERS && o->tol > 0.0 && r.relative_residual < o->tol)
        reason = HR_REASON_CONVERGED;
    r.max_error = o->rhs == HR_RHS_MANUFACTURED ? max_error_manufactured(s) : NAN;
    const double pts = (double)o->n * (double)o->n * (double)r.iterations;
    const double es = (double)s->u[0].l.esize;
    r.bytes_per_point = 2.0 * es + (s->hf.base ? es : 0.0);
    r.gflops = t_sweeps > 0 ? 5.0 * pts / t_sweeps * 1e-9 : 0.0;
    r.gbps = t_sweeps > 0 ? r.bytes_per_point * pts / t_sweeps * 1e-9 : 0.0;
    r.reference_gbps = o->reference_gbps;
    r.bandwidth_fraction = o->reference_gbps > 0 ? r.gbps / o->reference_gbps : NAN;
    r.reason = reason;
    snprintf(r.backend, sizeof r.backend, "%s", hr_backend_name(o->backend));
    snprintf(r.kernel, sizeof r.kernel, "%s", s->k->name);
    snprintf(r.device_name, sizeof r.device_name, "%s", s->device_name);
    if (res) *res = r;
    if (o->monitor && !(o->monitor_every > 0 && r.iterations % o->monitor_every == 0 && r.iterations > 0))
        o->monitor(r.iterations, r.relative_residual, o->monitor_user);
    return reason == HR_REASON_DIVERGED ? HR_ERR_DIVERGED : HR_OK;
}

hr_status hr_solver_solution(const hr_solver *s, hr_precision prec, void *dst, size_t count)
{
    if (!s || !dst) return HR_ERR_INVALID_ARG;
    const int n = s->o.n;
    if (count < (size_t)n * (size_t)n) return HR_ERR_INVALID_ARG;
    const hr_grid *g = &s->u[s->cur];
    for (int i = 1; i <= n; i++) {
        const char *row = (const char *)hr_grid_origin(g) + (size_t)i * g->l.pitch * g->l.esize;
        size_t base = (size_t)(i - 1) * (size_t)n;
        if ((prec == HR_PREC_DOUBLE) == (g->l.esize == 8)) {
            memcpy((char *)dst + base * g->l.esize, row + g->l.esize, (size_t)n * g->l.esize);
        } else {
            for (int j = 1; j <= n; j++) {
                double v = hr_grid_get(g, i, j);
                if (prec == HR_PREC_DOUBLE)
                    ((double *)dst)[base + (size_t)(j - 1)] = v;
                else
                    ((float *)dst)[base + (size_t)(j - 1)] = (float)v;
            }
        }
    }
    return HR_OK;
}
