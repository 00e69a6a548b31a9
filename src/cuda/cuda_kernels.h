/* The GPU kernels in the solver's kernel table (included by src/solver/kernels.c).
 * The first is the GPU backend's default. */
#ifndef HR_CUDA_KERNELS_H
#define HR_CUDA_KERNELS_H

#include "solver/solver_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const hr_kernel_desc hr_kernel_gpu_tuned;
extern const hr_kernel_desc hr_kernel_gpu_naive;
extern const hr_kernel_desc hr_kernel_gpu_padded;
extern const hr_kernel_desc hr_kernel_gpu_smem;
extern const hr_kernel_desc hr_kernel_gpu_texture;
extern const hr_kernel_desc hr_kernel_gpu_smem_padded;
extern const hr_kernel_desc hr_kernel_gpu_unrolled;
extern const hr_kernel_desc hr_kernel_gpu_smem_hilo;
extern const hr_kernel_desc hr_kernel_gpu_smem_padded_hilo;
extern const hr_kernel_desc hr_kernel_gpu_unrolled_hilo;
extern const hr_kernel_desc hr_kernel_gpu_async0;
extern const hr_kernel_desc hr_kernel_gpu_async1;
extern const hr_kernel_desc hr_kernel_gpu_async2;
extern const hr_kernel_desc hr_kernel_gpu_async3;
extern const hr_kernel_desc hr_kernel_gpu_tb;

#ifdef __cplusplus
}
#endif

#define HR_CUDA_KERNEL_TABLE                                                                  \
    &hr_kernel_gpu_tuned, &hr_kernel_gpu_naive, &hr_kernel_gpu_padded, &hr_kernel_gpu_smem,   \
        &hr_kernel_gpu_texture, &hr_kernel_gpu_smem_padded, &hr_kernel_gpu_unrolled,          \
        &hr_kernel_gpu_smem_hilo, &hr_kernel_gpu_smem_padded_hilo, &hr_kernel_gpu_unrolled_hilo, \
        &hr_kernel_gpu_async0, &hr_kernel_gpu_async1, &hr_kernel_gpu_async2,                  \
        &hr_kernel_gpu_async3, &hr_kernel_gpu_tb,

#endif
