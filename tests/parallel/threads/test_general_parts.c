/*
 * The general-problem engine as slabs of one process, a thread each (src/parallel/threads:
 * what `--gpus N` runs, one slab per GPU): here on the CPU backends, every slab count's
 * solution bitwise the one-process cpu-seq run's, for relaxation, multigrid (every smoother,
 * V, W, F, FMG) and MG-preconditioned CG, on mixed faces, a periodic cut axis, a coefficient
 * field, semi-coarsening, a singular problem and slabs of one row; the caller's monitor
 * stopping every slab at one iteration; bad input refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grid_solver_internal.h"
#include "hetrelax/hetrelax.h"
#include "parallel/threads/general_parts.h"
#include "parallel/transport/cuda/transport_nccl.h"

static int failures;
/* test_general_parts gpu: the slabs on GPUs (one each, or shared on a machine with fewer):
 * fixed multigrid cycles still the one-process cpu-seq run's bits, reductions (summed per
 * slab on its GPU, then in slab order) to rounding */
static int gpu_mode;
static int gpus_present;

/* A problem of extents n with the face kinds of `kinds` (d, n, p per face), lengths 2 x ly x 0.5
 * and, with coef, a coefficient field. */
static void problem(hr_problem *p, int dim, const int n[3], const char *kinds, double ly, double *coef)
{
    hr_problem_init_model(p, dim, n[0], n[1], n[2]);
    hr_problem_set_lengths(p, 2.0, ly, 0.5);
    for (int f = 0; f < 2 * dim; f++) {
        const char k = kinds[f];
        if (k == 'p') {
            hr_problem_set_bc(p, (hr_face)f, HR_BC_PERIODIC, 0.0, NULL);
        } else if (k == 'n') {
            hr_problem_set_bc(p, (hr_face)f, HR_BC_NEUMANN, 0.25 * (f + 1), NULL);
        } else {
            hr_problem_set_bc(p, (hr_face)f, HR_BC_DIRICHLET, 0.1 * f, NULL);
        }
    }
    if (coef) {
        const size_t cnt = hr_problem_unknowns(p);
        for (size_t i = 0; i < cnt; i++)
            coef[i] = 1.0 + 0.5 * sin(0.37 * (double)i) + (i % 7 == 0 ? 9.0 : 0.0);
        hr_problem_set_coef(p, 0.0, coef);
    }
    hr_problem_set_rhs(p, HR_RHS_MANUFACTURED, NULL);
}

static int stop_at;
static int monitor_stop(long it, double rel, void *user)
{
    (void)rel;
    (*(long *)user)++;
    return it >= stop_at;
}

/* The run on `parts` slabs against the one-process cpu-seq run: bitwise, same iterations. */
static void compare(const char *what, const hr_problem *p, const hr_grid_options *o, int parts)
{
    const size_t cnt = hr_problem_unknowns(p);
    hr_grid_options o1 = *o;
    o1.backend = HR_BACKEND_CPU_SEQ;
    o1.threads = 0;
    long calls1 = 0, calls = 0;
    if (o->monitor) o1.monitor_user = &calls1;
    hr_grid_solver *s1 = NULL, *s = NULL;
    hr_result r1, r;
    double *u1 = malloc(cnt * sizeof *u1), *u = malloc(cnt * sizeof *u);
    hr_status st1 = hr_grid_solver_create(p, &o1, &s1);
    if (st1 == HR_OK) st1 = hr_grid_solver_solve(s1, NULL, NULL, &r1);
    if (st1 == HR_OK) st1 = hr_grid_solver_solution(s1, HR_PREC_DOUBLE, u1, cnt);
    char err[256] = "";
    hr_grid_options op = *o;
    if (o->monitor) op.monitor_user = &calls;
    hr_status st = hri_gs_prepare(p, &op, 0, &s, err, sizeof err);
    if (st == HR_OK) {
        st = hri_gs_general_create_parts(s, p, parts);
        if (st != HR_OK) {
            snprintf(err, sizeof err, "%s", s->err);
            hri_gs_free(s);
            s = NULL;
        } else {
            s->fresh = 1;
        }
    }
    if (st == HR_OK) st = hr_grid_solver_solve(s, NULL, NULL, &r);
    if (st == HR_OK) st = hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, cnt);
    hr_grid_info info;
    memset(&info, 0, sizeof info);
    if (s) hr_grid_solver_info(s, &info);
    int same = memcmp(u, u1, cnt * sizeof *u) == 0 && r.iterations == r1.iterations &&
               memcmp(&r.relative_residual, &r1.relative_residual, sizeof(double)) == 0 && calls == calls1;
    if (gpu_mode && st == HR_OK && st1 == HR_OK) {
        const int bits = o->method == HR_METHOD_MG && o->tol == 0.0 && !hr_problem_is_singular(p);
        double dmax = 0.0, umax = 0.0;
        for (size_t q = 0; q < cnt; q++) {
            dmax = fmax(dmax, fabs(u[q] - u1[q]));
            umax = fmax(umax, fabs(u1[q]));
        }
        same = bits ? memcmp(u, u1, cnt * sizeof *u) == 0 && r.iterations == r1.iterations
                    : labs(r.iterations - r1.iterations) <= 1 && dmax <= 1e-6 * umax;
    }
    /* GPU slabs on devices of their own take NCCL where the build has it; slabs sharing a
     * device stage through the host */
    const int want_halo = !gpu_mode ? 0 : hri_nccl_available() && gpus_present >= parts ? 3 : 1;
    const int ok = st1 == HR_OK && st == HR_OK && same && strcmp(info.engine, "general-gpus") == 0 &&
                   (st != HR_OK || info.transport == want_halo);
    size_t i = 0;
    while (ok == 0 && i < cnt && u[i] == u1[i])
        i++;
    printf("%s %s on %d slabs: status %d/%d, %ld iterations (%ld), residual %.3e (%.3e), monitor calls %ld (%ld)%s%s\n",
           ok ? "ok  " : "FAIL", what, parts, (int)st, (int)st1, r.iterations, r1.iterations, r.relative_residual,
           r1.relative_residual, calls, calls1, ok ? ", bitwise the one-process run" : err,
           !gpu_mode ? "" : info.transport == 3 ? " (halos by NCCL)" : " (halos through the host)");
    if (!ok && st == HR_OK) printf("     first difference at %zu of %zu\n", i, cnt);
    failures += !ok;
    hr_grid_solver_free(s);
    hr_grid_solver_free(s1);
    free(u);
    free(u1);
}

int main(int argc, char **argv)
{
    gpu_mode = argc > 1 && strcmp(argv[1], "gpu") == 0;
    if (gpu_mode) {
        hr_sysinfo si;
        hr_sysinfo_get(&si);
        gpus_present = si.gpus;
        if (si.gpus < 1) {
            printf("skip: no CUDA device\n");
            return 77;
        }
    }
    const hr_backend slab_backend = gpu_mode ? HR_BACKEND_GPU : HR_BACKEND_CPU_SEQ;
    const size_t most = 200000;
    double *coef = malloc(most * sizeof *coef);
    hr_problem p;
    hr_grid_options o;
    const struct {
        int dim, n[3];
        const char *kinds;
        double ly;
        int coef;
    } probs[] = {
        {2, {60, 81, 1}, "dnpp", 1.0, 1},   /* periodic cut axis, a coefficient field */
        {2, {64, 40, 1}, "nddn", 0.25, 0},  /* semi-coarsening */
        {2, {48, 50, 1}, "nnnn", 1.0, 0},   /* singular */
        {3, {20, 15, 24}, "dnddpp", 1.0, 1}, /* 3-D, periodic cut axis */
        {3, {17, 10, 13}, "nnddnd", 1.0, 0},
    };
    const char *smoothers[] = {"redblack", "jacobi", "cheby"};
    for (size_t t = 0; t < sizeof probs / sizeof *probs; t++) {
        problem(&p, probs[t].dim, probs[t].n, probs[t].kinds, probs[t].ly, probs[t].coef ? coef : NULL);
        char what[128];
        for (int parts = 2; parts <= 4; parts++) {
            const int sm = (int)((t + parts) % 3);
            hr_grid_options_default(&o);
            o.backend = slab_backend;
            o.method = HR_METHOD_MG;
            o.smoother = smoothers[sm];
            o.cycle = parts == 2 ? HR_CYCLE_V : parts == 3 ? HR_CYCLE_W : (t & 1) ? HR_CYCLE_F : HR_CYCLE_FMG;
            o.tol = 0.0;
            o.max_iters = 4;
            snprintf(what, sizeof what, "%d-D %dx%dx%d %s mg %s %s 4 cycles", probs[t].dim, probs[t].n[0],
                     probs[t].n[1], probs[t].n[2], probs[t].kinds, smoothers[sm], hr_cycle_name(o.cycle));
            compare(what, &p, &o, parts);
        }
        hr_grid_options_default(&o);
        o.backend = slab_backend;
        o.method = HR_METHOD_MGCG;
        o.tol = 1e-9;
        snprintf(what, sizeof what, "%d-D %s mgcg to 1e-9", probs[t].dim, probs[t].kinds);
        compare(what, &p, &o, 3);
        hr_grid_options_default(&o);
        o.backend = slab_backend;
        o.method = t & 1 ? HR_METHOD_REDBLACK : HR_METHOD_JACOBI;
        o.omega = t & 1 ? 0.0 : 0.8; /* (plain Jacobi is refused on a singular problem) */
        o.tol = 0.0;
        o.max_iters = 30;
        snprintf(what, sizeof what, "%d-D %s %s 30 sweeps", probs[t].dim, probs[t].kinds,
                 hr_method_name(o.method));
        compare(what, &p, &o, 2);
    }
    /* slabs of one row; cpu-threads slabs (a team of two each); the model problem */
    const int thin[3] = {24, 5, 1};
    problem(&p, 2, thin, "dddd", 1.0, NULL);
    hr_grid_options_default(&o);
    o.backend = slab_backend;
    o.method = HR_METHOD_MG;
    o.tol = 0.0;
    o.max_iters = 4;
    compare("2-D 24x5 mg 4 cycles, slabs of one row", &p, &o, 5);
    const int n3[3] = {20, 15, 24};
    problem(&p, 3, n3, "dnddpp", 1.0, coef);
    hr_grid_options_default(&o);
    o.backend = gpu_mode ? HR_BACKEND_GPU : HR_BACKEND_CPU_THREADS;
    o.threads = 2;
    o.method = HR_METHOD_MGCG;
    o.tol = 1e-9;
    compare("3-D dnddpp mgcg to 1e-9, cpu-threads slabs of 2 threads", &p, &o, 2);
    hr_problem_init_model(&p, 3, 31, 31, 31);
    hr_grid_options_default(&o);
    o.backend = slab_backend;
    o.method = HR_METHOD_MG;
    o.kernel = "general";
    o.tol = 1e-9;
    compare("3-D model 31^3 mg to 1e-9", &p, &o, 4);
    /* the caller's monitor: called once per check on the first slab, its stop obeyed by all */
    long sink = 0;
    hr_grid_options_default(&o);
    o.backend = slab_backend;
    o.method = HR_METHOD_MG;
    o.kernel = "general";
    o.tol = 1e-12;
    o.monitor = monitor_stop;
    o.monitor_user = &sink;
    o.monitor_every = 1;
    stop_at = 3;
    compare("3-D model 31^3 mg, the monitor stops at cycle 3", &p, &o, 3);
    /* bad input through the public API: several GPUs need the GPU backend; more slabs than rows */
    hr_grid_options_default(&o);
    o.backend = HR_BACKEND_CPU_SEQ;
    o.method = HR_METHOD_MG;
    o.gpus = 2;
    hr_grid_solver *s = NULL;
    hr_status st = hr_grid_solver_create(&p, &o, &s);
    const int refused = st == HR_ERR_INVALID_ARG && !s && strstr(hr_last_error(), "gpus: 2 GPUs need backend gpu");
    printf("%s gpus 2 with backend cpu-seq: status %d, '%s'\n", refused ? "ok  " : "FAIL", (int)st, hr_last_error());
    failures += !refused;
    {
        char err[256] = "";
        hr_grid_options_default(&o);
        o.backend = HR_BACKEND_CPU_SEQ;
        o.method = HR_METHOD_MG;
        o.kernel = "general";
        const int n2[3] = {10, 3, 1};
        problem(&p, 2, n2, "dddd", 1.0, NULL);
        st = hri_gs_prepare(&p, &o, 0, &s, err, sizeof err);
        hr_status st2 = st == HR_OK ? hri_gs_general_create_parts(s, &p, 4) : st;
        const int ok = st == HR_OK && st2 == HR_ERR_INVALID_ARG && strstr(s->err, "4 slabs need at least 4");
        printf("%s 4 slabs of 3 rows: status %d, '%s'\n", ok ? "ok  " : "FAIL", (int)st2, s ? s->err : err);
        failures += !ok;
        if (s) hri_gs_free(s);
    }
    free(coef);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
