/*
 * mpi_solve: one decomposed solve under mpiexec, for the benchmarks (bench/experiments/mpi_scaling.py)
 * until the command has --decomp. Checks the answer first (a short run bitwise against
 * cpu-seq on rank 0), then times `repeats` runs of `iters` sweeps after a discarded
 * warm-up, and prints one JSON object on rank 0.
 *
 *   mpiexec -n P mpi_solve [--dim 2|3] [--n N | --nx X --ny Y --nz Z] [--iters T]
 *       [--decomp AxB[xC]] [--ghost G] [--precision single|double] [--repeats R]
 *       [--no-overlap] [--no-verify] [--bandwidth] [--threads T] [--threads-ref T]
 *       [--backend gpu] [--verify-div D] [--rhs spike|zero] [--init zero|sine]
 *       [--transport auto|host|device|nccl]
 *   mpiexec -n 2 mpi_solve --pingpong       latency and bandwidth of the host path
 *
 * --threads T: T threads per rank (cpu-threads ranks);
 * --bandwidth: rank 0 measures the host copy bandwidth with P threads (same run);
 * --threads-ref T: rank 0 also times the cpu-threads backend with T threads in one
 * process on the same problem (the "ranks vs threads" comparison), one solve after each
 * MPI repeat while the other ranks sleep in a barrier (interleaved: the machine's drifts
 * hit both; and no rank spins on the reference's cores).
 * --backend gpu: GPU ranks (bench/experiments/mpi_gpu_scaling.py); the JSON adds the device overlap's
 * split (wait, compute, hidden fraction) and where the messages lived; --transport picks
 * how (hr_mpi_solver_create_transport: host staging, CUDA-aware MPI or NCCL).
 * --verify-div D: the bitwise check runs on the extents divided by D (at least 8 each),
 * same decomposition and ghost (the cpu-seq reference of a 512^3 grid takes long).
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hetrelax/mpi.h"
#include "tuning_env.h"

typedef struct args {
    hr_options o;
    int decomp[3], have_decomp, ghost, repeats, overlap, verify, bandwidth, threads_ref, pingpong;
    int verify_div;
    hr_mpi_transport transport;
} args;

static int parse(int argc, char **argv, args *a, int rank)
{
    hr_options_default(&a->o);
    /* the HETRELAX_* variables (bench/experiments/mpi_trace.py: HETRELAX_DSOLVER_TRACE) onto the knobs, as
     * the command maps them: the library reads no environment */
    char err[256];
    if (hri_tuning_from_env(&a->o.tuning, err, sizeof err) != 0) {
        if (rank == 0) fprintf(stderr, "mpi_solve: %s\n", err);
        return 0;
    }
    a->o.n = 512;
    a->o.iters = 100;
    a->o.backend = HR_BACKEND_CPU_SEQ;
    a->ghost = 1;
    a->repeats = 5;
    a->overlap = 1;
    a->verify = 1;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--no-overlap")) {
            a->overlap = 0;
            continue;
        }
        if (!strcmp(f, "--no-verify")) {
            a->verify = 0;
            continue;
        }
        if (!strcmp(f, "--bandwidth")) {
            a->bandwidth = 1;
            continue;
        }
        if (!strcmp(f, "--pingpong")) {
            a->pingpong = 1;
            continue;
        }
        if (!v) goto bad;
        i++;
        if (!strcmp(f, "--dim"))
            a->o.dim = atoi(v);
        else if (!strcmp(f, "--n"))
            a->o.n = atoi(v);
        else if (!strcmp(f, "--nx"))
            a->o.nx = atoi(v);
        else if (!strcmp(f, "--ny"))
            a->o.ny = atoi(v);
        else if (!strcmp(f, "--nz"))
            a->o.nz = atoi(v);
        else if (!strcmp(f, "--iters"))
            a->o.iters = atol(v);
        else if (!strcmp(f, "--ghost"))
            a->ghost = atoi(v);
        else if (!strcmp(f, "--repeats"))
            a->repeats = atoi(v);
        else if (!strcmp(f, "--threads")) {
            a->o.threads = atoi(v);
            a->o.backend = a->o.threads > 1 ? HR_BACKEND_CPU_THREADS : HR_BACKEND_CPU_SEQ;
        } else if (!strcmp(f, "--backend")) {
            if (strcmp(v, "gpu") != 0) goto bad;
            a->o.backend = HR_BACKEND_GPU;
        } else if (!strcmp(f, "--transport")) {
            int t = -1;
            for (int q = 0; q < 4; q++)
                if (!strcmp(v, hr_mpi_transport_name((hr_mpi_transport)q))) t = q;
            if (t < 0) goto bad;
            a->transport = (hr_mpi_transport)t;
        } else if (!strcmp(f, "--verify-div"))
            a->verify_div = atoi(v);
        else if (!strcmp(f, "--rhs"))
            a->o.rhs = !strcmp(v, "zero") ? HR_RHS_ZERO : HR_RHS_SPIKE;
        else if (!strcmp(f, "--init"))
            a->o.init = !strcmp(v, "sine") ? HR_INIT_SINE : HR_INIT_ZERO;
        else if (!strcmp(f, "--threads-ref"))
            a->threads_ref = atoi(v);
        else if (!strcmp(f, "--precision"))
            a->o.precision = !strcmp(v, "double") ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
        else if (!strcmp(f, "--decomp")) {
            a->decomp[2] = 0;
            if (sscanf(v, "%dx%dx%d", &a->decomp[0], &a->decomp[1], &a->decomp[2]) < 2) goto bad;
            a->have_decomp = 1;
        } else
            goto bad;
        continue;
    bad:
        if (rank == 0) fprintf(stderr, "mpi_solve: %s: bad flag or value\n", f);
        return 0;
    }
    if (a->repeats < 1) a->repeats = 1;
    return 1;
}

/* Ranks 0 and 1 bounce messages of 8 B .. 16 MiB (host buffers, the transport's path):
 * half the round trip per size, best of a few trials; the latency is the smallest size's,
 * the bandwidth the largest size's. */
static void pingpong(int rank, int size)
{
    const int maxlog = 24;
    char *buf = malloc((size_t)1 << maxlog);
    memset(buf, 1, (size_t)1 << maxlog);
    if (rank == 0) printf("{\"pingpong\": [");
    double lat = 0.0, gbps = 0.0;
    for (int k = 3; k <= maxlog && size >= 2; k++) {
        const int bytes = 1 << k, reps = k < 16 ? 200 : 20;
        double best = 1e30;
        for (int trial = 0; trial < 3; trial++) {
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            for (int r = 0; r < reps; r++) {
                if (rank == 0) {
                    MPI_Send(buf, bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
                    MPI_Recv(buf, bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(buf, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
                }
            }
            const double half = (MPI_Wtime() - t0) / reps / 2.0;
            if (half < best) best = half;
        }
        if (k == 3) lat = best;
        if (k == maxlog) gbps = bytes / best * 1e-9;
        if (rank == 0) printf("%s{\"bytes\": %d, \"half_rtt_s\": %.4e}", k > 3 ? ", " : "", bytes, best);
    }
    if (rank == 0) printf("], \"alpha_s\": %.4e, \"gbps\": %.4f, \"ranks\": %d}\n", lat, gbps, size);
    free(buf);
}

/* A barrier whose waiters sleep (OpenMPI's own spins on every core, which would take the
 * cores from rank 0's threads reference). */
static void quiet_wait(MPI_Comm comm)
{
    MPI_Request q;
    MPI_Ibarrier(comm, &q);
    int done = 0;
    MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    while (!done) {
        const struct timespec ts = {0, 200000}; /* 0.2 ms */
        nanosleep(&ts, NULL);
        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    }
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The short bitwise check: 1 when the decomposed solution equals cpu-seq's. */
static int verify(const args *a, int rank, const char **why)
{
    hr_options o = a->o;
    o.iters = 2 * a->ghost + 3;
    if (a->verify_div > 1) {
        const int dim = o.dim == 3 ? 3 : 2;
        int *ext[3] = {&o.nx, &o.ny, &o.nz};
        for (int q = 0; q < dim; q++) {
            const int n = *ext[q] ? *ext[q] : o.n;
            *ext[q] = n / a->verify_div > 8 ? n / a->verify_div : 8;
        }
    }
    hr_mpi_solver *s;
    *why = "";
    if (hr_mpi_solver_create_transport(&o, a->have_decomp ? a->decomp : NULL, a->ghost, a->transport,
                                       MPI_COMM_WORLD, &s) != HR_OK) {
        *why = hr_mpi_last_error();
        return 0;
    }
    hr_mpi_solver_set_overlap(s, a->overlap);
    const int dim = o.dim == 3 ? 3 : 2;
    const size_t pts = (size_t)(o.nx ? o.nx : o.n) * (size_t)(o.ny ? o.ny : o.n) *
                       (dim == 3 ? (size_t)(o.nz ? o.nz : o.n) : 1);
    float *got = rank == 0 ? malloc(pts * sizeof *got) : NULL;
    int ok = hr_mpi_solver_run(s, NULL) == HR_OK &&
             hr_mpi_solver_gather_solution(s, HR_PREC_SINGLE, got, pts, 0) == HR_OK;
    hr_mpi_solver_free(s);
    if (rank == 0 && ok) {
        float *want = malloc(pts * sizeof *want);
        hr_solver *ref;
        o.backend = HR_BACKEND_CPU_SEQ;
        ok = want && hr_solver_create(&o, &ref) == HR_OK;
        if (ok) {
            ok = hr_solver_run(ref, NULL) == HR_OK &&
                 hr_solver_solution(ref, HR_PREC_SINGLE, want, pts) == HR_OK &&
                 memcmp(want, got, pts * sizeof *got) == 0;
            hr_solver_free(ref);
        }
        free(want);
        if (!ok) *why = "solution differs from cpu-seq";
    }
    free(got);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    args a;
    memset(&a, 0, sizeof a);
    if (!parse(argc, argv, &a, rank)) {
        MPI_Finalize();
        return 2;
    }
    if (a.pingpong) {
        pingpong(rank, size);
        MPI_Finalize();
        return 0;
    }
    const char *why = "";
    if (a.verify && !verify(&a, rank, &why)) {
        if (rank == 0) fprintf(stderr, "mpi_solve: check failed: %s\n", why);
        MPI_Finalize();
        return 1;
    }
    hr_bandwidth bw = {0};
    if (a.bandwidth && rank == 0) hr_measure_host_bandwidth(size, 0, 3, &bw);
    MPI_Barrier(MPI_COMM_WORLD);

    hr_mpi_solver *s;
    if (hr_mpi_solver_create_transport(&a.o, a.have_decomp ? a.decomp : NULL, a.ghost, a.transport,
                                       MPI_COMM_WORLD, &s) != HR_OK) {
        if (rank == 0) fprintf(stderr, "mpi_solve: %s\n", hr_mpi_last_error());
        MPI_Finalize();
        return 2;
    }
    hr_mpi_solver_set_overlap(s, a.overlap);
    double *per = calloc((size_t)a.repeats, sizeof *per);
    /* pack, transfer, unpack, hidden, exchange, wait, compute: medians are per run */
    enum { NP = 7 };
    double parts[NP] = {0};
    double *ph[NP];
    for (int q = 0; q < NP; q++)
        ph[q] = calloc((size_t)a.repeats, sizeof *ph[q]);
    hr_result r;
    hr_mpi_info info;
    /* --threads-ref: rank 0's cpu-threads solver, timed between the MPI runs (run, reference,
     * run, ...: drifts of the machine hit both alike) while the other ranks sleep (quiet_wait) */
    hr_solver *ref = NULL;
    double *rt = calloc((size_t)a.repeats, sizeof *rt);
    if (a.threads_ref > 0 && rank == 0) {
        hr_options o = a.o;
        o.backend = HR_BACKEND_CPU_THREADS;
        o.threads = a.threads_ref;
        /* rank 0 bound to fewer CPUs than the reference has threads (mpiexec --bind-to core):
         * its team is made under all the machine's CPUs, one thread pinned a core, and rank
         * 0's own binding is put back (a new thread takes its creator's mask) */
        cpu_set_t mine;
        int widened = 0;
        if (sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) < a.threads_ref) {
            cpu_set_t all;
            CPU_ZERO(&all);
            const long nc = sysconf(_SC_NPROCESSORS_ONLN);
            for (long c = 0; c < nc && c < CPU_SETSIZE; c++)
                CPU_SET((int)c, &all);
            widened = sched_setaffinity(0, sizeof all, &all) == 0;
            o.bind = HR_BIND_CORE;
        }
        if (hr_solver_create(&o, &ref) != HR_OK) ref = NULL;
        if (widened) sched_setaffinity(0, sizeof mine, &mine);
    }
    for (int rep = -1; rep < a.repeats; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (hr_mpi_solver_run(s, &r) != HR_OK) {
            if (rank == 0) fprintf(stderr, "mpi_solve: run: %s\n", hr_mpi_last_error());
            MPI_Finalize();
            return 1;
        }
        hr_mpi_solver_info(s, &info);
        double x[NP] = {info.pack_s,       info.transfer_s, info.unpack_s, info.hidden_s,
                        r.time_exchange_s, info.wait_s,     info.compute_s};
        if (getenv("HETRELAX_RANK_TIMES") && rep == a.repeats - 1) /* where the time goes, rank by rank */
            fprintf(stderr, "rank %2d: per sweep compute %.3f ms, transfer+wait %.3f ms, exchange %.3f ms\n",
                    rank, 1e3 * info.compute_s / (double)r.iterations,
                    1e3 * info.transfer_s / (double)r.iterations,
                    1e3 * r.time_exchange_s / (double)r.iterations);
        MPI_Allreduce(MPI_IN_PLACE, x, NP, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (a.threads_ref > 0) {
            if (ref) {
                hr_result rr;
                if (hr_solver_run(ref, &rr) == HR_OK && rep >= 0) rt[rep] = rr.time_per_sweep_s;
            }
            quiet_wait(MPI_COMM_WORLD);
        }
        if (rep < 0) continue; /* warm-up */
        per[rep] = r.time_per_sweep_s;
        for (int q = 0; q < NP; q++)
            ph[q][rep] = x[q] / (double)r.iterations;
    }
    qsort(per, (size_t)a.repeats, sizeof *per, cmp_double);
    for (int q = 0; q < NP; q++) {
        qsort(ph[q], (size_t)a.repeats, sizeof *ph[q], cmp_double);
        parts[q] = ph[q][a.repeats / 2];
    }
    const double t = per[a.repeats / 2];
    double ref_t = 0.0;
    if (ref) {
        qsort(rt, (size_t)a.repeats, sizeof *rt, cmp_double);
        ref_t = rt[a.repeats / 2];
        hr_solver_free(ref);
    }
    free(rt);
    if (rank == 0) {
        const double pts = (double)r.nx * r.ny * r.nz;
        const double gbps = r.bytes_per_point * pts / t * 1e-9;
        printf(
            "{\"ranks\": %d, \"decomp\": [%d, %d, %d], \"ghost\": %d, \"overlap\": %d, \"dim\": %d, "
            "\"nx\": %d, \"ny\": %d, \"nz\": %d, \"precision\": \"%s\", \"iters\": %ld, \"repeats\": %d, "
            "\"verified_bitwise\": %s, \"time_per_sweep_s\": %.6e, \"gflops\": %.4f, \"gbps\": %.4f, "
            "\"bytes_per_point\": %g, \"exchange_per_sweep_s\": %.6e, \"pack_per_sweep_s\": %.6e, "
            "\"transfer_per_sweep_s\": %.6e, \"unpack_per_sweep_s\": %.6e, \"hidden_per_sweep_s\": %.6e, "
            "\"messages_per_round\": %d, \"halo_bytes_per_round\": %.0f, \"max_halo_bytes_per_round\": %.0f, "
            "\"exchanges_per_sweep\": %.4f, \"host_copy_gbps\": %.3f, \"bandwidth_fraction\": %.4f, "
            "\"threads_per_rank\": %d, \"threads_ref\": %d, \"threads_ref_time_per_sweep_s\": %.6e, "
            "\"backend\": \"%s\", \"device\": \"%s\", \"wait_per_sweep_s\": %.6e, "
            "\"compute_per_sweep_s\": %.6e, \"hidden_fraction\": %.4f, \"device_buffers\": %d, "
            "\"transport\": \"%s\", "
            "\"max_error\": %.6e, \"relative_residual\": %.6e}\n", /* JSON has no NaN: -1 = none */
            size, info.decomp[0], info.decomp[1], info.decomp[2], a.ghost, a.overlap, r.dim, r.nx, r.ny, r.nz,
            hr_precision_name(a.o.precision), r.iterations, a.repeats, a.verify ? "true" : "false", t,
            r.flops_per_point * pts / t * 1e-9, gbps, r.bytes_per_point, parts[4], parts[0], parts[1],
            parts[2], parts[3], info.messages, info.halo_bytes, info.max_halo_bytes,
            (double)info.exchanges / (double)r.iterations, bw.copy_gbps,
            bw.copy_gbps > 0 ? gbps / bw.copy_gbps : -1.0, a.o.threads > 1 ? a.o.threads : 1, a.threads_ref,
            ref_t, r.backend, r.device_name, parts[5], parts[6],
            parts[3] + parts[5] > 0 ? parts[3] / (parts[3] + parts[5]) : 0.0, info.device_buffers,
            hr_mpi_transport_name(info.transport), isfinite(r.max_error) ? r.max_error : -1.0,
            r.relative_residual);
    }
    for (int q = 0; q < NP; q++)
        free(ph[q]);
    free(per);
    hr_mpi_solver_free(s);
    MPI_Finalize();
    return 0;
}
