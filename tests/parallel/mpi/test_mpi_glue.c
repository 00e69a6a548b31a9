/*
 * The command glue (tools/mpi_glue.c) in a stand-in grid command: flags parsed with the
 * command's flag framework, the decomposed run, rank-0 output, one agreed exit status.
 *   mpiexec -n P test_mpi_glue [--n N] [--dim D] [--iters T] [--decomp AxB[xC]] [--ghost G]
 *                              [--leave-early R [--leave-status S]]
 * Prints "bitwise equal to cpu-seq" (rank 0) when the gathered solution matches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mpi_glue.h"

int main(int argc, char **argv)
{
    int rc = hr_mpi_cli_init(&argc, &argv);
    if (rc) return rc;
    hr_options o;
    hr_options_default(&o);
    o.n = 33;
    o.iters = 20;
    o.backend = HR_BACKEND_CPU_SEQ;
    hr_mpi_cli_args m;
    hr_flagset fs;
    hr_flags_init(&fs, "poisson2d", "poisson2d [options]", NULL, NULL);
    hr_flags_add(&fs, hr_flag_int("n", &o.n, 1, 100000, "N", "points per axis"));
    hr_flags_add(&fs, hr_flag_int("dim", &o.dim, 2, 3, "D", "2 or 3"));
    hr_flags_add(&fs, hr_flag_long("iters", &o.iters, 0, 1000000, "T", "sweeps"));
    int leave = -1, leave_status = HR_EXIT_USAGE;
    hr_flags_add(&fs, hr_flag_int("leave-early", &leave, 0, 1 << 20, "R",
                                  "rank R fails alone after parsing and skips the solve (a rank that "
                                  "took another path)"));
    hr_flags_add(&fs, hr_flag_int("leave-status", &leave_status, 0, 125, "S",
                                  "the status it leaves with (default 2; 0: silently)"));
    hr_mpi_cli_flags(&fs, &m);
    rc = hr_flags_parse(&fs, argc, argv);
    if (rc != 0) return hr_mpi_cli_finalize(rc < 0 ? 0 : rc);
    if (leave == hr_mpi_cli_rank()) {
        if (leave_status)
            fprintf(stderr, "hetrelax poisson2d: --leave-early: rank %d leaves before the solve\n", leave);
        return hr_mpi_cli_finalize(leave_status);
    }
    const size_t count = (size_t)o.n * o.n * (o.dim == 3 ? (size_t)o.n : 1);
    double *sol = hr_mpi_cli_rank() == 0 ? malloc(count * sizeof *sol) : NULL;
    hr_result r;
    json_object *mj = NULL;
    if (hr_mpi_cli_wanted(&m)) {
        rc = hr_mpi_cli_solve("poisson2d", &o, &m, 0, &r, sol, count, &mj);
    } else {
        hr_solver *s;
        rc = hr_solver_create(&o, &s) == HR_OK && hr_solver_run(s, &r) == HR_OK &&
                     hr_solver_solution(s, HR_PREC_DOUBLE, sol, count) == HR_OK
                 ? 0
                 : HR_EXIT_FAIL;
        hr_solver_free(s);
    }
    if (rc == 0 && hr_mpi_cli_rank() == 0) {
        double *want = malloc(count * sizeof *want);
        hr_solver *ref;
        int same = hr_solver_create(&o, &ref) == HR_OK && hr_solver_run(ref, NULL) == HR_OK &&
                   hr_solver_solution(ref, HR_PREC_DOUBLE, want, count) == HR_OK &&
                   memcmp(want, sol, count * sizeof *sol) == 0;
        hr_solver_free(ref);
        free(want);
        printf("%s %ld sweeps, %s\n", same ? "ok" : "FAIL", r.iterations,
               same ? "bitwise equal to cpu-seq" : "differs from cpu-seq");
        if (mj) printf("%s\n", json_object_to_json_string_ext(mj, JSON_C_TO_STRING_PLAIN));
        if (!same) rc = HR_EXIT_FAIL;
    }
    if (mj) json_object_put(mj);
    free(sol);
    return hr_mpi_cli_finalize(rc);
}
