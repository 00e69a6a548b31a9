/*
 * Type-generic body of the CPU async kernels; included once per precision by
 * jacobi2d_async.c with T (element type) and HR_FN(name) (name mangling) defined.
 *
 * Memory model: within a pass a block's edge cells in the shared grid are written by
 * their owner while neighbours read them, on purpose. Every such access is a relaxed
 * C11 atomic (plain loads and stores on x86-64 and AArch64), so the kernels are free
 * of data races in the C11 sense and ThreadSanitizer runs stay meaningful. A thread's
 * own interior cells are touched by it alone and use plain accesses.
 */

static inline T HR_FN(ald)(const T *p)
{
    return atomic_load_explicit((const _Atomic T *)p, memory_order_relaxed);
}

static inline void HR_FN(ast)(T *p, T x)
{
    atomic_store_explicit((_Atomic T *)p, x, memory_order_relaxed);
}

/* One row of the 5-point update, columns 1..bj; sj > 0 puts the spike in column sj.
 * Same operand order as hr_cpu_sweep, so results are bitwise those of cpu-seq. */
static void HR_FN(arow)(const T *restrict up, const T *restrict uc, const T *restrict ud,
                        const T *restrict fr, T *restrict out, int bj, int sj)
{
    if (fr) {
        for (int j = 1; j <= bj; j++)
            out[j] = HR_JACOBI5F(T, up[j], ud[j], uc[j - 1], uc[j + 1], fr[j]);
        return;
    }
    for (int j = 1; j <= bj; j++)
        out[j] = HR_JACOBI5(T, up[j], ud[j], uc[j - 1], uc[j + 1]);
    if (sj >= 1 && sj <= bj)
        out[sj] = HR_JACOBI5F(T, up[sj], ud[sj], uc[sj - 1], uc[sj + 1], (T)HR_SPIKE_H2F);
}

static inline const T *HR_FN(hf_row)(const hr_async_view *v, int i)
{
    return v->hf ? (const T *)v->hf + (size_t)i * v->tp : NULL;
}

/* Writes row i of a tile into g wherever a neighbour reads it ("penultimate fringe"). */
static void HR_FN(publish_row)(const hr_async_view *v, const T *tr, T *g, int i)
{
    T *gr = g + (size_t)i * v->gp;
    if ((i == 1 && v->has_n) || (i == v->bi && v->has_s)) {
        for (int j = 1; j <= v->bj; j++)
            HR_FN(ast)(&gr[j], tr[j]);
        return;
    }
    if (v->has_w) HR_FN(ast)(&gr[1], tr[1]);
    if (v->has_e) HR_FN(ast)(&gr[v->bj], tr[v->bj]);
}

static void HR_FN(publish)(const hr_async_view *v, const T *t, T *g)
{
    for (int i = 1; i <= v->bi; i++)
        HR_FN(publish_row)(v, t + (size_t)i * v->tp, g, i);
}

/* Reads the ring of tile t from g: the neighbours' edges. Sides on the global
 * boundary never change and are read once, by fetch_block. */
static void HR_FN(fetch_ring)(const hr_async_view *v, T *t, const T *g)
{
    const size_t tp = v->tp, gp = v->gp;
    const int bi = v->bi, bj = v->bj;
    if (v->has_n)
        for (int j = 1; j <= bj; j++)
            t[j] = HR_FN(ald)(&g[j]);
    if (v->has_s)
        for (int j = 1; j <= bj; j++)
            t[(size_t)(bi + 1) * tp + j] = HR_FN(ald)(&g[(size_t)(bi + 1) * gp + j]);
    for (int i = 1; i <= bi; i++) {
        if (v->has_w) t[(size_t)i * tp] = HR_FN(ald)(&g[(size_t)i * gp]);
        if (v->has_e) t[(size_t)i * tp + bj + 1] = HR_FN(ald)(&g[(size_t)i * gp + bj + 1]);
    }
}

/* Fetches the block and its ring (corners are never read by the 5-point update). */
static void HR_FN(fetch_block)(const hr_async_view *v, T *t, const T *g)
{
    const size_t tp = v->tp, gp = v->gp;
    const int bi = v->bi, bj = v->bj;
    for (int i = 1; i <= bi; i++)
        memcpy(t + (size_t)i * tp + 1, g + (size_t)i * gp + 1, (size_t)bj * sizeof(T));
    if (!v->has_n) memcpy(t + 1, g + 1, (size_t)bj * sizeof(T));
    if (!v->has_s)
        memcpy(t + (size_t)(bi + 1) * tp + 1, g + (size_t)(bi + 1) * gp + 1, (size_t)bj * sizeof(T));
    for (int i = 1; i <= bi; i++) {
        if (!v->has_w) t[(size_t)i * tp] = g[(size_t)i * gp];
        if (!v->has_e) t[(size_t)i * tp + bj + 1] = g[(size_t)i * gp + bj + 1];
    }
    HR_FN(fetch_ring)(v, t, g);
}

/* Copies the ring of a into b ("copy just the fringes to B2"). */
static void HR_FN(copy_ring)(const hr_async_view *v, T *b, const T *a)
{
    const size_t tp = v->tp;
    const int bi = v->bi, bj = v->bj;
    memcpy(b + 1, a + 1, (size_t)bj * sizeof(T));
    memcpy(b + (size_t)(bi + 1) * tp + 1, a + (size_t)(bi + 1) * tp + 1, (size_t)bj * sizeof(T));
    for (int i = 1; i <= bi; i++) {
        b[(size_t)i * tp] = a[(size_t)i * tp];
        b[(size_t)i * tp + bj + 1] = a[(size_t)i * tp + bj + 1];
    }
}

/* One Jacobi sweep of the block from tile src into dst (pitch dp: a tile or the output
 * grid). With pub set, each row's fringe goes to pub as soon as the row is done. */
static void HR_FN(sweep)(const hr_async_view *v, const T *src, T *dst, size_t dp, T *pub)
{
    const size_t tp = v->tp;
    for (int i = 1; i <= v->bi; i++) {
        T *out = dst + (size_t)i * dp;
        HR_FN(arow)
        (src + (size_t)(i - 1) * tp, src + (size_t)i * tp, src + (size_t)(i + 1) * tp, HR_FN(hf_row)(v, i),
         out, v->bj, i == v->si ? v->sj : 0);
        if (pub) HR_FN(publish_row)(v, out, pub, i);
    }
}

/* async0-2, one pass of k sweeps (figures 7-9): fetch into B1, copy the ring to B2,
 * k - 1 local sweeps alternating B1 and B2, then one Jacobi step into the output grid.
 * async0 writes the penultimate fringe after each local sweep and then fetches the
 * ring: the phases the figure separates with local syncs. async1 drops those syncs:
 * on one CPU thread that means the phases are no longer separate, and each row's
 * fringe is written the moment it is computed. async2 exchanges nothing inside the pass. */
static void HR_FN(pass_tiles)(const hr_async_view *v, int variant, int k)
{
    T *b[2] = {(T *)v->tile[0], (T *)v->tile[1]};
    T *in = (T *)v->gin;
    HR_FN(fetch_block)(v, b[0], in);
    if (k > 1) HR_FN(copy_ring)(v, b[1], b[0]);
    int c = 0;
    for (int s = 1; s < k; s++) {
        T *src = b[c], *dst = b[1 - c];
        HR_FN(sweep)(v, src, dst, v->tp, variant == HR_ASYNC1 ? in : NULL);
        if (variant == HR_ASYNC0) HR_FN(publish)(v, dst, in);
        if (variant != HR_ASYNC2) HR_FN(fetch_ring)(v, dst, in);
        c = 1 - c;
    }
    HR_FN(sweep)(v, b[c], (T *)v->gout, v->gp, NULL);
}

/* async3, one pass of k sweeps (figure 10) on the single shared grid g: fetch into B,
 * k - 1 in-place sweeps each followed by the fringe write and fetch, then a Jacobi step
 * from B back into g. In place, row by row: a row uses the already updated row above
 * and the old values of its own row and the row below, so the row loop stays
 * vectorised (point-wise Gauss-Seidel would serialise it). */
static void HR_FN(pass_inplace)(const hr_async_view *v, int k)
{
    T *b = (T *)v->tile[0], *g = (T *)v->gin, *row = (T *)v->row;
    const size_t tp = v->tp;
    const int bi = v->bi, bj = v->bj;
    HR_FN(fetch_block)(v, b, g);
    for (int s = 1; s < k; s++) {
        for (int i = 1; i <= bi; i++) {
            T *bc = b + (size_t)i * tp;
            HR_FN(arow)(bc - tp, bc, bc + tp, HR_FN(hf_row)(v, i), row, bj, i == v->si ? v->sj : 0);
            memcpy(bc + 1, row + 1, (size_t)bj * sizeof(T));
        }
        HR_FN(publish)(v, b, g);
        HR_FN(fetch_ring)(v, b, g);
    }
    /* the final Jacobi step: neighbours read the edge cells now, so those are atomic */
    const int lo = v->has_w ? 2 : 1, hi = v->has_e ? bj - 1 : bj;
    for (int i = 1; i <= bi; i++) {
        const T *bc = b + (size_t)i * tp;
        HR_FN(arow)(bc - tp, bc, bc + tp, HR_FN(hf_row)(v, i), row, bj, i == v->si ? v->sj : 0);
        const int full = (i == 1 && v->has_n) || (i == bi && v->has_s);
        if (!full && hi >= lo)
            memcpy(g + (size_t)i * v->gp + lo, row + lo, (size_t)(hi - lo + 1) * sizeof(T));
        HR_FN(publish_row)(v, row, g, i);
    }
}
