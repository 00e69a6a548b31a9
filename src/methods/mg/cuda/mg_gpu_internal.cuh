/*
 * Multigrid on the GPU: the device state shared by the launcher and API (mg_gpu.cu) and the
 * recorder (mg_gpu_record.cu).
 */
#ifndef HR_MG_GPU_INTERNAL_CUH
#define HR_MG_GPU_INTERNAL_CUH

#include "methods/mg/cuda/mg_gpu_ops.cuh"
#include "methods/mg/mg_cpu_part.h"
#include "methods/mg/mg_gpu.h"

#define MGG_MAX_LEV   24
#define MGG_MAX_ALLOC (MGG_MAX_LEV * 6 + 8)
#define MGG_GRAPHS    16

enum { PROG_CYCLE = 0, PROG_FMG, PROG_CG_ITER, PROG_CG_START };

struct mgg_graph {
    int used;
    unsigned long long key;
    double dscale, cg_s; /* the scales recorded into its operators */
    unsigned end_state;
    cudaGraphExec_t exec;
    mgg_op *d_ops;
};

struct mg_gpu;
struct hr_team;
enum { MGG_STAGE_SLOTS = 4 };
/* What a host node of a graph runs (--coarse-on cpu): one per cycle type and freshness. */
struct mgg_host_desc {
    mg_gpu *g;
    hr_mg_cycle type;
    int fresh;
};

struct mg_gpu {
    mg_gpu_setup s;
    mg_gpu_times times;
    int dev;
    cudaStream_t st;
    int nlev, first_small;
    long rbw_held; /* blocks of the fused red-black march the device holds at once */
    mgg_lev lev[MGG_MAX_LEV], out;
    mgg_lev *d_levs;
    void *allocs[MGG_MAX_ALLOC];
    size_t alloc_bytes[MGG_MAX_ALLOC];
    int nalloc;
    void *d_rhs;  /* the problem's h^2 f (kept across resets) */
    size_t d_rhs_bytes;
    unsigned cur; /* bit l: level l's iterate is u[1] */
    double *d_part, *d_cgpart;
    mgg_scalars *d_sc, *h_sc;
    mgg_op *ops;
    int nops, cap;
    mgg_op *d_tmp_ops; /* no_graph: the program uploaded per run */
    int tmp_cap;
    mgg_graph graphs[MGG_GRAPHS];
    /* zeroed iterates not written yet: per level the producing operator (its index), -2 the
     * check (defect mode), -1 none; check_skips_zero: the check leaves level 0's to the
     * program (whose first level-0 sweep then reads no iterate) */
    int zpend[MGG_MAX_LEV];
    int check_skips_zero;
    /* powers of two that keep vectors in range (mg_range_scale): the defect's, which the check
     * multiplies the residual by and the cycle's correction is divided by again, and CG's */
    double dscale, cg_s;
    /* --coarse-on cpu: the CPU levels, pinned staging of the right-hand side and iterate of
     * level s.cpu_level (whole grids: cpu_bytes from cpu_off bytes before the origin) */
    mg_cpu_part *cpu;
    void *h_hf, *h_u;
    size_t cpu_bytes, cpu_off;
    mgg_host_desc hdesc[8];
    /* host arrays in and out (the right-hand side, the solution): MGG_STAGE_SLOTS chunks of
     * `stage_bytes`, pinned and on the device, their events and the host threads that fill and
     * empty them; made at the first use, kept to the end */
    char *stage_pin[MGG_STAGE_SLOTS], *stage_dev[MGG_STAGE_SLOTS];
    cudaEvent_t stage_done[MGG_STAGE_SLOTS];
    size_t stage_bytes;
    struct hr_team *stage_team;
    hr_status fail_st;
    char err[256];
};

static inline int cur_of(const mg_gpu *g, int l)
{
    return (int)((g->cur >> l) & 1u);
}

/* Records program `prog` (PROG_*) into g->ops from the current buffer state, which it
 * advances as the program will (r_valid: the defect check left the residual in place). */
void hri_mgg_record(mg_gpu *g, int prog, int r_valid);

#endif
