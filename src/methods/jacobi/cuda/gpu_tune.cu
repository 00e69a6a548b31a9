/*
 * Shape tuning and its cache. `hetrelax tune` measures every candidate block/tile shape
 * of a kernel for one device, size and precision on the real problem, checks that the
 * deterministic kernels give bitwise the same grid with every shape, and appends the
 * best to a small text file; solver setup then takes the entry with the nearest n.
 *
 * Cache line (tab-separated): device kernel precision dim nx ny nz alpha bx by h gbps
 * (lines of the older 9-field format, without dim and per-axis extents, still read).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/solver_internal.h"
#include "core/timer.h"
#include "core/tune_util.h"
#include "methods/redblack/cuda/redblack_gpu.h"
#include "runtime/cuda/cuda_api.h"
#include "runtime/cuda/gpu_internal.cuh"

/* One parsed cache line. Lines of the first format (9 fields: device kernel precision
 * n alpha bx by h gbps) are square 2-D entries; the current one has 12 fields:
 * device kernel precision dim nx ny nz alpha bx by h gbps. */
typedef struct cache_entry {
    const char *device, *kernel, *prec;
    int dim, ext[3], alpha;
    hr_gpu_shape sh;
} cache_entry;

static int parse_entry(char *line, cache_entry *e)
{
    char *field[12];
    int nf = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; nf < 12;) {
        field[nf++] = p;
        char *t = strchr(p, '\t');
        if (!t) break;
        *t = '\0';
        p = t + 1;
    }
    if (nf != 9 && nf != 12) return 0;
    e->device = field[0];
    e->kernel = field[1];
    e->prec = field[2];
    int f = 3;
    if (nf == 9) {
        e->dim = 2;
        e->ext[0] = e->ext[1] = atoi(field[f++]);
        e->ext[2] = 1;
    } else {
        e->dim = atoi(field[f++]);
        for (int a = 0; a < 3; a++)
            e->ext[a] = atoi(field[f++]);
    }
    e->alpha = atoi(field[f++]);
    e->sh.bx = atoi(field[f++]);
    e->sh.by = atoi(field[f++]);
    e->sh.h = atoi(field[f++]);
    return e->ext[0] > 0 && e->ext[1] > 0 && e->ext[2] > 0 && e->sh.bx > 0 && e->sh.by > 0 && e->sh.h > 0;
}

/* The alpha a cache entry is keyed by: the kernel's alpha when it uses one, else 0. */
static int alpha_key(const hr_gpu *g)
{
    return (g->caps & HR_CAP_ALPHA) ? g->alpha : 0;
}

/* Keeps *best when entry e (for `device`) matches g and is nearer in log-extents. */
static void consider(const hr_gpu *g, const char *device, char *line, double *best, hr_gpu_shape *out,
                     int *found)
{
    cache_entry e;
    if (!parse_entry(line, &e) || strcmp(e.device, device) || strcmp(e.kernel, g->name) ||
        strcmp(e.prec, g->dbl ? "double" : "single") || e.dim != g->dim || e.alpha != alpha_key(g))
        return;
    const int n[3] = {g->nx, g->ny, g->dim == 3 ? g->nz : 1};
    double d = 0.0;
    for (int a = 0; a < 3; a++)
        d += fabs(log((double)e.ext[a] / (double)n[a]));
    if (d <= *best) { /* later lines win ties: a re-tune replaces */
        *best = d;
        *out = e.sh;
        *found = 1;
    }
}

int hri_gpu_cache_lookup(const hr_gpu *g, const char *device, hr_gpu_shape *out)
{
    char path[512], line[512];
    if (!hri_tune_cache_default(g->tune, path, sizeof path)) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    double best = INFINITY;
    int found = 0;
    while (fgets(line, sizeof line, f))
        consider(g, device, line, &best, out, &found);
    fclose(f);
    return found;
}

/* Shapes measured by `hetrelax tune` and shipped, per architecture "sm_MAJOR MINOR:SMS"
 * (the same chip runs the same shapes best; H100 SXM and H200 are both sm_90 with 132
 * SMs). Sources: docs/results/gpu-tune.txt, gpu-fig16-h100-tune.txt, gpu3d-*.md (H100
 * 80GB HBM3); the H200 shares them unmeasured. Format: the cache's 12 fields. */
static const char *const shipped[] = {
#include "methods/jacobi/cuda/gpu_shapes.inc"
};

int hri_gpu_shipped_lookup(const hr_gpu *g, hr_gpu_shape *out)
{
    char key[32], line[256];
    snprintf(key, sizeof key, "sm_%d%d:%d", g->cc_major, g->cc_minor, g->sms);
    double best = INFINITY;
    int found = 0;
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        snprintf(line, sizeof line, "%s", shipped[i]);
        consider(g, key, line, &best, out, &found);
    }
    return found;
}

/* The red-black GPU kernels are not hr_gpu families: the same cache and shipped table,
 * matched by kernel name, precision and 2-D extents (alpha 0). */
extern "C" int hri_gpu_rb_shape_lookup(const hr_tuning *tune, int device, const char *device_name,
                                      const char *kernel, int dbl, int nx, int ny, int shape[3],
                                      const char **source)
{
    hr_gpu g;
    memset(&g, 0, sizeof g);
    g.tune = tune;
    g.name = kernel;
    g.dim = 2;
    g.nx = g.n = nx;
    g.ny = ny;
    g.nz = 1;
    g.dbl = dbl;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return 0;
    g.cc_major = prop.major;
    g.cc_minor = prop.minor;
    g.sms = prop.multiProcessorCount;
    hr_gpu_shape sh;
    if (hri_gpu_cache_lookup(&g, device_name, &sh))
        *source = "cache";
    else if (hri_gpu_shipped_lookup(&g, &sh))
        *source = "shipped";
    else
        return 0;
    shape[0] = sh.bx;
    shape[1] = sh.by;
    shape[2] = sh.h;
    return 1;
}

/* Puts the solver back to its initial state (both grids from the pristine copy). */
static hr_status restore(hr_solver *s, hr_gpu *g, const void *pristine)
{
    const size_t bytes = g->alloc_elems * g->esize;
    for (int k = 0; k < 2; k++)
        HR_CU(s, cudaMemcpyAsync(g->d_u[k], pristine, bytes, cudaMemcpyDeviceToDevice, g->stream));
    HR_CU(s, cudaStreamSynchronize(g->stream));
    g->dcur = 0;
    return HR_OK;
}

static hr_status tune_run(hr_solver *s, long sweeps, hr_cuda_tune_result *res, hr_gpu_shape *best_sh)
{
    hr_gpu *g = (hr_gpu *)s->impl;
    const hr_gpu_family *fam = g->fam;
    const size_t bytes = g->alloc_elems * g->esize, hbytes = hr_layout_bytes(&s->u[0].l);
    void *pristine = NULL;
    unsigned char *ref = NULL, *got = NULL;
    hr_status st = HR_OK;
    int have_ref = 0;
    hr_gpu_shape ref_sh = {0, 0, 0};
    char why[160];
    ref = (unsigned char *)malloc(hbytes);
    got = (unsigned char *)malloc(hbytes);
    if (!ref || !got) {
        st = HR_ERR_NO_MEMORY;
        goto done;
    }
    HR_CU_GOTO(s, st, cudaMalloc(&pristine, bytes), done);
    /* on g->stream: a device-to-device cudaMemcpy (legacy stream) may still run when it
     * returns, unordered with restore's copies out of pristine on g->stream */
    HR_CU_GOTO(s, st, cudaMemcpyAsync(pristine, g->d_u[0], bytes, cudaMemcpyDeviceToDevice, g->stream), done);
    res->best_gbps = res->default_gbps = 0.0;
    res->candidates = 0;
    for (int c = -1; c < fam->ncands; c++) {
        const hr_gpu_shape sh = c < 0 ? fam->def[g->dbl] : fam->cands[c];
        if (c >= 0 && sh.bx == fam->def[g->dbl].bx && sh.by == fam->def[g->dbl].by &&
            sh.h == fam->def[g->dbl].h)
            continue;
        if (fam->check(g, sh, why, sizeof why)) continue;
        HR_CHECK_GOTO(st, restore(s, g, pristine), done);
        st = hri_gpu_apply_shape(s, g, sh);
        if (st == HR_ERR_INVALID_ARG) { /* e.g. too many registers for this block size */
            st = HR_OK;
            s->err[0] = '\0';
            continue;
        }
        if (st != HR_OK) goto done;
        if (s->k->caps & HR_CAP_DETERMINISTIC) {
            HR_CHECK_GOTO(st, s->k->kernel->sweeps(s, sweeps), done);
            HR_CHECK_GOTO(st, hri_gpu_download(s, g, hr_grid_origin(&s->u[0])), done);
            memcpy(have_ref ? got : ref, s->u[0].base, hbytes);
            if (!have_ref) {
                have_ref = 1;
                ref_sh = sh;
            } else if (memcmp(ref, got, hbytes) != 0) {
                hri_solver_set_error(s, "kernel %s: shape %dx%dx%d gives a different grid than %dx%dx%d",
                                    g->name, sh.bx, sh.by, sh.h, ref_sh.bx, ref_sh.by, ref_sh.h);
                st = HR_ERR_INTERNAL;
                goto done;
            }
        }
        double gb = 0.0;
        HR_CHECK_GOTO(st, hri_tune_time_sweeps(s, sweeps, &gb), done);
        res->candidates++;
        if (c < 0) res->default_gbps = gb;
        if (gb > res->best_gbps) {
            res->best_gbps = gb;
            *best_sh = sh;
        }
    }
    if (res->candidates == 0) {
        hri_solver_set_error(s, "kernel %s: no candidate shape fits this problem (%s)", g->name, why);
        st = HR_ERR_INVALID_ARG;
    }
done:
    if (pristine) cudaFree(pristine);
    free(ref);
    free(got);
    return st;
}

extern "C" hr_status hri_cuda_tune(const hr_options *o, long sweeps, const char *cache_path,
                                  hr_cuda_tune_result *out, char *err, size_t err_size)
{
    if (err && err_size) err[0] = '\0';
    if (!o || !out || sweeps < 1) return HR_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    hr_options oo = *o;
    oo.backend = HR_BACKEND_GPU;
    oo.iters = sweeps;
    oo.tol = 0.0;
    oo.monitor = NULL;
    oo.monitor_every = 0;
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(&oo, &s);
    if (st != HR_OK) {
        if (err && err_size) snprintf(err, err_size, "cannot create the solver: %s", hr_status_string(st));
        return st;
    }
    hr_gpu_shape best = {0, 0, 0};
    const int redblack = (s->k->caps & HR_CAP_REDBLACK) != 0; /* rb-tuned: its own state */
    st = redblack ? hri_gpu_rb_tune(s, sweeps, out) : tune_run(s, sweeps, out, &best);
    if (st != HR_OK) {
        if (err && err_size) snprintf(err, err_size, "%s", hr_solver_last_error(s));
        hr_solver_free(s);
        return st;
    }
    if (redblack) {
        best.bx = out->bx;
        best.by = out->by;
        best.h = out->h;
    }
    out->bx = best.bx;
    out->by = best.by;
    out->h = best.h;
    char path[512];
    const hr_grid_layout *l = &s->u[0].l;
    const int key_alpha = redblack ? 0 : alpha_key((hr_gpu *)s->impl);
    int e = 0;
    FILE *f = hri_tune_cache_append(cache_path, &o->tuning, path, sizeof path, &e);
    if (f) {
        fprintf(f, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\n", s->device_name, s->k->name,
                l->esize == 8 ? "double" : "single", l->dim, l->nx, l->ny, l->dim == 3 ? l->nz : 1, key_alpha,
                best.bx, best.by, best.h, out->best_gbps);
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
