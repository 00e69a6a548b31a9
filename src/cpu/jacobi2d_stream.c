/*
 * Streaming (non-temporal) store sweep: the new grid is written around the caches, so a
 * sweep moves 8 B per point (single) instead of 12 with write-allocate. Pays off when the
 * grids are larger than the last-level cache (seed 003 uses the same idea for its 3-D
 * CPU kernel). Same arithmetic as the reference sweep, so results are bitwise equal.
 */
#include <immintrin.h>
#include <stdint.h>

#include "common/stencil.h"
#include "cpu/jacobi2d_cpu.h"

#define T           float
#define HR_FN(name) name##_f32
#ifdef __AVX__
#define V       __m256
#define W       8
#define VLOADU  _mm256_loadu_ps
#define VADD    _mm256_add_ps
#define VMUL    _mm256_mul_ps
#define VSET1   _mm256_set1_ps
#define VSTREAM _mm256_stream_ps
#else
#define V       __m128
#define W       4
#define VLOADU  _mm_loadu_ps
#define VADD    _mm_add_ps
#define VMUL    _mm_mul_ps
#define VSET1   _mm_set1_ps
#define VSTREAM _mm_stream_ps
#endif
#include "cpu/jacobi2d_stream_impl.h"
#undef T
#undef HR_FN
#undef V
#undef W
#undef VLOADU
#undef VADD
#undef VMUL
#undef VSET1
#undef VSTREAM

#define T           double
#define HR_FN(name) name##_f64
#ifdef __AVX__
#define V       __m256d
#define W       4
#define VLOADU  _mm256_loadu_pd
#define VADD    _mm256_add_pd
#define VMUL    _mm256_mul_pd
#define VSET1   _mm256_set1_pd
#define VSTREAM _mm256_stream_pd
#else
#define V       __m128d
#define W       2
#define VLOADU  _mm_loadu_pd
#define VADD    _mm_add_pd
#define VMUL    _mm_mul_pd
#define VSET1   _mm_set1_pd
#define VSTREAM _mm_stream_pd
#endif
#include "cpu/jacobi2d_stream_impl.h"
