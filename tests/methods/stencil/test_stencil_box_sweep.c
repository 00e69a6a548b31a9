/*
 * The CPU backend's whole Gauss-Seidel sweep of a box stencil (hri_st_gs_sweep: the colours in
 * one pass over the planes) against the colours swept one pass each (hri_st_colour_sweep in
 * hri_st_colours' order, or backwards), bitwise, on the calling thread and on teams of 2, 3, 5
 * and 8 threads (a team runs grids of 4096 unknowns or more: those cases are that large, with
 * few planes, so that workers hold one or two planes, or none). Operators: 27-point (3-D) and
 * 9-point (2-D) stencils with random rows, with one row everywhere inside (the box of equal
 * rows read as scalars), and the Galerkin levels of problems with Neumann faces and a
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

static hr_team *teams[4];
static const int team_size[4] = {2, 3, 5, 8};
static long compared;

static unsigned rng = 12345u;
static double uniform01(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (double)(rng >> 8) / 16777216.0;
}

/* Every unknown of g: 1 inside the grid. */
static int inside(const hr_sgrid *g, int i, int j, int k)
{
    return i >= 0 && i < g->n[0] && j >= 0 && j < g->n[1] && k >= 0 && k < g->n[2];
}

/* A box stencil on g: random rows (constant 0), or one row everywhere inside (constant 1: the
 * couplings to a neighbour outside are 0, and the rows away from the faces form the box of
 * equal rows, which the kernels read as scalars). */
static int box_op(hr_sop *A, const hr_sgrid *g, int constant)
{
    if (hri_sop_alloc(A, g, 1) != HR_OK) return 0;
    double rc[HR_ST_MAX_HALF];
    for (int q = 0; q < A->nk; q++)
        rc[q] = -(0.05 + 0.9 * uniform01()) / (double)A->nk;
    const double rd = 2.5 + uniform01();
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++) {
                const ptrdiff_t p = hr_sgrid_index(g, i, j, k);
                A->diag[p] = constant ? rd : 2.0 + uniform01();
                for (int q = 0; q < A->nk; q++) {
                    const int *o = A->off[q];
                    const int in = inside(g, i + o[0], j + o[1], k + o[2]);
                    A->c[q][p] = !in ? 0.0 : constant ? rc[q] : -(0.05 + 0.9 * uniform01()) / (double)A->nk;
                }
            }
    if (constant) {
        for (int a = 0; a < 3; a++) {
            A->rlo[a] = g->n[a] > 2 ? 1 : 0;
            A->rhi[a] = g->n[a] > 2 ? g->n[a] - 1 : 0;
        }
        if (g->dim == 2) A->rlo[2] = 0, A->rhi[2] = 1;
        A->rd = rd;
        for (int q = 0; q < A->nk; q++)
            A->rc[q] = A->rcm[q] = rc[q];
    }
    return 1;
}

/* One case: the sweep against the colour passes, forward and backward, two sweeps each, for
 * omega 1 and 1.3, on every team. */
static void compare(const char *name, const hr_sop *A)
{
    const hr_sgrid *g = &A->g;
    const size_t lines = (size_t)g->n[1] * g->n[2];
    double *u0 = hri_sgrid_alloc(g), *b = hri_sgrid_alloc(g), *u1 = hri_sgrid_alloc(g),
           *u2 = hri_sgrid_alloc(g);
    double *part = malloc(lines * sizeof *part);
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++) {
                const ptrdiff_t p = hr_sgrid_index(g, i, j, k);
                u0[p] = uniform01() - 0.5;
                b[p] = uniform01() - 0.5;
            }
    int cls[27][3];
    const int nc = hri_st_colours(A, cls);
    const int nteams = g->count >= 4096 ? 4 : 0;
    for (int t = -1; t < nteams; t++) {
        hr_st_exec ex = {t < 0 ? NULL : teams[t], part, lines, NULL, NULL, 0};
        for (int reverse = 0; reverse < 2; reverse++)
            for (int w = 0; w < 2; w++) {
                const double omega = w ? 1.3 : 1.0;
                memcpy(u1, u0, g->padded * sizeof *u1);
                memcpy(u2, u0, g->padded * sizeof *u2);
                for (int s = 0; s < 2; s++) {
                    for (int c = 0; c < nc; c++)
                        hri_st_colour_sweep(&ex, A, u1, b, omega, reverse ? nc - 1 - c : c);
                    hri_st_gs_sweep(&ex, A, u2, b, omega, reverse);
                }
                size_t bad = 0, first = 0;
                for (size_t p = 0; p < g->padded; p++)
                    if (memcmp(&u1[p], &u2[p], sizeof *u1) != 0) {
                        if (!bad) first = p;
                        bad++;
                    }
                int changed = 0;
                for (size_t p = 0; p < g->padded; p++)
                    changed |= u1[p] != u0[p];
                CHECK(changed, "%s: the sweeps changed nothing", name);
                CHECK(bad == 0,
                      "%s (%d threads, %s, omega %g): %zu values differ from the colour passes, first at "
                      "padded index %zu",
                      name, t < 0 ? 1 : team_size[t], reverse ? "backward" : "forward", omega, bad, first);
                compared++;
            }
    }
    printf("ok: %s: %d colours, %s\n", name, nc, nteams ? "1, 2, 3, 5 and 8 threads" : "1 thread");
    free(u0), free(b), free(u1), free(u2), free(part);
}

static void direct(int dim, int nx, int ny, int nz, int constant)
{
    const int n[3] = {nx, ny, dim == 3 ? nz : 1}, per[3] = {0, 0, 0};
    hr_sgrid g;
    hri_sgrid_init(&g, dim, n, per);
    hr_sop A;
    char name[96];
    snprintf(name, sizeof name, "%dD %dx%dx%d %s rows", dim, n[0], n[1], n[2], constant ? "equal" : "random");
    if (!box_op(&A, &g, constant)) {
        CHECK(0, "%s: allocation", name);
        return;
    }
    compare(name, &A);
    hri_sop_free(&A);
}

/* The Galerkin (box) levels of multigrid on a problem; kinds: a letter per face (d, n). */
static void galerkin(int dim, int nx, int ny, int nz, const char *kinds, int field)
{
    char name[96];
    test_levels t;
    const int made = test_levels_make(&t, dim, nx, ny, nz, kinds, 0.0, field);
    int boxes = 0;
    if (made != 0) {
        CHECK(0, "%dD %dx%dx%d: %s", dim, nx, ny, nz, made == 1 ? "discretize" : "the hierarchy");
    } else {
        for (int l = 0; l < t.mg.nlv; l++) {
            const hr_sop *L = &t.mg.lv[l].A;
            if (L->exc || L->uniform || L->nk != (dim == 3 ? 13 : 4)) continue;
            snprintf(name, sizeof name, "%dD %dx%dx%d %s%s level %d (%dx%dx%d)", dim, nx, ny, nz, kinds,
                     field ? " field" : "", l, L->g.n[0], L->g.n[1], L->g.n[2]);
            compare(name, L);
            boxes++;
        }
    }
    CHECK(made == 1 || boxes > 0, "%dD %dx%dx%d %s: no Galerkin level", dim, nx, ny, nz, kinds);
    test_levels_free(&t);
}

int main(void)
{
    for (int t = 0; t < 4; t++)
        if (hri_team_create(team_size[t], HR_BIND_NONE, &teams[t]) != HR_OK) {
            printf("FAIL: a team of %d threads\n", team_size[t]);
            return 1;
        }
    /* small grids, odd and even extents (the calling thread) */
    direct(3, 3, 5, 7, 0);
    direct(3, 17, 9, 12, 0);
    direct(3, 17, 9, 12, 1);
    direct(3, 4, 6, 2, 1);
    direct(3, 5, 4, 1, 0);
    direct(3, 6, 1, 3, 0);
    direct(2, 9, 7, 1, 0);
    direct(2, 16, 11, 1, 1);
    /* teams: few planes, so that a worker holds one or two, or none (8 threads, 5 planes) */
    direct(3, 40, 37, 7, 0);
    direct(3, 41, 30, 12, 1);
    direct(3, 34, 31, 13, 0);
    direct(3, 60, 70, 5, 1);
    direct(3, 33, 34, 16, 1);
    direct(3, 30, 29, 9, 1);
    direct(2, 97, 61, 1, 0);
    direct(2, 640, 7, 1, 1);
    /* Galerkin levels: a constant coefficient, a Neumann face, a coefficient field */
    galerkin(3, 40, 36, 30, "dddddd", 0);
    galerkin(3, 37, 34, 31, "dddndd", 0);
    galerkin(3, 36, 35, 30, "dnddnd", 1);
    galerkin(2, 200, 150, 1, "dndd", 0);
    galerkin(2, 161, 140, 1, "dddd", 1);
    for (int t = 0; t < 4; t++)
        hri_team_free(teams[t]);
    printf("%ld comparisons\n", compared);
    if (failures) printf("%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
