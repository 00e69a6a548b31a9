/*
 * GPU sparse methods (label gpu). Exit 77 (skipped) without CUDA or a device.
 *
 * - every GPU method (jacobi, async-(1), async-(5), cg) converges on fv2d, trefethen
 *   and laplace2d systems, and the residual it reports is the true residual of the x
 *   it returns, below the tolerance;
 * - GPU jacobi is bitwise equal to the CPU jacobi (graph replays and live launches,
 *   tau != 1, a fault mask);
 * - async-(K) with one block (block >= n) is exactly K Jacobi sweeps: one global
 *   iteration bitwise equals K CPU Jacobi sweeps, also with frozen components; with
 *   one stream, G global iterations equal G*K sweeps;
 * - fault injection: without recovery the residual stalls, with recovery it converges
 *   (async and jacobi);
 * - GPU cg converges in about as many iterations as the CPU cg;
 * - AMC, DC, DK on one GPU (and on two where present) converge;
 * - errors: block too large, too many GPUs, --gpus for a method without it;
 * - the residual computed on the device (what checks and monitors see)
 *   equals the host's for every method and scheme, also with b = 1e300; GPU jacobi
 *   checked every iteration stops at the CPU's exact iteration; a handle solves two
 *   right-hand sides with one setup, jacobi bitwise as two one-shot solves;
 * - b and x in the GPU's memory give the host vectors' iterates (jacobi, cg), async converges.
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

#include "device_mem_test_util.h"
#include "hetrelax/sparse.h"
#include "runtime/cuda/cuda_api.h"
#include "sparse_gpu_test.h"
#include "tuning_test_util.h"

typedef struct sys {
    hr_csr *A;
    double *b;
    int n;
} sys;

static sys make(const char *spec)
{
    sys s;
    char why[256];
    assert_int_equal(hr_sparse_generate(spec, &s.A, why, sizeof why), HR_OK);
    s.n = s.A->n_rows;
    s.b = malloc((size_t)s.n * sizeof *s.b);
    assert_non_null(s.b);
    for (int i = 0; i < s.n; i++) /* not all ones: exercises every row differently */
        s.b[i] = 1.0 + 0.5 * sin(0.37 * i);
    return s;
}

static void drop(sys *s)
{
    hr_csr_free(s->A);
    free(s->b);
}

static hr_sparse_options opts(const char *method, hr_backend be, double tol, long maxit)
{
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    o.method = method;
    o.backend = be;
    o.tol = tol;
    o.max_iters = maxit;
    o.allow_divergent = 1; /* skip the spectral check: these systems have rho(B) < 1 */
    return o;
}

/* Solves from x = 0; returns x (malloc'ed). */
static double *solve(const sys *s, const hr_sparse_options *o, hr_sparse_result *r, hr_status *st)
{
    double *x = calloc((size_t)s->n, sizeof *x);
    assert_non_null(x);
    *st = hr_sparse_solve(s->A, s->b, x, o, r);
    return x;
}

static void test_methods_converge(void **state)
{
    (void)state;
    const char *specs[] = {"fv2d:30", "trefethen:500", "laplace2d:20"};
    struct {
        const char *m;
        int K, block;
    } ms[] = {{"jacobi", 1, 128}, {"async", 1, 128}, {"async", 5, 128}, {"async", 5, 448}, {"cg", 1, 128}};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        sys s = make(specs[i]);
        for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
            hr_sparse_options o = opts(ms[k].m, HR_BACKEND_GPU, 1e-9, 50000);
            o.local_iters = ms[k].K;
            o.block = ms[k].block;
            o.check_every = k % 2 ? 7 : 40; /* live launches only / graph replays plus a rest */
            hr_sparse_result r;
            hr_status st;
            double *x = solve(&s, &o, &r, &st);
            if (st != HR_OK || r.reason != HR_REASON_CONVERGED)
                fail_msg("%s %s-(%d): status %s, reason %s, residual %g: %s", specs[i], ms[k].m, ms[k].K,
                         hr_status_string(st), hr_reason_string(r.reason), r.relative_residual, r.message);
            assert_string_equal(r.backend, "gpu");
            double check = hr_csr_relative_residual(s.A, s.b, x);
            assert_true(check == r.relative_residual); /* the reported residual is the true one */
            assert_true(check < 1e-9);
            assert_true(r.iterations % o.check_every == 0);
            free(x);
        }
        drop(&s);
    }
}

static void test_jacobi_bitwise(void **state)
{
    (void)state;
    sys s = make("fv2d:37");
    const double taus[] = {0.0, 0.8};
    for (int f = 0; f < 2; f++)
        for (int t = 0; t < 2; t++)
            for (long iters = 1; iters <= 69; iters += 34) { /* 1 live; 35 = graph + 3; 69 */
                hr_sparse_options o = opts("jacobi", HR_BACKEND_CPU_SEQ, 0.0, iters);
                o.tau = taus[t];
                if (f) o.fault_fraction = 0.25, o.fault_iter = 5, o.fault_recover = 20;
                hr_sparse_result rc, rg;
                hr_status st;
                double *xc = solve(&s, &o, &rc, &st);
                assert_int_equal(st, HR_OK);
                o.backend = HR_BACKEND_GPU;
                double *xg = solve(&s, &o, &rg, &st);
                if (st != HR_OK) fail_msg("gpu jacobi: %s", rg.message);
                assert_int_equal(rg.iterations, iters);
                if (memcmp(xc, xg, (size_t)s.n * sizeof *xc) != 0)
                    fail_msg("gpu jacobi differs from cpu-seq after %ld sweeps (tau %g, fault %d)", iters,
                             taus[t], f);
                free(xc), free(xg);
            }
    drop(&s);
}

static void test_async_one_block(void **state)
{
    (void)state;
    const char *specs[] = {"fv2d:30", "trefethen:3000"}; /* 900 rows; 3000: several rows a thread */
    for (size_t i = 0; i < 2; i++) {
        sys s = make(specs[i]);
        for (int K = 1; K <= 5; K += 2)
            for (int f = 0; f < 2; f++) {
                hr_sparse_options o = opts("async", HR_BACKEND_GPU, 0.0, 1);
                o.local_iters = K;
                o.block = s.n;
                if (f) o.fault_fraction = 0.3, o.fault_iter = 0; /* frozen from the start */
                hr_sparse_result r;
                hr_status st;
                double *xg = solve(&s, &o, &r, &st);
                if (st != HR_OK) fail_msg("gpu async: %s", r.message);
                hr_sparse_options oc = opts("jacobi", HR_BACKEND_CPU_SEQ, 0.0, K);
                oc.fault_fraction = o.fault_fraction, oc.fault_iter = 0; /* same seed: same mask */
                double *xc = solve(&s, &oc, &r, &st);
                assert_int_equal(st, HR_OK);
                if (memcmp(xc, xg, (size_t)s.n * sizeof *xc) != 0)
                    fail_msg("%s: async-(%d) with one block != %d Jacobi sweeps (fault %d)", specs[i], K, K,
                             f);
                free(xg), free(xc);
            }
        /* one stream orders the launches: G global iterations = G*K sweeps */
        for (long G = 3; G <= 40; G += 37) {
            hr_sparse_options o = opts("async", HR_BACKEND_GPU, 0.0, G);
            o.tuning.sparse_streams = 1;
            o.local_iters = 2;
            o.block = s.n;
            hr_sparse_result r;
            hr_status st;
            double *xg = solve(&s, &o, &r, &st);
            if (st != HR_OK) fail_msg("gpu async: %s", r.message);
            hr_sparse_options oc = opts("jacobi", HR_BACKEND_CPU_SEQ, 0.0, 2 * G);
            double *xc = solve(&s, &oc, &r, &st);
            assert_int_equal(st, HR_OK);
            if (memcmp(xc, xg, (size_t)s.n * sizeof *xc) != 0)
                fail_msg("%s: %ld global iterations of async-(2), one block, one stream != %ld sweeps",
                         specs[i], G, 2 * G);
            free(xg), free(xc);
        }
        drop(&s);
    }
}

static void test_fault(void **state)
{
    (void)state;
    sys s = make("fv2d:40");
    const char *methods[] = {"async", "jacobi"};
    for (int m = 0; m < 2; m++) {
        hr_sparse_options o = opts(methods[m], HR_BACKEND_GPU, 1e-10, 3000);
        hr_sparse_result r0, r;
        hr_status st;
        double *x = solve(&s, &o, &r0, &st); /* fault free */
        assert_int_equal(r0.reason, HR_REASON_CONVERGED);
        free(x);
        o.fault_fraction = 0.25, o.fault_iter = 10, o.fault_recover = -1;
        x = solve(&s, &o, &r, &st);
        if (st != HR_OK) fail_msg("%s: %s", methods[m], r.message);
        assert_int_equal(r.faulty_components, (long)llround(0.25 * s.n));
        assert_int_equal(r.reason, HR_REASON_ITERS); /* never converges */
        assert_true(r.relative_residual > 1e-4);     /* stalls far above the tolerance */
        free(x);
        o.fault_recover = 20;
        x = solve(&s, &o, &r, &st);
        assert_int_equal(st, HR_OK);
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        assert_true(r.relative_residual < 1e-10);
        assert_true(r.iterations > r0.iterations); /* the delay is visible */
        free(x);
    }
    drop(&s);
}

static void test_cg_vs_cpu(void **state)
{
    (void)state;
    sys s = make("laplace2d:40");
    hr_sparse_options o = opts("cg", HR_BACKEND_CPU_SEQ, 1e-10, 10000);
    hr_sparse_result rc, rg;
    hr_status st;
    double *xc = solve(&s, &o, &rc, &st);
    assert_int_equal(rc.reason, HR_REASON_CONVERGED);
    o.backend = HR_BACKEND_GPU;
    double *xg = solve(&s, &o, &rg, &st);
    if (st != HR_OK || rg.reason != HR_REASON_CONVERGED) fail_msg("gpu cg: %s", rg.message);
    assert_true(labs(rg.iterations - rc.iterations) <= rc.iterations / 20 + 2);
    assert_true(hr_csr_relative_residual(s.A, s.b, xg) < 1e-10);
    free(xc), free(xg);
    drop(&s);
}

static void test_comm_schemes(void **state)
{
    (void)state;
    sys s = make("trefethen:4000");
    const int gpus_max = hri_cuda_device_count() >= 2 ? 2 : 1;
    const hr_sparse_comm comms[] = {HR_SPARSE_COMM_AMC, HR_SPARSE_COMM_DC, HR_SPARSE_COMM_DK};
    for (int g = 1; g <= gpus_max; g++)
        for (int c = 0; c < 3; c++) {
            hr_sparse_options o = opts("async", HR_BACKEND_GPU, 1e-10, 2000);
            o.gpus = g;
            o.comm = comms[c];
            o.block = 256;
            o.check_every = 5;
            hr_sparse_result r;
            hr_status st;
            double *x = solve(&s, &o, &r, &st);
            if (st == HR_ERR_UNSUPPORTED && comms[c] == HR_SPARSE_COMM_DK && g > 1) { /* no peer access */
                fprintf(stderr, "dk on %d GPUs: %s (not checked)\n", g, r.message);
                free(x);
                continue;
            }
            if (st != HR_OK || r.reason != HR_REASON_CONVERGED)
                fail_msg("comm %d on %d GPU(s): %s, residual %g: %s", c, g, hr_status_string(st),
                         r.relative_residual, r.message);
            assert_true(hr_csr_relative_residual(s.A, s.b, x) < 1e-10);
            free(x);
        }
    if (gpus_max < 2) fprintf(stderr, "one GPU: the two-GPU schemes were not run here\n");
    drop(&s);
}

static void test_errors(void **state)
{
    (void)state;
    sys s = make("laplace2d:100");
    hr_sparse_result r;
    hr_status st;
    hr_sparse_options o = opts("async", HR_BACKEND_GPU, 1e-6, 10);
    o.block = 9000;
    double *x = solve(&s, &o, &r, &st);
    assert_int_equal(st, HR_ERR_INVALID_ARG);
    assert_non_null(strstr(r.message, "block"));
    free(x);
    o = opts("async", HR_BACKEND_GPU, 1e-6, 10);
    o.gpus = hri_cuda_device_count() + 1;
    x = solve(&s, &o, &r, &st);
    assert_int_equal(st, HR_ERR_INVALID_ARG); /* the CLI blames --gpus for a message "gpus: ..." */
    assert_true(strncmp(r.message, "gpus:", 5) == 0);
    free(x);
    o = opts("jacobi", HR_BACKEND_GPU, 1e-6, 10);
    o.gpus = 2;
    x = solve(&s, &o, &r, &st);
    assert_int_equal(st, HR_ERR_INVALID_ARG);
    free(x);
    o = opts("async", HR_BACKEND_CPU_THREADS, 1e-6, 10);
    o.comm = HR_SPARSE_COMM_DK;
    x = solve(&s, &o, &r, &st);
    assert_int_equal(st, HR_ERR_INVALID_ARG);
    free(x);
    drop(&s);
}

static int record_last(long it, double res, void *user)
{
    (void)it;
    *(double *)user = res;
    return 0;
}

/* The monitor at iteration k sees the device residual; the result's residual is the
 * host's, of the same iterate (the final report is not repeated at k). They differ by
 * rounding only: a few ulps of ||b|| (b - A x cancels) and of the value. */
static void test_device_residual(void **state)
{
    (void)state;
    /* fv2d: 5-entry rows; trefethen: 28 entries a row (the 8-snapshot check's case) */
    const char *cases[] = {"fv2d:40", "trefethen:2000"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sys s = make(cases[c]);
        struct {
            const char *m;
            hr_sparse_comm comm;
        } ms[] = {{"jacobi", HR_SPARSE_COMM_AUTO}, {"async", HR_SPARSE_COMM_AUTO},
                  {"async", HR_SPARSE_COMM_AMC},   {"async", HR_SPARSE_COMM_DC},
                  {"async", HR_SPARSE_COMM_DK},    {"cg", HR_SPARSE_COMM_AUTO}};
        for (int big = 0; big < 2; big++) {
            if (big)
                for (int i = 0; i < s.n; i++)
                    s.b[i] *= 1e300; /* every square overflows: scaled norms on the device too */
            for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
                for (long iters = 1; iters <= 41; iters += 40) {
                    hr_sparse_options o = opts(ms[k].m, HR_BACKEND_GPU, 0.0, iters);
                    o.comm = ms[k].comm;
                    o.monitor_every = iters;
                    double dev = NAN;
                    o.monitor = record_last;
                    o.monitor_user = &dev;
                    hr_sparse_result r;
                    hr_status st;
                    double *x = solve(&s, &o, &r, &st);
                    if (st != HR_OK ||
                        !(fabs(dev - r.relative_residual) <= 1e-13 + 1e-10 * r.relative_residual))
                        fail_msg("%s: %s comm %d, %ld iterations, b x %g: device %.17g, host %.17g (%s)",
                                 cases[c], ms[k].m, (int)ms[k].comm, iters, big ? 1e300 : 1.0, dev,
                                 r.relative_residual, r.message);
                    free(x);
                }
        }
        drop(&s);
    }
}

/* Checked every iteration, GPU jacobi (bitwise the CPU's iterates) stops at the
 * iteration the CPU stops at, whatever mix of graphs and live launches ran. */
static void test_exact_iterations(void **state)
{
    (void)state;
    sys s = make("laplace2d:30");
    hr_sparse_options o = opts("jacobi", HR_BACKEND_CPU_SEQ, 1e-8, 100000);
    hr_sparse_result rc, rg;
    hr_status st;
    double *xc = solve(&s, &o, &rc, &st);
    assert_int_equal(rc.reason, HR_REASON_CONVERGED);
    o.backend = HR_BACKEND_GPU;
    double *xg = solve(&s, &o, &rg, &st);
    if (st != HR_OK || rg.reason != HR_REASON_CONVERGED || rg.iterations != rc.iterations)
        fail_msg("gpu jacobi: %ld iterations, cpu %ld: %s", rg.iterations, rc.iterations, rg.message);
    assert_memory_equal(xc, xg, (size_t)s.n * sizeof *xc);
    free(xc), free(xg);
    /* the same with the checks on the host: the same count */
    o.tuning.sparse_device_checks = HR_TUNE_OFF;
    xg = solve(&s, &o, &rg, &st);
    o.tuning.sparse_device_checks = 0;
    if (st != HR_OK || rg.iterations != rc.iterations)
        fail_msg("gpu jacobi, host checks: %ld iterations, cpu %ld: %s", rg.iterations, rc.iterations,
                 rg.message);
    free(xg);
    /* every method checked every iteration (device-side checks: graphs of 32 and the
     * monitors' cuts of 10, as the CLI runs it): it stops below tol, on that iterate */
    const char *methods[] = {"jacobi", "async", "cg"};
    for (int m = 0; m < 3; m++)
        for (long mon = 0; mon <= 10; mon += 10) {
            o = opts(methods[m], HR_BACKEND_GPU, 1e-9, 100000);
            o.monitor_every = mon;
            double last = NAN;
            o.monitor = mon ? record_last : NULL;
            o.monitor_user = &last;
            xg = solve(&s, &o, &rg, &st);
            double t = hr_csr_relative_residual(s.A, s.b, xg);
            if (st != HR_OK || rg.reason != HR_REASON_CONVERGED || !(t < 1e-9) || t != rg.relative_residual)
                fail_msg("%s, monitor %ld: %s after %ld, residual %g (true %g): %s", methods[m], mon,
                         hr_reason_string(rg.reason), rg.iterations, rg.relative_residual, t, rg.message);
            if (mon && rg.iterations % mon != 0) assert_true(last == rg.relative_residual); /* final report */
            free(xg);
        }
    drop(&s);
}

/* One handle, two right-hand sides: one setup; jacobi's iterates equal one-shot solves. */
static void test_handle(void **state)
{
    (void)state;
    sys s = make("fv2d:30");
    double *b2 = malloc((size_t)s.n * sizeof *b2);
    assert_non_null(b2);
    for (int i = 0; i < s.n; i++)
        b2[i] = cos(0.1 * i);
    const char *methods[] = {"jacobi", "async", "cg"};
    for (int m = 0; m < 3; m++) {
        hr_sparse_options o = opts(methods[m], HR_BACKEND_GPU, 1e-9, 50000);
        hr_sparse_solver *h = NULL;
        hr_sparse_result r1, r2, c;
        assert_int_equal(hr_sparse_solver_create(s.A, &o, &h, &c), HR_OK);
        double *x1 = calloc((size_t)s.n, sizeof *x1), *x2 = calloc((size_t)s.n, sizeof *x2);
        assert_true(x1 && x2);
        assert_int_equal(hr_sparse_solver_solve(h, s.b, x1, &r1), HR_OK);
        assert_int_equal(hr_sparse_solver_solve(h, b2, x2, &r2), HR_OK);
        hr_sparse_solver_free(h);
        assert_int_equal(r2.setups, 1);
        assert_true(r1.reason == HR_REASON_CONVERGED && r2.reason == HR_REASON_CONVERGED);
        assert_true(hr_csr_relative_residual(s.A, s.b, x1) < 1e-9);
        assert_true(hr_csr_relative_residual(s.A, b2, x2) < 1e-9);
        if (m == 0) { /* deterministic: the same bits as two one-shot solves */
            hr_sparse_result q;
            double *y = calloc((size_t)s.n, sizeof *y);
            assert_non_null(y);
            assert_int_equal(hr_sparse_solve(s.A, b2, y, &o, &q), HR_OK);
            assert_int_equal(q.iterations, r2.iterations);
            assert_memory_equal(y, x2, (size_t)s.n * sizeof *y);
            free(y);
        }
        free(x1), free(x2);
    }
    free(b2);
    drop(&s);
}

/* b and x in the GPU's memory (hr_sparse_solver_solve_device): the iterates of the host
 * vectors' solve (jacobi and cg bitwise, at the same iteration, also with checks on the
 * device every iteration and with b = 1e300 b, which cg scales), async converging; refusals. */
static void test_device_vectors(void **state)
{
    (void)state;
    sys s = make("fv2d:30");
    const size_t bytes = (size_t)s.n * sizeof(double);
    double *x0 = malloc(bytes), *xh = malloc(bytes), *xd = malloc(bytes), *big = malloc(bytes);
    double *db = dev_alloc(bytes), *dx = dev_alloc(bytes);
    assert_true(x0 && xh && xd && big && db && dx);
    for (int i = 0; i < s.n; i++)
        x0[i] = 0.25 * cos(0.3 * i), big[i] = 1e300 * s.b[i];
    static const struct {
        const char *method;
        long check_every;
        int big;
    } cs[] = {{"jacobi", 10, 0}, {"jacobi", 1, 0}, {"cg", 1, 0}, {"cg", 1, 1}, {"async", 1, 0}};
    for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
        hr_sparse_options o = opts(cs[c].method, HR_BACKEND_GPU, 1e-9, 50000);
        o.check_every = cs[c].check_every;
        if (strcmp(cs[c].method, "async") == 0) o.local_iters = 2;
        const double *b = cs[c].big ? big : s.b;
        hr_sparse_solver *h = NULL;
        hr_sparse_result rh, rd;
        assert_int_equal(hr_sparse_solver_create(s.A, &o, &h, &rh), HR_OK);
        memcpy(xh, x0, bytes);
        assert_int_equal(hr_sparse_solver_solve(h, b, xh, &rh), HR_OK);
        dev_put(db, b, bytes);
        dev_put(dx, x0, bytes);
        const hr_status st = hr_sparse_solver_solve_device(h, db, dx, NULL, &rd);
        if (st != HR_OK) fail_msg("%s: solve_device: %s", cs[c].method, rd.message);
        dev_get(xd, dx, bytes);
        assert_true(rd.reason == HR_REASON_CONVERGED && rd.relative_residual < 1e-9);
        const double true_rel = hr_csr_relative_residual(s.A, b, xd);
        if (!(true_rel < 1.01e-9 && fabs(true_rel - rd.relative_residual) <= 1e-6 * true_rel))
            fail_msg("%s: residual %g reported, %g of the x written", cs[c].method, rd.relative_residual, true_rel);
        if (!(fabs(rd.initial_residual - rh.initial_residual) <= 1e-12 * rh.initial_residual))
            fail_msg("%s: initial residual %.17g on the device, %.17g on the host", cs[c].method,
                     rd.initial_residual, rh.initial_residual);
        if (strcmp(cs[c].method, "async") != 0) {
            assert_int_equal(rd.iterations, rh.iterations);
            if (memcmp(xd, xh, bytes) != 0) fail_msg("%s (case %zu): device vectors differ", cs[c].method, c);
        }
        hr_sparse_solver_free(h);
    }
    /* refusals */
    hr_sparse_result r;
    hr_sparse_options o = opts("jacobi", HR_BACKEND_CPU_SEQ, 1e-9, 100);
    assert_int_equal(hr_sparse_solve_device(s.A, db, dx, NULL, &o, &r), HR_ERR_UNSUPPORTED);
    assert_non_null(strstr(r.message, "gpu methods"));
    o = opts("jacobi", HR_BACKEND_GPU, 1e-9, 100);
    assert_int_equal(hr_sparse_solve_device(s.A, s.b, dx, NULL, &o, &r), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(r.message, "b: "));
    big[3] = NAN;
    dev_put(db, big, bytes);
    assert_int_equal(hr_sparse_solve_device(s.A, db, dx, NULL, &o, &r), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(r.message, "not finite"));
    dev_free(db), dev_free(dx);
    free(x0), free(xh), free(xd), free(big);
    drop(&s);
}

int main(void)
{
    if (!sparse_gpu_present()) {
        fprintf(stderr, "no CUDA device (or no CUDA in this build): skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_jacobi_bitwise),
        cmocka_unit_test(test_async_one_block),
        cmocka_unit_test(test_methods_converge),
        cmocka_unit_test(test_fault),
        cmocka_unit_test(test_cg_vs_cpu),
        cmocka_unit_test(test_comm_schemes),
        cmocka_unit_test(test_device_residual),
        cmocka_unit_test(test_exact_iterations),
        cmocka_unit_test(test_handle),
        cmocka_unit_test(test_device_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
