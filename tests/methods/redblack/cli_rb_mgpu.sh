#!/usr/bin/env bash
# Red-black on several GPUs through the CLI (label gpu; exit 77 without a device):
# --kernel rb-mgpu --gpus N bitwise equal to rb-seq (N slabs on device 0 always, on N devices
# where that many are present), rb-2gpu as before; bad input one line, exit 2.
set -u
HR=$1
. "$(dirname "$0")/../../tools/cli_lib.sh"
P="poisson2d --no-bandwidth --quiet --method redblack --omega 1.3 --rhs manufactured --n 61 --iters 30"
if "$HR" $P --backend gpu --kernel rb-tuned --n 7 --iters 1 2>&1 | grep -q -e "no CUDA device" -e "no CUDA support"; then
  echo "no CUDA device: skipped"
  exit 77
fi
devices=$("$HR" info 2>/dev/null | sed -n 's/^cuda .* \([0-9][0-9]*\) GPU(s)$/\1/p')
[ -n "$devices" ] || { echo "FAIL: no GPU count in 'hetrelax info'"; exit 1; }
"$HR" $P --backend cpu-seq --kernel rb-seq --output "$T/ref.raw" >/dev/null 2>"$T/err" || bad "rb-seq: $(cat "$T/err")"
same() { # label env... -- args...: the run's --output is rb-seq's, bitwise
  local label=$1; shift
  env "$@" --backend gpu --output "$T/g.raw" >/dev/null 2>"$T/err" && cmp -s "$T/ref.raw" "$T/g.raw" && ok ||
    bad "$label: $(cat "$T/err")"
}
for n in 2 3 4; do
  same "$n slabs on one device" HETRELAX_RB2_ONE=1 "$HR" $P --kernel rb-mgpu --gpus $n
done
same "3 slabs on one device, graphs" HETRELAX_RB2_ONE=1 HETRELAX_RB2_GRAPH=2 "$HR" $P --kernel rb-mgpu --gpus 3
for n in 2 3 4; do
  [ "$devices" -ge $n ] && same "$n GPUs" "$HR" $P --kernel rb-mgpu --gpus $n
done
[ "$devices" -ge 2 ] && same "rb-2gpu" "$HR" $P --kernel rb-2gpu
[ "$devices" -ge 4 ] && same "4 GPUs, graphs" HETRELAX_RB2_GRAPH=4 "$HR" $P --kernel rb-mgpu --gpus 4
# bad input
if [ "$devices" -lt 16 ]; then
  m=$((devices + 1))
  expect_usage "--gpus: red-black on $m GPUs needs devices 0..$devices, $devices CUDA device(s) present" \
    $P --backend gpu --kernel rb-mgpu --gpus $m
fi
expect_usage "--gpus: kernel rb-mgpu needs --gpus N" $P --backend gpu --kernel rb-mgpu
expect_usage "--gpus: kernel rb-2gpu runs on 2 GPUs" $P --backend gpu --kernel rb-2gpu --gpus 4
expect_usage "red-black on 4 GPUs needs at least 6 rows, not 5" $P --backend gpu --kernel rb-mgpu --gpus 4 --n 5
HETRELAX_RB2_ONE=1 HETRELAX_RB2_OLD=1 expect_usage "--gpus: tuning.rb2_old (the in-place scheme) runs on 2 GPUs only" \
  $P --backend gpu --kernel rb-mgpu --gpus 3
expect_usage "--kernel: rb-mgpu does only red-black" poisson2d --no-bandwidth --quiet --n 9 --backend gpu --kernel rb-mgpu --gpus 2

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
