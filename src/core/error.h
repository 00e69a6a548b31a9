#ifndef HR_ERROR_H
#define HR_ERROR_H
#include <stddef.h>

#include "core/internal_api.h"
#include "hetrelax/hetrelax.h"

/* Writes "field: reason" (printf-style) into buf (when buf and size), for the library's
 * validators; returns HR_ERR_INVALID_ARG. */
HR_INTERNAL_API hr_status hri_invalid_arg(char *buf, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The right-hand side of the model engines' options (hr_options, hr_mg_options): spike,
 * manufactured, zero or an array (random is an hr_problem's); HR_OK or the reason in w. */
hr_status hri_options_rhs_check(hr_rhs rhs, char *w, size_t ws);

/* The thread-local last error (last_error.c, public as hr_last_error()): a buffer of
 * HR_LAST_ERROR_SIZE bytes for validators, and a printf-style setter (the MPI library's
 * hr_grid_solver_create_mpi reports through it too). */
#define HR_LAST_ERROR_SIZE 256
HR_INTERNAL_API char *hri_last_error_buf(void);
HR_INTERNAL_API void hri_set_last_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

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
