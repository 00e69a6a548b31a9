/* The public API: version, status strings, option validation, handle life cycle,
 * monitor, history and solution access. Uses only the public header. */
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

static void version(void **state)
{
    (void)state;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", HR_VERSION_MAJOR, HR_VERSION_MINOR, HR_VERSION_PATCH);
    assert_string_equal(hr_version_string(), want);
    assert_int_equal(hr_version_number(), HR_VERSION_NUMBER);
}

static void status_strings_distinct(void **state)
{
    (void)state;
    for (int a = 0; a < HR_STATUS_COUNT; a++) {
        assert_true(strlen(hr_status_string((hr_status)a)) > 0);
        for (int b = 0; b < a; b++)
            assert_string_not_equal(hr_status_string((hr_status)a), hr_status_string((hr_status)b));
    }
    assert_string_equal(hr_status_string((hr_status)999), "unknown status");
}

static void expect_invalid(const hr_options *o, const char *field)
{
    char why[160] = "";
    assert_int_equal(hr_options_validate(o, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, field));
    hr_solver *s = (hr_solver *)0x1;
    assert_int_equal(hr_solver_create(o, &s), HR_ERR_INVALID_ARG);
    assert_null(s);
    assert_non_null(strstr(hr_last_error(), field));
}

static void validation(void **state)
{
    (void)state;
    hr_options d, o;
    hr_options_default(&d);
    assert_int_equal(hr_options_validate(&d, NULL, 0), HR_OK);
    o = d;
    o.n = 0;
    expect_invalid(&o, "n");
    o = d;
    o.n = -5;
    expect_invalid(&o, "n");
    o = d;
    o.n = 2000000;
    expect_invalid(&o, "n");
    o = d;
    o.iters = -1;
    expect_invalid(&o, "iters");
    o = d;
    o.tol = -1e-3;
    expect_invalid(&o, "tol");
    o = d;
    o.tol = NAN;
    expect_invalid(&o, "tol");
    o = d;
    o.tol = 1e-6;
    o.check_every = 0;
    expect_invalid(&o, "check");
    o = d;
    o.precision = (hr_precision)7;
    expect_invalid(&o, "precision");
    o = d;
    o.backend = HR_BACKEND_COUNT;
    expect_invalid(&o, "backend");
    o = d;
    o.threads = -1;
    expect_invalid(&o, "threads");
    o = d;
    o.thread_rows = 2;
    expect_invalid(&o, "thread-grid");
    o = d;
    o.threads = 3;
    o.thread_rows = 2;
    o.thread_cols = 2;
    expect_invalid(&o, "thread-grid");
    o = d;
    o.rhs = HR_RHS_ARRAY;
    expect_invalid(&o, "rhs");
    o = d;
    o.boundary = INFINITY;
    expect_invalid(&o, "boundary");
    o = d;
    o.alpha = 0;
    expect_invalid(&o, "alpha");
    o = d;
    o.monitor_every = -3;
    expect_invalid(&o, "monitor");
    assert_int_equal(hr_solver_create(&d, NULL), HR_ERR_INVALID_ARG);
}

static void unknown_kernel(void **state)
{
    (void)state;
    hr_options o;
    hr_options_default(&o);
    o.n = 8;
    o.backend = HR_BACKEND_CPU_SEQ;
    o.kernel = "no-such-kernel";
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
    assert_null(s);
    assert_non_null(strstr(hr_last_error(), "no-such-kernel"));
    o.kernel = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_string_equal(hr_last_error(), "");
    hr_solver_free(s);
    hr_solver_free(NULL);
}

typedef struct seen {
    long calls, last_it;
    double last_res;
    long stop_at;
} seen;

static int watch(long it, double res, void *user)
{
    seen *w = user;
    w->calls++;
    w->last_it = it;
    w->last_res = res;
    return w->stop_at > 0 && it >= w->stop_at;
}

static void monitor_history_solution(void **state)
{
    (void)state;
    hr_options o;
    hr_options_default(&o);
    o.n = 17;
    o.iters = 100;
    o.backend = HR_BACKEND_CPU_SEQ;
    o.precision = HR_PREC_DOUBLE;
    o.monitor_every = 10;
    o.keep_history = 1;
    seen w = {0, 0, 0, 0};
    o.monitor = watch;
    o.monitor_user = &w;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_int_equal(r.iterations, 100);
    assert_int_equal(w.calls, 10);
    assert_int_equal(w.last_it, 100);
    const long *its;
    const double *res;
    size_t len = hr_solver_history(s, &its, &res);
    assert_int_equal(len, 10);
    for (size_t k = 0; k < len; k++)
        assert_int_equal(its[k], 10 * (long)(k + 1));
    assert_true(fabs(res[len - 1] - r.relative_residual) < 1e-12);
    assert_string_equal(r.backend, "cpu-seq");
    assert_string_equal(r.kernel, "seq");
    assert_true(isnan(r.max_error)); /* spike: no exact solution */

    /* solution: centre value is the largest, the field is symmetric */
    double *u = malloc(17 * 17 * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, 17 * 17 - 1), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, 17 * 17), HR_OK);
    double peak = u[8 * 17 + 8];
    for (int i = 0; i < 17; i++)
        for (int j = 0; j < 17; j++) {
            assert_true(u[i * 17 + j] <= peak);
            assert_true(u[i * 17 + j] == u[j * 17 + i]);
            assert_true(u[i * 17 + j] == u[(16 - i) * 17 + j]);
        }
    float *uf = malloc(17 * 17 * sizeof *uf);
    assert_non_null(uf);
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, uf, 17 * 17), HR_OK);
    assert_true(uf[8 * 17 + 8] == (float)peak);
    free(uf);
    free(u);
    hr_solver_free(s);
}

static void monitor_can_stop(void **state)
{
    (void)state;
    hr_options o;
    hr_options_default(&o);
    o.n = 9;
    o.iters = 1000;
    o.backend = HR_BACKEND_CPU_THREADS;
    o.threads = 2;
    o.monitor_every = 7;
    seen w = {0, 0, 0, 21};
    o.monitor = watch;
    o.monitor_user = &w;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_int_equal(r.iterations, 21);
    assert_int_equal(r.reason, HR_REASON_STOPPED);
    hr_solver_free(s);
}

static void tolerance_stops(void **state)
{
    (void)state;
    hr_options o;
    hr_options_default(&o);
    o.n = 15;
    o.iters = 100000;
    o.tol = 1e-6;
    o.check_every = 10;
    o.precision = HR_PREC_DOUBLE;
    o.backend = HR_BACKEND_CPU_SEQ;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_int_equal(r.reason, HR_REASON_CONVERGED);
    assert_true(r.relative_residual < 1e-6);
    assert_true(r.iterations < 100000 && r.iterations % 10 == 0);
    /* one check earlier the residual was still above the tolerance */
    hr_options o2 = o;
    o2.tol = 0.0;
    o2.iters = r.iterations - 10;
    hr_solver *s2 = NULL;
    assert_int_equal(hr_solver_create(&o2, &s2), HR_OK);
    hr_result r2;
    assert_int_equal(hr_solver_run(s2, &r2), HR_OK);
    assert_true(r2.relative_residual >= 1e-6);
    hr_solver_free(s2);
    hr_solver_free(s);
}

static void metrics_consistent(void **state)
{
    (void)state;
    hr_options o;
    hr_options_default(&o);
    o.n = 200;
    o.iters = 50;
    o.backend = HR_BACKEND_CPU_SEQ;
    o.reference_gbps = 10.0;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_true(r.bytes_per_point == 8.0);
    double pts = 200.0 * 200.0 * 50.0;
    assert_true(fabs(r.gflops - 5.0 * pts / r.time_sweeps_s * 1e-9) < 1e-9 * r.gflops + 1e-12);
    assert_true(fabs(r.gbps - 8.0 * pts / r.time_sweeps_s * 1e-9) < 1e-9 * r.gbps + 1e-12);
    assert_true(fabs(r.bandwidth_fraction - r.gbps / 10.0) < 1e-12);
    assert_true(r.time_s >= r.time_sweeps_s);
    hr_solver_free(s);
}

static void diverging_rhs_reported(void **state)
{
    (void)state;
    /* a huge right-hand side overflows single precision: the run must say diverged */
    hr_options o;
    hr_options_default(&o);
    o.n = 4;
    o.iters = 10;
    o.monitor_every = 5;
    o.backend = HR_BACKEND_CPU_SEQ;
    double f[16];
    for (int i = 0; i < 16; i++)
        f[i] = 1e300;
    o.rhs = HR_RHS_ARRAY;
    o.rhs_values = f;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_ERR_DIVERGED);
    hr_solver_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version),
        cmocka_unit_test(status_strings_distinct),
        cmocka_unit_test(validation),
        cmocka_unit_test(unknown_kernel),
        cmocka_unit_test(monitor_history_solution),
        cmocka_unit_test(monitor_can_stop),
        cmocka_unit_test(tolerance_stops),
        cmocka_unit_test(metrics_consistent),
        cmocka_unit_test(diverging_rhs_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
