/*
 * CPU tuning of the 3-D pencil kernel and its cache (Sourouri et al.'s "simple auto-tuner": the
 * best cache block size moves with the machine). Entries share the GPU tuning cache file
 * and its line format, with a "cpu:" device key:
 *
 *   cpu:MODEL:Pt  pencil  precision  n  0  0  by  nt  gbps      (tab-separated)
 *
 * n is the cube root of the point count, by the rows per pencil, nt 1 for streaming
 * stores and 0 for ordinary ones (the GPU's bx and alpha columns are 0 here). A solver
 * takes the entry of its CPU model, thread count and precision with the nearest n; later
 * lines win ties, so a re-tune replaces.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/timer.h"
#include "core/tune_util.h"
#include "methods/jacobi/cpu/jacobi3d_pencil.h"

void hri_cpu_tune_key(int threads, char *buf, size_t size)
{
    hr_sysinfo si;
    if (hr_sysinfo_get(&si) != HR_OK) snprintf(si.cpu_model, sizeof si.cpu_model, "unknown");
    for (char *p = si.cpu_model; *p; p++) /* keep the key one field */
        if (*p == '\t' || *p == '\n' || *p == ':') *p = ' ';
    snprintf(buf, size, "cpu:%s:%dt", si.cpu_model, threads);
}

int hri_cpu_tune_size(const hr_grid_layout *l)
{
    return (int)lround(cbrt((double)hr_layout_points(l)));
}

int hri_cpu_cache_lookup(const hr_tuning *t, const char *key, const char *kernel, int dbl, int n, int *by,
                        int *stream)
{
    char path[512], line[512];
    if (!hri_tune_cache_default(t, path, sizeof path)) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    double best = INFINITY;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        char *field[9];
        int nf = 0;
        for (char *p = line; nf < 9;) {
            field[nf++] = p;
            char *t = strchr(p, '\t');
            if (!t) break;
            *t = '\0';
            p = t + 1;
        }
        if (nf != 9 || strcmp(field[0], key) || strcmp(field[1], kernel) ||
            strcmp(field[2], dbl ? "double" : "single"))
            continue;
        const int en = atoi(field[3]), eby = atoi(field[6]), ent = atoi(field[7]);
        if (en < 1 || eby < 1 || (ent != 0 && ent != 1)) continue;
        const double d = fabs(log((double)en / (double)(n > 0 ? n : 1)));
        if (d <= best) {
            best = d;
            *by = eby;
            *stream = ent;
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* Both grids back to the initial state. */
static void restore(hr_solver *s, const void *pristine)
{
    const size_t bytes = hr_layout_bytes(&s->u[0].l);
    memcpy(s->u[0].base, pristine, bytes);
    memcpy(s->u[1].base, pristine, bytes);
    s->cur = 0;
}

static hr_status tune_run(hr_solver *s, long sweeps, hr_cpu_tune_result *res)
{
    const size_t bytes = hr_layout_bytes(&s->u[0].l);
    const int rows =
        s->cfg.thread_rows > 0 ? (s->p.ny + s->cfg.thread_rows - 1) / s->cfg.thread_rows : s->p.ny;
    unsigned char *pristine = malloc(bytes), *ref = malloc(bytes);
    hr_status st = HR_OK;
    if (!pristine || !ref) {
        st = HR_ERR_NO_MEMORY;
        goto done;
    }
    memcpy(pristine, s->u[s->cur].base, bytes);
    /* candidates: the default first, then powers of two up to a thread's rows, and all rows */
    int dby, dnt, cand[40][2], nc = 0;
    hri_pencil_default_choice(&s->u[0].l, rows, s->hf.base ? 3 : 2, s->cfg.threads, &dby, &dnt);
    cand[nc][0] = dby;
    cand[nc++][1] = dnt;
    for (int nt = 0; nt < 2; nt++) {
        for (int b = 1; b < rows && nc < 38; b *= 2)
            if (b != dby || nt != dnt) {
                cand[nc][0] = b;
                cand[nc++][1] = nt;
            }
        if (rows != dby || nt != dnt) {
            cand[nc][0] = rows;
            cand[nc++][1] = nt;
        }
    }
    res->best_gbps = res->default_gbps = 0.0;
    res->candidates = 0;
    for (int c = 0; c < nc; c++) {
        restore(s, pristine);
        HR_CHECK_GOTO(st, hri_pencil_apply(s, cand[c][0], cand[c][1]), done);
        /* the answer first: a few sweeps from u0 must give the first candidate's grid */
        HR_CHECK_GOTO(st, s->k->kernel->sweeps(s, 3), done);
        if (c == 0) {
            memcpy(ref, s->u[s->cur].base, bytes);
        } else if (memcmp(ref, s->u[s->cur].base, bytes) != 0) {
            hri_solver_set_error(s, "pencil: %d rows (%s stores) gives a different grid than %d rows",
                                cand[c][0], cand[c][1] ? "streaming" : "ordinary", cand[0][0]);
            st = HR_ERR_INTERNAL;
            goto done;
        }
        double gb = 0.0;
        HR_CHECK_GOTO(st, hri_tune_time_sweeps(s, sweeps, &gb), done);
        res->candidates++;
        if (c == 0) res->default_gbps = gb;
        if (gb > res->best_gbps) {
            res->best_gbps = gb;
            res->block[0] = s->p.nx;
            res->block[1] = cand[c][0];
            res->block[2] = s->cfg.shape[2];
            res->stream = cand[c][1];
        }
    }
done:
    free(pristine);
    free(ref);
    return st;
}

hr_status hr_cpu_tune(const hr_options *o, long sweeps, const char *cache_path, hr_cpu_tune_result *out,
                      char *err, size_t err_size)
{
    if (err && err_size) err[0] = '\0';
    if (!o || !out || sweeps < 0) return HR_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    hr_options oo = *o;
    oo.dim = 3;
    oo.backend = HR_BACKEND_CPU_THREADS;
    oo.kernel = "pencil";
    oo.tol = 0.0;
    oo.monitor = NULL;
    oo.monitor_every = 0;
    oo.keep_history = 0;
    oo.reference_gbps = 0.0;
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(&oo, &s);
    if (st != HR_OK) {
        if (err && err_size) snprintf(err, err_size, "cannot create the solver: %s", hr_last_error());
        return st;
    }
    if (sweeps == 0) {
        const double pts = (double)hr_layout_points(&s->u[0].l);
        sweeps = (long)(5e8 / pts);
        if (sweeps < 4) sweeps = 4;
        if (sweeps > 1000) sweeps = 1000;
    }
    st = tune_run(s, sweeps, out);
    if (st != HR_OK) {
        if (err && err_size) snprintf(err, err_size, "%s", hr_solver_last_error(s));
        hr_solver_free(s);
        return st;
    }
    char path[512], key[160];
    hri_cpu_tune_key(s->cfg.threads, key, sizeof key);
    int e = 0;
    FILE *f = hri_tune_cache_append(cache_path, &o->tuning, path, sizeof path, &e);
    if (f) {
        fprintf(f, "%s\tpencil\t%s\t%d\t0\t0\t%d\t%d\t%.1f\n", key,
                s->u[0].l.esize == 8 ? "double" : "single", hri_cpu_tune_size(&s->u[0].l), out->block[1],
                out->stream, out->best_gbps);
        if (ferror(f) && !e) e = EIO;
        if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
        if (!e) snprintf(out->cache_path, sizeof out->cache_path, "%s", path);
    }
    if (!out->cache_path[0]) {
        if (err && err_size)
            snprintf(err, err_size, "cannot write the tuning cache '%s': %s", path, strerror(e));
        st = HR_ERR_IO;
    }
    hr_solver_free(s);
    return st;
}
