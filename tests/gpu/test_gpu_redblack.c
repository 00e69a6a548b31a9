/*
 * GPU red-black kernels (issue 13; label gpu). Exit 77 (skipped) without CUDA or a device.
 *
 * - rb-v1, rb-v2, rb-v3, rb-v4, rb-ldg, rb-tuned bitwise equal to rb-seq after T iterations:
 *   float and double, odd and rectangular extents (one tile, many tiles, ragged edges),
 *   spike, manufactured and zero right-hand sides, omega 1 and 1.6; rb-v1 / rb-ldg in 3-D;
 * - rb-tuned with several block shapes (HETRELAX_RB_GPU_SHAPE), H = 1 strips included;
 * - residual checks mid-run and a checkpoint restart are bitwise; pageable = pinned with the
 *   transfer times recorded; Jacobi refused on the red-black kernels;
 * - rb-2gpu (skipped with fewer than 2 devices) bitwise equal to rb-seq.
 *
 * HR_GPU_TEST_SMALL=1 keeps to small grids (for compute-sanitizer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "cuda/cuda_api.h"
#include "hetrelax/hetrelax.h"
#include "solver/solver_internal.h"

static const char *const kernels[] = {"rb-v1", "rb-v2", "rb-v3", "rb-v4", "rb-ldg", "rb-tuned"};
#define NKERNELS ((int)(sizeof kernels / sizeof kernels[0]))

static int small_only(void)
{
    const char *e = getenv("HR_GPU_TEST_SMALL");
    return e && *e && strcmp(e, "0") != 0;
}

static size_t points(const hr_options *o)
{
    return (size_t)o->nx * (size_t)o->ny * (size_t)(o->dim == 3 ? o->nz : 1);
}

static double *solve(const hr_options *o, hr_result *r)
{
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    if (st != HR_OK)
        fail_msg("create %s: %s (%s)", o->kernel ? o->kernel : "-", hr_status_string(st), hr_last_error());
    hr_result tmp;
    if (!r) r = &tmp;
    st = hr_solver_run(s, r);
    if (st != HR_OK) fail_msg("run %s: %s (%s)", o->kernel, hr_status_string(st), hr_solver_last_error(s));
    double *u = malloc(points(o) * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, points(o)), HR_OK);
    hr_solver_free(s);
    return u;
}

static hr_options base(int dim, int nx, int ny, int nz)
{
    hr_options o;
    hr_options_default(&o);
    o.dim = dim;
    o.nx = nx;
    o.ny = ny;
    o.nz = dim == 3 ? nz : 0;
    o.method = HR_METHOD_REDBLACK;
    o.backend = HR_BACKEND_CPU_SEQ;
    o.kernel = "rb-seq";
    o.boundary = 0.25;
    o.iters = 13;
    return o;
}

/* Every kernel against rb-seq on one problem; returns the number of comparisons. */
static int compare_all(hr_options o, int three_d)
{
    int n = 0;
    o.backend = HR_BACKEND_CPU_SEQ;
    o.kernel = "rb-seq";
    double *want = solve(&o, NULL);
    o.backend = HR_BACKEND_GPU;
    for (int k = 0; k < NKERNELS; k++) {
        if (three_d && strcmp(kernels[k], "rb-v1") != 0 && strcmp(kernels[k], "rb-ldg") != 0) continue;
        o.kernel = kernels[k];
        double *got = solve(&o, NULL);
        if (memcmp(got, want, points(&o) * sizeof *got) != 0) {
            size_t x = 0;
            while (got[x] == want[x])
                x++;
            fail_msg("%s %d-D %dx%dx%d %s rhs %d omega %g: differs from rb-seq at interior index %zu (%.17g "
                     "vs %.17g)",
                     o.kernel, o.dim, o.nx, o.ny, o.nz, o.precision == HR_PREC_DOUBLE ? "double" : "single",
                     (int)o.rhs, o.omega, x, got[x], want[x]);
        }
        free(got);
        n++;
    }
    free(want);
    return n;
}

static void bitwise_2d(void **state)
{
    (void)state;
    const int ext[][2] = {{1, 1}, {2, 3}, {37, 29}, {129, 65}, {300, 257}, {1023, 515}};
    const int next = small_only() ? 4 : 6;
    const hr_rhs rhs[] = {HR_RHS_SPIKE, HR_RHS_MANUFACTURED, HR_RHS_ZERO};
    int n = 0;
    for (int e = 0; e < next; e++)
        for (int prec = 0; prec < 2; prec++)
            for (int r = 0; r < 3; r++) {
                hr_options o = base(2, ext[e][0], ext[e][1], 0);
                o.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
                o.rhs = rhs[r];
                o.omega = r == 1 ? 1.6 : 1.0;
                n += compare_all(o, 0);
            }
    print_message("2-D: %d GPU runs bitwise equal to rb-seq\n", n);
}

static void bitwise_3d(void **state)
{
    (void)state;
    const int ext[][3] = {{5, 4, 3}, {33, 17, 9}, {64, 63, 65}};
    int n = 0;
    for (int e = 0; e < (small_only() ? 2 : 3); e++)
        for (int prec = 0; prec < 2; prec++) {
            hr_options o = base(3, ext[e][0], ext[e][1], ext[e][2]);
            o.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
            o.omega = prec ? 1.6 : 1.0;
            n += compare_all(o, 1);
        }
    print_message("3-D: %d GPU runs bitwise equal to rb-seq\n", n);
}

/* rb-tuned's tiles: shapes with H = 1, 2, odd widths, one tile wider than the grid. */
static void tuned_shapes(void **state)
{
    (void)state;
    const char *shapes[] = {"1x1", "1x5", "16x3", "32x1", "33x7", "128x64", "512x2"};
    hr_options o = base(2, 301, 211, 0);
    o.omega = 1.3;
    o.rhs = HR_RHS_MANUFACTURED;
    double *want = solve(&o, NULL);
    o.backend = HR_BACKEND_GPU;
    o.kernel = "rb-tuned";
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        setenv("HETRELAX_RB_GPU_SHAPE", shapes[s], 1);
        double *got = solve(&o, NULL);
        if (memcmp(got, want, points(&o) * sizeof *got) != 0)
            fail_msg("rb-tuned shape %s: not bitwise", shapes[s]);
        free(got);
    }
    setenv("HETRELAX_RB_GPU_SHAPE", "4x4", 1);
    o.kernel = "rb-v3";
    free(solve(&o, NULL)); /* v3's shared tile follows the shape too */
    unsetenv("HETRELAX_RB_GPU_SHAPE");
    free(want);
}

/* Residual checks mid-run (downloads), a restart (upload), pinned and pageable memory. */
static void checks_restart_memory(void **state)
{
    (void)state;
    hr_options o = base(2, 200, 150, 0);
    o.method = HR_METHOD_SOR;
    o.omega = HR_OMEGA_AUTO;
    o.iters = 40;
    double *want = solve(&o, NULL);
    o.backend = HR_BACKEND_GPU;
    o.kernel = "rb-tuned";
    o.tol = 1e-30; /* never met: checks every 7 iterations, all 40 run */
    o.check_every = 7;
    for (int mem = 0; mem < 2; mem++) {
        o.host_memory = mem ? HR_HOST_PAGEABLE : HR_HOST_PINNED;
        hr_result r;
        double *got = solve(&o, &r);
        assert_memory_equal(got, want, points(&o) * sizeof *got);
        assert_true(r.time_h2d_s > 0 && r.time_d2h_s > 0);
        print_message("%s: h2d %.3f ms, d2h %.3f ms\n", mem ? "pageable" : "pinned", 1e3 * r.time_h2d_s,
                      1e3 * r.time_d2h_s);
        free(got);
    }
    o.tol = 0;
    o.iters = 15;
    double *part = solve(&o, NULL);
    hr_solver *s;
    o.iters = 25;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_set_solution(s, HR_PREC_DOUBLE, part, points(&o), 15), HR_OK);
    assert_int_equal(hr_solver_run(s, NULL), HR_OK);
    double *u = malloc(points(&o) * sizeof *u);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, points(&o)), HR_OK);
    assert_memory_equal(u, want, points(&o) * sizeof *u);
    hr_solver_free(s);
    free(u);
    free(part);
    free(want);
    /* Jacobi on a red-black kernel; 3-D on a 2-D-only version */
    o.method = HR_METHOD_JACOBI;
    o.omega = 1.0;
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "method: kernel rb-tuned does only red-black"));
    o = base(3, 8, 8, 8);
    o.backend = HR_BACKEND_GPU;
    o.kernel = "rb-v3";
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
}

/* rb-2gpu (two devices) == rb-seq: odd and even row counts, the spike in either half, an f
 * array, both precisions, residual checks mid-run (downloads). */
static void two_gpus(void **state)
{
    (void)state;
    if (hr_cuda_device_count() < 2) {
        print_message("rb-2gpu: fewer than 2 devices, not checked\n");
        skip();
    }
    const int ext[][2] = {{5, 2}, {37, 29}, {64, 65}, {301, 256}};
    int n = 0;
    for (int e = 0; e < 4; e++)
        for (int prec = 0; prec < 2; prec++)
            for (int r = 0; r < 2; r++) {
                hr_options o = base(2, ext[e][0], ext[e][1], 0);
                o.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
                o.rhs = r ? HR_RHS_MANUFACTURED : HR_RHS_SPIKE;
                o.omega = r ? 1.5 : 1.0;
                double *want = solve(&o, NULL);
                o.backend = HR_BACKEND_GPU;
                o.kernel = "rb-2gpu";
                o.tol = r ? 1e-30 : 0; /* with checks every 4 iterations (downloads mid-run) */
                o.check_every = 4;
                double *got = solve(&o, NULL);
                if (memcmp(got, want, points(&o) * sizeof *got) != 0)
                    fail_msg("rb-2gpu %dx%d %s rhs %d: not bitwise rb-seq", o.nx, o.ny,
                             prec ? "double" : "single", r);
                free(got);
                free(want);
                n++;
            }
    print_message("rb-2gpu: %d runs bitwise equal to rb-seq\n", n);
}

int main(void)
{
    if (!hr_kernel_find(HR_BACKEND_GPU, "rb-tuned", 2) || hr_cuda_device_count() < 1) {
        fprintf(stderr, "no CUDA device (or no CUDA in this build): skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bitwise_2d),   cmocka_unit_test(bitwise_3d),
        cmocka_unit_test(tuned_shapes), cmocka_unit_test(checks_restart_memory),
        cmocka_unit_test(two_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
