/*
 * STREAM-style host bandwidth probe (copy and triad) on the project's thread team.
 * Byte model as in STREAM: copy moves 2 words per element (one read, one write),
 * triad 3 (two reads, one write); rate = bytes * 1e-9 / seconds. The first run is
 * a warm-up and is discarded; the best of the remaining runs is reported.
 * Plain loops (no memcpy, no streaming stores) so the probe moves data the same way
 * the relaxation kernels do, write-allocate included.
 */
#include <stdlib.h>

#include "common/timer.h"
#include "cpu/team.h"
#include "hetrelax/hetrelax.h"
#include "problem/grid.h"

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

hr_status hr_measure_host_bandwidth(int threads, size_t bytes, int repeats, hr_bandwidth *out)
{
    if (!out || threads < 0 || repeats < 0) return HR_ERR_INVALID_ARG;
    if (threads == 0) threads = hr_cpu_count();
    if (repeats == 0) repeats = 5;
    if (bytes == 0) bytes = (size_t)128 << 20;
    probe p = {0};
    p.n = bytes / sizeof(double);
    bytes = p.n * sizeof(double);
    hr_team *team = NULL;
    hr_status st = hr_team_create(threads, HR_BIND_NONE, &team);
    if (st != HR_OK) return st;
    p.a = aligned_alloc(HR_GRID_ALIGN, bytes);
    p.b = aligned_alloc(HR_GRID_ALIGN, bytes);
    p.c = aligned_alloc(HR_GRID_ALIGN, bytes);
    if (!p.a || !p.b || !p.c) {
        st = HR_ERR_NO_MEMORY;
        goto done;
    }
    hr_team_run(team, probe_job, &p); /* first touch by the threads that use the data */
    double best[3] = {0, 1e30, 1e30};
    for (int r = 0; r <= repeats; r++) {
        for (int op = 1; op <= 2; op++) {
            p.op = op;
            double t0 = hr_now();
            hr_team_run(team, probe_job, &p);
            double t = hr_now() - t0;
            if (r > 0 && t < best[op]) best[op] = t;
        }
    }
    if (p.a[p.n / 2] != 2.0 + 3.0 * 0.5) { /* validation, as STREAM does */
        st = HR_ERR_INTERNAL;
        goto done;
    }
    out->copy_gbps = 2.0 * (double)bytes / best[1] * 1e-9;
    out->triad_gbps = 3.0 * (double)bytes / best[2] * 1e-9;
    out->bytes = bytes;
    out->threads = threads;
    out->repeats = repeats;
done:
    free(p.a);
    free(p.b);
    free(p.c);
    hr_team_free(team);
    return st;
}
