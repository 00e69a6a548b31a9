/*
 * The general-problem engine on several GPUs of one process (general_parts.c): a slab of the
 * last axis per GPU, a thread each, the ranks' hooks answered in shared memory.
 */
#ifndef HR_GENERAL_PARTS_H
#define HR_GENERAL_PARTS_H

#include "hetrelax/hetrelax.h"

/* s prepared for the general engine (hri_gs_prepare): its engine as `parts` slabs, on GPUs
 * options.device .. + parts - 1 with backend gpu (on the CPU backends, threads as ranks: the
 * tests). Sets s->ops and s->engine; on failure s->err says why and s->engine is NULL. */
hr_status hri_gs_general_create_parts(hr_grid_solver *s, const hr_problem *p, int parts);

#endif
