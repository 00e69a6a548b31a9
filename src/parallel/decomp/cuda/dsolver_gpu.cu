/*
 * The GPU placement of the decomposed solver (decomp/dsolver.h, hri_field_ops_gpu and
 * hri_dplace_gpu): each subdomain's grids on one device in the subdomain layout, and
 *
 *   sweep     a box with the `tuned` region kernels (gpu_region.h) re-based at the box's
 *             corner when its first column keeps the 16-byte alignment (always for slabs
 *             and pencils split along y/z), else a one-point-per-thread box kernel; both
 *             with the point updates of gpu_internal.cuh: bitwise cpu-seq.
 *   residual  the box residual with the Dirichlet faces of hri_cpu_residual_box, reduced
 *             on the device in a fixed order (only 4 doubles come back).
 *   pack      a strided face box into a dense buffer (a kernel), plus the device-to-host
 *             copy into the pinned message buffer when the transport takes host memory;
 *             unpack the reverse, all on the face's own high-priority stream.
 *
 * Lanes: HR_DLANE_SHELL (high priority), HR_DLANE_INNER (low priority), one stream per
 * face (high priority) that waits for the shell lane's last sweep before packing.
 *
 * The in-process transport between GPUs is in transport_cuda.cu.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/jacobi/cuda/gpu_region.h"
#include "parallel/decomp/dsolver.h"
#include "runtime/cuda/gpu_internal.cuh"
#include "runtime/cuda/norm_reduce.cuh"

#define DG_RES_THREADS 256
#define DG_RES_BLOCKS  240
#define DG_MAX_BUFS    12

typedef struct dgpu {
    hr_dsolver *s;
    int dev;
    size_t esize;
    hr_grid_layout l;
    void *d_base[2], *d_hf;
    cudaStream_t lane[2], face[6];
    cudaEvent_t ev_shell, ev_inner, ev_face[6]; /* the last work of a lane / face stream */
    cudaEvent_t tev[2][5];                      /* timing events of sweeps k and k - 1 (k % 2) */
    long k, k_read;                             /* sweep of the chain now; the last one read */
    int inchain;
    void *stage[6][2]; /* device staging of a pinned host buffer, per face and direction */
    size_t stage_bytes[6][2];
    struct {
        void *p;
        int pinned;
    } bufs[DG_MAX_BUFS];
    double *d_part, *h_res;
    hr_gpu_shape shape; /* the `tuned` shape for the subdomain: the tuning cache's, else the shipped one */
    char name[96];
} dgpu;

static hr_status dg_fail(dgpu *c, cudaError_t e, const char *call, int line)
{
    if (c && c->s)
        snprintf(c->s->err, sizeof c->s->err, "device %d: %s failed at dsolver_gpu.cu:%d: %s", c->dev, call,
                 line, cudaGetErrorString(e));
    (void)cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? HR_ERR_NO_MEMORY : HR_ERR_DEVICE;
}

#define DG_CU(c, call)                                                                                       \
    do {                                                                                                     \
        cudaError_t dg_e_ = (call);                                                                          \
        if (dg_e_ != cudaSuccess) return dg_fail((c), dg_e_, #call, __LINE__);                               \
    } while (0)

/* ------------------------------------------------------------ kernels */

/* One thread per point of the box (columns x rows), rows and planes strided over the grid. */
template <typename T, bool W>
__global__ void dg_k_box(const T *in, T *out, const T *hf, size_t p, size_t q, int dim, int lo0, int lo1,
                         int lo2, int nx, int ny, int nz, hr_rhs_view sp, T c0, T c1)
{
    const int j = lo0 + (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (j >= lo0 + nx) return;
    for (int ii = blockIdx.y * blockDim.y + threadIdx.y; ii < ny; ii += gridDim.y * blockDim.y)
        for (int kk = blockIdx.z; kk < nz; kk += gridDim.z) {
            const int i = lo1 + ii, k = lo2 + kk;
            const size_t x = (size_t)k * q + (size_t)i * p + (size_t)j;
            const T *c = in + x;
            if (dim == 3)
                out[x] = hr_point7<T, W>(c[-1], c[1], c[-(ptrdiff_t)p], c[p], c[-(ptrdiff_t)q], c[q], c[0],
                                         hf, x, i, j, k, sp, c0, c1);
            else
                out[x] = hr_point<T, W>(c[-(ptrdiff_t)p], c[p], c[-1], c[1], hf, x, i, j, sp, c[0], c0, c1);
        }
}

/* Box to dense buffer (dir 0) or back (dir 1), x fastest; W: a 4- or 8-byte word. */
template <typename Wd>
__global__ void dg_k_pack(Wd *g, Wd *buf, size_t p, size_t q, int lo0, int lo1, int lo2, int nx, int ny,
                          long total, int dir)
{
    for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (long)gridDim.x * blockDim.x) {
        const int x = (int)(t % nx);
        const long r = t / nx;
        const int y = (int)(r % ny), z = (int)(r / ny);
        const size_t idx = (size_t)(lo2 + z) * q + (size_t)(lo1 + y) * p + (size_t)(lo0 + x);
        if (dir == 0)
            buf[t] = g[idx];
        else
            g[idx] = buf[t];
    }
}

/* Partial sums of (|r| * irs)^2, (|b| * ibs)^2 and maxima over the box rows a block takes;
 * hri_cpu_residual_box's formula and Dirichlet-face terms. */
template <typename T>
__global__ void __launch_bounds__(DG_RES_THREADS)
    dg_k_resid(const T *u, const T *hf, size_t p, size_t q, int dim, hr_box b, unsigned d, int lnx, int lny,
               int lnz, hr_rhs_view sp, double irs, double ibs, double *part)
{
    const double diag = dim == 3 ? 6.0 : 4.0;
    const int bny = b.hi[1] - b.lo[1];
    const long rows = (long)bny * (b.hi[2] - b.lo[2]);
    double sr = 0.0, sb = 0.0, mr = 0.0, mb = 0.0;
    for (long row = blockIdx.x; row < rows; row += gridDim.x) {
        const int i = b.lo[1] + (int)(row % bny), k = b.lo[2] + (int)(row / bny);
        for (int j = b.lo[0] + threadIdx.x; j < b.hi[0]; j += blockDim.x) {
            const size_t x = (size_t)k * q + (size_t)i * p + (size_t)j;
            const double f = hf ? (double)hf[x] : (HR_IS_SPIKE(sp, i, j, k) ? HR_SPIKE_H2F : 0.0);
            const double w = u[x - 1], e = u[x + 1], n = u[x - p], s = u[x + p];
            double nb = (j == 1 && (d & HR_FACE_XLO) ? w : 0.0) + (j == lnx && (d & HR_FACE_XHI) ? e : 0.0) +
                        (i == 1 && (d & HR_FACE_YLO) ? n : 0.0) + (i == lny && (d & HR_FACE_YHI) ? s : 0.0);
            double au = diag * (double)u[x] - n - s - w - e;
            if (dim == 3) {
                const double dn = u[x - q], up = u[x + q];
                nb += (k == 1 && (d & HR_FACE_ZLO) ? dn : 0.0) + (k == lnz && (d & HR_FACE_ZHI) ? up : 0.0);
                au = au - dn - up;
            }
            const double r = f - au, bb = f + nb;
            const double ar = fabs(r) * irs, ab = fabs(bb) * ibs;
            sr += ar * ar;
            sb += ab * ab;
            mr = hr_nan_max(mr, ar);
            mb = hr_nan_max(mb, ab);
        }
    }
    hr_norm_block_reduce<DG_RES_THREADS>(sr, sb, mr, mb, part);
}

/* ------------------------------------------------------------ field operations */

template <typename T, bool W> static cudaError_t box_generic(const hr_sweep_args *a, cudaStream_t st)
{
    const hr_box *b = &a->box;
    const hr_grid_layout *l = a->l;
    const int nx = b->hi[0] - b->lo[0], ny = b->hi[1] - b->lo[1], nz = b->hi[2] - b->lo[2];
    int bx = 32; /* thin boxes (an x split's shell columns): fewer idle lanes per block */
    while (bx > 1 && bx / 2 >= nx)
        bx /= 2;
    const int by = 256 / bx;
    const dim3 blk(bx, by), grd((unsigned)((nx + bx - 1) / bx), hr_grid_y((ny + by - 1) / by), hr_grid_y(nz));
    dg_k_box<T, W><<<grd, blk, 0, st>>>((const T *)a->in, (T *)a->out, (const T *)a->rhs.hf, l->pitch,
                                        l->plane, l->dim, b->lo[0], b->lo[1], b->lo[2], nx, ny, nz, a->rhs,
                                        (T)(1.0 - a->omega), (T)a->omega);
    return cudaGetLastError();
}

static cudaError_t sweep_launch(const dgpu *c, const hr_sweep_args *a, cudaStream_t st)
{
    const hr_box *b = &a->box;
    const hr_grid_layout *l = a->l;
    const int dbl = c->esize == 8, V = 16 / (int)c->esize;
    const int generic = c->s->o.tuning.dgpu_generic > 0; /* tests: the box kernel everywhere */
    const int head = (V - (b->lo[0] - 1) % V) % V;       /* columns before the first aligned one */
    if (generic || (head > 0 && b->hi[0] - b->lo[0] <= head + V)) {
        if (a->omega != 1.0) return dbl ? box_generic<double, true>(a, st) : box_generic<float, true>(a, st);
        return dbl ? box_generic<double, false>(a, st) : box_generic<float, false>(a, st);
    }
    if (head > 0) { /* a box starting off the 16-byte grid (x splits): its first columns alone */
        hr_sweep_args h = *a, rest = *a;
        h.box.hi[0] = b->lo[0] + head;
        rest.box.lo[0] = b->lo[0] + head;
        cudaError_t e = sweep_launch(c, &h, st);
        return e != cudaSuccess ? e : sweep_launch(c, &rest, st);
    }
    /* the tuned region kernel on a view whose interior is the box: the origin moves to
     * the box's corner (lo - 1), extents become the box's; rows and planes keep their
     * strides and the first column its 16-byte alignment */
    hr_gpu g;
    memset(&g, 0, sizeof g);
    g.dim = l->dim;
    g.dbl = dbl;
    g.esize = c->esize;
    g.pitch = l->pitch;
    g.plane = l->plane;
    g.nx = g.n = b->hi[0] - b->lo[0];
    g.ny = b->hi[1] - b->lo[1];
    g.nz = l->dim == 3 ? b->hi[2] - b->lo[2] : 1;
    g.offset = (size_t)(b->lo[0] - 1) + (size_t)(b->lo[1] - 1) * l->pitch +
               (l->dim == 3 ? (size_t)(b->lo[2] - 1) * l->plane : 0);
    g.d_u[0] = (void *)a->in;
    g.d_u[1] = a->out;
    g.dcur = 0;
    g.d_hf = (void *)a->rhs.hf;
    g.spike = a->rhs;
    g.spike.hf = NULL;
    if (g.spike.spike_i >= 0) {
        g.spike.spike_i -= b->lo[1] - 1;
        g.spike.spike_j -= b->lo[0] - 1;
        if (l->dim == 3) g.spike.spike_k -= b->lo[2] - 1;
    }
    g.omega = a->omega;
    g.dev = c->dev;
    g.shape = c->shape;
    if (l->dim == 3) return hri_gpu_tuned3d_planes(&g, 1, g.nz + 1, st);
    return hri_gpu_tuned2d_rows(&g, 1, g.ny + 1, st);
}

enum { TE_START, TE_SHELL, TE_PACKED, TE_INNER, TE_GHOST };

static hr_status dg_sweep(void *ctx, const hr_sweep_args *a, int lane)
{
    dgpu *c = (dgpu *)ctx;
    if (hr_box_empty(&a->box)) return HR_OK;
    DG_CU(c, cudaSetDevice(c->dev));
    const int inner = lane == HR_DLANE_INNER;
    cudaStream_t st = c->lane[inner];
    DG_CU(c, sweep_launch(c, a, st));
    /* the timing event first: whoever waits for the lane's event finds it complete too */
    if (c->inchain) DG_CU(c, cudaEventRecord(c->tev[c->k % 2][inner ? TE_INNER : TE_SHELL], st));
    /* packs wait for the shell lane, the next sweep's start for both */
    DG_CU(c, cudaEventRecord(inner ? c->ev_inner : c->ev_shell, st));
    return HR_OK;
}

/* The shell lane waits for every face stream's last work (no host wait). */
static hr_status lane0_waits_faces(dgpu *c)
{
    for (int f = 0; f < 6; f++)
        if (c->face[f]) DG_CU(c, cudaStreamWaitEvent(c->lane[0], c->ev_face[f], 0));
    return HR_OK;
}

/* The chain of device-overlapped sweeps (hr_field_ops.mark). A sweep starts (TE_START, on
 * the shell lane, which the interior lane waits for) after the previous sweep's faces
 * (TE_GHOST: ghost layers in place) and interior: every lane and face stream of sweep k + 1
 * follows all of sweep k, ordered on the device. */
static hr_status dg_mark(void *ctx, int what)
{
    dgpu *c = (dgpu *)ctx;
    DG_CU(c, cudaSetDevice(c->dev));
    if (what == HR_DMARK_PACKED) {
        HR_TRY(lane0_waits_faces(c));
        DG_CU(c, cudaEventRecord(c->tev[c->k % 2][TE_PACKED], c->lane[0]));
        return HR_OK;
    }
    if (what == HR_DMARK_END && !c->inchain) return HR_OK;
    HR_TRY(lane0_waits_faces(c));
    if (c->inchain) DG_CU(c, cudaEventRecord(c->tev[c->k % 2][TE_GHOST], c->lane[0]));
    DG_CU(c, cudaStreamWaitEvent(c->lane[0], c->ev_inner, 0));
    if (c->inchain) {
        c->k++;
    } else {
        c->k = c->k_read = 0;
    }
    DG_CU(c, cudaEventRecord(c->tev[c->k % 2][TE_START], c->lane[0]));
    if (what == HR_DMARK_END) {
        c->inchain = 0;
        return HR_OK;
    }
    DG_CU(c, cudaStreamWaitEvent(c->lane[1], c->tev[c->k % 2][TE_START], 0));
    c->inchain = 1;
    return HR_OK;
}

static double dg_elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0.0;
    }
    return ms * 1e-3;
}

/* Sweep k - 1's times, once: the caller knows its events are complete (the host waited
 * for sweep k's packs, which follow sweep k's start, or for everything after the end). */
static int dg_lagged(void *ctx, double v[5])
{
    dgpu *c = (dgpu *)ctx;
    if (c->k < 1 || c->k_read >= c->k || cudaSetDevice(c->dev) != cudaSuccess) return 0;
    c->k_read = c->k;
    cudaEvent_t *e = c->tev[(c->k - 1) % 2];
    v[0] = dg_elapsed(e[TE_START], c->tev[c->k % 2][TE_START]);
    v[1] = dg_elapsed(e[TE_SHELL], e[TE_PACKED]);
    v[2] = dg_elapsed(e[TE_SHELL], e[TE_GHOST]);
    const double x = dg_elapsed(e[TE_INNER], e[TE_GHOST]);
    v[3] = x > 0.0 ? x : 0.0;
    v[4] = dg_elapsed(e[TE_PACKED], e[TE_GHOST]);
    return 1;
}

static cudaError_t resid_pass(dgpu *c, const hr_resid_args *a, double rs, double bs)
{
    const hr_grid_layout *l = a->l;
    cudaStream_t st = c->lane[0];
    const size_t q = l->dim == 3 ? l->plane : 0;
    if (c->esize == 8)
        dg_k_resid<double><<<DG_RES_BLOCKS, DG_RES_THREADS, 0, st>>>(
            (const double *)a->u, (const double *)a->rhs.hf, l->pitch, q, l->dim, a->box, a->dirichlet, l->nx,
            l->ny, l->nz, a->rhs, 1.0 / rs, 1.0 / bs, c->d_part);
    else
        dg_k_resid<float><<<DG_RES_BLOCKS, DG_RES_THREADS, 0, st>>>(
            (const float *)a->u, (const float *)a->rhs.hf, l->pitch, q, l->dim, a->box, a->dirichlet, l->nx,
            l->ny, l->nz, a->rhs, 1.0 / rs, 1.0 / bs, c->d_part);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    double *tot = c->d_part + 4 * DG_RES_BLOCKS;
    hr_norm_total<<<1, 32, 0, st>>>(c->d_part, DG_RES_BLOCKS, tot);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    if ((e = cudaMemcpyAsync(c->h_res, tot, 4 * sizeof(double), cudaMemcpyDeviceToHost, st)) != cudaSuccess)
        return e;
    return cudaStreamSynchronize(st);
}

static hr_norm2 norm2(double scale, double ssq)
{
    hr_norm2 n;
    n.scale = scale;
    n.ssq = ssq;
    return n;
}

/* hri_cpu_residual_box's decision between the plain and the scaled pass, value for value */
static hr_status dg_residual(void *ctx, const hr_resid_args *a, hr_norm2 *rn, hr_norm2 *bn)
{
    dgpu *c = (dgpu *)ctx;
    DG_CU(c, cudaSetDevice(c->dev));
    DG_CU(c, cudaStreamWaitEvent(c->lane[0], c->ev_inner, 0)); /* after the interior, too */
    DG_CU(c, resid_pass(c, a, 1.0, 1.0));
    double r2 = c->h_res[0], b2 = c->h_res[1], rmax = c->h_res[2], bmax = c->h_res[3];
    const int r_ok = isfinite(r2) && (rmax == 0.0 || rmax >= 1e-150),
              b_ok = isfinite(b2) && (bmax == 0.0 || bmax >= 1e-150);
    if (isnan(rmax) || isnan(bmax) || (r_ok && b_ok)) {
        *rn = norm2(1.0, isnan(rmax) ? NAN : r2);
        *bn = norm2(1.0, isnan(bmax) ? NAN : b2);
        return HR_OK;
    }
    if (isinf(rmax) || isinf(bmax)) {
        *rn = norm2(1.0, isinf(rmax) ? INFINITY : r2);
        *bn = norm2(1.0, isinf(bmax) ? INFINITY : b2);
        return HR_OK;
    }
    const double rs = rmax > 0.0 ? hr_norm2_scale(rmax) : 1.0, bs = bmax > 0.0 ? hr_norm2_scale(bmax) : 1.0;
    DG_CU(c, resid_pass(c, a, rs, bs));
    *rn = norm2(c->h_res[2] > 0.0 ? rs : 0.0, c->h_res[0]);
    *bn = norm2(c->h_res[3] > 0.0 ? bs : 0.0, c->h_res[1]);
    return HR_OK;
}

static cudaError_t pack_launch(const dgpu *c, const hr_grid_layout *l, const void *origin, const hr_box *b,
                               void *buf, int dir, cudaStream_t st)
{
    const int nx = b->hi[0] - b->lo[0], ny = b->hi[1] - b->lo[1];
    const long total = (long)hr_box_points(b);
    if (total == 0) return cudaSuccess;
    const int threads = 256;
    long blocks = (total + threads - 1) / threads;
    if (blocks > 8192) blocks = 8192;
    if (c->esize == 8)
        dg_k_pack<unsigned long long><<<(unsigned)blocks, threads, 0, st>>>(
            (unsigned long long *)origin, (unsigned long long *)buf, l->pitch, l->plane, b->lo[0], b->lo[1],
            b->lo[2], nx, ny, total, dir);
    else
        dg_k_pack<unsigned><<<(unsigned)blocks, threads, 0, st>>>((unsigned *)origin, (unsigned *)buf,
                                                                  l->pitch, l->plane, b->lo[0], b->lo[1],
                                                                  b->lo[2], nx, ny, total, dir);
    return cudaGetLastError();
}

static hr_status dg_pack(void *ctx, int face, const hr_grid_layout *l, const void *origin, const hr_box *b,
                         void *buf)
{
    dgpu *c = (dgpu *)ctx;
    DG_CU(c, cudaSetDevice(c->dev));
    cudaStream_t st = c->face[face];
    DG_CU(c, cudaStreamWaitEvent(st, c->ev_shell, 0));
    void *dst = c->stage[face][0] ? c->stage[face][0] : buf;
    DG_CU(c, pack_launch(c, l, origin, b, dst, 0, st));
    if (c->stage[face][0])
        DG_CU(c, cudaMemcpyAsync(buf, dst, hr_box_points(b) * c->esize, cudaMemcpyDeviceToHost, st));
    DG_CU(c, cudaEventRecord(c->ev_face[face], st));
    return HR_OK;
}

static hr_status dg_unpack(void *ctx, int face, const hr_grid_layout *l, void *origin, const hr_box *b,
                           const void *buf)
{
    dgpu *c = (dgpu *)ctx;
    DG_CU(c, cudaSetDevice(c->dev));
    cudaStream_t st = c->face[face];
    void *src = c->stage[face][1] ? c->stage[face][1] : (void *)buf;
    if (c->stage[face][1])
        DG_CU(c, cudaMemcpyAsync(src, buf, hr_box_points(b) * c->esize, cudaMemcpyHostToDevice, st));
    DG_CU(c, pack_launch(c, l, origin, b, src, 1, st));
    DG_CU(c, cudaEventRecord(c->ev_face[face], st));
    return HR_OK;
}

static hr_status dg_sync(void *ctx, int lane)
{
    dgpu *c = (dgpu *)ctx;
    DG_CU(c, cudaSetDevice(c->dev));
    if (lane == HR_DLANE_SHELL || lane == HR_DLANE_ALL) DG_CU(c, cudaStreamSynchronize(c->lane[0]));
    if (lane == HR_DLANE_INNER || lane == HR_DLANE_ALL) DG_CU(c, cudaStreamSynchronize(c->lane[1]));
    if (lane == HR_DLANE_FACES || lane == HR_DLANE_ALL)
        for (int f = 0; f < 6; f++)
            if (c->face[f]) DG_CU(c, cudaStreamSynchronize(c->face[f]));
    return HR_OK;
}

extern "C" const hr_field_ops hri_field_ops_gpu = {"gpu",   1,         dg_sweep, dg_residual,
                                                  dg_pack, dg_unpack, dg_sync,  dg_mark};

/* ------------------------------------------------------------ the placement */

static void dg_destroy(void *ctx)
{
    dgpu *c = (dgpu *)ctx;
    if (!c) return;
    if (cudaSetDevice(c->dev) == cudaSuccess) {
        cudaDeviceSynchronize();
        for (int q = 0; q < 2; q++) {
            cudaFree(c->d_base[q]);
            if (c->lane[q]) cudaStreamDestroy(c->lane[q]);
        }
        cudaFree(c->d_hf);
        for (int f = 0; f < 6; f++) {
            if (c->face[f]) cudaStreamDestroy(c->face[f]);
            for (int r = 0; r < 2; r++)
                cudaFree(c->stage[f][r]);
        }
        for (int i = 0; i < DG_MAX_BUFS; i++) {
            if (!c->bufs[i].p) continue;
            if (c->bufs[i].pinned)
                cudaFreeHost(c->bufs[i].p);
            else
                cudaFree(c->bufs[i].p);
        }
        cudaEvent_t *evs[] = {&c->ev_shell, &c->ev_inner, c->ev_face, c->tev[0], c->tev[1]};
        const int nev[] = {1, 1, 6, 5, 5};
        for (int g = 0; g < 5; g++)
            for (int i = 0; i < nev[g]; i++)
                if (evs[g][i]) cudaEventDestroy(evs[g][i]);
        cudaFree(c->d_part);
        cudaFreeHost(c->h_res);
    }
    (void)cudaGetLastError();
    free(c);
}

/* The shape the `tuned` kernel of one GPU runs a grid of the subdomain's extents with (the
 * tuning cache, then the shapes shipped for this architecture, as the gpu backend and the
 * split engine choose), so that a decomposed sweep is as fast per point as one GPU's; the
 * family's default where neither has one. Every box of the subdomain sweeps with it. */
static void choose_shape(dgpu *c, const hr_grid_layout *l, const cudaDeviceProp *prop)
{
    hr_gpu g;
    memset(&g, 0, sizeof g);
    g.fam = l->dim == 3 ? &hri_fam_tuned3d : &hri_fam_tuned;
    g.name = "tuned";
    g.dim = l->dim;
    g.nx = g.n = l->nx;
    g.ny = l->ny;
    g.nz = l->dim == 3 ? l->nz : 1;
    g.dbl = c->esize == 8;
    g.sms = prop->multiProcessorCount;
    g.cc_major = prop->major;
    g.cc_minor = prop->minor;
    g.tune = &c->s->o.tuning;
    char why[160];
    hr_gpu_shape sh;
    if (!(hri_gpu_cache_lookup(&g, prop->name, &sh) && !g.fam->check(&g, sh, why, sizeof why)) &&
        !(hri_gpu_shipped_lookup(&g, &sh) && !g.fam->check(&g, sh, why, sizeof why)))
        sh = g.fam->def[g.dbl];
    c->shape = sh;
}

static hr_status dg_create(hr_dsolver *s, hr_dsub *d, int device, char *err, size_t es)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
    (void)cudaGetLastError();
    if (device < 0 || device >= count) {
        if (err && es) snprintf(err, es, "device: no CUDA device %d (found %d)", device, count);
        return count ? HR_ERR_INVALID_ARG : HR_ERR_NO_DEVICE;
    }
    dgpu *c = (dgpu *)calloc(1, sizeof *c);
    if (!c) return HR_ERR_NO_MEMORY;
    d->ctx = c;
    c->s = s;
    c->dev = device;
    c->l = d->g.l;
    c->esize = c->l.esize;
    DG_CU(c, cudaSetDevice(device));
    cudaDeviceProp prop;
    DG_CU(c, cudaGetDeviceProperties(&prop, device));
    snprintf(c->name, sizeof c->name, "%.95s", prop.name);
    choose_shape(c, &d->g.l, &prop);
    /* the layout plus a spare row: vector loads of the last row's end stay inside */
    const size_t bytes = (c->l.count + c->l.pitch + 64) * c->esize;
    const int grids = d->hf.base ? 3 : 2;
    size_t free_b = 0, total_b = 0;
    DG_CU(c, cudaMemGetInfo(&free_b, &total_b));
    if (bytes * (size_t)grids > free_b) {
        if (err && es)
            snprintf(err, es, "n: a subdomain needs %.2f GiB on GPU %d, %.2f GiB free",
                     (double)bytes * grids / 1073741824.0, device, (double)free_b / 1073741824.0);
        return HR_ERR_NO_MEMORY;
    }
    const size_t used = hr_layout_bytes(&c->l);
    for (int q = 0; q < 2; q++) {
        DG_CU(c, cudaMalloc(&c->d_base[q], bytes));
        DG_CU(c, cudaMemset(c->d_base[q], 0, bytes));
        DG_CU(c, cudaMemcpy(c->d_base[q], d->u[q].base, used, cudaMemcpyHostToDevice));
        d->org[q] = (char *)c->d_base[q] + c->l.offset * c->esize;
    }
    if (d->hf.base) {
        DG_CU(c, cudaMalloc(&c->d_hf, bytes));
        DG_CU(c, cudaMemset(c->d_hf, 0, bytes));
        DG_CU(c, cudaMemcpy(c->d_hf, d->hf.base, used, cudaMemcpyHostToDevice));
        d->rhs.hf = (char *)c->d_hf + c->l.offset * c->esize;
    }
    int least = 0, greatest = 0;
    DG_CU(c, cudaDeviceGetStreamPriorityRange(&least, &greatest));
    DG_CU(c, cudaStreamCreateWithPriority(&c->lane[0], cudaStreamNonBlocking, greatest));
    DG_CU(c, cudaStreamCreateWithPriority(&c->lane[1], cudaStreamNonBlocking, least));
    for (int a = 0; a < d->g.l.dim; a++)
        for (int side = 0; side < 2; side++)
            if (d->g.nb[a][side] >= 0)
                DG_CU(c,
                      cudaStreamCreateWithPriority(&c->face[2 * a + side], cudaStreamNonBlocking, greatest));
    DG_CU(c, cudaEventCreateWithFlags(&c->ev_shell, cudaEventDisableTiming));
    DG_CU(c, cudaEventCreateWithFlags(&c->ev_inner, cudaEventDisableTiming));
    for (int f = 0; f < 6; f++)
        if (c->face[f]) DG_CU(c, cudaEventCreateWithFlags(&c->ev_face[f], cudaEventDisableTiming));
    for (int q = 0; q < 2; q++)
        for (int e = 0; e < 5; e++)
            DG_CU(c, cudaEventCreate(&c->tev[q][e]));
    DG_CU(c, cudaMalloc(&c->d_part, (4 * DG_RES_BLOCKS + 4) * sizeof(double)));
    DG_CU(c, cudaHostAlloc(&c->h_res, 4 * sizeof(double), cudaHostAllocPortable));
    /* a pageable upload may still be in flight when cudaMemcpy returns, and the streams
     * above do not wait for the legacy stream */
    DG_CU(c, cudaDeviceSynchronize());
    return HR_OK;
}

static void *dg_buf_alloc(void *ctx, int face, int recv, size_t bytes, int device_buffers)
{
    dgpu *c = (dgpu *)ctx;
    int slot = -1;
    for (int i = 0; i < DG_MAX_BUFS && slot < 0; i++)
        if (!c->bufs[i].p) slot = i;
    if (slot < 0 || face < 0 || face > 5 || cudaSetDevice(c->dev) != cudaSuccess) return NULL;
    void *p = NULL;
    const size_t n = bytes ? bytes : 1;
    if (device_buffers) {
        if (cudaMalloc(&p, n) != cudaSuccess) p = NULL;
    } else {
        /* pinned host memory for the transport, a device twin for the pack kernel */
        if (cudaHostAlloc(&p, n, cudaHostAllocPortable) != cudaSuccess) p = NULL;
        if (p && cudaMalloc(&c->stage[face][recv], n) != cudaSuccess) {
            cudaFreeHost(p);
            p = NULL;
        }
        if (p) c->stage_bytes[face][recv] = n;
    }
    (void)cudaGetLastError();
    if (p) {
        c->bufs[slot].p = p;
        c->bufs[slot].pinned = !device_buffers;
    }
    return p;
}

static void dg_buf_free(void *ctx, void *p)
{
    dgpu *c = (dgpu *)ctx;
    for (int i = 0; i < DG_MAX_BUFS; i++)
        if (c->bufs[i].p == p) {
            cudaSetDevice(c->dev);
            if (c->bufs[i].pinned)
                cudaFreeHost(p);
            else
                cudaFree(p);
            c->bufs[i].p = NULL;
        }
    (void)cudaGetLastError();
}

static hr_status dg_download(void *ctx, hr_dsub *d, int which)
{
    dgpu *c = (dgpu *)ctx;
    DG_CU(c, cudaSetDevice(c->dev));
    DG_CU(c, cudaDeviceSynchronize());
    DG_CU(c, cudaMemcpy(d->u[which].base, c->d_base[which], hr_layout_bytes(&c->l), cudaMemcpyDeviceToHost));
    return HR_OK;
}

static const char *dg_device_name(void *ctx)
{
    return ((dgpu *)ctx)->name;
}

extern "C" const hr_dplace_ops hri_dplace_gpu = {dg_create, dg_buf_alloc, dg_buf_free,   dg_download,
                                                dg_lagged, dg_destroy,   dg_device_name};

extern "C" int hri_dsolver_gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    (void)cudaGetLastError();
    return n;
}
