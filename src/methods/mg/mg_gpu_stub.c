/* The multigrid GPU backend in a build without CUDA: there is no device. A file of its own, not
 * part of runtime/nocuda.c: the CPU emulation of the GPU backend (tests/methods/mg/emu) links its own
 * definitions of these functions with the static library, which must not bring in a second. */
#ifndef HR_HAVE_CUDA
#include <stdio.h>
#include <string.h>

#include "methods/mg/mg_gpu.h"

hr_status hri_mg_gpu_create(const mg_gpu_setup *s, mg_gpu **out, char *why, size_t why_size)
{
    *out = NULL;
    if (why && why_size) snprintf(why, why_size, "backend: gpu: no CUDA device %d (found 0)", s->device);
    return HR_ERR_NO_DEVICE;
}

void hri_mg_gpu_free(mg_gpu *g)
{
    (void)g;
}

hr_status hri_mg_gpu_reset(mg_gpu *g)
{
    (void)g;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_mg_gpu_check(mg_gpu *g, int want_r, double *rel, double *bnorm, double *rmax)
{
    (void)g, (void)want_r, (void)rel, (void)bnorm, (void)rmax;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_mg_gpu_advance(mg_gpu *g, long count, int fmg_first, int r_valid)
{
    (void)g, (void)count, (void)fmg_first, (void)r_valid;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_mg_gpu_cg_start(mg_gpu *g, double s, double *rr)
{
    (void)g, (void)s, (void)rr;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_mg_gpu_cg_rr(mg_gpu *g, double *rr)
{
    (void)g, (void)rr;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_mg_gpu_download(mg_gpu *g, hr_grid *host)
{
    (void)g, (void)host;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_mg_gpu_rhs_host(mg_gpu *g, const double *f)
{
    (void)g, (void)f;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_mg_gpu_rhs_device(mg_gpu *g, const void *f, int single, double scale)
{
    (void)g, (void)f, (void)single, (void)scale;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_mg_gpu_solution_device(mg_gpu *g, void *dst, int single)
{
    (void)g, (void)dst, (void)single;
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_mg_gpu_solution_host(mg_gpu *g, void *dst, int single)
{
    (void)g, (void)dst, (void)single;
    return HR_ERR_UNSUPPORTED;
}

const char *hri_mg_gpu_error(const mg_gpu *g)
{
    (void)g;
    return "this build has no CUDA support";
}

void hri_mg_gpu_setup_times(const mg_gpu *g, mg_gpu_times *t)
{
    (void)g;
    memset(t, 0, sizeof *t);
}
#else
typedef int hr_mg_gpu_stub_unused; /* ISO C: a translation unit is not empty */
#endif
