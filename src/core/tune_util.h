/* The tuning cache file shared by the GPU shapes and the CPU pencil heights
 * (`hetrelax tune`): where it lives and how a run's timings are summarised. */
#ifndef HR_TUNE_UTIL_H
#define HR_TUNE_UTIL_H

#include <stddef.h>
#include <stdio.h>

#include "core/internal_api.h"
#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cache file of the knobs `t` (may be NULL): t->tune_file, else gpu-tune.txt in
 * t->cache_dir, else ~/.cache/hetrelax/gpu-tune.txt; 0 when none can be formed. */
int hri_tune_cache_default(const hr_tuning *t, char *buf, size_t size);

/* Creates the folders above `path` (the file itself is not created); 0 on success. */
int hri_mkdir_parents(const char *path);

/* Opens the tuning cache for appending: `given` (not empty) as given, else the default
 * path of `t`, whose folders are created only when it is the cache folder's file (not for a
 * path the user named in --cache or t->tune_file). The path goes to `path`; NULL with an
 * errno value in *err on failure. */
FILE *hri_tune_cache_append(const char *given, const hr_tuning *t, char *path, size_t size, int *err);

/* The median of n timings (sorts v in place). */
HR_INTERNAL_API double hri_median(double *v, int n);

struct hr_solver;
/* One warm-up call of `sweeps` sweeps, then the median of 3 timed calls, as GB/s under the
 * byte model (u read + u' written, + f read when there is one). */
hr_status hri_tune_time_sweeps(struct hr_solver *s, long sweeps, double *gbps);

#ifdef __cplusplus
}
#endif
#endif
