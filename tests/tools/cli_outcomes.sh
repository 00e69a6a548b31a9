#!/usr/bin/env bash
# How a run ends, for every command and method: a diverged run replaces no output file (its
# state goes to NAME.diverged.EXT only with --keep-diverged), a tolerance not reached says
# "NOT converged" and exits 3 with its outputs written, the residual of b = 0 is labelled
# absolute, the summary says what its rates and times are, CG prints no multigrid fields,
# cache-resident grids are called so; values single precision cannot hold are refused and
# subnormal or huge data gives a residual, not NaN.
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"
jget() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }
run() { # args...: $rc, $T/out, $T/err
  "$HR" "$@" >"$T/out" 2>"$T/err"
  rc=$?
}
raw() { # FILE COUNT VALUE [f|d]: COUNT raw values
  python3 -c "import struct,sys; open(sys.argv[1],'wb').write(struct.pack('<' + sys.argv[4], float(sys.argv[3])) * int(sys.argv[2]))" "$@"
}

# --- a diverged run: nothing replaced, no temporary or .diverged file left
diverged() { # label cmd args...: the run must diverge
  local label=$1 ext=$2
  shift 2
  rm -f "$T"/dv*
  echo PREVIOUS >"$T/dv.$ext"
  echo PREVJSON >"$T/dv.json"
  run "$@" --output "$T/dv.$ext" --json "$T/dv.json"
  [ $rc -eq 1 ] && ok || bad "$label: exit $rc, want 1 ($(cat "$T/err"))"
  [ "$(cat "$T/dv.$ext")" = PREVIOUS ] && [ "$(cat "$T/dv.json")" = PREVJSON ] && ok ||
    bad "$label: a diverged run replaced the previous outputs"
  [ "$(ls -A "$T" | grep -c 'dv\.\(diverged\|.*tmp\)')" -eq 0 ] && ok || bad "$label: left $(ls -A "$T" | grep dv)"
  grep -q "diverged.*no output written (--keep-diverged" "$T/err" && ok || bad "$label: stderr '$(cat "$T/err")'"
  # asked for: the state and the record under names that say so, the previous files kept
  run "$@" --output "$T/dv.$ext" --json "$T/dv.json" --keep-diverged
  [ $rc -eq 1 ] && [ -s "$T/dv.diverged.$ext" ] && [ "$(cat "$T/dv.$ext")" = PREVIOUS ] &&
    [ "$(cat "$T/dv.json")" = PREVJSON ] && ok || bad "$label --keep-diverged: exit $rc, $(ls "$T" | grep dv)"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['reason'].startswith('diverged') and not d['converged'], d" \
    "$T/dv.diverged.json" && ok || bad "$label --keep-diverged: the record"
  # --json -: the record is printed either way
  "$HR" "$@" --json - 2>/dev/null | python3 -c "import json,sys; assert json.load(sys.stdin)['reason'].startswith('diverged')" &&
    ok || bad "$label --json -: no record on stdout"
}
G="--no-bandwidth --quiet"
diverged "jacobi 2-D" raw poisson2d $G --n 32 --iters 400 --omega 1.99
run poisson2d --no-bandwidth --n 32 --iters 400 --omega 1.99 --output "$T/dv.raw" --keep-diverged
grep -q "^wrote .*dv.diverged.raw (the diverged state)" "$T/out" && ok || bad "--keep-diverged: '$(cat "$T/out")'"
diverged "jacobi 2-D checked" raw poisson2d $G --n 32 --iters 400 --omega 1.99 --tol 1e-9 --check 10
diverged "jacobi 3-D" raw poisson3d $G --n 14 --iters 400 --omega 1.99
diverged "jacobi 2-D checkpointed" raw poisson2d $G --n 32 --iters 400 --omega 1.99 --checkpoint "$T/c.ckpt"
diverged "multigrid" raw poisson2d $G --method mg --smoother jacobi --omega 1.99 --n 63
diverged "sparse" mtx sparse --quiet --gen laplace2d:10 --method jacobi --tau 1.99
[ "$(cat "$T/dv.diverged.mtx" | head -c 14)" = "%%MatrixMarket" ] && ok || bad "sparse: the diverged state is not Matrix Market"

# --- a tolerance not reached: NOT converged, exit 3, outputs written, the JSON says so
missed() { # label flag-of-limit cmd args...
  local label=$1 limit=$2
  shift 2
  rm -f "$T/m.raw" "$T/m.json" "$T/m.mtx"
  local out="$T/m.raw"
  [ "$1" = sparse ] && out="$T/m.mtx"
  run "$@" --output "$out" --json "$T/m.json"
  [ $rc -eq 3 ] && ok || bad "$label: exit $rc, want 3 ($(cat "$T/err"))"
  grep -q "^\(summary\|result\) .*NOT converged" "$T/out" && ok || bad "$label: summary '$(grep -E '^(summary|result)' "$T/out")'"
  grep -q "NOT converged: .* above --tol .*(raise $limit[;)].*exit status 3)" "$T/err" && ok || bad "$label: stderr '$(cat "$T/err")'"
  [ -s "$out" ] && [ "$(jget "$T/m.json" converged)" = False ] && [ "$(jget "$T/m.json" reason)" = iterations ] &&
    ok || bad "$label: outputs or JSON ($(ls "$T"))"
}
missed "sor" --iters poisson2d $G --n 127 --method sor --precision double --tol 1e-6 --check 1 --iters 100
missed "jacobi 3-D" --iters poisson3d $G --n 14 --tol 1e-9 --iters 20
missed "jacobi checkpointed" --iters poisson2d $G --n 32 --tol 1e-9 --iters 20 --checkpoint "$T/c.ckpt"
missed "multigrid" --iters poisson2d $G --method mg --n 63 --iters 2
missed "cg" --iters poisson2d $G --method cg --n 63 --iters 5
missed "pcg mixed" --iters poisson3d $G --method cg --pc mg --precision mixed --n 15 --tol 1e-14 --iters 2
missed "sparse" --max-iters sparse --quiet --gen fv2d:20 --max-iters 5
# ... and reached, or no tolerance: exit 0
run poisson2d $G --n 127 --method sor --precision double --tol 1e-6 --check 1 --iters 400
[ $rc -eq 0 ] && grep -q "(converged)" "$T/out" && ok || bad "sor to 1e-6 in 400: exit $rc"
run poisson2d $G --n 32 --iters 20
[ $rc -eq 0 ] && grep -q "(iterations)" "$T/out" && ok || bad "no --tol: exit $rc"
run sparse --quiet --gen fv2d:20 --max-iters 5 --tol 0
[ $rc -eq 0 ] && ok || bad "sparse --tol 0: exit $rc"
# single precision cannot reach a tolerance below its rounding: the advice says what can
run poisson2d $G --method mg --precision single --n 63
[ $rc -eq 3 ] && grep -q "single precision stalls near 1e-6: --precision mixed; exit status 3" "$T/err" && ok ||
  bad "mg single to 1e-8: exit $rc, '$(cat "$T/err")'"
for cmd in poisson2d poisson3d sparse; do
  "$HR" $cmd --help >"$T/help"
  grep -q "3 NOT converged" "$T/help" && grep -q -- "--keep-diverged" "$T/help" && ok ||
    bad "$cmd --help: no exit status 3 or --keep-diverged"
done

# --- labels: b = 0 has no relative residual; rates per sweep; CG without levels; cache
run poisson2d --no-bandwidth --n 64 --rhs zero --init sine --iters 50 --monitor 25 --json "$T/z.json"
grep -q "relative residual" "$T/out" && bad "--rhs zero: '$(grep residual "$T/out")'" || ok
[ "$(grep -c "residual (absolute, b = 0)" "$T/out")" -eq 3 ] && [ "$(jget "$T/z.json" residual_absolute)" = True ] && ok ||
  bad "--rhs zero: the absolute residual not labelled: $(cat "$T/out")"
run poisson2d --no-bandwidth --n 64 --rhs zero --boundary 1 --iters 50 --monitor 25
[ "$(grep -c "relative residual" "$T/out")" -eq 3 ] && ok || bad "--boundary 1: '$(cat "$T/out")'"
run poisson2d $G --method mg --n 63 --rhs zero --init zero
grep -q "residual (absolute, b = 0)" "$T/out" && ok || bad "mg --rhs zero: $(cat "$T/out")"
# a singular problem: its projection zeroes a constant source (absolute), not a random one
python3 -c "import sys; open(sys.argv[1], 'wb').write(bytes(__import__('struct').pack('<d', 2.5)) * (40 * 30))" "$T/c.raw"
run poisson2d --nx 40 --ny 30 --bc all=neumann --method mg --rhs "$T/c.raw" --init sine --iters 3 --tol 0 --json "$T/s.json"
grep -q "residual (absolute, b = 0)" "$T/out" && [ "$(jget "$T/s.json" residual_absolute)" = True ] && ok ||
  bad "singular, constant source: the absolute residual not labelled: $(cat "$T/out")"
run poisson2d --nx 40 --ny 30 --bc all=neumann --method mg --rhs random:1 --iters 3 --tol 0
grep -q "relative residual" "$T/out" && ! grep -q "absolute" "$T/out" && ok ||
  bad "singular, random source: '$(grep residual "$T/out")'"
run poisson2d --no-bandwidth --n 200 --iters 60 --monitor 1 --backend cpu-seq
python3 - "$T/out" <<'PY' && ok || bad "summary times: $(grep -A1 summary "$T/out")"
import re, sys
s = open(sys.argv[1]).read()
m = re.search(r"summary +(\d+) sweeps \(iterations\) in ([0-9.]+) s: sweeps ([0-9.]+) s, residual checks ([0-9.]+) s\n +([0-9.]+) ms/sweep \(sweeps only\)", s)
assert m, s
n, total, sweeps, checks, ms = int(m[1]), float(m[2]), float(m[3]), float(m[4]), float(m[5])
assert n == 60 and checks > 0 and sweeps + checks <= total * 1.001 + 1e-4, m.groups()
assert abs(ms * n / 1e3 - sweeps) <= 0.02 * sweeps + 1e-3, (ms * n / 1e3, sweeps)  # per sweep of the sweeps
PY
run poisson2d $G --method cg --n 63
grep -q "^summary.*levels" "$T/out" && bad "plain CG: '$(grep summary "$T/out")'" || ok
run poisson2d $G --method cg --pc mg --n 63
grep -q "^summary.*6 levels" "$T/out" && ok || bad "pcg: '$(grep summary "$T/out")'"
run poisson2d --quiet --bandwidth 10 --n 64 --iters 20 --backend cpu-threads --threads 2
grep -q "% of 10.00 GB/s (cache-resident: grids .* MB < .* MB last-level cache share)" "$T/out" && ok ||
  bad "small grid: '$(cat "$T/out")'"
run poisson2d --quiet --bandwidth 10 --n 2048 --precision double --iters 2 --backend cpu-threads --threads 2
grep -q "cache-resident" "$T/out" && bad "64 MB of grids called cache-resident: $(cat "$T/out")" || ok

# --- values single precision cannot hold: refused before the solve; double or mixed solve them
expect_usage "--boundary: 1e+38 does not fit single precision" poisson2d $G --n 32 --iters 10 --boundary 1e38
expect_usage "--boundary: 1e-35 does not fit single precision" poisson3d $G --n 8 --iters 10 --boundary 1e-35
expect_usage "--boundary: 1e+38 does not fit single precision.*double or mixed" poisson2d $G --method mg --precision single --n 31 --boundary 1e38
raw "$T/big.f32" 1024 3e38 f
expect_usage "--rhs: '$T/big.f32': values up to 3e+38 do not fit single precision" poisson2d $G --n 32 --iters 10 --rhs "$T/big.f32"
for p in double mixed; do
  run poisson2d $G --method mg --precision $p --n 63 --boundary 1e200
  [ $rc -eq 0 ] && grep -q "(converged)" "$T/out" && ok || bad "mg $p --boundary 1e200: exit $rc $(cat "$T/out" "$T/err")"
done
run poisson2d $G --method cg --n 63 --boundary 1e200 --iters 1000
[ $rc -eq 0 ] && grep -q "(converged)" "$T/out" && ok || bad "cg --boundary 1e200: exit $rc $(cat "$T/out" "$T/err")"
raw "$T/tiny63" 3969 1e-200 d
run poisson2d $G --method mg --precision mixed --n 63 --rhs "$T/tiny63"
[ $rc -eq 0 ] && grep -q "(converged)" "$T/out" && ok || bad "mg mixed rhs 1e-200: exit $rc $(cat "$T/out")"
# --- subnormal data: a residual, not NaN (relaxation, multigrid, CG)
raw "$T/sub64" 4096 1e-310 d
run poisson2d $G --n 64 --precision double --iters 100 --rhs "$T/sub64"
[ $rc -eq 0 ] && grep -q "relative residual [0-9]" "$T/out" && ok || bad "jacobi 1e-310: exit $rc $(cat "$T/out" "$T/err")"
raw "$T/sub63" 3969 1e-310 d
for m in "mg" "cg --iters 1000" "cg --pc mg" "mg --precision mixed"; do
  # shellcheck disable=SC2086
  run poisson2d $G --method $m --n 63 --rhs "$T/sub63"
  [ $rc -eq 0 ] && grep -q "(converged)" "$T/out" && ok || bad "$m 1e-310: exit $rc $(cat "$T/out" "$T/err")"
done

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
