#!/usr/bin/env bash
# --backend hybrid --split auto|stream|F with --split-ghost, --schedule,
# --split-second, --explain, and `hetrelax model`. Bad input is one line naming the flag (exit
# 2); runs use --split-second cpu (two CPU teams: the split engine without a GPU) and must be
# bitwise equal to cpu-seq for every split; --explain and the JSON report the split and model.
set -u
HR=$1
. "$(dirname "$0")/../../tools/cli_lib.sh"
P="poisson2d --no-bandwidth --quiet"
H="--backend hybrid --split-second cpu"
for v in 1.5 -0.1 x 0.5x ""; do expect_usage "--split: '$v': want a fraction in \[0, 1\]" $P $H --n 64 --split "$v"; done
expect_usage "--split: 0.001 leaves the CPU part with no rows" $P $H --n 64 --split 0.001
expect_usage "--split-ghost: 40 ghost rows need at least 40 rows" $P $H --n 64 --split 0.5 --split-ghost 40
expect_usage "--schedule: unknown value" $P $H --n 64 --schedule eager
expect_usage "--split: needs --backend hybrid" $P --n 64 --split 0.5
expect_usage "--explain: needs --backend hybrid" $P --n 64 --backend cpu-seq --explain
expect_usage "--split-second: needs --backend hybrid" $P --n 64 --split-second cpu
if ! "$HR" info --size 1 2>/dev/null | grep -q "compiled in, [1-9]"; then
  expect_usage "--backend: hybrid needs a CUDA device" $P --backend hybrid --n 64
  expect_usage "model: the model splits between the CPU and GPU 0, and there is no CUDA device 0" model --n 64
fi

# every split bitwise equal to cpu-seq, 2-D and 3-D, both schedules, ghost 1 and 2
for cmd in poisson2d poisson3d; do
  n=61; [ $cmd = poisson3d ] && n=21
  "$HR" $cmd --no-bandwidth --quiet --n $n --iters 30 --backend cpu-seq --output "$T/ref.raw" >/dev/null 2>&1
  for s in 0 0.3 0.7 1 "0.5 --split-ghost 2" "0.4 --schedule naive" "0.4 --threads 2"; do
    # shellcheck disable=SC2086
    "$HR" $cmd --no-bandwidth --quiet --n $n --iters 30 $H --split $s --output "$T/h.raw" >/dev/null 2>"$T/err" &&
      cmp -s "$T/ref.raw" "$T/h.raw" && ok || bad "$cmd --split $s differs from cpu-seq: $(cat "$T/err")"
  done
done

# --explain and the JSON: a given split, and auto (the model calibrated on the two teams)
"$HR" $P $H --n 64 --iters 20 --split 0.25 --explain --json "$T/g.json" >"$T/out" 2>"$T/err"
grep -q "^split: 16 of 64 rows on the CPU" "$T/out" && grep -q "^measured: .* s per sweep" "$T/out" && ok ||
  bad "--explain of a given split: $(cat "$T/out" "$T/err")"
python3 -c "import json,sys; h=json.load(open(sys.argv[1]))['hybrid']; assert h['rows_cpu']==16 and h['chosen_by']=='given' and h['exchanges']==20, h" \
  "$T/g.json" && ok || bad "hybrid JSON (given)"
"$HR" $P $H --n 128 --iters 20 --explain --json "$T/a.json" >"$T/out" 2>"$T/err"
grep -q "chosen by the model" "$T/out" && grep -q "predicted curve" "$T/out" && grep -q "predicted/measured" "$T/out" && ok ||
  bad "--explain of auto: $(cat "$T/out" "$T/err")"
python3 - "$T/a.json" <<'PY' && ok || bad "hybrid JSON (auto): $(cat "$T/a.json")"
import json, sys
h = json.load(open(sys.argv[1]))["hybrid"]
assert h["chosen_by"] == "model" and 0 <= h["rows_cpu"] <= 128, h
assert h["predicted_s_per_sweep"] > 0 and h["t_cpu_s"] > 0 and h["t_gpu_s"] > 0, h
PY

# auto's watch, forced (HETRELAX_AUTO_WATCH=force): the run falls back from the split after its
# first window, says so on a line of its own and in the JSON, and stays bitwise cpu-seq's
"$HR" poisson2d --no-bandwidth --quiet --n 200 --iters 20000 --backend cpu-seq --output "$T/wref.raw" >/dev/null 2>&1
HETRELAX_AUTO_WATCH=force "$HR" poisson2d --no-bandwidth --quiet --n 200 --iters 20000 $H --split 0.5 \
  --output "$T/w.raw" --json "$T/w.json" >"$T/out" 2>"$T/err"
grep -q "^hybrid: auto's split of 100 rows ran .* GPU-only from sweep [0-9]* on" "$T/out" &&
  cmp -s "$T/wref.raw" "$T/w.raw" && ok || bad "forced fall-back: $(cat "$T/out" "$T/err")"
python3 -c "import json,sys; h=json.load(open(sys.argv[1]))['hybrid']; assert h['rows_cpu']==0 and h['fallback_rows_cpu']==100 and 0<h['fallback_sweep']<20000, h" \
  "$T/w.json" && ok || bad "hybrid JSON (fall-back): $(cat "$T/w.json")"

# hetrelax model: the curve and the choice, without a run
"$HR" model --split-second cpu --n 96 --threads 2 --json "$T/m.json" >"$T/out" 2>"$T/err" && ok || bad "model: $(cat "$T/err")"
grep -q "predicted curve" "$T/out" && ok || bad "model text: $(cat "$T/out")"
python3 - "$T/m.json" <<'PY' && ok || bad "model JSON: $(cat "$T/m.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rows"] == 96 and len(d["curve"]) == 27 and d["curve"][0]["split"] == 0, d
assert 0 <= d["chosen_rows_cpu"] <= 96 and d["predicted_s_per_sweep"] > 0, d
PY
expect_usage "model: --nz: needs --dim 3" model --dim 2 --nz 8
expect_usage "model: --schedule" model --schedule x

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
