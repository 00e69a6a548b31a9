/*
 * options.flush_subnormals: the CPU backends flush subnormal results and operands to zero in
 * every thread of a run, and stay bitwise cpu-seq with the same setting; the caller's own
 * floating-point mode is what it was after every call. The spike problem's spreading front
 * holds subnormals in single precision without flushing (checked, so the comparisons below
 * are not of grids that never had any).
 */
#include <float.h>
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
#include "hetrelax/mg.h"
#include "runtime/cpu/fpmode.h"

/* The spike's front after SWEEPS sweeps lies inside the grid (2-D: N = 301; 3-D: N = 121). */
#define N2     301
#define SWEEPS 120
#define N3     121
#define SW3    58

static size_t subnormals_f(const float *u, size_t count)
{
    size_t c = 0;
    for (size_t i = 0; i < count; i++)
        c += u[i] != 0.0f && fabsf(u[i]) < FLT_MIN;
    return c;
}

static size_t subnormals_d(const double *u, size_t count)
{
    size_t c = 0;
    for (size_t i = 0; i < count; i++)
        c += u[i] != 0.0 && fabs(u[i]) < DBL_MIN;
    return c;
}

static hr_options spike(int dim, const char *backend_kernel, hr_backend b, int threads, int flush)
{
    hr_options o;
    hr_options_default(&o);
    o.dim = dim;
    o.n = dim == 3 ? N3 : N2;
    o.iters = dim == 3 ? SW3 : SWEEPS;
    o.precision = HR_PREC_SINGLE;
    o.rhs = HR_RHS_SPIKE;
    o.backend = b;
    o.kernel = backend_kernel;
    o.threads = threads;
    o.flush_subnormals = flush;
    return o;
}

static size_t count_of(const hr_options *o)
{
    return (size_t)o->n * (size_t)o->n * (o->dim == 3 ? (size_t)o->n : 1u);
}

/* The run's solution in single precision (the grids' own values); the caller's mode must be
 * the same after create and run. */
static float *solve(const hr_options *o, int want_flushed)
{
    const size_t count = count_of(o);
    float *u = malloc(count * sizeof *u);
    assert_non_null(u);
    const unsigned mode = hr_fp_mode();
    hr_solver *s = NULL;
    const hr_status st = hr_solver_create(o, &s);
    if (st != HR_OK) fail_msg("create: %s (%s)", hr_status_string(st), hr_last_error());
    hr_config cfg;
    assert_int_equal(hr_solver_config(s, &cfg), HR_OK);
    assert_int_equal(cfg.flush_subnormals, want_flushed);
    if (hr_solver_run(s, NULL) != HR_OK) fail_msg("run: %s", hr_solver_last_error(s));
    assert_int_equal(hr_fp_mode(), mode);
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, u, count), HR_OK);
    hr_solver_free(s);
    return u;
}

static void assert_bitwise(const float *a, const float *b, size_t count, const char *what)
{
    for (size_t i = 0; i < count; i++)
        if (memcmp(&a[i], &b[i], sizeof a[i]) != 0)
            fail_msg("%s: differs at %zu: %.9g vs %.9g", what, i, (double)a[i], (double)b[i]);
}

/* Jacobi on the spike, 2-D and 3-D: without flushing the front holds subnormals; with it none,
 * and every threaded kernel (its workers flush too) is bitwise cpu-seq. */
static void check_jacobi(int dim, const char *const *kernels, const int *threads, int nk)
{
    hr_options o = spike(dim, NULL, HR_BACKEND_CPU_SEQ, 1, 0);
    const size_t count = count_of(&o);
    float *keep = solve(&o, 0);
    o.flush_subnormals = 1;
    float *flushed = solve(&o, 1);
    const size_t sub_keep = subnormals_f(keep, count), sub_flushed = subnormals_f(flushed, count);
    print_message("%d-D spike, %d sweeps: %zu subnormal values kept, %zu after flushing\n", dim, (int)o.iters,
                  sub_keep, sub_flushed);
    assert_true(sub_keep > 0);
    assert_int_equal(sub_flushed, 0);
    assert_true(memcmp(keep, flushed, count * sizeof *keep) != 0);
    for (int k = 0; k < nk; k++) {
        char what[64];
        for (int flush = 0; flush <= 1; flush++) {
            hr_options t = spike(dim, kernels[k], HR_BACKEND_CPU_THREADS, threads[k], flush);
            if (kernels[k] && strcmp(kernels[k], "blocks") == 0) t.layout = HR_LAYOUT_BLOCKS;
            float *u = solve(&t, flush);
            snprintf(what, sizeof what, "%d-D %s x%d, flush %d", dim, kernels[k] ? kernels[k] : "default",
                     threads[k], flush);
            assert_bitwise(flush ? flushed : keep, u, count, what);
            free(u);
        }
    }
    free(keep);
    free(flushed);
}

static void test_jacobi_2d(void **state)
{
    (void)state;
    static const char *const kernels[] = {"spmd", "spmd", "blocks", "spmd-nt"};
    static const int threads[] = {2, 3, 4, 2};
    check_jacobi(2, kernels, threads, 4);
}

static void test_jacobi_3d(void **state)
{
    (void)state;
    static const char *const kernels[] = {"pencil", "pencil"};
    static const int threads[] = {2, 3};
    check_jacobi(3, kernels, threads, 2);
}

/* Red-black: the threaded kernels bitwise rb-seq with flushing, no subnormal left. */
static void test_redblack(void **state)
{
    (void)state;
    static const char *const kernels[] = {"rb-tiles", "rb-fused"};
    hr_options o = spike(2, "rb-seq", HR_BACKEND_CPU_SEQ, 1, 1);
    o.method = HR_METHOD_REDBLACK;
    o.iters = 40;
    const size_t count = count_of(&o);
    float *ref = solve(&o, 1);
    assert_int_equal(subnormals_f(ref, count), 0);
    for (int k = 0; k < 2; k++) {
        hr_options t = o;
        t.backend = HR_BACKEND_CPU_THREADS;
        t.kernel = kernels[k];
        t.threads = 3;
        float *u = solve(&t, 1);
        assert_bitwise(ref, u, count, kernels[k]);
        free(u);
    }
    free(ref);
}

/* The caller's mode: a flushing run puts back a partial mode (flush-to-zero without
 * denormals-are-zero) exactly; a run that does not flush leaves the caller's flushing mode on,
 * and the workers of a team compute in it as the caller does. */
static void test_caller_mode(void **state)
{
    (void)state;
    hr_options o = spike(2, NULL, HR_BACKEND_CPU_SEQ, 1, 1);
    const size_t count = count_of(&o);
    float *flushed = solve(&o, 1);
    const unsigned before = hr_fp_mode();
    assert_int_equal(before, 0); /* the process starts with IEEE subnormals */
#if defined(__x86_64__)
    hr_fp_set_mode(_MM_FLUSH_ZERO_MASK); /* results only */
    float *u = solve(&o, 1);             /* asserts the mode is _MM_FLUSH_ZERO_MASK afterwards */
    assert_int_equal(hr_fp_mode(), _MM_FLUSH_ZERO_MASK);
    hr_fp_set_mode(before);
    assert_bitwise(flushed, u, count, "flushing from a partial mode");
    free(u);
#endif
    /* the caller flushes on its own: a run without the option computes in the caller's mode,
     * its team's workers too (started by create before the caller changed its mode, so they
     * did not inherit it) */
    hr_options t = spike(2, "spmd", HR_BACKEND_CPU_THREADS, 2, 0);
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&t, &s), HR_OK);
    hr_fp_set_mode(HR_FP_FLUSH_BITS);
    const hr_status st = hr_solver_run(s, NULL);
    assert_int_equal(hr_fp_mode(), HR_FP_FLUSH_BITS);
    hr_fp_set_mode(before);
    assert_int_equal(st, HR_OK);
    float *v = malloc(count * sizeof *v);
    assert_non_null(v);
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, v, count), HR_OK);
    hr_solver_free(s);
    assert_bitwise(flushed, v, count, "threads in the caller's flushing mode");
    free(v);
    assert_int_equal(hr_fp_mode(), before);
    free(flushed);
}

/* The hybrid backend keeps subnormals (its GPU part does; here both parts are CPU crews, the
 * tests' placement), bitwise the unflushed cpu-seq; its crews compute in their caller's mode. */
static void test_hybrid_crews(void **state)
{
    (void)state;
    hr_options o = spike(2, NULL, HR_BACKEND_CPU_SEQ, 1, 0);
    const size_t count = count_of(&o);
    float *keep = solve(&o, 0);
    o.flush_subnormals = 1;
    float *flushed = solve(&o, 1);
    hr_options h = spike(2, NULL, HR_BACKEND_HYBRID, 2, 1);
    h.split_second = HR_SPLIT_CPU;
    h.split = 0.5;
    float *u = solve(&h, 0);
    assert_bitwise(keep, u, count, "hybrid asked to flush");
    free(u);
    h.flush_subnormals = 0;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&h, &s), HR_OK);
    const unsigned before = hr_fp_mode();
    hr_fp_set_mode(HR_FP_FLUSH_BITS);
    const hr_status st = hr_solver_run(s, NULL);
    hr_fp_set_mode(before);
    assert_int_equal(st, HR_OK);
    u = malloc(count * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, u, count), HR_OK);
    hr_solver_free(s);
    assert_bitwise(flushed, u, count, "hybrid crews in the caller's flushing mode");
    free(u);
    free(keep);
    free(flushed);
}

/* hr_grid_solver: the model problem (hr_solver underneath), a general problem (the stencil
 * engine and its team) in double with values that reach the subnormal range, multigrid
 * (hr_mg); cpu-seq and cpu-threads bitwise alike with flushing, and hr_grid_info says so. */
static double *grid_run(const hr_problem *p, hr_grid_options o, hr_backend b, int threads, int flush)
{
    o.backend = b;
    o.threads = threads;
    o.flush_subnormals = flush;
    hr_grid_solver *s = NULL;
    const hr_status st = hr_grid_solver_create(p, &o, &s);
    if (st != HR_OK) fail_msg("grid create: %s (%s)", hr_status_string(st), hr_last_error());
    hr_grid_info gi;
    assert_int_equal(hr_grid_solver_info(s, &gi), HR_OK);
    assert_int_equal(gi.flush_subnormals, flush);
    const unsigned mode = hr_fp_mode();
    hr_result r;
    const hr_status ss = hr_grid_solver_solve(s, NULL, NULL, &r);
    if (ss != HR_OK) fail_msg("grid solve: %s (%s)", hr_status_string(ss), hr_grid_solver_last_error(s));
    assert_int_equal(hr_fp_mode(), mode);
    const size_t count = hr_problem_unknowns(p);
    double *u = malloc(count * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, count), HR_OK);
    hr_grid_solver_free(s);
    return u;
}

static void check_grid(const hr_problem *p, const hr_grid_options *o, int subnormal_kept, const char *what)
{
    const size_t count = hr_problem_unknowns(p);
    double *keep = grid_run(p, *o, HR_BACKEND_CPU_SEQ, 1, 0);
    double *seq = grid_run(p, *o, HR_BACKEND_CPU_SEQ, 1, 1);
    double *thr = grid_run(p, *o, HR_BACKEND_CPU_THREADS, 2, 1);
    const int single = o->precision == HR_PREC_SINGLE;
    size_t kept = 0, left = 0;
    for (size_t i = 0; i < count; i++) {
        const float kf = (float)keep[i], sf = (float)seq[i];
        kept += single ? subnormals_f(&kf, 1) : subnormals_d(&keep[i], 1);
        left += single ? subnormals_f(&sf, 1) : subnormals_d(&seq[i], 1);
    }
    print_message("%s: %zu subnormal values kept, %zu after flushing\n", what, kept, left);
    if (subnormal_kept) assert_true(kept > 0);
    assert_int_equal(left, 0);
    for (size_t i = 0; i < count; i++)
        if (memcmp(&seq[i], &thr[i], sizeof seq[i]) != 0)
            fail_msg("%s: cpu-threads differs from cpu-seq at %zu: %.17g vs %.17g", what, i, thr[i], seq[i]);
    free(keep);
    free(seq);
    free(thr);
}

static void test_grid_solver(void **state)
{
    (void)state;
    hr_problem p;
    assert_int_equal(hr_problem_init_model(&p, 2, N2, N2, 0), HR_OK);
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.precision = HR_PREC_SINGLE;
    o.max_iters = SWEEPS;
    check_grid(&p, &o, 1, "model problem, jacobi single");

    /* a Neumann face: the general engine, double; f at one point so small that the front
     * reaches the subnormal range of doubles within the sweeps */
    hr_problem g;
    const int n = 63;
    assert_int_equal(hr_problem_init_model(&g, 2, n, n, 0), HR_OK);
    assert_int_equal(hr_problem_set_bc(&g, HR_FACE_X_MINUS, HR_BC_NEUMANN, 0.0, NULL), HR_OK);
    double *f = calloc((size_t)n * n, sizeof *f);
    assert_non_null(f);
    f[(size_t)(n / 2) * n + n / 2] = 1e-290;
    assert_int_equal(hr_problem_set_rhs(&g, HR_RHS_ARRAY, f), HR_OK);
    hr_grid_options_default(&o);
    o.precision = HR_PREC_DOUBLE;
    o.max_iters = 30;
    check_grid(&g, &o, 1, "general problem, jacobi double");

    /* multigrid (hr_mg): the same tiny source on the model problem */
    hr_problem m;
    assert_int_equal(hr_problem_init_model(&m, 2, n, n, 0), HR_OK);
    assert_int_equal(hr_problem_set_rhs(&m, HR_RHS_ARRAY, f), HR_OK);
    hr_grid_options_default(&o);
    o.method = HR_METHOD_MG;
    o.max_iters = 2;
    check_grid(&m, &o, 0, "model problem, mg double");
    free(f);
}

/* hr_mg directly (the command's multigrid): the caller's mode is put back, cpu threads alike. */
static void test_mg(void **state)
{
    (void)state;
    const int n = 63;
    double *f = calloc((size_t)n * n, sizeof *f);
    assert_non_null(f);
    f[(size_t)(n / 2) * n + n / 2] = 1e-290;
    double *u[2];
    for (int t = 0; t < 2; t++) {
        hr_mg_options o;
        hr_mg_options_default(&o);
        o.n = n;
        o.rhs = HR_RHS_ARRAY;
        o.rhs_values = f;
        o.tol = 0.0;
        o.max_iters = 2;
        o.threads = t + 1;
        o.flush_subnormals = 1;
        hr_mg *m = NULL;
        if (hr_mg_create(&o, &m) != HR_OK) fail_msg("mg create: %s", hr_mg_last_error());
        const unsigned mode = hr_fp_mode();
        hr_mg_result r;
        assert_int_equal(hr_mg_solve(m, &r), HR_OK);
        assert_int_equal(hr_fp_mode(), mode);
        u[t] = malloc((size_t)n * n * sizeof *u[t]);
        assert_non_null(u[t]);
        assert_int_equal(hr_mg_solution(m, u[t], (size_t)n * n), HR_OK);
        assert_int_equal(subnormals_d(u[t], (size_t)n * n), 0);
        hr_mg_free(m);
    }
    assert_memory_equal(u[0], u[1], (size_t)n * n * sizeof *u[0]);
    free(u[0]);
    free(u[1]);
    free(f);
}

/* 0 or 1, in every options struct; the message names the field. */
static void test_values(void **state)
{
    (void)state;
    hr_options o = spike(2, NULL, HR_BACKEND_CPU_SEQ, 1, 2);
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "flush_subnormals:"));
    hr_problem p;
    assert_int_equal(hr_problem_init_model(&p, 2, 15, 15, 0), HR_OK);
    hr_grid_options go;
    hr_grid_options_default(&go);
    go.flush_subnormals = -1;
    hr_grid_solver *g = NULL;
    assert_int_equal(hr_grid_solver_create(&p, &go, &g), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "flush_subnormals:"));
    hr_mg_options mo;
    hr_mg_options_default(&mo);
    mo.flush_subnormals = 3;
    char why[128] = "";
    assert_int_equal(hr_mg_options_validate(&mo, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "flush_subnormals:"));
}

int main(void)
{
    if (!HR_FP_CAN_FLUSH) {
        fprintf(stderr, "test_flush: no flush-to-zero switch on this architecture: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jacobi_2d),    cmocka_unit_test(test_jacobi_3d),
        cmocka_unit_test(test_redblack),     cmocka_unit_test(test_caller_mode),
        cmocka_unit_test(test_hybrid_crews), cmocka_unit_test(test_grid_solver),
        cmocka_unit_test(test_mg),           cmocka_unit_test(test_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
