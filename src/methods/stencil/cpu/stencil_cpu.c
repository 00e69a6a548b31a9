/*
 * The CPU backend of the general-problem engine (stencil_kernels.h): each kernel is a job
 * over the grid's lines (rows of x) split evenly among the team's threads.
 */
#include <stdlib.h>
#include <string.h>

#include "methods/stencil/stencil_kernels.h"

/* ------------------------------------------------------------------ the split */

static size_t lines_of(const hr_sgrid *g)
{
    return (size_t)g->n[1] * (size_t)g->n[2];
}

static void share(size_t lines, int tid, int nt, size_t *l0, size_t *l1)
{
    *l0 = lines * (size_t)tid / (size_t)nt;
    *l1 = lines * (size_t)(tid + 1) / (size_t)nt;
}

static ptrdiff_t line_start(const hr_sgrid *g, size_t l)
{
    const int j = (int)(l % (size_t)g->n[1]), k = (int)(l / (size_t)g->n[1]);
    return hr_sgrid_index(g, 0, j, k);
}

/* Grids below this many unknowns run on the calling thread: a team's wake-up costs more
 * than their sweep (the coarse levels of multigrid). */
#define TEAM_MIN 4096

static void run_on(hr_st_exec *ex, const hr_sgrid *g, hr_team_fn fn, void *ctx)
{
    if (ex && ex->team && g->count >= TEAM_MIN)
        hri_team_run(ex->team, fn, ctx);
    else
        fn(ctx, 0, 1);
}

/* Ghosts before a read of neighbours: the cut rows (ranks), then the periodic axes. */
static void ghosts(const hr_st_exec *ex, const hr_sgrid *g, double *u)
{
    if (ex && ex->comm) ex->comm->halo(ex->comm->ctx, g, u);
    hri_st_fill_ghosts(g, u);
}

double hri_st_sum_lines(const hr_st_exec *ex, size_t lines)
{
    if (ex->quiet) return 0.0;
    if (ex->comm) return ex->comm->sum(ex->comm->ctx, ex->part, lines);
    double s = 0.0;
    for (size_t l = 0; l < lines; l++)
        s += ex->part[l];
    return s;
}

/* The operator's arrays in locals (a kernel that writes u must not make the compiler reload
 * them every point) and its kind: 2, 3 the star stencils in flux form, 4, 5 uniform star
 * stencils (scalars), 6, 7 the 2-D and 3-D box stencils, 0 any other. */
typedef struct opv {
    const double *diag, *exc, *c[HR_ST_MAX_HALF];
    ptrdiff_t doff[HR_ST_MAX_HALF], sy, sz;
    int nk, kind;
    double ud, uc[3];
    int rlo[3], rhi[3]; /* the box of rows that are all one row (hr_sop.rlo), and its values */
    double rd, rexc, rc[HR_ST_MAX_HALF], rcm[HR_ST_MAX_HALF];
} opv;

static opv view_of(const hr_sop *A)
{
    opv v;
    memset(&v, 0, sizeof v);
    v.diag = A->diag;
    v.exc = A->exc;
    v.nk = A->nk;
    for (int k = 0; k < A->nk; k++)
        v.c[k] = A->c[k], v.doff[k] = A->doff[k];
    v.sy = A->g.st[1];
    v.sz = A->g.st[2];
    v.kind = A->uniform ? A->g.dim + 2 : A->exc ? A->g.dim : A->nk == 4 ? 6 : A->nk == 13 ? 7 : 0;
    v.ud = A->ud;
    int whole = 1; /* the box is the whole grid's: a view of a slab of it has none */
    for (int a = 0; a < 3; a++)
        whole &= A->g.goff[a] == 0 && A->g.n[a] == A->g.gn[a];
    for (int a = 0; a < 3; a++)
        v.uc[a] = A->uc[a], v.rlo[a] = A->rlo[a], v.rhi[a] = whole ? A->rhi[a] : A->rlo[a];
    v.rd = A->rd;
    v.rexc = A->rexc;
    for (int k = 0; k < A->nk; k++)
        v.rc[k] = A->rc[k], v.rcm[k] = A->rcm[k];
    return v;
}

/* The x range [*x0, *x1) of line (y, z) inside the box of one row (empty: nx, nx). */
static inline void box_span(const opv *v, int y, int z, int nx, int *x0, int *x1)
{
    if (y >= v->rlo[1] && y < v->rhi[1] && z >= v->rlo[2] && z < v->rhi[2] && v->rlo[0] < v->rhi[0])
        *x0 = v->rlo[0], *x1 = v->rhi[0];
    else
        *x0 = *x1 = nx;
}

/* (A u)_p and the diagonal; `kind` a constant at every call, so each loop is specialised. The
 * star stencils take differences of neighbours first and their diagonal as exc - sum c (no
 * cancellation: exc >= 0 >= c). */
static inline double au_k(const opv *v, const double *u, ptrdiff_t p, int kind, double *dg)
{
    const double up = u[p];
    if (kind == 4 || kind == 5) { /* uniform: scalars only */
        const ptrdiff_t sy = v->sy;
        double s = v->ud * up + v->uc[0] * (u[p + 1] + u[p - 1]) + v->uc[1] * (u[p + sy] + u[p - sy]);
        if (kind == 5) s += v->uc[2] * (u[p + v->sz] + u[p - v->sz]);
        *dg = v->ud;
        return s;
    }
    if (kind == 2 || kind == 3) {
        const double *cx = v->c[0], *cy = v->c[1];
        const ptrdiff_t sy = v->sy;
        double s = cx[p] * (u[p + 1] - up) + cx[p - 1] * (u[p - 1] - up) + cy[p] * (u[p + sy] - up) +
                   cy[p - sy] * (u[p - sy] - up);
        double cs = cx[p] + cx[p - 1] + cy[p] + cy[p - sy];
        if (kind == 3) {
            const double *cz = v->c[2];
            const ptrdiff_t sz = v->sz;
            s += cz[p] * (u[p + sz] - up) + cz[p - sz] * (u[p - sz] - up);
            cs += cz[p] + cz[p - sz];
        }
        *dg = v->exc[p] - cs;
        return v->exc[p] * up + s;
    }
    double s = v->diag[p] * up;
    const int nk = kind == 6 ? 4 : kind == 7 ? 13 : v->nk; /* a constant for the box stencils */
    for (int k = 0; k < nk; k++) {
        const ptrdiff_t o = v->doff[k];
        s += v->c[k][p] * u[p + o] + v->c[k][p - o] * u[p - o];
    }
    *dg = v->diag[p];
    return s;
}

/* au_k inside the box of one row: its scalars for the arrays, the same terms in the same order
 * (the same bits); the uniform kinds have no box. */
static inline double au_s(const opv *v, const double *u, ptrdiff_t p, int kind, double *dg)
{
    if (kind == 4 || kind == 5) return au_k(v, u, p, kind, dg);
    const double up = u[p];
    if (kind == 2 || kind == 3) {
        const ptrdiff_t sy = v->sy;
        double s = v->rc[0] * (u[p + 1] - up) + v->rcm[0] * (u[p - 1] - up) + v->rc[1] * (u[p + sy] - up) +
                   v->rcm[1] * (u[p - sy] - up);
        double cs = v->rc[0] + v->rcm[0] + v->rc[1] + v->rcm[1];
        if (kind == 3) {
            const ptrdiff_t sz = v->sz;
            s += v->rc[2] * (u[p + sz] - up) + v->rcm[2] * (u[p - sz] - up);
            cs += v->rc[2] + v->rcm[2];
        }
        *dg = v->rexc - cs;
        return v->rexc * up + s;
    }
    double s = v->rd * up;
    const int nk = kind == 6 ? 4 : kind == 7 ? 13 : v->nk;
    for (int k = 0; k < nk; k++) {
        const ptrdiff_t o = v->doff[k];
        s += v->rc[k] * u[p + o] + v->rcm[k] * u[p - o];
    }
    *dg = v->rd;
    return s;
}

/* BODY(i, AU) for i = I0, I0 + STEP, ... < IEND, with AU(p, dg) the row's product: the arrays'
 * outside [X0, X1), the box's scalars inside. */
#define BOXED_LOOP(I0, IEND, STEP, X0, X1, BODY)                                                            \
    do {                                                                                                     \
        int i_ = (I0);                                                                                       \
        for (; i_ < (IEND) && i_ < (X0); i_ += (STEP)) {                                                   \
            BODY(i_, au_k);                                                                                  \
        }                                                                                                    \
        for (; i_ < (IEND) && i_ < (X1); i_ += (STEP)) {                                                   \
            BODY(i_, au_s);                                                                                  \
        }                                                                                                    \
        for (; i_ < (IEND); i_ += (STEP)) {                                                                 \
            BODY(i_, au_k);                                                                                  \
        }                                                                                                    \
    } while (0)

/* Runs STMT with K_ the operator's kind as a constant. */
#define BY_KIND(v, STMT)                                                                                     \
    do {                                                                                                     \
        if ((v).kind == 4) {                                                                                 \
            enum { K_ = 4 };                                                                                 \
            STMT;                                                                                            \
        } else if ((v).kind == 5) {                                                                          \
            enum { K_ = 5 };                                                                                 \
            STMT;                                                                                            \
        } else if ((v).kind == 6) {                                                                          \
            enum { K_ = 6 };                                                                                 \
            STMT;                                                                                            \
        } else if ((v).kind == 7) {                                                                          \
            enum { K_ = 7 };                                                                                 \
            STMT;                                                                                            \
        } else if ((v).kind == 2) {                                                                          \
            enum { K_ = 2 };                                                                                 \
            STMT;                                                                                            \
        } else if ((v).kind == 3) {                                                                          \
            enum { K_ = 3 };                                                                                 \
            STMT;                                                                                            \
        } else {                                                                                             \
            enum { K_ = 0 };                                                                                 \
            STMT;                                                                                            \
        }                                                                                                    \
    } while (0)

/* ------------------------------------------------------------------ residual, product */

typedef struct {
    hr_st_exec *ex;
    const hr_sop *A;
    const double *u, *b;
    double *r;
} res_job;

static void res_fn(void *ctx, int tid, int nt)
{
    const res_job *j = ctx;
    const opv v = view_of(j->A);
    const hr_sgrid *g = &j->A->g;
    size_t l0, l1;
    share(lines_of(g), tid, nt, &l0, &l1);
    const int nx = g->n[0];
    const double *u = j->u, *b = j->b;
    double *r = j->r, *part = j->ex->part;
    for (size_t l = l0; l < l1; l++) {
        const ptrdiff_t p0 = line_start(g, l);
        double s = 0.0, dg;
        int x0, x1;
        box_span(&v, (int)(l % (size_t)g->n[1]), (int)(l / (size_t)g->n[1]), nx, &x0, &x1);
#define RES_BODY(i, AU)                                                                                      \
    const ptrdiff_t p = p0 + (i);                                                                            \
    const double ri = b[p] - AU(&v, u, p, K_, &dg);                                                          \
    if (r) r[p] = ri;                                                                                        \
    s += ri * ri;
        BY_KIND(v, BOXED_LOOP(0, nx, 1, x0, x1, RES_BODY));
#undef RES_BODY
        part[l] = s;
    }
}

double hri_st_residual(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double *r)
{
    ghosts(ex, &A->g, u);
    res_job j = {ex, A, u, b, r};
    run_on(ex, &A->g, res_fn, &j);
    return hri_st_sum_lines(ex, lines_of(&A->g));
}

typedef struct {
    hr_st_exec *ex;
    const hr_sop *A;
    const double *p;
    double *q;
} apply_job;

static void apply_fn(void *ctx, int tid, int nt)
{
    const apply_job *j = ctx;
    const opv v = view_of(j->A);
    const hr_sgrid *g = &j->A->g;
    size_t l0, l1;
    share(lines_of(g), tid, nt, &l0, &l1);
    const int nx = g->n[0];
    const double *pv = j->p;
    double *q = j->q, *part = j->ex->part;
    for (size_t l = l0; l < l1; l++) {
        const ptrdiff_t p0 = line_start(g, l);
        double s = 0.0, dg;
        int x0, x1;
        box_span(&v, (int)(l % (size_t)g->n[1]), (int)(l / (size_t)g->n[1]), nx, &x0, &x1);
#define APPLY_BODY(i, AU)                                                                                    \
    const ptrdiff_t p = p0 + (i);                                                                            \
    const double qi = AU(&v, pv, p, K_, &dg);                                                                \
    q[p] = qi;                                                                                               \
    s += qi * pv[p];
        BY_KIND(v, BOXED_LOOP(0, nx, 1, x0, x1, APPLY_BODY));
#undef APPLY_BODY
        part[l] = s;
    }
}

double hri_st_apply_dot(hr_st_exec *ex, const hr_sop *A, double *p, double *q)
{
    ghosts(ex, &A->g, p);
    apply_job j = {ex, A, p, q};
    run_on(ex, &A->g, apply_fn, &j);
    return hri_st_sum_lines(ex, lines_of(&A->g));
}

/* ------------------------------------------------------------------ smoothers */

typedef struct {
    const hr_sop *A;
    const double *u, *b, *prev;
    double *out;
    double alpha, beta;
} jac_job;

static void jac_fn(void *ctx, int tid, int nt)
{
    const jac_job *j = ctx;
    const opv v = view_of(j->A);
    const hr_sgrid *g = &j->A->g;
    size_t l0, l1;
    share(lines_of(g), tid, nt, &l0, &l1);
    const int nx = g->n[0];
    const double al = j->alpha, be = j->beta;
    const double *u = j->u, *b = j->b, *prev = j->prev;
    double *out = j->out;
    for (size_t l = l0; l < l1; l++) {
        const ptrdiff_t p0 = line_start(g, l);
        double dg;
        int x0, x1;
        box_span(&v, (int)(l % (size_t)g->n[1]), (int)(l / (size_t)g->n[1]), nx, &x0, &x1);
#define JAC_BODY(i, AU)                                                                                      \
    const ptrdiff_t p = p0 + (i);                                                                            \
    const double au = AU(&v, u, p, K_, &dg);                                                                 \
    out[p] = u[p] + al * (b[p] - au) / dg;
#define CHEB_BODY(i, AU)                                                                                     \
    const ptrdiff_t p = p0 + (i);                                                                            \
    const double au = AU(&v, u, p, K_, &dg);                                                                 \
    out[p] = u[p] + al * (b[p] - au) / dg + be * (u[p] - prev[p]);
        if (!prev)
            BY_KIND(v, BOXED_LOOP(0, nx, 1, x0, x1, JAC_BODY));
        else
            BY_KIND(v, BOXED_LOOP(0, nx, 1, x0, x1, CHEB_BODY));
#undef JAC_BODY
#undef CHEB_BODY
    }
}

void hri_st_jacobi(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double *out, double omega)
{
    ghosts(ex, &A->g, u);
    jac_job j = {A, u, b, NULL, out, omega, 0.0};
    run_on(ex, &A->g, jac_fn, &j);
}

void hri_st_cheby(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, const double *prev, double *out,
                 double alpha, double beta)
{
    ghosts(ex, &A->g, u);
    jac_job j = {A, u, b, beta != 0.0 ? prev : NULL, out, alpha, beta};
    run_on(ex, &A->g, jac_fn, &j);
}

/* The class of index i along an axis of n points: its parity, or 2 for the last point of an
 * odd periodic axis (whose neighbour across the wrap, point 0, has its parity). */
static int axis_classes(const hr_sgrid *g, int a)
{
    return g->gper[a] && (g->gn[a] & 1) ? 3 : 2;
}

int hri_st_colours(const hr_sop *A, int cls[27][3])
{
    const hr_sgrid *g = &A->g;
    int nc[3] = {1, 1, 1};
    for (int a = 0; a < g->dim; a++)
        nc[a] = g->gn[a] > 1 ? axis_classes(g, a) : 1;
    /* forward order: the colours without a class-2 axis first, even parity sum before odd
     * (on the star stencil: red then black), then those with class 2 */
    int count = 0;
    for (int extra = 0; extra <= 3; extra++)
        for (int par = 0; par < 2; par++)
            for (int z = 0; z < nc[2]; z++)
                for (int y = 0; y < nc[1]; y++)
                    for (int x = 0; x < nc[0]; x++) {
                        const int c[3] = {x, y, z};
                        int e = 0, s = 0;
                        for (int a = 0; a < 3; a++)
                            c[a] == 2 ? e++ : (s += c[a]);
                        if (e != extra || (s & 1) != par) continue;
                        cls[count][0] = x, cls[count][1] = y, cls[count][2] = z;
                        count++;
                    }
    return count;
}

static inline int class_of(const hr_sgrid *g, int a, int i)
{
    const int I = i + g->goff[a]; /* the index in the whole grid */
    return g->gper[a] && (g->gn[a] & 1) && I == g->gn[a] - 1 ? 2 : I & 1;
}

typedef struct {
    const hr_sop *A;
    double *u;
    const double *b;
    double omega;
    int cls[3];
    int parity; /* >= 0: the points whose index sum has this parity (star stencils) */
} col_job;

#define COL_CHUNK 256

/* The colour sweep on lines [l0, l1) (parity >= 0: a star stencil's red-black colour). */
static void col_lines(const col_job *j, const opv *v, size_t l0, size_t l1, int parity)
{
    const hr_sgrid *g = &j->A->g;
    const int nx = g->n[0], cx = j->cls[0];
    const int xodd = g->periodic[0] && (nx & 1) && nx > 1;
    const double om = j->omega, *b = j->b;
    double *u = j->u;
    for (size_t l = l0; l < l1; l++) {
        const int y = (int)(l % (size_t)g->n[1]), z = (int)(l / (size_t)g->n[1]);
        int i0, iend;
        if (parity >= 0) { /* the star stencils' red-black: every line, alternate points */
            i0 = (parity + y + g->goff[1] + z + g->goff[2]) & 1;
            iend = nx;
        } else {
            if ((g->gn[1] > 1 && class_of(g, 1, y) != j->cls[1]) ||
                (g->gn[2] > 1 && class_of(g, 2, z) != j->cls[2]))
                continue;
            if (nx == 1 && cx != 0) continue;
            i0 = cx == 2 ? nx - 1 : cx;
            iend = cx == 2 ? nx : nx - (xodd ? 1 : 0);
        }
        const ptrdiff_t p0 = line_start(g, l);
        double dg;
        int x0, x1;
        box_span(v, y, z, nx, &x0, &x1);
#define COL_BODY(i, AU)                                                                                      \
    const ptrdiff_t p = p0 + (i);                                                                            \
    const double au = AU(v, u, p, K_, &dg);                                                                  \
    u[p] += om * (b[p] - au) / dg;
        if (parity < 0 && x0 < x1) {
            /* a class's points, and inside the box every point of the line computed into a
             * buffer (contiguous: vectorised) and the class's stored: the class's points read
             * only other classes, which this pass does not write, and no other line of this
             * pass is a neighbour, so the values are those of the stride-2 loop */
            BY_KIND((*v), {
                int i = i0;
                for (; i < iend && i < x0; i += 2) {
                    COL_BODY(i, au_k);
                }
                const int end = iend < x1 ? iend : x1;
                const int start = i;
                for (int c = start; c < end; c += COL_CHUNK) { /* COL_CHUNK even: c on the class */
                    const int len = end - c < COL_CHUNK ? end - c : COL_CHUNK;
                    double buf[COL_CHUNK];
                    for (int t = 0; t < len; t++) {
                        const ptrdiff_t p = p0 + c + t;
                        const double au = au_s(v, u, p, K_, &dg);
                        buf[t] = u[p] + om * (b[p] - au) / dg;
                    }
                    for (int t = 0; t < len; t += 2)
                        u[p0 + c + t] = buf[t];
                }
                if (end > start) i = start + 2 * ((end - start + 1) / 2);
                for (; i < iend; i += 2) {
                    COL_BODY(i, au_k);
                }
            });
        } else
            BY_KIND((*v), BOXED_LOOP(i0, iend, 2, x0, x1, COL_BODY));
#undef COL_BODY
    }
}

static void col_fn(void *ctx, int tid, int nt)
{
    const col_job *j = ctx;
    const opv v = view_of(j->A);
    size_t l0, l1;
    share(lines_of(&j->A->g), tid, nt, &l0, &l1);
    col_lines(j, &v, l0, l1, j->parity);
}

typedef struct {
    col_job c;
    hr_team *team;
    int first; /* the colour (parity) swept first */
} rb1_job;

/* A star stencil's red-black sweep in one pass over the grid's groups of lines (planes in 3-D,
 * lines in 2-D): the first colour on group s, then the second on group s - 1, whose neighbours
 * of the first colour are final by then. The second colour of a worker's first and last groups
 * waits for the barrier (their neighbours are another worker's). Every point sees the values
 * it sees in the two-pass sweep: the same bits, for any split, in half the passes over memory. */
static void rb1_fn(void *ctx, int tid, int nt)
{
    const rb1_job *j = ctx;
    const opv v = view_of(j->c.A);
    const hr_sgrid *g = &j->c.A->g;
    const size_t per = g->n[2] > 1 ? (size_t)g->n[1] : 1;
    size_t s0, s1;
    share(lines_of(g) / per, tid, nt, &s0, &s1);
    const int c1 = j->first, c2 = 1 - j->first;
    for (size_t s = s0; s < s1; s++) {
        col_lines(&j->c, &v, s * per, (s + 1) * per, c1);
        if (s >= s0 + 2) col_lines(&j->c, &v, (s - 1) * per, s * per, c2);
    }
    if (nt > 1) hri_team_barrier(j->team);
    if (s0 < s1) col_lines(&j->c, &v, s0 * per, (s0 + 1) * per, c2);
    if (s1 > s0 + 1) col_lines(&j->c, &v, (s1 - 1) * per, s1 * per, c2);
}

/* A multicolour sweep (hri_st_colours' classes, without a class-2 axis) in one pass over the
 * grid's planes along the last axis (lines along y in 2-D). Consecutive colours of one class
 * along that axis form a group, and the groups alternate between the two parities of the
 * planes; group g on plane k is the op (g, k). A point reads only the planes k - 1, k, k + 1,
 * so (g, k) must follow (g - 1, k +- 1) and (g - 2, k), and precede their counterparts the
 * other way: on one worker step t runs the ops (g, t - g) for g = 0, 1, ..., so that op (g, k)
 * meets every earlier colour final and every later one not yet applied on the planes it reads
 * (its parents run a step before it or earlier in its step), and a march touches four planes.
 *
 * Workers take slabs of planes. An op whose ancestors (the ops it must follow, within g planes
 * of k) are all on its worker's slab runs in the first phase; the phase of any other op is the
 * largest over its parents of theirs plus one where the parent is another worker's, so
 * every op runs after its ancestors (a barrier between phases) and no two ops that touch each
 * other's planes run together. Every point sees the values of the colour-by-colour passes:
 * the same bits, for any split, most ops in one march over memory. */
#define BOX1_MAX 27

typedef struct {
    col_job c[BOX1_MAX]; /* the colours in sweep order */
    int ngroup;
    int gfirst[BOX1_MAX + 1]; /* group g: colours gfirst[g] .. gfirst[g + 1] - 1 */
    int gcls[BOX1_MAX];       /* the class (parity) of group g's planes */
    int axis;                 /* the marching axis (2; 1 for a grid of one plane) */
    hr_team *team;
} box1_job;

typedef struct {
    size_t planes;
    int nt;
    size_t s0, s1; /* this worker's slab */
} box1_split;

static int plane_owner(const box1_split *s, int k)
{
    int t = (int)((size_t)k * (size_t)s->nt / s->planes);
    while (t + 1 < s->nt && s->planes * (size_t)(t + 1) / (size_t)s->nt <= (size_t)k)
        t++;
    while (t > 0 && s->planes * (size_t)t / (size_t)s->nt > (size_t)k)
        t--;
    return t;
}

/* The phase of op (g, k), plane k on worker w's slab [a, b). */
static int box1_phase(const box1_split *s, int g, int k, int w, size_t a, size_t b)
{
    if ((size_t)k >= a + (size_t)g && (size_t)k + (size_t)g < b) return 0; /* ancestors all on the slab */
    int ph = 0;
    for (int d = -1; d <= 1; d++) {
        const int k2 = k + d, g2 = d ? g - 1 : g - 2; /* the parents (g - 1, k -+ 1), (g - 2, k) */
        if (g2 < 0 || k2 < 0 || (size_t)k2 >= s->planes) continue;
        int w2 = w;
        size_t a2 = a, b2 = b;
        if ((size_t)k2 < a || (size_t)k2 >= b) w2 = plane_owner(s, k2), share(s->planes, w2, s->nt, &a2, &b2);
        const int p = box1_phase(s, g2, k2, w2, a2, b2) + (w2 != w);
        if (p > ph) ph = p;
    }
    return ph;
}

static void box1_fn(void *ctx, int tid, int nt)
{
    const box1_job *j = ctx;
    const opv v = view_of(j->c[0].A);
    const hr_sgrid *g = &j->c[0].A->g;
    const size_t per = j->axis == 2 ? (size_t)g->n[1] : 1;
    box1_split s = {lines_of(g) / per, nt, 0, 0};
    share(s.planes, tid, nt, &s.s0, &s.s1);
    if (s.s0 >= s.s1) {
        for (int ph = 1; ph < j->ngroup && nt > 1; ph++)
            hri_team_barrier(j->team);
        return;
    }
    const size_t tend = s.s1 + (size_t)(j->ngroup - 1);
    for (int ph = 0; ph < j->ngroup; ph++) {
        if (ph > 0) {
            if (nt == 1) break;
            hri_team_barrier(j->team);
        }
        for (size_t t = s.s0; t < tend; t++)
            for (int gr = 0; gr < j->ngroup; gr++) {
                const size_t lag = (size_t)gr;
                if (t < s.s0 + lag || t - lag >= s.s1) continue;
                const int k = (int)(t - lag);
                if ((k & 1) != j->gcls[gr]) continue;
                if (nt > 1 && box1_phase(&s, gr, k, tid, s.s0, s.s1) != ph) continue;
                for (int c = j->gfirst[gr]; c < j->gfirst[gr + 1]; c++)
                    col_lines(&j->c[c], &v, (size_t)k * per, (size_t)(k + 1) * per, -1);
            }
    }
}

void hri_st_colour_sweep(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double omega, int colour)
{
    int cls[27][3];
    const int n = hri_st_colours(A, cls);
    if (colour < 0 || colour >= n) return;
    ghosts(ex, &A->g, u);
    col_job j = {A, u, b, omega, {cls[colour][0], cls[colour][1], cls[colour][2]}, -1};
    run_on(ex, &A->g, col_fn, &j);
}

/* A whole Gauss-Seidel sweep in the colours' order (reverse: backwards). The star stencils
 * without an odd periodic axis sweep by parity, two passes: the same updates as their classes
 * (the classes of one parity do not couple), in half the passes; without a periodic axis or
 * ranks, in one pass (rb1_fn). The other stencils (the box) sweep their colours in one pass
 * (box1_fn) on those conditions, else a pass per colour. */
void hri_st_gs_sweep(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double omega, int reverse)
{
    int star = A->exc != NULL || (A->uniform && A->nk == A->g.dim);
    for (int a = 0; a < A->g.dim; a++)
        star &= !(A->g.gper[a] && (A->g.gn[a] & 1));
    /* one pass: one process (no ranks' rows to exchange between the colours), no periodic
     * axis (its ghosts are refreshed between them) */
    int one_pass = star && !(ex && ex->comm);
    for (int a = 0; a < 3; a++)
        one_pass &= !A->g.periodic[a] && !A->g.gper[a] && A->g.goff[a] == 0 && A->g.n[a] == A->g.gn[a];
    if (one_pass) {
        ghosts(ex, &A->g, u);
        rb1_job j = {{A, u, b, omega, {0, 0, 0}, -1}, ex ? ex->team : NULL, reverse ? 1 : 0};
        run_on(ex, &A->g, rb1_fn, &j);
        return;
    }
    if (star) {
        for (int t = 0; t < 2; t++) {
            ghosts(ex, &A->g, u);
            col_job j = {A, u, b, omega, {0, 0, 0}, reverse ? 1 - t : t};
            run_on(ex, &A->g, col_fn, &j);
        }
        return;
    }
    int cls[27][3];
    const int n = hri_st_colours(A, cls);
    /* the colours in one pass over the planes, on the conditions of the star's (no axis
     * periodic: no class 2) */
    int pass1 = !(ex && ex->comm) && n <= BOX1_MAX;
    for (int a = 0; a < 3; a++)
        pass1 &= !A->g.periodic[a] && !A->g.gper[a] && A->g.goff[a] == 0 && A->g.n[a] == A->g.gn[a];
    if (pass1) {
        box1_job j;
        memset(&j, 0, sizeof j);
        j.axis = A->g.n[2] > 1 ? 2 : 1;
        j.team = ex ? ex->team : NULL;
        for (int c = 0; c < n; c++) {
            const int *k = cls[reverse ? n - 1 - c : c];
            const col_job cj = {A, u, b, omega, {k[0], k[1], k[2]}, -1};
            j.c[c] = cj;
            if (c == 0 || k[j.axis] != j.gcls[j.ngroup - 1]) /* a new group */
                j.gfirst[j.ngroup] = c, j.gcls[j.ngroup++] = k[j.axis];
        }
        j.gfirst[j.ngroup] = n;
        ghosts(ex, &A->g, u);
        run_on(ex, &A->g, box1_fn, &j);
        return;
    }
    for (int c = 0; c < n; c++)
        hri_st_colour_sweep(ex, A, u, b, omega, reverse ? n - 1 - c : c);
}

/* ------------------------------------------------------------------ transfers */

typedef struct {
    const hr_sgrid *fg, *cg;
    const hr_st_axis *ax;
    const double *src;
    double *dst;
} tr_job;

/* sum_c sum_b sum_a zw[c] yw[b] xw[a] src(xi[a], yi[b], zi[c]): one point of a transfer. */
static inline double gather(const hr_sgrid *g, const double *src, const int *xi, const double *xw, int nx,
                            const int *yi, const double *yw, int ny, const int *zi, const double *zw, int nz)
{
    double s = 0.0;
    for (int c = 0; c < nz; c++)
        for (int b = 0; b < ny; b++) {
            const double *row = src + hr_sgrid_index(g, 0, yi[b], zi[c]);
            double t = 0.0;
            for (int a = 0; a < nx; a++)
                t += xw[a] * row[xi[a]];
            s += zw[c] * yw[b] * t;
        }
    return s;
}

/* The first run [*lo, *hi) of indices 0 .. n - 1 along x where `standard` holds (none: lo = hi):
 * the coarse indices of the standard full weighting (hr_st_restrict_standard), or the fine ones
 * of the standard linear prolongation (hr_st_prolong_standard). */
static void standard_run(const hr_st_axis *a, int n, int (*standard)(const hr_st_axis *, int), int *lo,
                         int *hi)
{
    *lo = *hi = 0;
    if (!a->coarsen) return;
    for (int i = 0, on = 0; i <= n; i++) {
        const int ok = i < n && standard(a, i);
        if (ok && !on) *lo = i, on = 1;
        if (!ok && on) {
            *hi = i;
            return;
        }
    }
}

static void restrict_fn(void *ctx, int tid, int nt)
{
    const tr_job *j = ctx;
    const hr_sgrid *cg = j->cg, *fg = j->fg;
    size_t l0, l1;
    share(lines_of(cg), tid, nt, &l0, &l1);
    int xa, xb;
    standard_run(&j->ax[0], cg->n[0], hr_st_restrict_standard, &xa, &xb);
    const int s = j->ax[0].first;
    for (size_t l = l0; l < l1; l++) {
        const int J = (int)(l % (size_t)cg->n[1]), K = (int)(l / (size_t)cg->n[1]);
        int yi[3], zi[3];
        double yw[3], zw[3];
        /* the tables hold whole-grid indices (a slab: its offset) */
        const int ny = hr_st_restrict_terms(&j->ax[1], J + cg->goff[1], yi, yw);
        const int nz = cg->dim == 3 ? hr_st_restrict_terms(&j->ax[2], K + cg->goff[2], zi, zw)
                                    : (zi[0] = 0, zw[0] = 1.0, 1);
        for (int t = 0; t < ny; t++)
            yi[t] = hr_sgrid_local(fg, 1, yi[t]);
        for (int t = 0; t < nz && cg->dim == 3; t++)
            zi[t] = hr_sgrid_local(fg, 2, zi[t]);
        double *dst = j->dst + hr_sgrid_index(cg, 0, J, K);
        for (int I = 0; I < cg->n[0]; I++) {
            if (I == xa && xa < xb) {
                /* gather()'s terms in its order, with the standard weights and the rows at hand */
                const double *rows[9];
                double wr[9];
                int nr = 0;
                for (int c = 0; c < nz; c++)
                    for (int b = 0; b < ny; b++)
                        rows[nr] = j->src + hr_sgrid_index(fg, 0, yi[b], zi[c]), wr[nr++] = zw[c] * yw[b];
                for (; I < xb; I++) {
                    const int f = s + 2 * I;
                    double sum = 0.0;
                    for (int r = 0; r < nr; r++) {
                        double t = 0.0;
                        t += 0.5 * rows[r][f - 1];
                        t += 1.0 * rows[r][f];
                        t += 0.5 * rows[r][f + 1];
                        sum += wr[r] * t;
                    }
                    dst[I] = sum;
                }
                if (I >= cg->n[0]) break;
            }
            int xi[3];
            double xw[3];
            const int nx = hr_st_restrict_terms(&j->ax[0], I, xi, xw);
            dst[I] = gather(fg, j->src, xi, xw, nx, yi, yw, ny, zi, zw, nz);
        }
    }
}

void hri_st_restrict(hr_st_exec *ex, const hr_sgrid *fg, const hr_sgrid *cg, const hr_st_axis ax[3],
                    const double *rf, double *bc)
{
    tr_job j = {fg, cg, ax, rf, bc};
    run_on(ex, fg, restrict_fn, &j);
}

static void prolong_fn(void *ctx, int tid, int nt)
{
    const tr_job *j = ctx;
    const hr_sgrid *cg = j->cg, *fg = j->fg;
    size_t l0, l1;
    share(lines_of(fg), tid, nt, &l0, &l1);
    int xa, xb;
    standard_run(&j->ax[0], fg->n[0], hr_st_prolong_standard, &xa, &xb);
    const int s = j->ax[0].first;
    for (size_t l = l0; l < l1; l++) {
        const int y = (int)(l % (size_t)fg->n[1]), z = (int)(l / (size_t)fg->n[1]);
        int yi[2], zi[2];
        double yw[2], zw[2];
        const int ny = hr_st_prolong_terms(&j->ax[1], y + fg->goff[1], yi, yw);
        const int nz = fg->dim == 3 ? hr_st_prolong_terms(&j->ax[2], z + fg->goff[2], zi, zw)
                                    : (zi[0] = 0, zw[0] = 1.0, 1);
        for (int t = 0; t < ny; t++)
            yi[t] = hr_sgrid_local(cg, 1, yi[t]);
        for (int t = 0; t < nz && fg->dim == 3; t++)
            zi[t] = hr_sgrid_local(cg, 2, zi[t]);
        double *out = j->dst + hr_sgrid_index(fg, 0, y, z);
        for (int i = 0; i < fg->n[0]; i++) {
            if (i == xa && xa < xb) {
                /* gather()'s terms in its order, with the standard weights and the rows at hand */
                const double *rows[4];
                double wr[4];
                int nr = 0;
                for (int c = 0; c < nz; c++)
                    for (int b = 0; b < ny; b++)
                        rows[nr] = j->src + hr_sgrid_index(cg, 0, yi[b], zi[c]), wr[nr++] = zw[c] * yw[b];
                for (; i < xb; i++) {
                    const int I = (i - s) >> 1; /* i - s >= -1: the floor */
                    double sum = 0.0;
                    if (((i - s) & 1) == 0) {
                        for (int r = 0; r < nr; r++) {
                            double t = 0.0;
                            t += 1.0 * rows[r][I];
                            sum += wr[r] * t;
                        }
                    } else {
                        for (int r = 0; r < nr; r++) {
                            double t = 0.0;
                            t += 0.5 * rows[r][I];
                            t += 0.5 * rows[r][I + 1];
                            sum += wr[r] * t;
                        }
                    }
                    out[i] += sum;
                }
                if (i >= fg->n[0]) break;
            }
            int xi[2];
            double xw[2];
            const int nx = hr_st_prolong_terms(&j->ax[0], i, xi, xw);
            out[i] += gather(cg, j->src, xi, xw, nx, yi, yw, ny, zi, zw, nz);
        }
    }
}

void hri_st_prolong_add(hr_st_exec *ex, const hr_sgrid *fg, const hr_sgrid *cg, const hr_st_axis ax[3],
                       const double *ec, double *uf)
{
    tr_job j = {fg, cg, ax, ec, uf};
    run_on(ex, fg, prolong_fn, &j);
}

/* ------------------------------------------------------------------ vectors */

typedef struct {
    hr_st_exec *ex;
    const hr_sgrid *g;
    double *x, *r;
    const double *p, *q;
    double alpha;
    int op; /* 0 dot(p, q), 1 update, 2 xpay (x = p + alpha x), 3 sum of x, 4 x -= alpha */
} vec_job;

static void vec_fn(void *ctx, int tid, int nt)
{
    const vec_job *j = ctx;
    const hr_sgrid *g = j->g;
    size_t l0, l1;
    share(lines_of(g), tid, nt, &l0, &l1);
    const int nx = g->n[0];
    const double al = j->alpha;
    for (size_t l = l0; l < l1; l++) {
        const ptrdiff_t p0 = line_start(g, l);
        double s = 0.0;
        switch (j->op) {
        case 0:
            for (int i = 0; i < nx; i++)
                s += j->p[p0 + i] * j->q[p0 + i];
            break;
        case 1:
            for (int i = 0; i < nx; i++) {
                const ptrdiff_t p = p0 + i;
                j->x[p] += al * j->p[p];
                const double r = j->r[p] - al * j->q[p];
                j->r[p] = r;
                s += r * r;
            }
            break;
        case 2:
            for (int i = 0; i < nx; i++)
                j->x[p0 + i] = j->p[p0 + i] + al * j->x[p0 + i];
            break;
        case 3:
            for (int i = 0; i < nx; i++)
                s += j->x[p0 + i];
            break;
        default:
            for (int i = 0; i < nx; i++)
                j->x[p0 + i] -= al;
            break;
        }
        if (j->op == 0 || j->op == 1 || j->op == 3) j->ex->part[l] = s;
    }
}

double hri_st_dot(hr_st_exec *ex, const hr_sgrid *g, const double *x, const double *y)
{
    vec_job j = {ex, g, NULL, NULL, x, y, 0.0, 0};
    run_on(ex, g, vec_fn, &j);
    return hri_st_sum_lines(ex, lines_of(g));
}

double hri_st_update(hr_st_exec *ex, const hr_sgrid *g, double *x, double *r, const double *p, const double *q,
                    double alpha)
{
    vec_job j = {ex, g, x, r, p, q, alpha, 1};
    run_on(ex, g, vec_fn, &j);
    return hri_st_sum_lines(ex, lines_of(g));
}

void hri_st_xpay(hr_st_exec *ex, const hr_sgrid *g, const double *z, double *p, double beta)
{
    vec_job j = {ex, g, p, NULL, z, NULL, beta, 2};
    run_on(ex, g, vec_fn, &j);
}

void hri_st_zero(const hr_sgrid *g, double *x)
{
    memset(x, 0, g->padded * sizeof *x);
}

void hri_st_remove_mean(hr_st_exec *ex, const hr_sgrid *g, double *x)
{
    vec_job j = {ex, g, x, NULL, NULL, NULL, 0.0, 3};
    run_on(ex, g, vec_fn, &j);
    j.alpha = hri_st_sum_lines(ex, lines_of(g)) / (double)(ex->comm ? ex->comm->count : g->count);
    j.op = 4;
    run_on(ex, g, vec_fn, &j);
}

/* ------------------------------------------------------------------ the CPU backend's table */

static double *cpu_alloc(hr_st_exec *ex, const hr_sgrid *g)
{
    (void)ex;
    return hri_sgrid_alloc(g);
}

static void cpu_release(hr_st_exec *ex, double *x)
{
    (void)ex;
    free(x);
}

static void cpu_copy(hr_st_exec *ex, const hr_sgrid *g, double *dst, const double *src)
{
    (void)ex;
    if (dst != src) memcpy(dst, src, g->padded * sizeof *dst);
}

static void cpu_zero(hr_st_exec *ex, const hr_sgrid *g, double *x)
{
    (void)ex;
    hri_st_zero(g, x);
}

static hr_status cpu_twin_op(hr_st_exec *ex, const hr_sop *host, hr_sop *out)
{
    (void)ex;
    *out = *host;
    return HR_OK;
}

static void cpu_free_op(hr_st_exec *ex, hr_sop *op)
{
    (void)ex;
    memset(op, 0, sizeof *op); /* a view: the host copy owns the arrays */
}

static hr_status cpu_twin_axis(hr_st_exec *ex, const hr_st_axis *host, hr_st_axis *out)
{
    (void)ex;
    *out = *host;
    return HR_OK;
}

static void cpu_free_axis(hr_st_exec *ex, hr_st_axis *ax)
{
    (void)ex;
    memset(ax, 0, sizeof *ax);
}

static void cpu_halo(hr_st_exec *ex, const hr_sgrid *g, double *x)
{
    ex->comm->halo(ex->comm->ctx, g, x);
}

static void cpu_allgather(hr_st_exec *ex, const hr_sgrid *g, double *x, const int *counts, const int *displs)
{
    (void)g;
    ex->comm->allgather(ex->comm->ctx, x, counts, displs);
}

const hr_st_backend hri_st_cpu = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_copy,
    .download = cpu_copy,
    .copy = cpu_copy,
    .zero = cpu_zero,
    .twin_op = cpu_twin_op,
    .free_op = cpu_free_op,
    .twin_axis = cpu_twin_axis,
    .free_axis = cpu_free_axis,
    .residual = hri_st_residual,
    .apply_dot = hri_st_apply_dot,
    .jacobi = hri_st_jacobi,
    .cheby = hri_st_cheby,
    .colour_sweep = hri_st_colour_sweep,
    .restrict_ = hri_st_restrict,
    .prolong_add = hri_st_prolong_add,
    .dot = hri_st_dot,
    .update = hri_st_update,
    .xpay = hri_st_xpay,
    .remove_mean = hri_st_remove_mean,
    .gs_sweep = hri_st_gs_sweep,
    .halo = cpu_halo,
    .allgather = cpu_allgather,
};
