/*
 * PETSc's multigrid on hetrelax's model problem, the baseline a CPU user would pick instead
 * (bench/experiments/mg_petsc.py runs it against hetrelax's multigrid on the same cores).
 *
 *   mpiexec -n P petsc_driver dim=2 n=4095 pc=mg|gamg tol=1e-8 repeats=3 seed=2026 [PETSc options]
 *
 * The system is bench/drivers/mg_driver.c's: A u = h^2 f, A the 5-point (2-D) / 7-point (3-D)
 * stencil with diagonal 4 / 6 and -1 off the diagonal on the n^dim interior points, zero
 * Dirichlet boundary, h = 1 / (n + 1), f uniform in [-1, 1) from splitmix64(seed) with x
 * fastest. A DMDA holds the grid with its boundary points, n + 2 per axis (PETSc's vertex
 * hierarchy coarsens 2^k + 1 points all the way down), P ranks in PETSc's split; a boundary
 * point's row is its diagonal alone with b = 0 (decoupled, so A stays symmetric and the
 * boundary rows add nothing to a residual). The solver is CG on the
 * unpreconditioned residual to relative tolerance `tol` from a zero guess, preconditioned by
 *   pc=mg    geometric multigrid on the DMDA's hierarchy (Galerkin coarse operators,
 *            PETSc's default smoother: Chebyshev on Jacobi, two sweeps), levels while each
 *            axis keeps at least 3 points;
 *   pc=gamg  PETSc's algebraic multigrid (smoothed aggregation).
 * Any PETSc option given after the key=value arguments overrides these (-ksp_*, -pc_*,
 * -mg_levels_*). Timing: KSPSetUp once (the set-up), then `repeats` solves from zero, the
 * median reported; the true relative residual of the last solve is recomputed. One JSON line.
 */
#include <math.h>
#include <petscdmda.h>
#include <petscksp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next_value(uint64_t i, uint64_t seed)
{
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull; /* splitmix64's step i + 1 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int dim = 2, n = 1023, repeats = 3;
    double tol = 1e-8;
    uint64_t seed = 2026;
    const char *pc_kind = "mg";
    int first_petsc = argc;
    for (int a = 1; a < argc; a++) { /* key=value first, PETSc options after */
        if (argv[a][0] == '-') {
            first_petsc = a;
            break;
        }
        const char *eq = strchr(argv[a], '=');
        if (!eq) {
            fprintf(stderr, "petsc_driver: expected key=value, got '%s'\n", argv[a]);
            return 2;
        }
        const size_t k = (size_t)(eq - argv[a]);
        const char *v = eq + 1;
        if (!strncmp(argv[a], "dim", k) && k == 3)
            dim = atoi(v);
        else if (!strncmp(argv[a], "n", k) && k == 1)
            n = atoi(v);
        else if (!strncmp(argv[a], "pc", k) && k == 2)
            pc_kind = v;
        else if (!strncmp(argv[a], "tol", k) && k == 3)
            tol = atof(v);
        else if (!strncmp(argv[a], "repeats", k) && k == 7)
            repeats = atoi(v);
        else if (!strncmp(argv[a], "seed", k) && k == 4)
            seed = strtoull(v, NULL, 10);
        else {
            fprintf(stderr, "petsc_driver: unknown key in '%s'\n", argv[a]);
            return 2;
        }
    }
    if ((dim != 2 && dim != 3) || n < 3 || repeats < 1 || !(tol > 0.0) ||
        (strcmp(pc_kind, "mg") && strcmp(pc_kind, "gamg"))) {
        fprintf(stderr, "petsc_driver: dim 2 or 3, n >= 3, repeats >= 1, tol > 0, pc mg or gamg\n");
        return 2;
    }
    /* PETSc reads its own options from the rest of the command line */
    int pargc = 1 + (argc - first_petsc);
    char **pargv = malloc((size_t)(pargc + 1) * sizeof *pargv);
    pargv[0] = argv[0];
    for (int a = first_petsc; a < argc; a++)
        pargv[1 + a - first_petsc] = argv[a];
    pargv[pargc] = NULL;
    PetscCall(PetscInitialize(&pargc, &pargv, NULL, NULL));
    const int N = n + 2; /* with the boundary points */
    int levels = 1;
    for (int m = N; (m - 1) % 2 == 0 && (m - 1) / 2 + 1 >= 3 && levels < 30; m = (m - 1) / 2 + 1)
        levels++;
    char lv[16];
    snprintf(lv, sizeof lv, "%d", levels);
    /* this driver's defaults, under the user's options (PetscOptionsHasName: the user's win) */
    const char *defaults[][2] = {{"-ksp_type", "cg"},
                                 {"-ksp_norm_type", "unpreconditioned"},
                                 {"-pc_type", pc_kind},
                                 {"-pc_mg_levels", !strcmp(pc_kind, "mg") ? lv : NULL},
                                 {"-pc_mg_galerkin", !strcmp(pc_kind, "mg") ? "both" : NULL}};
    for (size_t d = 0; d < sizeof defaults / sizeof defaults[0]; d++) {
        PetscBool has;
        if (!defaults[d][1]) continue;
        PetscCall(PetscOptionsHasName(NULL, NULL, defaults[d][0], &has));
        if (!has) PetscCall(PetscOptionsSetValue(NULL, defaults[d][0], defaults[d][1]));
    }
    DM da;
    if (dim == 2)
        PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, N, N,
                               PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
    else
        PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE,
                               DMDA_STENCIL_STAR, N, N, N, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL,
                               NULL, NULL, &da));
    PetscCall(DMSetFromOptions(da));
    PetscCall(DMSetUp(da));
    Mat A;
    Vec x, b, r;
    PetscCall(DMCreateMatrix(da, &A));
    PetscCall(DMCreateGlobalVector(da, &x));
    PetscCall(VecDuplicate(x, &b));
    PetscCall(VecDuplicate(x, &r));
    const double h2 = 1.0 / ((double)(n + 1) * (double)(n + 1));
    PetscInt xs, ys, zs, xm, ym, zm;
    PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
    if (dim == 2) zs = 0, zm = 1;
    const double diag = dim == 3 ? 6.0 : 4.0;
    const double t_asm = MPI_Wtime();
    for (PetscInt k = zs; k < zs + zm; k++)
        for (PetscInt j = ys; j < ys + ym; j++)
            for (PetscInt i = xs; i < xs + xm; i++) {
                MatStencil row = {.k = k, .j = j, .i = i}, col[7];
                PetscScalar v[7];
                int c = 0;
                col[c] = row, v[c++] = diag;
                const int edge = i == 0 || i == N - 1 || j == 0 || j == N - 1 || (dim == 3 && (k == 0 || k == N - 1));
                if (edge) { /* a boundary point: u = 0, decoupled */
                    PetscCall(MatSetValuesStencil(A, 1, &row, 1, col, v, INSERT_VALUES));
                    continue;
                }
                const PetscInt nb[6][3] = {{i - 1, j, k}, {i + 1, j, k}, {i, j - 1, k},
                                           {i, j + 1, k}, {i, j, k - 1}, {i, j, k + 1}};
                for (int q = 0; q < 2 * dim; q++) {
                    const PetscInt ni = nb[q][0], nj = nb[q][1], nk = nb[q][2];
                    if (ni < 1 || ni > n || nj < 1 || nj > n || (dim == 3 && (nk < 1 || nk > n))) continue;
                    col[c].i = ni, col[c].j = nj, col[c].k = nk, col[c].c = 0;
                    v[c++] = -1.0;
                }
                PetscCall(MatSetValuesStencil(A, 1, &row, c, col, v, INSERT_VALUES));
            }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    /* b = h^2 f in the natural (x fastest) numbering of the whole grid */
    if (dim == 2) {
        PetscScalar **bv;
        PetscCall(DMDAVecGetArray(da, b, &bv));
        for (PetscInt j = ys; j < ys + ym; j++)
            for (PetscInt i = xs; i < xs + xm; i++) {
                const int in = i >= 1 && i <= n && j >= 1 && j <= n;
                const uint64_t q = (uint64_t)(j - 1) * (uint64_t)n + (uint64_t)(i - 1);
                bv[j][i] = in ? h2 * ((double)(next_value(q, seed) >> 11) * 0x1.0p-52 - 1.0) : 0.0;
            }
        PetscCall(DMDAVecRestoreArray(da, b, &bv));
    } else {
        PetscScalar ***bv;
        PetscCall(DMDAVecGetArray(da, b, &bv));
        for (PetscInt k = zs; k < zs + zm; k++)
            for (PetscInt j = ys; j < ys + ym; j++)
                for (PetscInt i = xs; i < xs + xm; i++) {
                    const int in = i >= 1 && i <= n && j >= 1 && j <= n && k >= 1 && k <= n;
                    const uint64_t q =
                        ((uint64_t)(k - 1) * (uint64_t)n + (uint64_t)(j - 1)) * (uint64_t)n + (uint64_t)(i - 1);
                    bv[k][j][i] = in ? h2 * ((double)(next_value(q, seed) >> 11) * 0x1.0p-52 - 1.0) : 0.0;
                }
        PetscCall(DMDAVecRestoreArray(da, b, &bv));
    }
    const double asm_s = MPI_Wtime() - t_asm;
    KSP ksp;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetDM(ksp, da));
    PetscCall(KSPSetDMActive(ksp, PETSC_FALSE)); /* the DM gives the hierarchy; A and b are ours */
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetTolerances(ksp, tol, 0.0, PETSC_DEFAULT, 10000));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(MPI_Barrier(PETSC_COMM_WORLD));
    const double t_setup = MPI_Wtime();
    PetscCall(KSPSetUp(ksp));
    PetscCall(MPI_Barrier(PETSC_COMM_WORLD));
    const double setup_s = MPI_Wtime() - t_setup;
    double *times = calloc((size_t)repeats, sizeof *times);
    PetscInt its = 0;
    KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
    for (int rep = 0; rep < repeats; rep++) {
        PetscCall(VecSet(x, 0.0));
        PetscCall(MPI_Barrier(PETSC_COMM_WORLD));
        const double t0 = MPI_Wtime();
        PetscCall(KSPSolve(ksp, b, x));
        PetscCall(MPI_Barrier(PETSC_COMM_WORLD));
        times[rep] = MPI_Wtime() - t0;
        PetscCall(KSPGetIterationNumber(ksp, &its));
        PetscCall(KSPGetConvergedReason(ksp, &reason));
    }
    /* the true relative residual ||b - A x|| / ||b|| */
    PetscReal bn, rn;
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &rn));
    PetscCall(VecNorm(b, NORM_2, &bn));
    const double first = times[0];
    qsort(times, (size_t)repeats, sizeof *times, cmp_double);
    PetscMPIInt size;
    PetscCall(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    const double points = pow((double)n, dim);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "{\"solver\": \"petsc\", \"pc\": \"%s\", \"dim\": %d, \"n\": %d, \"ranks\": %d, "
                          "\"levels\": %d, \"tol\": %g, \"iterations\": %d, \"converged\": %s, "
                          "\"time_s\": %.6e, \"first_s\": %.6e, \"setup_s\": %.6e, \"assembly_s\": %.6e, "
                          "\"ns_per_unknown\": %.4f, \"relative_residual\": %.6e, \"repeats\": %d}\n",
                          pc_kind, dim, n, (int)size, !strcmp(pc_kind, "mg") ? levels : 0, tol, (int)its,
                          reason > 0 ? "true" : "false", times[repeats / 2], first, setup_s, asm_s,
                          1e9 * times[repeats / 2] / points, (double)(rn / bn), repeats));
    free(times);
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&r));
    PetscCall(MatDestroy(&A));
    PetscCall(DMDestroy(&da));
    PetscCall(PetscFinalize());
    free(pargv);
    return reason > 0 ? 0 : 1;
}
