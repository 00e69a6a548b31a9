/*
 * Type-generic body of the streaming-store region sweep; included once per precision by
 * stencil_box_stream.c with T, HR_FN(name) and the vector macros V, W, VLOADU, VADD, VMUL,
 * VSET1, VSTREAM defined. Every vector expression is the stencil macro's, term by term.
 */

/* One row, 3-D (dim 3) or 2-D: scalar head to the store alignment, streamed vectors, tail. */
static void HR_FN(srow)(int dim, const T *restrict c, const T *restrict hf, T *restrict out, size_t p,
                        size_t q, int j0, int j1, T c0, T c1, int weighted)
{
    const T *restrict n = c - p, *restrict s = c + p, *restrict d = c - q, *restrict u = c + q;
#define HR_SCALAR_AT(j)                                                                                      \
    do {                                                                                                     \
        T jac_; /* the plain forms without hf, as the reference (-0 + 0 is +0) */                            \
        if (dim == 3)                                                                                        \
            jac_ = hf ? HR_JACOBI7F(T, c[(j)-1], c[(j) + 1], n[j], s[j], d[j], u[j], hf[j])                  \
                      : HR_JACOBI7(T, c[(j)-1], c[(j) + 1], n[j], s[j], d[j], u[j]);                         \
        else                                                                                                 \
            jac_ = hf ? HR_JACOBI5F(T, n[j], s[j], c[(j)-1], c[(j) + 1], hf[j])                              \
                      : HR_JACOBI5(T, n[j], s[j], c[(j)-1], c[(j) + 1]);                                     \
        out[j] = weighted ? HR_WEIGHTED(c[j], jac_, c0, c1) : jac_;                                          \
    } while (0)
    int j = j0;
    for (; j < j1 && ((uintptr_t)(out + j) % (W * sizeof(T))) != 0; j++)
        HR_SCALAR_AT(j);
    const V vc0 = VSET1(c0), vc1 = VSET1(c1);
    if (dim == 3) {
        const V sixth = VSET1(HR_SIXTH(T));
        for (; j + W <= j1; j += W) {
            V sum = VADD(VADD(VADD(VLOADU(c + j - 1), VLOADU(c + j + 1)), VADD(VLOADU(n + j), VLOADU(s + j))),
                         VADD(VLOADU(d + j), VLOADU(u + j)));
            if (hf) sum = VADD(sum, VLOADU(hf + j));
            V r = VMUL(sixth, sum);
            if (weighted) r = VADD(VMUL(vc0, VLOADU(c + j)), VMUL(vc1, r));
            VSTREAM(out + j, r);
        }
    } else {
        const V quarter = VSET1((T)0.25);
        for (; j + W <= j1; j += W) {
            V sum = VADD(VADD(VLOADU(n + j), VLOADU(s + j)), VADD(VLOADU(c + j - 1), VLOADU(c + j + 1)));
            if (hf) sum = VADD(sum, VLOADU(hf + j));
            V r = VMUL(quarter, sum);
            if (weighted) r = VADD(VMUL(vc0, VLOADU(c + j)), VMUL(vc1, r));
            VSTREAM(out + j, r);
        }
    }
    for (; j < j1; j++)
        HR_SCALAR_AT(j);
#undef HR_SCALAR_AT
}

static void HR_FN(sweep_box_stream)(const hr_sweep_args *a)
{
    const hr_grid_layout *l = a->l;
    const hr_box *b = &a->box;
    const int weighted = a->omega != 1.0, dim = l->dim;
    const T c0 = (T)(1.0 - a->omega), c1 = (T)a->omega;
    const T *in = (const T *)a->in;
    T *out = (T *)a->out;
    const T *hf = (const T *)a->rhs.hf;
    const size_t p = l->pitch, q = dim == 3 ? l->plane : 0;
    for (int k = b->lo[2]; k < b->hi[2]; k++)
        for (int i = b->lo[1]; i < b->hi[1]; i++) {
            const size_t r = (size_t)k * q + (size_t)i * p;
            HR_FN(srow)(dim, in + r, hf ? hf + r : NULL, out + r, p, q, b->lo[0], b->hi[0], c0, c1, weighted);
        }
    /* streaming stores are weakly ordered: drain them before the ordinary store of the spike
     * (same address) and before the caller's barrier */
    _mm_sfence();
    const hr_rhs_view v = a->rhs;
    if (!hf && v.spike_i >= b->lo[1] && v.spike_i < b->hi[1] && v.spike_j >= b->lo[0] &&
        v.spike_j < b->hi[0] && v.spike_k >= b->lo[2] && v.spike_k < b->hi[2]) {
        const size_t x = (size_t)v.spike_k * q + (size_t)v.spike_i * p + (size_t)v.spike_j;
        const T *c = in + x, one = (T)HR_SPIKE_H2F;
        const T jac = dim == 3
                          ? HR_JACOBI7F(T, c[-1], c[1], c[-(ptrdiff_t)p], c[p], c[-(ptrdiff_t)q], c[q], one)
                          : HR_JACOBI5F(T, c[-(ptrdiff_t)p], c[p], c[-1], c[1], one);
        out[x] = weighted ? HR_WEIGHTED(*c, jac, c0, c1) : jac;
    }
}
