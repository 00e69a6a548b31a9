/*
 * The general-problem engine (methods/stencil) through hr_grid_solver: manufactured
 * solutions for every boundary type and their mixes, spacing ratios and a coefficient field
 * (second order: the error falls about 4x per halving of h); every method against the
 * assembled operator (hr_problem_matrix, hr_problem_rhs); bitwise equality across thread
 * counts; multigrid convergence at sizes that are not 2^k - 1; singular problems.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "hetrelax/hetrelax.h"
#include "hetrelax/sparse.h"

#define PI 3.14159265358979323846

static int verbose;

/* ------------------------------------------------------------------ a manufactured solution */

typedef struct mms {
    int dim, variable;
    double L[3];
    int periodic[3];
} mms;

static double s_(const mms *m, int a, double t, int d)
{
    const double k = m->periodic[a] ? 2.0 * PI / m->L[a] : 1.7 / m->L[a],
                 ph = m->periodic[a] ? 0.3 + 0.2 * a : 0.5;
    const double v = k * t + ph;
    return d == 0 ? cos(v) : d == 1 ? -k * sin(v) : -k * k * cos(v);
}

static double u_at(const mms *m, const double x[3])
{
    double v = 1.0;
    for (int a = 0; a < m->dim; a++)
        v *= s_(m, a, x[a], 0);
    return v;
}

static double du_at(const mms *m, const double x[3], int a)
{
    double v = 1.0;
    for (int b = 0; b < m->dim; b++)
        v *= s_(m, b, x[b], b == a);
    return v;
}

static double c_(const mms *m, int a, double t, int d)
{
    const double k = 2.0 * PI / m->L[a];
    return d == 0 ? cos(k * t) : -k * sin(k * t);
}

static double a_at(const mms *m, const double x[3])
{
    if (!m->variable) return 1.0;
    double v = 1.0;
    for (int b = 0; b < m->dim; b++)
        v *= c_(m, b, x[b], 0);
    return 1.0 + 0.5 * v;
}

static double f_at(const mms *m, const double x[3])
{
    double f = 0.0;
    const double a = a_at(m, x);
    for (int ax = 0; ax < m->dim; ax++) {
        double lap = 1.0, da = m->variable ? 0.5 : 0.0;
        for (int b = 0; b < m->dim; b++) {
            lap *= s_(m, b, x[b], b == ax ? 2 : 0);
            if (m->variable) da *= c_(m, b, x[b], b == ax);
        }
        f -= a * lap + da * du_at(m, x, ax);
    }
    return f;
}

/* The position of unknown i along axis a of p. */
static double pos(const hr_problem *p, int a, int i)
{
    const double h = hr_problem_spacing(p, a);
    return (i + (p->bc[2 * a].kind == HR_BC_DIRICHLET ? 1 : 0)) * h;
}

typedef struct arrays {
    double *f, *coef, *face[6], *exact;
} arrays;

static void arrays_free(arrays *A)
{
    free(A->f), free(A->coef), free(A->exact);
    for (int i = 0; i < 6; i++)
        free(A->face[i]);
    memset(A, 0, sizeof *A);
}

/* Fills p's right-hand side, coefficient and face arrays from the manufactured solution. */
static void manufacture(hr_problem *p, const mms *m, arrays *A)
{
    const size_t n = hr_problem_unknowns(p);
    A->f = malloc(n * sizeof(double));
    A->exact = malloc(n * sizeof(double));
    if (m->variable) A->coef = malloc(n * sizeof(double));
    const int nz = p->dim == 3 ? p->n[2] : 1;
    size_t q = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < p->n[1]; j++)
            for (int i = 0; i < p->n[0]; i++, q++) {
                const double x[3] = {pos(p, 0, i), pos(p, 1, j), p->dim == 3 ? pos(p, 2, k) : 0.0};
                A->f[q] = f_at(m, x);
                A->exact[q] = u_at(m, x);
                if (A->coef) A->coef[q] = a_at(m, x);
            }
    for (int f = 0; f < 2 * p->dim; f++) {
        if (p->bc[f].kind == HR_BC_PERIODIC) continue;
        const int ax = f / 2, hi = f & 1;
        const size_t c = hr_problem_face_points(p, (hr_face)f);
        A->face[f] = malloc(c * sizeof(double));
        const int o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2; /* the face's axes, first fastest */
        const int n1 = p->n[o1], n2 = p->dim == 3 ? p->n[o2] : 1;
        size_t t = 0;
        for (int b = 0; b < n2; b++)
            for (int a = 0; a < n1; a++, t++) {
                double x[3] = {0, 0, 0};
                x[ax] = hi ? p->length[ax] : 0.0;
                x[o1] = pos(p, o1, a);
                if (p->dim == 3) x[o2] = pos(p, o2, b);
                A->face[f][t] =
                    p->bc[f].kind == HR_BC_DIRICHLET ? u_at(m, x) : (hi ? 1.0 : -1.0) * du_at(m, x, ax);
            }
        p->bc[f].values = A->face[f];
    }
    hr_problem_set_rhs(p, HR_RHS_ARRAY, A->f);
    if (A->coef) hr_problem_set_coef(p, 1.0, A->coef);
}

/* kinds: one letter per face (d, n, p), x- x+ y- y+ (z- z+). */
static void pose(hr_problem *p, int dim, const int n[3], const double L[3], const char *kinds)
{
    hr_problem_init_model(p, dim, n[0], n[1], n[2]);
    hr_problem_set_lengths(p, L[0], L[1], L[2]);
    for (int f = 0; f < 2 * dim; f++)
        p->bc[f].kind = kinds[f] == 'n' ? HR_BC_NEUMANN : kinds[f] == 'p' ? HR_BC_PERIODIC : HR_BC_DIRICHLET;
}

/* Solves p with method m to tol; the solution into u (unknowns). */
static hr_status solve(const hr_problem *p, hr_method m, hr_backend b, int threads, double tol, double *u,
                       hr_result *r)
{
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.method = m;
    o.backend = b;
    o.threads = threads;
    o.tol = tol;
    o.max_iters = tol == 0.0 ? 300 : m == HR_METHOD_MG ? 200 : 20000;
    hr_grid_solver *s;
    hr_status st = hr_grid_solver_create(p, &o, &s);
    if (st != HR_OK) {
        printf("create: %s\n", hr_last_error());
        return st;
    }
    st = hr_grid_solver_solve(s, NULL, NULL, r);
    if (st == HR_OK) st = hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, hr_problem_unknowns(p));
    if (st != HR_OK) printf("solve: %s\n", hr_grid_solver_last_error(s));
    hr_grid_solver_free(s);
    return st;
}

static double max_err(const double *u, const double *e, size_t n, int singular)
{
    double mu = 0.0, me = 0.0;
    if (singular) { /* compare zero-mean versions */
        for (size_t i = 0; i < n; i++)
            mu += u[i], me += e[i];
        mu /= n, me /= n;
    }
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs((u[i] - mu) - (e[i] - me));
        if (d > m) m = d;
    }
    return m;
}

/* The error of the manufactured solution at n and 2n + 1 (h halves for Dirichlet axes; the
 * other rules halve with their own extents). */
static void convergence(int dim, const char *kinds, const double L[3], int variable, int n0)
{
    double err[2];
    mms m = {dim, variable, {L[0], L[1], L[2]}, {0, 0, 0}};
    for (int a = 0; a < dim; a++)
        m.periodic[a] = kinds[2 * a] == 'p';
    for (int lev = 0; lev < 2; lev++) {
        int n[3];
        for (int a = 0; a < 3; a++) {
            /* intervals double: Dirichlet-Dirichlet n+1, N-D n, N-N n-1, periodic n */
            const int d = a < dim ? (kinds[2 * a] == 'd') + (kinds[2 * a + 1] == 'd') : 2;
            const int per = a < dim && kinds[2 * a] == 'p';
            const int iv0 = per ? n0 : n0 - 1 + d, iv = iv0 << lev;
            n[a] = per ? iv : iv + 1 - d;
        }
        hr_problem p;
        pose(&p, dim, n, L, kinds);
        arrays A = {0};
        manufacture(&p, &m, &A);
        const size_t cnt = hr_problem_unknowns(&p);
        double *u = malloc(cnt * sizeof *u);
        hr_result r;
        const hr_status st = solve(&p, HR_METHOD_MGCG, HR_BACKEND_CPU_THREADS, 2, 1e-11, u, &r);
        CHECK(st == HR_OK && r.reason == HR_REASON_CONVERGED, "%dD %s: solve (%s, reason %d)", dim, kinds,
              hr_status_string(st), (int)r.reason);
        err[lev] = max_err(u, A.exact, cnt, hr_problem_is_singular(&p));
        if (verbose)
            printf("  %dD bc %-6s L %g:%g%s%s  n %4d x %4d%s  mgcg %3ld its  error %.3e\n", dim, kinds, L[0],
                   L[1], dim == 3 ? ":" : "", dim == 3 ? "1" : "", n[0], n[1], dim == 3 ? " x ..." : "",
                   r.iterations, err[lev]);
        free(u);
        arrays_free(&A);
    }
    const double ratio = err[0] / err[1];
    if (verbose) printf("  -> ratio %.2f\n", ratio);
    CHECK(ratio > 3.4 && ratio < 4.8,
          "%dD %s L %g:%g variable %d: error ratio %.2f per halving (%.3e -> %.3e)", dim, kinds, L[0], L[1],
          variable, ratio, err[0], err[1]);
}

/* ------------------------------------------------------------------ against the matrix */

static void against_matrix(void)
{
    hr_problem p;
    const int n[3] = {23, 17, 0};
    const double L[3] = {2.0, 1.0, 1.0};
    pose(&p, 2, n, L, "dnnd");
    mms m = {2, 1, {2.0, 1.0, 1.0}, {0, 0, 0}};
    arrays A = {0};
    manufacture(&p, &m, &A);
    hr_csr *M = NULL;
    CHECK(hr_problem_matrix(&p, &M) == HR_OK, "matrix");
    const size_t cnt = hr_problem_unknowns(&p);
    double *b = malloc(cnt * sizeof *b), *u = malloc(cnt * sizeof *u);
    CHECK(hr_problem_rhs(&p, NULL, b, cnt, NULL) == HR_OK, "rhs");
    CHECK(hr_csr_is_symmetric(M), "the assembled operator is symmetric");
    const hr_method ms[] = {HR_METHOD_MG, HR_METHOD_CG, HR_METHOD_MGCG, HR_METHOD_REDBLACK, HR_METHOD_SOR};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
        hr_result r;
        hr_status st = solve(&p, ms[i], HR_BACKEND_CPU_SEQ, 1, 1e-10, u, &r);
        const double rel = hr_csr_relative_residual(M, b, u);
        if (verbose)
            printf("  %-8s %5ld its: ||b - A u|| / ||b|| of the assembled system %.2e\n",
                   hr_method_name(ms[i]), r.iterations, rel);
        CHECK(st == HR_OK && rel < 3e-10, "%s: residual of the assembled system %.3e", hr_method_name(ms[i]),
              rel);
    }
    hr_csr_free(M);
    free(b), free(u);
    arrays_free(&A);
}

/* ------------------------------------------------------------------ threads: bitwise */

static void bitwise(void)
{
    hr_problem p;
    const int n[3] = {37, 29, 11};
    const double L[3] = {1.0, 3.0, 1.0};
    pose(&p, 3, n, L, "dnppdn");
    mms m = {3, 1, {1.0, 3.0, 1.0}, {0, 1, 0}};
    arrays A = {0};
    manufacture(&p, &m, &A);
    const size_t cnt = hr_problem_unknowns(&p);
    const hr_method ms[] = {HR_METHOD_JACOBI, HR_METHOD_REDBLACK, HR_METHOD_MG, HR_METHOD_CG, HR_METHOD_MGCG};
    double *u1 = malloc(cnt * sizeof *u1), *u2 = malloc(cnt * sizeof *u2);
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
        hr_result r1, r2;
        const double tol = ms[i] == HR_METHOD_JACOBI || ms[i] == HR_METHOD_REDBLACK ? 0.0 : 1e-9;
        solve(&p, ms[i], HR_BACKEND_CPU_SEQ, 1, tol, u1, &r1);
        for (int t = 2; t <= 3; t++) {
            solve(&p, ms[i], HR_BACKEND_CPU_THREADS, t, tol, u2, &r2);
            CHECK(memcmp(u1, u2, cnt * sizeof *u1) == 0 && r1.iterations == r2.iterations,
                  "%s: %d threads differ from cpu-seq", hr_method_name(ms[i]), t);
        }
    }
    free(u1), free(u2);
    arrays_free(&A);
}

/* ------------------------------------------------------------------ multigrid */

static void mg_factor(int dim, int nx, int ny, int nz, const char *kinds, const double L[3], double want)
{
    hr_problem p;
    const int n[3] = {nx, ny, nz};
    pose(&p, dim, n, L, kinds);
    hr_problem_set_rhs(&p, HR_RHS_MANUFACTURED, NULL);
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.method = HR_METHOD_MG;
    o.tol = 1e-8;
    hr_grid_solver *s;
    CHECK(hr_grid_solver_create(&p, &o, &s) == HR_OK, "mg create %s", hr_last_error());
    hr_result r;
    hr_grid_solver_solve(s, NULL, NULL, &r);
    if (verbose)
        printf("  mg V(2,2) %dD %d x %d%s bc %s L %g:%g: %ld cycles, factor %.3f, %d levels\n", dim, nx, ny,
               dim == 3 ? " x nz" : "", kinds, L[0], L[1], r.iterations, r.convergence_factor, r.levels);
    CHECK(r.reason == HR_REASON_CONVERGED && r.convergence_factor <= want,
          "mg %dD %dx%d %s: factor %.3f > %.2f", dim, nx, ny, kinds, r.convergence_factor, want);
    hr_grid_solver_free(s);
}

/* ------------------------------------------------------------------ singular problems */

static void singular(void)
{
    hr_problem p;
    const int n[3] = {40, 30, 0};
    const double L[3] = {1.0, 1.0, 1.0};
    pose(&p, 2, n, L, "ppnn");
    /* f = 1: incompatible with zero flux; the solver removes the mean 1 */
    const size_t cnt = hr_problem_unknowns(&p);
    double *f = malloc(cnt * sizeof *f), *u = malloc(cnt * sizeof *u);
    for (size_t i = 0; i < cnt; i++)
        f[i] = 1.0 + sin((double)i);
    hr_problem_set_rhs(&p, HR_RHS_ARRAY, f);
    hr_result r;
    CHECK(solve(&p, HR_METHOD_MG, HR_BACKEND_CPU_SEQ, 1, 1e-10, u, &r) == HR_OK, "singular mg");
    double sum = 0.0;
    for (size_t i = 0; i < cnt; i++)
        sum += u[i];
    CHECK(r.rhs_projection > 0.1 && fabs(sum) < 1e-8 * cnt && r.reason == HR_REASON_CONVERGED,
          "singular: projection %.3e, sum %.3e, reason %d", r.rhs_projection, sum, (int)r.reason);
    hr_system_info si;
    double *b = malloc(cnt * sizeof *b);
    hr_problem_rhs(&p, NULL, b, cnt, &si);
    double bs = 0.0;
    for (size_t i = 0; i < cnt; i++)
        bs += b[i];
    CHECK(si.singular && fabs(si.rhs_shift - 1.0) < 0.05 && fabs(bs) < 1e-9 * cnt,
          "projection: shift %g, sum(b) %g", si.rhs_shift, bs);
    /* plain Jacobi is refused on a singular problem */
    hr_grid_options o;
    hr_grid_options_default(&o);
    hr_grid_solver *s = NULL;
    CHECK(hr_grid_solver_create(&p, &o, &s) == HR_ERR_INVALID_ARG && strstr(hr_last_error(), "jacobi"),
          "plain jacobi on a singular problem: %s", hr_last_error());
    free(f), free(u), free(b);
}

static void refusals(void)
{
    hr_problem p;
    hr_problem_init_model(&p, 2, 20, 20, 0);
    hr_problem_set_bc(&p, HR_FACE_X_MINUS, HR_BC_NEUMANN, 0.0, NULL);
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.kernel = "tuned";
    hr_grid_solver *s = NULL;
    CHECK(hr_grid_solver_create(&p, &o, &s) != HR_OK && strstr(hr_last_error(), "kernel"),
          "a model kernel: %s", hr_last_error());
    o.kernel = NULL;
    o.precision = HR_PREC_SINGLE;
    CHECK(hr_grid_solver_create(&p, &o, &s) == HR_ERR_UNSUPPORTED && strstr(hr_last_error(), "precision"),
          "single: %s", hr_last_error());
    p.bc[HR_FACE_Y_MINUS].kind = HR_BC_PERIODIC; /* one face of an axis */
    o.precision = HR_PREC_DEFAULT;
    CHECK(hr_grid_solver_create(&p, &o, &s) == HR_ERR_INVALID_ARG && strstr(hr_last_error(), "periodic"),
          "periodic on one face: %s", hr_last_error());
    hr_problem_init_model(&p, 2, 20, 20, 0);
    double c[400];
    for (int i = 0; i < 400; i++)
        c[i] = i == 7 ? -1.0 : 1.0;
    p.coef_values = c;
    CHECK(hr_grid_solver_create(&p, &o, &s) == HR_ERR_INVALID_ARG && strstr(hr_last_error(), "coef"),
          "negative coefficient: %s", hr_last_error());
}

/* ------------------------------------------------------------------ the random right-hand side */

/* The documented generator (hetrelax/problem.h), written out here from its definition. */
static double random_value(unsigned long long seed, unsigned long long q)
{
    unsigned long long z = seed + 0x9E3779B97F4A7C15ull, key;
    for (int t = 0; t < 2; t++) {
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        if (t == 0) key = z, z = q ^ key;
    }
    return (double)(z >> 11) * 0x1.0p-53;
}

/* HR_RHS_RANDOM: b as from the same values given as an array, bitwise; values in [0, 1) with a
 * mean near 1/2; another seed gives another b; the seed is the problem's, 1 by default. */
static void random_rhs(void)
{
    hr_problem p;
    const int n[3] = {37, 23, 19};
    const double L[3] = {1.0, 2.0, 1.5};
    pose(&p, 3, n, L, "dnddpp");
    CHECK(p.rhs_seed == 1, "the default seed is 1 (got %llu)", p.rhs_seed);
    const size_t cnt = hr_problem_unknowns(&p);
    double *f = malloc(cnt * sizeof *f), *b1 = malloc(cnt * sizeof *b1), *b2 = malloc(cnt * sizeof *b2);
    double mean = 0.0, lo = 1.0, hi = 0.0;
    for (size_t q = 0; q < cnt; q++) {
        f[q] = random_value(7, q);
        mean += f[q] / (double)cnt;
        lo = f[q] < lo ? f[q] : lo, hi = f[q] > hi ? f[q] : hi;
    }
    CHECK(lo >= 0.0 && hi < 1.0 && fabs(mean - 0.5) < 0.02, "values in [0, 1) (%g, %g), mean %g", lo, hi, mean);
    CHECK(hr_problem_set_rhs(&p, HR_RHS_RANDOM, NULL) == HR_OK, "set_rhs random");
    p.rhs_seed = 7;
    CHECK(!hr_problem_is_model(&p), "a random right-hand side is not the model problem");
    CHECK(hr_problem_rhs(&p, NULL, b1, cnt, NULL) == HR_OK, "rhs random");
    hr_problem_set_rhs(&p, HR_RHS_ARRAY, f);
    CHECK(hr_problem_rhs(&p, NULL, b2, cnt, NULL) == HR_OK, "rhs array");
    CHECK(memcmp(b1, b2, cnt * sizeof *b1) == 0, "seed 7: b the same as from the documented values");
    hr_problem_set_rhs(&p, HR_RHS_RANDOM, NULL);
    p.rhs_seed = 8;
    CHECK(hr_problem_rhs(&p, NULL, b2, cnt, NULL) == HR_OK && memcmp(b1, b2, cnt * sizeof *b1) != 0,
          "seed 8 gives another b");
    if (verbose) printf("  random right-hand side: %zu values in [%.4f, %.4f), mean %.4f\n", cnt, lo, hi, mean);
    free(f), free(b1), free(b2);
}

int main(int argc, char **argv)
{
    verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    const double one[3] = {1, 1, 1}, r4[3] = {4, 1, 1}, r16[3] = {16, 1, 1}, r116[3] = {1, 16, 1};
    if (verbose) printf("manufactured solutions (MG-preconditioned CG to 1e-11):\n");
    const char *mixes2[] = {"dddd", "nnnn", "pppp", "dnnd", "ppdn", "ndpp", "nndn"};
    for (size_t i = 0; i < sizeof mixes2 / sizeof *mixes2; i++)
        convergence(2, mixes2[i], one, 1, 16);
    convergence(2, "dnnd", r4, 1, 16);
    convergence(2, "dnnd", r16, 0, 32);
    convergence(2, "ppdn", r116, 1, 32);
    convergence(3, "dnppnd", one, 1, 8);
    convergence(3, "nnnnnn", one, 0, 8);
    if (verbose) printf("the assembled operator (hr_problem_matrix, hr_problem_rhs):\n");
    against_matrix();
    bitwise();
    if (verbose) printf("multigrid at sizes that are not 2^k - 1:\n");
    mg_factor(2, 100, 60, 0, "dddd", one, 0.1);
    mg_factor(2, 97, 61, 0, "dndd", one, 0.1);
    mg_factor(2, 128, 16, 0, "ppdn", one, 0.1);
    mg_factor(3, 30, 20, 25, "dddddd", one, 0.1);
    if (verbose) printf("multigrid on coarse levels of the same shape (the star stencil injected):\n");
    mg_factor(2, 127, 128, 0, "ddnd", one, 0.1);
    mg_factor(2, 128, 129, 0, "ppnn", one, 0.1);
    mg_factor(2, 257, 64, 0, "nnpp", r4, 0.1);
    mg_factor(3, 33, 32, 33, "ddndnn", one, 0.1);
    singular();
    random_rhs();
    refusals();
    if (failures) printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
