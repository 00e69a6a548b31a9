/*
 * The red-black benchmarks' driver (bench/experiments/redblack_*.py): one configuration per call on the
 * public API, one JSON object on stdout. Until `hetrelax` has --method, this is how the
 * scripts run the methods.
 *
 *   redblack_driver [--dim 2|3] [--n N] [--method jacobi|redblack|sor] [--omega W|auto]
 *       [--rhs spike|zero] [--backend cpu-seq|cpu-threads|gpu] [--kernel K] [--threads P]
 *       [--tile THxTW] [--precision single|double] [--iters T] [--tol R] [--check K]
 *       [--boundary B] [--repeats R] [--verify] [--stream] [--history] [--pageable] [--device-bw]
 *       [--stream-mib M] [--gpus N]
 *
 * Timing: R + 1 runs from the same start, the first (warm-up) discarded; every run reports
 * its sweep time; --verify first compares the solution bitwise with the sequential kernel
 * (seq or rb-seq) on the same options; --stream measures the host STREAM copy with the same
 * thread count in the same process. --gpus N: the GPUs of a kernel that runs on several
 * (rb-mgpu).
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

static void usage(const char *why)
{
    fprintf(stderr, "redblack_driver: %s\n", why);
    exit(2);
}

static double *run_once(const hr_options *o, hr_result *r, size_t count)
{
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    if (st != HR_OK) {
        fprintf(stderr, "redblack_driver: create: %s (%s)\n", hr_status_string(st), hr_last_error());
        exit(1);
    }
    st = hr_solver_run(s, r);
    if (st != HR_OK && st != HR_ERR_DIVERGED) {
        fprintf(stderr, "redblack_driver: run: %s (%s)\n", hr_status_string(st), hr_solver_last_error(s));
        exit(1);
    }
    double *u = NULL;
    if (count) {
        u = malloc(count * sizeof *u);
        if (!u || hr_solver_solution(s, HR_PREC_DOUBLE, u, count) != HR_OK) exit(1);
    }
    hr_config c;
    hr_solver_config(s, &c);
    if (o->keep_history) {
        const long *it;
        const double *res;
        const size_t len = hr_solver_history(s, &it, &res);
        printf("\"history\": [");
        for (size_t x = 0; x < len; x++)
            printf("%s[%ld, %.6e]", x ? ", " : "", it[x], res[x]);
        printf("], ");
    }
    static int printed;
    if (!printed++)
        printf("\"omega_run\": %.17g, \"threads_run\": %d, \"tile\": [%d, %d], \"kernel_run\": \"%s\", "
               "\"gpus_run\": %d, ",
               c.omega, c.threads, c.shape[1], c.shape[0], c.kernel, c.gpus);
    hr_solver_free(s);
    return u;
}

int main(int argc, char **argv)
{
    hr_options o;
    hr_options_default(&o);
    tuning_from_env(&o.tuning);
    o.iters = 50;
    o.check_every = 1;
    int repeats = 0, verify = 0, stream = 0, device_bw = 0;
    long stream_mib = 0;
    const char *tile = NULL;
    for (int a = 1; a < argc; a++) {
        const char *f = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(f, "--verify")) {
            verify = 1;
            continue;
        }
        if (!strcmp(f, "--history")) {
            o.keep_history = 1;
            continue;
        }
        if (!strcmp(f, "--pageable")) {
            o.host_memory = HR_HOST_PAGEABLE;
            continue;
        }
        if (!strcmp(f, "--device-bw")) {
            device_bw = 1;
            continue;
        }
        if (!strcmp(f, "--stream")) {
            stream = 1;
            continue;
        }
        if (!v) usage("missing value");
        a++;
        if (!strcmp(f, "--dim"))
            o.dim = atoi(v);
        else if (!strcmp(f, "--n"))
            o.n = atoi(v);
        else if (!strcmp(f, "--method"))
            o.method = !strcmp(v, "jacobi")     ? HR_METHOD_JACOBI
                       : !strcmp(v, "redblack") ? HR_METHOD_REDBLACK
                       : !strcmp(v, "sor")      ? HR_METHOD_SOR
                                                : HR_METHOD_COUNT;
        else if (!strcmp(f, "--omega"))
            o.omega = !strcmp(v, "auto") ? HR_OMEGA_AUTO : atof(v);
        else if (!strcmp(f, "--rhs"))
            o.rhs = !strcmp(v, "zero") ? HR_RHS_ZERO : HR_RHS_SPIKE;
        else if (!strcmp(f, "--backend"))
            o.backend = !strcmp(v, "cpu-seq")       ? HR_BACKEND_CPU_SEQ
                        : !strcmp(v, "cpu-threads") ? HR_BACKEND_CPU_THREADS
                        : !strcmp(v, "gpu")         ? HR_BACKEND_GPU
                                                    : HR_BACKEND_AUTO;
        else if (!strcmp(f, "--kernel"))
            o.kernel = v;
        else if (!strcmp(f, "--threads"))
            o.threads = atoi(v);
        else if (!strcmp(f, "--tile"))
            tile = v;
        else if (!strcmp(f, "--precision"))
            o.precision = !strcmp(v, "double") ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
        else if (!strcmp(f, "--iters"))
            o.iters = atol(v);
        else if (!strcmp(f, "--tol"))
            o.tol = atof(v);
        else if (!strcmp(f, "--check"))
            o.check_every = atol(v);
        else if (!strcmp(f, "--stream-mib"))
            stream_mib = atol(v);
        else if (!strcmp(f, "--boundary"))
            o.boundary = atof(v);
        else if (!strcmp(f, "--repeats"))
            repeats = atoi(v);
        else if (!strcmp(f, "--gpus"))
            o.gpus = atoi(v);
        else
            usage("unknown flag");
    }
    if (tile) {
        char err[200];
        const hr_knob *k = hri_knob_find("rb_tile");
        if (hri_knob_set(k, tile, 1, &o.tuning, err, sizeof err) != 0) usage("--tile: want ROWSxCOLS");
    }
    char why[256];
    if (hr_options_validate(&o, why, sizeof why) != HR_OK) usage(why);
    const size_t count = (size_t)o.n * (size_t)o.n * (size_t)(o.dim == 3 ? o.n : 1);
    printf("{");
    hr_result r;
    double *u = run_once(&o, &r, verify ? count : 0);
    if (verify) {
        hr_options ref = o;
        ref.backend = HR_BACKEND_CPU_SEQ;
        ref.kernel = o.method == HR_METHOD_JACOBI ? "seq" : "rb-seq";
        ref.gpus = 0;
        hr_result rr;
        double *w = run_once(&ref, &rr, count);
        printf("\"bitwise_equal_seq\": %s, ", memcmp(u, w, count * sizeof *u) == 0 ? "true" : "false");
        free(w);
    }
    free(u);
    printf("\"iterations\": %ld, \"relative_residual\": %.6e, \"reason\": \"%s\", \"time_s\": %.6f, "
           "\"time_sweeps_s\": [%.6f",
           r.iterations, r.relative_residual, hr_reason_string(r.reason), r.time_s, r.time_sweeps_s);
    for (int t = 0; t < repeats; t++) {
        run_once(&o, &r, 0);
        printf(", %.6f", r.time_sweeps_s);
    }
    printf("], \"bytes_per_point\": %g, \"flops_per_point\": %g, \"time_h2d_s\": %.6f, \"time_d2h_s\": %.6f, "
           "\"device_name\": \"%s\"",
           r.bytes_per_point, r.flops_per_point, r.time_h2d_s, r.time_d2h_s, r.device_name);
    if (device_bw) {
        double gbps = 0.0;
        if (hr_measure_device_bandwidth(o.device, 0, 10, &gbps) == HR_OK)
            printf(", \"device_copy_gbps\": %.1f", gbps);
    }
    if (stream) {
        hr_bandwidth bw;
        if (hr_measure_host_bandwidth(o.threads, (size_t)stream_mib << 20, 10, &bw) == HR_OK)
            printf(", \"stream_copy_gbps\": %.3f, \"stream_triad_gbps\": %.3f, \"stream_threads\": %d",
                   bw.copy_gbps, bw.triad_gbps, bw.threads);
    }
    printf("}\n");
    return 0;
}
