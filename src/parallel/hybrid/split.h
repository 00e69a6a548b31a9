/*
 * The split engine: a grid cut along its slowest axis (rows in 2-D, planes in 3-D) into
 * part A (rows 1..s, placement A, the CPU) and part B (the rest, placement B, the GPU
 * or a second CPU for tests), with the decomposition module's geometry (hr_decomp with
 * two uneven parts, hri_decomp_set_cut). One part when s = 0 or s = n.
 *
 * Schedules per sweep (docs/hybrid.md):
 *   ghost 1: each part sweeps its boundary row first (lane 0), copies it out, and sweeps
 *     its interior (lane 1) while the boundary rows cross: nested (A's boundary and
 *     interior crews run at once) or naive (A's one crew: boundary, exchange, interior).
 *   ghost g > 1: g rows each way every g sweeps, then g sweeps over the own rows grown
 *     towards the other part (redundant work, as the decomposed solver).
 * Every point gets exactly the values the whole-grid sweep uses: bitwise cpu-seq.
 */
#ifndef HR_HYBRID_SPLIT_H
#define HR_HYBRID_SPLIT_H

#include "core/driver.h"
#include "core/internal_api.h"
#include "hetrelax/hybrid.h"
#include "parallel/hybrid/place.h"
#include "parallel/transport/transport.h"
#include "runtime/cpu/threadstat.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_SPLIT_MAX_LOCAL 16 /* local parts of one process */
/* Sweeps per chain graph (even: a replay ends on the parity it began on). */
#define HR_SPLIT_GRAPH_SWEEPS 16

typedef struct hr_split_spec {
    int dim, nx, ny, nz; /* global interior extents */
    size_t esize;
    double omega;
    int spike_i, spike_j, spike_k; /* global inline spike (-1: none) */
    int has_hf;
    int rows_a;    /* rows (2-D) or planes (3-D) of part A, 0..n */
    int ghost;     /* >= 1 */
    int second;    /* HR_SPLIT_GPU or HR_SPLIT_CPU: placement B */
    int first_gpu; /* 1: part A on GPU device_a too (two GPUs, as in figure 15; benchmarks) */
    int device_a;
    int schedule;         /* HR_SPLIT_NESTED or HR_SPLIT_NAIVE */
    int threads_a;        /* A's interior crew (naive: the whole crew) */
    int boundary_threads; /* A's boundary crew (nested) */
    int threads_b;        /* B's crews when B is a CPU */
    int device;
    hr_solver *s; /* for error messages (may be NULL) */
    /* MPI (one slab of the split axis per rank, each split into its CPU and GPU parts;
     * Sourouri et al.'s per-rank split): ranks > 1, this rank, the fraction of each slab on
     * the CPU (0 or 1: one part per rank), and the transport for the planes between ranks */
    int ranks, rank;
    double fraction;
    hr_transport *t; /* not owned */
    /* Many parts in one process (--gpus N): parts >= 2 cuts the axis into a chain of that
     * many equal parts (hr_split_range; rows_a ignored), every part on a GPU (devices
     * device, device+1, ...) or, when second is HR_SPLIT_CPU, every part a CPU crew of
     * threads_b threads (CI). 0 or 1: the two-part split above. One rank only. */
    int parts;
    /* The chain's options (benchmarks and tests; the CLI leaves them 0): GPUs the parts
     * are spread over (part q on device + q % devices; 0: one per part, so 1 puts every
     * part on one GPU), rows per part (all 0: equal; else they must add up to the
     * extent), and host_exchange 1 to stage every exchange through the host even
     * where peer copies work (also tune.peer off). */
    int devices;
    int cut[HR_SPLIT_MAX_LOCAL];
    int host_exchange;
    /* The start-up trial of the two exchanges (hri_split_create, after loading): 0 when
     * an edge has peer copies (tune.peer on: never), 1 whenever an edge has direct
     * copies (tests; also tune.exchange_trial on), -1 never (benchmarks timing the
     * direct copies alone). The trial times 3 blocks of 2 x HR_SPLIT_GRAPH_SWEEPS sweeps
     * with the direct copies and again staged through the host, keeps the faster (ties
     * within 0.5 % go to the direct copies) and reloads the grids. */
    int exchange_trial;
    /* Nested, crews not given (split_boundary_threads 0): A's threads_a + boundary_threads are
     * divided between its crews in proportion to their rows (hri_split_crew_sizes), so the
     * boundary crew's planes and the interior crew's finish together. */
    int boundary_auto;
    hr_tuning tune; /* the options' knobs (crews, exchanges, graphs, trace) */
} hr_split_spec;

typedef struct hr_split_stats {
    long sweeps, exchanges;
    double wait_s; /* host time blocked on the other part's boundary rows (exposed exchange) */
} hr_split_stats;

enum { HR_FACE_PHYS = 0, HR_FACE_LOCAL, HR_FACE_REMOTE };

typedef struct hr_split {
    hr_split_spec spec;
    hr_decomp d;
    int axis;                        /* 1 or 2 */
    int nparts;                      /* local parts: 1, 2 or spec.parts */
    int first;                       /* decomp id of p[0] */
    int per_rank;                    /* parts per rank */
    hr_place *p[HR_SPLIT_MAX_LOCAL]; /* p[0] = the first (low rows) local part */
    int face[HR_SPLIT_MAX_LOCAL][2]; /* per local part and side (0 low, 1 high): HR_FACE_* */
    int peer[HR_SPLIT_MAX_LOCAL][2]; /* the neighbour: local index or rank */
    void *sbuf[HR_SPLIT_MAX_LOCAL][2], *rbuf[HR_SPLIT_MAX_LOCAL][2]; /* rows sent / received */
    int nremote;                  /* messages to other ranks per exchange */
    int link[HR_SPLIT_MAX_LOCAL]; /* local edge q (parts q and q + 1): HR_LINK_* */
    /* host edge q whose low part's rows are copied directly (no send buffer): part q + 1's
     * get writes q's ghost rows, its put reads q's own rows (pinned for a device: pinned) */
    int mapped[HR_SPLIT_MAX_LOCAL];
    void *pinned[HR_SPLIT_MAX_LOCAL][2];
    /* remote faces sent from and received into the part's own grid rows (transport phases 1
     * and 2, one per grid); zero_copy: any */
    int zc_face[HR_SPLIT_MAX_LOCAL][2], zero_copy;
    char exchange[64]; /* how the local edges exchange, in words ("" for one part) */
    int trial;         /* the exchange trial: 0 not run, 1 kept the direct copies, 2 host */
    double trial_s[2]; /* its seconds per sweep: direct copies, host-staged */
    int parity;        /* sweeps since the last load, mod 2 (the parts' grid roles) */
    void *graph[2];    /* chain graphs of HR_SPLIT_GRAPH_SWEEPS sweeps from each parity */
    int graph_off;     /* no chain graphs (tuning.chain_graph off, or a capture failed) */
    long graph_replays;
    int fresh; /* ghost layers match the current own points */
    hr_split_stats st;
    struct { /* tuning.split_trace: where the overlapped sweeps' host time went */
        int on;
        long sweeps, hist[6];               /* sweeps under 0.5, 1, 2, 4, 8 ms, and longer */
        double issue_s, exchange_s, max_s;  /* issuing every part's work; the host exchange */
        double order_s[HR_SPLIT_MAX_LOCAL]; /* waiting for each part at the sweep's end */
        hr_thread_stat host;                /* the host thread at create */
        double steal_s;                     /* the machine's steal time at create */
        double steal_cpu[64];               /* and per CPU */
        int ncpu;
    } tr;
    char err[256];
} hr_split;

/* Builds the parts and loads them from the global host grids (NULL: zeros). On error
 * writes "field: reason" into err. */
HR_INTERNAL_API hr_status hri_split_create(const hr_split_spec *spec, const hr_grid *u, const hr_grid *hf,
                                          hr_split **out, char *err, size_t err_size);
HR_INTERNAL_API void hri_split_free(hr_split *e);

/* `count` sweeps; returns with every part's work done. */
HR_INTERNAL_API hr_status hri_split_sweeps(hr_split *e, long count);
/* Residual norms over the whole grid, parts combined in order; scratch: a global grid. */
HR_INTERNAL_API hr_status hri_split_residual(hr_split *e, hr_grid *scratch, double *rel);
/* The current solution's own points into the global host grid. */
HR_INTERNAL_API hr_status hri_split_download(hr_split *e, hr_grid *global);
/* Reloads every part from host grids (a restart) whose row 0 is global row `row0` along
 * the split axis (0: whole grids; a rank's slab otherwise). */
HR_INTERNAL_API hr_status hri_split_load(hr_split *e, const hr_grid *u, const hr_grid *hf, int row0);

/* The spec the hybrid backend builds from options (hybrid_kernel.c): precision, problem,
 * placements, schedule, ghost width and the thread plan (all cores less the host thread
 * that drives a GPU; nested: the boundary crew given, or sized to the part's rows when it is
 * built: boundary_auto). */
HR_INTERNAL_API void hri_split_spec_from_options(const hr_options *o, const hr_run_problem *p, int rows_a,
                                                hr_solver *s, hr_split_spec *sp);

/* --split auto's policy (one process: hybrid_kernel.c; per rank: src/parallel/mpi/mpi_hybrid.c). A split
 * must be measured (or predicted) this much faster than GPU-only to be chosen. */
#define HR_AUTO_MARGIN 0.01
/* auto picks its splits as if the CPU part were this much slower than calibrated: a split
 * where the CPU part just meets the GPU's takes every slow spell of the host in full (run
 * 17.4, n = 16384: 903 rows measured 0.682 ms in the calibration and 0.870 ms in the sweep,
 * GPU-only 0.716 ms), while one with this headroom keeps nearly all the gain */
#define HR_AUTO_CPU_HEADROOM 1.3

/* The model with A's part `s` times slower. */
HR_INTERNAL_API hr_split_model hri_split_model_slowed(const hr_split_model *m, double s);

/* The model with A's part slowed by a factor that depends on its rows (the model's ramp,
 * replacing any it had): k[0] up to rows[0], k[i] at rows[i] (increasing), log-linear in rows
 * between, k[n - 1] from rows[n - 1] on (n <= HR_SPLIT_RAMP). */
HR_INTERNAL_API hr_split_model hri_split_model_ramped(const hr_split_model *m, int n, const double *rows,
                                                     const double *k);

/* Nested crews of a CPU part of `rows` own rows that exchanges across `faces` faces, from
 * `total` threads: the boundary crew gets total * faces / rows of them (rounded, at least 1,
 * and the interior crew at least 1): both crews then have as many rows per thread. */
void hri_split_crew_sizes(int total, int rows, int faces, int *interior, int *boundary);

/* Fills a grid (ring included) with values that differ from point to point, none zero: the
 * calibration's data (a CPU may skip stores of zeros over zeros). */
HR_INTERNAL_API void hri_split_fill_nonzero(hr_grid *u);

/* Rows along the split axis. */
static inline int hr_split_extent(const hr_split_spec *s)
{
    return s->dim == 3 ? s->nz : s->ny;
}

#ifdef __cplusplus
}
#endif
#endif
