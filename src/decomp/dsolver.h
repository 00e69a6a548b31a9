/*
 * The decomposed solver: the subdomains this process owns, swept by the CPU region sweep
 * and kept consistent by halo exchanges through a transport (transport.h), with the
 * iteration loop of solver/driver.h. One code path for every transport: the in-process
 * run (all subdomains here) and MPI (one per rank).
 *
 * Schedule per round of m = min(ghost, remaining) sweeps: exchange the ghost zones
 * (ghost layers deep), then m sweeps, sweep s over the own points grown by m - s layers
 * towards each neighbour (redundant work instead of messages: communication avoiding).
 * Every point is updated from exactly the values the whole-grid sweep uses, so the
 * solution is bitwise that of cpu-seq for every decomposition and ghost width.
 */
#ifndef HR_DSOLVER_H
#define HR_DSOLVER_H

#include "decomp/decomp.h"
#include "decomp/transport.h"
#include "solver/driver.h"
#include "solver/solver_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a subdomain's placement does to its grids: the host versions are the region sweep,
 * the box residual and the host face copies (hr_field_ops_host). A GPU placement brings the
 * same four as device operations on device grids (docs/mpi.md); the schedule, the
 * transports and the bitwise argument do not change. */
typedef struct hr_field_ops {
    const char *name;
    void (*sweep)(const hr_sweep_args *a);
    void (*residual)(const hr_resid_args *a, hr_norm2 *rnorm, hr_norm2 *bnorm);
    void (*pack)(const hr_grid_layout *l, const void *origin, const hr_box *b, void *buf);
    void (*unpack)(const hr_grid_layout *l, void *origin, const hr_box *b, const void *buf);
} hr_field_ops;

extern const hr_field_ops hr_field_ops_host;

/* One owned subdomain: geometry, grids and message buffers per face. */
typedef struct hr_dsub {
    hr_subdomain g;
    hr_grid u[2];
    hr_grid hf; /* h^2 f over the whole local array (base NULL: inline spike or zero) */
    hr_rhs_view rhs;
    void *sbuf[3][2], *rbuf[3][2]; /* per axis and side; NULL towards the physical boundary */
    size_t bytes[3][2];
} hr_dsub;

/* Seconds per part of the exchange, summed over the run (for the JSON). */
typedef struct hr_exchange_times {
    double pack, transfer, unpack; /* transfer: posting and waiting, not hidden by compute */
    double hidden;                 /* inner sweeps done while messages were in flight */
    long rounds;
} hr_exchange_times;

typedef struct hr_dsolver {
    hr_options o;
    hr_problem p;
    hr_decomp d;
    hr_transport *t;          /* owned */
    const hr_field_ops *fops; /* where the grids live: hr_field_ops_host */
    int nlocal;
    hr_dsub *subs;
    int cur;     /* which of u[2] is current (the same in every subdomain) */
    int fresh;   /* ghost zones match the current own points (no sweep since the exchange) */
    int nphases; /* 1 (ghost 1: faces only) or dim (ghost > 1: axes in order, corners included) */
    int overlap; /* ghost 1: sweep the inner points while the halos travel (default on) */
    long done;   /* sweeps since create */
    hr_history hist;
    hr_exchange_times xt;
    hr_norm2 *norms;      /* 2 per owned subdomain: partial residual and rhs norms */
    struct hr_team *team; /* cpu-threads with threads > 1: sweeps split over a team, else NULL */
    double t_setup;
    char err[256];
} hr_dsolver;

/* Creates the subdomains the transport owns (t->first .. t->first + t->nlocal - 1) of the
 * decomposition parts[0] x parts[1] [x parts[2]] with `ghost` layers, and takes `t` (freed
 * with the solver, also on failure). Purely local: no collective calls. On failure writes
 * "field: reason" into err. */
hr_status hr_dsolver_create(const hr_options *o, const int parts[3], int ghost, hr_transport *t,
                            hr_dsolver **out, char *err, size_t err_size);

/* Runs the iteration (collective over the transport's processes): the same result on each. */
hr_status hr_dsolver_run(hr_dsolver *s, hr_result *res);

/* The global relative residual (collective). */
hr_status hr_dsolver_residual(hr_dsolver *s, double *rel);

/* Copies the own points of the owned subdomains into `global` (nx*ny[*nz] values of
 * precision prec, the layout of hr_solver_solution); other points are left alone. */
void hr_dsolver_own_to_global(const hr_dsolver *s, hr_precision prec, void *global);

/* Own points of owned subdomain `local` packed densely (x fastest), precision prec. */
void hr_dsolver_own_to_block(const hr_dsolver *s, int local, hr_precision prec, void *block);
/* Writes such a block of subdomain `id` into the global array. */
void hr_block_to_global(const hr_decomp *d, int id, hr_precision prec, const void *block, void *global);

void hr_dsolver_free(hr_dsolver *s);

/* The in-process run: all parts[0] x parts[1] [x parts[2]] subdomains in this process. */
hr_status hr_inproc_solver_create(const hr_options *o, const int parts[3], int ghost, hr_dsolver **out,
                                  char *err, size_t err_size);

#ifdef __cplusplus
}
#endif
#endif
