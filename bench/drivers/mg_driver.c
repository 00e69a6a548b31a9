/*
 * Benchmark driver for hetrelax multigrid / CG (bench/experiments/mg_bench.py runs it): one problem,
 * `repeats` solves on one handle (setup once), one JSON line with the median solve and
 * the per-iteration residuals of the last solve.
 *
 *   mg_driver dim=2 n=1023 method=mg|cg pc=none|mg cycle=v|w|f|fmg pre=2 post=2
 *             smoother=jacobi|redblack|cheby|async3 coarse_on=gpu|cpu coarse_level=0 levels=0
 * precision=double|single|mixed tol=1e-8 max=100 threads=0 rhs=random|spike|manufactured|zero seed=2026
 *             repeats=3 backend=cpu|gpu device=0 save_rhs=FILE
 *
 * rhs=random: f uniform in [-1, 1) from splitmix64(seed), x fastest (the same generator as
 * bench/drivers/hypre_driver.c), so both solve the same system; save_rhs=FILE writes those f values
 * (fp64, little-endian, x fastest) for other solvers. backend=gpu also reports the device's
 * name and its copy bandwidth (read + write, 256 MiB arrays) measured in the same process.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/mg.h"
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

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double *random_rhs(size_t n, uint64_t seed)
{
    double *f = malloc(n * sizeof *f);
    if (!f) return NULL;
    for (size_t i = 0; i < n; i++)
        f[i] = (double)(splitmix64(&seed) >> 11) * 0x1.0p-52 - 1.0;
    return f;
}

static int pick(const char *v, const char *const *names, int count, const char *key)
{
    for (int i = 0; i < count; i++)
        if (strcmp(v, names[i]) == 0) return i;
    fprintf(stderr, "mg_driver: %s: unknown value '%s'\n", key, v);
    exit(2);
}

#define MAXIT 4096
static double hist[MAXIT];
static long nhist;

static int monitor(long it, double rel, void *user)
{
    (void)user;
    if (it >= 1 && it <= MAXIT) hist[it - 1] = rel;
    nhist = it;
    return 0;
}

/* A JSON number, or null for NaN. */
static const char *num(double v, char *buf)
{
    if (v != v) return "null";
    snprintf(buf, 32, "%.6e", v);
    return buf;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    hr_mg_options o;
    hr_mg_options_default(&o);
    tuning_from_env(&o.tuning);
    o.max_iters = 200;
    int repeats = 3;
    uint64_t seed = 2026;
    const char *rhs = "random", *save_rhs = NULL;
    static const char *const methods[] = {"mg", "cg"}, *const pcs[] = {"none", "mg"},
                             *const cycles[] = {"v", "w", "f", "fmg"},
                             *const smoothers[] = {"jacobi", "redblack", "cheby", "async3"},
                             *const precs[] = {"default", "single", "double", "mixed"};
    for (int a = 1; a < argc; a++) {
        char key[32];
        const char *eq = strchr(argv[a], '=');
        if (!eq || eq - argv[a] >= (long)sizeof key) {
            fprintf(stderr, "mg_driver: expected key=value, got '%s'\n", argv[a]);
            return 2;
        }
        memcpy(key, argv[a], (size_t)(eq - argv[a]));
        key[eq - argv[a]] = '\0';
        const char *v = eq + 1;
        if (!strcmp(key, "dim"))
            o.dim = atoi(v);
        else if (!strcmp(key, "n"))
            o.n = atoi(v);
        else if (!strcmp(key, "method"))
            o.method = pick(v, methods, 2, key);
        else if (!strcmp(key, "pc"))
            o.pc = pick(v, pcs, 2, key);
        else if (!strcmp(key, "cycle"))
            o.cycle = pick(v, cycles, 4, key);
        else if (!strcmp(key, "pre"))
            o.pre = atoi(v);
        else if (!strcmp(key, "post"))
            o.post = atoi(v);
        else if (!strcmp(key, "smoother"))
            o.smoother = pick(v, smoothers, 4, key);
        else if (!strcmp(key, "coarse_on"))
            o.coarse_on = !strcmp(v, "cpu") ? HR_MG_COARSE_ON_CPU : HR_MG_COARSE_ON_GPU;
        else if (!strcmp(key, "coarse_level"))
            o.coarse_level = atoi(v);
        else if (!strcmp(key, "levels"))
            o.levels = atoi(v);
        else if (!strcmp(key, "precision"))
            o.precision = (hr_precision)pick(v, precs, 4, key); /* the enum's order */
        else if (!strcmp(key, "tol"))
            o.tol = atof(v);
        else if (!strcmp(key, "max"))
            o.max_iters = atol(v);
        else if (!strcmp(key, "threads"))
            o.threads = atoi(v);
        else if (!strcmp(key, "repeats"))
            repeats = atoi(v);
        else if (!strcmp(key, "seed"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(key, "rhs"))
            rhs = v;
        else if (!strcmp(key, "backend"))
            o.backend = !strcmp(v, "gpu") ? HR_MG_BACKEND_GPU : HR_MG_BACKEND_CPU;
        else if (!strcmp(key, "device"))
            o.device = atoi(v);
        else if (!strcmp(key, "save_rhs"))
            save_rhs = v;
        else {
            fprintf(stderr, "mg_driver: unknown key '%s'\n", key);
            return 2;
        }
    }
    const size_t points = (size_t)o.n * o.n * (o.dim == 3 ? (size_t)o.n : 1);
    double *f = NULL;
    if (!strcmp(rhs, "random")) {
        o.rhs = HR_RHS_ARRAY;
        o.rhs_values = f = random_rhs(points, seed);
        if (save_rhs) {
            FILE *fp = fopen(save_rhs, "wb");
            if (!fp || fwrite(f, sizeof *f, points, fp) != points || fclose(fp) != 0) {
                fprintf(stderr, "mg_driver: save_rhs: cannot write '%s'\n", save_rhs);
                return 2;
            }
        }
    } else if (!strcmp(rhs, "spike")) {
        o.rhs = HR_RHS_SPIKE;
    } else if (!strcmp(rhs, "manufactured")) {
        o.rhs = HR_RHS_MANUFACTURED;
    } else if (!strcmp(rhs, "zero")) {
        o.rhs = HR_RHS_ZERO;
    } else {
        fprintf(stderr, "mg_driver: rhs: unknown '%s'\n", rhs);
        return 2;
    }
    o.monitor = monitor;
    hr_mg *m;
    hr_status st = hr_mg_create(&o, &m);
    if (st != HR_OK) {
        fprintf(stderr, "mg_driver: %s (%s)\n", hr_mg_last_error(), hr_status_string(st));
        return 2;
    }
    if (repeats < 1) repeats = 1;
    double *times = calloc((size_t)repeats, sizeof *times);
    hr_mg_result r;
    double first_s = 0.0;
    /* a warm-up solve first (its time is first_s, not in the median) when timing repeats */
    for (int k = repeats > 1 ? -1 : 0; k < repeats; k++) {
        st = hr_mg_solve(m, &r);
        if (st != HR_OK) {
            fprintf(stderr, "mg_driver: solve: %s\n", hr_status_string(st));
            return 1;
        }
        if (k >= 0) times[k] = r.time_s;
        if (k == (repeats > 1 ? -1 : 0)) first_s = r.time_s;
    }
    qsort(times, (size_t)repeats, sizeof *times, cmp);
    char gpu[128] = "";
    double gbps = 0.0;
    if (o.backend == HR_MG_BACKEND_GPU) {
        hr_gpu_name(o.device, gpu, sizeof gpu);
        if (hr_measure_device_bandwidth(o.device, (size_t)256 << 20, 5, &gbps) != HR_OK) gbps = 0.0;
    }
    const double med = times[repeats / 2];
    char errbuf[32], cfbuf[32], lfbuf[32];
    printf("{\"dim\": %d, \"n\": %d, \"method\": \"%s\", \"pc\": \"%s\", \"cycle\": \"%s\", \"pre\": %d, "
           "\"post\": %d, \"smoother\": \"%s\", \"levels\": %d, \"precision\": \"%s\", \"rhs\": \"%s\", "
           "\"threads\": %d, \"tol\": %g, \"iterations\": %ld, \"reason\": \"%s\", \"time_s\": %.6e, "
           "\"time_min_s\": %.6e, \"first_s\": %.6e, \"repeats\": %d, \"setup_s\": %.6e, \"ns_per_unknown\": %.4f, "
           "\"relative_residual\": %.6e, \"convergence_factor\": %s, \"last_factor\": %s, "
           "\"max_error\": %s, \"coarse_on\": \"%s\", \"coarse_level\": %d, \"backend\": \"%s\", \"gpu\": "
           "\"%s\", \"device_copy_gbps\": %.1f, "
           "\"times_s\": [",
           o.dim, o.n, methods[o.method], pcs[o.pc], cycles[o.cycle], o.pre, o.post, smoothers[o.smoother],
           r.levels, precs[o.precision == HR_PREC_DEFAULT ? HR_PREC_DOUBLE : o.precision], rhs, o.threads,
           o.tol, r.iterations, hr_reason_string(r.reason), med, times[0], first_s, repeats, r.time_setup_s,
           1e9 * med / (double)points, r.relative_residual, num(r.convergence_factor, cfbuf),
           num(r.last_factor, lfbuf), num(r.max_error, errbuf),
           o.coarse_on == HR_MG_COARSE_ON_CPU ? "cpu" : "gpu", o.coarse_level,
           o.backend == HR_MG_BACKEND_GPU ? "gpu" : "cpu", gpu, gbps);
    for (int k = 0; k < repeats; k++)
        printf("%s%.6e", k ? ", " : "", times[k]);
    printf("], \"history\": [");
    for (long i = 0; i < nhist && i < MAXIT; i++)
        printf("%s%.4e", i ? ", " : "", hist[i]);
    printf("]}\n");
    hr_mg_free(m);
    free(times);
    free(f);
    return 0;
}
