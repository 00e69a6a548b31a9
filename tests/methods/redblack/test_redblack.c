/* Red-black Gauss-Seidel / SOR: rb-seq against a plain loop written here,
 * rb-tiles and rb-fused bitwise against rb-seq (2-D and 3-D, odd extents, thread counts,
 * tile shapes, both precisions, every right-hand side), the red-black report's update, omega auto,
 * convergence order (Jacobi > Gauss-Seidel > SOR), restarts and the method/kernel refusals. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "core/stencil.h"
#include "hetrelax/hetrelax.h"

static hr_options base(int dim, int nx, int ny, int nz, hr_backend b, const char *kernel)
{
    hr_options o;
    hr_options_default(&o);
    o.dim = dim;
    o.nx = nx;
    o.ny = ny;
    o.nz = nz;
    o.backend = b;
    o.kernel = kernel;
    o.precision = HR_PREC_DOUBLE;
    o.method = HR_METHOD_REDBLACK;
    o.threads = 2;
    o.boundary = 0.5;
    return o;
}

static size_t points(const hr_options *o)
{
    return (size_t)o->nx * (size_t)o->ny * (size_t)(o->dim == 3 ? o->nz : 1);
}

/* Runs o and returns the interior solution in double (NULL and *st on failure). */
static double *solve(const hr_options *o, hr_result *r)
{
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    if (st != HR_OK)
        fail_msg("create %s: %s (%s)", o->kernel ? o->kernel : "-", hr_status_string(st), hr_last_error());
    hr_result tmp;
    if (!r) r = &tmp;
    assert_int_equal(hr_solver_run(s, r), HR_OK);
    double *u = malloc(points(o) * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, points(o)), HR_OK);
    hr_solver_free(s);
    return u;
}

/* Pseudo-random values in [0, 1): an initial guess with every mode in it. */
static double *random_values(size_t n, unsigned seed)
{
    double *v = malloc(n * sizeof *v);
    for (size_t x = 0; x < n; x++) {
        seed = seed * 1103515245u + 12345u;
        v[x] = (double)((seed >> 8) & 0xffff) / 65536.0;
    }
    return v;
}

/* The plain loop: (nx+2)(ny+2)(nz+2) doubles, colour 0 then colour 1, every point checked for
 * its colour; the operand order is stencil.h's. */
static void plain_redblack(const hr_options *o, double *u, const double *h2f, double omega, long iters)
{
    const int nx = o->nx, ny = o->ny, nz = o->dim == 3 ? o->nz : 1, three = o->dim == 3;
    const size_t p = (size_t)nx + 2, q = p * ((size_t)ny + 2);
    const int w = omega != 1.0;
    const double c0 = 1.0 - omega, c1 = omega;
    for (long t = 0; t < iters; t++)
        for (int colour = 0; colour < 2; colour++)
            for (int k = three ? 1 : 0; k <= (three ? nz : 0); k++)
                for (int i = 1; i <= ny; i++)
                    for (int j = 1; j <= nx; j++) {
                        if (HR_RB_COLOUR(i, j, k) != colour) continue;
                        double *c = u + (size_t)k * q + (size_t)i * p + (size_t)j;
                        const double f = h2f[(size_t)k * q + (size_t)i * p + (size_t)j];
                        const double jac =
                            three ? (f != 0.0 ? HR_JACOBI7F(double, c[-1], c[1], c[-(ptrdiff_t)p], c[p],
                                                            c[-(ptrdiff_t)q], c[q], f)
                                              : HR_JACOBI7(double, c[-1], c[1], c[-(ptrdiff_t)p], c[p],
                                                           c[-(ptrdiff_t)q], c[q]))
                                  : (f != 0.0 ? HR_JACOBI5F(double, c[-(ptrdiff_t)p], c[p], c[-1], c[1], f)
                                              : HR_JACOBI5(double, c[-(ptrdiff_t)p], c[p], c[-1], c[1]));
                        *c = HR_RB_UPDATE(*c, jac, c0, c1, w);
                    }
}

/* rb-seq == the plain loop, bitwise: spike right-hand side, random start, omega 1 and 1.3. */
static void seq_matches_plain_loop(void **state)
{
    (void)state;
    const int ext[][4] = {{2, 9, 7, 1}, {2, 1, 6, 1}, {3, 5, 7, 3}, {3, 4, 4, 4}};
    for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
        for (int w = 0; w < 2; w++) {
            hr_options o = base(ext[e][0], ext[e][1], ext[e][2], ext[e][0] == 3 ? ext[e][3] : 0,
                                HR_BACKEND_CPU_SEQ, NULL);
            const double omega = w ? 1.3 : 1.0;
            o.omega = omega;
            o.iters = 7;
            o.init = HR_INIT_ARRAY;
            double *init = random_values(points(&o), 7u + (unsigned)e);
            o.init_values = init;
            double *got = solve(&o, NULL);
            /* the plain loop on a grid with the ring */
            const int nz = o.dim == 3 ? o.nz : 1, three = o.dim == 3;
            const size_t p = (size_t)o.nx + 2, q = p * ((size_t)o.ny + 2),
                         all = q * (size_t)(three ? nz + 2 : 1);
            double *u = malloc(all * sizeof *u), *f = calloc(all, sizeof *f);
            for (size_t x = 0; x < all; x++)
                u[x] = o.boundary;
            for (int k = three ? 1 : 0; k <= (three ? nz : 0); k++)
                for (int i = 1; i <= o.ny; i++)
                    for (int j = 1; j <= o.nx; j++)
                        u[(size_t)k * q + (size_t)i * p + (size_t)j] =
                            init[((size_t)(three ? k - 1 : 0) * (size_t)o.ny + (size_t)(i - 1)) *
                                     (size_t)o.nx +
                                 (size_t)(j - 1)];
            const int si = HR_SPIKE_INDEX(o.ny), sj = HR_SPIKE_INDEX(o.nx),
                      sk = three ? HR_SPIKE_INDEX(nz) : 0;
            f[(size_t)sk * q + (size_t)si * p + (size_t)sj] = HR_SPIKE_H2F;
            plain_redblack(&o, u, f, omega, o.iters);
            for (int k = three ? 1 : 0; k <= (three ? nz : 0); k++)
                for (int i = 1; i <= o.ny; i++)
                    for (int j = 1; j <= o.nx; j++) {
                        const double want = u[(size_t)k * q + (size_t)i * p + (size_t)j];
                        const double have =
                            got[((size_t)(three ? k - 1 : 0) * (size_t)o.ny + (size_t)(i - 1)) *
                                    (size_t)o.nx +
                                (size_t)(j - 1)];
                        if (memcmp(&want, &have, sizeof want) != 0)
                            fail_msg("%d-D %dx%dx%d omega %.1f: (%d,%d,%d) %.17g != %.17g", o.dim, o.nx, o.ny,
                                     nz, omega, i, j, k, have, want);
                    }
            free(u);
            free(f);
            free(got);
            free(init);
        }
}

/* rb-tiles (tile shapes, thread counts) and rb-fused (thread counts) == rb-seq, bitwise. */
static void threads_bitwise_equal_seq(void **state)
{
    (void)state;
    const int ext[][4] = {{2, 37, 29, 1}, {2, 8, 3, 1}, {3, 13, 11, 9}, {3, 6, 5, 5}};
    /* tuning.rb_tile rows x columns (-1: untiled / full width) */
    const int tiles[][2] = {{4, -1}, {1, 1}, {3, 5}, {-1, -1}, {7, 2}, {4, 8}};
    const int threads[] = {1, 2, 3, 7};
    const hr_rhs rhs[] = {HR_RHS_SPIKE, HR_RHS_MANUFACTURED, HR_RHS_ZERO};
    int compared = 0;
    for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
        for (int prec = 0; prec < 2; prec++)
            for (size_t r = 0; r < 3; r++) {
                hr_options o = base(ext[e][0], ext[e][1], ext[e][2], ext[e][0] == 3 ? ext[e][3] : 0,
                                    HR_BACKEND_CPU_SEQ, NULL);
                o.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
                o.rhs = rhs[r];
                o.omega = r == 1 ? 1.45 : 1.0;
                o.iters = 9;
                o.init = HR_INIT_ARRAY;
                double *init = random_values(points(&o), 3u + (unsigned)e);
                o.init_values = init;
                double *want = solve(&o, NULL);
                o.backend = HR_BACKEND_CPU_THREADS;
                for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
                    o.threads = threads[t];
                    for (size_t sh = 0; sh <= sizeof tiles / sizeof tiles[0]; sh++) {
                        const int fused = sh == sizeof tiles / sizeof tiles[0];
                        o.kernel = fused ? "rb-fused" : "rb-tiles";
                        o.tuning.rb_tile[0] = fused ? 0 : tiles[sh][0];
                        o.tuning.rb_tile[1] = fused ? 0 : tiles[sh][1];
                        double *got = solve(&o, NULL);
                        if (memcmp(got, want, points(&o) * sizeof *got) != 0)
                            fail_msg("%s %dx%d threads %d %d-D %dx%dx%d %s rhs %d: not bitwise rb-seq",
                                     o.kernel, o.tuning.rb_tile[0], o.tuning.rb_tile[1], o.threads, o.dim,
                                     o.nx, o.ny, o.nz, prec ? "double" : "single", (int)r);
                        compared++;
                        free(got);
                    }
                }
                o.tuning.rb_tile[0] = o.tuning.rb_tile[1] = 0;
                o.backend = HR_BACKEND_CPU_SEQ;
                o.kernel = NULL;
                free(want);
                free(init);
            }
    print_message("%d threaded runs bitwise equal to rb-seq\n", compared);
}

/* The red-black report: u = 0.2 (centre + 4 neighbours) in place is omega 0.8 with f = 0: the same update
 * up to rounding (a few units in the last place per iteration). */
static void seed_update_is_omega_0_8(void **state)
{
    (void)state;
    for (int prec = 0; prec < 2; prec++) {
        hr_options o = base(2, 12, 9, 0, HR_BACKEND_CPU_SEQ, NULL);
        o.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
        o.rhs = HR_RHS_ZERO;
        o.omega = 0.8;
        o.iters = 1;
        o.init = HR_INIT_ARRAY;
        double *init = random_values(points(&o), 11u);
        o.init_values = init;
        double *got = solve(&o, NULL);
        /* the seed's update, in double, from the values the solver's grid held */
        const size_t p = (size_t)o.nx + 2;
        double *u = malloc(p * (size_t)(o.ny + 2) * sizeof *u);
        for (int i = 0; i < o.ny + 2; i++)
            for (int j = 0; j < o.nx + 2; j++) {
                double v = (i == 0 || j == 0 || i == o.ny + 1 || j == o.nx + 1)
                               ? o.boundary
                               : init[(size_t)(i - 1) * (size_t)o.nx + (size_t)(j - 1)];
                u[(size_t)i * p + (size_t)j] = prec ? v : (double)(float)v;
            }
        for (int colour = 0; colour < 2; colour++)
            for (int i = 1; i <= o.ny; i++)
                for (int j = 1; j <= o.nx; j++)
                    if (HR_RB_COLOUR(i, j, 0) == colour) {
                        double *c = u + (size_t)i * p + (size_t)j;
                        double s = 0.2 * ((((c[0] + c[-(ptrdiff_t)p]) + c[p]) + c[-1]) + c[1]);
                        *c = prec ? s : (double)(float)s;
                    }
        double worst = 0.0;
        for (int i = 1; i <= o.ny; i++)
            for (int j = 1; j <= o.nx; j++) {
                const double a = got[(size_t)(i - 1) * (size_t)o.nx + (size_t)(j - 1)],
                             b = u[(size_t)i * p + (size_t)j];
                const double d = fabs(a - b) / fabs(b);
                if (d > worst) worst = d;
            }
        print_message("%s: omega 0.8 vs 0.2 (u + N + S + W + E): largest relative difference %.2e\n",
                      prec ? "double" : "single", worst);
        assert_true(worst <= (prec ? 4 * 2.2e-16 : 4 * 1.2e-7));
        free(u);
        free(got);
        free(init);
    }
}

/* Iterations to 1e-6 (checked every iteration) of a method. */
static long iterations_to(int n, hr_method m, double omega)
{
    hr_options o = base(2, n, n, 0, HR_BACKEND_CPU_SEQ, NULL);
    o.method = m;
    o.omega = omega;
    o.iters = 100000;
    o.tol = 1e-6;
    o.check_every = 1;
    o.boundary = 0.0;
    hr_result r;
    free(solve(&o, &r));
    assert_int_equal(r.reason, HR_REASON_CONVERGED);
    return r.iterations;
}

static void convergence_order_and_auto_omega(void **state)
{
    (void)state;
    const int n = 31;
    const long jac = iterations_to(n, HR_METHOD_JACOBI, 1.0), gs = iterations_to(n, HR_METHOD_REDBLACK, 1.0),
               sor = iterations_to(n, HR_METHOD_SOR, HR_OMEGA_AUTO),
               sor0 = iterations_to(n, HR_METHOD_SOR, 0.0);
    print_message("n = %d to 1e-6: jacobi %ld, red-black %ld, sor(auto) %ld\n", n, jac, gs, sor);
    /* Gauss-Seidel's rate is Jacobi's squared: about half the iterations */
    assert_true(gs < jac * 0.6 && gs > jac * 0.4);
    assert_true(sor < gs / 4);
    assert_true(sor <= 4 * n);
    assert_int_equal(sor, sor0);
    /* the resolved weight */
    hr_options o = base(3, 15, 15, 15, HR_BACKEND_CPU_SEQ, NULL);
    o.method = HR_METHOD_SOR;
    o.omega = HR_OMEGA_AUTO;
    hr_solver *s;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_config c;
    assert_int_equal(hr_solver_config(s, &c), HR_OK);
    assert_true(fabs(c.omega - 2.0 / (1.0 + sin(3.14159265358979323846 / 16.0))) < 1e-15);
    assert_int_equal(c.method, HR_METHOD_SOR);
    assert_string_equal(c.kernel, "rb-seq");
    hr_solver_free(s);
}

/* A checkpoint restart continues bitwise. */
static void restart_is_bitwise(void **state)
{
    (void)state;
    hr_options o = base(3, 7, 9, 5, HR_BACKEND_CPU_THREADS, "rb-fused");
    o.method = HR_METHOD_SOR;
    o.omega = 1.7;
    o.iters = 20;
    double *whole = solve(&o, NULL);
    o.iters = 8;
    double *half = solve(&o, NULL);
    hr_solver *s;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_set_solution(s, HR_PREC_DOUBLE, half, points(&o), 8), HR_OK);
    o.iters = 12;
    hr_solver_free(s);
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_set_solution(s, HR_PREC_DOUBLE, half, points(&o), 8), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    double *u = malloc(points(&o) * sizeof *u);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, points(&o)), HR_OK);
    assert_memory_equal(u, whole, points(&o) * sizeof *u);
    assert_int_equal(hr_solver_sweeps_done(s), 20);
    hr_solver_free(s);
    free(u);
    free(half);
    free(whole);
}

static void expect_refused(const hr_options *o, const char *msg)
{
    hr_solver *s = (hr_solver *)1;
    hr_status st = hr_solver_create(o, &s);
    assert_int_equal(st, HR_ERR_INVALID_ARG);
    assert_null(s);
    if (!strstr(hr_last_error(), msg)) fail_msg("error '%s' lacks '%s'", hr_last_error(), msg);
}

static void methods_and_kernels(void **state)
{
    (void)state;
    assert_string_equal(hr_method_name(HR_METHOD_JACOBI), "jacobi");
    assert_string_equal(hr_method_name(HR_METHOD_REDBLACK), "redblack");
    assert_string_equal(hr_method_name(HR_METHOD_SOR), "sor");
    assert_null(hr_method_name(HR_METHOD_COUNT));
    /* red-black on Jacobi-only kernels, Jacobi on red-black kernels */
    hr_options o = base(2, 16, 16, 0, HR_BACKEND_CPU_THREADS, "spmd");
    expect_refused(&o, "method: kernel spmd does only Jacobi");
    o.kernel = "async1";
    o.method = HR_METHOD_SOR;
    expect_refused(&o, "method: kernel async1 does only Jacobi");
    o.backend = HR_BACKEND_CPU_SEQ;
    o.kernel = "seq";
    expect_refused(&o, "method: kernel seq does only Jacobi");
    o.kernel = "rb-seq";
    o.method = HR_METHOD_JACOBI;
    expect_refused(&o, "method: kernel rb-seq does only red-black");
    o.backend = HR_BACKEND_CPU_THREADS;
    o.kernel = "rb-tiles";
    expect_refused(&o, "method: kernel rb-tiles does only red-black");
    /* omega: auto only for the red-black methods; (0, 2) */
    o.omega = HR_OMEGA_AUTO;
    char why[128];
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "omega"));
    o.method = HR_METHOD_SOR;
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_OK);
    o.omega = 2.0;
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    o.omega = -0.5;
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    o.omega = 1.0;
    o.method = (hr_method)7;
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "method"));
    /* default kernels per method */
    o.method = HR_METHOD_REDBLACK;
    o.kernel = NULL;
    hr_solver *s;
    hr_config c;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_config(s, &c), HR_OK);
    assert_string_equal(c.kernel, "rb-tiles");
    assert_int_equal(c.shape[1], 4);
    assert_int_equal(c.shape[0], 16);
    hr_solver_free(s);
    o.method = HR_METHOD_JACOBI;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_config(s, &c), HR_OK);
    assert_string_not_equal(c.kernel, "rb-tiles");
    hr_solver_free(s);
    /* the Jacobi defaults never fall on a red-black kernel (cpu-threads has no 3-D Jacobi kernel) */
    for (int d = 2; d <= 3; d++)
        for (hr_backend b = HR_BACKEND_CPU_SEQ; b <= HR_BACKEND_CPU_THREADS; b++) {
            const char *def = hr_kernel_default(b, d);
            if (def) assert_true(strncmp(def, "rb-", 3) != 0);
        }
    /* a bad tile shape */
    o.tuning.rb_tile[0] = -2;
    o.method = HR_METHOD_REDBLACK;
    expect_refused(&o, "tuning.rb_tile: -2 is outside");
    o.tuning.rb_tile[0] = 0;
    /* kernel introspection carries the capability */
    int found = 0;
    for (int i = 0; i < hr_kernel_count(); i++) {
        hr_kernel_info k;
        assert_int_equal(hr_kernel_info_at(i, &k), HR_OK);
        if (strncmp(k.name, "rb-", 3) == 0) {
            assert_true(k.caps & HR_CAP_REDBLACK);
            found++;
        } else {
            assert_false(k.caps & HR_CAP_REDBLACK);
        }
    }
    assert_true(found >= 3);
}

/* One validation: HR_OK, or HR_ERR_INVALID_ARG with msg in the reason. */
static void expect_valid(const hr_options *o, const char *msg)
{
    char why[240] = "";
    const hr_status st = hr_options_validate(o, why, sizeof why);
    if (msg ? st != HR_ERR_INVALID_ARG || !strstr(why, msg) : st != HR_OK)
        fail_msg("%s --gpus %d ny %d: status %d '%s', want %s", o->kernel, o->gpus, o->ny, (int)st, why,
                 msg ? msg : "valid");
}

/* --gpus with the red-black kernels: several GPUs only for a kernel that runs on them itself
 * (HR_CAP_GPUS: rb-mgpu, rb-2gpu); its GPU count and the rows its slabs need are checked by
 * the options, before any device is asked (no GPU needed; the kernels exist with CUDA). */
static void gpus_option(void **state)
{
    (void)state;
    hr_options o = base(2, 16, 16, 0, HR_BACKEND_CPU_THREADS, "rb-fused");
    o.gpus = 2;
    expect_valid(&o, "gpus: several GPUs need");
    int have = 0;
    for (int i = 0; i < hr_kernel_count(); i++) {
        hr_kernel_info k;
        assert_int_equal(hr_kernel_info_at(i, &k), HR_OK);
        const int multi =
            k.backend == HR_BACKEND_GPU && (!strcmp(k.name, "rb-mgpu") || !strcmp(k.name, "rb-2gpu"));
        if (!!(k.caps & HR_CAP_GPUS) != multi)
            fail_msg("kernel %s: HR_CAP_GPUS %s", k.name, multi ? "missing" : "set");
        have += multi;
    }
    if (!have) {
        print_message("no CUDA in this build: rb-mgpu's option checks not run\n");
        return;
    }
    assert_int_equal(have, 2);
    o.backend = HR_BACKEND_GPU;
    o.kernel = "rb-tuned";
    expect_valid(&o, "gpus: several GPUs need");
    o.kernel = "rb-mgpu";
    for (int g = 2; g <= 4; g++) { /* the fewest rows: 2 for two slabs, else 2 g - 2 */
        o.gpus = g;
        o.ny = g > 2 ? 2 * g - 2 : 2;
        expect_valid(&o, NULL);
        o.ny--;
        expect_valid(&o, "ny: red-black on");
    }
    o.gpus = 16;
    o.ny = 30;
    expect_valid(&o, NULL);
    o.ny = 16;
    for (int g = 0; g < 2; g++) {
        o.gpus = g;
        expect_valid(&o, "gpus: kernel rb-mgpu needs --gpus N");
    }
    o.kernel = "rb-2gpu";
    for (int g = 0; g <= 2; g++) {
        o.gpus = g;
        expect_valid(&o, NULL);
    }
    o.gpus = 3;
    expect_valid(&o, "gpus: kernel rb-2gpu runs on 2 GPUs");
    o.gpus = 0;
    o.ny = 1;
    expect_valid(&o, "ny: red-black on 2 GPUs needs at least 2 rows, not 1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seq_matches_plain_loop),
        cmocka_unit_test(threads_bitwise_equal_seq),
        cmocka_unit_test(seed_update_is_omega_0_8),
        cmocka_unit_test(convergence_order_and_auto_omega),
        cmocka_unit_test(restart_is_bitwise),
        cmocka_unit_test(methods_and_kernels),
        cmocka_unit_test(gpus_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
