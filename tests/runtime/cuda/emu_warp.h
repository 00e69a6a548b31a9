/*
 * A warp on the host, for the kernel emulations (rb_stream_emu.cpp, tuned3d_emu.cpp): the 32
 * lanes are fibers (emu_fiber.h) of one thread, run round robin; a shuffle writes the lane's
 * value, lets the other 31 lanes write theirs, reads, and lets them read before anyone
 * writes again. Lanes must all reach the same shuffles (the kernels' shuffles are in
 * warp-uniform control flow). threadIdx / blockIdx are per lane. Also used by the multigrid
 * emulation (tests/methods/mg/emu/cuda_runtime.h) for its warp-marching kernel.
 */
#ifndef HR_EMU_WARP_H
#define HR_EMU_WARP_H

#include <functional>

#include "emu_fiber.h"

/* EMU_WARP_OWN_INDEX: the including emulation keeps threadIdx, blockIdx, blockDim and gridDim
 * itself, and EMU_WARP_RESUME(lane) puts a lane's indices back when it runs again. */
#ifndef EMU_WARP_OWN_INDEX
struct emu_dim3 {
    unsigned x, y, z;
};
#endif
#ifndef EMU_WARP_RESUME
#define EMU_WARP_RESUME(lane) ((void)(lane))
#endif

struct emu_warp_state {
    emu_fiber main, lane[32];
#ifndef EMU_WARP_OWN_INDEX
    emu_dim3 tid[32], bid[32];
#endif
    double slot[32];
    int cur;
    std::function<void(int)> body;
};
static emu_warp_state emu_w;
#ifndef EMU_WARP_OWN_INDEX
static emu_dim3 blockDim, gridDim;
#define threadIdx (emu_w.tid[emu_w.cur])
#define blockIdx  (emu_w.bid[emu_w.cur])
#endif

static void emu_yield()
{
    const int l = emu_w.cur, n = (l + 1) & 31;
    emu_w.cur = n;
    emu_fiber_switch(emu_w.lane[l], emu_w.lane[n]);
    EMU_WARP_RESUME(l);
}

static void emu_lane_entry(int l)
{
    emu_w.body(l);
    emu_w.cur = l + 1; /* the next lane (all end in the same round); after lane 31, main */
    emu_fiber_exit(l < 31 ? emu_w.lane[l + 1] : emu_w.main);
}

/* Runs body(lane) on the 32 lanes of one warp (the body walks its warps itself). */
static void emu_run_warp(std::function<void(int)> body)
{
    emu_w.body = std::move(body);
    for (int l = 0; l < 32; l++)
        emu_fiber_prepare(emu_w.lane[l], 1 << 18, emu_lane_entry, l);
    emu_fiber_host(emu_w.main);
    emu_w.cur = 0;
    emu_fiber_switch(emu_w.main, emu_w.lane[0]);
}

template <typename T> static T emu_shfl(T v, int src, bool ok)
{
    const int l = emu_w.cur;
    emu_w.slot[l] = (double)v;
    emu_yield(); /* back here after all lanes wrote */
    const T r = ok ? (T)emu_w.slot[src] : v;
    emu_yield(); /* back here after all lanes read */
    (void)l;
    return r;
}
template <typename T> static T __shfl_up_sync(unsigned, T v, int d)
{
    const int l = emu_w.cur;
    return emu_shfl(v, l - d, l - d >= 0);
}
template <typename T> static T __shfl_down_sync(unsigned, T v, int d)
{
    const int l = emu_w.cur;
    return emu_shfl(v, l + d, l + d <= 31);
}

#endif
