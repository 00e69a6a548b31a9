/*
 * The "wildly asynchronous" kernels of Venkatasubramanian & Vuduc section 3.4.2, line by line as figures
 * 7-10 give them. A block owns an R x C tile (R = by*h rows, C = bx columns), keeps it
 * in shared memory with a one-point fringe, and does alpha local sweeps per launch (one
 * launch = one global synchronisation), then one last Jacobi step written to the other
 * grid. The "penultimate fringe" (the tile's outermost ring of unknowns) is written in
 * place into the grid being read, and neighbours re-read their fringe from there, so
 * blocks see whatever mix of old and new values the hardware's schedule gives.
 *
 *   async0 (fig. 7)  two tiles B1/B2, fringe write + fetch each local sweep, 6 syncs
 *   async1 (fig. 8)  async0 without the syncs of fig. 7 lines 10, 12, 16, 18
 *   async2 (fig. 9)  no fringe write/fetch inside the alpha loop (block Jacobi)
 *   async3 (fig. 10) one tile updated in place, fringe exchange, no local sync
 *
 * Sweeps per launch: async0-2 do 2*floor(alpha/2) local sweeps + 1 (alpha = 1: one
 * plain synchronous sweep; even alpha: Teff = (T/alpha)(alpha+1)); async3 does alpha + 1.
 * --iters counts these effective sweeps; a last short launch makes the count exact.
 */
#include <stdio.h>

#include "runtime/cuda/gpu_internal.cuh"

/* Cell q of the ring of rectangle rows [r0, r0+nr), cols [c0, c0+nc). */
__device__ __forceinline__ void ring_cell(int q, int r0, int nr, int c0, int nc, int *r, int *c)
{
    if (nr == 1 || nc == 1) {
        *r = r0 + (nc == 1 ? q : 0);
        *c = c0 + (nc == 1 ? 0 : q);
        return;
    }
    if (q < nc) { *r = r0; *c = c0 + q; return; }
    q -= nc;
    if (q < nc) { *r = r0 + nr - 1; *c = c0 + q; return; }
    q -= nc;
    if (q < nr - 2) { *r = r0 + 1 + q; *c = c0; return; }
    *r = r0 + 1 + (q - (nr - 2));
    *c = c0 + nc - 1;
}

__device__ __forceinline__ int ring_count(int nr, int nc) { return (nr == 1 || nc == 1) ? nr * nc : 2 * nc + 2 * (nr - 2); }

template <typename T>
struct hr_async_tile {
    int i0, j0;     /* global position of tile cell (1, 1) */
    int Rd, Cd;     /* rows / columns of the tile inside the interior */
    int W;          /* shared row length, C + 2 */
    int rpt, tid, nth;
};

/* One Jacobi sweep of this thread's points from src into dst (dst may be src: async3);
 * into global memory when out != NULL (the last step of a launch). */
template <typename T>
__device__ __forceinline__ void tile_sweep(const hr_gargs<T> &a, const hr_async_tile<T> &tl, const T *src, T *dst,
                                           T *out)
{
    const int c = threadIdx.x + 1;
    if (c > tl.Cd) return;
    const int j = tl.j0 - 1 + c;
    const int rb = 1 + threadIdx.y * tl.rpt, re = min(rb + tl.rpt, tl.Rd + 1);
    for (int r = rb; r < re; r++) {
        const int k = r * tl.W + c, i = tl.i0 - 1 + r;
        const size_t g = (size_t)i * a.pitch + j;
        const T v = hr_point(src[k - tl.W], src[k + tl.W], src[k - 1], src[k + 1], a.hf, g, i, j, a.sp);
        if (out)
            out[g] = v;
        else
            dst[k] = v;
    }
}

/* async3's in-place sweep with the thread's own strip of rows kept in registers (reg).
 * Only this thread writes its strip, so reg always equals the strip in the tile: north
 * and south inside the strip come from reg (north already updated this sweep, as in
 * place demands), west and east and the strip's ends from the tile, and every new value
 * is published to the tile at once for the neighbours. Same arithmetic and order as
 * tile_sweep(src = dst = B), without a shared-memory store-to-load round trip per row.
 * HR_ASYNC_MAX_RPT bounds the rows per thread of async3 (async0-2 take any h): on the
 * H100, 16 made the 8-row shapes slower (more registers, fewer resident warps) and cost
 * async3 more than the taller strips gained (docs/results/async.md). */
#define HR_ASYNC_MAX_RPT 8
template <typename T>
__device__ __forceinline__ void strip_load(const hr_async_tile<T> &tl, const T *B, T *reg)
{
    const int c = threadIdx.x + 1, rb = 1 + threadIdx.y * tl.rpt, cnt = min(tl.rpt, tl.Rd + 1 - rb);
    if (c > tl.Cd) return;
#pragma unroll
    for (int q = 0; q < HR_ASYNC_MAX_RPT; q++)
        if (q < cnt) reg[q] = B[(rb + q) * tl.W + c];
}

template <typename T>
__device__ __forceinline__ void strip_sweep_inplace(const hr_gargs<T> &a, const hr_async_tile<T> &tl, T *B, T *reg)
{
    const int c = threadIdx.x + 1, rb = 1 + threadIdx.y * tl.rpt, cnt = min(tl.rpt, tl.Rd + 1 - rb);
    if (c > tl.Cd) return;
    const int j = tl.j0 - 1 + c;
#pragma unroll
    for (int q = 0; q < HR_ASYNC_MAX_RPT; q++) {
        if (q >= cnt) break;
        const int r = rb + q, k = r * tl.W + c, i = tl.i0 - 1 + r;
        const T un = q == 0 ? B[k - tl.W] : reg[q - 1];
        const T us = q + 1 == cnt ? B[k + tl.W] : reg[q + 1 < HR_ASYNC_MAX_RPT ? q + 1 : q];
        const T v = hr_point(un, us, B[k - 1], B[k + 1], a.hf, (size_t)i * a.pitch + j, i, j, a.sp);
        reg[q] = v;
        B[k] = v;
    }
}

/* Penultimate fringe: the tile's outer ring of unknowns, written into the grid read. */
template <typename T>
__device__ __forceinline__ void fringe_out(const hr_gargs<T> &a, const hr_async_tile<T> &tl, const T *B)
{
    T *ug = const_cast<T *>(a.u);
    const int cnt = ring_count(tl.Rd, tl.Cd);
    for (int q = tl.tid; q < cnt; q += tl.nth) {
        int r, c;
        ring_cell(q, 1, tl.Rd, 1, tl.Cd, &r, &c);
        ug[(size_t)(tl.i0 - 1 + r) * a.pitch + (tl.j0 - 1 + c)] = B[r * tl.W + c];
    }
}

/* Fringe: the ring of cells around the tile's interior part, read from the grid. */
template <typename T>
__device__ __forceinline__ void fringe_in(const hr_gargs<T> &a, const hr_async_tile<T> &tl, T *B)
{
    const volatile T *ug = a.u; /* other blocks write it during this launch */
    const int cnt = ring_count(tl.Rd + 2, tl.Cd + 2);
    for (int q = tl.tid; q < cnt; q += tl.nth) {
        int r, c;
        ring_cell(q, 0, tl.Rd + 2, 0, tl.Cd + 2, &r, &c);
        B[r * tl.W + c] = ug[(size_t)(tl.i0 - 1 + r) * a.pitch + (tl.j0 - 1 + c)];
    }
}

template <typename T, int V>
__global__ void hr_k_async(hr_gargs<T> a, int loops, int rpt)
{
    extern __shared__ __align__(16) unsigned char hr_smem_raw[];
    const int C = blockDim.x, R = blockDim.y * rpt, W = C + 2;
    T *B1 = (T *)hr_smem_raw, *B2 = B1 + (size_t)(R + 2) * W;
    const int n = a.n;
    hr_async_tile<T> tl;
    tl.W = W;
    tl.rpt = rpt;
    tl.tid = threadIdx.y * blockDim.x + threadIdx.x;
    tl.nth = blockDim.x * blockDim.y;
    tl.j0 = 1 + blockIdx.x * C;
    tl.Cd = min(C, n - tl.j0 + 1);
    const long tiles = ((long)n + R - 1) / R;
    T reg[HR_ASYNC_MAX_RPT]; /* async3: this thread's strip */
    for (long t = blockIdx.y; t < tiles; t += gridDim.y) {
        tl.i0 = 1 + (int)t * R;
        tl.Rd = min(R, n - tl.i0 + 1);
        /* fig. 7 line 4: fetch the tile and its fringe into B1 */
        for (int r = threadIdx.y; r < tl.Rd + 2; r += blockDim.y)
            for (int c = threadIdx.x; c < tl.Cd + 2; c += blockDim.x)
                B1[r * W + c] = a.u[(size_t)(tl.i0 - 1 + r) * a.pitch + (tl.j0 - 1 + c)];
        if (V != 3) { /* line 5: copy just the fringe to B2 */
            __syncthreads();
            const int cnt = ring_count(tl.Rd + 2, tl.Cd + 2);
            for (int q = tl.tid; q < cnt; q += tl.nth) {
                int r, c;
                ring_cell(q, 0, tl.Rd + 2, 0, tl.Cd + 2, &r, &c);
                B2[r * W + c] = B1[r * W + c];
            }
        }
        __syncthreads(); /* line 6 */
        if (V == 3) strip_load(tl, B1, reg);
        for (int v = 0; v < loops; v++) {
            if (V == 3) { /* fig. 10 lines 7-9: no synchronisation at all */
                strip_sweep_inplace(a, tl, B1, reg);
                fringe_out(a, tl, B1);
                fringe_in(a, tl, B1);
                continue;
            }
            tile_sweep(a, tl, B1, B2, (T *)NULL); /* line 9 */
            if (V == 0 || V == 2) __syncthreads(); /* line 10 (fig. 9 line 9) */
            if (V != 2) {
                fringe_out(a, tl, B2);             /* line 11 */
                if (V == 0) __syncthreads();       /* line 12 */
                fringe_in(a, tl, B2);              /* line 13 */
                __syncthreads();                   /* line 14 */
            }
            tile_sweep(a, tl, B2, B1, (T *)NULL); /* line 15 */
            if (V == 0 || V == 2) __syncthreads(); /* line 16 (fig. 9 line 11) */
            if (V != 2) {
                fringe_out(a, tl, B1);             /* line 17 */
                if (V == 0) __syncthreads();       /* line 18 */
                fringe_in(a, tl, B1);              /* line 19 */
                __syncthreads();                   /* line 20 */
            }
        }
        /* lines 22-23: one Jacobi step from B1, written to the other grid */
        tile_sweep(a, tl, B1, (T *)NULL, a.un);
        __syncthreads(); /* the next tile (grid-stride) reuses the shared memory */
    }
}

/* 0..3: async0..async3 (the family's variant field). */
static int variant_of(const hr_gpu_family *f) { return f->variant; }

static size_t async_bytes(const hr_gpu *g, hr_gpu_shape sh)
{
    const size_t tile = ((size_t)sh.by * sh.h + 2) * ((size_t)sh.bx + 2) * g->esize;
    return variant_of(g->fam) == 3 ? tile : 2 * tile;
}

/* Local sweeps one full launch does, and the loop count for `sweeps` sweeps. */
static int pass_async(const hr_gpu *g, long remaining)
{
    if (variant_of(g->fam) == 3) return remaining < g->alpha + 1L ? (int)remaining : g->alpha + 1;
    const int full = 2 * (g->alpha / 2) + 1;
    if (remaining >= full) return full;
    return remaining % 2 ? (int)remaining : (int)remaining - 1;
}

template <typename T, int V>
static cudaError_t go(hr_gpu *g, int sweeps, cudaStream_t st, bool prepare)
{
    void (*k)(hr_gargs<T>, int, int) = hr_k_async<T, V>;
    const hr_gpu_shape sh = g->shape;
    const size_t bytes = async_bytes(g, sh);
    if (prepare) return cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    const int loops = V == 3 ? sweeps - 1 : (sweeps - 1) / 2;
    const int R = sh.by * sh.h;
    const dim3 blk(sh.bx, sh.by), grd((unsigned)((g->n + sh.bx - 1) / sh.bx), hr_grid_y(((long)g->n + R - 1) / R));
    k<<<grd, blk, bytes, st>>>(hr_gpu_args<T>(g), loops, sh.h);
    return HR_LAUNCHED();
}

template <typename T>
static cudaError_t go_v(hr_gpu *g, int sweeps, cudaStream_t st, bool prepare)
{
    switch (variant_of(g->fam)) {
    case 0: return go<T, 0>(g, sweeps, st, prepare);
    case 1: return go<T, 1>(g, sweeps, st, prepare);
    case 2: return go<T, 2>(g, sweeps, st, prepare);
    default: return go<T, 3>(g, sweeps, st, prepare);
    }
}

static cudaError_t launch_async(hr_gpu *g, int sweeps, cudaStream_t st)
{
    return g->dbl ? go_v<double>(g, sweeps, st, false) : go_v<float>(g, sweeps, st, false);
}

static cudaError_t prepare_async(hr_gpu *g)
{
    return g->dbl ? go_v<double>(g, 1, NULL, true) : go_v<float>(g, 1, NULL, true);
}

static int check_async(const hr_gpu *g, hr_gpu_shape sh, char *why, size_t len)
{
    if (hri_gpu_check_block(g, sh, sh.h, why, len)) return 1;
    if (variant_of(g->fam) == 3 && sh.h > HR_ASYNC_MAX_RPT) {
        snprintf(why, len, "async3 keeps at most %d rows per thread in registers (h=%d)", HR_ASYNC_MAX_RPT, sh.h);
        return 1;
    }
    /* as on the CPU (docs/async.md): alpha local sweeps cannot usefully exceed the
     * tile's smaller side, the distance information travels inside one pass */
    const int side = sh.bx < sh.by * sh.h ? sh.bx : sh.by * sh.h;
    if (g->alpha > side) {
        snprintf(why, len, "alpha=%d: larger than the %dx%d tile's smaller side", g->alpha, sh.by * sh.h, sh.bx);
        return 1;
    }
    if (async_bytes(g, sh) > g->smem_optin) {
        snprintf(why, len, "tile needs %zu bytes of shared memory, the device allows %zu", async_bytes(g, sh),
                 g->smem_optin);
        return 1;
    }
    return 0;
}

/* up to 256x32 and 128x64 tiles: a larger tile spends less of each local sweep on its fringe ring */
static const hr_gpu_shape async_cands[] = {{64, 8, 4},  {64, 8, 1},  {32, 8, 4},  {128, 4, 4}, {64, 4, 8},
                                           {128, 8, 2}, {32, 16, 2}, {128, 2, 8}, {256, 2, 4}, {64, 16, 2},
                                           {64, 16, 4}, {128, 8, 4}, {128, 4, 8}, {64, 8, 8},  {128, 8, 8},
                                           {256, 4, 4}, {128, 4, 16}, {128, 2, 16}, {64, 4, 16}, {256, 2, 16}};
#define NAC ((int)(sizeof async_cands / sizeof async_cands[0]))
#define ASYNC_FAMILY(var, v)                                                                      \
    const hr_gpu_family var = {1, 0, {{64, 8, 4}, {64, 8, 4}}, async_cands, NAC, check_async, prepare_async, \
                               launch_async, pass_async, v}
ASYNC_FAMILY(hri_fam_async0, 0);
ASYNC_FAMILY(hri_fam_async1, 1);
ASYNC_FAMILY(hri_fam_async2, 2);
ASYNC_FAMILY(hri_fam_async3, 3);
