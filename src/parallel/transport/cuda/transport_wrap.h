/*
 * For transports that move the halo messages themselves (device buffers: CUDA peer copies,
 * NCCL) and leave the host values (norm sums, max reductions of flags and timers, host
 * buffers) to a transport they wrap (in-process, MPI). Their impl struct begins with that
 * transport's pointer; these operations go to it.
 */
#ifndef HR_TRANSPORT_WRAP_H
#define HR_TRANSPORT_WRAP_H

#include "parallel/transport/transport.h"

static inline hr_transport *hr_wrapped(hr_transport *t)
{
    return *(hr_transport **)t->impl; /* the impl's first member */
}

static hr_status hr_wrap_sum_norms(hr_transport *t, hr_norm2 *v, int n)
{
    hr_transport *h = hr_wrapped(t);
    return h->ops->sum_norms(h, v, n);
}

static hr_status hr_wrap_max_int(hr_transport *t, int *v, int n)
{
    hr_transport *h = hr_wrapped(t);
    return h->ops->max_int(h, v, n);
}

static hr_status hr_wrap_max_double(hr_transport *t, double *v, int n)
{
    hr_transport *h = hr_wrapped(t);
    return h->ops->max_double(h, v, n);
}

static void *hr_wrap_alloc(hr_transport *t, size_t bytes)
{
    hr_transport *h = hr_wrapped(t);
    return h->ops->alloc(h, bytes);
}

static void hr_wrap_release(hr_transport *t, void *p)
{
    hr_transport *h = hr_wrapped(t);
    h->ops->release(h, p);
}

#endif
