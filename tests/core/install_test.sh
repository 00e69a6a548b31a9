#!/usr/bin/env bash
# `cmake --install` puts headers, library, CMake package and pkg-config files in place, and
# programs using only the public headers build against them as users build them, and run:
# plain `pkg-config --cflags --libs hetrelax` against a shared install, `--static` against a
# static one, and find_package(hetrelax) against both. Where MPI is built, the MPI test
# program links the same way through hetrelax_mpi.pc and runs on 2 ranks.
#   install_test.sh SOURCE_DIR BUILD_DIR [SHARED_BUILD_DIR]
set -euo pipefail
src=$1 builds=("$2")
[ $# -ge 3 ] && builds+=("$3")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mpiexec=${HR_MPIEXEC:-mpiexec}

i=0
for build in "${builds[@]}"; do
    i=$((i + 1))
    p=$T/prefix$i
    cmake --install "$build" --prefix "$p" >/dev/null
    pc=$(find "$p" -path '*/pkgconfig/hetrelax.pc' | head -1)
    test -n "$pc"
    lib=$(cd "$(dirname "$pc")/.." && pwd)
    test -f "$p/include/hetrelax/hetrelax.h"
    test -f "$p/include/hetrelax/export.h"
    test -f "$lib/cmake/hetrelax/hetrelaxConfig.cmake"
    test -x "$p/bin/hetrelax"
    # the libraries' dependencies as -L/-l flags, never a library file's path
    if grep -nE '^(Libs|Libs\.private|Requires)[^#]*(/[^ ]*\.(so|a)([. ]|$))' "$lib"/pkgconfig/*.pc; then
        echo "FAIL: a library path in a pkg-config file (above)"
        exit 1
    fi
    if [ -e "$lib/libhetrelax.so" ]; then
        kind=shared static=() rpath=("-Wl,-rpath,$lib")
    else
        kind=static static=(--static) rpath=()
    fi
    export PKG_CONFIG_PATH="$lib/pkgconfig"
    echo "$kind install: pkg-config ${static[*]} --libs hetrelax: $(pkg-config "${static[@]}" --libs hetrelax)"
    # shellcheck disable=SC2046
    cc -o "$T/ex_$kind" "$src/examples/poisson_minimal.c" $(pkg-config --cflags "${static[@]}" --libs hetrelax) "${rpath[@]}"
    "$T/ex_$kind" | tail -1
    if [ $kind = shared ]; then
        ldd "$T/ex_$kind" | grep "$lib/libhetrelax\.so" >/dev/null || { echo "FAIL: not linked against $lib/libhetrelax.so"; exit 1; }
    else
        if ldd "$T/ex_$kind" | grep libhetrelax >/dev/null; then echo "FAIL: a static link needs libhetrelax.so"; exit 1; fi
    fi
    echo "$kind install: example $(stat -c %s "$T/ex_$kind") bytes"
    if [ -f "$lib/pkgconfig/hetrelax_mpi.pc" ]; then
        # test_mpi maps the HETRELAX_* variables of its ctest variants as the command does
        # (tools/tuning_env.c, public API only)
        # shellcheck disable=SC2046
        cc -o "$T/mpi_$kind" "$src/tests/parallel/mpi/test_mpi.c" "$src/tools/tuning_env.c" -I"$src/tools" $(pkg-config --cflags "${static[@]}" --libs hetrelax_mpi) "${rpath[@]}" -lm
        "$mpiexec" -n 2 --oversubscribe "$T/mpi_$kind" solve | tail -1
    fi
    # CMake consumer
    cmake -S "$src/tests/core/consumer" -B "$T/consumer$i" -DCMAKE_PREFIX_PATH="$p" \
        -DEXAMPLE_SOURCE="$src/examples/poisson_minimal.c" >/dev/null
    cmake --build "$T/consumer$i" >/dev/null
    "$T/consumer$i/consumer" | tail -1
done
echo "install test: ok"
