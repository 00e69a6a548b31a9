/*
 * The one structured-grid handle (include/hetrelax/grid_solver.h): a facade that checks the
 * problem and the options once, refuses what no engine runs yet, and dispatches to the
 * engine of the method and placement: hr_solver (Jacobi, weighted, the async kernels,
 * red-black, SOR on one thread, threads, a GPU, CPU + GPU, several GPUs) and hr_mg
 * (multigrid, CG, MG-preconditioned CG on the CPU or a GPU). The MPI engines are in
 * src/parallel/mpi/grid_solver_mpi.c. Every engine is run as it is, so every combination is
 * bitwise the engine's own run.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/grid_solver_internal.h"
#include "core/precision.h"
#include "core/solver_internal.h"
#include "core/timer.h"
#include "core/tuning.h"
#include "hetrelax/hybrid.h"
#include "methods/mg/mg_handle.h"
#include "methods/stencil/stencil_kernels.h"
#include "parallel/threads/general_parts.h"
#include "runtime/cpu/fpmode.h"
#include "runtime/cuda/cuda_api.h"

#define MAX_THREADS 4096
#define MAX_GPUS    16
/* two spacings within this (relative) are one: the lengths' arithmetic rounds */
#define SPACING_RTOL 1e-12

/* ------------------------------------------------------------------ small things */

void hr_grid_options_default(hr_grid_options *o)
{
    if (o) memset(o, 0, sizeof *o);
}

const char *hr_cycle_name(hr_cycle c)
{
    return (unsigned)c <= HR_CYCLE_FMG ? hr_mg_cycle_name(c) : NULL;
}

void hri_gs_set_error(hr_grid_solver *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
}

const char *hr_grid_solver_last_error(const hr_grid_solver *s)
{
    return s ? s->err : "";
}

static int is_mg_method(hr_method m)
{
    return m == HR_METHOD_MG || m == HR_METHOD_CG || m == HR_METHOD_MGCG;
}

static int uses_levels(hr_method m)
{
    return m == HR_METHOD_MG || m == HR_METHOD_MGCG;
}

/* k with n = 2^k - 1, or 0. */
static int pow2m1(int n)
{
    return n >= 1 && ((unsigned)n & ((unsigned)n + 1u)) == 0;
}

static int next_pow2m1(int n)
{
    unsigned v = (unsigned)n;
    for (int sh = 1; sh < 32; sh <<= 1)
        v |= v >> sh;
    return (int)v;
}

/* The multigrid smoother named `name` (NULL: the registry's default), or -1. */
static int smoother_of(const char *name)
{
    const hr_entry *e = hri_entry_find(HR_KIND_SMOOTHER, HR_BACKEND_AUTO, name, 0);
    return e ? e->id : -1;
}

/* ------------------------------------------------------------------ checks */

#define BAD(...)     return hri_invalid_arg(w, ws, __VA_ARGS__)
#define NOT_YET(...) return (hri_invalid_arg(w, ws, __VA_ARGS__), HR_ERR_UNSUPPORTED)
#define AXIS(a)      ((a) == 0 ? "x" : (a) == 1 ? "y" : "z")

/* The options' values, each on its own. */
static hr_status check_values(const hr_grid_options *o, char *w, size_t ws)
{
    if ((unsigned)o->method >= HR_METHOD_COUNT) BAD("method: unknown (%d)", (int)o->method);
    if ((unsigned)o->precision > HR_PREC_MIXED) BAD("precision: unknown (%d)", (int)o->precision);
    if (!(o->omega == 0.0 || o->omega == HR_OMEGA_AUTO || (o->omega > 0.0 && o->omega < 2.0)))
        BAD("omega: must be in (0, 2), 0 (the method's default) or HR_OMEGA_AUTO (got %g)", o->omega);
    if (o->kernel && strlen(o->kernel) >= 32) BAD("kernel: unknown ('%.40s...')", o->kernel);
    if (o->alpha < 0) BAD("alpha: must be >= 1 (0: 1)");
    if ((unsigned)o->cycle > HR_CYCLE_FMG) BAD("cycle: unknown (%d)", (int)o->cycle);
    if (o->pre < HR_NONE || o->post < HR_NONE || o->pre > 64 || o->post > 64)
        BAD("%s: must be between 1 and 64 (0: 2; HR_NONE: none)",
            o->pre < HR_NONE || o->pre > 64 ? "pre" : "post");
    if (o->smoother && smoother_of(o->smoother) < 0) {
        char names[128];
        hri_entry_names(HR_KIND_SMOOTHER, HR_BACKEND_AUTO, 0, 0, 0, ", ", ", ", names, sizeof names);
        BAD("smoother: unknown '%.40s' (%s)", o->smoother, names);
    }
    if (o->levels < 0) BAD("levels: must be >= 1 (0: all)");
    if ((unsigned)o->backend >= HR_BACKEND_COUNT) BAD("backend: unknown (%d)", (int)o->backend);
    if (o->threads < 0 || o->threads > MAX_THREADS)
        BAD("threads: must be between 1 and %d (0: one per core)", MAX_THREADS);
    if (o->bind != HR_BIND_NONE && o->bind != HR_BIND_CORE) BAD("bind: none or core");
    if (o->device < 0) BAD("device: must be >= 0");
    if (o->gpus < 0 || o->gpus > MAX_GPUS) BAD("gpus: must be between 1 and %d", MAX_GPUS);
    if (!(o->split == 0.0 || o->split == HR_SPLIT_AUTO || o->split == HR_SPLIT_STREAM ||
          (o->split > 0.0 && o->split <= 1.0)))
        BAD("split: must be in (0, 1], 0 (the model's choice) or HR_SPLIT_STREAM (got %g)", o->split);
    for (int a = 0; a < 3; a++)
        if (o->decomp[a] < 0) BAD("decomp: parts must be >= 1 (0: chosen)");
    if (o->ghost < 0) BAD("ghost: must be >= 1 (0: 1)");
    if (o->transport < 0) BAD("transport: unknown (%d)", o->transport);
    if (!(o->tol >= 0.0) || !isfinite(o->tol)) BAD("tol: must be a finite value >= 0");
    if (o->max_iters < 0) BAD("max_iters: must be >= 0 (0: the method's default)");
    if (o->check_every < 0) BAD("check_every: must be >= 0 (0: 100)");
    if (!(o->divtol == 0.0 || (o->divtol > 1.0 && !isnan(o->divtol)))) BAD("divtol: must be > 1 (0: 1e3)");
    if (o->monitor_every < 0) BAD("monitor_every: must be >= 0");
    {
        char why[200];
        if (hri_tuning_validate(&o->tuning, why, sizeof why) != HR_OK) BAD("%s", why);
    }
    if (o->flush_subnormals != 0 && o->flush_subnormals != 1)
        BAD("flush_subnormals: 0 (keep subnormals) or 1 (flush them to zero)");
    if (o->flush_subnormals && !HR_FP_CAN_FLUSH)
        NOT_YET(
            "flush_subnormals: this CPU architecture has no flush-to-zero switch the library knows (x86-64 "
            "and aarch64 have)");
    return HR_OK;
}

/* Today's engines run the model problem: Dirichlet with one value on every face, a = 1, one
 * spacing on every axis. *scale: the right-hand side's factor when that spacing is not the
 * model's 1 / (max extent + 1) (the engines scale f by their own h^2). */
static hr_status check_model(const hr_problem *p, double *scale, char *w, size_t ws)
{
    for (int f = 0; f < 2 * p->dim; f++) {
        const hr_bc *b = &p->bc[f];
        if (b->kind == HR_BC_PERIODIC)
            NOT_YET("bc: periodic axes (%s) are not built yet: Dirichlet on every face so far", AXIS(f / 2));
        if (b->kind == HR_BC_NEUMANN)
            NOT_YET("bc: Neumann faces (%s) are not built yet: Dirichlet on every face so far",
                    hr_face_name((hr_face)f));
        if (b->values)
            NOT_YET(
                "bc: Dirichlet values per point (face %s) are not built yet: one value on every face so far",
                hr_face_name((hr_face)f));
        if (b->value != p->bc[0].value)
            NOT_YET(
                "bc: faces with different Dirichlet values (x- %g, %s %g) are not built yet: one value on "
                "every face so far",
                p->bc[0].value, hr_face_name((hr_face)f), b->value);
    }
    if (p->coef_values) NOT_YET("coef: a coefficient field is not built yet: a = 1 so far");
    if (p->coef != 1.0) NOT_YET("coef: a constant coefficient other than 1 (%g) is not built yet", p->coef);
    int nmax = 1;
    for (int a = 0; a < p->dim; a++)
        nmax = p->n[a] > nmax ? p->n[a] : nmax;
    const double h = hr_problem_spacing(p, 0);
    for (int a = 1; a < p->dim; a++) {
        const double ha = hr_problem_spacing(p, a);
        if (fabs(ha - h) > SPACING_RTOL * h)
            NOT_YET(
                "length: spacings that differ per axis (h_x %.6g, h_%s %.6g) are not built yet: one spacing "
                "on every axis so far (L_a = (n_a + 1) h)",
                h, AXIS(a), ha);
    }
    const double he = 1.0 / ((double)nmax + 1.0);
    *scale = fabs(h - he) <= SPACING_RTOL * he ? 1.0 : (h / he) * (h / he);
    return HR_OK;
}

/* The first multigrid field a request sets (cycle, smoother, levels, pre, post), or NULL. */
static const char *mg_field(const hr_grid_options *o)
{
    return o->cycle      ? "cycle"
           : o->smoother ? "smoother"
           : o->levels   ? "levels"
           : o->pre      ? "pre"
           : o->post     ? "post"
                         : NULL;
}

/* What cg and mgcg take of the multigrid fields, on every engine. */
static hr_status check_mg_fields(const hr_grid_options *o, char *w, size_t ws)
{
    if (o->method == HR_METHOD_CG && mg_field(o)) BAD("%s: cg has no multigrid (mgcg has)", mg_field(o));
    if (o->method == HR_METHOD_MGCG && o->cycle != HR_CYCLE_V) BAD("cycle: mgcg applies one V-cycle");
    if (o->method == HR_METHOD_MGCG && o->pre != o->post)
        BAD("post: mgcg needs post == pre (a symmetric V-cycle)");
    return HR_OK;
}

/* The backend `auto` resolves to for the method (MPI ranks: a GPU each, else one thread each). */
static hr_backend resolve_backend(const hr_grid_options *o, int dim, int mpi)
{
    if (o->backend != HR_BACKEND_AUTO) return o->backend;
    if (mpi) return hri_cuda_device_count() > 0 ? HR_BACKEND_GPU : HR_BACKEND_CPU_SEQ;
    if (o->gpus > 1) return HR_BACKEND_GPU;
    if (is_mg_method(o->method))
        return hri_cuda_device_count() > o->device ? HR_BACKEND_GPU : HR_BACKEND_CPU_THREADS;
    return hri_resolve_backend(HR_BACKEND_AUTO, dim);
}

/* What the method and the placement cannot do together (yet). */
static hr_status check_combination(const hr_grid_solver *s, int mpi, char *w, size_t ws)
{
    const hr_grid_options *o = &s->o;
    const hr_problem *p = &s->p;
    const hr_method m = o->method;
    const hr_backend b = s->backend;
    const char *mname = hr_method_name(m);
    if (!mpi && (o->decomp[0] || o->decomp[1] || o->decomp[2] || o->ghost || o->transport))
        BAD("%s: for MPI ranks (hr_grid_solver_create_mpi)", o->ghost       ? "ghost"
                                                             : o->transport ? "transport"
                                                                            : "decomp");
    if (o->split != 0.0 && b != HR_BACKEND_HYBRID) BAD("split: for backend hybrid (CPU + GPU)");
    if (o->gpus > 1 && b != HR_BACKEND_GPU)
        BAD("gpus: several GPUs of this process run with backend gpu (not %s)", hr_backend_name(b));
    if (is_mg_method(m)) {
        if (o->kernel)
            BAD("kernel: names a relaxation kernel; %s picks its smoother (options.smoother)", mname);
        if (o->alpha) BAD("alpha: for relaxation kernels with HR_CAP_ALPHA, not %s", mname);
        HR_TRY(check_mg_fields(o, w, ws));
        if (m == HR_METHOD_MGCG && o->smoother && smoother_of(o->smoother) == HR_MG_SMOOTH_ASYNC)
            BAD("smoother: async3 is neither symmetric nor deterministic: not for mgcg");
        if (o->omega == HR_OMEGA_AUTO)
            BAD("omega: auto is the sor weight (%s takes its Jacobi smoother's weight)", mname);
        if (mpi) NOT_YET("method: %s runs in one process so far (MPI ranks: jacobi)", mname);
        if (b == HR_BACKEND_HYBRID)
            NOT_YET("backend: %s runs on the CPU or one GPU so far (not hybrid)", mname);
        if (o->gpus > 1) NOT_YET("gpus: %s runs on one GPU so far", mname);
        if (p->init != HR_INIT_ZERO) NOT_YET("init: %s starts from a zero guess so far", mname);
        if (o->divtol != 0.0)
            NOT_YET("divtol: %s has its own divergence test so far (1e3 x the initial residual)", mname);
        if (o->bind != HR_BIND_NONE) NOT_YET("bind: %s runs its threads unbound so far", mname);
        if (uses_levels(m))
            for (int a = 0; a < p->dim; a++)
                if (!pow2m1(p->n[a]))
                    NOT_YET("n%s: %s runs 2^k - 1 points per axis so far (got %d; next: %d)", AXIS(a), mname,
                            p->n[a], next_pow2m1(p->n[a]));
        return HR_OK;
    }
    if (o->precision == HR_PREC_MIXED)
        BAD("precision: mixed is for mg, cg and mgcg (%s: single or double)", mname);
    if (mg_field(o)) BAD("%s: for mg and mgcg (not %s)", mg_field(o), mname);
    if (b == HR_BACKEND_HYBRID) {
        if (m != HR_METHOD_JACOBI)
            NOT_YET("method: %s on CPU + GPU (backend hybrid) is not built yet (jacobi)", mname);
        if (o->kernel) BAD("kernel: backend hybrid runs its own split kernel");
    }
    if (mpi) {
        if (m != HR_METHOD_JACOBI) NOT_YET("method: %s on MPI ranks is not built yet (jacobi)", mname);
        if (o->kernel)
            BAD("kernel: MPI ranks sweep with the region sweeps (cpu-seq) or tuned's box form (gpu)");
        if (b == HR_BACKEND_CPU_THREADS)
            NOT_YET("backend: cpu-threads on MPI ranks is not built yet (each rank sweeps on one thread: "
                    "cpu-seq)");
        if (o->gpus > 1) BAD("gpus: MPI ranks run one GPU each");
        if (b == HR_BACKEND_HYBRID &&
            (o->decomp[0] || o->decomp[1] || o->decomp[2] || o->ghost || o->transport))
            BAD("%s: backend hybrid on ranks cuts one slab per rank (slowest axis, its own halo)",
                o->ghost       ? "ghost"
                : o->transport ? "transport"
                               : "decomp");
    } else if (b == HR_BACKEND_GPU && o->gpus > 1) {
        if (m == HR_METHOD_JACOBI && o->kernel)
            BAD("kernel: jacobi on several GPUs runs the chain's own kernel (leave kernel NULL)");
        if (m != HR_METHOD_JACOBI && o->kernel) {
            const hr_entry *k = hri_kernel_find(HR_BACKEND_GPU, o->kernel, p->dim);
            if (k && !(k->caps & HR_CAP_GPUS))
                BAD("kernel: %s runs on one GPU (gpus > 1 takes a kernel of HR_CAP_GPUS)", o->kernel);
        }
        if (m != HR_METHOD_JACOBI && !o->kernel) {
            int found = 0;
            for (int i = 0; hri_entry_at(HR_KIND_KERNEL, i); i++) {
                const hr_entry *k = hri_entry_at(HR_KIND_KERNEL, i);
                const unsigned need = HR_CAP_GPUS | HR_CAP_REDBLACK | (p->dim == 3 ? HR_CAP_3D : HR_CAP_2D);
                found |= k->backend == HR_BACKEND_GPU && (k->caps & need) == need;
            }
            if (!found) NOT_YET("gpus: this build has no %d-D %s kernel for several GPUs", p->dim, mname);
        }
    }
    return HR_OK;
}

/* What makes p a general problem (for messages), into buf. */
static const char *general_why(const hr_problem *p, const hr_grid_options *o, char *buf, size_t size)
{
    for (int f = 0; f < 2 * p->dim; f++) {
        const hr_bc *b = &p->bc[f];
        if (b->kind == HR_BC_PERIODIC) return snprintf(buf, size, "periodic %s", AXIS(f / 2)), buf;
        if (b->kind == HR_BC_NEUMANN)
            return snprintf(buf, size, "Neumann face %s", hr_face_name((hr_face)f)), buf;
        if (b->values)
            return snprintf(buf, size, "Dirichlet values per point on %s", hr_face_name((hr_face)f)), buf;
        if (b->value != p->bc[0].value)
            return snprintf(buf, size, "Dirichlet values that differ per face"), buf;
    }
    if (p->coef_values) return snprintf(buf, size, "a coefficient field"), buf;
    if (p->coef != 1.0) return snprintf(buf, size, "coefficient %g", p->coef), buf;
    if (p->rhs == HR_RHS_RANDOM) return snprintf(buf, size, "a random right-hand side"), buf;
    if (!hr_problem_is_model(p)) return snprintf(buf, size, "spacings that differ per axis"), buf;
    for (int a = 0; a < p->dim; a++)
        if (uses_levels(o->method) && !pow2m1(p->n[a]))
            return snprintf(buf, size, "n%s %d (not 2^k - 1) for %s", AXIS(a), p->n[a],
                            hr_method_name(o->method)),
                   buf;
    return snprintf(buf, size, "the model problem"), buf;
}

/* What the general-problem engine (methods/stencil) cannot do (yet). */
static hr_status check_general(const hr_grid_solver *s, int mpi, char *w, size_t ws)
{
    const hr_grid_options *o = &s->o;
    const hr_problem *p = &s->p;
    const hr_method m = o->method;
    const char *mname = hr_method_name(m);
    char why[96];
    general_why(p, o, why, sizeof why);
    if (!mpi && (o->decomp[0] || o->decomp[1] || o->decomp[2] || o->ghost || o->transport))
        BAD("%s: for MPI ranks (hr_grid_solver_create_mpi)", o->ghost       ? "ghost"
                                                             : o->transport ? "transport"
                                                                            : "decomp");
    if (mpi && (o->decomp[0] || o->decomp[1] || o->decomp[2] || o->ghost > 1))
        BAD("%s: general problems on MPI ranks cut one slab of the last axis per rank, one halo row",
            o->ghost > 1 ? "ghost" : "decomp");
    if (mpi && o->transport && s->backend != HR_BACKEND_GPU)
        BAD("transport: for GPU ranks (this run has backend %s)", hr_backend_name(s->backend));
    if (mpi && o->transport && o->transport != 1 && o->transport != 3) { /* hr_mpi_transport: host, nccl */
        static const char *const tn[] = {"auto", "host", "device", "nccl", "peer"};
        char got[16];
        if (o->transport < 5)
            snprintf(got, sizeof got, "%s", tn[o->transport]);
        else
            snprintf(got, sizeof got, "%d", o->transport);
        BAD("transport: general problems on GPU ranks take auto, host or nccl (got %s)", got);
    }
    if (mpi && s->backend != HR_BACKEND_CPU_SEQ && s->backend != HR_BACKEND_CPU_THREADS &&
        s->backend != HR_BACKEND_GPU)
        NOT_YET("backend: general problems on MPI ranks run cpu-seq, cpu-threads or gpu per rank (this one "
                "has %s)",
                why);
    if (o->split != 0.0) BAD("split: for backend hybrid (CPU + GPU)");
    if (o->gpus > 1 && mpi) BAD("gpus: MPI ranks take one GPU each (several GPUs per process: one process)");
    if (o->gpus > 1 && s->backend != HR_BACKEND_GPU)
        BAD("gpus: %d GPUs need backend gpu (this run has %s)", o->gpus, hr_backend_name(s->backend));
    if (o->gpus > 1 && hr_st_has_cuda() && hri_cuda_device_count() < o->device + o->gpus)
        return (hri_invalid_arg(w, ws, "gpus: devices %d to %d, but %d found", o->device,
                                o->device + o->gpus - 1, hri_cuda_device_count()),
                HR_ERR_NO_DEVICE);
    if (s->backend == HR_BACKEND_GPU && !mpi && !hr_st_has_cuda())
        NOT_YET("backend: gpu: this build has no CUDA (this problem runs on cpu-seq or cpu-threads)");
    if (s->backend == HR_BACKEND_GPU && !mpi && hri_cuda_device_count() <= o->device)
        return (hri_invalid_arg(w, ws, "device: no CUDA device %d here (%d found)", o->device,
                                hri_cuda_device_count()),
                HR_ERR_NO_DEVICE);
    if (s->backend == HR_BACKEND_HYBRID)
        NOT_YET("backend: hybrid runs the model problem only (this one has %s): cpu-seq or cpu-threads", why);
    if (o->kernel && strcmp(o->kernel, "general") != 0) {
        int known = 0; /* a kernel of some backend and dimension, or none at all */
        hr_entry_info k;
        for (int i = 0; hr_registry_info_at(HR_KIND_KERNEL, i, &k) == HR_OK; i++)
            known |= strcmp(k.name, o->kernel) == 0;
        if (!known) BAD("kernel: unknown '%.40s' (general problems run the kernel general)", o->kernel);
        BAD("kernel: %s runs the model problem only (this one has %s): leave the kernel unset (general)",
            o->kernel, why);
    }
    if (o->alpha) BAD("alpha: the asynchronous kernels run the model problem only (this one has %s)", why);
    if ((o->precision == HR_PREC_SINGLE || o->precision == HR_PREC_MIXED) && mpi && hr_problem_is_model(p))
        NOT_YET("precision: %s: %s on MPI ranks runs in double so far", hr_precision_name(o->precision),
                mname);
    if (o->precision == HR_PREC_SINGLE || o->precision == HR_PREC_MIXED)
        NOT_YET("precision: %s: general problems (%s) run in double so far", hr_precision_name(o->precision),
                why);
    if (is_mg_method(m)) {
        HR_TRY(check_mg_fields(o, w, ws));
        if (o->smoother && smoother_of(o->smoother) == HR_MG_SMOOTH_ASYNC)
            BAD("smoother: async3 runs the model problem on a GPU only (this one has %s)", why);
        if (o->omega == HR_OMEGA_AUTO)
            BAD("omega: auto is the sor weight (%s takes its Jacobi smoother's weight)", mname);
        return HR_OK;
    }
    if (mg_field(o)) BAD("%s: for mg and mgcg (not %s)", mg_field(o), mname);
    if (m == HR_METHOD_JACOBI && o->omega == HR_OMEGA_AUTO) BAD("omega: auto is the sor weight");
    if (m == HR_METHOD_JACOBI && (o->omega == 0.0 || o->omega == 1.0) && hr_problem_is_singular(p))
        BAD("method: plain jacobi does not converge without a Dirichlet face (its checkerboard mode): take "
            "omega < 1, redblack, sor, cg or mg");
    return HR_OK;
}

/* The red-black kernel that runs on several GPUs (the first of the table). */
static const char *multi_gpu_rb_kernel(int dim)
{
    const unsigned need = HR_CAP_GPUS | HR_CAP_REDBLACK | (dim == 3 ? HR_CAP_3D : HR_CAP_2D);
    for (int i = 0; hri_entry_at(HR_KIND_KERNEL, i); i++) {
        const hr_entry *k = hri_entry_at(HR_KIND_KERNEL, i);
        if (k->backend == HR_BACKEND_GPU && (k->caps & need) == need) return k->name;
    }
    return NULL;
}

static double *copy_scaled(const double *v, size_t count, double scale)
{
    double *c = malloc(count * sizeof *c);
    if (!c) return NULL;
    if (scale == 1.0)
        memcpy(c, v, count * sizeof *c);
    else
        for (size_t i = 0; i < count; i++)
            c[i] = v[i] * scale;
    return c;
}

void hri_gs_free(hr_grid_solver *s)
{
    if (!s) return;
    free(s->rhs);
    free(s->init);
    free(s->eng_rhs);
    hri_history_free(&s->hist);
    free(s);
}

hr_status hri_gs_prepare(const hr_problem *p, const hr_grid_options *o, int mpi, hr_grid_solver **out,
                         char *w, size_t ws)
{
    *out = NULL;
    if (!p) BAD("problem: NULL");
    if (!o) BAD("options: NULL");
    HR_TRY(hr_problem_validate(p, w, ws));
    HR_TRY(check_values(o, w, ws));
    double scale = 1.0;
    /* the general-problem engine: what the model engines do not run, or asked for by name */
    int general = !hr_problem_is_model(p) || (o->kernel && strcmp(o->kernel, "general") == 0);
    /* on MPI ranks the model problem's red-black, SOR, CG and multigrid run on the general engine too */
    if (mpi && !o->kernel &&
        (o->method == HR_METHOD_REDBLACK || o->method == HR_METHOD_SOR || o->method == HR_METHOD_CG ||
         o->method == HR_METHOD_MG || o->method == HR_METHOD_MGCG))
        general = 1;
    /* several GPUs of one process: the model problem's CG and multigrid run on the general
     * engine's slabs (its Jacobi and red-black keep their own GPU chains) */
    if (!mpi && !o->kernel && o->gpus > 1 &&
        (o->method == HR_METHOD_CG || o->method == HR_METHOD_MG || o->method == HR_METHOD_MGCG))
        general = 1;
    if (!general) HR_TRY(check_model(p, &scale, w, ws));
    for (int a = 0; a < p->dim && !general; a++)
        general = uses_levels(o->method) && !pow2m1(p->n[a]);
    hr_grid_solver *s = calloc(1, sizeof *s);
    if (!s) BAD("problem: no memory for the handle");
    s->p = *p;
    s->o = *o;
    s->count = hr_problem_unknowns(p);
    s->rhs_scale = scale;
    s->general = general;
    /* auto: a general problem runs on the GPU where there is one (every method has its kernels there) */
    s->backend = general && o->backend == HR_BACKEND_AUTO && !mpi
                     ? (hri_cuda_device_count() > o->device ? HR_BACKEND_GPU : HR_BACKEND_CPU_THREADS)
                     : resolve_backend(o, p->dim, mpi);
    s->prec = o->precision == HR_PREC_DEFAULT ? HR_PREC_DOUBLE : o->precision;
    hr_status st = general ? check_general(s, mpi, w, ws) : check_combination(s, mpi, w, ws);
    if (st != HR_OK) {
        hri_gs_free(s);
        return st;
    }
    if (o->kernel) {
        snprintf(s->kernel, sizeof s->kernel, "%s", o->kernel);
        s->o.kernel = s->kernel;
    }
    if (o->smoother) {
        snprintf(s->smoother, sizeof s->smoother, "%s", o->smoother);
        s->o.smoother = s->smoother;
    }
    s->max_iters = o->max_iters > 0 ? o->max_iters : o->method == HR_METHOD_MG ? 100 : 1000;
    s->p.rhs_values = s->p.init_values = NULL;
    s->p.coef_values = NULL;
    for (int f = 0; f < HR_FACE_COUNT; f++)
        s->p.bc[f].values = NULL; /* the general engine keeps its own copies */
    if (p->rhs == HR_RHS_ARRAY && !(s->rhs = copy_scaled(p->rhs_values, s->count, scale))) goto nomem;
    if (p->init == HR_INIT_ARRAY && !(s->init = copy_scaled(p->init_values, s->count, 1.0))) goto nomem;
    s->p.rhs_values = s->rhs;
    s->p.init_values = s->init;
    s->info.method = o->method;
    s->info.precision = s->prec;
    s->info.backend = s->backend;
    s->info.ranks = 1;
    s->info.general = general;
    s->info.singular = hr_problem_is_singular(p);
    /* the GPU keeps subnormals (at full speed); a hybrid split flushing its CPU part only would
     * match neither the GPU alone nor cpu-seq */
    s->info.flush_subnormals =
        o->flush_subnormals && (s->backend == HR_BACKEND_CPU_SEQ || s->backend == HR_BACKEND_CPU_THREADS);
    *out = s;
    return HR_OK;
nomem:
    hri_gs_free(s);
    return (hri_invalid_arg(w, ws, "problem: the arrays' copies do not fit in memory"), HR_ERR_NO_MEMORY);
}

void hri_gs_relax_options(const hr_grid_solver *s, const double *rhs, const double *x0, hr_options *eo)
{
    const hr_grid_options *o = &s->o;
    const hr_problem *p = &s->p;
    hr_options_default(eo);
    eo->dim = p->dim;
    eo->n = p->n[0];
    eo->nx = p->n[0];
    eo->ny = p->n[1];
    eo->nz = p->dim == 3 ? p->n[2] : 0;
    eo->iters = s->max_iters;
    eo->tol = o->tol;
    eo->check_every = o->check_every > 0 ? o->check_every : 100;
    eo->precision = s->prec;
    eo->backend = s->backend;
    eo->kernel = o->kernel;
    eo->threads = s->backend == HR_BACKEND_CPU_SEQ ? 1 : o->threads;
    eo->bind = o->bind;
    eo->rhs = rhs ? HR_RHS_ARRAY : p->rhs;
    eo->rhs_values = rhs ? rhs : p->rhs_values;
    eo->init = x0 ? HR_INIT_ARRAY : p->init;
    eo->init_values = x0 ? x0 : p->init_values;
    eo->boundary = p->bc[0].value;
    eo->omega = o->omega;
    eo->divtol = o->divtol;
    eo->tuning = o->tuning;
    eo->alpha = o->alpha > 0 ? o->alpha : 1;
    eo->monitor = o->monitor;
    eo->monitor_user = o->monitor_user;
    eo->monitor_every = !o->monitor ? 0 : o->monitor_every > 0 ? o->monitor_every : eo->check_every;
    eo->keep_history = o->keep_history;
    eo->flush_subnormals = s->info.flush_subnormals;
    eo->device = o->device;
    eo->method = o->method;
    eo->split = o->split == 0.0 ? HR_SPLIT_AUTO : o->split;
    eo->split_second = HR_SPLIT_GPU;
    if (s->backend == HR_BACKEND_GPU && o->gpus > 1) {
        eo->gpus = o->gpus;
        if (o->method == HR_METHOD_JACOBI) {
            eo->backend = HR_BACKEND_HYBRID; /* the chain of GPU slabs lives in the hybrid module */
            eo->kernel = NULL;
        } else if (!o->kernel) {
            eo->kernel = multi_gpu_rb_kernel(p->dim);
        }
    }
}

hr_status hri_gs_take_rhs(hr_grid_solver *s, const double *rhs)
{
    if (!s->eng_rhs && !(s->eng_rhs = malloc(s->count * sizeof *s->eng_rhs))) {
        hri_gs_set_error(s, "rhs: no memory for the copy");
        return HR_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < s->count; i++)
        s->eng_rhs[i] = s->rhs_scale == 1.0 ? rhs[i] : rhs[i] * s->rhs_scale;
    return HR_OK;
}

int hri_gs_same_rhs(const hr_grid_solver *s, const double *rhs)
{
    if (!s->eng_has_rhs || s->eng_rhs_device) return 0;
    for (size_t i = 0; i < s->count; i++) {
        const double v = s->rhs_scale == 1.0 ? rhs[i] : rhs[i] * s->rhs_scale;
        if (memcmp(&v, &s->eng_rhs[i], sizeof v) != 0) return 0; /* bits: -0 and NaN too */
    }
    return 1;
}

void hri_gs_finish_result(const hr_grid_solver *s, hr_result *r)
{
    r->method = s->o.method;
    r->precision = s->prec;
    r->ranks = s->info.ranks;
    if (!is_mg_method(s->o.method)) {
        r->levels = 0;
        r->convergence_factor = r->last_factor = NAN;
    }
}

int hri_gs_enter(hr_grid_solver *s)
{
    if (__atomic_exchange_n(&s->running, 1, __ATOMIC_ACQ_REL) == 0) return 1;
    hri_gs_set_error(s, "hr_grid_solver_solve: called during a solve of the same handle (from its monitor or "
                        "another thread)");
    return 0;
}

void hri_gs_leave(hr_grid_solver *s)
{
    __atomic_store_n(&s->running, 0, __ATOMIC_RELEASE);
}

/* A set-up inside a solve must not change the thread's last error (that is create's). */
typedef struct {
    char text[HR_LAST_ERROR_SIZE];
} saved_error;

static void save_error(saved_error *e)
{
    memcpy(e->text, hri_last_error_buf(), sizeof e->text);
}

static void restore_error(const saved_error *e)
{
    memcpy(hri_last_error_buf(), e->text, sizeof e->text);
}

/* ------------------------------------------------------------------ relaxation: hr_solver */

/* Sets the relaxation engine up (again) with f = rhs (scaled; NULL: the problem's) and the
 * initial guess x0 (NULL: the problem's). */
static hr_status relax_setup(hr_grid_solver *s, const double *rhs, const double *x0)
{
    hr_options eo;
    hri_gs_relax_options(s, rhs, x0, &eo);
    hr_solver *old = s->engine, *e = NULL;
    s->engine = NULL; /* a stop request sees no engine while it changes */
    hr_solver_free(old);
    saved_error keep;
    save_error(&keep);
    const hr_status st = hr_solver_create(&eo, &e);
    if (st != HR_OK) hri_gs_set_error(s, "%s", hr_last_error());
    restore_error(&keep);
    if (st != HR_OK) return st;
    s->engine = e;
    s->eng_has_rhs = rhs != NULL;
    s->eng_rhs_device = 0;
    s->fresh = x0 == NULL;
    if (s->stop) hr_solver_request_stop(e);
    return HR_OK;
}

/* The problem's initial guess as an array (the engine's own arithmetic for the sine). */
static double *initial_values(const hr_grid_solver *s)
{
    const hr_problem *p = &s->p;
    double *v = calloc(s->count ? s->count : 1, sizeof *v);
    if (!v) return NULL;
    if (p->init == HR_INIT_ARRAY) {
        memcpy(v, s->init, s->count * sizeof *v);
    } else if (p->init == HR_INIT_SINE) {
        const hr_run_problem *rp = &((const hr_solver *)s->engine)->p;
        size_t x = 0;
        for (int k = p->dim == 3 ? 1 : 0; k < (p->dim == 3 ? p->n[2] + 1 : 1); k++)
            for (int i = 1; i <= p->n[1]; i++)
                for (int j = 1; j <= p->n[0]; j++)
                    v[x++] = hri_problem_init_at(rp, NULL, i, j, k);
    }
    return v;
}

/* Back to the initial guess (x0, or the problem's) in place where the kernel can restart
 * from a solution (the deterministic ones), else by a new set-up. */
static hr_status relax_restart(hr_grid_solver *s, const double *x0)
{
    const double *rhs = s->eng_has_rhs ? s->eng_rhs : NULL;
    double *init = x0 ? NULL : initial_values(s);
    if (!x0 && !init) {
        hri_gs_set_error(s, "init: no memory for the initial guess");
        return HR_ERR_NO_MEMORY;
    }
    hr_status st = hr_solver_set_solution(s->engine, HR_PREC_DOUBLE, x0 ? x0 : init, s->count, 0);
    free(init);
    if (st == HR_OK) {
        s->fresh = x0 == NULL;
        return HR_OK;
    }
    if (st != HR_ERR_UNSUPPORTED) {
        hri_gs_set_error(s, "%s", hr_solver_last_error(s->engine));
        return st;
    }
    return relax_setup(s, rhs, x0); /* a kernel that keeps state it cannot restart from */
}

static hr_status relax_solve(hr_grid_solver *s, const double *rhs, const double *x0, hr_result *res)
{
    hr_status st = HR_OK;
    int setup = !s->engine;
    if (rhs && !hri_gs_same_rhs(s, rhs)) {
        HR_TRY(hri_gs_take_rhs(s, rhs));
        setup = 1;
    } else if (!rhs && s->eng_has_rhs) {
        setup = 1;
    }
    if (setup)
        st = relax_setup(s, rhs ? s->eng_rhs : NULL, x0);
    else if (x0 || !s->fresh)
        st = relax_restart(s, x0);
    if (st != HR_OK) return st;
    hr_result r;
    st = hr_solver_run(s->engine, &r);
    s->fresh = 0;
    s->stop = 0; /* a request is answered by the solve it stopped, or dropped at its end */
    if (st != HR_OK && st != HR_ERR_DIVERGED) {
        hri_gs_set_error(s, "%s", hr_solver_last_error(s->engine));
        return st;
    }
    hri_gs_finish_result(s, &r);
    if (res) *res = r;
    return st;
}

static hr_status relax_solution(const hr_grid_solver *s, hr_precision prec, void *dst, size_t count)
{
    if (!s->engine) return HR_ERR_INVALID_ARG;
    return hr_solver_solution(s->engine, prec, dst, count);
}

static size_t relax_history(const hr_grid_solver *s, const long **iters, const double **res)
{
    return hr_solver_history(s->engine, iters, res);
}

static void relax_request_stop(hr_grid_solver *s)
{
    hr_solver *e = s->engine;
    if (e) hr_solver_request_stop(e);
}

static void relax_release(hr_grid_solver *s)
{
    hr_solver_free(s->engine);
    s->engine = NULL;
}

/* Arrays in the GPU's memory: written into the kernel's device grids after whatever set-up
 * the solve needs, the solution read out of them; the run leaves it there. */
static hr_status relax_solve_device(hr_grid_solver *s, const hr_device_arrays *a, hr_result *res)
{
    const int single = a->prec == HR_PREC_SINGLE;
    const hr_solver *e = s->engine;
    if (e && !hri_solver_takes_device(e)) {
        hri_gs_set_error(s, "device arrays: kernel %s takes host arrays only (hr_grid_solver_solve)",
                         s->info.kernel);
        return HR_ERR_UNSUPPORTED;
    }
    /* a set-up with an h^2 f grid for a->rhs (the problem's own f, or zeros to be overwritten),
     * or the problem's f back; a kernel that cannot restart starts again too */
    int setup = !e || (a->rhs ? !hri_solver_has_rhs_grid(e) : s->eng_has_rhs) ||
                (!s->fresh && !hri_solver_can_restart(e));
    hr_status st = HR_OK;
    if (setup) {
        double *zeros = NULL;
        if (a->rhs && (s->p.rhs == HR_RHS_ZERO || s->p.rhs == HR_RHS_SPIKE) &&
            !(zeros = calloc(s->count ? s->count : 1, sizeof *zeros))) {
            hri_gs_set_error(s, "rhs: no memory for the set-up");
            return HR_ERR_NO_MEMORY;
        }
        st = relax_setup(s, zeros, NULL);
        free(zeros);
        s->eng_has_rhs = 0;
    } else if (!a->x0 && !s->fresh) {
        st = relax_restart(s, NULL);
    }
    if (st != HR_OK) return st;
    hr_solver *en = s->engine;
    if (a->x0) {
        st = hri_solver_device_io(en, HR_DEVIO_X0, (void *)a->x0, single, 1.0);
        s->fresh = 0;
    }
    if (st == HR_OK && a->rhs) st = hri_solver_device_io(en, HR_DEVIO_RHS, (void *)a->rhs, single, s->rhs_scale);
    if (st != HR_OK) {
        hri_gs_set_error(s, "%s", hr_solver_last_error(en));
        return st;
    }
    s->eng_has_rhs = s->eng_rhs_device = a->rhs != NULL;
    hr_result r;
    st = hri_solver_run_device(en, &r);
    s->fresh = 0;
    s->stop = 0;
    if (st == HR_OK || st == HR_ERR_DIVERGED) {
        if (a->x) {
            const hr_status xs = hri_solver_device_io(en, HR_DEVIO_X, a->x, single, 1.0);
            if (xs != HR_OK) st = xs;
        }
    }
    if (st != HR_OK && st != HR_ERR_DIVERGED) {
        hri_gs_set_error(s, "%s", hr_solver_last_error(en));
        return st;
    }
    hri_gs_finish_result(s, &r);
    if (res) *res = r;
    return st;
}

static const hr_gs_ops relax_ops = {"solver",           relax_solve,  relax_solution,    relax_history,
                                    relax_request_stop, relax_release, relax_solve_device};

static hr_status relax_create(hr_grid_solver *s)
{
    HR_TRY(relax_setup(s, NULL, NULL));
    s->ops = &relax_ops;
    hr_config cfg;
    hr_solver_config(s->engine, &cfg);
    snprintf(s->info.engine, sizeof s->info.engine, "%s", relax_ops.engine);
    snprintf(s->info.kernel, sizeof s->info.kernel, "%s", cfg.kernel);
    s->info.threads = cfg.threads;
    s->info.gpus =
        cfg.gpus > 0 ? cfg.gpus : cfg.backend == HR_BACKEND_GPU || cfg.backend == HR_BACKEND_HYBRID;
    s->info.omega = cfg.omega;
    return HR_OK;
}

/* ------------------------------------------------------------------ multigrid, CG: hr_mg */

/* The engine's monitor: history, stop requests and the caller's monitor. */
static int mg_monitor(long it, double rel, void *user)
{
    hr_grid_solver *s = user;
    if (s->o.keep_history) hri_history_push(&s->hist, it, rel); /* no memory: the history stops */
    if (s->stop) return 1;
    const long every = s->o.monitor_every > 0 ? s->o.monitor_every : 1;
    if (s->o.monitor && it % every == 0) return s->o.monitor(it, rel, s->o.monitor_user);
    return 0;
}

static void mg_options(hr_grid_solver *s)
{
    const hr_grid_options *o = &s->o;
    const hr_problem *p = &s->p;
    hr_mg_options *mo = &s->mo;
    hr_mg_options_default(mo);
    mo->tuning = o->tuning;
    mo->dim = p->dim;
    mo->n = p->n[0];
    mo->nx = p->n[0];
    mo->ny = p->n[1];
    mo->nz = p->dim == 3 ? p->n[2] : 0;
    mo->rhs = p->rhs;
    mo->rhs_values = s->rhs;
    mo->boundary = p->bc[0].value;
    mo->method = o->method == HR_METHOD_MG ? HR_MG_METHOD_MG : HR_MG_METHOD_CG;
    mo->pc = o->method == HR_METHOD_MGCG ? HR_MG_PC_MG : HR_MG_PC_NONE;
    mo->cycle = o->cycle;
    mo->pre = o->pre == HR_NONE ? 0 : o->pre > 0 ? o->pre : 2;
    mo->post = o->post == HR_NONE ? 0 : o->post > 0 ? o->post : 2;
    mo->smoother = (hr_mg_smoother)smoother_of(o->smoother);
    mo->omega = o->omega;
    mo->levels = o->levels;
    mo->symmetric = o->symmetric;
    mo->precision = s->prec;
    mo->tol = o->tol;
    mo->max_iters = s->max_iters;
    mo->threads = s->backend == HR_BACKEND_CPU_SEQ ? 1 : o->threads;
    mo->backend = s->backend == HR_BACKEND_GPU ? HR_MG_BACKEND_GPU : HR_MG_BACKEND_CPU;
    mo->device = o->device;
    mo->flush_subnormals = s->info.flush_subnormals;
    /* the engine checks every iteration when tol > 0: the monitor there costs nothing and
     * changes nothing; without checks it would add residuals, so it is left out */
    if (o->monitor || o->keep_history || o->tol > 0.0) {
        mo->monitor = mg_monitor;
        mo->monitor_user = s;
    }
}

/* Sets the engine up (again) with f = rhs (scaled; NULL: the problem's; slot: a zero f in an
 * array that a device solve fills). */
static hr_status mg_setup_as(hr_grid_solver *s, const double *rhs, int slot)
{
    hr_mg_options mo = s->mo;
    if (rhs) {
        mo.rhs = HR_RHS_ARRAY;
        mo.rhs_values = rhs;
    } else if (slot) {
        mo.rhs = HR_RHS_ZERO;
    }
    hr_mg *old = s->engine, *m = NULL;
    s->engine = NULL;
    hr_mg_free(old);
    saved_error keep;
    save_error(&keep);
    const hr_status st = slot ? hri_mg_create_slot(&mo, &m) : hr_mg_create(&mo, &m);
    if (st != HR_OK) hri_gs_set_error(s, "%s", hr_mg_last_error());
    restore_error(&keep);
    if (st != HR_OK) return st;
    s->engine = m;
    s->eng_has_rhs = rhs != NULL || slot;
    s->eng_rhs_device = 0;
    return HR_OK;
}

static hr_status mg_setup(hr_grid_solver *s, const double *rhs)
{
    return mg_setup_as(s, rhs, 0);
}

static hr_status mg_run(hr_grid_solver *s, hr_result *res);

static hr_status mg_solve(hr_grid_solver *s, const double *rhs, const double *x0, hr_result *res)
{
    if (x0) {
        hri_gs_set_error(s, "x0: %s starts from a zero guess so far", hr_method_name(s->o.method));
        return HR_ERR_UNSUPPORTED;
    }
    hr_status st = HR_OK;
    if (rhs && s->engine && s->rhs_scale == 1.0 && hri_mgs_replace_rhs(s->engine, rhs) == HR_OK) {
        /* straight into the engine's array (the CPU's copy, the device's level): cheaper than
         * comparing it with the last f, and every solve refills the levels from it anyway */
        s->eng_has_rhs = s->eng_rhs_device = 1;
        return mg_run(s, res);
    }
    const int same = rhs ? hri_gs_same_rhs(s, rhs) : !s->eng_has_rhs;
    if (rhs && !same) HR_TRY(hri_gs_take_rhs(s, rhs));
    const double *want = rhs ? s->eng_rhs : s->p.rhs == HR_RHS_ARRAY ? s->rhs : NULL;
    hr_mg *m = s->engine;
    if (!m) {
        st = mg_setup(s, rhs ? s->eng_rhs : NULL);
    } else if (!same) {
        /* in place where the engine holds an array for f (the CPU's copy, the GPU's level);
         * else set up again */
        if (want && hri_mgs_replace_rhs(m, want) == HR_OK) {
            s->eng_has_rhs = rhs != NULL;
            s->eng_rhs_device = 0;
        } else {
            st = mg_setup(s, rhs ? s->eng_rhs : NULL);
        }
    }
    if (st != HR_OK) return st;
    return mg_run(s, res);
}

static hr_status mg_solve_device(hr_grid_solver *s, const hr_device_arrays *a, hr_result *res)
{
    if (a->x0) {
        hri_gs_set_error(s, "x0: %s starts from a zero guess so far", hr_method_name(s->o.method));
        return HR_ERR_UNSUPPORTED;
    }
    const int single = a->prec == HR_PREC_SINGLE;
    hr_status st = HR_OK;
    if (a->rhs) {
        st = s->engine ? hri_mgs_replace_rhs_device(s->engine, a->rhs, single, s->rhs_scale)
                       : HR_ERR_UNSUPPORTED;
        if (st == HR_ERR_UNSUPPORTED) { /* no array for f: set up again with one */
            HR_TRY(mg_setup_as(s, NULL, 1));
            st = hri_mgs_replace_rhs_device(s->engine, a->rhs, single, s->rhs_scale);
        }
        if (st != HR_OK) {
            hri_gs_set_error(s, "rhs: %s", hr_mg_last_error());
            return st;
        }
        s->eng_has_rhs = s->eng_rhs_device = 1;
    } else if (s->eng_has_rhs || !s->engine) { /* back to the problem's f: in place where it is an array */
        if (s->engine && s->p.rhs == HR_RHS_ARRAY && hri_mgs_replace_rhs(s->engine, s->rhs) == HR_OK)
            s->eng_has_rhs = s->eng_rhs_device = 0;
        else
            HR_TRY(mg_setup(s, NULL));
    }
    st = mg_run(s, res);
    if ((st == HR_OK || st == HR_ERR_DIVERGED) && a->x) {
        const hr_status cst = hri_mgs_solution_device(s->engine, a->x, single);
        if (cst != HR_OK) {
            hri_gs_set_error(s, "x: %s", hr_mg_last_error());
            return cst;
        }
    }
    return st;
}

/* One solve of the engine as it is set up. */
static hr_status mg_run(hr_grid_solver *s, hr_result *res)
{
    hr_status st;
    hr_mg *m = s->engine;
    s->hist.len = 0;
    hr_mg_result mr;
    memset(&mr, 0, sizeof mr);
    saved_error keep;
    save_error(&keep);
    st = hr_mg_solve(m, &mr);
    if (st != HR_OK && st != HR_ERR_DIVERGED) hri_gs_set_error(s, "%s", hr_mg_last_error());
    restore_error(&keep);
    s->stop = 0;
    if (st != HR_OK && st != HR_ERR_DIVERGED) return st;
    hr_result r;
    memset(&r, 0, sizeof r);
    r.dim = mr.dim;
    r.nx = mr.nx;
    r.ny = mr.ny;
    r.nz = mr.nz;
    r.iterations = mr.iterations;
    r.global_syncs = mr.iterations;
    r.time_s = mr.time_s;
    r.time_sweeps_s = mr.time_s;
    r.time_per_sweep_s = mr.iterations > 0 ? mr.time_s / (double)mr.iterations : 0.0;
    r.time_setup_s = mr.time_setup_s;
    r.time_compute_s = mr.time_s;
    r.relative_residual = mr.relative_residual;
    r.max_error = mr.max_error;
    r.reference_gbps = 0.0;
    r.bandwidth_fraction = NAN;
    r.reason = mr.reason;
    snprintf(r.backend, sizeof r.backend, "%s", hr_backend_name(s->backend));
    snprintf(r.kernel, sizeof r.kernel, "%s", s->info.kernel);
    if (s->backend == HR_BACKEND_GPU) hr_gpu_name(s->o.device, r.device_name, sizeof r.device_name);
    r.levels = mr.levels;
    r.convergence_factor = mr.convergence_factor;
    r.last_factor = mr.last_factor;
    hri_gs_finish_result(s, &r);
    if (res) *res = r;
    return st;
}

static hr_status mg_solution(const hr_grid_solver *s, hr_precision prec, void *dst, size_t count)
{
    if (!s->engine || count < s->count) return HR_ERR_INVALID_ARG;
    if (s->backend == HR_BACKEND_GPU) return hri_mgs_solution_host(s->engine, dst, prec == HR_PREC_SINGLE);
    if (prec != HR_PREC_SINGLE) return hr_mg_solution(s->engine, dst, s->count);
    double *u = malloc(s->count * sizeof *u);
    if (!u) return HR_ERR_NO_MEMORY;
    const hr_status st = hr_mg_solution(s->engine, u, s->count);
    for (size_t i = 0; st == HR_OK && i < s->count; i++)
        ((float *)dst)[i] = (float)u[i];
    free(u);
    return st;
}

static size_t mg_history(const hr_grid_solver *s, const long **iters, const double **res)
{
    *iters = s->hist.it;
    *res = s->hist.res;
    return s->hist.len;
}

static void mg_request_stop(hr_grid_solver *s)
{
    (void)s; /* the engine's monitor reads s->stop */
}

static void mg_release(hr_grid_solver *s)
{
    hr_mg_free(s->engine);
    s->engine = NULL;
}

static const hr_gs_ops mg_ops = {"mg",       mg_solve,       mg_solution, mg_history, mg_request_stop,
                                 mg_release, mg_solve_device};

static hr_status mg_create(hr_grid_solver *s)
{
    mg_options(s);
    HR_TRY(mg_setup(s, NULL));
    s->ops = &mg_ops;
    const hr_mg *m = s->engine;
    snprintf(s->info.engine, sizeof s->info.engine, "%s", mg_ops.engine);
    snprintf(s->info.kernel, sizeof s->info.kernel, "%s",
             s->o.method == HR_METHOD_CG ? "" : hr_mg_smoother_name(s->mo.smoother));
    s->info.threads = s->backend == HR_BACKEND_GPU ? 0 : m->nt;
    s->info.gpus = s->backend == HR_BACKEND_GPU;
    s->info.omega = s->mo.smoother != HR_MG_SMOOTH_JACOBI || s->o.method == HR_METHOD_CG ? 1.0
                    : s->mo.omega > 0.0                                                  ? s->mo.omega
                    : s->p.dim == 3                                                      ? 6.0 / 7.0
                                                                                         : 0.8;
    return HR_OK;
}

/* ------------------------------------------------------------------ the API */

hr_status hr_grid_solver_create(const hr_problem *p, const hr_grid_options *o, hr_grid_solver **out)
{
    hri_set_last_error("%s", "");
    if (!out) {
        hri_set_last_error("out: NULL (no place for the handle)");
        return HR_ERR_INVALID_ARG;
    }
    *out = NULL;
    hr_grid_solver *s;
    HR_TRY(hri_gs_prepare(p, o, 0, &s, hri_last_error_buf(), HR_LAST_ERROR_SIZE));
    const hr_status st = s->general && s->o.gpus > 1 ? hri_gs_general_create_parts(s, p, s->o.gpus)
                         : s->general                ? hri_gs_general_create(s, p)
                         : is_mg_method(s->o.method) ? mg_create(s)
                                                     : relax_create(s);
    if (st != HR_OK) {
        hri_set_last_error("%s", s->err);
        if (s->general)
            hri_gs_general_release(s);
        else if (is_mg_method(s->o.method))
            hr_mg_free(s->engine);
        else
            hr_solver_free(s->engine);
        hri_gs_free(s);
        return st;
    }
    s->fresh = 1;
    *out = s;
    return HR_OK;
}

hr_status hr_grid_solver_solve(hr_grid_solver *s, const double *rhs, const double *x0, hr_result *res)
{
    if (!s) return HR_ERR_INVALID_ARG;
    if (!hri_gs_enter(s)) return HR_ERR_INVALID_ARG;
    s->err[0] = '\0';
    /* every engine, the general one and the MPI ones too: their teams follow this thread */
    const unsigned fp = hr_fp_flush_begin(s->info.flush_subnormals);
    const hr_status st = s->ops->solve(s, rhs, x0, res);
    hr_fp_flush_end(s->info.flush_subnormals, fp);
    hri_gs_leave(s);
    return st;
}

/* Every non-NULL pointer of `a` memory of the handle's GPU; the caller's stream waited for. */
static hr_status check_device_arrays(hr_grid_solver *s, const hr_device_arrays *a)
{
    if (a->prec != HR_PREC_DEFAULT && a->prec != HR_PREC_DOUBLE && a->prec != HR_PREC_SINGLE) {
        hri_gs_set_error(s, "prec: the device arrays hold single or double values");
        return HR_ERR_INVALID_ARG;
    }
    const struct {
        const char *name;
        const void *p;
    } arr[3] = {{"rhs", a->rhs}, {"x0", a->x0}, {"x", a->x}};
    char why[160];
    for (int i = 0; i < 3; i++) {
        if (!arr[i].p) continue;
        const hr_status st = hri_cuda_check_array(s->o.device, arr[i].p, why, sizeof why);
        if (st != HR_OK) {
            hri_gs_set_error(s, "%s: %s", arr[i].name, why);
            return st;
        }
    }
    const hr_status st = hri_cuda_wait_stream(s->o.device, a->stream, why, sizeof why);
    if (st != HR_OK) hri_gs_set_error(s, "stream: %s", why);
    return st;
}

hr_status hr_grid_solver_solve_device(hr_grid_solver *s, const hr_device_arrays *a, hr_result *res)
{
    if (!s) return HR_ERR_INVALID_ARG;
    if (!a) {
        hri_gs_set_error(s, "a: NULL (no arrays)");
        return HR_ERR_INVALID_ARG;
    }
    if (s->backend != HR_BACKEND_GPU || s->info.gpus != 1 || s->mpi) {
        hri_gs_set_error(s, "device arrays: this handle runs on %s%s (backend gpu with one GPU takes them)",
                         hr_backend_name(s->backend),
                         s->mpi             ? " ranks"
                         : s->info.gpus > 1 ? ", several GPUs"
                                            : "");
        return HR_ERR_UNSUPPORTED;
    }
    if (!s->ops->solve_device) {
        hri_gs_set_error(
            s,
            "device arrays: engine \"%s\" takes host arrays (hr_grid_solver_solve); device arrays "
            "reach every method on one GPU of this process",
            s->info.engine);
        return HR_ERR_UNSUPPORTED;
    }
    if (!hri_gs_enter(s)) return HR_ERR_INVALID_ARG;
    s->err[0] = '\0';
    hr_status st = check_device_arrays(s, a);
    if (st == HR_OK) st = s->ops->solve_device(s, a, res);
    hri_gs_leave(s);
    return st;
}

hr_status hr_grid_solver_solution(const hr_grid_solver *s, hr_precision prec, void *dst, size_t count)
{
    if (s && s->mpi) return s->ops->solution(s, prec, dst, count); /* collective: dst on rank 0 only */
    if (!s || !dst || !hr_prec_is_storage(prec)) return HR_ERR_INVALID_ARG;
    if (count < s->count) {
        hri_gs_set_error((hr_grid_solver *)s, "count: %zu values, the grid has %zu", count, s->count);
        return HR_ERR_INVALID_ARG;
    }
    return s->ops->solution(s, prec, dst, count);
}

size_t hr_grid_solver_history(const hr_grid_solver *s, const long **iters, const double **res)
{
    const long *i = NULL;
    const double *r = NULL;
    const size_t n = s && s->engine ? s->ops->history(s, &i, &r) : 0;
    if (iters) *iters = i;
    if (res) *res = r;
    return n;
}

void hr_grid_solver_request_stop(hr_grid_solver *s)
{
    if (!s) return;
    s->stop = 1;
    s->ops->request_stop(s);
}

hr_status hr_grid_solver_info(const hr_grid_solver *s, hr_grid_info *out)
{
    if (!s || !out) return HR_ERR_INVALID_ARG;
    *out = s->info;
    return HR_OK;
}

void hr_grid_solver_free(hr_grid_solver *s)
{
    if (!s) return;
    if (__atomic_load_n(&s->running, __ATOMIC_ACQUIRE)) {
        /* the solve's caller still holds s */
        hri_gs_set_error(s, "hr_grid_solver_free: called during a solve of the same handle: ignored");
        return;
    }
    s->ops->release(s);
    hri_gs_free(s);
}
