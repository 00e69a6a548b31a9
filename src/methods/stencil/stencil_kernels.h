/*
 * What every backend of the general-problem engine provides: the sweeps, the residual, the
 * grid transfers and the vector steps of CG, on stored-stencil operators (stencil_op.h).
 * The algorithms (relaxation, CG, the multigrid cycle) are written once over these calls in
 * stencil_mg.c and stencil_engine.c.
 *
 * Reductions are summed per grid line (a row of x, for every y and z) and then line by line
 * in order, so every thread count gives the sequential run's bits.
 */
#ifndef HR_STENCIL_KERNELS_H
#define HR_STENCIL_KERNELS_H

#include "core/internal_api.h"
#include "methods/stencil/stencil_op.h"
#include "runtime/cpu/team.h"

/* Where kernels run: a thread team (NULL: the calling thread) and its scratch for the
 * per-line partial sums (at least the finest level's lines); a GPU backend's state. */
typedef struct hr_st_comm hr_st_comm;
typedef struct hr_st_exec {
    hr_team *team;
    double *part;
    size_t part_len;
    void *dev;              /* the CUDA backend's stream, scratch and reduction buffers */
    const hr_st_comm *comm; /* MPI ranks (NULL: one process) */
    int quiet;              /* set: residuals skip their norm (multigrid's cycle does not read it) */
} hr_st_exec;

/* A grid cut into slabs of its last axis, one per MPI rank (src/parallel/mpi/): the kernels
 * fill the cut's ghost rows before they read neighbours, and sum every rank's per-line
 * partials in the whole grid's line order, so that each rank gets the one-process sum's bits. */
struct hr_st_comm {
    void *ctx;
    size_t count;   /* unknowns of the whole grid */
    int rank, size; /* this rank, and how many */
    const int *cut; /* size + 1 bounds: rank r holds rows [cut[r], cut[r + 1]) of the last axis */
    /* fills the ghost rows of the last axis of x (its neighbours' edge rows, or the far side
     * across a cut periodic axis) */
    void (*halo)(void *ctx, const hr_sgrid *g, double *x);
    /* the sum of every rank's `lines` partials, in the whole grid's line order */
    double (*sum)(void *ctx, const double *part, size_t lines);
    /* the sum of one value per rank, in rank order */
    double (*sum_ranks)(void *ctx, double v);
    /* rank 0's dst (count values, the grid array layout) from every rank's packed slab */
    hr_status (*gather)(void *ctx, const double *slab, size_t slab_count, double *dst, size_t count);
    /* every rank's top `up` rows of x (padded rows, the last axis) into the rank above's
     * `below` (lowest row first), every rank's bottom `down` rows into the rank below's
     * `above`; a buffer with no neighbour (a face) is left as it was */
    void (*edge_rows)(void *ctx, const hr_sgrid *g, const double *x, int up, double *below, int down,
                      double *above);
    /* in place: rank r's counts[r] values at buf + displs[r] to every rank */
    void (*allgather)(void *ctx, double *buf, const int *counts, const int *displs);
    /* 1 when v is nonzero on every rank */
    int (*all)(void *ctx, int v);
    /* rank 0's n values to every rank */
    void (*bcast)(void *ctx, double *v, int n);
    /* GPU ranks, one per device: the halo rows go device to device by NCCL on the backend's
     * stream (NULL: through pinned host rows and `halo`); the neighbours along the cut axis
     * (-1 at a face) */
    struct hr_nccl_rows *nccl;
    int below, above;
};

/* The prolongation along one axis of a level (whole-grid indices: a slab's kernels add its
 * offset first, hr_sgrid_local after): fine index i takes w0 * coarse[i0] +
 * w1 * coarse[i1] (i1 < 0: one term); an axis that is not coarsened is the identity. Its
 * transpose (restriction): coarse I gathers rw[I][t] * fine[ri[I][t]], t < rn[I] (<= 3). */
typedef struct hr_st_axis {
    int coarsen; /* 0: identity */
    int nf, nc;
    int first; /* the fine index of coarse point 0 (coarse point I is fine point first + 2 I) */
    int *i0, *i1;
    double *w0, *w1;
    int (*ri)[3];
    double (*rw)[3];
    int *rn;
    /* a backend's twin may set these: the fine indices [plo, phi) whose prolongation terms are
     * the standard ones (hr_st_prolong_standard) and the coarse ones [rlo, rhi) whose restriction
     * terms are (hr_st_restrict_standard), so its kernels compute them there instead of reading
     * the tables (empty: lo = hi) */
    int plo, phi, rlo, rhi;
} hr_st_axis;

/* Where the cell of an unknown is halved (a Neumann face's points): axis a's first point when
 * half_lo[a], its last (index n[a] - 1) when half_hi[a]; the volume is 0.5 per such face. */
typedef struct hr_st_vol {
    int half_lo[3], half_hi[3];
    int n[3];
} hr_st_vol;

/* One axis's (index, weight) terms: of fine index i under the prolongation, of coarse index I
 * under the restriction; the identity where the axis is not coarsened. */
static inline int hr_st_prolong_terms(const hr_st_axis *a, int i, int idx[2], double w[2])
{
    if (!a->coarsen) return idx[0] = i, w[0] = 1.0, 1;
    idx[0] = a->i0[i], w[0] = a->w0[i];
    if (a->i1[i] < 0) return 1;
    idx[1] = a->i1[i], w[1] = a->w1[i];
    return 2;
}

static inline int hr_st_restrict_terms(const hr_st_axis *a, int I, int idx[3], double w[3])
{
    if (!a->coarsen) return idx[0] = I, w[0] = 1.0, 1;
    for (int t = 0; t < a->rn[I]; t++)
        idx[t] = a->ri[I][t], w[t] = a->rw[I][t];
    return a->rn[I];
}

/* Whether a coarsened axis's transfer is the standard one: at coarse index I the full weighting
 * 1/2, 1, 1/2 centred on fine first + 2 I; at fine index i the coarse point's value, or half
 * each of the two around it (what the interior of any grid has; the kernels' and the Galerkin
 * product's shortcuts use these weights as constants there). */
static inline int hr_st_restrict_standard(const hr_st_axis *a, int I)
{
    const int f = a->first + 2 * I;
    if (a->rn[I] != 3) return 0;
    for (int t = 0; t < 3; t++)
        if (a->ri[I][t] != f - 1 + t || a->rw[I][t] != (t == 1 ? 1.0 : 0.5)) return 0;
    return 1;
}

static inline int hr_st_prolong_standard(const hr_st_axis *a, int i)
{
    const int s = a->first;
    if (((i - s) & 1) == 0) return a->i0[i] == (i - s) / 2 && a->w0[i] == 1.0 && a->i1[i] < 0;
    return a->i0[i] == (i - 1 - s) / 2 && a->w0[i] == 0.5 && a->i1[i] == a->i0[i] + 1 && a->w1[i] == 0.5;
}

/* The sum of ex->part over `lines` lines, every rank's in the whole grid's order (0 when
 * ex->quiet). */
double hri_st_sum_lines(const hr_st_exec *ex, size_t lines);
/* r = b - A u (u's periodic ghosts filled first); returns ||r||^2. r may be NULL (norm only). */
double hri_st_residual(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double *r);
/* q = A p (p's ghosts filled first); returns p . q. */
double hri_st_apply_dot(hr_st_exec *ex, const hr_sop *A, double *p, double *q);
/* One weighted Jacobi sweep: out = u + omega (b - A u) / diag. */
void hri_st_jacobi(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double *out, double omega);
/* Chebyshev step: out = u + alpha (b - A u) / diag + beta (u - prev) (prev may alias out). */
void hri_st_cheby(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, const double *prev,
                  double *out, double alpha, double beta);
/* Gauss-Seidel (SOR: omega) on the points of colour `colour` (hri_st_colours), in place. */
void hri_st_colour_sweep(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double omega,
                         int colour);
/* A whole sweep of the colours in order (reverse: backwards). */
void hri_st_gs_sweep(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double omega, int reverse);
/* The colours of A's grid in their forward order (a point's colour has no neighbour of
 * that colour in A's stencil; on the star stencil the order is red-black's): their count,
 * and each colour's class per axis in cls[c][axis] (0, 1, or 2: the last point of an odd
 * periodic axis). */
int hri_st_colours(const hr_sop *A, int cls[27][3]);
/* bc = R rf (the transpose of the prolongation; rf's ghosts are not read). */
void hri_st_restrict(hr_st_exec *ex, const hr_sgrid *fg, const hr_sgrid *cg, const hr_st_axis ax[3],
                     const double *rf, double *bc);
/* uf += P ec. */
void hri_st_prolong_add(hr_st_exec *ex, const hr_sgrid *fg, const hr_sgrid *cg, const hr_st_axis ax[3],
                        const double *ec, double *uf);
/* Vector steps of CG over the unknowns (ghosts untouched): */
double hri_st_dot(hr_st_exec *ex, const hr_sgrid *g, const double *x, const double *y);
/* x += alpha p, r -= alpha q; returns r . r */
double hri_st_update(hr_st_exec *ex, const hr_sgrid *g, double *x, double *r, const double *p,
                     const double *q, double alpha);
/* p = z + beta p */
void hri_st_xpay(hr_st_exec *ex, const hr_sgrid *g, const double *z, double *p, double beta);
/* x = 0 over the whole padded array */
void hri_st_zero(const hr_sgrid *g, double *x);
/* The sum of x over the unknowns and x -= mean (a singular problem's zero-mean solution). */
void hri_st_remove_mean(hr_st_exec *ex, const hr_sgrid *g, double *x);

/* A residual asked of a pair of sweeps (gs_pair, prolong_gs_pair) of the iterate they leave:
 * r = b - A u into r (NULL: not stored) and, with rr, ||r||^2 into *rr (the residual kernel's
 * value to rounding). A backend that takes it in its second sweep sets done; otherwise the
 * caller computes it. */
typedef struct hr_st_after {
    double *r, *rr;
    int done;
} hr_st_after;

/* A backend: the kernels above plus memory, as a table, so that the algorithms run on the
 * CPU (hri_st_cpu) or a GPU (hri_st_cuda_backend()) unchanged. Arrays and operators passed to
 * a backend's kernels live where it computes (a level's operator and transfer tables have a
 * host copy and, on a GPU, a device twin). */
typedef struct hr_st_backend {
    const char *name;
    /* a padded array of g, zeroed (NULL: no memory) */
    double *(*alloc)(hr_st_exec *ex, const hr_sgrid *g);
    void (*release)(hr_st_exec *ex, double *x);
    /* whole padded arrays between the host and the backend's memory */
    void (*upload)(hr_st_exec *ex, const hr_sgrid *g, double *dst, const double *host);
    void (*download)(hr_st_exec *ex, const hr_sgrid *g, double *host, const double *src);
    void (*copy)(hr_st_exec *ex, const hr_sgrid *g, double *dst, const double *src);
    void (*zero)(hr_st_exec *ex, const hr_sgrid *g, double *x);
    /* the twin of a host operator / transfer table (CPU: a shallow copy), and its release */
    hr_status (*twin_op)(hr_st_exec *ex, const hr_sop *host, hr_sop *out);
    void (*free_op)(hr_st_exec *ex, hr_sop *op);
    hr_status (*twin_axis)(hr_st_exec *ex, const hr_st_axis *host, hr_st_axis *out);
    void (*free_axis)(hr_st_exec *ex, hr_st_axis *ax);
    double (*residual)(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double *r);
    double (*apply_dot)(hr_st_exec *ex, const hr_sop *A, double *p, double *q);
    void (*jacobi)(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double *out, double omega);
    void (*cheby)(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, const double *prev,
                  double *out, double alpha, double beta);
    void (*colour_sweep)(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double omega,
                         int colour);
    void (*restrict_)(hr_st_exec *ex, const hr_sgrid *fg, const hr_sgrid *cg, const hr_st_axis ax[3],
                      const double *rf, double *bc);
    void (*prolong_add)(hr_st_exec *ex, const hr_sgrid *fg, const hr_sgrid *cg, const hr_st_axis ax[3],
                        const double *ec, double *uf);
    double (*dot)(hr_st_exec *ex, const hr_sgrid *g, const double *x, const double *y);
    double (*update)(hr_st_exec *ex, const hr_sgrid *g, double *x, double *r, const double *p,
                     const double *q, double alpha);
    void (*xpay)(hr_st_exec *ex, const hr_sgrid *g, const double *z, double *p, double beta);
    void (*remove_mean)(hr_st_exec *ex, const hr_sgrid *g, double *x);
    /* the backend's state in ex->dev (NULL: none needed) and its release */
    hr_status (*open)(hr_st_exec *ex, int device, size_t max_lines);
    void (*close)(hr_st_exec *ex);
    /* optional: a whole Gauss-Seidel sweep, the colours in order (reverse: backwards), the
     * same updates as colour_sweep over every colour; NULL: colour_sweep colour by colour */
    void (*gs_sweep)(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double omega, int reverse);
    /* MPI ranks (ex->comm): the ghost rows of the last axis of x from the neighbours' edge rows */
    void (*halo)(hr_st_exec *ex, const hr_sgrid *g, double *x);
    /* in place: every rank's part of x (a padded array of the whole grid g; counts and displs
     * in values, rank r's at displs[r]) to every rank */
    void (*allgather)(hr_st_exec *ex, const hr_sgrid *g, double *x, const int *counts, const int *displs);
    /* optional (a GPU backend, one process): the caller's arrays in the backend's memory, the
     * unknowns x fastest with no padding, fp64 or fp32 (single). dense_in: dst (padded) = src,
     * zero elsewhere. dense_out: dst = src's unknowns, waited for (HR_OK, or the backend's first
     * failure since open, its text in why). rhs_in: b = b0 + vol f at
     * every unknown (b0: b with f = 0, the boundary's part), as hri_discretize forms it; with
     * line_b, also the per-line sums of b and of vol into the host arrays line_b and line_v.
     * project: b -= c vol, and the per-line sums of b^2 before and (c vol)^2 into the host
     * arrays (hri_discretize_project). NULL: the backend takes host arrays only. */
    void (*dense_in)(hr_st_exec *ex, const hr_sgrid *g, double *dst, const void *src, int single);
    hr_status (*dense_out)(hr_st_exec *ex, const hr_sgrid *g, void *dst, const double *src, int single,
                           char *why, size_t why_size);
    void (*rhs_in)(hr_st_exec *ex, const hr_sgrid *g, const hr_st_vol *v, double *b, const double *b0,
                   const void *f, int single, double *line_b, double *line_v);
    void (*project)(hr_st_exec *ex, const hr_sgrid *g, const hr_st_vol *v, double *b, double c,
                    double *line_nb, double *line_nd);
    /* MPI ranks: a coarse level stays cut while it has this many unknowns per rank; below, it
     * is whole on every rank (0: the engine's default). A GPU's small levels cost their
     * launches, not their points, so it gathers sooner: fewer exchanges a cycle. */
    size_t dist_min;
    /* optional: two Gauss-Seidel sweeps, the values gs_sweep would make twice, through t (a
     * scratch array of A's grid whose ghosts hold 0): 0 when made, -1 (nothing done) when the
     * backend has no such pass for A; after (NULL: none): a residual it may take as well */
    int (*gs_pair)(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double *t, double omega,
                   int reverse, hr_st_after *after);
    /* optional: u += P ec (prolong_add from the coarse grid cg, the fine level's tables ax), then
     * gs_pair's two sweeps, the prolongation added as the first sweep reads u instead of in a
     * pass of its own; the same values. 0 when made, -1 (nothing done) when the backend has no
     * such pass for A */
    int (*prolong_gs_pair)(hr_st_exec *ex, const hr_sop *A, const hr_sgrid *cg, const hr_st_axis ax[3],
                           const double *ec, double *u, const double *b, double *t, double omega, int reverse,
                           hr_st_after *after);
} hr_st_backend;

extern const hr_st_backend hri_st_cpu;
/* The CUDA backend, or NULL in a build without CUDA (runtime/nocuda.c); internal API: the MPI
 * library asks it too. */
HR_INTERNAL_API const hr_st_backend *hri_st_cuda_backend(void);
/* 1 when this build has the CUDA backend. */
static inline int hr_st_has_cuda(void)
{
    return hri_st_cuda_backend() != NULL;
}

#endif
