/* The MPI transport: one subdomain per rank (rank = subdomain id), buffers sent with
 * MPI_Isend/Irecv (host memory, or device memory of a GPU placement when the library is
 * CUDA-aware), norms gathered and combined in rank order on every rank. MPI is called
 * from the thread that drives the solver only (MPI_THREAD_FUNNELED). */
#include "parallel/transport/mpi/transport_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OpenMPI says in mpi-ext.h whether it was built CUDA-aware (MPIX_CUDA_AWARE_SUPPORT) and
 * at run time whether that support is on (MPIX_Query_cuda_support). */
#if defined(OPEN_MPI) && OPEN_MPI && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

int hri_mpi_cuda_aware(const hr_tuning *tune)
{
    if (tune && tune->mpi_cuda_aware < 0) return 0; /* stage through pinned host buffers */
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

typedef struct mpi_phase {
    hr_halo_msg *send, *recv;
    int nsend, nrecv;
} mpi_phase;

typedef struct mpi_tr {
    MPI_Comm comm;
    int rank, size;
    mpi_phase ph[HR_MAX_PHASES];
    MPI_Request *req;
    int nreq;
    double *all;                /* every rank's partial norms */
    struct hr_shm_tr *shm;      /* halos through shared memory (transport "mpi-shm") */
    struct hr_shm_grids *grids; /* zero-copy ghost planes (mpi-shm; made at the first share) */
    char prefix[48];
} mpi_tr;

static hr_status mt_bind(hr_transport *t, int phase, const hr_halo_msg *sends, int nsend,
                         const hr_halo_msg *recvs, int nrecv)
{
    mpi_tr *m = t->impl;
    mpi_phase *p = &m->ph[phase];
    free(p->send);
    free(p->recv);
    p->send = malloc(((size_t)nsend + 1) * sizeof *p->send);
    p->recv = malloc(((size_t)nrecv + 1) * sizeof *p->recv);
    if (!p->send || !p->recv) return HR_ERR_NO_MEMORY;
    if (nsend) memcpy(p->send, sends, (size_t)nsend * sizeof *sends);
    if (nrecv) memcpy(p->recv, recvs, (size_t)nrecv * sizeof *recvs);
    p->nsend = nsend;
    p->nrecv = nrecv;
    if (nsend + nrecv > m->nreq) {
        MPI_Request *r = realloc(m->req, (size_t)(nsend + nrecv) * sizeof *r);
        if (!r) return HR_ERR_NO_MEMORY;
        m->req = r;
        m->nreq = nsend + nrecv;
    }
    for (int i = 0; i < nsend; i++)
        if (sends[i].bytes > (size_t)0x7fffffff) return HR_ERR_UNSUPPORTED; /* count is an int */
    return HR_OK;
}

static hr_status mt_start(hr_transport *t, int phase)
{
    mpi_tr *m = t->impl;
    const mpi_phase *p = &m->ph[phase];
    int e = MPI_SUCCESS;
    for (int i = 0; i < p->nrecv && e == MPI_SUCCESS; i++)
        e = MPI_Irecv(p->recv[i].buf, (int)p->recv[i].bytes, MPI_BYTE, p->recv[i].from, p->recv[i].tag,
                      m->comm, &m->req[i]);
    for (int i = 0; i < p->nsend && e == MPI_SUCCESS; i++)
        e = MPI_Isend(p->send[i].buf, (int)p->send[i].bytes, MPI_BYTE, p->send[i].to, p->send[i].tag, m->comm,
                      &m->req[p->nrecv + i]);
    return e == MPI_SUCCESS ? HR_OK : HR_ERR_IO;
}

static hr_status mt_wait(hr_transport *t, int phase)
{
    mpi_tr *m = t->impl;
    const mpi_phase *p = &m->ph[phase];
    const int n = p->nrecv + p->nsend;
    if (n == 0) return HR_OK;
    return MPI_Waitall(n, m->req, MPI_STATUSES_IGNORE) == MPI_SUCCESS ? HR_OK : HR_ERR_IO;
}

/* A test of the phase's requests: MPI progresses its transfers inside the call. Completed
 * requests become MPI_REQUEST_NULL, which the later MPI_Waitall accepts. */
static hr_status mt_progress(hr_transport *t, int phase)
{
    mpi_tr *m = t->impl;
    const mpi_phase *p = &m->ph[phase];
    const int n = p->nrecv + p->nsend;
    int done = 0;
    if (n == 0) return HR_OK;
    return MPI_Testall(n, m->req, &done, MPI_STATUSES_IGNORE) == MPI_SUCCESS ? HR_OK : HR_ERR_IO;
}

/* Every rank's partials gathered, then combined in rank order: the same bits everywhere,
 * whatever the timing. */
#define HR_MPI_MAX_NORMS 4

static hr_status mt_sum_norms(hr_transport *t, hr_norm2 *v, int n)
{
    mpi_tr *m = t->impl;
    double mine[2 * HR_MPI_MAX_NORMS] = {0};
    if (n > HR_MPI_MAX_NORMS) return HR_ERR_INTERNAL;
    for (int q = 0; q < n; q++) {
        mine[2 * q] = v[q].scale;
        mine[2 * q + 1] = v[q].ssq;
    }
    if (MPI_Allgather(mine, 2 * n, MPI_DOUBLE, m->all, 2 * n, MPI_DOUBLE, m->comm) != MPI_SUCCESS)
        return HR_ERR_IO;
    for (int q = 0; q < n; q++) {
        hr_norm2 acc = {0.0, 0.0};
        for (int r = 0; r < m->size; r++) {
            const double *x = &m->all[((size_t)r * n + q) * 2];
            hr_norm2_add(&acc, (hr_norm2){x[0], x[1]});
        }
        v[q] = acc;
    }
    return HR_OK;
}

static hr_status mt_max_int(hr_transport *t, int *v, int n)
{
    mpi_tr *m = t->impl;
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MAX, m->comm) == MPI_SUCCESS ? HR_OK : HR_ERR_IO;
}

static hr_status mt_max_double(hr_transport *t, double *v, int n)
{
    mpi_tr *m = t->impl;
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, m->comm) == MPI_SUCCESS ? HR_OK : HR_ERR_IO;
}

static void *mt_alloc(hr_transport *t, size_t bytes)
{
    (void)t;
    void *p = NULL;
    /* MPI_Alloc_mem may give memory registered with the network (RDMA-ready) */
    if (MPI_Alloc_mem((MPI_Aint)(bytes ? bytes : 1), MPI_INFO_NULL, &p) != MPI_SUCCESS) return NULL;
    return p;
}

static void mt_release(hr_transport *t, void *p)
{
    (void)t;
    MPI_Free_mem(p);
}

static void mt_destroy(hr_transport *t)
{
    if (!t) return;
    mpi_tr *m = t->impl;
    if (m) {
        for (int p = 0; p < HR_MAX_PHASES; p++) {
            free(m->ph[p].send);
            free(m->ph[p].recv);
        }
        free(m->req);
        free(m->all);
        hri_shm_free(m->shm);
        hri_shm_grids_free(m->grids);
        free(m);
    }
    free(t);
}

static const hr_transport_ops mpi_ops = {
    .name = "mpi",
    .bind = mt_bind,
    .start = mt_start,
    .wait = mt_wait,
    .progress = mt_progress,
    .sum_norms = mt_sum_norms,
    .max_int = mt_max_int,
    .max_double = mt_max_double,
    .alloc = mt_alloc,
    .release = mt_release,
    .destroy = mt_destroy,
};

static hr_status st_bind(hr_transport *t, int phase, const hr_halo_msg *sends, int nsend,
                         const hr_halo_msg *recvs, int nrecv)
{
    return hri_shm_bind(((mpi_tr *)t->impl)->shm, phase, sends, nsend, recvs, nrecv);
}

static hr_status st_start(hr_transport *t, int phase)
{
    return hri_shm_start(((mpi_tr *)t->impl)->shm, phase);
}

static hr_status st_wait(hr_transport *t, int phase)
{
    return hri_shm_wait(((mpi_tr *)t->impl)->shm, phase);
}

static void *st_slot(hr_transport *t, int phase, const void *buf)
{
    return hri_shm_slot(((mpi_tr *)t->impl)->shm, phase, buf);
}

static void *st_grid_share(hr_transport *t, const hr_shared_grid *g)
{
    mpi_tr *m = t->impl;
    if (!m->grids && hri_shm_grids_create(m->rank, m->prefix, &m->grids) != HR_OK) return NULL;
    return hri_shm_grid_share(m->grids, g);
}

static hr_status st_grid_link(hr_transport *t, void *base, const hr_shared_grid *g)
{
    mpi_tr *m = t->impl;
    return m->grids ? hri_shm_grid_link(m->grids, base, g) : HR_ERR_INTERNAL;
}

static void st_grid_free(hr_transport *t, void *base, const hr_shared_grid *g)
{
    (void)t;
    hri_shm_grid_free(base, g);
}

static hr_status st_round(hr_transport *t, long long r, const int nb[2])
{
    mpi_tr *m = t->impl;
    return m->grids ? hri_shm_round(m->grids, r, nb) : HR_ERR_INTERNAL;
}

/* The same collectives; the halos through shared memory, which needs no progress calls. */
static const hr_transport_ops shm_ops = {
    .name = "mpi-shm",
    .bind = st_bind,
    .start = st_start,
    .wait = st_wait,
    .slot = st_slot,
    .grid_share = st_grid_share,
    .grid_link = st_grid_link,
    .grid_free = st_grid_free,
    .round = st_round,
    .progress = NULL,
    .sum_norms = mt_sum_norms,
    .max_int = mt_max_int,
    .max_double = mt_max_double,
    .alloc = mt_alloc,
    .release = mt_release,
    .destroy = mt_destroy,
};

hr_status hri_transport_mpi_create(MPI_Comm comm, const char *shm_prefix, const hr_tuning *tune,
                                  hr_transport **out)
{
    *out = NULL;
    hr_transport *t = calloc(1, sizeof *t);
    mpi_tr *m = calloc(1, sizeof *m);
    if (!t || !m) {
        free(t);
        free(m);
        return HR_ERR_NO_MEMORY;
    }
    m->comm = comm;
    MPI_Comm_rank(comm, &m->rank);
    MPI_Comm_size(comm, &m->size);
    m->all = malloc((size_t)m->size * 2 * HR_MPI_MAX_NORMS * sizeof *m->all);
    if (!m->all) {
        free(m);
        free(t);
        return HR_ERR_NO_MEMORY;
    }
    t->ops = &mpi_ops;
    t->device_buffers = hri_mpi_cuda_aware(tune); /* a GPU placement then hands MPI device pointers */
    if (shm_prefix && shm_prefix[0] && !t->device_buffers) {
        const hr_status st = hri_shm_create(m->rank, shm_prefix, &m->shm);
        if (st != HR_OK) {
            free(m->all);
            free(m);
            free(t);
            return st;
        }
        t->ops = &shm_ops;
        snprintf(m->prefix, sizeof m->prefix, "%s", shm_prefix);
    }
    t->nlocal = 1;
    t->first = m->rank;
    t->impl = m;
    *out = t;
    return HR_OK;
}
