#!/usr/bin/env bash
# Builds the CPU library and its tests with a sanitizer in a separate tree and runs the
# tests of the given labels there. Any sanitizer report fails the run.
#   sanitize.sh SOURCE_DIR BUILD_DIR address|thread LABEL_REGEX [EXCLUDE_REGEX]
# With Ninja only the programs the selected tests run are built (read from ctest's own list).
set -euo pipefail
src=$1 dir=$2 kind=$3 labels=$4 exclude=${5:-}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$src" -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETRELAX_ENABLE_CUDA=OFF \
  -DHETRELAX_SANITIZE="$kind" -DHETRELAX_BUILD_BENCH=OFF -DHETRELAX_ENABLE_MPI=OFF >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
: >"$dir.build.log"
select=(-L "$labels" -LE "sanitize|gpu|fuzz|bench|install" ${exclude:+-E "$exclude"})
# The build outputs the selected tests need, one per line: the build tree's paths in their
# commands that are build targets (not, say, a test's output folder), and the names of tests
# that ctest lists without a command (their program is not built yet: the name is then taken
# as its target's name).
needed() {
  (cd "$dir" && ctest -N "${select[@]}" --show-only=json-v1) | python3 -c 'import json, os, sys
d = os.path.realpath(sys.argv[1]) + "/"
known = set(open(sys.argv[2]).read().split())
for t in json.load(sys.stdin)["tests"]:
    if not t.get("command"):
        print(t["name"])
    for a in t.get("command") or []:
        a = os.path.realpath(a) if a.startswith("/") else ""
        if a.startswith(d) and a[len(d):] in known:
            print(a[len(d):])' "$dir" "$dir.targets" | sort -u
}
built=0
if [[ ${#gen[@]} -gt 0 ]]; then
  # with Ninja, only what the selected tests run; two passes, as a second test of one program
  # is listed with its command only once that program exists
  known=$(ninja -C "$dir" -t targets all 2>/dev/null | sed 's/:.*//')
  printf '%s\n' "$known" >"$dir.targets"
  for _ in 1 2; do
    mapfile -t outputs < <(needed | grep -xF "$known")
    [[ ${#outputs[@]} -gt 0 ]] || break
    ninja -C "$dir" -j 2 "${outputs[@]}" >>"$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; exit 1; }
  done
  # done when every selected test now has a command
  [[ -z $(needed | grep -vxF "$known") ]] && built=1
fi
if [[ $built -eq 0 ]]; then
  cmake --build "$dir" -j 2 >>"$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; exit 1; }
fi
# allocator_may_return_null: the library reports an oversized grid as out of memory
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# the tests' exhaustive loops run a fixed one in four of their combinations here
# (tests/sample_util.h): the plain suite runs them all
export HR_TEST_SAMPLE=${HR_TEST_SAMPLE:-4}
cd "$dir"
ctest --output-on-failure -j 2 "${select[@]}"
