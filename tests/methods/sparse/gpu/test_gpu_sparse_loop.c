/*
 * The device loop of the GPU sparse methods (label gpu). Exit 77
 * (skipped) without CUDA or a device.
 *
 * Checked every iteration, a GPU method runs a device loop (a WHILE graph, or replays of
 * its body where conditional nodes are unavailable) instead of returning to the host at
 * every check. Against the host-checked path (tuning.sparse_device_checks off) on the
 * issue's three systems, for jacobi, async-(5) and cg:
 *   - the same reason and iteration count (the exact iteration the tolerance is met);
 *   - the same final residual, and for jacobi the same x bit for bit;
 *   - the same monitor history (iterations and residuals), deferred or not;
 *   (jacobi and async; cg below)
 * and the same for body replays (tuning.sparse_while off: the gated batched body), for
 * per-iteration checks (tuning.sparse_batch off; default: batched, one check kernel a
 * body; in the WHILE graph the lean body of plain kernels, or with tuning.sparse_lean off
 * the gated one), and for jacobi with a fault mask that turns on and off inside the run
 * (calls cut at the fault events).
 * The first crossing: with tol just above the residual of iteration k (below those of
 * all earlier ones), every mode must stop at k exactly, for k at every position of a
 * body (16 in the lean body, jacobi's replayed body 17; bodies of 5 and of 2, the
 * shortest lean jacobi ring), with the host-checked residuals bit for bit; with
 * max_iters = k - 1 it must run to the limit mid-body, with x_{k-1}. The body-length
 * policy (short lean bodies up to tuning.sparse_body_switch, then long ones) is
 * crossed mid-solve and mid-call here with a small switch (8 and 30, bodies of 24 and
 * 64; and inside the call between the fault events), and with its defaults (256, 64)
 * by the long laplace2d:100 runs above.
 * async-(K) reads x while other blocks write it: its iterates depend on the order in which
 * the SMs take the blocks. On an idle GPU with one stream that order has repeated run to
 * run, but side streams (per-iteration checks) or another process on the GPU change it, so
 * async is held to the same reason, within 1 % + 2 iterations, like cg.
 * cg: cuSPARSE's default CSR SpMV does not promise the same bits run to run, so cg must
 * reach the same reason within 1 % + 2 of the iterations, below tol when converged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>
#include <math.h>

#include "hetrelax/sparse.h"
#include "runtime/cuda/cuda_api.h"
#include "sparse_gpu_test.h"
#include "tuning_test_util.h"

#define MAX_HIST 4096

typedef struct hist {
    long it[MAX_HIST];
    double res[MAX_HIST];
    int len;
} hist;

static int record(long it, double res, void *user)
{
    hist *h = user;
    if (h->len < MAX_HIST) {
        h->it[h->len] = it;
        h->res[h->len++] = res;
    }
    return 0;
}

typedef struct run {
    hr_sparse_result r;
    hr_status st;
    double *x;
    hist *h;
} run;

/* The knobs of a run, in their variables' syntax: device checks, WHILE graph, batched
 * checks, body length ("0": the default), and lean WHILE body ("1", the default; "0": the
 * gated batched body in the WHILE graph); the body-length policy: the iteration from which
 * the long lean body runs and its length (NULL: the defaults, 256 and 64). */
typedef struct mode {
    const char *checks, *whiles, *batch, *body, *name, *lean;
    const char *switch_at, *body_long;
} mode;

/* The knobs of a whole pass (sparse_multi, sparse_predict), under those of a mode. */
static hr_tuning pass_knobs;

/* One solve from x = 0, b = ones, under the given switches; tol 0: 1e-10, mon_every 0:
 * no monitor. */
static run solve_with(const hr_csr *A, const char *method, long maxit, double tol, long mon_every,
                      int deferred, const mode *md, double fault)
{
    run u;
    memset(&u, 0, sizeof u);
    u.h = calloc(1, sizeof *u.h);
    u.x = calloc((size_t)A->n_rows, sizeof *u.x);
    double *b = malloc((size_t)A->n_rows * sizeof *b);
    assert_true(u.h && u.x && b);
    for (int i = 0; i < A->n_rows; i++)
        b[i] = 1.0;
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    o.method = method;
    o.backend = HR_BACKEND_GPU;
    o.tol = tol > 0.0 ? tol : 1e-10;
    o.max_iters = maxit;
    o.allow_divergent = 1;
    o.block = 256;
    o.monitor_every = mon_every;
    o.monitor = mon_every > 0 ? record : NULL;
    o.monitor_user = u.h;
    o.monitor_deferred = deferred;
    if (fault > 0.0) o.fault_fraction = fault, o.fault_iter = 15, o.fault_recover = 17;
    o.tuning = pass_knobs;
    set_knob(&o.tuning, "sparse_device_checks", md->checks);
    set_knob(&o.tuning, "sparse_while", md->whiles);
    set_knob(&o.tuning, "sparse_batch", md->batch);
    set_knob(&o.tuning, "sparse_body", md->body);
    set_knob(&o.tuning, "sparse_lean", md->lean);
    set_knob(&o.tuning, "sparse_body_switch", md->switch_at);
    set_knob(&o.tuning, "sparse_body_long", md->body_long);
    u.st = hr_sparse_solve(A, b, u.x, &o, &u.r);
    free(b);
    return u;
}

static const mode HOST = {"0", "1", "1", "0", "host checks", "1", NULL, NULL};

/* The solves of the first test: tol 1e-10, monitors every 10. */
static run solve(const hr_csr *A, const char *method, long maxit, int deferred, const mode *md, double fault)
{
    return solve_with(A, method, maxit, 0.0, 10, deferred, md, fault);
}

static void drop(run *u)
{
    free(u->x), free(u->h);
}

/* u against the host-checked reference ref. exact 2: x bitwise too; 1: the same count,
 * residual and monitor history; 0: the same reason, the count within 1 % + 2. */
static void compare(const char *what, const hr_csr *A, const run *ref, const run *u, int exact)
{
    if (u->st != HR_OK || ref->st != HR_OK)
        fail_msg("%s: status %d (%s), reference %d (%s)", what, u->st, u->r.message, ref->st, ref->r.message);
    if (exact == 0) {
        const long d = labs(u->r.iterations - ref->r.iterations);
        /* converged: below the tests' 1e-10, or (a first crossing's tol) about where the host's was */
        const int low =
            u->r.relative_residual < 1e-10 || u->r.relative_residual <= 1.05 * ref->r.relative_residual;
        if (u->r.reason != ref->r.reason || d > 2 + ref->r.iterations / 100 ||
            (u->r.reason == HR_REASON_CONVERGED && !low))
            fail_msg("%s: %s after %ld iterations (residual %g), host checks: %s after %ld", what,
                     hr_reason_string(u->r.reason), u->r.iterations, u->r.relative_residual,
                     hr_reason_string(ref->r.reason), ref->r.iterations);
        if (d)
            fprintf(stderr, "note: %s: %ld iterations, host checks %ld\n", what, u->r.iterations,
                    ref->r.iterations);
        return;
    }
    if (u->r.iterations != ref->r.iterations || u->r.reason != ref->r.reason)
        fail_msg("%s: %s after %ld iterations, host checks: %s after %ld", what,
                 hr_reason_string(u->r.reason), u->r.iterations, hr_reason_string(ref->r.reason),
                 ref->r.iterations);
    if (u->r.relative_residual != ref->r.relative_residual)
        fail_msg("%s: residual %.17g, host checks %.17g", what, u->r.relative_residual,
                 ref->r.relative_residual);
    if (exact == 2) assert_memory_equal(u->x, ref->x, (size_t)A->n_rows * sizeof *u->x);
    if (u->h->len != ref->h->len)
        fail_msg("%s: %d monitor calls, host checks %d", what, u->h->len, ref->h->len);
    for (int i = 0; i < u->h->len; i++)
        if (u->h->it[i] != ref->h->it[i] || u->h->res[i] != ref->h->res[i])
            fail_msg("%s: monitor call %d at %ld: %.17g, host checks at %ld: %.17g", what, i, u->h->it[i],
                     u->h->res[i], ref->h->it[i], ref->h->res[i]);
}

static void test_loop_equals_host_checks(void **state)
{
    (void)state;
    const char *mats[] = {"fv2d:99", "trefethen:20000", "laplace2d:100"};
    const char *methods[] = {"jacobi", "async", "cg"};
    for (int k = 0; k < 3; k++) {
        hr_csr *A = NULL;
        char why[256];
        assert_int_equal(hr_sparse_generate(mats[k], &A, why, sizeof why), HR_OK);
        for (int m = 0; m < 3; m++) {
            const long maxit = 3000; /* jacobi on laplace2d:100 stops here, unconverged */
            run ref = solve(A, methods[m], maxit, 0, &HOST, 0.0);
            const mode modes[] = {
                {"1", "1", "1", "0", "while graph, deferred monitors", "1", NULL, NULL},
                {"1", "1", "1", "0", "while graph, monitors cut the calls", "1", NULL, NULL},
                {"1", "0", "1", "0", "body replays, deferred monitors", "1", NULL, NULL},
                {"1", "1", "0", "0", "per-iteration checks, while graph, deferred monitors", "1", NULL, NULL},
                {"1", "0", "0", "0", "per-iteration checks, body replays, deferred monitors", "1", NULL,
                 NULL},
                {"1", "1", "1", "0", "gated batched while graph, deferred monitors", "0", NULL, NULL}};
            for (int v = 0; v < 6; v++) {
                run u = solve(A, methods[m], maxit, v != 1, &modes[v], 0.0);
                char what[160];
                snprintf(what, sizeof what, "%s %s, %s", mats[k], methods[m], modes[v].name);
                /* async-(5) reads neighbours as other blocks write them: its bits depend on
                 * the order the SMs take the blocks, which another process on the GPU (or
                 * the side streams of per-iteration checks) changes; held, like cg, to the
                 * same reason within 1 % + 2 iterations */
                compare(what, A, &ref, &u, m == 0 ? 2 : 0);
                drop(&u);
            }
            drop(&ref);
        }
        hr_csr_free(A);
    }
}

/* A fault mask on at 15 and off at 32: calls end there; jacobi stays bitwise. */
static void test_loop_with_faults(void **state)
{
    (void)state;
    hr_csr *A = NULL;
    char why[256];
    assert_int_equal(hr_sparse_generate("fv2d:40", &A, why, sizeof why), HR_OK);
    run ref = solve(A, "jacobi", 5000, 1, &HOST, 0.25);
    const mode modes[] = {
        {"1", "1", "1", "0", "jacobi with a fault, while graph", "1", NULL, NULL},
        {"1", "0", "1", "0", "jacobi with a fault, body replays", "1", NULL, NULL},
        {"1", "1", "0", "0", "jacobi with a fault, per-iteration checks", "1", NULL, NULL},
        {"1", "1", "1", "5", "jacobi with a fault, bodies of 5", "1", NULL, NULL},
        {"1", "1", "1", "0", "jacobi with a fault, gated batched while graph", "0", NULL, NULL},
        {"1", "1", "1", "0", "jacobi with a fault, long bodies of 24 from 20", "1", "20", "24"},
        {"1", "1", "1", "0", "jacobi with a fault, bodies of 16, no long ones", "1", "1", "0"}};
    for (int w = 0; w < 7; w++) {
        run u = solve(A, "jacobi", 5000, 1, &modes[w], 0.25);
        compare(modes[w].name, A, &ref, &u, 2);
        assert_int_equal(u.r.reason, HR_REASON_CONVERGED);
        drop(&u);
    }
    drop(&ref);
    hr_csr_free(A);
}

/* The residual the host-checked run saw at iteration k (monitored every iteration). */
static double rel_at(const run *all, long k)
{
    for (int i = 0; i < all->h->len; i++)
        if (all->h->it[i] == k) return all->h->res[i];
    fail_msg("no residual for iteration %ld", k);
    return NAN;
}

/* The first crossing at every position of a body (header): a crossing seen one iteration
 * late (or early), or a wrong iterate returned, fails here. */
static void test_first_crossing(void **state)
{
    (void)state;
    hr_csr *A = NULL;
    char why[256];
    assert_int_equal(hr_sparse_generate("fv2d:99", &A, why, sizeof why), HR_OK);
    const char *methods[] = {"jacobi", "async"};
    const mode modes[] = {{"1", "1", "1", "0", "batched, while graph", "1", NULL, NULL},
                          {"1", "0", "1", "0", "batched, body replays", "1", NULL, NULL},
                          {"1", "1", "1", "5", "batched, bodies of 5", "1", NULL, NULL},
                          {"1", "1", "1", "2", "batched, bodies of 2", "1", NULL, NULL},
                          {"1", "1", "0", "0", "per-iteration checks", "1", NULL, NULL},
                          {"1", "1", "1", "0", "gated batched, while graph", "0", NULL, NULL},
                          /* the body-length policy: 16 up to iteration 8 (a short first part
                           * inside a body), then bodies of 24 (9..32, 33..56, ...); or 16 up to
                           * 30 and 64 after: crossings on both sides of the switch */
                          {"1", "1", "1", "0", "short then long bodies of 24 from 8", "1", "8", "24"},
                          {"1", "1", "1", "0", "short then long bodies of 64 from 30", "1", "30", "64"}};
    const int nmodes = (int)(sizeof modes / sizeof modes[0]);
    /* pass 0: jacobi, 1: async, bodies after the first as long as their residuals
     * predict (hr_sp_lean.variable); 2: async with the 8-snapshot lean check (the
     * default on rows of >= 16 entries) on these 5-point rows; 3: jacobi, 4: async, with
     * bodies of the full length (tuning.sparse_predict off). The same for reference
     * and loop. */
    for (int pass = 0; pass < 5; pass++) {
        const int m = pass == 0 || pass == 3 ? 0 : 1;
        if (pass == 2) pass_knobs.sparse_multi = HR_TUNE_ON;
        if (pass == 3) pass_knobs.sparse_multi = 0, pass_knobs.sparse_predict = HR_TUNE_OFF;
        {
            const long span = 200;
            run all = solve_with(A, methods[m], span, 1e-300, 1, 0, &HOST, 0.0);
            assert_int_equal(all.st, HR_OK);
            assert_int_equal(all.r.iterations, span);
            /* 17 consecutive iterations (every position of a body) well above round-off, as
             * late as that allows (up to 60) */
            long k1 = 1;
            while (k1 < span && rel_at(&all, k1) > 1e-11)
                k1++;
            k1 = k1 < 60 ? k1 : 60;
            const long k0 = k1 - 17 > 2 ? k1 - 17 : 2; /* fv2d:99: async-(5) takes 48 to 1e-10 */
            double best = INFINITY;                    /* the smallest residual before k */
            for (long k = 1; k < k0; k++)
                best = fmin(best, rel_at(&all, k));
            int tested = 0;
            for (long k = k0; k < k1; k++) {
                /* a first crossing, with a margin for the host's recomputed residual of x_{k-1}
                 * (other summation order), which decides the reason at max_iters = k - 1 */
                const double rk = rel_at(&all, k);
                const int crossing = rk * (1.0 + 1e-6) < best;
                best = fmin(best, rk);
                if (!crossing) continue;
                tested++;
                const double tol = nextafter(rk, INFINITY); /* rel_k < tol <= rel_i for i < k */
                for (int lim = 0; lim < 2; lim++) { /* converged at k; or stopped by max_iters = k - 1 */
                    const long maxit = lim ? k - 1 : 1000;
                    run ref = solve_with(A, methods[m], maxit, tol, 1, 0, &HOST, 0.0);
                    assert_int_equal(ref.st, HR_OK);
                    assert_int_equal(ref.r.iterations, lim ? k - 1 : k);
                    assert_int_equal(ref.r.reason, lim ? HR_REASON_ITERS : HR_REASON_CONVERGED);
                    for (int v = 0; v < nmodes; v++) {
                        if (m == 1 && v == 4) continue; /* async, checks on side streams: other iterates */
                        run u = solve_with(A, methods[m], maxit, tol, 1, 1, &modes[v], 0.0);
                        char what[160];
                        snprintf(what, sizeof what,
                                 "fv2d:99 %s, %s, tol above the residual of iteration %ld%s%s", methods[m],
                                 modes[v].name, k, lim ? ", max_iters k - 1" : "",
                                 pass == 2   ? ", 8-snapshot check"
                                 : pass == 3 ? ", bodies of full length"
                                             : "");
                        /* async's bits follow the order the SMs take its blocks (another process on
                         * the GPU changes it): held, as in test_loop_equals_host_checks, to the same
                         * reason within 1 % + 2 iterations */
                        compare(what, A, &ref, &u, m == 0 ? 2 : 0);
                        /* the device's residual of the last iteration is that of the x returned */
                        const double dev = u.h->res[u.h->len - 1];
                        if (!(fabs(dev - u.r.relative_residual) <= 1e-6 * u.r.relative_residual))
                            fail_msg("%s: device residual %.17g, of the x returned %.17g", what, dev,
                                     u.r.relative_residual);
                        drop(&u);
                    }
                    drop(&ref);
                }
            }
            if (tested < 12)
                fail_msg("%s: only %d first crossings in [%ld, %ld)", methods[m], tested, k0, k1);
            drop(&all);
        }
    }
    pass_knobs.sparse_predict = 0;
    hr_csr_free(A);
}

int main(void)
{
    if (!sparse_gpu_present()) {
        fprintf(stderr, "no CUDA device (or no CUDA in this build): skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loop_equals_host_checks),
        cmocka_unit_test(test_loop_with_faults),
        cmocka_unit_test(test_first_crossing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
