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

#include "cli.h"
#include "cli_flags.h"
#include "field_io.h"
#include "grid_cmd.h"

const char *hr_grid_cmd = "poisson2d";
FILE *hr_grid_out;
int hr_grid_absolute;
#define CMD  hr_grid_cmd
#define hout hr_grid_out

/* ------------------------------------------------------------ small helpers */

/* --list-methods and --list-smoothers: the registry's entries of that kind in dim dimensions */
static int list_entries(hr_kind kind, int dim)
{
    hr_cli_listing_output();
    const int sm = kind == HR_KIND_SMOOTHER;
    printf("%-10s %s%s\n", sm ? "smoother" : "method", sm ? "backend   " : "", "summary");
    const char *def = hr_registry_default(kind, HR_BACKEND_AUTO, dim);
    hr_entry_info e;
    for (int i = 0; hr_registry_info_at(kind, i, &e) == HR_OK; i++) {
        if (!(e.caps & (dim == 3 ? HR_CAP_3D : HR_CAP_2D))) continue;
        printf("%-10s ", e.name);
        if (sm) printf("%-9s ", e.backend == HR_BACKEND_AUTO ? "cpu, gpu" : hr_backend_name(e.backend));
        printf("%s%s\n", e.summary, def && strcmp(def, e.name) == 0 ? " (default)" : "");
    }
    return HR_EXIT_OK;
}

static int list_kernels(int dim)
{
    hr_cli_listing_output();
    printf("%-12s %-14s %s\n", "backend", "kernel", "summary");
    const unsigned need = dim == 3 ? HR_CAP_3D : HR_CAP_2D;
    char rb[64]; /* the methods a red-black kernel runs */
    hr_cli_entry_join(HR_KIND_METHOD, HR_CAP_REDBLACK, "|", rb, sizeof rb);
    for (int i = 0; i < hr_kernel_count(); i++) {
        hr_kernel_info k;
        if (hr_kernel_info_at(i, &k) != HR_OK || !(k.caps & need)) continue;
        printf("%-12s %-14s %s%s%s%s%s\n", hr_backend_name(k.backend), k.name, k.summary,
               (k.caps & HR_CAP_REDBLACK) ? " [--method " : "", (k.caps & HR_CAP_REDBLACK) ? rb : "",
               (k.caps & HR_CAP_REDBLACK) ? "]" : "",
               (k.caps & HR_CAP_DETERMINISTIC) ? "" : " [non-deterministic]");
    }
    return HR_EXIT_OK;
}

/* The kernels of backend b in dim dimensions, joined by ", " (for an unknown --kernel). */
static const char *kernel_names(hr_backend b, int dim, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    hr_entry_info k;
    for (int i = 0; hr_registry_info_at(HR_KIND_KERNEL, i, &k) == HR_OK && len + 1 < size; i++) {
        if (k.backend != b || !(k.caps & (dim == 3 ? HR_CAP_3D : HR_CAP_2D))) continue;
        const int w = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", k.name);
        len = w < 0 || len + (size_t)w >= size ? size - 1 : len + (size_t)w;
    }
    return buf;
}

/* The kernel `name` of backend b in dim dimensions, if there is one; NULL: the default for
 * the method (Jacobi: hr_kernel_default; red-black: the backend's first red-black kernel,
 * as the library picks it). */
static int find_kernel(hr_backend b, const char *name, int dim, hr_method m, hr_kernel_info *out)
{
    const int rb = m != HR_METHOD_JACOBI;
    if (!name && !rb) name = hr_kernel_default(b, dim);
    if (!name && !rb) return 0;
    const unsigned need = dim == 3 ? HR_CAP_3D : HR_CAP_2D;
    for (int i = 0; i < hr_kernel_count(); i++)
        if (hr_kernel_info_at(i, out) == HR_OK && out->backend == b && (out->caps & need) &&
            (name ? strcmp(out->name, name) == 0 : (out->caps & HR_CAP_REDBLACK) != 0))
            return 1;
    return 0;
}

/* The library names option fields ("alpha: ...", "thread_rows: ..."); the user typed
 * flags: "--alpha: ...". */
void hr_grid_flagify(hr_flagset *fs, const char *why, char *out, size_t size)
{
    static const char *const alias[][2] = {
        {"check_every", "check"},       {"monitor_every", "monitor"},   {"thread_rows", "thread-grid"},
        {"thread_cols", "thread-grid"}, {"host_memory", "host-memory"}, {"rhs_values", "rhs"},
        {"max_iters", "iters"},         {"coef_values", "coef"},        {"init_values", "init"}};
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

int hr_grid_monitor_print(long it, double res, void *user)
{
    (void)user;
    fprintf(hout, "  sweep %10ld   %s %.6e\n", it, hr_cli_residual_label(hr_grid_absolute), res);
    fflush(hout);
    return 0;
}

static double measure_reference(const grid_args *a, hr_backend b, const char **what)
{
    if (b == HR_BACKEND_HYBRID && a->o.split_second == HR_SPLIT_GPU && a->o.gpus > 1) {
        /* --gpus N: the GPUs' own copy bandwidth, each measured, summed */
        double sum = 0.0;
        *what = "sum of the GPUs' device copy";
        for (int d = a->o.device; d < a->o.device + a->o.gpus; d++) {
            double bw = 0.0;
            if (hr_measure_device_bandwidth(d, 0, 5, &bw) != HR_OK) return 0.0;
            sum += bw;
        }
        return sum;
    }
    if (b == HR_BACKEND_GPU) {
        double bw = 0.0;
        *what = "device copy";
        return hr_measure_device_bandwidth(a->o.device, 0, 5, &bw) == HR_OK ? bw : 0.0;
    }
    hr_bandwidth bw;
    int threads = b == HR_BACKEND_CPU_SEQ ? 1 : a->o.threads;
    if (a->o.thread_rows > 0) threads = a->o.thread_rows * a->o.thread_cols;
    *what = "host STREAM copy";
    return hr_measure_host_bandwidth_tuned(threads, a->o.bind, 0, 5, &a->o.tuning, &bw) == HR_OK
               ? bw.copy_gbps
               : 0.0;
}

/* ------------------------------------------------------- checks before work */

/* The library refuses grids that do not fit; the command's own buffers (the solution
 * copy for --output and --verify, the --rhs values, the --verify reference run, the
 * checkpoint buffer) must fit beside them, or the process is killed without a word. */
static int check_memory(const grid_args *a)
{
    const hr_options *o = &a->o;
    const double pts = (double)a->nx * (double)a->ny * (double)a->nz,
                 es = (double)hr_grid_esize(o->precision);
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

/* Single precision holds |V| in [FLT_MIN, FLT_MAX] with 24 bits. A sweep adds up to 2d
 * neighbours and the residual scales by 2d, so values above FLT_MAX / 64 overflow on the way
 * (--boundary 1e38 ran into NaN); a problem whose largest value is below FLT_MIN /
 * FLT_EPSILON leaves its corrections subnormal (digits lost, or zero). Refused before the
 * solve; double precision (or mixed, for mg and cg) holds them. */
#define HR_SINGLE_MAX (FLT_MAX / 64.0)
#define HR_SINGLE_MIN (FLT_MIN / FLT_EPSILON)

static int single_misfit(double v)
{
    const double m = fabs(v);
    return m > HR_SINGLE_MAX || (m > 0.0 && m < HR_SINGLE_MIN);
}

/* Values the run's precision cannot hold would turn into inf or lose their digits. */
static int check_precision_fit(const grid_args *a, const hr_flagset *fs)
{
    /* mg and cg run in double unless --precision single is given (mixed scales what reaches
     * its fp32 cycles) */
    const int single = a->solver == GRID_RELAX
                           ? a->o.precision == HR_PREC_SINGLE
                           : !a->mixed && a->o.precision == HR_PREC_SINGLE && hr_flags_seen(fs, "precision");
    if (single && single_misfit(a->o.boundary))
        return hr_cli_usage_error(
            CMD, "--boundary",
            "%g does not fit single precision (its sweeps need %.3g <= |V| <= %.3g, or 0); "
            "use --precision double%s",
            a->o.boundary, HR_SINGLE_MIN, HR_SINGLE_MAX, a->solver == GRID_RELAX ? "" : " or mixed");
    return 0;
}

/* The --rhs FILE of a single-precision run (its values are floats already): the grids hold
 * h^2 f, which must not be subnormal, and the solution (about max |f| / 8) must fit. */
int hr_grid_check_single_values(const grid_args *a, const double *f, size_t count)
{
    const int ext = a->nx > a->ny ? (a->nx > a->nz ? a->nx : a->nz) : (a->ny > a->nz ? a->ny : a->nz);
    const double h = 1.0 / ((double)ext + 1.0);
    double m = 0.0;
    for (size_t i = 0; f && i < count; i++)
        if (fabs(f[i]) > m) m = fabs(f[i]);
    if (!(m > HR_SINGLE_MAX || (m > 0.0 && h * h * m < HR_SINGLE_MIN))) return 0;
    return hr_cli_usage_error(
        CMD, "--rhs",
        "'%s': values up to %g do not fit single precision (it needs h^2 max |f| >= %.3g "
        "and max |f| <= %.3g, or 0); use --precision double%s",
        a->rhs_file, m, HR_SINGLE_MIN, HR_SINGLE_MAX, a->solver == GRID_RELAX ? "" : " or mixed");
}

static int usage_status(hr_flagset *fs, hr_status st, const char *err)
{
    char msg[320];
    hr_grid_flagify(fs, err, msg, sizeof msg);
    if (st == HR_ERR_INVALID_ARG || st == HR_ERR_UNSUPPORTED || st == HR_ERR_NO_DEVICE) {
        hr_cli_usage_error(CMD, NULL, "%s%s%s", hr_status_string(st), *msg ? ": " : "", msg);
        return HR_EXIT_USAGE;
    }
    fprintf(stderr, "hetrelax %s: %s%s%s\n", CMD, hr_status_string(st), *msg ? ": " : "", msg);
    return HR_EXIT_FAIL;
}

/* -------------------------------------------------------------------- main */

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

int hr_grid_read_values(const char *flag, const char *path, size_t count, hr_precision prec, double **out)
{
    *out = malloc(count * sizeof **out);
    char why[160] = "";
    hr_status st = *out ? hr_field_read_raw_why(path, count, prec, *out, why, sizeof why) : HR_ERR_NO_MEMORY;
    if (st == HR_OK) return 0;
    free(*out);
    *out = NULL;
    if (st == HR_ERR_FORMAT)
        return hr_cli_usage_error(CMD, flag, "'%s': %s (expected exactly %zu finite %s values, %zu bytes)",
                                  path, why, count, hr_precision_name(prec), count * hr_grid_esize(prec));
    if (st == HR_ERR_NO_MEMORY)
        return hr_cli_usage_error(CMD, flag, "%zu values do not fit in memory", count);
    return hr_cli_usage_error(CMD, flag, "cannot read '%s': %s (not %s or a readable file)", path, why,
                              strcmp(flag, "--rhs") == 0 ? "spike, manufactured, zero" : "zero, sine");
}

/* Reads an --rhs or --init FILE of the grid's values into a new buffer. */
static int read_values(const grid_args *a, const char *flag, const char *path, double **out)
{
    const size_t count = (size_t)a->nx * (size_t)a->ny * (size_t)a->nz;
    return hr_grid_read_values(flag, path, count, a->o.precision, out);
}

/* Flags a decomposed run cannot honour yet: one line, exit 2 (every rank finds the same). */
static int mpi_refusals(const grid_args *a)
{
    const hr_options *o = &a->o;
    const long parts =
        (long)a->mpi.decomp[0] * a->mpi.decomp[1] * (a->mpi.decomp[2] > 0 ? a->mpi.decomp[2] : 1);
    if (hr_mpi_cli_size() == 1 && parts > 1) { /* several subdomains asked of one process */
#ifdef HR_HAVE_MPI
        return hr_cli_usage_error(CMD, "--decomp",
                                  "%ld subdomains need as many MPI ranks (run under mpirun -np %ld)", parts,
                                  parts);
#else
        return hr_cli_usage_error(CMD, "--decomp", "%ld subdomains need MPI ranks: this build has no MPI",
                                  parts);
#endif
    }
    if (a->checkpoint)
        return hr_cli_usage_error(CMD, "--checkpoint", "not available in decomposed (MPI) runs yet");
    if (a->restart) return hr_cli_usage_error(CMD, "--restart", "not available in decomposed (MPI) runs yet");
    if (o->method != HR_METHOD_JACOBI)
        return hr_cli_usage_error(CMD, "--method", "%s: decomposed (MPI) runs do Jacobi only so far",
                                  hr_method_name(o->method));
    if (o->backend == HR_BACKEND_HYBRID)
        return hr_cli_usage_error(CMD, "--backend",
                                  "hybrid: decomposed (MPI) runs sweep on CPU ranks or on GPU ranks (gpu)");
    if (o->layout == HR_LAYOUT_BLOCKS)
        return hr_cli_usage_error(CMD, "--layout", "blocks: not available in decomposed (MPI) runs");
    return 0;
}

/* Under MPI the banner waits until every rank holds its solver: errors come first, alone. */
typedef struct mpi_banner {
    const grid_args *a;
    const char *rhs_name, *kernel, *bw_what;
    hr_backend eb;
} mpi_banner;

static void print_mpi_banner(void *arg)
{
    const mpi_banner *b = arg;
    hr_grid_print_header(b->a, b->rhs_name, b->eb, b->kernel, b->bw_what, NULL, 0);
}

/* k with n = 2^k - 1: the sizes the model problem's multigrid takes */
static int pow2m1(int n)
{
    return n >= 1 && ((unsigned)n & ((unsigned)n + 1u)) == 0;
}

/* Everything after parsing on the model problem's engines; a and fs are filled. */
static int grid_run_model(grid_args *a, hr_flagset *fs)
{
    hr_options *o = &a->o;
    int rc;
    if (a->output && hr_field_format_of(a->output) == HR_FIELD_UNKNOWN)
        return hr_cli_usage_error(CMD, "--output", "'%s': extension must be .raw, .png or .vti", a->output);
    if (o->thread_rows > 0 && o->threads > 0 && o->thread_rows * o->thread_cols != o->threads)
        return hr_cli_usage_error(CMD, "--thread-grid", "%dx%d does not match --threads %d", o->thread_rows,
                                  o->thread_cols, o->threads);
    if (o->layout == HR_LAYOUT_BLOCKS && o->backend != HR_BACKEND_CPU_THREADS &&
        o->backend != HR_BACKEND_AUTO)
        return hr_cli_usage_error(CMD, "--layout", "blocks needs --backend cpu-threads");
    if ((rc = check_precision_fit(a, fs)) != 0) return rc;
    if (hr_flags_seen(fs, "checkpoint-every") && !a->checkpoint)
        return hr_cli_usage_error(CMD, "--checkpoint-every", "needs --checkpoint FILE");

    if (o->omega == HR_OMEGA_AUTO && o->method == HR_METHOD_JACOBI)
        return hr_cli_usage_error(CMD, "--omega", "auto needs --method redblack or sor");
    a->mpi.transport_given = hr_flags_seen(fs, "transport");
    if (a->solver != GRID_RELAX) return hr_grid_run_mg(a, fs);
    {
        const char *mg_only[] = {"pc",       "cycle",  "pre",       "post",
                                 "smoother", "levels", "coarse-on", "coarse-level"};
        for (size_t i = 0; i < sizeof mg_only / sizeof mg_only[0]; i++)
            if (hr_flags_seen(fs, mg_only[i]))
                return hr_cli_usage_error(CMD, NULL, "--%s: needs --method mg or cg", mg_only[i]);
        if (a->mixed) return hr_cli_usage_error(CMD, "--precision", "mixed needs --method mg or cg");
    }
    if (o->method == HR_METHOD_SOR && !hr_flags_seen(fs, "omega")) o->omega = HR_OMEGA_AUTO;
    hr_sysinfo si;
    hr_sysinfo_get(&si);
    hr_kernel_info kd;
    /* decomposed (MPI) runs: each rank sweeps its subdomain with the region sweep (seq), on
     * its own thread or a team of --threads (docs/mpi.md) */
    const int use_mpi = hr_mpi_cli_wanted(&a->mpi);
    if (hr_mpi_cli_size() > 1 && hr_flags_seen(fs, "gpus")) { /* ranks: GPUs per node, one rank each */
        a->mpi.gpus = o->gpus;
        o->gpus = 0;
    }
    if ((rc = hr_grid_gpus_prepare(a, fs, use_mpi)) != 0) return rc;
    if (use_mpi && (rc = mpi_refusals(a)) != 0) return rc;
    if (!use_mpi && hr_flags_seen(fs, "transport"))
        return hr_cli_usage_error(CMD, "--transport",
                                  "chooses how MPI ranks exchange halos: run under mpirun");
    /* auto: the GPU when one is present, else all cores; for a dimension a backend has
     * no kernel for yet, the next one that has */
    hr_backend eb = o->backend;
    if (eb == HR_BACKEND_AUTO && use_mpi) eb = HR_BACKEND_CPU_SEQ;
    if (eb == HR_BACKEND_AUTO) {
        const hr_backend order[3] = {HR_BACKEND_GPU, HR_BACKEND_CPU_THREADS, HR_BACKEND_CPU_SEQ};
        eb = HR_BACKEND_CPU_THREADS;
        for (int i = 0; i < 3; i++)
            if ((order[i] != HR_BACKEND_GPU || (si.have_cuda && si.gpus > 0)) &&
                find_kernel(order[i], NULL, a->dim, o->method, &kd)) {
                eb = order[i];
                break;
            }
    }
    const int gpu_sizes =
        eb == HR_BACKEND_GPU || (eb == HR_BACKEND_HYBRID && o->split_second == HR_SPLIT_GPU);
    if (!hr_flags_seen(fs, "n")) o->n = a->dim == 3 ? (gpu_sizes ? 512 : 256) : (gpu_sizes ? 16384 : 4096);
    a->nx = o->nx > 0 ? o->nx : o->n;
    a->ny = o->ny > 0 ? o->ny : o->n;
    a->nz = a->dim == 3 ? (o->nz > 0 ? o->nz : o->n) : 1;
    if (!hr_flags_seen(fs, "iters") && gpu_sizes) o->iters = 2000;
    if (!hr_flags_seen(fs, "monitor")) o->monitor_every = a->quiet ? 0 : (o->iters >= 10 ? o->iters / 10 : 0);
    if (a->checkpoint && !a->checkpoint_every) a->checkpoint_every = o->iters >= 10 ? o->iters / 10 : 1;
    const int have_gpu =
        hr_kernel_default(HR_BACKEND_GPU, 2) != NULL || hr_kernel_default(HR_BACKEND_GPU, 3) != NULL;
    if (eb == HR_BACKEND_GPU && !have_gpu)
        return hr_cli_usage_error(CMD, "--backend", "gpu: this build has no CUDA support");
    const char *kname = o->kernel;
    if (!kname && eb == HR_BACKEND_CPU_THREADS && o->layout == HR_LAYOUT_BLOCKS && a->dim == 2)
        kname = "blocks";
    if (use_mpi) {
        if (!find_kernel(HR_BACKEND_CPU_SEQ, "seq", a->dim, HR_METHOD_JACOBI, &kd))
            return hr_cli_usage_error(CMD, "--decomp", "this build has no %d-D seq kernel", a->dim);
    } else if (!find_kernel(eb, kname, a->dim, o->method, &kd)) {
        if (o->kernel) {
            char names[512];
            return hr_cli_usage_error(
                CMD, "--kernel", "backend %s has no %d-D kernel '%s' (it has %s; see --list-kernels)",
                hr_backend_name(eb), a->dim, o->kernel, kernel_names(eb, a->dim, names, sizeof names));
        }
        return hr_cli_usage_error(CMD, "--backend", "%s has no %d-D %s kernel in this build",
                                  hr_backend_name(eb), a->dim, hr_method_name(o->method));
    }
    if (o->method != HR_METHOD_JACOBI && !(kd.caps & HR_CAP_REDBLACK))
        return hr_cli_usage_error(CMD, "--method", "%s: kernel %s does only Jacobi (see --list-kernels)",
                                  hr_method_name(o->method), kd.name);
    if (o->method == HR_METHOD_JACOBI && (kd.caps & HR_CAP_REDBLACK))
        return hr_cli_usage_error(CMD, "--kernel", "%s does only red-black: give --method redblack or sor",
                                  kd.name);
    if (eb == HR_BACKEND_GPU && si.gpus <= o->device)
        return hr_cli_usage_error(CMD, si.gpus ? "--device" : "--backend",
                                  "gpu: no CUDA device %d (found %d)", o->device, si.gpus);
    if ((rc = hr_grid_hybrid_check(a, fs, eb, si.gpus)) != 0) return rc;
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
            hr_grid_flagify(fs, why, msg, sizeof msg);
            return hr_cli_usage_error(CMD, NULL, "%s", msg);
        }
    }
    /* a rank holds its subdomain only (its allocations are agreed by the library) */
    if (!use_mpi && (rc = check_memory(a)) != 0) return rc;
    const int root = hr_mpi_cli_rank() == 0;
    int local_rc = 0; /* under MPI: this rank's failure so far, agreed before the solve */

    const size_t count = (size_t)a->nx * (size_t)a->ny * (size_t)a->nz;
    chunk_run c;
    memset(&c, 0, sizeof c);
    c.count = count;
    c.done0 = -1;
    double *rhs = NULL, *init = NULL, *sol = NULL;
    hr_solver *s = NULL;
    /* every output is created (as its temporary file) before the work: a path that
     * cannot be written is refused now, with errno's reason */
    const int chunked = a->checkpoint || a->restart;
    outputs w;
    memset(&w, 0, sizeof w);
    if (root && a->output) {
        if ((rc = hr_cli_open_output(CMD, "--output", a->output, &w.out)) != 0) goto local_fail;
        w.out_open = 1;
    }
    if (root && a->json && strcmp(a->json, "-") != 0) {
        if ((rc = hr_cli_open_output(CMD, "--json", a->json, &w.json)) != 0) goto local_fail;
        w.json_open = 1;
    }
    if (a->checkpoint) {
        hr_atomic probe;
        if ((rc = hr_cli_open_output(CMD, "--checkpoint", a->checkpoint, &probe)) != 0) goto fail;
        hr_atomic_abort(&probe);
    }

    if (chunked) {
        c.buf = malloc(count * hr_grid_esize(o->precision));
        if (!c.buf) {
            rc = hr_cli_usage_error(CMD, "--n", "no memory for the checkpoint buffer");
            goto fail;
        }
        c.done0 = 0;
        if (a->restart && (rc = hr_grid_load_restart(a, &c)) != 0) goto fail;
    }
    if (o->rhs == HR_RHS_ARRAY) {
        if ((rc = read_values(a, "--rhs", a->rhs_file, &rhs)) != 0) goto local_fail;
        o->rhs_values = rhs;
        c.info.rhs_hash = hr_ckpt_hash(rhs, count);
    }
    if (o->init == HR_INIT_ARRAY) {
        if ((rc = read_values(a, "--init", a->init_file, &init)) != 0) goto local_fail;
        o->init_values = init;
    }
    hr_grid_absolute = hr_grid_b_is_zero(o, rhs, count);
    if (o->precision == HR_PREC_SINGLE && (rc = hr_grid_check_single_values(a, rhs, count)) != 0)
        goto local_fail;
    if (0) {
    local_fail: /* alone, return; under MPI, every rank must learn it in the solve's agreement */
        if (!use_mpi) goto fail;
        local_rc = rc;
    }

    const char *bw_what = "given";
    /* GPU ranks: each GPU measured by one of its ranks once the solver has placed them (the
     * sum is the reference), not here */
    if (a->measure_bw && !local_rc && (!use_mpi || eb != HR_BACKEND_GPU))
        a->ref_gbps = measure_reference(a, eb, &bw_what);
    if (a->measure_bw && use_mpi && eb == HR_BACKEND_GPU) {
        a->mpi.measure_gpus = 1;
        bw_what = "sum of the GPU ranks' device copy";
    }
    o->reference_gbps = a->ref_gbps;
    const char *rhs_name = o->rhs == HR_RHS_SPIKE          ? "spike"
                           : o->rhs == HR_RHS_MANUFACTURED ? "manufactured"
                           : o->rhs == HR_RHS_ZERO         ? "zero"
                                                           : a->rhs_file;

    /* chunked runs: the library does plain sweeps, hr_grid_run_chunks does the rest */
    hr_options so = *o;
    so.dim = a->dim;
    so.backend = eb;
    if (chunked) {
        /* sweeps by hr_solver_run_sweeps, residuals by runs of 0 sweeps (grid_chunks.c) */
        so.iters = 0;
        so.tol = 0.0;
        so.monitor_every = 0;
        so.monitor = NULL;
    } else if (o->monitor_every > 0) {
        so.monitor = hr_grid_monitor_print;
    }
    hr_result r;
    memset(&r, 0, sizeof r);
    json_object *mpi_json = NULL;
    if (use_mpi) {
        so.kernel = o->kernel; /* seq or none: the library says so otherwise */
        if (root && (a->output || a->verify) && !(sol = malloc(count * sizeof *sol)))
            local_rc = hr_cli_usage_error(CMD, "--n", "no memory for the gathered solution");
        mpi_banner banner = {a, rhs_name, eb == HR_BACKEND_GPU ? "tuned" : "seq", bw_what, eb};
        a->mpi.ready = a->quiet ? NULL : print_mpi_banner;
        a->mpi.ready_arg = &banner;
        rc = hr_mpi_cli_solve(CMD, &so, &a->mpi, local_rc, &r, root ? sol : NULL, count, &mpi_json);
        /* a diverged run reports like a single process; other failures were printed */
        const int diverged =
            rc == HR_EXIT_FAIL && (r.reason == HR_REASON_DIVERGED || r.reason == HR_REASON_NAN);
        if (rc && !diverged) goto fail;
        hr_config mc; /* what ran, for the JSON */
        memset(&mc, 0, sizeof mc);
        mc.backend = eb;
        snprintf(mc.kernel, sizeof mc.kernel, "%s", r.kernel[0] ? r.kernel : "seq"); /* GPU ranks: tuned */
        mc.caps = kd.caps;
        mc.dim = a->dim;
        mc.nx = a->nx;
        mc.ny = a->ny;
        mc.nz = a->nz;
        mc.threads = eb == HR_BACKEND_CPU_THREADS && o->threads > 0 ? o->threads : 1;
        mc.device = eb == HR_BACKEND_GPU ? 0 : -1; /* rank 0's GPU: local rank 0 */
        if (eb == HR_BACKEND_GPU) snprintf(mc.device_name, sizeof mc.device_name, "%s", r.device_name);
        mc.omega = o->omega;
        mc.method = HR_METHOD_JACOBI;
        mc.flush_subnormals = o->flush_subnormals && eb != HR_BACKEND_GPU; /* as the library's CPU ranks */
        /* --verify's reference run on rank 0 still needs the file values */
        rc = hr_grid_finish(a, &w, &r, &mc, sol, rhs_name, diverged ? HR_ERR_DIVERGED : HR_OK, -1, mpi_json,
                            NULL);
        free(rhs);
        free(init);
        return rc;
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
        c.info.method = (int)cfg.method;
        c.info.omega = cfg.omega;
        c.info.deterministic = (cfg.caps & HR_CAP_DETERMINISTIC) != 0;
        if (a->restart && (rc = hr_grid_check_restart(a, &c, &cfg)) != 0) goto fail;
        if (a->restart && (st = hr_solver_set_solution(s, o->precision, c.buf, c.count, c.done0)) != HR_OK) {
            const char *why = hr_solver_last_error(s);
            rc = hr_cli_usage_error(CMD, "--restart", "cannot load the state: %s",
                                    *why ? why : hr_status_string(st));
            goto fail;
        }
    }
    warn_unused(fs, a, cfg.backend);
    if (chunked) hr_cli_defer_signals(1); /* from here a signal means: checkpoint and stop */
    if (!a->quiet) hr_grid_print_header(a, rhs_name, cfg.backend, cfg.kernel, bw_what, &cfg, c.done0);
    int sig = 0;
    if (chunked) {
        rc = hr_grid_run_chunks(a, s, &c, &r, &sig);
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
    json_object *hybrid_json = hr_grid_hybrid_report(a, s, &r); /* --explain prints here */
    hr_solver_free(s);
    s = NULL;

    free(rhs);
    free(init);
    return hr_grid_finish(a, &w, &r, &cfg, sol, rhs_name, st, c.done0 > 0 ? c.done0 : -1, NULL, hybrid_json);
fail:
    hr_solver_free(s);
    free(rhs);
    free(init);
    free(sol);
    free(c.buf);
    drop_outputs(&w);
    return rc;
}

/* Everything after parsing: the model problem on its own engines (bitwise as ever), any
 * other problem through hr_grid_solver (grid_general.c). */
static int grid_run(grid_args *a, hr_flagset *fs)
{
    if (a->list == GRID_LIST_METHODS || a->list == GRID_LIST_SMOOTHERS)
        return list_entries(a->list == GRID_LIST_METHODS ? HR_KIND_METHOD : HR_KIND_SMOOTHER, a->dim);
    if (a->list) return list_kernels(a->dim);
    hout = (a->json && strcmp(a->json, "-") == 0) ? stderr : stdout;
    int general = hr_grid_problem_changed(a, fs);
    if (!general && a->solver != GRID_RELAX) { /* the model's multigrid takes 2^k - 1 per axis */
        int nx, ny, nz;
        hr_grid_mg_extents(a, fs, &nx, &ny, &nz);
        general = !pow2m1(nx) || !pow2m1(ny) || !pow2m1(nz);
    }
    /* multigrid and CG on several ranks: the general engine, a slab of the last axis per rank;
     * --kernel general asks for that engine on the model problem too */
    if (!general && a->solver != GRID_RELAX && hr_mpi_cli_size() > 1) general = 1;
    if (!general && a->solver != GRID_RELAX && a->o.kernel && strcmp(a->o.kernel, "general") == 0) general = 1;
    /* --gpus N for multigrid and CG: that engine's slabs, one per GPU */
    if (!general && a->solver != GRID_RELAX && a->o.gpus > 1 && hr_mpi_cli_size() == 1) general = 1;
    if (general) return hr_grid_run_general(a, fs);
    if (!a->write_matrix && !a->write_rhs) return grid_run_model(a, fs);
    /* --write-matrix, --write-rhs: paths checked before the run, the system of the extents it
     * resolved written after a run that did not fail */
    grid_system_out sys;
    int rc = hr_mpi_cli_rank() == 0 ? hr_grid_system_open(a, &sys) : (memset(&sys, 0, sizeof sys), 0);
    if (rc) return rc;
    rc = grid_run_model(a, fs);
    if (rc == HR_EXIT_OK || rc == HR_EXIT_NOT_CONVERGED) {
        /* the --rhs FILE holds values of the run's precision (mg, cg: double unless single) */
        const hr_precision prec =
            a->solver == GRID_RELAX ? a->o.precision
            : !a->mixed && hr_flags_seen(fs, "precision") && a->o.precision == HR_PREC_SINGLE
                ? HR_PREC_SINGLE
                : HR_PREC_DOUBLE;
        grid_problem h;
        int wr = hr_grid_problem_build(a, fs, &h);
        if (!wr) wr = hr_grid_problem_values(a, prec, 0, &h);
        if (!wr) wr = hr_grid_system_prepare(a, &h.p, &sys);
        if (!wr) wr = hr_grid_system_commit(a, &sys);
        hr_grid_problem_free(&h);
        if (wr) rc = wr == HR_EXIT_USAGE ? HR_EXIT_FAIL : wr; /* the run is done: a failed write */
    }
    hr_grid_system_abort(&sys);
    return rc;
}

int hr_grid_main(int argc, char **argv, int dim)
{
    static grid_args a; /* static: the flag table points into it */
    static hr_flagset fs;
    static hr_tuning_flags tf;
    CMD = dim == 3 ? "poisson3d" : "poisson2d";
    memset(&a, 0, sizeof a);
    hr_options_default(&a.o);
    a.dim = dim;
    a.measure_bw = 1;
    hr_grid_build_flags(&fs, &a);
    hr_grid_hybrid_flags(&fs, &a);
    hr_grid_mg_flags(&fs, &a);
    hr_mpi_cli_flags(&fs, &a.mpi);
    hr_flags_tuning(&fs, &tf, &a.o.tuning, HR_TUNING_FLAGS_GRID);
    int rc = hr_flags_parse(&fs, argc, argv);
    if (rc) return rc < 0 ? HR_EXIT_OK : rc;
    return grid_run(&a, &fs);
}

int hr_cmd_poisson2d(int argc, char **argv)
{
    return hr_grid_main(argc, argv, 2);
}
