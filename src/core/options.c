/*
 * The structured-grid solver's options: defaults, validation (one message naming the
 * field), the backend "auto" resolves to, and the problem the options resolve to
 * (extents, spacing, SOR weight, spike position).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/precision.h"
#include "core/solver_internal.h"
#include "core/tuning.h"
#include "runtime/cuda/cuda_api.h"

/* The largest extent accepted per axis: indices stay far inside int and size_t; memory
 * is checked separately before allocation. */
#define HR_MAX_N 1000000
#define HR_PI    3.14159265358979323846

void hr_options_default(hr_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->n = 1024;
    o->dim = 2;
    o->iters = 1000;
    o->tol = 0.0;
    o->check_every = 100;
    o->precision = HR_PREC_SINGLE;
    o->backend = HR_BACKEND_AUTO;
    o->bind = HR_BIND_NONE;
    o->layout = HR_LAYOUT_FLAT;
    o->rhs = HR_RHS_SPIKE;
    o->init = HR_INIT_ZERO;
    o->omega = 1.0;
    o->divtol = HR_DIVTOL;
    o->alpha = 1;
    o->host_memory = HR_HOST_PINNED;
    o->split = -1.0; /* hybrid: auto */
}

int hri_options_dim(const hr_options *o)
{
    return o->dim == 3 ? 3 : 2;
}

int hri_options_extent(const hr_options *o, int axis)
{
    if (axis == 2 && hri_options_dim(o) == 2) return 1;
    const int given = axis == 0 ? o->nx : axis == 1 ? o->ny : o->nz;
    return given > 0 ? given : o->n;
}

hr_status hri_options_rhs_check(hr_rhs rhs, char *w, size_t ws)
{
    if (rhs == HR_RHS_RANDOM) /* a problem's (hetrelax/problem.h): made per point by the general engine */
        return hri_invalid_arg(w, ws,
                               "rhs: random is for an hr_problem (hr_grid_solver); these options take "
                               "spike, manufactured, zero or an array");
    if (rhs != HR_RHS_SPIKE && rhs != HR_RHS_MANUFACTURED && rhs != HR_RHS_ARRAY && rhs != HR_RHS_ZERO)
        return hri_invalid_arg(w, ws, "rhs: unknown");
    return HR_OK;
}

hr_status hr_options_validate(const hr_options *o, char *w, size_t ws)
{
    static const char *const axis_flag[3] = {"nx", "ny", "nz"};
    if (!o) return hri_invalid_arg(w, ws, "options: NULL");
    if (o->dim != 0 && o->dim != 2 && o->dim != 3) return hri_invalid_arg(w, ws, "dim: must be 2 or 3");
    const int dim = hri_options_dim(o);
    if (dim == 2 && o->nz != 0) return hri_invalid_arg(w, ws, "nz: only for 3-D grids");
    if ((o->nx == 0 || o->ny == 0 || (dim == 3 && o->nz == 0)) && (o->n < 1 || o->n > HR_MAX_N))
        return hri_invalid_arg(w, ws, "n: must be between 1 and %d", HR_MAX_N);
    for (int a = 0; a < dim; a++) {
        const int e = a == 0 ? o->nx : a == 1 ? o->ny : o->nz;
        if (e < 0 || e > HR_MAX_N)
            return hri_invalid_arg(w, ws, "%s: must be between 1 and %d", axis_flag[a], HR_MAX_N);
    }
    if (o->iters < 0) return hri_invalid_arg(w, ws, "iters: must be >= 0");
    if (!(o->tol >= 0.0) || !isfinite(o->tol))
        return hri_invalid_arg(w, ws, "tol: must be a finite value >= 0");
    if (o->tol > 0.0 && o->check_every < 1) return hri_invalid_arg(w, ws, "check: must be >= 1");
    if (!hr_prec_is_storage(o->precision))
        return hri_invalid_arg(w, ws, "precision: must be single or double");
    if ((unsigned)o->backend >= HR_BACKEND_COUNT) return hri_invalid_arg(w, ws, "backend: unknown");
    if (o->threads < 0 || o->threads > 4096)
        return hri_invalid_arg(w, ws, "threads: must be between 1 and 4096");
    if ((o->thread_rows > 0) != (o->thread_cols > 0) || o->thread_rows < 0 || o->thread_cols < 0)
        return hri_invalid_arg(w, ws, "thread-grid: give both rows and columns (each >= 1)");
    if (o->thread_rows > 0 && (long)o->thread_rows * (long)o->thread_cols > 4096)
        return hri_invalid_arg(w, ws, "thread-grid: %dx%d is %ld threads, more than 4096", o->thread_rows,
                              o->thread_cols, (long)o->thread_rows * (long)o->thread_cols);
    if (o->thread_rows > 0 && o->threads > 0 && (long)o->thread_rows * (long)o->thread_cols != o->threads)
        return hri_invalid_arg(w, ws, "thread-grid: rows x columns must equal threads");
    if (o->bind != HR_BIND_NONE && o->bind != HR_BIND_CORE)
        return hri_invalid_arg(w, ws, "bind: none or core");
    if (o->layout != HR_LAYOUT_FLAT && o->layout != HR_LAYOUT_BLOCKS)
        return hri_invalid_arg(w, ws, "layout: flat or blocks");
    HR_TRY(hri_options_rhs_check(o->rhs, w, ws));
    if (o->rhs == HR_RHS_ARRAY && !o->rhs_values) return hri_invalid_arg(w, ws, "rhs: array without values");
    if (o->init != HR_INIT_ZERO && o->init != HR_INIT_SINE && o->init != HR_INIT_ARRAY)
        return hri_invalid_arg(w, ws, "init: unknown");
    if (o->init == HR_INIT_ARRAY && !o->init_values)
        return hri_invalid_arg(w, ws, "init: array without values");
    if (!isfinite(o->boundary)) return hri_invalid_arg(w, ws, "boundary: must be finite");
    if (o->precision == HR_PREC_SINGLE && fabs(o->boundary) > 3.4e38)
        return hri_invalid_arg(w, ws, "boundary: %g does not fit in single precision", o->boundary);
    if (!hri_entry_by_id(HR_KIND_METHOD, (int)o->method, 0)) {
        char names[64], others[64]; /* the methods of this handle; the others: hr_grid_solver */
        hri_entry_names(HR_KIND_METHOD, HR_BACKEND_AUTO, 0, 0, HR_CAP_MG_HANDLE, ", ", " or ", names,
                       sizeof names);
        hri_entry_names(HR_KIND_METHOD, HR_BACKEND_AUTO, 0, HR_CAP_MG_HANDLE, 0, ", ", ", ", others,
                       sizeof others);
        return hri_invalid_arg(w, ws, "method: %s (%s and mgcg: hr_grid_solver)", names, others);
    }
    if (!(o->omega == 0.0 || (o->omega > 0.0 && o->omega < 2.0) ||
          (o->omega == HR_OMEGA_AUTO && o->method != HR_METHOD_JACOBI)))
        return hri_invalid_arg(w, ws, "omega: must be in (0, 2)%s",
                              o->method != HR_METHOD_JACOBI ? " or auto" : "");
    if (!(o->divtol == 0.0 || (o->divtol > 1.0 && !isnan(o->divtol))))
        return hri_invalid_arg(w, ws, "divtol: must be > 1");
    if (o->alpha < 1) return hri_invalid_arg(w, ws, "alpha: must be >= 1");
    if (o->monitor_every < 0) return hri_invalid_arg(w, ws, "monitor: must be >= 0");
    if (o->device < 0) return hri_invalid_arg(w, ws, "device: must be >= 0");
    if (o->flush_subnormals != 0 && o->flush_subnormals != 1)
        return hri_invalid_arg(w, ws, "flush_subnormals: 0 (keep subnormals) or 1 (flush them to zero)");
    /* hybrid backend options (src/parallel/hybrid/) */
    if (isnan(o->split) || o->split > 1.0) return hri_invalid_arg(w, ws, "split: must be in [0, 1] (or auto)");
    if (o->split_ghost < 0 || o->split_ghost > 4096)
        return hri_invalid_arg(w, ws, "split-ghost: must be between 1 and 4096");
    if (o->split_second != HR_SPLIT_GPU && o->split_second != HR_SPLIT_CPU)
        return hri_invalid_arg(w, ws, "split-second: gpu or cpu");
    if (o->split_schedule != HR_SPLIT_NESTED && o->split_schedule != HR_SPLIT_NAIVE)
        return hri_invalid_arg(w, ws, "schedule: nested or naive");
    if (o->split_boundary_threads < 0 || o->split_boundary_threads > 4096)
        return hri_invalid_arg(w, ws, "boundary-threads: must be between 1 and 4096");
    const hr_entry *k =
        o->kernel ? hri_kernel_find(hri_resolve_backend(o->backend, dim), o->kernel, dim) : NULL;
    /* --gpus N: the hybrid module's chain of N parts (src/parallel/hybrid/split.c), or a kernel that
     * runs on several GPUs itself (HR_CAP_GPUS: its check) */
    if (o->gpus < 0 || o->gpus > 16) return hri_invalid_arg(w, ws, "gpus: must be between 1 and 16");
    HR_TRY(hri_tuning_validate(&o->tuning, w, ws));
    if (o->gpus > 1 && o->backend != HR_BACKEND_HYBRID && !(k && (k->caps & HR_CAP_GPUS)))
        return hri_invalid_arg(w, ws, "gpus: several GPUs need the gpu (chain) or hybrid backend");
    if (k && k->kernel->check) return k->kernel->check(o, w, ws);
    return HR_OK;
}

void hri_thread_grid(int threads, int *rows, int *cols)
{
    int c = 1;
    for (int d = 1; (long)d * d <= threads; d++)
        if (threads % d == 0) c = d;
    *cols = c;
    *rows = threads / c;
}

hr_backend hri_resolve_backend(hr_backend b, int dim)
{
    if (b != HR_BACKEND_AUTO) return b;
    if (hri_cuda_device_count() > 0 && hri_kernel_find(HR_BACKEND_GPU, NULL, dim)) return HR_BACKEND_GPU;
    return HR_BACKEND_CPU_THREADS;
}

const char *hr_method_name(hr_method m)
{
    const hr_entry *e = hri_entry_by_id(HR_KIND_METHOD, (int)m, -1);
    /* mgcg is the command's cg --pc mg: a method of hr_grid_solver, not a --method value */
    return e ? e->name : m == HR_METHOD_MGCG ? "mgcg" : NULL;
}

/* The optimal SOR weight 2 / (1 + sqrt(1 - rho^2)), rho = mean of cos(pi / (n_a + 1)) (the
 * Jacobi spectral radius of the Dirichlet Laplacian); 2 / (1 + sin(pi h)) on a square or cube. */
static double sor_auto_omega(const hr_run_problem *p)
{
    if (p->nx == p->ny && (p->dim == 2 || p->nz == p->nx)) return 2.0 / (1.0 + sin(HR_PI * p->h));
    double rho = cos(HR_PI / (p->nx + 1.0)) + cos(HR_PI / (p->ny + 1.0));
    rho = p->dim == 3 ? (rho + cos(HR_PI / (p->nz + 1.0))) / 3.0 : rho / 2.0;
    return 2.0 / (1.0 + sqrt(1.0 - rho * rho));
}

void hri_problem_resolve(const hr_options *o, hr_run_problem *p)
{
    p->dim = hri_options_dim(o);
    p->nx = hri_options_extent(o, 0);
    p->ny = hri_options_extent(o, 1);
    p->nz = hri_options_extent(o, 2);
    int nmax = p->nx > p->ny ? p->nx : p->ny;
    if (p->nz > nmax) nmax = p->nz;
    p->h = 1.0 / ((double)nmax + 1.0);
    p->rhs = o->rhs;
    p->init = o->init;
    p->boundary = o->boundary;
    p->omega = o->omega == 0.0 ? 1.0 : o->omega;
    p->method = o->method;
    if (o->omega == HR_OMEGA_AUTO || (o->method == HR_METHOD_SOR && o->omega == 0.0))
        p->omega = sor_auto_omega(p);
    p->spike_i = p->spike_j = p->spike_k = -1;
    if (o->rhs == HR_RHS_SPIKE) {
        p->spike_i = HR_SPIKE_INDEX(p->ny);
        p->spike_j = HR_SPIKE_INDEX(p->nx);
        p->spike_k = p->dim == 3 ? HR_SPIKE_INDEX(p->nz) : 0;
    }
}
