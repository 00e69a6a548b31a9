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
 * Inside the tile each thread owns V consecutive columns (one 16-byte word: 4 floats or
 * 2 doubles) and marches down a segment of rows with north, centre and south words in
 * registers: per row one vector load (south) and one vector store, west and east of the
 * word's ends from the neighbouring lanes by warp shuffle (lanes 0 and 31 load one
 * element), instead of three shared loads and a store per point. A sweep computes whole
 * rows of its valid row range; points of those rows outside the valid columns get
 * values that nothing valid reads (the valid region of the next sweep is one narrower),
 * and both buffers start as the loaded tile, so no uninitialised value is ever read.
 *
 * Shape: bx threads per row (a multiple of 32: whole warps; the buffer is bx*V wide and
 * the output tile bx*V - 2A), by thread rows (each marches a segment of rows), h output
 * rows per tile.
 */
#include <stdio.h>

#include "cuda/gpu_internal.cuh"

template <typename T, int V>
__global__ void hr_k_tb(hr_gargs<T> a, int A, int steps, int th)
{
    typedef hr_vec<T, V> VT;
    extern __shared__ __align__(16) unsigned char hr_smem_raw[];
    const unsigned FULL = 0xffffffffu;
    const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int lane = tx & 31; /* bx is a multiple of 32: a warp is 32 threads of one row */
    const int W = bx * V, TW = W - 2 * A, H = th + 2 * A;
    T *s0 = (T *)hr_smem_raw, *s1 = s0 + (size_t)H * W;
    const int n = a.n;
    const size_t p = a.pitch;
    const int gc0 = 1 + blockIdx.x * TW - A; /* global column of buffer column 0 */
    const int c0 = tx * V;                   /* this thread's first buffer column */
    const int seg = (H + by - 1) / by;
    const long tiles = ((long)n + th - 1) / th;
    for (long t = blockIdx.y; t < tiles; t += gridDim.y) {
        const int gi0 = 1 + (int)t * th - A; /* global row of buffer row 0 */
        for (int r = ty; r < H; r += by) {
            const int gi = gi0 + r;
            const bool row_mem = gi >= 0 && gi <= n + 1;
            for (int c = tx; c < W; c += bx) {
                const int gj = gc0 + c;
                const T v = (row_mem && gj >= 0 && gj <= n + 1) ? a.u[(size_t)gi * p + gj] : (T)0;
                s0[r * W + c] = v;
                s1[r * W + c] = v;
            }
        }
        __syncthreads();
        T *src = s0, *dst = s1;
        const int e = A - steps; /* a short pass starts that much further in */
        for (int st = 1; st <= steps; st++) {
            const int lo = e + st, hi_r = H - e - st;
            const int rb = max(lo, ty * seg), re = min(hi_r, (ty + 1) * seg);
            if (rb < re) { /* the same for every lane of a warp: the shuffles see all 32 */
                VT nn = *(const VT *)(src + (size_t)(rb - 1) * W + c0);
                VT cc = *(const VT *)(src + (size_t)rb * W + c0);
                for (int r = rb; r < re; r++) {
                    const VT ss = *(const VT *)(src + (size_t)(r + 1) * W + c0);
                    T w0 = __shfl_up_sync(FULL, cc.v[V - 1], 1);
                    T e1 = __shfl_down_sync(FULL, cc.v[0], 1);
                    if (lane == 0) w0 = c0 > 0 ? src[(size_t)r * W + c0 - 1] : (T)0;
                    if (lane == 31) e1 = c0 + V < W ? src[(size_t)r * W + c0 + V] : (T)0;
                    const int gi = gi0 + r;
                    const bool row_in = gi >= 1 && gi <= n;
                    VT res;
#pragma unroll
                    for (int q = 0; q < V; q++) {
                        const int gj = gc0 + c0 + q;
                        const T w = q == 0 ? w0 : cc.v[q - 1];
                        const T ea = q == V - 1 ? e1 : cc.v[q + 1];
                        res.v[q] = (row_in && gj >= 1 && gj <= n)
                                       ? hr_point(nn.v[q], ss.v[q], w, ea, a.hf, (size_t)gi * p + gj, gi, gj, a.spike)
                                       : cc.v[q];
                    }
                    *(VT *)(dst + (size_t)r * W + c0) = res;
                    nn = cc;
                    cc = ss;
                }
            }
            __syncthreads();
            T *x = src;
            src = dst;
            dst = x;
        }
        for (int r = A + ty; r < A + th; r += by) {
            const int gi = gi0 + r;
            if (gi > n) break;
            for (int c = A + tx; c < A + TW; c += bx) {
                const int gj = gc0 + c;
                if (gj >= 1 && gj <= n) a.un[(size_t)gi * p + gj] = src[r * W + c];
            }
        }
        __syncthreads(); /* the next tile reuses the buffers */
    }
}

/* Columns per thread: one 16-byte word. */
static int tb_vec(const hr_gpu *g) { return 16 / (int)g->esize; }

static size_t tb_bytes(const hr_gpu *g, hr_gpu_shape sh)
{
    return 2 * ((size_t)sh.h + 2 * (size_t)g->alpha) * (size_t)sh.bx * tb_vec(g) * g->esize;
}

template <typename T>
static cudaError_t go(hr_gpu *g, int steps, cudaStream_t st, bool prepare)
{
    void (*k)(hr_gargs<T>, int, int, int) = hr_k_tb<T, 16 / sizeof(T)>;
    const hr_gpu_shape sh = g->shape;
    const size_t bytes = tb_bytes(g, sh);
    if (prepare) return cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    const int TW = sh.bx * tb_vec(g) - 2 * g->alpha;
    const dim3 blk(sh.bx, sh.by), grd((unsigned)((g->n + TW - 1) / TW), hr_grid_y(((long)g->n + sh.h - 1) / sh.h));
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
    if (hr_gpu_check_block(g, sh, 1, why, len)) return 1;
    if (sh.bx % 32) {
        snprintf(why, len, "bx=%d: must be a multiple of 32 (whole warps per row)", sh.bx);
        return 1;
    }
    if (sh.h < 1 || sh.h > 4096) {
        snprintf(why, len, "h=%d: output rows per tile must be 1..4096", sh.h);
        return 1;
    }
    const int W = sh.bx * tb_vec(g);
    if (2 * g->alpha >= W) {
        snprintf(why, len, "alpha=%d: too large for a %d-wide tile (needs 2*alpha < %d)", g->alpha, W, W);
        return 1;
    }
    if (tb_bytes(g, sh) > g->smem_optin) {
        snprintf(why, len, "alpha=%d: the tile needs %zu bytes of shared memory, the device allows %zu", g->alpha,
                 tb_bytes(g, sh), g->smem_optin);
        return 1;
    }
    return 0;
}

/* bx threads cover 4*bx (single) or 2*bx (double) columns */
static const hr_gpu_shape tb_cands[] = {{32, 4, 64},  {32, 8, 64}, {32, 4, 32}, {32, 8, 128}, {64, 4, 32},
                                        {64, 4, 64},  {64, 2, 32}, {32, 16, 64}, {64, 8, 16}, {128, 2, 16},
                                        {32, 2, 16},  {64, 8, 64}, {128, 4, 32}, {32, 8, 32}, {64, 2, 64},
                                        {128, 4, 16}, {64, 16, 32}};

const hr_gpu_family hr_fam_tb = {"tb",     1,         0, {{32, 8, 64}, {64, 8, 32}},
                                 tb_cands, (int)(sizeof tb_cands / sizeof tb_cands[0]),
                                 check_tb, prepare_tb, launch_tb, pass_tb};
