/* The in-process transport: every subdomain lives in this process and a message is one
 * memcpy from the sender's buffer to the receiver's. Pairs are matched once, at bind. */
#include <stdlib.h>
#include <string.h>

#include "parallel/transport/transport.h"

typedef struct copy_pair {
    const void *src;
    void *dst;
    size_t bytes;
} copy_pair;

typedef struct inproc {
    copy_pair *pairs[HR_MAX_PHASES];
    int npairs[HR_MAX_PHASES];
} inproc;

static hr_status ip_bind(hr_transport *t, int phase, const hr_halo_msg *sends, int nsend,
                         const hr_halo_msg *recvs, int nrecv)
{
    inproc *ip = t->impl;
    if (phase < 0 || phase >= HR_MAX_PHASES) return HR_ERR_INTERNAL;
    free(ip->pairs[phase]);
    ip->pairs[phase] = NULL;
    ip->npairs[phase] = 0;
    if (nrecv == 0) return HR_OK;
    copy_pair *p = calloc((size_t)nrecv, sizeof *p);
    if (!p) return HR_ERR_NO_MEMORY;
    for (int r = 0; r < nrecv; r++) {
        const hr_halo_msg *rv = &recvs[r];
        int found = -1;
        for (int s = 0; s < nsend && found < 0; s++)
            if (sends[s].from == rv->from && sends[s].to == rv->to && sends[s].tag == rv->tag) found = s;
        if (found < 0 || sends[found].bytes != rv->bytes) {
            free(p);
            return HR_ERR_INTERNAL; /* a receive without its matching send: a decomposition bug */
        }
        p[r] = (copy_pair){sends[found].buf, rv->buf, rv->bytes};
    }
    ip->pairs[phase] = p;
    ip->npairs[phase] = nrecv;
    return HR_OK;
}

static hr_status ip_start(hr_transport *t, int phase)
{
    inproc *ip = t->impl;
    for (int i = 0; i < ip->npairs[phase]; i++)
        memcpy(ip->pairs[phase][i].dst, ip->pairs[phase][i].src, ip->pairs[phase][i].bytes);
    return HR_OK;
}

static hr_status ip_wait(hr_transport *t, int phase)
{
    (void)t;
    (void)phase;
    return HR_OK;
}

/* One process holds every partial: combine them in subdomain order into v[0..n). */
static hr_status ip_sum_norms(hr_transport *t, hr_norm2 *v, int n)
{
    for (int q = 0; q < n; q++) {
        hr_norm2 acc = {0.0, 0.0};
        for (int s = 0; s < t->nlocal; s++)
            hr_norm2_add(&acc, v[(size_t)s * n + q]);
        v[q] = acc;
    }
    return HR_OK;
}

static hr_status ip_max_int(hr_transport *t, int *v, int n)
{
    (void)t;
    (void)v;
    (void)n;
    return HR_OK;
}

static hr_status ip_max_double(hr_transport *t, double *v, int n)
{
    (void)t;
    (void)v;
    (void)n;
    return HR_OK;
}

static void *ip_alloc(hr_transport *t, size_t bytes)
{
    (void)t;
    return malloc(bytes ? bytes : 1);
}

static void ip_release(hr_transport *t, void *p)
{
    (void)t;
    free(p);
}

static void ip_destroy(hr_transport *t)
{
    if (!t) return;
    inproc *ip = t->impl;
    if (ip)
        for (int p = 0; p < HR_MAX_PHASES; p++)
            free(ip->pairs[p]);
    free(ip);
    free(t);
}

static const hr_transport_ops inproc_ops = {
    .name = "inproc",
    .bind = ip_bind,
    .start = ip_start,
    .wait = ip_wait,
    .sum_norms = ip_sum_norms,
    .max_int = ip_max_int,
    .max_double = ip_max_double,
    .alloc = ip_alloc,
    .release = ip_release,
    .destroy = ip_destroy,
};

hr_status hri_transport_inproc_create(int count, hr_transport **out)
{
    *out = NULL;
    hr_transport *t = calloc(1, sizeof *t);
    inproc *ip = calloc(1, sizeof *ip);
    if (!t || !ip) {
        free(t);
        free(ip);
        return HR_ERR_NO_MEMORY;
    }
    t->ops = &inproc_ops;
    t->nlocal = count;
    t->first = 0;
    t->impl = ip;
    *out = t;
    return HR_OK;
}
