/*
 * The sparse method table, keyed by method name and backend. The first entry of a
 * name is its default backend. A GPU backend adds its entries here, under
 * #ifdef HR_HAVE_CUDA, exactly as src/core/registry.c does for the 2-D kernels.
 */
#include <string.h>

#include "methods/sparse/sparse_internal.h"

extern const hr_sparse_method hr_sparse_cpu_jacobi, hr_sparse_seq_jacobi, hr_sparse_seq_gs;
extern const hr_sparse_method hr_sparse_cpu_async, hr_sparse_seq_async, hr_sparse_cpu_cg, hr_sparse_seq_cg;
extern const hr_sparse_method hr_sparse_cpu_gs_mc; /* cpu_gs_color.c */

#ifdef HR_HAVE_CUDA
extern const hr_sparse_method hr_sparse_gpu_jacobi, hr_sparse_gpu_async, hr_sparse_gpu_cg;
#endif

static const hr_sparse_method *const table[] = {
    &hr_sparse_cpu_jacobi, &hr_sparse_seq_jacobi, &hr_sparse_seq_gs,
    &hr_sparse_cpu_async,  &hr_sparse_seq_async,  &hr_sparse_cpu_cg,
    &hr_sparse_seq_cg,     &hr_sparse_cpu_gs_mc, /* multi-colour Gauss-Seidel */
#ifdef HR_HAVE_CUDA
    &hr_sparse_gpu_jacobi, &hr_sparse_gpu_async,  &hr_sparse_gpu_cg, /* src/methods/sparse/cuda/sparse_*.cu */
#endif
};

const hr_sparse_method *hr_sparse_method_entry(int i)
{
    if (i < 0 || (size_t)i >= sizeof table / sizeof table[0]) return NULL;
    return table[i];
}

const hr_sparse_method *hr_sparse_method_find(const char *name, hr_backend backend)
{
    for (size_t i = 0; name && i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i]->name, name) == 0 && (backend == HR_BACKEND_AUTO || table[i]->backend == backend))
            return table[i];
    return NULL;
}

const char *hr_sparse_method_at(int i, hr_backend *backend, const char **summary)
{
    const hr_sparse_method *m = hr_sparse_method_entry(i);
    if (!m) return NULL;
    if (backend) *backend = m->backend;
    if (summary) *summary = m->summary;
    return m->name;
}
