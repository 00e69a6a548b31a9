/*
 * The structured-grid handle on MPI ranks (hr_grid_solver_create_mpi, include/hetrelax/mpi.h):
 * the facade of src/core/grid_solver.c over the decomposed solver (hr_mpi_solver: a subdomain
 * per rank, swept on its CPU or its GPU) and the split per rank (hr_mpi_hybrid: CPU + GPU).
 * Every call is collective and returns the same status on every rank, with the first failing
 * rank's message: a refusal on one rank (different options, say) never leaves the others
 * waiting in a collective.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/grid_solver_internal.h"
#include "core/precision.h"
#include "hetrelax/mpi.h"
#include "hetrelax/mpi_hybrid.h"
#include "parallel/mpi/general_mpi.h"

typedef struct mpi_state {
    MPI_Comm comm; /* our duplicate, for the handle's own agreements */
    int rank, size;
    int hybrid;    /* the engine is an hr_mpi_hybrid, else an hr_mpi_solver */
    void *general; /* a general problem: the general engine's slab state (general_mpi.c) */
} mpi_state;

static mpi_state *state(const hr_grid_solver *s)
{
    return s->mpi;
}

/* The first failing rank's status and message on every rank. */
static hr_status agree(MPI_Comm comm, hr_status st, char *msg, size_t msize)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int first = st != HR_OK ? rank : size;
    if (MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
        snprintf(msg, msize, "MPI_Allreduce failed");
        return HR_ERR_IO;
    }
    if (first == size) return HR_OK;
    int code = (int)st;
    MPI_Bcast(&code, 1, MPI_INT, first, comm);
    MPI_Bcast(msg, (int)msize, MPI_CHAR, first, comm);
    msg[msize - 1] = '\0';
    return (hr_status)code;
}

static void release_engine(hr_grid_solver *s)
{
    if (s->general) {
        hri_gs_general_ops()->release(s);
        hri_general_mpi_free(state(s)->general);
        state(s)->general = NULL;
        return;
    }
    if (state(s)->hybrid)
        hr_mpi_hybrid_free(s->engine);
    else
        hr_mpi_solver_free(s->engine);
    s->engine = NULL;
}

/* Sets the engine up (again, collectively) with f = rhs (scaled; NULL: the problem's) and the
 * initial guess x0 (NULL: the problem's): the MPI engines restart only by a new set-up. */
static hr_status setup(hr_grid_solver *s, const double *rhs, const double *x0)
{
    mpi_state *m = state(s);
    release_engine(s);
    hr_options eo;
    hri_gs_relax_options(s, rhs, x0, &eo);
    eo.gpus = 0;
    hr_status st;
    if (m->hybrid) {
        hr_mpi_hybrid *h = NULL;
        st = hr_mpi_hybrid_create(&eo, m->comm, &h);
        if (st != HR_OK) hri_gs_set_error(s, "%s", hr_mpi_hybrid_last_error());
        s->engine = h;
    } else {
        hr_mpi_solver *e = NULL;
        const int *decomp = s->o.decomp[0] || s->o.decomp[1] || s->o.decomp[2] ? s->o.decomp : NULL;
        st = hr_mpi_solver_create_transport(&eo, decomp, s->o.ghost > 0 ? s->o.ghost : 1,
                                            (hr_mpi_transport)s->o.transport, m->comm, &e);
        if (st != HR_OK) hri_gs_set_error(s, "%s", hr_mpi_last_error());
        s->engine = e;
    }
    if (st != HR_OK) return st;
    s->eng_has_rhs = rhs != NULL;
    s->fresh = x0 == NULL;
    return HR_OK;
}

static hr_status mpi_solve(hr_grid_solver *s, const double *rhs, const double *x0, hr_result *res)
{
    mpi_state *m = state(s);
    /* what every rank passed must agree, or the ranks would set up different engines */
    int given[4] = {rhs != NULL, x0 != NULL, -(rhs != NULL), -(x0 != NULL)};
    MPI_Allreduce(MPI_IN_PLACE, given, 4, MPI_INT, MPI_MAX, m->comm);
    hr_status st = HR_OK;
    if (given[0] != -given[2] || given[1] != -given[3]) {
        hri_gs_set_error(s, "%s: given on some ranks only (every rank passes the whole array, or NULL)",
                        given[0] != -given[2] ? "rhs" : "x0");
        return HR_ERR_INVALID_ARG;
    }
    int same = rhs ? hri_gs_same_rhs(s, rhs) : !s->eng_has_rhs;
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, m->comm);
    if (rhs && !same) st = hri_gs_take_rhs(s, rhs);
    st = agree(m->comm, st, s->err, sizeof s->err);
    if (st != HR_OK) {
        s->fresh = 0; /* eng_rhs may hold the refused f now: the next solve sets up again */
        return st;
    }
    if (!s->engine || !same || x0 || !s->fresh) {
        st = setup(s, rhs ? s->eng_rhs : NULL, x0);
        if (st != HR_OK) return st; /* the engines agree on their create */
    }
    hr_result r;
    memset(&r, 0, sizeof r);
    if (m->hybrid) {
        st = hr_mpi_hybrid_run(s->engine, &r);
        if (st != HR_OK && st != HR_ERR_DIVERGED) hri_gs_set_error(s, "%s", hr_mpi_hybrid_last_error());
    } else {
        st = hr_mpi_solver_run(s->engine, &r);
        if (st != HR_OK && st != HR_ERR_DIVERGED) hri_gs_set_error(s, "%s", hr_mpi_last_error());
    }
    s->fresh = 0;
    if (st != HR_OK && st != HR_ERR_DIVERGED) return st;
    hri_gs_finish_result(s, &r);
    if (res) *res = r;
    return st;
}

/* Collective: rank 0 receives the whole solution (dst and count matter there only). */
static hr_status mpi_solution(const hr_grid_solver *s, hr_precision prec, void *dst, size_t count)
{
    const mpi_state *m = state(s);
    hr_grid_solver *w = (hr_grid_solver *)s; /* the message is the handle's own state */
    hr_status st = HR_OK;
    if (!hr_prec_is_storage(prec)) {
        hri_gs_set_error(w, "prec: %d is no storage precision (default, single, double)", (int)prec);
        st = HR_ERR_INVALID_ARG;
    } else if (!s->engine) {
        hri_gs_set_error(w, "solution: no engine (its last set-up failed)");
        st = HR_ERR_INVALID_ARG;
    }
    st = agree(m->comm, st, w->err, sizeof w->err);
    if (st != HR_OK) return st;
    st = m->hybrid ? hr_mpi_hybrid_gather_solution(s->engine, prec, dst, count, 0)
                   : hr_mpi_solver_gather_solution(s->engine, prec, dst, count, 0);
    if (st != HR_OK)
        hri_gs_set_error(w, "solution: %s on rank 0 (dst, and count >= %zu there)", hr_status_string(st),
                        s->count);
    return st;
}

static size_t mpi_history(const hr_grid_solver *s, const long **iters, const double **res)
{
    (void)s;
    *iters = NULL;
    *res = NULL;
    return 0; /* refused at create (keep_history) */
}

static void mpi_request_stop(hr_grid_solver *s)
{
    (void)s; /* not answered on ranks yet (a stop must reach every rank at the same sweep) */
}

static void mpi_release(hr_grid_solver *s)
{
    mpi_state *m = state(s);
    if (!m) return;
    release_engine(s);
    MPI_Comm_free(&m->comm);
    free(m);
    s->mpi = NULL;
}

/* General problems: the general engine's own calls, which are collective on a slab per rank. */
static hr_status general_solve(hr_grid_solver *s, const double *rhs, const double *x0, hr_result *res)
{
    hr_status st = hri_gs_general_ops()->solve(s, rhs, x0, res);
    st = agree(state(s)->comm, st, s->err, sizeof s->err);
    if (res) res->ranks = state(s)->size;
    return st;
}

static hr_status general_solution(const hr_grid_solver *s, hr_precision prec, void *dst, size_t count)
{
    hr_grid_solver *w = (hr_grid_solver *)s;
    hr_status st = hr_prec_is_storage(prec) ? HR_OK : HR_ERR_INVALID_ARG;
    if (st != HR_OK)
        hri_gs_set_error(w, "prec: %d is no storage precision (default, single, double)", (int)prec);
    st = agree(state(s)->comm, st, w->err, sizeof w->err);
    if (st != HR_OK) return st;
    st = hri_gs_general_ops()->solution(s, prec, dst, count);
    if (st != HR_OK)
        hri_gs_set_error(w, "solution: %s on rank 0 (dst, and count >= %zu there)", hr_status_string(st),
                        s->count);
    return st;
}

static size_t general_history(const hr_grid_solver *s, const long **iters, const double **res)
{
    return hri_gs_general_ops()->history(s, iters, res);
}

static void mpi_release(hr_grid_solver *s);

static const hr_gs_ops mpi_general_ops = {"mpi-general",   general_solve,    general_solution,
                                          general_history, mpi_request_stop, mpi_release, NULL};

static const hr_gs_ops mpi_solver_ops = {"mpi-solver", mpi_solve,        mpi_solution,
                                         mpi_history,  mpi_request_stop, mpi_release, NULL};
static const hr_gs_ops mpi_hybrid_ops = {"mpi-hybrid", mpi_solve,        mpi_solution,
                                         mpi_history,  mpi_request_stop, mpi_release, NULL};

hr_status hr_grid_solver_create_mpi(const hr_problem *p, const hr_grid_options *o, MPI_Comm comm,
                                    hr_grid_solver **out)
{
    hri_set_last_error("%s", "");
    if (out) *out = NULL;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited || comm == MPI_COMM_NULL) { /* no collective can tell the others */
        hri_set_last_error("comm: %s", inited ? "MPI_COMM_NULL" : "MPI is not initialised");
        return HR_ERR_INVALID_ARG;
    }
    char why[HR_LAST_ERROR_SIZE] = "";
    hr_grid_solver *s = NULL;
    hr_status st = HR_ERR_INVALID_ARG;
    if (!out) /* still agreed below: the other ranks must not wait for this one */
        snprintf(why, sizeof why, "out: NULL (no place for the handle)");
    else
        st = hri_gs_prepare(p, o, 1, &s, why, sizeof why);
    /* keep_history: the decomposed engines keep none yet */
    if (st == HR_OK && o->keep_history) {
        st = HR_ERR_UNSUPPORTED;
        snprintf(why, sizeof why, "keep_history: MPI ranks keep no history so far");
    }
    mpi_state *m = st == HR_OK ? calloc(1, sizeof *m) : NULL;
    if (st == HR_OK && !m) {
        st = HR_ERR_NO_MEMORY;
        snprintf(why, sizeof why, "comm: no memory for the handle");
    }
    st = agree(comm, st, why, sizeof why);
    if (st == HR_OK && MPI_Comm_dup(comm, &m->comm) != MPI_SUCCESS) {
        st = HR_ERR_IO;
        snprintf(why, sizeof why, "comm: MPI_Comm_dup failed");
    }
    if (st != HR_OK) {
        free(m);
        hri_gs_free(s);
        hri_set_last_error("%s", why);
        return st;
    }
    if (o->backend == HR_BACKEND_AUTO) {
        /* auto chose by this rank's GPUs: every rank runs the same backend, cpu-seq unless
         * every rank has a GPU */
        int gpu = s->backend == HR_BACKEND_GPU;
        MPI_Allreduce(MPI_IN_PLACE, &gpu, 1, MPI_INT, MPI_MIN, m->comm);
        if (!gpu) {
            s->backend = s->info.backend = HR_BACKEND_CPU_SEQ;
            s->info.flush_subnormals = o->flush_subnormals; /* as hri_gs_prepare sets it for cpu-seq */
        }
    }
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    m->hybrid = s->backend == HR_BACKEND_HYBRID;
    s->mpi = m;
    s->ops = m->hybrid ? &mpi_hybrid_ops : &mpi_solver_ops;
    s->info.ranks = m->size;
    if (s->general) { /* the general engine on a slab per rank */
        st = hri_general_mpi_create(s, p, m->comm, &m->general, why, sizeof why);
        st = agree(m->comm, st, why, sizeof why);
        if (st != HR_OK) {
            hri_set_last_error("%s", why);
            mpi_release(s);
            hri_gs_free(s);
            return st;
        }
        s->ops = &mpi_general_ops;
        snprintf(s->info.engine, sizeof s->info.engine, "%s", s->ops->engine);
        s->info.ranks = m->size;
        s->fresh = 1;
        *out = s;
        return HR_OK;
    }
    st = setup(s, NULL, NULL);
    if (st != HR_OK) {
        hri_set_last_error("%s", s->err);
        mpi_release(s);
        hri_gs_free(s);
        return st;
    }
    snprintf(s->info.engine, sizeof s->info.engine, "%s", s->ops->engine);
    if (m->hybrid) {
        hr_hybrid_info hi;
        hr_mpi_hybrid_info(s->engine, &hi);
        snprintf(s->info.kernel, sizeof s->info.kernel, "split");
        s->info.threads = hi.cpu_threads;
        s->info.gpus = 1;
    } else {
        const int gpu = s->backend == HR_BACKEND_GPU;
        snprintf(s->info.kernel, sizeof s->info.kernel, "%s", gpu ? "tuned" : "seq");
        s->info.threads = gpu ? 0 : 1;
        s->info.gpus = gpu;
    }
    s->info.omega = s->o.omega > 0.0 ? s->o.omega : 1.0;
    s->fresh = 1;
    *out = s;
    return HR_OK;
}
