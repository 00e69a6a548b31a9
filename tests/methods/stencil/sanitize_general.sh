#!/bin/sh
# test_gpu_general under compute-sanitizer (memcheck, racecheck, synccheck, initcheck): every
# kernel of the general-problem CUDA backend on every level, and the solves of two methods.
# Exit 77 (skipped) without compute-sanitizer or without a GPU.
set -u
prog=$1
cs=$(command -v compute-sanitizer 2>/dev/null || true)
[ -z "$cs" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && cs=/usr/local/cuda/bin/compute-sanitizer
if [ -z "$cs" ]; then echo "compute-sanitizer not found: skipped"; exit 77; fi
HR_GPU_TEST_METHODS=none "$prog" >/dev/null 2>&1
[ $? -eq 77 ] && { echo "no GPU: skipped"; exit 77; }
status=0
for tool in memcheck racecheck synccheck initcheck; do
    echo "== compute-sanitizer --tool $tool"
    HR_GPU_TEST_METHODS="mg V redblack,mgcg" "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 "$prog" ||
        status=1
done
exit $status
