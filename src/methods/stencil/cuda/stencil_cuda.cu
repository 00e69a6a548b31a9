/*
 * The CUDA backend of the general-problem engine (stencil_kernels.h). Not written yet: a
 * build with CUDA runs general problems on the CPU backends.
 */
#include "methods/stencil/stencil_kernels.h"

const hr_st_backend *hr_st_cuda_backend(void)
{
    return NULL;
}
