/*
 * rb-mgpu's streaming scheme (src/methods/redblack/cuda/redblack_gpu2_stream.cuh) on the host, no GPU: the
 * real rb2s_layout / rb2s_part / rb2s_iteration / rb2s_capture / rb2s_run on the real state
 * struct, each rb_stream launch run by the warp emulation of tests/runtime/cuda/rb_stream_emu.cpp (32
 * fibers in lock step, tests/runtime/cuda/emu_warp.h), the CUDA calls stubbed to run at once, so the
 * operations run in the code's enqueue order (bench/experiments/mgpu_rb2_model.py checks that the streams
 * and events order every conflicting pair, so any execution equals that order). A stream
 * capture records the launches and copies instead, and a graph launch replays them: the K
 * iterations of a graph run on the grids the capture saw. Every slab's rows after 7
 * iterations (in two calls, so that graphs start from either grid) are compared bitwise with
 * an in-place red-black loop (rb-seq's order), for 2, 3 and 4 slabs: shapes (both edge
 * schemes, unroll 8 / 4 / 2), strip heights S of 2, 3 and 8 rows, grids down to the fewest
 * rows the slabs allow (every ny from there to 40: slabs of 1 and 2 rows, odd and even
 * counts), spike / f array / zero rhs, omega 1 and weighted, fp32 and fp64, direct launches
 * and graphs of 2 and 4 iterations. The cuts are checked too: odd, each slab's rows within
 * 2 of ny / G, and too few rows refused.
 *
 *   g++ -std=c++17 -O1 -ffp-contract=off -Isrc -Iinclude -Itests/runtime/cuda \
 *       bench/drivers/mgpu_rb2_emu.cpp -o build/mgpu_rb2_emu && build/mgpu_rb2_emu [--quick]
 *   (ctest rb_mgpu_emulation runs --quick; or mgpu_rb2_model.py --emu)
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "core/stencil.h"
#include "core/grid.h"

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define HR_REDBLACK_POINT_CUH /* the emulation's own rb_geo below */
using std::min;

struct rb_geo {
    size_t p, q;
    int dim, nx, ny, nz;
    int si, sj, sk;
    int weighted;
};
#include "emu_warp.h"

#include "methods/redblack/cuda/redblack_gpu.h"
#include "methods/redblack/cuda/redblack_stream.cuh"

/* the CUDA runtime as the scheme uses it: every call runs at once, in the enqueue order; a
 * capture records the launches and copies (closures) into a graph that a launch replays */
struct emu_graph {
    std::vector<std::function<void()>> ops;
};
typedef int cudaStream_t, cudaEvent_t, cudaError_t;
typedef emu_graph *cudaGraph_t, *cudaGraphExec_t;
static const int cudaSuccess = 0, cudaStreamCaptureModeRelaxed = 0,
                 cudaGraphInstantiateFlagUseNodePriority = 8;
static emu_graph *emu_capture; /* the graph being captured, or none */
static long emu_graph_launches;
static int cudaSetDevice(int)
{
    return 0;
}
static int cudaStreamWaitEvent(int, int, int)
{
    return 0;
}
static int cudaEventRecord(int, int)
{
    return 0;
}
static int cudaStreamBeginCapture(int, int)
{
    if (emu_capture) return 1;
    emu_capture = new emu_graph;
    return 0;
}
static int cudaStreamEndCapture(int, cudaGraph_t *g)
{
    *g = emu_capture;
    emu_capture = nullptr;
    return *g ? 0 : 1;
}
static int cudaGraphInstantiate(cudaGraphExec_t *out, cudaGraph_t g, int)
{
    *out = new emu_graph(*g);
    return 0;
}
static int cudaGraphDestroy(cudaGraph_t g)
{
    delete g;
    return 0;
}
static int cudaGraphLaunch(cudaGraphExec_t g, int)
{
    for (auto &op : g->ops)
        op();
    emu_graph_launches++;
    return 0;
}
/* runs op now, or records it into the graph being captured */
static void emu_enqueue(std::function<void()> op)
{
    if (emu_capture)
        emu_capture->ops.push_back(std::move(op));
    else
        op();
}

#include "methods/redblack/cuda/redblack_gpu2_state.cuh"

static int rb2_copy_rows(const hr_gpu_rb2 *, int, int, void *dst, const void *src, size_t n, int)
{
    emu_enqueue([=] { memcpy(dst, src, n); });
    return 0;
}

/* one rb_stream launch: its warps one after another */
template <typename T, bool W>
static void rb_stream_emulated(const T *u, T *un, const T *hf, const rb_geo &g, int bx, int by, int h, T c0,
                               T c1, int s0, int s1, bool OVL, long threads, long gy)
{
    blockDim = {(unsigned)bx, (unsigned)by, 1};
    gridDim = {(unsigned)((threads + bx - 1) / bx), (unsigned)gy, 1};
    emu_run_warp([&](int l) {
        for (unsigned byi = 0; byi < gridDim.y; byi++)
            for (unsigned bxi = 0; bxi < gridDim.x; bxi++)
                for (int ty = 0; ty < by; ty++)
                    for (int w0 = 0; w0 < bx; w0 += 32) {
                        threadIdx = emu_dim3{(unsigned)(w0 + l), (unsigned)ty, 0};
                        blockIdx = emu_dim3{bxi, byi, 0};
                        if (OVL) {
                            if (h % 8 == 0)
                                rb_stream<T, 16 / sizeof(T), 8, W, true, true>(u, un, hf, g, h, c0, c1, s0,
                                                                               s1);
                            else if (h % 4 == 0)
                                rb_stream<T, 16 / sizeof(T), 4, W, true, true>(u, un, hf, g, h, c0, c1, s0,
                                                                               s1);
                            else
                                rb_stream<T, 16 / sizeof(T), 2, W, true, true>(u, un, hf, g, h, c0, c1, s0,
                                                                               s1);
                        } else {
                            if (h % 8 == 0)
                                rb_stream<T, 16 / sizeof(T), 8, W, false, true>(u, un, hf, g, h, c0, c1, s0,
                                                                                s1);
                            else if (h % 4 == 0)
                                rb_stream<T, 16 / sizeof(T), 4, W, false, true>(u, un, hf, g, h, c0, c1, s0,
                                                                                s1);
                            else
                                rb_stream<T, 16 / sizeof(T), 2, W, false, true>(u, un, hf, g, h, c0, c1, s0,
                                                                                s1);
                        }
                    }
    });
}

/* rb_stream_launch_rows: the launch now, or recorded by a capture */
template <typename T, bool W>
static int rb_stream_launch_rows(const T *u, T *un, const T *hf, const rb_geo &g, int bx, int by, int h, T c0,
                                 T c1, int, int s0, int s1)
{
    const bool OVL = by & RB_STREAM_OVL;
    by &= ~RB_STREAM_OVL;
    const int V = 16 / (int)sizeof(T);
    const long words = ((long)g.nx + V - 1) / V, strips = ((long)g.ny + h - 1) / h;
    const long threads = OVL ? (words + 29) / 30 * 32 : words;
    const long gy = (strips + by - 1) / by;
    const rb_geo gv = g;
    emu_enqueue(
        [=] { rb_stream_emulated<T, W>(u, un, hf, gv, bx, by, h, c0, c1, s0, s1, OVL, threads, gy); });
    return 0;
}

#include "methods/redblack/cuda/redblack_gpu2_stream.cuh"

/* rb-seq's order: colour 0 then colour 1, in place. */
template <typename T> static void reference(T *u, const T *hf, const rb_geo &g, T c0, T c1)
{
    for (int colour = 0; colour < 2; colour++)
        for (int i = 1; i <= g.ny; i++)
            for (int j = 1; j <= g.nx; j++) {
                if (((i + j) & 1) != colour) continue;
                const size_t x = (size_t)i * g.p + (size_t)j;
                const T n = u[x - g.p], s = u[x + g.p], w = u[x - 1], e = u[x + 1];
                T jac;
                if (hf)
                    jac = HR_JACOBI5F(T, n, s, w, e, hf[x]);
                else if (i == g.si && j == g.sj)
                    jac = HR_JACOBI5F(T, n, s, w, e, (T)HR_SPIKE_H2F);
                else
                    jac = HR_JACOBI5(T, n, s, w, e);
                u[x] = HR_RB_UPDATE(u[x], jac, c0, c1, g.weighted);
            }
}

/* The cuts for ng slabs of ny rows: odd, each slab within 2 rows of ny / ng (parity and
 * the minimum rows allowing), slabs of >= 1 row (>= 2 inside); too few rows refused. */
static int check_cuts(int ny, int ng)
{
    hr_gpu_rb2 G;
    memset(&G, 0, sizeof G);
    G.p.ny = ny;
    G.ng = ng;
    G.srows = 2;
    const int rc = rb2s_layout(&G);
    if (ny < 2 * ng - 2) {
        if (rc != -1) printf("CUTS ny %d ng %d: too few rows not refused\n", ny, ng);
        return rc != -1;
    }
    if (rc) {
        printf("CUTS ny %d ng %d: refused\n", ny, ng);
        return 1;
    }
    for (int d = 0; d < ng; d++) {
        const int rows = G.hi[d] - G.lo[d] + 1, least = d == 0 || d == ng - 1 ? 1 : 2;
        const double even = (double)ny / ng;
        const bool cut_odd = d == ng - 1 || (G.hi[d] & 1);
        /* within 2 of the even share, unless the minimum rows force more (tiny grids) */
        const bool balanced = ny < 4 * ng || (rows >= even - 2 && rows <= even + 2);
        if (rows < least || !cut_odd || !balanced || G.lo[d] != (d ? G.hi[d - 1] + 1 : 1) ||
            (d == ng - 1 && G.hi[d] != ny)) {
            printf("CUTS ny %d ng %d: slab %d rows %d..%d\n", ny, ng, d, G.lo[d], G.hi[d]);
            return 1;
        }
    }
    return 0;
}

template <typename T>
static int run(int ng, int nx, int ny, int bx, int by, int h, int srows, double omega, int rhs, int graph_k)
{
    hr_grid_layout l;
    hr_layout_init(&l, 2, nx, ny, 1, sizeof(T));
    std::vector<T> a(l.count + l.pitch, (T)0), f(l.count + l.pitch, (T)0);
    T *ua = a.data() + l.offset, *fh = f.data() + l.offset;
    for (int i = 0; i <= ny + 1; i++)
        for (int j = 0; j <= nx + 1; j++) {
            const size_t x = (size_t)i * l.pitch + (size_t)j;
            const bool bnd = i == 0 || j == 0 || i == ny + 1 || j == nx + 1;
            ua[x] = bnd ? (T)(1.0 + 0.01 * i - 0.003 * j) : (T)std::sin(0.37 * i + 0.11 * j * j);
            fh[x] = (T)(0.001 * ((i * 7 + j * 13) % 17));
        }
    hr_gpu_rb2 G;
    memset(&G, 0, sizeof G);
    G.p.nx = nx;
    G.p.ny = ny;
    G.p.dim = 2;
    G.p.esize = sizeof(T);
    G.p.pitch = l.pitch;
    G.p.plane = l.plane;
    G.p.offset = l.offset;
    G.p.count = l.count;
    G.p.omega = omega;
    G.p.spike_i = rhs == 1 ? HR_SPIKE_INDEX(ny) : -1;
    G.p.spike_j = HR_SPIKE_INDEX(nx);
    G.p.hf_host = rhs == 2 ? f.data() : nullptr;
    G.p.gpus = ng;
    G.ng = ng;
    G.bx = bx;
    G.by = by;
    G.h = h;
    G.srows = srows;
    G.graph_k = graph_k;
    if (rb2s_layout(&G)) { /* as hri_gpu_rb2_create */
        printf("LAYOUT refused %dx%d on %d slabs\n", nx, ny, ng);
        return 1;
    }
    std::vector<std::vector<T>> mem(3 * ng);
    for (int d = 0; d < ng; d++)
        for (int q = 0; q < 3; q++) {
            std::vector<T> &m = mem[3 * d + q];
            m.assign(l.offset + (size_t)(G.nrows[d] + 1) * l.pitch, (T)0);
            const T *src = (q < 2 ? a.data() : f.data()) + l.offset + (size_t)G.ioff[d] * l.pitch;
            memcpy(m.data() + l.offset, src, (size_t)G.nrows[d] * l.pitch * sizeof(T));
            if (q < 2)
                G.d_g[d][q] = m.data();
            else if (rhs == 2)
                G.d_hf[d] = m.data();
        }
    if (graph_k) /* as hri_gpu_rb2_create: one graph per starting grid */
        for (int q = 0; q < 2; q++) {
            G.cur = q;
            if (rb2s_capture(&G, graph_k, &G.graph[q])) {
                printf("CAPTURE failed\n");
                return 1;
            }
        }
    G.cur = 0;
    rb_geo g = {l.pitch, l.plane, 2, nx, ny, 1, G.p.spike_i, G.p.spike_j, 0, omega != 1.0};
    const T c0 = (T)(1.0 - omega), c1 = (T)omega;
    const long launches0 = emu_graph_launches;
    for (int chunk : {3, 4}) { /* the second call starts on grid B: graph[1] */
        rb2s_run(&G, chunk);
        for (int t = 0; t < chunk; t++)
            reference<T>(ua, rhs == 2 ? fh : nullptr, g, c0, c1);
    }
    for (int q = 0; q < 2 && graph_k; q++)
        delete G.graph[q];
    const long want_launches = graph_k ? 3 / graph_k + 4 / graph_k : 0;
    if (emu_graph_launches - launches0 != want_launches) {
        printf("GRAPH %d launches, not %ld\n", (int)(emu_graph_launches - launches0), want_launches);
        return 1;
    }
    for (int d = 0; d < ng; d++)
        for (int i = G.lo[d]; i <= G.hi[d]; i++)
            for (int j = 0; j <= nx + 1; j++) {
                const T got = ((T *)G.d_g[d][G.cur] + l.offset)[(size_t)(i - G.ioff[d]) * l.pitch + j];
                const T want = ua[(size_t)i * l.pitch + j];
                if (memcmp(&got, &want, sizeof(T))) {
                    printf("MISMATCH %d slabs %dx%d shape %dx%dx%d srows %d rhs %d omega %g graph %d: "
                           "(%d,%d) %g "
                           "vs %g\n",
                           ng, nx, ny, bx, by, h, srows, rhs, omega, graph_k, i, j, (double)got,
                           (double)want);
                    return 1;
                }
            }
    return 0;
}

template <typename T>
static int both(int ng, int nx, int ny, const int *s, int srows, double om, int rhs, int gk)
{
    return run<T>(ng, nx, ny, s[0], s[1], s[2], srows, om, rhs, gk);
}

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    const int shapes[][3] = {{128, 17, 8}, {32, 1, 16}, {32, 2, 2}, {64, 18, 4}, {32, 1, 6}};
    const int nshapes = quick ? 3 : 5;
    int cases = 0;
    for (int ng = 2; ng <= RB2_MAX; ng++)
        for (int ny = 1; ny <= (ng <= 4 ? 200 : 3 * ng); ny++) {
            if (check_cuts(ny, ng)) return 1;
            cases++;
        }
    /* two slabs: the sizes and options of the two-GPU scheme */
    const int sizes[][2] = {{1, 2}, {5, 2}, {9, 3}, {12, 7}, {37, 29}, {64, 65}, {130, 41}, {3, 50}};
    for (auto &z : sizes)
        for (int si = 0; si < nshapes; si++)
            for (int srows : {2, 3, 8})
                for (int rhs = 0; rhs < 3; rhs++)
                    for (int w = 0; w < 2; w++) {
                        if (quick && (rhs + w + srows + si + z[1]) % 8)
                            continue; /* an eighth: each size met */
                        const double om = w ? 1.45 : 1.0;
                        const int gk = (rhs + srows) % 3 == 0 ? 0 : (rhs + srows) % 3 == 1 ? 2 : 4;
                        if (both<float>(2, z[0], z[1], shapes[si], srows, om, rhs, gk)) return 1;
                        if (both<double>(2, z[0], z[1], shapes[si], srows, om, rhs, gk)) return 1;
                        cases += 2;
                    }
    /* 2, 3 and 4 slabs: every ny from the fewest rows to 40 (thin slabs), a wide grid, both
     * precisions, the options rotating with ny */
    for (int ng = 2; ng <= 4; ng++)
        for (int ny = 2 * ng - 2 < 2 ? 2 : 2 * ng - 2; ny <= 40; ny++)
            for (int v = 0; v < (quick ? 1 : 2); v++) {
                const int k = ny + v + ng;
                const int nx = k % 3 == 0 ? 7 : k % 3 == 1 ? 12 : 33;
                const int srows = k % 4 == 3 ? 3 : 2;
                const double om = k % 2 ? 1.45 : 1.0;
                const int gk = k % 3 == 0 ? 0 : k % 3 == 1 ? 2 : 4;
                const int *s = shapes[k % nshapes];
                if (both<float>(ng, nx, ny, s, srows, om, k % 3, gk)) return 1;
                if (both<double>(ng, nx, ny, s, srows, om, (k + 1) % 3, (gk + 2) % 6)) return 1;
                cases += 2;
            }
    for (int ng = 3; ng <= 4; ng++) /* wider and taller */
        for (int si = quick ? ng - 3 : 0; si < nshapes; si += quick ? 2 : 1)
            for (int rhs = 0; rhs < 3; rhs++) {
                const int gk = (si + rhs) % 2 ? 2 : 0;
                if (both<float>(ng, 130, 67 + ng, shapes[si], 2 + rhs % 2, rhs == 1 ? 1.45 : 1.0, rhs, gk))
                    return 1;
                if (both<double>(ng, 37, 100 - ng, shapes[si], rhs == 2 ? 8 : 2, rhs == 0 ? 1.45 : 1.0, rhs,
                                 gk))
                    return 1;
                cases += 2;
            }
    printf("mgpu_rb2_emu: %d cases (cuts and runs on 2, 3 and 4 slabs) bitwise equal to the in-place "
           "red-black loop\n",
           cases);
    return 0;
}
