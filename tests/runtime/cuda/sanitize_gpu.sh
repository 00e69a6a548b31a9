#!/bin/sh
# Runs the GPU test program under compute-sanitizer on small sizes.
# Exit 77 (skipped) without compute-sanitizer or without a GPU.
set -u
prog=$1
cs=$(command -v compute-sanitizer 2>/dev/null || true)
[ -z "$cs" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && cs=/usr/local/cuda/bin/compute-sanitizer
if [ -z "$cs" ]; then echo "compute-sanitizer not found: skipped"; exit 77; fi
# no device: the program itself says so with 77
HR_GPU_TEST_SMALL=1 HR_GPU_TEST_KERNELS=none "$prog" >/dev/null 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "no GPU: skipped"; exit 77; }
export HR_GPU_TEST_SMALL=1
status=0
run() {
    tool=$1; shift
    echo "== compute-sanitizer --tool $tool ($*)"
    env "$@" "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 "$prog" || status=1
}
run memcheck HR_GPU_TEST_KERNELS=tuned,naive,padded,smem,texture,smem-padded,unrolled,smem-hilo,smem-padded-hilo,unrolled-hilo,tb,async0,async1,async2,async3
run racecheck HR_GPU_TEST_KERNELS=tuned,smem,smem-padded,unrolled,unrolled-hilo,tb,async0,async2
run synccheck HR_GPU_TEST_KERNELS=tuned,smem,smem-padded,unrolled,tb,async0,async1,async2
run initcheck HR_GPU_TEST_KERNELS=tuned,naive,smem,texture,unrolled,tb,async2
exit $status
