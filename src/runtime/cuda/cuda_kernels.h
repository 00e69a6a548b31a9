/* The GPU kernels in the solver's kernel table (included by src/core/registry.c),
 * generated from the one list in gpu_kernels.def. */
#ifndef HR_CUDA_KERNELS_H
#define HR_CUDA_KERNELS_H

#include "methods/jacobi/cuda/gpu_kernels.def"
#include "core/solver_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_GPU_DESC_EXTERN(ident, name, caps, summary) extern const hr_kernel_desc hr_kernel_gpu_##ident;
HR_GPU_KERNELS(HR_GPU_DESC_EXTERN)

#ifdef __cplusplus
}
#endif

/* The table entries in list order: `&hr_kernel_gpu_tuned, &hr_kernel_gpu_naive, ...,` */
#define HR_GPU_DESC_ADDR(ident, name, caps, summary) &hr_kernel_gpu_##ident,
#define HR_CUDA_KERNEL_TABLE                         HR_GPU_KERNELS(HR_GPU_DESC_ADDR)

#endif
