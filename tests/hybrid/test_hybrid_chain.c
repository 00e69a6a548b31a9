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

static void base_options(hr_options *o, int dim, hr_precision prec)
{
    hr_options_default(o);
    o->dim = dim;
    o->nx = dim == 3 ? 9 : 23;
    o->ny = dim == 3 ? 7 : 19; /* 19 rows, 13 planes: uneven for 2, 3 and 4 parts */
    o->nz = dim == 3 ? 13 : 0;
    o->iters = 11;
    o->precision = prec;
    o->threads = 2;
    o->init = HR_INIT_SINE;
}

static void *solve(const hr_options *o, hr_result *res, hr_config *cfg)
{
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    if (st != HR_OK) fprintf(stderr, "create: %s: %s\n", hr_status_string(st), hr_last_error());
    assert_int_equal(st, HR_OK);
    st = hr_solver_run(s, res);
    if (st != HR_OK) fprintf(stderr, "run: %s\n", hr_solver_last_error(s));
    assert_int_equal(st, HR_OK);
    if (cfg) assert_int_equal(hr_solver_config(s, cfg), HR_OK);
    const size_t n = (size_t)res->nx * res->ny * res->nz, es = o->precision == HR_PREC_DOUBLE ? 8 : 4;
    void *u = malloc(n * es);
    assert_non_null(u);
    assert_int_equal(hr_solver_solution(s, o->precision, u, n), HR_OK);
    hr_solver_free(s);
    return u;
}

static void check_chain(const hr_options *ref, const hr_options *o, const char *what)
{
    hr_result r0, r1;
    void *a = solve(ref, &r0, NULL), *b = solve(o, &r1, NULL);
    const size_t bytes = (size_t)r0.nx * r0.ny * r0.nz * (ref->precision == HR_PREC_DOUBLE ? 8 : 4);
    if (memcmp(a, b, bytes) != 0) fail_msg("%s: not bitwise equal to cpu-seq", what);
    assert_int_equal(r1.iterations, r0.iterations);
    free(a);
    free(b);
}

static void every_chain(int dim, hr_precision prec, hr_rhs rhs, double omega)
{
    hr_options ref, o;
    base_options(&ref, dim, prec);
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
                check_chain(&ref, &o, what);
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
        void *a = solve(&ref, &r0, NULL), *b = solve(&o, &r1, &cfg);
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
