/*
 * hetrelax: the performance model of a CPU+GPU (or GPU+GPU) row split (seed 000 fig. 6,
 * seed 003 section IV). Part of libhetrelax; include after hetrelax.h.
 *
 * A fraction f of the rows (2-D) or planes (3-D) goes to placement A (the CPU), the rest
 * to placement B (the GPU). With full-grid sweep times t_a and t_b and the exposed cost X
 * of exchanging the boundary rows, one sweep takes
 *
 *     T(f) = max(f t_a, (1 - f) t_b) + X(f),   X(0) = X(1) = 0,
 *
 * best at f* = t_b / (t_a + t_b) when X is constant, where T(f*) = t_a t_b / (t_a + t_b) + X.
 * The split pays only when X < f* t_b, and gains at most 1 + t_b / t_a.
 */
#ifndef HETRELAX_HYBRID_H
#define HETRELAX_HYBRID_H

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hr_split_model {
    double t_a;         /* seconds per sweep of the whole grid on placement A (the CPU) */
    double t_b;         /* the same on placement B (the GPU) */
    double x_latency;   /* seconds per boundary message, one direction */
    double x_bandwidth; /* bytes per second of the exchange path */
    double row_bytes;   /* bytes of one boundary row (2-D) or plane (3-D) */
    int messages;       /* messages per sweep when both parts are non-empty (2: one each way) */
    int rows;           /* rows or planes to split */
} hr_split_model;

/*! hr_split_model_exchange() : X for a split with `rows_a` rows on A (0 when a part is empty). */
double hr_split_model_exchange(const hr_split_model *m, int rows_a);

/*! hr_split_model_time() : predicted seconds per sweep with `rows_a` of m->rows on A. */
double hr_split_model_time(const hr_split_model *m, int rows_a);

/*! hr_split_model_best() :
 *  @return the rows on A that minimise the predicted time (0 when no split beats B alone;
 *  ties go to fewer rows on A), its time in *t (may be NULL). */
int hr_split_model_best(const hr_split_model *m, double *t);

/*! hr_split_stream_share() : seed 003's rule, the fraction a_bw / (a_bw + b_bw) of the work
 *  on A given the two STREAM bandwidths. */
double hr_split_stream_share(double a_bw, double b_bw);

#ifdef __cplusplus
}
#endif
#endif
