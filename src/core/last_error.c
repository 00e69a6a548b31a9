/* The thread-local last error: why the last failing call without a handle (a create, a
 * problem setter) on this thread failed. Calls with a handle keep their message in it. */
#include <stdarg.h>
#include <stdio.h>

#include "core/error.h"

static _Thread_local char last_error[HR_LAST_ERROR_SIZE];

const char *hr_last_error(void)
{
    return last_error;
}

char *hri_last_error_buf(void)
{
    return last_error;
}

void hri_set_last_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}
