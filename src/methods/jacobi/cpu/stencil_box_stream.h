/*
 * The region sweep with streaming (non-temporal) stores of the new grid: the same update,
 * in the same order, as hri_cpu_sweep_box (bitwise the same values), but `out` is written
 * around the caches, so a sweep moves one word read + one word written per point instead of
 * three with write-allocate. Worth it only when the grids are far larger than the caches;
 * ends with a store fence so a following barrier publishes the results.
 */
#ifndef HR_STENCIL_BOX_STREAM_H
#define HR_STENCIL_BOX_STREAM_H

#include "reference/stencil_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

void hri_cpu_sweep_box_stream(const hr_sweep_args *a);

#ifdef __cplusplus
}
#endif
#endif
