/*
 * The tests' CHECK(cond, fmt, ...): a failed condition is counted in `failures` and printed with
 * its file, line and message, and the test goes on to its next check.
 */
#ifndef HR_CHECK_UTIL_H
#define HR_CHECK_UTIL_H

#include <stdio.h>

static int failures;

#define CHECK(c, ...)                                                                                        \
    do {                                                                                                     \
        if (!(c)) {                                                                                          \
            failures++;                                                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                      \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
        }                                                                                                    \
    } while (0)

#endif
