/*
 * A persistent team of worker threads for SPMD kernels: a job is a function that
 * every worker runs with its own id; workers share one barrier for in-job
 * synchronisation. Threads can be bound one per core: through hwloc where the build has it,
 * else by plain affinity to the process's allowed CPUs, one per core (SMT siblings skipped).
 */
#ifndef HR_TEAM_H
#define HR_TEAM_H

#include <pthread.h>
#include <stddef.h>

#include "core/internal_api.h"
#include "hetrelax/hetrelax.h"

typedef struct hr_team hr_team;
typedef void (*hr_team_fn)(void *ctx, int tid, int nthreads);

hr_status hri_team_create(int nthreads, hr_bind bind, hr_team **out);
void hri_team_free(hr_team *t);
int hri_team_size(const hr_team *t);

/* Runs fn on every worker and returns when all are done. */
void hri_team_run(hr_team *t, hr_team_fn fn, void *ctx);

/* The in-job barrier shared by all workers. */
void hri_team_barrier(hr_team *t);

/* Logical CPUs usable by this process. */
HR_INTERNAL_API int hri_cpu_count(void);
/* Whether this process may run on fewer CPUs than are online (a launcher such as mpiexec
 * bound it to its share). */
HR_INTERNAL_API int hri_cpu_bound(void);

/* 1 when logical CPU c is the first hardware thread of its core (or that is unknown). */
int hri_cpu_first_sibling(int c);

/* Bytes of the last-level cache and of one core's L2 (0: unknown). */
size_t hri_cache_llc_bytes(void);
size_t hri_cache_l2_bytes(void);

/* The part of the last-level cache `threads` threads can count on: the LLC, but at most 4 MiB
 * per thread, since a VM or a busy host shares its LLC with others (a 2-vCPU guest here reports
 * a 480 MiB L3 yet streams a 128 MiB working set from memory). */
size_t hri_cache_llc_share(int threads);

#endif
