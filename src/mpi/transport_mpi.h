/* The MPI transport (see decomp/transport.h): rank r owns subdomain r. */
#ifndef HR_TRANSPORT_MPI_H
#define HR_TRANSPORT_MPI_H

#include <mpi.h>

#include "decomp/transport.h"

/* A transport over `comm` (not duplicated here: the caller owns it and frees it after). */
hr_status hr_transport_mpi_create(MPI_Comm comm, hr_transport **out);

/* 1 when the MPI library takes device pointers (OpenMPI's MPIX_Query_cuda_support) and
 * HETRELAX_MPI_CUDA_AWARE is not 0; then GPU ranks send device buffers. */
int hr_mpi_cuda_aware(void);

#endif
