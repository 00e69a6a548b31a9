/*
 * The CG recurrence of src/methods/krylov/ on small dense systems held by the test: it
 * converges on SPD systems (with and without a preconditioner), reports breakdown when
 * p^T A p <= 0, stops on a zero residual and on its check hook, and in lockstep runs every
 * step without dividing by a non-positive p^T A p.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "methods/krylov/cg.h"

#define N 8

typedef struct sys {
    double A[N][N], b[N], dinv[N]; /* dinv: Jacobi preconditioner, 0: none */
    double x[N], r[N], p[N], q[N], z[N];
    int applies, stop_at;
} sys;

static double dot(const double *u, const double *v)
{
    double s = 0.0;
    for (int i = 0; i < N; i++)
        s += u[i] * v[i];
    return s;
}

static double op_apply_dot(void *ctx)
{
    sys *s = ctx;
    s->applies++;
    for (int i = 0; i < N; i++) {
        s->q[i] = 0.0;
        for (int j = 0; j < N; j++)
            s->q[i] += s->A[i][j] * s->p[j];
    }
    return dot(s->p, s->q);
}

static double op_update(void *ctx, double alpha)
{
    sys *s = ctx;
    for (int i = 0; i < N; i++) {
        s->x[i] += alpha * s->p[i];
        s->r[i] -= alpha * s->q[i];
    }
    return dot(s->r, s->r);
}

static double op_precondition(void *ctx)
{
    sys *s = ctx;
    for (int i = 0; i < N; i++)
        s->z[i] = s->dinv[i] * s->r[i];
    return dot(s->r, s->z);
}

static void op_xpay(void *ctx, double beta)
{
    sys *s = ctx;
    const double *z = s->dinv[0] != 0.0 ? s->z : s->r;
    for (int i = 0; i < N; i++)
        s->p[i] = z[i] + beta * s->p[i];
}

static int op_check(void *ctx, long k, double rr)
{
    (void)rr;
    return k == ((sys *)ctx)->stop_at;
}

/* x = 0, r = b, z = M r, p = z, and the scalars of the start */
static hr_cg_scalars start(sys *s, hr_cg_ops *ops)
{
    memset(ops, 0, sizeof *ops);
    ops->ctx = s;
    ops->apply_dot = op_apply_dot;
    ops->update = op_update;
    ops->xpay = op_xpay;
    memset(s->x, 0, sizeof s->x);
    memcpy(s->r, s->b, sizeof s->r);
    hr_cg_scalars sc = {dot(s->r, s->r), dot(s->r, s->r)};
    if (s->dinv[0] != 0.0) {
        ops->precondition = op_precondition;
        sc.rz = op_precondition(s);
        memcpy(s->p, s->z, sizeof s->p);
    } else {
        memcpy(s->p, s->r, sizeof s->p);
    }
    return sc;
}

/* ||b - A x|| / ||b||, computed here from A and x */
static double true_rel(const sys *s)
{
    double rn = 0.0;
    for (int i = 0; i < N; i++) {
        double ri = s->b[i];
        for (int j = 0; j < N; j++)
            ri -= s->A[i][j] * s->x[j];
        rn += ri * ri;
    }
    return sqrt(rn / dot(s->b, s->b));
}

/* SPD: tridiag(-1, d_i, -1) with d_i from 2.5 to 2.5 + 7 * 3 (a spread diagonal) */
static void spd(sys *s, int pc)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < N; i++) {
        s->A[i][i] = 2.5 + 3.0 * i;
        if (i > 0) s->A[i][i - 1] = s->A[i - 1][i] = -1.0;
        s->b[i] = 1.0 + 0.5 * (i % 3);
        if (pc) s->dinv[i] = 1.0 / s->A[i][i];
    }
}

static void converges(int pc)
{
    sys s;
    hr_cg_ops ops;
    spd(&s, pc);
    hr_cg_scalars sc = start(&s, &ops);
    assert_true(true_rel(&s) == 1.0);
    hr_cg_out out;
    hri_cg_iterate(&ops, &sc, N, &out); /* n steps solve an n x n SPD system (up to rounding) */
    assert_int_equal(out.stop, HR_CG_COUNT);
    assert_int_equal(out.done, N);
    assert_int_equal(s.applies, N);
    assert_true(true_rel(&s) < 1e-12);
    /* the scalars returned are those of the final r */
    assert_true(fabs(sc.rr - dot(s.r, s.r)) <= 1e-30 + 1e-12 * sc.rr);
}

static void test_converges(void **state)
{
    (void)state;
    converges(0);
}

static void test_converges_preconditioned(void **state)
{
    (void)state;
    converges(1);
}

/* a preconditioner changes the iterates: the Jacobi-preconditioned residual after 2 steps
 * differs from plain CG's (so the hook is called, not skipped) */
static void test_preconditioner_used(void **state)
{
    (void)state;
    sys a, b;
    hr_cg_ops oa, ob;
    hr_cg_out out;
    spd(&a, 0);
    spd(&b, 1);
    hr_cg_scalars sa = start(&a, &oa), sb = start(&b, &ob);
    hri_cg_iterate(&oa, &sa, 2, &out);
    hri_cg_iterate(&ob, &sb, 2, &out);
    assert_true(sa.rr != sb.rr);
    assert_true(sb.rz != sb.rr);
}

/* A = 0: p^T A p = 0 at the first step; nothing is updated */
static void test_breakdown_zero_operator(void **state)
{
    (void)state;
    sys s;
    hr_cg_ops ops;
    spd(&s, 0);
    memset(s.A, 0, sizeof s.A);
    hr_cg_scalars sc = start(&s, &ops);
    const double rr0 = sc.rr;
    hr_cg_out out;
    hri_cg_iterate(&ops, &sc, 10, &out);
    assert_int_equal(out.stop, HR_CG_BREAKDOWN);
    assert_int_equal(out.done, 0);
    assert_true(out.breakdown_pq == 0.0);
    assert_true(sc.rr == rr0);
    for (int i = 0; i < N; i++)
        assert_true(s.x[i] == 0.0);
}

/* indefinite: diag(1, ..., 1, -1) with b = e_{N-1}: p^T A p = -1 at the first step */
static void test_breakdown_indefinite(void **state)
{
    (void)state;
    sys s;
    hr_cg_ops ops;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < N; i++)
        s.A[i][i] = i == N - 1 ? -1.0 : 1.0;
    s.b[N - 1] = 1.0;
    hr_cg_scalars sc = start(&s, &ops);
    hr_cg_out out;
    hri_cg_iterate(&ops, &sc, 10, &out);
    assert_int_equal(out.stop, HR_CG_BREAKDOWN);
    assert_int_equal(out.done, 0);
    assert_true(out.breakdown_pq == -1.0);
}

/* breakdown after a step: b = e_0 + e_{N-1} on diag(1, ..., 1, -1/2) */
static void test_breakdown_counts_steps(void **state)
{
    (void)state;
    sys s;
    hr_cg_ops ops;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < N; i++)
        s.A[i][i] = 1.0;
    s.A[N - 1][N - 1] = -0.5;
    s.b[0] = 1.0;
    s.b[N - 1] = 1.0;
    /* step 1: p = b, p.Ap = 1/2, r = (-3, 0, .., 0, 3); step 2: p = (6, 0, .., 0, 12), p.Ap = -36 */
    hr_cg_scalars sc = start(&s, &ops);
    hr_cg_out out;
    hri_cg_iterate(&ops, &sc, 10, &out);
    assert_int_equal(out.stop, HR_CG_BREAKDOWN);
    assert_int_equal(out.done, 1);
    assert_true(out.breakdown_pq == -36.0);
    assert_int_equal(s.applies, 2);
}

/* lockstep: every step runs, alpha = 0 where p^T A p is not positive; no breakdown */
static void test_lockstep_runs_every_step(void **state)
{
    (void)state;
    sys s;
    hr_cg_ops ops;
    spd(&s, 0);
    memset(s.A, 0, sizeof s.A);
    hr_cg_scalars sc = start(&s, &ops);
    ops.lockstep = 1;
    hr_cg_out out;
    hri_cg_iterate(&ops, &sc, 5, &out);
    assert_int_equal(out.stop, HR_CG_COUNT);
    assert_int_equal(out.done, 5);
    assert_int_equal(s.applies, 5);
    for (int i = 0; i < N; i++)
        assert_true(s.x[i] == 0.0);
    /* and on an SPD system it is plain CG, bit for bit */
    sys a, b;
    hr_cg_ops oa, ob;
    spd(&a, 1);
    spd(&b, 1);
    hr_cg_scalars sa = start(&a, &oa), sb = start(&b, &ob);
    ob.lockstep = 1;
    hri_cg_iterate(&oa, &sa, 5, &out);
    hri_cg_iterate(&ob, &sb, 5, &out);
    assert_memory_equal(a.x, b.x, sizeof a.x);
    assert_true(sa.rr == sb.rr && sa.rz == sb.rz);
}

/* b = 0: r . r = 0, no step runs */
static void test_zero_residual(void **state)
{
    (void)state;
    sys s;
    hr_cg_ops ops;
    spd(&s, 0);
    memset(s.b, 0, sizeof s.b);
    hr_cg_scalars sc = start(&s, &ops);
    hr_cg_out out;
    hri_cg_iterate(&ops, &sc, 10, &out);
    assert_int_equal(out.stop, HR_CG_ZERO);
    assert_int_equal(out.done, 0);
    assert_int_equal(s.applies, 0);
}

static void test_check_hook_stops(void **state)
{
    (void)state;
    sys s;
    hr_cg_ops ops;
    spd(&s, 0);
    s.stop_at = 3;
    hr_cg_scalars sc = start(&s, &ops);
    ops.check = op_check;
    hr_cg_out out;
    hri_cg_iterate(&ops, &sc, 10, &out);
    assert_int_equal(out.stop, HR_CG_STOPPED);
    assert_int_equal(out.done, 3);
    assert_int_equal(s.applies, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_converges),
        cmocka_unit_test(test_converges_preconditioned),
        cmocka_unit_test(test_preconditioner_used),
        cmocka_unit_test(test_breakdown_zero_operator),
        cmocka_unit_test(test_breakdown_indefinite),
        cmocka_unit_test(test_breakdown_counts_steps),
        cmocka_unit_test(test_lockstep_runs_every_step),
        cmocka_unit_test(test_zero_residual),
        cmocka_unit_test(test_check_hook_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
