/* The GPU placement of the hybrid split (see hybrid_gpu.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/stencil_cpu.h"
#include "cuda/gpu_internal.cuh"
#include "cuda/gpu_region.h"
#include "cuda/hybrid_gpu.h"

typedef struct gpu_place {
    hr_gpu g; /* the region sweeps' state over the local layout */
    /* 0: the low side's boundary rows, copies and pulls (high priority); 1: the interior
     * (low priority); 2: the high side's (high priority). Lane 0 is streams 0 and 2. */
    cudaStream_t st[3];
    cudaEvent_t ev[3];   /* order */
    cudaEvent_t mark[2]; /* per side: the boundary work pulls from this part wait for */
    cudaEvent_t pulled;  /* a fenced pull's copy, waited for by the source's streams */
    cudaEvent_t fork;    /* chain graphs: part 0's interior stream, forked from and joined to */
    int capturing;       /* chain graph capture under way (pulls use a capturable copy) */
    /* HETRELAX_PEER_PUSH=1: a direct copy runs on the SOURCE's side stream right after
     * its boundary sweep (the source pushes), records pushed[side], and the receiver's
     * side stream waits for that event at its next settle/order/op on that stream
     * (pending[side]), so neither part's push waits behind the other's */
    int push;
    cudaEvent_t pushed[2];
    cudaEvent_t pending[2];
    const hr_grid *hf_global; /* the host right-hand side (for the host residual) */
    cudaGraphExec_t graph[2]; /* GRAPH_SWEEPS whole sweeps from parity 0 / 1 (a part alone) */
    int graph_r0, graph_r1;   /* the rows they sweep */
} gpu_place;

/* Sweeps per graph replay (even: a replay ends on the parity it began on). */
#define GRAPH_SWEEPS 16

/* A failed CUDA call: "call failed at file:line: ..." into the placement (and solver). */
static hr_status gp_fail(hr_place *p, cudaError_t e, const char *call, int line)
{
    snprintf(p->err, sizeof p->err, "%.120s failed at hybrid_gpu.cu:%d: %s: %s", call, line,
             cudaGetErrorName(e), cudaGetErrorString(e));
    return hr_cuda_fail(p->spec.s, e, call, __FILE__, line);
}

#define GP_CU(p, call)                                                                                       \
    do {                                                                                                     \
        cudaError_t gp_e_ = (call);                                                                          \
        if (gp_e_ != cudaSuccess) return gp_fail((p), gp_e_, #call, __LINE__);                               \
    } while (0)

static gpu_place *GP(hr_place *p)
{
    return (gpu_place *)p->impl;
}

/* The side of the part that row r belongs to: rows below the middle of the own rows
 * (and the low ghost rows) are the low side's. A part of one row is all low side, so a
 * boundary row's sweep, copies and pulls always share one stream. */
static int side_of(const hr_place *p, int r)
{
    const int lo = p->spec.sd.own.lo[p->spec.axis], hi = p->spec.sd.own.hi[p->spec.axis];
    return r < lo + (hi - lo + 1) / 2 ? 0 : 1;
}

/* The stream of a lane's work on rows from r0. */
static cudaStream_t lane_stream(hr_place *p, int lane, int r0)
{
    return GP(p)->st[lane == HR_LANE_INTERIOR ? 1 : side_of(p, r0) ? 2 : 0];
}

/* Push mode: the side stream `side` (or both, side < 0) waits for the rows pushed into
 * its ghost rows (device already set). */
static cudaError_t apply_pending(gpu_place *c, int side)
{
    for (int s = 0; s < 2; s++)
        if (c->pending[s] && (side < 0 || side == s)) {
            const cudaError_t e = cudaStreamWaitEvent(c->st[s ? 2 : 0], c->pending[s], 0);
            if (e != cudaSuccess) return e;
            c->pending[s] = NULL;
        }
    return cudaSuccess;
}

static char *dev_row(const hr_place *p, const gpu_place *c, int which, int r)
{
    const hr_gpu *g = &c->g;
    const int grid = which ? 1 - g->dcur : g->dcur;
    return (char *)g->d_u[grid] + (g->offset + hr_place_row_offset(&p->spec, r)) * g->esize;
}

static hr_status gpu_sweep(hr_place *p, int lane, int r0, int r1)
{
    GP_CU(p, cudaSetDevice(GP(p)->g.dev));
    gpu_place *c = GP(p);
    if (r1 <= r0) return HR_OK;
    const cudaStream_t st = lane_stream(p, lane, r0);
    if (lane != HR_LANE_INTERIOR) GP_CU(p, apply_pending(c, side_of(p, r0)));
    if (c->g.dim == 3)
        GP_CU(p, hr_gpu_tuned3d_planes(&c->g, r0, r1, st));
    else
        GP_CU(p, hr_gpu_tuned2d_rows(&c->g, r0, r1, st));
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
    const hr_resid_args a = {&scratch->l, hr_grid_origin(scratch), rhs, box, sp->sd.dirichlet, NULL};
    hr_cpu_residual_box(&a, r, b);
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
            le = c->g.dim == 3 ? hr_gpu_tuned3d_planes(&c->g, r0, r1, c->st[1])
                               : hr_gpu_tuned2d_rows(&c->g, r0, r1, c->st[1]);
            c->g.dcur ^= 1;
        }
        const cudaError_t ce = cudaStreamEndCapture(c->st[1], &graph);
        c->g.dcur = save;
        if (le != cudaSuccess) {
            if (graph) cudaGraphDestroy(graph);
            return gp_fail(p, le, "capture: region sweep", __LINE__);
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

/* Peer access both ways between the two parts' GPUs, or one GPU. */
static int gpu_link(hr_place *p, hr_place *other, char *why, size_t why_size)
{
    const int a = GP(p)->g.dev, b = GP(other)->g.dev;
    if (a == b) return HR_LINK_DEVICE;
    int ab = 0, ba = 0;
    if (cudaDeviceCanAccessPeer(&ab, a, b) != cudaSuccess ||
        cudaDeviceCanAccessPeer(&ba, b, a) != cudaSuccess || !ab || !ba) {
        (void)cudaGetLastError();
        snprintf(why, why_size, "no peer access between GPUs %d and %d", a, b);
        return HR_LINK_HOST;
    }
    for (int d = 0; d < 2; d++) {
        const int from = d ? b : a, to = d ? a : b;
        cudaError_t e = cudaSetDevice(from);
        if (e == cudaSuccess) e = cudaDeviceEnablePeerAccess(to, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
            (void)cudaGetLastError();
        } else if (e != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(why, why_size, "enabling peer access %d -> %d: %s", from, to, cudaGetErrorName(e));
            return HR_LINK_HOST;
        }
    }
    return HR_LINK_PEER;
}

static hr_status gpu_mark(hr_place *p)
{
    gpu_place *c = GP(p);
    GP_CU(p, cudaSetDevice(c->g.dev));
    GP_CU(p, cudaEventRecord(c->mark[0], c->st[0]));
    GP_CU(p, cudaEventRecord(c->mark[1], c->st[2]));
    return HR_OK;
}

/* Push mode: the copy on the source's side stream of the rows (after its boundary sweep
 * there), not after the source's pending waits (those are for its own ghost rows); the
 * receiver waits for it later (pending). */
static hr_status gpu_push(hr_place *p, int which, int r0, int r1, hr_place *src, int s0, int fence)
{
    gpu_place *c = GP(p), *sc = GP(src);
    const int ss = side_of(src, s0), ds = side_of(p, r0);
    const cudaStream_t sst = sc->st[ss ? 2 : 0];
    const size_t bytes = hr_place_rows_bytes(&p->spec, r0, r1);
    GP_CU(p, cudaSetDevice(c->g.dev));
    GP_CU(p, apply_pending(c, ds)); /* one push per ghost side per exchange; defensive */
    GP_CU(p, cudaSetDevice(sc->g.dev));
    /* a fenced exchange (ghost > 1, residuals) follows sweeps of the receiver that read
     * its ghost rows: wait for them (its mark after `order`); the ghost-1 sweep needs no
     * wait: the receiver's last reader of these rows, two sweeps back, came before its own
     * push that the source's boundary sweep waited for */
    if (fence) GP_CU(p, cudaStreamWaitEvent(sst, c->mark[ds], 0));
    if (c->g.dev == sc->g.dev)
        GP_CU(p, cudaMemcpyAsync(dev_row(p, c, which, r0), dev_row(src, sc, which, s0), bytes,
                                 cudaMemcpyDeviceToDevice, sst));
    else if (c->capturing || sc->capturing)
        GP_CU(p, cudaMemcpyAsync(dev_row(p, c, which, r0), dev_row(src, sc, which, s0), bytes,
                                 cudaMemcpyDefault, sst));
    else
        GP_CU(p, cudaMemcpyPeerAsync(dev_row(p, c, which, r0), c->g.dev, dev_row(src, sc, which, s0),
                                     sc->g.dev, bytes, sst));
    GP_CU(p, cudaEventRecord(sc->pushed[ss], sst));
    if (fence) /* the source's other streams too */
        for (int q = 0; q < 3; q++)
            if (sc->st[q] != sst) GP_CU(p, cudaStreamWaitEvent(sc->st[q], sc->pushed[ss], 0));
    GP_CU(p, cudaSetDevice(c->g.dev));
    c->pending[ds] = sc->pushed[ss];
    return HR_OK;
}

/* The copy runs on the receiving part's side stream, so its next boundary sweep (same
 * stream) follows it without an event; it starts once the source's boundary rows are
 * swept (the source's mark, waited for by cudaStreamWaitEvent across devices). */
static hr_status gpu_pull(hr_place *p, int which, int r0, int r1, hr_place *src, int s0, int fence)
{
    gpu_place *c = GP(p), *sc = GP(src);
    if (c->push) return gpu_push(p, which, r0, r1, src, s0, fence);
    const cudaStream_t st = lane_stream(p, HR_LANE_BOUNDARY, r0);
    const size_t bytes = hr_place_rows_bytes(&p->spec, r0, r1);
    GP_CU(p, cudaSetDevice(c->g.dev));
    GP_CU(p, apply_pending(c, side_of(p, r0)));
    GP_CU(p, cudaStreamWaitEvent(st, sc->mark[side_of(src, s0)], 0));
    if (c->g.dev == sc->g.dev)
        GP_CU(p, cudaMemcpyAsync(dev_row(p, c, which, r0), dev_row(src, sc, which, s0), bytes,
                                 cudaMemcpyDeviceToDevice, st));
    else if (c->capturing) /* cudaMemcpyPeerAsync is not captured; with peer access on,
                               a unified-address copy is the same peer copy */
        GP_CU(p, cudaMemcpyAsync(dev_row(p, c, which, r0), dev_row(src, sc, which, s0), bytes,
                                 cudaMemcpyDefault, st));
    else
        GP_CU(p, cudaMemcpyPeerAsync(dev_row(p, c, which, r0), c->g.dev, dev_row(src, sc, which, s0),
                                     sc->g.dev, bytes, st));
    if (fence) {
        GP_CU(p, cudaEventRecord(c->pulled, st));
        GP_CU(p, cudaSetDevice(sc->g.dev));
        for (int q = 0; q < 3; q++)
            GP_CU(p, cudaStreamWaitEvent(sc->st[q], c->pulled, 0));
    }
    return HR_OK;
}

/* Chain graphs: every stream of every part forks from part 0's interior stream (the
 * origin) and joins it again, so the capture holds the whole multi-GPU dependency graph
 * (kernels on each device, peer copies, the events between them). */
static hr_status fork_join(hr_place **parts, int n, int join)
{
    gpu_place *c0 = GP(parts[0]);
    const cudaStream_t origin = c0->st[1];
    if (!join) {
        GP_CU(parts[0], cudaSetDevice(c0->g.dev));
        GP_CU(parts[0], cudaEventRecord(c0->fork, origin));
    }
    for (int q = 0; q < n; q++) {
        gpu_place *c = GP(parts[q]);
        for (int s = 0; s < 3; s++) {
            if (q == 0 && s == 1) continue;
            GP_CU(parts[q], cudaSetDevice(c->g.dev));
            if (!join) {
                GP_CU(parts[q], cudaStreamWaitEvent(c->st[s], c0->fork, 0));
            } else {
                GP_CU(parts[q], cudaEventRecord(c->ev[s], c->st[s]));
                GP_CU(parts[q], cudaSetDevice(c0->g.dev));
                GP_CU(parts[q], cudaStreamWaitEvent(origin, c->ev[s], 0));
            }
        }
    }
    return HR_OK;
}

static void set_capturing(hr_place **parts, int n, int on)
{
    for (int q = 0; q < n; q++) {
        GP(parts[q])->capturing = on;
        /* a push's wait left over from a capture that failed midway refers to a captured
         * record: dropped (a finished sweep has none left) */
        GP(parts[q])->pending[0] = GP(parts[q])->pending[1] = NULL;
    }
}

static hr_status gpu_capture(hr_place **parts, int n, int begin, void **graph)
{
    gpu_place *c0 = GP(parts[0]);
    const cudaStream_t origin = c0->st[1];
    if (begin) {
        GP_CU(parts[0], cudaSetDevice(c0->g.dev));
        GP_CU(parts[0], cudaStreamBeginCapture(origin, cudaStreamCaptureModeRelaxed));
        set_capturing(parts, n, 1);
        const hr_status st = fork_join(parts, n, 0);
        if (st != HR_OK) {
            cudaGraph_t g = NULL;
            cudaSetDevice(c0->g.dev);
            if (cudaStreamEndCapture(origin, &g) == cudaSuccess && g) cudaGraphDestroy(g);
            (void)cudaGetLastError();
            set_capturing(parts, n, 0);
        }
        return st;
    }
    *graph = NULL;
    set_capturing(parts, n, 0);
    const hr_status joined = fork_join(parts, n, 1);
    cudaGraph_t g = NULL;
    cudaSetDevice(c0->g.dev);
    const cudaError_t ce = cudaStreamEndCapture(origin, &g);
    if (joined != HR_OK || ce != cudaSuccess || !g) {
        if (g) cudaGraphDestroy(g);
        (void)cudaGetLastError();
        return joined != HR_OK ? joined
                               : gp_fail(parts[0], ce != cudaSuccess ? ce : cudaErrorUnknown,
                                         "cudaStreamEndCapture (chain)", __LINE__);
    }
    cudaGraphExec_t exec = NULL;
    /* node priorities: without the flag every kernel of the graph runs at the priority
     * of the stream it is launched into (part 0's low-priority interior stream), and the
     * boundary sweeps queue behind the interior's blocks (the likely cause of run c2: peer 20 us per
     * sweep slower than host-staged) */
    cudaError_t ie = cudaGraphInstantiateWithFlags(&exec, g, cudaGraphInstantiateFlagUseNodePriority);
    if (ie != cudaSuccess) { /* a driver without node priorities: the graph as before */
        (void)cudaGetLastError();
        ie = cudaGraphInstantiate(&exec, g, 0);
    }
    cudaGraphDestroy(g);
    GP_CU(parts[0], ie);
    const cudaError_t ue = cudaGraphUpload(exec, origin);
    if (ue != cudaSuccess) {
        cudaGraphExecDestroy(exec);
        return gp_fail(parts[0], ue, "cudaGraphUpload (chain)", __LINE__);
    }
    *graph = (void *)exec;
    return HR_OK;
}

/* The graph runs on the origin after every stream's earlier work, and every stream's later
 * work follows it. */
static hr_status gpu_replay(hr_place **parts, int n, void *graph)
{
    gpu_place *c0 = GP(parts[0]);
    HR_TRY(fork_join(parts, n, 1));
    GP_CU(parts[0], cudaSetDevice(c0->g.dev));
    GP_CU(parts[0], cudaGraphLaunch((cudaGraphExec_t)graph, c0->st[1]));
    return fork_join(parts, n, 0);
}

static void gpu_drop(void *graph)
{
    cudaGraphExecDestroy((cudaGraphExec_t)graph);
    (void)cudaGetLastError();
}

static const hr_place_ops gpu_ops = {
    "gpu",    gpu_sweep,    gpu_get,      gpu_put,        gpu_wait,      gpu_order,   gpu_swap,
    gpu_load, gpu_download, gpu_residual, gpu_host_alloc, gpu_host_free, gpu_destroy, gpu_sweeps,
    gpu_link, gpu_mark,     gpu_pull,     gpu_capture,    gpu_replay,    gpu_drop,    gpu_settle};

/* The tuned family's shape: the tuning cache, the shipped shapes, then the default. */
static hr_status choose_shape(hr_place *p, hr_gpu *g, const char *device)
{
    const hr_gpu_family *fam = g->fam;
    char why[160];
    hr_gpu_shape sh;
    if (hr_gpu_cache_lookup(g, device, &sh) && !fam->check(g, sh, why, sizeof why)) {
        g->shape_from = "cache";
    } else if (hr_gpu_shipped_lookup(g, &sh) && !fam->check(g, sh, why, sizeof why)) {
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
    g->fam = l->dim == 3 ? &hr_fam_tuned3d : &hr_fam_tuned;
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
    const char *push = getenv("HETRELAX_PEER_PUSH");
    c->push = push && strcmp(push, "1") == 0;
    g->stream = c->st[1];
    return choose_shape(p, g, prop.name);
}

hr_status hr_place_gpu_create(const hr_place_spec *spec, hr_place **out)
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
        if (spec->s && p->err[0]) hr_solver_set_error(spec->s, "%s", p->err);
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

hr_status hr_place_gpu_roundtrip(int device, size_t bytes, int repeats, double *seconds)
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
