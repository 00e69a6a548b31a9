/*
 * The C reference of bench/experiments/python_overhead.py: the calls hetrelax.Solver.solve()
 * makes, from C. One model problem (the unit square or cube), one hr_grid_solver set up once,
 * a warm-up, then `repeats` solves, each timed by the wall clock around the calls:
 *   arrays=none    f manufactured (the problem's own): hr_grid_solver_solve + _solution into
 *                  one buffer, touched by the warm-up;
 *   arrays=host    f = 0 in the problem, every solve given the same random f (uniform in [0, 1),
 *                  fixed seed): hr_grid_solver_solve(f) + _solution;
 *   arrays=device  the same f in the GPU's memory, the solution written there:
 *                  hr_grid_solver_solve_device (a build with CUDA, backend gpu).
 * One JSON line: the wall times, the library's own time_s of each solve, the iterations.
 * Public API only.
 *
 *   grid_driver dim=2 n=4095 method=mg tol=1e-8 threads=0 repeats=5 backend=cpu|gpu
 *               precision=double|mixed|single arrays=none|host|device
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hetrelax/hetrelax.h"
#ifdef HR_DRIVER_CUDA
#include <cuda_runtime_api.h>
#endif

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
    const char *method = "mg", *backend = "cpu", *arrays = "none", *precision = "double";
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
        else if (k == 6 && !strncmp(argv[a], "arrays", k))
            arrays = v;
        else if (k == 9 && !strncmp(argv[a], "precision", k))
            precision = v;
        else {
            fprintf(stderr, "grid_driver: unknown key '%.*s'\n", (int)k, argv[a]);
            return 2;
        }
    }
    if (repeats < 1 || n < 1 || (dim != 2 && dim != 3)) {
        fprintf(stderr, "grid_driver: repeats >= 1, n >= 1, dim 2 or 3\n");
        return 2;
    }
    const int given = !strcmp(arrays, "host") ? 1 : !strcmp(arrays, "device") ? 2 : !strcmp(arrays, "none") ? 0 : -1;
    if (given < 0) {
        fprintf(stderr, "grid_driver: arrays none, host or device\n");
        return 2;
    }
#ifndef HR_DRIVER_CUDA
    if (given == 2) {
        fprintf(stderr, "grid_driver: arrays=device needs a build with CUDA\n");
        return 2;
    }
#endif
    hr_problem p;
    if (hr_problem_init_model(&p, dim, n, n, n) != HR_OK ||
        hr_problem_set_rhs(&p, given ? HR_RHS_ZERO : HR_RHS_MANUFACTURED, NULL)) {
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
    o.precision = !strcmp(precision, "mixed") ? HR_PREC_MIXED : !strcmp(precision, "single") ? HR_PREC_SINGLE
                                                                                             : HR_PREC_DOUBLE;
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
    double *f = NULL;
    void *df = NULL, *dx = NULL;
    if (given) {
        if (!(f = malloc(count * sizeof *f))) return 1;
        uint64_t x = 2026;
        for (size_t i = 0; i < count; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            f[i] = (double)(x >> 11) * 0x1.0p-53;
        }
    }
#ifdef HR_DRIVER_CUDA
    if (given == 2 && (cudaMalloc(&df, count * sizeof *f) != cudaSuccess ||
                       cudaMalloc(&dx, count * sizeof *f) != cudaSuccess ||
                       cudaMemcpy(df, f, count * sizeof *f, cudaMemcpyHostToDevice) != cudaSuccess)) {
        fprintf(stderr, "grid_driver: no device memory for the arrays\n");
        return 1;
    }
#endif
    hr_device_arrays da = {HR_PREC_DOUBLE, df, NULL, dx, NULL};
    hr_result r;
    for (int k = -1; k < repeats; k++) {
        const double t = now();
        hr_status st;
        if (given == 2) {
            st = hr_grid_solver_solve_device(s, &da, &r);
        } else {
            st = hr_grid_solver_solve(s, f, NULL, &r);
            if (st == HR_OK) st = hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, count);
        }
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
           "\"precision\": \"%s\", \"arrays\": \"%s\", "
           "\"iterations\": %ld, \"reason\": \"%s\", \"relative_residual\": %.6e, \"wall_s\": [",
           dim, n, method, hr_backend_name(gi.backend), gi.threads, tol, hr_precision_name(gi.precision), arrays,
           r.iterations, hr_reason_string(r.reason), r.relative_residual);
    for (int k = 0; k < repeats; k++)
        printf("%s%.6e", k ? ", " : "", wall[k]);
    printf("], \"time_s\": [");
    for (int k = 0; k < repeats; k++)
        printf("%s%.6e", k ? ", " : "", lib[k]);
    printf("]}\n");
    hr_grid_solver_free(s);
#ifdef HR_DRIVER_CUDA
    cudaFree(df);
    cudaFree(dx);
#endif
    free(f);
    free(u);
    free(wall);
    free(lib);
    return 0;
}
