/*
 * rb-mgpu's streaming scheme (the default; included by redblack_gpu2.cu after hr_gpu_rb2):
 * the rows are cut into G slabs, one per GPU; each slab runs rb-tuned's out-of-place pass
 * (redblack_stream.cuh, grid A -> grid B) and keeps TWO ghost rows of each neighbour's OLD
 * iterate. A point's new value depends only on old values within distance 2, so one
 * iteration (both colours) of the slab's own rows needs nothing from another GPU in
 * between: the first ghost row's colour 0 is recomputed redundantly (communication
 * avoiding), once per iteration, not once per colour.
 *
 * Rows: slab d owns global rows [lo, hi]; every cut hi (but the last slab's ny) is odd, so
 * each local frame starts at an even global row and keeps the global row parity that
 * rb_stream's compile-time colour pattern needs:
 *   slab 0: local = global, rows 0..hi+2 (hi+1, hi+2: ghosts);
 *   slab d > 0: local r = global r + lo - 2 (0, 1: ghosts; 2 = global lo), down to hi+2
 *   (ghosts) or, the last slab, to ny+1 (the boundary row).
 * A slab's ghost rows are its neighbour's own rows or a boundary row (slab 0 and the last
 * slab may own a single row, the others own an even count, so at least 2).
 * Each slab is swept as parts: S, the srows (2+) rows next to each neighbour (the rows the
 * neighbour needs; one part when the two meet), and I, the rest. A part is one rb_stream
 * launch on a row-shifted view (an even shift), updating one extra row beyond each cut for
 * its neighbours and storing only its own rows (WIN), so the parts write disjoint rows of
 * B and all read only A. I reads up to 2 rows beyond its cuts: S's 2+ rows keep it off the
 * ghost rows.
 *
 * Per iteration t and slab d (two streams; events alternate by t's parity):
 *   high: wait I(t-1) [it read the rows S(t) writes] | S(t) | record |
 *         per neighbour o: wait o's S(t) | copy of o's 2 rows into d's ghost rows of B
 *         (a peer memcpy; with graphs a kernel reading o's memory);
 *   low:  wait S(t-1) [I(t) reads them] | I(t) | record.
 * So I runs back to back and S, the copies and the cross-GPU waits run beside it; no host
 * wait per iteration. A copy into d's ghosts of B follows d's S(t-1) (the last reader of
 * those rows) on the same stream, and d's S(t+1) reads them after it on that stream. The
 * rows a copy reads are rewritten by o's S(t+2), which follows o's own copy from d of
 * iteration t+1, which waited for d's S(t+1), which follows this copy. Events alternate by
 * parity so that a wait on iteration t-1 is not taken for iteration t.
 * bench/experiments/mgpu_rb2_model.py checks the index logic against the sequential sweep and every
 * pair of conflicting operations for an ordering by these streams and events;
 * bench/drivers/mgpu_rb2_emu.cpp runs this file's code with the kernel under the warp emulation.
 */

/* Correct rows [a, z] (local) of slab d from grid `in` into grid `out`. */
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

/* One streaming iteration on every slab (see the file comment). */
template <typename T> static cudaError_t rb2s_iteration(hr_gpu_rb2 *G)
{
    const hr_gpu_rb_params &p = G->p;
    const int par = G->parity, prev = par ^ 1, ng = G->ng;
    const size_t pitch_b = p.pitch * p.esize;
    cudaError_t e;
    const T *in[RB2_MAX];
    T *out[RB2_MAX];
    const T *hf[RB2_MAX];
    for (int d = 0; d < ng; d++) {
        in[d] = (const T *)G->d_g[d][G->cur] + p.offset;
        out[d] = (T *)G->d_g[d][G->cur ^ 1] + p.offset;
        hf[d] = G->d_hf[d] ? (const T *)G->d_hf[d] + p.offset : NULL;
    }
    /* low: the bulk after the last iteration's S (I reads the rows S wrote) */
    for (int d = 0; d < ng; d++) {
        if (G->ia[d] > G->iz[d]) continue;
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        if ((e = cudaStreamWaitEvent(G->low[d], G->ev_s[d][prev], 0)) != cudaSuccess) return e;
        if ((e = rb2s_part<T>(G, d, in[d], out[d], hf[d], G->ia[d], G->iz[d], G->low[d])) != cudaSuccess)
            return e;
        if ((e = cudaEventRecord(G->ev_i[d][par], G->low[d])) != cudaSuccess) return e;
    }
    /* high: S after the last iteration's I (it read the rows S writes) */
    for (int d = 0; d < ng; d++) {
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        if ((e = cudaStreamWaitEvent(G->st[d], G->ev_i[d][prev], 0)) != cudaSuccess) return e;
        for (int k = 0; k < G->ns[d]; k++)
            if ((e = rb2s_part<T>(G, d, in[d], out[d], hf[d], G->sa[d][k], G->sz[d][k], G->st[d])) !=
                cudaSuccess)
                return e;
        if ((e = cudaEventRecord(G->ev_s[d][par], G->st[d])) != cudaSuccess) return e;
    }
    /* high: each neighbour's 2 new rows next to the cut into this slab's ghost rows of B */
    for (int d = 0; d < ng; d++) {
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        for (int side = 0; side < 2; side++) {
            const int o = side ? d + 1 : d - 1;
            if (o < 0 || o >= ng) continue;
            /* global rows lo-2, lo-1 (above) or hi+1, hi+2 (below), in both frames */
            const int row = side ? G->hi[d] + 1 : G->lo[d] - 2;
            char *dst = (char *)out[d] + (size_t)(row - G->ioff[d]) * pitch_b;
            const char *src = (const char *)out[o] + (size_t)(row - G->ioff[o]) * pitch_b;
            if ((e = cudaStreamWaitEvent(G->st[d], G->ev_s[o][par], 0)) != cudaSuccess) return e;
            if ((e = rb2_copy_rows(G, d, o, dst, src, 2 * pitch_b, G->st[d])) != cudaSuccess) return e;
        }
    }
    G->cur ^= 1;
    G->parity = par ^ 1;
    return cudaSuccess;
}

/* Slab d's last interior row: the odd row nearest (d + 1) ny / ng (ties: the lower), kept
 * at least 1 row after the previous cut (2 for interior slabs: their counts are even) and
 * leaving the slabs after it their rows. */
static int rb2s_cut(int ny, int ng, int d, int prev)
{
    const long num = (long)(d + 1) * ny;
    int k = (int)(num / ng);
    if (!(k & 1)) k--;
    if ((long)(2 * k + 2) * ng < 2 * num) k += 2; /* k + 2 is nearer */
    const int lb = d == 0 ? 1 : prev + 2;
    const int ub = ((ny - 1) & 1 ? ny - 1 : ny - 2) - 2 * (ng - 2 - d); /* odd */
    return k < lb ? lb : k > ub ? ub : k;
}

/* The slabs, their local frames and the split into S and I (local rows), set at create
 * (G->p, G->ng and G->srows set). 0, or -1 when ny < 2 ng - 2 (too few rows to cut). */
static int rb2s_layout(hr_gpu_rb2 *G)
{
    const int ny = G->p.ny, ng = G->ng, srows = G->srows;
    if (ng < 2 || ng > RB2_MAX || ny < 2 * ng - 2) return -1;
    for (int d = 0; d < ng; d++) {
        G->lo[d] = d == 0 ? 1 : G->hi[d - 1] + 1;
        G->hi[d] = d == ng - 1 ? ny : rb2s_cut(ny, ng, d, d == 0 ? 0 : G->hi[d - 1]);
        G->ioff[d] = d == 0 ? 0 : G->lo[d] - 2;
        /* down to the ghost rows hi+1, hi+2, or the boundary row ny+1 */
        G->nrows[d] = (d == ng - 1 ? ny + 1 : G->hi[d] + 2) - G->ioff[d] + 1;
        /* own local rows [a, z]; S: srows next to each neighbour (at least the 2 it needs; I
         * reads up to 2 rows beyond its cuts, which must stay off the ghost rows) */
        const int a = G->lo[d] - G->ioff[d], z = G->hi[d] - G->ioff[d];
        int ta = a, tz = a - 1, ba = z + 1, bz = z; /* S next to the slab above / below */
        if (d > 0) tz = a + srows - 1 > z ? z : a + srows - 1;
        if (d < ng - 1) ba = z - srows + 1 < a ? a : z - srows + 1;
        G->ns[d] = 0;
        if (d > 0 && d < ng - 1 && tz + 1 >= ba) { /* they meet: one part, no I */
            G->sa[d][0] = a;
            G->sz[d][0] = z;
            G->ns[d] = 1;
            G->ia[d] = z + 1;
            G->iz[d] = z;
            continue;
        }
        if (d > 0) {
            G->sa[d][G->ns[d]] = ta;
            G->sz[d][G->ns[d]++] = tz;
        }
        if (d < ng - 1) {
            G->sa[d][G->ns[d]] = ba;
            G->sz[d][G->ns[d]++] = bz;
        }
        G->ia[d] = tz + 1;
        G->iz[d] = ba - 1;
    }
    return 0;
}

/* Stream x of the graph's fork and join (0 .. 2 ng - 2: low[0], st[1], low[1], st[2], ...)
 * and its device. */
static cudaStream_t *rb2s_stream(hr_gpu_rb2 *G, int x, int *dev)
{
    const int d = (x + 1) / 2;
    *dev = G->dev[d];
    return x & 1 ? &G->st[d] : &G->low[d];
}

/* tuning.rb2_graph K (even): K iterations of every GPU captured into one CUDA graph (a
 * multi-device graph: st[0] forks to the other streams through an event and joins them at
 * the end), one per starting grid, captured at create so that sweeps only launch them. A
 * graph launch is a barrier (the pipeline drains every K iterations), but the host makes
 * one call per K iterations instead of about a dozen per iteration and GPU. */
static cudaError_t rb2s_capture(hr_gpu_rb2 *G, int k, cudaGraphExec_t *out)
{
    const int cur = G->cur, parity = G->parity, nother = 2 * G->ng - 1;
    cudaGraph_t graph = NULL;
    int dev = 0;
    cudaError_t e = cudaSetDevice(G->dev[0]);
    if (e != cudaSuccess) return e;
    if ((e = cudaStreamBeginCapture(G->st[0], cudaStreamCaptureModeRelaxed)) != cudaSuccess) return e;
    e = cudaEventRecord(G->fork, G->st[0]);
    for (int x = 0; x < nother && e == cudaSuccess; x++) {
        cudaStream_t *s = rb2s_stream(G, x, &dev);
        e = cudaSetDevice(dev);
        if (e == cudaSuccess) e = cudaStreamWaitEvent(*s, G->fork, 0);
    }
    /* the first iteration's waits: on events recorded inside the capture */
    for (int d = 0; d < G->ng && e == cudaSuccess; d++) {
        e = cudaSetDevice(G->dev[d]);
        for (int q = 0; q < 2 && e == cudaSuccess; q++) {
            e = cudaEventRecord(G->ev_s[d][q], G->st[d]);
            if (e == cudaSuccess) e = cudaEventRecord(G->ev_i[d][q], G->low[d]);
        }
    }
    for (int t = 0; t < k && e == cudaSuccess; t++)
        e = G->p.esize == 8 ? rb2s_iteration<double>(G) : rb2s_iteration<float>(G);
    for (int x = 0; x < nother && e == cudaSuccess; x++) {
        cudaStream_t *s = rb2s_stream(G, x, &dev);
        e = cudaSetDevice(dev);
        if (e == cudaSuccess) e = cudaEventRecord(G->join[x], *s);
    }
    if (e == cudaSuccess) e = cudaSetDevice(G->dev[0]);
    for (int x = 0; x < nother && e == cudaSuccess; x++)
        e = cudaStreamWaitEvent(G->st[0], G->join[x], 0);
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
    const int nother = 2 * G->ng - 1;
    int dev = 0;
    cudaError_t e;
    for (int x = 0; x < nother; x++) {
        cudaStream_t *s = rb2s_stream(G, x, &dev);
        if ((e = cudaSetDevice(dev)) != cudaSuccess) return e;
        if ((e = cudaEventRecord(G->join[x], *s)) != cudaSuccess) return e;
    }
    if ((e = cudaSetDevice(G->dev[0])) != cudaSuccess) return e;
    for (int x = 0; x < nother; x++)
        if ((e = cudaStreamWaitEvent(G->st[0], G->join[x], 0)) != cudaSuccess) return e;
    if ((e = cudaGraphLaunch(G->graph[G->cur], G->st[0])) != cudaSuccess) return e;
    if ((e = cudaEventRecord(G->fork, G->st[0])) != cudaSuccess) return e;
    for (int x = 0; x < nother; x++) {
        cudaStream_t *s = rb2s_stream(G, x, &dev);
        if ((e = cudaSetDevice(dev)) != cudaSuccess) return e;
        if ((e = cudaStreamWaitEvent(*s, G->fork, 0)) != cudaSuccess) return e;
    }
    return cudaSuccess;
}

/* count streaming iterations: graph launches while K or more remain (K even: a graph ends
 * on the grid it started from, so graph[cur] stays right), then direct launches. */
static cudaError_t rb2s_run(hr_gpu_rb2 *G, long count)
{
    cudaError_t e;
    if (G->graph_k)
        for (; count >= G->graph_k; count -= G->graph_k)
            if ((e = rb2s_launch_graph(G)) != cudaSuccess) return e;
    for (long t = 0; t < count; t++)
        if ((e = G->p.esize == 8 ? rb2s_iteration<double>(G) : rb2s_iteration<float>(G)) != cudaSuccess)
            return e;
    return cudaSuccess;
}
