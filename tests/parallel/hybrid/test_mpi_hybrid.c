/* The per-rank CPU+GPU split over MPI (include/hetrelax/mpi_hybrid.h) with two CPU
 * placements per rank: bitwise equal to cpu-seq (gathered on rank 0) for 2-D and 3-D,
 * fp32 and fp64, fractions 0 / 0.4 / 1, ghost 1 and 2, both schedules; converged runs
 * stop at the same sweep; split auto (the per-rank model) chooses the same split on every
 * rank, one that its own measurement supports; bad input fails on every rank with the same
 * message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/mpi_hybrid.h"
#include "tuning_env.h"

static int check(int rank, const hr_options *o, const char *what)
{
    hr_mpi_hybrid *h;
    hr_status st = hr_mpi_hybrid_create(o, MPI_COMM_WORLD, &h);
    if (st != HR_OK) {
        if (rank == 0) printf("FAIL %s: create: %s\n", what, hr_mpi_hybrid_last_error());
        return 1;
    }
    /* the split asked for, on every rank count (one rank once ran its slab whole on B) */
    hr_hybrid_info in;
    int wrong_rows = hr_mpi_hybrid_info(h, &in) != HR_OK;
    if (!wrong_rows && o->split >= 0.0) {
        const int want = hr_split_model_rank_rows(o->split, in.rows);
        wrong_rows = in.rows_cpu != want;
        if (wrong_rows)
            printf("FAIL %s: rank %d has %d of %d rows on A, not %d\n", what, rank, in.rows_cpu, in.rows,
                   want);
    }
    hr_result r;
    st = hr_mpi_hybrid_run(h, &r);
    const size_t n = (size_t)r.nx * r.ny * r.nz, es = o->precision == HR_PREC_DOUBLE ? 8 : 4;
    void *got = rank == 0 ? malloc(n * es) : NULL;
    if (st == HR_OK) st = hr_mpi_hybrid_gather_solution(h, o->precision, got, n, 0);
    hr_mpi_hybrid_free(h);
    int bad = st != HR_OK || wrong_rows;
    if (rank == 0 && !bad) {
        hr_options ref = *o;
        ref.backend = HR_BACKEND_CPU_SEQ;
        hr_solver *s;
        void *want = malloc(n * es);
        hr_result r0;
        bad = hr_solver_create(&ref, &s) != HR_OK || hr_solver_run(s, &r0) != HR_OK ||
              hr_solver_solution(s, o->precision, want, n) != HR_OK || memcmp(got, want, n * es) != 0 ||
              r0.iterations != r.iterations ||
              fabs(r0.relative_residual - r.relative_residual) > 1e-10 * r0.relative_residual;
        hr_solver_free(s);
        free(want);
    }
    free(got);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("%s %s\n", bad ? "FAIL" : "ok  ", what);
    return bad;
}

int main(int argc, char **argv)
{
    int provided, rank, size, fails = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    /* ctest's ENVIRONMENT picks variants (HETRELAX_SPLIT_MAPPED=0), mapped as the command maps
     * it: the library reads no environment */
    hr_tuning tune = {0};
    char err[256];
    if (hri_tuning_from_env(&tune, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int dim = 2; dim <= 3; dim++)
        for (int prec = 0; prec < 2; prec++)
            for (int fi = 0; fi < 3; fi++)
                for (int g = 1; g <= 2; g++)
                    for (int sched = 0; sched < 2; sched++) {
                        const double frac[3] = {0.0, 0.4, 1.0};
                        hr_options o;
                        hr_options_default(&o);
                        o.tuning = tune;
                        o.dim = dim;
                        o.nx = dim == 3 ? 7 : 21;
                        o.ny = dim == 3 ? 6 : 9 * size + 5;
                        o.nz = dim == 3 ? 9 * size + 4 : 0;
                        o.iters = 9;
                        o.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
                        o.rhs = prec ? HR_RHS_MANUFACTURED : HR_RHS_SPIKE;
                        o.init = HR_INIT_SINE;
                        o.omega = prec ? 0.9 : 1.0;
                        o.backend = HR_BACKEND_HYBRID;
                        o.split_second = HR_SPLIT_CPU;
                        o.split = frac[fi];
                        o.split_ghost = g;
                        o.split_schedule = sched;
                        o.threads = 2;
                        char what[128];
                        snprintf(what, sizeof what, "%d ranks %d-D %s split %.1f ghost %d %s", size, dim,
                                 prec ? "fp64" : "fp32", frac[fi], g, sched ? "naive" : "nested");
                        fails += check(rank, &o, what);
                    }
    /* residual checks: the same stopping sweep as cpu-seq */
    hr_options o;
    hr_options_default(&o);
    o.tuning = tune;
    o.dim = 3;
    o.nx = o.ny = 6;
    o.nz = 7 * size + 3;
    o.precision = HR_PREC_DOUBLE;
    o.iters = 4000;
    o.tol = 1e-3;
    o.check_every = 5;
    o.split_second = HR_SPLIT_CPU;
    o.split = 0.5;
    o.threads = 2;
    fails += check(rank, &o, "converged run, 3-D fp64 split 0.5");
    /* split auto: every rank calibrates its slab, the choice is the same on every rank and
     * one the measurement supports, the model is defined where the parts allow, and the
     * answer is still bitwise */
    o.iters = 9;
    o.tol = 0.0;
    o.nx = o.ny = 10;
    o.nz = 12 * size + 1;
    o.split = HR_SPLIT_AUTO;
    for (int g = 1; g <= 2; g++) {
        o.split_ghost = g;
        hr_mpi_hybrid *h = NULL;
        int bad = hr_mpi_hybrid_create(&o, MPI_COMM_WORLD, &h) != HR_OK;
        hr_mpi_hybrid_choice c;
        memset(&c, 0, sizeof c);
        if (!bad) bad = hr_mpi_hybrid_get_choice(h, &c) != HR_OK;
        const int n_min = o.nz / size;
        const double lo = (double)g / n_min;
        if (!bad) {
            double best = c.gpu_only_s;
            for (int q = 0; q < c.candidates; q++)
                best = c.cand_s[q] < best ? c.cand_s[q] : best;
            bad |= !(c.gpu_only_s > 0) || !(c.calibration_s > 0) || !isfinite(c.x_ranks) || c.candidates < 1;
            /* the CPU term measured through the ranks at a split with at least 2g + 1 planes */
            bad |= !(c.cpu_scale >= 0.5 && c.cpu_scale <= 4.0);
            bad |= c.cpu_probe_fraction > 0.0 &&
                   !(c.cpu_probe_s > 0 && c.cpu_probe_fraction >= (2.0 * g + 1) / n_min);
            /* the fitted model meets the probe, and the CPU-bound split where the fit is inside its range */
            bad |= fabs(hr_mpi_hybrid_predict(h, c.probe_fraction) - c.probe_s) > 1e-9 * c.probe_s;
            if (c.cpu_probe_fraction > 0.0 && c.cpu_scale > 0.501 && c.cpu_scale < 3.99)
                bad |= fabs(hr_mpi_hybrid_predict(h, c.cpu_probe_fraction) - c.cpu_probe_s) >
                       1e-6 * c.cpu_probe_s;
            /* the ladder (12-plane slabs: 6 planes is the CPU-bound split, so n - g planes): measured,
             * and met by the model at each point without moving it at the points before */
            bad |= c.cpu_probe_fraction > 0.0 &&
                   !(c.ladder == 1 && c.ladder_fraction[0] > c.cpu_probe_fraction && c.ladder_s[0] > 0 &&
                     c.ladder_fraction[0] <= 1.0 - lo + 1e-12);
            for (int q = 0; q < c.ladder; q++) {
                bad |= !(c.ladder_scale[q] >= 0.25 && c.ladder_scale[q] <= 8.0);
                if (c.ladder_scale[q] > 0.2501 && c.ladder_scale[q] < 7.99)
                    bad |= fabs(hr_mpi_hybrid_predict(h, c.ladder_fraction[q]) - c.ladder_s[q]) >
                           1e-6 * c.ladder_s[q];
            }
            bad |= !(c.fraction == 0.0 || (c.fraction >= lo - 1e-12 && c.fraction <= 1.0 - lo + 1e-12));
            /* a chosen split paid twice (1 % faster than GPU-only in both of its measurements); with
             * none chosen, every candidate measured again did not pay the second time */
            for (int q = 0; q < c.candidates; q++) {
                const int chosen = fabs(c.cand_fraction[q] - c.fraction) < 1e-12;
                bad |= chosen && !(c.cand_s[q] < 0.99 * c.gpu_only_s && c.cand_again_s[q] > 0 &&
                                   c.cand_again_s[q] < 0.99 * c.gpu_only_s);
                bad |= c.fraction == 0.0 && c.cand_again_s[q] > 0 && c.cand_again_s[q] < 0.99 * c.gpu_only_s;
                bad |= c.cand_again_s[q] > 0 && !(c.cand_s[q] < 0.99 * c.gpu_only_s);
            }
            bad |= c.fraction > 0.0 && !(best < 0.99 * c.gpu_only_s);
            bad |= hr_mpi_hybrid_predict(h, 0.0) != c.gpu_only_s || !isfinite(c.predicted_s);
            bad |= !isfinite(hr_mpi_hybrid_predict(h, lo)) || !isnan(hr_mpi_hybrid_predict(h, 0.4 / n_min));
        }
        double f[2] = {c.fraction, -c.fraction};
        MPI_Allreduce(MPI_IN_PLACE, f, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        bad |= f[0] != -f[1];
        if (bad && h) /* what the fit met: model and measured at the three splits */
            printf("rank %d: probe %g s (measured %g), CPU-bound %g: %g s (%g), ladder %g: %g s (%g)\n", rank,
                   hr_mpi_hybrid_predict(h, c.probe_fraction), c.probe_s, c.cpu_probe_fraction,
                   hr_mpi_hybrid_predict(h, c.cpu_probe_fraction), c.cpu_probe_s, c.ladder_fraction[0],
                   hr_mpi_hybrid_predict(h, c.ladder_fraction[0]), c.ladder_s[0]);
        hr_mpi_hybrid_free(h);
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%s split auto, ghost %d: %.4g of each slab on the CPU (t0 %.3g s, x_ranks %.3g s, CPU "
                   "term x %.3g, "
                   "%d ladder points, %d candidates, predicted %.3g s)\n",
                   bad ? "FAIL" : "ok  ", g, c.fraction, c.gpu_only_s, c.x_ranks, c.cpu_scale, c.ladder,
                   c.candidates, c.predicted_s);
        fails += bad;
        char what[64];
        snprintf(what, sizeof what, "split auto ghost %d: bitwise", g);
        fails += check(rank, &o, what);
    }
    o.split_ghost = 1;
    /* bad input: the same status and message on every rank */
    o.split = HR_SPLIT_STREAM;
    hr_mpi_hybrid *h = NULL;
    const hr_status st = hr_mpi_hybrid_create(&o, MPI_COMM_WORLD, &h);
    int bad = st != HR_ERR_INVALID_ARG || h != NULL || !strstr(hr_mpi_hybrid_last_error(), "split:");
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("%s bad input (split stream per rank)\n", bad ? "FAIL" : "ok  ");
    fails += bad;
    MPI_Finalize();
    return fails ? 1 : 0;
}
