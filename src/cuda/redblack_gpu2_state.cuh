/*
 * rb-2gpu's state (redblack_gpu2.cu), in a header of its own so that the host emulation of
 * the streaming scheme (bench/mgpu_rb2_emu.cpp) runs the same code on the same struct.
 */
#ifndef HR_REDBLACK_GPU2_STATE_CUH
#define HR_REDBLACK_GPU2_STATE_CUH

enum { RB2_STREAM, RB2_FUSED, RB2_V1 };

struct hr_gpu_rb2 {
    hr_gpu_rb_params p;
    int mode;                                  /* RB2_STREAM (default), RB2_FUSED, RB2_V1 */
    int bx, by, h;                             /* stream: rb-tuned's shape; fused: tiles 2 bx x h */
    cudaStream_t low[2];                       /* the bulk's stream per GPU (st: high priority) */
    cudaEvent_t main_b[2], ring_b[2], bulk[2]; /* fused: boundary strip, row B, the bulk's ring */
    int dev[2];                                /* HETRELAX_RB2_ONE=1: both halves on one device */
    int lo[2], hi[2];                          /* global interior rows [lo, hi] of each half */
    int ioff[2];                               /* local row r is global row r + ioff */
    int nrows[2];                              /* local rows held (ghosts included) */
    int m;                                     /* stream: GPU 0's last row (odd) */
    int srows;                                 /* stream: rows of the part S next to the other half */
    int sa[2], sz[2], ia[2], iz[2];            /* stream: local rows of the parts S and I */
    int cur, parity;                           /* stream: grid holding the iterate; the events' parity */
    cudaEvent_t ev_s[2][2], ev_i[2][2];        /* stream: S and I done, by iteration parity */
    int graph_k;               /* stream: HETRELAX_RB2_GRAPH, iterations per graph (0: none) */
    int copy_kernel;           /* stream: exchange by a kernel (graphs), else a peer memcpy */
    int peer;                  /* each device can read the other's memory (or one device) */
    cudaGraphExec_t graph[2];  /* per starting grid */
    cudaEvent_t fork, join[3]; /* graph: st[0] -> (low[0], st[1], low[1]) and back */
    cudaStream_t st[2];
    cudaEvent_t kern[2], copy[2];
    void *d_g[2][2]; /* per half, grids A and B (fused, v1: A only); allocation starts */
    void *d_hf[2];
    void *registered;
};

#endif
