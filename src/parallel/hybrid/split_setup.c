/* The split engine (see split.h): building the parts, their exchange links and buffers,
 * and the start-up exchange trial. */
#include "parallel/hybrid/split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/solver_internal.h"
#include "core/timer.h"
#include "core/tune_util.h"
#include "core/tuning.h"
#include "parallel/hybrid/split_internal.h"
#include "runtime/cpu/crew.h"
#include "runtime/cpu/team.h"

static void set_err(char *err, size_t size, const char *msg)
{
    if (err && size) snprintf(err, size, "%s", msg);
}

/* Part sizes along the axis: one or two parts (one process), or per rank a slab split
 * into its CPU and GPU parts. */
static hr_status plan_parts(hr_split *e, int n_axis, int sizes[HR_DECOMP_MAX_CUTS], int *count, int *kind_a,
                            char *err, size_t es)
{
    const hr_split_spec *sp = &e->spec;
    const int ranks = sp->ranks > 1 ? sp->ranks : 1, g = sp->ghost < 1 ? 1 : sp->ghost;
    if (ranks == 1 && sp->parts >= 2) { /* the chain of equal parts */
        if (sp->parts > HR_SPLIT_MAX_LOCAL || n_axis < sp->parts * g) {
            snprintf(err, es, "gpus: %d parts of ghost width %d cannot split %d %s", sp->parts, g, n_axis,
                     sp->dim == 3 ? "planes" : "rows");
            return HR_ERR_INVALID_ARG;
        }
        e->per_rank = *count = sp->parts;
        int given = 0, sum = 0;
        for (int q = 0; q < sp->parts; q++) {
            given |= sp->cut[q] != 0;
            sum += sp->cut[q];
        }
        for (int q = 0; q < sp->parts; q++) {
            int lo, hi;
            hr_split_range(n_axis, sp->parts, q, &lo, &hi);
            sizes[q] = given ? sp->cut[q] : hi - lo;
            if (sizes[q] < g) {
                snprintf(err, es, "gpus: part %d has %d %s, fewer than the ghost width %d", q, sizes[q],
                         sp->dim == 3 ? "planes" : "rows", g);
                return HR_ERR_INVALID_ARG;
            }
        }
        if (given && sum != n_axis) {
            snprintf(err, es, "gpus: the parts' rows add up to %d, not %d", sum, n_axis);
            return HR_ERR_INVALID_ARG;
        }
        *kind_a = 0;
        return HR_OK;
    }
    /* one process: A's rows given; the per-rank path (a transport) splits each slab by the
     * fraction below, one rank included (it used to run its slab whole on B) */
    if (ranks == 1 && !sp->t) {
        const int two = sp->rows_a > 0 && sp->rows_a < n_axis;
        e->per_rank = two ? 2 : 1;
        *count = e->per_rank;
        sizes[0] = two ? sp->rows_a : n_axis;
        sizes[1] = n_axis - sp->rows_a;
        *kind_a = two || sp->rows_a == n_axis; /* the single part is A (CPU) when it has every row */
        return HR_OK;
    }
    if (2 * ranks > HR_DECOMP_MAX_CUTS || n_axis < ranks) {
        snprintf(err, es, "decomp: %d ranks cannot split %d planes", ranks, n_axis);
        return HR_ERR_INVALID_ARG;
    }
    const int two = sp->fraction > 0.0 && sp->fraction < 1.0;
    e->per_rank = two ? 2 : 1;
    *count = ranks * e->per_rank;
    *kind_a = two || sp->fraction >= 1.0;
    for (int r = 0; r < ranks; r++) {
        int lo, hi;
        hr_split_range(n_axis, ranks, r, &lo, &hi);
        if (!two) {
            sizes[r] = hi - lo;
            continue;
        }
        const int a = (int)(sp->fraction * (hi - lo) + 0.5);
        if (a < g || hi - lo - a < g) {
            snprintf(err, es, "split: %g of rank %d's %d planes leaves a part with fewer than %d",
                     sp->fraction, r, hi - lo, g);
            return HR_ERR_INVALID_ARG;
        }
        sizes[2 * r] = a;
        sizes[2 * r + 1] = hi - lo - a;
    }
    return HR_OK;
}

static void describe_exchange(hr_split *e, const char *why);

/* Where a CPU part's crews are pinned (place.h pin_slot; 0: unpinned): the CPU part next to
 * a GPU in one process from slot 1 on (slot 0 is left to the host thread that drives the
 * GPU). Not across MPI ranks (ranks of one node would pin to the same slots) unless the
 * launcher bound each rank to its own CPUs (the slots are the process's allowed CPUs), nor for
 * two CPU parts (tests share the cores), unless tuning.crew_pin is on (then B after A). */
static int crew_pin_slot(const hr_split_spec *sp, int is_a, int threads)
{
    if (sp->tune.crew_pin < 0) return 0;
    const int force = sp->tune.crew_pin > 0;
    if (!force && (sp->second != HR_SPLIT_GPU || (sp->ranks > 1 && !hri_cpu_bound()))) return 0;
    const int a = sp->threads_a + (sp->schedule == HR_SPLIT_NESTED ? sp->boundary_threads : 0);
    const int first = is_a ? 1 : 1 + a;
    return first + threads <= hri_crew_slots() ? first : 0;
}

/* How each local edge exchanges: direct device copies where both parts can (peer access
 * enabled between two GPUs, or two parts on one GPU), else through the host. */
static void link_parts(hr_split *e)
{
    const int host_only = e->spec.host_exchange || e->spec.tune.peer < 0;
    char why[160] = "";
    for (int q = 0; q + 1 < e->nparts; q++) {
        hr_place *L = e->p[q], *H = e->p[q + 1];
        e->link[q] = HR_LINK_HOST;
        if (host_only)
            snprintf(why, sizeof why, "asked for");
        else if (L->ops == H->ops && L->ops->link && L->ops->pull && L->ops->mark)
            e->link[q] = L->ops->link(L, H, why, sizeof why);
    }
    describe_exchange(e, why);
}

/* How the local edges exchange, in words (e->exchange); why: the reason edges go through
 * the host. */
static void describe_exchange(hr_split *e, const char *why)
{
    int count[3] = {0, 0, 0};
    for (int q = 0; q + 1 < e->nparts; q++)
        count[e->link[q]]++;
    e->exchange[0] = '\0';
    if (e->nparts < 2) return;
    if (count[HR_LINK_PEER] + count[HR_LINK_DEVICE] == 0) {
        const int gpu = !is_cpu(e->p[0]) || !is_cpu(e->p[e->nparts - 1]);
        snprintf(e->exchange, sizeof e->exchange, "%s%.40s%s", gpu ? "host-staged (" : "host",
                 gpu ? (why[0] ? why : "no peer copies") : "", gpu ? ")" : "");
    } else if (count[HR_LINK_HOST] == 0) {
        /* tuning.peer_push: the GPU placement copies on the source's stream */
        const int pushed = !is_cpu(e->p[0]) && e->spec.tune.peer_push > 0;
        snprintf(e->exchange, sizeof e->exchange, "%s%s",
                 is_cpu(e->p[0])              ? "direct copies (CPU parts)"
                 : count[HR_LINK_DEVICE] == 0 ? "peer copies"
                 : count[HR_LINK_PEER] == 0   ? "device copies (parts on one GPU)"
                                              : "peer and device copies",
                 pushed ? ", pushed" : "");
    } else {
        snprintf(e->exchange, sizeof e->exchange, "%d direct, %d host-staged", count[1] + count[2], count[0]);
    }
}

/* tuning.split_mapped off: every host edge and every message staged through the engine's
 * buffers, as before the rows were copied directly (for comparison). */
static int rows_direct_allowed(const hr_split *e)
{
    return hr_tune_on(e->spec.tune.split_mapped, 1);
}

static void unpin_edge(hr_split *e, int q)
{
    for (int w = 0; w < 2; w++)
        if (e->pinned[q][w]) {
            e->p[q + 1]->ops->host_pin(e->p[q + 1], e->pinned[q][w], 0, 0);
            e->pinned[q][w] = NULL;
        }
}

/* Host edges whose low part keeps its rows in host memory (a CPU part) copy those rows
 * directly: the high part's get writes the low part's ghost rows and its put reads the low
 * part's own rows, where they were staged through a send buffer and memcpy on the host
 * thread before (two 2 MiB copies a sweep for a 512 x 512 fp64 plane). A device first pins
 * those rows of both grids; where it cannot, the edge stays staged. */
static void map_edges(hr_split *e)
{
    if (!rows_direct_allowed(e)) return;
    const int g = e->d.ghost;
    for (int q = 0; q + 1 < e->nparts; q++) {
        hr_place *L = e->p[q], *H = e->p[q + 1];
        if (e->link[q] != HR_LINK_HOST || !L->ops->host_rows) continue;
        if (!H->ops->host_rows && !H->ops->host_pin) continue; /* a device's pageable copies */
        int o0, o1, g0, g1;
        face_rows(L, g, 1, 0, &o0, &o1); /* L's high own rows, then its ghost rows above */
        face_rows(L, g, 1, 1, &g0, &g1);
        const int lo = o0 < g0 ? o0 : g0, hi = o1 > g1 ? o1 : g1;
        int ok = 1;
        for (int w = 0; w < 2 && ok && H->ops->host_pin; w++) {
            void *rows = L->ops->host_rows(L, w, lo);
            ok = H->ops->host_pin(H, rows, hr_place_rows_bytes(&L->spec, lo, hi), 1) == HR_OK;
            if (ok) e->pinned[q][w] = rows;
        }
        if (!ok) {
            unpin_edge(e, q);
            H->err[0] = '\0';
        }
        e->mapped[q] = ok;
    }
    int all = e->nparts > 1, any = 0;
    for (int q = 0; q + 1 < e->nparts; q++) {
        all &= e->mapped[q] || e->link[q] != HR_LINK_HOST;
        any |= e->mapped[q];
    }
    if (any && all) /* every host edge: "host (rows direct[, pinned])" */
        snprintf(e->exchange, sizeof e->exchange, "host (rows direct%s)", e->pinned[0][0] ? ", pinned" : "");
}

/* The messages to other ranks, bound as transport phase 0 (through the send and receive
 * buffers) and, where a part keeps its rows in host memory, also as phases 1 and 2: the
 * same messages with those parts' faces sent from and received into grid 0's (phase 1) or
 * grid 1's (phase 2) own rows. */
static hr_status bind_remote(hr_split *e)
{
    const int direct = rows_direct_allowed(e);
    for (int q = 0; q < e->nparts; q++)
        for (int s = 0; s < 2; s++) {
            e->zc_face[q][s] = e->face[q][s] == HR_FACE_REMOTE && direct && e->p[q]->ops->host_rows;
            e->zero_copy |= e->zc_face[q][s];
        }
    for (int phase = 0; phase < (e->zero_copy ? 3 : 1); phase++) {
        hr_halo_msg snd[4], rcv[4];
        int ns = 0;
        for (int q = 0; q < e->nparts; q++)
            for (int s = 0; s < 2; s++)
                if (e->face[q][s] == HR_FACE_REMOTE) {
                    hr_place *P = e->p[q];
                    int r0, r1, g0, g1;
                    face_rows(P, e->d.ghost, s, 0, &r0, &r1);
                    face_rows(P, e->d.ghost, s, 1, &g0, &g1);
                    const size_t bytes = hr_place_rows_bytes(&P->spec, r0, r1);
                    const int me = e->spec.rank, other = e->peer[q][s], zc = phase && e->zc_face[q][s];
                    /* bound at parity 0, where grid `which` is grid `which` */
                    void *sb = zc ? P->ops->host_rows(P, phase - 1, r0) : e->sbuf[q][s];
                    void *rb = zc ? P->ops->host_rows(P, phase - 1, g0) : e->rbuf[q][s];
                    snd[ns] = (hr_halo_msg){me, other, 2 * e->axis + s, sb, bytes};
                    rcv[ns] = (hr_halo_msg){other, me, 2 * e->axis + (1 - s), rb, bytes};
                    ns++;
                }
        e->nremote = ns;
        HR_TRY(e->spec.t->ops->bind(e->spec.t, phase, snd, ns, rcv, ns));
    }
    return HR_OK;
}

static hr_status pick_exchange(hr_split *e, const hr_grid *u, const hr_grid *hf);

hr_status hri_split_create(const hr_split_spec *spec, const hr_grid *u, const hr_grid *hf, hr_split **out,
                          char *err, size_t es)
{
    *out = NULL;
    set_err(err, es, "");
    hr_split *e = calloc(1, sizeof *e);
    if (e && hri_trace_file(spec->tune.split_trace)) {
        e->tr.on = 1;
        hri_thread_stat_now(&e->tr.host);
        e->tr.ncpu = hri_steal(&e->tr.steal_s, e->tr.steal_cpu, 64);
    }
    if (!e) return HR_ERR_NO_MEMORY;
    e->spec = *spec;
    const int n_axis = hr_split_extent(spec);
    e->axis = spec->dim == 3 ? 2 : 1;
    int sizes[HR_DECOMP_MAX_CUTS], count = 1, kind_a = 0;
    hr_status st = plan_parts(e, n_axis, sizes, &count, &kind_a, err, es);
    const int n[3] = {spec->nx, spec->ny, spec->nz};
    int parts[3] = {1, 1, 1};
    parts[e->axis] = count;
    if (st == HR_OK)
        st = hri_decomp_init(&e->d, spec->dim, n, parts, spec->ghost < 1 ? 1 : spec->ghost, err, es);
    if (st == HR_OK && count > 1) st = hri_decomp_set_cuts(&e->d, e->axis, sizes, err, es);
    e->nparts = e->per_rank;
    e->first = (spec->ranks > 1 ? spec->rank : 0) * e->per_rank;
    for (int q = 0; q < e->nparts && st == HR_OK; q++) {
        hr_place_spec ps;
        memset(&ps, 0, sizeof ps);
        if (!hri_subdomain_init(&e->d, e->first + q, spec->esize, &ps.sd)) {
            set_err(err, es, "n: the part is too large");
            st = HR_ERR_NO_MEMORY;
            break;
        }
        const int is_a = e->nparts == 2 ? q == 0 : kind_a;
        ps.axis = e->axis;
        ps.esize = spec->esize;
        ps.omega = spec->omega;
        ps.has_hf = spec->has_hf;
        ps.spike = (hr_rhs_view){NULL, -1, -1, -1};
        if (!spec->has_hf && spec->spike_i >= 0)
            ps.spike = hri_subdomain_spike(&ps.sd, spec->spike_i, spec->spike_j, spec->spike_k);
        ps.device = spec->device;
        ps.s = spec->s;
        ps.tune = spec->tune;
        const int nested = spec->schedule == HR_SPLIT_NESTED;
        const int exchanges = ps.sd.nb[e->axis][0] >= 0 || ps.sd.nb[e->axis][1] >= 0;
        if (spec->parts >= 2 && (spec->ranks <= 1)) { /* the chain: every part alike */
            if (spec->second == HR_SPLIT_CPU) {
                ps.threads = spec->threads_b;
                ps.boundary_threads = nested ? 1 : 0;
                st = hri_place_cpu_create(&ps, &e->p[q]);
            } else {
                ps.device = spec->device + (spec->devices > 0 ? q % spec->devices : q);
                st = hri_place_gpu_create(&ps, &e->p[q]);
                if (st != HR_OK && spec->s && spec->s->err[0]) set_err(err, es, spec->s->err);
            }
        } else if (is_a && spec->first_gpu) {
            ps.device = spec->device_a;
            st = hri_place_gpu_create(&ps, &e->p[q]);
        } else if (is_a || spec->second == HR_SPLIT_CPU) {
            ps.threads = is_a ? spec->threads_a : spec->threads_b;
            ps.boundary_threads =
                nested && exchanges ? (is_a && spec->boundary_threads > 0 ? spec->boundary_threads : 1) : 0;
            if (is_a && nested && exchanges && spec->boundary_auto) /* crews sized to their rows */
                hri_split_crew_sizes(spec->threads_a + spec->boundary_threads, ps.sd.n[e->axis],
                                    (ps.sd.nb[e->axis][0] >= 0) + (ps.sd.nb[e->axis][1] >= 0), &ps.threads,
                                    &ps.boundary_threads);
            ps.pin_slot = crew_pin_slot(spec, is_a, ps.threads + ps.boundary_threads);
            st = hri_place_cpu_create(&ps, &e->p[q]);
        } else {
            st = hri_place_gpu_create(&ps, &e->p[q]);
            if (st != HR_OK && spec->s && spec->s->err[0]) set_err(err, es, spec->s->err);
        }
        if (st == HR_OK) st = e->p[q]->ops->load(e->p[q], u, hf);
        if (st != HR_OK && err && es && !err[0] && e->p[q]) set_err(err, es, e->p[q]->err);
        for (int s = 0; s < 2 && e->p[q]; s++) {
            const int nb = ps.sd.nb[e->axis][s];
            e->face[q][s] = nb < 0                                        ? HR_FACE_PHYS
                            : nb >= e->first && nb < e->first + e->nparts ? HR_FACE_LOCAL
                                                                          : HR_FACE_REMOTE;
            e->peer[q][s] = e->face[q][s] == HR_FACE_LOCAL ? nb - e->first : nb / e->per_rank;
        }
    }
    if (st == HR_OK) link_parts(e);
    if (st == HR_OK) map_edges(e);
    /* host buffers from the last local part's allocator (pinned when it is a device) */
    for (int q = 0; q < e->nparts && st == HR_OK; q++)
        for (int s = 0; s < 2 && st == HR_OK; s++) {
            if (e->face[q][s] == HR_FACE_PHYS) continue;
            hr_place *alloc = e->p[e->nparts - 1];
            const size_t bytes = hr_place_rows_bytes(&e->p[q]->spec, 0, e->d.ghost);
            e->sbuf[q][s] = alloc->ops->host_alloc(alloc, bytes);
            if (e->face[q][s] == HR_FACE_REMOTE) e->rbuf[q][s] = alloc->ops->host_alloc(alloc, bytes);
            if (!e->sbuf[q][s] || (e->face[q][s] == HR_FACE_REMOTE && !e->rbuf[q][s])) st = HR_ERR_NO_MEMORY;
        }
    if (st == HR_OK) {
        int remote = 0;
        for (int q = 0; q < e->nparts; q++)
            remote |= e->face[q][0] == HR_FACE_REMOTE || e->face[q][1] == HR_FACE_REMOTE;
        if (remote && !spec->t) {
            set_err(err, es, "split: parts on other ranks but no transport");
            st = HR_ERR_INVALID_ARG;
        } else if (remote) {
            st = bind_remote(e);
        }
    }
    if (st != HR_OK) {
        if (err && es && !err[0]) snprintf(err, es, "%s", hr_status_string(st));
        hri_split_free(e);
        return st;
    }
    e->graph_off = spec->tune.chain_graph < 0;
    e->fresh = 1;
    st = pick_exchange(e, u, hf);
    if (st != HR_OK) {
        set_err(err, es, e->err[0] ? e->err : hr_status_string(st));
        hri_split_free(e);
        return st;
    }
    *out = e;
    return HR_OK;
}

/* The trace line of an engine (tuning.split_trace): its parts, the overlapped sweeps' host
 * time by phase, and what the scheduler did to the host thread and the machine meanwhile. */
static void write_trace(const hr_split *e)
{
    FILE *f = hri_trace_file(e->spec.tune.split_trace);
    hr_thread_stat now;
    hri_thread_stat_now(&now);
    const hr_thread_stat h = hri_thread_stat_diff(&e->tr.host, &now);
    const double n = e->tr.sweeps > 0 ? (double)e->tr.sweeps : 1.0;
    double steal, cpu_now[64];
    const int ncpu = hri_steal(&steal, cpu_now, e->tr.ncpu);
    hri_trace_lock();
    fprintf(f, "{\"engine\": \"%p\", \"parts\": [", (const void *)e);
    for (int q = 0; q < e->nparts; q++)
        fprintf(f, "%s[\"%s\", %d]", q ? ", " : "", e->p[q]->desc,
                e->p[q]->spec.sd.own.hi[e->axis] - e->p[q]->spec.sd.own.lo[e->axis]);
    fprintf(f, "], \"sweeps\": %ld, \"issue_us\": %.1f, \"exchange_us\": %.1f, \"order_us\": [", e->tr.sweeps,
            1e6 * e->tr.issue_s / n, 1e6 * e->tr.exchange_s / n);
    for (int q = 0; q < e->nparts; q++)
        fprintf(f, "%s%.1f", q ? ", " : "", 1e6 * e->tr.order_s[q] / n);
    fprintf(f,
            "], \"max_us\": %.0f, \"hist\": [%ld, %ld, %ld, %ld, %ld, %ld], \"host_delay_ms\": %.2f, "
            "\"host_cpu_ms\": %.1f, \"host_preempted\": %ld, \"host_slept\": %ld, \"host_cpu\": %d, "
            "\"steal_ms\": %.0f",
            1e6 * e->tr.max_s, e->tr.hist[0], e->tr.hist[1], e->tr.hist[2], e->tr.hist[3], e->tr.hist[4],
            e->tr.hist[5], 1e3 * h.delay_s, 1e3 * h.run_s, h.preempted, h.voluntary, h.cpu,
            steal >= 0 && e->tr.steal_s >= 0 ? 1e3 * (steal - e->tr.steal_s) : -1.0);
    fprintf(f, ", \"steal_cpu_ms\": [");
    for (int c = 0; c < ncpu; c++)
        fprintf(f, "%s%.0f", c ? ", " : "", 1e3 * (cpu_now[c] - e->tr.steal_cpu[c]));
    fprintf(f, "]}\n");
    hri_trace_unlock();
}

void hri_split_free(hr_split *e)
{
    if (!e) return;
    int built = e->nparts > 0;
    for (int q = 0; q < e->nparts; q++)
        built = built && e->p[q];
    if (e->tr.on && built) write_trace(e);
    for (int par = 0; par < 2; par++)
        if (e->graph[par]) e->p[0]->ops->drop(e->graph[par]);
    for (int q = 0; q + 1 < e->nparts; q++)
        if (e->p[q + 1]) unpin_edge(e, q);
    hr_place *alloc = e->nparts > 0 ? e->p[e->nparts - 1] : NULL;
    for (int q = 0; q < HR_SPLIT_MAX_LOCAL; q++)
        for (int s = 0; s < 2; s++) {
            if (e->sbuf[q][s] && alloc) alloc->ops->host_free(alloc, e->sbuf[q][s]);
            if (e->rbuf[q][s] && alloc) alloc->ops->host_free(alloc, e->rbuf[q][s]);
        }
    for (int q = HR_SPLIT_MAX_LOCAL - 1; q >= 0; q--)
        if (e->p[q]) e->p[q]->ops->destroy(e->p[q]);
    free(e);
}

/* Seconds per sweep: the median of 3 blocks of `block` sweeps after one untimed block
 * (which also captures the chain graphs). */
static hr_status time_sweeps(hr_split *e, long block, double *seconds)
{
    double t[3];
    HR_TRY(hri_split_sweeps(e, block));
    for (int r = 0; r < 3; r++) {
        const double t0 = hr_now();
        HR_TRY(hri_split_sweeps(e, block));
        t[r] = (hr_now() - t0) / (double)block;
    }
    *seconds = hri_median(t, 3);
    return HR_OK;
}

/* The start-up trial (hr_split_spec.exchange_trial): the direct copies against staging
 * the same edges through the host, on the loaded grids, which are then loaded again. On
 * some machines the direct path was measured slower than host staging (run c2, 2 x H200:
 * peer 0.443 ms/sweep, host-staged 0.424 ms at 20480^2 fp32), so the chain times both
 * rather than trusting either. */
static hr_status pick_exchange(hr_split *e, const hr_grid *u, const hr_grid *hf)
{
    const hr_tuning *tu = &e->spec.tune;
    int peer = 0, direct = 0;
    for (int q = 0; q + 1 < e->nparts; q++) {
        peer += e->link[q] == HR_LINK_PEER;
        direct += e->link[q] != HR_LINK_HOST;
    }
    const int always = e->spec.exchange_trial > 0 || tu->exchange_trial > 0;
    if (e->nparts < 2 || e->nremote || !direct || e->spec.exchange_trial < 0 || tu->peer > 0 ||
        (!peer && !always))
        return HR_OK;
    /* CPU parts run the trial only in tests: short blocks */
    const long block = is_cpu(e->p[0]) ? 2 : 2 * HR_SPLIT_GRAPH_SWEEPS;
    int keep[HR_SPLIT_MAX_LOCAL];
    char words[64];
    snprintf(words, sizeof words, "%s", e->exchange);
    double t_direct = 0, t_host = 0;
    HR_TRY(time_sweeps(e, block, &t_direct));
    for (int q = 0; q + 1 < e->nparts; q++) {
        keep[q] = e->link[q];
        e->link[q] = HR_LINK_HOST;
    }
    const hr_status st = time_sweeps(e, block, &t_host);
    const int host = st == HR_OK && t_host < t_direct * (1.0 - 0.005);
    if (!host)
        for (int q = 0; q + 1 < e->nparts; q++)
            e->link[q] = keep[q];
    HR_TRY(st);
    e->trial = host ? 2 : 1;
    e->trial_s[0] = t_direct;
    e->trial_s[1] = t_host;
    /* the chosen path first: "host-staged (0.424 ms; peer copies 0.443)" */
    char text[160];
    if (host)
        snprintf(text, sizeof text, "host-staged (%.3g ms; %s %.3g)", 1e3 * t_host, words, 1e3 * t_direct);
    else
        snprintf(text, sizeof text, "%s (%.3g ms; host-staged %.3g)", words, 1e3 * t_direct, 1e3 * t_host);
    const size_t len = strlen(text) < sizeof e->exchange ? strlen(text) : sizeof e->exchange - 1;
    memcpy(e->exchange, text, len);
    e->exchange[len] = '\0';
    memset(&e->st, 0, sizeof e->st);
    e->graph_replays = 0;
    return hri_split_load(e, u, hf, 0);
}
