/*
 * A host emulation of rb-tuned's kernel (src/methods/redblack/cuda/redblack_stream.cuh) for machines with no
 * GPU: the kernel body is compiled as ordinary C++, each warp runs as 32 fibers in lock step
 * (shuffles through a round robin, tests/runtime/cuda/emu_warp.h), warps one after another (the kernel
 * has no communication between warps: it reads one grid and writes the other). The result
 * after T iterations is compared bitwise with a plain in-place red-black loop (rb-seq's
 * order) for odd / even / rectangular / tiny grids, every unroll depth, several shapes, a
 * reduced grid (the grid-stride loop), fp32 and fp64, omega 1 and weighted, spike / f array /
 * zero rhs. It checks the algorithm and indexing, not the CUDA compiler; the GPU test
 * (tests/methods/redblack/test_gpu_redblack.c) checks the real kernel. Built and run by
 * tests/runtime/cuda/emu_build.sh (ctest gpu_kernel_emulation); prints the number of cases,
 * exit status 1 on a mismatch.
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

#include "methods/redblack/cuda/redblack_stream.cuh"

/* One launch as rb_stream_launch would make it (gy_cap: fewer block rows, to run the
 * grid-stride loop). */
template <typename T, bool W, bool OVL>
static void emu_go(const T *u, T *un, const T *hf, const rb_geo &g, int bx, int by, int h, T c0, T c1,
                   long gy_cap)
{
    const int V = 16 / (int)sizeof(T);
    const long words = ((long)g.nx + V - 1) / V, strips = ((long)g.ny + h - 1) / h;
    const long threads = OVL ? (words + 29) / 30 * 32 : words;
    long gy = (strips + by - 1) / by;
    if (gy > gy_cap) gy = gy_cap;
    blockDim = {(unsigned)bx, (unsigned)by, 1};
    gridDim = {(unsigned)((threads + bx - 1) / bx), (unsigned)gy, 1};
    /* the 32 lanes (fibers) walk the same warps in the same order, in step at each shuffle */
    emu_run_warp([&](int l) {
        for (unsigned byi = 0; byi < gridDim.y; byi++)
            for (unsigned bxi = 0; bxi < gridDim.x; bxi++)
                for (int ty = 0; ty < by; ty++)
                    for (int w0 = 0; w0 < bx; w0 += 32) {
                        threadIdx = emu_dim3{(unsigned)(w0 + l), (unsigned)ty, 0};
                        blockIdx = emu_dim3{bxi, byi, 0};
                        if (h % 8 == 0)
                            rb_stream<T, 16 / sizeof(T), 8, W, OVL>(u, un, hf, g, h, c0, c1);
                        else if (h % 4 == 0)
                            rb_stream<T, 16 / sizeof(T), 4, W, OVL>(u, un, hf, g, h, c0, c1);
                        else
                            rb_stream<T, 16 / sizeof(T), 2, W, OVL>(u, un, hf, g, h, c0, c1);
                    }
    });
}

/* One launch as rb_stream_launch makes it (by + 16: overlapped warps). */
template <typename T, bool W>
static void emu_launch(const T *u, T *un, const T *hf, const rb_geo &g, int bx, int by, int h, T c0, T c1,
                       long gy_cap)
{
    if (by & RB_STREAM_OVL)
        emu_go<T, W, true>(u, un, hf, g, bx, by & ~RB_STREAM_OVL, h, c0, c1, gy_cap);
    else
        emu_go<T, W, false>(u, un, hf, g, bx, by, h, c0, c1, gy_cap);
}

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
static int run_case(int nx, int ny, int bx, int by, int h, double omega, int rhs, int iters, long gy_cap)
{
    hr_grid_layout l;
    hr_layout_init(&l, 2, nx, ny, 1, sizeof(T));
    const size_t n = l.count + l.pitch; /* the device grids' spare row */
    std::vector<T> a(n, (T)0), b(n, (T)0), ref(n, (T)0), f(n, (T)0);
    T *ua = a.data() + l.offset, *ub = b.data() + l.offset, *ur = ref.data() + l.offset,
      *fh = f.data() + l.offset;
    for (int i = 0; i <= ny + 1; i++)
        for (int j = 0; j <= nx + 1; j++) {
            const size_t x = (size_t)i * l.pitch + (size_t)j;
            const bool bnd = i == 0 || j == 0 || i == ny + 1 || j == nx + 1;
            ua[x] = bnd ? (T)(1.0 + 0.01 * i - 0.003 * j) : (T)std::sin(0.37 * i + 0.11 * j * j);
            fh[x] = (T)(0.001 * ((i * 7 + j * 13) % 17));
        }
    b = a;
    ref = a;
    rb_geo g = {l.pitch, l.plane, 2, nx, ny, 1, -1, 0, 0, omega != 1.0};
    if (rhs == 1) {
        g.si = HR_SPIKE_INDEX(ny);
        g.sj = HR_SPIKE_INDEX(nx);
    }
    const T *hf = rhs == 2 ? fh : nullptr;
    const T c0 = (T)(1.0 - omega), c1 = (T)omega;
    T *cur = ua, *nxt = ub;
    for (int t = 0; t < iters; t++) {
        if (g.weighted)
            emu_launch<T, true>(cur, nxt, hf, g, bx, by, h, c0, c1, gy_cap);
        else
            emu_launch<T, false>(cur, nxt, hf, g, bx, by, h, c0, c1, gy_cap);
        std::swap(cur, nxt);
        reference<T>(ur, hf, g, c0, c1);
    }
    for (int i = 0; i <= ny + 1; i++)
        for (int j = 0; j <= nx + 1; j++) {
            const size_t x = (size_t)i * l.pitch + (size_t)j;
            if (std::memcmp(&cur[x], &ur[x], sizeof(T)) != 0) {
                std::printf(
                    "MISMATCH %s %dx%d shape %dx%dx%d omega %g rhs %d gy_cap %ld: (%d,%d) %.17g vs %.17g\n",
                    sizeof(T) == 8 ? "double" : "single", nx, ny, bx, by, h, omega, rhs, gy_cap, i, j,
                    (double)cur[x], (double)ur[x]);
                return 1;
            }
        }
    return 0;
}

int main()
{
    const int sizes[][2] = {{1, 1},   {2, 3},    {3, 2},  {5, 4},   {8, 3},   {37, 29},
                            {64, 33}, {130, 61}, {3, 50}, {129, 7}, {121, 9}, {241, 5}};
    /* by + 16: overlapped warps */
    const int shapes[][3] = {{32, 1, 16}, {32, 2, 2},  {64, 1, 6},  {32, 1, 4},  {32, 3, 12}, {64, 2, 8},
                             {32, 1, 64}, {32, 17, 8}, {64, 18, 4}, {32, 19, 6}, {96, 17, 2}};
    int cases = 0;
    for (const auto &z : sizes)
        for (const auto &s : shapes)
            for (int rhs = 0; rhs < 3; rhs++)
                for (int w = 0; w < 2; w++) {
                    const double omega = w ? 1.45 : 1.0;
                    const long cap = (cases % 3 == 0) ? 1 : 65535;
                    if (run_case<float>(z[0], z[1], s[0], s[1], s[2], omega, rhs, 3, cap)) return 1;
                    if (run_case<double>(z[0], z[1], s[0], s[1], s[2], omega, rhs, 3, cap)) return 1;
                    cases += 2;
                }
    std::printf("rb_stream_emu: %d cases bitwise equal to the in-place red-black loop\n", cases);
    return 0;
}
