#include "runtime/cpu/cpu_team.h"

void hri_cpu_thread_grid(const hr_options *o, int *prow, int *pcol)
{
    if (o->thread_rows > 0 && o->thread_cols > 0) {
        *prow = o->thread_rows;
        *pcol = o->thread_cols;
    } else {
        hri_thread_grid(o->threads > 0 ? o->threads : hri_cpu_count(), prow, pcol);
    }
}

hr_status hri_cpu_open_team(hr_solver *s, int prow, int pcol, hr_team **team)
{
    const int p = prow * pcol;
    hr_status rc = hri_team_create(p, s->o.bind, team);
    if (rc != HR_OK)
        hri_solver_set_error(s, "threads: cannot start %d threads%s", p,
                            rc == HR_ERR_UNSUPPORTED ? " bound to cores: built without hwloc" : "");
    return rc;
}
