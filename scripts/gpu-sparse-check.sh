#!/bin/bash
# The GPU check of the sparse methods (issue 6), for the accelerator machine:
#
#   scripts/gpu-sparse-check.sh OUTDIR [single|multi|tests] [sections]
#
# builds with CUDA into build-gsparse (json-c, cmocka and pkgconf come from .deps/ when
# the machine lacks them), runs the GPU sparse tests, compute-sanitizer on small
# solves, a few CLI runs, then the experiments (bench/gpu_sparse_experiments.py) and
# their plots. Writes into OUTDIR (few files: the device tool returns at most 8):
#   gpu-sparse-check.log         everything printed
#   gpu-sparse-results.json      single: sections variation..tune  (multi: gpu-sparse-multi.json)
#   gpu-sparse-plots.tar.gz      the PNG plots
# Exit status: non-zero when the build, a test or an experiment's check fails.
set -u -o pipefail
OUT=${1:?usage: scripts/gpu-sparse-check.sh OUTDIR [single|multi|tests] [sections]}
MODE=${2:-single}
SECTIONS=${3:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/gpu-sparse-check.log") 2>&1
cd "$ROOT"
say() { printf '\n== %s (%s s)\n' "$*" "$SECONDS"; }
status=0

say "machine"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader || true
nvidia-smi topo -m 2>/dev/null | head -5 || true
nproc
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvcc --version | tail -1

CMAKE=$(command -v cmake || python3 -c 'import cmake, os; print(os.path.join(cmake.CMAKE_BIN_DIR, "cmake"))')
NINJA=$(command -v ninja || python3 -c 'import ninja, os; print(os.path.join(ninja.BIN_DIR, "ninja"))')
if ! command -v pkg-config >/dev/null || ! pkg-config --exists json-c cmocka 2>/dev/null; then
    DEPS=$ROOT/.deps/root
    if [ ! -d "$DEPS/usr" ]; then
        [ -d "$ROOT/.deps/debs" ] || { echo "no json-c/cmocka/pkg-config and no .deps/debs"; exit 2; }
        for f in "$ROOT"/.deps/debs/*.deb; do dpkg -x "$f" "$DEPS"; done
    fi
    LIBD=$DEPS/usr/lib/x86_64-linux-gnu
    export LD_LIBRARY_PATH=$LIBD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PKG_CONFIG_LIBDIR=$LIBD/pkgconfig:$DEPS/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$DEPS
    export PKG_CONFIG=$(command -v pkg-config || echo "$DEPS/usr/bin/pkgconf")
fi

say "build (CUDA) into build-gsparse"
BUILD=$ROOT/build-gsparse
"$CMAKE" -S . -B "$BUILD" -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_BUILD_TYPE=Release \
    -DHETRELAX_ENABLE_CUDA=ON -DHETRELAX_CUDA_ARCHITECTURES=90 ${PKG_CONFIG:+-DPKG_CONFIG_EXECUTABLE=$PKG_CONFIG} \
    >"$OUT/cmake.log" 2>&1 || { cat "$OUT/cmake.log"; exit 1; }
grep "hetrelax:" "$OUT/cmake.log"
rm -f "$OUT/cmake.log"
"$CMAKE" --build "$BUILD" -j "$(nproc)" --target hetrelax-cli test_gpu_sparse gpu_sparse_driver 2>&1 |
    grep -E "error|warning|FAILED"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "build failed"; exit 1; }
CLI=$BUILD/hetrelax
DRIVER=$BUILD/tests/gpu/sparse/gpu_sparse_driver

say "tests (test_gpu_sparse)"
(cd "$BUILD" && ctest -R '^test_gpu_sparse$' --output-on-failure) || { echo "GPU sparse tests failed"; status=1; }
[ "$MODE" = tests ] && exit $status

if [ "$MODE" = single ]; then
    say "compute-sanitizer on small solves"
    for job in "method=jacobi maxit=40" "method=async K=5 block=64 maxit=40" "method=cg maxit=40" \
               "method=async K=3 block=64 comm=amc maxit=40" "method=jacobi fault=0.25@5:recover=5 maxit=40" \
               "method=async K=5 block=64 fault=0.25@5 maxit=40"; do
        printf 'gen=fv2d:20 tol=0 backend=gpu %s\n' "$job" |
            compute-sanitizer --tool memcheck --error-exitcode 3 "$DRIVER" >/dev/null ||
            { echo "memcheck failed: $job"; status=1; }
    done
    # racecheck: shared-memory hazards inside a block (x in global memory races by design)
    printf 'gen=trefethen:500 tol=0 backend=gpu method=async K=5 block=256 maxit=10\n' |
        compute-sanitizer --tool racecheck --error-exitcode 3 "$DRIVER" >/dev/null ||
        { echo "racecheck failed"; status=1; }
    echo "sanitizers done"

    say "CLI"
    "$CLI" sparse --gen fv2d:99 --backend gpu --method async --local-iters 5 --quiet || status=1
    "$CLI" sparse --gen fv2d:99 --backend gpu --method jacobi --quiet || status=1
    "$CLI" sparse --gen fv2d:99 --backend gpu --method cg --quiet || status=1
    "$CLI" sparse --gen trefethen:2000 --backend gpu --method async --fault 0.25@10:recover=10 --quiet || status=1
fi

if [ "$MODE" = multi ]; then
    say "compute-sanitizer on two-GPU solves (overlapped AMC: graph, live and cached-remainder paths)"
    for job in "comm=amc check=5 tol=1e-10 maxit=200" "comm=amc check=40 tol=1e-10 maxit=200" "comm=amc tol=0 maxit=45" \
               "comm=dc tol=0 maxit=45" "comm=dk tol=0 maxit=45"; do
        printf 'gen=fv2d:20 backend=gpu method=async K=3 block=64 gpus=2 %s\n' "$job" |
            compute-sanitizer --tool memcheck --error-exitcode 3 "$DRIVER" >/dev/null ||
            { echo "memcheck failed: $job"; status=1; }
    done
    echo "sanitizers done"
fi

say "experiments"
export PYTHONUNBUFFERED=1
if [ "$MODE" = multi ]; then
    RES=$OUT/gpu-sparse-multi.json
    timeout 330 python3 bench/gpu_sparse_experiments.py --driver "$DRIVER" --out "$RES" --sections "${SECTIONS:-multi,variation-s2}" ||
        { echo "experiments failed or timed out"; status=1; }
else
    RES=$OUT/gpu-sparse-results.json
    timeout 330 python3 bench/gpu_sparse_experiments.py --driver "$DRIVER" --out "$RES" \
        ${SECTIONS:+--sections $SECTIONS} || { echo "experiments failed or timed out"; status=1; }
fi
if [ -s "$RES" ]; then
    mkdir -p "$OUT/plots"
    python3 bench/gpu_sparse_plots.py "$RES" --outdir "$OUT/plots" && tar -C "$OUT" -czf "$OUT/gpu-sparse-plots.tar.gz" plots
    rm -rf "$OUT/plots"
fi
say "done: status $status"
exit $status
