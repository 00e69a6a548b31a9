/*
 * The in-process transport between the GPUs of one process (decomp/transport.h): every
 * subdomain's message buffers are device memory (placement hri_dplace_gpu), a halo message
 * is one cudaMemcpyPeerAsync from the sender's buffer to the receiver's, on a
 * high-priority copy stream of the receiving device; the norms and flags stay on the host
 * (all subdomains are here, through the in-process transport it wraps).
 */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/transport/cuda/transport_wrap.h"
#include "parallel/decomp/dsolver.h"

#define CT_MAX_DEV 64

typedef struct ct_pair {
    const void *src;
    void *dst;
    size_t bytes;
    int sdev, ddev;
} ct_pair;

typedef struct cuda_tr {
    hr_transport *host; /* first (transport_wrap.h): the in-process transport's host operations */
    int count;
    int *dev;
    ct_pair *pairs[HR_MAX_PHASES];
    int npairs[HR_MAX_PHASES];
    cudaStream_t st[CT_MAX_DEV]; /* one copy stream per receiving device */
} cuda_tr;

static hr_status ct_bind(hr_transport *t, int phase, const hr_halo_msg *sends, int nsend,
                         const hr_halo_msg *recvs, int nrecv)
{
    cuda_tr *m = (cuda_tr *)t->impl;
    if (phase < 0 || phase >= HR_MAX_PHASES) return HR_ERR_INTERNAL;
    free(m->pairs[phase]);
    m->pairs[phase] = NULL;
    m->npairs[phase] = 0;
    if (nrecv == 0) return HR_OK;
    ct_pair *p = (ct_pair *)calloc((size_t)nrecv, sizeof *p);
    if (!p) return HR_ERR_NO_MEMORY;
    for (int r = 0; r < nrecv; r++) {
        const hr_halo_msg *rv = &recvs[r];
        int found = -1;
        for (int s = 0; s < nsend && found < 0; s++)
            if (sends[s].from == rv->from && sends[s].to == rv->to && sends[s].tag == rv->tag) found = s;
        if (found < 0 || sends[found].bytes != rv->bytes) {
            free(p);
            return HR_ERR_INTERNAL;
        }
        p[r].src = sends[found].buf;
        p[r].dst = rv->buf;
        p[r].bytes = rv->bytes;
        p[r].sdev = m->dev[rv->from];
        p[r].ddev = m->dev[rv->to];
        const int dd = m->dev[rv->to];
        if (dd < 0 || dd >= CT_MAX_DEV) {
            free(p);
            return HR_ERR_INTERNAL;
        }
        if (!m->st[dd]) {
            int least = 0, greatest = 0;
            if (cudaSetDevice(dd) != cudaSuccess ||
                cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess ||
                cudaStreamCreateWithPriority(&m->st[dd], cudaStreamNonBlocking, greatest) != cudaSuccess) {
                (void)cudaGetLastError();
                free(p);
                return HR_ERR_DEVICE;
            }
        }
    }
    m->pairs[phase] = p;
    m->npairs[phase] = nrecv;
    return HR_OK;
}

/* The senders' packs are complete (the solver synchronises their face streams first). */
static hr_status ct_start(hr_transport *t, int phase)
{
    cuda_tr *m = (cuda_tr *)t->impl;
    for (int i = 0; i < m->npairs[phase]; i++) {
        const ct_pair *p = &m->pairs[phase][i];
        if (cudaSetDevice(p->ddev) != cudaSuccess ||
            cudaMemcpyPeerAsync(p->dst, p->ddev, p->src, p->sdev, p->bytes, m->st[p->ddev]) != cudaSuccess) {
            (void)cudaGetLastError();
            return HR_ERR_DEVICE;
        }
    }
    return HR_OK;
}

static hr_status ct_wait(hr_transport *t, int phase)
{
    (void)phase;
    cuda_tr *m = (cuda_tr *)t->impl;
    for (int d = 0; d < CT_MAX_DEV; d++)
        if (m->st[d] && (cudaSetDevice(d) != cudaSuccess || cudaStreamSynchronize(m->st[d]) != cudaSuccess)) {
            (void)cudaGetLastError();
            return HR_ERR_DEVICE;
        }
    return HR_OK;
}

static void ct_destroy(hr_transport *t)
{
    if (!t) return;
    cuda_tr *m = (cuda_tr *)t->impl;
    if (m) {
        for (int p = 0; p < HR_MAX_PHASES; p++)
            free(m->pairs[p]);
        for (int d = 0; d < CT_MAX_DEV; d++)
            if (m->st[d]) {
                cudaSetDevice(d);
                cudaStreamDestroy(m->st[d]);
            }
        (void)cudaGetLastError();
        if (m->host) m->host->ops->destroy(m->host);
        free(m->dev);
        free(m);
    }
    free(t);
}

static const hr_transport_ops cuda_ops = {
    "cuda-peer",
    ct_bind,
    ct_start,
    ct_wait,
    hr_wrap_sum_norms,
    hr_wrap_max_int,
    hr_wrap_max_double,
    hr_wrap_alloc,
    hr_wrap_release,
    ct_destroy,
    NULL, /* progress: the copies run on streams */
    NULL, /* slot: device buffers */
    NULL, /* grid_share, grid_link, grid_free, round: no mapped planes between devices */
    NULL,
    NULL,
    NULL,
};

extern "C" hr_status hri_transport_cuda_create(int count, const int *device, hr_transport **out)
{
    *out = NULL;
    hr_transport *t = (hr_transport *)calloc(1, sizeof *t);
    cuda_tr *m = (cuda_tr *)calloc(1, sizeof *m);
    int *dev = (int *)malloc((size_t)count * sizeof *dev);
    /* all subdomains are here: the in-process transport's norms (subdomain order) and flags */
    if (!t || !m || !dev || hri_transport_inproc_create(count, &m->host) != HR_OK) {
        free(t);
        free(m);
        free(dev);
        return HR_ERR_NO_MEMORY;
    }
    memcpy(dev, device, (size_t)count * sizeof *dev);
    m->count = count;
    m->dev = dev;
    /* direct NVLink / PCIe copies where the devices allow it (else the driver stages) */
    for (int a = 0; a < count; a++)
        for (int b = 0; b < count; b++) {
            if (dev[a] == dev[b]) continue;
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, dev[a], dev[b]) == cudaSuccess && can &&
                cudaSetDevice(dev[a]) == cudaSuccess)
                cudaDeviceEnablePeerAccess(dev[b], 0); /* "already enabled" is fine */
            (void)cudaGetLastError();
        }
    t->ops = &cuda_ops;
    t->nlocal = count;
    t->first = 0;
    t->device_buffers = 1;
    t->impl = m;
    *out = t;
    return HR_OK;
}
