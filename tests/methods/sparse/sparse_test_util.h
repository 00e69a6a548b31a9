/* Helpers shared by the sparse cmocka tests (include after cmocka.h). */
#ifndef HR_SPARSE_TEST_UTIL_H
#define HR_SPARSE_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "hetrelax/sparse.h"

/* A generated matrix; fails the test with the generator's reason if it cannot be made. */
static inline hr_csr *gen(const char *spec)
{
    hr_csr *A = NULL;
    char why[160] = "";
    if (hr_sparse_generate(spec, &A, why, sizeof why) != HR_OK) fail_msg("%s: %s", spec, why);
    return A;
}

/* n copies of v (never a zero-size allocation). */
static inline double *vec(int n, double v)
{
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    assert_non_null(x);
    for (int i = 0; i < n; i++)
        x[i] = v;
    return x;
}

/* ||b - A x|| / ||b||, written independently of the library, in long double. */
static inline double true_residual(const hr_csr *A, const double *b, const double *x)
{
    long double rr = 0, bb = 0;
    for (int i = 0; i < A->n_rows; i++) {
        long double s = b[i];
        for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            s -= (long double)A->val[p] * x[A->col[p]];
        rr += s * s;
        bb += (long double)b[i] * b[i];
    }
    return (double)sqrtl(rr / bb);
}

#endif
