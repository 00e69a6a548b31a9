/*
 * The smallest complete use of the library: solve the manufactured problem on a
 * 63 x 63 grid to a tolerance, watching the residual, and check the error.
 * Uses only the public header.
 */
#include <hetrelax/hetrelax.h>
#include <stdio.h>
#include <stdlib.h>

static int show(long it, double res, void *user)
{
    (void)user;
    printf("sweep %6ld  residual %.3e\n", it, res);
    return 0;
}

int main(void)
{
    hr_options o;
    hr_options_default(&o);
    o.n = 63;
    o.precision = HR_PREC_DOUBLE;
    o.rhs = HR_RHS_MANUFACTURED;
    o.backend = HR_BACKEND_CPU_SEQ;
    o.iters = 100000;
    o.tol = 1e-10;
    o.check_every = 500;
    o.monitor_every = 2000;
    o.monitor = show;

    hr_solver *s = NULL;
    hr_status st = hr_solver_create(&o, &s);
    if (st != HR_OK) {
        fprintf(stderr, "create: %s\n", hr_status_string(st));
        return 1;
    }
    hr_result r;
    st = hr_solver_run(s, &r);
    hr_solver_free(s);
    if (st != HR_OK) {
        fprintf(stderr, "run: %s\n", hr_status_string(st));
        return 1;
    }
    printf("hetrelax %s: %ld sweeps, %s, residual %.3e, max error %.3e\n", hr_version_string(), r.iterations,
           hr_reason_string(r.reason), r.relative_residual, r.max_error);
    /* h = 1/64: the O(h^2) discretisation error is about 2e-4 */
    return (r.reason == HR_REASON_CONVERGED && r.max_error < 1e-3) ? 0 : 1;
}
