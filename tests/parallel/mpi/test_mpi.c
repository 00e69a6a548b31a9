/*
 * MPI runs under mpiexec -n P (P = 1..4):
 *   test_mpi solve       every case whose decomposition fits P ranks: the gathered
 *                        solution is bitwise the cpu-seq solution (computed on rank 0)
 *   test_mpi bad-product a decomposition whose product differs from P
 *   test_mpi bad-axis    more ranks along an axis than grid points
 *   test_mpi bad-local   invalid options on the last rank only
 *   test_mpi misuse      every function of mpi.h and mpi_hybrid.h with NULL arguments, and a
 *                        run called from its own monitor: statuses, no crash, no hang
 * The bad-* modes behave as the command will: the same status on every rank, one message
 * (rank 0), exit status 2 everywhere.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hetrelax/mpi.h"
#include "hetrelax/mpi_hybrid.h"
#include "tuning_env.h"

typedef struct mpi_case {
    int ranks; /* 0: any rank count (default decomposition) */
    int dim, nx, ny, nz;
    int decomp[3];
    int ghost;
    double omega;
    hr_rhs rhs;
    hr_precision prec;
    int threads; /* > 1: cpu-threads ranks (a team per rank) */
} mpi_case;

static const mpi_case cases[] = {
    {0, 2, 37, 29, 0, {0, 0, 0}, 1, 1.0, HR_RHS_SPIKE, HR_PREC_SINGLE, 1},
    {0, 3, 13, 11, 15, {0, 0, 0}, 2, 1.0, HR_RHS_SPIKE, HR_PREC_DOUBLE, 1},
    {2, 2, 37, 29, 0, {1, 2, 0}, 1, 1.0, HR_RHS_SPIKE, HR_PREC_SINGLE, 1},
    {2, 2, 37, 29, 0, {2, 1, 0}, 2, 0.8, HR_RHS_MANUFACTURED, HR_PREC_DOUBLE, 1},
    {2, 3, 13, 11, 15, {1, 1, 2}, 2, 1.0, HR_RHS_SPIKE, HR_PREC_SINGLE, 1},
    {3, 2, 37, 29, 0, {1, 3, 0}, 2, 1.0, HR_RHS_SPIKE, HR_PREC_SINGLE, 1},
    {3, 3, 13, 11, 15, {3, 1, 1}, 1, 1.2, HR_RHS_ZERO, HR_PREC_DOUBLE, 1},
    {4, 2, 37, 29, 0, {2, 2, 0}, 1, 1.0, HR_RHS_SPIKE, HR_PREC_SINGLE, 1},
    {4, 2, 37, 29, 0, {2, 2, 0}, 2, 1.0, HR_RHS_MANUFACTURED, HR_PREC_SINGLE, 1},
    {4, 2, 37, 29, 0, {4, 1, 0}, 1, 1.0, HR_RHS_SPIKE, HR_PREC_DOUBLE, 1},
    {4, 3, 13, 11, 15, {1, 2, 2}, 2, 1.0, HR_RHS_SPIKE, HR_PREC_SINGLE, 1},
    {4, 3, 13, 11, 15, {2, 2, 1}, 1, 0.8, HR_RHS_MANUFACTURED, HR_PREC_DOUBLE, 1},
    {2, 2, 37, 29, 0, {1, 2, 0}, 1, 1.0, HR_RHS_SPIKE, HR_PREC_SINGLE, 2},
    {4, 3, 13, 11, 15, {1, 2, 2}, 2, 1.0, HR_RHS_SPIKE, HR_PREC_DOUBLE, 2},
    /* z-slabs with ghost 1: the ghost planes are the neighbours' own (mapped) under mpi-shm */
    {2, 3, 13, 11, 15, {1, 1, 2}, 1, 1.0, HR_RHS_SPIKE, HR_PREC_SINGLE, 1},
    {3, 3, 13, 11, 16, {1, 1, 3}, 1, 0.8, HR_RHS_MANUFACTURED, HR_PREC_DOUBLE, 1},
    {4, 3, 13, 11, 15, {1, 1, 4}, 1, 1.0, HR_RHS_SPIKE, HR_PREC_SINGLE, 2},
    {4, 3, 13, 11, 15, {1, 1, 4}, 1, 1.2, HR_RHS_ZERO, HR_PREC_DOUBLE, 1},
};

/* ctest's ENVIRONMENT picks the variants (HETRELAX_MPI_SHM=0, _MPI_INPLACE=0, _MPI_MAPPED=0),
 * mapped onto the knobs as the command maps them: the library reads no environment. */
static hr_tuning env_tuning;

static void case_options(const mpi_case *c, hr_options *o)
{
    hr_options_default(o);
    o->tuning = env_tuning;
    o->dim = c->dim;
    o->nx = c->nx;
    o->ny = c->ny;
    o->nz = c->dim == 3 ? c->nz : 0;
    o->iters = 31;
    o->tol = 1e-30; /* residual checks every 7 sweeps: rounds shorter than the ghost width */
    o->check_every = 7;
    o->omega = c->omega;
    o->rhs = c->rhs;
    o->precision = c->prec;
    o->boundary = 0.25;
    o->init = HR_INIT_SINE;
    o->backend = c->threads > 1 ? HR_BACKEND_CPU_THREADS : HR_BACKEND_CPU_SEQ;
    o->threads = c->threads > 1 ? c->threads : 0;
}

/* One case: 0 when bitwise equal and every check passed (the verdict is the same on every rank). */
static int run_case(const mpi_case *c, int rank)
{
    hr_options o;
    case_options(c, &o);
    const int *dec = c->decomp[0] ? c->decomp : NULL;
    hr_mpi_solver *s;
    hr_status st = hr_mpi_solver_create(&o, dec, c->ghost, MPI_COMM_WORLD, &s);
    if (st != HR_OK) {
        if (rank == 0) fprintf(stderr, "create: %s: %s\n", hr_status_string(st), hr_mpi_last_error());
        return 1;
    }
    hr_result r;
    st = hr_mpi_solver_run(s, &r);
    const size_t pts = (size_t)c->nx * c->ny * (c->dim == 3 ? c->nz : 1);
    double *got = rank == 0 ? malloc(pts * sizeof *got) : NULL;
    if (st == HR_OK) st = hr_mpi_solver_gather_solution(s, HR_PREC_DOUBLE, got, pts, 0);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (st == HR_OK && size > 1) {
        /* the halos took the transport asked for: shared memory on one node unless
         * tuning.mpi_shm is off (the mpi_solve_p2p tests run that path) */
        const char *want = o.tuning.mpi_shm < 0 ? "(mpi)" : "(mpi-shm";
        if (!strstr(r.device_name, want)) {
            fprintf(stderr, "  rank %d: transport %s, expected %s\n", rank, r.device_name, want);
            st = HR_ERR_INTERNAL;
        }
        /* and mapped ghost planes exactly where they apply: mpi-shm, 3-D z-slabs, ghost 1 */
        hr_mpi_info in;
        hr_mpi_solver_info(s, &in);
        const int mapped = strcmp(want, "(mpi-shm") == 0 && o.tuning.mpi_mapped >= 0 && c->dim == 3 &&
                           c->ghost == 1 && in.decomp[0] == 1 && in.decomp[1] == 1;
        if (!strstr(r.device_name, "mapped planes") != !mapped) {
            fprintf(stderr, "  rank %d: %s, expected %s ghost planes\n", rank, r.device_name,
                    mapped ? "mapped" : "no mapped");
            st = HR_ERR_INTERNAL;
        }
    }
    if (st == HR_OK && size > 1) {
        /* to the last rank as well, in single precision: the same values */
        float *last = rank == size - 1 ? malloc(pts * sizeof *last) : NULL;
        st = hr_mpi_solver_gather_solution(s, HR_PREC_SINGLE, last, pts, size - 1);
        if (st == HR_OK && rank == size - 1) MPI_Send(last, (int)pts, MPI_FLOAT, 0, 9, MPI_COMM_WORLD);
        if (st == HR_OK && rank == 0) {
            float *x = malloc(pts * sizeof *x);
            MPI_Recv(x, (int)pts, MPI_FLOAT, size - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < pts && st == HR_OK; i++)
                if (x[i] != (float)got[i]) st = HR_ERR_INTERNAL;
            if (st != HR_OK) fprintf(stderr, "  gather to rank %d differs\n", size - 1);
            free(x);
        }
        free(last);
        /* MPI-IO: the same bytes in the file as the gathered array */
        char path[] = "/tmp/hr_test_mpi_XXXXXX";
        if (st == HR_OK && rank == 0) {
            const int fd = mkstemp(path);
            if (fd >= 0) close(fd);
        }
        MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (st == HR_OK) st = hr_mpi_solver_write_raw(s, path, HR_PREC_DOUBLE);
        if (st == HR_OK && rank == 0) {
            double *x = malloc(pts * sizeof *x);
            FILE *f = fopen(path, "rb");
            if (!f || fread(x, sizeof *x, pts, f) != pts || fgetc(f) != EOF ||
                memcmp(x, got, pts * sizeof *x) != 0) {
                fprintf(stderr, "  the MPI-IO file differs from the gathered solution\n");
                st = HR_ERR_INTERNAL;
            }
            if (f) fclose(f);
            free(x);
        }
        if (rank == 0) remove(path);
        if (st == HR_OK) {
            hr_status e = hr_mpi_solver_write_raw(s, "/nonexistent-dir/u.raw", HR_PREC_SINGLE);
            if (e != HR_ERR_IO) {
                fprintf(stderr, "  rank %d: an unwritable path gave %s\n", rank, hr_status_string(e));
                st = HR_ERR_INTERNAL;
            }
        }
        /* a root without room: every rank gets the same error, nobody hangs */
        if (st == HR_OK) {
            hr_status e = hr_mpi_solver_gather_solution(s, HR_PREC_DOUBLE, got, rank == 0 ? pts - 1 : 0, 0);
            if (e != HR_ERR_INVALID_ARG) {
                fprintf(stderr, "  rank %d: a short root buffer gave %s\n", rank, hr_status_string(e));
                st = HR_ERR_INTERNAL;
            }
        }
    }
    hr_mpi_info info;
    hr_mpi_solver_info(s, &info);
    hr_mpi_solver_free(s);
    int bad = st != HR_OK;
    if (rank == 0 && !bad) {
        hr_solver *ref;
        hr_result rr;
        double *want = malloc(pts * sizeof *want);
        o.backend = HR_BACKEND_CPU_SEQ; /* the reference */
        o.threads = 0;
        bad = hr_solver_create(&o, &ref) != HR_OK || hr_solver_run(ref, &rr) != HR_OK ||
              hr_solver_solution(ref, HR_PREC_DOUBLE, want, pts) != HR_OK;
        if (!bad && memcmp(want, got, pts * sizeof *got) != 0) {
            size_t x = 0;
            while (memcmp(&want[x], &got[x], sizeof *got) == 0)
                x++;
            fprintf(stderr, "  first difference at %zu: %.17g vs %.17g\n", x, want[x], got[x]);
            bad = 1;
        }
        if (!bad && (r.iterations != rr.iterations ||
                     !(fabs(r.relative_residual - rr.relative_residual) <= 1e-12 * rr.relative_residual)))
            bad = 1;
        printf("%s %d-D %dx%dx%d decomp %dx%dx%d ghost %d omega %.2g threads %d: %ld sweeps, residual %.6e "
               "(cpu-seq %.6e), "
               "%ld exchanges\n",
               bad ? "FAIL" : "ok  ", c->dim, c->nx, c->ny, c->nz, info.decomp[0], info.decomp[1],
               info.decomp[2], c->ghost, c->omega, c->threads, r.iterations, r.relative_residual,
               rr.relative_residual, info.exchanges);
        hr_solver_free(ref);
        free(want);
    } else if (rank == 0) {
        fprintf(stderr, "run: %s: %s\n", hr_status_string(st), hr_mpi_last_error());
    }
    free(got);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* any rank's failure */
    return bad;
}

/* What the command does with bad input: one message from rank 0, status 2 on every rank. */
static int bad_input(const char *mode, int rank, int size)
{
    hr_options o;
    hr_options_default(&o);
    o.n = 3;
    o.iters = 10;
    o.backend = HR_BACKEND_CPU_SEQ;
    int dec[3] = {0, 0, 0};
    if (strcmp(mode, "bad-product") == 0) {
        o.n = 64;
        dec[0] = size + 1; /* product != size */
        dec[1] = 1;
    } else if (strcmp(mode, "bad-axis") == 0) {
        dec[0] = 1; /* 4 ranks along y with 3 rows */
        dec[1] = size;
    } else if (strcmp(mode, "bad-mismatch") == 0) {
        o.n = rank == 0 ? 64 : 65; /* a launch with different arguments per rank */
    } else if (strcmp(mode, "bad-local") == 0) {
        o.n = 64;
        if (rank == size - 1) o.iters = -5;
    } else {
        return 3;
    }
    hr_mpi_solver *s;
    hr_status st = hr_mpi_solver_create(&o, dec[0] ? dec : NULL, 1, MPI_COMM_WORLD, &s);
    if (st == HR_OK) {
        hr_mpi_solver_free(s);
        if (rank == 0) fprintf(stderr, "test_mpi %s: accepted bad input\n", mode);
        return 1;
    }
    /* every rank must hold the same status and message */
    int code[2] = {(int)st, -(int)st};
    MPI_Allreduce(MPI_IN_PLACE, code, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (code[0] != -code[1]) {
        if (rank == 0) fprintf(stderr, "test_mpi %s: ranks disagree on the status\n", mode);
        return 1;
    }
    if (rank == 0) fprintf(stderr, "hetrelax poisson2d: --%s\n", hr_mpi_last_error());
    return 2;
}

/* The run's monitor calls the run (and free) of its own solver: both refused. */
typedef struct reenter {
    hr_mpi_solver *s;
    hr_status inner;
    int calls;
} reenter;

static int reenter_monitor(long it, double res, void *user)
{
    (void)it;
    (void)res;
    reenter *e = user;
    if (e->calls++ > 0) return 0;
    hr_result r;
    e->inner = hr_mpi_solver_run(e->s, &r);
    hr_mpi_solver_free(e->s); /* ignored: the run holds it */
    return 0;
}

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "test_mpi misuse: rank %d: line %d: %s\n", rank, __LINE__, #cond);               \
            bad = 1;                                                                                         \
        }                                                                                                    \
    } while (0)

static int misuse(int rank)
{
    int bad = 0;
    hr_options o;
    hr_options_default(&o);
    o.n = 16;
    o.iters = 20;
    o.backend = HR_BACKEND_CPU_SEQ;
    int out[3];
    hr_mpi_solver *s = (hr_mpi_solver *)0x1;
    CHECK(hr_mpi_resolve_decomp(NULL, 2, NULL, 1, out, NULL, 0) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_resolve_decomp(&o, 2, NULL, 1, NULL, NULL, 0) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_resolve_decomp(&o, 0, NULL, 1, out, NULL, 0) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_solver_create(NULL, NULL, 1, MPI_COMM_WORLD, &s) == HR_ERR_INVALID_ARG);
    CHECK(s == NULL);
    CHECK(hr_mpi_solver_create(&o, NULL, 1, MPI_COMM_WORLD, NULL) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_last_error() != NULL);
    hr_result r;
    CHECK(hr_mpi_solver_run(NULL, &r) == HR_ERR_INVALID_ARG);
    double buf[16 * 16];
    CHECK(hr_mpi_solver_gather_solution(NULL, HR_PREC_DOUBLE, buf, 256, 0) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_solver_write_raw(NULL, "/dev/null", HR_PREC_DOUBLE) == HR_ERR_INVALID_ARG);
    hr_mpi_info info;
    CHECK(hr_mpi_solver_info(NULL, &info) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_solver_set_overlap(NULL, 1) == HR_ERR_INVALID_ARG);
    hr_mpi_solver_free(NULL);
    CHECK(hr_mpi_transport_name((hr_mpi_transport)99) == NULL);
    hr_mpi_hybrid *h = (hr_mpi_hybrid *)0x1;
    CHECK(hr_mpi_hybrid_create(NULL, MPI_COMM_WORLD, &h) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_hybrid_create(&o, MPI_COMM_WORLD, NULL) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_hybrid_run(NULL, &r) == HR_ERR_INVALID_ARG);
    double per = 0.0;
    CHECK(hr_mpi_hybrid_time(NULL, 1, &per) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_hybrid_gather_solution(NULL, HR_PREC_DOUBLE, buf, 256, 0) == HR_ERR_INVALID_ARG);
    hr_hybrid_info hi;
    CHECK(hr_mpi_hybrid_info(NULL, &hi) == HR_ERR_INVALID_ARG);
    hr_mpi_hybrid_choice ch;
    CHECK(hr_mpi_hybrid_get_choice(NULL, &ch) == HR_ERR_INVALID_ARG);
    CHECK(isnan(hr_mpi_hybrid_predict(NULL, 0.5)));
    hr_mpi_hybrid_free(NULL);
    CHECK(hr_mpi_hybrid_last_error() != NULL);

    /* a valid solver: NULL outputs and bad values of each call */
    CHECK(hr_mpi_solver_create(&o, NULL, 1, MPI_COMM_WORLD, &s) == HR_OK);
    CHECK(hr_mpi_solver_run(s, NULL) == HR_OK);
    CHECK(hr_mpi_solver_info(s, NULL) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_solver_write_raw(s, NULL, HR_PREC_DOUBLE) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_solver_write_raw(s, "/dev/null", (hr_precision)7) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_solver_gather_solution(s, (hr_precision)7, buf, 256, 0) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_solver_gather_solution(s, HR_PREC_DOUBLE, NULL, 256, 0) == HR_ERR_INVALID_ARG);
    CHECK(hr_mpi_solver_gather_solution(s, HR_PREC_DOUBLE, buf, 256, -1) == HR_ERR_INVALID_ARG);
    hr_mpi_solver_free(s);

    /* re-entry from the monitor */
    reenter e = {NULL, HR_OK, 0};
    o.monitor = reenter_monitor;
    o.monitor_user = &e;
    o.monitor_every = 5;
    CHECK(hr_mpi_solver_create(&o, NULL, 1, MPI_COMM_WORLD, &e.s) == HR_OK);
    if (e.s) {
        CHECK(hr_mpi_solver_run(e.s, &r) == HR_OK);
        CHECK(e.calls > 0 && e.inner == HR_ERR_INVALID_ARG);
        CHECK(r.iterations == 20);
        hr_mpi_solver_free(e.s);
    }
    int any = bad;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("misuse: %s\n", any ? "FAILED" : "every call answered with a status");
    return any;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char err[256];
    if (hri_tuning_from_env(&env_tuning, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *mode = argc > 1 ? argv[1] : "solve";
    int rc = 0;
    if (strcmp(mode, "solve") == 0) {
        int ran = 0;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            if (cases[i].ranks != 0 && cases[i].ranks != size) continue;
            rc |= run_case(&cases[i], rank);
            ran++;
        }
        if (rank == 0)
            printf("%d ranks: %d cases, %s\n", size, ran, rc ? "FAILED" : "all bitwise equal to cpu-seq");
    } else if (strcmp(mode, "misuse") == 0) {
        rc = misuse(rank);
    } else {
        rc = bad_input(mode, rank, size);
    }
    MPI_Finalize();
    return rc;
}
