/*
 * The 5-point Jacobi update, defined once for every kernel (C and CUDA).
 *
 *   u_new(i,j) = 1/4 * ( (u(i-1,j) + u(i+1,j)) + (u(i,j-1) + u(i,j+1)) + h^2 f(i,j) )
 *
 * The order of the additions is part of the definition: every kernel that uses
 * these macros, compiled without floating-point contraction, produces bitwise the
 * same result as the sequential CPU reference. HR_JACOBI5 is the same update with
 * h^2 f = 0 (x + 0 == x exactly), used where the right-hand side is the inline spike.
 */
#ifndef HR_STENCIL_H
#define HR_STENCIL_H

#define HR_JACOBI5(T, un, us, uw, ue)      ((T)0.25 * (((un) + (us)) + ((uw) + (ue))))
#define HR_JACOBI5F(T, un, us, uw, ue, hf) ((T)0.25 * ((((un) + (us)) + ((uw) + (ue))) + (hf)))

/* The spike right-hand side: h^2 f = 1 at one interior point, (c, c) with c = (n+1)/2. */
#define HR_SPIKE_INDEX(n) (((n) + 1) / 2)
#define HR_SPIKE_H2F      1.0

#endif
