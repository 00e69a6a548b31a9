/*
 * Type-generic body of the CPU sweep; included once per precision by
 * jacobi2d_sweep.c with T (element type) and HR_FN(name) (name mangling) defined.
 */
static void HR_FN(rows_plain)(const T *restrict u, T *restrict un, size_t pitch, int i0, int i1, int j0,
                              int j1)
{
    for (int i = i0; i < i1; i++) {
        const T *restrict up = u + (size_t)(i - 1) * pitch;
        const T *restrict uc = u + (size_t)i * pitch;
        const T *restrict ud = u + (size_t)(i + 1) * pitch;
        T *restrict out = un + (size_t)i * pitch;
        for (int j = j0; j < j1; j++)
            out[j] = HR_JACOBI5(T, up[j], ud[j], uc[j - 1], uc[j + 1]);
    }
}

static void HR_FN(rows_rhs)(const T *restrict u, T *restrict un, const T *restrict hf, size_t pitch, int i0,
                            int i1, int j0, int j1)
{
    for (int i = i0; i < i1; i++) {
        const T *restrict up = u + (size_t)(i - 1) * pitch;
        const T *restrict uc = u + (size_t)i * pitch;
        const T *restrict ud = u + (size_t)(i + 1) * pitch;
        const T *restrict fr = hf + (size_t)i * pitch;
        T *restrict out = un + (size_t)i * pitch;
        for (int j = j0; j < j1; j++)
            out[j] = HR_JACOBI5F(T, up[j], ud[j], uc[j - 1], uc[j + 1], fr[j]);
    }
}

void HR_FN(hri_cpu_sweep)(const T *u, T *un, hr_rhs_view rhs, size_t pitch, int i0, int i1, int j0, int j1)
{
    if (i0 >= i1 || j0 >= j1) return;
    if (rhs.hf) {
        HR_FN(rows_rhs)(u, un, (const T *)rhs.hf, pitch, i0, i1, j0, j1);
        return;
    }
    HR_FN(rows_plain)(u, un, pitch, i0, i1, j0, j1);
    const int ci = rhs.spike_i, cj = rhs.spike_j;
    if (rhs.spike_k == 0 && ci >= i0 && ci < i1 && cj >= j0 && cj < j1) {
        const size_t k = (size_t)ci * pitch + (size_t)cj;
        un[k] = HR_JACOBI5F(T, u[k - pitch], u[k + pitch], u[k - 1], u[k + 1], (T)HR_SPIKE_H2F);
    }
}

