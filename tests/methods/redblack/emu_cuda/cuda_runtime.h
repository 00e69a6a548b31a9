/*
 * A stand-in for the CUDA runtime that lets the red-black GPU host code (src/methods/redblack/cuda/redblack_*)
 * compile with a host C++ compiler and records, instead of running, what it asks of the
 * device: every fill, copy, kernel launch and graph launch with its stream, the memory it
 * reads and writes, the event records and waits, and every host synchronisation. Kernels are
 * never run (their bodies only compile: the device built-ins below are inert). The ordering
 * follows the CUDA documentation, taken at its weakest: the legacy default stream orders
 * blocking streams only, never one created with cudaStreamNonBlocking; cudaMemcpy from
 * pageable memory may return before the device has the data, a device-to-device cudaMemcpy
 * and any cudaMemset return at once; cudaMalloc, cudaFree and cudaHostUnregister wait for
 * nothing. emu_cuda_order.cpp checks that every two accesses to the same bytes (one a write)
 * are ordered (tests/methods/redblack/rb_order_emu.cpp drives it). Built by
 * tests/methods/redblack/rb_order_emu.sh, which rewrites each
 * `kernel<<<grid, block, smem, stream>>>(args)` into emu_launch(...).
 */
#ifndef HR_EMU_CUDA_RUNTIME_H
#define HR_EMU_CUDA_RUNTIME_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <type_traits>

using std::max;
using std::min;

#define __global__
#define __device__
#define __host__
#define __shared__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
/* the kernels compile, never run: inert built-ins */
extern dim3 threadIdx, blockIdx, blockDim, gridDim;
static inline void __syncthreads() {}
template <typename T> static inline T __ldg(const T *p)
{
    return *p;
}
template <typename T> static inline T __shfl_up_sync(unsigned, T v, int)
{
    return v;
}
template <typename T> static inline T __shfl_down_sync(unsigned, T v, int)
{
    return v;
}

enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidDevice = 101,
    cudaErrorPeerAccessAlreadyEnabled = 704,
    cudaErrorUnknown = 999
};
enum cudaMemcpyKind {
    cudaMemcpyHostToHost,
    cudaMemcpyHostToDevice,
    cudaMemcpyDeviceToHost,
    cudaMemcpyDeviceToDevice,
    cudaMemcpyDefault
};
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal,
    cudaStreamCaptureModeThreadLocal,
    cudaStreamCaptureModeRelaxed
};
#define cudaStreamDefault                       0x0u
#define cudaStreamNonBlocking                   0x1u
#define cudaEventDisableTiming                  0x2u
#define cudaHostRegisterDefault                 0x0u
#define cudaGraphInstantiateFlagUseNodePriority 0x8ull

typedef struct emu_stream *cudaStream_t;
typedef struct emu_event *cudaEvent_t;
typedef struct emu_graph *cudaGraph_t;
typedef struct emu_graph *cudaGraphExec_t;

struct cudaDeviceProp {
    char name[256];
    int major, minor, multiProcessorCount;
    size_t totalGlobalMem;
};

/* queries: no ordering */
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int dev);
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest);
cudaError_t cudaDeviceCanAccessPeer(int *can, int dev, int peer);
cudaError_t cudaGetLastError(void);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaGraphDestroy(cudaGraph_t g);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t g);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *out, cudaGraph_t g, unsigned long long flags);

/* the calls that enqueue, synchronise, allocate or free, with the caller's file and line */
cudaError_t emu_cudaSetDevice(const char *f, int l, int dev);
cudaError_t emu_cudaStreamCreateWithFlags(const char *f, int l, cudaStream_t *s, unsigned flags);
cudaError_t emu_cudaStreamCreateWithPriority(const char *f, int l, cudaStream_t *s, unsigned flags, int prio);
cudaError_t emu_cudaStreamDestroy(const char *f, int l, cudaStream_t s);
cudaError_t emu_cudaMalloc(const char *f, int l, void **p, size_t n);
cudaError_t emu_cudaFree(const char *f, int l, void *p);
cudaError_t emu_cudaHostRegister(const char *f, int l, void *p, size_t n, unsigned flags);
cudaError_t emu_cudaHostUnregister(const char *f, int l, void *p);
cudaError_t emu_cudaMemset(const char *f, int l, void *p, int v, size_t n);
cudaError_t emu_cudaMemsetAsync(const char *f, int l, void *p, int v, size_t n, cudaStream_t s);
cudaError_t emu_cudaMemcpy(const char *f, int l, void *dst, const void *src, size_t n, cudaMemcpyKind k);
cudaError_t emu_cudaMemcpyAsync(const char *f, int l, void *dst, const void *src, size_t n, cudaMemcpyKind k,
                                cudaStream_t s);
cudaError_t emu_cudaMemcpyPeerAsync(const char *f, int l, void *dst, int ddev, const void *src, int sdev,
                                    size_t n, cudaStream_t s);
cudaError_t emu_cudaStreamSynchronize(const char *f, int l, cudaStream_t s);
cudaError_t emu_cudaDeviceSynchronize(const char *f, int l);
cudaError_t emu_cudaEventRecord(const char *f, int l, cudaEvent_t e, cudaStream_t s);
cudaError_t emu_cudaStreamWaitEvent(const char *f, int l, cudaStream_t s, cudaEvent_t e, unsigned flags);
cudaError_t emu_cudaDeviceEnablePeerAccess(const char *f, int l, int peer, unsigned flags);
cudaError_t emu_cudaStreamBeginCapture(const char *f, int l, cudaStream_t s, cudaStreamCaptureMode m);
cudaError_t emu_cudaStreamEndCapture(const char *f, int l, cudaStream_t s, cudaGraph_t *g);
cudaError_t emu_cudaGraphLaunch(const char *f, int l, cudaGraphExec_t g, cudaStream_t s);

#define cudaSetDevice(...)                emu_cudaSetDevice(__FILE__, __LINE__, __VA_ARGS__)
#define cudaStreamCreateWithFlags(...)    emu_cudaStreamCreateWithFlags(__FILE__, __LINE__, __VA_ARGS__)
#define cudaStreamCreateWithPriority(...) emu_cudaStreamCreateWithPriority(__FILE__, __LINE__, __VA_ARGS__)
#define cudaStreamDestroy(...)            emu_cudaStreamDestroy(__FILE__, __LINE__, __VA_ARGS__)
#define cudaMalloc(p, n)                  emu_cudaMalloc(__FILE__, __LINE__, (void **)(p), n)
#define cudaFree(...)                     emu_cudaFree(__FILE__, __LINE__, __VA_ARGS__)
#define cudaHostRegister(...)             emu_cudaHostRegister(__FILE__, __LINE__, __VA_ARGS__)
#define cudaHostUnregister(...)           emu_cudaHostUnregister(__FILE__, __LINE__, __VA_ARGS__)
#define cudaMemset(...)                   emu_cudaMemset(__FILE__, __LINE__, __VA_ARGS__)
#define cudaMemsetAsync(...)              emu_cudaMemsetAsync(__FILE__, __LINE__, __VA_ARGS__)
#define cudaMemcpy(...)                   emu_cudaMemcpy(__FILE__, __LINE__, __VA_ARGS__)
#define cudaMemcpyAsync(...)              emu_cudaMemcpyAsync(__FILE__, __LINE__, __VA_ARGS__)
#define cudaMemcpyPeerAsync(...)          emu_cudaMemcpyPeerAsync(__FILE__, __LINE__, __VA_ARGS__)
#define cudaStreamSynchronize(...)        emu_cudaStreamSynchronize(__FILE__, __LINE__, __VA_ARGS__)
#define cudaDeviceSynchronize()           emu_cudaDeviceSynchronize(__FILE__, __LINE__)
#define cudaEventRecord(...)              emu_cudaEventRecord(__FILE__, __LINE__, __VA_ARGS__)
#define cudaStreamWaitEvent(...)          emu_cudaStreamWaitEvent(__FILE__, __LINE__, __VA_ARGS__)
#define cudaDeviceEnablePeerAccess(...)   emu_cudaDeviceEnablePeerAccess(__FILE__, __LINE__, __VA_ARGS__)
#define cudaStreamBeginCapture(...)       emu_cudaStreamBeginCapture(__FILE__, __LINE__, __VA_ARGS__)
#define cudaStreamEndCapture(...)         emu_cudaStreamEndCapture(__FILE__, __LINE__, __VA_ARGS__)
#define cudaGraphLaunch(...)              emu_cudaGraphLaunch(__FILE__, __LINE__, __VA_ARGS__)

/* A kernel launch and the memory it touches: by default every pointer argument its whole
 * allocation, read if it points to const, else read and written (inexact: the rows are not
 * known). rb_stream (the streaming pass of rb-tuned and rb-mgpu) and rb2_copy_kernel are
 * known exactly, row by row (below). */
struct emu_cfg {
    dim3 grid, block;
    size_t smem;
    cudaStream_t st;
};
static inline emu_cfg emu_config(dim3 g, dim3 b, size_t smem = 0, cudaStream_t st = nullptr)
{
    return emu_cfg{g, b, smem, st};
}
void emu_kernel_begin(const char *f, int l, cudaStream_t st);
void emu_kernel_arg(const void *p, bool written);             /* the whole allocation */
void emu_kernel_bytes(const void *p, size_t n, bool written); /* exactly these bytes */
void emu_kernel_end(void);
template <typename P> static inline void emu_arg(P a)
{
    if constexpr (std::is_pointer<P>::value)
        if (a) emu_kernel_arg((const void *)a, !std::is_const<typename std::remove_pointer<P>::type>::value);
}
template <typename... P> static inline void emu_footprint(void (*)(P...), P... a)
{
    (emu_arg<P>(a), ...);
}
/* rb_stream(u, un, hf, g, h, c0, c1, s0, s1): reads rows 0..ny+1 of u (and f), writes rows
 * s0..s1 of un (all interior rows 1..ny when s1 < s0). Not counted: the words a thread loads
 * beyond column nx + 1 or before column 0 (its row's neighbours' bytes, never used). */
template <typename T, typename G>
static inline void emu_footprint(void (*)(const T *, T *, const T *, G, int, T, T, int, int), const T *u,
                                 T *un, const T *hf, G g, int, T, T, int s0, int s1)
{
    if (s1 < s0) {
        s0 = 1;
        s1 = g.ny;
    }
    emu_kernel_bytes(u, (size_t)(g.ny + 2) * g.p * sizeof(T), false);
    if (hf) emu_kernel_bytes(hf, (size_t)(g.ny + 2) * g.p * sizeof(T), false);
    emu_kernel_bytes(un + (size_t)s0 * g.p, (size_t)(s1 - s0 + 1) * g.p * sizeof(T), true);
}
/* rb2_copy_kernel(dst, src, n) */
template <typename T>
static inline void emu_footprint(void (*)(T *, const T *, size_t), T *dst, const T *src, size_t n)
{
    emu_kernel_bytes(src, n * sizeof(T), false);
    emu_kernel_bytes(dst, n * sizeof(T), true);
}
template <typename... P, typename... A>
static inline void emu_launch(const char *f, int l, emu_cfg c, void (*k)(P...), A &&...a)
{
    static_assert(sizeof...(P) == sizeof...(A), "a kernel launch passes every parameter");
    emu_kernel_begin(f, l, c.st);
    emu_footprint(k, (P)a...);
    emu_kernel_end();
}

/* The checker (emu_cuda_order.cpp), for the program that drives the host code. */
void emu_reset(int devices);       /* forget everything; `devices` CUDA devices */
void emu_set_phase(int iterating); /* 1: the calls now enqueue iterations (below) */
void emu_host_access(const char *what, const void *p, size_t n, bool write); /* the host's own */
long emu_check(const char *scenario); /* unordered conflicting pairs (printed), misuses included */
long emu_ops(void);                   /* operations recorded since emu_reset */

#endif
