/* Builds without NCCL (see transport_nccl.h): the NCCL transport is refused. */
#include <stdio.h>

#include "parallel/transport/cuda/transport_nccl.h"

int hri_nccl_available(void)
{
    return 0;
}

hr_status hri_nccl_unique_id(unsigned char id[HR_NCCL_ID_BYTES], char *err, size_t es)
{
    (void)id;
    if (err && es) snprintf(err, es, "nccl: this build has no NCCL");
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_transport_nccl_create(hr_transport *host, int nranks, int device,
                                    const unsigned char id[HR_NCCL_ID_BYTES], double timeout,
                                    hr_transport **out, char *err, size_t es)
{
    (void)host;
    (void)nranks;
    (void)device;
    (void)id;
    (void)timeout;
    if (out) *out = NULL;
    if (err && es) snprintf(err, es, "nccl: this build has no NCCL");
    return HR_ERR_UNSUPPORTED;
}

hr_status hri_nccl_rows_create(int nranks, int rank, int device, const unsigned char id[HR_NCCL_ID_BYTES],
                               hr_nccl_rows **out, char *err, size_t es)
{
    (void)nranks;
    (void)rank;
    (void)device;
    (void)id;
    *out = NULL;
    if (err && es) snprintf(err, es, "nccl: this build has no NCCL");
    return HR_ERR_UNSUPPORTED;
}

void hri_nccl_rows_free(hr_nccl_rows *c)
{
    (void)c;
}

int hri_nccl_rows_halo(hr_nccl_rows *c, void *stream, int below, int above, const void *send_lo,
                       void *recv_lo, const void *send_hi, void *recv_hi, size_t bytes, char *err, size_t es)
{
    (void)c, (void)stream, (void)below, (void)above, (void)send_lo, (void)recv_lo, (void)send_hi;
    (void)recv_hi, (void)bytes;
    if (err && es) snprintf(err, es, "nccl: this build has no NCCL");
    return -1;
}

int hri_nccl_rows_allgather(hr_nccl_rows *c, void *stream, int rank, int size, double *buf, const int *counts,
                            const int *displs, char *err, size_t es)
{
    (void)c, (void)stream, (void)rank, (void)size, (void)buf, (void)counts, (void)displs;
    if (err && es) snprintf(err, es, "nccl: this build has no NCCL");
    return -1;
}
