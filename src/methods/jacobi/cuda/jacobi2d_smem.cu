/*
 * The shared-memory rungs (Venkatasubramanian & Vuduc section 3.2, fig. 4; version 3 of the
 * red-black report): a block loads an (R+2) x (bx+2) tile with its fringe, then each thread
 * marches down h rows of one column (north and centre kept in registers) and writes the result.
 *
 *   smem         unpadded rows, one row per thread (phases load, compute, store)
 *   smem-padded  padded layout: every tile row's interior load starts 128-byte aligned;
 *                the left and right fringe columns are separate (uncoalesced) loads
 *   unrolled     smem-padded with the row loop unrolled at compile time (h = 1, 2, 4, 8)
 *   *-hilo       the paper's double-precision trick: the high and low 4-byte words of
 *                each double in separate shared arrays (single precision: no change)
 */
#include <stdio.h>

#include "runtime/cuda/gpu_internal.cuh"

/* The tile in shared memory: plain words, or doubles split into hi/lo 4-byte words. */
template <typename T, bool HILO>
struct hr_tile {
    T *v;
    __device__ hr_tile(unsigned char *raw, int count) : v((T *)raw) { (void)count; }
    __device__ __forceinline__ void put(int k, T x) { v[k] = x; }
    __device__ __forceinline__ T get(int k) const { return v[k]; }
};

template <>
struct hr_tile<double, true> {
    unsigned *hi, *lo;
    __device__ hr_tile(unsigned char *raw, int count) : hi((unsigned *)raw), lo((unsigned *)raw + count) {}
    __device__ __forceinline__ void put(int k, double x)
    {
        hi[k] = (unsigned)__double2hiint(x);
        lo[k] = (unsigned)__double2loint(x);
    }
    __device__ __forceinline__ double get(int k) const { return __hiloint2double((int)hi[k], (int)lo[k]); }
};

/* RPT > 0: rows per thread fixed at compile time (unrolled); RPT == 0: h at run time. */
template <typename T, int RPT, bool HILO>
__global__ void hr_k_smem(hr_gargs<T> a, int h)
{
    extern __shared__ __align__(16) unsigned char hr_smem_raw[];
    const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int rpt = RPT ? RPT : h;
    const int R = by * rpt, W = bx + 2;
    hr_tile<T, HILO> sm(hr_smem_raw, (R + 2) * W);
    const int n = a.n;
    const size_t p = a.pitch;
    const T *__restrict__ u = a.u;
    const int j0 = 1 + blockIdx.x * bx, j = j0 + tx;
    const long tiles = ((long)n + R - 1) / R;
    for (long t = blockIdx.y; t < tiles; t += gridDim.y) {
        const int i0 = 1 + (int)t * R;
        /* (A) load: tile rows with consecutive threads on consecutive columns ... */
        for (int r = ty; r < R + 2; r += by) {
            const int gi = i0 - 1 + r;
            sm.put(r * W + tx + 1, (gi <= n + 1 && j <= n + 1) ? u[(size_t)gi * p + j] : (T)0);
        }
        /* ... and the two fringe columns */
        for (int q = ty * bx + tx; q < 2 * (R + 2); q += bx * by) {
            const int right = q >= R + 2, r = right ? q - (R + 2) : q;
            const int gi = i0 - 1 + r, gj = right ? j0 + bx : j0 - 1;
            sm.put(r * W + (right ? bx + 1 : 0), (gi <= n + 1 && gj <= n + 1) ? u[(size_t)gi * p + gj] : (T)0);
        }
        __syncthreads();
        /* (B, C) compute down this thread's rows and store */
        if (j <= n) {
            const int r0 = 1 + ty * rpt, c = tx + 1;
            T north = sm.get((r0 - 1) * W + c), cur = sm.get(r0 * W + c);
            if constexpr (RPT > 0) {
#pragma unroll
                for (int q = 0; q < RPT; q++) {
                    const int r = r0 + q, gi = i0 - 1 + r;
                    if (gi > n) break;
                    const T south = sm.get((r + 1) * W + c);
                    const size_t k = (size_t)gi * p + j;
                    a.un[k] = hr_point(north, south, sm.get(r * W + c - 1), sm.get(r * W + c + 1), a.hf, k, gi,
                                       j, a.sp);
                    north = cur;
                    cur = south;
                }
            } else {
#pragma unroll 1
                for (int q = 0; q < rpt; q++) {
                    const int r = r0 + q, gi = i0 - 1 + r;
                    if (gi > n) break;
                    const T south = sm.get((r + 1) * W + c);
                    const size_t k = (size_t)gi * p + j;
                    a.un[k] = hr_point(north, south, sm.get(r * W + c - 1), sm.get(r * W + c + 1), a.hf, k, gi,
                                       j, a.sp);
                    north = cur;
                    cur = south;
                }
            }
        }
        __syncthreads(); /* the next tile reuses the shared memory */
    }
}

/* Which rows-per-thread instantiation a family uses. */
enum { MODE_ONE, MODE_RUNTIME, MODE_UNROLLED };

static int mode_of(const hr_gpu_family *f) { return f->variant; }

static size_t smem_bytes(const hr_gpu *g, hr_gpu_shape sh)
{
    const int rpt = mode_of(g->fam) == MODE_ONE ? 1 : sh.h;
    return ((size_t)sh.by * rpt + 2) * ((size_t)sh.bx + 2) * g->esize;
}

template <typename T, int RPT, bool HILO>
static cudaError_t go(hr_gpu *g, cudaStream_t st, bool prepare)
{
    void (*k)(hr_gargs<T>, int) = hr_k_smem<T, RPT, HILO>;
    const hr_gpu_shape sh = g->shape;
    const size_t bytes = smem_bytes(g, sh);
    if (prepare) return cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    const int R = sh.by * (RPT ? RPT : sh.h);
    const dim3 blk(sh.bx, sh.by), grd((unsigned)((g->n + sh.bx - 1) / sh.bx), hr_grid_y(((long)g->n + R - 1) / R));
    k<<<grd, blk, bytes, st>>>(hr_gpu_args<T>(g), sh.h);
    return HR_LAUNCHED();
}

template <typename T, bool HILO>
static cudaError_t go_mode(hr_gpu *g, cudaStream_t st, bool prepare)
{
    switch (mode_of(g->fam)) {
    case MODE_ONE: return go<T, 1, HILO>(g, st, prepare);
    case MODE_RUNTIME: return go<T, 0, HILO>(g, st, prepare);
    default:
        switch (g->shape.h) {
        case 1: return go<T, 1, HILO>(g, st, prepare);
        case 2: return go<T, 2, HILO>(g, st, prepare);
        case 4: return go<T, 4, HILO>(g, st, prepare);
        default: return go<T, 8, HILO>(g, st, prepare);
        }
    }
}

static cudaError_t go_any(hr_gpu *g, cudaStream_t st, bool prepare)
{
    if (!g->dbl) return go_mode<float, false>(g, st, prepare);
    return g->fam->hilo ? go_mode<double, true>(g, st, prepare) : go_mode<double, false>(g, st, prepare);
}

static cudaError_t launch_smem(hr_gpu *g, int sweeps, cudaStream_t st)
{
    (void)sweeps;
    return go_any(g, st, false);
}

static cudaError_t prepare_smem(hr_gpu *g) { return go_any(g, NULL, true); }

static int check_smem(const hr_gpu *g, hr_gpu_shape sh, char *why, size_t len)
{
    const int mode = mode_of(g->fam);
    if (mode == MODE_ONE && sh.h != 1) {
        snprintf(why, len, "one row per thread: h must be 1, got %d", sh.h);
        return 1;
    }
    if (mode == MODE_UNROLLED && sh.h != 1 && sh.h != 2 && sh.h != 4 && sh.h != 8) {
        snprintf(why, len, "unrolled rows per thread h must be 1, 2, 4 or 8, got %d", sh.h);
        return 1;
    }
    if (hri_gpu_check_block(g, sh, sh.h, why, len)) return 1;
    if (smem_bytes(g, sh) > g->smem_optin) {
        snprintf(why, len, "tile needs %zu bytes of shared memory, the device allows %zu", smem_bytes(g, sh),
                 g->smem_optin);
        return 1;
    }
    return 0;
}

static const hr_gpu_shape one_cands[] = {{32, 4, 1}, {32, 8, 1}, {32, 16, 1}, {64, 4, 1}, {64, 8, 1},
                                         {128, 2, 1}, {128, 4, 1}, {256, 2, 1}, {16, 16, 1}, {8, 8, 1}};
static const hr_gpu_shape rows_cands[] = {{32, 8, 2},  {32, 8, 4},  {64, 4, 4},  {64, 8, 8},  {64, 4, 8},
                                          {128, 2, 8}, {128, 4, 4}, {128, 8, 4}, {128, 4, 8}, {256, 2, 4},
                                          {256, 1, 8}, {256, 4, 2}, {512, 1, 8}, {64, 8, 2}};
#define NONE_ ((int)(sizeof one_cands / sizeof one_cands[0]))
#define NROWS_ ((int)(sizeof rows_cands / sizeof rows_cands[0]))

#define SMEM_FAMILY(var, mode, padded, hilo, def, cands, ncands)                                          \
    const hr_gpu_family var = {padded,       hilo, {def, def}, cands, ncands, check_smem, prepare_smem, launch_smem, \
                               hri_gpu_pass_one, mode}

#define DEF_ONE {32, 8, 1}
#define DEF_ROWS {128, 4, 4}
SMEM_FAMILY(hri_fam_smem, MODE_ONE, 0, 0, DEF_ONE, one_cands, NONE_);
SMEM_FAMILY(hri_fam_smem_hilo, MODE_ONE, 0, 1, DEF_ONE, one_cands, NONE_);
SMEM_FAMILY(hri_fam_smem_padded, MODE_RUNTIME, 1, 0, DEF_ROWS, rows_cands, NROWS_);
SMEM_FAMILY(hri_fam_smem_padded_hilo, MODE_RUNTIME, 1, 1, DEF_ROWS, rows_cands, NROWS_);
SMEM_FAMILY(hri_fam_unrolled, MODE_UNROLLED, 1, 0, DEF_ROWS, rows_cands, NROWS_);
SMEM_FAMILY(hri_fam_unrolled_hilo, MODE_UNROLLED, 1, 1, DEF_ROWS, rows_cands, NROWS_);
