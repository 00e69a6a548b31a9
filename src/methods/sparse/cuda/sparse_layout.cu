/*
 * The sliced block layout of a CSR row range (sparse_gpu.cuh) and the error helpers
 * of the GPU sparse methods.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/sparse/cuda/sparse_gpu.cuh"
#include "runtime/cuda/gpu_internal.cuh"

static const char *base_name(const char *file)
{
    const char *base = file;
    for (const char *p = file; *p; p++)
        if (*p == '/') base = p + 1;
    return base;
}

hr_status hri_sp_cuda_fail(hr_sparse_run *r, cudaError_t e, const char *call, const char *file, int line)
{
    if (r)
        snprintf(r->err, sizeof r->err, "%s failed at %s:%d: %s: %s", call, base_name(file), line,
                 cudaGetErrorName(e), cudaGetErrorString(e));
    return hri_cuda_fail(NULL, e, call, file, line); /* the 2-D backend's status mapping */
}

hr_status hri_sp_lib_fail(hr_sparse_run *r, const char *what, const char *call, const char *file, int line)
{
    if (r) snprintf(r->err, sizeof r->err, "%s failed at %s:%d: %s", call, base_name(file), line, what);
    return HR_ERR_DEVICE;
}

hr_status hri_sp_check_devices(hr_sparse_run *r, int first, int count)
{
    int found = 0;
    if (cudaGetDeviceCount(&found) != cudaSuccess) found = 0; /* no driver or no device */
    (void)cudaGetLastError();
    if (found > 0 && first >= 0 && first + count <= found) return HR_OK;
    if (count > 1 && found > 0) {
        snprintf(r->err, sizeof r->err, "gpus: %d GPUs from device %d asked, %d present", count, first,
                 found);
        return HR_ERR_INVALID_ARG;
    }
    snprintf(r->err, sizeof r->err, "gpu: no CUDA device %d (found %d)", first, found);
    return HR_ERR_NO_DEVICE;
}

void hri_sp_blocks_free(hr_sp_blocks *L)
{
    cudaFree(L->off_w);
    cudaFree(L->in_w);
    cudaFree(L->off_ptr);
    cudaFree(L->in_ptr);
    cudaFree(L->off_col);
    cudaFree(L->in_col);
    cudaFree(L->off_val);
    cudaFree(L->in_val);
    memset(L, 0, sizeof *L);
}

/* Host copies while building; freed on every path. */
typedef struct host_layout {
    int *off_w, *in_w, *off_col, *in_col;
    long long *off_ptr, *in_ptr;
    double *off_val, *in_val;
} host_layout;

static void host_free(host_layout *h)
{
    free(h->off_w), free(h->in_w), free(h->off_col), free(h->in_col);
    free(h->off_ptr), free(h->in_ptr), free(h->off_val), free(h->in_val);
}

#define UPLOAD(field, count)                                                                                 \
    do {                                                                                                     \
        size_t bytes_ = (size_t)(count) * sizeof *h.field;                                                   \
        if (bytes_ == 0) bytes_ = sizeof *h.field; /* a valid pointer even for an empty part */              \
        HR_CHECK_GOTO(st,                                                                                    \
                      (e = cudaMalloc((void **)&L->field, bytes_)) == cudaSuccess                            \
                          ? HR_OK                                                                            \
                          : hri_sp_cuda_fail(r, e, "cudaMalloc(" #field ")", __FILE__, __LINE__),             \
                      done);                                                                                 \
        if ((count) > 0)                                                                                     \
            HR_CHECK_GOTO(st,                                                                                \
                          (e = cudaMemcpy(L->field, h.field, (size_t)(count) * sizeof *h.field,              \
                                          cudaMemcpyHostToDevice)) == cudaSuccess                            \
                              ? HR_OK                                                                        \
                              : hri_sp_cuda_fail(r, e, "cudaMemcpy(" #field ")", __FILE__, __LINE__),         \
                          done);                                                                             \
    } while (0)

hr_status hri_sp_blocks_build(hr_sparse_run *r, const hr_csr *A, int row0, int nrows, int B, int split,
                             hr_sp_blocks *L)
{
    memset(L, 0, sizeof *L);
    host_layout h;
    memset(&h, 0, sizeof h);
    hr_status st = HR_OK;
    cudaError_t e = cudaSuccess;
    if (B < 1) B = 1;
    const int nb = nrows > 0 ? (nrows + B - 1) / B : 0;
    L->row0 = row0, L->nrows = nrows, L->B = B, L->nblocks = nb, L->split = split;
    h.off_w = (int *)calloc((size_t)nb + 1, sizeof *h.off_w);
    h.in_w = (int *)calloc((size_t)nb + 1, sizeof *h.in_w);
    h.off_ptr = (long long *)calloc((size_t)nb + 1, sizeof *h.off_ptr);
    h.in_ptr = (long long *)calloc((size_t)nb + 1, sizeof *h.in_ptr);
    if (!h.off_w || !h.in_w || !h.off_ptr || !h.in_ptr) {
        st = HR_ERR_NO_MEMORY;
        snprintf(r->err, sizeof r->err, "out of host memory for the block layout");
        goto done;
    }
    /* widths: the widest row of each part in each block */
    for (int blk = 0; blk < nb; blk++) {
        const int lo = row0 + blk * B, hi = lo + B < row0 + nrows ? lo + B : row0 + nrows;
        int ow = 0, iw = 0;
        for (int i = lo; i < hi; i++) {
            int o = 0, in = 0;
            for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
                const int j = A->col[p];
                if (j == i) continue;
                if (split && j >= lo && j < hi)
                    in++;
                else
                    o++;
            }
            ow = o > ow ? o : ow;
            iw = in > iw ? in : iw;
        }
        h.off_w[blk] = ow, h.in_w[blk] = iw;
        h.off_ptr[blk + 1] = h.off_ptr[blk] + (long long)ow * B;
        h.in_ptr[blk + 1] = h.in_ptr[blk] + (long long)iw * B;
        L->max_off_w = ow > L->max_off_w ? ow : L->max_off_w;
        L->max_in_w = iw > L->max_in_w ? iw : L->max_in_w;
    }
    L->off_slots = h.off_ptr[nb];
    L->in_slots = h.in_ptr[nb];
    h.off_col = (int *)malloc(((size_t)L->off_slots + 1) * sizeof *h.off_col);
    h.in_col = (int *)malloc(((size_t)L->in_slots + 1) * sizeof *h.in_col);
    h.off_val = (double *)calloc((size_t)L->off_slots + 1, sizeof *h.off_val);
    h.in_val = (double *)calloc((size_t)L->in_slots + 1, sizeof *h.in_val);
    if (!h.off_col || !h.in_col || !h.off_val || !h.in_val) {
        st = HR_ERR_NO_MEMORY;
        snprintf(r->err, sizeof r->err, "out of host memory for the block layout (%lld + %lld slots)",
                 L->off_slots, L->in_slots);
        goto done;
    }
    for (long long s = 0; s < L->off_slots; s++)
        h.off_col[s] = -1;
    for (long long s = 0; s < L->in_slots; s++)
        h.in_col[s] = -1;
    /* entries keep their CSR order within each part: the sums run in the CPU's order */
    for (int blk = 0; blk < nb; blk++) {
        const int lo = row0 + blk * B, hi = lo + B < row0 + nrows ? lo + B : row0 + nrows;
        for (int i = lo; i < hi; i++) {
            const int t = i - lo;
            int o = 0, in = 0;
            for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
                const int j = A->col[p];
                if (j == i) continue;
                if (split && j >= lo && j < hi) {
                    long long s = h.in_ptr[blk] + (long long)in++ * B + t;
                    h.in_col[s] = j - lo;
                    h.in_val[s] = A->val[p];
                } else {
                    long long s = h.off_ptr[blk] + (long long)o++ * B + t;
                    h.off_col[s] = j;
                    h.off_val[s] = A->val[p];
                }
            }
        }
    }
    UPLOAD(off_w, nb);
    UPLOAD(in_w, nb);
    UPLOAD(off_ptr, nb);
    UPLOAD(in_ptr, nb);
    UPLOAD(off_col, L->off_slots);
    UPLOAD(in_col, L->in_slots);
    UPLOAD(off_val, L->off_slots);
    UPLOAD(in_val, L->in_slots);
done:
    host_free(&h);
    if (st != HR_OK) hri_sp_blocks_free(L);
    return st;
}
