/*
 * The stored-stencil operator: the general-problem engine's matrix on a box of unknowns.
 * Every structured problem (hetrelax/problem.h: any extents, lengths, boundary conditions,
 * coefficient field) is one of these on the finest level; multigrid's coarse levels are
 * too (their Galerkin products have the 9- or 27-point box stencil).
 *
 * Arrays are padded by one ghost layer per side of every axis, so a sweep reads its
 * neighbours without tests: along an axis that is not periodic the ghosts hold 0 (the
 * Dirichlet values are in b, a Neumann face has no outer neighbour), along a periodic axis
 * a copy of the far side (hri_st_fill_ghosts before every read).
 *
 * A is symmetric and stored by halves: the diagonal and, for each "positive" offset o_k,
 * c[k][p] = A(p, p + o_k); the row of p is
 *     (A u)_p = diag_p u_p + sum_k (c[k][p] u_{p + o_k} + c[k][p - o_k] u_{p - o_k}).
 * A coefficient whose neighbour lies outside (non-periodic) is 0.
 */
#ifndef HR_STENCIL_OP_H
#define HR_STENCIL_OP_H

#include <stddef.h>

#include "hetrelax/hetrelax.h"

#define HR_ST_MAX_HALF 13 /* (27 - 1) / 2: the 3-D box stencil */

/* A box of unknowns with its ghost layer. */
typedef struct hr_sgrid {
    int dim;
    int n[3];         /* unknowns per axis (n[2] = 1 in 2-D) */
    int periodic[3];  /* per axis */
    ptrdiff_t st[3];  /* strides of the padded array: 1, P0, P0 P1 */
    size_t padded;    /* length of a padded array */
    size_t count;     /* unknowns */
    ptrdiff_t origin; /* index of unknown (0, 0, 0) */
    /* the whole grid this box is part of (a rank's slab): the box's offset, and the whole
     * axis's extent and periodicity (what the colours of Gauss-Seidel follow) */
    int goff[3], gn[3], gper[3];
} hr_sgrid;

typedef struct hr_sop {
    hr_sgrid g;
    int nk;                     /* half offsets: dim (the star stencil) or (3^dim - 1) / 2 (box) */
    int off[HR_ST_MAX_HALF][3]; /* the offsets o_k */
    ptrdiff_t doff[HR_ST_MAX_HALF];
    double *diag;              /* padded */
    double *exc;               /* star stencils: diag + the row's couplings (its Dirichlet part), so
                                  that (A u)_p = exc_p u_p + sum c (u_q - u_p) is computed from
                                  differences: no cancellation where a is large (1e6 contrasts);
                                  NULL on box stencils */
    double *c[HR_ST_MAX_HALF]; /* padded */
    /* star stencils whose diagonal and couplings per axis are one value everywhere (a constant
     * coefficient, one spacing per axis, Dirichlet or periodic faces): kernels read these
     * scalars instead of the arrays (a coupling to a ghost multiplies its 0) */
    int uniform;
    double ud, uc[3];
    /* rows that are all one row (its diagonal, exc and couplings in and out the same, bitwise):
     * the box [rlo, rhi) per axis of a whole grid (none: rlo = rhi), and that row's values; the
     * CPU kernels read these scalars there (a constant coefficient: all but the faces' layers) */
    int rlo[3], rhi[3];
    double rd, rexc, rc[HR_ST_MAX_HALF], rcm[HR_ST_MAX_HALF];
} hr_sop;

void hri_sgrid_init(hr_sgrid *g, int dim, const int n[3], const int periodic[3]);

static inline ptrdiff_t hr_sgrid_index(const hr_sgrid *g, int i, int j, int k)
{
    return g->origin + i + j * g->st[1] + k * g->st[2];
}

/* The index in g along axis a of the whole grid's index i: a slab's ghost rows included, and
 * across a periodic wrap the copy next to the slab. */
static inline int hr_sgrid_local(const hr_sgrid *g, int a, int i)
{
    int t = i - g->goff[a];
    if (g->gper[a] && g->n[a] != g->gn[a]) {
        if (t < -1)
            t += g->gn[a];
        else if (t > g->n[a])
            t -= g->gn[a];
    }
    return t;
}

/* Allocates A on g with the star (box = 0) or the box stencil, all zero. */
hr_status hri_sop_alloc(hr_sop *A, const hr_sgrid *g, int box);
/* A's grid and offsets, a star (box 0) or box stencil, with no arrays (A zeroed first). */
void hri_sop_shape(hr_sop *A, const hr_sgrid *g, int box);
void hri_sop_free(hr_sop *A);

/* A padded array of g, zeroed (NULL when it does not fit). */
double *hri_sgrid_alloc(const hr_sgrid *g);

/* Copies the far sides into the ghosts of the periodic axes (nothing when there are none). */
void hri_st_fill_ghosts(const hr_sgrid *g, double *u);

/* Between the grid array layout (unknowns, x fastest) and a padded array. */
void hri_sgrid_pack(const hr_sgrid *g, const double *padded, double *dst);
void hri_sgrid_unpack(const hr_sgrid *g, const double *src, double *padded);

/* The discrete system of a validated problem (hetrelax/problem.h): A on the star stencil
 * (A may be NULL), and b padded (may be NULL) from f at every unknown (f NULL: the problem's
 * right-hand side), projected when the problem is singular (info may be NULL). */
hr_status hri_discretize(const hr_problem *p, const double *f, hr_sop *A, double *b, hr_system_info *info);

/* Sets A->uniform (and its scalars) when A's star stencil is one value per axis. */
void hri_sop_detect_uniform(hr_sop *A);

/* A problem whose operator is a uniform star on g (a constant coefficient, no Neumann face):
 * A gets its shape and the scalars hri_discretize_part and hri_sop_detect_uniform would give,
 * and no arrays (returns 1). Otherwise 0 and A is untouched. */
int hri_sop_uniform_of(const hr_problem *p, const hr_sgrid *g, hr_sop *A);

/* The part of the discrete system on rows [lo, hi) of the last axis (a slab of MPI ranks; the
 * whole grid: 0 and its extent): A and b on that slab's padded grid, whose last axis is
 * periodic only when the slab is the whole axis (a cut one wraps through the neighbours'
 * rows: the coupling across the low cut is stored in the ghost row). f NULL: the problem's;
 * else f at every unknown of the whole grid. line_b / line_v (may be NULL): per line of the
 * slab, the sum of b and of the cells' volume fractions (the singular projection's sums,
 * added line by line in order). No projection. */
hr_status hri_discretize_part(const hr_problem *p, int lo, int hi, const double *f, hr_sop *A, double *b,
                             double *line_b, double *line_v);
/* The same, its lines split among a team's threads (team NULL: the calling thread); the same
 * values for any team. */
struct hr_team;
hr_status hri_discretize_part_on(struct hr_team *team, const hr_problem *p, int lo, int hi, const double *f,
                                hr_sop *A, double *b, double *line_b, double *line_v);
/* Removes from a slab's b the constant bsum / vsum per unit volume (the projection of a
 * singular problem); per line of the slab, line_nb and line_nd get ||b||^2 and
 * ||removed||^2; *shift the constant. */
void hri_discretize_project(const hr_problem *p, int lo, int hi, double bsum, double vsum, double *b,
                           double *line_nb, double *line_nd, double *shift);

/* The problem's right-hand side f at every unknown (the grid array layout). */
hr_status hri_problem_f(const hr_problem *p, double *f);

#endif
