/*
 * The per-rank CPU+GPU split over MPI (Sourouri et al. fig. 5d on two GPUs, two ranks):
 *
 *   mpiexec -n R hybrid_mpi OUT.json [--nx X --ny Y --nz Z | --n N] [--dim 2|3]
 *           [--precision single|double] [--second gpu|cpu] [--schedules nested,naive]
 *           [--ghost G] [--threads T] [--boundary-threads B] [--fractions F,...] [--sweeps K]
 *           [--repeats R] [--no-check] [--model]
 *
 * For each schedule and fraction of each rank's slab on the CPU: one run of K sweeps whose
 * answer is gathered and compared bitwise with cpu-seq on rank 0 (exit 1 on a mismatch),
 * then R timed blocks of K sweeps (hr_mpi_hybrid_time: no residual); the median time per sweep
 * (each block the slowest rank's). Byte model: 2 words per point per sweep.
 *
 * --model: first, per schedule, a run with --split auto (every rank calibrates its slab, the
 * exchange between ranks measured; include/hetrelax/mpi_hybrid.h): its choice, its measured
 * time (checked like the others), and the model's prediction at every fraction of the sweep.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/mpi_hybrid.h"
#include "tuning_env.h"

#define MAXF 256

/* The HETRELAX_* variables onto the knobs, as the command maps them (the library reads no
 * environment): the benchmark scripts pick variants with them. */
static void tuning_from_env(hr_tuning *t)
{
    char err[256];
    if (hri_tuning_from_env(t, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(2);
    }
}

static int cmp_d(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One run whose answer is gathered and compared bitwise with cpu-seq on rank 0 (with check),
 * then `repeats` timed runs; the median seconds per sweep into *med. Returns whether the answer
 * was right (1 without check), the same on every rank. */
#define MIN_BLOCK_S 0.05

static int measure(hr_mpi_hybrid *h, const hr_options *o, int check, long sweeps, int repeats, void *got,
                   const void *want, size_t n, size_t es, int rank, double *med)
{
    hr_result r;
    int ok = hr_mpi_hybrid_run(h, &r) == HR_OK;
    if (ok && check) ok = hr_mpi_hybrid_gather_solution(h, o->precision, got, n, 0) == HR_OK;
    if (ok && check && rank == 0) ok = memcmp(got, want, n * es) == 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    double t[64];
    /* blocks of at least `sweeps` sweeps and MIN_BLOCK_S seconds (GPU-only sweeps in 0.6 ms:
     * 20 of them made 12 ms blocks, and two engines of the same split 2.6 % apart) */
    if (hr_mpi_hybrid_time(h, sweeps, &t[0]) != HR_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    if (t[0] > 0.0 && t[0] * sweeps < MIN_BLOCK_S) sweeps = (long)ceil(MIN_BLOCK_S / t[0]);
    for (int k = 0; k < repeats; k++) /* timed sweeps without the residual a run ends with */
        if (hr_mpi_hybrid_time(h, sweeps, &t[k]) != HR_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    qsort(t, (size_t)repeats, sizeof t[0], cmp_d);
    *med = t[repeats / 2];
    return ok;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    hr_options o;
    hr_options_default(&o);
    tuning_from_env(&o.tuning);
    o.backend = HR_BACKEND_HYBRID;
    o.dim = 3;
    o.nx = o.ny = 512;
    o.nz = 1024;
    o.precision = HR_PREC_DOUBLE;
    o.rhs = HR_RHS_SPIKE;
    double f[MAXF];
    int nf = 0, sched[2] = {HR_SPLIT_NESTED, HR_SPLIT_NAIVE}, nsched = 2, repeats = 5, check = 1, model = 0;
    long sweeps = 20;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && v && ++i)
        if (ARG("--nx"))
            o.nx = atoi(v);
        else if (ARG("--ny"))
            o.ny = atoi(v);
        else if (ARG("--nz"))
            o.nz = atoi(v);
        else if (ARG("--n"))
            o.nx = o.ny = o.nz = atoi(v);
        else if (ARG("--dim")) {
            o.dim = atoi(v);
            if (o.dim == 2) o.nz = 0;
        } else if (ARG("--precision"))
            o.precision = strcmp(v, "single") == 0 ? HR_PREC_SINGLE : HR_PREC_DOUBLE;
        else if (ARG("--second"))
            o.split_second = strcmp(v, "cpu") == 0 ? HR_SPLIT_CPU : HR_SPLIT_GPU;
        else if (ARG("--schedules")) {
            nsched = 0;
            if (strstr(v, "nested")) sched[nsched++] = HR_SPLIT_NESTED;
            if (strstr(v, "naive")) sched[nsched++] = HR_SPLIT_NAIVE;
        } else if (ARG("--ghost"))
            o.split_ghost = atoi(v);
        else if (ARG("--threads"))
            o.threads = atoi(v);
        else if (ARG("--boundary-threads"))
            o.split_boundary_threads = atoi(v);
        else if (ARG("--sweeps"))
            sweeps = atol(v);
        else if (ARG("--repeats"))
            repeats = atoi(v);
        else if (ARG("--fractions")) {
            for (const char *s = v; s && *s && nf < MAXF;) {
                char *end;
                f[nf++] = strtod(s, &end);
                s = *end == ',' ? end + 1 : NULL;
            }
        } else if (strcmp(a, "--no-check") == 0)
            check = 0;
        else if (strcmp(a, "--model") == 0)
            model = 1;
        else if (a[0] != '-' && !out)
            out = a;
        else {
            if (rank == 0) fprintf(stderr, "hybrid_mpi: %s: unknown or missing value\n", a);
            MPI_Finalize();
            return 2;
        }
    }
    if (!out || nsched < 1 || repeats < 1 || repeats > 64 || sweeps < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n R hybrid_mpi OUT.json [options] (see the file's header)\n");
        MPI_Finalize();
        return 2;
    }
    if (nf == 0)
        for (int i = 0; i <= 20; i++)
            f[nf++] = 0.005 * i;
    o.iters = sweeps;
    const int dim = o.dim;
    const size_t n = (size_t)o.nx * o.ny * (dim == 3 ? o.nz : 1), es = o.precision == HR_PREC_DOUBLE ? 8 : 4;
    void *want = NULL, *got = NULL;
    if (rank == 0 && check) { /* cpu-seq after `sweeps` sweeps */
        hr_options r = o;
        r.backend = HR_BACKEND_CPU_SEQ;
        hr_solver *s;
        hr_result res;
        want = malloc(n * es);
        got = malloc(n * es);
        if (!want || !got || hr_solver_create(&r, &s) != HR_OK || hr_solver_run(s, &res) != HR_OK ||
            hr_solver_solution(s, o.precision, want, n) != HR_OK) {
            fprintf(stderr, "hybrid_mpi: reference: %s\n", hr_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        hr_solver_free(s);
    }
    FILE *js = rank == 0 ? fopen(out, "w") : NULL;
    if (rank == 0 && !js) MPI_Abort(MPI_COMM_WORLD, 1);
    const double bytes = 2.0 * (double)es * (double)n;
    if (js)
        fprintf(
            js,
            "{\n \"ranks\": %d, \"dim\": %d, \"nx\": %d, \"ny\": %d, \"nz\": %d, \"precision\": \"%s\", "
            "\"second\": "
            "\"%s\", \"sweeps\": %ld, \"repeats\": %d, \"bytes_per_sweep\": %.0f, \"answers_checked\": %s,\n "
            "\"schedules\": [\n",
            size, dim, o.nx, o.ny, dim == 3 ? o.nz : 1, hr_precision_name(o.precision),
            o.split_second == HR_SPLIT_CPU ? "cpu" : "gpu", sweeps, repeats, bytes, check ? "true" : "false");
    int bad = 0;
    for (int q = 0; q < nsched; q++) {
        o.split_schedule = sched[q];
        const char *sname = sched[q] == HR_SPLIT_NAIVE ? "naive" : "nested";
        if (js) fprintf(js, "  {\"schedule\": \"%s\", \"points\": [\n", sname);
        double pred[MAXF];
        for (int i = 0; i < nf; i++)
            pred[i] = NAN;
        if (model) { /* split auto: its choice and measurement, and the model's curve */
            o.split = HR_SPLIT_AUTO;
            hr_mpi_hybrid *h;
            if (hr_mpi_hybrid_create(&o, MPI_COMM_WORLD, &h) != HR_OK) {
                if (rank == 0)
                    fprintf(stderr, "hybrid_mpi: %s split auto: %s\n", sname, hr_mpi_hybrid_last_error());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            hr_mpi_hybrid_choice c;
            hr_mpi_hybrid_get_choice(h, &c);
            for (int i = 0; i < nf; i++)
                pred[i] = hr_mpi_hybrid_predict(h, f[i]);
            double med;
            const int ok = measure(h, &o, check, sweeps, repeats, got, want, n, es, rank, &med);
            bad |= !ok;
            if (rank == 0) {
                printf("%s split auto: %.4f of each slab on the CPU, %.6g s/sweep measured, %.6g predicted; "
                       "GPU-only "
                       "%.6g; x_ranks %.3g s; CPU term x %.3f (at %.4f: %.6g s)",
                       sname, c.fraction, med, c.predicted_s, c.gpu_only_s, c.x_ranks, c.cpu_scale,
                       c.cpu_probe_fraction, c.cpu_probe_s);
                for (int q = 0; q < c.ladder; q++)
                    printf(", x %.3f at %.4f (%.6g s)", c.ladder_scale[q], c.ladder_fraction[q],
                           c.ladder_s[q]);
                printf("; calibration %.1f s, choice %.1f s%s\n", c.calibration_s, c.seconds,
                       ok ? "" : " WRONG");
                fprintf(
                    js,
                    "   {\"auto\": true, \"fraction\": %.6g, \"measured_s\": %.9g, \"predicted_s\": %.9g, "
                    "\"gpu_only_s\": %.9g, \"x_ranks_s\": %.9g, \"probe_fraction\": %.6g, \"probe_s\": %.9g, "
                    "\"cpu_probe_fraction\": %.6g, \"cpu_probe_s\": %.9g, \"cpu_scale\": %.6g, "
                    "\"calibration_s\": %.4g, \"choice_s\": %.4g, \"checked\": %s, \"candidates\": [",
                    c.fraction, med, c.predicted_s, c.gpu_only_s, c.x_ranks, c.probe_fraction, c.probe_s,
                    c.cpu_probe_fraction, c.cpu_probe_s, c.cpu_scale, c.calibration_s, c.seconds,
                    check ? (ok ? "true" : "false") : "null");
                for (int k = 0; k < c.candidates; k++)
                    fprintf(js, "%s{\"fraction\": %.6g, \"measured_s\": %.9g, \"predicted_s\": %.9g}",
                            k ? ", " : "", c.cand_fraction[k], c.cand_s[k], c.cand_predicted_s[k]);
                fprintf(js, "], \"ladder\": [");
                for (int q = 0; q < c.ladder; q++)
                    fprintf(js, "%s{\"fraction\": %.6g, \"measured_s\": %.9g, \"scale\": %.6g}",
                            q ? ", " : "", c.ladder_fraction[q], c.ladder_s[q], c.ladder_scale[q]);
                fprintf(js, "]");
            }
            /* auto against GPU-only head to head: a GPU-only engine beside auto's, their blocks
             * interleaved, so a slow spell of the host falls on both (two runs: auto chose
             * GPU-only and measured 2.6 % and 1.05 % behind the f = 0 point, two measurements of one
             * split taken minutes apart) */
            o.split = 0.0;
            hr_mpi_hybrid *hg;
            if (hr_mpi_hybrid_create(&o, MPI_COMM_WORLD, &hg) != HR_OK) MPI_Abort(MPI_COMM_WORLD, 1);
            double ta[64], tg[64], est;
            if (hr_mpi_hybrid_time(hg, sweeps, &est) != HR_OK) MPI_Abort(MPI_COMM_WORLD, 1);
            long k = est > 0.0 && est * sweeps < MIN_BLOCK_S ? (long)ceil(MIN_BLOCK_S / est) : sweeps;
            for (int r = 0; r < repeats; r++)
                if (hr_mpi_hybrid_time(h, k, &ta[r]) != HR_OK || hr_mpi_hybrid_time(hg, k, &tg[r]) != HR_OK)
                    MPI_Abort(MPI_COMM_WORLD, 1);
            qsort(ta, (size_t)repeats, sizeof ta[0], cmp_d);
            qsort(tg, (size_t)repeats, sizeof tg[0], cmp_d);
            const double ma = ta[repeats / 2], mg = tg[repeats / 2];
            if (rank == 0) {
                printf("%s split auto head to head with GPU-only (%d interleaved blocks of %ld sweeps): %.6g "
                       "against "
                       "%.6g s/sweep (%+.2f %%)\n",
                       sname, repeats, k, ma, mg, 100.0 * (ma / mg - 1.0));
                fprintf(js,
                        ", \"head_to_head\": {\"auto_s\": %.9g, \"gpu_only_s\": %.9g, \"sweeps\": %ld}},\n",
                        ma, mg, k);
            }
            hr_mpi_hybrid_free(hg);
            hr_mpi_hybrid_free(h);
        }
        for (int i = 0; i < nf; i++) {
            o.split = f[i];
            hr_mpi_hybrid *h;
            if (hr_mpi_hybrid_create(&o, MPI_COMM_WORLD, &h) != HR_OK) {
                if (rank == 0) fprintf(stderr, "hybrid_mpi: f %.4f: %s\n", f[i], hr_mpi_hybrid_last_error());
                continue; /* a fraction too small for a slab: skipped on every rank */
            }
            double med;
            const int ok = measure(h, &o, check, sweeps, repeats, got, want, n, es, rank, &med);
            if (!ok) {
                if (rank == 0)
                    fprintf(stderr, "hybrid_mpi: %s f %.4f: NOT bitwise equal to cpu-seq\n", sname, f[i]);
                bad = 1;
            }
            hr_hybrid_info in;
            hr_mpi_hybrid_info(h, &in);
            if (rank == 0) {
                printf("%s f %.4f (rank 0: %d of %d planes on the CPU): %.6g s/sweep, %.1f GB/s%s", sname,
                       f[i], in.rows_cpu, in.rows, med, bytes / med * 1e-9, ok ? "" : " WRONG");
                if (!isnan(pred[i]))
                    printf(", model %.6g (%+.1f %%)", pred[i], 100.0 * (pred[i] / med - 1.0));
                printf("\n");
                fprintf(js,
                        "   {\"fraction\": %.6g, \"rows_cpu_rank0\": %d, \"rows_rank0\": %d, \"measured_s\": "
                        "%.9g, \"gbps\": %.4g, \"checked\": %s",
                        f[i], in.rows_cpu, in.rows, med, bytes / med * 1e-9,
                        check ? (ok ? "true" : "false") : "null");
                if (!isnan(pred[i])) fprintf(js, ", \"predicted_s\": %.9g", pred[i]);
                fprintf(js, "},\n");
            }
            hr_mpi_hybrid_free(h);
        }
        if (js) fprintf(js, "   {}]}%s\n", q + 1 < nsched ? "," : "");
    }
    if (js) {
        fprintf(js, " ],\n \"ok\": %s\n}\n", bad ? "false" : "true");
        fclose(js);
    }
    free(want);
    free(got);
    MPI_Finalize();
    return bad ? 1 : 0;
}
