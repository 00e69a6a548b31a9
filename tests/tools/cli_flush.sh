#!/usr/bin/env bash
# --flush-subnormals on poisson2d and poisson3d: in --help; the spike's front keeps subnormal
# values without it and none with it; cpu-seq and cpu-threads (and --verify, and a checkpointed
# run) bitwise alike with it; the summary line and the JSON field say whether it flushed;
# multigrid and the general-problem engine take it too.
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"
jget() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }
# subnormal floats in a .raw file of native floats
subnormals() {
  python3 - "$1" <<'PY'
import array, sys
a = array.array("f")
with open(sys.argv[1], "rb") as f:
    a.frombytes(f.read())
print(sum(1 for v in a if v != 0.0 and abs(v) < 1.1754943508222875e-38))
PY
}

for cmd in poisson2d poisson3d; do
  "$HR" $cmd --help >"$T/help" 2>&1 && grep -q -- "--flush-subnormals" "$T/help" && ok || bad "$cmd --help: no --flush-subnormals"
  expect_usage "--flush-subnormals" $cmd --n 8 --flush-subnormals=yes

  # the spike's front lies inside the grid: 2-D 301 points, 120 sweeps; 3-D 121, 58
  if [ $cmd = poisson2d ]; then P="$cmd --n 301 --iters 120"; thr=spmd; else P="$cmd --n 121 --iters 58"; thr=pencil; fi
  P="$P --precision single --no-bandwidth --quiet --monitor 0"
  "$HR" $P --backend cpu-seq --output "$T/keep.raw" --json "$T/keep.json" >"$T/out" 2>&1 || bad "$cmd cpu-seq run: $(cat "$T/out")"
  "$HR" $P --backend cpu-seq --flush-subnormals --output "$T/seq.raw" --json "$T/seq.json" >"$T/out" 2>&1 ||
    bad "$cmd cpu-seq --flush-subnormals run: $(cat "$T/out")"
  grep -q "subnormals flushed to zero in every CPU thread" "$T/out" && ok || bad "$cmd: no summary line: $(cat "$T/out")"
  k=$(subnormals "$T/keep.raw") f=$(subnormals "$T/seq.raw")
  [ "$k" -gt 0 ] && [ "$f" -eq 0 ] && ok || bad "$cmd: $k subnormal values kept, $f flushed (want > 0 and 0)"
  cmp -s "$T/keep.raw" "$T/seq.raw" && bad "$cmd: --flush-subnormals changed nothing" || ok
  [ "$(jget "$T/seq.json" flush_subnormals)" = True ] && [ "$(jget "$T/keep.json" flush_subnormals)" = False ] && ok ||
    bad "$cmd: JSON flush_subnormals $(jget "$T/seq.json" flush_subnormals) / $(jget "$T/keep.json" flush_subnormals)"
  "$HR" $P --backend cpu-seq --output "$T/k2.raw" >"$T/out" 2>&1
  grep -q "subnormals" "$T/out" && bad "$cmd: a summary line on subnormals without the flag" || ok

  # cpu-threads: bitwise cpu-seq with flushing, --verify runs its reference flushed too
  for t in 2 3; do
    "$HR" $P --backend cpu-threads --kernel $thr --threads $t --flush-subnormals --verify --output "$T/thr.raw" \
      >"$T/out" 2>&1 && cmp -s "$T/seq.raw" "$T/thr.raw" && grep -q "bitwise equal" "$T/out" && ok ||
      bad "$cmd $thr x$t --flush-subnormals differs from cpu-seq: $(cat "$T/out")"
  done
  # a checkpointed run (sweeps in chunks) flushes in every chunk
  "$HR" $P --backend cpu-threads --threads 2 --flush-subnormals --checkpoint "$T/ck.bin" --checkpoint-every 25 \
    --output "$T/ck.raw" >"$T/out" 2>&1 && cmp -s "$T/seq.raw" "$T/ck.raw" && ok ||
    bad "$cmd checkpointed --flush-subnormals differs: $(cat "$T/out")"
done

# multigrid (hr_mg) and a general problem (hr_grid_solver): the flag reaches them
"$HR" poisson2d --method mg --n 63 --backend cpu-threads --threads 2 --flush-subnormals --quiet --json "$T/mg.json" \
  >"$T/out" 2>&1 && grep -q "subnormals flushed to zero" "$T/out" && [ "$(jget "$T/mg.json" flush_subnormals)" = True ] &&
  ok || bad "mg --flush-subnormals: $(cat "$T/out")"
"$HR" poisson2d --bc x-=neumann --n 40 --iters 50 --backend cpu-threads --threads 2 --flush-subnormals --quiet \
  --json "$T/g.json" >"$T/out" 2>&1 && grep -q "subnormals flushed to zero" "$T/out" &&
  [ "$(jget "$T/g.json" flush_subnormals)" = True ] && ok || bad "general --flush-subnormals: $(cat "$T/out")"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
