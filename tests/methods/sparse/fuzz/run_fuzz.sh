#!/usr/bin/env bash
# Builds the Matrix Market fuzzer with clang (libFuzzer + ASan + UBSan) straight from
# the reader's sources and runs it for a bounded time. Exit 77 (skipped) when clang or
# the libFuzzer runtime is missing. usage: run_fuzz.sh SOURCE_DIR WORK_DIR SECONDS
set -eu
SRC=${1:?source dir}; WORK=${2:?work dir}; SECS=${3:-30}
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "no clang: skipped"; exit 77; }
mkdir -p "$WORK/corpus"
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$WORK/probe.c"
if ! "$CLANG" -fsanitize=fuzzer "$WORK/probe.c" -o "$WORK/probe" 2>/dev/null; then
  echo "clang has no libFuzzer runtime (libclang-rt-dev): skipped"; exit 77
fi
"$CLANG" -std=c11 -D_GNU_SOURCE -g -O1 -ffp-contract=off -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=all -I"$SRC/include" -I"$SRC/src" \
  "$SRC/tests/methods/sparse/fuzz/fuzz_mm.c" "$SRC/src/methods/sparse/mmio.c" "$SRC/src/methods/sparse/csr.c" \
  "$SRC/src/core/status.c" "$SRC/src/runtime/cpu/sysmem.c" -lm -o "$WORK/fuzz_mm"
cp "$SRC"/tests/methods/sparse/fuzz/corpus/* "$WORK/corpus/"
# -rss_limit_mb: the reader must never allocate what a file merely claims
"$WORK/fuzz_mm" "$WORK/corpus" -dict="$SRC/tests/methods/sparse/fuzz/mm.dict" -max_total_time="$SECS" \
  -max_len=4096 -rss_limit_mb=1024 -malloc_limit_mb=512 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$WORK/" 2>&1 | tail -n 25
exit "${PIPESTATUS[0]}"
