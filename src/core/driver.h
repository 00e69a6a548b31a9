/*
 * The one iteration driver: every solver (2-D and 3-D grids, sparse systems, and the
 * multi-device schedules built on them) advances its state through hri_drive(), which
 * owns stopping, residual checks, monitors, history, divergence and per-phase timers.
 * PETSc's KSP loop is the model. A client provides two callbacks: advance the state by
 * `count` iterations, and compute the current relative residual.
 */
#ifndef HR_DRIVER_H
#define HR_DRIVER_H

#include <signal.h>
#include <stddef.h>

#include "core/internal_api.h"
#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds spent per phase; advance() adds what it spends exchanging halos to `exchange`. */
typedef struct hr_phase_times {
    double compute;  /* advance() less exchange */
    double exchange; /* halo exchange not hidden behind compute */
    double residual; /* residual checks */
    double total;    /* the whole loop */
} hr_phase_times;

/* Residual history: (iteration, relative residual) at every check. */
typedef struct hr_history {
    long *it;
    double *res;
    size_t len, cap;
} hr_history;

hr_status hri_history_push(hr_history *h, long it, double r);
HR_INTERNAL_API void hri_history_free(hr_history *h);

typedef struct hr_driver_ops {
    void *ctx;
    /* Advances the state by `count` (>= 1) iterations. */
    hr_status (*advance)(void *ctx, long count, hr_phase_times *t);
    /* The current relative residual. */
    hr_status (*residual)(void *ctx, double *rel);
    /* Optional: the next iteration after `done` at which advance() must return (a
     * change of fault state, say); <= done or -1 for none. */
    long (*next_stop)(void *ctx, long done);
    /* Optional, for clients that test convergence inside advance() (device-side checks):
     * called after each advance() to `stop`; reports the iteration actually reached
     * (<= stop: a check inside may have stopped early) and the residual there. With it the
     * driver makes no residual() calls and does not cut at check intervals. */
    hr_status (*checked)(void *ctx, long stop, long *reached, double *rel);
} hr_driver_ops;

typedef struct hr_driver_cfg {
    long max_iters;     /* iterations at most */
    double tol;         /* converged when the checked residual < tol; 0: no checks */
    long check_every;   /* check interval when tol > 0 */
    long monitor_every; /* monitor interval (0: none) */
    hr_monitor_fn monitor;
    void *monitor_user;
    double divref; /* diverged when the checked residual > divref (<= 0: never) */
    long first;    /* iteration number of the first iteration of this run (for monitors) */
    /* optional: a stop request (a signal handler's flag), tested after every advance */
    const volatile sig_atomic_t *stop;
    /* with a stop flag: end advance() calls early (growing chunks) so that a request is
     * answered within ~0.1 s; off for kernels whose calls are part of their schedule */
    int poll;
} hr_driver_cfg;

typedef struct hr_driver_out {
    long done;        /* iterations done in this run */
    hr_reason reason; /* HR_REASON_ITERS when the loop ran out */
    double last_rel;  /* last checked residual (NaN when none was checked) */
} hr_driver_out;

/* Runs the loop. Returns a callback's error as is; reasons (converged, diverged, NaN,
 * stopped) are not errors. `hist` may be NULL. */
HR_INTERNAL_API hr_status hri_drive(const hr_driver_ops *ops, const hr_driver_cfg *cfg, hr_history *hist,
                                   hr_phase_times *t, hr_driver_out *out);

/* The reason a final residual gives, when the loop itself ended on iterations. */
HR_INTERNAL_API hr_reason hri_driver_final_reason(hr_reason loop, double rel, double tol, double divref);

#ifdef __cplusplus
}
#endif
#endif
