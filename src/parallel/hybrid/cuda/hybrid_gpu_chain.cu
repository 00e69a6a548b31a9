/* The GPU placement's direct copies between GPU parts (peer access, or two parts on one
 * GPU: link, mark, pull and the push mode) and the chain graphs of whole sweeps of many GPU
 * parts (capture, replay, drop); see hybrid/place.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/hybrid/cuda/hybrid_gpu_place.cuh"

/* Peer access both ways between the two parts' GPUs, or one GPU. */
int hri_gpu_place_link(hr_place *p, hr_place *other, char *why, size_t why_size)
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

hr_status hri_gpu_place_mark(hr_place *p)
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
hr_status hri_gpu_place_pull(hr_place *p, int which, int r0, int r1, hr_place *src, int s0, int fence)
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

hr_status hri_gpu_place_capture(hr_place **parts, int n, int begin, void **graph)
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
                                         "cudaStreamEndCapture (chain)", __FILE__, __LINE__);
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
        return gp_fail(parts[0], ue, "cudaGraphUpload (chain)", __FILE__, __LINE__);
    }
    *graph = (void *)exec;
    return HR_OK;
}

/* The graph runs on the origin after every stream's earlier work, and every stream's later
 * work follows it. */
hr_status hri_gpu_place_replay(hr_place **parts, int n, void *graph)
{
    gpu_place *c0 = GP(parts[0]);
    HR_TRY(fork_join(parts, n, 1));
    GP_CU(parts[0], cudaSetDevice(c0->g.dev));
    GP_CU(parts[0], cudaGraphLaunch((cudaGraphExec_t)graph, c0->st[1]));
    return fork_join(parts, n, 0);
}

void hri_gpu_place_drop(void *graph)
{
    cudaGraphExecDestroy((cudaGraphExec_t)graph);
    (void)cudaGetLastError();
}
