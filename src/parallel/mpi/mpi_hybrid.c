/* The per-rank CPU+GPU split over MPI (include/hetrelax/mpi_hybrid.h): the hybrid split
 * engine (src/parallel/hybrid/split.c) with one slab per rank and the MPI transport for the
 * planes between ranks, driven by the one iteration loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/precision.h"
#include "core/solver_internal.h"
#include "core/timer.h"
#include "core/tune_util.h"
#include "core/tuning.h"
#include "hetrelax/mpi_hybrid.h"
#include "parallel/hybrid/split.h"
#include "parallel/transport/mpi/transport_mpi.h"
#include "runtime/cpu/team.h"
#include "runtime/cuda/cuda_api.h"

struct hr_mpi_hybrid {
    MPI_Comm comm;
    int rank, size;
    hr_options o;
    hr_run_problem p;
    hr_transport *t;
    hr_split *e;
    hr_grid u, hf; /* this rank's slab: global rows row0.. along the split axis */
    int row0;
    int g_lo, g_hi; /* own global rows [g_lo, g_hi), 1-based */
    long done;
    double fraction; /* of each slab on the CPU: options.split, or auto's choice */
    hr_history hist;
    hr_hybrid_info info;
    /* split auto: every rank's model and what the choice measured */
    hr_split_model *models;
    hr_mpi_hybrid_choice choice;
};

/* the thread's one error channel (hr_last_error()): every handle's messages go there */
#define err_text (hri_last_error_buf())

const char *hr_mpi_hybrid_last_error(void)
{
    return hr_last_error();
}

/* Every rank learns the first failing rank's status and message. */
static hr_status agree(MPI_Comm comm, int rank, int size, hr_status st)
{
    int first = st != HR_OK ? rank : size;
    if (MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return HR_ERR_IO;
    if (first == size) return HR_OK;
    int code = (int)st;
    MPI_Bcast(&code, 1, MPI_INT, first, comm);
    MPI_Bcast(err_text, (int)HR_LAST_ERROR_SIZE, MPI_CHAR, first, comm);
    err_text[HR_LAST_ERROR_SIZE - 1] = '\0';
    return (hr_status)code;
}

static int node_local_rank(MPI_Comm comm, int *local_size)
{
    MPI_Comm node;
    int r = 0;
    *local_size = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &r);
        MPI_Comm_size(node, local_size);
        MPI_Comm_free(&node);
    }
    return r;
}

/* The rows along the split axis that this rank's parts span (own rows and ghost rows):
 * the slab grid's first global row and its interior extent. */
static void slab_extent(const hr_split *e, int *row0, int *ext)
{
    const int axis = e->axis;
    int lo = 1 << 30, hi = -1;
    for (int q = 0; q < e->nparts; q++) {
        const hr_subdomain *sd = &e->p[q]->spec.sd;
        const int a = hr_subdomain_global(sd, axis, 0),
                  b = hr_subdomain_global(sd, axis, hr_subdomain_span(sd, axis) - 1);
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    *row0 = lo;
    *ext = hi - lo - 1;
}

/* A host grid for this rank's slab (extent `ext` along the split axis). */
static hr_status slab_alloc(const hr_mpi_hybrid *s, int axis, int ext, hr_grid *g)
{
    const hr_run_problem *p = &s->p;
    hr_grid_layout l;
    const size_t es = hr_prec_bytes(s->o.precision);
    if (!hr_layout_init(&l, p->dim, p->nx, axis == 1 ? ext : p->ny, axis == 2 ? ext : 1, es))
        return HR_ERR_NO_MEMORY;
    return hri_grid_alloc_huge(g, &l, hr_tune_on(s->o.tuning.hugepages, 0));
}

/* The slab grids: every local row of this rank's parts, boundary ring, initial values and
 * the right-hand side from the global problem (bitwise the whole grid's data). */
static hr_status make_slab(hr_mpi_hybrid *s)
{
    hr_split *e = s->e;
    const int axis = e->axis;
    int lo, ext;
    slab_extent(e, &lo, &ext);
    s->row0 = lo;
    s->g_lo = hr_subdomain_global(&e->p[0]->spec.sd, axis, e->p[0]->spec.sd.own.lo[axis]);
    s->g_hi =
        hr_subdomain_global(&e->p[e->nparts - 1]->spec.sd, axis, e->p[e->nparts - 1]->spec.sd.own.hi[axis]);
    const hr_run_problem *p = &s->p;
    HR_TRY(slab_alloc(s, axis, ext, &s->u));
    if (e->spec.has_hf) HR_TRY(slab_alloc(s, axis, ext, &s->hf));
    const hr_grid_layout l = s->u.l;
    const int n[3] = {p->nx, p->ny, p->nz};
    const int span[3] = {l.nx + 2, l.ny + 2, p->dim == 3 ? l.nz + 2 : 1};
    for (int k = 0; k < span[2]; k++)
        for (int i = 0; i < span[1]; i++)
            for (int j = 0; j < span[0]; j++) {
                int G[3] = {j, i, k};
                G[axis] += lo;
                int inside = 1;
                for (int a = 0; a < p->dim; a++)
                    inside &= G[a] >= 1 && G[a] <= n[a];
                double v = p->boundary, f = 0.0;
                if (inside) {
                    v = p->init == HR_INIT_ZERO ? 0.0
                                                : hri_problem_init_at(p, s->o.init_values, G[1], G[0], G[2]);
                    if (s->hf.base) f = hri_problem_rhs_at(p, s->o.rhs_values, G[1], G[0], G[2]);
                }
                hri_grid_set3(&s->u, i, j, k, v);
                if (s->hf.base) hri_grid_set3(&s->hf, i, j, k, f);
            }
    return HR_OK;
}

/* --------------------------------------------------------------- split auto, per rank */

/* Timed blocks of the choice last at least this long; a figure is the median of CHOICE_BLOCKS
 * blocks, each the slowest rank's. */
#define CHOICE_BLOCK_S 0.01
#define CHOICE_BLOCKS  5

/* One block of k sweeps of engine e on every rank, started together: *t is the slowest rank's
 * seconds per sweep; the status is agreed. */
static hr_status block_ranks(hr_mpi_hybrid *s, hr_split *e, long k, double *t)
{
    MPI_Barrier(s->comm);
    const double t0 = hr_now();
    const hr_status st = hri_split_sweeps(e, k);
    *t = (hr_now() - t0) / (double)k;
    if (st != HR_OK) snprintf(err_text, HR_LAST_ERROR_SIZE, "%s", e->err);
    MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_MAX, s->comm);
    return agree(s->comm, s->rank, s->size, st);
}

/* Seconds per sweep of an engine running on every rank: the same blocks on every rank (sized
 * from the slowest rank's estimate after warm-up), each block the slowest rank's, the median. */
static hr_status time_ranks(hr_mpi_hybrid *s, hr_split *e, double *per_sweep)
{
    double est, t[CHOICE_BLOCKS];
    HR_TRY(block_ranks(s, e, 3, &est)); /* warm-up */
    HR_TRY(block_ranks(s, e, 2, &est));
    long k = est > 0.0 ? (long)ceil(CHOICE_BLOCK_S / est) : 64;
    k = k < 1 ? 1 : k > 4096 ? 4096 : k;
    for (int b = 0; b < CHOICE_BLOCKS; b++)
        HR_TRY(block_ranks(s, e, k, &t[b]));
    *per_sweep = hri_median(t, CHOICE_BLOCKS);
    return HR_OK;
}

/* The engine of spec `base` at `fraction`, loaded from the rank's nonzero slab (*slab is
 * allocated by the first call), timed through the ranks. */
static hr_status time_fraction(hr_mpi_hybrid *s, const hr_split_spec *base, double fraction, hr_grid *slab,
                               double *per_sweep)
{
    hr_split_spec sp = *base;
    sp.fraction = fraction;
    hr_split *e = NULL;
    hr_status st = hri_split_create(&sp, NULL, NULL, &e, err_text, HR_LAST_ERROR_SIZE);
    int row0 = 0, ext = 0;
    if (st == HR_OK) slab_extent(e, &row0, &ext);
    if (st == HR_OK && !slab->base) {
        st = slab_alloc(s, e->axis, ext, slab);
        if (st == HR_OK) hri_split_fill_nonzero(slab);
    }
    if (st == HR_OK) {
        st = hri_split_load(e, slab, NULL, row0);
        if (st != HR_OK) snprintf(err_text, HR_LAST_ERROR_SIZE, "%s", e->err);
    }
    st = agree(s->comm, s->rank, s->size, st);
    if (st == HR_OK) st = time_ranks(s, e, per_sweep);
    hri_split_free(e);
    return st;
}

/* The same in two engines, the faster kept: the fit's anchors. An engine now and then runs a
 * split at several times its speed in another (a naive probe of 3 planes took 3.99 ms, 10-15
 * planes 1.48-1.74 ms: the model then 156 % high at 1 %); none runs faster. */
static hr_status time_fraction_best(hr_mpi_hybrid *s, const hr_split_spec *base, double fraction,
                                    hr_grid *slab, double *per_sweep)
{
    double t;
    HR_TRY(time_fraction(s, base, fraction, slab, per_sweep));
    HR_TRY(time_fraction(s, base, fraction, slab, &t));
    if (t < *per_sweep) *per_sweep = t;
    return HR_OK;
}

/* The models with their CPU terms ramped: factor k[i] at fraction f[i] of each slab (n points;
 * one point: that factor throughout), into scratch (`ranks` models); the time at fraction f
 * without the exchange between ranks. */
static double ramped_time(const hr_split_model *m, hr_split_model *scratch, int ranks, int n,
                          const double *fr, const double *k, double f, int g)
{
    for (int r = 0; r < ranks; r++) {
        double rows[HR_SPLIT_RAMP];
        for (int i = 0; i < n; i++)
            rows[i] = hr_split_model_rank_rows(fr[i], m[r].rows);
        scratch[r] = hri_split_model_ramped(&m[r], n, rows, k);
    }
    return hr_split_model_ranks_time(scratch, ranks, f, g, 0.0, 0.0);
}

/* The terms the calibrations alone miss, fitted through the ranks. Each rank's calibration
 * timed its CPU part alone, but in the run every rank's CPU part, the GPUs' host copies and MPI's
 * copies share the host's caches and memory every sweep (two H200 ranks: 79-88 us a plane measured,
 * 62-69 us modelled), and the planes between ranks cost what no calibration saw. Measured through
 * the ranks: the probe (2g + 1 planes, the GPU parts the later ones), a split where the CPU parts
 * are surely the later ones (four times the model's balance, at least 4g + 2 planes, at most
 * half), then a ladder: twice those planes, four times, ... while under two thirds of half the
 * slab, and half the slab. The CPU terms are scaled by k (in [0.5, 4]) and x_ranks added so that
 * the model meets the first two (x_ranks from the probe alone and k from the second: a probe
 * below its one-process model left x_ranks 0 and k 2.2, 20-61 % high). Then each
 * ladder point in turn gets its own factor (in [0.25, 8]; log-linear in planes between points)
 * so that the model meets it: with one factor, fitted at 3 and 28 planes of 512, it was
 * 15-49 % low from 77 planes on; with a second at 256 planes still 15-32 % low at
 * 36-51 planes, where two ranks' CPU parts leave the 300 MiB L3 they share. */
static hr_status fit_ranks(hr_mpi_hybrid *s, const hr_split_spec *base, int n_min, int g, hr_grid *slab)
{
    hr_mpi_hybrid_choice *c = &s->choice;
    const double f1 = c->probe_fraction, t1 = c->probe_s;
    int bal = g;
    for (; bal <= n_min - g; bal++) { /* the balance: the CPU parts' time reaches the GPU parts' */
        double ta = 0.0, tb = 0.0;
        for (int r = 0; r < s->size; r++) {
            const int a = (int)((double)bal / n_min * s->models[r].rows + 0.5);
            const double pa = hr_split_model_part_a(&s->models[r], a),
                         pb = hr_split_model_part_b(&s->models[r], a);
            ta = pa > ta ? pa : ta;
            tb = pb > tb ? pb : tb;
        }
        if (ta >= tb) break;
    }
    int planes = 4 * bal > 4 * g + 2 ? 4 * bal : 4 * g + 2;
    planes = planes > n_min / 2 ? n_min / 2 : planes;
    c->cpu_scale = 1.0;
    c->ladder = 0;
    const double alone = hr_split_model_ranks_time(s->models, s->size, f1, g, 0.0, 0.0);
    c->x_ranks = t1 - alone;
    const double f2 = (double)planes / n_min;
    if (planes <= (int)lround(f1 * n_min) || n_min - planes < g ||
        isnan(hr_split_model_ranks_time(s->models, s->size, f2, g, 0.0, 0.0)))
        return HR_OK;
    HR_TRY(time_fraction_best(s, base, f2, slab, &c->cpu_probe_s));
    c->cpu_probe_fraction = f2;
    hr_split_model *tmp = malloc((size_t)s->size * sizeof *tmp);
    hr_status st = agree(s->comm, s->rank, s->size, tmp ? HR_OK : HR_ERR_NO_MEMORY);
    if (st != HR_OK) {
        free(tmp);
        return st;
    }
    /* T2 - T1 = M_k(f2) - M_k(f1) grows with k (the CPU part is a larger share at f2): bisection */
    const double want = c->cpu_probe_s - t1;
    double lo = 0.5, hi = 4.0, fr[HR_SPLIT_RAMP] = {f2}, k[HR_SPLIT_RAMP];
    for (int it = 0; it < 60; it++) {
        k[0] = 0.5 * (lo + hi);
        const double d = ramped_time(s->models, tmp, s->size, 1, fr, k, f2, g) -
                         ramped_time(s->models, tmp, s->size, 1, fr, k, f1, g);
        if (d < want)
            lo = k[0];
        else
            hi = k[0];
    }
    k[0] = c->cpu_scale = 0.5 * (lo + hi);
    c->x_ranks = t1 - ramped_time(s->models, tmp, s->size, 1, fr, k, f1, g);
    /* the ladder: point i's factor moves the model from point i - 1 on only */
    int far = n_min / 2 > 2 * planes ? n_min / 2 : 2 * planes;
    far = far > n_min - g ? n_min - g : far;
    int n = 1;
    for (int p = 2 * planes, last = planes; st == HR_OK && n < HR_SPLIT_RAMP; last = p, p = 2 * p) {
        if (3 * p > 2 * far) p = far; /* the last rung: half the slab */
        if (p <= last + last / 4) break;
        const double f = (double)p / n_min;
        if (isnan(hr_split_model_ranks_time(s->models, s->size, f, g, 0.0, 0.0))) break;
        double t;
        st = time_fraction_best(s, base, f, slab, &t);
        if (st != HR_OK) break;
        fr[n] = f;
        lo = 0.25, hi = 8.0;
        for (int it = 0; it < 60; it++) { /* M(f) grows with k[n] */
            k[n] = 0.5 * (lo + hi);
            if (ramped_time(s->models, tmp, s->size, n + 1, fr, k, f, g) < t - c->x_ranks)
                lo = k[n];
            else
                hi = k[n];
        }
        k[n] = 0.5 * (lo + hi);
        c->ladder_fraction[n - 1] = f;
        c->ladder_s[n - 1] = t;
        c->ladder_scale[n - 1] = k[n];
        c->ladder = n++;
        if (p == far) break;
    }
    for (int r = 0; r < s->size && st == HR_OK; r++) {
        double rows[HR_SPLIT_RAMP];
        for (int i = 0; i < n; i++)
            rows[i] = hr_split_model_rank_rows(fr[i], s->models[r].rows);
        s->models[r] = hri_split_model_ramped(&s->models[r], n, rows, k);
    }
    free(tmp);
    return st;
}

/* Calibrates this rank's slab, shares the models, measures t0 and the probe through the ranks
 * and the candidates, and chooses (hr_mpi_hybrid_choice in mpi_hybrid.h). */
static hr_status choose_split(hr_mpi_hybrid *s, const hr_options *oo, const hr_split_spec *base)
{
    hr_mpi_hybrid_choice *c = &s->choice;
    const double t_start = hr_now();
    const int n_axis = hr_split_extent(base), g = base->ghost;
    int lo, hi;
    hr_split_range(n_axis, s->size, s->rank, &lo, &hi);
    /* this rank's slab as one process's grid (its values do not matter: the calibration
     * fills its own) */
    hr_options ol = *oo;
    ol.split = 0.0;
    ol.device = base->device;
    if (base->dim == 3)
        ol.nz = hi - lo;
    else
        ol.ny = hi - lo;
    ol.rhs = base->has_hf ? HR_RHS_MANUFACTURED : HR_RHS_SPIKE;
    ol.rhs_values = NULL;
    ol.init = HR_INIT_ZERO;
    ol.init_values = NULL;
    hr_hybrid_calibration cal;
    hr_split_model m;
    hr_status st = hr_hybrid_calibrate(&ol, 0, &cal, &m);
    if (st != HR_OK) snprintf(err_text, HR_LAST_ERROR_SIZE, "%s", hr_hybrid_last_error());
    HR_TRY(agree(s->comm, s->rank, s->size, st));
    c->calibration_s = cal.seconds;
    MPI_Allreduce(MPI_IN_PLACE, &c->calibration_s, 1, MPI_DOUBLE, MPI_MAX, s->comm);
    s->models = calloc((size_t)s->size, sizeof *s->models);
    st = s->models ? HR_OK : HR_ERR_NO_MEMORY;
    HR_TRY(agree(s->comm, s->rank, s->size, st));
    MPI_Allgather(&m, (int)sizeof m, MPI_BYTE, s->models, (int)sizeof m, MPI_BYTE, s->comm);
    s->info.have_model = 1;
    s->info.auto_split = 1;
    s->info.model = m;
    s->info.cal = cal;

    int n_min = hi - lo;
    MPI_Allreduce(MPI_IN_PLACE, &n_min, 1, MPI_INT, MPI_MIN, s->comm);
    hr_grid slab;
    memset(&slab, 0, sizeof slab);
    st = time_fraction(s, base, 0.0, &slab, &c->gpu_only_s);
    c->fraction = 0.0;
    if (st == HR_OK && n_min >= 2 * g) {
        /* the probe: 2g + 1 planes of the smallest slab on the CPU (the GPU part surely the later,
         * and a CPU part with a rank below sweeps two boundary planes, as every larger split
         * does: with g planes it swept one, and the model missed 3 planes by 0.3 ms) */
        const int probe = n_min >= 4 * g + 2 ? 2 * g + 1 : g;
        c->probe_fraction = (double)probe / n_min;
        st = time_fraction_best(s, base, c->probe_fraction, &slab, &c->probe_s);
    }
    if (st == HR_OK && n_min >= 2 * g) st = fit_ranks(s, base, n_min, g, &slab);
    if (st == HR_OK && n_min >= 2 * g) {
        /* the model's best with the CPU's headroom, over whole planes of the smallest slab */
        hr_split_model *safe = malloc((size_t)s->size * sizeof *safe);
        st = agree(s->comm, s->rank, s->size, safe ? HR_OK : HR_ERR_NO_MEMORY);
        double fb = 0.0, tb = HUGE_VAL;
        for (int r = 0; safe && r < s->size; r++)
            safe[r] = hri_split_model_slowed(&s->models[r], HR_AUTO_CPU_HEADROOM);
        for (int a = g; safe && a <= n_min - g; a++) {
            const double t = hr_split_model_ranks_time(safe, s->size, (double)a / n_min, g, c->x_ranks, 0.0);
            if (t < tb) {
                tb = t;
                fb = (double)a / n_min;
            }
        }
        free(safe);
        /* that fraction and two smaller ones, measured through the ranks */
        const double lo_f = (double)g / n_min, hi_f = (double)(n_min - g) / n_min;
        const double want[HR_MPI_HYBRID_CANDIDATES] = {fb, 0.8 * fb, 0.64 * fb};
        for (int k = 0; k < HR_MPI_HYBRID_CANDIDATES && st == HR_OK && fb > 0.0; k++) {
            /* whole planes of the smallest slab */
            double f = round(want[k] * n_min) / n_min;
            f = f < lo_f ? lo_f : f > hi_f ? hi_f : f;
            int dup = 0;
            for (int q = 0; q < c->candidates; q++)
                dup |= fabs(c->cand_fraction[q] - f) < 0.5 / n_min;
            if (dup || isnan(hr_split_model_ranks_time(s->models, s->size, f, g, 0.0, 0.0))) continue;
            const int q = c->candidates;
            st = time_fraction(s, base, f, &slab, &c->cand_s[q]);
            c->cand_fraction[q] = f;
            c->cand_predicted_s[q] = hr_mpi_hybrid_predict(s, f);
            c->candidates++;
        }
        /* a candidate that pays is measured again, fastest first, and taken only if it pays
         * twice (engines of one split differ: the one-process choice, hybrid_kernel.c) */
        int tried[HR_MPI_HYBRID_CANDIDATES] = {0};
        const double pay = (1.0 - HR_AUTO_MARGIN) * c->gpu_only_s;
        for (int round = 0; round < c->candidates && st == HR_OK; round++) {
            int best = -1;
            for (int q = 0; q < c->candidates; q++)
                if (!tried[q] && (best < 0 || c->cand_s[q] < c->cand_s[best])) best = q;
            if (best < 0 || !(c->cand_s[best] < pay)) break;
            tried[best] = 1;
            st = time_fraction(s, base, c->cand_fraction[best], &slab, &c->cand_again_s[best]);
            if (st == HR_OK && c->cand_again_s[best] < pay) {
                c->fraction = c->cand_fraction[best];
                break;
            }
        }
    }
    hri_grid_free(&slab);
    HR_TRY(st);
    c->predicted_s = hr_mpi_hybrid_predict(s, c->fraction);
    c->seconds = hr_now() - t_start;
    MPI_Allreduce(MPI_IN_PLACE, &c->seconds, 1, MPI_DOUBLE, MPI_MAX, s->comm);
    return HR_OK;
}

double hr_mpi_hybrid_predict(const hr_mpi_hybrid *s, double fraction)
{
    if (!s || !s->models) return NAN;
    const int g = s->o.split_ghost > 0 ? s->o.split_ghost : 1;
    return hr_split_model_ranks_time(s->models, s->size, fraction, g, s->choice.x_ranks,
                                     s->choice.gpu_only_s);
}

hr_status hr_mpi_hybrid_get_choice(const hr_mpi_hybrid *s, hr_mpi_hybrid_choice *out)
{
    if (!s || !out || !s->models) return HR_ERR_INVALID_ARG;
    *out = s->choice;
    return HR_OK;
}

static hr_status create_local(hr_mpi_hybrid *s, const hr_options *o)
{
    HR_TRY(hr_options_validate(o, err_text, HR_LAST_ERROR_SIZE));
    if (o->split < 0.0 && o->split != HR_SPLIT_AUTO) {
        snprintf(err_text, HR_LAST_ERROR_SIZE, "split: stream is for one process (give a fraction, or auto)");
        return HR_ERR_INVALID_ARG;
    }
    s->o = *o;
    hri_problem_resolve(o, &s->p);
    int local_size;
    const int local = node_local_rank(s->comm, &local_size);
    hr_split_spec sp;
    hr_options oo = *o;
    if (oo.threads == 0) { /* the CPUs the launcher bound this rank to, else the node's share */
        const int per = hri_cpu_bound() ? hri_cpu_count() : hri_cpu_count() / local_size;
        oo.threads = per > 1 ? per : 1;
    }
    hri_split_spec_from_options(&oo, &s->p, 0, NULL, &sp);
    if (sp.second == HR_SPLIT_GPU && !(o->split >= 1.0)) {
        const int count = hri_cuda_device_count();
        if (count < 1) {
            snprintf(err_text, HR_LAST_ERROR_SIZE, "backend: hybrid needs a CUDA device");
            return HR_ERR_NO_DEVICE;
        }
        sp.device = (o->device + local) % count;
    }
    sp.ranks = s->size;
    sp.rank = s->rank;
    sp.rows_a = 0;
    HR_TRY(hri_transport_mpi_create(s->comm, NULL, &o->tuning, &s->t));
    sp.t = s->t;
    s->fraction = o->split;
    if (o->split == HR_SPLIT_AUTO) {
        HR_TRY(choose_split(s, &oo, &sp));
        s->fraction = s->choice.fraction;
    }
    sp.fraction = s->fraction;
    HR_TRY(hri_split_create(&sp, NULL, NULL, &s->e, err_text, HR_LAST_ERROR_SIZE));
    HR_TRY(make_slab(s));
    const hr_status st = hri_split_load(s->e, &s->u, s->hf.base ? &s->hf : NULL, s->row0);
    if (st != HR_OK) snprintf(err_text, HR_LAST_ERROR_SIZE, "%s", s->e->err);
    hr_hybrid_info *in = &s->info;
    in->rows = s->g_hi - s->g_lo;
    in->rows_cpu =
        s->e->nparts == 2 ? s->e->p[0]->spec.sd.n[s->e->axis] : (s->fraction >= 1.0 ? in->rows : 0);
    in->split = (double)in->rows_cpu / in->rows;
    in->ghost = sp.ghost;
    in->schedule = sp.schedule;
    in->second = sp.second;
    /* the crews as built (nested sizes them to the part's planes unless given) */
    const int cpu_part = s->e->nparts == 2 || s->fraction >= 1.0;
    in->cpu_threads = cpu_part ? s->e->p[0]->spec.threads : 0;
    in->boundary_threads = cpu_part ? s->e->p[0]->spec.boundary_threads : 0;
    in->predicted_s = s->models ? s->choice.predicted_s : NAN;
    in->gpu_only_s = s->models ? s->choice.gpu_only_s : NAN;
    return st;
}

void hr_mpi_hybrid_free(hr_mpi_hybrid *s)
{
    if (!s) return;
    hri_split_free(s->e);
    if (s->t) s->t->ops->destroy(s->t);
    hri_grid_free(&s->u);
    hri_grid_free(&s->hf);
    hri_history_free(&s->hist);
    free(s->models);
    if (s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
    free(s);
}

hr_status hr_mpi_hybrid_create(const hr_options *o, MPI_Comm comm, hr_mpi_hybrid **out)
{
    err_text[0] = '\0';
    if (!out || !o) return HR_ERR_INVALID_ARG;
    *out = NULL;
    hr_mpi_hybrid *s = calloc(1, sizeof *s);
    if (!s) return HR_ERR_NO_MEMORY; /* the others find out at the first collective */
    s->comm = MPI_COMM_NULL;
    if (MPI_Comm_dup(comm, &s->comm) != MPI_SUCCESS) {
        free(s);
        snprintf(err_text, HR_LAST_ERROR_SIZE, "MPI_Comm_dup failed");
        return HR_ERR_IO;
    }
    MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(s->comm, &s->rank);
    MPI_Comm_size(s->comm, &s->size);
    hr_status st = create_local(s, o);
    if (st != HR_OK && !err_text[0]) snprintf(err_text, HR_LAST_ERROR_SIZE, "%s", hr_status_string(st));
    st = agree(s->comm, s->rank, s->size, st);
    if (st != HR_OK) {
        hr_mpi_hybrid_free(s);
        return st;
    }
    *out = s;
    return HR_OK;
}

static hr_status advance(void *ctx, long count, hr_phase_times *t)
{
    hr_mpi_hybrid *s = ctx;
    const double w0 = s->e->st.wait_s;
    hr_status st = hri_split_sweeps(s->e, count);
    if (st != HR_OK) snprintf(err_text, HR_LAST_ERROR_SIZE, "%s", s->e->err);
    t->exchange += s->e->st.wait_s - w0; /* host time blocked on rows not yet there */
    s->done += count;
    return st;
}

static hr_status residual(void *ctx, double *rel)
{
    hr_mpi_hybrid *s = ctx;
    hr_status st = hri_split_residual(s->e, &s->u, rel);
    if (st != HR_OK) snprintf(err_text, HR_LAST_ERROR_SIZE, "%s", s->e->err);
    return st;
}

hr_status hr_mpi_hybrid_run(hr_mpi_hybrid *s, hr_result *res)
{
    err_text[0] = '\0';
    if (!s) return HR_ERR_INVALID_ARG;
    const hr_options *o = &s->o;
    const hr_run_problem *p = &s->p;
    s->hist.len = 0;
    hr_driver_ops ops = {.ctx = s, .advance = advance, .residual = residual};
    /* monitors are not offered per rank: a stop must be agreed (hr_mpi_solver does) */
    hr_driver_cfg cfg = {.max_iters = o->iters,
                         .tol = o->tol,
                         .check_every = o->check_every,
                         .divref = o->divtol > 0 ? o->divtol : 1e3,
                         .first = s->done};
    hr_phase_times t = {0, 0, 0, 0};
    hr_driver_out dout;
    hr_status st = hri_drive(&ops, &cfg, o->keep_history ? &s->hist : NULL, &t, &dout);
    hr_result r;
    memset(&r, 0, sizeof r);
    if (st == HR_OK) st = residual(s, &r.relative_residual);
    st = agree(s->comm, s->rank, s->size, st);
    if (st != HR_OK) return st;
    /* the slowest process's times; its sweeps as one sum (a sum of two maxima from
     * different processes would overstate them) */
    double tm[5] = {t.total, t.compute, t.exchange, t.residual, t.compute + t.exchange};
    MPI_Allreduce(MPI_IN_PLACE, tm, 5, MPI_DOUBLE, MPI_MAX, s->comm);
    r.dim = p->dim;
    r.nx = p->nx;
    r.ny = p->ny;
    r.nz = p->nz;
    r.iterations = dout.done;
    r.global_syncs = r.iterations;
    r.time_s = tm[0];
    r.time_compute_s = tm[1];
    r.time_exchange_s = tm[2];
    r.time_residual_s = tm[3];
    r.time_sweeps_s = tm[4];
    r.time_per_sweep_s = r.iterations > 0 ? r.time_sweeps_s / (double)r.iterations : 0.0;
    r.reason =
        hri_driver_final_reason(dout.reason, r.relative_residual, o->tol, o->divtol > 0 ? o->divtol : 1e3);
    r.max_error = NAN;
    const double pts = (double)p->nx * p->ny * p->nz * (double)r.iterations, es = hr_prec_bytes(o->precision);
    r.bytes_per_point = 2.0 * es + (s->hf.base ? es : 0.0);
    r.flops_per_point = (p->dim == 3 ? 8.0 : 5.0) + (p->omega != 1.0 ? 3.0 : 0.0);
    r.gflops = r.time_sweeps_s > 0 ? r.flops_per_point * pts / r.time_sweeps_s * 1e-9 : 0.0;
    r.gbps = r.time_sweeps_s > 0 ? r.bytes_per_point * pts / r.time_sweeps_s * 1e-9 : 0.0;
    r.reference_gbps = o->reference_gbps;
    r.bandwidth_fraction = o->reference_gbps > 0 ? r.gbps / o->reference_gbps : NAN;
    snprintf(r.backend, sizeof r.backend, "hybrid");
    snprintf(r.kernel, sizeof r.kernel, "split");
    snprintf(r.device_name, sizeof r.device_name, "%d MPI ranks, %.3g %% of each slab on the CPU (%s%s)",
             s->size, 100.0 * s->fraction, o->split_schedule == HR_SPLIT_NAIVE ? "naive" : "nested",
             s->models ? ", auto" : "");
    if (res) *res = r;
    return r.reason == HR_REASON_DIVERGED || r.reason == HR_REASON_NAN ? HR_ERR_DIVERGED : HR_OK;
}

hr_status hr_mpi_hybrid_time(hr_mpi_hybrid *s, long sweeps, double *per_sweep)
{
    err_text[0] = '\0';
    if (!s || sweeps < 1 || !per_sweep) return HR_ERR_INVALID_ARG;
    s->done += sweeps;
    return block_ranks(s, s->e, sweeps, per_sweep);
}

hr_status hr_mpi_hybrid_gather_solution(hr_mpi_hybrid *s, hr_precision prec, void *dst, size_t count,
                                        int root)
{
    err_text[0] = '\0';
    if (!s || root < 0 || root >= s->size || !hr_prec_is_storage(prec)) return HR_ERR_INVALID_ARG;
    const hr_run_problem *p = &s->p;
    const int axis = s->e->axis;
    const size_t ues = hr_prec_bytes(prec);
    const size_t slice = axis == 2 ? (size_t)p->nx * p->ny : (size_t)p->nx; /* points per row/plane */
    const size_t mine = (size_t)(s->g_hi - s->g_lo) * slice;
    hr_status st = hri_split_download(s->e, &s->u);
    if (st != HR_OK) snprintf(err_text, HR_LAST_ERROR_SIZE, "%s", s->e->err);
    char *block = malloc(mine * ues + 1);
    if (!block) st = HR_ERR_NO_MEMORY;
    if (s->rank == root && (!dst || count < (size_t)p->nx * p->ny * p->nz)) st = HR_ERR_INVALID_ARG;
    st = agree(s->comm, s->rank, s->size, st);
    if (st != HR_OK) {
        free(block);
        return st;
    }
    /* own rows, interior points only, x fastest */
    size_t at = 0;
    for (int g = s->g_lo; g < s->g_hi; g++) {
        const int r = g - s->row0;
        const int k0 = axis == 2 ? r : 0, k1 = axis == 2 ? r + 1 : 1, i0 = axis == 2 ? 1 : r,
                  i1 = axis == 2 ? p->ny + 1 : r + 1;
        for (int k = k0; k < k1; k++)
            for (int i = i0; i < i1; i++)
                for (int j = 1; j <= p->nx; j++, at++) {
                    const double v = hri_grid_get3(&s->u, i, j, k);
                    if (ues == 8)
                        ((double *)block)[at] = v;
                    else
                        ((float *)block)[at] = (float)v;
                }
    }
    /* counted in rows (planes) so that a 2 GiB slab still fits an int count */
    int *counts = NULL, *displs = NULL;
    int my_rows = s->g_hi - s->g_lo, first_row = s->g_lo - 1;
    if (s->rank == root) {
        counts = malloc(sizeof(int) * (size_t)s->size);
        displs = malloc(sizeof(int) * (size_t)s->size);
    }
    MPI_Datatype row_t;
    MPI_Type_contiguous((int)(slice * ues), MPI_BYTE, &row_t);
    MPI_Type_commit(&row_t);
    MPI_Gather(&my_rows, 1, MPI_INT, counts, 1, MPI_INT, root, s->comm);
    MPI_Gather(&first_row, 1, MPI_INT, displs, 1, MPI_INT, root, s->comm);
    const int e = MPI_Gatherv(block, my_rows, row_t, dst, counts, displs, row_t, root, s->comm);
    MPI_Type_free(&row_t);
    free(counts);
    free(displs);
    free(block);
    return agree(s->comm, s->rank, s->size, e == MPI_SUCCESS ? HR_OK : HR_ERR_IO);
}

hr_status hr_mpi_hybrid_info(const hr_mpi_hybrid *s, hr_hybrid_info *out)
{
    if (!s || !out) return HR_ERR_INVALID_ARG;
    *out = s->info;
    out->sweeps = s->e->st.sweeps;
    out->exchanges = s->e->st.exchanges;
    out->wait_s = s->e->st.wait_s;
    return HR_OK;
}
