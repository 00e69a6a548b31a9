/*
 * The conjugate gradient recurrence, written once for the CPU solvers (the sparse CG and
 * the multigrid handle's CG and MG-preconditioned CG). The vectors stay the caller's: the
 * ops work on its x, r, p, q = A p and z = M r in their own layout and their own reduction
 * order, so each caller keeps its iterates bit for bit; this file holds the scalars and the
 * order of the steps. The CUDA solvers issue the same steps as kernels whose scalars stay on
 * the device (recorded into graphs, or launched from the device loop), sharing the scalar
 * rules of cg_rules.h.
 *
 * One step, after the caller's start (r = b - A x, z = M r, p = z, rz = r.z, rr = r.r):
 *   pq = p . A p;  alpha = rz / pq;  x += alpha p, r -= alpha q (rr = r . r);
 *   z = M r (rz' = r . z; rz' = rr without M);  beta = rz' / rz;  p = z + beta p.
 *
 * Every member of a thread team may run hri_cg_iterate with its own ops context: the ops
 * then hold the team's barriers, and every member must get the same reductions (or set
 * lockstep, below).
 */
#ifndef HR_KRYLOV_CG_H
#define HR_KRYLOV_CG_H

typedef struct hr_cg_ops {
    void *ctx;
    /* q = A p; returns p . q */
    double (*apply_dot)(void *ctx);
    /* x += alpha p, r -= alpha q; returns r . r */
    double (*update)(void *ctx, double alpha);
    /* z = M r; returns r . z. NULL: no preconditioner (z is r, r . z is r . r) */
    double (*precondition)(void *ctx);
    /* p = z + beta p (a team's barrier after it: the next product reads all of p) */
    void (*xpay)(void *ctx, double beta);
    /* After step k (1-based, of this call) with r . r: nonzero stops there. NULL: none. */
    int (*check)(void *ctx, long k, double rr);
    /* 0: stop when r . r is not positive (solved exactly, or NaN) and on breakdown.
     * 1: run every step whatever the values (members of a team whose reductions only some
     * members hold): alpha is 0 when p . q or r . z is not positive, beta 0 when r . z is
     * not; no breakdown is reported. */
    int lockstep;
} hr_cg_ops;

typedef enum {
    HR_CG_COUNT,     /* ran the steps asked for */
    HR_CG_ZERO,      /* r . r not positive: solved exactly (or NaN: the caller's residual says) */
    HR_CG_BREAKDOWN, /* p . A p <= 0 (or NaN): A is not positive definite along p */
    HR_CG_STOPPED,   /* the check hook asked */
} hr_cg_stop;

typedef struct hr_cg_scalars {
    double rz, rr; /* r . z and r . r of the current r (rz = rr without a preconditioner) */
} hr_cg_scalars;

typedef struct hr_cg_out {
    long done;           /* steps completed by this call */
    hr_cg_stop stop;     /* why it returned */
    double breakdown_pq; /* HR_CG_BREAKDOWN: p . A p at step done + 1 */
} hr_cg_out;

/* Up to `count` steps from `s` (updated in place). */
void hri_cg_iterate(const hr_cg_ops *ops, hr_cg_scalars *s, long count, hr_cg_out *out);

#endif
