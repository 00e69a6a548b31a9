/* hetrelax poisson2d: Jacobi relaxation for -Laplace(u) = f on the unit square. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "problem/field_io.h"
#include "solver/solver_internal.h"

#define CMD "poisson2d"

/* Human-readable output; stderr when the JSON goes to stdout. */
static FILE *hout;

typedef struct p2d_args {
    hr_options o;
    int n_given, iters_given, monitor_given;
    const char *json, *output, *rhs_file;
    int measure_bw, quiet, verify, list;
    double ref_gbps;
} p2d_args;

static void help(void)
{
    printf("usage: hetrelax poisson2d [options]\n\n"
           "Solves -Laplace(u) = f on the unit square with zero (or --boundary) Dirichlet\n"
           "values: 5-point finite differences on an (N+2)x(N+2) grid, h = 1/(N+1), and\n"
           "Jacobi sweeps u' = (u_N + u_S + u_W + u_E + h^2 f) / 4.\n\n"
           "problem\n"
           "  --n N                interior points per side (default 4096 on CPUs, 16384 on a GPU)\n"
           "  --rhs spike|manufactured|FILE\n"
           "                       spike: h^2 f = 1 at the centre point (default);\n"
           "                       manufactured: f = 2 pi^2 sin(pi x) sin(pi y), exact solution known;\n"
           "                       FILE: N*N raw native floats of the run's precision, row-major\n"
           "  --boundary V         Dirichlet boundary value (default 0)\n"
           "  --precision single|double   (default single)\n\n"
           "iteration\n"
           "  --iters T            sweeps (the maximum when --tol is given; default 1000)\n"
           "  --tol X              stop when ||b - A u|| / ||b|| < X, checked every --check sweeps\n"
           "  --check K            residual check interval (default 100)\n"
           "  --monitor K          print the residual every K sweeps (default T/10; 0: off)\n\n"
           "placement\n"
           "  --backend auto|cpu-seq|cpu-threads|gpu   (default auto: gpu if present, else cpu-threads)\n"
           "  --kernel NAME        kernel of the backend (see --list-kernels)\n"
           "  --threads P          CPU threads (default: one per core)\n"
           "  --thread-grid RxC    CPU thread grid (default: as square as P allows)\n"
           "  --bind none|core     bind threads to cores with hwloc (default none)\n"
           "  --layout flat|blocks shared grid, or per-thread ghost-cell tiles (NUMA variant)\n"
           "  --alpha A            async factor / sweeps per pass for kernels that use it\n"
           "  --device D           GPU ordinal (default 0)\n"
           "  --host-memory pinned|pageable   GPU host buffers (default pinned)\n\n"
           "output\n"
           "  --json FILE|-        write the run as a JSON object\n"
           "  --output FILE        interior solution: .raw (native floats), .png (picture), .vti (VTK)\n"
           "  --bandwidth GBPS     reference bandwidth for the fraction (default: measured now)\n"
           "  --no-bandwidth       do not measure the reference bandwidth\n"
           "  --verify             also run cpu-seq and require a bitwise-equal solution\n"
           "  --list-kernels       list backends and kernels\n"
           "  --quiet              summary only\n\n"
           "Byte model: each sweep reads u once and writes u' once (+ reads f when f is an array):\n"
           "8 (12) bytes per point in single, 16 (24) in double. GFLOP/s count 5 flops per point.\n");
}

static int list_kernels(void)
{
    printf("%-12s %-14s %s\n", "backend", "kernel", "summary");
    for (int i = 0; hr_kernel_at(i); i++) {
        const hr_kernel_desc *k = hr_kernel_at(i);
        printf("%-12s %-14s %s%s\n", hr_backend_name(k->backend), k->name, k->summary,
               (k->caps & HR_CAP_DETERMINISTIC) ? "" : " [non-deterministic]");
    }
    return HR_EXIT_OK;
}

static int parse_grid(const char *s, int *r, int *c)
{
    char tail;
    if (!s || sscanf(s, "%dx%d%c", r, c, &tail) != 2 || *r < 1 || *c < 1 || *r > 4096 || *c > 4096)
        return hr_cli_usage_error(CMD, "--thread-grid", "expected RxC with R, C >= 1, got '%s'", s ? s : "");
    return 0;
}

static int parse_args(int argc, char **argv, p2d_args *a)
{
    enum {
        O_N = 256,
        O_ITERS,
        O_TOL,
        O_CHECK,
        O_PREC,
        O_BACKEND,
        O_KERNEL,
        O_THREADS,
        O_GRID,
        O_BIND,
        O_LAYOUT,
        O_RHS,
        O_BOUNDARY,
        O_MONITOR,
        O_JSON,
        O_OUTPUT,
        O_ALPHA,
        O_DEVICE,
        O_HOSTMEM,
        O_BW,
        O_NOBW,
        O_VERIFY,
        O_LIST,
        O_QUIET,
        O_HELP
    };
    static const struct option opts[] = {{"n", required_argument, 0, O_N},
                                         {"iters", required_argument, 0, O_ITERS},
                                         {"tol", required_argument, 0, O_TOL},
                                         {"check", required_argument, 0, O_CHECK},
                                         {"precision", required_argument, 0, O_PREC},
                                         {"backend", required_argument, 0, O_BACKEND},
                                         {"kernel", required_argument, 0, O_KERNEL},
                                         {"threads", required_argument, 0, O_THREADS},
                                         {"thread-grid", required_argument, 0, O_GRID},
                                         {"bind", required_argument, 0, O_BIND},
                                         {"layout", required_argument, 0, O_LAYOUT},
                                         {"rhs", required_argument, 0, O_RHS},
                                         {"boundary", required_argument, 0, O_BOUNDARY},
                                         {"monitor", required_argument, 0, O_MONITOR},
                                         {"json", required_argument, 0, O_JSON},
                                         {"output", required_argument, 0, O_OUTPUT},
                                         {"alpha", required_argument, 0, O_ALPHA},
                                         {"device", required_argument, 0, O_DEVICE},
                                         {"host-memory", required_argument, 0, O_HOSTMEM},
                                         {"bandwidth", required_argument, 0, O_BW},
                                         {"no-bandwidth", no_argument, 0, O_NOBW},
                                         {"verify", no_argument, 0, O_VERIFY},
                                         {"list-kernels", no_argument, 0, O_LIST},
                                         {"quiet", no_argument, 0, O_QUIET},
                                         {"help", no_argument, 0, O_HELP},
                                         {0, 0, 0, 0}};
    static const char *const precs[] = {"single", "double", NULL};
    static const char *const backends[] = {"auto", "cpu-seq", "cpu-threads", "gpu", NULL};
    static const char *const binds[] = {"none", "core", NULL};
    static const char *const layouts[] = {"flat", "blocks", NULL};
    static const char *const hostmem[] = {"pinned", "pageable", NULL};
    hr_options *o = &a->o;
    int c, v;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case O_N:
            rc = hr_cli_int(CMD, "--n", optarg, 1, 1000000, &o->n);
            a->n_given = 1;
            break;
        case O_ITERS:
            rc = hr_cli_long(CMD, "--iters", optarg, 0, 1000000000L, &o->iters);
            a->iters_given = 1;
            break;
        case O_TOL: rc = hr_cli_double(CMD, "--tol", optarg, 0.0, 1.0, &o->tol); break;
        case O_CHECK: rc = hr_cli_long(CMD, "--check", optarg, 1, 1000000000L, &o->check_every); break;
        case O_PREC:
            rc = hr_cli_choice(CMD, "--precision", optarg, precs, &v);
            o->precision = (hr_precision)v;
            break;
        case O_BACKEND:
            rc = hr_cli_choice(CMD, "--backend", optarg, backends, &v);
            o->backend = (hr_backend)v;
            break;
        case O_KERNEL: o->kernel = optarg; break;
        case O_THREADS: rc = hr_cli_int(CMD, "--threads", optarg, 1, 4096, &o->threads); break;
        case O_GRID: rc = parse_grid(optarg, &o->thread_rows, &o->thread_cols); break;
        case O_BIND:
            rc = hr_cli_choice(CMD, "--bind", optarg, binds, &v);
            o->bind = (hr_bind)v;
            break;
        case O_LAYOUT:
            rc = hr_cli_choice(CMD, "--layout", optarg, layouts, &v);
            o->layout = (hr_layout)v;
            break;
        case O_RHS:
            if (strcmp(optarg, "spike") == 0)
                o->rhs = HR_RHS_SPIKE;
            else if (strcmp(optarg, "manufactured") == 0)
                o->rhs = HR_RHS_MANUFACTURED;
            else {
                o->rhs = HR_RHS_ARRAY;
                a->rhs_file = optarg;
            }
            break;
        case O_BOUNDARY: rc = hr_cli_double(CMD, "--boundary", optarg, -1e300, 1e300, &o->boundary); break;
        case O_MONITOR:
            rc = hr_cli_long(CMD, "--monitor", optarg, 0, 1000000000L, &o->monitor_every);
            a->monitor_given = 1;
            break;
        case O_JSON: a->json = optarg; break;
        case O_OUTPUT:
            a->output = optarg;
            if (hr_field_format_of(optarg) == HR_FIELD_UNKNOWN)
                rc =
                    hr_cli_usage_error(CMD, "--output", "'%s': extension must be .raw, .png or .vti", optarg);
            break;
        case O_ALPHA: rc = hr_cli_int(CMD, "--alpha", optarg, 1, 1000000, &o->alpha); break;
        case O_DEVICE: rc = hr_cli_int(CMD, "--device", optarg, 0, 1024, &o->device); break;
        case O_HOSTMEM:
            rc = hr_cli_choice(CMD, "--host-memory", optarg, hostmem, &v);
            o->host_memory = (hr_host_memory)v;
            break;
        case O_BW:
            rc = hr_cli_double(CMD, "--bandwidth", optarg, 1e-6, 1e9, &a->ref_gbps);
            a->measure_bw = 0;
            break;
        case O_NOBW: a->measure_bw = 0; break;
        case O_VERIFY: a->verify = 1; break;
        case O_LIST: a->list = 1; break;
        case O_QUIET: a->quiet = 1; break;
        case 'h':
        case O_HELP: help(); return -1;
        case ':': return hr_cli_usage_error(CMD, argv[optind - 1], "missing value");
        default: return hr_cli_usage_error(CMD, argv[optind - 1], "unknown option (see --help)");
        }
        if (rc) return rc;
    }
    if (optind < argc) return hr_cli_usage_error(CMD, NULL, "unexpected argument '%s'", argv[optind]);
    if (o->thread_rows > 0 && o->threads > 0 && o->thread_rows * o->thread_cols != o->threads)
        return hr_cli_usage_error(CMD, "--thread-grid", "%dx%d does not match --threads %d", o->thread_rows,
                                  o->thread_cols, o->threads);
    if (o->layout == HR_LAYOUT_BLOCKS && o->backend != HR_BACKEND_CPU_THREADS &&
        o->backend != HR_BACKEND_AUTO)
        return hr_cli_usage_error(CMD, "--layout", "blocks needs --backend cpu-threads");
    return 0;
}

static int monitor_print(long it, double res, void *user)
{
    (void)user;
    fprintf(hout, "  sweep %10ld   relative residual %.6e\n", it, res);
    fflush(hout);
    return 0;
}

/* The backend auto resolves to, for sizing the default problem. */
static hr_backend effective_backend(hr_backend b)
{
    if (b != HR_BACKEND_AUTO) return b;
    hr_sysinfo si;
    hr_sysinfo_get(&si);
    return (si.have_cuda && si.gpus > 0) ? HR_BACKEND_GPU : HR_BACKEND_CPU_THREADS;
}

static double measure_reference(const p2d_args *a, hr_backend b, const char **what)
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

/* Runs cpu-seq for the same number of sweeps and compares the solutions bitwise. */
static int verify_against_seq(const p2d_args *a, const hr_result *r, const double *sol)
{
    hr_options ro = a->o;
    ro.backend = HR_BACKEND_CPU_SEQ;
    ro.kernel = NULL;
    ro.layout = HR_LAYOUT_FLAT;
    ro.iters = r->iterations;
    ro.tol = 0.0;
    ro.monitor = NULL;
    ro.monitor_every = 0;
    hr_solver *ref = NULL;
    size_t count = (size_t)a->o.n * (size_t)a->o.n;
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
            diff ? "MISMATCH" : "bitwise equal", r->iterations, diff, count, maxd);
    return diff ? HR_EXIT_FAIL : HR_EXIT_OK;
}

static json_object *result_json(const p2d_args *a, const hr_result *r, const char *rhs_name)
{
    json_object *j = json_object_new_object();
    char date[32];
    hr_cli_date(date, sizeof date);
    json_object_object_add(j, "n", json_object_new_int(a->o.n));
    json_object_object_add(j, "precision", json_object_new_string(hr_precision_name(a->o.precision)));
    json_object_object_add(j, "backend", json_object_new_string(r->backend));
    json_object_object_add(j, "kernel", json_object_new_string(r->kernel));
    json_object_object_add(j, "device", json_object_new_string(r->device_name));
    json_object_object_add(j, "rhs", json_object_new_string(rhs_name));
    json_object_object_add(j, "threads", json_object_new_int(a->o.threads));
    json_object_object_add(j, "iterations", json_object_new_int64(r->iterations));
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
    if (a->o.rhs == HR_RHS_MANUFACTURED) json_object_object_add(j, "max_error", hr_json_number(r->max_error));
    json_object_object_add(j, "commit", json_object_new_string(hr_cli_commit()));
    json_object_object_add(j, "date", json_object_new_string(date));
    return j;
}

static int usage_status(hr_status st, const char *err)
{
    if (st == HR_ERR_INVALID_ARG || st == HR_ERR_UNSUPPORTED || st == HR_ERR_NO_DEVICE) {
        hr_cli_usage_error(CMD, NULL, "%s%s%s", hr_status_string(st), *err ? ": " : "", err);
        return HR_EXIT_USAGE;
    }
    fprintf(stderr, "hetrelax %s: %s%s%s\n", CMD, hr_status_string(st), *err ? ": " : "", err);
    return HR_EXIT_FAIL;
}

int hr_cmd_poisson2d(int argc, char **argv)
{
    p2d_args a;
    memset(&a, 0, sizeof a);
    hr_options_default(&a.o);
    a.measure_bw = 1;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? HR_EXIT_OK : rc;
    if (a.list) return list_kernels();
    hout = (a.json && strcmp(a.json, "-") == 0) ? stderr : stdout;

    hr_options *o = &a.o;
    const hr_backend eb = effective_backend(o->backend);
    if (!a.n_given) o->n = eb == HR_BACKEND_GPU ? 16384 : 4096;
    if (!a.iters_given && eb == HR_BACKEND_GPU) o->iters = 2000;
    if (!a.monitor_given) o->monitor_every = a.quiet ? 0 : (o->iters >= 10 ? o->iters / 10 : 0);
    if (o->monitor_every > 0) o->monitor = monitor_print;
    if (o->kernel && !hr_kernel_find(eb, o->kernel, 2)) {
        if (eb == HR_BACKEND_GPU && !hr_kernel_find(HR_BACKEND_GPU, NULL, 2))
            return hr_cli_usage_error(CMD, "--backend", "gpu: this build has no CUDA support");
        return hr_cli_usage_error(CMD, "--kernel", "backend %s has no kernel '%s' (see --list-kernels)",
                                  hr_backend_name(eb), o->kernel);
    }
    if (eb == HR_BACKEND_GPU && !hr_kernel_find(HR_BACKEND_GPU, NULL, 2))
        return hr_cli_usage_error(CMD, "--backend", "gpu: this build has no CUDA support");
    if (eb == HR_BACKEND_GPU) {
        hr_sysinfo si;
        hr_sysinfo_get(&si);
        if (si.gpus <= o->device)
            return hr_cli_usage_error(CMD, si.gpus ? "--device" : "--backend",
                                      "gpu: no CUDA device %d (found %d)", o->device, si.gpus);
    }
    if (a.output && hr_field_format_of(a.output) == HR_FIELD_PNG) {
        hr_sysinfo si;
        hr_sysinfo_get(&si);
        if (!si.have_png)
            return hr_cli_usage_error(CMD, "--output", "PNG output needs libpng, not compiled in");
    }

    double *rhs = NULL;
    if (o->rhs == HR_RHS_ARRAY) {
        rhs = malloc((size_t)o->n * (size_t)o->n * sizeof *rhs);
        if (!rhs) return hr_cli_usage_error(CMD, "--n", "%d: right-hand side does not fit in memory", o->n);
        hr_status st = hr_field_read_raw(a.rhs_file, o->n, o->precision, rhs);
        if (st != HR_OK) {
            free(rhs);
            if (st == HR_ERR_FORMAT)
                return hr_cli_usage_error(
                    CMD, "--rhs", "'%s': expected exactly %d x %d finite %s values (%zu bytes)", a.rhs_file,
                    o->n, o->n, hr_precision_name(o->precision),
                    (size_t)o->n * (size_t)o->n * (o->precision == HR_PREC_DOUBLE ? 8 : 4));
            return hr_cli_usage_error(
                CMD, "--rhs", "cannot read '%s' (not spike, manufactured or a readable file)", a.rhs_file);
        }
        o->rhs_values = rhs;
    }
    char why[160];
    if (hr_options_validate(o, why, sizeof why) != HR_OK) {
        free(rhs);
        return hr_cli_usage_error(CMD, NULL, "%s", why);
    }

    const char *bw_what = "given";
    if (a.measure_bw) a.ref_gbps = measure_reference(&a, eb, &bw_what);
    o->reference_gbps = a.ref_gbps;
    const char *rhs_name = o->rhs == HR_RHS_SPIKE          ? "spike"
                           : o->rhs == HR_RHS_MANUFACTURED ? "manufactured"
                                                           : a.rhs_file;

    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    free(rhs);
    o->rhs_values = NULL;
    if (st != HR_OK) {
        if (st == HR_ERR_NO_MEMORY)
            return hr_cli_usage_error(CMD, "--n", "%d: the grids do not fit in memory", o->n);
        return usage_status(st, hr_last_error());
    }
    if (!a.quiet) {
        fprintf(hout,
                "hetrelax poisson2d: n=%d (%d x %d grid), %s precision, rhs %s, backend %s, kernel %s\n",
                o->n, o->n + 2, o->n + 2, hr_precision_name(o->precision), rhs_name,
                hr_backend_name(s->o.backend), s->k->name);
        if (a.ref_gbps > 0) fprintf(hout, "reference bandwidth: %.2f GB/s (%s)\n", a.ref_gbps, bw_what);
        fprintf(hout, "sweeps: %ld%s\n", o->iters, o->tol > 0 ? " at most" : "");
    }
    hr_result r;
    st = hr_solver_run(s, &r);
    if (st != HR_OK && st != HR_ERR_DIVERGED) {
        int code = usage_status(st, hr_solver_last_error(s));
        hr_solver_free(s);
        return code;
    }
    size_t count = (size_t)o->n * (size_t)o->n;
    double *sol = (a.output || a.verify) ? malloc(count * sizeof *sol) : NULL;
    if ((a.output || a.verify) && (!sol || hr_solver_solution(s, HR_PREC_DOUBLE, sol, count) != HR_OK)) {
        fprintf(stderr, "hetrelax %s: out of memory copying the solution\n", CMD);
        free(sol);
        hr_solver_free(s);
        return HR_EXIT_FAIL;
    }
    hr_solver_free(s);

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
    if (st == HR_ERR_DIVERGED) fprintf(stderr, "hetrelax %s: the iteration diverged\n", CMD);
    if (a.verify && rc == HR_EXIT_OK) rc = verify_against_seq(&a, &r, sol);
    if (a.output) {
        hr_status ws = hr_field_write(a.output, o->n, sol, o->precision);
        if (ws != HR_OK) {
            fprintf(stderr, "hetrelax %s: --output: cannot write '%s': %s\n", CMD, a.output,
                    hr_status_string(ws));
            rc = HR_EXIT_FAIL;
        } else if (!a.quiet) {
            fprintf(hout, "wrote     %s\n", a.output);
        }
    }
    free(sol);
    if (a.json) {
        json_object *j = result_json(&a, &r, rhs_name);
        int jr = hr_cli_write_json(CMD, a.json, j);
        json_object_put(j);
        if (jr && rc == HR_EXIT_OK) rc = jr;
    }
    return rc;
}
