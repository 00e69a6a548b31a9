/*
 * The general-problem engine on the GPU (label gpu; exit 77 without CUDA or without a device).
 *
 * - kernels: every entry of the CUDA backend (methods/stencil/cuda) against the CPU backend on
 *   every level of a multigrid hierarchy (the star stencil and the Galerkin box stencils,
 *   2-D and 3-D, periodic ghosts, the colours of odd periodic axes, the transfers):
 *   bitwise for every per-point kernel, 1e-13 for the reductions; the reductions, the sweeps
 *   and the residual bitwise equal under several block shapes;
 * - solves through hr_grid_solver, every method (jacobi, redblack, sor, mg with V/W/F/FMG and
 *   the redblack/jacobi/cheby smoothers, cg, mgcg) on 2-D and 3-D problems with mixed
 *   Dirichlet / Neumann / periodic faces, coefficient fields, odd extents and singular ones:
 *   a fixed number of iterations on the GPU is bitwise equal to cpu-seq for the methods no
 *   reduction reaches (relaxation, multigrid: only the singular problems' final mean
 *   differs in rounding), within 1e-10 for cg and mgcg; converged to 1e-11, the solutions
 *   agree within 1e-9 (relative, max norm) in the same iteration count +-1; a second GPU run
 *   is bitwise equal to the first;
 * - what the handle reports: backend gpu, one GPU, no CPU threads, the device's name; auto
 *   picks the GPU for a general problem.
 *
 * test_gpu_general [-v] [--methods LIST]: LIST (or HR_GPU_TEST_METHODS) names the methods of
 * the table below to solve with, comma-separated ("none": the kernels only). The build that
 * runs the CUDA sources on the host emulation (tests/methods/stencil/stencil_emu, HR_STENCIL_EMU; or
 * HR_GPU_TEST_EMU=1) checks the relaxation methods' convergence every 100 sweeps (the
 * emulated reductions are slow); the device run checks every sweep.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/hetrelax.h"
#include "methods/stencil/cuda/stencil_cuda.h"
#include "methods/stencil/stencil_mg.h"
#include "runtime/cuda/cuda_api.h"

/* HR_TEST_CUDA: a CUDA build; HR_STENCIL_EMU: the host emulation of the CUDA sources. A build
 * with neither has no CUDA backend to test (and no stencil_cuda.h functions to link). */
#if !defined(HR_TEST_CUDA) && !defined(HR_STENCIL_EMU)
int main(void)
{
    printf("built without CUDA: skipped\n");
    return 77;
}
#else

static int failures, checks, verbose;

#define CHECK(c, ...)                                                                                        \
    do {                                                                                                     \
        checks++;                                                                                            \
        if (!(c)) {                                                                                          \
            failures++;                                                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                      \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
            fflush(stdout);                                                                                  \
        }                                                                                                    \
    } while (0)

static int emulated(void)
{
#ifdef HR_STENCIL_EMU
    return 1;
#else
    const char *e = getenv("HR_GPU_TEST_EMU");
    return e && *e && strcmp(e, "0") != 0;
#endif
}

/* ------------------------------------------------------------------ the problems */

typedef struct tcase {
    const char *name;
    int dim, n[3];
    double L[3];
    const char *kinds; /* one letter per face: d, n, p (x- x+ y- y+ z- z+) */
    int coef;          /* 1: a coefficient field; 0: the constant 2.5 */
} tcase;

static const tcase cases[] = {
    {"2d dn|pp coef field", 2, {37, 29, 0}, {1.0, 2.0, 1.0}, "dnpp", 1},
    {"2d nd|dn a = 2.5", 2, {45, 30, 0}, {1.0, 1.0, 1.0}, "nddn", 0},
    {"2d pp|nn singular", 2, {24, 17, 0}, {1.0, 1.0, 1.0}, "ppnn", 1},
    {"3d dn|pp|nd coef field", 3, {19, 15, 13}, {1.0, 1.5, 1.0}, "dnppnd", 1},
    {"3d dirichlet 4:1:1", 3, {17, 12, 11}, {4.0, 1.0, 1.0}, "dddddd", 0},
    {"3d periodic singular", 3, {15, 9, 11}, {1.0, 1.0, 1.0}, "pppppp", 1},
    /* a constant coefficient on grids whose coarse levels keep the faces' shape: the coarse
     * levels are the star stencil injected (stencil_mg.c) */
    {"2d dd|nd a = 2.5, injected", 2, {31, 32, 0}, {1.0, 1.0, 1.0}, "ddnd", 0},
    {"3d nn|pp|dd a = 2.5, injected", 3, {17, 16, 15}, {1.0, 1.0, 1.0}, "nnppdd", 0},
    /* a uniform star (its scalars, no arrays) on a grid of several warps' columns and several
     * segments of rows of the one-pass 2-D sweep (stencil_cuda_sweep.cu) */
    {"2d dirichlet uniform", 2, {60, 70, 0}, {1.0, 1.0, 1.0}, "dddd", 0},
    /* Galerkin (box) levels of two tiles of the 2-D box sweep in x (stencil_cuda_sweep.cu) */
    {"2d nd|dd coef field, wide", 2, {130, 61, 0}, {2.0, 1.0, 1.0}, "nddd", 1},
    /* and box levels of several segments of rows of the marching box sweep (narrow, so that
     * the relaxation methods converge in a few thousand sweeps) */
    {"2d dn|dd coef field, tall", 2, {16, 300, 0}, {1.0, 16.0, 1.0}, "dndd", 1},
    /* and of the 3-D one: two tiles of columns, of rows and of planes (16 a block here) each */
    {"3d dn|nd|dd coef field", 3, {61, 13, 20}, {1.0, 1.0, 2.0}, "dnnddd", 1},
};
#define NCASES   (sizeof cases / sizeof *cases)

typedef struct arrays {
    double *f, *coef, *face[6];
} arrays;

static void arrays_free(arrays *A)
{
    free(A->f), free(A->coef);
    for (int i = 0; i < 6; i++)
        free(A->face[i]);
    memset(A, 0, sizeof *A);
}

/* The problem of tc: a smooth right-hand side with a bump, the coefficient field, Dirichlet
 * values per point on the first Dirichlet face, constants on the others. */
static void pose(const tcase *tc, hr_problem *p, arrays *A)
{
    memset(A, 0, sizeof *A);
    hr_problem_init_model(p, tc->dim, tc->n[0], tc->n[1], tc->n[2]);
    hr_problem_set_lengths(p, tc->L[0], tc->L[1], tc->L[2]);
    const size_t cnt = hr_problem_unknowns(p);
    A->f = malloc(cnt * sizeof *A->f);
    if (tc->coef) A->coef = malloc(cnt * sizeof *A->coef);
    const int nz = tc->dim == 3 ? tc->n[2] : 1;
    size_t q = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < tc->n[1]; j++)
            for (int i = 0; i < tc->n[0]; i++, q++) {
                const double x = (i + 0.5) / tc->n[0], y = (j + 0.5) / tc->n[1], z = (k + 0.5) / nz;
                A->f[q] = sin(3.0 * x + 1.0) * cos(2.0 * y) + z +
                          (i == tc->n[0] / 3 && j == tc->n[1] / 2 ? 5.0 : 0.0);
                if (A->coef) A->coef[q] = 1.0 + 0.6 * sin(6.0 * x) * cos(5.0 * y + 2.0 * z);
            }
    hr_problem_set_rhs(p, HR_RHS_ARRAY, A->f);
    hr_problem_set_coef(p, tc->coef ? 1.0 : 2.5, A->coef);
    int first = 1;
    for (int f = 0; f < 2 * tc->dim; f++) {
        const char c = tc->kinds[f];
        if (c == 'p') {
            hr_problem_set_bc(p, f, HR_BC_PERIODIC, 0.0, NULL);
        } else if (c == 'n') {
            hr_problem_set_bc(p, f, HR_BC_NEUMANN, f & 1 ? 0.3 : -0.2, NULL);
        } else if (first) {
            const size_t m = hr_problem_face_points(p, (hr_face)f);
            A->face[f] = malloc(m * sizeof(double));
            for (size_t t = 0; t < m; t++)
                A->face[f][t] = 0.5 + 0.25 * sin(0.7 * (double)t);
            hr_problem_set_bc(p, f, HR_BC_DIRICHLET, 0.0, A->face[f]);
            first = 0;
        } else {
            hr_problem_set_bc(p, f, HR_BC_DIRICHLET, f & 1 ? 1.0 : -0.5, NULL);
        }
    }
    char why[256];
    if (hr_problem_validate(p, why, sizeof why) != HR_OK) {
        printf("test problem %s: %s\n", tc->name, why);
        exit(1);
    }
}

/* ------------------------------------------------------------------ kernels against the CPU backend */

static uint64_t rng = 88172645463325252ull;

static double rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

/* A padded array with random unknowns and zero ghosts. */
static double *random_array(const hr_sgrid *g)
{
    double *x = hri_sgrid_alloc(g);
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++)
                x[hr_sgrid_index(g, i, j, k)] = rnd();
    return x;
}

typedef struct gpu {
    const hr_st_backend *k;
    hr_st_exec ex;
    double *host; /* a download buffer of the finest level */
} gpu;

static double *up(gpu *G, const hr_sgrid *g, const double *h)
{
    double *d = G->k->alloc(&G->ex, g);
    if (d && h) G->k->upload(&G->ex, g, d, h);
    return d;
}

/* The device array d against the host array h, bitwise over the whole padded array. */
static int same(gpu *G, const hr_sgrid *g, const double *d, const double *h, const char *what, int level)
{
    G->k->download(&G->ex, g, G->host, d);
    size_t bad = 0, first = 0;
    for (size_t t = 0; t < g->padded; t++)
        if (memcmp(&G->host[t], &h[t], sizeof(double)) != 0 && bad++ == 0) first = t;
    CHECK(bad == 0,
          "level %d %s: %zu of %zu values differ from the CPU backend (first at %zu: %.17g vs %.17g)", level,
          what, bad, g->padded, first, bad ? G->host[first] : 0.0, bad ? h[first] : 0.0);
    return bad == 0;
}

/* The device array against the host one to rel (max norm). */
static void near(gpu *G, const hr_sgrid *g, const double *d, const double *h, double rel, const char *what,
                 int level)
{
    G->k->download(&G->ex, g, G->host, d);
    double m = 0.0, diff = 0.0;
    for (size_t t = 0; t < g->padded; t++) {
        m = fmax(m, fabs(h[t]));
        diff = fmax(diff, fabs(G->host[t] - h[t]));
    }
    CHECK(diff <= rel * m, "level %d %s: differs from the CPU backend by %.3e (scale %.3e)", level, what,
          diff, m);
}

static void close_to(double gpu_v, double cpu_v, double rel, const char *what, int level)
{
    CHECK(fabs(gpu_v - cpu_v) <= rel * fabs(cpu_v), "level %d %s: %.17g on the GPU, %.17g on the CPU", level,
          what, gpu_v, cpu_v);
}

/* Every kernel of one level (A: host operator, dA: its twin). */
static void level_kernels(gpu *G, hr_st_exec *cx, const hr_sop *A, const hr_sop *dA, int level)
{
    const hr_st_backend *C = &hri_st_cpu, *K = G->k;
    hr_st_exec *gx = &G->ex;
    const hr_sgrid *g = &A->g;
    double *u = random_array(g), *b = random_array(g), *r = hri_sgrid_alloc(g);
    double *du = up(G, g, u), *db = up(G, g, b), *dr = up(G, g, NULL);
    /* residual, with r and without */
    const double rr = C->residual(cx, A, u, b, r), drr = K->residual(gx, dA, du, db, dr);
    close_to(drr, rr, 1e-13, "residual norm", level);
    same(G, g, dr, r, "residual", level);
    same(G, g, du, u, "u's ghosts after the residual", level);
    const double drr0 = K->residual(gx, dA, du, db, NULL);
    CHECK(memcmp(&drr, &drr0, sizeof drr) == 0,
          "level %d: the residual's norm without r differs (%.17g, %.17g)", level, drr, drr0);
    /* the product */
    const double pq = C->apply_dot(cx, A, u, r), dpq = K->apply_dot(gx, dA, du, dr);
    close_to(dpq, pq, 1e-13, "p . A p", level);
    same(G, g, dr, r, "A p", level);
    /* weighted Jacobi */
    C->jacobi(cx, A, u, b, r, 0.8);
    K->jacobi(gx, dA, du, db, dr, 0.8);
    same(G, g, dr, r, "jacobi", level);
    /* Chebyshev: beta 0 (prev unread), then prev apart, then prev the output */
    double *prev = random_array(g), *dprev = up(G, g, prev);
    C->cheby(cx, A, u, b, NULL, r, 0.7, 0.0);
    K->cheby(gx, dA, du, db, NULL, dr, 0.7, 0.0);
    same(G, g, dr, r, "cheby (beta 0)", level);
    C->cheby(cx, A, u, b, prev, r, 0.7, 0.3);
    K->cheby(gx, dA, du, db, dprev, dr, 0.7, 0.3);
    same(G, g, dr, r, "cheby", level);
    C->cheby(cx, A, u, b, prev, prev, 0.6, -0.2);
    K->cheby(gx, dA, du, db, dprev, dprev, 0.6, -0.2);
    same(G, g, dprev, prev, "cheby into prev", level);
    /* Gauss-Seidel (SOR 1.3), colour by colour, forward then backward */
    int cls[27][3];
    const int nc = hri_st_colours(A, cls);
    for (int s = 0; s < 2 * nc; s++) {
        const int c = s < nc ? s : 2 * nc - 1 - s;
        C->colour_sweep(cx, A, u, b, 1.3, c);
        K->colour_sweep(gx, dA, du, db, 1.3, c);
        char what[64];
        snprintf(what, sizeof what, "colour %d (%d %d %d) of %d", c, cls[c][0], cls[c][1], cls[c][2], nc);
        if (!same(G, g, du, u, what, level)) break;
    }
    /* the same on a slab of the last axis, as an MPI rank holds it (rows 1 .. n - 2, or 1 .. n - 1):
     * the colours follow the whole grid's indices (goff, gn, gper) on both backends */
    const int last = g->dim - 1;
    if (g->n[last] >= 3) {
        /* the slab's padded arrays start one plane into the whole grid's (its ghost planes are
         * the whole grid's rows next to it) */
        hr_sop As = *A, dAs = *dA;
        hr_sop *vs[2] = {&As, &dAs};
        const int rows = g->n[last] >= 4 ? g->n[last] - 2 : g->n[last] - 1;
        const ptrdiff_t sh = g->st[last];
        for (int t = 0; t < 2; t++) {
            hr_sgrid *v = &vs[t]->g;
            v->n[last] = rows;
            v->goff[last] = 1;
            v->periodic[last] = 0;
            v->count = (size_t)v->n[0] * v->n[1] * v->n[2];
            v->padded = (size_t)(rows + 2) * (size_t)sh;
            vs[t]->diag += sh;
            if (vs[t]->exc) vs[t]->exc += sh;
            for (int k = 0; k < vs[t]->nk; k++)
                vs[t]->c[k] += sh;
        }
        int scls[27][3];
        const int snc = hri_st_colours(&As, scls);
        for (int c = 0; c < snc; c++) {
            C->colour_sweep(cx, &As, u + sh, b + sh, 1.3, c);
            K->colour_sweep(gx, &dAs, du + sh, db + sh, 1.3, c);
            char what[80];
            snprintf(what, sizeof what, "slab colour %d (%d %d %d) of %d", c, scls[c][0], scls[c][1],
                     scls[c][2], snc);
            if (!same(G, g, du, u, what, level)) break;
        }
    }
    /* the vector steps */
    double *x = random_array(g), *p = random_array(g), *q = random_array(g);
    double *dx = up(G, g, x), *dp = up(G, g, p), *dq = up(G, g, q);
    K->upload(gx, g, dr, r);
    double scale = 0.0; /* x . p of random vectors may cancel: the error's scale is sum |x p| */
    for (size_t t = 0; t < g->padded; t++)
        scale += fabs(x[t] * p[t]);
    const double xp = C->dot(cx, g, x, p), dxp = K->dot(gx, g, dx, dp);
    CHECK(fabs(dxp - xp) <= 1e-14 * scale, "level %d dot: %.17g on the GPU, %.17g on the CPU (scale %.3e)",
          level, dxp, xp, scale);
    const double ur = C->update(cx, g, x, r, p, q, 0.37), dur = K->update(gx, g, dx, dr, dp, dq, 0.37);
    close_to(dur, ur, 1e-13, "update's r . r", level);
    same(G, g, dx, x, "update's x", level);
    same(G, g, dr, r, "update's r", level);
    C->xpay(cx, g, q, p, -0.61);
    K->xpay(gx, g, dq, dp, -0.61);
    same(G, g, dp, p, "xpay", level);
    C->remove_mean(cx, g, x);
    K->remove_mean(gx, g, dx);
    near(G, g, dx, x, 1e-13, "remove_mean", level);
    K->zero(gx, g, dx);
    hri_st_zero(g, x);
    same(G, g, dx, x, "zero", level);
    K->copy(gx, g, dx, dp);
    same(G, g, dx, p, "copy", level);
    double *v[] = {du, db, dr, dprev, dx, dp, dq};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        K->release(gx, v[i]);
    free(u), free(b), free(r), free(prev), free(x), free(p), free(q);
}

/* The transfers between level l and l + 1 (host tables ax, twins dax). */
static void transfer_kernels(gpu *G, hr_st_exec *cx, const hr_sgrid *fg, const hr_sgrid *cg,
                             const hr_st_axis ax[3], const hr_st_axis dax[3], int level)
{
    double *rf = random_array(fg), *bc = hri_sgrid_alloc(cg), *ec = random_array(cg), *uf = random_array(fg);
    double *drf = up(G, fg, rf), *dbc = up(G, cg, NULL), *dec = up(G, cg, ec), *duf = up(G, fg, uf);
    hri_st_cpu.restrict_(cx, fg, cg, ax, rf, bc);
    G->k->restrict_(&G->ex, fg, cg, dax, drf, dbc);
    same(G, cg, dbc, bc, "restriction", level);
    hri_st_cpu.prolong_add(cx, fg, cg, ax, ec, uf);
    G->k->prolong_add(&G->ex, fg, cg, dax, dec, duf);
    same(G, fg, duf, uf, "prolongation", level);
    G->k->release(&G->ex, drf), G->k->release(&G->ex, dbc), G->k->release(&G->ex, dec),
        G->k->release(&G->ex, duf);
    free(rf), free(bc), free(ec), free(uf);
}

/* The finest level under several block shapes: every result bitwise the same. */
static void shapes(gpu *G, const hr_sop *A, const hr_sop *dA)
{
    static const int sh[][3] = {{32, 1, 1}, {64, 4, 3}, {256, 1, 7}, {32, 8, 2}, {128, 8, 64}};
    const hr_sgrid *g = &A->g;
    double *u = random_array(g), *b = random_array(g);
    double *du = up(G, g, u), *db = up(G, g, b), *dr = up(G, g, NULL), *dq = up(G, g, NULL);
    double *r0 = hri_sgrid_alloc(g), *q0 = hri_sgrid_alloc(g), *j0 = hri_sgrid_alloc(g);
    int bx, by, h;
    hri_st_cuda_get_shape(&G->ex, g->dim, &bx, &by, &h);
    double ref[3] = {0, 0, 0};
    for (size_t s = 0; s <= sizeof sh / sizeof *sh; s++) {
        if (s > 0)
            CHECK(hri_st_cuda_set_shape(&G->ex, g->dim, sh[s - 1][0], sh[s - 1][1], sh[s - 1][2]) == HR_OK,
                  "shape %dx%dx%d refused", sh[s - 1][0], sh[s - 1][1], sh[s - 1][2]);
        double v[3];
        v[0] = G->k->residual(&G->ex, dA, du, db, dr);
        v[1] = G->k->apply_dot(&G->ex, dA, du, dq);
        v[2] = G->k->dot(&G->ex, g, du, db);
        G->k->jacobi(&G->ex, dA, du, db, dq, 0.9);
        if (s == 0) {
            memcpy(ref, v, sizeof ref);
            G->k->download(&G->ex, g, r0, dr);
            G->k->download(&G->ex, g, j0, dq);
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "shape %dx%dx%d: residual", sh[s - 1][0], sh[s - 1][1], sh[s - 1][2]);
        CHECK(memcmp(v, ref, sizeof v) == 0,
              "%s, product and dot (%.17g %.17g %.17g) differ from (%.17g %.17g %.17g)", what, v[0], v[1],
              v[2], ref[0], ref[1], ref[2]);
        same(G, g, dr, r0, what, 0);
        same(G, g, dq, j0, "another shape: jacobi", 0);
    }
    CHECK(hri_st_cuda_set_shape(&G->ex, g->dim, 48, 1, 1) == HR_ERR_INVALID_ARG, "bx 48 accepted");
    CHECK(hri_st_cuda_set_shape(&G->ex, g->dim, 256, 8, 1) == HR_ERR_INVALID_ARG, "2048 threads accepted");
    hri_st_cuda_set_shape(&G->ex, g->dim, bx, by, h);
    G->k->release(&G->ex, du), G->k->release(&G->ex, db), G->k->release(&G->ex, dr),
        G->k->release(&G->ex, dq);
    free(u), free(b), free(r0), free(q0), free(j0);
}

static void kernels(const tcase *tc)
{
    hr_problem p;
    arrays arr;
    pose(tc, &p, &arr);
    int n[3] = {p.n[0], p.n[1], p.dim == 3 ? p.n[2] : 1}, per[3] = {0, 0, 0}, flo[3] = {0, 0, 0},
        fhi[3] = {0, 0, 0};
    for (int a = 0; a < p.dim; a++) {
        per[a] = p.bc[2 * a].kind == HR_BC_PERIODIC;
        flo[a] = p.bc[2 * a].kind == HR_BC_NEUMANN;
        fhi[a] = p.bc[2 * a + 1].kind == HR_BC_NEUMANN;
    }
    hr_sgrid g;
    hri_sgrid_init(&g, p.dim, n, per);
    hr_sop A;
    if (hri_sop_alloc(&A, &g, 0) != HR_OK || hri_discretize(&p, NULL, &A, NULL, NULL) != HR_OK) {
        CHECK(0, "%s: discretize", tc->name);
        return;
    }
    const size_t lines = (size_t)g.n[1] * g.n[2];
    hr_st_exec cx = {NULL, malloc(lines * sizeof(double)), lines, NULL, NULL, 0};
    hr_st_mg mg;
    memset(&mg, 0, sizeof mg);
    double *t0 = hri_sgrid_alloc(&g);
    if (hri_st_mg_setup(&mg, &cx, &hri_st_cpu, &A, flo, fhi, 0, hr_problem_is_singular(&p), t0, 1) != HR_OK) {
        CHECK(0, "%s: the hierarchy", tc->name);
        return;
    }
    gpu G = {hri_st_cuda_backend(), {NULL, NULL, 0, NULL, NULL, 0}, hri_sgrid_alloc(&g)};
    if (G.k->open(&G.ex, 0, lines) != HR_OK) {
        CHECK(0, "%s: the CUDA backend does not open", tc->name);
        return;
    }
    if (verbose) printf("kernels: %s, %d levels\n", tc->name, mg.nlv);
    hr_sop dA[40];
    hr_st_axis dax[40][3];
    memset(dax, 0, sizeof dax);
    for (int l = 0; l < mg.nlv; l++) {
        CHECK(G.k->twin_op(&G.ex, &mg.lv[l].A, &dA[l]) == HR_OK, "level %d: twin_op", l);
        for (int a = 0; a < 3; a++)
            if (mg.lv[l].ax[a].coarsen)
                CHECK(G.k->twin_axis(&G.ex, &mg.lv[l].ax[a], &dax[l][a]) == HR_OK, "level %d: twin_axis", l);
    }
    /* the default shape (one line a thread on these small grids), then threads that march
     * several lines (the carried registers) */
    static const int march[][3] = {{0, 0, 0}, {32, 4, 3}, {64, 1, 7}};
    int bx0, by0, h0;
    hri_st_cuda_get_shape(&G.ex, p.dim, &bx0, &by0, &h0);
    for (size_t s = 0; s < sizeof march / sizeof *march; s++) {
        CHECK(hri_st_cuda_set_shape(&G.ex, p.dim, march[s][0], march[s][1], march[s][2]) == HR_OK, "shape");
        for (int l = 0; l < mg.nlv; l++) {
            level_kernels(&G, &cx, &mg.lv[l].A, &dA[l], l);
            if (s == 0 && l + 1 < mg.nlv)
                transfer_kernels(&G, &cx, &mg.lv[l].A.g, &mg.lv[l + 1].A.g, mg.lv[l].ax, dax[l], l);
        }
    }
    hri_st_cuda_set_shape(&G.ex, p.dim, bx0, by0, h0);
    shapes(&G, &mg.lv[0].A, &dA[0]);
    CHECK(hri_st_cuda_sync(&G.ex) == HR_OK, "%s: CUDA failure: %s", tc->name, hri_st_cuda_error(&G.ex));
    for (int l = 0; l < mg.nlv; l++) {
        G.k->free_op(&G.ex, &dA[l]);
        for (int a = 0; a < 3; a++)
            if (dax[l][a].coarsen) G.k->free_axis(&G.ex, &dax[l][a]);
    }
    G.k->close(&G.ex);
    hri_st_mg_free(&mg);
    free(t0), free(cx.part), free(G.host);
    arrays_free(&arr);
}

/* ------------------------------------------------------------------ solves against cpu-seq */

typedef struct mcase {
    const char *name;
    hr_method m;
    hr_cycle cycle;
    const char *smoother;
} mcase;

static const mcase methods[] = {
    {"jacobi", HR_METHOD_JACOBI, HR_CYCLE_V, NULL},
    {"redblack", HR_METHOD_REDBLACK, HR_CYCLE_V, NULL},
    {"sor", HR_METHOD_SOR, HR_CYCLE_V, NULL},
    {"mg V redblack", HR_METHOD_MG, HR_CYCLE_V, "redblack"},
    {"mg W redblack", HR_METHOD_MG, HR_CYCLE_W, "redblack"},
    {"mg F redblack", HR_METHOD_MG, HR_CYCLE_F, "redblack"},
    {"mg FMG redblack", HR_METHOD_MG, HR_CYCLE_FMG, "redblack"},
    {"mg V jacobi", HR_METHOD_MG, HR_CYCLE_V, "jacobi"},
    {"mg W jacobi", HR_METHOD_MG, HR_CYCLE_W, "jacobi"},
    {"mg F jacobi", HR_METHOD_MG, HR_CYCLE_F, "jacobi"},
    {"mg FMG jacobi", HR_METHOD_MG, HR_CYCLE_FMG, "jacobi"},
    {"mg V cheby", HR_METHOD_MG, HR_CYCLE_V, "cheby"},
    {"mg W cheby", HR_METHOD_MG, HR_CYCLE_W, "cheby"},
    {"mg F cheby", HR_METHOD_MG, HR_CYCLE_F, "cheby"},
    {"mg FMG cheby", HR_METHOD_MG, HR_CYCLE_FMG, "cheby"},
    {"cg", HR_METHOD_CG, HR_CYCLE_V, NULL},
    {"mgcg", HR_METHOD_MGCG, HR_CYCLE_V, NULL},
};
#define NMETHODS (sizeof methods / sizeof *methods)

static const char *only; /* --methods: the methods to solve with (NULL: all) */

/* Whether name is in the comma-separated list `only` (every name when there is no list). */
static int wanted(const char *name)
{
    if (!only) return 1;
    const size_t len = strlen(name);
    for (const char *p = only; *p;) {
        const char *q = strchr(p, ',');
        const size_t l = q ? (size_t)(q - p) : strlen(p);
        if (l == len && !strncmp(p, name, len)) return 1;
        if (!q) break;
        p = q + 1;
    }
    return 0;
}

static int relaxation(hr_method m)
{
    return m == HR_METHOD_JACOBI || m == HR_METHOD_REDBLACK || m == HR_METHOD_SOR;
}

static hr_grid_options options(const mcase *mc, const hr_problem *p, hr_backend b, double tol, long iters)
{
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.method = mc->m;
    o.cycle = mc->cycle;
    o.smoother = mc->smoother;
    o.backend = b;
    o.tol = tol;
    o.max_iters = iters;
    if (mc->m == HR_METHOD_JACOBI && hr_problem_is_singular(p)) o.omega = 0.8; /* plain Jacobi is refused */
    if (relaxation(mc->m) && tol > 0.0) o.check_every = emulated() ? 100 : 1;
    return o;
}

static hr_status solve(const hr_problem *p, const hr_grid_options *o, double *u, hr_result *r,
                       hr_grid_info *info)
{
    hr_grid_solver *s = NULL;
    hr_status st = hr_grid_solver_create(p, o, &s);
    if (st != HR_OK) {
        printf("create (%s): %s\n", hr_backend_name(o->backend), hr_last_error());
        return st;
    }
    if (info) hr_grid_solver_info(s, info);
    st = hr_grid_solver_solve(s, NULL, NULL, r);
    if (st == HR_OK) st = hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, hr_problem_unknowns(p));
    if (st != HR_OK) printf("solve (%s): %s\n", hr_backend_name(o->backend), hr_grid_solver_last_error(s));
    hr_grid_solver_free(s);
    return st;
}

/* The relative residuals a solve recorded at its checks (keep_history): their count, at most
 * `cap` of them into rel. */
static size_t history(const hr_problem *p, const hr_grid_options *o, double *rel, size_t cap)
{
    hr_grid_options oh = *o;
    oh.keep_history = 1;
    hr_grid_solver *s = NULL;
    hr_result r;
    size_t n = 0;
    if (hr_grid_solver_create(p, &oh, &s) == HR_OK && hr_grid_solver_solve(s, NULL, NULL, &r) == HR_OK) {
        const long *its = NULL;
        const double *res = NULL;
        n = hr_grid_solver_history(s, &its, &res);
        for (size_t i = 0; i < n && i < cap; i++)
            rel[i] = res[i];
    }
    hr_grid_solver_free(s);
    return n;
}

static double rel_diff(const double *a, const double *b, size_t n)
{
    double m = 0.0, d = 0.0;
    for (size_t i = 0; i < n; i++) {
        m = fmax(m, fabs(b[i]));
        d = fmax(d, fabs(a[i] - b[i]));
    }
    return m > 0.0 ? d / m : d;
}

static void solves(const tcase *tc)
{
    hr_problem p;
    arrays arr;
    pose(tc, &p, &arr);
    const size_t cnt = hr_problem_unknowns(&p);
    const int singular = hr_problem_is_singular(&p);
    double *uc = malloc(cnt * sizeof *uc), *ug = malloc(cnt * sizeof *ug), *ug2 = malloc(cnt * sizeof *ug2);
    for (size_t mi = 0; mi < NMETHODS; mi++) {
        const mcase *mc = &methods[mi];
        if (!wanted(mc->name)) continue;
        const int krylov = mc->m == HR_METHOD_CG || mc->m == HR_METHOD_MGCG;
        hr_result rc, rg, rg2;
        hr_grid_info info;
        /* a fixed number of iterations */
        const long fixed = relaxation(mc->m) ? 7 : krylov ? 6 : 3;
        hr_grid_options oc = options(mc, &p, HR_BACKEND_CPU_SEQ, 0.0, fixed),
                        og = options(mc, &p, HR_BACKEND_GPU, 0.0, fixed);
        if (solve(&p, &oc, uc, &rc, NULL) != HR_OK || solve(&p, &og, ug, &rg, &info) != HR_OK) {
            CHECK(0, "%s, %s: %ld iterations do not run", tc->name, mc->name, fixed);
            continue;
        }
        CHECK(info.backend == HR_BACKEND_GPU && info.gpus == 1 && info.threads == 0 && info.general == 1,
              "%s, %s: info backend %d gpus %d threads %d general %d", tc->name, mc->name, (int)info.backend,
              info.gpus, info.threads, info.general);
        CHECK(rg.iterations == fixed && rc.iterations == fixed, "%s, %s: %ld / %ld iterations of %ld",
              tc->name, mc->name, rg.iterations, rc.iterations, fixed);
        CHECK(emulated() || strlen(rg.device_name) > 0, "%s, %s: no device name", tc->name, mc->name);
        const double dfix = rel_diff(ug, uc, cnt);
        if (krylov || singular)
            CHECK(dfix <= (krylov ? 1e-10 : 1e-13), "%s, %s: %ld iterations: GPU and cpu-seq differ by %.3e",
                  tc->name, mc->name, fixed, dfix);
        else
            CHECK(memcmp(ug, uc, cnt * sizeof *ug) == 0,
                  "%s, %s: %ld iterations: GPU differs from cpu-seq (by %.3e, relative)", tc->name, mc->name,
                  fixed, dfix);
        /* converged */
        const long cap = relaxation(mc->m) ? 400000 : mc->m == HR_METHOD_MG ? 100 : 3000;
        oc = options(mc, &p, HR_BACKEND_CPU_SEQ, 1e-11, cap);
        og = options(mc, &p, HR_BACKEND_GPU, 1e-11, cap);
        if (solve(&p, &oc, uc, &rc, NULL) != HR_OK || solve(&p, &og, ug, &rg, NULL) != HR_OK ||
            solve(&p, &og, ug2, &rg2, NULL) != HR_OK) {
            CHECK(0, "%s, %s: the converged runs fail", tc->name, mc->name);
            continue;
        }
        const double d = rel_diff(ug, uc, cnt);
        if (verbose)
            printf("  %-24s %-16s cpu %6ld its %.2e  gpu %6ld its %.2e  |u_gpu - u_cpu| / |u| %.2e  fixed "
                   "%.2e\n",
                   tc->name, mc->name, rc.iterations, rc.relative_residual, rg.iterations,
                   rg.relative_residual, d, dfix);
        CHECK(rc.reason == HR_REASON_CONVERGED && rg.reason == HR_REASON_CONVERGED,
              "%s, %s: reasons cpu %s, gpu %s", tc->name, mc->name, hr_reason_string(rc.reason),
              hr_reason_string(rg.reason));
        CHECK(labs(rg.iterations - rc.iterations) <= 1, "%s, %s: %ld iterations on the GPU, %ld on the CPU",
              tc->name, mc->name, rg.iterations, rc.iterations);
        CHECK(d < 1e-9, "%s, %s: converged solutions differ by %.3e (relative)", tc->name, mc->name, d);
        CHECK(memcmp(ug, ug2, cnt * sizeof *ug) == 0 && rg.iterations == rg2.iterations &&
                  memcmp(&rg.relative_residual, &rg2.relative_residual, sizeof(double)) == 0,
              "%s, %s: two GPU runs differ", tc->name, mc->name);
        /* multigrid: the residual checked after every cycle (on the GPU, where it can, taken by
         * the cycle's last pass) is the CPU's to rounding, cycle by cycle */
        if (mc->m == HR_METHOD_MG) {
            double hc[100], hg[100];
            const size_t nc = history(&p, &oc, hc, 100), ng = history(&p, &og, hg, 100);
            double worst = nc > 0 && ng > 0 && (nc > ng ? nc - ng : ng - nc) <= 1 ? 0.0 : INFINITY;
            for (size_t i = 0; i < nc && i < ng && i < 100; i++)
                worst = fmax(worst, fabs(hg[i] - hc[i]) / fmax(hc[i], 1e-300));
            CHECK(worst < 1e-8, "%s, %s: residual histories differ (%zu / %zu checks, worst %.3e)", tc->name,
                  mc->name, ng, nc, worst);
        }
    }
    free(uc), free(ug), free(ug2);
    arrays_free(&arr);
}

/* ------------------------------------------------------------------ device arrays */

#include "device_mem_test_util.h"

/* hr_grid_solver_solve_device: f and x0 in the device's memory (fp64, then fp32), the
 * solution written there, give the bits of the same solve from host arrays, in the same
 * iterations; afterwards a solve with the problem's own f is as a fresh handle's. */
static void device_arrays(const tcase *tc)
{
    static const mcase dm[] = {
        {"jacobi", HR_METHOD_JACOBI, HR_CYCLE_V, NULL},
        {"mg V redblack", HR_METHOD_MG, HR_CYCLE_V, "redblack"},
        {"mgcg", HR_METHOD_MGCG, HR_CYCLE_V, NULL},
    };
    hr_problem p;
    arrays arr;
    pose(tc, &p, &arr);
    const size_t cnt = hr_problem_unknowns(&p);
    double *f = malloc(cnt * sizeof *f), *x0 = malloc(cnt * sizeof *x0), *u1 = malloc(cnt * sizeof *u1),
           *u2 = malloc(cnt * sizeof *u2), *f32d = malloc(cnt * sizeof *f32d), *x032d = malloc(cnt * sizeof *x032d);
    float *f32 = malloc(cnt * sizeof *f32), *x032 = malloc(cnt * sizeof *x032), *v32 = malloc(cnt * sizeof *v32),
          *w32 = malloc(cnt * sizeof *w32);
    void *df = dev_alloc(cnt * sizeof(double)), *dx0 = dev_alloc(cnt * sizeof(double)),
         *dx = dev_alloc(cnt * sizeof(double));
    for (size_t i = 0; i < cnt; i++) {
        f[i] = rnd() + 0.1 * (double)(i % 7);
        x0[i] = 0.3 * rnd();
        f32[i] = (float)f[i], x032[i] = (float)x0[i];
        f32d[i] = f32[i], x032d[i] = x032[i];
    }
    for (size_t mi = 0; mi < sizeof dm / sizeof *dm; mi++) {
        const mcase *mc = &dm[mi];
        const long fixed = relaxation(mc->m) ? 9 : 3;
        hr_grid_options o = options(mc, &p, HR_BACKEND_GPU, 0.0, fixed);
        hr_grid_solver *s = NULL;
        if (hr_grid_solver_create(&p, &o, &s) != HR_OK) {
            CHECK(0, "%s, %s: create: %s", tc->name, mc->name, hr_last_error());
            continue;
        }
        hr_result r1, r2;
        /* fp64 */
        hr_status st1 = hr_grid_solver_solve(s, f, x0, &r1);
        if (st1 == HR_OK) hr_grid_solver_solution(s, HR_PREC_DOUBLE, u1, cnt);
        dev_put(df, f, cnt * sizeof(double));
        dev_put(dx0, x0, cnt * sizeof(double));
        hr_device_arrays a = {HR_PREC_DOUBLE, df, dx0, dx, NULL};
        hr_status st2 = hr_grid_solver_solve_device(s, &a, &r2);
        dev_get(u2, dx, cnt * sizeof(double));
        CHECK(st1 == HR_OK && st2 == HR_OK, "%s, %s: fp64 solves %s / %s: %s", tc->name, mc->name,
              hr_status_string(st1), hr_status_string(st2), hr_grid_solver_last_error(s));
        CHECK(memcmp(u1, u2, cnt * sizeof *u1) == 0 && r1.iterations == r2.iterations &&
                  memcmp(&r1.relative_residual, &r2.relative_residual, sizeof(double)) == 0 &&
                  memcmp(&r1.rhs_projection, &r2.rhs_projection, sizeof(double)) == 0,
              "%s, %s: device arrays differ from host arrays (by %.3e)", tc->name, mc->name, rel_diff(u2, u1, cnt));
        /* fp32 in and out: the host solve of the same (rounded) values, its solution rounded */
        st1 = hr_grid_solver_solve(s, f32d, x032d, &r1);
        if (st1 == HR_OK) hr_grid_solver_solution(s, HR_PREC_SINGLE, v32, cnt);
        dev_put(df, f32, cnt * sizeof(float));
        dev_put(dx0, x032, cnt * sizeof(float));
        a.prec = HR_PREC_SINGLE;
        st2 = hr_grid_solver_solve_device(s, &a, &r2);
        dev_get(w32, dx, cnt * sizeof(float));
        CHECK(st1 == HR_OK && st2 == HR_OK && memcmp(v32, w32, cnt * sizeof *v32) == 0 &&
                  r1.iterations == r2.iterations,
              "%s, %s: fp32 device arrays differ from host arrays", tc->name, mc->name);
        /* the problem's own f again, from the problem's own guess */
        hr_device_arrays none = {HR_PREC_DOUBLE, NULL, NULL, dx, NULL};
        st2 = hr_grid_solver_solve_device(s, &none, &r2);
        dev_get(u2, dx, cnt * sizeof(double));
        hr_grid_solver_free(s);
        s = NULL;
        hr_grid_solver_create(&p, &o, &s);
        st1 = s ? hr_grid_solver_solve(s, NULL, NULL, &r1) : HR_ERR_INVALID_ARG;
        if (st1 == HR_OK) hr_grid_solver_solution(s, HR_PREC_DOUBLE, u1, cnt);
        CHECK(st1 == HR_OK && st2 == HR_OK && memcmp(u1, u2, cnt * sizeof *u1) == 0,
              "%s, %s: the problem's f after device arrays differs from a fresh handle's", tc->name, mc->name);
        /* bad input */
        a.prec = HR_PREC_MIXED;
        CHECK(hr_grid_solver_solve_device(s, &a, NULL) == HR_ERR_INVALID_ARG &&
                  strstr(hr_grid_solver_last_error(s), "prec"),
              "%s, %s: precision mixed for the arrays: %s", tc->name, mc->name, hr_grid_solver_last_error(s));
#ifndef HR_STENCIL_EMU
        hr_device_arrays host = {HR_PREC_DOUBLE, f, NULL, NULL, NULL};
        CHECK(hr_grid_solver_solve_device(s, &host, NULL) == HR_ERR_INVALID_ARG &&
                  strstr(hr_grid_solver_last_error(s), "rhs: not device memory"),
              "%s, %s: a host pointer: %s", tc->name, mc->name, hr_grid_solver_last_error(s));
#endif
        hr_grid_solver_free(s);
    }
    /* a CPU handle refuses them, naming its placement */
    hr_grid_options o = options(&dm[1], &p, HR_BACKEND_CPU_SEQ, 0.0, 1);
    hr_grid_solver *s = NULL;
    if (hr_grid_solver_create(&p, &o, &s) == HR_OK) {
        hr_device_arrays a = {HR_PREC_DOUBLE, df, NULL, dx, NULL};
        CHECK(hr_grid_solver_solve_device(s, &a, NULL) == HR_ERR_UNSUPPORTED &&
                  strstr(hr_grid_solver_last_error(s), "cpu-seq"),
              "%s: device arrays on cpu-seq: %s", tc->name, hr_grid_solver_last_error(s));
        hr_grid_solver_free(s);
    }
    dev_free(df), dev_free(dx0), dev_free(dx);
    free(f), free(x0), free(u1), free(u2), free(f32d), free(x032d), free(f32), free(x032), free(v32), free(w32);
    arrays_free(&arr);
}

/* auto picks the GPU for a general problem; several GPUs and single precision are refused */
static void placement(void)
{
    hr_problem p;
    arrays arr;
    pose(&cases[0], &p, &arr);
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.method = HR_METHOD_MG;
    hr_grid_solver *s = NULL;
    CHECK(hr_grid_solver_create(&p, &o, &s) == HR_OK, "auto: %s", hr_last_error());
    hr_grid_info info;
    if (s) {
        hr_grid_solver_info(s, &info);
        CHECK(info.backend == HR_BACKEND_GPU && info.gpus == 1 && info.threads == 0,
              "auto on a general problem: backend %s, gpus %d, threads %d", hr_backend_name(info.backend),
              info.gpus, info.threads);
        hr_grid_solver_free(s);
    }
    o.backend = HR_BACKEND_GPU;
    o.gpus = 2;
    s = NULL;
    /* several GPUs run the engine's slabs (test_general_parts); more than there are: refused */
    o.gpus = hri_cuda_device_count() + 1;
    CHECK(hr_grid_solver_create(&p, &o, &s) == HR_ERR_NO_DEVICE && !s && strstr(hr_last_error(), "gpus: devices 0 to"),
          "more GPUs than present: %s", hr_last_error());
    o.gpus = 0;
    o.precision = HR_PREC_SINGLE;
    CHECK(hr_grid_solver_create(&p, &o, &s) == HR_ERR_UNSUPPORTED && !s &&
              strstr(hr_last_error(), "precision"),
          "single: %s", hr_last_error());
    o.precision = HR_PREC_DEFAULT;
    o.device = hri_cuda_device_count();
    CHECK(hr_grid_solver_create(&p, &o, &s) == HR_ERR_NO_DEVICE && !s && strstr(hr_last_error(), "device"),
          "a device that is not there: %s", hr_last_error());
    arrays_free(&arr);
}

static const char *usage = "usage: test_gpu_general [-v] [--methods NAME,NAME...] (names as in the table; "
                           "none: no solves)";

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (!strcmp(argv[i], "--methods") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "%s\n", usage);
            return 2;
        }
    }
    if (!only) only = getenv("HR_GPU_TEST_METHODS");
    if (hri_cuda_device_count() < 1 || !hri_st_cuda_backend()) {
        printf("no CUDA device (or no CUDA): skipped\n");
        return 77;
    }
    placement();
    /* the marching one-pass sweeps on every level they take (by default only on large ones):
     * the methods below check them against cpu-seq (the periodic cases, and an odd count's last
     * sweep, keep the parity passes) */
    hri_st_cuda_set_pair_min(1);
    for (size_t c = 0; c < NCASES; c++)
        kernels(&cases[c]);
    for (size_t c = 0; c < NCASES; c++)
        device_arrays(&cases[c]);
    for (size_t c = 0; c < NCASES; c++)
        solves(&cases[c]);
    /* and the 2-D box levels' tiles (the default on levels under 2^23 unknowns), with the
     * methods that smooth by Gauss-Seidel */
    hri_st_cuda_set_pair_min(0);
    if (!only) only = "mg V redblack,mg W redblack,mg F redblack,mg FMG redblack,mgcg";
    for (size_t c = 0; c < NCASES; c++)
        if (cases[c].dim == 2) solves(&cases[c]);
    printf("%d checks, %d failure(s)\n", checks, failures);
    return failures ? 1 : 0;
}
#endif
