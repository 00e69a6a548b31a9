/*
 * MPI for the grid commands (poisson2d, poisson3d), in a few calls; builds with and without
 * MPI (without it --decomp / --ghost are still listed and a decomposition of more than one
 * part is refused). docs/mpi.md, "What the command needs".
 *
 *   main():      rc = hr_mpi_cli_init(&argc, &argv); ... rc = hr_mpi_cli_finalize(rc);
 *   flags:       hr_mpi_cli_flags(&fs, &m);
 *   run:         if (hr_mpi_cli_wanted(&m))
 *                    rc = hr_mpi_cli_solve(CMD, &o, &m, local_rc, &r, sol, count, &mpi_json);
 *                general problems (grid_general.c):
 *                    rc = hr_mpi_cli_solve_grid(CMD, &p, &go, &m, local_rc, &gi, &r, sol, count, &mpi_json);
 *   output:      print, write --json and --output on rank 0 only (hr_mpi_cli_rank() == 0)
 *
 * Under mpirun the ranks other than 0 have stdout sent to /dev/null by hr_mpi_cli_init and
 * keep the last lines of their stderr in memory (HETRELAX_MPI_ALL_OUTPUT=1 keeps both), so
 * an error every rank finds alike prints one line.
 *
 * Agreements: every collective the command makes of its own is an agreement (after parsing,
 * before the solve, at the end), and every agreement is the same MPI_Allreduce whatever the
 * rank was doing. It carries the rank's status, which agreement it is in, and hashes of the
 * command line and of the HETRELAX_* settings. When all ranks are fine and alike, the
 * command goes on; otherwise every rank learns the same outcome at once: status (the
 * largest; 2 for ranks started differently), and rank 0 prints one line: its own error, or
 * that of the lowest failing rank ("hetrelax CMD: rank 2: --rhs: cannot read ..."), or what
 * differs. From then on no rank talks to another again (hr_mpi_cli_finalize goes straight to
 * MPI_Finalize), so a rank that failed early, parsed something else or left before the solve
 * can never leave another waiting in a collective.
 */
#ifndef HR_MPI_GLUE_H
#define HR_MPI_GLUE_H

#include <json-c/json.h>
#include <stddef.h>

#include "cli_flags.h"
#include "hetrelax/hetrelax.h"

typedef struct hr_mpi_cli_args {
    int decomp[3];       /* --decomp AxB[xC] (x, y[, z] parts; 0: free, MPI_Dims_create) */
    int ghost;           /* --ghost G (layers exchanged every G sweeps), default 1 */
    int no_overlap;      /* --no-overlap: exchange first, then sweep */
    int gpus;            /* --gpus N under mpirun: GPUs per node, one rank per GPU (0: share all present) */
    int transport;       /* --transport auto|host|device|nccl|peer (hr_mpi_transport order; 0: auto) */
    int measure_gpus;    /* GPU ranks: report against the sum of the GPUs' copy bandwidth, measured */
    int transport_given; /* --transport was on the command line (auto too) */
    /* called on rank 0 by hr_mpi_cli_solve once every rank holds its solver, before the
     * sweeps (the banner: an input error found by any rank comes first, alone); may be NULL */
    void (*ready)(void *arg);
    void *ready_arg;
    /* hr_mpi_cli_solve_grid: the library's "field: reason" as the command says it ("--flag:
     * reason"), on rank 0; NULL: the message as it is */
    void (*flagify)(void *arg, const char *why, char *out, size_t size);
    void *flagify_arg;
} hr_mpi_cli_args;

/* MPI_Init_thread(FUNNELED) when started by mpirun/mpiexec and built with MPI; nothing
 * otherwise. Returns 0 or HR_EXIT_FAIL (message printed). */
int hr_mpi_cli_init(int *argc, char ***argv);
/* The last agreement (unless an earlier one failed): every rank returns the same status,
 * the largest; MPI_Finalize. rc unchanged without MPI. */
int hr_mpi_cli_finalize(int rc);
/* The agreement after parsing (hr_flags_parse calls it with its result; cmd names the
 * command in messages): rc when every rank parsed alike and well (negative: --help), else
 * the agreed status, the same on every rank. Once per process; rc unchanged without MPI. */
int hr_mpi_cli_parsed(const char *cmd, int rc);
int hr_mpi_cli_rank(void); /* 0 without MPI */
int hr_mpi_cli_size(void); /* 1 without MPI */

/* Adds --decomp, --ghost, --no-overlap and --transport (group "decomposition (MPI)"); sets defaults. */
void hr_mpi_cli_flags(hr_flagset *fs, hr_mpi_cli_args *m);

/* Whether to run decomposed: more than one rank, or a --decomp of more than one part (which
 * hr_mpi_cli_solve refuses outside mpirun). */
int hr_mpi_cli_wanted(const hr_mpi_cli_args *m);

/* The decomposed run. `local_rc`: this rank's status so far (an output it could not open,
 * a file it could not read); it is agreed first (an agreement, above), so no rank enters the
 * solve alone. Then create (a refusal: "hetrelax CMD: --FIELD: reason" on rank 0,
 * HR_EXIT_USAGE on every rank), m->ready on rank 0, run, and gather the solution (double,
 * count values) into sol on rank 0 when sol is non-NULL there. *mpi_json (may be NULL)
 * receives on rank 0 an object {ranks, decomp, ghost, overlap, exchanges, pack_s,
 * transfer_s, unpack_s, hidden_s, halo_bytes, max_halo_bytes} (times: the slowest rank).
 * Returns 0, HR_EXIT_FAIL or HR_EXIT_USAGE, the same on every rank. */
int hr_mpi_cli_solve(const char *cmd, const hr_options *o, const hr_mpi_cli_args *m, int local_rc,
                     hr_result *r, double *sol, size_t count, json_object **mpi_json);

/* A structured-grid problem on the ranks through hr_grid_solver_create_mpi (a general problem:
 * a slab of the last axis per rank), as hr_mpi_cli_solve: `local_rc` agreed first; create (a
 * refusal: one line on rank 0 through m->flagify, "hetrelax CMD: --FIELD: reason",
 * HR_EXIT_USAGE on every rank); *info (may be NULL) what runs, on every rank; m->ready on
 * rank 0; the solve; the solution (double, count values) gathered into sol on rank 0 when sol
 * is non-NULL there. *mpi_json (may be NULL) receives on rank 0 {ranks, decomp (1 x .. x
 * ranks), slab_axis}. Returns 0, HR_EXIT_FAIL (a diverged run: r says so, the solution still
 * gathered) or HR_EXIT_USAGE, the same on every rank. Outside mpirun, or built without MPI:
 * local_rc, else a refusal naming --decomp. */
int hr_mpi_cli_solve_grid(const char *cmd, const hr_problem *p, const hr_grid_options *go,
                          const hr_mpi_cli_args *m, int local_rc, hr_grid_info *info, hr_result *r,
                          double *sol, size_t count, json_object **mpi_json);

#endif
