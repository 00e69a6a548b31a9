/*
 * The stencils, defined once for every kernel (C and CUDA).
 *
 * 2-D, 5 points:  u'(i,j)   = 1/4 * ( (N + S) + (W + E) + h^2 f )
 * 3-D, 7 points:  u'(i,j,k) = 1/6 * ( ((W + E) + (N + S)) + (D + U) + h^2 f )
 * weighted:       u'' = (1 - omega) u + omega u'          (omega = 1: plain Jacobi)
 *
 * N/S are rows i-1/i+1, W/E columns j-1/j+1, D/U planes k-1/k+1. The order of the
 * additions is part of the definition: every kernel that uses these macros, compiled
 * without floating-point contraction (-ffp-contract=off, CUDA -fmad=false), produces
 * bitwise the same result as the sequential CPU reference. The *F forms add h^2 f; the
 * plain forms are the same update with h^2 f = 0 (x + 0 == x exactly), used where the
 * right-hand side is zero or the inline spike.
 *
 * Residual (for the norms): r = h^2 f - h^2 A u with h^2 A u = 2d u - (neighbours), and
 * b = h^2 f plus the Dirichlet boundary values that enter the row: ||r|| / ||b|| is the
 * relative residual of A u = b.
 */
#ifndef HR_STENCIL_H
#define HR_STENCIL_H

#define HR_JACOBI5(T, un, us, uw, ue)      ((T)0.25 * (((un) + (us)) + ((uw) + (ue))))
#define HR_JACOBI5F(T, un, us, uw, ue, hf) ((T)0.25 * ((((un) + (us)) + ((uw) + (ue))) + (hf)))

/* 1/6 rounded to T: a multiply, as on the GPU (a divide would be no more exact). */
#define HR_SIXTH(T) ((T)(1.0 / 6.0))
#define HR_JACOBI7(T, uw, ue, un, us, ud, uu)                                                                \
    (HR_SIXTH(T) * ((((uw) + (ue)) + ((un) + (us))) + ((ud) + (uu))))
#define HR_JACOBI7F(T, uw, ue, un, us, ud, uu, hf)                                                           \
    (HR_SIXTH(T) * (((((uw) + (ue)) + ((un) + (us))) + ((ud) + (uu))) + (hf)))

/* The weighted update: c0 = (T)(1 - omega), c1 = (T)omega, both rounded once by the caller. */
#define HR_WEIGHTED(u, jac, c0, c1) ((c0) * (u) + (c1) * (jac))

/* Red-black Gauss-Seidel / SOR (in place). A point of colour c = (i + j + k) & 1 (k = 0 in
 * 2-D; colour 0 first) is replaced by HR_RB_UPDATE of its own current value and jac, the
 * Jacobi form above (HR_JACOBI5/5F/7/7F, same operand order) of its current neighbours, which
 * are all of the other colour. weighted = (omega != 1): HR_WEIGHTED with c0 = (T)(1 - omega),
 * c1 = (T)omega; omega 1: jac itself (plain Gauss-Seidel, bitwise the unweighted form).
 * The red-black report's update 0.2 (u + N + S + W + E) is omega = 0.8 with f = 0: 0.2 u + 0.8 (N+S+W+E) / 4,
 * equal in exact arithmetic; in floating point this order (0.2 u + 0.8 (0.25 ((N+S) + (W+E))))
 * differs from the seed's left-to-right sum by rounding only (tests/methods/redblack/test_redblack.c). */
#define HR_RB_COLOUR(i, j, k)                  ((int)(((i) + (j) + (k)) & 1))
#define HR_RB_UPDATE(u, jac, c0, c1, weighted) ((weighted) ? HR_WEIGHTED(u, jac, c0, c1) : (jac))

/* The spike right-hand side: h^2 f = 1 at one interior point, the centre of each axis. */
#define HR_SPIKE_INDEX(n) (((n) + 1) / 2)
#define HR_SPIKE_H2F      1.0

/* The right-hand side as a kernel sees it: an h^2 f grid (same layout as u), or, when hf is
 * NULL, the inline spike at (spike_i, spike_j, spike_k) (spike_i < 0: f = 0 everywhere). */
typedef struct hr_rhs_view {
    const void *hf; /* element (0, 0, 0) of the h^2 f grid, or NULL */
    int spike_i;    /* row, column, plane of the spike (plane 0 in 2-D); -1: no spike */
    int spike_j;
    int spike_k;
} hr_rhs_view;

/* The per-problem hook: is (i, j, k) the inline spike? One definition for every kernel. */
#define HR_IS_SPIKE(v, i, j, k) ((i) == (v).spike_i && (j) == (v).spike_j && (k) == (v).spike_k)

#endif
