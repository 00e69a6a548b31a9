/* The decomposed solver with GPU subdomains in one process:
 * every subdomain on a device (all on device 0, or spread over GPUS GPUs with peer copies),
 * solutions bitwise equal to the single-process cpu-seq run for 2-D and 3-D, float and
 * double, ghost 1 (overlapped on streams, and not) and ghost > 1, even and uneven splits,
 * splits along x (the box kernel) and along y/z (the tuned region kernels).
 *   test_decomp_gpu [GPUS [generic]]   GPUS >= 1 (default 1); exit 77 with fewer GPUs present;
 *   generic: every box through the one-point-per-thread kernel (tuning.dgpu_generic). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/decomp/dsolver.h"

typedef struct gcase {
    int dim, nx, ny, nz;
    int parts[3];
    int ghost;
    double omega;
    hr_rhs rhs;
    hr_init init;
    hr_precision prec;
    long iters;
} gcase;

static int failures;
static int generic; /* tuning.dgpu_generic */

static void check(const gcase *c, int gpus)
{
    hr_options o;
    hr_options_default(&o);
    o.tuning.dgpu_generic = generic ? HR_TUNE_ON : 0;
    o.dim = c->dim;
    o.nx = c->nx;
    o.ny = c->ny;
    o.nz = c->dim == 3 ? c->nz : 0;
    o.iters = c->iters;
    o.omega = c->omega;
    o.rhs = c->rhs;
    o.init = c->init;
    o.precision = c->prec;
    o.boundary = 0.5;
    o.backend = HR_BACKEND_CPU_SEQ;
    o.tol = 1e-30;
    o.check_every = 7; /* residual checks cut rounds short of the ghost width */
    const size_t pts = (size_t)c->nx * c->ny * (c->dim == 3 ? c->nz : 1);
    double *vals = NULL;
    if (c->rhs == HR_RHS_ARRAY) {
        vals = malloc(pts * sizeof *vals);
        for (size_t x = 0; x < pts; x++)
            vals[x] = sin(0.37 * (double)x) + 0.1;
        o.rhs_values = vals;
    }
    hr_solver *ref;
    hr_result rr, dr;
    double *want = malloc(pts * sizeof *want), *got = malloc(pts * sizeof *got);
    if (hr_solver_create(&o, &ref) != HR_OK || hr_solver_run(ref, &rr) != HR_OK ||
        hr_solver_solution(ref, HR_PREC_DOUBLE, want, pts) != HR_OK) {
        printf("FAIL: reference run\n");
        failures++;
        return;
    }
    for (int overlap = 0; overlap < 2; overlap++) {
        hr_options g = o;
        g.backend = HR_BACKEND_GPU;
        g.gpus = gpus;
        hr_dsolver *ds;
        char err[256] = "";
        hr_status st = hri_inproc_solver_create(&g, c->parts, c->ghost, &ds, err, sizeof err);
        char what[200];
        snprintf(what, sizeof what, "%d-D %dx%dx%d parts %dx%dx%d ghost %d omega %g %s overlap %d gpus %d",
                 c->dim, c->nx, c->ny, c->nz, c->parts[0], c->parts[1], c->parts[2], c->ghost, c->omega,
                 c->prec == HR_PREC_DOUBLE ? "double" : "float", overlap, gpus);
        if (st != HR_OK) {
            printf("FAIL: %s: create: %s: %s\n", what, hr_status_string(st), err);
            failures++;
            continue;
        }
        ds->overlap = overlap;
        st = hri_dsolver_run(ds, &dr);
        for (size_t x = 0; x < pts; x++)
            got[x] = NAN;
        hri_dsolver_own_to_global(ds, HR_PREC_DOUBLE, got);
        int bad = st != HR_OK;
        if (bad) printf("FAIL: %s: run: %s: %s\n", what, hr_status_string(st), ds->err);
        if (!bad && memcmp(want, got, pts * sizeof *got) != 0) {
            size_t x = 0;
            while (x < pts && memcmp(&want[x], &got[x], sizeof *got) == 0)
                x++;
            printf("FAIL: %s: first difference at %zu: %.17g vs %.17g\n", what, x, want[x], got[x]);
            bad = 1;
        }
        if (!bad && dr.iterations != rr.iterations) {
            printf("FAIL: %s: %ld iterations, cpu-seq %ld\n", what, dr.iterations, rr.iterations);
            bad = 1;
        }
        /* the residual is summed in another order (and on the device): equal to rounding */
        if (!bad &&
            !(fabs(dr.relative_residual - rr.relative_residual) <= 1e-9 * fabs(rr.relative_residual))) {
            printf("FAIL: %s: residual %.17g vs cpu-seq %.17g\n", what, dr.relative_residual,
                   rr.relative_residual);
            bad = 1;
        }
        /* the overlapped schedule's timers: a split of the exchange, all finite */
        const hr_exchange_times *t = &ds->xt;
        if (!bad && overlap && c->ghost == 1 &&
            !(t->hidden >= 0 && t->wait >= 0 && t->compute > 0 && t->rounds >= c->iters)) {
            printf("FAIL: %s: overlap timers hidden %g wait %g compute %g rounds %ld\n", what, t->hidden,
                   t->wait, t->compute, t->rounds);
            bad = 1;
        }
        if (!bad) printf("ok: %s (%s)\n", what, dr.device_name);
        failures += bad;
        hri_dsolver_free(ds);
    }
    hr_solver_free(ref);
    free(want);
    free(got);
    free(vals);
}

int main(int argc, char **argv)
{
    const int gpus = argc > 1 ? atoi(argv[1]) : 1;
    generic = argc > 2 && strcmp(argv[2], "generic") == 0;
    const int have = hri_dsolver_gpu_count();
    if (have < gpus || gpus < 1) {
        printf("skipped: %d GPU(s) needed, %d present\n", gpus, have);
        return 77;
    }
    static const gcase cases[] = {
        /* 2-D: slabs along y (tuned rows), x splits (box kernel), uneven, ghost 1..3 */
        {2, 37, 41, 0, {1, 2, 1}, 1, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_SINGLE, 30},
        {2, 37, 41, 0, {1, 3, 1}, 2, 1.0, HR_RHS_SPIKE, HR_INIT_SINE, HR_PREC_DOUBLE, 30},
        {2, 37, 41, 0, {2, 1, 1}, 1, 0.8, HR_RHS_MANUFACTURED, HR_INIT_ZERO, HR_PREC_SINGLE, 30},
        {2, 37, 41, 0, {2, 2, 1}, 2, 1.0, HR_RHS_ARRAY, HR_INIT_ZERO, HR_PREC_DOUBLE, 30},
        {2, 130, 67, 0, {3, 2, 1}, 3, 1.2, HR_RHS_SPIKE, HR_INIT_SINE, HR_PREC_SINGLE, 25},
        {2, 9, 9, 0, {2, 2, 1}, 3, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_DOUBLE, 12}, /* spike on an edge
                                                                                          */
        /* 3-D: slabs along z (tuned planes), pencils, cubes, uneven, ghost 1..2 */
        {3, 21, 19, 23, {1, 1, 2}, 1, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_SINGLE, 20},
        {3, 21, 19, 23, {1, 1, 3}, 2, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_DOUBLE, 20},
        {3, 21, 19, 23, {1, 2, 2}, 1, 0.7, HR_RHS_MANUFACTURED, HR_INIT_SINE, HR_PREC_DOUBLE, 20},
        {3, 21, 19, 23, {2, 2, 2}, 2, 1.0, HR_RHS_ARRAY, HR_INIT_ZERO, HR_PREC_SINGLE, 20},
        {3, 9, 9, 9, {2, 2, 2}, 2, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_DOUBLE, 12}, /* spike on an edge
                                                                                          */
        {3, 40, 33, 35, {1, 1, 2}, 1, 1.0, HR_RHS_ZERO, HR_INIT_SINE, HR_PREC_DOUBLE, 15},
        {3, 37, 18, 20, {2, 1, 1}, 1, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_SINGLE, 15}, /* x split,
                                                                                               overlap */
        {3, 37, 18, 20, {3, 1, 1}, 1, 0.9, HR_RHS_SPIKE, HR_INIT_SINE, HR_PREC_DOUBLE, 15},
        /* four parts (one per GPU of a 4-GPU machine): slabs, x splits, 2 x 2 */
        {2, 61, 43, 0, {1, 4, 1}, 1, 1.0, HR_RHS_SPIKE, HR_INIT_SINE, HR_PREC_SINGLE, 25},
        {2, 61, 43, 0, {4, 1, 1}, 2, 1.0, HR_RHS_MANUFACTURED, HR_INIT_ZERO, HR_PREC_DOUBLE, 25},
        {3, 23, 21, 45, {1, 1, 4}, 1, 1.0, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_SINGLE, 20},
        {3, 23, 21, 45, {1, 2, 2}, 1, 1.0, HR_RHS_ARRAY, HR_INIT_SINE, HR_PREC_DOUBLE, 20},
        {3, 45, 21, 23, {4, 1, 1}, 2, 0.8, HR_RHS_SPIKE, HR_INIT_ZERO, HR_PREC_SINGLE, 20},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        check(&cases[c], gpus);
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
