/*
 * Multigrid for any structured problem (stencil_mg.h): the hierarchy and the cycles.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "methods/mg/mg_walk.h"
#include "methods/stencil/stencil_mg.h"

#define COARSEST_MAX 64   /* stop coarsening at this many unknowns */
#define DENSE_MAX    1500 /* the coarsest level is factored up to this size */
#define STRONG       0.5  /* an axis is coarsened when its couplings reach this share of the strongest */
/* MPI ranks: a level stays cut while it has this many unknowns per rank (the backend's
 * dist_min where it sets one) */
#define DIST_MIN 2048

/* ------------------------------------------------------------------ transfers */

static void axis_free(hr_st_axis *a)
{
    free(a->i0), free(a->i1), free(a->w0), free(a->w1), free(a->ri), free(a->rw), free(a->rn);
    memset(a, 0, sizeof *a);
}

/* The first coarse point along an axis: the unknown on a Neumann face, else the second. */
static int first_coarse(int periodic, int free_lo)
{
    return periodic || free_lo ? 0 : 1;
}

static int coarse_extent(int n, int periodic, int free_lo)
{
    const int s = first_coarse(periodic, free_lo);
    return (n - s + 1) / 2;
}

static int can_coarsen(int n, int periodic)
{
    if (periodic) return coarse_extent(n, 1, 0) >= 3;
    return n >= 3;
}

/* gap[0], gap[1]: the distance, in this level's spacings, from the first / last unknown to
 * the Dirichlet face beyond it (1 on the finest level); updated to the coarse level's. */
static hr_status axis_build(hr_st_axis *a, int n, int periodic, int free_lo, int free_hi, double gap[2])
{
    const int s = first_coarse(periodic, free_lo), nc = coarse_extent(n, periodic, free_lo);
    a->coarsen = 1;
    a->nf = n;
    a->nc = nc;
    a->first = s;
    a->i0 = malloc(n * sizeof *a->i0), a->i1 = malloc(n * sizeof *a->i1);
    a->w0 = malloc(n * sizeof *a->w0), a->w1 = malloc(n * sizeof *a->w1);
    a->ri = calloc(nc, sizeof *a->ri), a->rw = calloc(nc, sizeof *a->rw), a->rn = calloc(nc, sizeof *a->rn);
    if (!a->i0 || !a->i1 || !a->w0 || !a->w1 || !a->ri || !a->rw || !a->rn) return HR_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++) {
        a->i1[i] = -1;
        a->w1[i] = 0.0;
        if (((i - s) & 1) == 0) {
            a->i0[i] = (i - s) / 2;
            a->w0[i] = 1.0;
        } else {
            int l = i - 1, r = i + 1;
            if (periodic) {
                l = (l + n) % n;
                r = r % n;
            }
            const int hl = l >= 0, hr = r < n;
            if (hl && hr) {
                a->i0[i] = (l - s) / 2, a->w0[i] = 0.5;
                a->i1[i] = (r - s) / 2, a->w1[i] = 0.5;
            } else if (hl) { /* the face beyond: Neumann keeps the value, Dirichlet interpolates to 0 */
                a->i0[i] = (l - s) / 2, a->w0[i] = free_hi ? 1.0 : gap[1] / (1.0 + gap[1]);
            } else {
                a->i0[i] = (r - s) / 2, a->w0[i] = free_lo ? 1.0 : gap[0] / (1.0 + gap[0]);
            }
        }
        const int I[2] = {a->i0[i], a->i1[i]};
        const double W[2] = {a->w0[i], a->w1[i]};
        for (int t = 0; t < 2; t++) {
            if (I[t] < 0) continue;
            const int c = I[t];
            if (a->rn[c] >= 3) return HR_ERR_INTERNAL;
            a->ri[c][a->rn[c]] = i;
            a->rw[c][a->rn[c]++] = W[t];
        }
    }
    if (!periodic) {
        gap[0] = s == 0 ? gap[0] / 2.0 : (1.0 + gap[0]) / 2.0;
        gap[1] = ((n - 1 - s) & 1) == 0 ? gap[1] / 2.0 : (1.0 + gap[1]) / 2.0;
    }
    return HR_OK;
}

/* ------------------------------------------------------------------ Galerkin product */

static void exec_run(hr_st_exec *ex, hr_team_fn fn, void *ctx)
{
    if (ex && ex->team)
        hri_team_run(ex->team, fn, ctx);
    else
        fn(ctx, 0, 1);
}

/* Set-up passes over fewer points than this run on the calling thread (a team's wake-up
 * costs more than they do). */
#define SETUP_TEAM_MIN 4096

static void setup_run(hr_st_exec *ex, size_t points, hr_team_fn fn, void *ctx)
{
    exec_run(points >= SETUP_TEAM_MIN ? ex : NULL, fn, ctx);
}

/* Point q of a grid of n points per axis (one step outside at most): across a periodic face
 * wrapped onto the grid; 0 past a non-periodic face. */
static int wrap_point(int q[3], const int n[3], const int periodic[3])
{
    for (int d = 0; d < 3; d++)
        if (q[d] < 0 || q[d] >= n[d]) {
            if (!periodic[d]) return 0;
            q[d] = (q[d] + n[d]) % n[d];
        }
    return 1;
}

typedef struct {
    const hr_sop *A;
    hr_sop *C;
    const hr_st_axis *ax;
    /* the shortcut by classes (rap_classes): per axis, each coarse index's class (NULL: none),
     * the classes' counts, and the row of each triple of classes (x fastest) */
    const int *cls[3];
    int ncls[3];
    const double *rows;
    /* else the shortcut of the interior (rap_standard): per axis, whether a coarse index is
     * standard (NULL: none), and the row every coarse point standard along all axes gets */
    const unsigned char *std[3];
    double ref[27];
} rap_job;

/* A's row as (offset, coefficient at row p) terms: the diagonal, +o_k, -o_k; returns how many. */
static int rap_terms(const hr_sop *A, int eo[1 + 2 * HR_ST_MAX_HALF][3])
{
    memset(eo, 0, sizeof(int[1 + 2 * HR_ST_MAX_HALF][3]));
    for (int k = 0; k < A->nk; k++)
        for (int a = 0; a < 3; a++) {
            eo[1 + 2 * k][a] = A->off[k][a];
            eo[2 + 2 * k][a] = -A->off[k][a];
        }
    return 1 + 2 * A->nk;
}

/* Term e of A's row at p (whole-grid indices pf): the diagonal, coupling k out (e = 2 k + 1) or
 * in (e = 2 k + 2). A uniform star of a whole grid without its arrays gives the values its
 * arrays would hold (fill_star: no coupling across a non-periodic face), so the finest level
 * of a constant-coefficient problem needs no arrays for its Galerkin product. */
static inline double rap_coef(const hr_sop *A, int e, ptrdiff_t p, const int pf[3])
{
    if (A->diag)
        return e == 0  ? A->diag[p]
               : e & 1 ? A->c[(e - 1) / 2][p]
                       : A->c[(e - 2) / 2][p - A->doff[(e - 2) / 2]];
    if (e == 0) return A->ud;
    const int k = (e - 1) / 2, a = A->off[k][1] ? 1 : A->off[k][2] ? 2 : 0;
    const hr_sgrid *g = &A->g;
    const int has = g->gper[a] || ((e & 1) ? pf[a] < g->gn[a] - 1 : pf[a] > 0);
    return has ? A->uc[a] : 0.0;
}

/* The row of R A P at coarse point (I, Jg, Kg) (whole-grid indices), by its 27 offsets. */
static void rap_row(const rap_job *j, const int eo[][3], int ne, int I, int Jg, int Kg, double acc[27])
{
    const hr_sop *A = j->A;
    const hr_sgrid *fg = &A->g, *cg = &j->C->g;
    const int dim = fg->dim;
    const int Ic[3] = {I, Jg, Kg};
    int xi[3], yi[3], zi[3];
    double xw[3], yw[3], zw[3];
    const int ny = hr_st_restrict_terms(&j->ax[1], Jg, yi, yw);
    const int nz = dim == 3 ? hr_st_restrict_terms(&j->ax[2], Kg, zi, zw) : (zi[0] = 0, zw[0] = 1.0, 1);
    const int nx = hr_st_restrict_terms(&j->ax[0], I, xi, xw);
    memset(acc, 0, 27 * sizeof *acc);
    for (int c = 0; c < nz; c++)
        for (int b = 0; b < ny; b++)
            for (int a = 0; a < nx; a++) {
                const int pf[3] = {xi[a], yi[b], zi[c]};
                const double wp = xw[a] * yw[b] * zw[c];
                const ptrdiff_t p = hr_sgrid_index(fg, pf[0], hr_sgrid_local(fg, 1, pf[1]),
                                                   dim == 3 ? hr_sgrid_local(fg, 2, pf[2]) : 0);
                for (int e = 0; e < ne; e++) {
                    const double v = rap_coef(A, e, p, pf);
                    if (v == 0.0) continue;
                    int q[3] = {pf[0] + eo[e][0], pf[1] + eo[e][1], pf[2] + eo[e][2]};
                    if (!wrap_point(q, fg->gn, fg->gper)) continue;
                    int ti[3][2], tn[3];
                    double tw[3][2];
                    for (int d = 0; d < 3; d++)
                        tn[d] = d < dim ? hr_st_prolong_terms(&j->ax[d], q[d], ti[d], tw[d])
                                        : (ti[d][0] = 0, tw[d][0] = 1.0, 1);
                    for (int z = 0; z < tn[2]; z++)
                        for (int y = 0; y < tn[1]; y++)
                            for (int x = 0; x < tn[0]; x++) {
                                const int Jc[3] = {ti[0][x], ti[1][y], ti[2][z]};
                                int slot = 0, mul = 1, bad = 0;
                                for (int d = 0; d < 3; d++) {
                                    int dd = Jc[d] - Ic[d];
                                    if (cg->gper[d]) {
                                        if (dd > 1) dd -= cg->gn[d];
                                        if (dd < -1) dd += cg->gn[d];
                                    }
                                    if (dd < -1 || dd > 1) bad = 1;
                                    slot += (dd + 1) * mul;
                                    mul *= 3;
                                }
                                if (bad) continue; /* cannot happen with linear P */
                                acc[slot] += wp * v * tw[0][x] * tw[1][y] * tw[2][z];
                            }
                }
            }
}

static void rap_fn(void *ctx, int tid, int nt)
{
    const rap_job *j = ctx;
    hr_sop *C = j->C;
    const hr_sgrid *cg = &C->g;
    const size_t lines = (size_t)cg->n[1] * cg->n[2];
    const size_t l0 = lines * tid / nt, l1 = lines * (tid + 1) / nt;
    int eo[1 + 2 * HR_ST_MAX_HALF][3];
    const int ne = rap_terms(j->A, eo);
    /* C's arrays (the diagonal, then the couplings) and the slot of the row's 27 that each
     * takes; the shortcut's row in that order */
    double *dst[1 + HR_ST_MAX_HALF], ref[1 + HR_ST_MAX_HALF];
    int slot[1 + HR_ST_MAX_HALF];
    const int nd = 1 + C->nk;
    dst[0] = C->diag, slot[0] = 13;
    for (int k = 0; k < C->nk; k++) {
        dst[1 + k] = C->c[k];
        slot[1 + k] = (C->off[k][2] + 1) * 9 + (C->off[k][1] + 1) * 3 + C->off[k][0] + 1;
    }
    for (int m = 0; m < nd; m++)
        ref[m] = j->ref[slot[m]];
    /* indices are the whole grid's (a slab: A's rows reach one past C's rows' fine points) */
    for (size_t l = l0; l < l1; l++) {
        const int J = (int)(l % cg->n[1]), K = (int)(l / cg->n[1]);
        const int Jg = J + cg->goff[1], Kg = K + cg->goff[2];
        const int line_std = j->std[0] && j->std[1][Jg] && j->std[2][Kg];
        const ptrdiff_t P0 = hr_sgrid_index(cg, 0, J, K);
        if (j->rows) { /* (whole grids: Jg = J, Kg = K) */
            const double *rl = j->rows + (size_t)27 * j->ncls[0] * (j->cls[2][K] * j->ncls[1] + j->cls[1][J]);
            for (int I = 0; I < cg->n[0]; I++) {
                const double *r = rl + (size_t)27 * j->cls[0][I];
                for (int m = 0; m < nd; m++)
                    dst[m][P0 + I] = r[slot[m]];
            }
            continue;
        }
        for (int I = 0; I < cg->n[0]; I++) {
            if (line_std && j->std[0][I]) {
                for (int m = 0; m < nd; m++)
                    dst[m][P0 + I] = ref[m];
                continue;
            }
            double acc[27];
            rap_row(j, eo, ne, I, Jg, Kg, acc);
            for (int m = 0; m < nd; m++)
                dst[m][P0 + I] = acc[slot[m]];
        }
    }
}

/* Whether row p of A is row q's: the diagonal and every coupling in and out, bitwise. */
static int same_row(const hr_sop *A, ptrdiff_t p, ptrdiff_t q)
{
    if (A->diag[p] != A->diag[q] || (A->exc && A->exc[p] != A->exc[q])) return 0;
    for (int k = 0; k < A->nk; k++)
        if (A->c[k][p] != A->c[k][q] || A->c[k][p - A->doff[k]] != A->c[k][q - A->doff[k]]) return 0;
    return 1;
}

/* The check that every row of a box is the row at pc, its lines split among a team's threads:
 * `differ` is set where one is not (whichever thread finds it: the answer is the same). */
typedef struct {
    const hr_sop *A;
    const int *lo, *hi;
    ptrdiff_t pc;
    int differ;
} box_check;

static void box_check_fn(void *ctx, int tid, int nt)
{
    box_check *j = ctx;
    const hr_sgrid *g = &j->A->g;
    const size_t ny = (size_t)(j->hi[1] - j->lo[1]), lines = ny * (size_t)(j->hi[2] - j->lo[2]);
    const size_t l0 = lines * tid / nt, l1 = lines * (tid + 1) / nt;
    for (size_t l = l0; l < l1 && !__atomic_load_n(&j->differ, __ATOMIC_RELAXED); l++) {
        const int y = j->lo[1] + (int)(l % ny), k = j->lo[2] + (int)(l / ny);
        for (int x = j->lo[0]; x < j->hi[0]; x++)
            if (!same_row(j->A, hr_sgrid_index(g, x, y, k), j->pc)) {
                __atomic_store_n(&j->differ, 1, __ATOMIC_RELAXED);
                return;
            }
    }
}

/* The box [lo, hi) per axis (hi = lo: none) of a whole grid's rows that are all the row at the
 * grid's centre, bitwise: found along the centre's lines, then every row of it checked (on ex's
 * team). */
static void same_rows_box(hr_st_exec *ex, const hr_sop *A, int lo[3], int hi[3])
{
    const hr_sgrid *g = &A->g;
    if (!A->diag) { /* a uniform star without arrays: all rows but those next to a face */
        for (int a = 0; a < 3; a++) {
            const int face = a < g->dim && !g->gper[a];
            lo[a] = face ? 1 : 0;
            hi[a] = face ? g->n[a] - 1 : g->n[a];
            if (hi[a] < lo[a]) hi[a] = lo[a];
        }
        return;
    }
    int c[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++)
        c[a] = g->n[a] / 2, lo[a] = 0, hi[a] = g->n[a];
    const ptrdiff_t pc = hr_sgrid_index(g, c[0], c[1], c[2]);
    for (int a = 0; a < g->dim; a++) {
        int t[3] = {c[0], c[1], c[2]};
        for (t[a] = c[a]; t[a] - 1 >= 0 && same_row(A, hr_sgrid_index(g, t[0], t[1], t[2]) - g->st[a], pc);)
            t[a]--;
        lo[a] = t[a];
        for (t[a] = c[a];
             t[a] + 1 < g->n[a] && same_row(A, hr_sgrid_index(g, t[0], t[1], t[2]) + g->st[a], pc);)
            t[a]++;
        hi[a] = t[a] + 1;
    }
    /* a uniform star's rows (fill_star) differ from its centre's along an axis only where the
     * centre's line does: the box found is right as it is */
    if (A->uniform) return;
    box_check j = {A, lo, hi, pc, 0};
    setup_run(ex, (size_t)(hi[0] - lo[0]) * (size_t)(hi[1] - lo[1]) * (size_t)(hi[2] - lo[2]), box_check_fn,
              &j);
    if (j.differ)
        for (int a = 0; a < 3; a++)
            hi[a] = lo[a];
}

/* A's box of rows that are all one row, and that row (hr_sop.rlo): whole grids with arrays.
 * Set once a level's operator is final; the Galerkin product below it reads the box too. */
static void set_same_rows(hr_st_exec *ex, hr_sop *A)
{
    const hr_sgrid *g = &A->g;
    for (int a = 0; a < 3; a++)
        A->rlo[a] = A->rhi[a] = 0;
    if (A->uniform || !A->diag || !A->c[0]) return;
    for (int a = 0; a < 3; a++)
        if (g->goff[a] || g->n[a] != g->gn[a]) return;
    int lo[3], hi[3];
    same_rows_box(ex, A, lo, hi);
    if (lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]) return;
    const ptrdiff_t pc = hr_sgrid_index(g, g->n[0] / 2, g->n[1] / 2, g->n[2] / 2);
    A->rd = A->diag[pc];
    A->rexc = A->exc ? A->exc[pc] : 0.0;
    for (int k = 0; k < A->nk; k++)
        A->rc[k] = A->c[k][pc], A->rcm[k] = A->c[k][pc - A->doff[k]];
    for (int a = 0; a < 3; a++)
        A->rlo[a] = lo[a], A->rhi[a] = hi[a];
}

/* Along one axis, what the row of R A P at a coarse index I reads (rap_row): the restriction's
 * terms, each term's fine point as its class (-1 inside the box of one row, else the point
 * itself), and from that point one step down, none and one step up (wrapped across a periodic
 * face; none past another) the prolongation's terms, as coarse offsets from I (wrapped as
 * rap_row wraps them) and weights; what is not used is 0. */
typedef struct {
    int nt, fc[3];
    int qn[3][3], qd[3][3][2];
    double w[3], qw[3][3][2];
} axis_sig;

static int sig_equal(const axis_sig *a, const axis_sig *b)
{
    return a->nt == b->nt && !memcmp(a->fc, b->fc, sizeof a->fc) && !memcmp(a->qn, b->qn, sizeof a->qn) &&
           !memcmp(a->qd, b->qd, sizeof a->qd) && !memcmp(a->w, b->w, sizeof a->w) &&
           !memcmp(a->qw, b->qw, sizeof a->qw);
}

static void axis_signature(const rap_job *j, int a, int I, int lo, int hi, axis_sig *s)
{
    const hr_sgrid *fg = &j->A->g, *cg = &j->C->g;
    int fi[3];
    memset(s, 0, sizeof *s);
    s->nt = hr_st_restrict_terms(&j->ax[a], I, fi, s->w);
    for (int t = 0; t < s->nt; t++) {
        s->fc[t] = fi[t] >= lo && fi[t] < hi ? -1 : fi[t];
        for (int d = 0; d < 3; d++) {
            int q = fi[t] + d - 1, ti[2];
            if (q < 0 || q >= fg->gn[a]) {
                if (!fg->gper[a]) continue;
                q = (q + fg->gn[a]) % fg->gn[a];
            }
            s->qn[t][d] = hr_st_prolong_terms(&j->ax[a], q, ti, s->qw[t][d]);
            for (int u = 0; u < s->qn[t][d]; u++) {
                int dd = ti[u] - I;
                if (cg->gper[a]) {
                    if (dd > 1) dd -= cg->gn[a];
                    if (dd < -1) dd += cg->gn[a];
                }
                s->qd[t][d][u] = dd;
            }
        }
    }
}

#define CLASSES_MAX 64 /* per axis: beyond this many the product runs row by row */

/* The classes of axis a's coarse indices (cls[I]; rep[c] the first index of class c): equal
 * signatures, one class. Returns their count, or 0 when there are more than CLASSES_MAX. */
static int axis_classes(const rap_job *j, int a, int lo, int hi, int *cls, int rep[CLASSES_MAX])
{
    const hr_sgrid *cg = &j->C->g;
    if (a >= cg->dim) return cls[0] = 0, rep[0] = 0, 1;
    axis_sig sig[CLASSES_MAX];
    int m = 0;
    for (int I = 0; I < cg->n[a]; I++) {
        axis_sig s;
        axis_signature(j, a, I, lo, hi, &s);
        int c = 0;
        while (c < m && !sig_equal(&s, &sig[c]))
            c++;
        if (c == m) {
            if (m == CLASSES_MAX) return 0;
            sig[m] = s, rep[m++] = I;
        }
        cls[I] = c;
    }
    return m;
}

/* Whether every row of A outside its box [lo, hi) is the row at the point whose coordinates
 * inside the box are replaced by the centre's: A's rows then depend on each axis's class of
 * the point alone. */
static int rows_by_class(const hr_sop *A, const int lo[3], const int hi[3])
{
    const hr_sgrid *g = &A->g;
    const int c[3] = {g->n[0] / 2, g->n[1] / 2, g->n[2] / 2};
    for (int k = 0; k < g->n[2]; k++) {
        const int kin = k >= lo[2] && k < hi[2], kr = kin ? c[2] : k;
        for (int y = 0; y < g->n[1]; y++) {
            const int yin = y >= lo[1] && y < hi[1], yr = yin ? c[1] : y;
            const int inner = kin && yin; /* only the line's points outside [lo[0], hi[0]) */
            for (int x = 0; x < g->n[0]; x++) {
                const int xin = x >= lo[0] && x < hi[0];
                if (inner && xin) {
                    x = hi[0] - 1;
                    continue;
                }
                const ptrdiff_t p = hr_sgrid_index(g, x, y, k), r = hr_sgrid_index(g, xin ? c[0] : x, yr, kr);
                if (!same_row(A, p, r)) return 0;
            }
        }
    }
    return 1;
}

/* The Galerkin product by classes: where A's rows depend on each axis's class of the point (its
 * box of one row, rows_by_class) a coarse row depends on each axis's signature of its index
 * alone (the same terms in the same order, on equal rows), so one row per triple of classes is
 * computed (a constant coefficient: a handful per axis, the faces' layers and the interior).
 * Whole grids whose box is found; else, or with too many classes, j->rows stays NULL. */
static hr_status rap_classes(const int lo[3], const int hi[3], rap_job *j, int *cls[3], double **rows)
{
    const hr_sop *A = j->A;
    const hr_sgrid *cg = &j->C->g;
    int rep[3][CLASSES_MAX], m[3];
    for (int a = 0; a < 3; a++)
        if (lo[a] >= hi[a]) return HR_OK;
    for (int a = 0; a < 3; a++) {
        if (!(cls[a] = malloc((size_t)cg->n[a] * sizeof *cls[a]))) return HR_ERR_NO_MEMORY;
        if (!(m[a] = axis_classes(j, a, lo[a], hi[a], cls[a], rep[a]))) return HR_OK;
    }
    const size_t nrow = (size_t)m[0] * m[1] * m[2];
    if (nrow * 8 > cg->count) return HR_OK; /* hardly fewer rows than points */
    if (A->diag && !rows_by_class(A, lo, hi)) return HR_OK;
    if (!(*rows = malloc(nrow * 27 * sizeof **rows))) return HR_ERR_NO_MEMORY;
    int eo[1 + 2 * HR_ST_MAX_HALF][3];
    const int ne = rap_terms(A, eo);
    for (int c2 = 0; c2 < m[2]; c2++)
        for (int c1 = 0; c1 < m[1]; c1++)
            for (int c0 = 0; c0 < m[0]; c0++)
                rap_row(j, eo, ne, rep[0][c0], rep[1][c1], rep[2][c2],
                        *rows + 27 * (((size_t)c2 * m[1] + c1) * m[0] + c0));
    for (int a = 0; a < 3; a++)
        j->cls[a] = cls[a], j->ncls[a] = m[a];
    j->rows = *rows;
    return HR_OK;
}

/* Whether the transfer along an axis is the standard one at coarse index I (full weighting
 * 1/2 1 1/2 centred on fine f = first + 2 I, linear prolongation at fine f - 2 .. f + 2, all
 * inside the grid), or, on an axis not coarsened, the identity with f - 1 .. f + 1 inside. */
static int standard_transfer(const hr_st_axis *x, int n, int I, int *f)
{
    if (!x->coarsen) return *f = I, I - 1 >= 0 && I + 1 < n;
    const int F = x->first + 2 * I;
    *f = F;
    if (F - 2 < 0 || F + 2 >= n || !hr_st_restrict_standard(x, I)) return 0;
    for (int q = F - 2; q <= F + 2; q++)
        if (!hr_st_prolong_standard(x, q)) return 0;
    return 1;
}

/* The Galerkin product's shortcut: a coarse row whose fine rows (the restriction's points) are
 * all the centre's row and whose transfers are the standard ones is the same row everywhere
 * (the same terms in the same order), computed once (a constant coefficient: all but the
 * faces' layers). Whole grids only; a slab, or no such row, leaves j->std NULL. */
static hr_status rap_standard(const int lo[3], const int hi[3], rap_job *j, unsigned char *std[3])
{
    const hr_sgrid *fg = &j->A->g, *cg = &j->C->g;
    int any[3] = {-1, -1, -1};
    for (int a = 0; a < 3; a++) {
        if (!(std[a] = calloc(cg->n[a], 1))) return HR_ERR_NO_MEMORY;
        for (int I = 0; I < cg->n[a]; I++) {
            int f;
            if (a >= fg->dim)
                std[a][I] = 1;
            else
                std[a][I] = standard_transfer(&j->ax[a], fg->n[a], I, &f) && f - 1 >= lo[a] && f + 1 < hi[a];
            if (std[a][I] && any[a] < 0) any[a] = I;
        }
        if (any[a] < 0) return HR_OK;
    }
    int eo[1 + 2 * HR_ST_MAX_HALF][3];
    const int ne = rap_terms(j->A, eo);
    rap_row(j, eo, ne, any[0], any[1], any[2], j->ref);
    for (int a = 0; a < 3; a++)
        j->std[a] = std[a];
    return HR_OK;
}

/* The scratch of the Galerkin product's shortcuts. */
typedef struct {
    int *cls[3];
    double *rows;
    unsigned char *std[3];
} rap_scratch;

static void rap_scratch_free(rap_scratch *t)
{
    for (int a = 0; a < 3; a++)
        free(t->cls[a]), free(t->std[a]);
    free(t->rows);
}

/* Sets up j's shortcut (whole grids only; a slab computes every row): by classes where it
 * can, else the interior's row. A's box of one row is the one set_same_rows found where A has
 * arrays. */
static hr_status rap_shortcut(hr_st_exec *ex, rap_job *j, rap_scratch *t)
{
    const hr_sop *A = j->A;
    const hr_sgrid *fg = &A->g, *cg = &j->C->g;
    for (int a = 0; a < 3; a++)
        if (fg->goff[a] || cg->goff[a] || fg->n[a] != fg->gn[a] || cg->n[a] != cg->gn[a]) return HR_OK;
    int lo[3], hi[3];
    if (A->diag && !A->uniform) /* (none: rlo = rhi) */
        for (int a = 0; a < 3; a++)
            lo[a] = A->rlo[a], hi[a] = A->rhi[a];
    else
        same_rows_box(ex, A, lo, hi);
    HR_TRY(rap_classes(lo, hi, j, t->cls, &t->rows));
    return j->rows ? HR_OK : rap_standard(lo, hi, j, t->std);
}

/* ------------------------------------------------------------------ levels on MPI ranks */

/* A cut coarse level's view of the ranks: the finest level's hooks, with sums over this
 * level's slabs (their line counts differ from the finest level's). */
struct hr_st_level_comm {
    hr_st_comm hooks;
    const hr_st_comm *base;
    int *counts, *displs; /* per rank: its lines, and the first */
    double *all;
    size_t total;
};

static void lc_halo(void *ctx, const hr_sgrid *g, double *x)
{
    const hr_st_level_comm *c = ctx;
    c->base->halo(c->base->ctx, g, x);
}

static double lc_sum(void *ctx, const double *part, size_t lines)
{
    hr_st_level_comm *c = ctx;
    const int r = c->base->rank;
    if (lines) memcpy(c->all + c->displs[r], part, lines * sizeof *part);
    c->base->allgather(c->base->ctx, c->all, c->counts, c->displs);
    double s = 0.0;
    for (size_t l = 0; l < c->total; l++)
        s += c->all[l];
    return s;
}

static double lc_sum_ranks(void *ctx, double v)
{
    const hr_st_level_comm *c = ctx;
    return c->base->sum_ranks(c->base->ctx, v);
}

static hr_st_level_comm *lc_new(const hr_st_comm *base, const int *cut, int lines_per_row)
{
    hr_st_level_comm *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    const int P = base->size;
    c->base = base;
    c->counts = malloc(P * sizeof *c->counts), c->displs = malloc(P * sizeof *c->displs);
    c->total = (size_t)lines_per_row * (size_t)(cut[P] - cut[0]);
    c->all = malloc((c->total ? c->total : 1) * sizeof *c->all);
    if (!c->counts || !c->displs || !c->all) {
        free(c->counts), free(c->displs), free(c->all), free(c);
        return NULL;
    }
    for (int r = 0; r < P; r++) {
        c->counts[r] = lines_per_row * (cut[r + 1] - cut[r]);
        c->displs[r] = lines_per_row * (cut[r] - cut[0]);
    }
    c->hooks = *base;
    c->hooks.ctx = c;
    c->hooks.halo = lc_halo;
    c->hooks.sum = lc_sum;
    c->hooks.sum_ranks = lc_sum_ranks;
    c->hooks.gather = NULL; /* the solution is the finest level's */
    c->hooks.edge_rows = NULL, c->hooks.allgather = NULL, c->hooks.all = NULL, c->hooks.bcast = NULL;
    return c;
}

static void lc_free(hr_st_level_comm *c)
{
    if (!c) return;
    free(c->counts), free(c->displs), free(c->all), free(c);
}

/* The unknowns of the whole grid g is a slab of. */
static size_t whole_count(const hr_sgrid *g)
{
    return (size_t)g->gn[0] * (size_t)g->gn[1] * (size_t)g->gn[2];
}

/* L's slab bounds (cut, size + 1 values) and, from them, its slabs as padded rows of the whole
 * grid (the allgather's counts and displacements). */
static hr_status set_cut(hr_st_level *L, const hr_st_comm *c, const int *cut)
{
    const int P = c->size;
    const ptrdiff_t row = L->A.g.st[L->A.g.dim - 1];
    L->cut = malloc((P + 1) * sizeof *L->cut);
    L->rows_n = malloc(P * sizeof *L->rows_n), L->rows_at = malloc(P * sizeof *L->rows_at);
    if (!L->cut || !L->rows_n || !L->rows_at) return HR_ERR_NO_MEMORY;
    for (int r = 0; r <= P; r++)
        L->cut[r] = cut[r];
    /* (the allgathers' int counts: a level too large for them, -1, is never gathered) */
    for (int r = 0; r < P; r++) {
        const ptrdiff_t n = (ptrdiff_t)(cut[r + 1] - cut[r]) * row, at = (ptrdiff_t)(cut[r] + 1) * row;
        const int fits = at + n <= INT_MAX;
        L->rows_n[r] = fits ? (int)n : -1;
        L->rows_at[r] = fits ? (int)at : -1; /* whole-grid row R is padded row R + 1 */
    }
    return HR_OK;
}

/* x, a padded array of the whole grid whose rows of this rank's slab are set: every rank's. */
static void gather_rows(const hr_st_level *L, const hr_st_comm *c, double *x)
{
    c->allgather(c->ctx, x, L->rows_n, L->rows_at);
}

/* The whole grid a slab is part of. */
static hr_sgrid whole_of(const hr_sgrid *g)
{
    const int last = g->dim - 1;
    int n[3] = {g->n[0], g->n[1], g->n[2]}, per[3] = {g->periodic[0], g->periodic[1], g->periodic[2]};
    n[last] = g->gn[last];
    per[last] = g->gper[last];
    hr_sgrid w;
    hri_sgrid_init(&w, g->dim, n, per);
    return w;
}

enum { OP_ARRAYS = 2 + HR_ST_MAX_HALF };

/* A's padded arrays in order: the diagonal, the couplings and a star's Dirichlet part (exc);
 * their count. Two operators of one shape list theirs alike (a copy takes the shorter list). */
static int op_arrays(const hr_sop *A, double *v[OP_ARRAYS])
{
    int n = 0;
    v[n++] = A->diag;
    for (int k = 0; k < A->nk; k++)
        v[n++] = A->c[k];
    if (A->exc) v[n++] = A->exc;
    return n;
}

/* W on the whole grid from the slabs of L's operator on every rank. */
static hr_status gather_op(const hr_st_level *L, const hr_st_comm *c, hr_sop *W)
{
    const hr_sgrid *g = &L->A.g;
    const hr_sgrid w = whole_of(g);
    for (int r = 0; r < c->size; r++)
        if (L->rows_n[r] < 0) return HR_ERR_UNSUPPORTED; /* past the allgather's int counts */
    HR_TRY(hri_sop_alloc(W, &w, L->A.nk != g->dim));
    const ptrdiff_t row = g->st[g->dim - 1];
    const size_t own = (size_t)(g->n[g->dim - 1]) * (size_t)row;
    double *src[OP_ARRAYS], *dst[OP_ARRAYS];
    const int ns = op_arrays(&L->A, src), nd = op_arrays(W, dst), na = ns < nd ? ns : nd;
    for (int t = 0; t < na; t++) {
        if (own)
            memcpy(dst[t] + (ptrdiff_t)(g->goff[g->dim - 1] + 1) * row, src[t] + row, own * sizeof(double));
        gather_rows(L, c, dst[t]);
    }
    for (int k = 0; k < W->nk; k++) /* the couplings across a periodic axis (the whole last one too) */
        hri_st_fill_ghosts(&w, W->c[k]);
    return HR_OK;
}

/* E: F's operator on its rows and one more each side, whole rows (the neighbours' diagonal and
 * couplings, and the couplings into the row below), what the Galerkin product of F's coarse
 * rows reads. F has at least two rows on every rank (else coarse_level gathers F whole). */
static hr_status extend_op(const hr_st_level *F, const hr_st_comm *c, hr_sop *E)
{
    const hr_sgrid *fg = &F->A.g;
    const int last = fg->dim - 1, n = fg->n[last];
    int en[3] = {fg->n[0], fg->n[1], fg->n[2]};
    en[last] = n + 2;
    hr_sgrid eg;
    hri_sgrid_init(&eg, fg->dim, en, fg->periodic);
    eg.goff[last] = fg->goff[last] - 1;
    eg.gn[last] = fg->gn[last];
    eg.gper[last] = fg->gper[last];
    HR_TRY(hri_sop_alloc(E, &eg, F->A.nk != fg->dim));
    const ptrdiff_t row = fg->st[last];
    double *src[OP_ARRAYS], *dst[OP_ARRAYS];
    const int ns = op_arrays(&F->A, src), nd = op_arrays(E, dst), na = ns < nd ? ns : nd;
    for (int t = 0; t < na; t++) {
        memcpy(dst[t] + 2 * row, src[t] + row, (size_t)n * (size_t)row * sizeof(double));
        c->edge_rows(c->ctx, fg, src[t], 2, dst[t], 1, dst[t] + (ptrdiff_t)(n + 2) * row);
    }
    return HR_OK;
}

/* The first coarse index whose fine point is at or after fine index i. */
static int coarse_row(const hr_st_axis *a, int i)
{
    if (!a->coarsen) return i;
    const int I = i <= a->first ? 0 : (i - a->first + 1) / 2;
    return I < a->nc ? I : a->nc;
}

/* ------------------------------------------------------------------ the coarsest level */

static hr_status dense_setup(hr_st_mg *mg)
{
    hr_st_level *L = &mg->lv[mg->nlv - 1];
    const hr_st_comm *comm = L->dist ? L->ex.comm : NULL;
    hr_sop W; /* a cut coarsest level: its whole operator, gathered */
    memset(&W, 0, sizeof W);
    const hr_sop *A = &L->A;
    if (comm) {
        HR_TRY(gather_op(L, mg->lv[0].ex.comm, &W));
        A = &W;
        mg->whole = W.g;
        if (!(mg->wbuf = hri_sgrid_alloc(&mg->whole))) return hri_sop_free(&W), HR_ERR_NO_MEMORY;
    }
    const hr_sgrid *g = &A->g;
    const int m = (int)g->count;
    mg->m = m;
    mg->cv = malloc((size_t)m * sizeof *mg->cv);
    mg->hbuf = hri_sgrid_alloc(&L->A.g);
    hr_status st = !mg->cv || !mg->hbuf ? HR_ERR_NO_MEMORY : HR_OK;
    double *M = st == HR_OK && m <= DENSE_MAX ? calloc((size_t)m * m, sizeof *M) : NULL;
    if (st == HR_OK && m <= DENSE_MAX && !M) st = HR_ERR_NO_MEMORY;
    if (!M) { /* too large to factor: smoothing sweeps instead */
        hri_sop_free(&W);
        return st;
    }
    int row = 0;
    double dsum = 0.0;
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++, row++) {
                const ptrdiff_t p = hr_sgrid_index(g, i, j, k);
                M[(size_t)row * m + row] += A->diag[p];
                dsum += A->diag[p];
                for (int kk = 0; kk < A->nk; kk++)
                    for (int sgn = -1; sgn <= 1; sgn += 2) {
                        int q[3] = {i + sgn * A->off[kk][0], j + sgn * A->off[kk][1],
                                    k + sgn * A->off[kk][2]};
                        if (!wrap_point(q, g->n, g->periodic)) continue;
                        const double v = sgn > 0 ? A->c[kk][p] : A->c[kk][p - A->doff[kk]];
                        const int col = (q[2] * g->n[1] + q[1]) * g->n[0] + q[0];
                        M[(size_t)row * m + col] += v;
                    }
            }
    if (mg->singular) { /* A + s 1 1^T: definite, and its solution of a compatible b is A's zero-sum one */
        const double s = dsum / m / m;
        for (size_t t = 0; t < (size_t)m * m; t++)
            M[t] += s;
    }
    for (int c = 0; c < m; c++) { /* Cholesky, lower factor in place */
        double d = M[(size_t)c * m + c];
        for (int t = 0; t < c; t++)
            d -= M[(size_t)c * m + t] * M[(size_t)c * m + t];
        if (!(d > 0.0)) {
            free(M);
            hri_sop_free(&W);
            return HR_ERR_INTERNAL;
        }
        d = sqrt(d);
        M[(size_t)c * m + c] = d;
        for (int r = c + 1; r < m; r++) {
            double v = M[(size_t)r * m + c];
            for (int t = 0; t < c; t++)
                v -= M[(size_t)r * m + t] * M[(size_t)c * m + t];
            M[(size_t)r * m + c] = v / d;
        }
    }
    mg->chol = M;
    hri_sop_free(&W);
    return HR_OK;
}

static void coarse_solve(hr_st_mg *mg, double *u, const double *b)
{
    hr_st_level *L = &mg->lv[mg->nlv - 1];
    const hr_sgrid *g = &L->A.g;
    if (!mg->chol) { /* too large to factor: symmetric Gauss-Seidel sweeps */
        hri_st_smooth(mg, mg->nlv - 1, u, b, 20, 0);
        hri_st_smooth(mg, mg->nlv - 1, u, b, 20, 1);
        return;
    }
    const int m = mg->m, last = g->dim - 1;
    double *x = mg->cv;
    mg->k->download(&L->ex, g, mg->hbuf, b);
    /* a cut level: every rank's rows into the whole grid, solved there on every rank */
    const ptrdiff_t row = g->st[last];
    const size_t own = (size_t)g->n[last] * (size_t)row;
    double *w = L->dist ? mg->wbuf : mg->hbuf;
    if (L->dist) {
        if (own) memcpy(w + (ptrdiff_t)(g->goff[last] + 1) * row, mg->hbuf + row, own * sizeof *w);
        gather_rows(L, mg->lv[0].ex.comm, w);
    }
    const hr_sgrid *wg = L->dist ? &mg->whole : g;
    hri_sgrid_pack(wg, w, x);
    const double *M = mg->chol;
    for (int r = 0; r < m; r++) {
        double v = x[r];
        for (int t = 0; t < r; t++)
            v -= M[(size_t)r * m + t] * x[t];
        x[r] = v / M[(size_t)r * m + r];
    }
    for (int r = m - 1; r >= 0; r--) {
        double v = x[r];
        for (int t = r + 1; t < m; t++)
            v -= M[(size_t)t * m + r] * x[t];
        x[r] = v / M[(size_t)r * m + r];
    }
    hri_sgrid_unpack(wg, x, w);
    if (L->dist && own) memcpy(mg->hbuf + row, w + (ptrdiff_t)(g->goff[last] + 1) * row, own * sizeof *w);
    mg->k->upload(&L->ex, g, u, mg->hbuf);
}

/* ------------------------------------------------------------------ smoothing */

/* A deterministic value in [-0.5, 0.5) of a whole-grid index (the same on every rank count). */
static double unit_hash(size_t i)
{
    unsigned long long z = (unsigned long long)i + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 - 0.5;
}

/* The largest eigenvalue of D^-1 A by power iteration (the Chebyshev smoother's bound), on
 * the host copy of the level (its ranks' halos and sums where it is cut). */
static double estimate_lmax(hr_st_level *L)
{
    const hr_sgrid *g = &L->A.g;
    double *x = hri_sgrid_alloc(g), *y = hri_sgrid_alloc(g);
    const size_t lines = (size_t)g->n[1] * g->n[2];
    double *part = malloc((lines ? lines : 1) * sizeof *part);
    hr_st_exec host = {L->ex.team, part, lines, NULL, L->ex.comm, 0};
    double lam = 0.0;
    if (!x || !y || !part) goto done;
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++) {
                const size_t gi =
                    ((size_t)(k + g->goff[2]) * g->gn[1] + (size_t)(j + g->goff[1])) * g->gn[0] + i;
                x[hr_sgrid_index(g, i, j, k)] = unit_hash(gi);
            }
    for (int it = 0; it < 12; it++) {
        hri_st_apply_dot(&host, &L->A, x, y);
        double s3[3];
        for (int q = 0; q < 3; q++) { /* x . D^-1 A x, x . x, |D^-1 A x|^2: per line, then in order */
            for (int k = 0; k < g->n[2]; k++)
                for (int j = 0; j < g->n[1]; j++) {
                    double s = 0.0;
                    for (int i = 0; i < g->n[0]; i++) {
                        const ptrdiff_t p = hr_sgrid_index(g, i, j, k);
                        const double yp = y[p] / (L->A.diag ? L->A.diag[p] : L->A.ud);
                        s += q == 0 ? x[p] * yp : q == 1 ? x[p] * x[p] : yp * yp;
                    }
                    part[(size_t)k * g->n[1] + j] = s;
                }
            s3[q] = hri_st_sum_lines(&host, lines);
        }
        lam = s3[1] > 0.0 ? s3[0] / s3[1] : 0.0;
        const double nn = sqrt(s3[2]);
        if (!(nn > 0.0)) break;
        for (int k = 0; k < g->n[2]; k++)
            for (int j = 0; j < g->n[1]; j++)
                for (int i = 0; i < g->n[0]; i++) {
                    const ptrdiff_t p = hr_sgrid_index(g, i, j, k);
                    x[p] = y[p] / (L->A.diag ? L->A.diag[p] : L->A.ud) / nn;
                }
    }
done:
    free(x), free(y), free(part);
    return lam;
}

void hri_st_smooth(hr_st_mg *mg, int level, double *u, const double *b, int count, int reverse)
{
    hr_st_level *L = &mg->lv[level];
    const hr_sop *A = &L->dA;
    const hr_st_backend *k = mg->k;
    if (count <= 0) return;
    if (mg->smoother == HR_ST_GS && k->gs_sweep) {
        int s = 0;
        /* pairs of sweeps through t where the backend can (u -> t -> u, a pass each) */
        if (k->gs_pair && L->t && L->t != u)
            for (; s + 1 < count; s += 2)
                if (k->gs_pair(&L->ex, A, u, b, L->t, mg->omega, reverse, NULL) != 0) break;
        for (; s < count; s++)
            k->gs_sweep(&L->ex, A, u, b, mg->omega, reverse);
        return;
    }
    if (mg->smoother == HR_ST_GS) {
        int cls[27][3];
        const int nc = hri_st_colours(&L->A, cls);
        for (int s = 0; s < count; s++)
            for (int c = 0; c < nc; c++)
                k->colour_sweep(&L->ex, A, u, b, mg->omega, reverse ? nc - 1 - c : c);
        return;
    }
    double *t = L->t;
    if (mg->smoother == HR_ST_JACOBI) {
        for (int s = 0; s + 1 < count; s += 2) {
            k->jacobi(&L->ex, A, u, b, t, mg->omega);
            k->jacobi(&L->ex, A, t, b, u, mg->omega);
        }
        if (count & 1) {
            k->jacobi(&L->ex, A, u, b, t, mg->omega);
            k->copy(&L->ex, &A->g, u, t);
        }
        return;
    }
    /* Chebyshev on [lmax / 4, 1.1 lmax] (the upper part of the spectrum: the smoothing range) */
    const double hi = 1.1 * L->lmax, lo = hi / 4.0;
    const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
    double rho = 1.0 / sigma;
    double *cur = u, *prev = t;
    k->cheby(&L->ex, A, cur, b, NULL, prev, 1.0 / theta, 0.0); /* x1 into prev's buffer */
    double *swap = cur;
    cur = prev, prev = swap;
    for (int s = 1; s < count; s++) {
        const double rho1 = 1.0 / (2.0 * sigma - rho);
        k->cheby(&L->ex, A, cur, b, prev, prev, 2.0 * rho1 / delta, rho1 * rho);
        swap = cur, cur = prev, prev = swap;
        rho = rho1;
    }
    if (cur != u) k->copy(&L->ex, &A->g, u, cur);
}

/* ------------------------------------------------------------------ setup */

/* Whether the level below F is F's own stencil rediscretised on the coarse grid instead of
 * the Galerkin product: F is a uniform star stencil (a constant coefficient, Dirichlet or
 * periodic faces) and every axis is coarsened to a uniform coarse grid (Dirichlet: an odd
 * extent and the faces one spacing away; periodic: an even extent). The coarse star has
 * 2^dim / 4 times F's values: what R A P gives for smooth functions (R = P^T sums 2^dim fine
 * points per coarse one, the spacing doubles), in two colours and five or seven points
 * instead of the box stencil's eight colours and 27 (the model engines' coarse levels). */
static int rediscretise(const hr_st_level *F)
{
    const hr_sgrid *g = &F->A.g;
    if (!F->A.uniform) return 0;
    for (int a = 0; a < g->dim; a++) {
        if (!F->ax[a].coarsen) return 0;
        if (g->gper[a] ? (g->gn[a] & 1)
                       : !(g->gn[a] & 1) || F->gap[a][0] != 1.0 || F->gap[a][1] != 1.0 || F->free_lo[a] ||
                             F->free_hi[a])
            return 0;
    }
    return 1;
}

/* Whether the level below F is F's star stencil injected (inject_fn) instead of the Galerkin
 * product: the coefficient is one constant (Neumann faces, periodic axes and Dirichlet values
 * make F's stencil vary near the faces, not inside), F is a star with arrays, and every axis
 * coarsens to a grid of the same shape: a Dirichlet face one coarse spacing away from the
 * first / last coarse point (as it was one fine spacing from F's), a Neumann face's point kept,
 * a periodic axis even. The coarse couplings are then the finite-volume discretisation's on
 * the coarse grid, times 2^dim / 4 (as for the uniform star above): the cell faces and widths
 * at a coarse point are those at the fine point it sits on, scaled. */
static int inject(const hr_st_mg *mg, const hr_st_level *F)
{
    const hr_sgrid *g = &F->A.g;
    if (!mg->constant || F->A.uniform || F->A.nk != g->dim || !F->A.diag || !F->A.c[0]) return 0;
    for (int a = 0; a < g->dim; a++) {
        const hr_st_axis *x = &F->ax[a];
        if (!x->coarsen) return 0;
        const int n = g->gn[a];
        if (g->gper[a]) {
            if (n & 1) return 0;
            continue;
        }
        const int s = x->first, last_kept = ((n - 1 - s) & 1) == 0;
        if (F->free_lo[a] ? s != 0 : F->gap[a][0] != 1.0) return 0;
        if (F->free_hi[a] ? !last_kept : last_kept || F->gap[a][1] != 1.0) return 0;
    }
    return 1;
}

typedef struct inject_job {
    const hr_sop *A; /* the fine operator (whole indices through its goff) */
    hr_sop *C;       /* the coarse one, allocated on its grid (a slab or whole) */
    const hr_st_axis *ax;
} inject_job;

static void inject_fn(void *ctx, int tid, int nt)
{
    const inject_job *j = ctx;
    const hr_sop *A = j->A;
    hr_sop *C = j->C;
    const hr_sgrid *fg = &A->g, *cg = &C->g;
    const int dim = fg->dim;
    const double f = (double)(1 << dim) / 4.0;
    const size_t lines = (size_t)cg->n[1] * cg->n[2];
    const size_t l0 = lines * tid / nt, l1 = lines * (tid + 1) / nt;
    for (size_t line = l0; line < l1; line++) {
        const int idx1 = (int)(line % (size_t)cg->n[1]), idx2 = (int)(line / (size_t)cg->n[1]);
        for (int i0 = 0; i0 < cg->n[0]; i0++) {
            const int ci[3] = {i0, idx1, idx2};
            int fi[3] = {0, 0, 0};
            for (int a = 0; a < dim; a++) /* the fine point under the coarse one, in A's indices */
                fi[a] = j->ax[a].first + 2 * (ci[a] + cg->goff[a]) - fg->goff[a];
            const ptrdiff_t P = hr_sgrid_index(cg, ci[0], ci[1], ci[2]),
                            p = hr_sgrid_index(fg, fi[0], fi[1], fi[2]);
            C->diag[P] = f * A->diag[p];
            double e = C->diag[P];
            for (int a = 0; a < dim; a++) {
                const int I = ci[a] + cg->goff[a];
                const int up = cg->gper[a] || I < cg->gn[a] - 1, down = cg->gper[a] || I > 0;
                /* a constant coefficient: the coupling between two points along a depends on
                 * the other axes' positions only, so that of the fine pair (i, i + 1) is every
                 * pair's along this line; (i - 1, i) stands for the coarse (I - 1, I) */
                C->c[a][P] = up ? f * A->c[a][p] : 0.0;
                e += C->c[a][P] + (down ? f * A->c[a][p - fg->st[a]] : 0.0);
            }
            C->exc[P] = e;
        }
    }
}

/* A (a star stencil on its grid, a slab or whole) uniform with diagonal ud and couplings uc:
 * the arrays as hri_sop_detect_uniform expects them (no coupling past a non-periodic face; a
 * cut row's coupling to the row below in the ghost row). */
static void fill_star(hr_sop *A, double ud, const double uc[3])
{
    const hr_sgrid *g = &A->g;
    const int last = g->dim - 1;
    A->uniform = 1;
    A->ud = ud;
    for (int a = 0; a < 3; a++)
        A->uc[a] = a < g->dim ? uc[a] : 0.0;
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++) {
                const int idx[3] = {i, j, k};
                const ptrdiff_t p = hr_sgrid_index(g, i, j, k);
                double e = ud;
                A->diag[p] = ud;
                for (int a = 0; a < g->dim; a++) {
                    const int I = idx[a] + g->goff[a];
                    const int up = g->gper[a] || I < g->gn[a] - 1, down = g->gper[a] || I > 0;
                    A->c[a][p] = up ? uc[a] : 0.0;
                    e += (up ? uc[a] : 0.0) + (down ? uc[a] : 0.0);
                    if (a == last && idx[a] == 0 && down && !g->periodic[a]) A->c[a][p - g->st[a]] = uc[a];
                }
                A->exc[p] = e;
            }
}

/* A uniform star kept as its scalars (no arrays) gets its arrays, for a reader of them (the
 * Galerkin product, a gather, the dense coarsest factor): those discretisation would write. */
static hr_status materialise(hr_sop *A)
{
    if (!A->uniform || A->diag) return HR_OK;
    const hr_sgrid g = A->g;
    const double ud = A->ud, uc[3] = {A->uc[0], A->uc[1], A->uc[2]};
    HR_TRY(hri_sop_alloc(A, &g, 0));
    fill_star(A, ud, uc);
    for (int k = 0; k < A->nk; k++)
        hri_st_fill_ghosts(&A->g, A->c[k]);
    return HR_OK;
}

/* Builds the level below F (mg->lv[mg->nlv - 1], F the one above it) whose axes coarsen as F->ax says, nc its
 * whole extents: on a cut F, the Galerkin rows of this rank's slab of it, and then the level is cut the same
 * way or, with too few rows or unknowns per rank, whole on every rank. */
static hr_status coarse_level(hr_st_mg *mg, const int nc[3])
{
    hr_st_level *F = &mg->lv[mg->nlv - 2], *C = &mg->lv[mg->nlv - 1]; /* C just counted */
    const hr_sgrid *fg = &F->A.g;
    const int dim = fg->dim, last = dim - 1;
    const hr_st_comm *base = mg->lv[0].ex.comm;
    const int P = F->dist ? base->size : 1, rank = F->dist ? base->rank : 0;
    int *ccut = NULL;
    int n[3] = {nc[0], nc[1], nc[2]}, per[3] = {fg->periodic[0], fg->periodic[1], fg->periodic[2]};
    if (F->dist) {
        if (!(ccut = malloc((P + 1) * sizeof *ccut))) return HR_ERR_NO_MEMORY;
        int rows_min = nc[last];
        for (int r = 0; r <= P; r++)
            ccut[r] = coarse_row(&F->ax[last], F->cut[r]);
        for (int r = 0; r < P; r++)
            rows_min = ccut[r + 1] - ccut[r] < rows_min ? ccut[r + 1] - ccut[r] : rows_min;
        const size_t count = (size_t)nc[0] * nc[1] * (dim == 3 ? nc[2] : 1);
        const size_t dmin = mg->k->dist_min ? mg->k->dist_min : DIST_MIN;
        C->dist = rows_min >= 2 && count >= dmin * P;
        n[last] = ccut[rank + 1] - ccut[rank];
        per[last] = 0;
    }
    const int star = rediscretise(F), injected = !star && inject(mg, F);
    /* a cut F with a slab of one row somewhere: its rows and the next ones are not a rank's to
     * read, so C is built whole on every rank from the whole of F, gathered */
    int thin = 0;
    for (int r = 0; F->dist && r < P; r++)
        thin |= F->cut[r + 1] - F->cut[r] < 2;
    if (thin) C->dist = 0;
    if ((star || thin) && F->dist && !C->dist) { /* built whole on every rank: nothing to gather */
        n[last] = nc[last];
        per[last] = fg->gper[last];
    }
    hr_sgrid cg;
    hri_sgrid_init(&cg, dim, n, per);
    cg.goff[last] = F->dist && n[last] != nc[last] ? ccut[rank] : 0;
    cg.gn[last] = nc[last];
    cg.gper[last] = fg->gper[last];
    hr_status st = HR_OK;
    if (star) /* its scalars only (the arrays, where a reader needs them: materialise) */
        hri_sop_shape(&C->A, &cg, 0);
    else
        st = hri_sop_alloc(&C->A, &cg, !injected);
    hr_sop E; /* a cut F: its rows and one more each side */
    memset(&E, 0, sizeof E);
    if (st == HR_OK && star) {
        const double f = (double)(1 << dim) / 4.0;
        C->A.uniform = 1;
        C->A.ud = f * F->A.ud;
        for (int a = 0; a < 3; a++)
            C->A.uc[a] = a < dim ? f * F->A.uc[a] : 0.0;
    } else {
        /* a whole uniform star's product reads its scalars (rap_coef); a slab's gathers read arrays */
        if (st == HR_OK && F->dist) st = materialise(&F->A);
        if (st == HR_OK && F->dist) st = thin ? gather_op(F, base, &E) : extend_op(F, base, &E);
        if (st == HR_OK && injected) {
            inject_job j = {F->dist ? &E : &F->A, &C->A, F->ax};
            exec_run(&F->ex, inject_fn, &j);
        } else if (st == HR_OK) {
            rap_job j;
            memset(&j, 0, sizeof j);
            j.A = F->dist ? &E : &F->A, j.C = &C->A, j.ax = F->ax;
            rap_scratch t;
            memset(&t, 0, sizeof t);
            st = rap_shortcut(&F->ex, &j, &t);
            if (st == HR_OK) exec_run(&F->ex, rap_fn, &j);
            rap_scratch_free(&t);
        }
    }
    hri_sop_free(&E);
    if (st == HR_OK && F->dist) st = set_cut(C, base, ccut);
    free(ccut);
    C->ex = mg->lv[0].ex;
    C->ex.comm = NULL;
    if (st == HR_OK && F->dist && C->dist) { /* the couplings into the row below the slab: the ghost row */
        for (int k = 0; k < C->A.nk && C->A.c[k]; k++)
            base->halo(base->ctx, &C->A.g, C->A.c[k]);
        if (!(C->lc = lc_new(base, C->cut, dim == 3 ? nc[1] : 1)))
            st = HR_ERR_NO_MEMORY;
        else
            C->ex.comm = &C->lc->hooks;
    } else if (st == HR_OK && F->dist && !star && !thin) { /* whole on every rank */
        hr_sop W;
        st = gather_op(C, base, &W);
        if (st == HR_OK) hri_sop_free(&C->A), C->A = W;
    }
    if (st != HR_OK) return st;
    const hr_sgrid *g = &C->A.g;
    for (int k = 0; k < C->A.nk && C->A.c[k]; k++)
        hri_st_fill_ghosts(g, C->A.c[k]);
    set_same_rows(&F->ex, &C->A);
    const size_t lines = (size_t)g->n[1] * g->n[2];
    C->part = malloc((lines ? lines : 1) * sizeof *C->part);
    if (!C->part) return HR_ERR_NO_MEMORY;
    C->ex.part = C->part;
    C->ex.part_len = lines;
    const hr_st_backend *k = mg->k;
    C->u = k->alloc(mg->ex, g), C->b = k->alloc(mg->ex, g), C->r = k->alloc(mg->ex, g),
    C->t = k->alloc(mg->ex, g);
    if (!C->u || !C->b || !C->r || !C->t) return HR_ERR_NO_MEMORY;
    return HR_OK;
}

/* A uniform star stencil keeps its scalars alone (hri_sop_free accepts the NULL arrays). */
static void drop_uniform_arrays(hr_sop *A)
{
    if (!A->uniform || A->nk != A->g.dim) return;
    free(A->diag), free(A->exc);
    A->diag = A->exc = NULL;
    for (int k = 0; k < HR_ST_MAX_HALF; k++) {
        free(A->c[k]);
        A->c[k] = NULL;
    }
}

/* Per line of a uniform star kept as scalars, the sum of |coupling kk| along the line, added as
 * the arrays' loop adds it: coupling a of a point is present where its neighbour up axis a is
 * (a periodic axis, or not the whole grid's last row), and is |uc[a]| there. */
static void coupling_sums(const hr_sop *A, int kk, double *part)
{
    const hr_sgrid *g = &A->g;
    int a = 0;
    while (a < 2 && !A->off[kk][a])
        a++;
    const double v = fabs(A->uc[a]);
    const int up0 = g->gper[0] ? g->n[0] : g->n[0] - 1; /* points of a line with the x coupling */
    double sx = 0.0, sl = 0.0;                          /* a line's sum: the x coupling; a whole line of v */
    for (int x = 0; x < g->n[0]; x++) {
        if (x < up0) sx += v;
        sl += v;
    }
    for (int z = 0; z < g->n[2]; z++)
        for (int y = 0; y < g->n[1]; y++) {
            const int idx = a == 1 ? y : z;
            const int present = g->gper[a] || idx + g->goff[a] < g->gn[a] - 1;
            part[(size_t)z * g->n[1] + y] = a == 0 ? sx : present ? sl : 0.0;
        }
}

/* Per line of g, the sum of |c| along it (the lines split among a team's threads). */
typedef struct {
    const hr_sgrid *g;
    const double *c;
    double *part;
} line_sum_job;

static void line_sum_fn(void *ctx, int tid, int nt)
{
    const line_sum_job *j = ctx;
    const hr_sgrid *g = j->g;
    const size_t lines = (size_t)g->n[1] * g->n[2];
    const size_t l0 = lines * tid / nt, l1 = lines * (tid + 1) / nt;
    for (size_t l = l0; l < l1; l++) {
        const double *c = j->c + hr_sgrid_index(g, 0, (int)(l % (size_t)g->n[1]), (int)(l / (size_t)g->n[1]));
        double s = 0.0;
        for (int x = 0; x < g->n[0]; x++)
            s += fabs(c[x]);
        j->part[l] = s;
    }
}

hr_status hri_st_mg_setup(hr_st_mg *mg, hr_st_exec *ex, const hr_st_backend *k, hr_sop *A0,
                          const int free_lo[3], const int free_hi[3], int max_levels, int singular,
                          double *tmp0, int coarse)
{
    const int cap = 40;
    mg->ex = ex;
    mg->k = k;
    mg->singular = singular;
    mg->lv = calloc(cap, sizeof *mg->lv);
    if (!mg->lv) return HR_ERR_NO_MEMORY;
    mg->nlv = 1;
    hr_st_level *L0 = &mg->lv[0];
    L0->A = *A0;
    memset(A0, 0, sizeof *A0);
    L0->ex = *ex;
    L0->dist = ex->comm != NULL;
    if (L0->dist) HR_TRY(set_cut(L0, ex->comm, ex->comm->cut));
    for (int a = 0; a < 3; a++) {
        L0->free_lo[a] = free_lo[a], L0->free_hi[a] = free_hi[a];
        L0->gap[a][0] = L0->gap[a][1] = 1.0;
    }
    L0->t = tmp0;
    if (!(L0->r = k->alloc(ex, &L0->A.g))) return HR_ERR_NO_MEMORY;
    set_same_rows(ex, &L0->A);
    for (;;) {
        hr_st_level *F = &mg->lv[mg->nlv - 1];
        const hr_sgrid *fg = &F->A.g;
        if (mg->nlv == cap || (max_levels > 0 && mg->nlv >= max_levels) || whole_count(fg) <= COARSEST_MAX)
            break;
        /* the couplings per axis: per line, then the lines in order (every rank's) */
        double st[3] = {0, 0, 0};
        for (int kk = 0; kk < F->A.nk; kk++) {
            if (!F->A.c[kk]) { /* scalars only: the same sums of the couplings present */
                coupling_sums(&F->A, kk, F->ex.part);
            } else {
                line_sum_job j = {fg, F->A.c[kk], F->ex.part};
                setup_run(&F->ex, fg->count, line_sum_fn, &j);
            }
            const double s = hri_st_sum_lines(&F->ex, (size_t)fg->n[1] * fg->n[2]);
            for (int a = 0; a < fg->dim; a++)
                if (F->A.off[kk][a]) st[a] += s;
        }
        double smax = 0.0;
        int able[3] = {0, 0, 0};
        for (int a = 0; a < fg->dim; a++) {
            able[a] = can_coarsen(fg->gn[a], fg->gper[a]);
            if (able[a] && st[a] > smax) smax = st[a];
        }
        int any = 0, nc[3] = {1, 1, 1};
        double C_gap[3][2];
        for (int a = 0; a < 3; a++)
            C_gap[a][0] = F->gap[a][0], C_gap[a][1] = F->gap[a][1];
        for (int a = 0; a < fg->dim; a++) {
            F->ax[a].coarsen = 0;
            nc[a] = fg->gn[a];
            if (able[a] && st[a] >= STRONG * smax && smax > 0.0) {
                double gap[2] = {F->gap[a][0], F->gap[a][1]};
                hr_status s =
                    axis_build(&F->ax[a], fg->gn[a], fg->gper[a], F->free_lo[a], F->free_hi[a], gap);
                C_gap[a][0] = gap[0], C_gap[a][1] = gap[1];
                if (s != HR_OK) return s;
                nc[a] = F->ax[a].nc;
                any = 1;
            }
        }
        if (!any) break;
        hr_st_level *C = &mg->lv[mg->nlv];
        for (int a = 0; a < 3; a++) {
            C->free_lo[a] = F->free_lo[a], C->free_hi[a] = F->free_hi[a];
            C->gap[a][0] = C_gap[a][0], C->gap[a][1] = C_gap[a][1];
        }
        mg->nlv++;
        HR_TRY(coarse_level(mg, nc));
    }
    /* a uniform star stencil's arrays were for the set-up (the couplings' sums, the Galerkin
     * products, the gathers); the kernels read its scalars: the arrays go (the coarsest stays
     * whole for its dense factor) */
    for (int l = 0; l < mg->nlv; l++)
        if (l < mg->nlv - 1 || !coarse) drop_uniform_arrays(&mg->lv[l].A);
    if (coarse) HR_TRY(materialise(&mg->lv[mg->nlv - 1].A)); /* its dense factor reads them */
    for (int l = 0; l < mg->nlv; l++) {
        hr_st_level *L = &mg->lv[l];
        if (mg->smoother == HR_ST_CHEBY) L->lmax = estimate_lmax(L);
        hr_status s = k->twin_op(ex, &L->A, &L->dA);
        for (int a = 0; a < 3 && s == HR_OK; a++)
            if (L->ax[a].coarsen) s = k->twin_axis(ex, &L->ax[a], &L->dax[a]);
        if (s != HR_OK) return s;
    }
    return coarse ? dense_setup(mg) : HR_OK;
}

void hri_st_mg_free(hr_st_mg *mg)
{
    if (!mg || !mg->lv) return;
    for (int l = 0; l < mg->nlv; l++) {
        hr_st_level *L = &mg->lv[l];
        mg->k->free_op(mg->ex, &L->dA); /* (a uniform stencil's twin may hold no arrays) */
        hri_sop_free(&L->A);
        for (int a = 0; a < 3; a++) {
            if (L->dax[a].coarsen) mg->k->free_axis(mg->ex, &L->dax[a]);
            axis_free(&L->ax[a]);
        }
        if (l > 0) mg->k->release(mg->ex, L->u), mg->k->release(mg->ex, L->b), mg->k->release(mg->ex, L->t);
        mg->k->release(mg->ex, L->r);
        free(L->cut), free(L->rows_n), free(L->rows_at), free(L->part);
        lc_free(L->lc);
    }
    free(mg->lv);
    free(mg->chol);
    free(mg->cv);
    free(mg->hbuf);
    free(mg->wbuf);
    memset(mg, 0, sizeof *mg);
}

/* ------------------------------------------------------------------ cycles */

/* lv[l + 1].b = R src (src on level l: its residual, or its b in FMG's descent). */
static void restrict_to(hr_st_mg *mg, int l, double *src)
{
    hr_st_level *F = &mg->lv[l], *C = &mg->lv[l + 1];
    const hr_st_comm *base = mg->lv[0].ex.comm;
    if (F->dist) mg->k->halo(&mg->lv[0].ex, &F->A.g, src); /* the rows next to the slab */
    if (!F->dist || C->dist) {
        mg->k->restrict_(&F->ex, &F->A.g, &C->A.g, F->dax, src, C->b);
        return;
    }
    /* C is whole on every rank: this rank's rows of it, then every rank's */
    const int last = C->A.g.dim - 1, r = base->rank;
    hr_sgrid v = C->A.g;
    v.n[last] = C->cut[r + 1] - C->cut[r];
    v.count = (size_t)v.n[0] * v.n[1] * v.n[2];
    v.origin += (ptrdiff_t)C->cut[r] * v.st[last];
    v.goff[last] = C->cut[r];
    if (v.n[last] > 0) mg->k->restrict_(&F->ex, &F->A.g, &v, F->dax, src, C->b);
    mg->k->allgather(&mg->lv[0].ex, &C->A.g, C->b, C->rows_n, C->rows_at);
}

/* lv[l].u += P lv[l + 1].u */
static void prolong_from(hr_st_mg *mg, int l)
{
    hr_st_level *F = &mg->lv[l], *C = &mg->lv[l + 1];
    if (C->dist) mg->k->halo(&mg->lv[0].ex, &C->A.g, C->u);
    mg->k->prolong_add(&F->ex, &F->A.g, &C->A.g, F->dax, C->u, F->u);
}

/* The cycle's level operations (mg_walk.h): u and b of each level are its arrays. */
static void walk_pre(void *ctx, int l)
{
    hr_st_mg *mg = ctx;
    hri_st_smooth(mg, l, mg->lv[l].u, mg->lv[l].b, mg->pre, 0);
}

static void walk_post(void *ctx, int l)
{
    hr_st_mg *mg = ctx;
    hri_st_smooth(mg, l, mg->lv[l].u, mg->lv[l].b, mg->post, mg->symmetric || mg->apply);
}

/* level l's residual (in L->r) restricted, and level l + 1's iterate zeroed */
static void down_from_r(hr_st_mg *mg, int l)
{
    hr_st_level *L = &mg->lv[l], *C = &mg->lv[l + 1];
    restrict_to(mg, l, L->r);
    mg->k->zero(&C->ex, &C->A.g, C->u);
}

static void walk_down(void *ctx, int l)
{
    hr_st_mg *mg = ctx;
    hr_st_level *L = &mg->lv[l];
    L->ex.quiet = 1; /* the norm is not read */
    mg->k->residual(&L->ex, &L->dA, L->u, L->b, L->r);
    L->ex.quiet = 0;
    down_from_r(mg, l);
}

/* `count` Gauss-Seidel sweeps of level l whose last two, where the backend can, are a pair that
 * takes the residual `af` asks for as well (af->done then); the same sweeps as hri_st_smooth's */
static void smooth_after(hr_st_mg *mg, int l, int count, int reverse, hr_st_after *af)
{
    hr_st_level *L = &mg->lv[l];
    const hr_st_backend *k = mg->k;
    if (mg->smoother == HR_ST_GS && count >= 2 && k->gs_sweep && k->gs_pair && L->t && L->t != L->u && !L->dist) {
        hri_st_smooth(mg, l, L->u, L->b, count - 2, reverse);
        if (k->gs_pair(&L->ex, &L->dA, L->u, L->b, L->t, mg->omega, reverse, af) == 0) return;
        count = 2;
    }
    hri_st_smooth(mg, l, L->u, L->b, count, reverse);
}

/* pre(l) and down(l), the residual taken by the last smoothing pass where the backend can (one
 * read of level l's u and b fewer); the same values */
static void walk_pre_down(void *ctx, int l)
{
    hr_st_mg *mg = ctx;
    hr_st_level *L = &mg->lv[l];
    hr_st_after af = {L->r, NULL, 0};
    smooth_after(mg, l, mg->pre, 0, &af);
    if (af.done)
        down_from_r(mg, l);
    else
        walk_down(ctx, l);
}

static void walk_up(void *ctx, int l, int add)
{
    hr_st_mg *mg = ctx;
    hr_st_level *L = &mg->lv[l];
    if (!add) mg->k->zero(&L->ex, &L->A.g, L->u);
    prolong_from(mg, l);
}

/* up(l, 1) and post(l), the prolongation added inside the post-smoothing's first pass where
 * the backend can (one read and write of level l fewer); the same values */
static void walk_up_post(void *ctx, int l)
{
    hr_st_mg *mg = ctx;
    hr_st_level *F = &mg->lv[l], *C = &mg->lv[l + 1];
    const hr_st_backend *k = mg->k;
    const int reverse = mg->symmetric || mg->apply;
    /* the finest level's last pass may take the norm of the residual the cycle leaves, which
     * the convergence check reads next (hr_st_mg.want_rr) */
    hr_st_after af = {NULL, &mg->rr, 0};
    hr_st_after *ask = l == 0 && mg->want_rr ? &af : NULL;
    if (mg->smoother == HR_ST_GS && mg->post >= 2 && k->gs_sweep && k->prolong_gs_pair && F->t &&
        F->t != F->u && !F->dist && !C->dist &&
        k->prolong_gs_pair(&F->ex, &F->dA, &C->A.g, F->dax, C->u, F->u, F->b, F->t, mg->omega, reverse,
                           mg->post == 2 ? ask : NULL) == 0) {
        if (mg->post > 2) smooth_after(mg, l, mg->post - 2, reverse, ask);
    } else {
        walk_up(ctx, l, 1);
        smooth_after(mg, l, mg->post, reverse, ask);
    }
    mg->rr_ok = af.done;
}

static void walk_coarse(void *ctx, int l)
{
    hr_st_mg *mg = ctx;
    coarse_solve(mg, mg->lv[l].u, mg->lv[l].b);
}

/* the full multigrid descent: level l's iterate is zero, its residual is its b */
static void walk_fmg_down(void *ctx, int l)
{
    hr_st_mg *mg = ctx;
    restrict_to(mg, l, mg->lv[l].b);
}

static hri_mg_walk st_walk(hr_st_mg *mg)
{
    hri_mg_walk k = {mg,          mg->nlv - 1,   1,    walk_pre,     walk_post,    walk_down, walk_up,
                     walk_coarse, walk_fmg_down, NULL, walk_up_post, walk_pre_down};
    return k;
}

void hri_st_mg_cycle(hr_st_mg *mg, double *u, double *b, int fmg)
{
    hr_st_level *L0 = &mg->lv[0];
    mg->rr_ok = 0;
    L0->u = u;
    L0->b = b;
    const hri_mg_walk k = st_walk(mg);
    if (fmg)
        hri_mg_walk_fmg(&k, 1);
    else
        hri_mg_walk_cycle(&k, 0, mg->cycle == HR_CYCLE_FMG ? HR_CYCLE_V : mg->cycle);
}

void hri_st_mg_apply(hr_st_mg *mg, double *r, double *z)
{
    hr_st_level *L0 = &mg->lv[0];
    mg->k->zero(&L0->ex, &L0->A.g, z);
    L0->u = z;
    L0->b = r;
    mg->apply = 1;
    const hri_mg_walk k = st_walk(mg);
    hri_mg_walk_cycle(&k, 0, HR_CYCLE_V);
    mg->apply = 0;
}
