/*
 * rb-mgpu's state (redblack_gpu2.cu), in a header of its own so that the host emulation of
 * the streaming scheme (bench/drivers/mgpu_rb2_emu.cpp) runs the same code on the same struct.
 */
#ifndef HR_REDBLACK_GPU2_STATE_CUH
#define HR_REDBLACK_GPU2_STATE_CUH

enum { RB2_STREAM, RB2_FUSED, RB2_V1 };

/* the most slabs (GPUs): hr_options.gpus' limit */
#define RB2_MAX 16

struct hr_gpu_rb2 {
    hr_gpu_rb_params p;
    int mode;                  /* RB2_STREAM (default), RB2_FUSED, RB2_V1 */
    int ng;                    /* slabs, one per GPU (fused, v1: 2) */
    int one;                   /* every slab on device p.device */
    int bx, by, h;             /* stream: rb-tuned's shape; fused: tiles 2 bx x h */
    cudaStream_t low[RB2_MAX]; /* the bulk's stream per GPU (st: high priority) */
    cudaEvent_t main_b[RB2_MAX], ring_b[RB2_MAX], bulk[RB2_MAX]; /* fused: boundary strip, row B, the ring */
    int dev[RB2_MAX];
    int lo[RB2_MAX], hi[RB2_MAX];                   /* global interior rows [lo, hi] of each slab */
    int ioff[RB2_MAX];                              /* local row r is global row r + ioff */
    int nrows[RB2_MAX];                             /* local rows held (ghosts included) */
    int srows;                                      /* stream: rows of a part S next to a neighbour */
    int ns[RB2_MAX];                                /* stream: parts S of the slab (1 or 2) */
    int sa[RB2_MAX][2], sz[RB2_MAX][2];             /* stream: local rows of the parts S */
    int ia[RB2_MAX], iz[RB2_MAX];                   /* stream: local rows of the part I (ia > iz: none) */
    int cur, parity;                                /* stream: grid holding the iterate; the events' parity */
    cudaEvent_t ev_s[RB2_MAX][2], ev_i[RB2_MAX][2]; /* stream: S and I done, by iteration parity */
    int graph_k;                         /* stream: tuning.rb2_graph, iterations per graph (0: none) */
    int copy_kernel;                     /* stream: exchange by a kernel (graphs), else a peer memcpy */
    int peer;                            /* each slab's device can read its neighbours' memory */
    cudaGraphExec_t graph[2];            /* per starting grid */
    cudaEvent_t fork, join[2 * RB2_MAX]; /* graph: st[0] -> every other stream and back */
    cudaStream_t st[RB2_MAX];
    cudaEvent_t kern[RB2_MAX], copy[RB2_MAX];
    void *d_g[RB2_MAX][2]; /* per slab, grids A and B (fused, v1: A only); allocation starts */
    void *d_hf[RB2_MAX];
    void *registered;
};

#endif
