/* Multi-colour Gauss-Seidel (gs-mc): the colouring is valid and greedy, red-black on
 * the 5-point Laplacian; the iterates are bitwise the same on 1, 2 and 3 threads and
 * equal a sequential coloured sweep written here; it reaches the true residual it
 * reports; it refuses a missing or zero diagonal and honours the fault mask. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/sparse.h"
#include "methods/sparse/sparse_internal.h"
#include "sparse_test_util.h"

static int *colors_of(const hr_csr *A, int *nc)
{
    int *c = malloc((size_t)A->n_rows * sizeof *c);
    assert_non_null(c);
    assert_int_equal(hri_sparse_color_rows(A, c, nc), HR_OK);
    return c;
}

/* 1 when rows i and j are coupled in A or A^T (a plain search, independent of the library). */
static int coupled(const hr_csr *A, int i, int j)
{
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
        if (A->col[p] == j) return 1;
    for (int64_t p = A->row_ptr[j]; p < A->row_ptr[j + 1]; p++)
        if (A->col[p] == i) return 1;
    return 0;
}

/* Greedy colouring written the slow, obvious way: O(n^2) pair tests (small n only). */
static int *naive_greedy(const hr_csr *A, int *nc)
{
    const int n = A->n_rows;
    int *c = malloc((size_t)n * sizeof *c), *used = calloc((size_t)n + 1, sizeof *used);
    assert_true(c && used);
    *nc = 0;
    for (int i = 0; i < n; i++) {
        memset(used, 0, ((size_t)n + 1) * sizeof *used);
        for (int j = 0; j < i; j++)
            if (coupled(A, i, j)) used[c[j]] = 1;
        int k = 0;
        while (used[k])
            k++;
        c[i] = k;
        if (k + 1 > *nc) *nc = k + 1;
    }
    free(used);
    return c;
}

/* No coupled pair shares a colour; every colour is in range and the smallest free one. */
static void check_valid(const hr_csr *A, const int *c, int nc, const char *what)
{
    for (int i = 0; i < A->n_rows; i++) {
        if (c[i] < 0 || c[i] >= nc) fail_msg("%s: row %d has colour %d of %d", what, i, c[i], nc);
        for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            if (A->col[p] != i && c[A->col[p]] == c[i])
                fail_msg("%s: coupled rows %d and %d share colour %d", what, i, A->col[p], c[i]);
    }
}

/* A non-symmetric test matrix: the couplings of some rows appear only in A^T. */
static hr_csr *nonsymmetric(int n)
{
    int32_t ri[64 * 8], ci[64 * 8];
    double v[64 * 8];
    int64_t k = 0;
    assert_true(n <= 64);
    for (int i = 0; i < n; i++) {
        ri[k] = ci[k] = i, v[k++] = 6.0 + (i % 5);
        if (i + 3 < n) ri[k] = i, ci[k] = i + 3, v[k++] = -1.0 - 0.1 * (i % 4); /* upper only */
        if (i >= 1 && i % 2) ri[k] = i, ci[k] = i - 1, v[k++] = 0.5;            /* lower only */
        if (i + 7 < n && i % 3 == 0) ri[k] = i, ci[k] = i + 7, v[k++] = -0.75;
    }
    hr_csr *A = NULL;
    assert_int_equal(hr_csr_from_coo(n, n, k, ri, ci, v, &A), HR_OK);
    return A;
}

/* Sequential coloured sweep: colour by colour, rows in increasing index within it. */
static void colored_reference(const hr_csr *A, const int *c, int nc, const double *b, double *x, int sweeps)
{
    for (int k = 0; k < sweeps; k++)
        for (int col = 0; col < nc; col++)
            for (int i = 0; i < A->n_rows; i++) {
                if (c[i] != col) continue;
                double s = b[i], d = 0.0;
                for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
                    if (A->col[p] == i)
                        d = A->val[p];
                    else
                        s -= A->val[p] * x[A->col[p]];
                x[i] = s / d;
            }
}

static hr_sparse_result run_fixed(const hr_csr *A, const double *b, double *x, int threads, long iters)
{
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    o.method = "gs-mc";
    o.threads = threads;
    o.max_iters = iters;
    hr_sparse_result r;
    hr_status st = hr_sparse_solve(A, b, x, &o, &r);
    if (st != HR_OK) fail_msg("gs-mc: %s", r.message);
    assert_int_equal(r.iterations, iters);
    assert_string_equal(r.method, "gs-mc");
    return r;
}

static void test_laplacian_is_red_black(void **state)
{
    (void)state;
    /* natural order: the earlier neighbours of (r, c) are (r-1, c) and (r, c-1), so by
     * induction greedy gives colour (r + c) mod 2, i.e. exactly 2 colours for M >= 2 */
    const int ms[] = {2, 3, 7, 40};
    for (size_t t = 0; t < sizeof ms / sizeof ms[0]; t++) {
        char spec[32];
        snprintf(spec, sizeof spec, "laplace2d:%d", ms[t]);
        hr_csr *A = gen(spec);
        int nc, *c = colors_of(A, &nc);
        assert_int_equal(nc, 2);
        for (int i = 0; i < A->n_rows; i++)
            assert_int_equal(c[i], (i / ms[t] + i % ms[t]) % 2);
        free(c);
        hr_csr_free(A);
    }
    /* the 7-point Laplacian is red-black in the same way */
    hr_csr *A = gen("laplace3d:9");
    int nc, *c = colors_of(A, &nc);
    assert_int_equal(nc, 2);
    for (int i = 0; i < A->n_rows; i++)
        assert_int_equal(c[i], (i / 81 + (i / 9) % 9 + i % 9) % 2);
    free(c);
    hr_csr_free(A);
}

static void test_coloring_valid(void **state)
{
    (void)state;
    const char *mats[] = {"trefethen:2000", "laplace3d:12", "fv2d:30", "random-spd:400:0.03:5"};
    for (size_t m = 0; m < sizeof mats / sizeof mats[0]; m++) {
        hr_csr *A = gen(mats[m]);
        int nc, *c = colors_of(A, &nc);
        check_valid(A, c, nc, mats[m]);
        print_message("%s: %d colours\n", mats[m], nc);
        if (A->n_rows <= 2000) { /* the library's greedy equals the obvious one */
            int nn, *cn = naive_greedy(A, &nn);
            assert_int_equal(nn, nc);
            assert_memory_equal(c, cn, (size_t)A->n_rows * sizeof *c);
            free(cn);
        }
        free(c);
        hr_csr_free(A);
    }
    hr_csr *A = nonsymmetric(60);
    int nc, *c = colors_of(A, &nc), nn, *cn = naive_greedy(A, &nn);
    check_valid(A, c, nc, "nonsymmetric");
    for (int i = 0; i < A->n_rows; i++) /* couplings seen only through A^T */
        for (int j = 0; j < A->n_rows; j++)
            if (i != j && coupled(A, i, j)) assert_int_not_equal(c[i], c[j]);
    assert_int_equal(nn, nc);
    assert_memory_equal(c, cn, (size_t)A->n_rows * sizeof *c);
    free(c);
    free(cn);
    hr_csr_free(A);
}

/* Bitwise across 1, 2, 3 threads, and equal to the sequential coloured sweep. */
static void check_bitwise(hr_csr *A, const char *what)
{
    const int n = A->n_rows, sweeps = 9;
    double *b = vec(n, 1.0), *ref = vec(n, 0.0), *x = vec(n, 0.0);
    for (int i = 0; i < n; i++)
        b[i] = sin(0.37 * i) + 0.5;
    int nc, *c = naive_greedy(A, &nc);
    colored_reference(A, c, nc, b, ref, sweeps);
    for (int t = 1; t <= 3; t++) {
        memset(x, 0, (size_t)n * sizeof *x);
        hr_sparse_result r = run_fixed(A, b, x, t, sweeps);
        assert_int_equal(r.colors, nc);
        if (memcmp(x, ref, (size_t)n * sizeof *x) != 0)
            fail_msg("%s: %d threads differ from the reference", what, t);
    }
    free(c);
    free(b);
    free(ref);
    free(x);
}

static void test_bitwise_and_reference(void **state)
{
    (void)state;
    const char *mats[] = {"fv2d:25", "laplace2d:17", "trefethen:500", "random-spd:300:0.05:7"};
    for (size_t m = 0; m < sizeof mats / sizeof mats[0]; m++) {
        hr_csr *A = gen(mats[m]);
        check_bitwise(A, mats[m]);
        hr_csr_free(A);
    }
    hr_csr *A = nonsymmetric(61);
    check_bitwise(A, "nonsymmetric");
    hr_csr_free(A);
}

static void test_reaches_true_residual(void **state)
{
    (void)state;
    const char *mats[] = {"laplace2d:20", "fv2d:30", "random-spd:500:0.02:3"};
    for (size_t m = 0; m < sizeof mats / sizeof mats[0]; m++) {
        hr_csr *A = gen(mats[m]);
        double *b = vec(A->n_rows, 1.0), *x = vec(A->n_rows, 0.0);
        b[0] = 3.0;
        hr_sparse_options o;
        hr_sparse_options_default(&o);
        o.method = "gs-mc";
        o.tol = 1e-9;
        o.max_iters = 20000;
        o.threads = 2;
        hr_sparse_result r;
        hr_status st = hr_sparse_solve(A, b, x, &o, &r);
        if (st != HR_OK || r.reason != HR_REASON_CONVERGED)
            fail_msg("%s: %s (%s)", mats[m], hr_status_string(st), r.message);
        double t = true_residual(A, b, x);
        if (!(t < 1e-9) || fabs(t - r.relative_residual) > 1e-6 * t)
            fail_msg("%s: reports %.3e, true %.3e", mats[m], r.relative_residual, t);
        assert_true(r.colors >= 2 && r.iterations > 0 && r.time_per_iter_s >= 0.0);
        print_message("%s: %ld iterations, %d colours\n", mats[m], r.iterations, r.colors);
        free(b);
        free(x);
        hr_csr_free(A);
    }
}

static void test_refuses_bad_diagonal(void **state)
{
    (void)state;
    /* k = 0: row 2 (1-based) has no diagonal entry; k = 1: row 3's is an explicit zero */
    const int32_t ri[2][6] = {{0, 0, 1, 2, 2, 2}, {0, 0, 1, 1, 2, 2}};
    const int32_t ci[2][6] = {{0, 1, 0, 1, 2, 0}, {0, 1, 0, 1, 1, 2}};
    const double v[2][6] = {{4, -1, -1, -1, 4, -1}, {4, -1, -1, 4, -1, 0}};
    for (int k = 0; k < 2; k++) {
        hr_csr *A = NULL;
        assert_int_equal(hr_csr_from_coo(3, 3, 6, ri[k], ci[k], v[k], &A), HR_OK);
        double b[3] = {1, 1, 1}, x[3] = {0, 0, 0};
        hr_sparse_options o;
        hr_sparse_options_default(&o);
        o.method = "gs-mc";
        hr_sparse_result r;
        assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_ERR_INVALID_ARG);
        assert_non_null(strstr(r.message, k ? "row 3" : "row 2"));
        assert_non_null(strstr(r.message, k ? "zero" : "missing"));
        assert_non_null(strstr(r.message, "gs-mc"));
        hr_csr_free(A);
    }
}

static void test_fault_mask(void **state)
{
    (void)state;
    hr_csr *A = gen("fv2d:30");
    const int n = A->n_rows;
    double *b = vec(n, 1.0), *x = vec(n, 0.25), *y = vec(n, 0.0);
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    o.method = "gs-mc";
    o.max_iters = 5;
    o.fault_fraction = 1.0; /* every component frozen from the start: x never moves */
    o.fault_iter = 0;
    hr_sparse_result r;
    assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_OK);
    assert_int_equal(r.faulty_components, n);
    for (int i = 0; i < n; i++)
        assert_true(x[i] == 0.25);
    /* a quarter frozen at 10, recovered at 30: converges, same iterates on 1 and 3 threads */
    o.fault_fraction = 0.25;
    o.fault_iter = 10;
    o.fault_recover = 20;
    o.tol = 1e-10;
    o.max_iters = 5000;
    long its = 0;
    for (int t = 1; t <= 3; t += 2) {
        double *z = t == 1 ? y : x;
        memset(z, 0, (size_t)n * sizeof *z);
        o.threads = t;
        assert_int_equal(hr_sparse_solve(A, b, z, &o, &r), HR_OK);
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        if (t == 1) its = r.iterations;
        assert_int_equal(r.iterations, its);
    }
    assert_memory_equal(x, y, (size_t)n * sizeof *x);
    free(b);
    free(x);
    free(y);
    hr_csr_free(A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_laplacian_is_red_black), cmocka_unit_test(test_coloring_valid),
        cmocka_unit_test(test_bitwise_and_reference),  cmocka_unit_test(test_reaches_true_residual),
        cmocka_unit_test(test_refuses_bad_diagonal),   cmocka_unit_test(test_fault_mask),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
