/* The grid commands' flag tables (poisson2d, poisson3d): problem, method, iteration,
 * placement, output and checkpoint flags; grid_hybrid.c, grid_mg.c and mpi_glue.c add theirs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_flags.h"
#include "grid_cmd.h"
#include "hetrelax/mg.h"

/* ------------------------------------------------------------------ flags */

static int parse_rhs(const char *cmd, const hr_flag *f, const char *arg)
{
    grid_args *a = f->target;
    a->rhs_file = NULL;
    if (strcmp(arg, "random") == 0 || strncmp(arg, "random:", 7) == 0) {
        unsigned long long seed = 1;
        if (arg[6] == ':') {
            const char *v = arg + 7;
            char *end = NULL;
            errno = 0;
            seed = *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
            if (!(*v >= '0' && *v <= '9') || errno || *end)
                return hr_cli_usage_error(cmd, "--rhs",
                                          "random:SEED takes a non-negative integer seed (got '%s')", v);
        }
        a->o.rhs = HR_RHS_RANDOM;
        a->rhs_seed = seed;
        snprintf(a->rhs_label, sizeof a->rhs_label, "random:%llu", seed);
    } else if (strcmp(arg, "spike") == 0) {
        a->o.rhs = HR_RHS_SPIKE;
    } else if (strcmp(arg, "manufactured") == 0) {
        a->o.rhs = HR_RHS_MANUFACTURED;
    } else if (strcmp(arg, "zero") == 0) {
        a->o.rhs = HR_RHS_ZERO;
    } else {
        a->o.rhs = HR_RHS_ARRAY;
        a->rhs_file = arg;
    }
    return 0;
}

static int parse_init(const char *cmd, const hr_flag *f, const char *arg)
{
    (void)cmd;
    grid_args *a = f->target;
    a->init_file = NULL;
    if (strcmp(arg, "zero") == 0) {
        a->o.init = HR_INIT_ZERO;
    } else if (strcmp(arg, "sine") == 0) {
        a->o.init = HR_INIT_SINE;
    } else {
        a->o.init = HR_INIT_ARRAY;
        a->init_file = arg;
    }
    return 0;
}

/* --omega W|auto: auto is HR_OMEGA_AUTO, which only the red-black methods accept (checked
 * once --method is known). */
static int parse_omega(const char *cmd, const hr_flag *f, const char *arg)
{
    if (strcmp(arg, "auto") == 0) {
        *(double *)f->target = HR_OMEGA_AUTO;
        return 0;
    }
    double w;
    if (hr_cli_double(cmd, "--omega", arg, 0.0, 2.0, &w)) return HR_EXIT_USAGE;
    if (!(w > 0.0 && w < 2.0)) return hr_flag_error(cmd, f, "%s: must be in (0, 2) or auto", arg);
    *(double *)f->target = w;
    return 0;
}

/* --method: the relaxation methods are hr_method values; mg and cg (HR_CAP_MG_HANDLE) are
 * another solver's. */
static int parse_method(const char *cmd, const hr_flag *f, const char *arg)
{
    grid_args *a = f->target;
    hr_entry_info m;
    if (hr_cli_entry(cmd, "--method", arg, HR_KIND_METHOD, &m)) return HR_EXIT_USAGE;
    const int mg = (m.caps & HR_CAP_MG_HANDLE) != 0;
    a->solver = !mg ? GRID_RELAX : m.id == HR_METHOD_MG ? GRID_MG : GRID_CG;
    a->o.method = mg ? HR_METHOD_JACOBI : (hr_method)m.id;
    return 0;
}

static int parse_precision(const char *cmd, const hr_flag *f, const char *arg)
{
    static const char *const names[] = {"single", "double", "mixed", NULL};
    grid_args *a = f->target;
    int i;
    if (hr_cli_choice(cmd, "--precision", arg, names, &i)) return HR_EXIT_USAGE;
    a->mixed = i == 2;
    a->o.precision = i == 0 ? HR_PREC_SINGLE : HR_PREC_DOUBLE;
    return 0;
}

/* The grid problem, shared by poisson2d and poisson3d (which adds --nz). */
static void problem_flags(hr_flagset *fs, grid_args *a)
{
    const int d3 = a->dim == 3;
    hr_flags_group(fs, "problem");
    hr_flags_add(fs, hr_flag_int("n", &a->o.n, 1, 1000000, "N",
                                 d3 ? "interior points per axis (default 256 on CPUs, 512 on a GPU)"
                                    : "interior points per side (default 4096 on CPUs, 16384 on a GPU)"));
    hr_flags_add(fs, hr_flag_int("nx", &a->o.nx, 1, 1000000, "X", "interior points along x (default N)"));
    hr_flags_add(fs, hr_flag_int("ny", &a->o.ny, 1, 1000000, "Y", "interior points along y (default N)"));
    if (d3)
        hr_flags_add(fs, hr_flag_int("nz", &a->o.nz, 1, 1000000, "Z", "interior points along z (default N)"));
    hr_flags_add(
        fs,
        hr_flag_custom("rhs", a, NULL, parse_rhs, "spike|manufactured|zero|random[:SEED]|FILE",
                       d3 ? "spike: h^2 f = 1 at the centre point (default);\n"
                            "manufactured: f = 3 pi^2 sin(pi x) sin(pi y) sin(pi z), exact solution known;\n"
                            "zero: f = 0; random[:SEED]: f uniform in [0, 1) per point from SEED\n"
                            "(default 1; docs/problems.md), made where it is used, the same on any\n"
                            "rank count; FILE: X*Y*Z raw native floats of the run's precision,\n"
                            "x fastest (a file or a pipe)"
                          : "spike: h^2 f = 1 at the centre point (default);\n"
                            "manufactured: f = 2 pi^2 sin(pi x) sin(pi y), exact solution known;\n"
                            "zero: f = 0; random[:SEED]: f uniform in [0, 1) per point from SEED\n"
                            "(default 1; docs/problems.md), made where it is used, the same on any\n"
                            "rank count; FILE: N*N raw native floats of the run's precision,\n"
                            "row-major (a file or a pipe)"));
    hr_flags_add(fs, hr_flag_custom("init", a, NULL, parse_init, "zero|sine|FILE",
                                    "initial interior values (default zero); sine: the product of\n"
                                    "sin(pi i / (n + 1)) per axis, an eigenvector of the iteration (with\n"
                                    "--rhs zero the error against lambda^T u0 is reported); FILE as --rhs"));
    hr_flags_add(fs, hr_flag_double("boundary", &a->o.boundary, -1e300, 1e300, "V",
                                    "Dirichlet boundary value (default 0)"));
    hr_grid_problem_flags(fs, a);
    hr_flags_add(fs, hr_flag_custom("precision", a, NULL, parse_precision, "single|double|mixed",
                                    "(default single; mg, cg, and problems other than the model problem:\n"
                                    "double); mixed (mg, cg): fp32 cycles in an fp64 defect correction"));
    hr_flags_add(fs,
                 hr_flag_switch("flush-subnormals", &a->o.flush_subnormals, 1,
                                "flush subnormal numbers to zero in every CPU thread (x86-64 FTZ and\n"
                                "DAZ): faster where the CPU handles them slowly (the spike's spreading\n"
                                "front); cpu-seq and cpu-threads, bitwise alike; gpu and hybrid keep them"));
    hr_flags_add(fs,
                 hr_flag_custom("method", a, NULL, parse_method, hr_cli_entry_metavar(HR_KIND_METHOD),
                                "jacobi: two grids (default); redblack: in-place red-black Gauss-Seidel;\n"
                                "sor: red-black with the optimal omega (docs/redblack.md);\n"
                                "mg: geometric multigrid, cg: conjugate gradients (docs/multigrid.md)"));
    hr_flags_add(fs,
                 hr_flag_custom("omega", &a->o.omega, NULL, parse_omega, "W|auto",
                                "weight: u' = (1 - W) u + W update(u), 0 < W < 2 (default 1; sor: auto);\n"
                                "auto (redblack, sor): 2 / (1 + sin(pi h)), the optimum for this problem"));
}

void hr_grid_build_flags(hr_flagset *fs, grid_args *a)
{
    static const char *const layouts[] = {"flat", "blocks", NULL};
    static const char *const hostmem[] = {"pinned", "pageable", NULL};
    hr_options *o = &a->o;
    if (a->dim == 3)
        hr_flags_init(
            fs, hr_grid_cmd, "poisson3d [options]",
            "Solves -Laplace(u) = f on a box with zero (or --boundary) Dirichlet values:\n"
            "7-point finite differences on an (X+2)x(Y+2)x(Z+2) grid, h = 1/(X+1) on every\n"
            "axis, and Jacobi sweeps u' = (sum of the 6 neighbours + h^2 f) / 6 (--method: red-black,\n"
            "SOR, multigrid, CG; --backend hybrid: CPU + GPU; under mpiexec: --decomp).\n"
            "--bc, --coef, --lx/--ly/--lz: -div(a grad u) = f on any box with Dirichlet, Neumann or\n"
            "periodic faces and a coefficient field, on the CPU; under mpiexec a slab of z per rank\n"
            "(docs/problems.md).\n",
            "Byte model: each sweep reads u once and writes u' once (+ reads f when f is an array):\n"
            "8 (12) bytes per point in single, 16 (24) in double. GFLOP/s count 8 flops per point\n"
            "(+3 with --omega). Outputs: .raw, .vti (3-D image data), .png (the middle z-plane).\n"
            "Outputs are written to a temporary file and renamed into place: a failed or\n"
            "interrupted run leaves the previous file as it was.\n" HR_CLI_EXIT_HELP);
    else
        hr_flags_init(
            fs, hr_grid_cmd, "poisson2d [options]",
            "Solves -Laplace(u) = f on the unit square with zero (or --boundary) Dirichlet\n"
            "values: 5-point finite differences on an (N+2)x(N+2) grid, h = 1/(N+1), and\n"
            "Jacobi sweeps u' = (u_N + u_S + u_W + u_E + h^2 f) / 4 (--method: red-black, SOR,\n"
            "multigrid, CG; --backend hybrid: CPU + GPU; under mpiexec: --decomp).\n"
            "--bc, --coef, --lx/--ly: -div(a grad u) = f on any rectangle with Dirichlet, Neumann or\n"
            "periodic sides and a coefficient field, on the CPU; under mpiexec a slab of y per rank\n"
            "(docs/problems.md).\n",
            "Byte model: each sweep reads u once and writes u' once (+ reads f when f is an array):\n"
            "8 (12) bytes per point in single, 16 (24) in double. GFLOP/s count 5 flops per point\n"
            "(+3 with --omega).\n"
            "Outputs are written to a temporary file and renamed into place: a failed or\n"
            "interrupted run leaves the previous file as it was.\n" HR_CLI_EXIT_HELP);
    problem_flags(fs, a);
    hr_flags_group(fs, "iteration");
    hr_flags_iteration(fs, &o->iters, &o->tol, &o->check_every, &o->monitor_every, &o->divtol);
    hr_flags_set_help(fs, "divtol", "diverged when the checked relative residual exceeds X (default 1e3)");
    hr_flags_set_help(fs, "iters",
                      "sweeps (the maximum when --tol is given; default 1000, 2000 on a GPU);\n"
                      "--method mg: cycles (default 100); cg: iterations (default 1000)");
    hr_flags_set_help(fs, "tol",
                      "stop when ||b - A u|| / ||b|| < X, checked every --check sweeps (default 0:\n"
                      "run all --iters; --method mg|cg: 1e-8, checked every cycle or iteration)");
    hr_flags_group(fs, "placement");
    hr_flags_placement(fs, &o->backend, &o->kernel, &o->threads, &o->thread_rows, &o->thread_cols, &o->bind,
                       &o->device);
    {
        /* the grid commands also run the hybrid backend (hr_backend order) */
        static const char *const backends[] = {"auto", "cpu-seq", "cpu-threads", "gpu", "hybrid", NULL};
        hr_flags_find(fs, "backend")->choices = backends;
        hr_flags_set_help(fs, "backend",
                          "(default auto: gpu if present, else cpu-threads; hybrid: CPU + GPU)");
    }
    hr_flags_add(fs, hr_flag_choice("layout", HR_ENUM_TARGET(&o->layout), layouts,
                                    "shared grid, or per-thread ghost-cell tiles (NUMA variant)"));
    hr_flags_add(fs, hr_flag_int("alpha", &o->alpha, 1, 1000000, "A",
                                 "async factor / sweeps per pass for kernels that use it"));
    hr_flags_add(fs, hr_flag_choice("host-memory", HR_ENUM_TARGET(&o->host_memory), hostmem,
                                    "GPU host buffers (default pinned)"));
    hr_flags_group(fs, "output");
    hr_flags_output(fs, &a->json, &a->output, &a->quiet, &a->ref_gbps, &a->measure_bw);
    hr_flags_set_help(fs, "output",
                      a->dim == 3 ? "interior solution: .raw (native floats, x fastest), .png "
                                    "(middle\nz-plane), .vti (VTK image data)"
                                  : "interior solution: .raw (native floats), .png (picture), .vti (VTK)");
    hr_flags_add(fs, hr_flag_string("write-matrix", &a->write_matrix, "A.mtx",
                                    "write A of the discrete system (Matrix Market, coordinate real\n"
                                    "general; one row per unknown, x fastest)"));
    hr_flags_add(fs, hr_flag_string("write-rhs", &a->write_rhs, "b.raw",
                                    "write b of the discrete system: raw fp64, one per unknown, the\n"
                                    "boundary's contributions included (projected when singular)"));
    hr_flags_add(fs, hr_flag_switch("keep-diverged", &a->keep_diverged, 1, HR_CLI_KEEP_DIVERGED_HELP));
    hr_flags_add(
        fs, hr_flag_switch("verify", &a->verify, 1, "also run cpu-seq and require a bitwise-equal solution"));
    hr_flags_add(fs,
                 hr_flag_switch("list-kernels", &a->list, GRID_LIST_KERNELS, "list backends and kernels"));
    hr_flags_add(fs,
                 hr_flag_switch("list-methods", &a->list, GRID_LIST_METHODS, "list the methods (--method)"));
    hr_flags_add(fs, hr_flag_switch("list-smoothers", &a->list, GRID_LIST_SMOOTHERS,
                                    "list the multigrid smoothers (--smoother)"));
    hr_flags_group(fs, "checkpoints");
    hr_flags_add(fs, hr_flag_string("checkpoint", &a->checkpoint, "FILE",
                                    "write the state to FILE every --checkpoint-every sweeps and on\n"
                                    "SIGINT/SIGTERM (then exit with status 128 + signal)"));
    hr_flags_add(fs, hr_flag_long("checkpoint-every", &a->checkpoint_every, 1, 1000000000L, "K",
                                  "sweeps between checkpoints (default --iters / 10)"));
    hr_flags_add(fs, hr_flag_string("restart", &a->restart, "FILE",
                                    "continue from a checkpoint; --iters counts from the original start,\n"
                                    "so the result is bitwise that of the uninterrupted run (the problem,\n"
                                    "--method, --omega and --rhs values must be the checkpoint's)"));
}
