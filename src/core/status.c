#include <stdarg.h>
#include <stdio.h>

#include "core/error.h"
#include "hetrelax/hetrelax.h"

#define HR_STR2(x) #x
#define HR_STR(x)  HR_STR2(x)

const char *hr_version_string(void)
{
    return HR_STR(HR_VERSION_MAJOR) "." HR_STR(HR_VERSION_MINOR) "." HR_STR(HR_VERSION_PATCH);
}

unsigned hr_version_number(void)
{
    return HR_VERSION_NUMBER;
}

const char *hr_status_string(hr_status s)
{
    switch (s) {
    case HR_OK: return "ok";
    case HR_ERR_INVALID_ARG: return "invalid argument";
    case HR_ERR_NO_MEMORY: return "out of memory";
    case HR_ERR_IO: return "input/output error";
    case HR_ERR_FORMAT: return "malformed input";
    case HR_ERR_UNSUPPORTED: return "not supported by this build";
    case HR_ERR_NO_DEVICE: return "no GPU device available";
    case HR_ERR_DEVICE: return "GPU device error";
    case HR_ERR_DIVERGED: return "iteration diverged";
    case HR_ERR_INTERNAL: return "internal error";
    case HR_STATUS_COUNT: break;
    }
    return "unknown status";
}

const char *hr_reason_string(hr_reason r)
{
    switch (r) {
    case HR_REASON_ITERS: return "iterations";
    case HR_REASON_CONVERGED: return "converged";
    case HR_REASON_STOPPED: return "stopped";
    case HR_REASON_DIVERGED: return "diverged";
    case HR_REASON_NAN: return "diverged (NaN)";
    case HR_REASON_BREAKDOWN: return "breakdown";
    case HR_REASON_STAGNATED: return "stagnated";
    }
    return "unknown";
}

const char *hr_backend_name(hr_backend b)
{
    switch (b) {
    case HR_BACKEND_AUTO: return "auto";
    case HR_BACKEND_CPU_SEQ: return "cpu-seq";
    case HR_BACKEND_CPU_THREADS: return "cpu-threads";
    case HR_BACKEND_GPU: return "gpu";
    case HR_BACKEND_HYBRID: return "hybrid";
    case HR_BACKEND_COUNT: break;
    }
    return "unknown";
}

const char *hr_precision_name(hr_precision p)
{
    return p == HR_PREC_SINGLE ? "single" : p == HR_PREC_MIXED ? "mixed" : "double";
}

hr_status hri_invalid_arg(char *buf, size_t size, const char *fmt, ...)
{
    if (buf && size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
    }
    return HR_ERR_INVALID_ARG;
}
