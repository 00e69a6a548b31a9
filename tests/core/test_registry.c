/* The registry (hetrelax.h): every kind's entries are well formed and unique, and the older
 * per-kind lookups (kernels, method and smoother names, the sparse method table, defaults)
 * and the libraries' errors for unknown values answer from it. Uses only the public headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/mg.h"
#include "hetrelax/sparse.h"

/* the dimensions an entry runs: 2-D, 3-D, or both */
static unsigned dims(const hr_entry_info *e)
{
    return e->caps & (HR_CAP_2D | HR_CAP_3D);
}

static void entries_well_formed(void **state)
{
    (void)state;
    for (int k = 0; k < HR_KIND_COUNT; k++) {
        assert_non_null(hr_kind_name((hr_kind)k));
        const int n = hr_registry_count((hr_kind)k);
        assert_true(n > 0);
        hr_entry_info e, f;
        for (int i = 0; i < n; i++) {
            assert_int_equal(hr_registry_info_at((hr_kind)k, i, &e), HR_OK);
            assert_int_equal(e.kind, k);
            assert_true(e.name && e.name[0] && e.summary && e.summary[0]);
            assert_true(e.problems != 0);
            assert_true((unsigned)e.backend < HR_BACKEND_COUNT);
            /* one name per kind, backend and dimension: a name finds one entry */
            for (int j = 0; j < i; j++) {
                assert_int_equal(hr_registry_info_at((hr_kind)k, j, &f), HR_OK);
                if (strcmp(e.name, f.name) == 0 && e.backend == f.backend &&
                    (dims(&e) & dims(&f) || !dims(&e)))
                    fail_msg("%s %s: twice on backend %s", hr_kind_name((hr_kind)k), e.name,
                             hr_backend_name(e.backend));
            }
            /* and finds this one (or an earlier line of the same name and backend) */
            assert_int_equal(hr_registry_find((hr_kind)k, e.backend, e.name, 0, &f), HR_OK);
            assert_string_equal(f.name, e.name);
        }
        assert_int_equal(hr_registry_info_at((hr_kind)k, n, &e), HR_ERR_INVALID_ARG);
        assert_int_equal(hr_registry_find((hr_kind)k, HR_BACKEND_AUTO, "no-such-name", 0, &e),
                         HR_ERR_INVALID_ARG);
    }
    assert_null(hr_kind_name(HR_KIND_COUNT));
    assert_int_equal(hr_registry_count(HR_KIND_COUNT), 0);
}

/* hr_kernel_count / hr_kernel_info_at are the registry's kernels */
static void kernels_are_entries(void **state)
{
    (void)state;
    assert_int_equal(hr_kernel_count(), hr_registry_count(HR_KIND_KERNEL));
    for (int i = 0; i < hr_kernel_count(); i++) {
        hr_kernel_info k;
        hr_entry_info e;
        assert_int_equal(hr_kernel_info_at(i, &k), HR_OK);
        assert_int_equal(hr_registry_info_at(HR_KIND_KERNEL, i, &e), HR_OK);
        assert_string_equal(k.name, e.name);
        assert_int_equal(k.backend, e.backend);
    }
    assert_string_equal(hr_registry_default(HR_KIND_KERNEL, HR_BACKEND_CPU_SEQ, 2),
                        hr_kernel_default(HR_BACKEND_CPU_SEQ, 2));
}

/* hr_method_name, an invalid method's error and the handle's methods */
static void methods_are_entries(void **state)
{
    (void)state;
    hr_options o;
    hr_options_default(&o);
    o.n = 8;
    o.method = (hr_method)99;
    char why[256];
    assert_int_equal(hr_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    int relax = 0;
    hr_entry_info e;
    for (int i = 0; hr_registry_info_at(HR_KIND_METHOD, i, &e) == HR_OK; i++) {
        assert_string_equal(hr_method_name((hr_method)e.id), e.name);
        if (e.caps & HR_CAP_MG_HANDLE) continue; /* not a method of hr_solver */
        relax++;
        assert_string_equal(hr_method_name((hr_method)e.id), e.name);
        if (!strstr(why, e.name)) fail_msg("'%s' does not name method %s", why, e.name);
    }
    assert_int_equal(relax, HR_METHOD_SOR + 1); /* the rest are hr_grid_solver's */
    for (int m = 0; m < HR_METHOD_COUNT; m++)
        assert_non_null(hr_method_name((hr_method)m));
    assert_string_equal(hr_registry_default(HR_KIND_METHOD, HR_BACKEND_AUTO, 2),
                        hr_method_name(HR_METHOD_JACOBI));
}

/* hr_mg_smoother_name, the default smoother and an invalid smoother's error */
static void smoothers_are_entries(void **state)
{
    (void)state;
    hr_mg_options o;
    hr_mg_options_default(&o);
    assert_string_equal(hr_mg_smoother_name(o.smoother),
                        hr_registry_default(HR_KIND_SMOOTHER, HR_BACKEND_AUTO, 0));
    o.smoother = (hr_mg_smoother)99;
    char why[256];
    assert_int_equal(hr_mg_options_validate(&o, why, sizeof why), HR_ERR_INVALID_ARG);
    hr_entry_info e;
    for (int i = 0; hr_registry_info_at(HR_KIND_SMOOTHER, i, &e) == HR_OK; i++) {
        assert_string_equal(hr_mg_smoother_name((hr_mg_smoother)e.id), e.name);
        if (!strstr(why, e.name)) fail_msg("'%s' does not name smoother %s", why, e.name);
        /* a smoother that may precondition CG is deterministic */
        if (e.caps & HR_CAP_SYMMETRIC) assert_true(e.caps & HR_CAP_DETERMINISTIC);
    }
    assert_string_equal(hr_mg_smoother_name((hr_mg_smoother)99), "?");
}

/* hr_sparse_method_at, the default method and an unknown method's error */
static void sparse_methods_are_entries(void **state)
{
    (void)state;
    hr_entry_info e;
    int i = 0;
    for (; hr_registry_info_at(HR_KIND_SPARSE, i, &e) == HR_OK; i++) {
        hr_backend b;
        const char *summary;
        assert_string_equal(hr_sparse_method_at(i, &b, &summary), e.name);
        assert_int_equal(b, e.backend);
        assert_string_equal(summary, e.summary);
        assert_true(e.problems & HR_PROBLEM_MATRIX);
    }
    assert_null(hr_sparse_method_at(i, NULL, NULL));

    hr_sparse_options o;
    hr_sparse_options_default(&o);
    assert_string_equal(o.method, hr_registry_default(HR_KIND_SPARSE, HR_BACKEND_AUTO, 0));
    hr_csr *A = NULL;
    char why[128];
    assert_int_equal(hr_sparse_generate("laplace2d:4", &A, why, sizeof why), HR_OK);
    double b[16], x[16];
    for (int r = 0; r < 16; r++)
        b[r] = 1.0, x[r] = 0.0;
    o.method = "no-such-method";
    hr_sparse_result res;
    assert_int_equal(hr_sparse_solve(A, b, x, &o, &res), HR_ERR_INVALID_ARG);
    for (i = 0; hr_registry_info_at(HR_KIND_SPARSE, i, &e) == HR_OK; i++)
        if (!strstr(res.message, e.name)) fail_msg("'%s' does not name method %s", res.message, e.name);
    hr_csr_free(A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(entries_well_formed),        cmocka_unit_test(kernels_are_entries),
        cmocka_unit_test(methods_are_entries),        cmocka_unit_test(smoothers_are_entries),
        cmocka_unit_test(sparse_methods_are_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
