#!/bin/sh
# rb-mgpu's streaming scheme on 2, 3 and 4 slabs under the host warp emulation, no GPU needed
# (bench/drivers/mgpu_rb2_emu.cpp --quick: about 15 s of CPU; without --quick about a minute of CPU).
#   tests/runtime/cuda/rb_mgpu_emu.sh [OUTDIR]      (from the repository root)
set -eu
out=${1:-build/emu}
mkdir -p "$out"
${CXX:-g++} -std=c++17 -O1 -ffp-contract=off -Isrc -Iinclude -Itests/runtime/cuda bench/drivers/mgpu_rb2_emu.cpp \
    -o "$out/mgpu_rb2_emu"
"$out/mgpu_rb2_emu" --quick
