/*
 * cpu-threads, 3-D: pencil cache blocking (Sourouri et al., section III-A; reading of the NOTES:
 * block y, keep full x rows, stream along z) with streaming stores, on a persistent team.
 *
 * The threads form a py x pz grid over (rows, planes); thread (ty, tz) owns the box of
 * rows [y0, y1) x planes [z0, z1) with full x rows, first-touches exactly those rows of
 * u, u' and f (so the pages live where they are swept), and every sweep updates its box as
 * pencils of `by` rows, each streamed along its planes: a pencil's three planes stay in L2
 * and each input word is read from memory once, plus two halo rows per pencil and two halo
 * planes per box. One barrier per sweep. Every point is the same region-sweep update as
 * cpu-seq, so the result is bitwise equal for any thread count, partition and pencil.
 */
#include "methods/jacobi/cpu/jacobi3d_pencil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/jacobi/cpu/stencil_box_stream.h"
#include "reference/stencil_cpu.h"
#include "runtime/cpu/cpu_team.h"

typedef struct pencil_state {
    hr_team *team;
    int py, pz;  /* thread grid: row parts x plane parts */
    int by;      /* rows per pencil */
    int stream;  /* streaming stores of the new grid */
    long count;  /* sweeps in the current job */
    int init_lo; /* planes being initialised by the init job: split over the threads */
    hr_solver *s;
} pencil_state;

/* Rows [*y0, *y1) and planes [*z0, *z1) (interior, 0-based) of thread tid. */
static void thread_box(const pencil_state *st, int tid, int *y0, int *y1, int *z0, int *z1)
{
    hr_split_range(st->s->p.ny, st->py, tid % st->py, y0, y1);
    hr_split_range(st->s->p.nz, st->pz, tid / st->py, z0, z1);
}

/* First touch: each thread zeroes its own rows (the ring goes to the edge threads), so the
 * kernel's later accesses hit pages placed by the thread that sweeps them. */
static void pencil_touch(void *ctx, int tid, int nthreads)
{
    pencil_state *st = ctx;
    hr_solver *s = st->s;
    (void)nthreads;
    int y0, y1, z0, z1;
    thread_box(st, tid, &y0, &y1, &z0, &z1);
    if (y0 >= y1 || z0 >= z1) return;
    const int ty = tid % st->py, tz = tid / st->py;
    const int ylo = ty == 0 ? 0 : y0 + 1, yhi = ty == st->py - 1 ? s->p.ny + 2 : y1 + 1;
    const int zlo = tz == 0 ? 0 : z0 + 1, zhi = tz == st->pz - 1 ? s->p.nz + 2 : z1 + 1;
    hr_grid *g[3] = {&s->u[0], &s->u[1], s->hf.base ? &s->hf : NULL};
    for (int a = 0; a < 3 && g[a]; a++) {
        const hr_grid_layout *l = &g[a]->l;
        char *o = hr_grid_origin(g[a]);
        for (int k = zlo; k < zhi; k++)
            memset(o + ((size_t)k * l->plane + (size_t)ylo * l->pitch) * l->esize, 0,
                   (size_t)(yhi - ylo) * l->pitch * l->esize);
    }
}

/* Initial values, planes split over all threads (the pages are placed already). */
static void pencil_init(void *ctx, int tid, int nthreads)
{
    pencil_state *st = ctx;
    int lo, hi;
    hr_split_range(st->s->p.nz + 2, nthreads, tid, &lo, &hi);
    if (lo < hi) hri_solver_init_rows(st->s, lo, hi);
}

static void pencil_job(void *ctx, int tid, int nthreads)
{
    pencil_state *st = ctx;
    hr_solver *s = st->s;
    (void)nthreads;
    int y0, y1, z0, z1;
    thread_box(st, tid, &y0, &y1, &z0, &z1);
    const int active = y0 < y1 && z0 < z1, by = st->by, stream = st->stream;
    const void *in = hr_grid_origin(&s->u[s->cur]);
    void *out = hr_grid_origin(&s->u[1 - s->cur]);
    hr_sweep_args a = {
        &s->u[0].l, NULL, NULL, hri_solver_rhs_view(s), {{1, 0, z0 + 1}, {s->p.nx + 1, 0, z1 + 1}},
        s->p.omega};
    for (long t = 0; t < st->count; t++) {
        a.in = in;
        a.out = out;
        for (int yb = y0; active && yb < y1; yb += by) {
            a.box.lo[1] = yb + 1;
            a.box.hi[1] = (yb + by < y1 ? yb + by : y1) + 1;
            if (stream)
                hri_cpu_sweep_box_stream(&a); /* ends with a store fence */
            else
                hri_cpu_sweep_box(&a);
        }
        hri_team_barrier(st->team);
        const void *tmp = in;
        in = out;
        out = (void *)tmp;
    }
}

/* The thread grid py x pz (py * pz = P) that minimises the words a thread reads per sweep,
 * counted in rows: (its rows + 2 halo rows per pencil) x (its planes + 2 halo planes). */
static void choose_grid(int P, int ny, int nz, int by, int *py, int *pz)
{
    double best = -1.0;
    for (int y = 1; y <= P; y++) {
        if (P % y) continue;
        const int z = P / y;
        const long ry = (ny + y - 1) / y, rz = (nz + z - 1) / z;
        const long b = by < ry ? by : ry;
        const double cost = (double)(ry + 2 * ((ry + b - 1) / b)) * (double)(rz + 2);
        if (best < 0.0 || cost < best || (cost == best && y > *py)) {
            best = cost;
            *py = y;
            *pz = z;
        }
    }
}

void hri_pencil_default_choice(const hr_grid_layout *l, int rows, int grids, int threads, int *by, int *stream)
{
    size_t l2 = hri_cache_l2_bytes(), llc = hri_cache_llc_share(threads);
    if (l2 == 0) l2 = (size_t)1 << 20;
    /* the three input planes of a pencil in half the L2 (the rest: output lines, f, prefetches);
     * on the quiet 2-core VM 128-row pencils beat 32 and 8 rows by 5-7% in double (docs/cpu.md) */
    const size_t row = l->pitch * l->esize;
    long b = (long)(l2 / 2 / (3 * row)) - 2;
    if (b < 1) b = 1;
    if (rows > 0 && b > rows) b = rows;
    *by = (int)b;
    *stream = (size_t)grids * hr_layout_bytes(l) > llc;
}

static void set_config(hr_solver *s, const pencil_state *st, const char *source)
{
    int y0, y1, z0, z1;
    thread_box(st, 0, &y0, &y1, &z0, &z1);
    s->cfg.threads = st->py * st->pz;
    s->cfg.thread_rows = st->py;
    s->cfg.thread_cols = st->pz;
    s->cfg.shape[0] = s->p.nx;
    s->cfg.shape[1] = st->by;
    s->cfg.shape[2] = z1 - z0;
    snprintf(s->cfg.shape_source, sizeof s->cfg.shape_source, "%s%s", source, st->stream ? "+nt" : "");
}

hr_status hri_pencil_apply(hr_solver *s, int by, int stream)
{
    if (s->k->kernel != &hri_kernel_pencil || !s->impl || by < 1) return HR_ERR_INVALID_ARG;
    pencil_state *st = s->impl;
    st->by = by;
    st->stream = stream != 0;
    set_config(s, st, "candidate");
    return HR_OK;
}

/* tuning.cpu_block (with cpu_block_stream) overrides the cache and the default;
 * tuning.cpu_stream only the store kind. */
static int knob_choice(const hr_tuning *t, int *by, int *stream)
{
    int found = 0;
    if (t->cpu_block > 0) {
        *by = t->cpu_block;
        found = 1;
        if (t->cpu_block_stream) *stream = t->cpu_block_stream > 0;
    }
    if (t->cpu_stream) {
        *stream = t->cpu_stream > 0;
        found = 1;
    }
    return found;
}

static hr_status pencil_setup(hr_solver *s)
{
    pencil_state *st = calloc(1, sizeof *st);
    if (!st) return HR_ERR_NO_MEMORY;
    st->s = s;
    const hr_grid_layout *l = &s->u[0].l;
    const int P = s->o.thread_rows > 0 && s->o.thread_cols > 0 ? s->o.thread_rows * s->o.thread_cols
                  : s->o.threads > 0                           ? s->o.threads
                                                               : hri_cpu_count();
    int by, stream;
    const int grids = s->hf.base ? 3 : 2;
    hri_pencil_default_choice(l, 0, grids, P, &by, &stream);
    if (s->o.thread_rows > 0 && s->o.thread_cols > 0) {
        st->py = s->o.thread_rows;
        st->pz = s->o.thread_cols;
    } else {
        choose_grid(P, s->p.ny, s->p.nz, by, &st->py, &st->pz);
    }
    const int rows = (s->p.ny + st->py - 1) / st->py;
    hri_pencil_default_choice(l, rows, grids, P, &st->by, &st->stream);
    const char *source = "default";
    char key[160];
    hri_cpu_tune_key(P, key, sizeof key);
    by = st->by;
    stream = st->stream;
    if (knob_choice(&s->o.tuning, &by, &stream)) {
        source = "env";
    } else if (hri_cpu_cache_lookup(&s->o.tuning, key, "pencil", l->esize == 8, hri_cpu_tune_size(l), &by,
                                   &stream)) {
        source = "cache";
    }
    st->by = by;
    st->stream = stream;
    if (st->by > rows) st->by = rows > 0 ? rows : 1;
    hr_status rc = hri_cpu_open_team(s, st->py, st->pz, &st->team);
    if (rc != HR_OK) {
        free(st);
        return rc;
    }
    s->impl = st;
    set_config(s, st, source);
    hri_team_run(st->team, pencil_touch, st);
    hri_team_run(st->team, pencil_init, st);
    return HR_OK;
}

static hr_status pencil_sweeps(hr_solver *s, long count)
{
    pencil_state *st = s->impl;
    st->count = count;
    hri_team_run(st->team, pencil_job, st);
    if (count % 2) s->cur = 1 - s->cur;
    return HR_OK;
}

static void pencil_teardown(hr_solver *s)
{
    pencil_state *st = s->impl;
    if (!st) return;
    hri_team_free(st->team);
    free(st);
    s->impl = NULL;
}

const hr_kernel_ops hri_kernel_pencil = {
    .setup = pencil_setup,
    .sweeps = pencil_sweeps,
    .teardown = pencil_teardown,
};
