/* What the C side asks of the CUDA side. Without CUDA, src/runtime/nocuda.c answers. */
#ifndef HR_CUDA_API_H
#define HR_CUDA_API_H

#include "core/internal_api.h"
#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of usable CUDA devices (0 without CUDA, without a driver, or without a GPU). */
HR_INTERNAL_API int hri_cuda_device_count(void);

/* Creates the CUDA context of device `ordinal` on the calling thread's process (the runtime's
 * primary context, which every later call on that device shares): the command does it on a
 * thread of its own while it reads input files, so that the set-up does not wait for it.
 * HR_ERR_NO_DEVICE without the device (or without CUDA). */
hr_status hri_cuda_prepare(int ordinal);

/* Bytes of L2 cache of GPU `ordinal` (0 without CUDA or such a device): the reports call a
 * working set that fits cache-resident. */
size_t hri_cuda_l2_bytes(int ordinal);

/* Free and total memory of device `ordinal` (HR_ERR_UNSUPPORTED without CUDA,
 * HR_ERR_NO_DEVICE for a device that is not there). */
hr_status hri_cuda_device_memory(int ordinal, size_t *free_bytes, size_t *total_bytes);

/* A caller's array for GPU `ordinal` (hr_grid_solver_solve_device): HR_OK when `ptr` is
 * device memory of that GPU or managed memory; else HR_ERR_INVALID_ARG (HR_ERR_UNSUPPORTED
 * without CUDA) and the reason in why. */
hr_status hri_cuda_check_array(int ordinal, const void *ptr, char *why, size_t why_size);

/* Waits for the work queued so far on the caller's cudaStream_t `stream` of GPU `ordinal`
 * (NULL: that GPU's legacy default stream); HR_ERR_DEVICE with the reason in why when that
 * fails. */
hr_status hri_cuda_wait_stream(int ordinal, void *stream, char *why, size_t why_size);

/* One tuning outcome: the best block/tile shape of a GPU kernel for a size and precision. */
typedef struct hr_cuda_tune_result {
    int bx, by, h;        /* the shape (meaning per kernel: docs/gpu.md) */
    double best_gbps;     /* under the driver's byte model, median of repeats */
    double default_gbps;  /* the built-in default shape, same measurement */
    int candidates;       /* shapes that were valid and measured */
    char cache_path[512]; /* where the result was stored ("" when not stored) */
} hr_cuda_tune_result;

/* Measures every candidate shape of GPU kernel `o->kernel` for o's size, precision,
 * alpha and device (`sweeps` sweeps per timing, median of 3), checks that every
 * deterministic candidate gives a bitwise-equal grid, and appends the best to the
 * cache file `cache_path` (NULL: o->tuning.tune_file, else gpu-tune.txt in
 * o->tuning.cache_dir, else ~/.cache/hetrelax/gpu-tune.txt).
 * Later solver runs with the same device, kernel and precision use the entry with
 * the nearest n. Writes a message into err on failure. */
hr_status hri_cuda_tune(const hr_options *o, long sweeps, const char *cache_path, hr_cuda_tune_result *out,
                       char *err, size_t err_size);

#ifdef __cplusplus
}
#endif
#endif
