/*
 * Red-black on two GPUs (seed 004's "multiple GPUs", issue 13): GPU 0 holds the upper half
 * of the rows, GPU 1 the lower half. Every scheme is bitwise equal to one GPU (and rb-seq).
 * Seed 004 exchanged once per iteration after both colours, which lets the second colour read
 * a stale row.
 *
 * Stream (the default, redblack_gpu2_stream.cuh): each half runs rb-tuned's out-of-place
 * streaming pass and keeps two ghost rows of the other half's OLD iterate, so one iteration
 * needs one exchange (2 rows each way, peer copies beside the bulk) and no exchange between
 * the colours; the first ghost row's colour 0 is recomputed redundantly. Shape: rb-tuned's
 * (HETRELAX_RB2_SHAPE=BXxBYxH, else the tuning cache's / shipped rb-tuned shape for one half,
 * else 128x17x8); HETRELAX_RB2_SROWS: rows of the strip next to the other half (2);
 * HETRELAX_RB2_GRAPH=K: K iterations per CUDA graph launch (0, the default: direct launches).
 * HETRELAX_RB2_ONE=1 puts both halves on device --device (tests the code path on one GPU).
 *
 * The two earlier schemes, in place with one ghost row and an exchange after EACH colour,
 * for comparison: HETRELAX_RB2_OLD=1 (fused) and HETRELAX_RB2_V1=1 (v1).
 *
 * Fused (HETRELAX_RB2_OLD=1): each half runs the in-place `rb-inplace` scheme: a main pass does colour 0
 * everywhere and colour 1 inside tiles of 2 BX columns x H rows (marching down the columns, colour 1 of row i
 * - 1 right after colour 0 of row i), then ring passes do colour 1 on the tiles' first and last rows and
 * columns. The strips are aligned so that the strip next to the other GPU (the "boundary strip") has H rows
 * and ends at the half's boundary row B. Per iteration and GPU, on two streams: high priority: [after the
 * last iteration's interior ring] main over the boundary strip | wait the other GPU's boundary strip, pull
 * its row B (its colour 0 is final) into the ghost row | colour 1 of row B (reads the ghost's colour 0) |
 * wait the other GPU's row B, pull it again (its colour 1 is final, before the next colour 0 reads it); low
 * priority: main over the other strips | [after the boundary strip's main] the ring passes for every ring row
 * but B, and the ring columns. So the exchange and the boundary row run beside the bulk of the half, and only
 * the boundary strip's main pass and the low stream's work are on the critical path. Pulls run on the
 * receiving GPU's stream after an event of the sender (cudaStreamWaitEvent, no host wait). A pull may overlap
 * the sender's next pass writing the other colour of row B: the receiver reads only the colour that pass does
 * not write (colour 0 after the first pull, colour 1 after the second), and the second pull replaces the
 * whole ghost row before the next main pass reads it. The schedule, with such late reads, was checked against
 * the sequential sweep by a Python model. Tiles: BX = 128 threads, H = 64 (HETRELAX_RB2_SHAPE="BXxH"
 * overrides; the stream scheme takes "BXxBYxH", rb-tuned's form).
 *
 * v1: each colour phase is a v1 launch on both (one thread per point of the colour), then
 * the two boundary rows are exchanged.
 *
 * Stream order per phase: kernel(s0) | kernel(s1); s1 waits for GPU 0's kernel, copies
 * GPU 0's last row into GPU 1's upper ghost; s0 waits for GPU 1's kernel, copies GPU 1's
 * first row into GPU 0's lower ghost; each stream then waits for the other's copy, since
 * the next phase overwrites the row that copy reads.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cuda/redblack_gpu.h"
#include "cuda/redblack_point.cuh"
#include "cuda/redblack_stream.cuh"

enum { RB2_STREAM, RB2_FUSED, RB2_V1 };

struct hr_gpu_rb2 {
    hr_gpu_rb_params p;
    int mode;                                  /* RB2_STREAM (default), RB2_FUSED, RB2_V1 */
    int bx, by, h;                             /* stream: rb-tuned's shape; fused: tiles 2 bx x h */
    cudaStream_t low[2];                       /* the bulk's stream per GPU (st: high priority) */
    cudaEvent_t main_b[2], ring_b[2], bulk[2]; /* fused: boundary strip, row B, the bulk's ring */
    int dev[2];                                /* HETRELAX_RB2_ONE=1: both halves on one device */
    int lo[2], hi[2];                          /* global interior rows [lo, hi] of each half */
    int ioff[2];                               /* local row r is global row r + ioff */
    int nrows[2];                              /* local rows held (ghosts included) */
    int m;                                     /* stream: GPU 0's last row (odd) */
    int srows;                                 /* stream: rows of the part S next to the other half */
    int sa[2], sz[2], ia[2], iz[2];            /* stream: local rows of the parts S and I */
    int cur, parity;                           /* stream: grid holding the iterate; the events' parity */
    cudaEvent_t ev_s[2][2], ev_i[2][2];        /* stream: S and I done, by iteration parity */
    int graph_k;               /* stream: HETRELAX_RB2_GRAPH, iterations per graph (0: none) */
    int copy_kernel;           /* stream: exchange by a kernel (graphs), else a peer memcpy */
    int peer;                  /* each device can read the other's memory (or one device) */
    cudaGraphExec_t graph[2];  /* per starting grid */
    cudaEvent_t fork, join[3]; /* graph: st[0] -> (low[0], st[1], low[1]) and back */
    cudaStream_t st[2];
    cudaEvent_t kern[2], copy[2];
    void *d_g[2][2]; /* per half, grids A and B (fused, v1: A only); allocation starts */
    void *d_hf[2];
    void *registered;
};

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

/* bytes from src (device o) to dst (device d) on d's stream st. */
static cudaError_t rb2_copy_rows(const hr_gpu_rb2 *G, int d, void *dst, const void *src, size_t bytes,
                                 cudaStream_t st)
{
    if (!G->copy_kernel) return cudaMemcpyPeerAsync(dst, G->dev[d], src, G->dev[1 - d], bytes, st);
    const size_t n = bytes / sizeof(float); /* rows are whole multiples of 4 bytes */
    rb2_copy_kernel<float><<<(unsigned)((n + 255) / 256 < 64 ? (n + 255) / 256 : 64), 256, 0, st>>>(
        (float *)dst, (const float *)src, n);
    return cudaGetLastError();
}

#include "cuda/redblack_gpu2_stream.cuh"

static int rb2_env_on(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] == '1';
}

extern "C" hr_status hr_gpu_rb2_create(const hr_gpu_rb_params *p, void *u_host, hr_gpu_rb2 **out, char *name,
                                       size_t name_size, double *h2d_seconds, char *err, size_t err_size)
{
    *out = NULL;
    if (p->dim != 2 || p->ny < 2) {
        if (err && err_size) snprintf(err, err_size, "kernel: rb-2gpu runs 2-D grids of at least 2 rows");
        return HR_ERR_INVALID_ARG;
    }
    const int one = rb2_env_on("HETRELAX_RB2_ONE"); /* both halves on one GPU: the code path, not the speed */
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < p->device + (one ? 1 : 2)) {
        if (err && err_size)
            snprintf(err, err_size, "device: rb-2gpu needs devices %d and %d, %d CUDA device(s) present",
                     p->device, p->device + 1, count);
        return HR_ERR_NO_DEVICE;
    }
    hr_gpu_rb2 *G = (hr_gpu_rb2 *)calloc(1, sizeof *G);
    if (!G) return HR_ERR_NO_MEMORY;
    *out = G; /* freed by hr_gpu_rb2_free on any failure below */
    G->p = *p;
    G->mode = rb2_env_on("HETRELAX_RB2_V1")    ? RB2_V1
              : rb2_env_on("HETRELAX_RB2_OLD") ? RB2_FUSED
                                               : RB2_STREAM;
    const int kcopy = rb2_env_on("HETRELAX_RB2_KCOPY"); /* the exchange by a kernel without graphs too */
    const char *shape = getenv("HETRELAX_RB2_SHAPE"), *srows = getenv("HETRELAX_RB2_SROWS");
    if (G->mode == RB2_STREAM) {
        /* rb-tuned's default shape (128 threads, overlapped warps, strips of 8 rows) */
        G->bx = 128;
        G->by = 1 + RB_STREAM_OVL;
        G->h = 8;
        G->srows = 2;
        if (shape && *shape && sscanf(shape, "%dx%dx%d", &G->bx, &G->by, &G->h) != 3) {
            if (err && err_size) snprintf(err, err_size, "HETRELAX_RB2_SHAPE: '%s' is not BXxBYxH", shape);
            return HR_ERR_INVALID_ARG;
        }
        cudaDeviceProp dp;
        int sh[3];
        const char *from = NULL;
        char why[160];
        /* else rb-tuned's shape for one half from the tuning cache / shipped table, if it runs */
        if (!(shape && *shape) && cudaGetDeviceProperties(&dp, p->device) == cudaSuccess &&
            hr_gpu_rb_shape_lookup(p->device, dp.name, "rb-tuned", p->esize == 8, p->nx, p->ny / 2, sh,
                                   &from) &&
            !rb_stream_check(sh[0], sh[1], sh[2], why, sizeof why)) {
            G->bx = sh[0];
            G->by = sh[1];
            G->h = sh[2];
        }
        if (rb_stream_check(G->bx, G->by, G->h, err, err_size)) return HR_ERR_INVALID_ARG;
        if (srows && *srows && (sscanf(srows, "%d", &G->srows) != 1 || G->srows < 2)) {
            if (err && err_size)
                snprintf(err, err_size, "HETRELAX_RB2_SROWS: '%s' is not a count >= 2", srows);
            return HR_ERR_INVALID_ARG;
        }
        const char *graph = getenv("HETRELAX_RB2_GRAPH");
        if (graph && *graph &&
            (sscanf(graph, "%d", &G->graph_k) != 1 || G->graph_k < 0 || G->graph_k % 2 ||
             G->graph_k > 1000)) {
            if (err && err_size)
                snprintf(err, err_size,
                         "HETRELAX_RB2_GRAPH: '%s' is not an even count of iterations (0: off)", graph);
            return HR_ERR_INVALID_ARG;
        }
        /* GPU 0's last row m odd: GPU 1's frame starts at global m - 1, an even shift */
        G->m = (p->ny / 2) | 1;
        G->lo[0] = 1;
        G->hi[0] = G->m;
        G->lo[1] = G->m + 1;
        G->hi[1] = p->ny;
        G->ioff[0] = 0;
        G->nrows[0] = G->m + 3;
        G->ioff[1] = G->m - 1;
        G->nrows[1] = p->ny - G->m + 3;
        rb2s_split(G);
    } else {
        G->bx = 128;
        G->h = 64;
        if (shape && *shape &&
            (sscanf(shape, "%dx%d", &G->bx, &G->h) != 2 || G->bx < 1 || G->bx > 1024 || G->h < 2)) {
            if (err && err_size)
                snprintf(err, err_size, "HETRELAX_RB2_SHAPE: '%s' is not BXxH (BX <= 1024, H >= 2)", shape);
            return HR_ERR_INVALID_ARG;
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
    for (int d = 0; d < 2; d++) {
        G->dev[d] = p->device + (one ? 0 : d);
        RB2_CU(cudaSetDevice(G->dev[d]));
        int can = 0;
        if (!one) RB2_CU(cudaDeviceCanAccessPeer(&can, G->dev[d], G->dev[1 - d]));
        G->peer = d == 0 ? one || can : G->peer && (one || can);
        if (can) {
            cudaError_t e = cudaDeviceEnablePeerAccess(G->dev[1 - d], 0);
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
        for (int q = 0; q < 2; q++) { /* recorded once: the first iteration's waits, a half without I */
            RB2_CU(cudaEventCreateWithFlags(&G->ev_s[d][q], cudaEventDisableTiming));
            RB2_CU(cudaEventCreateWithFlags(&G->ev_i[d][q], cudaEventDisableTiming));
            RB2_CU(cudaEventRecord(G->ev_s[d][q], G->st[d]));
            RB2_CU(cudaEventRecord(G->ev_i[d][q], G->low[d]));
        }
        for (int x = d; x < 2 * d + 1; x++) /* join: low[0] on device 0, st[1] and low[1] on 1 */
            RB2_CU(cudaEventCreateWithFlags(&G->join[x], cudaEventDisableTiming));
        if (d == 0) RB2_CU(cudaEventCreateWithFlags(&G->fork, cudaEventDisableTiming));
        RB2_CU(cudaEventCreateWithFlags(&G->kern[d], cudaEventDisableTiming));
        RB2_CU(cudaEventCreateWithFlags(&G->copy[d], cudaEventDisableTiming));
        /* + a spare row: rb_stream's 16-byte words may read past the last boundary column */
        const size_t bytes = (p->offset + ((size_t)G->nrows[d] + 1) * p->pitch) * es;
        for (int q = 0; q < (G->mode == RB2_STREAM ? 2 : 1); q++) {
            RB2_CU(cudaMalloc(&G->d_g[d][q], bytes));
            RB2_CU(cudaMemset(G->d_g[d][q], 0, bytes));
        }
        if (p->hf_host) {
            RB2_CU(cudaMalloc(&G->d_hf[d], bytes));
            RB2_CU(cudaMemset(G->d_hf[d], 0, bytes));
            const char *src = (const char *)p->hf_host + (p->offset + (size_t)G->ioff[d] * p->pitch) * es;
            RB2_CU(cudaMemcpy(rb2_row(G, G->d_hf[d], 0), src, (size_t)G->nrows[d] * p->pitch * es,
                              cudaMemcpyHostToDevice));
        }
    }
    cudaDeviceProp prop;
    RB2_CU(cudaGetDeviceProperties(&prop, G->dev[0]));
    if (name && name_size) snprintf(name, name_size, "%s x %s", one ? "1 (both halves)" : "2", prop.name);
    if (p->pinned) {
        RB2_CU(cudaHostRegister(u_host, p->count * es, cudaHostRegisterDefault));
        G->registered = u_host;
    }
    G->copy_kernel = kcopy && G->peer;
    const hr_status rc = hr_gpu_rb2_upload(G, u_host, h2d_seconds, err, err_size);
    if (rc != HR_OK || G->mode != RB2_STREAM || !G->graph_k) return rc;
    if (!G->peer) {
        if (err && err_size)
            snprintf(err, err_size, "HETRELAX_RB2_GRAPH: devices %d and %d have no peer access", G->dev[0],
                     G->dev[1]);
        return HR_ERR_INVALID_ARG;
    }
    G->copy_kernel = 1;
    for (int q = 0; q < 2; q++) {
        G->cur = q;
        RB2_CU(rb2s_capture(G, G->graph_k, &G->graph[q]));
    }
    G->cur = 0;
    /* the events were recorded inside the captures: record them once more outside */
    for (int d = 0; d < 2; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        for (int q = 0; q < 2; q++) {
            RB2_CU(cudaEventRecord(G->ev_s[d][q], G->st[d]));
            RB2_CU(cudaEventRecord(G->ev_i[d][q], G->low[d]));
        }
        for (int x = d; x < 2 * d + 1; x++)
            RB2_CU(cudaEventRecord(G->join[x], x == 0 ? G->low[0] : x == 1 ? G->st[1] : G->low[1]));
        if (d == 0) RB2_CU(cudaEventRecord(G->fork, G->st[0]));
        RB2_CU(cudaDeviceSynchronize());
    }
    return HR_OK;
}

/* The fused passes over one half: local rows 1..g.ny; strip k is rows
 * [max(1, org + k H), min(org + (k + 1) H, g.ny + 1)); the colour of local (i, j) is
 * (i + j + flip) & 1 (flip: the parity of the half's row offset). */
__device__ __forceinline__ void rb2_strip(const rb_geo &g, int org, int H, int k, int *r0, int *r1)
{
    *r0 = max(1, org + k * H);
    *r1 = min(org + (k + 1) * H, g.ny + 1);
}

/* Main pass over strips k0 + blockIdx.y. */
template <typename T>
__global__ void rb2_main(T *u, const T *hf, rb_geo g, int H, int org, int k0, int flip, T c0, T c1)
{
    const int j0 = 1 + 2 * (int)(blockIdx.x * blockDim.x), j1 = min(j0 + 2 * (int)blockDim.x, g.nx + 1);
    int r0, r1;
    rb2_strip(g, org, H, k0 + (int)blockIdx.y, &r0, &r1);
    const int jp = j0 + 2 * (int)threadIdx.x; /* this thread's column pair */
    for (int i = r0; i < r1; i++) {
        const int ja = jp + ((i + jp + flip) & 1); /* colour 0 of row i */
        if (ja < j1) {
            const size_t x = (size_t)i * g.p + (size_t)ja;
            u[x] = rb_point<T, false>(u, hf, g, x, i, ja, 0, c0, c1);
        }
        /* colour 1 of row i - 1: its colour-0 neighbours are new (rows i - 2..i, this tile) */
        const int ib = i - 1, jb = jp + 1 - ((ib + jp + flip) & 1);
        if (ib > r0 && jb < j1 && jb != j0 && jb != j1 - 1) {
            const size_t x = (size_t)ib * g.p + (size_t)jb;
            u[x] = rb_point<T, false>(u, hf, g, x, ib, jb, 0, c0, c1);
        }
        __syncthreads();
    }
}

/* Colour 1 of every strip's first and last row but row `skip` (blockIdx.y: strip x 2). */
template <typename T>
__global__ void rb2_ring_rows(T *u, const T *hf, rb_geo g, int H, int org, int skip, int flip, T c0, T c1)
{
    const int last = (int)blockIdx.y % 2;
    int r0, r1;
    rb2_strip(g, org, H, (int)blockIdx.y / 2, &r0, &r1);
    const int i = last ? r1 - 1 : r0;
    if ((last && i == r0) || i == skip) return;
    const int j = 1 + ((i + flip) & 1) + 2 * (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (j > g.nx) return;
    const size_t x = (size_t)i * g.p + (size_t)j;
    u[x] = rb_point<T, false>(u, hf, g, x, i, j, 0, c0, c1);
}

/* Colour 1 of every tile's first and last column, rows other than the strips' ring rows. */
template <typename T>
__global__ void rb2_ring_cols(T *u, const T *hf, rb_geo g, int H, int tw, int org, int flip, T c0, T c1)
{
    const int tile = (int)blockIdx.y / 2, last = (int)blockIdx.y % 2;
    const int j0 = 1 + tile * tw, j1 = min(j0 + tw, g.nx + 1);
    const int j = last ? j1 - 1 : j0;
    const int i = 1 + (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if ((last && j == j0) || i > g.ny || ((i + j + flip) & 1) != 1) return;
    int r0, r1;
    rb2_strip(g, org, H, (i - org) / H, &r0, &r1);
    if (i == r0 || i == r1 - 1) return; /* ring rows: rb2_ring_rows, rb2_row */
    const size_t x = (size_t)i * g.p + (size_t)j;
    u[x] = rb_point<T, false>(u, hf, g, x, i, j, 0, c0, c1);
}

/* Colour 1 of row i (the boundary row). */
template <typename T> __global__ void rb2_row(T *u, const T *hf, rb_geo g, int i, int flip, T c0, T c1)
{
    const int j = 1 + ((i + flip) & 1) + 2 * (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (j > g.nx) return;
    const size_t x = (size_t)i * g.p + (size_t)j;
    u[x] = rb_point<T, false>(u, hf, g, x, i, j, 0, c0, c1);
}

static unsigned rb2_cdiv(long a, long b)
{
    return (unsigned)((a + b - 1) / b);
}

/* Half d's geometry (local rows, the spike in local rows). */
static rb_geo rb2_geo(const hr_gpu_rb2 *G, int d)
{
    const hr_gpu_rb_params &p = G->p;
    const int ioff = G->lo[d] - 1;
    rb_geo g;
    g.p = p.pitch;
    g.q = p.plane;
    g.dim = 2;
    g.nx = p.nx;
    g.ny = G->hi[d] - G->lo[d] + 1;
    g.nz = 1;
    g.si = p.hf_host || p.spike_i < 0 ? -1 : p.spike_i - ioff;
    g.sj = p.spike_j;
    g.sk = 0;
    g.weighted = p.omega != 1.0;
    return g;
}

/* Copies the other half's boundary row into half d's ghost row, on d's stream, after the
 * other half's event `after`. */
static cudaError_t rb2_pull(hr_gpu_rb2 *G, int d, cudaEvent_t after)
{
    const int o = 1 - d, m = G->hi[0];
    const size_t row_bytes = G->p.pitch * G->p.esize;
    /* GPU 0's ghost is local row m + 1 (GPU 1's local row 1); GPU 1's is local row 0
     * (GPU 0's local row m) */
    void *dst = rb2_row(G, G->d_g[d][0], d == 0 ? m + 1 : 0);
    const void *src = rb2_row(G, G->d_g[o][0], d == 0 ? 1 : m);
    cudaError_t e;
    if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
    if ((e = cudaStreamWaitEvent(G->st[d], after, 0)) != cudaSuccess) return e;
    return cudaMemcpyPeerAsync(dst, G->dev[d], src, G->dev[o], row_bytes, G->st[d]);
}

/* One fused iteration on both halves (see the file comment). */
template <typename T> static cudaError_t rb2_fused(hr_gpu_rb2 *G)
{
    const hr_gpu_rb_params &p = G->p;
    const T c0 = (T)(1.0 - p.omega), c1 = (T)p.omega;
    const int bx = G->bx, H = G->h, tw = 2 * bx;
    cudaError_t e;
    rb_geo g[2];
    int flip[2], org[2], strips[2], kb[2], brow[2];
    T *u[2];
    const T *hf[2];
    for (int d = 0; d < 2; d++) {
        g[d] = rb2_geo(G, d);
        flip[d] = (G->lo[d] - 1) & 1;
        const int M = g[d].ny, full = (M + H - 1) / H;
        org[d] = d == 0 ? M - H * full + 1 : 1; /* GPU 0's last strip ends at its row B = M */
        strips[d] = full;
        kb[d] = d == 0 ? full - 1 : 0;
        brow[d] = d == 0 ? M : 1;
        u[d] = (T *)G->d_g[d][0] + p.offset;
        hf[d] = G->d_hf[d] ? (const T *)G->d_hf[d] + p.offset : NULL;
    }
    const unsigned tiles = rb2_cdiv(p.nx, tw), row_blocks = rb2_cdiv((p.nx + 1) / 2, 256);
    /* high: the boundary strip's main pass, after the last iteration's bulk ring */
    for (int d = 0; d < 2; d++) {
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        if ((e = cudaStreamWaitEvent(G->st[d], G->bulk[d], 0)) != cudaSuccess) return e;
        rb2_main<T>
            <<<dim3(tiles, 1), dim3(bx), 0, G->st[d]>>>(u[d], hf[d], g[d], H, org[d], kb[d], flip[d], c0, c1);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
        if ((e = cudaEventRecord(G->main_b[d], G->st[d])) != cudaSuccess) return e;
    }
    /* low: the other strips' main pass, then (after the boundary strip) the ring passes */
    for (int d = 0; d < 2; d++) {
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        if (strips[d] > 1) {
            const int k0 = d == 0 ? 0 : 1;
            rb2_main<T><<<dim3(tiles, strips[d] - 1), dim3(bx), 0, G->low[d]>>>(u[d], hf[d], g[d], H, org[d],
                                                                                k0, flip[d], c0, c1);
        }
        if ((e = cudaStreamWaitEvent(G->low[d], G->main_b[d], 0)) != cudaSuccess) return e;
        rb2_ring_rows<T><<<dim3(row_blocks, 2 * strips[d]), dim3(256), 0, G->low[d]>>>(
            u[d], hf[d], g[d], H, org[d], brow[d], flip[d], c0, c1);
        rb2_ring_cols<T><<<dim3(rb2_cdiv(g[d].ny, 256), 2 * tiles), dim3(256), 0, G->low[d]>>>(
            u[d], hf[d], g[d], H, tw, org[d], flip[d], c0, c1);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
        if ((e = cudaEventRecord(G->bulk[d], G->low[d])) != cudaSuccess) return e;
    }
    /* high: row B's colour 0 from the other GPU, row B's colour 1, then its colour 1 back */
    for (int d = 0; d < 2; d++) {
        if ((e = rb2_pull(G, d, G->main_b[1 - d])) != cudaSuccess) return e;
        rb2_row<T><<<dim3(row_blocks), dim3(256), 0, G->st[d]>>>(u[d], hf[d], g[d], brow[d], flip[d], c0, c1);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
        if ((e = cudaEventRecord(G->ring_b[d], G->st[d])) != cudaSuccess) return e;
    }
    for (int d = 0; d < 2; d++)
        if ((e = rb2_pull(G, d, G->ring_b[1 - d])) != cudaSuccess) return e;
    return cudaSuccess;
}

/* One colour phase on both halves, then the boundary-row exchange. */
template <typename T> static cudaError_t rb2_phase(hr_gpu_rb2 *G, int colour)
{
    const hr_gpu_rb_params &p = G->p;
    const T c0 = (T)(1.0 - p.omega), c1 = (T)p.omega;
    const int bx = p.bx > 0 ? p.bx : 64, by = p.by > 0 ? p.by : 8;
    const size_t row_bytes = p.pitch * p.esize;
    cudaError_t e;
    for (int d = 0; d < 2; d++) {
        const int ioff = G->lo[d] - 1, nyl = G->hi[d] - G->lo[d] + 1;
        rb_geo g;
        g.p = p.pitch;
        g.q = p.plane;
        g.dim = 2;
        g.nx = p.nx;
        g.ny = nyl;
        g.nz = 1;
        g.si = p.hf_host || p.spike_i < 0 ? -1 : p.spike_i - ioff; /* local row of the spike */
        g.sj = p.spike_j;
        g.sk = 0;
        g.weighted = p.omega != 1.0;
        T *u = (T *)G->d_g[d][0] + p.offset;
        const T *hf = G->d_hf[d] ? (const T *)G->d_hf[d] + p.offset : NULL;
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        const long half = (p.nx + 1) / 2;
        dim3 grid((unsigned)((half + bx - 1) / bx), (unsigned)((nyl + by - 1) / by)), block(bx, by);
        /* local row i is global row i + ioff: the colour flips with an odd offset */
        rb_v1<T, false><<<grid, block, 0, G->st[d]>>>(u, hf, g, colour ^ (ioff & 1), c0, c1);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
        if ((e = cudaEventRecord(G->kern[d], G->st[d])) != cudaSuccess) return e;
    }
    const int m = G->hi[0];
    /* GPU 0's last row (local m) -> GPU 1's upper ghost (local 0), on GPU 1's stream */
    if ((e = cudaSetDevice(G->dev[1])) != cudaSuccess) return e;
    if ((e = cudaStreamWaitEvent(G->st[1], G->kern[0], 0)) != cudaSuccess) return e;
    if ((e = cudaMemcpyPeerAsync(rb2_row(G, G->d_g[1][0], 0), G->dev[1], rb2_row(G, G->d_g[0][0], m),
                                 G->dev[0], row_bytes, G->st[1])) != cudaSuccess)
        return e;
    if ((e = cudaEventRecord(G->copy[1], G->st[1])) != cudaSuccess) return e;
    /* GPU 1's first row (local 1) -> GPU 0's lower ghost (local m + 1), on GPU 0's stream */
    if ((e = cudaSetDevice(G->dev[0])) != cudaSuccess) return e;
    if ((e = cudaStreamWaitEvent(G->st[0], G->kern[1], 0)) != cudaSuccess) return e;
    if ((e = cudaMemcpyPeerAsync(rb2_row(G, G->d_g[0][0], m + 1), G->dev[0], rb2_row(G, G->d_g[1][0], 1),
                                 G->dev[1], row_bytes, G->st[0])) != cudaSuccess)
        return e;
    if ((e = cudaEventRecord(G->copy[0], G->st[0])) != cudaSuccess) return e;
    /* the next phase overwrites the rows these copies read */
    if ((e = cudaStreamWaitEvent(G->st[0], G->copy[1], 0)) != cudaSuccess) return e;
    if ((e = cudaSetDevice(G->dev[1])) != cudaSuccess) return e;
    return cudaStreamWaitEvent(G->st[1], G->copy[0], 0);
}

extern "C" hr_status hr_gpu_rb2_iterations(hr_gpu_rb2 *G, long count, char *err, size_t err_size)
{
    if (G->mode == RB2_STREAM && G->graph_k)
        for (; count >= G->graph_k; count -= G->graph_k)
            RB2_CU(rb2s_launch_graph(G)); /* K even: the graph ends on the grid it started from */
    for (long t = 0; t < count; t++) {
        if (G->mode == RB2_STREAM) {
            RB2_CU(G->p.esize == 8 ? rb2s_iteration<double>(G) : rb2s_iteration<float>(G));
        } else if (G->mode == RB2_FUSED) {
            RB2_CU(G->p.esize == 8 ? rb2_fused<double>(G) : rb2_fused<float>(G));
        } else {
            for (int colour = 0; colour < 2; colour++)
                RB2_CU(G->p.esize == 8 ? rb2_phase<double>(G, colour) : rb2_phase<float>(G, colour));
        }
    }
    for (int d = 0; d < 2; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        RB2_CU(cudaStreamSynchronize(G->st[d]));
        RB2_CU(cudaStreamSynchronize(G->low[d]));
    }
    return HR_OK;
}

/* The grid holding half d's iterate. */
static void *rb2_current(const hr_gpu_rb2 *G, int d)
{
    return G->d_g[d][G->mode == RB2_STREAM ? G->cur : 0];
}

extern "C" hr_status hr_gpu_rb2_download(hr_gpu_rb2 *G, void *u_host, double *seconds, char *err,
                                         size_t err_size)
{
    const double t0 = rb2_now();
    for (int d = 0; d < 2; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        char *dst = (char *)u_host + (G->p.offset + (size_t)G->lo[d] * G->p.pitch) * G->p.esize;
        const size_t n = (size_t)(G->hi[d] - G->lo[d] + 1) * G->p.pitch * G->p.esize;
        RB2_CU(cudaMemcpyAsync(dst, rb2_row(G, rb2_current(G, d), G->lo[d] - G->ioff[d]), n,
                               cudaMemcpyDeviceToHost, G->st[d]));
    }
    for (int d = 0; d < 2; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        RB2_CU(cudaStreamSynchronize(G->st[d]));
    }
    *seconds = rb2_now() - t0;
    return HR_OK;
}

/* Every local row (ghosts, boundary rows) into the current grid, and (stream) the other grid:
 * rb_stream writes only interior points, the boundary ring comes from here. */
extern "C" hr_status hr_gpu_rb2_upload(hr_gpu_rb2 *G, const void *u_host, double *seconds, char *err,
                                       size_t err_size)
{
    const double t0 = rb2_now();
    for (int d = 0; d < 2; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        const char *src = (const char *)u_host + (G->p.offset + (size_t)G->ioff[d] * G->p.pitch) * G->p.esize;
        const size_t n = (size_t)G->nrows[d] * G->p.pitch * G->p.esize;
        RB2_CU(cudaMemcpyAsync(rb2_row(G, rb2_current(G, d), 0), src, n, cudaMemcpyHostToDevice, G->st[d]));
        if (G->mode == RB2_STREAM) /* the other grid from this one (the host copy is timed once) */
            RB2_CU(cudaMemcpyAsync(rb2_row(G, G->d_g[d][G->cur ^ 1], 0), rb2_row(G, rb2_current(G, d), 0), n,
                                   cudaMemcpyDeviceToDevice, G->st[d]));
    }
    for (int d = 0; d < 2; d++) {
        RB2_CU(cudaSetDevice(G->dev[d]));
        RB2_CU(cudaStreamSynchronize(G->st[d]));
    }
    *seconds = rb2_now() - t0;
    return HR_OK;
}

extern "C" void hr_gpu_rb2_free(hr_gpu_rb2 *G)
{
    if (!G) return;
    if (G->registered) cudaHostUnregister(G->registered);
    for (int d = 0; d < 2; d++) {
        if (cudaSetDevice(G->dev[d]) != cudaSuccess) continue;
        if (d == 0 && G->fork) cudaEventDestroy(G->fork);
        for (int x = d; x < 2 * d + 1; x++)
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
