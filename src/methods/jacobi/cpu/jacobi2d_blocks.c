/*
 * cpu-threads, blocks layout: the NUMA variant of Venkatasubramanian & Vuduc section 3.1. Every thread
 * owns private tiles (its block plus a one-point ghost ring, current and next),
 * allocated and first-touched by itself. One sweep is:
 *   compute my next tile from my current tile (ghosts included);  barrier;
 *   push my next tile's edge rows/columns into my neighbours' next-tile ghosts;  barrier.
 * The second barrier is the paper's extra one: no thread may read its ghosts before
 * every neighbour has written them.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/solver_internal.h"
#include "core/tuning.h"
#include "runtime/cpu/cpu_team.h"
#include "runtime/cpu/sysmem.h"

typedef struct tile {
    int i0, j0;    /* global position of local interior point (1, 1) is (i0+1, j0+1) */
    int bi, bj;    /* interior rows and columns of the tile */
    size_t pitch;  /* elements per tile row */
    void *mem[2];  /* aligned allocations: current / next */
    void *hfmem;   /* h^2 f block or NULL */
    size_t offset; /* elements from mem to local (0, 0) */
    hr_status status;
} tile;

typedef struct blocks_state {
    hr_team *team;
    int prow, pcol;
    tile *tiles;
    int cur; /* which of mem[] is current, same for every tile */
    long count;
    hr_solver *s;
} blocks_state;

static void *tile_origin(const tile *t, void *m, size_t esize)
{
    return (char *)m + t->offset * esize;
}

static tile *tile_at(blocks_state *st, int r, int c)
{
    if (r < 0 || r >= st->prow || c < 0 || c >= st->pcol) return NULL;
    tile *t = &st->tiles[r * st->pcol + c];
    return (t->bi > 0 && t->bj > 0) ? t : NULL;
}

/* Copies a rows x cols rectangle between two strided arrays of esize elements. */
static void copy_rect(void *dst, size_t dpitch, const void *src, size_t spitch, int rows, int cols,
                      size_t esize)
{
    for (int r = 0; r < rows; r++)
        memcpy((char *)dst + (size_t)r * dpitch * esize, (const char *)src + (size_t)r * spitch * esize,
               (size_t)cols * esize);
}

static void blocks_alloc(void *ctx, int tid, int nthreads)
{
    blocks_state *st = ctx;
    hr_solver *s = st->s;
    (void)nthreads;
    tile *t = &st->tiles[tid];
    const size_t es = s->u[0].l.esize, a = HR_GRID_ALIGN / es;
    int lo, hi;
    hr_split_range(s->p.ny, st->prow, tid / st->pcol, &lo, &hi);
    t->i0 = lo;
    t->bi = hi - lo;
    hr_split_range(s->p.nx, st->pcol, tid % st->pcol, &lo, &hi);
    t->j0 = lo;
    t->bj = hi - lo;
    t->offset = a - 1;
    t->pitch = ((size_t)t->bj + 2 + a - 1) / a * a;
    size_t bytes = (t->offset + ((size_t)t->bi + 2) * t->pitch) * es;
    bytes = (bytes + HR_GRID_ALIGN - 1) / HR_GRID_ALIGN * HR_GRID_ALIGN;
    t->status = HR_OK;
    const int huge = hr_tune_on(s->o.tuning.hugepages, 0);
    for (int k = 0; k < 2; k++) {
        t->mem[k] = hri_alloc_big(HR_GRID_ALIGN, bytes, huge);
        if (!t->mem[k]) t->status = HR_ERR_NO_MEMORY;
    }
    if (s->hf.base) {
        t->hfmem = hri_alloc_big(HR_GRID_ALIGN, bytes, huge);
        if (!t->hfmem) t->status = HR_ERR_NO_MEMORY;
    }
    if (t->status != HR_OK) return;
    /* first touch: copy the block and its ring from the global grids */
    const size_t gp = s->u[0].l.pitch;
    const char *g = (const char *)hr_grid_origin(&s->u[s->cur]) + ((size_t)t->i0 * gp + (size_t)t->j0) * es;
    for (int k = 0; k < 2; k++) {
        memset(t->mem[k], 0, bytes);
        copy_rect(tile_origin(t, t->mem[k], es), t->pitch, g, gp, t->bi + 2, t->bj + 2, es);
    }
    if (t->hfmem) {
        memset(t->hfmem, 0, bytes);
        const char *f = (const char *)hr_grid_origin(&s->hf) + ((size_t)t->i0 * gp + (size_t)t->j0) * es;
        copy_rect(tile_origin(t, t->hfmem, es), t->pitch, f, gp, t->bi + 2, t->bj + 2, es);
    }
}

/* Pushes the edges of my next tile into the ghost cells of my neighbours' next tiles. */
static void push_edges(blocks_state *st, int r, int c, int nxt, size_t es)
{
    tile *me = tile_at(st, r, c);
    if (!me) return;
    char *mine = tile_origin(me, me->mem[nxt], es);
    const size_t p = me->pitch;
    tile *nb;
    if ((nb = tile_at(st, r - 1, c))) /* my first row -> north's bottom ghost row */
        memcpy((char *)tile_origin(nb, nb->mem[nxt], es) + ((size_t)(nb->bi + 1) * nb->pitch + 1) * es,
               mine + (p + 1) * es, (size_t)me->bj * es);
    if ((nb = tile_at(st, r + 1, c))) /* my last row -> south's top ghost row */
        memcpy((char *)tile_origin(nb, nb->mem[nxt], es) + es, mine + ((size_t)me->bi * p + 1) * es,
               (size_t)me->bj * es);
    if ((nb = tile_at(st, r, c - 1))) /* my first column -> west's right ghost column */
        copy_rect((char *)tile_origin(nb, nb->mem[nxt], es) + (nb->pitch + (size_t)nb->bj + 1) * es,
                  nb->pitch, mine + (p + 1) * es, p, me->bi, 1, es);
    if ((nb = tile_at(st, r, c + 1))) /* my last column -> east's left ghost column */
        copy_rect((char *)tile_origin(nb, nb->mem[nxt], es) + nb->pitch * es, nb->pitch,
                  mine + (p + (size_t)me->bj) * es, p, me->bi, 1, es);
}

static void blocks_job(void *ctx, int tid, int nthreads)
{
    blocks_state *st = ctx;
    hr_solver *s = st->s;
    (void)nthreads;
    const size_t es = s->u[0].l.esize;
    const int r = tid / st->pcol, c = tid % st->pcol;
    tile *t = tile_at(st, r, c);
    hr_rhs_view rhs = hri_solver_rhs_view(s);
    if (t) {
        if (t->hfmem) rhs.hf = tile_origin(t, t->hfmem, es);
        rhs.spike_i -= t->i0; /* spike in tile coordinates */
        rhs.spike_j -= t->j0;
    }
    int cur = st->cur;
    for (long k = 0; k < st->count; k++) {
        if (t)
            hr_cpu_sweep(es, tile_origin(t, t->mem[cur], es), tile_origin(t, t->mem[1 - cur], es), rhs,
                         t->pitch, 1, t->bi + 1, 1, t->bj + 1);
        hri_team_barrier(st->team);
        push_edges(st, r, c, 1 - cur, es);
        hri_team_barrier(st->team);
        cur = 1 - cur;
    }
}

static hr_status blocks_setup(hr_solver *s)
{
    blocks_state *st = calloc(1, sizeof *st);
    if (!st) return HR_ERR_NO_MEMORY;
    s->impl = st;
    st->s = s;
    hri_cpu_thread_grid(&s->o, &st->prow, &st->pcol);
    const int p = st->prow * st->pcol;
    st->tiles = calloc((size_t)p, sizeof *st->tiles);
    if (!st->tiles) return HR_ERR_NO_MEMORY;
    HR_TRY(hri_cpu_open_team(s, st->prow, st->pcol, &st->team));
    s->cfg.threads = p;
    s->cfg.thread_rows = st->prow;
    s->cfg.thread_cols = st->pcol;
    hri_solver_init_rows(s, 0, s->p.ny + 2); /* the global grid holds the boundary and the output */
    hri_team_run(st->team, blocks_alloc, st);
    for (int i = 0; i < p; i++)
        if (st->tiles[i].status != HR_OK) return st->tiles[i].status;
    return HR_OK;
}

static hr_status blocks_sweeps(hr_solver *s, long count)
{
    blocks_state *st = s->impl;
    st->count = count;
    hri_team_run(st->team, blocks_job, st);
    if (count % 2) st->cur = 1 - st->cur;
    return HR_OK;
}

static hr_status blocks_sync_host(hr_solver *s)
{
    blocks_state *st = s->impl;
    const size_t es = s->u[0].l.esize, gp = s->u[0].l.pitch;
    for (int i = 0; i < st->prow * st->pcol; i++) {
        tile *t = &st->tiles[i];
        if (t->bi == 0 || t->bj == 0) continue;
        char *g = (char *)hr_grid_origin(&s->u[s->cur]) + (((size_t)t->i0 + 1) * gp + (size_t)t->j0 + 1) * es;
        copy_rect(g, gp, (char *)tile_origin(t, t->mem[st->cur], es) + (t->pitch + 1) * es, t->pitch, t->bi,
                  t->bj, es);
    }
    return HR_OK;
}

static void blocks_teardown(hr_solver *s)
{
    blocks_state *st = s->impl;
    if (!st) return;
    hri_team_free(st->team);
    if (st->tiles)
        for (int i = 0; i < st->prow * st->pcol; i++) {
            free(st->tiles[i].mem[0]);
            free(st->tiles[i].mem[1]);
            free(st->tiles[i].hfmem);
        }
    free(st->tiles);
    free(st);
    s->impl = NULL;
}

const hr_kernel_ops hri_kernel_blocks = {
    .setup = blocks_setup,
    .sweeps = blocks_sweeps,
    .sync_host = blocks_sync_host,
    .teardown = blocks_teardown,
};
