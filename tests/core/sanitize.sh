#!/usr/bin/env bash
# Builds the CPU library and its tests with a sanitizer in a separate tree and runs the
# tests of the given labels there. Any sanitizer report fails the run.
#   sanitize.sh SOURCE_DIR BUILD_DIR address|thread LABEL_REGEX [EXCLUDE_REGEX [TARGETS]]
# TARGETS (space-separated): build only these (the tests' executables), not the whole tree
set -euo pipefail
src=$1 dir=$2 kind=$3 labels=$4 exclude=${5:-} targets=${6:-}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$src" -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETRELAX_ENABLE_CUDA=OFF \
  -DHETRELAX_SANITIZE="$kind" -DHETRELAX_BUILD_BENCH=OFF -DHETRELAX_ENABLE_MPI=OFF >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
# shellcheck disable=SC2086
cmake --build "$dir" -j 2 ${targets:+--target $targets} >"$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; exit 1; }
# allocator_may_return_null: the library reports an oversized grid as out of memory
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
cd "$dir"
ctest --output-on-failure -j 2 -L "$labels" -LE "sanitize|gpu|fuzz|bench|install" ${exclude:+-E "$exclude"}
