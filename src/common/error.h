#ifndef HR_ERROR_H
#define HR_ERROR_H
#include "hetrelax/hetrelax.h"

/* Propagate a non-OK status to the caller. */
#define HR_TRY(expr)                                                                                         \
    do {                                                                                                     \
        hr_status hr_try_s_ = (expr);                                                                        \
        if (hr_try_s_ != HR_OK) return hr_try_s_;                                                            \
    } while (0)

/* Jump to `label` with `st` set when expr fails (for functions that must clean up). */
#define HR_CHECK_GOTO(st, expr, label)                                                                       \
    do {                                                                                                     \
        (st) = (expr);                                                                                       \
        if ((st) != HR_OK) goto label;                                                                       \
    } while (0)

#endif
