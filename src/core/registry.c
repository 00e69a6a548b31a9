/* The kernel table: one line per kernel. A backend's first entry for a dimension is its
 * default there. CUDA kernels come from the X-macro list in src/methods/jacobi/cuda/gpu_kernels.def. */
#include <string.h>

#include "core/solver_internal.h"

extern const hr_kernel_desc hr_kernel_cpu_seq;
extern const hr_kernel_desc hr_kernel_cpu_spmd;
extern const hr_kernel_desc hr_kernel_cpu_blocks;
extern const hr_kernel_desc hr_kernel_cpu_spmd_nt;
extern const hr_kernel_desc hr_kernel_cpu_pencil;
extern const hr_kernel_desc hr_kernel_cpu_async0, hr_kernel_cpu_async1, hr_kernel_cpu_async2,
    hr_kernel_cpu_async3;
extern const hr_kernel_desc hr_kernel_cpu_rb_seq, hr_kernel_cpu_rb_tiles, hr_kernel_cpu_rb_fused;
extern const hr_kernel_desc hr_kernel_hybrid; /* src/parallel/hybrid/hybrid_kernel.c */
#ifdef HR_HAVE_CUDA
#include "runtime/cuda/cuda_kernels.h"
extern const hr_kernel_desc hr_kernel_gpu_rb_tuned, hr_kernel_gpu_rb_v1, hr_kernel_gpu_rb_v2, hr_kernel_gpu_rb_v3,
    hr_kernel_gpu_rb_v4, hr_kernel_gpu_rb_ldg, hr_kernel_gpu_rb_2gpu, hr_kernel_gpu_rb_mgpu;
extern const hr_kernel_desc hr_kernel_gpu_rb_inplace;
#endif

static const hr_kernel_desc *const table[] = {
    &hr_kernel_cpu_seq,    &hr_kernel_cpu_spmd,   &hr_kernel_cpu_blocks, &hr_kernel_cpu_spmd_nt,
    &hr_kernel_cpu_pencil, /* the first (default) 3-D cpu-threads kernel */
    &hr_kernel_cpu_async0, &hr_kernel_cpu_async1, &hr_kernel_cpu_async2, &hr_kernel_cpu_async3,
    &hr_kernel_cpu_rb_seq,   /* red-black: after the Jacobi defaults */
    &hr_kernel_cpu_rb_tiles, /* HR_CAP_REDBLACK: found by method, not as a default */
    &hr_kernel_cpu_rb_fused, /* one line per kernel */
    &hr_kernel_hybrid, /* the CPU+GPU split (src/parallel/hybrid/) */
#ifdef HR_HAVE_CUDA
    HR_CUDA_KERNEL_TABLE
    &hr_kernel_gpu_rb_tuned, /* red-black GPU kernels: rb-tuned is the method's default */
    &hr_kernel_gpu_rb_v1,
    &hr_kernel_gpu_rb_v2,
    &hr_kernel_gpu_rb_v3,
    &hr_kernel_gpu_rb_v4,
    &hr_kernel_gpu_rb_ldg,
    &hr_kernel_gpu_rb_2gpu,
    &hr_kernel_gpu_rb_mgpu,
    &hr_kernel_gpu_rb_inplace,
#endif
};

#define TABLE_LEN ((int)(sizeof table / sizeof table[0]))

const hr_kernel_desc *hr_kernel_at(int i)
{
    if (i < 0 || i >= TABLE_LEN) return NULL;
    return table[i];
}

const hr_kernel_desc *hr_kernel_find(hr_backend b, const char *name, int dim)
{
    const unsigned need = dim == 3 ? HR_CAP_3D : HR_CAP_2D;
    for (int i = 0; i < TABLE_LEN; i++)
        if (table[i]->backend == b && (table[i]->caps & need) &&
            (name ? strcmp(name, table[i]->name) == 0 : !(table[i]->caps & HR_CAP_REDBLACK)))
            return table[i]; /* a default (no name) is never a red-black-only kernel */
    return NULL;
}

const hr_kernel_desc *hr_kernel_find_redblack(hr_backend b, int dim)
{
    const unsigned need = (dim == 3 ? HR_CAP_3D : HR_CAP_2D) | HR_CAP_REDBLACK;
    for (int i = 0; i < TABLE_LEN; i++)
        if (table[i]->backend == b && (table[i]->caps & need) == need) return table[i];
    return NULL;
}

int hr_kernel_count(void)
{
    return TABLE_LEN;
}

hr_status hr_kernel_info_at(int i, hr_kernel_info *out)
{
    const hr_kernel_desc *k = hr_kernel_at(i);
    if (!k || !out) return HR_ERR_INVALID_ARG;
    out->name = k->name;
    out->backend = k->backend;
    out->summary = k->summary;
    out->caps = k->caps;
    return HR_OK;
}
