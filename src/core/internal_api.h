/*
 * HR_INTERNAL_API marks the internal functions that the MPI library (hetrelax_mpi, kept apart
 * so that programs without MPI never link MPI) calls in the core. A shared libhetrelax exports
 * these beside the HR_API functions and nothing else (tests/core/exports_test.sh); they are
 * no part of the API and no header in include/ declares them.
 */
#ifndef HR_INTERNAL_API_H
#define HR_INTERNAL_API_H

#include "hetrelax/export.h"

#define HR_INTERNAL_API HR_API

#endif
