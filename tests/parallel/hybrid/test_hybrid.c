/* The hybrid backend with two CPU placements: bitwise equal to cpu-seq for every split
 * (empty parts included), ghost width and schedule, 2-D and 3-D, fp32 and fp64; bad
 * input; the auto split through the calibration; restart. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/hybrid.h"
#include "hybrid_test_util.h"
#include "sample_util.h"
#include "parallel/hybrid/split.h"
#include "runtime/cpu/crew.h"

/* Every split of the slowest axis, ghost 1..3, both schedules. */
static void every_split(int dim, hr_precision prec, hr_rhs rhs, double omega)
{
    hr_options ref, o;
    base_options(&ref, dim, prec);
    ref.rhs = rhs;
    ref.omega = omega;
    ref.init = HR_INIT_SINE;
    ref.backend = HR_BACKEND_CPU_SEQ;
    const int n = dim == 3 ? ref.nz : ref.ny;
    for (int g = 1; g <= 3; g++)
        for (int sched = 0; sched < 2; sched++)
            for (int r = 0; r <= n; r++) {
                if (r > 0 && r < n && (r < g || n - r < g)) continue; /* refused: see bad_input */
                if (g > 1 && sched == 1 && r % 3) continue;           /* keep the run short */
                if (!hr_test_take()) continue;
                o = ref;
                o.backend = HR_BACKEND_HYBRID;
                o.split_second = HR_SPLIT_CPU;
                o.split = (double)r / n;
                o.split_ghost = g;
                o.split_schedule = sched;
                char what[128];
                snprintf(what, sizeof what, "%d-D %s rows %d/%d ghost %d %s", dim,
                         prec == HR_PREC_DOUBLE ? "fp64" : "fp32", r, n, g, sched ? "naive" : "nested");
                check_equal(&ref, &o, what);
            }
}

static void split2d_fp32(void **state)
{
    (void)state;
    every_split(2, HR_PREC_SINGLE, HR_RHS_SPIKE, 1.0);
}

static void split2d_fp64_rhs_omega(void **state)
{
    (void)state;
    every_split(2, HR_PREC_DOUBLE, HR_RHS_MANUFACTURED, 0.8);
}

static void split3d_fp64(void **state)
{
    (void)state;
    every_split(3, HR_PREC_DOUBLE, HR_RHS_SPIKE, 1.0);
}

static void split3d_fp32_rhs(void **state)
{
    (void)state;
    every_split(3, HR_PREC_SINGLE, HR_RHS_MANUFACTURED, 1.0);
}

/* Residual checks (tol) stop at the same sweep with the same answer. */
static void converges_like_seq(void **state)
{
    (void)state;
    hr_options ref, o;
    base_options(&ref, 2, HR_PREC_DOUBLE);
    ref.iters = 5000;
    ref.tol = 1e-3;
    ref.check_every = 7;
    ref.backend = HR_BACKEND_CPU_SEQ;
    for (int g = 1; g <= 2; g++) {
        o = ref;
        o.backend = HR_BACKEND_HYBRID;
        o.split_second = HR_SPLIT_CPU;
        o.split = 0.3;
        o.split_ghost = g;
        hr_result a, b;
        void *x = solve(&ref, &a), *y = solve(&o, &b);
        assert_int_equal(a.reason, HR_REASON_CONVERGED);
        assert_int_equal(b.reason, HR_REASON_CONVERGED);
        assert_int_equal(a.iterations, b.iterations);
        assert_memory_equal(x, y, (size_t)a.nx * a.ny * 8);
        assert_true(fabs(a.relative_residual - b.relative_residual) <= 1e-12 * a.relative_residual);
        free(x);
        free(y);
    }
}

/* A restart from a checkpoint continues bitwise as the uninterrupted run. */
static void restart(void **state)
{
    (void)state;
    hr_options o;
    base_options(&o, 3, HR_PREC_SINGLE);
    o.backend = HR_BACKEND_HYBRID;
    o.split_second = HR_SPLIT_CPU;
    o.split = 0.5;
    o.iters = 20;
    hr_result r;
    void *whole = solve(&o, &r);
    const size_t n = (size_t)r.nx * r.ny * r.nz;
    hr_solver *s;
    o.iters = 9;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    float *mid = malloc(n * 4), *end = malloc(n * 4);
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, mid, n), HR_OK);
    hr_solver_free(s);
    o.iters = 11;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_set_solution(s, HR_PREC_SINGLE, mid, n, 9), HR_OK);
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, end, n), HR_OK);
    assert_memory_equal(end, whole, n * 4);
    hr_solver_free(s);
    free(whole);
    free(mid);
    free(end);
}

static hr_status create_fails(const hr_options *o, const char *expect)
{
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    assert_null(s);
    if (!strstr(hr_last_error(), expect)) fail_msg("error '%s' lacks '%s'", hr_last_error(), expect);
    return st;
}

static void bad_input(void **state)
{
    (void)state;
    hr_options o;
    base_options(&o, 2, HR_PREC_SINGLE);
    o.backend = HR_BACKEND_HYBRID;
    o.split_second = HR_SPLIT_CPU;
    o.split = 1.5;
    assert_int_equal(create_fails(&o, "split: must be in [0, 1]"), HR_ERR_INVALID_ARG);
    o.split = NAN;
    assert_int_equal(create_fails(&o, "split:"), HR_ERR_INVALID_ARG);
    o.split = 0.01; /* 0.19 of a row */
    assert_int_equal(create_fails(&o, "split: 0.01 leaves the CPU part with no rows"), HR_ERR_INVALID_ARG);
    o.split = 0.99;
    assert_int_equal(create_fails(&o, "leaves the GPU part with no rows"), HR_ERR_INVALID_ARG);
    o.split = 0.1; /* 2 rows */
    o.split_ghost = 3;
    assert_int_equal(create_fails(&o, "split-ghost: 3 ghost rows"), HR_ERR_INVALID_ARG);
    o.split_ghost = -1;
    assert_int_equal(create_fails(&o, "split-ghost:"), HR_ERR_INVALID_ARG);
    o.split_ghost = 1;
    o.split_schedule = 7;
    assert_int_equal(create_fails(&o, "schedule:"), HR_ERR_INVALID_ARG);
    o.split_schedule = HR_SPLIT_NESTED;
    /* the real second placement needs a GPU */
    base_options(&o, 2, HR_PREC_SINGLE);
    o.backend = HR_BACKEND_HYBRID;
    o.split = 0.5;
    hr_sysinfo si;
    assert_int_equal(hr_sysinfo_get(&si), HR_OK);
    if (si.gpus == 0)
        assert_int_equal(create_fails(&o, "backend: hybrid needs a CUDA device"), HR_ERR_NO_DEVICE);
    assert_string_equal(hr_backend_name(HR_BACKEND_HYBRID), "hybrid");
    assert_string_equal(hr_kernel_default(HR_BACKEND_HYBRID, 3), "split");
}

/* --split auto: calibration with two CPU parts, a valid split, bitwise result, explain text. */
static void auto_split(void **state)
{
    (void)state;
    hr_options ref, o;
    base_options(&ref, 2, HR_PREC_SINGLE);
    ref.nx = ref.ny = 96;
    ref.iters = 6;
    ref.backend = HR_BACKEND_CPU_SEQ;
    o = ref;
    o.backend = HR_BACKEND_HYBRID;
    o.split_second = HR_SPLIT_CPU;
    o.split = -1.0;
    hr_solver *s;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    hr_hybrid_info in;
    assert_int_equal(hr_solver_hybrid_info(s, &in), HR_OK);
    assert_true(in.auto_split && in.have_model);
    assert_int_equal(in.rows, 96);
    assert_true(in.rows_cpu >= 0 && in.rows_cpu <= 96);
    assert_true(in.cal.t_cpu > 0 && in.cal.t_gpu > 0 && in.cal.x_exposed >= 0);
    /* auto's choice: of the candidates measured twice, the one whose slower count is lowest,
     * when that is 1 % faster than the second part alone, else 0; a candidate is measured
     * again only when its first count paid, fastest first until one pays twice */
    int found = in.rows_cpu == 0, fastest = 0, best = -1;
    const double t0 = in.cal.gpu_alone_s;
    assert_true(in.cal.candidates >= 1);
    for (int k = 0; k < in.cal.candidates; k++) {
        found |= in.cal.cand_rows[k] == in.rows_cpu;
        if (in.cal.cand_s[k] < in.cal.cand_s[fastest]) fastest = k;
        const double a = in.cal.cand_again_s[k], t = a > in.cal.cand_s[k] ? a : in.cal.cand_s[k];
        if (a > 0.0) assert_true(in.cal.cand_s[k] < 0.99 * t0);
        if (a > 0.0 && t < 0.99 * t0 &&
            (best < 0 || t < (in.cal.cand_again_s[best] > in.cal.cand_s[best] ? in.cal.cand_again_s[best]
                                                                              : in.cal.cand_s[best])))
            best = k;
    }
    assert_true(found);
    /* the fastest first count that paid was measured again */
    if (in.cal.cand_s[fastest] < 0.99 * t0) assert_true(in.cal.cand_again_s[fastest] > 0.0);
    assert_int_equal(in.rows_cpu, best < 0 ? 0 : in.cal.cand_rows[best]);
    const double tb = hr_split_model_time(&in.model, in.rows_cpu);
    assert_true(fabs(in.predicted_s - tb) <= 1e-15 + 1e-12 * tb);
    char text[4096];
    const int len = hr_hybrid_explain(&in, r.time_per_sweep_s, text, sizeof text);
    assert_true(len > 0 && (size_t)len < sizeof text);
    assert_non_null(strstr(text, "predicted curve"));
    assert_non_null(strstr(text, "measured:"));
    float *u = malloc(96 * 96 * 4);
    void *v;
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, u, 96 * 96), HR_OK);
    hr_solver_free(s);
    hr_result r0;
    v = solve(&ref, &r0);
    assert_memory_equal(u, v, 96 * 96 * 4);
    free(u);
    free(v);
    /* Sourouri et al.'s STREAM rule: two CPU parts of about equal bandwidth, about half the rows */
    o.split = HR_SPLIT_STREAM;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_int_equal(hr_solver_hybrid_info(s, &in), HR_OK);
    assert_true(in.cal.cpu_stream_gbps > 0 && in.cal.gpu_stream_gbps > 0);
    const double share = hr_split_stream_share(in.cal.cpu_stream_gbps, in.cal.gpu_stream_gbps);
    assert_int_equal(in.rows_cpu, (int)lround(share * 96));
    assert_true(in.rows_cpu >= 1 && in.rows_cpu <= 95);
    u = malloc(96 * 96 * 4);
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, u, 96 * 96), HR_OK);
    hr_solver_free(s);
    v = solve(&ref, &r0);
    assert_memory_equal(u, v, 96 * 96 * 4);
    free(u);
    free(v);
    /* the info call refuses other backends */
    assert_int_equal(hr_solver_create(&ref, &s), HR_OK);
    assert_int_equal(hr_solver_hybrid_info(s, &in), HR_ERR_INVALID_ARG);
    hr_solver_free(s);
}

/* Auto's watch, forced (tuning.auto_watch_force: any split with both parts falls back after
 * its first window of 50 ms): the run goes on GPU-only (here the second CPU part alone) from
 * the sweep it fell back after, bitwise equal to cpu-seq, with every sweep counted; 2-D, 3-D,
 * and 2-D with ghost 2. */
static void watch_falls_back(void **state)
{
    (void)state;
    for (int run = 0; run < 3; run++) {
        const int dim = run == 1 ? 3 : 2; /* run 2: 2-D with ghost 2 (rounds of two sweeps) */
        hr_options ref, o;
        base_options(&ref, dim, dim == 3 ? HR_PREC_DOUBLE : HR_PREC_SINGLE);
        /* far from converged after these sweeps (a grid that restarted from its initial values
         * at the fall-back must differ), and well beyond one window on any machine */
        ref.nx = dim == 3 ? 40 : 200;
        ref.ny = dim == 3 ? 32 : 160;
        ref.nz = dim == 3 ? 48 : 0;
        ref.init = HR_INIT_SINE;
        ref.rhs = HR_RHS_MANUFACTURED;
        ref.iters = dim == 3 ? 6000 : 20000;
        ref.backend = HR_BACKEND_CPU_SEQ;
        o = ref;
        o.backend = HR_BACKEND_HYBRID;
        o.split_second = HR_SPLIT_CPU;
        o.split = 0.5;
        o.split_ghost = run == 2 ? 2 : 1;
        ref.iters += run == 2; /* an odd count: the fall-back may come inside a round */
        o.iters = ref.iters;
        o.tuning.auto_watch_force = HR_TUNE_ON;
        hr_solver *s;
        assert_int_equal(hr_solver_create(&o, &s), HR_OK);
        hr_result r;
        assert_int_equal(hr_solver_run(s, &r), HR_OK);
        hr_hybrid_info in;
        assert_int_equal(hr_solver_hybrid_info(s, &in), HR_OK);
        const int n = dim == 3 ? ref.nz : ref.ny;
        assert_int_equal(in.fallback_rows_cpu, (int)lround(0.5 * n));
        assert_true(in.fallback_sweep >= 16 && in.fallback_sweep < ref.iters);
        assert_true(in.fallback_split_s > 0);
        assert_int_equal(in.rows_cpu, 0);
        assert_int_equal(in.sweeps, ref.iters);
        assert_int_equal(r.iterations, ref.iters);
        const size_t count = (size_t)r.nx * r.ny * r.nz, es = dim == 3 ? 8 : 4;
        void *u = malloc(count * es);
        assert_non_null(u);
        assert_int_equal(hr_solver_solution(s, o.precision, u, count), HR_OK);
        char text[8192];
        hr_hybrid_explain(&in, r.time_per_sweep_s, text, sizeof text);
        assert_non_null(strstr(text, "fell back"));
        hr_solver_free(s);
        hr_result r0;
        void *v = solve(&ref, &r0);
        assert_memory_equal(u, v, count * es);
        free(u);
        free(v);
        /* not forced: a given split is never watched */
        o.tuning.auto_watch_force = 0;
        o.iters = 2000;
        assert_int_equal(hr_solver_create(&o, &s), HR_OK);
        assert_int_equal(hr_solver_run(s, &r), HR_OK);
        assert_int_equal(hr_solver_hybrid_info(s, &in), HR_OK);
        assert_true(in.fallback_sweep == 0 && in.rows_cpu == (int)lround(0.5 * n));
        hr_solver_free(s);
    }
}

static void model_range(void **state)
{
    (void)state;
    hr_split_model m = {.t_a = 8.0, .t_b = 1.0, .messages = 2, .rows = 900};
    double t;
    assert_int_equal(hr_split_model_best_range(&m, 1, 899, 0.0, &t), 100);
    assert_int_equal(hr_split_model_best_range(&m, 1, 60, 0.0, &t), 60);   /* upper bound */
    assert_int_equal(hr_split_model_best_range(&m, 150, 899, 0.0, &t), 0); /* nothing in range beats B */
    /* X = 0.1: a gain of 1 - (8/9 + 0.1) = 1.1 %: taken at margin 1 %, refused at 2 % */
    m.x_latency = 0.05;
    assert_int_equal(hr_split_model_best_range(&m, 1, 899, 0.01, &t), 100);
    assert_int_equal(hr_split_model_best_range(&m, 1, 899, 0.02, &t), 0);
    assert_true(t == 1.0);
    double f[3] = {0.0, 1.0 / 9.0, 1.0}, c[3];
    hr_split_model_curve(&m, f, 3, c);
    assert_true(c[0] == 1.0 && c[2] == 8.0);
    assert_true(fabs(c[1] - (8.0 / 9.0 + 0.1)) < 1e-12);
}

/* Pinned crews: every worker runs on its slot's CPU for the whole job; slots that do not
 * fit the allowed CPUs (or tuning.crew_pin off) leave the crew unpinned. */
static void record_cpu(void *ctx, int tid, int n)
{
    (void)n;
    ((int *)ctx)[tid] = sched_getcpu();
}

static void crew_pinning(void **state)
{
    (void)state;
    const int slots = hri_crew_slots();
    assert_true(slots >= 1 && hri_crew_slot_cpu(0) >= 0 && hri_crew_slot_cpu(slots) == -1);
    const hr_tuning *tu = test_tuning();
    const int off = tu->crew_pin < 0;
    hr_crew *c;
    assert_int_equal(hri_crew_create(1, slots - 1, tu, &c), HR_OK);
    assert_int_equal(hri_crew_pinned(c), !off);
    for (int rep = 0; rep < 20 && !off; rep++) {
        int cpu[1] = {-1};
        hri_crew_start(c, record_cpu, cpu, 1);
        hri_crew_wait(c);
        assert_int_equal(cpu[0], hri_crew_slot_cpu(slots - 1));
    }
    /* two pinned crews on one slot, jobs interleaved: each start sends the other crew's
     * spinning worker to sleep, and the next start wakes it */
    hr_crew *d;
    assert_int_equal(hri_crew_create(1, slots - 1, tu, &d), HR_OK);
    for (int rep = 0; rep < 20; rep++) {
        int cpu[2] = {-1, -1};
        hri_crew_start(c, record_cpu, cpu, 1);
        hri_crew_wait(c);
        hri_crew_start(d, record_cpu, cpu + 1, 1);
        hri_crew_wait(d);
        for (int k = 0; k < 2 && !off; k++)
            assert_int_equal(cpu[k], hri_crew_slot_cpu(slots - 1));
        assert_true(cpu[0] >= 0 && cpu[1] >= 0);
    }
    hri_crew_free(d);
    hri_crew_free(c);
    assert_int_equal(hri_crew_create(2, slots - 1, tu, &c), HR_OK); /* one slot short */
    assert_false(hri_crew_pinned(c));
    int cpu[2] = {-1, -1};
    hri_crew_start(c, record_cpu, cpu, 1);
    hri_crew_wait(c);
    assert_true(cpu[0] >= 0 && cpu[1] >= 0);
    hri_crew_free(c);
    assert_int_equal(hri_crew_create(1, -1, tu, &c), HR_OK);
    assert_false(hri_crew_pinned(c));
    hri_crew_free(c);
}

/* Pieces: every piece of every job runs exactly once, and a job's next start waits for all of
 * them (2000 short jobs, a count per piece). */
typedef struct piece_log {
    atomic_int runs[64];
    pthread_t by[64];
    int slow_piece; /* sleeps 0.2 s (-1: none) */
} piece_log;

static void log_piece(void *ctx, int piece, int pieces)
{
    piece_log *l = ctx;
    assert_true(piece >= 0 && piece < pieces && pieces <= 64);
    l->by[piece] = pthread_self();
    if (piece == l->slow_piece) nanosleep(&(struct timespec){0, 200000000L}, NULL);
    atomic_fetch_add(&l->runs[piece], 1);
}

static void crew_pieces(void **state)
{
    (void)state;
    hr_crew *c;
    assert_int_equal(hri_crew_create(3, -1, test_tuning(), &c), HR_OK);
    static piece_log l;
    l.slow_piece = -1;
    for (int job = 0; job < 2000; job++) {
        const int per = 1 + job % 5;
        hri_crew_start(c, log_piece, &l, per);
        hri_crew_wait(c);
        for (int p = 0; p < 3 * per; p++) {
            assert_int_equal(atomic_load(&l.runs[p]), 1);
            atomic_store(&l.runs[p], 0);
        }
    }
    hri_crew_free(c);
    /* two workers, 8 pieces each, piece 0 slow: the worker that did not take it runs all the
     * others, its own and the slow worker's (stealing); tuning.crew_steal off: each its own */
    const int steal = test_tuning()->crew_steal >= 0;
    assert_int_equal(hri_crew_create(2, -1, test_tuning(), &c), HR_OK);
    l.slow_piece = 0;
    hri_crew_start(c, log_piece, &l, 8);
    hri_crew_wait(c);
    for (int p = 0; p < 16; p++)
        assert_int_equal(atomic_load(&l.runs[p]), 1);
    for (int p = 1; p < 8; p++)
        assert_int_equal(pthread_equal(l.by[p], l.by[0]) != 0, !steal);
    hri_crew_free(c);
}

/* Nested crews not given: sized to their rows (the boundary crew's rows per thread those of
 * the interior crew), at least one thread each; given: as given. */
static void crew_sizes(void **state)
{
    (void)state;
    int in, b;
    hri_split_crew_sizes(15, 3, 2, &in, &b); /* an MPI rank's 3 planes, two of them boundaries */
    assert_true(b == 10 && in == 5);
    hri_split_crew_sizes(15, 28, 2, &in, &b);
    assert_true(b == 1 && in == 14);
    hri_split_crew_sizes(15, 1, 2, &in, &b);
    assert_true(b == 14 && in == 1);
    hri_split_crew_sizes(2, 40, 1, &in, &b);
    assert_true(b == 1 && in == 1);
    hri_split_crew_sizes(1, 40, 1, &in, &b);
    assert_true(b == 1 && in == 1);
    /* through the backend: 3-D, 40 planes, 8 threads (two CPU parts: 4 for A), nested */
    hr_options o;
    base_options(&o, 3, HR_PREC_DOUBLE);
    o.nz = 40;
    o.iters = 2;
    o.threads = 8;
    o.backend = HR_BACKEND_HYBRID;
    o.split_second = HR_SPLIT_CPU;
    const double split[3] = {2.0 / 40, 20.0 / 40, 2.0 / 40};
    const int given[3] = {0, 0, 1}, want_b[3] = {2, 1, 1}, want_in[3] = {2, 3, 3};
    for (int k = 0; k < 3; k++) {
        o.split = split[k];
        o.split_boundary_threads = given[k];
        hr_solver *s;
        assert_int_equal(hr_solver_create(&o, &s), HR_OK);
        hr_hybrid_info info;
        assert_int_equal(hr_solver_hybrid_info(s, &info), HR_OK);
        assert_int_equal(info.boundary_threads, want_b[k]);
        assert_int_equal(info.cpu_threads, want_in[k]);
        hr_solver_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split2d_fp32),       cmocka_unit_test(split2d_fp64_rhs_omega),
        cmocka_unit_test(split3d_fp64),       cmocka_unit_test(split3d_fp32_rhs),
        cmocka_unit_test(converges_like_seq), cmocka_unit_test(restart),
        cmocka_unit_test(bad_input),          cmocka_unit_test(auto_split),
        cmocka_unit_test(watch_falls_back),   cmocka_unit_test(model_range),
        cmocka_unit_test(crew_pinning),       cmocka_unit_test(crew_pieces),
        cmocka_unit_test(crew_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
