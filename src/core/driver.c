/* The iteration loop shared by every solver (see driver.h). */
#include "core/driver.h"

#include <math.h>
#include <stdlib.h>

#include "core/timer.h"

hr_status hri_history_push(hr_history *h, long it, double r)
{
    if (h->len == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        long *a = realloc(h->it, cap * sizeof *a);
        if (!a) return HR_ERR_NO_MEMORY;
        h->it = a;
        double *b = realloc(h->res, cap * sizeof *b);
        if (!b) return HR_ERR_NO_MEMORY;
        h->res = b;
        h->cap = cap;
    }
    h->it[h->len] = it;
    h->res[h->len] = r;
    h->len++;
    return HR_OK;
}

void hri_history_free(hr_history *h)
{
    free(h->it);
    free(h->res);
    h->it = NULL;
    h->res = NULL;
    h->len = h->cap = 0;
}

/* The next multiple of `every` after `done`, or -1 when every <= 0. */
static long next_multiple(long done, long every)
{
    return every > 0 ? (done / every + 1) * every : -1;
}

static void cut(long *stop, long at, long done)
{
    if (at > done && at < *stop) *stop = at;
}

hr_reason hri_driver_final_reason(hr_reason loop, double rel, double tol, double divref)
{
    if (isnan(rel) || isinf(rel)) return HR_REASON_NAN;
    if (loop != HR_REASON_ITERS) return loop;
    if (divref > 0.0 && rel > divref) return HR_REASON_DIVERGED;
    if (tol > 0.0 && rel < tol) return HR_REASON_CONVERGED;
    return HR_REASON_ITERS;
}

hr_status hri_drive(const hr_driver_ops *ops, const hr_driver_cfg *cfg, hr_history *hist, hr_phase_times *t,
                   hr_driver_out *out)
{
    const long check = cfg->tol > 0.0 ? cfg->check_every : 0;
    const long cut_check = ops->checked ? 0 : check; /* self-checking clients test every iteration */
    hr_status st = HR_OK;
    out->done = 0;
    out->reason = HR_REASON_ITERS;
    out->last_rel = NAN;
    const double t0 = hr_now();
    /* with a stop flag, chunks grow from 16 iterations until one takes ~50 ms, so a
     * request is answered quickly without a synchronisation every few sweeps */
    long poll = cfg->stop && cfg->poll ? 16 : 0;
    while (out->done < cfg->max_iters) {
        long done = out->done, stop = cfg->max_iters;
        cut(&stop, next_multiple(done, cut_check), done);
        cut(&stop, next_multiple(done, cfg->monitor_every), done);
        if (ops->next_stop) cut(&stop, ops->next_stop(ops->ctx, done), done);
        if (poll > 0) cut(&stop, done + poll, done);
        const double ex0 = t->exchange, ta = hr_now();
        st = ops->advance(ops->ctx, stop - done, t);
        const double took = hr_now() - ta;
        t->compute += took - (t->exchange - ex0);
        if (poll > 0 && took < 0.05 && stop - done == poll) poll *= 2;
        if (st != HR_OK) break;
        double rel = NAN;
        if (ops->checked) {
            long reached = stop;
            if ((st = ops->checked(ops->ctx, stop, &reached, &rel)) != HR_OK) break;
            stop = reached;
        }
        out->done = stop;
        if (cfg->stop && *cfg->stop) {
            out->reason = HR_REASON_STOPPED;
            break;
        }
        const int at_check = check > 0 && (ops->checked ? 1 : stop % check == 0);
        const int at_mon = cfg->monitor_every > 0 && stop % cfg->monitor_every == 0;
        if (!at_check && !at_mon) continue;
        if (!ops->checked) {
            const double tr = hr_now();
            st = ops->residual(ops->ctx, &rel);
            t->residual += hr_now() - tr;
            if (st != HR_OK) break;
        }
        out->last_rel = rel;
        if (hist && (st = hri_history_push(hist, stop, rel)) != HR_OK) break;
        if (at_mon && cfg->monitor && cfg->monitor(cfg->first + stop, rel, cfg->monitor_user)) {
            out->reason = HR_REASON_STOPPED;
            break;
        }
        if (isnan(rel) || isinf(rel)) {
            out->reason = HR_REASON_NAN;
            break;
        }
        if (cfg->divref > 0.0 && rel > cfg->divref) {
            out->reason = HR_REASON_DIVERGED;
            break;
        }
        if (at_check && rel < cfg->tol) {
            out->reason = HR_REASON_CONVERGED;
            break;
        }
    }
    t->total += hr_now() - t0;
    return st;
}
