/*
 * The GPU backend's side of the solver: device grids in the shared padded layout (or
 * unpadded rows for the paper's first rungs), pinned or pageable host memory, timed
 * transfers, the sweep loop with CUDA graphs, the device residual and the kernel table
 * entries.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/precision.h"
#include "core/timer.h"
#include "runtime/cuda/cuda_api.h"
#include "runtime/cuda/gpu_internal.cuh"
#include "runtime/cuda/grid_device.h"

/* Launches captured in one graph (even, so a replay ends on the parity it began on). */
#define HR_GRAPH_PASSES 16

extern "C" const hr_kernel_ops hri_kernel_gpu; /* the GPU kernels' entry points, below */

/* The family of a kernel: its registry line names it. */
static const hr_gpu_family *family_of(const hr_entry *k)
{
    return k && k->kernel == &hri_kernel_gpu ? (const hr_gpu_family *)k->data : NULL;
}

int hri_gpu_pass_one(const hr_gpu *g, long remaining)
{
    (void)g;
    (void)remaining;
    return 1;
}

int hri_gpu_pdl(const hr_gpu *g)
{
    return g->cc_major >= 9 && !(g->tune && g->tune->gpu_pdl < 0);
}

int hri_gpu_check_block(const hr_gpu *g, hr_gpu_shape sh, int rows_per_thread, char *why, size_t len)
{
    (void)g;
    if (sh.bx < 1 || sh.by < 1 || (long)sh.bx * sh.by > 1024) {
        snprintf(why, len, "block %dx%d: needs 1..1024 threads", sh.bx, sh.by);
        return 1;
    }
    if (rows_per_thread < 1 || rows_per_thread > 64) {
        snprintf(why, len, "%d rows per thread: needs 1..64", rows_per_thread);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ graphs */

static void destroy_graphs(hr_gpu *g)
{
    for (int p = 0; p < 2; p++)
        if (g->graph[p]) {
            cudaGraphExecDestroy(g->graph[p]);
            g->graph[p] = NULL;
        }
    g->graph_sweeps = 0;
}

/* Captures HR_GRAPH_PASSES full launches starting from each parity. Replays cut the
 * launch overhead that dominates small grids (Venkatasubramanian & Vuduc fig. 11: n < 1024). */
static hr_status build_graphs(hr_solver *s, hr_gpu *g)
{
    destroy_graphs(g);
    const int full = g->fam->pass(g, LONG_MAX);
    const int save = g->dcur;
    /* One real launch first: loads the kernel's module outside the capture and keeps
     * first-launch costs out of timed sweeps. A one-sweep launch only writes the next
     * grid (async passes of one sweep skip the in-place fringe exchange), and the
     * next grid is overwritten by the first real sweep, so the state is unchanged. */
    HR_CU(s, g->fam->launch(g, 1, g->stream));
    HR_CU(s, cudaStreamSynchronize(g->stream));
    for (int p = 0; p < 2; p++) {
        cudaGraph_t graph = NULL;
        g->dcur = p;
        HR_CU(s, cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal));
        cudaError_t le = cudaSuccess;
        for (int q = 0; q < HR_GRAPH_PASSES && le == cudaSuccess; q++) {
            le = g->fam->launch(g, full, g->stream);
            g->dcur ^= 1;
        }
        cudaError_t ce = cudaStreamEndCapture(g->stream, &graph);
        g->dcur = save;
        if (le != cudaSuccess) {
            if (graph) cudaGraphDestroy(graph);
            return hri_cuda_fail(s, le, "capture: kernel launch", __FILE__, __LINE__);
        }
        HR_CU(s, ce);
        cudaError_t ie = cudaGraphInstantiate(&g->graph[p], graph, 0);
        cudaGraphDestroy(graph);
        HR_CU(s, ie);
    }
    /* upload both executables now so the first replay is not slower than the rest */
    for (int p = 0; p < 2; p++)
        HR_CU(s, cudaGraphUpload(g->graph[p], g->stream));
    HR_CU(s, cudaStreamSynchronize(g->stream));
    g->graph_sweeps = (long)full * HR_GRAPH_PASSES;
    return HR_OK;
}

hr_status hri_gpu_apply_shape(hr_solver *s, hr_gpu *g, hr_gpu_shape sh)
{
    char why[160];
    if (g->fam->check(g, sh, why, sizeof why)) {
        hri_solver_set_error(s, "kernel %s: %s", g->name, why);
        return HR_ERR_INVALID_ARG;
    }
    g->shape = sh;
    if (g->fam->prepare) HR_CU(s, g->fam->prepare(g));
    return build_graphs(s, g);
}

/* ------------------------------------------------------------ transfers */

/* Host and device rows may have different pitches (the unpadded 2-D rungs): a 2-D copy
 * of the (nx+2)-wide rows converts between them. 3-D grids are padded on both sides
 * with the same pitch, so their planes (pitch * (ny + 2)) are rows too. */
static cudaError_t copy_grid(const hr_gpu *g, void *dst, size_t dpitch, const void *src, size_t spitch,
                             cudaMemcpyKind kind)
{
    const size_t w = ((size_t)g->nx + 2) * g->esize;
    const size_t rows = ((size_t)g->ny + 2) * (g->dim == 3 ? (size_t)g->nz + 2 : 1);
    return cudaMemcpy2DAsync(dst, dpitch * g->esize, src, spitch * g->esize, w, rows, kind, g->stream);
}

static void *dev_origin(const hr_gpu *g, void *base)
{
    return (char *)base + g->offset * g->esize;
}

hr_status hri_gpu_download(hr_solver *s, hr_gpu *g, void *dst)
{
    HR_CU(s, copy_grid(g, dst, s->u[0].l.pitch, dev_origin(g, g->d_u[g->dcur]), g->pitch,
                       cudaMemcpyDeviceToHost));
    HR_CU(s, cudaStreamSynchronize(g->stream));
    return HR_OK;
}

/* ------------------------------------------------------------ kernel entry points */

/* tuning.gpu_shape, else the tuning cache, else the shapes shipped for this
 * architecture, else the family's default, else its first candidate that fits. */
static hr_status choose_shape(hr_solver *s, hr_gpu *g, hr_gpu_shape *out)
{
    const hr_gpu_family *fam = g->fam;
    const int *knob = s->o.tuning.gpu_shape; /* all three or none (hri_tuning_validate) */
    hr_gpu_shape sh = {knob[0], knob[1], knob[2]};
    const int given = knob[0] > 0;
    char why[160];
    hr_gpu_shape c;
    if (given) {
        g->shape_from = "env";
    } else if (hri_gpu_cache_lookup(g, s->device_name, &c) && !fam->check(g, c, why, sizeof why)) {
        sh = c;
        g->shape_from = "cache";
    } else if (hri_gpu_shipped_lookup(g, &c) && !fam->check(g, c, why, sizeof why)) {
        sh = c;
        g->shape_from = "shipped";
    } else {
        sh = fam->def[g->dbl];
        g->shape_from = "default";
        if (fam->check(g, sh, why, sizeof why)) {
            /* the default does not fit (a large alpha, say): the first candidate that does */
            for (int q = 0; q < fam->ncands; q++)
                if (!fam->check(g, fam->cands[q], why, sizeof why)) {
                    sh = fam->cands[q];
                    g->shape_from = "candidate";
                    break;
                }
        }
    }
    *out = sh;
    return HR_OK;
}

static hr_status gpu_setup(hr_solver *s)
{
    const hr_gpu_family *fam = family_of(s->k);
    if (!fam) {
        hri_solver_set_error(s, "kernel %s: no GPU family (table mismatch)", s->k->name);
        return HR_ERR_INTERNAL;
    }
    const int count = hri_cuda_device_count();
    if (count < 1) {
        hri_solver_set_error(s, "backend gpu: no CUDA device found");
        return HR_ERR_NO_DEVICE;
    }
    if (s->o.device >= count) {
        hri_solver_set_error(s, "device: ordinal %d, but %d CUDA device(s) present", s->o.device, count);
        return HR_ERR_NO_DEVICE;
    }
    hr_gpu *g = (hr_gpu *)calloc(1, sizeof *g);
    if (!g) return HR_ERR_NO_MEMORY;
    s->impl = g;
    g->fam = fam;
    g->name = s->k->name;
    g->caps = s->k->caps;
    g->dev = s->o.device;
    g->dim = s->p.dim;
    g->nx = s->p.nx;
    g->ny = s->p.ny;
    g->nz = s->p.dim == 3 ? s->p.nz : 1;
    g->n = g->nx; /* the square-only families (no HR_CAP_RECT) */
    g->esize = s->u[0].l.esize;
    g->dbl = g->esize == 8;
    g->spike = hri_solver_rhs_view(s);
    g->spike.hf = NULL; /* the device reads its own h^2 f grid */
    g->omega = s->p.omega;
    g->alpha = s->o.alpha;
    g->split = s->o.tuning.gpu_split;
    g->tune = &s->o.tuning;
    HR_CU(s, cudaSetDevice(g->dev));
    cudaDeviceProp p;
    HR_CU(s, cudaGetDeviceProperties(&p, g->dev));
    snprintf(s->device_name, sizeof s->device_name, "%.95s", p.name);
    s->cfg.streams = 1;
    g->sms = p.multiProcessorCount;
    g->cc_major = p.major;
    g->cc_minor = p.minor;
    g->smem_optin = p.sharedMemPerBlockOptin;
    g->tex_align = p.textureAlignment;
    g->tex_pitch_align = p.texturePitchAlignment;
    g->tex2d_max_w = p.maxTexture2DLinear[0];
    g->tex2d_max_h = p.maxTexture2DLinear[1];
    HR_CU(s, cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));

    /* device grids: the host layout, or unpadded rows for the first 2-D rungs */
    if (fam->padded || g->dim == 3) {
        g->pitch = s->u[0].l.pitch;
        g->offset = s->u[0].l.offset;
    } else {
        g->pitch = (size_t)g->nx + 2;
        g->offset = 0;
    }
    g->plane = g->pitch * ((size_t)g->ny + 2);
    const size_t planes = g->dim == 3 ? (size_t)g->nz + 2 : 1;
    g->alloc_elems = g->offset + planes * g->plane + g->pitch; /* + one spare row */
    const size_t dbytes = g->alloc_elems * g->esize;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && dbytes * (s->hf.base ? 3 : 2) > free_b) {
        hri_solver_set_error(s, "n: %zu MiB of device grids do not fit the %zu MiB free on %s",
                            dbytes * (s->hf.base ? 3 : 2) >> 20, free_b >> 20, p.name);
        return HR_ERR_NO_MEMORY;
    }

    /* host grids (touched only once the device grids are known to fit): boundary ring, initial interior,
     * right-hand side */
    hri_solver_init_rows(s, 0, hr_layout_outer(&s->u[0].l));
    s->cur = 0;
    const size_t hbytes = hr_layout_bytes(&s->u[0].l);
    if (s->o.host_memory == HR_HOST_PINNED) {
        HR_CU(s, cudaHostRegister(s->u[0].base, hbytes, cudaHostRegisterDefault));
        g->registered_u = 1;
        if (s->hf.base) {
            HR_CU(s, cudaHostRegister(s->hf.base, hbytes, cudaHostRegisterDefault));
            g->registered_hf = 1;
        }
    }

    for (int k = 0; k < 2; k++) {
        HR_CU(s, cudaMalloc(&g->d_u[k], dbytes));
        HR_CU(s, cudaMemsetAsync(g->d_u[k], 0, dbytes, g->stream));
    }
    if (s->hf.base) {
        HR_CU(s, cudaMalloc(&g->d_hf, dbytes));
        HR_CU(s, cudaMemsetAsync(g->d_hf, 0, dbytes, g->stream));
    }
    g->nparts = hri_gpu_residual_parts(g->ny, g->nz);
    HR_CU(s, cudaMalloc((void **)&g->d_part, 4 * sizeof(double) * ((size_t)g->nparts + 1)));
    HR_CU(s, cudaMallocHost((void **)&g->h_res, 4 * sizeof(double)));
    HR_CU(s, cudaStreamSynchronize(g->stream));

    /* host to device: timed alone (Venkatasubramanian & Vuduc fig. 13) */
    double t0 = hr_now();
    HR_CU(s, copy_grid(g, dev_origin(g, g->d_u[0]), g->pitch, hr_grid_origin(&s->u[0]), s->u[0].l.pitch,
                       cudaMemcpyHostToDevice));
    if (s->hf.base)
        HR_CU(s, copy_grid(g, dev_origin(g, g->d_hf), g->pitch, hr_grid_origin(&s->hf), s->hf.l.pitch,
                           cudaMemcpyHostToDevice));
    HR_CU(s, cudaStreamSynchronize(g->stream));
    s->t_h2d += hr_now() - t0;
    /* the second grid needs the same boundary ring: copied on the device */
    HR_CU(s, cudaMemcpyAsync(g->d_u[1], g->d_u[0], dbytes, cudaMemcpyDeviceToDevice, g->stream));
    g->dcur = 0;

    hr_gpu_shape sh;
    HR_TRY(choose_shape(s, g, &sh));
    HR_TRY(hri_gpu_apply_shape(s, g, sh));
    s->cfg.shape[0] = g->shape.bx;
    s->cfg.shape[1] = g->shape.by;
    s->cfg.shape[2] = g->shape.h;
    snprintf(s->cfg.shape_source, sizeof s->cfg.shape_source, "%s", g->shape_from);
    return HR_OK;
}

static hr_status gpu_sweeps(hr_solver *s, long count)
{
    hr_gpu *g = (hr_gpu *)s->impl;
    while (g->graph_sweeps > 0 && count >= g->graph_sweeps) {
        HR_CU(s, cudaGraphLaunch(g->graph[g->dcur], g->stream));
        count -= g->graph_sweeps;
        s->syncs += HR_GRAPH_PASSES; /* one global synchronisation per launch */
    }
    while (count > 0) {
        const int sw = g->fam->pass(g, count);
        HR_CU(s, g->fam->launch(g, sw, g->stream));
        g->dcur ^= 1;
        count -= sw;
        s->syncs++;
    }
    /* the driver times sweeps on the host: wait for them (and surface kernel faults) */
    HR_CU(s, cudaStreamSynchronize(g->stream));
    return HR_OK;
}

static hr_status gpu_sync_host(hr_solver *s)
{
    hr_gpu *g = (hr_gpu *)s->impl;
    double t0 = hr_now();
    HR_TRY(hri_gpu_download(s, g, hr_grid_origin(&s->u[0])));
    s->t_d2h += hr_now() - t0;
    s->cur = 0;
    return HR_OK;
}

/* A restart: the host grid s->u[s->cur] was replaced; make the device grids match. */
static hr_status gpu_upload(hr_solver *s)
{
    hr_gpu *g = (hr_gpu *)s->impl;
    double t0 = hr_now();
    HR_CU(s, copy_grid(g, dev_origin(g, g->d_u[g->dcur]), g->pitch, hr_grid_origin(&s->u[s->cur]),
                       s->u[0].l.pitch, cudaMemcpyHostToDevice));
    HR_CU(s, cudaStreamSynchronize(g->stream));
    s->t_h2d += hr_now() - t0;
    return HR_OK;
}

static hr_status gpu_residual(hr_solver *s, double *rel)
{
    hr_gpu *g = (hr_gpu *)s->impl;
    return hri_gpu_residual_compute(s, g, rel);
}

/* The caller's device arrays (hr_grid_solver_solve_device): both grids take an initial
 * guess, as the set-up gives both the host's. */
static hr_status gpu_device_io(hr_solver *s, hr_devio what, void *ptr, int single, double pre)
{
    hr_gpu *g = (hr_gpu *)s->impl;
    const hri_dev_grid d = {g->dev,   g->stream, g->dim,    g->nx,    g->ny,          g->nz,
                            g->esize, g->pitch,  g->plane,  g->offset, g->d_hf,        g->spike.spike_i,
                            g->spike.spike_j, g->spike.spike_k};
    return hri_dev_grid_io(&d, what, g->d_u[g->dcur], g->d_u[1 - g->dcur], ptr, single, pre, s->p.h * s->p.h, s->err,
                           sizeof s->err);
}

static void gpu_teardown(hr_solver *s)
{
    hr_gpu *g = (hr_gpu *)s->impl;
    if (!g) return;
    cudaSetDevice(g->dev);
    if (g->stream) cudaStreamSynchronize(g->stream);
    destroy_graphs(g);
    for (int k = 0; k < 2; k++) {
        if (g->tex[k]) cudaDestroyTextureObject(g->tex[k]);
        cudaFree(g->d_u[k]);
    }
    cudaFree(g->d_hf);
    cudaFree(g->d_part);
    if (g->h_res) cudaFreeHost(g->h_res);
    if (g->registered_u) cudaHostUnregister(s->u[0].base);
    if (g->registered_hf) cudaHostUnregister(s->hf.base);
    if (g->stream) cudaStreamDestroy(g->stream);
    (void)cudaGetLastError();
    free(g);
    s->impl = NULL;
}

/* ------------------------------------------------------------ the table entries */

/* Option-time check of alpha for the kernels that use it (hr_options_validate calls it
 * before anything is allocated): some candidate shape must fit alpha on this device. */
static hr_status gpu_check_alpha(const hr_options *o, char *why, size_t why_size)
{
    const hr_entry *k = hri_kernel_find(HR_BACKEND_GPU, o->kernel, hri_options_dim(o));
    const hr_gpu_family *fam = family_of(k);
    if (!fam || !(k->caps & HR_CAP_ALPHA)) return HR_OK;
    hr_gpu g;
    memset(&g, 0, sizeof g);
    g.fam = fam;
    g.name = k->name;
    g.caps = k->caps;
    g.dim = hri_options_dim(o);
    g.nx = g.n = hri_options_extent(o, 0);
    g.ny = hri_options_extent(o, 1);
    g.nz = hri_options_extent(o, 2);
    g.omega = 1.0;
    g.alpha = o->alpha;
    g.esize = hr_prec_bytes(o->precision);
    g.dbl = g.esize == 8;
    int v = 0;
    g.smem_optin =
        (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, o->device) == cudaSuccess &&
         v > 0)
            ? (size_t)v
            : (size_t)227 * 1024;
    (void)cudaGetLastError();
    char w[160] = "";
    if (!fam->check(&g, fam->def[g.dbl], w, sizeof w)) return HR_OK;
    for (int q = 0; q < fam->ncands; q++)
        if (!fam->check(&g, fam->cands[q], w, sizeof w)) return HR_OK;
    if (why && why_size)
        snprintf(why, why_size, "alpha: %d is too large for GPU kernel %s (%s)", o->alpha, g.name,
                 strncmp(w, "alpha", 5) == 0 ? "no tile shape fits it" : w);
    return HR_ERR_INVALID_ARG;
}

/* The entry points of every HR_GPU_KERNEL line of the registry; the line's family says what
 * they launch. */
extern "C" const hr_kernel_ops hri_kernel_gpu = {gpu_setup,       gpu_sweeps, gpu_sync_host,  gpu_residual, gpu_teardown,
                                                gpu_check_alpha, gpu_upload, gpu_device_io};
