/*
 * STREAM-style host bandwidth probe (copy and triad) on the project's thread team.
 * Byte model as in STREAM: copy moves 2 words per element (one read, one write),
 * triad 3 (two reads, one write); rate = bytes * 1e-9 / seconds. The first run is
 * a warm-up and is discarded; the best of the remaining runs is reported, with the
 * slowest and the median so that the spread is visible.
 * Plain loops (no memcpy, no streaming stores) so the probe moves data the same way
 * the relaxation kernels do, write-allocate included.
 *
 * What makes the reference stable: arrays far larger than the last-level
 * cache (a 128 MiB copy partly hit a 300 MiB L3 and read 103-148 GB/s), the run's own
 * thread count and binding, first touch by the thread that copies each part, and the
 * best of several runs.
 */
#include <stdlib.h>
#include <unistd.h>

#include "core/grid.h"
#include "core/timer.h"
#include "core/tuning.h"
#include "hetrelax/hetrelax.h"
#include "runtime/cpu/sysmem.h"
#include "runtime/cpu/team.h"

/* Words moved per element: the byte model of every "% of copy" figure. */
#define COPY_WORDS  2.0
#define TRIAD_WORDS 3.0

typedef struct probe {
    double *a, *b, *c;
    size_t n;
    int op; /* 0 init, 1 copy, 2 triad */
} probe;

static void probe_job(void *ctx, int tid, int nthreads)
{
    probe *p = ctx;
    size_t lo = p->n * (size_t)tid / (size_t)nthreads, hi = p->n * ((size_t)tid + 1) / (size_t)nthreads;
    double *restrict a = p->a, *restrict b = p->b, *restrict c = p->c;
    const double scalar = 3.0;
    switch (p->op) {
    case 0:
        for (size_t i = lo; i < hi; i++) {
            a[i] = 1.0;
            b[i] = 2.0;
            c[i] = 0.5;
        }
        break;
    case 1:
        for (size_t i = lo; i < hi; i++)
            a[i] = b[i];
        break;
    default:
        for (size_t i = lo; i < hi; i++)
            a[i] = b[i] + scalar * c[i];
        break;
    }
}

/* Default array size: the two copy arrays together 4x the last-level cache, 64 MiB to
 * 1 GiB each, and all three within 1/8 of the physical memory. */
static size_t default_bytes(void)
{
    size_t b = 2 * hri_cache_llc_bytes();
    if (b < ((size_t)64 << 20)) b = (size_t)64 << 20;
    if (b > ((size_t)1 << 30)) b = (size_t)1 << 30;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0) {
        size_t cap = (size_t)pages * (size_t)psize / 24;
        if (cap >= ((size_t)16 << 20) && b > cap) b = cap;
    }
    return b;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median_sorted(const double *v, int n)
{
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

hr_status hr_measure_host_bandwidth_tuned(int threads, hr_bind bind, size_t bytes, int repeats,
                                          const hr_tuning *tune, hr_bandwidth *out)
{
    if (!out || threads < 0 || repeats < 0 || (bind != HR_BIND_NONE && bind != HR_BIND_CORE))
        return HR_ERR_INVALID_ARG;
    if (threads == 0) threads = hri_cpu_count();
    if (repeats == 0) repeats = 10;
    if (bytes == 0) bytes = default_bytes();
    probe p = {0};
    p.n = bytes / sizeof(double);
    if (p.n < (size_t)threads) p.n = (size_t)threads;
    bytes = p.n * sizeof(double);
    double *t[2] = {malloc(sizeof(double) * (size_t)repeats), malloc(sizeof(double) * (size_t)repeats)};
    hr_team *team = NULL;
    hr_status st = (t[0] && t[1]) ? hri_team_create(threads, bind, &team) : HR_ERR_NO_MEMORY;
    if (st != HR_OK) goto done;
    const size_t alloc = (bytes + HR_GRID_ALIGN - 1) / HR_GRID_ALIGN * HR_GRID_ALIGN;
    const int huge = tune ? hr_tune_on(tune->hugepages, 0) : 0;
    p.a = hri_alloc_big(HR_GRID_ALIGN, alloc, huge);
    p.b = hri_alloc_big(HR_GRID_ALIGN, alloc, huge);
    p.c = hri_alloc_big(HR_GRID_ALIGN, alloc, huge);
    if (!p.a || !p.b || !p.c) {
        st = HR_ERR_NO_MEMORY;
        goto done;
    }
    hri_team_run(team, probe_job, &p); /* first touch by the threads that use the data */
    for (int r = 0; r <= repeats; r++) {
        for (int op = 1; op <= 2; op++) {
            p.op = op;
            double t0 = hr_now();
            hri_team_run(team, probe_job, &p);
            double dt = hr_now() - t0;
            if (r > 0) t[op - 1][r - 1] = dt;
        }
    }
    if (p.a[p.n / 2] != 2.0 + 3.0 * 0.5) { /* validation, as STREAM does */
        st = HR_ERR_INTERNAL;
        goto done;
    }
    qsort(t[0], (size_t)repeats, sizeof(double), cmp_double);
    qsort(t[1], (size_t)repeats, sizeof(double), cmp_double);
    const double copy_gb = COPY_WORDS * (double)bytes * 1e-9, triad_gb = TRIAD_WORDS * (double)bytes * 1e-9;
    out->copy_s = t[0][0];
    out->triad_s = t[1][0];
    out->copy_gbps = copy_gb / t[0][0];
    out->triad_gbps = triad_gb / t[1][0];
    out->copy_gbps_min = copy_gb / t[0][repeats - 1];
    out->triad_gbps_min = triad_gb / t[1][repeats - 1];
    out->copy_gbps_median = copy_gb / median_sorted(t[0], repeats);
    out->triad_gbps_median = triad_gb / median_sorted(t[1], repeats);
    out->bytes = bytes;
    out->threads = threads;
    out->repeats = repeats;
    out->bind = bind;
done:
    free(p.a);
    free(p.b);
    free(p.c);
    free(t[0]);
    free(t[1]);
    hri_team_free(team);
    return st;
}

hr_status hr_measure_host_bandwidth_bound(int threads, hr_bind bind, size_t bytes, int repeats,
                                          hr_bandwidth *out)
{
    return hr_measure_host_bandwidth_tuned(threads, bind, bytes, repeats, NULL, out);
}

hr_status hr_measure_host_bandwidth(int threads, size_t bytes, int repeats, hr_bandwidth *out)
{
    return hr_measure_host_bandwidth_bound(threads, HR_BIND_NONE, bytes, repeats, out);
}
