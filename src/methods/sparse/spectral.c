/*
 * Spectral estimates for the relaxation methods (Anzt et al., sections 2 and 3.1):
 * rho(B) decides Jacobi convergence, rho(|B|) < 1 guarantees asynchronous convergence.
 *
 * For symmetric A with a positive diagonal both are eigenvalue problems of symmetric
 * matrices (similarity by D^1/2), so a plain Lanczos run gives the extreme Ritz values
 * (no reorthogonalisation: only the extremes are wanted, and they converge first).
 * Otherwise power iteration estimates the growth rates.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "methods/sparse/sparse_internal.h"

typedef struct op {
    const hr_csr *A;
    const double *dis; /* |a_ii|^-1/2 */
    int mode;          /* 0: D^-1/2 A D^-1/2, 1: |D|^-1/2 |A - D| |D|^-1/2, 2: B, 3: |B| + I */
} op;

static void apply(const op *o, const double *x, double *y)
{
    const hr_csr *A = o->A;
    for (int i = 0; i < A->n_rows; i++) {
        double s = 0.0;
        for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
            int j = A->col[p];
            double a = A->val[p];
            switch (o->mode) {
            case 0: s += a * o->dis[j] * x[j]; break;
            case 1:
                if (j != i) s += fabs(a) * o->dis[j] * x[j];
                break;
            case 2:
                if (j != i) s -= a * x[j];
                break;
            default:
                if (j != i) s += fabs(a) * x[j];
                break;
            }
        }
        const double d = A->val[A->diag[i]];
        if (o->mode <= 1)
            y[i] = o->dis[i] * s;
        else if (o->mode == 2)
            y[i] = s / d;
        else
            y[i] = s / fabs(d) + x[i];
    }
}

static double norm2(int n, const double *x)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += x[i] * x[i];
    return sqrt(s);
}

/* Number of eigenvalues of the tridiagonal (a, b) below x (Sturm sequence). */
static int sturm_count(int m, const double *a, const double *b, double x)
{
    int c = 0;
    double q = 1.0;
    for (int i = 0; i < m; i++) {
        q = a[i] - x - (i > 0 ? b[i - 1] * b[i - 1] / q : 0.0);
        if (q == 0.0) q = -1e-300;
        if (q < 0.0) c++;
    }
    return c;
}

/* Smallest and largest eigenvalue of the m x m tridiagonal by bisection. */
static void tridiag_extremes(int m, const double *a, const double *b, double *lo, double *hi)
{
    double g0 = INFINITY, g1 = -INFINITY;
    for (int i = 0; i < m; i++) {
        double r = (i > 0 ? fabs(b[i - 1]) : 0.0) + (i < m - 1 ? fabs(b[i]) : 0.0);
        if (a[i] - r < g0) g0 = a[i] - r;
        if (a[i] + r > g1) g1 = a[i] + r;
    }
    for (int which = 0; which < 2; which++) {
        double l = g0, h = g1;
        int target = which == 0 ? 1 : m; /* count(x) >= target means x is above the eigenvalue */
        for (int it = 0; it < 200 && h - l > 1e-15 * (fabs(l) + fabs(h)); it++) {
            double mid = 0.5 * (l + h);
            if (sturm_count(m, a, b, mid) >= target)
                h = mid;
            else
                l = mid;
        }
        if (which == 0)
            *lo = 0.5 * (l + h);
        else
            *hi = 0.5 * (l + h);
    }
}

/* Lanczos on a symmetric operator: extreme Ritz values after at most max_steps. */
static hr_status lanczos(const op *o, int max_steps, double *lmin, double *lmax, int *steps)
{
    const int n = o->A->n_rows;
    double *v = malloc((size_t)n * sizeof *v), *vp = calloc((size_t)n, sizeof *vp),
           *w = malloc((size_t)n * sizeof *w);
    double *al = malloc((size_t)max_steps * sizeof *al), *be = malloc((size_t)max_steps * sizeof *be);
    if (!v || !vp || !w || !al || !be) {
        free(v), free(vp), free(w), free(al), free(be);
        return HR_ERR_NO_MEMORY;
    }
    uint64_t seed = 12345;
    for (int i = 0; i < n; i++)
        v[i] = 0.5 + hr_uniform01(&seed); /* positive: overlaps the Perron vector */
    double nv = norm2(n, v);
    for (int i = 0; i < n; i++)
        v[i] /= nv;
    double prev_lo = NAN, prev_hi = NAN, beta = 0.0;
    int m = 0, stable = 0;
    *lmin = *lmax = NAN;
    for (int k = 0; k < max_steps && k < n; k++) {
        apply(o, v, w);
        double a = 0.0;
        for (int i = 0; i < n; i++) {
            w[i] -= beta * vp[i];
            a += w[i] * v[i];
        }
        for (int i = 0; i < n; i++)
            w[i] -= a * v[i];
        al[m] = a;
        beta = norm2(n, w);
        be[m++] = beta;
        int done = beta <= 1e-13 * (fabs(a) + 1e-300) || m == n || k + 1 == max_steps;
        if (m % 5 == 0 || done) {
            tridiag_extremes(m, al, be, lmin, lmax);
            double tol = 1e-10 * (fabs(*lmin) + fabs(*lmax));
            stable = (fabs(*lmin - prev_lo) < tol && fabs(*lmax - prev_hi) < tol) ? stable + 1 : 0;
            prev_lo = *lmin;
            prev_hi = *lmax;
            if (stable >= 2) done = 1;
        }
        if (done) break;
        for (int i = 0; i < n; i++) {
            vp[i] = v[i];
            v[i] = w[i] / beta;
        }
    }
    *steps = m;
    free(v), free(vp), free(w), free(al), free(be);
    return HR_OK;
}

/* Growth rate of ||op^k x||: the spectral radius for a dominant eigenvalue, averaged
 * over the second half of the run so oscillating (complex) modes average out. */
static hr_status power_rate(const op *o, int steps, double *rate)
{
    const int n = o->A->n_rows;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    if (!x || !y) {
        free(x), free(y);
        return HR_ERR_NO_MEMORY;
    }
    uint64_t seed = 777;
    for (int i = 0; i < n; i++)
        x[i] = 0.5 + hr_uniform01(&seed);
    double logsum = 0.0, nx = norm2(n, x);
    int counted = 0;
    for (int k = 0; k < steps; k++) {
        for (int i = 0; i < n; i++)
            x[i] /= nx;
        apply(o, x, y);
        double ny = norm2(n, y);
        if (ny == 0.0 || !isfinite(ny)) {
            logsum = ny == 0.0 ? -INFINITY : INFINITY;
            counted = 1;
            break;
        }
        if (k >= steps / 2) {
            logsum += log(ny);
            counted++;
        }
        double *t = x;
        x = y;
        y = t;
        nx = ny;
    }
    *rate = exp(logsum / (counted ? counted : 1));
    free(x), free(y);
    return HR_OK;
}

hr_status hr_sparse_spectral(const hr_csr *A, int max_steps, hr_spectral *out)
{
    if (!A || !out) return HR_ERR_INVALID_ARG;
    HR_TRY(hr_csr_check_diagonal(A, NULL));
    if (max_steps <= 0) max_steps = 300;
    const int n = A->n_rows;
    memset(out, 0, sizeof *out);
    out->lambda_min = out->lambda_max = out->tau = NAN;
    int pos_diag = 1;
    for (int i = 0; i < n && pos_diag; i++)
        pos_diag = A->val[A->diag[i]] > 0.0;
    out->symmetric = pos_diag && hr_csr_is_symmetric(A);
    double *dis = malloc((size_t)n * sizeof *dis);
    if (!dis) return HR_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++)
        dis[i] = 1.0 / sqrt(fabs(A->val[A->diag[i]]));
    hr_status st;
    if (out->symmetric) {
        op o0 = {A, dis, 0}, o1 = {A, dis, 1};
        double lo, hi, lo1, hi1;
        int s0, s1;
        st = lanczos(&o0, max_steps, &lo, &hi, &s0);
        if (st == HR_OK) st = lanczos(&o1, max_steps, &lo1, &hi1, &s1);
        if (st == HR_OK) {
            out->lambda_min = lo;
            out->lambda_max = hi;
            out->tau = 2.0 / (lo + hi);
            out->rho_B = fmax(fabs(1.0 - lo), fabs(1.0 - hi));
            out->rho_absB = fmax(fabs(lo1), fabs(hi1)); /* Perron root: the largest */
            out->steps = s0 > s1 ? s0 : s1;
        }
    } else {
        op o2 = {A, dis, 2}, o3 = {A, dis, 3};
        double r3 = NAN;
        st = power_rate(&o2, 2 * max_steps, &out->rho_B);
        if (st == HR_OK) st = power_rate(&o3, 2 * max_steps, &r3);
        out->rho_absB = r3 - 1.0; /* the +I shift makes the Perron root strictly dominant */
        out->steps = 2 * max_steps;
    }
    free(dis);
    return st;
}
