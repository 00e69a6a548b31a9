/* Device plumbing: device count and name, the copy-bandwidth probe, CUDA error text. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/cuda/cuda_api.h"
#include "runtime/cuda/gpu_internal.cuh"

extern "C" int hri_cuda_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver or no device: not sticky, clear it */
        return 0;
    }
    return count;
}

extern "C" hr_status hri_cuda_prepare(int ordinal)
{
    if (ordinal < 0 || ordinal >= hri_cuda_device_count()) return HR_ERR_NO_DEVICE;
    if (cudaSetDevice(ordinal) != cudaSuccess || cudaFree(0) != cudaSuccess) {
        (void)cudaGetLastError();
        return HR_ERR_DEVICE;
    }
    return HR_OK;
}

extern "C" hr_status hri_cuda_check_array(int ordinal, const void *ptr, char *why, size_t why_size)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, why_size, "not a pointer the CUDA runtime knows");
        return HR_ERR_INVALID_ARG;
    }
    if (a.type == cudaMemoryTypeManaged) return HR_OK;
    if (a.type != cudaMemoryTypeDevice) {
        snprintf(why, why_size, "not device memory (%s memory): the arrays must be in GPU %d's memory",
                 a.type == cudaMemoryTypeHost ? "pinned host" : "host", ordinal);
        return HR_ERR_INVALID_ARG;
    }
    if (a.device != ordinal) {
        snprintf(why, why_size, "memory of GPU %d, the handle runs on GPU %d", a.device, ordinal);
        return HR_ERR_INVALID_ARG;
    }
    return HR_OK;
}

extern "C" hr_status hri_cuda_wait_stream(int ordinal, void *stream, char *why, size_t why_size)
{
    cudaError_t e = cudaSetDevice(ordinal); /* the legacy stream is the current device's */
    if (e == cudaSuccess) e = cudaStreamSynchronize((cudaStream_t)stream);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, why_size, "cudaStreamSynchronize failed: %s", cudaGetErrorString(e));
        return HR_ERR_DEVICE;
    }
    return HR_OK;
}

extern "C" size_t hri_cuda_l2_bytes(int ordinal)
{
    if (ordinal < 0 || ordinal >= hri_cuda_device_count()) return 0;
    int bytes = 0;
    if (cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, ordinal) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return bytes > 0 ? (size_t)bytes : 0;
}

extern "C" hr_status hri_cuda_device_memory(int ordinal, size_t *free_bytes, size_t *total_bytes)
{
    size_t f = 0, t = 0;
    if (free_bytes) *free_bytes = 0;
    if (total_bytes) *total_bytes = 0;
    if (ordinal < 0 || ordinal >= hri_cuda_device_count()) return HR_ERR_NO_DEVICE;
    int prev = 0;
    if (cudaGetDevice(&prev) != cudaSuccess) prev = ordinal;
    /* cudaMemGetInfo answers for the current device: ask ordinal's, then restore */
    if (cudaSetDevice(ordinal) != cudaSuccess || cudaMemGetInfo(&f, &t) != cudaSuccess) {
        (void)cudaGetLastError();
        cudaSetDevice(prev);
        return HR_ERR_DEVICE;
    }
    cudaSetDevice(prev);
    if (free_bytes) *free_bytes = f;
    if (total_bytes) *total_bytes = t;
    return HR_OK;
}

extern "C" hr_status hr_gpu_name(int ordinal, char *buf, size_t size)
{
    if (buf && size) buf[0] = '\0';
    if (ordinal < 0 || ordinal >= hri_cuda_device_count()) return HR_ERR_NO_DEVICE;
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, ordinal) != cudaSuccess) return HR_ERR_DEVICE;
    if (buf && size) snprintf(buf, size, "%s", p.name);
    return HR_OK;
}

hr_status hri_cuda_fail(hr_solver *s, cudaError_t e, const char *call, const char *file, int line)
{
    const char *base = file;
    for (const char *p = file; *p; p++)
        if (*p == '/') base = p + 1;
    if (s)
        hri_solver_set_error(s, "%s failed at %s:%d: %s: %s", call, base, line, cudaGetErrorName(e),
                            cudaGetErrorString(e));
    (void)cudaGetLastError(); /* clear a non-sticky error so later calls report their own */
    switch (e) {
    case cudaErrorMemoryAllocation: return HR_ERR_NO_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice: return HR_ERR_NO_DEVICE;
    /* a block shape the kernel's registers or shared memory cannot support: bad input */
    case cudaErrorLaunchOutOfResources:
    case cudaErrorInvalidConfiguration: return HR_ERR_INVALID_ARG;
    default: return HR_ERR_DEVICE;
    }
}

/* 16-byte copy, one vector per thread: the simplest kernel that streams at full rate. */
__global__ void hri_copy16(const int4 *__restrict__ a, int4 *__restrict__ b, size_t n16)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n16) b[i] = a[i];
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

#define BW_TRY(call)                                                                                         \
    do {                                                                                                     \
        if ((call) != cudaSuccess) {                                                                         \
            (void)cudaGetLastError();                                                                        \
            st = HR_ERR_DEVICE;                                                                              \
            goto done;                                                                                       \
        }                                                                                                    \
    } while (0)

/* Device-to-device copy rate: bytes read + bytes written per second, 1e9 scale. Two
 * warm-up copies are discarded; the median of `repeats` timed copies is returned. */
extern "C" hr_status hr_measure_device_bandwidth(int ordinal, size_t bytes, int repeats, double *gbps)
{
    if (gbps) *gbps = 0.0;
    if (!gbps || repeats < 0 || repeats > 1000) return HR_ERR_INVALID_ARG;
    if (ordinal < 0 || ordinal >= hri_cuda_device_count()) return HR_ERR_NO_DEVICE;
    if (repeats == 0) repeats = 7;
    if (bytes == 0) bytes = (size_t)512 << 20; /* far beyond any L2 (50-60 MB on Hopper) */
    bytes = (bytes + 15) / 16 * 16;
    hr_status st = HR_OK;
    int4 *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double *ms = (double *)calloc((size_t)repeats, sizeof *ms);
    if (!ms) return HR_ERR_NO_MEMORY;
    const size_t n16 = bytes / 16;
    const unsigned threads = 256, blocks = (unsigned)((n16 + threads - 1) / threads);
    BW_TRY(cudaSetDevice(ordinal));
    if (cudaMalloc((void **)&a, bytes) != cudaSuccess || cudaMalloc((void **)&b, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        st = HR_ERR_NO_MEMORY;
        goto done;
    }
    BW_TRY(cudaMemset(a, 0x3c, bytes)); /* not zeros: 0x3c3c3c3c is an ordinary float */
    BW_TRY(cudaEventCreate(&e0));
    BW_TRY(cudaEventCreate(&e1));
    for (int r = -2; r < repeats; r++) {
        BW_TRY(cudaEventRecord(e0));
        hri_copy16<<<blocks, threads>>>(a, b, n16);
        BW_TRY(HR_LAUNCHED());
        BW_TRY(cudaEventRecord(e1));
        BW_TRY(cudaEventSynchronize(e1));
        float t = 0.0f;
        BW_TRY(cudaEventElapsedTime(&t, e0, e1));
        if (r >= 0) ms[r] = t;
    }
    qsort(ms, (size_t)repeats, sizeof *ms, cmp_double);
    {
        double med = repeats % 2 ? ms[repeats / 2] : 0.5 * (ms[repeats / 2 - 1] + ms[repeats / 2]);
        *gbps = med > 0 ? 2.0 * (double)bytes / (med * 1e-3) * 1e-9 : 0.0;
    }
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    free(ms);
    return st;
}
