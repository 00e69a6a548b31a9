/*
 * General problems on MPI ranks (hr_grid_solver_create_mpi; src/parallel/mpi/general_mpi.c):
 * Jacobi, red-black, SOR and CG on a slab of the last axis per rank give the one-process
 * cpu-seq run's bits, iterations and residual, for mixed boundary conditions (a periodic cut
 * axis included), a coefficient field and a singular problem; so do multigrid (every smoother
 * and cycle, levels cut across the ranks and levels whole on every rank, slabs of one row) and
 * MG-preconditioned CG, and the model problem's multigrid; so does a random right-hand side
 * (HR_RHS_RANDOM), which each rank makes for its own slab.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/mpi.h"

static int rank, size, bad;
/* test_general_mpi gpu: the ranks run the GPU backend (one GPU each, or shared); multigrid's
 * fixed cycles are still the one-process cpu-seq run's bits (the GPU's sweeps and transfers
 * are the CPU's point by point), reductions only to rounding (summed per rank, then in rank
 * order) */
static int gpu_mode;
/* test_general_mpi gpu host|nccl: the halos' way (default auto: NCCL where every rank has a GPU
 * of its own and the build has NCCL, else through the host) */
static int gpu_transport;

static void problem_n(hr_problem *p, int dim, const int n[3], const char *kinds, double *coef, double *f,
                      double *face)
{
    hr_problem_init_model(p, dim, n[0], n[1], n[2]);
    hr_problem_set_lengths(p, 2.0, 1.0, 0.5);
    for (int f2 = 0; f2 < 2 * dim; f2++)
        p->bc[f2].kind = kinds[f2] == 'n'   ? HR_BC_NEUMANN
                         : kinds[f2] == 'p' ? HR_BC_PERIODIC
                                            : HR_BC_DIRICHLET;
    const size_t cnt = hr_problem_unknowns(p);
    for (size_t i = 0; i < cnt; i++) {
        coef[i] = 1.0 + 0.5 * sin(0.37 * (double)i);
        f[i] = cos(0.11 * (double)i);
    }
    hr_problem_set_coef(p, 1.0, coef);
    hr_problem_set_rhs(p, HR_RHS_ARRAY, f);
    for (int f2 = 0; f2 < 2 * dim; f2++)
        if (p->bc[f2].kind == HR_BC_DIRICHLET) {
            const size_t c = hr_problem_face_points(p, (hr_face)f2);
            for (size_t i = 0; i < c; i++)
                face[i] = 0.25 * f2 + 0.01 * (double)i;
            p->bc[f2].values = face;
            break; /* one face with values, the others constant */
        }
}

static void problem(hr_problem *p, int dim, const char *kinds, double *coef, double *f, double *face)
{
    const int n[3] = {dim == 3 ? 13 : 37, dim == 3 ? 11 : 29, 9};
    problem_n(p, dim, n, kinds, coef, f, face);
}

static void compare(const char *what, const hr_problem *p, const hr_grid_options *o)
{
    const size_t cnt = hr_problem_unknowns(p);
    hr_grid_solver *s = NULL;
    hr_grid_options oo = *o;
    if (gpu_mode) oo.transport = gpu_transport;
    hr_status st = hr_grid_solver_create_mpi(p, &oo, MPI_COMM_WORLD, &s);
    if (st != HR_OK) {
        if (rank == 0) printf("FAIL %s: create on %d ranks: %s\n", what, size, hr_last_error());
        bad = 1;
        return;
    }
    hr_result r;
    st = hr_grid_solver_solve(s, NULL, NULL, &r);
    double *u = rank == 0 ? malloc(cnt * sizeof *u) : NULL;
    hr_status st2 = hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, rank == 0 ? cnt : 0);
    hr_grid_info info;
    hr_grid_solver_info(s, &info);
    hr_grid_solver_free(s);
    if (rank != 0) return;
    hr_grid_options o1 = *o;
    o1.backend = HR_BACKEND_CPU_SEQ;
    hr_grid_solver *s1 = NULL;
    hr_result r1;
    double *u1 = malloc(cnt * sizeof *u1);
    if (hr_grid_solver_create(p, &o1, &s1) != HR_OK || hr_grid_solver_solve(s1, NULL, NULL, &r1) != HR_OK ||
        hr_grid_solver_solution(s1, HR_PREC_DOUBLE, u1, cnt) != HR_OK) {
        printf("FAIL %s: the one-process run: %s\n", what, hr_last_error());
        bad = 1;
    } else if (gpu_mode) {
        /* a singular problem's zero-mean solution subtracts the GPU's sum: to rounding */
        const int mg = o->method == HR_METHOD_MG && !hr_problem_is_singular(p);
        double dmax = 0.0, umax = 0.0;
        for (size_t i = 0; i < cnt; i++) {
            dmax = fmax(dmax, fabs(u[i] - u1[i]));
            umax = fmax(umax, fabs(u1[i]));
        }
        const int same = mg ? memcmp(u, u1, cnt * sizeof *u) == 0 && r.iterations == r1.iterations
                            : labs(r.iterations - r1.iterations) <= 1 &&
                                  dmax <= (o->method == HR_METHOD_MG ? 1e-12 : 1e-6) * umax;
        const int ok =
            st == HR_OK && st2 == HR_OK && r.ranks == size && strcmp(r.backend, "gpu") == 0 && same &&
            fabs(r.relative_residual - r1.relative_residual) <= (mg ? 1e-9 : 0.5) * r1.relative_residual;
        size_t i = 0;
        while (i < cnt && u[i] == u1[i])
            i++;
        printf("%s gpu %s on %d ranks (halo %s): status %d/%d, backend %s, %ld iterations (cpu-seq %ld), "
               "residual %.3e (%.3e), first difference at %zu of %zu%s\n",
               ok ? "ok  " : "FAIL", what, size,
               info.transport ? hr_mpi_transport_name((hr_mpi_transport)info.transport) : "none", (int)st,
               (int)st2, r.backend, r.iterations, r1.iterations, r.relative_residual, r1.relative_residual, i,
               cnt, mg && ok ? ": bitwise the one-process cpu-seq run" : "");
        bad |= !ok;
    } else if (st != HR_OK || st2 != HR_OK || memcmp(u, u1, cnt * sizeof *u) != 0 ||
               r.iterations != r1.iterations ||
               memcmp(&r.relative_residual, &r1.relative_residual, sizeof(double)) != 0 || r.ranks != size ||
               memcmp(&r.rhs_projection, &r1.rhs_projection, sizeof(double)) != 0 ||
               strcmp(info.engine, size > 1 ? "mpi-general" : "mpi-general") != 0) {
        size_t i = 0;
        while (i < cnt && u[i] == u1[i])
            i++;
        printf(
            "FAIL %s on %d ranks: status %d/%d, iterations %ld vs %ld, residual %.17g vs %.17g, projection "
            "%.17g vs %.17g, first difference at %zu, engine %s\n",
            what, size, (int)st, (int)st2, r.iterations, r1.iterations, r.relative_residual,
            r1.relative_residual, r.rhs_projection, r1.rhs_projection, i, info.engine);
        bad = 1;
    } else {
        printf("ok   %s on %d ranks: %ld iterations, residual %.3e, bitwise the one-process run\n", what,
               size, r.iterations, r.relative_residual);
    }
    hr_grid_solver_free(s1);
    free(u);
    free(u1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gpu_mode = argc > 1 && strcmp(argv[1], "gpu") == 0;
    if (gpu_mode) {
        hr_sysinfo si;
        hr_sysinfo_get(&si);
        int gpus = si.gpus, least = gpus;
        MPI_Allreduce(&gpus, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (least < 1) {
            if (rank == 0) printf("skip: no CUDA device on some rank\n");
            MPI_Finalize();
            return 77;
        }
        if (argc > 2)
            gpu_transport = strcmp(argv[2], "nccl") == 0 ? HR_MPI_TRANSPORT_NCCL : HR_MPI_TRANSPORT_HOST;
        if (gpu_transport == HR_MPI_TRANSPORT_NCCL && (!hr_mpi_have_nccl() || least < size)) {
            if (rank == 0) printf("skip: NCCL halos need this build's NCCL and a GPU per rank\n");
            MPI_Finalize();
            return 77;
        }
    }
    const size_t most = 400000;
    double *coef = malloc(most * sizeof *coef), *f = malloc(most * sizeof *f),
           *face = malloc(4000 * sizeof *face);
    hr_problem p;
    hr_grid_options o;
    if (!gpu_mode) { /* relaxation and CG: cpu-seq ranks */
        const char *kinds2[] = {"dnpp", "nddn", "ppnd"};
        for (int t = 0; t < 3; t++) {
            problem(&p, 2, kinds2[t], coef, f, face);
            char what[64];
            hr_grid_options_default(&o);
            o.backend = HR_BACKEND_CPU_SEQ;
            o.omega = 0.8;
            o.max_iters = 150;
            snprintf(what, sizeof what, "2-D %s jacobi", kinds2[t]);
            compare(what, &p, &o);
            o.method = HR_METHOD_REDBLACK;
            o.omega = 0.0;
            o.max_iters = 60;
            snprintf(what, sizeof what, "2-D %s redblack", kinds2[t]);
            compare(what, &p, &o);
            hr_grid_options_default(&o);
            o.backend = HR_BACKEND_CPU_SEQ;
            o.method = HR_METHOD_CG;
            o.tol = 1e-9;
            snprintf(what, sizeof what, "2-D %s cg", kinds2[t]);
            compare(what, &p, &o);
        }
        problem(&p, 3, "dnppnp", coef, f, face); /* z (the cut axis) periodic */
        p.bc[5].kind = HR_BC_PERIODIC;
        p.bc[4].kind = HR_BC_PERIODIC;
        p.bc[4].values = NULL;
        hr_grid_options_default(&o);
        o.backend = HR_BACKEND_CPU_SEQ;
        o.method = HR_METHOD_SOR;
        o.max_iters = 40;
        compare("3-D dnpppp sor", &p, &o);
        o.method = HR_METHOD_CG;
        o.max_iters = 0;
        o.tol = 1e-9;
        compare("3-D dnpppp cg", &p, &o);
        problem(&p, 2, "nnpp", coef, f, face); /* singular: projected */
        compare("2-D nnpp (singular) cg", &p, &o);
    } /* gpu_mode */
    /* multigrid on ranks: levels cut while every rank keeps two rows and 2048 unknowns, whole on
     * every rank below; a fixed number of cycles and CG to a tolerance, bitwise one process */
    const struct {
        int dim, n[3];
        const char *kinds;
        double ly;    /* the y length: 8 makes y weak (x alone coarsens first) */
        int constant; /* a constant coefficient at extents whose coarse grids keep the faces' shape:
                         the coarse levels are the star stencil injected, not Galerkin products */
    } mgp[] = {
        {2, {300, 400, 1}, "dnpp", 1.0, 0},  {2, {150, 203, 1}, "nddn", 1.0, 0},
        {2, {200, 90, 1}, "ddnd", 8.0, 0},   {2, {96, 130, 1}, "nnnn", 1.0, 0},
        {3, {40, 30, 48}, "dnddpp", 1.0, 0}, {3, {33, 20, 27}, "nnddnd", 1.0, 0},
        {2, {127, 128, 1}, "ddnd", 1.0, 1},  {2, {129, 96, 1}, "nnpp", 1.0, 1},
        {3, {33, 33, 32}, "nnddpp", 1.0, 1},
    };
    const char *smoothers[] = {"redblack", "jacobi", "cheby"};
    for (size_t t = 0; t < sizeof mgp / sizeof *mgp; t++) {
        problem_n(&p, mgp[t].dim, mgp[t].n, mgp[t].kinds, coef, f, face);
        if (mgp[t].ly != 1.0) hr_problem_set_lengths(&p, 2.0, mgp[t].ly, 0.5);
        if (mgp[t].constant) { /* and one spacing on every axis, so that every axis coarsens */
            double L[3] = {1.0, 1.0, 1.0};
            for (int a = 0; a < mgp[t].dim; a++) {
                const char lo = mgp[t].kinds[2 * a], hi = mgp[t].kinds[2 * a + 1];
                const int gaps = lo == 'p' ? mgp[t].n[a] : mgp[t].n[a] + (lo == 'd') + (hi == 'd') - 1;
                L[a] = gaps / 64.0;
            }
            hr_problem_set_lengths(&p, L[0], L[1], L[2]);
            hr_problem_set_coef(&p, 2.5, NULL);
        }
        char what[96];
        for (int sm = 0; sm < 3; sm++) {
            hr_grid_options_default(&o);
            o.backend = gpu_mode ? HR_BACKEND_GPU : HR_BACKEND_CPU_SEQ;
            o.method = HR_METHOD_MG;
            o.smoother = smoothers[sm];
            o.cycle = sm == 0 ? HR_CYCLE_V : sm == 1 ? HR_CYCLE_W : (t & 1) ? HR_CYCLE_F : HR_CYCLE_FMG;
            o.tol = 0.0;
            o.max_iters = 4;
            snprintf(what, sizeof what, "%d-D %dx%dx%d %s mg %s %s 4 cycles", mgp[t].dim, mgp[t].n[0],
                     mgp[t].n[1], mgp[t].n[2], mgp[t].kinds, smoothers[sm], hr_cycle_name(o.cycle));
            compare(what, &p, &o);
        }
        hr_grid_options_default(&o);
        o.backend = gpu_mode ? HR_BACKEND_GPU : HR_BACKEND_CPU_SEQ;
        o.method = HR_METHOD_MGCG;
        o.tol = 1e-9;
        snprintf(what, sizeof what, "%d-D %dx%dx%d %s mgcg to 1e-9", mgp[t].dim, mgp[t].n[0], mgp[t].n[1],
                 mgp[t].n[2], mgp[t].kinds);
        compare(what, &p, &o);
    }
    /* the model problem's multigrid on ranks runs the general engine (uniform stencil on every
     * slab): the one-process run of that engine (kernel general), bitwise */
    for (int dim = 2; dim <= 3; dim++) {
        hr_problem_init_model(&p, dim, dim == 2 ? 255 : 31, dim == 2 ? 255 : 31, 31);
        hr_grid_options_default(&o);
        o.backend = gpu_mode ? HR_BACKEND_GPU : HR_BACKEND_CPU_SEQ;
        o.method = dim == 2 ? HR_METHOD_MG : HR_METHOD_MGCG;
        o.kernel = "general";
        o.tol = 1e-9;
        compare(dim == 2 ? "2-D model 255^2 mg to 1e-9" : "3-D model 31^3 mgcg to 1e-9", &p, &o);
    }
    /* the random right-hand side: each rank makes its slab's values (hetrelax/problem.h) */
    {
        const int n3[3] = {33, 20, 27};
        problem_n(&p, 3, n3, "nnddnd", coef, f, face);
        hr_problem_set_rhs(&p, HR_RHS_RANDOM, NULL);
        p.rhs_seed = 11;
        hr_grid_options_default(&o);
        o.backend = gpu_mode ? HR_BACKEND_GPU : HR_BACKEND_CPU_SEQ;
        o.method = HR_METHOD_MG;
        o.tol = 0.0;
        o.max_iters = 4;
        compare("3-D 33x20x27 nnddnd mg 4 cycles, --rhs random:11", &p, &o);
        /* Dirichlet 0 on every face, one spacing: the uniform star, whose slabs hold no operator
         * arrays, only b from the seed; multigrid and CG to a tolerance */
        hr_problem_init_model(&p, 2, 101, 67, 1);
        hr_problem_set_rhs(&p, HR_RHS_RANDOM, NULL);
        p.rhs_seed = 5;
        hr_grid_options_default(&o);
        o.backend = gpu_mode ? HR_BACKEND_GPU : HR_BACKEND_CPU_SEQ;
        o.method = HR_METHOD_MG;
        o.tol = 1e-8;
        compare("2-D 101x67 dddd mg to 1e-8, --rhs random:5", &p, &o);
        if (!gpu_mode) {
            o.method = HR_METHOD_CG;
            o.tol = 1e-10;
            compare("2-D 101x67 dddd cg to 1e-10, --rhs random:5", &p, &o);
        }
    }
    /* GPU ranks keep a level cut down to 2^18 unknowns a rank (the backend's dist_min): a grid
     * whose first coarse level stays cut on up to four ranks, the uniform star's parity passes
     * and the gather into the whole level below by the ranks' transport */
    if (gpu_mode) {
        hr_problem_init_model(&p, 2, 2047, 4095, 1);
        hr_grid_options_default(&o);
        o.backend = HR_BACKEND_GPU;
        o.method = HR_METHOD_MG;
        o.kernel = "general";
        o.tol = 0.0;
        o.max_iters = 4;
        compare("2-D model 2047x4095 mg 4 cycles (a cut coarse level)", &p, &o);
    }
    /* slabs of one row (more ranks than half the rows): the level below is built whole on
     * every rank from the finest gathered; still the one-process run's bits */
    if (!gpu_mode) {
        const struct {
            int dim, n[3];
            const char *kinds;
        } thin[] = {
            {2, {40, 2 * size - 1, 1}, "dddd"}, {2, {33, size + 2, 1}, "ddpp"}, {3, {9, 8, size}, "dnppnd"}};
        for (size_t t = 0; t < sizeof thin / sizeof *thin; t++) {
            problem_n(&p, thin[t].dim, thin[t].n, thin[t].kinds, coef, f, face);
            char what[96];
            hr_grid_options_default(&o);
            o.method = t == 2 ? HR_METHOD_MGCG : HR_METHOD_MG;
            o.backend = HR_BACKEND_CPU_SEQ;
            o.tol = t == 2 ? 1e-9 : 0.0;
            o.max_iters = t == 2 ? 0 : 4;
            snprintf(what, sizeof what, "%d-D %dx%dx%d %s %s, slabs of one row", thin[t].dim, thin[t].n[0],
                     thin[t].n[1], thin[t].n[2], thin[t].kinds, t == 2 ? "mgcg to 1e-9" : "mg 4 cycles");
            compare(what, &p, &o);
        }
    }
    /* cpu-threads ranks (two threads each): the kernels' values do not depend on the team, so
     * still the one-process cpu-seq run's bits */
    if (!gpu_mode) {
        const int n3[3] = {40, 30, 48};
        problem_n(&p, 3, n3, "dnddpp", coef, f, face);
        for (int m = 0; m < 2; m++) {
            hr_grid_options_default(&o);
            o.backend = HR_BACKEND_CPU_THREADS;
            o.threads = 2;
            o.method = m == 0 ? HR_METHOD_MG : HR_METHOD_MGCG;
            o.tol = m == 0 ? 0.0 : 1e-9;
            o.max_iters = m == 0 ? 4 : 0;
            compare(m == 0 ? "3-D 40x30x48 dnddpp mg 4 cycles, cpu-threads ranks of 2 threads"
                           : "3-D 40x30x48 dnddpp mgcg to 1e-9, cpu-threads ranks of 2 threads",
                    &p, &o);
        }
    }
    free(coef), free(f), free(face);
    int any = bad;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any ? 1 : 0;
}
