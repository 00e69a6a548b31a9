/*
 * Multigrid for any structured problem (stencil_mg.h): the hierarchy and the cycles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "methods/stencil/stencil_mg.h"

#define COARSEST_MAX 64   /* stop coarsening at this many unknowns */
#define DENSE_MAX    1500 /* the coarsest level is factored up to this size */
#define STRONG       0.5  /* an axis is coarsened when its couplings reach this share of the strongest */

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

typedef struct {
    const hr_sop *A;
    hr_sop *C;
    const hr_st_axis *ax;
} rap_job;

static void rap_fn(void *ctx, int tid, int nt)
{
    const rap_job *j = ctx;
    const hr_sop *A = j->A;
    hr_sop *C = j->C;
    const hr_sgrid *fg = &A->g, *cg = &C->g;
    const int dim = fg->dim;
    const size_t lines = (size_t)cg->n[1] * cg->n[2];
    const size_t l0 = lines * tid / nt, l1 = lines * (tid + 1) / nt;
    /* A's row as (offset, coefficient at row p) terms: the diagonal, +o_k, -o_k */
    const int ne = 1 + 2 * A->nk;
    int eo[1 + 2 * HR_ST_MAX_HALF][3];
    memset(eo, 0, sizeof eo);
    for (int k = 0; k < A->nk; k++)
        for (int a = 0; a < 3; a++) {
            eo[1 + 2 * k][a] = A->off[k][a];
            eo[2 + 2 * k][a] = -A->off[k][a];
        }
    int where[27]; /* acc slot -> C's coefficient array (-1: the diagonal) */
    for (int s = 0; s < 27; s++)
        where[s] = -2;
    where[13] = -1;
    for (int k = 0; k < C->nk; k++)
        where[(C->off[k][2] + 1) * 9 + (C->off[k][1] + 1) * 3 + C->off[k][0] + 1] = k;
    for (size_t l = l0; l < l1; l++) {
        const int J = (int)(l % cg->n[1]), K = (int)(l / cg->n[1]);
        int yi[3], zi[3];
        double yw[3], zw[3];
        const int ny = hr_st_restrict_terms(&j->ax[1], J, yi, yw);
        const int nz = dim == 3 ? hr_st_restrict_terms(&j->ax[2], K, zi, zw) : (zi[0] = 0, zw[0] = 1.0, 1);
        for (int I = 0; I < cg->n[0]; I++) {
            const int Ic[3] = {I, J, K};
            double acc[27] = {0};
            int xi[3];
            double xw[3];
            const int nx = hr_st_restrict_terms(&j->ax[0], I, xi, xw);
            for (int c = 0; c < nz; c++)
                for (int b = 0; b < ny; b++)
                    for (int a = 0; a < nx; a++) {
                        const int pf[3] = {xi[a], yi[b], zi[c]};
                        const double wp = xw[a] * yw[b] * zw[c];
                        const ptrdiff_t p = hr_sgrid_index(fg, pf[0], pf[1], pf[2]);
                        for (int e = 0; e < ne; e++) {
                            double v;
                            if (e == 0)
                                v = A->diag[p];
                            else if (e & 1)
                                v = A->c[(e - 1) / 2][p];
                            else
                                v = A->c[(e - 2) / 2][p - A->doff[(e - 2) / 2]];
                            if (v == 0.0) continue;
                            int q[3], ok = 1;
                            for (int d = 0; d < 3 && ok; d++) {
                                q[d] = pf[d] + eo[e][d];
                                if (q[d] < 0 || q[d] >= fg->n[d]) {
                                    if (fg->periodic[d])
                                        q[d] = (q[d] + fg->n[d]) % fg->n[d];
                                    else
                                        ok = 0;
                                }
                            }
                            if (!ok) continue;
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
                                            if (cg->periodic[d]) {
                                                if (dd > 1) dd -= cg->n[d];
                                                if (dd < -1) dd += cg->n[d];
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
            const ptrdiff_t P = hr_sgrid_index(cg, I, J, K);
            for (int s = 0; s < 27; s++) {
                if (where[s] == -1)
                    C->diag[P] = acc[s];
                else if (where[s] >= 0)
                    C->c[where[s]][P] = acc[s];
            }
        }
    }
}

static void exec_run(hr_st_exec *ex, hr_team_fn fn, void *ctx)
{
    if (ex && ex->team)
        hr_team_run(ex->team, fn, ctx);
    else
        fn(ctx, 0, 1);
}

/* ------------------------------------------------------------------ the coarsest level */

static hr_status dense_setup(hr_st_mg *mg)
{
    const hr_sop *A = &mg->lv[mg->nlv - 1].A;
    const hr_sgrid *g = &A->g;
    const int m = (int)g->count;
    mg->m = m;
    mg->cv = malloc((size_t)m * sizeof *mg->cv);
    mg->hbuf = hr_sgrid_alloc(g);
    if (!mg->cv || !mg->hbuf) return HR_ERR_NO_MEMORY;
    if (m > DENSE_MAX) return HR_OK; /* smoothing sweeps instead */
    double *M = calloc((size_t)m * m, sizeof *M);
    if (!M) return HR_ERR_NO_MEMORY;
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
                        int ok = 1;
                        for (int d = 0; d < 3; d++)
                            if (q[d] < 0 || q[d] >= g->n[d]) {
                                if (g->periodic[d])
                                    q[d] = (q[d] + g->n[d]) % g->n[d];
                                else
                                    ok = 0;
                            }
                        if (!ok) continue;
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
    return HR_OK;
}

static void coarse_solve(hr_st_mg *mg, double *u, const double *b)
{
    hr_st_level *L = &mg->lv[mg->nlv - 1];
    const hr_sgrid *g = &L->A.g;
    if (!mg->chol) { /* too large to factor: symmetric Gauss-Seidel sweeps */
        hr_st_smooth(mg, mg->nlv - 1, u, b, 20, 0);
        hr_st_smooth(mg, mg->nlv - 1, u, b, 20, 1);
        return;
    }
    const int m = mg->m;
    double *x = mg->cv;
    mg->k->download(mg->ex, g, mg->hbuf, b);
    hr_sgrid_pack(g, mg->hbuf, x);
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
    hr_sgrid_unpack(g, x, mg->hbuf);
    mg->k->upload(mg->ex, g, u, mg->hbuf);
}

/* ------------------------------------------------------------------ smoothing */

/* The largest eigenvalue of D^-1 A by power iteration (the Chebyshev smoother's bound). */
static double estimate_lmax(hr_st_level *L)
{
    const hr_sgrid *g = &L->A.g;
    double *x = hr_sgrid_alloc(g), *y = hr_sgrid_alloc(g);
    double part_[1];
    hr_st_exec host = {NULL, NULL, 0, NULL, NULL};
    double *part = malloc((size_t)g->n[1] * g->n[2] * sizeof *part);
    host.part = part ? part : part_;
    host.part_len = (size_t)g->n[1] * g->n[2];
    double lam = 0.0;
    if (!x || !y || !part) goto done;
    unsigned s = 12345u;
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++) {
                s = s * 1664525u + 1013904223u;
                x[hr_sgrid_index(g, i, j, k)] = (double)(s >> 8) / 16777216.0 - 0.5;
            }
    for (int it = 0; it < 12; it++) {
        hr_st_apply_dot(&host, &L->A, x, y);
        double nn = 0.0, xy = 0.0, xx = 0.0;
        for (int k = 0; k < g->n[2]; k++)
            for (int j = 0; j < g->n[1]; j++)
                for (int i = 0; i < g->n[0]; i++) {
                    const ptrdiff_t p = hr_sgrid_index(g, i, j, k);
                    y[p] /= L->A.diag[p];
                    xy += x[p] * y[p];
                    xx += x[p] * x[p];
                    nn += y[p] * y[p];
                }
        lam = xx > 0.0 ? xy / xx : 0.0;
        nn = sqrt(nn);
        if (!(nn > 0.0)) break;
        for (size_t t = 0; t < g->padded; t++)
            x[t] = y[t] / nn;
    }
done:
    free(x), free(y), free(part);
    return lam;
}

void hr_st_smooth(hr_st_mg *mg, int level, double *u, const double *b, int count, int reverse)
{
    hr_st_level *L = &mg->lv[level];
    const hr_sop *A = &L->dA;
    const hr_st_backend *k = mg->k;
    if (count <= 0) return;
    if (mg->smoother == HR_ST_GS && k->gs_sweep) {
        for (int s = 0; s < count; s++)
            k->gs_sweep(mg->ex, A, u, b, mg->omega, reverse);
        return;
    }
    if (mg->smoother == HR_ST_GS) {
        int cls[27][3];
        const int nc = hr_st_colours(&L->A, cls);
        for (int s = 0; s < count; s++)
            for (int c = 0; c < nc; c++)
                k->colour_sweep(mg->ex, A, u, b, mg->omega, reverse ? nc - 1 - c : c);
        return;
    }
    double *t = L->t;
    if (mg->smoother == HR_ST_JACOBI) {
        for (int s = 0; s + 1 < count; s += 2) {
            k->jacobi(mg->ex, A, u, b, t, mg->omega);
            k->jacobi(mg->ex, A, t, b, u, mg->omega);
        }
        if (count & 1) {
            k->jacobi(mg->ex, A, u, b, t, mg->omega);
            k->copy(mg->ex, &A->g, u, t);
        }
        return;
    }
    /* Chebyshev on [lmax / 4, 1.1 lmax] (the upper part of the spectrum: the smoothing range) */
    const double hi = 1.1 * L->lmax, lo = hi / 4.0;
    const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
    double rho = 1.0 / sigma;
    double *cur = u, *prev = t;
    k->cheby(mg->ex, A, cur, b, NULL, prev, 1.0 / theta, 0.0); /* x1 into prev's buffer */
    double *swap = cur;
    cur = prev, prev = swap;
    for (int s = 1; s < count; s++) {
        const double rho1 = 1.0 / (2.0 * sigma - rho);
        k->cheby(mg->ex, A, cur, b, prev, prev, 2.0 * rho1 / delta, rho1 * rho);
        swap = cur, cur = prev, prev = swap;
        rho = rho1;
    }
    if (cur != u) k->copy(mg->ex, &A->g, u, cur);
}

/* ------------------------------------------------------------------ setup */

hr_status hr_st_mg_setup(hr_st_mg *mg, hr_st_exec *ex, const hr_st_backend *k, hr_sop *A0,
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
    mg->lv[0].A = *A0;
    memset(A0, 0, sizeof *A0);
    for (int a = 0; a < 3; a++) {
        mg->lv[0].free_lo[a] = free_lo[a], mg->lv[0].free_hi[a] = free_hi[a];
        mg->lv[0].gap[a][0] = mg->lv[0].gap[a][1] = 1.0;
    }
    mg->lv[0].t = tmp0;
    if (!(mg->lv[0].r = k->alloc(ex, &mg->lv[0].A.g))) return HR_ERR_NO_MEMORY;
    for (;;) {
        hr_st_level *F = &mg->lv[mg->nlv - 1];
        const hr_sgrid *fg = &F->A.g;
        if (mg->nlv == cap || (max_levels > 0 && mg->nlv >= max_levels) || fg->count <= COARSEST_MAX) break;
        /* the couplings per axis */
        double st[3] = {0, 0, 0};
        for (int k = 0; k < F->A.nk; k++) {
            double s = 0.0;
            for (int z = 0; z < fg->n[2]; z++)
                for (int y = 0; y < fg->n[1]; y++) {
                    const double *c = F->A.c[k] + hr_sgrid_index(fg, 0, y, z);
                    for (int x = 0; x < fg->n[0]; x++)
                        s += fabs(c[x]);
                }
            for (int a = 0; a < fg->dim; a++)
                if (F->A.off[k][a]) st[a] += s;
        }
        double smax = 0.0;
        int able[3] = {0, 0, 0};
        for (int a = 0; a < fg->dim; a++) {
            able[a] = can_coarsen(fg->n[a], fg->periodic[a]);
            if (able[a] && st[a] > smax) smax = st[a];
        }
        int any = 0, nc[3] = {1, 1, 1};
        double C_gap[3][2];
        for (int a = 0; a < 3; a++)
            C_gap[a][0] = F->gap[a][0], C_gap[a][1] = F->gap[a][1];
        for (int a = 0; a < fg->dim; a++) {
            F->ax[a].coarsen = 0;
            nc[a] = fg->n[a];
            if (able[a] && st[a] >= STRONG * smax && smax > 0.0) {
                double gap[2] = {F->gap[a][0], F->gap[a][1]};
                hr_status s =
                    axis_build(&F->ax[a], fg->n[a], fg->periodic[a], F->free_lo[a], F->free_hi[a], gap);
                C_gap[a][0] = gap[0], C_gap[a][1] = gap[1];
                if (s != HR_OK) return s;
                nc[a] = F->ax[a].nc;
                any = 1;
            }
        }
        if (!any) break;
        hr_st_level *C = &mg->lv[mg->nlv];
        hr_sgrid cg;
        hr_sgrid_init(&cg, fg->dim, nc, fg->periodic);
        hr_status s = hr_sop_alloc(&C->A, &cg, 1);
        if (s != HR_OK) return s;
        for (int a = 0; a < 3; a++) {
            C->free_lo[a] = F->free_lo[a], C->free_hi[a] = F->free_hi[a];
            C->gap[a][0] = C_gap[a][0], C->gap[a][1] = C_gap[a][1];
        }
        C->u = k->alloc(ex, &cg), C->b = k->alloc(ex, &cg), C->r = k->alloc(ex, &cg),
        C->t = k->alloc(ex, &cg);
        if (!C->u || !C->b || !C->r || !C->t) return HR_ERR_NO_MEMORY;
        mg->nlv++;
        rap_job j = {&F->A, &C->A, F->ax};
        exec_run(ex, rap_fn, &j);
        for (int k = 0; k < C->A.nk; k++)
            hr_st_fill_ghosts(&cg, C->A.c[k]);
    }
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

void hr_st_mg_free(hr_st_mg *mg)
{
    if (!mg || !mg->lv) return;
    for (int l = 0; l < mg->nlv; l++) {
        hr_st_level *L = &mg->lv[l];
        if (L->dA.diag) mg->k->free_op(mg->ex, &L->dA);
        hr_sop_free(&L->A);
        for (int a = 0; a < 3; a++) {
            if (L->dax[a].coarsen) mg->k->free_axis(mg->ex, &L->dax[a]);
            axis_free(&L->ax[a]);
        }
        if (l > 0) mg->k->release(mg->ex, L->u), mg->k->release(mg->ex, L->b), mg->k->release(mg->ex, L->t);
        mg->k->release(mg->ex, L->r);
    }
    free(mg->lv);
    free(mg->chol);
    free(mg->cv);
    free(mg->hbuf);
    memset(mg, 0, sizeof *mg);
}

/* ------------------------------------------------------------------ cycles */

static void visit(hr_st_mg *mg, int l, hr_cycle kind);

/* One cycle at level l (u, b its arrays), coarse corrections by `kind`. */
static void cycle_at(hr_st_mg *mg, int l, hr_cycle kind)
{
    hr_st_level *L = &mg->lv[l];
    if (l == mg->nlv - 1) {
        coarse_solve(mg, L->u, L->b);
        return;
    }
    hr_st_level *C = &mg->lv[l + 1];
    hr_st_smooth(mg, l, L->u, L->b, mg->pre, 0);
    const hr_st_backend *k = mg->k;
    k->residual(mg->ex, &L->dA, L->u, L->b, L->r);
    k->restrict_(mg->ex, &L->A.g, &C->A.g, L->dax, L->r, C->b);
    k->zero(mg->ex, &C->A.g, C->u);
    visit(mg, l + 1, kind);
    k->prolong_add(mg->ex, &L->A.g, &C->A.g, L->dax, C->u, L->u);
    hr_st_smooth(mg, l, L->u, L->b, mg->post, 1);
}

static void visit(hr_st_mg *mg, int l, hr_cycle kind)
{
    switch (kind) {
    case HR_CYCLE_W:
        cycle_at(mg, l, HR_CYCLE_W);
        if (l < mg->nlv - 1) cycle_at(mg, l, HR_CYCLE_W);
        break;
    case HR_CYCLE_F:
        cycle_at(mg, l, HR_CYCLE_F);
        if (l < mg->nlv - 1) cycle_at(mg, l, HR_CYCLE_V);
        break;
    default: cycle_at(mg, l, HR_CYCLE_V); break;
    }
}

void hr_st_mg_cycle(hr_st_mg *mg, double *u, double *b, int fmg)
{
    hr_st_level *L0 = &mg->lv[0];
    L0->u = u;
    L0->b = b;
    if (!fmg || mg->nlv == 1) {
        cycle_at(mg, 0, mg->cycle == HR_CYCLE_FMG ? HR_CYCLE_V : mg->cycle);
        return;
    }
    /* full multigrid on the correction: the residual down to the coarsest level, solved
     * there, then interpolated up with one V-cycle per level */
    const hr_st_backend *k = mg->k;
    hr_st_level *lv = mg->lv;
    k->residual(mg->ex, &L0->dA, u, b, L0->r);
    k->restrict_(mg->ex, &L0->A.g, &lv[1].A.g, L0->dax, L0->r, lv[1].b);
    for (int l = 1; l + 1 < mg->nlv; l++)
        k->restrict_(mg->ex, &lv[l].A.g, &lv[l + 1].A.g, lv[l].dax, lv[l].b, lv[l + 1].b);
    const int last = mg->nlv - 1;
    coarse_solve(mg, lv[last].u, lv[last].b);
    for (int l = last - 1; l >= 1; l--) {
        k->zero(mg->ex, &lv[l].A.g, lv[l].u);
        k->prolong_add(mg->ex, &lv[l].A.g, &lv[l + 1].A.g, lv[l].dax, lv[l + 1].u, lv[l].u);
        cycle_at(mg, l, HR_CYCLE_V);
    }
    k->prolong_add(mg->ex, &L0->A.g, &lv[1].A.g, L0->dax, lv[1].u, u);
    cycle_at(mg, 0, HR_CYCLE_V);
}

void hr_st_mg_apply(hr_st_mg *mg, double *r, double *z)
{
    mg->k->zero(mg->ex, &mg->lv[0].A.g, z);
    hr_st_level *L0 = &mg->lv[0];
    L0->u = z;
    L0->b = r;
    cycle_at(mg, 0, HR_CYCLE_V);
}
