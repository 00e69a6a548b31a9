/* Without CUDA the hybrid backend has no GPU placement: a second CPU placement
 * (options.split_second = HR_SPLIT_CPU) still runs the whole engine. */
#ifndef HR_HAVE_CUDA
#include <stdio.h>

#include "parallel/hybrid/place.h"

hr_status hr_place_gpu_create(const hr_place_spec *spec, hr_place **out)
{
    *out = NULL;
    if (spec->s) hr_solver_set_error(spec->s, "backend: hybrid needs a CUDA device (built without CUDA)");
    return HR_ERR_NO_DEVICE;
}

hr_status hr_place_gpu_roundtrip(int device, size_t bytes, int repeats, double *seconds)
{
    (void)device;
    (void)bytes;
    (void)repeats;
    *seconds = 0.0;
    return HR_ERR_NO_DEVICE;
}
#endif
