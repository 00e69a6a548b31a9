/*
 * A sequential CPU emulation of the CUDA runtime pieces the multigrid GPU backend uses, so
 * its kernels and recorder run (and are checked bitwise against the CPU backend) on a
 * machine without a GPU: test_mg_gpu_emulated. Kernels run block by block, the threads of a
 * block one after the other (highest index first); that is exact for kernels whose threads
 * do not exchange data, and for the one-block kernel run with one thread. Graphs record
 * the launches and replay them. Not a CUDA implementation: races and barriers are not
 * modelled (the real device tests are test_mg_gpu and cli_mg_gpu, label gpu).
 */
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>
using std::min;
using std::max;
using std::sqrt;

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost };
enum { cudaStreamNonBlocking = 1, cudaStreamCaptureModeThreadLocal = 1 };
struct emu_graph {
    std::vector<std::function<void()>> k;
};
typedef emu_graph *cudaGraph_t;
typedef emu_graph *cudaGraphExec_t;
typedef int *cudaStream_t;
#define cudaStreamLegacy ((cudaStream_t)0x1) /* the legacy default stream: every call here is synchronous */
extern thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;
extern emu_graph *emu_capturing;
#define __device__
#define __global__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
inline void __syncthreads() {}
inline void __threadfence() {}
#define CUDART_CB
inline const char *cudaGetErrorName(cudaError_t) { return "emulated"; }
inline const char *cudaGetErrorString(cudaError_t) { return "emulated"; }
inline cudaError_t cudaGetLastError() { return 0; }
inline cudaError_t cudaGetDeviceCount(int *c) { *c = 1; return 0; }
inline cudaError_t cudaSetDevice(int) { return 0; }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, int) { *s = (int *)malloc(sizeof(int)); return 0; }
inline cudaError_t cudaStreamDestroy(cudaStream_t s) { free(s); return 0; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return 0; }
/* every call completes before it returns: an event is always reached */
typedef int *cudaEvent_t;
enum { cudaEventDisableTiming = 2 };
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, int) { *e = (int *)malloc(sizeof(int)); return *e ? 0 : cudaErrorMemoryAllocation; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { free(e); return 0; }
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return 0; }
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return 0; }
/* fresh memory is garbage (0x7f bytes), as on a device */
inline cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = aligned_alloc(256, (n + 255) / 256 * 256);
    if (!*p) return cudaErrorMemoryAllocation;
    memset(*p, 0x7f, n);
    return 0;
}
inline cudaError_t cudaMallocHost(void **p, size_t n) { *p = malloc(n); return *p ? 0 : cudaErrorMemoryAllocation; }
inline cudaError_t cudaFree(void *p) { free(p); return 0; }
inline cudaError_t cudaFreeHost(void *p) { free(p); return 0; }
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) { memcpy(d, s, n); return 0; }
/* captured copies and host functions run when the graph is replayed */
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t)
{
    if (emu_capturing)
        emu_capturing->k.push_back([=]() { memcpy(d, s, n); });
    else
        memcpy(d, s, n);
    return 0;
}
typedef void (*cudaHostFn_t)(void *);
inline cudaError_t cudaLaunchHostFunc(cudaStream_t, cudaHostFn_t fn, void *user)
{
    if (emu_capturing)
        emu_capturing->k.push_back([=]() { fn(user); });
    else
        fn(user);
    return 0;
}
inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t) { memset(d, v, n); return 0; }
inline cudaError_t cudaStreamBeginCapture(cudaStream_t, int) { emu_capturing = new emu_graph; return 0; }
inline cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t *g)
{
    *g = emu_capturing;
    emu_capturing = nullptr;
    return 0;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, int) { *e = new emu_graph(*g); return 0; }
inline cudaError_t cudaGraphDestroy(cudaGraph_t g) { delete g; return 0; }
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t g) { delete g; return 0; }
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t g, cudaStream_t)
{
    for (auto &f : g->k)
        f();
    return 0;
}
inline void emu_run(dim3 g, dim3 b, const std::function<void()> &f)
{
    gridDim = g;
    blockDim = b;
    for (unsigned z = 0; z < g.z; z++)
        for (unsigned y = 0; y < g.y; y++)
            for (unsigned x = 0; x < g.x; x++) {
                blockIdx = dim3(x, y, z);
                for (int tz = (int)b.z - 1; tz >= 0; tz--)
                    for (int ty = (int)b.y - 1; ty >= 0; ty--)
                        for (int tx = (int)b.x - 1; tx >= 0; tx--) {
                            threadIdx = dim3(tx, ty, tz);
                            f();
                        }
            }
}
/* Kernels whose lanes exchange values (warp shuffles): each block's warps one after another,
 * a warp's 32 lanes as fibers in lock step at the shuffles (tests/runtime/cuda/emu_warp.h). */
inline dim3 emu_lane_tid[32], emu_lane_bid[32];
#define EMU_WARP_OWN_INDEX
#define EMU_WARP_RESUME(l) (threadIdx = emu_lane_tid[l], blockIdx = emu_lane_bid[l])
#include "../../../runtime/cuda/emu_warp.h"
inline void emu_run_warps(dim3 g, dim3 b, const std::function<void()> &f)
{
    gridDim = g;
    blockDim = b;
    const unsigned threads = b.x * b.y * b.z;
    emu_run_warp([&](int l) {
        for (unsigned z = 0; z < g.z; z++)
            for (unsigned y = 0; y < g.y; y++)
                for (unsigned x = 0; x < g.x; x++)
                    for (unsigned w0 = 0; w0 < threads; w0 += 32) {
                        emu_lane_tid[l] = dim3(w0 + (unsigned)l, 0, 0);
                        emu_lane_bid[l] = dim3(x, y, z);
                        EMU_WARP_RESUME(l);
                        f();
                    }
    });
}
inline void emu_launch_warps(dim3 g, dim3 b, std::function<void()> f)
{
    if (emu_capturing)
        emu_capturing->k.push_back([=]() { emu_run_warps(g, b, f); });
    else
        emu_run_warps(g, b, f);
}
inline void emu_launch(dim3 g, dim3 b, std::function<void()> f)
{
    if (emu_capturing)
        emu_capturing->k.push_back([=]() { emu_run(g, b, f); });
    else
        emu_run(g, b, f);
}
