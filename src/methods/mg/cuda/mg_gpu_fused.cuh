/*
 * Multigrid on the GPU: red-black smoothing fused across half sweeps on big 2-D levels
 * (OPK_RBF): one or two sweeps, a prolongation added before them, in one pass. Each half sweep
 * of the one-by-one smoother reads and writes the whole level; here each row is read from the
 * level once (the prolongation added on the way in) and written once, up to four half sweeps
 * later: one read of u and h^2 f and one write per point for up to two sweeps and a
 * prolongation, against a read and a write per sweep and one more of each for the
 * prolongation.
 *
 * A warp takes 64 neighbouring columns of the level, two a lane (ja = j0 + 2 lane and ja + 1),
 * and marches down a segment of rows in registers. When row R comes in, half sweep h updates
 * row R - 1 - h. Its neighbours are then in the state the previous half sweep left them (the
 * row above has had half sweep h, which changed none of its points next to this row's colour,
 * the row below half sweep h - 1, this step), so every value is computed by the same function
 * of the same inputs as in the sweeps one by one: bitwise their result. In a row each lane
 * updates one of its two columns (the same one on every lane: ja's parity is j0's), and the x
 * neighbour that is not its own comes from the next lane (a shuffle); the neighbours up and down
 * are the lane's own registers. No shared memory and no barrier: a half sweep's update costs a
 * shuffle and the point function. The warp's outermost columns lack a neighbour, so each half
 * sweep narrows the columns that are right by one on each side: with H half sweeps the warp owns
 * 64 - 2 H columns (60 or 56), and neighbouring warps overlap by 2 H. A segment starts H rows
 * early. Each step loads the row of two steps later (with its coarse values for the
 * prolongation and the outer values the result is added into), so the loads' latency is
 * hidden behind the step's updates; deeper (four steps) measured slower, its registers costing
 * more warps than the loads gained.
 *
 * An earlier form of this pass held a ring of rows in shared memory, a barrier after each half
 * sweep, and was bound by that index and barrier work: on the 8191^2 fp32 level of an H200 the
 * pre-smoothing pass took 376 us there and takes 286 us here, the post-smoothing one (with the
 * prolongation and the result to the fp64 level) 893 and 745 us (docs/results/multigrid.md).
 */
#ifndef HR_MG_GPU_FUSED_CUH
#define HR_MG_GPU_FUSED_CUH

#include "methods/mg/cuda/mg_gpu_ops.cuh"

/* default: fused on fp64 levels from 1023^2 up, fp32 ones from 2047^2 up; below, a warp's
 * chain of dependent steps and the segments' early rows cost more than the passes it saves
 * (docs/results/multigrid.md) */
#define MGG_FUSE_POINTS_FP64 1000000L
#define MGG_FUSE_POINTS_FP32 4000000L

#ifndef MGG_RBW_THREADS
#define MGG_RBW_THREADS 256
#endif

/* A row of a lane's two columns as loaded: u (zero where not read), h^2 f, the coarse values
 * of the prolongation (mgg_prolong_load's eight; the 2-D ones use four) and, where the result
 * is added into the outer level, the outer values of the row that becomes final when this one
 * comes in (H rows up), so that the add does not wait for its load. */
template <typename T, bool PRO, bool OUT> struct mgg_rbw_row {
    T u[2], f[2];
    T c[PRO ? 2 : 1][8];
    double o[OUT ? 2 : 1];
};

/* o: OPK_RBF on 2-D level L (C: level + 1, read by the prolongation; O: the outer level).
 * Z: u[a] is zero (not read); NS: sweeps (1 or 2); PRO: the prolongation first; OUT: the
 * result to the outer level. Grid: (warps across / warps a block, level rows / rows). fp32:
 * at most 80 registers, three blocks an SM (the prolongation's and the outer values' loads in
 * flight took 86, two blocks; 4.2% slower at 8191^2 mixed than before those loads, 4.2%
 * faster with three: docs/results/multigrid.md). fp64 is left to the compiler (0: no
 * minimum): a minimum of one block gave the two-sweep kernel after a prolongation 130
 * registers instead of 128, one block an SM instead of two, 20% slower at 8191^2. */
template <typename T, int NS, bool Z, bool PRO, bool OUT>
__global__ void __launch_bounds__(MGG_RBW_THREADS, sizeof(T) == 4 ? 3 : 0)
    mgg_rbw2_kernel(mgg_op o, mgg_lev L, mgg_lev C, mgg_lev O, int rows)
{
    constexpr int H = 2 * NS, OWN = 64 - 2 * H;
    const int lane = (int)(threadIdx.x & 31), wx = (int)(blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5));
    if (wx * OWN >= L.nx) return; /* the whole warp */
    const int j0 = 1 + wx * OWN - H, ja = j0 + 2 * lane; /* the level's columns of lane 0 and of this lane */
    const int i0 = 1 + (int)blockIdx.y * rows, i1 = min(i0 + rows - 1, L.ny);
    const int lo = max(i0 - H, 0); /* the first row read */
    const long long pitch = L.pitch;
    const T *u = (const T *)MGG_BUF(L, o.a), *hf = (const T *)L.hf;
    const T *cu = PRO ? (const T *)MGG_BUF(C, (o.e & MGG_RBF_CBUF) ? 1 : 0) : (const T *)0;
    const bool add = (o.e & MGG_RBF_ADD) != 0, read_u = !(Z || (PRO && !add));
    const int c2 = (o.e & MGG_RBF_C2) ? 1 : 0;
    double *odst = OUT ? (o.c ? (double *)O.cp : (double *)O.u[0]) : (double *)0;
    const bool oadd = OUT && o.y != 0.0;
    /* the columns: on the level (ring included), interior, updated by a half sweep (interior,
     * not the warp's outermost) and written (the warp's own) */
    bool there[2], in[2], upd[2], own[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int j = ja + h, jl = 2 * lane + h;
        there[h] = j >= 0 && j <= L.nx + 1;
        in[h] = j >= 1 && j <= L.nx;
        upd[h] = in[h] && jl >= 1 && jl <= 62;
        own[h] = in[h] && jl >= H && jl < H + OWN;
    }
    /* rows R .. R - H - 1 of the two columns (v[d]: row R - d, as far as the half sweeps have
     * taken it) and h^2 f of rows R .. R - H; rows outside [lo, ny + 1] hold 0, never an
     * update's neighbour */
    T v[H + 2][2], f[H + 1][2];
#pragma unroll
    for (int d = 0; d < H + 2; d++)
        v[d][0] = v[d][1] = (T)0;
#pragma unroll
    for (int d = 0; d < H + 1; d++)
        f[d][0] = f[d][1] = (T)0;
    mgg_rbw_row<T, PRO, OUT> nx0, nx1;
#define MGG_RBW_LOAD(w, r)                                                                                   \
    do {                                                                                                     \
        const int i_ = (r);                                                                                  \
        const bool row_there = i_ <= L.ny + 1, row_in = i_ >= 1 && i_ <= L.ny;                               \
        _Pragma("unroll") for (int h = 0; h < 2; h++)                                                        \
        {                                                                                                    \
            const bool th_ = row_there && there[h], in_ = row_in && in[h];                                   \
            const long long x_ = (long long)i_ * pitch + ja + h;                                             \
            (w).u[h] = th_ && (!in_ || read_u) ? u[x_] : (T)0;                                               \
            (w).f[h] = in_ && hf ? hf[x_] : (T)0;                                                            \
            if (PRO && in_) mgg_prolong_load<T, 2>(C, cu, i_, ja + h, 0, (w).c[PRO ? h : 0]);                \
            if (OUT)                                                                                         \
                (w).o[OUT ? h : 0] = oadd && i_ - H >= i0 && i_ - H <= i1 && own[h]                          \
                                         ? odst[(long long)(i_ - H) * O.pitch + ja + h]                      \
                                         : 0.0;                                                              \
        }                                                                                                    \
    } while (0)
    MGG_RBW_LOAD(nx0, lo);
    MGG_RBW_LOAD(nx1, lo + 1);
#pragma unroll 1
    for (int R = lo; R - H <= i1; R++) {
        /* row R into the window (the prolongation added now) */
#pragma unroll
        for (int d = H + 1; d > 0; d--)
            v[d][0] = v[d - 1][0], v[d][1] = v[d - 1][1];
#pragma unroll
        for (int d = H; d > 0; d--)
            f[d][0] = f[d - 1][0], f[d][1] = f[d - 1][1];
        double ow[2] = {0.0, 0.0}; /* the outer values of row R - H (OUT) */
#pragma unroll
        for (int h = 0; h < 2; h++) {
            if (OUT) ow[h] = nx0.o[OUT ? h : 0];
            T x = nx0.u[h];
            if (PRO && R >= 1 && R <= L.ny && in[h]) {
                const T p = mgg_prolong_v<T, 2>(nx0.c[PRO ? h : 0], R, ja + h, 0);
                x = add ? x + p : p;
            }
            v[0][h] = x;
            f[0][h] = nx0.f[h];
        }
        nx0 = nx1;
        if (R + 2 - H <= i1) MGG_RBW_LOAD(nx1, R + 2); /* two steps ahead, in flight meanwhile */
#pragma unroll
        for (int h = 0; h < H; h++) { /* half sweep h on row R - 1 - h */
            const int colour = h == 0 ? o.b : h == 1 ? 1 - o.b : h == 2 ? c2 : 1 - c2;
            const int r = R - 1 - h, first = lo == 0 ? 1 : lo + 1 + h;
            if (r < first || r > L.ny) continue; /* the same on every lane */
            if (HR_RB_COLOUR(r, ja, 0) == colour) { /* the lane's first column */
                const T w = __shfl_up_sync(0xffffffffu, v[1 + h][1], 1);
                if (upd[0])
                    v[1 + h][0] = mgg_jac_f<T, 2>(L, v[2 + h][0], v[h][0], w, v[1 + h][1], (T)0, (T)0, f[1 + h][0],
                                                  r, ja, 0);
            } else { /* its second */
                const T e = __shfl_down_sync(0xffffffffu, v[1 + h][0], 1);
                if (upd[1])
                    v[1 + h][1] = mgg_jac_f<T, 2>(L, v[2 + h][1], v[h][1], v[1 + h][0], e, (T)0, (T)0, f[1 + h][1],
                                                  r, ja + 1, 0);
            }
        }
        /* row R - H is final: the warp's own columns to the level (or the outer one) */
        const int r = R - H;
        if (r >= i0 && r <= i1) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                if (!own[h]) continue;
                if (OUT) {
                    odst[(long long)r * O.pitch + ja + h] = oadd ? ow[h] + (double)v[H][h] * o.y : (double)v[H][h];
                } else {
                    ((T *)MGG_BUF(L, o.a ^ 1))[(long long)r * pitch + ja + h] = v[H][h];
                }
            }
        }
    }
#undef MGG_RBW_LOAD
}

#endif
