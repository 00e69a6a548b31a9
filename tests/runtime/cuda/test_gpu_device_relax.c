/*
 * The model problem's relaxation kernels on one GPU through hr_grid_solver_solve_device
 * (label gpu; exit 77 without a device): f, x0 and the solution in the device's memory give
 * the bits of the same solve from host arrays, for Jacobi kernels of every layout (padded,
 * unpadded rows, temporal blocking, 3-D), red-black and SOR, fp64 and fp32 engines, fp32 and
 * fp64 arrays, a problem scaled by its lengths, a handle whose problem has f = 0 (set up
 * again with room for f) and later solves of the same handle (restarted on the device). The
 * asynchronous async3 converges from device arrays. The final residual is the device's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>
#include <math.h>

#include "core/registry.h"
#include "device_mem_test_util.h"
#include "hetrelax/hetrelax.h"
#include "runtime/cuda/cuda_api.h"
#include "tuning_test_util.h"

static double *random_values(size_t n, unsigned seed)
{
    double *v = malloc(n * sizeof *v);
    assert_non_null(v);
    unsigned long long x = 0x9E3779B97F4A7C15ull * (seed + 1);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[i] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
    }
    return v;
}

typedef struct relax_case {
    const char *kernel; /* NULL: the method's default */
    hr_method method;
    int dim, nx, ny, nz;
    double length; /* every axis (1: the unit square or cube) */
    hr_precision prec;
    int fp32; /* the arrays hold fp32 values */
    int alpha;
} relax_case;

static hr_grid_solver *make(const relax_case *c, const hr_problem *p, long iters, double tol)
{
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.method = c->method;
    o.kernel = c->kernel;
    o.alpha = c->alpha;
    o.precision = c->prec;
    o.backend = HR_BACKEND_GPU;
    o.max_iters = iters;
    o.tol = tol;
    o.check_every = 10;
    o.tuning = *env_tuning();
    hr_grid_solver *s = NULL;
    const hr_status st = hr_grid_solver_create(p, &o, &s);
    if (st != HR_OK) fail_msg("%s: create: %s (%s)", c->kernel ? c->kernel : hr_method_name(c->method),
                              hr_status_string(st), s ? hr_grid_solver_last_error(s) : hr_last_error());
    hr_grid_info info;
    assert_int_equal(hr_grid_solver_info(s, &info), HR_OK);
    if (strcmp(info.engine, "solver") != 0) fail_msg("engine %s: not the relaxation engine", info.engine);
    return s;
}

/* Values as the arrays hold them: rounded to fp32 for fp32 arrays. */
static void *as_array(const relax_case *c, const double *v, size_t n, double *rounded)
{
    if (!c->fp32) {
        memcpy(rounded, v, n * sizeof *v);
        return (void *)v;
    }
    float *f = malloc(n * sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)v[i], rounded[i] = f[i];
    return f;
}

/* host solve of h from (f, x0), the solution read as the device arrays hold it */
static void host_solve(hr_grid_solver *h, const relax_case *c, const double *f, const double *x0, void *u,
                       size_t n, hr_result *r)
{
    const hr_status st = hr_grid_solver_solve(h, f, x0, r);
    if (st != HR_OK) fail_msg("host solve: %s: %s", hr_status_string(st), hr_grid_solver_last_error(h));
    assert_int_equal(hr_grid_solver_solution(h, c->fp32 ? HR_PREC_SINGLE : HR_PREC_DOUBLE, u, n), HR_OK);
}

static void same(const relax_case *c, const char *what, const void *want, const void *got, size_t bytes,
                 const hr_result *rh, const hr_result *rd)
{
    const char *name = c->kernel ? c->kernel : hr_method_name(c->method);
    if (memcmp(want, got, bytes) != 0) fail_msg("%s %d-D %s: %s: device arrays differ from host arrays", name,
                                                c->dim, hr_precision_name(c->prec), what);
    if (rh->iterations != rd->iterations)
        fail_msg("%s: %s: %ld iterations from device arrays, %ld from host arrays", name, what, rd->iterations,
                 rh->iterations);
    /* the device's residual against the host's (same formula, another summation order) */
    if (!(fabs(rh->relative_residual - rd->relative_residual) <= 1e-10 * rh->relative_residual))
        fail_msg("%s: %s: residual %.17g from device arrays, %.17g from host arrays", name, what,
                 rd->relative_residual, rh->relative_residual);
}

static void run_case(const relax_case *c)
{
    hr_problem p;
    hr_problem_init_model(&p, c->dim, c->nx, c->ny, c->nz);
    if (c->length != 1.0) { /* the model's spacing, one on every axis, scaled: f is scaled */
        const int big = c->nx > c->ny ? (c->nx > c->nz ? c->nx : c->nz) : (c->ny > c->nz ? c->ny : c->nz);
        const double unit = c->length / (big + 1.0);
        assert_int_equal(hr_problem_set_lengths(&p, unit * (c->nx + 1), unit * (c->ny + 1), unit * (c->nz + 1)),
                         HR_OK);
    }
    hr_problem_set_rhs(&p, HR_RHS_ZERO, NULL);
    assert_int_equal(hr_problem_set_bc(&p, HR_FACES_ALL, HR_BC_DIRICHLET, 0.5, NULL), HR_OK);
    const size_t n = hr_problem_unknowns(&p), es = c->fp32 ? sizeof(float) : sizeof(double);
    double *f = random_values(n, 1), *f2 = random_values(n, 2), *x0 = random_values(n, 3);
    double *rf = malloc(n * sizeof *rf), *rf2 = malloc(n * sizeof *rf2), *rx0 = malloc(n * sizeof *rx0);
    void *af = as_array(c, f, n, rf), *af2 = as_array(c, f2, n, rf2), *ax0 = as_array(c, x0, n, rx0);
    void *want = malloc(n * es), *got = malloc(n * es);
    void *df = dev_alloc(n * es), *dx0 = dev_alloc(n * es), *dx = dev_alloc(n * es);
    assert_true(rf && rf2 && rx0 && want && got && df && dx0 && dx);
    const long iters = 23;
    hr_grid_solver *s = make(c, &p, iters, 0.0), *h = make(c, &p, iters, 0.0);
    const hr_precision ap = c->fp32 ? HR_PREC_SINGLE : HR_PREC_DOUBLE;
    hr_result rh, rd;

    /* f and x0 on a handle whose problem has f = 0 */
    dev_put(df, af, n * es);
    dev_put(dx0, ax0, n * es);
    hr_device_arrays a = {ap, df, dx0, dx, NULL};
    hr_status st = hr_grid_solver_solve_device(s, &a, &rd);
    if (st != HR_OK) fail_msg("solve_device: %s: %s", hr_status_string(st), hr_grid_solver_last_error(s));
    dev_get(got, dx, n * es);
    host_solve(h, c, rf, rx0, want, n, &rh);
    same(c, "f and x0", want, got, n * es, &rh, &rd);

    /* the same handle again: a new f, x0 restarted on the device */
    dev_put(df, af2, n * es);
    assert_int_equal(hr_grid_solver_solve_device(s, &a, &rd), HR_OK);
    dev_get(got, dx, n * es);
    host_solve(h, c, rf2, rx0, want, n, &rh);
    same(c, "a second f", want, got, n * es, &rh, &rd);

    /* on from the solution, in place (x0 and x the same array) */
    hr_device_arrays inplace = {ap, df, dx, dx, NULL};
    assert_int_equal(hr_grid_solver_solve_device(s, &inplace, &rd), HR_OK);
    dev_get(got, dx, n * es);
    double *prev = malloc(n * sizeof *prev);
    assert_non_null(prev);
    assert_int_equal(hr_grid_solver_solution(h, HR_PREC_DOUBLE, prev, n), HR_OK);
    if (c->fp32)
        for (size_t i = 0; i < n; i++) prev[i] = (float)prev[i];
    host_solve(h, c, rf2, prev, want, n, &rh);
    same(c, "in place", want, got, n * es, &rh, &rd);

    /* the problem's f (zero) and initial guess again */
    hr_device_arrays none = {ap, NULL, NULL, dx, NULL};
    assert_int_equal(hr_grid_solver_solve_device(s, &none, &rd), HR_OK);
    dev_get(got, dx, n * es);
    host_solve(h, c, NULL, NULL, want, n, &rh);
    same(c, "the problem's f", want, got, n * es, &rh, &rd);
    if (rd.max_error == rd.max_error) fail_msg("max_error %g from device arrays (not computed there)", rd.max_error);

    hr_grid_solver_free(s);
    hr_grid_solver_free(h);
    dev_free(df), dev_free(dx0), dev_free(dx);
    if (c->fp32) free(af), free(af2), free(ax0);
    free(f), free(f2), free(x0), free(rf), free(rf2), free(rx0), free(want), free(got), free(prev);
}

static void test_bitwise_host_arrays(void **state)
{
    (void)state;
    static const relax_case cs[] = {
        {"tuned", HR_METHOD_JACOBI, 2, 61, 37, 0, 1.0, HR_PREC_DOUBLE, 0, 0},
        {"tuned", HR_METHOD_JACOBI, 2, 61, 37, 0, 1.0, HR_PREC_SINGLE, 1, 0},
        {"tuned", HR_METHOD_JACOBI, 2, 61, 37, 0, 2.0, HR_PREC_DOUBLE, 1, 0}, /* fp32 arrays, fp64 grids */
        {"naive", HR_METHOD_JACOBI, 2, 45, 45, 0, 1.0, HR_PREC_SINGLE, 0, 0}, /* unpadded rows */
        {"smem", HR_METHOD_JACOBI, 2, 45, 45, 0, 1.0, HR_PREC_DOUBLE, 0, 0},
        {"tb", HR_METHOD_JACOBI, 2, 50, 33, 0, 1.0, HR_PREC_DOUBLE, 0, 3},
        {"tuned", HR_METHOD_JACOBI, 3, 21, 17, 13, 2.0, HR_PREC_DOUBLE, 0, 0},
        {NULL, HR_METHOD_REDBLACK, 2, 61, 37, 0, 1.0, HR_PREC_DOUBLE, 0, 0}, /* rb-tuned: two grids */
        {"rb-inplace", HR_METHOD_SOR, 2, 40, 40, 0, 1.0, HR_PREC_SINGLE, 1, 0},
        {NULL, HR_METHOD_SOR, 3, 19, 15, 11, 1.0, HR_PREC_DOUBLE, 0, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) run_case(&cs[i]);
}

/* A stopping test on the device's residual: the iterations of the host arrays' solve. */
static void test_tolerance(void **state)
{
    (void)state;
    const relax_case c = {"tuned", HR_METHOD_JACOBI, 2, 31, 31, 0, 1.0, HR_PREC_DOUBLE, 0, 0};
    hr_problem p;
    hr_problem_init_model(&p, 2, 31, 31, 0);
    const size_t n = hr_problem_unknowns(&p);
    double *f = random_values(n, 7), *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
    void *df = dev_alloc(n * sizeof *f), *dx = dev_alloc(n * sizeof *f);
    assert_true(u && v && df && dx);
    hr_grid_solver *s = make(&c, &p, 5000, 1e-5), *h = make(&c, &p, 5000, 1e-5);
    hr_result rh, rd;
    dev_put(df, f, n * sizeof *f);
    hr_device_arrays a = {HR_PREC_DOUBLE, df, NULL, dx, NULL};
    assert_int_equal(hr_grid_solver_solve_device(s, &a, &rd), HR_OK);
    dev_get(v, dx, n * sizeof *v);
    host_solve(h, &c, f, NULL, u, n, &rh);
    assert_int_equal(rd.reason, HR_REASON_CONVERGED);
    assert_true(rd.iterations > 10 && rd.relative_residual < 1e-5);
    same(&c, "tol 1e-5", u, v, n * sizeof *u, &rh, &rd);
    hr_grid_solver_free(s);
    hr_grid_solver_free(h);
    dev_free(df), dev_free(dx);
    free(f), free(u), free(v);
}

/* async3 is not deterministic: from device arrays it writes the solution and converges. */
static void test_async(void **state)
{
    (void)state;
    const relax_case c = {"async3", HR_METHOD_JACOBI, 2, 127, 127, 0, 1.0, HR_PREC_DOUBLE, 0, 4};
    hr_problem p;
    hr_problem_init_model(&p, 2, 127, 127, 0);
    const size_t n = hr_problem_unknowns(&p);
    double *f = random_values(n, 5), *x0 = random_values(n, 6), *u = malloc(n * sizeof *u);
    void *df = dev_alloc(n * sizeof *f), *dx = dev_alloc(n * sizeof *f);
    assert_true(u && df && dx);
    hr_grid_solver *s = make(&c, &p, 200, 0.0);
    hr_result r1, r2;
    dev_put(df, f, n * sizeof *f);
    dev_put(dx, x0, n * sizeof *f);
    hr_device_arrays a = {HR_PREC_DOUBLE, df, dx, dx, NULL};
    assert_int_equal(hr_grid_solver_solve_device(s, &a, &r1), HR_OK);
    dev_get(u, dx, n * sizeof *u);
    assert_true(memcmp(u, x0, n * sizeof *u) != 0);
    assert_int_equal(hr_grid_solver_solve_device(s, &a, &r2), HR_OK);
    if (!(r2.relative_residual < 0.9 * r1.relative_residual))
        fail_msg("async3 from device arrays: residual %g, then %g", r1.relative_residual, r2.relative_residual);
    hr_grid_solver_free(s);
    dev_free(df), dev_free(dx);
    free(f), free(x0), free(u);
}

int main(void)
{
    if (!hri_kernel_find(HR_BACKEND_GPU, NULL, 2) || hri_cuda_device_count() < 1) {
        fprintf(stderr, "no CUDA device (or no CUDA in this build): skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitwise_host_arrays),
        cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_async),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
