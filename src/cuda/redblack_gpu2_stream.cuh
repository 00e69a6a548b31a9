/*
 * rb-2gpu's streaming scheme (the default; included by redblack_gpu2.cu after hr_gpu_rb2):
 * each half runs rb-tuned's out-of-place pass (redblack_stream.cuh, grid A -> grid B) and
 * keeps TWO ghost rows of the other half's OLD iterate. A point's new value depends only on
 * old values within distance 2, so one iteration (both colours) of the half's own rows needs
 * nothing from the other GPU in between: the first ghost row's colour 0 is recomputed
 * redundantly (communication avoiding), once per iteration, not once per colour.
 *
 * Rows (m = the last row of GPU 0, odd, so both local frames keep the global row parity
 * that rb_stream's compile-time colour pattern needs):
 *   GPU 0: local = global, rows 0..m+2 (m+1, m+2: ghosts);
 *   GPU 1: local r = global r + m - 1, rows 0..ny-m+2 (0, 1: ghosts; 2 = global m+1).
 * Each half is swept as two parts: S, the 2+ rows next to the other GPU (the rows the
 * other half needs), and I, the rest. A part is one rb_stream launch on a row-shifted view
 * (an even shift), updating one extra row beyond each cut for its neighbours and storing
 * only its own rows (WIN), so the two parts write disjoint rows of B and both read only A.
 *
 * Per iteration t and GPU d (two streams; events alternate by t's parity):
 *   high: wait I(t-1) [it read the rows S(t) writes] | S(t) | record |
 *         wait the other GPU's S(t) | copy of its 2 rows into d's ghost rows of B
 *         (a peer memcpy; with graphs a kernel reading the other GPU's memory);
 *   low:  wait S(t-1) [I(t) reads them] | I(t) | record.
 * So I runs back to back and S, the copies and the cross-GPU waits run beside it; no host
 * wait per iteration. The copy into d's ghosts of B follows d's S(t-1) (the last reader of
 * those rows) on the same stream, and d's S(t+1) reads them after it on that stream. The
 * rows the copy reads are rewritten by the other GPU's S(t+2), which follows its own copy
 * of iteration t+1, which waited for d's S(t+1), which follows this copy. Events alternate
 * by parity so that a wait on iteration t-1 is not taken for iteration t.
 * bench/mgpu_rb2_model.py checks the index logic against the sequential sweep and every
 * pair of conflicting operations for an ordering by these streams and events;
 * bench/mgpu_rb2_emu.cpp runs this file's code with the kernel under the warp emulation.
 */

/* Correct rows [a, z] (local) of half d from grid `in` into grid `out`. */
template <typename T>
static cudaError_t rb2s_part(const hr_gpu_rb2 *G, int d, const T *in, T *out, const T *hf, int a, int z,
                             cudaStream_t st)
{
    const hr_gpu_rb_params &p = G->p;
    const int ioff = G->ioff[d];
    int u0 = a + ioff == 1 ? a : a - 1; /* update one row beyond a cut for the neighbour */
    const int u1 = z + ioff == p.ny ? z : z + 1;
    if (!(u0 & 1)) u0--; /* strips start at odd rows: an even shift */
    const int shift = u0 - 1;
    const size_t off = (size_t)shift * p.pitch;
    rb_geo g;
    g.p = p.pitch;
    g.q = p.plane;
    g.dim = 2;
    g.nx = p.nx;
    g.ny = u1 - shift;
    g.nz = 1;
    g.si = p.hf_host || p.spike_i < 0 ? -1 : p.spike_i - ioff - shift;
    g.sj = p.spike_j;
    g.sk = 0;
    g.weighted = p.omega != 1.0;
    const T c0 = (T)(1.0 - p.omega), c1 = (T)p.omega;
    const T *hfs = hf ? hf + off : NULL;
    return g.weighted ? rb_stream_launch_rows<T, true>(in + off, out + off, hfs, g, G->bx, G->by, G->h, c0,
                                                       c1, st, a - shift, z - shift)
                      : rb_stream_launch_rows<T, false>(in + off, out + off, hfs, g, G->bx, G->by, G->h, c0,
                                                        c1, st, a - shift, z - shift);
}

/* One streaming iteration on both halves (see the file comment). */
template <typename T> static cudaError_t rb2s_iteration(hr_gpu_rb2 *G)
{
    const hr_gpu_rb_params &p = G->p;
    const int par = G->parity, prev = par ^ 1;
    const size_t pitch_b = p.pitch * p.esize;
    cudaError_t e;
    const T *in[2];
    T *out[2];
    const T *hf[2];
    for (int d = 0; d < 2; d++) {
        in[d] = (const T *)G->d_g[d][G->cur] + p.offset;
        out[d] = (T *)G->d_g[d][G->cur ^ 1] + p.offset;
        hf[d] = G->d_hf[d] ? (const T *)G->d_hf[d] + p.offset : NULL;
    }
    /* low: the bulk after the last iteration's S (I reads the rows S wrote) */
    for (int d = 0; d < 2; d++) {
        if (G->ia[d] > G->iz[d]) continue;
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        if ((e = cudaStreamWaitEvent(G->low[d], G->ev_s[d][prev], 0)) != cudaSuccess) return e;
        if ((e = rb2s_part<T>(G, d, in[d], out[d], hf[d], G->ia[d], G->iz[d], G->low[d])) != cudaSuccess)
            return e;
        if ((e = cudaEventRecord(G->ev_i[d][par], G->low[d])) != cudaSuccess) return e;
    }
    /* high: S after the last iteration's I (it read the rows S writes) */
    for (int d = 0; d < 2; d++) {
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        if ((e = cudaStreamWaitEvent(G->st[d], G->ev_i[d][prev], 0)) != cudaSuccess) return e;
        if ((e = rb2s_part<T>(G, d, in[d], out[d], hf[d], G->sa[d], G->sz[d], G->st[d])) != cudaSuccess)
            return e;
        if ((e = cudaEventRecord(G->ev_s[d][par], G->st[d])) != cudaSuccess) return e;
    }
    /* high: the other half's 2 new rows into this half's ghost rows of B */
    for (int d = 0; d < 2; d++) {
        const int o = 1 - d;
        /* GPU 0's ghosts: local m+1, m+2 = GPU 1's local 2, 3; GPU 1's: local 0, 1 = GPU 0's m-1, m */
        const int m = G->m, dst_row = d == 0 ? m + 1 : 0, src_row = d == 0 ? 2 : m - 1;
        char *dst = (char *)out[d] + (size_t)dst_row * pitch_b;
        const char *src = (const char *)out[o] + (size_t)src_row * pitch_b;
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        if ((e = cudaStreamWaitEvent(G->st[d], G->ev_s[o][par], 0)) != cudaSuccess) return e;
        if ((e = rb2_copy_rows(G, d, dst, src, 2 * pitch_b, G->st[d])) != cudaSuccess) return e;
    }
    G->cur ^= 1;
    G->parity = par ^ 1;
    return cudaSuccess;
}

/* The halves, their local frames and the split into S and I (local rows), set at create
 * (G->p and G->srows set). */
static void rb2s_layout(hr_gpu_rb2 *G)
{
    const int ny = G->p.ny, srows = G->srows;
    /* GPU 0's last row m odd: GPU 1's frame starts at global m - 1, an even shift */
    const int m = G->m = (ny / 2) | 1;
    G->lo[0] = 1;
    G->hi[0] = m;
    G->lo[1] = m + 1;
    G->hi[1] = ny;
    G->ioff[0] = 0;
    G->nrows[0] = m + 3;
    G->ioff[1] = m - 1;
    G->nrows[1] = ny - m + 3;
    /* GPU 0: own rows 1..m; S = the last srows (at least the 2 GPU 1 needs), I reads up to
     * its last row + 2, which must stay out of the ghosts: at least 2 rows of S */
    G->sz[0] = m;
    G->sa[0] = m - srows + 1 < 1 ? 1 : m - srows + 1;
    G->ia[0] = 1;
    G->iz[0] = G->sa[0] - 1;
    /* GPU 1: own rows local 2..ny-m+1; S the first srows */
    const int last = ny - m + 1;
    G->sa[1] = 2;
    G->sz[1] = 2 + srows - 1 > last ? last : 2 + srows - 1;
    G->ia[1] = G->sz[1] + 1;
    G->iz[1] = last;
}

/* HETRELAX_RB2_GRAPH=K (even): K iterations of both GPUs captured into one CUDA graph (a
 * multi-device graph: st[0] forks to the other three streams through an event and joins them
 * at the end), one per starting grid, captured at create so that sweeps only launch them. A
 * graph launch is a barrier (the pipeline drains every K iterations), but the host makes
 * one call per K iterations instead of about 20 per iteration. */
static cudaError_t rb2s_capture(hr_gpu_rb2 *G, int k, cudaGraphExec_t *out)
{
    const int cur = G->cur, parity = G->parity;
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaSetDevice(G->dev[0]);
    if (e != cudaSuccess) return e;
    if ((e = cudaStreamBeginCapture(G->st[0], cudaStreamCaptureModeRelaxed)) != cudaSuccess) return e;
    cudaStream_t *other[3] = {&G->low[0], &G->st[1], &G->low[1]};
    cudaEvent_t join[3] = {G->join[0], G->join[1], G->join[2]};
    e = cudaEventRecord(G->fork, G->st[0]);
    for (int x = 0; x < 3 && e == cudaSuccess; x++) {
        e = cudaSetDevice(G->dev[x == 0 ? 0 : 1]);
        if (e == cudaSuccess) e = cudaStreamWaitEvent(*other[x], G->fork, 0);
    }
    /* the first iteration's waits: on events recorded inside the capture */
    for (int d = 0; d < 2 && e == cudaSuccess; d++) {
        e = cudaSetDevice(G->dev[d]);
        for (int q = 0; q < 2 && e == cudaSuccess; q++) {
            e = cudaEventRecord(G->ev_s[d][q], G->st[d]);
            if (e == cudaSuccess) e = cudaEventRecord(G->ev_i[d][q], G->low[d]);
        }
    }
    for (int t = 0; t < k && e == cudaSuccess; t++)
        e = G->p.esize == 8 ? rb2s_iteration<double>(G) : rb2s_iteration<float>(G);
    for (int x = 0; x < 3 && e == cudaSuccess; x++) {
        e = cudaSetDevice(G->dev[x == 0 ? 0 : 1]);
        if (e == cudaSuccess) e = cudaEventRecord(join[x], *other[x]);
    }
    if (e == cudaSuccess) e = cudaSetDevice(G->dev[0]);
    for (int x = 0; x < 3 && e == cudaSuccess; x++)
        e = cudaStreamWaitEvent(G->st[0], join[x], 0);
    cudaSetDevice(G->dev[0]);
    const cudaError_t end = cudaStreamEndCapture(G->st[0], &graph); /* always: leaves st[0] usable */
    G->cur = cur;
    G->parity = parity;
    if (e == cudaSuccess) e = end;
    /* the kernels keep their streams' priorities (S high, I low) inside the graph */
    if (e == cudaSuccess) e = cudaGraphInstantiate(out, graph, cudaGraphInstantiateFlagUseNodePriority);
    if (graph) cudaGraphDestroy(graph);
    return e;
}

/* Runs K iterations by one graph launch (after every stream's earlier work) and orders the
 * streams' later work after it. */
static cudaError_t rb2s_launch_graph(hr_gpu_rb2 *G)
{
    cudaError_t e;
    cudaStream_t *other[3] = {&G->low[0], &G->st[1], &G->low[1]};
    cudaEvent_t join[3] = {G->join[0], G->join[1], G->join[2]};
    for (int x = 0; x < 3; x++) {
        if ((e = cudaSetDevice(G->dev[x == 0 ? 0 : 1])) != cudaSuccess) return e;
        if ((e = cudaEventRecord(join[x], *other[x])) != cudaSuccess) return e;
    }
    if ((e = cudaSetDevice(G->dev[0])) != cudaSuccess) return e;
    for (int x = 0; x < 3; x++)
        if ((e = cudaStreamWaitEvent(G->st[0], join[x], 0)) != cudaSuccess) return e;
    if ((e = cudaGraphLaunch(G->graph[G->cur], G->st[0])) != cudaSuccess) return e;
    if ((e = cudaEventRecord(G->fork, G->st[0])) != cudaSuccess) return e;
    for (int x = 0; x < 3; x++) {
        if ((e = cudaSetDevice(G->dev[x == 0 ? 0 : 1])) != cudaSuccess) return e;
        if ((e = cudaStreamWaitEvent(*other[x], G->fork, 0)) != cudaSuccess) return e;
    }
    return cudaSuccess;
}
