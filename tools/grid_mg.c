/*
 * poisson2d/poisson3d --method mg|cg: converged solves by geometric multigrid, CG or
 * MG-preconditioned CG (include/hetrelax/mg.h, docs/multigrid.md). Progress per cycle (or
 * CG iteration) with the relative residual and the convergence factor; the JSON records
 * cycles, factors and time per unknown.
 */
#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/timer.h"
#include "runtime/cuda/cuda_api.h"
#include "field_io.h"
#include "grid_cmd.h"
#include "hetrelax/mg.h"

static const char *const pcs[] = {"none", "mg", NULL};
static const char *const coarse_ons[] = {"gpu", "cpu", NULL};

/* --smoother: a registry smoother; its hr_mg_smoother goes to a->smoother */
static int parse_smoother(const char *cmd, const hr_flag *f, const char *arg)
{
    hr_entry_info e;
    if (hr_cli_entry(cmd, "--smoother", arg, HR_KIND_SMOOTHER, &e)) return HR_EXIT_USAGE;
    *(int *)f->target = e.id;
    return 0;
}

/* The capabilities of the smoother with hr_mg_smoother id (0: none such). */
static unsigned smoother_caps(int id)
{
    hr_entry_info e;
    for (int i = 0; hr_registry_info_at(HR_KIND_SMOOTHER, i, &e) == HR_OK; i++)
        if (e.id == id) return e.caps;
    return 0;
}

void hr_grid_mg_flags(hr_flagset *fs, grid_args *a)
{
    static const char *cycles[8]; /* the library's names, in hr_mg_cycle order */
    for (int c = 0; c < 7 && strcmp(hr_mg_cycle_name((hr_mg_cycle)c), "?") != 0; c++)
        cycles[c] = hr_mg_cycle_name((hr_mg_cycle)c);
    hr_entry_info sm;
    a->pre = a->post = 2;
    a->smoother = hr_registry_find(HR_KIND_SMOOTHER, HR_BACKEND_AUTO, NULL, 0, &sm) == HR_OK ? sm.id : 0;
    hr_flags_group(fs, "multigrid and CG (--method mg|cg)");
    hr_flags_add(fs, hr_flag_choice("pc", &a->pc, pcs, "preconditioner of --method cg (default none)"));
    hr_flags_add(fs, hr_flag_choice("cycle", &a->cycle, cycles, "(default v; --pc mg: v)"));
    hr_flags_add(fs, hr_flag_int("pre", &a->pre, 0, 1000, "N",
                                 "smoothing sweeps before the coarse correction (default 2)"));
    hr_flags_add(fs, hr_flag_int("post", &a->post, 0, 1000, "N", "smoothing sweeps after it (default 2)"));
    hr_flags_add(fs, hr_flag_custom("smoother", &a->smoother, NULL, parse_smoother,
                                    hr_cli_entry_metavar(HR_KIND_SMOOTHER),
                                    "(default redblack; jacobi: omega 4/5 in 2-D, 6/7 in 3-D, or --omega; "
                                    "async3: --backend gpu only, asynchronous tile-local red-black)"));
    hr_flags_add(fs,
                 hr_flag_int("levels", &a->levels, 1, 64, "L", "levels including the finest (default: all)"));
    hr_flags_add(fs, hr_flag_choice("coarse-on", &a->coarse_on, coarse_ons,
                                    "--backend gpu: where the coarse levels run (default gpu; cpu: on the "
                                    "CPU threads, host copies)"));
    hr_flags_add(fs, hr_flag_int("coarse-level", &a->coarse_level, 1, 63, "L",
                                 "--coarse-on cpu: the first level on the CPU (default: the first with "
                                 "fewer than 65536 points)"));
}

/* the monitors' user pointer: the handle, set once it exists (for hr_mg_last_factor) */
static hr_mg *mg_watched;

static int mg_monitor(long it, double res, void *user)
{
    (void)user;
    fprintf(hr_grid_out, "  %s %6ld   %s %.6e   factor %.4f\n", it >= 0 ? "cycle" : "", it,
            hr_cli_residual_label(hr_grid_absolute), res, hr_mg_last_factor(mg_watched));
    fflush(hr_grid_out);
    return 0;
}

static int cg_monitor(long it, double res, void *user)
{
    (void)user;
    fprintf(hr_grid_out, "  iteration %6ld   %s %.6e   factor %.4f\n", it,
            hr_cli_residual_label(hr_grid_absolute), res, hr_mg_last_factor(mg_watched));
    fflush(hr_grid_out);
    return 0;
}

static double mg_read_rhs_s;    /* seconds reading --rhs FILE (0: none) */
static double mg_device_init_s; /* seconds creating the GPU's context, beside the reading */

/* The GPU's context, created on a thread of its own while the command reads --rhs FILE:
 * the set-up then finds it ready. */
typedef struct device_prep {
    int device;
    double seconds;
} device_prep;

static void *prepare_device(void *arg)
{
    device_prep *d = arg;
    const double t0 = hr_now();
    (void)hri_cuda_prepare(d->device); /* a failure shows again, with its message, in hr_mg_create */
    d->seconds = hr_now() - t0;
    return NULL;
}

static json_object *mg_json(const grid_args *a, const hr_mg_options *mo, const hr_mg_result *r,
                            const char *rhs)
{
    json_object *j = json_object_new_object();
    char date[32];
    hr_cli_date(date, sizeof date);
    json_object_object_add(j, "dim", json_object_new_int(a->dim));
    json_object_object_add(j, "nx", json_object_new_int(r->nx));
    json_object_object_add(j, "ny", json_object_new_int(r->ny));
    if (a->dim == 3) json_object_object_add(j, "nz", json_object_new_int(r->nz));
    json_object_object_add(j, "method", json_object_new_string(a->solver == GRID_MG ? "mg" : "cg"));
    json_object_object_add(j, "pc", json_object_new_string(pcs[a->pc]));
    if (a->solver == GRID_MG || a->pc == 1) {
        json_object_object_add(j, "cycle", json_object_new_string(hr_mg_cycle_name(mo->cycle)));
        json_object_object_add(j, "pre", json_object_new_int(mo->pre));
        json_object_object_add(j, "post", json_object_new_int(mo->post));
        json_object_object_add(j, "smoother", json_object_new_string(hr_mg_smoother_name(mo->smoother)));
        json_object_object_add(j, "levels", json_object_new_int(r->levels));
        if (mo->coarse_on == HR_MG_COARSE_ON_CPU) {
            json_object_object_add(j, "coarse_on", json_object_new_string("cpu"));
            json_object_object_add(j, "coarse_level", json_object_new_int(mo->coarse_level));
        }
    }
    json_object_object_add(j, "precision",
                           json_object_new_string(mo->precision == HR_MG_PREC_MIXED    ? "mixed"
                                                  : mo->precision == HR_MG_PREC_SINGLE ? "single"
                                                                                       : "double"));
    const int gpu = mo->backend == HR_MG_BACKEND_GPU;
    json_object_object_add(j, "backend",
                           json_object_new_string(gpu                ? "gpu"
                                                  : mo->threads == 1 ? "cpu-seq"
                                                                     : "cpu-threads"));
    if (gpu)
        json_object_object_add(j, "device", json_object_new_int(mo->device));
    else
        json_object_object_add(j, "threads", json_object_new_int(r->threads)); /* that ran */
    json_object_object_add(j, "flush_subnormals", json_object_new_boolean(mo->flush_subnormals && !gpu));
    json_object_object_add(j, "rhs", hr_json_text(rhs));
    json_object_object_add(j, "tol", json_object_new_double(mo->tol));
    json_object_object_add(j, a->solver == GRID_MG ? "cycles" : "iterations",
                           json_object_new_int64(r->iterations));
    json_object_object_add(j, "reason", json_object_new_string(hr_reason_string(r->reason)));
    json_object_object_add(j, "converged", json_object_new_boolean(r->reason == HR_REASON_CONVERGED));
    if (hr_grid_absolute) json_object_object_add(j, "residual_absolute", json_object_new_boolean(1));
    json_object_object_add(j, "convergence_factor", hr_json_number(r->convergence_factor));
    json_object_object_add(j, "last_factor", hr_json_number(r->last_factor));
    json_object_object_add(j, "relative_residual", hr_json_number(r->relative_residual));
    if (isfinite(r->max_error)) json_object_object_add(j, "max_error", hr_json_number(r->max_error));
    json_object_object_add(j, "time_s", json_object_new_double(r->time_s));
    json_object_object_add(j, "time_setup_s", json_object_new_double(r->time_setup_s));
    /* what each part of time_setup_s and time_s is (hr_mg_result); reading --rhs is the
     * command's, before the set-up */
    json_object *tp = json_object_new_object();
    json_object_object_add(tp, "read_rhs_s", hr_json_number(mg_read_rhs_s));
    json_object_object_add(tp, "device_init_s", hr_json_number(mg_device_init_s));
    json_object_object_add(tp, "setup_device_s", hr_json_number(r->time_setup_device_s));
    json_object_object_add(tp, "setup_alloc_s", hr_json_number(r->time_setup_alloc_s));
    json_object_object_add(tp, "setup_rhs_s", hr_json_number(r->time_setup_rhs_s));
    json_object_object_add(tp, "setup_upload_s", hr_json_number(r->time_setup_upload_s));
    json_object_object_add(tp, "setup_graphs_s", hr_json_number(r->time_setup_graphs_s));
    json_object_object_add(tp, "solve_first_check_s", hr_json_number(r->time_first_check_s));
    json_object_object_add(tp, "solve_iterations_s", hr_json_number(r->time_iterations_s));
    json_object_object_add(j, "time_parts", tp);
    json_object_object_add(j, "ns_per_unknown", hr_json_number(r->ns_per_unknown));
    json_object_object_add(j, "tuning", hr_tuning_json(&mo->tuning));
    json_object_object_add(j, "commit", json_object_new_string(hr_cli_commit()));
    json_object_object_add(j, "date", json_object_new_string(date));
    return j;
}

/* What write_field writes: the solution of m as --output wants it. */
typedef struct field_src {
    const grid_args *a;
    hr_mg *m;
    size_t count;
    int nx, ny, nz;
    hr_precision prec;
} field_src;

/* The solution into the temporary file tmp; 0 or an errno value (an hr_cli_writer). */
static int write_field(const char *tmp, void *ctx)
{
    const field_src *f = ctx;
    double *sol = malloc(f->count * sizeof *sol);
    hr_status ws = sol ? hr_mg_solution(f->m, sol, f->count) : HR_ERR_NO_MEMORY;
    if (ws == HR_OK)
        ws = hr_field_write_as(hr_field_format_of(f->a->output), tmp, f->nx, f->ny, f->nz, sol, f->prec);
    free(sol);
    return ws == HR_OK              ? 0
           : ws == HR_ERR_IO        ? (errno ? errno : EIO)
           : ws == HR_ERR_NO_MEMORY ? ENOMEM
                                    : EINVAL;
}

int hr_grid_run_mg(grid_args *a, hr_flagset *fs)
{
    const char *CMD = hr_grid_cmd;
    const hr_options *o = &a->o;
    const char *what = a->solver == GRID_MG ? "mg" : "cg";
    /* what a multigrid or CG solve cannot do (yet): one line naming the flag */
    if (hr_mpi_cli_wanted(&a->mpi))
        return hr_cli_usage_error(CMD, "--method", "%s: not in decomposed (MPI) runs yet", what);
    int gpu = o->backend == HR_BACKEND_GPU;
    if (gpu || o->backend == HR_BACKEND_AUTO) {
        hr_sysinfo si;
        hr_sysinfo_get(&si);
        if (!gpu) gpu = si.gpus > o->device; /* the best backend present, as for the sweeps */
        if (gpu && si.gpus <= o->device)
            return hr_cli_usage_error(CMD, si.gpus ? "--device" : "--backend",
                                      "gpu: no CUDA device %d (found %d)", o->device, si.gpus);
    }
    if (a->checkpoint || a->restart)
        return hr_cli_usage_error(CMD, a->checkpoint ? "--checkpoint" : "--restart",
                                  "not available with --method %s", what);
    if (a->verify)
        return hr_cli_usage_error(CMD, "--verify", "compares sweeps with cpu-seq: not for --method %s", what);
    if (o->init != HR_INIT_ZERO)
        return hr_cli_usage_error(CMD, "--init", "--method %s starts from a zero guess", what);
    const char *relax_only[] = {"kernel", "alpha", "layout", "host-memory", "device", "divtol", "check"}; /* (--kernel general goes to grid_general.c) */
    for (size_t i = 0; i < sizeof relax_only / sizeof relax_only[0]; i++)
        if (hr_flags_seen(fs, relax_only[i]) && !(gpu && strcmp(relax_only[i], "device") == 0))
            return hr_cli_usage_error(CMD, NULL, "--%s: not used by --method %s", relax_only[i], what);
    if (a->solver == GRID_CG && a->pc == 0) {
        const char *mg_only[] = {"cycle", "pre", "post", "smoother", "levels", "coarse-on", "coarse-level"};
        for (size_t i = 0; i < sizeof mg_only / sizeof mg_only[0]; i++)
            if (hr_flags_seen(fs, mg_only[i]))
                return hr_cli_usage_error(CMD, NULL, "--%s: needs --method mg or --pc mg", mg_only[i]);
    }
    if (a->pc == 1 && a->solver != GRID_CG)
        return hr_cli_usage_error(CMD, "--pc", "mg preconditions --method cg only (method is %s)", what);
    if (hr_flags_seen(fs, "omega") &&
        !((smoother_caps(a->smoother) & HR_CAP_OMEGA) && (a->solver == GRID_MG || a->pc == 1)))
        return hr_cli_usage_error(CMD, "--omega", "with --method %s: the weight of --smoother jacobi only",
                                  what);

    hr_mg_options mo;
    hr_mg_options_default(&mo);
    mo.dim = a->dim;
    mo.n = hr_flags_seen(fs, "n") ? o->n : 0;
    mo.nx = o->nx;
    mo.ny = o->ny;
    mo.nz = a->dim == 3 ? o->nz : 0;
    if (!mo.n && !mo.nx && !mo.ny && !mo.nz) mo.n = a->dim == 3 ? 127 : 1023; /* a 2^k - 1 default */
    if (!mo.n) mo.n = mo.nx ? mo.nx : mo.ny ? mo.ny : mo.nz;
    mo.rhs = o->rhs;
    mo.boundary = o->boundary;
    mo.method = a->solver == GRID_MG ? HR_MG_METHOD_MG : HR_MG_METHOD_CG;
    mo.pc = a->pc == 1 ? HR_MG_PC_MG : HR_MG_PC_NONE;
    mo.cycle = (hr_mg_cycle)a->cycle;
    mo.pre = a->pre;
    mo.post = a->post;
    mo.smoother = (hr_mg_smoother)a->smoother;
    if (hr_flags_seen(fs, "omega")) mo.omega = o->omega;
    mo.levels = a->levels;
    mo.coarse_on = a->coarse_on == 1 ? HR_MG_COARSE_ON_CPU : HR_MG_COARSE_ON_GPU;
    mo.coarse_level = a->coarse_level;
    /* the grid commands' default precision is single; a converged solve wants double */
    mo.precision = a->mixed                                                           ? HR_MG_PREC_MIXED
                   : hr_flags_seen(fs, "precision") && o->precision == HR_PREC_SINGLE ? HR_MG_PREC_SINGLE
                                                                                      : HR_MG_PREC_DOUBLE;
    /* --tol 0 means what it means for the sweeps: no tolerance, every --iters cycle runs */
    if (hr_flags_seen(fs, "tol")) mo.tol = o->tol;
    /* defaults as --help gives them: 100 multigrid cycles, 1000 CG iterations */
    mo.max_iters = hr_flags_seen(fs, "iters") ? o->iters : a->solver == GRID_MG ? 100 : 1000;
    mo.threads = o->backend == HR_BACKEND_CPU_SEQ ? 1 : o->threads;
    mo.backend = gpu ? HR_MG_BACKEND_GPU : HR_MG_BACKEND_CPU;
    mo.device = gpu ? o->device : 0;
    mo.tuning = o->tuning;
    mo.flush_subnormals = o->flush_subnormals;
    const int monitor = !a->quiet && !(hr_flags_seen(fs, "monitor") && o->monitor_every == 0);
    if (monitor) mo.monitor = a->solver == GRID_MG ? mg_monitor : cg_monitor;
    if (mo.max_iters < 1) return hr_cli_usage_error(CMD, "--iters", "--method %s needs at least 1", what);

    char why[240], msg[280];
    {
        hr_mg_options vo = mo; /* the file values come later */
        static const double one = 0.0;
        if (vo.rhs == HR_RHS_ARRAY) vo.rhs_values = &one;
        if (hr_mg_options_validate(&vo, why, sizeof why) != HR_OK) {
            hr_grid_flagify(fs, why, msg, sizeof msg);
            return hr_cli_usage_error(CMD, NULL, "%s", msg);
        }
    }
    const int nx = mo.nx ? mo.nx : mo.n, ny = mo.ny ? mo.ny : mo.n,
              nz = a->dim == 3 ? (mo.nz ? mo.nz : mo.n) : 1;
    a->nx = nx;
    a->ny = ny;
    a->nz = nz;
    const size_t count = (size_t)nx * (size_t)ny * (size_t)nz;
    hr_atomic out, jout;
    int out_open = 0, json_open = 0, rc = 0;
    double *rhs = NULL;
    hr_mg *m = NULL;
    if (a->output && (rc = hr_cli_open_output(CMD, "--output", a->output, &out)) != 0) return rc;
    out_open = a->output != NULL;
    if (a->json && strcmp(a->json, "-") != 0) {
        if ((rc = hr_cli_open_output(CMD, "--json", a->json, &jout)) != 0) goto done;
        json_open = 1;
    }
    if (mo.rhs == HR_RHS_ARRAY) {
        /* the file holds values of the solve's precision: double unless --precision single */
        const hr_precision fprec = mo.precision == HR_MG_PREC_SINGLE ? HR_PREC_SINGLE : HR_PREC_DOUBLE;
        const double t_read = hr_now();
        device_prep prep = {mo.device, 0.0};
        pthread_t th;
        const int prepping = gpu && pthread_create(&th, NULL, prepare_device, &prep) == 0;
        rc = hr_grid_read_values("--rhs", a->rhs_file, count, fprec, &rhs);
        mg_read_rhs_s = hr_now() - t_read;
        if (prepping) {
            pthread_join(th, NULL);
            mg_device_init_s = prep.seconds;
        }
        if (rc != 0) goto done;
        if (fprec == HR_PREC_SINGLE && (rc = hr_grid_check_single_values(a, rhs, count)) != 0) goto done;
        mo.rhs_values = rhs;
    }
    hr_grid_absolute = hr_grid_b_is_zero(o, rhs, count);
    hr_status st = hr_mg_create(&mo, &m);
    mg_watched = m;
    free(rhs);
    rhs = NULL;
    if (st != HR_OK) {
        if (st == HR_ERR_NO_MEMORY) {
            const char *why = hr_mg_last_error();
            if (*why) { /* the estimate's figures, "n: ..." as "--n: ..." */
                hr_grid_flagify(fs, why, msg, sizeof msg);
                rc = hr_cli_usage_error(CMD, NULL, "%s", msg);
            } else {
                rc = hr_cli_usage_error(CMD, "--n", "the %s do not fit in memory",
                                        a->solver == GRID_MG || a->pc == 1 ? "multigrid levels"
                                                                           : "CG vectors");
            }
        } else if (st == HR_ERR_DEVICE) {
            fprintf(stderr, "hetrelax %s: %s\n", CMD, hr_mg_last_error());
            rc = HR_EXIT_FAIL;
        } else {
            hr_grid_flagify(fs, hr_mg_last_error(), msg, sizeof msg);
            rc = hr_cli_usage_error(CMD, NULL, "%s", msg);
        }
        goto done;
    }
    const char *rhs_name = o->rhs == HR_RHS_SPIKE          ? "spike"
                           : o->rhs == HR_RHS_MANUFACTURED ? "manufactured"
                           : o->rhs == HR_RHS_ZERO         ? "zero"
                                                           : a->rhs_file;
    if (!a->quiet) {
        fprintf(hr_grid_out, "hetrelax %s: ", CMD);
        if (a->dim == 3)
            fprintf(hr_grid_out, "%d x %d x %d", nx, ny, nz);
        else
            fprintf(hr_grid_out, "%d x %d", nx, ny);
        fprintf(hr_grid_out, " interior points, rhs %s, %s%s precision\n", rhs_name, gpu ? "GPU, " : "",
                a->mixed                            ? "mixed"
                : mo.precision == HR_MG_PREC_SINGLE ? "single"
                                                    : "double");
        if (a->solver == GRID_MG || a->pc == 1)
            fprintf(hr_grid_out, "%s%s: %s(%d,%d) cycles, %s smoother, %s levels, tol %g, at most %ld\n",
                    a->solver == GRID_MG ? "multigrid" : "CG",
                    a->solver == GRID_MG ? "" : " preconditioned by multigrid", hr_mg_cycle_name(mo.cycle),
                    mo.pre, mo.post, hr_mg_smoother_name(mo.smoother), mo.levels ? "given" : "all", mo.tol,
                    mo.max_iters);
        else
            fprintf(hr_grid_out, "CG (matrix-free, no preconditioner): tol %g, at most %ld iterations\n",
                    mo.tol, mo.max_iters);
    }
    hr_mg_result r;
    st = hr_mg_solve(m, &r);
    if (st != HR_OK && st != HR_ERR_DIVERGED) {
        fprintf(stderr, "hetrelax %s: %s%s%s\n", CMD, hr_status_string(st), gpu ? ": " : "",
                gpu ? hr_mg_last_error() : "");
        rc = HR_EXIT_FAIL;
        goto done;
    }
    const char *iters_name = a->solver == GRID_MG ? "cycles" : "iterations";
    const int diverged = r.reason == HR_REASON_DIVERGED || r.reason == HR_REASON_NAN;
    rc = hr_cli_run_status(r.reason, mo.tol);
    char outcome[64];
    if (rc == HR_EXIT_NOT_CONVERGED)
        snprintf(outcome, sizeof outcome, "NOT converged: --tol %g not reached", mo.tol);
    else
        snprintf(outcome, sizeof outcome, "%s", hr_reason_string(r.reason));
    fprintf(hr_grid_out, "summary   %ld %s (%s) in %.4f s: %.3f ns per unknown (setup %.4f s", r.iterations,
            iters_name, outcome, r.time_s, r.ns_per_unknown, r.time_setup_s);
    if (mo.method == HR_MG_METHOD_MG || mo.pc == HR_MG_PC_MG) fprintf(hr_grid_out, ", %d levels", r.levels);
    fprintf(hr_grid_out, ")\n          convergence factor %.4f (last %.4f), %s %.6e", r.convergence_factor,
            r.last_factor, hr_cli_residual_label(hr_grid_absolute), r.relative_residual);
    if (isfinite(r.max_error)) fprintf(hr_grid_out, ", max error vs exact %.6e", r.max_error);
    fprintf(hr_grid_out, "\n");
    hr_grid_print_flush(a, mo.flush_subnormals && !gpu, gpu ? "gpu" : "cpu");
    if (diverged)
        fprintf(stderr, "hetrelax %s: the iteration diverged (%s)%s\n", CMD, hr_reason_string(r.reason),
                (out_open || json_open) && !a->keep_diverged
                    ? ": no output written (--keep-diverged keeps the diverged state)"
                    : "");
    else if (rc == HR_EXIT_NOT_CONVERGED) {
        char advice[128];
        hr_cli_not_converged(CMD, r.iterations, iters_name, r.relative_residual, hr_grid_absolute, mo.tol,
                             hr_cli_not_converged_advice("--iters", mo.precision == HR_MG_PREC_SINGLE, mo.tol,
                                                         "--precision mixed", advice, sizeof advice));
    }
    field_src fsrc = {
        a, m, count, nx, ny, nz, mo.precision == HR_MG_PREC_SINGLE ? HR_PREC_SINGLE : HR_PREC_DOUBLE};
    json_object *j = a->json ? mg_json(a, &mo, &r, rhs_name) : NULL;
    if (diverged) {
        /* nothing replaced; the diverged state only where it was asked for (a name that says so) */
        if (out_open) hr_atomic_abort(&out);
        if (json_open) hr_atomic_abort(&jout);
        out_open = json_open = 0;
        if (a->keep_diverged &&
            hr_cli_keep_diverged(CMD, a->output, write_field, &fsrc, a->json, j, a->quiet, hr_grid_out) != 0)
            rc = HR_EXIT_FAIL;
        if (j && strcmp(a->json, "-") == 0) hr_cli_write_json_to(CMD, NULL, j);
        json_object_put(j);
        goto done;
    }
    if (out_open) {
        out_open = 0;
        if (hr_cli_close_output(CMD, "--output", &out, write_field(out.tmp, &fsrc)) != 0)
            rc = HR_EXIT_FAIL;
        else if (!a->quiet)
            fprintf(hr_grid_out, "wrote     %s\n", a->output);
    }
    if (j) {
        int jr = hr_cli_write_json_to(CMD, json_open ? &jout : NULL, j);
        json_open = 0;
        json_object_put(j);
        if (jr && rc != HR_EXIT_FAIL) rc = jr;
    }
done:
    hr_mg_free(m);
    free(rhs);
    if (out_open) hr_atomic_abort(&out);
    if (json_open) hr_atomic_abort(&jout);
    return rc;
}
