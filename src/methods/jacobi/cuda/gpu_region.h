/*
 * Region sweeps of the `tuned` kernels, for callers that split one sweep into parts
 * (boundary planes or rows first, then the interior on another stream, so that a halo
 * exchange overlaps the interior's compute).
 *
 * Each call sweeps part of the interior: it reads grid g->d_u[g->dcur] and writes
 * g->d_u[1 - g->dcur] on stream `st`, with g's current shape, omega and right-hand side.
 * It does NOT flip g->dcur: a caller sweeps every part of one sweep (on whatever
 * streams), waits for all of them, then flips dcur once. Parts must not overlap; the
 * union of [1, ny + 1) (2-D rows) or [1, nz + 1) (3-D planes) is one whole sweep, bitwise
 * the same as the family's launch. An empty range launches nothing.
 */
#ifndef HR_GPU_REGION_H
#define HR_GPU_REGION_H

#include "runtime/cuda/gpu_internal.cuh"

/* 2-D `tuned`: rows [r0, r1) (1 <= r0, r1 <= ny + 1), every column. */
cudaError_t hri_gpu_tuned2d_rows(hr_gpu *g, int r0, int r1, cudaStream_t st);

/* 3-D `tuned`: planes [k0, k1) (1 <= k0, k1 <= nz + 1), every row and column. */
cudaError_t hri_gpu_tuned3d_planes(hr_gpu *g, int k0, int k1, cudaStream_t st);

#endif
