/*
 * The conjugate gradient's scalar rules, written once for every CG of hetrelax: the host
 * recurrence (cg.c, lockstep members of a team) and the GPU CGs, whose scalars stay on the
 * device (the multigrid handle's, mg/cuda/mg_gpu_outer.cuh; the sparse one,
 * sparse/cuda/sparse_cg.cu). A step is alpha = r.z / p.Ap, x += alpha p, r -= alpha q,
 * z = M r, beta = r.z' / r.z, p = z + beta p (cg.h).
 */
#ifndef HRI_CG_RULES_H
#define HRI_CG_RULES_H

#ifdef __CUDACC__
#define HRI_CG_HD __host__ __device__
#else
#define HRI_CG_HD
#endif

/* alpha = r.z / p.Ap, or 0 where either is not positive (solved exactly, a breakdown, NaN):
 * x and r then stay as they are */
static inline HRI_CG_HD double hri_cg_alpha(double rz, double pq)
{
    return pq > 0.0 && rz > 0.0 ? rz / pq : 0.0;
}

/* beta = r.z (new) / r.z (old), or 0 where the old one is not positive (p restarts as z) */
static inline HRI_CG_HD double hri_cg_beta(double rz_new, double rz_old)
{
    return rz_old > 0.0 ? rz_new / rz_old : 0.0;
}

#endif
