/* The grid transfers against their stencils, on tiny grids: full-weighting restriction
 * (by hand and against the stencil sum on random data) and (bi/tri)linear prolongation;
 * the red-black smoother against a hand-written Gauss-Seidel loop. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "methods/redblack/cpu/redblack_cpu.h"
#include "core/registry.h"
#include "methods/mg/mg_internal.h"

typedef struct tiny {
    mg_hier H;
    mg_tls tls;
    mg_worker w;
} tiny;

/* Two levels: n fine points per axis (n = 7: coarse 3), fp64. */
static tiny *make(int dim, int n)
{
    tiny *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->H.smoother = hri_entry_by_id(HR_KIND_SMOOTHER, HR_MG_SMOOTH_REDBLACK, 0)->smoother;
    assert_int_equal(hri_mg_hier_build(&t->H, dim, n, n, dim == 3 ? n : 1, 2, 8, 1), HR_OK);
    t->w = (mg_worker){NULL, 0, 1, &t->tls};
    hri_mg_hier_init(&t->H, &t->w, 0.0);
    return t;
}

static void destroy(tiny *t)
{
    hri_mg_hier_free(&t->H);
    free(t);
}

static int kz(int dim, int k)
{
    return dim == 3 ? k : 0;
}

static double w1(int a)
{
    return a == 0 ? 2.0 : 1.0;
}

static void test_restrict_by_hand_2d(void **state)
{
    (void)state;
    tiny *t = make(2, 7);
    mg_level *F = &t->H.lev[0], *C = &t->H.lev[1];
    /* a unit residual at a fine point that coincides with coarse (1, 1): 4 * 4/16 = 1 */
    hri_grid_set(&F->r, 2, 2, 1.0);
    hri_mg_restrict(F, C, 1, C->slices + 1);
    for (int I = 1; I <= 3; I++)
        for (int J = 1; J <= 3; J++)
            assert_true(hri_grid_get(&C->hf, I, J) == (I == 1 && J == 1 ? 1.0 : 0.0));
    /* at (3, 3), between four coarse points: 4 * 1/16 = 0.25 to each */
    hri_grid_set(&F->r, 2, 2, 0.0);
    hri_grid_set(&F->r, 3, 3, 1.0);
    hri_mg_restrict(F, C, 1, C->slices + 1);
    for (int I = 1; I <= 3; I++)
        for (int J = 1; J <= 3; J++)
            assert_true(hri_grid_get(&C->hf, I, J) == (I <= 2 && J <= 2 ? 0.25 : 0.0));
    /* at (2, 3), on a coarse row between two coarse columns: 4 * 2/16 = 0.5 to each */
    hri_grid_set(&F->r, 3, 3, 0.0);
    hri_grid_set(&F->r, 2, 3, 1.0);
    hri_mg_restrict(F, C, 1, C->slices + 1);
    for (int I = 1; I <= 3; I++)
        for (int J = 1; J <= 3; J++)
            assert_true(hri_grid_get(&C->hf, I, J) == (I == 1 && J <= 2 ? 0.5 : 0.0));
    destroy(t);
}

/* Random fine residual: every coarse value is 4 x the full-weighting stencil sum. */
static void test_restrict_stencil(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++) {
        const int n = 7;
        tiny *t = make(dim, n);
        mg_level *F = &t->H.lev[0], *C = &t->H.lev[1];
        uint64_t s = 99;
        for (int k = 1; k <= (dim == 3 ? n : 1); k++)
            for (int i = 1; i <= n; i++)
                for (int j = 1; j <= n; j++) {
                    s = s * 6364136223846793005ull + 1442695040888963407ull;
                    hri_grid_set3(&F->r, i, j, kz(dim, k), (double)(s >> 11) * 0x1.0p-53 - 0.5);
                }
        hri_mg_restrict(F, C, 1, C->slices + 1);
        const double norm = dim == 3 ? 64.0 : 16.0;
        for (int K = 1; K <= (dim == 3 ? 3 : 1); K++)
            for (int I = 1; I <= 3; I++)
                for (int J = 1; J <= 3; J++) {
                    double e = 0.0;
                    for (int c = dim == 3 ? -1 : 0; c <= (dim == 3 ? 1 : 0); c++)
                        for (int a = -1; a <= 1; a++)
                            for (int b = -1; b <= 1; b++)
                                e += (dim == 3 ? w1(c) : 1.0) * w1(a) * w1(b) *
                                     hri_grid_get3(&F->r, 2 * I + a, 2 * J + b, kz(dim, 2 * K + c));
                    e *= 4.0 / norm;
                    assert_true(fabs(hri_grid_get3(&C->hf, I, J, kz(dim, K)) - e) <= 1e-15);
                }
        destroy(t);
    }
}

/* A unit coarse value spreads with weights 1, 1/2, 1/4 (1/8 in 3-D corners); add mode adds. */
static void test_prolong_stencil(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++) {
        tiny *t = make(dim, 7);
        mg_level *F = &t->H.lev[0], *C = &t->H.lev[1];
        hri_grid_set3(&C->u[0], 2, 2, kz(dim, 2), 1.0); /* coarse centre = fine (4, 4, 4) */
        hri_mg_prolong(C, &C->u[0], F, &F->u[0], 0, 1, F->slices + 1);
        for (int k = 1; k <= (dim == 3 ? 7 : 1); k++)
            for (int i = 1; i <= 7; i++)
                for (int j = 1; j <= 7; j++) {
                    const int di = abs(i - 4), dj = abs(j - 4), dk = dim == 3 ? abs(k - 4) : 0;
                    double e = 0.0;
                    if (di <= 1 && dj <= 1 && dk <= 1) e = 1.0 / (double)(1 << (di + dj + dk));
                    assert_true(hri_grid_get3(&F->u[0], i, j, kz(dim, k)) == e);
                }
        hri_mg_prolong(C, &C->u[0], F, &F->u[0], 1, 1, F->slices + 1);
        assert_true(hri_grid_get3(&F->u[0], 4, 4, kz(dim, 4)) == 2.0);
        assert_true(hri_grid_get3(&F->u[0], 3, 4, kz(dim, 4)) == 1.0);
        assert_true(hri_grid_get3(&F->u[0], 1, 1, kz(dim, 1)) == 0.0);
        destroy(t);
    }
}

/* Red-black sweep (red, then black) against plain loops in that order. */
static void test_redblack_reference(void **state)
{
    (void)state;
    const int n = 7;
    tiny *t = make(2, n), *t2 = make(2, n);
    mg_level *F = &t->H.lev[0], *G = &t2->H.lev[0];
    double ref[9][9] = {{0}}, f[9][9] = {{0}};
    uint64_t s = 5;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            f[i][j] = (double)(s >> 11) * 0x1.0p-53;
            hri_grid_set(&F->hf, i, j, f[i][j]);
            hri_grid_set(&G->hf, i, j, f[i][j]);
        }
    for (int c = 0; c < 2; c++) {
        hri_mg_redblack(F, &F->u[0], c, 0, 1, n + 1);
        hri_mg_redblack(G, &G->u[0], c, 1, 1, n + 1);
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++)
                if (((i + j) & 1) == c)
                    ref[i][j] = 0.25 * (((ref[i - 1][j] + ref[i + 1][j]) + (ref[i][j - 1] + ref[i][j + 1])) +
                                        f[i][j]);
    }
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++) {
            assert_true(hri_grid_get(&F->u[0], i, j) == ref[i][j]); /* vectorised path */
            assert_true(hri_grid_get(&G->u[0], i, j) == ref[i][j]); /* strict path */
        }
    destroy(t);
    destroy(t2);
}

/* The multigrid smoother equals the operator layer's red-black kernel (h-redblack, omega 1)
 * bitwise: 2-D and 3-D, an h^2 f grid and the inline spike, both of our paths. */
static void test_redblack_matches_operator_layer(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++)
        for (int spike = 0; spike <= 1; spike++)
            for (int strict = 0; strict <= 1; strict++) {
                const int n = dim == 3 ? 15 : 63;
                tiny *a = make(dim, n), *b = make(dim, n);
                mg_level *A = &a->H.lev[0], *B = &b->H.lev[0];
                uint64_t s = 17;
                for (int k = 1; k <= (dim == 3 ? n : 1); k++)
                    for (int i = 1; i <= n; i++)
                        for (int j = 1; j <= n; j++) {
                            s = s * 6364136223846793005ull + 1442695040888963407ull;
                            const double v = (double)(s >> 11) * 0x1.0p-53, f = v * 0.37 - 0.1;
                            hri_grid_set3(&A->u[0], i, j, kz(dim, k), v);
                            hri_grid_set3(&B->u[0], i, j, kz(dim, k), v);
                            hri_grid_set3(&A->hf, i, j, kz(dim, k), f);
                        }
                hr_rhs_view v = {hr_grid_origin(&A->hf), -1, -1, -1};
                if (spike) v = (hr_rhs_view){NULL, (n + 1) / 2, (n + 1) / 2, dim == 3 ? (n + 1) / 2 : 0};
                A->rhs = v;
                hr_rb_args ra = {&B->l, hr_grid_origin(&B->u[0]), v, 1.0};
                const hr_box box = hr_box_interior(&B->l);
                for (int sweep = 0; sweep < 2; sweep++)
                    for (int c = 0; c < 2; c++) {
                        hri_mg_redblack(A, &A->u[0], c, strict, 1, A->slices + 1);
                        hri_cpu_rb_box(&ra, &box, c);
                    }
                assert_memory_equal(A->u[0].base, B->u[0].base, hr_layout_bytes(&A->l));
                destroy(a);
                destroy(b);
            }
}

/* The residual + restriction fused slice by slice gives the two separate passes' cycle. */
static void test_fused_descend_bitwise(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++) {
        const int n = dim == 3 ? 31 : 127, nlev = dim == 3 ? 5 : 7;
        mg_hier H[2] = {{0}, {0}};
        mg_tls tls[2] = {{{0}, 0}, {{0}, 0}};
        for (int v = 0; v < 2; v++) {
            H[v].smoother = hri_entry_by_id(HR_KIND_SMOOTHER, HR_MG_SMOOTH_REDBLACK, 0)->smoother;
            H[v].pre = H[v].post = 2;
            H[v].separate_passes = v;
            assert_int_equal(hri_mg_hier_build(&H[v], dim, n, n, dim == 3 ? n : 1, nlev, 8, 1), HR_OK);
            mg_worker w = {NULL, 0, 1, &tls[v]};
            hri_mg_hier_init(&H[v], &w, 0.0);
            uint64_t s = 23;
            for (int k = 1; k <= (dim == 3 ? n : 1); k++)
                for (int i = 1; i <= n; i++)
                    for (int j = 1; j <= n; j++) {
                        s = s * 6364136223846793005ull + 1442695040888963407ull;
                        hri_grid_set3(&H[v].lev[0].hf, i, j, kz(dim, k), (double)(s >> 11) * 0x1.0p-53 - 0.5);
                    }
            for (int c = 0; c < 2; c++)
                hri_mg_cycle(&H[v], &w, 0, HR_MG_CYCLE_V, 0);
        }
        assert_memory_equal(H[0].lev[0].u[tls[0].cur[0]].base, H[1].lev[0].u[tls[1].cur[0]].base,
                            hr_layout_bytes(&H[0].lev[0].l));
        /* and the cycles did something */
        assert_true(hri_grid_get3(&H[0].lev[0].u[tls[0].cur[0]], n / 2, n / 2, kz(dim, n / 2)) != 0.0);
        hri_mg_hier_free(&H[0]);
        hri_mg_hier_free(&H[1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restrict_by_hand_2d),
        cmocka_unit_test(test_restrict_stencil),
        cmocka_unit_test(test_prolong_stencil),
        cmocka_unit_test(test_redblack_reference),
        cmocka_unit_test(test_redblack_matches_operator_layer),
        cmocka_unit_test(test_fused_descend_bitwise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
