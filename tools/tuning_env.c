/* The tuning knobs' table and the HETRELAX_* variables (tuning_env.h). */
#include "tuning_env.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How a value is read. The environment's readings are the ones the library made of the
 * variables before the knobs existed, so every setting that worked keeps its effect. */
enum {
    P_SWITCH,    /* "0" off, "1" on, else the default (the environment) */
    P_OFF0,      /* a switch on by default: "0" turns it off, anything else leaves it on */
    P_ON1,       /* a switch off by default: "1" turns it on, anything else leaves it off */
    P_ON1PREFIX, /* as P_ON1, any value starting with '1' */
    P_NONZERO,   /* set, not empty and not "0": on */
    P_COUNT,     /* a strict decimal in [lo, hi] (else the default); 0 becomes `zero` */
    P_LONG_ATOL, /* atol(value) (0 and below: the default) */
    P_INT_ATOI,  /* atoi(value) (0 and below: the default) */
    P_PIECES,    /* atoi(value): 1..64 (above 64: 64), else the default */
    P_MG_RB,     /* "2": two passes, else the default */
    P_MG_MARCH,  /* atol(value) > 0: that many points, else (also empty) -1: never */
    P_DOUBLE,    /* atof(value) > 0: the value, else (also 0, a word) -1 (none) */
    P_WATCH,     /* "force": auto_watch_force; else as P_DOUBLE */
    P_STRING,    /* a path; empty: the default */
    P_GPU_SHAPE, /* BXxBYxH, each >= 1 */
    P_RB_GPU,    /* BXxBY or BXxBYxH, each >= 1 */
    P_RB_TILE,   /* ROWSxCOLS, each >= 0 (0: untiled / full width) */
    P_RB2_SHAPE, /* BXxBYxH (streaming) or BXxH (in-place schemes) */
    P_RB2_SROWS, /* a count >= 2 */
    P_RB2_GRAPH, /* an even count 0..1000 */
    P_CPU_BLOCK  /* BY[,nt|plain], 1 <= BY <= 2^20 (else the variable is ignored) */
};

#define F(field) offsetof(hr_tuning, field)
#define SW(field, var, parse, deflt, help, group, test)                                                      \
    {                                                                                                        \
#field, var, HR_KNOB_INT, F(field), parse, -1, 1, 0, "0|1", deflt, help, group, test                 \
    }
#define CNT(field, var, lo, hi, zero, syntax, deflt, help, group)                                            \
    {                                                                                                        \
#field, var, HR_KNOB_INT, F(field), P_COUNT, lo, hi, zero, syntax, deflt, help, group, 0             \
    }

static const hr_knob knobs[] = {
    /* host memory and CPU threads */
    SW(hugepages, "HETRELAX_HUGEPAGES", P_ON1, "off", "advise grids of 8 MiB and more MADV_HUGEPAGE", "cpu",
       0),
    SW(cpu_stream, "HETRELAX_CPU_STREAM", P_SWITCH,
       "auto (spmd: streams when the grids exceed its cache share; pencil: tuning cache)",
       "cpu-threads stores of the new grid: 1 streaming (non-temporal), 0 ordinary", "cpu", 0),
    {"cpu_block", "HETRELAX_CPU_BLOCK", HR_KNOB_INT, F(cpu_block), P_CPU_BLOCK, 1, 1 << 20, 0,
     "BY[,nt|plain]", "the tuning cache's, else the default",
     "3-D pencil: y rows per pencil (,nt / ,plain: the store kind with it)", "cpu", 0},
    {"cpu_block_stream", NULL, HR_KNOB_INT, F(cpu_block_stream), P_SWITCH, -1, 1, 0, "0|1", "as cpu_stream",
     "the store kind given with cpu_block (1 nt, 0 plain)", "cpu", 0},
    {"rb_tile", "HETRELAX_RB_TILE", HR_KNOB_INT2, F(rb_tile), P_RB_TILE, 0, 0, 0, "ROWSxCOLS",
     "4 x full width", "cpu red-black (rb-tiles): tile rows x columns (0: untiled / full width)", "cpu", 0},
    /* the tuning cache */
    {"tune_file", "HETRELAX_TUNE_FILE", HR_KNOB_STRING, F(tune_file), P_STRING, 0, 0, 0, "FILE",
     "gpu-tune.txt in cache_dir", "the tuning cache file runs look shapes up in (`hetrelax tune` writes)",
     "cache", 0},
    {"cache_dir", "XDG_CACHE_HOME", HR_KNOB_STRING, F(cache_dir), P_STRING, 0, 0, 0, "DIR",
     "~/.cache/hetrelax",
     "the folder of the default cache file (from $XDG_CACHE_HOME/hetrelax, else "
     "$HOME/.cache/hetrelax)",
     "cache", 0},
    /* GPU */
    {"gpu_shape", "HETRELAX_GPU_SHAPE", HR_KNOB_INT3, F(gpu_shape), P_GPU_SHAPE, 0, 0, 0, "BXxBYxH",
     "tuning cache, shipped table, default", "Jacobi GPU kernels: block BX x BY, H rows (planes) per thread",
     "gpu", 0},
    SW(gpu_pdl, "HETRELAX_GPU_PDL", P_OFF0, "on (compute capability >= 9)",
       "programmatic dependent launch of the 2-D tuned sweeps (0: off)", "gpu", 0),
    {"gpu_split", "HETRELAX_GPU_SPLIT", HR_KNOB_INT, F(gpu_split), P_INT_ATOI, 0, 1 << 30, 0, "ROW",
     "0 (one region)", "`tuned` sweeps as two regions cut at this row (plane)", "gpu", 1},
    {"rb_gpu_shape", "HETRELAX_RB_GPU_SHAPE", HR_KNOB_INT3, F(rb_gpu_shape), P_RB_GPU, 0, 0, 0, "BXxBY[xH]",
     "tuning cache, shipped table, default", "red-black GPU kernels: block (and rows per strip)", "gpu", 0},
    SW(rb2_v1, "HETRELAX_RB2_V1", P_ON1PREFIX, "off (the streaming scheme)",
       "rb-mgpu / rb-2gpu: the two-GPU in-place scheme v1", "gpu", 0),
    SW(rb2_old, "HETRELAX_RB2_OLD", P_ON1PREFIX, "off (the streaming scheme)",
       "rb-mgpu / rb-2gpu: the two-GPU fused in-place scheme", "gpu", 0),
    SW(rb2_one, "HETRELAX_RB2_ONE", P_ON1PREFIX, "off",
       "rb-mgpu: every slab on the first device (the code path)", "gpu", 1),
    SW(rb2_kcopy, "HETRELAX_RB2_KCOPY", P_ON1PREFIX, "off", "rb-mgpu: exchanges by a copy kernel", "gpu", 0),
    {"rb2_shape", "HETRELAX_RB2_SHAPE", HR_KNOB_INT3, F(rb2_shape), P_RB2_SHAPE, 0, 0, 0, "BXxBYxH|BXxH",
     "rb-tuned's cached shape, else 128x17x8 (in-place: 128x64)",
     "rb-mgpu: block of the streaming scheme (BXxH: the in-place schemes)", "gpu", 0},
    {"rb2_srows", "HETRELAX_RB2_SROWS", HR_KNOB_INT, F(rb2_srows), P_RB2_SROWS, 2, 1 << 30, 0, "N", "2",
     "rb-mgpu: rows of a strip next to a neighbour", "gpu", 0},
    {"rb2_graph", "HETRELAX_RB2_GRAPH", HR_KNOB_INT, F(rb2_graph), P_RB2_GRAPH, 0, 1000, 0, "K",
     "0 (direct launches)", "rb-mgpu: iterations per CUDA graph (even)", "gpu", 0},
    /* multigrid on a GPU */
    {"mg_gpu_small", "HETRELAX_MG_GPU_SMALL", HR_KNOB_LONG, F(mg_gpu_small), P_LONG_ATOL, 0, 0, 0, "POINTS",
     "1024 (2-D), 512 (3-D)", "multigrid GPU: levels of at most this many points in one one-block kernel",
     "mg", 0},
    SW(mg_gpu_nograph, "HETRELAX_MG_GPU_NOGRAPH", P_NONZERO, "off",
       "multigrid GPU: kernels one by one, no graph", "mg", 0),
    {"mg_gpu_rb", "HETRELAX_MG_GPU_RB", HR_KNOB_INT, F(mg_gpu_rb), P_MG_RB, 0, 2, 0, "2", "1 pass",
     "multigrid GPU: 2 runs red-black smoothing as two in-place passes", "mg", 0},
    {"mg_gpu_march", "HETRELAX_MG_GPU_MARCH", HR_KNOB_LONG, F(mg_gpu_march), P_MG_MARCH, 0, 0, 0, "POINTS",
     "1000000", "multigrid GPU: one-pass red-black marches on levels of at least this many points (0: never)",
     "mg", 0},
    {"mg_gpu_fuse", "HETRELAX_MG_GPU_FUSE", HR_KNOB_LONG, F(mg_gpu_fuse), P_MG_MARCH, 0, 0, 0, "POINTS",
     "1000000 (fp64), 30000000 (fp32)", "multigrid GPU, 2-D: red-black sweeps fused into one pass on levels of at least this many points (0: never)",
     "mg", 0},
    {"mg_gpu_async_local", "HETRELAX_MG_GPU_ASYNC_LOCAL", HR_KNOB_INT, F(mg_gpu_async_local), P_INT_ATOI, 0,
     1 << 20, 0, "N", "2", "multigrid GPU, smoother async3: local red-black sweeps per pass", "mg", 0},
    /* sparse methods on GPUs */
    CNT(sparse_streams, "HETRELAX_SPARSE_STREAMS", 1, 32, 0, "1..32", "1", "sparse async: streams per GPU",
        "sparse"),
    CNT(sparse_graph, "HETRELAX_SPARSE_GRAPH", 0, 4096, -1, "0..4096", "32",
        "sparse async: iterations per CUDA graph (0: none)", "sparse"),
    CNT(sparse_amc_serial, "HETRELAX_SPARSE_AMC_SERIAL", 0, 1, -1, "0|1", "0",
        "sparse async, AMC: 1 runs the exchange serial to the kernels", "sparse"),
    CNT(sparse_amc_every, "HETRELAX_SPARSE_AMC_EVERY", 1, 1024, 0, "1..1024", "1",
        "sparse async, AMC: an exchange every this many kernels", "sparse"),
    CNT(sparse_while, "HETRELAX_SPARSE_WHILE", 0, 1, -1, "0|1", "1",
        "sparse GPU: 0 replays loop bodies instead of the WHILE graph", "sparse"),
    CNT(sparse_device_checks, "HETRELAX_SPARSE_DEVICE_CHECKS", 0, 1, -1, "0|1", "1",
        "sparse GPU: 0 checks the residual on the host", "sparse"),
    CNT(sparse_body, "HETRELAX_SPARSE_BODY", 0, 256, 0, "0..256", "from the monitor interval (16)",
        "sparse GPU: iterations per loop body", "sparse"),
    CNT(sparse_body_switch, "HETRELAX_SPARSE_BODY_SWITCH", 1, 1 << 30, 0, "N", "256",
        "sparse GPU: iterations before long bodies start", "sparse"),
    CNT(sparse_body_long, "HETRELAX_SPARSE_BODY_LONG", 0, 256, -1, "0..256", "64",
        "sparse GPU: iterations per long body (0: none)", "sparse"),
    CNT(sparse_multi, "HETRELAX_SPARSE_MULTI", 0, 1, -1, "0|1", "rows of 16 entries or more",
        "sparse GPU: the lean check reads the matrix once per 8 snapshots", "sparse"),
    CNT(sparse_lean, "HETRELAX_SPARSE_LEAN", 0, 1, -1, "0|1", "1", "sparse GPU: 0 drops the lean loop body",
        "sparse"),
    CNT(sparse_predict, "HETRELAX_SPARSE_PREDICT", 0, 1, -1, "0|1", "1",
        "sparse GPU: 0 drops the predicted body lengths", "sparse"),
    CNT(sparse_batch, "HETRELAX_SPARSE_BATCH", 0, 1, -1, "0|1", "1",
        "sparse GPU: 0 checks every iteration instead of in batches", "sparse"),
    SW(sparse_profile, "HETRELAX_SPARSE_PROFILE", P_NONZERO, "off",
       "sparse GPU: where the host time went, printed to stderr", "sparse", 0),
    /* the hybrid backend, chains of GPUs, crews */
    {"crew_spin_us", "HETRELAX_CREW_SPIN_US", HR_KNOB_DOUBLE, F(crew_spin_us), P_DOUBLE, 0, 0, 0, "US",
     "200 (unpinned), 50000 (pinned)", "crew workers spin this long before they sleep (0: sleep at once)",
     "hybrid", 0},
    SW(crew_pin, "HETRELAX_CREW_PIN", P_SWITCH, "pinned next to a GPU",
       "CPU crews: 1 pins them wherever they fit (also two CPU parts), 0 never", "hybrid", 0),
    SW(crew_steal, "HETRELAX_CREW_STEAL", P_OFF0, "on", "CPU crews: 0 keeps each worker to its own pieces",
       "hybrid", 0),
    {"crew_pieces", "HETRELAX_CREW_PIECES", HR_KNOB_INT, F(crew_pieces), P_PIECES, 0, 64, 0, "1..64", "4",
     "CPU crews: pieces per worker", "hybrid", 0},
    SW(cpu_pull, "HETRELAX_CPU_PULL", P_ON1, "off",
       "CPU parts exchange by the direct-copy schedule of peer GPUs", "hybrid", 1),
    SW(peer, "HETRELAX_PEER", P_SWITCH, "peer copies where they work, after a trial",
       "GPU parts: 0 stages every exchange through the host, 1 trusts peer copies (no trial)", "hybrid", 0),
    SW(peer_push, "HETRELAX_PEER_PUSH", P_ON1, "off (the receiver pulls)",
       "GPU parts: the source pushes its rows", "hybrid", 0),
    SW(split_mapped, "HETRELAX_SPLIT_MAPPED", P_OFF0, "on",
       "0 stages every host edge through the engine's buffers", "hybrid", 0),
    SW(chain_graph, "HETRELAX_CHAIN_GRAPH", P_OFF0, "on", "--gpus chains: 0 runs without CUDA graphs",
       "hybrid", 0),
    SW(exchange_trial, "HETRELAX_EXCHANGE_TRIAL", P_ON1, "only where an edge has peer copies",
       "the start-up exchange trial wherever copies are direct", "hybrid", 1),
    {"auto_watch", "HETRELAX_AUTO_WATCH", HR_KNOB_DOUBLE, F(auto_watch), P_WATCH, 0, 0, 0, "MARGIN|force",
     "0.01", "--split auto's watch: margin over GPU-only that ends a split (0: no watch)", "hybrid", 0},
    {"auto_watch_force", NULL, HR_KNOB_INT, F(auto_watch_force), P_SWITCH, -1, 1, 0, "0|1", "off",
     "any split of both parts falls back after its first window (HETRELAX_AUTO_WATCH=force)", "hybrid", 1},
    {"split_trace", "HETRELAX_SPLIT_TRACE", HR_KNOB_STRING, F(split_trace), P_STRING, 0, 0, 0, "FILE", "none",
     "append a JSON line per split engine and crew to FILE", "hybrid", 0},
    /* decomposed runs */
    SW(mpi_mapped, "HETRELAX_MPI_MAPPED", P_OFF0, "on",
       "MPI: 0 drops the mapped ghost planes of ranks on a node", "mpi", 0),
    SW(mpi_inplace, "HETRELAX_MPI_INPLACE", P_OFF0, "on",
       "MPI: 0 copies shared-memory halos through the bound buffers", "mpi", 0),
    SW(mpi_shm, "HETRELAX_MPI_SHM", P_OFF0, "on",
       "MPI: 0 sends halos point-to-point instead of shared memory", "mpi", 0),
    SW(mpi_cuda_aware, "HETRELAX_MPI_CUDA_AWARE", P_OFF0, "as the MPI library says",
       "MPI: 0 treats the MPI library as not CUDA-aware", "mpi", 0),
    SW(dsolver_pencil, "HETRELAX_DSOLVER_PENCIL", P_OFF0, "on",
       "MPI: 0 sweeps 3-D subdomains without pencils", "mpi", 0),
    SW(dsolver_queued, "HETRELAX_DSOLVER_QUEUED", P_ON1, "off", "MPI: the device schedule on CPU ranks",
       "mpi", 1),
    SW(dsolver_progress, "HETRELAX_DSOLVER_PROGRESS", P_OFF0, "on",
       "MPI: 0 makes no progress calls while inner points are swept", "mpi", 0),
    SW(dgpu_generic, "HETRELAX_DGPU_GENERIC", P_ON1, "off",
       "GPU subdomains: the generic box kernel everywhere", "mpi", 1),
    {"dsolver_trace", "HETRELAX_DSOLVER_TRACE", HR_KNOB_STRING, F(dsolver_trace), P_STRING, 0, 0, 0, "PREFIX",
     "none", "MPI: each rank writes its exchange timeline to PREFIX.RANK", "mpi", 0},
    {"nccl_timeout", "HETRELAX_NCCL_TIMEOUT", HR_KNOB_DOUBLE, F(nccl_timeout), P_DOUBLE, 0, 0, 0, "SECONDS",
     "120", "MPI, --transport nccl: seconds a wait may take (0: no limit)", "mpi", 0},
};

int hri_knob_count(void)
{
    return (int)(sizeof knobs / sizeof knobs[0]);
}

const hr_knob *hri_knob_at(int i)
{
    return i >= 0 && i < hri_knob_count() ? &knobs[i] : NULL;
}

const hr_knob *hri_knob_find(const char *name)
{
    for (int i = 0; i < hri_knob_count(); i++)
        if (strcmp(knobs[i].name, name) == 0 || (knobs[i].var && strcmp(knobs[i].var, name) == 0))
            return &knobs[i];
    return NULL;
}

static void *field(const hr_knob *k, hr_tuning *t)
{
    return (char *)t + k->offset;
}

static const void *cfield(const hr_knob *k, const hr_tuning *t)
{
    return (const char *)t + k->offset;
}

static int fail(char *err, size_t es, const char *fmt, const char *value)
{
    if (err && es) snprintf(err, es, fmt, value);
    return -1;
}

/* A strict decimal (sign allowed) that fits a long; 0 when it is not one. */
static int strict_long(const char *s, long *out)
{
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (*end || errno) return 0;
    *out = v;
    return 1;
}

static int strict_double(const char *s, double *out)
{
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (*end || errno || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

/* "AxB" or "AxBxC" of strict non-negative decimals: the count read (2 or 3), else 0. */
static int extents(const char *s, int v[3])
{
    int n = 0;
    v[0] = v[1] = v[2] = 0;
    for (const char *p = s; n < 3;) {
        long x = 0;
        const char *start = p;
        while (*p >= '0' && *p <= '9' && x <= 1 << 30)
            x = 10 * x + (*p++ - '0');
        if (p == start || x > 1 << 30) return 0;
        v[n++] = (int)x;
        if (!*p) return n >= 2 ? n : 0;
        if (*p++ != 'x') return 0;
    }
    return 0;
}

/* A switch in flag syntax: 1 on, 0 off; -1 when it is not one. */
static int word_switch(const char *v)
{
    if (strcmp(v, "1") == 0 || strcmp(v, "on") == 0) return HR_TUNE_ON;
    if (strcmp(v, "0") == 0 || strcmp(v, "off") == 0) return HR_TUNE_OFF;
    return 0;
}

int hri_knob_set(const hr_knob *k, const char *value, int strict, hr_tuning *t, char *err, size_t es)
{
    const char *v = value ? value : "";
    int *ip = field(k, t);
    long *lp = field(k, t);
    double *dp = field(k, t);
    const char **sp = field(k, t);
    long l;
    double d;
    int e[3];
    switch (k->parse) {
    case P_SWITCH:
    case P_OFF0:
    case P_ON1:
    case P_ON1PREFIX:
    case P_NONZERO:
        if (strict) {
            const int w = word_switch(v);
            if (!w) return fail(err, es, "'%s': want 1 (on) or 0 (off)", v);
            *ip = w;
            return 0;
        }
        if (k->parse == P_SWITCH)
            *ip = strcmp(v, "1") == 0 ? HR_TUNE_ON : strcmp(v, "0") == 0 ? HR_TUNE_OFF : 0;
        else if (k->parse == P_OFF0)
            *ip = strcmp(v, "0") == 0 ? HR_TUNE_OFF : 0;
        else if (k->parse == P_ON1)
            *ip = strcmp(v, "1") == 0 ? HR_TUNE_ON : 0;
        else if (k->parse == P_ON1PREFIX)
            *ip = v[0] == '1' ? HR_TUNE_ON : 0;
        else
            *ip = v[0] && strcmp(v, "0") != 0 ? HR_TUNE_ON : 0;
        return 0;
    case P_COUNT:
        if (!strict_long(v, &l) || l < k->lo || l > k->hi) {
            if (strict) return fail(err, es, "'%s': out of range (see hetrelax info --list-tuning)", v);
            *ip = 0;
            return 0;
        }
        *ip = l == 0 ? (int)k->zero : (int)l;
        return 0;
    case P_LONG_ATOL:
        if (strict && (!strict_long(v, &l) || l < 0)) return fail(err, es, "'%s': want a count >= 0", v);
        l = atol(v);
        *lp = l > 0 ? l : 0;
        return 0;
    case P_INT_ATOI:
        if (strict && (!strict_long(v, &l) || l < 0 || l > k->hi))
            return fail(err, es, "'%s': want a count >= 0", v);
        *ip = atoi(v) > 0 ? atoi(v) : 0;
        return 0;
    case P_PIECES:
        if (strict && (!strict_long(v, &l) || l < 1 || l > 64)) return fail(err, es, "'%s': want 1..64", v);
        *ip = atoi(v) > 0 ? (atoi(v) < 64 ? atoi(v) : 64) : 0;
        return 0;
    case P_MG_RB:
        if (strict && strcmp(v, "1") != 0 && strcmp(v, "2") != 0)
            return fail(err, es, "'%s': want 1 or 2", v);
        *ip = atoi(v) == 2 ? 2 : 0;
        return 0;
    case P_MG_MARCH:
        if (strict && (!strict_long(v, &l) || l < 0))
            return fail(err, es, "'%s': want a count >= 0 (0: never)", v);
        *lp = atol(v) > 0 ? atol(v) : -1;
        return 0;
    case P_WATCH:
        if (strcmp(v, "force") == 0) {
            t->auto_watch_force = HR_TUNE_ON;
            return 0;
        }
        /* fall through */
    case P_DOUBLE:
        if (strict && (!strict_double(v, &d) || d < 0)) return fail(err, es, "'%s': want a number >= 0", v);
        if (!strict && !*v) { /* set but empty: as unset */
            *dp = 0.0;
            return 0;
        }
        d = atof(v);
        *dp = isnan(d) || d <= 0.0 ? -1.0 : d > 1e15 ? 1e15 : d;
        return 0;
    case P_STRING: *sp = *v ? v : NULL; return 0;
    case P_GPU_SHAPE:
        if (!*v && !strict) {
            ip[0] = ip[1] = ip[2] = 0;
            return 0;
        }
        if (extents(v, e) != 3 || e[0] < 1 || e[1] < 1 || e[2] < 1)
            return fail(err, es, "'%s': expected BXxBYxH, e.g. 128x1x32", v);
        memcpy(ip, e, sizeof e);
        return 0;
    case P_RB_GPU:
        if (!*v && !strict) {
            ip[0] = ip[1] = ip[2] = 0;
            return 0;
        }
        if (!extents(v, e)) return fail(err, es, "'%s' is not BXxBY or BXxBYxH", v);
        if (e[0] < 1 || e[1] < 1 || (extents(v, e) == 3 && e[2] < 1))
            return fail(err, es, "'%s': every extent must be >= 1", v);
        memcpy(ip, e, sizeof e);
        return 0;
    case P_RB_TILE:
        if (extents(v, e) != 2) return fail(err, es, "'%s' is not ROWSxCOLS (0: untiled / full width)", v);
        ip[0] = e[0] ? e[0] : -1;
        ip[1] = e[1] ? e[1] : -1;
        return 0;
    case P_RB2_SHAPE: {
        if (!*v && !strict) {
            ip[0] = ip[1] = ip[2] = 0;
            return 0;
        }
        const int n = extents(v, e);
        if (!n || e[0] < 1 || e[1] < 1 || (n == 3 && e[2] < 1))
            return fail(err, es, "'%s' is not BXxBYxH (the streaming scheme) or BXxH (the in-place schemes)",
                        v);
        if (n == 2) { /* BXxH */
            e[2] = e[1];
            e[1] = 0;
        }
        memcpy(ip, e, sizeof e);
        return 0;
    }
    case P_RB2_SROWS:
        if (!*v && !strict) {
            *ip = 0;
            return 0;
        }
        if (!strict_long(v, &l) || l < 2 || l > k->hi) return fail(err, es, "'%s' is not a count >= 2", v);
        *ip = (int)l;
        return 0;
    case P_RB2_GRAPH:
        if (!*v && !strict) {
            *ip = 0;
            return 0;
        }
        if (!strict_long(v, &l) || l < 0 || l > 1000 || l % 2)
            return fail(err, es, "'%s' is not an even count of iterations (0: off)", v);
        *ip = (int)l;
        return 0;
    case P_CPU_BLOCK: {
        char *end;
        errno = 0;
        l = strtol(v, &end, 10);
        if (end == v || errno || l < 1 || l > 1 << 20) {
            if (strict) return fail(err, es, "'%s': want BY[,nt|plain] with 1 <= BY <= 1048576", v);
            return 0; /* ignored, as the library did */
        }
        if (strict && *end && strcmp(end, ",nt") != 0 && strcmp(end, ",plain") != 0)
            return fail(err, es, "'%s': want BY[,nt|plain]", v);
        *ip = (int)l;
        t->cpu_block_stream = strcmp(end, ",nt") == 0      ? HR_TUNE_ON
                              : strcmp(end, ",plain") == 0 ? HR_TUNE_OFF
                                                           : 0;
        return 0;
    }
    }
    return fail(err, es, "'%s': no parser", v);
}

int hri_knob_is_default(const hr_knob *k, const hr_tuning *t)
{
    switch (k->type) {
    case HR_KNOB_INT: return *(const int *)cfield(k, t) == 0;
    case HR_KNOB_LONG: return *(const long *)cfield(k, t) == 0;
    case HR_KNOB_DOUBLE: return *(const double *)cfield(k, t) == 0.0;
    case HR_KNOB_STRING: return *(const char *const *)cfield(k, t) == NULL;
    case HR_KNOB_INT2: return ((const int *)cfield(k, t))[0] == 0 && ((const int *)cfield(k, t))[1] == 0;
    case HR_KNOB_INT3: {
        const int *v = cfield(k, t);
        return v[0] == 0 && v[1] == 0 && v[2] == 0;
    }
    }
    return 1;
}

void hri_knob_text(const hr_knob *k, const hr_tuning *t, char *buf, size_t size)
{
    const void *p = cfield(k, t);
    switch (k->type) {
    case HR_KNOB_INT: snprintf(buf, size, "%d", *(const int *)p); return;
    case HR_KNOB_LONG: snprintf(buf, size, "%ld", *(const long *)p); return;
    case HR_KNOB_DOUBLE: snprintf(buf, size, "%.17g", *(const double *)p); return;
    case HR_KNOB_STRING:
        snprintf(buf, size, "%s", *(const char *const *)p ? *(const char *const *)p : "");
        return;
    case HR_KNOB_INT2: snprintf(buf, size, "%dx%d", ((const int *)p)[0], ((const int *)p)[1]); return;
    case HR_KNOB_INT3:
        snprintf(buf, size, "%dx%dx%d", ((const int *)p)[0], ((const int *)p)[1], ((const int *)p)[2]);
        return;
    }
    snprintf(buf, size, "?");
}

int hri_tuning_from_env(hr_tuning *t, char *err, size_t es)
{
    for (int i = 0; i < hri_knob_count(); i++) {
        const hr_knob *k = &knobs[i];
        if (!k->var || strncmp(k->var, "HETRELAX_", 9) != 0) continue;
        const char *v = getenv(k->var);
        if (!v) continue;
        char why[200];
        if (hri_knob_set(k, v, 0, t, why, sizeof why) != 0) {
            if (err && es) snprintf(err, es, "%s: %s", k->var, why);
            return -1;
        }
    }
    /* the cache folder: $XDG_CACHE_HOME/hetrelax, else $HOME/.cache/hetrelax (kept for the
     * process: the environment's strings live as long) */
    if (!t->cache_dir) {
        static char dir[1024];
        const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
        if (x && *x && snprintf(dir, sizeof dir, "%s/hetrelax", x) < (int)sizeof dir)
            t->cache_dir = dir;
        else if (h && *h && snprintf(dir, sizeof dir, "%s/.cache/hetrelax", h) < (int)sizeof dir)
            t->cache_dir = dir;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static unsigned long long fnv(unsigned long long h, const char *s)
{
    for (size_t i = 0; s[i]; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return (h ^ 0xffu) * 1099511628211ULL; /* the end of a string: "a b" is not "ab" */
}

void hri_tuning_env_fingerprint(char *text, size_t size, unsigned long long *hash)
{
    hr_tuning t;
    memset(&t, 0, sizeof t);
    char err[256];
    (void)hri_tuning_from_env(&t, err, sizeof err); /* a bad value: the command refuses it, every rank */
    t.cache_dir = NULL;                            /* where each rank's home is: not a setting */
    /* the knobs, canonical: equal knobs give equal hashes however they were spelled */
    unsigned long long h = 14695981039346656037ULL;
    const char *vars[sizeof knobs / sizeof knobs[0]];
    char line[sizeof knobs / sizeof knobs[0]][320];
    size_t n = 0;
    for (int i = 0; i < hri_knob_count(); i++) {
        const hr_knob *k = &knobs[i];
        if (hri_knob_is_default(k, &t)) continue;
        char v[256];
        hri_knob_text(k, &t, v, sizeof v);
        h = fnv(fnv(h, k->name), v);
    }
    /* the variables behind them, as the user spelled them */
    for (int i = 0; i < hri_knob_count(); i++) {
        const hr_knob *k = &knobs[i];
        if (!k->var || strncmp(k->var, "HETRELAX_", 9) != 0 || !getenv(k->var)) continue;
        hr_tuning one;
        memset(&one, 0, sizeof one);
        int gives = hri_knob_set(k, getenv(k->var), 0, &one, err, sizeof err) != 0; /* refused: shown */
        for (int j = 0; j < hri_knob_count() && !gives; j++)
            gives = !hri_knob_is_default(&knobs[j], &one);
        if (!gives) continue;
        snprintf(line[n], sizeof line[n], "%s=%s", k->var, getenv(k->var));
        vars[n] = line[n];
        n++;
    }
    qsort(vars, n, sizeof vars[0], cmp_str);
    snprintf(text, size, "%s", n ? "" : "none");
    for (size_t i = 0; i < n; i++) {
        const size_t len = strlen(text);
        if (len + 1 < size) snprintf(text + len, size - len, "%s%s", i ? " " : "", vars[i]);
    }
    *hash = h;
}
