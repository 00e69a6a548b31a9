/*
 * Conjugate gradient on a thread team (the paper's strongest competitor for SPD
 * systems, Anzt et al. section 4.4). Dot products are summed over fixed chunks of
 * HR_SPARSE_CHUNK rows in chunk order, so the iterates are the same for any thread
 * count. One CG iteration counts as one global iteration.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "methods/krylov/cg.h"
#include "methods/sparse/sparse_internal.h"
#include "runtime/cpu/team.h"

typedef struct cg_state {
    hr_team *team;
    hr_sparse_run *r;
    long count;
    double *res, *p, *q; /* residual, direction, A p */
    double *pa, *pb;     /* per-chunk partial sums (two, so phases never overwrite a live one) */
    int nchunks;
    double rr;  /* r . r */
    long broke; /* > 0: step `broke` of the last call found p^T A p <= 0 (every thread alike) */
    double broke_pq;
    /* res, p and q hold the true vectors divided by sc, a power of two (1 unless the
     * residual is beyond 2^+-500): r.r cannot overflow, alpha and beta are unchanged
     * and x += (alpha p/sc) sc is exact, so the iterates are those of plain CG. */
    double sc;
} cg_state;

static void chunk_rows(const cg_state *s, int tid, int nt, int *lo, int *hi)
{
    int n = s->r->A->n_rows, base = s->nchunks / nt, extra = s->nchunks % nt;
    int c0 = tid * base + (tid < extra ? tid : extra), c1 = c0 + base + (tid < extra ? 1 : 0);
    *lo = c0 * HR_SPARSE_CHUNK;
    *hi = c1 * HR_SPARSE_CHUNK < n ? c1 * HR_SPARSE_CHUNK : n;
}

static double sum_chunks(const double *part, int nchunks)
{
    double s = 0.0;
    for (int c = 0; c < nchunks; c++)
        s += part[c];
    return s;
}

/* part[c] = sum over the rows of chunk c (within [lo, hi)) of u_i v_i */
static void chunk_dots(const double *u, const double *v, double *part, int lo, int hi)
{
    for (int c0 = lo; c0 < hi; c0 += HR_SPARSE_CHUNK) {
        int c1 = c0 + HR_SPARSE_CHUNK < hi ? c0 + HR_SPARSE_CHUNK : hi;
        double s = 0.0;
        for (int i = c0; i < c1; i++)
            s += u[i] * v[i];
        part[c0 / HR_SPARSE_CHUNK] = s;
    }
}

/* One team member's view of the CG vectors: its rows [lo, hi) */
typedef struct cg_member {
    cg_state *s;
    int lo, hi;
} cg_member;

/* q = A p on the member's rows; p . q summed over the chunks in chunk order */
static double op_apply_dot(void *ctx)
{
    cg_member *w = ctx;
    cg_state *s = w->s;
    hri_csr_spmv_rows(s->r->A, s->p, s->q, w->lo, w->hi);
    chunk_dots(s->p, s->q, s->pa, w->lo, w->hi);
    hri_team_barrier(s->team);
    return sum_chunks(s->pa, s->nchunks);
}

/* x += alpha p (times sc), r -= alpha q, then r . r in chunk order */
static double op_update(void *ctx, double alpha)
{
    cg_member *w = ctx;
    cg_state *s = w->s;
    double *x = s->r->x;
    for (int i = w->lo; i < w->hi; i++) {
        x[i] += s->sc == 1.0 ? alpha * s->p[i] : alpha * s->p[i] * s->sc;
        s->res[i] -= alpha * s->q[i];
    }
    chunk_dots(s->res, s->res, s->pb, w->lo, w->hi);
    hri_team_barrier(s->team);
    return sum_chunks(s->pb, s->nchunks);
}

static void op_xpay(void *ctx, double beta)
{
    cg_member *w = ctx;
    cg_state *s = w->s;
    for (int i = w->lo; i < w->hi; i++)
        s->p[i] = s->res[i] + beta * s->p[i];
    hri_team_barrier(s->team); /* p complete before the next product reads it */
}

/* Every member runs the recurrence on its rows; the sums are over all chunks, so every
 * member holds the same scalars and stops at the same step. */
static void cg_job(void *ctx, int tid, int nt)
{
    cg_state *s = ctx;
    cg_member w = {s, 0, 0};
    chunk_rows(s, tid, nt, &w.lo, &w.hi);
    const hr_cg_ops ops = {.ctx = &w, .apply_dot = op_apply_dot, .update = op_update, .xpay = op_xpay};
    hr_cg_scalars sc = {s->rr, s->rr};
    hr_cg_out out;
    hri_cg_iterate(&ops, &sc, s->count, &out);
    if (tid == 0) { /* every thread holds the same values */
        s->rr = sc.rr;
        if (out.stop == HR_CG_BREAKDOWN) {
            s->broke = out.done + 1;
            s->broke_pq = out.breakdown_pq;
        }
    }
}

static hr_status cg_setup(hr_sparse_run *r)
{
    cg_state *s = calloc(1, sizeof *s);
    if (!s) return HR_ERR_NO_MEMORY;
    r->impl = s;
    s->r = r;
    const int n = r->A->n_rows;
    s->nchunks = (n + HR_SPARSE_CHUNK - 1) / HR_SPARSE_CHUNK;
    s->res = malloc((size_t)n * sizeof *s->res);
    s->p = malloc((size_t)n * sizeof *s->p);
    s->q = malloc((size_t)n * sizeof *s->q);
    s->pa = malloc(((size_t)s->nchunks + 1) * sizeof *s->pa);
    s->pb = malloc(((size_t)s->nchunks + 1) * sizeof *s->pb);
    if (!s->res || !s->p || !s->q || !s->pa || !s->pb) return HR_ERR_NO_MEMORY;
    int threads = r->m->backend == HR_BACKEND_CPU_SEQ ? 1 : r->threads;
    return hri_team_create(threads, r->o.bind, &s->team);
}

/* r = b - A x, p = r, r.r: the start of each solve */
static hr_status cg_load(hr_sparse_run *r)
{
    cg_state *s = r->impl;
    const int n = r->A->n_rows;
    hr_csr_spmv(r->A, r->x, s->q);
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        s->res[i] = r->b[i] - s->q[i];
        if (fabs(s->res[i]) > m) m = fabs(s->res[i]);
    }
    s->sc = hri_sparse_pow2_scale(m);
    for (int i = 0; i < n; i++)
        s->p[i] = s->res[i] = s->sc == 1.0 ? s->res[i] : s->res[i] / s->sc;
    chunk_dots(s->res, s->res, s->pa, 0, n);
    s->rr = sum_chunks(s->pa, s->nchunks);
    s->broke = 0;
    return HR_OK;
}

static hr_status cg_iterate(hr_sparse_run *r, long count)
{
    cg_state *s = r->impl;
    s->count = count;
    hri_team_run(s->team, cg_job, s);
    if (s->broke) {
        r->breakdown = r->done + s->broke;
        r->breakdown_pq = s->broke_pq;
        return HR_ERR_DIVERGED;
    }
    return HR_OK;
}

static void cg_teardown(hr_sparse_run *r)
{
    cg_state *s = r->impl;
    if (!s) return;
    hri_team_free(s->team);
    free(s->res), free(s->p), free(s->q), free(s->pa), free(s->pb);
    free(s);
    r->impl = NULL;
}

/* One thread (backend cpu-seq) or threads: the registry line's backend says which. */
const hr_sparse_ops hri_sparse_cg = {
    .setup = cg_setup,
    .iterate = cg_iterate,
    .teardown = cg_teardown,
    .load = cg_load,
    .host_row_bytes = 24.0, /* residual, direction, A p */
};
