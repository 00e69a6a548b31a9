/*
 * The GPU placement of the hybrid split (src/parallel/hybrid/place.h): the part's rows (2-D) or
 * planes (3-D) with their ghost layers on the device in the subdomain layout, swept by
 * the `tuned` region sweeps (gpu_region.h) on two streams: a high-priority one for the
 * boundary rows and their pinned copies, a low-priority one for the interior, so the
 * boundary work is not queued behind the interior's blocks (the no-overlap problem of
 * Sourouri et al.'s fig. 2). Built only with CUDA; src/runtime/nocuda.c otherwise.
 */
#ifndef HR_HYBRID_GPU_H
#define HR_HYBRID_GPU_H

#include "parallel/hybrid/place.h"

/* hri_place_gpu_create() and hri_place_gpu_roundtrip() are declared in hybrid/place.h. */

#endif
