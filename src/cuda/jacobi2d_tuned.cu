/*
 * TunedSync for today's GPUs: column marching on the padded layout.
 *
 * Each thread owns one column of a strip of h rows. Rows start 128-byte aligned, so a
 * warp's load of one row of its 32 columns is one aligned 128-byte (fp32) or 256-byte
 * (fp64) request. North and centre stay in registers as the thread marches south; west
 * and east come from the neighbouring lanes by warp shuffle, and only lanes 0 and 31
 * load one extra word. Device memory then sees each word read once (plus two halo rows
 * per strip, mostly L2 hits) and written once: the copy-bandwidth limit. U rows are
 * loaded before any is used, so U independent loads per thread are in flight.
 *
 * Shape: bx threads (a multiple of 32) per strip, by strips per block, h rows per strip
 * (a multiple of U, the unroll depth, 4 or 8).
 */
#include <stdio.h>

#include "cuda/gpu_internal.cuh"

template <typename T, int U>
__global__ void hr_k_tuned(hr_gargs<T> a, int h)
{
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const int n = a.n;
    const size_t p = a.pitch;
    const int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    const bool have = j <= n + 1; /* column n+1 is the boundary: loaded, never written */
    const T *__restrict__ col = a.u + j;
    T *__restrict__ out = a.un + j;
    /* lanes at the warp's edges fetch the neighbour the shuffle cannot give */
    const int edge = lane == 0 ? -1 : (lane == 31 ? 1 : 0);
    const bool edge_ok = edge != 0 && have && j + edge <= n + 1;
    const long strips = ((long)n + h - 1) / h;
    for (long s = (long)blockIdx.y * blockDim.y + threadIdx.y; s < strips; s += (long)gridDim.y * blockDim.y) {
        const int i0 = 1 + (int)s * h;
        const int i1 = min(i0 + h, n + 1); /* rows [i0, i1) */
        T north = have ? col[(size_t)(i0 - 1) * p] : (T)0;
        T cur = have ? col[(size_t)i0 * p] : (T)0;
        for (int i = i0; i < i1; i += U) {
            T south[U], side[U];
#pragma unroll
            for (int q = 0; q < U; q++) {
                const bool in = i + q < i1;
                south[q] = (have && in) ? col[(size_t)(i + q + 1) * p] : (T)0;
                side[q] = (edge_ok && in) ? col[(size_t)(i + q) * p + edge] : (T)0;
            }
#pragma unroll
            for (int q = 0; q < U; q++) {
                const T c = q == 0 ? cur : south[q - 1];
                const T nn = q == 0 ? north : (q == 1 ? cur : south[q - 2]);
                T w = __shfl_up_sync(FULL, c, 1);
                T e = __shfl_down_sync(FULL, c, 1);
                if (lane == 0) w = side[q];
                if (lane == 31) e = side[q];
                const int r = i + q;
                if (r < i1 && j <= n) {
                    const size_t k = (size_t)r * p;
                    out[k] = hr_point(nn, south[q], w, e, a.hf ? a.hf + j : (const T *)NULL, k, r, j, a.spike);
                }
            }
            north = U >= 2 ? south[U - 2] : cur;
            cur = south[U - 1];
        }
    }
}

template <typename T, int U>
static cudaError_t go(hr_gpu *g, cudaStream_t st)
{
    const hr_gpu_shape sh = g->shape;
    const long strips = ((long)g->n + sh.h - 1) / sh.h;
    const dim3 blk(sh.bx, sh.by), grd((unsigned)((g->n + sh.bx - 1) / sh.bx), hr_grid_y((strips + sh.by - 1) / sh.by));
    hr_k_tuned<T, U><<<grd, blk, 0, st>>>(hr_gpu_args<T>(g), sh.h);
    return HR_LAUNCHED();
}

static cudaError_t launch_tuned(hr_gpu *g, int sweeps, cudaStream_t st)
{
    (void)sweeps;
    const bool u8 = g->shape.h % 8 == 0;
    if (g->dbl) return u8 ? go<double, 8>(g, st) : go<double, 4>(g, st);
    return u8 ? go<float, 8>(g, st) : go<float, 4>(g, st);
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
    return hr_gpu_check_block(g, sh, 1, why, len);
}

static const hr_gpu_shape tuned_cands[] = {
    {128, 1, 32}, {128, 1, 16}, {128, 1, 64}, {256, 1, 32}, {256, 1, 16}, {64, 2, 32}, {64, 4, 16},
    {32, 4, 32},  {128, 2, 16}, {128, 4, 8},  {512, 1, 16}, {128, 1, 8},  {64, 1, 8},  {32, 2, 8},
    {32, 1, 4},   {64, 1, 4},   {256, 1, 64}, {128, 1, 128}};

const hr_gpu_family hr_fam_tuned = {"tuned",       1,    0, {{128, 1, 32}, {128, 1, 32}},
                                    tuned_cands,   (int)(sizeof tuned_cands / sizeof tuned_cands[0]),
                                    check_tuned,   NULL, launch_tuned, hr_gpu_pass_one};
