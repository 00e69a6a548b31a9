/*
 * The hybrid split benchmark (Venkatasubramanian & Vuduc figs. 14/15, Sourouri et al. fig. 5d):
 *
 *   hybrid_split OUT.json [--dim 2|3] [--n N | --nx X --ny Y --nz Z] [--precision single|double]
 *                [--second gpu|cpu] [--schedules nested,naive] [--ghost G] [--threads T]
 *                [--boundary-threads B] [--fractions F,F,...] [--sweeps K] [--repeats R]
 *                [--check S] [--two-gpus] [--engine [--tune-boundary B,B,.. --tune-at F] [--passes P]]
 *
 * For each schedule and fraction f of the rows (planes) on the CPU it
 *   1. checks the answer once per fraction: S sweeps of the hybrid backend bitwise against
 *      cpu-threads (2-D; itself bitwise cpu-seq) or cpu-seq (3-D), exit 1 on a mismatch;
 *   2. times R blocks of K sweeps after one untimed block, the median per sweep;
 * and records the model's prediction from one calibration (hr_hybrid_calibrate, with the
 * STREAM rule's bandwidths), the GPU-only time (backend gpu, kernel tuned: the baseline
 * line; the second CPU placement alone with --second cpu) and the auto split (chosen rows,
 * predicted and measured time). --two-gpus: part A on GPU 1, part B on GPU 0 (Venkatasubramanian & Vuduc
 * fig. 15 right: f = the fraction on GPU 1), rows crossing through pinned host buffers.
 * --engine (hybrid_split_engine.c): one split engine per split instead of one solver, each
 * checked bitwise against the second placement alone (fast enough for fig. 5d's 2 GiB grids);
 * --passes P: every split timed in P passes over all the splits, the median of the passes.
 * Byte model: u read once and written once per interior point and sweep (2 words).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/solver_internal.h"
#include "core/timer.h"
#include "hetrelax/hetrelax.h"
#include "hetrelax/hybrid.h"
#include "parallel/hybrid/split.h"

#include "hybrid_split.h"
#include "tuning_env.h"

/* Median seconds per sweep of R blocks of K sweeps (one untimed block first). */
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

static hr_status time_solver(hr_solver *s, const bench_cfg *c, double *per)
{
    double t[64];
    HR_TRY(s->k->kernel->sweeps(s, c->sweeps));
    for (int r = 0; r < c->repeats; r++) {
        const double t0 = hr_now();
        HR_TRY(s->k->kernel->sweeps(s, c->sweeps));
        t[r] = (hr_now() - t0) / (double)c->sweeps;
    }
    *per = median(t, c->repeats);
    return HR_OK;
}

static size_t points(const hr_options *o)
{
    return (size_t)hri_options_extent(o, 0) * hri_options_extent(o, 1) * hri_options_extent(o, 2);
}

/* S sweeps of o, the solution (caller frees), or NULL with a message. */
static void *solution_after(hr_options o, long sweeps)
{
    o.iters = sweeps;
    hr_solver *s;
    if (hr_solver_create(&o, &s) != HR_OK) {
        fprintf(stderr, "hybrid_split: create (%s): %s\n", hr_backend_name(o.backend), hr_last_error());
        return NULL;
    }
    void *u = malloc(points(&o) * 8);
    hr_result r;
    if (!u || hr_solver_run(s, &r) != HR_OK || hr_solver_solution(s, o.precision, u, points(&o)) != HR_OK) {
        fprintf(stderr, "hybrid_split: run (%s): %s\n", hr_backend_name(o.backend), hr_solver_last_error(s));
        free(u);
        u = NULL;
    }
    hr_solver_free(s);
    return u;
}

/* The two-GPU engine (internal API): seconds per sweep with rows_a rows on GPU 1. */
static hr_status time_two_gpus(const bench_cfg *c, int rows_a, double *per)
{
    hr_run_problem p;
    hri_problem_resolve(&c->o, &p);
    hr_split_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.tune = c->o.tuning;
    sp.dim = p.dim;
    sp.nx = p.nx;
    sp.ny = p.ny;
    sp.nz = p.nz;
    sp.esize = c->o.precision == HR_PREC_DOUBLE ? 8 : 4;
    sp.omega = p.omega;
    sp.spike_i = p.spike_i;
    sp.spike_j = p.spike_j;
    sp.spike_k = p.spike_k;
    sp.rows_a = rows_a;
    sp.ghost = c->o.split_ghost > 0 ? c->o.split_ghost : 1;
    sp.second = HR_SPLIT_GPU;
    sp.first_gpu = 1;
    sp.device_a = 1;
    sp.device = 0;
    hr_split *e;
    char err[256];
    hr_status st = hri_split_create(&sp, NULL, NULL, &e, err, sizeof err);
    if (st != HR_OK) {
        fprintf(stderr, "hybrid_split: two gpus: %s\n", err);
        return st;
    }
    double t[64];
    st = hri_split_sweeps(e, c->sweeps);
    for (int r = 0; r < c->repeats && st == HR_OK; r++) {
        const double t0 = hr_now();
        st = hri_split_sweeps(e, c->sweeps);
        t[r] = (hr_now() - t0) / (double)c->sweeps;
    }
    if (st != HR_OK) fprintf(stderr, "hybrid_split: two gpus: %s\n", e->err);
    hri_split_free(e);
    if (st == HR_OK) *per = median(t, c->repeats);
    return st;
}

static int parse_list(const char *s, double *f, int max)
{
    int n = 0;
    while (s && *s && n < max) {
        char *end;
        f[n++] = strtod(s, &end);
        s = *end == ',' ? end + 1 : NULL;
    }
    return n;
}

static int parse(int argc, char **argv, bench_cfg *c, const char **out)
{
    hr_options *o = &c->o;
    hr_options_default(o);
    tuning_from_env(&o->tuning);
    o->backend = HR_BACKEND_HYBRID;
    o->rhs = HR_RHS_SPIKE;
    o->n = 4096;
    o->precision = HR_PREC_SINGLE;
    c->nsched = 1;
    c->schedules[0] = HR_SPLIT_NESTED;
    c->sweeps = 50;
    c->repeats = 5;
    c->check = 4;
    c->nf = 0;
    *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && v && ++i)
        if (ARG("--dim"))
            o->dim = atoi(v);
        else if (ARG("--n"))
            o->n = atoi(v);
        else if (ARG("--nx"))
            o->nx = atoi(v);
        else if (ARG("--ny"))
            o->ny = atoi(v);
        else if (ARG("--nz"))
            o->nz = atoi(v);
        else if (ARG("--precision"))
            o->precision = strcmp(v, "double") == 0 ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
        else if (ARG("--second"))
            o->split_second = strcmp(v, "cpu") == 0 ? HR_SPLIT_CPU : HR_SPLIT_GPU;
        else if (ARG("--schedules")) {
            c->nsched = 0;
            if (strstr(v, "nested")) c->schedules[c->nsched++] = HR_SPLIT_NESTED;
            if (strstr(v, "naive")) c->schedules[c->nsched++] = HR_SPLIT_NAIVE;
        } else if (ARG("--ghost"))
            o->split_ghost = atoi(v);
        else if (ARG("--threads"))
            o->threads = atoi(v);
        else if (ARG("--boundary-threads"))
            o->split_boundary_threads = atoi(v);
        else if (ARG("--fractions"))
            c->nf = parse_list(v, c->f, MAXF);
        else if (ARG("--sweeps"))
            c->sweeps = atol(v);
        else if (ARG("--repeats"))
            c->repeats = atoi(v);
        else if (ARG("--passes"))
            c->passes = atoi(v);
        else if (ARG("--check"))
            c->check = atol(v);
        else if (strcmp(a, "--two-gpus") == 0)
            c->two_gpus = 1;
        else if (strcmp(a, "--engine") == 0)
            c->engine = 1;
        else if (ARG("--tune-boundary")) {
            double b[8];
            c->ntune = parse_list(v, b, 8);
            for (int q = 0; q < c->ntune; q++)
                c->tune_b[q] = (int)b[q];
        } else if (ARG("--tune-at"))
            c->tune_at = atof(v);
        else if (a[0] != '-' && !*out)
            *out = a;
        else {
            fprintf(stderr, "hybrid_split: %s: unknown or missing value\n", a);
            return 2;
        }
    }
    if (!*out || c->nsched < 1 || c->repeats < 1 || c->repeats > 64 || c->sweeps < 1 || c->passes < 0 ||
        c->passes > MAXPASS) {
        fprintf(stderr, "usage: hybrid_split OUT.json [options] (see the file's header)\n");
        return 2;
    }
    if (c->nf == 0)
        for (int i = 0; i <= 20; i++)
            c->f[c->nf++] = 0.005 * i;
    if (c->tune_at <= 0) c->tune_at = 0.04;
    return 0;
}

int main(int argc, char **argv)
{
    bench_cfg c;
    memset(&c, 0, sizeof c);
    const char *out;
    int rc = parse(argc, argv, &c, &out);
    if (rc) return rc;
    hr_options *o = &c.o;
    if (c.engine) return engine_main(&c, out);
    const int dim = hri_options_dim(o), n = hri_options_extent(o, dim == 3 ? 2 : 1);
    FILE *js = fopen(out, "w");
    if (!js) {
        perror(out);
        return 1;
    }
    const double bytes = 2.0 * (o->precision == HR_PREC_DOUBLE ? 8 : 4) * (double)points(o);
    fprintf(js, "{\n \"dim\": %d, \"nx\": %d, \"ny\": %d, \"nz\": %d, \"precision\": \"%s\", \"rows\": %d,\n",
            dim, hri_options_extent(o, 0), hri_options_extent(o, 1), hri_options_extent(o, 2),
            hr_precision_name(o->precision), n);
    fprintf(js, " \"second\": \"%s\", \"ghost\": %d, \"sweeps\": %ld, \"repeats\": %d, \"two_gpus\": %d,\n",
            o->split_second == HR_SPLIT_CPU ? "cpu" : "gpu", o->split_ghost > 0 ? o->split_ghost : 1,
            c.sweeps, c.repeats, c.two_gpus);
    fprintf(js, " \"byte_model\": \"2 words per interior point per sweep\", \"bytes_per_sweep\": %.0f,\n",
            bytes);

    /* the baseline: GPU-only (the tuned kernel), or the second CPU alone */
    double base = NAN;
    if (c.two_gpus) {
        if (time_two_gpus(&c, 0, &base) != HR_OK) return 1;
    } else {
        hr_options g = *o;
        if (o->split_second == HR_SPLIT_GPU) {
            g.backend = HR_BACKEND_GPU;
            g.kernel = "tuned";
        } else {
            g.split = 0.0;
        }
        hr_solver *s;
        if (hr_solver_create(&g, &s) != HR_OK || time_solver(s, &c, &base) != HR_OK) {
            fprintf(stderr, "hybrid_split: baseline: %s\n", hr_last_error());
            return 1;
        }
        hr_solver_free(s);
    }
    fprintf(js, " \"gpu_only_s\": %.9g, \"gpu_only_gbps\": %.4g,\n", base, bytes / base * 1e-9);
    printf("baseline %.6g s/sweep (%.1f GB/s)\n", base, bytes / base * 1e-9);

    /* the model, calibrated once per schedule */
    void *ref = NULL;
    if (c.check > 0 && !c.two_gpus) {
        hr_options r = *o;
        r.backend = dim == 3 ? HR_BACKEND_CPU_SEQ : HR_BACKEND_CPU_THREADS; /* cpu-threads is 2-D only */
        r.threads = 0;
        ref = solution_after(r, c.check);
        if (!ref) return 1;
    }
    const size_t ubytes = points(o) * (o->precision == HR_PREC_DOUBLE ? 8 : 4);
    fprintf(js, " \"schedules\": [\n");
    int bad = 0;
    for (int q = 0; q < c.nsched; q++) {
        o->split_schedule = c.schedules[q];
        const char *sname = c.schedules[q] == HR_SPLIT_NAIVE ? "naive" : "nested";
        hr_hybrid_calibration cal;
        hr_split_model m;
        memset(&cal, 0, sizeof cal);
        memset(&m, 0, sizeof m);
        if (!c.two_gpus && hr_hybrid_calibrate(o, HR_HYBRID_CAL_STREAM, &cal, &m) != HR_OK) {
            fprintf(stderr, "hybrid_split: calibrate: %s\n", hr_hybrid_last_error());
            return 1;
        }
        if (c.two_gpus) { /* the model from the two devices alone, X from a half split */
            double ta, half;
            if (time_two_gpus(&c, n, &ta) != HR_OK || time_two_gpus(&c, n / 2, &half) != HR_OK) return 1;
            cal.t_cpu = ta;
            cal.t_gpu = base;
            cal.probe_rows = n / 2;
            cal.probe_s = half;
            const double busy = 0.5 * (ta > base ? ta : base);
            cal.x_exposed = half > busy ? half - busy : 0.0;
            m = (hr_split_model){
                .t_a = ta, .t_b = base, .x_latency = cal.x_exposed / 2, .messages = 2, .rows = n};
        }
        bench_write_calibration(js, sname, &cal, &m);
        printf("%s: t_c %.6g t_g %.6g X %.6g (bound %.4f)\n", sname, cal.t_cpu, cal.t_gpu, cal.x_exposed,
               1.0 + cal.t_gpu / cal.t_cpu);
        fprintf(js, "   \"points\": [\n");
        for (int i = 0; i < c.nf; i++) {
            const int rows = (int)lround(c.f[i] * n);
            double per = NAN;
            int ok = 1;
            if (c.two_gpus) {
                if (time_two_gpus(&c, rows, &per) != HR_OK) return 1;
            } else {
                hr_options h = *o;
                h.split = (double)rows / n;
                h.iters = c.check;
                hr_solver *s;
                hr_result res;
                if (hr_solver_create(&h, &s) != HR_OK) {
                    fprintf(stderr, "hybrid_split: f %.4f: %s\n", h.split, hr_last_error());
                    return 1;
                }
                /* the answer first: the same solver then goes on to the timed blocks */
                if (ref) {
                    void *u = malloc(ubytes);
                    ok = u && hr_solver_run(s, &res) == HR_OK &&
                         hr_solver_solution(s, o->precision, u, points(o)) == HR_OK &&
                         memcmp(u, ref, ubytes) == 0;
                    free(u);
                    if (!ok) {
                        fprintf(stderr, "hybrid_split: %s f %.4f: NOT bitwise equal to the CPU reference\n",
                                sname, h.split);
                        bad = 1;
                    }
                }
                if (time_solver(s, &c, &per) != HR_OK) {
                    fprintf(stderr, "hybrid_split: f %.4f: %s\n", h.split, hr_solver_last_error(s));
                    return 1;
                }
                hr_solver_free(s);
            }
            const double pred = hr_split_model_time(&m, rows);
            printf("  %s f %.4f rows %d: %.6g s/sweep (%.4f of baseline), model %.6g%s\n", sname,
                   (double)rows / n, rows, per, per / base, pred, ok ? "" : " WRONG ANSWER");
            fprintf(js,
                    "    {\"fraction\": %.6g, \"rows_cpu\": %d, \"measured_s\": %.9g, \"predicted_s\": %.9g, "
                    "\"gbps\": %.4g, \"checked\": %s}%s\n",
                    (double)rows / n, rows, per, pred, bytes / per * 1e-9,
                    ref ? (ok ? "true" : "false") : "null", i + 1 < c.nf ? "," : "");
        }
        fprintf(js, "   ],\n");
        /* the auto split, as --split auto runs it (its own calibration) */
        double per = NAN;
        hr_hybrid_info in;
        memset(&in, 0, sizeof in);
        if (!c.two_gpus) {
            hr_options h = *o;
            h.split = -1.0;
            hr_solver *s;
            if (hr_solver_create(&h, &s) != HR_OK || time_solver(s, &c, &per) != HR_OK ||
                hr_solver_hybrid_info(s, &in) != HR_OK) {
                fprintf(stderr, "hybrid_split: auto: %s\n", hr_last_error());
                return 1;
            }
            char text[8192];
            hr_hybrid_explain(&in, per, text, sizeof text);
            printf("%s", text);
            hr_solver_free(s);
        } else {
            in.rows_cpu = hr_split_model_best_range(&m, 1, n - 1, 0.01, &in.predicted_s);
            if (time_two_gpus(&c, in.rows_cpu, &per) != HR_OK) return 1;
        }
        fprintf(js,
                "   \"auto\": {\"rows_cpu\": %d, \"fraction\": %.6g, \"predicted_s\": %.9g, \"measured_s\": "
                "%.9g}\n",
                in.rows_cpu, (double)in.rows_cpu / n, in.predicted_s, per);
        fprintf(js, "  }%s\n", q + 1 < c.nsched ? "," : "");
    }
    fprintf(js, " ],\n \"answers_checked\": %s, \"ok\": %s\n}\n", ref ? "true" : "false",
            bad ? "false" : "true");
    fclose(js);
    free(ref);
    return bad ? 1 : 0;
}
