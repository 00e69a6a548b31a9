/*
 * The grid commands (poisson2d, poisson3d) across their files: the parsed arguments and the
 * pieces shared by the command (cmd_poisson2d.c), its checkpointed loop (grid_chunks.c) and
 * its report (grid_report.c).
 */
#ifndef HR_GRID_CMD_H
#define HR_GRID_CMD_H

#include <json-c/json.h>
#include <stdio.h>

#include "atomic_file.h"
#include "checkpoint.h"
#include "cli_flags.h"
#include "hetrelax/hetrelax.h"
#include "mpi_glue.h"
#include "tuning_cli.h"

/* One face's --bc item: the kind, and its constant value or the file of its values. */
typedef struct grid_face_arg {
    int set;          /* given by --bc (else: Dirichlet with the --boundary value) */
    hr_bc_kind kind;  /* dirichlet, neumann, periodic */
    int has_value;    /* a VALUE or FILE was given (else: --boundary, or a zero flux) */
    double value;     /* VALUE */
    const char *file; /* FILE: raw fp64, hr_problem_face_points values (file_len characters of
                         the --bc argument) */
    size_t file_len;
} grid_face_arg;

typedef struct grid_args {
    hr_options o;
    int dim;
    int nx, ny, nz; /* resolved extents */
    const char *json, *output, *rhs_file, *init_file, *checkpoint, *restart;
    long checkpoint_every;
    int measure_bw, quiet, verify, list; /* list: GRID_LIST_* or 0 */
    double ref_gbps;
    hr_mpi_cli_args mpi;
    /* multigrid and CG (--method mg|cg; grid_mg.c) */
    int solver;                  /* GRID_RELAX, GRID_MG or GRID_CG */
    int pc, cycle;               /* indices of the --pc, --cycle choices */
    int smoother;                /* the --smoother's hr_mg_smoother (its registry id) */
    int pre, post, levels;       /* levels 0: all the grid allows */
    int coarse_on, coarse_level; /* --coarse-on gpu|cpu, --coarse-level L (0: automatic) */
    int mixed;                   /* --precision mixed */
    int explain;                 /* --explain (hybrid) */
    int keep_diverged;           /* --keep-diverged: a diverged state to NAME.diverged.EXT */
    /* the problem beyond the model (grid_problem.c): --bc, --coef, --lx/--ly/--lz */
    grid_face_arg bc[6];         /* per face, in hr_face order (set: given by --bc) */
    double coef;                 /* --coef VALUE (0: not given) */
    const char *coef_file;       /* --coef FILE */
    double length[3];            /* --lx, --ly, --lz (0: not given) */
    const char *write_matrix;    /* --write-matrix A.mtx */
    const char *write_rhs;       /* --write-rhs b.raw */
    unsigned long long rhs_seed; /* --rhs random:SEED */
    char rhs_label[32];          /* "random:SEED" for the summary and the JSON */
} grid_args;

enum { GRID_RELAX = 0, GRID_MG, GRID_CG };
/* the listings (--list-kernels, --list-methods, --list-smoothers) */
enum { GRID_LIST_KERNELS = 1, GRID_LIST_METHODS, GRID_LIST_SMOOTHERS };

/* The command's name for error lines (poisson2d or poisson3d) and the stream of its
 * human-readable output (stderr when the JSON goes to stdout). */
extern const char *hr_grid_cmd;
extern FILE *hr_grid_out;
/* b = f + boundary terms is zero (--rhs zero or a zero file, boundary 0): the residuals the
 * library reports are absolute, and are labelled so. */
extern int hr_grid_absolute;

/* The problem's b is zero: no right-hand side values and a zero boundary (values: the --rhs
 * FILE's, NULL for the built-in ones). */
int hr_grid_b_is_zero(const hr_options *o, const double *values, size_t count);
/* A single-precision run's --rhs FILE values: 0, or HR_EXIT_USAGE (printed) when single
 * precision cannot hold the problem. */
int hr_grid_check_single_values(const grid_args *a, const double *f, size_t count);

static inline size_t hr_grid_esize(hr_precision p)
{
    return p == HR_PREC_SINGLE ? 4 : 8;
}

/* Reads an --rhs or --init FILE of `count` values of precision `prec` into a new buffer
 * (*out); 0, or exit 2 after one line saying why (missing, a folder, too short, too long, a
 * value that is not finite). */
int hr_grid_read_values(const char *flag, const char *path, size_t count, hr_precision prec, double **out);

/* Prints one monitor line (an hr_monitor_fn). */
int hr_grid_monitor_print(long it, double res, void *user);

/* A checkpointed run (--checkpoint, --restart). */
typedef struct chunk_run {
    long done0; /* sweeps in the state the run started from */
    long done;  /* sweeps done so far, counted from the original start */
    void *buf;  /* the interior, for checkpoints */
    size_t count;
    hr_ckpt_info info; /* what this run writes */
    hr_ckpt_info from; /* the --restart file's header */
} chunk_run;

/* Reads a --restart file into c->buf after checking that it is this problem. */
int hr_grid_load_restart(const grid_args *a, chunk_run *c);
/* Once the solver resolved what runs (cfg): the file was made by the same update rule
 * (method, weight, kernel class) and --rhs values (c->info.rhs_hash). 0 or exit 2. */
int hr_grid_check_restart(const grid_args *a, const chunk_run *c, const hr_config *cfg);
/* Runs the sweeps from c->done to --iters on s, which was created with iters 0, tol 0
 * and no monitor; see grid_chunks.c. Returns 0, a positive exit status (printed), or
 * -hr_status of a failed library call; *sig: the signal that stopped it (0: none). */
int hr_grid_run_chunks(const grid_args *a, hr_solver *s, chunk_run *c, hr_result *total, int *sig);

/* "field: reason" from the library as "--field: reason" when the command has that flag. */
void hr_grid_flagify(hr_flagset *fs, const char *why, char *out, size_t size);

/* Multigrid and CG (grid_mg.c): the flags, and the run after the common checks. */
void hr_grid_mg_flags(hr_flagset *fs, grid_args *a);
int hr_grid_run_mg(grid_args *a, hr_flagset *fs);

/* The hybrid backend (grid_hybrid.c): flags; checks once the backend is resolved (0 or exit
 * status, printed); after the run, --explain and the JSON "hybrid" object (NULL unless s
 * runs the hybrid backend). */
void hr_grid_hybrid_flags(hr_flagset *fs, grid_args *a);
/* --gpus N (before the backend is resolved): refusals, and --backend gpu becomes the
 * hybrid module's chain of N GPU parts. */
int hr_grid_gpus_prepare(grid_args *a, hr_flagset *fs, int use_mpi);
int hr_grid_hybrid_check(const grid_args *a, hr_flagset *fs, hr_backend eb, int gpus);
json_object *hr_grid_hybrid_report(const grid_args *a, const hr_solver *s, const hr_result *r);

/* The problem flags (grid_problem.c): --bc, --coef, --lx/--ly(/--lz), --write-matrix,
 * --write-rhs. */
void hr_grid_problem_flags(hr_flagset *fs, grid_args *a);
/* 1 when the flags describe another problem than the model problem the engines of
 * poisson2d/poisson3d run (a --bc other than one Dirichlet value on every face, a --coef other
 * than 1, box lengths); then the run goes through hr_grid_solver (grid_general.c). An --bc of
 * one Dirichlet value everywhere becomes --boundary. */
int hr_grid_problem_changed(grid_args *a, const hr_flagset *fs);
/* The extents of a multigrid or CG run when --n/--nx/--ny/--nz leave some out (as grid_mg.c
 * resolves them: 1023 in 2-D, 127 in 3-D without any). */
void hr_grid_mg_extents(const grid_args *a, const hr_flagset *fs, int *nx, int *ny, int *nz);

/* The problem of the resolved extents a->nx, a->ny, a->nz as hr_problem, its arrays read from
 * the --bc and --coef files (fp64) and owned by *h; its right-hand side --rhs's, but a FILE's
 * values come with hr_grid_problem_values. 0, or exit 2 after one line naming the flag. */
typedef struct grid_problem {
    hr_problem p;
    double *face[6];    /* the --bc files' values */
    double *coef;       /* the --coef file's values */
    double *rhs, *init; /* the --rhs and --init files' values */
} grid_problem;
int hr_grid_problem_build(const grid_args *a, hr_flagset *fs, grid_problem *h);
/* The --rhs (and with `init`, --init) FILE's values of precision `prec` into the problem. 0, or
 * exit 2 after one line. */
int hr_grid_problem_values(const grid_args *a, hr_precision prec, int init, grid_problem *h);
void hr_grid_problem_free(grid_problem *h);

/* --write-matrix and --write-rhs: opened (their temporary files) before the work, written
 * from the problem, renamed into place at the end of a run that did not fail. */
typedef struct grid_system_out {
    hr_atomic A, b;
    int A_open, b_open;
    size_t count;  /* unknowns */
    long long nnz; /* A's entries */
    int singular;  /* b was projected */
} grid_system_out;
/* Opens the outputs named (0 or exit 2 after one line). */
int hr_grid_system_open(const grid_args *a, grid_system_out *w);
/* Writes A and b of p into the temporary files: 0, or (everything aborted, one line printed)
 * exit 2 for a matrix larger than hetrelax/sparse.h takes, 1 for a failed write. */
int hr_grid_system_prepare(const grid_args *a, const hr_problem *p, grid_system_out *w);
/* Renames the prepared files into place ("wrote" lines unless --quiet); 0 or exit 1. */
int hr_grid_system_commit(const grid_args *a, grid_system_out *w);
void hr_grid_system_abort(grid_system_out *w);

/* The run of a problem other than the model problem (or of multigrid sizes the model engine
 * does not take) through hr_grid_solver (grid_general.c). */
int hr_grid_run_general(grid_args *a, hr_flagset *fs);

/* The flag table of the grid commands (grid_flags.c). */
void hr_grid_build_flags(hr_flagset *fs, grid_args *a);

/* Outputs opened (as temporary files) before the run. */
typedef struct outputs {
    hr_atomic out, json;
    int out_open, json_open;
} outputs;

/* The run's header lines (before the sweeps); cfg may be NULL. */
void hr_grid_print_header(const grid_args *a, const char *rhs_name, hr_backend b, const char *kernel,
                          const char *bw_what, const hr_config *cfg, long done0);
/* After the sweeps: the summary, --verify, --output, --json (on rank 0 of an MPI run; the
 * other ranks' output goes to /dev/null and they hold no solution). Frees sol; takes
 * mpi_json and hybrid_json. Returns the exit status. */
int hr_grid_finish(const grid_args *a, outputs *wp, const hr_result *rp, const hr_config *cfg, double *sol,
                   const char *rhs_name, hr_status st, long restarted_from, json_object *mpi_json,
                   json_object *hybrid_json);

/* Runs cpu-seq for `sweeps` and compares with sol bitwise; prints the verdict. flush: whether the
 * run flushed subnormals (the reference does as it did). */
int hr_grid_verify(const grid_args *a, long sweeps, const double *sol, int flush);
/* The summary's line on --flush-subnormals (none when it was not given): flushed, or kept by a
 * GPU backend (`backend`). */
void hr_grid_print_flush(const grid_args *a, int flushed, const char *backend);
/* The run as a JSON object; mpi (may be NULL) is added as "mpi" and owned by the result. */
json_object *hr_grid_result_json(const grid_args *a, const hr_result *r, const char *rhs_name,
                                 const hr_config *cfg, long restarted_from, json_object *mpi,
                                 json_object *hybrid);

#endif
