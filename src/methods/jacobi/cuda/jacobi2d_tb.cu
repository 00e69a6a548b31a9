/*
 * tb: exact temporal blocking, the deterministic counterpart of the async variants.
 *
 * A block loads a tile with a halo of width A = alpha (A = --alpha), then does up to A
 * Jacobi sweeps on it in shared memory, ping-ponging two buffers; each sweep's valid
 * region shrinks by one point per side, so after A sweeps the centre is exactly what A
 * global sweeps give, and only the centre is written back. Device memory sees one read
 * of the (haloed) tile and one write per A sweeps instead of A of each. Points outside
 * the interior keep their value (the boundary ring never changes), and every update
 * uses the same macro as the reference: the result is bitwise that of `tuned`.
 *
 * Shape: bx threads per row (one buffer column each; the output tile is bx - 2A wide),
 * by thread rows (each marches a segment of rows), h output rows per tile.
 */
#include <stdio.h>

#include "runtime/cuda/gpu_internal.cuh"

template <typename T>
__global__ void hr_k_tb(hr_gargs<T> a, int A, int steps, int th)
{
    extern __shared__ __align__(16) unsigned char hr_smem_raw[];
    const int W = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int TW = W - 2 * A, H = th + 2 * A;
    T *s0 = (T *)hr_smem_raw, *s1 = s0 + (size_t)H * W;
    const int nx = a.nx, n = a.ny; /* n: rows */
    const size_t p = a.pitch;
    const int gj = 1 + blockIdx.x * TW - A + tx; /* this thread's global column */
    const bool col_mem = gj >= 0 && gj <= nx + 1, col_in = gj >= 1 && gj <= nx;
    const int seg = (H + by - 1) / by;
    const long tiles = ((long)n + th - 1) / th;
    for (long t = blockIdx.y; t < tiles; t += gridDim.y) {
        const int gi0 = 1 + (int)t * th - A; /* global row of buffer row 0 */
        for (int r = ty; r < H; r += by) {
            const int gi = gi0 + r;
            s0[r * W + tx] = (col_mem && gi >= 0 && gi <= n + 1) ? a.u[(size_t)gi * p + gj] : (T)0;
        }
        __syncthreads();
        T *src = s0, *dst = s1;
        const int e = A - steps; /* a short pass starts that much further in */
        for (int st = 1; st <= steps; st++) {
            const int lo = e + st, hi_r = H - e - st, hi_c = W - e - st;
            const int rb = max(lo, ty * seg), re = min(hi_r, (ty + 1) * seg);
            if (tx >= lo && tx < hi_c && rb < re) {
                T nn = src[(rb - 1) * W + tx], cc = src[rb * W + tx];
                for (int r = rb; r < re; r++) {
                    const T ss = src[(r + 1) * W + tx];
                    const int gi = gi0 + r;
                    T v = cc;
                    if (col_in && gi >= 1 && gi <= n) {
                        const size_t k = (size_t)gi * p + gj;
                        v = hr_point(nn, ss, src[r * W + tx - 1], src[r * W + tx + 1], a.hf, k, gi, gj, a.sp);
                    }
                    dst[r * W + tx] = v;
                    nn = cc;
                    cc = ss;
                }
            }
            __syncthreads();
            T *x = src;
            src = dst;
            dst = x;
        }
        if (tx >= A && tx < A + TW && col_in) {
            for (int r = A + ty; r < A + th; r += by) {
                const int gi = gi0 + r;
                if (gi <= n) a.un[(size_t)gi * p + gj] = src[r * W + tx];
            }
        }
        __syncthreads(); /* the next tile reuses the buffers */
    }
}

static size_t tb_bytes(const hr_gpu *g, hr_gpu_shape sh)
{
    return 2 * ((size_t)sh.h + 2 * (size_t)g->alpha) * (size_t)sh.bx * g->esize;
}

template <typename T>
static cudaError_t go(hr_gpu *g, int steps, cudaStream_t st, bool prepare)
{
    void (*k)(hr_gargs<T>, int, int, int) = hr_k_tb<T>;
    const hr_gpu_shape sh = g->shape;
    const size_t bytes = tb_bytes(g, sh);
    if (prepare) return cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    const int TW = sh.bx - 2 * g->alpha;
    const dim3 blk(sh.bx, sh.by), grd((unsigned)((g->nx + TW - 1) / TW), hr_grid_y(((long)g->ny + sh.h - 1) / sh.h));
    k<<<grd, blk, bytes, st>>>(hr_gpu_args<T>(g), g->alpha, steps, sh.h);
    return HR_LAUNCHED();
}

static cudaError_t launch_tb(hr_gpu *g, int sweeps, cudaStream_t st)
{
    return g->dbl ? go<double>(g, sweeps, st, false) : go<float>(g, sweeps, st, false);
}

static cudaError_t prepare_tb(hr_gpu *g) { return g->dbl ? go<double>(g, 0, NULL, true) : go<float>(g, 0, NULL, true); }

static int pass_tb(const hr_gpu *g, long remaining) { return remaining < g->alpha ? (int)remaining : g->alpha; }

static int check_tb(const hr_gpu *g, hr_gpu_shape sh, char *why, size_t len)
{
    if (hri_gpu_check_block(g, sh, 1, why, len)) return 1;
    if (sh.h < 1 || sh.h > 4096) {
        snprintf(why, len, "h=%d: output rows per tile must be 1..4096", sh.h);
        return 1;
    }
    if (2 * g->alpha >= sh.bx) {
        snprintf(why, len, "alpha=%d: too large for a %d-wide tile (needs 2*alpha < %d)", g->alpha, sh.bx, sh.bx);
        return 1;
    }
    if (tb_bytes(g, sh) > g->smem_optin) {
        snprintf(why, len, "alpha=%d: the tile needs %zu bytes of shared memory, the device allows %zu", g->alpha,
                 tb_bytes(g, sh), g->smem_optin);
        return 1;
    }
    return 0;
}

static const hr_gpu_shape tb_cands[] = {{128, 4, 64},  {128, 8, 64}, {128, 4, 32}, {128, 8, 128}, {256, 4, 32},
                                        {256, 4, 64},  {256, 2, 32}, {128, 16, 64}, {64, 8, 64},  {256, 8, 16},
                                        {512, 2, 16},  {128, 2, 16}, {64, 4, 32},  {96, 8, 64},  {160, 4, 64}};

const hr_gpu_family hri_fam_tb = {1,         0, {{128, 8, 64}, {128, 8, 32}},
                                 tb_cands, (int)(sizeof tb_cands / sizeof tb_cands[0]),
                                 check_tb, prepare_tb, launch_tb, pass_tb, 0};
