/* The public API misused: every function of include/hetrelax/{hetrelax,mg,sparse,hybrid}.h
 * called with NULL pointers and out-of-range values returns a status (or a documented
 * neutral value) instead of crashing; a handle's run called from its own monitor is refused;
 * counts that would wrap are refused. (The MPI headers: tests/parallel/mpi/test_mpi.c misuse.) */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs the headers above first */
#include <cmocka.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/hybrid.h"
#include "hetrelax/mg.h"
#include "hetrelax/sparse.h"

static hr_options small_options(void)
{
    hr_options o;
    hr_options_default(&o);
    o.n = 16;
    o.iters = 20;
    o.backend = HR_BACKEND_CPU_SEQ;
    return o;
}

/* ------------------------------------------------------------ hetrelax.h */

static void core_nulls(void **state)
{
    (void)state;
    hr_options o = small_options();
    hr_options_default(NULL);
    char why[128] = "x";
    assert_int_equal(hr_options_validate(NULL, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_true(strlen(why) > 0);
    assert_int_equal(hr_options_validate(&o, NULL, 0), HR_OK);

    hr_solver *s = (hr_solver *)0x1;
    assert_int_equal(hr_solver_create(NULL, &s), HR_ERR_INVALID_ARG);
    assert_null(s);
    assert_true(strlen(hr_last_error()) > 0);
    /* no handle to return to: refused, and the reason is recorded */
    assert_int_equal(hr_solver_create(&o, NULL), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "out"));

    hr_result r;
    assert_int_equal(hr_solver_run(NULL, &r), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_run_sweeps(NULL, 1, &r), HR_ERR_INVALID_ARG);
    hr_solver_free(NULL);
    assert_non_null(hr_solver_last_error(NULL));
    assert_int_equal(hr_solver_last_error(NULL)[0], '\0');
    float buf[16 * 16];
    assert_int_equal(hr_solver_solution(NULL, HR_PREC_SINGLE, buf, 256), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_set_solution(NULL, HR_PREC_SINGLE, buf, 256, 0), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_sweeps_done(NULL), -1);
    hr_solver_request_stop(NULL);
    assert_int_equal(hr_solver_history(NULL, NULL, NULL), 0);
    assert_int_equal(hr_solver_config(NULL, NULL), HR_ERR_INVALID_ARG);

    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    assert_int_equal(hr_solver_run(s, NULL), HR_OK);
    assert_int_equal(hr_solver_run_sweeps(s, 2, NULL), HR_OK);
    assert_int_equal(hr_solver_run_sweeps(s, -1, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, NULL, 256), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, buf, 255), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_solution(s, (hr_precision)7, buf, 256), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_set_solution(s, HR_PREC_SINGLE, NULL, 256, 0), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_set_solution(s, HR_PREC_SINGLE, buf, 255, 0), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_set_solution(s, (hr_precision)7, buf, 256, 0), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_set_solution(s, HR_PREC_SINGLE, buf, 256, -1), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_history(s, NULL, NULL), 0);
    assert_int_equal(hr_solver_config(s, NULL), HR_ERR_INVALID_ARG);
    hr_hybrid_info hi;
    assert_int_equal(hr_solver_hybrid_info(NULL, &hi), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_hybrid_info(s, NULL), HR_ERR_INVALID_ARG);
    hr_solver_free(s);

    hr_kernel_info k;
    assert_int_equal(hr_kernel_info_at(0, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_kernel_info_at(-1, &k), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_kernel_info_at(hr_kernel_count(), &k), HR_ERR_INVALID_ARG);
    assert_null(hr_kernel_default((hr_backend)99, 2));
    assert_null(hr_method_name((hr_method)99));
    assert_non_null(hr_status_string((hr_status)-1));
    assert_non_null(hr_reason_string((hr_reason)99));
    assert_non_null(hr_backend_name((hr_backend)99));
    assert_non_null(hr_precision_name((hr_precision)99));
    assert_int_equal(hr_measure_host_bandwidth(1, 1 << 20, 1, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_measure_host_bandwidth_bound(1, HR_BIND_NONE, 1 << 20, 1, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sysinfo_get(NULL), HR_ERR_INVALID_ARG);
    assert_int_not_equal(hr_gpu_name(0, NULL, 0), HR_OK);
    assert_int_not_equal(hr_gpu_name(-1, NULL, 0), HR_OK);
    assert_int_not_equal(hr_measure_device_bandwidth(0, 0, 1, NULL), HR_OK);
    hr_cpu_tune_result tr;
    char err[64];
    assert_int_equal(hr_cpu_tune(NULL, 0, NULL, &tr, err, sizeof err), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_cpu_tune(&o, 0, NULL, NULL, NULL, 0), HR_ERR_INVALID_ARG);
}

/* A run from the handle's own monitor, and the handle's other calls there. */
typedef struct reentry {
    hr_solver *s;
    hr_status inner_run, inner_sweeps, inner_set;
    int calls;
} reentry;

static int reenter_monitor(long it, double res, void *user)
{
    (void)it;
    (void)res;
    reentry *e = user;
    if (e->calls++ > 0) return 0;
    hr_result r;
    float buf[16 * 16] = {0};
    e->inner_run = hr_solver_run(e->s, &r);
    e->inner_sweeps = hr_solver_run_sweeps(e->s, 1, &r);
    e->inner_set = hr_solver_set_solution(e->s, HR_PREC_SINGLE, buf, 256, 0);
    hr_solver_free(e->s); /* ignored during a run: the caller still owns the handle */
    return 0;
}

static void core_reentry(void **state)
{
    (void)state;
    hr_options o = small_options();
    reentry e = {NULL, HR_OK, HR_OK, HR_OK, 0};
    o.monitor = reenter_monitor;
    o.monitor_user = &e;
    o.monitor_every = 5;
    assert_int_equal(hr_solver_create(&o, &e.s), HR_OK);
    hr_result r;
    assert_int_equal(hr_solver_run(e.s, &r), HR_OK);
    assert_true(e.calls > 0);
    assert_int_equal(e.inner_run, HR_ERR_INVALID_ARG);
    assert_int_equal(e.inner_sweeps, HR_ERR_INVALID_ARG);
    assert_int_equal(e.inner_set, HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_solver_last_error(e.s), "monitor"));
    assert_int_equal(r.iterations, 20);
    /* the handle is whole and runs again after the run returned */
    e.calls = 1;
    assert_int_equal(hr_solver_run(e.s, &r), HR_OK);
    assert_int_equal(hr_solver_sweeps_done(e.s), 40);
    hr_solver_free(e.s);
}

static void core_sweep_count_overflow(void **state)
{
    (void)state;
    hr_options o = small_options();
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_OK);
    float buf[16 * 16] = {0};
    /* the count of sweeps done must stay representable through the next run */
    assert_int_equal(hr_solver_set_solution(s, HR_PREC_SINGLE, buf, 256, LONG_MAX), HR_ERR_INVALID_ARG);
    assert_true(strlen(hr_solver_last_error(s)) > 0);
    assert_int_equal(hr_solver_set_solution(s, HR_PREC_SINGLE, buf, 256, LONG_MAX - 10), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_set_solution(s, HR_PREC_SINGLE, buf, 256, LONG_MAX - 20), HR_OK);
    assert_int_equal(hr_solver_run_sweeps(s, 21, NULL), HR_ERR_INVALID_ARG);
    assert_true(hr_solver_sweeps_done(s) >= 0);
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_int_equal(hr_solver_sweeps_done(s), LONG_MAX);
    assert_int_equal(hr_solver_run_sweeps(s, 1, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_solver_sweeps_done(s), LONG_MAX);
    hr_solver_free(s);
}

/* ------------------------------------------------------------------ mg.h */

/* One error channel: the multigrid and hybrid calls' messages are hr_last_error()'s. */
static void one_error_channel(void **state)
{
    (void)state;
    hr_mg_options o;
    hr_mg_options_default(&o);
    o.n = 100; /* not 2^k - 1 */
    hr_mg *m = NULL;
    assert_int_equal(hr_mg_create(&o, &m), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "2^k - 1"));
    assert_string_equal(hr_mg_last_error(), hr_last_error());
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(NULL, &s), HR_ERR_INVALID_ARG); /* a create clears it first */
    assert_false(strstr(hr_last_error(), "2^k - 1"));
    assert_string_equal(hr_hybrid_last_error(), hr_last_error());
}

static void mg_nulls(void **state)
{
    (void)state;
    hr_mg_options o;
    hr_mg_options_default(NULL);
    hr_mg_options_default(&o);
    o.n = 15;
    char why[128] = "";
    assert_int_equal(hr_mg_options_validate(NULL, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mg_options_validate(&o, NULL, 0), HR_OK);
    hr_mg *m = (hr_mg *)0x1;
    assert_int_equal(hr_mg_create(NULL, &m), HR_ERR_INVALID_ARG);
    assert_null(m);
    assert_int_equal(hr_mg_create(&o, NULL), HR_ERR_INVALID_ARG);
    assert_true(strlen(hr_mg_last_error()) > 0);
    hr_mg_free(NULL);
    hr_mg_result r;
    assert_int_equal(hr_mg_solve(NULL, &r), HR_ERR_INVALID_ARG);
    double sol[15 * 15];
    assert_int_equal(hr_mg_solution(NULL, sol, 225), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mg_create(&o, &m), HR_OK);
    assert_int_equal(hr_mg_solve(m, NULL), HR_OK);
    assert_int_equal(hr_mg_solution(m, NULL, 225), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mg_solution(m, sol, 224), HR_ERR_INVALID_ARG);
    hr_mg_free(m);
    assert_non_null(hr_mg_cycle_name((hr_mg_cycle)99));
    assert_non_null(hr_mg_smoother_name((hr_mg_smoother)99));
}

typedef struct mg_reentry {
    hr_mg *m;
    hr_status inner;
    int calls;
    double factor, res; /* hr_mg_last_factor and the residual at the first call */
} mg_reentry;

static int mg_reenter(long it, double res, void *user)
{
    (void)it;
    mg_reentry *e = user;
    if (e->calls++ > 0) return 0;
    /* the factor of the first cycle: its residual over the starting one (1 from a zero guess) */
    e->factor = hr_mg_last_factor(e->m);
    e->res = res;
    hr_mg_result r;
    e->inner = hr_mg_solve(e->m, &r);
    hr_mg_free(e->m); /* ignored during a solve */
    return 0;
}

static void mg_reentry_refused(void **state)
{
    (void)state;
    for (int method = 0; method < 2; method++) {
        hr_mg_options o;
        hr_mg_options_default(&o);
        o.n = 31;
        o.threads = 1;
        o.method = method ? HR_MG_METHOD_CG : HR_MG_METHOD_MG;
        mg_reentry e = {NULL, HR_OK, 0, NAN, NAN};
        assert_true(isnan(hr_mg_last_factor(NULL)));
        o.monitor = mg_reenter;
        o.monitor_user = &e;
        assert_int_equal(hr_mg_create(&o, &e.m), HR_OK);
        hr_mg_result r;
        assert_int_equal(hr_mg_solve(e.m, &r), HR_OK);
        assert_int_equal(e.inner, HR_ERR_INVALID_ARG);
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        /* from a zero guess the starting relative residual is 1: the factor is the residual */
        assert_true(fabs(e.factor - e.res) <= 1e-12 * e.res);
        e.calls = 1;
        assert_int_equal(hr_mg_solve(e.m, &r), HR_OK);
        assert_int_equal(r.reason, HR_REASON_CONVERGED);
        hr_mg_free(e.m);
    }
}

/* tol 0 runs max_iters cycles: the reason is "iterations", not a NaN nobody computed */
static void mg_tol_zero(void **state)
{
    (void)state;
    for (int method = 0; method < 2; method++)
        for (int mon = 0; mon < 2; mon++) {
            hr_mg_options o;
            hr_mg_options_default(&o);
            o.n = 31;
            o.threads = 1;
            o.tol = 0.0;
            o.max_iters = 5;
            o.method = method ? HR_MG_METHOD_CG : HR_MG_METHOD_MG;
            mg_reentry e = {NULL, HR_OK, 1, NAN, NAN};
            if (mon) {
                o.monitor = mg_reenter;
                o.monitor_user = &e;
            }
            hr_mg *m = NULL;
            assert_int_equal(hr_mg_create(&o, &m), HR_OK);
            hr_mg_result r;
            assert_int_equal(hr_mg_solve(m, &r), HR_OK);
            assert_int_equal(r.iterations, 5);
            assert_int_equal(r.reason, HR_REASON_ITERS);
            assert_true(isfinite(r.relative_residual) && r.relative_residual < 1.0);
            assert_true(isfinite(r.convergence_factor));
            hr_mg_free(m);
        }
}

/* -------------------------------------------------------------- sparse.h */

static hr_csr *small_matrix(void)
{
    hr_csr *A = NULL;
    char why[128];
    assert_int_equal(hr_sparse_generate("laplace2d:3", &A, why, sizeof why), HR_OK);
    return A;
}

static void sparse_nulls(void **state)
{
    (void)state;
    const int32_t ri[1] = {0}, ci[1] = {0};
    const double v[1] = {1.0};
    hr_csr *A = (hr_csr *)0x1;
    assert_int_equal(hr_csr_from_coo(1, 1, 1, NULL, ci, v, &A), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_csr_from_coo(1, 1, 1, ri, NULL, v, &A), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_csr_from_coo(1, 1, 1, ri, ci, NULL, &A), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_csr_from_coo(1, 1, 1, ri, ci, v, NULL), HR_ERR_INVALID_ARG);
    hr_csr_free(NULL);
    double x[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, y[9], b[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    hr_csr_spmv(NULL, x, y);
    assert_true(isnan(hr_csr_relative_residual(NULL, b, x)));
    assert_int_equal(hr_csr_is_symmetric(NULL), 0);
    int bad = 0;
    assert_int_equal(hr_csr_check_diagonal(NULL, &bad), HR_ERR_INVALID_ARG);
    hr_mm_error e;
    assert_int_equal(hr_mm_parse_csr(NULL, 10, &A, &e), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_parse_csr("x", 1, NULL, &e), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_read_csr(NULL, &A, &e), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_read_csr("/nonexistent", NULL, &e), HR_ERR_INVALID_ARG);
    double *vec = NULL;
    int n = 0;
    assert_int_equal(hr_mm_parse_vector(NULL, 10, &vec, &n, &e), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_parse_vector("x", 1, NULL, &n, &e), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_parse_vector("x", 1, &vec, NULL, &e), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_read_vector(NULL, &vec, &n, &e), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_read_vector("/nonexistent", NULL, &n, &e), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_write_csr(NULL, NULL, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_write_vector(NULL, NULL, 3, NULL), HR_ERR_INVALID_ARG);
    char why[64];
    assert_int_equal(hr_sparse_generate(NULL, &A, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sparse_generate("laplace2d:3", NULL, why, sizeof why), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sparse_generate("nonsense", &A, NULL, 0), HR_ERR_INVALID_ARG);
    hr_spectral sp;
    assert_int_equal(hr_sparse_spectral(NULL, 10, &sp), HR_ERR_INVALID_ARG);
    hr_sparse_options_default(NULL);
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    o.backend = HR_BACKEND_CPU_SEQ;
    hr_sparse_result r;
    assert_int_equal(hr_sparse_solve(NULL, b, x, &o, &r), HR_ERR_INVALID_ARG);
    hr_sparse_solver *h = (hr_sparse_solver *)0x1;
    assert_int_equal(hr_sparse_solver_create(NULL, &o, &h, &r), HR_ERR_INVALID_ARG);
    assert_null(h);
    hr_sparse_solver_free(NULL);
    assert_int_equal(hr_sparse_solver_solve(NULL, b, x, &r), HR_ERR_INVALID_ARG);
    assert_null(hr_sparse_method_at(-1, NULL, NULL));
    assert_non_null(hr_sparse_method_at(0, NULL, NULL));

    A = small_matrix();
    assert_int_equal(hr_csr_check_diagonal(A, NULL), HR_OK);
    hr_csr_spmv(A, NULL, y);
    hr_csr_spmv(A, x, NULL);
    assert_true(isnan(hr_csr_relative_residual(A, NULL, x)));
    assert_true(isnan(hr_csr_relative_residual(A, b, NULL)));
    assert_int_equal(hr_sparse_spectral(A, 10, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_write_csr(NULL, A, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_write_vector(NULL, x, 9, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_mm_write_vector("/dev/null", NULL, 9, NULL), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sparse_solve(A, NULL, x, &o, &r), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sparse_solve(A, b, NULL, &o, &r), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sparse_solve(A, b, x, NULL, &r), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sparse_solve(A, b, x, &o, NULL), HR_OK);
    assert_int_equal(hr_sparse_solver_create(A, NULL, &h, &r), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sparse_solver_create(A, &o, NULL, &r), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sparse_solver_create(A, &o, &h, NULL), HR_OK);
    assert_int_equal(hr_sparse_solver_solve(h, NULL, x, &r), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sparse_solver_solve(h, b, NULL, &r), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_sparse_solver_solve(h, b, x, NULL), HR_OK);
    hr_sparse_solver_free(h);
    hr_csr_free(A);
}

typedef struct sp_reentry {
    hr_sparse_solver *h;
    const double *b;
    double *x;
    hr_status inner;
    int calls;
} sp_reentry;

static int sp_reenter(long it, double res, void *user)
{
    (void)it;
    (void)res;
    sp_reentry *e = user;
    if (e->calls++ > 0) return 0;
    hr_sparse_result r;
    e->inner = hr_sparse_solver_solve(e->h, e->b, e->x, &r);
    hr_sparse_solver_free(e->h); /* ignored during a solve */
    return 0;
}

static void sparse_reentry_refused(void **state)
{
    (void)state;
    const char *methods[] = {"jacobi", "gs", "cg"};
    for (int i = 0; i < 3; i++) {
        hr_csr *A = small_matrix();
        double b[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, x[9] = {0};
        hr_sparse_options o;
        hr_sparse_options_default(&o);
        o.method = methods[i];
        o.threads = 1;
        o.max_iters = 50;
        o.monitor_every = 1;
        o.monitor = sp_reenter;
        sp_reentry e = {NULL, b, x, HR_OK, 0};
        o.monitor_user = &e;
        hr_sparse_result r;
        assert_int_equal(hr_sparse_solver_create(A, &o, &e.h, &r), HR_OK);
        assert_int_equal(hr_sparse_solver_solve(e.h, b, x, &r), HR_OK);
        assert_int_equal(e.inner, HR_ERR_INVALID_ARG);
        e.calls = 1;
        memset(x, 0, sizeof x);
        assert_int_equal(hr_sparse_solver_solve(e.h, b, x, &r), HR_OK);
        hr_sparse_solver_free(e.h);
        hr_csr_free(A);
    }
}

/* The solver's setup is counted before it is touched: under an address-space limit just
 * above what the process maps with A built, methods whose vectors do not fit are refused
 * (HR_ERR_NO_MEMORY and the figures), one that needs none is not. In a child process: the
 * limit stays there. Not under a sanitizer (it reserves terabytes of address space). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HR_NO_RLIMIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HR_NO_RLIMIT 1
#endif
#endif

static size_t mapped_bytes(void)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%lu", &pages) != 1) pages = 0;
    if (f) fclose(f);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

static int setup_under_limit(void)
{
    const int n = 2000000; /* a diagonal matrix: A ~ 56 MB, each vector 16 MB */
    int32_t *ij = malloc((size_t)n * sizeof *ij);
    double *v = malloc((size_t)n * sizeof *v);
    if (!ij || !v) return 10;
    for (int i = 0; i < n; i++) {
        ij[i] = i;
        v[i] = 2.0;
    }
    hr_csr *A = NULL;
    if (hr_csr_from_coo(n, n, n, ij, ij, v, &A) != HR_OK) return 11;
    free(ij);
    free(v);
    struct rlimit rl = {mapped_bytes() + ((size_t)40 << 20), RLIM_INFINITY};
    rl.rlim_max = rl.rlim_cur;
    if (setrlimit(RLIMIT_AS, &rl) != 0) return 12;
    const char *methods[] = {"jacobi", "cg", "gs"}; /* 80 MB (spectral check + x'), 48 MB, none */
    const hr_status want[] = {HR_ERR_NO_MEMORY, HR_ERR_NO_MEMORY, HR_OK};
    for (int i = 0; i < 3; i++) {
        hr_sparse_options o;
        hr_sparse_options_default(&o);
        o.method = methods[i];
        o.backend = HR_BACKEND_CPU_SEQ;
        hr_sparse_solver *h = NULL;
        hr_sparse_result r;
        const hr_status st = hr_sparse_solver_create(A, &o, &h, &r);
        if (st != want[i]) {
            fprintf(stderr, "%s: status %d (%s), want %d\n", methods[i], (int)st, r.message, (int)want[i]);
            return 20 + i;
        }
        if (st == HR_ERR_NO_MEMORY && !strstr(r.message, "available")) return 30 + i;
        hr_sparse_solver_free(h);
    }
    hr_csr_free(A);
    return 0;
}

static void sparse_memory_refused(void **state)
{
    (void)state;
#ifdef HR_NO_RLIMIT
    skip();
#else
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(setup_under_limit());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
#endif
}

/* -------------------------------------------------------------- hybrid.h */

static void hybrid_nulls(void **state)
{
    (void)state;
    assert_true(isnan(hr_split_model_exchange(NULL, 1)));
    assert_true(isnan(hr_split_model_time(NULL, 1)));
    assert_true(isnan(hr_split_model_part_a(NULL, 1)));
    assert_true(isnan(hr_split_model_part_b(NULL, 1)));
    assert_true(isnan(hr_split_model_row_s(NULL, 1.0)));
    const int rows[2] = {1, 2};
    const double s[2] = {1.0, 2.0};
    int knots[HR_SPLIT_KNOTS];
    hr_split_model m;
    memset(&m, 0, sizeof m);
    assert_true(hr_split_model_set_knots(NULL, rows, s, 2, 0.0, knots) < 0);
    assert_true(hr_split_model_set_knots(&m, NULL, s, 2, 0.0, knots) < 0);
    assert_true(hr_split_model_set_knots(&m, rows, NULL, 2, 0.0, knots) < 0);
    double t = 0.0;
    assert_true(hr_split_model_best(NULL, &t) < 0);
    m.rows = 4;
    m.t_a = m.t_b = 1.0;
    assert_true(hr_split_model_best(&m, NULL) >= 0);
    double f[2] = {0.0, 0.5}, tt[2];
    hr_split_model_curve(NULL, f, 2, tt);
    assert_true(isnan(tt[0]) && isnan(tt[1]));
    hr_split_model_curve(&m, NULL, 2, tt);
    hr_split_model_curve(&m, f, 2, NULL);
    assert_true(hr_split_model_best_range(NULL, 1, 2, 0.0, &t) < 0);
    assert_true(hr_split_model_best_range(&m, 1, 2, 0.0, NULL) >= 0);
    assert_true(isnan(hr_split_model_ranks_time(NULL, 2, 0.5, 1, 0.0, 0.0)));
    hr_options o = small_options();
    hr_hybrid_calibration c;
    assert_int_equal(hr_hybrid_calibrate(NULL, 0, &c, &m), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_hybrid_calibrate(&o, 0, NULL, &m), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_hybrid_calibrate(&o, 0, &c, NULL), HR_ERR_INVALID_ARG);
    assert_non_null(hr_hybrid_last_error());
    hr_hybrid_info hi;
    memset(&c, 0, sizeof c);
    assert_int_equal(hr_hybrid_choose(NULL, &c, &m, &hi), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_hybrid_choose(&o, NULL, &m, &hi), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_hybrid_choose(&o, &c, NULL, &hi), HR_ERR_INVALID_ARG);
    assert_int_equal(hr_hybrid_choose(&o, &c, &m, NULL), HR_ERR_INVALID_ARG);
    char buf[64];
    assert_true(hr_hybrid_explain(NULL, 0.0, buf, sizeof buf) <= 0);
    memset(&hi, 0, sizeof hi);
    assert_true(hr_hybrid_explain(&hi, 0.0, NULL, 0) >= 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(core_nulls),
        cmocka_unit_test(core_reentry),
        cmocka_unit_test(core_sweep_count_overflow),
        cmocka_unit_test(mg_nulls),
        cmocka_unit_test(one_error_channel),
        cmocka_unit_test(mg_reentry_refused),
        cmocka_unit_test(mg_tol_zero),
        cmocka_unit_test(sparse_nulls),
        cmocka_unit_test(sparse_reentry_refused),
        cmocka_unit_test(sparse_memory_refused),
        cmocka_unit_test(hybrid_nulls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
