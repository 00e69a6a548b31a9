/*
 * cpu-threads async0..async3 (docs/async.md).
 *
 *  - async0-2 with alpha = 1 are bitwise cpu-seq, on any thread grid, both precisions,
 *    inline spike and array right-hand side;
 *  - on one thread (no neighbours) async0-2 are plain Jacobi for any alpha, so they are
 *    bitwise cpu-seq too: this exercises the passes, local sweeps and short last pass;
 *  - async2 exchanges nothing inside a pass, so it is reproducible, and it must equal an
 *    independent model of figure 9 written here (block Jacobi on frozen fringes);
 *  - every variant, several alphas, 1-4 threads, repeated runs: after a capped Teff the
 *    error against the converged solution is within the accuracy that the synchronous
 *    kernel reaches in T sweeps;
 *  - run to a residual tolerance, the true residual and the error obey ||e|| <= ||A^-1|| ||r||;
 *  - Teff and global syncs are reported; invalid alpha is rejected with a reason.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "methods/async/cpu/jacobi2d_async.h"
#include "hetrelax/hetrelax.h"
#include "sample_util.h"

static const char *const kernels[] = {"async0", "async1", "async2", "async3"};

static hr_options base(int n, long iters, hr_precision p)
{
    hr_options o;
    hr_options_default(&o);
    o.n = n;
    o.iters = iters;
    o.precision = p;
    o.backend = HR_BACKEND_CPU_SEQ;
    return o;
}

static hr_options threaded(hr_options o, const char *kernel, int alpha, int rows, int cols)
{
    o.backend = HR_BACKEND_CPU_THREADS;
    o.kernel = kernel;
    o.alpha = alpha;
    o.thread_rows = rows;
    o.thread_cols = cols;
    o.threads = rows * cols;
    return o;
}

static double *solve(hr_options o, hr_result *res)
{
    size_t count = (size_t)o.n * (size_t)o.n;
    double *u = malloc(count * sizeof *u);
    assert_non_null(u);
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, count), HR_OK);
    hr_solver_free(s);
    if (res) *res = r;
    return u;
}

static void assert_same(const double *a, const double *b, int n, const char *what)
{
    size_t count = (size_t)n * (size_t)n;
    for (size_t k = 0; k < count; k++)
        if (memcmp(&a[k], &b[k], sizeof a[k]) != 0)
            fail_msg("%s: n=%d differs at (%zu,%zu): %.17g vs %.17g", what, n, k / (size_t)n + 1,
                     k % (size_t)n + 1, a[k], b[k]);
}

/* max |a - b| / max |b| */
static double rel_error(const double *a, const double *b, int n)
{
    double e = 0.0, m = 0.0;
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++) {
        e = fmax(e, fabs(a[k] - b[k]));
        m = fmax(m, fabs(b[k]));
    }
    return e / m;
}

static const int grids[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {3, 1}, {1, 3}, {4, 1}};

static void alpha1_equals_seq(void **state)
{
    (void)state;
    const int ns[] = {17, 32, 3};
    const long iters[] = {1, 7, 50};
    char what[128];
    for (int p = 0; p < 2; p++)
        for (int rhs = 0; rhs < 2; rhs++)
            for (int in = 0; in < 3; in++)
                for (int it = 0; it < 3; it++) {
                    hr_options o = base(ns[in], iters[it], p ? HR_PREC_DOUBLE : HR_PREC_SINGLE);
                    o.rhs = rhs ? HR_RHS_MANUFACTURED : HR_RHS_SPIKE;
                    double *want = solve(o, NULL);
                    for (int v = 0; v < 3; v++)
                        for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
                            if (!hr_test_take()) continue;
                            double *got = solve(threaded(o, kernels[v], 1, grids[g][0], grids[g][1]), NULL);
                            snprintf(what, sizeof what, "%s alpha 1 %dx%d %s rhs %d, %ld sweeps", kernels[v],
                                     grids[g][0], grids[g][1], p ? "double" : "single", rhs, iters[it]);
                            assert_same(got, want, o.n, what);
                            free(got);
                        }
                    free(want);
                }
}

static void one_thread_is_jacobi_for_any_alpha(void **state)
{
    (void)state;
    const int alphas[] = {2, 3, 8};
    const long iters[] = {1, 9, 40};
    char what[128];
    for (int p = 0; p < 2; p++)
        for (int it = 0; it < 3; it++) {
            hr_options o = base(24, iters[it], p ? HR_PREC_DOUBLE : HR_PREC_SINGLE);
            double *want = solve(o, NULL);
            for (int v = 0; v < 3; v++)
                for (int a = 0; a < 3; a++) {
                    if (!hr_test_take()) continue;
                    double *got = solve(threaded(o, kernels[v], alphas[a], 1, 1), NULL);
                    snprintf(what, sizeof what, "%s alpha %d on one thread, %ld sweeps", kernels[v],
                             alphas[a], iters[it]);
                    assert_same(got, want, o.n, what);
                    free(got);
                }
            free(want);
        }
}

/* The hetrelax split of [0, len) into parts, written again here. */
static void split(int len, int parts, int p, int *lo, int *hi)
{
    int b = len / parts, x = len % parts;
    *lo = p * b + (p < x ? p : x);
    *hi = *lo + b + (p < x ? 1 : 0);
}

/* Figure 9 on plain (n+2)^2 arrays, float, spike: each pass of k sweeps copies every
 * block with the ring it sees at the start of the pass, runs k - 1 Jacobi sweeps on the
 * copy with that ring held fixed, and one more into the new grid. */
static double *model_async2(int n, long iters, int alpha, int rows, int cols)
{
    const size_t w = (size_t)n + 2;
    float *u = calloc(w * w, sizeof *u), *un = calloc(w * w, sizeof *un);
    float *a = calloc(w * w, sizeof *a), *b = calloc(w * w, sizeof *b);
    assert_true(u && un && a && b);
    const int c = (n + 1) / 2, pass = 2 * (alpha / 2) + 1;
    for (long left = iters; left > 0;) {
        const int k = left < pass ? (int)left : pass;
        for (int br = 0; br < rows; br++)
            for (int bc = 0; bc < cols; bc++) {
                int i0, i1, j0, j1;
                split(n, rows, br, &i0, &i1);
                split(n, cols, bc, &j0, &j1);
                /* the block and its ring as fetched: a and b hold it at full-grid indices */
                for (int i = i0; i <= i1 + 1; i++)
                    for (int j = j0; j <= j1 + 1; j++)
                        a[i * w + j] = b[i * w + j] = u[i * w + j];
                float *src = a, *dst = b;
                for (int s = 0; s < k; s++) {
                    float *out = s == k - 1 ? un : dst;
                    for (int i = i0 + 1; i <= i1; i++)
                        for (int j = j0 + 1; j <= j1; j++) {
                            float f = (i == c && j == c) ? 1.0f : 0.0f;
                            float sum = (src[(i - 1) * w + j] + src[(i + 1) * w + j]) +
                                        (src[i * w + j - 1] + src[i * w + j + 1]);
                            out[i * w + j] = f != 0.0f ? 0.25f * (sum + f) : 0.25f * sum;
                        }
                    float *t = src;
                    src = dst;
                    dst = t;
                }
            }
        float *t = u;
        u = un;
        un = t;
        left -= k;
    }
    double *r = malloc((size_t)n * (size_t)n * sizeof *r);
    assert_non_null(r);
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++)
            r[(size_t)(i - 1) * (size_t)n + (size_t)(j - 1)] = u[i * w + j];
    free(u);
    free(un);
    free(a);
    free(b);
    return r;
}

static void async2_is_figure9(void **state)
{
    (void)state;
    const int cases[][5] = {/* n, iters, alpha, rows, cols */
                            {30, 23, 4, 2, 2},
                            {29, 40, 5, 3, 1},
                            {31, 17, 8, 1, 3},
                            {20, 12, 2, 2, 2}};
    char what[128];
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        const int *c = cases[t];
        double *want = model_async2(c[0], c[1], c[2], c[3], c[4]);
        hr_options o = threaded(base(c[0], c[1], HR_PREC_SINGLE), "async2", c[2], c[3], c[4]);
        double *first = solve(o, NULL);
        snprintf(what, sizeof what, "async2 n=%d alpha %d on %dx%d vs the figure 9 model", c[0], c[2], c[3],
                 c[4]);
        assert_same(first, want, c[0], what);
        double *again = solve(o, NULL);
        assert_same(again, first, c[0], "async2 run twice");
        free(again);
        free(first);
        double *seq = solve(base(c[0], c[1], HR_PREC_SINGLE), NULL);
        /* frozen fringes change the iteration: the model is not just Jacobi */
        assert_true(rel_error(want, seq, c[0]) > 0.0);
        free(seq);
        free(want);
    }
}

/* The accuracy criterion on a small grid, repeated: reference u* = converged
 * solution, target = error of the synchronous kernel after T sweeps; every async
 * variant must reach it within 2 T (the paper's worst case, async2, needed 1.7 T). */
static void converges_to_sync_accuracy(void **state)
{
    (void)state;
    const int n = 32;
    const long T = 400;
    hr_options ro = base(n, 200000, HR_PREC_DOUBLE);
    ro.tol = 1e-13;
    ro.check_every = 500;
    double *ref = solve(ro, NULL);
    double *sync = solve(threaded(base(n, T, HR_PREC_DOUBLE), "spmd", 1, 2, 1), NULL);
    const double target = rel_error(sync, ref, n);
    free(sync);
    assert_true(target > 1e-3 && target < 1.0); /* T is far from converged: the test can fail */
    const int alphas[] = {2, 5, 8};
    const int threads[][2] = {{1, 1}, {2, 1}, {3, 1}, {2, 2}};
    for (int v = 0; v < 4; v++)
        for (int a = 0; a < 3; a++)
            for (int t = 0; t < 4; t++)
                for (int run = 0; run < 3; run++) {
                    if (!hr_test_take()) continue;
                    const int pass = hr_async_pass_sweeps(v, alphas[a]);
                    const long cap = (2 * T + pass - 1) / pass * pass;
                    hr_options o = threaded(base(n, cap, HR_PREC_DOUBLE), kernels[v], alphas[a],
                                            threads[t][0], threads[t][1]);
                    double *u = solve(o, NULL);
                    const double err = rel_error(u, ref, n);
                    if (!(err <= target))
                        fail_msg("%s alpha %d %dx%d run %d: error %.3e after Teff %ld, target %.3e",
                                 kernels[v], alphas[a], threads[t][0], threads[t][1], run, err, cap, target);
                    free(u);
                }
    free(ref);
}

/* The true residual: run to a tolerance (checks on pass boundaries), then the error
 * must obey ||u - u*||_2 <= ||A^-1||_2 ||b - A u||_2 with ||A^-1||_2 = 1 / lambda_min,
 * lambda_min = 8 sin^2(pi h / 2) for A = 4I - neighbours; b is the unit spike. */
static void converges_by_true_residual(void **state)
{
    (void)state;
    const int n = 32;
    const double tol = 1e-7, pi = 3.14159265358979323846;
    const double lmin = 8.0 * pow(sin(pi / (2.0 * (n + 1))), 2.0);
    hr_options ro = base(n, 200000, HR_PREC_DOUBLE);
    ro.tol = 1e-13;
    ro.check_every = 500;
    double *ref = solve(ro, NULL);
    hr_options so = threaded(base(n, 200000, HR_PREC_DOUBLE), "spmd", 1, 2, 1);
    so.tol = tol;
    so.check_every = 1;
    hr_result rs;
    free(solve(so, &rs));
    const int alphas[] = {2, 5, 8};
    const int threads[][2] = {{2, 1}, {2, 2}};
    for (int v = 0; v < 4; v++)
        for (int a = 0; a < 3; a++)
            for (int t = 0; t < 2; t++)
                for (int run = 0; run < 2; run++) {
                    if (!hr_test_take()) continue;
                    hr_options o = threaded(base(n, 3 * rs.iterations, HR_PREC_DOUBLE), kernels[v], alphas[a],
                                            threads[t][0], threads[t][1]);
                    o.tol = tol;
                    o.check_every = 4L * hr_async_pass_sweeps(v, alphas[a]); /* checks end passes */
                    hr_result r;
                    double *u = solve(o, &r);
                    double e2 = 0.0;
                    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
                        e2 += (u[k] - ref[k]) * (u[k] - ref[k]);
                    free(u);
                    if (r.reason != HR_REASON_CONVERGED || !(r.relative_residual < tol) ||
                        !(sqrt(e2) <= r.relative_residual / lmin + 1e-12))
                        fail_msg(
                            "%s alpha %d %dx%d: %s after Teff %ld (sync %ld), residual %.3e, error %.3e > "
                            "%.3e",
                            kernels[v], alphas[a], threads[t][0], threads[t][1], hr_reason_string(r.reason),
                            r.iterations, rs.iterations, r.relative_residual, sqrt(e2),
                            r.relative_residual / lmin);
                }
    free(ref);
}

static void reports_teff_and_syncs(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++) {
        hr_result r;
        const int alpha = 4, pass = hr_async_pass_sweeps(v, alpha);
        double *u = solve(threaded(base(20, 47, HR_PREC_SINGLE), kernels[v], alpha, 2, 1), &r);
        free(u);
        assert_int_equal(r.iterations, 47); /* Teff is the driver's count */
        /* async0-2: a barrier per pass (the last one short); async3: none inside a call */
        assert_int_equal(r.global_syncs, v == 3 ? 1 : (47 + pass - 1) / pass);
        assert_string_equal(r.kernel, kernels[v]);
    }
    assert_int_equal(hr_async_pass_sweeps(0, 1), 1);
    assert_int_equal(hr_async_pass_sweeps(1, 8), 9);
    assert_int_equal(hr_async_pass_sweeps(2, 15), 15);
    assert_int_equal(hr_async_pass_sweeps(3, 1), 2);
    hr_result r;
    double *u = solve(threaded(base(20, 47, HR_PREC_SINGLE), "spmd", 1, 2, 1), &r);
    free(u);
    assert_int_equal(r.global_syncs, 47);
}

static void invalid_alpha_rejected(void **state)
{
    (void)state;
    char why[256];
    for (int v = 0; v < 4; v++) {
        /* 2x2 threads at n=32: blocks are 16x16 */
        hr_options o = threaded(base(32, 10, HR_PREC_SINGLE), kernels[v], 16, 2, 2);
        assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_OK);
        o.alpha = 17;
        why[0] = '\0';
        assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
        assert_true(strncmp(why, "alpha:", 6) == 0);
        assert_non_null(strstr(why, "16"));
        hr_solver *s = (hr_solver *)&o; /* must be reset to NULL */
        assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
        assert_null(s);
        o.alpha = 0;
        assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
        assert_true(strncmp(why, "alpha:", 6) == 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alpha1_equals_seq),          cmocka_unit_test(one_thread_is_jacobi_for_any_alpha),
        cmocka_unit_test(async2_is_figure9),          cmocka_unit_test(converges_to_sync_accuracy),
        cmocka_unit_test(converges_by_true_residual), cmocka_unit_test(reports_teff_and_syncs),
        cmocka_unit_test(invalid_alpha_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
