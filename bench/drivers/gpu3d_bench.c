/*
 * GPU sweep benchmark through the library:
 *
 *   gpu3d_bench OUT.json [--quick] [--cases LIST]
 *
 * Without --cases: the 3-D and 2-D Jacobi cases; the red-black and "3d-straight-*" cases
 * run when --cases names them.
 *
 * For each case (3-D 512^3 `tuned` and `naive`, 2-D n = 4096 / 8192 `tuned`; red-black
 * `rb-tuned` and `rb-inplace` at 8192^2, the red-black report's run (omega 0.8, zero rhs); float and
 * double; "3d-straight-*": 3-D `tuned` on the straight-chunk shapes measured before zig-zag
 * chunks, for comparison in the same run) it
 *   1. checks the answer: Sourouri et al.'s problem (f = 0, u0 = the sine mode) after a few sweeps
 *      equals lambda^T u0 to rounding (hr_result.max_error); red-black: bitwise equal to
 *      rb-seq at 1025 x 1023 after 21 iterations (max_error column: 0 = bitwise);
 *   2. times the kernel with no tuning cache (the shipped or built-in shape: "untuned"),
 *   3. runs `hetrelax tune`'s search (hri_cuda_tune) into this run's cache and times the
 *      shape it chose ("tuned"),
 * each a median of 5 timed blocks of sweeps after a warm-up block. GB/s: the byte model
 * of the library (u read once + written once: 2 words per interior point per sweep), as a
 * fraction of the device copy bandwidth measured in the same run (before and after).
 * HETRELAX_TUNE_FILE names the run's cache (default ./gpu3d-tune.txt).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/solver_internal.h"
#include "core/timer.h"
#include "hetrelax/hetrelax.h"
#include "runtime/cuda/cuda_api.h"

typedef struct bcase {
    const char *name;
    int dim, n;
    hr_precision prec;
    const char *kernel;
    int tune;
    const char *shape; /* tuning.gpu_shape for the untuned timing, or NULL */
    int optin;         /* run only when --cases names it (keeps scripts/gpu-check.sh's 2-D records) */
} bcase;

static const bcase all_cases[] = {
    {"3d-tuned-single", 3, 512, HR_PREC_SINGLE, "tuned", 1, NULL, 0},
    {"3d-tuned-double", 3, 512, HR_PREC_DOUBLE, "tuned", 1, NULL, 0},
    {"3d-straight-single", 3, 512, HR_PREC_SINGLE, "tuned", 0, "128x8x16", 1},
    {"3d-straight-double", 3, 512, HR_PREC_DOUBLE, "tuned", 0, "128x4x16", 1},
    {"rb-tuned-single-8192", 2, 8192, HR_PREC_SINGLE, "rb-tuned", 1, NULL, 1},
    {"rb-tuned-double-8192", 2, 8192, HR_PREC_DOUBLE, "rb-tuned", 1, NULL, 1},
    {"rb-inplace-single-8192", 2, 8192, HR_PREC_SINGLE, "rb-inplace", 0, NULL, 1},
    {"rb-inplace-double-8192", 2, 8192, HR_PREC_DOUBLE, "rb-inplace", 0, NULL, 1},
    {"3d-naive-single", 3, 512, HR_PREC_SINGLE, "naive", 0, NULL, 0},
    {"3d-naive-double", 3, 512, HR_PREC_DOUBLE, "naive", 0, NULL, 0},
    {"2d-tuned-single-4096", 2, 4096, HR_PREC_SINGLE, "tuned", 1, NULL, 0},
    {"2d-tuned-double-4096", 2, 4096, HR_PREC_DOUBLE, "tuned", 1, NULL, 0},
    {"2d-tuned-single-8192", 2, 8192, HR_PREC_SINGLE, "tuned", 1, NULL, 0},
    {"2d-tuned-double-8192", 2, 8192, HR_PREC_DOUBLE, "tuned", 1, NULL, 0},
};

/* The tuning cache the runs read (the run's own file, or one that does not exist) and the
 * shape of an untuned timing (NULL: the default): the knobs of the options. */
static const char *run_cache;
static const char *run_shape;

static hr_options case_options(const bcase *c, long iters)
{
    hr_options o;
    hr_options_default(&o);
    o.tuning.tune_file = run_cache;
    if (run_shape && sscanf(run_shape, "%dx%dx%d", &o.tuning.gpu_shape[0], &o.tuning.gpu_shape[1],
                            &o.tuning.gpu_shape[2]) != 3)
        memset(o.tuning.gpu_shape, 0, sizeof o.tuning.gpu_shape);
    o.dim = c->dim;
    o.nx = o.ny = c->n;
    o.nz = c->dim == 3 ? c->n : 0;
    o.backend = HR_BACKEND_GPU;
    o.kernel = c->kernel;
    o.precision = c->prec;
    o.iters = iters;
    o.tol = 0.0;
    o.rhs = HR_RHS_ZERO;
    o.boundary = 1.0; /* timing runs: cheap to set up, non-zero data */
    if (strncmp(c->kernel, "rb-", 3) == 0) {
        o.method = HR_METHOD_REDBLACK; /* the red-black report's run: u = 0.2 (u + N + S + W + E) */
        o.omega = 0.8;
    }
    return o;
}

static int cmp_d(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median seconds of `reps` blocks of `sweeps` sweeps after one untimed block. */
static hr_status time_sweeps(hr_solver *s, long sweeps, int reps, double *med)
{
    double t[16];
    HR_TRY(s->k->kernel->sweeps(s, sweeps));
    for (int r = 0; r < reps; r++) {
        const double t0 = hr_now();
        HR_TRY(s->k->kernel->sweeps(s, sweeps));
        t[r] = hr_now() - t0;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_d);
    *med = t[reps / 2];
    return HR_OK;
}

typedef struct timing {
    double gbps, gflops;
    int shape[3];
    char source[24];
} timing;

static hr_status measure(const bcase *c, long sweeps, int reps, timing *out, char *err, size_t errsz)
{
    hr_options o = case_options(c, sweeps);
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(&o, &s);
    if (st != HR_OK) {
        snprintf(err, errsz, "create: %s", hr_last_error());
        return st;
    }
    hr_config cfg;
    hr_solver_config(s, &cfg);
    double sec = 0.0;
    st = time_sweeps(s, sweeps, reps, &sec);
    if (st != HR_OK) snprintf(err, errsz, "%s", hr_solver_last_error(s));
    const double pts = (double)hr_layout_points(&s->u[0].l) * (double)sweeps;
    const double bytes = 2.0 * (double)s->u[0].l.esize * pts;
    const double flops = (c->dim == 3 ? 8.0 : 5.0) * pts;
    hr_solver_free(s);
    if (st != HR_OK) return st;
    out->gbps = bytes / sec * 1e-9;
    out->gflops = flops / sec * 1e-9;
    memcpy(out->shape, cfg.shape, sizeof out->shape);
    snprintf(out->source, sizeof out->source, "%s", cfg.shape_source);
    return HR_OK;
}

/* Red-black: the kernel's grid after 21 iterations at 1025 x 1023 (spike, omega 0.8)
 * bitwise equal to rb-seq's; *max_error = the largest difference (0 when bitwise). */
static hr_status verify_redblack(const bcase *c, double *max_error, char *err, size_t errsz)
{
    hr_options o = case_options(c, 21);
    o.nx = 1025;
    o.ny = 1023;
    o.rhs = HR_RHS_SPIKE;
    const size_t pts = (size_t)o.nx * (size_t)o.ny;
    double *u[2] = {malloc(pts * sizeof(double)), malloc(pts * sizeof(double))};
    hr_status st = u[0] && u[1] ? HR_OK : HR_ERR_NO_MEMORY;
    for (int k = 0; k < 2 && st == HR_OK; k++) {
        o.backend = k ? HR_BACKEND_CPU_SEQ : HR_BACKEND_GPU;
        o.kernel = k ? "rb-seq" : c->kernel;
        hr_solver *s = NULL;
        st = hr_solver_create(&o, &s);
        if (st == HR_OK) st = hr_solver_run(s, NULL);
        if (st == HR_OK) st = hr_solver_solution(s, HR_PREC_DOUBLE, u[k], pts);
        if (st != HR_OK)
            snprintf(err, errsz, "%s: %s", o.kernel, s ? hr_solver_last_error(s) : hr_last_error());
        hr_solver_free(s);
    }
    if (st == HR_OK) {
        *max_error = 0.0;
        for (size_t x = 0; x < pts; x++)
            *max_error = fmax(*max_error, fabs(u[0][x] - u[1][x]));
        if (memcmp(u[0], u[1], pts * sizeof(double)) != 0) {
            snprintf(err, errsz, "not bitwise equal to rb-seq (max difference %.3e)", *max_error);
            st = HR_ERR_INTERNAL;
        }
    }
    free(u[0]);
    free(u[1]);
    return st;
}

/* Sourouri et al.'s check: f = 0, u0 = sine mode, u_T = lambda^T u0. */
static hr_status verify(const bcase *c, double *max_error, char *err, size_t errsz)
{
    if (strncmp(c->kernel, "rb-", 3) == 0) return verify_redblack(c, max_error, err, errsz);
    hr_options o = case_options(c, 10);
    o.init = HR_INIT_SINE;
    o.boundary = 0.0;
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(&o, &s);
    hr_result r;
    if (st == HR_OK) st = hr_solver_run(s, &r);
    snprintf(err, errsz, "%s", s ? hr_solver_last_error(s) : hr_last_error());
    hr_solver_free(s);
    if (st != HR_OK) return st;
    *max_error = r.max_error;
    const double tol = c->prec == HR_PREC_SINGLE ? 1e-5 : 1e-13;
    if (!(r.max_error <= tol)) {
        snprintf(err, errsz, "max_error %.3e vs lambda^T u0 exceeds %.0e", r.max_error, tol);
        return HR_ERR_INTERNAL;
    }
    return HR_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gpu3d_bench OUT.json [--quick] [--cases a,b,...]\n");
        return 2;
    }
    int quick = 0;
    const char *only = NULL;
    for (int a = 2; a < argc; a++) {
        if (strcmp(argv[a], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[a], "--cases") == 0 && a + 1 < argc)
            only = argv[++a];
        else {
            fprintf(stderr, "gpu3d_bench: %s: unknown option\n", argv[a]);
            return 2;
        }
    }
    if (hri_cuda_device_count() < 1) {
        fprintf(stderr, "gpu3d_bench: no CUDA device\n");
        return 77;
    }
    const char *cache = getenv("HETRELAX_TUNE_FILE"); /* the driver's own choice of file */
    if (!cache || !*cache) cache = "gpu3d-tune.txt";
    char cache_path[512];
    snprintf(cache_path, sizeof cache_path, "%s", cache);
    run_cache = cache_path;
    FILE *js = fopen(argv[1], "w");
    if (!js) {
        perror(argv[1]);
        return 1;
    }
    char dev[128] = "";
    hr_gpu_name(0, dev, sizeof dev);
    double copy0 = 0.0, copy1 = 0.0;
    hr_measure_device_bandwidth(0, 0, 9, &copy0);
    printf("device %s: copy %.1f GB/s (512 MiB, median of 9)\n", dev, copy0);
    fprintf(js, "{\"device\": \"%s\", \"copy_gbps_start\": %.1f, \"records\": [\n", dev, copy0);
    int status = 0, first = 1;
    const int reps = 5;
    for (size_t i = 0; i < sizeof all_cases / sizeof all_cases[0]; i++) {
        const bcase *c = &all_cases[i];
        if (only ? !strstr(only, c->name) : c->optin) continue;
        if (quick && c->dim == 2 && c->n > 4096 && strncmp(c->kernel, "rb-", 3) != 0) continue;
        const double pts = c->dim == 3 ? (double)c->n * c->n * c->n : (double)c->n * c->n;
        const long sweeps = (long)fmax(20.0, 4e10 / pts); /* ~0.1-0.2 s per timed block */
        char err[300] = "";
        double maxerr = NAN;
        timing un = {0}, tu = {0};
        int have_tuned = 0;
        hr_cuda_tune_result tr;
        memset(&tr, 0, sizeof tr);
        /* 1. the answer */
        hr_status st = verify(c, &maxerr, err, sizeof err);
        /* 2. no tuning cache */
        if (st == HR_OK) {
            run_cache = "/nonexistent/hetrelax-no-cache.txt";
            run_shape = c->shape;
            st = measure(c, sweeps, reps, &un, err, sizeof err);
            run_shape = NULL;
            run_cache = cache_path;
        }
        /* 3. tune, then time the chosen shape from the cache */
        if (st == HR_OK && c->tune) {
            hr_options o = case_options(c, sweeps);
            st = hri_cuda_tune(&o, quick ? 10 : (sweeps < 100 ? sweeps : 100), cache_path, &tr, err,
                              sizeof err);
            if (st == HR_OK) st = measure(c, sweeps, reps, &tu, err, sizeof err);
            have_tuned = st == HR_OK;
        }
        if (st != HR_OK) {
            printf("%-24s FAILED: %s (%s)\n", c->name, hr_status_string(st), err);
            status = 1;
        } else {
            printf("%-24s max_error %.2e | untuned %dx%dx%d (%s) %7.1f GB/s %5.1f%%", c->name, maxerr,
                   un.shape[0], un.shape[1], un.shape[2], un.source, un.gbps, 100.0 * un.gbps / copy0);
            if (have_tuned)
                printf(" | tuned %dx%dx%d (%s) %7.1f GB/s %5.1f%% (%d shapes)", tu.shape[0], tu.shape[1],
                       tu.shape[2], tu.source, tu.gbps, 100.0 * tu.gbps / copy0, tr.candidates);
            printf("\n");
        }
        fflush(stdout);
        fprintf(js,
                "%s  {\"case\": \"%s\", \"dim\": %d, \"n\": %d, \"kernel\": \"%s\", \"precision\": \"%s\", "
                "\"ok\": %s, "
                "\"max_error\": %.3e, \"sweeps\": %ld, \"untuned\": {\"shape\": [%d, %d, %d], \"source\": "
                "\"%s\", "
                "\"gbps\": %.1f, \"gflops\": %.1f, \"pct_copy\": %.1f}",
                first ? "" : ",\n", c->name, c->dim, c->n, c->kernel, hr_precision_name(c->prec),
                st == HR_OK ? "true" : "false", isfinite(maxerr) ? maxerr : -1.0, sweeps, un.shape[0],
                un.shape[1], un.shape[2], un.source, un.gbps, un.gflops, 100.0 * un.gbps / copy0);
        if (have_tuned)
            fprintf(js,
                    ", \"tuned\": {\"shape\": [%d, %d, %d], \"source\": \"%s\", \"gbps\": %.1f, \"gflops\": "
                    "%.1f, "
                    "\"pct_copy\": %.1f, \"candidates\": %d}",
                    tu.shape[0], tu.shape[1], tu.shape[2], tu.source, tu.gbps, tu.gflops,
                    100.0 * tu.gbps / copy0, tr.candidates);
        fprintf(js, "}");
        first = 0;
    }
    hr_measure_device_bandwidth(0, 0, 9, &copy1);
    printf("copy at the end %.1f GB/s\n", copy1);
    fprintf(js, "\n], \"copy_gbps_end\": %.1f, \"byte_model\": \"2 words per interior point per sweep\"}\n",
            copy1);
    fclose(js);
    return status;
}
