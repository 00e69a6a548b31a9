/*
 * Synchronous results are deterministic: cpu-threads (flat and blocks layouts, any
 * thread count and thread grid) must be bitwise equal to cpu-seq, and cpu-seq must be
 * bitwise equal to a plain unpadded Jacobi written here independently of the library.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"
#include "sample_util.h"

static double *solve(hr_options o)
{
    size_t count = (size_t)o.n * (size_t)o.n;
    double *u = malloc(count * sizeof *u);
    assert_non_null(u);
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_run(s, NULL), HR_OK);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, count), HR_OK);
    hr_solver_free(s);
    return u;
}

/* The textbook loop of Venkatasubramanian & Vuduc figure 1 on an unpadded (n+2)^2 array, same order. */
#define NAIVE(T, name)                                                                                       \
    static double *name(int n, long iters, const double *hf)                                                 \
    {                                                                                                        \
        size_t w = (size_t)n + 2;                                                                            \
        T *a = calloc(w * w, sizeof *a), *b = calloc(w * w, sizeof *b);                                      \
        assert_true(a &&b);                                                                                  \
        int c = (n + 1) / 2;                                                                                 \
        for (long t = 0; t < iters; t++) {                                                                   \
            for (size_t i = 1; i <= (size_t)n; i++)                                                          \
                for (size_t j = 1; j <= (size_t)n; j++) {                                                    \
                    T f = hf ? (T)hf[(i - 1) * (size_t)n + j - 1]                                            \
                             : ((int)i == c && (int)j == c ? (T)1 : (T)0);                                   \
                    b[i * w + j] = (T)0.25 * (((a[(i - 1) * w + j] + a[(i + 1) * w + j]) +                   \
                                               (a[i * w + j - 1] + a[i * w + j + 1])) +                      \
                                              f);                                                            \
                }                                                                                            \
            T *tmp = a;                                                                                      \
            a = b;                                                                                           \
            b = tmp;                                                                                         \
        }                                                                                                    \
        double *u = malloc((size_t)n * (size_t)n * sizeof *u);                                               \
        assert_non_null(u);                                                                                  \
        for (size_t i = 1; i <= (size_t)n; i++)                                                              \
            for (size_t j = 1; j <= (size_t)n; j++)                                                          \
                u[(i - 1) * (size_t)n + j - 1] = a[i * w + j];                                               \
        free(a);                                                                                             \
        free(b);                                                                                             \
        return u;                                                                                            \
    }
NAIVE(float, naive_f32)
NAIVE(double, naive_f64)

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

static void assert_same(const double *a, const double *b, int n, const char *what)
{
    size_t count = (size_t)n * (size_t)n;
    for (size_t k = 0; k < count; k++)
        if (memcmp(&a[k], &b[k], sizeof a[k]) != 0)
            fail_msg("%s: n=%d differs at (%zu,%zu): %.17g vs %.17g", what, n, k / (size_t)n + 1,
                     k % (size_t)n + 1, a[k], b[k]);
}

static void seq_equals_naive(void **state)
{
    (void)state;
    const int sizes[] = {1, 2, 3, 4, 31, 127};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int p = 0; p < 2; p++) {
            int n = sizes[k];
            double *ref = solve(base(n, 37, (p ? HR_PREC_DOUBLE : HR_PREC_SINGLE)));
            double *nv = p ? naive_f64(n, 37, NULL) : naive_f32(n, 37, NULL);
            assert_same(ref, nv, n, "cpu-seq vs naive");
            free(ref);
            free(nv);
        }
}

static void seq_equals_naive_array_rhs(void **state)
{
    (void)state;
    const int n = 45;
    double *f = malloc((size_t)n * n * sizeof *f);
    assert_non_null(f);
    for (int k = 0; k < n * n; k++)
        f[k] = (double)((k * 7919) % 1000) - 400.0;
    double h = 1.0 / (n + 1);
    double *hf = malloc((size_t)n * n * sizeof *hf);
    assert_non_null(hf);
    for (int k = 0; k < n * n; k++)
        hf[k] = h * h * f[k];
    for (int p = 0; p < 2; p++) {
        hr_options o = base(n, 25, (p ? HR_PREC_DOUBLE : HR_PREC_SINGLE));
        o.rhs = HR_RHS_ARRAY;
        o.rhs_values = f;
        double *ref = solve(o);
        double *nv = p ? naive_f64(n, 25, hf) : naive_f32(n, 25, hf);
        assert_same(ref, nv, n, "cpu-seq vs naive, array rhs");
        free(ref);
        free(nv);
    }
    free(hf);
    free(f);
}

static void threads_equal_seq(void **state)
{
    (void)state;
    const int sizes[] = {1, 2, 3, 127, 1000, 1023};
    const int grids[][2] = {{1, 1}, {2, 1}, {1, 2}, {3, 1}, {2, 2}, {1, 3}, {5, 2}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int p = 0; p < 2; p++) {
            const int n = sizes[k];
            const long iters = n >= 1000 ? 6 : 41; /* odd: the result lands in the other buffer */
            hr_options so = base(n, iters, (p ? HR_PREC_DOUBLE : HR_PREC_SINGLE));
            so.rhs = (k % 2) ? HR_RHS_MANUFACTURED : HR_RHS_SPIKE;
            double *ref = solve(so);
            for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++)
                for (int layout = 0; layout < 2; layout++) {
                    if (!hr_test_take()) continue;
                    hr_options o = so;
                    o.backend = HR_BACKEND_CPU_THREADS;
                    o.thread_rows = grids[g][0];
                    o.thread_cols = grids[g][1];
                    o.layout = (hr_layout)layout;
                    if (layout == 0 && g % 2 == 0) o.kernel = "spmd-nt"; /* unaligned block columns too */
                    if (n >= 1000 && g % 2) continue;                    /* keep the large sizes quick */
                    double *u = solve(o);
                    char what[96];
                    snprintf(what, sizeof what, "%s %dx%d %s", layout ? "blocks" : "flat", grids[g][0],
                             grids[g][1], p ? "double" : "single");
                    assert_same(ref, u, n, what);
                    free(u);
                }
            /* automatic thread grid and counts 1..4, with and without streaming stores */
            for (int t = 1; t <= 4; t++)
                for (int nt = 0; nt < 2; nt++) {
                    if (!hr_test_take()) continue;
                    hr_options o = so;
                    o.backend = HR_BACKEND_CPU_THREADS;
                    o.threads = t;
                    o.kernel = nt ? "spmd-nt" : NULL;
                    double *u = solve(o);
                    assert_same(ref, u, n, nt ? "spmd-nt auto grid" : "threads auto grid");
                    free(u);
                }
            free(ref);
        }
}

static void run_in_pieces(void **state)
{
    (void)state;
    /* 3 runs of 10 sweeps continue where the last stopped: equal to one run of 30 */
    hr_options o = base(33, 30, HR_PREC_SINGLE);
    double *ref = solve(o);
    o.backend = HR_BACKEND_CPU_THREADS;
    o.layout = HR_LAYOUT_BLOCKS;
    o.threads = 3;
    o.iters = 10;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    for (int k = 0; k < 3; k++)
        assert_int_equal(hr_solver_run(s, NULL), HR_OK);
    double *u = malloc(33 * 33 * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, 33 * 33), HR_OK);
    assert_same(ref, u, 33, "blocks in three runs");
    hr_solver_free(s);
    free(u);
    free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seq_equals_naive),
        cmocka_unit_test(seq_equals_naive_array_rhs),
        cmocka_unit_test(threads_equal_seq),
        cmocka_unit_test(run_in_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
