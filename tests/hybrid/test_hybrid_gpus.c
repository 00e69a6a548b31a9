/* --gpus N (hr_options.gpus): the chain of N GPU parts bitwise equal to cpu-seq, N = 2 (and
 * every GPU present, up to 4), 2-D and 3-D, fp32 and fp64, ghost 1 and 2, uneven slabs.
 * Exit 77 (skipped) with fewer than 2 GPUs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/hetrelax.h"

static void *solve(const hr_options *o, hr_result *r, hr_config *cfg)
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
    if (cfg) hr_solver_config(s, cfg);
    const size_t n = (size_t)r->nx * r->ny * r->nz;
    void *u = malloc(n * 8);
    if (u && hr_solver_solution(s, o->precision, u, n) != HR_OK) {
        free(u);
        u = NULL;
    }
    hr_solver_free(s);
    return u;
}

int main(void)
{
    hr_sysinfo si;
    if (hr_sysinfo_get(&si) != HR_OK || si.gpus < 2) {
        printf("fewer than 2 GPUs: skipped\n");
        return 77;
    }
    const int most = si.gpus < 4 ? si.gpus : 4;
    int failures = 0, runs = 0;
    for (int dim = 2; dim <= 3; dim++)
        for (int prec = 0; prec < 2; prec++) {
            hr_options ref;
            hr_options_default(&ref);
            ref.dim = dim;
            ref.nx = dim == 3 ? 67 : 301;
            ref.ny = dim == 3 ? 45 : 257; /* odd extents: uneven slabs */
            ref.nz = dim == 3 ? 53 : 0;
            ref.iters = 37;
            ref.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
            ref.init = HR_INIT_SINE;
            ref.backend = HR_BACKEND_CPU_SEQ;
            hr_result r0;
            void *a = solve(&ref, &r0, NULL);
            if (!a) return 1;
            const size_t bytes = (size_t)r0.nx * r0.ny * r0.nz * (prec ? 8 : 4);
            for (int n = 2; n <= most; n += most > 2 ? most - 2 : 1)
                for (int g = 1; g <= 2; g++) {
                    hr_options o = ref;
                    o.backend = HR_BACKEND_HYBRID;
                    o.split_second = HR_SPLIT_GPU;
                    o.gpus = n;
                    o.split_ghost = g;
                    hr_result r1;
                    hr_config cfg;
                    void *b = solve(&o, &r1, &cfg);
                    runs++;
                    const int same = b && memcmp(a, b, bytes) == 0 && r1.iterations == r0.iterations;
                    if (!same || cfg.gpus != n) {
                        fprintf(stderr, "%d-D %s --gpus %d ghost %d: %s\n", dim, prec ? "fp64" : "fp32", n, g,
                                !b      ? "failed"
                                : !same ? "not bitwise equal to cpu-seq"
                                        : "config.gpus wrong");
                        failures++;
                    }
                    free(b);
                }
            free(a);
        }
    printf("%d runs on up to %d GPUs, %d failed\n", runs, most, failures);
    return failures ? 1 : 0;
}
