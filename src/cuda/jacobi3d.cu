/*
 * The 3-D 7-point sweep on the GPU (issue 10 item 8), on the shared padded layout
 * (rows 128-byte aligned at column 1, plane stride pitch * (ny + 2)).
 *
 *   naive  one thread per point, all six neighbours from device memory (L1/L2 serve the
 *          reuse)
 *   tuned  seed 003's pipelined wavefront: a block owns a bx x by tile of an x-y plane
 *          (each thread V consecutive columns, one aligned 16-byte word) and marches it
 *          along z through h planes. Each thread keeps planes k-1, k, k+1 of its word in
 *          registers and has plane k+2 in flight while it computes plane k, so device
 *          memory sees every word read once and written once. North and south come from
 *          the plane's tile in shared memory (double-buffered: one barrier per plane; the
 *          tile's two halo rows are extra loads that mostly hit L2), west and east from
 *          the neighbouring lanes by warp shuffle (lanes 0 and 31 load one element).
 *
 * Both use the macros of common/stencil.h in the CPU reference's order, so they are
 * bitwise equal to cpu-seq (CUDA is built with -fmad=false).
 *
 * Shapes: tuned (bx, by, h) = threads along x (a multiple of 32), threads along y,
 * planes per block; naive (bx, by, h) = threads along x and y, planes per thread.
 */
#include <stdio.h>

#include "cuda/gpu_internal.cuh"
#include "cuda/gpu_region.h"

template <typename T, int V> struct alignas(sizeof(T) * V) hr_vec3 {
    T v[V];
};

/* ------------------------------------------------------------ naive */

template <typename T, bool W> __global__ void hr_k_naive3d(hr_gargs<T> a, int h)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    const int i = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (j > a.nx || i > a.ny) return;
    const size_t p = a.pitch, q = a.plane;
    for (long kb = a.lo + (long)blockIdx.z * h; kb < a.hi; kb += (long)gridDim.z * h) {
        const int ke = (int)min((long)a.hi, kb + h);
        for (int k = (int)kb; k < ke; k++) {
            const size_t x = (size_t)k * q + (size_t)i * p + (size_t)j;
            const T *c = a.u + x;
            a.un[x] = hr_point7<T, W>(c[-1], c[1], c[-(ptrdiff_t)p], c[p], c[-(ptrdiff_t)q], c[q], c[0], a.hf,
                                      x, i, j, k, a.sp, a.c0, a.c1);
        }
    }
}

template <typename T, bool W> static cudaError_t go_naive(hr_gpu *g, cudaStream_t st)
{
    const hr_gpu_shape sh = g->shape;
    const long zb = ((long)g->nz + sh.h - 1) / sh.h;
    const dim3 blk(sh.bx, sh.by),
        grd((unsigned)((g->nx + sh.bx - 1) / sh.bx), (unsigned)((g->ny + sh.by - 1) / sh.by), hr_grid_y(zb));
    hr_k_naive3d<T, W><<<grd, blk, 0, st>>>(hr_gpu_args<T>(g), sh.h);
    return HR_LAUNCHED();
}

static cudaError_t launch_naive3d(hr_gpu *g, int sweeps, cudaStream_t st)
{
    (void)sweeps;
    if (hr_gpu_weighted(g)) return g->dbl ? go_naive<double, true>(g, st) : go_naive<float, true>(g, st);
    return g->dbl ? go_naive<double, false>(g, st) : go_naive<float, false>(g, st);
}

static int check_naive3d(const hr_gpu *g, hr_gpu_shape sh, char *why, size_t len)
{
    if (hr_gpu_check_block(g, sh, sh.h, why, len)) return 1;
    if ((g->ny + sh.by - 1) / sh.by > 65535) {
        snprintf(why, len, "by=%d: %d rows need more than 65535 blocks along y", sh.by, g->ny);
        return 1;
    }
    return 0;
}

static const hr_gpu_shape naive3d_cands[] = {{32, 4, 1},  {32, 8, 1},  {64, 4, 1}, {128, 2, 1}, {128, 4, 1},
                                             {256, 1, 1}, {32, 16, 1}, {64, 8, 1}, {32, 4, 4},  {128, 1, 8}};

const hr_gpu_family hr_fam_naive3d = {1,
                                      0,
                                      {{32, 8, 1}, {32, 8, 1}},
                                      naive3d_cands,
                                      (int)(sizeof naive3d_cands / sizeof naive3d_cands[0]),
                                      check_naive3d,
                                      NULL,
                                      launch_naive3d,
                                      hr_gpu_pass_one,
                                      0};

/* ------------------------------------------------------------ tuned */

template <typename T, int V, bool W>
__global__ void __launch_bounds__(1024) hr_k_tuned3d(hr_gargs<T> a, int h)
{
    typedef hr_vec3<T, V> VT;
    extern __shared__ __align__(16) unsigned char hr_smem3[];
    VT *sm = (VT *)hr_smem3;
    const unsigned FULL = 0xffffffffu;
    const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int lane = tx & 31;
    const int nx = a.nx, ny = a.ny, nz = a.nz;
    const size_t p = a.pitch, q = a.plane;
    const int j = 1 + (blockIdx.x * bx + tx) * V; /* first of this thread's columns */
    const int i = 1 + blockIdx.y * by + ty;       /* this thread's row */
    /* columns up to nx+1 are read (past it: padding or the spare row, never written) */
    const bool have = j <= nx + 1;
    const bool full = j + V - 1 <= nx;
    const bool row_ok = i <= ny + 1, mine = have && row_ok;
    const bool do_n = ty == 0, do_s = ty == by - 1 && i + 1 <= ny + 1;
    const int edge = lane == 0 ? -1 : (lane == 31 ? V : 0);
    const bool edge_ok = edge != 0 && mine && j + edge <= nx + 1;
    const bool out_ok = i <= ny && j <= nx;
    const T *__restrict__ col = a.u + (size_t)i * p + j; /* (i, j, 0) */
    T *__restrict__ out = a.un + (size_t)i * p + j;
    const T *hf = a.hf ? a.hf + (size_t)i * p + j : (const T *)NULL;
    VT zero;
#pragma unroll
    for (int e = 0; e < V; e++)
        zero.v[e] = (T)0;
    const int W2 = (by + 2) * bx; /* one buffer: rows 0 (north halo) .. by + 1 (south halo) */
    const long chunks = ((long)a.hi - a.lo + h - 1) / h;
    for (long zc = blockIdx.z; zc < chunks; zc += gridDim.z) {
        const int k0 = a.lo + (int)zc * h, k1 = min(k0 + h, a.hi); /* planes [k0, k1) */
        VT d = mine ? *(const VT *)(col + (size_t)(k0 - 1) * q) : zero;
        VT c = mine ? *(const VT *)(col + (size_t)k0 * q) : zero;
        VT u = mine ? *(const VT *)(col + (size_t)(k0 + 1) * q) : zero; /* k0 + 1 <= nz + 1 */
        VT hn = do_n && have ? *(const VT *)(col - p + (size_t)k0 * q) : zero;
        VT hs = do_s && have ? *(const VT *)(col + p + (size_t)k0 * q) : zero;
        T sd = edge_ok ? col[(size_t)k0 * q + edge] : (T)0;
        int buf = 0;
        for (int k = k0; k < k1; k++) {
            VT *b = sm + buf * W2;
            b[(ty + 1) * bx + tx] = c;
            if (do_n) b[tx] = hn;
            if (ty == by - 1) b[(by + 1) * bx + tx] = hs;
            /* the next plane's loads go out before the barrier */
            const bool more = k + 1 < k1;
            const VT u2 = (mine && more && k + 2 <= nz + 1) ? *(const VT *)(col + (size_t)(k + 2) * q) : zero;
            const VT hn2 = (do_n && have && more) ? *(const VT *)(col - p + (size_t)(k + 1) * q) : zero;
            const VT hs2 = (do_s && have && more) ? *(const VT *)(col + p + (size_t)(k + 1) * q) : zero;
            const T sd2 = (edge_ok && more) ? col[(size_t)(k + 1) * q + edge] : (T)0;
            __syncthreads();
            const VT nn = b[ty * bx + tx], ss = b[(ty + 2) * bx + tx];
            T w0 = __shfl_up_sync(FULL, c.v[V - 1], 1);
            T e1 = __shfl_down_sync(FULL, c.v[0], 1);
            if (lane == 0) w0 = sd;
            if (lane == 31) e1 = sd;
            if (out_ok) {
                const size_t kq = (size_t)k * q;
                const T *hk = hf ? hf + kq : (const T *)NULL;
                VT res;
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const T w = e == 0 ? w0 : c.v[e - 1];
                    const T ea = e == V - 1 ? e1 : c.v[e + 1];
                    res.v[e] = hr_point7<T, W>(w, ea, nn.v[e], ss.v[e], d.v[e], u.v[e], c.v[e], hk, e, i,
                                               j + e, k, a.sp, a.c0, a.c1);
                }
                if (full) {
                    *(VT *)(out + kq) = res;
                } else {
#pragma unroll
                    for (int e = 0; e < V; e++)
                        if (j + e <= nx) out[kq + e] = res.v[e];
                }
            }
            d = c;
            c = u;
            u = u2;
            hn = hn2;
            hs = hs2;
            sd = sd2;
            buf ^= 1;
        }
        __syncthreads(); /* the next chunk starts again from buffer 0 */
    }
}

static size_t tuned3d_bytes(const hr_gpu *g, hr_gpu_shape sh)
{
    (void)g;
    return 2 * ((size_t)sh.by + 2) * (size_t)sh.bx * 16;
}

template <typename T, bool W>
static cudaError_t go_tuned(hr_gpu *g, int k0, int k1, cudaStream_t st, bool prepare)
{
    const int V = 16 / (int)sizeof(T);
    void (*kern)(hr_gargs<T>, int) = hr_k_tuned3d<T, 16 / sizeof(T), W>;
    const hr_gpu_shape sh = g->shape;
    const size_t bytes = tuned3d_bytes(g, sh);
    if (prepare) return cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (k1 <= k0) return cudaSuccess;
    hr_gargs<T> a = hr_gpu_args<T>(g);
    a.lo = k0;
    a.hi = k1;
    const long threads = ((long)g->nx + V - 1) / V;
    const long chunks = ((long)k1 - k0 + sh.h - 1) / sh.h;
    const dim3 blk(sh.bx, sh.by), grd((unsigned)((threads + sh.bx - 1) / sh.bx),
                                      (unsigned)((g->ny + sh.by - 1) / sh.by), hr_grid_y(chunks));
    kern<<<grd, blk, bytes, st>>>(a, sh.h);
    return HR_LAUNCHED();
}

static cudaError_t tuned3d_any(hr_gpu *g, int k0, int k1, cudaStream_t st, bool prepare)
{
    if (hr_gpu_weighted(g))
        return g->dbl ? go_tuned<double, true>(g, k0, k1, st, prepare)
                      : go_tuned<float, true>(g, k0, k1, st, prepare);
    return g->dbl ? go_tuned<double, false>(g, k0, k1, st, prepare)
                  : go_tuned<float, false>(g, k0, k1, st, prepare);
}

cudaError_t hr_gpu_tuned3d_planes(hr_gpu *g, int k0, int k1, cudaStream_t st)
{
    return tuned3d_any(g, k0, k1, st, false);
}

static cudaError_t launch_tuned3d(hr_gpu *g, int sweeps, cudaStream_t st)
{
    (void)sweeps;
    return tuned3d_any(g, 1, g->nz + 1, st, false);
}

static cudaError_t prepare_tuned3d(hr_gpu *g)
{
    return tuned3d_any(g, 1, 1, NULL, true);
}

static int check_tuned3d(const hr_gpu *g, hr_gpu_shape sh, char *why, size_t len)
{
    if (sh.bx % 32 || sh.bx < 32) {
        snprintf(why, len, "bx=%d: must be a multiple of 32 (whole warps along x)", sh.bx);
        return 1;
    }
    if (sh.h < 1 || sh.h > 1 << 20) {
        snprintf(why, len, "h=%d: planes per block must be 1..%d", sh.h, 1 << 20);
        return 1;
    }
    if (hr_gpu_check_block(g, sh, 1, why, len)) return 1;
    if ((g->ny + sh.by - 1) / sh.by > 65535) {
        snprintf(why, len, "by=%d: %d rows need more than 65535 blocks along y", sh.by, g->ny);
        return 1;
    }
    if (tuned3d_bytes(g, sh) > g->smem_optin) {
        snprintf(why, len, "tile needs %zu bytes of shared memory, the device allows %zu",
                 tuned3d_bytes(g, sh), g->smem_optin);
        return 1;
    }
    return 0;
}

static const hr_gpu_shape tuned3d_cands[] = {
    {32, 8, 64}, {32, 4, 64},  {32, 8, 32},   {32, 16, 64}, {32, 8, 128}, {32, 4, 128}, {64, 4, 64},
    {64, 8, 64}, {64, 4, 32},  {64, 2, 128},  {128, 2, 64}, {128, 4, 64}, {32, 16, 32}, {32, 32, 64},
    {32, 8, 16}, {64, 8, 128}, {128, 1, 128}, {32, 4, 256}, {64, 16, 64}, {32, 2, 128}};

const hr_gpu_family hr_fam_tuned3d = {1,
                                      0,
                                      {{32, 8, 64}, {32, 8, 64}},
                                      tuned3d_cands,
                                      (int)(sizeof tuned3d_cands / sizeof tuned3d_cands[0]),
                                      check_tuned3d,
                                      prepare_tuned3d,
                                      launch_tuned3d,
                                      hr_gpu_pass_one,
                                      0};
