#!/usr/bin/env bash
# The NCCL transport: `mpiexec -n P hetrelax poisson2d|poisson3d --backend gpu
# --transport nccl` writes a .raw bitwise equal to the single-process cpu-seq run, in 2-D
# and 3-D, float and double, ghost 1 (overlapped on streams, and --no-overlap) and ghost
# > 1, uneven splits; the JSON says "transport": "nccl". NCCL takes one rank per GPU: 1 rank
# on any GPU machine, 2 ranks where 2 GPUs are present, 4 where 4 are. Bad input: more
# ranks on a node than GPUs ends every rank with status 2 and one message. Exit 77 without
# a CUDA device or without NCCL in the build.
#   cli_mpi_nccl.sh MPIEXEC HETRELAX
set -u
mpiexec=$1 HR=$2
MRUN_TIMEOUT=120
. "$(dirname "$0")/cli_mpi_lib.sh"

if ! "$HR" poisson2d --backend gpu --n 8 --iters 1 --quiet --no-bandwidth >/dev/null 2>&1; then
  echo "skipped: no CUDA device (or a build without CUDA)"
  exit 77
fi
mrun 1 poisson2d --no-bandwidth --quiet --backend gpu --n 16 --iters 2 --transport nccl >"$T/out" 2>"$T/err"
if grep -q "this build has no NCCL" "$T/err"; then
  echo "skipped: this build has no NCCL"
  exit 77
fi
gpus=$("$HR" info 2>/dev/null | sed -n 's/^cuda .*, \([0-9]*\) GPU(s)$/\1/p')
gpus=${gpus:-1}
echo "cli_mpi_nccl: $gpus GPU(s)"

check_equal() { # cmd "problem flags" np "mpi flags"
  local cmd=$1 prob=$2 np=$3 mflags=$4
  # shellcheck disable=SC2086
  "$HR" $cmd --no-bandwidth --quiet --backend cpu-seq $prob --output "$T/ref.raw" >/dev/null 2>&1 || { bad "reference $cmd $prob"; return; }
  rm -f "$T/m.raw"
  # shellcheck disable=SC2086
  mrun $np $cmd --no-bandwidth --quiet --backend gpu --transport nccl $prob $mflags --output "$T/m.raw" \
    --json "$T/m.json" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 0 ] && cmp -s "$T/ref.raw" "$T/m.raw" &&
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["mpi"]; assert m["transport"]=="nccl" and m["buffers"]=="device (NCCL)", m' "$T/m.json" &&
    ok || bad "$np NCCL ranks $cmd $prob $mflags: exit $rc, $(cmp "$T/ref.raw" "$T/m.raw" 2>&1) $(cat "$T/err")"
}
P2="--n 67 --nx 130 --iters 40"
P3="--n 33 --nx 35 --nz 41 --iters 25"
# one rank: the communicator of one, no halos (NCCL set up and torn down around a solve)
check_equal poisson2d "$P2" 1 ""
check_equal poisson3d "$P3 --precision double" 1 "--ghost 2"
if [ "$gpus" -ge 2 ]; then
  check_equal poisson2d "$P2" 2 ""
  check_equal poisson2d "$P2 --precision double" 2 "--decomp 1x2 --ghost 2"
  check_equal poisson2d "$P2" 2 "--decomp 2x1"
  check_equal poisson2d "$P2 --rhs manufactured --omega 0.8" 2 "--decomp 1x2 --no-overlap"
  check_equal poisson2d "$P2" 2 "--decomp 2x1 --ghost 3"
  check_equal poisson3d "$P3" 2 ""
  check_equal poisson3d "$P3 --precision double" 2 "--decomp 1x1x2 --ghost 2"
  check_equal poisson3d "$P3" 2 "--decomp 1x2x1"
  check_equal poisson3d "$P3 --precision double" 2 "--decomp 2x1x1 --no-overlap"
  check_equal poisson3d "$P3 --rhs manufactured" 2 "--decomp 1x1x2 --ghost 2"
  # --verify on rank 0 and the device overlap's timers
  mrun 2 poisson3d --no-bandwidth --backend gpu --transport nccl $P3 --verify --json "$T/v.json" >"$T/out" 2>"$T/err" &&
    grep -q "bitwise equal against cpu-seq" "$T/out" &&
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["mpi"]; assert m["ranks"]==2 and 0<=m["hidden_fraction"]<=1 and m["wait_s"]>=0, m' "$T/v.json" &&
    ok || bad "NCCL --verify: $(cat "$T/out" "$T/err")"
else
  echo "cli_mpi_nccl: 2-rank runs need 2 GPUs (NCCL takes one rank per GPU): not run here"
fi
if [ "$gpus" -ge 4 ]; then
  check_equal poisson2d "$P2" 4 "--decomp 2x2"
  check_equal poisson3d "$P3 --precision double" 4 "--decomp 2x2x1 --ghost 2"
  check_equal poisson3d "$P3" 4 "--decomp 1x2x2"
fi

# bad input: two ranks on one GPU (NCCL refuses a shared device): status 2, one message
CUDA_VISIBLE_DEVICES=0 mrun 2 poisson2d --no-bandwidth --quiet --backend gpu --n 64 --iters 5 --transport nccl >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c '^hetrelax poisson2d: --transport: nccl: 2 ranks on this node for 1 GPU' "$T/err")" -eq 1 ] && ok ||
  bad "nccl with 2 ranks on 1 GPU: exit $rc, $(cat "$T/err")"
# bad input: --transport nccl on CPU ranks
mrun 2 poisson2d --no-bandwidth --quiet --backend cpu-seq --n 64 --iters 5 --transport nccl >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c '^hetrelax poisson2d: --transport: nccl moves device buffers' "$T/err")" -eq 1 ] && ok ||
  bad "nccl on CPU ranks: exit $rc, $(cat "$T/err")"

echo "cli_mpi_nccl: $passes passed, $fails failed"
[ $fails -eq 0 ]
