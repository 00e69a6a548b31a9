/*
 * The multigrid / CG solver handle's insides, shared by its two files: mg_solve.c
 * (validation, setup, the driver glue, the API) and mg_jobs.c (the problem's values and
 * the SPMD jobs the team runs: cycles, CG iterations, residuals).
 */
#ifndef HR_MG_HANDLE_H
#define HR_MG_HANDLE_H

#include "methods/mg/mg_gpu.h"
#include "methods/mg/mg_internal.h"

struct hr_mg {
    hr_mg_options o;
    int dim, nx, ny, nz, nlev, nt;
    double h;
    hr_team *team;
    mg_tls *tls;
    int use_h, direct;
    mg_hier H;
    mg_level out; /* fp64 outer level: u[0] = u, u[1] = p, r, d = A p, cp = z, hf = problem rhs */
    int has_out;
    int running; /* inside hr_mg_solve: its monitor must not re-enter */
    hr_norm2 *rn, *bn;
    double *rmax; /* per slice: max |r| of the last residual (exact, any order) */
    double *part; /* 2 x (slices + 2) per-slice partials */
    /* iteration state */
    double rz, rr, bnorm, prev_rel, first_rel, last_factor, setup_s;
    double setup_rhs_s, setup_alloc_s; /* parts of setup_s (hr_mg_result) */
    double cg_s; /* CG: the power of two that scales r, z, p, q (mg_range_scale), 1 mostly */
    int r_valid, fmg_pending;
    long count;
    /* backend gpu: the device side, its first error, and the solution copied back */
    mg_gpu *gpu;
    hr_status gst;
    hr_grid host_sol;
    double *rhs_copy; /* the right-hand side array (o.rhs_values points here) */
    int rhs_slot;     /* GPU, zero f: an array for f all the same (hri_mg_create_slot) */
    int reinit;       /* the next solve fills the levels again (a replaced right-hand side) */
};

typedef enum { JOB_INIT, JOB_START, JOB_ADVANCE, JOB_RESIDUAL } job_kind;

typedef struct job {
    hr_mg *m;
    job_kind kind;
    long count;
    unsigned faces;
    int want_r;
    double rz, rr; /* CG state at the start of the job (worker 0 writes the new one to m) */
} job;

/* mg_jobs.c: the problem */
double hri_mgs_exact(const hr_mg *m, int i, int j, int k);
hr_rhs_view hri_mgs_problem_view(const hr_mg *m, hr_grid *grid);
void hri_mgs_fill_rhs(const hr_mg *m, hr_grid *g, int s0, int s1);
mg_level *hri_mgs_sol_level(hr_mg *m);
hr_grid *hri_mgs_sol_grid(hr_mg *m);
/* mg_jobs.c: the team's jobs */
void hri_mgs_run_job(hr_mg *m, job *jb);
double hri_mgs_true_residual(hr_mg *m, int want_r, double *bnorm, double *rmax);
/* mg_solve.c: keeps the first device error (and its text for hr_mg_last_error) */
void hri_mgs_gpu_failed(hr_mg *m, hr_status st);
/* mg_solve.c: a new right-hand side array (nx*ny*nz values of f) for a handle created with an
 * array (or, on the GPU, with a slot for one): the next solve starts from it. On the CPU a
 * copy; on the GPU an upload into the device's array. HR_ERR_UNSUPPORTED for other handles
 * (spike, manufactured and zero have no array). */
hr_status hri_mgs_replace_rhs(hr_mg *m, const double *values);
/* The same from device memory (single: fp32 values), times scale (GPU handles). */
hr_status hri_mgs_replace_rhs_device(hr_mg *m, const void *f, int single, double scale);
/* The solution into device memory (single: fp32), x fastest (GPU handles). */
hr_status hri_mgs_solution_device(hr_mg *m, void *dst, int single);
/* The same into host memory (GPU handles; packed on the device, staged through pinned chunks). */
hr_status hri_mgs_solution_host(hr_mg *m, void *dst, int single);
/* hr_mg_create, and on the GPU with a zero right-hand side, an array for f all the same (zero
 * until hri_mgs_replace_rhs or _device fills it). */
hr_status hri_mg_create_slot(const hr_mg_options *o, hr_mg **out);

#endif
