#!/usr/bin/env bash
# GPU ranks: `mpiexec -n 2..4 hetrelax poisson2d|poisson3d --decomp ... --backend gpu`
# (one rank per GPU; with fewer GPUs ranks share them) writes a .raw bitwise
# equal to the single-process cpu-seq run: 2-D and 3-D, float and double, ghost 1
# (overlapped on streams, and --no-overlap) and 2, uneven splits, x splits. The JSON's "mpi"
# object carries the device overlap's timers. Bad input: --gpus with several ranks on one
# GPU ends every rank with status 2, one message. Exit 77 without a CUDA device.
#   cli_mpi_gpu.sh MPIEXEC HETRELAX
set -u
mpiexec=$1 HR=$2
MRUN_TIMEOUT=120
. "$(dirname "$0")/cli_mpi_lib.sh"

if ! "$HR" poisson2d --backend gpu --n 8 --iters 1 --quiet --no-bandwidth >/dev/null 2>&1; then
  echo "skipped: no CUDA device (or a build without CUDA)"
  exit 77
fi

check_equal() { # cmd "problem flags" np "mpi flags"
  local cmd=$1 prob=$2 np=$3 mflags=$4
  # shellcheck disable=SC2086
  "$HR" $cmd --no-bandwidth --quiet --backend cpu-seq $prob --output "$T/ref.raw" >/dev/null 2>&1 || { bad "reference $cmd $prob"; return; }
  rm -f "$T/m.raw"
  # shellcheck disable=SC2086
  mrun $np $cmd --no-bandwidth --quiet --backend gpu $prob $mflags --output "$T/m.raw" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 0 ] && cmp -s "$T/ref.raw" "$T/m.raw" && ok ||
    bad "$np GPU ranks $cmd $prob $mflags: exit $rc, $(cmp "$T/ref.raw" "$T/m.raw" 2>&1) $(cat "$T/err")"
}
P2="--n 67 --nx 130 --iters 40"
check_equal poisson2d "$P2" 2 ""
check_equal poisson2d "$P2 --precision double" 2 "--decomp 1x2 --ghost 2"
check_equal poisson2d "$P2" 2 "--decomp 2x1"
check_equal poisson2d "$P2 --rhs manufactured --omega 0.8" 2 "--decomp 1x2 --no-overlap"
check_equal poisson2d "$P2" 2 "--decomp 2x1 --ghost 3"
P3="--n 33 --nx 35 --nz 41 --iters 25"
check_equal poisson3d "$P3" 2 ""
check_equal poisson3d "$P3 --precision double" 2 "--decomp 1x1x2 --ghost 2"
check_equal poisson3d "$P3" 2 "--decomp 1x2x1"
check_equal poisson3d "$P3 --precision double" 2 "--decomp 2x1x1 --no-overlap"
check_equal poisson3d "$P3" 2 "--decomp 2x1x1"
check_equal poisson3d "$P3 --rhs manufactured" 2 "--decomp 1x1x2 --ghost 2"

# 3 and 4 ranks (one GPU each where that many are present, else sharing them): slabs,
# x splits, 2 x 2 and uneven parts; the default transport (peer on one node) and the others
P4="--n 61 --nx 43 --iters 30"
check_equal poisson2d "$P4" 3 ""
check_equal poisson2d "$P4" 4 ""
check_equal poisson2d "$P4 --precision double" 4 "--decomp 4x1"
check_equal poisson2d "$P4" 4 "--decomp 2x2 --ghost 2"
check_equal poisson2d "$P4" 4 "--decomp 1x4 --no-overlap"
Q3="--n 37 --nx 29 --nz 41 --iters 20"
check_equal poisson3d "$Q3" 3 "--decomp 1x1x3"
check_equal poisson3d "$Q3" 4 "--decomp 1x1x4"
check_equal poisson3d "$Q3 --precision double" 4 "--decomp 1x2x2"
check_equal poisson3d "$Q3" 4 "--decomp 2x2x1"
check_equal poisson3d "$Q3" 4 "--decomp 4x1x1 --ghost 2"
check_equal poisson3d "$Q3" 4 "--decomp 1x1x4 --transport host"
check_equal poisson3d "$Q3" 4 "--decomp 1x2x2 --transport peer"
check_equal poisson3d "$Q3 --precision double" 4 "--decomp 1x1x4 --transport peer --ghost 2"
check_equal poisson3d "$Q3" 3 "--decomp 1x1x3 --transport peer --no-overlap"

# the default transport on one node is peer (CUDA IPC), and the run reports against the sum of
# the GPUs' copy bandwidth: one measurement per GPU in use (ranks sharing a GPU measure it once)
gpus_present=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
mrun 2 poisson3d --backend gpu $Q3 --decomp 1x1x2 --json "$T/p.json" >"$T/out" 2>"$T/err" &&
  "$HR" poisson3d --backend gpu --n 16 --iters 2 --quiet --json "$T/one.json" >/dev/null 2>&1 &&
  python3 - "$T/p.json" "$T/one.json" "$gpus_present" <<'PY' && ok || bad "MPI GPU transport/reference: $(cat "$T/err") $(head -c 1500 "$T/p.json")"
import json, sys
d, one, present = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3] or 0)
m = d["mpi"]
assert m["transport"] == "peer" and m["buffers"] == "device (CUDA IPC)", m
ref, single = d["reference_gbps"], one["reference_gbps"]
used = min(2, max(present, 1))  # two ranks on two GPUs, or both on the one GPU
assert 0.8 * used * single < ref < 1.25 * used * single, (ref, single, used)
PY

# --gpus N in one process: the reference is the sum of the N GPUs' copy bandwidth
if [ "$gpus_present" -ge 2 ]; then
  "$HR" poisson2d --backend gpu --gpus 2 --n 512 --iters 10 --quiet --json "$T/g2.json" >"$T/out" 2>"$T/err" &&
    python3 - "$T/g2.json" "$T/one.json" <<'PY' && ok || bad "--gpus 2 reference: $(cat "$T/err") $(head -c 800 "$T/g2.json")"
import json, sys
ref, single = json.load(open(sys.argv[1]))["reference_gbps"], json.load(open(sys.argv[2]))["reference_gbps"]
assert 1.6 * single < ref < 2.5 * single, (ref, single)
PY
fi

# --transport host: staged through pinned host buffers whatever the MPI library is
check_equal poisson3d "$P3" 2 "--decomp 1x1x2 --transport host"
# --transport device: CUDA-aware MPI only: bitwise equal, or status 2 with the reason
check_equal_or_refused() { # cmd "problem flags" np "mpi flags" "refusal"
  "$HR" $1 --no-bandwidth --quiet --backend cpu-seq $2 --output "$T/ref.raw" >/dev/null 2>&1 || { bad "reference $1 $2"; return; }
  rm -f "$T/m.raw"
  # shellcheck disable=SC2086
  mrun $3 $1 --no-bandwidth --quiet --backend gpu $2 $4 --output "$T/m.raw" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ $rc -eq 2 ]; then
    [ "$(grep -c -- "$5" "$T/err")" -eq 1 ] && ok || bad "$4: exit 2 without '$5': $(cat "$T/err")"
  else
    [ $rc -eq 0 ] && cmp -s "$T/ref.raw" "$T/m.raw" && ok || bad "$4: exit $rc, $(cmp "$T/ref.raw" "$T/m.raw" 2>&1) $(cat "$T/err")"
  fi
}
check_equal_or_refused poisson2d "$P2" 2 "--transport device" "hetrelax poisson2d: --transport: device: this MPI library does not take device pointers"

# --verify on rank 0, and the JSON's device overlap timers
mrun 2 poisson3d --no-bandwidth --backend gpu $P3 --verify --json "$T/m.json" >"$T/out" 2>"$T/err" &&
  grep -q "bitwise equal against cpu-seq" "$T/out" && ok || bad "MPI GPU --verify: $(cat "$T/out" "$T/err")"
python3 - "$T/m.json" <<'PY' && ok || bad "MPI GPU JSON: $(cat "$T/m.json" 2>&1 | head -c 2000)"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["mpi"]
assert m["ranks"] == 2, m
for k in ("pack_s", "transfer_s", "unpack_s", "hidden_s", "wait_s", "compute_s", "hidden_fraction"):
    assert m[k] >= 0, (k, m)
assert 0 <= m["hidden_fraction"] <= 1, m
assert m["buffers"].startswith(("pinned", "device")), m
PY

# bad input: --gpus 1 with two ranks on this node (several ranks per GPU)
mrun 2 poisson2d --no-bandwidth --quiet --backend gpu --n 64 --iters 5 --gpus 1 >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c 'hetrelax poisson2d: --gpus' "$T/err")" -eq 1 ] && ok ||
  bad "--gpus 1 with 2 ranks: exit $rc, $(cat "$T/err")"

# bad input: --gpus beyond the GPUs present
mrun 2 poisson2d --no-bandwidth --quiet --backend gpu --n 64 --iters 5 --gpus 16 >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c 'hetrelax poisson2d: --gpus: 16 GPUs per node asked' "$T/err")" -eq 1 ] && ok ||
  bad "--gpus 16: exit $rc, $(cat "$T/err")"

echo "cli_mpi_gpu: $passes passed, $fails failed"
[ $fails -eq 0 ]
