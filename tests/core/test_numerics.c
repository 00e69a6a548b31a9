/* Numerical behaviour: O(h^2) discretisation error, monotone residual decrease,
 * non-zero Dirichlet boundary, residual definition. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"

static hr_result converge(int n, hr_backend b, hr_rhs rhs, double boundary)
{
    hr_options o;
    hr_options_default(&o);
    o.n = n;
    o.precision = HR_PREC_DOUBLE;
    o.backend = b;
    o.threads = 2;
    o.rhs = rhs;
    o.boundary = boundary;
    o.iters = 200000;
    o.tol = 1e-11;
    o.check_every = 200;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_int_equal(r.reason, HR_REASON_CONVERGED);
    hr_solver_free(s);
    return r;
}

static void second_order(void **state)
{
    (void)state;
    /* h = 1/16, 1/32, 1/64: the error against the exact solution falls by about 4 */
    double e[3];
    const int ns[3] = {15, 31, 63};
    for (int k = 0; k < 3; k++)
        e[k] = converge(ns[k], HR_BACKEND_CPU_THREADS, HR_RHS_MANUFACTURED, 0.0).max_error;
    for (int k = 0; k < 2; k++) {
        double ratio = e[k] / e[k + 1];
        print_message("n=%d error %.4e, n=%d error %.4e, ratio %.3f\n", ns[k], e[k], ns[k + 1], e[k + 1],
                      ratio);
        assert_true(ratio > 3.8 && ratio < 4.2);
    }
    /* and the constant: pi^2 h^2 / 12 * max|u_xxxx + u_yyyy| / (...) is about 0.82 h^2 here */
    double h = 1.0 / 64.0;
    assert_true(e[2] > 0.5 * h * h && e[2] < 1.2 * h * h);
}

static void residual_decreases(void **state)
{
    (void)state;
    for (int p = 0; p < 2; p++) {
        hr_options o;
        hr_options_default(&o);
        o.n = 64;
        o.iters = 2000;
        o.precision = (p ? HR_PREC_DOUBLE : HR_PREC_SINGLE);
        o.backend = HR_BACKEND_CPU_SEQ;
        o.monitor_every = 50;
        o.keep_history = 1;
        hr_solver *s = NULL;
        assert_int_equal(hr_solver_create(&o, &s), HR_OK);
        hr_result r;
        assert_int_equal(hr_solver_run(s, &r), HR_OK);
        const double *res;
        size_t len = hr_solver_history(s, NULL, &res);
        assert_int_equal(len, 40);
        /* Jacobi on this problem: ||r_k+1|| <= ||r_k|| (iteration matrix symmetric, rho < 1) */
        for (size_t k = 1; k < len; k++)
            assert_true(res[k] <= res[k - 1] * (1.0 + 1e-6));
        assert_true(res[len - 1] < 0.2 * res[0]);
        hr_solver_free(s);
    }
}

static void boundary_value_is_harmonic(void **state)
{
    (void)state;
    /* f = 0 with boundary 1: the exact discrete solution is 1 everywhere */
    hr_options o;
    hr_options_default(&o);
    o.n = 20;
    o.precision = HR_PREC_DOUBLE;
    o.backend = HR_BACKEND_CPU_THREADS;
    o.layout = HR_LAYOUT_BLOCKS;
    o.threads = 2;
    o.boundary = 1.0;
    double zero[400] = {0};
    o.rhs = HR_RHS_ARRAY;
    o.rhs_values = zero;
    o.iters = 100000;
    o.tol = 1e-12;
    o.check_every = 100;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_int_equal(r.reason, HR_REASON_CONVERGED);
    double u[400];
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, 400), HR_OK);
    for (int k = 0; k < 400; k++)
        assert_true(fabs(u[k] - 1.0) < 1e-9);
    hr_solver_free(s);
}

static void initial_residual_is_one(void **state)
{
    (void)state;
    /* u = 0: r = b, so the relative residual is exactly 1 for every right-hand side */
    for (int rhs = 0; rhs < 2; rhs++) {
        hr_options o;
        hr_options_default(&o);
        o.n = 10;
        o.iters = 0;
        o.backend = HR_BACKEND_CPU_SEQ;
        o.rhs = (hr_rhs)rhs;
        hr_solver *s = NULL;
        assert_int_equal(hr_solver_create(&o, &s), HR_OK);
        hr_result r;
        assert_int_equal(hr_solver_run(s, &r), HR_OK);
        assert_true(fabs(r.relative_residual - 1.0) < 1e-12);
        assert_int_equal(r.iterations, 0);
        hr_solver_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(second_order),
        cmocka_unit_test(residual_decreases),
        cmocka_unit_test(boundary_value_is_harmonic),
        cmocka_unit_test(initial_residual_is_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
