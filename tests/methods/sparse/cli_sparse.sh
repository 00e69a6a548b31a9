#!/usr/bin/env bash
# CLI tests of `hetrelax sparse`: exit codes, one-line errors naming the flag and the
# file line, JSON keys, output round trip, refusal and divergence.
set -u
BIN=${1:?usage: cli_sparse.sh HETRELAX}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# expect RC PATTERN ARGS...: exit status RC and PATTERN (grep -E) in stdout+stderr
expect() {
  local want=$1 pat=$2; shift 2
  local out rc
  out=$("$BIN" sparse "$@" 2>&1); rc=$?
  if [ "$rc" -ne "$want" ]; then bad "[$*] exit $rc, want $want: $out"; return; fi
  if [ -n "$pat" ] && ! grep -qE -- "$pat" <<<"$out"; then bad "[$*] output lacks /$pat/: $out"; return; fi
  ok "$*"
}

expect 0 "usage: hetrelax sparse" --help
expect 0 "async +cpu-threads" --list-methods
expect 2 "^hetrelax sparse: --bogus: unknown option" --bogus
expect 2 "--matrix: give exactly one" --method gs
expect 2 "--matrix: give exactly one" --gen laplace2d:4 --matrix x.mtx
expect 2 "--method: unknown value 'sor'" --gen laplace2d:4 --method sor
expect 2 "--tol: expected a finite number" --gen laplace2d:4 --tol abc
expect 2 "--max-iters: -1 is out of range" --gen laplace2d:4 --max-iters -1
expect 2 "--local-iters: 0 is out of range" --gen laplace2d:4 --local-iters 0
expect 2 "--tau: 2: must be" --gen laplace2d:4 --tau 2
expect 2 "--tau: only for --method jacobi" --gen laplace2d:4 --method gs --tau 0.5
expect 2 "--gen: 'nosuch:3': unknown generator" --gen nosuch:3
expect 2 "--fault: expected FRACTION@ITER" --gen laplace2d:4 --fault 0.25
expect 2 "--fault: expected FRACTION@ITER" --gen laplace2d:4 --fault 0.25@10:recover=x
expect 2 "--fault: not defined for cg" --gen laplace2d:4 --method cg --fault 0.25@10
expect 2 "--matrix: $T/none.mtx: cannot open" --matrix "$T/none.mtx"
expect 2 "--rhs: $T/none.mtx: cannot open" --gen laplace2d:4 --rhs "$T/none.mtx"
expect 2 "--backend: method 'gs' has no gpu backend" --gen laplace2d:4 --method gs --backend gpu
expect 0 '"colors": ?2' --gen laplace2d:8 --method gs-mc --threads 2 --quiet --json -

# the gpu backend on a machine without a GPU (a CUDA build here):
# one line naming --backend, exit 2, as poisson2d does
if "$BIN" sparse --list-methods | grep -q " gpu "; then
  if "$BIN" info --no-bandwidth 2>/dev/null | grep -qE "^cuda +compiled in, 0 GPU"; then
    for m in jacobi async cg; do
      expect 2 "^hetrelax sparse: --backend: gpu: no CUDA device 0 \(found 0\)$" --gen fv2d:10 --backend gpu --method $m
    done
    expect 2 "^hetrelax sparse: --backend: gpu: no CUDA device 0 \(found 0\)$" --gen fv2d:10 --backend gpu --method async --gpus 2
  else
    echo "skip no-GPU errors: a GPU is present"
  fi
fi

# malformed files: the error names the file and the line
printf '%%%%MatrixMarket matrix coordinate real general\n%% c\n2 2 2\n1 1 4\n2 x 4\n' >"$T/bad.mtx"
expect 2 "^hetrelax sparse: --matrix: $T/bad.mtx:5: index 'x' is not an integer" --matrix "$T/bad.mtx"
printf '%%%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n' >"$T/cplx.mtx"
expect 2 "cplx.mtx:1: unsupported field 'complex'" --matrix "$T/cplx.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 4\n2 2 4\n' >"$T/rect.mtx"
expect 2 "--matrix: .*is 2 x 3: a solve needs a square matrix" --matrix "$T/rect.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 4\n2 1 1\n' >"$T/nodiag.mtx"
expect 2 "--matrix: .*row 2 has a missing diagonal" --matrix "$T/nodiag.mtx"
expect 0 "not converged after 0 iterations" --matrix "$T/nodiag.mtx" --method cg --max-iters 0 --tol 0 --quiet
expect 2 "--matrix: .*row 2 has a missing diagonal" --matrix "$T/nodiag.mtx" --method gs-mc

# not Matrix Market, or endless: refused at once (timeout: the reader
# read /dev/zero or a pipe to the end before)
expect_fast() { local t0=$SECONDS; expect "$@"; [ $((SECONDS - t0)) -le 5 ] || bad "[$*] took $((SECONDS - t0)) s"; }
expect_fast 2 "^hetrelax sparse: --matrix: /dev/zero:1: not a Matrix Market file" --matrix /dev/zero
out=$(timeout 20 bash -c "yes | '$BIN' sparse --matrix /dev/stdin" 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--matrix: /dev/stdin:1: expected the header" <<<"$out" && ok "yes | --matrix /dev/stdin" ||
  bad "yes | --matrix /dev/stdin: exit $rc: $out"
out=$(timeout 20 bash -c "{ printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n'; yes '1 1 1'; } |
  '$BIN' sparse --matrix /dev/stdin" 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q -- "/dev/stdin:5: more entries than the 2 declared" <<<"$out" && ok "endless entries" ||
  bad "endless entries: exit $rc: $out"
# item 14: repeated entries are summed (more entries than positions is fine); an
# overflowing sum is refused at its line
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 2\n2 2 2\n1 1 2\n2 2 2\n1 2 1\n' >"$T/dup.mtx"
expect 0 "result +converged" --matrix "$T/dup.mtx" --quiet
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1e308\n2 2 1\n1 1 1e308\n' >"$T/dupinf.mtx"
expect 2 "^hetrelax sparse: --matrix: $T/dupinf.mtx:5: entry \(1, 1\) repeats an earlier one and the sum overflows" --matrix "$T/dupinf.mtx"

# rho(B) = 1.8: plain Jacobi refused, forced Jacobi diverges, scaled Jacobi converges
printf '%%%%MatrixMarket matrix coordinate real symmetric\n3 3 6\n1 1 1\n2 1 .9\n3 1 .9\n2 2 1\n3 2 .9\n3 3 1\n' >"$T/nd.mtx"
expect 2 "--method: rho\(B\) = 1.8000 >= 1: Jacobi diverges; use the scaled iteration --tau auto" --matrix "$T/nd.mtx"
expect 1 "diverged" --matrix "$T/nd.mtx" --tau 1
expect 0 "result +converged" --matrix "$T/nd.mtx" --tau auto
expect 0 "rho\(B\) = 1.8000, rho\(\|B\|\) = 1.8000" --matrix "$T/nd.mtx" --method cg --analyze
expect 0 "warning: rho\(\|B\|\) = 1.8000 >= 1: asynchronous convergence" --matrix "$T/nd.mtx" --method async --max-iters 2 --tol 0

# cg on a matrix that is not symmetric: a warning, and stopped as
# diverged when the residual grows (it ran to 830x the initial residual, exit 0)
python3 - "$T/nonsym.mtx" <<'PY'
import random, sys
random.seed(3)
n, ent = 200, {}
for i in range(n):
    ent[(i, i)] = 4.0
    if i + 1 < n: ent[(i, i + 1)] = -3.0
    if i > 0: ent[(i, i - 1)] = -0.5
    for k in range(2):
        j = random.randrange(n)
        if j != i: ent[(i, j)] = ent.get((i, j), 0) + random.uniform(-1, 1)
with open(sys.argv[1], "w") as f:
    f.write("%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n" % (n, n, len(ent)))
    for (i, j), v in sorted(ent.items()): f.write("%d %d %.17g\n" % (i + 1, j + 1, v))
PY
expect 1 "warning: the matrix is not symmetric: cg may not converge" --matrix "$T/nonsym.mtx" --method cg --quiet
expect 1 "diverged at iteration [0-9]+: .*the matrix is not symmetric" --matrix "$T/nonsym.mtx" --method cg --quiet
# item 13: a right-hand side of 1e300 (every square of the norms overflows) converges
# with a true, finite residual
python3 -c 'print("%%MatrixMarket matrix array real general\n300 1"); [print("1e300" if i % 3 else "-2e299") for i in range(300)]' >"$T/big.mtx"
expect 0 "result +converged after [0-9]+ iterations .*relative residual [0-9.]+e-1[0-9]" --gen random-spd:300:0.02:1 --rhs "$T/big.mtx" --quiet
expect 0 "result +converged after [0-9]+ iterations .*relative residual [0-9.]+e-1[0-9]" --gen random-spd:300:0.02:1 --rhs "$T/big.mtx" --method cg --quiet

# JSON keys, and the solution written, read back and checked
if "$BIN" sparse --gen fv2d:20 --method async --local-iters 5 --block 64 --analyze --rhs random \
     --json "$T/run.json" --output "$T/x.mtx" --quiet >/dev/null 2>&1; then
  if python3 - "$T/run.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
need = ["n", "nnz", "method", "iterations", "time_s", "relative_residual", "converged", "rho_B", "rho_absB",
        "time_per_iter_s", "history"]
missing = [k for k in need if k not in j]
assert not missing, missing
assert j["n"] == 400 and j["nnz"] == (3 * 20 - 2) ** 2 and j["method"] == "async", j
assert j["converged"] is True and j["relative_residual"] < 1e-10, j
assert 0.8 < j["rho_B"] < 0.9 and j["iterations"] > 0
PY
  then ok "json keys"; else bad "json keys"; fi
else bad "json run failed"; fi
expect 0 "converged after 0 iterations" --gen fv2d:20 --rhs random --x0 "$T/x.mtx" --tol 1e-9
expect 2 "--x0: .*x.mtx has 400 values, the matrix has 401" --gen random-spd:401:0.01:1 --x0 "$T/x.mtx"
"$BIN" sparse --gen laplace2d:6 --json - --quiet 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["converged"] and "rho_B" not in j' \
  && ok "json to stdout" || bad "json to stdout"

# fault injection on the CLI
expect 0 "fault +0.25 of the components" --gen fv2d:20 --method async --fault 0.25@5:recover=10 --quiet
"$BIN" sparse --gen fv2d:20 --method async --fault 0.25@5 --max-iters 200 --json - --quiet 2>/dev/null |
  python3 -c 'import json,sys; j=json.load(sys.stdin); assert not j["converged"] and j["fault"]["components"]==100, j' \
  && ok "fault without recovery stalls" || bad "fault without recovery stalls"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
