/*
 * Multigrid on the GPU: red-black smoothing fused across half sweeps on big 2-D levels
 * (OPK_RBF). Each half sweep of the one-by-one smoother reads and writes the whole level;
 * here a block owns MGG_RBF_OWN columns of up to MGG_RBF_ROWS rows and marches down them with a
 * ring of MGG_RBF_RING rows (its columns and MGG_RBF_HALO more on each side) in shared
 * memory. Each row is read from the level once (the prolongation added on the way in when
 * the smoothing follows one), and the half sweeps (colour by colour, sweep by sweep) follow
 * each other one row apart, in place, a barrier between them: half sweep s updates row
 * R - 1 - s when row R has come in. Its neighbours are then in the state the previous half
 * sweep left them (the row above has had half sweep s, the row below not yet), so every value
 * is computed by the same function of the same inputs as in the sweeps one by one: bitwise
 * their result. The halo columns are computed by both blocks that hold them; each half
 * sweep narrows the columns that are right by one on each side, so after four the block's
 * own columns are.
 *
 * One read of u and h^2 f and one write per point for up to two sweeps and a prolongation,
 * against a read and a write per sweep and one more of each for the prolongation. The march
 * takes MGG_RBF_K rows a step and loads the next step's rows into registers before the half
 * sweeps of this one, so the loads' latency is hidden behind them. Each thread takes
 * MGG_RBF_PER columns (MGG_RBF_BLOCKDIM threads a block: one in the CPU emulation, which then
 * runs the whole block on that thread).
 */
#ifndef HR_MG_GPU_FUSED_CUH
#define HR_MG_GPU_FUSED_CUH

#include "methods/mg/cuda/mg_gpu_ops.cuh"

#ifndef MGG_RBF_THREADS /* the CPU emulation's test takes narrow tiles, to cross many of them */
#define MGG_RBF_THREADS 128
#define MGG_RBF_COLS    256 /* columns held: MGG_RBF_COLS / MGG_RBF_THREADS / 2 pairs a thread */
#define MGG_RBF_ROWS    64  /* at most; fewer where the level would give fewer than MGG_RBF_BLOCKS blocks */
#endif
#ifndef MGG_RBF_BLOCKDIM
#define MGG_RBF_BLOCKDIM MGG_RBF_THREADS
#endif
#define MGG_RBF_BLOCKS 1024
/* default: fused on fp64 levels from 1023^2 up, fp32 ones from about 5500^2 up; below, the
 * march's barriers and index work cost more than the passes it saves, and an fp32 point
 * brings half the bytes for the same instructions (docs/results/multigrid.md) */
#define MGG_FUSE_POINTS_FP64 1000000L
#define MGG_FUSE_POINTS_FP32 30000000L
#define MGG_RBF_PER    (MGG_RBF_COLS / MGG_RBF_BLOCKDIM)
#define MGG_RBF_HALO   4 /* four half sweeps */
#define MGG_RBF_OWN    (MGG_RBF_COLS - 2 * MGG_RBF_HALO)
#ifndef MGG_RBF_K
#define MGG_RBF_K    2 /* rows a step */
#define MGG_RBF_RING 8 /* rows R - 5 .. R + K - 1 are held; a power of two */
#endif

/* The values one step brings in: K rows of the thread's columns, as loaded. */
template <typename T, bool PRO> struct mgg_rbf_in {
    T u[MGG_RBF_K][MGG_RBF_PER], f[MGG_RBF_K][MGG_RBF_PER];
    T c[PRO ? MGG_RBF_K : 1][PRO ? MGG_RBF_PER : 1][8]; /* the prolongation's coarse values */
};

/* o: OPK_RBF on 2-D level L (C: level + 1, read by the prolongation; O: the outer level).
 * Z: u[a] is zero (not read); NS: sweeps (1 or 2); PRO: the prolongation first; OUT: the
 * result to the outer level. Grid: (columns / MGG_RBF_OWN, level rows / rows). */
template <typename T, int NS, bool Z, bool PRO, bool OUT>
__global__ void __launch_bounds__(MGG_RBF_THREADS)
    mgg_rbf2_kernel(mgg_op o, mgg_lev L, mgg_lev C, mgg_lev O, int rows)
{
    __shared__ T su[MGG_RBF_RING][MGG_RBF_COLS];
    __shared__ T sf[MGG_RBF_RING][MGG_RBF_COLS];
    const int halves = 2 * NS, mask = MGG_RBF_RING - 1, tid = (int)threadIdx.x;
    const int j0 = 1 + (int)blockIdx.x * MGG_RBF_OWN - MGG_RBF_HALO; /* the level's column of local 0 */
    const int i0 = 1 + (int)blockIdx.y * rows, i1 = min(i0 + rows - 1, L.ny);
    const int lo = max(i0 - halves, 0); /* the first row read */
    const long long pitch = L.pitch;
    const T *u = (const T *)MGG_BUF(L, o.a), *hf = (const T *)L.hf;
    const T *cu = PRO ? (const T *)MGG_BUF(C, (o.e & MGG_RBF_CBUF) ? 1 : 0) : (const T *)0;
    const bool add = (o.e & MGG_RBF_ADD) != 0, read_u = !(Z || (PRO && !add));
    const int c2 = (o.e & MGG_RBF_C2) ? 1 : 0;
    /* the thread's columns: on the level (ring included), interior; and its pairs' points that
     * a half sweep updates (interior, not the tile's outermost columns), first or second */
    bool col_there[MGG_RBF_PER], col_in[MGG_RBF_PER], upd[2][MGG_RBF_PER / 2];
#pragma unroll
    for (int q = 0; q < MGG_RBF_PER; q++) {
        const int j = j0 + tid + q * MGG_RBF_BLOCKDIM;
        col_there[q] = j >= 0 && j <= L.nx + 1;
        col_in[q] = j >= 1 && j <= L.nx;
    }
#pragma unroll
    for (int q = 0; q < MGG_RBF_PER / 2; q++)
#pragma unroll
        for (int off = 0; off < 2; off++) {
            const int jl = 2 * (tid + q * MGG_RBF_BLOCKDIM) + off, j = j0 + jl;
            upd[off][q] = jl >= 1 && jl <= MGG_RBF_COLS - 2 && j >= 1 && j <= L.nx;
        }
    mgg_rbf_in<T, PRO> in;
    /* rows R .. R + K - 1 into registers (each value one select: GCC 12 at -O3 with AVX2 gave
     * wrong values in the CPU emulation for a zero followed by a conditional load) */
#define MGG_RBF_FETCH(R)                                                                                     \
    do {                                                                                                     \
        _Pragma("unroll") for (int kk = 0; kk < MGG_RBF_K; kk++)                                            \
        {                                                                                                    \
            const int i = (R) + kk;                                                                          \
            const bool row_there = i <= L.ny + 1, row_in = i >= 1 && i <= L.ny;                              \
            const long long base = (long long)i * pitch + j0 + tid;                                          \
            _Pragma("unroll") for (int q = 0; q < MGG_RBF_PER; q++)                                         \
            {                                                                                                \
                const bool there = row_there && col_there[q], inner = row_in && col_in[q];                   \
                const long long x = base + q * MGG_RBF_BLOCKDIM;                                             \
                in.u[kk][q] = there && (!inner || read_u) ? u[x] : (T)0;                                     \
                in.f[kk][q] = inner && hf ? hf[x] : (T)0;                                                    \
                if (PRO && inner)                                                                            \
                    mgg_prolong_load<T, 2>(C, cu, i, j0 + tid + q * MGG_RBF_BLOCKDIM, 0,                     \
                                           in.c[PRO ? kk : 0][PRO ? q : 0]);                                 \
            }                                                                                                \
        }                                                                                                    \
    } while (0)
    MGG_RBF_FETCH(lo);
    for (int R = lo; R - halves <= i1; R += MGG_RBF_K) {
        /* this step's rows from the registers into the ring (the prolongation added now) */
#pragma unroll
        for (int kk = 0; kk < MGG_RBF_K; kk++) {
            const int i = R + kk;
            if (i > L.ny + 1) continue;
            const bool row_in = i >= 1 && i <= L.ny;
            T *ru = su[i & mask], *rf = sf[i & mask];
#pragma unroll
            for (int q = 0; q < MGG_RBF_PER; q++) {
                const int t = tid + q * MGG_RBF_BLOCKDIM;
                T v = in.u[kk][q];
                if (PRO && row_in && col_in[q]) {
                    const T p = mgg_prolong_v<T, 2>(in.c[PRO ? kk : 0][PRO ? q : 0], i, j0 + t, 0);
                    v = add ? v + p : p;
                }
                ru[t] = v;
                rf[t] = in.f[kk][q];
            }
        }
        if (R + MGG_RBF_K - halves <= i1) MGG_RBF_FETCH(R + MGG_RBF_K); /* the next step's, in flight meanwhile */
        __syncthreads();
#pragma unroll
        for (int h = 0; h < halves; h++) { /* half sweep h on rows R - 1 - h .. R + K - 2 - h */
            const int colour = h == 0 ? o.b : h == 1 ? 1 - o.b : h == 2 ? c2 : 1 - c2;
            const int first = lo == 0 ? 1 : lo + 1 + h;
#pragma unroll
            for (int kk = 0; kk < MGG_RBF_K; kk++) {
                const int r = R - 1 - h + kk;
                if (r < first || r > L.ny) continue;
                /* the pair's point of this colour: the first column (j0 + 2 p, j0 odd) or the second */
                const int off = HR_RB_COLOUR(r, j0, 0) == colour ? 0 : 1;
                T *row = su[r & mask];
                const T *up = su[(r - 1) & mask], *dn = su[(r + 1) & mask], *fr = sf[r & mask];
#pragma unroll
                for (int q = 0; q < MGG_RBF_PER / 2; q++) {
                    /* (columns outside the half sweep's cone get values too, never read by the
                     * block's own columns) */
                    const int jl = 2 * (tid + q * MGG_RBF_BLOCKDIM) + off;
                    if (off ? upd[1][q] : upd[0][q])
                        row[jl] = mgg_jac_f<T, 2>(L, up[jl], dn[jl], row[jl - 1], row[jl + 1], (T)0, (T)0, fr[jl], r,
                                                  j0 + jl, 0);
                }
            }
            __syncthreads();
        }
        /* final rows: the block's own columns to the level (or the outer one) */
#pragma unroll
        for (int kk = 0; kk < MGG_RBF_K; kk++) {
            const int r = R - halves + kk;
            if (r < i0 || r > i1) continue;
            const T *row = su[r & mask];
            if (OUT) {
                double *dst = (o.c ? (double *)O.cp : (double *)O.u[0]) + ((long long)r * O.pitch + j0);
                for (int jl = MGG_RBF_HALO + tid; jl < MGG_RBF_HALO + MGG_RBF_OWN && j0 + jl <= L.nx;
                     jl += MGG_RBF_BLOCKDIM)
                    dst[jl] = o.y != 0.0 ? dst[jl] + (double)row[jl] * o.y : (double)row[jl];
            } else {
                T *dst = (T *)MGG_BUF(L, o.a ^ 1) + ((long long)r * pitch + j0);
                for (int jl = MGG_RBF_HALO + tid; jl < MGG_RBF_HALO + MGG_RBF_OWN && j0 + jl <= L.nx;
                     jl += MGG_RBF_BLOCKDIM)
                    dst[jl] = row[jl];
            }
        }
    }
#undef MGG_RBF_FETCH
}

#endif
