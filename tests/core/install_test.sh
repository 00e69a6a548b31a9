#!/usr/bin/env bash
# `cmake --install` puts header, library, CMake package and pkg-config file in place, and
# a program using only the public header builds against each and runs.
#   install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cmake --install "$build" --prefix "$T/prefix" >/dev/null
test -f "$T/prefix/include/hetrelax/hetrelax.h"
test -f "$T/prefix/lib/pkgconfig/hetrelax.pc"
test -f "$T/prefix/lib/cmake/hetrelax/hetrelaxConfig.cmake"
test -x "$T/prefix/bin/hetrelax"
# pkg-config consumer
export PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -o "$T/ex_pc" "$src/examples/poisson_minimal.c" $(pkg-config --cflags --libs --static hetrelax)
"$T/ex_pc" | tail -1
# CMake consumer
cmake -S "$src/tests/core/consumer" -B "$T/consumer" -DCMAKE_PREFIX_PATH="$T/prefix" \
  -DEXAMPLE_SOURCE="$src/examples/poisson_minimal.c" >/dev/null
cmake --build "$T/consumer" >/dev/null
"$T/consumer/consumer" | tail -1
echo "install test: ok"
