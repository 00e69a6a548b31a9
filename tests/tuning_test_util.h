/* The knobs a test runs with, from the HETRELAX_* variables ctest's ENVIRONMENT sets per
 * variant (CMakeLists.txt), mapped as the command maps them (tools/tuning_env.c): the library
 * reads no environment. A bad value ends the test with its message. */
#ifndef HR_TUNING_TEST_UTIL_H
#define HR_TUNING_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/hetrelax.h"
#include "tuning_env.h"

static inline const hr_tuning *env_tuning(void)
{
    static hr_tuning t;
    static int done;
    if (!done) {
        char err[256];
        if (hri_tuning_from_env(&t, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            exit(2);
        }
        done = 1;
    }
    return &t;
}

/* A knob of t from text in its variable's syntax ("96x3x12" for gpu_shape; NULL: the
 * default); a bad value fails the test. */
static inline void set_knob(hr_tuning *t, const char *name, const char *value)
{
    const hr_knob *k = hri_knob_find(name);
    if (!k) {
        fprintf(stderr, "no knob %s\n", name);
        exit(2);
    }
    char err[200];
    if (!value) {
        hr_tuning zero = {0};
        memcpy((char *)t + k->offset, (char *)&zero + k->offset,
               k->type == HR_KNOB_INT3     ? 3 * sizeof(int)
               : k->type == HR_KNOB_INT2   ? 2 * sizeof(int)
               : k->type == HR_KNOB_LONG   ? sizeof(long)
               : k->type == HR_KNOB_DOUBLE ? sizeof(double)
               : k->type == HR_KNOB_STRING ? sizeof(char *)
                                           : sizeof(int));
    } else if (hri_knob_set(k, value, 1, t, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        exit(2);
    }
}

#endif
