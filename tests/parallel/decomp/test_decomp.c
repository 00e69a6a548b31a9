/* The decomposition and the in-process decomposed solve: geometry, faces, bad input, and
 * solutions bitwise equal to cpu-seq for every split, ghost width, omega and rhs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parallel/decomp/dsolver.h"

static void test_split_uneven(void **state)
{
    (void)state;
    hr_decomp d;
    const int n[3] = {10, 7, 1}, parts[3] = {3, 2, 1};
    assert_int_equal(hri_decomp_init(&d, 2, n, parts, 1, NULL, 0), HR_OK);
    assert_int_equal(d.count, 6);
    /* x: 10 = 4 + 3 + 3, y: 7 = 4 + 3 */
    const int ox[3] = {0, 4, 7}, nx[3] = {4, 3, 3}, oy[2] = {0, 4}, ny[2] = {4, 3};
    int covered = 0;
    for (int id = 0; id < d.count; id++) {
        hr_subdomain s;
        assert_true(hri_subdomain_init(&d, id, 4, &s));
        assert_int_equal(s.off[0], ox[s.coord[0]]);
        assert_int_equal(s.n[0], nx[s.coord[0]]);
        assert_int_equal(s.off[1], oy[s.coord[1]]);
        assert_int_equal(s.n[1], ny[s.coord[1]]);
        covered += s.n[0] * s.n[1];
        /* neighbours are mutual and faces on the boundary are Dirichlet */
        for (int a = 0; a < 2; a++)
            for (int side = 0; side < 2; side++) {
                const int nb = s.nb[a][side];
                const unsigned bit = (side ? 2u : 1u) << (2 * a);
                if (nb < 0) {
                    assert_true(s.dirichlet & bit);
                    assert_int_equal(s.pad_lo[a] * (1 - side) + s.pad_hi[a] * side, 1);
                    continue;
                }
                assert_false(s.dirichlet & bit);
                hr_subdomain o;
                hri_subdomain_init(&d, nb, 4, &o);
                assert_int_equal(o.nb[a][1 - side], id);
            }
        /* the own points start at the pad and layout extents include the ghost layers */
        assert_int_equal(s.l.nx, s.n[0] + s.pad_lo[0] + s.pad_hi[0] - 2);
        assert_int_equal(s.own.lo[0], s.pad_lo[0]);
    }
    assert_int_equal(covered, 70);
}

static void test_bad_input(void **state)
{
    (void)state;
    hr_decomp d;
    char why[128];
    const int n[3] = {5, 8, 4};
    const int too_many[3] = {6, 1, 1}, ok[3] = {2, 2, 2};
    assert_int_equal(hri_decomp_init(&d, 2, n, too_many, 1, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "decomp"));
    /* ghost 3 > smallest extent 5 / 2 = 2 along x */
    assert_int_equal(hri_decomp_init(&d, 3, n, ok, 3, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "ghost"));
    assert_int_equal(hri_decomp_init(&d, 3, n, ok, 2, why, sizeof why), HR_OK);
    assert_int_equal(hri_decomp_init(&d, 3, n, ok, 0, why, sizeof why), HR_ERR_INVALID_ARG);
}

static void test_default_parts(void **state)
{
    (void)state;
    int p[3];
    hri_decomp_default_parts(2, 4, p);
    assert_true(p[0] == 2 && p[1] == 2 && p[2] == 1);
    hri_decomp_default_parts(2, 6, p);
    assert_true(p[0] == 2 && p[1] == 3);
    hri_decomp_default_parts(3, 12, p);
    assert_true(p[0] == 2 && p[1] == 2 && p[2] == 3);
    hri_decomp_default_parts(3, 7, p);
    assert_true(p[0] == 1 && p[1] == 1 && p[2] == 7);
}

/* A face packed from one grid and unpacked into another lands where the neighbour's
 * ghost layers are: values are the global linear index of each point. */
static void test_faces(void **state)
{
    (void)state;
    hr_decomp d;
    const int n[3] = {9, 7, 6}, parts[3] = {2, 2, 2};
    assert_int_equal(hri_decomp_init(&d, 3, n, parts, 2, NULL, 0), HR_OK);
    hr_subdomain s[8];
    hr_grid g[8];
    for (int id = 0; id < 8; id++) {
        hri_subdomain_init(&d, id, 8, &s[id]);
        assert_int_equal(hri_grid_alloc(&g[id], &s[id].l), HR_OK);
        hri_grid_init_rows(&g[id], 0, hr_layout_outer(&s[id].l), -1.0);
        for (int k = s[id].own.lo[2]; k < s[id].own.hi[2]; k++)
            for (int i = s[id].own.lo[1]; i < s[id].own.hi[1]; i++)
                for (int j = s[id].own.lo[0]; j < s[id].own.hi[0]; j++)
                    hri_grid_set3(
                        &g[id], i, j, k,
                        (hr_subdomain_global(&s[id], 2, k) * 100 + hr_subdomain_global(&s[id], 1, i)) * 100 +
                            hr_subdomain_global(&s[id], 0, j));
    }
    double buf[4096];
    for (int a = 0; a < 3; a++)
        for (int id = 0; id < 8; id++)
            for (int side = 0; side < 2; side++) {
                const int nb = s[id].nb[a][side];
                if (nb < 0) continue;
                hr_box sb = hri_subdomain_face(&s[id], 2, a, side, 0, 1);
                hr_box rb = hri_subdomain_face(&s[nb], 2, a, 1 - side, 1, 1);
                assert_int_equal(hr_box_points(&sb), hr_box_points(&rb));
                assert_true(hr_box_points(&sb) <= 4096);
                hri_pack_box(&s[id].l, hr_grid_origin(&g[id]), &sb, buf);
                hri_unpack_box(&s[nb].l, hr_grid_origin(&g[nb]), &rb, buf);
            }
    /* after the three phases every point of every local array that is a global interior
     * point holds its global index: ghost zones, edges and corners included */
    for (int id = 0; id < 8; id++) {
        for (int k = 0; k < hr_subdomain_span(&s[id], 2); k++)
            for (int i = 0; i < hr_subdomain_span(&s[id], 1); i++)
                for (int j = 0; j < hr_subdomain_span(&s[id], 0); j++) {
                    const int G[3] = {hr_subdomain_global(&s[id], 0, j), hr_subdomain_global(&s[id], 1, i),
                                      hr_subdomain_global(&s[id], 2, k)};
                    const int in = G[0] >= 1 && G[0] <= 9 && G[1] >= 1 && G[1] <= 7 && G[2] >= 1 && G[2] <= 6;
                    const double want = in ? (G[2] * 100 + G[1]) * 100 + G[0] : -1.0;
                    assert_true(hri_grid_get3(&g[id], i, j, k) == want);
                }
        hri_grid_free(&g[id]);
    }
}

typedef struct solve_case {
    int dim, nx, ny, nz;
    int parts[3];
    int ghost;
    double omega;
    hr_rhs rhs;
    hr_init init;
    hr_precision prec;
    long iters;
} solve_case;

static void check_case(const solve_case *c)
{
    hr_options o;
    hr_options_default(&o);
    o.dim = c->dim;
    o.nx = c->nx;
    o.ny = c->ny;
    o.nz = c->dim == 3 ? c->nz : 0;
    o.iters = c->iters;
    o.omega = c->omega;
    o.rhs = c->rhs;
    o.init = c->init;
    o.precision = c->prec;
    o.boundary = 0.5;
    o.backend = HR_BACKEND_CPU_SEQ;
    /* residual checks split the run into uneven pieces (rounds shorter than the ghost) */
    o.tol = 1e-30;
    o.check_every = 5;
    const size_t pts = (size_t)c->nx * c->ny * (c->dim == 3 ? c->nz : 1);
    double *vals = NULL;
    if (c->rhs == HR_RHS_ARRAY) {
        vals = malloc(pts * sizeof *vals);
        for (size_t x = 0; x < pts; x++)
            vals[x] = sin(0.37 * (double)x) + 0.1;
        o.rhs_values = vals;
    }
    hr_solver *ref;
    assert_int_equal(hr_solver_create(&o, &ref), HR_OK);
    hr_result rr, dr;
    assert_int_equal(hr_solver_run(ref, &rr), HR_OK);
    double *want = malloc(pts * sizeof *want), *got = malloc(pts * sizeof *got);
    assert_int_equal(hr_solver_solution(ref, HR_PREC_DOUBLE, want, pts), HR_OK);

    /* one thread (cpu-seq), then a team of 3 splitting every box (cpu-threads), then the
     * GPU placement's schedule with the host operations (run 4) */
    for (int run = 0; run < 5; run++) {
        const int overlap = run == 4 ? 1 : run & 1, threads = run < 2 || run == 4 ? 1 : 3;
        hr_dsolver *ds;
        char err[256];
        o.backend = threads > 1 ? HR_BACKEND_CPU_THREADS : HR_BACKEND_CPU_SEQ;
        o.threads = threads;
        assert_int_equal(hri_inproc_solver_create(&o, c->parts, c->ghost, &ds, err, sizeof err), HR_OK);
        assert_true(threads == 1 ? ds->team == NULL : ds->team != NULL);
        ds->overlap = overlap;
        if (run == 4) ds->fops = &hri_field_ops_host_queued;
        assert_int_equal(hri_dsolver_run(ds, &dr), HR_OK);
        for (size_t x = 0; x < pts; x++)
            got[x] = NAN;
        hri_dsolver_own_to_global(ds, HR_PREC_DOUBLE, got);
        if (memcmp(want, got, pts * sizeof *got) != 0) {
            size_t x = 0;
            while (x < pts && memcmp(&want[x], &got[x], sizeof *got) == 0)
                x++;
            fail_msg("%d-D %dx%dx%d parts %dx%dx%d ghost %d omega %g overlap %d threads %d run %d: first "
                     "difference at %zu: %.17g vs %.17g",
                     c->dim, c->nx, c->ny, c->nz, c->parts[0], c->parts[1], c->parts[2], c->ghost, c->omega,
                     overlap, threads, run, x, want[x], got[x]);
        }
        assert_int_equal(dr.iterations, rr.iterations);
        /* the residual is summed in another order: equal to rounding */
        assert_true(fabs(dr.relative_residual - rr.relative_residual) <=
                    1e-12 * fabs(rr.relative_residual) + 1e-300);
        /* every exchange outside the overlapped sweeps is counted in the exchange phase */
        assert_true(dr.time_exchange_s >= 0.0 && dr.time_exchange_s <= dr.time_s);
        hri_dsolver_free(ds);
    }
    hr_solver_free(ref);
    free(want);
    free(got);
    free(vals);
}

static void test_bitwise_2d(void **state)
{
    (void)state;
    const solve_case cases[] = {
        {2, 17, 13, 0, {1, 3, 1}, 1, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_SINGLE, 23},
        {2, 17, 13, 0, {2, 2, 1}, 1, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_DOUBLE, 23},
        {2, 17, 13, 0, {4, 1, 1}, 2, 0.8, HR_RHS_SPIKE, HR_INIT_SINE, HR_PREC_SINGLE, 23},
        {2, 17, 13, 0, {3, 2, 1}, 3, 1.0, HR_RHS_MANUFACTURED, HR_INIT_ZERO, HR_PREC_DOUBLE, 23},
        {2, 31, 9, 0, {5, 2, 1}, 2, 1.3, HR_RHS_ARRAY, HR_INIT_SINE, HR_PREC_SINGLE, 17},
        {2, 16, 16, 0, {2, 4, 1}, 3, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_SINGLE, 40},
        {2, 12, 11, 0, {1, 1, 1}, 2, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_SINGLE, 9},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        check_case(&cases[c]);
}

static void test_bitwise_3d(void **state)
{
    (void)state;
    const solve_case cases[] = {
        {3, 9, 8, 11, {1, 1, 3}, 1, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_SINGLE, 13},
        {3, 9, 8, 11, {1, 2, 2}, 2, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_DOUBLE, 13},
        {3, 9, 8, 11, {2, 2, 2}, 2, 0.7, HR_RHS_MANUFACTURED, HR_INIT_SINE, HR_PREC_SINGLE, 13},
        {3, 9, 8, 11, {3, 1, 2}, 3, 1.0, HR_RHS_ARRAY, HR_INIT_ZERO, HR_PREC_DOUBLE, 14},
        {3, 7, 10, 9, {2, 3, 1}, 1, 1.2, HR_RHS_ZERO, HR_INIT_SINE, HR_PREC_SINGLE, 11},
        {3, 12, 12, 12, {2, 2, 4}, 3, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_SINGLE, 20},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        check_case(&cases[c]);
}

/* Ghost-zone sweeps must see the spike of a neighbour: put the spike on a subdomain edge. */
static void test_spike_on_edge(void **state)
{
    (void)state;
    /* n = 9: spike at 5; parts 2 along x: own [1,5] and [6,9] -> spike is the last own
     * column of part 0 and in part 1's ghost zone */
    const solve_case c2 = {2, 9, 9, 0, {2, 2, 1}, 3, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_DOUBLE, 12};
    check_case(&c2);
    const solve_case c3 = {3, 9, 9, 9, {2, 2, 2}, 2, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_DOUBLE, 12};
    check_case(&c3);
}

static void test_create_errors(void **state)
{
    (void)state;
    hr_options o;
    hr_options_default(&o);
    o.n = 8;
    hr_dsolver *ds;
    char err[256];
    const int too_many[3] = {9, 1, 1}, fine[3] = {2, 2, 1};
    assert_int_equal(hri_inproc_solver_create(&o, too_many, 1, &ds, err, sizeof err), HR_ERR_INVALID_ARG);
    assert_null(ds);
    assert_non_null(strstr(err, "decomp"));
    assert_int_equal(hri_inproc_solver_create(&o, fine, 5, &ds, err, sizeof err), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(err, "ghost"));
    o.iters = -1;
    assert_int_equal(hri_inproc_solver_create(&o, fine, 1, &ds, err, sizeof err), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(err, "iters"));
    /* red-black is refused, not run as Jacobi */
    o.iters = 10;
    o.method = HR_METHOD_REDBLACK;
    assert_int_equal(hri_inproc_solver_create(&o, fine, 1, &ds, err, sizeof err), HR_ERR_UNSUPPORTED);
    assert_non_null(strstr(err, "method"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_uneven),  cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_default_parts), cmocka_unit_test(test_faces),
        cmocka_unit_test(test_bitwise_2d),    cmocka_unit_test(test_bitwise_3d),
        cmocka_unit_test(test_spike_on_edge), cmocka_unit_test(test_create_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
