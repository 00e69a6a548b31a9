#!/bin/bash
# Every multi-GPU experiment in one go, quick mode, for a machine with two GPUs (2 x H200):
#
#   bench/experiments/mgpu_all.sh OUT [BUILD]        (BUILD: a CUDA build with bench/mgpu_bench and
#                                         bench/redblack_driver; default build-gpu)
#
#   1. NVIDIA's multi-GPU Jacobi built in the background (bench/experiments/mgpm_build.sh; sources in
#      .deps/mgpm, carried);
#   2. Venkatasubramanian & Vuduc fig. 15 right (bench/experiments/hybrid_experiments.py fig15 --quick): OUT/hybrid-fig15.*;
#   3. red-black on 2 GPUs and up to the GPUs present, against one (bench/experiments/mgpu_redblack.py
#      --quick): OUT/mgpu-redblack.json;
#   4. NVIDIA's variants at 20480^2, 500 iterations: OUT/mgpm.json;
#   5. strong scaling 1 -> 2 GPUs, 2-D 20480^2 and 3-D 512x512x1024 fp32, with NVIDIA's
#      beside (bench/experiments/mgpu_scaling.py --quick: 500 timed sweeps): OUT/mgpu-scaling.*.
# About 3 to 5 minutes. Exit status: non-zero when a step failed or an answer was wrong.
set -u -o pipefail
OUT=${1:?usage: bench/experiments/mgpu_all.sh OUT [BUILD]}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${2:-$ROOT/build-gpu}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$ROOT"
export PYTHONUNBUFFERED=1
status=0
t0=$(date +%s)
say() { printf '\n== mgpu %s (%d s)\n' "$*" $(($(date +%s) - t0)); }
for exe in bench/mgpu_bench bench/redblack_driver; do
    [ -x "$BUILD/$exe" ] || { echo "mgpu_all: no $BUILD/$exe (build the CUDA tree first)"; exit 2; }
done
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader || true
nvidia-smi topo -m 2>/dev/null | head -4 || true

say "1. NVIDIA's variants: building in the background"
MGPM_BUILD=${MGPM_BUILD:-/tmp/mgpm-build} bash bench/experiments/mgpm_build.sh "$OUT/mgpm-build.json" --build-only \
    >"$OUT/mgpm-build.log" 2>&1 &
build_pid=$!

say "2. seed 000 fig. 15 right"
timeout 120 python3 bench/experiments/hybrid_experiments.py fig15 --build "$BUILD" --out "$OUT" --quick || status=1

say "3. red-black on several GPUs"
timeout 240 python3 bench/experiments/mgpu_redblack.py --build "$BUILD" --out "$OUT" --quick || status=1

say "4. NVIDIA's variants at 20480^2 (500 iterations)"
wait $build_pid
cat "$OUT/mgpm-build.log"
rm -f "$OUT/mgpm-build.json"
timeout 150 bash bench/experiments/mgpm_build.sh "$OUT/mgpm.json" --n 20480 --niter 500 --gpus 1,2 || status=1

say "5. strong scaling, 1 and 2 GPUs"
timeout 180 python3 bench/experiments/mgpu_scaling.py --build "$BUILD" --out "$OUT" --quick --gpus 1,2 --mgpm "$OUT/mgpm.json" ||
    status=1

say "done: status $status"
exit $status
