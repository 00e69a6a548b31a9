/*
 * The GPU red-black kernels as solver kernels: the glue between the solver
 * (hr_solver, host grids, the driver) and the self-contained CUDA file behind
 * src/methods/redblack/cuda/redblack_gpu.h. C, so that it does not depend on the CUDA sources' internal
 * headers. The device holds the one grid; the host copy is refreshed on sync_host (residual
 * checks, the end of a run) and pushed back on upload (restarts). The knob tuning.rb_gpu_shape
 * BX x BY overrides the block (rb-tuned, rb-inplace: BX threads, BY rows per strip / tile) or
 * BX x BY x H (rb-tuned: BX threads along x, BY strips per block, H rows per strip); else
 * rb-tuned takes the tuning cache's shape (`hetrelax tune --kernel rb-tuned`), else the
 * shipped one for the architecture. rb-mgpu runs on devices --device.. --device + N - 1 (--gpus N),
 * rb-2gpu on --device and --device + 1.
 */
#ifdef HR_HAVE_CUDA
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/solver_internal.h"
#include "core/tune_util.h"
#include "methods/redblack/cuda/redblack_gpu.h"
#include "runtime/cuda/cuda_api.h"
#include "runtime/cuda/grid_device.h"

/* One GPU (hri_gpu_rb_*) or several (hri_gpu_rb2_*) behind the same four calls. */
typedef struct rb_ops {
    hr_status (*iterations)(void *g, long count, char *err, size_t n);
    hr_status (*download)(void *g, void *u, double *t, char *err, size_t n);
    hr_status (*upload)(void *g, const void *u, double *t, char *err, size_t n);
    void (*release)(void *g);
} rb_ops;

static hr_status one_it(void *g, long c, char *e, size_t n)
{
    return hri_gpu_rb_iterations(g, c, e, n);
}
static hr_status one_down(void *g, void *u, double *t, char *e, size_t n)
{
    return hri_gpu_rb_download(g, u, t, e, n);
}
static hr_status one_up(void *g, const void *u, double *t, char *e, size_t n)
{
    return hri_gpu_rb_upload(g, u, t, e, n);
}
static void one_free(void *g)
{
    hri_gpu_rb_free(g);
}
static hr_status two_it(void *g, long c, char *e, size_t n)
{
    return hri_gpu_rb2_iterations(g, c, e, n);
}
static hr_status two_down(void *g, void *u, double *t, char *e, size_t n)
{
    return hri_gpu_rb2_download(g, u, t, e, n);
}
static hr_status two_up(void *g, const void *u, double *t, char *e, size_t n)
{
    return hri_gpu_rb2_upload(g, u, t, e, n);
}
static void two_free(void *g)
{
    hri_gpu_rb2_free(g);
}
static const rb_ops one_gpu = {one_it, one_down, one_up, one_free},
                    two_gpus = {two_it, two_down, two_up, two_free};

typedef struct rbg_state {
    void *g;
    const rb_ops *ops;
    int host_stale; /* the device has iterations the host grid lacks */
} rbg_state;

/* The state, the host grids, and the problem as the CUDA side wants it. */
static hr_status rbg_begin(hr_solver *s, const rb_ops *ops, hr_gpu_rb_params *p)
{
    rbg_state *st = calloc(1, sizeof *st);
    if (!st) return HR_ERR_NO_MEMORY;
    st->ops = ops;
    s->impl = st;
    hri_solver_init_rows(s, 0, hr_layout_outer(&s->u[0].l));
    s->cur = 0;
    const hr_grid_layout *l = &s->u[0].l;
    memset(p, 0, sizeof *p);
    p->variant = s->k->id; /* the registry line says which */
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
    p->tune = s->o.tuning;
    return HR_OK;
}

static hr_status rbg_setup(hr_solver *s)
{
    hr_gpu_rb_params p;
    HR_TRY(rbg_begin(s, &one_gpu, &p));
    rbg_state *st = s->impl;
    const int *knob =
        s->o.tuning.rb_gpu_shape; /* BX and BY, or none (hri_tuning_validate); H 0: the kernel's */
    const char *source = "default";
    if (knob[0] > 0) {
        p.bx = knob[0];
        p.by = knob[1];
        p.h = knob[2];
        source = "env";
    } else if (p.variant == HR_GPU_RB_TUNED && p.dim == 2) {
        int sh[3];
        const char *from = NULL;
        char dev[256] = "";
        hr_gpu_name(p.device, dev, sizeof dev);
        if (hri_gpu_rb_shape_lookup(&s->o.tuning, p.device, dev, s->k->name, p.esize == 8, p.nx, p.ny, sh,
                                   &from)) {
            p.bx = sh[0];
            p.by = sh[1];
            p.h = sh[2];
            source = from;
        }
    }
    double h2d = 0.0;
    hr_gpu_rb *g = NULL;
    hr_status rc = hri_gpu_rb_create(&p, s->u[0].base, &g, s->device_name, sizeof s->device_name, s->cfg.shape,
                                    &h2d, s->err, sizeof s->err);
    if (rc == HR_ERR_INVALID_ARG && strcmp(source, "env") != 0 && g) {
        /* a cached / shipped shape this build refuses: the default */
        hri_gpu_rb_free(g);
        g = NULL;
        p.bx = p.by = p.h = 0;
        source = "default";
        s->err[0] = '\0';
        rc = hri_gpu_rb_create(&p, s->u[0].base, &g, s->device_name, sizeof s->device_name, s->cfg.shape, &h2d,
                              s->err, sizeof s->err);
    }
    st->g = g;
    s->t_h2d += h2d;
    snprintf(s->cfg.shape_source, sizeof s->cfg.shape_source, "%s", source);
    s->cfg.streams = 1;
    return rc;
}

/* rb-mgpu (--gpus N) and rb-2gpu (N = 2): slabs of rows on devices --device.. --device + N - 1. */
static hr_status rbg2_setup(hr_solver *s)
{
    hr_gpu_rb_params p;
    HR_TRY(rbg_begin(s, &two_gpus, &p));
    p.variant = HR_GPU_RB_V1; /* ignored by rb2: the slabs run rb-tuned's streaming pass */
    p.gpus = s->k->id > 0 ? s->k->id : s->o.gpus; /* rb-2gpu: 2 */
    rbg_state *st = s->impl;
    double h2d = 0.0;
    hr_gpu_rb2 *g = NULL;
    hr_status rc = hri_gpu_rb2_create(&p, s->u[0].base, &g, s->device_name, sizeof s->device_name, &h2d,
                                     s->err, sizeof s->err);
    st->g = g;
    s->t_h2d += h2d;
    /* each slab picks rb-tuned's shape itself (tuning.rb2_shape, the cache, the shipped
     * table, else 128x17x8) and does not report it back: 0 x 0 x 0 = not known here */
    s->cfg.shape[0] = s->cfg.shape[1] = s->cfg.shape[2] = 0;
    s->cfg.streams = 2;
    s->cfg.gpus = rc == HR_OK ? hri_gpu_rb2_devices(g) : p.gpus;
    return rc;
}

/* The GPU count against the kernel, and enough rows for the slabs (1 at the ends, 2 inside:
 * the cuts keep an odd last row, so interior slabs hold an even count). */
static hr_status rbg2_check(const hr_options *o, char *why, size_t why_size)
{
    const hr_entry *k = o->kernel ? hri_kernel_find(HR_BACKEND_GPU, o->kernel, hri_options_dim(o)) : NULL;
    const int two = k && k->id == 2; /* rb-2gpu (rb-mgpu: 0, --gpus N) */
    if (two && o->gpus > 2)
        return hri_invalid_arg(why, why_size, "gpus: kernel rb-2gpu runs on 2 GPUs (rb-mgpu: --gpus %d)",
                              o->gpus);
    if (!two && o->gpus < 2)
        return hri_invalid_arg(why, why_size,
                              "gpus: kernel rb-mgpu needs --gpus N, N >= 2 (rb-tuned: one GPU)");
    const int ng = two ? 2 : o->gpus, least = ng > 2 ? 2 * ng - 2 : 2;
    if (o->dim != 3 && hri_options_extent(o, 1) < least)
        return hri_invalid_arg(why, why_size, "ny: red-black on %d GPUs needs at least %d rows, not %d", ng,
                              least, hri_options_extent(o, 1));
    return HR_OK;
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

/* One GPU's grids as grid_device.h describes them; *u the current grid, *u2 rb-tuned's second. */
static hri_dev_grid rbg_grids(hr_solver *s, void **u, void **u2)
{
    rbg_state *st = s->impl;
    const hr_grid_layout *l = &s->u[0].l;
    const void *hf = NULL;
    void *stream = NULL;
    hri_gpu_rb_grids(st->g, u, u2, &hf, &stream);
    const hri_dev_grid d = {s->o.device, stream,   l->dim,       l->nx,        l->ny,       l->nz,      l->esize,
                            l->pitch,    l->plane, l->offset,    hf,           s->p.spike_i, s->p.spike_j,
                            s->p.spike_k};
    return d;
}

/* On the device: a check copies nothing back. */
static hr_status rbg_residual(hr_solver *s, double *rel)
{
    void *u, *u2;
    const hri_dev_grid d = rbg_grids(s, &u, &u2);
    return hri_dev_grid_residual(&d, u, rel, s->err, sizeof s->err);
}

static hr_status rbg_device_io(hr_solver *s, hr_devio what, void *ptr, int single, double pre)
{
    rbg_state *st = s->impl;
    void *u, *u2;
    const hri_dev_grid d = rbg_grids(s, &u, &u2);
    const hr_status r = hri_dev_grid_io(&d, what, u, u2, ptr, single, pre, s->p.h * s->p.h, s->err, sizeof s->err);
    if (r == HR_OK && what == HR_DEVIO_X0) st->host_stale = 1;
    return r;
}

static void rbg_teardown(hr_solver *s)
{
    rbg_state *st = s->impl;
    if (!st) return;
    if (st->g) st->ops->release(st->g);
    free(st);
    s->impl = NULL;
}

/* rb-tuned's candidates (bx threads along x, by strips per block, h rows per strip; by + 16:
 * overlapped warps): strip widths of 1-8 warps, 1-8 strips per block, short strips (one
 * batch of loads: the halo rows are L2 hits) to long ones (fewer halo rows). */
static const int rb_tuned_cands[][3] = {
    {128, 1, 8}, {128, 1, 4},  {128, 1, 16}, {128, 1, 32}, {64, 1, 8},   {64, 1, 4},   {64, 1, 16},
    {64, 2, 8},  {64, 2, 4},   {64, 4, 4},   {64, 4, 8},   {256, 1, 8},  {256, 1, 4},  {256, 1, 16},
    {32, 4, 8},  {32, 4, 4},   {32, 2, 8},   {32, 1, 8},   {32, 8, 4},   {128, 2, 4},  {128, 2, 8},
    {128, 1, 2}, {128, 1, 64}, {64, 1, 32},  {32, 8, 8},   {128, 17, 8}, {128, 17, 4}, {128, 17, 16},
    {64, 17, 8}, {64, 17, 4},  {64, 18, 4},  {64, 18, 8},  {32, 20, 8},  {32, 20, 4},  {256, 17, 8},
    {32, 17, 8}, {128, 18, 4}, {128, 17, 32}};

hr_status hri_gpu_rb_tune(hr_solver *s, long sweeps, hr_cuda_tune_result *out)
{
    rbg_state *st = s->impl;
    if (!st || st->ops != &one_gpu || s->k->id != HR_GPU_RB_TUNED) {
        hri_solver_set_error(s, "kernel %s: no shapes to tune (rb-tuned is the tunable red-black kernel)",
                            s->k->name);
        return HR_ERR_INVALID_ARG;
    }
    const size_t bytes = hr_layout_bytes(&s->u[0].l);
    unsigned char *pristine = malloc(bytes), *ref = malloc(bytes);
    hr_status rc = HR_OK;
    int have_ref = 0, ref_sh[3] = {0, 0, 0};
    const int ncand = (int)(sizeof rb_tuned_cands / sizeof rb_tuned_cands[0]);
    if (!pristine || !ref) {
        rc = HR_ERR_NO_MEMORY;
        goto done;
    }
    memcpy(pristine, s->u[0].base, bytes);
    out->best_gbps = out->default_gbps = 0.0;
    out->candidates = 0;
    for (int c = -1; c < ncand; c++) {
        const int *sh = c < 0 ? s->cfg.shape : rb_tuned_cands[c]; /* -1: the shape setup chose */
        if (c >= 0 && sh[0] == s->cfg.shape[0] && sh[1] == s->cfg.shape[1] && sh[2] == s->cfg.shape[2])
            continue;
        char why[160];
        if (hri_gpu_rb_set_shape(st->g, sh[0], sh[1], sh[2], why, sizeof why) != HR_OK) continue;
        memcpy(s->u[0].base, pristine, bytes);
        if ((rc = rbg_upload(s)) != HR_OK) goto done;
        if ((rc = rbg_sweeps(s, sweeps)) != HR_OK || (rc = rbg_sync_host(s)) != HR_OK) goto done;
        if (!have_ref) {
            memcpy(ref, s->u[0].base, bytes);
            memcpy(ref_sh, sh, sizeof ref_sh);
            have_ref = 1;
        } else if (memcmp(ref, s->u[0].base, bytes) != 0) {
            hri_solver_set_error(s, "kernel rb-tuned: shape %dx%dx%d gives a different grid than %dx%dx%d",
                                sh[0], sh[1], sh[2], ref_sh[0], ref_sh[1], ref_sh[2]);
            rc = HR_ERR_INTERNAL;
            goto done;
        }
        double gb = 0.0;
        if ((rc = hri_tune_time_sweeps(s, sweeps, &gb)) != HR_OK) goto done;
        out->candidates++;
        if (c < 0) out->default_gbps = gb;
        if (gb > out->best_gbps) {
            out->best_gbps = gb;
            out->bx = sh[0];
            out->by = sh[1];
            out->h = sh[2];
        }
    }
    if (out->candidates == 0) {
        hri_solver_set_error(s, "kernel rb-tuned: no candidate shape fits this problem");
        rc = HR_ERR_INVALID_ARG;
    }
done:
    free(pristine);
    free(ref);
    return rc;
}

/* rb-tuned, rb-inplace, rb-v1..v4, rb-ldg: the registry id is the variant (hr_gpu_rb_params) */
const hr_kernel_ops hri_kernel_rb_gpu = {
    .setup = rbg_setup,
    .sweeps = rbg_sweeps,
    .sync_host = rbg_sync_host,
    .residual = rbg_residual,
    .teardown = rbg_teardown,
    .upload = rbg_upload,
    .device_io = rbg_device_io,
};

/* rb-mgpu and rb-2gpu: the registry id is the GPU count (0: --gpus N) */
const hr_kernel_ops hri_kernel_rb_gpus = {
    .setup = rbg2_setup,
    .sweeps = rbg_sweeps,
    .sync_host = rbg_sync_host,
    .teardown = rbg_teardown,
    .check = rbg2_check,
    .upload = rbg_upload,
};
#endif
