/*
 * The one transport interface for halo exchanges and the few collectives a decomposed
 * solve needs. A transport moves dense buffers between subdomains; it never looks into
 * grids. Implementations:
 *   - in-process (transport_inproc.c): all subdomains in one process, memcpy between
 *     their buffers;
 *   - MPI (src/parallel/transport/mpi/transport_mpi.c): one subdomain per rank, MPI_Isend/Irecv of host
 *     buffers, MPI_Allgather for the norms;
 *   - CUDA peer copies between the GPUs of one process (src/parallel/transport/cuda/transport_cuda.cu), with
 *     device buffers (`device_buffers` 1); the MPI transport sets it when the library is
 *     CUDA-aware (MPIX_Query_cuda_support), else a GPU placement stages messages through
 *     pinned host buffers. Buffers of GPU subdomains come from the placement
 *     (hr_dplace_ops.buf_alloc), not from `alloc`;
 *   - NCCL (src/parallel/transport/cuda/transport_nccl.cu): GPU ranks' device buffers by ncclSend/ncclRecv,
 *     the collectives through the MPI transport it wraps.
 *
 * Messages are registered once per exchange phase (`bind`, like MPI persistent
 * requests) and then started and completed every round: buffers never move.
 */
#ifndef HR_TRANSPORT_H
#define HR_TRANSPORT_H

#include <stddef.h>

#include "reference/stencil_cpu.h"
#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_MAX_PHASES 3

/* One halo message: the slab `from` sends across its face (axis, side) to `to`, who
 * receives it into its ghost layers on the opposite side. tag = 2 * axis + the sender's
 * side, so a receiver expects tag 2 * axis + (1 - its side). */
typedef struct hr_halo_msg {
    int from, to, tag;
    void *buf;
    size_t bytes;
} hr_halo_msg;

typedef struct hr_transport hr_transport;

/* A host grid whose planes other processes of the node map (zero-copy ghost planes, see
 * hr_transport_ops.grid_share): window k (plane k, padding included) is the `window`
 * bytes at base + k * window, `window` a page multiple (the layout's plane stride). */
typedef struct hr_shared_grid {
    int id, which;    /* the subdomain (its process's) and its grid, 0 or 1 */
    int planes;       /* windows: local nz + 2 */
    size_t window;    /* bytes */
    int nb[2];        /* the subdomain below and above along z (-1: the physical boundary) */
    int nb_planes[2]; /* their windows */
} hr_shared_grid;

typedef struct hr_transport_ops {
    const char *name;
    /* Registers the sends and receives of exchange phase `phase` (< HR_MAX_PHASES) of
     * every subdomain this process owns. The arrays are copied; the buffers stay put. */
    hr_status (*bind)(hr_transport *t, int phase, const hr_halo_msg *sends, int nsend,
                      const hr_halo_msg *recvs, int nrecv);
    /* Posts the phase's receives and sends (the send buffers are packed). */
    hr_status (*start)(hr_transport *t, int phase);
    /* Completes the phase: every receive buffer holds its data. */
    hr_status (*wait)(hr_transport *t, int phase);
    /* Combines every process's `n` partial norms, in subdomain order (so the result does
     * not depend on timing), into v on every process. `v` holds this process's partials,
     * one per owned subdomain and quantity: layout [local][n]. */
    hr_status (*sum_norms)(hr_transport *t, hr_norm2 *v, int n);
    /* Every process gets the largest of the values (statuses, stop flags). */
    hr_status (*max_int)(hr_transport *t, int *v, int n);
    /* Every process gets the largest of the values (timers). */
    hr_status (*max_double)(hr_transport *t, double *v, int n);
    /* Buffers for messages (host memory here; pinned or device memory elsewhere). */
    void *(*alloc)(hr_transport *t, size_t bytes);
    void (*release)(hr_transport *t, void *p);
    void (*destroy)(hr_transport *t);
    /* Optional (NULL: nothing to do): lets the phase's messages advance while the caller
     * computes. MPI's shared-memory and rendezvous transfers move only inside MPI calls, so
     * without it a large halo travels in `wait`, after the inner sweep, not during it. */
    hr_status (*progress)(hr_transport *t, int phase);
    /* Optional (NULL: pack into and unpack from the bound buffers): in-place messages. For
     * a bound send buffer, called before packing a round: where to pack it instead (start
     * then sends it without copying it in). For a bound receive buffer, called before the
     * round's wait: where its data will be after the wait, to unpack from (valid until the
     * next call for it). Each round may use it or not, message by message. */
    void *(*slot)(hr_transport *t, int phase, const void *buf);
    /* Optional (NULL: halos travel as messages): zero-copy ghost planes between the
     * processes of one node. grid_share maps a grid of g->planes windows that other
     * processes can map too and returns its base (NULL on failure); grid_link then maps,
     * over its windows 0 and planes - 1, the neighbours' last and first own planes (of
     * their grid `which`), so their sweeps' writes are this grid's ghost planes;
     * grid_free unmaps. Exchanging is then only agreeing on the round: `round` publishes
     * that this process reached round r and waits until neighbours nb[0..1] (-1: none) have
     * too. Called by every process with the same rounds. */
    void *(*grid_share)(hr_transport *t, const hr_shared_grid *g);
    hr_status (*grid_link)(hr_transport *t, void *base, const hr_shared_grid *g);
    void (*grid_free)(hr_transport *t, void *base, const hr_shared_grid *g);
    hr_status (*round)(hr_transport *t, long long r, const int nb[2]);
} hr_transport_ops;

struct hr_transport {
    const hr_transport_ops *ops;
    int nlocal;         /* subdomains owned by this process */
    int first;          /* id of the first one (they are consecutive) */
    int device_buffers; /* 1: message buffers are device memory (a CUDA-aware, NCCL or peer transport) */
    void *impl;
    char err[200]; /* why the last failing operation failed, where the transport can say ("" if not) */
};

/* The in-process transport for subdomains [0, count). */
hr_status hri_transport_inproc_create(int count, hr_transport **out);

#ifdef __cplusplus
}
#endif
#endif
