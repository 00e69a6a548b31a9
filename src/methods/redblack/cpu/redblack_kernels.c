/*
 * The CPU red-black kernels (methods redblack and sor), all in place on s->u[s->cur]:
 *   rb-seq   (cpu-seq)     colour 0 then colour 1 over the interior, row by row: the reference.
 *   rb-tiles (cpu-threads) the red-black report's threaded version: per colour, tiles of th rows x tw
 *                          columns (default 4 x full width, its best shape) dealt to the threads
 *                          in contiguous runs, seed's 4 x 4 unrolled mini-tiles inside, one
 *                          barrier per colour. th = 0: no tiles, each thread sweeps its rows
 *                          plainly (the seed's untiled "all cores" version).
 *   rb-fused (cpu-threads) both colours in one pass (the CPU form of GPU rb-tuned): marching
 *                          down its slices (rows in 2-D, planes in 3-D), a thread updates
 *                          colour 0 of slice x, then colour 1 of slice x - 1, so each slice is
 *                          read from memory once per iteration; its first and last slice's
 *                          colour 1 wait for the neighbours behind a barrier.
 * All are bitwise equal to rb-seq for any thread count and tile shape: inside one colour the
 * order does not matter, and every colour-1 update runs after all colour-0 updates it reads.
 * The tile shape comes from the knob tuning.rb_tile (rows x columns; -1: untiled / full width).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/solver_internal.h"
#include "methods/redblack/cpu/redblack_cpu.h"
#include "runtime/cpu/cpu_team.h"

static hr_rb_args rb_args(hr_solver *s)
{
    hr_rb_args a = {&s->u[s->cur].l, hr_grid_origin(&s->u[s->cur]), hri_solver_rhs_view(s), s->p.omega};
    return a;
}

/* ------------------------------------------------------------------ rb-seq */

static hr_status rbseq_setup(hr_solver *s)
{
    hri_solver_init_rows(s, 0, hr_layout_outer(&s->u[0].l));
    return HR_OK;
}

static hr_status rbseq_sweeps(hr_solver *s, long count)
{
    const hr_rb_args a = rb_args(s);
    for (long t = 0; t < count; t++)
        hri_cpu_rb_iteration(&a);
    return HR_OK;
}

const hr_kernel_ops hri_kernel_rb_seq = {
    .setup = rbseq_setup,
    .sweeps = rbseq_sweeps,
};

/* --------------------------------------------------------- threaded kernels */

typedef struct rb_state {
    hr_solver *s;
    hr_team *team;
    int fused;  /* rb-fused, else rb-tiles */
    int th, tw; /* tile rows (0: untiled) and columns (full width when >= nx) */
    long count; /* iterations in the current job */
    int slices; /* interior outer slices: rows (2-D) or planes (3-D) */
} rb_state;

/* Outer slices [r0, r1) (with the ring) first-touched by the thread that sweeps them. */
static void rb_touch(void *ctx, int tid, int nthreads)
{
    rb_state *st = ctx;
    const int outer = hr_layout_outer(&st->s->u[0].l);
    int lo, hi;
    hr_split_range(outer, nthreads, tid, &lo, &hi);
    hri_solver_init_rows(st->s, lo, hi);
}

/* rb-tiles: work units are slabs (plane k, rows [i0, i0 + th)), dealt in contiguous runs. */
static void rb_tiles_job(void *ctx, int tid, int nthreads)
{
    rb_state *st = ctx;
    hr_solver *s = st->s;
    const hr_rb_args a = rb_args(s);
    const int ny = s->p.ny, nx = s->p.nx, three = s->p.dim == 3;
    const int th = st->th > 0 ? st->th : 1, tw = st->tw > 0 && st->tw < nx ? st->tw : nx;
    const int per_plane = (ny + th - 1) / th, slabs = per_plane * (three ? s->p.nz : 1);
    int lo, hi;
    hr_split_range(slabs, nthreads, tid, &lo, &hi);
    for (long t = 0; t < st->count; t++)
        for (int colour = 0; colour < 2; colour++) {
            for (int sl = lo; sl < hi; sl++) {
                const int k = three ? sl / per_plane + 1 : 0, i0 = (sl % per_plane) * th + 1;
                hr_box b = {{1, i0, k}, {1, i0 + th < ny + 1 ? i0 + th : ny + 1, k + 1}};
                for (int j0 = 1; j0 <= nx; j0 += tw) {
                    b.lo[0] = j0;
                    b.hi[0] = j0 + tw < nx + 1 ? j0 + tw : nx + 1;
                    if (st->th > 0)
                        hri_cpu_rb_box_unrolled(&a, &b, colour);
                    else
                        hri_cpu_rb_box(&a, &b, colour);
                }
            }
            hri_team_barrier(st->team);
        }
}

/* One colour of interior slice x (a row in 2-D, a plane in 3-D). */
static void rb_slice(const hr_rb_args *a, const hr_solver *s, int x, int colour)
{
    hr_box b = hr_box_interior(a->l);
    if (s->p.dim == 3) {
        b.lo[2] = x;
        b.hi[2] = x + 1;
    } else {
        b.lo[1] = x;
        b.hi[1] = x + 1;
    }
    hri_cpu_rb_box(a, &b, colour);
}

/* rb-fused: thread owns slices [x0, x1). Pass 1: colour 0 of x, then colour 1 of x - 1, for
 * x0 + 1 < x; the colour 1 of x0 and x1 - 1 (which read and are read by the neighbours'
 * colour 0) run after a barrier; a second barrier orders them before the next colour 0. */
static void rb_fused_job(void *ctx, int tid, int nthreads)
{
    rb_state *st = ctx;
    hr_solver *s = st->s;
    const hr_rb_args a = rb_args(s);
    int x0, x1;
    hr_split_range(st->slices, nthreads, tid, &x0, &x1);
    x0 += 1;
    x1 += 1;
    for (long t = 0; t < st->count; t++) {
        for (int x = x0; x < x1; x++) {
            rb_slice(&a, s, x, 0);
            if (x - 1 > x0) rb_slice(&a, s, x - 1, 1);
        }
        hri_team_barrier(st->team);
        if (x1 > x0) rb_slice(&a, s, x0, 1);
        if (x1 - 1 > x0) rb_slice(&a, s, x1 - 1, 1);
        hri_team_barrier(st->team);
    }
}

static hr_status rb_setup(hr_solver *s)
{
    rb_state *st = calloc(1, sizeof *st);
    if (!st) return HR_ERR_NO_MEMORY;
    st->s = s;
    st->fused = s->k->id == HR_RB_CPU_FUSED;
    st->th = 4;
    st->tw = 0;
    st->slices = s->p.dim == 3 ? s->p.nz : s->p.ny;
    const int *tile = s->o.tuning.rb_tile; /* 0: the default, -1: untiled / full width */
    snprintf(s->cfg.shape_source, sizeof s->cfg.shape_source, "%s", st->fused ? "" : "default");
    if ((tile[0] || tile[1]) && !st->fused) {
        if (tile[0]) st->th = tile[0] < 0 ? 0 : tile[0];
        if (tile[1]) st->tw = tile[1] < 0 ? 0 : tile[1];
        snprintf(s->cfg.shape_source, sizeof s->cfg.shape_source, "env");
    }
    int prow, pcol;
    hri_cpu_thread_grid(&s->o, &prow, &pcol);
    hr_status rc = hri_cpu_open_team(s, prow * pcol, 1, &st->team);
    if (rc != HR_OK) {
        free(st);
        return rc;
    }
    s->impl = st;
    s->cfg.threads = prow * pcol;
    s->cfg.thread_rows = prow * pcol;
    s->cfg.thread_cols = 1;
    if (!st->fused) {
        s->cfg.shape[0] = st->tw > 0 && st->tw < s->p.nx ? st->tw : s->p.nx;
        s->cfg.shape[1] = st->th;
        s->cfg.shape[2] = 1;
    }
    hri_team_run(st->team, rb_touch, st);
    return HR_OK;
}

static hr_status rb_sweeps(hr_solver *s, long count)
{
    rb_state *st = s->impl;
    st->count = count;
    hri_team_run(st->team, st->fused ? rb_fused_job : rb_tiles_job, st);
    s->syncs += count * 2;
    return HR_OK;
}

static void rb_teardown(hr_solver *s)
{
    rb_state *st = s->impl;
    if (!st) return;
    hri_team_free(st->team);
    free(st);
    s->impl = NULL;
}

/* rb-tiles and rb-fused (registry ids HR_RB_CPU_TILES, HR_RB_CPU_FUSED) */
const hr_kernel_ops hri_kernel_rb_threads = {
    .setup = rb_setup,
    .sweeps = rb_sweeps,
    .teardown = rb_teardown,
};
