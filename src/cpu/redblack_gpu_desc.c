/*
 * The GPU red-black kernels as solver kernels (issue 13): the glue between the solver
 * (hr_solver, host grids, the driver) and the self-contained CUDA file behind
 * src/cuda/redblack_gpu.h. C, so that it does not depend on the CUDA sources' internal
 * headers. The device holds the one grid; the host copy is refreshed on sync_host (residual
 * checks, the end of a run) and pushed back on upload (restarts). HETRELAX_RB_GPU_SHAPE =
 * "BXxBY" overrides the block (tuned: BX threads = 2 BX columns, BY rows per tile). rb-2gpu
 * runs on devices --device and --device + 1.
 */
#ifdef HR_HAVE_CUDA
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "cuda/redblack_gpu.h"
#include "solver/solver_internal.h"

/* One GPU (hr_gpu_rb_*) or two (hr_gpu_rb2_*) behind the same four calls. */
typedef struct rb_ops {
    hr_status (*iterations)(void *g, long count, char *err, size_t n);
    hr_status (*download)(void *g, void *u, double *t, char *err, size_t n);
    hr_status (*upload)(void *g, const void *u, double *t, char *err, size_t n);
    void (*release)(void *g);
} rb_ops;

static hr_status one_it(void *g, long c, char *e, size_t n)
{
    return hr_gpu_rb_iterations(g, c, e, n);
}
static hr_status one_down(void *g, void *u, double *t, char *e, size_t n)
{
    return hr_gpu_rb_download(g, u, t, e, n);
}
static hr_status one_up(void *g, const void *u, double *t, char *e, size_t n)
{
    return hr_gpu_rb_upload(g, u, t, e, n);
}
static void one_free(void *g)
{
    hr_gpu_rb_free(g);
}
static hr_status two_it(void *g, long c, char *e, size_t n)
{
    return hr_gpu_rb2_iterations(g, c, e, n);
}
static hr_status two_down(void *g, void *u, double *t, char *e, size_t n)
{
    return hr_gpu_rb2_download(g, u, t, e, n);
}
static hr_status two_up(void *g, const void *u, double *t, char *e, size_t n)
{
    return hr_gpu_rb2_upload(g, u, t, e, n);
}
static void two_free(void *g)
{
    hr_gpu_rb2_free(g);
}
static const rb_ops one_gpu = {one_it, one_down, one_up, one_free},
                    two_gpus = {two_it, two_down, two_up, two_free};

typedef struct rbg_state {
    void *g;
    const rb_ops *ops;
    int host_stale; /* the device has iterations the host grid lacks */
} rbg_state;

static int variant_of(const char *name)
{
    static const char *const names[HR_GPU_RB_COUNT] = {"rb-v1", "rb-v2",  "rb-v3",
                                                       "rb-v4", "rb-ldg", "rb-tuned"};
    for (int v = 0; v < HR_GPU_RB_COUNT; v++)
        if (!strcmp(name, names[v])) return v;
    return -1;
}

/* The state, the host grids, and the problem as the CUDA side wants it. */
static hr_status rbg_begin(hr_solver *s, const rb_ops *ops, hr_gpu_rb_params *p)
{
    rbg_state *st = calloc(1, sizeof *st);
    if (!st) return HR_ERR_NO_MEMORY;
    st->ops = ops;
    s->impl = st;
    hr_solver_init_rows(s, 0, hr_layout_outer(&s->u[0].l));
    s->cur = 0;
    const hr_grid_layout *l = &s->u[0].l;
    memset(p, 0, sizeof *p);
    p->variant = variant_of(s->k->name);
    p->device = s->o.device;
    p->dim = l->dim;
    p->nx = l->nx;
    p->ny = l->ny;
    p->nz = l->nz;
    p->esize = l->esize;
    p->pitch = l->pitch;
    p->plane = l->plane;
    p->offset = l->offset;
    p->count = l->count;
    p->omega = s->p.omega;
    p->spike_i = s->p.spike_i;
    p->spike_j = s->p.spike_j;
    p->spike_k = s->p.spike_k;
    p->hf_host = s->hf.base;
    p->pinned = s->o.host_memory == HR_HOST_PINNED;
    return HR_OK;
}

static hr_status rbg_setup(hr_solver *s)
{
    hr_gpu_rb_params p;
    HR_TRY(rbg_begin(s, &one_gpu, &p));
    rbg_state *st = s->impl;
    const char *env = getenv("HETRELAX_RB_GPU_SHAPE");
    if (env && sscanf(env, "%dx%d", &p.bx, &p.by) != 2) {
        hr_solver_set_error(s, "HETRELAX_RB_GPU_SHAPE: '%s' is not BXxBY", env);
        return HR_ERR_INVALID_ARG;
    }
    double h2d = 0.0;
    hr_gpu_rb *g = NULL;
    hr_status rc = hr_gpu_rb_create(&p, s->u[0].base, &g, s->device_name, sizeof s->device_name, s->cfg.shape,
                                    &h2d, s->err, sizeof s->err);
    st->g = g;
    s->t_h2d += h2d;
    snprintf(s->cfg.shape_source, sizeof s->cfg.shape_source, "%s", env ? "env" : "default");
    s->cfg.streams = 1;
    return rc;
}

/* rb-2gpu: devices --device and --device + 1, the upper and lower halves. */
static hr_status rbg2_setup(hr_solver *s)
{
    hr_gpu_rb_params p;
    HR_TRY(rbg_begin(s, &two_gpus, &p));
    p.variant = HR_GPU_RB_V1; /* the halves run v1 launches */
    rbg_state *st = s->impl;
    double h2d = 0.0;
    hr_gpu_rb2 *g = NULL;
    hr_status rc = hr_gpu_rb2_create(&p, s->u[0].base, &g, s->device_name, sizeof s->device_name, &h2d,
                                     s->err, sizeof s->err);
    st->g = g;
    s->t_h2d += h2d;
    s->cfg.shape[0] = 64;
    s->cfg.shape[1] = 8;
    s->cfg.shape[2] = 1;
    s->cfg.streams = 2;
    return rc;
}

static hr_status rbg_sweeps(hr_solver *s, long count)
{
    rbg_state *st = s->impl;
    st->host_stale = 1;
    return st->ops->iterations(st->g, count, s->err, sizeof s->err);
}

static hr_status rbg_sync_host(hr_solver *s)
{
    rbg_state *st = s->impl;
    if (!st->host_stale) return HR_OK;
    double t;
    HR_TRY(st->ops->download(st->g, s->u[s->cur].base, &t, s->err, sizeof s->err));
    s->t_d2h += t;
    st->host_stale = 0;
    return HR_OK;
}

static hr_status rbg_upload(hr_solver *s)
{
    rbg_state *st = s->impl;
    double t;
    HR_TRY(st->ops->upload(st->g, s->u[s->cur].base, &t, s->err, sizeof s->err));
    s->t_h2d += t;
    st->host_stale = 0;
    return HR_OK;
}

static void rbg_teardown(hr_solver *s)
{
    rbg_state *st = s->impl;
    if (!st) return;
    if (st->g) st->ops->release(st->g);
    free(st);
    s->impl = NULL;
}

#define RB_GPU_CAPS (HR_CAP_DETERMINISTIC | HR_CAP_2D | HR_CAP_RECT | HR_CAP_OMEGA | HR_CAP_REDBLACK)
#define RB_GPU_KERNEL(var, kname, caps_, text)                                                               \
    const hr_kernel_desc var = {.name = kname,                                                               \
                                .backend = HR_BACKEND_GPU,                                                   \
                                .summary = text,                                                             \
                                .caps = caps_,                                                               \
                                .setup = rbg_setup,                                                          \
                                .sweeps = rbg_sweeps,                                                        \
                                .sync_host = rbg_sync_host,                                                  \
                                .teardown = rbg_teardown,                                                    \
                                .upload = rbg_upload}

RB_GPU_KERNEL(hr_kernel_gpu_rb_tuned, "rb-tuned", RB_GPU_CAPS,
              "red-black, both colours in one pass down the columns (+ tile-ring fix-up)");
RB_GPU_KERNEL(hr_kernel_gpu_rb_v1, "rb-v1", RB_GPU_CAPS | HR_CAP_3D,
              "red-black seed 004 v1: a thread per point of the colour, 8 x 64 blocks");
RB_GPU_KERNEL(hr_kernel_gpu_rb_v2, "rb-v2", RB_GPU_CAPS, "red-black seed 004 v2: 8 points per thread");
RB_GPU_KERNEL(hr_kernel_gpu_rb_v3, "rb-v3", RB_GPU_CAPS,
              "red-black seed 004 v3: tile + halo in shared memory, written back");
RB_GPU_KERNEL(hr_kernel_gpu_rb_v4, "rb-v4", RB_GPU_CAPS,
              "red-black seed 004 v4: shared-memory reads, results to global memory");
RB_GPU_KERNEL(hr_kernel_gpu_rb_ldg, "rb-ldg", RB_GPU_CAPS | HR_CAP_3D,
              "red-black v1 with the neighbours through the read-only cache");
const hr_kernel_desc hr_kernel_gpu_rb_2gpu = {
    .name = "rb-2gpu",
    .backend = HR_BACKEND_GPU,
    .summary = "red-black on two GPUs (upper / lower halves), v1 launches, "
               "boundary rows exchanged after each colour",
    .caps = RB_GPU_CAPS,
    .setup = rbg2_setup,
    .sweeps = rbg_sweeps,
    .sync_host = rbg_sync_host,
    .teardown = rbg_teardown,
    .upload = rbg_upload};
#endif
