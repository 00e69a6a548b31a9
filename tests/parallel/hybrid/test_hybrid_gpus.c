/* --gpus N (hr_options.gpus): the chain of GPU parts bitwise equal to cpu-seq, 2-D and
 * 3-D, fp32 and fp64, ghost 1 and 2, uneven slabs:
 *   - with one GPU or more: 2 and 3 parts on ONE GPU (device copies between the parts,
 *     the same direct-copy schedule as peer copies), and 2 parts on one GPU staged
 *     through the host (the fallback), through the engine (hr_split);
 *   - with 2 GPUs or more: --gpus 2 (and every GPU present, up to 4) through the public
 *     API (the start-up trial of peer copies against host staging, then the faster);
 *     --gpus 2 with peer copies kept and staged through the host; 4 parts on 2 GPUs (peer
 *     and device copies in one chain);
 *   - the exchange trial forced (sweeps, then the grids reloaded) on one and two GPUs;
 *   - everything again with the source pushing its rows (HETRELAX_PEER_PUSH=1).
 * Exit 77 (skipped) without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/solver_internal.h"
#include "hetrelax/hetrelax.h"
#include "hetrelax/hybrid.h"
#include "parallel/hybrid/split.h"

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

/* The engine with what[0] GPU parts on what[1] GPUs (what[2]: stage through the host;
 * what[3]: no chain graphs; what[4]: the start-up exchange trial, hr_split_spec.exchange_trial:
 * -1 never, 1 always, which sweeps and then reloads the grids), run
 * for ref->iters sweeps from the cpu-seq solver's initial grid, against that solver's
 * sweeps: every interior point bitwise. Returns 0 when equal. */
static int engine_case(const hr_options *ref, const int *what, int ghost, char *how, size_t how_size)
{
    hr_solver *s = NULL;
    if (hr_solver_create(ref, &s) != HR_OK) {
        fprintf(stderr, "create: %s\n", hr_last_error());
        return 1;
    }
    hr_options o = *ref;
    o.backend = HR_BACKEND_HYBRID;
    o.split_second = HR_SPLIT_GPU;
    o.split_ghost = ghost;
    hr_split_spec sp;
    hri_split_spec_from_options(&o, &s->p, 0, NULL, &sp);
    sp.parts = what[0];
    sp.devices = what[1];
    sp.host_exchange = what[2];
    sp.exchange_trial = what[4];
    hr_split *e = NULL;
    char err[256] = "";
    int bad = 1;
    hr_grid out;
    memset(&out, 0, sizeof out);
    if (hri_grid_alloc(&out, &s->u[0].l) != HR_OK) {
        fprintf(stderr, "engine: no memory\n");
    } else if (hri_split_create(&sp, &s->u[s->cur], s->hf.base ? &s->hf : NULL, &e, err, sizeof err) !=
               HR_OK) {
        fprintf(stderr, "engine: %s\n", err);
    } else {
        e->graph_off = e->graph_off || what[3];
        /* 5 sweeps one by one, then graphs from the odd parity (the public runs start even) */
        if (hri_split_sweeps(e, 5) != HR_OK || hri_split_sweeps(e, ref->iters - 5) != HR_OK ||
            hri_split_download(e, &out) != HR_OK) {
            fprintf(stderr, "engine run: %s\n", e->err);
        } else if (s->k->kernel->sweeps(s, ref->iters) != HR_OK) {
            fprintf(stderr, "cpu-seq: %s\n", s->err);
        } else {
            snprintf(how, how_size, "%s, %ld graph replays", e->exchange, e->graph_replays);
            bad = 0;
            const hr_grid *u = &s->u[s->cur];
            const size_t es = u->l.esize;
            for (int k = 0; k < s->p.nz && !bad; k++)
                for (int i = 0; i < s->p.ny && !bad; i++) {
                    const size_t at = hr_layout_index(&u->l, i + 1, 1, s->p.dim == 3 ? k + 1 : 0) * es;
                    bad = memcmp((char *)u->base + at, (char *)out.base + at, (size_t)s->p.nx * es) != 0;
                }
        }
    }
    hri_split_free(e);
    hri_grid_free(&out);
    hr_solver_free(s);
    return bad;
}

int main(void)
{
    hr_sysinfo si;
    if (hr_sysinfo_get(&si) != HR_OK || si.gpus < 1) {
        printf("no GPU: skipped\n");
        return 77;
    }
    const int most = si.gpus < 4 ? si.gpus : 4;
    int failures = 0, runs = 0;
    /* every case twice: the receiver pulls (default), the source pushes (tuning.peer_push) */
    for (int push = 0; push < 2; push++)
        for (int dim = 2; dim <= 3; dim++)
            for (int prec = 0; prec < 2; prec++) {
                hr_options ref;
                hr_options_default(&ref);
                ref.tuning.peer_push = push ? HR_TUNE_ON : 0;
                ref.dim = dim;
                ref.nx = dim == 3 ? 67 : 301;
                ref.ny = dim == 3 ? 45 : 257; /* odd extents: uneven slabs */
                ref.nz = dim == 3 ? 53 : 0;
                ref.iters = 37;
                ref.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
                ref.init = HR_INIT_SINE;
                ref.backend = HR_BACKEND_CPU_SEQ;
                const char *what = prec ? "fp64" : "fp32";
                /* parts on one GPU, and the host-staged fallback; 4 parts on 2 GPUs */
                /* parts, GPUs, host-staged, no chain graphs, exchange trial */
                static const int cases[][5] = {{2, 1, 0, 0, -1}, {2, 1, 0, 1, -1}, {3, 1, 0, 0, -1},
                                               {2, 1, 1, 0, -1}, {3, 1, 0, 0, 1},  {4, 2, 0, 0, -1},
                                               {2, 2, 0, 0, -1}, {2, 2, 0, 1, -1}, {2, 2, 1, 0, -1},
                                               {2, 2, 0, 0, 1},  {4, 2, 0, 0, 1}};
                for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                    if (cases[c][1] > si.gpus) continue;
                    for (int g = 1; g <= 2; g++) {
                        char how[96] = "";
                        runs++;
                        if (engine_case(&ref, cases[c], g, how, sizeof how)) {
                            fprintf(stderr,
                                    "%d-D %s: %d parts on %d GPU(s), ghost %d, %s: not bitwise cpu-seq\n",
                                    dim, what, cases[c][0], cases[c][1], g, how);
                            failures++;
                        } else if (dim == 2 && prec == 0 && g == 1) {
                            printf("%d parts on %d GPU(s)%s%s%s: %s\n", cases[c][0], cases[c][1],
                                   cases[c][2] ? " (host asked for)" : "", cases[c][3] ? " (graphs off)" : "",
                                   cases[c][4] > 0 ? " (exchange trial)" : "", how);
                        }
                    }
                }
                if (si.gpus < 2) continue;
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
                            fprintf(stderr, "%d-D %s --gpus %d ghost %d: %s\n", dim, what, n, g,
                                    !b      ? "failed"
                                    : !same ? "not bitwise equal to cpu-seq"
                                            : "config.gpus wrong");
                            failures++;
                        } else if (dim == 2 && prec == 0 && g == 1) {
                            printf("--gpus %d: %s\n", n, cfg.device_name);
                        }
                        free(b);
                    }
                free(a);
            }
    printf("%d runs on up to %d GPUs, %d failed\n", runs, si.gpus < 2 ? 1 : most, failures);
    return failures ? 1 : 0;
}
