/*
 * Red-black on several GPUs (rb-mgpu, --gpus N; rb-2gpu: N = 2): the rows cut into N slabs,
 * slab d on device --device + d. Every scheme is bitwise equal to one GPU (and rb-seq).
 *
 * Stream (the default, redblack_gpu2_stream.cuh): each slab runs rb-tuned's out-of-place
 * streaming pass and keeps two ghost rows of each neighbour's OLD iterate, so one iteration
 * needs one exchange (2 rows each way per cut, peer copies beside the bulk) and no exchange
 * between the colours; the first ghost row's colour 0 is recomputed redundantly. Shape:
 * rb-tuned's (knob tuning.rb2_shape BXxBYxH, else the tuning cache's / shipped rb-tuned shape
 * for one slab, else 128x17x8); tuning.rb2_srows: rows of a strip next to a neighbour (2);
 * tuning.rb2_graph K: K iterations per CUDA graph launch (0, the default: direct launches).
 * tuning.rb2_one puts every slab on device --device (tests the code path on one GPU).
 *
 * Two in-place schemes, one ghost row and an exchange after EACH colour, for comparison on
 * two GPUs only (redblack_gpu2_inplace.cuh): tuning.rb2_old (fused) and tuning.rb2_v1 (v1).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "methods/redblack/cuda/redblack_gpu.h"
#include "methods/redblack/cuda/redblack_point.cuh"
#include "methods/redblack/cuda/redblack_stream.cuh"

#include "methods/redblack/cuda/redblack_gpu2_state.cuh"

#define RB2_CU(call)                                                                                         \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            if (err && err_size)                                                                             \
                snprintf(err, err_size, "%s failed at %s:%d: %s", #call, __FILE__, __LINE__,                 \
                         cudaGetErrorString(e_));                                                            \
            return e_ == cudaErrorMemoryAllocation ? HR_ERR_NO_MEMORY : HR_ERR_DEVICE;                       \
        }                                                                                                    \
    } while (0)

static double rb2_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The byte offset of local row r. */
static char *rb2_row(const hr_gpu_rb2 *G, void *base, int r)
{
    return (char *)base + (G->p.offset + (size_t)r * G->p.pitch) * G->p.esize;
}

/* The 2-row exchange by a kernel of the receiving GPU reading the sender's memory (peer
 * access, or one device): always capturable into a graph, where a peer memcpy may not be. */
template <typename T> __global__ void rb2_copy_kernel(T *dst, const T *src, size_t n)
{
    for (size_t x = blockIdx.x * (size_t)blockDim.x + threadIdx.x; x < n; x += (size_t)gridDim.x * blockDim.x)
        dst[x] = src[x];
}

/* bytes from src (slab o's device) to dst (slab d's device) on d's stream st. */
static cudaError_t rb2_copy_rows(const hr_gpu_rb2 *G, int d, int o, void *dst, const void *src, size_t bytes,
                                 cudaStream_t st)
{
    if (!G->copy_kernel) return cudaMemcpyPeerAsync(dst, G->dev[d], src, G->dev[o], bytes, st);
    const size_t n = bytes / sizeof(float); /* rows are whole multiples of 4 bytes */
    rb2_copy_kernel<float><<<(unsigned)((n + 255) / 256 < 64 ? (n + 255) / 256 : 64), 256, 0, st>>>(
        (float *)dst, (const float *)src, n);
    return cudaGetLastError();
}

#include "methods/redblack/cuda/redblack_gpu2_inplace.cuh"
#include "methods/redblack/cuda/redblack_gpu2_stream.cuh"

extern "C" hr_status hri_gpu_rb2_create(const hr_gpu_rb_params *p, void *u_host, hr_gpu_rb2 **out, char *name,
                                       size_t name_size, double *h2d_seconds, char *err, size_t err_size)
{
    *out = NULL;
    const int ng = p->gpus;
    if (p->dim != 2 || ng < 2 || ng > RB2_MAX) {
        if (err && err_size)
            snprintf(err, err_size, "kernel: red-black on GPUs runs 2-D grids on 2..%d GPUs", RB2_MAX);
        return HR_ERR_INVALID_ARG;
    }
    const hr_tuning *tu = &p->tune;
    const int mode = tu->rb2_v1 > 0 ? RB2_V1 : tu->rb2_old > 0 ? RB2_FUSED : RB2_STREAM;
    if (mode != RB2_STREAM && ng != 2) {
        if (err && err_size)
            snprintf(err, err_size, "gpus: %s (the in-place scheme) runs on 2 GPUs only, not %d",
                     mode == RB2_V1 ? "tuning.rb2_v1" : "tuning.rb2_old", ng);
        return HR_ERR_INVALID_ARG;
    }
    if (p->ny < (ng > 2 ? 2 * ng - 2 : 2)) { /* slabs of 1 row at the ends, 2 (even counts) inside */
        if (err && err_size)
            snprintf(err, err_size, "ny: red-black on %d GPUs needs at least %d rows, not %d", ng,
                     ng > 2 ? 2 * ng - 2 : 2, p->ny);
        return HR_ERR_INVALID_ARG;
    }
    const int one = tu->rb2_one > 0; /* every slab on one GPU: the code path, not the speed */
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < p->device + (one ? 1 : ng)) {
        if (err && err_size) {
            if (one)
                snprintf(err, err_size, "device: no CUDA device %d (%d present)", p->device, count);
            else
                snprintf(err, err_size,
                         "gpus: red-black on %d GPUs needs devices %d..%d, %d CUDA device(s) present", ng,
                         p->device, p->device + ng - 1, count);
        }
        return HR_ERR_NO_DEVICE;
    }
    hr_gpu_rb2 *G = (hr_gpu_rb2 *)calloc(1, sizeof *G);
    if (!G) return HR_ERR_NO_MEMORY;
    *out = G; /* freed by hri_gpu_rb2_free on any failure below */
    G->p = *p;
    G->ng = ng;
    G->one = one;
    G->mode = mode;
    for (int d = 0; d < ng; d++)
        G->dev[d] = p->device + (one ? 0 : d);
    const int kcopy = tu->rb2_kcopy > 0; /* the exchange by a kernel without graphs too */
    const int *shape = tu->rb2_shape;
    const int shape_given = shape[0] > 0 || shape[1] > 0 || shape[2] > 0;
    if (G->mode == RB2_STREAM) {
        /* rb-tuned's default shape (128 threads, overlapped warps, strips of 8 rows) */
        G->bx = 128;
        G->by = 1 + RB_STREAM_OVL;
        G->h = 8;
        G->srows = 2;
        if (shape_given) {
            if (!(shape[0] > 0 && shape[1] > 0 && shape[2] > 0)) {
                if (err && err_size)
                    snprintf(err, err_size,
                             "tuning.rb2_shape: %dx%dx%d is not BXxBYxH (the streaming scheme)", shape[0],
                             shape[1], shape[2]);
                return HR_ERR_INVALID_ARG;
            }
            G->bx = shape[0];
            G->by = shape[1];
            G->h = shape[2];
        }
        cudaDeviceProp dp;
        int sh[3];
        const char *from = NULL;
        char why[160];
        /* else rb-tuned's shape for one slab from the tuning cache / shipped table, if it runs */
        if (!shape_given && cudaGetDeviceProperties(&dp, p->device) == cudaSuccess &&
            hri_gpu_rb_shape_lookup(tu, p->device, dp.name, "rb-tuned", p->esize == 8, p->nx, p->ny / ng, sh,
                                   &from) &&
            !rb_stream_check(sh[0], sh[1], sh[2], why, sizeof why)) {
            G->bx = sh[0];
            G->by = sh[1];
            G->h = sh[2];
        }
        if (rb_stream_check(G->bx, G->by, G->h, err, err_size)) return HR_ERR_INVALID_ARG;
        if (tu->rb2_srows) G->srows = tu->rb2_srows; /* >= 2 (hri_tuning_validate) */
        G->graph_k = tu->rb2_graph;                  /* even, 0..1000 (hri_tuning_validate) */
        if (rb2s_layout(G)) {                        /* checked above: not reached */
            if (err && err_size)
                snprintf(err, err_size, "ny: %d rows cannot be cut into %d slabs", p->ny, ng);
            return HR_ERR_INVALID_ARG;
        }
    } else {
        G->bx = 128;
        G->h = 64;
        if (shape_given) {
            if (shape[0] < 1 || shape[0] > 1024 || shape[1] != 0 || shape[2] < 2) {
                if (err && err_size)
                    snprintf(
                        err, err_size,
                        "tuning.rb2_shape: %dx%dx%d is not BX x 0 x H (the in-place schemes: BX <= 1024, "
                        "H >= 2)",
                        shape[0], shape[1], shape[2]);
                return HR_ERR_INVALID_ARG;
            }
            G->bx = shape[0];
            G->h = shape[2];
        }
        const int m = p->ny / 2;
        G->lo[0] = 1;
        G->hi[0] = m;
        G->lo[1] = m + 1;
        G->hi[1] = p->ny;
        for (int d = 0; d < 2; d++) {
            G->ioff[d] = G->lo[d] - 1;
            G->nrows[d] = G->hi[d] - G->lo[d] + 3;
        }
    }
    const size_t es = p->esize;
    G->peer = 1;
    for (int d = 0; d < ng; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        /* the neighbours' memory: the copies, the copy kernel */
        for (int o = d - 1; o <= d + 1 && !one; o += 2) {
            if (o < 0 || o >= ng) continue;
            int can = 0;
            RB2_CU(cudaDeviceCanAccessPeer(&can, G->dev[d], G->dev[o]));
            G->peer = G->peer && can;
            if (!can) continue;
            cudaError_t e = cudaDeviceEnablePeerAccess(G->dev[o], 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                cudaGetLastError();
            else
                RB2_CU(e);
        }
        int least = 0, greatest = 0;
        RB2_CU(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        RB2_CU(cudaStreamCreateWithPriority(&G->st[d], cudaStreamNonBlocking, greatest));
        RB2_CU(cudaStreamCreateWithPriority(&G->low[d], cudaStreamNonBlocking, least));
        RB2_CU(cudaEventCreateWithFlags(&G->main_b[d], cudaEventDisableTiming));
        RB2_CU(cudaEventCreateWithFlags(&G->ring_b[d], cudaEventDisableTiming));
        RB2_CU(cudaEventCreateWithFlags(&G->bulk[d], cudaEventDisableTiming));
        RB2_CU(cudaEventRecord(G->bulk[d], G->low[d])); /* the first iteration's wait */
        for (int q = 0; q < 2; q++) { /* recorded once: the first iteration's waits, a slab without I */
            RB2_CU(cudaEventCreateWithFlags(&G->ev_s[d][q], cudaEventDisableTiming));
            RB2_CU(cudaEventCreateWithFlags(&G->ev_i[d][q], cudaEventDisableTiming));
            RB2_CU(cudaEventRecord(G->ev_s[d][q], G->st[d]));
            RB2_CU(cudaEventRecord(G->ev_i[d][q], G->low[d]));
        }
        /* join x on the device of its stream (rb2s_stream): low[0]; st[d], low[d] */
        for (int x = d == 0 ? 0 : 2 * d - 1; x <= 2 * d; x++)
            RB2_CU(cudaEventCreateWithFlags(&G->join[x], cudaEventDisableTiming));
        if (d == 0) RB2_CU(cudaEventCreateWithFlags(&G->fork, cudaEventDisableTiming));
        RB2_CU(cudaEventCreateWithFlags(&G->kern[d], cudaEventDisableTiming));
        RB2_CU(cudaEventCreateWithFlags(&G->copy[d], cudaEventDisableTiming));
        /* + a spare row: rb_stream's 16-byte words may read past the last boundary column */
        const size_t bytes = (p->offset + ((size_t)G->nrows[d] + 1) * p->pitch) * es;
        /* fills and copies on st[d], before the upload there: on the legacy default stream
         * (cudaMemset, cudaMemcpy) they would not be ordered with st[d], and a late fill could
         * zero the uploaded grid */
        for (int q = 0; q < (G->mode == RB2_STREAM ? 2 : 1); q++) {
            RB2_CU(cudaMalloc(&G->d_g[d][q], bytes));
            RB2_CU(cudaMemsetAsync(G->d_g[d][q], 0, bytes, G->st[d]));
        }
        if (p->hf_host) {
            RB2_CU(cudaMalloc(&G->d_hf[d], bytes));
            RB2_CU(cudaMemsetAsync(G->d_hf[d], 0, bytes, G->st[d]));
            const char *src = (const char *)p->hf_host + (p->offset + (size_t)G->ioff[d] * p->pitch) * es;
            RB2_CU(cudaMemcpyAsync(rb2_row(G, G->d_hf[d], 0), src, (size_t)G->nrows[d] * p->pitch * es,
                                   cudaMemcpyHostToDevice, G->st[d]));
        }
    }
    if (one) G->peer = 1; /* one device reads its own memory */
    cudaDeviceProp prop;
    RB2_CU(cudaGetDeviceProperties(&prop, G->dev[0]));
    if (name && name_size) {
        if (one)
            snprintf(name, name_size, "1 (%d slabs) x %s", ng, prop.name);
        else
            snprintf(name, name_size, "%d x %s", ng, prop.name);
    }
    if (p->pinned) {
        RB2_CU(cudaHostRegister(u_host, p->count * es, cudaHostRegisterDefault));
        G->registered = u_host;
    }
    G->copy_kernel = kcopy && G->peer;
    const hr_status rc = hri_gpu_rb2_upload(G, u_host, h2d_seconds, err, err_size);
    if (rc != HR_OK || G->mode != RB2_STREAM || !G->graph_k) return rc;
    if (!G->peer) {
        if (err && err_size)
            snprintf(err, err_size, "tuning.rb2_graph: devices %d..%d: neighbours without peer access",
                     G->dev[0], G->dev[ng - 1]);
        return HR_ERR_INVALID_ARG;
    }
    G->copy_kernel = 1;
    for (int q = 0; q < 2; q++) {
        G->cur = q;
        RB2_CU(rb2s_capture(G, G->graph_k, &G->graph[q]));
    }
    G->cur = 0;
    /* the events were recorded inside the captures: record them once more outside */
    for (int d = 0; d < ng; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        for (int q = 0; q < 2; q++) {
            RB2_CU(cudaEventRecord(G->ev_s[d][q], G->st[d]));
            RB2_CU(cudaEventRecord(G->ev_i[d][q], G->low[d]));
        }
        for (int x = d == 0 ? 0 : 2 * d - 1; x <= 2 * d; x++) {
            int dev = 0;
            RB2_CU(cudaEventRecord(G->join[x], *rb2s_stream(G, x, &dev)));
        }
        if (d == 0) RB2_CU(cudaEventRecord(G->fork, G->st[0]));
        RB2_CU(cudaDeviceSynchronize());
    }
    return HR_OK;
}

extern "C" hr_status hri_gpu_rb2_iterations(hr_gpu_rb2 *G, long count, char *err, size_t err_size)
{
    if (G->mode == RB2_STREAM) {
        RB2_CU(rb2s_run(G, count));
    } else {
        for (long t = 0; t < count; t++) {
            if (G->mode == RB2_FUSED) {
                RB2_CU(G->p.esize == 8 ? rb2_fused<double>(G) : rb2_fused<float>(G));
            } else {
                for (int colour = 0; colour < 2; colour++)
                    RB2_CU(G->p.esize == 8 ? rb2_phase<double>(G, colour) : rb2_phase<float>(G, colour));
            }
        }
    }
    for (int d = 0; d < G->ng; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        RB2_CU(cudaStreamSynchronize(G->st[d]));
        RB2_CU(cudaStreamSynchronize(G->low[d]));
    }
    return HR_OK;
}

extern "C" int hri_gpu_rb2_devices(const hr_gpu_rb2 *G)
{
    return G->one ? 1 : G->ng;
}

/* The grid holding slab d's iterate. */
static void *rb2_current(const hr_gpu_rb2 *G, int d)
{
    return G->d_g[d][G->mode == RB2_STREAM ? G->cur : 0];
}

extern "C" hr_status hri_gpu_rb2_download(hr_gpu_rb2 *G, void *u_host, double *seconds, char *err,
                                         size_t err_size)
{
    const double t0 = rb2_now();
    for (int d = 0; d < G->ng; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        char *dst = (char *)u_host + (G->p.offset + (size_t)G->lo[d] * G->p.pitch) * G->p.esize;
        const size_t n = (size_t)(G->hi[d] - G->lo[d] + 1) * G->p.pitch * G->p.esize;
        RB2_CU(cudaMemcpyAsync(dst, rb2_row(G, rb2_current(G, d), G->lo[d] - G->ioff[d]), n,
                               cudaMemcpyDeviceToHost, G->st[d]));
    }
    for (int d = 0; d < G->ng; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        RB2_CU(cudaStreamSynchronize(G->st[d]));
    }
    *seconds = rb2_now() - t0;
    return HR_OK;
}

/* Every local row (ghosts, boundary rows) into the current grid, and (stream) the other grid:
 * rb_stream writes only interior points, the boundary ring comes from here. */
extern "C" hr_status hri_gpu_rb2_upload(hr_gpu_rb2 *G, const void *u_host, double *seconds, char *err,
                                       size_t err_size)
{
    const double t0 = rb2_now();
    for (int d = 0; d < G->ng; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        const char *src = (const char *)u_host + (G->p.offset + (size_t)G->ioff[d] * G->p.pitch) * G->p.esize;
        const size_t n = (size_t)G->nrows[d] * G->p.pitch * G->p.esize;
        RB2_CU(cudaMemcpyAsync(rb2_row(G, rb2_current(G, d), 0), src, n, cudaMemcpyHostToDevice, G->st[d]));
        if (G->mode == RB2_STREAM) /* the other grid from this one (the host copy is timed once) */
            RB2_CU(cudaMemcpyAsync(rb2_row(G, G->d_g[d][G->cur ^ 1], 0), rb2_row(G, rb2_current(G, d), 0), n,
                                   cudaMemcpyDeviceToDevice, G->st[d]));
    }
    for (int d = 0; d < G->ng; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        RB2_CU(cudaStreamSynchronize(G->st[d]));
    }
    *seconds = rb2_now() - t0;
    return HR_OK;
}

extern "C" void hri_gpu_rb2_free(hr_gpu_rb2 *G)
{
    if (!G) return;
    for (int d = 0; d < G->ng; d++) /* a failed call may leave work queued on the host grid */
        if (cudaSetDevice(G->dev[d]) == cudaSuccess) {
            if (G->st[d]) cudaStreamSynchronize(G->st[d]);
            if (G->low[d]) cudaStreamSynchronize(G->low[d]);
        }
    if (G->registered) cudaHostUnregister(G->registered);
    for (int d = 0; d < G->ng; d++) {
        if (cudaSetDevice(G->dev[d]) != cudaSuccess) continue;
        if (d == 0 && G->fork) cudaEventDestroy(G->fork);
        for (int x = d == 0 ? 0 : 2 * d - 1; x <= 2 * d; x++)
            if (G->join[x]) cudaEventDestroy(G->join[x]);
        for (int q = 0; q < 2; q++) {
            if (d == 0 && G->graph[q]) cudaGraphExecDestroy(G->graph[q]);
            cudaFree(G->d_g[d][q]);
            if (G->ev_s[d][q]) cudaEventDestroy(G->ev_s[d][q]);
            if (G->ev_i[d][q]) cudaEventDestroy(G->ev_i[d][q]);
        }
        cudaFree(G->d_hf[d]);
        if (G->kern[d]) cudaEventDestroy(G->kern[d]);
        if (G->copy[d]) cudaEventDestroy(G->copy[d]);
        if (G->st[d]) cudaStreamDestroy(G->st[d]);
        if (G->low[d]) cudaStreamDestroy(G->low[d]);
        if (G->main_b[d]) cudaEventDestroy(G->main_b[d]);
        if (G->ring_b[d]) cudaEventDestroy(G->ring_b[d]);
        if (G->bulk[d]) cudaEventDestroy(G->bulk[d]);
    }
    free(G);
}
