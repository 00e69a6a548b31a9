/*
 * The 3-D cpu-threads kernel `pencil` (Sourouri et al., section III-A) and its tuning cache.
 *
 * Each thread owns a box of rows x planes (full x rows); it sweeps that box as pencils of
 * `by` rows, streaming each pencil along z, so the three planes of a pencil that a point
 * needs stay in the core's L2 and every input word comes from memory once (plus two halo
 * rows per pencil). The new grid is written with streaming stores when the grids exceed the
 * caches. The pencil height and the store kind come from the tuning cache (hr_cpu_tune), or
 * from a default sized to the L2.
 */
#ifndef HR_JACOBI3D_PENCIL_H
#define HR_JACOBI3D_PENCIL_H

#include <stddef.h>

#include "core/grid.h"
#include "core/solver_internal.h"

extern const hr_kernel_ops hri_kernel_pencil;

/* Sets the pencil height (rows) and store kind of a pencil solver (the tuner's hook);
 * the thread partition and the pages stay where they are. */
hr_status hri_pencil_apply(hr_solver *s, int by, int stream);

/* The untuned choice for a layout whose `threads` threads own `rows` rows each: pencils whose
 * three planes fill about half a core's L2; streaming stores when the grids exceed the
 * threads' share of the LLC (hri_cache_llc_share). */
void hri_pencil_default_choice(const hr_grid_layout *l, int rows, int grids, int threads, int *by,
                              int *stream);

/* The cache's key for this CPU at `threads` threads ("cpu:MODEL:Pt") and its size key
 * (the cube root of the point count, rounded). */
void hri_cpu_tune_key(int threads, char *buf, size_t size);
int hri_cpu_tune_size(const hr_grid_layout *l);

/* The cached choice for (key, kernel, precision) with the nearest size; 1 if found. */
int hri_cpu_cache_lookup(const hr_tuning *t, const char *key, const char *kernel, int dbl, int n, int *by,
                        int *stream);

#endif
