/*
 * rb-tuned (2-D): one red-black iteration as ONE streaming pass, out of place (read grid u,
 * write grid un), shaped like the 2-D Jacobi `tuned` kernel (jacobi2d_tuned.cu) that moves
 * 95-99% of the copy bandwidth.
 *
 * Why out of place: the colour-1 value of a point depends only on OLD values within a
 * distance-2 diamond (its own value, and the new colour-0 values of its 4 neighbours, which
 * depend on old colour-1 values). So a thread that reads an unchanging grid can compute any
 * point's final value with no ordering between threads: no barrier, no tile ring fix-up, no
 * race between warps that run at different speeds (the in-place rb-inplace kernel needs all
 * three). The values are the same operations on the same operands as rb-seq's in-place
 * sweep (HR_JACOBI5(F) + HR_RB_UPDATE, -fmad=false), so the result is bitwise equal.
 *
 * Each thread owns V consecutive columns (one aligned 16-byte word: 4 floats, 2 doubles; j
 * odd, so colours alternate inside the word) of a strip of h rows and marches down the rows.
 * At row r it holds mix[r-1], mix[r] (rows after the colour-0 phase) and old[r+1]; it reads
 * old[r+2] (prefetched U rows ahead: U independent 16-byte loads per thread in flight),
 * forms mix[r+1] (colour 0 of row r+1 from old colour-1 values), then the final row r
 * (colour 1 from mix[r-1], mix[r], mix[r+1]) and stores it as one word. West / east come
 * from the neighbouring lanes by warp shuffle; lanes 0 and 31 also load the aligned pair of
 * columns beyond the warp (j-2, j-1 or j+V, j+V+1) and compute that column's mixed value
 * themselves, or (OVL, overlapped warps) a warp writes 30 words and its lanes 0 and 31 only
 * carry the neighbouring warps' edge words (fewer registers, 1/16 of the lanes idle). Device memory sees each
 * word read once (plus 4 halo rows per strip, L2 hits) and written once. Strips start at odd rows (h even),
 * so every row's colour pattern is a compile-time constant of the unrolled loop: no per-element colour
 * branches.
 *
 * Shape (bx, by, h): bx threads along x (a multiple of 32), by strips per block (bx * by <=
 * 256: the launch bound leaves the prefetch its registers; by + 16: overlapped warps, lanes
 * 0 and 31 only carry the neighbouring words), h rows per strip (even, 2..512;
 * unroll U = 8, 4 or 2, the largest dividing h). Short strips (h = U: all of a strip's
 * loads at once) make a strip's 4 halo rows arrive together with the neighbouring strips'
 * own loads of them, so they are L2 hits, as in the 2-D Jacobi's best shapes (h = 4).
 */
#ifndef HR_REDBLACK_STREAM_CUH
#define HR_REDBLACK_STREAM_CUH

#include "methods/redblack/cuda/redblack_point.cuh"

/* Shape flag in by (strips per block = by & 15): overlapped warps (see rb_stream). */
#define RB_STREAM_OVL 16

template <typename T, int V> struct alignas(sizeof(T) * V) rbs_vec {
    T v[V];
};
template <typename T> struct alignas(2 * sizeof(T)) rbs_pair {
    T a, b; /* columns c, c + 1 */
};

/* The update of one point from its current value and neighbours (rb_point's operand order). */
template <typename T, bool W>
__device__ __forceinline__ T rbs_update(T c, T n, T s, T w, T e, const T *hf, size_t x, bool spike, T c0,
                                        T c1)
{
    T jac;
    if (hf)
        jac = HR_JACOBI5F(T, n, s, w, e, hf[x]);
    else if (spike)
        jac = HR_JACOBI5F(T, n, s, w, e, (T)HR_SPIKE_H2F);
    else
        jac = HR_JACOBI5(T, n, s, w, e);
    return W ? HR_WEIGHTED(c, jac, c0, c1) : jac;
}

/* Row R of the word at column j: the elements e with e % 2 == e0 (one colour) updated from
 * north n, south s, the word c itself and the columns wl (j - 1) and er (j + V); the other
 * colour copied. Rows outside [1, ny] and columns outside [1, nx] are not updated. e0 is
 * a constant once the callers' row loop is unrolled, so the colour test folds away. */
template <typename T, int V, bool W, bool OVL>
__device__ __forceinline__ rbs_vec<T, V> rbs_row(const rbs_vec<T, V> &n, const rbs_vec<T, V> &s,
                                                 const rbs_vec<T, V> &c, T wl, T er, int e0, int R, int j,
                                                 const rb_geo &g, const T *hf, T c0, T c1)
{
    rbs_vec<T, V> m = c;
    if (R < 1 || R > g.ny) return m;
    const bool srow = R == g.si && g.sk == 0;
    const size_t x = (size_t)R * g.p + (size_t)j;
#pragma unroll
    for (int e = 0; e < V; e++) {
        if ((e & 1) == e0 && (!OVL || j + e >= 1) && j + e <= g.nx) { /* j < 1: an OVL lane 0 */
            const T w = e == 0 ? wl : c.v[e == 0 ? 0 : e - 1];
            const T ea = e == V - 1 ? er : c.v[e == V - 1 ? 0 : e + 1];
            m.v[e] =
                rbs_update<T, W>(c.v[e], n.v[e], s.v[e], w, ea, hf, x + e, srow && j + e == g.sj, c0, c1);
        }
    }
    return m;
}

/* The mixed value (after colour 0) of an edge lane's outside column sc in row R: self / outer
 * from its pair, inner = the lane's own nearest element, north / south from the pairs above
 * and below (old values: they are colour 1 whenever sc is colour 0). */
template <typename T, bool W>
__device__ __forceinline__ T rbs_side(const rbs_pair<T> &pn, const rbs_pair<T> &pc, const rbs_pair<T> &ps,
                                      T inner, bool left, bool upd, int R, int sc, const rb_geo &g,
                                      const T *hf, T c0, T c1)
{
    const T self = left ? pc.b : pc.a, outer = left ? pc.a : pc.b;
    if (!upd || R < 1 || R > g.ny || ((R + sc) & 1)) return self;
    const T n = left ? pn.b : pn.a, s = left ? ps.b : ps.a;
    const T w = left ? outer : inner, e = left ? inner : outer;
    return rbs_update<T, W>(self, n, s, w, e, hf, (size_t)R * g.p + (size_t)sc,
                            R == g.si && sc == g.sj && g.sk == 0, c0, c1);
}

/* WIN (rb-2gpu's parts of a half): only rows [s0, s1] are stored; the rows just outside
 * them are still updated (colour 0) for their neighbours, so a part's edge rows are exact;
 * rb-tuned's instantiations (WIN false) are unchanged. */
template <typename T, int V, int U, bool W, bool OVL, bool WIN = false>
__global__ void __launch_bounds__(256, 1)
    rb_stream(const T *__restrict__ u, T *__restrict__ un, const T *__restrict__ hf, rb_geo g, int h, T c0,
              T c1, int s0 = 1, int s1 = 0)
{
    typedef rbs_vec<T, V> VT;
    typedef rbs_pair<T> PT;
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const int nx = g.nx, ny = g.ny;
    const size_t p = g.p;
    /* OVL (overlapped warps): lanes 0 and 31 hold the words beside the warp's 30 output words
     * (the neighbouring warps' edge words), loaded and mixed like the others, not stored:
     * no edge pairs, no side values, fewer registers; 1/16 of the lanes idle */
    const int word = OVL ? (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * 30 + lane - 1
                         : (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int j = 1 + word * V; /* odd; OVL: 1 - V for the first warp's lane 0 (left padding) */
    const bool store = !OVL || (lane >= 1 && lane <= 30);
    const bool have = j <= nx + 1;
    const bool full = j + V - 1 <= nx;
    const bool left = lane == 0;
    const int sc = left ? j - 1 : j + V; /* the edge lane's outside column */
    const bool side = !OVL && (lane == 0 || lane == 31) && have && sc <= nx + 1; /* pair loaded */
    const bool side_upd = side && sc >= 1 && sc <= nx;
    const T *col = u + j;
    const T *pcol = u + (left ? j - 2 : j + V);
    T *out = un + j;
    VT zero;
#pragma unroll
    for (int e = 0; e < V; e++)
        zero.v[e] = (T)0;
    const PT pzero = {(T)0, (T)0};
    const long strips = ((long)ny + h - 1) / h;
    for (long st = (long)blockIdx.y * blockDim.y + threadIdx.y; st < strips;
         st += (long)gridDim.y * blockDim.y) {
        const int i0 = 1 + (int)st * h, i1 = min(i0 + h, ny + 1); /* rows [i0, i1), i0 odd */
#define RBS_LD(r)  ((have && (r) >= 0 && (r) <= ny + 1) ? *(const VT *)(col + (size_t)(r)*p) : zero)
#define RBS_LDP(r) ((side && (r) >= 0 && (r) <= ny + 1) ? *(const PT *)(pcol + (size_t)(r)*p) : pzero)
        /* the start rows and the first batch go out together: 4 + U words (and edge pairs) in
         * flight, at the moment the neighbouring strips load the same halo rows (L2 hits) */
        VT pre[U];
        PT ppre[U];
#pragma unroll
        for (int q = 0; q < U; q++) {
            const bool in = i0 + q < i1;
            pre[q] = in ? RBS_LD(i0 + q + 2) : zero;
            ppre[q] = in ? RBS_LDP(i0 + q + 2) : pzero;
        }
        const VT oa = RBS_LD(i0 - 2), ob = RBS_LD(i0 - 1), oc = RBS_LD(i0);
        VT os = RBS_LD(i0 + 1);
        const PT pb = RBS_LDP(i0 - 1);
        PT pc = RBS_LDP(i0), ps = RBS_LDP(i0 + 1);
        /* mix[i0 - 1] (an even row: colour 0 at odd offsets) and mix[i0] (odd row: even offsets) */
        T wl = __shfl_up_sync(FULL, ob.v[V - 1], 1), er = __shfl_down_sync(FULL, ob.v[0], 1);
        if (!OVL && lane == 0) wl = pb.b;
        if (!OVL && lane == 31) er = pb.a;
        VT mn = rbs_row<T, V, W, OVL>(oa, oc, ob, wl, er, 1, i0 - 1, j, g, hf, c0, c1);
        wl = __shfl_up_sync(FULL, oc.v[V - 1], 1);
        er = __shfl_down_sync(FULL, oc.v[0], 1);
        if (!OVL && lane == 0) wl = pc.b;
        if (!OVL && lane == 31) er = pc.a;
        VT mc = rbs_row<T, V, W, OVL>(ob, os, oc, wl, er, 0, i0, j, g, hf, c0, c1);
        T smc =
            rbs_side<T, W>(pb, pc, ps, left ? oc.v[0] : oc.v[V - 1], left, side_upd, i0, sc, g, hf, c0, c1);
        for (int r = i0; r < i1; r += U) {
            if (r > i0) { /* the next batch: U rows per thread in flight */
#pragma unroll
                for (int q = 0; q < U; q++) {
                    const bool in = r + q < i1;
                    pre[q] = in ? RBS_LD(r + q + 2) : zero;
                    ppre[q] = in ? RBS_LDP(r + q + 2) : pzero;
                }
            }
#pragma unroll
            for (int q = 0; q < U; q++) {
                if (r + q >= i1) break; /* uniform: the whole warp has the same rows */
                const int R = r + q;    /* parity of R: (q + 1) & 1 */
                /* mix[R + 1]: colour 0 of row R + 1 (parity q & 1: colour 0 at offsets (q + 1) & 1) */
                wl = __shfl_up_sync(FULL, os.v[V - 1], 1);
                er = __shfl_down_sync(FULL, os.v[0], 1);
                if (!OVL && lane == 0) wl = ps.b;
                if (!OVL && lane == 31) er = ps.a;
                const VT ms =
                    rbs_row<T, V, W, OVL>(mc, pre[q], os, wl, er, (q + 1) & 1, R + 1, j, g, hf, c0, c1);
                const T sms = rbs_side<T, W>(pc, ps, ppre[q], left ? os.v[0] : os.v[V - 1], left, side_upd,
                                             R + 1, sc, g, hf, c0, c1);
                /* the final row R: colour 1, the same offsets as colour 0 one row down */
                wl = __shfl_up_sync(FULL, mc.v[V - 1], 1);
                er = __shfl_down_sync(FULL, mc.v[0], 1);
                if (!OVL && lane == 0) wl = smc;
                if (!OVL && lane == 31) er = smc;
                const VT fin = rbs_row<T, V, W, OVL>(mn, ms, mc, wl, er, (q + 1) & 1, R, j, g, hf, c0, c1);
                if (have && store && (!WIN || (R >= s0 && R <= s1))) {
                    T *o = out + (size_t)R * p;
                    if (full) {
                        *(VT *)o = fin;
                    } else {
#pragma unroll
                        for (int e = 0; e < V; e++)
                            if (j + e <= nx) o[e] = fin.v[e];
                    }
                }
                mn = mc;
                mc = ms;
                os = pre[q];
                pc = ps;
                ps = ppre[q];
                smc = sms;
            }
        }
#undef RBS_LD
#undef RBS_LDP
    }
}

#ifdef __CUDACC__
/* The launch for grids u -> un; 16 bytes per thread; by + 16: overlapped warps (OVL).
 * Shape checked by rb_stream_check. */
template <typename T, bool W, bool OVL, bool WIN = false>
static cudaError_t rb_stream_go(const T *u, T *un, const T *hf, const rb_geo &g, int bx, int by, int h, T c0,
                                T c1, cudaStream_t st, int s0 = 1, int s1 = 0)
{
    const int V = 16 / (int)sizeof(T);
    const long words = ((long)g.nx + V - 1) / V, strips = ((long)g.ny + h - 1) / h;
    const long threads = OVL ? (words + 29) / 30 * 32 : words;
    const long gy = (strips + by - 1) / by;
    const dim3 blk(bx, by), grd((unsigned)((threads + bx - 1) / bx), (unsigned)(gy < 65535 ? gy : 65535));
    if (h % 8 == 0)
        rb_stream<T, 16 / sizeof(T), 8, W, OVL, WIN><<<grd, blk, 0, st>>>(u, un, hf, g, h, c0, c1, s0, s1);
    else if (h % 4 == 0)
        rb_stream<T, 16 / sizeof(T), 4, W, OVL, WIN><<<grd, blk, 0, st>>>(u, un, hf, g, h, c0, c1, s0, s1);
    else
        rb_stream<T, 16 / sizeof(T), 2, W, OVL, WIN><<<grd, blk, 0, st>>>(u, un, hf, g, h, c0, c1, s0, s1);
    return cudaGetLastError();
}

template <typename T, bool W>
static cudaError_t rb_stream_launch(const T *u, T *un, const T *hf, const rb_geo &g, int bx, int by, int h,
                                    T c0, T c1, cudaStream_t st)
{
    if (by & RB_STREAM_OVL)
        return rb_stream_go<T, W, true>(u, un, hf, g, bx, by & ~RB_STREAM_OVL, h, c0, c1, st);
    return rb_stream_go<T, W, false>(u, un, hf, g, bx, by, h, c0, c1, st);
}

/* The same launch storing only rows [s0, s1] (1 <= s0, s1 <= g.ny): see WIN above. */
template <typename T, bool W>
static cudaError_t rb_stream_launch_rows(const T *u, T *un, const T *hf, const rb_geo &g, int bx, int by,
                                         int h, T c0, T c1, cudaStream_t st, int s0, int s1)
{
    if (by & RB_STREAM_OVL)
        return rb_stream_go<T, W, true, true>(u, un, hf, g, bx, by & ~RB_STREAM_OVL, h, c0, c1, st, s0, s1);
    return rb_stream_go<T, W, false, true>(u, un, hf, g, bx, by, h, c0, c1, st, s0, s1);
}
#endif

/* 0 when (bx, by, h) is a valid rb-tuned shape, else writes why. */
static inline int rb_stream_check(int bx, int by, int h, char *why, size_t len)
{
    by &= ~RB_STREAM_OVL;
    if (bx < 32 || bx % 32 || by < 1 || bx * by > 256) {
        snprintf(why, len, "shape: bx=%d by=%d: bx a multiple of 32, bx * by <= 256 threads", bx, by);
        return 1;
    }
    if (h < 2 || h % 2 || h > 512) {
        snprintf(why, len, "shape: h=%d: rows per strip must be even, 2..512", h);
        return 1;
    }
    return 0;
}

#endif
