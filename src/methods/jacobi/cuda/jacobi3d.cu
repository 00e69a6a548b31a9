/*
 * The 3-D 7-point sweep on the GPU, on the shared padded layout
 * (rows 128-byte aligned at column 1, plane stride pitch * (ny + 2)).
 *
 *   naive  one thread per point, all six neighbours from device memory (L1/L2 serve the
 *          reuse)
 *   tuned  Sourouri et al.'s pipelined wavefront: each thread owns R rows of V consecutive
 *          columns (R aligned 16-byte words) and marches them along z through h planes,
 *          keeping planes k-1, k, k+1 in registers and plane k+2 in flight while it
 *          computes plane k (R + 2 words per thread outstanding), so device memory sees
 *          every word read once and written once. North and south come from the thread's
 *          own rows, except the strip's two halo rows (extra loads, mostly L1/L2 hits:
 *          the neighbouring strips read them as their own); west and east come from the
 *          neighbouring lanes by warp shuffle (lanes 0 and 31 load one element). No shared
 *          memory and no barrier: warps run ahead independently (the first version kept
 *          the x-y tile in shared memory with a barrier per plane and reached 83% / 88% of
 *          copy at 512^3; docs/results/gpu-3d.md).
 *
 * Both use the macros of common/stencil.h in the CPU reference's order, so they are
 * bitwise equal to cpu-seq (CUDA is built with -fmad=false).
 *
 * Shapes: tuned (bx, by, h) = threads along x (a multiple of 32), rows per thread (1, 2,
 * 4, 8), planes per block; naive (bx, by, h) = threads along x and y, planes per thread.
 */
#include <stdio.h>

#include <type_traits>

#include "runtime/cuda/gpu_internal.cuh"
#include "methods/jacobi/cuda/gpu_region.h"

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
    if (hri_gpu_check_block(g, sh, sh.h, why, len)) return 1;
    if ((g->ny + sh.by - 1) / sh.by > 65535) {
        snprintf(why, len, "by=%d: %d rows need more than 65535 blocks along y", sh.by, g->ny);
        return 1;
    }
    return 0;
}

static const hr_gpu_shape naive3d_cands[] = {{32, 4, 1},  {32, 8, 1},  {64, 4, 1}, {128, 2, 1}, {128, 4, 1},
                                             {256, 1, 1}, {32, 16, 1}, {64, 8, 1}, {32, 4, 4},  {128, 1, 8}};

const hr_gpu_family hri_fam_naive3d = {1,
                                      0,
                                      {{32, 8, 1}, {32, 8, 1}},
                                      naive3d_cands,
                                      (int)(sizeof naive3d_cands / sizeof naive3d_cands[0]),
                                      check_naive3d,
                                      NULL,
                                      launch_naive3d,
                                      hri_gpu_pass_one,
                                      0};

/* ------------------------------------------------------------ tuned */

/* Shape flags in by (rows per thread R = by & 15): odd z-chunks march down (zig-zag, + 16);
 * with zig-zag, + 32: chunk-major block order (grid y = chunks, grid z = row blocks). */
#define HR_TUNED3D_ZIGZAG     16
#define HR_TUNED3D_CHUNKMAJOR 32

/* R rows of V columns per thread; the block is bx threads along x (whole warps). */
template <typename T, int V, int R, bool W, bool ZZ>
__device__ __forceinline__ void hr_tuned3d_body(const hr_gargs<T> &a, int h, int cm)
{
    typedef hr_vec3<T, V> VT;
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const int nx = a.nx, ny = a.ny, nz = a.nz;
    const size_t p = a.pitch, q = a.plane;
    const int j = 1 + (blockIdx.x * blockDim.x + threadIdx.x) * V; /* first of this thread's columns */
    /* columns up to nx+1 are read (past it: padding or the spare row, never written) */
    const bool have = j <= nx + 1;
    const bool full = j + V - 1 <= nx;
    const int edge = lane == 0 ? -1 : (lane == 31 ? V : 0);
    const bool edge_ok = edge != 0 && have && j + edge <= nx + 1;
    VT zero;
#pragma unroll
    for (int e = 0; e < V; e++)
        zero.v[e] = (T)0;
    const long chunks = ((long)a.hi - a.lo + h - 1) / h;
    /* chunk-major (ZZ only): grid y walks the z-chunks, grid z the row blocks, so the two
     * chunks of a boundary are neighbours in launch order and start together */
    const bool cmo = ZZ && cm;
    const long y0 = cmo ? blockIdx.z : blockIdx.y, ys = cmo ? gridDim.z : gridDim.y;
    const long z0 = cmo ? blockIdx.y : blockIdx.z, zs = cmo ? gridDim.y : gridDim.z;
    for (long yb = y0; yb * R < ny; yb += ys) {
        const int i0 = 1 + (int)yb * R;                       /* rows [i0, i0 + R) */
        const T *__restrict__ col = a.u + (size_t)i0 * p + j; /* (i0, j, 0) */
        T *__restrict__ out = a.un + (size_t)i0 * p + j;
        const T *hf = a.hf ? a.hf + (size_t)i0 * p + j : (const T *)NULL;
        bool rok[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            rok[r] = have && i0 + r <= ny + 1;
        const bool sok = have && i0 + R <= ny + 1;
        for (long zc = z0; zc < chunks; zc += zs) {
            const int k0 = a.lo + (int)zc * h, k1 = min(k0 + h, a.hi); /* planes [k0, k1) */
            /* one chunk marched up (k0 -> k1 - 1) or down; D: the direction as a type */
            auto march = [&](auto dtag) {
                constexpr bool D = decltype(dtag)::value;
                constexpr int s = D ? -1 : 1;   /* step along z */
                const int kb = D ? k1 - 1 : k0; /* first plane */
                VT d[R], c[R], u[R];            /* planes kb - s (behind), kb, kb + s (ahead) */
                T sd[R];
#pragma unroll
                for (int r = 0; r < R; r++) {
                    const T *x = col + (size_t)r * p;
                    d[r] = rok[r] ? *(const VT *)(x + (size_t)(kb - s) * q) : zero;
                    c[r] = rok[r] ? *(const VT *)(x + (size_t)kb * q) : zero;
                    u[r] = rok[r] ? *(const VT *)(x + (size_t)(kb + s) * q) : zero; /* in 0..nz+1 */
                    sd[r] = (edge_ok && rok[r]) ? x[(size_t)kb * q + edge] : (T)0;
                }
                VT hn = have ? *(const VT *)(col - p + (size_t)kb * q) : zero;
                VT hs = sok ? *(const VT *)(col + (size_t)R * p + (size_t)kb * q) : zero;
                for (int t = 0; t < k1 - k0; t++) {
                    const int k = kb + s * t;
                    /* the next step's loads go out first: R + 2 words per thread in flight */
                    const bool more = t + 1 < k1 - k0;
                    const int k2 = k + 2 * s; /* in 0..nz+1 whenever more (up: <= a.hi; down: >= k0 - 1) */
                    VT u2[R];
                    T sd2[R];
#pragma unroll
                    for (int r = 0; r < R; r++) {
                        const T *x = col + (size_t)r * p;
                        u2[r] = (rok[r] && more && k2 >= 0 && k2 <= nz + 1)
                                    ? *(const VT *)(x + (size_t)k2 * q)
                                    : zero;
                        sd2[r] = (edge_ok && rok[r] && more) ? x[(size_t)(k + s) * q + edge] : (T)0;
                    }
                    const VT hn2 = (have && more) ? *(const VT *)(col - p + (size_t)(k + s) * q) : zero;
                    const VT hs2 =
                        (sok && more) ? *(const VT *)(col + (size_t)R * p + (size_t)(k + s) * q) : zero;
                    const size_t kq = (size_t)k * q;
#pragma unroll
                    for (int r = 0; r < R; r++) {
                        T w0 = __shfl_up_sync(FULL, c[r].v[V - 1], 1);
                        T e1 = __shfl_down_sync(FULL, c[r].v[0], 1);
                        if (lane == 0) w0 = sd[r];
                        if (lane == 31) e1 = sd[r];
                        const int i = i0 + r;
                        if (i <= ny && j <= nx) {
                            const VT nn = r == 0 ? hn : c[r == 0 ? 0 : r - 1];
                            const VT ss = r == R - 1 ? hs : c[r == R - 1 ? R - 1 : r + 1];
                            const VT &below = D ? u[r] : d[r], &above = D ? d[r] : u[r]; /* k - 1, k + 1 */
                            const size_t o = kq + (size_t)r * p;
                            const T *hk = hf ? hf + o : (const T *)NULL;
                            VT res;
#pragma unroll
                            for (int e = 0; e < V; e++) {
                                const T w = e == 0 ? w0 : c[r].v[e - 1];
                                const T ea = e == V - 1 ? e1 : c[r].v[e + 1];
                                res.v[e] = hr_point7<T, W>(w, ea, nn.v[e], ss.v[e], below.v[e], above.v[e],
                                                           c[r].v[e], hk, e, i, j + e, k, a.sp, a.c0, a.c1);
                            }
                            if (full) {
                                *(VT *)(out + o) = res;
                            } else {
#pragma unroll
                                for (int e = 0; e < V; e++)
                                    if (j + e <= nx) out[o + e] = res.v[e];
                            }
                        }
                    }
#pragma unroll
                    for (int r = 0; r < R; r++) {
                        d[r] = c[r];
                        c[r] = u[r];
                        u[r] = u2[r];
                        sd[r] = sd2[r];
                    }
                    hn = hn2;
                    hs = hs2;
                }
            };
            /* zig-zag: odd chunks march down, so each chunk boundary is reached by both of its
             * chunks at the same moment (both start or both end there) and the halo planes
             * one reads are the planes the other is reading: L2 hits, not DRAM re-reads */
            if (ZZ && (zc & 1))
                march(std::true_type{});
            else
                march(std::false_type{});
        }
    }
}

/* The straight kernel as measured before; the zig-zag one with (256, 1): the plain bound let
 * ptxas cap the double R = 4 zig-zag instantiation at 128 registers and spill. */
template <typename T, int V, int R, bool W>
__global__ void __launch_bounds__(256) hr_k_tuned3d(hr_gargs<T> a, int h)
{
    hr_tuned3d_body<T, V, R, W, false>(a, h, 0);
}
template <typename T, int V, int R, bool W>
__global__ void __launch_bounds__(256, 1) hr_k_tuned3d_zz(hr_gargs<T> a, int h, int cm)
{
    hr_tuned3d_body<T, V, R, W, true>(a, h, cm);
}

template <typename T, bool W, int R> static cudaError_t go_tuned_r(hr_gpu *g, hr_gargs<T> a, cudaStream_t st)
{
    const int V = 16 / (int)sizeof(T);
    const hr_gpu_shape sh = g->shape;
    const long threads = ((long)g->nx + V - 1) / V;
    const long chunks = ((long)a.hi - a.lo + sh.h - 1) / sh.h;
    const unsigned gx = (unsigned)((threads + sh.bx - 1) / sh.bx), gy = hr_grid_y(((long)g->ny + R - 1) / R),
                   gz = hr_grid_y(chunks);
    const dim3 blk(sh.bx);
    if (sh.by & HR_TUNED3D_CHUNKMAJOR)
        hr_k_tuned3d_zz<T, 16 / sizeof(T), R, W><<<dim3(gx, gz, gy), blk, 0, st>>>(a, sh.h, 1);
    else if (sh.by & HR_TUNED3D_ZIGZAG)
        hr_k_tuned3d_zz<T, 16 / sizeof(T), R, W><<<dim3(gx, gy, gz), blk, 0, st>>>(a, sh.h, 0);
    else
        hr_k_tuned3d<T, 16 / sizeof(T), R, W><<<dim3(gx, gy, gz), blk, 0, st>>>(a, sh.h);
    return HR_LAUNCHED();
}

template <typename T, bool W> static cudaError_t go_tuned(hr_gpu *g, int k0, int k1, cudaStream_t st)
{
    if (k1 <= k0) return cudaSuccess;
    hr_gargs<T> a = hr_gpu_args<T>(g);
    a.lo = k0;
    a.hi = k1;
    switch (g->shape.by & 15) {
    case 1: return go_tuned_r<T, W, 1>(g, a, st);
    case 2: return go_tuned_r<T, W, 2>(g, a, st);
    case 4: return go_tuned_r<T, W, 4>(g, a, st);
    default: return go_tuned_r<T, W, 8>(g, a, st);
    }
}

cudaError_t hri_gpu_tuned3d_planes(hr_gpu *g, int k0, int k1, cudaStream_t st)
{
    if (hr_gpu_weighted(g))
        return g->dbl ? go_tuned<double, true>(g, k0, k1, st) : go_tuned<float, true>(g, k0, k1, st);
    return g->dbl ? go_tuned<double, false>(g, k0, k1, st) : go_tuned<float, false>(g, k0, k1, st);
}

static cudaError_t launch_tuned3d(hr_gpu *g, int sweeps, cudaStream_t st)
{
    (void)sweeps;
    if (g->split > 1 && g->split <= g->nz) { /* the region form, as a test hook: two parts, one sweep */
        cudaError_t e = hri_gpu_tuned3d_planes(g, g->split, g->nz + 1, st);
        return e != cudaSuccess ? e : hri_gpu_tuned3d_planes(g, 1, g->split, st);
    }
    return hri_gpu_tuned3d_planes(g, 1, g->nz + 1, st);
}

static int check_tuned3d(const hr_gpu *g, hr_gpu_shape sh, char *why, size_t len)
{
    (void)g;
    if (sh.bx % 32 || sh.bx < 32 || sh.bx > 256) {
        snprintf(why, len, "bx=%d: threads along x must be a multiple of 32 in 32..256", sh.bx);
        return 1;
    }
    const int rows = sh.by & 15, flags = sh.by & ~15;
    if (sh.by < 1 || (rows != 1 && rows != 2 && rows != 4 && rows != 8) ||
        (flags != 0 && flags != HR_TUNED3D_ZIGZAG && flags != HR_TUNED3D_ZIGZAG + HR_TUNED3D_CHUNKMAJOR)) {
        snprintf(why, len,
                 "by=%d: rows per thread must be 1, 2, 4 or 8 (+ %d: zig-zag chunks, + %d more: chunk-major "
                 "order)",
                 sh.by, HR_TUNED3D_ZIGZAG, HR_TUNED3D_CHUNKMAJOR);
        return 1;
    }
    if (sh.h < 1 || sh.h > 1 << 20) {
        snprintf(why, len, "h=%d: planes per block must be 1..%d", sh.h, 1 << 20);
        return 1;
    }
    return 0;
}

static const hr_gpu_shape tuned3d_cands[] = {
    {128, 2, 32},
    {128, 4, 32},
    {128, 1, 32},
    {128, 2, 64},
    {128, 4, 16},
    {128, 1, 64},
    {64, 2, 32},
    {64, 4, 32},
    {64, 2, 64},
    {64, 1, 64},
    {32, 4, 32},
    {32, 2, 64},
    {128, 8, 16},
    {64, 8, 16},
    {128, 2, 16},
    {128, 1, 128},
    {256, 2, 32},
    {256, 1, 64},
    {32, 8, 32},
    {64, 4, 64},
    {128, 8, 32},
    {128, 8, 24},
    {128, 4, 24},
    {256, 4, 16},
    {128, 8, 12},
    {64, 8, 24},
    {256, 8, 16},
    /* fewer, longer blocks: about one wave of resident threads, less z-halo (2 / h) */
    {128, 8, 64},
    {128, 8, 128},
    {128, 4, 64},
    {128, 4, 128},
    {128, 2, 128},
    {256, 4, 64},
    /* zig-zag chunks (by + 16): odd chunks march down, the chunk halo planes become L2 hits,
     * so short chunks (more blocks, less tail) cost no extra device-memory reads */
    {128, 24, 16},
    {128, 24, 8},
    {128, 24, 12},
    {128, 24, 24},
    {128, 20, 16},
    {128, 20, 8},
    {128, 20, 24},
    {128, 18, 16},
    {128, 18, 32},
    {64, 24, 16},
    {64, 20, 16},
    {256, 20, 16},
    {128, 17, 32},
    {256, 24, 8},
    /* zig-zag, chunk-major order (by + 48) */
    {128, 56, 16},
    {128, 56, 8},
    {128, 52, 16},
    {128, 52, 8},
    {64, 56, 16},
    {128, 50, 16}};

/* shape (bx, by, h): bx threads along x, by rows per thread (+ 16: zig-zag chunks, + 48:
 * zig-zag in chunk-major block order), h planes per block */
const hr_gpu_family hri_fam_tuned3d = {1,
                                      0,
                                      {{128, 2, 32}, {128, 2, 32}},
                                      tuned3d_cands,
                                      (int)(sizeof tuned3d_cands / sizeof tuned3d_cands[0]),
                                      check_tuned3d,
                                      NULL,
                                      launch_tuned3d,
                                      hri_gpu_pass_one,
                                      0};
