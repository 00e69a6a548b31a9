/* The MPI transport (see decomp/transport.h): rank r owns subdomain r. */
#ifndef HR_TRANSPORT_MPI_H
#define HR_TRANSPORT_MPI_H

#include <mpi.h>

#include "parallel/transport/transport.h"

/* A transport over `comm` (not duplicated here: the caller owns it and frees it after).
 * shm_prefix (from hri_mpi_shm_setup; NULL or "": none): halo messages travel through
 * shared-memory segments of ours (transport_shm.c) instead of MPI point-to-point. tune
 * (may be NULL): the options' knobs (mpi_cuda_aware). */
hr_status hri_transport_mpi_create(MPI_Comm comm, const char *shm_prefix, const hr_tuning *tune,
                                  hr_transport **out);

/* Collective over comm: 1 when every rank of comm runs on one node (shares memory). */
int hri_mpi_all_on_node(MPI_Comm comm);

/* Collective over comm: 1 when every rank runs on this node and tune->mpi_shm is not off
 * (on any rank), with prefix (the same on every rank) naming the solve's segments; else 0
 * and "". tune may be NULL (the defaults). */
int hri_mpi_shm_setup(MPI_Comm comm, const hr_tuning *tune, char prefix[48]);

/* The shared-memory halo messages (transport_shm.c). */
struct hr_shm_tr;
hr_status hri_shm_create(int rank, const char *prefix, struct hr_shm_tr **out);
void hri_shm_free(struct hr_shm_tr *t);
hr_status hri_shm_bind(struct hr_shm_tr *t, int phase, const hr_halo_msg *sends, int nsend,
                      const hr_halo_msg *recvs, int nrecv);
hr_status hri_shm_start(struct hr_shm_tr *t, int phase);
hr_status hri_shm_wait(struct hr_shm_tr *t, int phase);
/* hr_transport_ops.slot for the shared-memory halos (transport_shm.c). */
void *hri_shm_slot(struct hr_shm_tr *t, int phase, const void *buf);

/* A waiting loop's pause (yields the core now and then, for oversubscribed ranks). */
void hri_shm_spin_pause(unsigned *spins);

/* Zero-copy ghost planes (shm_grids.c): the mpi-shm transport's grid_share, grid_link,
 * grid_free and round (decomp/transport.h). */
struct hr_shm_grids;
hr_status hri_shm_grids_create(int rank, const char *prefix, struct hr_shm_grids **out);
void hri_shm_grids_free(struct hr_shm_grids *g);
void *hri_shm_grid_share(struct hr_shm_grids *g, const hr_shared_grid *sg);
hr_status hri_shm_grid_link(struct hr_shm_grids *g, void *base, const hr_shared_grid *sg);
void hri_shm_grid_free(void *base, const hr_shared_grid *sg);
hr_status hri_shm_round(struct hr_shm_grids *g, long long r, const int nb[2]);

/* 1 when the MPI library takes device pointers (OpenMPI's MPIX_Query_cuda_support) and
 * tune->mpi_cuda_aware is not off (tune may be NULL); then GPU ranks send device buffers. */
int hri_mpi_cuda_aware(const hr_tuning *tune);

#endif
