/*
 * The public problem description (include/hetrelax/problem.h): the model problem, the
 * setters, validation ("field: reason") and the grid's arithmetic (spacing, array sizes).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

/* The largest extent accepted per axis (as the options' validation). */
#define HR_PROBLEM_MAX_N 1000000

static const char *const face_names[HR_FACE_COUNT] = {"x-", "x+", "y-", "y+", "z-", "z+"};
static const char *const axis_names[3] = {"x", "y", "z"};

const char *hr_face_name(hr_face face)
{
    return (unsigned)face < HR_FACE_COUNT ? face_names[face] : NULL;
}

const char *hr_bc_kind_name(hr_bc_kind kind)
{
    static const char *const names[] = {"dirichlet", "neumann", "periodic"};
    return (unsigned)kind <= HR_BC_PERIODIC ? names[kind] : NULL;
}

/* A refusal of a setter: the reason in the thread's last error. */
#define REFUSE(...) return (hri_set_last_error(__VA_ARGS__), HR_ERR_INVALID_ARG)

static int dim_of(const hr_problem *p)
{
    return p->dim == 3 ? 3 : 2;
}

hr_status hr_problem_init_model(hr_problem *p, int dim, int nx, int ny, int nz)
{
    if (!p) REFUSE("problem: NULL");
    if (dim != 2 && dim != 3) REFUSE("dim: must be 2 or 3 (got %d)", dim);
    const int n[3] = {nx, ny, dim == 3 ? nz : 1};
    for (int a = 0; a < dim; a++)
        if (n[a] < 1 || n[a] > HR_PROBLEM_MAX_N)
            REFUSE("n%s: must be between 1 and %d (got %d)", axis_names[a], HR_PROBLEM_MAX_N, n[a]);
    memset(p, 0, sizeof *p);
    p->dim = dim;
    int nmax = 1;
    for (int a = 0; a < 3; a++) {
        p->n[a] = n[a];
        if (a < dim && n[a] > nmax) nmax = n[a];
    }
    /* one mesh width h = 1 / (nmax + 1) on every axis: L_a = (n_a + 1) h */
    for (int a = 0; a < 3; a++)
        p->length[a] = a < dim ? ((double)n[a] + 1.0) / ((double)nmax + 1.0) : 1.0;
    for (int f = 0; f < HR_FACE_COUNT; f++)
        p->bc[f] = (hr_bc){HR_BC_DIRICHLET, 0.0, NULL};
    p->coef = 1.0;
    p->rhs = HR_RHS_SPIKE;
    p->rhs_seed = 1;
    p->init = HR_INIT_ZERO;
    return HR_OK;
}

hr_status hr_problem_set_lengths(hr_problem *p, double lx, double ly, double lz)
{
    if (!p) REFUSE("problem: NULL");
    const double l[3] = {lx, ly, lz};
    for (int a = 0; a < dim_of(p); a++)
        if (!(l[a] > 0.0) || !isfinite(l[a]))
            REFUSE("length: %s must be finite and > 0 (got %g)", axis_names[a], l[a]);
    for (int a = 0; a < dim_of(p); a++)
        p->length[a] = l[a];
    return HR_OK;
}

hr_status hr_problem_set_bc(hr_problem *p, int face, hr_bc_kind kind, double value, const double *values)
{
    if (!p) REFUSE("problem: NULL");
    const int nf = 2 * dim_of(p);
    if (face != HR_FACES_ALL && (face < 0 || face >= HR_FACE_COUNT)) REFUSE("bc: unknown face (%d)", face);
    if (face >= nf) REFUSE("bc: face %s in a 2-D problem", face_names[face]);
    if ((unsigned)kind > HR_BC_PERIODIC) REFUSE("bc: unknown kind (%d)", (int)kind);
    if (kind != HR_BC_PERIODIC && !isfinite(value))
        REFUSE("bc: %s value must be finite (got %g)", hr_bc_kind_name(kind), value);
    if (face == HR_FACES_ALL && values && kind != HR_BC_PERIODIC)
        REFUSE("bc: a values array belongs to one face (not HR_FACES_ALL)");
    const int f0 = face == HR_FACES_ALL ? 0 : face, f1 = face == HR_FACES_ALL ? nf : face + 1;
    for (int f = f0; f < f1; f++) {
        if (kind == HR_BC_PERIODIC) { /* the axis's two faces */
            const int lo = f & ~1;
            p->bc[lo] = p->bc[lo + 1] = (hr_bc){HR_BC_PERIODIC, 0.0, NULL};
        } else {
            p->bc[f] = (hr_bc){kind, value, values};
            /* an axis left with one periodic face is no longer periodic at all */
            if (p->bc[f ^ 1].kind == HR_BC_PERIODIC) p->bc[f ^ 1] = (hr_bc){HR_BC_DIRICHLET, 0.0, NULL};
        }
    }
    return HR_OK;
}

hr_status hr_problem_set_coef(hr_problem *p, double value, const double *values)
{
    if (!p) REFUSE("problem: NULL");
    if (!values && !(value > 0.0 && isfinite(value))) REFUSE("coef: must be finite and > 0 (got %g)", value);
    p->coef = values ? 1.0 : value;
    p->coef_values = values;
    return HR_OK;
}

hr_status hr_problem_set_rhs(hr_problem *p, hr_rhs kind, const double *values)
{
    if (!p) REFUSE("problem: NULL");
    if (kind != HR_RHS_SPIKE && kind != HR_RHS_MANUFACTURED && kind != HR_RHS_ZERO && kind != HR_RHS_ARRAY &&
        kind != HR_RHS_RANDOM)
        REFUSE("rhs: unknown kind (%d)", (int)kind);
    if ((kind == HR_RHS_ARRAY) != (values != NULL))
        REFUSE("rhs: %s", kind == HR_RHS_ARRAY ? "an array needs values" : "values need HR_RHS_ARRAY");
    p->rhs = kind;
    p->rhs_values = values;
    return HR_OK;
}

hr_status hr_problem_set_init(hr_problem *p, hr_init kind, const double *values)
{
    if (!p) REFUSE("problem: NULL");
    if (kind != HR_INIT_ZERO && kind != HR_INIT_SINE && kind != HR_INIT_ARRAY)
        REFUSE("init: unknown kind (%d)", (int)kind);
    if ((kind == HR_INIT_ARRAY) != (values != NULL))
        REFUSE("init: %s", kind == HR_INIT_ARRAY ? "an array needs values" : "values need HR_INIT_ARRAY");
    p->init = kind;
    p->init_values = values;
    return HR_OK;
}

size_t hr_problem_unknowns(const hr_problem *p)
{
    if (!p || (p->dim != 2 && p->dim != 3)) return 0;
    size_t c = 1;
    for (int a = 0; a < p->dim; a++)
        c *= p->n[a] > 0 ? (size_t)p->n[a] : 0;
    return c;
}

size_t hr_problem_face_points(const hr_problem *p, hr_face face)
{
    if (!p || (p->dim != 2 && p->dim != 3) || (unsigned)face >= (unsigned)(2 * p->dim)) return 0;
    size_t c = 1;
    for (int a = 0; a < p->dim; a++)
        if (a != (int)face / 2) c *= p->n[a] > 0 ? (size_t)p->n[a] : 0;
    return c;
}

double hr_problem_spacing(const hr_problem *p, int axis)
{
    if (!p || (p->dim != 2 && p->dim != 3) || axis < 0 || axis >= p->dim || p->n[axis] < 1) return NAN;
    const hr_bc_kind lo = p->bc[2 * axis].kind, hi = p->bc[2 * axis + 1].kind;
    if (lo == HR_BC_PERIODIC) return p->length[axis] / (double)p->n[axis];
    /* intervals: n - 1 between the unknowns, plus one per Dirichlet face */
    const double intervals = (double)p->n[axis] - 1.0 + (lo == HR_BC_DIRICHLET) + (hi == HR_BC_DIRICHLET);
    return intervals > 0.0 ? p->length[axis] / intervals : NAN;
}

/* The first value of v[0..count) that is not finite (or, positive, not > 0), or count. */
static size_t first_bad(const double *v, size_t count, int positive)
{
    for (size_t i = 0; i < count; i++)
        if (!isfinite(v[i]) || (positive && !(v[i] > 0.0))) return i;
    return count;
}

hr_status hr_problem_validate(const hr_problem *p, char *w, size_t ws)
{
    if (!p) return hri_invalid_arg(w, ws, "problem: NULL");
    if (p->dim != 2 && p->dim != 3)
        return hri_invalid_arg(w, ws, "dim: must be 2 or 3 (got %d; hr_problem_init_model fills a problem)",
                               p->dim);
    const int dim = p->dim;
    for (int a = 0; a < dim; a++)
        if (p->n[a] < 1 || p->n[a] > HR_PROBLEM_MAX_N)
            return hri_invalid_arg(w, ws, "n%s: must be between 1 and %d (got %d)", axis_names[a],
                                   HR_PROBLEM_MAX_N, p->n[a]);
    if (dim == 2 && p->n[2] != 0 && p->n[2] != 1)
        return hri_invalid_arg(w, ws, "nz: 1 in a 2-D problem (got %d)", p->n[2]);
    for (int a = 0; a < dim; a++)
        if (!(p->length[a] > 0.0) || !isfinite(p->length[a]))
            return hri_invalid_arg(w, ws, "length: %s must be finite and > 0 (got %g)", axis_names[a],
                                   p->length[a]);
    for (int f = 0; f < HR_FACE_COUNT; f++) {
        const hr_bc *b = &p->bc[f];
        if ((unsigned)b->kind > HR_BC_PERIODIC)
            return hri_invalid_arg(w, ws, "bc: face %s has an unknown kind (%d)", face_names[f],
                                   (int)b->kind);
        if (f >= 2 * dim) {
            if (b->kind != HR_BC_DIRICHLET || b->values)
                return hri_invalid_arg(w, ws, "bc: face %s in a 2-D problem (leave it Dirichlet, no values)",
                                       face_names[f]);
            continue;
        }
        if ((b->kind == HR_BC_PERIODIC) != (p->bc[f ^ 1].kind == HR_BC_PERIODIC))
            return hri_invalid_arg(
                w, ws, "bc: %s is periodic on face %s only (periodic takes both faces of an axis)",
                axis_names[f / 2], face_names[b->kind == HR_BC_PERIODIC ? f : f ^ 1]);
        if (b->kind == HR_BC_PERIODIC) {
            if (p->n[f / 2] < 3)
                return hri_invalid_arg(w, ws, "bc: periodic %s needs at least 3 unknowns along it (got %d)",
                                       axis_names[f / 2], p->n[f / 2]);
            continue;
        }
        if (b->kind == HR_BC_NEUMANN && p->bc[f ^ 1].kind == HR_BC_NEUMANN && p->n[f / 2] < 2)
            return hri_invalid_arg(w, ws,
                                   "bc: Neumann on both %s faces needs at least 2 unknowns along it (got %d)",
                                   axis_names[f / 2], p->n[f / 2]);
        if (!b->values && !isfinite(b->value))
            return hri_invalid_arg(w, ws, "bc: face %s value must be finite (got %g)", face_names[f],
                                   b->value);
        if (b->values) {
            const size_t c = hr_problem_face_points(p, (hr_face)f), i = first_bad(b->values, c, 0);
            if (i < c)
                return hri_invalid_arg(w, ws, "bc: face %s value %zu is not finite (%g)", face_names[f], i,
                                       b->values[i]);
        }
    }
    if (!p->coef_values && !(p->coef > 0.0 && isfinite(p->coef)))
        return hri_invalid_arg(w, ws, "coef: must be finite and > 0 (got %g)", p->coef);
    if (p->coef_values) {
        const size_t c = hr_problem_unknowns(p), i = first_bad(p->coef_values, c, 1);
        if (i < c)
            return hri_invalid_arg(w, ws, "coef: value %zu must be finite and > 0 (got %g)", i,
                                   p->coef_values[i]);
    }
    if (p->rhs != HR_RHS_SPIKE && p->rhs != HR_RHS_MANUFACTURED && p->rhs != HR_RHS_ZERO &&
        p->rhs != HR_RHS_ARRAY && p->rhs != HR_RHS_RANDOM)
        return hri_invalid_arg(w, ws, "rhs: unknown kind (%d)", (int)p->rhs);
    if (p->rhs == HR_RHS_ARRAY && !p->rhs_values)
        return hri_invalid_arg(w, ws, "rhs: an array needs rhs_values");
    if (p->init != HR_INIT_ZERO && p->init != HR_INIT_SINE && p->init != HR_INIT_ARRAY)
        return hri_invalid_arg(w, ws, "init: unknown kind (%d)", (int)p->init);
    if (p->init == HR_INIT_ARRAY && !p->init_values)
        return hri_invalid_arg(w, ws, "init: an array needs init_values");
    return HR_OK;
}
