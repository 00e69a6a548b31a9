/*
 * hetrelax over MPI with a CPU+GPU split per rank (seed 003): the grid's slowest axis
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

/*! hr_mpi_hybrid_create() :
 *  Collective. options.split in [0, 1] is the fraction of each rank's slab on the CPU
 *  (0: GPU only, 1: CPU only; auto is not supported per rank); split_ghost, split_second,
 *  split_schedule and split_boundary_threads as for the hybrid backend; `threads` per
 *  rank (0: the cores divided among the ranks of the node). Rank r uses GPU
 *  (device + node-local rank) modulo the devices present. The communicator is duplicated.
 *  @return the same status on every rank; hr_mpi_hybrid_last_error() says why. */
hr_status hr_mpi_hybrid_create(const hr_options *o, MPI_Comm comm, hr_mpi_hybrid **out);

/*! hr_mpi_hybrid_run() : collective; `res` is the same on every rank (the slowest rank's times). */
hr_status hr_mpi_hybrid_run(hr_mpi_hybrid *s, hr_result *res);

/*! hr_mpi_hybrid_gather_solution() : collective; rank `root` gets the whole interior solution. */
hr_status hr_mpi_hybrid_gather_solution(hr_mpi_hybrid *s, hr_precision prec, void *dst, size_t count,
                                        int root);

/*! hr_mpi_hybrid_info() : this rank's split (rows = its slab, rows_cpu its CPU part) and exchange figures. */
hr_status hr_mpi_hybrid_info(const hr_mpi_hybrid *s, hr_hybrid_info *out);

/*! hr_mpi_hybrid_free() : collective (accepts NULL on every rank). */
void hr_mpi_hybrid_free(hr_mpi_hybrid *s);

/*! hr_mpi_hybrid_last_error() : why the last call on this thread failed, or "". */
const char *hr_mpi_hybrid_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
