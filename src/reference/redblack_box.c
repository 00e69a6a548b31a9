/* Instantiates the red-black colour sweeps for float and double from one source. */
#include <stddef.h>

#include "methods/redblack/cpu/redblack_cpu.h"

#define T           float
#define HR_FN(name) name##_f32
#include "methods/redblack/cpu/redblack_impl.h"
#undef T
#undef HR_FN
#undef HR_RB_JAC

#define T           double
#define HR_FN(name) name##_f64
#include "methods/redblack/cpu/redblack_impl.h"
#undef T
#undef HR_FN
#undef HR_RB_JAC

void hri_cpu_rb_box(const hr_rb_args *a, const hr_box *box, int colour)
{
    if (hr_box_empty(box)) return;
    if (a->l->esize == 8)
        rb_box_f64(a, box, colour);
    else
        rb_box_f32(a, box, colour);
}

void hri_cpu_rb_box_unrolled(const hr_rb_args *a, const hr_box *box, int colour)
{
    if (hr_box_empty(box)) return;
    if (a->l->esize == 8)
        rb_box_unrolled_f64(a, box, colour);
    else
        rb_box_unrolled_f32(a, box, colour);
}

void hri_cpu_rb_iteration(const hr_rb_args *a)
{
    const hr_box box = hr_box_interior(a->l);
    hri_cpu_rb_box(a, &box, 0);
    hri_cpu_rb_box(a, &box, 1);
}
