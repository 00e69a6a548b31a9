/*
 * The solver for the structured-grid problems (2-D 5-point, 3-D 7-point): the handle,
 * grids and initial data, the loop (through the one iteration driver, driver.c) and the
 * metrics of the result. Options and the resolved problem: options.c.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/precision.h"
#include "core/solver_internal.h"
#include "core/stencil.h"
#include "core/timer.h"
#include "core/tuning.h"
#include "reference/stencil_cpu.h"
#include "runtime/cpu/fpmode.h"
#include "runtime/cpu/sysmem.h"
#include "runtime/cuda/cuda_api.h"

#define HR_PI 3.14159265358979323846

void hri_solver_set_error(hr_solver *s, const char *fmt, ...)
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

hr_rhs_view hri_solver_rhs_view(const hr_solver *s)
{
    hr_rhs_view v = {NULL, -1, -1, -1};
    if (s->hf.base)
        v.hf = hr_grid_origin(&s->hf);
    else {
        v.spike_i = s->p.spike_i;
        v.spike_j = s->p.spike_j;
        v.spike_k = s->p.spike_k;
    }
    return v;
}

/* sin(pi i / (n + 1)) along an axis; sin(pi i h) where the axis spans the unit length (the
 * unit square and cube of the manufactured problem). */
static double axis_sine(const hr_run_problem *p, int n, int i)
{
    const int nmax = p->nx > p->ny ? (p->nx > p->nz ? p->nx : p->nz) : (p->ny > p->nz ? p->ny : p->nz);
    return n == nmax ? sin(HR_PI * i * p->h) : sin(HR_PI * i / ((double)n + 1.0));
}

/* prod_a sin(pi x_a / L_a) at point (i, j, k): the sine mode of the box. */
static double sine_mode(const hr_run_problem *p, int i, int j, int k)
{
    double v = axis_sine(p, p->ny, i) * axis_sine(p, p->nx, j);
    return p->dim == 3 ? v * axis_sine(p, p->nz, k) : v;
}

/* Index of interior point (i, j, k) in the caller's arrays (x fastest). */
static size_t user_index(const hr_run_problem *p, int i, int j, int k)
{
    const size_t kk = p->dim == 3 ? (size_t)(k - 1) : 0;
    return (kk * (size_t)p->ny + (size_t)(i - 1)) * (size_t)p->nx + (size_t)(j - 1);
}

double hri_problem_rhs_at(const hr_run_problem *p, const double *values, int i, int j, int k)
{
    const double h = p->h;
    if (p->rhs == HR_RHS_MANUFACTURED) {
        /* f = pi^2 (sum_a 1 / L_a^2) u, L_a = (n_a + 1) h: 2 pi^2 u on the unit square */
        double c = 0.0;
        const int ext[3] = {p->nx, p->ny, p->nz};
        for (int a = 0; a < p->dim; a++) {
            const double L = ((double)ext[a] + 1.0) * h;
            c += HR_PI * HR_PI / (L * L);
        }
        return h * h * c * sine_mode(p, i, j, k);
    }
    return h * h * values[user_index(p, i, j, k)];
}

static double rhs_value(const hr_solver *s, int i, int j, int k)
{
    return hri_problem_rhs_at(&s->p, s->o.rhs_values, i, j, k);
}

double hri_problem_init_at(const hr_run_problem *p, const double *values, int i, int j, int k)
{
    if (p->init == HR_INIT_SINE) return sine_mode(p, i, j, k);
    return values[user_index(p, i, j, k)];
}

static double init_value(const hr_solver *s, int i, int j, int k)
{
    return hri_problem_init_at(&s->p, s->o.init_values, i, j, k);
}

/* Visits the interior points of outer slices [r0, r1). */
#define FOR_INTERIOR(p, r0, r1, i, j, k)                                                                     \
    for (int k = (p)->dim == 3 ? ((r0) > 1 ? (r0) : 1) : 0;                                                  \
         k < ((p)->dim == 3 ? ((r1) < (p)->nz + 1 ? (r1) : (p)->nz + 1) : 1); k++)                           \
        for (int i = (p)->dim == 3 ? 1 : ((r0) > 1 ? (r0) : 1);                                              \
             i < ((p)->dim == 3 ? (p)->ny + 1 : ((r1) < (p)->ny + 1 ? (r1) : (p)->ny + 1)); i++)             \
            for (int j = 1; j <= (p)->nx; j++)

void hri_solver_init_rows(hr_solver *s, int r0, int r1)
{
    const hr_run_problem *p = &s->p;
    for (int g = 0; g < 2; g++) {
        hri_grid_init_rows(&s->u[g], r0, r1, p->boundary);
        if (p->init != HR_INIT_ZERO)
            FOR_INTERIOR(p, r0, r1, i, j, k) hri_grid_set3(&s->u[g], i, j, k, init_value(s, i, j, k));
    }
    if (!s->hf.base) return;
    hri_grid_init_rows(&s->hf, r0, r1, 0.0);
    FOR_INTERIOR(p, r0, r1, i, j, k) hri_grid_set3(&s->hf, i, j, k, rhs_value(s, i, j, k));
}

double hri_solver_host_residual(const hr_solver *s)
{
    const hr_grid *g = &s->u[s->cur];
    hr_resid_args a = {
        &g->l, hr_grid_origin(g), hri_solver_rhs_view(s), hr_box_interior(&g->l), HR_FACE_ALL, NULL, NULL};
    hr_norm2 rn, bn;
    hri_cpu_residual_box(&a, &rn, &bn);
    return hr_norm2_relative(rn, bn);
}

/* What the resolved kernel cannot do with this problem, as "field: reason". */
static hr_status kernel_fits(hr_solver *s)
{
    const hr_entry *k = s->k;
    const hr_run_problem *p = &s->p;
    if (!(k->caps & (p->dim == 3 ? HR_CAP_3D : HR_CAP_2D))) {
        hri_solver_set_error(s, "kernel: %s %s does not run %d-D grids", hr_backend_name(k->backend), k->name,
                            p->dim);
        return HR_ERR_INVALID_ARG;
    }
    if (!(k->caps & HR_CAP_RECT) && (p->nx != p->ny || (p->dim == 3 && p->nz != p->nx))) {
        hri_solver_set_error(s, "%s: kernel %s runs equal extents on every axis only (got %d x %d%s)",
                            p->nx != p->ny ? "ny" : "nz", k->name, p->nx, p->ny, p->dim == 3 ? " x nz" : "");
        return HR_ERR_INVALID_ARG;
    }
    if (p->method != HR_METHOD_JACOBI && !(k->caps & HR_CAP_REDBLACK)) {
        hri_solver_set_error(s, "method: kernel %s does only Jacobi", k->name);
        return HR_ERR_INVALID_ARG;
    }
    if (p->method == HR_METHOD_JACOBI && (k->caps & HR_CAP_REDBLACK)) {
        char rb[64];
        hri_entry_names(HR_KIND_METHOD, HR_BACKEND_AUTO, 0, HR_CAP_REDBLACK, 0, ", ", ", ", rb, sizeof rb);
        hri_solver_set_error(s, "method: kernel %s does only red-black (%s)", k->name, rb);
        return HR_ERR_INVALID_ARG;
    }
    if (!(k->caps & HR_CAP_OMEGA) && p->omega != 1.0) {
        hri_solver_set_error(s, "omega: kernel %s has no weighted update (omega %g)", k->name, p->omega);
        return HR_ERR_INVALID_ARG;
    }
    return HR_OK;
}

hr_status hr_solver_create(const hr_options *o, hr_solver **out)
{
    hri_set_last_error("%s", "");
    if (!out) {
        hri_set_last_error("out: NULL (no place for the handle)");
        return HR_ERR_INVALID_ARG;
    }
    *out = NULL;
    HR_TRY(hr_options_validate(o, hri_last_error_buf(), HR_LAST_ERROR_SIZE));
    hr_solver *s = calloc(1, sizeof *s);
    if (!s) return HR_ERR_NO_MEMORY;
    s->o = *o;
    hri_problem_resolve(o, &s->p);
    s->o.dim = s->p.dim;
    s->o.backend = hri_resolve_backend(o->backend, s->p.dim);
    if (s->o.divtol == 0.0) s->o.divtol = HR_DIVTOL;
    const char *kname = o->kernel;
    if (!kname && s->o.backend == HR_BACKEND_CPU_THREADS && o->layout == HR_LAYOUT_BLOCKS &&
        o->method == HR_METHOD_JACOBI)
        kname = "blocks";
    s->k = kname || o->method == HR_METHOD_JACOBI ? hri_kernel_find(s->o.backend, kname, s->p.dim)
                                                  : hri_kernel_find_redblack(s->o.backend, s->p.dim);
    hr_status st = HR_OK;
    if (o->flush_subnormals && !HR_FP_CAN_FLUSH) {
        hri_solver_set_error(s, "flush_subnormals: this CPU architecture has no flush-to-zero switch the "
                               "library knows (x86-64 and aarch64 have)");
        st = HR_ERR_UNSUPPORTED;
        goto fail;
    }
    if (!s->k) {
        st = (s->o.backend == HR_BACKEND_GPU && !hri_kernel_find(HR_BACKEND_GPU, NULL, s->p.dim))
                 ? HR_ERR_UNSUPPORTED
                 : HR_ERR_INVALID_ARG;
        hri_solver_set_error(s, "kernel: backend %s has no %d-D kernel '%s'", hr_backend_name(s->o.backend),
                            s->p.dim, kname ? kname : "(default)");
        goto fail;
    }
    HR_CHECK_GOTO(st, kernel_fits(s), fail);
    /* refuse what cannot fit before touching it: with overcommit, a too-large malloc can
     * succeed and the first sweep would then be killed by the kernel */
    hr_grid_layout l;
    const int grids = s->p.rhs == HR_RHS_SPIKE || s->p.rhs == HR_RHS_ZERO ? 2 : 3;
    if (!hr_layout_init(&l, s->p.dim, s->p.nx, s->p.ny, s->p.nz, hr_prec_bytes(o->precision)) ||
        hr_layout_bytes(&l) > hri_host_available_bytes() / (size_t)grids) {
        hri_solver_set_error(s, "%s: %d x %d%s grids do not fit in the available memory",
                            o->nx || o->ny ? "nx" : "n", s->p.nx + 2, s->p.ny + 2,
                            s->p.dim == 3 ? " x nz+2" : "");
        st = HR_ERR_NO_MEMORY;
        goto fail;
    }
    const int huge = hr_tune_on(o->tuning.hugepages, 0);
    HR_CHECK_GOTO(st, hri_grid_alloc_huge(&s->u[0], &l, huge), fail);
    HR_CHECK_GOTO(st, hri_grid_alloc_huge(&s->u[1], &l, huge), fail);
    if (grids == 3) HR_CHECK_GOTO(st, hri_grid_alloc_huge(&s->hf, &l, huge), fail);
    s->cfg.backend = s->o.backend;
    snprintf(s->cfg.kernel, sizeof s->cfg.kernel, "%s", s->k->name);
    s->cfg.caps = s->k->caps;
    s->cfg.dim = s->p.dim;
    s->cfg.nx = s->p.nx;
    s->cfg.ny = s->p.ny;
    s->cfg.nz = s->p.nz;
    s->cfg.device = s->o.backend == HR_BACKEND_GPU ? o->device : -1;
    s->cfg.omega = s->p.omega;
    s->cfg.method = s->p.method;
    if (s->o.backend == HR_BACKEND_CPU_SEQ) s->cfg.threads = 1;
    /* the GPU keeps subnormals (at full speed): a hybrid split flushing only its CPU part would
     * match neither the GPU alone nor cpu-seq, so only the CPU backends flush */
    s->cfg.flush_subnormals =
        o->flush_subnormals && (s->o.backend == HR_BACKEND_CPU_SEQ || s->o.backend == HR_BACKEND_CPU_THREADS);
    double t0 = hr_now();
    HR_CHECK_GOTO(st, s->k->kernel->setup(s), fail);
    s->t_setup = hr_now() - t0;
    snprintf(s->cfg.device_name, sizeof s->cfg.device_name, "%s", s->device_name);
    s->o.kernel = NULL; /* the caller's strings and arrays need not outlive create */
    s->o.rhs_values = s->o.init_values = NULL;
    *out = s;
    return HR_OK;
fail:
    hri_set_last_error("%s", s->err); /* the handle is gone after this */
    hr_solver_free(s);
    return st;
}

/* A run holds the handle; its monitor (or another thread) must not re-enter it. */
static int enter(hr_solver *s, const char *what)
{
    if (__atomic_exchange_n(&s->running, 1, __ATOMIC_ACQ_REL) == 0) return 1;
    hri_solver_set_error(s, "%s: called during a run of the same solver (from its monitor or another thread)",
                        what);
    return 0;
}

static void leave(hr_solver *s)
{
    __atomic_store_n(&s->running, 0, __ATOMIC_RELEASE);
}

void hr_solver_free(hr_solver *s)
{
    if (!s) return;
    if (__atomic_load_n(&s->running, __ATOMIC_ACQUIRE)) {
        /* the run's caller still holds s: freeing it here would crash that run */
        hri_solver_set_error(s, "hr_solver_free: called during a run of the same solver (from its monitor or "
                               "another thread): ignored");
        return;
    }
    if (s->k && s->k->kernel->teardown) s->k->kernel->teardown(s);
    hri_grid_free(&s->u[0]);
    hri_grid_free(&s->u[1]);
    hri_grid_free(&s->hf);
    hri_history_free(&s->hist);
    free(s);
}

size_t hr_solver_history(const hr_solver *s, const long **iters, const double **res)
{
    if (!s) {
        if (iters) *iters = NULL;
        if (res) *res = NULL;
        return 0;
    }
    if (iters) *iters = s->hist.it;
    if (res) *res = s->hist.res;
    return s->hist.len;
}

hr_status hr_solver_config(const hr_solver *s, hr_config *out)
{
    if (!s || !out) return HR_ERR_INVALID_ARG;
    *out = s->cfg;
    return HR_OK;
}

long hr_solver_sweeps_done(const hr_solver *s)
{
    return s ? s->done : -1;
}

static hr_status current_residual(hr_solver *s, double *r)
{
    if (s->k->kernel->residual) return s->k->kernel->residual(s, r);
    if (s->k->kernel->sync_host) HR_TRY(s->k->kernel->sync_host(s));
    *r = hri_solver_host_residual(s);
    return HR_OK;
}

/* The driver's callbacks. */
static hr_status drv_advance(void *ctx, long count, hr_phase_times *t)
{
    hr_solver *s = ctx;
    (void)t;
    hr_status st = s->k->kernel->sweeps(s, count);
    if (st == HR_OK) s->done += count;
    return st;
}

static hr_status drv_residual(void *ctx, double *rel)
{
    return current_residual(ctx, rel);
}

/* The exact answer where one is known: the manufactured solution, or lambda^T u0 for the
 * sine mode with a zero right-hand side and boundary (an eigenvector of the iteration). */
static double max_error(const hr_solver *s)
{
    const hr_run_problem *p = &s->p;
    double scale;
    if (p->rhs == HR_RHS_MANUFACTURED) {
        scale = 1.0;
    } else if (p->method == HR_METHOD_JACOBI && p->init == HR_INIT_SINE && p->rhs == HR_RHS_ZERO &&
               p->boundary == 0.0) {
        double lam = cos(HR_PI / (p->nx + 1.0)) + cos(HR_PI / (p->ny + 1.0));
        lam = p->dim == 3 ? (lam + cos(HR_PI / (p->nz + 1.0))) / 3.0 : lam / 2.0;
        lam = 1.0 - p->omega + p->omega * lam;
        scale = pow(lam, (double)s->done);
    } else {
        return NAN;
    }
    const hr_grid *g = &s->u[s->cur];
    double e = 0.0;
    for (int k = p->dim == 3 ? 1 : 0; k < (p->dim == 3 ? p->nz + 1 : 1); k++)
        for (int i = 1; i <= p->ny; i++)
            for (int j = 1; j <= p->nx; j++) {
                const double d = fabs(hri_grid_get3(g, i, j, k) - scale * sine_mode(p, i, j, k));
                if (!(d <= e)) e = d;
            }
    return e;
}

void hr_solver_request_stop(hr_solver *s)
{
    if (s) s->stop = 1;
}

/* Runs `count` sweeps; final_residual: recompute the residual on the host at the end
 * (hr_solver_run), where the solution lives (RUN_ON_DEVICE: hri_solver_run_device), or
 * report the last checked one (0: hr_solver_run_sweeps). */
#define RUN_ON_DEVICE 2
static hr_status run_held(hr_solver *s, long count, int final_residual, hr_result *res);

static hr_status run(hr_solver *s, long count, int final_residual, hr_result *res)
{
    if (!s || count < 0) return HR_ERR_INVALID_ARG;
    if (!enter(s, final_residual ? "hr_solver_run" : "hr_solver_run_sweeps")) return HR_ERR_INVALID_ARG;
    hr_status st;
    if (count > LONG_MAX - s->done) { /* the count of sweeps done would wrap */
        hri_solver_set_error(s, "iters: %ld sweeps after the %ld done exceed the largest count (%ld)", count,
                            s->done, LONG_MAX);
        st = HR_ERR_INVALID_ARG;
    } else {
        const unsigned fp = hr_fp_flush_begin(s->cfg.flush_subnormals);
        st = run_held(s, count, final_residual, res);
        hr_fp_flush_end(s->cfg.flush_subnormals, fp);
    }
    leave(s);
    return st;
}

static hr_status run_held(hr_solver *s, long count, int final_residual, hr_result *res)
{
    const hr_options *o = &s->o;
    const hr_run_problem *p = &s->p;
    hr_result r;
    memset(&r, 0, sizeof r);
    const long syncs0 = s->syncs;
    s->hist.len = 0;
    hr_driver_ops ops = {.ctx = s, .advance = drv_advance, .residual = drv_residual};
    hr_driver_cfg cfg = {.max_iters = count,
                         .tol = o->tol,
                         .check_every = o->check_every,
                         .monitor_every = o->monitor_every,
                         .monitor = o->monitor,
                         .monitor_user = o->monitor_user,
                         .divref = o->divtol,
                         .first = s->done,
                         .stop = &s->stop,
                         /* the async kernels' calls are part of their schedule (passes, joins) */
                         .poll = !(s->k->caps & HR_CAP_ALPHA)};
    hr_phase_times t = {0, 0, 0, 0};
    hr_driver_out d;
    hr_status st = hri_drive(&ops, &cfg, o->keep_history ? &s->hist : NULL, &t, &d);
    if (d.reason == HR_REASON_STOPPED) s->stop = 0; /* the request is answered */
    const int on_device = final_residual == RUN_ON_DEVICE;
    if (st == HR_OK && s->k->kernel->sync_host && !on_device) st = s->k->kernel->sync_host(s);
    double device_rel = NAN;
    if (st == HR_OK && on_device) st = current_residual(s, &device_rel);
    if (st != HR_OK) return st;

    r.dim = p->dim;
    r.nx = p->nx;
    r.ny = p->ny;
    r.nz = p->nz;
    r.iterations = d.done;
    r.global_syncs = s->syncs != syncs0 ? s->syncs - syncs0 : r.iterations;
    r.time_s = t.total;
    r.time_compute_s = t.compute;
    r.time_exchange_s = t.exchange;
    r.time_residual_s = t.residual;
    r.time_sweeps_s = t.compute + t.exchange;
    r.time_per_sweep_s = r.iterations > 0 ? r.time_sweeps_s / (double)r.iterations : 0.0;
    r.time_setup_s = s->t_setup;
    r.time_h2d_s = s->t_h2d;
    r.time_d2h_s = s->t_d2h;
    r.relative_residual = on_device ? device_rel : final_residual ? hri_solver_host_residual(s) : d.last_rel;
    r.reason = final_residual || !isnan(d.last_rel)
                   ? hri_driver_final_reason(d.reason, r.relative_residual, o->tol, o->divtol)
                   : d.reason;
    r.max_error = final_residual && !on_device ? max_error(s) : NAN;
    const double pts = (double)p->nx * (double)p->ny * (double)p->nz * (double)r.iterations;
    const double es = (double)s->u[0].l.esize;
    r.bytes_per_point = 2.0 * es + (s->hf.base ? es : 0.0);
    r.flops_per_point = (p->dim == 3 ? 8.0 : 5.0) + (p->omega != 1.0 ? 3.0 : 0.0);
    r.gflops = r.time_sweeps_s > 0 ? r.flops_per_point * pts / r.time_sweeps_s * 1e-9 : 0.0;
    r.gbps = r.time_sweeps_s > 0 ? r.bytes_per_point * pts / r.time_sweeps_s * 1e-9 : 0.0;
    r.reference_gbps = o->reference_gbps;
    r.bandwidth_fraction = o->reference_gbps > 0 ? r.gbps / o->reference_gbps : NAN;
    snprintf(r.backend, sizeof r.backend, "%s", hr_backend_name(o->backend));
    snprintf(r.kernel, sizeof r.kernel, "%s", s->k->name);
    snprintf(r.device_name, sizeof r.device_name, "%s", s->device_name);
    if (res) *res = r;
    if (final_residual && o->monitor &&
        !(o->monitor_every > 0 && r.iterations % o->monitor_every == 0 && r.iterations > 0))
        o->monitor(s->done, r.relative_residual, o->monitor_user);
    return r.reason == HR_REASON_DIVERGED || r.reason == HR_REASON_NAN ? HR_ERR_DIVERGED : HR_OK;
}

hr_status hr_solver_run(hr_solver *s, hr_result *res)
{
    return run(s, s ? s->o.iters : 0, 1, res);
}

hr_status hr_solver_run_sweeps(hr_solver *s, long count, hr_result *res)
{
    return run(s, count, 0, res);
}

hr_status hri_solver_run_device(hr_solver *s, hr_result *res)
{
    return run(s, s ? s->o.iters : 0, RUN_ON_DEVICE, res);
}

int hri_solver_takes_device(const hr_solver *s)
{
    return s && s->k->kernel->device_io;
}

int hri_solver_has_rhs_grid(const hr_solver *s)
{
    return s && s->hf.base;
}

int hri_solver_can_restart(const hr_solver *s)
{
    return s && (s->k->caps & HR_CAP_DETERMINISTIC) && (!s->k->kernel->sync_host || s->k->kernel->upload);
}

hr_status hri_solver_device_io(hr_solver *s, hr_devio what, void *ptr, int single, double pre)
{
    if (!s || !ptr) return HR_ERR_INVALID_ARG;
    if (!s->k->kernel->device_io) {
        hri_solver_set_error(s, "kernel %s takes host arrays only", s->k->name);
        return HR_ERR_UNSUPPORTED;
    }
    if (what == HR_DEVIO_RHS && !s->hf.base) {
        hri_solver_set_error(s, "rhs: this set-up has no right-hand side grid");
        return HR_ERR_UNSUPPORTED;
    }
    if (!enter(s, "device arrays")) return HR_ERR_INVALID_ARG;
    const hr_status st = s->k->kernel->device_io(s, what, ptr, single, pre);
    if (st == HR_OK && what == HR_DEVIO_X0) s->done = 0;
    leave(s);
    return st;
}

/* Copies between the interior of grid g and a caller's array (x fastest); to_user picks
 * the direction. */
static void copy_interior(const hr_run_problem *p, hr_grid *g, hr_precision prec, void *user, int to_user)
{
    const size_t es = g->l.esize, ues = hr_prec_bytes(prec);
    for (int k = p->dim == 3 ? 1 : 0; k < (p->dim == 3 ? p->nz + 1 : 1); k++)
        for (int i = 1; i <= p->ny; i++) {
            char *row = (char *)g->base + hr_layout_index(&g->l, (size_t)i, 1, (size_t)k) * es;
            char *urow = (char *)user + user_index(p, i, 1, k < 1 ? 1 : k) * ues;
            if (es == ues) {
                if (to_user)
                    memcpy(urow, row, (size_t)p->nx * es);
                else
                    memcpy(row, urow, (size_t)p->nx * es);
                continue;
            }
            for (int j = 0; j < p->nx; j++) {
                if (to_user) {
                    double v = es == 8 ? ((double *)row)[j] : ((float *)row)[j];
                    if (ues == 8)
                        ((double *)urow)[j] = v;
                    else
                        ((float *)urow)[j] = (float)v;
                } else {
                    double v = ues == 8 ? ((double *)urow)[j] : ((float *)urow)[j];
                    if (es == 8)
                        ((double *)row)[j] = v;
                    else
                        ((float *)row)[j] = (float)v;
                }
            }
        }
}

hr_status hr_solver_solution(const hr_solver *s, hr_precision prec, void *dst, size_t count)
{
    if (!s || !dst || !hr_prec_is_storage(prec)) return HR_ERR_INVALID_ARG;
    if (count < hr_layout_points(&s->u[0].l)) return HR_ERR_INVALID_ARG;
    copy_interior(&s->p, (hr_grid *)&s->u[s->cur], prec, dst, 1);
    return HR_OK;
}

hr_status hr_solver_set_solution(hr_solver *s, hr_precision prec, const void *src, size_t count, long done)
{
    if (!s || !src || !hr_prec_is_storage(prec)) return HR_ERR_INVALID_ARG;
    if (count < hr_layout_points(&s->u[0].l)) return HR_ERR_INVALID_ARG;
    /* the count must survive the next hr_solver_run (monitors and checks count from it) */
    const long room = s->o.iters > 0 ? s->o.iters : 0;
    if (done < 0 || done > LONG_MAX - room) {
        hri_solver_set_error(s, "done: %ld is not a count of sweeps this solver can continue from (0 to %ld)",
                            done, LONG_MAX - room);
        return HR_ERR_INVALID_ARG;
    }
    if (!hri_solver_can_restart(s)) {
        hri_solver_set_error(s, "kernel %s keeps state it cannot restart from a solution", s->k->name);
        return HR_ERR_UNSUPPORTED;
    }
    if (!enter(s, "hr_solver_set_solution")) return HR_ERR_INVALID_ARG;
    hr_status st = s->k->kernel->sync_host ? s->k->kernel->sync_host(s) : HR_OK;
    if (st == HR_OK) {
        copy_interior(&s->p, &s->u[s->cur], prec, (void *)src, 0);
        if (s->k->kernel->upload) st = s->k->kernel->upload(s);
    }
    if (st == HR_OK) s->done = done;
    leave(s);
    return st;
}

const char *hr_kernel_default(hr_backend backend, int dim)
{
    if ((unsigned)backend >= HR_BACKEND_COUNT) return NULL;
    dim = dim == 3 ? 3 : 2;
    const hr_entry *k = hri_kernel_find(hri_resolve_backend(backend, dim), NULL, dim);
    return k ? k->name : NULL;
}
