/*
 * Checkpoint files of the grid commands: a fixed header (magic, version, the problem's
 * extents and precision, the right-hand side and boundary it was run with, what determines
 * the iterate (method, weight, kernel and its class), the sweeps done) followed by the raw
 * interior in the run's precision, x fastest.
 * Written through a temporary file and rename(), so a checkpoint is whole or absent.
 */
#ifndef HR_CHECKPOINT_H
#define HR_CHECKPOINT_H

#include <stddef.h>

#include "hetrelax/hetrelax.h"

typedef struct hr_ckpt_info {
    int dim;         /* 2 or 3 */
    long nx, ny, nz; /* nz = 1 in 2-D */
    hr_precision precision;
    int rhs; /* hr_rhs of the run */
    double boundary;
    char kernel[48];
    long sweeps; /* sweeps done when the state was taken */
    /* what makes the next sweep: a restart with another update rule would continue to a
     * result that is neither run's */
    int method;                  /* hr_method */
    double omega;                /* the weight that ran (auto resolved, 0 as 1) */
    int deterministic;           /* 1: the kernel is bitwise cpu-seq, so any such kernel continues */
    unsigned long long rhs_hash; /* FNV-1a of the --rhs FILE values (0: no file) */
} hr_ckpt_info;

/* The hash recorded for an --rhs FILE's values. */
unsigned long long hr_ckpt_hash(const double *v, size_t count);

/* Writes header + count values of the info's precision. Returns 0 or an errno value. */
int hr_ckpt_write(const char *path, const hr_ckpt_info *info, const void *data, size_t count);
/* Reads the header; 0, or HR_EXIT_USAGE after printing one line naming `flag`. */
int hr_ckpt_read_info(const char *cmd, const char *flag, const char *path, hr_ckpt_info *info);
/* Reads the values after the header (count of the info's precision into data); refuses
 * values that are not finite (a damaged file, or a state that had diverged). */
int hr_ckpt_read_data(const char *cmd, const char *flag, const char *path, const hr_ckpt_info *info,
                      void *data, size_t count);

#endif
