/* Multigrid and CG through the public API (hetrelax/mg.h): convergence factors and their
 * independence of n, FMG to the discretisation error, mixed precision to fp64 accuracy,
 * bitwise results for any thread count, boundary values, solve-many, bad input, and one
 * cycle as a symmetric operator (hr_grid_options.symmetric) on both engines. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/grid_solver.h"
#include "hetrelax/mg.h"
#include "mg_test_util.h"

/* The asymptotic factor: the geometric mean of the residual ratios after the first cycle. */
static double rates[64];
static long nrates;
static double prev_rel; /* the residual of the cycle before (every cycle is checked) */
static int record(long it, double rel, void *user)
{
    (void)user;
    if (it >= 2 && nrates < 64) rates[nrates++] = rel / prev_rel;
    prev_rel = rel;
    return 0;
}

static double asymptotic_factor(int dim, int n, hr_mg_smoother sm)
{
    hr_mg_options o = opts(dim, n);
    double *f = random_values(points(&o), 7);
    o.rhs = HR_RHS_ARRAY;
    o.rhs_values = f;
    o.smoother = sm;
    o.tol = 1e-11;
    o.monitor = record;
    nrates = 0;
    hr_mg_result r;
    free(run(&o, &r));
    free(f);
    assert_int_equal(r.reason, HR_REASON_CONVERGED);
    double s = 0.0;
    for (long i = 0; i < nrates; i++)
        s += log(rates[i]);
    return exp(s / (double)nrates);
}

/* V(2,2) with red-black smoothing: <= 0.1 per cycle and the same for every n. */
static void test_vcycle_factor_redblack(void **state)
{
    (void)state;
    const int n2[3] = {31, 63, 127}, n3[2] = {15, 31};
    double lo = 1.0, hi = 0.0;
    for (int i = 0; i < 3; i++) {
        const double q = asymptotic_factor(2, n2[i], HR_MG_SMOOTH_REDBLACK);
        print_message("2-D n=%d: factor %.4f\n", n2[i], q);
        assert_true(q <= 0.1);
        lo = fmin(lo, q);
        hi = fmax(hi, q);
    }
    assert_true(hi - lo <= 0.01);
    lo = 1.0;
    hi = 0.0;
    for (int i = 0; i < 2; i++) {
        const double q = asymptotic_factor(3, n3[i], HR_MG_SMOOTH_REDBLACK);
        print_message("3-D n=%d: factor %.4f\n", n3[i], q);
        assert_true(q <= 0.1);
        lo = fmin(lo, q);
        hi = fmax(hi, q);
    }
    assert_true(hi - lo <= 0.01);
}

/* The other smoothers converge too, at factors independent of n (weaker bounds). */
static void test_vcycle_factor_jacobi_cheby(void **state)
{
    (void)state;
    for (int s = 0; s < 2; s++) {
        const hr_mg_smoother sm = s ? HR_MG_SMOOTH_CHEBY : HR_MG_SMOOTH_JACOBI;
        const double a = asymptotic_factor(2, 31, sm), b = asymptotic_factor(2, 127, sm);
        const double c = asymptotic_factor(3, 15, sm), d = asymptotic_factor(3, 31, sm);
        print_message("%s: 2-D %.4f %.4f, 3-D %.4f %.4f\n", hr_mg_smoother_name(sm), a, b, c, d);
        assert_true(a <= 0.2 && b <= 0.2 && c <= 0.3 && d <= 0.3);
        assert_true(fabs(a - b) <= 0.02 && fabs(c - d) <= 0.03);
    }
}

/* One FMG pass reaches the discretisation error (within 2x) on the manufactured problem. */
static void test_fmg_discretisation_error(void **state)
{
    (void)state;
    const int dims[3] = {2, 2, 3}, ns[3] = {63, 255, 31};
    for (int c = 0; c < 3; c++) {
        hr_mg_options o = opts(dims[c], ns[c]);
        o.rhs = HR_RHS_MANUFACTURED;
        o.tol = 1e-11;
        hr_mg_result conv, fmg;
        free(run(&o, &conv)); /* the discrete solution: its error is the discretisation error */
        assert_int_equal(conv.reason, HR_REASON_CONVERGED);
        o.cycle = HR_MG_CYCLE_FMG;
        o.tol = 0.0;
        o.max_iters = 1;
        free(run(&o, &fmg));
        print_message("%d-D n=%d: discretisation error %.3e, FMG %.3e\n", dims[c], ns[c], conv.max_error,
                      fmg.max_error);
        assert_true(fmg.max_error <= 2.0 * conv.max_error);
        /* and the error is the discretisation error, O(h^2): not a solution of something else */
        const double h = 1.0 / (ns[c] + 1.0);
        assert_true(conv.max_error < 0.2 * h * h * 10.0 && conv.max_error > 0.01 * h * h);
    }
}

/* Mixed precision (fp32 cycles in fp64 defect correction) reaches the fp64 tolerance; fp32
 * alone cannot. */
static void test_mixed_precision(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++) {
        hr_mg_options o = opts(dim, dim == 2 ? 127 : 31);
        double *f = random_values(points(&o), 11);
        o.rhs = HR_RHS_ARRAY;
        o.rhs_values = f;
        o.tol = 1e-11;
        o.precision = HR_MG_PREC_MIXED;
        hr_mg_result r;
        free(run(&o, &r));
        print_message("%d-D mixed: %ld cycles, residual %.3e\n", dim, r.iterations, r.relative_residual);
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        assert_true(r.relative_residual < 1e-10);
        o.method = HR_MG_METHOD_CG;
        o.pc = HR_MG_PC_MG;
        free(run(&o, &r));
        print_message("%d-D mixed pcg: %ld iterations, residual %.3e\n", dim, r.iterations,
                      r.relative_residual);
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        assert_true(r.relative_residual < 1e-10);
        o.method = HR_MG_METHOD_MG;
        o.pc = HR_MG_PC_NONE;
        o.precision = HR_MG_PREC_SINGLE;
        o.max_iters = 40;
        free(run(&o, &r));
        assert_true(r.relative_residual > 1e-10);
        free(f);
    }
}

/* Values far outside fp32's range (mixed precision, a CG) or whose squares leave fp64's
 * (norms, CG dots): the right-hand side times 2^k solves to 2^k times the unscaled answer,
 * bitwise (a power of two changes no digit), in the same iterations; subnormal data converges
 * (was: NaN after one cycle, or a residual stuck at 1). */
static void test_out_of_range_values(void **state)
{
    (void)state;
    static const struct {
        hr_mg_method method;
        hr_mg_pc pc;
        hr_mg_precision prec;
        int levels; /* 3: the coarsest level is solved by CG (its dots scaled too) */
    } kinds[] = {{HR_MG_METHOD_MG, HR_MG_PC_NONE, HR_MG_PREC_MIXED, 0},
                 {HR_MG_METHOD_MG, HR_MG_PC_NONE, HR_MG_PREC_DOUBLE, 0},
                 {HR_MG_METHOD_MG, HR_MG_PC_NONE, HR_MG_PREC_DOUBLE, 3},
                 {HR_MG_METHOD_CG, HR_MG_PC_NONE, HR_MG_PREC_DOUBLE, 0},
                 {HR_MG_METHOD_CG, HR_MG_PC_MG, HR_MG_PREC_DOUBLE, 0},
                 {HR_MG_METHOD_CG, HR_MG_PC_MG, HR_MG_PREC_MIXED, 3}};
    static const int shifts[] = {700, -700, 150, -150};
    for (int dim = 2; dim <= 3; dim++)
        for (size_t v = 0; v < sizeof kinds / sizeof kinds[0]; v++) {
            hr_mg_options o = opts(dim, dim == 2 ? 63 : 15);
            const size_t n = points(&o);
            double *f = random_values(n, 21), *g = malloc(n * sizeof *g);
            assert_non_null(g);
            o.rhs = HR_RHS_ARRAY;
            o.rhs_values = f;
            o.method = kinds[v].method;
            o.pc = kinds[v].pc;
            o.precision = kinds[v].prec;
            o.levels = kinds[v].levels;
            o.tol = 1e-9;
            o.max_iters = 500;
            hr_mg_result r0, r;
            double *u0 = run(&o, &r0);
            assert_int_equal(r0.reason, HR_REASON_CONVERGED);
            for (size_t k = 0; k < sizeof shifts / sizeof shifts[0]; k++) {
                for (size_t i = 0; i < n; i++)
                    g[i] = ldexp(f[i], shifts[k]);
                o.rhs_values = g;
                double *u = run(&o, &r);
                size_t bad = 0;
                for (size_t i = 0; i < n; i++)
                    if (u[i] != ldexp(u0[i], shifts[k])) bad++;
                print_message(
                    "%d-D %s pc %d prec %d levels %d, f * 2^%d: %ld iterations (%ld unscaled), rel %.3e, "
                    "%zu of %zu values not 2^%d times the unscaled ones\n",
                    dim, kinds[v].method == HR_MG_METHOD_MG ? "mg" : "cg", (int)kinds[v].pc,
                    (int)kinds[v].prec, kinds[v].levels, shifts[k], r.iterations, r0.iterations,
                    r.relative_residual, bad, n, shifts[k]);
                assert_int_equal(r.reason, HR_REASON_CONVERGED);
                assert_int_equal(r.iterations, r0.iterations);
                assert_int_equal(bad, 0);
                free(u);
            }
            /* subnormal data (every h^2 f below DBL_MIN): converged, no NaN; its answer has only
             * ~40 significant bits, which the true residual of CG's last iterate shows */
            for (size_t i = 0; i < n; i++)
                g[i] = 1e-310 * (1.0 + 0.5 * f[i]);
            double *u = run(&o, &r);
            print_message("%d-D subnormal f: %ld iterations, rel %.3e\n", dim, r.iterations,
                          r.relative_residual);
            assert_int_equal(r.reason, HR_REASON_CONVERGED);
            assert_true(r.relative_residual < 1e-7);
            free(u);
            free(u0);
            free(f);
            free(g);
        }
}

/* CG and PCG-MG converge; PCG needs far fewer iterations; both agree with MG's answer. */
static void test_cg_pcg(void **state)
{
    (void)state;
    hr_mg_options o = opts(2, 127);
    double *f = random_values(points(&o), 3);
    o.rhs = HR_RHS_ARRAY;
    o.rhs_values = f;
    o.tol = 1e-10;
    o.max_iters = 2000;
    hr_mg_result rm, rc, rp;
    double *um = run(&o, &rm);
    o.method = HR_MG_METHOD_CG;
    double *uc = run(&o, &rc);
    o.pc = HR_MG_PC_MG;
    double *up = run(&o, &rp);
    print_message("mg %ld cycles, cg %ld, pcg %ld iterations\n", rm.iterations, rc.iterations, rp.iterations);
    assert_int_equal(rc.reason, HR_REASON_CONVERGED);
    assert_int_equal(rp.reason, HR_REASON_CONVERGED);
    assert_true(rc.relative_residual < 2e-10 && rp.relative_residual < 2e-10);
    assert_true(rp.iterations <= 10 && rc.iterations > 100);
    double d1 = 0.0, d2 = 0.0, mx = 0.0;
    for (size_t i = 0; i < points(&o); i++) {
        d1 = fmax(d1, fabs(um[i] - uc[i]));
        d2 = fmax(d2, fabs(um[i] - up[i]));
        mx = fmax(mx, fabs(um[i]));
    }
    assert_true(d1 <= 1e-7 * mx && d2 <= 1e-7 * mx);
    free(um);
    free(uc);
    free(up);
    free(f);
}

/* Bitwise the same solution for 1, 2 and 3 threads: every smoother, cycle, method, precision. */
static void test_threads_bitwise(void **state)
{
    (void)state;
    struct {
        int dim, n, method, pc, cycle, smoother, prec;
    } cs[] = {
        {2, 255, HR_MG_METHOD_MG, 0, HR_MG_CYCLE_V, HR_MG_SMOOTH_REDBLACK, HR_MG_PREC_DOUBLE},
        {2, 255, HR_MG_METHOD_MG, 0, HR_MG_CYCLE_W, HR_MG_SMOOTH_JACOBI, HR_MG_PREC_DOUBLE},
        {2, 255, HR_MG_METHOD_MG, 0, HR_MG_CYCLE_F, HR_MG_SMOOTH_CHEBY, HR_MG_PREC_DOUBLE},
        {2, 255, HR_MG_METHOD_MG, 0, HR_MG_CYCLE_FMG, HR_MG_SMOOTH_REDBLACK, HR_MG_PREC_MIXED},
        {3, 31, HR_MG_METHOD_MG, 0, HR_MG_CYCLE_V, HR_MG_SMOOTH_REDBLACK, HR_MG_PREC_SINGLE},
        {3, 31, HR_MG_METHOD_MG, 0, HR_MG_CYCLE_V, HR_MG_SMOOTH_JACOBI, HR_MG_PREC_DOUBLE},
        {3, 31, HR_MG_METHOD_MG, 0, HR_MG_CYCLE_V, HR_MG_SMOOTH_CHEBY, HR_MG_PREC_DOUBLE},
        {3, 31, HR_MG_METHOD_CG, HR_MG_PC_MG, HR_MG_CYCLE_V, HR_MG_SMOOTH_REDBLACK, HR_MG_PREC_DOUBLE},
        {2, 255, HR_MG_METHOD_CG, 0, HR_MG_CYCLE_V, HR_MG_SMOOTH_REDBLACK, HR_MG_PREC_DOUBLE},
    };
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        hr_mg_options o = opts(cs[c].dim, cs[c].n);
        double *f = random_values(points(&o), 5 + c);
        o.rhs = HR_RHS_ARRAY;
        o.rhs_values = f;
        o.method = cs[c].method;
        o.pc = cs[c].pc;
        o.cycle = cs[c].cycle;
        o.smoother = cs[c].smoother;
        o.precision = cs[c].prec;
        o.tol = 0.0;
        o.max_iters = cs[c].method == HR_MG_METHOD_CG && !cs[c].pc ? 30 : 3;
        hr_mg_result r;
        o.threads = 1;
        double *ref = run(&o, &r);
        for (int t = 2; t <= 3; t++) {
            o.threads = t;
            double *u = run(&o, &r);
            if (memcmp(u, ref, points(&o) * sizeof *u) != 0) fail_msg("case %zu: %d threads differ", c, t);
            free(u);
        }
        free(ref);
        free(f);
    }
}

/* A non-zero Dirichlet boundary with f = 0: the solution is the boundary value. */
static void test_boundary(void **state)
{
    (void)state;
    for (int k = 0; k < 4; k++) {
        hr_mg_options o = opts(k == 3 ? 3 : 2, k == 3 ? 15 : 63);
        o.rhs = HR_RHS_ZERO;
        o.boundary = 2.5;
        o.tol = 1e-12;
        o.method = k == 2 ? HR_MG_METHOD_CG : HR_MG_METHOD_MG;
        o.pc = k == 2 ? HR_MG_PC_MG : HR_MG_PC_NONE;
        o.precision = k == 1 ? HR_MG_PREC_MIXED : HR_MG_PREC_DOUBLE;
        o.cycle = k == 3 ? HR_MG_CYCLE_FMG : HR_MG_CYCLE_V;
        hr_mg_result r;
        double *u = run(&o, &r);
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        double e = 0.0;
        for (size_t i = 0; i < points(&o); i++)
            e = fmax(e, fabs(u[i] - 2.5));
        assert_true(e < 1e-9);
        free(u);
    }
}

/* One handle, solved twice: the same answer (setup once, solve many). */
static void test_solve_twice(void **state)
{
    (void)state;
    hr_mg_options o = opts(2, 127);
    o.rhs = HR_RHS_SPIKE;
    hr_mg *m;
    assert_int_equal(hr_mg_create(&o, &m), HR_OK);
    const size_t n = points(&o);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    hr_mg_result r1, r2;
    assert_int_equal(hr_mg_solve(m, &r1), HR_OK);
    assert_int_equal(hr_mg_solution(m, a, n), HR_OK);
    assert_int_equal(hr_mg_solve(m, &r2), HR_OK);
    assert_int_equal(hr_mg_solution(m, b, n), HR_OK);
    assert_int_equal(r1.iterations, r2.iterations);
    assert_memory_equal(a, b, n * sizeof *a);
    assert_true(r1.relative_residual < 1e-8);
    hr_mg_free(m);
    free(a);
    free(b);
}

/* The right-hand side array is copied at create: a second solve after the caller changed (or
 * freed) its array gives the first answer again, for every method. */
static void test_rhs_array_copied(void **state)
{
    (void)state;
    for (int v = 0; v < 3; v++) {
        hr_mg_options o = opts(2, 31);
        o.method = v == 0 ? HR_MG_METHOD_MG : HR_MG_METHOD_CG;
        o.pc = v == 2 ? HR_MG_PC_MG : HR_MG_PC_NONE;
        o.max_iters = 200;
        const size_t n = points(&o);
        double *f = random_values(n, 11);
        o.rhs = HR_RHS_ARRAY;
        o.rhs_values = f;
        hr_mg *m;
        assert_int_equal(hr_mg_create(&o, &m), HR_OK);
        double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        hr_mg_result r1, r2;
        assert_int_equal(hr_mg_solve(m, &r1), HR_OK);
        assert_int_equal(hr_mg_solution(m, a, n), HR_OK);
        for (size_t i = 0; i < n; i++)
            f[i] = 1e3; /* the caller's array now says something else */
        assert_int_equal(hr_mg_solve(m, &r2), HR_OK);
        assert_int_equal(hr_mg_solution(m, b, n), HR_OK);
        assert_int_equal(r1.iterations, r2.iterations);
        assert_memory_equal(a, b, n * sizeof *a);
        hr_mg_free(m);
        free(a);
        free(b);
        free(f);
    }
}

/* A zeroed precision (HR_PREC_DEFAULT) is double, bitwise the run that asks for double. */
static void test_default_precision_is_double(void **state)
{
    (void)state;
    hr_mg_options o = opts(2, 63);
    o.precision = HR_PREC_DEFAULT;
    hr_mg_result r1, r2;
    double *a = run(&o, &r1);
    o.precision = HR_PREC_DOUBLE;
    double *b = run(&o, &r2);
    assert_memory_equal(a, b, points(&o) * sizeof *a);
    assert_true(r1.relative_residual < 1e-8); /* fp32 levels stall near 1e-6 */
    free(a);
    free(b);
}

static void expect_bad(const hr_mg_options *o, const char *field)
{
    hr_mg *m = NULL;
    assert_int_equal(hr_mg_create(o, &m), HR_ERR_INVALID_ARG);
    assert_null(m);
    const char *e = hr_mg_last_error();
    if (strncmp(e, field, strlen(field)) != 0 || e[strlen(field)] != ':')
        fail_msg("expected '%s: ...', got '%s'", field, e);
}

static void test_bad_input(void **state)
{
    (void)state;
    hr_mg_options o = opts(2, 100);
    expect_bad(&o, "n"); /* 100 is not 2^k - 1 */
    o = opts(2, 63);
    o.ny = 64;
    expect_bad(&o, "ny");
    o = opts(3, 31);
    o.nz = 30;
    expect_bad(&o, "nz");
    o = opts(2, 63);
    o.levels = 7; /* 63 -> 31 -> 15 -> 7 -> 3 -> 1: 6 levels */
    expect_bad(&o, "levels");
    o.levels = 6;
    hr_mg *m;
    assert_int_equal(hr_mg_create(&o, &m), HR_OK);
    hr_mg_free(m);
    o = opts(2, 63);
    o.pc = HR_MG_PC_MG; /* with method mg */
    expect_bad(&o, "pc");
    o.method = HR_MG_METHOD_CG;
    o.cycle = HR_MG_CYCLE_W;
    expect_bad(&o, "cycle");
    o.cycle = HR_MG_CYCLE_V;
    o.post = 1;
    expect_bad(&o, "post");
    o = opts(2, 63);
    o.pre = o.post = 0;
    expect_bad(&o, "pre");
    o = opts(2, 63);
    o.rhs = HR_RHS_ARRAY;
    expect_bad(&o, "rhs");
    o = opts(4, 63);
    expect_bad(&o, "dim");
    o = opts(2, 63);
    o.omega = 2.0;
    expect_bad(&o, "omega");
    /* async3 and coarse-on cpu are GPU options (validated without a device) */
    char why[200];
    o = opts(2, 63);
    o.smoother = HR_MG_SMOOTH_ASYNC;
    expect_bad(&o, "smoother"); /* backend cpu */
    o.backend = HR_MG_BACKEND_GPU;
    assert_int_equal(hr_mg_options_validate(&o, why, sizeof why), HR_OK);
    o.method = HR_MG_METHOD_CG;
    o.pc = HR_MG_PC_MG;
    assert_int_equal(hr_mg_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "smoother: async3 is not symmetric"));
    o = opts(2, 63);
    o.coarse_on = HR_MG_COARSE_ON_CPU;
    expect_bad(&o, "coarse-on"); /* backend cpu */
    o.backend = HR_MG_BACKEND_GPU;
    o.coarse_level = 6; /* 6 levels: 1..5 */
    assert_int_equal(hr_mg_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_string_equal(why, "coarse-level: must be between 1 and 5 (levels - 1)");
    o.coarse_level = 5;
    assert_int_equal(hr_mg_options_validate(&o, why, sizeof why), HR_OK);
    o.levels = 3;
    assert_int_equal(hr_mg_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    o = opts(2, 63);
    o.coarse_level = 2; /* without coarse-on cpu */
    expect_bad(&o, "coarse-level");
    /* plain CG takes any size */
    o = opts(2, 100);
    o.method = HR_MG_METHOD_CG;
    o.max_iters = 1000;
    hr_mg_result r;
    free(run(&o, &r));
    assert_int_equal(r.reason, HR_REASON_CONVERGED);
}

/* z = M f: one V-cycle from zero of the solver s (tol 0, one iteration). */
static void one_cycle(hr_grid_solver *s, const double *f, double *z, size_t n)
{
    hr_result r;
    assert_int_equal(hr_grid_solver_solve(s, f, NULL, &r), HR_OK);
    assert_int_equal(r.iterations, 1);
    assert_int_equal(hr_grid_solver_solution(s, HR_PREC_DOUBLE, z, n), HR_OK);
}

/* v . M w against w . M v: symmetric with the option (the model engine at 2^k - 1, the general
 * engine at 30 x 31), and not without it on the general engine (its post-smoothing then sweeps
 * the colours forward: the check can tell). */
static void test_symmetric_cycle(void **state)
{
    (void)state;
    for (int eng = 0; eng < 2; eng++)
        for (int sym = 1; sym >= 0; sym--) {
            hr_problem p;
            hr_problem_init_model(&p, 2, eng ? 30 : 31, 31, 0);
            const size_t n = hr_problem_unknowns(&p);
            hr_grid_options o;
            hr_grid_options_default(&o);
            o.method = HR_METHOD_MG;
            o.backend = HR_BACKEND_CPU_SEQ;
            o.tol = 0.0;
            o.max_iters = 1;
            o.symmetric = sym;
            hr_grid_solver *s = NULL;
            assert_int_equal(hr_grid_solver_create(&p, &o, &s), HR_OK);
            double *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w), *mv = malloc(n * sizeof *mv),
                   *mw = malloc(n * sizeof *mw);
            unsigned x = 7u;
            for (size_t i = 0; i < n; i++) {
                x = x * 1664525u + 1013904223u;
                v[i] = (double)(x >> 8) / 16777216.0 - 0.5;
                x = x * 1664525u + 1013904223u;
                w[i] = (double)(x >> 8) / 16777216.0 - 0.5;
            }
            one_cycle(s, v, mv, n);
            one_cycle(s, w, mw, n);
            double a = 0.0, b = 0.0;
            for (size_t i = 0; i < n; i++)
                a += w[i] * mv[i], b += v[i] * mw[i];
            const double rel = fabs(a - b) / fabs(a);
            if (sym)
                assert_true(rel < 1e-12);
            else if (eng)
                assert_true(rel > 1e-8);
            hr_grid_solver_free(s);
            free(v), free(w), free(mv), free(mw);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vcycle_factor_redblack),
        cmocka_unit_test(test_vcycle_factor_jacobi_cheby),
        cmocka_unit_test(test_fmg_discretisation_error),
        cmocka_unit_test(test_mixed_precision),
        cmocka_unit_test(test_cg_pcg),
        cmocka_unit_test(test_out_of_range_values),
        cmocka_unit_test(test_threads_bitwise),
        cmocka_unit_test(test_boundary),
        cmocka_unit_test(test_solve_twice),
        cmocka_unit_test(test_rhs_array_copied),
        cmocka_unit_test(test_default_precision_is_double),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_symmetric_cycle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
