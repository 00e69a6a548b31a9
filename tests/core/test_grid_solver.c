/* The problem description (hetrelax/problem.h) and the one structured-grid handle
 * (hetrelax/grid_solver.h) on the CPU: every method x placement that runs here is bitwise
 * the engine it dispatches to (hr_solver, hr_mg), run directly with the same settings (the
 * asynchronous kernels: to the tolerance); every combination that does not run is refused
 * with its message; the conventions (one precision default, one monitor signature, one
 * error channel). Uses only the public headers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/mg.h"

/* ------------------------------------------------------------------ helpers */

static double *random_values(size_t n, uint64_t seed)
{
    double *f = malloc(n * sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        f[i] = (double)(seed >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    }
    return f;
}

static hr_problem model(int dim, int nx, int ny, int nz)
{
    hr_problem p;
    assert_int_equal(hr_problem_init_model(&p, dim, nx, ny, nz), HR_OK);
    return p;
}

static hr_grid_solver *must_create(const hr_problem *p, const hr_grid_options *o)
{
    hr_grid_solver *s = NULL;
    const hr_status st = hr_grid_solver_create(p, o, &s);
    if (st != HR_OK) fail_msg("create: %s (%s)", hr_status_string(st), hr_last_error());
    return s;
}

/* Solves on the handle; returns the solution in double (caller frees). */
static double *grid_solve(hr_grid_solver *s, size_t count, const double *rhs, const double *x0, hr_result *r)
{
    const hr_status st = hr_grid_solver_solve(s, rhs, x0, r);
    if (st != HR_OK) fail_msg("solve: %s (%s)", hr_status_string(st), hr_grid_solver_last_error(s));
    double *u = malloc(count * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, count), HR_OK);
    return u;
}

/* The old path: hr_solver with options built by hand. */
static double *old_relax(const hr_options *o, size_t count, hr_result *r)
{
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    if (st != HR_OK) fail_msg("hr_solver_create: %s (%s)", hr_status_string(st), hr_last_error());
    st = hr_solver_run(s, r);
    if (st != HR_OK) fail_msg("hr_solver_run: %s", hr_status_string(st));
    double *u = malloc(count * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_solver_solution(s, HR_PREC_DOUBLE, u, count), HR_OK);
    hr_solver_free(s);
    return u;
}

/* The old path: hr_mg with options built by hand. */
static double *old_mg(const hr_mg_options *o, size_t count, hr_mg_result *r)
{
    hr_mg *m = NULL;
    hr_status st = hr_mg_create(o, &m);
    if (st != HR_OK) fail_msg("hr_mg_create: %s (%s)", hr_status_string(st), hr_mg_last_error());
    st = hr_mg_solve(m, r);
    if (st != HR_OK) fail_msg("hr_mg_solve: %s", hr_status_string(st));
    double *u = malloc(count * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_mg_solution(m, u, count), HR_OK);
    hr_mg_free(m);
    return u;
}

static void same_bits(const double *a, const double *b, size_t n, const char *what)
{
    if (memcmp(a, b, n * sizeof *a) != 0) {
        size_t i = 0;
        while (i < n && memcmp(&a[i], &b[i], sizeof *a) == 0)
            i++;
        fail_msg("%s: differs at %zu (%.17g vs %.17g)", what, i, a[i], b[i]);
    }
}

/* create must fail with `st`, no handle, and a last error that starts with `field`. */
static void expect_refused(const hr_problem *p, const hr_grid_options *o, hr_status st, const char *field)
{
    hr_grid_solver *s = (hr_grid_solver *)0x1;
    const hr_status got = hr_grid_solver_create(p, o, &s);
    if (got != st || strncmp(hr_last_error(), field, strlen(field)) != 0)
        fail_msg("expected %s \"%s...\", got %s \"%s\"", hr_status_string(st), field, hr_status_string(got),
                 hr_last_error());
    assert_null(s);
    print_message("refused: %s\n", hr_last_error());
}

/* ------------------------------------------------------------------ the problem */

static void problem_model(void **state)
{
    (void)state;
    hr_problem p = model(2, 63, 31, 0);
    assert_int_equal(p.dim, 2);
    assert_int_equal(p.n[0], 63);
    assert_int_equal(p.n[1], 31);
    assert_int_equal(p.n[2], 1);
    /* the model's one spacing: 1 / (max extent + 1) on every axis */
    assert_true(fabs(hr_problem_spacing(&p, 0) - 1.0 / 64.0) < 1e-15);
    assert_true(fabs(hr_problem_spacing(&p, 1) - 1.0 / 64.0) < 1e-15);
    assert_true(isnan(hr_problem_spacing(&p, 2)));
    assert_true(p.length[0] == 1.0 && p.length[1] == 0.5);
    for (int f = 0; f < HR_FACE_COUNT; f++) {
        assert_int_equal(p.bc[f].kind, HR_BC_DIRICHLET);
        assert_true(p.bc[f].value == 0.0 && p.bc[f].values == NULL);
    }
    assert_true(p.coef == 1.0 && p.coef_values == NULL);
    assert_int_equal(p.rhs, HR_RHS_SPIKE);
    assert_int_equal(p.init, HR_INIT_ZERO);
    assert_int_equal(hr_problem_validate(&p, NULL, 0), HR_OK);
    assert_int_equal(hr_problem_unknowns(&p), 63 * 31);
    assert_int_equal(hr_problem_face_points(&p, HR_FACE_X_MINUS), 31);
    assert_int_equal(hr_problem_face_points(&p, HR_FACE_Y_PLUS), 63);
    assert_int_equal(hr_problem_face_points(&p, HR_FACE_Z_MINUS), 0);
    hr_problem q = model(3, 7, 5, 3);
    assert_int_equal(hr_problem_unknowns(&q), 105);
    assert_int_equal(hr_problem_face_points(&q, HR_FACE_Z_PLUS), 35);
    assert_int_equal(hr_problem_face_points(&q, HR_FACE_X_PLUS), 15);
    assert_string_equal(hr_face_name(HR_FACE_Y_PLUS), "y+");
    assert_null(hr_face_name((hr_face)6));
    assert_string_equal(hr_bc_kind_name(HR_BC_NEUMANN), "neumann");
    assert_null(hr_bc_kind_name((hr_bc_kind)3));
    /* periodic belongs to an axis: one call sets both faces; a spacing of n per length */
    assert_int_equal(hr_problem_set_bc(&p, HR_FACE_X_PLUS, HR_BC_PERIODIC, 0.0, NULL), HR_OK);
    assert_int_equal(p.bc[HR_FACE_X_MINUS].kind, HR_BC_PERIODIC);
    assert_true(fabs(hr_problem_spacing(&p, 0) - 1.0 / 63.0) < 1e-15);
    assert_int_equal(hr_problem_validate(&p, NULL, 0), HR_OK);
    /* and setting one of them to something else leaves the axis not periodic at all */
    assert_int_equal(hr_problem_set_bc(&p, HR_FACE_X_MINUS, HR_BC_NEUMANN, 2.0, NULL), HR_OK);
    assert_int_equal(p.bc[HR_FACE_X_PLUS].kind, HR_BC_DIRICHLET);
    assert_int_equal(hr_problem_validate(&p, NULL, 0), HR_OK);
    assert_int_equal(hr_problem_set_bc(&p, HR_FACES_ALL, HR_BC_DIRICHLET, 1.5, NULL), HR_OK);
    for (int f = 0; f < 4; f++)
        assert_true(p.bc[f].kind == HR_BC_DIRICHLET && p.bc[f].value == 1.5);
    assert_true(p.bc[HR_FACE_Z_MINUS].value == 0.0); /* a 2-D problem's z faces are not its faces */
}

static void expect_bad_problem(const hr_problem *p, const char *field)
{
    char why[200] = "";
    assert_int_equal(hr_problem_validate(p, why, sizeof why), HR_ERR_INVALID_ARG);
    if (strncmp(why, field, strlen(field)) != 0) fail_msg("expected \"%s...\", got \"%s\"", field, why);
    /* create says the same */
    hr_grid_options o;
    hr_grid_options_default(&o);
    expect_refused(p, &o, HR_ERR_INVALID_ARG, field);
}

static void expect_bad_setter(hr_status st, const char *field)
{
    assert_int_equal(st, HR_ERR_INVALID_ARG);
    if (strncmp(hr_last_error(), field, strlen(field)) != 0)
        fail_msg("expected \"%s...\", got \"%s\"", field, hr_last_error());
}

static void problem_bad(void **state)
{
    (void)state;
    const hr_problem d = model(2, 15, 15, 0);
    const double nan_v = NAN, inf_v = INFINITY;
    double face[15], coef[225];
    for (int i = 0; i < 15; i++)
        face[i] = 1.0;
    for (int i = 0; i < 225; i++)
        coef[i] = 1.0;
    hr_problem p = d;
    p.dim = 4;
    expect_bad_problem(&p, "dim:");
    p = d;
    p.n[1] = 0;
    expect_bad_problem(&p, "ny:");
    p = d;
    p.n[2] = 5;
    expect_bad_problem(&p, "nz:");
    p = d;
    p.length[0] = -1.0;
    expect_bad_problem(&p, "length:");
    p = d;
    p.length[1] = nan_v;
    expect_bad_problem(&p, "length:");
    p = d;
    p.bc[HR_FACE_Y_MINUS].kind = (hr_bc_kind)7;
    expect_bad_problem(&p, "bc:");
    p = d;
    p.bc[HR_FACE_X_MINUS].kind = HR_BC_PERIODIC; /* one face of an axis */
    expect_bad_problem(&p, "bc: x is periodic on face x- only");
    p = d;
    p.bc[HR_FACE_Z_MINUS].kind = HR_BC_NEUMANN;
    expect_bad_problem(&p, "bc: face z- in a 2-D problem");
    p = d;
    p.bc[HR_FACE_Y_PLUS].value = inf_v;
    expect_bad_problem(&p, "bc: face y+ value");
    p = d;
    face[7] = nan_v;
    p.bc[HR_FACE_X_PLUS].values = face;
    expect_bad_problem(&p, "bc: face x+ value 7");
    p = d;
    p.coef = 0.0;
    expect_bad_problem(&p, "coef:");
    p = d;
    coef[100] = -2.0;
    p.coef_values = coef;
    expect_bad_problem(&p, "coef: value 100");
    p = d;
    p.rhs = HR_RHS_ARRAY;
    expect_bad_problem(&p, "rhs:");
    p = d;
    p.rhs = (hr_rhs)9;
    expect_bad_problem(&p, "rhs:");
    p = d;
    p.init = HR_INIT_ARRAY;
    expect_bad_problem(&p, "init:");
    expect_bad_problem(NULL, "problem:");

    p = d;
    expect_bad_setter(hr_problem_init_model(&p, 1, 5, 5, 0), "dim:");
    expect_bad_setter(hr_problem_init_model(&p, 3, 5, 0, 5), "ny:");
    expect_bad_setter(hr_problem_init_model(NULL, 2, 5, 5, 0), "problem:");
    expect_bad_setter(hr_problem_set_lengths(&p, 1.0, 0.0, 1.0), "length: y");
    expect_bad_setter(hr_problem_set_bc(&p, HR_FACE_Z_PLUS, HR_BC_DIRICHLET, 0.0, NULL), "bc: face z+");
    expect_bad_setter(hr_problem_set_bc(&p, 6, HR_BC_DIRICHLET, 0.0, NULL), "bc: unknown face");
    expect_bad_setter(hr_problem_set_bc(&p, HR_FACES_ALL, HR_BC_DIRICHLET, 0.0, face), "bc: a values array");
    expect_bad_setter(hr_problem_set_bc(&p, HR_FACE_X_MINUS, HR_BC_NEUMANN, nan_v, NULL),
                      "bc: neumann value");
    expect_bad_setter(hr_problem_set_coef(&p, -1.0, NULL), "coef:");
    expect_bad_setter(hr_problem_set_rhs(&p, HR_RHS_ARRAY, NULL), "rhs: an array needs values");
    expect_bad_setter(hr_problem_set_rhs(&p, HR_RHS_SPIKE, coef), "rhs: values need");
    expect_bad_setter(hr_problem_set_init(&p, HR_INIT_SINE, coef), "init: values need");
    /* a refused setter changes nothing */
    assert_memory_equal(&p, &d, sizeof p);
}

/* ------------------------------------------------------------------ options and refusals */

static void options_bad_values(void **state)
{
    (void)state;
    const hr_problem p = model(2, 15, 15, 0);
    hr_grid_options d, o;
    hr_grid_options_default(&d);
#define BAD(field, stmt)                                                                                     \
    do {                                                                                                     \
        o = d;                                                                                               \
        stmt;                                                                                                \
        expect_refused(&p, &o, HR_ERR_INVALID_ARG, field);                                                   \
    } while (0)
    BAD("method:", o.method = (hr_method)99);
    BAD("precision:", o.precision = (hr_precision)9);
    BAD("omega:", o.omega = 2.5);
    BAD("omega:", o.omega = -0.5);
    BAD("alpha:", o.alpha = -1);
    BAD("cycle:", o.cycle = (hr_cycle)9);
    BAD("pre:", o.pre = -2);
    BAD("post:", o.post = 65);
    BAD("smoother:", o.smoother = "gauss");
    BAD("levels:", o.levels = -1);
    BAD("backend:", o.backend = (hr_backend)9);
    BAD("threads:", o.threads = -1);
    BAD("bind:", o.bind = (hr_bind)5);
    BAD("device:", o.device = -1);
    BAD("gpus:", o.gpus = 99);
    BAD("split:", o.split = 1.5);
    BAD("decomp:", o.decomp[1] = -1);
    BAD("ghost:", o.ghost = -1);
    BAD("tol:", o.tol = -1.0);
    BAD("tuning.hugepages:", o.tuning.hugepages = 5);
    BAD("tuning.rb2_srows:", o.tuning.rb2_srows = 1);
    BAD("tol:", o.tol = NAN);
    BAD("max_iters:", o.max_iters = -1);
    BAD("check_every:", o.check_every = -1);
    BAD("divtol:", o.divtol = 0.5);
    BAD("monitor_every:", o.monitor_every = -1);
    BAD("kernel:", o.kernel = "no-such-kernel");
    expect_refused(&p, NULL, HR_ERR_INVALID_ARG, "options:");
    assert_int_equal(hr_grid_solver_create(&p, &d, NULL), HR_ERR_INVALID_ARG);
    assert_string_equal(hr_last_error(), "out: NULL (no place for the handle)");
}

/* Everything that does not run yet, each with the message naming its option. */
static void refused_combinations(void **state)
{
    (void)state;
    const hr_problem d = model(2, 31, 31, 0);
    hr_problem p;
    hr_grid_options o, dopt;
    hr_grid_options_default(&dopt);
    double face[31] = {0};
    double coef[31 * 31];
    for (int i = 0; i < 31 * 31; i++)
        coef[i] = 1.0;
    /* problems other than the model problem run on the general-problem engine (every method,
     * tests/methods/stencil/test_general.c checks its answers); what it does not run is refused */
    for (int m = 0; m < HR_METHOD_COUNT; m++) {
        hr_problem gen[7];
        for (int g = 0; g < 7; g++)
            gen[g] = d;
        hr_problem_set_bc(&gen[0], HR_FACE_Y_MINUS, HR_BC_NEUMANN, 0.0, NULL);
        hr_problem_set_bc(&gen[1], HR_FACE_X_MINUS, HR_BC_PERIODIC, 0.0, NULL);
        hr_problem_set_bc(&gen[2], HR_FACE_X_PLUS, HR_BC_DIRICHLET, 0.0, face);
        hr_problem_set_bc(&gen[3], HR_FACE_Y_PLUS, HR_BC_DIRICHLET, 1.0, NULL);
        hr_problem_set_coef(&gen[4], 1.0, coef);
        hr_problem_set_coef(&gen[5], 2.0, NULL);
        hr_problem_set_lengths(&gen[6], 16.0, 1.0, 0.0);
        for (int g = 0; g < 7; g++) {
            o = dopt;
            o.method = (hr_method)m;
            o.backend = HR_BACKEND_CPU_SEQ;
            o.max_iters = 3;
            if (m == HR_METHOD_JACOBI && g == 1)
                o.omega = 0.8; /* plain Jacobi: refused on singular problems */
            hr_grid_solver *s = NULL;
            if (hr_grid_solver_create(&gen[g], &o, &s) != HR_OK)
                fail_msg("%s on general problem %d: %s", hr_method_name((hr_method)m), g, hr_last_error());
            hr_grid_info info;
            assert_int_equal(hr_grid_solver_info(s, &info), HR_OK);
            assert_int_equal(info.general, 1);
            hr_result r;
            assert_int_equal(hr_grid_solver_solve(s, NULL, NULL, &r), HR_OK);
            assert_int_equal(r.iterations, 3);
            hr_grid_solver_free(s);
        }
        o = dopt;
        o.method = (hr_method)m;
        p = gen[0];
        /* several GPUs run the general engine's slabs (test_general_parts): on the GPU backend */
        o.backend = HR_BACKEND_CPU_SEQ;
        o.gpus = 2;
        expect_refused(&p, &o, HR_ERR_INVALID_ARG, "gpus: 2 GPUs need backend gpu (this run has cpu-seq)");
        o.gpus = 0;
        o.backend = HR_BACKEND_CPU_SEQ;
        o.precision = HR_PREC_SINGLE;
        expect_refused(&p, &o, HR_ERR_UNSUPPORTED, "precision: single: general problems");
    }
    p = d;
#define REFUSE(st, field, stmt)                                                                              \
    do {                                                                                                     \
        o = dopt;                                                                                            \
        stmt;                                                                                                \
        expect_refused(&p, &o, st, field);                                                                   \
    } while (0)
    /* multigrid and CG */
    REFUSE(HR_ERR_UNSUPPORTED, "backend: mg runs on the CPU or one GPU",
           (o.method = HR_METHOD_MG, o.backend = HR_BACKEND_HYBRID));
    /* several GPUs: the general engine's slabs, on the GPU backend only */
    REFUSE(HR_ERR_INVALID_ARG, "gpus: 2 GPUs need backend gpu (this run has cpu-threads)",
           (o.method = HR_METHOD_CG, o.backend = HR_BACKEND_CPU_THREADS, o.gpus = 2));
    REFUSE(HR_ERR_UNSUPPORTED, "divtol: mgcg", (o.method = HR_METHOD_MGCG, o.divtol = 100.0));
    REFUSE(HR_ERR_UNSUPPORTED, "bind: mg", (o.method = HR_METHOD_MG, o.bind = HR_BIND_CORE));
    REFUSE(HR_ERR_INVALID_ARG, "kernel: names a relaxation kernel",
           (o.method = HR_METHOD_MG, o.kernel = "seq"));
    REFUSE(HR_ERR_INVALID_ARG, "alpha: for relaxation kernels", (o.method = HR_METHOD_CG, o.alpha = 3));
    REFUSE(HR_ERR_INVALID_ARG, "cycle: cg has no multigrid", (o.method = HR_METHOD_CG, o.cycle = HR_CYCLE_W));
    REFUSE(HR_ERR_INVALID_ARG, "smoother: cg has no multigrid",
           (o.method = HR_METHOD_CG, o.smoother = "jacobi"));
    REFUSE(HR_ERR_INVALID_ARG, "omega: auto is the sor weight",
           (o.method = HR_METHOD_MG, o.omega = HR_OMEGA_AUTO));
    REFUSE(HR_ERR_INVALID_ARG, "cycle: mgcg applies one V-cycle",
           (o.method = HR_METHOD_MGCG, o.cycle = HR_CYCLE_W));
    REFUSE(HR_ERR_INVALID_ARG, "post: mgcg needs post == pre", (o.method = HR_METHOD_MGCG, o.pre = 1));
    REFUSE(HR_ERR_INVALID_ARG, "smoother: async3 is neither",
           (o.method = HR_METHOD_MGCG, o.smoother = "async3"));
    p = model(2, 100, 31, 0);
    /* any extent: the general-problem engine's multigrid; several GPUs need the GPU backend */
    REFUSE(HR_ERR_INVALID_ARG, "gpus: 2 GPUs need backend gpu (this run has cpu-threads)",
           (o.method = HR_METHOD_MG, o.backend = HR_BACKEND_CPU_THREADS, o.gpus = 2));
    o = dopt;
    o.method = HR_METHOD_CG; /* CG has no levels: any extents */
    hr_grid_solver_free(must_create(&p, &o));
    p = d;
    hr_problem_set_init(&p, HR_INIT_SINE, NULL);
    REFUSE(HR_ERR_UNSUPPORTED, "init: cg starts from a zero guess", o.method = HR_METHOD_CG);
    p = d;
    /* the relaxation methods */
    REFUSE(HR_ERR_INVALID_ARG, "precision: mixed is for mg", o.precision = HR_PREC_MIXED);
    REFUSE(HR_ERR_INVALID_ARG, "smoother: for mg and mgcg",
           (o.method = HR_METHOD_SOR, o.smoother = "jacobi"));
    REFUSE(HR_ERR_INVALID_ARG, "levels: for mg and mgcg", o.levels = 3);
    REFUSE(HR_ERR_INVALID_ARG, "pre: for mg and mgcg", (o.method = HR_METHOD_REDBLACK, o.pre = 1));
    REFUSE(HR_ERR_UNSUPPORTED, "method: redblack on CPU + GPU",
           (o.method = HR_METHOD_REDBLACK, o.backend = HR_BACKEND_HYBRID));
    REFUSE(HR_ERR_INVALID_ARG, "kernel: backend hybrid runs its own",
           (o.backend = HR_BACKEND_HYBRID, o.kernel = "seq"));
    REFUSE(HR_ERR_INVALID_ARG, "kernel: jacobi on several GPUs",
           (o.backend = HR_BACKEND_GPU, o.gpus = 2, o.kernel = "tuned"));
    REFUSE(HR_ERR_INVALID_ARG, "gpus: several GPUs of this process run with backend gpu",
           (o.backend = HR_BACKEND_CPU_THREADS, o.gpus = 2));
    REFUSE(HR_ERR_INVALID_ARG, "split: for backend hybrid", (o.backend = HR_BACKEND_CPU_SEQ, o.split = 0.5));
    /* MPI-only settings in one process */
    REFUSE(HR_ERR_INVALID_ARG, "decomp: for MPI ranks", o.decomp[0] = 2);
    REFUSE(HR_ERR_INVALID_ARG, "ghost: for MPI ranks", o.ghost = 2);
    REFUSE(HR_ERR_INVALID_ARG, "transport: for MPI ranks", o.transport = 1);
    /* the engine's own refusals come through with its message */
    REFUSE(HR_ERR_INVALID_ARG, "method: kernel seq does only Jacobi",
           (o.method = HR_METHOD_REDBLACK, o.backend = HR_BACKEND_CPU_SEQ, o.kernel = "seq"));
    REFUSE(HR_ERR_INVALID_ARG, "omega: kernel async0 has no weighted update",
           (o.backend = HR_BACKEND_CPU_THREADS, o.kernel = "async0", o.omega = 0.8));
    hr_sysinfo si;
    assert_int_equal(hr_sysinfo_get(&si), HR_OK);
    if (!si.have_cuda) { /* with CUDA the multi-GPU red-black kernel exists (tests/methods/redblack) */
        REFUSE(HR_ERR_UNSUPPORTED, "gpus: this build has no 2-D sor kernel for several GPUs",
               (o.method = HR_METHOD_SOR, o.backend = HR_BACKEND_GPU, o.gpus = 2));
    }
    if (si.gpus == 0) { /* no device: create says why, for every method, model and general problems */
        for (int m = 0; m < 2 * HR_METHOD_COUNT; m++) {
            hr_problem q = p;
            if (m >= HR_METHOD_COUNT) hr_problem_set_bc(&q, HR_FACE_Y_MINUS, HR_BC_NEUMANN, 0.0, NULL);
            o = dopt;
            o.method = (hr_method)(m % HR_METHOD_COUNT);
            o.backend = HR_BACKEND_GPU;
            hr_grid_solver *s = (hr_grid_solver *)0x1;
            const hr_status st = hr_grid_solver_create(&q, &o, &s);
            assert_true(st == HR_ERR_UNSUPPORTED || st == HR_ERR_NO_DEVICE);
            assert_null(s);
            assert_true(strlen(hr_last_error()) > 0);
            print_message("gpu without a device (%s%s): %s\n", hr_method_name(o.method),
                          m >= HR_METHOD_COUNT ? ", general" : "", hr_last_error());
        }
    }
    /* a solve's x0 where the engine starts from zero only */
    o = dopt;
    o.method = HR_METHOD_MG;
    hr_grid_solver *s = must_create(&d, &o);
    double *x0 = calloc(31 * 31, sizeof *x0);
    hr_result r;
    assert_int_equal(hr_grid_solver_solve(s, NULL, x0, &r), HR_ERR_UNSUPPORTED);
    assert_string_equal(hr_grid_solver_last_error(s), "x0: mg starts from a zero guess so far");
    /* the handle still solves */
    assert_int_equal(hr_grid_solver_solve(s, NULL, NULL, &r), HR_OK);
    assert_string_equal(hr_grid_solver_last_error(s), "");
    hr_grid_solver_free(s);
    free(x0);
}

/* ------------------------------------------------------------------ relaxation: bitwise hr_solver */

/* The old options of a relaxation run, as a caller of hr_solver writes them. */
static hr_options relax_old(int dim, const int n[3], hr_method m, hr_backend b, const char *kernel,
                            hr_precision prec, double omega, long iters, double tol)
{
    hr_options o;
    hr_options_default(&o);
    o.dim = dim;
    o.nx = n[0];
    o.ny = n[1];
    o.nz = dim == 3 ? n[2] : 0;
    o.n = n[0];
    o.method = m;
    o.backend = b;
    o.kernel = kernel;
    o.threads = b == HR_BACKEND_CPU_SEQ ? 1 : 2;
    o.precision = prec;
    o.omega = omega;
    o.iters = iters;
    o.tol = tol;
    o.check_every = 10;
    o.divtol = 1e30; /* a random x0 starts far above a spike's ||b|| */
    return o;
}

static hr_grid_options relax_new(hr_method m, hr_backend b, const char *kernel, hr_precision prec,
                                 double omega, long iters, double tol)
{
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.method = m;
    o.backend = b;
    o.kernel = kernel;
    o.threads = b == HR_BACKEND_CPU_SEQ ? 0 : 2;
    o.precision = prec;
    o.omega = omega;
    o.max_iters = iters;
    o.tol = tol;
    o.check_every = 10;
    o.divtol = 1e30;
    return o;
}

static void compare_results(const hr_result *a, const hr_result *b)
{
    assert_int_equal(a->iterations, b->iterations);
    assert_int_equal(a->reason, b->reason);
    assert_memory_equal(&a->relative_residual, &b->relative_residual, sizeof(double));
    assert_string_equal(a->kernel, b->kernel);
    assert_string_equal(a->backend, b->backend);
}

static void relaxation_bitwise(void **state)
{
    (void)state;
    static const struct {
        hr_method m;
        hr_backend b;
        const char *kernel;
        double omega;
    } runs[] = {
        {HR_METHOD_JACOBI, HR_BACKEND_CPU_SEQ, NULL, 0.0},
        {HR_METHOD_JACOBI, HR_BACKEND_CPU_SEQ, NULL, 0.8}, /* weighted */
        {HR_METHOD_JACOBI, HR_BACKEND_CPU_THREADS, NULL, 0.0},
        {HR_METHOD_JACOBI, HR_BACKEND_CPU_THREADS, NULL, 0.8},
        {HR_METHOD_JACOBI, HR_BACKEND_CPU_THREADS, "spmd-nt", 0.0},
        {HR_METHOD_JACOBI, HR_BACKEND_CPU_THREADS, "blocks", 0.0},
        {HR_METHOD_REDBLACK, HR_BACKEND_CPU_SEQ, NULL, 0.0},
        {HR_METHOD_REDBLACK, HR_BACKEND_CPU_THREADS, NULL, 1.3},
        {HR_METHOD_REDBLACK, HR_BACKEND_CPU_THREADS, "rb-fused", 0.0},
        {HR_METHOD_SOR, HR_BACKEND_CPU_SEQ, NULL, 0.0}, /* the optimal weight */
        {HR_METHOD_SOR, HR_BACKEND_CPU_THREADS, NULL, HR_OMEGA_AUTO},
        {HR_METHOD_SOR, HR_BACKEND_CPU_THREADS, "rb-tiles", 1.7},
    };
    static const int ext[2][3] = {{33, 21, 1}, {13, 11, 9}};
    int combos = 0;
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++)
        for (int d = 0; d < 2; d++)
            for (int pr = 0; pr < 2; pr++) {
                const int dim = d ? 3 : 2;
                if (runs[k].kernel && dim == 3 && !strcmp(runs[k].kernel, "blocks")) continue; /* 2-D only */
                if (runs[k].kernel && dim == 3 && !strcmp(runs[k].kernel, "spmd-nt")) continue;
                const hr_precision prec = pr ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
                hr_problem p = model(dim, ext[d][0], ext[d][1], ext[d][2]);
                const size_t n = hr_problem_unknowns(&p);
                double *f = random_values(n, 3 + k), *x0 = random_values(n, 99 + k);
                /* rhs x init: the problem's kinds, then arrays through solve */
                hr_problem_set_rhs(&p, (k + d) % 2 ? HR_RHS_MANUFACTURED : HR_RHS_SPIKE, NULL);
                hr_problem_set_init(&p, (k + pr) % 2 ? HR_INIT_SINE : HR_INIT_ZERO, NULL);
                hr_problem_set_bc(&p, HR_FACES_ALL, HR_BC_DIRICHLET, k % 3 == 1 ? 0.5 : 0.0, NULL);
                const long iters = 37;
                const double tol = k % 2 ? 1e-3 : 0.0;
                hr_options oo = relax_old(dim, p.n, runs[k].m, runs[k].b, runs[k].kernel, prec, runs[k].omega,
                                          iters, tol);
                oo.rhs = p.rhs;
                oo.init = p.init;
                oo.boundary = p.bc[0].value;
                hr_grid_options no =
                    relax_new(runs[k].m, runs[k].b, runs[k].kernel, prec, runs[k].omega, iters, tol);
                hr_grid_solver *s = must_create(&p, &no);
                hr_result ra, rb;
                /* 1: the problem as given */
                double *a = old_relax(&oo, n, &ra), *b = grid_solve(s, n, NULL, NULL, &rb);
                same_bits(a, b, n, "first solve");
                compare_results(&ra, &rb);
                assert_int_equal(rb.method, runs[k].m);
                assert_int_equal(rb.precision, prec);
                assert_int_equal(rb.ranks, 1);
                free(b);
                /* 2: again on the same handle: the same bits (a restart, not a continuation) */
                b = grid_solve(s, n, NULL, NULL, &rb);
                same_bits(a, b, n, "second solve");
                compare_results(&ra, &rb);
                free(a);
                free(b);
                /* 3: a caller's initial guess */
                hr_options ox = oo;
                ox.init = HR_INIT_ARRAY;
                ox.init_values = x0;
                a = old_relax(&ox, n, &ra);
                b = grid_solve(s, n, NULL, x0, &rb);
                same_bits(a, b, n, "x0");
                compare_results(&ra, &rb);
                free(a);
                free(b);
                /* 4: a caller's right-hand side (and both) */
                hr_options of = oo;
                of.rhs = HR_RHS_ARRAY;
                of.rhs_values = f;
                a = old_relax(&of, n, &ra);
                b = grid_solve(s, n, f, NULL, &rb);
                same_bits(a, b, n, "rhs");
                compare_results(&ra, &rb);
                free(b);
                b = grid_solve(s, n, f, NULL, &rb); /* the same f again: no new set-up, same bits */
                same_bits(a, b, n, "rhs again");
                free(a);
                free(b);
                of.init = HR_INIT_ARRAY;
                of.init_values = x0;
                a = old_relax(&of, n, &ra);
                b = grid_solve(s, n, f, x0, &rb);
                same_bits(a, b, n, "rhs and x0");
                compare_results(&ra, &rb);
                free(a);
                free(b);
                /* 5: back to the problem's own */
                a = old_relax(&oo, n, &ra);
                b = grid_solve(s, n, NULL, NULL, &rb);
                same_bits(a, b, n, "the problem's again");
                free(a);
                free(b);
                /* single precision out */
                float *uf = malloc(n * sizeof *uf);
                assert_int_equal(hr_grid_solver_solution(s, HR_PREC_SINGLE, uf, n), HR_OK);
                free(uf);
                hr_grid_info in;
                assert_int_equal(hr_grid_solver_info(s, &in), HR_OK);
                assert_string_equal(in.engine, "solver");
                assert_int_equal(in.backend, runs[k].b);
                assert_int_equal(in.precision, prec);
                hr_grid_solver_free(s);
                free(f);
                free(x0);
                combos++;
            }
    print_message("%d relaxation combinations bitwise hr_solver\n", combos);
}

/* A right-hand side array on a box with one spacing that is not the model's: the engine
 * scales f by its own h^2, the handle by the ratio, which is 4 exactly here. And the
 * manufactured problem on that box is the model's (its f scales with 1 / L^2). */
static void uniform_spacing_scale(void **state)
{
    (void)state;
    hr_problem p = model(2, 31, 15, 0);
    const size_t n = hr_problem_unknowns(&p);
    double *f = random_values(n, 5), *f4 = malloc(n * sizeof *f4);
    for (size_t i = 0; i < n; i++)
        f4[i] = 4.0 * f[i];
    hr_problem_set_lengths(&p, 2.0 * p.length[0], 2.0 * p.length[1], 0.0); /* h = 2 / 32 */
    hr_problem_set_rhs(&p, HR_RHS_ARRAY, f);
    hr_grid_options no = relax_new(HR_METHOD_JACOBI, HR_BACKEND_CPU_SEQ, NULL, HR_PREC_DOUBLE, 0.0, 50, 0.0);
    hr_grid_solver *s = must_create(&p, &no);
    hr_options oo =
        relax_old(2, p.n, HR_METHOD_JACOBI, HR_BACKEND_CPU_SEQ, NULL, HR_PREC_DOUBLE, 0.0, 50, 0.0);
    oo.rhs = HR_RHS_ARRAY;
    oo.rhs_values = f4; /* h^2 f on the doubled box is (h_model^2) (4 f) */
    hr_result ra, rb;
    double *a = old_relax(&oo, n, &ra), *b = grid_solve(s, n, NULL, NULL, &rb);
    same_bits(a, b, n, "scaled array");
    free(b);
    b = grid_solve(s, n, f, NULL, &rb); /* a solve's f is scaled too */
    same_bits(a, b, n, "scaled array through solve");
    free(a);
    free(b);
    hr_grid_solver_free(s);
    hr_problem_set_rhs(&p, HR_RHS_MANUFACTURED, NULL);
    s = must_create(&p, &no);
    oo.rhs = HR_RHS_MANUFACTURED;
    oo.rhs_values = NULL;
    a = old_relax(&oo, n, &ra);
    b = grid_solve(s, n, NULL, NULL, &rb);
    same_bits(a, b, n, "manufactured on a scaled box");
    free(a);
    free(b);
    hr_grid_solver_free(s);
    free(f);
    free(f4);
}

/* The asynchronous kernels are not deterministic: to the tolerance, on both paths. */
static void async_to_tolerance(void **state)
{
    (void)state;
    static const char *const ks[] = {"async0", "async1", "async2", "async3"};
    hr_problem p = model(2, 31, 31, 0);
    hr_problem_set_rhs(&p, HR_RHS_MANUFACTURED, NULL);
    const size_t n = hr_problem_unknowns(&p);
    for (int k = 0; k < 4; k++) {
        const double tol = 1e-6;
        hr_grid_options no =
            relax_new(HR_METHOD_JACOBI, HR_BACKEND_CPU_THREADS, ks[k], HR_PREC_DOUBLE, 0.0, 20000, tol);
        no.alpha = 3;
        hr_options oo = relax_old(2, p.n, HR_METHOD_JACOBI, HR_BACKEND_CPU_THREADS, ks[k], HR_PREC_DOUBLE,
                                  0.0, 20000, tol);
        oo.alpha = 3;
        oo.rhs = HR_RHS_MANUFACTURED;
        hr_grid_solver *s = must_create(&p, &no);
        hr_result ra, rb;
        double *a = old_relax(&oo, n, &ra);
        for (int rep = 0; rep < 2; rep++) { /* the second solve sets the kernel up again */
            double *b = grid_solve(s, n, NULL, NULL, &rb);
            assert_int_equal(ra.reason, HR_REASON_CONVERGED);
            assert_int_equal(rb.reason, HR_REASON_CONVERGED);
            assert_true(rb.relative_residual < tol);
            assert_string_equal(rb.kernel, ks[k]);
            /* both within the tolerance of the discrete solution: close to each other */
            double dmax = 0.0, umax = 0.0;
            for (size_t i = 0; i < n; i++) {
                dmax = fmax(dmax, fabs(a[i] - b[i]));
                umax = fmax(umax, fabs(a[i]));
            }
            print_message("%s: %ld vs %ld sweeps, max difference %.2e (max |u| %.2e)\n", ks[k], ra.iterations,
                          rb.iterations, dmax, umax);
            assert_true(dmax < 1e-4 * umax);
            free(b);
        }
        free(a);
        hr_grid_solver_free(s);
    }
}

/* ------------------------------------------------------------------ multigrid and CG: bitwise hr_mg */

static void mg_bitwise(void **state)
{
    (void)state;
    static const struct {
        hr_method m;
        hr_cycle c;
        const char *smoother;
        hr_precision prec;
        int pre, post;
    } runs[] = {
        {HR_METHOD_MG, HR_CYCLE_V, NULL, HR_PREC_DEFAULT, 0, 0},
        {HR_METHOD_MG, HR_CYCLE_W, "jacobi", HR_PREC_DOUBLE, 1, 3},
        {HR_METHOD_MG, HR_CYCLE_F, "cheby", HR_PREC_SINGLE, 0, 0},
        {HR_METHOD_MG, HR_CYCLE_FMG, "redblack", HR_PREC_MIXED, HR_NONE, 2},
        {HR_METHOD_CG, HR_CYCLE_V, NULL, HR_PREC_DOUBLE, 0, 0},
        {HR_METHOD_MGCG, HR_CYCLE_V, NULL, HR_PREC_DOUBLE, 0, 0},
        {HR_METHOD_MGCG, HR_CYCLE_V, "jacobi", HR_PREC_MIXED, 1, 1},
    };
    static const int ext[2][3] = {{63, 31, 1}, {15, 15, 7}};
    int combos = 0;
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++)
        for (int d = 0; d < 2; d++)
            for (int b = 0; b < 2; b++) {
                const int dim = d ? 3 : 2;
                const hr_backend be = b ? HR_BACKEND_CPU_THREADS : HR_BACKEND_CPU_SEQ;
                hr_problem p = model(dim, ext[d][0], ext[d][1], ext[d][2]);
                const size_t n = hr_problem_unknowns(&p);
                double *f = random_values(n, 17 + k), *g = random_values(n, 71 + k);
                const int arr = (k + d) % 3 == 0;
                hr_problem_set_rhs(&p,
                                   arr           ? HR_RHS_ARRAY
                                   : (k + b) % 2 ? HR_RHS_MANUFACTURED
                                                 : HR_RHS_SPIKE,
                                   arr ? f : NULL);
                hr_problem_set_bc(&p, HR_FACES_ALL, HR_BC_DIRICHLET, k % 2 ? 0.25 : 0.0, NULL);
                hr_grid_options no;
                hr_grid_options_default(&no);
                no.method = runs[k].m;
                no.cycle = runs[k].c;
                no.smoother = runs[k].m == HR_METHOD_CG ? NULL : runs[k].smoother;
                no.precision = runs[k].prec;
                no.pre = runs[k].pre;
                no.post = runs[k].post;
                no.backend = be;
                no.threads = 2;
                no.tol = 1e-9;
                no.max_iters = runs[k].m == HR_METHOD_CG ? 400 : 40;
                hr_mg_options mo;
                hr_mg_options_default(&mo);
                mo.dim = dim;
                mo.nx = p.n[0];
                mo.ny = p.n[1];
                mo.nz = dim == 3 ? p.n[2] : 0;
                mo.rhs = p.rhs;
                mo.rhs_values = p.rhs_values;
                mo.boundary = p.bc[0].value;
                mo.method = runs[k].m == HR_METHOD_MG ? HR_MG_METHOD_MG : HR_MG_METHOD_CG;
                mo.pc = runs[k].m == HR_METHOD_MGCG ? HR_MG_PC_MG : HR_MG_PC_NONE;
                mo.cycle = runs[k].c;
                mo.smoother = !runs[k].smoother || !strcmp(runs[k].smoother, "redblack")
                                  ? HR_MG_SMOOTH_REDBLACK
                              : !strcmp(runs[k].smoother, "jacobi") ? HR_MG_SMOOTH_JACOBI
                                                                    : HR_MG_SMOOTH_CHEBY;
                mo.pre = runs[k].pre == HR_NONE ? 0 : runs[k].pre ? runs[k].pre : 2;
                mo.post = runs[k].post == HR_NONE ? 0 : runs[k].post ? runs[k].post : 2;
                mo.precision = runs[k].prec == HR_PREC_DEFAULT ? HR_MG_PREC_DOUBLE : runs[k].prec;
                mo.tol = 1e-9;
                mo.max_iters = no.max_iters;
                mo.threads = b ? 2 : 1;
                hr_grid_solver *s = must_create(&p, &no);
                hr_mg_result ma;
                hr_result rb;
                double *a = old_mg(&mo, n, &ma), *u = grid_solve(s, n, NULL, NULL, &rb);
                same_bits(a, u, n, "mg first solve");
                assert_int_equal(ma.iterations, rb.iterations);
                assert_int_equal(ma.reason, rb.reason);
                assert_memory_equal(&ma.relative_residual, &rb.relative_residual, sizeof(double));
                assert_int_equal(ma.levels, rb.levels);
                assert_int_equal(rb.method, runs[k].m);
                assert_true(rb.convergence_factor > 0.0 && rb.convergence_factor < 1.0);
                free(u);
                u = grid_solve(s, n, NULL, NULL, &rb); /* solve many */
                same_bits(a, u, n, "mg second solve");
                free(a);
                free(u);
                /* another right-hand side through solve: as a fresh engine with that array */
                hr_mg_options mg = mo;
                mg.rhs = HR_RHS_ARRAY;
                mg.rhs_values = g;
                a = old_mg(&mg, n, &ma);
                u = grid_solve(s, n, g, NULL, &rb);
                same_bits(a, u, n, "mg rhs through solve");
                assert_int_equal(ma.iterations, rb.iterations);
                free(a);
                free(u);
                /* and the problem's own again */
                a = old_mg(&mo, n, &ma);
                u = grid_solve(s, n, NULL, NULL, &rb);
                same_bits(a, u, n, "mg the problem's again");
                free(a);
                free(u);
                /* another f as the first solve of a handle (taken in place where it holds an array) */
                hr_grid_solver *s2 = must_create(&p, &no);
                a = old_mg(&mg, n, &ma);
                u = grid_solve(s2, n, g, NULL, &rb);
                same_bits(a, u, n, "mg rhs through the first solve");
                free(a);
                free(u);
                hr_grid_solver_free(s2);
                hr_grid_info in;
                assert_int_equal(hr_grid_solver_info(s, &in), HR_OK);
                assert_string_equal(in.engine, "mg");
                assert_int_equal(in.precision,
                                 runs[k].prec == HR_PREC_DEFAULT ? HR_PREC_DOUBLE : runs[k].prec);
                assert_int_equal(in.threads, b ? 2 : 1);
                hr_grid_solver_free(s);
                free(f);
                free(g);
                combos++;
            }
    print_message("%d multigrid / CG combinations bitwise hr_mg\n", combos);
}

/* ------------------------------------------------------------------ conventions */

static long mon_calls, mon_last_it, mon_stop_at;
static double mon_last_res;
static int monitor(long it, double res, void *user)
{
    assert_ptr_equal(user, &mon_calls);
    mon_calls++;
    mon_last_it = it;
    mon_last_res = res;
    return mon_stop_at > 0 && it >= mon_stop_at;
}

/* One monitor signature, history and stop requests for every method. */
static void monitor_history_stop(void **state)
{
    (void)state;
    const hr_problem p = model(2, 31, 31, 0);
    for (int m = 0; m < HR_METHOD_COUNT; m++) {
        hr_grid_options o;
        hr_grid_options_default(&o);
        o.method = (hr_method)m;
        o.backend = HR_BACKEND_CPU_SEQ;
        o.tol = 1e-8;
        o.max_iters = m == HR_METHOD_MG ? 30 : 5000;
        o.check_every = 20;
        o.monitor = monitor;
        o.monitor_user = &mon_calls;
        o.keep_history = 1;
        hr_grid_solver *s = must_create(&p, &o);
        hr_result r;
        mon_calls = 0;
        mon_stop_at = 0;
        assert_int_equal(hr_grid_solver_solve(s, NULL, NULL, &r), HR_OK);
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        assert_true(mon_calls >= 2);
        const long *its;
        const double *res;
        const size_t h = hr_grid_solver_history(s, &its, &res);
        assert_true(h >= 2);
        /* the checks in order, the last one below tol */
        for (size_t i = 1; i < h; i++)
            assert_true(its[i] > its[i - 1]);
        assert_true(res[h - 1] < 1e-8);
        /* the monitor stops the solve */
        mon_calls = 0;
        mon_stop_at = m == HR_METHOD_MG || m == HR_METHOD_MGCG ? 2 : m == HR_METHOD_CG ? 5 : 40;
        assert_int_equal(hr_grid_solver_solve(s, NULL, NULL, &r), HR_OK);
        assert_int_equal(r.reason, HR_REASON_STOPPED);
        assert_true(mon_last_it >= mon_stop_at);
        /* a request between solves stops the next one early */
        mon_stop_at = 0;
        hr_grid_solver_request_stop(s);
        assert_int_equal(hr_grid_solver_solve(s, NULL, NULL, &r), HR_OK);
        assert_int_equal(r.reason, HR_REASON_STOPPED);
        /* and only that one */
        assert_int_equal(hr_grid_solver_solve(s, NULL, NULL, &r), HR_OK);
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        print_message("%s: monitor, history (%zu checks) and stops\n", hr_method_name((hr_method)m), h);
        hr_grid_solver_free(s);
    }
}

static hr_grid_solver *reentered;
static hr_status reenter_status;
static int reenter(long it, double res, void *user)
{
    (void)it;
    (void)res;
    (void)user;
    hr_result r;
    reenter_status = hr_grid_solver_solve(reentered, NULL, NULL, &r);
    hr_grid_solver_free(reentered); /* ignored: the solve holds the handle */
    return 1;
}

/* NULL arguments, a solve from its own monitor, a short solution buffer, and the one error
 * channel: the handle's message, the thread's last error for create only. */
static void misuse_and_errors(void **state)
{
    (void)state;
    const hr_problem p = model(2, 15, 15, 0);
    hr_result r;
    assert_int_equal(hr_grid_solver_solve(NULL, NULL, NULL, &r), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_grid_solver_solution(NULL, HR_PREC_DOUBLE, &r, 1), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_grid_solver_info(NULL, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_grid_solver_history(NULL, NULL, NULL), 0);
    assert_string_equal(hr_grid_solver_last_error(NULL), "");
    hr_grid_solver_request_stop(NULL);
    hr_grid_solver_free(NULL);
    for (int m = 0; m < HR_METHOD_COUNT; m += 3) { /* jacobi, mg */
        hr_grid_options o;
        hr_grid_options_default(&o);
        o.method = (hr_method)m;
        o.tol = 1e-6;
        o.monitor = reenter;
        hr_grid_solver *s = must_create(&p, &o);
        reentered = s;
        assert_int_equal(hr_grid_solver_solve(s, NULL, NULL, &r), HR_OK);
        assert_int_equal(r.reason, HR_REASON_STOPPED);
        assert_int_equal(reenter_status, HR_ERR_INVALID_ARG);
        assert_non_null(strstr(hr_grid_solver_last_error(s), "ignored"));
        double u[225];
        assert_int_equal(hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, 224), HR_ERR_INVALID_ARG);
        assert_string_equal(hr_grid_solver_last_error(s), "count: 224 values, the grid has 225");
        assert_int_equal(hr_grid_solver_solution(s, HR_PREC_MIXED, u, 225), HR_ERR_INVALID_ARG);
        assert_int_equal(hr_grid_solver_solution(s, HR_PREC_DEFAULT, u, 225), HR_OK);
        hr_grid_solver_free(s);
    }
    /* a solve that sets an engine up again leaves the thread's last error alone */
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.backend = HR_BACKEND_CPU_THREADS;
    o.kernel = "async2";
    o.max_iters = 10;
    hr_grid_solver *s = must_create(&p, &o);
    hr_grid_solver *t = (hr_grid_solver *)0x1;
    assert_int_equal(hr_grid_solver_create(NULL, &o, &t), HR_ERR_INVALID_ARG);
    assert_null(t);
    assert_string_equal(hr_last_error(), "problem: NULL");
    assert_int_equal(hr_grid_solver_solve(s, NULL, NULL, &r), HR_OK);
    assert_int_equal(hr_grid_solver_solve(s, NULL, NULL, &r), HR_OK);
    assert_string_equal(hr_last_error(), "problem: NULL");
    hr_grid_solver_free(s);
}

/* A zeroed options struct is a valid request, and a zeroed precision means double in every
 * options struct: hr_grid_options, hr_options and hr_mg_options. */
static void zeroed_defaults(void **state)
{
    (void)state;
    const hr_problem p = model(2, 31, 31, 0);
    const size_t n = hr_problem_unknowns(&p);
    hr_grid_options z;
    memset(&z, 0, sizeof z);
    hr_grid_solver *s = must_create(&p, &z);
    hr_grid_info in;
    assert_int_equal(hr_grid_solver_info(s, &in), HR_OK);
    assert_int_equal(in.method, HR_METHOD_JACOBI);
    assert_int_equal(in.precision, HR_PREC_DOUBLE);
    hr_sysinfo si;
    assert_int_equal(hr_sysinfo_get(&si), HR_OK);
    if (si.gpus == 0) assert_int_equal(in.backend, HR_BACKEND_CPU_THREADS);
    hr_result r;
    double *b = grid_solve(s, n, NULL, NULL, &r);
    assert_int_equal(r.iterations, 1000);
    assert_int_equal(r.precision, HR_PREC_DOUBLE);
    hr_options oo;
    hr_options_default(&oo); /* asks for single explicitly */
    assert_int_equal(oo.precision, HR_PREC_SINGLE);
    oo.n = 31;
    oo.backend = in.backend;
    oo.precision = HR_PREC_DEFAULT;
    hr_result ra;
    double *a = old_relax(&oo, n, &ra);
    same_bits(a, b, n, "zeroed options");
    oo.precision = HR_PREC_DOUBLE;
    double *c = old_relax(&oo, n, &ra);
    same_bits(a, c, n, "hr_options: default is double");
    free(a);
    free(b);
    free(c);
    oo.precision = HR_PREC_MIXED;
    char why[160];
    assert_int_equal(hr_options_validate(&oo, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "precision"));
    oo.precision = HR_PREC_DOUBLE;
    oo.method = HR_METHOD_MG;
    assert_int_equal(hr_options_validate(&oo, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "hr_grid_solver"));
    hr_grid_solver_free(s);
    /* the other names of the one enums */
    assert_string_equal(hr_precision_name(HR_PREC_DEFAULT), "double");
    assert_string_equal(hr_precision_name(HR_PREC_MIXED), "mixed");
    assert_string_equal(hr_method_name(HR_METHOD_MGCG), "mgcg");
    assert_string_equal(hr_cycle_name(HR_CYCLE_FMG), "fmg");
    assert_null(hr_cycle_name((hr_cycle)7));
    assert_int_equal(HR_MG_PREC_DOUBLE, HR_PREC_DOUBLE);
    assert_int_equal(HR_MG_CYCLE_W, HR_CYCLE_W);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(problem_model),        cmocka_unit_test(problem_bad),
        cmocka_unit_test(options_bad_values),   cmocka_unit_test(refused_combinations),
        cmocka_unit_test(relaxation_bitwise),   cmocka_unit_test(uniform_spacing_scale),
        cmocka_unit_test(async_to_tolerance),   cmocka_unit_test(mg_bitwise),
        cmocka_unit_test(monitor_history_stop), cmocka_unit_test(misuse_and_errors),
        cmocka_unit_test(zeroed_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
