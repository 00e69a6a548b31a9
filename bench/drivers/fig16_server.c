/*
 * In-process worker for bench/experiments/async_fig16.py (--server): one process keeps the device
 * context and the reference solutions, and answers one request per line on stdin, so the
 * figure-16 search does not pay a process start, a context creation and a 64 MiB file
 * round trip for each of its ~1000 probes. Uses only the public API.
 *
 *   fig16_server --backend gpu|cpu-threads --n N [--threads P]
 *
 * requests (one per line), answers (one JSON object per line on stdout):
 *   ref FILE                    load n*n float64 reference values; answers {"refs": count}
 *   run KERNEL ALPHA ITERS PREC run ITERS sweeps from zero; answers iterations, global_syncs,
 *                               time_sweeps_s and "errors": max|u - ref| / max|ref| per ref
 *   save KERNEL ALPHA ITERS PREC FILE   the same run, and the solution as float64 raw to FILE
 *   quit
 * A failed request answers {"error": "..."} and the server goes on.
 */
#include "tuning_env.h"
#include <hetrelax/hetrelax.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REFS 4

static hr_backend backend = HR_BACKEND_GPU;
static int n = 0, threads = 0;
static double *refs[MAX_REFS], ref_max[MAX_REFS];
static int nrefs = 0;
static double *u_buf; /* the solution of the last run, kept between requests */

/* max |u - ref| over count values: the hot loop of every probe (two references of 16.7 M
 * values at n = 4096), so threaded where OpenMP is there and written to vectorise. */
/* The HETRELAX_* variables onto the knobs, as the command maps them (the library reads no
 * environment): the benchmark scripts pick variants with them. */
static void tuning_from_env(hr_tuning *t)
{
    char err[256];
    if (hri_tuning_from_env(t, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(2);
    }
}

static double max_abs_diff(const double *u, const double *ref, size_t count)
{
    double e = 0.0;
#ifdef _OPENMP
#pragma omp parallel for reduction(max : e) schedule(static)
#endif
    for (size_t i = 0; i < count; i++) {
        const double d = fabs(u[i] - ref[i]);
        e = d > e ? d : e;
    }
    return e;
}

static void answer_error(const char *what, const char *detail)
{
    printf("{\"error\": \"%s: ", what);
    for (const char *c = detail; *c; c++)
        putchar(*c == '"' || *c == '\\' || *c < ' ' ? '\'' : *c);
    printf("\"}\n");
    fflush(stdout);
}

static int load_ref(const char *path)
{
    size_t count = (size_t)n * (size_t)n;
    if (nrefs == MAX_REFS) return answer_error("ref", "too many references"), 1;
    double *r = malloc(count * sizeof *r);
    FILE *f = fopen(path, "rb");
    size_t got = (r && f) ? fread(r, sizeof *r, count, f) : 0;
    if (f) fclose(f);
    if (got != count) {
        free(r);
        return answer_error("ref", path), 1;
    }
    double m = 0.0;
    for (size_t k = 0; k < count; k++)
        m = fmax(m, fabs(r[k]));
    refs[nrefs] = r;
    ref_max[nrefs++] = m;
    printf("{\"refs\": %d}\n", nrefs);
    fflush(stdout);
    return 0;
}

static void run(const char *kernel, int alpha, long iters, const char *prec, const char *save)
{
    hr_options o;
    hr_options_default(&o);
    tuning_from_env(&o.tuning);
    o.n = n;
    o.backend = backend;
    o.threads = threads;
    o.kernel = kernel;
    o.alpha = alpha;
    o.iters = iters;
    o.precision = strcmp(prec, "double") == 0 ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
    hr_solver *s = NULL;
    hr_result r;
    hr_status st = hr_solver_create(&o, &s);
    if (st != HR_OK) {
        answer_error(hr_status_string(st), hr_last_error());
        return;
    }
    st = hr_solver_run(s, &r);
    size_t count = (size_t)n * (size_t)n;
    if (st == HR_OK && !u_buf && !(u_buf = malloc(count * sizeof *u_buf))) st = HR_ERR_NO_MEMORY;
    double *u = u_buf;
    if (st == HR_OK) st = hr_solver_solution(s, HR_PREC_DOUBLE, u, count);
    if (st != HR_OK) {
        answer_error(hr_status_string(st), hr_solver_last_error(s));
        hr_solver_free(s);
        return;
    }
    /* before the answer: the client reads the file as soon as it has the answer */
    if (save) {
        FILE *f = fopen(save, "wb");
        if (!f || fwrite(u, sizeof *u, count, f) != count)
            fprintf(stderr, "fig16_server: cannot write %s\n", save);
        if (f) fclose(f);
    }
    printf("{\"iterations\": %ld, \"global_syncs\": %ld, \"time_sweeps_s\": %.9g, \"device\": \"%s\", "
           "\"errors\": [",
           r.iterations, r.global_syncs, r.time_sweeps_s, r.device_name);
    for (int k = 0; k < nrefs; k++)
        printf("%s%.17g", k ? ", " : "", max_abs_diff(u, refs[k], count) / ref_max[k]);
    printf("]}\n");
    fflush(stdout);
    hr_solver_free(s);
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--backend") == 0)
            backend = strcmp(argv[i + 1], "gpu") == 0 ? HR_BACKEND_GPU : HR_BACKEND_CPU_THREADS;
        else if (strcmp(argv[i], "--n") == 0)
            n = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[i + 1]);
    }
    if (n < 1) {
        fprintf(stderr, "usage: fig16_server --backend gpu|cpu-threads --n N [--threads P]\n");
        return 2;
    }
    char line[4096], kernel[64], prec[16], path[3000];
    int alpha;
    long iters;
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "quit", 4) == 0) break;
        if (sscanf(line, "ref %2999s", path) == 1)
            load_ref(path);
        else if (sscanf(line, "save %63s %d %ld %15s %2999s", kernel, &alpha, &iters, prec, path) == 5)
            run(kernel, alpha, iters, prec, path);
        else if (sscanf(line, "run %63s %d %ld %15s", kernel, &alpha, &iters, prec) == 4)
            run(kernel, alpha, iters, prec, NULL);
        else
            answer_error("request", "unknown");
    }
    for (int k = 0; k < nrefs; k++)
        free(refs[k]);
    free(u_buf);
    return 0;
}
