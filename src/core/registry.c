/* The registry's table, built from the lines of registry.def, and its lookups. */
#include <stdio.h>
#include <string.h>

#include "core/registry.h"
#include "core/solver_internal.h"
#include "hetrelax/mg.h"
#include "methods/async/cpu/jacobi2d_async.h" /* ids of the lines: the variants */
#include "methods/jacobi/cpu/jacobi2d_cpu.h"
#include "methods/redblack/cpu/redblack_cpu.h"
#ifdef HR_HAVE_CUDA
#include "methods/redblack/cuda/redblack_gpu.h"
#endif

/* The entry points the lines name (a symbol named on several lines is declared again: fine). */
#define HR_KERNEL(backend, name, ops, id, problems, caps, summary) extern const struct hr_kernel_ops ops;
#define HR_GPU_KERNEL(name, family, problems, caps, summary)                                                 \
    extern const struct hr_gpu_family family;                                                                \
    extern const struct hr_kernel_ops hri_kernel_gpu;
#define HR_SMOOTHER(backend, name, ops, id, problems, caps, summary) extern const struct hr_smoother_ops ops;
#define HR_SPARSE(backend, name, ops, problems, caps, summary)       extern const struct hr_sparse_ops ops;
#include "core/registry.def"

#define HR_KERNEL(backend, name, ops, id, problems, caps, summary)                                           \
    {name, HR_BACKEND_##backend, summary, caps, HR_KIND_KERNEL, problems, id, &ops, NULL, NULL, NULL},
#define HR_GPU_KERNEL(name, family, problems, caps, summary)                                                 \
    {name, HR_BACKEND_GPU, summary, caps, HR_KIND_KERNEL, problems, 0, &hri_kernel_gpu, NULL, NULL, &family},
#define HR_GENERAL_KERNEL(backend, name, problems, caps, summary)                                            \
    {name, HR_BACKEND_##backend, summary, caps, HR_KIND_KERNEL, problems, 0, NULL, NULL, NULL, NULL},
#define HR_METHOD(name, id, problems, caps, summary)                                                         \
    {name, HR_BACKEND_AUTO, summary, caps, HR_KIND_METHOD, problems, id, NULL, NULL, NULL, NULL},
#define HR_SMOOTHER(backend, name, ops, id, problems, caps, summary)                                         \
    {name, HR_BACKEND_##backend, summary, caps, HR_KIND_SMOOTHER, problems, id, NULL, NULL, &ops, NULL},
#define HR_SPARSE(backend, name, ops, problems, caps, summary)                                               \
    {name, HR_BACKEND_##backend, summary, caps, HR_KIND_SPARSE, problems, -1, NULL, &ops, NULL, NULL},
static const hr_entry table[] = {
#include "core/registry.def"
};

#define TABLE_LEN ((int)(sizeof table / sizeof table[0]))

const hr_entry *hri_entry_at(hr_kind kind, int i)
{
    if (i < 0) return NULL;
    for (int t = 0; t < TABLE_LEN; t++)
        if (table[t].kind == kind && i-- == 0) return &table[t];
    return NULL;
}

static int runs_on(const hr_entry *e, hr_backend b, int dim)
{
    if (b != HR_BACKEND_AUTO && e->backend != HR_BACKEND_AUTO && e->backend != b) return 0;
    return dim == 0 || (e->caps & (dim == 3 ? HR_CAP_3D : HR_CAP_2D)) != 0;
}

const hr_entry *hri_entry_find(hr_kind kind, hr_backend backend, const char *name, int dim)
{
    const hr_entry *first = NULL;
    for (int t = 0; t < TABLE_LEN; t++) {
        const hr_entry *e = &table[t];
        if (e->kind != kind || !runs_on(e, backend, dim)) continue;
        if (name) {
            if (strcmp(name, e->name) == 0) return e;
        } else if (e->caps & HR_CAP_DEFAULT) {
            return e;
        } else if (!first && !(e->caps & HR_CAP_REDBLACK)) {
            first = e; /* a default (no name) is never a red-black-only kernel */
        }
    }
    return first;
}

const hr_entry *hri_entry_by_id(hr_kind kind, int id, int mg)
{
    for (int t = 0; t < TABLE_LEN; t++)
        if (table[t].kind == kind && table[t].id == id &&
            (kind != HR_KIND_METHOD || mg < 0 || !(table[t].caps & HR_CAP_MG_HANDLE) == !mg))
            return &table[t];
    return NULL;
}

size_t hri_entry_names(hr_kind kind, hr_backend backend, int dim, unsigned need, unsigned avoid,
                      const char *sep, const char *last, char *buf, size_t size)
{
    const hr_entry *pick[64];
    int n = 0;
    for (int t = 0; t < TABLE_LEN && n < 64; t++) {
        const hr_entry *e = &table[t];
        if (e->kind != kind || !runs_on(e, backend, dim) || (e->caps & need) != need || (e->caps & avoid))
            continue;
        int seen = 0;
        for (int q = 0; q < n && !seen; q++)
            seen = strcmp(pick[q]->name, e->name) == 0;
        if (!seen) pick[n++] = e;
    }
    size_t len = 0;
    if (size) buf[0] = '\0';
    for (int q = 0; q < n && len + 1 < size; q++) {
        const int w = snprintf(buf + len, size - len, "%s%s",
                               q == 0       ? ""
                               : q == n - 1 ? last
                                            : sep,
                               pick[q]->name);
        len = w < 0 ? len : len + (size_t)w < size ? len + (size_t)w : size - 1;
    }
    return len;
}

const hr_entry *hri_kernel_find(hr_backend b, const char *name, int dim)
{
    const hr_entry *e = b == HR_BACKEND_AUTO ? NULL : hri_entry_find(HR_KIND_KERNEL, b, name, dim == 3 ? 3 : 2);
    return e && e->kernel ? e : NULL; /* the general engine's lines are not hr_solver's */
}

const hr_entry *hri_kernel_find_redblack(hr_backend b, int dim)
{
    const unsigned need = (dim == 3 ? HR_CAP_3D : HR_CAP_2D) | HR_CAP_REDBLACK;
    for (int t = 0; t < TABLE_LEN; t++)
        if (table[t].kind == HR_KIND_KERNEL && table[t].kernel && table[t].backend == b &&
            (table[t].caps & need) == need)
            return &table[t];
    return NULL;
}

/* ------------------------------------------------------------------ public */

static void describe(const hr_entry *e, hr_entry_info *out)
{
    out->name = e->name;
    out->backend = e->backend;
    out->summary = e->summary;
    out->caps = e->caps;
    out->kind = e->kind;
    out->problems = e->problems;
    out->id = e->id;
}

const char *hr_kind_name(hr_kind kind)
{
    static const char *const names[HR_KIND_COUNT] = {"kernel", "method", "smoother", "sparse method"};
    return (unsigned)kind < HR_KIND_COUNT ? names[kind] : NULL;
}

int hr_registry_count(hr_kind kind)
{
    int n = 0;
    for (int t = 0; t < TABLE_LEN; t++)
        n += table[t].kind == kind;
    return n;
}

hr_status hr_registry_info_at(hr_kind kind, int i, hr_entry_info *out)
{
    const hr_entry *e = hri_entry_at(kind, i);
    if (!e || !out) return HR_ERR_INVALID_ARG;
    describe(e, out);
    return HR_OK;
}

hr_status hr_registry_find(hr_kind kind, hr_backend backend, const char *name, int dim, hr_entry_info *out)
{
    if (!out || (unsigned)backend >= HR_BACKEND_COUNT || (dim != 0 && dim != 2 && dim != 3))
        return HR_ERR_INVALID_ARG;
    const hr_entry *e = hri_entry_find(kind, backend, name, dim);
    if (!e) return HR_ERR_INVALID_ARG;
    describe(e, out);
    return HR_OK;
}

const char *hr_registry_default(hr_kind kind, hr_backend backend, int dim)
{
    if ((unsigned)backend >= HR_BACKEND_COUNT || (dim != 0 && dim != 2 && dim != 3)) return NULL;
    if (kind == HR_KIND_KERNEL) return hr_kernel_default(backend, dim == 3 ? 3 : 2);
    const hr_entry *e = hri_entry_find(kind, backend, NULL, dim);
    return e ? e->name : NULL;
}

int hr_kernel_count(void)
{
    return hr_registry_count(HR_KIND_KERNEL);
}

hr_status hr_kernel_info_at(int i, hr_kernel_info *out)
{
    return hr_registry_info_at(HR_KIND_KERNEL, i, out);
}
