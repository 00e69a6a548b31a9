/*
 * hetrelax poisson2d and poisson3d: Jacobi relaxation for -Laplace(u) = f on a 2-D
 * rectangle or a 3-D box. One implementation for both (hr_grid_main); the commands
 * differ in their dimension, their defaults and the --nz flag.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cli.h"
#include "cli_flags.h"
#include "field_io.h"

/* The command's name for error lines: poisson2d or poisson3d. */
static const char *CMD = "poisson2d";

/* Human-readable output; stderr when the JSON goes to stdout. */
static FILE *hout;

typedef struct grid_args {
    hr_options o;
    int dim;
    int nx, ny, nz; /* resolved extents */
    const char *json, *output, *rhs_file, *init_file, *checkpoint, *restart;
    long checkpoint_every;
    int measure_bw, quiet, verify, list;
    double ref_gbps;
} grid_args;

/* ------------------------------------------------------------------ flags */

static int parse_rhs(const char *cmd, const hr_flag *f, const char *arg)
{
    (void)cmd;
    grid_args *a = f->target;
    a->rhs_file = NULL;
    if (strcmp(arg, "spike") == 0) {
        a->o.rhs = HR_RHS_SPIKE;
    } else if (strcmp(arg, "manufactured") == 0) {
        a->o.rhs = HR_RHS_MANUFACTURED;
    } else if (strcmp(arg, "zero") == 0) {
        a->o.rhs = HR_RHS_ZERO;
    } else {
        a->o.rhs = HR_RHS_ARRAY;
        a->rhs_file = arg;
    }
    return 0;
}

static int parse_init(const char *cmd, const hr_flag *f, const char *arg)
{
    (void)cmd;
    grid_args *a = f->target;
    a->init_file = NULL;
    if (strcmp(arg, "zero") == 0) {
        a->o.init = HR_INIT_ZERO;
    } else if (strcmp(arg, "sine") == 0) {
        a->o.init = HR_INIT_SINE;
    } else {
        a->o.init = HR_INIT_ARRAY;
        a->init_file = arg;
    }
    return 0;
}

/* The grid problem, shared by poisson2d and poisson3d (which adds --nz). */
static void problem_flags(hr_flagset *fs, grid_args *a)
{
    static const char *const precs[] = {"single", "double", NULL};
    const int d3 = a->dim == 3;
    hr_flags_group(fs, "problem");
    hr_flags_add(fs, hr_flag_int("n", &a->o.n, 1, 1000000, "N",
                                 d3 ? "interior points per axis (default 256 on CPUs, 512 on a GPU)"
                                    : "interior points per side (default 4096 on CPUs, 16384 on a GPU)"));
    hr_flags_add(fs, hr_flag_int("nx", &a->o.nx, 1, 1000000, "X", "interior points along x (default N)"));
    hr_flags_add(fs, hr_flag_int("ny", &a->o.ny, 1, 1000000, "Y", "interior points along y (default N)"));
    if (d3)
        hr_flags_add(fs, hr_flag_int("nz", &a->o.nz, 1, 1000000, "Z", "interior points along z (default N)"));
    hr_flags_add(
        fs,
        hr_flag_custom("rhs", a, NULL, parse_rhs, "spike|manufactured|zero|FILE",
                       d3 ? "spike: h^2 f = 1 at the centre point (default);\n"
                            "manufactured: f = 3 pi^2 sin(pi x) sin(pi y) sin(pi z), exact solution known;\n"
                            "zero: f = 0; FILE: X*Y*Z raw native floats of the run's precision,\n"
                            "x fastest (a file or a pipe)"
                          : "spike: h^2 f = 1 at the centre point (default);\n"
                            "manufactured: f = 2 pi^2 sin(pi x) sin(pi y), exact solution known;\n"
                            "zero: f = 0; FILE: N*N raw native floats of the run's precision,\n"
                            "row-major (a file or a pipe)"));
    hr_flags_add(fs, hr_flag_custom("init", a, NULL, parse_init, "zero|sine|FILE",
                                    "initial interior values (default zero); sine: the product of\n"
                                    "sin(pi i / (n + 1)) per axis, an eigenvector of the iteration (with\n"
                                    "--rhs zero the error against lambda^T u0 is reported); FILE as --rhs"));
    hr_flags_add(fs, hr_flag_double("boundary", &a->o.boundary, -1e300, 1e300, "V",
                                    "Dirichlet boundary value (default 0)"));
    hr_flags_add(fs, hr_flag_choice("precision", HR_ENUM_TARGET(&a->o.precision), precs, "(default single)"));
    hr_flags_add(fs, hr_flag_double("omega", &a->o.omega, 1e-300, 2.0, "W",
                                    "weighted Jacobi u' = (1 - W) u + W jacobi(u), 0 < W < 2 (default 1)"));
}

static void build_flags(hr_flagset *fs, grid_args *a)
{
    static const char *const layouts[] = {"flat", "blocks", NULL};
    static const char *const hostmem[] = {"pinned", "pageable", NULL};
    hr_options *o = &a->o;
    if (a->dim == 3)
        hr_flags_init(
            fs, CMD, "poisson3d [options]",
            "Solves -Laplace(u) = f on a box with zero (or --boundary) Dirichlet values:\n"
            "7-point finite differences on an (X+2)x(Y+2)x(Z+2) grid, h = 1/(X+1) on every\n"
            "axis, and Jacobi sweeps u' = (sum of the 6 neighbours + h^2 f) / 6.\n",
            "Byte model: each sweep reads u once and writes u' once (+ reads f when f is an array):\n"
            "8 (12) bytes per point in single, 16 (24) in double. GFLOP/s count 8 flops per point\n"
            "(+3 with --omega). Outputs: .raw, .vti (3-D image data), .png (the middle z-plane).\n"
            "Outputs are written to a temporary file and renamed into place: a failed or\n"
            "interrupted run leaves the previous file as it was.\n");
    else
        hr_flags_init(
            fs, CMD, "poisson2d [options]",
            "Solves -Laplace(u) = f on the unit square with zero (or --boundary) Dirichlet\n"
            "values: 5-point finite differences on an (N+2)x(N+2) grid, h = 1/(N+1), and\n"
            "Jacobi sweeps u' = (u_N + u_S + u_W + u_E + h^2 f) / 4.\n",
            "Byte model: each sweep reads u once and writes u' once (+ reads f when f is an array):\n"
            "8 (12) bytes per point in single, 16 (24) in double. GFLOP/s count 5 flops per point\n"
            "(+3 with --omega).\n"
            "Outputs are written to a temporary file and renamed into place: a failed or\n"
            "interrupted run leaves the previous file as it was.\n");
    problem_flags(fs, a);
    hr_flags_group(fs, "iteration");
    hr_flags_iteration(fs, &o->iters, &o->tol, &o->check_every, &o->monitor_every, &o->divtol);
    hr_flags_set_help(fs, "divtol", "diverged when the checked relative residual exceeds X (default 1e3)");
    hr_flags_group(fs, "placement");
    hr_flags_placement(fs, &o->backend, &o->kernel, &o->threads, &o->thread_rows, &o->thread_cols, &o->bind,
                       &o->device);
    hr_flags_add(fs, hr_flag_choice("layout", HR_ENUM_TARGET(&o->layout), layouts,
                                    "shared grid, or per-thread ghost-cell tiles (NUMA variant)"));
    hr_flags_add(fs, hr_flag_int("alpha", &o->alpha, 1, 1000000, "A",
                                 "async factor / sweeps per pass for kernels that use it"));
    hr_flags_add(fs, hr_flag_choice("host-memory", HR_ENUM_TARGET(&o->host_memory), hostmem,
                                    "GPU host buffers (default pinned)"));
    hr_flags_group(fs, "output");
    hr_flags_output(fs, &a->json, &a->output, &a->quiet, &a->ref_gbps, &a->measure_bw);
    hr_flags_set_help(fs, "output",
                      a->dim == 3 ? "interior solution: .raw (native floats, x fastest), .png "
                                    "(middle\nz-plane), .vti (VTK image data)"
                                  : "interior solution: .raw (native floats), .png (picture), .vti (VTK)");
    hr_flags_add(
        fs, hr_flag_switch("verify", &a->verify, 1, "also run cpu-seq and require a bitwise-equal solution"));
    hr_flags_add(fs, hr_flag_switch("list-kernels", &a->list, 1, "list backends and kernels"));
    hr_flags_group(fs, "checkpoints");
    hr_flags_add(fs, hr_flag_string("checkpoint", &a->checkpoint, "FILE",
                                    "write the state to FILE every --checkpoint-every sweeps and on\n"
                                    "SIGINT/SIGTERM (then exit with status 128 + signal)"));
    hr_flags_add(fs, hr_flag_long("checkpoint-every", &a->checkpoint_every, 1, 1000000000L, "K",
                                  "sweeps between checkpoints (default --iters / 10)"));
    hr_flags_add(fs, hr_flag_string("restart", &a->restart, "FILE",
                                    "continue from a checkpoint; --iters counts from the original start,\n"
                                    "so the result is bitwise that of the uninterrupted run"));
}

/* ------------------------------------------------------------ small helpers */

static int list_kernels(int dim)
{
    printf("%-12s %-14s %s\n", "backend", "kernel", "summary");
    const unsigned need = dim == 3 ? HR_CAP_3D : HR_CAP_2D;
    for (int i = 0; i < hr_kernel_count(); i++) {
        hr_kernel_info k;
        if (hr_kernel_info_at(i, &k) != HR_OK || !(k.caps & need)) continue;
        printf("%-12s %-14s %s%s\n", hr_backend_name(k.backend), k.name, k.summary,
               (k.caps & HR_CAP_DETERMINISTIC) ? "" : " [non-deterministic]");
    }
    return HR_EXIT_OK;
}

/* The kernel `name` (NULL: the default) of backend b in dim dimensions, if there is one. */
static int find_kernel(hr_backend b, const char *name, int dim, hr_kernel_info *out)
{
    if (!name) name = hr_kernel_default(b, dim);
    if (!name) return 0;
    const unsigned need = dim == 3 ? HR_CAP_3D : HR_CAP_2D;
    for (int i = 0; i < hr_kernel_count(); i++)
        if (hr_kernel_info_at(i, out) == HR_OK && out->backend == b && (out->caps & need) &&
            strcmp(out->name, name) == 0)
            return 1;
    return 0;
}

/* The library names option fields ("alpha: ...", "thread_rows: ..."); the user typed
 * flags: "--alpha: ...". */
static void flagify(hr_flagset *fs, const char *why, char *out, size_t size)
{
    static const char *const alias[][2] = {{"check_every", "check"},       {"monitor_every", "monitor"},
                                           {"thread_rows", "thread-grid"}, {"thread_cols", "thread-grid"},
                                           {"host_memory", "host-memory"}, {"rhs_values", "rhs"}};
    const char *colon = strchr(why, ':');
    char field[48];
    size_t len = colon ? (size_t)(colon - why) : 0;
    if (!colon || len == 0 || len >= sizeof field) {
        snprintf(out, size, "%s", why);
        return;
    }
    memcpy(field, why, len);
    field[len] = '\0';
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(field, alias[i][0]) == 0) snprintf(field, sizeof field, "%s", alias[i][1]);
    if (hr_flags_find(fs, field))
        snprintf(out, size, "--%s%s", field, colon);
    else
        snprintf(out, size, "%s", why);
}

static int monitor_print(long it, double res, void *user)
{
    (void)user;
    fprintf(hout, "  sweep %10ld   relative residual %.6e\n", it, res);
    fflush(hout);
    return 0;
}

static double measure_reference(const grid_args *a, hr_backend b, const char **what)
{
    if (b == HR_BACKEND_GPU) {
        double bw = 0.0;
        *what = "device copy";
        return hr_measure_device_bandwidth(a->o.device, 0, 5, &bw) == HR_OK ? bw : 0.0;
    }
    hr_bandwidth bw;
    int threads = b == HR_BACKEND_CPU_SEQ ? 1 : a->o.threads;
    if (a->o.thread_rows > 0) threads = a->o.thread_rows * a->o.thread_cols;
    *what = "host STREAM copy";
    return hr_measure_host_bandwidth(threads, 0, 5, &bw) == HR_OK ? bw.copy_gbps : 0.0;
}

static size_t esize_of(hr_precision p)
{
    return p == HR_PREC_DOUBLE ? 8 : 4;
}

/* ------------------------------------------------------- checks before work */

/* The library refuses grids that do not fit; the command's own buffers (the solution
 * copy for --output and --verify, the --rhs values, the --verify reference run, the
 * checkpoint buffer) must fit beside them, or the process is killed without a word. */
static int check_memory(const grid_args *a)
{
    const hr_options *o = &a->o;
    const double pts = (double)a->nx * (double)a->ny * (double)a->nz, es = (double)esize_of(o->precision);
    /* the library's grids: two padded grids (rows rounded up to 128 bytes), a third for
     * an array rhs */
    const double planes = a->dim == 3 ? a->nz + 2.0 : 1.0;
    const double grid = (a->ny + 2.0) * (a->nx + 2.0 + 64.0) * planes * es;
    const double lib = grid * (o->rhs == HR_RHS_ARRAY ? 3.0 : 2.0);
    const double rhs =
        (o->rhs == HR_RHS_ARRAY ? pts * 8.0 : 0.0) + (o->init == HR_INIT_ARRAY ? pts * 8.0 : 0.0);
    const double sol = (a->output || a->verify) ? pts * 8.0 : 0.0;
    const double ckpt = (a->checkpoint || a->restart) ? pts * es : 0.0;
    const double verify = a->verify ? lib + pts * 8.0 : 0.0;
    /* peaks: creating (rhs values alive), running (+ solution copy, checkpoint buffer),
     * verifying (the run's solver is freed by then) */
    double need = lib + rhs + ckpt;
    if (lib + sol + ckpt > need) need = lib + sol + ckpt;
    if (sol + verify + rhs > need) need = sol + verify + rhs;
    const double avail = (double)hr_cli_available_bytes();
    if (need <= avail) return 0;
    char b1[32], b2[32], b3[32], parts[200] = "";
    size_t len = 0;
    len += (size_t)snprintf(parts + len, sizeof parts - len, "grids %s", hr_cli_bytes(lib, b1, sizeof b1));
    if (sol > 0)
        len += (size_t)snprintf(parts + len, sizeof parts - len, " + solution copy for %s %s",
                                a->output ? "--output" : "--verify", hr_cli_bytes(sol, b1, sizeof b1));
    if (verify > 0)
        len += (size_t)snprintf(parts + len, sizeof parts - len, " + --verify reference %s",
                                hr_cli_bytes(verify, b1, sizeof b1));
    if (rhs > 0)
        len += (size_t)snprintf(parts + len, sizeof parts - len, " + --rhs/--init values %s",
                                hr_cli_bytes(rhs, b1, sizeof b1));
    if (ckpt > 0)
        snprintf(parts + len, sizeof parts - len, " + checkpoint buffer %s",
                 hr_cli_bytes(ckpt, b1, sizeof b1));
    char ext[64];
    if (a->dim == 3)
        snprintf(ext, sizeof ext, "%dx%dx%d", a->nx, a->ny, a->nz);
    else if (a->nx == a->ny)
        snprintf(ext, sizeof ext, "%d", a->nx);
    else
        snprintf(ext, sizeof ext, "%dx%d", a->nx, a->ny);
    return hr_cli_usage_error(CMD, o->n == a->nx && o->n == a->ny ? "--n" : "--nx",
                              "%s: the run needs %s (%s), %s available", ext,
                              hr_cli_bytes(need, b2, sizeof b2), parts, hr_cli_bytes(avail, b3, sizeof b3));
}

/* Values the run's precision cannot hold would turn into inf in the grids. */
static int check_precision_fit(const grid_args *a)
{
    if (a->o.precision == HR_PREC_SINGLE && fabs(a->o.boundary) > FLT_MAX)
        return hr_cli_usage_error(CMD, "--boundary",
                                  "%g does not fit single precision (|V| <= %g); use --precision double",
                                  a->o.boundary, (double)FLT_MAX);
    return 0;
}

/* ------------------------------------------------------------ verification */

/* Runs cpu-seq for the same number of sweeps and compares the solutions bitwise. */
static int verify_against_seq(const grid_args *a, long sweeps, const double *sol)
{
    hr_options ro = a->o;
    ro.backend = HR_BACKEND_CPU_SEQ;
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
        fprintf(stderr, "hetrelax %s: --verify: reference run failed: %s\n", CMD, hr_status_string(st));
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
    fprintf(hout,
            "verify    %s against cpu-seq after %ld sweeps: %zu of %zu points differ (max |diff| %.3e)\n",
            diff ? "MISMATCH" : "bitwise equal", sweeps, diff, count, maxd);
    return diff ? HR_EXIT_FAIL : HR_EXIT_OK;
}

/* ----------------------------------------------------------------- report */

static json_object *result_json(const grid_args *a, const hr_result *r, const char *rhs_name,
                                const hr_config *cfg, long restarted_from)
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
    if (a->o.omega != 1.0) json_object_object_add(j, "omega", json_object_new_double(a->o.omega));
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
    json_object_object_add(j, "commit", json_object_new_string(hr_cli_commit()));
    json_object_object_add(j, "date", json_object_new_string(date));
    return j;
}

static int usage_status(hr_flagset *fs, hr_status st, const char *err)
{
    char msg[320];
    flagify(fs, err, msg, sizeof msg);
    if (st == HR_ERR_INVALID_ARG || st == HR_ERR_UNSUPPORTED || st == HR_ERR_NO_DEVICE) {
        hr_cli_usage_error(CMD, NULL, "%s%s%s", hr_status_string(st), *msg ? ": " : "", msg);
        return HR_EXIT_USAGE;
    }
    fprintf(stderr, "hetrelax %s: %s%s%s\n", CMD, hr_status_string(st), *msg ? ": " : "", msg);
    return HR_EXIT_FAIL;
}

/* --------------------------------------------------- checkpointed solving */

typedef struct chunk_run {
    long done0; /* sweeps in the state the run started from */
    long done;  /* sweeps done so far, counted from the original start */
    long chunk; /* sweeps per hr_solver_run */
    void *buf;  /* the interior, for checkpoints */
    size_t count;
    hr_ckpt_info info;
} chunk_run;

static long gcd(long x, long y)
{
    while (y) {
        long t = x % y;
        x = y;
        y = t;
    }
    return x;
}

static int crossed(long before, long after, long every)
{
    return every > 0 && after / every > before / every;
}

static int write_checkpoint(const grid_args *a, hr_solver *s, chunk_run *c)
{
    hr_status st = hr_solver_solution(s, a->o.precision, c->buf, c->count);
    int err = st == HR_OK ? 0 : EIO;
    c->info.sweeps = c->done;
    if (!err) err = hr_ckpt_write(a->checkpoint, &c->info, c->buf, c->count);
    if (err) {
        fprintf(stderr, "hetrelax %s: --checkpoint: cannot write '%s': %s\n", CMD, a->checkpoint,
                strerror(err));
        return HR_EXIT_FAIL;
    }
    return 0;
}

/* Runs the remaining sweeps in chunks that end on every multiple of --checkpoint-every
 * (the solver keeps its state between hr_solver_run calls). The library runs plain
 * sweeps (its options have tol = 0 and no monitor); residual checks, the monitor and
 * stopping happen here at chunk ends, on the same sweep counts as an uninterrupted run
 * when --check and --monitor are multiples of the chunk. SIGINT/SIGTERM are deferred to
 * the next chunk end, which writes a last checkpoint. */
static int run_chunks(const grid_args *a, hr_solver *s, chunk_run *c, hr_result *total, int *sig)
{
    const hr_options *o = &a->o;
    hr_result r; /* as it stands when no sweep is left to run (a restart of a finished run) */
    memset(&r, 0, sizeof r);
    r.relative_residual = r.max_error = r.bandwidth_fraction = NAN;
    hr_config cfg;
    if (hr_solver_config(s, &cfg) == HR_OK) {
        snprintf(r.backend, sizeof r.backend, "%s", hr_backend_name(cfg.backend));
        snprintf(r.kernel, sizeof r.kernel, "%s", cfg.kernel);
        snprintf(r.device_name, sizeof r.device_name, "%s", cfg.device_name);
    }
    memset(total, 0, sizeof *total);
    hr_reason reason = HR_REASON_ITERS;
    hr_status st = HR_OK;
    double t_sweeps = 0.0, t_loop = 0.0;
    long syncs = 0;
    int rc = 0;
    *sig = 0;
    hr_cli_defer_signals(1);
    while (c->done < o->iters) {
        long before = c->done;
        st = hr_solver_run(s, &r);
        if (st != HR_OK && st != HR_ERR_DIVERGED) break;
        c->done += r.iterations;
        t_sweeps += r.time_sweeps_s;
        t_loop += r.time_s;
        syncs += r.global_syncs;
        const double rel = r.relative_residual;
        if (crossed(before, c->done, o->monitor_every) || c->done == o->iters)
            if (o->monitor_every > 0) monitor_print(c->done, rel, NULL);
        const double divtol = o->divtol > 0 ? o->divtol : 1e3; /* 0: the library's default */
        if (st == HR_ERR_DIVERGED ||
            ((crossed(before, c->done, o->check_every) || crossed(before, c->done, o->monitor_every)) &&
             (!isfinite(rel) || rel > divtol)))
            reason = isfinite(rel) ? HR_REASON_DIVERGED : HR_REASON_NAN;
        else if (o->tol > 0 && crossed(before, c->done, o->check_every) && rel < o->tol)
            reason = HR_REASON_CONVERGED;
        /* checkpoints: on the cadence, at a signal, and at the end (a later run with a
         * larger --iters continues from there); never a diverged state */
        const int last = c->done >= o->iters || reason != HR_REASON_ITERS;
        if (a->checkpoint && reason != HR_REASON_DIVERGED && reason != HR_REASON_NAN &&
            (crossed(before, c->done, a->checkpoint_every) || hr_cli_signal_pending() || last))
            if ((rc = write_checkpoint(a, s, c)) != 0) break;
        if (hr_cli_signal_pending()) {
            *sig = hr_cli_signal_pending();
            break;
        }
        if (reason != HR_REASON_ITERS) break;
    }
    hr_cli_defer_signals(0);
    if (!*sig && hr_cli_signal_pending()) *sig = hr_cli_signal_pending(); /* came after the last chunk */
    if (st != HR_OK && st != HR_ERR_DIVERGED) return -(int)st;
    if (rc) return rc;
    /* one result for the whole run: sweeps from the original start, rates over this
     * process's sweeps */
    const long mine = c->done - c->done0;
    *total = r;
    total->iterations = c->done;
    total->global_syncs = syncs + c->done0;
    total->time_s = t_loop;
    total->time_sweeps_s = t_sweeps;
    total->time_per_sweep_s = mine > 0 ? t_sweeps / (double)mine : 0.0;
    const double pts = (double)a->nx * (double)a->ny * (double)a->nz * (double)mine;
    total->gflops = t_sweeps > 0 ? r.flops_per_point * pts / t_sweeps * 1e-9 : 0.0;
    total->gbps = t_sweeps > 0 ? r.bytes_per_point * pts / t_sweeps * 1e-9 : 0.0;
    total->bandwidth_fraction = o->reference_gbps > 0 ? total->gbps / o->reference_gbps : NAN;
    if (reason == HR_REASON_ITERS && o->tol > 0 && r.relative_residual < o->tol) reason = HR_REASON_CONVERGED;
    total->reason = *sig ? HR_REASON_STOPPED : reason;
    return 0;
}

/* Reads a --restart file into c->buf after checking that it is this problem. */
static int load_restart(const grid_args *a, chunk_run *c)
{
    hr_ckpt_info in;
    int rc = hr_ckpt_read_info(CMD, "--restart", a->restart, &in);
    if (rc) return rc;
    const hr_options *o = &a->o;
    if (in.dim != a->dim || in.nx != a->nx || in.ny != a->ny || in.nz != a->nz ||
        in.precision != o->precision)
        return hr_cli_usage_error(CMD, "--restart",
                                  "'%s' holds a %ldx%ldx%ld %s grid, this run is %dx%dx%d %s", a->restart,
                                  in.nx, in.ny, in.nz, hr_precision_name(in.precision), a->nx, a->ny, a->nz,
                                  hr_precision_name(o->precision));
    if (in.rhs != (int)o->rhs || memcmp(&in.boundary, &o->boundary, sizeof in.boundary) != 0)
        return hr_cli_usage_error(CMD, "--restart", "'%s' was run with another --rhs or --boundary",
                                  a->restart);
    if (in.sweeps > o->iters)
        return hr_cli_usage_error(CMD, "--restart", "'%s' has %ld sweeps done, more than --iters %ld",
                                  a->restart, in.sweeps, o->iters);
    if ((rc = hr_ckpt_read_data(CMD, "--restart", a->restart, &in, c->buf, c->count)) != 0) return rc;
    c->done0 = c->done = in.sweeps;
    return 0;
}

/* -------------------------------------------------------------------- main */

typedef struct outputs {
    hr_atomic out, json;
    int out_open, json_open;
} outputs;

static void drop_outputs(outputs *w)
{
    if (w->out_open) hr_atomic_abort(&w->out);
    if (w->json_open) hr_atomic_abort(&w->json);
    w->out_open = w->json_open = 0;
}

/* Warnings for flags that the resolved run does not use. */
static void warn_unused(const hr_flagset *fs, const grid_args *a, hr_backend eb)
{
    const hr_options *o = &a->o;
    if (eb != HR_BACKEND_CPU_THREADS) {
        const char *const cpu_flags[] = {"threads", "thread-grid", "bind"};
        for (int i = 0; i < 3; i++)
            if (hr_flags_seen(fs, cpu_flags[i]))
                fprintf(stderr, "hetrelax %s: warning: --%s is ignored by backend %s\n", CMD, cpu_flags[i],
                        hr_backend_name(eb));
    }
    if (o->layout == HR_LAYOUT_BLOCKS) {
        if (eb != HR_BACKEND_CPU_THREADS)
            fprintf(stderr, "hetrelax %s: warning: --layout blocks is ignored by backend %s\n", CMD,
                    hr_backend_name(eb));
        else if (o->kernel && strcmp(o->kernel, "blocks") != 0)
            fprintf(
                stderr,
                "hetrelax %s: warning: --layout blocks is ignored by --kernel %s (it picks kernel 'blocks' "
                "when no --kernel is given)\n",
                CMD, o->kernel);
    }
    if (hr_flags_seen(fs, "host-memory") && eb != HR_BACKEND_GPU)
        fprintf(stderr, "hetrelax %s: warning: --host-memory is ignored by backend %s\n", CMD,
                hr_backend_name(eb));
    if (hr_flags_seen(fs, "device") && eb != HR_BACKEND_GPU)
        fprintf(stderr, "hetrelax %s: warning: --device is ignored by backend %s\n", CMD,
                hr_backend_name(eb));
}

/* Reads an --rhs or --init FILE of count values into a new buffer. */
static int read_values(const grid_args *a, const char *flag, const char *path, double **out)
{
    const size_t count = (size_t)a->nx * (size_t)a->ny * (size_t)a->nz;
    *out = malloc(count * sizeof **out);
    hr_status st = *out ? hr_field_read_raw_count(path, count, a->o.precision, *out) : HR_ERR_NO_MEMORY;
    if (st == HR_OK) return 0;
    int e = errno;
    free(*out);
    *out = NULL;
    if (st == HR_ERR_FORMAT)
        return hr_cli_usage_error(CMD, flag, "'%s': expected exactly %zu finite %s values (%zu bytes)", path,
                                  count, hr_precision_name(a->o.precision), count * esize_of(a->o.precision));
    if (st == HR_ERR_NO_MEMORY)
        return hr_cli_usage_error(CMD, flag, "%zu values do not fit in memory", count);
    return hr_cli_usage_error(CMD, flag, "cannot read '%s': %s (not %s or a readable file)", path,
                              strerror(e),
                              strcmp(flag, "--rhs") == 0 ? "spike, manufactured, zero" : "zero, sine");
}

/* Everything after parsing; a and fs are filled. */
static int grid_run(grid_args *a, hr_flagset *fs)
{
    hr_options *o = &a->o;
    int rc;
    if (a->list) return list_kernels(a->dim);
    hout = (a->json && strcmp(a->json, "-") == 0) ? stderr : stdout;
    if (a->output && hr_field_format_of(a->output) == HR_FIELD_UNKNOWN)
        return hr_cli_usage_error(CMD, "--output", "'%s': extension must be .raw, .png or .vti", a->output);
    if (o->thread_rows > 0 && o->threads > 0 && o->thread_rows * o->thread_cols != o->threads)
        return hr_cli_usage_error(CMD, "--thread-grid", "%dx%d does not match --threads %d", o->thread_rows,
                                  o->thread_cols, o->threads);
    if (o->layout == HR_LAYOUT_BLOCKS && o->backend != HR_BACKEND_CPU_THREADS &&
        o->backend != HR_BACKEND_AUTO)
        return hr_cli_usage_error(CMD, "--layout", "blocks needs --backend cpu-threads");
    if ((rc = check_precision_fit(a)) != 0) return rc;
    if (hr_flags_seen(fs, "checkpoint-every") && !a->checkpoint)
        return hr_cli_usage_error(CMD, "--checkpoint-every", "needs --checkpoint FILE");

    hr_sysinfo si;
    hr_sysinfo_get(&si);
    /* auto: the GPU when one is present, else all cores; for a dimension a backend has
     * no kernel for yet, the next one that has */
    hr_backend eb = o->backend;
    if (eb == HR_BACKEND_AUTO) {
        const hr_backend order[3] = {HR_BACKEND_GPU, HR_BACKEND_CPU_THREADS, HR_BACKEND_CPU_SEQ};
        eb = HR_BACKEND_CPU_THREADS;
        for (int i = 0; i < 3; i++)
            if ((order[i] != HR_BACKEND_GPU || (si.have_cuda && si.gpus > 0)) &&
                hr_kernel_default(order[i], a->dim)) {
                eb = order[i];
                break;
            }
    }
    if (!hr_flags_seen(fs, "n"))
        o->n = a->dim == 3 ? (eb == HR_BACKEND_GPU ? 512 : 256) : (eb == HR_BACKEND_GPU ? 16384 : 4096);
    a->nx = o->nx > 0 ? o->nx : o->n;
    a->ny = o->ny > 0 ? o->ny : o->n;
    a->nz = a->dim == 3 ? (o->nz > 0 ? o->nz : o->n) : 1;
    if (!hr_flags_seen(fs, "iters") && eb == HR_BACKEND_GPU) o->iters = 2000;
    if (!hr_flags_seen(fs, "monitor")) o->monitor_every = a->quiet ? 0 : (o->iters >= 10 ? o->iters / 10 : 0);
    if (a->checkpoint && !a->checkpoint_every) a->checkpoint_every = o->iters >= 10 ? o->iters / 10 : 1;
    const int have_gpu =
        hr_kernel_default(HR_BACKEND_GPU, 2) != NULL || hr_kernel_default(HR_BACKEND_GPU, 3) != NULL;
    if (eb == HR_BACKEND_GPU && !have_gpu)
        return hr_cli_usage_error(CMD, "--backend", "gpu: this build has no CUDA support");
    hr_kernel_info kd;
    const char *kname = o->kernel;
    if (!kname && eb == HR_BACKEND_CPU_THREADS && o->layout == HR_LAYOUT_BLOCKS && a->dim == 2)
        kname = "blocks";
    if (!find_kernel(eb, kname, a->dim, &kd)) {
        if (o->kernel)
            return hr_cli_usage_error(CMD, "--kernel",
                                      "backend %s has no %d-D kernel '%s' (see --list-kernels)",
                                      hr_backend_name(eb), a->dim, o->kernel);
        return hr_cli_usage_error(CMD, "--backend", "%s has no %d-D kernel in this build",
                                  hr_backend_name(eb), a->dim);
    }
    if (eb == HR_BACKEND_GPU && si.gpus <= o->device)
        return hr_cli_usage_error(CMD, si.gpus ? "--device" : "--backend",
                                  "gpu: no CUDA device %d (found %d)", o->device, si.gpus);
    if (a->output && hr_field_format_of(a->output) == HR_FIELD_PNG && !hr_field_png_available())
        return hr_cli_usage_error(CMD, "--output", "PNG output needs libpng, not compiled in");
    /* a kernel that is not bitwise cpu-seq would "fail" --verify on a correct run */
    if (a->verify && !(kd.caps & HR_CAP_DETERMINISTIC) &&
        !((kd.caps & HR_CAP_EXACT_AT_ALPHA1) && o->alpha == 1))
        return hr_cli_usage_error(CMD, "--verify",
                                  "kernel %s with --alpha %d is not bitwise equal to cpu-seq by design "
                                  "(docs/async.md); verify a deterministic kernel%s",
                                  kd.name, o->alpha,
                                  (kd.caps & HR_CAP_EXACT_AT_ALPHA1) ? ", or this one with --alpha 1" : "");
    if (o->omega != 1.0 && !(kd.caps & HR_CAP_OMEGA))
        return hr_cli_usage_error(CMD, "--omega", "kernel %s has no weighted update", kd.name);
    char why[200], msg[240];
    {
        hr_options vo = *o; /* validate all but the file values, which come later */
        if (vo.rhs == HR_RHS_ARRAY) vo.rhs = HR_RHS_SPIKE;
        if (vo.init == HR_INIT_ARRAY) vo.init = HR_INIT_ZERO;
        vo.dim = a->dim;
        if (hr_options_validate(&vo, why, sizeof why) != HR_OK) {
            flagify(fs, why, msg, sizeof msg);
            return hr_cli_usage_error(CMD, NULL, "%s", msg);
        }
    }
    if ((rc = check_memory(a)) != 0) return rc;

    const size_t count = (size_t)a->nx * (size_t)a->ny * (size_t)a->nz;
    chunk_run c;
    memset(&c, 0, sizeof c);
    c.count = count;
    c.done0 = -1;
    double *rhs = NULL, *init = NULL, *sol = NULL;
    hr_solver *s = NULL;
    /* every output is created (as its temporary file) before the work: a path that
     * cannot be written is refused now, with errno's reason */
    outputs w;
    memset(&w, 0, sizeof w);
    if (a->output) {
        if ((rc = hr_cli_open_output(CMD, "--output", a->output, &w.out)) != 0) return rc;
        w.out_open = 1;
    }
    if (a->json && strcmp(a->json, "-") != 0) {
        if ((rc = hr_cli_open_output(CMD, "--json", a->json, &w.json)) != 0) goto fail;
        w.json_open = 1;
    }
    if (a->checkpoint) {
        hr_atomic probe;
        if ((rc = hr_cli_open_output(CMD, "--checkpoint", a->checkpoint, &probe)) != 0) goto fail;
        hr_atomic_abort(&probe);
    }

    const int chunked = a->checkpoint || a->restart;
    if (chunked) {
        c.buf = malloc(count * esize_of(o->precision));
        if (!c.buf) {
            rc = hr_cli_usage_error(CMD, "--n", "no memory for the checkpoint buffer");
            goto fail;
        }
        c.done0 = 0;
        if (a->restart && (rc = load_restart(a, &c)) != 0) goto fail;
    }
    if (o->rhs == HR_RHS_ARRAY) {
        if ((rc = read_values(a, "--rhs", a->rhs_file, &rhs)) != 0) goto fail;
        o->rhs_values = rhs;
    }
    if (o->init == HR_INIT_ARRAY) {
        if ((rc = read_values(a, "--init", a->init_file, &init)) != 0) goto fail;
        o->init_values = init;
    }

    const char *bw_what = "given";
    if (a->measure_bw) a->ref_gbps = measure_reference(a, eb, &bw_what);
    o->reference_gbps = a->ref_gbps;
    const char *rhs_name = o->rhs == HR_RHS_SPIKE          ? "spike"
                           : o->rhs == HR_RHS_MANUFACTURED ? "manufactured"
                           : o->rhs == HR_RHS_ZERO         ? "zero"
                                                           : a->rhs_file;

    /* chunked runs: the library does plain sweeps, run_chunks does the rest */
    hr_options so = *o;
    so.dim = a->dim;
    so.backend = eb;
    if (chunked) {
        long chunk = o->iters > c.done0 ? o->iters - c.done0 : 1;
        if (a->checkpoint) chunk = gcd(a->checkpoint_every, chunk);
        if (c.done0 > 0) chunk = gcd(chunk, c.done0);
        /* a signal waits for the end of a run: keep runs near a second (estimated from the
         * bytes a sweep moves, ~10 GB/s on a CPU, ~1 TB/s on a GPU), in whole divisors of
         * the chunk so that every checkpoint falls on a run's end */
        const double sweep_s =
            2.0 * (double)count * (double)esize_of(o->precision) / (eb == HR_BACKEND_GPU ? 1e12 : 1e10);
        long cap = (long)(1.0 / sweep_s);
        if (cap < 1) cap = 1;
        long sub = chunk < cap ? chunk : cap;
        while (chunk % sub)
            sub--;
        chunk = sub;
        c.chunk = chunk;
        so.iters = chunk;
        so.tol = 0.0;
        so.monitor_every = 0;
        so.monitor = NULL;
    } else if (o->monitor_every > 0) {
        so.monitor = monitor_print;
    }
    hr_status st = hr_solver_create(&so, &s);
    if (!a->verify) { /* the library copied them; --verify's reference run needs them again */
        free(rhs);
        free(init);
        rhs = init = NULL;
        o->rhs_values = o->init_values = NULL;
    }
    if (st != HR_OK) {
        if (st == HR_ERR_NO_MEMORY)
            rc = hr_cli_usage_error(CMD, "--n", "the grids do not fit in memory");
        else
            rc = usage_status(fs, st, hr_last_error());
        goto fail;
    }
    hr_config cfg;
    hr_solver_config(s, &cfg);
    if (chunked) {
        c.info.dim = a->dim;
        c.info.nx = a->nx;
        c.info.ny = a->ny;
        c.info.nz = a->nz;
        c.info.precision = o->precision;
        c.info.rhs = (int)o->rhs;
        c.info.boundary = o->boundary;
        snprintf(c.info.kernel, sizeof c.info.kernel, "%s", cfg.kernel);
        if (a->restart && (st = hr_solver_set_solution(s, o->precision, c.buf, c.count, c.done0)) != HR_OK) {
            rc = hr_cli_usage_error(CMD, "--restart", "cannot load the state: %s", hr_status_string(st));
            goto fail;
        }
    }
    warn_unused(fs, a, cfg.backend);
    if (chunked) hr_cli_defer_signals(1); /* from here a signal means: checkpoint and stop */
    if (!a->quiet) {
        if (a->dim == 3)
            fprintf(hout, "hetrelax %s: %d x %d x %d interior points", CMD, a->nx, a->ny, a->nz);
        else if (a->nx == a->ny)
            fprintf(hout, "hetrelax %s: n=%d (%d x %d grid)", CMD, a->nx, a->nx + 2, a->nx + 2);
        else
            fprintf(hout, "hetrelax %s: %d x %d interior points", CMD, a->nx, a->ny);
        fprintf(hout, ", %s precision, rhs %s, backend %s, kernel %s\n", hr_precision_name(o->precision),
                rhs_name, hr_backend_name(cfg.backend), cfg.kernel);
        if (a->ref_gbps > 0) fprintf(hout, "reference bandwidth: %.2f GB/s (%s)\n", a->ref_gbps, bw_what);
        fprintf(hout, "sweeps: %ld%s", o->iters, o->tol > 0 ? " at most" : "");
        if (a->restart) fprintf(hout, ", continuing after %ld from '%s'", c.done0, a->restart);
        if (a->checkpoint)
            fprintf(hout, ", checkpoint every %ld to '%s'", a->checkpoint_every, a->checkpoint);
        fprintf(hout, "\n");
    }
    hr_result r;
    int sig = 0;
    if (chunked) {
        rc = run_chunks(a, s, &c, &r, &sig);
        if (rc > 0) goto fail;
        st = rc < 0                                                          ? (hr_status)-rc
             : (r.reason == HR_REASON_DIVERGED || r.reason == HR_REASON_NAN) ? HR_ERR_DIVERGED
                                                                             : HR_OK;
    } else {
        st = hr_solver_run(s, &r);
    }
    free(c.buf);
    c.buf = NULL;
    if (st != HR_OK && st != HR_ERR_DIVERGED) {
        rc = usage_status(fs, st, hr_solver_last_error(s));
        goto fail;
    }
    if (sig) {
        if (a->checkpoint)
            fprintf(stderr,
                    "hetrelax %s: interrupted by signal %d after %ld sweeps; state saved in '%s' "
                    "(continue with --restart %s)\n",
                    CMD, sig, c.done, a->checkpoint, a->checkpoint);
        else
            fprintf(stderr,
                    "hetrelax %s: interrupted by signal %d after %ld sweeps (no --checkpoint: state lost)\n",
                    CMD, sig, c.done);
        rc = 128 + sig;
        goto fail;
    }
    sol = (a->output || a->verify) ? malloc(count * sizeof *sol) : NULL;
    if ((a->output || a->verify) && (!sol || hr_solver_solution(s, HR_PREC_DOUBLE, sol, count) != HR_OK)) {
        fprintf(stderr, "hetrelax %s: out of memory copying the solution\n", CMD);
        rc = HR_EXIT_FAIL;
        goto fail;
    }
    hr_solver_free(s);
    s = NULL;

    fprintf(hout, "summary   %ld sweeps (%s) in %.4f s: %.3f ms/sweep\n", r.iterations,
            hr_reason_string(r.reason), r.time_s, 1e3 * r.time_per_sweep_s);
    fprintf(hout, "          %.2f GFLOP/s, %.2f GB/s (%.0f B/point)", r.gflops, r.gbps, r.bytes_per_point);
    if (isfinite(r.bandwidth_fraction))
        fprintf(hout, ", %.1f%% of %.2f GB/s", 100.0 * r.bandwidth_fraction, r.reference_gbps);
    if (r.global_syncs != r.iterations)
        fprintf(hout, "\n          Teff %ld sweeps in %ld global syncs (alpha %d, docs/async.md)",
                r.iterations, r.global_syncs, o->alpha);
    fprintf(hout, "\n          relative residual %.6e", r.relative_residual);
    if (isfinite(r.max_error)) fprintf(hout, ", max error vs exact %.6e", r.max_error);
    fprintf(hout, "\n");
    if (r.time_h2d_s > 0 || r.time_d2h_s > 0)
        fprintf(hout, "          setup %.4f s, host-to-device %.4f s, device-to-host %.4f s\n",
                r.time_setup_s, r.time_h2d_s, r.time_d2h_s);

    rc = st == HR_ERR_DIVERGED ? HR_EXIT_FAIL : HR_EXIT_OK;
    if (st == HR_ERR_DIVERGED)
        fprintf(stderr, "hetrelax %s: the iteration diverged (%s)\n", CMD, hr_reason_string(r.reason));
    if (a->verify && rc == HR_EXIT_OK) rc = verify_against_seq(a, r.iterations, sol);
    if (w.out_open) {
        hr_status ws = hr_field_write_as(hr_field_format_of(a->output), w.out.tmp, a->nx, a->ny, a->nz, sol,
                                         o->precision);
        int err = ws == HR_OK              ? 0
                  : ws == HR_ERR_IO        ? (errno ? errno : EIO)
                  : ws == HR_ERR_NO_MEMORY ? ENOMEM
                                           : EINVAL;
        w.out_open = 0;
        if (hr_cli_close_output(CMD, "--output", &w.out, err) != 0)
            rc = HR_EXIT_FAIL;
        else if (!a->quiet)
            fprintf(hout, "wrote     %s\n", a->output);
    }
    free(sol);
    free(rhs);
    free(init);
    sol = rhs = init = NULL;
    if (a->json) {
        json_object *j = result_json(a, &r, rhs_name, &cfg, c.done0 > 0 ? c.done0 : -1);
        int jr = hr_cli_write_json_to(CMD, w.json_open ? &w.json : NULL, j);
        w.json_open = 0;
        json_object_put(j);
        if (jr && rc == HR_EXIT_OK) rc = jr;
    }
    return rc;
fail:
    hr_solver_free(s);
    free(rhs);
    free(init);
    free(sol);
    free(c.buf);
    drop_outputs(&w);
    return rc;
}

int hr_grid_main(int argc, char **argv, int dim)
{
    static grid_args a; /* static: the flag table points into it */
    static hr_flagset fs;
    CMD = dim == 3 ? "poisson3d" : "poisson2d";
    memset(&a, 0, sizeof a);
    hr_options_default(&a.o);
    a.dim = dim;
    a.measure_bw = 1;
    build_flags(&fs, &a);
    int rc = hr_flags_parse(&fs, argc, argv);
    if (rc) return rc < 0 ? HR_EXIT_OK : rc;
    return grid_run(&a, &fs);
}

int hr_cmd_poisson2d(int argc, char **argv)
{
    return hr_grid_main(argc, argv, 2);
}
