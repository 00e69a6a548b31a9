/*
 * The NCCL transport (transport_nccl.h). A phase's messages are posted as one group of
 * ncclRecv / ncclSend on the transport's exchange stream, a high-priority stream of the
 * rank's GPU: the schedule (dsolver_run.c) has the faces packed on their high-priority
 * face streams before `start` and unpacks after `wait`, while the interior keeps sweeping
 * on the low-priority lane (Sourouri et al., Listing 1). NCCL has no tags: between two ranks at
 * most one message per direction and phase (bind checks it), matched in posting order.
 * `wait` polls the stream and the communicator's asynchronous error, so a failed peer
 * ends the wait with an error instead of a hang where NCCL notices it, and gives up after
 * the options' tuning.nccl_timeout seconds (default 120; < 0: never): a peer that left the solve (its
 * own error) sends nothing more, and every rank must reach the status agreement.
 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parallel/transport/cuda/transport_nccl.h"
#include "parallel/transport/cuda/transport_wrap.h"

#ifndef NCCL_VERSION
#define NCCL_VERSION(X, Y, Z) ((X)*1000 + (Y)*100 + (Z))
#endif

typedef struct nccl_phase {
    hr_halo_msg *send, *recv;
    int nsend, nrecv;
} nccl_phase;

typedef struct nccl_tr {
    hr_transport *host; /* first (transport_wrap.h): collectives and host buffers (MPI) */
    ncclComm_t comm;
    int rank, nranks, dev;
    int broken;     /* an NCCL call failed or a wait gave up: the communicator is aborted */
    double timeout; /* seconds a wait may take (0: no limit) */
    cudaStream_t st;
    nccl_phase ph[HR_MAX_PHASES];
} nccl_tr;

static const char *nccl_detail(ncclComm_t comm)
{
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
    const char *s = ncclGetLastError(comm);
    return s ? s : "";
#else
    (void)comm;
    return "";
#endif
}

/* "nccl: CALL failed on GPU d: reason (detail)" into err; the status for it. */
static hr_status nccl_fail(char *err, size_t es, ncclComm_t comm, ncclResult_t r, const char *call, int dev)
{
    if (err && es) {
        const char *d = nccl_detail(comm);
        snprintf(err, es, "nccl: %s failed on GPU %d: %s%s%.80s%s", call, dev, ncclGetErrorString(r),
                 d[0] ? " (" : "", d, d[0] ? ")" : "");
    }
    if (r == ncclRemoteError) return HR_ERR_IO;
    return HR_ERR_DEVICE;
}

static hr_status cuda_fail(char *err, size_t es, cudaError_t e, const char *call, int dev)
{
    if (err && es) snprintf(err, es, "nccl: %s failed on GPU %d: %s", call, dev, cudaGetErrorString(e));
    (void)cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? HR_ERR_NO_MEMORY : HR_ERR_DEVICE;
}

/* After a failure: abort the communicator now, which ends its kernels still waiting for
 * peers (the placement synchronises its device before the transport is destroyed). */
static void nt_break(nccl_tr *m)
{
    m->broken = 1;
    if (m->comm) ncclCommAbort(m->comm);
    m->comm = NULL;
}

/* Checked calls inside the transport's operations: the reason goes into t->err. */
#define NT_NCCL(t, m, call)                                                                                  \
    do {                                                                                                     \
        ncclResult_t nt_r_ = (call);                                                                         \
        if (nt_r_ != ncclSuccess) {                                                                          \
            const hr_status nt_s_ = nccl_fail((t)->err, sizeof(t)->err, (m)->comm, nt_r_, #call, (m)->dev);  \
            nt_break(m);                                                                                     \
            return nt_s_;                                                                                    \
        }                                                                                                    \
    } while (0)
#define NT_CUDA(t, m, call)                                                                                  \
    do {                                                                                                     \
        cudaError_t nt_e_ = (call);                                                                          \
        if (nt_e_ != cudaSuccess) return cuda_fail((t)->err, sizeof(t)->err, nt_e_, #call, (m)->dev);        \
    } while (0)

extern "C" int hri_nccl_available(void)
{
    return 1;
}

extern "C" hr_status hri_nccl_unique_id(unsigned char id[HR_NCCL_ID_BYTES], char *err, size_t es)
{
    static_assert(sizeof(ncclUniqueId) == HR_NCCL_ID_BYTES, "NCCL_UNIQUE_ID_BYTES changed");
    ncclUniqueId u;
    const ncclResult_t r = ncclGetUniqueId(&u);
    if (r != ncclSuccess) return nccl_fail(err, es, NULL, r, "ncclGetUniqueId", -1);
    memcpy(id, &u, sizeof u);
    return HR_OK;
}

static hr_status nt_bind(hr_transport *t, int phase, const hr_halo_msg *sends, int nsend,
                         const hr_halo_msg *recvs, int nrecv)
{
    nccl_tr *m = (nccl_tr *)t->impl;
    if (phase < 0 || phase >= HR_MAX_PHASES) return HR_ERR_INTERNAL;
    nccl_phase *p = &m->ph[phase];
    free(p->send);
    free(p->recv);
    p->nsend = p->nrecv = 0;
    p->send = (hr_halo_msg *)malloc(((size_t)nsend + 1) * sizeof *p->send);
    p->recv = (hr_halo_msg *)malloc(((size_t)nrecv + 1) * sizeof *p->recv);
    if (!p->send || !p->recv) return HR_ERR_NO_MEMORY;
    /* no tags in NCCL: one message per peer and direction, or the matching is ambiguous */
    for (int i = 0; i < nsend; i++)
        for (int j = 0; j < i; j++)
            if (sends[i].to == sends[j].to) {
                snprintf(t->err, sizeof t->err, "nccl: two messages to rank %d in one phase", sends[i].to);
                return HR_ERR_UNSUPPORTED;
            }
    for (int i = 0; i < nrecv; i++)
        for (int j = 0; j < i; j++)
            if (recvs[i].from == recvs[j].from) {
                snprintf(t->err, sizeof t->err, "nccl: two messages from rank %d in one phase",
                         recvs[i].from);
                return HR_ERR_UNSUPPORTED;
            }
    if (nsend) memcpy(p->send, sends, (size_t)nsend * sizeof *sends);
    if (nrecv) memcpy(p->recv, recvs, (size_t)nrecv * sizeof *recvs);
    p->nsend = nsend;
    p->nrecv = nrecv;
    return HR_OK;
}

/* The phase's receives and sends as one group; the packed buffers are complete (the
 * solver waited for the face streams). */
static hr_status nt_start(hr_transport *t, int phase)
{
    nccl_tr *m = (nccl_tr *)t->impl;
    const nccl_phase *p = &m->ph[phase];
    if (p->nsend + p->nrecv == 0) return HR_OK;
    if (m->broken) return HR_ERR_IO; /* aborted after an earlier failure: t->err says why */
    NT_CUDA(t, m, cudaSetDevice(m->dev));
    NT_NCCL(t, m, ncclGroupStart());
    ncclResult_t r = ncclSuccess;
    const char *call = "ncclRecv";
    for (int i = 0; i < p->nrecv && r == ncclSuccess; i++)
        r = ncclRecv(p->recv[i].buf, p->recv[i].bytes, ncclUint8, p->recv[i].from, m->comm, m->st);
    if (r == ncclSuccess) call = "ncclSend";
    for (int i = 0; i < p->nsend && r == ncclSuccess; i++)
        r = ncclSend(p->send[i].buf, p->send[i].bytes, ncclUint8, p->send[i].to, m->comm, m->st);
    const ncclResult_t re = ncclGroupEnd(); /* the group is closed whatever happened inside */
    if (r == ncclSuccess) {
        r = re;
        call = "ncclGroupEnd";
    }
    if (r != ncclSuccess) {
        const hr_status st = nccl_fail(t->err, sizeof t->err, m->comm, r, call, m->dev);
        nt_break(m);
        return st;
    }
    return HR_OK;
}

static hr_status nt_wait(hr_transport *t, int phase)
{
    nccl_tr *m = (nccl_tr *)t->impl;
    const nccl_phase *p = &m->ph[phase];
    if (p->nsend + p->nrecv == 0) return HR_OK;
    if (m->broken) return HR_ERR_IO;
    NT_CUDA(t, m, cudaSetDevice(m->dev));
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long polls = 1;; polls++) {
        const cudaError_t e = cudaStreamQuery(m->st);
        if (e == cudaSuccess) return HR_OK;
        if (e != cudaErrorNotReady) return cuda_fail(t->err, sizeof t->err, e, "cudaStreamQuery", m->dev);
        ncclResult_t ar = ncclSuccess;
        NT_NCCL(t, m, ncclCommGetAsyncError(m->comm, &ar));
        if (ar != ncclSuccess && ar != ncclInProgress) {
            const hr_status st = nccl_fail(t->err, sizeof t->err, m->comm, ar, "a send/receive", m->dev);
            nt_break(m);
            return st;
        }
        if (m->timeout > 0 && polls % 1024 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            if ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > m->timeout) {
                nt_break(m);
                snprintf(t->err, sizeof t->err,
                         "nccl: no halo from the peers in %.0f s on GPU %d (a rank left the solve? "
                         "tuning.nccl_timeout)",
                         m->timeout, m->dev);
                return HR_ERR_IO;
            }
        }
    }
}

static void nt_destroy(hr_transport *t)
{
    if (!t) return;
    nccl_tr *m = (nccl_tr *)t->impl;
    if (m) {
        if (cudaSetDevice(m->dev) == cudaSuccess && m->st) {
            if (!m->broken) cudaStreamSynchronize(m->st);
            cudaStreamDestroy(m->st);
        }
        (void)cudaGetLastError();
        if (m->comm) ncclCommDestroy(m->comm); /* a broken one was aborted already */
        for (int p = 0; p < HR_MAX_PHASES; p++) {
            free(m->ph[p].send);
            free(m->ph[p].recv);
        }
        if (m->host) m->host->ops->destroy(m->host);
        free(m);
    }
    free(t);
}

static const hr_transport_ops nccl_ops = {
    "nccl",
    nt_bind,
    nt_start,
    nt_wait,
    hr_wrap_sum_norms,
    hr_wrap_max_int,
    hr_wrap_max_double,
    hr_wrap_alloc,
    hr_wrap_release,
    nt_destroy,
    NULL, /* progress: NCCL's kernels move the data on their own */
    NULL, /* slot: device buffers */
    NULL, /* grid_share, grid_link, grid_free, round: no mapped planes between devices */
    NULL,
    NULL,
    NULL,
};

extern "C" hr_status hri_transport_nccl_create(hr_transport *host, int nranks, int device,
                                               const unsigned char id[HR_NCCL_ID_BYTES], double timeout,
                                               hr_transport **out, char *err, size_t es)
{
    *out = NULL;
    if (!host || host->nlocal != 1 || nranks < 1) {
        if (err && es) snprintf(err, es, "nccl: one subdomain per rank only");
        return HR_ERR_INVALID_ARG;
    }
    hr_transport *t = (hr_transport *)calloc(1, sizeof *t);
    nccl_tr *m = (nccl_tr *)calloc(1, sizeof *m);
    if (!t || !m) {
        free(t);
        free(m);
        return HR_ERR_NO_MEMORY;
    }
    m->rank = host->first;
    m->nranks = nranks;
    m->dev = device;
    m->timeout = timeout;
    cudaError_t e = cudaSetDevice(device);
    int least = 0, greatest = 0;
    if (e == cudaSuccess) e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    if (e == cudaSuccess) e = cudaStreamCreateWithPriority(&m->st, cudaStreamNonBlocking, greatest);
    if (e != cudaSuccess) {
        const hr_status st = cuda_fail(err, es, e, "creating the exchange stream", device);
        free(m);
        free(t);
        return st;
    }
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    const ncclResult_t r = ncclCommInitRank(&m->comm, nranks, u, m->rank);
    if (r != ncclSuccess) {
        const hr_status st = nccl_fail(err, es, NULL, r, "ncclCommInitRank", device);
        cudaStreamDestroy(m->st);
        (void)cudaGetLastError();
        free(m);
        free(t);
        return st;
    }
    m->host = host;
    t->ops = &nccl_ops;
    t->nlocal = 1;
    t->first = m->rank;
    t->device_buffers = 1; /* the placement hands NCCL device buffers */
    t->impl = m;
    *out = t;
    return HR_OK;
}

/* ------------------------------------------------------------------ bare rows */

struct hr_nccl_rows {
    ncclComm_t comm;
    int dev;
};

extern "C" hr_status hri_nccl_rows_create(int nranks, int rank, int device,
                                          const unsigned char id[HR_NCCL_ID_BYTES], hr_nccl_rows **out,
                                          char *err, size_t es)
{
    *out = NULL;
    hr_nccl_rows *c = (hr_nccl_rows *)calloc(1, sizeof *c);
    if (!c) return HR_ERR_NO_MEMORY;
    c->dev = device;
    const cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) {
        free(c);
        return cuda_fail(err, es, e, "cudaSetDevice", device);
    }
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    const ncclResult_t r = ncclCommInitRank(&c->comm, nranks, u, rank);
    if (r != ncclSuccess) {
        free(c);
        return nccl_fail(err, es, NULL, r, "ncclCommInitRank", device);
    }
    /* NCCL connects a pair of ranks at their first send: one value to every other rank now, so
     * that the connections (hundreds of milliseconds on four GPUs) are made at set-up, not in
     * the first gather of a level inside the solve */
    double *buf = NULL;
    cudaError_t ce = cudaMalloc((void **)&buf, 2 * (size_t)nranks * sizeof *buf);
    if (ce == cudaSuccess) ce = cudaMemset(buf, 0, 2 * (size_t)nranks * sizeof *buf);
    ncclResult_t w = ce == cudaSuccess ? ncclGroupStart() : ncclSuccess;
    for (int q = 0; q < nranks && ce == cudaSuccess && w == ncclSuccess; q++) {
        if (q == rank) continue;
        w = ncclSend(buf + q, 1, ncclDouble, q, c->comm, 0);
        if (w == ncclSuccess) w = ncclRecv(buf + nranks + q, 1, ncclDouble, q, c->comm, 0);
    }
    if (ce == cudaSuccess) {
        const ncclResult_t g = ncclGroupEnd();
        if (w == ncclSuccess) w = g;
    }
    if (ce == cudaSuccess && w == ncclSuccess) ce = cudaStreamSynchronize(0);
    if (buf) cudaFree(buf);
    if (ce != cudaSuccess || w != ncclSuccess) {
        const hr_status st = ce != cudaSuccess
                                 ? cuda_fail(err, es, ce, "connecting the ranks", device)
                                 : nccl_fail(err, es, c->comm, w, "connecting the ranks", device);
        ncclCommDestroy(c->comm);
        free(c);
        return st;
    }
    *out = c;
    return HR_OK;
}

extern "C" void hri_nccl_rows_free(hr_nccl_rows *c)
{
    if (!c) return;
    ncclCommDestroy(c->comm);
    free(c);
}

extern "C" int hri_nccl_rows_halo(hr_nccl_rows *c, void *stream, int below, int above, const void *send_lo,
                                  void *recv_lo, const void *send_hi, void *recv_hi, size_t bytes, char *err,
                                  size_t es)
{
    cudaStream_t st = (cudaStream_t)stream;
    ncclResult_t r = ncclGroupStart();
    /* the MPI hooks' order (general_mpi.c): up first, then down; two peers that are one
     * rank (a periodic axis on two ranks) match the sends in the order they were issued */
    if (r == ncclSuccess && above >= 0) r = ncclSend(send_hi, bytes, ncclUint8, above, c->comm, st);
    if (r == ncclSuccess && below >= 0) r = ncclRecv(recv_lo, bytes, ncclUint8, below, c->comm, st);
    if (r == ncclSuccess && below >= 0) r = ncclSend(send_lo, bytes, ncclUint8, below, c->comm, st);
    if (r == ncclSuccess && above >= 0) r = ncclRecv(recv_hi, bytes, ncclUint8, above, c->comm, st);
    const ncclResult_t g = ncclGroupEnd();
    if (r == ncclSuccess) r = g;
    if (r != ncclSuccess) {
        nccl_fail(err, es, c->comm, r, "the halo rows' group", c->dev);
        return -1;
    }
    return 0;
}

extern "C" int hri_nccl_rows_allgather(hr_nccl_rows *c, void *stream, int rank, int size, double *buf,
                                       const int *counts, const int *displs, char *err, size_t es)
{
    cudaStream_t st = (cudaStream_t)stream;
    ncclResult_t r = ncclGroupStart();
    for (int q = 0; q < size && r == ncclSuccess; q++) {
        if (q == rank) continue;
        if (counts[rank] > 0)
            r = ncclSend(buf + displs[rank], (size_t)counts[rank], ncclDouble, q, c->comm, st);
        if (r == ncclSuccess && counts[q] > 0)
            r = ncclRecv(buf + displs[q], (size_t)counts[q], ncclDouble, q, c->comm, st);
    }
    const ncclResult_t g = ncclGroupEnd();
    if (r == ncclSuccess) r = g;
    if (r != ncclSuccess) {
        nccl_fail(err, es, c->comm, r, "the gathered level's group", c->dev);
        return -1;
    }
    return 0;
}
