#!/usr/bin/env bash
# Wrong statuses, silent acceptances, messages that hide the reason or blame the wrong flag,
# and memory estimates that miss a part of the run: each case fails on the code before its
# fix. (tune's --n lists and --cache checks: cli_tune.sh; restarts: cli_checkpoint.sh.)
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"
P="poisson2d --no-bandwidth --quiet"
have_mg=1
"$HR" $P --n 31 --method mg 2>&1 | grep -q "no multigrid library" && have_mg=0
# Memory cases run under an address-space limit (every machine is then small), set above
# what the process maps before it allocates anything (a CUDA build: ~1 GB; a sanitizer
# build reserves terabytes, and those cases are left out): the smallest limit, found by
# bisection, under which a tiny sparse run starts and finishes (KiB; 0: none up to 64 GiB).
starts_under() { { (ulimit -v "$1"; shift; "$HR" "$@") >/dev/null 2>&1; } 2>/dev/null; }
base_kib() {
  local lo=0 hi=$((64 * 1024 * 1024)) mid
  starts_under $hi "$@" || { echo 0; return; }
  while [ $((hi - lo)) -gt 1024 ]; do
    mid=$(((lo + hi) / 2))
    if starts_under $mid "$@"; then hi=$mid; else lo=$mid; fi
  done
  echo $hi
}
BASE=$(base_kib sparse --gen laplace2d:4 --quiet --max-iters 1)
[ "$BASE" -gt 0 ] || echo "note: $HR does not start under any ulimit -v up to 64 GiB: the memory cases are left out"

# --- multigrid and CG run in double by default: a boundary beyond fp32 is theirs to take
if [ $have_mg -eq 1 ]; then
  "$HR" $P --method mg --n 63 --boundary 1e200 --json "$T/b.json" >/dev/null 2>"$T/err" && ok ||
    bad "mg --boundary 1e200 (double): $(cat "$T/err")"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['reason']=='converged', d" "$T/b.json" &&
    ok || bad "mg --boundary 1e200 did not converge"
  "$HR" $P --method cg --n 63 --boundary 1e200 >/dev/null 2>"$T/err"
  [ $? -ne 2 ] && ! grep -q "single precision" "$T/err" && ok || bad "cg --boundary 1e200 refused: $(cat "$T/err")"
  # ... and refused where the solve is single
  expect_usage "--boundary: 1e+200 does not fit single precision" $P --method mg --n 63 --precision single --boundary 1e200
  expect_usage "--boundary: 1e+200 does not fit single precision" $P --n 63 --boundary 1e200

  # --tol 0 means what it means for the sweeps: every --iters cycle, no tolerance
  "$HR" $P --method mg --n 63 --tol 0 --iters 7 --json "$T/t.json" >/dev/null 2>"$T/err" || bad "mg --tol 0: $(cat "$T/err")"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['tol']==0 and d['cycles']==7 and d['reason']=='iterations', d" \
    "$T/t.json" && ok || bad "mg --tol 0: $(cat "$T/t.json")"
  # plain CG: at most 1000 iterations by default, as --help says
  "$HR" poisson2d --help | grep -q "cg: iterations (default 1000)" && ok || bad "--help on CG's default iterations"
  "$HR" $P --method cg --n 255 --tol 1e-300 --json "$T/c.json" >/dev/null 2>"$T/err"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['iterations']==1000, d['iterations']" "$T/c.json" &&
    ok || bad "cg default iterations: $(cat "$T/err")"
  # the JSON records the threads that ran
  "$HR" $P --method mg --n 63 --backend cpu-threads --threads 2 --json "$T/th.json" >/dev/null 2>&1
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['threads']==2, d['threads']" "$T/th.json" &&
    ok || bad "mg --threads 2 JSON threads"
  "$HR" $P --method mg --n 63 --json "$T/th0.json" >/dev/null 2>&1
  python3 -c "import json,sys,os; d=json.load(open(sys.argv[1])); assert d['threads']==len(os.sched_getaffinity(0)), d['threads']" \
    "$T/th0.json" && ok || bad "mg default threads recorded as $(grep threads "$T/th0.json")"

  # --rhs FILE: the message says what is wrong with the file
  python3 - "$T" <<'PY'
import struct, sys
t = sys.argv[1]
open(t + "/short.raw", "wb").write(struct.pack("<10d", *[1.0] * 10))
open(t + "/long.raw", "wb").write(struct.pack("<4000d", *[1.0] * 4000))
v = [1.0] * 3969
v[7] = float("nan")
open(t + "/nan.raw", "wb").write(struct.pack("<3969d", *v))
PY
  mkdir -p "$T/adir"
  for m in mg cg; do
    expect_usage "--rhs: cannot read '$T/none.raw': No such file or directory" $P --method $m --n 63 --rhs "$T/none.raw"
    expect_usage "--rhs: '$T/short.raw': too short: 80 bytes, 31752 are needed" $P --method $m --n 63 --rhs "$T/short.raw"
    expect_usage "--rhs: '$T/long.raw': too long" $P --method $m --n 63 --rhs "$T/long.raw"
    expect_usage "--rhs: '$T/nan.raw': value 7 (0-based) is nan" $P --method $m --n 63 --rhs "$T/nan.raw"
    expect_usage "--rhs: cannot read '$T/adir': Is a directory" $P --method $m --n 63 --rhs "$T/adir"
  done
  expect_usage "--rhs: '$T/short.raw': too short: 80 bytes, 15876 are needed" $P --n 63 --rhs "$T/short.raw"
  expect_usage "--init: '$T/nan.raw': value 7 (0-based) is nan" $P --n 63 --precision double --init "$T/nan.raw"

  # plain CG's memory refusal speaks of CG, with the figures
  if [ "$BASE" -gt 0 ]; then
    (ulimit -v $((BASE + 4000000)); "$HR" $P --method cg --n 32767 >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
    [ "$(cat "$T/rc")" -eq 2 ] && grep -q -- "--n: the CG vectors need .* GB, .* GB available" "$T/err" && ok ||
      bad "cg memory refusal: $(cat "$T/err")"
    (ulimit -v $((BASE + 4000000)); "$HR" $P --method mg --n 32767 >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
    [ "$(cat "$T/rc")" -eq 2 ] && grep -q -- "--n: the multigrid levels need .* GB" "$T/err" && ok ||
      bad "mg memory refusal: $(cat "$T/err")"
    (ulimit -v $((BASE + 4000000)); "$HR" $P --method cg --n 1023 >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
    [ "$(cat "$T/rc")" -eq 0 ] && ok || bad "cg n = 1023 under the same limit: $(cat "$T/err")"
  fi
fi

# --- sparse: a CG breakdown is reported (status 1, reason "breakdown"), not 10000 silent steps
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 0\n' >"$T/zero.mtx"
printf '%%%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n2 2 -1\n' >"$T/indef.mtx"
for mtx in zero indef; do
  for be in cpu-threads cpu-seq; do
    rm -f "$T/s.json" "$T/s.diverged.json"
    "$HR" sparse --matrix "$T/$mtx.mtx" --method cg --backend $be --json "$T/s.json" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc -eq 1 ] && grep -q "cg broke down at iteration 1: p^T A p = " "$T/err" && [ ! -e "$T/s.json" ] && ok ||
      bad "cg on $mtx.mtx ($be): exit $rc, '$(cat "$T/err")' (a failed run writes no --json)"
    # --keep-diverged: the failed run's record, under a name that says so
    "$HR" sparse --matrix "$T/$mtx.mtx" --method cg --backend $be --json "$T/s.json" --keep-diverged >"$T/out" 2>"$T/err"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['reason']=='breakdown' and d['iterations']==0, d" \
      "$T/s.diverged.json" && ok || bad "cg breakdown JSON ($mtx, $be)"
  done
done
# an SPD matrix still converges
"$HR" sparse --gen laplace2d:20 --method cg --quiet >/dev/null 2>&1 && ok || bad "cg on laplace2d"

# --- sparse: a bad option is refused naming it, before any report line
for c in "--divtol 1:--divtol: must be > 1" "--tol -1:--tol" "--tau 3:--tau"; do
  args=${c%%:*}
  # shellcheck disable=SC2086
  "$HR" sparse --gen laplace2d:8 $args >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "sparse: ${c#*:}" "$T/err" && ok ||
    bad "sparse $args: exit $rc, out '$(cat "$T/out")', err '$(cat "$T/err")'"
done

# --- lists with a missing item are refused, not read as another list
expect_usage "--gen: 'laplace2d::8': an empty field" sparse --gen laplace2d::8
expect_usage "--gen: 'laplace2d:8:': an empty field" sparse --gen laplace2d:8:

# --- --thread-grid beyond 4096 threads says so
expect_usage "--thread-grid: 1000x1000 is 1000000 threads, more than 4096" $P --n 16 --thread-grid 1000x1000

# --- a path that is not UTF-8 keeps the JSON valid
bad_name=$(printf "$T/r\xff\xfe.raw")
python3 -c "import struct,sys; open(sys.argv[1].encode('utf-8','surrogateescape'),'wb').write(struct.pack('<256f',*[1.0]*256))" "$bad_name"
"$HR" $P --n 16 --iters 5 --rhs "$bad_name" --json "$T/u.json" >/dev/null 2>"$T/err" || bad "non-UTF-8 --rhs: $(cat "$T/err")"
python3 -c "import json,sys; d=json.load(open(sys.argv[1], encoding='utf-8')); assert d['rhs'].endswith('r\\\\xFF\\\\xFE.raw'), d['rhs']" \
  "$T/u.json" && ok || bad "JSON with a non-UTF-8 path: $(head -c 400 "$T/u.json")"
cp "$T/zero.mtx" "$(printf "$T/m\xe9.mtx")"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2\n2 2 2\n' >"$(printf "$T/m\xe9.mtx")"
"$HR" sparse --matrix "$(printf "$T/m\xe9.mtx")" --quiet --json "$T/s.json" >/dev/null 2>"$T/err" || bad "sparse non-UTF-8: $(cat "$T/err")"
python3 -c "import json,sys; d=json.load(open(sys.argv[1], encoding='utf-8')); assert d['matrix'].endswith('m\\\\xE9.mtx'), d['matrix']" \
  "$T/s.json" && ok || bad "sparse JSON with a non-UTF-8 path"

# --- sparse memory: the whole run is counted before any of it is touched (generator
# triplets, CSR, vectors, the method's); an address-space limit makes every machine small
if [ "$BASE" -gt 0 ]; then
  L=$((BASE + 3000000))
  (ulimit -v $L; timeout 20 "$HR" sparse --gen laplace2d:20000 --quiet >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
  [ "$(cat "$T/rc")" -eq 2 ] && [ ! -s "$T/out" ] &&
    grep -q -- "--gen: 'laplace2d:20000' (n = 400000000, 2000000000 entries): the run needs 65.6 GB (generating 65.6 GB; solving: CSR 30.4 GB + b and x 6.4 GB + jacobi" "$T/err" &&
    ok || bad "laplace2d:20000 under 3 GB: exit $(cat "$T/rc"), '$(cat "$T/err")'"
  (ulimit -v $L; timeout 20 "$HR" sparse --gen laplace3d:500 --method cg --quiet >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
  [ "$(cat "$T/rc")" -eq 2 ] && grep -q -- "--gen: 'laplace3d:500'.*cg" "$T/err" && ok ||
    bad "laplace3d:500 under 3 GB: exit $(cat "$T/rc"), '$(cat "$T/err")'"
  # ... a size that fits goes through under the same limit
  (ulimit -v $L; timeout 60 "$HR" sparse --gen laplace2d:200 --method cg --quiet >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
  [ "$(cat "$T/rc")" -eq 0 ] && ok || bad "laplace2d:200 under 3 GB: exit $(cat "$T/rc"), '$(cat "$T/err")'"
  # a Matrix Market file whose entries cannot be held is refused by the reader, before the
  # triplets (140 MB for 5e6 entries; the 30 MB file is in memory then)
  python3 -c "
import sys
with open(sys.argv[1], 'w') as f:
    f.write('%%MatrixMarket matrix coordinate real general\n3 3 5000000\n')
    f.write('1 1 1\n' * 5000000)" "$T/many.mtx"
  (ulimit -v $((BASE + 120000)); timeout 20 "$HR" sparse --matrix "$T/many.mtx" --quiet >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
  [ "$(cat "$T/rc")" -eq 2 ] && grep -q -- "--matrix: $T/many.mtx:2: 3 x 3 with 5000000 entries needs 140.0 MB to read" "$T/err" &&
    ok || bad "many.mtx: exit $(cat "$T/rc"), '$(cat "$T/err")'"
  # ... and read when it fits (then refused for its missing diagonal: a usage error too)
  (ulimit -v $((BASE + 600000)); timeout 20 "$HR" sparse --matrix "$T/many.mtx" --quiet >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
  grep -q "row 2 has a missing diagonal" "$T/err" && ok || bad "many.mtx under 600 MB: $(cat "$T/err")"
fi
# on a GPU machine the device memory is counted too (the host may be large enough)
if "$HR" info --size 1 2>/dev/null | grep -q "compiled in, [1-9]"; then
  start=$(date +%s)
  timeout 60 "$HR" sparse --backend gpu --method cg --gen laplace2d:30000 --quiet >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] && [ $(($(date +%s) - start)) -le 5 ] && grep -q "needs .* available\|device memory" "$T/err" && ok ||
    bad "gpu laplace2d:30000: exit $rc, '$(cat "$T/err")'"
fi

# --- messages that blame a flag the user typed
if ! "$HR" info --size 1 2>/dev/null | grep -q "compiled in, [1-9]"; then
  "$HR" model --n 8192 >/dev/null 2>"$T/err"
  [ $? -eq 2 ] && ! grep -q -- "--split-second:" "$T/err" && grep -q "split-second cpu models two CPU teams" "$T/err" &&
    ok || bad "model without a GPU: $(cat "$T/err")"
  expect_usage "model: --split-second: the model splits" model --n 64 --split-second gpu
  "$HR" tune >/dev/null 2>"$T/err"
  [ $? -eq 2 ] && grep -q -- "--backend cpu-threads --dim 3" "$T/err" && ok || bad "tune without a GPU: $(cat "$T/err")"
fi

# --- a listing whose reader stopped early is not an error
python3 - "$HR" <<'PY' && ok || bad "listings into a closed pipe"
import os, subprocess, sys
hr = sys.argv[1]
for args in (["--help"], ["--version"], ["poisson2d", "--help"], ["poisson3d", "--list-kernels"],
             ["sparse", "--list-methods"], ["sparse", "--help"], ["tune", "--help"], ["model", "--help"]):
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first byte
    p = subprocess.run([hr] + args, stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    if p.returncode != 0 or p.stderr:
        sys.exit("%s: exit %d, %r" % (args, p.returncode, p.stderr))
PY
"$HR" poisson2d --help | head -1 >/dev/null
[ "${PIPESTATUS[0]}" -eq 0 ] && ok || bad "--help | head"
# ... while a full disk still is, and so is a run's report into a closed pipe
"$HR" --help >/dev/full 2>"$T/err"
[ $? -eq 1 ] && grep -q "No space left" "$T/err" && ok || bad "--help >/dev/full: $(cat "$T/err")"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
