/*
 * hypre baseline for bench/experiments/mg_bench.py: the same 5-point (2-D) / 7-point (3-D) Poisson
 * system as hetrelax (h^2-scaled: diagonal 4 or 6, neighbours -1, zero Dirichlet boundary,
 * b = h^2 f), the same right-hand side (random: splitmix64(seed) uniform in [-1, 1), x
 * fastest, as bench/drivers/mg_driver.c; or the centre spike), solved from x = 0 to the same
 * relative residual ||b - A x||_2 / ||b||_2 by CG preconditioned with one cycle of
 * hypre's structured multigrid PFMG (Struct interface) or its algebraic BoomerAMG
 * (IJ / ParCSR). MPI ranks own slabs of rows (2-D) or planes (3-D).
 *
 *   mpiexec -n 2 hypre_driver dim=2 n=1023 solver=pfmg|amg tol=1e-8 rhs=random|spike
 *           seed=2026 repeats=3 relax=2 pre=1 post=1
 *
 * Prints one JSON line (rank 0): setup and median solve time, iterations, true final
 * relative residual.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>
#include <HYPRE_struct_ls.h>

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef struct problem {
    int dim, n, lo, hi; /* this rank's slabs [lo, hi) of the outer axis (0-based) */
    long long plane;    /* points per slab */
    double *b;          /* this rank's right-hand side, x fastest */
} problem;

static void make_rhs(problem *p, const char *rhs, uint64_t seed)
{
    const double h = 1.0 / (p->n + 1.0);
    const long long local = (long long)(p->hi - p->lo) * p->plane;
    p->b = calloc((size_t)local, sizeof *p->b);
    if (!strcmp(rhs, "random")) {
        /* the global sequence, x fastest; skip to this rank's slabs */
        const long long start = (long long)p->lo * p->plane;
        for (long long i = 0; i < start; i++)
            splitmix64(&seed);
        for (long long i = 0; i < local; i++)
            p->b[i] = h * h * ((double)(splitmix64(&seed) >> 11) * 0x1.0p-52 - 1.0);
    } else { /* spike: h^2 f = 1 at the centre, (n + 1) / 2 one-based on every axis */
        const int c = (p->n + 1) / 2 - 1;
        if (c >= p->lo && c < p->hi) {
            long long x = (long long)(c - p->lo) * p->plane + (long long)c * p->n + c;
            if (p->dim == 2) x = (long long)(c - p->lo) * p->n + c;
            p->b[x] = 1.0;
        }
    }
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---------------------------------------------------------------- PFMG-CG (Struct) */

static void run_pfmg(problem *p, double tol, int repeats, int relax, int pre, int post, double *setup,
                     double *solve, int *iters, double *relres)
{
    const int d = p->dim, n = p->n;
    int ilo[3] = {0, 0, 0}, ihi[3] = {n - 1, n - 1, n - 1};
    ilo[d - 1] = p->lo;
    ihi[d - 1] = p->hi - 1;
    HYPRE_StructGrid grid;
    HYPRE_StructGridCreate(MPI_COMM_WORLD, d, &grid);
    HYPRE_StructGridSetExtents(grid, ilo, ihi);
    HYPRE_StructGridAssemble(grid);
    const int ns = 2 * d + 1;
    HYPRE_StructStencil st;
    HYPRE_StructStencilCreate(d, ns, &st);
    int off[7][3] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
    for (int e = 0; e < ns; e++)
        HYPRE_StructStencilSetElement(st, e, off[e]);
    HYPRE_StructMatrix A;
    HYPRE_StructMatrixCreate(MPI_COMM_WORLD, grid, st, &A);
    HYPRE_StructMatrixSetSymmetric(A, 0);
    HYPRE_StructMatrixInitialize(A);
    const long long local = (long long)(p->hi - p->lo) * p->plane;
    double *vals = malloc((size_t)local * ns * sizeof *vals);
    int entries[7] = {0, 1, 2, 3, 4, 5, 6};
    for (long long i = 0; i < local; i++) {
        vals[i * ns] = 2.0 * d;
        for (int e = 1; e < ns; e++)
            vals[i * ns + e] = -1.0;
    }
    HYPRE_StructMatrixSetBoxValues(A, ilo, ihi, ns, entries, vals);
    /* Dirichlet: no coupling across the physical boundary */
    for (int a = 0; a < d; a++)
        for (int side = 0; side < 2; side++) {
            int blo[3] = {ilo[0], ilo[1], ilo[2]}, bhi[3] = {ihi[0], ihi[1], ihi[2]};
            const int at = side ? n - 1 : 0;
            if (at < ilo[a] || at > ihi[a]) continue;
            blo[a] = bhi[a] = at;
            long long cnt = 1;
            for (int c = 0; c < d; c++)
                cnt *= bhi[c] - blo[c] + 1;
            double *z = calloc((size_t)cnt, sizeof *z);
            int e = 1 + 2 * a + side;
            HYPRE_StructMatrixSetBoxValues(A, blo, bhi, 1, &e, z);
            free(z);
        }
    HYPRE_StructMatrixAssemble(A);
    free(vals);
    HYPRE_StructVector b, x, r;
    HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &b);
    HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &x);
    HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &r);
    HYPRE_StructVectorInitialize(b);
    HYPRE_StructVectorInitialize(x);
    HYPRE_StructVectorInitialize(r);
    HYPRE_StructVectorSetBoxValues(b, ilo, ihi, p->b);
    HYPRE_StructVectorSetBoxValues(r, ilo, ihi, p->b);
    double *zero = calloc((size_t)local, sizeof *zero);
    HYPRE_StructVectorSetBoxValues(x, ilo, ihi, zero);
    HYPRE_StructVectorAssemble(b);
    HYPRE_StructVectorAssemble(x);
    HYPRE_StructVectorAssemble(r);

    HYPRE_StructSolver cg, pc;
    HYPRE_StructPCGCreate(MPI_COMM_WORLD, &cg);
    HYPRE_StructPCGSetTol(cg, tol);
    HYPRE_StructPCGSetTwoNorm(cg, 1);
    HYPRE_StructPCGSetMaxIter(cg, 500);
    HYPRE_StructPFMGCreate(MPI_COMM_WORLD, &pc);
    HYPRE_StructPFMGSetMaxIter(pc, 1);
    HYPRE_StructPFMGSetTol(pc, 0.0);
    HYPRE_StructPFMGSetZeroGuess(pc);
    HYPRE_StructPFMGSetRelaxType(pc, relax);
    HYPRE_StructPFMGSetNumPreRelax(pc, pre);
    HYPRE_StructPFMGSetNumPostRelax(pc, post);
    HYPRE_StructPCGSetPrecond(cg, HYPRE_StructPFMGSolve, HYPRE_StructPFMGSetup, pc);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    HYPRE_StructPCGSetup(cg, A, b, x);
    MPI_Barrier(MPI_COMM_WORLD);
    *setup = MPI_Wtime() - t0;
    double *ts = calloc((size_t)repeats, sizeof *ts);
    for (int k = repeats > 1 ? -1 : 0; k < repeats; k++) { /* k = -1: warm-up */
        HYPRE_StructVectorSetBoxValues(x, ilo, ihi, zero);
        HYPRE_StructVectorAssemble(x);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        HYPRE_StructPCGSolve(cg, A, b, x);
        MPI_Barrier(MPI_COMM_WORLD);
        if (k >= 0) ts[k] = MPI_Wtime() - t0;
    }
    qsort(ts, (size_t)repeats, sizeof *ts, cmp);
    *solve = ts[repeats / 2];
    HYPRE_StructPCGGetNumIterations(cg, iters);
    HYPRE_StructMatrixMatvec(-1.0, A, x, 1.0, r);
    /* the true residual, summed here (the Struct interface has no public inner product) */
    HYPRE_StructVectorGetBoxValues(r, ilo, ihi, zero);
    double sum[2] = {0.0, 0.0}, tot[2];
    for (long long i = 0; i < local; i++) {
        sum[0] += zero[i] * zero[i];
        sum[1] += p->b[i] * p->b[i];
    }
    MPI_Allreduce(sum, tot, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    *relres = sqrt(tot[0] / tot[1]);
    free(ts);
    free(zero);
    HYPRE_StructPFMGDestroy(pc);
    HYPRE_StructPCGDestroy(cg);
    HYPRE_StructVectorDestroy(b);
    HYPRE_StructVectorDestroy(x);
    HYPRE_StructVectorDestroy(r);
    HYPRE_StructMatrixDestroy(A);
    HYPRE_StructStencilDestroy(st);
    HYPRE_StructGridDestroy(grid);
}

/* ---------------------------------------------------------------- BoomerAMG-CG (IJ) */

static void run_amg(problem *p, double tol, int repeats, double *setup, double *solve, int *iters,
                    double *relres)
{
    const int d = p->dim, n = p->n;
    const HYPRE_BigInt first = (HYPRE_BigInt)p->lo * p->plane, last = (HYPRE_BigInt)p->hi * p->plane - 1;
    HYPRE_IJMatrix ij;
    HYPRE_IJMatrixCreate(MPI_COMM_WORLD, first, last, first, last, &ij);
    HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
    HYPRE_IJMatrixInitialize(ij);
    const long long local = last - first + 1;
    for (HYPRE_BigInt row = first; row <= last; row++) {
        const int j = (int)(row % n), i = (int)((row / n) % n),
                  k = d == 3 ? (int)(row / ((HYPRE_BigInt)n * n)) : 0;
        HYPRE_BigInt cols[7];
        double v[7];
        int nc = 0;
        cols[nc] = row;
        v[nc++] = 2.0 * d;
        const int at[3] = {j, i, k};
        const HYPRE_BigInt stride[3] = {1, n, (HYPRE_BigInt)n * n};
        for (int a = 0; a < d; a++) {
            if (at[a] > 0) {
                cols[nc] = row - stride[a];
                v[nc++] = -1.0;
            }
            if (at[a] < n - 1) {
                cols[nc] = row + stride[a];
                v[nc++] = -1.0;
            }
        }
        HYPRE_IJMatrixSetValues(ij, 1, &nc, &row, cols, v);
    }
    HYPRE_IJMatrixAssemble(ij);
    HYPRE_ParCSRMatrix A;
    HYPRE_IJMatrixGetObject(ij, (void **)&A);
    HYPRE_BigInt *idx = malloc((size_t)local * sizeof *idx);
    for (long long i = 0; i < local; i++)
        idx[i] = first + i;
    double *zero = calloc((size_t)local, sizeof *zero);
    HYPRE_IJVector vb, vx, vr;
    HYPRE_IJVector *vs[3] = {&vb, &vx, &vr};
    for (int q = 0; q < 3; q++) {
        HYPRE_IJVectorCreate(MPI_COMM_WORLD, first, last, vs[q]);
        HYPRE_IJVectorSetObjectType(*vs[q], HYPRE_PARCSR);
        HYPRE_IJVectorInitialize(*vs[q]);
        HYPRE_IJVectorSetValues(*vs[q], (int)local, idx, q == 1 ? zero : p->b);
        HYPRE_IJVectorAssemble(*vs[q]);
    }
    HYPRE_ParVector b, x, r;
    HYPRE_IJVectorGetObject(vb, (void **)&b);
    HYPRE_IJVectorGetObject(vx, (void **)&x);
    HYPRE_IJVectorGetObject(vr, (void **)&r);
    HYPRE_Solver cg, pc;
    HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &cg);
    HYPRE_PCGSetTol(cg, tol);
    HYPRE_PCGSetTwoNorm(cg, 1);
    HYPRE_PCGSetMaxIter(cg, 500);
    HYPRE_BoomerAMGCreate(&pc);
    HYPRE_BoomerAMGSetMaxIter(pc, 1);
    HYPRE_BoomerAMGSetTol(pc, 0.0);
    HYPRE_BoomerAMGSetCoarsenType(pc, 10); /* HMIS */
    HYPRE_BoomerAMGSetInterpType(pc, 6);   /* extended+i */
    HYPRE_BoomerAMGSetPMaxElmts(pc, 4);
    HYPRE_BoomerAMGSetStrongThreshold(pc, d == 3 ? 0.5 : 0.25);
    HYPRE_BoomerAMGSetRelaxType(pc, 6); /* symmetric hybrid Gauss-Seidel */
    HYPRE_PCGSetPrecond(cg, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve,
                        (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, pc);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    HYPRE_ParCSRPCGSetup(cg, A, b, x);
    MPI_Barrier(MPI_COMM_WORLD);
    *setup = MPI_Wtime() - t0;
    double *ts = calloc((size_t)repeats, sizeof *ts);
    for (int k = repeats > 1 ? -1 : 0; k < repeats; k++) { /* k = -1: warm-up */
        HYPRE_IJVectorSetValues(vx, (int)local, idx, zero);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        HYPRE_ParCSRPCGSolve(cg, A, b, x);
        MPI_Barrier(MPI_COMM_WORLD);
        if (k >= 0) ts[k] = MPI_Wtime() - t0;
    }
    qsort(ts, (size_t)repeats, sizeof *ts, cmp);
    *solve = ts[repeats / 2];
    HYPRE_PCGGetNumIterations(cg, iters);
    HYPRE_ParCSRMatrixMatvec(-1.0, A, x, 1.0, r);
    double rr, bb;
    HYPRE_ParVectorInnerProd(r, r, &rr);
    HYPRE_ParVectorInnerProd(b, b, &bb);
    *relres = sqrt(rr / bb);
    free(ts);
    free(idx);
    free(zero);
    HYPRE_BoomerAMGDestroy(pc);
    HYPRE_ParCSRPCGDestroy(cg);
    HYPRE_IJVectorDestroy(vb);
    HYPRE_IJVectorDestroy(vx);
    HYPRE_IJVectorDestroy(vr);
    HYPRE_IJMatrixDestroy(ij);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    problem p = {2, 1023, 0, 0, 0, NULL};
    const char *solver = "pfmg", *rhs = "random";
    double tol = 1e-8;
    int repeats = 3, relax = 2, pre = 1, post = 1;
    uint64_t seed = 2026;
    for (int a = 1; a < argc; a++) {
        const char *v = strchr(argv[a], '=');
        if (!v) continue;
        v++;
        if (!strncmp(argv[a], "dim=", 4))
            p.dim = atoi(v);
        else if (!strncmp(argv[a], "n=", 2))
            p.n = atoi(v);
        else if (!strncmp(argv[a], "solver=", 7))
            solver = v;
        else if (!strncmp(argv[a], "tol=", 4))
            tol = atof(v);
        else if (!strncmp(argv[a], "rhs=", 4))
            rhs = v;
        else if (!strncmp(argv[a], "seed=", 5))
            seed = strtoull(v, NULL, 10);
        else if (!strncmp(argv[a], "repeats=", 8))
            repeats = atoi(v);
        else if (!strncmp(argv[a], "relax=", 6))
            relax = atoi(v);
        else if (!strncmp(argv[a], "pre=", 4))
            pre = atoi(v);
        else if (!strncmp(argv[a], "post=", 5))
            post = atoi(v);
    }
    if (repeats < 1) repeats = 1;
    p.plane = p.dim == 3 ? (long long)p.n * p.n : p.n;
    p.lo = (int)((long long)p.n * rank / size);
    p.hi = (int)((long long)p.n * (rank + 1) / size);
    make_rhs(&p, rhs, seed);
    HYPRE_Init();
    double setup = 0, solve = 0, rel = 0;
    int iters = 0;
    if (!strcmp(solver, "amg"))
        run_amg(&p, tol, repeats, &setup, &solve, &iters, &rel);
    else
        run_pfmg(&p, tol, repeats, relax, pre, post, &setup, &solve, &iters, &rel);
    if (rank == 0) {
        const double pts = (double)p.n * p.n * (p.dim == 3 ? p.n : 1);
        printf("{\"solver\": \"hypre-%s-cg\", \"dim\": %d, \"n\": %d, \"ranks\": %d, \"rhs\": \"%s\", "
               "\"tol\": %g, "
               "\"iterations\": %d, \"setup_s\": %.6e, \"time_s\": %.6e, \"repeats\": %d, "
               "\"ns_per_unknown\": %.4f, "
               "\"relative_residual\": %.6e, \"relax\": %d, \"pre\": %d, \"post\": %d}\n",
               solver, p.dim, p.n, size, rhs, tol, iters, setup, solve, repeats, 1e9 * solve / pts, rel,
               relax, pre, post);
    }
    free(p.b);
    HYPRE_Finalize();
    MPI_Finalize();
    return 0;
}
