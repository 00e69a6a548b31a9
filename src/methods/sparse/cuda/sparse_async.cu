/*
 * GPU block-asynchronous iteration async-(K) (Anzt et al. Algorithm 1, sections 3.3-3.4)
 * on one or several GPUs.
 *
 * Global iteration k is one launch of the async kernel on stream k mod S (S streams,
 * tuning.sparse_streams). Inside a launch no block waits for another: each reads x
 * while others write it. With S > 1, launches on different streams have no dependency,
 * so up to S consecutive global iterations run at the same time (the same stream
 * orders k after k - S, which bounds the delay). That is the paper's overlap, made for
 * a Fermi GPU that one launch filled. On an H100 one launch of these systems fills
 * only part of the GPU, so the next launch starts at once, reads the same x and
 * repeats the same work: S = 2 needed twice the iterations in the same time, S = 4
 * more than 1.34 times them again (docs/gpu-sparse.md). The default is therefore 1.
 *
 * Graphs. Runs of G iterations are replayed from a CUDA graph with the same shape as
 * the live issue (fork, kernels, copies, join); each iterate() call ends with a join,
 * because the driver then checks the residual on the host. G is tuning.sparse_graph
 * (default 32, 0: no graphs), lowered to the check interval when the driver checks a
 * tolerance more often than every G iterations, so that each iterate(check_every) call
 * is one graph launch per GPU. A remainder (count mod G iterations) that comes again
 * in the next call with the same fault state (the driver's last call, monitors that
 * cut the calls) is captured on that second sighting into one cached graph per fault
 * state (the most recent remainder count) and replayed from then on; a remainder seen
 * once is issued live, so that one-off runs pay no instantiation. If the driver
 * refuses to capture (a copy kind it cannot capture, say), every GPU issues every
 * iteration live, so that all run alike.
 *
 * With several GPUs the rows are split into contiguous ranges of whole blocks, one per
 * GPU, and each GPU iterates its range asynchronously with the others. The exchange
 * of x follows section 3.4:
 *   AMC  host memory (pinned, h_x) is the hub, in one of two variants:
 *        overlapped (default): the exchange runs on a copy stream cs of its own, apart
 *          from the kernels ("put in streams, handled independently and without
 *          synchronization"). In one iterate(count) call of a GPU: cs forks from st[0]
 *          and uploads the rows the GPU does not own (h_x -> d_x); after every E-th
 *          kernel (E = tuning.sparse_amc_every, default 1, 1..1024) an event on the
 *          kernel's stream starts an exchange round on cs: download the own rows
 *          (d_x -> h_x), then upload the others' rows (h_x -> d_x, two ranges). A
 *          round waits for its kernel to finish, so it copies a finished iterate; the
 *          kernels never wait for a round. The round after the call's last kernel is
 *          replaced by the call's end: cs joins st[0], and st[0] downloads the own rows
 *          once more, ordered after the last kernel and after every round (so
 *          async_sync_host's copy of h_x holds every GPU's last iterate and the next
 *          call starts from a consistent hub; its first upload then brings the other
 *          GPUs' last rows). Per call: one upload at the start, floor((count-1)/E)
 *          rounds, one final download. Rounds copy while later kernels of the same GPU
 *          run: the copy engine reads d_x rows that a kernel may be writing and writes
 *          d_x rows that a kernel may be reading, and a GPU's upload reads h_x rows
 *          that another GPU's download may be writing. This is the method's intended asynchrony: every
 *          value is a whole, 8-byte aligned double, and a row read is the value of some
 *          recent iterate, as inside one launch. If the copies are slower than the
 *          kernels, rounds queue up on cs and the call's end waits for them; E > 1
 *          thins the rounds out.
 *        serial (tuning.sparse_amc_serial on, for comparison): per iteration a GPU
 *          uploads the rows it does not own, runs its kernel and downloads its own
 *          rows, all on the kernel's stream (two PCIe transfers in series with every
 *          kernel).
 *   DC   the master GPU (the first) holds x; per iteration the other GPUs copy the rows
 *        they do not own from it peer to peer and copy their own rows back;
 *   DK   kernels on every GPU read and write the master's x directly (peer access).
 * With one GPU, DC and DK are the plain method; AMC still downloads x (all rows, nothing
 * to upload): every E kernels on cs (overlapped) or every iteration (serial).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/sparse/cuda/sparse_gpu.cuh"

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
    /* overlapped AMC: the copy stream, the end of a round's kernel, cs's join */
    cudaStream_t cs;
    cudaEvent_t kdone, cjoin;
    cudaGraphExec_t graph[2]; /* [fault active]: G iterations */
    cudaGraphExec_t rest[2];  /* [fault active]: the cached remainder graph */
} gpu_part;

typedef struct async_state {
    int ngpu, S, G, K;
    int E;       /* overlapped AMC: kernels per exchange round */
    int overlap; /* AMC with the exchange on cs (not tuning.sparse_amc_serial on) */
    hr_sparse_comm comm;
    double *h_x;       /* AMC hub */
    long rest_n[2];    /* iterations of the cached remainder graphs (0: none) */
    long rest_seen[2]; /* remainder of the previous call with a remainder, per fault state */
    int rest_refused;  /* a remainder capture was refused: remainders stay live */
    gpu_part p[HR_SP_MAX_GPUS];
    /* residual checks on the first GPU, from its x (one GPU; DC and DK: the master's
     * x is whole) or from the hub's x uploaded (AMC on several GPUs) */
    hr_sp_resid R;
    /* device-side checks after every iteration (one GPU, one stream, no AMC): the
     * device loop; iteration k also writes its iterate to snapshot k % snap_v. Per
     * iteration (snap_v 2): its check reads it on cs while iteration k + 1 runs (k + 2
     * waits for the check). Batched (batch, snap_v = U): one kernel after the body's U
     * iterations checks the U snapshots (the one a stop returns is not overwritten) */
    int dc, batch;
    hr_sp_loop loop[2]; /* [fault active] */
    double *snaps;      /* snap_v vectors of n */
    int snap_v;
    cudaStream_t cs[2]; /* two chains of checks (even and odd iterations) */
    cudaEvent_t ev_iter, ev_check[2];
    int body_fault; /* the fault state of the body being captured */
    int lean_last;  /* the last call ran the lean body: x is the result, even after a stop */
} async_state;

/* Copies x[a, b) between two full-length vectors (device, peer or pinned host). */
static cudaError_t copy_range(double *dst, const double *src, int a, int b, cudaStream_t st)
{
    if (b <= a) return cudaSuccess;
    return cudaMemcpyAsync(dst + a, src + a, (size_t)(b - a) * sizeof(double), cudaMemcpyDefault, st);
}

/* AMC: the rows part g does not own, hub -> GPU (nothing with one GPU). */
static hr_status amc_upload(hr_sparse_run *r, async_state *s, int g, cudaStream_t st)
{
    gpu_part *q = &s->p[g];
    HR_SPCU(r, copy_range(q->d_x, s->h_x, 0, q->row0, st));
    HR_SPCU(r, copy_range(q->d_x, s->h_x, q->row1, r->A->n_rows, st));
    return HR_OK;
}

/* AMC: the rows part g owns, GPU -> hub. */
static hr_status amc_download(hr_sparse_run *r, async_state *s, int g, cudaStream_t st)
{
    gpu_part *q = &s->p[g];
    HR_SPCU(r, copy_range(s->h_x, q->d_x, q->row0, q->row1, st));
    return HR_OK;
}

/* One global iteration of part g on stream st (overlapped AMC: the kernel only). */
static hr_status enqueue(hr_sparse_run *r, async_state *s, int g, cudaStream_t st, int fault)
{
    gpu_part *q = &s->p[g];
    const int n = r->A->n_rows;
    const unsigned char *fz = fault ? q->d_frozen : NULL;
    const int amc_serial = s->comm == HR_SPARSE_COMM_AMC && !s->overlap;
    if (amc_serial) {
        HR_TRY(amc_upload(r, s, g, st));
    } else if (s->comm == HR_SPARSE_COMM_DC && g > 0) {
        HR_SPCU(r, copy_range(q->d_x, s->p[0].d_x, 0, q->row0, st));
        HR_SPCU(r, copy_range(q->d_x, s->p[0].d_x, q->row1, n, st));
    }
    HR_SPCU(r, hri_sp_async_launch(&q->L, q->d_diag, q->d_b, q->xr, q->xr, s->K, fz, NULL, 0, NULL, 0, 0, st));
    if (amc_serial)
        HR_TRY(amc_download(r, s, g, st));
    else if (s->comm == HR_SPARSE_COMM_DC && g > 0)
        HR_SPCU(r, copy_range(s->p[0].d_x, q->d_x, q->row0, q->row1, st));
    return HR_OK;
}

/* count iterations of part g spread over its streams, between a fork and a join on
 * stream 0 (works live and under capture). Overlapped AMC adds the copy stream's
 * branch (header comment). One event kdone serves every round: a wait binds to the
 * event's most recent record at the time of the wait call (live and under capture),
 * and each round's wait is issued right after its record. */
static hr_status enqueue_run(hr_sparse_run *r, async_state *s, int g, long count, int fault)
{
    gpu_part *q = &s->p[g];
    const int S = s->S;
    const int ov = s->comm == HR_SPARSE_COMM_AMC && s->overlap;
    HR_SPCU(r, cudaEventRecord(q->fork, q->st[0]));
    for (int k = 1; k < S; k++)
        HR_SPCU(r, cudaStreamWaitEvent(q->st[k], q->fork, 0));
    if (ov) {
        HR_SPCU(r, cudaStreamWaitEvent(q->cs, q->fork, 0));
        HR_TRY(amc_upload(r, s, g, q->cs));
    }
    for (long k = 0; k < count; k++) {
        cudaStream_t st = q->st[k % S];
        HR_TRY(enqueue(r, s, g, st, fault));
        if (ov && (k + 1) % s->E == 0 && k + 1 < count) { /* a round after kernel k */
            HR_SPCU(r, cudaEventRecord(q->kdone, st));
            HR_SPCU(r, cudaStreamWaitEvent(q->cs, q->kdone, 0));
            HR_TRY(amc_download(r, s, g, q->cs));
            HR_TRY(amc_upload(r, s, g, q->cs));
        }
    }
    for (int k = 1; k < S; k++) {
        HR_SPCU(r, cudaEventRecord(q->join[k], q->st[k]));
        HR_SPCU(r, cudaStreamWaitEvent(q->st[0], q->join[k], 0));
    }
    if (ov) {
        HR_SPCU(r, cudaEventRecord(q->cjoin, q->cs));
        HR_SPCU(r, cudaStreamWaitEvent(q->st[0], q->cjoin, 0));
        HR_TRY(amc_download(r, s, g, q->st[0])); /* after every kernel and every round */
    }
    return HR_OK;
}

/* The device loop's body (hr_sp_body_fn; one GPU, one stream): U iterations, each
 * checked from its snapshot while the next ones run. A check costs about an iteration
 * (it is a chain of dependent loads and a reduction), so checks of even and odd
 * iterations run on two streams of their own: one chain alone would set the pace.
 * Iteration j + 2 overwrites the snapshot check j reads, so it waits for it. */
static hr_status loop_body(hr_sparse_run *r, void *ctx, int U, cudaStream_t st)
{
    async_state *s = (async_state *)ctx;
    gpu_part *q = &s->p[0];
    const unsigned char *fz = s->body_fault ? q->d_frozen : NULL;
    const long long n = r->A->n_rows;
    if (s->batch) { /* U iterations, then one kernel checks their U snapshots (one stream) */
        for (int j = 0; j < U; j++)
            HR_SPCU(r, hri_sp_async_launch(&q->L, q->d_diag, q->d_b, q->xr, q->xr, s->K, fz, s->R.d_ctl, j,
                                          s->snaps, s->snap_v, n, st));
        HR_SPCU(r, hri_sp_resid_check_batch(&s->R, q->d_b, s->snaps, s->snap_v, st));
        return HR_OK;
    }
    for (int j = 0; j < U; j++) {
        if (j >= 2) HR_SPCU(r, cudaStreamWaitEvent(st, s->ev_check[j & 1], 0)); /* snapshot k & 1 is read */
        HR_SPCU(r, hri_sp_async_launch(&q->L, q->d_diag, q->d_b, q->xr, q->xr, s->K, fz, s->R.d_ctl, j,
                                      s->snaps, 2, n, st));
        HR_SPCU(r, cudaEventRecord(s->ev_iter, st));
        cudaStream_t cs = s->cs[j & 1];
        HR_SPCU(r, cudaStreamWaitEvent(cs, s->ev_iter, 0));
        HR_SPCU(r, hri_sp_resid_check(&s->R, q->d_b, s->snaps, s->snaps + n, NULL, j, j & 1, cs));
        HR_SPCU(r, cudaEventRecord(s->ev_check[j & 1], cs));
    }
    HR_SPCU(r, cudaStreamWaitEvent(st, s->ev_check[(U - 1) & 1], 0));
    if (U > 1) HR_SPCU(r, cudaStreamWaitEvent(st, s->ev_check[U & 1], 0));
    return HR_OK;
}

/* The lean body (hr_sp_lean): U plain kernels in place on x, iteration j's rows also into
 * snapshot j (a fixed pointer), then one kernel checks the U snapshots. */
static hr_status lean_body(hr_sparse_run *r, void *ctx, int U, cudaStream_t st)
{
    async_state *s = (async_state *)ctx;
    gpu_part *q = &s->p[0];
    const unsigned char *fz = s->body_fault ? q->d_frozen : NULL;
    const long long n = r->A->n_rows;
    for (int j = 0; j < U; j++)
        HR_SPCU(r, hri_sp_async_launch(&q->L, q->d_diag, q->d_b, q->xr, q->xr, s->K, fz, NULL, j,
                                      s->snaps + j * n, 0, n, st));
    HR_SPCU(r, hri_sp_resid_check_lean(&s->R, q->d_b, s->snaps, U, st));
    return HR_OK;
}

/* Captures count iterations of part g into *out. Returns 1 when capture is refused (a
 * copy kind the driver cannot capture, say): the caller then issues them live. */
static int build_graph(hr_sparse_run *r, async_state *s, int g, long count, int fault, cudaGraphExec_t *out)
{
    gpu_part *q = &s->p[g];
    cudaGraph_t graph = NULL;
    *out = NULL;
    if (cudaStreamBeginCapture(q->st[0], cudaStreamCaptureModeThreadLocal) != cudaSuccess) goto refused;
    {
        hr_status st = enqueue_run(r, s, g, count, fault);
        cudaError_t ce = cudaStreamEndCapture(q->st[0], &graph);
        if (st != HR_OK || ce != cudaSuccess) goto refused;
        if (cudaGraphInstantiate(out, graph, 0) != cudaSuccess) {
            *out = NULL; /* nothing to destroy */
            goto refused;
        }
        if (cudaGraphUpload(*out, q->st[0]) != cudaSuccess) goto refused;
    }
    cudaGraphDestroy(graph);
    return 0;
refused:
    if (graph) cudaGraphDestroy(graph);
    if (*out) cudaGraphExecDestroy(*out);
    *out = NULL;
    (void)cudaGetLastError();
    r->err[0] = '\0';
    return 1;
}

/* Destroys the cached remainder graphs of fault state f on every GPU. */
static hr_status drop_rest(hr_sparse_run *r, async_state *s, int f)
{
    for (int g = 0; g < s->ngpu; g++)
        if (s->p[g].rest[f]) {
            HR_SPCU(r, cudaSetDevice(s->p[g].dev));
            HR_SPCU(r, cudaGraphExecDestroy(s->p[g].rest[f]));
            s->p[g].rest[f] = NULL;
        }
    s->rest_n[f] = 0;
    return HR_OK;
}

/* Makes the remainder graphs of `rest` iterations in fault state f ready when that
 * count came in the previous call too (header comment). Sets *use when every GPU has
 * one; a refused capture leaves every GPU live for all later remainders. */
static hr_status prepare_rest(hr_sparse_run *r, async_state *s, long rest, int f, int *use)
{
    *use = 0;
    if (s->G <= 0 || s->rest_refused) return HR_OK;
    if (s->rest_n[f] == rest) {
        *use = 1;
        return HR_OK;
    }
    const long seen = s->rest_seen[f];
    s->rest_seen[f] = rest;
    if (seen != rest) return HR_OK; /* first sighting: live */
    HR_TRY(drop_rest(r, s, f));
    for (int g = 0; g < s->ngpu; g++) {
        HR_SPCU(r, cudaSetDevice(s->p[g].dev));
        if (build_graph(r, s, g, rest, f, &s->p[g].rest[f])) {
            s->rest_refused = 1;
            return drop_rest(r, s, f);
        }
    }
    s->rest_n[f] = rest;
    *use = 1;
    return HR_OK;
}

static hr_status upload(hr_sparse_run *r, double **d, const void *h, size_t bytes)
{
    HR_SPCU(r, cudaMalloc((void **)d, bytes));
    if (h) HR_SPCU(r, cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice));
    if (h)
        HR_SPCU(r,
                cudaStreamSynchronize(
                    cudaStreamLegacy)); /* legacy-stream copy done before the non-blocking streams read it */
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
    if (s->comm == HR_SPARSE_COMM_AMC && s->overlap) {
        HR_SPCU(r, cudaStreamCreateWithFlags(&q->cs, cudaStreamNonBlocking));
        HR_SPCU(r, cudaEventCreateWithFlags(&q->kdone, cudaEventDisableTiming));
        HR_SPCU(r, cudaEventCreateWithFlags(&q->cjoin, cudaEventDisableTiming));
    }
    HR_TRY(hri_sp_blocks_build(r, r->A, q->row0, q->row1 - q->row0, B, 1, &q->L));
    HR_TRY(upload(r, &q->d_diag, diag, bytes));
    HR_TRY(upload(r, &q->d_b, NULL, bytes)); /* b and x0: async_load, per solve */
    if (s->comm != HR_SPARSE_COMM_DK || g == 0) HR_TRY(upload(r, &q->d_x, NULL, bytes));
    if (r->frozen) {
        HR_SPCU(r, cudaMalloc((void **)&q->d_frozen, (size_t)n));
        HR_SPCU(r, cudaMemcpy(q->d_frozen, r->frozen, (size_t)n, cudaMemcpyHostToDevice));
        HR_SPCU(r,
                cudaStreamSynchronize(
                    cudaStreamLegacy)); /* legacy-stream work done before the non-blocking streams read it */
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
    HR_SPCU(r, hri_sp_async_prepare(B));
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
    const hr_tuning *tu = &r->o.tuning;
    s->S = tu->sparse_streams > 0 ? tu->sparse_streams : 1; /* 1..HR_SP_MAX_STREAMS (hri_tuning_validate) */
    s->G = hr_tune_count(tu->sparse_graph, 32);
    /* checked every iteration with one GPU and one stream (and no AMC copies): the
     * device loop (tuning.sparse_device_checks off: checks on the host) */
    s->dc = hri_sp_loop_wanted(r) && s->ngpu == 1 && s->S == 1 && s->comm != HR_SPARSE_COMM_AMC;
    s->overlap = !hr_tune_on(tu->sparse_amc_serial, 0);
    s->E = tu->sparse_amc_every > 0 ? tu->sparse_amc_every : 1;
    s->K = r->o.local_iters;
    if (s->ngpu > HR_SP_MAX_GPUS) {
        snprintf(r->err, sizeof r->err, "gpus: at most %d", HR_SP_MAX_GPUS);
        return HR_ERR_INVALID_ARG;
    }
    HR_TRY(hri_sp_check_devices(r, r->o.device, s->ngpu));
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
    if (s->comm == HR_SPARSE_COMM_AMC)
        HR_SPCU(r, cudaHostAlloc((void **)&s->h_x, (size_t)n * sizeof(double), cudaHostAllocPortable));
    HR_SPCU(r, cudaSetDevice(s->p[0].dev));
    HR_TRY(hri_sp_resid_setup(r, &s->R, 1, s->comm == HR_SPARSE_COMM_AMC && s->ngpu > 1));
    int whiles = 0;
    if (s->dc) {
        const int U = hri_sp_loop_body_len(r);
        s->batch = hri_sp_batch_wanted(r, (double)U * n * sizeof(double)); /* the snapshot ring */
        s->snap_v = s->batch ? U : 2;
        /* body-length policy: the long lean body's UL snapshots, where they fit the budget */
        long sw = 0;
        int UL = s->batch && hri_sp_lean_wanted(r) ? hri_sp_loop_body_long(r, &sw) : 0;
        if (UL > 0 && (double)UL * n * sizeof(double) > (double)HR_SP_BATCH_BYTES) UL = 0;
        const int nsnap = UL > s->snap_v ? UL : s->snap_v;
        HR_SPCU(r, cudaMalloc((void **)&s->snaps, (size_t)nsnap * (n > 0 ? n : 1) * sizeof(double)));
        if (s->batch) HR_TRY(hri_sp_resid_batch_setup(r, &s->R, U, s->R.nblk, UL));
        HR_SPCU(r, cudaEventCreateWithFlags(&s->ev_iter, cudaEventDisableTiming));
        for (int e = 0; e < 2; e++) {
            HR_SPCU(r, cudaStreamCreateWithFlags(&s->cs[e], cudaStreamNonBlocking));
            HR_SPCU(r, cudaEventCreateWithFlags(&s->ev_check[e], cudaEventDisableTiming));
        }
        /* batched, the WHILE graph runs the lean body; after it, snapshot p - 1 is copied
         * into x unless p is the last body's length (x holds it); replays then find x_done
         * in x as well */
        const int var = hri_sp_predict_wanted(r); /* in place: bodies of any length from 1 (hr_sp_lean) */
        hr_sp_lean lean = {lean_body, U, s->snaps, -1, U, 0, s->p[0].d_x, (long long)n, NULL, var};
        hr_sp_lean lean_long = {lean_body, UL, s->snaps, -1, UL, 0, s->p[0].d_x, (long long)n, NULL, var};
        for (int f = 0; f < (r->frozen ? 2 : 1) && s->dc; f++) {
            s->body_fault = f;
            HR_TRY(hri_sp_loop_build(r, &s->R, &s->loop[f], U, 0, hri_sp_while_wanted(r), loop_body, s,
                                    s->batch && hri_sp_lean_wanted(r) ? &lean : NULL, s->p[0].st[0]));
            if (!s->loop[f].body) s->dc = 0; /* capture refused: host checks */
            whiles += s->loop[f].loop != NULL;
            if (UL > 0 && s->loop[f].lean)
                HR_TRY(hri_sp_loop_add_long(r, &s->R, &s->loop[f], &lean_long, sw, s->p[0].st[0]));
        }
    }
    r->device_checks = !s->dc ? 0 : whiles == (r->frozen ? 2 : 1) ? 2 : 1;
    r->prof.mode = hri_sp_mode_name(r, &s->loop[0], s->batch);
    if (s->dc) s->G = 0; /* no replays of plain runs: the device loop runs every call */
    if (!s->dc && r->o.tol > 0.0 && r->o.check_every > 0 && r->o.check_every < s->G) /* a graph a check */
        s->G = (int)r->o.check_every;
    r->prof.body = s->dc ? s->loop[0].U : s->G;
    int refused = 0;
    for (int g = 0; g < s->ngpu && s->G > 0 && !refused; g++) {
        HR_SPCU(r, cudaSetDevice(s->p[g].dev));
        for (int f = 0; f < (r->frozen ? 2 : 1) && !refused; f++)
            refused = build_graph(r, s, g, s->G, f, &s->p[g].graph[f]);
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

/* A new right-hand side and initial guess on every GPU (and the hub). */
static hr_status async_load(hr_sparse_run *r)
{
    async_state *s = (async_state *)r->impl;
    const size_t bytes = (size_t)r->A->n_rows * sizeof(double);
    if (r->on_device && (s->h_x || s->ngpu > 1 || !s->p[0].d_x)) {
        snprintf(r->err, sizeof r->err, "device vectors: async on one GPU without a host hub (--comm auto) takes them");
        return HR_ERR_UNSUPPORTED;
    }
    if (s->h_x) memcpy(s->h_x, r->x, bytes);
    for (int g = 0; g < s->ngpu; g++) { /* on the stream: a pageable cudaMemcpy may return early */
        gpu_part *q = &s->p[g];
        HR_SPCU(r, cudaSetDevice(q->dev));
        HR_SPCU(r, cudaMemcpyAsync(q->d_b, r->b, bytes, cudaMemcpyDefault, q->st[0]));
        if (q->d_x) HR_SPCU(r, cudaMemcpyAsync(q->d_x, r->x, bytes, cudaMemcpyDefault, q->st[0]));
    }
    for (int g = 0; g < s->ngpu; g++) {
        HR_SPCU(r, cudaSetDevice(s->p[g].dev));
        HR_SPCU(r, cudaStreamSynchronize(s->p[g].st[0]));
    }
    double bmax;
    if (r->on_device)
        HR_TRY(hri_sp_device_norm(r, s->p[0].d_b, r->A->n_rows, s->p[0].st[0], &bmax, &s->R.bnorm));
    else
        s->R.bnorm = hri_sparse_norm2(r->b, r->A->n_rows);
    s->lean_last = 0;
    if (s->dc) { /* (batched: every iterate the loop checks or returns is written whole first) */
        HR_SPCU(r, cudaSetDevice(s->p[0].dev));
        for (int e = 0; e < 2 && !s->batch; e++)
            HR_SPCU(r, cudaMemcpyAsync(s->snaps + (size_t)e * r->A->n_rows, s->p[0].d_x, bytes,
                                       cudaMemcpyDeviceToDevice, s->p[0].st[0]));
        HR_TRY(hri_sp_ctl_reset(r, &s->R, s->p[0].st[0])); /* synchronises */
    }
    return HR_OK;
}

static hr_status async_residual(hr_sparse_run *r, double *rel)
{
    async_state *s = (async_state *)r->impl;
    gpu_part *q = &s->p[0];
    HR_SPCU(r, cudaSetDevice(q->dev));
    const double *x = q->d_x;
    if (s->R.d_xh) { /* AMC, several GPUs: the hub holds every GPU's last rows */
        HR_SPCU(r, cudaMemcpyAsync(s->R.d_xh, s->h_x, (size_t)r->A->n_rows * sizeof(double),
                                   cudaMemcpyHostToDevice, q->st[0]));
        x = s->R.d_xh;
    }
    return hri_sp_resid_run(r, &s->R, q->d_b, x, NULL, q->st[0], rel);
}

static hr_status async_iterate(hr_sparse_run *r, long count)
{
    async_state *s = (async_state *)r->impl;
    const int f = r->fault_active && r->frozen ? 1 : 0;
    if (s->dc) { /* one GPU: the device loop, one host wait */
        HR_SPCU(r, cudaSetDevice(s->p[0].dev));
        HR_TRY(hri_sp_loop_run(r, &s->R, &s->loop[f], count, s->p[0].st[0]));
        s->lean_last = s->loop[f].loop && s->loop[f].lean;
        return HR_OK;
    }
    long graphs = s->G > 0 ? count / s->G : 0, rest = count - graphs * (long)s->G;
    int rest_graph = 0;
    if (rest > 0) {
        const double t0 = r->prof.on ? hri_sp_now() : 0.0;
        const long seen = s->rest_n[f];
        HR_TRY(prepare_rest(r, s, rest, f, &rest_graph)); /* captures before any launch */
        if (rest_graph && seen != rest) r->prof.captures++;
        if (r->prof.on) r->prof.t_capture += hri_sp_now() - t0;
    }
    const double t0 = r->prof.on ? hri_sp_now() : 0.0;
    for (long j = 0; j < graphs; j++) /* interleaved so that all GPUs start at once */
        for (int g = 0; g < s->ngpu; g++) {
            HR_SPCU(r, cudaSetDevice(s->p[g].dev));
            HR_SPCU(r, cudaGraphLaunch(s->p[g].graph[f], s->p[g].st[0]));
            r->prof.launches++;
        }
    if (rest > 0)
        for (int g = 0; g < s->ngpu; g++) {
            HR_SPCU(r, cudaSetDevice(s->p[g].dev));
            if (rest_graph) {
                HR_SPCU(r, cudaGraphLaunch(s->p[g].rest[f], s->p[g].st[0]));
                r->prof.launches++;
            } else {
                HR_TRY(enqueue_run(r, s, g, rest, f));
                r->prof.live += rest;
            }
        }
    if (r->prof.on) r->prof.t_enqueue += hri_sp_now() - t0;
    for (int g = 0; g < s->ngpu; g++) {
        HR_SPCU(r, cudaSetDevice(s->p[g].dev));
        HR_TRY(hri_sp_sync(r, s->p[g].st[0]));
    }
    return HR_OK;
}

static hr_status async_sync_host(hr_sparse_run *r)
{
    async_state *s = (async_state *)r->impl;
    const size_t bytes = (size_t)r->A->n_rows * sizeof(double);
    if (s->comm == HR_SPARSE_COMM_AMC) { /* every GPU's rows came back after its last kernel */
        memcpy(r->x, s->h_x, bytes);
        return HR_OK;
    }
    HR_SPCU(r, cudaSetDevice(s->p[0].dev));
    /* device loop: iterate `done` is in its snapshot (x may be further on when a check
     * stopped the solve: one iteration, or batched the rest of the body), except after
     * the lean body, whose end copies it into x */
    const double *x = s->dc && r->checked_done > 0 && !s->lean_last
                          ? s->snaps + (size_t)(r->checked_done % s->snap_v) * (size_t)r->A->n_rows
                          : s->p[0].d_x;
    HR_SPCU(r, cudaMemcpy(r->x, x, bytes, cudaMemcpyDefault));
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
        for (int f = 0; f < 2; f++) {
            if (q->graph[f]) cudaGraphExecDestroy(q->graph[f]);
            if (q->rest[f]) cudaGraphExecDestroy(q->rest[f]);
        }
        for (int k = 0; k < s->S; k++) {
            if (q->st[k]) cudaStreamDestroy(q->st[k]);
            if (q->join[k]) cudaEventDestroy(q->join[k]);
        }
        if (q->fork) cudaEventDestroy(q->fork);
        if (q->cs) cudaStreamDestroy(q->cs);
        if (q->kdone) cudaEventDestroy(q->kdone);
        if (q->cjoin) cudaEventDestroy(q->cjoin);
        hri_sp_blocks_free(&q->L);
        cudaFree(q->d_diag), cudaFree(q->d_b), cudaFree(q->d_x), cudaFree(q->d_frozen);
    }
    if (s->h_x) cudaFreeHost(s->h_x);
    if (s->ngpu > 0 && cudaSetDevice(s->p[0].dev) == cudaSuccess) {
        for (int f = 0; f < 2; f++)
            hri_sp_loop_free(&s->loop[f]);
        if (s->ev_iter) cudaEventDestroy(s->ev_iter);
        for (int e = 0; e < 2; e++) {
            if (s->cs[e]) cudaStreamSynchronize(s->cs[e]), cudaStreamDestroy(s->cs[e]);
            if (s->ev_check[e]) cudaEventDestroy(s->ev_check[e]);
        }
        cudaFree(s->snaps);
    }
    hri_sp_resid_free(&s->R);
    free(s);
    r->impl = NULL;
}

extern "C" const hr_sparse_ops hri_sparse_gpu_async = {
    .setup = async_setup,
    .iterate = async_iterate,
    .sync_host = async_sync_host,
    .teardown = async_teardown,
    .load = async_load,
    .residual = async_residual,
    .host_row_bytes = 16.0, /* staging of the diagonal and the row offsets */
    .host_entry_bytes = 0.0,
    .device_vectors = 4,
};
