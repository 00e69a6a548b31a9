/*
 * The checkpointed run of the grid commands (--checkpoint, --restart): sweeps in chunks
 * that end on every checkpoint, residual check and monitor point, counted from the original
 * start (so a restarted run checks, prints and stops on the same sweeps as an uninterrupted
 * one), and SIGINT/SIGTERM answered within ~0.1 s through hr_solver_request_stop.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grid_cmd.h"

static int write_checkpoint(const grid_args *a, hr_solver *s, chunk_run *c)
{
    hr_status st = hr_solver_solution(s, a->o.precision, c->buf, c->count);
    int err = st == HR_OK ? 0 : EIO;
    c->info.sweeps = c->done;
    if (!err) err = hr_ckpt_write(a->checkpoint, &c->info, c->buf, c->count);
    if (err) {
        fprintf(stderr, "hetrelax %s: --checkpoint: cannot write '%s': %s\n", hr_grid_cmd, a->checkpoint,
                strerror(err));
        return HR_EXIT_FAIL;
    }
    return 0;
}

/* The next multiple of `every` after `done` (LONG_MAX-free: `limit` when there is none). */
static long next_at(long done, long every, long limit)
{
    if (every <= 0) return limit;
    const long at = (done / every + 1) * every;
    return at < limit ? at : limit;
}

/* The relative residual of the current state: a run of 0 sweeps (the solver has iters 0)
 * computes it on the host, and max_error with it. */
static hr_status current_residual(hr_solver *s, hr_result *r, double *t)
{
    hr_status st = hr_solver_run(s, r);
    *t += r->time_s;
    return st == HR_ERR_DIVERGED ? HR_OK : st; /* the caller judges the value against --divtol */
}

int hr_grid_run_chunks(const grid_args *a, hr_solver *s, chunk_run *c, hr_result *total, int *sig)
{
    const hr_options *o = &a->o;
    const long check = o->tol > 0 ? o->check_every : 0, mon = o->monitor_every;
    const double divtol = o->divtol > 0 ? o->divtol : 1e3; /* 0: the library's default */
    hr_result r, sw;                                       /* the last residual run, the last sweep run */
    memset(&sw, 0, sizeof sw);
    hr_reason reason = HR_REASON_ITERS;
    double t_sweeps = 0.0, t_loop = 0.0;
    long syncs = 0;
    int rc = 0;
    *sig = 0;
    hr_cli_stop_target(s); /* a signal now stops the running chunk */
    hr_status st = HR_OK;
    while (c->done < o->iters) {
        const long before = c->done;
        long end = next_at(before, a->checkpoint ? a->checkpoint_every : 0, o->iters);
        end = next_at(before, check, end);
        end = next_at(before, mon, end);
        st = hr_solver_run_sweeps(s, end - before, &sw);
        if (st != HR_OK && st != HR_ERR_DIVERGED) break;
        c->done += sw.iterations;
        t_sweeps += sw.time_sweeps_s;
        t_loop += sw.time_s;
        syncs += sw.global_syncs;
        if (sw.iterations < end - before && !hr_cli_signal_pending()) continue; /* a spurious stop */
        const int at_check = check > 0 && c->done % check == 0, at_mon = mon > 0 && c->done % mon == 0;
        if (at_check || at_mon) {
            if ((st = current_residual(s, &r, &t_loop)) != HR_OK) break;
            const double rel = r.relative_residual;
            if (at_mon) hr_grid_monitor_print(c->done, rel, NULL);
            if (!isfinite(rel))
                reason = HR_REASON_NAN;
            else if (rel > divtol)
                reason = HR_REASON_DIVERGED;
            else if (at_check && rel < o->tol)
                reason = HR_REASON_CONVERGED;
        }
        /* checkpoints: on the cadence, at a signal, and at the end (a later run with a
         * larger --iters continues from there); never a diverged state */
        const int last = c->done >= o->iters || reason != HR_REASON_ITERS;
        if (a->checkpoint && reason != HR_REASON_DIVERGED && reason != HR_REASON_NAN &&
            (c->done % a->checkpoint_every == 0 || hr_cli_signal_pending() || last))
            if ((rc = write_checkpoint(a, s, c)) != 0) break;
        if (hr_cli_signal_pending()) break;
        if (reason != HR_REASON_ITERS) break;
    }
    hr_cli_stop_target(NULL);
    hr_cli_defer_signals(0);
    *sig = hr_cli_signal_pending();
    if (st != HR_OK && st != HR_ERR_DIVERGED) return -(int)st;
    if (rc) return rc;
    /* the final state's residual (and error against the exact solution), as an
     * uninterrupted run reports it */
    if (*sig) { /* interrupted: the state is saved, the caller reports and exits */
        memset(total, 0, sizeof *total);
        total->iterations = c->done;
        total->reason = HR_REASON_STOPPED;
        return 0;
    }
    if ((st = current_residual(s, &r, &t_loop)) != HR_OK) return -(int)st;
    if (mon > 0 && c->done % mon != 0) hr_grid_monitor_print(c->done, r.relative_residual, NULL);
    /* one result for the whole run: sweeps from the original start, rates over this
     * process's sweeps */
    const long mine = c->done - c->done0;
    *total = r;
    total->iterations = c->done;
    total->global_syncs = syncs + c->done0;
    total->time_s = t_loop;
    total->time_sweeps_s = t_sweeps;
    total->time_per_sweep_s = mine > 0 ? t_sweeps / (double)mine : 0.0;
    total->bytes_per_point = sw.bytes_per_point > 0 ? sw.bytes_per_point : r.bytes_per_point;
    total->flops_per_point = sw.flops_per_point > 0 ? sw.flops_per_point : r.flops_per_point;
    const double pts = (double)a->nx * (double)a->ny * (double)a->nz * (double)mine;
    total->gflops = t_sweeps > 0 ? total->flops_per_point * pts / t_sweeps * 1e-9 : 0.0;
    total->gbps = t_sweeps > 0 ? total->bytes_per_point * pts / t_sweeps * 1e-9 : 0.0;
    total->bandwidth_fraction = o->reference_gbps > 0 ? total->gbps / o->reference_gbps : NAN;
    const double rel = r.relative_residual;
    if (reason == HR_REASON_ITERS)
        reason = !isfinite(rel)                 ? HR_REASON_NAN
                 : rel > divtol                 ? HR_REASON_DIVERGED
                 : (o->tol > 0 && rel < o->tol) ? HR_REASON_CONVERGED
                                                : HR_REASON_ITERS;
    total->reason = *sig ? HR_REASON_STOPPED : reason;
    return 0;
}

/* "2-D 40x30" or "3-D 9x10x11" */
static void extents_text(char *buf, size_t size, int dim, long nx, long ny, long nz)
{
    if (dim == 3)
        snprintf(buf, size, "3-D %ldx%ldx%ld", nx, ny, nz);
    else
        snprintf(buf, size, "2-D %ldx%ld", nx, ny);
}

int hr_grid_load_restart(const grid_args *a, chunk_run *c)
{
    hr_ckpt_info *in = &c->from;
    int rc = hr_ckpt_read_info(hr_grid_cmd, "--restart", a->restart, in);
    if (rc) return rc;
    const hr_options *o = &a->o;
    if (in->dim != a->dim || in->nx != a->nx || in->ny != a->ny || in->nz != a->nz ||
        in->precision != o->precision) {
        char have[80], want[80];
        extents_text(have, sizeof have, in->dim, in->nx, in->ny, in->nz);
        extents_text(want, sizeof want, a->dim, a->nx, a->ny, a->nz);
        return hr_cli_usage_error(hr_grid_cmd, "--restart", "'%s' holds a %s %s grid%s%s, this run is %s %s",
                                  a->restart, have, hr_precision_name(in->precision),
                                  in->dim != a->dim ? " of " : "",
                                  in->dim != a->dim ? (in->dim == 3 ? "poisson3d" : "poisson2d") : "", want,
                                  hr_precision_name(o->precision));
    }
    if (in->rhs != (int)o->rhs || memcmp(&in->boundary, &o->boundary, sizeof in->boundary) != 0)
        return hr_cli_usage_error(hr_grid_cmd, "--restart", "'%s' was run with another --rhs or --boundary",
                                  a->restart);
    if (in->sweeps > o->iters)
        return hr_cli_usage_error(hr_grid_cmd, "--restart", "'%s' has %ld sweeps done, more than --iters %ld",
                                  a->restart, in->sweeps, o->iters);
    if ((rc = hr_ckpt_read_data(hr_grid_cmd, "--restart", a->restart, in, c->buf, c->count)) != 0) return rc;
    c->done0 = c->done = in->sweeps;
    return 0;
}

int hr_grid_check_restart(const grid_args *a, const chunk_run *c, const hr_config *cfg)
{
    const hr_ckpt_info *in = &c->from;
    const char *path = a->restart;
    /* redblack and sor are one update rule once the weight is resolved */
    const int rb_in = in->method != HR_METHOD_JACOBI, rb_run = cfg->method != HR_METHOD_JACOBI;
    if (rb_in != rb_run)
        return hr_cli_usage_error(hr_grid_cmd, "--method",
                                  "'%s' was run with --method %s, this run is %s: restart with --method %s",
                                  path, hr_method_name((hr_method)in->method), hr_method_name(cfg->method),
                                  hr_method_name((hr_method)in->method));
    if (memcmp(&in->omega, &cfg->omega, sizeof in->omega) != 0)
        return hr_cli_usage_error(
            hr_grid_cmd, "--omega",
            "'%s' was run with weight %.17g, this run has %.17g: restart with --omega %.17g", path, in->omega,
            cfg->omega, in->omega);
    if (in->rhs_hash != c->info.rhs_hash)
        return hr_cli_usage_error(hr_grid_cmd, "--rhs", "'%s' was run with other --rhs values", path);
    /* a deterministic kernel's state is cpu-seq's, which any deterministic kernel continues */
    if (!(in->deterministic && (cfg->caps & HR_CAP_DETERMINISTIC)) && strcmp(in->kernel, cfg->kernel) != 0)
        return hr_cli_usage_error(hr_grid_cmd, "--kernel",
                                  "'%s' was written by kernel %s%s, this run's kernel is %s", path,
                                  in->kernel, in->deterministic ? "" : " (non-deterministic)", cfg->kernel);
    return 0;
}
