/*
 * The multigrid / CG solver handle: validation, setup, and the iteration loop through
 * hri_drive (one driver iteration = one cycle, or one CG iteration). The problem's values
 * and the jobs the team runs are in mg_jobs.c; the handle itself in mg_handle.h.
 *
 * Modes: "direct" (method mg in double or single): hierarchy level 0 holds the solution.
 * "defect" (mixed precision): an fp64 outer level keeps u and r; each iteration puts r into
 * the fp32 hierarchy's level-0 right-hand side, runs one cycle from zero and adds the
 * correction to u. CG (with or without pc mg): fp64 vectors on the outer level; pc mg
 * applies one symmetric V-cycle (fp64, or fp32 for single/mixed) from zero.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/registry.h"
#include "core/timer.h"
#include "core/tuning.h"
#include "methods/mg/mg_handle.h"
#include "runtime/cpu/fpmode.h"
#include "runtime/cpu/sysmem.h"

/* the thread's one error channel (hr_last_error()): every handle's messages go there */
#define last_error (hri_last_error_buf())

const char *hr_mg_last_error(void)
{
    return hr_last_error();
}

/* Keeps the first device error (and its text for hr_mg_last_error). */
void hri_mgs_gpu_failed(hr_mg *m, hr_status st)
{
    if (m->gst != HR_OK) return;
    m->gst = st;
    snprintf(last_error, HR_LAST_ERROR_SIZE, "%s", hri_mg_gpu_error(m->gpu));
}

/* ------------------------------------------------------------------ driver glue */

static hr_status drv_advance(void *ctx, long count, hr_phase_times *t)
{
    (void)t;
    hr_mg *m = ctx;
    if (m->gpu) {
        const hr_status st = hri_mg_gpu_advance(m->gpu, count, m->fmg_pending, m->r_valid);
        if (st != HR_OK) hri_mgs_gpu_failed(m, st);
        if (m->gst != HR_OK) return m->gst;
    } else {
        job jb = {m, JOB_ADVANCE, count, 0, 0, m->rz, m->rr};
        hri_mgs_run_job(m, &jb);
    }
    m->fmg_pending = 0;
    m->r_valid = 0;
    m->count += count;
    return HR_OK;
}

/* CG's ||r|| / ||b|| from r . r of the scaled r (cg_s ||b|| is a normal number even when
 * ||b|| is subnormal). */
static double cg_relative(const hr_mg *m)
{
    const double rn = sqrt(m->rr);
    return m->bnorm > 0.0 ? rn / (m->cg_s * m->bnorm) : rn / m->cg_s;
}

static hr_status drv_residual(void *ctx, double *rel)
{
    hr_mg *m = ctx;
    if (m->o.method == HR_MG_METHOD_CG) {
        if (m->gpu) {
            const hr_status st = hri_mg_gpu_cg_rr(m->gpu, &m->rr);
            if (st != HR_OK) hri_mgs_gpu_failed(m, st);
        }
        *rel = cg_relative(m);
    } else {
        *rel = hri_mgs_true_residual(m, m->has_out, NULL, NULL);
        m->r_valid = m->has_out; /* the next defect correction starts from this r */
    }
    m->last_factor = *rel / m->prev_rel;
    m->prev_rel = *rel;
    return m->gst;
}

static int drv_monitor(long it, double rel, void *user)
{
    hr_mg *m = user;
    return m->o.monitor(it, rel, m->o.monitor_user);
}

double hr_mg_last_factor(const hr_mg *m)
{
    return m ? m->last_factor : NAN;
}

/* ------------------------------------------------------------------ API */

/* The entry points of the options' smoother (validated: the registry has it). */
static const hr_smoother_ops *smoother_of(const hr_mg_options *o)
{
    return hri_entry_by_id(HR_KIND_SMOOTHER, (int)o->smoother, 0)->smoother;
}

static hr_status fail(hr_mg *m, hr_status st)
{
    hr_mg_free(m);
    return st;
}

/* Backend gpu: the hierarchy, the outer level and the right-hand side on the device. */
static hr_status create_gpu(hr_mg *m)
{
    const hr_mg_options *o = &m->o;
    mg_gpu_setup s;
    memset(&s, 0, sizeof s);
    s.device = o->device;
    s.dim = m->dim;
    s.nx = m->nx;
    s.ny = m->ny;
    s.nz = m->nz;
    s.mode = o->method == HR_MG_METHOD_CG ? MG_GPU_CG : m->direct ? MG_GPU_DIRECT : MG_GPU_DEFECT;
    s.nlev = m->nlev;
    s.esize = o->precision == HR_MG_PREC_DOUBLE ? 8 : 4;
    s.cycle = o->cycle;
    s.smoother = smoother_of(o);
    s.pre = o->pre;
    s.post = o->post;
    s.omega = o->omega > 0.0 ? o->omega : (m->dim == 3 ? 6.0 / 7.0 : 0.8);
    hri_mg_cheby_coeffs(m->dim, s.cheby_a, s.cheby_b);
    s.fmg_cycles = m->dim == 3 ? 2 : 1;
    s.symmetric = o->pc == HR_MG_PC_MG || o->symmetric;
    s.boundary = o->boundary;
    s.spike = (hr_rhs_view){NULL, -1, -1, -1};
    const hr_tuning *tu = &o->tuning;
    s.small_points = tu->mg_gpu_small;
    s.no_graph = hr_tune_on(tu->mg_gpu_nograph, 0);
    s.rb_passes = tu->mg_gpu_rb == 2 ? 2 : 1;
    s.march_points = tu->mg_gpu_march;      /* 0: the default, -1: never, N: levels of >= N points */
    s.fuse_points = tu->mg_gpu_fuse;        /* the same */
    s.async_local = tu->mg_gpu_async_local; /* async3: local sweeps per pass */
    s.hugepages = hr_tune_on(tu->hugepages, 0);
    if (o->coarse_on == HR_MG_COARSE_ON_CPU && m->nlev > 1) {
        /* from the first level with fewer than 65536 points (launch latency, not bandwidth) */
        int lc = o->coarse_level;
        if (lc == 0) {
            long nx = m->nx, ny = m->ny, nz = m->nz;
            for (lc = 1; lc < m->nlev - 1; lc++) {
                nx = (nx - 1) / 2, ny = (ny - 1) / 2, nz = m->dim == 3 ? (nz - 1) / 2 : 1;
                if (nx * ny * nz < 65536) break;
            }
        }
        s.cpu_level = lc;
        s.cpu_threads = o->threads;
    }
    hr_grid rhs = {0};
    const double t_rhs = hr_now();
    if (o->rhs == HR_RHS_SPIKE) {
        s.spike.spike_i = HR_SPIKE_INDEX(m->ny);
        s.spike.spike_j = HR_SPIKE_INDEX(m->nx);
        s.spike.spike_k = m->dim == 3 ? HR_SPIKE_INDEX(m->nz) : 0;
    } else if (o->rhs == HR_RHS_ARRAY || (o->rhs == HR_RHS_ZERO && m->rhs_slot)) {
        /* the device forms h^2 f from the caller's f as it uploads it (no host copy); a slot
         * for f keeps zeros until a solve's f replaces them */
        s.rhs_values = o->rhs == HR_RHS_ARRAY ? o->rhs_values : NULL;
        s.rhs_slot = o->rhs == HR_RHS_ZERO;
        s.rhs_h2 = m->h * m->h;
    } else if (o->rhs != HR_RHS_ZERO) {
        /* h^2 f in the solution level's precision, rounded as the CPU backend rounds it */
        hr_grid_layout l;
        if (!hr_layout_init(&l, m->dim, m->nx, m->ny, m->nz, s.mode == MG_GPU_DIRECT ? s.esize : 8))
            return HR_ERR_NO_MEMORY;
        hr_status st = hri_grid_alloc_huge(&rhs, &l, hr_tune_on(o->tuning.hugepages, 0));
        if (st != HR_OK) return st;
        hri_grid_init_rows(&rhs, 0, hr_layout_outer(&l), 0.0);
        hri_mgs_fill_rhs(m, &rhs, 1, (m->dim == 3 ? m->nz : m->ny) + 1);
        s.rhs = &rhs;
    }
    m->setup_rhs_s = hr_now() - t_rhs;
    const hr_status st = hri_mg_gpu_create(&s, &m->gpu, last_error, HR_LAST_ERROR_SIZE);
    if (rhs.base) hri_grid_free(&rhs);
    return st;
}

/* Host bytes of the CPU backend's grids: the hierarchy (u twice, h^2 f, r, and d, cp where
 * used, per level) and the fp64 outer level (u, p, r, d, cp, and f for an array or the
 * manufactured right-hand side). 0 when a layout does not exist (validation refuses it). */
static double host_bytes(const hr_mg *m)
{
    const hr_mg_options *o = &m->o;
    double b = 0.0;
    hr_grid_layout l;
    if (m->use_h) {
        const size_t es = o->precision == HR_MG_PREC_DOUBLE ? 8 : 4;
        int nx = m->nx, ny = m->ny, nz = m->nz;
        for (int lv = 0; lv < m->nlev; lv++) {
            if (!hr_layout_init(&l, m->dim, nx, ny, nz, es)) return 0.0;
            const int grids = 4 + (smoother_of(o)->scratch || lv == m->nlev - 1) + (lv == m->nlev - 1);
            b += (double)grids * (double)hr_layout_bytes(&l);
            nx = (nx - 1) / 2, ny = (ny - 1) / 2, nz = m->dim == 3 ? (nz - 1) / 2 : nz;
        }
    }
    if (m->has_out && hr_layout_init(&l, m->dim, m->nx, m->ny, m->nz, 8))
        b += (5.0 + (o->rhs == HR_RHS_MANUFACTURED || o->rhs == HR_RHS_ARRAY)) * (double)hr_layout_bytes(&l);
    return b;
}

static hr_status create(const hr_mg_options *o, int rhs_slot, hr_mg **out);

hr_status hr_mg_create(const hr_mg_options *o, hr_mg **out)
{
    return create(o, 0, out);
}

hr_status hri_mg_create_slot(const hr_mg_options *o, hr_mg **out)
{
    return create(o, 1, out);
}

static hr_status create(const hr_mg_options *o, int rhs_slot, hr_mg **out)
{
    last_error[0] = '\0';
    if (!out) {
        snprintf(last_error, HR_LAST_ERROR_SIZE, "out: NULL (no place for the handle)");
        return HR_ERR_INVALID_ARG;
    }
    *out = NULL;
    const double t0 = hr_now();
    hr_status st = hr_mg_options_validate(o, last_error, HR_LAST_ERROR_SIZE);
    if (st != HR_OK) return st;
    if (o->flush_subnormals && !HR_FP_CAN_FLUSH) {
        snprintf(last_error, HR_LAST_ERROR_SIZE,
                 "flush_subnormals: this CPU architecture has no flush-to-zero switch the library knows "
                 "(x86-64 and aarch64 have)");
        return HR_ERR_UNSUPPORTED;
    }
    hr_mg *m = calloc(1, sizeof *m);
    if (!m) return HR_ERR_NO_MEMORY;
    m->o = *o;
    m->rhs_slot = rhs_slot;
    /* HR_PREC_DEFAULT is double; from here on `o` is the handle's resolved copy */
    if (m->o.precision == HR_PREC_DEFAULT) m->o.precision = HR_PREC_DOUBLE;
    o = &m->o;
    m->dim = hri_mg_opt_dim(o);
    m->nx = hri_mg_opt_extent(o, 0);
    m->ny = hri_mg_opt_extent(o, 1);
    m->nz = m->dim == 3 ? hri_mg_opt_extent(o, 2) : 1;
    const int nmax = m->nx > m->ny ? (m->nx > m->nz ? m->nx : m->nz) : (m->ny > m->nz ? m->ny : m->nz);
    m->h = 1.0 / ((double)nmax + 1.0);
    const int gpu = o->backend == HR_MG_BACKEND_GPU;
    m->nt = gpu ? 1 : o->threads > 0 ? o->threads : hri_cpu_count();
    m->use_h = hri_mg_opt_uses_mg(o);
    m->nlev = m->use_h ? (o->levels > 0 ? o->levels : hri_mg_opt_max_levels(o)) : 0;
    m->direct = o->method == HR_MG_METHOD_MG && o->precision != HR_MG_PREC_MIXED;
    m->has_out = !m->direct;
    /* refuse what cannot fit before touching it: with overcommit the allocations succeed
     * and the first touch gets the process killed */
    if (!gpu) {
        const double need = host_bytes(m), avail = (double)hri_host_available_bytes();
        if (need > avail) {
            snprintf(last_error, HR_LAST_ERROR_SIZE, "%s: %s need %.1f GB, %.1f GB available",
                     o->nx || o->ny || o->nz ? "nx" : "n",
                     m->use_h ? "the multigrid levels" : "the CG vectors", need * 1e-9, avail * 1e-9);
            free(m);
            return HR_ERR_NO_MEMORY;
        }
    }
    if (o->rhs == HR_RHS_ARRAY && !gpu) {
        /* every solve after the first fills the right-hand side again: keep our own copy, the
         * caller's array need not outlive create. The GPU backend uploads it once at create
         * and keeps it on the device: no copy (one of 8191^2 took 0.6 s of set-up there) */
        const double t_rhs = hr_now();
        const size_t count = (size_t)m->nx * (size_t)m->ny * (size_t)m->nz;
        m->rhs_copy = malloc(count * sizeof *m->rhs_copy);
        if (!m->rhs_copy) return fail(m, HR_ERR_NO_MEMORY);
        memcpy(m->rhs_copy, o->rhs_values, count * sizeof *m->rhs_copy);
        m->o.rhs_values = m->rhs_copy;
        m->setup_rhs_s = hr_now() - t_rhs;
    }
    m->tls = calloc((size_t)m->nt, sizeof *m->tls);
    if (!m->tls) return fail(m, HR_ERR_NO_MEMORY);
    if (m->nt > 1 && (st = hri_team_create(m->nt, HR_BIND_NONE, &m->team)) != HR_OK) return fail(m, st);
    const int slices = m->dim == 3 ? m->nz : m->ny;
    m->rn = calloc((size_t)slices + 2, sizeof *m->rn);
    m->bn = calloc((size_t)slices + 2, sizeof *m->bn);
    m->rmax = calloc((size_t)slices + 2, sizeof *m->rmax);
    m->part = calloc(2 * ((size_t)slices + 2), sizeof *m->part);
    m->cg_s = 1.0;
    if (!m->rn || !m->bn || !m->rmax || !m->part) return fail(m, HR_ERR_NO_MEMORY);
    if (gpu) {
        if ((st = create_gpu(m)) != HR_OK) {
            char keep[HR_LAST_ERROR_SIZE];
            memcpy(keep, last_error, sizeof keep);
            hr_mg_free(m);
            memcpy(last_error, keep, sizeof keep);
            return st;
        }
        m->setup_s = hr_now() - t0;
        *out = m;
        return HR_OK;
    }
    const double t_alloc = hr_now();
    if (m->use_h) {
        mg_hier *H = &m->H;
        H->smoother = smoother_of(o);
        H->pre = o->pre;
        H->post = o->post;
        H->symmetric = o->pc == HR_MG_PC_MG || o->symmetric;
        H->omega = o->omega > 0.0 ? o->omega : (m->dim == 3 ? 6.0 / 7.0 : 0.8);
        H->hugepages = hr_tune_on(o->tuning.hugepages, 0);
        const size_t es = o->precision == HR_MG_PREC_DOUBLE ? 8 : 4;
        if ((st = hri_mg_hier_build(H, m->dim, m->nx, m->ny, m->nz, m->nlev, es, m->nt)) != HR_OK)
            return fail(m, st);
        if (m->direct) H->lev[0].rhs = hri_mgs_problem_view(m, &H->lev[0].hf);
    }
    if (m->has_out) {
        mg_level *O = &m->out;
        if (!hr_layout_init(&O->l, m->dim, m->nx, m->ny, m->nz, 8)) return fail(m, HR_ERR_NO_MEMORY);
        O->slices = slices;
        O->threaded = hr_layout_points(&O->l) >= HR_MG_THREADED_POINTS;
        hr_grid *gs[5] = {&O->u[0], &O->u[1], &O->r, &O->d, &O->cp};
        const int huge = hr_tune_on(o->tuning.hugepages, 0);
        for (int g = 0; g < 5; g++)
            if ((st = hri_grid_alloc_huge(gs[g], &O->l, huge)) != HR_OK) return fail(m, st);
        if (o->rhs == HR_RHS_MANUFACTURED || o->rhs == HR_RHS_ARRAY)
            if ((st = hri_grid_alloc_huge(&O->hf, &O->l, huge)) != HR_OK) return fail(m, st);
        O->rhs = hri_mgs_problem_view(m, &O->hf);
    }
    job jb = {m, JOB_INIT, 0, 0, 0, 0.0, 0.0};
    hri_mgs_run_job(m, &jb);
    m->setup_alloc_s = hr_now() - t_alloc;
    m->setup_s = hr_now() - t0;
    *out = m;
    return HR_OK;
}

void hr_mg_free(hr_mg *m)
{
    if (!m) return;
    if (__atomic_load_n(&m->running, __ATOMIC_ACQUIRE)) return; /* from the monitor: the solve holds m */
    hri_mg_gpu_free(m->gpu);
    if (m->host_sol.base) hri_grid_free(&m->host_sol);
    if (m->team) hri_team_free(m->team);
    hri_mg_hier_free(&m->H);
    hr_grid *gs[6] = {&m->out.u[0], &m->out.u[1], &m->out.r, &m->out.d, &m->out.cp, &m->out.hf};
    for (int g = 0; g < 6; g++)
        if (gs[g]->base) hri_grid_free(gs[g]);
    free(m->tls);
    free(m->rhs_copy);
    free(m->rn);
    free(m->bn);
    free(m->rmax);
    free(m->part);
    free(m);
}

/* 1 when the solve has an exact solution to measure the error against (the manufactured
 * problem with a zero boundary). */
static int has_exact(const hr_mg *m)
{
    return m->o.rhs == HR_RHS_MANUFACTURED && m->o.boundary == 0.0;
}

static double max_error(hr_mg *m)
{
    if (!has_exact(m)) return NAN;
    const hr_grid *g = hri_mgs_sol_grid(m);
    double e = 0.0;
    for (int k = m->dim == 3 ? 1 : 0; k < (m->dim == 3 ? m->nz + 1 : 1); k++)
        for (int i = 1; i <= m->ny; i++)
            for (int j = 1; j <= m->nx; j++) {
                const double d = fabs(hri_grid_get3(g, i, j, k) - hri_mgs_exact(m, i, j, k));
                if (!(d <= e)) e = d;
            }
    return e;
}

static hr_status solve_held(hr_mg *m, hr_mg_result *res);

hr_status hr_mg_solve(hr_mg *m, hr_mg_result *res)
{
    if (!m) return HR_ERR_INVALID_ARG;
    /* a monitor (or another thread) re-entering would run on the state under its caller */
    if (__atomic_exchange_n(&m->running, 1, __ATOMIC_ACQ_REL)) {
        snprintf(
            last_error, HR_LAST_ERROR_SIZE,
            "hr_mg_solve: called during a solve of the same handle (from its monitor or another thread)");
        return HR_ERR_INVALID_ARG;
    }
    /* the GPU keeps subnormals; so do its coarse levels on the CPU, which then agree with it */
    const int flush = m->o.flush_subnormals && m->o.backend == HR_MG_BACKEND_CPU;
    const unsigned fp = hr_fp_flush_begin(flush);
    const hr_status st = solve_held(m, res);
    hr_fp_flush_end(flush, fp);
    __atomic_store_n(&m->running, 0, __ATOMIC_RELEASE);
    return st;
}

static hr_status solve_held(hr_mg *m, hr_mg_result *res)
{
    hr_status st0;
    /* a fresh start: zero interior, rings, rhs (a pass over the memory, outside the timing) */
    m->gst = HR_OK;
    if (m->gpu && m->count > 0 && (st0 = hri_mg_gpu_reset(m->gpu)) != HR_OK) {
        hri_mgs_gpu_failed(m, st0);
        return st0;
    }
    if (!m->gpu && (m->count > 0 || m->reinit)) {
        job jb = {m, JOB_INIT, 0, 0, 0, 0.0, 0.0};
        hri_mgs_run_job(m, &jb);
    }
    m->reinit = 0;
    const double t0 = hr_now();
    m->count = 0;
    m->fmg_pending = m->o.method == HR_MG_METHOD_MG && m->o.cycle == HR_MG_CYCLE_FMG;
    m->r_valid = 0;
    /* the starting residual: for CG also ||b|| (b includes the boundary values) */
    double rmax0 = 0.0;
    m->first_rel = hri_mgs_true_residual(m, m->has_out, &m->bnorm, &rmax0);
    if (m->gst != HR_OK) return m->gst;
    m->r_valid = m->has_out;
    /* CG's dots square its vectors: scaled into range when the problem's values are not */
    m->cg_s = m->o.method == HR_MG_METHOD_CG ? mg_range_scale(rmax0) : 1.0;
    if (m->o.method == HR_MG_METHOD_CG && m->gpu) {
        if ((st0 = hri_mg_gpu_cg_start(m->gpu, m->cg_s, &m->rr)) != HR_OK) hri_mgs_gpu_failed(m, st0);
    } else if (m->o.method == HR_MG_METHOD_CG) {
        job jb = {m, JOB_START, 0, 0, 0, 0.0, 0.0};
        hri_mgs_run_job(m, &jb);
    }
    if (m->gst != HR_OK) return m->gst;
    if (m->o.method == HR_MG_METHOD_CG) m->first_rel = cg_relative(m);
    const double t_first = hr_now();
    m->prev_rel = m->first_rel;
    m->last_factor = NAN;
    hr_driver_ops ops = {.ctx = m, .advance = drv_advance, .residual = drv_residual};
    hr_driver_cfg cfg = {0};
    cfg.max_iters = m->o.max_iters;
    cfg.tol = m->o.tol;
    cfg.check_every = 1;
    cfg.monitor_every = m->o.monitor ? 1 : 0;
    cfg.monitor = m->o.monitor ? drv_monitor : NULL;
    cfg.monitor_user = m;
    cfg.divref = 1e3 * (m->first_rel > 1.0 ? m->first_rel : 1.0);
    hr_phase_times t = {0};
    hr_driver_out d;
    hr_status st = HR_OK;
    if (!(m->o.tol > 0.0 && m->first_rel < m->o.tol))
        st = hri_drive(&ops, &cfg, NULL, &t, &d);
    else
        d = (hr_driver_out){0, HR_REASON_CONVERGED, m->first_rel};
    const double t1 = hr_now();
    if (st != HR_OK) return m->gst != HR_OK ? m->gst : st;
    const double rel = hri_mgs_true_residual(m, 0, NULL, NULL);
    /* the GPU's solution comes to the host only for the manufactured problem's error (and
     * in hr_mg_solution): a solve from and to device memory never copies it */
    if (m->gpu && m->gst == HR_OK && has_exact(m) &&
        (st0 = hri_mg_gpu_download(m->gpu, &m->host_sol)) != HR_OK)
        hri_mgs_gpu_failed(m, st0);
    if (m->gst != HR_OK) return m->gst;
    /* judged on the last checked residual; without checks (tol 0, no monitor) on the final one */
    const double judged = d.done && (!isnan(d.last_rel) || d.reason == HR_REASON_NAN) ? d.last_rel : rel;
    const hr_reason reason = hri_driver_final_reason(d.reason, judged, m->o.tol, cfg.divref);
    if (res) {
        memset(res, 0, sizeof *res);
        res->dim = m->dim;
        res->nx = m->nx;
        res->ny = m->ny;
        res->nz = m->nz;
        res->levels = m->nlev;
        res->iterations = d.done;
        res->reason = reason;
        res->time_s = t1 - t0;
        res->time_setup_s = m->setup_s;
        res->ns_per_unknown = 1e9 * res->time_s / ((double)m->nx * m->ny * m->nz);
        res->relative_residual = rel;
        res->convergence_factor =
            d.done > 0 && m->first_rel > 0.0 ? pow(judged / m->first_rel, 1.0 / (double)d.done) : NAN;
        res->last_factor = m->last_factor;
        res->max_error = max_error(m);
        res->threads = m->gpu ? 0 : m->nt;
        res->time_first_check_s = t_first - t0;
        res->time_iterations_s = t1 - t_first;
        res->time_setup_rhs_s = m->setup_rhs_s;
        if (m->gpu) {
            mg_gpu_times gt;
            hri_mg_gpu_setup_times(m->gpu, &gt);
            res->time_setup_device_s = gt.device;
            res->time_setup_alloc_s = gt.alloc;
            res->time_setup_upload_s = gt.upload;
            res->time_setup_graphs_s = gt.graphs;
        } else {
            res->time_setup_alloc_s = m->setup_alloc_s;
        }
    }
    if (reason == HR_REASON_NAN || reason == HR_REASON_DIVERGED) return HR_ERR_DIVERGED;
    return HR_OK;
}

hr_status hri_mgs_replace_rhs(hr_mg *m, const double *values)
{
    if (m->gpu) {
        const hr_status st = hri_mg_gpu_rhs_host(m->gpu, values);
        if (st != HR_OK && st != HR_ERR_UNSUPPORTED) hri_mgs_gpu_failed(m, st);
        return st;
    }
    if (!m->rhs_copy) return HR_ERR_UNSUPPORTED;
    memcpy(m->rhs_copy, values, (size_t)m->nx * m->ny * m->nz * sizeof *m->rhs_copy);
    m->reinit = 1;
    return HR_OK;
}

hr_status hri_mgs_replace_rhs_device(hr_mg *m, const void *f, int single, double scale)
{
    if (!m->gpu) return HR_ERR_UNSUPPORTED;
    const hr_status st = hri_mg_gpu_rhs_device(m->gpu, f, single, scale);
    if (st != HR_OK && st != HR_ERR_UNSUPPORTED) hri_mgs_gpu_failed(m, st);
    return st;
}

hr_status hri_mgs_solution_device(hr_mg *m, void *dst, int single)
{
    if (!m->gpu) return HR_ERR_UNSUPPORTED;
    const hr_status st = hri_mg_gpu_solution_device(m->gpu, dst, single);
    if (st != HR_OK) hri_mgs_gpu_failed(m, st);
    return st;
}

hr_status hri_mgs_solution_host(hr_mg *m, void *dst, int single)
{
    if (!m->gpu) return HR_ERR_UNSUPPORTED;
    const hr_status st = hri_mg_gpu_solution_host(m->gpu, dst, single);
    if (st != HR_OK) hri_mgs_gpu_failed(m, st);
    return st;
}

/* The solution's lines (rows of nx unknowns) into the caller's array, split over the team:
 * a new array's pages are first touched by all the threads at once. */
typedef struct sol_copy {
    const hr_mg *m;
    const hr_grid *g;
    double *dst;
} sol_copy;

static void sol_copy_fn(void *ctx, int tid, int nt)
{
    const sol_copy *c = ctx;
    const hr_mg *m = c->m;
    const hr_grid_layout *l = &c->g->l;
    const long lines = (long)m->ny * (m->dim == 3 ? m->nz : 1);
    for (long line = lines * tid / nt; line < lines * (tid + 1) / nt; line++) {
        const size_t i = (size_t)(line % m->ny) + 1, k = m->dim == 3 ? (size_t)(line / m->ny) + 1 : 0;
        double *out = c->dst + (size_t)line * (size_t)m->nx;
        const char *row = (const char *)c->g->base + hr_layout_index(l, i, 1, k) * l->esize;
        if (l->esize == sizeof(double))
            memcpy(out, row, (size_t)m->nx * sizeof(double));
        else
            for (int j = 0; j < m->nx; j++)
                out[j] = ((const float *)row)[j];
    }
}

hr_status hr_mg_solution(const hr_mg *m, double *dst, size_t count)
{
    if (!m || !dst || count != (size_t)m->nx * m->ny * m->nz) return HR_ERR_INVALID_ARG;
    if (m->gpu) return hri_mgs_solution_host((hr_mg *)m, dst, 0);
    sol_copy c = {m, hri_mgs_sol_grid((hr_mg *)m), dst};
    if (m->team)
        hri_team_run(m->team, sol_copy_fn, &c);
    else
        sol_copy_fn(&c, 0, 1);
    return HR_OK;
}
