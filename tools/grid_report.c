/* The grid commands' report: --verify against cpu-seq and the JSON record. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include "cli.h"
#include "field_io.h"
#include "grid_cmd.h"
#include "runtime/cpu/team.h"
#include "runtime/cuda/cuda_api.h"

/* Runs cpu-seq for the same number of sweeps and compares the solutions bitwise. */
int hr_grid_verify(const grid_args *a, long sweeps, const double *sol, int flush)
{
    hr_options ro = a->o;
    ro.flush_subnormals = flush; /* a GPU run keeps subnormals: so does its reference */
    ro.backend = HR_BACKEND_CPU_SEQ;
    ro.gpus = 0; /* the reference is one cpu-seq process */
    ro.kernel = NULL;
    ro.layout = HR_LAYOUT_FLAT;
    ro.iters = sweeps;
    ro.tol = 0.0;
    ro.monitor = NULL;
    ro.monitor_every = 0;
    ro.threads = 0;
    ro.dim = a->dim;
    ro.thread_rows = ro.thread_cols = 0;
    hr_solver *ref = NULL;
    size_t count = (size_t)a->nx * (size_t)a->ny * (size_t)a->nz;
    double *want = malloc(count * sizeof *want);
    hr_status st = want ? hr_solver_create(&ro, &ref) : HR_ERR_NO_MEMORY;
    if (st == HR_OK) st = hr_solver_run(ref, NULL);
    if (st == HR_OK) st = hr_solver_solution(ref, HR_PREC_DOUBLE, want, count);
    hr_solver_free(ref);
    if (st != HR_OK) {
        fprintf(stderr, "hetrelax %s: --verify: reference run failed: %s\n", hr_grid_cmd,
                hr_status_string(st));
        free(want);
        return HR_EXIT_FAIL;
    }
    size_t diff = 0;
    double maxd = 0.0;
    for (size_t i = 0; i < count; i++)
        if (memcmp(&want[i], &sol[i], sizeof(double)) != 0) {
            diff++;
            double d = fabs(want[i] - sol[i]);
            if (d > maxd || isnan(d)) maxd = d;
        }
    free(want);
    fprintf(hr_grid_out,
            "verify    %s against cpu-seq after %ld sweeps: %zu of %zu points differ (max |diff| %.3e)\n",
            diff ? "MISMATCH" : "bitwise equal", sweeps, diff, count, maxd);
    return diff ? HR_EXIT_FAIL : HR_EXIT_OK;
}

/* ----------------------------------------------------------------- report */

json_object *hr_grid_result_json(const grid_args *a, const hr_result *r, const char *rhs_name,
                                 const hr_config *cfg, long restarted_from, json_object *mpi,
                                 json_object *hybrid)
{
    json_object *j = json_object_new_object();
    char date[32];
    hr_cli_date(date, sizeof date);
    if (a->dim == 3) json_object_object_add(j, "dim", json_object_new_int(3));
    json_object_object_add(j, "n", json_object_new_int(a->o.n));
    json_object_object_add(j, "nx", json_object_new_int(a->nx));
    json_object_object_add(j, "ny", json_object_new_int(a->ny));
    if (a->dim == 3) json_object_object_add(j, "nz", json_object_new_int(a->nz));
    json_object_object_add(j, "precision", json_object_new_string(hr_precision_name(a->o.precision)));
    json_object_object_add(j, "backend", json_object_new_string(r->backend));
    json_object_object_add(j, "kernel", json_object_new_string(r->kernel));
    json_object_object_add(j, "device", hr_json_text(r->device_name));
    json_object_object_add(j, "rhs", hr_json_text(rhs_name));
    /* what ran, as the library resolved it */
    json_object_object_add(j, "threads", json_object_new_int(cfg->threads));
    if (cfg->thread_rows > 0) {
        char grid[32];
        snprintf(grid, sizeof grid, "%dx%d", cfg->thread_rows, cfg->thread_cols);
        json_object_object_add(j, "thread_grid", json_object_new_string(grid));
    }
    if (cfg->shape[0] > 0) {
        json_object *shape = json_object_new_array();
        for (int i = 0; i < 3; i++)
            json_object_array_add(shape, json_object_new_int(cfg->shape[i]));
        json_object_object_add(j, "shape", shape);
        json_object_object_add(j, "shape_source", json_object_new_string(cfg->shape_source));
    }
    /* the method and the weight that ran (omega auto resolved by the library) */
    json_object_object_add(j, "method", json_object_new_string(hr_method_name(cfg->method)));
    if (cfg->omega != 1.0 || cfg->method != HR_METHOD_JACOBI)
        json_object_object_add(j, "omega", json_object_new_double(cfg->omega));
    if (a->o.omega == HR_OMEGA_AUTO) json_object_object_add(j, "omega_auto", json_object_new_boolean(1));
    json_object_object_add(j, "init",
                           hr_json_text(a->o.init == HR_INIT_SINE    ? "sine"
                                        : a->o.init == HR_INIT_ARRAY ? a->init_file
                                                                     : "zero"));
    json_object_object_add(j, "flush_subnormals", json_object_new_boolean(cfg->flush_subnormals));
    json_object_object_add(j, "iterations", json_object_new_int64(r->iterations));
    if (restarted_from >= 0)
        json_object_object_add(j, "restarted_from", json_object_new_int64(restarted_from));
    /* async kernels (docs/async.md): Teff = iterations, passes = global syncs */
    json_object_object_add(j, "teff", json_object_new_int64(r->iterations));
    json_object_object_add(j, "global_syncs", json_object_new_int64(r->global_syncs));
    json_object_object_add(j, "alpha", json_object_new_int(a->o.alpha));
    json_object_object_add(j, "reason", json_object_new_string(hr_reason_string(r->reason)));
    /* with a tolerance: reached or not (reason "iterations" and converged false: the
     * command's exit status 3) */
    json_object_object_add(j, "tol", json_object_new_double(a->o.tol));
    json_object_object_add(j, "converged", json_object_new_boolean(r->reason == HR_REASON_CONVERGED));
    if (hr_grid_absolute) json_object_object_add(j, "residual_absolute", json_object_new_boolean(1));
    json_object_object_add(j, "time_s", json_object_new_double(r->time_s));
    json_object_object_add(j, "time_sweeps_s", json_object_new_double(r->time_sweeps_s));
    json_object_object_add(j, "time_per_sweep_s", json_object_new_double(r->time_per_sweep_s));
    json_object_object_add(j, "time_setup_s", json_object_new_double(r->time_setup_s));
    json_object_object_add(j, "time_h2d_s", json_object_new_double(r->time_h2d_s));
    json_object_object_add(j, "time_d2h_s", json_object_new_double(r->time_d2h_s));
    json_object_object_add(j, "gflops", json_object_new_double(r->gflops));
    json_object_object_add(j, "gbps", json_object_new_double(r->gbps));
    json_object_object_add(j, "bytes_per_point", json_object_new_double(r->bytes_per_point));
    json_object_object_add(
        j, "byte_model",
        json_object_new_string("u read once + u' written once (+ f read once for array right-hand sides)"));
    json_object_object_add(j, "reference_gbps",
                           hr_json_number(r->reference_gbps > 0 ? r->reference_gbps : NAN));
    json_object_object_add(j, "bandwidth_fraction", hr_json_number(r->bandwidth_fraction));
    json_object_object_add(j, "relative_residual", hr_json_number(r->relative_residual));
    if (isfinite(r->max_error)) json_object_object_add(j, "max_error", hr_json_number(r->max_error));
    if (mpi) json_object_object_add(j, "mpi", mpi);
    if (hybrid) json_object_object_add(j, "hybrid", hybrid);
    json_object_object_add(j, "tuning", hr_tuning_json(&a->o.tuning));
    json_object_object_add(j, "commit", json_object_new_string(hr_cli_commit()));
    json_object_object_add(j, "date", json_object_new_string(date));
    return j;
}

/* The run's header lines (before the sweeps). */
void hr_grid_print_header(const grid_args *a, const char *rhs_name, hr_backend b, const char *kernel,
                          const char *bw_what, const hr_config *cfg, long done0)
{
    const hr_options *o = &a->o;
    if (a->dim == 3)
        fprintf(hr_grid_out, "hetrelax %s: %d x %d x %d interior points", hr_grid_cmd, a->nx, a->ny, a->nz);
    else if (a->nx == a->ny)
        fprintf(hr_grid_out, "hetrelax %s: n=%d (%d x %d grid)", hr_grid_cmd, a->nx, a->nx + 2, a->nx + 2);
    else
        fprintf(hr_grid_out, "hetrelax %s: %d x %d interior points", hr_grid_cmd, a->nx, a->ny);
    fprintf(hr_grid_out, ", %s precision, rhs %s, backend %s, kernel %s\n", hr_precision_name(o->precision),
            rhs_name, hr_backend_name(b), kernel);
    if (cfg && (cfg->method != HR_METHOD_JACOBI || cfg->omega != 1.0))
        fprintf(hr_grid_out, "method %s, omega %.6g%s\n", hr_method_name(cfg->method), cfg->omega,
                o->omega == HR_OMEGA_AUTO ? " (auto: 2 / (1 + sqrt(1 - rho^2)))" : "");
    if (hr_mpi_cli_wanted(&a->mpi))
        fprintf(hr_grid_out, "MPI: %d ranks, --decomp %s, ghost %d%s\n", hr_mpi_cli_size(),
                a->mpi.decomp[0] ? "given" : "from MPI_Dims_create", a->mpi.ghost,
                a->mpi.no_overlap ? ", no overlap" : "");
    if (a->ref_gbps > 0) fprintf(hr_grid_out, "reference bandwidth: %.2f GB/s (%s)\n", a->ref_gbps, bw_what);
    fprintf(hr_grid_out, "sweeps: %ld%s", o->iters, o->tol > 0 ? " at most" : "");
    if (a->restart) fprintf(hr_grid_out, ", continuing after %ld from '%s'", done0, a->restart);
    if (a->checkpoint)
        fprintf(hr_grid_out, ", checkpoint every %ld to '%s'", a->checkpoint_every, a->checkpoint);
    fprintf(hr_grid_out, "\n");
}

void hr_grid_print_flush(const grid_args *a, int flushed, const char *backend)
{
    if (!a->o.flush_subnormals) return;
    if (flushed)
        fprintf(hr_grid_out,
                "          subnormals flushed to zero in every CPU thread (--flush-subnormals)\n");
    else
        fprintf(hr_grid_out,
                "          subnormals kept: backend %s computes with them (--flush-subnormals: cpu-seq, "
                "cpu-threads)\n",
                backend);
}

/* The working set of a sweep under the byte model against the cache the backend can count
 * on (the CPU threads' share of the last-level cache, a GPU's L2): a set that fits is read
 * from cache, and its rate may exceed the memory copy it is compared with. */
static void print_cache_note(const hr_result *r, const hr_config *cfg)
{
    const double set = r->bytes_per_point * (double)r->nx * (double)r->ny * (double)(r->dim == 3 ? r->nz : 1);
    double cache = 0.0;
    const char *what = "";
    if (cfg->backend == HR_BACKEND_CPU_SEQ || cfg->backend == HR_BACKEND_CPU_THREADS) {
        cache = (double)hri_cache_llc_share(cfg->threads > 0 ? cfg->threads : 1);
        what = "last-level cache share";
    } else if (cfg->backend == HR_BACKEND_GPU && cfg->gpus <= 1) {
        cache = (double)hri_cuda_l2_bytes(cfg->device);
        what = "GPU L2 cache";
    }
    if (!(cache > 0.0) || set > cache) return;
    fprintf(hr_grid_out, " (cache-resident: grids %.2g MB < %.3g MB %s)", set * 1e-6, cache * 1e-6, what);
}

static int write_field(const char *tmp, void *ctx)
{
    const struct field_out {
        const grid_args *a;
        const double *sol;
    } *f = ctx;
    const grid_args *a = f->a;
    hr_status ws =
        hr_field_write_as(hr_field_format_of(a->output), tmp, a->nx, a->ny, a->nz, f->sol, a->o.precision);
    return ws == HR_OK              ? 0
           : ws == HR_ERR_IO        ? (errno ? errno : EIO)
           : ws == HR_ERR_NO_MEMORY ? ENOMEM
                                    : EINVAL;
}

int hr_grid_b_is_zero(const hr_options *o, const double *values, size_t count)
{
    if (o->boundary != 0.0) return 0;
    if (o->rhs == HR_RHS_ZERO) return 1;
    if (o->rhs != HR_RHS_ARRAY || !values) return 0;
    for (size_t i = 0; i < count; i++)
        if (values[i] != 0.0) return 0;
    return 1;
}

/* After the sweeps: the summary, --verify, --output, --json (on rank 0 of an MPI run; the
 * other ranks' output goes to /dev/null and they hold no solution). Frees sol. A diverged run
 * (and a --verify mismatch) replaces no file; --keep-diverged writes a diverged state beside
 * them; a run that missed its --tol writes its outputs and ends with HR_EXIT_NOT_CONVERGED. */
int hr_grid_finish(const grid_args *a, outputs *wp, const hr_result *rp, const hr_config *cfg, double *sol,
                   const char *rhs_name, hr_status st, long restarted_from, json_object *mpi_json,
                   json_object *hybrid_json)
{
    const hr_options *o = &a->o;
    const hr_result r = *rp;
    outputs w = *wp;
    const int root = hr_mpi_cli_rank() == 0;
    const int diverged = st == HR_ERR_DIVERGED;
    int rc = diverged ? HR_EXIT_FAIL : hr_cli_run_status(r.reason, o->tol);
    char outcome[64];
    if (rc == HR_EXIT_NOT_CONVERGED)
        snprintf(outcome, sizeof outcome, "NOT converged: --tol %g not reached", o->tol);
    else
        snprintf(outcome, sizeof outcome, "%s", hr_reason_string(r.reason));
    fprintf(hr_grid_out, "summary   %ld sweeps (%s) in %.4f s", r.iterations, outcome, r.time_s);
    /* the rates are per sweep: say where the rest of the loop's time went */
    if (r.time_residual_s > 0.0)
        fprintf(hr_grid_out, ": sweeps %.4f s, residual checks %.4f s", r.time_sweeps_s, r.time_residual_s);
    fprintf(hr_grid_out, "\n          %.3f ms/sweep (sweeps only), %.2f GFLOP/s, %.2f GB/s (%.0f B/point)",
            1e3 * r.time_per_sweep_s, r.gflops, r.gbps, r.bytes_per_point);
    if (isfinite(r.bandwidth_fraction)) {
        fprintf(hr_grid_out, ", %.1f%% of %.2f GB/s", 100.0 * r.bandwidth_fraction, r.reference_gbps);
        print_cache_note(&r, cfg);
    }
    if (r.global_syncs != r.iterations && (cfg->caps & HR_CAP_ALPHA))
        fprintf(hr_grid_out, "\n          Teff %ld sweeps in %ld global syncs (alpha %d, docs/async.md)",
                r.iterations, r.global_syncs, o->alpha);
    fprintf(hr_grid_out, "\n          %s %.6e", hr_cli_residual_label(hr_grid_absolute), r.relative_residual);
    if (isfinite(r.max_error)) fprintf(hr_grid_out, ", max error vs exact %.6e", r.max_error);
    fprintf(hr_grid_out, "\n");
    hr_grid_print_flush(a, cfg->flush_subnormals, hr_backend_name(cfg->backend));
    if (mpi_json) {
        json_object *d = json_object_object_get(mpi_json, "decomp"), *v;
        fprintf(hr_grid_out, "          MPI %d ranks, decomp ",
                json_object_get_int(json_object_object_get(mpi_json, "ranks")));
        for (size_t i = 0; i < json_object_array_length(d); i++)
            fprintf(hr_grid_out, "%s%d", i ? "x" : "", json_object_get_int(json_object_array_get_idx(d, i)));
        fprintf(hr_grid_out, ", %ld exchanges",
                (long)json_object_get_int64(json_object_object_get(mpi_json, "exchanges")));
        if ((v = json_object_object_get(mpi_json, "transfer_s")) != NULL)
            fprintf(hr_grid_out, ", transfer %.4f s (slowest rank)", json_object_get_double(v));
        fprintf(hr_grid_out, "\n");
    }
    if (r.time_h2d_s > 0 || r.time_d2h_s > 0)
        fprintf(hr_grid_out, "          setup %.4f s, host-to-device %.4f s, device-to-host %.4f s\n",
                r.time_setup_s, r.time_h2d_s, r.time_d2h_s);

    if (diverged)
        fprintf(stderr, "hetrelax %s: the iteration diverged (%s)%s\n", hr_grid_cmd,
                hr_reason_string(r.reason),
                (w.out_open || w.json_open) && !a->keep_diverged
                    ? ": no output written (--keep-diverged keeps the diverged state)"
                    : "");
    else if (rc == HR_EXIT_NOT_CONVERGED && root) {
        char advice[128];
        hr_cli_not_converged(hr_grid_cmd, r.iterations, "sweeps", r.relative_residual, hr_grid_absolute,
                             o->tol,
                             hr_cli_not_converged_advice("--iters", o->precision == HR_PREC_SINGLE, o->tol,
                                                         "--precision double", advice, sizeof advice));
    }
    if (a->verify && root && !diverged) {
        const int vr = hr_grid_verify(a, r.iterations, sol, cfg->flush_subnormals);
        if (vr != HR_EXIT_OK) rc = vr;
    }
    json_object *j =
        a->json ? hr_grid_result_json(a, &r, rhs_name, cfg, restarted_from, mpi_json, hybrid_json) : NULL;
    if (!a->json) {
        json_object_put(mpi_json);
        json_object_put(hybrid_json);
    }
    if (rc == HR_EXIT_FAIL) {
        /* nothing replaced; a diverged state only where it was asked for, under a name that
         * says so */
        if (w.out_open) hr_atomic_abort(&w.out);
        if (w.json_open) hr_atomic_abort(&w.json);
        if (diverged && a->keep_diverged && root) {
            struct {
                const grid_args *a;
                const double *sol;
            } f = {a, sol};
            if (hr_cli_keep_diverged(hr_grid_cmd, a->output, sol ? write_field : NULL, &f, a->json, j,
                                     a->quiet, hr_grid_out) != 0)
                rc = HR_EXIT_FAIL;
        }
        if (j && a->json && strcmp(a->json, "-") == 0) hr_cli_write_json_to(hr_grid_cmd, NULL, j);
        json_object_put(j);
        free(sol);
        return rc;
    }
    if (w.out_open) {
        struct {
            const grid_args *a;
            const double *sol;
        } f = {a, sol};
        w.out_open = 0;
        if (hr_cli_close_output(hr_grid_cmd, "--output", &w.out, write_field(w.out.tmp, &f)) != 0)
            rc = HR_EXIT_FAIL;
        else if (!a->quiet)
            fprintf(hr_grid_out, "wrote     %s\n", a->output);
    }
    free(sol);
    sol = NULL;
    if (j) {
        int jr = hr_cli_write_json_to(hr_grid_cmd, w.json_open ? &w.json : NULL, j);
        w.json_open = 0;
        json_object_put(j);
        if (jr && rc != HR_EXIT_FAIL) rc = jr;
    }
    return rc;
}
