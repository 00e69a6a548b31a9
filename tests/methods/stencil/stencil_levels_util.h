/*
 * A general problem's multigrid hierarchy on the CPU backend, for the tests that check its
 * levels: the problem from a letter per face (d: Dirichlet, n: Neumann, p: periodic), the box
 * lx x 1 x 1 (lx <= 0: the model problem's lengths) and, with field, a coefficient field; its
 * operator discretised and the hierarchy built over it as the engine builds it.
 */
#ifndef HR_TEST_STENCIL_LEVELS_UTIL_H
#define HR_TEST_STENCIL_LEVELS_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/hetrelax.h"
#include "methods/stencil/stencil_kernels.h"
#include "methods/stencil/stencil_mg.h"

typedef struct test_levels {
    hr_problem p;
    double *coef; /* the coefficient field (NULL: a = 1) */
    hr_sgrid g;
    hr_sop A; /* the finest operator */
    hr_st_exec ex;
    hr_st_mg mg; /* the hierarchy (made: 2) */
    double *t0;
    int made; /* 0: nothing, 1: A discretised, 2: the hierarchy built */
} test_levels;

/* Poses the problem and builds its hierarchy: 0 when built, 1 when A could not be
 * discretised, 2 when the hierarchy could not be built. test_levels_free in every case. */
static int test_levels_make(test_levels *t, int dim, int nx, int ny, int nz, const char *kinds, double lx, int field)
{
    memset(t, 0, sizeof *t);
    hr_problem *p = &t->p;
    hr_problem_init_model(p, dim, nx, ny, nz);
    if (lx > 0.0) hr_problem_set_lengths(p, lx, 1.0, 1.0);
    int per[3] = {0, 0, 0}, flo[3] = {0, 0, 0}, fhi[3] = {0, 0, 0};
    for (int f = 0; f < 2 * dim; f++)
        p->bc[f].kind = kinds[f] == 'n' ? HR_BC_NEUMANN : kinds[f] == 'p' ? HR_BC_PERIODIC : HR_BC_DIRICHLET;
    const int n[3] = {nx, ny, dim == 3 ? nz : 1};
    const size_t cnt = (size_t)n[0] * n[1] * n[2];
    if (field) {
        t->coef = malloc(cnt * sizeof *t->coef);
        for (size_t q = 0; q < cnt; q++)
            t->coef[q] = 1.0 + 0.5 * sin(0.37 * (double)q);
        hr_problem_set_coef(p, 0.0, t->coef);
    }
    for (int ax = 0; ax < dim; ax++) {
        per[ax] = p->bc[2 * ax].kind == HR_BC_PERIODIC;
        flo[ax] = p->bc[2 * ax].kind == HR_BC_NEUMANN;
        fhi[ax] = p->bc[2 * ax + 1].kind == HR_BC_NEUMANN;
    }
    hri_sgrid_init(&t->g, dim, n, per);
    if (hri_sop_alloc(&t->A, &t->g, 0) != HR_OK) return 1;
    t->made = 1;
    if (hri_discretize(p, NULL, &t->A, NULL, NULL) != HR_OK) return 1;
    const size_t lines = (size_t)t->g.n[1] * t->g.n[2];
    const hr_st_exec ex = {NULL, malloc(lines * sizeof(double)), lines, NULL, NULL, 0};
    t->ex = ex;
    t->mg.constant = !field;
    t->t0 = hri_sgrid_alloc(&t->g);
    if (hri_st_mg_setup(&t->mg, &t->ex, &hri_st_cpu, &t->A, flo, fhi, 0, hr_problem_is_singular(p), t->t0, 1) !=
        HR_OK)
        return 2;
    t->made = 2;
    return 0;
}

static void test_levels_free(test_levels *t)
{
    if (t->made == 2) hri_st_mg_free(&t->mg);
    if (t->made >= 1) hri_sop_free(&t->A);
    free(t->t0), free(t->ex.part), free(t->coef);
    memset(t, 0, sizeof *t);
}

#endif
