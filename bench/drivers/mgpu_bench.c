/*
 * Many GPUs in one process (Venkatasubramanian & Vuduc fig. 15 right): the split engine's
 * chain of GPU parts (the engine `--gpus N` runs), timed and checked.
 *
 *   mgpu_bench OUT.json [--dim 2|3] [--n N | --nx X --ny Y --nz Z] [--precision single|double]
 *              [--gpus 1,2,...] [--fractions F,F,...] [--sweeps K] [--repeats R] [--check S]
 *              [--ghost G] [--host-too] [--cpu]
 *
 * Scaling (default): for each GPU count G, the chain of G equal slabs on GPUs 0..G-1 (G = 1:
 * one part, CUDA graphs). The 1-GPU baseline is also the `gpu` backend's `tuned` kernel.
 * Every G >= 2 runs as a user gets it (mode "auto": the engine's start-up trial of the
 * direct copies against host staging keeps the faster; the JSON gives both trial times).
 * --host-too: every G >= 2 also with the direct copies kept (mode "direct", no trial),
 * with the exchange staged through the host (mode "host") and, on GPUs, with the direct
 * copies kept and pushed by the source (mode "push", the knob tuning.peer_push on; the other
 * modes run with it off).
 * Fractions (fig. 15): two GPUs, the fraction F of the rows (planes) on GPU 1 (the high
 * rows), the rest on GPU 0; F = 0 and 1 are one GPU alone.
 *
 * Each configuration is first checked: S sweeps from a grid of nonzero values (every point
 * differs) bitwise against S sweeps of one part on GPU 0 (the tuned region sweeps, bitwise
 * cpu-seq by test_hybrid_gpu); exit 1 on a mismatch. Then R blocks of K sweeps after one
 * untimed block, the median per sweep (host clock, every block ends with all GPUs idle).
 * --cpu: every part a CPU crew and the baseline cpu-threads (the script's own check
 * without a GPU; timings meaningless).
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
#include "parallel/hybrid/split.h"
#include "tuning_env.h"

#define MAXL 64

typedef struct cfg {
    hr_options o;
    hr_run_problem p;
    int gpus[MAXL], ngpus;
    double f[MAXL];
    int nf;
    long sweeps, check;
    int repeats, host_too, ghost, cpu;
} cfg;

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

typedef struct timing {
    double med, lo, hi;
} timing;

static timing summarise(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    timing r = {n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]), t[0], t[n - 1]};
    return r;
}

enum { MODE_AUTO = 0, MODE_DIRECT = 1, MODE_HOST = 2, MODE_PUSH = 3 };
static const char *const mode_name[4] = {"auto", "direct", "host", "push"};

/* The engine spec: `parts` >= 2 a chain with rows cut[] (NULL: equal) on GPUs dev0.. ;
 * parts 1: one part on GPU dev0. mode: MODE_* (how the parts exchange). */
static void make_spec(const cfg *c, int parts, const int *cut, int dev0, int mode, hr_split_spec *sp)
{
    hr_options o = c->o;
    o.backend = HR_BACKEND_HYBRID;
    o.split_second = c->cpu ? HR_SPLIT_CPU : HR_SPLIT_GPU;
    o.split_ghost = c->ghost;
    hri_split_spec_from_options(&o, &c->p, 0, NULL, sp);
    if (c->cpu) sp->threads_b = 1;
    sp->device = dev0;
    sp->host_exchange = mode == MODE_HOST;
    sp->exchange_trial = mode == MODE_DIRECT || mode == MODE_PUSH ? -1 : 0;
    sp->tune.peer_push = mode == MODE_PUSH ? HR_TUNE_ON : HR_TUNE_OFF; /* read by the GPU placements */
    if (parts >= 2) {
        sp->parts = parts;
        for (int q = 0; q < parts && cut; q++)
            sp->cut[q] = cut[q];
    }
}

/* A grid of nonzero, pairwise different-looking values (cheap: no sin per point). */
static hr_status initial_grid(const cfg *c, hr_grid *u)
{
    hr_grid_layout l;
    hr_layout_init(&l, c->p.dim, c->p.nx, c->p.ny, c->p.nz, c->o.precision == HR_PREC_DOUBLE ? 8 : 4);
    HR_TRY(hri_grid_alloc(u, &l));
    hri_grid_init_rows(u, 0, hr_layout_outer(&l), c->p.boundary);
    for (int k = 0; k < c->p.nz; k++)
        for (int i = 0; i < c->p.ny; i++) {
            const size_t at = hr_layout_index(&l, i + 1, 1, c->p.dim == 3 ? k + 1 : 0);
            for (int j = 0; j < c->p.nx; j++) {
                const unsigned h = (unsigned)(i * 7919 + j * 104729 + k * 1237) % 1021u;
                const double v = 0.25 + (double)h / 1021.0;
                if (l.esize == 8)
                    ((double *)u->base)[at + j] = v;
                else
                    ((float *)u->base)[at + j] = (float)v;
            }
        }
    return HR_OK;
}

/* Interior points of a and b bitwise equal. */
static int same(const cfg *c, const hr_grid *a, const hr_grid *b)
{
    const size_t es = a->l.esize;
    for (int k = 0; k < c->p.nz; k++)
        for (int i = 0; i < c->p.ny; i++) {
            const size_t at = hr_layout_index(&a->l, i + 1, 1, c->p.dim == 3 ? k + 1 : 0) * es;
            if (memcmp((char *)a->base + at, (char *)b->base + at, (size_t)c->p.nx * es) != 0) return 0;
        }
    return 1;
}

/* S sweeps of the spec from u0 into out (allocated like u0). */
static hr_status run_checked(const cfg *c, const hr_split_spec *sp, const hr_grid *u0, hr_grid *out,
                             hr_split **keep, char *exchange, size_t xs, double *setup_s)
{
    hr_split *e = NULL;
    char err[256] = "";
    const double t0 = hr_now();
    hr_status st = hri_split_create(sp, u0, NULL, &e, err, sizeof err);
    if (setup_s) *setup_s = hr_now() - t0;
    if (st != HR_OK) {
        fprintf(stderr, "mgpu_bench: create: %s\n", err);
        return st;
    }
    snprintf(exchange, xs, "%s", e->exchange);
    if (c->check > 0) {
        st = hri_split_sweeps(e, c->check);
        if (st == HR_OK && !out->base) st = hri_grid_alloc(out, &u0->l);
        if (st == HR_OK) st = hri_split_download(e, out);
        if (st != HR_OK)
            fprintf(stderr, "mgpu_bench: check run: %s\n", e->err[0] ? e->err : hr_status_string(st));
    }
    if (st != HR_OK || !keep) {
        hri_split_free(e);
        return st;
    }
    *keep = e;
    return HR_OK;
}

static hr_status time_engine(const cfg *c, hr_split *e, timing *t)
{
    double v[MAXL];
    HR_TRY(hri_split_sweeps(e, c->sweeps));
    for (int r = 0; r < c->repeats; r++) {
        const double t0 = hr_now();
        HR_TRY(hri_split_sweeps(e, c->sweeps));
        v[r] = (hr_now() - t0) / (double)c->sweeps;
    }
    *t = summarise(v, c->repeats);
    return HR_OK;
}

/* The `gpu` backend's tuned kernel alone (zeros, the spike): the 1-GPU baseline. */
static hr_status time_backend(const cfg *c, timing *t)
{
    hr_options g = c->o;
    g.backend = c->cpu ? (c->p.dim == 3 ? HR_BACKEND_CPU_SEQ : HR_BACKEND_CPU_THREADS) : HR_BACKEND_GPU;
    g.kernel = c->cpu ? NULL : "tuned";
    hr_solver *s;
    if (hr_solver_create(&g, &s) != HR_OK) {
        fprintf(stderr, "mgpu_bench: gpu backend: %s\n", hr_last_error());
        return HR_ERR_DEVICE;
    }
    double v[MAXL];
    hr_status st = s->k->kernel->sweeps(s, c->sweeps);
    for (int r = 0; r < c->repeats && st == HR_OK; r++) {
        const double t0 = hr_now();
        st = s->k->kernel->sweeps(s, c->sweeps);
        v[r] = (hr_now() - t0) / (double)c->sweeps;
    }
    hr_solver_free(s);
    if (st == HR_OK) *t = summarise(v, c->repeats);
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

static int parse(int argc, char **argv, cfg *c, const char **out)
{
    hr_options *o = &c->o;
    hr_options_default(o);
    tuning_from_env(&o->tuning);
    o->rhs = HR_RHS_SPIKE;
    o->n = 4096;
    o->precision = HR_PREC_SINGLE;
    c->ngpus = 2;
    c->gpus[0] = 1;
    c->gpus[1] = 2;
    c->sweeps = 50;
    c->repeats = 5;
    c->check = 10;
    c->ghost = 1;
    *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && v && ++i)
        double tmp[MAXL];
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
        else if (ARG("--gpus")) {
            c->ngpus = parse_list(v, tmp, MAXL);
            for (int q = 0; q < c->ngpus; q++)
                c->gpus[q] = (int)tmp[q];
        } else if (ARG("--fractions"))
            c->nf = parse_list(v, c->f, MAXL);
        else if (ARG("--sweeps"))
            c->sweeps = atol(v);
        else if (ARG("--repeats"))
            c->repeats = atoi(v);
        else if (ARG("--check"))
            c->check = atol(v);
        else if (ARG("--ghost"))
            c->ghost = atoi(v);
        else if (strcmp(a, "--host-too") == 0)
            c->host_too = 1;
        else if (strcmp(a, "--cpu") == 0)
            c->cpu = 1;
        else if (a[0] != '-' && !*out)
            *out = a;
        else {
            fprintf(stderr, "mgpu_bench: %s: unknown or missing value\n", a);
            return 2;
        }
    }
    if (!*out || c->repeats < 1 || c->repeats > MAXL || c->sweeps < 1 || c->ghost < 1) {
        fprintf(stderr, "usage: mgpu_bench OUT.json [options] (see the file's header)\n");
        return 2;
    }
    hri_problem_resolve(o, &c->p);
    return 0;
}

int main(int argc, char **argv)
{
    cfg c;
    memset(&c, 0, sizeof c);
    const char *out;
    int rc = parse(argc, argv, &c, &out);
    if (rc) return rc;
    hr_sysinfo si;
    if (hr_sysinfo_get(&si) != HR_OK) return 1;
    if (c.cpu) si.gpus = 16; /* crews stand in for GPUs */
    if (si.gpus < 1) {
        fprintf(stderr, "mgpu_bench: no GPU\n");
        return 77;
    }
    const hr_run_problem *p = &c.p;
    const int n = p->dim == 3 ? p->nz : p->ny;
    const size_t es = c.o.precision == HR_PREC_DOUBLE ? 8 : 4;
    const double bytes = 2.0 * (double)es * (double)p->nx * p->ny * p->nz;
    FILE *js = fopen(out, "w");
    if (!js) {
        perror(out);
        return 1;
    }
    hr_grid u0, ref, got;
    memset(&ref, 0, sizeof ref);
    memset(&got, 0, sizeof got);
    if (initial_grid(&c, &u0) != HR_OK) return 1;
    char xname[64];
    hr_split_spec sp;
    /* the reference: one part on GPU 0 */
    if (c.check > 0) {
        make_spec(&c, 1, NULL, 0, 0, &sp);
        if (run_checked(&c, &sp, &u0, &ref, NULL, xname, sizeof xname, NULL) != HR_OK) return 1;
    }
    timing base;
    if (time_backend(&c, &base) != HR_OK) return 1;
    fprintf(js, "{\n \"dim\": %d, \"nx\": %d, \"ny\": %d, \"nz\": %d, \"precision\": \"%s\", \"rows\": %d,\n",
            p->dim, p->nx, p->ny, p->nz, es == 8 ? "double" : "single", n);
    char gname[128] = "?";
    hr_gpu_name(0, gname, sizeof gname);
    fprintf(js,
            " \"device\": \"%s\", \"gpus_present\": %d, \"ghost\": %d, \"sweeps\": %ld, \"repeats\": %d, ",
            gname, si.gpus, c.ghost, c.sweeps, c.repeats);
    fprintf(js, "\"check_sweeps\": %ld,\n", c.check);
    fprintf(js, " \"byte_model\": \"2 words per interior point per sweep\", \"bytes_per_sweep\": %.0f,\n",
            bytes);
    fprintf(js, " \"gpu_backend_s\": %.9g, \"gpu_backend_gbps\": %.5g,\n", base.med, bytes / base.med * 1e-9);
    printf("gpu backend (tuned, 1 GPU): %.6g s/sweep, %.1f GB/s\n", base.med, bytes / base.med * 1e-9);
    int bad = 0;
    fprintf(js, " \"records\": [\n");
    int first = 1;
    const int nrec = c.nf > 0 ? c.nf : c.ngpus;
    double one_part = NAN;
    for (int r = 0; r < nrec; r++)
        for (int mode = MODE_AUTO; mode <= (c.host_too ? MODE_PUSH : MODE_AUTO); mode++) {
            int parts, dev0 = 0, cut[2] = {0, 0}, gpus;
            double f = NAN;
            if (c.nf > 0) { /* fig. 15: the fraction on GPU 1 */
                f = c.f[r];
                const int r1 = (int)lround(f * n);
                parts = r1 > 0 && r1 < n ? 2 : 1;
                if (parts == 2 && (r1 < c.ghost || n - r1 < c.ghost)) continue;
                dev0 = r1 >= n ? 1 : 0;
                cut[0] = n - r1;
                cut[1] = r1;
                gpus = parts;
            } else {
                parts = gpus = c.gpus[r];
                int lo, hi;
                hr_split_range(n, parts, 0, &lo, &hi);
                cut[0] = hi - lo; /* the first part's rows (equal parts) */
                cut[1] = parts > 1 ? n - cut[0] : 0;
            }
            if ((mode != MODE_AUTO && parts < 2) || (mode == MODE_PUSH && c.cpu)) continue;
            if (dev0 + gpus > si.gpus) {
                fprintf(stderr, "mgpu_bench: %d GPU(s) needed, %d present: skipped\n", dev0 + gpus, si.gpus);
                continue;
            }
            make_spec(&c, parts, c.nf > 0 ? cut : NULL, dev0, mode, &sp);
            hr_split *e = NULL;
            double setup_s = 0;
            if (run_checked(&c, &sp, &u0, &got, &e, xname, sizeof xname, &setup_s) != HR_OK) return 1;
            const int ok = c.check > 0 ? same(&c, &ref, &got) : -1;
            if (ok == 0) bad = 1;
            timing t;
            if (time_engine(&c, e, &t) != HR_OK) {
                fprintf(stderr, "mgpu_bench: %s\n", e->err);
                return 1;
            }
            const long replays = e->graph_replays;
            const int trial = e->trial;
            const double trial_direct = e->trial_s[0], trial_host = e->trial_s[1];
            hri_split_free(e);
            if (parts == 1 && isnan(one_part)) one_part = t.med;
            const double b1 = base.med < one_part || isnan(one_part) ? base.med : one_part;
            printf("%s %d part(s) on %d GPU(s)%s%s%s: %.6g s/sweep (min %.6g max %.6g), %.1f GB/s, speed-up "
                   "%.3f "
                   "over 1 GPU%s\n",
                   c.nf > 0 ? "fraction on GPU 1" : "scaling", parts, gpus,
                   parts < 2             ? ""
                   : mode == MODE_AUTO   ? " [auto]"
                   : mode == MODE_DIRECT ? " [direct kept]"
                   : mode == MODE_PUSH   ? " [direct kept, pushed]"
                                         : " [host asked for]",
                   parts > 1 ? ", " : "", parts > 1 ? xname : "", t.med, t.lo, t.hi, bytes / t.med * 1e-9,
                   b1 / t.med, ok == 0 ? "  WRONG ANSWER" : "");
            if (c.nf > 0) printf("  fraction %.4f (rows %d | %d)\n", f, cut[0], cut[1]);
            fprintf(js,
                    "%s  {\"gpus\": %d, \"parts\": %d, \"fraction_gpu1\": %.6g, \"rows\": [%d, %d], "
                    "\"exchange\": "
                    "\"%s\", \"host_staged\": %s, \"sweep_s\": %.9g, \"sweep_min_s\": %.9g, \"sweep_max_s\": "
                    "%.9g, "
                    "\"gbps\": %.5g, \"speedup\": %.5g, \"efficiency\": %.5g, \"graph_replays\": %ld, "
                    "\"mode\": \"%s\", \"trial\": \"%s\", \"trial_direct_s\": %.9g, \"trial_host_s\": %.9g, "
                    "\"setup_s\": %.4g, \"checked\": %s}",
                    first ? "" : ",\n", gpus, parts, isnan(f) ? -1.0 : f, parts >= 2 ? cut[0] : n,
                    parts >= 2 ? cut[1] : 0, parts > 1 ? xname : "one part",
                    mode == MODE_HOST ? "true" : "false", t.med, t.lo, t.hi, bytes / t.med * 1e-9, b1 / t.med,
                    b1 / t.med / gpus, replays, parts < 2 ? "one part" : mode_name[mode],
                    trial == 2   ? "host-staged kept"
                    : trial == 1 ? "direct copies kept"
                                 : "not run",
                    trial ? trial_direct : 0.0, trial ? trial_host : 0.0, setup_s,
                    ok < 0 ? "null"
                    : ok   ? "true"
                           : "false");
            first = 0;
        }
    fprintf(js, "\n ],\n \"one_part_s\": %.9g,\n \"answers_checked\": %s, \"ok\": %s\n}\n", one_part,
            c.check > 0 ? "true" : "false", bad ? "false" : "true");
    fclose(js);
    hri_grid_free(&u0);
    hri_grid_free(&ref);
    hri_grid_free(&got);
    if (bad) fprintf(stderr, "mgpu_bench: a configuration is NOT bitwise equal to one GPU\n");
    return bad ? 1 : 0;
}
