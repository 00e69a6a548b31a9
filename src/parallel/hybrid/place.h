/*
 * A placement: one part of a hybrid split (a slab of whole rows in 2-D or planes in
 * 3-D) living somewhere that can sweep it: a CPU crew (place_cpu.c), a GPU
 * (src/parallel/hybrid/cuda/hybrid_gpu.cu). The split engine (split.c) only talks to this interface,
 * so CI runs the whole engine with two CPU placements and no GPU.
 *
 * Geometry is a subdomain of the decomposition module (decomp/decomp.h): the local
 * layout with `ghost` layers towards the other part. Rows are given as [r0, r1) along
 * the split axis in LOCAL layout coordinates and always span whole rows/planes.
 *
 * Work is issued on two lanes, each in order: lane 0 (boundary rows and their copies:
 * urgent) and lane 1 (the interior). Lanes are independent until `order` or a wait.
 * Grid `which`: 0 the current grid (read by sweeps), 1 the next (written by sweeps).
 */
#ifndef HR_HYBRID_PLACE_H
#define HR_HYBRID_PLACE_H

#include "core/solver_internal.h"
#include "parallel/decomp/decomp.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { HR_LANE_BOUNDARY = 0, HR_LANE_INTERIOR = 1 };

/* How two neighbouring placements exchange rows (`link`): through host buffers and the
 * host thread, by device-to-device copies on one GPU, or by peer copies between GPUs
 * with peer access enabled (NVLink or PCIe P2P). */
enum { HR_LINK_HOST = 0, HR_LINK_DEVICE = 1, HR_LINK_PEER = 2 };

typedef struct hr_place hr_place;

typedef struct hr_place_ops {
    const char *name;
    /* Issues a sweep of rows [r0, r1) from the current grid into the next. */
    hr_status (*sweep)(hr_place *p, int lane, int r0, int r1);
    /* Issues a copy of rows [r0, r1) of grid `which` into host buffer buf (pinned when
     * the placement is a device), after the lane's earlier work. */
    hr_status (*get)(hr_place *p, int lane, int which, int r0, int r1, void *buf);
    /* Issues a copy of buf into rows [r0, r1) of grid `which`. */
    hr_status (*put)(hr_place *p, int lane, int which, int r0, int r1, const void *buf);
    /* Blocks until the lane's issued work is done. */
    hr_status (*wait)(hr_place *p, int lane);
    /* Later work on either lane follows all work issued so far (no host wait needed). */
    hr_status (*order)(hr_place *p);
    /* Current and next grids trade roles (after `order`). */
    void (*swap)(hr_place *p);
    /* Fills the whole local array of both grids (ring, ghost layers, own points) and the
     * right-hand side from global host grids (NULL: zeros); the current grid gets u. */
    hr_status (*load)(hr_place *p, const hr_grid *u, const hr_grid *hf);
    /* Copies the own points of the current grid into the global host grid. */
    hr_status (*download)(hr_place *p, hr_grid *global);
    /* Residual norms over the own points (ghost layers must be current); `scratch` is a
     * global host grid a device may download into. */
    hr_status (*residual)(hr_place *p, hr_grid *scratch, hr_norm2 *r, hr_norm2 *b);
    /* Host buffers the placement can copy from/to quickly (pinned for a device). */
    void *(*host_alloc)(hr_place *p, size_t bytes);
    void (*host_free)(hr_place *p, void *buf);
    void (*destroy)(hr_place *p);
    /* Optional: `count` whole sweeps of rows [r0, r1) with swaps, for a part with no
     * neighbour (a GPU replays CUDA graphs: no launch gaps). NULL: sweep + swap each. */
    hr_status (*sweeps)(hr_place *p, int r0, int r1, long count);
    /* Optional (devices; NULL: every exchange goes through the host). Direct copies
     * between two placements of the same kind, without the host:
     * link: prepares copies between p and other (enables peer access); returns HR_LINK_*,
     *   with the reason in why when it is HR_LINK_HOST. */
    int (*link)(hr_place *p, hr_place *other, char *why, size_t why_size);
    /* mark: records where p's lane-0 work stands; pulls from p wait for that point. */
    hr_status (*mark)(hr_place *p);
    /* pull: issues on p's lane 0, after src's last mark, a copy of src's rows
     * [s0, s0 + r1 - r0) of grid `which` into p's rows [r0, r1) of grid `which`. fence:
     * src's later work waits for the copy (its rows may be overwritten otherwise; without
     * it the caller orders that, as the ghost-1 schedule does by pulling both ways). */
    hr_status (*pull)(hr_place *p, int which, int r0, int r1, hr_place *src, int s0, int fence);
    /* Optional (devices): graphs of whole chain sweeps. capture(parts, n, 1, NULL) starts
     * recording every lane of the n parts (work issued is captured, not run); capture(parts,
     * n, 0, &graph) ends it and instantiates the graph (on failure: none, and every lane
     * back to normal). replay runs a graph after, and before, every lane's other work; drop
     * frees one. */
    hr_status (*capture)(hr_place **parts, int n, int begin, void **graph);
    hr_status (*replay)(hr_place **parts, int n, void *graph);
    void (*drop)(void *graph);
    /* Optional (NULL: `order`). The end of a ghost-1 overlapped sweep of a part that
     * called `mark` after its boundary sweeps: the boundary lanes follow everything so
     * far; the interior lane follows only the boundary sweeps up to that mark, not the
     * copies issued after it (the next interior reads no ghost row), so an interior never
     * waits for an exchange. */
    hr_status (*settle)(hr_place *p);
    /* Optional (CPU parts; NULL: the grids are not in host memory). The host address of
     * row r of grid `which`: the engine's copies then read and write the rows themselves,
     * with no send buffer (a device's copies, the MPI messages). */
    void *(*host_rows)(hr_place *p, int which, int r);
    /* Optional (devices): page-locks (pin 1) or releases (pin 0) host memory that this
     * placement's get/put copy to and from, so the copies run asynchronously at full speed.
     * An error leaves the memory as it was (the engine then stages through its buffers). */
    hr_status (*host_pin)(hr_place *p, void *ptr, size_t bytes, int pin);
} hr_place_ops;

/* What a placement is made of. */
typedef struct hr_place_spec {
    hr_subdomain sd; /* geometry: local layout, own box, neighbours */
    int axis;        /* the split axis: 1 (rows, 2-D) or 2 (planes, 3-D) */
    size_t esize;    /* 4 or 8 */
    double omega;
    hr_rhs_view spike;    /* the inline spike in local coordinates (hf NULL), or none */
    int has_hf;           /* a right-hand-side grid is loaded */
    int row0;             /* global row (along axis) of row 0 of the host grids of load/download/residual */
    int threads;          /* CPU: interior crew; the whole crew for the naive schedule */
    int boundary_threads; /* CPU nested: the boundary crew (0: the naive schedule, one crew) */
    int pin_slot;         /* CPU: > 0 pins the crews from this slot of crew.h on (0: unpinned) */
    int device;           /* GPU ordinal */
    hr_solver *s;         /* for error messages (may be NULL) */
    hr_tuning tune;       /* the options' knobs (crews, huge pages, peer push, PDL) */
} hr_place_spec;

struct hr_place {
    const hr_place_ops *ops;
    hr_place_spec spec;
    char desc[96]; /* what runs it ("cpu 15 threads", the GPU's name) */
    char err[256];
    void *impl;
};

hr_status hri_place_cpu_create(const hr_place_spec *spec, hr_place **out);
/* A GPU placement (src/parallel/hybrid/cuda/hybrid_gpu.cu); HR_ERR_NO_DEVICE without CUDA or a device. */
hr_status hri_place_gpu_create(const hr_place_spec *spec, hr_place **out);

/* GPU probes for the model (HR_ERR_NO_DEVICE without CUDA): median seconds of a
 * round trip (device to host, then host to device, pinned, one stream) of `bytes`. */
hr_status hri_place_gpu_roundtrip(int device, size_t bytes, int repeats, double *seconds);

/* Bytes of rows [r0, r1) as the placements copy them (whole padded rows/planes). */
static inline size_t hr_place_rows_bytes(const hr_place_spec *sp, int r0, int r1)
{
    return (size_t)(r1 - r0) * hr_layout_outer_stride(&sp->sd.l) * sp->esize;
}

/* Element offset of row r (along the split axis) from the layout's origin. */
static inline size_t hr_place_row_offset(const hr_place_spec *sp, int r)
{
    return (size_t)r * hr_layout_outer_stride(&sp->sd.l);
}

#ifdef __cplusplus
}
#endif
#endif
