/*
 * Multigrid on the GPU: the asynchronous smoother (--smoother async3).
 *
 * In the spirit of async3 (docs/async.md): a block owns a tile of a level, fetches it with
 * its one-point ring into shared memory, and relaxes it `local` times in place; after each
 * local sweep but the last it writes the tile's outer layer (the fringe its neighbours
 * read) back to the level and fetches its ring again, whatever the neighbouring blocks have
 * written by then (no synchronisation between blocks). In-place weighted Jacobi done that way
 * is a poor smoother; the local sweep is red-black Gauss-Seidel instead (both colours, a
 * barrier between them inside the tile), which smooths like the synchronous red-black sweep
 * where the ring values are current. The result depends on the blocks' timing: not
 * deterministic, tested by convergence factors only.
 *
 * Every loop is strided over the block's threads with the tile shape fixed at compile time,
 * so the kernel is also correct with one thread per block (the CPU emulation runs it so).
 */
#ifndef HR_MG_GPU_ASYNC_CUH
#define HR_MG_GPU_ASYNC_CUH

#include "methods/mg/cuda/mg_gpu_ops.cuh"

#define MGG_ASYNC_THREADS 256

template <int D> struct mgg_async_tile {
    static const int TX = 32, TY = D == 3 ? 8 : 16, TZ = D == 3 ? 4 : 1;
    static const int SX = TX + 2, SY = TY + 2, SZ = D == 3 ? TZ + 2 : 1;
};

/* Fetches the tile's ring (ring_only) or the whole tile with its ring from u into s. */
template <typename T, int D>
__device__ __forceinline__ void mgg_async_fetch(const mgg_lev &L, const volatile T *u, T *s, int i0, int j0,
                                                int k0, bool ring_only)
{
    typedef mgg_async_tile<D> S;
    for (int t = (int)threadIdx.x; t < S::SX * S::SY * S::SZ; t += (int)blockDim.x) {
        const int sx = t % S::SX, sy = (t / S::SX) % S::SY, sz = t / (S::SX * S::SY);
        const bool ring = sx == 0 || sx == S::SX - 1 || sy == 0 || sy == S::SY - 1 ||
                          (D == 3 && (sz == 0 || sz == S::SZ - 1));
        if (ring_only && !ring) continue;
        const int i = i0 + sy, j = j0 + sx, k = D == 3 ? k0 + sz : 0;
        if (i > L.ny + 1 || j > L.nx + 1 || (D == 3 && k > L.nz + 1)) continue;
        s[t] = u[MGG_AT(L, i, j, k)];
    }
}

/* Writes the tile's interior points (fringe_only: its outer layer) from s to u. */
template <typename T, int D>
__device__ __forceinline__ void mgg_async_store(const mgg_lev &L, volatile T *u, const T *s, int i0, int j0,
                                                int k0, bool fringe_only)
{
    typedef mgg_async_tile<D> S;
    for (int t = (int)threadIdx.x; t < S::TX * S::TY * S::TZ; t += (int)blockDim.x) {
        const int tx = t % S::TX, ty = (t / S::TX) % S::TY, tz = t / (S::TX * S::TY);
        const bool fringe = tx == 0 || tx == S::TX - 1 || ty == 0 || ty == S::TY - 1 ||
                            (D == 3 && (tz == 0 || tz == S::TZ - 1));
        if (fringe_only && !fringe) continue;
        const int i = i0 + ty + 1, j = j0 + tx + 1, k = D == 3 ? k0 + tz + 1 : 0;
        if (i > L.ny || j > L.nx || (D == 3 && k > L.nz)) continue;
        u[MGG_AT(L, i, j, k)] = s[((tz + (D == 3)) * S::SY + ty + 1) * S::SX + tx + 1];
    }
}

/* `local` tile-local red-black sweeps of u[a], in place (colour `c1` first). */
template <typename T, int D>
__global__ void __launch_bounds__(MGG_ASYNC_THREADS) mgg_async_kernel(mgg_lev L, int a, int local, int c1)
{
    typedef mgg_async_tile<D> S;
    __shared__ T s[S::SX * S::SY * S::SZ];
    /* tile origin in level coordinates, ring included (point (i0 + 1, j0 + 1, k0 + 1) is
     * the tile's first interior point) */
    const int j0 = (int)blockIdx.x * S::TX, i0 = (int)blockIdx.y * S::TY,
              k0 = D == 3 ? (int)blockIdx.z * S::TZ : 0;
    volatile T *u = (volatile T *)MGG_BUF(L, a);
    mgg_async_fetch<T, D>(L, u, s, i0, j0, k0, false);
    __syncthreads();
    for (int sweep = 0; sweep < local; sweep++) {
        for (int half = 0; half < 2; half++) {
            const int colour = half ? 1 - c1 : c1;
            /* only the colour's points: half of each tile row (TX is even), no divergence */
            for (int t = (int)threadIdx.x; t < S::TX / 2 * S::TY * S::TZ; t += (int)blockDim.x) {
                const int hx = t % (S::TX / 2), ty = (t / (S::TX / 2)) % S::TY, tz = t / (S::TX / 2 * S::TY);
                const int i = i0 + ty + 1, k = D == 3 ? k0 + tz + 1 : 0;
                const int tx = 2 * hx + ((colour - i - (j0 + 1) - k) & 1), j = j0 + tx + 1;
                if (i > L.ny || j > L.nx || (D == 3 && k > L.nz)) continue;
                const int c = ((tz + (D == 3)) * S::SY + ty + 1) * S::SX + tx + 1;
                const int q = S::SX * S::SY;
                s[c] = mgg_jac_v<T, D>(L, s[c - S::SX], s[c + S::SX], s[c - 1], s[c + 1],
                                       D == 3 ? s[c - q] : (T)0, D == 3 ? s[c + q] : (T)0, MGG_AT(L, i, j, k),
                                       i, j, k);
            }
            __syncthreads();
        }
        if (sweep + 1 < local) { /* the fringe out, the neighbours' latest fringes in */
            mgg_async_store<T, D>(L, u, s, i0, j0, k0, true);
            __threadfence();
            mgg_async_fetch<T, D>(L, u, s, i0, j0, k0, true);
            __syncthreads();
        }
    }
    mgg_async_store<T, D>(L, u, s, i0, j0, k0, false);
}

#endif
