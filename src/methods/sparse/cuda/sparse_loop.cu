/*
 * The device loop of the GPU sparse methods: a body of U iterations with their checks
 * (hr_sp_ctl, sparse_gpu.cuh), captured once and run by a graph whose conditional WHILE
 * node repeats it until the call's end or a stop (or, where the runtime refuses that,
 * replayed from the host), so that a call is one launch and one host wait however many
 * iterations it holds. Lean bodies (hr_sp_lean): the plain kernels on fixed ring slots,
 * one batched check (sparse_residual.cu) and the body's end; short bodies while a solve
 * is young, long ones after (hri_sp_loop_body_long). The checks themselves are in
 * sparse_residual.cu.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "methods/sparse/cuda/sparse_gpu.cuh"

/* Batched checks: records the body's checked iterations in order, one warp (positions
 * j0 + lane): position j swept iteration k = base + j + 1, which checked iteration
 * m = k - lag. The same verdicts as hr_sp_ctl_record of each m in turn up to the
 * first that stops (the later ones are ignored, as gated ones are); the warp loads
 * the residuals at once instead of one thread's chain of dependent loads. */
__device__ void hri_sp_record_batch(hr_sp_ctl *c, int U, int lag, const double *__restrict__ rel)
{
    const int lane = (int)threadIdx.x;
    const long long base = c->base, target = c->target;
    const double tol = c->tol, divref = c->divref;
    double *hist = c->hist;
    const long long every = c->mon_every, ring = c->ring;
    if (c->stop) return; /* a body replayed after a stop: every position was gated */
    for (int j0 = 0; j0 < U; j0 += 32) {
        const int j = j0 + lane;
        const long long k = base + j + 1, m = k - lag;
        const bool in = j < U && k <= target + lag && m >= 1 && m <= target; /* x_0: checked on the host */
        const double v = in ? rel[j] : 0.0;
        const bool stops = in && (v < tol || !(v <= divref));
        const unsigned st = __ballot_sync(0xffffffffu, stops), ok = __ballot_sync(0xffffffffu, in);
        const unsigned upto = st ? ((st & (0u - st)) << 1) - 1u : 0xffffffffu; /* lanes <= the first stop */
        const unsigned recd = ok & upto;
        if (recd & (1u << lane)) {
            if (hist && m % every == 0) hist[(m / every) % ring] = v;
            const int last = 31 - __clz((int)recd);
            if (lane >= last - 1) c->rel_at[m & 1] = v; /* the last checked of each parity */
            if (lane == last) {
                if (m > c->done) c->done = m;
                if (st) {
                    if (m < c->stop_at) c->stop_at = m;
                    __threadfence(); /* stop_at before stop, for a reader that sees stop */
                    c->stop = 1;
                }
            }
        }
        if (st) break;
    }
    __syncwarp(); /* stop is written before lane 0 reads it */
}

/* The next variable lean body's length (hr_sp_lean.variable), up to umax and to the
 * call's end (left iterations): from this body's residuals (rel, U of them), the rate
 * ln(residual) fell at per iteration over its last 8 (or the last rate seen, for bodies
 * under 4), the iterations the tolerance is predicted to need, plus one and an eighth
 * (an iteration too many costs one sweep, one too few a whole body more). */
__device__ int hri_sp_next_len(hr_sp_ctl *c, int U, const double *rel, int umax, long long left)
{
    double lr = c->lrate;
    if (U >= 4) {
        const int a = U > 8 ? U - 8 : 0;
        const double r0 = rel[a], r1 = rel[U - 1];
        if (r0 > 0.0 && r1 > 0.0 && r0 < INFINITY && r1 < INFINITY) lr = log(r1 / r0) / (double)(U - 1 - a);
        c->lrate = lr;
    }
    long long next = umax;
    const double rl = rel[U - 1];
    if (lr < -1e-9 && rl > c->tol && c->tol > 0.0) {
        const double steps = ceil(log(c->tol / rl) / lr);
        const double want = steps + 1.0 + floor(steps / 8.0);
        if (want < (double)next) next = (long long)want;
    }
    if (left < next) next = left;
    return next > 0 ? (int)next : 1;
}

/* A body's last node (a lean body's last but one): with batched checks (rel: the body's
 * residuals by position; one warp) records their verdicts; moves base past the body
 * (not past the call's end) and, in the WHILE graph, says whether the loop goes on.
 * lean: sets from, the position of the iterate the loop continues from (hr_sp_lean).
 * sw_step > 0 (variable lean bodies of sw_step, 2 sw_step, .. sw_max iterations, cases
 * 0, 1, .. of the SWITCH node hs): picks the next body's case. */
__global__ void hri_sp_body_end(hr_sp_ctl *c, int U, int lag, const double *rel, cudaGraphConditionalHandle h,
                               int use_h, int lean, cudaGraphConditionalHandle hs, int sw_step, int sw_max)
{
    if (rel) hri_sp_record_batch(c, U, lag, rel);
    if (threadIdx.x != 0) return;
    long long b = c->base + U;
    if (b > c->target + lag) b = c->target + lag;
    if (lean) { /* a stop in this body: its iteration; else the body's last counted one */
        long long it = c->stop ? c->stop_at : b;
        it = it < b ? it : b;
        const long long p = it - c->base;
        c->from = p > 0 ? (int)p : 0; /* 0: a stop before this body (not reached: the driver ends) */
        c->last_u = U;
    }
    c->base = b;
    c->bodies++;
    const bool more = !c->stop && b < c->target + lag;
    if (sw_step > 0 && more && rel) {
        const int next = hri_sp_next_len(c, U, rel, sw_max, c->target + lag - b);
        cudaGraphSetConditional(hs, (unsigned)((next + sw_step - 1) / sw_step - 1));
    }
    if (use_h) cudaGraphSetConditional(h, more ? 1u : 0u);
}

/* After the lean WHILE loop: ring slot (from + shift) % mod -> dst, unless from is 0 or
 * skip (hr_sp_lean). */
__global__ void hri_sp_lean_copy(const hr_sp_ctl *c, const double *ring, long long n, int shift, int mod,
                                int skip, double *dst)
{
    const int p = c->from;
    if (p <= 0 || p == (skip > 0 ? skip : c->last_u)) return;
    const double *src = ring + (long long)((p + shift) % (mod > 0 ? mod : c->last_u)) * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

/* Enqueues the lean body's copy after its loop on st (live or under capture). */
static cudaError_t lean_copy(const hr_sp_resid *R, const hr_sp_lean *lean, cudaStream_t st)
{
    if (lean->n <= 0) return cudaSuccess;
    const long long nb = (lean->n + 255) / 256;
    hri_sp_lean_copy<<<(unsigned)(nb < 1024 ? nb : 1024), 256, 0, st>>>(
        R->d_ctl, lean->ring, lean->n, lean->shift, lean->mod, lean->skip, lean->dst);
    return cudaGetLastError();
}

/* Enqueues the body and its end on st (live or under capture); lean: the lean body
 * (of u iterations, 0: lean->U) and its end, which picks the next case of the SWITCH
 * node hs when sw_step > 0. */
static hr_status body_and_end(hr_sparse_run *r, hr_sp_resid *R, const hr_sp_loop *L, hr_sp_body_fn body,
                              void *ctx, cudaStream_t st, cudaGraphConditionalHandle h, int use_h,
                              const hr_sp_lean *lean, int u = 0, cudaGraphConditionalHandle hs = 0,
                              int sw_step = 0)
{
    if (lean) {
        const int U = u > 0 ? u : lean->U;
        HR_TRY(lean->body(r, ctx, U, st));
        hri_sp_body_end<<<1, 32, 0, st>>>(R->d_ctl, U, 0, R->d_brel, h, use_h, 1, hs, sw_step, lean->U);
        HR_SPCU(r, cudaGetLastError());
        return HR_OK;
    }
    HR_TRY(body(r, ctx, L->U, st));
    hri_sp_body_end<<<1, R->batch ? 32 : 1, 0, st>>>(R->d_ctl, L->U, L->lag, R->batch ? R->d_brel : NULL, h,
                                                    use_h, 0, 0, 0, 0);
    HR_SPCU(r, cudaGetLastError());
    return HR_OK;
}

/* Adds to `into` a conditional node of `type` on handle h with `size` bodies (*node);
 * returns its body graphs (owned by CUDA, valid while the node lives), NULL if refused. */
static cudaGraph_t *add_conditional(cudaGraph_t into, cudaGraphConditionalHandle h,
                                    cudaGraphConditionalNodeType type, unsigned size, cudaGraphNode_t *node)
{
    /* zeroed storage: the struct's C++ default constructor is deleted (a union inside) */
    alignas(cudaGraphNodeParams) unsigned char raw[sizeof(cudaGraphNodeParams)];
    memset(raw, 0, sizeof raw);
    cudaGraphNodeParams &p = *reinterpret_cast<cudaGraphNodeParams *>(raw);
    p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = h;
    p.conditional.type = type;
    p.conditional.size = size;
    if (cudaGraphAddNode(node, into, NULL, NULL, 0, &p) != cudaSuccess) return NULL;
    return p.conditional.phGraph_out;
}

/* Adds to graph wg (the WHILE node's body) a SWITCH node whose case c runs the lean
 * body of min((c + 1) step, U) iterations (every length up to 16; else eighths of U),
 * at least lean->variable; its default case the full length (each launch's first
 * body). 0 where the runtime refuses it. */
static int add_switch(hr_sparse_run *r, hr_sp_resid *R, const hr_sp_loop *L, void *ctx, cudaGraph_t g,
                      cudaGraph_t wg, const hr_sp_lean *lean, cudaStream_t st, cudaGraphConditionalHandle h)
{
    const int U = lean->U, step = U <= 16 ? 1 : (U + 7) / 8, ncase = (U + step - 1) / step,
              umin = lean->variable;
    cudaGraphConditionalHandle hs = 0;
    if (cudaGraphConditionalHandleCreate(&hs, g, (unsigned)(ncase - 1), cudaGraphCondAssignDefault) !=
        cudaSuccess)
        return 0;
    cudaGraphNode_t node;
    cudaGraph_t *cases = add_conditional(wg, hs, cudaGraphCondTypeSwitch, (unsigned)ncase, &node);
    if (!cases) return 0;
    for (int c = 0; c < ncase; c++) {
        int u = (c + 1) * step < U ? (c + 1) * step : U;
        u = u > umin ? u : umin;
        if (cudaStreamBeginCaptureToGraph(st, cases[c], NULL, NULL, 0, cudaStreamCaptureModeThreadLocal) !=
            cudaSuccess)
            return 0;
        const hr_status bs = body_and_end(r, R, L, NULL, ctx, st, h, 1, lean, u, hs, step);
        cudaGraph_t out = NULL;
        if (cudaStreamEndCapture(st, &out) != cudaSuccess || bs != HR_OK) return 0;
    }
    return 1;
}

/* The WHILE graph around the body (lean: and after it the copy of the iterate the loop
 * ended on; *copy_live 1 where that node could not be added: hri_sp_loop_run then
 * launches it after the graph); NULL when the runtime refuses any step. */
static cudaGraphExec_t build_while_once(hr_sparse_run *r, hr_sp_resid *R, const hr_sp_loop *L,
                                        hr_sp_body_fn body, void *ctx, const hr_sp_lean *lean,
                                        cudaStream_t st, int *copy_live)
{
    *copy_live = 0;
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    cudaGraphConditionalHandle h = 0;
    int ok = cudaGraphCreate(&g, 0) == cudaSuccess &&
             cudaGraphConditionalHandleCreate(&h, g, 1u, cudaGraphCondAssignDefault) == cudaSuccess;
    cudaGraphNode_t node;
    cudaGraph_t *wbody = ok ? add_conditional(g, h, cudaGraphCondTypeWhile, 1u, &node) : NULL;
    ok = wbody != NULL;
    if (ok && lean && lean->variable) { /* the body: a SWITCH over the lengths */
        ok = add_switch(r, R, L, ctx, g, wbody[0], lean, st, h);
    } else if (ok && cudaStreamBeginCaptureToGraph(st, wbody[0], NULL, NULL, 0,
                                                   cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
        const hr_status bs = body_and_end(r, R, L, body, ctx, st, h, 1, lean);
        cudaGraph_t out = NULL;
        ok = cudaStreamEndCapture(st, &out) == cudaSuccess && bs == HR_OK;
    } else {
        ok = 0;
    }
    /* lean: the copy node, after the WHILE node in the outer graph (once a call) */
    if (ok && lean && lean->n > 0) {
        if (cudaStreamBeginCaptureToGraph(st, g, &node, NULL, 1, cudaStreamCaptureModeThreadLocal) ==
            cudaSuccess) {
            const cudaError_t le = lean_copy(R, lean, st);
            cudaGraph_t out = NULL;
            ok = cudaStreamEndCapture(st, &out) == cudaSuccess && le == cudaSuccess;
        } else {
            (void)cudaGetLastError();
            *copy_live = 1;
        }
    }
    ok = ok && cudaGraphInstantiate(&exec, g, 0) == cudaSuccess;
    if (ok && cudaGraphUpload(exec, st) != cudaSuccess)
        (void)cudaGetLastError(); /* uploads on first launch */
    if (!ok && exec) cudaGraphExecDestroy(exec), exec = NULL;
    if (g) cudaGraphDestroy(g);
    (void)cudaGetLastError();
    r->err[0] = '\0';
    return exec;
}

/* build_while_once; variable lean bodies the runtime refuses (the SWITCH node, nested)
 * fall back to bodies of the full length, *variable 0. */
static cudaGraphExec_t build_while(hr_sparse_run *r, hr_sp_resid *R, const hr_sp_loop *L, hr_sp_body_fn body,
                                   void *ctx, const hr_sp_lean *lean, cudaStream_t st, int *copy_live,
                                   int *variable)
{
    *variable = 0;
    if (lean && lean->variable) {
        cudaGraphExec_t e = build_while_once(r, R, L, body, ctx, lean, st, copy_live);
        if (e) return *variable = lean->variable, e;
    }
    hr_sp_lean fixed;
    if (lean) fixed = *lean, fixed.variable = 0;
    return build_while_once(r, R, L, body, ctx, lean ? &fixed : NULL, st, copy_live);
}

hr_status hri_sp_loop_build(hr_sparse_run *r, hr_sp_resid *R, hr_sp_loop *L, int U, int lag, int allow_while,
                           hr_sp_body_fn body, void *ctx, const hr_sp_lean *lean, cudaStream_t st)
{
    memset(L, 0, sizeof *L);
    L->U = U;
    L->lag = lag;
    L->ctx = ctx;
    HR_SPCU(r, cudaSetDevice(R->dev));
    cudaGraph_t g = NULL;
    int ok = cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    if (ok) {
        const hr_status bs = body_and_end(r, R, L, body, ctx, st, 0, 0, NULL);
        ok = cudaStreamEndCapture(st, &g) == cudaSuccess && bs == HR_OK;
    }
    ok = ok && cudaGraphInstantiate(&L->body, g, 0) == cudaSuccess;
    ok = ok && cudaGraphUpload(L->body, st) == cudaSuccess;
    if (g) cudaGraphDestroy(g);
    if (!ok) { /* refused: the caller checks on the host */
        if (L->body) cudaGraphExecDestroy(L->body);
        L->body = NULL;
        (void)cudaGetLastError();
        r->err[0] = '\0';
        return HR_OK;
    }
    if (allow_while) {
        int copy_live = 0, variable = 0;
        L->loop = build_while(r, R, L, body, ctx, lean, st, &copy_live, &variable);
        if (L->loop && lean) L->lean = 1 + copy_live, L->lean_def = *lean, L->lean_def.variable = variable;
    }
    HR_SPCU(r, cudaStreamSynchronize(st));
    return HR_OK;
}

hr_status hri_sp_loop_add_long(hr_sparse_run *r, hr_sp_resid *R, hr_sp_loop *L, const hr_sp_lean *lean,
                              long switch_at, cudaStream_t st)
{
    if (!L->loop || !L->lean || lean->U <= L->lean_def.U || R->bcap < lean->U) return HR_OK;
    HR_SPCU(r, cudaSetDevice(R->dev));
    int copy_live = 0, variable = 0;
    L->loop_long = build_while(r, R, L, lean->body, L->ctx, lean, st, &copy_live, &variable);
    if (L->loop_long)
        L->long_lean = 1 + copy_live, L->long_def = *lean, L->long_def.variable = variable,
        L->switch_at = switch_at;
    HR_SPCU(r, cudaStreamSynchronize(st));
    return HR_OK;
}

/* One launch of the loop's WHILE graph (the long one with use_long) for iterations
 * (from, to]: sets the range on the device, launches, and the lean copy where it runs
 * live. *launched 0: refused at launch (nothing enqueued; the graph is dropped). */
static hr_status launch_while(hr_sparse_run *r, hr_sp_resid *R, hr_sp_loop *L, int use_long, long from,
                              long to, cudaStream_t st, int *launched)
{
    /* pinned: the last fetch is done (the host waited for it); base and target are adjacent */
    R->h_range[0] = (long long)from;
    R->h_range[1] = (long long)to;
    HR_SPCU(r,
            cudaMemcpyAsync(&R->d_ctl->base, R->h_range, 2 * sizeof(long long), cudaMemcpyHostToDevice, st));
    cudaGraphExec_t *g = use_long ? &L->loop_long : &L->loop;
    *launched = cudaGraphLaunch(*g, st) == cudaSuccess;
    if (!*launched) {
        (void)cudaGetLastError();
        cudaGraphExecDestroy(*g);
        *g = NULL;
        return HR_OK;
    }
    r->prof.launches++;
    if ((use_long ? L->long_lean : L->lean) == 2)
        HR_SPCU(r, lean_copy(R, use_long ? &L->long_def : &L->lean_def, st));
    return HR_OK;
}

/* Body replays for iterations (from, end] after the WHILE graph was refused at launch:
 * from now on for good, and the driver caps the calls of later solves (device_checks 1). */
static hr_status replay_from(hr_sparse_run *r, hr_sp_resid *R, hr_sp_loop *L, long from, long end,
                             cudaStream_t st)
{
    hr_sparse_prof *P = &r->prof;
    if (L->loop_long) cudaGraphExecDestroy(L->loop_long), L->loop_long = NULL;
    if (L->loop) cudaGraphExecDestroy(L->loop), L->loop = NULL;
    r->device_checks = 1;
    P->mode = R->batch ? "body-replay/batched" : "body-replay";
    P->body = L->U;
    if (L->lean && L->lean_def.to_replay) { /* the iterate at `from` to where the replays read it */
        const long done = r->done;
        r->done = from;
        const hr_status ts = L->lean_def.to_replay(r, L->ctx, L->U, st);
        r->done = done;
        HR_TRY(ts);
    }
    L->lean = 0;
    R->h_range[0] = (long long)from;
    R->h_range[1] = (long long)end;
    HR_SPCU(r,
            cudaMemcpyAsync(&R->d_ctl->base, R->h_range, 2 * sizeof(long long), cudaMemcpyHostToDevice, st));
    const long bodies = (end - from + L->lag + L->U - 1) / L->U;
    for (long n = bodies; n > 0; n--)
        HR_SPCU(r, cudaGraphLaunch(L->body, st));
    P->launches += bodies;
    return HR_OK;
}

hr_status hri_sp_loop_run(hr_sparse_run *r, hr_sp_resid *R, hr_sp_loop *L, long count, cudaStream_t st)
{
    hr_sparse_prof *P = &r->prof;
    const double t0 = P->on ? hr_now() : 0.0;
    HR_SPCU(r, cudaSetDevice(R->dev));
    if (P->on) HR_SPCU(r, cudaEventRecord(R->ev[0], st));
    const long done = r->done, end = done + count;
    long from = done; /* where the part still to run starts */
    int launched = 0, stopped = 0;
    if (L->loop && L->lean && L->loop_long && end > L->switch_at) {
        if (done < L->switch_at) { /* the short body up to switch_at, then one host wait */
            HR_TRY(launch_while(r, R, L, 0, done, L->switch_at, st, &launched));
            if (launched) {
                HR_TRY(hri_sp_ctl_fetch(r, R, st));
                stopped = r->checked_stop || r->checked_done != L->switch_at;
                from = L->switch_at;
            }
        }
        if (!stopped && (launched || done >= L->switch_at)) {
            HR_TRY(launch_while(r, R, L, 1, from, end, st, &launched));
            if (!launched) HR_TRY(launch_while(r, R, L, 0, from, end, st, &launched)); /* long refused */
        }
    } else if (L->loop) {
        HR_TRY(launch_while(r, R, L, 0, done, end, st, &launched));
    }
    if (!launched && !stopped) HR_TRY(replay_from(r, R, L, from, end, st));
    if (P->on) HR_SPCU(r, cudaEventRecord(R->ev[1], st));
    if (R->d_hist) { /* the call's monitor points, (done, done + count], in one or two pieces */
        const long first = done / R->mon_every + 1, last = end / R->mon_every;
        for (long e = first; e <= last;) {
            const long at = e % R->ring, len = (last - e + 1 < R->ring - at) ? last - e + 1 : R->ring - at;
            HR_SPCU(r, cudaMemcpyAsync(R->h_hist + at, R->d_hist + at, (size_t)len * sizeof(double),
                                       cudaMemcpyDeviceToHost, st));
            e += len;
        }
    }
    if (P->on) P->t_enqueue += hr_now() - t0;
    HR_TRY(hri_sp_ctl_fetch(r, R, st));
    if (P->on) {
        float ms = 0.0f;
        HR_SPCU(r, cudaEventElapsedTime(&ms, R->ev[0], R->ev[1]));
        P->t_device += 1e-3 * ms;
    }
    return HR_OK;
}

void hri_sp_loop_free(hr_sp_loop *L)
{
    if (L->body) cudaGraphExecDestroy(L->body);
    if (L->loop) cudaGraphExecDestroy(L->loop);
    if (L->loop_long) cudaGraphExecDestroy(L->loop_long);
    memset(L, 0, sizeof *L);
}

int hri_sp_loop_wanted(const hr_sparse_run *r)
{
    return r->o.tol > 0.0 && r->o.check_every == 1 && hr_tune_on(r->o.tuning.sparse_device_checks, 1);
}

int hri_sp_while_wanted(const hr_sparse_run *r)
{
    return hr_tune_on(r->o.tuning.sparse_while, 1);
}

/* Calls end at monitors (unless deferred): a body as long as the monitor interval (or a
 * divisor of it) makes every call whole bodies, so no kernel is launched in vain before
 * the host sees the monitor's residual. Otherwise 16: a body costs a few kernel
 * latencies of its own (its end, the WHILE node, the last check's drain), and up to
 * U - 1 gated iterations are launched in vain after a stop. */
int hri_sp_loop_body_len(const hr_sparse_run *r)
{
    if (r->o.tuning.sparse_body > 0) return r->o.tuning.sparse_body;
    const long m = r->o.monitor_deferred && r->o.monitor ? 0 : r->o.monitor_every; /* the driver's cuts */
    if (m > 0 && m <= 16) return (int)m;
    for (int d = 16; m > 16 && d >= 4; d--)
        if (m % d == 0) return d;
    return 16;
}

/* Long bodies pay once a solve is long: per body, the check's drain, the body's end and
 * the WHILE repeat cost ~10 us (H100, run 8: laplace2d:100 at 10 000 iterations, bodies
 * of 64 at 1.13-1.21x the driver against 1.33-1.71x with 16), while a stop wastes up to
 * U - 1 iterations (trefethen:20000 async, 26 iterations: 2.61x with 64). Solves shorter
 * than switch_at never see the long body. */
int hri_sp_loop_body_long(const hr_sparse_run *r, long *switch_at)
{
    const hr_tuning *t = &r->o.tuning;
    *switch_at = t->sparse_body_switch > 0 ? t->sparse_body_switch : 256;
    const int len = hr_tune_count(t->sparse_body_long, 64);
    if (len == 0 || t->sparse_body > 0) return 0;
    const long m = r->o.monitor_deferred && r->o.monitor ? 0 : r->o.monitor_every; /* the driver's cuts */
    if (m > 0 && m % len != 0) return 0;
    return len > hri_sp_loop_body_len(r) ? len : 0;
}
