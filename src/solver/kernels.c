/* The kernel table: one line per kernel. A backend's first entry is its default. */
#include <string.h>

#include "solver/solver_internal.h"

extern const hr_kernel_desc hr_kernel_cpu_seq;
extern const hr_kernel_desc hr_kernel_cpu_spmd;
extern const hr_kernel_desc hr_kernel_cpu_blocks;
extern const hr_kernel_desc hr_kernel_cpu_spmd_nt;
extern const hr_kernel_desc hr_kernel_cpu_async0, hr_kernel_cpu_async1, hr_kernel_cpu_async2,
    hr_kernel_cpu_async3;
#ifdef HR_HAVE_CUDA
#include "cuda/cuda_kernels.h"
#endif

static const hr_kernel_desc *const table[] = {
    &hr_kernel_cpu_seq,
    &hr_kernel_cpu_spmd,
    &hr_kernel_cpu_blocks,
    &hr_kernel_cpu_spmd_nt,
    &hr_kernel_cpu_async0, &hr_kernel_cpu_async1, &hr_kernel_cpu_async2, &hr_kernel_cpu_async3,
#ifdef HR_HAVE_CUDA
    HR_CUDA_KERNEL_TABLE
#endif
};

const hr_kernel_desc *hr_kernel_at(int i)
{
    if (i < 0 || (size_t)i >= sizeof table / sizeof table[0]) return NULL;
    return table[i];
}

const hr_kernel_desc *hr_kernel_find(hr_backend b, const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i]->backend == b && (!name || strcmp(name, table[i]->name) == 0)) return table[i];
    return NULL;
}
