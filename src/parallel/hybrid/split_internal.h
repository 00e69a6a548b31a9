/* What the split engine's two files share (split.c: the sweeps and exchanges; split_setup.c:
 * building the parts and the start-up exchange trial). */
#ifndef HR_HYBRID_SPLIT_INTERNAL_H
#define HR_HYBRID_SPLIT_INTERNAL_H

#include <stdio.h>
#include <string.h>

#include "parallel/hybrid/split.h"

#define P_TRY(e, p, call)                                                                                    \
    do {                                                                                                     \
        hr_status p_st_ = (call);                                                                            \
        if (p_st_ != HR_OK) {                                                                                \
            snprintf((e)->err, sizeof(e)->err, "%s", (p)->err[0] ? (p)->err : hr_status_string(p_st_));      \
            return p_st_;                                                                                    \
        }                                                                                                    \
    } while (0)

#define T_TRY(e, call)                                                                                       \
    do {                                                                                                     \
        hr_status t_st_ = (call);                                                                            \
        if (t_st_ != HR_OK) {                                                                                \
            snprintf((e)->err, sizeof(e)->err, "transport: %s", hr_status_string(t_st_));                    \
            return t_st_;                                                                                    \
        }                                                                                                    \
    } while (0)

/* Rows [*r0, *r1) along the split axis of part p's face slab on `side`: `recv` 0 its own
 * rows next to the face, 1 its ghost rows. */
static inline void face_rows(const hr_place *p, int ghost, int side, int recv, int *r0, int *r1)
{
    const hr_box b = hri_subdomain_face(&p->spec.sd, ghost, p->spec.axis, side, recv, 0);
    *r0 = b.lo[p->spec.axis];
    *r1 = b.hi[p->spec.axis];
}

static inline int is_cpu(const hr_place *p)
{
    return strcmp(p->ops->name, "cpu") == 0;
}

#endif
