/*
 * A crew: persistent worker threads that run one job at a time WITHOUT blocking the
 * caller (cpu/team.h's hri_team_run blocks). The hybrid engine starts the CPU part's
 * boundary and interior jobs, drives the GPU and the exchange meanwhile, then waits.
 * Workers spin briefly before sleeping, so a job started every few hundred microseconds
 * does not pay a futex wake-up; an idle crew sleeps.
 *
 * Pinned crews (first_slot >= 0): worker i runs on slot first_slot + i of the process's
 * allowed CPUs listed one per core first (SMT siblings after), so two crews of one split
 * and the host thread that drives the GPU (slot 0, left free) never share a core; the
 * OS placed unpinned workers anew for every engine, and the same CPU share then ran up
 * to 4x slower in one engine than in the next (run 14d, H100 VM). A pinned crew owns its
 * cores while the split runs, so it spins much longer before sleeping (a VM's futex
 * wake-up costs 100s of us, more than a whole sweep of a small share).
 */
#ifndef HR_HYBRID_CREW_H
#define HR_HYBRID_CREW_H

#include "hetrelax/hetrelax.h"

typedef struct hr_crew hr_crew;
/* One piece of a job: piece `piece` of `pieces` (workers x pieces per worker). */
typedef void (*hr_crew_fn)(void *ctx, int piece, int pieces);

/* first_slot < 0: unpinned; also unpinned when the slots do not fit the allowed CPUs
 * (tu->crew_pin off: never pinned). tu (may be NULL: the defaults) also gives the spin
 * budget, stealing and the trace file. */
hr_status hri_crew_create(int nthreads, int first_slot, const hr_tuning *tu, hr_crew **out);
/* Whether the crew's workers are pinned (each to its own logical CPU). */
int hri_crew_pinned(const hr_crew *c);
/* c and `with` work together (a placement's boundary and interior crews): a pinned crew
 * stops spinning as soon as a pinned crew of another group starts a job. */
void hri_crew_share(hr_crew *c, const hr_crew *with);
/* Logical CPUs a pinned crew can use: the allowed CPUs, one per core counted first. */
int hri_crew_slots(void);
/* The logical CPU of slot `slot` (-1: none). */
int hri_crew_slot_cpu(int slot);
void hri_crew_free(hr_crew *c);
int hri_crew_size(const hr_crew *c);

/* Waits for the previous job, then starts a job of per_worker pieces a worker and returns at
 * once. Worker i runs its own pieces i * per_worker .. in order, then takes those of workers
 * that have not claimed them yet: a worker whose CPU was taken away (a VM's vCPU stopped, an
 * interrupt storm) delays the job by the piece it holds at most, not by its whole share
 * (tuning.crew_steal off: no taking, each worker runs exactly its own pieces). */
void hri_crew_start(hr_crew *c, hr_crew_fn fn, void *ctx, int per_worker);
/* Returns when every piece of the last started job is done (at once if none); a worker that
 * found nothing left may still be returning to its wait. */
void hri_crew_wait(hr_crew *c);

#endif
