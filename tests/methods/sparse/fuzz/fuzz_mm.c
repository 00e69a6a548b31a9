/* libFuzzer target: the Matrix Market reader must reject or accept any input without
 * a crash, a leak or an out-of-bounds access, and what it accepts must be a valid CSR. */
#include <stdint.h>
#include <stdlib.h>

#include "hetrelax/sparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hr_csr *A = NULL;
    hr_mm_error e;
    if (hr_mm_parse_csr((const char *)data, size, &A, &e) == HR_OK) {
        if (A->row_ptr[0] != 0 || A->row_ptr[A->n_rows] != A->nnz) abort();
        for (int i = 0; i < A->n_rows; i++) {
            for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
                if (A->col[p] < 0 || A->col[p] >= A->n_cols ||
                    (p > A->row_ptr[i] && A->col[p] <= A->col[p - 1]))
                    abort();
            if (A->diag[i] >= 0 && A->col[A->diag[i]] != i) abort();
        }
        hr_csr_free(A);
    } else if (A) {
        abort(); /* a rejected file must not leave a matrix behind */
    }
    double *v = NULL;
    int n = 0;
    if (hr_mm_parse_vector((const char *)data, size, &v, &n, &e) == HR_OK) {
        if (n < 1) abort();
        free(v);
    }
    return 0;
}
