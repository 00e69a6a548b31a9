#!/usr/bin/env bash
# The library and the command build and run without hwloc, libpng and CUDA: a solve runs,
# a .png output is refused with a clear message (exit 2), `--bind core` still binds (by
# logical CPU), and the formats that need nothing (.raw, .vti) work.
#   minimal_build.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
cmake -S "$src" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETRELAX_WITH_HWLOC=OFF -DHETRELAX_WITH_PNG=OFF \
  -DHETRELAX_ENABLE_CUDA=OFF -DHETRELAX_ENABLE_MPI=OFF -DHETRELAX_BUILD_TESTS=OFF -DHETRELAX_BUILD_BENCH=OFF \
  >"$work.log" 2>&1 || { cat "$work.log"; exit 1; }
grep -q "hwloc=.*png=" "$work.log"
cmake --build "$work" --target hetrelax-cli example_poisson >/dev/null
cli=$work/hetrelax
"$work/example_poisson" | tail -1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$cli" poisson2d --n 33 --iters 20 --output "$T/u.raw" --quiet --no-bandwidth >/dev/null
test -s "$T/u.raw"
set +e
"$cli" poisson2d --n 33 --iters 20 --output "$T/u.png" --quiet --no-bandwidth 2>"$T/err"
rc=$?
set -e
cat "$T/err"
[ $rc -ne 0 ] && grep -qi "png" "$T/err" || { echo "a .png output without libpng must fail with a message"; exit 1; }
# binding needs no hwloc (sched_setaffinity by logical CPU): the run succeeds
"$cli" poisson2d --n 33 --iters 20 --bind core --threads 2 --quiet --no-bandwidth >/dev/null
echo "minimal build test: ok"
