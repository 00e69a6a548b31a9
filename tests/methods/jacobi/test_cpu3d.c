/* The 3-D cpu-threads kernel `pencil` against cpu-seq (bitwise, every thread count, thread
 * grid, pencil height and store kind, odd and flat extents), its default choice and tuning
 * cache, and the STREAM reference's byte model and spread. Public API only. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"
#include "sample_util.h"

static hr_options base3(int nx, int ny, int nz, hr_backend b, hr_precision prec)
{
    hr_options o;
    hr_options_default(&o);
    o.dim = 3;
    o.nx = nx;
    o.ny = ny;
    o.nz = nz;
    o.backend = b;
    o.precision = prec;
    o.iters = 7;
    o.threads = 1;
    return o;
}

/* Runs o and returns the interior solution in the run's own precision (bitwise comparable),
 * and the resolved configuration. */
static void *solve(const hr_options *o, hr_result *r, hr_config *cfg, size_t *bytes)
{
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    if (st != HR_OK) fail_msg("create: %s (%s)", hr_status_string(st), hr_last_error());
    assert_int_equal(hr_solver_run(s, r), HR_OK);
    if (cfg) assert_int_equal(hr_solver_config(s, cfg), HR_OK);
    const size_t count = (size_t)o->nx * o->ny * o->nz;
    *bytes = count * (o->precision == HR_PREC_DOUBLE ? 8 : 4);
    void *u = malloc(*bytes);
    assert_non_null(u);
    assert_int_equal(hr_solver_solution(s, o->precision, u, count), HR_OK);
    hr_solver_free(s);
    return u;
}

/* The pencil height and store kind as knobs (by 0: the cache's or the default choice). */
static void set_block(hr_options *o, int by, int nt)
{
    o->tuning.cpu_block = by > 0 ? by : 0;
    o->tuning.cpu_block_stream = by > 0 ? (nt ? HR_TUNE_ON : HR_TUNE_OFF) : 0;
}

/* Every thread count, thread grid, pencil height and store kind gives cpu-seq's grid. */
static void pencil_bitwise_equals_seq(void **state)
{
    (void)state;
    const int ext[][3] = {{1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {17, 9, 33}, {1, 64, 5}, {40, 3, 1}};
    const int threads[] = {1, 2, 3, 5};
    const int grids[][2] = {{1, 3}, {3, 1}};
    const int blocks[] = {0, 1, 3, 7};
    int runs = 0;
    for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
        for (int prec = 0; prec < 2; prec++)
            for (int rhs = 0; rhs < 3; rhs++) {
                hr_options o = base3(ext[e][0], ext[e][1], ext[e][2], HR_BACKEND_CPU_SEQ,
                                     prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE);
                /* spike (inline), manufactured (an f grid), zero with the sine mode and omega */
                o.rhs = rhs == 0 ? HR_RHS_SPIKE : rhs == 1 ? HR_RHS_MANUFACTURED : HR_RHS_ZERO;
                o.init = rhs == 2 ? HR_INIT_SINE : HR_INIT_ZERO;
                o.omega = rhs == 2 ? 0.8 : 1.0;
                o.boundary = rhs == 0 ? 0.5 : 0.0;
                hr_result r;
                size_t bytes;
                set_block(&o, 0, 0);
                void *want = solve(&o, &r, NULL, &bytes);
                o.backend = HR_BACKEND_CPU_THREADS;
                o.kernel = "pencil";
                for (size_t t = 0; t < sizeof threads / sizeof threads[0] + 2; t++)
                    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
                        for (int nt = 0; nt < 2; nt++) {
                            if (b == 0 && nt) continue;
                            if (!hr_test_take()) continue;
                            if (t < 4) {
                                o.threads = threads[t];
                                o.thread_rows = o.thread_cols = 0;
                            } else {
                                o.thread_rows = grids[t - 4][0];
                                o.thread_cols = grids[t - 4][1];
                                o.threads = o.thread_rows * o.thread_cols;
                            }
                            set_block(&o, blocks[b], nt);
                            hr_config cfg;
                            size_t gbytes;
                            void *got = solve(&o, &r, &cfg, &gbytes);
                            assert_int_equal(gbytes, bytes);
                            if (memcmp(want, got, bytes) != 0)
                                fail_msg("%dx%dx%d %s rhs %d: %d threads (%dx%d), pencil %d rows, %s stores "
                                         "differ",
                                         o.nx, o.ny, o.nz, prec ? "double" : "single", rhs, cfg.threads,
                                         cfg.thread_rows, cfg.thread_cols, cfg.shape[1],
                                         nt ? "streaming" : "ordinary");
                            assert_string_equal(cfg.kernel, "pencil");
                            assert_int_equal(cfg.thread_rows * cfg.thread_cols, cfg.threads);
                            if (blocks[b] > 0) {
                                assert_true(cfg.shape[1] >= 1 && cfg.shape[1] <= blocks[b]);
                                assert_string_equal(cfg.shape_source, nt ? "env+nt" : "env");
                            }
                            free(got);
                            runs++;
                        }
                free(want);
            }
    print_message("%d pencil runs bitwise equal to cpu-seq\n", runs);
}

/* pencil is the default 3-D cpu-threads kernel; the sine mode decays by lambda^T. */
static void pencil_is_default_and_accurate(void **state)
{
    (void)state;
    const char *name = hr_kernel_default(HR_BACKEND_CPU_THREADS, 3);
    assert_non_null(name);
    assert_string_equal(name, "pencil");
    hr_options o = base3(30, 20, 25, HR_BACKEND_CPU_THREADS, HR_PREC_DOUBLE);
    o.tuning.tune_file = "/nonexistent/hetrelax-no-cache.txt";
    o.threads = 2;
    o.rhs = HR_RHS_ZERO;
    o.init = HR_INIT_SINE;
    o.iters = 40;
    hr_result r;
    hr_config cfg;
    size_t bytes;
    free(solve(&o, &r, &cfg, &bytes));
    assert_string_equal(cfg.kernel, "pencil");
    assert_int_equal(cfg.threads, 2);
    assert_int_equal(cfg.shape[0], 30);
    assert_true(cfg.shape[1] >= 1 && cfg.shape[1] <= 20);
    assert_true(strncmp(cfg.shape_source, "default", 7) == 0);
    assert_true(r.max_error < 1e-13);
}

/* hr_cpu_tune writes a cache line that a later solver picks up. */
static void tuning_cache_round_trip(void **state)
{
    (void)state;
    char path[] = "/tmp/hr-cpu-tune-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    hr_options o = base3(24, 16, 12, HR_BACKEND_CPU_THREADS, HR_PREC_SINGLE);
    o.threads = 2;
    hr_cpu_tune_result tr;
    char err[256];
    assert_int_equal(hr_cpu_tune(&o, 2, path, &tr, err, sizeof err), HR_OK);
    assert_true(tr.candidates >= 4);
    assert_true(tr.block[1] >= 1 && tr.block[1] <= 16);
    assert_string_equal(tr.cache_path, path);
    o.tuning.tune_file = path;
    o.kernel = "pencil";
    hr_result r;
    hr_config cfg;
    size_t bytes;
    free(solve(&o, &r, &cfg, &bytes));
    assert_int_equal(cfg.shape[1], tr.block[1]);
    assert_string_equal(cfg.shape_source, tr.stream ? "cache+nt" : "cache");
    /* another precision has no entry: the default */
    o.precision = HR_PREC_DOUBLE;
    free(solve(&o, &r, &cfg, &bytes));
    assert_true(strncmp(cfg.shape_source, "default", 7) == 0);
    remove(path);
}

/* The byte model of every "% of copy": copy moves 2 words per element, triad 3 (counting copy
 * as 3 words would fail here), and the spread is ordered. */
static void stream_reference_byte_model(void **state)
{
    (void)state;
    for (int bind = 0; bind < 2; bind++) {
        hr_bandwidth bw;
        const size_t bytes = (size_t)4 << 20;
        assert_int_equal(
            hr_measure_host_bandwidth_bound(2, bind ? HR_BIND_CORE : HR_BIND_NONE, bytes, 3, &bw), HR_OK);
        assert_int_equal(bw.bytes, bytes);
        assert_int_equal(bw.threads, 2);
        assert_int_equal(bw.repeats, 3);
        assert_int_equal(bw.bind, bind ? HR_BIND_CORE : HR_BIND_NONE);
        assert_true(bw.copy_s > 0.0 && bw.triad_s > 0.0);
        /* rate x time of the best run = the bytes moved: 2 and 3 words of each element */
        assert_true(fabs(bw.copy_gbps * bw.copy_s / (2.0 * (double)bytes * 1e-9) - 1.0) < 1e-12);
        assert_true(fabs(bw.triad_gbps * bw.triad_s / (3.0 * (double)bytes * 1e-9) - 1.0) < 1e-12);
        assert_true(bw.copy_gbps_min <= bw.copy_gbps_median && bw.copy_gbps_median <= bw.copy_gbps);
        assert_true(bw.triad_gbps_min <= bw.triad_gbps_median && bw.triad_gbps_median <= bw.triad_gbps);
    }
    /* the old entry point: same model, unbound */
    hr_bandwidth bw;
    assert_int_equal(hr_measure_host_bandwidth(1, (size_t)1 << 20, 2, &bw), HR_OK);
    assert_int_equal(bw.bind, HR_BIND_NONE);
    assert_true(fabs(bw.copy_gbps * bw.copy_s / (2.0 * (double)bw.bytes * 1e-9) - 1.0) < 1e-12);
    assert_int_equal(hr_measure_host_bandwidth_bound(1, (hr_bind)7, 1 << 20, 2, &bw), HR_ERR_INVALID_ARG);
}

/* spmd's streaming stores (automatic on grids larger than the LLC, forced here) keep the 2-D
 * sweep bitwise, with omega, an f grid and the spike, on any thread grid. */
static void spmd_streaming_bitwise(void **state)
{
    (void)state;
    const int ext[][2] = {{37, 23}, {64, 5}, {1, 9}};
    for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
        for (int prec = 0; prec < 2; prec++)
            for (int rhs = 0; rhs < 2; rhs++) {
                hr_options o;
                hr_options_default(&o);
                o.nx = ext[e][0];
                o.ny = ext[e][1];
                o.iters = 9;
                o.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
                o.rhs = rhs ? HR_RHS_MANUFACTURED : HR_RHS_SPIKE;
                o.omega = rhs ? 0.7 : 1.0;
                o.backend = HR_BACKEND_CPU_SEQ;
                hr_result r;
                size_t bytes, gbytes;
                hr_solver *s = NULL;
                assert_int_equal(hr_solver_create(&o, &s), HR_OK);
                assert_int_equal(hr_solver_run(s, &r), HR_OK);
                bytes = (size_t)o.nx * o.ny * (prec ? 8 : 4);
                void *want = malloc(bytes), *got = malloc(bytes);
                assert_int_equal(hr_solver_solution(s, o.precision, want, (size_t)o.nx * o.ny), HR_OK);
                hr_solver_free(s);
                o.tuning.cpu_stream = HR_TUNE_ON;
                o.backend = HR_BACKEND_CPU_THREADS;
                o.kernel = "spmd";
                for (int t = 1; t <= 4; t++) {
                    o.threads = t;
                    hr_config cfg;
                    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
                    assert_int_equal(hr_solver_run(s, &r), HR_OK);
                    assert_int_equal(hr_solver_config(s, &cfg), HR_OK);
                    assert_string_equal(cfg.shape_source, "auto+nt");
                    gbytes = bytes;
                    assert_int_equal(hr_solver_solution(s, o.precision, got, (size_t)o.nx * o.ny), HR_OK);
                    hr_solver_free(s);
                    if (memcmp(want, got, gbytes) != 0)
                        fail_msg("spmd streaming %dx%d %s rhs %d threads %d differs", o.nx, o.ny,
                                 prec ? "double" : "single", rhs, t);
                }
                free(want);
                free(got);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pencil_bitwise_equals_seq), cmocka_unit_test(pencil_is_default_and_accurate),
        cmocka_unit_test(tuning_cache_round_trip),   cmocka_unit_test(stream_reference_byte_model),
        cmocka_unit_test(spmd_streaming_bitwise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
