/*
 * General problems (hetrelax/problem.h) on MPI ranks: the general-problem engine
 * (src/methods/stencil/) on a slab of the last axis per rank, its kernels given the ranks'
 * halo rows, their sums in the whole grid's line order and the gather of the solution
 * (hr_st_comm), so that every rank count gives the one-process run's bits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grid_solver_internal.h"
#include "hetrelax/mpi.h"
#include "methods/stencil/stencil_kernels.h"
#include "parallel/mpi/general_mpi.h"
#include "parallel/transport/cuda/transport_nccl.h"
#include "runtime/cpu/team.h"
#include "runtime/cuda/cuda_api.h"

#define GATHER_PIECE ((size_t)1 << 27) /* values a message of the solution's gather */

typedef struct slab_comm {
    hr_st_comm hooks;
    MPI_Comm comm;
    int rank, size;
    int below, above;         /* neighbour ranks along the cut axis (MPI_PROC_NULL at a face) */
    int *lines, *line_displs; /* per rank: its lines and their first (the partial sums) */
    size_t *counts, *displs;  /* per rank: its unknowns and their first (the gather) */
    int *cut;                 /* size + 1: the slabs' bounds along the cut axis */
    double *all;              /* every rank's partials */
    size_t lines_total;
    hr_nccl_rows *nccl; /* GPU ranks, one per device: the halos device to device */
    int node_ranks;     /* ranks on this rank's node */
} slab_comm;

/* The ghost rows of the last axis: this slab's edge rows to its neighbours, theirs into ours. */
static void halo(void *ctx, const hr_sgrid *g, double *x)
{
    const slab_comm *c = ctx;
    const int last = g->dim - 1, n = g->n[last];
    const ptrdiff_t row = g->st[last];
    const int len = (int)row; /* a padded row (plane) of the other axes */
    MPI_Sendrecv(x + (ptrdiff_t)n * row, len, MPI_DOUBLE, c->above, 1, x, len, MPI_DOUBLE, c->below, 1,
                 c->comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(x + row, len, MPI_DOUBLE, c->below, 2, x + (ptrdiff_t)(n + 1) * row, len, MPI_DOUBLE,
                 c->above, 2, c->comm, MPI_STATUS_IGNORE);
}

static void edge_rows(void *ctx, const hr_sgrid *g, const double *x, int up, double *below, int down,
                      double *above)
{
    const slab_comm *c = ctx;
    const int last = g->dim - 1, n = g->n[last];
    const ptrdiff_t row = g->st[last];
    MPI_Sendrecv(x + (ptrdiff_t)(n - up + 1) * row, (int)(up * row), MPI_DOUBLE, c->above, 3, below,
                 (int)(up * row), MPI_DOUBLE, c->below, 3, c->comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(x + row, (int)(down * row), MPI_DOUBLE, c->below, 4, above, (int)(down * row), MPI_DOUBLE,
                 c->above, 4, c->comm, MPI_STATUS_IGNORE);
}

static void allgather(void *ctx, double *buf, const int *counts, const int *displs)
{
    const slab_comm *c = ctx;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_DOUBLE, c->comm);
}

static int all(void *ctx, int v)
{
    const slab_comm *c = ctx;
    int a = v != 0;
    MPI_Allreduce(MPI_IN_PLACE, &a, 1, MPI_INT, MPI_MIN, c->comm);
    return a;
}

static void bcast(void *ctx, double *v, int n)
{
    const slab_comm *c = ctx;
    MPI_Bcast(v, n, MPI_DOUBLE, 0, c->comm);
}

static double sum_ranks(void *ctx, double v)
{
    slab_comm *c = ctx;
    MPI_Allgather(&v, 1, MPI_DOUBLE, c->all, 1, MPI_DOUBLE, c->comm);
    double s = 0.0;
    for (int r = 0; r < c->size; r++)
        s += c->all[r];
    return s;
}

/* Every rank's partials, summed in the whole grid's order on every rank. */
static double sum(void *ctx, const double *part, size_t lines)
{
    slab_comm *c = ctx;
    double s = 0.0;
    MPI_Allgatherv(part, (int)lines, MPI_DOUBLE, c->all, c->lines, c->line_displs, MPI_DOUBLE, c->comm);
    for (size_t l = 0; l < c->lines_total; l++)
        s += c->all[l];
    return s;
}

static hr_status gather(void *ctx, const double *slab, size_t slab_count, double *dst, size_t count)
{
    slab_comm *c = ctx;
    /* rank 0 must have room: agreed first, so no rank waits in the gather alone */
    int ok = c->rank != 0 || (dst && count >= c->hooks.count);
    ok = ok && (slab || slab_count == 0);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c->comm);
    if (!ok) return HR_ERR_INVALID_ARG;
    /* rank by rank in pieces of at most GATHER_PIECE values: a whole grid may hold more values
     * than MPI's int counts reach */
    if (c->rank != 0) {
        for (size_t at = 0; at < slab_count; at += GATHER_PIECE) {
            const size_t len = slab_count - at < GATHER_PIECE ? slab_count - at : GATHER_PIECE;
            MPI_Send(slab + at, (int)len, MPI_DOUBLE, 0, 5, c->comm);
        }
        return HR_OK;
    }
    if (slab_count) memcpy(dst + c->displs[0], slab, slab_count * sizeof *dst);
    for (int r = 1; r < c->size; r++)
        for (size_t at = 0; at < c->counts[r]; at += GATHER_PIECE) {
            const size_t len = c->counts[r] - at < GATHER_PIECE ? c->counts[r] - at : GATHER_PIECE;
            MPI_Recv(dst + c->displs[r] + at, (int)len, MPI_DOUBLE, r, 5, c->comm, MPI_STATUS_IGNORE);
        }
    return HR_OK;
}

/* GPU ranks: the halo's way (hr_grid_options.transport). auto: NCCL when this build has it,
 * there are several ranks and no two ranks of a node share a GPU, else host; host: through
 * pinned host rows; nccl: NCCL or an error. Every rank takes the same way. */
static hr_status open_nccl(slab_comm *c, const hr_grid_solver *s, MPI_Comm comm, int devices, char *why,
                           size_t why_size)
{
    const int tr = s->o.transport;
    if (tr != HR_MPI_TRANSPORT_AUTO && tr != HR_MPI_TRANSPORT_HOST && tr != HR_MPI_TRANSPORT_NCCL) {
        snprintf(why, why_size, "transport: general problems on GPU ranks take auto, host or nccl");
        return HR_ERR_INVALID_ARG;
    }
    if (tr == HR_MPI_TRANSPORT_HOST || c->size < 2) return HR_OK;
    int fits = c->node_ranks <= devices;
    MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, comm);
    if (!hri_nccl_available() || !fits) {
        if (tr == HR_MPI_TRANSPORT_AUTO) return HR_OK;
        if (!hri_nccl_available())
            snprintf(why, why_size, "transport: nccl: this build has no NCCL");
        else
            snprintf(why, why_size,
                     "transport: nccl: NCCL takes one rank per GPU (%d ranks on a node of %d GPU(s))",
                     c->node_ranks, devices);
        return HR_ERR_UNSUPPORTED;
    }
    unsigned char id[HR_NCCL_ID_BYTES];
    char err[200] = "";
    int ok = c->rank != 0 || hri_nccl_unique_id(id, err, sizeof err) == HR_OK;
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok) {
        if (tr == HR_MPI_TRANSPORT_AUTO) return HR_OK;
        snprintf(why, why_size, "transport: %s", err[0] ? err : "nccl: no unique id on rank 0");
        return HR_ERR_DEVICE;
    }
    MPI_Bcast(id, HR_NCCL_ID_BYTES, MPI_BYTE, 0, comm);
    const hr_status st = hri_nccl_rows_create(c->size, c->rank, s->o.device, id, &c->nccl, err, sizeof err);
    ok = st == HR_OK;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        hri_nccl_rows_free(c->nccl);
        c->nccl = NULL;
        if (tr == HR_MPI_TRANSPORT_AUTO) return HR_OK;
        snprintf(why, why_size, "transport: %s", st != HR_OK ? err : "nccl: another rank failed to join");
        return st != HR_OK ? st : HR_ERR_DEVICE;
    }
    c->hooks.nccl = c->nccl;
    return HR_OK;
}

void hri_general_mpi_free(void *comm)
{
    slab_comm *c = comm;
    if (!c) return;
    hri_nccl_rows_free(c->nccl);
    free(c->lines), free(c->line_displs), free(c->counts), free(c->displs), free(c->all), free(c->cut);
    free(c);
}

hr_status hri_general_mpi_create(hr_grid_solver *s, const hr_problem *p, MPI_Comm comm, void **out, char *why,
                                 size_t why_size)
{
    *out = NULL;
    slab_comm *c = calloc(1, sizeof *c);
    if (!c) return (snprintf(why, why_size, "comm: no memory"), HR_ERR_NO_MEMORY);
    c->comm = comm;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    const int dim = p->dim, last = dim - 1, N = p->n[last];
    const size_t plane = dim == 3 ? (size_t)p->n[0] * p->n[1] : (size_t)p->n[0];
    const size_t lines_per_row = dim == 3 ? (size_t)p->n[1] : 1; /* lines of one row of the cut axis */
    if (N < c->size) {
        snprintf(why, why_size,
                 "n%s: %d ranks need at least %d unknowns along %s (a slab of one row each; got %d)",
                 last == 2 ? "z" : "y", c->size, c->size, last == 2 ? "z" : "y", N);
        free(c);
        return HR_ERR_INVALID_ARG;
    }
    c->lines = malloc(c->size * sizeof *c->lines), c->line_displs = malloc(c->size * sizeof *c->line_displs);
    c->counts = malloc(c->size * sizeof *c->counts), c->displs = malloc(c->size * sizeof *c->displs);
    c->cut = malloc((c->size + 1) * sizeof *c->cut);
    c->lines_total = lines_per_row * (size_t)N;
    c->all = malloc((c->lines_total > (size_t)c->size ? c->lines_total : (size_t)c->size) * sizeof *c->all);
    if (!c->lines || !c->line_displs || !c->counts || !c->displs || !c->all || !c->cut) {
        hri_general_mpi_free(c);
        return (snprintf(why, why_size, "comm: no memory"), HR_ERR_NO_MEMORY);
    }
    for (int r = 0; r < c->size; r++) {
        const int lo = (int)((long)N * r / c->size), hi = (int)((long)N * (r + 1) / c->size);
        c->lines[r] = (int)(lines_per_row * (size_t)(hi - lo));
        c->line_displs[r] = (int)(lines_per_row * (size_t)lo);
        c->counts[r] = plane * (size_t)(hi - lo);
        c->displs[r] = plane * (size_t)lo;
        c->cut[r] = lo;
    }
    c->cut[c->size] = N;
    const int lo = (int)((long)N * c->rank / c->size), hi = (int)((long)N * (c->rank + 1) / c->size);
    const int periodic = p->bc[2 * last].kind == HR_BC_PERIODIC;
    c->below = c->rank > 0 ? c->rank - 1 : periodic && c->size > 1 ? c->size - 1 : MPI_PROC_NULL;
    c->above = c->rank < c->size - 1 ? c->rank + 1 : periodic && c->size > 1 ? 0 : MPI_PROC_NULL;
    c->hooks.ctx = c;
    c->hooks.count = hr_problem_unknowns(p);
    c->hooks.halo = halo;
    c->hooks.sum = sum;
    c->hooks.sum_ranks = sum_ranks;
    c->hooks.gather = gather;
    c->hooks.rank = c->rank;
    c->hooks.size = c->size;
    c->hooks.cut = c->cut;
    c->hooks.edge_rows = edge_rows;
    c->hooks.allgather = allgather;
    c->hooks.all = all;
    c->hooks.bcast = bcast;
    c->hooks.below = c->below == MPI_PROC_NULL ? -1 : c->below;
    c->hooks.above = c->above == MPI_PROC_NULL ? -1 : c->above;
    MPI_Comm node;
    int local = 0;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_size(node, &c->node_ranks);
    MPI_Comm_free(&node);
    /* cpu-threads ranks, and GPU ranks' set-up: the node's cores shared evenly unless
     * options.threads says how many */
    if (s->backend != HR_BACKEND_CPU_SEQ && s->o.threads <= 0) {
        const int t = hri_cpu_count() / c->node_ranks;
        s->o.threads = t > 1 ? t : 1;
    }
    if (s->backend == HR_BACKEND_GPU) { /* one GPU per rank: the ranks of a node take its GPUs in turn */
        const int count = hri_cuda_device_count();
        if (!hr_st_has_cuda() || count <= 0) {
            if (!hr_st_has_cuda())
                snprintf(why, why_size, "backend: gpu: this build has no CUDA");
            else
                snprintf(why, why_size, "backend: gpu: rank %d sees no CUDA device", c->rank);
            hri_general_mpi_free(c);
            return hr_st_has_cuda() ? HR_ERR_NO_DEVICE : HR_ERR_UNSUPPORTED;
        }
        s->o.device = (s->o.device + local) % count;
        const hr_status nst = open_nccl(c, s, comm, count, why, why_size);
        if (nst != HR_OK) {
            hri_general_mpi_free(c);
            return nst;
        }
    }
    const hr_status st = hri_gs_general_create_slab(s, p, lo, hi, c->size > 1 ? &c->hooks : NULL);
    if (st != HR_OK) {
        snprintf(why, why_size, "%s", s->err);
        hri_general_mpi_free(c);
        return st;
    }
    if (s->backend == HR_BACKEND_GPU)
        s->info.transport = c->nccl ? HR_MPI_TRANSPORT_NCCL : HR_MPI_TRANSPORT_HOST;
    *out = c;
    return HR_OK;
}
