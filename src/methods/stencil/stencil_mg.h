/*
 * Multigrid for any structured problem: Galerkin coarse operators (R A P, R = P^T) on
 * coarse grids chosen per level and per axis, so that every extent, boundary condition,
 * spacing ratio and coefficient field gets a hierarchy:
 *
 *  - an axis is coarsened when it has at least 3 points (periodic: when the coarse axis keeps
 *    3) and its couplings are at least half the strongest coarsenable axis's (semi-coarsening
 *    of anisotropic problems, as hypre's PFMG);
 *  - coarse points are every other point, starting at the first unknown next to a Dirichlet
 *    face or on a Neumann face; P is linear interpolation along each coarsened axis (a point
 *    next to a Neumann face with one coarse neighbour takes its value, next to a Dirichlet
 *    face the linear interpolant to the face's 0 at its true distance, which coarsening
 *    tracks), so P keeps constants wherever the problem has no Dirichlet face;
 *  - coarsening stops at 64 unknowns or where no axis can be coarsened; the coarsest level
 *    is solved exactly (dense Cholesky, A + s 1 1^T on a singular problem);
 *  - on MPI ranks (ex->comm) a level is cut into slabs of its last axis as the finest is, the
 *    transfer tables hold whole-grid indices, and small levels are whole on every rank (see
 *    hr_st_level), so that every rank count computes the one-process run's values.
 *
 * The cycle is written once over the kernels of stencil_kernels.h.
 */
#ifndef HR_STENCIL_MG_H
#define HR_STENCIL_MG_H

#include "hetrelax/grid_solver.h"
#include "methods/stencil/stencil_kernels.h"

typedef enum { HR_ST_GS = 0, HR_ST_JACOBI, HR_ST_CHEBY } hr_st_smoother;

typedef struct hr_st_level_comm hr_st_level_comm;

typedef struct hr_st_level {
    hr_sop A;              /* on the host (set-up, the coarsest solve) */
    hr_st_exec ex;         /* where this level's kernels run: its ranks (a cut level) or none */
    hr_sop dA;             /* the backend's twin */
    hr_st_axis dax[3];     /* the backend's twins of ax */
    double *u, *b, *r, *t; /* level 0: u and b are the caller's (set per call) */
    hr_st_axis ax[3];      /* the transfer to the next coarser level */
    int free_lo[3], free_hi[3];
    double gap[3][2]; /* per axis: spacings from the first / last unknown to a Dirichlet face */
    double lmax;      /* Chebyshev: the largest eigenvalue of D^-1 A, estimated */
    /* MPI ranks: a level is cut into slabs of its last axis, one per rank, while every rank
     * keeps at least two rows and enough unknowns; below that it is whole on every rank
     * (gathered from the cut level above it after each restriction) */
    int dist;
    int *cut;              /* size + 1 slab bounds (a cut level, or one gathered from a cut level) */
    int *rows_n, *rows_at; /* the slabs as padded rows of the whole grid (allgather counts, displs) */
    hr_st_level_comm *lc;  /* a cut coarse level's reductions (its slabs' line counts) */
    double *part;          /* the per-line partials of a coarse level */
} hr_st_level;

typedef struct hr_st_mg {
    hr_st_level *lv;
    int nlv;
    hr_st_exec *ex;
    const hr_st_backend *k;
    hr_st_smoother smoother;
    int pre, post;
    double omega; /* the smoother's weight (GS: SOR weight 1; Jacobi: 4/5 or 6/7) */
    hr_cycle cycle;
    int symmetric; /* post-smoothing sweeps the colours backwards: a symmetric cycle */
    int apply;     /* set while preconditioning CG (symmetric too) */
    int singular;
    int constant;  /* the coefficient is one constant (set before hri_st_mg_setup): coarse
                      levels of a star stencil may be its own stencil injected (stencil_mg.c) */
    /* the coarsest level */
    double *chol; /* m x m lower factor, or NULL: smoothing sweeps instead (too large) */
    int m;
    double *cv;     /* m values */
    double *hbuf;   /* the coarsest level's padded b / u on the host */
    hr_sgrid whole; /* a cut coarsest level: the whole grid it is solved on (gathered) */
    double *wbuf;   /* ... and its padded array */
    /* set by the caller before a cycle whose residual it reads next: the cycle's last pass on
     * level 0 may take ||b - A u||^2 as well (rr, rr_ok; rr_ok 0: not taken) */
    int want_rr, rr_ok;
    double rr;
} hr_st_mg;

/* Builds the hierarchy over A0 (taken: freed by hri_st_mg_free; lv[0].A), with free_lo/hi the
 * Neumann faces per axis; max_levels 0: as many as the rules give; tmp0 a padded array of
 * level 0 (the smoothers' second buffer); coarse 0: no coarsest-level solver (one level
 * that only smooths: the relaxation methods and CG). */
hr_status hri_st_mg_setup(hr_st_mg *mg, hr_st_exec *ex, const hr_st_backend *k, hr_sop *A0,
                         const int free_lo[3], const int free_hi[3], int max_levels, int singular,
                         double *tmp0, int coarse);
/* One cycle of mg->cycle on A0 u = b (u updated). fmg: the first cycle of FMG. */
void hri_st_mg_cycle(hr_st_mg *mg, double *u, double *b, int fmg);
/* z = M r: one cycle from z = 0 with symmetric smoothing (the preconditioner of CG). */
void hri_st_mg_apply(hr_st_mg *mg, double *r, double *z);
/* Weighted Jacobi / red-black sweeps on level 0 (relaxation methods): `count` sweeps. */
void hri_st_smooth(hr_st_mg *mg, int level, double *u, const double *b, int count, int reverse);
void hri_st_mg_free(hr_st_mg *mg);

#endif
