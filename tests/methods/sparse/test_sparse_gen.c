/* Generators reproduce Anzt et al. Table 1 sizes and spectral radii; spectral estimates
 * agree with known closed forms. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/sparse.h"
#include "sparse_test_util.h"

static double entry(const hr_csr *A, int i, int j)
{
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
        if (A->col[p] == j) return A->val[p];
    return 0.0;
}

static void test_trefethen(void **state)
{
    (void)state;
    hr_csr *A = gen("trefethen:2000");
    assert_int_equal(A->n_rows, 2000);
    assert_int_equal(A->nnz, 41906); /* Table 1 */
    assert_true(A->val[A->diag[0]] == 2.0 && A->val[A->diag[1]] == 3.0 && A->val[A->diag[9]] == 29.0);
    assert_true(A->val[A->diag[1999]] == 17389.0); /* the 2000th prime */
    assert_true(entry(A, 0, 1024) == 1.0 && entry(A, 0, 3) == 0.0 && entry(A, 1000, 992) == 1.0);
    assert_true(hr_csr_is_symmetric(A));
    hr_spectral sp;
    assert_int_equal(hr_sparse_spectral(A, 0, &sp), HR_OK);
    assert_true(sp.symmetric);
    if (fabs(sp.rho_B - 0.8601) > 5e-5) fail_msg("rho(B) = %.6f, Table 1 says 0.8601", sp.rho_B);
    /* every off-diagonal entry is +1, so |B| = -B and the radii agree */
    assert_true(fabs(sp.rho_absB - sp.rho_B) < 1e-6);
    hr_csr_free(A);

    A = gen("trefethen:20000");
    assert_int_equal(A->n_rows, 20000);
    assert_int_equal(A->nnz, 554466); /* Table 1 */
    assert_int_equal(hr_sparse_spectral(A, 0, &sp), HR_OK);
    if (fabs(sp.rho_B - 0.8601) > 5e-5) fail_msg("rho(B) = %.6f, Table 1 says 0.8601", sp.rho_B);
    hr_csr_free(A);
}

static void test_laplace_and_fv(void **state)
{
    (void)state;
    const double pi = 3.14159265358979323846;
    hr_csr *A = gen("laplace2d:30");
    assert_int_equal(A->n_rows, 900);
    assert_int_equal(A->nnz, 5 * 900 - 4 * 30);
    hr_spectral sp;
    assert_int_equal(hr_sparse_spectral(A, 0, &sp), HR_OK);
    double exact = cos(pi / 31.0); /* rho(B) of the 5-point Jacobi iteration */
    if (fabs(sp.rho_B - exact) > 1e-6) fail_msg("laplace2d rho(B) %.8f vs %.8f", sp.rho_B, exact);
    hr_csr_free(A);

    A = gen("laplace3d:10");
    assert_int_equal(A->n_rows, 1000);
    assert_int_equal(A->nnz, 7 * 1000 - 6 * 100);
    assert_int_equal(hr_sparse_spectral(A, 0, &sp), HR_OK);
    exact = cos(pi / 11.0);
    if (fabs(sp.rho_B - exact) > 1e-6) fail_msg("laplace3d rho(B) %.8f vs %.8f", sp.rho_B, exact);
    hr_csr_free(A);

    A = gen("fv2d:99");
    assert_int_equal(A->n_rows, 9801); /* fv2, fv3 */
    assert_int_equal(A->nnz, 87025);   /* fv2, fv3 */
    assert_true(hr_csr_is_symmetric(A));
    assert_int_equal(hr_sparse_spectral(A, 0, &sp), HR_OK);
    if (fabs(sp.rho_B - 0.8541) > 1e-3) fail_msg("fv2d rho(B) %.5f, fv1/fv2 have 0.8541", sp.rho_B);
    assert_true(sp.rho_absB < 1.0);
    assert_true(sp.lambda_min > 0.0);
    hr_csr_free(A);
    A = gen("fv2d:98");
    assert_int_equal(A->n_rows, 9604); /* fv1 */
    assert_int_equal(A->nnz, 85264);   /* fv1 */
    hr_csr_free(A);
}

static void test_random_spd(void **state)
{
    (void)state;
    hr_csr *A = gen("random-spd:400:0.05:11"), *B = gen("random-spd:400:0.05:11"),
           *C = gen("random-spd:400:0.05:12");
    assert_true(hr_csr_is_symmetric(A));
    assert_int_equal(A->nnz, B->nnz);
    assert_memory_equal(A->val, B->val, (size_t)A->nnz * sizeof *A->val);
    assert_true(A->nnz != C->nnz || memcmp(A->val, C->val, (size_t)A->nnz * sizeof *A->val) != 0);
    double dens = (double)(A->nnz - 400) / (400.0 * 399.0);
    assert_true(dens > 0.04 && dens <= 0.05);
    for (int i = 0; i < A->n_rows; i++) { /* strictly diagonally dominant */
        double off = 0.0;
        for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            if (A->col[p] != i) off += fabs(A->val[p]);
        assert_true(A->val[A->diag[i]] > off);
    }
    hr_spectral sp;
    assert_int_equal(hr_sparse_spectral(A, 0, &sp), HR_OK);
    assert_true(sp.rho_absB <= 0.8 + 1e-9 && sp.rho_B <= sp.rho_absB + 1e-9);
    hr_csr_free(A);
    hr_csr_free(B);
    hr_csr_free(C);
}

static void test_bad_specs(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "trefethen",
                         "trefethen:0",
                         "trefethen:12x",
                         "trefethen:-3",
                         "laplace2d:5:5",
                         "fv2d:40001",
                         "laplace3d:1001",
                         "random-spd:10:1.5:1",
                         "random-spd:10:0.1",
                         "random-spd:10:0.1:x",
                         "nosuch:4",
                         "trefethen:99999999999999999999"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        hr_csr *A = (hr_csr *)0x1;
        char why[160] = "";
        assert_int_equal(hr_sparse_generate(bad[k], &A, why, sizeof why), HR_ERR_INVALID_ARG);
        assert_null(A);
        assert_true(why[0] != '\0');
    }
}

static void test_power_iteration_nonsymmetric(void **state)
{
    (void)state;
    /* A = [[1, .5], [.2, 1]]: B = [[0, -.5], [-.2, 0]], eigenvalues +-sqrt(0.1) */
    int32_t r[] = {0, 0, 1, 1}, c[] = {0, 1, 0, 1};
    double v[] = {1.0, 0.5, 0.2, 1.0};
    hr_csr *A;
    assert_int_equal(hr_csr_from_coo(2, 2, 4, r, c, v, &A), HR_OK);
    hr_spectral sp;
    assert_int_equal(hr_sparse_spectral(A, 0, &sp), HR_OK);
    assert_false(sp.symmetric);
    assert_true(fabs(sp.rho_B - sqrt(0.1)) < 1e-6);
    assert_true(fabs(sp.rho_absB - sqrt(0.1)) < 1e-6);
    hr_csr_free(A);
    /* a zero diagonal is refused */
    double z[] = {0.0, 0.5, 0.2, 1.0};
    assert_int_equal(hr_csr_from_coo(2, 2, 4, r, c, z, &A), HR_OK);
    assert_int_equal(hr_sparse_spectral(A, 0, &sp), HR_ERR_INVALID_ARG);
    hr_csr_free(A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trefethen),
        cmocka_unit_test(test_laplace_and_fv),
        cmocka_unit_test(test_random_spd),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_power_iteration_nonsymmetric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
