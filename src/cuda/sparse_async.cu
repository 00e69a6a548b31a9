/*
 * GPU block-asynchronous iteration async-(K) (seed 002 Algorithm 1, sections 3.3-3.4)
 * on one or several GPUs.
 *
 * Global iteration k is one launch of the async kernel on stream k mod S (S streams,
 * HETRELAX_SPARSE_STREAMS). Inside a launch no block waits for another: each reads x
 * while others write it. With S > 1, launches on different streams have no dependency,
 * so up to S consecutive global iterations run at the same time (the same stream
 * orders k after k - S, which bounds the delay). That is the paper's overlap, made for
 * a Fermi GPU that one launch filled. On an H100 one launch of these systems fills
 * only part of the GPU, so the next launch starts at once, reads the same x and
 * repeats the same work: S = 2 needed twice the iterations in the same time, S = 4
 * more than 1.34 times them again (docs/gpu-sparse.md). The default is therefore 1.
 * Runs of HETRELAX_SPARSE_GRAPH (default 32) iterations are replayed from a CUDA graph
 * with the same fork/join shape; each iterate() call ends with a join, because the
 * driver then checks the residual on the host.
 *
 * With several GPUs the rows are split into contiguous ranges of whole blocks, one per
 * GPU, and each GPU iterates its range asynchronously with the others. The exchange
 * of x follows section 3.4:
 *   AMC  host memory (pinned) is the hub: per iteration a GPU uploads the rows it does
 *        not own, runs its kernel and downloads its own rows, all on its streams;
 *   DC   the master GPU (the first) holds x; per iteration the other GPUs copy the rows
 *        they do not own from it peer to peer and copy their own rows back;
 *   DK   kernels on every GPU read and write the master's x directly (peer access).
 * With one GPU, DC and DK are the plain method; AMC still downloads x every iteration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/sparse_gpu.cuh"

#define HR_SP_MAX_GPUS    16
#define HR_SP_MAX_STREAMS 32

typedef struct gpu_part {
    int dev, row0, row1;
    hr_sp_blocks L;
    double *d_diag, *d_b, *d_x; /* full length n (d_x: NULL for DK off the master) */
    unsigned char *d_frozen;
    double *xr; /* the x the kernel reads and writes (DK: the master's) */
    cudaStream_t st[HR_SP_MAX_STREAMS];
    cudaEvent_t fork, join[HR_SP_MAX_STREAMS];
    cudaGraphExec_t graph[2]; /* [fault active] */
} gpu_part;

typedef struct async_state {
    int ngpu, S, G, K;
    hr_sparse_comm comm;
    double *h_x; /* AMC hub */
    gpu_part p[HR_SP_MAX_GPUS];
} async_state;

/* Copies x[a, b) between two full-length vectors (device, peer or pinned host). */
static cudaError_t copy_range(double *dst, const double *src, int a, int b, cudaStream_t st)
{
    if (b <= a) return cudaSuccess;
    return cudaMemcpyAsync(dst + a, src + a, (size_t)(b - a) * sizeof(double), cudaMemcpyDefault, st);
}

/* One global iteration of part g on stream st. */
static hr_status enqueue(hr_sparse_run *r, async_state *s, int g, cudaStream_t st, int fault)
{
    gpu_part *q = &s->p[g];
    const int n = r->A->n_rows;
    const unsigned char *fz = fault ? q->d_frozen : NULL;
    if (s->comm == HR_SPARSE_COMM_AMC) {
        HR_SPCU(r, copy_range(q->d_x, s->h_x, 0, q->row0, st));
        HR_SPCU(r, copy_range(q->d_x, s->h_x, q->row1, n, st));
    } else if (s->comm == HR_SPARSE_COMM_DC && g > 0) {
        HR_SPCU(r, copy_range(q->d_x, s->p[0].d_x, 0, q->row0, st));
        HR_SPCU(r, copy_range(q->d_x, s->p[0].d_x, q->row1, n, st));
    }
    HR_SPCU(r, hr_sp_async_launch(&q->L, q->d_diag, q->d_b, q->xr, q->xr, s->K, fz, st));
    if (s->comm == HR_SPARSE_COMM_AMC)
        HR_SPCU(r, copy_range(s->h_x, q->d_x, q->row0, q->row1, st));
    else if (s->comm == HR_SPARSE_COMM_DC && g > 0)
        HR_SPCU(r, copy_range(s->p[0].d_x, q->d_x, q->row0, q->row1, st));
    return HR_OK;
}

/* count iterations of part g spread over its streams, between a fork and a join on
 * stream 0 (works live and under capture). */
static hr_status enqueue_run(hr_sparse_run *r, async_state *s, int g, long count, int fault)
{
    gpu_part *q = &s->p[g];
    const int S = s->S;
    HR_SPCU(r, cudaEventRecord(q->fork, q->st[0]));
    for (int k = 1; k < S; k++)
        HR_SPCU(r, cudaStreamWaitEvent(q->st[k], q->fork, 0));
    for (long k = 0; k < count; k++)
        HR_TRY(enqueue(r, s, g, q->st[k % S], fault));
    for (int k = 1; k < S; k++) {
        HR_SPCU(r, cudaEventRecord(q->join[k], q->st[k]));
        HR_SPCU(r, cudaStreamWaitEvent(q->st[0], q->join[k], 0));
    }
    return HR_OK;
}

/* Captures s->G iterations of part g. Returns 1 when capture is refused (a copy kind
 * the driver cannot capture, say): the caller then issues every iteration live. */
static int build_graph(hr_sparse_run *r, async_state *s, int g, int fault)
{
    gpu_part *q = &s->p[g];
    cudaGraph_t graph = NULL;
    if (cudaStreamBeginCapture(q->st[0], cudaStreamCaptureModeThreadLocal) != cudaSuccess) goto refused;
    {
        hr_status st = enqueue_run(r, s, g, s->G, fault);
        cudaError_t ce = cudaStreamEndCapture(q->st[0], &graph);
        if (st != HR_OK || ce != cudaSuccess ||
            cudaGraphInstantiate(&q->graph[fault], graph, 0) != cudaSuccess ||
            cudaGraphUpload(q->graph[fault], q->st[0]) != cudaSuccess)
            goto refused;
    }
    cudaGraphDestroy(graph);
    return 0;
refused:
    if (graph) cudaGraphDestroy(graph);
    if (q->graph[fault]) cudaGraphExecDestroy(q->graph[fault]);
    q->graph[fault] = NULL;
    (void)cudaGetLastError();
    r->err[0] = '\0';
    return 1;
}

static hr_status upload(hr_sparse_run *r, double **d, const void *h, size_t bytes)
{
    HR_SPCU(r, cudaMalloc((void **)d, bytes));
    if (h) HR_SPCU(r, cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice));
    return HR_OK;
}

static hr_status part_setup(hr_sparse_run *r, async_state *s, int g, int B, const double *diag)
{
    gpu_part *q = &s->p[g];
    const int n = r->A->n_rows;
    const size_t bytes = (size_t)n * sizeof(double);
    HR_SPCU(r, cudaSetDevice(q->dev));
    for (int k = 0; k < s->S; k++) {
        HR_SPCU(r, cudaStreamCreateWithFlags(&q->st[k], cudaStreamNonBlocking));
        HR_SPCU(r, cudaEventCreateWithFlags(&q->join[k], cudaEventDisableTiming));
    }
    HR_SPCU(r, cudaEventCreateWithFlags(&q->fork, cudaEventDisableTiming));
    HR_TRY(hr_sp_blocks_build(r, r->A, q->row0, q->row1 - q->row0, B, 1, &q->L));
    HR_TRY(upload(r, &q->d_diag, diag, bytes));
    HR_TRY(upload(r, &q->d_b, r->b, bytes));
    if (s->comm != HR_SPARSE_COMM_DK || g == 0) HR_TRY(upload(r, &q->d_x, r->x, bytes));
    if (r->frozen) {
        HR_SPCU(r, cudaMalloc((void **)&q->d_frozen, (size_t)n));
        HR_SPCU(r, cudaMemcpy(q->d_frozen, r->frozen, (size_t)n, cudaMemcpyHostToDevice));
    }
    if (g > 0 && (s->comm == HR_SPARSE_COMM_DK || s->comm == HR_SPARSE_COMM_DC)) {
        int can = 0;
        HR_SPCU(r, cudaDeviceCanAccessPeer(&can, q->dev, s->p[0].dev));
        if (!can && s->comm == HR_SPARSE_COMM_DK) {
            snprintf(r->err, sizeof r->err, "comm dk: GPU %d cannot access GPU %d's memory (no peer access)",
                     q->dev, s->p[0].dev);
            return HR_ERR_UNSUPPORTED;
        }
        if (can) {
            cudaError_t e = cudaDeviceEnablePeerAccess(s->p[0].dev, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();
            else
                HR_SPCU(r, e);
        }
    }
    HR_SPCU(r, hr_sp_async_prepare(B));
    return HR_OK;
}

static hr_status async_setup(hr_sparse_run *r)
{
    async_state *s = (async_state *)calloc(1, sizeof *s);
    if (!s) return HR_ERR_NO_MEMORY;
    r->impl = s;
    const hr_csr *A = r->A;
    const int n = A->n_rows;
    const int B = r->o.block < n ? r->o.block : (n > 0 ? n : 1);
    if (B > HR_SP_MAX_BLOCK) {
        snprintf(r->err, sizeof r->err, "block: at most %d rows per block on the GPU (shared memory)",
                 HR_SP_MAX_BLOCK);
        return HR_ERR_INVALID_ARG;
    }
    s->ngpu = r->o.gpus > 1 ? r->o.gpus : 1;
    s->comm = r->o.comm != HR_SPARSE_COMM_AUTO ? r->o.comm
              : s->ngpu > 1                    ? HR_SPARSE_COMM_AMC
                                               : HR_SPARSE_COMM_AUTO;
    s->S = hr_sp_env_int("HETRELAX_SPARSE_STREAMS", 1, 1, HR_SP_MAX_STREAMS);
    s->G = hr_sp_env_int("HETRELAX_SPARSE_GRAPH", 32, 0, 4096);
    s->K = r->o.local_iters;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0, (void)cudaGetLastError();
    if (s->ngpu > HR_SP_MAX_GPUS || r->o.device < 0 || r->o.device + s->ngpu > count) {
        snprintf(r->err, sizeof r->err, "gpus: %d GPU%s from device %d asked, %d present", s->ngpu,
                 s->ngpu > 1 ? "s" : "", r->o.device, count);
        return count == 0 ? HR_ERR_NO_DEVICE : HR_ERR_INVALID_ARG;
    }
    /* contiguous ranges of whole blocks, as even as the blocks allow */
    const int nb = (n + B - 1) / B;
    for (int g = 0; g < s->ngpu; g++) {
        s->p[g].dev = r->o.device + g;
        s->p[g].row0 = (int)((long long)nb * g / s->ngpu) * B;
        s->p[g].row1 = g + 1 == s->ngpu ? n : (int)((long long)nb * (g + 1) / s->ngpu) * B;
        if (s->p[g].row0 > n) s->p[g].row0 = n;
        if (s->p[g].row1 > n) s->p[g].row1 = n;
    }
    double *diag = (double *)malloc((size_t)n * sizeof *diag);
    if (!diag) return HR_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++)
        diag[i] = A->val[A->diag[i]];
    hr_status st = HR_OK;
    for (int g = 0; g < s->ngpu && st == HR_OK; g++)
        st = part_setup(r, s, g, B, diag);
    free(diag);
    HR_TRY(st);
    for (int g = 0; g < s->ngpu; g++)
        s->p[g].xr = s->comm == HR_SPARSE_COMM_DK ? s->p[0].d_x : s->p[g].d_x;
    if (s->comm == HR_SPARSE_COMM_AMC) {
        HR_SPCU(r, cudaHostAlloc((void **)&s->h_x, (size_t)n * sizeof(double), cudaHostAllocPortable));
        memcpy(s->h_x, r->x, (size_t)n * sizeof(double));
    }
    int refused = 0;
    for (int g = 0; g < s->ngpu && s->G > 0 && !refused; g++) {
        HR_SPCU(r, cudaSetDevice(s->p[g].dev));
        for (int f = 0; f < (r->frozen ? 2 : 1) && !refused; f++)
            refused = build_graph(r, s, g, f);
    }
    if (refused) /* every GPU live, so that all run alike */
        for (int g = 0; g < s->ngpu; g++) {
            HR_SPCU(r, cudaSetDevice(s->p[g].dev));
            for (int f = 0; f < 2; f++)
                if (s->p[g].graph[f]) cudaGraphExecDestroy(s->p[g].graph[f]), s->p[g].graph[f] = NULL;
            s->G = 0;
        }
    for (int g = 0; g < s->ngpu; g++) {
        HR_SPCU(r, cudaSetDevice(s->p[g].dev));
        HR_SPCU(r, cudaDeviceSynchronize());
    }
    return HR_OK;
}

static hr_status async_iterate(hr_sparse_run *r, long count)
{
    async_state *s = (async_state *)r->impl;
    const int f = r->fault_active && r->frozen ? 1 : 0;
    long graphs = s->G > 0 ? count / s->G : 0, rest = count - graphs * (long)s->G;
    for (long j = 0; j < graphs; j++) /* interleaved so that all GPUs start at once */
        for (int g = 0; g < s->ngpu; g++) {
            HR_SPCU(r, cudaSetDevice(s->p[g].dev));
            HR_SPCU(r, cudaGraphLaunch(s->p[g].graph[f], s->p[g].st[0]));
        }
    if (rest > 0)
        for (int g = 0; g < s->ngpu; g++) {
            HR_SPCU(r, cudaSetDevice(s->p[g].dev));
            HR_TRY(enqueue_run(r, s, g, rest, f));
        }
    for (int g = 0; g < s->ngpu; g++) {
        HR_SPCU(r, cudaSetDevice(s->p[g].dev));
        HR_SPCU(r, cudaStreamSynchronize(s->p[g].st[0]));
    }
    return HR_OK;
}

static hr_status async_sync_host(hr_sparse_run *r)
{
    async_state *s = (async_state *)r->impl;
    const size_t bytes = (size_t)r->A->n_rows * sizeof(double);
    if (s->comm == HR_SPARSE_COMM_AMC) { /* every GPU's rows came back in its last iteration */
        memcpy(r->x, s->h_x, bytes);
        return HR_OK;
    }
    HR_SPCU(r, cudaSetDevice(s->p[0].dev));
    HR_SPCU(r, cudaMemcpy(r->x, s->p[0].d_x, bytes, cudaMemcpyDeviceToHost));
    return HR_OK;
}

static void async_teardown(hr_sparse_run *r)
{
    async_state *s = (async_state *)r->impl;
    if (!s) return;
    for (int g = 0; g < s->ngpu; g++) {
        gpu_part *q = &s->p[g];
        if (cudaSetDevice(q->dev) != cudaSuccess) continue;
        cudaDeviceSynchronize();
        for (int f = 0; f < 2; f++)
            if (q->graph[f]) cudaGraphExecDestroy(q->graph[f]);
        for (int k = 0; k < s->S; k++) {
            if (q->st[k]) cudaStreamDestroy(q->st[k]);
            if (q->join[k]) cudaEventDestroy(q->join[k]);
        }
        if (q->fork) cudaEventDestroy(q->fork);
        hr_sp_blocks_free(&q->L);
        cudaFree(q->d_diag), cudaFree(q->d_b), cudaFree(q->d_x), cudaFree(q->d_frozen);
    }
    if (s->h_x) cudaFreeHost(s->h_x);
    (void)cudaGetLastError();
    free(s);
    r->impl = NULL;
}

extern "C" const hr_sparse_method hr_sparse_gpu_async = {
    "async",
    HR_BACKEND_GPU,
    "block-asynchronous async-(K) on the GPU: a thread block per block, streams overlap iterations",
    0,
    1,
    0,
    1,
    async_setup,
    async_iterate,
    async_sync_host,
    async_teardown};
