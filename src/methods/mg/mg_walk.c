/* The multigrid cycle's recursion over a backend's level operations (mg_walk.h). */
#include "methods/mg/mg_walk.h"

void hri_mg_walk_cycle(const hri_mg_walk *w, int l, hr_cycle type)
{
    if (l > 0 && w->take && w->take(w->ctx, l, type)) return;
    if (l == w->last) {
        w->coarse(w->ctx, l);
        return;
    }
    if (w->pre_down) {
        w->pre_down(w->ctx, l);
    } else {
        w->pre(w->ctx, l);
        w->down(w->ctx, l);
    }
    /* W: two coarse corrections per level; F: an F-cycle then a V-cycle; the coarsest level
     * is solved once */
    switch (type) {
    case HR_CYCLE_W:
        hri_mg_walk_cycle(w, l + 1, HR_CYCLE_W);
        if (l + 1 < w->last) hri_mg_walk_cycle(w, l + 1, HR_CYCLE_W);
        break;
    case HR_CYCLE_F:
        hri_mg_walk_cycle(w, l + 1, HR_CYCLE_F);
        if (l + 1 < w->last) hri_mg_walk_cycle(w, l + 1, HR_CYCLE_V);
        break;
    default: hri_mg_walk_cycle(w, l + 1, HR_CYCLE_V); break;
    }
    if (w->up_post) {
        w->up_post(w->ctx, l);
        return;
    }
    w->up(w->ctx, l, 1);
    w->post(w->ctx, l);
}

void hri_mg_walk_fmg(const hri_mg_walk *w, int add0)
{
    if (w->last == 0) {
        w->coarse(w->ctx, 0);
        return;
    }
    w->down(w->ctx, 0);
    int bottom = w->last;
    for (int l = 1; l <= w->last; l++) {
        if (w->take && w->take(w->ctx, l, HR_CYCLE_FMG)) {
            bottom = l;
            break;
        }
        if (l == w->last)
            w->coarse(w->ctx, l);
        else
            w->fmg_down(w->ctx, l);
    }
    for (int l = bottom - 1; l >= 1; l--) {
        w->up(w->ctx, l, 0);
        for (int c = 0; c < w->fmg_cycles; c++)
            hri_mg_walk_cycle(w, l, HR_CYCLE_V);
    }
    w->up(w->ctx, 0, add0);
    for (int c = 0; c < w->fmg_cycles; c++)
        hri_mg_walk_cycle(w, 0, HR_CYCLE_V);
}
