/*
 * poisson2d/poisson3d on a problem other than the model problem (--bc, --coef, --lx/--ly/--lz),
 * or multigrid on sizes other than 2^k - 1: one run through hr_grid_solver
 * (include/hetrelax/grid_solver.h), which picks the engine. The command's flags map onto
 * hr_grid_options; the report says what the problem is (extents, box, spacings, the boundary
 * per face, the coefficient) and the JSON records it whole.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "field_io.h"
#include "grid_cmd.h"
#include "hetrelax/hybrid.h"

#define CMD  hr_grid_cmd
#define hout hr_grid_out

static const char *const axis_names[3] = {"x", "y", "z"};

/* What the progress lines count. */
static const char *iter_name(hr_method m)
{
    return m == HR_METHOD_MG ? "cycle" : (m == HR_METHOD_CG || m == HR_METHOD_MGCG) ? "iteration" : "sweep";
}

static int general_monitor(long it, double res, void *user)
{
    const char *what = user;
    fprintf(hout, "  %s %10ld   %s %.6e\n", what, it, hr_cli_residual_label(hr_grid_absolute), res);
    fflush(hout);
    return 0;
}

/* The smoother's registry name of an hr_mg_smoother id (NULL: none such). */
static const char *smoother_name(int id)
{
    hr_entry_info e;
    for (int i = 0; hr_registry_info_at(HR_KIND_SMOOTHER, i, &e) == HR_OK; i++)
        if (e.id == id) return e.name;
    return NULL;
}

/* The --bc entry of face f as text: "dirichlet 0", "neumann FILE 'a.raw'", "periodic". */
static void face_text(const grid_args *a, const hr_problem *p, int f, char *buf, size_t size)
{
    const hr_bc *b = &p->bc[f];
    const grid_face_arg *g = &a->bc[f];
    if (b->kind == HR_BC_PERIODIC)
        snprintf(buf, size, "periodic");
    else if (b->values)
        snprintf(buf, size, "%s file '%.*s'", hr_bc_kind_name(b->kind), (int)g->file_len, g->file);
    else
        snprintf(buf, size, "%s %g", hr_bc_kind_name(b->kind), b->value);
}

static void print_header(const grid_args *a, const hr_problem *p, const hr_grid_options *go,
                         const hr_grid_info *gi, const char *rhs_name)
{
    fprintf(hout, "hetrelax %s: ", CMD);
    for (int ax = 0; ax < p->dim; ax++)
        fprintf(hout, "%s%d", ax ? " x " : "", p->n[ax]);
    fprintf(hout, " unknowns, rhs %s, %s precision, backend %s", rhs_name, hr_precision_name(gi->precision),
            hr_backend_name(gi->backend));
    if (gi->threads > 1) fprintf(hout, " (%d threads)", gi->threads);
    if (gi->ranks > 1)
        fprintf(hout, " on %d MPI ranks (a slab of %s each)", gi->ranks, axis_names[p->dim - 1]);
    else if (gi->gpus > 1)
        fprintf(hout, " on %d GPUs (a slab of %s each, halos %s)", gi->gpus, axis_names[p->dim - 1],
                gi->transport == 3 /* HR_MPI_TRANSPORT_NCCL */ ? "by NCCL" : "through the host");
    fprintf(hout, ", %s engine\n", gi->general ? "general-problem" : "model-problem");
    fprintf(hout, "problem   box ");
    for (int ax = 0; ax < p->dim; ax++)
        fprintf(hout, "%s%.6g", ax ? " x " : "", p->length[ax]);
    fprintf(hout, ", spacing");
    for (int ax = 0; ax < p->dim; ax++)
        fprintf(hout, " h_%s %.6g", axis_names[ax], hr_problem_spacing(p, ax));
    fprintf(hout, "\nboundary ");
    for (int f = 0; f < 2 * p->dim; f++) {
        char t[1100];
        face_text(a, p, f, t, sizeof t);
        fprintf(hout, " %s %s%s", hr_face_name((hr_face)f), t, f + 1 < 2 * p->dim ? "," : "");
    }
    if (p->coef_values)
        fprintf(hout, "\ncoef      a from '%s'", a->coef_file);
    else
        fprintf(hout, "\ncoef      a = %g", p->coef);
    if (gi->singular) fprintf(hout, " (singular: no Dirichlet face; the solution has zero mean)");
    fprintf(hout, "\n");
    const hr_method m = go->method;
    if (m == HR_METHOD_MG || m == HR_METHOD_MGCG)
        fprintf(hout, "%s: %s(%d,%d) cycles, %s smoother, %s levels, tol %g, at most %ld\n",
                m == HR_METHOD_MG ? "multigrid" : "CG preconditioned by multigrid", hr_cycle_name(go->cycle),
                go->pre == HR_NONE ? 0
                : go->pre          ? go->pre
                                   : 2,
                go->post == HR_NONE ? 0
                : go->post          ? go->post
                                    : 2,
                gi->kernel, go->levels ? "given" : "all", go->tol, go->max_iters);
    else if (m == HR_METHOD_CG)
        fprintf(hout, "CG (no preconditioner): tol %g, at most %ld iterations\n", go->tol, go->max_iters);
    else
        fprintf(hout, "method %s, kernel %s, omega %.6g: %s%ld sweeps%s\n", hr_method_name(m), gi->kernel,
                gi->omega, go->tol > 0 ? "at most " : "", go->max_iters, go->tol > 0 ? "" : " (no --tol)");
}

static json_object *general_json(const grid_args *a, const hr_problem *p, const hr_grid_options *go,
                                 const hr_grid_info *gi, const hr_result *r, const char *rhs_name)
{
    json_object *j = json_object_new_object();
    char date[32];
    hr_cli_date(date, sizeof date);
    json_object_object_add(j, "dim", json_object_new_int(p->dim));
    json_object *u = json_object_new_array(), *l = json_object_new_array(), *h = json_object_new_array();
    for (int ax = 0; ax < p->dim; ax++) {
        json_object_array_add(u, json_object_new_int(p->n[ax]));
        json_object_array_add(l, json_object_new_double(p->length[ax]));
        json_object_array_add(h, json_object_new_double(hr_problem_spacing(p, ax)));
    }
    json_object_object_add(j, "unknowns", u);
    json_object_object_add(j, "nx", json_object_new_int(p->n[0]));
    json_object_object_add(j, "ny", json_object_new_int(p->n[1]));
    if (p->dim == 3) json_object_object_add(j, "nz", json_object_new_int(p->n[2]));
    json_object_object_add(j, "lengths", l);
    json_object_object_add(j, "spacings", h);
    json_object *bc = json_object_new_object();
    for (int f = 0; f < 2 * p->dim; f++) {
        const hr_bc *b = &p->bc[f];
        json_object *fo = json_object_new_object();
        json_object_object_add(fo, "type", json_object_new_string(hr_bc_kind_name(b->kind)));
        if (b->values) {
            char path[1024];
            snprintf(path, sizeof path, "%.*s", (int)a->bc[f].file_len, a->bc[f].file);
            json_object_object_add(fo, "file", hr_json_text(path));
        } else if (b->kind != HR_BC_PERIODIC) {
            json_object_object_add(fo, "value", json_object_new_double(b->value));
        }
        json_object_object_add(bc, hr_face_name((hr_face)f), fo);
    }
    json_object_object_add(j, "bc", bc);
    json_object *co = json_object_new_object();
    if (p->coef_values)
        json_object_object_add(co, "file", hr_json_text(a->coef_file));
    else
        json_object_object_add(co, "value", json_object_new_double(p->coef));
    json_object_object_add(j, "coef", co);
    json_object_object_add(j, "model_problem", json_object_new_boolean(hr_problem_is_model(p)));
    json_object_object_add(j, "singular", json_object_new_boolean(gi->singular));
    json_object_object_add(j, "rhs_projection", hr_json_number(r->rhs_projection));
    json_object_object_add(j, "rhs", hr_json_text(rhs_name));
    json_object_object_add(j, "init",
                           hr_json_text(p->init == HR_INIT_SINE    ? "sine"
                                        : p->init == HR_INIT_ARRAY ? a->init_file
                                                                   : "zero"));
    /* what ran, as the library resolved it */
    json_object_object_add(j, "method", json_object_new_string(hr_method_name(gi->method)));
    json_object_object_add(j, "engine", json_object_new_string(gi->engine));
    json_object_object_add(j, "general", json_object_new_boolean(gi->general));
    json_object_object_add(j, "precision", json_object_new_string(hr_precision_name(gi->precision)));
    json_object_object_add(j, "backend", json_object_new_string(hr_backend_name(gi->backend)));
    json_object_object_add(j, "kernel", json_object_new_string(gi->kernel));
    json_object_object_add(j, "threads", json_object_new_int(gi->threads));
    json_object_object_add(j, "flush_subnormals", json_object_new_boolean(gi->flush_subnormals));
    if (gi->gpus > 0) json_object_object_add(j, "device", hr_json_text(r->device_name));
    if (gi->gpus > 1 && gi->ranks <= 1) { /* --gpus N: slabs of one process */
        json_object_object_add(j, "gpus", json_object_new_int(gi->gpus));
        json_object_object_add(j, "gpus_halo", json_object_new_string(gi->transport == 3 /* HR_MPI_TRANSPORT_NCCL */ ? "nccl" : "host"));
    }
    if (gi->method == HR_METHOD_MG || gi->method == HR_METHOD_MGCG) {
        json_object_object_add(j, "cycle", json_object_new_string(hr_cycle_name(go->cycle)));
        json_object_object_add(j, "pre", json_object_new_int(go->pre == HR_NONE ? 0 : go->pre ? go->pre : 2));
        json_object_object_add(j, "post",
                               json_object_new_int(go->post == HR_NONE ? 0
                                                   : go->post          ? go->post
                                                                       : 2));
        json_object_object_add(j, "smoother", json_object_new_string(gi->kernel));
        json_object_object_add(j, "levels", json_object_new_int(r->levels));
    } else if (gi->method != HR_METHOD_CG) {
        json_object_object_add(j, "omega", json_object_new_double(gi->omega));
    }
    json_object_object_add(j, "tol", json_object_new_double(go->tol));
    json_object_object_add(j, "max_iters", json_object_new_int64(go->max_iters));
    json_object_object_add(j, "iterations", json_object_new_int64(r->iterations));
    json_object_object_add(j, "reason", json_object_new_string(hr_reason_string(r->reason)));
    json_object_object_add(j, "converged", json_object_new_boolean(r->reason == HR_REASON_CONVERGED));
    if (hr_grid_absolute) json_object_object_add(j, "residual_absolute", json_object_new_boolean(1));
    json_object_object_add(j, "relative_residual", hr_json_number(r->relative_residual));
    if (isfinite(r->max_error)) json_object_object_add(j, "max_error", hr_json_number(r->max_error));
    if (isfinite(r->convergence_factor)) {
        json_object_object_add(j, "convergence_factor", hr_json_number(r->convergence_factor));
        json_object_object_add(j, "last_factor", hr_json_number(r->last_factor));
    }
    json_object_object_add(j, "time_s", json_object_new_double(r->time_s));
    json_object_object_add(j, "time_setup_s", json_object_new_double(r->time_setup_s));
    const double count = (double)hr_problem_unknowns(p);
    json_object_object_add(j, "ns_per_unknown", hr_json_number(count > 0 ? 1e9 * r->time_s / count : NAN));
    json_object_object_add(j, "commit", json_object_new_string(hr_cli_commit()));
    json_object_object_add(j, "date", json_object_new_string(date));
    return j;
}

/* What write_field writes: the solution as --output wants it. */
typedef struct field_src {
    const grid_args *a;
    const hr_problem *p;
    const double *sol;
    hr_precision prec;
} field_src;

static int write_field(const char *tmp, void *ctx)
{
    const field_src *f = ctx;
    const hr_problem *p = f->p;
    const hr_field_format fmt = hr_field_format_of(f->a->output);
    const int nz = p->dim == 3 ? p->n[2] : 1;
    hr_status ws;
    if (fmt == HR_FIELD_VTI) {
        /* the unknowns where they are: the first one half a cell in from a Dirichlet face */
        double origin[3] = {0.0, 0.0, 0.0}, h[3] = {1.0, 1.0, 1.0};
        for (int ax = 0; ax < p->dim; ax++) {
            h[ax] = hr_problem_spacing(p, ax);
            origin[ax] = p->bc[2 * ax].kind == HR_BC_DIRICHLET ? h[ax] : 0.0;
        }
        ws = hr_field_write_vti_box(tmp, p->n[0], p->n[1], nz, origin, h, f->sol, f->prec);
    } else {
        ws = hr_field_write_as(fmt, tmp, p->n[0], p->n[1], nz, f->sol, f->prec);
    }
    return ws == HR_OK              ? 0
           : ws == HR_ERR_IO        ? (errno ? errno : EIO)
           : ws == HR_ERR_NO_MEMORY ? ENOMEM
                                    : EINVAL;
}

/* The flags a general run cannot honour (one line, exit 2), or 0. `why` says what makes the
 * run general, for the messages. */
static int refusals(const grid_args *a, hr_flagset *fs, const char *why)
{
    const char *what = a->solver == GRID_MG   ? "mg"
                       : a->solver == GRID_CG ? "cg"
                                              : hr_method_name(a->o.method);
    /* MPI ranks take a slab of the last axis each: no other decomposition */
    if (hr_flags_seen(fs, "decomp"))
        return hr_cli_usage_error(CMD, "--decomp",
                                  "%s runs on MPI ranks as one slab of the last axis per rank: leave "
                                  "--decomp out",
                                  why);
    static const char *const never[] = {
        "checkpoint",  "restart",          "checkpoint-every", "verify",       "layout",
        "thread-grid", "host-memory",      "coarse-on",        "coarse-level", "split-ghost",
        "schedule",    "boundary-threads", "split-second",     "explain",      "ghost",
        "no-overlap"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        if (hr_flags_seen(fs, never[i]))
            return hr_cli_usage_error(CMD, NULL, "--%s: not available for %s yet", never[i], why);
    if (a->solver == GRID_RELAX) {
        static const char *const mg_only[] = {"pc", "cycle", "pre", "post", "smoother", "levels"};
        for (size_t i = 0; i < sizeof mg_only / sizeof mg_only[0]; i++)
            if (hr_flags_seen(fs, mg_only[i]))
                return hr_cli_usage_error(CMD, NULL, "--%s: needs --method mg or cg", mg_only[i]);
        if (a->mixed) return hr_cli_usage_error(CMD, "--precision", "mixed needs --method mg or cg");
        if (a->o.omega == HR_OMEGA_AUTO && a->o.method == HR_METHOD_JACOBI)
            return hr_cli_usage_error(CMD, "--omega", "auto needs --method redblack or sor");
        return 0;
    }
    static const char *const relax_only[] = {"alpha", "check"};
    for (size_t i = 0; i < sizeof relax_only / sizeof relax_only[0]; i++)
        if (hr_flags_seen(fs, relax_only[i]))
            return hr_cli_usage_error(CMD, NULL, "--%s: not used by --method %s", relax_only[i], what);
    if (hr_flags_seen(fs, "kernel") && (!a->o.kernel || strcmp(a->o.kernel, "general") != 0))
        return hr_cli_usage_error(CMD, "--kernel",
                                  "not used by --method %s (but 'general': the general-problem engine on "
                                  "the model problem too)",
                                  what);
    if (a->solver == GRID_CG && a->pc == 0) {
        static const char *const mg_only[] = {"cycle", "pre", "post", "smoother", "levels"};
        for (size_t i = 0; i < sizeof mg_only / sizeof mg_only[0]; i++)
            if (hr_flags_seen(fs, mg_only[i]))
                return hr_cli_usage_error(CMD, NULL, "--%s: needs --method mg or --pc mg", mg_only[i]);
    }
    if (a->pc == 1 && a->solver != GRID_CG)
        return hr_cli_usage_error(CMD, "--pc", "mg preconditions --method cg only (method is %s)", what);
    if (hr_flags_seen(fs, "omega")) {
        hr_entry_info e;
        int jac = 0;
        for (int i = 0; hr_registry_info_at(HR_KIND_SMOOTHER, i, &e) == HR_OK; i++)
            if (e.id == a->smoother) jac = (e.caps & HR_CAP_OMEGA) != 0;
        if (!jac || (a->solver == GRID_CG && a->pc == 0))
            return hr_cli_usage_error(CMD, "--omega",
                                      "with --method %s: the weight of --smoother jacobi only", what);
    }
    return 0;
}

/* hr_grid_options from the command's flags. */
static void map_options(const grid_args *a, const hr_flagset *fs, hr_grid_options *go)
{
    const hr_options *o = &a->o;
    hr_grid_options_default(go);
    const int mgm = a->solver != GRID_RELAX;
    go->method = a->solver == GRID_MG   ? HR_METHOD_MG
                 : a->solver == GRID_CG ? (a->pc == 1 ? HR_METHOD_MGCG : HR_METHOD_CG)
                                        : o->method;
    if (hr_flags_seen(fs, "omega")) go->omega = o->omega;
    if (mgm && hr_flags_seen(fs, "kernel")) go->kernel = "general";
    if (!mgm) {
        go->kernel = o->kernel;
        if (hr_flags_seen(fs, "alpha")) go->alpha = o->alpha;
        /* the relaxation methods' default precision is single (--help) where the model kernels
         * run; the general-problem engine's is double */
        go->precision = o->precision;
    } else {
        go->precision = a->mixed                                                           ? HR_PREC_MIXED
                        : hr_flags_seen(fs, "precision") && o->precision == HR_PREC_SINGLE ? HR_PREC_SINGLE
                                                                                           : HR_PREC_DOUBLE;
    }
    if (go->method == HR_METHOD_MG || go->method == HR_METHOD_MGCG) {
        go->cycle = (hr_cycle)a->cycle;
        go->pre = a->pre > 0 ? a->pre : HR_NONE; /* the command's 0 is none */
        go->post = a->post > 0 ? a->post : HR_NONE;
        if (hr_flags_seen(fs, "smoother")) go->smoother = smoother_name(a->smoother);
        go->levels = a->levels;
    }
    go->backend = o->backend;
    go->threads = o->backend == HR_BACKEND_CPU_SEQ ? 1 : o->threads;
    go->bind = o->bind;
    go->device = o->device;
    go->flush_subnormals = o->flush_subnormals;
    go->tuning = o->tuning; /* --tuning and the HETRELAX_* variables */
    if (hr_flags_seen(fs, "gpus")) go->gpus = o->gpus;
    if (hr_flags_seen(fs, "split")) go->split = o->split == HR_SPLIT_AUTO ? 0.0 : o->split;
    /* --tol: the sweeps run all --iters without one; mg and cg stop at 1e-8 by default */
    go->tol = hr_flags_seen(fs, "tol") || !mgm ? o->tol : 1e-8;
    go->max_iters = hr_flags_seen(fs, "iters") || !mgm ? o->iters : a->solver == GRID_MG ? 100 : 1000;
    if (!mgm) go->check_every = o->check_every;
    if (hr_flags_seen(fs, "divtol")) go->divtol = o->divtol;
    long every;
    if (hr_flags_seen(fs, "monitor"))
        every = o->monitor_every;
    else
        every = a->quiet ? 0 : mgm ? 1 : (go->max_iters >= 10 ? go->max_iters / 10 : 0);
    if (every > 0) {
        go->monitor = general_monitor;
        go->monitor_user = (void *)iter_name(go->method);
        go->monitor_every = every;
    }
}

/* The library's "field: reason" as the command says it: "--field: reason". */
typedef struct flag_ctx {
    hr_flagset *fs;
    int dim;
} flag_ctx;

static void general_flagify(void *arg, const char *err, char *msg, size_t size)
{
    const flag_ctx *c = arg;
    if (strncmp(err, "length:", 7) == 0) /* the box: --lx, --ly (--lz) */
        snprintf(msg, size, "--lx, --ly%s:%s", c->dim == 3 ? ", --lz" : "", err + 7);
    else
        hr_grid_flagify(c->fs, err, msg, size);
}

/* The banner, once the solver says what runs (on ranks: on rank 0, once every rank holds its
 * slab, so that an input error any rank finds comes first, alone). */
typedef struct header_ctx {
    const grid_args *a;
    const hr_problem *p;
    const hr_grid_options *go;
    const hr_grid_info *gi;
    const char *rhs_name;
} header_ctx;

/* Whether the system's b is zero, on a problem with a Dirichlet face: from the description (a
 * nonzero source or boundary datum makes b nonzero there), so that a large grid on ranks never
 * forms the whole b on every rank. A singular problem's projection may zero a nonzero source:
 * there the handle says (hr_grid_info.rhs_zero, from the b its set-up made). */
static int b_is_zero(const hr_problem *p, size_t count)
{
    if (p->rhs == HR_RHS_ARRAY) {
        for (size_t i = 0; i < count; i++)
            if (p->rhs_values[i] != 0.0) return 0;
    } else if (p->rhs != HR_RHS_ZERO) {
        return 0;
    }
    for (int f = 0; f < 2 * p->dim; f++) {
        const hr_bc *bc = &p->bc[f];
        if (bc->kind == HR_BC_PERIODIC) continue;
        if (!bc->values && bc->value != 0.0) return 0;
        const int a = f / 2;
        const size_t face = count / (size_t)p->n[a];
        for (size_t i = 0; bc->values && i < face; i++)
            if (bc->values[i] != 0.0) return 0;
    }
    return 1;
}

/* The handle made (gi filled): a singular problem's absolute-residual label, then the header */
static void header_ready(void *arg)
{
    const header_ctx *h = arg;
    if (h->gi->singular) hr_grid_absolute = h->gi->rhs_zero;
    if (!h->a->quiet) print_header(h->a, h->p, h->go, h->gi, h->rhs_name);
}

int hr_grid_run_general(grid_args *a, hr_flagset *fs)
{
    hr_options *o = &a->o;
    const int mgm = a->solver != GRID_RELAX;
    const int changed = hr_grid_problem_changed(a, fs);
    const char *why = changed ? "a problem other than the model problem (--bc, --coef, --lx, --rhs random)"
                              : "multigrid on sizes other than 2^k - 1";
    int rc = refusals(a, fs, why);
    if (rc) return rc;
    /* the extents: multigrid's default sizes for mg and cg, the sweeps' on the CPU otherwise */
    if (mgm) {
        hr_grid_mg_extents(a, fs, &a->nx, &a->ny, &a->nz);
    } else {
        const int n = hr_flags_seen(fs, "n") ? o->n : a->dim == 3 ? 256 : 4096;
        a->nx = o->nx > 0 ? o->nx : n;
        a->ny = o->ny > 0 ? o->ny : n;
        a->nz = a->dim == 3 ? (o->nz > 0 ? o->nz : n) : 1;
    }
    hr_grid_options go;
    map_options(a, fs, &go);
    if (go.max_iters < 1) return hr_cli_usage_error(CMD, "--iters", "needs at least 1 for %s", why);
    /* under mpirun: every rank builds the whole problem, rank 0 alone writes; a failure of one
     * rank's own (a file it cannot read or write) is agreed before the solve (mpi_glue.h) */
    const int use_mpi = hr_mpi_cli_wanted(&a->mpi);
    const int root = hr_mpi_cli_rank() == 0;
    int local_rc = 0;

    /* every output is opened (as its temporary file) before the work */
    hr_atomic out, jout;
    int out_open = 0, json_open = 0;
    grid_system_out sys;
    memset(&sys, 0, sizeof sys);
    grid_problem h;
    memset(&h, 0, sizeof h);
    hr_problem *p = &h.p;
    size_t count = 0;
    hr_precision fprec = HR_PREC_DOUBLE;
    double *sol = NULL;
    hr_grid_solver *s = NULL;
    json_object *j = NULL, *mpi_json = NULL;
    hr_grid_info gi;
    memset(&gi, 0, sizeof gi);
    hr_result r;
    memset(&r, 0, sizeof r);
    flag_ctx fc = {fs, a->dim};
    const char *rhs_name = o->rhs == HR_RHS_SPIKE          ? "spike"
                           : o->rhs == HR_RHS_MANUFACTURED ? "manufactured"
                           : o->rhs == HR_RHS_ZERO         ? "zero"
                           : o->rhs == HR_RHS_RANDOM       ? a->rhs_label
                                                           : a->rhs_file;
    if (root && a->output && (rc = hr_cli_open_output(CMD, "--output", a->output, &out)) != 0)
        goto local_fail;
    out_open = root && a->output != NULL;
    if (root && a->json && strcmp(a->json, "-") != 0) {
        if ((rc = hr_cli_open_output(CMD, "--json", a->json, &jout)) != 0) goto local_fail;
        json_open = 1;
    }
    if (root && (rc = hr_grid_system_open(a, &sys)) != 0) goto local_fail;
    if ((rc = hr_grid_problem_build(a, fs, &h)) != 0) goto local_fail;
    count = hr_problem_unknowns(p);
    if (!mgm && !hr_flags_seen(fs, "precision") && !hr_problem_is_model(p)) go.precision = HR_PREC_DOUBLE;
    /* files (--rhs, --init, --output .raw) hold values of the run's precision */
    fprec = go.precision == HR_PREC_SINGLE ? HR_PREC_SINGLE : HR_PREC_DOUBLE;
    if ((rc = hr_grid_problem_values(a, fprec, 1, &h)) != 0) goto local_fail;
    /* b = 0 (no source, no boundary data): the residuals are absolute */
    hr_grid_absolute = !hr_problem_is_singular(p) && b_is_zero(p, count);
    if (root && (rc = hr_grid_system_prepare(a, p, &sys)) != 0) goto local_fail;
    if (0) {
    local_fail: /* alone, return; on ranks, every rank learns it in the solve's agreement */
        if (!use_mpi) goto done;
        local_rc = rc;
    }
    char msg[400];
    hr_status st;
    int diverged;
    if (use_mpi) {
        if (!local_rc && root && a->output && !(sol = malloc((count ? count : 1) * sizeof *sol))) {
            fprintf(stderr, "hetrelax %s: out of memory for the gathered solution\n", CMD);
            local_rc = HR_EXIT_FAIL;
        }
        go.transport = a->mpi.transport; /* GPU ranks: auto, host or nccl (the library refuses others) */
        header_ctx hc = {a, p, &go, &gi, rhs_name};
        a->mpi.flagify = general_flagify;
        a->mpi.flagify_arg = &fc;
        a->mpi.ready = header_ready;
        a->mpi.ready_arg = &hc;
        rc = hr_mpi_cli_solve_grid(CMD, p, &go, &a->mpi, local_rc, &gi, &r, root ? sol : NULL, count,
                                   &mpi_json);
        diverged = rc == HR_EXIT_FAIL && (r.reason == HR_REASON_DIVERGED || r.reason == HR_REASON_NAN ||
                                          r.reason == HR_REASON_BREAKDOWN);
        if (rc && !diverged) goto done; /* printed, the same status on every rank */
    } else {
        st = hr_grid_solver_create(p, &go, &s);
        if (st != HR_OK) {
            general_flagify(&fc, hr_last_error(), msg, sizeof msg);
            if (st == HR_ERR_INVALID_ARG || st == HR_ERR_UNSUPPORTED || st == HR_ERR_NO_DEVICE ||
                st == HR_ERR_NO_MEMORY) {
                rc = hr_cli_usage_error(CMD, NULL, "%s%s", st == HR_ERR_NO_MEMORY ? "out of memory: " : "",
                                        msg);
            } else {
                fprintf(stderr, "hetrelax %s: %s: %s\n", CMD, hr_status_string(st), msg);
                rc = HR_EXIT_FAIL;
            }
            goto done;
        }
        /* the library copied the arrays */
        free(h.rhs);
        free(h.init);
        h.rhs = h.init = NULL;
        p->rhs_values = p->init_values = NULL;
        hr_grid_solver_info(s, &gi);
        header_ctx hc = {a, p, &go, &gi, rhs_name};
        header_ready(&hc);
        st = hr_grid_solver_solve(s, NULL, NULL, &r);
        if (st != HR_OK && st != HR_ERR_DIVERGED) {
            hr_grid_flagify(fs, hr_grid_solver_last_error(s), msg, sizeof msg);
            fprintf(stderr, "hetrelax %s: %s: %s\n", CMD, hr_status_string(st), msg);
            rc = st == HR_ERR_UNSUPPORTED || st == HR_ERR_INVALID_ARG ? HR_EXIT_USAGE : HR_EXIT_FAIL;
            goto done;
        }
        diverged = st == HR_ERR_DIVERGED;
    }
    diverged = diverged || r.reason == HR_REASON_DIVERGED || r.reason == HR_REASON_NAN;
    rc = diverged ? HR_EXIT_FAIL : hr_cli_run_status(r.reason, go.tol);
    const char *its = go.method == HR_METHOD_MG                                  ? "cycles"
                      : go.method == HR_METHOD_CG || go.method == HR_METHOD_MGCG ? "iterations"
                                                                                 : "sweeps";
    char outcome[64];
    if (rc == HR_EXIT_NOT_CONVERGED)
        snprintf(outcome, sizeof outcome, "NOT converged: --tol %g not reached", go.tol);
    else
        snprintf(outcome, sizeof outcome, "%s", hr_reason_string(r.reason));
    fprintf(hout, "summary   %ld %s (%s) in %.4f s: %.3f ns per unknown (setup %.4f s", r.iterations, its,
            outcome, r.time_s, count ? 1e9 * r.time_s / (double)count : 0.0, r.time_setup_s);
    if (r.levels > 0) fprintf(hout, ", %d levels", r.levels);
    fprintf(hout, ")\n          ");
    if (isfinite(r.convergence_factor))
        fprintf(hout, "convergence factor %.4f (last %.4f), ", r.convergence_factor, r.last_factor);
    fprintf(hout, "%s %.6e", hr_cli_residual_label(hr_grid_absolute), r.relative_residual);
    if (isfinite(r.max_error)) fprintf(hout, ", max error vs exact %.6e", r.max_error);
    fprintf(hout, "\n");
    hr_grid_print_flush(a, gi.flush_subnormals, hr_backend_name(gi.backend));
    if (gi.singular)
        fprintf(hout,
                "singular  no Dirichlet face: the right-hand side was projected onto A's range "
                "(||b - b_proj|| / ||b|| = %.3e); the solution has zero mean\n",
                r.rhs_projection);
    if (diverged && root)
        fprintf(stderr, "hetrelax %s: the iteration diverged (%s)%s\n", CMD, hr_reason_string(r.reason),
                (out_open || json_open || sys.A_open || sys.b_open) && !a->keep_diverged
                    ? ": no output written (--keep-diverged keeps the diverged state)"
                    : "");
    else if (rc == HR_EXIT_NOT_CONVERGED && root) {
        char advice[128];
        hr_cli_not_converged(CMD, r.iterations, its, r.relative_residual, hr_grid_absolute, go.tol,
                             hr_cli_not_converged_advice("--iters", go.precision == HR_PREC_SINGLE, go.tol,
                                                         mgm ? "--precision mixed" : "--precision double",
                                                         advice, sizeof advice));
    }
    if (!use_mpi) { /* on ranks, rank 0 holds the gathered solution already */
        if (a->output && !(sol = malloc((count ? count : 1) * sizeof *sol))) {
            fprintf(stderr, "hetrelax %s: out of memory copying the solution\n", CMD);
            rc = HR_EXIT_FAIL;
            goto done;
        }
        if (sol && (st = hr_grid_solver_solution(s, HR_PREC_DOUBLE, sol, count)) != HR_OK) {
            fprintf(stderr, "hetrelax %s: copying the solution: %s\n", CMD, hr_grid_solver_last_error(s));
            rc = HR_EXIT_FAIL;
            goto done;
        }
    }
    if (!root) goto done; /* rank 0 writes */
    field_src fsrc = {a, p, sol, fprec};
    if (a->json) {
        j = general_json(a, p, &go, &gi, &r, rhs_name);
        if (mpi_json) json_object_object_add(j, "mpi", mpi_json);
        mpi_json = NULL;
    }
    if (diverged) {
        /* nothing replaced; the diverged state only where it was asked for */
        if (out_open) hr_atomic_abort(&out);
        if (json_open) hr_atomic_abort(&jout);
        out_open = json_open = 0;
        if (a->keep_diverged && hr_cli_keep_diverged(CMD, a->output, sol ? write_field : NULL, &fsrc, a->json,
                                                     j, a->quiet, hout) != 0)
            rc = HR_EXIT_FAIL;
        if (j && strcmp(a->json, "-") == 0) hr_cli_write_json_to(CMD, NULL, j);
        goto done;
    }
    if (out_open) {
        out_open = 0;
        if (hr_cli_close_output(CMD, "--output", &out, write_field(out.tmp, &fsrc)) != 0)
            rc = HR_EXIT_FAIL;
        else if (!a->quiet)
            fprintf(hout, "wrote     %s\n", a->output);
    }
    if (hr_grid_system_commit(a, &sys) != 0) rc = HR_EXIT_FAIL;
    if (j) {
        const int jr = hr_cli_write_json_to(CMD, json_open ? &jout : NULL, j);
        json_open = 0;
        if (jr && rc != HR_EXIT_FAIL) rc = jr;
    }
done:
    json_object_put(j);
    json_object_put(mpi_json);
    hr_grid_solver_free(s);
    hr_grid_problem_free(&h);
    free(sol);
    if (out_open) hr_atomic_abort(&out);
    if (json_open) hr_atomic_abort(&jout);
    hr_grid_system_abort(&sys);
    return rc;
}
