/* The split engine (see split.h): the sweeps, the exchanges between the parts, residual,
 * download and reload. Building the parts: split_setup.c. */
#include "parallel/hybrid/split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/timer.h"
#include "parallel/hybrid/split_internal.h"
#include "core/solver_internal.h"

/* Receives the remote ghost rows: every local send buffer is filled (lane 0 waited). Faces
 * sent from a part's own rows go in the phase bound to grid `which`'s rows (parts swap their
 * grids together, so `parity` says which of the two it is) and need no put. */
static hr_status remote_exchange(hr_split *e, int which)
{
    if (!e->nremote) return HR_OK;
    const double t0 = hr_now();
    const int phase = e->zero_copy ? 1 + (which ? 1 - e->parity : e->parity) : 0;
    T_TRY(e, e->spec.t->ops->start(e->spec.t, phase));
    T_TRY(e, e->spec.t->ops->wait(e->spec.t, phase));
    e->st.wait_s += hr_now() - t0;
    for (int q = 0; q < e->nparts; q++)
        for (int s = 0; s < 2; s++)
            if (e->face[q][s] == HR_FACE_REMOTE && !e->zc_face[q][s]) {
                int r0, r1;
                face_rows(e->p[q], e->d.ghost, s, 1, &r0, &r1);
                P_TRY(e, e->p[q], e->p[q]->ops->put(e->p[q], HR_LANE_BOUNDARY, which, r0, r1, e->rbuf[q][s]));
            }
    return HR_OK;
}

static int host_edge(const hr_split *e, int q)
{
    return e->link[q] == HR_LINK_HOST;
}

/* Whether part q's face on `side` is a local edge exchanged by direct device copies. */
static int direct_face(const hr_split *e, int q, int side)
{
    return e->face[q][side] == HR_FACE_LOCAL && !host_edge(e, side ? q : q - 1);
}

/* The local edges that go through the host (grid `which`): part q's high rows into q+1's
 * low ghost rows and back, from the send buffers get_faces filled. Two parts: A's rows go
 * in while B's are still copied out. */
static hr_status local_exchange(hr_split *e, int which)
{
    if (e->nparts < 2) return HR_OK;
    const int n = e->nparts, g = e->d.ghost;
    int r0, r1, any = 0;
    for (int q = 0; q + 1 < n; q++) {
        if (!host_edge(e, q)) continue;
        any = 1;
        hr_place *L = e->p[q], *H = e->p[q + 1];
        P_TRY(e, L, L->ops->wait(L, HR_LANE_BOUNDARY)); /* L's rows copied out (L may be a device) */
        face_rows(H, g, 0, 1, &r0, &r1);
        const void *from = e->sbuf[q][1];
        if (e->mapped[q]) { /* straight from L's own rows (its boundary sweep is done) */
            int o0, o1;
            face_rows(L, g, 1, 0, &o0, &o1);
            from = L->ops->host_rows(L, which, o0);
        }
        P_TRY(e, H, H->ops->put(H, HR_LANE_BOUNDARY, which, r0, r1, from));
    }
    if (!any) return HR_OK;
    const double t0 = hr_now();
    for (int q = 1; q < n; q++) /* the rows from below arrived, own rows copied out */
        if (host_edge(e, q - 1)) P_TRY(e, e->p[q], e->p[q]->ops->wait(e->p[q], HR_LANE_BOUNDARY));
    e->st.wait_s += hr_now() - t0;
    for (int q = 0; q + 1 < n; q++) {
        if (!host_edge(e, q) || e->mapped[q]) continue; /* mapped: H's get wrote L's ghost rows */
        hr_place *L = e->p[q];
        face_rows(L, g, 1, 1, &r0, &r1);
        P_TRY(e, L, L->ops->put(L, HR_LANE_BOUNDARY, which, r0, r1, e->sbuf[q + 1][0]));
    }
    /* the send buffers are refilled by the next sweep's copies on other parts: a device's
     * put reading one must be done first (a CPU's put already is) */
    for (int q = 0; q + 1 < n; q++)
        if (host_edge(e, q) && !is_cpu(e->p[q]))
            P_TRY(e, e->p[q], e->p[q]->ops->wait(e->p[q], HR_LANE_BOUNDARY));
    return HR_OK;
}

/* The local edges with direct copies (grid `which`, `ghost` rows deep): every part pulls
 * its ghost rows from its neighbours' own rows on its boundary lane, after the marks the
 * neighbours recorded; no host wait. */
static hr_status direct_exchange(hr_split *e, int which, int ghost, int fence)
{
    int r0, r1, s0, s1;
    for (int q = 0; q + 1 < e->nparts; q++) {
        if (host_edge(e, q)) continue;
        hr_place *L = e->p[q], *H = e->p[q + 1];
        face_rows(H, ghost, 0, 1, &r0, &r1); /* H's low ghost rows from L's high own rows */
        face_rows(L, ghost, 1, 0, &s0, &s1);
        P_TRY(e, H, H->ops->pull(H, which, r0, r1, L, s0, fence));
        face_rows(L, ghost, 1, 1, &r0, &r1); /* L's high ghost rows from H's low own rows */
        face_rows(H, ghost, 0, 0, &s0, &s1);
        P_TRY(e, L, L->ops->pull(L, which, r0, r1, H, s0, fence));
    }
    return HR_OK;
}

/* Copies every part's face rows (ghost deep) of grid `which` into its send buffers
 * (faces exchanged by direct copies are left out, and so are faces whose rows are read
 * where they are: a remote face sent from the grid, the low part's rows of a mapped edge).
 * The high part of a mapped edge copies its low rows straight into the low part's ghost
 * rows. */
static hr_status get_faces(hr_split *e, int q, int which, int ghost)
{
    for (int s = 0; s < 2; s++) {
        if (e->face[q][s] == HR_FACE_PHYS || direct_face(e, q, s)) continue;
        if (e->face[q][s] == HR_FACE_REMOTE ? e->zc_face[q][s] : s == 1 && e->mapped[q]) continue;
        void *to = e->sbuf[q][s];
        if (s == 0 && e->face[q][0] == HR_FACE_LOCAL && e->mapped[q - 1]) {
            hr_place *L = e->p[q - 1];
            int g0, g1;
            face_rows(L, ghost, 1, 1, &g0, &g1);
            to = L->ops->host_rows(L, which, g0);
        }
        int r0, r1;
        face_rows(e->p[q], ghost, s, 0, &r0, &r1);
        P_TRY(e, e->p[q], e->p[q]->ops->get(e->p[q], HR_LANE_BOUNDARY, which, r0, r1, to));
    }
    return HR_OK;
}

/* Marks the boundary work of every part that direct copies read from. */
static hr_status mark_parts(hr_split *e)
{
    for (int q = 0; q < e->nparts; q++)
        if (direct_face(e, q, 0) || direct_face(e, q, 1)) P_TRY(e, e->p[q], e->p[q]->ops->mark(e->p[q]));
    return HR_OK;
}

static hr_status wait_lane(hr_split *e, int lane)
{
    for (int q = 0; q < e->nparts; q++)
        P_TRY(e, e->p[q], e->p[q]->ops->wait(e->p[q], lane));
    return HR_OK;
}

/* Fills every ghost zone (ghost rows deep) from the neighbours' current own rows. */
static hr_status exchange(hr_split *e)
{
    for (int q = 0; q < e->nparts; q++)
        P_TRY(e, e->p[q], e->p[q]->ops->order(e->p[q]));
    for (int q = e->nparts - 1; q >= 0; q--)
        HR_TRY(get_faces(e, q, 0, e->d.ghost));
    HR_TRY(mark_parts(e));
    HR_TRY(direct_exchange(e, 0, e->d.ghost, 1));
    HR_TRY(local_exchange(e, 0));
    HR_TRY(wait_lane(e, HR_LANE_BOUNDARY));
    HR_TRY(remote_exchange(e, 0));
    for (int q = 0; q < e->nparts; q++)
        P_TRY(e, e->p[q], e->p[q]->ops->order(e->p[q]));
    e->st.exchanges++;
    e->fresh = 1;
    return HR_OK;
}

/* Adds the time since *mark to *acc and moves the mark to now. */
static void trace_phase(double *acc, double *mark)
{
    const double t = hr_now();
    *acc += t - *mark;
    *mark = t;
}

static void trace_sweep(hr_split *e, double d)
{
    int b = 0;
    for (double lim = 5e-4; b < 5 && d >= lim; lim *= 2)
        b++;
    e->tr.hist[b]++;
    e->tr.sweeps++;
    if (d > e->tr.max_s) e->tr.max_s = d;
}

/* One sweep, ghost 1: every part sweeps its boundary rows first and copies them out, then
 * its interior while the rows cross (nested); naive CPU parts sweep their interior after
 * the exchange (Sourouri et al. listing 2). */
static hr_status overlapped_sweep(hr_split *e)
{
    const int naive = e->spec.schedule == HR_SPLIT_NAIVE;
    int in0[HR_SPLIT_MAX_LOCAL], in1[HR_SPLIT_MAX_LOCAL];
    const double t_start = e->tr.on ? hr_now() : 0.0;
    double t_mark = t_start;
    for (int q = e->nparts - 1; q >= 0; q--) { /* the device (last part) first */
        hr_place *P = e->p[q];
        const int o0 = P->spec.sd.own.lo[e->axis], o1 = P->spec.sd.own.hi[e->axis];
        const int lo = e->face[q][0] != HR_FACE_PHYS, hi = e->face[q][1] != HR_FACE_PHYS;
        in0[q] = o0 + lo;
        in1[q] = o1 - hi > in0[q] ? o1 - hi : in0[q];
        if (lo) P_TRY(e, P, P->ops->sweep(P, HR_LANE_BOUNDARY, o0, o0 + 1));
        if (hi && o1 - 1 >= o0 + lo) P_TRY(e, P, P->ops->sweep(P, HR_LANE_BOUNDARY, o1 - 1, o1));
        if (direct_face(e, q, 0) || direct_face(e, q, 1)) P_TRY(e, P, P->ops->mark(P));
        /* a nested CPU part's interior crew starts before its boundary rows are copied out
         * (copying waits for the boundary crew): the two crews run at once, as listing 3's
         * teams do; a device queues its copy first, ahead of the interior on the GPU */
        const int early = is_cpu(P) && !naive && P->spec.boundary_threads > 0;
        if (early) P_TRY(e, P, P->ops->sweep(P, HR_LANE_INTERIOR, in0[q], in1[q]));
        HR_TRY(get_faces(e, q, 1, 1));
        if (!early && !(naive && is_cpu(P))) P_TRY(e, P, P->ops->sweep(P, HR_LANE_INTERIOR, in0[q], in1[q]));
    }
    /* direct copies need no fence: the rows a pull reads are next written two sweeps
     * later, after the reading part's own next boundary rows, which the writer's pull of
     * the next sweep waits for */
    if (e->tr.on) trace_phase(&e->tr.issue_s, &t_mark);
    HR_TRY(direct_exchange(e, 1, 1, 0));
    HR_TRY(local_exchange(e, 1));
    if (e->nremote) {
        HR_TRY(wait_lane(e, HR_LANE_BOUNDARY));
        HR_TRY(remote_exchange(e, 1));
    }
    if (e->tr.on) trace_phase(&e->tr.exchange_s, &t_mark);
    for (int q = 0; q < e->nparts; q++)
        if (naive && is_cpu(e->p[q]))
            P_TRY(e, e->p[q], e->p[q]->ops->sweep(e->p[q], HR_LANE_INTERIOR, in0[q], in1[q]));
    /* the barrier listing 3 lacks: every part done before the swap; a part that marked
     * its boundary sweeps lets its next interior wait for those alone (settle), not for
     * the copies after them */
    for (int q = 0; q < e->nparts; q++) {
        hr_place *P = e->p[q];
        const int marked = direct_face(e, q, 0) || direct_face(e, q, 1);
        P_TRY(e, P, marked && P->ops->settle ? P->ops->settle(P) : P->ops->order(P));
        if (e->tr.on) trace_phase(&e->tr.order_s[q], &t_mark);
    }
    if (e->tr.on) trace_sweep(e, t_mark - t_start);
    for (int q = 0; q < e->nparts; q++)
        e->p[q]->ops->swap(e->p[q]);
    e->parity ^= 1;
    e->st.exchanges++;
    e->fresh = 1;
    return HR_OK;
}

/* Whether the ghost-1 sweeps can replay chain graphs: every part a device of one kind that
 * captures, every edge a direct copy, nothing through the host or MPI. */
static int chain_graphs(const hr_split *e)
{
    if (e->graph_off || e->d.ghost != 1 || e->nremote || e->nparts < 2) return 0;
    const hr_place_ops *ops = e->p[0]->ops;
    if (!ops->capture || !ops->replay || !ops->drop) return 0;
    for (int q = 0; q < e->nparts; q++)
        if (e->p[q]->ops != ops || (q + 1 < e->nparts && host_edge(e, q))) return 0;
    return 1;
}

/* Captures HR_SPLIT_GRAPH_SWEEPS overlapped sweeps from the current parity. Nothing runs
 * while capturing, so the grids' roles and the counters are put back; a failure turns
 * chain graphs off (the sweeps are then issued one by one) and is not an error. */
static void build_chain_graph(hr_split *e)
{
    const hr_place_ops *ops = e->p[0]->ops;
    const hr_split_stats keep = e->st;
    const int par = e->parity;
    void *g = NULL;
    int done = 0;
    hr_status st = ops->capture(e->p, e->nparts, 1, NULL);
    if (st == HR_OK) {
        while (st == HR_OK && done < HR_SPLIT_GRAPH_SWEEPS) {
            st = overlapped_sweep(e);
            done += st == HR_OK;
        }
        const hr_status end = ops->capture(e->p, e->nparts, 0, &g);
        if (st == HR_OK) st = end;
    }
    if (e->parity != par) { /* an odd number of sweeps was issued before a failure */
        for (int q = 0; q < e->nparts; q++)
            e->p[q]->ops->swap(e->p[q]);
        e->parity = par;
    }
    e->st = keep;
    e->fresh = 1;
    if (st == HR_OK && g) {
        e->graph[par] = g;
    } else {
        if (g) ops->drop(g);
        e->graph_off = 1;
        e->err[0] = '\0';
    }
}

hr_status hri_split_sweeps(hr_split *e, long count)
{
    int exchanging = e->nremote > 0 || e->nparts > 1;
    if (!exchanging) {
        hr_place *P = e->p[0];
        const int r0 = P->spec.sd.own.lo[e->axis], r1 = P->spec.sd.own.hi[e->axis];
        if (P->ops->sweeps)
            P_TRY(e, P, P->ops->sweeps(P, r0, r1, count));
        else
            for (long t = 0; t < count; t++) {
                P_TRY(e, P, P->ops->sweep(P, HR_LANE_INTERIOR, r0, r1));
                P->ops->swap(P); /* one lane: in order */
            }
        P_TRY(e, P, P->ops->wait(P, HR_LANE_INTERIOR));
        e->st.sweeps += count;
        return HR_OK;
    }
    while (count > 0) {
        if (e->d.ghost == 1) {
            if (count >= HR_SPLIT_GRAPH_SWEEPS && chain_graphs(e)) {
                if (!e->graph[e->parity]) build_chain_graph(e);
                if (e->graph[e->parity]) {
                    P_TRY(e, e->p[0], e->p[0]->ops->replay(e->p, e->nparts, e->graph[e->parity]));
                    count -= HR_SPLIT_GRAPH_SWEEPS;
                    e->st.sweeps += HR_SPLIT_GRAPH_SWEEPS;
                    e->st.exchanges += HR_SPLIT_GRAPH_SWEEPS;
                    e->graph_replays++;
                    continue;
                }
            }
            HR_TRY(overlapped_sweep(e));
            count--;
            e->st.sweeps++;
            continue;
        }
        const int m = count < e->d.ghost ? (int)count : e->d.ghost;
        if (!e->fresh) HR_TRY(exchange(e));
        for (int step = 1; step <= m; step++) {
            for (int q = e->nparts - 1; q >= 0; q--) {
                hr_place *P = e->p[q];
                const hr_box b = hri_subdomain_sweep_box(&P->spec.sd, m, step);
                P_TRY(e, P, P->ops->sweep(P, HR_LANE_INTERIOR, b.lo[e->axis], b.hi[e->axis]));
            }
            for (int q = 0; q < e->nparts; q++) {
                P_TRY(e, e->p[q], e->p[q]->ops->order(e->p[q]));
                e->p[q]->ops->swap(e->p[q]);
            }
            e->parity ^= 1;
        }
        e->fresh = 0;
        e->st.sweeps += m;
        count -= m;
    }
    HR_TRY(wait_lane(e, HR_LANE_BOUNDARY));
    return wait_lane(e, HR_LANE_INTERIOR);
}

hr_status hri_split_residual(hr_split *e, hr_grid *scratch, double *rel)
{
    if ((e->nparts > 1 || e->nremote) && !e->fresh) HR_TRY(exchange(e));
    hr_norm2 v[2] = {{0, 0}, {0, 0}};
    for (int q = 0; q < e->nparts; q++) {
        hr_norm2 rq, bq;
        P_TRY(e, e->p[q], e->p[q]->ops->residual(e->p[q], scratch, &rq, &bq));
        hr_norm2_add(&v[0], rq);
        hr_norm2_add(&v[1], bq);
    }
    if (e->spec.t) T_TRY(e, e->spec.t->ops->sum_norms(e->spec.t, v, 2));
    *rel = hr_norm2_relative(v[0], v[1]);
    return HR_OK;
}

hr_status hri_split_download(hr_split *e, hr_grid *global)
{
    for (int q = 0; q < e->nparts; q++)
        P_TRY(e, e->p[q], e->p[q]->ops->download(e->p[q], global));
    return HR_OK;
}

hr_status hri_split_load(hr_split *e, const hr_grid *u, const hr_grid *hf, int row0)
{
    for (int q = 0; q < e->nparts; q++)
        e->p[q]->spec.row0 = row0;
    for (int q = 0; q < e->nparts; q++)
        P_TRY(e, e->p[q], e->p[q]->ops->load(e->p[q], u, hf));
    e->parity = 0; /* load makes grid 0 current again */
    e->fresh = 1;
    return HR_OK;
}
