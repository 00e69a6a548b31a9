/* cpu-seq: the sequential reference sweep over the whole interior (Venkatasubramanian & Vuduc, fig. 1), 2-D
 * and 3-D: one region sweep whose box is the interior. */
#include "reference/stencil_cpu.h"
#include "core/solver_internal.h"

static hr_status seq_setup(hr_solver *s)
{
    hri_solver_init_rows(s, 0, hr_layout_outer(&s->u[0].l));
    return HR_OK;
}

static hr_status seq_sweeps(hr_solver *s, long count)
{
    hr_sweep_args a = {&s->u[0].l, NULL, NULL, hri_solver_rhs_view(s), hr_box_interior(&s->u[0].l),
                       s->p.omega};
    for (long t = 0; t < count; t++) {
        a.in = hr_grid_origin(&s->u[s->cur]);
        a.out = hr_grid_origin(&s->u[1 - s->cur]);
        hri_cpu_sweep_box(&a);
        s->cur = 1 - s->cur;
    }
    return HR_OK;
}

const hr_kernel_ops hri_kernel_seq = {
    .setup = seq_setup,
    .sweeps = seq_sweeps,
};
