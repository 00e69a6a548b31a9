/* CSR storage: assembly from triplets (duplicates summed), diagonal located once. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/sparse/sparse_internal.h"

void hr_csr_free(hr_csr *A)
{
    if (!A) return;
    free(A->row_ptr);
    free(A->col);
    free(A->val);
    free(A->diag);
    free(A);
}

hr_status hri_csr_alloc(int n_rows, int n_cols, int64_t nnz, hr_csr **out)
{
    *out = NULL;
    if (n_rows < 0 || n_cols < 0 || n_rows > HR_CSR_MAX_DIM || n_cols > HR_CSR_MAX_DIM || nnz < 0 ||
        nnz > HR_CSR_MAX_NNZ)
        return HR_ERR_INVALID_ARG;
    hr_csr *A = calloc(1, sizeof *A);
    if (!A) return HR_ERR_NO_MEMORY;
    A->n_rows = n_rows;
    A->n_cols = n_cols;
    A->nnz = nnz;
    A->row_ptr = calloc((size_t)n_rows + 1, sizeof *A->row_ptr);
    A->diag = malloc(((size_t)n_rows + 1) * sizeof *A->diag);
    A->col = malloc(((size_t)nnz + 1) * sizeof *A->col);
    A->val = malloc(((size_t)nnz + 1) * sizeof *A->val);
    if (!A->row_ptr || !A->diag || !A->col || !A->val) {
        hr_csr_free(A);
        return HR_ERR_NO_MEMORY;
    }
    *out = A;
    return HR_OK;
}

void hri_csr_locate_diagonal(hr_csr *A)
{
    for (int i = 0; i < A->n_rows; i++) {
        A->diag[i] = -1;
        for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            if (A->col[p] == i) {
                A->diag[i] = p;
                break;
            }
    }
}

/* Counting sort by row, then insertion sort by column inside each row (rows are short),
 * then duplicates merged in place. */
hr_status hr_csr_from_coo(int n_rows, int n_cols, int64_t nnz, const int32_t *ri, const int32_t *ci,
                          const double *v, hr_csr **out)
{
    return hri_csr_from_coo_at(n_rows, n_cols, nnz, ri, ci, v, out, NULL);
}

hr_status hri_csr_from_coo_at(int n_rows, int n_cols, int64_t nnz, const int32_t *ri, const int32_t *ci,
                             const double *v, hr_csr **out, int32_t overflow_at[2])
{
    if (!out) return HR_ERR_INVALID_ARG;
    *out = NULL;
    if (nnz > 0 && (!ri || !ci || !v)) return HR_ERR_INVALID_ARG;
    for (int64_t k = 0; k < nnz; k++)
        if (ri[k] < 0 || ri[k] >= n_rows || ci[k] < 0 || ci[k] >= n_cols || !isfinite(v[k]))
            return HR_ERR_INVALID_ARG;
    hr_csr *A = NULL;
    HR_TRY(hri_csr_alloc(n_rows, n_cols, nnz, &A));
    for (int64_t k = 0; k < nnz; k++)
        A->row_ptr[ri[k] + 1]++;
    for (int i = 0; i < n_rows; i++)
        A->row_ptr[i + 1] += A->row_ptr[i];
    int64_t *fill = malloc(((size_t)n_rows + 1) * sizeof *fill);
    if (!fill) {
        hr_csr_free(A);
        return HR_ERR_NO_MEMORY;
    }
    memcpy(fill, A->row_ptr, ((size_t)n_rows + 1) * sizeof *fill);
    for (int64_t k = 0; k < nnz; k++) {
        int64_t p = fill[ri[k]]++;
        A->col[p] = ci[k];
        A->val[p] = v[k];
    }
    free(fill);
    int64_t w = 0;
    for (int i = 0; i < n_rows; i++) {
        int64_t lo = A->row_ptr[i], hi = A->row_ptr[i + 1];
        for (int64_t p = lo + 1; p < hi; p++) { /* stable insertion sort by column */
            int32_t c = A->col[p];
            double x = A->val[p];
            int64_t q = p;
            while (q > lo && A->col[q - 1] > c) {
                A->col[q] = A->col[q - 1];
                A->val[q] = A->val[q - 1];
                q--;
            }
            A->col[q] = c;
            A->val[q] = x;
        }
        A->row_ptr[i] = w;
        for (int64_t p = lo; p < hi; p++) {
            if (w > A->row_ptr[i] && A->col[w - 1] == A->col[p]) {
                A->val[w - 1] += A->val[p];     /* duplicates are summed, in file order */
                if (!isfinite(A->val[w - 1])) { /* finite terms, infinite sum: refused */
                    if (overflow_at) overflow_at[0] = i, overflow_at[1] = A->col[p];
                    hr_csr_free(A);
                    return HR_ERR_INVALID_ARG;
                }
            } else {
                A->col[w] = A->col[p];
                A->val[w] = A->val[p];
                w++;
            }
        }
    }
    A->row_ptr[n_rows] = w;
    A->nnz = w;
    hri_csr_locate_diagonal(A);
    *out = A;
    return HR_OK;
}

void hri_csr_spmv_rows(const hr_csr *A, const double *x, double *y, int r0, int r1)
{
    for (int i = r0; i < r1; i++) {
        double s = 0.0;
        for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            s += A->val[p] * x[A->col[p]];
        y[i] = s;
    }
}

void hr_csr_spmv(const hr_csr *A, const double *x, double *y)
{
    if (!A || !x || !y) return;
    hri_csr_spmv_rows(A, x, y, 0, A->n_rows);
}

/* ||v||_2 without overflow or underflow: scaled by max |v_i| (LAPACK dnrm2's idea, in
 * two passes). Inf or NaN in v gives Inf or NaN. */
double hri_sparse_norm2(const double *v, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        double a = fabs(v[i]);
        if (!(a <= m)) m = a; /* NaN sticks */
    }
    if (!(m > 0.0) || !isfinite(m)) return m;
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += (v[i] / m) * (v[i] / m);
    return m * sqrt(s);
}

/* Row i of b - A x. */
static double residual_row(const hr_csr *A, const double *b, const double *x, int i)
{
    double s = b[i];
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
        s -= A->val[p] * x[A->col[p]];
    return s;
}

double hr_csr_relative_residual(const hr_csr *A, const double *b, const double *x)
{
    if (!A || !b || !x) return NAN;
    double rr = 0.0, bb = 0.0;
    for (int i = 0; i < A->n_rows; i++) {
        double s = residual_row(A, b, x, i);
        rr += s * s;
        bb += b[i] * b[i];
    }
    /* plain sums unless a square over- or underflowed: then scaled norms */
    if (isfinite(rr) && isfinite(bb) && rr >= DBL_MIN && bb >= DBL_MIN) return sqrt(rr) / sqrt(bb);
    if (isnan(rr)) return NAN;
    double mr = 0.0, mb = 0.0;
    for (int i = 0; i < A->n_rows; i++) {
        double s = fabs(residual_row(A, b, x, i));
        if (!(s <= mr)) mr = s;
        if (fabs(b[i]) > mb) mb = fabs(b[i]);
    }
    if (!isfinite(mr)) return mr; /* Inf or NaN: diverged */
    double sr = 0.0, sb = 0.0;
    for (int i = 0; i < A->n_rows; i++) {
        double s = mr > 0.0 ? residual_row(A, b, x, i) / mr : 0.0, t = mb > 0.0 ? b[i] / mb : 0.0;
        sr += s * s;
        sb += t * t;
    }
    if (!(mb > 0.0)) return mr * sqrt(sr);
    return (mr / mb) * sqrt(sr / sb);
}

/* Looks up A(i, j) by binary search in row i; 0 with *found = 0 when absent. */
static double csr_get(const hr_csr *A, int i, int j, int *found)
{
    int64_t lo = A->row_ptr[i], hi = A->row_ptr[i + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (A->col[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < A->row_ptr[i + 1] && A->col[lo] == j;
    return *found ? A->val[lo] : 0.0;
}

int hr_csr_is_symmetric(const hr_csr *A)
{
    if (!A || A->n_rows != A->n_cols) return 0;
    for (int i = 0; i < A->n_rows; i++)
        for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
            int found;
            double t = csr_get(A, A->col[p], i, &found);
            if (!found || t != A->val[p]) return 0;
        }
    return 1;
}

hr_status hr_csr_check_diagonal(const hr_csr *A, int *bad_row)
{
    if (bad_row) *bad_row = -1;
    if (!A || A->n_rows != A->n_cols) return HR_ERR_INVALID_ARG;
    for (int i = 0; i < A->n_rows; i++) {
        int64_t d = A->diag[i];
        if (d < 0 || A->val[d] == 0.0 || !isfinite(A->val[d])) {
            if (bad_row) *bad_row = i;
            return HR_ERR_INVALID_ARG;
        }
    }
    return HR_OK;
}

double hri_sparse_pow2_scale(double maxabs)
{
    if (!(maxabs > 0x1p-500 && maxabs < 0x1p500) && maxabs > 0.0 && isfinite(maxabs)) {
        int e;
        frexp(maxabs, &e);
        return ldexp(1.0, e - 1); /* maxabs / 2^(e-1) in [1, 2); 2^e would be Inf at DBL_MAX */
    }
    return 1.0;
}

double hri_csr_bytes(int64_t n, int64_t nnz)
{
    /* row_ptr and diag: int64 per row (+1); col int32 and val double per entry */
    return 8.0 * ((double)n + 1.0) + 8.0 * (double)n + 12.0 * (double)nnz;
}

double hri_sparse_spectral_bytes(int64_t n)
{
    return 4.0 * 8.0 * (double)n; /* D^-1/2 and three Lanczos (or power) vectors */
}

const char *hri_sparse_bytes_text(double bytes, char *buf, size_t size)
{
    if (bytes >= 1e9)
        snprintf(buf, size, "%.1f GB", bytes * 1e-9);
    else
        snprintf(buf, size, "%.1f MB", bytes * 1e-6);
    return buf;
}
