/*
 * Type-generic bodies of the multigrid slice operators; included by mg_ops.c once per
 * precision with T and FN(name) defined. Every operator visits the interior rows of
 * outer slices [s0, s1) of the grid it writes (rows in 2-D, planes in 3-D).
 */

/* h^2 f at point x of a row: the level's h^2 f grid, or the inline spike (or zero). */
static inline T FN(h2f_spike)(const hr_rhs_view *v, int i, int j, int k)
{
    return HR_IS_SPIKE(*v, i, j, k) ? (T)HR_SPIKE_H2F : (T)0;
}

/* Red-black Gauss-Seidel, one colour, in place: points with (i + j + k) % 2 == color. A
 * stride-2 stencil loop vectorises badly, so each chunk of a row is computed at every point
 * into a buffer (contiguous, vectorised) and only the colour's points are stored back. That
 * reads the colour's own points of the neighbouring slices, so on a worker's first and last
 * slices (whose neighbours another worker updates at the same time) `strict` takes the
 * plain stride-2 loop, which reads only the other colour. Both give the same values. */
#define HR_MG_RB_CHUNK 512
static void FN(redblack)(const mg_level *L, hr_grid *g, int color, int strict, int s0, int s1)
{
    const hr_grid_layout *l = &g->l;
    const size_t p = l->pitch, q = l->plane;
    T *u = (T *)hr_grid_origin(g);
    const T *hf = (const T *)L->rhs.hf;
    const hr_rhs_view v = L->rhs;
    T buf[HR_MG_RB_CHUNK];
    FOR_ROWS(l, s0, s1, k, i)
    {
        const size_t r = (size_t)k * q + (size_t)i * p;
        T *c = u + r;
        const T *n = c - p, *s = c + p, *d = c - q, *up = c + q, *f = hf ? hf + r : NULL;
        const int par = (color - i - k) & 1; /* the colour's columns have j % 2 == par */
        if (strict) {
            /* reads only the other colour: a neighbour slice may be another worker's */
            const int j1 = par ? 1 : 2;
            for (int j = j1; j <= l->nx; j += 2) {
                const T h2f = f ? f[j] : (T)0;
                c[j] = l->dim == 3 ? HR_JACOBI7F(T, c[j - 1], c[j + 1], n[j], s[j], d[j], up[j], h2f)
                                   : HR_JACOBI5F(T, n[j], s[j], c[j - 1], c[j + 1], h2f);
            }
        }
        for (int j0 = 1; !strict && j0 <= l->nx; j0 += HR_MG_RB_CHUNK) {
            const int len = l->nx - j0 + 1 < HR_MG_RB_CHUNK ? l->nx - j0 + 1 : HR_MG_RB_CHUNK;
            const T *restrict cc = c + j0, *restrict nn = n + j0, *restrict ss = s + j0;
            T *restrict b = buf;
            if (l->dim == 3) {
                const T *restrict dd = d + j0, *restrict uu = up + j0;
                if (f)
                    for (int t = 0; t < len; t++)
                        b[t] = HR_JACOBI7F(T, cc[t - 1], cc[t + 1], nn[t], ss[t], dd[t], uu[t], f[j0 + t]);
                else
                    for (int t = 0; t < len; t++)
                        b[t] = HR_JACOBI7(T, cc[t - 1], cc[t + 1], nn[t], ss[t], dd[t], uu[t]);
            } else {
                if (f)
                    for (int t = 0; t < len; t++)
                        b[t] = HR_JACOBI5F(T, nn[t], ss[t], cc[t - 1], cc[t + 1], f[j0 + t]);
                else
                    for (int t = 0; t < len; t++)
                        b[t] = HR_JACOBI5(T, nn[t], ss[t], cc[t - 1], cc[t + 1]);
            }
            T *restrict out = c + j0;
            const int p0 = (j0 & 1) == par ? 0 : 1; /* offset of the colour's first point */
            /* only the colour's points: the other colour is being read by the neighbours */
            for (int t = p0; t < len; t += 2)
                out[t] = b[t];
        }
        if (!f && i == v.spike_i && k == v.spike_k && ((v.spike_j & 1) == par)) {
            const int j = v.spike_j;
            c[j] = l->dim == 3 ? HR_JACOBI7F(T, c[j - 1], c[j + 1], n[j], s[j], d[j], up[j],
                                             FN(h2f_spike)(&v, i, j, k))
                               : HR_JACOBI5F(T, n[j], s[j], c[j - 1], c[j + 1], FN(h2f_spike)(&v, i, j, k));
        }
    }
}

/* One Chebyshev step after jx = J(x): d = a d + b (jx - x), x += d (a = 0: d not read). */
static void FN(cheby)(hr_grid *xg, const hr_grid *jg, hr_grid *dg, double a, double b, int s0, int s1)
{
    const hr_grid_layout *l = &xg->l;
    T *x = (T *)hr_grid_origin(xg), *d = (T *)hr_grid_origin(dg);
    const T *jx = (const T *)hr_grid_origin(jg);
    const T ta = (T)a, tb = (T)b;
    FOR_ROWS(l, s0, s1, k, i)
    {
        const size_t r = (size_t)k * l->plane + (size_t)i * l->pitch;
        T *restrict xr = x + r, *restrict dr = d + r;
        const T *restrict jr = jx + r;
        if (a == 0.0)
            for (int j = 1; j <= l->nx; j++) {
                dr[j] = tb * (jr[j] - xr[j]);
                xr[j] = xr[j] + dr[j];
            }
        else
            for (int j = 1; j <= l->nx; j++) {
                dr[j] = ta * dr[j] + tb * (jr[j] - xr[j]);
                xr[j] = xr[j] + dr[j];
            }
    }
}

/* r = h^2 f - h^2 A u (the stencil's residual, in T; no norms). */
static void FN(resid)(const mg_level *L, const hr_grid *ug, hr_grid *rg, int s0, int s1)
{
    const hr_grid_layout *l = &ug->l;
    const size_t p = l->pitch, q = l->plane;
    const T *u = (const T *)hr_grid_origin(ug), *hf = (const T *)L->rhs.hf;
    T *rv = (T *)hr_grid_origin(rg);
    const T diag = l->dim == 3 ? (T)6 : (T)4;
    const hr_rhs_view v = L->rhs;
    FOR_ROWS(l, s0, s1, k, i)
    {
        const size_t r = (size_t)k * q + (size_t)i * p;
        const T *restrict c = u + r, *restrict n = c - p, *restrict s = c + p;
        T *restrict o = rv + r;
        if (l->dim == 3) {
            const T *restrict d = c - q, *restrict up = c + q;
            if (hf)
                for (int j = 1; j <= l->nx; j++)
                    o[j] = hf[r + j] -
                           (diag * c[j] - (((c[j - 1] + c[j + 1]) + (n[j] + s[j])) + (d[j] + up[j])));
            else
                for (int j = 1; j <= l->nx; j++)
                    o[j] = -(diag * c[j] - (((c[j - 1] + c[j + 1]) + (n[j] + s[j])) + (d[j] + up[j])));
        } else {
            if (hf)
                for (int j = 1; j <= l->nx; j++)
                    o[j] = hf[r + j] - (diag * c[j] - ((n[j] + s[j]) + (c[j - 1] + c[j + 1])));
            else
                for (int j = 1; j <= l->nx; j++)
                    o[j] = -(diag * c[j] - ((n[j] + s[j]) + (c[j - 1] + c[j + 1])));
        }
        if (!hf && i == v.spike_i && k == v.spike_k) o[v.spike_j] += (T)HR_SPIKE_H2F;
    }
}

/* out = h^2 A in: the operator on a correction (its ring is zero). */
static void FN(apply)(const hr_grid *ig, hr_grid *og, int s0, int s1)
{
    const hr_grid_layout *l = &ig->l;
    const size_t p = l->pitch, q = l->plane;
    const T *u = (const T *)hr_grid_origin(ig);
    T *out = (T *)hr_grid_origin(og);
    const T diag = l->dim == 3 ? (T)6 : (T)4;
    FOR_ROWS(l, s0, s1, k, i)
    {
        const size_t r = (size_t)k * q + (size_t)i * p;
        const T *restrict c = u + r, *restrict n = c - p, *restrict s = c + p;
        T *restrict o = out + r;
        if (l->dim == 3) {
            const T *restrict d = c - q, *restrict up = c + q;
            for (int j = 1; j <= l->nx; j++)
                o[j] = diag * c[j] - (((c[j - 1] + c[j + 1]) + (n[j] + s[j])) + (d[j] + up[j]));
        } else {
            for (int j = 1; j <= l->nx; j++)
                o[j] = diag * c[j] - ((n[j] + s[j]) + (c[j - 1] + c[j + 1]));
        }
    }
}

/* Full weighting of the fine grid `src` onto coarse h^2 f: 4 x (1/16 [1 2 1]x[1 2 1]) in
 * 2-D, 4 x 1/64 [1 2 1]^3 in 3-D (h doubles, so h^2 f gains a factor 4). */
static void FN(restrict)(const hr_grid *src, hr_grid *dst, int s0, int s1)
{
    const hr_grid_layout *lf = &src->l, *lc = &dst->l;
    const T *f = (const T *)hr_grid_origin(src);
    T *c = (T *)hr_grid_origin(dst);
    const T scale = lc->dim == 3 ? (T)(1.0 / 16.0) : (T)0.25;
    const int nk = lc->dim == 3 ? 3 : 1;
    FOR_ROWS(lc, s0, s1, K, I)
    {
        T *restrict out = c + (size_t)K * lc->plane + (size_t)I * lc->pitch;
        const T *rows[9];
        T w[9];
        int nr = 0;
        for (int dk = 0; dk < nk; dk++)
            for (int di = 0; di < 3; di++) {
                const int kf = lc->dim == 3 ? 2 * K - 1 + dk : 0, iff = 2 * I - 1 + di;
                rows[nr] = f + (size_t)kf * lf->plane + (size_t)iff * lf->pitch;
                w[nr] = (T)((di == 1 ? 2 : 1) * (lc->dim == 3 && dk == 1 ? 2 : 1));
                nr++;
            }
        for (int J = 1; J <= lc->nx; J++) {
            const int j = 2 * J;
            T acc = (T)0;
            for (int m = 0; m < nr; m++)
                acc += w[m] * ((rows[m][j - 1] + rows[m][j + 1]) + (T)2 * rows[m][j]);
            out[J] = scale * acc;
        }
    }
}

/* Bilinear / trilinear prolongation of a coarse correction onto fine slices [s0, s1). */
static void FN(prolong)(const hr_grid *cg, hr_grid *fg, int add, int s0, int s1)
{
    const hr_grid_layout *lc = &cg->l, *lf = &fg->l;
    const T *c = (const T *)hr_grid_origin(cg);
    T *f = (T *)hr_grid_origin(fg);
    FOR_ROWS(lf, s0, s1, k, i)
    {
        /* the coarse rows this fine row lies between, with their weights */
        const T *rows[4];
        T w[4];
        int nr = 0;
        const int nk = lf->dim == 3 && (k & 1) ? 2 : 1, ni = (i & 1) ? 2 : 1;
        for (int a = 0; a < nk; a++)
            for (int b = 0; b < ni; b++) {
                const int kc = lf->dim == 3 ? (k >> 1) + a : 0, ic = (i >> 1) + b;
                rows[nr] = c + (size_t)kc * lc->plane + (size_t)ic * lc->pitch;
                w[nr] = (T)(1.0 / (double)(nk * ni));
                nr++;
            }
        T *restrict out = f + (size_t)k * lf->plane + (size_t)i * lf->pitch;
        T prev = (T)0; /* the coarse column J = 0 is the zero ring */
        for (int J = 0; J <= lc->nx; J++) {
            T next = (T)0;
            for (int m = 0; m < nr; m++)
                next += w[m] * rows[m][J + 1];
            if (J >= 1) out[2 * J] = add ? out[2 * J] + prev : prev;
            const T mid = (T)0.5 * (prev + next);
            out[2 * J + 1] = add ? out[2 * J + 1] + mid : mid;
            prev = next;
        }
    }
}

static void FN(dot)(const hr_grid *xg, const hr_grid *yg, double *part, int s0, int s1)
{
    const hr_grid_layout *l = &xg->l;
    const T *x = (const T *)hr_grid_origin(xg), *y = (const T *)hr_grid_origin(yg);
    for (int s = s0; s < s1; s++) {
        double acc = 0.0;
        FOR_ROWS(l, s, s + 1, k, i)
        {
            const size_t r = (size_t)k * l->plane + (size_t)i * l->pitch;
            for (int j = 1; j <= l->nx; j++)
                acc += (double)x[r + j] * (double)y[r + j];
        }
        part[s] = acc;
    }
}

static void FN(absmax)(const hr_grid *g, double *mx, int s0, int s1)
{
    const hr_grid_layout *l = &g->l;
    const T *x = (const T *)hr_grid_origin(g);
    for (int s = s0; s < s1; s++) {
        double m = 0.0;
        FOR_ROWS(l, s, s + 1, k, i)
        {
            const size_t r = (size_t)k * l->plane + (size_t)i * l->pitch;
            for (int j = 1; j <= l->nx; j++) {
                const double a = fabs((double)x[r + j]);
                if (!(a <= m)) m = a;
            }
        }
        mx[s] = m;
    }
}

static void FN(axpy)(double a, const hr_grid *xg, hr_grid *yg, int s0, int s1)
{
    const hr_grid_layout *l = &xg->l;
    const T *x = (const T *)hr_grid_origin(xg);
    T *y = (T *)hr_grid_origin(yg);
    const T ta = (T)a;
    FOR_ROWS(l, s0, s1, k, i)
    {
        const size_t r = (size_t)k * l->plane + (size_t)i * l->pitch;
        for (int j = 1; j <= l->nx; j++)
            y[r + j] += ta * x[r + j];
    }
}

static void FN(xpay)(const hr_grid *zg, double b, hr_grid *pg, int s0, int s1)
{
    const hr_grid_layout *l = &zg->l;
    const T *z = (const T *)hr_grid_origin(zg);
    T *p = (T *)hr_grid_origin(pg);
    const T tb = (T)b;
    FOR_ROWS(l, s0, s1, k, i)
    {
        const size_t r = (size_t)k * l->plane + (size_t)i * l->pitch;
        for (int j = 1; j <= l->nx; j++)
            p[r + j] = z[r + j] + tb * p[r + j];
    }
}

/* out = h^2 A in and part[s] = in . out per slice (CG's p . A p in one pass). */
static void FN(apply_dot)(const hr_grid *ig, hr_grid *og, double *part, int s0, int s1)
{
    for (int s = s0; s < s1; s++) {
        FN(apply)(ig, og, s, s + 1);
        FN(dot)(ig, og, part, s, s + 1);
    }
}

/* y += (a x) * scale: scale a power of two (1: bitwise the plain axpy) */
static void FN(axpy_scaled)(double a, double scale, const hr_grid *xg, hr_grid *yg, int s0, int s1)
{
    if (scale == 1.0) {
        FN(axpy)(a, xg, yg, s0, s1);
        return;
    }
    const hr_grid_layout *l = &xg->l;
    const T *x = (const T *)hr_grid_origin(xg);
    T *y = (T *)hr_grid_origin(yg);
    const T ta = (T)a;
    FOR_ROWS(l, s0, s1, k, i)
    {
        const size_t r = (size_t)k * l->plane + (size_t)i * l->pitch;
        for (int j = 1; j <= l->nx; j++)
            y[r + j] += (T)((double)(ta * x[r + j]) * scale);
    }
}

/* x += (a p) * xscale, r -= a q, part[s] = r . r per slice (CG's update and residual norm in
 * one pass; xscale undoes the scale of the CG vectors for the unscaled x). */
static void FN(update_dot)(double a, double xscale, const hr_grid *pg, const hr_grid *qg, hr_grid *xg,
                           hr_grid *rg, double *part, int s0, int s1)
{
    for (int s = s0; s < s1; s++) {
        FN(axpy_scaled)(a, xscale, pg, xg, s, s + 1);
        FN(axpy)(-a, qg, rg, s, s + 1);
        FN(dot)(rg, rg, part, s, s + 1);
    }
}
