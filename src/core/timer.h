#ifndef HR_TIMER_H
#define HR_TIMER_H
#include <time.h>

/* Monotonic wall clock in seconds. */
static inline double hr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#endif
