/*
 * The CPU placement: the part's grids in its subdomain layout, swept by crews of
 * threads with the region sweep (hri_cpu_sweep_box). Two crews (nested, Sourouri et al.
 * listing 3): a small one for the boundary rows and a large one for the interior,
 * running at the same time; or one crew (naive, listing 2) for both in turn.
 * Copies (get/put) are plain memcpy on the calling thread after the lane's sweep.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tuning.h"
#include "parallel/hybrid/place.h"
#include "reference/stencil_cpu.h"
#include "runtime/cpu/crew.h"
#include "runtime/cpu/sysmem.h"

typedef struct cpu_place cpu_place;

typedef struct cpu_job {
    const cpu_place *cp;
    const void *in;
    void *out;
    hr_box box;
    int axis; /* the box is cut into pieces along this axis */
} cpu_job;

struct cpu_place {
    const hr_place_spec *sp;
    hr_grid u[2], hf;
    int cur;
    hr_rhs_view rhs;
    hr_crew *crew[2]; /* per lane; the same crew twice for the naive schedule */
    cpu_job job[2];
    int pieces; /* per worker (tuning.crew_pieces, 1..64, default 4) */
};

/* The axis a crew of n cuts box b along: y when the box has rows enough (pencils along y,
 * Sourouri et al. III-A), else z, else the longest (one boundary row: along x). */
static int cut_axis(const hr_box *b, int n)
{
    static const int order[3] = {1, 2, 0};
    for (int q = 0; q < 3; q++)
        if (b->hi[order[q]] - b->lo[order[q]] >= n) return order[q];
    int axis = 0;
    for (int a = 1; a < 3; a++)
        if (b->hi[a] - b->lo[a] > b->hi[axis] - b->lo[axis]) axis = a;
    return axis;
}

/* Piece `piece` of `pieces` of the box: a slab along the job's axis (a worker's own pieces are
 * neighbours, so the part it sweeps every sweep stays the same unless it takes others'). */
static void sweep_job(void *ctx, int piece, int pieces)
{
    const cpu_job *j = ctx;
    hr_box b = j->box;
    int lo, hi;
    hr_split_range(b.hi[j->axis] - b.lo[j->axis], pieces, piece, &lo, &hi);
    b.hi[j->axis] = b.lo[j->axis] + hi;
    b.lo[j->axis] += lo;
    if (hr_box_empty(&b)) return;
    const hr_sweep_args a = {&j->cp->sp->sd.l, j->in, j->out, j->cp->rhs, b, j->cp->sp->omega};
    hri_cpu_sweep_box(&a);
}

static cpu_place *CP(hr_place *p)
{
    return p->impl;
}

/* The own box limited to rows [r0, r1) along the split axis. */
static hr_box rows_box(const hr_place_spec *sp, int r0, int r1)
{
    hr_box b = hr_box_interior(&sp->sd.l);
    b.lo[sp->axis] = r0;
    b.hi[sp->axis] = r1;
    return b;
}

static hr_status cpu_sweep(hr_place *p, int lane, int r0, int r1)
{
    cpu_place *c = CP(p);
    if (r1 <= r0) return HR_OK;
    hr_crew *crew = c->crew[lane];
    hri_crew_wait(crew); /* its job slot is reused */
    cpu_job *j = &c->job[lane];
    j->cp = c;
    j->in = hr_grid_origin(&c->u[c->cur]);
    j->out = hr_grid_origin(&c->u[1 - c->cur]);
    j->box = rows_box(&p->spec, r0, r1);
    j->axis = cut_axis(&j->box, hri_crew_size(crew));
    hri_crew_start(crew, sweep_job, j, c->pieces);
    return HR_OK;
}

static char *row_ptr(cpu_place *c, int which, int r)
{
    const hr_grid *g = &c->u[which ? 1 - c->cur : c->cur];
    return (char *)hr_grid_origin(g) + hr_place_row_offset(c->sp, r) * c->sp->esize;
}

static hr_status cpu_get(hr_place *p, int lane, int which, int r0, int r1, void *buf)
{
    cpu_place *c = CP(p);
    hri_crew_wait(c->crew[lane]);
    memcpy(buf, row_ptr(c, which, r0), hr_place_rows_bytes(&p->spec, r0, r1));
    return HR_OK;
}

static hr_status cpu_put(hr_place *p, int lane, int which, int r0, int r1, const void *buf)
{
    cpu_place *c = CP(p);
    hri_crew_wait(c->crew[lane]);
    memcpy(row_ptr(c, which, r0), buf, hr_place_rows_bytes(&p->spec, r0, r1));
    return HR_OK;
}

static hr_status cpu_wait(hr_place *p, int lane)
{
    hri_crew_wait(CP(p)->crew[lane]);
    return HR_OK;
}

static hr_status cpu_order(hr_place *p)
{
    hri_crew_wait(CP(p)->crew[0]);
    hri_crew_wait(CP(p)->crew[1]);
    return HR_OK;
}

static void cpu_swap(hr_place *p)
{
    CP(p)->cur ^= 1;
}

/* Local row r <-> global row: the same rows of the same width and pitch. */
static size_t global_row_offset(const hr_place_spec *sp, const hr_grid *global, int r)
{
    const int gr = hr_subdomain_global(&sp->sd, sp->axis, r);
    return (size_t)(gr - sp->row0) * hr_layout_outer_stride(&global->l);
}

static void load_grid(const hr_place_spec *sp, hr_grid *dst, const hr_grid *src)
{
    const int rows = hr_layout_outer(&sp->sd.l);
    if (!src) {
        memset(dst->base, 0, hr_layout_bytes(&dst->l));
        return;
    }
    const size_t es = sp->esize, stride = hr_layout_outer_stride(&sp->sd.l);
    for (int r = 0; r < rows; r++)
        memcpy((char *)hr_grid_origin(dst) + (size_t)r * stride * es,
               (const char *)hr_grid_origin(src) + global_row_offset(sp, src, r) * es, stride * es);
}

static hr_status cpu_load(hr_place *p, const hr_grid *u, const hr_grid *hf)
{
    cpu_place *c = CP(p);
    cpu_order(p);
    c->cur = 0;
    load_grid(&p->spec, &c->u[0], u);
    load_grid(&p->spec, &c->u[1], u);
    if (c->hf.base) load_grid(&p->spec, &c->hf, hf);
    return HR_OK;
}

static hr_status cpu_download(hr_place *p, hr_grid *global)
{
    cpu_place *c = CP(p);
    cpu_order(p);
    const hr_place_spec *sp = &p->spec;
    const int r0 = sp->sd.own.lo[sp->axis], r1 = sp->sd.own.hi[sp->axis];
    const size_t es = sp->esize;
    memcpy((char *)hr_grid_origin(global) + global_row_offset(sp, global, r0) * es, row_ptr(c, 0, r0),
           hr_place_rows_bytes(sp, r0, r1));
    return HR_OK;
}

static hr_status cpu_residual(hr_place *p, hr_grid *scratch, hr_norm2 *r, hr_norm2 *b)
{
    (void)scratch;
    cpu_place *c = CP(p);
    cpu_order(p);
    const hr_resid_args a = {
        &p->spec.sd.l, hr_grid_origin(&c->u[c->cur]), c->rhs, p->spec.sd.own, p->spec.sd.dirichlet, NULL,
        NULL};
    hri_cpu_residual_box(&a, r, b);
    return HR_OK;
}

static void *cpu_host_alloc(hr_place *p, size_t bytes)
{
    return hri_alloc_big(128, bytes, hr_tune_on(p->spec.tune.hugepages, 0));
}

static void cpu_host_free(hr_place *p, void *buf)
{
    (void)p;
    free(buf);
}

static void cpu_destroy(hr_place *p)
{
    if (!p) return;
    cpu_place *c = CP(p);
    if (c) {
        if (c->crew[1] != c->crew[0]) hri_crew_free(c->crew[1]);
        hri_crew_free(c->crew[0]);
        hri_grid_free(&c->u[0]);
        hri_grid_free(&c->u[1]);
        hri_grid_free(&c->hf);
        free(c);
    }
    free(p);
}

/* Direct copies between CPU parts (memcpy from the neighbour's grid, no send buffer):
 * only with tuning.cpu_pull on, so CI runs the engine's direct-copy schedule (the one
 * GPUs with peer access use) without a GPU. */
static int cpu_link(hr_place *p, hr_place *other, char *why, size_t why_size)
{
    (void)other;
    if (p->spec.tune.cpu_pull > 0) return HR_LINK_DEVICE;
    snprintf(why, why_size, "CPU parts");
    return HR_LINK_HOST;
}

static hr_status cpu_mark(hr_place *p)
{
    (void)p;
    return HR_OK;
}

/* Blocking: both parts' boundary work is done first, so no fence is needed. */
static hr_status cpu_pull(hr_place *p, int which, int r0, int r1, hr_place *src, int s0, int fence)
{
    (void)fence;
    hri_crew_wait(CP(src)->crew[0]);
    hri_crew_wait(CP(p)->crew[0]);
    memcpy(row_ptr(CP(p), which, r0), row_ptr(CP(src), which, s0), hr_place_rows_bytes(&p->spec, r0, r1));
    return HR_OK;
}

static void *cpu_host_rows(hr_place *p, int which, int r)
{
    return row_ptr(CP(p), which, r);
}

static const hr_place_ops cpu_ops = {
    "cpu",        cpu_sweep,    cpu_get,        cpu_put,       cpu_wait,    cpu_order,     cpu_swap, cpu_load,
    cpu_download, cpu_residual, cpu_host_alloc, cpu_host_free, cpu_destroy, NULL,          cpu_link, cpu_mark,
    cpu_pull,     NULL,         NULL,           NULL,          NULL,        cpu_host_rows, NULL};

hr_status hri_place_cpu_create(const hr_place_spec *spec, hr_place **out)
{
    *out = NULL;
    hr_place *p = calloc(1, sizeof *p);
    cpu_place *c = p ? calloc(1, sizeof *c) : NULL;
    if (!c) {
        free(p);
        return HR_ERR_NO_MEMORY;
    }
    p->ops = &cpu_ops;
    p->spec = *spec;
    p->impl = c;
    c->sp = &p->spec;
    c->pieces = spec->tune.crew_pieces > 0 ? (spec->tune.crew_pieces < 64 ? spec->tune.crew_pieces : 64)
                                           : 4; /* 1..64 */
    const int huge = hr_tune_on(spec->tune.hugepages, 0);
    hr_status st = hri_grid_alloc_huge(&c->u[0], &spec->sd.l, huge);
    if (st == HR_OK) st = hri_grid_alloc_huge(&c->u[1], &spec->sd.l, huge);
    if (st == HR_OK && spec->has_hf) st = hri_grid_alloc_huge(&c->hf, &spec->sd.l, huge);
    c->rhs = spec->spike;
    if (c->hf.base) c->rhs = (hr_rhs_view){hr_grid_origin(&c->hf), -1, -1, -1};
    const int nested = spec->boundary_threads > 0;
    /* pinned: the boundary crew first (slots pin_slot..), then the interior crew */
    const int pin = spec->pin_slot > 0 ? spec->pin_slot : -1, b = nested ? spec->boundary_threads : 0;
    if (st == HR_OK)
        st = hri_crew_create(spec->threads > 0 ? spec->threads : 1, pin < 0 ? -1 : pin + b, &spec->tune,
                            &c->crew[1]);
    if (st == HR_OK && nested) st = hri_crew_create(spec->boundary_threads, pin, &spec->tune, &c->crew[0]);
    if (st == HR_OK && nested) hri_crew_share(c->crew[0], c->crew[1]);
    if (st == HR_OK && !nested) c->crew[0] = c->crew[1];
    if (st != HR_OK) {
        cpu_destroy(p);
        return st;
    }
    const int pinned = hri_crew_pinned(c->crew[1]) && hri_crew_pinned(c->crew[0]);
    if (nested)
        snprintf(p->desc, sizeof p->desc, "cpu %d+%d threads%s", spec->boundary_threads,
                 hri_crew_size(c->crew[1]), pinned ? ", pinned" : "");
    else
        snprintf(p->desc, sizeof p->desc, "cpu %d threads%s", hri_crew_size(c->crew[1]),
                 pinned ? ", pinned" : "");
    *out = p;
    return HR_OK;
}
