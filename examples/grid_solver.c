/*
 * Your own problem through the one structured-grid handle: -div(grad u) = f on a 2 x 1 box
 * with 300 x 150 unknowns (any size), u = 1 on the left face, u = 0 on the right, no flux
 * through the top and bottom. Multigrid to 1e-10, set up once and solved twice: first with
 * f = 0 (the solution then lies between the boundary values, which the program checks), then
 * with f = 1 on the same handle. Uses only the public header; the placement is the best one
 * present (a GPU if there is one, else every CPU core).
 */
#include <hetrelax/hetrelax.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    hr_problem p;
    if (hr_problem_init_model(&p, 2, 300, 150, 0) != HR_OK || hr_problem_set_lengths(&p, 2.0, 1.0, 0.0) != HR_OK ||
        hr_problem_set_bc(&p, HR_FACE_X_MINUS, HR_BC_DIRICHLET, 1.0, NULL) != HR_OK ||
        hr_problem_set_bc(&p, HR_FACE_X_PLUS, HR_BC_DIRICHLET, 0.0, NULL) != HR_OK ||
        hr_problem_set_bc(&p, HR_FACE_Y_MINUS, HR_BC_NEUMANN, 0.0, NULL) != HR_OK ||
        hr_problem_set_bc(&p, HR_FACE_Y_PLUS, HR_BC_NEUMANN, 0.0, NULL) != HR_OK ||
        hr_problem_set_rhs(&p, HR_RHS_ZERO, NULL) != HR_OK) {
        fprintf(stderr, "problem: %s\n", hr_last_error());
        return 1;
    }
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.method = HR_METHOD_MG;
    o.tol = 1e-10;

    hr_grid_solver *s = NULL;
    if (hr_grid_solver_create(&p, &o, &s) != HR_OK) {
        fprintf(stderr, "create: %s\n", hr_last_error());
        return 1;
    }
    const size_t n = hr_problem_unknowns(&p);
    double *u = malloc(n * sizeof *u), *f = malloc(n * sizeof *f);
    int ok = u && f;
    hr_result r;
    if (ok && hr_grid_solver_solve(s, NULL, NULL, &r) == HR_OK && r.reason == HR_REASON_CONVERGED &&
        hr_grid_solver_solution(s, HR_PREC_DOUBLE, u, n) == HR_OK) {
        double lo = u[0], hi = u[0];
        for (size_t i = 1; i < n; i++) {
            lo = u[i] < lo ? u[i] : lo;
            hi = u[i] > hi ? u[i] : hi;
        }
        printf("f = 0: %ld cycles, relative residual %.2e, u in [%.6f, %.6f]\n", r.iterations,
               r.relative_residual, lo, hi);
        ok = lo > 0.0 && hi < 1.0; /* strictly between the boundary values */
    } else {
        fprintf(stderr, "first solve: %s\n", hr_grid_solver_last_error(s));
        ok = 0;
    }
    if (ok) {
        for (size_t i = 0; i < n; i++)
            f[i] = 1.0;
        ok = hr_grid_solver_solve(s, f, NULL, &r) == HR_OK && r.reason == HR_REASON_CONVERGED;
        printf("f = 1: %ld cycles, relative residual %.2e%s\n", r.iterations, r.relative_residual,
               ok ? "" : " (not converged)");
    }
    free(u);
    free(f);
    hr_grid_solver_free(s);
    return ok ? 0 : 1;
}
