/* The multigrid smoothers over the backends' level operations (mg_smoother.h). */
#include "methods/mg/mg_smoother.h"

static void jacobi(const mg_level_ops *ops, void *ctx, int l, int step, int reverse)
{
    (void)step, (void)reverse;
    ops->jacobi(ctx, l);
}

/* red then black; the adjoint (post-smoothing of a symmetric cycle): black then red */
static void redblack(const mg_level_ops *ops, void *ctx, int l, int step, int reverse)
{
    (void)step;
    ops->redblack(ctx, l, reverse ? 1 : 0);
}

static void cheby(const mg_level_ops *ops, void *ctx, int l, int step, int reverse)
{
    (void)reverse;
    ops->cheby(ctx, l, step);
}

/* asynchronous tile passes where the backend has them (the GPU's big levels), red-black
 * elsewhere; not symmetric, so never reversed (pc mg refuses it) */
static void async3(const mg_level_ops *ops, void *ctx, int l, int step, int reverse)
{
    if (!ops->async || !ops->async(ctx, l)) redblack(ops, ctx, l, step, reverse);
}

const hr_smoother_ops hri_smoother_jacobi = {jacobi, 0};
const hr_smoother_ops hri_smoother_redblack = {redblack, 0};
const hr_smoother_ops hri_smoother_cheby = {cheby, 1};
const hr_smoother_ops hri_smoother_async3 = {async3, 0};
