/* What the GPU placement's files share (hybrid_gpu.cu: the placement and its sweeps;
 * hybrid_gpu_chain.cu: direct copies between GPU parts and the chain graphs). */
#ifndef HR_HYBRID_GPU_PLACE_CUH
#define HR_HYBRID_GPU_PLACE_CUH

#include <stdio.h>
#include <string.h>

#include "methods/jacobi/cuda/gpu_region.h"
#include "parallel/hybrid/cuda/hybrid_gpu.h"
#include "runtime/cuda/gpu_internal.cuh"

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
    /* tuning.peer_push on: a direct copy runs on the SOURCE's side stream right after
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
static inline hr_status gp_fail(hr_place *p, cudaError_t e, const char *call, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    snprintf(p->err, sizeof p->err, "%.120s failed at %s:%d: %s: %s", call, base ? base + 1 : file, line,
             cudaGetErrorName(e), cudaGetErrorString(e));
    return hri_cuda_fail(p->spec.s, e, call, file, line);
}

#define GP_CU(p, call)                                                                                       \
    do {                                                                                                     \
        cudaError_t gp_e_ = (call);                                                                          \
        if (gp_e_ != cudaSuccess) return gp_fail((p), gp_e_, #call, __FILE__, __LINE__);                     \
    } while (0)

static inline gpu_place *GP(hr_place *p)
{
    return (gpu_place *)p->impl;
}

/* The side of the part that row r belongs to: rows below the middle of the own rows
 * (and the low ghost rows) are the low side's. A part of one row is all low side, so a
 * boundary row's sweep, copies and pulls always share one stream. */
static inline int side_of(const hr_place *p, int r)
{
    const int lo = p->spec.sd.own.lo[p->spec.axis], hi = p->spec.sd.own.hi[p->spec.axis];
    return r < lo + (hi - lo + 1) / 2 ? 0 : 1;
}

/* The stream of a lane's work on rows from r0. */
static inline cudaStream_t lane_stream(hr_place *p, int lane, int r0)
{
    return GP(p)->st[lane == HR_LANE_INTERIOR ? 1 : side_of(p, r0) ? 2 : 0];
}

/* Push mode: the side stream `side` (or both, side < 0) waits for the rows pushed into
 * its ghost rows (device already set). */
static inline cudaError_t apply_pending(gpu_place *c, int side)
{
    for (int s = 0; s < 2; s++)
        if (c->pending[s] && (side < 0 || side == s)) {
            const cudaError_t e = cudaStreamWaitEvent(c->st[s ? 2 : 0], c->pending[s], 0);
            if (e != cudaSuccess) return e;
            c->pending[s] = NULL;
        }
    return cudaSuccess;
}

static inline char *dev_row(const hr_place *p, const gpu_place *c, int which, int r)
{
    const hr_gpu *g = &c->g;
    const int grid = which ? 1 - g->dcur : g->dcur;
    return (char *)g->d_u[grid] + (g->offset + hr_place_row_offset(&p->spec, r)) * g->esize;
}

/* hybrid_gpu_chain.cu: the place.h ops for direct copies and chain graphs. */
int hri_gpu_place_link(hr_place *p, hr_place *other, char *why, size_t why_size);
hr_status hri_gpu_place_mark(hr_place *p);
hr_status hri_gpu_place_pull(hr_place *p, int which, int r0, int r1, hr_place *src, int s0, int fence);
hr_status hri_gpu_place_capture(hr_place **parts, int n, int begin, void **graph);
hr_status hri_gpu_place_replay(hr_place **parts, int n, void *graph);
void hri_gpu_place_drop(void *graph);

#endif
