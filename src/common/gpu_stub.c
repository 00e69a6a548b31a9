/* The GPU entry points of a build without CUDA: there is no device. */
#include "cuda/cuda_api.h"
#include "hetrelax/hetrelax.h"

int hr_cuda_device_count(void)
{
    return 0;
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
