/*
 * The structured-grid handle on MPI ranks (hr_grid_solver_create_mpi), under mpiexec -n P
 * (P = 1..4):
 *   test_grid_solver_mpi solve   every case: the gathered solution is bitwise the one-process
 *                                cpu-seq hr_grid_solver run (on rank 0), for the problem's f,
 *                                then another f and x0, then the problem's f again, on one
 *                                handle (set up once, solve many)
 *   test_grid_solver_mpi refuse  what does not run on ranks (mixed-precision mg, cpu-threads, a kernel,
 *                                keep_history), options bad on one rank only, no place for
 *                                the handle on one rank, a rhs given on some ranks only, no
 *                                room on the root: the same status on
 *                                every rank, the message naming the option, no hang
 * The verdict is the same on every rank; uses only the public headers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/mpi.h"

typedef struct gs_case {
    int dim, nx, ny, nz;
    int decomp_x; /* 1: every rank along x (decomp size x 1 [x 1]); 0: the default */
    int ghost;
    double omega;
    hr_precision prec;
    double tol; /* > 0: stops on the residual, checked every 7 sweeps */
} gs_case;

static const gs_case cases[] = {
    {2, 37, 29, 0, 0, 0, 0.0, HR_PREC_DEFAULT, 0.0},
    {2, 37, 29, 0, 1, 2, 0.8, HR_PREC_SINGLE, 0.0},
    {3, 13, 11, 15, 0, 1, 0.9, HR_PREC_DOUBLE, 0.1},
    {3, 13, 11, 15, 1, 2, 0.0, HR_PREC_SINGLE, 0.0},
};

static double *values(size_t n, uint64_t seed)
{
    double *f = malloc(n * sizeof *f);
    for (size_t i = 0; f && i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        f[i] = (double)(seed >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    }
    return f;
}

static void case_setup(const gs_case *c, int size, hr_problem *p, hr_grid_options *o)
{
    hr_problem_init_model(p, c->dim, c->nx, c->ny, c->nz);
    hr_problem_set_bc(p, HR_FACES_ALL, HR_BC_DIRICHLET, 0.25, NULL);
    hr_problem_set_init(p, HR_INIT_SINE, NULL);
    hr_problem_set_rhs(p, HR_RHS_MANUFACTURED, NULL);
    hr_grid_options_default(o);
    o->method = HR_METHOD_JACOBI;
    o->omega = c->omega;
    o->precision = c->prec;
    o->max_iters = 45;
    o->tol = c->tol;
    o->check_every = c->tol > 0.0 ? 7 : 0;
    o->ghost = c->ghost;
    if (c->decomp_x) {
        o->decomp[0] = size;
        o->decomp[1] = 1;
        o->decomp[2] = c->dim == 3 ? 1 : 0;
    }
}

/* 1 (and a line) where a and b differ in a bit. */
static int differs(const char *what, const double *a, const double *b, size_t n)
{
    if (memcmp(a, b, n * sizeof *a) == 0) return 0;
    size_t x = 0;
    while (memcmp(&a[x], &b[x], sizeof *a) == 0)
        x++;
    fprintf(stderr, "  %s: first difference at %zu: %.17g (ranks) vs %.17g (cpu-seq)\n", what, x, a[x], b[x]);
    return 1;
}

/* One case: 0 when every solve is bitwise the reference's (the same verdict on every rank). */
static int run_case(const gs_case *c, int rank, int size)
{
    hr_problem p;
    hr_grid_options o;
    case_setup(c, size, &p, &o);
    const size_t n = hr_problem_unknowns(&p);
    /* every rank builds the same arrays: each passes the whole f and x0 */
    double *f = values(n, 17), *x0 = values(n, 29);
    int bad = !f || !x0;
    hr_grid_solver *s = NULL;
    hr_status st = hr_grid_solver_create_mpi(&p, &o, MPI_COMM_WORLD, &s);
    if (st != HR_OK) {
        fprintf(stderr, "  rank %d: create: %s: %s\n", rank, hr_status_string(st), hr_last_error());
        bad = 1;
    }
    hr_grid_info info;
    if (!bad && (hr_grid_solver_info(s, &info) != HR_OK || info.ranks != size ||
                 strcmp(info.engine, "mpi-solver") != 0 || info.backend != HR_BACKEND_CPU_SEQ)) {
        fprintf(stderr, "  rank %d: info: ranks %d engine %s backend %s\n", rank, info.ranks, info.engine,
                hr_backend_name(info.backend));
        bad = 1;
    }
    /* three solves on the handle: the problem's f; another f and x0; the problem's f again */
    const double *rhs_of[3] = {NULL, f, NULL}, *x0_of[3] = {NULL, x0, NULL};
    double *got[3] = {NULL, NULL, NULL};
    hr_result res[3];
    for (int k = 0; k < 3 && !bad; k++) {
        st = hr_grid_solver_solve(s, rhs_of[k], x0_of[k], &res[k]);
        if (st != HR_OK) {
            fprintf(stderr, "  rank %d: solve %d: %s: %s\n", rank, k, hr_status_string(st),
                    hr_grid_solver_last_error(s));
            bad = 1;
            break;
        }
        got[k] = rank == 0 ? malloc(n * sizeof *got[k]) : NULL;
        st = hr_grid_solver_solution(s, HR_PREC_DOUBLE, got[k], rank == 0 ? n : 0);
        if (st != HR_OK) {
            fprintf(stderr, "  rank %d: solution %d: %s: %s\n", rank, k, hr_status_string(st),
                    hr_grid_solver_last_error(s));
            bad = 1;
        }
    }
    hr_grid_solver_free(s);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!bad && rank == 0) {
        /* the reference: the one-process cpu-seq handle, the same three solves */
        hr_grid_options ro = o;
        ro.backend = HR_BACKEND_CPU_SEQ;
        ro.decomp[0] = ro.decomp[1] = ro.decomp[2] = 0;
        ro.ghost = 0;
        hr_grid_solver *r = NULL;
        double *want = malloc(n * sizeof *want);
        st = want ? hr_grid_solver_create(&p, &ro, &r) : HR_ERR_NO_MEMORY;
        if (st != HR_OK) fprintf(stderr, "  reference: %s: %s\n", hr_status_string(st), hr_last_error());
        bad = st != HR_OK;
        for (int k = 0; k < 3 && !bad; k++) {
            hr_result rr;
            bad = hr_grid_solver_solve(r, rhs_of[k], x0_of[k], &rr) != HR_OK ||
                  hr_grid_solver_solution(r, HR_PREC_DOUBLE, want, n) != HR_OK;
            const char *what[3] = {"the problem's f", "another f and x0", "the problem's f again"};
            bad = bad || differs(what[k], got[k], want, n);
            if (!bad && (res[k].iterations != rr.iterations || res[k].reason != rr.reason)) {
                fprintf(stderr, "  %s: %ld sweeps (%s) vs %ld (%s)\n", what[k], res[k].iterations,
                        hr_reason_string(res[k].reason), rr.iterations, hr_reason_string(rr.reason));
                bad = 1;
            }
            printf("%s %d-D %dx%dx%d %s ghost %d omega %.2g %s: %ld sweeps, residual %.6e (cpu-seq %.6e)\n",
                   bad ? "FAIL" : "ok  ", c->dim, c->nx, c->ny, c->nz, c->decomp_x ? "x-slabs" : "default",
                   c->ghost, c->omega, what[k], res[k].iterations, res[k].relative_residual,
                   rr.relative_residual);
        }
        /* the second f changed the answer: a solve that ignored it would not pass */
        if (!bad && memcmp(got[0], got[1], n * sizeof *got[0]) == 0) {
            fprintf(stderr, "  another f gave the same solution\n");
            bad = 1;
        }
        hr_grid_solver_free(r);
        free(want);
    }
    for (int k = 0; k < 3; k++)
        free(got[k]);
    free(f);
    free(x0);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return bad;
}

/* Every rank got `st` == want and a message containing `field`; 1 otherwise. */
static int same_everywhere(const char *what, hr_status st, hr_status want, const char *msg, const char *field,
                           int rank, int size)
{
    int codes[64];
    const int mine = (int)st;
    MPI_Allgather(&mine, 1, MPI_INT, codes, 1, MPI_INT, MPI_COMM_WORLD);
    int bad = !strstr(msg, field);
    if (bad) fprintf(stderr, "  rank %d: %s: the message \"%s\" does not name %s\n", rank, what, msg, field);
    for (int r = 0; r < size; r++)
        if (codes[r] != (int)want) {
            if (rank == 0)
                fprintf(stderr, "  %s: rank %d returned %s, expected %s\n", what, r,
                        hr_status_string((hr_status)codes[r]), hr_status_string(want));
            bad = 1;
        }
    if (rank == 0 && !bad) printf("ok   %s: %s on every rank (\"%s\")\n", what, hr_status_string(want), msg);
    return bad;
}

/* A create that must fail the same way on every rank (and leave *out NULL). */
static int refused(const char *what, const hr_problem *p, const hr_grid_options *o, hr_status want,
                   const char *field, int rank, int size)
{
    hr_grid_solver *s = (hr_grid_solver *)&s; /* not NULL: create must clear it */
    const hr_status st = hr_grid_solver_create_mpi(p, o, MPI_COMM_WORLD, &s);
    int bad = same_everywhere(what, st, want, hr_last_error(), field, rank, size);
    if (s != NULL) {
        fprintf(stderr, "  rank %d: %s: *out not NULL after a failed create\n", rank, what);
        bad = 1;
        if (st == HR_OK) hr_grid_solver_free(s);
    }
    return bad;
}

static int refusals(int rank, int size)
{
    hr_problem p;
    hr_grid_options o;
    int bad = 0;
    hr_problem_init_model(&p, 2, 37, 29, 0);
    hr_grid_options_default(&o);
    o.method = HR_METHOD_MG; /* multigrid runs there in double (the general engine: test_general_mpi) */
    o.precision = HR_PREC_MIXED;
    bad |= refused("method mg, mixed precision", &p, &o, HR_ERR_UNSUPPORTED, "precision", rank, size);
    hr_grid_options_default(&o);
    o.backend = HR_BACKEND_CPU_THREADS;
    bad |= refused("backend cpu-threads", &p, &o, HR_ERR_UNSUPPORTED, "backend", rank, size);
    hr_grid_options_default(&o);
    o.kernel = "tuned";
    bad |= refused("a kernel", &p, &o, HR_ERR_INVALID_ARG, "kernel", rank, size);
    hr_grid_options_default(&o);
    o.keep_history = 1;
    bad |= refused("keep_history", &p, &o, HR_ERR_UNSUPPORTED, "keep_history", rank, size);
    hr_grid_options_default(&o);
    o.backend = HR_BACKEND_HYBRID;
    o.ghost = 2;
    bad |= refused("ghost with backend hybrid", &p, &o, HR_ERR_INVALID_ARG, "ghost", rank, size);
    /* bad on the last rank only: the others must not wait for it in a collective */
    hr_grid_options_default(&o);
    o.omega = rank == size - 1 ? 3.0 : 0.0;
    bad |= refused("omega bad on the last rank only", &p, &o, HR_ERR_INVALID_ARG, "omega", rank, size);
    hr_grid_options_default(&o);
    o.decomp[0] = size + 1;
    o.decomp[1] = 1;
    bad |=
        refused("a decomposition for another rank count", &p, &o, HR_ERR_INVALID_ARG, "decomp", rank, size);

    /* no place for the handle on the last rank only: refused everywhere, no hang */
    hr_grid_options_default(&o);
    hr_grid_solver *h = NULL;
    hr_status st = hr_grid_solver_create_mpi(&p, &o, MPI_COMM_WORLD, rank == size - 1 ? NULL : &h);
    bad |= same_everywhere("out NULL on the last rank only", st, HR_ERR_INVALID_ARG, hr_last_error(), "out",
                           rank, size);
    if (st == HR_OK && h) hr_grid_solver_free(h);

    /* calls on a handle that runs */
    hr_grid_options_default(&o);
    hr_grid_solver *s = NULL;
    st = hr_grid_solver_create_mpi(&p, &o, MPI_COMM_WORLD, &s);
    bad |= same_everywhere("create", st, HR_OK, "", "", rank, size);
    if (st != HR_OK) return 1; /* every rank saw the same */
    const size_t n = hr_problem_unknowns(&p);
    double *f = values(n, 5);
    st = hr_grid_solver_solve(s, rank == 0 ? f : NULL, NULL, NULL);
    bad |= same_everywhere("rhs on rank 0 only", st, size > 1 ? HR_ERR_INVALID_ARG : HR_OK,
                           size > 1 ? hr_grid_solver_last_error(s) : "rhs", "rhs", rank, size);
    st = hr_grid_solver_solution(s, HR_PREC_DOUBLE, NULL, 0);
    bad |= same_everywhere("no room on rank 0", st, HR_ERR_INVALID_ARG, hr_grid_solver_last_error(s),
                           "solution", rank, size);
    st = hr_grid_solver_solution(s, (hr_precision)99, f, n);
    bad |= same_everywhere("a bad precision", st, HR_ERR_INVALID_ARG, hr_grid_solver_last_error(s), "prec",
                           rank, size);
    /* the handle still works after the refusals */
    st = hr_grid_solver_solve(s, f, NULL, NULL);
    bad |= same_everywhere("a solve after the refusals", st, HR_OK, "", "", rank, size);
    hr_grid_solver_free(s);
    free(f);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return bad;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "solve";
    int rc = 0;
    if (size > 64) {
        rc = 1;
    } else if (strcmp(mode, "solve") == 0) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            rc |= run_case(&cases[i], rank, size);
        if (rank == 0)
            printf("%d ranks: %s\n", size, rc ? "FAILED" : "every solve bitwise equal to the cpu-seq handle");
    } else if (strcmp(mode, "refuse") == 0) {
        rc = refusals(rank, size);
        if (rank == 0) printf("%d ranks: %s\n", size, rc ? "FAILED" : "every refusal the same on every rank");
    } else {
        if (rank == 0) fprintf(stderr, "usage: test_grid_solver_mpi solve|refuse\n");
        rc = 2;
    }
    MPI_Finalize();
    return rc;
}
