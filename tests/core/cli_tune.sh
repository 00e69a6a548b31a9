#!/usr/bin/env bash
# hetrelax tune (2-D and 3-D): flags checked with one line naming the flag (exit 2); with a
# GPU, a short 2-D and 3-D tuning run writes its cache lines and JSON. Without CUDA or a GPU
# the runs are skipped (the flag checks still run).
set -u
HR=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_usage() { # pattern args...: exit 2, one line naming the flag
  local pat=$1; shift
  "$HR" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$pat" "$T/err" && ok ||
    bad "'$*' exited $rc, stderr '$(cat "$T/err")', want exit 2 and '$pat'"
}
expect_usage "tune: --dim" tune --dim 4
expect_usage "tune: --nz: needs --dim 3" tune --dim 2 --nz 8
expect_usage "tune: --nx: expected an integer" tune --nx x
expect_usage "tune: --precision: unknown value" tune --precision quad
"$HR" tune --help | grep -q -- "--dim 2|3" && ok || bad "tune --help lists --dim"
# the CPU tuner (3-D pencil kernel)
expect_usage "tune: --dim: 2: the CPU tuner measures the 3-D pencil kernel" tune --backend cpu-threads --n 32
expect_usage "tune: --backend: cpu-seq" tune --backend cpu-seq --dim 3
expect_usage "tune: --kernel: no 3-D tunable cpu-threads kernel 'rb-fused'" tune --backend cpu-threads --dim 3 --kernel rb-fused
expect_usage "tune: --device: for --backend gpu only" tune --backend cpu-threads --dim 3 --device 1
"$HR" tune --backend cpu-threads --nx 40 --ny 24 --nz 16 --precision double --threads 2 --cache "$T/cpu.txt" \
  --json "$T/c.json" >"$T/out" 2>"$T/err" && ok || bad "CPU tune: $(cat "$T/err")"
python3 - "$T/c.json" <<'PY' && ok || bad "CPU tune JSON: $(cat "$T/c.json")"
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 1, rows
r = rows[0]
assert r["backend"] == "cpu-threads" and r["kernel"] == "pencil" and r["dim"] == 3 and r["threads"] == 2, r
assert (r["nx"], r["ny"], r["nz"]) == (40, 24, 16) and r["best_gbps"] > 0 and r["candidates"] > 1, r
PY
grep -q "^cpu:.*:2t	pencil	double" "$T/cpu.txt" && ok || bad "CPU tune cache line: $(cat "$T/cpu.txt")"
if "$HR" poisson2d --list-kernels | grep -q "^gpu "; then
  expect_usage "tune: --kernel: no 3-D GPU kernel 'nope'" tune --dim 3 --kernel nope
  expect_usage "tune: --n: give either" tune --nx 64 --n 32
  if ! "$HR" info --size 1 2>/dev/null | grep -q "compiled in, [1-9]"; then
    expect_usage "tune: --device: 0: no such CUDA device" tune --dim 3 --n 32
    echo "no GPU: tuning runs skipped"
  else
    for d in "--n 256" "--dim 3 --n 48" "--nx 64 --ny 32 --nz 40"; do
      # shellcheck disable=SC2086
      "$HR" tune $d --precision single --iters 4 --cache "$T/cache.txt" --json "$T/t.json" >"$T/out" 2>"$T/err" && ok ||
        bad "tune $d: $(cat "$T/err")"
      python3 - "$T/t.json" $d <<'PY' && ok || bad "tune $d JSON: $(cat "$T/t.json")"
import json, sys
rows = json.load(open(sys.argv[1])); args = sys.argv[2:]
dim = 3 if ("--dim" in args or "--nz" in args) else 2
assert rows and all(r["dim"] == dim and r["best_gbps"] > 0 and r["candidates"] > 0 for r in rows), rows
PY
    done
    [ "$(awk -F'\t' '$4 == 3' "$T/cache.txt" | wc -l)" -ge 2 ] && ok || bad "3-D cache lines: $(cat "$T/cache.txt")"
  fi
else
  expect_usage "tune: this build has no CUDA support" tune --dim 3
fi
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
