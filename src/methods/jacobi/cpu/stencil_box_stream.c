/* Instantiates the streaming-store region sweep for float and double (AVX-512, AVX or SSE2
 * vectors, whichever the build targets). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "methods/jacobi/cpu/stencil_box_stream.h"

#define T           float
#define HR_FN(name) name##_f32
#if defined(__AVX512F__)
#define V       __m512
#define W       16
#define VLOADU  _mm512_loadu_ps
#define VADD    _mm512_add_ps
#define VMUL    _mm512_mul_ps
#define VSET1   _mm512_set1_ps
#define VSTREAM _mm512_stream_ps
#elif defined(__AVX__)
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
#include "methods/jacobi/cpu/stencil_box_stream_impl.h"
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
#if defined(__AVX512F__)
#define V       __m512d
#define W       8
#define VLOADU  _mm512_loadu_pd
#define VADD    _mm512_add_pd
#define VMUL    _mm512_mul_pd
#define VSET1   _mm512_set1_pd
#define VSTREAM _mm512_stream_pd
#elif defined(__AVX__)
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
#include "methods/jacobi/cpu/stencil_box_stream_impl.h"

void hri_cpu_sweep_box_stream(const hr_sweep_args *a)
{
    if (hr_box_empty(&a->box)) return;
    if (a->l->esize == 8)
        sweep_box_stream_f64(a);
    else
        sweep_box_stream_f32(a);
}
