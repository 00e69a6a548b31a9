/*
 * TunedSync for today's GPUs: column marching on the padded layout.
 *
 * Each thread owns V consecutive columns (one aligned 16-byte word: 4 floats or 2
 * doubles) of a strip of h rows. Rows start 128-byte aligned, so a warp's load of one
 * row is one aligned 512-byte request. North and centre stay in registers as the thread
 * marches south; west and east of the word's ends come from the neighbouring lanes by
 * warp shuffle, and only lanes 0 and 31 load one extra element. Device memory then sees each word read once
 * (plus two halo rows per strip, mostly L2 hits) and written once: the copy-bandwidth limit. U rows are
 * loaded before any is used, so U independent loads per thread are in flight.
 *
 * Shape: bx threads (a multiple of 32; they cover 16*bx/sizeof(T) columns) per strip,
 * by strips per block, h rows per strip (a multiple of the unroll depth U: 8 when h
 * allows, else 4).
 *
 * Programmatic dependent launch (Hopper and later): a sweep is launched while the one
 * before it drains; its blocks wait in cudaGridDependencySynchronize() until that sweep
 * has finished and its writes are visible, then let the next sweep launch. This takes
 * the launch gap between back-to-back sweeps out of the critical path (it is a few
 * per cent of a 45 us sweep at 4096^2). tuning.gpu_pdl off turns it off.
 */
#include <stdio.h>

#include "methods/jacobi/cuda/gpu_region.h"
#include "runtime/cuda/gpu_internal.cuh"

/* V consecutive columns per thread, moved as one aligned 16-byte word. */
template <typename T, int V> struct alignas(sizeof(T) * V) hr_vec {
    T v[V];
};

template <typename T, int V, int U, bool W> __global__ void hr_k_tuned(hr_gargs<T> a, int h)
{
    typedef hr_vec<T, V> VT;
    const unsigned FULL = 0xffffffffu;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize(); /* the previous sweep is complete (no-op without PDL) */
    cudaTriggerProgrammaticLaunchCompletion();
#endif
    const int lane = threadIdx.x & 31;
    const int n = a.nx; /* columns; rows come from the range [a.lo, a.hi) */
    const size_t p = a.pitch;
    const int j = 1 + (blockIdx.x * blockDim.x + threadIdx.x) * V; /* first of this thread's columns */
    /* columns up to n+1 (the boundary) are read; reading past it stays inside the padded
     * row or the spare row the device grid has, and is never written */
    const bool have = j <= n + 1;
    const bool full = j + V - 1 <= n; /* all V columns interior: one vector store */
    const T *__restrict__ col = a.u + j;
    T *__restrict__ out = a.un + j;
    const T *hf = a.hf ? a.hf + j : (const T *)NULL;
    /* lanes at the warp's edges fetch the neighbour the shuffle cannot give */
    const int edge = lane == 0 ? -1 : (lane == 31 ? V : 0);
    const bool edge_ok = edge != 0 && have && j + edge <= n + 1;
    VT zero;
#pragma unroll
    for (int e = 0; e < V; e++)
        zero.v[e] = (T)0;
    const long strips = ((long)a.hi - a.lo + h - 1) / h;
    for (long s = (long)blockIdx.y * blockDim.y + threadIdx.y; s < strips;
         s += (long)gridDim.y * blockDim.y) {
        const int i0 = a.lo + (int)s * h;
        const int i1 = min(i0 + h, a.hi); /* rows [i0, i1) */
        VT north = have ? *(const VT *)(col + (size_t)(i0 - 1) * p) : zero;
        VT cur = have ? *(const VT *)(col + (size_t)i0 * p) : zero;
        for (int i = i0; i < i1; i += U) {
            VT south[U];
            T side[U];
#pragma unroll
            for (int q = 0; q < U; q++) {
                const bool in = i + q < i1;
                south[q] = (have && in) ? *(const VT *)(col + (size_t)(i + q + 1) * p) : zero;
                side[q] = (edge_ok && in) ? col[(size_t)(i + q) * p + edge] : (T)0;
            }
#pragma unroll
            for (int q = 0; q < U; q++) {
                const VT c = q == 0 ? cur : south[q - 1];
                const VT nn = q == 0 ? north : (q == 1 ? cur : south[q - 2]);
                T w0 = __shfl_up_sync(FULL, c.v[V - 1], 1);
                T e1 = __shfl_down_sync(FULL, c.v[0], 1);
                if (lane == 0) w0 = side[q];
                if (lane == 31) e1 = side[q];
                const int r = i + q;
                if (r < i1 && j <= n) {
                    const size_t k = (size_t)r * p;
                    VT res;
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        const T w = e == 0 ? w0 : c.v[e - 1];
                        const T ea = e == V - 1 ? e1 : c.v[e + 1];
                        res.v[e] = hr_point<T, W>(nn.v[e], south[q].v[e], w, ea, hf, k + e, r, j + e, a.sp,
                                                  c.v[e], a.c0, a.c1);
                    }
                    if (full) {
                        *(VT *)(out + k) = res;
                    } else {
#pragma unroll
                        for (int e = 0; e < V; e++)
                            if (j + e <= n) out[k + e] = res.v[e];
                    }
                }
            }
            north = U >= 2 ? south[U - 2] : cur;
            cur = south[U - 1];
        }
    }
}

/* 16 bytes per thread: four floats or two doubles. Rows [r0, r1) of the interior. */
template <typename T, bool W> static cudaError_t go(hr_gpu *g, int r0, int r1, cudaStream_t st)
{
    const int V = 16 / (int)sizeof(T);
    const hr_gpu_shape sh = g->shape;
    if (r1 <= r0) return cudaSuccess;
    hr_gargs<T> a = hr_gpu_args<T>(g);
    a.lo = r0;
    a.hi = r1;
    const long strips = ((long)r1 - r0 + sh.h - 1) / sh.h;
    const long threads = ((long)g->nx + V - 1) / V;
    const dim3 blk(sh.bx, sh.by),
        grd((unsigned)((threads + sh.bx - 1) / sh.bx), hr_grid_y((strips + sh.by - 1) / sh.by));
    void (*k)(hr_gargs<T>, int) =
        sh.h % 8 == 0 ? hr_k_tuned<T, 16 / sizeof(T), 8, W> : hr_k_tuned<T, 16 / sizeof(T), 4, W>;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = grd;
    cfg.blockDim = blk;
    cfg.stream = st;
    if (hri_gpu_pdl(g)) {
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    return cudaLaunchKernelEx(&cfg, k, a, sh.h);
}

cudaError_t hri_gpu_tuned2d_rows(hr_gpu *g, int r0, int r1, cudaStream_t st)
{
    if (hr_gpu_weighted(g)) return g->dbl ? go<double, true>(g, r0, r1, st) : go<float, true>(g, r0, r1, st);
    return g->dbl ? go<double, false>(g, r0, r1, st) : go<float, false>(g, r0, r1, st);
}

static cudaError_t launch_tuned(hr_gpu *g, int sweeps, cudaStream_t st)
{
    (void)sweeps;
    if (g->split > 1 && g->split <= g->ny) { /* the region form, as a test hook: two parts, one sweep */
        cudaError_t e = hri_gpu_tuned2d_rows(g, g->split, g->ny + 1, st);
        return e != cudaSuccess ? e : hri_gpu_tuned2d_rows(g, 1, g->split, st);
    }
    return hri_gpu_tuned2d_rows(g, 1, g->ny + 1, st);
}

static int check_tuned(const hr_gpu *g, hr_gpu_shape sh, char *why, size_t len)
{
    if (sh.bx % 32 || sh.bx < 32) {
        snprintf(why, len, "bx=%d: must be a multiple of 32 (whole warps per strip)", sh.bx);
        return 1;
    }
    if (sh.h < 4 || sh.h % 4 || sh.h > 512) {
        snprintf(why, len, "h=%d: strip height must be a multiple of 4 in 4..512", sh.h);
        return 1;
    }
    return hri_gpu_check_block(g, sh, 1, why, len);
}

static const hr_gpu_shape tuned_cands[] = {{64, 1, 16}, {64, 1, 32},  {64, 1, 8},  {128, 1, 16}, {128, 1, 32},
                                           {128, 1, 8}, {32, 4, 16},  {32, 2, 32}, {32, 1, 16},  {64, 2, 16},
                                           {64, 4, 8},  {256, 1, 16}, {256, 1, 8}, {128, 2, 8},  {32, 1, 8},
                                           {32, 1, 4},  {64, 1, 4},   {64, 1, 64}, {128, 1, 4},  {32, 4, 4}};

const hr_gpu_family hri_fam_tuned = {1,
                                    0,
                                    {{64, 1, 16}, {64, 1, 16}},
                                    tuned_cands,
                                    (int)(sizeof tuned_cands / sizeof tuned_cands[0]),
                                    check_tuned,
                                    NULL,
                                    launch_tuned,
                                    hri_gpu_pass_one,
                                    0};
