/*
 * The general engine's multigrid levels, checked from their definition: each Galerkin level
 * against R A P computed here from the level above (its arrays, the transfer tables as P,
 * R = P^T, one coarse column at a time), and each level's box of equal rows (hr_sop.rlo), which
 * the set-up finds and the CPU kernels read as scalars, against every row inside it. Problems of
 * sizes that are not 2^k - 1, with Dirichlet, Neumann and periodic faces, spacings and a
 * coefficient field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "hetrelax/hetrelax.h"
#include "methods/stencil/stencil_kernels.h"
#include "methods/stencil/stencil_mg.h"
#include "stencil_levels_util.h"

/* The whole-grid index of point t = (i, j, k) moved by d along each axis; -1 outside a
 * non-periodic face. */
static long moved(const hr_sgrid *g, const int t[3], const int d[3], int out[3])
{
    for (int a = 0; a < 3; a++) {
        out[a] = t[a] + d[a];
        if (out[a] < 0 || out[a] >= g->n[a]) {
            if (!g->periodic[a]) return -1;
            out[a] = (out[a] + g->n[a]) % g->n[a];
        }
    }
    return out[0] + (long)g->n[0] * (out[1] + (long)g->n[1] * out[2]);
}

/* Coefficient k of A at point t (its diagonal: k < 0), arrays or a uniform star's scalars. */
static double coef(const hr_sop *A, int k, const int t[3])
{
    const ptrdiff_t p = hr_sgrid_index(&A->g, t[0], t[1], t[2]);
    if (A->diag) return k < 0 ? A->diag[p] : A->c[k][p];
    if (k < 0) return A->ud;
    for (int a = 0; a < 3; a++)
        if (A->off[k][a]) return A->uc[a];
    return 0.0;
}

/* z = A w on dense whole-grid vectors: the diagonal plus each coupling in and out. */
static void apply(const hr_sop *A, const double *w, double *z)
{
    const hr_sgrid *g = &A->g;
    long at = 0;
    for (int k2 = 0; k2 < g->n[2]; k2++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++, at++) {
                const int t[3] = {i, j, k2};
                double s = coef(A, -1, t) * w[at];
                for (int k = 0; k < A->nk; k++) {
                    int q[3], m[3];
                    const int up[3] = {A->off[k][0], A->off[k][1], A->off[k][2]};
                    const int dn[3] = {-up[0], -up[1], -up[2]};
                    const long qu = moved(g, t, up, q), qd = moved(g, t, dn, m);
                    if (qu >= 0) s += coef(A, k, t) * w[qu];
                    if (qd >= 0) s += coef(A, k, m) * w[qd];
                }
                z[at] = s;
            }
}

/* P[q, J] from the transfer tables (the identity along an axis not coarsened). */
static double p_entry(const hr_st_axis ax[3], int dim, const int q[3], const int J[3])
{
    double w = 1.0;
    for (int a = 0; a < dim; a++) {
        int idx[2];
        double wt[2];
        const int n = hr_st_prolong_terms(&ax[a], q[a], idx, wt);
        double v = 0.0;
        for (int t = 0; t < n; t++)
            if (idx[t] == J[a]) v += wt[t];
        w *= v;
    }
    return w;
}

/* The level's stored coupling from coarse point I to J (d = J - I, wrapped: each in -1..1). */
static double stored(const hr_sop *C, const int I[3], const int d[3])
{
    if (!d[0] && !d[1] && !d[2]) return coef(C, -1, I);
    for (int k = 0; k < C->nk; k++) {
        int plus = 1, minus = 1;
        for (int a = 0; a < 3; a++)
            plus &= C->off[k][a] == d[a], minus &= C->off[k][a] == -d[a];
        if (plus) return coef(C, k, I);
        if (minus) {
            int m[3];
            if (moved(&C->g, I, d, m) < 0) return 0.0;
            return coef(C, k, m);
        }
    }
    return 0.0;
}

/* Level l + 1 of mg, if a Galerkin product, against R A P of level l. */
static void galerkin(const char *name, const hr_st_mg *mg, int l)
{
    const hr_st_level *F = &mg->lv[l], *Cl = &mg->lv[l + 1];
    const hr_sop *A = &F->A, *C = &Cl->A;
    if (C->exc || C->uniform) return; /* a star: rediscretised or injected, not a product */
    const hr_sgrid *fg = &A->g, *cg = &C->g;
    const int dim = fg->dim;
    const long nf = (long)fg->n[0] * fg->n[1] * fg->n[2];
    double *w = calloc(nf, sizeof *w), *z = calloc(nf, sizeof *z);
    double worst = 0.0, scale = 0.0;
    for (int K = 0; K < cg->n[2]; K++)
        for (int Jy = 0; Jy < cg->n[1]; Jy++)
            for (int Jx = 0; Jx < cg->n[0]; Jx++) {
                const int J[3] = {Jx, Jy, K};
                long at = 0;
                for (int k = 0; k < fg->n[2]; k++)
                    for (int j = 0; j < fg->n[1]; j++)
                        for (int i = 0; i < fg->n[0]; i++) {
                            const int q[3] = {i, j, k};
                            w[at++] = p_entry(F->ax, dim, q, J);
                        }
                apply(A, w, z);
                /* rows I next to J: (R A P)_{I J} = sum_p P[p, I] z[p] */
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            const int d[3] = {dx, dy, dz}, back[3] = {-dx, -dy, -dz};
                            if (dim == 2 && dz) continue;
                            int I[3];
                            if (moved(cg, J, d, I) < 0) continue;
                            if ((cg->periodic[0] && cg->n[0] < 3 && dx) ||
                                (cg->periodic[1] && cg->n[1] < 3 && dy))
                                continue; /* a wrap onto itself: two offsets, one entry */
                            double want = 0.0;
                            at = 0;
                            for (int k = 0; k < fg->n[2]; k++)
                                for (int j = 0; j < fg->n[1]; j++)
                                    for (int i = 0; i < fg->n[0]; i++, at++)
                                        if (z[at] != 0.0) {
                                            const int p[3] = {i, j, k};
                                            want += p_entry(F->ax, dim, p, I) * z[at];
                                        }
                            const double got = stored(C, I, back);
                            worst = fmax(worst, fabs(got - want));
                            scale = fmax(scale, fabs(want));
                        }
            }
    CHECK(worst <= 1e-12 * scale, "%s: level %d is not R A P of level %d (largest difference %.3e of %.3e)",
          name, l + 1, l, worst, scale);
    free(w), free(z);
}

/* Every row inside A's box of equal rows is the box's row, bitwise. */
static void same_rows(const char *name, int l, const hr_sop *A)
{
    const hr_sgrid *g = &A->g;
    if (A->rlo[0] >= A->rhi[0] || A->rlo[1] >= A->rhi[1] || A->rlo[2] >= A->rhi[2]) return;
    long bad = 0, count = 0;
    for (int k2 = A->rlo[2]; k2 < A->rhi[2]; k2++)
        for (int j = A->rlo[1]; j < A->rhi[1]; j++)
            for (int i = A->rlo[0]; i < A->rhi[0]; i++, count++) {
                const ptrdiff_t p = hr_sgrid_index(g, i, j, k2);
                int ok = A->diag[p] == A->rd && (!A->exc || A->exc[p] == A->rexc);
                for (int k = 0; k < A->nk; k++)
                    ok &= A->c[k][p] == A->rc[k] && A->c[k][p - A->doff[k]] == A->rcm[k];
                bad += !ok;
            }
    CHECK(bad == 0, "%s: level %d: %ld of the %ld rows in its box of equal rows differ from it", name, l, bad,
          count);
}

/* kinds: one letter per face (d, n, p), x- x+ y- y+ (z- z+); field: a coefficient field. */
static void check(int dim, int nx, int ny, int nz, const char *kinds, double lx, int field, int want_box)
{
    char name[96];
    snprintf(name, sizeof name, "%dD %dx%dx%d %s lx %g%s", dim, nx, ny, nz, kinds, lx, field ? " field" : "");
    test_levels t;
    const int made = test_levels_make(&t, dim, nx, ny, nz, kinds, lx, field);
    if (made != 0) {
        CHECK(0, "%s: %s", name, made == 1 ? "discretize" : "the hierarchy");
    } else {
        hr_st_mg *mg = &t.mg;
        int boxes = 0;
        for (int l = 0; l + 1 < mg->nlv; l++)
            galerkin(name, mg, l);
        for (int l = 0; l < mg->nlv; l++) {
            same_rows(name, l, &mg->lv[l].A);
            const hr_sop *L = &mg->lv[l].A;
            const long vol =
                (long)(L->rhi[0] - L->rlo[0]) * (L->rhi[1] - L->rlo[1]) * (L->rhi[2] - L->rlo[2]);
            boxes += L->rlo[0] < L->rhi[0] && 4 * vol >= (long)L->g.count; /* most of the level */
        }
        /* a constant coefficient: a box on some level (the shortcut and the scalars in use) */
        CHECK(!want_box || boxes > 0, "%s: no level has a box of equal rows", name);
        printf("ok: %s: %d levels, %d with most rows in a box of equal rows\n", name, mg->nlv, boxes);
    }
    test_levels_free(&t);
}

int main(void)
{
    check(2, 40, 30, 1, "dddd", 1.0, 0, 1); /* even extents: Galerkin levels below the finest */
    check(2, 37, 22, 1, "ndnd", 1.0, 0, 1); /* Neumann faces */
    check(2, 36, 24, 1, "ppdn", 1.0, 0, 1); /* periodic along x */
    check(2, 50, 21, 1, "dddd", 4.0, 0, 1); /* anisotropic spacing: semi-coarsening */
    check(2, 34, 26, 1, "dndd", 1.0, 1, 0); /* a coefficient field */
    check(3, 18, 16, 14, "dddddd", 1.0, 0, 1);
    check(3, 17, 14, 12, "ndddpp", 1.0, 0, 1);
    check(3, 16, 15, 13, "dddndd", 1.0, 1, 0);
    if (failures) printf("%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
