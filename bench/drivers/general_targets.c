/*
 * general_targets: the general-problem engine against its targets (docs/problems.md,
 * docs/results/general.md), through the public API as a user calls it.
 *
 *   anysize   multigrid V(2,2) at extents that are not 2^k - 1 (1000 x 600, 8000^2, 500^3) against
 *             the model engine at the nearest 2^k - 1 size (1023^2, 8191^2, 511^3), and the
 *             general engine at that size too: cycles, convergence factor, warm time per unknown
 *   aniso     spacing ratios 16:1, 1:16 (2047^2) and 16:1:1 (255^3): mg and mgcg iterations to 1e-8
 *   contrast  a coefficient jump of 1e6 in a box aligned with the coarse grids and one that is not,
 *             and a log-normal field with sigma 2 (1023^2, 127^3): mgcg iterations to 1e-8
 *
 * Every case is checked (reason and the true relative residual ||b - A u|| / ||b||) before a
 * time is reported; times are the median of --repeats warm solves after a cold first one (also
 * reported, with the set-up). --quick divides the extents by 4 (a check of the program, not a
 * result). One JSON record per case with --json PATH.
 *
 *   general_targets [--section anysize|aniso|contrast|all] [--backend auto|cpu-seq|cpu-threads|gpu]
 *                   [--repeats N] [--quick] [--big] [--json PATH]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/hetrelax.h"

static FILE *json;
static int first_record = 1, failures;
static hr_backend backend = HR_BACKEND_AUTO;
static int repeats = 3, quick, big;

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Uniform in [-0.5, 0.5): a random right-hand side, the same on every run. */
static void random_f(double *f, size_t n)
{
    unsigned s = 7u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        f[i] = (double)(s >> 8) / 16777216.0 - 0.5;
    }
}

typedef struct outcome {
    long iterations, iterations_to_tol; /* the latter: the first check below tol (CG: its recurrence) */
    double factor, residual, cold_s, setup_s, warm_s, per_unknown_ns;
    hr_reason reason;
    int levels, general;
    char engine[24], device[96];
} outcome;

static void record(const char *section, const char *name, const hr_problem *p, const hr_grid_options *o,
                   const outcome *r)
{
    const size_t n = hr_problem_unknowns(p);
    printf("%-9s %-34s %-5s %-8s %8zu  its %3ld (to tol %3ld)  factor %.3f  res %.2e %-10s  warm %8.4f s "
           "(%6.1f ns/unknown)  cold %.3f s  setup %.3f s\n",
           section, name, hr_method_name(o->method), r->engine, n, r->iterations, r->iterations_to_tol,
           r->factor, r->residual, hr_reason_string(r->reason), r->warm_s, r->per_unknown_ns, r->cold_s,
           r->setup_s);
    if (!json) return;
    fprintf(json,
            "%s  {\"section\": \"%s\", \"case\": \"%s\", \"method\": \"%s\", \"engine\": \"%s\", "
            "\"backend\": \"%s\", "
            "\"device\": \"%s\", \"unknowns\": [%d, %d, %d], \"lengths\": [%g, %g, %g], \"iterations\": %ld, "
            "\"iterations_to_tol\": %ld, \"convergence_factor\": %.5f, \"relative_residual\": %.4e, "
            "\"reason\": \"%s\", "
            "\"levels\": %d, \"warm_median_s\": %.6f, \"ns_per_unknown\": %.3f, \"cold_s\": %.6f, "
            "\"setup_s\": %.6f, "
            "\"repeats\": %d}",
            first_record ? "" : ",\n", section, name, hr_method_name(o->method), r->engine,
            hr_backend_name(o->backend), r->device, p->n[0], p->n[1], p->dim == 3 ? p->n[2] : 1, p->length[0],
            p->length[1], p->dim == 3 ? p->length[2] : 0.0, r->iterations, r->iterations_to_tol, r->factor,
            r->residual, hr_reason_string(r->reason), r->levels, r->warm_s, r->per_unknown_ns, r->cold_s,
            r->setup_s, repeats);
    first_record = 0;
}

/* Creates, solves cold once and warm `repeats` times; 0 when the answer checks. */
static int run(const hr_problem *p, hr_grid_options o, double tol, outcome *r)
{
    memset(r, 0, sizeof *r);
    o.tol = tol;
    o.backend = backend;
    o.keep_history = 1;
    o.max_iters = 200;
    hr_grid_solver *s;
    if (hr_grid_solver_create(p, &o, &s) != HR_OK) {
        printf("FAIL create: %s\n", hr_last_error());
        failures++;
        return 1;
    }
    hr_grid_info info;
    hr_grid_solver_info(s, &info);
    snprintf(r->engine, sizeof r->engine, "%s", info.engine);
    r->general = info.general;
    hr_result res;
    hr_status st = hr_grid_solver_solve(s, NULL, NULL, &res);
    r->cold_s = res.time_s + res.time_setup_s;
    r->setup_s = res.time_setup_s;
    snprintf(r->device, sizeof r->device, "%s", res.device_name);
    const long *its;
    const double *hist;
    const size_t hn = hr_grid_solver_history(s, &its, &hist);
    r->iterations_to_tol = -1;
    for (size_t i = 0; i < hn; i++)
        if (hist[i] < tol) {
            r->iterations_to_tol = its[i];
            break;
        }
    double *t = malloc((size_t)(repeats > 0 ? repeats : 1) * sizeof *t);
    for (int k = 0; k < repeats && st == HR_OK; k++) {
        st = hr_grid_solver_solve(s, NULL, NULL, &res);
        t[k] = res.time_s;
    }
    if (repeats > 0) {
        qsort(t, (size_t)repeats, sizeof *t, cmp_double);
        r->warm_s = t[repeats / 2];
    } else {
        r->warm_s = res.time_s;
    }
    free(t);
    r->iterations = res.iterations;
    r->factor = res.convergence_factor;
    r->residual = res.relative_residual;
    r->reason = res.reason;
    r->levels = res.levels;
    r->per_unknown_ns = 1e9 * r->warm_s / (double)hr_problem_unknowns(p);
    hr_grid_solver_free(s);
    /* the check: converged, or (CG at high contrast) stagnated at the attainable residual */
    const int ok = st == HR_OK && (res.reason == HR_REASON_CONVERGED ||
                                   (res.reason == HR_REASON_STAGNATED && res.relative_residual < 1e3 * tol));
    if (!ok) {
        printf("FAIL: status %s, reason %s, residual %.3e\n", hr_status_string(st),
               hr_reason_string(res.reason), res.relative_residual);
        failures++;
    }
    return !ok;
}

static int scale(int n)
{
    return quick ? (n + 1) / 4 - 1 > 3 ? (n + 1) / 4 - 1 : 3 : n;
}

/* ------------------------------------------------------------------ any size */

static void anysize_pair(int dim, int gx, int gy, int gz, int m)
{
    const int ext[2][3] = {{scale(gx), scale(gy), scale(gz)}, {scale(m), scale(m), scale(m)}};
    const char *what[3] = {"general size", "2^k - 1 (model engine)", "2^k - 1 (general engine)"};
    double per[3] = {0, 0, 0};
    for (int c = 0; c < 3; c++) {
        const int *e = ext[c == 0 ? 0 : 1];
        hr_problem p;
        hr_problem_init_model(&p, dim, e[0], e[1], e[2]);
        const size_t n = hr_problem_unknowns(&p);
        double *f = malloc(n * sizeof *f);
        random_f(f, n);
        hr_problem_set_rhs(&p, HR_RHS_ARRAY, f);
        hr_grid_options o;
        hr_grid_options_default(&o);
        o.method = HR_METHOD_MG;
        if (c == 2) o.kernel = "general";
        outcome r;
        char name[96];
        snprintf(name, sizeof name, "%dx%d%s%s %s", e[0], e[1], dim == 3 ? "x" : "", dim == 3 ? "" : "",
                 what[c]);
        if (dim == 3) snprintf(name, sizeof name, "%dx%dx%d %s", e[0], e[1], e[2], what[c]);
        if (run(&p, o, 1e-8, &r) == 0) {
            record("anysize", name, &p, &o, &r);
            per[c] = r.per_unknown_ns;
            if (r.general && r.factor > 0.1) {
                printf("FAIL: convergence factor %.3f > 0.1\n", r.factor);
                failures++;
            }
        }
        free(f);
    }
    if (per[1] > 0 && per[2] > 0)
        printf("anysize   ratio of time per unknown: general size / model engine %.2f, / general engine at "
               "2^k - 1 "
               "%.2f\n",
               per[0] / per[1], per[0] / per[2]);
}

static void anysize(void)
{
    anysize_pair(2, 1000, 600, 0, 1023);
    if (big) anysize_pair(2, 8000, 8000, 0, 8191);
    anysize_pair(3, 200, 200, 200, 255);
    if (big) anysize_pair(3, 500, 500, 500, 511);
}

/* ------------------------------------------------------------------ spacing ratios */

static void aniso(void)
{
    const double L[3][3] = {{16, 1, 1}, {1, 16, 1}, {16, 1, 1}};
    for (int c = 0; c < 3; c++) {
        const int dim = c == 2 ? 3 : 2, n = scale(dim == 3 ? 255 : 2047);
        hr_problem p;
        hr_problem_init_model(&p, dim, n, n, n);
        hr_problem_set_lengths(&p, L[c][0], L[c][1], L[c][2]);
        const size_t cnt = hr_problem_unknowns(&p);
        double *f = malloc(cnt * sizeof *f);
        random_f(f, cnt);
        hr_problem_set_rhs(&p, HR_RHS_ARRAY, f);
        for (int m = 0; m < 2; m++) {
            hr_grid_options o;
            hr_grid_options_default(&o);
            o.method = m ? HR_METHOD_MGCG : HR_METHOD_MG;
            outcome r;
            char name[96];
            snprintf(name, sizeof name, "spacing %g:%g%s%s %d^%d", L[c][0], L[c][1], dim == 3 ? ":" : "",
                     dim == 3 ? "1" : "", n, dim);
            if (run(&p, o, 1e-8, &r) == 0) {
                record("aniso", name, &p, &o, &r);
                if (r.iterations > 20) {
                    printf("FAIL: %ld iterations > 20\n", r.iterations);
                    failures++;
                }
            }
        }
        free(f);
    }
}

/* ------------------------------------------------------------------ coefficient contrast */

/* a at every unknown: a box of 1e6 (aligned: [1/4, 3/4)^d on a 2^k - 1 grid's coarse points;
 * not aligned: odd fractions), or exp(2 g) with g a smooth Gaussian field of unit variance. */
static void coefficient(int kind, int dim, int n, double *a)
{
    double amp[16][4];
    unsigned s = 11u;
    for (int t = 0; t < 16; t++)
        for (int d = 0; d < 4; d++) {
            s = s * 1103515245u + 12345u;
            amp[t][d] = (double)(s >> 8) / 16777216.0;
        }
    size_t q = 0;
    const int nz = dim == 3 ? n : 1;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++, q++) {
                const double x = (i + 1.0) / (n + 1), y = (j + 1.0) / (n + 1),
                             z = dim == 3 ? (k + 1.0) / (n + 1) : 0.5;
                if (kind == 0) {
                    const int in = x >= 0.25 && x < 0.75 && y >= 0.25 && y < 0.75 && z >= 0.25 && z < 0.75;
                    a[q] = in ? 1e6 : 1.0;
                } else if (kind == 1) {
                    const int in = x >= 0.3 && x < 0.71 && y >= 0.33 && y < 0.77 && z >= 0.29 && z < 0.68;
                    a[q] = in ? 1e6 : 1.0;
                } else {
                    double g = 0.0;
                    for (int t = 0; t < 16; t++) /* random phases and wave numbers up to 4 per axis */
                        g += cos(2.0 * M_PI *
                                     ((1 + t % 4) * amp[t][0] * x + (1 + t / 4) * amp[t][1] * y +
                                      (dim == 3 ? 4.0 * amp[t][2] * z : 0.0)) +
                                 2.0 * M_PI * amp[t][3]);
                    g *= sqrt(2.0 / 16.0); /* unit variance */
                    a[q] = exp(2.0 * g);   /* sigma 2 */
                }
            }
}

static void contrast(void)
{
    const char *kinds[3] = {"box 1e6, aligned", "box 1e6, not aligned", "log-normal sigma 2"};
    for (int dim = 2; dim <= 3; dim++) {
        const int n = scale(dim == 3 ? 127 : 1023);
        for (int kind = 0; kind < 3; kind++) {
            hr_problem p;
            hr_problem_init_model(&p, dim, n, n, n);
            const size_t cnt = hr_problem_unknowns(&p);
            double *a = malloc(cnt * sizeof *a), *f = malloc(cnt * sizeof *f);
            coefficient(kind, dim, n, a);
            random_f(f, cnt);
            hr_problem_set_coef(&p, 1.0, a);
            hr_problem_set_rhs(&p, HR_RHS_ARRAY, f);
            hr_grid_options o;
            hr_grid_options_default(&o);
            o.method = HR_METHOD_MGCG;
            outcome r;
            char name[96];
            snprintf(name, sizeof name, "%s %d^%d", kinds[kind], n, dim);
            if (run(&p, o, 1e-8, &r) == 0) {
                record("contrast", name, &p, &o, &r);
                if (r.iterations_to_tol < 0 || r.iterations_to_tol > 30) {
                    printf("FAIL: %ld iterations to 1e-8 (> 30)\n", r.iterations_to_tol);
                    failures++;
                }
            }
            free(a), free(f);
        }
    }
}

int main(int argc, char **argv)
{
    const char *section = "all", *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--section") && i + 1 < argc)
            section = argv[++i];
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            const char *b = argv[++i];
            backend = !strcmp(b, "cpu-seq")       ? HR_BACKEND_CPU_SEQ
                      : !strcmp(b, "cpu-threads") ? HR_BACKEND_CPU_THREADS
                      : !strcmp(b, "gpu")         ? HR_BACKEND_GPU
                                                  : HR_BACKEND_AUTO;
        } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--big"))
            big = 1;
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json_path = argv[++i];
        else {
            fprintf(stderr, "usage: general_targets [--section anysize|aniso|contrast|all] [--backend "
                            "auto|cpu-seq|cpu-threads|gpu] [--repeats N] [--quick] [--big] [--json PATH]\n");
            return 2;
        }
    }
    if (json_path && !(json = fopen(json_path, "w"))) {
        fprintf(stderr, "general_targets: cannot write %s\n", json_path);
        return 2;
    }
    if (json) fprintf(json, "[\n");
    const int all = !strcmp(section, "all");
    if (all || !strcmp(section, "anysize")) anysize();
    if (all || !strcmp(section, "aniso")) aniso();
    if (all || !strcmp(section, "contrast")) contrast();
    if (json) {
        fprintf(json, "\n]\n");
        fclose(json);
    }
    if (failures) printf("%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
