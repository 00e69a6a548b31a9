/* Instantiates the region sweep and residual for float and double from one source. */
#include <stddef.h>

#include "methods/jacobi/cpu/jacobi2d_cpu.h"
#include "reference/stencil_cpu.h"

#define T           float
#define HR_FN(name) name##_f32
#include "reference/stencil_box_impl.h"
#undef T
#undef HR_FN

#define T           double
#define HR_FN(name) name##_f64
#include "reference/stencil_box_impl.h"
#undef T
#undef HR_FN

void hri_cpu_sweep_box(const hr_sweep_args *a)
{
    if (hr_box_empty(&a->box)) return;
    if (a->l->esize == 8)
        sweep_box_f64(a);
    else
        sweep_box_f32(a);
}

void hri_cpu_residual_box(const hr_resid_args *a, hr_norm2 *rnorm, hr_norm2 *bnorm)
{
    *rnorm = (hr_norm2){0.0, 0.0};
    *bnorm = (hr_norm2){0.0, 0.0};
    if (a->rmax) *a->rmax = 0.0;
    if (hr_box_empty(&a->box)) return;
    if (a->l->esize == 8)
        residual_box_f64(a, rnorm, bnorm);
    else
        residual_box_f32(a, rnorm, bnorm);
}
