/*
 * The CUDA backend of the general-problem engine (stencil_kernels.h): memory, operator and
 * transfer-table twins, the periodic ghosts, the grid transfers, the vector steps of CG and
 * the deterministic reductions (stencil_cuda_internal.cuh); the sweeps are in
 * stencil_cuda_sweep.cu. Every kernel runs on the backend's stream; the calls that answer a
 * value (reductions) or touch host memory wait for it. Per-point arithmetic is the CPU
 * backend's, term for term (CUDA built with -fmad=false), so only the reductions' summation
 * order differs from cpu-seq.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/stencil/cuda/stencil_cuda.h"
#include "methods/stencil/cuda/stencil_cuda_internal.cuh"
#include "parallel/transport/cuda/transport_nccl.h"

/* the reduction's chunks: 256 threads, 16 segments each, in a fixed order */
#define RED_T     256
#define RED_CHUNK (RED_T * 16)
#define FIN_T     1024

/* Enough threads in flight to stream (a few per SM's slots on current GPUs); fewer lines per
 * thread below that. */
#define STREAM_THREADS 262144L

/* ------------------------------------------------------------------ failures */

void hri_st_cu_fail(st_cuda *d, cudaError_t e, const char *call, const char *file, int line)
{
    (void)cudaGetLastError();
    if (!d || d->err != cudaSuccess) return;
    const char *base = strrchr(file, '/');
    d->err = e;
    snprintf(d->msg, sizeof d->msg, "%s failed at %s:%d: %s: %s", call, base ? base + 1 : file, line,
             cudaGetErrorName(e), cudaGetErrorString(e));
}

void hri_st_cu_use(st_cuda *d)
{
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess || cur != d->dev) ST_CU(d, cudaSetDevice(d->dev));
}

/* ------------------------------------------------------------------ geometry */

int hri_st_cu_geo(const st_cuda *d, const hr_sgrid *g, st_geo *G, dim3 *grid, dim3 *block)
{
    const st_shape s = d->shape[g->dim == 3];
    G->nx = g->n[0];
    G->ny = g->n[1];
    G->nz = g->n[2];
    G->sy = g->st[1];
    G->sz = g->st[2];
    G->origin = g->origin;
    G->nsegx = (G->nx + 31) / 32;
    const int bx = s.bx < 32 * G->nsegx ? s.bx : 32 * G->nsegx, by = s.by;
    long h = s.h;
    if (h <= 0) { /* the default: up to 32 lines, fewer where the grid would not fill the device */
        h = (long)(g->count / STREAM_THREADS);
        h = h < 1 ? 1 : h > 32 ? 32 : h;
    }
    if (g->dim == 3) {
        const long gy = (G->ny + by - 1) / by;
        while ((G->nz + h - 1) / h > 65535)
            h *= 2;
        if (gy > 65535) return 0;
        *grid = dim3((unsigned)((G->nx + bx - 1) / bx), (unsigned)gy, (unsigned)((G->nz + h - 1) / h));
    } else {
        while (((G->ny + h - 1) / h + by - 1) / by > 65535)
            h *= 2;
        *grid = dim3((unsigned)((G->nx + bx - 1) / bx), (unsigned)(((G->ny + h - 1) / h + by - 1) / by), 1);
    }
    G->h = (int)h;
    *block = dim3((unsigned)bx, (unsigned)by, 1);
    return 1;
}

/* ------------------------------------------------------------------ reductions */

double *hri_st_cu_seg(st_cuda *d, const st_geo &G)
{
    const size_t n = (size_t)G.ny * (size_t)G.nz * (size_t)G.nsegx;
    if (n <= d->seg_cap) return d->seg;
    cudaFree(d->seg);
    cudaFree(d->part);
    d->seg = d->part = NULL;
    d->seg_cap = d->part_cap = 0;
    const size_t np = (n + RED_CHUNK - 1) / RED_CHUNK;
    if (cudaMalloc((void **)&d->seg, n * sizeof(double)) != cudaSuccess ||
        cudaMalloc((void **)&d->part, np * sizeof(double)) != cudaSuccess) {
        ST_CU(d, cudaErrorMemoryAllocation);
        cudaFree(d->seg);
        d->seg = d->part = NULL;
        return NULL;
    }
    d->seg_cap = n;
    d->part_cap = np;
    return d->seg;
}

/* The block's sum (thread 0 holds it): warps by the fixed tree, then warp by warp in order. */
template <int T> __device__ __forceinline__ double st_block_sum(double v)
{
    __shared__ double sh[T / 32];
    v = st_warp_sum(v);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    double s = 0.0;
    if (threadIdx.x == 0)
        for (int w = 0; w < T / 32; w++)
            s += sh[w];
    return s;
}

/* Chunk b of RED_CHUNK segments: thread t adds segments t, t + RED_T, ... in order. */
static __global__ void __launch_bounds__(RED_T)
    k_red_chunks(const double *__restrict__ seg, size_t n, double *__restrict__ out)
{
    const size_t base = (size_t)blockIdx.x * RED_CHUNK;
    double s = 0.0;
#pragma unroll
    for (int m = 0; m < RED_CHUNK / RED_T; m++) {
        const size_t q = base + threadIdx.x + (size_t)m * RED_T;
        if (q < n) s += seg[q];
    }
    s = st_block_sum<RED_T>(s);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}

/* The chunks' sums into out[0]: thread t adds chunks t, t + FIN_T, ... in order. */
static __global__ void __launch_bounds__(FIN_T)
    k_red_final(const double *__restrict__ part, size_t n, double *__restrict__ out)
{
    double s = 0.0;
    for (size_t q = threadIdx.x; q < n; q += FIN_T)
        s += part[q];
    s = st_block_sum<FIN_T>(s);
    if (threadIdx.x == 0) out[0] = s;
}

double hri_st_cu_reduce(st_cuda *d, const st_geo &G)
{
    const size_t n = (size_t)G.ny * (size_t)G.nz * (size_t)G.nsegx;
    if (d->err != cudaSuccess || !d->seg || n > d->seg_cap) return NAN;
    const size_t nb = (n + RED_CHUNK - 1) / RED_CHUNK;
    /* one chunk: its sum is the value (the final pass would add it to 0) */
    k_red_chunks<<<(unsigned)nb, RED_T, 0, d->st>>>(d->seg, n, nb == 1 ? d->dres : d->part);
    ST_LAUNCHED(d);
    if (nb > 1) {
        k_red_final<<<1, FIN_T, 0, d->st>>>(d->part, nb, d->dres);
        ST_LAUNCHED(d);
    }
    ST_CU(d, cudaMemcpyAsync(d->hres, d->dres, sizeof(double), cudaMemcpyDeviceToHost, d->st));
    ST_CU(d, cudaStreamSynchronize(d->st));
    return d->err != cudaSuccess ? NAN : *d->hres;
}

/* ------------------------------------------------------------------ periodic ghosts */

/* One periodic axis's ghost planes (discretize.c's fill_axis): o runs over the plane at -1,
 * which spans the padded extent of the other axes. */
static __global__ void k_fill(double *u, int lim0, int lim1, long total, ptrdiff_t s1, ptrdiff_t s2,
                              ptrdiff_t far, ptrdiff_t ghi, ptrdiff_t sa)
{
    const long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    const long x = t % lim0, y = (t / lim0) % lim1, z = t / ((long)lim0 * lim1);
    const ptrdiff_t o = x + y * s1 + z * s2;
    u[o] = u[o + far];
    u[o + ghi] = u[o + sa];
}

/* The halo device to device by NCCL, ordered on stream s: no wait on the host. A face's
 * ghost row is zeroed, as the staged halo leaves it. */
static void halo_nccl(st_cuda *d, const hr_sgrid *g, double *u, cudaStream_t s)
{
    const hr_st_comm *c = d->comm;
    const int last = g->dim - 1, n = g->n[last];
    const size_t row = (size_t)g->st[last], bytes = row * sizeof(double);
    double *glo = u, *ghi = u + (size_t)(n + 1) * row;
    if (c->below < 0) ST_CU(d, cudaMemsetAsync(glo, 0, bytes, s));
    if (c->above < 0) ST_CU(d, cudaMemsetAsync(ghi, 0, bytes, s));
    char why[200];
    if (hri_nccl_rows_halo(c->nccl, s, c->below, c->above, u + row, glo, u + (size_t)n * row, ghi, bytes, why,
                           sizeof why) != 0 &&
        d->err == cudaSuccess) {
        d->err = cudaErrorUnknown;
        snprintf(d->msg, sizeof d->msg, "%s", why);
    }
}

int hri_st_cu_halo_on(st_cuda *d, const hr_sgrid *g, double *u, cudaStream_t s)
{
    if (!d->comm || !d->comm->nccl || d->err != cudaSuccess) return -1;
    halo_nccl(d, g, u, s);
    return d->err == cudaSuccess ? 0 : -1;
}

int hri_st_cu_xstream(st_cuda *d)
{
    if (d->err != cudaSuccess) return -1;
    if (d->xs) return 0;
    int lo = 0, hi = 0;
    ST_CU(d, cudaDeviceGetStreamPriorityRange(&lo, &hi));
    ST_CU(d, cudaStreamCreateWithPriority(&d->xs, cudaStreamNonBlocking, hi));
    ST_CU(d, cudaEventCreateWithFlags(&d->x_ready, cudaEventDisableTiming));
    ST_CU(d, cudaEventCreateWithFlags(&d->x_done, cudaEventDisableTiming));
    return d->err == cudaSuccess ? 0 : -1;
}

void hri_st_cu_halo(st_cuda *d, const hr_sgrid *g, double *u)
{
    const int last = g->dim - 1, n = g->n[last];
    const size_t row = (size_t)g->st[last], bytes = row * sizeof(double);
    if (d->comm->nccl) {
        if (d->err == cudaSuccess) halo_nccl(d, g, u, d->st);
        return;
    }
    if (d->err == cudaSuccess && 4 * row > d->hrow_cap) {
        if (d->hrow) cudaFreeHost(d->hrow);
        d->hrow = NULL;
        d->hrow_cap = 0;
        ST_CU(d, cudaMallocHost((void **)&d->hrow, 4 * bytes));
        if (d->err == cudaSuccess) d->hrow_cap = 4 * row;
    }
    /* the exchange is collective: a rank whose GPU has failed still takes part, with rows of
     * zeros, so that no other rank waits for it (its failure reaches every rank at the next
     * reduction, as NaN) */
    const int ok = d->err == cudaSuccess;
    double *spare = ok ? NULL : (double *)calloc(4 * row, sizeof(double));
    double *h = ok ? d->hrow : spare; /* the ghost below, the first and last rows, the ghost above */
    if (!h) return;
    if (ok) {
        memset(h, 0, bytes);
        memset(h + 3 * row, 0, bytes);
        ST_CU(d, cudaMemcpyAsync(h + row, u + row, bytes, cudaMemcpyDeviceToHost, d->st));
        ST_CU(d, cudaMemcpyAsync(h + 2 * row, u + (size_t)n * row, bytes, cudaMemcpyDeviceToHost, d->st));
        ST_CU(d, cudaStreamSynchronize(d->st));
    }
    hr_sgrid g4 = *g;
    g4.n[last] = 2;
    d->comm->halo(d->comm->ctx, &g4, h);
    if (ok) {
        ST_CU(d, cudaMemcpyAsync(u, h, bytes, cudaMemcpyHostToDevice, d->st));
        ST_CU(d,
              cudaMemcpyAsync(u + (size_t)(n + 1) * row, h + 3 * row, bytes, cudaMemcpyHostToDevice, d->st));
        ST_CU(d, cudaStreamSynchronize(d->st)); /* h is reused by the next halo */
    }
    free(spare);
}

void hri_st_cu_fill_ghosts(st_cuda *d, const hr_sgrid *g, double *u)
{
    if (d->comm) hri_st_cu_halo(d, g, u);
    for (int a = 0; a < g->dim; a++) {
        if (!g->periodic[a]) continue;
        int lim[3];
        for (int b = 0; b < 3; b++)
            lim[b] = b < g->dim ? g->n[b] + 2 : 1;
        lim[a] = 1;
        const long total = (long)lim[0] * lim[1] * lim[2];
        const ptrdiff_t far = (ptrdiff_t)g->n[a] * g->st[a], ghi = ((ptrdiff_t)g->n[a] + 1) * g->st[a];
        k_fill<<<(unsigned)((total + 255) / 256), 256, 0, d->st>>>(u, lim[0], lim[1], total, g->st[1],
                                                                   g->st[2], far, ghi, g->st[a]);
        ST_LAUNCHED(d);
    }
}

/* ------------------------------------------------------------------ transfers */

typedef struct st_tr {
    st_dax ax[3];
    int dim;
    int n[3]; /* the grid the threads cover: coarse (restriction) or fine (prolongation) */
    ptrdiff_t fsy, fsz, forg, csy, csz, corg;
    /* a slab of MPI ranks (axes 1, 2): offset, extent, whole extent, whole periodic; fine, coarse */
    int fo[3], fn[3], fgn[3], fgp[3], co[3], cn[3], cgn[3], cgp[3];
} st_tr;

/* hr_sgrid_local: the index in a slab of a whole-grid index */
__device__ __forceinline__ int st_local(int i, int off, int n, int gn, int gper)
{
    int t = i - off;
    if (gper && n != gn) {
        if (t < -1)
            t += gn;
        else if (t > n)
            t -= gn;
    }
    return t;
}

static __global__ void k_restrict(st_tr T, const double *__restrict__ src, double *__restrict__ dst)
{
    const int I = blockIdx.x * blockDim.x + threadIdx.x, J = blockIdx.y * blockDim.y + threadIdx.y,
              K = blockIdx.z;
    if (I >= T.n[0] || J >= T.n[1]) return;
    int xi[3] = {0, 0, 0}, yi[3] = {0, 0, 0}, zi[3] = {0, 0, 0};
    double xw[3] = {0, 0, 0}, yw[3] = {0, 0, 0}, zw[3] = {1.0, 0, 0};
    const int ny = st_rterms(T.ax[1], J + T.co[1], yi, yw);
    const int nz = T.dim == 3 ? st_rterms(T.ax[2], K + T.co[2], zi, zw) : 1;
    const int nx = st_rterms(T.ax[0], I, xi, xw);
    for (int t = 0; t < ny; t++)
        yi[t] = st_local(yi[t], T.fo[1], T.fn[1], T.fgn[1], T.fgp[1]);
    for (int t = 0; t < nz && T.dim == 3; t++)
        zi[t] = st_local(zi[t], T.fo[2], T.fn[2], T.fgn[2], T.fgp[2]);
    dst[T.corg + I + J * T.csy + K * T.csz] =
        st_gather(src, T.forg, T.fsy, T.fsz, xi, xw, nx, yi, yw, ny, zi, zw, nz);
}

static __global__ void k_prolong(st_tr T, const double *__restrict__ src, double *__restrict__ dst)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y,
              k = blockIdx.z;
    if (i >= T.n[0] || j >= T.n[1]) return;
    int xi[3] = {0, 0, 0}, yi[3] = {0, 0, 0}, zi[3] = {0, 0, 0};
    double xw[3] = {0, 0, 0}, yw[3] = {0, 0, 0}, zw[3] = {1.0, 0, 0};
    const int ny = st_pterms(T.ax[1], j + T.fo[1], yi, yw);
    const int nz = T.dim == 3 ? st_pterms(T.ax[2], k + T.fo[2], zi, zw) : 1;
    const int nx = st_pterms(T.ax[0], i, xi, xw);
    for (int t = 0; t < ny; t++)
        yi[t] = st_local(yi[t], T.co[1], T.cn[1], T.cgn[1], T.cgp[1]);
    for (int t = 0; t < nz && T.dim == 3; t++)
        zi[t] = st_local(zi[t], T.co[2], T.cn[2], T.cgn[2], T.cgp[2]);
    const double s = st_gather(src, T.corg, T.csy, T.csz, xi, xw, nx, yi, yw, ny, zi, zw, nz);
    const ptrdiff_t p = T.forg + i + j * T.fsy + k * T.fsz;
    dst[p] = dst[p] + s;
}

static st_tr tr_of(const hr_sgrid *fg, const hr_sgrid *cg, const hr_st_axis ax[3], const hr_sgrid *cover)
{
    st_tr T;
    memset(&T, 0, sizeof T);
    for (int a = 0; a < 3; a++)
        T.ax[a] = hri_st_cu_dax(&ax[a], a < fg->dim);
    T.dim = fg->dim;
    for (int a = 0; a < 3; a++)
        T.n[a] = cover->n[a];
    for (int a = 0; a < 3; a++) {
        T.fo[a] = fg->goff[a], T.fn[a] = fg->n[a], T.fgn[a] = fg->gn[a], T.fgp[a] = fg->gper[a];
        T.co[a] = cg->goff[a], T.cn[a] = cg->n[a], T.cgn[a] = cg->gn[a], T.cgp[a] = cg->gper[a];
    }
    T.fsy = fg->st[1], T.fsz = fg->dim == 3 ? fg->st[2] : 0, T.forg = fg->origin;
    T.csy = cg->st[1], T.csz = cg->dim == 3 ? cg->st[2] : 0, T.corg = cg->origin;
    return T;
}

static void tr_launch(st_cuda *d, const st_tr &T, const double *src, double *dst, int prolong)
{
    const dim3 block(32, 8, 1), grid((T.n[0] + 31) / 32, (T.n[1] + 7) / 8, T.n[2]);
    if (grid.y > 65535 || grid.z > 65535) {
        ST_CU(d, cudaErrorInvalidConfiguration);
        return;
    }
    if (prolong)
        k_prolong<<<grid, block, 0, d->st>>>(T, src, dst);
    else
        k_restrict<<<grid, block, 0, d->st>>>(T, src, dst);
    ST_LAUNCHED(d);
}

static void cu_restrict(hr_st_exec *ex, const hr_sgrid *fg, const hr_sgrid *cg, const hr_st_axis ax[3],
                        const double *rf, double *bc)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    tr_launch(d, tr_of(fg, cg, ax, cg), rf, bc, 0);
}

static void cu_prolong_add(hr_st_exec *ex, const hr_sgrid *fg, const hr_sgrid *cg, const hr_st_axis ax[3],
                           const double *ec, double *uf)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    tr_launch(d, tr_of(fg, cg, ax, fg), ec, uf, 1);
}

/* ------------------------------------------------------------------ vector steps */

enum { V_DOT = 0, V_UPDATE, V_XPAY, V_SUM, V_SUB };

typedef struct st_vargs {
    double *x, *r;
    const double *p, *q;
    double *seg;
    double al;
} st_vargs;

/* The CPU backend's vec_fn over the unknowns: 0 dot(p, q), 1 update, 2 x = p + al x, 3 sum of x,
 * 4 x -= al. */
template <bool D3, int OP> static __global__ void k_vec(st_geo g, st_vargs a)
{
    const bool red = OP == V_DOT || OP == V_UPDATE || OP == V_SUM;
    const st_walk w = st_walk_of<D3>(g);
    if (w.cnt <= 0) return;
    const bool act = w.i < g.nx;
    if (!act && (!red || (w.i & ~31) >= g.nx)) return;
    ptrdiff_t p = w.p;
    long line = w.line;
    for (int t = 0; t < w.cnt; t++, p += w.step, line += w.lstep) {
        double v = 0.0;
        if (act) {
            if (OP == V_DOT) {
                v = a.p[p] * a.q[p];
            } else if (OP == V_UPDATE) {
                a.x[p] = a.x[p] + a.al * a.p[p];
                const double r = a.r[p] - a.al * a.q[p];
                a.r[p] = r;
                v = r * r;
            } else if (OP == V_XPAY) {
                a.x[p] = a.p[p] + a.al * a.x[p];
            } else if (OP == V_SUM) {
                v = a.x[p];
            } else {
                a.x[p] = a.x[p] - a.al;
            }
        }
        if (red) st_seg_put(a.seg, g, line, w.i, v);
    }
}

template <int OP> static double vec_run(st_cuda *d, const hr_sgrid *g, st_vargs a)
{
    const bool red = OP == V_DOT || OP == V_UPDATE || OP == V_SUM;
    hri_st_cu_use(d);
    st_geo G;
    dim3 grid, block;
    if (!hri_st_cu_geo(d, g, &G, &grid, &block)) {
        ST_CU(d, cudaErrorInvalidConfiguration);
        return NAN;
    }
    if (red && !(a.seg = hri_st_cu_seg(d, G))) return NAN;
    if (g->dim == 3)
        k_vec<true, OP><<<grid, block, 0, d->st>>>(G, a);
    else
        k_vec<false, OP><<<grid, block, 0, d->st>>>(G, a);
    ST_LAUNCHED(d);
    return red ? hri_st_cu_reduce(d, G) : 0.0;
}

/* MPI ranks: every rank's value of a reduction, summed in rank order (the same on every rank) */
static double st_ranks_sum(hr_st_exec *ex, double v)
{
    return ex->comm ? ex->comm->sum_ranks(ex->comm->ctx, v) : v;
}

static double cu_dot(hr_st_exec *ex, const hr_sgrid *g, const double *x, const double *y)
{
    st_vargs a = {NULL, NULL, x, y, NULL, 0.0};
    return st_ranks_sum(ex, vec_run<V_DOT>(st_dev(ex), g, a));
}

static double cu_update(hr_st_exec *ex, const hr_sgrid *g, double *x, double *r, const double *p,
                        const double *q, double alpha)
{
    st_vargs a = {x, r, p, q, NULL, alpha};
    return st_ranks_sum(ex, vec_run<V_UPDATE>(st_dev(ex), g, a));
}

static void cu_xpay(hr_st_exec *ex, const hr_sgrid *g, const double *z, double *p, double beta)
{
    st_vargs a = {p, NULL, z, NULL, NULL, beta};
    vec_run<V_XPAY>(st_dev(ex), g, a);
}

static void cu_remove_mean(hr_st_exec *ex, const hr_sgrid *g, double *x)
{
    st_vargs a = {x, NULL, NULL, NULL, NULL, 0.0};
    const double sum = vec_run<V_SUM>(st_dev(ex), g, a);
    a.al = st_ranks_sum(ex, sum) / (double)(ex->comm ? ex->comm->count : g->count);
    vec_run<V_SUB>(st_dev(ex), g, a);
}

/* ------------------------------------------------------------------ sweeps and residuals */

static double cu_residual(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double *r)
{
    st_cuda *d = st_dev(ex);
    d->quiet = ex->quiet; /* the norm is not read: no reduction, no wait for the stream */
    const double v = hri_st_cu_sweep(d, A, ST_OP_RES, u, b, NULL, r, 0.0, 0.0);
    d->quiet = 0;
    return ex->quiet ? v : st_ranks_sum(ex, v);
}

static double cu_apply_dot(hr_st_exec *ex, const hr_sop *A, double *p, double *q)
{
    return st_ranks_sum(ex, hri_st_cu_sweep(st_dev(ex), A, ST_OP_APPLY, p, NULL, NULL, q, 0.0, 0.0));
}

static void cu_jacobi(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double *out, double omega)
{
    hri_st_cu_sweep(st_dev(ex), A, ST_OP_JAC, u, b, NULL, out, omega, 0.0);
}

static void cu_cheby(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, const double *prev,
                     double *out, double alpha, double beta)
{
    /* beta 0: the Jacobi step (prev is not read, as on the CPU) */
    hri_st_cu_sweep(st_dev(ex), A, beta != 0.0 ? ST_OP_CHEB : ST_OP_JAC, u, b, beta != 0.0 ? prev : NULL, out,
                    alpha, beta);
}

static void cu_colour_sweep(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double omega,
                            int colour)
{
    int cls[27][3];
    const int n = hri_st_colours(A, cls);
    if (colour < 0 || colour >= n) return;
    hri_st_cu_colour(st_dev(ex), A, u, b, omega, cls[colour]);
}

/* A whole sweep in the colours' order (reverse: backwards): the star stencils by parity,
 * two passes (the same updates as their classes); the others colour by colour. */
static void cu_gs_sweep(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double omega,
                        int reverse)
{
    if (hri_st_cu_parity_ok(A)) {
        for (int t = 0; t < 2; t++)
            hri_st_cu_parity(st_dev(ex), A, u, b, omega, reverse ? 1 - t : t);
        return;
    }
    int cls[27][3];
    const int n = hri_st_colours(A, cls);
    for (int c = 0; c < n; c++)
        hri_st_cu_colour(st_dev(ex), A, u, b, omega, cls[reverse ? n - 1 - c : c]);
}

/* The second sweep of a pair, with the residual `after` asks for where the sweep can take it
 * (a 2-D uniform star: one pass writes u, r and the norm's partials instead of two passes). */
static void rb_second(st_cuda *d, const hr_sop *A, const double *t, const double *b, double *u, double omega,
                      int reverse, hr_st_after *after)
{
    const st_after fused = {after ? after->r : NULL, after ? after->rr : NULL};
    const int take = after && hri_st_cu_rb_res_ok(d, A);
    hri_st_cu_rb_sweep(d, A, t, b, u, omega, reverse ? 1 : 0, NULL, take ? &fused : NULL);
    if (take) after->done = 1;
}

/* Two sweeps in two passes, u -> t -> u, each one read and one write of the grid (the
 * star stencils and the 2-D box stencils of one process); -1 for the others. */
static int cu_gs_pair(hr_st_exec *ex, const hr_sop *A, double *u, const double *b, double *t, double omega,
                      int reverse, hr_st_after *after)
{
    st_cuda *d = st_dev(ex);
    if (hri_st_cu_box_pair_ok(d, A)) {
        hri_st_cu_box_sweep(d, A, u, b, t, omega, reverse);
        hri_st_cu_box_sweep(d, A, t, b, u, omega, reverse);
        return 0;
    }
    if (!hri_st_cu_rb_pair_ok(d, A)) return -1;
    hri_st_cu_rb_sweep(d, A, u, b, t, omega, reverse ? 1 : 0, NULL, NULL);
    rb_second(d, A, t, b, u, omega, reverse, after);
    return 0;
}

/* The same after a prolongation, added as the first pass reads u (2-D star stencils whose
 * sweeps go in one pass); -1 for the others. */
static int cu_prolong_gs_pair(hr_st_exec *ex, const hr_sop *A, const hr_sgrid *cg, const hr_st_axis ax[3],
                              const double *ec, double *u, const double *b, double *t, double omega, int reverse,
                              hr_st_after *after)
{
    st_cuda *d = st_dev(ex);
    if (A->g.dim != 2 || !hri_st_cu_rb_pair_ok(d, A)) return -1;
    const st_prolong pro = {cg, ax, ec};
    hri_st_cu_rb_sweep(d, A, u, b, t, omega, reverse ? 1 : 0, &pro, NULL);
    rb_second(d, A, t, b, u, omega, reverse, after);
    return 0;
}

/* ------------------------------------------------------------------ memory */

static double *cu_alloc(hr_st_exec *ex, const hr_sgrid *g)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    double *x = NULL;
    if (cudaMalloc((void **)&x, g->padded * sizeof *x) != cudaSuccess) {
        (void)cudaGetLastError(); /* the engine reports no memory */
        return NULL;
    }
    ST_CU(d, cudaMemsetAsync(x, 0, g->padded * sizeof *x, d->st));
    return x;
}

static void cu_release(hr_st_exec *ex, double *x)
{
    st_cuda *d = st_dev(ex);
    if (!x || !d) return;
    hri_st_cu_use(d);
    cudaFree(x);
}

static void cu_upload(hr_st_exec *ex, const hr_sgrid *g, double *dst, const double *host)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    ST_CU(d, cudaMemcpyAsync(dst, host, g->padded * sizeof *dst, cudaMemcpyHostToDevice, d->st));
    ST_CU(d, cudaStreamSynchronize(d->st)); /* the host array may change on return */
}

static void cu_download(hr_st_exec *ex, const hr_sgrid *g, double *host, const double *src)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    ST_CU(d, cudaMemcpyAsync(host, src, g->padded * sizeof *host, cudaMemcpyDeviceToHost, d->st));
    ST_CU(d, cudaStreamSynchronize(d->st));
}

static void cu_copy(hr_st_exec *ex, const hr_sgrid *g, double *dst, const double *src)
{
    st_cuda *d = st_dev(ex);
    if (dst == src) return;
    hri_st_cu_use(d);
    ST_CU(d, cudaMemcpyAsync(dst, src, g->padded * sizeof *dst, cudaMemcpyDeviceToDevice, d->st));
}

static void cu_zero(hr_st_exec *ex, const hr_sgrid *g, double *x)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    ST_CU(d, cudaMemsetAsync(x, 0, g->padded * sizeof *x, d->st));
}

/* A device copy of `count` elements of `size` bytes from host (NULL: no memory or a failure). */
static void *twin_array(st_cuda *d, const void *host, size_t count, size_t size)
{
    void *p = NULL;
    if (cudaMalloc(&p, count * size) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (cudaMemcpyAsync(p, host, count * size, cudaMemcpyHostToDevice, d->st) != cudaSuccess ||
        cudaStreamSynchronize(d->st) != cudaSuccess) {
        ST_CU(d, cudaGetLastError());
        cudaFree(p);
        return NULL;
    }
    return p;
}

static void cu_free_op(hr_st_exec *ex, hr_sop *op)
{
    st_cuda *d = st_dev(ex);
    if (d) hri_st_cu_use(d);
    cudaFree(op->diag);
    cudaFree(op->exc);
    for (int k = 0; k < HR_ST_MAX_HALF; k++)
        cudaFree(op->c[k]);
    memset(op, 0, sizeof *op);
}

static hr_status cu_twin_op(hr_st_exec *ex, const hr_sop *host, hr_sop *out)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    *out = *host;
    out->diag = out->exc = NULL;
    for (int k = 0; k < HR_ST_MAX_HALF; k++)
        out->c[k] = NULL;
    const size_t n = host->g.padded;
    /* a uniform star stencil runs on its scalars alone (stencil_cuda_sweep.cu): no arrays on
     * the device (at 1023^3 they would be five of 8.6 GB) */
    const int arrays = !(host->uniform && host->nk == host->g.dim);
    int ok = !arrays || (out->diag = (double *)twin_array(d, host->diag, n, sizeof(double))) != NULL;
    if (ok && arrays && host->exc)
        ok = (out->exc = (double *)twin_array(d, host->exc, n, sizeof(double))) != NULL;
    for (int k = 0; k < host->nk && ok && arrays; k++)
        ok = (out->c[k] = (double *)twin_array(d, host->c[k], n, sizeof(double))) != NULL;
    /* the reductions' buffer for this grid now, not in the middle of a solve */
    st_geo G;
    dim3 grid, block;
    if (ok) ok = hri_st_cu_geo(d, &host->g, &G, &grid, &block) && hri_st_cu_seg(d, G);
    if (!ok) {
        cu_free_op(ex, out);
        return HR_ERR_NO_MEMORY;
    }
    return HR_OK;
}

static void cu_free_axis(hr_st_exec *ex, hr_st_axis *ax)
{
    st_cuda *d = st_dev(ex);
    if (d) hri_st_cu_use(d);
    cudaFree(ax->i0), cudaFree(ax->i1), cudaFree(ax->w0), cudaFree(ax->w1);
    cudaFree(ax->ri), cudaFree(ax->rw), cudaFree(ax->rn);
    memset(ax, 0, sizeof *ax);
}

/* The run [lo, hi) of indices in [0, n) around m where std holds (empty: lo = hi = 0): the
 * transfer kernels compute the terms there instead of reading the tables. */
template <typename F> static void std_range(int n, int m, F std, int *lo, int *hi)
{
    *lo = *hi = 0;
    if (n <= 0 || !std(m)) return;
    int a = m, b = m + 1;
    while (a > 0 && std(a - 1))
        a--;
    while (b < n && std(b))
        b++;
    *lo = a, *hi = b;
}

static hr_status cu_twin_axis(hr_st_exec *ex, const hr_st_axis *host, hr_st_axis *out)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    memset(out, 0, sizeof *out);
    if (!host->coarsen) return HR_OK;
    const size_t nf = (size_t)host->nf, nc = (size_t)host->nc;
    out->coarsen = 1;
    out->nf = host->nf;
    out->nc = host->nc;
    out->i0 = (int *)twin_array(d, host->i0, nf, sizeof(int));
    out->i1 = (int *)twin_array(d, host->i1, nf, sizeof(int));
    out->w0 = (double *)twin_array(d, host->w0, nf, sizeof(double));
    out->w1 = (double *)twin_array(d, host->w1, nf, sizeof(double));
    out->ri = (int(*)[3])twin_array(d, host->ri, nc, sizeof *host->ri);
    out->rw = (double(*)[3])twin_array(d, host->rw, nc, sizeof *host->rw);
    out->rn = (int *)twin_array(d, host->rn, nc, sizeof(int));
    if (!out->i0 || !out->i1 || !out->w0 || !out->w1 || !out->ri || !out->rw || !out->rn) {
        cu_free_axis(ex, out);
        return HR_ERR_NO_MEMORY;
    }
    out->first = host->first;
    std_range(host->nf, host->nf / 2, [&](int i) { return hr_st_prolong_standard(host, i) != 0; }, &out->plo,
              &out->phi);
    std_range(host->nc, host->nc / 2, [&](int i) { return hr_st_restrict_standard(host, i) != 0; }, &out->rlo,
              &out->rhi);
    return HR_OK;
}

/* ------------------------------------------------------------------ open, close */

static void cu_close(hr_st_exec *ex)
{
    st_cuda *d = st_dev(ex);
    if (!d) return;
    hri_st_cu_use(d);
    if (d->st) {
        cudaStreamSynchronize(d->st);
        cudaStreamDestroy(d->st);
    }
    if (d->xs) {
        cudaStreamSynchronize(d->xs);
        cudaStreamDestroy(d->xs);
        cudaEventDestroy(d->x_ready);
        cudaEventDestroy(d->x_done);
    }
    cudaFree(d->seg);
    cudaFree(d->part);
    cudaFree(d->dres);
    if (d->hres) cudaFreeHost(d->hres);
    if (d->hrow) cudaFreeHost(d->hrow);
    (void)cudaGetLastError();
    free(d);
    ex->dev = NULL;
}

static hr_status cu_open(hr_st_exec *ex, int device, size_t max_lines)
{
    (void)max_lines; /* the reduction buffer is sized per grid (twin_op) */
    ex->dev = NULL;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        count = 0;
    }
    if (device < 0 || device >= count) return HR_ERR_NO_DEVICE;
    st_cuda *d = (st_cuda *)calloc(1, sizeof *d);
    if (!d) return HR_ERR_NO_MEMORY;
    d->dev = device;
    /* 2-D: 128-wide rows; 3-D: 64 x 4 columns; lines per thread by the grid's size */
    d->shape[0] = {128, 2, 0};
    d->shape[1] = {64, 4, 0};
    ex->dev = d;
    if (cudaSetDevice(device) != cudaSuccess ||
        cudaStreamCreateWithFlags(&d->st, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc((void **)&d->dres, sizeof(double)) != cudaSuccess ||
        cudaMallocHost((void **)&d->hres, sizeof(double)) != cudaSuccess) {
        (void)cudaGetLastError();
        cu_close(ex);
        return HR_ERR_DEVICE;
    }
    return HR_OK;
}

/* ------------------------------------------------------------------ MPI ranks */

static void cu_halo(hr_st_exec *ex, const hr_sgrid *g, double *x)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    hri_st_cu_halo(d, g, x);
}

/* A small level whole on every rank: through the host. */
static void cu_allgather(hr_st_exec *ex, const hr_sgrid *g, double *x, const int *counts, const int *displs)
{
    st_cuda *d = st_dev(ex);
    hri_st_cu_use(d);
    const hr_st_comm *c = ex->comm;
    if (c->nccl) { /* device to device, ordered on the stream */
        char why[200];
        if (d->err == cudaSuccess && hri_nccl_rows_allgather(c->nccl, d->st, c->rank, c->size, x, counts,
                                                             displs, why, sizeof why) != 0) {
            d->err = cudaErrorUnknown;
            snprintf(d->msg, sizeof d->msg, "%s", why);
        }
        return;
    }
    double *h = (double *)malloc(g->padded * sizeof *h);
    if (!h) {
        ST_CU(d, cudaErrorMemoryAllocation);
        return;
    }
    ST_CU(d, cudaMemcpyAsync(h, x, g->padded * sizeof *h, cudaMemcpyDeviceToHost, d->st));
    ST_CU(d, cudaStreamSynchronize(d->st));
    ex->comm->allgather(ex->comm->ctx, h, counts, displs);
    ST_CU(d, cudaMemcpyAsync(x, h, g->padded * sizeof *h, cudaMemcpyHostToDevice, d->st));
    ST_CU(d, cudaStreamSynchronize(d->st));
    free(h);
}

/* ------------------------------------------------------------------ the table */

static const hr_st_backend st_cuda_table = {
    "gpu",
    cu_alloc,
    cu_release,
    cu_upload,
    cu_download,
    cu_copy,
    cu_zero,
    cu_twin_op,
    cu_free_op,
    cu_twin_axis,
    cu_free_axis,
    cu_residual,
    cu_apply_dot,
    cu_jacobi,
    cu_cheby,
    cu_colour_sweep,
    cu_restrict,
    cu_prolong_add,
    cu_dot,
    cu_update,
    cu_xpay,
    cu_remove_mean,
    cu_open,
    cu_close,
    cu_gs_sweep,
    cu_halo,
    cu_allgather,
    hri_st_cu_dense_in,
    hri_st_cu_dense_out,
    hri_st_cu_rhs_in,
    hri_st_cu_project,
    (size_t)1 << 18, /* dist_min */
    cu_gs_pair,
    cu_prolong_gs_pair,
};

extern "C" const hr_st_backend *hri_st_cuda_backend(void)
{
    return &st_cuda_table;
}

/* ------------------------------------------------------------------ stencil_cuda.h */

extern "C" hr_status hri_st_cuda_set_shape(hr_st_exec *ex, int dim, int bx, int by, int h)
{
    st_cuda *d = ex ? st_dev(ex) : NULL;
    if (!d || (dim != 2 && dim != 3) || bx < 0 || by < 0 || h < 0) return HR_ERR_INVALID_ARG;
    st_shape s = d->shape[dim == 3];
    if (bx) s.bx = bx;
    if (by) s.by = by;
    s.h = h;
    if (s.bx % 32 != 0 || s.bx * s.by > 1024) return HR_ERR_INVALID_ARG;
    d->shape[dim == 3] = s;
    return HR_OK;
}

extern "C" void hri_st_cuda_get_shape(const hr_st_exec *ex, int dim, int *bx, int *by, int *h)
{
    const st_cuda *d = ex ? (const st_cuda *)ex->dev : NULL;
    const st_shape s = d ? d->shape[dim == 3] : st_shape{0, 0, 0};
    *bx = s.bx, *by = s.by, *h = s.h;
}

extern "C" hr_status hri_st_cuda_sync(hr_st_exec *ex)
{
    st_cuda *d = ex ? st_dev(ex) : NULL;
    if (!d) return HR_ERR_INVALID_ARG;
    hri_st_cu_use(d);
    ST_CU(d, cudaStreamSynchronize(d->st));
    return d->err == cudaSuccess                 ? HR_OK
           : d->err == cudaErrorMemoryAllocation ? HR_ERR_NO_MEMORY
                                                 : HR_ERR_DEVICE;
}

extern "C" const char *hri_st_cuda_error(const hr_st_exec *ex)
{
    const st_cuda *d = ex ? (const st_cuda *)ex->dev : NULL;
    return d ? d->msg : "";
}
