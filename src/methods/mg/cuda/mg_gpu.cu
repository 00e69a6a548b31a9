/*
 * Multigrid on the GPU: every level on the device, one iteration (a
 * cycle, the FMG pass, a defect correction, a CG iteration) recorded once as a list of
 * operators, the same sequence mg_cycle.c runs on the CPU, and replayed as a captured
 * CUDA graph. Levels of more than `small_points` points get one kernel per operator (one
 * thread per point); the run of operators on the levels below that goes into one launch
 * of a one-block kernel, so a cycle is not a chain of launch latencies on the small levels.
 * Fusions: residual + full weighting + zeroing the coarse iterate in one kernel, prolongation
 * + correction in one, the Chebyshev sweep + update in one, the defect check writing the
 * fp32 right-hand side of the next cycle.
 *
 * The host tracks which of each level's two buffers holds the iterate (Jacobi and
 * Chebyshev ping-pong); a recorded graph is keyed by the program and that state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "core/timer.h"
extern "C" {
#include "runtime/cpu/team.h"
}
#include "methods/mg/cuda/mg_gpu_async.cuh"
#include "methods/mg/cuda/mg_gpu_fused.cuh"
#include "runtime/cuda/march_rows.h"
#include "methods/mg/cuda/mg_gpu_internal.cuh"
#include "methods/mg/cuda/mg_gpu_march.cuh"
#include "methods/mg/cuda/mg_gpu_outer.cuh"
#include "reference/stencil_cpu.h"

static hr_status gfail(mg_gpu *g, cudaError_t e, const char *call, int line)
{
    snprintf(g->err, sizeof g->err, "%s failed at mg_gpu.cu:%d: %s: %s", call, line, cudaGetErrorName(e),
             cudaGetErrorString(e));
    (void)cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? HR_ERR_NO_MEMORY : HR_ERR_DEVICE;
}

#define GCU(g, call)                                                                                         \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) return gfail((g), e_, #call, __LINE__);                                       \
    } while (0)

/* ------------------------------------------------------------------ launching */

static dim3 level_block(int ex)
{
    const int bx = ex >= 128 ? 128 : ex >= 64 ? 64 : 32;
    return dim3(bx, 256 / bx, 1);
}

/* The rows a warp of mgg_rbw2_kernel marches on a level of bx blocks across and n rows
 * (hri_march_rows: the fewest steps in waves of the g->rbw_held blocks the device holds). */
static int rbw_rows(const mg_gpu *g, long bx, int n, int extra)
{
#ifdef MGG_RBW_ROWS
    (void)g, (void)bx, (void)n, (void)extra;
    return MGG_RBW_ROWS; /* the CPU emulation: short segments, to cross many of them */
#else
    return hri_march_rows(g->rbw_held, bx, n, extra, 16, 128);
#endif
}

/* The blocks of mgg_rbw2_kernel the device holds at once (the occupancy of its post-smoothing
 * variant, two sweeps after the prolongation). */
static long rbw_held(mg_gpu *g)
{
#ifdef MGG_RBW_ROWS
    (void)g;
    return 1;
#else
    int sms = 0, per = 0;
    const void *k = g->s.esize == 8 ? (const void *)mgg_rbw2_kernel<double, 2, false, true, false>
                                    : (const void *)mgg_rbw2_kernel<float, 2, false, true, false>;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g->dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, MGG_RBW_THREADS, 0) != cudaSuccess || sms < 1 ||
        per < 1) {
        (void)cudaGetLastError();
        return 1;
    }
    return (long)sms * per;
#endif
}

/* Fused red-black smoothing (OPK_RBF, 2-D): a warp's march (mgg_rbw2_kernel), one kernel per
 * combination of its flags. */
template <typename T, int NS> static void launch_rbf_ns(mg_gpu *g, const mgg_op &o)
{
    const mgg_lev &L = g->lev[o.lev], &C = g->lev[o.lev + 1 < g->nlev ? o.lev + 1 : o.lev];
    const int own = 64 - 4 * NS, warps = (L.nx + own - 1) / own, per = MGG_RBW_THREADS / 32;
    const int bx = (warps + per - 1) / per, rows = rbw_rows(g, bx, L.ny, 2 * NS);
    const dim3 grid(bx, (L.ny + rows - 1) / rows);
    const bool z = o.x != 0.0, pro = (o.e & MGG_RBF_PRO) != 0, out = (o.e & MGG_RBF_OUT) != 0;
    /* (the name rbw2 tells the CPU emulation's converter to run the lanes in lock step) */
    void (*rbw2)(mgg_op, mgg_lev, mgg_lev, mgg_lev, int) =
        z     ? (out ? mgg_rbw2_kernel<T, NS, true, false, true> : mgg_rbw2_kernel<T, NS, true, false, false>)
        : pro ? (out ? mgg_rbw2_kernel<T, NS, false, true, true> : mgg_rbw2_kernel<T, NS, false, true, false>)
              : (out ? mgg_rbw2_kernel<T, NS, false, false, true> : mgg_rbw2_kernel<T, NS, false, false, false>);
    rbw2<<<grid, MGG_RBW_THREADS, 0, g->st>>>(o, L, C, g->out, rows);
}

template <typename T, int D> static void launch_level(mg_gpu *g, const mgg_op &o)
{
    if (o.kind == OPK_RBF) { /* recorded on 2-D levels only */
        if (D == 2) (o.e & MGG_RBF_TWO) ? launch_rbf_ns<T, 2>(g, o) : launch_rbf_ns<T, 1>(g, o);
        return;
    }
    const mgg_lev &L = g->lev[o.lev];
    const mgg_lev &C = o.kind == OPK_RESTRICT || o.kind == OPK_PROLONG ? g->lev[o.lev + 1]
                       : o.kind == OPK_RB_OUT                          ? g->out
                                                                       : L;
    int ex, ey, ez;
    mgg_extent(o, L, C, &ex, &ey, &ez);
    const dim3 b = level_block(ex), grid((ex + b.x - 1) / b.x, (ey + b.y - 1) / b.y, ez);
    /* red-black and the prolongation (3-D) marching along z (3-D) or y (2-D), MGG_ZCHUNK planes
     * or rows per thread, on levels big enough to fill the GPU with 1/16 of a thread per point */
    const bool march = g->s.march_points > 0 && (long)L.nx * L.ny * L.nz >= g->s.march_points;
    if (D == 3 && o.kind == OPK_PROLONG && march) {
        const dim3 gz(grid.x, grid.y, (ez + MGG_ZCHUNK - 1) / MGG_ZCHUNK);
        mgg_prolong3_kernel<T><<<gz, b, 0, g->st>>>(o, L, C, ex, ey);
        return;
    }
    if (march && (o.kind == OPK_RB || o.kind == OPK_RB_OUT)) {
        const bool z = o.x != 0.0, ob = o.kind == OPK_RB_OUT;
        if (D == 3) {
            const dim3 gz(grid.x, grid.y, (ez + MGG_ZCHUNK - 1) / MGG_ZCHUNK);
            if (ob && z)
                mgg_rb3_kernel<T, true, true><<<gz, b, 0, g->st>>>(o, L, C, ex, ey);
            else if (ob)
                mgg_rb3_kernel<T, false, true><<<gz, b, 0, g->st>>>(o, L, C, ex, ey);
            else if (z)
                mgg_rb3_kernel<T, true, false><<<gz, b, 0, g->st>>>(o, L, C, ex, ey);
            else
                mgg_rb3_kernel<T, false, false><<<gz, b, 0, g->st>>>(o, L, C, ex, ey);
        } else {
            const int chunks = (ey + MGG_ZCHUNK - 1) / MGG_ZCHUNK;
            const dim3 gy(grid.x, (chunks + b.y - 1) / b.y, 1);
            if (ob && z)
                mgg_rb2_kernel<T, true, true><<<gy, b, 0, g->st>>>(o, L, C, ex, chunks);
            else if (ob)
                mgg_rb2_kernel<T, false, true><<<gy, b, 0, g->st>>>(o, L, C, ex, chunks);
            else if (z)
                mgg_rb2_kernel<T, true, false><<<gy, b, 0, g->st>>>(o, L, C, ex, chunks);
            else
                mgg_rb2_kernel<T, false, false><<<gy, b, 0, g->st>>>(o, L, C, ex, chunks);
        }
        return;
    }
    switch (o.kind) {
    case OPK_JACOBI: mgg_level_kernel<T, D, OPK_JACOBI><<<grid, b, 0, g->st>>>(o, L, C, ex, ey); break;
    case OPK_RB: mgg_level_kernel<T, D, OPK_RB><<<grid, b, 0, g->st>>>(o, L, C, ex, ey); break;
    case OPK_RB_OUT: mgg_level_kernel<T, D, OPK_RB_OUT><<<grid, b, 0, g->st>>>(o, L, C, ex, ey); break;
    case OPK_RB_HALF: mgg_level_kernel<T, D, OPK_RB_HALF><<<grid, b, 0, g->st>>>(o, L, C, ex, ey); break;
    case OPK_CHEBY: mgg_level_kernel<T, D, OPK_CHEBY><<<grid, b, 0, g->st>>>(o, L, C, ex, ey); break;
    case OPK_RESTRICT:
        if constexpr (D == 3 && sizeof(T) == 4)
            mgg_restrict_held_kernel<T, D><<<grid, b, 0, g->st>>>(o, L, C, ex, ey);
        else
            mgg_level_kernel<T, D, OPK_RESTRICT><<<grid, b, 0, g->st>>>(o, L, C, ex, ey);
        break;
    case OPK_ZERO: mgg_level_kernel<T, D, OPK_ZERO><<<grid, b, 0, g->st>>>(o, L, C, ex, ey); break;
    case OPK_PROLONG: mgg_level_kernel<T, D, OPK_PROLONG><<<grid, b, 0, g->st>>>(o, L, C, ex, ey); break;
    default: break;
    }
}

/* The asynchronous smoother on a big level: one block per tile. */
template <typename T, int D> static void launch_async(mg_gpu *g, const mgg_op &o)
{
    typedef mgg_async_tile<D> S;
    const mgg_lev &L = g->lev[o.lev];
    const dim3 grid((L.nx + S::TX - 1) / S::TX, (L.ny + S::TY - 1) / S::TY,
                    D == 3 ? (L.nz + S::TZ - 1) / S::TZ : 1);
    mgg_async_kernel<T, D><<<grid, MGG_ASYNC_THREADS, 0, g->st>>>(L, o.a, o.b, o.c);
}

/* Host node of --coarse-on cpu: the rest of the cycle on the CPU cores (staged in pinned
 * memory by the copies around it). */
static void CUDART_CB host_cycle(void *user)
{
    const mgg_host_desc *d = (const mgg_host_desc *)user;
    hri_mg_cpu_part_run(d->g->cpu, d->g->h_hf, d->g->h_u, d->type, d->fresh);
}

/* Level o.lev's right-hand side to the host, the CPU's cycle, its iterate back into u[o.b]. */
static void launch_host(mg_gpu *g, const mgg_op &o)
{
    const mgg_lev &L = g->lev[o.lev];
    if (o.c) /* a fresh visit: a new right-hand side (a second visit reuses it) */
        cudaMemcpyAsync(g->h_hf, (const char *)L.hf - g->cpu_off, g->cpu_bytes, cudaMemcpyDeviceToHost,
                        g->st);
    cudaLaunchHostFunc(g->st, host_cycle, &g->hdesc[(o.a & 3) * 2 + (o.c ? 1 : 0)]);
    cudaMemcpyAsync((char *)MGG_BUF(L, o.b) - g->cpu_off, g->h_u, g->cpu_bytes, cudaMemcpyHostToDevice,
                    g->st);
}

template <typename T, int D> static void launch_small(mg_gpu *g, const mgg_op *d_ops, int n)
{
    mgg_small_kernel<T, D><<<1, MGG_SMALL_THREADS, 0, g->st>>>(g->d_levs, d_ops, n, g->d_cgpart);
}

template <int D, typename TH> static void launch_outer(mg_gpu *g, const mgg_op &o)
{
    const mgg_lev &L0 = g->nlev > 0 ? g->lev[0] : g->out;
    if (o.kind == OPK_CG_FIN) {
        hri_mgg_fin_kernel<<<1, MGG_NB, 0, g->st>>>(g->d_part, g->d_sc, o.a);
        return;
    }
#define MGG_OUTER(K)                                                                                         \
    case K: mgg_outer_kernel<D, TH, K><<<MGG_NB, MGG_BT, 0, g->st>>>(o, g->out, L0, g->d_sc, g->d_part); break
    switch (o.kind) {
        MGG_OUTER(OPK_OUT_RESID);
        MGG_OUTER(OPK_TO_L0);
        MGG_OUTER(OPK_FROM_L0);
        MGG_OUTER(OPK_CG_APPLY_DOT);
        MGG_OUTER(OPK_CG_UPDATE);
        MGG_OUTER(OPK_CG_DOT);
        MGG_OUTER(OPK_CG_XPAY);
        MGG_OUTER(OPK_CG_COPY);
    default: break;
    }
#undef MGG_OUTER
}

/* Operators that run in the one-block kernel: the small levels, and the coarse CG always. */
static int in_small(const mg_gpu *g, const mgg_op &o)
{
    return o.kind < OPK_HIER_END && (o.lev >= g->first_small || o.kind == OPK_COARSE_CG);
}

template <typename T, int D> static void run_ops_t(mg_gpu *g, const mgg_op *d_ops)
{
    for (int i = 0; i < g->nops;) {
        const mgg_op &o = g->ops[i];
        if (o.kind == OPK_HOST) {
            launch_host(g, o);
            i++;
        } else if (o.kind == OPK_ASYNC) {
            launch_async<T, D>(g, o);
            i++;
        } else if (o.kind >= OPK_HIER_END) {
            launch_outer<D, T>(g, o);
            i++;
        } else if (in_small(g, o)) {
            int j = i;
            while (j < g->nops && in_small(g, g->ops[j]))
                j++;
            launch_small<T, D>(g, d_ops + i, j - i);
            i = j;
        } else {
            launch_level<T, D>(g, o);
            i++;
        }
    }
}

/* Launches the recorded program on the stream (d_ops: its device copy). */
static void run_ops(mg_gpu *g, const mgg_op *d_ops)
{
    const int dbl = g->s.esize == 8 || g->nlev == 0;
    if (g->s.dim == 3)
        dbl ? run_ops_t<double, 3>(g, d_ops) : run_ops_t<float, 3>(g, d_ops);
    else
        dbl ? run_ops_t<double, 2>(g, d_ops) : run_ops_t<float, 2>(g, d_ops);
}

/* Runs program `prog` from the current buffer state: a cached graph, or recorded now. */
static hr_status run_program(mg_gpu *g, int prog, int r_valid)
{
    const unsigned long long key = ((unsigned long long)(prog * 2 + r_valid) << 32) | g->cur;
    if (!g->s.no_graph)
        for (int i = 0; i < MGG_GRAPHS; i++) {
            mgg_graph *gr = &g->graphs[i];
            if (gr->used && gr->key == key && gr->dscale == g->dscale && gr->cg_s == g->cg_s) {
                GCU(g, cudaGraphLaunch(gr->exec, g->st));
                g->cur = gr->end_state;
                return HR_OK;
            }
        }
    hri_mgg_record(g, prog, r_valid);
    const size_t bytes = (size_t)(g->nops ? g->nops : 1) * sizeof(mgg_op);
    if (g->s.no_graph) {
        if (g->tmp_cap < g->nops) {
            if (g->d_tmp_ops) cudaFree(g->d_tmp_ops);
            g->d_tmp_ops = NULL;
            GCU(g, cudaMalloc((void **)&g->d_tmp_ops, bytes));
            g->tmp_cap = g->nops;
        }
        GCU(g, cudaMemcpyAsync(g->d_tmp_ops, g->ops, bytes, cudaMemcpyHostToDevice, g->st));
        run_ops(g, g->d_tmp_ops);
        GCU(g, cudaGetLastError());
        GCU(g, cudaStreamSynchronize(g->st)); /* the host buffer is re-recorded next time */
        return HR_OK;
    }
    /* a free slot (or the oldest) */
    mgg_graph *gr = NULL;
    for (int i = 0; i < MGG_GRAPHS && !gr; i++)
        if (!g->graphs[i].used) gr = &g->graphs[i];
    if (!gr) {
        gr = &g->graphs[0];
        GCU(g, cudaStreamSynchronize(g->st));
        cudaGraphExecDestroy(gr->exec);
        cudaFree(gr->d_ops);
        memmove(&g->graphs[0], &g->graphs[1], (MGG_GRAPHS - 1) * sizeof *gr);
        gr = &g->graphs[MGG_GRAPHS - 1];
        memset(gr, 0, sizeof *gr);
    }
    GCU(g, cudaMalloc((void **)&gr->d_ops, bytes));
    GCU(g, cudaMemcpy(gr->d_ops, g->ops, bytes, cudaMemcpyHostToDevice));
    GCU(g, cudaStreamSynchronize(
               cudaStreamLegacy)); /* legacy-stream work done before the non-blocking streams read it */
    cudaGraph_t graph = NULL;
    GCU(g, cudaStreamBeginCapture(g->st, cudaStreamCaptureModeThreadLocal));
    run_ops(g, gr->d_ops);
    const cudaError_t le = cudaGetLastError();
    const cudaError_t ce = cudaStreamEndCapture(g->st, &graph);
    if (le != cudaSuccess || ce != cudaSuccess) {
        if (graph) cudaGraphDestroy(graph);
        cudaFree(gr->d_ops);
        gr->d_ops = NULL;
        return gfail(g, le != cudaSuccess ? le : ce, "graph capture", __LINE__);
    }
    const cudaError_t ie = cudaGraphInstantiate(&gr->exec, graph, 0);
    cudaGraphDestroy(graph);
    if (ie != cudaSuccess) {
        cudaFree(gr->d_ops);
        gr->d_ops = NULL;
        return gfail(g, ie, "cudaGraphInstantiate", __LINE__);
    }
    gr->used = 1;
    gr->key = key;
    gr->dscale = g->dscale;
    gr->cg_s = g->cg_s;
    gr->end_state = g->cur; /* recording advanced the state */
    GCU(g, cudaGraphLaunch(gr->exec, g->st));
    return HR_OK;
}

/* ------------------------------------------------------------------ setup */

static hr_status galloc(mg_gpu *g, void **p, const hr_grid_layout *l)
{
    const size_t bytes = hr_layout_bytes(l);
    void *base = NULL;
    GCU(g, cudaMalloc(&base, bytes));
    g->allocs[g->nalloc] = base;
    g->alloc_bytes[g->nalloc++] = bytes;
    *p = (char *)base + l->offset * l->esize;
    return HR_OK;
}

static void lev_from_layout(mgg_lev *L, const hr_grid_layout *l)
{
    memset(L, 0, sizeof *L);
    L->nx = l->nx;
    L->ny = l->ny;
    L->nz = l->nz;
    L->pitch = (long long)l->pitch;
    L->plane = (long long)l->plane;
    L->si = L->sj = L->sk = -1;
    L->slices = l->dim == 3 ? l->nz : l->ny;
}

#define GTRY(call)                                                                                           \
    do {                                                                                                     \
        hr_status st_ = (call);                                                                              \
        if (st_ != HR_OK) return st_;                                                                        \
    } while (0)

/* ------------------------------------------------------------------ the right-hand side */

/* The padded index (from point (0, 0, 0)) of unknown `line * nx + x` of an array with x
 * fastest and no padding (line = y row, then z plane). */
__device__ __forceinline__ long long mgg_dense_at(long long line, long long x, int ny, int dim, long long pitch,
                                                  long long plane)
{
    const long long i = dim == 3 ? line % ny + 1 : line + 1, k = dim == 3 ? line / ny + 1 : 0;
    return k * plane + i * pitch + x + 1;
}

/* Lines [line0, line0 + lines) of f (x fastest, no padding) into the padded solution level
 * (dst: its point (0, 0, 0)) as h^2 (scale f), the product and its rounding the host's
 * (hri_grid_set3 of h * h * f, f scaled first where the caller scales it). */
template <typename T, typename S>
__global__ void mgg_rhs_lines(T *dst, const S *src, long long line0, long long lines, int nx, int ny, int dim,
                              long long pitch, long long plane, double h2, double scale)
{
    const long long total = lines * nx;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        double v = (double)src[t];
        if (scale != 1.0) v *= scale;
        dst[mgg_dense_at(line0 + t / nx, t % nx, ny, dim, pitch, plane)] = (T)(h2 * v);
    }
}

/* Lines [line0, line0 + lines) of the level's unknowns (src: its point (0, 0, 0)) into dst, x
 * fastest, no padding (dst: the first line's first value). */
template <typename O, typename T>
__global__ void mgg_pack_lines(O *dst, const T *src, long long line0, long long lines, int nx, int ny, int dim,
                               long long pitch, long long plane)
{
    const long long total = lines * nx;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x)
        dst[t] = (O)src[mgg_dense_at(line0 + t / nx, t % nx, ny, dim, pitch, plane)];
}

/* Blocks of 256 threads for n elements, at most 4096 (the kernels stride). */
static unsigned mgg_blocks_for(size_t n)
{
    return (unsigned)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
}

#ifndef MGG_UP_CHUNK /* the CPU emulation's test takes small chunks, to pass through every slot */
#define MGG_UP_CHUNK ((size_t)8 << 20) /* bytes of f per staged chunk */
#endif

static void stage_free(mg_gpu *g);

/* The staging of host arrays, made at the first use with slots of MGG_UP_CHUNK bytes (or one
 * line of `line` bytes where that is more). */
static hr_status stage_ready(mg_gpu *g, size_t line)
{
    const size_t want = line > MGG_UP_CHUNK ? line : MGG_UP_CHUNK;
    if (g->stage_team && g->stage_bytes >= want) return HR_OK;
    stage_free(g);
    g->stage_bytes = want;
    for (int k = 0; k < MGG_STAGE_SLOTS; k++) {
        cudaError_t e = cudaMallocHost((void **)&g->stage_pin[k], g->stage_bytes);
        if (e == cudaSuccess) e = cudaMalloc((void **)&g->stage_dev[k], g->stage_bytes);
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&g->stage_done[k], cudaEventDisableTiming);
        if (e != cudaSuccess) return gfail(g, e, "the host arrays' staging", __LINE__);
    }
    /* memcpy threads: enough to outrun the copy engine, not the whole machine */
    const int cores = hri_cpu_count();
    const int nt = cores < 8 ? (cores > 0 ? cores : 1) : 8;
    return hri_team_create(nt, HR_BIND_NONE, &g->stage_team) == HR_OK ? HR_OK : HR_ERR_NO_MEMORY;
}

static void stage_free(mg_gpu *g)
{
    if (g->stage_team) hri_team_free(g->stage_team);
    g->stage_team = NULL;
    for (int k = 0; k < MGG_STAGE_SLOTS; k++) {
        if (g->stage_pin[k]) cudaFreeHost(g->stage_pin[k]);
        if (g->stage_dev[k]) cudaFree(g->stage_dev[k]);
        if (g->stage_done[k]) cudaEventDestroy(g->stage_done[k]);
        g->stage_pin[k] = g->stage_dev[k] = NULL;
        g->stage_done[k] = NULL;
    }
}

/* The upload's shared state: the caller's f goes through MGG_STAGE_SLOTS pinned chunks, which
 * the host threads fill while the device copies and places the previous ones. */
typedef struct rhs_upload {
    mg_gpu *g;
    const mgg_lev *S; /* the solution level, elements of es bytes */
    size_t es;
    const double *f;
    long long lines, per; /* lines in all, lines per chunk */
    int nx;
    double *pin[MGG_STAGE_SLOTS], *dev[MGG_STAGE_SLOTS];
    cudaEvent_t done[MGG_STAGE_SLOTS];
    hr_team *team;
    cudaError_t err;
} rhs_upload;

static void upload_job(void *ctx, int tid, int nt)
{
    rhs_upload *u = (rhs_upload *)ctx;
    mg_gpu *g = u->g;
    const mgg_lev *S = u->S;
    if (tid == 0) (void)cudaSetDevice(g->dev);
    const long long chunks = (u->lines + u->per - 1) / u->per;
    for (long long c = 0; c < chunks; c++) {
        const int slot = (int)(c % MGG_STAGE_SLOTS);
        const long long l0 = c * u->per, nl = u->lines - l0 < u->per ? u->lines - l0 : u->per;
        const size_t n = (size_t)nl * (size_t)u->nx;
        /* the slot's previous chunk has reached the device and been placed */
        if (tid == 0 && c >= MGG_STAGE_SLOTS && u->err == cudaSuccess) u->err = cudaEventSynchronize(u->done[slot]);
        hri_team_barrier(u->team);
        const size_t a = n * (size_t)tid / (size_t)nt, b = n * (size_t)(tid + 1) / (size_t)nt;
        memcpy(u->pin[slot] + a, u->f + (size_t)l0 * (size_t)u->nx + a, (b - a) * sizeof(double));
        hri_team_barrier(u->team);
        if (tid != 0 || u->err != cudaSuccess) continue;
        cudaError_t e = cudaMemcpyAsync(u->dev[slot], u->pin[slot], n * sizeof(double), cudaMemcpyHostToDevice, g->st);
        if (e == cudaSuccess) {
            const unsigned blocks = mgg_blocks_for(n);
            if (u->es == 8)
                mgg_rhs_lines<double, double><<<blocks, 256, 0, g->st>>>(
                    (double *)S->hf, u->dev[slot], l0, nl, S->nx, S->ny, g->s.dim, S->pitch, S->plane, g->s.rhs_h2, 1.0);
            else
                mgg_rhs_lines<float, double><<<blocks, 256, 0, g->st>>>(
                    (float *)S->hf, u->dev[slot], l0, nl, S->nx, S->ny, g->s.dim, S->pitch, S->plane, g->s.rhs_h2, 1.0);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) e = cudaEventRecord(u->done[slot], g->st);
        u->err = e;
    }
}

/* f from the caller's array onto the device (the solution level's right-hand side) through
 * pinned chunks: host threads copy a chunk while the device copies and places the last. */
static hr_status upload_values(mg_gpu *g)
{
    const int direct = g->s.mode == MG_GPU_DIRECT;
    const mgg_lev *S = direct ? &g->lev[0] : &g->out;
    GTRY(stage_ready(g, (size_t)S->nx * sizeof(double)));
    rhs_upload u;
    memset(&u, 0, sizeof u);
    u.g = g;
    u.S = S;
    u.es = direct ? g->s.esize : 8;
    u.f = g->s.rhs_values;
    u.nx = S->nx;
    u.lines = (long long)S->ny * (g->s.dim == 3 ? S->nz : 1);
    u.per = (long long)(g->stage_bytes / sizeof(double)) / S->nx;
    for (int k = 0; k < MGG_STAGE_SLOTS; k++) {
        u.pin[k] = (double *)g->stage_pin[k];
        u.dev[k] = (double *)g->stage_dev[k];
        u.done[k] = g->stage_done[k];
    }
    u.team = g->stage_team;
    GCU(g, cudaMemsetAsync(g->d_rhs, 0, g->d_rhs_bytes, g->st)); /* ring and padding */
    hri_team_run(u.team, upload_job, &u);
    if (u.err == cudaSuccess) u.err = cudaStreamSynchronize(g->st);
    if (u.err != cudaSuccess) return gfail(g, u.err, "the right-hand side's upload", __LINE__);
    return HR_OK;
}

static hr_status build(mg_gpu *g, const hr_grid *rhs)
{
    const mg_gpu_setup *s = &g->s;
    const int dim = s->dim;
    int nx = s->nx, ny = s->ny, nz = s->nz;
    const int direct = s->mode == MG_GPU_DIRECT;
    hr_grid_layout l;
    for (int lv = 0; lv < g->nlev; lv++) {
        mgg_lev *L = &g->lev[lv];
        if (!hr_layout_init(&l, dim, nx, ny, nz, s->esize)) return HR_ERR_NO_MEMORY;
        lev_from_layout(L, &l);
        GTRY(galloc(g, &L->u[0], &l));
        GTRY(galloc(g, &L->u[1], &l));
        if (lv == 0 && direct) {
            if (rhs || s->rhs_values || s->rhs_slot) {
                GTRY(galloc(g, &L->hf, &l));
                g->d_rhs = g->allocs[g->nalloc - 1];
                g->d_rhs_bytes = g->alloc_bytes[g->nalloc - 1];
            } else {
                L->si = s->spike.spike_i, L->sj = s->spike.spike_j, L->sk = s->spike.spike_k;
            }
        } else {
            GTRY(galloc(g, &L->hf, &l));
        }
        const int last = lv == g->nlev - 1;
        if (s->smoother->scratch || last) GTRY(galloc(g, &L->d, &l));
        if (last) {
            GTRY(galloc(g, &L->r, &l));
            GTRY(galloc(g, &L->cp, &l));
        }
        if ((long)L->nx * L->ny * L->nz > g->s.small_points && g->first_small == lv) g->first_small = lv + 1;
        nx = (nx - 1) / 2;
        ny = (ny - 1) / 2;
        nz = dim == 3 ? (nz - 1) / 2 : nz;
    }
    if (!direct) {
        mgg_lev *O = &g->out;
        if (!hr_layout_init(&l, dim, s->nx, s->ny, s->nz, 8)) return HR_ERR_NO_MEMORY;
        lev_from_layout(O, &l);
        GTRY(galloc(g, &O->u[0], &l));
        GTRY(galloc(g, &O->r, &l));
        if (s->mode == MG_GPU_CG) {
            GTRY(galloc(g, &O->u[1], &l));
            GTRY(galloc(g, &O->d, &l));
            GTRY(galloc(g, &O->cp, &l));
        }
        if (rhs || s->rhs_values || s->rhs_slot) {
            GTRY(galloc(g, &O->hf, &l));
            g->d_rhs = g->allocs[g->nalloc - 1];
            g->d_rhs_bytes = g->alloc_bytes[g->nalloc - 1];
        } else {
            O->si = s->spike.spike_i, O->sj = s->spike.spike_j, O->sk = s->spike.spike_k;
        }
    }
    const double t_up = hr_now();
    if (rhs) GCU(g, cudaMemcpy(g->d_rhs, rhs->base, hr_layout_bytes(&rhs->l), cudaMemcpyHostToDevice));
    if (rhs)
        GCU(g, cudaStreamSynchronize(
                   cudaStreamLegacy)); /* legacy-stream copy done before the non-blocking streams read it */
    if (!rhs && s->rhs_values) GTRY(upload_values(g));
    if (!rhs && !s->rhs_values && g->d_rhs) { /* a slot: f = 0 until a solve fills it */
        GCU(g, cudaMemsetAsync(g->d_rhs, 0, g->d_rhs_bytes, g->st));
        GCU(g, cudaStreamSynchronize(g->st));
    }
    g->times.upload = hr_now() - t_up;
    if (g->nlev > 0) {
        GCU(g, cudaMalloc((void **)&g->d_levs, (size_t)g->nlev * sizeof(mgg_lev)));
        GCU(g, cudaMemcpy(g->d_levs, g->lev, (size_t)g->nlev * sizeof(mgg_lev), cudaMemcpyHostToDevice));
        GCU(g, cudaStreamSynchronize(
                   cudaStreamLegacy)); /* legacy-stream work done before the non-blocking streams read it */
        const mgg_lev *C = &g->lev[g->nlev - 1];
        GCU(g, cudaMalloc((void **)&g->d_cgpart, ((size_t)C->slices + 2) * sizeof(double)));
    }
    if (s->cpu_level > 0) { /* --coarse-on cpu: the CPU's levels and the pinned staging */
        int cx = s->nx, cy = s->ny, cz = s->nz;
        for (int lv = 0; lv < s->cpu_level; lv++) {
            cx = (cx - 1) / 2;
            cy = (cy - 1) / 2;
            cz = dim == 3 ? (cz - 1) / 2 : cz;
        }
        mg_cpu_part_setup ps = {
            dim,    cx,      cy,       cz,           g->nlev - s->cpu_level, s->esize,    s->smoother,
            s->pre, s->post, s->omega, s->symmetric, s->cpu_threads,         s->hugepages};
        GTRY(hri_mg_cpu_part_create(&ps, &g->cpu));
        if (!hr_layout_init(&l, dim, cx, cy, cz, s->esize)) return HR_ERR_NO_MEMORY;
        g->cpu_bytes = hr_layout_bytes(&l);
        g->cpu_off = l.offset * l.esize;
        GCU(g, cudaMallocHost(&g->h_hf, g->cpu_bytes));
        GCU(g, cudaMallocHost(&g->h_u, g->cpu_bytes));
        for (int t = 0; t < 8; t++) {
            g->hdesc[t].g = g;
            g->hdesc[t].type = (hr_mg_cycle)(t / 2);
            g->hdesc[t].fresh = t & 1;
        }
    }
    GCU(g, cudaMalloc((void **)&g->d_part, 4 * MGG_NB * sizeof(double)));
    GCU(g, cudaMalloc((void **)&g->d_sc, sizeof(mgg_scalars)));
    GCU(g, cudaMallocHost((void **)&g->h_sc, sizeof(mgg_scalars)));
    return hri_mg_gpu_reset(g);
}

/* Runs the first iterations' programs once with plain launches (loading every kernel they
 * use), then records, instantiates and runs their graphs, then resets: a solve, even the
 * first, replays graphs only. Part of the setup (time_setup_s). */
static hr_status warm_up(mg_gpu *g)
{
    int progs[3], n = 0;
    if (g->s.mode == MG_GPU_CG) {
        progs[n++] = PROG_CG_START;
        progs[n++] = PROG_CG_ITER;
        progs[n++] = PROG_CG_ITER;
    } else {
        if (g->s.cycle == HR_MG_CYCLE_FMG) progs[n++] = PROG_FMG;
        progs[n++] = PROG_CYCLE;
        progs[n++] = PROG_CYCLE;
    }
    /* plain launches first (every kernel loaded before any capture: drivers before CUDA 12.3
     * cannot load a module inside a capture), then the same programs captured */
    for (int pass = 0; pass < 2; pass++) {
        g->s.no_graph = pass == 0;
        for (int i = 0; i < n; i++)
            GTRY(run_program(g, progs[i], g->s.mode == MG_GPU_DEFECT));
        GTRY(hri_mg_gpu_reset(g));
    }
    double rel;
    GTRY(hri_mg_gpu_check(g, 0, &rel, NULL, NULL));
    return hri_mg_gpu_reset(g);
}

extern "C" void hri_mg_gpu_setup_times(const mg_gpu *g, mg_gpu_times *t)
{
    *t = g->times;
}

extern "C" hr_status hri_mg_gpu_create(const mg_gpu_setup *s, mg_gpu **out, char *why, size_t why_size)
{
    *out = NULL;
    const double t0 = hr_now();
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        count = 0;
    }
    if (s->device >= count) {
        snprintf(why, why_size, "%s: gpu: no CUDA device %d (found %d)", count ? "device" : "backend",
                 s->device, count);
        return HR_ERR_NO_DEVICE;
    }
    if (s->nlev > MGG_MAX_LEV) {
        snprintf(why, why_size, "levels: at most %d on the GPU", MGG_MAX_LEV);
        return HR_ERR_INVALID_ARG;
    }
    mg_gpu *g = (mg_gpu *)calloc(1, sizeof *g);
    if (!g) return HR_ERR_NO_MEMORY;
    g->s = *s;
    g->s.rhs = NULL;
    if (g->s.small_points <= 0) g->s.small_points = s->dim == 3 ? 512 : 1024;
    if (g->s.march_points == 0) g->s.march_points = MGG_MARCH_POINTS;
    if (g->s.fuse_points == 0) g->s.fuse_points = g->s.esize == 8 ? MGG_FUSE_POINTS_FP64 : MGG_FUSE_POINTS_FP32;
    if (g->s.async_local <= 0) g->s.async_local = 2;
    if (g->s.cpu_level >= s->nlev) g->s.cpu_level = 0;
    g->nlev = s->nlev;
    /* the defect check leaves level 0's iterate to the program: a first red-black sweep
     * reads no iterate, any other first use gets an explicit zeroing (zero_needed) */
    g->check_skips_zero = s->mode == MG_GPU_DEFECT && s->nlev > 0;
    g->dev = s->device;
    hr_status st = HR_OK;
    cudaError_t e = cudaSetDevice(g->dev);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&g->st, cudaStreamNonBlocking);
    if (e != cudaSuccess) st = gfail(g, e, "cudaSetDevice/cudaStreamCreate", __LINE__);
    if (st == HR_OK) g->rbw_held = rbw_held(g);
    const double t1 = hr_now();
    if (st == HR_OK) st = build(g, s->rhs);
    g->s.rhs_values = NULL; /* the caller's, read by build only */
    const double t2 = hr_now();
    if (st == HR_OK && !g->s.no_graph) st = warm_up(g);
    g->times.device = t1 - t0;
    g->times.alloc = t2 - t1 - g->times.upload;
    g->times.graphs = hr_now() - t2;
    if (st != HR_OK) {
        snprintf(why, why_size, "backend: gpu: %s", g->err[0] ? g->err : "out of device memory");
        hri_mg_gpu_free(g);
        return st;
    }
    *out = g;
    return HR_OK;
}

extern "C" void hri_mg_gpu_free(mg_gpu *g)
{
    if (!g) return;
    cudaSetDevice(g->dev);
    if (g->st) cudaStreamSynchronize(g->st);
    for (int i = 0; i < MGG_GRAPHS; i++)
        if (g->graphs[i].used) {
            cudaGraphExecDestroy(g->graphs[i].exec);
            cudaFree(g->graphs[i].d_ops);
        }
    for (int i = 0; i < g->nalloc; i++)
        cudaFree(g->allocs[i]);
    cudaFree(g->d_levs);
    cudaFree(g->d_cgpart);
    cudaFree(g->d_part);
    cudaFree(g->d_sc);
    cudaFree(g->d_tmp_ops);
    if (g->h_sc) cudaFreeHost(g->h_sc);
    if (g->h_hf) cudaFreeHost(g->h_hf);
    if (g->h_u) cudaFreeHost(g->h_u);
    hri_mg_cpu_part_free(g->cpu);
    stage_free(g);
    if (g->st) cudaStreamDestroy(g->st);
    free(g->ops);
    free(g);
}

extern "C" hr_status hri_mg_gpu_reset(mg_gpu *g)
{
    GCU(g, cudaSetDevice(g->dev));
    for (int i = 0; i < g->nalloc; i++)
        if (g->allocs[i] != g->d_rhs) GCU(g, cudaMemsetAsync(g->allocs[i], 0, g->alloc_bytes[i], g->st));
    g->cur = 0;
    g->dscale = g->cg_s = 1.0;
    if (g->s.boundary != 0.0) {
        const int dim = g->s.dim;
        if (g->s.mode == MG_GPU_DIRECT) {
            for (int b = 0; b < 2; b++)
                if (g->s.esize == 8)
                    mgg_ring_kernel<double>
                        <<<256, 256, 0, g->st>>>(g->lev[0], (double *)g->lev[0].u[b], dim, g->s.boundary);
                else
                    mgg_ring_kernel<float><<<256, 256, 0, g->st>>>(g->lev[0], (float *)g->lev[0].u[b], dim,
                                                                   (float)g->s.boundary);
        } else {
            mgg_ring_kernel<double>
                <<<256, 256, 0, g->st>>>(g->out, (double *)g->out.u[0], dim, g->s.boundary);
        }
        GCU(g, cudaGetLastError());
    }
    GCU(g, cudaStreamSynchronize(g->st));
    return HR_OK;
}

/* ------------------------------------------------------------------ solving */

template <typename T, int D, typename TR>
static void launch_check(mg_gpu *g, const mgg_lev &L, const T *u, int want_r, double ds, double rs, double bs)
{
    const mgg_lev &R = g->nlev > 0 ? g->lev[0] : L;
    TR *rdst = want_r ? (TR *)R.hf : NULL,
       *zdst = want_r && !g->check_skips_zero ? (TR *)R.u[cur_of(g, 0)] : NULL;
    mgg_check_kernel<T, D, TR>
        <<<MGG_NB, MGG_BT, 0, g->st>>>(L, u, R, rdst, zdst, ds, 1.0 / rs, 1.0 / bs, g->d_part);
}

/* One pass of the check (want_r: also the defect times ds into level 0) and its four sums
 * read back into chk (see mgg_scalars). */
static hr_status check_pass(mg_gpu *g, int want_r, double ds, double rs, double bs, double chk[4])
{
    const int dim = g->s.dim;
    if (g->s.mode == MG_GPU_DIRECT) {
        const mgg_lev &L = g->lev[0];
        const void *u = L.u[cur_of(g, 0)];
        if (g->s.esize == 8)
            dim == 3 ? launch_check<double, 3, double>(g, L, (const double *)u, 0, ds, rs, bs)
                     : launch_check<double, 2, double>(g, L, (const double *)u, 0, ds, rs, bs);
        else
            dim == 3 ? launch_check<float, 3, float>(g, L, (const float *)u, 0, ds, rs, bs)
                     : launch_check<float, 2, float>(g, L, (const float *)u, 0, ds, rs, bs);
    } else {
        const double *u = (const double *)g->out.u[0];
        if (g->s.esize == 8 || g->nlev == 0)
            dim == 3 ? launch_check<double, 3, double>(g, g->out, u, want_r, ds, rs, bs)
                     : launch_check<double, 2, double>(g, g->out, u, want_r, ds, rs, bs);
        else
            dim == 3 ? launch_check<double, 3, float>(g, g->out, u, want_r, ds, rs, bs)
                     : launch_check<double, 2, float>(g, g->out, u, want_r, ds, rs, bs);
    }
    hri_mgg_fin_kernel<<<1, MGG_NB, 0, g->st>>>(g->d_part, g->d_sc, MGG_FIN_CHECK);
    GCU(g, cudaGetLastError());
    GCU(g, cudaMemcpyAsync(g->h_sc, g->d_sc, sizeof(mgg_scalars), cudaMemcpyDeviceToHost, g->st));
    GCU(g, cudaStreamSynchronize(g->st));
    memcpy(chk, g->h_sc->chk, 4 * sizeof(double));
    return HR_OK;
}

/* s * max lies in mg_range_scale's range (or there is nothing to scale): compared through
 * the exponents, since s * max itself may overflow. */
static int scaled_in_range(double max, double s)
{
    if (!(max > 0.0) || !isfinite(max)) return 1;
    const int e = ilogb(max) + ilogb(s);
    return e >= -64 && e < 64;
}

extern "C" hr_status hri_mg_gpu_check(mg_gpu *g, int want_r, double *rel, double *bnorm, double *rmax)
{
    GCU(g, cudaSetDevice(g->dev));
    const int w = want_r && g->s.mode == MG_GPU_DEFECT;
    double c[4];
    /* the plain pass; the defect goes to level 0 times the scale of the last check */
    GTRY(check_pass(g, w, g->dscale, 1.0, 1.0, c));
    const double r2 = c[0], b2 = c[1], mr = c[2], mb = c[3];
    hr_norm2 rn, bn;
    /* hri_cpu_residual_box's decision between the plain and the scaled pass */
    const int r_ok = isfinite(r2) && (mr == 0.0 || mr >= 1e-150),
              b_ok = isfinite(b2) && (mb == 0.0 || mb >= 1e-150);
    if (isnan(mr) || isnan(mb) || (r_ok && b_ok)) {
        rn.scale = bn.scale = 1.0;
        rn.ssq = isnan(mr) ? NAN : r2;
        bn.ssq = isnan(mb) ? NAN : b2;
    } else if (isinf(mr) || isinf(mb)) {
        rn.scale = bn.scale = 1.0;
        rn.ssq = isinf(mr) ? INFINITY : r2;
        bn.ssq = isinf(mb) ? INFINITY : b2;
    } else {
        const double rs = mr > 0.0 ? hr_norm2_scale(mr) : 1.0, bs = mb > 0.0 ? hr_norm2_scale(mb) : 1.0;
        double c2[4];
        GTRY(check_pass(g, 0, 1.0, rs, bs, c2));
        rn.scale = c2[2] > 0.0 ? rs : 0.0;
        rn.ssq = c2[0];
        bn.scale = c2[3] > 0.0 ? bs : 0.0;
        bn.ssq = c2[1];
    }
    /* a defect out of range for the fp32 cycle (the residual moved far from the last one):
     * written again with a scale from this one, which the next cycles' graphs divide by */
    if (w && !scaled_in_range(mr, g->dscale)) {
        g->dscale = mg_range_scale(mr);
        double c3[4];
        GTRY(check_pass(g, 1, g->dscale, 1.0, 1.0, c3));
    }
    *rel = hr_norm2_relative(rn, bn);
    if (bnorm) *bnorm = hr_norm2_value(bn);
    if (rmax) *rmax = mr;
    return HR_OK;
}

extern "C" hr_status hri_mg_gpu_advance(mg_gpu *g, long count, int fmg_first, int r_valid)
{
    GCU(g, cudaSetDevice(g->dev));
    for (long c = 0; c < count; c++) {
        hr_status st;
        if (g->s.mode == MG_GPU_CG)
            st = run_program(g, PROG_CG_ITER, 0);
        else
            st = run_program(g, c == 0 && fmg_first ? PROG_FMG : PROG_CYCLE,
                             g->s.mode == MG_GPU_DEFECT && c == 0 && r_valid);
        if (st != HR_OK) return st;
    }
    return HR_OK;
}

static hr_status read_rr(mg_gpu *g, double *rr)
{
    GCU(g, cudaMemcpyAsync(g->h_sc, g->d_sc, sizeof(mgg_scalars), cudaMemcpyDeviceToHost, g->st));
    GCU(g, cudaStreamSynchronize(g->st));
    *rr = g->h_sc->rr;
    return HR_OK;
}

extern "C" hr_status hri_mg_gpu_cg_start(mg_gpu *g, double s, double *rr)
{
    GCU(g, cudaSetDevice(g->dev));
    g->cg_s = s; /* recorded into the CG programs (their graphs are keyed by it) */
    GTRY(run_program(g, PROG_CG_START, 0));
    return read_rr(g, rr);
}

extern "C" hr_status hri_mg_gpu_cg_rr(mg_gpu *g, double *rr)
{
    GCU(g, cudaSetDevice(g->dev));
    return read_rr(g, rr);
}

/* The solution level (its grid in the right-hand side's layout) and its element size. */
static const mgg_lev &rhs_level(const mg_gpu *g, size_t *es)
{
    const int direct = g->s.mode == MG_GPU_DIRECT;
    *es = direct ? g->s.esize : 8;
    return direct ? g->lev[0] : g->out;
}

extern "C" hr_status hri_mg_gpu_rhs_host(mg_gpu *g, const double *f)
{
    if (!g->d_rhs) return HR_ERR_UNSUPPORTED;
    GCU(g, cudaSetDevice(g->dev));
    g->s.rhs_values = f;
    const hr_status st = upload_values(g);
    g->s.rhs_values = NULL;
    return st;
}

extern "C" hr_status hri_mg_gpu_rhs_device(mg_gpu *g, const void *f, int single, double scale)
{
    if (!g->d_rhs) return HR_ERR_UNSUPPORTED;
    GCU(g, cudaSetDevice(g->dev));
    size_t es;
    const mgg_lev &S = rhs_level(g, &es);
    const long long lines = (long long)S.ny * (g->s.dim == 3 ? S.nz : 1);
    const unsigned blocks = mgg_blocks_for((size_t)lines * (size_t)S.nx);
    const double h2 = g->s.rhs_h2;
    if (es == 8 && single)
        mgg_rhs_lines<double, float><<<blocks, 256, 0, g->st>>>((double *)S.hf, (const float *)f, 0, lines, S.nx,
                                                                S.ny, g->s.dim, S.pitch, S.plane, h2, scale);
    else if (es == 8)
        mgg_rhs_lines<double, double><<<blocks, 256, 0, g->st>>>((double *)S.hf, (const double *)f, 0, lines, S.nx,
                                                                 S.ny, g->s.dim, S.pitch, S.plane, h2, scale);
    else if (single)
        mgg_rhs_lines<float, float><<<blocks, 256, 0, g->st>>>((float *)S.hf, (const float *)f, 0, lines, S.nx,
                                                               S.ny, g->s.dim, S.pitch, S.plane, h2, scale);
    else
        mgg_rhs_lines<float, double><<<blocks, 256, 0, g->st>>>((float *)S.hf, (const double *)f, 0, lines, S.nx,
                                                                S.ny, g->s.dim, S.pitch, S.plane, h2, scale);
    GCU(g, cudaGetLastError());
    GCU(g, cudaStreamSynchronize(g->st));
    return HR_OK;
}

/* Lines [l0, l0 + nl) of the solution into dst (device memory; single: fp32), on the stream. */
static cudaError_t pack_solution(mg_gpu *g, void *dst, int single, long long l0, long long nl)
{
    size_t es;
    const mgg_lev &S = rhs_level(g, &es);
    const void *u = S.u[g->s.mode == MG_GPU_DIRECT ? cur_of(g, 0) : 0];
    const unsigned blocks = mgg_blocks_for((size_t)nl * (size_t)S.nx);
    const int dim = g->s.dim;
    if (es == 8 && single)
        mgg_pack_lines<float, double>
            <<<blocks, 256, 0, g->st>>>((float *)dst, (const double *)u, l0, nl, S.nx, S.ny, dim, S.pitch, S.plane);
    else if (es == 8)
        mgg_pack_lines<double, double>
            <<<blocks, 256, 0, g->st>>>((double *)dst, (const double *)u, l0, nl, S.nx, S.ny, dim, S.pitch, S.plane);
    else if (single)
        mgg_pack_lines<float, float>
            <<<blocks, 256, 0, g->st>>>((float *)dst, (const float *)u, l0, nl, S.nx, S.ny, dim, S.pitch, S.plane);
    else
        mgg_pack_lines<double, float>
            <<<blocks, 256, 0, g->st>>>((double *)dst, (const float *)u, l0, nl, S.nx, S.ny, dim, S.pitch, S.plane);
    return cudaGetLastError();
}

extern "C" hr_status hri_mg_gpu_solution_device(mg_gpu *g, void *dst, int single)
{
    GCU(g, cudaSetDevice(g->dev));
    size_t es;
    const mgg_lev &S = rhs_level(g, &es);
    GCU(g, pack_solution(g, dst, single, 0, (long long)S.ny * (g->s.dim == 3 ? S.nz : 1)));
    GCU(g, cudaStreamSynchronize(g->st));
    return HR_OK;
}

/* The solution's way home: the device packs a chunk of lines into a device slot and copies it
 * into a pinned one while the host threads copy the previous chunk out of theirs. */
typedef struct sol_download {
    mg_gpu *g;
    char *dst;
    size_t vs;            /* bytes per value */
    long long lines, per; /* lines in all, lines per chunk */
    int nx, single;
    char *pin[MGG_STAGE_SLOTS], *dev[MGG_STAGE_SLOTS];
    cudaEvent_t done[MGG_STAGE_SLOTS];
    hr_team *team;
    cudaError_t err;
} sol_download;

static void download_job(void *ctx, int tid, int nt)
{
    sol_download *d = (sol_download *)ctx;
    mg_gpu *g = d->g;
    if (tid == 0) (void)cudaSetDevice(g->dev);
    const long long chunks = (d->lines + d->per - 1) / d->per;
    /* chunk c goes out while the device packs and copies chunks up to c + SLOTS - 1 */
    for (long long c = 0; c < chunks + MGG_STAGE_SLOTS - 1; c++) {
        if (tid == 0 && c < chunks && d->err == cudaSuccess) { /* queue chunk c */
            const int slot = (int)(c % MGG_STAGE_SLOTS);
            const long long l0 = c * d->per, nl = d->lines - l0 < d->per ? d->lines - l0 : d->per;
            cudaError_t e = pack_solution(g, d->dev[slot], d->single, l0, nl);
            if (e == cudaSuccess)
                e = cudaMemcpyAsync(d->pin[slot], d->dev[slot], (size_t)nl * (size_t)d->nx * d->vs,
                                    cudaMemcpyDeviceToHost, g->st);
            if (e == cudaSuccess) e = cudaEventRecord(d->done[slot], g->st);
            d->err = e;
        }
        const long long o = c - (MGG_STAGE_SLOTS - 1); /* the chunk to take out now */
        if (o < 0) continue;
        const int slot = (int)(o % MGG_STAGE_SLOTS);
        if (tid == 0 && d->err == cudaSuccess) d->err = cudaEventSynchronize(d->done[slot]);
        hri_team_barrier(d->team);
        if (d->err == cudaSuccess) {
            const long long l0 = o * d->per, nl = d->lines - l0 < d->per ? d->lines - l0 : d->per;
            const size_t n = (size_t)nl * (size_t)d->nx * d->vs;
            const size_t a = n * (size_t)tid / (size_t)nt / d->vs * d->vs,
                         b = tid == nt - 1 ? n : n * (size_t)(tid + 1) / (size_t)nt / d->vs * d->vs;
            memcpy(d->dst + (size_t)l0 * (size_t)d->nx * d->vs + a, d->pin[slot] + a, b - a);
        }
        hri_team_barrier(d->team); /* the slot is free again */
    }
}

extern "C" hr_status hri_mg_gpu_solution_host(mg_gpu *g, void *dst, int single)
{
    GCU(g, cudaSetDevice(g->dev));
    size_t es;
    const mgg_lev &S = rhs_level(g, &es);
    sol_download d;
    memset(&d, 0, sizeof d);
    d.g = g;
    d.dst = (char *)dst;
    d.vs = single ? 4 : 8;
    d.single = single;
    d.nx = S.nx;
    d.lines = (long long)S.ny * (g->s.dim == 3 ? S.nz : 1);
    GTRY(stage_ready(g, (size_t)S.nx * d.vs));
    d.per = (long long)(g->stage_bytes / d.vs) / S.nx;
    for (int k = 0; k < MGG_STAGE_SLOTS; k++) {
        d.pin[k] = g->stage_pin[k];
        d.dev[k] = g->stage_dev[k];
        d.done[k] = g->stage_done[k];
    }
    d.team = g->stage_team;
    hri_team_run(d.team, download_job, &d);
    if (d.err != cudaSuccess) return gfail(g, d.err, "the solution's download", __LINE__);
    return HR_OK;
}

extern "C" hr_status hri_mg_gpu_download(mg_gpu *g, hr_grid *host)
{
    GCU(g, cudaSetDevice(g->dev));
    const int direct = g->s.mode == MG_GPU_DIRECT;
    const mgg_lev &L = direct ? g->lev[0] : g->out;
    const size_t es = direct ? g->s.esize : 8;
    hr_grid_layout l;
    if (!hr_layout_init(&l, g->s.dim, g->s.nx, g->s.ny, g->s.nz, es)) return HR_ERR_NO_MEMORY;
    if (!host->base) GTRY(hri_grid_alloc_huge(host, &l, g->s.hugepages));
    const char *origin = (const char *)L.u[direct ? cur_of(g, 0) : 0];
    GCU(g, cudaMemcpyAsync(host->base, origin - l.offset * es, hr_layout_bytes(&l), cudaMemcpyDeviceToHost,
                           g->st));
    GCU(g, cudaStreamSynchronize(g->st));
    return HR_OK;
}

extern "C" const char *hri_mg_gpu_error(const mg_gpu *g)
{
    return g && g->err[0] ? g->err : "device error";
}
