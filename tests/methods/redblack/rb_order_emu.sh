#!/bin/sh
# The red-black GPU host code's ordering without a GPU (tests/methods/redblack/rb_order_emu.cpp): the real
# src/methods/redblack/cuda/redblack_* files with each `kernel<<<grid, block, smem, stream>>>(args)` rewritten
# into emu_launch(...) (perl), compiled against the recording runtime tests/methods/redblack/emu_cuda/
# (a C++17 compiler), run: every unordered pair of conflicting accesses is printed, exit 1.
# About 10 s on 2 cores.
#   tests/methods/redblack/rb_order_emu.sh [OUTDIR]      (from the repository root)
set -eu
out=${1:-build/emu}
src=$out/rb_order/methods/redblack/cuda
mkdir -p "$src"
for f in src/methods/redblack/cuda/redblack_*; do
    # keep the line breaks, so file:line in the reports is the source's
    perl -0pe 's/(\w+(?:<[^;<>]*>)?)(\s*)<<<(.*?)>>>\s*\(/emu_launch(__FILE__, __LINE__, emu_config($3), $1,$2/gs;
               s/#ifdef __CUDACC__/#if 1/g' "$f" > "$src/$(basename "$f")"
done
if grep -n '<<<' "$src"/*; then
    echo "rb_order_emu.sh: a launch was not rewritten" >&2
    exit 1
fi
flags="-std=c++17 -O1 -w -I$out/rb_order -Itests/methods/redblack/emu_cuda -Isrc -Iinclude"
${CXX:-g++} $flags -o "$out/rb_order_emu" tests/methods/redblack/rb_order_emu.cpp \
    tests/methods/redblack/emu_cuda_order.cpp -x c++ "$src/redblack_gpu.cu" "$src/redblack_gpu2.cu"
"$out/rb_order_emu"
