/*
 * A crew: persistent worker threads that run one job at a time WITHOUT blocking the
 * caller (cpu/team.h's hr_team_run blocks). The hybrid engine starts the CPU part's
 * boundary and interior jobs, drives the GPU and the exchange meanwhile, then waits.
 * Workers spin briefly before sleeping, so a job started every few hundred microseconds
 * does not pay a futex wake-up; an idle crew sleeps.
 */
#ifndef HR_HYBRID_CREW_H
#define HR_HYBRID_CREW_H

#include "hetrelax/hetrelax.h"

typedef struct hr_crew hr_crew;
typedef void (*hr_crew_fn)(void *ctx, int tid, int nthreads);

hr_status hr_crew_create(int nthreads, hr_crew **out);
void hr_crew_free(hr_crew *c);
int hr_crew_size(const hr_crew *c);

/* Waits for the previous job, then starts fn on every worker and returns at once. */
void hr_crew_start(hr_crew *c, hr_crew_fn fn, void *ctx);
/* Returns when the last started job is done (at once if none). */
void hr_crew_wait(hr_crew *c);

#endif
