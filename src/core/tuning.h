/* Reading the knobs of hr_tuning (include/hetrelax/hetrelax.h): 0 is the library's default.
 * Plain C so CUDA code can include it. */
#ifndef HR_TUNING_H
#define HR_TUNING_H

#include <stddef.h>

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A switch: HR_TUNE_ON 1, HR_TUNE_OFF 0, 0 (unset) `def`. */
static inline int hr_tune_on(int knob, int def)
{
    return knob > 0 ? 1 : knob < 0 ? 0 : def;
}

/* A count whose 0 is meaningful: 0 (unset) `def`, -1 asks for 0, else the value. */
static inline int hr_tune_count(int knob, int def)
{
    return knob == 0 ? def : knob < 0 ? 0 : knob;
}

/* The knobs' ranges: HR_OK, or HR_ERR_INVALID_ARG with "tuning.FIELD: reason" in why. */
hr_status hri_tuning_validate(const hr_tuning *t, char *why, size_t why_size);

/* The folder of the default tuning cache file when none is named (t->cache_dir, else
 * ~/.cache/hetrelax of the user's home directory from the password database); 0 when none. */
int hri_tuning_cache_dir(const hr_tuning *t, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
