/* Shared by the GPU sparse tests: whether they can run here. */
#ifndef HR_SPARSE_GPU_TEST_H
#define HR_SPARSE_GPU_TEST_H

#include "runtime/cuda/cuda_api.h"
#include "hetrelax/sparse.h"

/* 1 when this build has GPU sparse methods and a CUDA device is present (else the tests
 * exit 77: skipped). */
static inline int sparse_gpu_present(void)
{
    int gpu_methods = 0;
    hr_backend be;
    for (int i = 0; hr_sparse_method_at(i, &be, NULL); i++)
        gpu_methods += be == HR_BACKEND_GPU;
    return gpu_methods > 0 && hri_cuda_device_count() >= 1;
}

#endif
