/* The multigrid slice operators for fp32 and fp64 from one source (mg_ops_impl.h). */
#include <string.h>

#include "methods/mg/mg_internal.h"

/* The interior rows (k, i) of outer slices [s0, s1): rows in 2-D (k = 0), planes in 3-D. */
#define FOR_ROWS(l, s0, s1, k, i)                                                                            \
    for (int k = (l)->dim == 3 ? (s0) : 0; k < ((l)->dim == 3 ? (s1) : 1); k++)                              \
        for (int i = (l)->dim == 3 ? 1 : (s0); i < ((l)->dim == 3 ? (l)->ny + 1 : (s1)); i++)

#define T     float
#define FN(x) x##_f32
#include "methods/mg/mg_ops_impl.h"
#undef T
#undef FN

#define T     double
#define FN(x) x##_f64
#include "methods/mg/mg_ops_impl.h"
#undef T
#undef FN

#define DISPATCH(g, name, ...)                                                                               \
    do {                                                                                                     \
        if ((g)->l.esize == 8)                                                                               \
            name##_f64(__VA_ARGS__);                                                                         \
        else                                                                                                 \
            name##_f32(__VA_ARGS__);                                                                         \
    } while (0)

void hri_mg_zero(const mg_level *L, hr_grid *g, int s0, int s1)
{
    (void)L;
    const hr_grid_layout *l = &g->l;
    char *base = hr_grid_origin(g);
    FOR_ROWS(l, s0, s1, k, i)
    memset(base + ((size_t)k * l->plane + (size_t)i * l->pitch + 1) * l->esize, 0, (size_t)l->nx * l->esize);
}

void hri_mg_restrict(const mg_level *fine, const mg_level *coarse, int s0, int s1)
{
    (void)fine;
    hr_grid *dst = (hr_grid *)&coarse->hf;
    DISPATCH(dst, restrict, &fine->r, dst, s0, s1);
}

void hri_mg_prolong(const mg_level *coarse, const hr_grid *uc, const mg_level *fine, hr_grid *uf, int add, int s0,
                int s1)
{
    (void)coarse;
    (void)fine;
    DISPATCH(uf, prolong, uc, uf, add, s0, s1);
}

void hri_mg_redblack(const mg_level *L, hr_grid *u, int color, int strict, int s0, int s1)
{
    DISPATCH(u, redblack, L, u, color, strict, s0, s1);
}

void hri_mg_cheby_update(const mg_level *L, hr_grid *x, const hr_grid *jx, hr_grid *d, double a, double b, int s0,
                     int s1)
{
    (void)L;
    DISPATCH(x, cheby, x, jx, d, a, b, s0, s1);
}

void hri_mg_resid(const mg_level *L, const hr_grid *u, hr_grid *r, int s0, int s1)
{
    DISPATCH(u, resid, L, u, r, s0, s1);
}

void hri_mg_absmax_slices(const mg_level *L, const hr_grid *g, double *mx, int s0, int s1)
{
    (void)L;
    DISPATCH(g, absmax, g, mx, s0, s1);
}

void hri_mg_apply(const mg_level *L, const hr_grid *in, hr_grid *out, int s0, int s1)
{
    (void)L;
    DISPATCH(in, apply, in, out, s0, s1);
}

void hri_mg_dot_slices(const mg_level *L, const hr_grid *x, const hr_grid *y, double *part, int s0, int s1)
{
    (void)L;
    DISPATCH(x, dot, x, y, part, s0, s1);
}

void hri_mg_axpy(const mg_level *L, double a, const hr_grid *x, hr_grid *y, int s0, int s1)
{
    (void)L;
    DISPATCH(x, axpy, a, x, y, s0, s1);
}

void hri_mg_axpy_scaled(const mg_level *L, double a, double scale, const hr_grid *x, hr_grid *y, int s0, int s1)
{
    (void)L;
    DISPATCH(x, axpy_scaled, a, scale, x, y, s0, s1);
}

void hri_mg_xpay(const mg_level *L, const hr_grid *z, double b, hr_grid *p, int s0, int s1)
{
    (void)L;
    DISPATCH(z, xpay, z, b, p, s0, s1);
}

void hri_mg_convert(const mg_level *L, const hr_grid *src, hr_grid *dst, int add, double scale, int s0, int s1)
{
    (void)L;
    const hr_grid_layout *ls = &src->l, *ld = &dst->l;
    const char *sb = hr_grid_origin(src);
    char *db = hr_grid_origin(dst);
    /* scale: a power of two (1: the plain copy, bitwise: x * 1.0 == x) */
    FOR_ROWS(ld, s0, s1, k, i)
    {
        const void *s = sb + ((size_t)k * ls->plane + (size_t)i * ls->pitch) * ls->esize;
        void *d = db + ((size_t)k * ld->plane + (size_t)i * ld->pitch) * ld->esize;
        const int n = ld->nx;
        if (ls->esize == 8 && ld->esize == 8) {
            const double *a = s;
            double *b = d;
            for (int j = 1; j <= n; j++)
                b[j] = add ? b[j] + a[j] * scale : a[j] * scale;
        } else if (ls->esize == 8) {
            const double *a = s;
            float *b = d;
            for (int j = 1; j <= n; j++)
                b[j] = add ? (float)((double)b[j] + a[j] * scale) : (float)(a[j] * scale);
        } else if (ld->esize == 8) {
            const float *a = s;
            double *b = d;
            for (int j = 1; j <= n; j++)
                b[j] = add ? b[j] + (double)a[j] * scale : (double)a[j] * scale;
        } else {
            const float *a = s;
            float *b = d;
            if (scale == 1.0)
                for (int j = 1; j <= n; j++)
                    b[j] = add ? b[j] + a[j] : a[j];
            else /* in double: the scale need not be a float */
                for (int j = 1; j <= n; j++)
                    b[j] = add ? (float)((double)b[j] + (double)a[j] * scale) : (float)((double)a[j] * scale);
        }
    }
}

void hri_mg_residual_slices(const mg_level *L, const hr_grid *u, unsigned faces, hr_grid *r, hr_norm2 *rn,
                        hr_norm2 *bn, double *rmax, int s0, int s1)
{
    for (int s = s0; s < s1; s++) {
        hr_resid_args a = {&u->l,
                           hr_grid_origin(u),
                           L->rhs,
                           mg_slice_box(L, s, s + 1),
                           faces,
                           r ? hr_grid_origin(r) : NULL,
                           rmax ? &rmax[s] : NULL};
        hri_cpu_residual_box(&a, &rn[s], &bn[s]);
    }
}

void hri_mg_apply_dot(const mg_level *L, const hr_grid *in, hr_grid *out, double *part, int s0, int s1)
{
    (void)L;
    DISPATCH(in, apply_dot, in, out, part, s0, s1);
}

void hri_mg_update_dot(const mg_level *L, double a, double xscale, const hr_grid *p, const hr_grid *q, hr_grid *x,
                   hr_grid *r, double *part, int s0, int s1)
{
    (void)L;
    DISPATCH(p, update_dot, a, xscale, p, q, x, r, part, s0, s1);
}
