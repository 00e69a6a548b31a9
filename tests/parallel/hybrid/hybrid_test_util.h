/* Shared by the hybrid tests: the small uneven grids they run, a solve that returns the
 * solution, and the bitwise comparison against the reference run. Include after cmocka. */
#ifndef HR_HYBRID_TEST_UTIL_H
#define HR_HYBRID_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/hetrelax.h"
#include "tuning_test_util.h"

/* The knobs the test runs with (ctest's variants: HETRELAX_CREW_PIN, _SPLIT_MAPPED, ...). */
static const hr_tuning *test_tuning(void)
{
    return env_tuning();
}

/* 23 x 19 (2-D) or 9 x 7 x 13 (3-D): uneven parts for 2, 3 and 4 slabs. */
static void base_options(hr_options *o, int dim, hr_precision prec)
{
    hr_options_default(o);
    o->tuning = *test_tuning();
    o->dim = dim;
    o->nx = dim == 3 ? 9 : 23;
    o->ny = dim == 3 ? 7 : 19;
    o->nz = dim == 3 ? 13 : 0;
    o->iters = 11;
    o->precision = prec;
    o->threads = 2;
}

/* Runs o and returns the solution (nx*ny*nz values of the run's precision); cfg may be NULL. */
static void *solve_cfg(const hr_options *o, hr_result *res, hr_config *cfg)
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

static void *solve(const hr_options *o, hr_result *res)
{
    return solve_cfg(o, res, NULL);
}

/* o runs the hybrid backend bitwise as ref (cpu-seq) does, in as many sweeps. */
static void check_equal(const hr_options *ref, const hr_options *o, const char *what)
{
    hr_result r0, r1;
    void *a = solve(ref, &r0), *b = solve(o, &r1);
    const size_t bytes = (size_t)r0.nx * r0.ny * r0.nz * (ref->precision == HR_PREC_DOUBLE ? 8 : 4);
    if (memcmp(a, b, bytes) != 0) fail_msg("%s: not bitwise equal to cpu-seq", what);
    assert_int_equal(r1.iterations, r0.iterations);
    assert_string_equal(r1.backend, "hybrid");
    free(a);
    free(b);
}

#endif
