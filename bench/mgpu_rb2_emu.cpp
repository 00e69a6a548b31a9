/*
 * rb-2gpu's streaming scheme (src/cuda/redblack_gpu2_stream.cuh) on the host, no GPU: the
 * real rb2s_layout / rb2s_part / rb2s_iteration on the real state struct, each rb_stream
 * launch run by the warp emulation of tests/gpu/rb_stream_emu.cpp (32 fibers in lock step,
 * tests/gpu/emu_warp.h), the CUDA calls stubbed to run at once, so the operations run in
 * the code's enqueue order (bench/mgpu_rb2_model.py checks that the streams and events
 * order every conflicting pair, so any execution equals that order). Both halves' rows
 * after 5 iterations are compared bitwise with an in-place red-black loop (rb-seq's order)
 * over shapes (both edge schemes, unroll 8 / 4 / 2), strip heights S of 2, 3 and 8 rows,
 * grids down to 2 rows, spike / f array / zero rhs, omega 1 and weighted, fp32 and fp64.
 *
 *   g++ -std=c++17 -O1 -ffp-contract=off -Isrc -Iinclude -Itests/gpu bench/mgpu_rb2_emu.cpp \
 *       -o build/mgpu_rb2_emu && build/mgpu_rb2_emu      (about 30 s; or mgpu_rb2_model.py --emu)
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/stencil.h"
#include "problem/grid.h"

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

#include "cuda/redblack_gpu.h"
#include "cuda/redblack_stream.cuh"

/* the CUDA runtime as the scheme uses it: every call runs at once, in the enqueue order */
typedef int cudaStream_t, cudaEvent_t, cudaError_t;
typedef struct emu_graph *cudaGraph_t, *cudaGraphExec_t;
static const int cudaSuccess = 0, cudaStreamCaptureModeRelaxed = 0,
                 cudaGraphInstantiateFlagUseNodePriority = 8;
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
    return 1;
} /* graphs: not emulated */
static int cudaStreamEndCapture(int, cudaGraph_t *)
{
    return 1;
}
static int cudaGraphInstantiate(cudaGraphExec_t *, cudaGraph_t, int)
{
    return 1;
}
static int cudaGraphDestroy(cudaGraph_t)
{
    return 0;
}
static int cudaGraphLaunch(cudaGraphExec_t, int)
{
    return 1;
}

#include "cuda/redblack_gpu2_state.cuh"

static int rb2_copy_rows(const hr_gpu_rb2 *, int, void *dst, const void *src, size_t n, int)
{
    memcpy(dst, src, n);
    return 0;
}

/* rb_stream_launch_rows: the launch's warps one after another */
template <typename T, bool W>
static int rb_stream_launch_rows(const T *u, T *un, const T *hf, const rb_geo &g, int bx, int by, int h, T c0,
                                 T c1, int, int s0, int s1)
{
    const bool OVL = by & RB_STREAM_OVL;
    by &= ~RB_STREAM_OVL;
    const int V = 16 / (int)sizeof(T);
    const long words = ((long)g.nx + V - 1) / V, strips = ((long)g.ny + h - 1) / h;
    const long threads = OVL ? (words + 29) / 30 * 32 : words;
    long gy = (strips + by - 1) / by;
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
    return 0;
}

#include "cuda/redblack_gpu2_stream.cuh"

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

template <typename T>
static int run(int nx, int ny, int bx, int by, int h, int srows, double omega, int rhs, int iters)
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
    G.bx = bx;
    G.by = by;
    G.h = h;
    G.srows = srows;
    rb2s_layout(&G); /* as hr_gpu_rb2_create */
    std::vector<T> mem[2][3];
    for (int d = 0; d < 2; d++)
        for (int q = 0; q < 3; q++) {
            mem[d][q].assign(l.offset + (size_t)(G.nrows[d] + 1) * l.pitch, (T)0);
            const T *src = (q < 2 ? a.data() : f.data()) + l.offset + (size_t)G.ioff[d] * l.pitch;
            memcpy(mem[d][q].data() + l.offset, src, (size_t)G.nrows[d] * l.pitch * sizeof(T));
            if (q < 2)
                G.d_g[d][q] = mem[d][q].data();
            else if (rhs == 2)
                G.d_hf[d] = mem[d][q].data();
        }
    rb_geo g = {l.pitch, l.plane, 2, nx, ny, 1, G.p.spike_i, G.p.spike_j, 0, omega != 1.0};
    const T c0 = (T)(1.0 - omega), c1 = (T)omega;
    for (int t = 0; t < iters; t++) {
        rb2s_iteration<T>(&G);
        reference<T>(ua, rhs == 2 ? fh : nullptr, g, c0, c1);
    }
    for (int d = 0; d < 2; d++)
        for (int i = G.lo[d]; i <= G.hi[d]; i++)
            for (int j = 0; j <= nx + 1; j++) {
                const T got = ((T *)G.d_g[d][G.cur] + l.offset)[(size_t)(i - G.ioff[d]) * l.pitch + j];
                const T want = ua[(size_t)i * l.pitch + j];
                if (memcmp(&got, &want, sizeof(T))) {
                    printf("MISMATCH %dx%d shape %dx%dx%d srows %d rhs %d omega %g: (%d,%d) %g vs %g\n", nx,
                           ny, bx, by, h, srows, rhs, omega, i, j, (double)got, (double)want);
                    return 1;
                }
            }
    return 0;
}
int main()
{
    const int sizes[][2] = {{1, 2}, {5, 2}, {9, 3}, {12, 7}, {37, 29}, {64, 65}, {130, 41}, {3, 50}};
    const int shapes[][3] = {{128, 17, 8}, {32, 1, 16}, {32, 2, 2}, {64, 18, 4}, {32, 1, 6}};
    int cases = 0;
    for (auto &z : sizes)
        for (auto &s : shapes)
            for (int srows : {2, 3, 8})
                for (int rhs = 0; rhs < 3; rhs++)
                    for (int w = 0; w < 2; w++) {
                        const double om = w ? 1.45 : 1.0;
                        if (run<float>(z[0], z[1], s[0], s[1], s[2], srows, om, rhs, 5)) return 1;
                        if (run<double>(z[0], z[1], s[0], s[1], s[2], srows, om, rhs, 5)) return 1;
                        cases += 2;
                    }
    printf("mgpu_rb2_emu: %d cases bitwise equal to the in-place red-black loop\n", cases);
    return 0;
}
