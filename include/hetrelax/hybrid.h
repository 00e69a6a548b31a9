/*
 * hetrelax: the performance model of a CPU+GPU (or GPU+GPU) row split (Venkatasubramanian & Vuduc fig. 6,
 * Sourouri et al. section IV). Part of libhetrelax; include after hetrelax.h.
 *
 * A fraction f of the rows (2-D) or planes (3-D) goes to placement A (the CPU), the rest
 * to placement B (the GPU). With full-grid sweep times t_a and t_b and the exposed cost X
 * of exchanging the boundary rows, one sweep takes
 *
 *     T(f) = max(f t_a, (1 - f) t_b) + X(f),   X(0) = X(1) = 0,
 *
 * best at f* = t_b / (t_a + t_b) when X is constant, where T(f*) = t_a t_b / (t_a + t_b) + X.
 * The split pays only when X < f* t_b, and gains at most 1 + t_b / t_a.
 *
 * The fields appended to hr_split_model refine the three terms (all 0: the form above):
 * A's part of r rows takes r s(r w), its seconds per row growing as its working set leaves
 * the caches (knots measured in and out of the last-level cache); B's part has a floor
 * (launch latency); near the balance the sweep waits for the expected maximum of two jittery
 * part times (Clark), not for the larger mean; T(0) is B alone with its CUDA graphs.
 */
#ifndef HETRELAX_HYBRID_H
#define HETRELAX_HYBRID_H

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_SPLIT_KNOTS      16 /* points of the size-aware CPU term */
#define HR_SPLIT_CANDIDATES 3  /* splits --split auto measures before it chooses */
#define HR_SPLIT_RAMP       6  /* points of the model's ramp on A's part (hr_split_model.a_ramp) */

typedef struct hr_split_model {
    double t_a;         /* seconds per sweep of the whole grid on placement A (the CPU) */
    double t_b;         /* the same on placement B (the GPU) */
    double x_latency;   /* seconds per boundary message, one direction */
    double x_bandwidth; /* bytes per second of the exchange path */
    double row_bytes;   /* bytes of one boundary row (2-D) or plane (3-D) */
    int messages;       /* messages per sweep when both parts are non-empty (2: one each way) */
    int rows;           /* rows or planes to split */
    /* Appended (all 0: the terms above alone). A's term f t_a assumes every row costs the same;
     * once A's grids leave the caches a row costs more, and a small part pays a fixed cost per
     * sweep. With a_knots > 0, A's part of r rows is interpolated linearly in r between the
     * times measured at the knots (r_k = a_knot_ws[k] / a_ws_per_row rows, r_k a_knot_row_s[k]
     * seconds), and proportional to r beyond the ends. */
    int a_knots;
    double a_knot_ws[HR_SPLIT_KNOTS];    /* working set of each slab, bytes, increasing */
    double a_knot_row_s[HR_SPLIT_KNOTS]; /* its seconds per row and sweep */
    double a_ws_per_row;                 /* working-set bytes of one row of A (its grids) */
    double b_alone;                      /* T(0) when > 0: B alone (CUDA graphs, no host sync per sweep) */
    /* > 0: the parts' times jitter by this much (seconds, one sigma), so a split near the balance
     * waits for the expected maximum of two normal times (Clark 1961), not for the larger mean */
    double x_sigma;
    double b_floor; /* > 0: B's part never sweeps faster than this (launch latency, small parts) */
    /* a_ramp > 0 points (rows increasing): A's part of r rows is further scaled by a_ramp_k[0]
     * up to a_ramp_rows[0] rows, by the last factor from the last point on, log-linear in r
     * between two points (the MPI model's CPU term, fitted to splits measured through the
     * ranks: the CPU parts share the host's caches and memory as they grow) */
    int a_ramp;
    double a_ramp_rows[HR_SPLIT_RAMP], a_ramp_k[HR_SPLIT_RAMP];
} hr_split_model;

/*! hr_split_model_exchange() : X for a split with `rows_a` rows on A (0 when a part is empty). */
HR_API double hr_split_model_exchange(const hr_split_model *m, int rows_a);

/*! hr_split_model_time() : predicted seconds per sweep with `rows_a` of m->rows on A. */
HR_API double hr_split_model_time(const hr_split_model *m, int rows_a);

/*! hr_split_model_part_a() : predicted seconds per sweep of A's part of `rows_a` rows alone. */
HR_API double hr_split_model_part_a(const hr_split_model *m, int rows_a);

/*! hr_split_model_part_b() : predicted seconds per sweep of B's part when A has `rows_a` rows:
 *  (1 - f) t_b, at least b_floor. */
HR_API double hr_split_model_part_b(const hr_split_model *m, int rows_a);

/*! hr_split_model_row_s() : A's seconds per row and sweep for a part of working set `ws` bytes
 *  (its part time from the knots over its rows; t_a / rows without knots). */
HR_API double hr_split_model_row_s(const hr_split_model *m, double ws);

/*! hr_split_model_set_knots() :
 *  A's knots from a ladder of splits measured with rows[k] rows on A (increasing; the last may
 *  be m->rows, A alone) at s[k] seconds per sweep, X0 = x0: A's part at a rung is its time less
 *  x0 (not at m->rows), capped by every larger rung's part (A's time does not fall with its
 *  rows); a rung is a knot where that part is above 1.1 x B's part, and always at m->rows.
 *  Needs m->rows, t_b, b_floor and a_ws_per_row; sets a_knots, a_knot_ws and a_knot_row_s, the
 *  knots' rows into knot_rows (may be NULL; room for count).
 *  @return the index of the knot with the fastest rate, -1 when there is none. */
HR_API int hr_split_model_set_knots(hr_split_model *m, const int *rows, const double *s, int count, double x0,
                                    int *knot_rows);

/*! hr_split_model_max() : the expected max of two normal times of means a, b and standard
 *  deviation sigma each (Clark's formula; max(a, b) when sigma <= 0). */
HR_API double hr_split_model_max(double a, double b, double sigma);

/*! hr_split_model_best() :
 *  @return the rows on A that minimise the predicted time (0 when no split beats B alone;
 *  ties go to fewer rows on A), its time in *t (may be NULL). */
HR_API int hr_split_model_best(const hr_split_model *m, double *t);

/*! hr_split_stream_share() : Sourouri et al.'s rule, the fraction a_bw / (a_bw + b_bw) of the work
 *  on A given the two STREAM bandwidths. */
HR_API double hr_split_stream_share(double a_bw, double b_bw);

/*! hr_split_model_curve() : predicted seconds per sweep at each fraction f[i] of the rows on
 *  A (rounded to whole rows) into t[i]. */
HR_API void hr_split_model_curve(const hr_split_model *m, const double *f, int count, double *t);

/*! hr_split_model_best_range() :
 *  Like hr_split_model_best, over 0 and [lo, hi] only (parts need `ghost` rows each), and
 *  returning 0 unless the split is predicted at least `margin` (e.g. 0.01) faster than B
 *  alone: a split must pay for the model's error. */
HR_API int hr_split_model_best_range(const hr_split_model *m, int lo, int hi, double margin, double *t);

/*! hr_split_model_rank_rows() : A's rows of a slab of n planes at `fraction`, as the MPI
 *  engine cuts it (round(fraction n); 0 and n at the ends). */
HR_API int hr_split_model_rank_rows(double fraction, int n);

/*! hr_split_model_ranks_time() :
 *  Seconds per sweep of `ranks` slabs (one per MPI rank, Sourouri et al.), each with `fraction` of its
 *  m[r].rows planes on A (round(fraction rows), as the MPI engine cuts them): the slowest rank's
 *  predicted time plus x_ranks, the exposed cost of the planes between ranks; at fraction 0,
 *  t0 when t0 > 0 (GPU-only through the ranks, measured). NaN where a part of a split slab
 *  would have fewer than g planes. */
HR_API double hr_split_model_ranks_time(const hr_split_model *m, int ranks, double fraction, int g,
                                        double x_ranks, double t0);

/* ------------------------------------------------- the hybrid backend (HR_BACKEND_HYBRID) */

/* options.split values below 0: the split is chosen at start-up. HR_SPLIT_AUTO: the
 * model's best (--split auto); HR_SPLIT_STREAM: Sourouri et al.'s rule CPU_bw / (CPU_bw + GPU_bw)
 * with the bandwidths measured at start-up (--split stream), the model's prediction kept
 * for comparison. */
#define HR_SPLIT_AUTO   (-1.0)
#define HR_SPLIT_STREAM (-2.0)

/* What the start-up calibration measured: every figure on a grid of nonzero values (zeros
 * let the CPU skip work: a store of zeros over zeros), in the run's own engine, threads and
 * schedule, after warm-up sweeps, median of timed blocks of at least 10 ms. */
typedef struct hr_hybrid_calibration {
    double t_cpu;       /* t_c: seconds per whole-grid sweep on the CPU part's threads (from a slab) */
    int cpu_slab_rows;  /* rows (planes) of the slab t_cpu was scaled from */
    double t_gpu;       /* t_g: seconds per whole-grid sweep on the second placement */
    int probe_rows;     /* rows on the CPU of the probe run of the real schedule */
    double probe_s;     /* its measured seconds per sweep */
    double x_exposed;   /* X: probe_s less max(f t_c, (1 - f) t_g): exchange and sync not hidden */
    double x_latency;   /* one-way pinned copy latency, seconds (0 for a CPU second placement) */
    double x_bandwidth; /* pinned copy bandwidth, bytes per second (0: not measured) */
    double row_bytes;   /* bytes of one boundary row or plane */
    double cpu_stream_gbps, gpu_stream_gbps; /* STREAM triad / device copy (0: not measured) */
    double seconds;                          /* the calibration's wall time */
    /* appended: the size-aware terms (the model holds the knots) */
    int cpu_knots; /* CPU slabs measured (rows in cpu_knot_rows) */
    int cpu_knot_rows[HR_SPLIT_KNOTS];
    double llc_bytes;   /* the last-level cache the slabs were sized against */
    double gpu_alone_s; /* B alone on the whole grid with its CUDA graphs: T(0) */
    int off_rows;       /* a second probe off the balance (B the slower part) */
    double off_s;       /* its seconds per sweep */
    double x_off;       /* X there: the exposed cost without the balance penalty */
    double x_sigma;     /* the parts' jitter that explains x_exposed - x_off at the balance */
    int floor_rows;     /* B alone on this few rows, sweep by sweep: */
    double gpu_floor_s; /* its seconds per sweep, the floor of B's part (launches) */
    /* appended: the CPU term measured inside the real split. The ladder runs the split itself
     * at n/64, n/64 sqrt 2, n/32, ... rows and n (CPU alone); a rung where the CPU part is
     * clearly the later part gives a knot (its time less X0). */
    int ladder;
    int ladder_rows[HR_SPLIT_KNOTS];
    double ladder_s[HR_SPLIT_KNOTS];
    /* the splits --split auto timed (the model's best and its neighbours) and their seconds per
     * sweep; auto takes the fastest measured unless it is not 1 % faster than gpu_alone_s */
    int candidates;
    int cand_rows[HR_SPLIT_CANDIDATES];
    double cand_s[HR_SPLIT_CANDIDATES];
    int remeasured; /* appended: ladder rungs measured again (an engine well off its neighbours' line) */
    /* appended: a candidate that paid (1 % faster than gpu_alone_s) measured again in a fresh
     * engine (0: not), fastest first until one pays twice; auto takes the confirmed candidate
     * with the lowest of its two measurements' larger, and 0 when none is confirmed */
    double cand_again_s[HR_SPLIT_CANDIDATES];
    /* appended: candidate measurements repeated because the first was over 1.2x the model there
     * (a slow spell of the host; the faster kept in cand_s, at most twice per candidate) */
    int cand_remeasured;
} hr_hybrid_calibration;

enum { HR_HYBRID_CAL_STREAM = 1 }; /* also measure the bandwidths of Sourouri et al.'s rule */

/*! hr_hybrid_calibrate() :
 *  Measures t_c, t_g and X for the options' grid, placements, threads, schedule and ghost
 *  width (o->backend need not be hybrid), and fills the model (X as a constant per sweep
 *  when both parts are non-empty). With HR_HYBRID_CAL_STREAM also the host STREAM triad
 *  and device copy bandwidths. On error hr_hybrid_last_error() says why. */
HR_API hr_status hr_hybrid_calibrate(const hr_options *o, unsigned flags, hr_hybrid_calibration *c,
                                     hr_split_model *m);

/*! hr_hybrid_last_error() : why the last hr_hybrid_calibrate on this thread failed, or ""; the
 *  same text as hr_last_error(). */
HR_API const char *hr_hybrid_last_error(void);

/* What a hybrid solver runs and what its model predicted. */
typedef struct hr_hybrid_info {
    int rows;       /* rows (2-D) or planes (3-D) along the split axis */
    int rows_cpu;   /* of them on the CPU (the low end) */
    double split;   /* rows_cpu / rows */
    int auto_split; /* 1: chosen by the model, 2: by the STREAM rule */
    int ghost, schedule, second;
    int cpu_threads, boundary_threads; /* the CPU part's interior (naive: all) and boundary crews */
    int have_model;                    /* model and cal below are valid (auto) */
    hr_split_model model;
    hr_hybrid_calibration cal;
    double predicted_s; /* the model's seconds per sweep at rows_cpu (NaN without a model) */
    double gpu_only_s;  /* the model's T(0) = t_g */
    long sweeps, exchanges;
    double wait_s; /* host time blocked on the second part's boundary rows */
    /* how neighbouring parts exchange rows: "peer copies" (GPUs with peer access),
     * "device copies (parts on one GPU)", "host-staged (reason)", "host" (CPU parts) */
    char exchange[64];
    /* appended: auto's watch. A split that auto chose is timed over the run in windows (at
     * least 50 ms and 16 sweeps); when two windows in a row, or the split's whole run so far,
     * are more than 1 % slower than the calibration's GPU-only time, the run goes on GPU-only
     * (bitwise the same sweeps). Then
     * fallback_sweep > 0 is the sweep it fell back after, fallback_rows_cpu the split it left
     * and fallback_split_s that split's seconds per sweep in the last window; rows_cpu is 0. */
    long fallback_sweep;
    int fallback_rows_cpu;
    double fallback_split_s;
} hr_hybrid_info;

/*! hr_hybrid_choose() :
 *  What `--split auto` picks from a calibration: with measured candidates (c->candidates > 0)
 *  the fastest of them, 0 unless measured at least 1 % faster than GPU-only (gpu_alone_s);
 *  without, the model's best rows on the CPU over 0 and [g, n - g], 0 unless predicted at
 *  least 1 % faster than GPU-only. With the model's predicted time (for `hetrelax model`,
 *  which has no solver). */
HR_API hr_status hr_hybrid_choose(const hr_options *o, const hr_hybrid_calibration *c,
                                  const hr_split_model *m, hr_hybrid_info *out);

/*! hr_solver_hybrid_info() : HR_ERR_INVALID_ARG unless s runs the hybrid backend. */
HR_API hr_status hr_solver_hybrid_info(const hr_solver *s, hr_hybrid_info *out);

/*! hr_hybrid_explain() :
 *  Writes the model's predicted curve (0-10 % in 0.5 % steps, then Sourouri et al.'s 10-40 %),
 *  the chosen split and its predicted time next to `measured_s` (<= 0: not measured)
 *  into buf, as text lines (for `--explain` and `hetrelax model`). Returns the length
 *  that was needed (as snprintf). */
HR_API int hr_hybrid_explain(const hr_hybrid_info *info, double measured_s, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
