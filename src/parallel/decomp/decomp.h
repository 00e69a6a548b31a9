/*
 * Domain decomposition: the one place that knows subdomains.
 *
 * A 2-D or 3-D grid of nx x ny [x nz] interior points is cut into px x py [x pz]
 * Cartesian subdomains (uneven: along each axis the first n % p parts get one point
 * more). Subdomain ids run x fastest: id = (cz * py + cy) * px + cx.
 *
 * Each subdomain stores its points in the standard padded layout (problem/grid.h), grown
 * by its ghost zone: along an axis, a side that borders another subdomain gets `ghost`
 * layers, a side on the physical boundary keeps the layout's one-point Dirichlet ring.
 * So the layout's extent along axis a is n_a + pad_lo_a + pad_hi_a - 2, the subdomain's
 * own points are [pad_lo_a, pad_lo_a + n_a) in layout coordinates, and the residual's
 * Dirichlet-face tests (j == 1, j == nx) hold on physical faces unchanged.
 *
 * Axis order everywhere: 0 = x (column j, contiguous), 1 = y (row i), 2 = z (plane k).
 */
#ifndef HR_DECOMP_H
#define HR_DECOMP_H

#include <stddef.h>

#include "core/grid.h"
#include "core/internal_api.h"
#include "core/stencil.h"
#include "hetrelax/hetrelax.h"
#include "reference/stencil_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_DECOMP_MAX_CUTS 256 /* parts along a cut axis */

typedef struct hr_decomp {
    int dim;      /* 2 or 3 */
    int n[3];     /* global interior extents (n[2] = 1 in 2-D) */
    int parts[3]; /* subdomains per axis (parts[2] = 1 in 2-D) */
    int ghost;    /* ghost layers towards a neighbour, >= 1 */
    int count;    /* parts[0] * parts[1] * parts[2] */
    /* uneven parts along one axis (hri_decomp_set_cuts): part c starts at cut[c] */
    int cut_axis; /* -1: the even split everywhere */
    int cut[HR_DECOMP_MAX_CUTS + 1];
} hr_decomp;

/* Checks and fills a decomposition; on error writes "field: reason" into why
 * (decomp: product mismatch is the caller's check). parts[2] is ignored in 2-D. */
HR_INTERNAL_API hr_status hri_decomp_init(hr_decomp *d, int dim, const int n[3], const int parts[3], int ghost,
                                         char *why, size_t why_size);

/* Uneven parts along `axis` (the hybrid CPU+GPU splits): part c gets sizes[c] points
 * (parts[axis] of them, at most HR_DECOMP_MAX_CUTS, summing to n[axis]), each at least
 * `ghost`. On error writes "split: reason" into why. */
hr_status hri_decomp_set_cuts(hr_decomp *d, int axis, const int *sizes, char *why, size_t why_size);
/* The two-part case: `first` points, then the rest. */
hr_status hri_decomp_set_cut(hr_decomp *d, int axis, int first, char *why, size_t why_size);

/* The default split of `count` parts: MPI_Dims_create's balanced factors, the most parts
 * along the slowest axis (y in 2-D, z in 3-D) so the largest faces are contiguous. */
void hri_decomp_default_parts(int dim, int count, int parts[3]);

void hri_decomp_coords(const hr_decomp *d, int id, int c[3]);
/* The id at coordinates c, or -1 outside the process grid. */
int hri_decomp_id(const hr_decomp *d, const int c[3]);

typedef struct hr_subdomain {
    int id;
    int coord[3];
    int off[3];    /* global 0-based offset of the first own point per axis */
    int n[3];      /* own points per axis */
    int pad_lo[3]; /* layers before the own points: ghost, or 1 on the physical boundary */
    int pad_hi[3];
    int nb[3][2];       /* neighbour ids per axis and side (0 low, 1 high), -1: physical */
    unsigned dirichlet; /* HR_FACE_* of the physical faces */
    hr_grid_layout l;   /* local layout (ring = outermost ghost layer or boundary) */
    hr_box own;         /* the own points in layout coordinates */
} hr_subdomain;

/* Geometry and layout of subdomain `id`; 0 if a size overflows. */
HR_INTERNAL_API int hri_subdomain_init(const hr_decomp *d, int id, size_t esize, hr_subdomain *s);

/* Layout coordinate along axis a of global index g (1-based interior, 0 and n + 1 the
 * boundary), and its inverse. */
static inline int hr_subdomain_local(const hr_subdomain *s, int a, int g)
{
    return s->l.dim == 2 && a == 2 ? 0 : g - s->off[a] - 1 + s->pad_lo[a];
}
static inline int hr_subdomain_global(const hr_subdomain *s, int a, int x)
{
    return s->l.dim == 2 && a == 2 ? 0 : x + s->off[a] + 1 - s->pad_lo[a];
}

/* Whole extent of the local array along axis a (layout extent + the ring). */
static inline int hr_subdomain_span(const hr_subdomain *s, int a)
{
    return s->l.dim == 2 && a == 2 ? 1 : s->pad_lo[a] + s->n[a] + s->pad_hi[a];
}

/* The inline spike in local coordinates: the global spike wherever it falls in the local
 * array (own points or ghost zone, where it is swept redundantly), else -1. */
hr_rhs_view hri_subdomain_spike(const hr_subdomain *s, int gi, int gj, int gk);

/* The sweep box of step `step` (1-based) of a round of `m` sweeps: the own points grown
 * by m - step layers towards every neighbour (redundant work in the ghost zone). */
hr_box hri_subdomain_sweep_box(const hr_subdomain *s, int m, int step);

/* For overlapping a single-layer exchange with the sweep: `inner`, the own points that
 * read no ghost point (the own box less one layer towards every neighbour), and the
 * shell, own less inner, as up to 6 disjoint boxes; returns how many. */
int hri_subdomain_split(const hr_subdomain *s, hr_box *inner, hr_box shell[6]);

/* The slab exchanged across (axis, side): `recv` 0 gives the own layers sent to that
 * neighbour, 1 the ghost layers received from it. Along the other axes b the slab spans
 * the own points, or the whole local array for b < axis when `corners` (ghost > 1: the
 * axes are exchanged in order so edges and corners travel in two or three hops). */
hr_box hri_subdomain_face(const hr_subdomain *s, int ghost, int axis, int side, int recv, int corners);

static inline size_t hr_box_points(const hr_box *b)
{
    if (hr_box_empty(b)) return 0;
    return (size_t)(b->hi[0] - b->lo[0]) * (size_t)(b->hi[1] - b->lo[1]) * (size_t)(b->hi[2] - b->lo[2]);
}

/* Copies the box of a grid (layout l, element (0, 0, 0) at origin) to or from a dense
 * buffer, x fastest. Host memory; a device transport brings its own pack kernels. */
void hri_pack_box(const hr_grid_layout *l, const void *origin, const hr_box *b, void *buf);
void hri_unpack_box(const hr_grid_layout *l, void *origin, const hr_box *b, const void *buf);

#ifdef __cplusplus
}
#endif
#endif
