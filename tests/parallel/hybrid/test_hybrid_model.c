/* The CPU+GPU split model (include/hetrelax/hybrid.h) against its closed forms. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/hybrid.h"

static void optimum_without_exchange(void **state)
{
    (void)state;
    /* t_a = 8 t_b, free exchange: f* = 1/9, T(f*) = t_a t_b / (t_a + t_b) */
    hr_split_model m = {.t_a = 8.0, .t_b = 1.0, .messages = 2, .rows = 900};
    double t;
    int r = hr_split_model_best(&m, &t);
    assert_int_equal(r, 100);
    assert_true(fabs(t - 8.0 / 9.0) < 1e-12);
    assert_true(fabs(hr_split_model_time(&m, 0) - 1.0) < 1e-15);
    assert_true(fabs(hr_split_model_time(&m, 900) - 8.0) < 1e-15);
    /* the gain is bounded by 1 + t_b / t_a */
    assert_true(1.0 / t <= 1.0 + 1.0 / 8.0 + 1e-12);
}

static void exchange_decides(void **state)
{
    (void)state;
    /* X = 2 (lat + bytes/bw); the split pays only when X < f* t_b = 1/9 */
    hr_split_model m = {.t_a = 8.0,
                        .t_b = 1.0,
                        .x_latency = 0.05,
                        .x_bandwidth = 1e9,
                        .row_bytes = 1e6,
                        .messages = 2,
                        .rows = 900}; /* X = 2 * (0.05 + 0.001) = 0.102 */
    assert_true(fabs(hr_split_model_exchange(&m, 100) - 0.102) < 1e-12);
    assert_int_equal(hr_split_model_exchange(&m, 0), 0);
    assert_int_equal(hr_split_model_exchange(&m, 900), 0);
    double t;
    int r = hr_split_model_best(&m, &t);
    assert_int_equal(r, 100);
    assert_true(t < 1.0);
    m.x_latency = 0.06; /* X = 0.122 > 1/9: stay on B alone */
    assert_int_equal(hr_split_model_best(&m, &t), 0);
    assert_true(t == 1.0);
}

/* The size-aware CPU term: the part's time linear in its rows between the knots' times,
 * proportional beyond them. */
static void cpu_knots(void **state)
{
    (void)state;
    hr_split_model m = {
        .t_a = 8.0, .t_b = 1.0, .messages = 2, .rows = 1000, .a_knots = 2, .a_ws_per_row = 1e5};
    m.a_knot_ws[0] = 1e6;
    m.a_knot_row_s[0] = 1e-3;
    m.a_knot_ws[1] = 1e8;
    m.a_knot_row_s[1] = 3e-3;
    /* knots: 10 rows in 0.01 s, 1000 rows in 3 s */
    const double t100 = 0.01 + 90.0 / 990.0 * 2.99; /* 100 rows: 1e7 bytes, on the line */
    assert_true(fabs(hr_split_model_part_a(&m, 100) - t100) < 1e-15);
    assert_true(fabs(hr_split_model_row_s(&m, 1e7) - t100 / 100) < 1e-15);
    assert_true(fabs(hr_split_model_part_a(&m, 5) - 5e-3) < 1e-15); /* in cache below: proportional */
    assert_true(hr_split_model_row_s(&m, 1e3) == 1e-3);
    assert_true(hr_split_model_row_s(&m, 1e10) == 3e-3); /* memory above */
    assert_true(fabs(hr_split_model_part_a(&m, 1000) - 3.0) < 1e-15);
    /* A alone: its part time, no exchange; B alone: b_alone when given */
    assert_true(fabs(hr_split_model_time(&m, 1000) - 3.0) < 1e-12);
    assert_true(hr_split_model_time(&m, 0) == 1.0);
    m.b_alone = 0.9;
    assert_true(hr_split_model_time(&m, 0) == 0.9);
    /* a split: max of the parts (B slower at 10 rows) */
    assert_true(fabs(hr_split_model_time(&m, 10) - 0.99) < 1e-12);
    /* the best split: where A's line 0.01 + (r - 10) 2.99 / 990 meets B's 1 - r / 1000, r = 253.8 */
    const int best = hr_split_model_best(&m, NULL);
    assert_true(best == 253 || best == 254);
    /* B's part has a floor (launch latency): at 990 rows it takes b_floor, not 0.01 t_b */
    assert_true(fabs(hr_split_model_part_b(&m, 990) - 0.01) < 1e-15);
    m.b_floor = 0.05;
    assert_true(hr_split_model_part_b(&m, 990) == 0.05 && hr_split_model_part_b(&m, 1000) == 0.0);
    assert_true(fabs(hr_split_model_part_b(&m, 100) - 0.9) < 1e-15);
    m.b_floor = 0.0;
    /* without knots the term is f t_a, as before */
    m.a_knots = 0;
    assert_true(fabs(hr_split_model_part_a(&m, 100) - 0.8) < 1e-15);
}

/* Clark's expected maximum of two normal times. */
static void jitter_max(void **state)
{
    (void)state;
    assert_true(hr_split_model_max(2.0, 3.0, 0.0) == 3.0);
    assert_true(fabs(hr_split_model_max(2.0, 2.0, 0.5) - (2.0 + 0.5 / sqrt(M_PI))) < 1e-12);
    assert_true(fabs(hr_split_model_max(2.0, 3.0, 0.1) - hr_split_model_max(3.0, 2.0, 0.1)) < 1e-15);
    assert_true(fabs(hr_split_model_max(1.0, 3.0, 0.1) - 3.0) < 1e-12); /* far apart: the larger */
    double prev = 3.0;
    for (double sg = 0.05; sg < 2.0; sg *= 1.5) { /* grows with the jitter, stays above max */
        const double t = hr_split_model_max(2.5, 3.0, sg);
        assert_true(t > prev);
        prev = t;
    }
    /* in the model: only when both parts run; the exchange on top */
    hr_split_model m = {
        .t_a = 10.0, .t_b = 10.0, .x_latency = 0.01, .messages = 2, .rows = 100, .x_sigma = 0.1};
    const double a = hr_split_model_part_a(&m, 50), b = 0.5 * m.t_b;
    assert_true(fabs(hr_split_model_time(&m, 50) - (hr_split_model_max(a, b, 0.1) + 0.02)) < 1e-12);
    assert_true(hr_split_model_time(&m, 100) == 10.0);
}

/* Knots from a ladder: A's part at a rung (less X0) is capped by every larger rung's part, and
 * a rung is a knot only where that part is clearly later than B's. The ladder is one recorded on
 * the H100 machine at n = 16384 (us per sweep), whose rung at 724 rows ran slower than the one at 1024. */
static void knots_from_ladder(void **state)
{
    (void)state;
    hr_split_model m = {.t_b = 716e-6, .rows = 16384, .a_ws_per_row = 131072, .b_floor = 4e-6};
    const int rows[] = {256, 362, 512, 724, 1024, 1448, 2048, 2896, 4096, 16384};
    const double us[] = {763.8, 701.2, 694.9, 823.6, 729.6, 1059.9, 2014.0, 4660.6, 7132.2, 33343.4};
    double s[10];
    for (int k = 0; k < 10; k++)
        s[k] = us[k] * 1e-6;
    const double x0 = 0.5e-6;
    int knot_rows[10];
    const int fastest = hr_split_model_set_knots(&m, rows, s, 10, x0, knot_rows);
    /* 724 rows is capped at 1024's part (729.1 us), which is not 1.1 x B's part there: no knot */
    const int want[] = {1448, 2048, 2896, 4096, 16384};
    assert_int_equal(m.a_knots, 5);
    for (int k = 0; k < 5; k++) {
        assert_int_equal(knot_rows[k], want[k]);
        assert_true(fabs(m.a_knot_ws[k] - want[k] * m.a_ws_per_row) < 1e-6);
    }
    assert_int_equal(fastest, 0); /* 1448 rows: 0.732 us a row */
    assert_true(fabs(m.a_knot_row_s[0] * 1448 - (s[5] - x0)) < 1e-12);
    assert_true(fabs(m.a_knot_row_s[4] * 16384 - s[9]) < 1e-12); /* A alone: no X0 */
    /* so 983 rows are predicted from the line to 1448 rows, not from the slow rung */
    assert_true(hr_split_model_part_a(&m, 983) < 730e-6);
    /* a rung slower than a larger rung where both are knots: capped to the larger one's part */
    const double us2[] = {763.8, 701.2, 694.9, 823.6, 729.6, 2100.0, 2014.0, 4660.6, 7132.2, 33343.4};
    for (int k = 0; k < 10; k++)
        s[k] = us2[k] * 1e-6;
    hr_split_model_set_knots(&m, rows, s, 10, x0, knot_rows);
    assert_int_equal(knot_rows[0], 1448);
    assert_true(fabs(m.a_knot_row_s[0] * 1448 - (s[6] - x0)) < 1e-12);
    /* the parts at the knots never fall with the rows */
    for (int k = 1; k < m.a_knots; k++)
        assert_true(m.a_knot_row_s[k] * knot_rows[k] >= m.a_knot_row_s[k - 1] * knot_rows[k - 1] * (1 - 1e-12));
}

/* The calibration with two CPU placements (no GPU): the ladder of real splits, the knots
 * it gives, X0, and the measured candidates auto chooses from. */
static void calibration_cpu_cpu(void **state)
{
    (void)state;
    hr_options o;
    hr_options_default(&o);
    o.backend = HR_BACKEND_HYBRID;
    o.dim = 2;
    o.nx = 64;
    o.ny = 600;
    o.precision = HR_PREC_DOUBLE;
    o.split_second = HR_SPLIT_CPU;
    o.threads = 2;
    hr_hybrid_calibration c;
    hr_split_model m;
    assert_int_equal(hr_hybrid_calibrate(&o, 0, &c, &m), HR_OK);
    assert_int_equal(m.rows, 600);
    /* the ladder: n/64 = 9, in steps of sqrt 2 up to n - 1, then n (the CPU alone) */
    const int want[] = {9, 13, 18, 25, 36, 51, 72, 102, 144, 204, 288, 407, 576, 600};
    assert_int_equal(c.ladder, 14);
    for (int k = 0; k < c.ladder; k++) {
        assert_int_equal(c.ladder_rows[k], want[k]);
        assert_true(c.ladder_s[k] > 0);
    }
    /* knots: rungs where the CPU part is the later one, always the last (no GPU part) */
    assert_true(c.cpu_knots >= 1 && c.cpu_knots <= HR_SPLIT_KNOTS && m.a_knots == c.cpu_knots);
    assert_int_equal(c.cpu_knot_rows[c.cpu_knots - 1], 600);
    assert_true(fabs(m.a_knot_row_s[c.cpu_knots - 1] * 600 - c.ladder_s[c.ladder - 1]) <
                1e-9 * c.ladder_s[c.ladder - 1]);
    for (int k = 0; k < c.cpu_knots; k++) {
        assert_true(m.a_knot_row_s[k] > 0);
        assert_true(fabs(m.a_knot_ws[k] - c.cpu_knot_rows[k] * m.a_ws_per_row) < 1e-6 * m.a_knot_ws[k]);
        if (k) assert_true(c.cpu_knot_rows[k] > c.cpu_knot_rows[k - 1]);
        assert_true(c.t_cpu <= 600 * m.a_knot_row_s[k] * (1 + 1e-12)); /* the fastest rate */
    }
    assert_true(m.a_ws_per_row >= 2 * c.row_bytes && c.llc_bytes > 0);
    assert_true(c.t_gpu > 0 && c.gpu_alone_s > 0 && m.b_alone == c.gpu_alone_s);
    assert_true(c.floor_rows == 16 && c.gpu_floor_s > 0 && m.b_floor == fmin(c.gpu_floor_s, c.t_gpu));
    /* X0: the split at one row less B's part, at most what any rung left above B's part */
    assert_true(c.probe_rows == 1 && c.probe_s > 0);
    const double b1 = hr_split_model_part_b(&m, 1);
    double x0 = c.probe_s > b1 ? c.probe_s - b1 : 0.0;
    for (int k = 0; k + 1 < c.ladder; k++)
        x0 = fmin(x0, fmax(0.0, c.ladder_s[k] - hr_split_model_part_b(&m, c.ladder_rows[k])));
    assert_true(fabs(c.x_off - x0) < 1e-15);
    assert_true(c.x_exposed == c.x_off && fabs(m.x_latency * 2 - c.x_off) < 1e-15);
    for (int k = 0; k < c.cpu_knots - 1; k++) /* a rung is a knot only with the CPU the later part */
        for (int q = 0; q < c.ladder; q++)
            if (c.ladder_rows[q] == c.cpu_knot_rows[k])
                assert_true(c.ladder_s[q] - c.x_off > 1.1 * hr_split_model_part_b(&m, c.cpu_knot_rows[k]));
    for (int k = 1; k < c.cpu_knots; k++) /* capped: A's part does not fall with its rows */
        assert_true(m.a_knot_row_s[k] * c.cpu_knot_rows[k] >=
                    m.a_knot_row_s[k - 1] * c.cpu_knot_rows[k - 1] * (1 - 1e-12));
    assert_true(c.x_sigma == 0 && m.x_sigma == 0);
    /* the measured candidates, and auto's choice among them */
    assert_true(c.candidates >= 1 && c.candidates <= HR_SPLIT_CANDIDATES);
    for (int k = 0; k < c.candidates; k++)
        assert_true(c.cand_rows[k] >= 1 && c.cand_rows[k] <= 599 && c.cand_s[k] > 0);
    hr_hybrid_info in;
    assert_int_equal(hr_hybrid_choose(&o, &c, &m, &in), HR_OK);
    int found = in.rows_cpu == 0;
    for (int k = 0; k < c.candidates; k++) {
        if (in.rows_cpu == c.cand_rows[k]) found = 1;
        /* none chosen: no candidate paid twice */
        if (in.rows_cpu == 0)
            assert_true(c.cand_s[k] >= 0.99 * c.gpu_alone_s || !(c.cand_again_s[k] < 0.99 * c.gpu_alone_s));
    }
    assert_true(found);
    assert_true(in.gpu_only_s == c.gpu_alone_s);
    char text[8192];
    const int len = hr_hybrid_explain(&in, 0.0, text, sizeof text);
    assert_true(len > 0 && (size_t)len < sizeof text);
    assert_non_null(strstr(text, "knots"));
    assert_non_null(strstr(text, "measured candidates"));
}

/* Auto takes the fastest measured candidate only when it beats GPU-only by 1 %. */
static void choose_measured(void **state)
{
    (void)state;
    hr_options o;
    hr_options_default(&o);
    o.backend = HR_BACKEND_HYBRID;
    hr_hybrid_calibration c;
    memset(&c, 0, sizeof c);
    hr_split_model m = {.t_a = 10.0, .t_b = 1.0, .messages = 2, .rows = 100, .b_alone = 1.0};
    c.gpu_alone_s = 1.0;
    c.candidates = 3;
    const int rows[3] = {10, 8, 12};
    const double s[3] = {0.97, 0.95, 1.2};
    for (int k = 0; k < 3; k++) {
        c.cand_rows[k] = rows[k];
        c.cand_s[k] = s[k];
    }
    hr_hybrid_info in;
    assert_int_equal(hr_hybrid_choose(&o, &c, &m, &in), HR_OK);
    assert_int_equal(in.rows_cpu, 8);
    /* measured again: the slower of a candidate's two counts; one not measured again is out */
    c.cand_again_s[1] = 1.05; /* 8 rows paid once, not twice */
    c.cand_again_s[0] = 0.96; /* 10 rows: 0.97 and 0.96 -> 0.97 */
    assert_int_equal(hr_hybrid_choose(&o, &c, &m, &in), HR_OK);
    assert_int_equal(in.rows_cpu, 10);
    c.cand_again_s[0] = 0.995; /* 10 rows: 0.995 does not pay */
    assert_int_equal(hr_hybrid_choose(&o, &c, &m, &in), HR_OK);
    assert_int_equal(in.rows_cpu, 0);
    c.cand_again_s[0] = c.cand_again_s[1] = 0.0;
    c.cand_s[1] = 0.995; /* not 1 % faster than GPU-only: none pays */
    c.cand_s[0] = 0.999;
    assert_int_equal(hr_hybrid_choose(&o, &c, &m, &in), HR_OK);
    assert_int_equal(in.rows_cpu, 0);
    c.candidates = 0; /* no measurements: the model with the CPU part 1.3x slower (its headroom;
                       * here t_a = 10 t_b: 9 rows without it, 7 with it) */
    assert_int_equal(hr_hybrid_choose(&o, &c, &m, &in), HR_OK);
    hr_split_model safe = m;
    safe.t_a *= 1.3;
    assert_int_equal(in.rows_cpu, hr_split_model_best_range(&safe, 1, 99, 0.01, NULL));
    assert_int_equal(in.rows_cpu, 7);
    assert_int_equal(hr_split_model_best_range(&m, 1, 99, 0.01, NULL), 9);
}

static void stream_rule(void **state)
{
    (void)state;
    /* Sourouri et al.'s Stampede node: STREAM 77 GB/s CPU, 151 GB/s K20 -> 33.8 % */
    assert_true(fabs(hr_split_stream_share(77.0, 151.0) - 0.33772) < 1e-4);
    assert_true(isnan(hr_split_stream_share(0.0, 0.0)));
}

/* Sourouri et al.'s per-rank split: the slowest rank's slab, plus the exposed exchange between ranks;
 * each slab cut as the MPI engine cuts it (round(f rows)); t0 measured at fraction 0. */
static void ranks_time(void **state)
{
    (void)state;
    hr_split_model m[2] = {{.t_a = 8.0, .t_b = 1.0, .messages = 2, .rows = 100},
                           {.t_a = 8.0, .t_b = 2.0, .messages = 2, .rows = 101}};
    /* f = 0.1: rank 0 max(0.8, 0.9) = 0.9; rank 1 (10 planes) max(0.792, 1.802) = 1.802 */
    const double t = hr_split_model_ranks_time(m, 2, 0.1, 1, 0.25, 0.0);
    assert_true(fabs(t - (2.0 * 91.0 / 101.0 + 0.25)) < 1e-12);
    /* rank 0 alone: no exchange between ranks beyond x_ranks */
    assert_true(fabs(hr_split_model_ranks_time(m, 1, 0.1, 1, 0.0, 0.0) - 0.9) < 1e-12);
    /* fraction 0: the measured t0, else the slowest B alone plus x_ranks */
    assert_true(hr_split_model_ranks_time(m, 2, 0.0, 1, 0.25, 3.5) == 3.5);
    assert_true(fabs(hr_split_model_ranks_time(m, 2, 0.0, 1, 0.25, 0.0) - 2.25) < 1e-12);
    /* a part below g planes on any rank: undefined (0.004 rounds to 0 planes; 0.015 to 2 of 100
     * and 2 of 101, fine for g = 2, 0.012 to 1 plane: not) */
    assert_true(isnan(hr_split_model_ranks_time(m, 2, 0.004, 1, 0.0, 0.0)));
    assert_false(isnan(hr_split_model_ranks_time(m, 2, 0.015, 2, 0.0, 0.0)));
    assert_true(isnan(hr_split_model_ranks_time(m, 2, 0.012, 2, 0.0, 0.0)));
    assert_true(isnan(hr_split_model_ranks_time(m, 2, 0.996, 1, 0.0, 0.0)));
    assert_true(isnan(hr_split_model_ranks_time(NULL, 2, 0.1, 1, 0.0, 0.0)));
}

/* The ramp the MPI fit puts on A's part: k0 up to r0 rows, k1 from r1 on, log-linear between;
 * applied to the part's time whatever gives it (knots or the whole-grid rate). */
static void ramp_scales_part_a(void **state)
{
    (void)state;
    hr_split_model m = {.t_a = 10.0, .t_b = 1.0, .messages = 2, .rows = 100};
    hr_split_model r = m;
    r.a_ramp = 2;
    r.a_ramp_rows[0] = 10.0;
    r.a_ramp_rows[1] = 40.0;
    r.a_ramp_k[0] = 0.5;
    r.a_ramp_k[1] = 2.0;
    assert_true(fabs(hr_split_model_part_a(&r, 5) - 0.5 * hr_split_model_part_a(&m, 5)) < 1e-12);
    assert_true(fabs(hr_split_model_part_a(&r, 10) - 0.5 * hr_split_model_part_a(&m, 10)) < 1e-12);
    assert_true(fabs(hr_split_model_part_a(&r, 20) - 1.25 * hr_split_model_part_a(&m, 20)) < 1e-12);
    assert_true(fabs(hr_split_model_part_a(&r, 40) - 2.0 * hr_split_model_part_a(&m, 40)) < 1e-12);
    assert_true(fabs(hr_split_model_part_a(&r, 100) - 2.0 * 10.0) < 1e-12);
    assert_true(fabs(hr_split_model_time(&r, 100) - 20.0) < 1e-12);
    /* the same with knots */
    m.a_knots = 2;
    m.a_ws_per_row = 1.0;
    m.a_knot_ws[0] = 10.0, m.a_knot_row_s[0] = 0.2;
    m.a_knot_ws[1] = 100.0, m.a_knot_row_s[1] = 0.1;
    r = m;
    r.a_ramp = 3;
    r.a_ramp_rows[0] = 10.0, r.a_ramp_rows[1] = 40.0, r.a_ramp_k[0] = 0.5, r.a_ramp_k[1] = 2.0;
    r.a_ramp_rows[2] = 80.0, r.a_ramp_k[2] = 1.0;
    assert_true(fabs(hr_split_model_part_a(&r, 8) - 0.5 * 8 * 0.2) < 1e-12);
    assert_true(fabs(hr_split_model_part_a(&r, 20) - 1.25 * hr_split_model_part_a(&m, 20)) < 1e-12);
    assert_true(fabs(hr_split_model_part_a(&r, 40) - 2.0 * hr_split_model_part_a(&m, 40)) < 1e-12);
    assert_true(fabs(hr_split_model_part_a(&r, 56) - (2.0 - log(56.0 / 40.0) / log(2.0)) * hr_split_model_part_a(&m, 56)) <
                1e-12);
    assert_true(fabs(hr_split_model_part_a(&r, 90) - hr_split_model_part_a(&m, 90)) < 1e-12);
    /* no ramp */
    r.a_ramp = 0;
    assert_true(hr_split_model_part_a(&r, 20) == hr_split_model_part_a(&m, 20));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(optimum_without_exchange),
        cmocka_unit_test(exchange_decides),
        cmocka_unit_test(stream_rule),
        cmocka_unit_test(cpu_knots),
        cmocka_unit_test(knots_from_ladder),
        cmocka_unit_test(jitter_max),
        cmocka_unit_test(calibration_cpu_cpu),
        cmocka_unit_test(choose_measured),
        cmocka_unit_test(ranks_time),
        cmocka_unit_test(ramp_scales_part_a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
