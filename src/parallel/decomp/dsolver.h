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

#include "core/driver.h"
#include "core/internal_api.h"
#include "core/solver_internal.h"
#include "parallel/decomp/decomp.h"
#include "parallel/transport/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a subdomain's placement does to its grids. The host placement (hri_field_ops_host)
 * runs the region sweep, the box residual and the host face copies at once. A device
 * placement (hri_field_ops_gpu, src/parallel/decomp/cuda/dsolver_gpu.cu) queues the same operations on
 * device grids of the same layout: sweeps on a lane (HR_DLANE_SHELL: high-priority
 * stream, HR_DLANE_INNER: low-priority stream), a face's pack / unpack on that face's
 * stream after the shell lane's sweeps, and `sync` waits for them. `ctx` is the
 * subdomain's placement state (hr_dsub.ctx; NULL on the host). The schedule, the
 * transports and the bitwise argument do not change. */
enum { HR_DLANE_SHELL = 0, HR_DLANE_INNER = 1, HR_DLANE_FACES = 2, HR_DLANE_ALL = 3 };
/* Points of the device overlap's chain (hr_field_ops.mark). */
enum { HR_DMARK_SWEEP = 0, HR_DMARK_PACKED = 1, HR_DMARK_END = 2 };

typedef struct hr_field_ops {
    const char *name;
    int async; /* 1: operations are queued; the solver calls sync before using results */
    hr_status (*sweep)(void *ctx, const hr_sweep_args *a, int lane);
    hr_status (*residual)(void *ctx, const hr_resid_args *a, hr_norm2 *rnorm, hr_norm2 *bnorm);
    /* face = 2 * axis + side; the box's points go to / come from the dense buffer buf */
    hr_status (*pack)(void *ctx, int face, const hr_grid_layout *l, const void *origin, const hr_box *b,
                      void *buf);
    hr_status (*unpack)(void *ctx, int face, const hr_grid_layout *l, void *origin, const hr_box *b,
                        const void *buf);
    hr_status (*sync)(void *ctx, int lane); /* NULL: nothing is ever queued */
    /* Device overlap without host waits between sweeps (NULL: the host waits at the end of
     * each sweep). HR_DMARK_SWEEP: everything queued after it follows all work of the sweep
     * before (on every lane and face stream), which the device orders by events, not the
     * host; HR_DMARK_PACKED: after a sweep's packs; HR_DMARK_END: after the last sweep. */
    hr_status (*mark)(void *ctx, int what);
} hr_field_ops;

extern const hr_field_ops hri_field_ops_host;
/* The host operations flagged as queued: the solver then runs the device schedule (shell
 * first, faces packed from the new grid while the interior sweeps) on the CPU, so tests
 * without a GPU check that schedule bitwise. */
extern const hr_field_ops hri_field_ops_host_queued;

struct hr_dsub;
struct hr_dsolver;

/* A device placement for every owned subdomain (src/parallel/decomp/cuda/dsolver_gpu.cu; without CUDA a
 * stub that returns HR_ERR_NO_DEVICE). */
typedef struct hr_dplace_ops {
    /* Creates sub's device state on `device` (the host grids are initialised): device
     * grids uploaded, streams, and sets d->org / d->rhs to the device's. */
    hr_status (*create)(struct hr_dsolver *s, struct hr_dsub *d, int device, char *err, size_t es);
    /* Message buffer of `bytes` for face (axis, side), send or receive: device memory when
     * the transport takes device pointers (t->device_buffers), else pinned host memory
     * (the placement stages it through the device with copies on the face's stream). */
    void *(*buf_alloc)(void *ctx, int face, int recv, size_t bytes, int device_buffers);
    void (*buf_free)(void *ctx, void *p);
    /* Copies the device grid `which` into the host grid d->u[which]. */
    hr_status (*download)(void *ctx, struct hr_dsub *d, int which);
    /* The device times of the last sweep closed by a mark (once, when its events are
     * complete): v = {sweep, pack (shell end to faces on the host), chain (shell end to ghost
     * layers in place), exposed (chain past the interior's end), post (faces on the host to
     * ghost layers in place)} in seconds. 0: nothing new. */
    int (*lagged)(void *ctx, double v[5]);
    void (*destroy)(void *ctx);
    const char *(*device_name)(void *ctx);
} hr_dplace_ops;

extern const hr_field_ops hri_field_ops_gpu;
extern const hr_dplace_ops hri_dplace_gpu;

/* CUDA devices present (0 without CUDA). */
HR_INTERNAL_API int hri_dsolver_gpu_count(void);

/* The in-process transport between device buffers of subdomains on the GPUs of this
 * process: cudaMemcpyPeerAsync (device[id] holds subdomain id). HR_ERR_NO_DEVICE without
 * CUDA. */
hr_status hri_transport_cuda_create(int count, const int *device, hr_transport **out);

/* One owned subdomain: geometry, grids and message buffers per face. */
typedef struct hr_dsub {
    hr_subdomain g;
    hr_grid u[2];                  /* host grids (a device placement's copies for setup and download) */
    hr_grid hf;                    /* h^2 f over the whole local array (base NULL: inline spike or zero) */
    void *org[2];                  /* element (0, 0, 0) of the grids the field operations work on */
    hr_rhs_view rhs;               /* the operations' right-hand side (hf: a device pointer on a device) */
    void *ctx;                     /* placement state (NULL: host) */
    int device;                    /* GPU ordinal, -1 on the host */
    void *sbuf[3][2], *rbuf[3][2]; /* per axis and side; NULL towards the physical boundary */
    void *rfrom[3][2];             /* this round's received faces: rbuf or the transport's slot */
    size_t bytes[3][2];
    int pencil_rows;   /* host, 3-D: sweep boxes as pencils of this many rows streamed along z (0: whole) */
    int pencil_stream; /* host, 3-D: write the new grid with streaming stores */
} hr_dsub;

/* Seconds per part of the exchange, summed over the run (for the JSON). */
typedef struct hr_exchange_times {
    double pack, transfer, unpack; /* transfer: posting and waiting, not hidden by compute */
    double hidden;                 /* exchange time covered by inner sweeps (overlapped) */
    double wait;                   /* device overlap: exchange left after the interior was done */
    double compute;                /* device overlap: sweep time less the exposed exchange */
    long rounds;
} hr_exchange_times;

typedef struct hr_dsolver {
    hr_options o;
    hr_run_problem p;
    hr_decomp d;
    hr_transport *t;             /* owned */
    const hr_field_ops *fops;    /* where the grids live: hri_field_ops_host or _gpu */
    const hr_dplace_ops *dplace; /* the device placement, or NULL on the host */
    int nlocal;
    hr_dsub *subs;
    int cur;            /* which of u[2] is current (the same in every subdomain) */
    int fresh;          /* ghost zones match the current own points (no sweep since the exchange) */
    int nphases;        /* 1 (ghost 1: faces only) or dim (ghost > 1: axes in order, corners included) */
    int overlap;        /* ghost 1: sweep the inner points while the halos travel (default on) */
    int inplace;        /* host faces packed into / unpacked from the transport's slots where it
                         * has them (hr_transport_ops.slot; tuning.mpi_inplace off: none) */
    int progress_phase; /* >= 0: the host sweeps call the transport's progress for this phase */
    int mapped;         /* ghost planes are the z-neighbours' own planes (hr_transport_ops.grid_share;
                         * tuning.mpi_mapped off: none): no messages, no overlap, rounds only */
    long long mround;   /* rounds agreed so far (mapped) */
    int warm;           /* every exchange phase ran once before the first timed sweep */
    long done;          /* sweeps since create */
    hr_history hist;
    hr_exchange_times xt;
    hr_norm2 *norms;      /* 2 per owned subdomain: partial residual and rhs norms */
    struct hr_team *team; /* cpu-threads with threads > 1: sweeps split over a team, else NULL */
    double t_setup;
    double last_transfer; /* host seconds of the last overlapped sweep's messages */
    double *trace;        /* tuning.dsolver_trace: HR_TRACE_FIELDS stamps per host sweep round */
    long ntrace, trace_cap;
    char err[256];
} hr_dsolver;

/* A host sweep round's trace (tuning.dsolver_trace prefix: each process writes
 * prefix.<first subdomain> at free, one line per round): the monotonic wall clock (the
 * same clock in every process of a host) at the round's start, after posting the halos,
 * after the inner points, after the halos arrived and at its end, then the thread's CPU
 * seconds across the inner points and the involuntary context switches in the round. A
 * round whose inner points took more wall than CPU time was preempted. A round that does
 * not overlap (mapped planes, --no-overlap) has no inner points: its start, posted and
 * inner end are one time, then the exchange's end, the sweep's end and the sweep's CPU. */
enum { HR_TRACE_FIELDS = 7 };
void hri_dsolver_trace_open(hr_dsolver *s);
void hri_dsolver_trace_add(hr_dsolver *s, const double v[HR_TRACE_FIELDS]);
void hri_dsolver_trace_close(hr_dsolver *s);

/* Axes exchanged in phase ph: all of them with ghost 1 (one phase), axis ph otherwise. */
static inline int hr_dsolver_phase_has_axis(const hr_dsolver *s, int ph, int a)
{
    return s->nphases == 1 ? a < s->p.dim : a == ph;
}

/* Creates the subdomains the transport owns (t->first .. t->first + t->nlocal - 1) of the
 * decomposition parts[0] x parts[1] [x parts[2]] with `ghost` layers, and takes `t` (freed
 * with the solver, also on failure). Purely local: no collective calls. On failure writes
 * "field: reason" into err. With o->backend HR_BACKEND_GPU the subdomains live on GPUs:
 * subdomain id on device o->device + id * G / count, G = max(1, o->gpus) (MPI ranks pass
 * their own device with gpus 1); the transport decides where the message buffers live. */
HR_INTERNAL_API hr_status hri_dsolver_create(const hr_options *o, const int parts[3], int ghost,
                                            hr_transport *t, hr_dsolver **out, char *err, size_t err_size);

/* Runs the iteration (collective over the transport's processes): the same result on each. */
HR_INTERNAL_API hr_status hri_dsolver_run(hr_dsolver *s, hr_result *res);

/* The global relative residual (collective). */
hr_status hri_dsolver_residual(hr_dsolver *s, double *rel);

/* Largest error against the known exact solution over the own points (host grids), or NaN. */
double hri_dsolver_max_error(const hr_dsolver *s);

/* Copies the own points of the owned subdomains into `global` (nx*ny[*nz] values of
 * precision prec, the layout of hr_solver_solution); other points are left alone. */
void hri_dsolver_own_to_global(const hr_dsolver *s, hr_precision prec, void *global);

/* Own points of owned subdomain `local` packed densely (x fastest), precision prec. */
HR_INTERNAL_API void hri_dsolver_own_to_block(const hr_dsolver *s, int local, hr_precision prec, void *block);
/* Writes such a block of subdomain `id` into the global array. */
HR_INTERNAL_API void hri_block_to_global(const hr_decomp *d, int id, hr_precision prec, const void *block,
                                        void *global);

HR_INTERNAL_API void hri_dsolver_free(hr_dsolver *s);

/* The in-process run: all parts[0] x parts[1] [x parts[2]] subdomains in this process
 * (GPU backend: on o->gpus GPUs from o->device, peer copies between device buffers). */
hr_status hri_inproc_solver_create(const hr_options *o, const int parts[3], int ghost, hr_dsolver **out,
                                  char *err, size_t err_size);

#ifdef __cplusplus
}
#endif
#endif
