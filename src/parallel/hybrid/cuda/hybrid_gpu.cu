/* The GPU placement of the hybrid split (see hybrid_gpu.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parallel/hybrid/cuda/hybrid_gpu_place.cuh"
#include "reference/stencil_cpu.h"

static hr_status gpu_sweep(hr_place *p, int lane, int r0, int r1)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    gpu_place *c = GP(p);
    if (r1 <= r0) return HR_OK;
    const cudaStream_t st = lane_stream(p, lane, r0);
    if (lane != HR_LANE_INTERIOR) GP_CU(p, apply_pending(c, side_of(p, r0)));
    if (c->g.dim == 3)
        GP_CU(p, hri_gpu_tuned3d_planes(&c->g, r0, r1, st));
    else
        GP_CU(p, hri_gpu_tuned2d_rows(&c->g, r0, r1, st));
    return HR_OK;
}

static hr_status gpu_get(hr_place *p, int lane, int which, int r0, int r1, void *buf)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    gpu_place *c = GP(p);
    if (lane != HR_LANE_INTERIOR) GP_CU(p, apply_pending(c, side_of(p, r0)));
    GP_CU(p, cudaMemcpyAsync(buf, dev_row(p, c, which, r0), hr_place_rows_bytes(&p->spec, r0, r1),
                             cudaMemcpyDeviceToHost, lane_stream(p, lane, r0)));
    return HR_OK;
}

static hr_status gpu_put(hr_place *p, int lane, int which, int r0, int r1, const void *buf)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    gpu_place *c = GP(p);
    if (lane != HR_LANE_INTERIOR) GP_CU(p, apply_pending(c, side_of(p, r0)));
    GP_CU(p, cudaMemcpyAsync(dev_row(p, c, which, r0), buf, hr_place_rows_bytes(&p->spec, r0, r1),
                             cudaMemcpyHostToDevice, lane_stream(p, lane, r0)));
    return HR_OK;
}

static hr_status gpu_wait(hr_place *p, int lane)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    GP_CU(p, apply_pending(GP(p), -1));
    if (lane == HR_LANE_INTERIOR) {
        GP_CU(p, cudaStreamSynchronize(GP(p)->st[1]));
    } else {
        GP_CU(p, cudaStreamSynchronize(GP(p)->st[0]));
        GP_CU(p, cudaStreamSynchronize(GP(p)->st[2]));
    }
    return HR_OK;
}

/* Each stream waits for the others' work so far: no host round trip. */
static hr_status gpu_order(hr_place *p)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    gpu_place *c = GP(p);
    GP_CU(p, apply_pending(c, -1));
    for (int q = 0; q < 3; q++)
        GP_CU(p, cudaEventRecord(c->ev[q], c->st[q]));
    for (int q = 0; q < 3; q++)
        for (int o = 0; o < 3; o++)
            if (o != q) GP_CU(p, cudaStreamWaitEvent(c->st[q], c->ev[o], 0));
    return HR_OK;
}

/* The end of an overlapped sweep (after `mark`): the side streams wait for the interior
 * and for each other (parts of one or two rows share rows between the sides); the
 * interior waits only for the boundary sweeps (the marks), not for the copies and pulls
 * issued after them: the interior reads no ghost row, and a copy into a ghost row or out
 * of a boundary row is ordered with the next boundary sweep on its own stream. */
static hr_status gpu_settle(hr_place *p)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    gpu_place *c = GP(p);
    GP_CU(p, apply_pending(c, -1));
    for (int q = 0; q < 3; q++)
        GP_CU(p, cudaEventRecord(c->ev[q], c->st[q]));
    for (int s = 0; s < 3; s += 2) {
        GP_CU(p, cudaStreamWaitEvent(c->st[s], c->ev[1], 0));
        GP_CU(p, cudaStreamWaitEvent(c->st[s], c->ev[2 - s], 0));
    }
    GP_CU(p, cudaStreamWaitEvent(c->st[1], c->mark[0], 0));
    GP_CU(p, cudaStreamWaitEvent(c->st[1], c->mark[1], 0));
    return HR_OK;
}

static void gpu_swap(hr_place *p)
{
    GP(p)->g.dcur ^= 1;
}

static hr_status sync_all(hr_place *p)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    for (int q = 0; q < 3; q++)
        GP_CU(p, cudaStreamSynchronize(GP(p)->st[q]));
    return HR_OK;
}

/* Local rows [r0, r1) <-> the same rows of a global host grid (same pitch and plane). */
static char *host_row(const hr_place *p, const hr_grid *global, int r)
{
    const int gr = hr_subdomain_global(&p->spec.sd, p->spec.axis, r);
    return (char *)hr_grid_origin(global) +
           (size_t)(gr - p->spec.row0) * hr_layout_outer_stride(&global->l) * p->spec.esize;
}

static hr_status gpu_load(hr_place *p, const hr_grid *u, const hr_grid *hf)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    gpu_place *c = GP(p);
    hr_gpu *g = &c->g;
    HR_TRY(sync_all(p));
    const size_t bytes = g->alloc_elems * g->esize;
    const int rows = hr_layout_outer(&p->spec.sd.l);
    g->dcur = 0;
    c->hf_global = hf;
    GP_CU(p, cudaMemset(g->d_u[0], 0, bytes));
    if (u)
        GP_CU(p, cudaMemcpy(dev_row(p, c, 0, 0), host_row(p, u, 0), hr_place_rows_bytes(&p->spec, 0, rows),
                            cudaMemcpyHostToDevice));
    GP_CU(p, cudaMemcpy(g->d_u[1], g->d_u[0], bytes, cudaMemcpyDeviceToDevice));
    if (g->d_hf) {
        GP_CU(p, cudaMemset(g->d_hf, 0, bytes));
        if (hf)
            GP_CU(p, cudaMemcpy((char *)g->d_hf + g->offset * g->esize, host_row(p, hf, 0),
                                hr_place_rows_bytes(&p->spec, 0, rows), cudaMemcpyHostToDevice));
    }
    /* memsets, device copies and staged pageable copies run on the legacy stream, which
     * the non-blocking lanes do not wait for */
    GP_CU(p, cudaDeviceSynchronize());
    return HR_OK;
}

/* Rows [r0, r1) of the current grid into the global host grid. */
static hr_status download_rows(hr_place *p, hr_grid *global, int r0, int r1)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    gpu_place *c = GP(p);
    HR_TRY(gpu_order(p));
    GP_CU(p, cudaMemcpyAsync(host_row(p, global, r0), dev_row(p, c, 0, r0),
                             hr_place_rows_bytes(&p->spec, r0, r1), cudaMemcpyDeviceToHost, c->st[1]));
    return sync_all(p);
}

static hr_status gpu_download(hr_place *p, hr_grid *global)
{
    const hr_box *own = &p->spec.sd.own;
    return download_rows(p, global, own->lo[p->spec.axis], own->hi[p->spec.axis]);
}

/* Host residual over the own rows: the part with its ghost and ring rows goes into the
 * scratch grid first (a device residual over a box is future work). */
static hr_status gpu_residual(hr_place *p, hr_grid *scratch, hr_norm2 *r, hr_norm2 *b)
{
    const hr_place_spec *sp = &p->spec;
    gpu_place *c = GP(p);
    HR_TRY(download_rows(p, scratch, 0, hr_layout_outer(&sp->sd.l)));
    hr_box box = hr_box_interior(&scratch->l);
    box.lo[sp->axis] = hr_subdomain_global(&sp->sd, sp->axis, sp->sd.own.lo[sp->axis]) - sp->row0;
    box.hi[sp->axis] = hr_subdomain_global(&sp->sd, sp->axis, sp->sd.own.hi[sp->axis]) - sp->row0;
    hr_rhs_view rhs = {NULL, -1, -1, -1};
    if (sp->has_hf) {
        if (!c->hf_global) {
            snprintf(p->err, sizeof p->err, "hybrid gpu residual: no host right-hand side");
            return HR_ERR_INTERNAL;
        }
        rhs.hf = hr_grid_origin(c->hf_global);
    } else if (sp->spike.spike_i >= 0) {
        rhs.spike_j = hr_subdomain_global(&sp->sd, 0, sp->spike.spike_j);
        rhs.spike_i = hr_subdomain_global(&sp->sd, 1, sp->spike.spike_i);
        rhs.spike_k = hr_subdomain_global(&sp->sd, 2, sp->spike.spike_k);
        if (sp->axis == 2)
            rhs.spike_k -= sp->row0;
        else
            rhs.spike_i -= sp->row0;
    }
    /* the part's own physical faces only: the scratch may be a slab whose ring is a ghost */
    const hr_resid_args a = {&scratch->l, hr_grid_origin(scratch), rhs, box, sp->sd.dirichlet, NULL, NULL};
    hri_cpu_residual_box(&a, r, b);
    return HR_OK;
}

static void destroy_graphs(gpu_place *c)
{
    for (int q = 0; q < 2; q++)
        if (c->graph[q]) {
            cudaGraphExecDestroy(c->graph[q]);
            c->graph[q] = NULL;
        }
}

/* Captures GRAPH_SWEEPS sweeps of rows [r0, r1) from each parity (as the gpu backend's
 * graphs: launch gaps matter when a sweep takes tens of microseconds). */
static hr_status build_graphs(hr_place *p, int r0, int r1)
{
    gpu_place *c = GP(p);
    destroy_graphs(c);
    const int save = c->g.dcur;
    for (int par = 0; par < 2; par++) {
        cudaGraph_t graph = NULL;
        c->g.dcur = par;
        GP_CU(p, cudaStreamBeginCapture(c->st[1], cudaStreamCaptureModeThreadLocal));
        cudaError_t le = cudaSuccess;
        for (int q = 0; q < GRAPH_SWEEPS && le == cudaSuccess; q++) {
            le = c->g.dim == 3 ? hri_gpu_tuned3d_planes(&c->g, r0, r1, c->st[1])
                               : hri_gpu_tuned2d_rows(&c->g, r0, r1, c->st[1]);
            c->g.dcur ^= 1;
        }
        const cudaError_t ce = cudaStreamEndCapture(c->st[1], &graph);
        c->g.dcur = save;
        if (le != cudaSuccess) {
            if (graph) cudaGraphDestroy(graph);
            return gp_fail(p, le, "capture: region sweep", __FILE__, __LINE__);
        }
        GP_CU(p, ce);
        const cudaError_t ie = cudaGraphInstantiate(&c->graph[par], graph, 0);
        cudaGraphDestroy(graph);
        GP_CU(p, ie);
        GP_CU(p, cudaGraphUpload(c->graph[par], c->st[1]));
    }
    c->graph_r0 = r0;
    c->graph_r1 = r1;
    return HR_OK;
}

static hr_status gpu_sweeps(hr_place *p, int r0, int r1, long count)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    gpu_place *c = GP(p);
    if (count >= GRAPH_SWEEPS && (!c->graph[0] || c->graph_r0 != r0 || c->graph_r1 != r1))
        HR_TRY(build_graphs(p, r0, r1));
    for (; count >= GRAPH_SWEEPS; count -= GRAPH_SWEEPS)
        GP_CU(p, cudaGraphLaunch(c->graph[c->g.dcur], c->st[1]));
    for (; count > 0; count--) {
        HR_TRY(gpu_sweep(p, HR_LANE_INTERIOR, r0, r1));
        gpu_swap(p);
    }
    return HR_OK;
}

static void *gpu_host_alloc(hr_place *p, size_t bytes)
{
    (void)p;
    void *h = NULL;
    /* portable: a buffer may be copied by another device (two GPU parts) */
    if (cudaHostAlloc(&h, bytes, cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return h;
}

/* Page-locks a CPU part's rows for this device's copies (portable: for every device). */
static hr_status gpu_host_pin(hr_place *p, void *ptr, size_t bytes, int pin)
{
    const cudaError_t e =
        pin ? cudaHostRegister(ptr, bytes, cudaHostRegisterPortable) : cudaHostUnregister(ptr);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(p->err, sizeof p->err, "hybrid gpu: %s host rows: %s", pin ? "pinning" : "unpinning",
                 cudaGetErrorString(e));
        return HR_ERR_DEVICE;
    }
    return HR_OK;
}

static void gpu_host_free(hr_place *p, void *buf)
{
    (void)p;
    cudaFreeHost(buf);
}

static void gpu_destroy(hr_place *p)
{
    if (!p) return;
    gpu_place *c = GP(p);
    if (c) {
        cudaSetDevice(c->g.dev);
        destroy_graphs(c);
        for (int q = 0; q < 3; q++)
            if (c->st[q]) cudaStreamSynchronize(c->st[q]);
        for (int q = 0; q < 2; q++)
            cudaFree(c->g.d_u[q]);
        cudaFree(c->g.d_hf);
        for (int q = 0; q < 3; q++) {
            if (c->ev[q]) cudaEventDestroy(c->ev[q]);
            if (c->st[q]) cudaStreamDestroy(c->st[q]);
        }
        for (int q = 0; q < 2; q++)
            if (c->mark[q]) cudaEventDestroy(c->mark[q]);
        if (c->pulled) cudaEventDestroy(c->pulled);
        if (c->fork) cudaEventDestroy(c->fork);
        for (int q = 0; q < 2; q++)
            if (c->pushed[q]) cudaEventDestroy(c->pushed[q]);
        (void)cudaGetLastError();
        free(c);
    }
    free(p);
}

static const hr_place_ops gpu_ops = {"gpu",
                                     gpu_sweep,
                                     gpu_get,
                                     gpu_put,
                                     gpu_wait,
                                     gpu_order,
                                     gpu_swap,
                                     gpu_load,
                                     gpu_download,
                                     gpu_residual,
                                     gpu_host_alloc,
                                     gpu_host_free,
                                     gpu_destroy,
                                     gpu_sweeps,
                                     hri_gpu_place_link,
                                     hri_gpu_place_mark,
                                     hri_gpu_place_pull,
                                     hri_gpu_place_capture,
                                     hri_gpu_place_replay,
                                     hri_gpu_place_drop,
                                     gpu_settle,
                                     NULL,
                                     gpu_host_pin};

/* The tuned family's shape: the tuning cache, the shipped shapes, then the default. */
static hr_status choose_shape(hr_place *p, hr_gpu *g, const char *device)
{
    const hr_gpu_family *fam = g->fam;
    char why[160];
    hr_gpu_shape sh;
    if (hri_gpu_cache_lookup(g, device, &sh) && !fam->check(g, sh, why, sizeof why)) {
        g->shape_from = "cache";
    } else if (hri_gpu_shipped_lookup(g, &sh) && !fam->check(g, sh, why, sizeof why)) {
        g->shape_from = "shipped";
    } else {
        sh = fam->def[g->dbl];
        g->shape_from = "default";
        if (fam->check(g, sh, why, sizeof why)) {
            snprintf(p->err, sizeof p->err, "hybrid gpu: default shape: %s", why);
            return HR_ERR_INTERNAL;
        }
    }
    g->shape = sh;
    if (fam->prepare) GP_CU(p, fam->prepare(g));
    return HR_OK;
}

static hr_status setup(hr_place *p, gpu_place *c)
{
    const hr_place_spec *sp = &p->spec;
    const hr_grid_layout *l = &sp->sd.l;
    hr_gpu *g = &c->g;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        (void)cudaGetLastError();
        snprintf(p->err, sizeof p->err, "backend: hybrid needs a CUDA device");
        return HR_ERR_NO_DEVICE;
    }
    if (sp->device >= count) {
        snprintf(p->err, sizeof p->err, "device: ordinal %d, but %d CUDA device(s) present", sp->device,
                 count);
        return HR_ERR_NO_DEVICE;
    }
    g->dev = sp->device;
    GP_CU(p, cudaSetDevice(g->dev));
    cudaDeviceProp prop;
    GP_CU(p, cudaGetDeviceProperties(&prop, g->dev));
    snprintf(p->desc, sizeof p->desc, "%.95s", prop.name);
    g->fam = l->dim == 3 ? &hri_fam_tuned3d : &hri_fam_tuned;
    g->name = "tuned";
    g->caps = HR_CAP_DETERMINISTIC | HR_CAP_RECT | HR_CAP_OMEGA | (l->dim == 3 ? HR_CAP_3D : HR_CAP_2D);
    g->sms = prop.multiProcessorCount;
    g->cc_major = prop.major;
    g->cc_minor = prop.minor;
    g->smem_optin = prop.sharedMemPerBlockOptin;
    g->dim = l->dim;
    g->nx = g->n = l->nx;
    g->ny = l->ny;
    g->nz = l->nz;
    g->esize = sp->esize;
    g->dbl = sp->esize == 8;
    g->spike = sp->spike;
    g->spike.hf = NULL;
    g->omega = sp->omega;
    g->alpha = 1;
    g->pitch = l->pitch;
    g->offset = l->offset;
    g->plane = l->plane;
    g->alloc_elems = l->count + l->pitch; /* + the spare row the tuned kernels may read */
    const size_t bytes = g->alloc_elems * g->esize;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && bytes * (sp->has_hf ? 3 : 2) > free_b) {
        snprintf(p->err, sizeof p->err, "grid: %zu MiB of device grids do not fit the %zu MiB free on %.95s",
                 bytes * (sp->has_hf ? 3 : 2) >> 20, free_b >> 20, prop.name);
        return HR_ERR_NO_MEMORY;
    }
    for (int q = 0; q < 2; q++)
        GP_CU(p, cudaMalloc(&g->d_u[q], bytes));
    if (sp->has_hf) GP_CU(p, cudaMalloc(&g->d_hf, bytes));
    int least = 0, greatest = 0;
    GP_CU(p, cudaDeviceGetStreamPriorityRange(&least, &greatest));
    GP_CU(p, cudaStreamCreateWithPriority(&c->st[0], cudaStreamNonBlocking, greatest));
    GP_CU(p, cudaStreamCreateWithPriority(&c->st[1], cudaStreamNonBlocking, least));
    GP_CU(p, cudaStreamCreateWithPriority(&c->st[2], cudaStreamNonBlocking, greatest));
    for (int q = 0; q < 3; q++)
        GP_CU(p, cudaEventCreateWithFlags(&c->ev[q], cudaEventDisableTiming));
    for (int q = 0; q < 2; q++)
        GP_CU(p, cudaEventCreateWithFlags(&c->mark[q], cudaEventDisableTiming));
    GP_CU(p, cudaEventCreateWithFlags(&c->pulled, cudaEventDisableTiming));
    GP_CU(p, cudaEventCreateWithFlags(&c->fork, cudaEventDisableTiming));
    for (int q = 0; q < 2; q++)
        GP_CU(p, cudaEventCreateWithFlags(&c->pushed[q], cudaEventDisableTiming));
    c->push = sp->tune.peer_push > 0;
    g->stream = c->st[1];
    return choose_shape(p, g, prop.name);
}

hr_status hri_place_gpu_create(const hr_place_spec *spec, hr_place **out)
{
    *out = NULL;
    hr_place *p = (hr_place *)calloc(1, sizeof *p);
    gpu_place *c = p ? (gpu_place *)calloc(1, sizeof *c) : NULL;
    if (!c) {
        free(p);
        return HR_ERR_NO_MEMORY;
    }
    p->ops = &gpu_ops;
    p->spec = *spec;
    p->impl = c;
    const hr_status st = setup(p, c);
    if (st != HR_OK) {
        if (spec->s && p->err[0]) hri_solver_set_error(spec->s, "%s", p->err);
        gpu_destroy(p);
        return st;
    }
    *out = p;
    return HR_OK;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

hr_status hri_place_gpu_roundtrip(int device, size_t bytes, int repeats, double *seconds)
{
    *seconds = 0.0;
    if (repeats < 1 || repeats > 1000 || bytes < 1) return HR_ERR_INVALID_ARG;
    if (cudaSetDevice(device) != cudaSuccess) {
        (void)cudaGetLastError();
        return HR_ERR_NO_DEVICE;
    }
    void *d = NULL, *h = NULL;
    cudaStream_t st = NULL;
    double *t = (double *)calloc((size_t)repeats, sizeof *t);
    hr_status status = HR_ERR_DEVICE;
    if (t && cudaMalloc(&d, bytes) == cudaSuccess && cudaMallocHost(&h, bytes) == cudaSuccess &&
        cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess) {
        status = HR_OK;
        for (int r = -2; r < repeats && status == HR_OK; r++) {
            /* host clock: the host's wait is what a sweep pays */
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            if (cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, st) != cudaSuccess ||
                cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, st) != cudaSuccess ||
                cudaStreamSynchronize(st) != cudaSuccess)
                status = HR_ERR_DEVICE;
            clock_gettime(CLOCK_MONOTONIC, &b);
            if (r >= 0) t[r] = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        }
        if (status == HR_OK) {
            qsort(t, (size_t)repeats, sizeof *t, cmp_double);
            *seconds = t[repeats / 2];
        }
    }
    if (st) cudaStreamDestroy(st);
    cudaFree(d);
    if (h) cudaFreeHost(h);
    (void)cudaGetLastError();
    free(t);
    return status;
}
