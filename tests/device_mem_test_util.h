/* The device memory of tests that hand the library device arrays (hr_grid_solver_solve_device):
 * cudaMalloc and cudaMemcpy in a build with CUDA (HR_TEST_CUDA), the host's memory in the CPU
 * emulations of the CUDA sources (HR_MG_EMU, HR_STENCIL_EMU: the emulated device's memory is
 * the host's) and in builds with neither (whose tests skip before they reach these). */
#ifndef HR_DEVICE_MEM_TEST_UTIL_H
#define HR_DEVICE_MEM_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#if defined(HR_TEST_CUDA) && !defined(HR_MG_EMU) && !defined(HR_STENCIL_EMU)
#include <cuda_runtime_api.h>
static inline void *dev_alloc(size_t n)
{
    void *d = NULL;
    return cudaMalloc(&d, n) == cudaSuccess ? d : NULL;
}
static inline void dev_put(void *d, const void *h, size_t n)
{
    cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
}
static inline void dev_get(void *h, const void *d, size_t n)
{
    cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost);
}
static inline void dev_free(void *d)
{
    cudaFree(d);
}
#else
static inline void *dev_alloc(size_t n)
{
    return malloc(n);
}
static inline void dev_put(void *d, const void *h, size_t n)
{
    memcpy(d, h, n);
}
static inline void dev_get(void *h, const void *d, size_t n)
{
    memcpy(h, d, n);
}
static inline void dev_free(void *d)
{
    free(d);
}
#endif

#endif
