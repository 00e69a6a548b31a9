#!/usr/bin/env bash
# hetrelax tune (2-D and 3-D): flags checked with one line naming the flag (exit 2); with a
# GPU, a short 2-D and 3-D tuning run writes its cache lines and JSON. Without CUDA or a GPU
# the runs are skipped (the flag checks still run).
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"
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
# it says what it measures as it goes, and where the results went
grep -q "^measuring pencil n=40x24x16 double" "$T/out" && grep -q "^cache     $T/cpu.txt\$" "$T/out" && ok ||
  bad "CPU tune progress and cache lines: $(cat "$T/out")"
# lists: every item must be there
expect_usage "tune: --n: empty item in '16,,32'" tune --backend cpu-threads --dim 3 --n 16,,32
expect_usage "tune: --n: empty item in '16,'" tune --backend cpu-threads --dim 3 --n 16,
expect_usage "tune: --n: empty item in ',16'" tune --backend cpu-threads --dim 3 --n ,16
expect_usage "tune: --kernel: empty item" tune --backend cpu-threads --dim 3 --kernel pencil,
# the cache path is checked before any measuring, and no folder is created for it
touch "$T/afile"
for case in "$T/afile/x.txt:Not a directory" "$T/missing/dir/x.txt:No such file or directory" "$T:Is a directory"; do
  bad_cache=${case%%:*}
  expect_usage "tune: --cache: '$bad_cache'.*${case#*:}" tune --backend cpu-threads --dim 3 --n 24,32 --cache "$bad_cache"
  grep -q "^measuring" "$T/out" && bad "--cache $bad_cache: refused only after measuring" || ok
done
[ ! -e "$T/missing" ] && ok || bad "--cache created folders"
HETRELAX_TUNE_FILE="$T/missing2/x.txt" "$HR" tune --backend cpu-threads --dim 3 --n 24 >"$T/out" 2>"$T/err"
[ $? -eq 2 ] && grep -q "HETRELAX_TUNE_FILE" "$T/err" && [ ! -e "$T/missing2" ] && ok ||
  bad "HETRELAX_TUNE_FILE in a missing folder: $(cat "$T/err")"
# the default cache folder is still created when missing
XDG_CACHE_HOME="$T/xdg" "$HR" tune --backend cpu-threads --dim 3 --n 16 --iters 1 >"$T/out" 2>"$T/err" &&
  [ -s "$T/xdg/hetrelax/gpu-tune.txt" ] && grep -q "^cache     $T/xdg/hetrelax/gpu-tune.txt" "$T/out" && ok ||
  bad "default cache: $(cat "$T/err")"
if "$HR" poisson2d --list-kernels | grep -q "^gpu "; then
  expect_usage "tune: --kernel: no 3-D GPU kernel 'nope'" tune --dim 3 --kernel nope
  expect_usage "tune: --n: give either" tune --nx 64 --n 32
  if ! "$HR" info --size 1 2>/dev/null | grep -q "compiled in, [1-9]"; then
    expect_usage "tune: --backend: gpu: no CUDA device 0 (0 present) (to tune the 3-D CPU pencil kernel instead: --backend cpu-threads --dim 3)" tune --dim 3 --n 32
    expect_usage "tune: --device: gpu: no CUDA device 0" tune --dim 3 --n 32 --device 0
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
  expect_usage "tune: this build has no CUDA support (to tune the 3-D CPU pencil kernel instead: --backend cpu-threads --dim 3)" tune --dim 3
  expect_usage "tune: this build has no CUDA support$" tune --dim 3 --backend gpu
fi
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
