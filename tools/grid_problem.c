/*
 * The grid commands' problem beyond the model problem (include/hetrelax/problem.h): boundary
 * conditions per face (--bc), the coefficient (--coef), the box (--lx, --ly, --lz), and the
 * discrete system written out (--write-matrix, --write-rhs). Parsing checks the syntax; the
 * sizes of the files and what the library accepts are checked once the extents are known
 * (hr_grid_problem_build).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "field_io.h"
#include "grid_cmd.h"
#include "hetrelax/sparse.h"

#define CMD hr_grid_cmd

static const char *const face_names[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
static const char *const kind_names[3] = {"dirichlet", "neumann", "periodic"};

/* A whole string that is a number (strtod's syntax): 1 and *v, else 0. */
static int whole_number(const char *s, double *v)
{
    if (!*s) return 0;
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *end == '\0' && end != s;
}

/* One --bc item, FACE=TYPE[:VALUE|:FILE], applied to a->bc. */
static int bc_item(const char *cmd, const hr_flag *f, grid_args *a, const char *item, size_t len)
{
    char buf[1024];
    if (len == 0)
        return hr_flag_error(cmd, f, "empty item (expected FACE=TYPE[:VALUE|:FILE], comma-separated)");
    if (len >= sizeof buf) return hr_flag_error(cmd, f, "item too long (%zu characters)", len);
    memcpy(buf, item, len);
    buf[len] = '\0';
    char *eq = strchr(buf, '=');
    if (!eq)
        return hr_flag_error(cmd, f,
                             "'%s': expected FACE=TYPE[:VALUE|:FILE] (e.g. x-=dirichlet:0, y=periodic)", buf);
    *eq = '\0';
    const char *face = buf, *type = eq + 1;
    char *colon = strchr(eq + 1, ':');
    const char *arg = NULL;
    if (colon) {
        *colon = '\0';
        arg = colon + 1;
    }
    const int nf = 2 * a->dim;
    int f0 = -1, f1 = -1; /* the faces [f0, f1) this item sets */
    for (int i = 0; i < 6; i++)
        if (strcmp(face, face_names[i]) == 0) f0 = i, f1 = i + 1;
    static const char axes[3][2] = {"x", "y", "z"};
    for (int ax = 0; ax < 3; ax++)
        if (strcmp(face, axes[ax]) == 0) f0 = 2 * ax, f1 = 2 * ax + 2;
    if (strcmp(face, "all") == 0) f0 = 0, f1 = nf;
    if (f0 < 0)
        return hr_flag_error(cmd, f, "unknown face '%s' (x-, x+, y-, y+%s, an axis x, y%s, or all)", face,
                             a->dim == 3 ? ", z-, z+" : "", a->dim == 3 ? ", z" : "");
    if (f0 >= nf) return hr_flag_error(cmd, f, "%s: %s has no z faces (2-D)", face, cmd);
    int kind = -1;
    for (int k = 0; k < 3; k++)
        if (strcmp(type, kind_names[k]) == 0) kind = k;
    if (kind < 0)
        return hr_flag_error(cmd, f, "%s: unknown type '%s' (dirichlet, neumann or periodic)", face, type);
    double value = 0.0;
    const char *file = NULL;
    if (arg) {
        if (kind == HR_BC_PERIODIC)
            return hr_flag_error(cmd, f, "%s=periodic takes no value (got ':%s')", face, arg);
        if (!*arg)
            return hr_flag_error(cmd, f, "%s=%s: empty value after ':' (a number or a file)", face, type);
        if (whole_number(arg, &value)) {
            if (!isfinite(value))
                return hr_flag_error(cmd, f, "%s=%s: value %s is not finite", face, type, arg);
        } else {
            /* the item's text is a copy: the file name must outlive the parse */
            file = item + (arg - buf);
        }
    }
    for (int i = f0; i < f1; i++) {
        grid_face_arg *b = &a->bc[i];
        b->set = 1;
        b->kind = (hr_bc_kind)kind;
        b->has_value = arg != NULL;
        b->value = value;
        b->file = file;
        b->file_len = file ? len - (size_t)(file - item) : 0;
    }
    return 0;
}

static int parse_bc(const char *cmd, const hr_flag *f, const char *arg)
{
    grid_args *a = f->target;
    const char *s = arg;
    for (;;) {
        const char *comma = strchr(s, ',');
        const size_t len = comma ? (size_t)(comma - s) : strlen(s);
        const int rc = bc_item(cmd, f, a, s, len);
        if (rc) return rc;
        if (!comma) return 0;
        s = comma + 1;
    }
}

static int parse_coef(const char *cmd, const hr_flag *f, const char *arg)
{
    grid_args *a = f->target;
    double v;
    a->coef = 0.0;
    a->coef_file = NULL;
    if (whole_number(arg, &v)) {
        if (!isfinite(v) || !(v > 0.0)) return hr_flag_error(cmd, f, "%s: must be finite and > 0", arg);
        a->coef = v;
    } else {
        a->coef_file = arg;
    }
    return 0;
}

static int parse_length(const char *cmd, const hr_flag *f, const char *arg)
{
    double v;
    if (!whole_number(arg, &v)) return hr_flag_error(cmd, f, "'%s' is not a number", arg);
    if (!isfinite(v) || !(v > 0.0)) return hr_flag_error(cmd, f, "%s: must be finite and > 0", arg);
    *(double *)f->target = v;
    return 0;
}

void hr_grid_problem_flags(hr_flagset *fs, grid_args *a)
{
    const int d3 = a->dim == 3;
    hr_flags_add(
        fs,
        hr_flag_custom("bc", a, NULL, parse_bc, "SPEC",
                       d3 ? "boundary conditions: comma-separated FACE=TYPE[:VALUE|:FILE], FACE x- x+ y- y+\n"
                            "z- z+, an axis x y z (both faces) or all; TYPE dirichlet (u = VALUE, default\n"
                            "--boundary), neumann (du/dn = VALUE outward, default 0) or periodic (an axis,\n"
                            "no value); FILE: raw fp64, one value per point of the face (x faces Y*Z, y\n"
                            "faces X*Z, z faces X*Y, first remaining axis fastest); later items win\n"
                            "(default all=dirichlet:--boundary)"
                          : "boundary conditions: comma-separated FACE=TYPE[:VALUE|:FILE], FACE x- x+ y-\n"
                            "y+, an axis x y (both faces) or all; TYPE dirichlet (u = VALUE, default\n"
                            "--boundary), neumann (du/dn = VALUE outward, default 0) or periodic (an axis,\n"
                            "no value); FILE: raw fp64, one value per point of the face (x faces Y, y\n"
                            "faces X); later items win (default all=dirichlet:--boundary)"));
    hr_flags_add(fs, hr_flag_custom("coef", a, NULL, parse_coef, "VALUE|FILE",
                                    "a in -div(a grad u) = f: a constant > 0 (default 1), or a raw fp64\n"
                                    "file of one value > 0 per unknown (x fastest)"));
    hr_flags_add(fs, hr_flag_custom("lx", &a->length[0], NULL, parse_length, "L",
                                    "the box's length along x (default: the model's, h = 1/(max(N)+1) on\n"
                                    "every axis, 1 along the longest; one given: the others 1)"));
    hr_flags_add(fs, hr_flag_custom("ly", &a->length[1], NULL, parse_length, "L", "the length along y"));
    if (d3)
        hr_flags_add(fs, hr_flag_custom("lz", &a->length[2], NULL, parse_length, "L", "the length along z"));
}

/* ------------------------------------------------------------------ routing */

int hr_grid_problem_changed(grid_args *a, const hr_flagset *fs)
{
    (void)fs;
    if (a->coef_file || (a->coef != 0.0 && a->coef != 1.0)) return 1;
    if (a->o.rhs == HR_RHS_RANDOM) return 1;
    if (a->length[0] > 0.0 || a->length[1] > 0.0 || a->length[2] > 0.0) return 1;
    double v = a->o.boundary;
    int first = 1;
    for (int f = 0; f < 2 * a->dim; f++) {
        const grid_face_arg *b = &a->bc[f];
        if (b->set && (b->kind != HR_BC_DIRICHLET || b->file)) return 1;
        const double fv = b->set && b->has_value ? b->value : a->o.boundary;
        if (!first && fv != v) return 1;
        v = fv;
        first = 0;
    }
    a->o.boundary = v; /* one Dirichlet value on every face: the model problem's --boundary */
    return 0;
}

void hr_grid_mg_extents(const grid_args *a, const hr_flagset *fs, int *nx, int *ny, int *nz)
{
    const hr_options *o = &a->o;
    int n = hr_flags_seen(fs, "n") ? o->n : 0;
    const int gz = a->dim == 3 ? o->nz : 0;
    if (!n && !o->nx && !o->ny && !gz) n = a->dim == 3 ? 127 : 1023;
    if (!n) n = o->nx ? o->nx : o->ny ? o->ny : gz;
    *nx = o->nx ? o->nx : n;
    *ny = o->ny ? o->ny : n;
    *nz = a->dim == 3 ? (gz ? gz : n) : 1;
}

/* ------------------------------------------------------------------ the problem */

/* `count` fp64 values of `flag`'s file into a new buffer; 0, or exit 2 after one line. */
static int read_file(const char *flag, const char *what, const char *path, size_t count, double **out)
{
    *out = malloc((count ? count : 1) * sizeof **out);
    char why[160] = "";
    const hr_status st =
        *out ? hr_field_read_raw_why(path, count, HR_PREC_DOUBLE, *out, why, sizeof why) : HR_ERR_NO_MEMORY;
    if (st == HR_OK) return 0;
    free(*out);
    *out = NULL;
    if (st == HR_ERR_FORMAT)
        return hr_cli_usage_error(CMD, flag,
                                  "%s'%s': %s (expected exactly %zu finite fp64 values, %zu bytes)", what,
                                  path, why, count, count * 8);
    if (st == HR_ERR_NO_MEMORY)
        return hr_cli_usage_error(CMD, flag, "%s%zu values do not fit in memory", what, count);
    return hr_cli_usage_error(CMD, flag, "%scannot read '%s': %s (not a number, nor a readable file)", what,
                              path, why);
}

int hr_grid_problem_build(const grid_args *a, hr_flagset *fs, grid_problem *h)
{
    char why[240], msg[300];
    memset(h, 0, sizeof *h);
    hr_problem *p = &h->p;
    if (hr_problem_init_model(p, a->dim, a->nx, a->ny, a->nz) != HR_OK) {
        hr_grid_flagify(fs, hr_last_error(), msg, sizeof msg);
        return hr_cli_usage_error(CMD, NULL, "%s", msg);
    }
    if (a->length[0] > 0.0 || a->length[1] > 0.0 || a->length[2] > 0.0) {
        double l[3];
        for (int ax = 0; ax < 3; ax++)
            l[ax] = a->length[ax] > 0.0 ? a->length[ax] : 1.0;
        if (hr_problem_set_lengths(p, l[0], l[1], l[2]) != HR_OK)
            return hr_cli_usage_error(CMD, "--lx", "%s", hr_last_error());
    }
    /* the faces as given (a periodic face without its partner stays so: validation names it) */
    for (int f = 0; f < 2 * a->dim; f++) {
        const grid_face_arg *b = &a->bc[f];
        hr_bc *pb = &p->bc[f];
        pb->kind = b->set ? b->kind : HR_BC_DIRICHLET;
        pb->value = b->set && b->has_value ? b->value : pb->kind == HR_BC_DIRICHLET ? a->o.boundary : 0.0;
        pb->values = NULL;
    }
    if (a->coef > 0.0) p->coef = a->coef;
    /* the description first (periodic pairs, sizes per axis), then the files' sizes */
    if (hr_problem_validate(p, why, sizeof why) != HR_OK) {
        hr_grid_flagify(fs, why, msg, sizeof msg);
        return hr_cli_usage_error(CMD, NULL, "%s", msg);
    }
    for (int f = 0; f < 2 * a->dim; f++) {
        const grid_face_arg *b = &a->bc[f];
        if (!b->set || !b->file) continue;
        char path[1024], what[32];
        snprintf(path, sizeof path, "%.*s", (int)b->file_len, b->file);
        snprintf(what, sizeof what, "face %s: ", face_names[f]);
        const int rc = read_file("--bc", what, path, hr_problem_face_points(p, (hr_face)f), &h->face[f]);
        if (rc) return rc;
        p->bc[f].values = h->face[f];
    }
    if (a->coef_file) {
        const int rc = read_file("--coef", "", a->coef_file, hr_problem_unknowns(p), &h->coef);
        if (rc) return rc;
        p->coef_values = h->coef;
    }
    if (hr_problem_validate(p, why, sizeof why) != HR_OK) {
        hr_grid_flagify(fs, why, msg, sizeof msg);
        return hr_cli_usage_error(CMD, NULL, "%s", msg);
    }
    p->rhs = a->o.rhs == HR_RHS_ARRAY ? HR_RHS_ZERO : a->o.rhs; /* the file's values come later */
    if (a->o.rhs == HR_RHS_RANDOM) p->rhs_seed = a->rhs_seed;   /* else the default, 1 */
    return 0;
}

int hr_grid_problem_values(const grid_args *a, hr_precision prec, int init, grid_problem *h)
{
    hr_problem *p = &h->p;
    const size_t count = hr_problem_unknowns(p);
    int rc;
    p->rhs = a->o.rhs;
    if (a->o.rhs == HR_RHS_RANDOM) p->rhs_seed = a->rhs_seed;
    if (a->o.rhs == HR_RHS_ARRAY) {
        if ((rc = hr_grid_read_values("--rhs", a->rhs_file, count, prec, &h->rhs)) != 0) return rc;
        p->rhs_values = h->rhs;
    }
    if (init) {
        p->init = a->o.init;
        if (a->o.init == HR_INIT_ARRAY) {
            if ((rc = hr_grid_read_values("--init", a->init_file, count, prec, &h->init)) != 0) return rc;
            p->init_values = h->init;
        }
    }
    return 0;
}

void hr_grid_problem_free(grid_problem *h)
{
    for (int f = 0; f < 6; f++) {
        free(h->face[f]);
        h->face[f] = NULL;
    }
    free(h->coef);
    free(h->rhs);
    free(h->init);
    h->coef = h->rhs = h->init = NULL;
}

/* ------------------------------------------------------------------ the system */

int hr_grid_system_open(const grid_args *a, grid_system_out *w)
{
    memset(w, 0, sizeof *w);
    int rc;
    if (a->write_matrix) {
        if ((rc = hr_cli_open_output(CMD, "--write-matrix", a->write_matrix, &w->A)) != 0) return rc;
        w->A_open = 1;
    }
    if (a->write_rhs) {
        if ((rc = hr_cli_open_output(CMD, "--write-rhs", a->write_rhs, &w->b)) != 0) {
            hr_grid_system_abort(w);
            return rc;
        }
        w->b_open = 1;
    }
    return 0;
}

void hr_grid_system_abort(grid_system_out *w)
{
    if (w->A_open) hr_atomic_abort(&w->A);
    if (w->b_open) hr_atomic_abort(&w->b);
    w->A_open = w->b_open = 0;
}

/* errno of a failed library write (0: none) */
static int write_errno(hr_status st)
{
    return st == HR_OK              ? 0
           : st == HR_ERR_IO        ? (errno ? errno : EIO)
           : st == HR_ERR_NO_MEMORY ? ENOMEM
                                    : EINVAL;
}

/* count fp64 values into path; HR_OK or HR_ERR_IO (errno set) */
static hr_status write_doubles(const char *path, const double *v, size_t count)
{
    errno = 0;
    FILE *f = fopen(path, "wb");
    if (!f) return HR_ERR_IO;
    const int bad = fwrite(v, sizeof *v, count, f) != count;
    const int e = errno;
    if (fclose(f) != 0 || bad) {
        if (bad && e) errno = e;
        return HR_ERR_IO;
    }
    return HR_OK;
}

int hr_grid_system_prepare(const grid_args *a, const hr_problem *p, grid_system_out *w)
{
    (void)a;
    if (w->A_open) {
        hr_csr *A = NULL;
        hr_status st = hr_problem_matrix(p, &A);
        if (st == HR_ERR_INVALID_ARG) { /* more unknowns than a CSR matrix holds */
            const int rc = hr_cli_usage_error(CMD, "--write-matrix", "%s", hr_last_error());
            hr_grid_system_abort(w);
            return rc;
        }
        if (st == HR_OK) {
            char comment[160];
            snprintf(comment, sizeof comment, "hetrelax %s: A of the discrete system (hr_problem_matrix)",
                     CMD);
            w->nnz = (long long)A->nnz;
            st = hr_mm_write_csr(w->A.tmp, A, comment);
        }
        hr_csr_free(A);
        if (st != HR_OK) {
            w->A_open = 0;
            hr_cli_close_output(CMD, "--write-matrix", &w->A, write_errno(st)); /* prints why */
            hr_grid_system_abort(w);
            return HR_EXIT_FAIL;
        }
    }
    if (w->b_open) {
        const size_t count = hr_problem_unknowns(p);
        double *b = malloc((count ? count : 1) * sizeof *b);
        hr_system_info info;
        memset(&info, 0, sizeof info);
        hr_status st = b ? hr_problem_rhs(p, NULL, b, count, &info) : HR_ERR_NO_MEMORY;
        if (st == HR_OK) st = write_doubles(w->b.tmp, b, count);
        free(b);
        if (st != HR_OK) {
            w->b_open = 0;
            hr_cli_close_output(CMD, "--write-rhs", &w->b, write_errno(st));
            hr_grid_system_abort(w);
            return HR_EXIT_FAIL;
        }
        w->singular = info.singular;
    }
    w->count = hr_problem_unknowns(p);
    return 0;
}

int hr_grid_system_commit(const grid_args *a, grid_system_out *w)
{
    int rc = 0;
    if (w->A_open) {
        w->A_open = 0;
        if (hr_cli_close_output(CMD, "--write-matrix", &w->A, 0) != 0)
            rc = HR_EXIT_FAIL;
        else if (!a->quiet)
            fprintf(hr_grid_out, "wrote     %s (A: %zu x %zu, %lld entries)\n", a->write_matrix, w->count,
                    w->count, w->nnz);
    }
    if (w->b_open) {
        w->b_open = 0;
        if (hr_cli_close_output(CMD, "--write-rhs", &w->b, 0) != 0)
            rc = HR_EXIT_FAIL;
        else if (!a->quiet)
            fprintf(hr_grid_out, "wrote     %s (b: %zu fp64 values%s)\n", a->write_rhs, w->count,
                    w->singular ? ", projected onto A's range: the problem is singular" : "");
    }
    return rc;
}
