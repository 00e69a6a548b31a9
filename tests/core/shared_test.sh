#!/usr/bin/env bash
# The library builds shared (BUILD_SHARED_LIBS=ON): the example links against libhetrelax.so
# (public header only) and runs. CPU only and only the targets needed, to stay fast; the
# build is kept for exports_test.sh and install_test.sh (the ctest fixture hr_shared_build).
#   shared_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
cmake -S "$src" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DHETRELAX_ENABLE_CUDA=OFF -DHETRELAX_BUILD_TESTS=OFF -DHETRELAX_BUILD_BENCH=OFF >"$work.log" 2>&1 ||
  { cat "$work.log"; exit 1; }
targets=(hetrelax example_poisson)
grep -q "mpi=ON" "$work.log" && targets+=(hetrelax_mpi)
# the Python package is installed with the rest (install_test.sh, python/tests/install_test.sh)
grep -q "python=ON" "$work.log" && targets+=(hetrelax_python)
cmake --build "$work" --target "${targets[@]}" >/dev/null
test -f "$work/libhetrelax.so"
ldd "$work/example_poisson" | grep 'libhetrelax\.so' >/dev/null || { echo "example is not linked against the shared library"; exit 1; }
"$work/example_poisson" | tail -1
echo "example $(stat -c %s "$work/example_poisson") bytes, libhetrelax.so $(stat -L -c %s "$work/libhetrelax.so") bytes"
echo "shared library test: ok"
