/*
 * The C reference of bench/experiments/python_overhead.py: the calls hetrelax.Solver.solve()
 * makes, from C. One model problem (the unit square or cube, f manufactured), one
 * hr_grid_solver set up once, a warm-up, then `repeats` solves, each timed by the wall clock
 * around hr_grid_solver_solve + hr_grid_solver_solution (into one buffer, touched by the
 * warm-up). One JSON line: the wall times, the library's own time_s of each solve, the
 * iterations. Public API only.
 *
 *   grid_driver dim=2 n=4095 method=mg tol=1e-8 threads=0 repeats=5 backend=cpu|gpu
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hetrelax/hetrelax.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int dim = 2, n = 4095, threads = 0, repeats = 5;
    double tol = 1e-8;
    const char *method = "mg", *backend = "cpu";
    for (int a = 1; a < argc; a++) {
        const char *eq = strchr(argv[a], '=');
        if (!eq) {
            fprintf(stderr, "grid_driver: expected key=value, got '%s'\n", argv[a]);
            return 2;
        }
        const size_t k = (size_t)(eq - argv[a]);
        const char *v = eq + 1;
        if (k == 3 && !strncmp(argv[a], "dim", k))
            dim = atoi(v);
        else if (k == 1 && argv[a][0] == 'n')
            n = atoi(v);
        else if (k == 7 && !strncmp(argv[a], "threads", k))
            threads = atoi(v);
        else if (k == 7 && !strncmp(argv[a], "repeats", k))
            repeats = atoi(v);
        else if (k == 3 && !strncmp(argv[a], "tol", k))
            tol = atof(v);
        else if (k == 6 && !strncmp(argv[a], "method", k))
            method = v;
        else if (k == 7 && !strncmp(argv[a], "backend", k))
            backend = v;
        else {
            fprintf(stderr, "grid_driver: unknown key '%.*s'\n", (int)k, argv[a]);
            return 2;
        }
    }
    if (repeats < 1 || n < 1 || (dim != 2 && dim != 3)) {
        fprintf(stderr, "grid_driver: repeats >= 1, n >= 1, dim 2 or 3\n");
        return 2;
    }
    hr_problem p;
    if (hr_problem_init_model(&p, dim, n, n, n) != HR_OK ||
        hr_problem_set_rhs(&p, HR_RHS_MANUFACTURED, NULL)) {
        fprintf(stderr, "grid_driver: %s\n", hr_last_error());
        return 2;
    }
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.method = HR_METHOD_COUNT;
    for (int m = 0; m < HR_METHOD_COUNT; m++)
        if (!strcmp(hr_method_name((hr_method)m), method)) o.method = (hr_method)m;
    if (o.method == HR_METHOD_COUNT) {
        fprintf(stderr, "grid_driver: unknown method '%s'\n", method);
        return 2;
    }
    o.backend = !strcmp(backend, "gpu") ? HR_BACKEND_GPU : HR_BACKEND_CPU_THREADS;
    o.precision = HR_PREC_DOUBLE;
    o.threads = threads;
    o.tol = tol;
    hr_grid_solver *s;
    if (hr_grid_solver_create(&p, &o, &s) != HR_OK) {
        fprintf(stderr, "grid_driver: %s\n", hr_last_error());
        return 1;
    }
    const size_t count = hr_problem_unknowns(&p);
    double *u = malloc(count * sizeof *u);
    double *wall = calloc((size_t)repeats, sizeof *wall), *lib = calloc((size_t)repeats, sizeof *lib);
    if (!u || !wall || !lib) {
        fprintf(stderr, "grid_driver: no memory\n");
        return 1;
    }
    hr_result r;
    for (int k = -1; k < repeats; k++) {
        const double t = now();
        hr_status st = hr_grid_solver_solve(s, NULL, NULL, &r);
        if (st == HR_OK) st = hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, count);
        const double dt = now() - t;
        if (st != HR_OK) {
            fprintf(stderr, "grid_driver: %s\n", hr_grid_solver_last_error(s));
            return 1;
        }
        if (k >= 0) wall[k] = dt, lib[k] = r.time_s;
    }
    hr_grid_info gi;
    hr_grid_solver_info(s, &gi);
    printf("{\"dim\": %d, \"n\": %d, \"method\": \"%s\", \"backend\": \"%s\", \"threads\": %d, \"tol\": %g, "
           "\"iterations\": %ld, \"reason\": \"%s\", \"relative_residual\": %.6e, \"wall_s\": [",
           dim, n, method, hr_backend_name(gi.backend), gi.threads, tol, r.iterations,
           hr_reason_string(r.reason), r.relative_residual);
    for (int k = 0; k < repeats; k++)
        printf("%s%.6e", k ? ", " : "", wall[k]);
    printf("], \"time_s\": [");
    for (int k = 0; k < repeats; k++)
        printf("%s%.6e", k ? ", " : "", lib[k]);
    printf("]}\n");
    hr_grid_solver_free(s);
    free(u);
    free(wall);
    free(lib);
    return 0;
}
