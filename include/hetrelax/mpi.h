/*
 * hetrelax over MPI: one subdomain of a Cartesian decomposition per rank, halos by
 * MPI_Isend/Irecv, global residuals by collectives. Link hetrelax::hetrelax_mpi (built
 * when CMake finds MPI). Every function here is collective over the solver's
 * communicator and returns the same status on every rank: an error on one rank (bad
 * input, allocation) is reported on all of them, never a hang. docs/mpi.md.
 *
 * The solution is bitwise that of the single-process cpu-seq run for every decomposition
 * and ghost width.
 */
#ifndef HETRELAX_MPI_H
#define HETRELAX_MPI_H

#include <mpi.h>

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hr_mpi_solver hr_mpi_solver;

/*! hr_mpi_resolve_decomp() :
 *  The decomposition a solve of `o` on `ranks` ranks uses: `req` as given (parts per axis
 *  x, y[, z]; NULL or all 0: MPI_Dims_create's balanced split, the most parts along the
 *  slowest axis; GPU ranks: slabs along the slowest axis while each keeps at least 4
 *  planes, or 2 * ghost), checked against the rank count, the grid and `ghost`. Local (no
 *  communication): every rank gets the same answer. On error writes
 *  "decomp: reason" (or "ghost: ...") into why. */
HR_API hr_status hr_mpi_resolve_decomp(const hr_options *o, int ranks, const int req[3], int ghost,
                                       int out[3], char *why, size_t why_size);

/*! hr_mpi_solver_create() :
 *  Collective. Rank r owns subdomain r (x fastest). `decomp` as for
 *  hr_mpi_resolve_decomp (NULL: default), `ghost` >= 1 layers exchanged every `ghost`
 *  sweeps (ghost > 1 sweeps the ghost zone redundantly: fewer, larger messages). Each rank
 *  sweeps with the cpu-seq region sweep; with o->backend HR_BACKEND_GPU on a GPU (its rank
 *  on the node modulo the GPUs present, or o->gpus per node: then one rank per GPU; o->gpus
 *  with another backend is refused). The
 *  communicator is duplicated. MPI must be
 *  initialised (MPI_THREAD_FUNNELED suffices).
 *  @return the same status on every rank; on error *out = NULL and hr_mpi_last_error()
 *  gives the message (the same on every rank). */
HR_API hr_status hr_mpi_solver_create(const hr_options *o, const int decomp[3], int ghost, MPI_Comm comm,
                                      hr_mpi_solver **out);

/* How GPU ranks move their halo messages (CPU ranks always send host buffers by MPI). */
typedef enum hr_mpi_transport {
    HR_MPI_TRANSPORT_AUTO = 0, /* peer when every rank is on one node, else device buffers when
                                  the MPI library is CUDA-aware, else host */
    HR_MPI_TRANSPORT_HOST,     /* MPI on pinned host buffers, staged through the device */
    HR_MPI_TRANSPORT_DEVICE,   /* MPI on device buffers: a CUDA-aware MPI library only */
    HR_MPI_TRANSPORT_NCCL,     /* ncclSend/ncclRecv of device buffers (builds with NCCL; one rank
                                  per GPU); norms and flags still by MPI */
    HR_MPI_TRANSPORT_PEER      /* CUDA IPC: each face packed straight into the neighbour's device
                                  memory (NVLink or PCIe peer writes; a peer copy where the devices
                                  cannot reach each other); every rank on one node; MPI carries
                                  8-byte round notes, norms and flags */
} hr_mpi_transport;

/*! hr_mpi_transport_name() : "auto", "host", "device", "nccl", "peer" (NULL for other values). */
HR_API const char *hr_mpi_transport_name(hr_mpi_transport tr);

/*! hr_mpi_have_nccl() : 1 when this build has the NCCL transport. */
HR_API int hr_mpi_have_nccl(void);

/*! hr_mpi_solver_create_transport() :
 *  hr_mpi_solver_create with the halo transport of GPU ranks chosen (the same on every
 *  rank). A transport the build, the MPI library or the backend cannot give (nccl without
 *  NCCL, device without CUDA-aware MPI, device, nccl or peer with CPU ranks, nccl with several
 *  ranks on one GPU, peer with ranks on several nodes) is refused with HR_ERR_INVALID_ARG and
 *  "transport: reason". */
HR_API hr_status hr_mpi_solver_create_transport(const hr_options *o, const int decomp[3], int ghost,
                                                hr_mpi_transport transport, MPI_Comm comm,
                                                hr_mpi_solver **out);

/*! hr_mpi_solver_run() :
 *  Collective: runs the iteration; `res` (may be NULL) is the same on every rank (times
 *  are the slowest rank's). */
HR_API hr_status hr_mpi_solver_run(hr_mpi_solver *s, hr_result *res);

/*! hr_mpi_solver_gather_solution() :
 *  Collective: rank `root` receives the whole interior solution in dst (nx*ny[*nz]
 *  values, the layout of hr_solver_solution); dst and count matter on root only. */
HR_API hr_status hr_mpi_solver_gather_solution(const hr_mpi_solver *s, hr_precision prec, void *dst,
                                               size_t count, int root);

/*! hr_mpi_solver_write_raw() :
 *  Collective: writes the interior solution to `path` with MPI-IO, each rank its own block
 *  (no rank holds the whole grid): the .raw format (native floats of precision prec, x
 *  fastest, no header), as hr_solver_solution orders it. The same status on every rank. */
HR_API hr_status hr_mpi_solver_write_raw(const hr_mpi_solver *s, const char *path, hr_precision prec);

/* What a run's halo exchange cost, per part (seconds summed over the run, this rank). */
typedef struct hr_mpi_info {
    int ranks;
    int decomp[3];
    int ghost;
    long exchanges;        /* exchange rounds */
    double pack_s;         /* packing faces into buffers */
    double transfer_s;     /* posting, transfer and waiting */
    double unpack_s;       /* unpacking into ghost zones */
    double hidden_s;       /* inner sweeps while halos were in flight (ghost 1, overlapped) */
    int messages;          /* messages this rank sends per exchange round */
    double halo_bytes;     /* bytes this rank sends per exchange round */
    double max_halo_bytes; /* the largest over ranks */
    /* GPU ranks (--backend gpu; docs/mpi.md): the device overlap's own split of a sweep */
    double wait_s;      /* exchange left over after the interior was done (exposed) */
    double compute_s;   /* sweep time less the exposed exchange */
    int device;         /* this rank's GPU, -1 on CPU ranks */
    int device_buffers; /* 1: device buffers moved (CUDA-aware MPI, NCCL, peer), 0: pinned host staging */
    hr_mpi_transport transport; /* what moved them: host, device, nccl or peer (never auto) */
    int device_first;           /* 1: the lowest rank of its node on its GPU (measure the GPU once) */
} hr_mpi_info;

/*! hr_mpi_solver_info() : the decomposition and the last run's exchange figures (local). */
HR_API hr_status hr_mpi_solver_info(const hr_mpi_solver *s, hr_mpi_info *out);

/*! hr_mpi_solver_set_overlap() :
 *  Local, but give every rank the same value. With ghost 1 the exchange is overlapped with
 *  the inner points by default (on = 1); on = 0 exchanges first, then sweeps. The
 *  solution is the same bits either way. */
HR_API hr_status hr_mpi_solver_set_overlap(hr_mpi_solver *s, int on);

/*! hr_mpi_solver_set_reference() :
 *  Collective: the bandwidth the run's GB/s is reported against is the sum of every rank's
 *  `gbps` (give each GPU's copy bandwidth on one rank per GPU, see hr_mpi_info.device_first,
 *  and 0 elsewhere; CPU ranks: the node's bandwidth on one rank per node). */
HR_API hr_status hr_mpi_solver_set_reference(hr_mpi_solver *s, double gbps);

/*! hr_mpi_last_error() : why the last failing hr_mpi_* call on this thread failed ("" if none);
 *  the same text as hr_last_error(). */
HR_API const char *hr_mpi_last_error(void);

/*! hr_mpi_solver_free() : releases everything (local); accepts NULL. */
HR_API void hr_mpi_solver_free(hr_mpi_solver *s);

/* ------------------------------------------ the structured-grid handle on MPI ranks */

/*! hr_grid_solver_create_mpi() :
 *  hr_grid_solver_create (grid_solver.h) with the placement "MPI ranks": one subdomain per
 *  rank of `comm` (duplicated), options.decomp, ghost and transport as for
 *  hr_mpi_solver_create_transport; backend cpu-seq (each rank sweeps on one thread), gpu (a
 *  GPU per rank) or hybrid (each rank's slab split between its CPU and its GPU, as
 *  hr_mpi_hybrid_create); auto: gpu when every rank has a GPU, else cpu-seq. The model
 *  problem's Jacobi (and its weight) runs there; red-black, SOR, CG, multigrid and
 *  MG-preconditioned CG, and every problem other than the model problem, run on the
 *  general-problem engine with one slab of the last axis per rank, cpu-seq, cpu-threads
 *  (options.threads per rank; 0: the node's cores shared evenly) or a GPU on each; GPU ranks'
 *  halos by NCCL or through the host (options.transport: auto, host or nccl; docs/mpi.md).
 *  A kernel other than "general", keep_history and gpus are refused naming the option.
 *  The solution is bitwise that of the one-process cpu-seq run (for a fixed number of
 *  cycles; GPU reductions are summed per rank, so to a tolerance within rounding).
 *  Every call on the handle is collective and returns the same status on every rank:
 *  hr_grid_solver_solve (every rank passes the whole rhs / x0, or NULL; each solve after the
 *  first sets the engine up again), hr_grid_solver_solution (rank 0 receives the solution:
 *  dst and count matter there only), hr_grid_solver_free. hr_grid_solver_request_stop is not
 *  answered on ranks yet (stop through the monitor, the same on every rank).
 *  @return the same status on every rank; on error *out = NULL and hr_last_error() gives the
 *  first failing rank's message on every rank. */
HR_API hr_status hr_grid_solver_create_mpi(const hr_problem *p, const hr_grid_options *o, MPI_Comm comm,
                                           hr_grid_solver **out);

#ifdef __cplusplus
}
#endif
#endif
