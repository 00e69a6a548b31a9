/* The GPU entry points of a build without CUDA: there is no device. */
#include "runtime/cuda/cuda_api.h"
#include <stdio.h>

#include "hetrelax/hetrelax.h"

int hri_cuda_device_count(void)
{
    return 0;
}

hr_status hri_cuda_prepare(int ordinal)
{
    (void)ordinal;
    return HR_ERR_NO_DEVICE;
}

size_t hri_cuda_l2_bytes(int ordinal)
{
    (void)ordinal;
    return 0;
}

hr_status hri_cuda_device_memory(int ordinal, size_t *free_bytes, size_t *total_bytes)
{
    (void)ordinal;
    if (free_bytes) *free_bytes = 0;
    if (total_bytes) *total_bytes = 0;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_cuda_check_array(int ordinal, const void *ptr, char *why, size_t why_size)
{
    (void)ordinal, (void)ptr;
    if (why && why_size) snprintf(why, why_size, "this build has no CUDA support");
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_cuda_wait_stream(int ordinal, void *stream, char *why, size_t why_size)
{
    (void)ordinal, (void)stream;
    if (why && why_size) snprintf(why, why_size, "this build has no CUDA support");
    return HR_ERR_UNSUPPORTED;
}

hr_status hr_gpu_name(int ordinal, char *buf, size_t size)
{
    (void)ordinal;
    if (buf && size) buf[0] = '\0';
    return HR_ERR_UNSUPPORTED;
}

hr_status hr_measure_device_bandwidth(int ordinal, size_t bytes, int repeats, double *gbps)
{
    (void)ordinal;
    (void)bytes;
    (void)repeats;
    if (gbps) *gbps = 0.0;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_cuda_tune(const hr_options *o, long sweeps, const char *cache_path, hr_cuda_tune_result *out,
                       char *err, size_t err_size)
{
    (void)o, (void)sweeps, (void)cache_path, (void)out;
    if (err && err_size) snprintf(err, err_size, "this build has no CUDA support");
    return HR_ERR_UNSUPPORTED;
}

/* The CUDA IPC transport (cuda/transport_ipc.h): none without CUDA. */
#include "parallel/transport/cuda/transport_ipc.h"

int hri_ipc_available(void)
{
    return 0;
}

int hri_ipc_peer_direct(int device, int peer)
{
    (void)device;
    (void)peer;
    return -1;
}

hr_status hri_transport_ipc_create(hr_transport *host, int device, hr_transport **out, char *err, size_t es)
{
    (void)host;
    (void)device;
    if (out) *out = NULL;
    if (err && es) snprintf(err, es, "ipc: this build has no CUDA");
    return HR_ERR_UNSUPPORTED;
}

/* The hybrid GPU placement (parallel/hybrid/place.h): none, but a second CPU placement
 * (options.split_second = HR_SPLIT_CPU) still runs the whole engine. */
#include "parallel/hybrid/place.h"

hr_status hri_place_gpu_create(const hr_place_spec *spec, hr_place **out)
{
    *out = NULL;
    if (spec->s) hri_solver_set_error(spec->s, "backend: hybrid needs a CUDA device (built without CUDA)");
    return HR_ERR_NO_DEVICE;
}

hr_status hri_place_gpu_roundtrip(int device, size_t bytes, int repeats, double *seconds)
{
    (void)device;
    (void)bytes;
    (void)repeats;
    *seconds = 0.0;
    return HR_ERR_NO_DEVICE;
}

/* ---- the general-problem engine's CUDA backend (methods/stencil/cuda) */
#include "methods/stencil/stencil_kernels.h"

const hr_st_backend *hri_st_cuda_backend(void)
{
    return NULL;
}
