/*
 * A host emulation of the CUDA runtime for the general-problem engine's CUDA backend
 * (src/methods/stencil/cuda, rewritten by convert.py), so test_gpu_general runs its kernels
 * on a machine without a GPU (test_gpu_general_emulated).
 *
 * Device memory is host memory (fresh allocations hold garbage, as on a device); every call
 * is synchronous. A kernel runs block by block. A block's threads are fibers
 * (tests/runtime/cuda/emu_fiber.h) run round robin, so __syncthreads and the warp shuffles
 * have their CUDA meaning: a shuffle waits until the 32 lanes of its warp have written, and
 * again until they have read. A block whose threads wait for one another forever (a barrier
 * or shuffle that some thread of the block or the warp never reaches, e.g. after an early
 * return) aborts the program: the real device's undefined behaviour made loud. A launch site
 * whose first run used no barrier or shuffle runs its threads one after the other afterwards
 * (faster); a synchronisation there would abort too. Launch limits are checked (1024 threads
 * a block, 65535 blocks along y and z). Not modelled: races between blocks or threads without
 * synchronisation (they run one at a time), caches (__ldg reads memory).
 */
#ifndef HR_STENCIL_EMU_CUDA_RUNTIME_H
#define HR_STENCIL_EMU_CUDA_RUNTIME_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "../../../runtime/cuda/emu_fiber.h"

using std::max;
using std::min;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__      static
#define __launch_bounds__(...)
#define __restrict__

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};

typedef enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevice = 101,
    cudaErrorUnknown = 999
} cudaError_t;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost,
    cudaMemcpyHostToDevice,
    cudaMemcpyDeviceToHost,
    cudaMemcpyDeviceToDevice
};
#define cudaStreamNonBlocking 0x1u
typedef int *cudaStream_t;

/* ------------------------------------------------------------------ the block's fibers */

struct emu_site {
    int state = 0; /* 0: not run yet; 1: never synchronises (threads one after the other); 2: fibers */
};

struct emu_thread {
    emu_fiber fiber;
    dim3 tid;
    int done;
};

struct emu_block {
    std::vector<emu_thread> th;
    emu_fiber sched;
    int cur = 0, n = 0;
    bool fibers = false, synced = false;
    long progress = 0;
    int bar_count = 0, bar_gen = 0;
    std::vector<int> warp_count, warp_gen;
    std::vector<double> slot;
    const std::function<void()> *body = nullptr;
    dim3 plain_tid;
};

inline emu_block emu_b;
inline dim3 blockIdx, blockDim, gridDim;
inline cudaError_t emu_last_error = cudaSuccess;

inline dim3 &emu_tid()
{
    return emu_b.fibers ? emu_b.th[emu_b.cur].tid : emu_b.plain_tid;
}
#define threadIdx (emu_tid())

[[noreturn]] inline void emu_die(const char *what)
{
    fprintf(stderr, "CUDA emulation: %s (block %u %u %u, thread %u %u %u)\n", what, blockIdx.x, blockIdx.y,
            blockIdx.z, emu_tid().x, emu_tid().y, emu_tid().z);
    abort();
}

inline void emu_yield()
{
    emu_fiber_switch(emu_b.th[emu_b.cur].fiber, emu_b.sched);
}

inline int emu_linear()
{
    const dim3 &t = emu_b.th[emu_b.cur].tid;
    return (int)(t.x + blockDim.x * (t.y + blockDim.y * t.z));
}

inline void emu_sync_point()
{
    if (!emu_b.fibers) emu_die("a kernel first run without synchronising synchronised");
    emu_b.synced = true;
}

inline void __syncthreads()
{
    emu_sync_point();
    const int gen = emu_b.bar_gen;
    emu_b.progress++;
    if (++emu_b.bar_count == emu_b.n) {
        emu_b.bar_count = 0;
        emu_b.bar_gen++;
        return;
    }
    while (emu_b.bar_gen == gen)
        emu_yield();
}

/* Every lane of the caller's warp reaches this point before any goes on. */
inline void emu_warp_wait()
{
    emu_sync_point();
    const int w = emu_linear() / 32, lanes = min(32, emu_b.n - 32 * w), gen = emu_b.warp_gen[w];
    emu_b.progress++;
    if (++emu_b.warp_count[w] == lanes) {
        emu_b.warp_count[w] = 0;
        emu_b.warp_gen[w]++;
        return;
    }
    while (emu_b.warp_gen[w] == gen)
        emu_yield();
}

/* A shuffle: every lane writes v, then reads that of lane + delta (its own v where that lane
 * lies outside the warp). */
template <typename T> inline T emu_shfl(T v, int delta)
{
    emu_sync_point();
    const int l = emu_linear(), lane = l % 32, w = l / 32, lanes = min(32, emu_b.n - 32 * w);
    const int src = lane + delta;
    emu_b.slot[l] = (double)v;
    emu_warp_wait();
    const T r = src >= 0 && src < lanes ? (T)emu_b.slot[32 * w + src] : v;
    emu_warp_wait();
    return r;
}

template <typename T> inline T __shfl_down_sync(unsigned, T v, int d)
{
    return emu_shfl(v, d);
}

template <typename T> inline T __shfl_up_sync(unsigned, T v, int d)
{
    return emu_shfl(v, -d);
}

template <typename T> inline T __ldg(const T *p)
{
    return *p;
}

inline void emu_entry(int i)
{
    (*emu_b.body)();
    emu_b.th[i].done = 1;
    emu_b.progress++;
    emu_fiber_exit(emu_b.sched);
}

inline void emu_run_block(const std::function<void()> &f)
{
    const int n = (int)(blockDim.x * blockDim.y * blockDim.z);
    if (!emu_b.fibers) {
        for (unsigned z = 0; z < blockDim.z; z++)
            for (unsigned y = 0; y < blockDim.y; y++)
                for (unsigned x = 0; x < blockDim.x; x++) {
                    emu_b.plain_tid = dim3(x, y, z);
                    f();
                }
        return;
    }
    emu_b.n = n;
    emu_b.th.reserve(1024); /* a fiber's context points into itself: the threads never move */
    if ((int)emu_b.th.size() < n) emu_b.th.resize(n);
    emu_b.warp_count.assign((n + 31) / 32, 0);
    emu_b.warp_gen.assign((n + 31) / 32, 0);
    emu_b.slot.assign(n, 0.0);
    emu_b.bar_count = 0;
    emu_b.body = &f;
    emu_fiber_host(emu_b.sched);
    for (int i = 0; i < n; i++) {
        emu_thread &t = emu_b.th[i];
        emu_fiber_prepare(t.fiber, 1 << 17, emu_entry, i);
        t.tid = dim3(i % blockDim.x, (i / blockDim.x) % blockDim.y, i / (blockDim.x * blockDim.y));
        t.done = 0;
    }
    for (;;) {
        const long before = emu_b.progress;
        bool all = true;
        for (int i = 0; i < n; i++) {
            if (emu_b.th[i].done) continue;
            all = false;
            emu_b.cur = i;
            emu_fiber_switch(emu_b.sched, emu_b.th[i].fiber);
        }
        if (all) break;
        if (emu_b.progress == before)
            emu_die("threads wait for a barrier or a shuffle that others never reach");
    }
}

inline void emu_launch(emu_site &site, dim3 g, dim3 b, const std::function<void()> &f)
{
    if (b.x * b.y * b.z == 0 || b.x * b.y * b.z > 1024 || b.z > 64 || g.x == 0 || g.y == 0 || g.z == 0 ||
        g.y > 65535 || g.z > 65535 || g.x > 2147483647u) {
        emu_last_error = cudaErrorInvalidConfiguration;
        return;
    }
    gridDim = g;
    blockDim = b;
    emu_b.fibers = site.state != 1;
    emu_b.synced = false;
    for (unsigned z = 0; z < g.z; z++)
        for (unsigned y = 0; y < g.y; y++)
            for (unsigned x = 0; x < g.x; x++) {
                blockIdx = dim3(x, y, z);
                emu_run_block(f);
            }
    if (site.state == 0) site.state = emu_b.synced ? 2 : 1;
    emu_b.fibers = false;
}

/* ------------------------------------------------------------------ the runtime calls */

inline const char *cudaGetErrorName(cudaError_t)
{
    return "emulated";
}
inline const char *cudaGetErrorString(cudaError_t)
{
    return "emulated CUDA error";
}
inline cudaError_t cudaGetLastError()
{
    const cudaError_t e = emu_last_error;
    emu_last_error = cudaSuccess;
    return e;
}
inline cudaError_t cudaGetDeviceCount(int *c)
{
    *c = 1;
    return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}
/* the launch-shape queries: a small device (the kernels' results do not depend on them) */
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr, int)
{
    *v = 4;
    return cudaSuccess;
}
template <class K> inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, K, int, size_t)
{
    *n = 2;
    return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int d)
{
    return d == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned)
{
    *s = (int *)malloc(sizeof(int));
    return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    free(s);
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetStreamPriorityRange(int *lo, int *hi)
{
    *lo = 0, *hi = 0;
    return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned f, int)
{
    return cudaStreamCreateWithFlags(s, f);
}
/* events: the emulation runs every launch at once, in order, so there is nothing to wait for */
#define cudaEventDisableTiming 0x2u
typedef int *cudaEvent_t;
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned)
{
    *e = (int *)malloc(sizeof(int));
    return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t)
{
    return cudaSuccess;
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned)
{
    return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t)
{
    return cudaSuccess;
}
/* fresh memory is garbage (0x7f bytes), as on a device */
inline cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = aligned_alloc(256, (n + 255) / 256 * 256);
    if (!*p) return cudaErrorMemoryAllocation;
    memset(*p, 0x7f, n);
    return cudaSuccess;
}
inline cudaError_t cudaMallocHost(void **p, size_t n)
{
    *p = malloc(n);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
inline cudaError_t cudaFreeHost(void *p)
{
    free(p);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t)
{
    memmove(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t)
{
    memset(d, v, n);
    return cudaSuccess;
}

#endif
