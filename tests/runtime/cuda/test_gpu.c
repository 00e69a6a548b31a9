/*
 * GPU backend tests (label gpu). Exit 77 (skipped) without CUDA or without a device.
 *
 * - every deterministic GPU kernel is bitwise equal to cpu-seq after T sweeps, float and
 *   double, N = 1, 2, 3, 127, 1000, 1023, 4097, spike and array right-hand sides, default
 *   and non-square block shapes (tuning.gpu_shape), graph replays and short passes;
 * - tb equals tuned for several alpha; async0-2 with alpha = 1 equal a synchronous sweep;
 *   async2 is repeatable; async0-3 converge at least as fast per effective sweep as
 *   Jacobi at half the sweeps;
 * - device residual = host residual; pageable = pinned; transfer times recorded;
 * - clear errors: bad alpha, bad shape, missing device ordinal.
 *
 * HR_GPU_TEST_SMALL=1 keeps to N <= 127 (for compute-sanitizer); HR_GPU_TEST_KERNELS=a,b
 * restricts the kernels checked.
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

#include "core/solver_internal.h"
#include "hetrelax/hetrelax.h"
#include "runtime/cuda/cuda_api.h"
#include "tuning_test_util.h"

static int small_only(void)
{
    const char *e = getenv("HR_GPU_TEST_SMALL");
    return e && *e && strcmp(e, "0") != 0;
}

static int wanted(const char *kernel)
{
    const char *e = getenv("HR_GPU_TEST_KERNELS");
    if (!e || !*e) return 1;
    size_t len = strlen(kernel);
    for (const char *p = e; *p;) {
        const char *q = strchr(p, ',');
        size_t l = q ? (size_t)(q - p) : strlen(p);
        if (l == len && strncmp(p, kernel, len) == 0) return 1;
        if (!q) break;
        p = q + 1;
    }
    return 0;
}

static hr_options opts(const char *kernel, hr_backend b, int n, long iters, hr_precision p, hr_rhs rhs,
                       const double *f)
{
    hr_options o;
    hr_options_default(&o);
    o.tuning = *env_tuning(); /* HETRELAX_TUNE_FILE: the test's own (absent) cache */
    o.n = n;
    o.iters = iters;
    o.precision = p;
    o.backend = b;
    o.kernel = kernel;
    o.rhs = rhs;
    o.rhs_values = f;
    o.boundary = 0.5; /* a non-zero ring exercises the boundary reads */
    return o;
}

/* Runs and returns the interior (double), or NULL with the status in *st. */
static double *solve(hr_options o, hr_result *r, hr_status *st, char *err, size_t errsz)
{
    size_t count = (size_t)o.n * (size_t)o.n;
    double *u = malloc(count * sizeof *u);
    assert_non_null(u);
    hr_solver *s = NULL;
    *st = hr_solver_create(&o, &s);
    if (*st == HR_OK) *st = hr_solver_run(s, r);
    if (*st == HR_OK) *st = hr_solver_solution(s, HR_PREC_DOUBLE, u, count);
    if (err && errsz) snprintf(err, errsz, "%s", s ? hr_solver_last_error(s) : "(create failed)");
    hr_solver_free(s);
    if (*st != HR_OK) {
        free(u);
        return NULL;
    }
    return u;
}

static double *must_solve(hr_options o, hr_result *r)
{
    hr_status st;
    char err[256];
    double *u = solve(o, r, &st, err, sizeof err);
    if (!u)
        fail_msg("%s n=%d %s: %s (%s)", o.kernel ? o.kernel : "default", o.n, hr_precision_name(o.precision),
                 hr_status_string(st), err);
    return u;
}

static void assert_bitwise(const double *want, const double *got, int n, const char *what)
{
    size_t count = (size_t)n * (size_t)n;
    for (size_t k = 0; k < count; k++)
        if (memcmp(&want[k], &got[k], sizeof want[k]) != 0)
            fail_msg("%s: n=%d differs at (%zu,%zu): %.17g (cpu-seq) vs %.17g", what, n, k / (size_t)n + 1,
                     k % (size_t)n + 1, want[k], got[k]);
}

static double *rhs_array(int n)
{
    double *f = malloc((size_t)n * (size_t)n * sizeof *f);
    assert_non_null(f);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            f[(size_t)i * n + j] = sin(0.37 * i + 1.0) * cos(0.11 * j) + 0.25;
    return f;
}

typedef struct shape_case {
    const char *kernel;
    const char *shape; /* tuning.gpu_shape, NULL: the default */
    int alpha;
} shape_case;

/* The deterministic kernels with their default shapes and with odd, non-square ones. */
static const shape_case cases[] = {
    {"tuned", NULL, 1},
    {"tuned", "96x3x12", 1},
    {"tuned", "32x5x4", 1},
    {"naive", NULL, 1},
    {"naive", "24x5x1", 1},
    {"padded", NULL, 1},
    {"padded", "40x3x1", 1},
    {"smem", NULL, 1},
    {"smem", "48x5x1", 1},
    {"texture", NULL, 1},
    {"texture", "17x9x1", 1},
    {"smem-padded", NULL, 1},
    {"smem-padded", "48x3x3", 1},
    {"unrolled", NULL, 1},
    {"unrolled", "72x2x8", 1},
    {"smem-hilo", "24x6x1", 1},
    {"smem-padded-hilo", NULL, 1},
    {"unrolled-hilo", "40x3x2", 1},
    {"tb", NULL, 1},
    {"tb", NULL, 3},
    {"tb", "100x3x20", 4},
    {"tb", "64x5x7", 7},
    {"tb", "64x4x16", 16},
    {"async0", NULL, 1},
    {"async1", NULL, 1},
    {"async2", NULL, 1},
    {"async2", "40x3x3", 1},
};

static void check_against_seq(int n, long iters, hr_precision p, hr_rhs rhs)
{
    double *f = rhs == HR_RHS_ARRAY ? rhs_array(n) : NULL;
    hr_result r;
    double *want = must_solve(opts(NULL, HR_BACKEND_CPU_SEQ, n, iters, p, rhs, f), &r);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (!wanted(cases[c].kernel)) continue;
        hr_options o = opts(cases[c].kernel, HR_BACKEND_GPU, n, iters, p, rhs, f);
        set_knob(&o.tuning, "gpu_shape", cases[c].shape);
        o.alpha = cases[c].alpha;
        hr_status st;
        char err[256], what[160];
        double *got = solve(o, &r, &st, err, sizeof err);
        snprintf(what, sizeof what, "%s shape %s alpha %d %s %s T=%ld", cases[c].kernel,
                 cases[c].shape ? cases[c].shape : "default", cases[c].alpha, hr_precision_name(p),
                 rhs == HR_RHS_ARRAY ? "array-rhs" : "spike", iters);
        if (!got) fail_msg("%s: n=%d: %s (%s)", what, n, hr_status_string(st), err);
        assert_int_equal(r.iterations, iters);
        assert_bitwise(want, got, n, what);
        free(got);
    }
    print_message("n=%-5d %-6s %-5s T=%-3ld: all deterministic GPU kernels bitwise equal to cpu-seq\n", n,
                  hr_precision_name(p), rhs == HR_RHS_ARRAY ? "array" : "spike", iters);
    free(want);
    free(f);
}

static void test_ladder_vs_seq(void **state)
{
    (void)state;
    static const int sizes[] = {1, 2, 3, 127, 1000, 1023, 4097};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const int n = sizes[k];
        if (small_only() && n != 3 && n != 127) continue;
        /* 70 sweeps reach float denormals near the edge of the spike's support on
         * small grids; large grids keep T short so the CPU reference stays quick */
        const long T = small_only() ? 5 : (n > 2000 ? 9 : 70);
        for (int p = 0; p < 2; p++) {
            check_against_seq(n, T, (p ? HR_PREC_DOUBLE : HR_PREC_SINGLE), HR_RHS_SPIKE);
            if (n == 3 || (!small_only() && (n == 127 || n == 1023)))
                check_against_seq(n, T, (p ? HR_PREC_DOUBLE : HR_PREC_SINGLE), HR_RHS_ARRAY);
        }
    }
}

static void test_async_repeatable_and_converging(void **state)
{
    (void)state;
    const int n = small_only() ? 63 : 255;
    const long T = small_only() ? 36 : 1200;
    hr_result r;
    for (int p = 0; p < 2; p++) {
        double *half = must_solve(opts("tuned", HR_BACKEND_GPU, n, T / 2,
                                       (p ? HR_PREC_DOUBLE : HR_PREC_SINGLE), HR_RHS_SPIKE, NULL),
                                  &r);
        const double res_half = r.relative_residual;
        free(half);
        const char *ks[] = {"async0", "async1", "async2", "async3"};
        for (int v = 0; v < 4; v++) {
            if (!wanted(ks[v])) continue;
            hr_options o =
                opts(ks[v], HR_BACKEND_GPU, n, T, (p ? HR_PREC_DOUBLE : HR_PREC_SINGLE), HR_RHS_SPIKE, NULL);
            o.alpha = 6;
            double *a = must_solve(o, &r);
            assert_int_equal(r.iterations, T);
            if (!(r.relative_residual <= res_half))
                fail_msg("%s alpha 6 %s: residual %.3e after Teff=%ld, Jacobi reaches %.3e in %ld", ks[v],
                         hr_precision_name((p ? HR_PREC_DOUBLE : HR_PREC_SINGLE)), r.relative_residual, T,
                         res_half, T / 2);
            if (v == 2) { /* no fringe exchange inside a pass: deterministic */
                double *b = must_solve(o, &r);
                assert_bitwise(a, b, n, "async2 twice");
                free(b);
            }
            free(a);
        }
    }
}

static void test_residual_and_transfers(void **state)
{
    (void)state;
    const int n = small_only() ? 33 : 513;
    for (int hm = 0; hm < 2; hm++) {
        hr_options o = opts("tuned", HR_BACKEND_GPU, n, 200, HR_PREC_DOUBLE, HR_RHS_SPIKE, NULL);
        o.host_memory = hm ? HR_HOST_PAGEABLE : HR_HOST_PINNED;
        o.tol = 1e-30; /* never reached: checks every 50 sweeps run on the device */
        o.check_every = 50;
        o.keep_history = 1;
        hr_solver *s = NULL;
        assert_int_equal(hr_solver_create(&o, &s), HR_OK);
        hr_result r;
        assert_int_equal(hr_solver_run(s, &r), HR_OK);
        const long *it;
        const double *res;
        size_t len = hr_solver_history(s, &it, &res);
        assert_true(len == 4);
        /* the last check is on the device, the final residual on the host: same state */
        if (fabs(res[len - 1] - r.relative_residual) > 1e-12 * r.relative_residual)
            fail_msg("device residual %.17g vs host %.17g", res[len - 1], r.relative_residual);
        assert_true(r.time_h2d_s > 0.0 && r.time_d2h_s > 0.0);
        assert_true(r.device_name[0] != '\0');
        hr_solver_free(s);
    }
}

static void test_errors(void **state)
{
    (void)state;
    char why[200];
    hr_options o = opts("tb", HR_BACKEND_GPU, 1024, 10, HR_PREC_SINGLE, HR_RHS_SPIKE, NULL);
    o.alpha = 300; /* 2*alpha exceeds every tile width */
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_true(strncmp(why, "alpha", 5) == 0);
    o.kernel = "async3";
    o.alpha = 100000;
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_true(strncmp(why, "alpha", 5) == 0);

    hr_solver *s = NULL;
    o = opts("tuned", HR_BACKEND_GPU, 64, 10, HR_PREC_SINGLE, HR_RHS_SPIKE, NULL);
    set_knob(&o.tuning, "gpu_shape", "100x1x32"); /* bx not a multiple of 32 */
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
    assert_null(s);
    o.tuning.gpu_shape[1] = o.tuning.gpu_shape[2] = 0; /* BX alone */
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
    assert_true(strstr(hr_last_error(), "tuning.gpu_shape") != NULL);
    set_knob(&o.tuning, "gpu_shape", NULL);
    o.device = hri_cuda_device_count();
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_NO_DEVICE);
    assert_null(s);
}

static void test_bandwidth_probe(void **state)
{
    (void)state;
    double gb = 0.0;
    assert_int_equal(hr_measure_device_bandwidth(0, (size_t)64 << 20, 3, &gb), HR_OK);
    assert_true(gb > 1.0);
    char name[128];
    assert_int_equal(hr_gpu_name(0, name, sizeof name), HR_OK);
    print_message("device %s: copy %.0f GB/s (64 MiB arrays)\n", name, gb);
}

int main(void)
{
    if (!hri_kernel_find(HR_BACKEND_GPU, NULL, 2) || hri_cuda_device_count() < 1) {
        fprintf(stderr, "no CUDA device (or no CUDA in this build): skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bandwidth_probe),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_residual_and_transfers),
        cmocka_unit_test(test_ladder_vs_seq),
        cmocka_unit_test(test_async_repeatable_and_converging),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
