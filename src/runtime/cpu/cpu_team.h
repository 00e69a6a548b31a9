/* What every threaded 2-D kernel does first: pick its thread grid and start its team. */
#ifndef HR_CPU_TEAM_H
#define HR_CPU_TEAM_H

#include "runtime/cpu/team.h"
#include "core/solver_internal.h"

/* --thread-grid when given, else as square as the thread count (default: all CPUs) allows. */
void hri_cpu_thread_grid(const hr_options *o, int *prow, int *pcol);

/* Starts prow * pcol workers for s (bound as s->o.bind says); on failure records why in s. */
hr_status hri_cpu_open_team(hr_solver *s, int prow, int pcol, hr_team **team);

#endif
