/*
 * GPU red-black kernels (label gpu). Exit 77 (skipped) without CUDA or a device.
 *
 * - rb-v1, rb-v2, rb-v3, rb-v4, rb-ldg, rb-tuned, rb-inplace bitwise equal to rb-seq after T
 *   iterations (odd T: rb-tuned's two grids end on the second): float and double, odd and
 *   rectangular extents (one tile, many tiles, ragged edges, one row, one column, widths
 *   that end inside a 16-byte word), spike, manufactured and zero right-hand sides, omega 1
 *   and 1.6; rb-v1 / rb-ldg in 3-D;
 * - rb-tuned with every unroll depth (h % 8, h % 4, h % 2), strips per block, strip widths,
 *   one strip per grid and a grid-stride loop (more strips than block rows), shapes refused;
 *   rb-inplace with its tile shapes (tuning.rb_gpu_shape), H = 1 strips included;
 * - the tuning round trip: hri_cuda_tune on rb-tuned (bitwise over all candidates) into a
 *   private cache file, then the solver takes that shape ("cache");
 * - residual checks mid-run and a checkpoint restart are bitwise; pageable = pinned with the
 *   transfer times recorded; Jacobi refused on the red-black kernels;
 * - rb-mgpu on 2, 3 and 4 slabs of one device (tuning.rb2_one) and rb-2gpu bitwise equal to
 *   rb-seq, the refusals (in-place schemes beyond 2 GPUs, GPU counts, too few rows or devices);
 * - with --devices N (ctest test_gpu_redblack_2gpus, _4gpus; exit 77 with fewer devices):
 *   2..N slabs on devices 0..N-1 bitwise equal to rb-seq.
 *
 * HR_GPU_TEST_SMALL=1 keeps to small grids (for compute-sanitizer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "core/solver_internal.h"
#include "hetrelax/hetrelax.h"
#include "runtime/cuda/cuda_api.h"
#include "tuning_test_util.h"

static const char *const kernels[] = {"rb-v1", "rb-v2", "rb-v3", "rb-v4", "rb-ldg", "rb-tuned", "rb-inplace"};
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

/* tuning.rb_gpu_shape from "BXxBY[xH]" as given (NULL: none), unchecked: the library checks it. */
static void rb_shape_knob(hr_options *o, const char *shape)
{
    memset(o->tuning.rb_gpu_shape, 0, sizeof o->tuning.rb_gpu_shape);
    if (shape)
        assert_true(sscanf(shape, "%dx%dx%d", &o->tuning.rb_gpu_shape[0], &o->tuning.rb_gpu_shape[1],
                           &o->tuning.rb_gpu_shape[2]) >= 2);
}

static hr_options base(int dim, int nx, int ny, int nz)
{
    hr_options o;
    hr_options_default(&o);
    o.tuning = *env_tuning(); /* HETRELAX_TUNE_FILE: the test's own cache (CMakeLists.txt) */
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
    const int ext[][2] = {{1, 1}, {2, 3},     {37, 29},    {129, 65}, {6, 1},   {1, 7},
                          {3, 2}, {300, 257}, {1023, 515}, {514, 33}, {18, 600}};
    const int next = small_only() ? 7 : 11;
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

/* rb-tuned's shapes (BXxBYxH, BY + 16: overlapped warps): unroll 8 / 4 / 2, several strips per block, wide
 * strips, one strip for the whole grid, 256 threads; the grid-stride loop (more than 65535 strip rows) is
 * left to the large-n runs. rb-inplace's tiles (BXxH): H = 1, 2, odd widths, one tile wider than the grid. */
static void tuned_shapes(void **state)
{
    (void)state;
    const char *shapes[] = {"32x1x2",   "32x1x4",  "64x2x6",    "32x3x12",  "96x1x8",  "64x4x16",
                            "256x1x64", "32x8x2",  "64x1x256",  "128x64",   "32x17x2", "64x18x4",
                            "96x17x8",  "32x24x6", "128x17x16", "32x1x1000"};
    const char *inplace[] = {"1x1", "1x5", "16x3", "32x1", "33x7", "128x64", "512x2"};
    const int ext[][2] = {{301, 211}, {37, 100}};
    for (int e = 0; e < 2; e++)
        for (int prec = 0; prec < 2; prec++) {
            hr_options o = base(2, ext[e][0], ext[e][1], 0);
            o.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
            o.omega = 1.3;
            o.rhs = e ? HR_RHS_SPIKE : HR_RHS_MANUFACTURED;
            double *want = solve(&o, NULL);
            o.backend = HR_BACKEND_GPU;
            o.kernel = "rb-tuned";
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                if (strcmp(shapes[s], "32x1x1000") == 0) continue; /* refused: below */
                rb_shape_knob(&o, shapes[s]);
                hr_config cfg;
                hr_solver *sv = NULL;
                if (hr_solver_create(&o, &sv) != HR_OK)
                    fail_msg("rb-tuned shape %s %dx%d %s: refused: %s", shapes[s], o.nx, o.ny,
                             prec ? "double" : "single", hr_last_error());
                assert_int_equal(hr_solver_config(sv, &cfg), HR_OK);
                assert_string_equal(cfg.shape_source, "env");
                hr_solver_free(sv);
                double *got = solve(&o, NULL);
                if (memcmp(got, want, points(&o) * sizeof *got) != 0)
                    fail_msg("rb-tuned shape %s %dx%d %s: not bitwise", shapes[s], o.nx, o.ny,
                             prec ? "double" : "single");
                free(got);
            }
            o.kernel = "rb-inplace";
            for (size_t s = 0; s < sizeof inplace / sizeof inplace[0]; s++) {
                rb_shape_knob(&o, inplace[s]);
                double *got = solve(&o, NULL);
                if (memcmp(got, want, points(&o) * sizeof *got) != 0)
                    fail_msg("rb-inplace shape %s: not bitwise", inplace[s]);
                free(got);
            }
            rb_shape_knob(&o, NULL);
            free(want);
        }
    /* shapes rb-tuned cannot run: refused at create with a reason */
    const char *bad[] = {"33x1x4", "32x1x3", "32x1x1000", "512x1x4", "0x1x4", "32x25x4", "256x18x4"};
    hr_options o = base(2, 50, 40, 0);
    o.backend = HR_BACKEND_GPU;
    o.kernel = "rb-tuned";
    for (size_t s = 0; s < sizeof bad / sizeof bad[0]; s++) {
        rb_shape_knob(&o, bad[s]);
        hr_solver *sv = NULL;
        if (hr_solver_create(&o, &sv) != HR_ERR_INVALID_ARG)
            fail_msg("rb-tuned shape %s: not refused", bad[s]);
    }
    rb_shape_knob(&o, "4x4");
    o.kernel = "rb-v3";
    free(solve(&o, NULL)); /* v3's shared tile follows the shape too */
}

/* Tune rb-tuned into a private cache file; the next solver takes the shape from it. */
static void tune_round_trip(void **state)
{
    (void)state;
    char path[] = "/tmp/hetrelax-rb-tune-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    hr_options o = base(2, 333, 190, 0);
    o.tuning.tune_file = path;
    o.backend = HR_BACKEND_GPU;
    o.kernel = "rb-tuned";
    o.omega = 1.2;
    o.iters = 5;
    hr_solver *sv = NULL;
    hr_config cfg;
    assert_int_equal(hr_solver_create(&o, &sv), HR_OK);
    assert_int_equal(hr_solver_config(sv, &cfg), HR_OK);
    assert_true(strcmp(cfg.shape_source, "shipped") == 0 || strcmp(cfg.shape_source, "default") == 0);
    hr_solver_free(sv);
    hr_cuda_tune_result t;
    char err[300];
    if (hri_cuda_tune(&o, 3, NULL, &t, err, sizeof err) != HR_OK) fail_msg("hri_cuda_tune rb-tuned: %s", err);
    assert_string_equal(t.cache_path, path);
    assert_true(t.candidates > 10);
    assert_int_equal(hr_solver_create(&o, &sv), HR_OK);
    assert_int_equal(hr_solver_config(sv, &cfg), HR_OK);
    print_message(
        "rb-tuned tune: best %dx%dx%d (%.0f GB/s, first %.0f, %d shapes), solver uses %dx%dx%d from %s\n",
        t.bx, t.by, t.h, t.best_gbps, t.default_gbps, t.candidates, cfg.shape[0], cfg.shape[1], cfg.shape[2],
        cfg.shape_source);
    assert_string_equal(cfg.shape_source, "cache");
    assert_int_equal(cfg.shape[0], t.bx);
    assert_int_equal(cfg.shape[1], t.by);
    assert_int_equal(cfg.shape[2], t.h);
    hr_solver_free(sv);
    /* the tuned solver is still bitwise rb-seq */
    double *got = solve(&o, NULL);
    o.backend = HR_BACKEND_CPU_SEQ;
    o.kernel = "rb-seq";
    double *want = solve(&o, NULL);
    assert_memory_equal(got, want, points(&o) * sizeof *got);
    free(got);
    free(want);
    /* a cache line this build cannot run (33 threads) is passed over for the default */
    char dev[256];
    assert_int_equal(hr_gpu_name(0, dev, sizeof dev), HR_OK);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fprintf(f, "%s\trb-tuned\t%s\t2\t%d\t%d\t1\t0\t33\t1\t4\t1.0\n", dev,
            o.precision == HR_PREC_DOUBLE ? "double" : "single", o.nx, o.ny); /* later lines win */
    fclose(f);
    o.backend = HR_BACKEND_GPU;
    o.kernel = "rb-tuned";
    assert_int_equal(hr_solver_create(&o, &sv), HR_OK);
    assert_int_equal(hr_solver_config(sv, &cfg), HR_OK);
    assert_string_equal(cfg.shape_source, "default");
    hr_solver_free(sv);
    /* a kernel with no shapes to tune is refused, not crashed */
    o.backend = HR_BACKEND_GPU;
    o.kernel = "rb-v1";
    assert_int_not_equal(hri_cuda_tune(&o, 2, NULL, &t, err, sizeof err), HR_OK);
    unlink(path);
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

/* Red-black on several GPUs (rb-mgpu --gpus N, rb-2gpu) == rb-seq: odd and even row counts
 * down to the fewest rows the slabs allow (slabs of 1 and 2 rows), the spike in any slab, an
 * f array, both precisions, omega 1 and 1.5, residual checks mid-run (downloads), for each
 * scheme: the streaming default, with CUDA graphs of 2 iterations, with the exchange by a
 * kernel, and on two slabs the knobs rb2_old and rb2_v1. `one`: every slab on device 0
 * (tuning.rb2_one: the same code path, copies within one device); else slab d on device d. */
static const char *const rb2_modes[][3] = {{"", "", "stream"},
                                           {"rb2_graph", "2", "graph"},
                                           {"rb2_kcopy", "1", "kernel copy"},
                                           {"rb2_old", "1", "fused"},
                                           {"rb2_v1", "1", "v1"}};
static hr_tuning rb2_knobs; /* the scheme rb2_options runs */

static void rb2_env(int md, int one)
{
    rb2_knobs = *env_tuning();
    if (rb2_modes[md][0][0]) set_knob(&rb2_knobs, rb2_modes[md][0], rb2_modes[md][1]);
    if (one) rb2_knobs.rb2_one = HR_TUNE_ON;
}

/* The options for red-black on ng GPUs; two slabs alternate between the two names. */
static hr_options rb2_options(int nx, int ny, int ng, int alt)
{
    hr_options o = base(2, nx, ny, 0);
    o.tuning = rb2_knobs;
    o.backend = HR_BACKEND_GPU;
    o.kernel = ng == 2 && alt ? "rb-2gpu" : "rb-mgpu";
    o.gpus = ng == 2 && alt ? 0 : ng;
    return o;
}

/* Every size and scheme on ng slabs; returns the runs, *skipped += forms without peer access. */
static int slabs_bitwise(int ng, int one, int *skipped)
{
    /* rows 2, 3 (slabs of 1 row), 6 (4 slabs: 1, 2, 2, 1), 7, 11, odd / even cuts, wide rows */
    const int ext[][2] = {{5, 2}, {9, 3}, {17, 6}, {12, 7}, {33, 11}, {37, 29}, {64, 65}, {301, 256}};
    const int nmodes = ng == 2 ? 5 : 3;
    int n = 0;
    for (int md = 0; md < nmodes; md++) {
        rb2_env(md, one);
        if (!one && md == 1) { /* graphs read the neighbours' memory */
            hr_options p = rb2_options(33, 11, ng, 0);
            hr_solver *sv = NULL;
            if (hr_solver_create(&p, &sv) != HR_OK && strstr(hr_last_error(), "peer access")) {
                print_message("red-black on %d GPUs, %s: skipped: %s\n", ng, rb2_modes[md][2],
                              hr_last_error());
                (*skipped)++;
                continue;
            }
            hr_solver_free(sv);
        }
        for (int e = 0; e < 8; e++)
            for (int prec = 0; prec < 2; prec++)
                for (int r = 0; r < 2; r++) {
                    hr_options o = base(2, ext[e][0], ext[e][1], 0);
                    o.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
                    o.rhs = r ? HR_RHS_MANUFACTURED : HR_RHS_SPIKE;
                    o.omega = r ? 1.5 : 1.0;
                    hr_options g = rb2_options(ext[e][0], ext[e][1], ng, prec);
                    g.precision = o.precision;
                    g.rhs = o.rhs;
                    g.omega = o.omega;
                    g.tol = r ? 1e-30 : 0; /* with checks every 4 iterations (downloads mid-run) */
                    g.check_every = 4;
                    if (ext[e][1] < 2 * ng - 2) { /* too few rows for the slabs: refused */
                        hr_solver *sv = NULL;
                        assert_int_equal(hr_solver_create(&g, &sv), HR_ERR_INVALID_ARG);
                        if (!strstr(hr_last_error(), "ny: red-black on"))
                            fail_msg("%d rows on %d GPUs: %s", ext[e][1], ng, hr_last_error());
                        continue;
                    }
                    double *want = solve(&o, NULL);
                    double *got = solve(&g, NULL);
                    if (memcmp(got, want, points(&o) * sizeof *got) != 0)
                        fail_msg("%s on %d GPUs, %s%s %dx%d %s rhs %d: not bitwise rb-seq", g.kernel, ng,
                                 rb2_modes[md][2], one ? " (one device)" : "", o.nx, o.ny,
                                 prec ? "double" : "single", r);
                    free(got);
                    free(want);
                    n++;
                }
    }
    rb2_env(0, 0);
    return n;
}

/* 2, 3 and 4 slabs on device 0, and what is refused. */
static void slabs_one_device(void **state)
{
    (void)state;
    int n = 0, skipped = 0;
    for (int ng = 2; ng <= 4; ng++)
        n += slabs_bitwise(ng, 1, &skipped);
    print_message("red-black on 2, 3, 4 slabs of one device: %d runs bitwise equal to rb-seq\n", n);
    hr_solver *sv = NULL;
    /* the in-place schemes run on two slabs only */
    for (int md = 3; md < 5; md++) {
        rb2_env(md, 1);
        hr_options o = rb2_options(33, 11, 3, 0);
        assert_int_equal(hr_solver_create(&o, &sv), HR_ERR_INVALID_ARG);
        if (!strstr(hr_last_error(), "runs on 2 GPUs only"))
            fail_msg("%s: %s", rb2_modes[md][0], hr_last_error());
    }
    rb2_env(0, 1);
    hr_options o = rb2_options(33, 11, 4, 1);
    o.kernel = "rb-2gpu"; /* rb-2gpu with --gpus 4 */
    assert_int_equal(hr_solver_create(&o, &sv), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "gpus: kernel rb-2gpu runs on 2 GPUs"));
    o = rb2_options(33, 11, 1, 0); /* rb-mgpu without --gpus N >= 2 */
    assert_int_equal(hr_solver_create(&o, &sv), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "gpus: kernel rb-mgpu needs --gpus N"));
    /* more GPUs than present: one line naming the devices */
    rb2_env(0, 0);
    const int devices = hri_cuda_device_count();
    if (devices < 16) {
        o = rb2_options(64, 64, devices + 1, 0);
        assert_int_equal(hr_solver_create(&o, &sv), HR_ERR_NO_DEVICE);
        if (!strstr(hr_last_error(), "gpus: red-black on") || strchr(hr_last_error(), '\n'))
            fail_msg("%d GPUs of %d: %s", devices + 1, devices, hr_last_error());
    }
}

/* --devices N: 2..N slabs on devices 0..N-1 (ctest test_gpu_redblack_2gpus / _4gpus). */
static int want_devices;

static void slabs_devices(void **state)
{
    (void)state;
    int n = 0, skipped = 0;
    for (int ng = 2; ng <= want_devices; ng++)
        n += slabs_bitwise(ng, 0, &skipped);
    print_message(
        "red-black on 2..%d GPUs: %d runs bitwise equal to rb-seq; %d forms skipped (no peer access)\n",
        want_devices, n, skipped);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--devices") == 0) want_devices = atoi(argv[2]);
    if (argc != 1 && (want_devices < 2 || want_devices > 16)) {
        fprintf(stderr, "usage: test_gpu_redblack [--devices N (2..16)]\n");
        return 2;
    }
    if (!hri_kernel_find(HR_BACKEND_GPU, "rb-tuned", 2) || hri_cuda_device_count() < 1) {
        fprintf(stderr, "no CUDA device (or no CUDA in this build): skipped\n");
        return 77;
    }
    if (want_devices) {
        if (hri_cuda_device_count() < want_devices) {
            fprintf(stderr, "%d CUDA device(s), %d needed: skipped\n", hri_cuda_device_count(), want_devices);
            return 77;
        }
        const struct CMUnitTest many[] = {cmocka_unit_test(slabs_devices)};
        return cmocka_run_group_tests(many, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bitwise_2d),
        cmocka_unit_test(bitwise_3d),
        cmocka_unit_test(tuned_shapes),
        cmocka_unit_test(tune_round_trip),
        cmocka_unit_test(checks_restart_memory),
        cmocka_unit_test(slabs_one_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
