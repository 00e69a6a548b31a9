/* Options of hetrelax multigrid: defaults, names, validation ("field: reason"). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/registry.h"
#include "core/tuning.h"
#include "methods/mg/mg_internal.h"

#define HR_MG_MAX_N   65535
#define HR_MG_MAX_PRE 64

void hr_mg_options_default(hr_mg_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->dim = 2;
    o->n = 255;
    o->pre = o->post = 2;
    o->smoother = (hr_mg_smoother)hri_entry_find(HR_KIND_SMOOTHER, HR_BACKEND_AUTO, NULL, 0)->id;
    o->tol = 1e-8;
    o->max_iters = 100;
}

const char *hr_mg_cycle_name(hr_mg_cycle c)
{
    static const char *const names[] = {"v", "w", "f", "fmg"};
    return (unsigned)c < 4 ? names[c] : "?";
}

const char *hr_mg_smoother_name(hr_mg_smoother s)
{
    const hr_entry *e = hri_entry_by_id(HR_KIND_SMOOTHER, (int)s, 0);
    return e ? e->name : "?";
}

int hri_mg_opt_dim(const hr_mg_options *o)
{
    return o->dim == 0 ? 2 : o->dim;
}

int hri_mg_opt_extent(const hr_mg_options *o, int a)
{
    const int e = a == 0 ? o->nx : a == 1 ? o->ny : o->nz;
    return e > 0 ? e : o->n;
}

/* k with n = 2^k - 1, or 0 when n is not of that form. */
static int pow2m1(int n)
{
    if (n < 1 || ((unsigned)n & ((unsigned)n + 1u)) != 0) return 0;
    int k = 0;
    while (n) {
        n >>= 1;
        k++;
    }
    return k;
}

/* The next 2^k - 1 at or above n. */
static int smear(int n)
{
    unsigned v = (unsigned)n;
    v |= v >> 1;
    v |= v >> 2;
    v |= v >> 4;
    v |= v >> 8;
    v |= v >> 16;
    return (int)v;
}

int hri_mg_opt_uses_mg(const hr_mg_options *o)
{
    return o->method == HR_MG_METHOD_MG || o->pc == HR_MG_PC_MG;
}

/* Levels the grid allows: every axis halves (n -> (n - 1) / 2) while it keeps >= 1 point. */
int hri_mg_opt_max_levels(const hr_mg_options *o)
{
    int m = 1 << 30;
    for (int a = 0; a < hri_mg_opt_dim(o); a++) {
        const int k = pow2m1(hri_mg_opt_extent(o, a));
        if (k < m) m = k;
    }
    return m;
}

hr_status hr_mg_options_validate(const hr_mg_options *o, char *w, size_t ws)
{
    static const char *const axis[3] = {"nx", "ny", "nz"};
    if (!o) return hri_invalid_arg(w, ws, "options: NULL");
    if (o->dim != 0 && o->dim != 2 && o->dim != 3) return hri_invalid_arg(w, ws, "dim: must be 2 or 3");
    const int dim = hri_mg_opt_dim(o);
    if (dim == 2 && o->nz != 0) return hri_invalid_arg(w, ws, "nz: only for 3-D grids");
    for (int a = 0; a < dim; a++) {
        const int given = a == 0 ? o->nx : a == 1 ? o->ny : o->nz;
        const char *f = given ? axis[a] : "n";
        const int e = hri_mg_opt_extent(o, a);
        if (e < 1 || e > HR_MG_MAX_N || given < 0)
            return hri_invalid_arg(w, ws, "%s: must be between 1 and %d", f, HR_MG_MAX_N);
        if (hri_mg_opt_uses_mg(o) && !pow2m1(e))
            return hri_invalid_arg(w, ws,
                                  "%s: multigrid needs 2^k - 1 interior points per axis (got %d; next: %d)",
                                  f, e, smear(e));
    }
    HR_TRY(hri_options_rhs_check(o->rhs, w, ws));
    if (o->rhs == HR_RHS_ARRAY && !o->rhs_values) return hri_invalid_arg(w, ws, "rhs: array needs rhs_values");
    if (!isfinite(o->boundary)) return hri_invalid_arg(w, ws, "boundary: must be finite");
    if (o->precision == HR_MG_PREC_SINGLE && fabs(o->boundary) > FLT_MAX)
        return hri_invalid_arg(w, ws, "boundary: %g does not fit in single precision", o->boundary);
    if (o->method != HR_MG_METHOD_MG && o->method != HR_MG_METHOD_CG)
        return hri_invalid_arg(w, ws, "method: mg or cg");
    if (o->pc != HR_MG_PC_NONE && o->pc != HR_MG_PC_MG) return hri_invalid_arg(w, ws, "pc: none or mg");
    if (o->pc == HR_MG_PC_MG && o->method != HR_MG_METHOD_CG)
        return hri_invalid_arg(w, ws, "pc: mg preconditions method cg only (method is mg)");
    if ((unsigned)o->cycle > HR_MG_CYCLE_FMG) return hri_invalid_arg(w, ws, "cycle: v, w, f or fmg");
    if (o->pc == HR_MG_PC_MG && o->cycle != HR_MG_CYCLE_V)
        return hri_invalid_arg(w, ws, "cycle: pc mg applies a V-cycle");
    if (o->pre < 0 || o->pre > HR_MG_MAX_PRE)
        return hri_invalid_arg(w, ws, "pre: must be between 0 and %d", HR_MG_MAX_PRE);
    if (o->post < 0 || o->post > HR_MG_MAX_PRE)
        return hri_invalid_arg(w, ws, "post: must be between 0 and %d", HR_MG_MAX_PRE);
    if (hri_mg_opt_uses_mg(o) && o->pre + o->post < 1)
        return hri_invalid_arg(w, ws, "pre: pre + post must be >= 1");
    if (o->pc == HR_MG_PC_MG && o->pre != o->post)
        return hri_invalid_arg(w, ws, "post: pc mg needs post == pre (a symmetric V-cycle)");
    const hr_entry *sm = hri_entry_by_id(HR_KIND_SMOOTHER, (int)o->smoother, 0);
    if (!sm) {
        char names[128];
        hri_entry_names(HR_KIND_SMOOTHER, HR_BACKEND_AUTO, 0, 0, 0, ", ", " or ", names, sizeof names);
        return hri_invalid_arg(w, ws, "smoother: %s", names);
    }
    /* the CPU backend: the thread team (a single thread too) */
    const hr_backend mb = o->backend == HR_MG_BACKEND_GPU ? HR_BACKEND_GPU : HR_BACKEND_CPU_THREADS;
    if (!hri_entry_find(HR_KIND_SMOOTHER, mb, sm->name, 0)) {
        if (sm->backend == HR_BACKEND_GPU)
            return hri_invalid_arg(w, ws, "smoother: %s runs on the GPU only (backend gpu)", sm->name);
        return hri_invalid_arg(w, ws, "smoother: %s does not run on backend %s", sm->name,
                              o->backend == HR_MG_BACKEND_GPU ? "gpu" : "cpu");
    }
    if (!(sm->caps & HR_CAP_SYMMETRIC) && o->pc == HR_MG_PC_MG)
        return hri_invalid_arg(w, ws, "smoother: %s is not symmetric%s: not for pc mg", sm->name,
                              sm->caps & HR_CAP_DETERMINISTIC ? "" : " (nor deterministic)");
    if (o->omega != 0.0 && !(o->omega > 0.0 && o->omega < 2.0))
        return hri_invalid_arg(w, ws, "omega: must be in (0, 2)");
    if (o->levels < 0) return hri_invalid_arg(w, ws, "levels: must be >= 0 (0: all)");
    if (hri_mg_opt_uses_mg(o) && o->levels > hri_mg_opt_max_levels(o)) {
        if (dim == 3)
            return hri_invalid_arg(w, ws, "levels: at most %d for a %dx%dx%d grid", hri_mg_opt_max_levels(o),
                                  hri_mg_opt_extent(o, 0), hri_mg_opt_extent(o, 1), hri_mg_opt_extent(o, 2));
        return hri_invalid_arg(w, ws, "levels: at most %d for a %dx%d grid", hri_mg_opt_max_levels(o),
                              hri_mg_opt_extent(o, 0), hri_mg_opt_extent(o, 1));
    }
    if ((unsigned)o->precision > HR_MG_PREC_MIXED)
        return hri_invalid_arg(w, ws, "precision: double, single or mixed");
    if (!(o->tol >= 0.0) || !isfinite(o->tol))
        return hri_invalid_arg(w, ws, "tol: must be a finite value >= 0");
    if (o->max_iters < 0) return hri_invalid_arg(w, ws, "max-iters: must be >= 0");
    if (o->threads < 0 || o->threads > 4096)
        return hri_invalid_arg(w, ws, "threads: must be between 1 and 4096");
    if (o->backend != HR_MG_BACKEND_CPU && o->backend != HR_MG_BACKEND_GPU)
        return hri_invalid_arg(w, ws, "backend: cpu or gpu");
    if (o->device < 0) return hri_invalid_arg(w, ws, "device: must be >= 0");
    if (o->flush_subnormals != 0 && o->flush_subnormals != 1)
        return hri_invalid_arg(w, ws, "flush_subnormals: 0 (keep subnormals) or 1 (flush them to zero)");
    if (o->coarse_on != HR_MG_COARSE_ON_GPU && o->coarse_on != HR_MG_COARSE_ON_CPU)
        return hri_invalid_arg(w, ws, "coarse-on: gpu or cpu");
    if (o->coarse_on == HR_MG_COARSE_ON_CPU && o->backend != HR_MG_BACKEND_GPU)
        return hri_invalid_arg(w, ws, "coarse-on: cpu splits a GPU cycle: needs backend gpu");
    if (o->coarse_on == HR_MG_COARSE_ON_CPU && !hri_mg_opt_uses_mg(o))
        return hri_invalid_arg(w, ws, "coarse-on: cpu needs multigrid (method mg or pc mg)");
    if (o->coarse_level < 0) return hri_invalid_arg(w, ws, "coarse-level: must be >= 1 (0: automatic)");
    if (o->coarse_level > 0 && o->coarse_on != HR_MG_COARSE_ON_CPU)
        return hri_invalid_arg(w, ws, "coarse-level: only with coarse-on cpu");
    if (o->coarse_level > 0) {
        const int nlev = o->levels > 0 ? o->levels : hri_mg_opt_max_levels(o);
        if (o->coarse_level >= nlev)
            return hri_invalid_arg(w, ws, "coarse-level: must be between 1 and %d (levels - 1)", nlev - 1);
    }
    return hri_tuning_validate(&o->tuning, w, ws);
}
