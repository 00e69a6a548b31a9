/* bench/hybrid_split: the options shared by its two modes (hybrid_split.c: one solver per
 * split through the public API; hybrid_split_engine.c, --engine: one split engine per split,
 * checked against the GPU part alone, for the large 3-D grids of Sourouri et al. fig. 5d). */
#ifndef HR_BENCH_HYBRID_SPLIT_H
#define HR_BENCH_HYBRID_SPLIT_H

#include <stdlib.h>

#include <stdio.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/hybrid.h"

#define MAXF 256
#define MAXPASS 8

typedef struct bench_cfg {
    hr_options o;
    int schedules[2], nsched;
    double f[MAXF];
    int nf;
    long sweeps, check;
    int repeats, two_gpus;
    int passes;           /* --passes P (engine mode): every split timed in P passes over all splits */
    int engine;           /* --engine: the engine mode */
    int tune_b[8], ntune; /* --tune-boundary B,B,..: nested boundary crews to try */
    double tune_at;       /* at this fraction (--tune-at, default 0.04) */
} bench_cfg;

static inline int cmp_d(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static inline double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* The calibration's fields of one schedule's JSON object (opened, left open). */
void bench_write_calibration(FILE *js, const char *sname, const hr_hybrid_calibration *cal,
                             const hr_split_model *m);

/* The --engine mode: writes OUT.json, returns the exit status. */
int engine_main(const bench_cfg *c, const char *out);

#endif
