/*
 * The sparse iteration driver: checks, method lookup, relaxation factor, fault
 * schedule, the loop with residual checks, monitors and divergence, and the result.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/driver.h"
#include "core/timer.h"
#include "core/tuning.h"
#include "methods/sparse/sparse_internal.h"
#include "runtime/cpu/sysmem.h"
#include "runtime/cpu/team.h"
#include "runtime/cuda/cuda_api.h"

void hr_sparse_options_default(hr_sparse_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->method = hri_entry_find(HR_KIND_SPARSE, HR_BACKEND_AUTO, NULL, 0)->name; /* the first line */
    o->backend = HR_BACKEND_AUTO;
    o->local_iters = 5;
    o->block = 128;
    o->max_iters = 1000;
    o->check_every = 1;
    o->divtol = 1e4;
    o->fault_recover = -1;
    o->fault_seed = 1;
}

static hr_status say(hr_sparse_result *res, hr_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static hr_status say(hr_sparse_result *res, hr_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof res->message, fmt, ap);
    va_end(ap);
    return st;
}

static hr_status validate(const hr_sparse_options *o, hr_sparse_result *res)
{
    if (o->threads < 0 || o->threads > 4096) return say(res, HR_ERR_INVALID_ARG, "threads: must be 0..4096");
    if (o->local_iters < 1 || o->local_iters > 1000)
        return say(res, HR_ERR_INVALID_ARG, "local-iters: must be 1..1000");
    if (o->block < 1) return say(res, HR_ERR_INVALID_ARG, "block: must be >= 1");
    if (!(o->tol >= 0.0) || !isfinite(o->tol))
        return say(res, HR_ERR_INVALID_ARG, "tol: must be finite and >= 0");
    if (o->max_iters < 0) return say(res, HR_ERR_INVALID_ARG, "max-iters: must be >= 0");
    if (o->check_every < 1) return say(res, HR_ERR_INVALID_ARG, "check: must be >= 1");
    if (o->monitor_every < 0) return say(res, HR_ERR_INVALID_ARG, "monitor: must be >= 0");
    if (!(o->tau == HR_SPARSE_TAU_AUTO || (o->tau >= 0.0 && o->tau < 2.0)))
        return say(res, HR_ERR_INVALID_ARG, "tau: must be in (0, 2), or auto");
    if (!(o->divtol > 1.0)) return say(res, HR_ERR_INVALID_ARG, "divtol: must be > 1");
    if (!(o->fault_fraction >= 0.0 && o->fault_fraction <= 1.0))
        return say(res, HR_ERR_INVALID_ARG, "fault: fraction must be in [0, 1]");
    if (o->fault_fraction > 0.0 && (o->fault_iter < 0 || o->fault_recover < -1))
        return say(res, HR_ERR_INVALID_ARG, "fault: iteration must be >= 0 and recover >= 0");
    if ((unsigned)o->backend >= HR_BACKEND_COUNT) return say(res, HR_ERR_INVALID_ARG, "backend: unknown");
    if (o->gpus < 0 || o->gpus > 64 || (unsigned)o->comm >= HR_SPARSE_COMM_COUNT)
        return say(res, HR_ERR_INVALID_ARG, "gpus: must be 0..64 with a known comm scheme");
    return hri_tuning_validate(&o->tuning, res->message, sizeof res->message);
}

double hri_sparse_solve_host_bytes(const hr_entry *m, const hr_sparse_options *o, int64_t n, int64_t nnz)
{
    const double dn = (double)n;
    double b = m->sparse->host_row_bytes * dn + m->sparse->host_entry_bytes * (double)nnz;
    /* plain Jacobi's rho(B) < 1 check (or tau auto) runs the spectral estimate */
    if ((m->caps & HR_CAP_TAU) && !(o->tau > 0.0) && !(o->tau == 0.0 && o->allow_divergent))
        b += hri_sparse_spectral_bytes(n);
    if (o->fault_fraction > 0.0) b += 5.0 * dn; /* the mask and its index list */
    return b;
}

double hri_sparse_solve_device_bytes(const hr_entry *m, const hr_sparse_options *o, int64_t n, int64_t nnz)
{
    if (m->backend != HR_BACKEND_GPU) return 0.0;
    /* A as stored on each device (column and value per entry, offsets per row), and the
     * method's vectors (cg b, x, r, p, q, w; jacobi diag, b and three iterates; async diag,
     * b, x and snapshots) */
    const int vectors = m->sparse->device_vectors;
    const int parts = o->gpus > 1 ? o->gpus : 1; /* several GPUs: each holds its rows of A */
    return (12.0 * (double)nnz + 16.0 * ((double)n + 1.0)) / parts + 8.0 * vectors * (double)n;
}

/* Chooses the relaxation factor: refuses plain Jacobi when rho(B) >= 1. */
static hr_status choose_tau(hr_sparse_run *r, hr_sparse_result *res)
{
    r->tau = 1.0;
    if (!(r->m->caps & HR_CAP_TAU)) return HR_OK;
    if (r->o.tau > 0.0) {
        r->tau = r->o.tau;
        return HR_OK;
    }
    if (r->o.tau == 0.0 && r->o.allow_divergent) return HR_OK;
    hr_spectral sp;
    hr_status st = hr_sparse_spectral(r->A, 0, &sp);
    if (st != HR_OK) return say(res, st, "spectral estimate failed: %s", hr_status_string(st));
    if (r->o.tau == HR_SPARSE_TAU_AUTO) {
        if (!sp.symmetric || !(sp.lambda_min > 0.0))
            return say(res, HR_ERR_INVALID_ARG,
                       "tau auto needs a symmetric matrix with positive diagonal and eigenvalues of D^-1 A "
                       "(lambda_min = %g)",
                       sp.lambda_min);
        r->tau = sp.tau;
        return HR_OK;
    }
    if (sp.rho_B >= 1.0) {
        if (sp.symmetric && sp.lambda_min > 0.0)
            return say(res, HR_ERR_INVALID_ARG,
                       "rho(B) = %.4f >= 1: Jacobi diverges; use the scaled iteration --tau auto "
                       "(tau = 2/(lambda_1 + lambda_n) = %.6g), or --tau 1 to force it",
                       sp.rho_B, sp.tau);
        return say(res, HR_ERR_INVALID_ARG, "rho(B) = %.4f >= 1: Jacobi diverges (--tau 1 forces it)",
                   sp.rho_B);
    }
    return HR_OK;
}

/* Picks round(fraction * n) distinct components with a partial Fisher-Yates shuffle. */
static hr_status make_fault_mask(hr_sparse_run *r, long *count)
{
    const int n = r->A->n_rows;
    long k = (long)llround(r->o.fault_fraction * n);
    *count = k;
    r->frozen = calloc((size_t)n, 1);
    int *idx = malloc((size_t)n * sizeof *idx);
    if (!r->frozen || !idx) {
        free(idx);
        return HR_ERR_NO_MEMORY;
    }
    for (int i = 0; i < n; i++)
        idx[i] = i;
    uint64_t s = r->o.fault_seed;
    for (long i = 0; i < k; i++) {
        long j = i + (long)(hr_splitmix64(&s) % (uint64_t)(n - i));
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
        r->frozen[idx[i]] = 1;
    }
    free(idx);
    return HR_OK;
}

/* Next multiple of `every` after `done` (or a far horizon when every <= 0). */
static long next_multiple(long done, long every)
{
    return every > 0 ? (done / every + 1) * every : -1;
}

static hr_status current_residual(hr_sparse_run *r, double *rel)
{
    if (r->m->sparse->residual) return r->m->sparse->residual(r, rel); /* where the iterate lives: no copy */
    if (r->m->sparse->sync_host) HR_TRY(r->m->sparse->sync_host(r));
    *rel = hr_csr_relative_residual(r->A, r->b, r->x);
    return HR_OK;
}

/* Growth factor beyond which cg on a non-symmetric matrix is stopped as diverged: it
 * has no convergence theory there, and was seen to grow 830x silently. */
#define HR_NONSYM_GROWTH 10.0

/* Iterations per call at most when a device loop replays its body from the host
 * (device_checks 1): what is enqueued after a stopping check still costs its launches.
 * A WHILE graph (device_checks 2) costs one launch whatever the count: no cap. */
#define HR_DEVICE_CHECK_CALL 32
/* Iterations per call at most with deferred monitors (one host round trip each). */
#define HR_DEFER_CALL 1024

struct hr_sparse_solver {
    hr_sparse_run r;
    int empty;         /* 0 x 0: nothing set up, solves return at once */
    int not_symmetric; /* the method wants A = A^T and A is not */
    long faulty;
    double time_setup; /* create's setup, reported by the first solve */
    long solves;
    int running; /* inside hr_sparse_solver_solve: its monitor must not re-enter */
    char method[16], backend[16], warning[160];
};

static void fill_names(const hr_sparse_solver *h, hr_sparse_result *res)
{
    snprintf(res->method, sizeof res->method, "%s", h->method);
    snprintf(res->backend, sizeof res->backend, "%s", h->backend);
    snprintf(res->warning, sizeof res->warning, "%s", h->warning);
    res->tau = h->r.tau;
    res->faulty_components = h->faulty;
    res->colors = h->r.colors;
    res->setups = h->r.setups;
}

void hr_sparse_solver_free(hr_sparse_solver *h)
{
    if (!h) return;
    if (__atomic_load_n(&h->running, __ATOMIC_ACQUIRE)) return; /* from the monitor: the solve holds h */
    if (h->r.m && h->r.m->sparse->teardown) h->r.m->sparse->teardown(&h->r);
    free(h->r.frozen);
    free(h);
}

hr_status hr_sparse_solver_create(const hr_csr *A, const hr_sparse_options *opt, hr_sparse_solver **out,
                                  hr_sparse_result *res_out)
{
    hr_sparse_result scratch, *res = res_out ? res_out : &scratch;
    memset(res, 0, sizeof *res);
    res->relative_residual = res->initial_residual = NAN;
    if (out) *out = NULL;
    if (!A || !opt || !out) return say(res, HR_ERR_INVALID_ARG, "NULL argument");
    HR_TRY(validate(opt, res));
    if (A->n_rows != A->n_cols)
        return say(res, HR_ERR_INVALID_ARG, "matrix is %d x %d: a solve needs a square matrix", A->n_rows,
                   A->n_cols);
    const char *name =
        opt->method ? opt->method : hri_entry_find(HR_KIND_SPARSE, HR_BACKEND_AUTO, NULL, 0)->name;
    const hr_entry *m = hri_entry_find(HR_KIND_SPARSE, opt->backend, name, 0);
    if (!m) {
        if (!hri_entry_find(HR_KIND_SPARSE, HR_BACKEND_AUTO, name, 0)) {
            char names[128];
            hri_entry_names(HR_KIND_SPARSE, HR_BACKEND_AUTO, 0, 0, 0, ", ", ", ", names, sizeof names);
            return say(res, HR_ERR_INVALID_ARG, "method: unknown '%s' (%s)", name, names);
        }
        return say(res, opt->backend == HR_BACKEND_GPU ? HR_ERR_UNSUPPORTED : HR_ERR_INVALID_ARG,
                   "method '%s' has no %s backend in this build", name, hr_backend_name(opt->backend));
    }
    int bad = -1;
    if ((m->caps & HR_CAP_NEEDS_DIAGONAL) && hr_csr_check_diagonal(A, &bad) != HR_OK)
        return say(res, HR_ERR_INVALID_ARG, "row %d (1-based) has a %s diagonal entry: %s divides by it",
                   bad + 1, A->diag[bad] < 0 ? "missing" : "zero", m->name);
    if (opt->fault_fraction > 0.0 && !(m->caps & HR_CAP_FAULTS))
        return say(res, HR_ERR_INVALID_ARG, "fault injection is not defined for method '%s'", m->name);
    if ((opt->gpus > 1 || opt->comm != HR_SPARSE_COMM_AUTO) && m->backend != HR_BACKEND_GPU)
        return say(res, HR_ERR_INVALID_ARG, "gpus: several GPUs and --comm are only for the gpu backend");

    /* refuse what cannot fit before touching it (host, and the GPU method's device) */
    {
        char b1[32], b2[32];
        const double host = hri_sparse_solve_host_bytes(m, opt, A->n_rows, A->nnz),
                     avail = (double)hri_host_available_bytes();
        if (host > avail)
            return say(res, HR_ERR_NO_MEMORY,
                       "method %s needs %s of host memory beside A, b and x, %s available", m->name,
                       hri_sparse_bytes_text(host, b1, sizeof b1), hri_sparse_bytes_text(avail, b2, sizeof b2));
        size_t dfree = 0, dtotal = 0;
        const double dev = hri_sparse_solve_device_bytes(m, opt, A->n_rows, A->nnz);
        if (dev > 0.0 && hri_cuda_device_memory(opt->device, &dfree, &dtotal) == HR_OK && dev > (double)dfree)
            return say(res, HR_ERR_NO_MEMORY,
                       "method %s on the gpu needs about %s of device memory, %s free on device %d", m->name,
                       hri_sparse_bytes_text(dev, b1, sizeof b1),
                       hri_sparse_bytes_text((double)dfree, b2, sizeof b2), opt->device);
    }
    hr_sparse_solver *h = calloc(1, sizeof *h);
    if (!h) return say(res, HR_ERR_NO_MEMORY, "out of memory for the solver");
    hr_sparse_run *r = &h->r;
    r->A = A;
    r->o = *opt;
    r->o.method = NULL; /* borrowed string: not kept */
    r->m = m;
    r->threads = opt->threads > 0 ? opt->threads : hri_cpu_count();
    r->tau = 1.0;
    r->prof.on = opt->tuning.sparse_profile > 0;
    snprintf(h->method, sizeof h->method, "%s", m->name);
    snprintf(h->backend, sizeof h->backend, "%s", hr_backend_name(m->backend));
    snprintf(res->method, sizeof res->method, "%s", h->method);
    snprintf(res->backend, sizeof res->backend, "%s", h->backend);
    if (A->n_rows == 0) { /* nothing to set up: no team, no device, no block size of 0 */
        h->empty = 1;
        *out = h;
        return HR_OK;
    }
    if ((m->caps & HR_CAP_NEEDS_SYMMETRIC) && !hr_csr_is_symmetric(A)) {
        h->not_symmetric = 1;
        snprintf(h->warning, sizeof h->warning,
                 "the matrix is not symmetric: %s may not converge (stopped as diverged when the residual "
                 "grows %gx)",
                 m->name, fmin(opt->divtol, HR_NONSYM_GROWTH));
    }
    const double t_setup = hr_now();
    hr_status st = choose_tau(r, res);
    if (st != HR_OK) {
        hr_sparse_solver_free(h);
        return st;
    }
    if (opt->fault_fraction > 0.0 && (st = make_fault_mask(r, &h->faulty)) != HR_OK) {
        hr_sparse_solver_free(h);
        return say(res, st, "out of memory for the fault mask");
    }
    r->setups++;
    if ((st = m->sparse->setup(r)) != HR_OK) {
        /* a user-level refusal (no device, bad --gpus) reads best as the method's own text */
        if (st == HR_ERR_INVALID_ARG || st == HR_ERR_NO_DEVICE || st == HR_ERR_UNSUPPORTED)
            say(res, st, "%s", r->err[0] ? r->err : hr_status_string(st));
        else
            say(res, st, "%s setup failed: %s", m->name, r->err[0] ? r->err : hr_status_string(st));
        hr_sparse_solver_free(h);
        return st;
    }
    h->time_setup = hr_now() - t_setup;
    fill_names(h, res);
    *out = h;
    return HR_OK;
}

/* The sparse solve as the shared driver sees it (src/core/driver.h). */
typedef struct sparse_loop {
    hr_sparse_run *r;
    const hr_entry *m;
    long call_cap;              /* device-side checks: iterations per call at most */
    long fault_on, fault_off;   /* the fault schedule: iterations where the mask turns on/off */
    struct monitor_call *defer; /* deferred monitors: called after each call from the device's history */
} sparse_loop;

static hr_status loop_advance(void *ctx, long count, hr_phase_times *t)
{
    sparse_loop *L = ctx;
    hr_sparse_run *r = L->r;
    (void)t;
    const long done = r->done;
    r->fault_active = L->fault_on >= 0 && done >= L->fault_on && (L->fault_off < 0 || done < L->fault_off);
    r->prof.calls++;
    hr_status st = L->m->sparse->iterate(r, count);
    if (st == HR_OK && !r->device_checks) r->done = done + count;
    return st;
}

static hr_status loop_residual(void *ctx, double *rel)
{
    return current_residual(((sparse_loop *)ctx)->r, rel);
}

/* The fault state is constant within one call; device-checking calls are capped. */
static long loop_next_stop(void *ctx, long done)
{
    sparse_loop *L = ctx;
    long stop = -1;
    const long cands[3] = {next_multiple(done, L->call_cap), L->fault_on, L->fault_off};
    for (int q = 0; q < 3; q++)
        if (cands[q] > done && (stop < 0 || cands[q] < stop)) stop = cands[q];
    return stop;
}

static int monitor_cb(long it, double res, void *user);

static hr_status loop_checked(void *ctx, long stop, long *reached, double *rel)
{
    sparse_loop *L = ctx;
    hr_sparse_run *r = L->r;
    if (r->checked_done > stop || (!r->checked_stop && r->checked_done != stop)) {
        snprintf(r->err, sizeof r->err, "device checks counted %ld iterations, %ld expected", r->checked_done,
                 stop); /* never loop on a count that does not advance */
        return HR_ERR_DEVICE;
    }
    if (L->defer) /* the monitor points this call passed, in order, as the device checked them */
        for (long k = (r->done / r->mon_every + 1) * r->mon_every; k <= r->checked_done; k += r->mon_every)
            monitor_cb(k, r->mon_hist[(k / r->mon_every) % r->mon_ring], L->defer);
    r->done = r->checked_done; /* a check may have stopped it early */
    *reached = r->checked_done;
    *rel = r->checked_rel; /* of the iterate at r->done */
    return HR_OK;
}

/* tuning.sparse_profile: where the loop's time went (stderr; opt-in diagnostics). */
static void print_profile(const hr_sparse_run *r, const hr_sparse_result *res, const hr_phase_times *t,
                          double t_monitor, long monitors)
{
    const hr_sparse_prof *P = &r->prof;
    const double it = res->iterations > 0 ? (double)res->iterations : 1.0;
    fprintf(
        stderr,
        "hetrelax sparse profile: %s/%s mode %s body %d: %ld iterations in %.1f us (%.2f us/it), %ld calls\n"
        "  host: enqueue %.1f us, wait %.1f us (%ld waits), captures %ld (%.1f us), residual %.1f us, "
        "monitors %ld (%.1f us), other %.1f us\n"
        "  device: %.1f us inside calls (%.2f us/it); graph launches %ld, live launches %ld, loop bodies "
        "%ld\n",
        res->method, res->backend, P->mode ? P->mode : "-", P->body, res->iterations, 1e6 * res->time_s,
        1e6 * res->time_s / it, P->calls, 1e6 * P->t_enqueue, 1e6 * P->t_wait, P->syncs, P->captures,
        1e6 * P->t_capture, 1e6 * t->residual, monitors, 1e6 * t_monitor,
        1e6 * (res->time_s - P->t_enqueue - P->t_wait - P->t_capture - t->residual - t_monitor),
        1e6 * P->t_device, 1e6 * P->t_device / it, P->launches, P->live, P->bodies);
}

/* The user's monitor as the loop calls it: counted and timed for the profile; with
 * options.monitor_deferred its return value is ignored (it only observes). */
typedef struct monitor_call {
    hr_monitor_fn fn;
    void *user;
    int ignore_rc;
    long calls;
    double t;
} monitor_call;

static int monitor_cb(long it, double res, void *user)
{
    monitor_call *m = user;
    const double t0 = hr_now();
    const int rc = m->fn(it, res, m->user);
    m->calls++;
    m->t += hr_now() - t0;
    return m->ignore_rc ? 0 : rc;
}

static hr_status solve_held(hr_sparse_solver *h, const double *b, double *x, int on_device,
                            hr_sparse_result *res);

/* One solve at a time: a monitor (or another thread) re-entering would run on the state
 * under its caller. */
static hr_status solve_once(hr_sparse_solver *h, const double *b, double *x, int on_device, hr_sparse_result *res)
{
    if (__atomic_exchange_n(&h->running, 1, __ATOMIC_ACQ_REL))
        return say(res, HR_ERR_INVALID_ARG,
                   "hr_sparse_solver_solve: called during a solve of the same handle (from its monitor or "
                   "another thread)");
    const hr_status st = solve_held(h, b, x, on_device, res);
    __atomic_store_n(&h->running, 0, __ATOMIC_RELEASE);
    return st;
}

hr_status hr_sparse_solver_solve(hr_sparse_solver *h, const double *b, double *x, hr_sparse_result *out)
{
    hr_sparse_result scratch, *res = out ? out : &scratch;
    memset(res, 0, sizeof *res);
    res->relative_residual = res->initial_residual = NAN;
    if (!h || !b || !x) return say(res, HR_ERR_INVALID_ARG, "NULL argument");
    return solve_once(h, b, x, 0, res);
}

hr_status hr_sparse_solver_solve_device(hr_sparse_solver *h, const double *b, double *x, void *stream,
                                        hr_sparse_result *out)
{
    hr_sparse_result scratch, *res = out ? out : &scratch;
    memset(res, 0, sizeof *res);
    res->relative_residual = res->initial_residual = NAN;
    if (!h || !b || !x) return say(res, HR_ERR_INVALID_ARG, "NULL argument");
    const hr_sparse_run *r = &h->r;
    if (r->m->backend != HR_BACKEND_GPU)
        return say(res, HR_ERR_UNSUPPORTED,
                   "device vectors: method %s runs on %s; the gpu methods take them (hr_sparse_solver_solve "
                   "takes host vectors)",
                   r->m->name, hr_backend_name(r->m->backend));
    if (r->o.gpus > 1 || !r->m->sparse->residual)
        return say(res, HR_ERR_UNSUPPORTED, "device vectors: %s on one GPU takes them (gpus %d)", r->m->name,
                   r->o.gpus);
    char why[160];
    if (!h->empty) {
        const struct {
            const char *name;
            const void *p;
        } v[2] = {{"b", b}, {"x", x}};
        for (int i = 0; i < 2; i++) {
            const hr_status st = hri_cuda_check_array(r->o.device, v[i].p, why, sizeof why);
            if (st != HR_OK) return say(res, st, "%s: %s", v[i].name, why);
        }
    }
    const hr_status st = hri_cuda_wait_stream(r->o.device, stream, why, sizeof why);
    if (st != HR_OK) return say(res, st, "stream: %s", why);
    return solve_once(h, b, x, 1, res);
}

/* A method's failure st, with its reason, into res. */
static hr_status method_failed(const hr_sparse_run *r, hr_sparse_result *res, hr_status st)
{
    return say(res, st, "%s failed: %s", r->m->name, r->err[0] ? r->err : hr_status_string(st));
}

/* Loads b and x0 into the method (load, or nothing), as a solve starts. */
static hr_status load(hr_sparse_run *r, hr_sparse_result *res)
{
    const hr_status st = r->m->sparse->load ? r->m->sparse->load(r) : HR_OK;
    return st == HR_OK ? HR_OK : method_failed(r, res, st);
}

static hr_status solve_held(hr_sparse_solver *h, const double *b, double *x, int on_device,
                            hr_sparse_result *res)
{
    hr_sparse_run *r = &h->r;
    const hr_entry *m = r->m;
    const hr_csr *A = r->A;
    const hr_sparse_options *o = &r->o;
    fill_names(h, res);
    for (int i = 0; i < A->n_rows && !on_device; i++)
        if (!isfinite(b[i]) || !isfinite(x[i]))
            return say(res, HR_ERR_INVALID_ARG, "%s[%d] is not finite", isfinite(b[i]) ? "x0" : "b", i + 1);
    if (h->empty) {
        res->initial_residual = res->relative_residual = 0.0;
        res->reason = o->tol > 0.0 ? HR_REASON_CONVERGED : HR_REASON_ITERS;
        if (o->monitor) o->monitor(0, 0.0, o->monitor_user);
        return HR_OK;
    }
    /* host vectors: the initial residual before the load's timer, as the set-up time has it */
    double rel0 = on_device ? NAN : hr_csr_relative_residual(A, b, x), t_iter = 0.0;
    const double t_load = hr_now();
    r->b = b;
    r->x = x;
    r->on_device = on_device;
    r->done = 0;
    r->err[0] = '\0';
    r->checked_stop = 0;
    r->checked_done = 0;
    r->breakdown = 0;
    hr_status st = HR_OK;
    if (on_device) { /* the initial residual where the vectors are: loaded first */
        r->divref = INFINITY;
        HR_TRY(load(r, res));
        if ((st = current_residual(r, &rel0)) != HR_OK) return method_failed(r, res, st);
        if (!isfinite(rel0))
            return say(res, HR_ERR_INVALID_ARG, "b or x0 holds a value that is not finite (initial residual %g)",
                       rel0);
    }
    res->initial_residual = rel0;
    const double growth = h->not_symmetric ? fmin(o->divtol, HR_NONSYM_GROWTH) : o->divtol;
    const double divref = growth * (rel0 > 0.0 ? rel0 : 1.0); /* growth beyond this: diverged */
    r->divref = divref; /* device-side checks apply it: loaded (again) with it */
    if (!on_device || r->device_checks) HR_TRY(load(r, res));
    res->time_setup_s = (h->solves++ == 0 ? h->time_setup : 0.0) + (hr_now() - t_load);

    hr_reason reason = HR_REASON_ITERS;
    const int prof_on = r->prof.on;
    const char *prof_mode = r->prof.mode;
    const int prof_body = r->prof.body;
    memset(&r->prof, 0, sizeof r->prof); /* per solve */
    r->prof.on = prof_on, r->prof.mode = prof_mode, r->prof.body = prof_body;
    monitor_call mc = {o->monitor, o->monitor_user, o->monitor_deferred, 0, 0.0};
    sparse_loop L = {r, m, 0, -1, -1, NULL};
    /* deferred monitors with device checks: the driver does not cut calls at monitor
     * points; the method records them and loop_checked calls the monitor after a call */
    const int defer = o->monitor_deferred && o->monitor && o->monitor_every > 0 && r->device_checks &&
                      r->mon_hist && r->mon_every == o->monitor_every && r->mon_ring > 0;
    const long mon_every = defer ? 0 : o->monitor_every; /* the driver's monitor interval */
    if (defer) L.defer = &mc;
    L.fault_on = o->fault_fraction > 0.0 ? o->fault_iter : -1;
    L.fault_off = L.fault_on >= 0 && o->fault_recover >= 0 ? L.fault_on + o->fault_recover : -1;
    /* with device-side checks calls end at monitors; body replays also every
     * HR_DEVICE_CHECK_CALL iterations (rounded up to whole bodies) when monitors are
     * rarer, since what is enqueued after a stopping check still runs, as empty kernels */
    if (r->device_checks == 1 && !(mon_every > 0 && mon_every <= HR_DEVICE_CHECK_CALL)) {
        const long U = r->prof.body > 0 ? r->prof.body : 1;
        L.call_cap = (HR_DEVICE_CHECK_CALL + U - 1) / U * U;
    }
    /* deferred monitors: a call holds at most mon_ring monitor points, and ends every
     * ~HR_DEFER_CALL iterations so that the monitor (the CLI's progress) is not late */
    if (defer) {
        const long most = o->monitor_every * r->mon_ring;
        const long want = o->monitor_every >= HR_DEFER_CALL
                              ? o->monitor_every
                              : HR_DEFER_CALL / o->monitor_every * o->monitor_every;
        const long cap = want < most ? want : most;
        if (L.call_cap == 0 || cap < L.call_cap) L.call_cap = cap;
    }
    hr_phase_times times = {0, 0, 0, 0};
    const double t0 = hr_now();
    if (o->tol > 0.0 && rel0 < o->tol) {
        reason = HR_REASON_CONVERGED;
    } else {
        hr_driver_ops ops = {.ctx = &L,
                             .advance = loop_advance,
                             .residual = loop_residual,
                             .next_stop = loop_next_stop,
                             .checked = r->device_checks ? loop_checked : NULL};
        hr_driver_cfg cfg = {.max_iters = o->max_iters,
                             .tol = o->tol,
                             .check_every = o->check_every,
                             .monitor_every = mon_every,
                             .monitor = o->monitor && !defer ? monitor_cb : NULL,
                             .monitor_user = &mc,
                             .divref = divref};
        hr_driver_out d;
        st = hri_drive(&ops, &cfg, NULL, &times, &d);
        reason = d.reason;
        r->done = d.done;
        if (st == HR_ERR_DIVERGED && r->breakdown > 0) { /* not an error of the call: a result */
            st = HR_OK;
            reason = HR_REASON_BREAKDOWN;
            r->done = r->breakdown - 1;
        }
    }
    t_iter = times.compute;
    res->time_s = hr_now() - t0;
    if (prof_on) {
        res->iterations = r->done;
        print_profile(r, res, &times, mc.t, mc.calls);
    }
    if (st == HR_OK && m->sparse->sync_host) st = m->sparse->sync_host(r);
    if (st != HR_OK) return method_failed(r, res, st);

    res->iterations = r->done;
    res->time_iter_s = t_iter;
    res->time_per_iter_s = r->done > 0 ? t_iter / (double)r->done : 0.0;
    if (on_device) {
        if ((st = current_residual(r, &res->relative_residual)) != HR_OK) return method_failed(r, res, st);
    } else {
        res->relative_residual = hr_csr_relative_residual(A, b, x);
    }
    reason = hri_driver_final_reason(reason, res->relative_residual, o->tol, divref);
    res->reason = reason;
    if (o->monitor && !(o->monitor_every > 0 && r->done > 0 && r->done % o->monitor_every == 0))
        o->monitor(r->done, res->relative_residual, o->monitor_user);
    if (reason == HR_REASON_BREAKDOWN)
        return say(res, HR_ERR_DIVERGED,
                   "%s broke down at iteration %ld: p^T A p = %g, so A is not symmetric positive definite "
                   "(relative residual %g, initial %g)",
                   m->name, r->breakdown, r->breakdown_pq, res->relative_residual, rel0);
    if (reason == HR_REASON_DIVERGED || reason == HR_REASON_NAN)
        return say(res, HR_ERR_DIVERGED, "diverged at iteration %ld: relative residual %g (initial %g)%s",
                   r->done, res->relative_residual, rel0,
                   h->not_symmetric ? "; the matrix is not symmetric" : "");
    return HR_OK;
}

/* hr_sparse_solve and hr_sparse_solve_device: create, one solve (b and x on the host, or in
 * the GPU's memory), free. */
static hr_status solve_one_shot(const hr_csr *A, const double *b, double *x, int on_device, void *stream,
                                const hr_sparse_options *opt, hr_sparse_result *out)
{
    hr_sparse_result scratch, *res = out ? out : &scratch;
    hr_sparse_solver *h = NULL;
    if (!b || !x) {
        memset(res, 0, sizeof *res);
        res->relative_residual = res->initial_residual = NAN;
        return say(res, HR_ERR_INVALID_ARG, "NULL argument");
    }
    hr_status st = hr_sparse_solver_create(A, opt, &h, res);
    if (st != HR_OK) return st;
    st = on_device ? hr_sparse_solver_solve_device(h, b, x, stream, res) : hr_sparse_solver_solve(h, b, x, res);
    hr_sparse_solver_free(h);
    return st;
}

hr_status hr_sparse_solve(const hr_csr *A, const double *b, double *x, const hr_sparse_options *opt,
                          hr_sparse_result *out)
{
    return solve_one_shot(A, b, x, 0, NULL, opt, out);
}

hr_status hr_sparse_solve_device(const hr_csr *A, const double *b, double *x, void *stream,
                                 const hr_sparse_options *opt, hr_sparse_result *out)
{
    return solve_one_shot(A, b, x, 1, stream, opt, out);
}

const char *hr_sparse_method_at(int i, hr_backend *backend, const char **summary)
{
    const hr_entry *m = hri_entry_at(HR_KIND_SPARSE, i);
    if (!m) return NULL;
    if (backend) *backend = m->backend;
    if (summary) *summary = m->summary;
    return m->name;
}
