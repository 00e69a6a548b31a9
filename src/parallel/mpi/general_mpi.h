/*
 * General problems on MPI ranks (general_mpi.c): the general-problem engine on a slab of the
 * last axis per rank.
 */
#ifndef HR_GENERAL_MPI_H
#define HR_GENERAL_MPI_H

#include <mpi.h>
#include <stddef.h>

#include "hetrelax/hetrelax.h"

/* Sets up s's general engine on this rank's slab; *comm the ranks' state (hri_general_mpi_free
 * after the engine). Not collective on failure paths beyond what the caller agrees. */
hr_status hri_general_mpi_create(hr_grid_solver *s, const hr_problem *p, MPI_Comm comm, void **comm_state,
                                char *why, size_t why_size);
void hri_general_mpi_free(void *comm_state);

#endif
