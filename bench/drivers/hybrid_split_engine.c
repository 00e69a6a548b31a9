/*
 * bench/hybrid_split --engine: the split engine itself for every split (internal API), for
 * grids where one solver per split costs more than the sweeps (Sourouri et al. fig. 5d: 512 x 512
 * x 1024 fp64, 2 GiB a grid).
 *
 * One initial grid (a cheap pattern, nonzero everywhere) is made once. The second placement
 * alone (GPU-only) runs `check` sweeps from it: the reference. Each split loads the same grid,
 * runs `check` sweeps, and its answer must be bitwise that reference (exit 1 otherwise; the
 * GPU part alone is bitwise cpu-seq, test_hybrid_gpu); the same engine then times one
 * untimed and R timed blocks of K sweeps (median). GPU-only is timed in blocks of whole
 * 16-sweep graphs. Nested: the boundary crew sizes of --tune-boundary are timed first at
 * --tune-at and the fastest kept. The model (hr_hybrid_calibrate with the STREAM rule) per
 * schedule, its prediction at every split, and the split it would choose, timed too.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/timer.h"
#include "hetrelax/hybrid.h"
#include "parallel/hybrid/split.h"
#include "hybrid_split.h"
#include "core/solver_internal.h"

typedef struct eng {
    const bench_cfg *c;
    hr_options o; /* the schedule and boundary crew being run */
    hr_run_problem p;
    hr_grid u0, ref, got;
    size_t cmp_off, cmp_bytes; /* rows (planes) 1..n */
    int n, g;
    char cpu_desc[96]; /* the last split's CPU part ("cpu 1+14 threads, pinned") */
} eng;

/* Interior values that differ from point to point and stay exact in fp32 and fp64. */
static void fill_initial(hr_grid *u, const hr_run_problem *p)
{
    const hr_grid_layout *l = &u->l;
    memset(u->base, 0, hr_layout_bytes(l));
    const int nk = p->dim == 3 ? p->nz + 2 : 1;
    for (int k = 0; k < nk; k++)
        for (int i = 0; i < p->ny + 2; i++) {
            const size_t at = hr_layout_index(l, i, 0, k);
            for (int j = 0; j < p->nx + 2; j++) {
                const int ring = i == 0 || i == p->ny + 1 || j == 0 || j == p->nx + 1 ||
                                 (p->dim == 3 && (k == 0 || k == p->nz + 1));
                const double v = ring ? p->boundary : (double)((i * 7 + j * 13 + k * 29) & 63) / 64.0;
                if (l->esize == 8) /* hr_layout_index counts from base (it adds the offset) */
                    ((double *)u->base)[at + j] = v;
                else
                    ((float *)u->base)[at + j] = (float)v;
            }
        }
}

static hr_split *make(const eng *x, int rows_a, int load)
{
    hr_split_spec sp;
    hri_split_spec_from_options(&x->o, &x->p, rows_a, NULL, &sp);
    hr_split *e = NULL;
    char err[256] = "";
    if (hri_split_create(&sp, load ? &x->u0 : NULL, NULL, &e, err, sizeof err) != HR_OK)
        fprintf(stderr, "hybrid_split: engine with %d rows on the CPU: %s\n", rows_a, err);
    return e;
}

/* Median seconds per sweep of `repeats` blocks of `block` sweeps after one untimed block. */
static int time_blocks(hr_split *e, long block, int repeats, double *per)
{
    double t[64];
    if (hri_split_sweeps(e, block) != HR_OK) return -1;
    for (int r = 0; r < repeats; r++) {
        const double t0 = hr_now();
        if (hri_split_sweeps(e, block) != HR_OK) return -1;
        t[r] = (hr_now() - t0) / (double)block;
    }
    *per = median(t, repeats);
    return 0;
}

/* `check` sweeps from the initial grid into x->got; 1 when bitwise the reference. */
static int answer(eng *x, hr_split *e, hr_grid *into)
{
    if (hri_split_sweeps(e, x->c->check) != HR_OK || hri_split_download(e, into) != HR_OK) {
        fprintf(stderr, "hybrid_split: check: %s\n", e->err);
        return 0;
    }
    return into == &x->ref ||
           memcmp((char *)x->ref.base + x->cmp_off, (char *)x->got.base + x->cmp_off, x->cmp_bytes) == 0;
}

/* Sweeps per timed block: K, fewer where the model predicts a block beyond 0.1 s (at least 2),
 * so the large CPU shares do not take most of the run. */
static long block_sweeps(const bench_cfg *c, double predicted)
{
    long k = c->sweeps;
    if (predicted > 0 && predicted * (double)k > 0.1) k = (long)(0.1 / predicted);
    return k < 2 ? (c->sweeps < 2 ? c->sweeps : 2) : k;
}

/* One split: checked (ok not NULL), then timed. Returns 0, or -1 on an engine error; *ok 0 on
 * a mismatch. */
static int run_split(eng *x, int rows, double predicted, double *per, int *ok)
{
    hr_split *e = make(x, rows, 1);
    if (!e) return -1;
    if (rows > 0 && rows < x->n) snprintf(x->cpu_desc, sizeof x->cpu_desc, "%s", e->p[0]->desc);
    if (ok) *ok = x->c->check > 0 ? answer(x, e, &x->got) : 1;
    const int rc = time_blocks(e, block_sweeps(x->c, predicted), x->c->repeats, per);
    if (rc) fprintf(stderr, "hybrid_split: %d rows: %s\n", rows, e->err);
    hri_split_free(e);
    return rc;
}

/* Every split of rows[0..nr) timed in c->passes passes over all of them (ascending, then
 * descending, ...: a slow spell of the machine lands on different splits each pass, not on
 * one run of neighbouring splits), checked in the first; per[i] the median of its passes,
 * pass_s[i][p] each pass's. Returns 0, or -1 on an engine error; ok[i] 0 on a mismatch. */
static int measure_splits(eng *x, const hr_split_model *m, const int *rows, int nr, double *per,
                          double (*pass_s)[MAXPASS], int *ok)
{
    const int passes = x->c->passes > 0 ? x->c->passes : 1;
    for (int p = 0; p < passes; p++)
        for (int j = 0; j < nr; j++) {
            const int i = p % 2 ? nr - 1 - j : j;
            const int check = p == 0 ? 1 : 0;
            int good = 1;
            if (run_split(x, rows[i], hr_split_model_time(m, rows[i]), &pass_s[i][p], check ? &good : NULL))
                return -1;
            if (check) ok[i] = good;
        }
    for (int i = 0; i < nr; i++) {
        double t[MAXPASS];
        memcpy(t, pass_s[i], (size_t)passes * sizeof t[0]);
        per[i] = median(t, passes);
    }
    return 0;
}

void bench_write_calibration(FILE *js, const char *sname, const hr_hybrid_calibration *cal,
                             const hr_split_model *m)
{
    fprintf(js,
            "  {\"schedule\": \"%s\", \"t_c\": %.9g, \"t_g\": %.9g, \"x_exposed\": %.9g, \"probe_rows\": %d, "
            "\"probe_s\": %.9g, \"x_latency\": %.9g, \"x_bandwidth\": %.9g, \"row_bytes\": %.0f, "
            "\"cpu_stream_gbps\": %.4g, \"gpu_stream_gbps\": %.4g, \"stream_share\": %.6g, "
            "\"calibration_s\": %.4g, \"bound\": %.6g,\n",
            sname, cal->t_cpu, cal->t_gpu, cal->x_exposed, cal->probe_rows, cal->probe_s, cal->x_latency,
            cal->x_bandwidth, cal->row_bytes, cal->cpu_stream_gbps, cal->gpu_stream_gbps,
            cal->cpu_stream_gbps > 0 ? hr_split_stream_share(cal->cpu_stream_gbps, cal->gpu_stream_gbps)
                                     : -1.0,
            cal->seconds, 1.0 + cal->t_gpu / cal->t_cpu);
    fprintf(
        js,
        "   \"gpu_alone_s\": %.9g, \"llc_bytes\": %.0f, \"off_rows\": %d, \"off_s\": %.9g, \"x_off\": %.9g, "
        "\"x_sigma\": %.9g, \"floor_rows\": %d, \"gpu_floor_s\": %.9g, \"ws_per_row\": %.0f, \"knots\": [",
        cal->gpu_alone_s, cal->llc_bytes, cal->off_rows, cal->off_s, cal->x_off, cal->x_sigma,
        cal->floor_rows, cal->gpu_floor_s, m->a_ws_per_row);
    for (int k = 0; k < m->a_knots; k++)
        fprintf(js, "%s{\"rows\": %d, \"ws\": %.0f, \"row_s\": %.9g}", k ? ", " : "", cal->cpu_knot_rows[k],
                m->a_knot_ws[k], m->a_knot_row_s[k]);
    fprintf(js, "],\n   \"ladder\": [");
    for (int k = 0; k < cal->ladder; k++)
        fprintf(js, "%s{\"rows\": %d, \"s\": %.9g}", k ? ", " : "", cal->ladder_rows[k], cal->ladder_s[k]);
    fprintf(js, "],\n   \"remeasured\": %d, \"cand_remeasured\": %d, \"candidates\": [", cal->remeasured,
            cal->cand_remeasured);
    for (int k = 0; k < cal->candidates; k++)
        fprintf(js, "%s{\"rows\": %d, \"s\": %.9g, \"again_s\": %.9g, \"predicted_s\": %.9g}", k ? ", " : "",
                cal->cand_rows[k], cal->cand_s[k], cal->cand_again_s[k], hr_split_model_time(m, cal->cand_rows[k]));
    fprintf(js, "],\n");
}

/* Both schedules at one split, their blocks interleaved (drift and other tenants hit both
 * alike): the nested-vs-naive comparison at the best splits. *t[q] the median of schedule q. */
static int head_to_head(eng *x, const hr_options o[2], int rows, double t[2])
{
    hr_split *e[2] = {NULL, NULL};
    const int reps = x->c->repeats > 5 ? x->c->repeats : 5;
    double tm[2][64];
    int rc = 0;
    for (int q = 0; q < 2 && !rc; q++) {
        x->o = o[q];
        e[q] = make(x, rows, 0);
        rc = !e[q] || hri_split_sweeps(e[q], x->c->sweeps) != HR_OK;
    }
    for (int r = 0; r < reps && !rc; r++)
        for (int q = 0; q < 2 && !rc; q++) {
            const double t0 = hr_now();
            rc = hri_split_sweeps(e[q], x->c->sweeps) != HR_OK;
            tm[q][r] = (hr_now() - t0) / (double)x->c->sweeps;
        }
    for (int q = 0; q < 2; q++) {
        if (!rc) t[q] = median(tm[q], reps);
        hri_split_free(e[q]);
    }
    return rc ? -1 : 0;
}

int engine_main(const bench_cfg *c, const char *out)
{
    eng x;
    memset(&x, 0, sizeof x);
    x.c = c;
    x.o = c->o;
    if (c->two_gpus) {
        fprintf(stderr, "hybrid_split: --engine and --two-gpus do not go together\n");
        return 2;
    }
    hri_problem_resolve(&x.o, &x.p);
    const int dim = x.p.dim;
    x.n = dim == 3 ? x.p.nz : x.p.ny;
    x.g = x.o.split_ghost > 0 ? x.o.split_ghost : 1;
    const size_t es = x.o.precision == HR_PREC_DOUBLE ? 8 : 4;
    hr_grid_layout l;
    hr_layout_init(&l, dim, x.p.nx, x.p.ny, x.p.nz, es);
    if (hri_grid_alloc(&x.u0, &l) != HR_OK || hri_grid_alloc(&x.ref, &l) != HR_OK ||
        hri_grid_alloc(&x.got, &l) != HR_OK) {
        fprintf(stderr, "hybrid_split: no memory for three host grids\n");
        return 1;
    }
    fill_initial(&x.u0, &x.p);
    /* ref and got: only rows 1..n are compared, and every download writes them whole */
    x.cmp_off = (hr_layout_index(&l, 0, 0, 0) + hr_layout_outer_stride(&l)) * es;
    x.cmp_bytes = (size_t)x.n * hr_layout_outer_stride(&l) * es;
    const double points = (double)x.p.nx * x.p.ny * (dim == 3 ? x.p.nz : 1);
    const double bytes = 2.0 * (double)es * points;
    FILE *js = fopen(out, "w");
    if (!js) {
        perror(out);
        return 1;
    }
    fprintf(
        js,
        "{\n \"mode\": \"engine\", \"dim\": %d, \"nx\": %d, \"ny\": %d, \"nz\": %d, \"precision\": \"%s\", "
        "\"rows\": %d,\n",
        dim, x.p.nx, x.p.ny, dim == 3 ? x.p.nz : 1, hr_precision_name(x.o.precision), x.n);
    fprintf(js,
            " \"second\": \"%s\", \"ghost\": %d, \"sweeps\": %ld, \"repeats\": %d, \"check_sweeps\": %ld,\n",
            x.o.split_second == HR_SPLIT_CPU ? "cpu" : "gpu", x.g, c->sweeps, c->repeats, c->check);
    fprintf(js, " \"byte_model\": \"2 words per interior point per sweep\", \"bytes_per_sweep\": %.0f,\n",
            bytes);

    /* the reference and the GPU-only line: the second placement alone, whole graphs */
    double base = NAN;
    {
        const double t0 = hr_now();
        hr_split *e = make(&x, 0, 1);
        if (!e || (c->check > 0 && !answer(&x, e, &x.ref)) ||
            time_blocks(e, (c->sweeps + 15) / 16 * 16, c->repeats, &base)) {
            hri_split_free(e);
            return 1;
        }
        hri_split_free(e);
        printf("GPU-only %.6g s/sweep (%.1f GB/s), reference after %ld sweeps (%.2f s)\n", base,
               bytes / base * 1e-9, c->check, hr_now() - t0);
    }
    fprintf(js, " \"gpu_only_s\": %.9g, \"gpu_only_gbps\": %.4g,\n \"schedules\": [\n", base,
            bytes / base * 1e-9);
    int bad = 0, best_rows[2] = {0, 0};
    hr_options used[2];
    for (int q = 0; q < c->nsched; q++) {
        const double tq = hr_now();
        x.o.split_schedule = c->schedules[q];
        const int nested = c->schedules[q] == HR_SPLIT_NESTED;
        const char *sname = nested ? "nested" : "naive";
        /* the nested boundary crew: the fastest of the sizes given, at one split */
        char tune[512] = "";
        size_t tl = 0;
        if (nested && c->ntune > 0) {
            int rows = (int)lround(c->tune_at * x.n), best = 0;
            rows = rows < x.g ? x.g : rows > x.n - x.g ? x.n - x.g : rows;
            double tbest = HUGE_VAL;
            for (int k = 0; k < c->ntune; k++) {
                x.o.split_boundary_threads = c->tune_b[k];
                hr_split_spec ts;
                hri_split_spec_from_options(&x.o, &x.p, rows, NULL, &ts);
                if (k > 0 && ts.boundary_threads >= ts.threads_a)
                    continue; /* no crew larger than the interior's */
                hr_split *e = make(&x, rows, 0);
                double t = NAN;
                if (!e || time_blocks(e, c->sweeps, c->repeats, &t)) {
                    hri_split_free(e);
                    return 1;
                }
                hri_split_free(e);
                printf("  nested, %d boundary threads at %d rows: %.6g s/sweep\n", c->tune_b[k], rows, t);
                tl +=
                    (size_t)snprintf(tune + tl, sizeof tune - tl, "%s{\"boundary_threads\": %d, \"s\": %.9g}",
                                     k ? ", " : "", c->tune_b[k], t);
                if (t < tbest) {
                    tbest = t;
                    best = c->tune_b[k];
                }
            }
            x.o.split_boundary_threads = best;
        }
        hr_hybrid_calibration cal;
        hr_split_model m;
        if (hr_hybrid_calibrate(&x.o, HR_HYBRID_CAL_STREAM, &cal, &m) != HR_OK) {
            fprintf(stderr, "hybrid_split: calibrate: %s\n", hr_hybrid_last_error());
            return 1;
        }
        hr_hybrid_info in;
        hr_hybrid_choose(&x.o, &cal, &m, &in);
        hr_split_spec sp;
        hri_split_spec_from_options(&x.o, &x.p, 1, NULL, &sp);
        bench_write_calibration(js, sname, &cal, &m);
        fprintf(js, "   \"threads\": %d, \"boundary_threads\": %d, \"tune\": [%s],\n", sp.threads_a,
                nested ? sp.boundary_threads : 0, tune);
        printf("%s (%d+%d threads): t_c %.6g t_g %.6g X0 %.6g, %d knots from %d rungs, calibration %.2f s\n",
               sname, nested ? sp.boundary_threads : 0, sp.threads_a, cal.t_cpu, cal.t_gpu, cal.x_off,
               m.a_knots, cal.ladder, cal.seconds);
        printf("  ladder (rows: s/sweep; %d rungs measured again):", cal.remeasured);
        for (int k = 0; k < cal.ladder; k++)
            printf(" %d: %.4g", cal.ladder_rows[k], cal.ladder_s[k]);
        printf("\n  auto's measured candidates (rows: s/sweep):");
        for (int k = 0; k < cal.candidates; k++) {
            printf(" %d: %.4g", cal.cand_rows[k], cal.cand_s[k]);
            if (cal.cand_again_s[k] > 0) printf(" (again %.4g)", cal.cand_again_s[k]);
        }
        printf(" (GPU-only in the calibration %.4g; %d over 1.2x the model measured again)\n", cal.gpu_alone_s,
               cal.cand_remeasured);
        fprintf(js, "   \"points\": [\n");
        /* the splits: the fractions' rows (one split for two fractions), then the model's
         * choice when no fraction gave it; all measured in passes (measure_splits) */
        int rows_of[MAXF + 1], nr = 0, auto_i = -1;
        for (int i = 0; i < c->nf; i++) {
            const int rows = (int)lround(c->f[i] * x.n);
            if (rows > 0 && rows < x.n && (rows < x.g || x.n - rows < x.g)) continue;
            if (nr > 0 && rows_of[nr - 1] == rows) continue;
            if (rows == in.rows_cpu) auto_i = nr;
            rows_of[nr++] = rows;
        }
        const int sweep_n = nr;
        if (auto_i < 0) {
            auto_i = nr;
            rows_of[nr++] = in.rows_cpu;
        }
        double per_of[MAXF + 1], pass_s[MAXF + 1][MAXPASS];
        int ok_of[MAXF + 1], gpu_only[MAXF + 1], nmeas = 0, meas_i[MAXF + 1];
        for (int i = 0; i < nr; i++) {
            gpu_only[i] = rows_of[i] == 0;
            per_of[i] = base;
            ok_of[i] = 1;
            if (!gpu_only[i]) meas_i[nmeas++] = i;
        }
        {
            int mrows[MAXF + 1];
            double mper[MAXF + 1], mpass[MAXF + 1][MAXPASS];
            int mok[MAXF + 1];
            for (int k = 0; k < nmeas; k++)
                mrows[k] = rows_of[meas_i[k]];
            if (measure_splits(&x, &m, mrows, nmeas, mper, mpass, mok)) return 1;
            for (int k = 0; k < nmeas; k++) {
                per_of[meas_i[k]] = mper[k];
                ok_of[meas_i[k]] = mok[k];
                memcpy(pass_s[meas_i[k]], mpass[k], sizeof mpass[k]);
            }
        }
        const int passes = c->passes > 0 ? c->passes : 1;
        double auto_s = per_of[auto_i], worst = 0, worst_f = 0, worst_s = 0, worst_pred = 0;
        int first = 1, within = 0, count = 0, worst_rows = 0, steady = 0;
        double best_s = HUGE_VAL;
        for (int i = 0; i < nr; i++) {
            const int rows = rows_of[i];
            const double per = per_of[i], pred = hr_split_model_time(&m, rows);
            const int ok = ok_of[i];
            if (!ok) {
                fprintf(stderr, "hybrid_split: %s %d rows: NOT bitwise equal to GPU-only\n", sname, rows);
                bad = 1;
            }
            if (i >= sweep_n) break; /* the model's choice, off the sweep */
            if (rows > 0 && rows < x.n && (best_rows[q] == 0 || per < best_s)) {
                best_rows[q] = rows;
                best_s = per;
            }
            const double err_rel = fabs(pred / per - 1);
            within += err_rel <= 0.10;
            count++;
            /* the measurement's own spread: every pass within 10 % of the median */
            int agree = 1;
            for (int p = 0; !gpu_only[i] && p < passes; p++)
                agree &= fabs(pass_s[i][p] / per - 1) <= 0.10;
            steady += agree;
            if (err_rel > worst) {
                worst = err_rel;
                worst_f = (double)rows / x.n;
                worst_rows = rows;
                worst_s = per;
                worst_pred = pred;
            }
            printf("  %s f %.4f rows %d: %.6g s/sweep (%.4f of GPU-only), model %.6g (%+.1f %%)%s%s\n", sname,
                   (double)rows / x.n, rows, per, per / base, pred, 100 * (pred / per - 1),
                   agree ? "" : " [passes spread > 10 %]", ok ? "" : " WRONG");
            fprintf(js,
                    "%s    {\"fraction\": %.6g, \"rows_cpu\": %d, \"measured_s\": %.9g, \"predicted_s\": %.9g, "
                    "\"gbps\": %.4g, \"checked\": %s, \"passes_s\": [",
                    first ? "" : ",\n", (double)rows / x.n, rows, per, pred, bytes / per * 1e-9,
                    c->check > 0 ? (ok ? "true" : "false") : "null");
            for (int p = 0; p < (gpu_only[i] ? 0 : passes); p++)
                fprintf(js, "%s%.9g", p ? ", " : "", pass_s[i][p]);
            fprintf(js, "]}");
            first = 0;
        }
        fprintf(js, "\n   ],\n");
        /* the worst split again in fresh engines: a spread between engines is the measurement's
         * (run 14d: the same share up to 4x apart in two engines), not the model's */
        double again[2] = {NAN, NAN};
        if (worst > 0.10 && worst_rows > 0) {
            for (int k = 0; k < 2; k++) {
                hr_split *e = make(&x, worst_rows, 1);
                if (!e || time_blocks(e, block_sweeps(c, worst_pred), c->repeats, &again[k])) {
                    hri_split_free(e);
                    return 1;
                }
                hri_split_free(e);
            }
            printf(
                "  %s recheck: the worst split (%d rows) in 2 fresh engines: %.6g, %.6g s/sweep (first %.6g, "
                "model %.6g)\n",
                sname, worst_rows, again[0], again[1], worst_s, worst_pred);
        }
        fprintf(js, "   \"recheck\": {\"rows_cpu\": %d, \"measured_s\": %.9g, \"again_s\": [%.9g, %.9g]},\n",
                worst_rows, worst_s, isnan(again[0]) ? -1.0 : again[0], isnan(again[1]) ? -1.0 : again[1]);
        fprintf(js,
                "   \"auto\": {\"rows_cpu\": %d, \"fraction\": %.6g, \"predicted_s\": %.9g, \"measured_s\": "
                "%.9g},\n   \"within\": %d, \"splits\": %d, \"passes\": %d, \"passes_agree\": %d,\n"
                "   \"cpu_part\": \"%s\", \"pinned\": %s, \"seconds\": %.3g\n  }%s\n",
                in.rows_cpu, (double)in.rows_cpu / x.n, in.predicted_s, auto_s, within, count, passes, steady,
                x.cpu_desc,
                strstr(x.cpu_desc, "pinned") ? "true" : "false", hr_now() - tq, q + 1 < c->nsched ? "," : "");
        printf("%s: model within 10 %% of measured at %d of %d splits, worst %.1f %% at %.2f %% (CPU part: "
               "%s); the measurement's %d passes within 10 %% of their median at %d of %d\n",
               sname, within, count, 100 * worst, 100 * worst_f, x.cpu_desc, passes, steady, count);
        printf("%s: model's choice %d rows (%.2f %%): predicted %.6g, measured %.6g s/sweep; %.1f s\n", sname,
               in.rows_cpu, 100.0 * in.rows_cpu / x.n, in.predicted_s, auto_s, hr_now() - tq);
        used[q] = x.o;
    }
    fprintf(js, " ],\n \"head_to_head\": [");
    if (c->nsched == 2 && best_rows[0] > 0 && best_rows[1] > 0) { /* at each schedule's best split */
        const int nn = c->schedules[0] == HR_SPLIT_NESTED ? 0 : 1;
        for (int k = 0; k < 2; k++) {
            if (k == 1 && best_rows[1] == best_rows[0]) break;
            double t[2];
            if (head_to_head(&x, used, best_rows[k], t)) return 1;
            printf(
                "head to head at %d rows (%s's best): nested %.6g, naive %.6g s/sweep: naive/nested %.4f\n",
                best_rows[k], k == nn ? "nested" : "naive", t[nn], t[1 - nn], t[1 - nn] / t[nn]);
            fprintf(js,
                    "%s{\"rows_cpu\": %d, \"fraction\": %.6g, \"best_of\": \"%s\", \"nested_s\": %.9g, "
                    "\"naive_s\": %.9g, \"blocks\": %d}",
                    k ? ", " : "", best_rows[k], (double)best_rows[k] / x.n, k == nn ? "nested" : "naive",
                    t[nn], t[1 - nn], c->repeats > 5 ? c->repeats : 5);
        }
    }
    fprintf(js, "],\n \"answers_checked\": %s, \"ok\": %s\n}\n", c->check > 0 ? "true" : "false",
            bad ? "false" : "true");
    fclose(js);
    hri_grid_free(&x.u0);
    hri_grid_free(&x.ref);
    hri_grid_free(&x.got);
    return bad ? 1 : 0;
}
