/*
 * cpu-threads async0..async3: Venkatasubramanian & Vuduc section 3.4, figures 7-10, on CPU threads.
 * The definitions (alpha, pass, Teff, global syncs) are written down once in
 * docs/async.md; the GPU versions follow the same ones.
 *
 * The threads form a 2-D grid like "spmd"; each thread's block is the paper's thread
 * block. A sweeps(count) call runs count sweeps (Teff) in passes of
 * hr_async_pass_sweeps(variant, alpha) sweeps, the last one shortened if needed.
 *   async0-2: one barrier after every pass (the kernel boundary of figure 7's outer
 *             loop), grids u[0]/u[1] swapped per pass; alpha = 1 is a synchronous sweep.
 *   async3:   no barrier at all: every thread runs its passes on the one shared grid
 *             u[cur], in place, until it has done its count sweeps.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/solver_internal.h"
#include "core/stencil.h"
#include "core/tuning.h"
#include "methods/async/cpu/jacobi2d_async.h"
#include "runtime/cpu/cpu_team.h"
#include "runtime/cpu/sysmem.h"

_Static_assert(sizeof(_Atomic float) == sizeof(float) && _Alignof(_Atomic float) == _Alignof(float),
               "relaxed atomics on grid floats need the plain layout");
_Static_assert(sizeof(_Atomic double) == sizeof(double) && _Alignof(_Atomic double) == _Alignof(double),
               "relaxed atomics on grid doubles need the plain layout");

#define T           float
#define HR_FN(name) name##_f32
#include "methods/async/cpu/jacobi2d_async_impl.h"
#undef T
#undef HR_FN

#define T           double
#define HR_FN(name) name##_f64
#include "methods/async/cpu/jacobi2d_async_impl.h"
#undef T
#undef HR_FN

typedef struct async_tile {
    int i0, j0, bi, bj;   /* block: global rows i0+1..i0+bi, columns j0+1..j0+bj */
    size_t pitch, offset; /* tile pitch; elements from an allocation to tile (0, 0) */
    void *mem[2];         /* B1, B2 (async3 uses mem[0] only) */
    void *hfmem;          /* h^2 f of the block, or NULL */
    void *row;            /* async3 scratch row */
    hr_status status;
} async_tile;

/* async3: passes a thread has finished, one cache line each so polling is cheap. */
typedef struct async_progress {
    _Alignas(64) atomic_long passes;
} async_progress;

/* async3 lets a thread start pass p only once its neighbours have finished pass
 * p - HR_ASYNC3_SLACK: no barrier, but a bounded delay (the condition the convergence
 * theory of asynchronous iterations needs). With a thread per core it never waits;
 * it matters when threads outnumber cores and one is descheduled for a long time. */
#define HR_ASYNC3_SLACK 1

typedef struct async_state {
    hr_team *team;
    int prow, pcol;
    int variant;
    int pass;   /* sweeps in a full pass */
    long count; /* sweeps in the current job */
    async_tile *tiles;
    async_progress *progress; /* async3, per thread */
    long pass_base;           /* async3: passes finished by every thread before this job */
    hr_solver *s;
} async_state;

/* alpha may not exceed the smaller side of the smallest thread block: beyond it the
 * local sweeps of one pass cross a block more than once on stale fringes, and async2
 * turns into block Jacobi with (nearly) exact local solves rather than the schedule
 * the paper studies (docs/async.md, "alpha"). */
static hr_status async_check(const hr_options *o, char *why, size_t why_size)
{
    int prow, pcol;
    hri_cpu_thread_grid(o, &prow, &pcol);
    const int ny = hri_options_extent(o, 1), nx = hri_options_extent(o, 0);
    const int side = (ny / prow < nx / pcol ? ny / prow : nx / pcol);
    const int max_alpha = side > 1 ? side : 1;
    if (o->alpha <= max_alpha) return HR_OK;
    if (why && why_size)
        snprintf(why, why_size,
                 "alpha: %d is larger than %s allows on a %dx%d thread grid at %d x %d "
                 "(at most %d, the smallest thread block's side)",
                 o->alpha, o->kernel ? o->kernel : "async", prow, pcol, nx, ny, max_alpha);
    return HR_ERR_INVALID_ARG;
}

/* Thread tid's block; an empty one (n smaller than the thread grid) has bi or bj 0. */
static void block_of(const async_state *st, int tid, int *i0, int *bi, int *j0, int *bj)
{
    int lo, hi;
    hr_split_range(st->s->p.ny, st->prow, tid / st->pcol, &lo, &hi);
    *i0 = lo;
    *bi = hi - lo;
    hr_split_range(st->s->p.nx, st->pcol, tid % st->pcol, &lo, &hi);
    *j0 = lo;
    *bj = hi - lo;
}

static int block_used(const async_state *st, int r, int c)
{
    if (r < 0 || r >= st->prow || c < 0 || c >= st->pcol) return 0;
    const async_tile *t = &st->tiles[r * st->pcol + c];
    return t->bi > 0 && t->bj > 0;
}

static void *aligned_zero(size_t bytes, int hugepages)
{
    bytes = (bytes + HR_GRID_ALIGN - 1) / HR_GRID_ALIGN * HR_GRID_ALIGN;
    void *p = hri_alloc_big(HR_GRID_ALIGN, bytes, hugepages);
    if (p) memset(p, 0, bytes); /* first touch by the owning thread */
    return p;
}

/* Setup job: the band's first thread initialises the global rows of its band (first
 * touch), then every thread allocates and touches its own tiles. */
static void async_init_job(void *ctx, int tid, int nthreads)
{
    async_state *st = ctx;
    hr_solver *s = st->s;
    (void)nthreads;
    const int ny = s->p.ny, band = tid / st->pcol;
    if (tid % st->pcol == 0) {
        int lo, hi;
        hr_split_range(ny, st->prow, band, &lo, &hi);
        hri_solver_init_rows(s, band == 0 ? 0 : lo + 1, band == st->prow - 1 ? ny + 2 : hi + 1);
    }
    hri_team_barrier(st->team);
    async_tile *t = &st->tiles[tid];
    block_of(st, tid, &t->i0, &t->bi, &t->j0, &t->bj);
    t->status = HR_OK;
    if (t->bi == 0 || t->bj == 0) return;
    const size_t es = s->u[0].l.esize, a = HR_GRID_ALIGN / es;
    t->offset = a - 1; /* tile (ii, 1) on a 128-byte boundary */
    t->pitch = ((size_t)t->bj + 2 + a - 1) / a * a;
    const size_t bytes = (t->offset + ((size_t)t->bi + 2) * t->pitch) * es;
    const int ntiles = st->variant == HR_ASYNC3 ? 1 : 2;
    const int huge = hr_tune_on(s->o.tuning.hugepages, 0);
    for (int k = 0; k < ntiles; k++)
        if (!(t->mem[k] = aligned_zero(bytes, huge))) t->status = HR_ERR_NO_MEMORY;
    if (st->variant == HR_ASYNC3 && !(t->row = aligned_zero(((size_t)t->bj + 2) * es, huge)))
        t->status = HR_ERR_NO_MEMORY;
    if (s->hf.base) {
        if (!(t->hfmem = aligned_zero(bytes, huge))) {
            t->status = HR_ERR_NO_MEMORY;
            return;
        }
        const size_t gp = s->u[0].l.pitch;
        for (int i = 1; i <= t->bi; i++)
            memcpy((char *)t->hfmem + (t->offset + (size_t)i * t->pitch + 1) * es,
                   (const char *)hr_grid_origin(&s->hf) + (((size_t)t->i0 + i) * gp + (size_t)t->j0 + 1) * es,
                   (size_t)t->bj * es);
    }
}

static hr_async_view view_of(const async_state *st, int tid, int cur)
{
    const hr_solver *s = st->s;
    const async_tile *t = &st->tiles[tid];
    const size_t es = s->u[0].l.esize, gp = s->u[0].l.pitch;
    const size_t shift = ((size_t)t->i0 * gp + (size_t)t->j0) * es;
    const int r = tid / st->pcol, c = tid % st->pcol;
    hr_async_view v;
    memset(&v, 0, sizeof v);
    for (int k = 0; k < 2; k++)
        v.tile[k] = t->mem[k] ? (char *)t->mem[k] + t->offset * es : NULL;
    v.hf = t->hfmem ? (const char *)t->hfmem + t->offset * es : NULL;
    v.row = t->row;
    v.tp = t->pitch;
    v.gin = (char *)hr_grid_origin(&s->u[cur]) + shift;
    v.gout = (char *)hr_grid_origin(&s->u[1 - cur]) + shift;
    v.gp = gp;
    v.bi = t->bi;
    v.bj = t->bj;
    const hr_rhs_view rv = hri_solver_rhs_view(s);
    if (!rv.hf && rv.spike_i > t->i0 && rv.spike_i <= t->i0 + t->bi && rv.spike_j > t->j0 &&
        rv.spike_j <= t->j0 + t->bj) {
        v.si = rv.spike_i - t->i0;
        v.sj = rv.spike_j - t->j0;
    }
    v.has_n = block_used(st, r - 1, c);
    v.has_s = block_used(st, r + 1, c);
    v.has_w = block_used(st, r, c - 1);
    v.has_e = block_used(st, r, c + 1);
    return v;
}

static void wait_for_neighbours(async_state *st, int tid, long p)
{
    const int r = tid / st->pcol, c = tid % st->pcol;
    const int nb[4][2] = {{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}};
    for (int k = 0; k < 4; k++) {
        if (!block_used(st, nb[k][0], nb[k][1])) continue;
        const atomic_long *q = &st->progress[nb[k][0] * st->pcol + nb[k][1]].passes;
        while (atomic_load_explicit(q, memory_order_acquire) < p - HR_ASYNC3_SLACK)
            sched_yield();
    }
}

static void async_job(void *ctx, int tid, int nthreads)
{
    async_state *st = ctx;
    (void)nthreads;
    const int f64 = st->s->u[0].l.esize == 8, used = block_used(st, tid / st->pcol, tid % st->pcol);
    int cur = st->s->cur;
    long p = st->pass_base;
    for (long left = st->count; left > 0; p++) {
        const int k = left < st->pass ? (int)left : st->pass;
        if (used && st->variant == HR_ASYNC3) wait_for_neighbours(st, tid, p);
        if (used) {
            hr_async_view v = view_of(st, tid, cur);
            if (st->variant == HR_ASYNC3) {
                if (f64)
                    pass_inplace_f64(&v, k);
                else
                    pass_inplace_f32(&v, k);
            } else if (f64) {
                pass_tiles_f64(&v, st->variant, k);
            } else {
                pass_tiles_f32(&v, st->variant, k);
            }
        }
        left -= k;
        if (st->variant == HR_ASYNC3) { /* barrier-free, one grid */
            atomic_store_explicit(&st->progress[tid].passes, p + 1, memory_order_release);
            continue;
        }
        hri_team_barrier(st->team);
        cur = 1 - cur;
    }
}

static void async_teardown(hr_solver *s)
{
    async_state *st = s->impl;
    if (!st) return;
    hri_team_free(st->team);
    if (st->tiles)
        for (int i = 0; i < st->prow * st->pcol; i++) {
            free(st->tiles[i].mem[0]);
            free(st->tiles[i].mem[1]);
            free(st->tiles[i].hfmem);
            free(st->tiles[i].row);
        }
    free(st->tiles);
    free(st->progress);
    free(st);
    s->impl = NULL;
}

static hr_status async_setup(hr_solver *s, int variant)
{
    async_state *st = calloc(1, sizeof *st);
    if (!st) return HR_ERR_NO_MEMORY;
    s->impl = st;
    st->s = s;
    st->variant = variant;
    st->pass = hr_async_pass_sweeps(variant, s->o.alpha);
    hri_cpu_thread_grid(&s->o, &st->prow, &st->pcol);
    const int p = st->prow * st->pcol;
    st->tiles = calloc((size_t)p, sizeof *st->tiles);
    if (!st->tiles) return HR_ERR_NO_MEMORY;
    if (variant == HR_ASYNC3) {
        st->progress = aligned_alloc(64, (size_t)p * sizeof *st->progress);
        if (!st->progress) return HR_ERR_NO_MEMORY;
        for (int i = 0; i < p; i++)
            atomic_init(&st->progress[i].passes, 0);
    }
    HR_TRY(hri_cpu_open_team(s, st->prow, st->pcol, &st->team));
    s->cfg.threads = st->prow * st->pcol;
    s->cfg.thread_rows = st->prow;
    s->cfg.thread_cols = st->pcol;
    hri_team_run(st->team, async_init_job, st);
    for (int i = 0; i < p; i++)
        if (st->tiles[i].status != HR_OK) return st->tiles[i].status;
    return HR_OK;
}

static hr_status async_sweeps(hr_solver *s, long count)
{
    async_state *st = s->impl;
    if (count <= 0) return HR_OK;
    st->count = count;
    hri_team_run(st->team, async_job, st);
    const long passes = (count + st->pass - 1) / st->pass;
    if (st->variant == HR_ASYNC3) {
        st->pass_base += passes;
        s->syncs += 1; /* only the join at the end of the call */
        return HR_OK;
    }
    s->syncs += passes;
    if (passes % 2) s->cur = 1 - s->cur;
    return HR_OK;
}

/* async0..async3: the registry id is the variant. Not bitwise cpu-seq once alpha > 1 (alpha = 1
 * is, for async0-2). async2 is still reproducible for a fixed thread grid: nothing is exchanged
 * inside a pass. */
static hr_status setup_variant(hr_solver *s)
{
    return async_setup(s, s->k->id);
}

const hr_kernel_ops hri_kernel_async = {
    .setup = setup_variant,
    .sweeps = async_sweeps,
    .teardown = async_teardown,
    .check = async_check,
};
