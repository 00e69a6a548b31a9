/*
 * cpu-threads, flat layout: the SPMD Pthreads version of Venkatasubramanian & Vuduc section 3.1.
 * The interior is split into a 2-D grid of blocks, one per thread; every sweep each
 * thread updates its block, waits at one barrier, and swaps its grid pointers.
 * Each thread first-touches the rows of its block band so pages land near it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/solver_internal.h"
#include "methods/jacobi/cpu/stencil_box_stream.h"
#include "reference/stencil_cpu.h"
#include "runtime/cpu/cpu_team.h"

typedef struct spmd_state {
    hr_team *team;
    int prow, pcol; /* thread grid */
    long count;     /* sweeps in the current job */
    int stream;     /* write the new grid with streaming stores (kernel spmd-nt) */
    hr_solver *s;
} spmd_state;

static void spmd_touch(void *ctx, int tid, int nthreads)
{
    spmd_state *st = ctx;
    (void)nthreads;
    if (tid % st->pcol != 0) return; /* one toucher per band of rows */
    int lo, hi, ny = st->s->p.ny, band = tid / st->pcol;
    hr_split_range(ny, st->prow, band, &lo, &hi);
    /* band b owns interior rows [lo+1, hi+1); the first and last band take the boundary rows */
    int r0 = band == 0 ? 0 : lo + 1;
    int r1 = band == st->prow - 1 ? ny + 2 : hi + 1;
    hri_solver_init_rows(st->s, r0, r1);
}

static void spmd_job(void *ctx, int tid, int nthreads)
{
    spmd_state *st = ctx;
    hr_solver *s = st->s;
    (void)nthreads;
    int i0, i1, j0, j1;
    hr_split_range(s->p.ny, st->prow, tid / st->pcol, &i0, &i1);
    hr_split_range(s->p.nx, st->pcol, tid % st->pcol, &j0, &j1);
    const hr_rhs_view rhs = hri_solver_rhs_view(s);
    void *a = hr_grid_origin(&s->u[s->cur]), *b = hr_grid_origin(&s->u[1 - s->cur]);
    hr_sweep_args box = {&s->u[0].l, NULL, NULL, rhs, {{j0 + 1, i0 + 1, 0}, {j1 + 1, i1 + 1, 1}}, s->p.omega};
    for (long t = 0; t < st->count; t++) {
        box.in = a;
        box.out = b;
        if (st->stream)
            hri_cpu_sweep_box_stream(&box); /* ends with a store fence */
        else
            hri_cpu_sweep_box(&box);
        hri_team_barrier(st->team);
        void *tmp = a;
        a = b;
        b = tmp;
    }
}

/* spmd streams its stores when the grids exceed the threads' share of the last-level cache:
 * then write-allocate is a third of the traffic (tuning.cpu_stream overrides). */
static int spmd_auto_stream(const hr_solver *s)
{
    if (s->o.tuning.cpu_stream) return s->o.tuning.cpu_stream > 0;
    const int threads = s->o.thread_rows > 0 ? s->o.thread_rows * s->o.thread_cols : s->o.threads;
    const size_t grids = (s->hf.base ? 3u : 2u) * hr_layout_bytes(&s->u[0].l);
    return grids > hri_cache_llc_share(threads > 0 ? threads : hri_cpu_count());
}

static hr_status spmd_setup(hr_solver *s)
{
    spmd_state *st = calloc(1, sizeof *st);
    if (!st) return HR_ERR_NO_MEMORY;
    st->s = s;
    hri_cpu_thread_grid(&s->o, &st->prow, &st->pcol);
    hr_status rc = hri_cpu_open_team(s, st->prow, st->pcol, &st->team);
    if (rc != HR_OK) {
        free(st);
        return rc;
    }
    s->impl = st;
    st->stream = s->k->id == HR_SPMD_NT || spmd_auto_stream(s);
    if (st->stream && s->k->id != HR_SPMD_NT)
        snprintf(s->cfg.shape_source, sizeof s->cfg.shape_source, "auto+nt");
    s->cfg.threads = st->prow * st->pcol;
    s->cfg.thread_rows = st->prow;
    s->cfg.thread_cols = st->pcol;
    hri_team_run(st->team, spmd_touch, st);
    return HR_OK;
}

static hr_status spmd_sweeps(hr_solver *s, long count)
{
    spmd_state *st = s->impl;
    st->count = count;
    hri_team_run(st->team, spmd_job, st);
    if (count % 2) s->cur = 1 - s->cur;
    return HR_OK;
}

static void spmd_teardown(hr_solver *s)
{
    spmd_state *st = s->impl;
    if (!st) return;
    hri_team_free(st->team);
    free(st);
    s->impl = NULL;
}

/* spmd and spmd-nt (registry id HR_SPMD_NT: streaming stores always) */
const hr_kernel_ops hri_kernel_spmd = {
    .setup = spmd_setup,
    .sweeps = spmd_sweeps,
    .teardown = spmd_teardown,
};
