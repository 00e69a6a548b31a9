/*
 * Multigrid internals: the level hierarchy, the grid operators every level needs
 * (smoothers, residual, restriction, prolongation, coarse solve) and the SPMD schedule.
 *
 * Every operation works on a range of outer slices (rows in 2-D, planes in 3-D) of one
 * level, so a thread team splits it by slices; all operations are pointwise in their
 * inputs, so results do not depend on the split. Reductions are summed per slice and the
 * slice partials added in slice order: bitwise the same for any thread count.
 *
 * Level 0 is the finest. Its iterate is either the solution (ring = boundary value,
 * "direct" mode) or a correction (ring 0, rhs = a residual written to hf; mixed precision
 * and the CG preconditioner). Coarser levels always hold corrections.
 */
#ifndef HR_MG_INTERNAL_H
#define HR_MG_INTERNAL_H

#include "core/driver.h"
#include "core/grid.h"
#include "core/stencil.h"
#include "hetrelax/mg.h"
#include "reference/stencil_cpu.h"
#include "runtime/cpu/team.h"
#include "methods/mg/mg_smoother.h"

#define HR_MG_MAX_LEVELS 24
#define HR_MG_CHEBY_MAX  16 /* Chebyshev steps with precomputed coefficients */
/* levels with fewer points run on worker 0 alone: their passes are shorter than a barrier */
#define HR_MG_THREADED_POINTS 16384

typedef struct mg_level {
    hr_grid_layout l;
    hr_grid u[2]; /* iterate and scratch (Jacobi ping-pong, Chebyshev's J(x)) */
    hr_grid hf;   /* h^2 f of this level (coarse: 4 x restricted residual) */
    hr_grid r;    /* residual h^2 (f - A u) */
    hr_grid d;    /* Chebyshev direction; coarsest level: CG's A p */
    hr_grid cp;   /* coarsest level: CG's direction (zero ring) */
    hr_rhs_view rhs;
    int slices;   /* outer interior slices: ny (2-D) or nz (3-D) */
    int threaded; /* big enough to split over the team */
} mg_level;

/* What each worker keeps to itself (all workers follow the same control flow). */
typedef struct mg_tls {
    int cur[HR_MG_MAX_LEVELS]; /* which u[] holds the iterate */
    int last_serial;           /* the previous operation ran on worker 0 alone */
} mg_tls;

typedef struct mg_ctx mg_ctx;

/* The hierarchy of one precision. */
typedef struct mg_hier {
    int nlev;
    size_t esize;
    mg_level lev[HR_MG_MAX_LEVELS];
    hr_mg_cycle cycle;
    const hr_smoother_ops *smoother; /* the registry entry's */
    int pre, post;
    double omega;
    double cheby_a[HR_MG_CHEBY_MAX], cheby_b[HR_MG_CHEBY_MAX];
    double *part;        /* per-slice partial sums (largest level's slice count, x2) */
    int fmg_cycles;      /* V-cycles per level in FMG */
    int separate_passes; /* residual and restriction as two passes (tests compare) */
    int symmetric;       /* post-smoothing is the adjoint of pre-smoothing (CG preconditioner) */
    int hugepages;       /* grids advised for huge pages (hr_tuning.hugepages resolved) */
} mg_hier;

/* ---- slice operators (mg_ops.c), on slices [s0, s1) of the level they write ---- */
void hri_mg_zero(const mg_level *L, hr_grid *g, int s0, int s1);
/* coarse->hf = 4 FW(fine->r) */
void hri_mg_restrict(const mg_level *fine, const mg_level *coarse, int s0, int s1);
/* u_fine = (add ? u_fine : 0) + P u_coarse on fine slices [s0, s1) */
void hri_mg_prolong(const mg_level *coarse, const hr_grid *uc, const mg_level *fine, hr_grid *uf, int add, int s0,
                int s1);
/* strict: read only the other colour (slices next to another worker's) */
void hri_mg_redblack(const mg_level *L, hr_grid *u, int color, int strict, int s0, int s1);
void hri_mg_cheby_update(const mg_level *L, hr_grid *x, const hr_grid *jx, hr_grid *d, double a, double b, int s0,
                     int s1);
/* r = h^2 f - h^2 A u (no norms) */
void hri_mg_resid(const mg_level *L, const hr_grid *u, hr_grid *r, int s0, int s1);
/* mx[s] = max |g| over slice s (NaN sticks) */
void hri_mg_absmax_slices(const mg_level *L, const hr_grid *g, double *mx, int s0, int s1);
/* out = h^2 A in (zero ring assumed for `in`) */
void hri_mg_apply(const mg_level *L, const hr_grid *in, hr_grid *out, int s0, int s1);
/* part[s] = sum over slice s of x . y (accumulated in double) */
void hri_mg_dot_slices(const mg_level *L, const hr_grid *x, const hr_grid *y, double *part, int s0, int s1);
/* out = h^2 A in, part[s] = in . out (slice by slice, while the slice is in cache) */
void hri_mg_apply_dot(const mg_level *L, const hr_grid *in, hr_grid *out, double *part, int s0, int s1);
/* x += (a p) * xscale, r -= a q, part[s] = r . r (xscale a power of two) */
void hri_mg_update_dot(const mg_level *L, double a, double xscale, const hr_grid *p, const hr_grid *q, hr_grid *x,
                   hr_grid *r, double *part, int s0, int s1);
/* y += a x (a cast to the grid's type) */
void hri_mg_axpy(const mg_level *L, double a, const hr_grid *x, hr_grid *y, int s0, int s1);
/* y += (a x) * scale, scale a power of two (1: bitwise hri_mg_axpy) */
void hri_mg_axpy_scaled(const mg_level *L, double a, double scale, const hr_grid *x, hr_grid *y, int s0, int s1);
/* p = z + b p */
void hri_mg_xpay(const mg_level *L, const hr_grid *z, double b, hr_grid *p, int s0, int s1);
/* dst = src * scale between any precisions (interior only); add: dst += src * scale; scale is
 * a power of two (1: a plain copy) */
void hri_mg_convert(const mg_level *L, const hr_grid *src, hr_grid *dst, int add, double scale, int s0, int s1);
/* residual (vector r, optional), per-slice norms and (rmax, optional) per-slice max |r| over
 * slices [s0, s1) */
void hri_mg_residual_slices(const mg_level *L, const hr_grid *u, unsigned faces, hr_grid *r, hr_norm2 *rn,
                        hr_norm2 *bn, double *rmax, int s0, int s1);

/* The box of slices [s0, s1) of a level. */
static inline hr_box mg_slice_box(const mg_level *L, int s0, int s1)
{
    hr_box b = hr_box_interior(&L->l);
    b.lo[L->l.dim == 3 ? 2 : 1] = s0;
    b.hi[L->l.dim == 3 ? 2 : 1] = s1;
    return b;
}

/* ---- SPMD schedule (mg_cycle.c) ---- */
typedef struct mg_worker {
    hr_team *team; /* NULL: one thread */
    int tid, nt;
    mg_tls *tls;
} mg_worker;

/* This worker's slices of a level: contiguous blocks, or all to worker 0 on a serial level. */
void hri_mg_part(const mg_worker *w, int threaded, int slices, int *s0, int *s1);
/* Brackets an operation on a level (barriers as the threaded / serial pattern needs). */
void hri_mg_begin(const mg_worker *w, int threaded);
void hri_mg_end(const mg_worker *w, int threaded);

/* Runs `call` (a slice operation on s0, s1) over this worker's slices of level L, inside
 * the begin/end bracket. */
#define MG_SLICE_OP(w, L, call)                                                                              \
    do {                                                                                                     \
        int s0, s1;                                                                                          \
        hri_mg_begin((w), (L)->threaded);                                                                        \
        hri_mg_part((w), (L)->threaded, (L)->slices, &s0, &s1);                                                  \
        if (s0 < s1) call;                                                                                   \
        hri_mg_end((w), (L)->threaded);                                                                          \
    } while (0)

/* One cycle of the hierarchy's type from level `l` (mode: level 0 direct or correction). */
void hri_mg_cycle(mg_hier *H, const mg_worker *w, int l, hr_mg_cycle type, int symmetric);
/* FMG pass: level 0 holds a correction problem already (hf of level 0 set). */
void hri_mg_fmg(mg_hier *H, const mg_worker *w, int symmetric);
/* The FMG pass; add0 = 0: level 0 gets the interpolated solution, not added (it is the
 * coarse part of a GPU FMG pass, --coarse-on cpu: the GPU's FMG prolongs into that level). */
void hri_mg_fmg_part(mg_hier *H, const mg_worker *w, int symmetric, int add0);

hr_status hri_mg_hier_build(mg_hier *H, int dim, int nx, int ny, int nz, int nlev, size_t esize, int threads);
void hri_mg_hier_free(mg_hier *H);
/* The Chebyshev-Jacobi step coefficients (HR_MG_CHEBY_MAX of each). */
void hri_mg_cheby_coeffs(int dim, double *a, double *b);
/* Fills every level's buffers with zero interior and ring `bc0` on level 0 (0 below). */
void hri_mg_hier_init(mg_hier *H, const mg_worker *w, double bc0);

/* ---- options (mg_options.c) ---- */
int hri_mg_opt_dim(const hr_mg_options *o);
int hri_mg_opt_extent(const hr_mg_options *o, int axis); /* 0 = x, 1 = y, 2 = z */
int hri_mg_opt_uses_mg(const hr_mg_options *o);          /* method mg, or pc mg */
int hri_mg_opt_max_levels(const hr_mg_options *o);       /* levels the grid allows */

#endif
