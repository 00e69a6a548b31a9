#!/usr/bin/env bash
# --gpus N. Bad input is one line naming --gpus (exit 2); runs use
# --backend hybrid --split-second cpu --gpus N (N CPU teams: the same chain as N GPUs, no GPU
# needed) and must be bitwise equal to cpu-seq, 2-D and 3-D, ghost 1 and 2, uneven slabs.
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"
P="poisson2d --no-bandwidth --quiet --n 64"
H="--backend hybrid --split-second cpu"
expect_usage "--gpus: 16 GPUs from device 0, but [0-9]* CUDA device(s) present" $P --backend gpu --gpus 16
expect_usage "--gpus: needs --backend gpu (not cpu-threads)" $P --backend cpu-threads --gpus 2
expect_usage "--gpus: needs --backend gpu (not cpu-seq)" poisson3d --n 8 --backend cpu-seq --gpus 2
expect_usage "--gpus: one process drives several GPUs: under MPI" $P --gpus 2 --decomp 1x2
expect_usage "--gpus: equal parts on GPUs: drop --split" $P $H --gpus 2 --split 0.5
expect_usage "--gpus: runs its own kernel" $P $H --gpus 2 --kernel split
expect_usage "--gpus: 17 is out of range \[1, 16\]" $P --gpus 17
expect_usage "--gpus: 9 parts of ghost width 1 cannot split 8 rows" poisson2d --n 8 $H --gpus 9

for cmd in poisson2d poisson3d; do
  n=61; [ $cmd = poisson3d ] && n=21
  "$HR" $cmd --no-bandwidth --quiet --n $n --iters 30 --backend cpu-seq --output "$T/ref.raw" >/dev/null 2>&1
  for s in 2 3 4 "3 --split-ghost 2" "4 --schedule naive" "2 --threads 2"; do
    # shellcheck disable=SC2086
    "$HR" $cmd --no-bandwidth --quiet --n $n --iters 30 $H --gpus $s --output "$T/h.raw" >/dev/null 2>"$T/err" &&
      cmp -s "$T/ref.raw" "$T/h.raw" && ok || bad "$cmd --gpus $s differs from cpu-seq: $(cat "$T/err")"
  done
  "$HR" $cmd --no-bandwidth --quiet --n $n --iters 30 $H --gpus 3 --verify --json "$T/g.json" >"$T/out" 2>&1 &&
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); h=d['hybrid']; assert h['parts']==3 and h['exchanges']==30, h" \
      "$T/g.json" && ok || bad "$cmd --gpus 3 --verify/JSON: $(cat "$T/out")"
done

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
