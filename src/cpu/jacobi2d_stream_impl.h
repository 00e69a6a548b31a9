/*
 * Type-generic body of the streaming-store sweep; included once per precision by
 * jacobi2d_stream.c with T, HR_FN(name) and the vector macros V, W, VLOADU, VADD, VMUL,
 * VSET1, VSTREAM defined. Same arithmetic, in the same order, as HR_JACOBI5F.
 */
static inline void HR_FN(stream_row)(const T *restrict up, const T *restrict uc, const T *restrict ud,
                                     const T *restrict fr, T *restrict out, int j0, int j1)
{
    int j = j0;
    /* scalar head up to the vector alignment of the output (rows are 128-byte aligned at
     * column 1, so blocks starting at column 1 have no head) */
    for (; j < j1 && ((uintptr_t)(out + j) % (W * sizeof(T))) != 0; j++)
        out[j] = HR_JACOBI5F(T, up[j], ud[j], uc[j - 1], uc[j + 1], fr ? fr[j] : (T)0);
    const V quarter = VSET1((T)0.25);
    for (; j + W <= j1; j += W) {
        V s = VADD(VADD(VLOADU(up + j), VLOADU(ud + j)), VADD(VLOADU(uc + j - 1), VLOADU(uc + j + 1)));
        if (fr) s = VADD(s, VLOADU(fr + j));
        VSTREAM(out + j, VMUL(quarter, s));
    }
    for (; j < j1; j++)
        out[j] = HR_JACOBI5F(T, up[j], ud[j], uc[j - 1], uc[j + 1], fr ? fr[j] : (T)0);
}

void HR_FN(hr_cpu_sweep_stream)(const T *u, T *un, hr_rhs_view rhs, size_t pitch, int i0, int i1, int j0,
                                int j1)
{
    if (i0 >= i1 || j0 >= j1) return;
    const T *hf = (const T *)rhs.hf;
    for (int i = i0; i < i1; i++) {
        const size_t r = (size_t)i * pitch;
        HR_FN(stream_row)(u + r - pitch, u + r, u + r + pitch, hf ? hf + r : NULL, un + r, j0, j1);
    }
    const int ci = rhs.spike_i, cj = rhs.spike_j;
    if (!hf && ci >= i0 && ci < i1 && cj >= j0 && cj < j1) {
        const size_t k = (size_t)ci * pitch + (size_t)cj;
        un[k] = HR_JACOBI5F(T, u[k - pitch], u[k + pitch], u[k - 1], u[k + 1], (T)HR_SPIKE_H2F);
    }
    /* streaming stores are weakly ordered: make them visible before the caller's barrier */
    _mm_sfence();
}
