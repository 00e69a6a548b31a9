#!/bin/sh
# Builds and runs the host emulations of rb-tuned (rb_stream_emu.cpp) and the 3-D `tuned`
# kernel (tuned3d_emu.cpp): no GPU needed (a C++17 compiler; about 15 s on 2 cores).
#   tests/runtime/cuda/emu_build.sh [OUTDIR]      (from the repository root)
set -eu
out=${1:-build/emu}
mkdir -p "$out"
# the 3-D kernel's text, from its comment line to the launcher that follows it
sed -n '/^\/\* R rows of V columns per thread/,/^template <typename T, bool W, int R> static cudaError_t go_tuned_r/p' \
    src/methods/jacobi/cuda/jacobi3d.cu | sed '$d' > "$out/tuned3d_kernel.inc"
flags="-std=c++17 -O1 -ffp-contract=off -Isrc -Iinclude -I$out -Itests/runtime/cuda"
${CXX:-g++} $flags tests/runtime/cuda/rb_stream_emu.cpp -o "$out/rb_stream_emu"
${CXX:-g++} $flags tests/runtime/cuda/tuned3d_emu.cpp -o "$out/tuned3d_emu"
"$out/rb_stream_emu"
"$out/tuned3d_emu"
