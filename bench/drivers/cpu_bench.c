/*
 * One CPU benchmark configuration on the public API, for bench/experiments/cpu2d.py and
 * bench/experiments/cpu3d.py (plain C, no json-c, so it builds where the CLI cannot:
 * `cc -O3 -march=native -ffp-contract=off -Iinclude -Isrc
 * src/{common,problem,cpu,solver,sparse}/NAME.c bench/drivers/cpu_bench.c`).
 *
 * 1. the STREAM reference with the run's thread count and binding (best, min, median);
 * 2. the answer first: `check` sweeps of the kernel against cpu-seq, bitwise;
 * 3. one warm-up run of `iters` sweeps, then `repeats` timed runs on the same solver:
 *    median, min and max GB/s (byte model of hr_result: u read + u' written per point), each
 *    followed by a copy probe (best of 3) under the same load: the median, min and max of
 *    these paired fractions, and the best run over the best copy seen;
 * 4. the STREAM reference again after the runs (drift);
 * and prints one JSON object. Sine initial data and zero rhs (Sourouri et al.'s problem): the
 * error against lambda^T u0 is reported too.
 *
 * usage: cpu_bench DIM NX NY NZ single|double BACKEND KERNEL THREADS none|core ITERS REPEATS
 *        [STREAM_MIB (0: library default)] [tune]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/hetrelax.h"
#include "tuning_env.h"

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

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *solution(hr_solver *s, const hr_options *o, size_t count)
{
    const size_t es = o->precision == HR_PREC_DOUBLE ? 8 : 4;
    void *u = malloc(count * es);
    if (u && hr_solver_solution(s, o->precision, u, count) != HR_OK) {
        free(u);
        u = NULL;
    }
    return u;
}

static int die(const char *what, hr_status st, const char *detail)
{
    fprintf(stderr, "cpu_bench: %s: %s %s\n", what, hr_status_string(st), detail ? detail : "");
    return 1;
}

static void print_bw(const char *name, const hr_bandwidth *b)
{
    printf("\"%s\": {\"copy_gbps\": %.3f, \"copy_gbps_min\": %.3f, \"copy_gbps_median\": %.3f, "
           "\"triad_gbps\": %.3f, \"triad_gbps_min\": %.3f, \"triad_gbps_median\": %.3f, \"bytes\": %zu, "
           "\"threads\": %d, \"repeats\": %d, \"bind\": \"%s\"}",
           name, b->copy_gbps, b->copy_gbps_min, b->copy_gbps_median, b->triad_gbps, b->triad_gbps_min,
           b->triad_gbps_median, b->bytes, b->threads, b->repeats, b->bind == HR_BIND_CORE ? "core" : "none");
}

int main(int argc, char **argv)
{
    if (argc < 12) {
        fprintf(stderr, "usage: cpu_bench DIM NX NY NZ single|double BACKEND KERNEL THREADS none|core ITERS "
                        "REPEATS [STREAM_MIB] [tune]\n");
        return 2;
    }
    hr_options o;
    hr_options_default(&o);
    tuning_from_env(&o.tuning);
    o.dim = atoi(argv[1]);
    o.nx = atoi(argv[2]);
    o.ny = atoi(argv[3]);
    o.nz = o.dim == 3 ? atoi(argv[4]) : 0;
    o.precision = strcmp(argv[5], "double") == 0 ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
    o.backend = strcmp(argv[6], "cpu-seq") == 0 ? HR_BACKEND_CPU_SEQ : HR_BACKEND_CPU_THREADS;
    o.kernel = strcmp(argv[7], "default") == 0 ? NULL : argv[7];
    o.threads = atoi(argv[8]);
    o.bind = strcmp(argv[9], "core") == 0 ? HR_BIND_CORE : HR_BIND_NONE;
    o.iters = atol(argv[10]);
    const int repeats = atoi(argv[11]);
    const size_t stream_bytes = argc > 12 ? (size_t)atol(argv[12]) << 20 : 0;
    const int tune = argc > 13 && strcmp(argv[13], "tune") == 0;
    o.rhs = HR_RHS_ZERO;
    o.init = HR_INIT_SINE;
    o.tol = 0.0;
    const char *tg = getenv("CPU_BENCH_THREAD_GRID"); /* RxC: the kernel's thread grid */
    if (tg && sscanf(tg, "%dx%d", &o.thread_rows, &o.thread_cols) == 2)
        o.threads = o.thread_rows * o.thread_cols;
    const int threads = o.backend == HR_BACKEND_CPU_SEQ ? 1 : o.threads;
    if (repeats < 1 || repeats > 1000 || o.iters < 1) return 2;

    hr_bandwidth bw0, bw1;
    hr_status st = hr_measure_host_bandwidth_bound(threads, o.bind, stream_bytes, 10, &bw0);
    if (st != HR_OK) return die("stream", st, NULL);
    o.reference_gbps = bw0.copy_gbps;

    hr_cpu_tune_result tr = {0};
    char err[256] = "";
    if (tune && (st = hr_cpu_tune(&o, 0, NULL, &tr, err, sizeof err)) != HR_OK) return die("tune", st, err);

    /* the answer first: 3 sweeps against cpu-seq */
    hr_options ck = o, ref = o;
    ck.iters = ref.iters = 3;
    ref.backend = HR_BACKEND_CPU_SEQ;
    ref.kernel = NULL;
    const size_t count = (size_t)o.nx * o.ny * (o.dim == 3 ? o.nz : 1);
    const size_t bytes = count * (o.precision == HR_PREC_DOUBLE ? 8 : 4);
    hr_solver *a = NULL, *b = NULL;
    if ((st = hr_solver_create(&ck, &a)) != HR_OK) return die("create", st, hr_last_error());
    if ((st = hr_solver_create(&ref, &b)) != HR_OK) return die("create cpu-seq", st, hr_last_error());
    if (hr_solver_run(a, NULL) != HR_OK || hr_solver_run(b, NULL) != HR_OK) return die("check run", st, NULL);
    void *ua = solution(a, &o, count), *ub = solution(b, &o, count);
    if (!ua || !ub) return die("solution", HR_ERR_NO_MEMORY, NULL);
    const int bitwise = memcmp(ua, ub, bytes) == 0;
    free(ua);
    free(ub);
    hr_solver_free(a);
    hr_solver_free(b);
    if (!bitwise) {
        fprintf(stderr, "cpu_bench: %s %s differs from cpu-seq after 3 sweeps\n", argv[6], argv[7]);
        return 1;
    }

    hr_solver *s = NULL;
    if ((st = hr_solver_create(&o, &s)) != HR_OK) return die("create", st, hr_last_error());
    hr_config cfg;
    hr_solver_config(s, &cfg);
    hr_result r;
    if ((st = hr_solver_run(s, &r)) != HR_OK) return die("warm-up", st, hr_solver_last_error(s));
    double *g = malloc(sizeof(double) * (size_t)repeats), *tps = malloc(sizeof(double) * (size_t)repeats);
    /* each timed run is paired with a copy probe (best of 3) right after it, so that on a shared
     * machine every run has a reference taken under the same load */
    double *pair = malloc(sizeof(double) * (size_t)repeats), best_copy = bw0.copy_gbps;
    for (int k = 0; k < repeats; k++) {
        if ((st = hr_solver_run(s, &r)) != HR_OK) return die("run", st, hr_solver_last_error(s));
        g[k] = r.gbps;
        tps[k] = r.time_per_sweep_s;
        hr_bandwidth bp;
        if ((st = hr_measure_host_bandwidth_bound(threads, o.bind, stream_bytes, 3, &bp)) != HR_OK)
            return die("stream (paired)", st, NULL);
        pair[k] = g[k] / bp.copy_gbps;
        if (bp.copy_gbps > best_copy) best_copy = bp.copy_gbps;
    }
    if ((st = hr_measure_host_bandwidth_bound(threads, o.bind, stream_bytes, 10, &bw1)) != HR_OK)
        return die("stream (after)", st, NULL);
    if (bw1.copy_gbps > best_copy) best_copy = bw1.copy_gbps;
    qsort(pair, (size_t)repeats, sizeof *pair, cmp_d);
    const double pair_med =
        repeats % 2 ? pair[repeats / 2] : 0.5 * (pair[repeats / 2 - 1] + pair[repeats / 2]);
    qsort(g, (size_t)repeats, sizeof *g, cmp_d);
    qsort(tps, (size_t)repeats, sizeof *tps, cmp_d);
    const double med = repeats % 2 ? g[repeats / 2] : 0.5 * (g[repeats / 2 - 1] + g[repeats / 2]);
    const double tmed = repeats % 2 ? tps[repeats / 2] : 0.5 * (tps[repeats / 2 - 1] + tps[repeats / 2]);
    hr_sysinfo si;
    hr_sysinfo_get(&si);
    printf("{\"dim\": %d, \"nx\": %d, \"ny\": %d, \"nz\": %d, \"precision\": \"%s\", \"backend\": \"%s\", "
           "\"kernel\": \"%s\", \"threads\": %d, \"thread_grid\": [%d, %d], \"bind\": \"%s\", "
           "\"shape\": [%d, %d, %d], \"shape_source\": \"%s\", \"iters\": %ld, \"repeats\": %d, "
           "\"verified_bitwise\": true, \"max_error\": %.3e, \"bytes_per_point\": %.0f, "
           "\"flops_per_point\": %.0f, \"time_per_sweep_s_median\": %.6e, \"gflops_median\": %.3f, "
           "\"gbps_median\": %.3f, \"gbps_min\": %.3f, \"gbps_max\": %.3f, \"fraction_of_copy\": %.4f, "
           "\"fraction_of_copy_end\": %.4f, \"cpu\": \"%s\", \"cores\": %d, \"hwloc\": %d, ",
           o.dim, o.nx, o.ny, o.dim == 3 ? o.nz : 1, argv[5], r.backend, r.kernel, cfg.threads,
           cfg.thread_rows, cfg.thread_cols, argv[9], cfg.shape[0], cfg.shape[1], cfg.shape[2],
           cfg.shape_source, o.iters, repeats, r.max_error, r.bytes_per_point, r.flops_per_point, tmed,
           r.flops_per_point * (double)count / tmed * 1e-9, med, g[0], g[repeats - 1], med / bw0.copy_gbps,
           med / bw1.copy_gbps, si.cpu_model, si.cores, si.have_hwloc);
    printf("\"fraction_paired_median\": %.4f, \"fraction_paired_min\": %.4f, \"fraction_paired_max\": %.4f, "
           "\"best_copy_gbps\": %.3f, \"fraction_best_over_best_copy\": %.4f, ",
           pair_med, pair[0], pair[repeats - 1], best_copy, g[repeats - 1] / best_copy);
    free(pair);
    if (tune)
        printf("\"tuned\": {\"block\": [%d, %d, %d], \"stream\": %d, \"best_gbps\": %.3f, \"default_gbps\": "
               "%.3f, "
               "\"candidates\": %d}, ",
               tr.block[0], tr.block[1], tr.block[2], tr.stream, tr.best_gbps, tr.default_gbps,
               tr.candidates);
    print_bw("stream", &bw0);
    printf(", ");
    print_bw("stream_end", &bw1);
    printf("}\n");
    free(g);
    free(tps);
    hr_solver_free(s);
    return 0;
}
