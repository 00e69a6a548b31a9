/*
 * CPU relaxation methods for sparse systems (Anzt et al., sections 2 and 3.3):
 *  - jacobi: synchronous, rows split over a thread team, one barrier per sweep; the
 *    iterates do not depend on the thread count (each row is computed alone).
 *  - gs: sequential Gauss-Seidel, the paper's CPU baseline.
 *  - async: block-asynchronous async-(K), Algorithm 1. Rows are cut into blocks of
 *    `block` rows; each thread owns a contiguous range of blocks and, per global
 *    iteration, for each block: reads x from shared memory without synchronisation,
 *    forms the off-block part once, does K local Jacobi sweeps with it frozen, and
 *    writes the block back. Threads never wait for each other inside iterate().
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/team.h"
#include "methods/sparse/sparse_internal.h"

static void split(int len, int parts, int p, int *lo, int *hi)
{
    int base = len / parts, extra = len % parts;
    *lo = p * base + (p < extra ? p : extra);
    *hi = *lo + base + (p < extra ? 1 : 0);
}

/* Relaxed atomic access to the shared iterate of async: other threads write it
 * concurrently by design; this keeps the races defined (and TSan-clean). On x86-64
 * these are plain 8-byte moves. */
static inline double load_relaxed(const double *p)
{
    double v;
    __atomic_load(p, &v, __ATOMIC_RELAXED);
    return v;
}
static inline void store_relaxed(double *p, double v)
{
    __atomic_store(p, &v, __ATOMIC_RELAXED);
}

typedef struct relax_state {
    hr_team *team;
    hr_sparse_run *r;
    long count;
    double *xn;      /* jacobi: the second iterate */
    double *scratch; /* async: per-thread block buffers */
    size_t stride;   /* async: doubles per thread in scratch */
    int nblocks;
} relax_state;

static int team_threads(const hr_sparse_run *r)
{
    return r->m->backend == HR_BACKEND_CPU_SEQ ? 1 : r->threads;
}

/* The state every relaxation shares: the team (none for one thread's Gauss-Seidel). */
static hr_status relax_state_new(hr_sparse_run *r, int team, relax_state **out)
{
    relax_state *s = calloc(1, sizeof *s);
    if (!s) return HR_ERR_NO_MEMORY;
    r->impl = s;
    s->r = r;
    *out = s;
    return team ? hri_team_create(team_threads(r), r->o.bind, &s->team) : HR_OK;
}

static hr_status jacobi_setup(hr_sparse_run *r)
{
    relax_state *s;
    HR_TRY(relax_state_new(r, 1, &s));
    s->xn = malloc((size_t)r->A->n_rows * sizeof *s->xn); /* the second iterate */
    return s->xn ? HR_OK : HR_ERR_NO_MEMORY;
}

static hr_status gs_setup(hr_sparse_run *r)
{
    relax_state *s;
    return relax_state_new(r, 0, &s);
}

static hr_status async_setup(hr_sparse_run *r)
{
    relax_state *s;
    HR_TRY(relax_state_new(r, 1, &s));
    const int n = r->A->n_rows;
    int B = r->o.block < n ? r->o.block : (n > 0 ? n : 1); /* never a zero block size */
    s->nblocks = (n + B - 1) / B;
    s->stride = 3 * (size_t)B + 16; /* s, x_local, x_local' plus a gap against false sharing */
    s->scratch = malloc(s->stride * (size_t)team_threads(r) * sizeof *s->scratch);
    return s->scratch ? HR_OK : HR_ERR_NO_MEMORY;
}

static void relax_teardown(hr_sparse_run *r)
{
    relax_state *s = r->impl;
    if (!s) return;
    hri_team_free(s->team);
    free(s->xn);
    free(s->scratch);
    free(s);
    r->impl = NULL;
}

/* ------------------------------------------------------------------ jacobi */

static void jacobi_job(void *ctx, int tid, int nt)
{
    relax_state *s = ctx;
    const hr_sparse_run *r = s->r;
    const hr_csr *A = r->A;
    const unsigned char *frozen = r->fault_active ? r->frozen : NULL;
    int lo, hi;
    split(A->n_rows, nt, tid, &lo, &hi);
    double *xa = r->x, *xb = s->xn;
#define XA(j) xa[j]
    for (long k = 0; k < s->count; k++) {
        for (int i = lo; i < hi; i++) {
            if (frozen && frozen[i])
                xb[i] = xa[i];
            else
                HR_SPARSE_ROW_UPDATE(A, r->b, i, r->tau, xa[i], XA, xb[i]);
        }
        hri_team_barrier(s->team);
        double *t = xa;
        xa = xb;
        xb = t;
    }
#undef XA
    /* after the last barrier nobody reads r->x: copy back this thread's rows */
    if (xa != r->x) memcpy(r->x + lo, xa + lo, (size_t)(hi - lo) * sizeof *xa);
}

static hr_status jacobi_iterate(hr_sparse_run *r, long count)
{
    relax_state *s = r->impl;
    s->count = count;
    hri_team_run(s->team, jacobi_job, s);
    return HR_OK;
}

/* ---------------------------------------------------------------------- gs */

static hr_status gs_iterate(hr_sparse_run *r, long count)
{
    const hr_csr *A = r->A;
    const unsigned char *frozen = r->fault_active ? r->frozen : NULL;
    double *x = r->x;
#define XG(j) x[j]
    for (long k = 0; k < count; k++)
        for (int i = 0; i < A->n_rows; i++) {
            if (frozen && frozen[i]) continue;
            HR_SPARSE_ROW_UPDATE(A, r->b, i, 1.0, x[i], XG, x[i]);
        }
#undef XG
    return HR_OK;
}

/* ------------------------------------------------------------------- async */

static void async_job(void *ctx, int tid, int nt)
{
    relax_state *s = ctx;
    const hr_sparse_run *r = s->r;
    const hr_csr *A = r->A;
    const int n = A->n_rows, B = r->o.block < n ? r->o.block : (n > 0 ? n : 1), K = r->o.local_iters;
    const unsigned char *frozen = r->fault_active ? r->frozen : NULL;
    double *sh = s->scratch + (size_t)tid * s->stride, *xl = sh + B, *xl2 = xl + B;
    double *x = r->x;
    int b0, b1;
    split(s->nblocks, nt, tid, &b0, &b1);
    for (long k = 0; k < s->count; k++)
        for (int blk = b0; blk < b1; blk++) {
            const int lo = blk * B, hi = lo + B < n ? lo + B : n;
            for (int i = lo; i < hi; i++) { /* off-block part, from x as it is now */
                double acc = r->b[i];
                for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
                    int j = A->col[p];
                    if (j < lo || j >= hi) acc -= A->val[p] * load_relaxed(&x[j]);
                }
                sh[i - lo] = acc;
                xl[i - lo] = load_relaxed(&x[i]);
            }
            double *a = xl, *c = xl2;
            for (int l = 0; l < K; l++) { /* local Jacobi sweeps on the block */
                for (int i = lo; i < hi; i++) {
                    if (frozen && frozen[i]) {
                        c[i - lo] = a[i - lo];
                        continue;
                    }
                    double acc = sh[i - lo];
                    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
                        int j = A->col[p];
                        if (j >= lo && j < hi && j != i) acc -= A->val[p] * a[j - lo];
                    }
                    c[i - lo] = acc / A->val[A->diag[i]];
                }
                double *t = a;
                a = c;
                c = t;
            }
            for (int i = lo; i < hi; i++)
                store_relaxed(&x[i], a[i - lo]);
        }
}

static hr_status async_iterate(hr_sparse_run *r, long count)
{
    relax_state *s = r->impl;
    s->count = count;
    hri_team_run(s->team, async_job, s);
    return HR_OK;
}

/* ------------------------------------------------------------------ table */

/* One thread (backend cpu-seq) or threads: the registry line's backend says which. */
const hr_sparse_ops hri_sparse_jacobi = {
    .setup = jacobi_setup,
    .iterate = jacobi_iterate,
    .teardown = relax_teardown,
    .host_row_bytes = 8.0, /* the second iterate */
};
const hr_sparse_ops hri_sparse_gs = {
    .setup = gs_setup,
    .iterate = gs_iterate,
    .teardown = relax_teardown,
};
const hr_sparse_ops hri_sparse_async = {
    .setup = async_setup,
    .iterate = async_iterate,
    .teardown = relax_teardown,
};
