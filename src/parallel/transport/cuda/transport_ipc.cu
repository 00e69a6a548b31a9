/*
 * The CUDA IPC transport (transport_ipc.h). Per phase and receive, two landing buffers on
 * the receiver's device; round r lands in buffer r % 2. The sender maps them (IPC handles
 * sent at the phase's first start) and, through the `slot` operation, packs each face
 * straight into the receiver's buffer of the coming round; a face packed into its own send
 * buffer instead is copied over at `start`. Once the packs are complete the sender posts
 * one 8-byte note per message (the round's number) through the host transport; `wait`
 * completes the notes, so the landing buffers hold the round when it returns.
 *
 * Why two buffers suffice: a sender packs round r + 2 into buffer r % 2 only after its
 * `wait` of round r + 1, that is after the receiver posted its note of round r + 1, which
 * the receiver does after its packs of round r + 1, which follow on its device its unpack
 * of round r (every sweep reads the ghost layers the last unpack wrote). Halo messages come
 * in pairs (a neighbour sends back), which this relies on.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "parallel/transport/cuda/transport_ipc.h"
#include "parallel/transport/cuda/transport_wrap.h"

#define IPC_ALIGN 256

typedef struct ipc_msg {
    hr_halo_msg m;  /* as bound: buf is the solver's own buffer */
    char *land[2];  /* receive: our landing buffers; send: the receiver's, mapped */
    char *base;     /* the allocation (receive) or the mapping (send) */
    int direct;     /* send: our kernels may write land[] (same device or peer access) */
    int taken;      /* this round's slot was handed out */
    long long note; /* the round's number, sent or received */
} ipc_msg;

typedef struct ipc_phase {
    ipc_msg *send, *recv;
    int nsend, nrecv;
    int ready;        /* handles exchanged and mapped */
    long long rounds; /* starts so far */
} ipc_phase;

typedef struct ipc_tr {
    hr_transport *host; /* first (transport_wrap.h) */
    int dev;
    cudaStream_t st;
    ipc_phase ph[HR_MAX_PHASES];
} ipc_tr;

/* What a receiver tells its sender about one landing pair. */
typedef struct ipc_rec {
    cudaIpcMemHandle_t h;
    unsigned long long off, bytes; /* buffer 1 at base + off */
    char bus[32];                  /* the receiver's device, by PCI bus id (ordinals differ by process) */
    int ok;
    int pad;
} ipc_rec;

extern "C" int hri_ipc_available(void)
{
    return 1;
}

extern "C" int hri_ipc_peer_direct(int device, int peer)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || device < 0 || peer < 0 || device >= n || peer >= n) {
        (void)cudaGetLastError();
        return -1;
    }
    if (device == peer) return 1;
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, device, peer) != cudaSuccess) can = 0;
    (void)cudaGetLastError();
    return can;
}

static hr_status ipc_cuda(hr_transport *t, cudaError_t e, const char *what, int dev)
{
    snprintf(t->err, sizeof t->err, "ipc: %s failed on GPU %d: %s", what, dev, cudaGetErrorString(e));
    (void)cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? HR_ERR_NO_MEMORY : HR_ERR_DEVICE;
}

#define IPC_CU(t, m, call, what)                                                                             \
    do {                                                                                                     \
        cudaError_t ipc_e_ = (call);                                                                         \
        if (ipc_e_ != cudaSuccess) return ipc_cuda((t), ipc_e_, (what), (m)->dev);                           \
    } while (0)

static void phase_release(ipc_tr *m, ipc_phase *p)
{
    for (int i = 0; i < p->nsend; i++)
        if (p->send[i].base) cudaIpcCloseMemHandle(p->send[i].base);
    for (int i = 0; i < p->nrecv; i++)
        cudaFree(p->recv[i].base);
    (void)cudaGetLastError();
    free(p->send);
    free(p->recv);
    memset(p, 0, sizeof *p);
    (void)m;
}

static hr_status ipc_bind(hr_transport *t, int phase, const hr_halo_msg *sends, int nsend,
                          const hr_halo_msg *recvs, int nrecv)
{
    ipc_tr *m = (ipc_tr *)t->impl;
    if (phase < 0 || phase >= HR_MAX_PHASES) return HR_ERR_INTERNAL;
    ipc_phase *p = &m->ph[phase];
    if (cudaSetDevice(m->dev) == cudaSuccess && m->st) cudaStreamSynchronize(m->st);
    phase_release(m, p);
    p->send = (ipc_msg *)calloc((size_t)nsend + 1, sizeof *p->send);
    p->recv = (ipc_msg *)calloc((size_t)nrecv + 1, sizeof *p->recv);
    if (!p->send || !p->recv) return HR_ERR_NO_MEMORY;
    for (int i = 0; i < nsend; i++)
        p->send[i].m = sends[i];
    for (int i = 0; i < nrecv; i++)
        p->recv[i].m = recvs[i];
    p->nsend = nsend;
    p->nrecv = nrecv;
    return HR_OK;
}

/* Our landing buffers for every receive of the phase, and their records. Failures are
 * recorded (ok = 0), not returned: the records must travel anyway. */
static void make_landing(hr_transport *t, ipc_tr *m, ipc_phase *p, ipc_rec *out, int *bad)
{
    char bus[32] = "";
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, m->dev) != cudaSuccess) bus[0] = '\0';
    for (int i = 0; i < p->nrecv; i++) {
        ipc_msg *r = &p->recv[i];
        const size_t off = (r->m.bytes + IPC_ALIGN - 1) / IPC_ALIGN * IPC_ALIGN;
        ipc_rec *q = &out[i];
        memset(q, 0, sizeof *q);
        snprintf(q->bus, sizeof q->bus, "%s", bus);
        q->off = off;
        q->bytes = r->m.bytes;
        void *base = NULL;
        cudaError_t e = cudaMalloc(&base, 2 * (off ? off : IPC_ALIGN));
        if (e == cudaSuccess) e = cudaIpcGetMemHandle(&q->h, base);
        if (e != cudaSuccess) {
            ipc_cuda(t, e, "exporting a landing buffer", m->dev);
            cudaFree(base);
            *bad = 1;
            continue;
        }
        r->base = (char *)base;
        r->land[0] = r->base;
        r->land[1] = r->base + off;
        q->ok = 1;
    }
}

/* Maps the receivers' landing buffers for every send of the phase. */
static void map_remote(hr_transport *t, ipc_tr *m, ipc_phase *p, const ipc_rec *in, int *bad)
{
    for (int i = 0; i < p->nsend; i++) {
        ipc_msg *s = &p->send[i];
        const ipc_rec *q = &in[i];
        if (!q->ok) { /* the receiver's own failure: it reports it */
            *bad = 1;
            continue;
        }
        if (q->bytes != s->m.bytes) {
            snprintf(t->err, sizeof t->err, "ipc: rank %d expects %llu bytes for a face of %zu", s->m.to,
                     q->bytes, s->m.bytes);
            *bad = 1;
            continue;
        }
        void *base = NULL;
        cudaError_t e = cudaIpcOpenMemHandle(&base, q->h, cudaIpcMemLazyEnablePeerAccess);
        if (e != cudaSuccess) {
            ipc_cuda(t, e, "mapping a neighbour's landing buffer", m->dev);
            *bad = 1;
            continue;
        }
        s->base = (char *)base;
        s->land[0] = s->base;
        s->land[1] = s->base + q->off;
        int pd = -1;
        char bus[32];
        memcpy(bus, q->bus, sizeof bus);
        bus[sizeof bus - 1] = '\0';
        if (cudaDeviceGetByPCIBusId(&pd, bus) != cudaSuccess) pd = -1;
        (void)cudaGetLastError();
        s->direct = pd >= 0 && hri_ipc_peer_direct(m->dev, pd) == 1;
    }
}

/* The phase's first start, on every rank together: landing records travel from receiver
 * to sender through the host transport (the reverse of the halos, same tags), then every
 * rank learns whether all of them could map their neighbours. */
static hr_status ipc_setup(hr_transport *t, ipc_tr *m, int phase)
{
    ipc_phase *p = &m->ph[phase];
    hr_transport *h = m->host;
    ipc_rec *mine = (ipc_rec *)calloc((size_t)p->nrecv + 1, sizeof *mine);
    ipc_rec *theirs = (ipc_rec *)calloc((size_t)p->nsend + 1, sizeof *theirs);
    hr_halo_msg *hs = (hr_halo_msg *)calloc((size_t)p->nrecv + 1, sizeof *hs);
    hr_halo_msg *hr = (hr_halo_msg *)calloc((size_t)p->nsend + 1, sizeof *hr);
    int bad = !mine || !theirs || !hs || !hr;
    hr_status st = HR_OK;
    if (!bad) {
        make_landing(t, m, p, mine, &bad);
        for (int i = 0; i < p->nrecv; i++)
            hs[i] =
                (hr_halo_msg){p->recv[i].m.to, p->recv[i].m.from, p->recv[i].m.tag, &mine[i], sizeof *mine};
        for (int i = 0; i < p->nsend; i++)
            hr[i] = (hr_halo_msg){p->send[i].m.to, p->send[i].m.from, p->send[i].m.tag, &theirs[i],
                                  sizeof *theirs};
        st = h->ops->bind(h, phase, hs, p->nrecv, hr, p->nsend);
        if (st == HR_OK) st = h->ops->start(h, phase);
        if (st == HR_OK) st = h->ops->wait(h, phase);
        if (st == HR_OK) map_remote(t, m, p, theirs, &bad);
    }
    if (st == HR_OK && hs && hr) { /* the notes from now on: 8 bytes per halo, in the halos' direction */
        for (int i = 0; i < p->nsend; i++)
            hr[i] = p->send[i].m, hr[i].buf = &p->send[i].note, hr[i].bytes = sizeof(long long);
        for (int i = 0; i < p->nrecv; i++)
            hs[i] = p->recv[i].m, hs[i].buf = &p->recv[i].note, hs[i].bytes = sizeof(long long);
        st = h->ops->bind(h, phase, hr, p->nsend, hs, p->nrecv);
    }
    free(mine);
    free(theirs);
    free(hs);
    free(hr);
    if (st != HR_OK) {
        if (!t->err[0]) snprintf(t->err, sizeof t->err, "ipc: exchanging the landing buffers failed");
        return st;
    }
    int any = bad;
    st = h->ops->max_int(h, &any, 1);
    if (st != HR_OK) return st;
    if (any) {
        if (!t->err[0])
            snprintf(t->err, sizeof t->err, "ipc: a neighbour could not export or map its landing buffers");
        return HR_ERR_DEVICE;
    }
    p->ready = 1;
    return HR_OK;
}

static hr_status ipc_start(hr_transport *t, int phase)
{
    ipc_tr *m = (ipc_tr *)t->impl;
    ipc_phase *p = &m->ph[phase];
    IPC_CU(t, m, cudaSetDevice(m->dev), "cudaSetDevice");
    if (!p->ready) HR_TRY(ipc_setup(t, m, phase));
    const int par = (int)(p->rounds & 1);
    int copied = 0;
    for (int i = 0; i < p->nsend; i++) {
        ipc_msg *s = &p->send[i];
        if (!s->taken) { /* packed into its own buffer: copy it over */
            IPC_CU(t, m, cudaMemcpyAsync(s->land[par], s->m.buf, s->m.bytes, cudaMemcpyDefault, m->st),
                   "a copy into a neighbour's landing buffer");
            copied = 1;
        }
        s->taken = 0;
        s->note = p->rounds;
    }
    if (copied) IPC_CU(t, m, cudaStreamSynchronize(m->st), "the landing copies");
    p->rounds++;
    return m->host->ops->start(m->host, phase);
}

static hr_status ipc_wait(hr_transport *t, int phase)
{
    ipc_tr *m = (ipc_tr *)t->impl;
    ipc_phase *p = &m->ph[phase];
    HR_TRY(m->host->ops->wait(m->host, phase));
    IPC_CU(t, m, cudaSetDevice(m->dev), "cudaSetDevice");
    const int par = (int)((p->rounds - 1) & 1);
    int copied = 0;
    for (int i = 0; i < p->nrecv; i++) {
        ipc_msg *r = &p->recv[i];
        if (r->note != p->rounds - 1) {
            snprintf(t->err, sizeof t->err, "ipc: rank %d sent round %lld, expected %lld", r->m.from, r->note,
                     p->rounds - 1);
            return HR_ERR_INTERNAL;
        }
        if (!r->taken) { /* to be unpacked from the bound buffer: copy it there */
            IPC_CU(t, m, cudaMemcpyAsync(r->m.buf, r->land[par], r->m.bytes, cudaMemcpyDeviceToDevice, m->st),
                   "a copy out of a landing buffer");
            copied = 1;
        }
        r->taken = 0;
    }
    if (copied) IPC_CU(t, m, cudaStreamSynchronize(m->st), "the landing copies");
    return HR_OK;
}

/* Sends: before packing, the receiver's buffer of the coming round (where our kernels can
 * write it). Receives: after start, our buffer of the round just started. */
static void *ipc_slot(hr_transport *t, int phase, const void *buf)
{
    ipc_tr *m = (ipc_tr *)t->impl;
    ipc_phase *p = &m->ph[phase];
    if (!p->ready) return (void *)buf;
    for (int i = 0; i < p->nsend; i++)
        if (p->send[i].m.buf == buf) {
            if (!p->send[i].direct) return (void *)buf;
            p->send[i].taken = 1;
            return p->send[i].land[p->rounds & 1];
        }
    for (int i = 0; i < p->nrecv; i++)
        if (p->recv[i].m.buf == buf && p->rounds > 0) {
            p->recv[i].taken = 1;
            return p->recv[i].land[(p->rounds - 1) & 1];
        }
    return (void *)buf;
}

static void ipc_destroy(hr_transport *t)
{
    if (!t) return;
    ipc_tr *m = (ipc_tr *)t->impl;
    if (m) {
        if (cudaSetDevice(m->dev) == cudaSuccess && m->st) {
            cudaStreamSynchronize(m->st);
            cudaStreamDestroy(m->st);
        }
        for (int p = 0; p < HR_MAX_PHASES; p++)
            phase_release(m, &m->ph[p]);
        (void)cudaGetLastError();
        if (m->host) m->host->ops->destroy(m->host);
        free(m);
    }
    free(t);
}

static const hr_transport_ops ipc_ops = {
    "ipc",
    ipc_bind,
    ipc_start,
    ipc_wait,
    hr_wrap_sum_norms,
    hr_wrap_max_int,
    hr_wrap_max_double,
    hr_wrap_alloc,
    hr_wrap_release,
    ipc_destroy,
    NULL, /* progress: the notes are tiny */
    ipc_slot,
    NULL, /* grid_share, grid_link, grid_free, round: no mapped host planes */
    NULL,
    NULL,
    NULL,
};

extern "C" hr_status hri_transport_ipc_create(hr_transport *host, int device, hr_transport **out, char *err,
                                             size_t es)
{
    *out = NULL;
    if (!host || host->nlocal != 1) {
        if (err && es) snprintf(err, es, "ipc: one subdomain per rank only");
        return HR_ERR_INVALID_ARG;
    }
    hr_transport *t = (hr_transport *)calloc(1, sizeof *t);
    ipc_tr *m = (ipc_tr *)calloc(1, sizeof *m);
    if (!t || !m) {
        free(t);
        free(m);
        return HR_ERR_NO_MEMORY;
    }
    m->dev = device;
    int least = 0, greatest = 0;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    if (e == cudaSuccess) e = cudaStreamCreateWithPriority(&m->st, cudaStreamNonBlocking, greatest);
    if (e != cudaSuccess) {
        if (err && es)
            snprintf(err, es, "ipc: creating a stream on GPU %d: %s", device, cudaGetErrorString(e));
        (void)cudaGetLastError();
        free(m);
        free(t);
        return HR_ERR_DEVICE;
    }
    m->host = host;
    t->ops = &ipc_ops;
    t->nlocal = 1;
    t->first = host->first;
    t->device_buffers = 1; /* device faces: the placement packs into device memory */
    t->impl = m;
    *out = t;
    return HR_OK;
}
