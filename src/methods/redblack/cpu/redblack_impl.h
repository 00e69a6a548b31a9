/*
 * Type-generic bodies of the red-black colour sweeps; included once per precision by
 * redblack_box.c with T (element type) and HR_FN(name) defined.
 */

/* The new value of point c (in place) from its current neighbours: h^2 f from the grid
 * (hfp non-NULL), the inline spike (spike), or none. Operand order as in the Jacobi kernels. */
#define HR_RB_JAC(T, dim, c, p, q, hfp, spike)                                                               \
    ((dim) == 3                                                                                              \
         ? ((hfp)     ? HR_JACOBI7F(T, (c)[-1], (c)[1], (c)[-(ptrdiff_t)(p)], (c)[p], (c)[-(ptrdiff_t)(q)],  \
                                    (c)[q], *(hfp))                                                          \
            : (spike) ? HR_JACOBI7F(T, (c)[-1], (c)[1], (c)[-(ptrdiff_t)(p)], (c)[p], (c)[-(ptrdiff_t)(q)],  \
                                    (c)[q], (T)HR_SPIKE_H2F)                                                 \
                      : HR_JACOBI7(T, (c)[-1], (c)[1], (c)[-(ptrdiff_t)(p)], (c)[p], (c)[-(ptrdiff_t)(q)],   \
                                   (c)[q]))                                                                  \
         : ((hfp)     ? HR_JACOBI5F(T, (c)[-(ptrdiff_t)(p)], (c)[p], (c)[-1], (c)[1], *(hfp))                \
            : (spike) ? HR_JACOBI5F(T, (c)[-(ptrdiff_t)(p)], (c)[p], (c)[-1], (c)[1], (T)HR_SPIKE_H2F)       \
                      : HR_JACOBI5(T, (c)[-(ptrdiff_t)(p)], (c)[p], (c)[-1], (c)[1])))

/* Points j, j + 2, ... < j1 of row c (element (i, 0, k)), none the spike: one loop per case,
 * branch-free inside so that the compiler vectorises the stride-2 access (reads at odd
 * distances from the writes never alias them). */
#define HR_RB_LOOP(jac_expr)                                                                                 \
    do {                                                                                                     \
        if (weighted)                                                                                        \
            for (; j < j1; j += 2)                                                                           \
                c[j] = HR_WEIGHTED(c[j], jac_expr, c0, c1);                                                  \
        else                                                                                                 \
            for (; j < j1; j += 2)                                                                           \
                c[j] = jac_expr;                                                                             \
    } while (0)

static void HR_FN(rb_run)(const hr_grid_layout *l, T *c, const T *hfr, int j, int j1, T c0, T c1,
                          int weighted)
{
    const size_t p = l->pitch, q = l->plane;
    const T *restrict n = c - p, *restrict s = c + p;
    if (l->dim == 3) {
        const T *restrict d = c - q, *restrict u = c + q;
        if (hfr) {
            const T *restrict hf = hfr;
            HR_RB_LOOP(HR_JACOBI7F(T, c[j - 1], c[j + 1], n[j], s[j], d[j], u[j], hf[j]));
        } else {
            HR_RB_LOOP(HR_JACOBI7(T, c[j - 1], c[j + 1], n[j], s[j], d[j], u[j]));
        }
    } else if (hfr) {
        const T *restrict hf = hfr;
        HR_RB_LOOP(HR_JACOBI5F(T, n[j], s[j], c[j - 1], c[j + 1], hf[j]));
    } else {
        HR_RB_LOOP(HR_JACOBI5(T, n[j], s[j], c[j - 1], c[j + 1]));
    }
}
#undef HR_RB_LOOP

/* Points of `colour` in row (i, k), columns [j0, j1); the spike point, if there, on its own. */
static void HR_FN(rb_row)(const hr_rb_args *a, int i, int k, int j0, int j1, int colour)
{
    const hr_grid_layout *l = a->l;
    const size_t p = l->pitch, q = l->plane, r = (size_t)k * q + (size_t)i * p;
    const int weighted = a->omega != 1.0;
    const T c0 = (T)(1.0 - a->omega), c1 = (T)a->omega;
    T *u = (T *)a->u + r;
    const T *hf = a->rhs.hf ? (const T *)a->rhs.hf + r : NULL;
    const int j = j0 + ((j0 + i + k + colour) & 1);
    const int sj = !hf && i == a->rhs.spike_i && k == a->rhs.spike_k ? a->rhs.spike_j : -1;
    if (sj >= j && sj < j1 && ((sj - j) & 1) == 0) {
        HR_FN(rb_run)(l, u, NULL, j, sj, c0, c1, weighted);
        const T jac = HR_RB_JAC(T, l->dim, u + sj, p, q, (const T *)NULL, 1);
        u[sj] = HR_RB_UPDATE(u[sj], jac, c0, c1, weighted);
        HR_FN(rb_run)(l, u, NULL, sj + 2, j1, c0, c1, weighted);
    } else {
        HR_FN(rb_run)(l, u, hf, j, j1, c0, c1, weighted);
    }
}

static void HR_FN(rb_box)(const hr_rb_args *a, const hr_box *b, int colour)
{
    for (int k = b->lo[2]; k < b->hi[2]; k++)
        for (int i = b->lo[1]; i < b->hi[1]; i++)
            HR_FN(rb_row)(a, i, k, b->lo[0], b->hi[0], colour);
}

/* Four rows i..i+3 of plane k, none holding the spike: 4 x 4 mini-tiles, two points of the
 * colour per row each, then the ragged right end row by row. */
static void HR_FN(rb_rows4)(const hr_rb_args *a, int i, int k, int j0, int j1, int colour)
{
    const hr_grid_layout *l = a->l;
    const size_t p = l->pitch, q = l->plane, r = (size_t)k * q + (size_t)i * p;
    const int dim = l->dim, weighted = a->omega != 1.0;
    const T c0 = (T)(1.0 - a->omega), c1 = (T)a->omega;
    T *u = (T *)a->u + r;
    const T *hf = a->rhs.hf ? (const T *)a->rhs.hf + r : NULL;
    /* offset of the colour's first point in rows i, i+1 (rows i+2, i+3 repeat them) */
    const int o0 = (j0 + i + k + colour) & 1, o1 = 1 - o0;
#define HR_RB_AT(row, j)                                                                                     \
    do {                                                                                                     \
        T *c_ = u + (size_t)(row)*p + (j);                                                                   \
        const T jac_ = HR_RB_JAC(T, dim, c_, p, q, hf ? hf + (size_t)(row)*p + (j) : NULL, 0);               \
        *c_ = HR_RB_UPDATE(*c_, jac_, c0, c1, weighted);                                                     \
    } while (0)
    int jj = j0;
    for (; jj + 4 <= j1; jj += 4) {
        HR_RB_AT(0, jj + o0);
        HR_RB_AT(0, jj + o0 + 2);
        HR_RB_AT(1, jj + o1);
        HR_RB_AT(1, jj + o1 + 2);
        HR_RB_AT(2, jj + o0);
        HR_RB_AT(2, jj + o0 + 2);
        HR_RB_AT(3, jj + o1);
        HR_RB_AT(3, jj + o1 + 2);
    }
#undef HR_RB_AT
    for (int rr = 0; rr < 4; rr++)
        HR_FN(rb_row)(a, i + rr, k, jj, j1, colour);
}

static void HR_FN(rb_box_unrolled)(const hr_rb_args *a, const hr_box *b, int colour)
{
    const int spike_k = a->rhs.hf ? -1 : a->rhs.spike_k, spike_i = a->rhs.spike_i;
    for (int k = b->lo[2]; k < b->hi[2]; k++) {
        int i = b->lo[1];
        for (; i + 4 <= b->hi[1]; i += 4) {
            if (k == spike_k && spike_i >= i && spike_i < i + 4) {
                for (int rr = 0; rr < 4; rr++)
                    HR_FN(rb_row)(a, i + rr, k, b->lo[0], b->hi[0], colour);
            } else {
                HR_FN(rb_rows4)(a, i, k, b->lo[0], b->hi[0], colour);
            }
        }
        for (; i < b->hi[1]; i++)
            HR_FN(rb_row)(a, i, k, b->lo[0], b->hi[0], colour);
    }
}
