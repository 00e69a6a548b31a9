/* The emulated CUDA runtime's state (tests/methods/mg/emu/cuda_runtime.h). */
#include "cuda_runtime.h"

thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;
emu_graph *emu_capturing = nullptr;
