/* Helpers shared by the multigrid tests (test_mg.c, test_mg_gpu.c): include after cmocka.h
 * and hetrelax/mg.h. */
#ifndef HR_MG_TEST_UTIL_H
#define HR_MG_TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>

/* n values in [-1, 1) from a fixed seed (a linear congruential sequence). */
static inline double *random_values(size_t n, uint64_t seed)
{
    double *f = malloc(n * sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        f[i] = (double)(seed >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    }
    return f;
}

/* Interior points of o's grid (nx/ny/nz where given, else n). */
static inline size_t points(const hr_mg_options *o)
{
    const size_t nx = o->nx ? o->nx : o->n, ny = o->ny ? o->ny : o->n, nz = o->nz ? o->nz : o->n;
    return nx * ny * (o->dim == 3 ? nz : 1);
}

/* The knobs opts() gives (test_mg_gpu.c switches the GPU cycle's paths with them). */
static hr_tuning mg_knobs;

/* The defaults at dim and n, with 2 threads. */
static inline hr_mg_options opts(int dim, int n)
{
    hr_mg_options o;
    hr_mg_options_default(&o);
    o.tuning = mg_knobs;
    o.dim = dim;
    o.n = n;
    o.threads = 2;
    return o;
}

/* Solves; returns the solution (caller frees) and the result. */
static inline double *run(const hr_mg_options *o, hr_mg_result *r)
{
    hr_mg *m = NULL;
    hr_status st = hr_mg_create(o, &m);
    if (st != HR_OK) fail_msg("create: %s (%s)", hr_status_string(st), hr_mg_last_error());
    st = hr_mg_solve(m, r);
    if (st != HR_OK) fail_msg("solve: %s (%s)", hr_status_string(st), hr_mg_last_error());
    const size_t count = points(o);
    double *u = malloc(count * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_mg_solution(m, u, count), HR_OK);
    hr_mg_free(m);
    return u;
}

#endif
