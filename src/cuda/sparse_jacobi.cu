/*
 * GPU synchronous Jacobi for sparse systems (seed 002, the GPU Jacobi of sections 4.2-4.4):
 * one kernel launch per sweep between two device vectors. Launches are replayed from
 * CUDA graphs of HR_SP_JACOBI_GRAPH sweeps (one per starting vector and fault state),
 * which removes most of the launch overhead that dominates these small systems. With
 * device-side checks (sparse_residual.cu) the sweeps run in a device loop: sweep k
 * writes x_k into vector k & 1, and its check reads it on a second stream while sweep
 * k + 1 runs (sweep k + 2, which overwrites it, waits for the check).
 * Deterministic: bitwise equal to the CPU Jacobi (same formula, order, no FMA).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/sparse_gpu.cuh"

#define HR_SP_JACOBI_GRAPH 32  /* even: a replay ends on the vector it began on */
#define HR_SP_JACOBI_ROWS  128 /* rows per thread block (one thread per row) */

typedef struct jac_state {
    hr_sp_blocks L;
    double *d_diag, *d_b, *d_x[2];
    unsigned char *d_frozen;
    int cur;             /* vector holding the iterate */
    cudaStream_t st, cs; /* cs: the checks of the device loop */
    cudaEvent_t ev_sweep, ev_check[2];
    cudaGraphExec_t graph[2][2]; /* [fault active][starting vector] */
    hr_sp_loop loop[2];          /* device-side checks: [fault active] */
    hr_sp_resid R;               /* residual checks on the device */
    int dc;                      /* device-side checks after every sweep (r->device_checks) */
    int body_fault;              /* the fault state of the body being captured */
} jac_state;

/* One sweep from d_x[from] (host checks). */
static hr_status launch(hr_sparse_run *r, jac_state *s, int from, int fault)
{
    HR_SPCU(r, hr_sp_jacobi_launch(&s->L, s->d_diag, s->d_b, s->d_x[from], s->d_x[1 - from], r->tau,
                                   fault ? s->d_frozen : NULL, NULL, 0, s->st));
    return HR_OK;
}

/* The device loop's body (hr_sp_body_fn): U sweeps, each checked on cs while the next
 * one runs; sweep j + 2 overwrites what check j reads, so it waits for it. */
static hr_status loop_body(hr_sparse_run *r, void *ctx, int U, cudaStream_t st)
{
    jac_state *s = (jac_state *)ctx;
    const unsigned char *fz = s->body_fault ? s->d_frozen : NULL;
    for (int j = 0; j < U; j++) {
        if (j >= 2) HR_SPCU(r, cudaStreamWaitEvent(st, s->ev_check[j & 1], 0));
        HR_SPCU(r, hr_sp_jacobi_launch(&s->L, s->d_diag, s->d_b, s->d_x[0], s->d_x[1], r->tau, fz, s->R.d_ctl,
                                       j, st));
        HR_SPCU(r, cudaEventRecord(s->ev_sweep, st));
        HR_SPCU(r, cudaStreamWaitEvent(s->cs, s->ev_sweep, 0));
        HR_SPCU(r, hr_sp_resid_check(&s->R, s->d_b, s->d_x[0], s->d_x[1], NULL, j, s->cs));
        HR_SPCU(r, cudaEventRecord(s->ev_check[j & 1], s->cs));
    }
    HR_SPCU(r, cudaStreamWaitEvent(st, s->ev_check[(U - 1) & 1], 0));
    return HR_OK;
}

static hr_status build_graph(hr_sparse_run *r, jac_state *s, int fault, int from, int len,
                             cudaGraphExec_t *out)
{
    cudaGraph_t g = NULL;
    HR_SPCU(r, cudaStreamBeginCapture(s->st, cudaStreamCaptureModeThreadLocal));
    hr_status st = HR_OK;
    for (int k = 0; k < len && st == HR_OK; k++)
        st = launch(r, s, (from + k) & 1, fault);
    cudaError_t ce = cudaStreamEndCapture(s->st, &g);
    if (st != HR_OK) {
        if (g) cudaGraphDestroy(g);
        return st;
    }
    HR_SPCU(r, ce);
    cudaError_t ie = cudaGraphInstantiate(out, g, 0);
    cudaGraphDestroy(g);
    HR_SPCU(r, ie);
    HR_SPCU(r, cudaGraphUpload(*out, s->st));
    return HR_OK;
}

static hr_status jac_setup(hr_sparse_run *r)
{
    jac_state *s = (jac_state *)calloc(1, sizeof *s);
    if (!s) return HR_ERR_NO_MEMORY;
    r->impl = s;
    const hr_csr *A = r->A;
    const int n = A->n_rows;
    if (r->o.gpus > 1) {
        snprintf(r->err, sizeof r->err, "gpus: several GPUs are only for --method async");
        return HR_ERR_INVALID_ARG;
    }
    HR_TRY(hr_sp_check_devices(r, r->o.device, 1));
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPCU(r, cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking));
    HR_SPCU(r, cudaStreamCreateWithFlags(&s->cs, cudaStreamNonBlocking));
    HR_SPCU(r, cudaEventCreateWithFlags(&s->ev_sweep, cudaEventDisableTiming));
    for (int e = 0; e < 2; e++)
        HR_SPCU(r, cudaEventCreateWithFlags(&s->ev_check[e], cudaEventDisableTiming));
    HR_TRY(hr_sp_blocks_build(r, A, 0, n, HR_SP_JACOBI_ROWS, 0, &s->L));
    double *diag = (double *)malloc((size_t)n * sizeof *diag);
    if (!diag) return HR_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++)
        diag[i] = A->val[A->diag[i]];
    const size_t bytes = (size_t)n * sizeof(double);
    cudaError_t e = cudaMalloc((void **)&s->d_diag, bytes);
    if (e == cudaSuccess) e = cudaMemcpy(s->d_diag, diag, bytes, cudaMemcpyHostToDevice);
    free(diag);
    HR_SPCU(r, e);
    HR_SPCU(r, cudaMalloc((void **)&s->d_b, bytes)); /* b and x0: jac_load, per solve */
    for (int v = 0; v < 2; v++)
        HR_SPCU(r, cudaMalloc((void **)&s->d_x[v], bytes));
    HR_TRY(hr_sp_resid_setup(r, &s->R, 1, 0));
    if (r->frozen) {
        HR_SPCU(r, cudaMalloc((void **)&s->d_frozen, (size_t)n));
        HR_SPCU(r, cudaMemcpy(s->d_frozen, r->frozen, (size_t)n, cudaMemcpyHostToDevice));
    }
    HR_SPCU(r, hr_sp_jacobi_prepare());
    for (int f = 0; f < (r->frozen ? 2 : 1); f++)
        for (int from = 0; from < 2; from++)
            HR_TRY(build_graph(r, s, f, from, HR_SP_JACOBI_GRAPH, &s->graph[f][from]));
    /* checked every sweep: the device loop (HETRELAX_SPARSE_DEVICE_CHECKS=0: host checks) */
    s->dc = hr_sp_loop_wanted(r);
    int whiles = 0;
    for (int f = 0; f < (r->frozen ? 2 : 1) && s->dc; f++) {
        s->body_fault = f;
        HR_TRY(hr_sp_loop_build(r, &s->R, &s->loop[f], hr_sp_loop_body_len(r),
                                hr_sp_env_int("HETRELAX_SPARSE_WHILE", 1, 0, 1), loop_body, s, s->st));
        if (!s->loop[f].body) s->dc = 0; /* capture refused: host checks */
        whiles += s->loop[f].loop != NULL;
    }
    r->device_checks = !s->dc ? 0 : whiles == (r->frozen ? 2 : 1) ? 2 : 1;
    r->prof.mode = r->device_checks == 2 ? "while-graph" : r->device_checks ? "body-replay" : "host-checks";
    r->prof.body = s->dc ? s->loop[0].U : HR_SP_JACOBI_GRAPH;
    HR_SPCU(r, cudaStreamSynchronize(s->st));
    return HR_OK;
}

/* A new right-hand side and initial guess: the graphs read the vectors in place. */
static hr_status jac_load(hr_sparse_run *r)
{
    jac_state *s = (jac_state *)r->impl;
    const size_t bytes = (size_t)r->A->n_rows * sizeof(double);
    HR_SPCU(r, cudaSetDevice(r->o.device));
    /* on the stream: a pageable cudaMemcpy may return before its DMA lands */
    HR_SPCU(r, cudaMemcpyAsync(s->d_b, r->b, bytes, cudaMemcpyHostToDevice, s->st));
    HR_SPCU(r, cudaMemcpyAsync(s->d_x[0], r->x, bytes, cudaMemcpyHostToDevice, s->st));
    HR_SPCU(r, cudaStreamSynchronize(s->st)); /* r->b and r->x may change after the solve */
    s->cur = 0;
    s->R.bnorm = hr_sparse_norm2(r->b, r->A->n_rows);
    if (s->dc) HR_TRY(hr_sp_ctl_reset(r, &s->R, s->st));
    return HR_OK;
}

static hr_status jac_residual(hr_sparse_run *r, double *rel)
{
    jac_state *s = (jac_state *)r->impl;
    return hr_sp_resid_run(r, &s->R, s->d_b, s->d_x[s->cur], NULL, s->st, rel);
}

static hr_status jac_iterate(hr_sparse_run *r, long count)
{
    jac_state *s = (jac_state *)r->impl;
    const int f = r->fault_active && s->d_frozen ? 1 : 0;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    if (s->dc) { /* sweeps after a stopping check did nothing: x_done is in vector done & 1 */
        HR_TRY(hr_sp_loop_run(r, &s->R, &s->loop[f], count, s->st));
        s->cur = (int)(r->checked_done & 1);
        return HR_OK;
    }
    const double t0 = r->prof.on ? hr_sp_now() : 0.0;
    for (; count >= HR_SP_JACOBI_GRAPH; count -= HR_SP_JACOBI_GRAPH, r->prof.launches++)
        HR_SPCU(r, cudaGraphLaunch(s->graph[f][s->cur], s->st));
    for (; count > 0; count--, r->prof.live++) {
        HR_TRY(launch(r, s, s->cur, f));
        s->cur ^= 1;
    }
    if (r->prof.on) r->prof.t_enqueue += hr_sp_now() - t0;
    return hr_sp_sync(r, s->st);
}

static hr_status jac_sync_host(hr_sparse_run *r)
{
    jac_state *s = (jac_state *)r->impl;
    HR_SPCU(r, cudaSetDevice(r->o.device));
    HR_SPCU(r,
            cudaMemcpy(r->x, s->d_x[s->cur], (size_t)r->A->n_rows * sizeof(double), cudaMemcpyDeviceToHost));
    return HR_OK;
}

static void jac_teardown(hr_sparse_run *r)
{
    jac_state *s = (jac_state *)r->impl;
    if (!s) return;
    cudaSetDevice(r->o.device);
    for (int f = 0; f < 2; f++)
        for (int v = 0; v < 2; v++)
            if (s->graph[f][v]) cudaGraphExecDestroy(s->graph[f][v]);
    if (s->st) cudaStreamSynchronize(s->st);
    for (int f = 0; f < 2; f++)
        hr_sp_loop_free(&s->loop[f]);
    if (s->st) cudaStreamDestroy(s->st);
    if (s->cs) cudaStreamSynchronize(s->cs), cudaStreamDestroy(s->cs);
    if (s->ev_sweep) cudaEventDestroy(s->ev_sweep);
    for (int e = 0; e < 2; e++)
        if (s->ev_check[e]) cudaEventDestroy(s->ev_check[e]);
    hr_sp_blocks_free(&s->L);
    hr_sp_resid_free(&s->R);
    cudaSetDevice(r->o.device);
    cudaFree(s->d_diag), cudaFree(s->d_b), cudaFree(s->d_x[0]), cudaFree(s->d_x[1]), cudaFree(s->d_frozen);
    (void)cudaGetLastError(); /* teardown after a failure must not leave an error behind */
    free(s);
    r->impl = NULL;
}

extern "C" const hr_sparse_method hr_sparse_gpu_jacobi = {
    .name = "jacobi",
    .backend = HR_BACKEND_GPU,
    .summary = "Jacobi on the GPU, one kernel per sweep (graph replays), bitwise = CPU",
    .caps = HR_SPARSE_CAP_DETERMINISTIC | HR_SPARSE_CAP_DIAGONAL | HR_SPARSE_CAP_TAU | HR_SPARSE_CAP_FAULTS,
    .setup = jac_setup,
    .iterate = jac_iterate,
    .sync_host = jac_sync_host,
    .teardown = jac_teardown,
    .load = jac_load,
    .residual = jac_residual,
};
