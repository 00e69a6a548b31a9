/*
 * hr_test_take(): whether the next combination of a test's exhaustive loop runs. A plain run
 * takes every one. With HR_TEST_SAMPLE=k in the environment it takes a fixed pseudo-random one
 * in k (the same ones on every run): the sanitizer runs set it, as their programs run 5-20x
 * slower and the plain suite checks every combination anyway.
 */
#ifndef HR_SAMPLE_UTIL_H
#define HR_SAMPLE_UTIL_H

#include <stdlib.h>

static inline int hr_test_take(void)
{
    static long every = 0;
    static unsigned long long seq;
    if (every == 0) {
        const char *e = getenv("HR_TEST_SAMPLE");
        every = e ? strtol(e, NULL, 10) : 1;
        if (every < 1) every = 1;
    }
    /* splitmix64 of the combination's number: no stride that a loop's extent could alias */
    unsigned long long z = ++seq * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return every == 1 || z % (unsigned long long)every == 0;
}

#endif
