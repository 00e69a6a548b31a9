/*
 * The registry's entries as the library sees them: the public description (hr_entry_info)
 * plus the entry points of the variant. The entries themselves are the lines of
 * src/core/registry.def; this header only says what one is and how to look it up.
 */
#ifndef HR_REGISTRY_H
#define HR_REGISTRY_H

#include <stddef.h>

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entry points per kind (defined next to the code that uses them). */
struct hr_kernel_ops;   /* core/solver_internal.h: a sweep kernel of hr_solver */
struct hr_sparse_ops;   /* methods/sparse/sparse_internal.h: a method of hr_sparse_solver */
struct hr_smoother_ops; /* methods/mg/mg_smoother.h: a smoothing step of hr_mg */

typedef struct hr_entry {
    /* as hr_entry_info, field for field */
    const char *name;
    hr_backend backend;
    const char *summary;
    unsigned caps;
    hr_kind kind;
    unsigned problems;
    int id;
    /* the entry points of its kind (NULL for the others; methods have none: their handle
     * runs them) */
    const struct hr_kernel_ops *kernel;
    const struct hr_sparse_ops *sparse;
    const struct hr_smoother_ops *smoother;
    const void *data; /* what shared entry points need per variant (a GPU kernel family) */
} hr_entry;

/* Entry i of `kind` in registry order, or NULL past the end. */
const hr_entry *hri_entry_at(hr_kind kind, int i);

/* As hr_registry_find (hetrelax.h): NULL when there is none. */
const hr_entry *hri_entry_find(hr_kind kind, hr_backend backend, const char *name, int dim);

/* The entry of `kind` whose id is `id` (the first one; methods: only those with HR_CAP_MG_HANDLE
 * (mg 1), only those without (mg 0) or either (mg -1)), or NULL. */
const hr_entry *hri_entry_by_id(hr_kind kind, int id, int mg);

/* The distinct names of `kind` that run on `backend` (HR_BACKEND_AUTO: any) in `dim`
 * dimensions (0: any), have every cap of `need` and none of `avoid`, in registry order,
 * joined by `sep` and, before the last, by `last` ("jacobi, redblack or sor"). Returns the
 * length written (truncated to fit `size`). */
size_t hri_entry_names(hr_kind kind, hr_backend backend, int dim, unsigned need, unsigned avoid,
                      const char *sep, const char *last, char *buf, size_t size);

/* Kernels by backend, name and dimension: NULL name picks the backend's default (its first
 * kernel there that is not red-black-only). */
const hr_entry *hri_kernel_find(hr_backend b, const char *name, int dim);
/* The backend's first kernel that runs the red-black methods in dim dimensions (or NULL). */
const hr_entry *hri_kernel_find_redblack(hr_backend b, int dim);

#ifdef __cplusplus
}
#endif
#endif
