#!/usr/bin/env bash
# The library also builds shared (BUILD_SHARED_LIBS=ON): the example links against
# libhetrelax.so (public header only) and runs, and the CLI runs a 3-D solve through it.
#   shared_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
cmake -S "$src" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DHETRELAX_ENABLE_CUDA=OFF -DHETRELAX_ENABLE_MPI=OFF -DHETRELAX_BUILD_TESTS=OFF -DHETRELAX_BUILD_BENCH=OFF >/dev/null
cmake --build "$work" --target example_poisson hetrelax-cli >/dev/null
lib=$(ls "$work"/libhetrelax.so* | head -1)
test -n "$lib"
ldd "$work/example_poisson" | grep 'libhetrelax\.so' >/dev/null || { echo "example is not linked against the shared library"; exit 1; }
"$work/example_poisson" | tail -1
"$work/hetrelax" --version
echo "shared library test: ok"
