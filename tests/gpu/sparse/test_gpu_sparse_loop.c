/*
 * The device loop of the GPU sparse methods (issue 15 item 1; label gpu). Exit 77
 * (skipped) without CUDA or a device.
 *
 * Checked every iteration, a GPU method runs a device loop (a WHILE graph, or replays of
 * its body where conditional nodes are unavailable) instead of returning to the host at
 * every check. Against the host-checked path (HETRELAX_SPARSE_DEVICE_CHECKS=0) on the
 * issue's three systems, for jacobi, async-(5) and cg:
 *   - the same reason and iteration count (the exact iteration the tolerance is met);
 *   - the same final residual, and for jacobi the same x bit for bit;
 *   - the same monitor history (iterations and residuals), deferred or not;
 *   (jacobi and async; cg below)
 * and the same for body replays (HETRELAX_SPARSE_WHILE=0), and for jacobi and async with
 * a fault mask that turns on and off inside the run (calls cut at the fault events);
 * async also with blocks of several rows a thread (its kernel's generic path).
 * async-(K) reads x while other blocks write it: with one stream its iterates have been
 * bit-identical run to run (docs/gpu-sparse.md), which this test relies on for async.
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

#include "cuda/cuda_api.h"
#include "hetrelax/sparse.h"

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

/* One solve from x = 0, b = ones, under the given environment switches. */
static int g_block = 256; /* async rows per block (test_async_paths changes it) */

static run solve(const hr_csr *A, const char *method, long maxit, int deferred, const char *checks,
                 const char *whiles, double fault)
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
    o.tol = 1e-10;
    o.max_iters = maxit;
    o.allow_divergent = 1;
    o.block = g_block;
    o.monitor_every = 10;
    o.monitor = record;
    o.monitor_user = u.h;
    o.monitor_deferred = deferred;
    if (fault > 0.0) o.fault_fraction = fault, o.fault_iter = 15, o.fault_recover = 17;
    setenv("HETRELAX_SPARSE_DEVICE_CHECKS", checks, 1);
    setenv("HETRELAX_SPARSE_WHILE", whiles, 1);
    u.st = hr_sparse_solve(A, b, u.x, &o, &u.r);
    unsetenv("HETRELAX_SPARSE_DEVICE_CHECKS");
    unsetenv("HETRELAX_SPARSE_WHILE");
    free(b);
    return u;
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
        if (u->r.reason != ref->r.reason || d > 2 + ref->r.iterations / 100 ||
            (u->r.reason == HR_REASON_CONVERGED && !(u->r.relative_residual < 1e-10)))
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
            run ref = solve(A, methods[m], maxit, 0, "0", "1", 0.0);
            const char *modes[][3] = {{"1", "1", "while graph, deferred monitors"},
                                      {"1", "1", "while graph, monitors cut the calls"},
                                      {"1", "0", "body replays, deferred monitors"}};
            for (int v = 0; v < 3; v++) {
                run u = solve(A, methods[m], maxit, v != 1, modes[v][0], modes[v][1], 0.0);
                char what[160];
                snprintf(what, sizeof what, "%s %s, %s", mats[k], methods[m], modes[v][2]);
                compare(what, A, &ref, &u, m == 0 ? 2 : m == 1 ? 1 : 0);
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
    run ref = solve(A, "jacobi", 5000, 1, "0", "1", 0.25);
    for (int w = 0; w < 2; w++) {
        run u = solve(A, "jacobi", 5000, 1, "1", w ? "1" : "0", 0.25);
        compare(w ? "jacobi with a fault, while graph" : "jacobi with a fault, body replays", A, &ref, &u, 2);
        assert_int_equal(u.r.reason, HR_REASON_CONVERGED);
        drop(&u);
    }
    drop(&ref);
    hr_csr_free(A);
}

/* async's fused check in both kernel paths (registers: block 256; generic, several
 * rows a thread: block 3000 on trefethen:3000) and with a fault mask on at 15 and off
 * at 32: the same count, residuals and monitor history as the host checks. */
static void test_async_paths(void **state)
{
    (void)state;
    const struct {
        const char *gen;
        int block;
        double fault;
    } cs[] = {{"trefethen:3000", 3000, 0.0}, {"trefethen:3000", 256, 0.25}, {"fv2d:40", 64, 0.25}};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        hr_csr *A = NULL;
        char why[256];
        assert_int_equal(hr_sparse_generate(cs[c].gen, &A, why, sizeof why), HR_OK);
        g_block = cs[c].block;
        run ref = solve(A, "async", 3000, 1, "0", "1", cs[c].fault);
        for (int w = 0; w < 2; w++) {
            run u = solve(A, "async", 3000, 1, "1", w ? "1" : "0", cs[c].fault);
            char what[160];
            snprintf(what, sizeof what, "%s async block %d fault %g, %s", cs[c].gen, cs[c].block, cs[c].fault,
                     w ? "while graph" : "body replays");
            compare(what, A, &ref, &u, 1);
            assert_int_equal(u.r.reason, HR_REASON_CONVERGED);
            drop(&u);
        }
        drop(&ref);
        g_block = 256;
        hr_csr_free(A);
    }
}

int main(void)
{
    int gpu_methods = 0;
    hr_backend be;
    for (int i = 0; hr_sparse_method_at(i, &be, NULL); i++)
        gpu_methods += be == HR_BACKEND_GPU;
    if (gpu_methods == 0 || hr_cuda_device_count() < 1) {
        fprintf(stderr, "no CUDA device (or no CUDA in this build): skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loop_equals_host_checks),
        cmocka_unit_test(test_loop_with_faults),
        cmocka_unit_test(test_async_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
