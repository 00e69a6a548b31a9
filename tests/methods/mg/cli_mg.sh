#!/usr/bin/env bash
# poisson2d/poisson3d --method mg|cg with --pc, --cycle, --pre/--post,
# --smoother, --levels, --precision mixed: bad input is one line naming the flag (exit 2);
# small solves converge, print one progress line per cycle with the factor, and write JSON
# with cycles, factors and time per unknown. Exit 77 when the build has no multigrid library.
set -u
HR=$1
. "$(dirname "$0")/../../tools/cli_lib.sh"
P="poisson2d --no-bandwidth --quiet"
# flags of multigrid refused for the relaxation methods, in every build
expect_usage "--pc: needs --method mg or cg" $P --n 31 --pc mg
expect_usage "--cycle: needs --method mg or cg" $P --n 31 --cycle w
expect_usage "--precision: mixed needs --method mg or cg" $P --n 31 --precision mixed
expect_usage "--method: unknown value 'amg'" $P --method amg
if "$HR" $P --n 31 --method mg 2>&1 | grep -q "no multigrid library"; then
  echo "this build has no multigrid library: solves skipped ($passes checks passed, $fails failed)"
  [ $fails -eq 0 ] && exit 77 || exit 1
fi

# bad input
# sizes other than 2^k - 1 run through hr_grid_solver (tests/tools/cli_general.sh)
"$HR" $P --method mg --nx 100 --ny 63 --tol 1e-8 >"$T/out" 2>"$T/err" && ok || bad "mg on 100 x 63: $(cat "$T/err")"
expect_usage "--levels: at most" $P --method mg --n 63 --levels 20
expect_usage "--levels" $P --method mg --n 63 --levels 0
expect_usage "--pc: mg preconditions --method cg only" $P --method mg --pc mg --n 63
expect_usage "--cycle: unknown value 'x'" $P --method mg --cycle x
expect_usage "--smoother: unknown value" $P --method mg --smoother sor
expect_usage "--pre: " $P --method mg --pre -1
expect_usage "--cycle: needs --method mg or --pc mg" $P --method cg --cycle w --n 63
expect_usage "--cycle" $P --method cg --pc mg --cycle w --n 63
expect_usage "gpu: no CUDA device 99" $P --method mg --backend gpu --device 99 --n 63
expect_usage "--checkpoint: not available with --method mg" $P --method mg --n 63 --checkpoint "$T/c.ckpt"
expect_usage "--verify" $P --method cg --n 63 --verify
expect_usage "--kernel: not used by --method mg" $P --method mg --n 63 --kernel seq
expect_usage "--omega: with --method mg" $P --method mg --n 63 --omega 0.8
expect_usage "--method: sor: decomposed\|--method: mg" poisson3d --no-bandwidth --method mg --n 15 --decomp 2x1x1

# --rhs FILE holds values of the solve's precision: fp64 by default for mg (a file of 63^2
# doubles is read whole; the same values as fp32 are refused by their size)
python3 -c "
import struct, sys
n = 63
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<%dd' % (n * n), *[((i * 7919) % 101) / 50.0 - 1.0 for i in range(n * n)]))
with open(sys.argv[2], 'wb') as f:
    f.write(struct.pack('<%df' % (n * n), *[((i * 7919) % 101) / 50.0 - 1.0 for i in range(n * n)]))
" "$T/f64.raw" "$T/f32.raw"
"$HR" poisson2d --no-bandwidth --quiet --method mg --n 63 --rhs "$T/f64.raw" --tol 1e-8 >"$T/out" 2>"$T/err" &&
  ok || bad "mg with an fp64 --rhs file and no --precision: $(cat "$T/err")"
"$HR" poisson2d --no-bandwidth --quiet --method mg --n 63 --precision single --rhs "$T/f32.raw" --tol 1e-5 \
  >"$T/out" 2>"$T/err" && ok || bad "mg single with an fp32 --rhs file: $(cat "$T/err")"
expect_usage "--rhs" $P --method mg --n 63 --rhs "$T/f32.raw"

# solves: V(2,2) red-black converges with a small factor, one line per cycle
"$HR" poisson2d --no-bandwidth --method mg --n 63 --rhs manufactured --tol 1e-8 --json "$T/m.json" >"$T/out" 2>"$T/err" &&
  ok || bad "mg 2-D run: $(cat "$T/err")"
python3 - "$T/m.json" "$T/out" <<'PY' && ok || bad "mg 2-D JSON/progress: $(cat "$T/out")"
import json, re, sys
d = json.load(open(sys.argv[1])); out = open(sys.argv[2]).read()
assert d["method"] == "mg" and d["reason"] == "converged" and d["relative_residual"] < 1e-8, d
assert 0 < d["convergence_factor"] <= 0.2 and d["cycles"] >= 3 and d["ns_per_unknown"] > 0, d
assert d["cycle"] == "v" and d["pre"] == 2 and d["post"] == 2 and d["smoother"] == "redblack", d
lines = re.findall(r"cycle +(\d+) +relative residual ([0-9.e+-]+) +factor ([0-9.]+)", out)
assert len(lines) == d["cycles"], (len(lines), d["cycles"])
assert d["max_error"] < 1e-3, d["max_error"]
PY
# 3-D FMG, W-cycles with Jacobi, CG, CG + MG, mixed precision: each converges to its tolerance
run_ok() { # label args...
  local label=$1; shift
  "$HR" "$@" --no-bandwidth --quiet --json "$T/r.json" >"$T/out" 2>"$T/err"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['reason']=='converged' and d['relative_residual']<float(sys.argv[2]), d" \
    "$T/r.json" "$TOL" && ok || bad "$label: $(cat "$T/err") $(cat "$T/r.json" 2>/dev/null | tr -d '\n' | head -c 400)"
}
TOL=1e-8 run_ok "3-D fmg" poisson3d --method mg --cycle fmg --n 31 --tol 1e-8
TOL=1e-8 run_ok "w jacobi" poisson2d --method mg --cycle w --smoother jacobi --pre 3 --post 3 --n 127 --tol 1e-8
TOL=1e-8 run_ok "cheby levels 3" poisson2d --method mg --smoother cheby --levels 3 --n 63 --tol 1e-8
TOL=1e-8 run_ok "cg" poisson2d --method cg --n 50 --tol 1e-8 --iters 2000
TOL=1e-8 run_ok "cg + mg" poisson3d --method cg --pc mg --n 31 --tol 1e-8
TOL=1e-10 run_ok "mixed" poisson2d --method mg --precision mixed --n 127 --tol 1e-10
# --iters caps the cycles: reason iterations
"$HR" $P --method mg --n 63 --iters 2 --tol 1e-14 --json "$T/i.json" >/dev/null 2>&1
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['cycles']==2 and d['reason']=='iterations', d" "$T/i.json" &&
  ok || bad "--iters 2: $(cat "$T/i.json")"
# time_parts: what each part of the set-up and of the solve is; they add up to the totals
python3 -c "import random, struct, sys; random.seed(1); sys.stdout.buffer.write(struct.pack('<16129d', *[random.random() for _ in range(16129)]))" >"$T/rhs.raw"
"$HR" $P --method mg --n 127 --rhs "$T/rhs.raw" --tol 1e-8 --json "$T/p.json" >/dev/null 2>&1
python3 - "$T/p.json" <<'PY' && ok || bad "time_parts: $(cat "$T/p.json" | tr -d '\n' | head -c 600)"
import json, sys
d = json.load(open(sys.argv[1])); p = d["time_parts"]
setup = sum(p[k] for k in ("setup_device_s", "setup_alloc_s", "setup_rhs_s", "setup_upload_s", "setup_graphs_s"))
solve = p["solve_first_check_s"] + p["solve_iterations_s"]
assert all(v >= 0 for v in p.values()), p
assert p["read_rhs_s"] > 0 and p["setup_alloc_s"] > 0 and p["solve_iterations_s"] > 0, p
assert setup <= d["time_setup_s"] * 1.0001 + 1e-6, (setup, d["time_setup_s"])
assert abs(solve - d["time_s"]) <= 1e-3 * d["time_s"] + 1e-6, (solve, d["time_s"])
PY
# --output: the solution in double, the same for 1 and 2 threads (bitwise)
"$HR" $P --method mg --n 63 --backend cpu-seq --output "$T/a.raw" >/dev/null 2>&1
"$HR" $P --method mg --n 63 --backend cpu-threads --threads 2 --output "$T/b.raw" >/dev/null 2>&1
[ "$(stat -c %s "$T/a.raw")" -eq $((63 * 63 * 8)) ] && cmp -s "$T/a.raw" "$T/b.raw" && ok || bad "mg --output 1 vs 2 threads"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
