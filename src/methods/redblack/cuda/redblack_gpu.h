/*
 * The CUDA red-black kernels (the red-black report's versions) behind a small C interface: the
 * device state is opaque; the solver glue (src/methods/redblack/redblack_gpu_desc.c) owns the host grids.
 * The device grid has the host grid's layout (hr_grid_layout), so transfers are one copy.
 */
#ifndef HR_REDBLACK_GPU_H
#define HR_REDBLACK_GPU_H

#include <stddef.h>

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HR_GPU_RB_V1 = 0,  /* a thread per point of the colour, 64 x 8 blocks, one launch per colour */
    HR_GPU_RB_V2,      /* several points per thread: 64 x 64 tiles, 32 x 8 blocks, 8 points each */
    HR_GPU_RB_V3,      /* tile + halo in shared memory, computed there, written back */
    HR_GPU_RB_V4,      /* tile + halo in shared memory, results straight to global memory */
    HR_GPU_RB_LDG,     /* v1 with the neighbours through the read-only cache (__ldg) */
    HR_GPU_RB_TUNED,   /* both colours in one streaming pass, out of place (two device grids) */
    HR_GPU_RB_INPLACE, /* the first rb-tuned: one pass in place down the columns, + a ring fix-up */
    HR_GPU_RB_COUNT
} hr_gpu_rb_variant;

typedef struct hr_gpu_rb_params {
    int variant; /* hr_gpu_rb_variant */
    int device;
    int dim, nx, ny, nz;
    size_t esize;                  /* 4 or 8 */
    size_t pitch, plane;           /* elements per row and per plane (hr_grid_layout) */
    size_t offset;                 /* elements from the allocation's start to (0, 0, 0) */
    size_t count;                  /* elements of one grid from its allocation's start */
    double omega;                  /* 1: plain Gauss-Seidel */
    int spike_i, spike_j, spike_k; /* inline spike (spike_i < 0: none); ignored with hf */
    const void *hf_host;           /* allocation start of the h^2 f grid (same layout), or NULL */
    int pinned;                    /* register the host grid (page-locked) for the transfers */
    int bx, by;                    /* block shape override (0: the variant's default) */
    int h;                         /* rb-tuned / rb-inplace rows per strip (0: by, else default) */
    int gpus;                      /* hr_gpu_rb2: slabs, one per GPU (2..16) */
    hr_tuning tune;                /* the options' knobs: hr_gpu_rb2's scheme and shape (rb2_*), the cache */
} hr_gpu_rb_params;

typedef struct hr_gpu_rb hr_gpu_rb;

/* Creates the device state and uploads u (allocation start of the host grid). Writes the
 * device name, the block shape used, the upload's time, and on failure a reason into err. */
hr_status hri_gpu_rb_create(const hr_gpu_rb_params *p, void *u_host, hr_gpu_rb **out, char *name,
                           size_t name_size, int shape[3], double *h2d_seconds, char *err, size_t err_size);

/* Changes the block shape of rb-tuned (bx threads along x, by strips per block, h rows per
 * strip); HR_ERR_INVALID_ARG (and why in err) when it cannot run. Used by the tuner. */
hr_status hri_gpu_rb_set_shape(hr_gpu_rb *g, int bx, int by, int h, char *err, size_t err_size);

/* Runs `count` red-black iterations (colour 0 then colour 1) on the device. */
hr_status hri_gpu_rb_iterations(hr_gpu_rb *g, long count, char *err, size_t err_size);

/* Device grid -> host grid (download) and back (upload); *seconds gets the copy's time. */
hr_status hri_gpu_rb_download(hr_gpu_rb *g, void *u_host, double *seconds, char *err, size_t err_size);
hr_status hri_gpu_rb_upload(hr_gpu_rb *g, const void *u_host, double *seconds, char *err, size_t err_size);

void hri_gpu_rb_free(hr_gpu_rb *g);
/* The device grids (allocation starts): the current one, rb-tuned's second (else NULL), the
 * h^2 f grid (NULL without), and the cudaStream_t every kernel and copy runs on. */
void hri_gpu_rb_grids(const hr_gpu_rb *g, void **u, void **u2, const void **hf, void **stream);

/* The tuning cache / shipped shapes for a red-black GPU kernel (src/methods/jacobi/cuda/gpu_tune.cu: the
 * same files and nearest-size rule as the Jacobi families): 1 and shape + *source ("cache"
 * or "shipped") when an entry for this device, kernel, precision and 2-D size exists. */
int hri_gpu_rb_shape_lookup(const hr_tuning *tune, int device, const char *device_name, const char *kernel,
                           int dbl, int nx, int ny, int shape[3], const char **source);

/* `hetrelax tune` for a red-black GPU kernel (src/methods/redblack/redblack_gpu_desc.c): every candidate
 * shape checked bitwise against the first and timed; the best into *out (bx, by, h, GB/s). */
struct hr_solver;
struct hr_cuda_tune_result;
hr_status hri_gpu_rb_tune(struct hr_solver *s, long sweeps, struct hr_cuda_tune_result *out);

/* Several GPUs (p->gpus slabs of rows on devices p->device.. p->device + gpus - 1; 2-D),
 * each swept by rb-tuned's streaming pass with two ghost rows of each neighbour's old
 * iterate, exchanged once per iteration (bitwise equal to one GPU; docs/redblack.md). Same
 * calls as above; p->variant is ignored. hri_gpu_rb2_devices: the devices it runs on (1 when
 * tuning.rb2_one puts every slab on one). */
typedef struct hr_gpu_rb2 hr_gpu_rb2;
hr_status hri_gpu_rb2_create(const hr_gpu_rb_params *p, void *u_host, hr_gpu_rb2 **out, char *name,
                            size_t name_size, double *h2d_seconds, char *err, size_t err_size);
hr_status hri_gpu_rb2_iterations(hr_gpu_rb2 *g, long count, char *err, size_t err_size);
int hri_gpu_rb2_devices(const hr_gpu_rb2 *g);
hr_status hri_gpu_rb2_download(hr_gpu_rb2 *g, void *u_host, double *seconds, char *err, size_t err_size);
hr_status hri_gpu_rb2_upload(hr_gpu_rb2 *g, const void *u_host, double *seconds, char *err, size_t err_size);
void hri_gpu_rb2_free(hr_gpu_rb2 *g);

#ifdef __cplusplus
}
#endif
#endif
