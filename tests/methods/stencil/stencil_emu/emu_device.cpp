/* The device the emulation (cuda_runtime.h here) stands for: one GPU. They replace the
 * library's answers of a build without CUDA (runtime/nocuda.c; the test links with
 * --allow-multiple-definition, these first). */
#include <stdio.h>

#include "hetrelax/hetrelax.h"

extern "C" int hri_cuda_device_count(void)
{
    return 1;
}

extern "C" hr_status hr_gpu_name(int ordinal, char *buf, size_t size)
{
    if (ordinal != 0) return HR_ERR_NO_DEVICE;
    if (buf && size) snprintf(buf, size, "%s", "emulated GPU (host)");
    return HR_OK;
}
