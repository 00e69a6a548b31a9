/* The hybrid backend with the GPU placement: bitwise equal to cpu-seq for splits from
 * GPU-only to CPU-only, 2-D and 3-D, fp32 and fp64, ghost 1 and 2, both schedules; the
 * auto split never refuses to run. Exit 77 (skipped) without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/hybrid.h"

static int failures;

static void *solve(const hr_options *o, hr_result *r)
{
    hr_solver *s = NULL;
    if (hr_solver_create(o, &s) != HR_OK) {
        fprintf(stderr, "create: %s\n", hr_last_error());
        return NULL;
    }
    if (hr_solver_run(s, r) != HR_OK) {
        fprintf(stderr, "run: %s\n", hr_solver_last_error(s));
        hr_solver_free(s);
        return NULL;
    }
    const size_t n = (size_t)r->nx * r->ny * r->nz;
    void *u = malloc(n * 8);
    hr_solver_solution(s, o->precision, u, n);
    hr_solver_free(s);
    return u;
}

int main(void)
{
    hr_sysinfo si;
    if (hr_sysinfo_get(&si) != HR_OK || si.gpus < 1) {
        printf("no GPU: skipped\n");
        return 77;
    }
    for (int dim = 2; dim <= 3; dim++)
        for (int prec = 0; prec < 2; prec++) {
            hr_options ref;
            hr_options_default(&ref);
            ref.dim = dim;
            ref.nx = dim == 3 ? 67 : 301;
            ref.ny = dim == 3 ? 45 : 259;
            ref.nz = dim == 3 ? 83 : 0;
            ref.iters = 23;
            ref.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
            ref.rhs = prec ? HR_RHS_MANUFACTURED : HR_RHS_SPIKE;
            ref.init = HR_INIT_SINE;
            ref.backend = HR_BACKEND_CPU_SEQ;
            hr_result r0;
            void *want = solve(&ref, &r0);
            const size_t bytes = (size_t)r0.nx * r0.ny * r0.nz * (prec ? 8 : 4);
            const int n = dim == 3 ? ref.nz : ref.ny;
            const int rows[] = {0, 1, 2, 3, n / 10, n / 2, n - 2, n - 1, n};
            for (size_t q = 0; q < sizeof rows / sizeof rows[0]; q++)
                for (int g = 1; g <= 2; g++)
                    for (int sched = 0; sched < 2; sched++) {
                        if (rows[q] > 0 && rows[q] < n && (rows[q] < g || n - rows[q] < g)) continue;
                        hr_options o = ref;
                        o.backend = HR_BACKEND_HYBRID;
                        o.split = (double)rows[q] / n;
                        o.split_ghost = g;
                        o.split_schedule = sched;
                        hr_result r;
                        void *got = solve(&o, &r);
                        if (!got || memcmp(got, want, bytes) != 0) {
                            printf("FAIL %d-D %s rows %d/%d ghost %d %s\n", dim, prec ? "fp64" : "fp32",
                                   rows[q], n, g, sched ? "naive" : "nested");
                            failures++;
                        }
                        free(got);
                    }
            hr_options o = ref;
            o.backend = HR_BACKEND_HYBRID;
            o.split = -1;
            hr_result r;
            void *got = solve(&o, &r);
            if (!got || memcmp(got, want, bytes) != 0) {
                printf("FAIL %d-D auto split\n", dim);
                failures++;
            }
            free(got);
            free(want);
        }
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
