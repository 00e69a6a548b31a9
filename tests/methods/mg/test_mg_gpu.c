/* Multigrid and CG on the GPU (label gpu, exit 77 without a device):
 * after a fixed number of cycles the GPU solution is bitwise the CPU backend's (every
 * smoother, 2-D and 3-D, fp64 and fp32, V/W/F/FMG, a coarse CG, per-level kernels and the
 * one-block kernel, graphs or plain launches), mixed precision reaches 1e-10, CG and PCG
 * converge in the CPU's iteration count (+-1), and a bad device is refused. The options:
 * --coarse-on cpu is bitwise the all-GPU cycle; --smoother async3 converges (factor <= 0.2). */
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
#include "mg_test_util.h"

/* Runs o on the CPU and the GPU; returns the number of differing values (bitwise). */
static size_t gpu_vs_cpu(hr_mg_options o, hr_mg_result *rc, hr_mg_result *rg)
{
    o.backend = HR_MG_BACKEND_CPU;
    double *c = run(&o, rc);
    o.backend = HR_MG_BACKEND_GPU;
    double *g = run(&o, rg);
    size_t bad = 0, first = (size_t)-1;
    for (size_t i = 0; i < points(&o); i++)
        if (memcmp(&c[i], &g[i], sizeof c[i]) != 0) {
            if (!bad) first = i;
            bad++;
        }
    if (bad)
        print_message("  %zu values differ, first at %zu: cpu %.17g gpu %.17g\n", bad, first, c[first],
                      g[first]);
    free(c);
    free(g);
    return bad;
}

static void fixed_cycles(hr_mg_options *o, long cycles)
{
    o->tol = 0.0; /* never converged: exactly `cycles` iterations, checks do not change the iterate */
    o->max_iters = cycles;
}

/* Smoothers x dimensions x precisions, V(2,2), random rhs; spike and a boundary value too. */
static void test_bitwise_smoothers(void **state)
{
    (void)state;
    const hr_mg_smoother sm[3] = {HR_MG_SMOOTH_JACOBI, HR_MG_SMOOTH_REDBLACK, HR_MG_SMOOTH_CHEBY};
    for (int dim = 2; dim <= 3; dim++)
        for (int p = 0; p < 2; p++)
            for (int s = 0; s < 3; s++) {
                hr_mg_options o = opts(dim, dim == 2 ? 127 : 31);
                double *f = random_values(points(&o), 11);
                o.rhs = HR_RHS_ARRAY;
                o.rhs_values = f;
                o.smoother = sm[s];
                o.precision = p ? HR_MG_PREC_SINGLE : HR_MG_PREC_DOUBLE;
                if (s == 0) o.pre = o.post = 3; /* odd Jacobi counts: the ping-pong state changes */
                fixed_cycles(&o, 3);
                hr_mg_result rc, rg;
                const size_t bad = gpu_vs_cpu(o, &rc, &rg);
                print_message("%d-D %s %s: cpu rel %.3e gpu rel %.3e, %zu differ\n", dim, p ? "fp32" : "fp64",
                              hr_mg_smoother_name(sm[s]), rc.relative_residual, rg.relative_residual, bad);
                assert_int_equal(bad, 0);
                assert_int_equal(rc.iterations, rg.iterations);
                free(f);
            }
    /* rectangular grids (levels limited by the shortest axis) */
    for (int dim = 2; dim <= 3; dim++) {
        hr_mg_options o = opts(dim, 0);
        o.nx = dim == 2 ? 127 : 31;
        o.ny = dim == 2 ? 63 : 15;
        o.nz = dim == 3 ? 63 : 0;
        double *f = random_values(points(&o), 13);
        o.rhs = HR_RHS_ARRAY;
        o.rhs_values = f;
        fixed_cycles(&o, 3);
        hr_mg_result rc, rg;
        assert_int_equal(gpu_vs_cpu(o, &rc, &rg), 0);
        free(f);
    }
    /* the inline spike and a boundary value */
    for (int dim = 2; dim <= 3; dim++) {
        hr_mg_options o = opts(dim, dim == 2 ? 63 : 15);
        o.rhs = HR_RHS_SPIKE;
        o.boundary = 0.5;
        fixed_cycles(&o, 4);
        hr_mg_result rc, rg;
        assert_int_equal(gpu_vs_cpu(o, &rc, &rg), 0);
    }
}

/* W, F and FMG cycles, a coarse CG (levels), and both execution paths. */
static void test_bitwise_cycles_paths(void **state)
{
    (void)state;
    const hr_mg_cycle cy[4] = {HR_MG_CYCLE_V, HR_MG_CYCLE_W, HR_MG_CYCLE_F, HR_MG_CYCLE_FMG};
    const char *small[3] = {NULL, "1", "100000000"}; /* default, every level its own kernels, one block */
    for (int path = 0; path < 6; path++) {
        mg_knobs.mg_gpu_small = path < 3 && small[path] ? atol(small[path]) : 0;
        mg_knobs.mg_gpu_nograph = path == 3 ? HR_TUNE_ON : 0;
        mg_knobs.mg_gpu_rb = path == 1 || path == 3 ? 2 : 0; /* red-black as two in-place colour passes */
        /* red-black per column pair (path 0: never marching), or marching on every big level
         * (the default marches only from 10^6 points, more than these grids have); path 5:
         * 2-D sweeps fused on every big level (path 4: not) */
        mg_knobs.mg_gpu_march = path == 0 ? -1 : 1;
        mg_knobs.mg_gpu_fuse = path == 5 ? 1 : -1;
        for (int dim = 2; dim <= 3; dim++)
            for (int c = 0; c < 4; c++) {
                hr_mg_options o = opts(dim, dim == 2 ? 127 : 31);
                double *f = random_values(points(&o), 5);
                o.rhs = HR_RHS_ARRAY;
                o.rhs_values = f;
                o.cycle = cy[c];
                if (c == 1) o.levels = 4; /* W with a coarse CG on a 15^2 / 3^3 grid */
                fixed_cycles(&o, 2);
                hr_mg_result rc, rg;
                const size_t bad = gpu_vs_cpu(o, &rc, &rg);
                if (bad) print_message("path %d, %d-D, cycle %s\n", path, dim, hr_mg_cycle_name(cy[c]));
                assert_int_equal(bad, 0);
                free(f);
            }
    }
    mg_knobs.mg_gpu_small = 0;
    mg_knobs.mg_gpu_nograph = 0;
    mg_knobs.mg_gpu_rb = 0;
    mg_knobs.mg_gpu_march = 1;
    mg_knobs.mg_gpu_fuse = 1;
}

/* Mixed precision: fp64 accuracy (1e-10), and bitwise the CPU's after fixed cycles (the
 * defect check writes the same fp32 right-hand side). */
static void test_mixed(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++) {
        hr_mg_options o = opts(dim, dim == 2 ? 255 : 31);
        double *f = random_values(points(&o), 3);
        o.rhs = HR_RHS_ARRAY;
        o.rhs_values = f;
        o.precision = HR_MG_PREC_MIXED;
        o.tol = 1e-10;
        o.backend = HR_MG_BACKEND_GPU;
        hr_mg_result r;
        free(run(&o, &r));
        print_message("%d-D mixed: %ld cycles, rel %.3e\n", dim, r.iterations, r.relative_residual);
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        assert_true(r.relative_residual < 1e-10);
        fixed_cycles(&o, 4);
        hr_mg_result rc, rg;
        assert_int_equal(gpu_vs_cpu(o, &rc, &rg), 0);
        free(f);
    }
}

/* Values outside fp32's range and squares outside fp64's: mixed precision's defect is
 * scaled into range by the check (written again when out of range) and the correction divided
 * by the scale in the recorded graphs, bitwise the CPU's; CG's vectors are scaled from the
 * start; the check's norms take the scaled pass. Each converges as the CPU does. */
static void test_out_of_range(void **state)
{
    (void)state;
    enum { MIXED, PCG_DOUBLE, PCG_MIXED, COARSE_CG }; /* mg mixed, pcg, mg fp64 with a coarse CG */
    static const struct {
        int dim, kind;
        double mult;
        int bitwise; /* also bitwise the CPU's after fixed cycles */
    } cases[] = {{2, MIXED, 0x1p700, 1},     {2, MIXED, 0x1p-700, 1},     {2, MIXED, 1e-310, 0},
                 {2, PCG_MIXED, 0x1p700, 0}, {2, PCG_DOUBLE, 1e-310, 0},  {2, COARSE_CG, 0x1p-700, 1},
                 {3, MIXED, 0x1p700, 1},     {3, PCG_MIXED, 0x1p-700, 0}, {3, COARSE_CG, 1e-310, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int v = cases[c].kind, sub = cases[c].mult == 1e-310;
        hr_mg_options o = opts(cases[c].dim, cases[c].dim == 2 ? 63 : 15); /* fused, marching kernels */
        const size_t n = points(&o);
        double *f = random_values(n, 7);
        for (size_t i = 0; i < n; i++)
            f[i] = cases[c].mult * (sub ? 1.0 + 0.5 * f[i] : f[i]);
        o.rhs = HR_RHS_ARRAY;
        o.rhs_values = f;
        o.method = v == PCG_DOUBLE || v == PCG_MIXED ? HR_MG_METHOD_CG : HR_MG_METHOD_MG;
        o.pc = o.method == HR_MG_METHOD_CG ? HR_MG_PC_MG : HR_MG_PC_NONE;
        o.precision = v == PCG_DOUBLE || v == COARSE_CG ? HR_MG_PREC_DOUBLE : HR_MG_PREC_MIXED;
        if (v == COARSE_CG) o.levels = 3; /* the coarsest level is solved by the one-block CG */
        o.tol = sub ? 1e-6 : 1e-9;        /* subnormal h^2 f: about 38 significant bits at 63^2 */
        hr_mg_result rc, rg;
        o.backend = HR_MG_BACKEND_CPU;
        free(run(&o, &rc));
        o.backend = HR_MG_BACKEND_GPU;
        free(run(&o, &rg));
        print_message("%d-D %s %s%s, f * %g: cpu %ld it (rel %.3e), gpu %ld it (rel %.3e)\n", cases[c].dim,
                      o.method == HR_MG_METHOD_CG ? "pcg" : "mg",
                      o.precision == HR_MG_PREC_DOUBLE ? "double" : "mixed",
                      v == COARSE_CG ? " 3 levels" : "", cases[c].mult, rc.iterations, rc.relative_residual,
                      rg.iterations, rg.relative_residual);
        assert_int_equal(rg.reason, HR_REASON_CONVERGED);
        assert_true(rg.relative_residual < o.tol * 1.5);
        assert_true(labs(rc.iterations - rg.iterations) <= 1);
        if (cases[c].bitwise) {
            fixed_cycles(&o, 3);
            assert_int_equal(gpu_vs_cpu(o, &rc, &rg), 0);
        }
        free(f);
    }
}

/* CG and PCG (fp64 and mixed preconditioner): converged, iteration counts within 1. */
static void test_cg(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++)
        for (int v = 0; v < 3; v++) {
            hr_mg_options o = opts(dim, dim == 2 ? (v ? 255 : 63) : (v ? 31 : 15));
            double *f = random_values(points(&o), 9);
            o.rhs = HR_RHS_ARRAY;
            o.rhs_values = f;
            o.method = HR_MG_METHOD_CG;
            o.pc = v ? HR_MG_PC_MG : HR_MG_PC_NONE;
            o.precision = v == 2 ? HR_MG_PREC_MIXED : HR_MG_PREC_DOUBLE;
            o.max_iters = 2000;
            hr_mg_result rc, rg;
            o.backend = HR_MG_BACKEND_CPU;
            double *c = run(&o, &rc);
            o.backend = HR_MG_BACKEND_GPU;
            double *g = run(&o, &rg);
            double diff = 0.0;
            for (size_t i = 0; i < points(&o); i++)
                diff = fmax(diff, fabs(c[i] - g[i]));
            print_message("%d-D cg pc %s %s: cpu %ld it, gpu %ld it (rel %.3e), max diff %.3e\n", dim,
                          v ? "mg" : "none", v == 2 ? "mixed" : "double", rc.iterations, rg.iterations,
                          rg.relative_residual, diff);
            assert_int_equal(rg.reason, HR_REASON_CONVERGED);
            assert_true(rg.relative_residual < 1e-8 * 1.5);
            assert_true(labs(rc.iterations - rg.iterations) <= 1);
            free(c);
            free(g);
            free(f);
        }
}

/* Solving twice gives the same bits; FMG on the manufactured problem reaches the CPU's error. */
static void test_twice_and_fmg(void **state)
{
    (void)state;
    hr_mg_options o = opts(2, 255);
    o.rhs = HR_RHS_MANUFACTURED;
    o.cycle = HR_MG_CYCLE_FMG;
    o.precision = HR_MG_PREC_MIXED;
    o.backend = HR_MG_BACKEND_GPU;
    o.max_iters = 1;
    o.tol = 0.0;
    hr_mg *m = NULL;
    assert_int_equal(hr_mg_create(&o, &m), HR_OK);
    hr_mg_result r1, r2;
    const size_t n = points(&o);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    assert_int_equal(hr_mg_solve(m, &r1), HR_OK);
    assert_int_equal(hr_mg_solution(m, a, n), HR_OK);
    assert_int_equal(hr_mg_solve(m, &r2), HR_OK);
    assert_int_equal(hr_mg_solution(m, b, n), HR_OK);
    assert_memory_equal(a, b, n * sizeof *a);
    hr_mg_free(m);
    o.backend = HR_MG_BACKEND_CPU;
    hr_mg_result rc;
    free(run(&o, &rc));
    print_message("FMG 255^2 mixed: gpu max error %.4e, cpu %.4e\n", r1.max_error, rc.max_error);
    assert_true(r1.max_error == rc.max_error);
    free(a);
    free(b);
}

/* Runs o on the GPU with every level on the device and with coarse_on cpu; returns the
 * number of differing values (bitwise). */
static size_t coarse_cpu_vs_gpu(hr_mg_options o, int coarse_level, hr_mg_result *ra, hr_mg_result *rb)
{
    o.backend = HR_MG_BACKEND_GPU;
    double *a = run(&o, ra);
    o.coarse_on = HR_MG_COARSE_ON_CPU;
    o.coarse_level = coarse_level;
    double *b = run(&o, rb);
    size_t bad = 0;
    for (size_t i = 0; i < points(&o); i++)
        bad += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
    free(a);
    free(b);
    return bad;
}

/* --coarse-on cpu: the coarse levels on the CPU threads give the all-GPU
 * cycle's bits after fixed cycles (V, W, F, FMG; fp64, fp32 and mixed; PCG; automatic and
 * given first CPU level, the coarsest alone included), graphs and plain launches. */
/* In the CPU emulation, tests whose comparisons run the same smoother on both sides leave the
 * fused red-black march out (on: 1; back: 0): its lanes are fibers there, a context switch per
 * lane and shuffle, which would double the emulated suite's time for no check of its own. */
static void emu_unfused(int on)
{
#ifdef HR_MG_EMU
    mg_knobs.mg_gpu_fuse = on ? -1 : 1;
#else
    (void)on;
#endif
}

static void test_coarse_on_cpu(void **state)
{
    (void)state;
    emu_unfused(1);
    const hr_mg_cycle cy[4] = {HR_MG_CYCLE_V, HR_MG_CYCLE_W, HR_MG_CYCLE_F, HR_MG_CYCLE_FMG};
    for (int nograph = 0; nograph < 2; nograph++) {
        mg_knobs.mg_gpu_nograph = nograph ? HR_TUNE_ON : 0;
        for (int dim = 2; dim <= 3; dim++)
            for (int c = 0; c < 4; c++)
                for (int p = 0; p < 3; p++) {
                    if (nograph && p != 2) continue;
                    hr_mg_options o = opts(dim, dim == 2 ? 127 : 31);
                    double *f = random_values(points(&o), 21);
                    o.rhs = HR_RHS_ARRAY;
                    o.rhs_values = f;
                    o.cycle = cy[c];
                    o.precision = p == 0 ? HR_MG_PREC_DOUBLE : p == 1 ? HR_MG_PREC_SINGLE : HR_MG_PREC_MIXED;
                    fixed_cycles(&o, 3);
                    const int levels = dim == 2 ? 7 : 5, given[3] = {0, 2, levels - 1};
                    for (int gl = 0; gl < 3; gl++) {
                        hr_mg_result ra, rb;
                        const size_t bad = coarse_cpu_vs_gpu(o, given[gl], &ra, &rb);
                        if (bad)
                            print_message("%d-D %s prec %d coarse-level %d: %zu differ (rel %.3e / %.3e)\n",
                                          dim, hr_mg_cycle_name(cy[c]), p, given[gl], bad,
                                          ra.relative_residual, rb.relative_residual);
                        assert_int_equal(bad, 0);
                        assert_int_equal(ra.iterations, rb.iterations);
                    }
                    free(f);
                }
    }
    mg_knobs.mg_gpu_nograph = 0;
    /* PCG with the V-cycle split between GPU and CPU: the same iterates */
    for (int dim = 2; dim <= 3; dim++) {
        hr_mg_options o = opts(dim, dim == 2 ? 127 : 31);
        double *f = random_values(points(&o), 23);
        o.rhs = HR_RHS_ARRAY;
        o.rhs_values = f;
        o.method = HR_MG_METHOD_CG;
        o.pc = HR_MG_PC_MG;
        o.precision = HR_MG_PREC_MIXED;
        fixed_cycles(&o, 4);
        hr_mg_result ra, rb;
        assert_int_equal(coarse_cpu_vs_gpu(o, 0, &ra, &rb), 0);
        free(f);
    }
    /* a CPU part big enough for the thread team (255^2 from level 1, 2 threads) */
    {
        hr_mg_options o = opts(2, 511);
        o.rhs = HR_RHS_MANUFACTURED;
        o.cycle = HR_MG_CYCLE_F;
        o.precision = HR_MG_PREC_MIXED;
        fixed_cycles(&o, 2);
        hr_mg_result ra, rb;
        assert_int_equal(coarse_cpu_vs_gpu(o, 1, &ra, &rb), 0);
    }
    /* to the tolerance: the same cycles as the all-GPU solve */
    hr_mg_options o = opts(2, 255);
    o.rhs = HR_RHS_SPIKE;
    o.precision = HR_MG_PREC_MIXED;
    hr_mg_result ra, rb;
    assert_int_equal(coarse_cpu_vs_gpu(o, 0, &ra, &rb), 0);
    assert_int_equal(rb.reason, HR_REASON_CONVERGED);
    assert_int_equal(ra.iterations, rb.iterations);
    emu_unfused(0);
}

/* --smoother async3: not deterministic, so convergence only: to 1e-8 at a
 * factor <= 0.2 per cycle in fp64 and mixed precision, 2-D and 3-D, V and F cycles, with
 * and without the coarse levels on the CPU; 1 and 3 local sweeps per pass too. */
static void test_async_smoother(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++)
        for (int v = 0; v < 5; v++) {
            hr_mg_options o = opts(dim, dim == 2 ? 255 : 31);
            double *f = random_values(points(&o), 31);
            o.rhs = HR_RHS_ARRAY;
            o.rhs_values = f;
            o.smoother = HR_MG_SMOOTH_ASYNC;
            o.backend = HR_MG_BACKEND_GPU;
            o.precision = v == 1 || v >= 3 ? HR_MG_PREC_MIXED : HR_MG_PREC_DOUBLE;
            o.cycle = v == 2 ? HR_MG_CYCLE_F : HR_MG_CYCLE_V;
            if (v == 3) o.coarse_on = HR_MG_COARSE_ON_CPU;
            if (v == 4) o.tuning.mg_gpu_async_local = dim == 2 ? 1 : 3;
            o.max_iters = 30;
            hr_mg_result r;
            free(run(&o, &r));
            print_message("%d-D async3 variant %d: %ld cycles, rel %.3e, factor %.4f (last %.4f)\n", dim, v,
                          r.iterations, r.relative_residual, r.convergence_factor, r.last_factor);
            assert_int_equal(r.reason, HR_REASON_CONVERGED);
            assert_true(r.relative_residual < 1e-8);
            assert_true(r.convergence_factor <= 0.2);
            free(f);
        }
}

static void test_bad_device(void **state)
{
    (void)state;
    hr_mg_options o = opts(2, 31);
    o.backend = HR_MG_BACKEND_GPU;
    o.device = 999;
    hr_mg *m = NULL;
    assert_int_equal(hr_mg_create(&o, &m), HR_ERR_NO_DEVICE);
    assert_null(m);
    assert_non_null(strstr(hr_mg_last_error(), "no CUDA device 999"));
}

/* ------------------------------------------------------------------ device arrays */

#include "device_mem_test_util.h"

/* A solve of handle s from host arrays f (NULL: the problem's), its solution in prec. */
static void host_solve(hr_grid_solver *s, const double *f, hr_precision prec, void *u, size_t n, hr_result *r)
{
    assert_int_equal(hr_grid_solver_solve(s, f, NULL, r), HR_OK);
    assert_int_equal(hr_grid_solver_solution(s, prec, u, n), HR_OK);
}

/* The model problem's engine through hr_grid_solver_solve_device (mg in each precision, cg,
 * mgcg; 2-D, and 3-D on a box other than the unit cube, so that f is scaled): f in the
 * device's memory (fp64, and fp32) and the solution written there give the bits of the same
 * solve from host arrays. A handle whose problem has f = 0 takes device arrays (setting its
 * engine up again once), and new host arrays in place on the GPU keep giving a fresh
 * handle's bits. */
static void test_device_arrays(void **state)
{
    (void)state;
    emu_unfused(1);
    static const struct {
        hr_method m;
        hr_precision prec;
        int dim, n;
    } cs[] = {
        {HR_METHOD_MG, HR_PREC_DOUBLE, 2, 63}, {HR_METHOD_MG, HR_PREC_SINGLE, 2, 63},
        {HR_METHOD_MG, HR_PREC_MIXED, 2, 63},  {HR_METHOD_CG, HR_PREC_DOUBLE, 2, 31},
        {HR_METHOD_MGCG, HR_PREC_MIXED, 2, 31}, {HR_METHOD_MG, HR_PREC_MIXED, 3, 15},
    };
    for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
        hr_problem p;
        hr_problem_init_model(&p, cs[c].dim, cs[c].n, cs[c].n, cs[c].n);
        if (cs[c].dim == 3) hr_problem_set_lengths(&p, 2.0, 2.0, 2.0); /* rhs_scale 4 */
        hr_problem_set_rhs(&p, HR_RHS_ZERO, NULL);
        hr_grid_options o;
        hr_grid_options_default(&o);
        o.method = cs[c].m;
        o.precision = cs[c].prec;
        o.backend = HR_BACKEND_GPU;
        o.max_iters = 4;
        o.tuning = mg_knobs;
        const size_t n = hr_problem_unknowns(&p);
        double *f = random_values(n, 11 + c), *f2 = random_values(n, 99 + c), *u1 = malloc(n * sizeof *u1),
               *u2 = malloc(n * sizeof *u2), *f32d = malloc(n * sizeof *f32d);
        float *f32 = malloc(n * sizeof *f32), *v32 = malloc(n * sizeof *v32), *w32 = malloc(n * sizeof *w32);
        for (size_t i = 0; i < n; i++)
            f32[i] = (float)f[i], f32d[i] = f32[i];
        void *df = dev_alloc(n * sizeof(double)), *dx = dev_alloc(n * sizeof(double));
        assert_non_null(df);
        assert_non_null(dx);
        hr_grid_solver *s = NULL, *h = NULL;
        assert_int_equal(hr_grid_solver_create(&p, &o, &s), HR_OK);
        assert_int_equal(hr_grid_solver_create(&p, &o, &h), HR_OK);
        hr_result r1, r2;
        /* fp64: first on the handle whose engine has no array for f */
        dev_put(df, f, n * sizeof(double));
        hr_device_arrays a = {HR_PREC_DOUBLE, df, NULL, dx, NULL};
        if (hr_grid_solver_solve_device(s, &a, &r2) != HR_OK)
            fail_msg("case %zu: solve_device: %s", c, hr_grid_solver_last_error(s));
        dev_get(u2, dx, n * sizeof(double));
        host_solve(h, f, HR_PREC_DOUBLE, u1, n, &r1);
        if (memcmp(u1, u2, n * sizeof *u1) != 0 || r1.iterations != r2.iterations ||
            memcmp(&r1.relative_residual, &r2.relative_residual, sizeof(double)) != 0)
            fail_msg("case %zu: device arrays differ from host arrays (iterations %ld / %ld)", c, r2.iterations,
                     r1.iterations);
        /* fp32 in and out against the host solve of the rounded values, its solution rounded */
        dev_put(df, f32, n * sizeof(float));
        a.prec = HR_PREC_SINGLE;
        assert_int_equal(hr_grid_solver_solve_device(s, &a, &r2), HR_OK);
        dev_get(w32, dx, n * sizeof(float));
        host_solve(h, f32d, HR_PREC_SINGLE, v32, n, &r1);
        if (memcmp(v32, w32, n * sizeof *v32) != 0) fail_msg("case %zu: fp32 device arrays differ", c);
        /* host arrays again on both: in place on the GPU, the bits of a fresh handle */
        host_solve(s, f2, HR_PREC_DOUBLE, u2, n, &r2);
        hr_grid_solver *fresh = NULL;
        hr_problem pf = p;
        hr_problem_set_rhs(&pf, HR_RHS_ARRAY, f2);
        assert_int_equal(hr_grid_solver_create(&pf, &o, &fresh), HR_OK);
        host_solve(fresh, NULL, HR_PREC_DOUBLE, u1, n, &r1);
        if (memcmp(u1, u2, n * sizeof *u1) != 0) fail_msg("case %zu: a new host f after device arrays differs", c);
        host_solve(fresh, f, HR_PREC_DOUBLE, u1, n, &r1); /* replaced in place */
        host_solve(h, f, HR_PREC_DOUBLE, u2, n, &r2);
        if (memcmp(u1, u2, n * sizeof *u1) != 0) fail_msg("case %zu: f replaced in place differs", c);
        /* the problem's own f (zero) again: zero solution */
        hr_device_arrays none = {HR_PREC_DOUBLE, NULL, NULL, dx, NULL};
        assert_int_equal(hr_grid_solver_solve_device(s, &none, &r2), HR_OK);
        dev_get(u2, dx, n * sizeof(double));
        for (size_t i = 0; i < n; i++)
            if (u2[i] != 0.0) fail_msg("case %zu: f = 0 again gives u[%zu] = %g", c, i, u2[i]);
        /* bad input */
        a.prec = HR_PREC_MIXED;
        assert_int_equal(hr_grid_solver_solve_device(s, &a, NULL), HR_ERR_INVALID_ARG);
        assert_non_null(strstr(hr_grid_solver_last_error(s), "prec"));
        hr_device_arrays x0 = {HR_PREC_DOUBLE, df, dx, NULL, NULL};
        assert_int_equal(hr_grid_solver_solve_device(s, &x0, NULL), HR_ERR_UNSUPPORTED);
        assert_non_null(strstr(hr_grid_solver_last_error(s), "x0"));
#ifndef HR_MG_EMU
        hr_device_arrays host = {HR_PREC_DOUBLE, f, NULL, NULL, NULL};
        assert_int_equal(hr_grid_solver_solve_device(s, &host, NULL), HR_ERR_INVALID_ARG);
        assert_non_null(strstr(hr_grid_solver_last_error(s), "rhs: not device memory"));
#endif
        hr_grid_solver_free(s);
        hr_grid_solver_free(h);
        hr_grid_solver_free(fresh);
        dev_free(df), dev_free(dx);
        free(f), free(f2), free(u1), free(u2), free(f32d), free(f32), free(v32), free(w32);
    }
    emu_unfused(0);
}

/* argv[1]: a cmocka test-name filter (e.g. "test_coarse*"), to run a part on the device. */
int main(int argc, char **argv)
{
    hr_mg_options o = opts(2, 7);
    o.backend = HR_MG_BACKEND_GPU;
    hr_mg *m = NULL;
    const hr_status st = hr_mg_create(&o, &m);
    hr_mg_free(m);
    if (st == HR_ERR_NO_DEVICE) {
        fprintf(stderr, "no CUDA device (or no CUDA in this build): skipped (%s)\n", hr_mg_last_error());
        return 77;
    }
    /* the marching and fused red-black kernels on every big level (by default only from 10^6
     * points) */
    mg_knobs.mg_gpu_march = 1;
    mg_knobs.mg_gpu_fuse = 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitwise_smoothers),
        cmocka_unit_test(test_bitwise_cycles_paths),
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_cg),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_twice_and_fmg),
        cmocka_unit_test(test_coarse_on_cpu),
        cmocka_unit_test(test_async_smoother),
        cmocka_unit_test(test_bad_device),
        cmocka_unit_test(test_device_arrays),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
