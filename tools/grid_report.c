/* The grid commands' report: --verify against cpu-seq and the JSON record. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include "cli.h"
#include "field_io.h"
#include "grid_cmd.h"

/* Runs cpu-seq for the same number of sweeps and compares the solutions bitwise. */
int hr_grid_verify(const grid_args *a, long sweeps, const double *sol)
{
    hr_options ro = a->o;
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
    json_object_object_add(j, "device", json_object_new_string(r->device_name));
    json_object_object_add(j, "rhs", json_object_new_string(rhs_name));
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
                           json_object_new_string(a->o.init == HR_INIT_SINE    ? "sine"
                                                  : a->o.init == HR_INIT_ARRAY ? a->init_file
                                                                               : "zero"));
    json_object_object_add(j, "iterations", json_object_new_int64(r->iterations));
    if (restarted_from >= 0)
        json_object_object_add(j, "restarted_from", json_object_new_int64(restarted_from));
    /* async kernels (docs/async.md): Teff = iterations, passes = global syncs */
    json_object_object_add(j, "teff", json_object_new_int64(r->iterations));
    json_object_object_add(j, "global_syncs", json_object_new_int64(r->global_syncs));
    json_object_object_add(j, "alpha", json_object_new_int(a->o.alpha));
    json_object_object_add(j, "reason", json_object_new_string(hr_reason_string(r->reason)));
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

/* After the sweeps: the summary, --verify, --output, --json (on rank 0 of an MPI run; the
 * other ranks' output goes to /dev/null and they hold no solution). Frees sol. */
int hr_grid_finish(const grid_args *a, outputs *wp, const hr_result *rp, const hr_config *cfg, double *sol,
                   const char *rhs_name, hr_status st, long restarted_from, json_object *mpi_json,
                   json_object *hybrid_json)
{
    const hr_options *o = &a->o;
    const hr_result r = *rp;
    outputs w = *wp;
    const int root = hr_mpi_cli_rank() == 0;
    int rc;
    fprintf(hr_grid_out, "summary   %ld sweeps (%s) in %.4f s: %.3f ms/sweep\n", r.iterations,
            hr_reason_string(r.reason), r.time_s, 1e3 * r.time_per_sweep_s);
    fprintf(hr_grid_out, "          %.2f GFLOP/s, %.2f GB/s (%.0f B/point)", r.gflops, r.gbps,
            r.bytes_per_point);
    if (isfinite(r.bandwidth_fraction))
        fprintf(hr_grid_out, ", %.1f%% of %.2f GB/s", 100.0 * r.bandwidth_fraction, r.reference_gbps);
    if (r.global_syncs != r.iterations && (cfg->caps & HR_CAP_ALPHA))
        fprintf(hr_grid_out, "\n          Teff %ld sweeps in %ld global syncs (alpha %d, docs/async.md)",
                r.iterations, r.global_syncs, o->alpha);
    fprintf(hr_grid_out, "\n          relative residual %.6e", r.relative_residual);
    if (isfinite(r.max_error)) fprintf(hr_grid_out, ", max error vs exact %.6e", r.max_error);
    fprintf(hr_grid_out, "\n");
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

    rc = st == HR_ERR_DIVERGED ? HR_EXIT_FAIL : HR_EXIT_OK;
    if (st == HR_ERR_DIVERGED)
        fprintf(stderr, "hetrelax %s: the iteration diverged (%s)\n", hr_grid_cmd,
                hr_reason_string(r.reason));
    if (a->verify && root && rc == HR_EXIT_OK) rc = hr_grid_verify(a, r.iterations, sol);
    if (w.out_open) {
        hr_status ws = hr_field_write_as(hr_field_format_of(a->output), w.out.tmp, a->nx, a->ny, a->nz, sol,
                                         o->precision);
        int err = ws == HR_OK              ? 0
                  : ws == HR_ERR_IO        ? (errno ? errno : EIO)
                  : ws == HR_ERR_NO_MEMORY ? ENOMEM
                                           : EINVAL;
        w.out_open = 0;
        if (hr_cli_close_output(hr_grid_cmd, "--output", &w.out, err) != 0)
            rc = HR_EXIT_FAIL;
        else if (!a->quiet)
            fprintf(hr_grid_out, "wrote     %s\n", a->output);
    }
    free(sol);
    sol = NULL;
    if (a->json) {
        json_object *j = hr_grid_result_json(a, &r, rhs_name, cfg, restarted_from, mpi_json, hybrid_json);
        int jr = hr_cli_write_json_to(hr_grid_cmd, w.json_open ? &w.json : NULL, j);
        w.json_open = 0;
        json_object_put(j);
        if (jr && rc == HR_EXIT_OK) rc = jr;
    } else {
        json_object_put(mpi_json);
        json_object_put(hybrid_json);
    }
    return rc;
}
