#!/usr/bin/env bash
# --method jacobi|redblack|sor and --omega W|auto on poisson2d and
# poisson3d: flags accepted, bad values one line naming the flag (exit 2), small runs checked
# (red-black bitwise equal across backends, SOR's resolved omega in the JSON, SOR converging
# faster than Jacobi).
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"
jget() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }

for cmd in poisson2d poisson3d; do
  n=48; [ $cmd = poisson3d ] && n=14
  P="$cmd --no-bandwidth --quiet --n $n"
  expect_usage "--method: unknown value 'gs'" $P --method gs
  expect_usage "--omega: auto needs --method redblack or sor" $P --omega auto
  expect_usage "--omega: auto needs" $P --method jacobi --omega auto
  for w in 0 2 2.5 -1 x 1e999; do expect_usage "--omega" $P --method sor --omega "$w"; done
  [ $cmd = poisson2d ] && expect_usage "--method: redblack: kernel spmd does only Jacobi" $P --method redblack --backend cpu-threads --kernel spmd
  expect_usage "--method: sor: kernel seq does only Jacobi" $P --method sor --backend cpu-seq --kernel seq
  expect_usage "--kernel: rb-seq does only red-black" $P --backend cpu-seq --kernel rb-seq
  # red-black kernels listed, marked
  "$HR" $cmd --list-kernels >"$T/list" && grep -q "rb-seq.*--method redblack|sor" "$T/list" && ok || bad "$cmd --list-kernels: no rb-seq"

  # red-black: every CPU kernel bitwise equal to rb-seq (written .raw), and --verify agrees
  for m in redblack sor; do
    "$HR" $P --iters 30 --method $m --backend cpu-seq --output "$T/seq.raw" >/dev/null 2>&1 || bad "$cmd $m cpu-seq run"
    for k in rb-tiles rb-fused; do
      "$HR" $P --iters 30 --method $m --backend cpu-threads --threads 2 --kernel $k --output "$T/$k.raw" --verify \
        >"$T/out" 2>&1 && cmp -s "$T/seq.raw" "$T/$k.raw" && grep -q "bitwise equal" "$T/out" && ok ||
        bad "$cmd $m $k differs from rb-seq: $(cat "$T/out")"
    done
  done
  # redblack with --omega 1 is Gauss-Seidel: not the Jacobi answer
  "$HR" $P --iters 30 --backend cpu-seq --output "$T/jac.raw" >/dev/null 2>&1
  "$HR" $P --iters 30 --method redblack --backend cpu-seq --output "$T/gs.raw" >/dev/null 2>&1
  cmp -s "$T/jac.raw" "$T/gs.raw" && bad "$cmd: redblack gave the Jacobi grid" || ok

  # JSON: method and the resolved omega (sor without --omega: auto)
  "$HR" $P --iters 20 --method sor --backend cpu-seq --json "$T/s.json" >/dev/null 2>&1
  python3 - "$T/s.json" $n <<'PY' && ok || bad "$cmd sor JSON"
import json, math, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
want = 2 / (1 + math.sin(math.pi / (n + 1)))
assert d["method"] == "sor" and d["omega_auto"] is True, d
assert abs(d["omega"] - want) < 1e-12, (d["omega"], want)
PY
  "$HR" $P --iters 20 --method redblack --omega 0.8 --backend cpu-seq --json "$T/r.json" >/dev/null 2>&1
  [ "$(jget "$T/r.json" method)" = redblack ] && [ "$(jget "$T/r.json" omega)" = 0.8 ] && ok || bad "$cmd redblack JSON"
  "$HR" $P --iters 20 --backend cpu-seq --json "$T/j.json" >/dev/null 2>&1
  [ "$(jget "$T/j.json" method)" = jacobi ] && ok || bad "$cmd jacobi JSON method"

  # SOR reaches 1e-6 in far fewer sweeps than Jacobi allows
  "$HR" $P --iters 100000 --tol 1e-6 --check 1 --method sor --backend cpu-seq --precision double --json "$T/c.json" >/dev/null 2>&1
  its=$(jget "$T/c.json" iterations)
  [ "$(jget "$T/c.json" reason)" = converged ] && [ "$its" -le $((4 * n)) ] && ok ||
    bad "$cmd sor to 1e-6: $its sweeps, reason $(jget "$T/c.json" reason)"
done

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
