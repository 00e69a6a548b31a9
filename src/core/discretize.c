/*
 * The discrete system of a structured problem (hetrelax/problem.h): the finite-volume
 * 5- or 7-point operator with harmonic face coefficients, boundary conditions folded into
 * the operator and b, and the projection of a singular problem's b. hr_problem_rhs and
 * hr_problem_matrix give it to users; the general-problem engine starts from it.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "hetrelax/sparse.h"
#include "methods/stencil/stencil_op.h"
#include "runtime/cpu/team.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ------------------------------------------------------------------ the padded grid */

void hri_sgrid_init(hr_sgrid *g, int dim, const int n[3], const int periodic[3])
{
    memset(g, 0, sizeof *g);
    g->dim = dim;
    for (int a = 0; a < 3; a++) {
        g->n[a] = a < dim ? n[a] : 1;
        g->periodic[a] = a < dim && periodic[a];
    }
    const ptrdiff_t p0 = g->n[0] + 2, p1 = g->n[1] + 2, p2 = dim == 3 ? g->n[2] + 2 : 1;
    g->st[0] = 1;
    g->st[1] = p0;
    g->st[2] = p0 * p1;
    g->padded = (size_t)(p0 * p1 * p2);
    g->count = (size_t)g->n[0] * (size_t)g->n[1] * (size_t)g->n[2];
    g->origin = 1 + p0 + (dim == 3 ? g->st[2] : 0);
    for (int a = 0; a < 3; a++) {
        g->goff[a] = 0;
        g->gn[a] = g->n[a];
        g->gper[a] = g->periodic[a];
    }
}

double *hri_sgrid_alloc(const hr_sgrid *g)
{
    return calloc(g->padded, sizeof(double));
}

static double harmonic(double a, double b);

hr_status hri_sop_alloc(hr_sop *A, const hr_sgrid *g, int box)
{
    hri_sop_shape(A, g, box);
    A->diag = hri_sgrid_alloc(g);
    int ok = A->diag != NULL;
    if (!box) ok = ok && (A->exc = hri_sgrid_alloc(g)) != NULL;
    for (int k = 0; k < A->nk && ok; k++)
        ok = (A->c[k] = hri_sgrid_alloc(g)) != NULL;
    if (!ok) {
        hri_sop_free(A);
        return HR_ERR_NO_MEMORY;
    }
    return HR_OK;
}

int hri_sop_uniform_of(const hr_problem *p, const hr_sgrid *g, hr_sop *A)
{
    if (p->coef_values || g->count == 0) return 0;
    for (int f = 0; f < 2 * p->dim; f++)
        if (p->bc[f].kind == HR_BC_NEUMANN) return 0;
    hri_sop_shape(A, g, 0);
    /* what hri_discretize_part writes at every point and hri_sop_detect_uniform reads: every
     * face of a cell has the coupling a / h_a^2 (harmonic(a, a) is a; a Dirichlet face's is
     * the same product), the diagonal their sum in the same order */
    double d = 0.0;
    for (int a = 0; a < g->dim; a++) {
        const double h = hr_problem_spacing(p, a), ih2 = 1.0 / (h * h);
        const double cpl = harmonic(p->coef, p->coef) * 1.0 * ih2;
        d += cpl;
        d += cpl;
        A->uc[a] = g->gn[a] < 2 && !g->gper[a] ? 0.0 : -cpl;
    }
    A->ud = d;
    A->uniform = 1;
    return 1;
}

void hri_sop_shape(hr_sop *A, const hr_sgrid *g, int box)
{
    memset(A, 0, sizeof *A);
    A->g = *g;
    const int d = g->dim;
    int nk = 0;
    if (!box) {
        for (int a = 0; a < d; a++) {
            A->off[nk][0] = A->off[nk][1] = A->off[nk][2] = 0;
            A->off[nk++][a] = 1;
        }
    } else { /* the offsets after 0 in z-major lexicographic order */
        for (int z = d == 3 ? -1 : 0; z <= (d == 3 ? 1 : 0); z++)
            for (int y = -1; y <= 1; y++)
                for (int x = -1; x <= 1; x++)
                    if (z > 0 || (z == 0 && (y > 0 || (y == 0 && x > 0)))) {
                        A->off[nk][0] = x;
                        A->off[nk][1] = y;
                        A->off[nk][2] = z;
                        nk++;
                    }
    }
    A->nk = nk;
    for (int k = 0; k < nk; k++)
        A->doff[k] = A->off[k][0] * g->st[0] + A->off[k][1] * g->st[1] + A->off[k][2] * g->st[2];
}

void hri_sop_free(hr_sop *A)
{
    if (!A) return;
    free(A->diag);
    free(A->exc);
    for (int k = 0; k < HR_ST_MAX_HALF; k++)
        free(A->c[k]);
    memset(A, 0, sizeof *A);
}

/* One periodic axis's ghosts: the planes at -1 and n copy those at n - 1 and 0. The
 * planes span the whole padded extent of the other axes, so filling the axes in order
 * fills edges and corners too. */
static void fill_axis(const hr_sgrid *g, double *u, int a)
{
    int lim[3];
    for (int b = 0; b < 3; b++)
        lim[b] = b < g->dim ? g->n[b] + 2 : 1;
    lim[a] = 1;
    const ptrdiff_t far = (ptrdiff_t)g->n[a] * g->st[a], ghi = ((ptrdiff_t)g->n[a] + 1) * g->st[a];
    for (int z = 0; z < lim[2]; z++)
        for (int y = 0; y < lim[1]; y++)
            for (int x = 0; x < lim[0]; x++) {
                const ptrdiff_t o = x + y * g->st[1] + z * g->st[2];
                u[o] = u[o + far];
                u[o + ghi] = u[o + g->st[a]];
            }
}

void hri_st_fill_ghosts(const hr_sgrid *g, double *u)
{
    for (int a = 0; a < g->dim; a++)
        if (g->periodic[a]) fill_axis(g, u, a);
}

void hri_sgrid_pack(const hr_sgrid *g, const double *padded, double *dst)
{
    size_t q = 0;
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++) {
            memcpy(dst + q, padded + hr_sgrid_index(g, 0, j, k), (size_t)g->n[0] * sizeof *dst);
            q += (size_t)g->n[0];
        }
}

void hri_sgrid_unpack(const hr_sgrid *g, const double *src, double *padded)
{
    size_t q = 0;
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++) {
            memcpy(padded + hr_sgrid_index(g, 0, j, k), src + q, (size_t)g->n[0] * sizeof *src);
            q += (size_t)g->n[0];
        }
}

void hri_sop_detect_uniform(hr_sop *A)
{
    const hr_sgrid *g = &A->g;
    A->uniform = 0;
    if (!A->exc || A->nk != g->dim || g->count == 0) return;
    const ptrdiff_t o = g->origin;
    const double d = A->diag[o];
    double c[3] = {0, 0, 0};
    for (int a = 0; a < g->dim; a++) { /* the first coupling along a that is present (whole-grid indices: a
                                          slab of one row at the top takes the one across its cut) */
        const int top = g->goff[a] == g->gn[a] - 1 && !g->gper[a];
        c[a] = g->gn[a] < 2 && !g->gper[a] ? 0.0
               : !top                      ? A->c[a][o]
               : g->goff[a] > 0            ? A->c[a][o - g->st[a]]
                                           : 0.0;
    }
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++) {
                const ptrdiff_t p = hr_sgrid_index(g, i, j, k);
                if (A->diag[p] != d) return;
                const int idx[3] = {i, j, k};
                for (int a = 0; a < g->dim; a++) {
                    const int last = idx[a] + g->goff[a] == g->gn[a] - 1 && !g->gper[a];
                    if (A->c[a][p] != (last ? 0.0 : c[a])) return;
                }
            }
    A->uniform = 1;
    A->ud = d;
    for (int a = 0; a < 3; a++)
        A->uc[a] = c[a];
}

/* ------------------------------------------------------------------ the problem */

int hr_problem_is_singular(const hr_problem *p)
{
    if (!p || (p->dim != 2 && p->dim != 3)) return 0;
    for (int f = 0; f < 2 * p->dim; f++)
        if (p->bc[f].kind == HR_BC_DIRICHLET) return 0;
    return 1;
}

/* The position of unknown i along axis a (hetrelax/problem.h's rule). */
static double position(const hr_problem *p, int a, int i)
{
    const double h = hr_problem_spacing(p, a);
    const int d = p->bc[2 * a].kind == HR_BC_DIRICHLET ? 1 : 0;
    return (i + d) * h;
}

/* HR_RHS_RANDOM's value at whole-grid index q (hetrelax/problem.h gives the definition). */
static inline uint64_t splitmix_fin(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The seed's key (one per problem) and the value at q from it. */
static inline uint64_t random_key(unsigned long long seed)
{
    return splitmix_fin((uint64_t)seed + 0x9E3779B97F4A7C15ull);
}

static inline double random_at(uint64_t key, size_t q)
{
    return (double)(splitmix_fin((uint64_t)q ^ key) >> 11) * 0x1.0p-53;
}

hr_status hri_problem_f(const hr_problem *p, double *f)
{
    const int dim = p->dim, nx = p->n[0], ny = p->n[1], nz = dim == 3 ? p->n[2] : 1;
    const size_t count = (size_t)nx * ny * nz;
    switch (p->rhs) {
    case HR_RHS_ARRAY: memcpy(f, p->rhs_values, count * sizeof *f); break;
    case HR_RHS_ZERO: memset(f, 0, count * sizeof *f); break;
    case HR_RHS_RANDOM: {
        const uint64_t key = random_key(p->rhs_seed);
        for (size_t q = 0; q < count; q++)
            f[q] = random_at(key, q);
        break;
    }
    case HR_RHS_SPIKE: { /* h^2 f = 1 at the centre, h the spacings' geometric mean */
        memset(f, 0, count * sizeof *f);
        double hp = 1.0;
        for (int a = 0; a < dim; a++)
            hp *= hr_problem_spacing(p, a);
        const double hbar2 = pow(hp, 2.0 / dim);
        const size_t c =
            (((size_t)((nz + 1) / 2 - 1) * ny) + (size_t)((ny + 1) / 2 - 1)) * nx + (nx + 1) / 2 - 1;
        f[c] = 1.0 / hbar2;
        break;
    }
    case HR_RHS_MANUFACTURED: {
        double lam = 0.0;
        for (int a = 0; a < dim; a++)
            lam += 1.0 / (p->length[a] * p->length[a]);
        lam *= M_PI * M_PI;
        size_t q = 0;
        for (int k = 0; k < nz; k++)
            for (int j = 0; j < ny; j++)
                for (int i = 0; i < nx; i++) {
                    double v = sin(M_PI * position(p, 0, i) / p->length[0]) *
                               sin(M_PI * position(p, 1, j) / p->length[1]);
                    if (dim == 3) v *= sin(M_PI * position(p, 2, k) / p->length[2]);
                    f[q++] = lam * v;
                }
        break;
    }
    default: return HR_ERR_INVALID_ARG;
    }
    return HR_OK;
}

/* The value of face `face` at the unknown (i, j, k) (its projection onto the face). */
static double face_value(const hr_problem *p, int face, int i, int j, int k)
{
    const hr_bc *b = &p->bc[face];
    if (!b->values) return b->value;
    size_t q;
    switch (face / 2) {
    case 0: q = (size_t)k * p->n[1] + j; break;
    case 1: q = (size_t)k * p->n[0] + i; break;
    default: q = (size_t)j * p->n[0] + i; break;
    }
    return b->values[q];
}

static double harmonic(double a, double b)
{
    return a == b ? a : 2.0 * a * b / (a + b);
}

/* f at unknown (i, j, k) (global indices; q its global index) without a global array; key:
 * random_key of the problem's seed. */
static inline double f_point(const hr_problem *p, const double *f_in, size_t q, int i, int j, int k,
                             double hbar2, uint64_t key)
{
    if (f_in) return f_in[q];
    switch (p->rhs) {
    case HR_RHS_ARRAY: return p->rhs_values[q];
    case HR_RHS_RANDOM: return random_at(key, q);
    case HR_RHS_SPIKE: {
        const int nz = p->dim == 3 ? p->n[2] : 1;
        return i == (p->n[0] + 1) / 2 - 1 && j == (p->n[1] + 1) / 2 - 1 && k == (nz + 1) / 2 - 1 ? 1.0 / hbar2
                                                                                                 : 0.0;
    }
    case HR_RHS_MANUFACTURED: {
        double lam = 0.0;
        for (int a = 0; a < p->dim; a++)
            lam += 1.0 / (p->length[a] * p->length[a]);
        double v = M_PI * M_PI * lam * sin(M_PI * position(p, 0, i) / p->length[0]) *
                   sin(M_PI * position(p, 1, j) / p->length[1]);
        if (p->dim == 3) v *= sin(M_PI * position(p, 2, k) / p->length[2]);
        return v;
    }
    default: return 0.0;
    }
}

/* One discretisation job: the rows of a slab, split by lines among a team's threads (each
 * point's entries depend on that point only, so any split gives the same values). */
typedef struct disc_job {
    const hr_problem *p;
    int lo, whole, last;
    const int *N, *per, *n;
    const hr_sgrid *g;
    const double *h, *ih2;
    double hbar2;
    uint64_t key; /* random_key of the problem's seed */
    const double *f_in;
    hr_sop *A;
    double *b, *line_b, *line_v;
} disc_job;

static void disc_lines(void *ctx, int tid, int nt)
{
    const disc_job *J = ctx;
    const hr_problem *p = J->p;
    const int dim = p->dim, last = J->last, lo = J->lo, whole = J->whole;
    const int *N = J->N, *per = J->per, *n = J->n;
    const hr_sgrid *gp = J->g;
    const double *h = J->h, *ih2 = J->ih2, *f_in = J->f_in;
    const double hbar2 = J->hbar2;
    const uint64_t key = J->key;
    hr_sop *A = J->A;
    double *b = J->b;
    const double *cv = p->coef_values;
    const size_t sq[3] = {1, (size_t)N[0], (size_t)N[0] * N[1]};
    const size_t lines = (size_t)n[1] * n[2];
    const size_t l0 = lines * (size_t)tid / (size_t)nt, l1 = lines * (size_t)(tid + 1) / (size_t)nt;
    const ptrdiff_t row = gp->st[1];
    for (size_t line = l0; line < l1; line++) {
        const int j = (int)(line % (size_t)n[1]), k = (int)(line / (size_t)n[1]);
        const ptrdiff_t p0 = hr_sgrid_index(gp, 0, j, k);
        if (b) { /* b's ghosts next to this line: its ends, and the ghost row below / above it */
            b[p0 - 1] = b[p0 + n[0]] = 0.0;
            if (j == 0) memset(b + p0 - 1 - row, 0, (size_t)row * sizeof *b);
            if (j == n[1] - 1) memset(b + p0 - 1 + row, 0, (size_t)row * sizeof *b);
        }
        /* b alone: a point away from every face has no face term and volume 1 (the line's
         * points from x0 to x1) */
        int x0 = 0, x1 = 0;
        if (!A) {
            int edge = 0;
            for (int a = 1; a < dim; a++) {
                const int t = a == 1 ? (last == 1 ? j + lo : j) : (last == 2 ? k + lo : k);
                edge |= !per[a] && (t == 0 || t == N[a] - 1);
            }
            if (!edge) {
                x0 = per[0] ? 0 : 1;
                x1 = per[0] ? n[0] : n[0] - 1;
            }
        }
        double lb = 0.0, lv = 0.0;
        for (int i = 0; i < n[0]; i++) {
            const int idx[3] = {i, last == 1 ? j + lo : j, last == 2 ? k + lo : k}; /* global */
            const size_t q = idx[0] + sq[1] * idx[1] + sq[2] * idx[2];
            if (i >= x0 && i < x1) {
                if (b) {
                    const ptrdiff_t pi = p0 + i;
                    b[pi] = 0.0 + 1.0 * f_point(p, f_in, q, idx[0], idx[1], idx[2], hbar2, key);
                    lb += b[pi];
                    lv += 1.0;
                }
                continue;
            }
            double w[3] = {1, 1, 1}; /* cell widths / h */
            for (int a = 0; a < dim; a++) {
                if (per[a]) continue;
                if ((idx[a] == 0 && p->bc[2 * a].kind == HR_BC_NEUMANN) ||
                    (idx[a] == N[a] - 1 && p->bc[2 * a + 1].kind == HR_BC_NEUMANN))
                    w[a] = 0.5;
            }
            const double vol = w[0] * w[1] * w[2];
            const double ap = cv ? cv[q] : p->coef;
            const ptrdiff_t pi = hr_sgrid_index(gp, i, j, k);
            double diag = 0.0, bp = 0.0, exc = 0.0;
            for (int a = 0; a < dim; a++) {
                const double wb = vol / w[a]; /* the face's area / h^(dim-1) */
                for (int side = 0; side < 2; side++) {
                    const int in = side ? idx[a] + 1 < N[a] : idx[a] > 0;
                    if (in || per[a]) {
                        size_t qn;
                        if (in)
                            qn = side ? q + sq[a] : q - sq[a];
                        else
                            qn = side ? q - (size_t)(N[a] - 1) * sq[a] : q + (size_t)(N[a] - 1) * sq[a];
                        const double cpl = harmonic(ap, cv ? cv[qn] : p->coef) * wb * ih2[a];
                        diag += cpl;
                        if (A && side) A->c[a][pi] = -cpl;
                        /* the coupling across the slab's low cut lives in the ghost row */
                        if (A && !side && a == last && !whole && (idx[a] == lo))
                            A->c[a][pi - gp->st[a]] = -cpl;
                        continue;
                    }
                    const int face = 2 * a + side;
                    if (p->bc[face].kind == HR_BC_DIRICHLET) {
                        const double cpl = ap * wb * ih2[a];
                        diag += cpl;
                        exc += cpl;
                        if (b) bp += cpl * face_value(p, face, idx[0], idx[1], idx[2]);
                    } else if (b) { /* Neumann: the flux through the face */
                        bp += ap * wb / h[a] * face_value(p, face, idx[0], idx[1], idx[2]);
                    }
                }
            }
            if (A) {
                A->diag[pi] = diag;
                if (A->exc) A->exc[pi] = exc;
            }
            if (b) {
                b[pi] = bp + vol * f_point(p, f_in, q, idx[0], idx[1], idx[2], hbar2, key);
                lb += b[pi];
                lv += vol;
            }
        }
        if (J->line_b) J->line_b[line] = lb;
        if (J->line_v) J->line_v[line] = lv;
    }
}

hr_status hri_discretize_part(const hr_problem *p, int lo, int hi, const double *f_in, hr_sop *A, double *b,
                              double *line_b, double *line_v)
{
    return hri_discretize_part_on(NULL, p, lo, hi, f_in, A, b, line_b, line_v);
}

hr_status hri_discretize_part_on(hr_team *team, const hr_problem *p, int lo, int hi, const double *f_in,
                                 hr_sop *A, double *b, double *line_b, double *line_v)
{
    const int dim = p->dim, last = dim - 1;
    const int N[3] = {p->n[0], p->n[1], dim == 3 ? p->n[2] : 1}; /* the whole grid */
    int per[3] = {0, 0, 0}, n[3] = {N[0], N[1], N[2]};
    for (int a = 0; a < dim; a++)
        per[a] = p->bc[2 * a].kind == HR_BC_PERIODIC;
    n[last] = hi - lo;
    const int whole = lo == 0 && hi == N[last];
    int lper[3] = {per[0], per[1], per[2]};
    lper[last] = per[last] && whole; /* a cut periodic axis wraps through the neighbours' rows */
    hr_sgrid g;
    hri_sgrid_init(&g, dim, n, lper);
    double h[3] = {1, 1, 1}, ih2[3] = {1, 1, 1}, hp = 1.0;
    for (int a = 0; a < dim; a++) {
        h[a] = hr_problem_spacing(p, a);
        ih2[a] = 1.0 / (h[a] * h[a]);
        hp *= h[a];
    }
    const double hbar2 = pow(hp, 2.0 / dim);
    const uint64_t key = random_key(p->rhs_seed);
    disc_job J = {p, lo, whole, last, N, per, n, &g, h, ih2, hbar2, key, f_in, A, b, line_b, line_v};
    if (team)
        hri_team_run(team, disc_lines, &J);
    else
        disc_lines(&J, 0, 1);
    /* b's ghosts that no line wrote (each line zeroes those next to it, by the thread that
     * writes it): the ghost planes, or everything when the slab has no lines */
    if (b && (size_t)n[1] * n[2] == 0) {
        memset(b, 0, g.padded * sizeof *b);
    } else if (b && dim == 3) {
        memset(b, 0, (size_t)g.st[2] * sizeof *b);
        memset(b + (ptrdiff_t)(n[2] + 1) * g.st[2], 0, (size_t)g.st[2] * sizeof *b);
    }
    if (A) /* the coefficients' ghosts: read as c[k][p - o_k] across a periodic axis */
        for (int k = 0; k < A->nk; k++)
            hri_st_fill_ghosts(&g, A->c[k]);
    return HR_OK;
}

/* The volume fraction of unknown (i, j, k) of a slab starting at row lo of the last axis. */
static double volume_at(const hr_problem *p, int i, int j, int k)
{
    const int idx[3] = {i, j, k};
    double v = 1.0;
    for (int a = 0; a < p->dim; a++) {
        if (p->bc[2 * a].kind == HR_BC_PERIODIC) continue;
        if ((idx[a] == 0 && p->bc[2 * a].kind == HR_BC_NEUMANN) ||
            (idx[a] == p->n[a] - 1 && p->bc[2 * a + 1].kind == HR_BC_NEUMANN))
            v *= 0.5;
    }
    return v;
}

void hri_discretize_project(const hr_problem *p, int lo, int hi, double bsum, double vsum, double *b,
                            double *line_nb, double *line_nd, double *shift)
{
    const int dim = p->dim, last = dim - 1;
    int n[3] = {p->n[0], p->n[1], dim == 3 ? p->n[2] : 1}, per[3] = {0, 0, 0};
    n[last] = hi - lo;
    hr_sgrid g;
    hri_sgrid_init(&g, dim, n, per);
    const double c = bsum / vsum; /* per unit volume: subtracted from f */
    for (int k = 0; k < n[2]; k++)
        for (int j = 0; j < n[1]; j++) {
            double nb = 0.0, nd = 0.0;
            for (int i = 0; i < n[0]; i++) {
                const ptrdiff_t pi = hr_sgrid_index(&g, i, j, k);
                const double d = c * volume_at(p, i, last == 1 ? j + lo : j, last == 2 ? k + lo : k);
                nb += b[pi] * b[pi];
                nd += d * d;
                b[pi] -= d;
            }
            line_nb[(size_t)k * n[1] + j] = nb;
            line_nd[(size_t)k * n[1] + j] = nd;
        }
    *shift = c;
}

hr_status hri_discretize(const hr_problem *p, const double *f_in, hr_sop *A, double *b, hr_system_info *info)
{
    const int last = p->dim - 1, nl = last == 2 ? p->n[2] : p->n[1];
    const size_t lines = (size_t)p->n[1] * (p->dim == 3 ? p->n[2] : 1);
    double *lb = NULL, *lv = NULL;
    if (b && (!(lb = malloc(lines * sizeof *lb)) || !(lv = malloc(lines * sizeof *lv)))) {
        free(lb);
        return HR_ERR_NO_MEMORY;
    }
    hri_discretize_part(p, 0, nl, f_in, A, b, lb, lv);
    hr_system_info si = {0, 0.0, 0.0};
    if (b && hr_problem_is_singular(p)) {
        double bs = 0.0, vs = 0.0, nb = 0.0, nd = 0.0;
        for (size_t l = 0; l < lines; l++)
            bs += lb[l], vs += lv[l];
        si.singular = 1;
        hri_discretize_project(p, 0, nl, bs, vs, b, lb, lv, &si.rhs_shift);
        for (size_t l = 0; l < lines; l++)
            nb += lb[l], nd += lv[l];
        si.rhs_projection = nb > 0.0 ? sqrt(nd / nb) : sqrt(nd);
    }
    if (info) *info = si;
    free(lb);
    free(lv);
    return HR_OK;
}

/* ------------------------------------------------------------------ public */

int hr_problem_is_model(const hr_problem *p)
{
    if (!p || (p->dim != 2 && p->dim != 3)) return 0;
    for (int f = 0; f < 2 * p->dim; f++)
        if (p->bc[f].kind != HR_BC_DIRICHLET || p->bc[f].values || p->bc[f].value != p->bc[0].value) return 0;
    if (p->coef_values || p->coef != 1.0 || p->rhs == HR_RHS_RANDOM) return 0;
    const double h = hr_problem_spacing(p, 0);
    for (int a = 1; a < p->dim; a++)
        if (fabs(hr_problem_spacing(p, a) - h) > 1e-12 * h) return 0;
    return 1;
}

hr_status hr_problem_rhs(const hr_problem *p, const double *f, double *b, size_t count, hr_system_info *info)
{
    char why[200];
    if (hr_problem_validate(p, why, sizeof why) != HR_OK) {
        hri_set_last_error("%s", why);
        return HR_ERR_INVALID_ARG;
    }
    const size_t need = hr_problem_unknowns(p);
    if (!b || count < need) {
        hri_set_last_error("b: %zu values needed (got %zu)", need, b ? count : 0);
        return HR_ERR_INVALID_ARG;
    }
    int n[3] = {p->n[0], p->n[1], p->dim == 3 ? p->n[2] : 1}, per[3] = {0, 0, 0};
    hr_sgrid g;
    hri_sgrid_init(&g, p->dim, n, per);
    double *bp = hri_sgrid_alloc(&g);
    if (!bp) return (hri_set_last_error("b: out of memory"), HR_ERR_NO_MEMORY);
    hr_status st = hri_discretize(p, f, NULL, bp, info);
    if (st == HR_OK) hri_sgrid_pack(&g, bp, b);
    free(bp);
    return st;
}

hr_status hr_problem_matrix(const hr_problem *p, hr_csr **out)
{
    char why[200];
    if (!out) return (hri_set_last_error("out: NULL"), HR_ERR_INVALID_ARG);
    *out = NULL;
    if (hr_problem_validate(p, why, sizeof why) != HR_OK) {
        hri_set_last_error("%s", why);
        return HR_ERR_INVALID_ARG;
    }
    const size_t count = hr_problem_unknowns(p);
    if (count > HR_CSR_MAX_DIM)
        return (hri_set_last_error("problem: %zu unknowns, more than a CSR matrix holds", count),
                HR_ERR_INVALID_ARG);
    int n[3] = {p->n[0], p->n[1], p->dim == 3 ? p->n[2] : 1}, per[3] = {0, 0, 0};
    for (int a = 0; a < p->dim; a++)
        per[a] = p->bc[2 * a].kind == HR_BC_PERIODIC;
    hr_sgrid g;
    hri_sgrid_init(&g, p->dim, n, per);
    hr_sop A;
    if (hri_sop_alloc(&A, &g, 0) != HR_OK)
        return (hri_set_last_error("matrix: out of memory"), HR_ERR_NO_MEMORY);
    hri_discretize(p, NULL, &A, NULL, NULL);
    const int64_t cap = (int64_t)count * (2 * p->dim + 1);
    int32_t *ri = malloc((size_t)cap * sizeof *ri), *ci = malloc((size_t)cap * sizeof *ci);
    double *v = malloc((size_t)cap * sizeof *v);
    hr_status st = HR_ERR_NO_MEMORY;
    if (ri && ci && v) {
        int64_t nnz = 0;
        int32_t row = 0;
        for (int k = 0; k < n[2]; k++)
            for (int j = 0; j < n[1]; j++)
                for (int i = 0; i < n[0]; i++, row++) {
                    const int idx[3] = {i, j, k};
                    const ptrdiff_t pi = hr_sgrid_index(&g, i, j, k);
                    ri[nnz] = row, ci[nnz] = row, v[nnz++] = A.diag[pi];
                    for (int a = 0; a < p->dim; a++)
                        for (int side = 0; side < 2; side++) {
                            int t[3] = {i, j, k};
                            t[a] += side ? 1 : -1;
                            if (t[a] < 0 || t[a] >= n[a]) {
                                if (!per[a]) continue;
                                t[a] = (t[a] + n[a]) % n[a];
                            }
                            const double c = side ? A.c[a][pi] : A.c[a][pi - g.st[a]];
                            (void)idx;
                            ri[nnz] = row;
                            ci[nnz] = (int32_t)(((size_t)t[2] * n[1] + t[1]) * n[0] + t[0]);
                            v[nnz++] = c;
                        }
                }
        st = hr_csr_from_coo((int)count, (int)count, nnz, ri, ci, v, out);
        if (st != HR_OK) hri_set_last_error("matrix: could not build the CSR matrix");
    } else {
        hri_set_last_error("matrix: out of memory");
    }
    free(ri);
    free(ci);
    free(v);
    hri_sop_free(&A);
    return st;
}
