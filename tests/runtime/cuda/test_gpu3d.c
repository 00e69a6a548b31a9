/*
 * GPU operator-layer tests (label gpu; exit 77 without CUDA or a device):
 *
 * - 3-D `tuned` and `naive` bitwise equal to cpu-seq: odd and flat extents (1, 2, 3,
 *   17x9x33, 1x64x5, 70x33x20), several shapes (tuning.gpu_shape; straight and zig-zag
 *   chunks), float and double,
 *   spike / array right-hand side / sine initial data, omega 1 and 0.8;
 * - rectangular 2-D (nx != ny) bitwise for tuned, naive, padded, tb, omega for the first three;
 * - the sine mode decays by lambda^T on the GPU (max_error), 2-D and 3-D;
 * - device residual = host residual (3-D), finite for huge and tiny values;
 * - restart (set_solution) on the GPU continues bitwise;
 * - `tuned` swept as two regions (gpu_region.h, tuning.gpu_split) equals one sweep;
 * - the tuning cache round trip (3-D and 2-D): tune into a file, the next solver takes
 *   the shape from it ("cache"); without an entry the shape is "shipped" or "default".
 *
 * The test reads its own tuning cache (HETRELAX_TUNE_FILE in CMakeLists.txt), never the
 * developer's.
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
#include <unistd.h>

#include "hetrelax/hetrelax.h"
#include "runtime/cuda/cuda_api.h"
#include "tuning_test_util.h"

/* tuning.gpu_shape from "BXxBYxH" as given (NULL: none), unchecked: the library checks it. */
static void shape_knob(hr_options *o, const char *shape)
{
    memset(o->tuning.gpu_shape, 0, sizeof o->tuning.gpu_shape);
    if (shape)
        assert_int_equal(sscanf(shape, "%dx%dx%d", &o->tuning.gpu_shape[0], &o->tuning.gpu_shape[1],
                                &o->tuning.gpu_shape[2]),
                         3);
}

/* HR_GPU_TEST_SMALL=1 (compute-sanitizer): small extents, the bitwise tests only. */
static int small_only(void)
{
    const char *e = getenv("HR_GPU_TEST_SMALL");
    return e && *e && strcmp(e, "0") != 0;
}

static hr_options base(int dim, int nx, int ny, int nz, hr_backend b, hr_precision p, long iters)
{
    hr_options o;
    hr_options_default(&o);
    o.tuning = *env_tuning(); /* HETRELAX_TUNE_FILE: the test's own cache (CMakeLists.txt) */
    o.dim = dim;
    o.nx = nx;
    o.ny = ny;
    o.nz = dim == 3 ? nz : 0; /* nz is refused in 2-D */
    o.backend = b;
    o.precision = p;
    o.iters = iters;
    o.threads = 1;
    o.boundary = 0.5; /* a non-zero ring exercises the boundary reads */
    return o;
}

static size_t points(const hr_options *o)
{
    return (size_t)o->nx * (size_t)o->ny * (size_t)(o->dim == 3 ? o->nz : 1);
}

/* Runs; returns the interior (double) or NULL with why in err. */
static double *solve(const hr_options *o, hr_result *r, hr_config *cfg, char *err, size_t errsz)
{
    const size_t count = points(o);
    double *u = malloc(count * sizeof *u);
    assert_non_null(u);
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    if (st == HR_OK && cfg) st = hr_solver_config(s, cfg);
    if (st == HR_OK) st = hr_solver_run(s, r);
    if (st == HR_OK) st = hr_solver_solution(s, HR_PREC_DOUBLE, u, count);
    snprintf(err, errsz, "%s: %s", hr_status_string(st), s ? hr_solver_last_error(s) : hr_last_error());
    hr_solver_free(s);
    if (st != HR_OK) {
        free(u);
        return NULL;
    }
    return u;
}

static double *must(const hr_options *o, hr_result *r, hr_config *cfg, const char *what)
{
    char err[300];
    double *u = solve(o, r, cfg, err, sizeof err);
    if (!u) fail_msg("%s: %s", what, err);
    return u;
}

static void assert_bitwise(const double *want, const double *got, const hr_options *o, const char *what)
{
    const size_t count = points(o);
    for (size_t x = 0; x < count; x++)
        if (memcmp(&want[x], &got[x], sizeof want[x]) != 0) {
            const size_t j = x % (size_t)o->nx + 1, i = x / (size_t)o->nx % (size_t)o->ny + 1,
                         k = x / ((size_t)o->nx * o->ny) + 1;
            fail_msg("%s: differs at (i %zu, j %zu, k %zu): %.17g (cpu-seq) vs %.17g", what, i, j, k, want[x],
                     got[x]);
        }
}

static double *rhs_values(const hr_options *o)
{
    const size_t count = points(o);
    double *f = malloc(count * sizeof *f);
    assert_non_null(f);
    for (size_t x = 0; x < count; x++)
        f[x] = sin(0.37 * (double)(x % 97) + 1.0) * cos(0.011 * (double)x) + 0.25;
    return f;
}

typedef struct gcase {
    const char *kernel, *shape; /* shape NULL: whatever the solver picks */
} gcase;

/* Every GPU case against cpu-seq for one problem. */
static void against_seq(hr_options o, const gcase *cases, size_t ncases, const char *label)
{
    hr_options ref = o;
    ref.backend = HR_BACKEND_CPU_SEQ;
    ref.kernel = NULL;
    hr_result r;
    char what[256];
    snprintf(what, sizeof what, "cpu-seq %s", label);
    double *want = must(&ref, &r, NULL, what);
    for (size_t c = 0; c < ncases; c++) {
        hr_options g = o;
        g.backend = HR_BACKEND_GPU;
        g.kernel = cases[c].kernel;
        shape_knob(&g, cases[c].shape);
        hr_config cfg;
        snprintf(what, sizeof what, "gpu %s shape %s %s", cases[c].kernel,
                 cases[c].shape ? cases[c].shape : "auto", label);
        double *got = must(&g, &r, &cfg, what);
        shape_knob(&g, NULL);
        if (strcmp(cases[c].kernel, "tuned") == 0 && !cases[c].shape) {
            /* the region form (gpu_region.h): the sweep as two parts, last part first */
            const int outer = o.dim == 3 ? o.nz : o.ny;
            if (outer > 2) {
                g.tuning.gpu_split = outer / 2 + 1;
                double *parts = must(&g, &r, &cfg, what);
                g.tuning.gpu_split = 0;
                assert_bitwise(want, parts, &o, "tuned as two regions");
                free(parts);
            }
        }
        assert_int_equal(r.iterations, o.iters);
        assert_bitwise(want, got, &o, what);
        free(got);
    }
    free(want);
}

/* by + 16: zig-zag chunks (odd chunks march down): h = 1, chunks that do not divide nz,
 * one chunk, the shipped H100 shapes; by + 48: zig-zag in chunk-major block order */
static const gcase cases3d[] = {
    {"tuned", NULL},        {"tuned", "32x1x1"},    {"tuned", "32x4x5"},    {"tuned", "64x8x7"},
    {"tuned", "96x2x300"},  {"tuned", "32x17x1"},   {"tuned", "32x20x5"},   {"tuned", "64x24x7"},
    {"tuned", "96x18x300"}, {"tuned", "128x24x16"}, {"tuned", "128x20x16"}, {"tuned", "32x49x3"},
    {"tuned", "64x56x16"},  {"naive", NULL},        {"naive", "7x5x3"},
};

static void gpu3d_bitwise(void **state)
{
    (void)state;
    const int ext[][3] = {{1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {17, 9, 33}, {1, 64, 5}, {70, 33, 20}};
    for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
        for (int p = 0; p < 2; p++)
            for (int variant = 0; variant < 4; variant++) {
                if (small_only() && (e == 0 || e == 5 || variant == 3)) continue;
                hr_options o = base(3, ext[e][0], ext[e][1], ext[e][2], HR_BACKEND_GPU,
                                    (p ? HR_PREC_DOUBLE : HR_PREC_SINGLE), 23);
                double *f = NULL;
                const char *v = "spike";
                if (variant == 1) { /* omega */
                    o.omega = 0.8;
                    v = "spike omega 0.8";
                } else if (variant == 2) { /* an array right-hand side */
                    f = rhs_values(&o);
                    o.rhs = HR_RHS_ARRAY;
                    o.rhs_values = f;
                    o.omega = 1.3;
                    v = "array omega 1.3";
                } else if (variant == 3) { /* Sourouri et al.'s problem */
                    o.rhs = HR_RHS_ZERO;
                    o.init = HR_INIT_SINE;
                    o.boundary = 0.0;
                    v = "sine";
                }
                char label[160];
                snprintf(label, sizeof label, "3-D %dx%dx%d %s %s", o.nx, o.ny, o.nz,
                         hr_precision_name(o.precision), v);
                against_seq(o, cases3d, sizeof cases3d / sizeof cases3d[0], label);
                free(f);
            }
    print_message(
        "3-D tuned and naive bitwise equal to cpu-seq (6 extents, 15 shapes, 2 precisions, 4 problems)\n");
}

static const gcase cases2d[] = {
    {"tuned", NULL},      {"tuned", "64x3x12"}, {"naive", NULL},
    {"padded", "40x3x1"}, {"tb", NULL},         {"tb", "64x5x7"},
};

static void gpu2d_rect_bitwise(void **state)
{
    (void)state;
    const int ext[][2] = {{1, 9}, {9, 1}, {37, 5}, {130, 301}, {513, 64}};
    for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
        for (int p = 0; p < 2; p++) {
            if (small_only() && e >= 3) continue;
            hr_options o =
                base(2, ext[e][0], ext[e][1], 0, HR_BACKEND_GPU, (p ? HR_PREC_DOUBLE : HR_PREC_SINGLE), 31);
            char label[160];
            snprintf(label, sizeof label, "2-D %dx%d %s", o.nx, o.ny, hr_precision_name(o.precision));
            against_seq(o, cases2d, sizeof cases2d / sizeof cases2d[0], label);
            /* tb with alpha > 1: several sweeps per pass */
            hr_options t = o;
            t.alpha = 4;
            static const gcase tb4[] = {{"tb", NULL}};
            snprintf(label, sizeof label, "2-D %dx%d %s tb alpha 4", o.nx, o.ny,
                     hr_precision_name(o.precision));
            against_seq(t, tb4, 1, label);
            /* omega: the kernels that declare HR_CAP_OMEGA */
            o.omega = 0.7;
            static const gcase w[] = {
                {"tuned", NULL}, {"tuned", "32x2x4"}, {"naive", NULL}, {"padded", NULL}};
            snprintf(label, sizeof label, "2-D %dx%d %s omega 0.7", o.nx, o.ny,
                     hr_precision_name(o.precision));
            against_seq(o, w, sizeof w / sizeof w[0], label);
        }
    print_message("rectangular 2-D tuned, naive, padded, tb (and omega) bitwise equal to cpu-seq\n");
}

/* Kernels without HR_CAP_RECT / HR_CAP_OMEGA are refused with a clear error. */
static void gpu_refusals(void **state)
{
    (void)state;
    hr_options o = base(2, 40, 20, 0, HR_BACKEND_GPU, HR_PREC_SINGLE, 5);
    o.kernel = "smem";
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "smem"));
    o.nx = o.ny = 20;
    o.omega = 0.8;
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
    assert_true(strncmp(hr_last_error(), "omega", 5) == 0);
    o = base(3, 8, 8, 8, HR_BACKEND_GPU, HR_PREC_SINGLE, 5);
    o.kernel = "async2"; /* 2-D only */
    assert_int_not_equal(hr_solver_create(&o, &s), HR_OK);
    assert_null(s);
    assert_string_equal(hr_kernel_default(HR_BACKEND_GPU, 3), "tuned");
    assert_string_equal(hr_kernel_default(HR_BACKEND_GPU, 2), "tuned");
    /* 3-D tuned rows per thread: 1, 2, 4, 8, each + 16 (zig-zag) or + 48 (zig-zag, chunk-major) */
    const char *bad[] = {"32x3x4", "32x19x4", "32x40x4", "32x0x4", "32x48x4", "32x33x4", "32x64x4"};
    o.kernel = "tuned";
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        shape_knob(&o, bad[b]);
        s = NULL;
        if (hr_solver_create(&o, &s) != HR_ERR_INVALID_ARG)
            fail_msg("3-D tuned shape %s: not refused", bad[b]);
    }
    shape_knob(&o, NULL);
}

/* u0 = sine mode, f = 0: after T sweeps u = lambda^T u0 to rounding. */
static void gpu_sine_mode(void **state)
{
    (void)state;
    const int ext[][3] = {{64, 64, 64}, {17, 9, 33}, {100, 60, 0}};
    for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
        for (int w = 0; w < 2; w++) {
            const int dim = ext[e][2] ? 3 : 2;
            hr_options o = base(dim, ext[e][0], ext[e][1], ext[e][2], HR_BACKEND_GPU, HR_PREC_DOUBLE, 200);
            o.rhs = HR_RHS_ZERO;
            o.init = HR_INIT_SINE;
            o.boundary = 0.0;
            o.omega = w ? 0.8 : 1.0;
            hr_result r;
            free(must(&o, &r, NULL, "sine mode"));
            print_message("gpu %d-D %dx%dx%d omega %.1f: max error vs lambda^T u0 %.3e\n", dim, r.nx, r.ny,
                          r.nz, o.omega, r.max_error);
            assert_true(r.max_error < 1e-13);
        }
}

/* The device residual (checks during the run) equals the host one, and stays finite for
 * values whose squares overflow or underflow. */
static void gpu_residual_3d(void **state)
{
    (void)state;
    const double bcs[] = {0.5, 1e200, 1e-200};
    for (size_t b = 0; b < sizeof bcs / sizeof bcs[0]; b++)
        for (int dim = 2; dim <= 3; dim++) {
            hr_options o = base(dim, 33, 20, 17, HR_BACKEND_GPU, HR_PREC_DOUBLE, 100);
            o.boundary = bcs[b];
            o.tol = 1e-300; /* never reached: every check runs on the device */
            o.check_every = 50;
            o.keep_history = 1;
            hr_solver *s = NULL;
            assert_int_equal(hr_solver_create(&o, &s), HR_OK);
            hr_result r;
            assert_int_equal(hr_solver_run(s, &r), HR_OK);
            const long *it;
            const double *res;
            const size_t len = hr_solver_history(s, &it, &res);
            assert_true(len >= 2);
            const double dev = res[len - 1], host = r.relative_residual;
            print_message("%d-D boundary %g: device residual %.17g, host %.17g\n", dim, bcs[b], dev, host);
            assert_true(isfinite(dev) && dev > 0.0);
            if (fabs(dev - host) > 1e-12 * host) fail_msg("device residual %.17g vs host %.17g", dev, host);
            hr_solver_free(s);
        }
}

/* A restart on the GPU (set_solution uploads) continues bitwise. */
static void gpu_restart(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++) {
        hr_options o = base(dim, 40, 23, 19, HR_BACKEND_GPU, HR_PREC_SINGLE, 60);
        hr_result r;
        double *whole = must(&o, &r, NULL, "uninterrupted");
        hr_options h = o;
        h.iters = 25;
        double *half = must(&h, &r, NULL, "first half");
        hr_solver *s = NULL;
        hr_options rest = o;
        rest.iters = 35; /* iters is per run */
        assert_int_equal(hr_solver_create(&rest, &s), HR_OK);
        assert_int_equal(hr_solver_set_solution(s, HR_PREC_DOUBLE, half, points(&o), 25), HR_OK);
        assert_int_equal(hr_solver_run(s, &r), HR_OK);
        double *got = malloc(points(&o) * sizeof *got);
        assert_non_null(got);
        assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, got, points(&o)), HR_OK);
        hr_solver_free(s);
        assert_bitwise(whole, got, &o, dim == 3 ? "3-D restart" : "2-D restart");
        free(whole);
        free(half);
        free(got);
    }
}

/* Tune into a private file, then the solver must take that shape from it. */
static void tune_cache_round_trip(void **state)
{
    (void)state;
    char path[] = "/tmp/hetrelax-gpu-tune-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (int dim = 2; dim <= 3; dim++) {
        hr_options o =
            base(dim, dim == 3 ? 45 : 300, dim == 3 ? 30 : 200, 26, HR_BACKEND_GPU, HR_PREC_SINGLE, 4);
        o.tuning.tune_file = path;
        shape_knob(&o, NULL);
        o.kernel = "tuned";
        hr_config cfg;
        hr_result r;
        /* an empty cache: shipped shapes or the built-in default */
        free(must(&o, &r, &cfg, "before tuning"));
        assert_true(strcmp(cfg.shape_source, "shipped") == 0 || strcmp(cfg.shape_source, "default") == 0);
        hr_cuda_tune_result t;
        char err[256];
        assert_int_equal(hri_cuda_tune(&o, 3, NULL, &t, err, sizeof err), HR_OK);
        assert_string_equal(t.cache_path, path);
        assert_true(t.candidates > 1);
        free(must(&o, &r, &cfg, "after tuning"));
        print_message("%d-D tune: best %dx%dx%d (%.0f GB/s, default %.0f), solver uses %dx%dx%d from %s\n",
                      dim, t.bx, t.by, t.h, t.best_gbps, t.default_gbps, cfg.shape[0], cfg.shape[1],
                      cfg.shape[2], cfg.shape_source);
        assert_string_equal(cfg.shape_source, "cache");
        assert_int_equal(cfg.shape[0], t.bx);
        assert_int_equal(cfg.shape[1], t.by);
        assert_int_equal(cfg.shape[2], t.h);
        /* the other dimension's entry is not used for this one */
        hr_options other = o;
        other.kernel = "naive";
        free(must(&other, &r, &cfg, "other kernel"));
        assert_true(strcmp(cfg.shape_source, "cache") != 0);
    }
    /* the knob (HETRELAX_GPU_SHAPE in the command) wins over the cache */
    hr_options o = base(3, 45, 30, 26, HR_BACKEND_GPU, HR_PREC_SINGLE, 2);
    o.tuning.tune_file = path;
    shape_knob(&o, "32x2x8");
    hr_config cfg;
    hr_result r;
    free(must(&o, &r, &cfg, "env shape"));
    assert_string_equal(cfg.shape_source, "env");
    assert_true(cfg.shape[0] == 32 && cfg.shape[1] == 2 && cfg.shape[2] == 8);
    unlink(path);
}

int main(void)
{
    if (!hr_kernel_default(HR_BACKEND_GPU, 3) || hri_cuda_device_count() < 1) {
        fprintf(stderr, "no CUDA device (or no CUDA in this build): skipped\n");
        return 77;
    }
    if (small_only()) {
        const struct CMUnitTest small[] = {cmocka_unit_test(gpu2d_rect_bitwise),
                                           cmocka_unit_test(gpu3d_bitwise)};
        return cmocka_run_group_tests(small, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_refusals),    cmocka_unit_test(tune_cache_round_trip),
        cmocka_unit_test(gpu_residual_3d), cmocka_unit_test(gpu_restart),
        cmocka_unit_test(gpu_sine_mode),   cmocka_unit_test(gpu2d_rect_bitwise),
        cmocka_unit_test(gpu3d_bitwise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
