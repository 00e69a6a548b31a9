/* The CPU+GPU split model (include/hetrelax/hybrid.h) against its closed forms. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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

static void stream_rule(void **state)
{
    (void)state;
    /* seed 003's Stampede node: STREAM 77 GB/s CPU, 151 GB/s K20 -> 33.8 % */
    assert_true(fabs(hr_split_stream_share(77.0, 151.0) - 0.33772) < 1e-4);
    assert_true(isnan(hr_split_stream_share(0.0, 0.0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(optimum_without_exchange),
        cmocka_unit_test(exchange_decides),
        cmocka_unit_test(stream_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
