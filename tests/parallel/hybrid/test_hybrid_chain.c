/* The N-part chain (hr_options.gpus, --gpus N) with N CPU placements: bitwise equal to
 * cpu-seq for N = 2..4, 2-D and 3-D, fp32 and fp64, ghost 1 and 2, both schedules,
 * uneven parts; residual stops; bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"
#include "hybrid_test_util.h"

static void every_chain(int dim, hr_precision prec, hr_rhs rhs, double omega)
{
    hr_options ref, o;
    base_options(&ref, dim, prec);
    ref.init = HR_INIT_SINE; /* the chain tests start from the sine mode */
    ref.rhs = rhs;
    ref.omega = omega;
    ref.backend = HR_BACKEND_CPU_SEQ;
    for (int parts = 2; parts <= 4; parts++)
        for (int g = 1; g <= 2; g++)
            for (int sched = 0; sched < 2; sched++) {
                o = ref;
                o.backend = HR_BACKEND_HYBRID;
                o.split_second = HR_SPLIT_CPU;
                o.gpus = parts;
                o.split_ghost = g;
                o.split_schedule = sched;
                char what[128];
                snprintf(what, sizeof what, "%d-D %s %d parts ghost %d %s", dim,
                         prec == HR_PREC_DOUBLE ? "fp64" : "fp32", parts, g, sched ? "naive" : "nested");
                check_equal(&ref, &o, what);
            }
}

static void chain2d_fp32(void **state)
{
    (void)state;
    every_chain(2, HR_PREC_SINGLE, HR_RHS_SPIKE, 1.0);
}

static void chain2d_fp64_rhs_omega(void **state)
{
    (void)state;
    every_chain(2, HR_PREC_DOUBLE, HR_RHS_MANUFACTURED, 0.8);
}

static void chain3d_fp64(void **state)
{
    (void)state;
    every_chain(3, HR_PREC_DOUBLE, HR_RHS_SPIKE, 1.0);
}

static void chain3d_fp32_rhs(void **state)
{
    (void)state;
    every_chain(3, HR_PREC_SINGLE, HR_RHS_MANUFACTURED, 1.0);
}

/* Residual checks stop at the same sweep with the same answer; the config names the parts. */
static void converges_like_seq(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++) {
        hr_options ref, o;
        base_options(&ref, dim, HR_PREC_DOUBLE);
        ref.init = HR_INIT_SINE; /* the chain tests start from the sine mode */
        ref.iters = 5000;
        ref.tol = 1e-3;
        ref.check_every = 7;
        ref.backend = HR_BACKEND_CPU_SEQ;
        o = ref;
        o.backend = HR_BACKEND_HYBRID;
        o.split_second = HR_SPLIT_CPU;
        o.gpus = 3;
        hr_result r0, r1;
        hr_config cfg;
        void *a = solve(&ref, &r0), *b = solve_cfg(&o, &r1, &cfg);
        assert_int_equal(r0.reason, HR_REASON_CONVERGED);
        assert_int_equal(r1.reason, HR_REASON_CONVERGED);
        assert_int_equal(r1.iterations, r0.iterations);
        assert_true(r1.relative_residual == r0.relative_residual);
        assert_memory_equal(a, b, (size_t)r0.nx * r0.ny * r0.nz * 8);
        assert_int_equal(cfg.gpus, 0); /* CPU parts */
        assert_non_null(strstr(cfg.device_name, "3 x "));
        free(a);
        free(b);
    }
}

static void refused(const hr_options *o, const char *expect)
{
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    assert_int_not_equal(st, HR_OK);
    assert_null(s);
    if (!strstr(hr_last_error(), expect)) fail_msg("error '%s' lacks '%s'", hr_last_error(), expect);
}

static void bad_input(void **state)
{
    (void)state;
    hr_options o;
    base_options(&o, 3, HR_PREC_DOUBLE);
    o.init = HR_INIT_SINE; /* the chain tests start from the sine mode */
    o.backend = HR_BACKEND_HYBRID;
    o.split_second = HR_SPLIT_CPU;
    o.gpus = 7;
    o.split_ghost = 2; /* 7 parts of 2 planes > 13 planes */
    refused(&o, "gpus:");
    o.gpus = 17;
    refused(&o, "gpus:");
    o.gpus = -1;
    refused(&o, "gpus:");
    o.gpus = 2;
    o.backend = HR_BACKEND_CPU_THREADS;
    refused(&o, "gpus:");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chain2d_fp32),       cmocka_unit_test(chain2d_fp64_rhs_omega),
        cmocka_unit_test(chain3d_fp64),       cmocka_unit_test(chain3d_fp32_rhs),
        cmocka_unit_test(converges_like_seq), cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
