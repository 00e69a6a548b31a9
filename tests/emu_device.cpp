/* The device the CPU emulations of the CUDA sources stand for (tests/methods/mg/emu,
 * tests/methods/stencil/stencil_emu): one GPU, whose memory is the host's. These replace the
 * library's answers of a build without CUDA (runtime/nocuda.c; the emulated tests link with
 * --allow-multiple-definition, these first), so that hr_grid_solver puts handles on it and
 * takes device arrays there. */
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

/* Device arrays (hr_grid_solver_solve_device): any pointer of the host's is the device's. */
extern "C" hr_status hri_cuda_check_array(int ordinal, const void *ptr, char *why, size_t why_size)
{
    (void)why, (void)why_size;
    return ordinal == 0 && ptr ? HR_OK : HR_ERR_INVALID_ARG;
}

extern "C" hr_status hri_cuda_wait_stream(int ordinal, void *stream, char *why, size_t why_size)
{
    (void)ordinal, (void)stream, (void)why, (void)why_size;
    return HR_OK;
}
