/*
 * The general-problem engine on several GPUs of one process (`--gpus N`, options.gpus > 1):
 * one slab of the last axis per GPU, each driven by a thread of its own, as MPI ranks run it
 * (general_mpi.c) with the ranks' hooks (hr_st_comm) answered in shared memory: the threads
 * publish a pointer or a value, meet at a barrier, read each other's, and meet again. The
 * sums are the ranks' lines in rank order, so every slab count computes the one-process run's
 * values. GPU slabs, one per device, move their halo rows and gathered levels device to device
 * by NCCL (a communicator of one rank per thread, as GPU ranks use); without NCCL, or with
 * slabs sharing a device, through pinned host rows (stencil_cuda.cu).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grid_solver_internal.h"
#include "methods/stencil/stencil_kernels.h"
#include "core/driver.h"
#include "parallel/threads/general_parts.h"
#include "runtime/cpu/team.h"
#include "runtime/cuda/cuda_api.h"
#include "parallel/transport/cuda/transport_nccl.h"

typedef struct gp_state gp_state;

/* hr_grid_info.transport's values (hr_mpi_transport of hetrelax/mpi.h, which needs <mpi.h>) */
enum { TRANSPORT_HOST = 1, TRANSPORT_NCCL = 3 };

typedef struct gp_rank {
    hr_st_comm hooks;
    gp_state *g;
    int rank, below, above; /* neighbours along the cut axis (-1 at a face) */
    hr_grid_solver sub;     /* the parent's copy with this slab's engine, device and message */
    hr_status status;       /* of the last call */
    hr_result res;
    hr_nccl_rows *nccl;     /* this slab's rank of the NCCL communicator (NULL: host rows) */
} gp_rank;

enum { OP_CREATE, OP_SOLVE, OP_SOLUTION, OP_RELEASE };

struct gp_state {
    int P;
    pthread_barrier_t bar;
    pthread_mutex_t mu; /* the start gate: go 1 runs the call, -1 (a thread not started) not */
    pthread_cond_t cv;
    int go;
    int *cut;             /* P + 1 bounds of the slabs along the cut axis */
    const void **ptr;     /* per rank: a published pointer */
    double *val;          /* per rank: a published value */
    int *ival, *n;        /* per rank: a published flag; the slab's rows */
    size_t *len;          /* per rank: a published length */
    gp_rank *r;
    hr_grid_solver *parent;
    int use_nccl; /* GPU slabs on devices of their own, NCCL built: try a communicator */
    unsigned char nccl_id[HR_NCCL_ID_BYTES];
    /* the call the threads make */
    int op;
    const hr_problem *p;
    const double *rhs, *x0;
    hr_precision prec;
    void *dst;
    size_t dcount;
};

static void meet(gp_state *g)
{
    pthread_barrier_wait(&g->bar);
}

/* ------------------------------------------------------------------ the ranks' hooks */

static void halo(void *ctx, const hr_sgrid *gr, double *x)
{
    gp_rank *me = ctx;
    gp_state *g = me->g;
    const int last = gr->dim - 1, n = gr->n[last];
    const size_t row = (size_t)gr->st[last];
    g->ptr[me->rank] = x;
    g->n[me->rank] = n;
    meet(g);
    if (me->below >= 0) /* the slab below: its top row into our ghost row below */
        memcpy(x, (const double *)g->ptr[me->below] + (size_t)g->n[me->below] * row, row * sizeof *x);
    if (me->above >= 0) /* the slab above: its first row into our ghost row above */
        memcpy(x + (size_t)(n + 1) * row, (const double *)g->ptr[me->above] + row, row * sizeof *x);
    meet(g);
}

static double sum(void *ctx, const double *part, size_t lines)
{
    gp_rank *me = ctx;
    gp_state *g = me->g;
    g->ptr[me->rank] = part;
    g->len[me->rank] = lines;
    meet(g);
    double s = 0.0;
    for (int r = 0; r < g->P; r++) { /* every rank's lines, in the whole grid's order */
        const double *q = g->ptr[r];
        for (size_t l = 0; l < g->len[r]; l++)
            s += q[l];
    }
    meet(g);
    return s;
}

static double sum_ranks(void *ctx, double v)
{
    gp_rank *me = ctx;
    gp_state *g = me->g;
    g->val[me->rank] = v;
    meet(g);
    double s = 0.0;
    for (int r = 0; r < g->P; r++)
        s += g->val[r];
    meet(g);
    return s;
}

static hr_status gather(void *ctx, const double *slab, size_t slab_count, double *dst, size_t count)
{
    gp_rank *me = ctx;
    gp_state *g = me->g;
    g->ival[me->rank] = (me->rank != 0 || (dst && count >= me->hooks.count)) && (slab || slab_count == 0);
    g->ptr[me->rank] = slab;
    g->len[me->rank] = slab_count;
    meet(g);
    int ok = 1;
    for (int r = 0; r < g->P; r++)
        ok &= g->ival[r];
    if (ok && me->rank == 0) {
        size_t at = 0;
        for (int r = 0; r < g->P; r++) {
            if (g->len[r]) memcpy(dst + at, g->ptr[r], g->len[r] * sizeof *dst);
            at += g->len[r];
        }
    }
    meet(g);
    return ok ? HR_OK : HR_ERR_INVALID_ARG;
}

static void edge_rows(void *ctx, const hr_sgrid *gr, const double *x, int up, double *below, int down,
                      double *above)
{
    gp_rank *me = ctx;
    gp_state *g = me->g;
    const int last = gr->dim - 1;
    const size_t row = (size_t)gr->st[last];
    g->ptr[me->rank] = x;
    g->n[me->rank] = gr->n[last];
    meet(g);
    if (me->below >= 0) /* the lower neighbour's top `up` rows */
        memcpy(below, (const double *)g->ptr[me->below] + (size_t)(g->n[me->below] - up + 1) * row,
               (size_t)up * row * sizeof *below);
    if (me->above >= 0) /* the upper neighbour's first `down` rows */
        memcpy(above, (const double *)g->ptr[me->above] + row, (size_t)down * row * sizeof *above);
    meet(g);
}

static void allgather(void *ctx, double *buf, const int *counts, const int *displs)
{
    gp_rank *me = ctx;
    gp_state *g = me->g;
    g->ptr[me->rank] = buf;
    meet(g);
    for (int r = 0; r < g->P; r++)
        if (r != me->rank && counts[r] > 0)
            memcpy(buf + displs[r], (const double *)g->ptr[r] + displs[r], (size_t)counts[r] * sizeof *buf);
    meet(g);
}

static int all(void *ctx, int v)
{
    gp_rank *me = ctx;
    gp_state *g = me->g;
    g->ival[me->rank] = v != 0;
    meet(g);
    int a = 1;
    for (int r = 0; r < g->P; r++)
        a &= g->ival[r];
    meet(g);
    return a;
}

static void bcast(void *ctx, double *v, int n)
{
    gp_rank *me = ctx;
    gp_state *g = me->g;
    g->ptr[me->rank] = v;
    meet(g);
    if (me->rank != 0 && n > 0) memcpy(v, g->ptr[0], (size_t)n * sizeof *v);
    meet(g);
}

/* The caller's monitor, called by the first slab's thread; its answer (stop or not) reaches
 * every thread at the same iteration. */
static int monitor(long iteration, double rel, void *user)
{
    gp_rank *me = user;
    gp_state *g = me->g;
    if (me->rank == 0) g->ival[0] = g->parent->o.monitor(iteration, rel, g->parent->o.monitor_user) != 0;
    meet(g);
    const int stop = g->ival[0];
    meet(g);
    return stop;
}

/* ------------------------------------------------------------------ the threads */

static void run_one(gp_rank *me)
{
    gp_state *g = me->g;
    const hr_gs_ops *ops = hri_gs_general_ops();
    switch (g->op) {
    case OP_CREATE: {
        const hr_problem *p = g->p;
        if (g->use_nccl) { /* every slab joins, or every slab stages through the host */
            char err[200];
            const int ok = hri_nccl_rows_create(g->P, me->rank, me->sub.o.device, g->nccl_id, &me->nccl, err,
                                                sizeof err) == HR_OK;
            if (!all(me, ok)) {
                hri_nccl_rows_free(me->nccl);
                me->nccl = NULL;
            }
            me->hooks.nccl = me->nccl;
        }
        me->status = hri_gs_general_create_slab(&me->sub, p, g->cut[me->rank], g->cut[me->rank + 1], &me->hooks);
        break;
    }
    case OP_SOLVE: me->status = ops->solve(&me->sub, g->rhs, g->x0, &me->res); break;
    case OP_SOLUTION:
        me->status = ops->solution(&me->sub, g->prec, me->rank == 0 ? g->dst : NULL, me->rank == 0 ? g->dcount : 0);
        break;
    default:
        ops->release(&me->sub);
        hri_nccl_rows_free(me->nccl);
        me->nccl = NULL;
        me->status = HR_OK;
        break;
    }
}

static void *thread_main(void *arg)
{
    gp_rank *me = arg;
    gp_state *g = me->g;
    pthread_mutex_lock(&g->mu);
    while (g->go == 0)
        pthread_cond_wait(&g->cv, &g->mu);
    const int run = g->go == 1;
    pthread_mutex_unlock(&g->mu);
    if (run) run_one(me);
    return NULL;
}

static void open_gate(gp_state *g, int go)
{
    pthread_mutex_lock(&g->mu);
    g->go = go;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Every slab's thread makes the call (the first in the caller's thread), once all of them
 * exist (the calls meet at barriers); the first failing slab's status and message are the
 * handle's. */
static hr_status run_all(gp_state *g, int op)
{
    g->op = op;
    g->go = 0;
    pthread_t *t = calloc((size_t)g->P, sizeof *t);
    if (!t) return HR_ERR_NO_MEMORY;
    int started = 1;
    for (int r = 1; r < g->P; r++) {
        if (pthread_create(&t[r], NULL, thread_main, &g->r[r]) != 0) break;
        started++;
    }
    if (started < g->P) { /* no call at all: the threads that exist leave */
        open_gate(g, -1);
        for (int r = 1; r < started; r++)
            pthread_join(t[r], NULL);
        free(t);
        snprintf(g->parent->err, sizeof g->parent->err, "gpus: could not start a thread per GPU");
        return HR_ERR_NO_MEMORY;
    }
    open_gate(g, 1);
    run_one(&g->r[0]);
    for (int r = 1; r < g->P; r++)
        pthread_join(t[r], NULL);
    free(t);
    hr_status st = HR_OK;
    for (int r = 0; r < g->P && st == HR_OK; r++)
        if ((st = g->r[r].status) != HR_OK && g->r[r].sub.err[0])
            snprintf(g->parent->err, sizeof g->parent->err, "%s", g->r[r].sub.err);
    return st;
}

static void state_free(gp_state *g)
{
    if (!g) return;
    pthread_barrier_destroy(&g->bar);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    for (int r = 0; r < g->P; r++)
        hri_history_free(&g->r[r].sub.hist);
    free(g->cut), free(g->ptr), free(g->val), free(g->ival), free(g->n), free(g->len), free(g->r);
    free(g);
}

/* ------------------------------------------------------------------ the handle's operations */

static hr_status parts_solve(hr_grid_solver *s, const double *rhs, const double *x0, hr_result *res)
{
    gp_state *g = s->engine;
    g->rhs = rhs, g->x0 = x0;
    const hr_status st = run_all(g, OP_SOLVE);
    if (res) *res = g->r[0].res; /* every slab's values are the same (the sums in one order) */
    return st;
}

static hr_status parts_solution(const hr_grid_solver *s, hr_precision prec, void *dst, size_t count)
{
    gp_state *g = s->engine; /* (dst and count checked by hr_grid_solver_solution) */
    g->prec = prec, g->dst = dst, g->dcount = count;
    return run_all(g, OP_SOLUTION);
}

static size_t parts_history(const hr_grid_solver *s, const long **iters, const double **res)
{
    const gp_state *g = s->engine;
    return hri_gs_general_ops()->history(&g->r[0].sub, iters, res);
}

static void parts_request_stop(hr_grid_solver *s)
{
    (void)s; /* not answered yet: every slab must stop at the same iteration */
}

static void parts_release(hr_grid_solver *s)
{
    gp_state *g = s->engine;
    if (!g) return;
    run_all(g, OP_RELEASE);
    state_free(g);
    s->engine = NULL;
}

static const hr_gs_ops parts_ops = {"general-gpus", parts_solve,        parts_solution,
                                    parts_history,  parts_request_stop, parts_release, NULL};

hr_status hri_gs_general_create_parts(hr_grid_solver *s, const hr_problem *p, int parts)
{
    const int last = p->dim - 1, N = p->n[last];
    if (parts < 2 || N < parts) {
        hri_gs_set_error(s, "gpus: %d slabs need at least %d unknowns along %s (got %d)", parts, parts,
                        last == 2 ? "z" : "y", N);
        return HR_ERR_INVALID_ARG;
    }
    gp_state *g = calloc(1, sizeof *g);
    if (!g) return HR_ERR_NO_MEMORY;
    g->P = parts;
    g->parent = s;
    g->p = p;
    g->cut = malloc((parts + 1) * sizeof *g->cut);
    g->ptr = calloc(parts, sizeof *g->ptr), g->val = calloc(parts, sizeof *g->val);
    g->ival = calloc(parts, sizeof *g->ival), g->n = calloc(parts, sizeof *g->n);
    g->len = calloc(parts, sizeof *g->len), g->r = calloc(parts, sizeof *g->r);
    if (!g->cut || !g->ptr || !g->val || !g->ival || !g->n || !g->len || !g->r ||
        pthread_barrier_init(&g->bar, NULL, (unsigned)parts) != 0) {
        free(g->cut), free(g->ptr), free(g->val), free(g->ival), free(g->n), free(g->len), free(g->r), free(g);
        hri_gs_set_error(s, "gpus: no memory for %d slabs", parts);
        return HR_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    for (int r = 0; r <= parts; r++)
        g->cut[r] = (int)((long)N * r / parts);
    const int periodic = p->bc[2 * last].kind == HR_BC_PERIODIC;
    /* the host threads of each slab's set-up (and of cpu-threads slabs): the cores shared */
    const int threads = s->o.threads > 0 ? s->o.threads : hri_cpu_count() / parts > 1 ? hri_cpu_count() / parts : 1;
    for (int r = 0; r < parts; r++) {
        gp_rank *me = &g->r[r];
        me->g = g;
        me->rank = r;
        me->below = r > 0 ? r - 1 : periodic ? parts - 1 : -1;
        me->above = r < parts - 1 ? r + 1 : periodic ? 0 : -1;
        hr_st_comm *h = &me->hooks;
        h->ctx = me;
        h->count = s->count;
        h->rank = r, h->size = parts, h->cut = g->cut;
        h->halo = halo, h->sum = sum, h->sum_ranks = sum_ranks, h->gather = gather;
        h->edge_rows = edge_rows, h->allgather = allgather, h->all = all, h->bcast = bcast;
        h->nccl = NULL; /* set at create when the slabs' NCCL communicator is made */
        h->below = me->below, h->above = me->above;
        me->sub = *s;
        me->sub.engine = NULL;
        me->sub.o.gpus = 1;
        me->sub.o.threads = threads;
        /* GPU r after the first (create checks that they exist; the tests' calls may have
         * fewer, and then slabs share them) */
        if (s->backend == HR_BACKEND_GPU) {
            const int count = hri_cuda_device_count();
            me->sub.o.device = count > 0 ? (s->o.device + r) % count : s->o.device;
        }
        if (s->o.monitor) me->sub.o.monitor = monitor, me->sub.o.monitor_user = me;
        me->sub.err[0] = '\0';
    }
    if (s->backend == HR_BACKEND_GPU && hri_nccl_available() && hri_cuda_device_count() >= parts) {
        char err[200];
        g->use_nccl = hri_nccl_unique_id(g->nccl_id, err, sizeof err) == HR_OK;
    }
    s->engine = g;
    const hr_status st = run_all(g, OP_CREATE);
    if (st != HR_OK) {
        for (int r = 0; r < parts; r++) {
            hri_gs_general_ops()->release(&g->r[r].sub);
            hri_nccl_rows_free(g->r[r].nccl);
        }
        state_free(g);
        s->engine = NULL;
        return st;
    }
    s->ops = &parts_ops;
    s->info = g->r[0].sub.info;
    snprintf(s->info.engine, sizeof s->info.engine, "%s", parts_ops.engine);
    s->info.gpus = s->backend == HR_BACKEND_GPU ? parts : 0;
    if (s->backend == HR_BACKEND_GPU) s->info.transport = g->r[0].nccl ? TRANSPORT_NCCL : TRANSPORT_HOST;
    return HR_OK;
}
