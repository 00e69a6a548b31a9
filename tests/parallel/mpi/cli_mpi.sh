#!/usr/bin/env bash
# `mpiexec -n P hetrelax poisson2d|poisson3d --decomp ...` writes a .raw
# bitwise equal to the single-process cpu-seq run (2-D and 3-D, even and uneven splits, ghost
# widths, overlap on and off, thread teams), prints and writes its JSON ("mpi" object) on
# rank 0 only, and bad input (--decomp product or axis, flags a decomposed run refuses, an
# output rank 0 cannot open) ends every rank with status 2 within seconds, one message.
#   cli_mpi.sh MPIEXEC HETRELAX
set -u
mpiexec=$1 HR=$2
. "$(dirname "$0")/cli_mpi_lib.sh"

# --- bitwise equal to cpu-seq
check_equal() { # cmd "problem flags" np "mpi flags"
  local cmd=$1 prob=$2 np=$3 mflags=$4
  # shellcheck disable=SC2086
  "$HR" $cmd --no-bandwidth --quiet --backend cpu-seq $prob --output "$T/ref.raw" >/dev/null 2>&1 || { bad "reference $cmd $prob"; return; }
  rm -f "$T/m.raw"
  # shellcheck disable=SC2086
  mrun $np $cmd --no-bandwidth --quiet $prob $mflags --output "$T/m.raw" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 0 ] && cmp -s "$T/ref.raw" "$T/m.raw" && ok ||
    bad "$np ranks $cmd $prob $mflags: exit $rc, $(cmp "$T/ref.raw" "$T/m.raw" 2>&1) $(cat "$T/err")"
}
P2="--n 37 --nx 41 --iters 40"
check_equal poisson2d "$P2" 1 ""
check_equal poisson2d "$P2" 2 ""
check_equal poisson2d "$P2" 3 "--decomp 3x1"
check_equal poisson2d "$P2" 3 "--decomp 1x3 --ghost 3"
check_equal poisson2d "$P2" 4 "--decomp 2x2 --no-overlap"
check_equal poisson2d "$P2 --precision double --rhs manufactured" 4 "--decomp 4x1 --ghost 2"
check_equal poisson2d "$P2" 2 "--backend cpu-threads --threads 2"
check_equal poisson2d "$P2 --tol 1e-1 --check 7" 3 "" # stops on the tolerance at 35 sweeps
P3="--n 13 --nx 15 --nz 17 --iters 25"
check_equal poisson3d "$P3" 2 ""
check_equal poisson3d "$P3" 3 "--decomp 1x1x3"
check_equal poisson3d "$P3" 3 "--decomp 1x3x1 --ghost 2"
check_equal poisson3d "$P3 --precision double" 4 "--decomp 2x1x2"
check_equal poisson3d "$P3" 4 "--decomp 2x2x1 --no-overlap"
# the GPU ranks' schedule (shell first, faces of the new grid in flight) with host operations
export HETRELAX_DSOLVER_QUEUED=1
check_equal poisson3d "$P3" 3 "--decomp 1x3x1"
check_equal poisson2d "$P2" 4 "--decomp 2x2"
unset HETRELAX_DSOLVER_QUEUED

# an array right-hand side read by every rank, and --verify on rank 0 (cpu-seq on the gathered solution)
python3 -c "import struct,sys; sys.stdout.buffer.write(struct.pack('<900f', *[((i * 7) % 13) / 13.0 for i in range(900)]))" >"$T/f.raw"
check_equal poisson2d "--n 30 --iters 20 --rhs $T/f.raw" 3 ""
mrun 3 poisson2d --no-bandwidth --quiet --n 30 --iters 20 --rhs "$T/f.raw" --verify >"$T/out" 2>"$T/err" &&
  grep -q "bitwise equal against cpu-seq" "$T/out" && ok || bad "MPI --verify with --rhs FILE: $(cat "$T/out" "$T/err")"

# --- rank 0 prints once and writes the JSON with its "mpi" object
mrun 4 poisson2d --no-bandwidth --n 30 --iters 20 --decomp 2x2 --json "$T/m.json" >"$T/out" 2>"$T/err"
[ "$(grep -c '^summary' "$T/out")" -eq 1 ] && ok || bad "want one summary, got: $(cat "$T/out")"
python3 - "$T/m.json" <<'PY' && ok || bad "MPI JSON"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["mpi"]
assert m["ranks"] == 4 and m["decomp"] == [2, 2] and m["ghost"] == 1 and m["exchanges"] > 0, m
assert d["iterations"] == 20 and d["kernel"] == "seq", d
PY
mrun 3 poisson3d --no-bandwidth --quiet --n 12 --iters 6 --decomp 1x1x3 --json - >"$T/out" 2>/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['mpi']['decomp']==[1,1,3] and d['dim']==3" "$T/out" && ok ||
  bad "3-D JSON to stdout: $(cat "$T/out")"

# --- bad input: status 2 on every rank, one message naming the flag, within seconds
expect_all2() { # pattern np args...
  local pat=$1 np=$2; shift 2
  rm -f "$T"/rc.*
  local t0=$SECONDS
  # each rank records its own status
  timeout -k 10 60 "$mpiexec" -n "$np" --oversubscribe sh -c \
    '"$0" "$@"; echo $? >"'"$T"'/rc.$OMPI_COMM_WORLD_RANK"' "$HR" "$@" >"$T/out" 2>"$T/err"
  local took=$((SECONDS - t0)) statuses
  statuses=$(cat "$T"/rc.* 2>/dev/null | sort -u | tr '\n' ' ')
  [ "$statuses" = "2 " ] && [ "$(ls "$T"/rc.* | wc -l)" -eq "$np" ] && [ $took -lt 30 ] &&
    [ "$(grep -c '^hetrelax' "$T/err")" -eq 1 ] && grep -q -- "$pat" "$T/err" && ok ||
    bad "$np ranks $*: statuses '$statuses' in ${took}s, stderr '$(grep -v '^$' "$T/err" | head -3)', want 2 everywhere and '$pat'"
}
B="--no-bandwidth --quiet --iters 10"
expect_all2 "--decomp: 3 subdomains but 4 ranks" 4 poisson2d $B --n 20 --decomp 3x1
expect_all2 "--decomp: 2 subdomains but 3 ranks" 3 poisson3d $B --n 10 --decomp 1x1x2
expect_all2 "--decomp: 4 parts along y" 4 poisson2d $B --n 3 --decomp 1x4
expect_all2 "--decomp" 2 poisson2d $B --n 20 --decomp 2x
expect_all2 "--checkpoint: not available in decomposed" 2 poisson2d $B --n 20 --checkpoint "$T/c.ckpt"
expect_all2 "--restart: not available in decomposed" 2 poisson2d $B --n 20 --restart "$T/c.ckpt"
expect_all2 "--method: sor: decomposed (MPI) runs do Jacobi only" 2 poisson2d $B --n 20 --method sor
expect_all2 "--kernel" 2 poisson2d $B --n 20 --backend cpu-threads --kernel spmd
expect_all2 "--output: cannot write" 3 poisson2d $B --n 20 --output "$T/nodir/u.raw"
expect_all2 "--json: cannot write" 2 poisson3d $B --n 10 --json "$T/nodir/u.json"
# --gpus under mpirun is GPUs per node for GPU ranks: refused for CPU ranks, and with
# --backend gpu where the build or the node has no GPU (cli_mpi_gpu.sh covers GPU nodes)
expect_all2 "--gpus: needs --backend gpu" 2 poisson2d $B --n 20 --backend cpu-seq --gpus 2
expect_all2 "--gpus: needs --backend gpu (GPUs per node for GPU ranks; these are cpu-seq)" 2 poisson2d $B --n 20 --gpus 1
expect_all2 "--gpus: needs --backend gpu (GPUs per node for GPU ranks; these are cpu-threads)" 3 poisson3d $B --n 12 --backend cpu-threads --gpus 1
if ! "$HR" poisson2d --backend gpu --n 8 --iters 1 --quiet --no-bandwidth >/dev/null 2>&1; then
  expect_all2 "gpu" 2 poisson2d $B --n 20 --backend gpu --gpus 2
fi
# --transport: nccl not in the build (CI) or CPU ranks, device buffers on CPU ranks, a bad
# word; outside mpirun it is refused
expect_all2 "--transport: nccl" 2 poisson2d $B --n 20 --transport nccl
expect_all2 "--transport: nccl" 2 poisson3d $B --n 10 --backend cpu-seq --transport nccl
expect_all2 "--transport: device moves device buffers: it needs --backend gpu" 2 poisson2d $B --n 20 --backend cpu-threads --transport device
expect_all2 "--transport: unknown value 'mpi'" 2 poisson2d $B --n 20 --transport mpi
"$HR" poisson2d $B --n 20 --transport nccl >"$T/out" 2>"$T/err"
[ $? -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "--transport: chooses how MPI ranks exchange halos" "$T/err" && ok ||
  bad "--transport outside mpirun: $(cat "$T/err")"
# --transport host on CPU ranks is what they do anyway: bitwise equal, named in the JSON
check_equal poisson2d "--n 33 --nx 41 --iters 12" 2 "--transport host"
mrun 1 poisson2d --no-bandwidth --quiet --backend cpu-seq --n 20 --iters 4 --transport host --json "$T/t.json" >"$T/out" 2>"$T/err" &&
  python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["mpi"]; assert m["ranks"]==1 and m["transport"]=="host", m' "$T/t.json" && ok ||
  bad "--transport host on 1 rank: $(cat "$T/err") $(cat "$T/t.json" 2>&1 | head -c 600)"
# an input error the ranks find in the solver's setup comes alone: no banner, no sweeps line
for bad_in in "poisson2d --n 20 --decomp 3x1" "poisson3d --n 10 --transport nccl"; do
  # shellcheck disable=SC2086
  mrun 4 $bad_in --no-bandwidth --iters 10 >"$T/out" 2>"$T/err"
  [ $? -eq 2 ] && [ "$(grep -c '^hetrelax' "$T/err")" -eq 1 ] && ! grep -qE '^(hetrelax |MPI: |sweeps: )' "$T/out" && ok ||
    bad "$bad_in: a banner before the error, or not one error: $(cat "$T/out" "$T/err" | grep -v '^-\|^ *$' | head -8)"
done
# outside mpirun, several subdomains are refused at once
"$HR" poisson2d $B --n 20 --decomp 2x2 >"$T/out" 2>"$T/err"
[ $? -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "--decomp: 4 subdomains need as many MPI ranks" "$T/err" && ok ||
  bad "--decomp outside mpirun: $(cat "$T/err")"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
