/*
 * hetrelax over MPI with a CPU+GPU split per rank (Sourouri et al.): the grid's slowest axis
 * (z-planes in 3-D, rows in 2-D) is cut into one slab per rank, and each rank's slab
 * into its CPU part (the low planes, a fraction options.split of them) and its GPU part.
 * The planes between ranks go through MPI (host buffers, pinned for the GPU part), the
 * plane between a rank's two parts through pinned copies; the host thread that drives
 * the GPU makes every MPI call (MPI_THREAD_FUNNELED suffices). Schedules: nested and
 * naive (options.split_schedule; docs/hybrid.md). Link hetrelax::hetrelax_mpi.
 *
 * The solution is bitwise that of cpu-seq for every rank count, split and ghost width.
 * Every function is collective over the communicator and returns the same status on
 * every rank.
 */
#ifndef HETRELAX_MPI_HYBRID_H
#define HETRELAX_MPI_HYBRID_H

#include <mpi.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/hybrid.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hr_mpi_hybrid hr_mpi_hybrid;

/* What HR_SPLIT_AUTO measured and chose. Every rank calibrates its own slab as one process
 * would (hr_hybrid_calibrate: its CPU threads, its GPU, the plane between them), and the
 * models are shared. The planes between ranks are measured in the real engine: GPU-only
 * through the ranks (t0), a probe with 2g + 1 planes of each slab on the CPU (g on slabs under
 * 4g + 2 planes; the GPU parts the later ones), and a split where the CPU parts are the later
 * ones (their host's caches and memory are shared by every rank in the run, not in the
 * calibrations), and a ladder of larger splits up to half the slab. Every model's CPU term is
 * scaled by cpu_scale and the exchange between ranks, x_ranks, added so that the model meets the
 * first two splits; at each ladder point the CPU term is scaled by that point's factor instead
 * (log-linear in planes between points), so that it meets the ladder too. The model of a
 * fraction f is then hr_split_model_ranks_time(models, ranks, f, g, x_ranks, t0). auto takes
 * the model's best fraction with the CPU part taken 1.3x slower than calibrated (the one-process
 * headroom), and two smaller ones, measures them through the ranks, and keeps the fastest that is
 * at least 1 % faster than t0 in two measurements (else 0). Times are the slowest rank's. */
#define HR_MPI_HYBRID_CANDIDATES 3
#define HR_MPI_HYBRID_LADDER     (HR_SPLIT_RAMP - 1)
typedef struct hr_mpi_hybrid_choice {
    double calibration_s; /* the slowest rank's hr_hybrid_calibrate */
    double seconds;       /* the whole choice, wall */
    double gpu_only_s;    /* t0: fraction 0 through the ranks, measured */
    double probe_fraction, probe_s;
    double x_ranks; /* exposed exchange between ranks, seconds per sweep */
    int candidates;
    double cand_fraction[HR_MPI_HYBRID_CANDIDATES], cand_s[HR_MPI_HYBRID_CANDIDATES];
    double cand_predicted_s[HR_MPI_HYBRID_CANDIDATES];
    /* a candidate that paid measured again (0: not), fastest first until one pays twice */
    double cand_again_s[HR_MPI_HYBRID_CANDIDATES];
    double fraction;    /* chosen */
    double predicted_s; /* the model at the chosen fraction */
    /* the split where the CPU parts are the later ones, measured (fraction 0: none), and the
     * factor every model's CPU term was scaled by, with x_ranks, to meet it and the probe
     * ([0.5, 4]; 1: none). x_ranks may then be negative: the calibrations' own exchange and
     * fixed costs overstated. */
    double cpu_probe_fraction, cpu_probe_s, cpu_scale;
    /* the ladder beyond the CPU-bound split: twice its planes, four times, ... (while under
     * two thirds of half the slab), then half the slab, each measured through the ranks, and
     * the factor the CPU terms are scaled by at its planes ([0.25, 8]; log-linear in planes
     * between two points, from cpu_scale at the CPU-bound split): the model meets every point */
    int ladder;
    double ladder_fraction[HR_MPI_HYBRID_LADDER], ladder_s[HR_MPI_HYBRID_LADDER], ladder_scale[HR_MPI_HYBRID_LADDER];
} hr_mpi_hybrid_choice;

/*! hr_mpi_hybrid_create() :
 *  Collective. options.split in [0, 1] is the fraction of each rank's slab on the CPU
 *  (0: GPU only, 1: CPU only), or HR_SPLIT_AUTO: the per-rank model chooses it (below;
 *  HR_SPLIT_STREAM is for one process); split_ghost, split_second,
 *  split_schedule and split_boundary_threads as for the hybrid backend; `threads` per
 *  rank (0: the cores divided among the ranks of the node). Rank r uses GPU
 *  (device + node-local rank) modulo the devices present. The communicator is duplicated.
 *  @return the same status on every rank; hr_mpi_hybrid_last_error() says why. */
HR_API hr_status hr_mpi_hybrid_create(const hr_options *o, MPI_Comm comm, hr_mpi_hybrid **out);

/*! hr_mpi_hybrid_run() : collective; `res` is the same on every rank (the slowest rank's times). */
HR_API hr_status hr_mpi_hybrid_run(hr_mpi_hybrid *s, hr_result *res);

/*! hr_mpi_hybrid_time() : collective; `sweeps` sweeps on every rank after a barrier, without
 *  the residual a run ends with (benchmarks): *per_sweep is the slowest rank's seconds per sweep. */
HR_API hr_status hr_mpi_hybrid_time(hr_mpi_hybrid *s, long sweeps, double *per_sweep);

/*! hr_mpi_hybrid_gather_solution() : collective; rank `root` gets the whole interior solution. */
HR_API hr_status hr_mpi_hybrid_gather_solution(hr_mpi_hybrid *s, hr_precision prec, void *dst, size_t count,
                                               int root);

/*! hr_mpi_hybrid_info() : this rank's split (rows = its slab, rows_cpu its CPU part) and exchange figures. */
HR_API hr_status hr_mpi_hybrid_info(const hr_mpi_hybrid *s, hr_hybrid_info *out);

/*! hr_mpi_hybrid_get_choice() : what split auto measured and chose (HR_ERR_INVALID_ARG unless
 *  created with HR_SPLIT_AUTO). Local: the same on every rank. */
HR_API hr_status hr_mpi_hybrid_get_choice(const hr_mpi_hybrid *s, hr_mpi_hybrid_choice *out);

/*! hr_mpi_hybrid_predict() : the per-rank model's seconds per sweep with `fraction` of each
 *  slab on the CPU (the slowest rank; NaN unless created with HR_SPLIT_AUTO, or where a part
 *  would have fewer than split_ghost planes). Local: the same on every rank. */
HR_API double hr_mpi_hybrid_predict(const hr_mpi_hybrid *s, double fraction);

/*! hr_mpi_hybrid_free() : collective (accepts NULL on every rank). */
HR_API void hr_mpi_hybrid_free(hr_mpi_hybrid *s);

/*! hr_mpi_hybrid_last_error() : why the last call on this thread failed, or "". */
HR_API const char *hr_mpi_hybrid_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
