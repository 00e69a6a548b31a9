/* The operator layer: 3-D 7-point problem and rectangular 2-D grids through the public API,
 * the weighted update, the sine eigenmode, the scaled residual norms, the driver's
 * divergence reasons, restarts, introspection and bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"

static hr_options base(int dim, int nx, int ny, int nz, hr_backend b)
{
    hr_options o;
    hr_options_default(&o);
    o.dim = dim;
    o.nx = nx;
    o.ny = ny;
    o.nz = nz;
    o.backend = b;
    o.precision = HR_PREC_DOUBLE;
    o.threads = 2;
    return o;
}

static double *solve(const hr_options *o, hr_result *r)
{
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    if (st != HR_OK) fail_msg("create: %s (%s)", hr_status_string(st), hr_last_error());
    assert_int_equal(hr_solver_run(s, r), HR_OK);
    const size_t count = (size_t)r->nx * r->ny * r->nz;
    double *u = malloc(count * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, count), HR_OK);
    hr_solver_free(s);
    return u;
}

/* u0 = sine mode, f = 0: after T sweeps u = lambda^T u0 up to rounding (max_error). */
static void sine_mode_decays_by_lambda(void **state)
{
    (void)state;
    const int ext[][3] = {{7, 5, 9}, {16, 16, 16}, {1, 64, 5}};
    for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
        for (int w = 0; w < 2; w++) {
            hr_options o = base(3, ext[e][0], ext[e][1], ext[e][2], HR_BACKEND_CPU_SEQ);
            o.rhs = HR_RHS_ZERO;
            o.init = HR_INIT_SINE;
            o.iters = 50;
            o.omega = w ? 0.8 : 1.0;
            hr_result r;
            free(solve(&o, &r));
            print_message("3-D %dx%dx%d omega %.1f: max error vs lambda^T u0 %.3e\n", r.nx, r.ny, r.nz,
                          o.omega, r.max_error);
            assert_true(r.max_error < 1e-13);
        }
    hr_options o = base(2, 9, 30, 0, HR_BACKEND_CPU_SEQ);
    o.rhs = HR_RHS_ZERO;
    o.init = HR_INIT_SINE;
    o.iters = 100;
    hr_result r;
    free(solve(&o, &r));
    assert_true(r.max_error < 1e-13);
}

/* The manufactured 3-D solution: the error falls by about 4 per halving of h. */
static void manufactured_3d_second_order(void **state)
{
    (void)state;
    const int ns[3] = {7, 15, 31};
    double e[3];
    for (int k = 0; k < 3; k++) {
        hr_options o = base(3, ns[k], ns[k], ns[k], HR_BACKEND_CPU_SEQ);
        o.rhs = HR_RHS_MANUFACTURED;
        o.iters = 100000;
        o.tol = 1e-12;
        o.check_every = 50;
        hr_result r;
        free(solve(&o, &r));
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        e[k] = r.max_error;
    }
    for (int k = 0; k < 2; k++) {
        const double ratio = e[k] / e[k + 1];
        print_message("3-D n=%d error %.4e, n=%d error %.4e, ratio %.3f\n", ns[k], e[k], ns[k + 1], e[k + 1],
                      ratio);
        assert_true(ratio > 3.7 && ratio < 4.3);
    }
}

/* One weighted sweep is (1 - omega) u + omega jacobi(u), from the formula by hand. */
static void omega_matches_formula(void **state)
{
    (void)state;
    const int nx = 6, ny = 5, nz = 4;
    hr_options o = base(3, nx, ny, nz, HR_BACKEND_CPU_SEQ);
    o.rhs = HR_RHS_ZERO;
    o.init = HR_INIT_SINE;
    o.iters = 1;
    o.omega = 0.7;
    hr_result r;
    double *u = solve(&o, &r);
    const double pi = 3.14159265358979323846;
    for (int k = 1; k <= nz; k++)
        for (int i = 1; i <= ny; i++)
            for (int j = 1; j <= nx; j++) {
#define U0(ii, jj, kk)                                                                                       \
    ((ii) < 1 || (ii) > ny || (jj) < 1 || (jj) > nx || (kk) < 1 || (kk) > nz                                 \
         ? 0.0                                                                                               \
         : sin(pi * (ii) / (ny + 1.0)) * sin(pi * (jj) / (nx + 1.0)) * sin(pi * (kk) / (nz + 1.0)))
                const double jac = (U0(i, j - 1, k) + U0(i, j + 1, k) + U0(i - 1, j, k) + U0(i + 1, j, k) +
                                    U0(i, j, k - 1) + U0(i, j, k + 1)) /
                                   6.0;
                const double want = 0.3 * U0(i, j, k) + 0.7 * jac;
                const double got = u[((size_t)(k - 1) * ny + (i - 1)) * nx + (j - 1)];
                assert_true(fabs(got - want) < 1e-15);
#undef U0
            }
    free(u);
}

/* Rectangular 2-D grids: cpu-threads (every kernel that runs them) bitwise equal to cpu-seq. */
static void rectangular_2d_bitwise(void **state)
{
    (void)state;
    const int ext[][2] = {{17, 5}, {3, 40}, {64, 1}, {1, 9}};
    const char *kernels[] = {"spmd", "spmd-nt", "blocks"};
    for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
        for (int p = 0; p < 2; p++) {
            hr_options o = base(2, ext[e][0], ext[e][1], 0, HR_BACKEND_CPU_SEQ);
            o.precision = p ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
            o.iters = 37;
            o.boundary = 1.0;
            hr_result r;
            double *want = solve(&o, &r);
            for (size_t q = 0; q < 3; q++)
                for (int t = 1; t <= 3; t++) {
                    hr_options ot = o;
                    ot.backend = HR_BACKEND_CPU_THREADS;
                    ot.kernel = kernels[q];
                    ot.threads = t;
                    double *got = solve(&ot, &r);
                    if (memcmp(got, want, (size_t)r.nx * r.ny * sizeof *got) != 0)
                        fail_msg("%s %dx%d threads %d differs from cpu-seq", kernels[q], r.nx, r.ny, t);
                    free(got);
                }
            free(want);
        }
}

/* Huge values do not overflow the residual norms; the reasons tell growth from NaN. */
static void scaled_norms_and_reasons(void **state)
{
    (void)state;
    hr_options o = base(2, 16, 16, 0, HR_BACKEND_CPU_SEQ);
    o.boundary = 1e200;
    o.iters = 100;
    o.tol = 1e-12;
    o.check_every = 10;
    hr_result r;
    free(solve(&o, &r));
    assert_true(isfinite(r.relative_residual) && r.relative_residual > 1e-3);
    assert_int_equal(r.reason, HR_REASON_ITERS);
    /* tiny values likewise: the relative residual does not underflow to 0 */
    o.boundary = 1e-200;
    free(solve(&o, &r));
    assert_true(r.relative_residual > 1e-3);
    /* subnormal values (1 / max |r| overflows): a relative residual, not NaN, on every CPU
     * path, Jacobi and red-black, a subnormal right-hand side or boundary */
    for (int dim = 2; dim <= 3; dim++)
        for (int b = 0; b < 3; b++)
            for (int m = 0; m < 2; m++)
                for (int which = 0; which < 2; which++) {
                    hr_options t = base(dim, 24, 20, dim == 3 ? 12 : 0,
                                        b == 0 ? HR_BACKEND_CPU_SEQ : HR_BACKEND_CPU_THREADS);
                    if (b == 2 && dim == 2) t.layout = HR_LAYOUT_BLOCKS;
                    t.method = m ? HR_METHOD_REDBLACK : HR_METHOD_JACOBI;
                    const size_t count = (size_t)24 * 20 * (dim == 3 ? 12 : 1);
                    double *f = malloc(count * sizeof *f);
                    assert_non_null(f);
                    for (size_t i = 0; i < count; i++)
                        f[i] = 1e-310;
                    if (which) {
                        t.rhs = HR_RHS_ZERO;
                        t.boundary = 1e-310;
                    } else {
                        t.rhs = HR_RHS_ARRAY;
                        t.rhs_values = f;
                    }
                    t.iters = 100;
                    t.tol = 1e-12;
                    t.check_every = 10;
                    free(solve(&t, &r));
                    print_message("%d-D backend %d method %d %s 1e-310: %s, relative residual %.3e\n", dim, b,
                                  m, which ? "boundary" : "rhs", hr_reason_string(r.reason),
                                  r.relative_residual);
                    assert_int_equal(r.reason, HR_REASON_ITERS);
                    assert_true(r.relative_residual > 1e-6 && r.relative_residual < 1.0);
                    free(f);
                }
    /* the omega near 2 weighted Jacobi grows: a divergence, by growth not NaN */
    o = base(2, 32, 32, 0, HR_BACKEND_CPU_SEQ);
    o.omega = 1.95;
    o.iters = 20000;
    o.tol = 1e-12;
    o.check_every = 10;
    o.divtol = 10;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_run(s, &r), HR_ERR_DIVERGED);
    assert_int_equal(r.reason, HR_REASON_DIVERGED);
    hr_solver_free(s);
    /* with the default tolerance the growth is caught within a few checks, as growth (a
     * threshold raised towards 1e300 would only see the NaN much later) */
    o.divtol = 0.0;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_run(s, &r), HR_ERR_DIVERGED);
    assert_int_equal(r.reason, HR_REASON_DIVERGED);
    assert_true(r.iterations <= 20);
    assert_true(isfinite(r.relative_residual));
    hr_solver_free(s);
}

/* A restart from a solution continues bitwise as the uninterrupted run. */
static void restart_is_bitwise(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++) {
        hr_options o =
            base(dim, 13, 11, dim == 3 ? 7 : 0, dim == 3 ? HR_BACKEND_CPU_SEQ : HR_BACKEND_CPU_THREADS);
        o.iters = 60;
        hr_result r;
        double *want = solve(&o, &r);
        const size_t count = (size_t)r.nx * r.ny * r.nz;
        o.iters = 25;
        hr_solver *s = NULL;
        assert_int_equal(hr_solver_create(&o, &s), HR_OK);
        assert_int_equal(hr_solver_run(s, &r), HR_OK);
        double *mid = malloc(count * sizeof *mid), *got = malloc(count * sizeof *got);
        assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, mid, count), HR_OK);
        hr_solver_free(s);
        assert_int_equal(hr_solver_create(&o, &s), HR_OK);
        assert_int_equal(hr_solver_set_solution(s, HR_PREC_DOUBLE, mid, count, 25), HR_OK);
        assert_int_equal(hr_solver_sweeps_done(s), 25);
        hr_options rest = o;
        (void)rest;
        /* run the remaining 35 sweeps: iters is per run */
        hr_solver_free(s);
        o.iters = 35;
        assert_int_equal(hr_solver_create(&o, &s), HR_OK);
        assert_int_equal(hr_solver_set_solution(s, HR_PREC_DOUBLE, mid, count, 25), HR_OK);
        assert_int_equal(hr_solver_run(s, &r), HR_OK);
        assert_int_equal(hr_solver_sweeps_done(s), 60);
        assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, got, count), HR_OK);
        assert_memory_equal(got, want, count * sizeof *got);
        hr_solver_free(s);
        free(mid);
        free(got);
        free(want);
    }
}

/* Chunks of hr_solver_run_sweeps add up to one run; a stop request ends a run early. */
static void chunks_and_stop(void **state)
{
    (void)state;
    hr_options o = base(2, 21, 13, 0, HR_BACKEND_CPU_THREADS);
    o.iters = 60;
    hr_result r;
    double *want = solve(&o, &r);
    const size_t count = (size_t)r.nx * r.ny;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_run_sweeps(s, 25, &r), HR_OK);
    assert_int_equal(r.iterations, 25);
    assert_true(isnan(r.relative_residual)); /* no check was due */
    assert_int_equal(hr_solver_run_sweeps(s, 35, &r), HR_OK);
    assert_int_equal(hr_solver_sweeps_done(s), 60);
    double *got = malloc(count * sizeof *got);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, got, count), HR_OK);
    assert_memory_equal(got, want, count * sizeof *got);
    /* a request made between runs stops the next one after its first chunk */
    hr_solver_request_stop(s);
    o.iters = 1000;
    assert_int_equal(hr_solver_run_sweeps(s, 1000, &r), HR_OK);
    assert_int_equal(r.reason, HR_REASON_STOPPED);
    assert_true(r.iterations < 1000);
    /* and is answered: the next run goes to its end */
    assert_int_equal(hr_solver_run_sweeps(s, 100, &r), HR_OK);
    assert_int_equal(r.iterations, 100);
    hr_solver_request_stop(NULL);
    hr_solver_free(s);
    free(got);
    free(want);
}

static void introspection(void **state)
{
    (void)state;
    int found3d = 0;
    for (int i = 0; i < hr_kernel_count(); i++) {
        hr_kernel_info k;
        assert_int_equal(hr_kernel_info_at(i, &k), HR_OK);
        assert_non_null(k.name);
        assert_true(k.caps & (HR_CAP_2D | HR_CAP_3D));
        if (k.backend == HR_BACKEND_CPU_SEQ && (k.caps & HR_CAP_3D)) found3d = 1;
    }
    assert_true(found3d);
    assert_int_equal(hr_kernel_info_at(hr_kernel_count(), NULL), HR_ERR_INVALID_ARG);
    assert_string_equal(hr_kernel_default(HR_BACKEND_CPU_SEQ, 3), "seq");
    hr_options o = base(2, 20, 10, 0, HR_BACKEND_CPU_THREADS);
    o.threads = 2;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_config c;
    assert_int_equal(hr_solver_config(s, &c), HR_OK);
    assert_int_equal(c.threads, 2);
    assert_int_equal(c.thread_rows * c.thread_cols, 2);
    assert_int_equal(c.nx, 20);
    assert_int_equal(c.ny, 10);
    assert_int_equal(c.device, -1);
    hr_solver_free(s);
    assert_int_equal(hr_solver_config(NULL, &c), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_history(NULL, NULL, NULL), 0);
}

static void bad_input(void **state)
{
    (void)state;
    char why[256];
    hr_options o = base(2, 8, 8, 4, HR_BACKEND_CPU_SEQ);
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_true(strncmp(why, "nz:", 3) == 0);
    o = base(3, 8, -1, 4, HR_BACKEND_CPU_SEQ);
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_true(strncmp(why, "ny:", 3) == 0);
    o = base(2, 8, 8, 0, HR_BACKEND_CPU_SEQ);
    o.omega = 2.0;
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    o.omega = 1.0;
    o.thread_rows = 65536;
    o.thread_cols = 65536;
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    o = base(2, 8, 8, 0, HR_BACKEND_CPU_SEQ);
    o.precision = HR_PREC_SINGLE;
    o.boundary = 1e39;
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    /* a 3-D grid that cannot fit in memory is refused before allocation */
    o = base(3, 100000, 100000, 100000, HR_BACKEND_CPU_SEQ);
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_NO_MEMORY);
    assert_null(s);
    /* a kernel that runs square grids only says so */
    o = base(2, 8, 9, 0, HR_BACKEND_CPU_THREADS);
    o.kernel = "spmd-nt";
    o.omega = 0.5;
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
    assert_true(strncmp(hr_last_error(), "omega:", 6) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sine_mode_decays_by_lambda),
        cmocka_unit_test(manufactured_3d_second_order),
        cmocka_unit_test(omega_matches_formula),
        cmocka_unit_test(rectangular_2d_bitwise),
        cmocka_unit_test(scaled_norms_and_reasons),
        cmocka_unit_test(restart_is_bitwise),
        cmocka_unit_test(introspection),
        cmocka_unit_test(chunks_and_stop),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
