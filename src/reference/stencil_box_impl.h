/*
 * Type-generic bodies of the region sweep and residual; included once per precision by
 * stencil_box.c with T (element type) and HR_FN(name) defined.
 */

/* The update at one point from its neighbours (and h^2 f when hf is non-NULL). */
static inline T HR_FN(point)(const hr_grid_layout *l, const T *c, const T *hfp, int spike, T c0, T c1,
                             int weighted)
{
    const size_t p = l->pitch, q = l->plane;
    T jac;
    const T h2f = hfp ? *hfp : (spike ? (T)HR_SPIKE_H2F : (T)0);
    if (l->dim == 3)
        jac = HR_JACOBI7F(T, c[-1], c[1], c[-(ptrdiff_t)p], c[p], c[-(ptrdiff_t)q], c[q], h2f);
    else
        jac = HR_JACOBI5F(T, c[-(ptrdiff_t)p], c[p], c[-1], c[1], h2f);
    return weighted ? HR_WEIGHTED(*c, jac, c0, c1) : jac;
}

/* One row of a 3-D sweep; the compiler vectorises the inner loop. */
static void HR_FN(row7)(const T *restrict c, const T *restrict hf, T *restrict out, size_t p, size_t q,
                        int j0, int j1, T c0, T c1, int weighted)
{
    const T *restrict n = c - p, *restrict s = c + p, *restrict d = c - q, *restrict u = c + q;
    if (hf) {
        if (weighted)
            for (int j = j0; j < j1; j++)
                out[j] = HR_WEIGHTED(c[j], HR_JACOBI7F(T, c[j - 1], c[j + 1], n[j], s[j], d[j], u[j], hf[j]),
                                     c0, c1);
        else
            for (int j = j0; j < j1; j++)
                out[j] = HR_JACOBI7F(T, c[j - 1], c[j + 1], n[j], s[j], d[j], u[j], hf[j]);
    } else {
        if (weighted)
            for (int j = j0; j < j1; j++)
                out[j] = HR_WEIGHTED(c[j], HR_JACOBI7(T, c[j - 1], c[j + 1], n[j], s[j], d[j], u[j]), c0, c1);
        else
            for (int j = j0; j < j1; j++)
                out[j] = HR_JACOBI7(T, c[j - 1], c[j + 1], n[j], s[j], d[j], u[j]);
    }
}

/* One row of a weighted 2-D sweep (the unweighted one is hr_cpu_sweep). */
static void HR_FN(row5w)(const T *restrict c, const T *restrict hf, T *restrict out, size_t p, int j0, int j1,
                         T c0, T c1)
{
    const T *restrict n = c - p, *restrict s = c + p;
    if (hf)
        for (int j = j0; j < j1; j++)
            out[j] = HR_WEIGHTED(c[j], HR_JACOBI5F(T, n[j], s[j], c[j - 1], c[j + 1], hf[j]), c0, c1);
    else
        for (int j = j0; j < j1; j++)
            out[j] = HR_WEIGHTED(c[j], HR_JACOBI5(T, n[j], s[j], c[j - 1], c[j + 1]), c0, c1);
}

static void HR_FN(sweep_box)(const hr_sweep_args *a)
{
    const hr_grid_layout *l = a->l;
    const hr_box *b = &a->box;
    const int weighted = a->omega != 1.0;
    const T c0 = (T)(1.0 - a->omega), c1 = (T)a->omega;
    const T *in = (const T *)a->in;
    T *out = (T *)a->out;
    const T *hf = (const T *)a->rhs.hf;
    const size_t p = l->pitch, q = l->plane;
    if (l->dim == 2 && !weighted) {
        HR_FN(hri_cpu_sweep)(in, out, a->rhs, p, b->lo[1], b->hi[1], b->lo[0], b->hi[0]);
        return;
    }
    for (int k = b->lo[2]; k < b->hi[2]; k++)
        for (int i = b->lo[1]; i < b->hi[1]; i++) {
            const size_t r = (size_t)k * q + (size_t)i * p;
            if (l->dim == 3)
                HR_FN(row7)(in + r, hf ? hf + r : NULL, out + r, p, q, b->lo[0], b->hi[0], c0, c1, weighted);
            else
                HR_FN(row5w)(in + r, hf ? hf + r : NULL, out + r, p, b->lo[0], b->hi[0], c0, c1);
        }
    /* the inline spike: recompute its one point with h^2 f = 1 */
    const hr_rhs_view v = a->rhs;
    if (!hf && v.spike_i >= b->lo[1] && v.spike_i < b->hi[1] && v.spike_j >= b->lo[0] &&
        v.spike_j < b->hi[0] && v.spike_k >= b->lo[2] && v.spike_k < b->hi[2]) {
        const size_t x = (size_t)v.spike_k * q + (size_t)v.spike_i * p + (size_t)v.spike_j;
        out[x] = HR_FN(point)(l, in + x, NULL, 1, c0, c1, weighted);
    }
}

/* Accumulates the residual and right-hand side norms over the box in one pass, plainly
 * (scale 1) or scaled by the given maxima (second pass, when plain squares would overflow
 * or underflow). */
static void HR_FN(resid_pass)(const hr_resid_args *a, double rs, double bs, double *r2, double *b2,
                              double *rmax, double *bmax)
{
    const hr_grid_layout *l = a->l;
    const hr_box *bx = &a->box;
    const T *u = (const T *)a->u;
    const T *hf = (const T *)a->rhs.hf;
    T *rv = (T *)a->r;
    const size_t p = l->pitch, q = l->dim == 3 ? l->plane : 0;
    const double diag = l->dim == 3 ? 6.0 : 4.0;
    const unsigned d = a->dirichlet;
    const int nx = l->nx, ny = l->ny, nz = l->nz;
    double sr = 0.0, sb = 0.0, mr = 0.0, mb = 0.0;
    const double irs = 1.0 / rs, ibs = 1.0 / bs; /* a multiply per point, not a divide */
    for (int k = bx->lo[2]; k < bx->hi[2]; k++)
        for (int i = bx->lo[1]; i < bx->hi[1]; i++)
            for (int j = bx->lo[0]; j < bx->hi[0]; j++) {
                const size_t x = (size_t)k * q + (size_t)i * p + (size_t)j;
                const double f = hf ? (double)hf[x] : (HR_IS_SPIKE(a->rhs, i, j, k) ? HR_SPIKE_H2F : 0.0);
                const double w = u[x - 1], e = u[x + 1], n = u[x - p], s = u[x + p];
                double nb =
                    (j == 1 && (d & HR_FACE_XLO) ? w : 0.0) + (j == nx && (d & HR_FACE_XHI) ? e : 0.0) +
                    (i == 1 && (d & HR_FACE_YLO) ? n : 0.0) + (i == ny && (d & HR_FACE_YHI) ? s : 0.0);
                double au = diag * (double)u[x] - n - s - w - e;
                if (l->dim == 3) {
                    const double dn = u[x - q], up = u[x + q];
                    nb +=
                        (k == 1 && (d & HR_FACE_ZLO) ? dn : 0.0) + (k == nz && (d & HR_FACE_ZHI) ? up : 0.0);
                    au = au - dn - up;
                }
                const double r = f - au, b = f + nb;
                if (rv) rv[x] = (T)r;
                const double ar = fabs(r) * irs, ab = fabs(b) * ibs; /* x * 1.0 == x: the plain pass */
                sr += ar * ar;
                sb += ab * ab;
                if (!(ar <= mr)) mr = ar; /* NaN propagates */
                if (!(ab <= mb)) mb = ab;
            }
    *r2 = sr;
    *b2 = sb;
    *rmax = mr;
    *bmax = mb;
}

static void HR_FN(residual_box)(const hr_resid_args *a, hr_norm2 *rn, hr_norm2 *bn)
{
    double r2, b2, rmax, bmax;
    HR_FN(resid_pass)(a, 1.0, 1.0, &r2, &b2, &rmax, &bmax);
    if (a->rmax) *a->rmax = rmax;
    /* plain squares are exact enough while every value lies in [1e-150, 1e150] */
    const int r_ok = isfinite(r2) && (rmax == 0.0 || rmax >= 1e-150),
              b_ok = isfinite(b2) && (bmax == 0.0 || bmax >= 1e-150);
    if (isnan(rmax) || isnan(bmax) || (r_ok && b_ok)) {
        *rn = (hr_norm2){1.0, isnan(rmax) ? NAN : r2};
        *bn = (hr_norm2){1.0, isnan(bmax) ? NAN : b2};
        return;
    }
    if (isinf(rmax) || isinf(bmax)) {
        *rn = (hr_norm2){1.0, isinf(rmax) ? INFINITY : r2};
        *bn = (hr_norm2){1.0, isinf(bmax) ? INFINITY : b2};
        return;
    }
    hr_resid_args quiet = *a;
    quiet.r = NULL;
    quiet.rmax = NULL;
    const double rs = rmax > 0.0 ? hr_norm2_scale(rmax) : 1.0, bs = bmax > 0.0 ? hr_norm2_scale(bmax) : 1.0;
    HR_FN(resid_pass)(&quiet, rs, bs, &r2, &b2, &rmax, &bmax);
    *rn = (hr_norm2){rmax > 0.0 ? rs : 0.0, r2};
    *bn = (hr_norm2){bmax > 0.0 ? bs : 0.0, b2};
}
