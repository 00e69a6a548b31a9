/*
 * The CUDA IPC transport (decomp/transport.h) for GPU ranks of one node: every receive
 * buffer has two landing buffers in its rank's device memory (rounds alternate between
 * them), exported with cudaIpcGetMemHandle and mapped by the sending rank, whose pack
 * kernel writes the face straight into them over NVLink (or a peer copy moves it where the
 * devices cannot reach each other's memory). The host only says "round r is there": one
 * 8-byte message per halo through the transport it wraps (MPI), which also carries the
 * norms, flags and timers. One subdomain per rank, rank = subdomain id; ranks may share a
 * device. Without CUDA the functions below return HR_ERR_UNSUPPORTED / 0.
 */
#ifndef HR_TRANSPORT_IPC_H
#define HR_TRANSPORT_IPC_H

#include "core/internal_api.h"
#include "parallel/transport/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build has the IPC transport (a CUDA build). */
HR_INTERNAL_API int hri_ipc_available(void);

/* Whether the device can write into peer's memory directly (or is the same device); -1 when
 * either is not a device of this process. */
int hri_ipc_peer_direct(int device, int peer);

/* The transport over `host` (nlocal 1, first = this rank), on `device`. Local: nothing is
 * exchanged until the first start of each phase, which every rank of the solve reaches
 * together (the landing buffers' handles travel then, and a failure on any rank ends every
 * rank's start with an error instead of a hang). `host` is taken on success. On failure
 * writes "ipc: reason" into err. */
HR_INTERNAL_API hr_status hri_transport_ipc_create(hr_transport *host, int device, hr_transport **out,
                                                  char *err, size_t es);

#ifdef __cplusplus
}
#endif
#endif
