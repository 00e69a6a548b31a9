/*
 * Red-black Gauss-Seidel / SOR on one GPU: the red-black report's versions (v1-v4, read-only cache),
 * `tuned` (both colours in one streaming pass, out of place: redblack_stream.cuh) and
 * `inplace` (the first tuned kernel, in place). Every version computes each point with
 * HR_RB_UPDATE on HR_JACOBI5/7(F) (common/stencil.h) in the CPU's operand order; the library
 * is built with -fmad=false, so all are bitwise equal to rb-seq.
 *
 * inplace, per iteration: blocks own tiles of 2 bx columns x H rows; a thread owns a pair of
 * columns and marches down the rows: at step i it updates the colour-0 point of row i, then
 * the colour-1 point of row i - 1 (whose colour-0 neighbours are all new by then), one
 * __syncthreads per step. Colour-1 points on a tile's ring (first and last row and column)
 * are read by the neighbouring tiles' colour 0 as old values, so they are left to a second,
 * small launch after the main one: each point is still updated once, in the colour order.
 * It reached 61-64% of the copy bandwidth on the H100: one 8-byte load in flight per thread
 * between barriers, scalar loads, and the ring launch.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/stencil.h"
#include "methods/redblack/cuda/redblack_gpu.h"
#include "methods/redblack/cuda/redblack_point.cuh"
#include "methods/redblack/cuda/redblack_stream.cuh"

struct hr_gpu_rb {
    hr_gpu_rb_params p;
    int dev;
    cudaStream_t stream;
    void *d_u, *d_hf; /* allocation starts (layout as on the host, plus a spare row) */
    void *d_u2;       /* tuned: the second grid (out of place); d_u holds the current one */
    void *registered;
    int bx, by, h; /* block shape used */
};

#define RB_CU(call)                                                                                          \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            if (err && err_size)                                                                             \
                snprintf(err, err_size, "%s failed at %s:%d: %s", #call, __FILE__, __LINE__,                 \
                         cudaGetErrorString(e_));                                                            \
            return e_ == cudaErrorMemoryAllocation ? HR_ERR_NO_MEMORY : HR_ERR_DEVICE;                       \
        }                                                                                                    \
    } while (0)

/* v2: RB_V2_ROWS points per thread, rows by apart (2-D; blocks bx x by, tiles 2 bx x 8 by). */
#define RB_V2_ROWS 8
template <typename T> __global__ void rb_v2(T *u, const T *hf, rb_geo g, int colour, T c0, T c1)
{
    const int jc = blockIdx.x * blockDim.x + threadIdx.x;
    const int i0 = blockIdx.y * blockDim.y * RB_V2_ROWS + threadIdx.y + 1;
#pragma unroll
    for (int r = 0; r < RB_V2_ROWS; r++) {
        const int i = i0 + r * (int)blockDim.y, j = rb_first(i, 0, colour) + 2 * jc;
        if (i > g.ny || j > g.nx) continue;
        const size_t x = (size_t)i * g.p + (size_t)j;
        u[x] = rb_point<T, false>(u, hf, g, x, i, j, 0, c0, c1);
    }
}

/* v3 / v4 (2-D): the tile (2 bx columns x by rows) and its halo in shared memory; the colour's
 * points computed from there. v3 writes the results into the tile and then the tile back
 * (both colours: the other colour's values are unchanged); v4 writes each result to global. */
template <typename T, bool WRITE_BACK>
__global__ void rb_smem(T *u, const T *hf, rb_geo g, int colour, T c0, T c1)
{
    extern __shared__ unsigned char rb_smem_raw[];
    T *t = (T *)rb_smem_raw;
    const int W = 2 * blockDim.x + 2, Hh = blockDim.y + 2;
    const int J0 = 1 + 2 * blockIdx.x * blockDim.x, I0 = 1 + blockIdx.y * blockDim.y;
    const int tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
    for (int idx = tid; idx < W * Hh; idx += nt) {
        const int gi = I0 - 1 + idx / W, gj = J0 - 1 + idx % W;
        if (gi <= g.ny + 1 && gj <= g.nx + 1) t[idx] = u[(size_t)gi * g.p + (size_t)gj];
    }
    __syncthreads();
    const int i = I0 + threadIdx.y, j = J0 + 2 * threadIdx.x + ((colour + i + J0) & 1);
    const int li = threadIdx.y + 1, lj = j - J0 + 1;
    const bool mine = i <= g.ny && j <= g.nx;
    T v = 0;
    if (mine) {
        const T *c = t + li * W + lj;
        const size_t x = (size_t)i * g.p + (size_t)j;
        const T n = c[-W], s = c[W], w = c[-1], e = c[1];
        T jac;
        if (hf)
            jac = HR_JACOBI5F(T, n, s, w, e, hf[x]);
        else if (i == g.si && j == g.sj && g.sk == 0)
            jac = HR_JACOBI5F(T, n, s, w, e, (T)HR_SPIKE_H2F);
        else
            jac = HR_JACOBI5(T, n, s, w, e);
        v = HR_RB_UPDATE(*c, jac, c0, c1, g.weighted);
        if (!WRITE_BACK) u[x] = v;
    }
    if (WRITE_BACK) {
        __syncthreads(); /* every read of the tile is done before results overwrite it */
        if (mine) t[li * W + lj] = v;
        __syncthreads();
        for (int idx = tid; idx < (W - 2) * (Hh - 2); idx += nt) {
            const int r = idx / (W - 2), cc = idx % (W - 2), gi = I0 + r, gj = J0 + cc;
            if (gi <= g.ny && gj <= g.nx) u[(size_t)gi * g.p + (size_t)gj] = t[(r + 1) * W + cc + 1];
        }
    }
}

/* inplace, main pass (2-D): see the file comment. Tile columns [j0, j1), rows [r0, r1). */
template <typename T> __global__ void rb_tuned_main(T *u, const T *hf, rb_geo g, int H, T c0, T c1)
{
    const int j0 = 1 + 2 * blockIdx.x * blockDim.x, j1 = min(j0 + 2 * (int)blockDim.x, g.nx + 1);
    const int r0 = 1 + blockIdx.y * H, r1 = min(r0 + H, g.ny + 1);
    const int jp = j0 + 2 * threadIdx.x; /* the thread's columns jp, jp + 1 */
    for (int i = r0; i < r1; i++) {
        const int ja = jp + ((i + jp) & 1); /* colour 0 in row i */
        if (ja < j1) {
            const size_t x = (size_t)i * g.p + (size_t)ja;
            u[x] = rb_point<T, false>(u, hf, g, x, i, ja, 0, c0, c1);
        }
        const int ib = i - 1, jb = jp + 1 - ((ib + jp) & 1); /* colour 1 in row i - 1 */
        if (ib > r0 && jb < j1 && jb != j0 && jb != j1 - 1) {
            const size_t x = (size_t)ib * g.p + (size_t)jb;
            u[x] = rb_point<T, false>(u, hf, g, x, ib, jb, 0, c0, c1);
        }
        __syncthreads();
    }
}

/* inplace, ring rows: colour 1 of every tile's first and last row, all columns. */
template <typename T> __global__ void rb_tuned_rows(T *u, const T *hf, rb_geo g, int H, T c0, T c1)
{
    const int strip = blockIdx.y / 2, last = blockIdx.y % 2;
    const int r0 = 1 + strip * H, r1 = min(r0 + H, g.ny + 1);
    const int i = last ? r1 - 1 : r0;
    if (last && i == r0) return;
    const int j = rb_first(i, 0, 1) + 2 * (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (j > g.nx) return;
    const size_t x = (size_t)i * g.p + (size_t)j;
    u[x] = rb_point<T, false>(u, hf, g, x, i, j, 0, c0, c1);
}

/* inplace, ring columns: colour 1 of every tile's first and last column in the other rows. */
template <typename T> __global__ void rb_tuned_cols(T *u, const T *hf, rb_geo g, int H, int tw, T c0, T c1)
{
    const int tile = blockIdx.y / 2, last = blockIdx.y % 2;
    const int j0 = 1 + tile * tw, j1 = min(j0 + tw, g.nx + 1);
    const int j = last ? j1 - 1 : j0;
    const int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if ((last && j == j0) || i > g.ny || ((i + j) & 1) != 1) return;
    const int ri = (i - 1) % H;
    if (ri == 0 || ri == H - 1 || i == g.ny) return; /* ring rows: rb_tuned_rows */
    const size_t x = (size_t)i * g.p + (size_t)j;
    u[x] = rb_point<T, false>(u, hf, g, x, i, j, 0, c0, c1);
}

static unsigned cdiv(long a, long b)
{
    return (unsigned)((a + b - 1) / b);
}

template <typename T> static cudaError_t rb_launch_iteration(hr_gpu_rb *G, const rb_geo &g)
{
    T *u = (T *)G->d_u + G->p.offset;
    const T *hf = G->d_hf ? (const T *)G->d_hf + G->p.offset : NULL;
    const T c0 = (T)(1.0 - G->p.omega), c1 = (T)G->p.omega;
    const int bx = G->bx, by = G->by;
    const long half = (g.nx + 1) / 2; /* points of one colour per row, at most */
    cudaStream_t st = G->stream;
    switch (G->p.variant) {
    case HR_GPU_RB_V1:
    case HR_GPU_RB_LDG: {
        dim3 grid(cdiv(half, bx), cdiv(g.ny, by), g.dim == 3 ? g.nz : 1), block(bx, by);
        for (int colour = 0; colour < 2; colour++) {
            if (G->p.variant == HR_GPU_RB_LDG)
                rb_v1<T, true><<<grid, block, 0, st>>>(u, hf, g, colour, c0, c1);
            else
                rb_v1<T, false><<<grid, block, 0, st>>>(u, hf, g, colour, c0, c1);
        }
        break;
    }
    case HR_GPU_RB_V2: {
        dim3 grid(cdiv(half, bx), cdiv(g.ny, (long)by * RB_V2_ROWS)), block(bx, by);
        for (int colour = 0; colour < 2; colour++)
            rb_v2<T><<<grid, block, 0, st>>>(u, hf, g, colour, c0, c1);
        break;
    }
    case HR_GPU_RB_V3:
    case HR_GPU_RB_V4: {
        dim3 grid(cdiv(g.nx, 2L * bx), cdiv(g.ny, by)), block(bx, by);
        const size_t smem = (size_t)(2 * bx + 2) * (size_t)(by + 2) * sizeof(T);
        for (int colour = 0; colour < 2; colour++) {
            if (G->p.variant == HR_GPU_RB_V3)
                rb_smem<T, true><<<grid, block, smem, st>>>(u, hf, g, colour, c0, c1);
            else
                rb_smem<T, false><<<grid, block, smem, st>>>(u, hf, g, colour, c0, c1);
        }
        break;
    }
    case HR_GPU_RB_TUNED: {
        T *un = (T *)G->d_u2 + G->p.offset;
        cudaError_t e = g.weighted ? rb_stream_launch<T, true>(u, un, hf, g, bx, by, G->h, c0, c1, st)
                                   : rb_stream_launch<T, false>(u, un, hf, g, bx, by, G->h, c0, c1, st);
        void *t = G->d_u; /* the new grid is the current one */
        G->d_u = G->d_u2;
        G->d_u2 = t;
        return e;
    }
    case HR_GPU_RB_INPLACE: {
        const int H = G->h, tw = 2 * bx;
        const unsigned tiles = cdiv(g.nx, tw), strips = cdiv(g.ny, H);
        rb_tuned_main<T><<<dim3(tiles, strips), dim3(bx), 0, st>>>(u, hf, g, H, c0, c1);
        rb_tuned_rows<T><<<dim3(cdiv(half, 256), 2 * strips), dim3(256), 0, st>>>(u, hf, g, H, c0, c1);
        rb_tuned_cols<T><<<dim3(cdiv(g.ny, 256), 2 * tiles), dim3(256), 0, st>>>(u, hf, g, H, tw, c0, c1);
        break;
    }
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

static double rb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

extern "C" hr_status hri_gpu_rb_create(const hr_gpu_rb_params *p, void *u_host, hr_gpu_rb **out, char *name,
                                      size_t name_size, int shape[3], double *h2d_seconds, char *err,
                                      size_t err_size)
{
    *out = NULL;
    if (p->variant < 0 || p->variant >= HR_GPU_RB_COUNT ||
        (p->dim == 3 && p->variant != HR_GPU_RB_V1 && p->variant != HR_GPU_RB_LDG)) {
        if (err && err_size)
            snprintf(err, err_size, "kernel: this red-black GPU version runs 2-D grids only");
        return HR_ERR_INVALID_ARG;
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        if (err && err_size) snprintf(err, err_size, "backend gpu: no CUDA device found");
        return HR_ERR_NO_DEVICE;
    }
    if (p->device >= count) {
        if (err && err_size)
            snprintf(err, err_size, "device: ordinal %d, but %d CUDA device(s)", p->device, count);
        return HR_ERR_NO_DEVICE;
    }
    hr_gpu_rb *G = (hr_gpu_rb *)calloc(1, sizeof *G);
    if (!G) return HR_ERR_NO_MEMORY;
    *out = G; /* freed by hri_gpu_rb_free on any failure below */
    G->p = *p;
    G->dev = p->device;
    /* the red-black report's shapes: v1 8 rows x 64 columns, v2 8 x 32 (64 x 64 tiles), v3/v4 8 x 64;
     * tuned: 128 threads x 8 rows, one strip per block, overlapped warps (17 = 1 + 16): 18 K
     * blocks of 4 warps at 8192^2 fp32, 12 words per thread in flight (4 start rows + one
     * batch of 8) at 92-94 registers (5 blocks per SM; with edge pairs instead: 116-144),
     * the halo rows loaded together with the neighbouring strips' own loads of them (L2
     * hits), as the 2-D Jacobi tuned's best shapes (short strips, h = 4) */
    const int defaults[HR_GPU_RB_COUNT][3] = {{64, 8, 1}, {32, 8, RB_V2_ROWS}, {64, 8, 1},  {64, 8, 1},
                                              {64, 8, 1}, {128, 17, 8},        {128, 1, 64}};
    const int v = p->variant;
    G->bx = p->bx > 0 ? p->bx : defaults[v][0];
    if (v == HR_GPU_RB_TUNED || v == HR_GPU_RB_INPLACE) {
        /* (bx, by) alone is the old "BX x H" form; with h: BX x BY x H */
        G->by = p->h > 0 && p->by > 0 ? p->by : defaults[v][1];
        G->h = p->h > 0 ? p->h : (p->by > 0 ? p->by : defaults[v][2]);
        if (v == HR_GPU_RB_INPLACE) G->by = 1;
    } else {
        G->by = p->by > 0 ? p->by : defaults[v][1];
        G->h = defaults[v][2];
    }
    if (v == HR_GPU_RB_TUNED) {
        if (rb_stream_check(G->bx, G->by, G->h, err, err_size)) return HR_ERR_INVALID_ARG;
    } else if (G->bx * G->by > 1024 || G->bx < 1 || G->h < 1) {
        if (err && err_size) snprintf(err, err_size, "shape: %d x %d threads per block", G->bx, G->by);
        return HR_ERR_INVALID_ARG;
    }
    shape[0] = G->bx;
    shape[1] = G->by;
    shape[2] = G->h;
    RB_CU(cudaSetDevice(G->dev));
    cudaDeviceProp prop;
    RB_CU(cudaGetDeviceProperties(&prop, G->dev));
    if (name && name_size) snprintf(name, name_size, "%s", prop.name);
    RB_CU(cudaStreamCreateWithFlags(&G->stream, cudaStreamNonBlocking));
    const size_t bytes = p->count * p->esize;
    /* a spare row: tuned's 16-byte words and edge pairs may read a few elements past the
     * last row's boundary column (never written, never used) */
    const size_t dbytes = bytes + p->pitch * p->esize;
    /* every fill and copy on G->stream: the legacy default stream (cudaMemset, cudaMemcpy)
     * does not order work on a non-blocking stream, so a late fill could land after the
     * upload or under the first kernel */
    RB_CU(cudaMalloc(&G->d_u, dbytes));
    RB_CU(cudaMemsetAsync(G->d_u, 0, dbytes, G->stream));
    if (v == HR_GPU_RB_TUNED) {
        RB_CU(cudaMalloc(&G->d_u2, dbytes));
        RB_CU(cudaMemsetAsync(G->d_u2, 0, dbytes, G->stream));
    }
    if (p->hf_host) {
        RB_CU(cudaMalloc(&G->d_hf, dbytes));
        RB_CU(cudaMemsetAsync(G->d_hf, 0, dbytes, G->stream));
        RB_CU(cudaMemcpyAsync(G->d_hf, p->hf_host, bytes, cudaMemcpyHostToDevice, G->stream));
    }
    if (p->pinned) {
        RB_CU(cudaHostRegister(u_host, bytes, cudaHostRegisterDefault));
        G->registered = u_host;
    }
    return hri_gpu_rb_upload(G, u_host, h2d_seconds, err, err_size);
}

extern "C" hr_status hri_gpu_rb_set_shape(hr_gpu_rb *G, int bx, int by, int h, char *err, size_t err_size)
{
    if (G->p.variant != HR_GPU_RB_TUNED) {
        if (err && err_size) snprintf(err, err_size, "shape: only rb-tuned is tuned");
        return HR_ERR_INVALID_ARG;
    }
    if (rb_stream_check(bx, by, h, err, err_size)) return HR_ERR_INVALID_ARG;
    G->bx = bx;
    G->by = by;
    G->h = h;
    return HR_OK;
}

extern "C" hr_status hri_gpu_rb_iterations(hr_gpu_rb *G, long count, char *err, size_t err_size)
{
    RB_CU(cudaSetDevice(G->dev));
    rb_geo g;
    g.p = G->p.pitch;
    g.q = G->p.plane;
    g.dim = G->p.dim;
    g.nx = G->p.nx;
    g.ny = G->p.ny;
    g.nz = G->p.dim == 3 ? G->p.nz : 1;
    g.si = G->p.hf_host ? -1 : G->p.spike_i;
    g.sj = G->p.spike_j;
    g.sk = G->p.spike_k;
    g.weighted = G->p.omega != 1.0;
    for (long t = 0; t < count; t++)
        RB_CU(G->p.esize == 8 ? rb_launch_iteration<double>(G, g) : rb_launch_iteration<float>(G, g));
    RB_CU(cudaStreamSynchronize(G->stream));
    return HR_OK;
}

extern "C" hr_status hri_gpu_rb_download(hr_gpu_rb *G, void *u_host, double *seconds, char *err,
                                        size_t err_size)
{
    RB_CU(cudaSetDevice(G->dev));
    const double t0 = rb_now();
    /* on G->stream: after every kernel queued there, whatever the caller synchronised */
    RB_CU(cudaMemcpyAsync(u_host, G->d_u, G->p.count * G->p.esize, cudaMemcpyDeviceToHost, G->stream));
    RB_CU(cudaStreamSynchronize(G->stream));
    *seconds = rb_now() - t0;
    return HR_OK;
}

extern "C" hr_status hri_gpu_rb_upload(hr_gpu_rb *G, const void *u_host, double *seconds, char *err,
                                      size_t err_size)
{
    RB_CU(cudaSetDevice(G->dev));
    const double t0 = rb_now();
    /* on G->stream, as the kernels: a cudaMemcpy on the legacy stream is not ordered with
     * them (a pageable upload may still be in flight when it returns; a device-to-device
     * one always may), so the first kernel could read or write a grid under the copy */
    RB_CU(cudaMemcpyAsync(G->d_u, u_host, G->p.count * G->p.esize, cudaMemcpyHostToDevice, G->stream));
    RB_CU(cudaStreamSynchronize(G->stream)); /* u_host is the caller's again */
    *seconds = rb_now() - t0;
    /* tuned writes the other grid's interior only: its boundary ring comes from here */
    if (G->d_u2)
        RB_CU(cudaMemcpyAsync(G->d_u2, G->d_u, G->p.count * G->p.esize, cudaMemcpyDeviceToDevice, G->stream));
    return HR_OK;
}

extern "C" void hri_gpu_rb_grids(const hr_gpu_rb *G, void **u, void **u2, const void **hf, void **stream)
{
    *u = G->d_u;
    *u2 = G->d_u2;
    *hf = G->d_hf;
    *stream = G->stream;
}

extern "C" void hri_gpu_rb_free(hr_gpu_rb *G)
{
    if (!G) return;
    cudaSetDevice(G->dev);
    if (G->stream) cudaStreamSynchronize(G->stream); /* a failed call may leave copies queued */
    if (G->registered) cudaHostUnregister(G->registered);
    cudaFree(G->d_u);
    cudaFree(G->d_u2);
    cudaFree(G->d_hf);
    if (G->stream) cudaStreamDestroy(G->stream);
    free(G);
}
