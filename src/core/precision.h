/* The one precision enum (hetrelax.h) as sizes: HR_PREC_DEFAULT means double everywhere. */
#ifndef HR_PRECISION_H
#define HR_PRECISION_H
#include <stddef.h>

#include "hetrelax/hetrelax.h"

/* Bytes of one value of a grid or array of precision p (default and double: 8; mixed keeps
 * its solution in fp64: 8). */
static inline size_t hr_prec_bytes(hr_precision p)
{
    return p == HR_PREC_SINGLE ? 4 : 8;
}

/* 1 for the precisions an array argument or a relaxation grid may take: default, single,
 * double (mixed names a multigrid mode, not a storage type). */
static inline int hr_prec_is_storage(hr_precision p)
{
    return p == HR_PREC_DEFAULT || p == HR_PREC_SINGLE || p == HR_PREC_DOUBLE;
}

#endif
