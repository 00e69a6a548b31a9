/* The padded layout: alignment of every interior row, pitch, bounds, initialisation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "problem/grid.h"

static void layout_alignment(void **state)
{
    (void)state;
    const int sizes[] = {1, 2, 3, 30, 31, 32, 33, 127, 1000, 1023, 4097};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (size_t es = 4; es <= 8; es += 4) {
            hr_grid g;
            assert_int_equal(hr_grid_alloc(&g, sizes[k], es == 8 ? HR_PREC_DOUBLE : HR_PREC_SINGLE), HR_OK);
            const int n = sizes[k];
            assert_true(g.l.pitch >= (size_t)n + 2);
            assert_int_equal((g.l.pitch * es) % HR_GRID_ALIGN, 0);
            assert_int_equal((uintptr_t)g.base % HR_GRID_ALIGN, 0);
            for (int i = 0; i <= n + 1; i++) {
                uintptr_t first = (uintptr_t)g.base + hr_layout2d_index(&g.l, (size_t)i, 1) * es;
                assert_int_equal(first % HR_GRID_ALIGN, 0);
            }
            /* the last element lies inside the allocation */
            assert_true(hr_layout2d_index(&g.l, (size_t)n + 1, (size_t)n + 1) < g.l.count);
            hr_grid_free(&g);
        }
}

static void init_rows_sets_boundary(void **state)
{
    (void)state;
    hr_grid g;
    assert_int_equal(hr_grid_alloc(&g, 5, HR_PREC_DOUBLE), HR_OK);
    hr_grid_init_rows(&g, 0, 7, 2.5);
    for (int i = 0; i <= 6; i++)
        for (int j = 0; j <= 6; j++) {
            int edge = i == 0 || j == 0 || i == 6 || j == 6;
            assert_true(hr_grid_get(&g, i, j) == (edge ? 2.5 : 0.0));
        }
    hr_grid_free(&g);
    hr_grid_free(NULL);
}

static void rejects_bad_size(void **state)
{
    (void)state;
    hr_grid g;
    assert_int_equal(hr_grid_alloc(&g, 0, HR_PREC_SINGLE), HR_ERR_INVALID_ARG);
    hr_layout2d l;
    /* (2e9)^2 doubles do not fit in size_t: the layout says so instead of wrapping */
    assert_int_equal(hr_layout2d_init(&l, 2000000000, 8), 0);
    assert_int_equal(hr_layout2d_init(&l, 1000000, 8), 1);
    assert_true(l.count >= (size_t)1000002 * 1000002);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layout_alignment),
        cmocka_unit_test(init_rows_sets_boundary),
        cmocka_unit_test(rejects_bad_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
