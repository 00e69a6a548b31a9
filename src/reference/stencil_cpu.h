/*
 * Region sweeps and residuals on the CPU: the operator layer every CPU client uses
 * (the whole-grid kernels, subdomains of a decomposition, the CPU share of a hybrid
 * split, multigrid levels). A region sweep is handed its grids and a box and never owns
 * them; the whole-interior run is one box.
 */
#ifndef HR_STENCIL_CPU_H
#define HR_STENCIL_CPU_H

#include <float.h>
#include <math.h>

#include "core/stencil.h"
#include "core/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A box of points, half-open per axis: axis 0 = j (x), 1 = i (y), 2 = k (z; [0, 1) in 2-D). */
typedef struct hr_box {
    int lo[3], hi[3];
} hr_box;

/* The whole interior of a layout. */
static inline hr_box hr_box_interior(const hr_grid_layout *l)
{
    hr_box b = {{1, 1, l->dim == 3 ? 1 : 0}, {l->nx + 1, l->ny + 1, l->dim == 3 ? l->nz + 1 : 1}};
    return b;
}

static inline int hr_box_empty(const hr_box *b)
{
    return b->lo[0] >= b->hi[0] || b->lo[1] >= b->hi[1] || b->lo[2] >= b->hi[2];
}

/* One sweep over `box`: reads `in`, writes `out` (and reads the rhs), all on layout l. */
typedef struct hr_sweep_args {
    const hr_grid_layout *l;
    const void *in; /* element (0, 0, 0) */
    void *out;
    hr_rhs_view rhs;
    hr_box box;
    double omega; /* 1: plain Jacobi (bitwise the unweighted update) */
} hr_sweep_args;

void hri_cpu_sweep_box(const hr_sweep_args *a);

/* A 2-norm kept as scale * sqrt(ssq), so that neither huge nor tiny values overflow or
 * underflow when squared (the LAPACK dnrm2 idea). Partial norms combine exactly. */
typedef struct hr_norm2 {
    double scale, ssq;
} hr_norm2;

static inline void hr_norm2_add(hr_norm2 *a, hr_norm2 b)
{
    if (b.ssq == 0.0 || b.scale == 0.0) return;
    if (a->ssq == 0.0 || a->scale == 0.0) {
        *a = b;
    } else if (b.scale > a->scale) {
        const double q = a->scale / b.scale;
        a->ssq = b.ssq + a->ssq * q * q;
        a->scale = b.scale;
    } else {
        const double q = b.scale / a->scale;
        a->ssq += b.ssq * q * q;
    }
}

static inline double hr_norm2_value(hr_norm2 a)
{
    return a.scale * sqrt(a.ssq);
}

/* The scale of a scaled pass over values up to `max` (finite, > 0): the power of two 2^e <=
 * max < 2^(e+1), so that v / scale and v * (1 / scale) are the same exact value, but at
 * least DBL_MIN, so that 1 / scale is finite when max is subnormal (1 / 1e-310 is not). */
static inline double hr_norm2_scale(double max)
{
    return max >= DBL_MIN ? ldexp(1.0, ilogb(max)) : DBL_MIN;
}

/* ||r|| / ||b||, or ||r|| when b = 0 (a zero right-hand side and boundary). */
static inline double hr_norm2_relative(hr_norm2 r, hr_norm2 b)
{
    const double bn = hr_norm2_value(b), rn = hr_norm2_value(r);
    if (isnan(rn) || isnan(bn)) return NAN;
    if (bn == 0.0) return rn;
    if (r.scale == 0.0 || r.ssq == 0.0) return 0.0;
    return (r.scale / b.scale) * sqrt(r.ssq / b.ssq);
}

/* Faces of a layout's interior whose outer neighbours are the physical (Dirichlet) boundary;
 * the other faces border ghost cells of another subdomain. */
enum {
    HR_FACE_XLO = 1,
    HR_FACE_XHI = 2,
    HR_FACE_YLO = 4,
    HR_FACE_YHI = 8,
    HR_FACE_ZLO = 16,
    HR_FACE_ZHI = 32,
    HR_FACE_ALL = 63
};

/* Residual norms over `box`: ||r|| and ||b|| (see common/stencil.h). With `r` non-NULL the
 * residual h^2 (f - A u) is also written there (layout l, the grid's precision). */
typedef struct hr_resid_args {
    const hr_grid_layout *l;
    const void *u;
    hr_rhs_view rhs;
    hr_box box;
    unsigned dirichlet; /* HR_FACE_* */
    void *r;
    double *rmax; /* optional: receives max |r| over the box (exact, so any order agrees) */
} hr_resid_args;

void hri_cpu_residual_box(const hr_resid_args *a, hr_norm2 *rnorm, hr_norm2 *bnorm);

#ifdef __cplusplus
}
#endif
#endif
