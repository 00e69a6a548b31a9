/*
 * Shared pieces of the general-problem engine's CUDA backend: its state, the launch geometry
 * of the grid kernels, the deterministic reductions.
 *
 * Grid kernels run one thread per x position of a line; a thread marches h lines (2-D: rows
 * along y; 3-D: planes along z), so the star sweeps keep the marching axis's neighbours in
 * registers and read every array once. A reduction sums, for every grid line, each 32-point
 * segment [32 s, 32 s + 32) by a fixed shuffle tree into seg[line * nsegx + s]; the segments
 * are then summed in fixed chunks and the chunks in order (hri_st_cu_reduce). No step depends on
 * the block shape or on timing, so every shape and every run gives the same bits.
 */
#ifndef HR_STENCIL_CUDA_INTERNAL_CUH
#define HR_STENCIL_CUDA_INTERNAL_CUH

#include <cuda_runtime.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "hetrelax/hetrelax.h"

extern "C" {
#include "methods/stencil/stencil_kernels.h"
}

/* ------------------------------------------------------------------ the state */

typedef struct st_shape {
    int bx, by, h;
} st_shape;

typedef struct st_cuda {
    int dev;
    cudaStream_t st;
    double *seg; /* per-segment partial sums */
    size_t seg_cap;
    double *part; /* per-chunk sums */
    size_t part_cap;
    double *dres, *hres; /* the reduction's value on the device, and its pinned host copy */
    cudaError_t err;     /* the first failure (sticky: reductions then answer NaN) */
    char msg[256];
    st_shape shape[2];      /* 2-D, 3-D */
    int quiet;              /* set: a residual skips its reduction (hr_st_exec.quiet) */
    const hr_st_comm *comm; /* MPI ranks of the call (hr_st_exec.comm): halos before reads, sums */
    double *hrow;           /* pinned: the four rows a halo stages through the host */
    size_t hrow_cap;
    /* GPU ranks by NCCL: the exchange stream and its two events of a parity pass whose halo
     * runs beside the pass's interior rows (made on first use) */
    cudaStream_t xs;
    cudaEvent_t x_ready, x_done;
} st_cuda;

/* The backend's state, told the call's ranks. */
static inline st_cuda *st_dev(hr_st_exec *ex)
{
    st_cuda *d = (st_cuda *)ex->dev;
    if (d) d->comm = ex->comm;
    return d;
}

/* MPI ranks: the ghost rows of u's last axis from the neighbours (through pinned host rows). */
void hri_st_cu_halo(st_cuda *d, const hr_sgrid *g, double *u);
/* GPU ranks by NCCL: the same on stream s (the ghost rows of the faces zeroed there too); 0, or
 * -1 without NCCL or after a failure. */
int hri_st_cu_halo_on(st_cuda *d, const hr_sgrid *g, double *u, cudaStream_t s);
/* The exchange stream and its events (made on first use); 0, or -1 after a failure. */
int hri_st_cu_xstream(st_cuda *d);

/* Records the first failure ("call failed at file:line: name") and clears a non-sticky error. */
void hri_st_cu_fail(st_cuda *d, cudaError_t e, const char *call, const char *file, int line);

#define ST_CU(d, call)                                                                                       \
    do {                                                                                                     \
        cudaError_t st_e_ = (call);                                                                          \
        if (st_e_ != cudaSuccess) hri_st_cu_fail((d), st_e_, #call, __FILE__, __LINE__);                     \
    } while (0)

/* After a launch: its configuration error, if any. */
#define ST_LAUNCHED(d) ST_CU(d, cudaGetLastError())

/* Makes the backend's device current (a solve may run on another host thread than create). */
void hri_st_cu_use(st_cuda *d);

/* The caller's device arrays (stencil_cuda_arrays.cu; the table's entries of those names). */
void hri_st_cu_dense_in(hr_st_exec *ex, const hr_sgrid *g, double *dst, const void *src, int single);
hr_status hri_st_cu_dense_out(hr_st_exec *ex, const hr_sgrid *g, void *dst, const double *src, int single,
                              char *why, size_t why_size);
void hri_st_cu_rhs_in(hr_st_exec *ex, const hr_sgrid *g, const hr_st_vol *v, double *b, const double *b0,
                      const void *f, int single, double *line_b, double *line_v);
void hri_st_cu_project(hr_st_exec *ex, const hr_sgrid *g, const hr_st_vol *v, double *b, double c,
                       double *line_nb, double *line_nd);

/* ------------------------------------------------------------------ geometry */

/* What a grid kernel needs of the padded grid and the march. */
typedef struct st_geo {
    int nx, ny, nz;
    int h;     /* lines a thread marches */
    int nsegx; /* 32-point segments per line */
    ptrdiff_t sy, sz, origin;
} st_geo;

/* The geometry and launch shape of a grid kernel over g's unknowns (block from the dimension's
 * shape, narrowed to the line on small grids). 0: the grid does not fit the launch limits. */
int hri_st_cu_geo(const st_cuda *d, const hr_sgrid *g, st_geo *G, dim3 *grid, dim3 *block);

/* A thread's march: x index i, the first line's unknown p (stepping by `step`), its line
 * number (stepping by `lstep`), and how many lines (0: none; uniform across a warp). */
typedef struct st_walk {
    int i, cnt;
    ptrdiff_t p, step;
    long line, lstep;
} st_walk;

template <bool D3> __device__ __forceinline__ st_walk st_walk_of(const st_geo &g)
{
    st_walk w;
    w.i = blockIdx.x * blockDim.x + threadIdx.x;
    if (!D3) {
        const int j0 = (blockIdx.y * blockDim.y + threadIdx.y) * g.h;
        w.cnt = j0 < g.ny ? min(g.h, g.ny - j0) : 0;
        w.p = g.origin + w.i + (ptrdiff_t)j0 * g.sy;
        w.step = g.sy;
        w.line = j0;
        w.lstep = 1;
    } else {
        const int j = blockIdx.y * blockDim.y + threadIdx.y, k0 = blockIdx.z * g.h;
        w.cnt = j < g.ny && k0 < g.nz ? min(g.h, g.nz - k0) : 0;
        w.p = g.origin + w.i + (ptrdiff_t)j * g.sy + (ptrdiff_t)k0 * g.sz;
        w.step = g.sz;
        w.line = j + (long)k0 * g.ny;
        w.lstep = g.ny;
    }
    return w;
}

/* The warp's sum by a fixed tree (lane 0 holds it). Every lane of the warp calls it. */
__device__ __forceinline__ double st_warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/* One line's segment of a reduction: lanes past the line's end pass 0. */
__device__ __forceinline__ void st_seg_put(double *seg, const st_geo &g, long line, int i, double v)
{
    v = st_warp_sum(v);
    if ((threadIdx.x & 31) == 0) seg[line * g.nsegx + (i >> 5)] = v;
}

/* The segment buffer for a grid of `lines` lines of nsegx segments (grown when needed);
 * NULL after a failure. */
double *hri_st_cu_seg(st_cuda *d, const st_geo &G);

/* The sum of the segments a kernel wrote for G (waits for the stream); NaN after a failure. */
double hri_st_cu_reduce(st_cuda *d, const st_geo &G);

/* Copies the far sides into the periodic axes' ghosts (hri_st_fill_ghosts on the device). */
void hri_st_cu_fill_ghosts(st_cuda *d, const hr_sgrid *g, double *u);

/* ------------------------------------------------------------------ transfers */

/* A transfer table's device twin, as the kernels read it (ri, rw: 3 per coarse index). */
typedef struct st_dax {
    int coarsen;
    int first, plo, phi, rlo, rhi; /* the standard terms' ranges (hr_st_axis.plo) */
    const int *i0, *i1;
    const double *w0, *w1;
    const int *ri;
    const double *rw;
    const int *rn;
} st_dax;

/* The device twin's fields of a host table (its arrays already on the device: twin_axis). */
static inline st_dax hri_st_cu_dax(const hr_st_axis *x, int coarsen)
{
    st_dax y;
    memset(&y, 0, sizeof y);
    y.coarsen = coarsen && x->coarsen;
    if (!y.coarsen) return y;
    y.i0 = x->i0, y.i1 = x->i1, y.w0 = x->w0, y.w1 = x->w1;
    y.ri = (const int *)x->ri, y.rw = (const double *)x->rw, y.rn = x->rn;
    y.first = x->first, y.plo = x->plo, y.phi = x->phi, y.rlo = x->rlo, y.rhi = x->rhi;
    return y;
}

/* restrict_terms of the CPU backend: (index, weight) pairs of one axis */
__device__ __forceinline__ int st_rterms(const st_dax &a, int I, int idx[3], double w[3])
{
    if (!a.coarsen) {
        idx[0] = I, w[0] = 1.0;
        return 1;
    }
    if (I >= a.rlo && I < a.rhi) { /* the table's values there */
        const int f = a.first + 2 * I;
        idx[0] = f - 1, idx[1] = f, idx[2] = f + 1;
        w[0] = 0.5, w[1] = 1.0, w[2] = 0.5;
        return 3;
    }
    const int n = a.rn[I];
#pragma unroll
    for (int t = 0; t < 3; t++)
        if (t < n) idx[t] = a.ri[3 * I + t], w[t] = a.rw[3 * I + t];
    return n;
}

/* prolong_terms of the CPU backend: (index, weight) pairs of one axis */
__device__ __forceinline__ int st_pterms(const st_dax &a, int i, int idx[3], double w[3])
{
    if (!a.coarsen) {
        idx[0] = i, w[0] = 1.0;
        return 1;
    }
    if (i >= a.plo && i < a.phi) { /* the table's values there */
        if (((i - a.first) & 1) == 0) {
            idx[0] = (i - a.first) / 2, w[0] = 1.0;
            return 1;
        }
        idx[0] = (i - 1 - a.first) / 2, w[0] = 0.5;
        idx[1] = idx[0] + 1, w[1] = 0.5;
        return 2;
    }
    idx[0] = a.i0[i], w[0] = a.w0[i];
    if (a.i1[i] < 0) return 1;
    idx[1] = a.i1[i], w[1] = a.w1[i];
    return 2;
}

/* sum_c sum_b zw yw (sum_a xw src[row (b, c)][xi]), in the CPU's order */
__device__ __forceinline__ double st_gather(const double *src, ptrdiff_t org, ptrdiff_t sy, ptrdiff_t sz,
                                            const int xi[3], const double xw[3], int nx, const int yi[3],
                                            const double yw[3], int ny, const int zi[3], const double zw[3],
                                            int nz)
{
    double s = 0.0;
#pragma unroll
    for (int c = 0; c < 3; c++) {
        if (c >= nz) break;
#pragma unroll
        for (int b = 0; b < 3; b++) {
            if (b >= ny) break;
            const double *row = src + org + yi[b] * sy + zi[c] * sz;
            double t = 0.0;
#pragma unroll
            for (int a = 0; a < 3; a++)
                if (a < nx) t += xw[a] * row[xi[a]];
            s += zw[c] * yw[b] * t;
        }
    }
    return s;
}


/* ------------------------------------------------------------------ the sweeps (stencil_cuda_sweep.cu) */

enum { ST_OP_JAC = 0, ST_OP_CHEB, ST_OP_RES, ST_OP_APPLY };

/* One sweep-like pass of A over u: out = u + al (b - A u) / diag (+ be (u - prev)), r = b - A u
 * (out may be NULL: the norm only), q = A u; the last two return their reduction. */
double hri_st_cu_sweep(st_cuda *d, const hr_sop *A, int op, const double *u, const double *b,
                       const double *prev, double *out, double al, double be);
/* Gauss-Seidel on one colour (class triple cls), in place. */
void hri_st_cu_colour(st_cuda *d, const hr_sop *A, double *u, const double *b, double omega,
                      const int cls[3]);
/* Whether A's Gauss-Seidel may run by parity (a star stencil without an odd periodic axis),
 * and one parity's pass (the points whose whole-grid index sum has that parity). */
int hri_st_cu_parity_ok(const hr_sop *A);
void hri_st_cu_parity(st_cuda *d, const hr_sop *A, double *u, const double *b, double omega, int parity);
/* Whether A's Gauss-Seidel sweep may run in one pass out of place (a 2-D or 3-D star stencil
 * that may run by parity, no periodic axis, one process), and that sweep: u's values swept into
 * out (the points of parity p0 first), bitwise the two parity passes in place. out's ghosts are
 * left as they are (they must be u's: 0). */
int hri_st_cu_rb_pair_ok(const st_cuda *d, const hr_sop *A);
/* A prolongation for the first sweep to add as it reads u (u += P ec: the coarse grid cg and
 * the fine level's device transfer tables ax), so that the sweep reads what prolong_add would
 * have written: a 2-D star's one-pass sweep (hri_st_cu_rb_sweep; pro NULL: none). */
typedef struct st_prolong {
    const hr_sgrid *cg;
    const hr_st_axis *ax;
    const double *ec;
} st_prolong;
/* A residual the sweep takes of the iterate it makes, r = b - A out (the residual kernel's
 * values): into r (NULL: not stored), and with rr its squared norm into *rr (summed by rows and
 * warps, not by the residual kernel's segments: the same value to rounding; waits for the
 * stream). A 2-D uniform star only (hri_st_cu_rb_res_ok). */
typedef struct st_after {
    double *r;
    double *rr;
} st_after;
int hri_st_cu_rb_res_ok(const st_cuda *d, const hr_sop *A);
void hri_st_cu_rb_sweep(st_cuda *d, const hr_sop *A, const double *u, const double *b, double *out, double omega,
                        int p0, const st_prolong *pro, const st_after *after);
/* The same for a 2-D box stencil (its four colours; one process, no periodic axis), and that
 * sweep, the colours in hri_st_colours' order (reverse: backwards), bitwise the colour passes:
 * in tiles on small levels, marching on large ones. */
int hri_st_cu_box_pair_ok(const st_cuda *d, const hr_sop *A);
void hri_st_cu_box_sweep(st_cuda *d, const hr_sop *A, const double *u, const double *b, double *out, double omega,
                         int reverse);

#endif
