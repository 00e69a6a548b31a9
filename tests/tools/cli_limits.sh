#!/usr/bin/env bash
# The command's own memory is checked before
# it is allocated; values that do not fit the precision are refused; the JSON reports
# the threads that ran; strict --thread-grid; flag names in library errors; --verify of
# a non-deterministic run refused; ignored flags said so; --rhs from a pipe.
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"
P="poisson2d --no-bandwidth --quiet"

# --- item 11: the command's own buffers (under an address-space limit)
# The limits are set above what the process maps before it allocates anything: a CUDA build
# maps cuSPARSE, NCCL and nvJitLink (hundreds of MB of address space) before main, a sanitizer build
# reserves terabytes. So first find, by bisection, the smallest limit (KiB) under which a tiny
# run of the same command starts and finishes; each case then adds its own headroom (the
# figures below were chosen against a plain build, which needs about 8 MiB).
starts_under() { # KiB command...
  local kib=$1; shift
  { (ulimit -v "$kib"; "$HR" "$@") >/dev/null 2>&1; } 2>/dev/null
}
base_kib() { # command...: the smallest limit it runs under, 1 MiB resolution; 0: none up to 64 GiB
  local lo=0 hi=$((64 * 1024 * 1024)) mid
  starts_under $hi "$@" || { echo 0; return; }
  while [ $((hi - lo)) -gt 1024 ]; do
    mid=$(((lo + hi) / 2))
    if starts_under $mid "$@"; then hi=$mid; else lo=$mid; fi
  done
  echo $hi
}
B2=$(base_kib $P --backend cpu-seq --n 8 --iters 1)
BI=$(base_kib info --size 1 --threads 1)
if [ "$B2" -gt 0 ] && [ "$BI" -gt 0 ]; then
  echo "address-space baseline: poisson2d $B2 KiB, info $BI KiB"
  # n = 4000 single: grids 130 MB fit in ~240 MB of headroom, grids + the --output copy (128 MB) do not
  (ulimit -v $((B2 + 242000)); "$HR" $P --backend cpu-seq --n 4000 --iters 0 --output "$T/u.raw" >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
  [ "$(cat "$T/rc")" -eq 2 ] && grep -q -- "--n: 4000: the run needs.*solution copy for --output" "$T/err" && ok ||
    bad "--output copy not counted: exit $(cat "$T/rc"), '$(cat "$T/err")'"
  [ ! -e "$T/u.raw" ] && ok || bad "--output written although refused"
  # ... and the same run without the copy goes through (the limit is not simply too small)
  (ulimit -v $((B2 + 242000)); "$HR" $P --backend cpu-seq --n 4000 --iters 0 >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
  [ "$(cat "$T/rc")" -eq 0 ] && ok || bad "n = 4000 without --output under the limit: exit $(cat "$T/rc"), '$(cat "$T/err")'"
  # n = 3000: the run and its copy fit in ~190 MB, the --verify reference run does not
  (ulimit -v $((B2 + 192000)); "$HR" $P --backend cpu-seq --n 3000 --iters 1 --verify >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
  [ "$(cat "$T/rc")" -eq 2 ] && grep -q -- "--verify reference" "$T/err" && ok ||
    bad "--verify not counted: exit $(cat "$T/rc"), '$(cat "$T/err")'"
  # info: three arrays of --size MiB
  (ulimit -v $((BI + 992000)); "$HR" info --size 400 >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
  [ "$(cat "$T/rc")" -eq 2 ] && grep -q -- "--size: 400 MiB" "$T/err" && ok || bad "info --size: exit $(cat "$T/rc"), '$(cat "$T/err")'"
else
  echo "note: $HR does not run under any ulimit -v up to 64 GiB (a sanitizer build reserves terabytes):" \
    "the address-space cases are skipped, the rest is tested"
fi
expect_usage "--size" info --size 65536

# --- item 13: a boundary value the precision cannot hold
expect_usage "--boundary: 1e+39 does not fit single" $P --n 8 --iters 1 --boundary 1e39
"$HR" $P --n 8 --iters 1 --boundary 1e39 --precision double >/dev/null 2>&1 && ok || bad "1e39 in double"
expect_usage "--boundary" $P --n 8 --iters 1 --boundary -4e38

# --- item 18
"$HR" poisson2d --no-bandwidth --n 16 --iters 2 --backend cpu-threads --json - >"$T/out" 2>/dev/null
python3 -c "import json,os,sys; d=json.load(open(sys.argv[1])); assert d['threads']==os.cpu_count() and d['thread_grid'], d['threads']" "$T/out" &&
  ok || bad "JSON threads of a default cpu-threads run"
"$HR" poisson2d --no-bandwidth --n 16 --iters 2 --backend cpu-threads --thread-grid 2x1 --json - >"$T/out" 2>/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['threads']==2 and d['thread_grid']=='2x1'" "$T/out" && ok || bad "JSON threads of 2x1"
"$HR" poisson2d --no-bandwidth --n 16 --iters 2 --backend cpu-seq --json - >"$T/out" 2>/dev/null
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['threads']==1" "$T/out" && ok || bad "JSON threads of cpu-seq"
for g in 4294967298x1 1x4294967298 " 2x1" "2x 1" "2 x1" "+2x1" "2x-1" "2x1 " "0x1" "4097x1" "x1" "2x1x1" "02x01z"; do
  expect_usage "--thread-grid" $P --n 8 --thread-grid "$g"
done
"$HR" $P --n 8 --iters 1 --backend cpu-threads --thread-grid 02x01 >/dev/null 2>&1 && ok || bad "--thread-grid 02x01"
expect_usage "--alpha: 17 is larger than async2" $P --backend cpu-threads --n 32 --threads 4 --kernel async2 --alpha 17
expect_usage "--verify" $P --backend cpu-threads --n 64 --threads 2 --kernel async0 --alpha 4 --verify
"$HR" $P --backend cpu-threads --n 64 --threads 2 --kernel async0 --alpha 1 --iters 20 --verify >/dev/null 2>&1 && ok ||
  bad "async0 --alpha 1 --verify is synchronous and must pass"
# ignored flags: a warning line, and the run goes on
"$HR" $P --n 16 --iters 2 --backend cpu-seq --threads 2 >/dev/null 2>"$T/err" && grep -q "warning: --threads is ignored by backend cpu-seq" "$T/err" &&
  ok || bad "--threads on cpu-seq: '$(cat "$T/err")'"
"$HR" $P --n 16 --iters 2 --backend cpu-threads --threads 2 --layout blocks --kernel spmd >/dev/null 2>"$T/err" &&
  grep -q "warning: --layout blocks is ignored by --kernel spmd" "$T/err" && ok || bad "--layout blocks with --kernel: '$(cat "$T/err")'"
"$HR" $P --n 16 --iters 2 --backend cpu-threads --threads 2 >/dev/null 2>"$T/err" && [ ! -s "$T/err" ] && ok || bad "warning without cause: '$(cat "$T/err")'"
"$HR" sparse --gen laplace2d:10 --method gs --threads 2 --quiet >/dev/null 2>"$T/err" &&
  grep -q "warning: --threads/--bind are ignored by backend cpu-seq" "$T/err" && ok || bad "sparse --threads on cpu-seq: '$(cat "$T/err")'"
# --rhs from a pipe, as sparse reads its vectors
python3 -c "import struct,sys; sys.stdout.buffer.write(struct.pack('<256f', *([1.0]*256)))" >"$T/f.raw"
"$HR" $P --n 16 --iters 20 --rhs "$T/f.raw" --output "$T/a.raw" >/dev/null 2>&1
"$HR" $P --n 16 --iters 20 --rhs <(cat "$T/f.raw") --output "$T/b.raw" >/dev/null 2>"$T/err" && cmp -s "$T/a.raw" "$T/b.raw" &&
  ok || bad "--rhs from a pipe: '$(cat "$T/err")'"
expect_usage "--rhs" $P --n 16 --iters 20 --rhs <(head -c 1000 "$T/f.raw")
expect_usage "--rhs" $P --n 16 --iters 20 --rhs <(cat "$T/f.raw" "$T/f.raw")

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
