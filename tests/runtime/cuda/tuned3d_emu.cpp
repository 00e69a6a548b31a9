/*
 * A host emulation of the 3-D `tuned` kernel (hr_k_tuned3d in src/methods/jacobi/cuda/jacobi3d.cu) for
 * machines with no GPU, as rb_stream_emu.cpp does for rb-tuned: the kernel's text is cut out
 * of jacobi3d.cu (by tests/runtime/cuda/emu_build.sh) and compiled as C++, each warp runs as 32 fibers
 * in lock step (shuffles through a round robin, emu_warp.h), warps one after another (a Jacobi sweep
 * reads one grid and writes the other). One sweep is compared bitwise with a plain loop in
 * the same operand order, for straight and zig-zag chunks, every R, odd extents, chunk
 * lengths that do and do not divide nz, a reduced grid (the grid-stride loops), fp32 and
 * fp64, omega 1 and weighted, spike / f array.
 */
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/stencil.h"
#include "core/grid.h"

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
using std::min;

#include "emu_warp.h"

/* what the kernel takes from gpu_internal.cuh */
template <typename T> struct hr_gargs {
    const T *u;
    T *un;
    const T *hf;
    size_t pitch, plane;
    int n;
    int nx, ny, nz;
    int lo, hi;
    hr_rhs_view sp;
    T c0, c1;
};
template <typename T, bool W>
static inline T hr_point7(T uw, T ue, T un, T us, T ud, T uu, T uc, const T *hf, size_t k, int i, int j,
                          int kk, const hr_rhs_view &sp, T c0, T c1)
{
    T jac;
    if (hf)
        jac = HR_JACOBI7F(T, uw, ue, un, us, ud, uu, hf[k]);
    else if (HR_IS_SPIKE(sp, i, j, kk))
        jac = HR_JACOBI7F(T, uw, ue, un, us, ud, uu, (T)HR_SPIKE_H2F);
    else
        jac = HR_JACOBI7(T, uw, ue, un, us, ud, uu);
    if (W) return HR_WEIGHTED(uc, jac, c0, c1);
    return jac;
}
template <typename T, int V> struct alignas(sizeof(T) * V) hr_vec3 {
    T v[V];
};

#include "tuned3d_kernel.inc" /* cut out of jacobi3d.cu by emu_build.sh */

template <typename T, int R, bool W, bool ZZ>
static void emu_launch(const hr_gargs<T> &a, int bx, int h, long gy_cap, long gz_cap, int cm)
{
    const int V = 16 / (int)sizeof(T);
    const long threads = ((long)a.nx + V - 1) / V, chunks = ((long)a.hi - a.lo + h - 1) / h;
    long gy = ((long)a.ny + R - 1) / R, gz = chunks;
    if (gy > gy_cap) gy = gy_cap;
    if (gz > gz_cap) gz = gz_cap;
    blockDim = {(unsigned)bx, 1, 1};
    gridDim = {(unsigned)((threads + bx - 1) / bx), (unsigned)gy, (unsigned)gz};
    if (cm) gridDim = {gridDim.x, (unsigned)gz, (unsigned)gy}; /* chunk-major, as go_tuned_r */
    /* the 32 lanes (fibers) walk the same warps in the same order, in step at each shuffle */
    emu_run_warp([&](int l) {
        for (unsigned bz = 0; bz < gridDim.z; bz++)
            for (unsigned by = 0; by < gridDim.y; by++)
                for (unsigned bxi = 0; bxi < gridDim.x; bxi++)
                    for (int w0 = 0; w0 < bx; w0 += 32) {
                        threadIdx = emu_dim3{(unsigned)(w0 + l), 0, 0};
                        blockIdx = emu_dim3{bxi, by, bz};
                        hr_tuned3d_body<T, 16 / sizeof(T), R, W, ZZ>(a, h, cm);
                    }
    });
}

template <typename T, bool W, bool ZZ>
static void emu_r(const hr_gargs<T> &a, int R, int bx, int h, long gy_cap, long gz_cap, int cm)
{
    switch (R) {
    case 1: emu_launch<T, 1, W, ZZ>(a, bx, h, gy_cap, gz_cap, cm); break;
    case 2: emu_launch<T, 2, W, ZZ>(a, bx, h, gy_cap, gz_cap, cm); break;
    case 4: emu_launch<T, 4, W, ZZ>(a, bx, h, gy_cap, gz_cap, cm); break;
    default: emu_launch<T, 8, W, ZZ>(a, bx, h, gy_cap, gz_cap, cm); break;
    }
}

template <typename T>
static int run_case(int nx, int ny, int nz, int R, int zz, int bx, int h, double omega, int rhs, long cap)
{
    hr_grid_layout l;
    hr_layout_init(&l, 3, nx, ny, nz, sizeof(T));
    const size_t n = l.count + l.pitch;
    std::vector<T> a(n, (T)0), b(n, (T)0), f(n, (T)0);
    T *ua = a.data() + l.offset, *ub = b.data() + l.offset, *fh = f.data() + l.offset;
    for (int k = 0; k <= nz + 1; k++)
        for (int i = 0; i <= ny + 1; i++)
            for (int j = 0; j <= nx + 1; j++) {
                const size_t x = (size_t)k * l.plane + (size_t)i * l.pitch + (size_t)j;
                ua[x] = (T)std::sin(0.3 * i + 0.17 * j * j + 0.71 * k);
                fh[x] = (T)(0.001 * ((i * 7 + j * 13 + k * 5) % 17));
            }
    hr_gargs<T> g;
    g.u = ua;
    g.un = ub;
    g.hf = rhs == 2 ? fh : nullptr;
    g.pitch = l.pitch;
    g.plane = l.plane;
    g.n = g.nx = nx;
    g.ny = ny;
    g.nz = nz;
    g.lo = 1;
    g.hi = nz + 1;
    g.sp.hf = nullptr;
    g.sp.spike_i = rhs == 1 ? HR_SPIKE_INDEX(ny) : -1;
    g.sp.spike_j = HR_SPIKE_INDEX(nx);
    g.sp.spike_k = HR_SPIKE_INDEX(nz);
    g.c0 = (T)(1.0 - omega);
    g.c1 = (T)omega;
    const bool w = omega != 1.0;
    if (w && zz)
        emu_r<T, true, true>(g, R, bx, h, cap, cap, zz == 2);
    else if (w)
        emu_r<T, true, false>(g, R, bx, h, cap, cap, 0);
    else if (zz)
        emu_r<T, false, true>(g, R, bx, h, cap, cap, zz == 2);
    else
        emu_r<T, false, false>(g, R, bx, h, cap, cap, 0);
    for (int k = 1; k <= nz; k++)
        for (int i = 1; i <= ny; i++)
            for (int j = 1; j <= nx; j++) {
                const size_t x = (size_t)k * l.plane + (size_t)i * l.pitch + (size_t)j;
                const T *c = ua + x;
                const T want = w ? hr_point7<T, true>(c[-1], c[1], c[-(ptrdiff_t)l.pitch], c[l.pitch],
                                                      c[-(ptrdiff_t)l.plane], c[l.plane], c[0], g.hf, x, i, j,
                                                      k, g.sp, g.c0, g.c1)
                                 : hr_point7<T, false>(c[-1], c[1], c[-(ptrdiff_t)l.pitch], c[l.pitch],
                                                       c[-(ptrdiff_t)l.plane], c[l.plane], c[0], g.hf, x, i,
                                                       j, k, g.sp, g.c0, g.c1);
                if (std::memcmp(&want, &ub[x], sizeof(T)) != 0) {
                    std::printf(
                        "MISMATCH %s %dx%dx%d R %d zz %d bx %d h %d omega %g rhs %d cap %ld: (%d,%d,%d) "
                        "%.17g vs %.17g\n",
                        sizeof(T) == 8 ? "double" : "single", nx, ny, nz, R, zz, bx, h, omega, rhs, cap, i, j,
                        k, (double)ub[x], (double)want);
                    return 1;
                }
            }
    return 0;
}

int main()
{
    const int ext[][3] = {{1, 1, 1}, {2, 3, 2}, {17, 9, 33}, {1, 64, 5}, {40, 7, 20}, {9, 5, 50}};
    /* {R, zig-zag (2: chunk-major too), h} */
    const int shapes[][3] = {{1, 0, 1},  {2, 1, 3}, {4, 1, 16}, {8, 1, 5}, {1, 1, 2},
                             {2, 1, 64}, {8, 0, 7}, {2, 2, 3},  {8, 2, 4}, {1, 2, 1}};
    int cases = 0;
    for (const auto &z : ext)
        for (const auto &s : shapes)
            for (int rhs = 0; rhs < 3; rhs++) {
                const double omega = rhs == 2 ? 1.3 : 1.0;
                const long cap = cases % 4 == 0 ? 2 : 65535;
                const int bx = cases % 3 == 1 ? 64 : 32;
                if (run_case<float>(z[0], z[1], z[2], s[0], s[1], bx, s[2], omega, rhs, cap)) return 1;
                if (run_case<double>(z[0], z[1], z[2], s[0], s[1], bx, s[2], omega, rhs, cap)) return 1;
                cases += 2;
            }
    std::printf("tuned3d_emu: %d cases bitwise equal to the plain loop\n", cases);
    return 0;
}
