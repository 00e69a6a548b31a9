/* The MPI transport (see decomp/transport.h): rank r owns subdomain r. */
#ifndef HR_TRANSPORT_MPI_H
#define HR_TRANSPORT_MPI_H

#include <mpi.h>

#include "decomp/transport.h"

/* A transport over `comm` (not duplicated here: the caller owns it and frees it after). */
hr_status hr_transport_mpi_create(MPI_Comm comm, hr_transport **out);

#endif
