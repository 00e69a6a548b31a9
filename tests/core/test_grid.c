/* The padded layout in 2-D and 3-D: alignment of every interior row, pitch, plane stride,
 * bounds, initialisation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "core/grid.h"

static hr_status alloc(hr_grid *g, int dim, int nx, int ny, int nz, size_t es)
{
    hr_grid_layout l;
    if (!hr_layout_init(&l, dim, nx, ny, nz, es)) return HR_ERR_NO_MEMORY;
    return hri_grid_alloc(g, &l);
}

static void layout_alignment(void **state)
{
    (void)state;
    const int sizes[] = {1, 2, 3, 30, 31, 32, 33, 127, 1000, 1023, 4097};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (size_t es = 4; es <= 8; es += 4) {
            hr_grid g;
            const int n = sizes[k], ny = n % 7 + 1; /* rectangular too */
            assert_int_equal(alloc(&g, 2, n, ny, 0, es), HR_OK);
            assert_true(g.l.pitch >= (size_t)n + 2);
            assert_int_equal((g.l.pitch * es) % HR_GRID_ALIGN, 0);
            assert_int_equal((uintptr_t)g.base % HR_GRID_ALIGN, 0);
            for (int i = 0; i <= ny + 1; i++) {
                uintptr_t first = (uintptr_t)g.base + hr_layout_index(&g.l, (size_t)i, 1, 0) * es;
                assert_int_equal(first % HR_GRID_ALIGN, 0);
            }
            /* the last element lies inside the allocation */
            assert_true(hr_layout_index(&g.l, (size_t)ny + 1, (size_t)n + 1, 0) < g.l.count);
            hri_grid_free(&g);
        }
}

static void layout_3d(void **state)
{
    (void)state;
    const int ext[][3] = {{1, 1, 1}, {2, 3, 4}, {17, 9, 33}, {1, 64, 5}, {33, 1, 2}};
    for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
        for (size_t es = 4; es <= 8; es += 4) {
            hr_grid g;
            const int nx = ext[e][0], ny = ext[e][1], nz = ext[e][2];
            assert_int_equal(alloc(&g, 3, nx, ny, nz, es), HR_OK);
            assert_int_equal(g.l.plane, g.l.pitch * (size_t)(ny + 2));
            assert_int_equal(hr_layout_outer(&g.l), nz + 2);
            for (int k = 0; k <= nz + 1; k++)
                for (int i = 0; i <= ny + 1; i++)
                    assert_int_equal(
                        ((uintptr_t)g.base + hr_layout_index(&g.l, (size_t)i, 1, (size_t)k) * es) %
                            HR_GRID_ALIGN,
                        0);
            assert_true(hr_layout_index(&g.l, (size_t)ny + 1, (size_t)nx + 1, (size_t)nz + 1) < g.l.count);
            /* the ring of every plane, and the whole first and last planes, hold the boundary */
            hri_grid_init_rows(&g, 0, nz + 2, 2.5);
            for (int k = 0; k <= nz + 1; k++)
                for (int i = 0; i <= ny + 1; i++)
                    for (int j = 0; j <= nx + 1; j++) {
                        int edge = k == 0 || k == nz + 1 || i == 0 || i == ny + 1 || j == 0 || j == nx + 1;
                        assert_true(hri_grid_get3(&g, i, j, k) == (edge ? 2.5 : 0.0));
                    }
            hri_grid_free(&g);
        }
}

static void init_rows_sets_boundary(void **state)
{
    (void)state;
    hr_grid g;
    assert_int_equal(alloc(&g, 2, 5, 5, 0, 8), HR_OK);
    hri_grid_init_rows(&g, 0, 7, 2.5);
    for (int i = 0; i <= 6; i++)
        for (int j = 0; j <= 6; j++) {
            int edge = i == 0 || j == 0 || i == 6 || j == 6;
            assert_true(hri_grid_get(&g, i, j) == (edge ? 2.5 : 0.0));
        }
    hri_grid_free(&g);
    hri_grid_free(NULL);
}

static void rejects_bad_size(void **state)
{
    (void)state;
    hr_grid g;
    assert_int_equal(alloc(&g, 2, 0, 4, 0, 4), HR_ERR_INVALID_ARG);
    hr_grid_layout l;
    /* (2e9)^2 doubles do not fit in size_t: the layout says so instead of wrapping */
    assert_int_equal(hr_layout_init(&l, 2, 2000000000, 2000000000, 0, 8), 0);
    assert_int_equal(hr_layout_init(&l, 3, 2000000, 2000000, 2000000, 8), 0);
    assert_int_equal(hr_layout_init(&l, 2, 1000000, 1000000, 0, 8), 1);
    assert_true(l.count >= (size_t)1000002 * 1000002);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layout_alignment),
        cmocka_unit_test(layout_3d),
        cmocka_unit_test(init_rows_sets_boundary),
        cmocka_unit_test(rejects_bad_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
