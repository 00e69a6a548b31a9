/*
 * The conjugate gradient recurrence over the caller's ops (cg.h).
 */
#include "methods/krylov/cg.h"
#include "methods/krylov/cg_rules.h"

void hri_cg_iterate(const hr_cg_ops *ops, hr_cg_scalars *s, long count, hr_cg_out *out)
{
    void *ctx = ops->ctx;
    double rz = s->rz, rr = s->rr;
    long k = 0;
    hr_cg_stop stop = HR_CG_COUNT;
    double bpq = 0.0;
    for (; k < count; k++) {
        if (!ops->lockstep && !(rr > 0.0)) {
            stop = HR_CG_ZERO;
            break;
        }
        const double pq = ops->apply_dot(ctx);
        double alpha;
        if (ops->lockstep) {
            alpha = hri_cg_alpha(rz, pq);
        } else if (!(pq > 0.0)) { /* alpha would be meaningless */
            stop = HR_CG_BREAKDOWN;
            bpq = pq;
            break;
        } else {
            alpha = rz / pq;
        }
        rr = ops->update(ctx, alpha);
        const double rz1 = ops->precondition ? ops->precondition(ctx) : rr;
        const double beta = ops->lockstep ? hri_cg_beta(rz1, rz) : rz1 / rz;
        ops->xpay(ctx, beta);
        rz = rz1;
        if (ops->check && ops->check(ctx, k + 1, rr)) {
            k++;
            stop = HR_CG_STOPPED;
            break;
        }
    }
    s->rz = rz;
    s->rr = rr;
    out->done = k;
    out->stop = stop;
    out->breakdown_pq = bpq;
}
