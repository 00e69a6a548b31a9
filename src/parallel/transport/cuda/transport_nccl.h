/*
 * The NCCL transport (decomp/transport.h) for GPU ranks: the halo messages of a phase
 * are ncclRecv / ncclSend of the placement's device buffers inside one
 * ncclGroupStart / ncclGroupEnd, on a high-priority exchange stream of the rank's GPU;
 * the norms, flags and timers (host values) and host buffers go through the transport it
 * wraps (MPI). One subdomain per rank, rank = subdomain id, one rank per GPU (NCCL
 * refuses two ranks of a communicator on one device). Built when CMake finds NCCL
 * (HETRELAX_ENABLE_NCCL); otherwise the functions below return HR_ERR_UNSUPPORTED.
 */
#ifndef HR_TRANSPORT_NCCL_H
#define HR_TRANSPORT_NCCL_H

#include "core/internal_api.h"
#include "parallel/transport/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_NCCL_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */

/* 1 when this build has the NCCL transport. */
HR_INTERNAL_API int hri_nccl_available(void);

/* The communicator's identity (ncclGetUniqueId), made on one rank and sent to all. On
 * failure writes "nccl: reason" into err. */
HR_INTERNAL_API hr_status hri_nccl_unique_id(unsigned char id[HR_NCCL_ID_BYTES], char *err, size_t es);

/* Collective over the nranks ranks (ncclCommInitRank on `device`): every rank must call it
 * with the same id, so agree on every earlier failure first. `host` (nlocal 1, first =
 * this rank) carries the collectives and is taken on success (destroyed with the NCCL
 * transport); on failure the caller keeps it. A wait gives up after `timeout` seconds (<= 0:
 * never). On failure writes "nccl: reason" into err. */
HR_INTERNAL_API hr_status hri_transport_nccl_create(hr_transport *host, int nranks, int device,
                                                    const unsigned char id[HR_NCCL_ID_BYTES], double timeout,
                                                    hr_transport **out, char *err, size_t es);

/* A bare communicator for an engine that moves device rows on its own stream (the
 * general-problem engine's halos on GPU ranks): collective like hri_transport_nccl_create,
 * one rank per GPU. */
typedef struct hr_nccl_rows hr_nccl_rows;
HR_INTERNAL_API hr_status hri_nccl_rows_create(int nranks, int rank, int device,
                                               const unsigned char id[HR_NCCL_ID_BYTES], hr_nccl_rows **out,
                                               char *err, size_t es);
HR_INTERNAL_API void hri_nccl_rows_free(hr_nccl_rows *c);
/* One group on `stream` (a cudaStream_t): `bytes` from send_hi to the rank `above`, into
 * recv_lo from the rank `below`, from send_lo to `below`, into recv_hi from `above` (a peer
 * < 0 is skipped). Returns 0, or -1 with the reason in err. */
int hri_nccl_rows_halo(hr_nccl_rows *c, void *stream, int below, int above, const void *send_lo,
                       void *recv_lo, const void *send_hi, void *recv_hi, size_t bytes, char *err, size_t es);
/* In place, one group on `stream`: every rank's counts[r] doubles at buf + displs[r] (device
 * memory) to every rank, as MPI_Allgatherv with MPI_IN_PLACE. Returns 0, or -1 with the
 * reason in err. */
int hri_nccl_rows_allgather(hr_nccl_rows *c, void *stream, int rank, int size, double *buf, const int *counts,
                            const int *displs, char *err, size_t es);

#ifdef __cplusplus
}
#endif
#endif
