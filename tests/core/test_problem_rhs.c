/* The random right-hand side of a problem (HR_RHS_RANDOM, hetrelax/problem.h): its values
 * against the documented generator (written out here, and a few values computed apart from
 * it), their range and mean, equal for equal seeds and other for another seed, dependent on
 * (seed, whole-grid index) alone; the whole array (hri_problem_f) against b of the slabs
 * the ranks make on their own (hri_discretize_part: each point from its global index, with
 * any team of threads), a slab far into a grid too large to hold included; the setter and
 * validator taking it, and the model-problem engines' options refusing it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/mg.h"
#include "methods/stencil/stencil_op.h"
#include "runtime/cpu/team.h"

/* The generator as problem.h defines it: m the splitmix64 finaliser, f = (m(q ^ m(seed + G))
 * >> 11) 2^-53. */
static uint64_t fin(uint64_t z)
{
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double documented(uint64_t seed, uint64_t q)
{
    return (double)(fin(q ^ fin(seed + 0x9E3779B97F4A7C15ull)) >> 11) * 0x1.0p-53;
}

static hr_problem random_problem(int dim, int nx, int ny, int nz, unsigned long long seed)
{
    hr_problem p;
    assert_int_equal(hr_problem_init_model(&p, dim, nx, ny, nz), HR_OK);
    assert_int_equal(hr_problem_set_rhs(&p, HR_RHS_RANDOM, NULL), HR_OK);
    p.rhs_seed = seed;
    return p;
}

static double *whole_f(const hr_problem *p)
{
    double *f = malloc(hr_problem_unknowns(p) * sizeof *f);
    assert_non_null(f);
    assert_int_equal(hri_problem_f(p, f), HR_OK);
    return f;
}

/* b of rows [lo, hi) of the last axis as a rank makes it, packed (x fastest); team may be NULL */
static double *slab_b(hr_team *team, const hr_problem *p, int lo, int hi)
{
    const int last = p->dim - 1, whole_n = p->dim == 3 ? p->n[2] : p->n[1];
    int n[3] = {p->n[0], p->n[1], p->dim == 3 ? p->n[2] : 1}, per[3] = {0, 0, 0};
    for (int a = 0; a < p->dim; a++)
        per[a] = p->bc[2 * a].kind == HR_BC_PERIODIC && (a != last || (lo == 0 && hi == whole_n));
    n[last] = hi - lo;
    hr_sgrid g;
    hri_sgrid_init(&g, p->dim, n, per);
    double *padded = hri_sgrid_alloc(&g), *b = malloc(g.count * sizeof *b);
    assert_non_null(padded);
    assert_non_null(b);
    assert_int_equal(hri_discretize_part_on(team, p, lo, hi, NULL, NULL, padded, NULL, NULL), HR_OK);
    hri_sgrid_pack(&g, padded, b);
    free(padded);
    return b;
}

static void api(void **state)
{
    (void)state;
    hr_problem p;
    assert_int_equal(hr_problem_init_model(&p, 3, 7, 5, 3), HR_OK);
    assert_true(p.rhs_seed == 1); /* the default seed */
    const double v[105] = {0};
    assert_int_equal(hr_problem_set_rhs(&p, HR_RHS_RANDOM, v), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "values need HR_RHS_ARRAY"));
    assert_int_equal(hr_problem_set_rhs(&p, HR_RHS_RANDOM, NULL), HR_OK);
    assert_int_equal(p.rhs, HR_RHS_RANDOM);
    assert_true(p.rhs_values == NULL && p.rhs_seed == 1);
    assert_int_equal(hr_problem_validate(&p, NULL, 0), HR_OK);
    p.rhs_seed = 0; /* every seed is a seed */
    assert_int_equal(hr_problem_validate(&p, NULL, 0), HR_OK);
    assert_false(hr_problem_is_model(&p)); /* made per point by the general engine */
    /* the model problem's engines take no random right-hand side: a reason, not "unknown" */
    char why[256];
    hr_options o;
    hr_options_default(&o);
    o.rhs = HR_RHS_RANDOM;
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "rhs: random is for an hr_problem"));
    hr_mg_options m;
    hr_mg_options_default(&m);
    m.rhs = HR_RHS_RANDOM;
    assert_int_equal(hr_mg_options_validate(&m, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "rhs: random is for an hr_problem"));
}

static void values(void **state)
{
    (void)state;
    /* values computed apart from this file's generator (Python integers), as %a */
    const struct {
        unsigned long long seed;
        size_t q;
        double f;
    } known[] = {{1, 0, 0x1.b9c847f90581ap-1},
                 {1, 1, 0x1.714af50153a56p-2},
                 {0, 0, 0x1.2086089bfcf34p-2},
                 {42, 123456789, 0x1.d5aff17459262p-2},
                 {5, 6766, 0x1.a97c0f5b8e85ap-2}};
    for (size_t t = 0; t < sizeof known / sizeof *known; t++)
        assert_true(documented(known[t].seed, known[t].q) == known[t].f);
    const int nx = 41, ny = 29, nz = 23;
    const size_t cnt = (size_t)nx * ny * nz;
    hr_problem p = random_problem(3, nx, ny, nz, 1);
    double *f1 = whole_f(&p), *again = whole_f(&p);
    double lo = 1.0, hi = 0.0, sum = 0.0, sq = 0.0;
    for (size_t q = 0; q < cnt; q++) {
        assert_true(f1[q] == documented(1, q));
        lo = fmin(lo, f1[q]), hi = fmax(hi, f1[q]);
        sum += f1[q], sq += f1[q] * f1[q];
    }
    const double mean = sum / (double)cnt, var = sq / (double)cnt - mean * mean;
    /* 27347 uniform values: the mean's deviation is 0.0017, the variance's about 0.0004 */
    assert_true(lo >= 0.0 && hi < 1.0 && lo < 0.001 && hi > 0.999);
    assert_true(fabs(mean - 0.5) < 0.01);
    assert_true(fabs(var - 1.0 / 12.0) < 0.004);
    assert_memory_equal(f1, again, cnt * sizeof *f1); /* equal seeds, equal values */
    /* another seed: other values almost everywhere */
    p.rhs_seed = 2;
    double *f2 = whole_f(&p);
    size_t same = 0;
    for (size_t q = 0; q < cnt; q++) {
        assert_true(f2[q] == documented(2, q));
        same += f2[q] == f1[q];
    }
    assert_true(same < 4);
    /* (seed, q) alone: a 2-D problem of another shape and the same seed has the same values at
     * the same whole-grid indices */
    hr_problem p2 = random_problem(2, 301, 7, 0, 1);
    double *g = whole_f(&p2);
    assert_memory_equal(g, f1, hr_problem_unknowns(&p2) * sizeof *g);
    free(f1), free(again), free(f2), free(g);
}

/* The slabs a rank makes: b of rows [lo, hi) from each point's global index equals the whole
 * grid's at the same indices, for any cut and team; with Dirichlet 0 faces and one spacing b is
 * f itself there. With Neumann faces, data on the faces and a periodic axis (cut too) b also
 * holds the faces' terms: the slabs are still the whole grid's b, bitwise. */
static void slabs(void **state)
{
    (void)state;
    hr_team *team = NULL;
    assert_int_equal(hri_team_create(3, HR_BIND_NONE, &team), HR_OK);
    for (int dim = 2; dim <= 3; dim++) {
        const int nx = 19, ny = dim == 3 ? 13 : 37, nz = 11, N = dim == 3 ? nz : ny;
        for (int mixed = 0; mixed < 2; mixed++) {
            hr_problem p = random_problem(dim, nx, ny, dim == 3 ? nz : 0, 77);
            if (mixed) {
                assert_int_equal(hr_problem_set_lengths(&p, 1.0, 2.0, 0.5), HR_OK);
                assert_int_equal(hr_problem_set_bc(&p, HR_FACE_X_MINUS, HR_BC_NEUMANN, 0.5, NULL), HR_OK);
                assert_int_equal(hr_problem_set_bc(&p, HR_FACE_X_PLUS, HR_BC_DIRICHLET, 1.0, NULL), HR_OK);
                assert_int_equal(hr_problem_set_bc(&p, 2 * (dim - 1), HR_BC_PERIODIC, 0.0, NULL), HR_OK);
            }
            assert_int_equal(hr_problem_validate(&p, NULL, 0), HR_OK);
            const size_t plane = (size_t)nx * (dim == 3 ? (size_t)ny : 1), cnt = hr_problem_unknowns(&p);
            double *whole = slab_b(NULL, &p, 0, N), *f = whole_f(&p);
            if (!mixed) assert_memory_equal(whole, f, cnt * sizeof *f);
            const int cuts[][2] = {{0, 1}, {0, 4}, {4, 5}, {3, 8}, {5, N}, {N - 1, N}};
            for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
                const int lo = cuts[c][0], hi = cuts[c][1];
                for (int t = 0; t < 2; t++) {
                    double *b = slab_b(t ? team : NULL, &p, lo, hi);
                    assert_memory_equal(b, whole + (size_t)lo * plane, (size_t)(hi - lo) * plane * sizeof *b);
                    free(b);
                }
            }
            free(whole), free(f);
        }
    }
    hri_team_free(team);
}

/* One plane of a 1000 x 1000 x 4296 grid (4.3e9 unknowns, 34 GB as a whole array): the slab
 * alone is made, its whole-grid indices across 2^32, its values the documented ones. */
static void far_slab(void **state)
{
    (void)state;
    const int n = 1000, nz = 4296, k = 4294;
    hr_problem p = random_problem(3, n, n, nz, 0xFFFFFFFFFFFFFFFFull);
    assert_int_equal(hr_problem_set_lengths(&p, 1.0, 1.0, 4.0), HR_OK);
    double *b = slab_b(NULL, &p, k, k + 1);
    const size_t base = (size_t)k * n * n;
    assert_true(base < (1ull << 32) && base + (size_t)n * n > (1ull << 32));
    for (size_t x = 0; x < (size_t)n * n; x++)
        if (b[x] != documented(p.rhs_seed, base + x))
            fail_msg("q = %zu: %a, want %a", base + x, b[x], documented(p.rhs_seed, base + x));
    /* (2^64 - 1, 2^40 + 5), computed apart */
    assert_true(documented(0xFFFFFFFFFFFFFFFFull, (1ull << 40) + 5) == 0x1.a7df348656240p-4);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api),
        cmocka_unit_test(values),
        cmocka_unit_test(slabs),
        cmocka_unit_test(far_slab),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
