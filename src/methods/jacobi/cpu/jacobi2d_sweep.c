/* Instantiates the CPU sweep for float and double from one source. */
#include "core/stencil.h"
#include "methods/jacobi/cpu/jacobi2d_cpu.h"

#define T           float
#define HR_FN(name) name##_f32
#include "methods/jacobi/cpu/jacobi2d_sweep_impl.h"
#undef T
#undef HR_FN

#define T           double
#define HR_FN(name) name##_f64
#include "methods/jacobi/cpu/jacobi2d_sweep_impl.h"
#undef T
#undef HR_FN
