/*
 * rb-2gpu's two earlier schemes (included by redblack_gpu2.cu after hr_gpu_rb2), kept for
 * comparison: in place on one grid per half with one ghost row, the boundary row exchanged
 * after EACH colour. tuning.rb2_old on: fused; tuning.rb2_v1 on: v1.
 *
 * Fused (tuning.rb2_old on): each half runs the in-place `rb-inplace` scheme: a main pass
 * does colour 0 everywhere and colour 1 inside tiles of 2 BX columns x H rows (marching down
 * the columns, colour 1 of row i - 1 right after colour 0 of row i), then ring passes do
 * colour 1 on the tiles' first and last rows and columns. The strips are aligned so that the
 * strip next to the other GPU (the "boundary strip") has H rows and ends at the half's
 * boundary row B. Per iteration and GPU, on two streams:
 *   high priority: [after the last iteration's interior ring] main over the boundary strip |
 *     wait the other GPU's boundary strip, pull its row B (its colour 0 is final) into the
 *     ghost row | colour 1 of row B (reads the ghost's colour 0) | wait the other GPU's
 *     row B, pull it again (its colour 1 is final, before the next colour 0 reads it);
 *   low priority: main over the other strips | [after the boundary strip's main] the ring
 *     passes for every ring row but B, and the ring columns.
 * Pulls run on the receiving GPU's stream after an event of the sender (no host wait). A
 * pull may overlap the sender's next pass writing the other colour of row B: the receiver
 * reads only the colour that pass does not write, and the second pull replaces the whole
 * ghost row before the next main pass reads it (checked by bench/experiments/mgpu_rb2_model.py).
 * Tiles: BX = 128 threads, H = 64 (tuning.rb2_shape BX x 0 x H overrides in this scheme).
 *
 * v1: each colour phase is a v1 launch on both (one thread per point of the colour), then
 * the two boundary rows are exchanged.
 *
 * Stream order per phase: kernel(s0) | kernel(s1); s1 waits for GPU 0's kernel, copies
 * GPU 0's last row into GPU 1's upper ghost; s0 waits for GPU 1's kernel, copies GPU 1's
 * first row into GPU 0's lower ghost; each stream then waits for the other's copy, since
 * the next phase overwrites the row that copy reads.
 */

/* The fused passes over one half: local rows 1..g.ny; strip k is rows
 * [max(1, org + k H), min(org + (k + 1) H, g.ny + 1)); the colour of local (i, j) is
 * (i + j + flip) & 1 (flip: the parity of the half's row offset). */
__device__ __forceinline__ void rb2_strip(const rb_geo &g, int org, int H, int k, int *r0, int *r1)
{
    *r0 = max(1, org + k * H);
    *r1 = min(org + (k + 1) * H, g.ny + 1);
}

/* Main pass over strips k0 + blockIdx.y. */
template <typename T>
__global__ void rb2_main(T *u, const T *hf, rb_geo g, int H, int org, int k0, int flip, T c0, T c1)
{
    const int j0 = 1 + 2 * (int)(blockIdx.x * blockDim.x), j1 = min(j0 + 2 * (int)blockDim.x, g.nx + 1);
    int r0, r1;
    rb2_strip(g, org, H, k0 + (int)blockIdx.y, &r0, &r1);
    const int jp = j0 + 2 * (int)threadIdx.x; /* this thread's column pair */
    for (int i = r0; i < r1; i++) {
        const int ja = jp + ((i + jp + flip) & 1); /* colour 0 of row i */
        if (ja < j1) {
            const size_t x = (size_t)i * g.p + (size_t)ja;
            u[x] = rb_point<T, false>(u, hf, g, x, i, ja, 0, c0, c1);
        }
        /* colour 1 of row i - 1: its colour-0 neighbours are new (rows i - 2..i, this tile) */
        const int ib = i - 1, jb = jp + 1 - ((ib + jp + flip) & 1);
        if (ib > r0 && jb < j1 && jb != j0 && jb != j1 - 1) {
            const size_t x = (size_t)ib * g.p + (size_t)jb;
            u[x] = rb_point<T, false>(u, hf, g, x, ib, jb, 0, c0, c1);
        }
        __syncthreads();
    }
}

/* Colour 1 of every strip's first and last row but row `skip` (blockIdx.y: strip x 2). */
template <typename T>
__global__ void rb2_ring_rows(T *u, const T *hf, rb_geo g, int H, int org, int skip, int flip, T c0, T c1)
{
    const int last = (int)blockIdx.y % 2;
    int r0, r1;
    rb2_strip(g, org, H, (int)blockIdx.y / 2, &r0, &r1);
    const int i = last ? r1 - 1 : r0;
    if ((last && i == r0) || i == skip) return;
    const int j = 1 + ((i + flip) & 1) + 2 * (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (j > g.nx) return;
    const size_t x = (size_t)i * g.p + (size_t)j;
    u[x] = rb_point<T, false>(u, hf, g, x, i, j, 0, c0, c1);
}

/* Colour 1 of every tile's first and last column, rows other than the strips' ring rows. */
template <typename T>
__global__ void rb2_ring_cols(T *u, const T *hf, rb_geo g, int H, int tw, int org, int flip, T c0, T c1)
{
    const int tile = (int)blockIdx.y / 2, last = (int)blockIdx.y % 2;
    const int j0 = 1 + tile * tw, j1 = min(j0 + tw, g.nx + 1);
    const int j = last ? j1 - 1 : j0;
    const int i = 1 + (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if ((last && j == j0) || i > g.ny || ((i + j + flip) & 1) != 1) return;
    int r0, r1;
    rb2_strip(g, org, H, (i - org) / H, &r0, &r1);
    if (i == r0 || i == r1 - 1) return; /* ring rows: rb2_ring_rows, rb2_row */
    const size_t x = (size_t)i * g.p + (size_t)j;
    u[x] = rb_point<T, false>(u, hf, g, x, i, j, 0, c0, c1);
}

/* Colour 1 of row i (the boundary row). */
template <typename T> __global__ void rb2_row(T *u, const T *hf, rb_geo g, int i, int flip, T c0, T c1)
{
    const int j = 1 + ((i + flip) & 1) + 2 * (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (j > g.nx) return;
    const size_t x = (size_t)i * g.p + (size_t)j;
    u[x] = rb_point<T, false>(u, hf, g, x, i, j, 0, c0, c1);
}

static unsigned rb2_cdiv(long a, long b)
{
    return (unsigned)((a + b - 1) / b);
}

/* Half d's geometry (local rows, the spike in local rows). */
static rb_geo rb2_geo(const hr_gpu_rb2 *G, int d)
{
    const hr_gpu_rb_params &p = G->p;
    const int ioff = G->lo[d] - 1;
    rb_geo g;
    g.p = p.pitch;
    g.q = p.plane;
    g.dim = 2;
    g.nx = p.nx;
    g.ny = G->hi[d] - G->lo[d] + 1;
    g.nz = 1;
    g.si = p.hf_host || p.spike_i < 0 ? -1 : p.spike_i - ioff;
    g.sj = p.spike_j;
    g.sk = 0;
    g.weighted = p.omega != 1.0;
    return g;
}

/* Copies the other half's boundary row into half d's ghost row, on d's stream, after the
 * other half's event `after`. */
static cudaError_t rb2_pull(hr_gpu_rb2 *G, int d, cudaEvent_t after)
{
    const int o = 1 - d, m = G->hi[0];
    const size_t row_bytes = G->p.pitch * G->p.esize;
    /* GPU 0's ghost is local row m + 1 (GPU 1's local row 1); GPU 1's is local row 0
     * (GPU 0's local row m) */
    void *dst = rb2_row(G, G->d_g[d][0], d == 0 ? m + 1 : 0);
    const void *src = rb2_row(G, G->d_g[o][0], d == 0 ? 1 : m);
    cudaError_t e;
    if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
    if ((e = cudaStreamWaitEvent(G->st[d], after, 0)) != cudaSuccess) return e;
    return cudaMemcpyPeerAsync(dst, G->dev[d], src, G->dev[o], row_bytes, G->st[d]);
}

/* One fused iteration on both halves (see the file comment). */
template <typename T> static cudaError_t rb2_fused(hr_gpu_rb2 *G)
{
    const hr_gpu_rb_params &p = G->p;
    const T c0 = (T)(1.0 - p.omega), c1 = (T)p.omega;
    const int bx = G->bx, H = G->h, tw = 2 * bx;
    cudaError_t e;
    rb_geo g[2];
    int flip[2], org[2], strips[2], kb[2], brow[2];
    T *u[2];
    const T *hf[2];
    for (int d = 0; d < 2; d++) {
        g[d] = rb2_geo(G, d);
        flip[d] = (G->lo[d] - 1) & 1;
        const int M = g[d].ny, full = (M + H - 1) / H;
        org[d] = d == 0 ? M - H * full + 1 : 1; /* GPU 0's last strip ends at its row B = M */
        strips[d] = full;
        kb[d] = d == 0 ? full - 1 : 0;
        brow[d] = d == 0 ? M : 1;
        u[d] = (T *)G->d_g[d][0] + p.offset;
        hf[d] = G->d_hf[d] ? (const T *)G->d_hf[d] + p.offset : NULL;
    }
    const unsigned tiles = rb2_cdiv(p.nx, tw), row_blocks = rb2_cdiv((p.nx + 1) / 2, 256);
    /* high: the boundary strip's main pass, after the last iteration's bulk ring */
    for (int d = 0; d < 2; d++) {
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        if ((e = cudaStreamWaitEvent(G->st[d], G->bulk[d], 0)) != cudaSuccess) return e;
        rb2_main<T>
            <<<dim3(tiles, 1), dim3(bx), 0, G->st[d]>>>(u[d], hf[d], g[d], H, org[d], kb[d], flip[d], c0, c1);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
        if ((e = cudaEventRecord(G->main_b[d], G->st[d])) != cudaSuccess) return e;
    }
    /* low: the other strips' main pass, then (after the boundary strip) the ring passes */
    for (int d = 0; d < 2; d++) {
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        if (strips[d] > 1) {
            const int k0 = d == 0 ? 0 : 1;
            rb2_main<T><<<dim3(tiles, strips[d] - 1), dim3(bx), 0, G->low[d]>>>(u[d], hf[d], g[d], H, org[d],
                                                                                k0, flip[d], c0, c1);
        }
        if ((e = cudaStreamWaitEvent(G->low[d], G->main_b[d], 0)) != cudaSuccess) return e;
        rb2_ring_rows<T><<<dim3(row_blocks, 2 * strips[d]), dim3(256), 0, G->low[d]>>>(
            u[d], hf[d], g[d], H, org[d], brow[d], flip[d], c0, c1);
        rb2_ring_cols<T><<<dim3(rb2_cdiv(g[d].ny, 256), 2 * tiles), dim3(256), 0, G->low[d]>>>(
            u[d], hf[d], g[d], H, tw, org[d], flip[d], c0, c1);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
        if ((e = cudaEventRecord(G->bulk[d], G->low[d])) != cudaSuccess) return e;
    }
    /* high: row B's colour 0 from the other GPU, row B's colour 1, then its colour 1 back */
    for (int d = 0; d < 2; d++) {
        if ((e = rb2_pull(G, d, G->main_b[1 - d])) != cudaSuccess) return e;
        rb2_row<T><<<dim3(row_blocks), dim3(256), 0, G->st[d]>>>(u[d], hf[d], g[d], brow[d], flip[d], c0, c1);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
        if ((e = cudaEventRecord(G->ring_b[d], G->st[d])) != cudaSuccess) return e;
    }
    for (int d = 0; d < 2; d++)
        if ((e = rb2_pull(G, d, G->ring_b[1 - d])) != cudaSuccess) return e;
    return cudaSuccess;
}

/* One colour phase on both halves, then the boundary-row exchange. */
template <typename T> static cudaError_t rb2_phase(hr_gpu_rb2 *G, int colour)
{
    const hr_gpu_rb_params &p = G->p;
    const T c0 = (T)(1.0 - p.omega), c1 = (T)p.omega;
    const int bx = p.bx > 0 ? p.bx : 64, by = p.by > 0 ? p.by : 8;
    const size_t row_bytes = p.pitch * p.esize;
    cudaError_t e;
    for (int d = 0; d < 2; d++) {
        const int ioff = G->lo[d] - 1, nyl = G->hi[d] - G->lo[d] + 1;
        rb_geo g;
        g.p = p.pitch;
        g.q = p.plane;
        g.dim = 2;
        g.nx = p.nx;
        g.ny = nyl;
        g.nz = 1;
        g.si = p.hf_host || p.spike_i < 0 ? -1 : p.spike_i - ioff; /* local row of the spike */
        g.sj = p.spike_j;
        g.sk = 0;
        g.weighted = p.omega != 1.0;
        T *u = (T *)G->d_g[d][0] + p.offset;
        const T *hf = G->d_hf[d] ? (const T *)G->d_hf[d] + p.offset : NULL;
        if ((e = cudaSetDevice(G->dev[d])) != cudaSuccess) return e;
        const long half = (p.nx + 1) / 2;
        dim3 grid((unsigned)((half + bx - 1) / bx), (unsigned)((nyl + by - 1) / by)), block(bx, by);
        /* local row i is global row i + ioff: the colour flips with an odd offset */
        rb_v1<T, false><<<grid, block, 0, G->st[d]>>>(u, hf, g, colour ^ (ioff & 1), c0, c1);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
        if ((e = cudaEventRecord(G->kern[d], G->st[d])) != cudaSuccess) return e;
    }
    const int m = G->hi[0];
    /* GPU 0's last row (local m) -> GPU 1's upper ghost (local 0), on GPU 1's stream */
    if ((e = cudaSetDevice(G->dev[1])) != cudaSuccess) return e;
    if ((e = cudaStreamWaitEvent(G->st[1], G->kern[0], 0)) != cudaSuccess) return e;
    if ((e = cudaMemcpyPeerAsync(rb2_row(G, G->d_g[1][0], 0), G->dev[1], rb2_row(G, G->d_g[0][0], m),
                                 G->dev[0], row_bytes, G->st[1])) != cudaSuccess)
        return e;
    if ((e = cudaEventRecord(G->copy[1], G->st[1])) != cudaSuccess) return e;
    /* GPU 1's first row (local 1) -> GPU 0's lower ghost (local m + 1), on GPU 0's stream */
    if ((e = cudaSetDevice(G->dev[0])) != cudaSuccess) return e;
    if ((e = cudaStreamWaitEvent(G->st[0], G->kern[1], 0)) != cudaSuccess) return e;
    if ((e = cudaMemcpyPeerAsync(rb2_row(G, G->d_g[0][0], m + 1), G->dev[0], rb2_row(G, G->d_g[1][0], 1),
                                 G->dev[1], row_bytes, G->st[0])) != cudaSuccess)
        return e;
    if ((e = cudaEventRecord(G->copy[0], G->st[0])) != cudaSuccess) return e;
    /* the next phase overwrites the rows these copies read */
    if ((e = cudaStreamWaitEvent(G->st[0], G->copy[1], 0)) != cudaSuccess) return e;
    if ((e = cudaSetDevice(G->dev[1])) != cudaSuccess) return e;
    return cudaStreamWaitEvent(G->st[1], G->copy[0], 0);
}
