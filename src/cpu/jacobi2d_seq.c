/* cpu-seq: the sequential reference sweep over the whole interior (seed 000, fig. 1). */
#include "solver/solver_internal.h"

static hr_status seq_setup(hr_solver *s)
{
    hr_solver_init_rows(s, 0, s->o.n + 2);
    return HR_OK;
}

static hr_status seq_sweeps(hr_solver *s, long count)
{
    const hr_rhs_view rhs = hr_solver_rhs_view(s);
    const int n = s->o.n;
    for (long t = 0; t < count; t++) {
        hr_grid *a = &s->u[s->cur], *b = &s->u[1 - s->cur];
        hr_cpu_sweep(a->l.esize, hr_grid_origin(a), hr_grid_origin(b), rhs, a->l.pitch, 1, n + 1, 1, n + 1);
        s->cur = 1 - s->cur;
    }
    return HR_OK;
}

const hr_kernel_desc hr_kernel_cpu_seq = {
    .name = "seq",
    .backend = HR_BACKEND_CPU_SEQ,
    .summary = "sequential sweep, compiler-vectorised (the reference)",
    .deterministic = 1,
    .setup = seq_setup,
    .sweeps = seq_sweeps,
};
