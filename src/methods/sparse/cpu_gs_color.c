/*
 * Multi-colour Gauss-Seidel on a thread team (`--method gs-mc`).
 *
 * Setup colours the rows once: greedy, in row order, on the symmetric pattern of
 * A + A^T (explicit zeros count as couplings), each row taking the smallest colour
 * that no earlier coupled row has. No two rows of one colour are then coupled, so
 * the rows of a colour can be updated in any order, or all at once, with the same
 * result. The rows are stored grouped by colour, in increasing index within a colour.
 *
 * One global iteration: for each colour in order, the team updates that colour's rows
 * in place (each thread a contiguous chunk of them), then waits at a barrier. Every
 * row update reads only rows of other colours, which no thread writes during the
 * colour, so the iterates are bitwise the same for any thread count. For the 5-point
 * Laplacian in natural order the greedy colouring is the red-black one: colour
 * (r + c) mod 2, and gs-mc is red-black Gauss-Seidel.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/team.h"
#include "methods/sparse/sparse_internal.h"

hr_status hri_sparse_color_rows(const hr_csr *A, int *color, int *ncolors)
{
    const int n = A->n_rows;
    *ncolors = 0;
    if (A->n_rows != A->n_cols) return HR_ERR_INVALID_ARG;
    /* up[i]: the rows j < i with a_ji present (the strictly upper part of column i),
     * i.e. the couplings of i through A^T that row i of A may not list. */
    int64_t *uptr = calloc((size_t)n + 1, sizeof *uptr);
    int *mark = malloc((size_t)(n > 0 ? n : 1) * sizeof *mark);
    int32_t *up = NULL;
    if (!uptr || !mark) goto oom;
    for (int j = 0; j < n; j++)
        for (int64_t p = A->row_ptr[j]; p < A->row_ptr[j + 1]; p++)
            if (A->col[p] > j) uptr[A->col[p] + 1]++;
    for (int i = 0; i < n; i++)
        uptr[i + 1] += uptr[i];
    if (!(up = malloc((size_t)(uptr[n] > 0 ? uptr[n] : 1) * sizeof *up))) goto oom;
    for (int j = 0; j < n; j++) /* rows in increasing order: each list ends up sorted */
        for (int64_t p = A->row_ptr[j]; p < A->row_ptr[j + 1]; p++)
            if (A->col[p] > j) up[uptr[A->col[p]]++] = j;
    for (int i = n; i > 0; i--) /* the fill advanced each start to the next one's */
        uptr[i] = uptr[i - 1];
    uptr[0] = 0;

    for (int c = 0; c < n; c++)
        mark[c] = -1;
    int nc = 0;
    for (int i = 0; i < n; i++) {
        for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            if (A->col[p] < i) mark[color[A->col[p]]] = i;
        for (int64_t p = uptr[i]; p < uptr[i + 1]; p++)
            mark[color[up[p]]] = i;
        int c = 0;
        while (mark[c] == i) /* at most i colours are marked, so c <= i < n */
            c++;
        color[i] = c;
        if (c + 1 > nc) nc = c + 1;
    }
    *ncolors = nc;
    free(uptr);
    free(mark);
    free(up);
    return HR_OK;
oom:
    free(uptr);
    free(mark);
    free(up);
    return HR_ERR_NO_MEMORY;
}

typedef struct gsmc_state {
    hr_team *team;
    hr_sparse_run *r;
    long count;
    int ncolors;
    int *perm; /* rows grouped by colour, increasing index within a colour */
    int *cptr; /* colour c owns perm[cptr[c] .. cptr[c + 1]) */
} gsmc_state;

static hr_status gsmc_setup(hr_sparse_run *r)
{
    gsmc_state *s = calloc(1, sizeof *s);
    if (!s) return HR_ERR_NO_MEMORY;
    r->impl = s;
    s->r = r;
    const int n = r->A->n_rows;
    int *color = malloc((size_t)(n > 0 ? n : 1) * sizeof *color);
    s->perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *s->perm);
    if (!color || !s->perm) {
        free(color);
        return HR_ERR_NO_MEMORY;
    }
    hr_status st = hri_sparse_color_rows(r->A, color, &s->ncolors);
    if (st == HR_OK && !(s->cptr = calloc((size_t)s->ncolors + 1, sizeof *s->cptr))) st = HR_ERR_NO_MEMORY;
    if (st != HR_OK) {
        free(color);
        return st;
    }
    for (int i = 0; i < n; i++) /* counting sort by colour, stable in the row index */
        s->cptr[color[i] + 1]++;
    for (int c = 0; c < s->ncolors; c++)
        s->cptr[c + 1] += s->cptr[c];
    for (int i = 0; i < n; i++)
        s->perm[s->cptr[color[i]]++] = i;
    for (int c = s->ncolors; c > 0; c--)
        s->cptr[c] = s->cptr[c - 1];
    s->cptr[0] = 0;
    free(color);
    r->colors = s->ncolors;
    return hri_team_create(r->threads, r->o.bind, &s->team);
}

static void gsmc_teardown(hr_sparse_run *r)
{
    gsmc_state *s = r->impl;
    if (!s) return;
    hri_team_free(s->team);
    free(s->perm);
    free(s->cptr);
    free(s);
    r->impl = NULL;
}

static void gsmc_job(void *ctx, int tid, int nt)
{
    gsmc_state *s = ctx;
    const hr_sparse_run *r = s->r;
    const hr_csr *A = r->A;
    const unsigned char *frozen = r->fault_active ? r->frozen : NULL;
    double *x = r->x;
#define XM(j) x[j]
    for (long k = 0; k < s->count; k++)
        for (int c = 0; c < s->ncolors; c++) {
            const int len = s->cptr[c + 1] - s->cptr[c], base = len / nt, extra = len % nt;
            const int lo = tid * base + (tid < extra ? tid : extra), hi = lo + base + (tid < extra ? 1 : 0);
            const int *rows = s->perm + s->cptr[c];
            for (int q = lo; q < hi; q++) {
                const int i = rows[q];
                if (frozen && frozen[i]) continue;
                HR_SPARSE_ROW_UPDATE(A, r->b, i, 1.0, x[i], XM, x[i]);
            }
            hri_team_barrier(s->team); /* the next colour reads what this one wrote */
        }
#undef XM
}

static hr_status gsmc_iterate(hr_sparse_run *r, long count)
{
    gsmc_state *s = r->impl;
    s->count = count;
    hri_team_run(s->team, gsmc_job, s);
    return HR_OK;
}

const hr_sparse_ops hri_sparse_gs_mc = {
    .setup = gsmc_setup,
    .iterate = gsmc_iterate,
    .teardown = gsmc_teardown,
    .host_row_bytes = 24.0, /* the colouring's lists, colours, permutation */
    .host_entry_bytes = 4.0,
};
