/* Sparse methods: each reaches the true residual it reports; deterministic methods
 * match a plain reference written here; refusals, divergence and fault injection. */
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
#include "sparse_test_util.h"

static void test_every_method_reaches_its_residual(void **state)
{
    (void)state;
    const char *mats[] = {"laplace2d:20", "fv2d:30", "random-spd:500:0.02:3"};
    const char *methods[] = {"jacobi", "gs", "async", "cg"};
    for (size_t m = 0; m < 3; m++) {
        hr_csr *A = gen(mats[m]);
        double *b = vec(A->n_rows, 1.0);
        b[0] = 3.0; /* not a multiple of an eigenvector */
        for (size_t k = 0; k < 4; k++) {
            hr_sparse_options o;
            hr_sparse_options_default(&o);
            o.method = methods[k];
            o.tol = 1e-9;
            o.max_iters = 20000;
            o.threads = 2;
            o.block = 37; /* blocks that do not divide n */
            double *x = vec(A->n_rows, 0.0);
            hr_sparse_result r;
            hr_status st = hr_sparse_solve(A, b, x, &o, &r);
            if (st != HR_OK || r.reason != HR_REASON_CONVERGED)
                fail_msg("%s %s: %s (%s)", mats[m], methods[k], hr_status_string(st), r.message);
            double t = true_residual(A, b, x);
            if (!(t < 1e-9) || fabs(t - r.relative_residual) > 1e-6 * t)
                fail_msg("%s %s: reports %.3e, true %.3e", mats[m], methods[k], r.relative_residual, t);
            assert_true(r.iterations > 0 && r.time_per_iter_s >= 0.0);
            free(x);
        }
        free(b);
        hr_csr_free(A);
    }
}

/* Plain reference: `sweeps` Jacobi or Gauss-Seidel sweeps, textbook formula. */
static void reference(const hr_csr *A, const double *b, double *x, int sweeps, int gauss_seidel)
{
    int n = A->n_rows;
    double *y = malloc((size_t)n * sizeof *y);
    assert_non_null(y);
    for (int k = 0; k < sweeps; k++) {
        const double *src = gauss_seidel ? x : memcpy(y, x, (size_t)n * sizeof *x);
        for (int i = 0; i < n; i++) {
            double s = b[i], d = 0.0;
            for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
                if (A->col[p] == i)
                    d = A->val[p];
                else
                    s -= A->val[p] * src[A->col[p]];
            x[i] = s / d;
        }
    }
    free(y);
}

static void run_fixed(const hr_csr *A, const double *b, double *x, const char *method, hr_backend be,
                      int threads, long iters, int K, int block)
{
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    o.method = method;
    o.backend = be;
    o.threads = threads;
    o.max_iters = iters;
    o.local_iters = K;
    o.block = block;
    hr_sparse_result r;
    hr_status st = hr_sparse_solve(A, b, x, &o, &r);
    if (st != HR_OK) fail_msg("%s: %s", method, r.message);
    assert_int_equal(r.iterations, iters);
}

static void test_deterministic_methods_match_reference(void **state)
{
    (void)state;
    hr_csr *A = gen("fv2d:25");
    const int n = A->n_rows;
    double *b = vec(n, 1.0), *ref = vec(n, 0.0), *x = vec(n, 0.0);
    for (int i = 0; i < n; i++)
        b[i] = sin(0.1 * i);
    reference(A, b, ref, 7, 0);
    for (int t = 1; t <= 3; t++) {
        memset(x, 0, (size_t)n * sizeof *x);
        run_fixed(A, b, x, "jacobi", HR_BACKEND_CPU_THREADS, t, 7, 1, 1);
        assert_memory_equal(x, ref, (size_t)n * sizeof *x);
    }
    memset(x, 0, (size_t)n * sizeof *x);
    run_fixed(A, b, x, "jacobi", HR_BACKEND_CPU_SEQ, 0, 7, 1, 1);
    assert_memory_equal(x, ref, (size_t)n * sizeof *x);
    /* async-(K) with one block on one thread is exactly K Jacobi sweeps */
    memset(x, 0, (size_t)n * sizeof *x);
    run_fixed(A, b, x, "async", HR_BACKEND_CPU_SEQ, 1, 1, 7, n);
    assert_memory_equal(x, ref, (size_t)n * sizeof *x);
    memset(x, 0, (size_t)n * sizeof *x);
    run_fixed(A, b, x, "async", HR_BACKEND_CPU_THREADS, 2, 1, 7, n);
    assert_memory_equal(x, ref, (size_t)n * sizeof *x);
    /* Gauss-Seidel */
    memset(ref, 0, (size_t)n * sizeof *x);
    memset(x, 0, (size_t)n * sizeof *x);
    reference(A, b, ref, 5, 1);
    run_fixed(A, b, x, "gs", HR_BACKEND_AUTO, 0, 5, 1, 1);
    assert_memory_equal(x, ref, (size_t)n * sizeof *x);
    /* CG: the same iterates for any thread count (chunked reductions) */
    double *y = vec(n, 0.0);
    memset(x, 0, (size_t)n * sizeof *x);
    run_fixed(A, b, x, "cg", HR_BACKEND_CPU_SEQ, 1, 40, 1, 1);
    run_fixed(A, b, y, "cg", HR_BACKEND_CPU_THREADS, 3, 40, 1, 1);
    assert_memory_equal(x, y, (size_t)n * sizeof *x);
    free(y);
    free(b), free(ref), free(x);
    hr_csr_free(A);
}

/* SPD, but rho(B) = 1.8: plain Jacobi diverges, the scaled iteration converges. */
static hr_csr *not_dominant(void)
{
    int32_t r[9], c[9];
    double v[9];
    for (int k = 0; k < 9; k++) {
        r[k] = k / 3;
        c[k] = k % 3;
        v[k] = r[k] == c[k] ? 1.0 : 0.9;
    }
    hr_csr *A;
    assert_int_equal(hr_csr_from_coo(3, 3, 9, r, c, v, &A), HR_OK);
    return A;
}

static void test_refusal_tau_and_divergence(void **state)
{
    (void)state;
    hr_csr *A = not_dominant();
    double b[3] = {1, 2, 3}, x[3] = {0, 0, 0};
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    o.tol = 1e-10;
    o.max_iters = 100000;
    hr_sparse_result r;
    assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(r.message, "tau auto"));
    o.tau = 1.0; /* forced: must stop as diverged, not run on to garbage */
    assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_ERR_DIVERGED);
    assert_int_equal(r.reason, HR_REASON_DIVERGED);
    assert_true(r.iterations < 100);
    assert_non_null(strstr(r.message, "diverged"));
    memset(x, 0, sizeof x);
    o.tau = HR_SPARSE_TAU_AUTO;
    assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_OK);
    assert_int_equal(r.reason, HR_REASON_CONVERGED);
    assert_true(fabs(r.tau - 2.0 / (0.1 + 2.8)) < 1e-6); /* eig(A) = 2.8, 0.1, 0.1 */
    assert_true(true_residual(A, b, x) < 1e-10);
    hr_csr_free(A);
}

static void test_bad_input(void **state)
{
    (void)state;
    int32_t r[] = {0, 1, 1}, c[] = {0, 0, 1};
    double v[] = {2.0, 1.0, 0.0};
    hr_csr *A;
    assert_int_equal(hr_csr_from_coo(2, 2, 3, r, c, v, &A), HR_OK);
    double b[2] = {1, 1}, x[2] = {0, 0};
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    hr_sparse_result res;
    assert_int_equal(hr_sparse_solve(A, b, x, &o, &res), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(res.message, "row 2"));
    assert_non_null(strstr(res.message, "zero"));
    hr_csr_free(A);
    assert_int_equal(hr_csr_from_coo(2, 3, 1, r, c, v, &A), HR_OK);
    assert_int_equal(hr_sparse_solve(A, b, x, &o, &res), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(res.message, "square"));
    hr_csr_free(A);
    A = gen("laplace2d:4");
    double bb[16], xx[16] = {0};
    for (int i = 0; i < 16; i++)
        bb[i] = 1.0;
    bb[3] = NAN;
    assert_int_equal(hr_sparse_solve(A, bb, xx, &o, &res), HR_ERR_INVALID_ARG);
    bb[3] = 1.0;
    o.method = "sor";
    assert_int_equal(hr_sparse_solve(A, bb, xx, &o, &res), HR_ERR_INVALID_ARG);
    o.method = "gs";
    o.backend = HR_BACKEND_GPU;
    assert_true(hr_sparse_solve(A, bb, xx, &o, &res) != HR_OK); /* no GPU gs in this build */
    o.backend = HR_BACKEND_AUTO;
    o.method = "cg";
    o.fault_fraction = 0.1;
    assert_int_equal(hr_sparse_solve(A, bb, xx, &o, &res), HR_ERR_INVALID_ARG);
    int32_t ri[] = {0}, ci[] = {5};
    double vi[] = {1.0};
    hr_csr *B = (hr_csr *)0x1;
    assert_int_equal(hr_csr_from_coo(2, 2, 1, ri, ci, vi, &B), HR_ERR_INVALID_ARG);
    assert_null(B);
    hr_csr_free(A);
}

static int stop_at_30(long it, double res, void *user)
{
    (void)res;
    (*(long *)user)++;
    return it >= 30;
}

static void test_monitor_stops(void **state)
{
    (void)state;
    hr_csr *A = gen("laplace2d:16");
    double *b = vec(A->n_rows, 1.0), *x = vec(A->n_rows, 0.0);
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    o.monitor_every = 10;
    o.monitor = stop_at_30;
    long calls = 0;
    o.monitor_user = &calls;
    hr_sparse_result r;
    assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_OK);
    assert_int_equal(r.reason, HR_REASON_STOPPED);
    assert_int_equal(r.iterations, 30);
    assert_int_equal(calls, 3); /* 10, 20, 30; the final report is not repeated at 30 */
    /* a deferred monitor only observes: the same callback stops nothing */
    o.monitor_deferred = 1;
    o.max_iters = 100;
    calls = 0;
    memset(x, 0, (size_t)A->n_rows * sizeof *x);
    assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_OK);
    assert_int_equal(r.reason, HR_REASON_ITERS);
    assert_int_equal(r.iterations, 100);
    assert_int_equal(calls, 10);
    free(b), free(x);
    hr_csr_free(A);
}

/* Anzt et al. section 4.5: with a quarter of the components frozen for good the
 * iteration stalls; when they are reassigned it converges. */
static void test_fault_injection(void **state)
{
    (void)state;
    hr_csr *A = gen("fv2d:30");
    const int n = A->n_rows;
    double *b = vec(n, 1.0);
    const char *methods[] = {"async", "jacobi", "gs"};
    for (int k = 0; k < 3; k++) {
        hr_sparse_options o;
        hr_sparse_options_default(&o);
        o.method = methods[k];
        o.threads = 2;
        o.tol = 1e-10;
        o.max_iters = 400;
        o.fault_fraction = 0.25;
        o.fault_iter = 5;
        o.fault_seed = 42;
        hr_sparse_result r;
        double *x = vec(n, 0.0);
        assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_OK);
        assert_int_equal(r.faulty_components, (long)llround(0.25 * n));
        if (r.reason == HR_REASON_CONVERGED || !(r.relative_residual > 1e-4))
            fail_msg("%s without recovery: residual %.3e after %ld", methods[k], r.relative_residual,
                     r.iterations);
        memset(x, 0, (size_t)n * sizeof *x);
        o.fault_recover = 20;
        assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_OK);
        if (r.reason != HR_REASON_CONVERGED || !(true_residual(A, b, x) < 1e-10))
            fail_msg("%s with recovery: %s, residual %.3e", methods[k], hr_reason_string(r.reason),
                     r.relative_residual);
        /* the delay is visible: more iterations than the fault-free run */
        long faulty = r.iterations;
        memset(x, 0, (size_t)n * sizeof *x);
        o.fault_fraction = 0.0;
        assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_OK);
        assert_true(faulty > r.iterations);
        free(x);
    }
    free(b);
    hr_csr_free(A);
}

/* An empty system is solved at once (0 iterations, HR_OK) by every
 * method and backend of the table, async included (it divided by a zero block size). */
static void test_empty_system(void **state)
{
    (void)state;
    hr_csr *A = NULL;
    assert_int_equal(hr_csr_from_coo(0, 0, 0, NULL, NULL, NULL, &A), HR_OK);
    double b[1] = {0}, x[1] = {0};
    hr_backend be;
    for (int i = 0; hr_sparse_method_at(i, &be, NULL); i++) {
        if (be == HR_BACKEND_GPU) continue; /* needs no device either, but kept to the CPU here */
        hr_sparse_options o;
        hr_sparse_options_default(&o);
        o.method = hr_sparse_method_at(i, NULL, NULL);
        o.backend = be;
        o.threads = 2;
        o.tol = 1e-8;
        hr_sparse_result r;
        hr_status st = hr_sparse_solve(A, b, x, &o, &r);
        if (st != HR_OK || r.iterations != 0 || r.reason != HR_REASON_CONVERGED || r.relative_residual != 0.0)
            fail_msg("%s/%s on 0 x 0: %s, %ld iterations, %s (%s)", o.method, hr_backend_name(be),
                     hr_status_string(st), r.iterations, hr_reason_string(r.reason), r.message);
    }
    hr_csr_free(A);
}

/* Two right-hand sides through one handle give exactly what two
 * one-shot solves give, and the method's setup ran once. */
static void test_handle_many_rhs(void **state)
{
    (void)state;
    hr_csr *A = gen("fv2d:20");
    const int n = A->n_rows;
    double *b1 = vec(n, 1.0), *b2 = vec(n, 0.0);
    for (int i = 0; i < n; i++)
        b2[i] = (double)(i % 7) - 3.0;
    const char *methods[] = {"jacobi", "gs", "async", "cg", "gs-mc"};
    const hr_backend bes[] = {HR_BACKEND_CPU_THREADS, HR_BACKEND_CPU_SEQ, HR_BACKEND_CPU_SEQ,
                              HR_BACKEND_CPU_THREADS, HR_BACKEND_CPU_THREADS};
    for (int k = 0; k < 5; k++) {
        hr_sparse_options o;
        hr_sparse_options_default(&o);
        o.method = methods[k];
        o.backend = bes[k];
        o.threads = 2;
        o.tol = 1e-9;
        o.max_iters = 5000;
        double *x1 = vec(n, 0.0), *x2 = vec(n, 0.5), *y1 = vec(n, 0.0), *y2 = vec(n, 0.5);
        hr_sparse_result r1, r2, s1, s2;
        assert_int_equal(hr_sparse_solve(A, b1, x1, &o, &r1), HR_OK);
        assert_int_equal(hr_sparse_solve(A, b2, x2, &o, &r2), HR_OK);
        hr_sparse_solver *h = NULL;
        hr_sparse_result c;
        assert_int_equal(hr_sparse_solver_create(A, &o, &h, &c), HR_OK);
        assert_non_null(h);
        assert_int_equal(c.setups, 1);
        assert_int_equal(hr_sparse_solver_solve(h, b1, y1, &s1), HR_OK);
        assert_int_equal(hr_sparse_solver_solve(h, b2, y2, &s2), HR_OK);
        /* device vectors are for the gpu methods: refused before they are read */
        hr_sparse_result d;
        assert_int_equal(hr_sparse_solver_solve_device(h, b1, y1, NULL, &d), HR_ERR_UNSUPPORTED);
        assert_non_null(strstr(d.message, "the gpu methods take them"));
        assert_int_equal(hr_sparse_solver_solve_device(h, NULL, y1, NULL, &d), HR_ERR_INVALID_ARG);
        hr_sparse_solver_free(h);
        if (s1.iterations != r1.iterations || s2.iterations != r2.iterations ||
            memcmp(x1, y1, (size_t)n * sizeof *x1) != 0 || memcmp(x2, y2, (size_t)n * sizeof *x2) != 0)
            fail_msg("%s: handle %ld/%ld iterations, one-shot %ld/%ld, or iterates differ", methods[k],
                     s1.iterations, s2.iterations, r1.iterations, r2.iterations);
        assert_int_equal(s1.reason, HR_REASON_CONVERGED);
        assert_int_equal(s2.reason, HR_REASON_CONVERGED);
        assert_int_equal(s2.setups, 1); /* setup paid once for both solves */
        assert_true(true_residual(A, b2, y2) < 1e-9);
        free(x1), free(x2), free(y1), free(y2);
    }
    hr_sparse_solver_free(NULL);
    hr_sparse_solver *h = (hr_sparse_solver *)0x1;
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    o.method = "nosuch";
    hr_sparse_result c;
    assert_int_equal(hr_sparse_solver_create(A, &o, &h, &c), HR_ERR_INVALID_ARG);
    assert_null(h);
    free(b1), free(b2);
    hr_csr_free(A);
}

/* Right-hand sides near the largest double (and near the smallest)
 * give finite, true relative residuals; the methods converge as for b = 1. */
static void test_scaled_norms(void **state)
{
    (void)state;
    hr_csr *A = gen("random-spd:300:0.02:1"); /* strictly dominant: x and the sums stay below b */
    const int n = A->n_rows;
    double *b = vec(n, 1e308), *z = vec(n, 0.0);
    b[0] = 1.7e308;
    assert_true(fabs(hr_csr_relative_residual(A, b, z) - 1.0) < 1e-15);
    double *tiny = vec(n, 1e-300);
    assert_true(fabs(hr_csr_relative_residual(A, tiny, z) - 1.0) < 1e-15); /* squares underflow */
    /* the solves: b = 1e300, so that the iterates' own sums (b_i + |a_ij x_j|) stay finite
     * while every square of the norms (1e600) overflows */
    for (int i = 0; i < n; i++)
        b[i] = i % 3 == 0 ? 1e300 : -2e299;
    const char *methods[] = {"jacobi", "cg", "gs", "async"};
    for (int k = 0; k < 4; k++) {
        hr_sparse_options o;
        hr_sparse_options_default(&o);
        o.method = methods[k];
        o.threads = 2;
        o.tol = 1e-12;
        double *x = vec(n, 0.0);
        hr_sparse_result r;
        hr_status st = hr_sparse_solve(A, b, x, &o, &r);
        double t = true_residual(A, b, x); /* long double: 1e616 fits */
        if (st != HR_OK || r.reason != HR_REASON_CONVERGED || !(r.initial_residual == 1.0) || !(t < 1e-12) ||
            fabs(t - r.relative_residual) > 1e-3 * t)
            fail_msg("%s with b = 1e300: %s, %s, initial %g, reported %g, true %g", methods[k],
                     hr_status_string(st), hr_reason_string(r.reason), r.initial_residual,
                     r.relative_residual, t);
        free(x);
    }
    free(b), free(z), free(tiny);
    hr_csr_free(A);
}

/* cg on a matrix that is not symmetric warns, and stops as diverged
 * when the residual grows (it ran silently to 830x the initial residual, exit 0). */
static void test_cg_not_symmetric(void **state)
{
    (void)state;
    const int n = 200;
    int32_t *ri = malloc(4 * n * sizeof *ri), *ci = malloc(4 * n * sizeof *ci);
    double *v = malloc(4 * n * sizeof *v);
    assert_true(ri && ci && v);
    int64_t k = 0;
    uint64_t seed = 3;
#define NEXT() (seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, seed >> 33)
    for (int i = 0; i < n; i++) {
        ri[k] = i, ci[k] = i, v[k++] = 4.0;
        if (i + 1 < n) ri[k] = i, ci[k] = i + 1, v[k++] = -3.0;
        if (i > 0) ri[k] = i, ci[k] = i - 1, v[k++] = -0.5;
        ri[k] = i, ci[k] = (int32_t)(NEXT() % (uint64_t)n), v[k++] = (double)(NEXT() % 2001) / 1000.0 - 1.0;
    }
#undef NEXT
    hr_csr *A;
    assert_int_equal(hr_csr_from_coo(n, n, k, ri, ci, v, &A), HR_OK);
    double *b = vec(n, 1.0), *x = vec(n, 0.0);
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    o.method = "cg";
    o.tol = 1e-10;
    o.max_iters = 10000;
    hr_sparse_result r;
    hr_status st = hr_sparse_solve(A, b, x, &o, &r);
    if (st != HR_ERR_DIVERGED || r.reason != HR_REASON_DIVERGED || !strstr(r.warning, "not symmetric") ||
        r.iterations >= 10000)
        fail_msg("cg, non-symmetric: %s, %s after %ld, residual %g, warning '%s'", hr_status_string(st),
                 hr_reason_string(r.reason), r.iterations, r.relative_residual, r.warning);
    hr_csr_free(A);
    A = gen("laplace2d:10"); /* symmetric: no warning */
    free(b), free(x);
    b = vec(100, 1.0), x = vec(100, 0.0);
    assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_OK);
    assert_string_equal(r.warning, "");
    free(ri), free(ci), free(v), free(b), free(x);
    hr_csr_free(A);
}

/* The recovery of a fault takes effect at its iteration even when nothing else (check,
 * monitor) cuts the run there: the driver's cut at fault_off. A run without checks must
 * give the same iterate, bit for bit, as one checked every iteration. */
static void test_fault_recovery_cut(void **state)
{
    (void)state;
    hr_csr *A = gen("fv2d:20");
    const int n = A->n_rows;
    double *b = vec(n, 1.0);
    const char *methods[] = {"jacobi", "gs", "async"};
    for (int k = 0; k < 3; k++) {
        hr_sparse_options o;
        hr_sparse_options_default(&o);
        o.method = methods[k];
        o.backend = HR_BACKEND_CPU_SEQ; /* deterministic */
        o.tol = 0.0;                    /* no checks: the fault events alone cut the run */
        o.max_iters = 300;
        o.fault_fraction = 0.25;
        o.fault_iter = 5;
        o.fault_recover = 20;
        double *x = vec(n, 0.0), *y = vec(n, 0.0);
        hr_sparse_result r, s;
        assert_int_equal(hr_sparse_solve(A, b, x, &o, &r), HR_OK);
        o.monitor_every = 1; /* cuts at every iteration: the reference */
        assert_int_equal(hr_sparse_solve(A, b, y, &o, &s), HR_OK);
        if (memcmp(x, y, (size_t)n * sizeof *x) != 0 || !(r.relative_residual < 1e-8))
            fail_msg("%s: unchecked run differs from the checked one (residual %.3e vs %.3e)", methods[k],
                     r.relative_residual, s.relative_residual);
        free(x), free(y);
    }
    free(b);
    hr_csr_free(A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_method_reaches_its_residual),
        cmocka_unit_test(test_deterministic_methods_match_reference),
        cmocka_unit_test(test_refusal_tau_and_divergence),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_monitor_stops),
        cmocka_unit_test(test_fault_injection),
        cmocka_unit_test(test_empty_system),
        cmocka_unit_test(test_handle_many_rhs),
        cmocka_unit_test(test_scaled_norms),
        cmocka_unit_test(test_cg_not_symmetric),
        cmocka_unit_test(test_fault_recovery_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
