#!/usr/bin/env bash
# poisson2d/poisson3d on problems other than the model problem: --bc, --coef, --lx/--ly/--lz,
# --write-matrix and --write-rhs. Bad input is one line naming the flag (exit 2); flags that
# leave the model problem as it is keep its own path bitwise; box lengths run it through
# hr_grid_solver, bitwise the same; the written A and b are the system the command solves
# (NumPy solves them); the JSON records the whole problem; a failed run leaves earlier files
# alone. Then the solves of general problems: a mixed 2-D problem by multigrid and by CG, a
# singular one, a periodic one, a coefficient field, 3-D. Exit 77 when the library has no
# general-problem engine (everything before that ran and passed).
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"
PY=/usr/bin/python3
# NumPy checks the written systems (scripts/install-deps.sh installs it): without it, skipped
if ! $PY -c "import numpy" 2>/dev/null; then
  echo "SKIP: $PY has no NumPy (python3-numpy)"
  exit 77
fi
P2="poisson2d --no-bandwidth --quiet"
P3="poisson3d --no-bandwidth --quiet"
no_tmp() { # no temporary file left behind in $T
  if ls -A "$T" | grep -q '\.tmp-'; then bad "$1: temporary files left: $(ls -A "$T" | grep '\.tmp-')"; else ok; fi
}

# ---------------------------------------------------------------- the flags
for f in --bc --coef --lx --ly --write-matrix --write-rhs; do
  "$HR" poisson2d --help | grep -q -- "^  $f " && ok || bad "poisson2d --help lacks $f"
done
"$HR" poisson3d --help | grep -q -- "^  --lz " && ok || bad "poisson3d --help lacks --lz"
"$HR" poisson2d --help | grep -q -- "^  --lz " && bad "poisson2d --help lists --lz" || ok

# raw fp64 files for the checks below (faces of a 15 x 10 grid: x faces 10 values, y faces 15)
$PY - "$T" <<'PY'
import struct, sys
d = sys.argv[1]
def w(name, vals): open(f"{d}/{name}", "wb").write(struct.pack("<%dd" % len(vals), *vals))
w("f15.raw", [1.0] * 15)
w("f10.raw", [0.5] * 10)
w("fnan.raw", [1.0] * 7 + [float("nan")] + [1.0] * 7)
w("finf.raw", [1.0] * 14 + [float("inf")])
w("c150.raw", [2.0] * 150)
w("c149.raw", [2.0] * 149)
w("cneg.raw", [2.0] * 20 + [-1.0] + [2.0] * 129)
w("czero.raw", [2.0] * 20 + [0.0] + [2.0] * 129)
w("cnan.raw", [2.0] * 20 + [float("nan")] + [2.0] * 129)
PY
G="$P2 --nx 15 --ny 10 --iters 5"

# ---------------------------------------------------------------- bad input: one line, exit 2
expect_usage "--bc: x is periodic on face x- only" $G --bc x-=periodic
expect_usage "--bc: y is periodic on face y+ only" $G --bc y=periodic,y-=neumann
expect_usage "--bc: unknown face 'w-'" $G --bc w-=dirichlet
expect_usage "--bc: unknown face 'X'" $G --bc X=dirichlet
expect_usage "--bc: x-: unknown type 'robin'" $G --bc x-=robin:1
expect_usage "--bc: z-: poisson2d has no z faces" $G --bc z-=neumann
expect_usage "--bc: z: poisson2d has no z faces" $G --bc z=periodic
expect_usage "--lz: unknown option" $G --lz 2
expect_usage "--bc: x=periodic takes no value" $G --bc x=periodic:1
expect_usage "--bc: y-=periodic takes no value" $G --bc y-=periodic:f15.raw
expect_usage "--bc: 'x-': expected FACE=TYPE" $G --bc x-
expect_usage "--bc: '=dirichlet'\|--bc: unknown face ''" $G --bc =dirichlet
expect_usage "--bc: x-: unknown type ''" $G --bc x-=
expect_usage "--bc: x-=dirichlet: empty value" $G --bc x-=dirichlet:
expect_usage "--bc: x-=neumann: value nan is not finite" $G --bc x-=neumann:nan
expect_usage "--bc: x+=dirichlet: value inf is not finite" $G --bc x+=dirichlet:inf
expect_usage "--bc: empty item" $G --bc x-=dirichlet,,y=neumann
expect_usage "--bc: empty item" $G --bc x-=dirichlet,
expect_usage "--bc: face x-: cannot read '$T/none.raw'" $G --bc "x-=dirichlet:$T/none.raw"
expect_usage "--bc: face y+: '$T/f10.raw': too short" $G --bc "y+=dirichlet:$T/f10.raw"
expect_usage "--bc: face x-: '$T/f15.raw': too long" $G --bc "x-=neumann:$T/f15.raw"
expect_usage "--bc: face y-: '$T/fnan.raw': value 7 (0-based) is nan" $G --bc "y-=neumann:$T/fnan.raw"
expect_usage "--bc: face y+: '$T/finf.raw': value 14 (0-based) is inf" $G --bc "y+=dirichlet:$T/finf.raw"
expect_usage "--bc: periodic x needs at least 3 unknowns" $P2 --nx 2 --ny 5 --bc x=periodic
expect_usage "--coef: 0: must be finite and > 0" $G --coef 0
expect_usage "--coef: -1: must be finite and > 0" $G --coef -1
expect_usage "--coef: nan: must be finite and > 0" $G --coef nan
expect_usage "--coef: inf: must be finite and > 0" $G --coef inf
expect_usage "--coef: cannot read '$T/none.raw'" $G --coef "$T/none.raw"
expect_usage "--coef: '$T/c149.raw': too short" $G --coef "$T/c149.raw"
expect_usage "--coef: '$T/f15.raw': too short" $G --coef "$T/f15.raw"
expect_usage "--coef: value 20 must be finite and > 0 (got -1)" $G --coef "$T/cneg.raw"
expect_usage "--coef: value 20 must be finite and > 0 (got 0)" $G --coef "$T/czero.raw"
expect_usage "--coef: '$T/cnan.raw': value 20 (0-based) is nan" $G --coef "$T/cnan.raw"
expect_usage "--lx: 0: must be finite and > 0" $G --lx 0
expect_usage "--ly: -2: must be finite and > 0" $G --ly -2
expect_usage "--lx: 'abc' is not a number" $G --lx abc
expect_usage "--lz: nan: must be finite and > 0" $P3 --n 7 --lz nan
expect_usage "--bc: unknown face 'w'" $P3 --n 7 --bc w=neumann
expect_usage "--write-matrix: cannot write '$T/no/A.mtx'" $G --write-matrix "$T/no/A.mtx"
expect_usage "--write-rhs: cannot write '$T'" $G --write-rhs "$T"
expect_usage "--write-matrix: cannot write '$T/no/A.mtx'" $G --lx 2 --write-matrix "$T/no/A.mtx"
# what a general run does not do (yet)
expect_usage "--checkpoint: not available for a problem other than the model problem" \
  $G --bc x=neumann --checkpoint "$T/c.ckpt"
expect_usage "--verify: not available" $G --lx 2 --verify
expect_usage "--cycle: needs --method mg or cg" $G --bc x=neumann --cycle w
expect_usage "--precision: mixed needs --method mg or cg" $G --coef 2 --precision mixed
expect_usage "--kernel: not used by --method mg" $G --coef 2 --method mg --kernel seq
expect_usage "--pc: mg preconditions --method cg only" $G --coef 2 --method mg --pc mg
expect_usage "--cycle: needs --method mg or --pc mg" $G --coef 2 --method cg --cycle w
expect_usage "--omega: auto needs --method redblack or sor" $G --lx 2 --omega auto
expect_usage "--omega: with --method mg: the weight of --smoother jacobi only" $G --coef 2 --method mg --omega 0.8
no_tmp "bad input"

# ---------------------------------------------------------------- the model problem, as before
M="$P2 --n 31 --iters 40 --backend cpu-seq"
"$HR" $M --output "$T/m.raw" >"$T/out" 2>"$T/err" || bad "model run: $(cat "$T/err")"
# an --bc of one Dirichlet value everywhere is the model problem: its own path, bitwise
"$HR" poisson2d --no-bandwidth --n 31 --iters 40 --backend cpu-seq --bc all=dirichlet:0 --coef 1 \
  --output "$T/m2.raw" >"$T/out" 2>"$T/err" || bad "--bc all=dirichlet:0: $(cat "$T/err")"
grep -q "n=31 (33 x 33 grid)" "$T/out" && ok || bad "--bc all=dirichlet:0 left the model path: $(cat "$T/out")"
cmp -s "$T/m.raw" "$T/m2.raw" && ok || bad "--bc all=dirichlet:0 --coef 1 differs from the model run"
"$HR" $M --boundary 0.5 --output "$T/b1.raw" 2>"$T/err" || bad "--boundary 0.5: $(cat "$T/err")"
"$HR" $M --bc x=dirichlet:0.5,y=dirichlet:0.5 --output "$T/b2.raw" 2>"$T/err" || bad "--bc 0.5: $(cat "$T/err")"
cmp -s "$T/b1.raw" "$T/b2.raw" && ok || bad "--bc x=dirichlet:0.5,y=dirichlet:0.5 differs from --boundary 0.5"
"$HR" $M --bc x=neumann,y=periodic --bc all=dirichlet:0.5 --output "$T/b4.raw" 2>"$T/err" || bad "--bc twice: $(cat "$T/err")"
cmp -s "$T/b1.raw" "$T/b4.raw" && ok || bad "a later --bc does not override an earlier one"
"$HR" $M --boundary 0.5 --bc all=dirichlet --output "$T/b3.raw" 2>"$T/err" || bad "--bc all=dirichlet: $(cat "$T/err")"
cmp -s "$T/b1.raw" "$T/b3.raw" && ok || bad "--bc all=dirichlet (no value) is not --boundary's value"
# box lengths run through hr_grid_solver: the unit square is still the model problem, bitwise
"$HR" poisson2d --no-bandwidth --n 31 --iters 40 --backend cpu-seq --lx 1 --ly 1 --output "$T/l.raw" \
  --json "$T/l.json" >"$T/out" 2>"$T/err" || bad "--lx 1 --ly 1: $(cat "$T/err")"
grep -q "^problem   box 1 x 1, spacing h_x 0.03125 h_y 0.03125" "$T/out" && ok ||
  bad "--lx 1 --ly 1: no problem line: $(cat "$T/out")"
grep -q "^boundary  x- dirichlet 0, x+ dirichlet 0, y- dirichlet 0, y+ dirichlet 0" "$T/out" && ok ||
  bad "--lx 1 --ly 1: no boundary line: $(cat "$T/out")"
cmp -s "$T/m.raw" "$T/l.raw" && ok || bad "--lx 1 --ly 1 through hr_grid_solver differs from the model path"
$PY - "$T/l.json" <<'PY' && ok || bad "--lx 1 --ly 1 JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["unknowns"] == [31, 31] and d["lengths"] == [1.0, 1.0] and d["spacings"] == [1 / 32, 1 / 32], d
assert d["bc"] == {f: {"type": "dirichlet", "value": 0.0} for f in ("x-", "x+", "y-", "y+")}, d["bc"]
assert d["coef"] == {"value": 1.0} and d["model_problem"] is True and d["singular"] is False, d
assert d["rhs_projection"] == 0.0 and d["iterations"] == 40 and d["reason"] == "iterations", d
assert d["method"] == "jacobi" and d["backend"] == "cpu-seq" and d["precision"] == "single", d
assert 0 < d["relative_residual"] < 1 and d["time_s"] >= 0, d
PY
# 3-D: --lz alone (the others 1) on a cube of unknowns is the model problem again
"$HR" $P3 --n 7 --iters 20 --backend cpu-seq --output "$T/m3.raw" 2>"$T/err" || bad "3-D model: $(cat "$T/err")"
"$HR" $P3 --n 7 --iters 20 --backend cpu-seq --lz 1 --output "$T/l3.raw" 2>"$T/err" || bad "3-D --lz 1: $(cat "$T/err")"
cmp -s "$T/m3.raw" "$T/l3.raw" && ok || bad "3-D --lz 1 differs from the model path"

# --write-matrix, --write-rhs of the model problem: the system its solution satisfies
"$HR" poisson2d --no-bandwidth --quiet --method mg --nx 15 --ny 7 --boundary 0.25 --rhs manufactured --tol 1e-12 \
  --output "$T/mg.raw" --write-matrix "$T/A.mtx" --write-rhs "$T/b.raw" >"$T/out" 2>"$T/err" ||
  bad "model mg with --write-matrix: $(cat "$T/err")"
cat >"$T/check.py" <<'PY'
# check.py A.mtx b.raw u.raw TOL: A is symmetric, and u (the command's solution, x fastest)
# solves A u = b to TOL, as NumPy's own solve of the written system does
import sys
import numpy as np
def read_mtx(path):
    with open(path) as f:
        head = f.readline()
        assert head.startswith("%%MatrixMarket matrix coordinate real general"), head
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        m, n, nnz = map(int, line.split())
        A = np.zeros((m, n))
        for _ in range(nnz):
            i, j, v = f.readline().split()
            A[int(i) - 1, int(j) - 1] += float(v)
    return A
A = read_mtx(sys.argv[1])
b = np.fromfile(sys.argv[2], dtype="<f8")
u = np.fromfile(sys.argv[3], dtype="<f8")
tol = float(sys.argv[4])
assert A.shape == (b.size, b.size) == (u.size, u.size), (A.shape, b.size, u.size)
assert np.array_equal(A, A.T), "A is not symmetric"
res = np.linalg.norm(b - A @ u) / np.linalg.norm(b)
assert res < tol, f"||b - A u|| / ||b|| = {res}"
if len(sys.argv) > 5 and sys.argv[5] == "singular":
    # A's null space is the constants: the solution of zero mean, b of zero sum
    assert abs(b.sum()) <= 1e-12 * np.abs(b).sum(), b.sum()
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    x -= x.mean()
else:
    x = np.linalg.solve(A, b)
err = np.abs(x - u).max() / np.abs(x).max()
assert err < 1e4 * tol, f"max |x - u| / max |x| = {err}"
print(f"residual {res:.3e}, difference from NumPy's solve {err:.3e}")
PY
$PY "$T/check.py" "$T/A.mtx" "$T/b.raw" "$T/mg.raw" 1e-10 >"$T/py" 2>&1 && ok ||
  bad "model mg's written system: $(cat "$T/py")"
# a failed run (here: diverged) replaces neither file; a run that fails to start neither
echo old >"$T/A.mtx"
echo old >"$T/b.raw"
"$HR" $P2 --n 7 --omega 1.99 --divtol 1.5 --tol 1e-9 --check 1 --iters 100 \
  --write-matrix "$T/A.mtx" --write-rhs "$T/b.raw" >/dev/null 2>&1
[ $? -eq 1 ] && ok || bad "the diverging model run did not exit 1"
[ "$(cat "$T/A.mtx")" = old ] && [ "$(cat "$T/b.raw")" = old ] && ok || bad "a diverged run replaced --write-* files"
expect_usage "--coef: '$T/c149.raw': too short" $P2 --nx 15 --ny 10 --coef "$T/c149.raw" --write-matrix "$T/A.mtx" \
  --write-rhs "$T/b.raw"
[ "$(cat "$T/A.mtx")" = old ] && [ "$(cat "$T/b.raw")" = old ] && ok || bad "a refused run replaced --write-* files"
expect_usage "--omega: auto needs --method redblack or sor" $P2 --n 7 --omega auto --write-matrix "$T/A.mtx"
[ "$(cat "$T/A.mtx")" = old ] && ok || bad "a refused model run replaced --write-matrix"
no_tmp "failed runs"

# ---------------------------------------------------------------- general problems: the engine
if ! "$HR" $P2 --nx 9 --ny 9 --bc y-=neumann --method cg --tol 1e-8 >"$T/out" 2>"$T/err"; then
  if grep -q "not built yet\|so far" "$T/err"; then
    echo "the library has no general-problem engine yet ($(cat "$T/err")): general solves skipped" \
      "($passes checks passed, $fails failed)"
    [ $fails -eq 0 ] && exit 77 || exit 1
  fi
  bad "a small Neumann problem by CG: $(cat "$T/err")"
fi

# what the engine refuses, as one line naming the flag
expect_usage "--method: plain jacobi does not converge without a Dirichlet face" $P2 --n 9 --bc all=neumann
expect_usage "--precision: single: general problems" $P2 --n 9 --bc y=neumann --precision single
expect_usage "CUDA" $P2 --n 9 --bc y=neumann --backend gpu --device 99
expect_usage "--kernel: seq runs the model problem only" $P2 --n 9 --coef 2 --kernel seq
expect_usage "--post: mgcg needs post == pre" $P2 --n 9 --coef 2 --method cg --pc mg --pre 1 --post 2
# the relaxation methods on a general problem run in double without --precision
"$HR" $P2 --n 9 --bc y=neumann --method sor --tol 1e-10 --iters 1000 --check 10 --json "$T/r.json" 2>"$T/err" &&
  $PY -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['precision'] == 'double' and d['method'] == 'sor' and d['converged'] is True and 0 < d['omega'] < 2, d
" "$T/r.json" && ok || bad "sor on a Neumann problem: $(cat "$T/err")"

# a diverged general run replaces no file; --keep-diverged writes its state beside them
for f in o.raw o.json A.mtx b.raw; do echo old >"$T/$f"; done
DIV=($P2 --n 15 --bc y-=neumann --omega 1.99 --divtol 1.5 --tol 1e-9 --check 1 --iters 100 --output "$T/o.raw"
  --json "$T/o.json")
"$HR" "${DIV[@]}" --write-matrix "$T/A.mtx" --write-rhs "$T/b.raw" >/dev/null 2>"$T/err"
[ $? -eq 1 ] && grep -q "diverged" "$T/err" && ok || bad "the diverging general run: $(cat "$T/err")"
for f in o.raw o.json A.mtx b.raw; do [ "$(cat "$T/$f")" = old ] && ok || bad "a diverged general run replaced $f"; done
"$HR" "${DIV[@]}" --keep-diverged >/dev/null 2>&1
[ $? -eq 1 ] && [ -s "$T/o.diverged.raw" ] && [ -s "$T/o.diverged.json" ] && [ "$(cat "$T/o.raw")" = old ] && ok ||
  bad "--keep-diverged on a general run"
no_tmp "diverged general runs"

# the mixed 2-D problem: u = 0 at x = 0, u = 1 at x = L_x, zero flux at y = 0, a profile at y = L_y
$PY -c "
import math, struct, sys
n = 40
open(sys.argv[1], 'wb').write(struct.pack('<%dd' % n, *[math.sin(math.pi * (i + 1) / (n + 1)) for i in range(n)]))
" "$T/top.raw"
MIX=(--nx 40 --ny 30 --lx 2 --ly 1.5 --rhs zero --bc "x-=dirichlet:0,x+=dirichlet:1,y-=neumann:0,y+=dirichlet:$T/top.raw")
"$HR" poisson2d --no-bandwidth "${MIX[@]}" --method mg --tol 1e-10 --output "$T/mix_mg.raw" --json "$T/mix.json" \
  --write-matrix "$T/A.mtx" --write-rhs "$T/b.raw" >"$T/out" 2>"$T/err" && ok || bad "mixed by mg: $(cat "$T/err")"
grep -q "^boundary  x- dirichlet 0, x+ dirichlet 1, y- neumann 0, y+ dirichlet file '$T/top.raw'" "$T/out" && ok ||
  bad "mixed: the boundary line: $(cat "$T/out")"
grep -q "^  cycle " "$T/out" && grep -q "^summary .* cycles (converged)" "$T/out" && ok || bad "mixed: progress: $(cat "$T/out")"
"$HR" $P2 "${MIX[@]}" --method cg --tol 1e-11 --output "$T/mix_cg.raw" 2>"$T/err" && ok || bad "mixed by cg: $(cat "$T/err")"
"$HR" $P2 "${MIX[@]}" --method cg --pc mg --tol 1e-11 --output "$T/mix_mgcg.raw" 2>"$T/err" && ok ||
  bad "mixed by cg --pc mg: $(cat "$T/err")"
$PY - "$T/mix_mg.raw" "$T/mix_cg.raw" "$T/mix_mgcg.raw" <<'PY' && ok || bad "mixed: mg, cg and mgcg disagree"
import sys
import numpy as np
u = [np.fromfile(p, dtype="<f8") for p in sys.argv[1:]]
assert all(x.size == 1200 for x in u), [x.size for x in u]
for x in u[1:]:
    assert np.abs(x - u[0]).max() < 1e-8, np.abs(x - u[0]).max()
# the values lie between the boundary's 0 and 1 (a maximum principle: no source)
assert u[0].min() > -1e-12 and u[0].max() < 1 + 1e-12, (u[0].min(), u[0].max())
PY
$PY "$T/check.py" "$T/A.mtx" "$T/b.raw" "$T/mix_mg.raw" 1e-9 >"$T/py" 2>&1 && ok ||
  bad "mixed: the written system: $(cat "$T/py")"
$PY - "$T/mix.json" "$T/top.raw" <<'PY' && ok || bad "mixed: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["unknowns"] == [40, 30] and d["lengths"] == [2.0, 1.5], d
hx, hy = d["spacings"]
assert abs(hx - 2 / 41) < 1e-15 and abs(hy - 1.5 / 30) < 1e-15, d["spacings"]  # y-: Neumann, its points unknowns
assert d["bc"] == {"x-": {"type": "dirichlet", "value": 0.0}, "x+": {"type": "dirichlet", "value": 1.0},
                   "y-": {"type": "neumann", "value": 0.0}, "y+": {"type": "dirichlet", "file": sys.argv[2]}}, d["bc"]
assert d["coef"] == {"value": 1.0} and d["singular"] is False and d["rhs_projection"] == 0.0, d
assert d["model_problem"] is False and d["general"] is True, d
assert d["method"] == "mg" and d["reason"] == "converged" and d["converged"] is True, d
assert d["relative_residual"] < 1e-10 and d["iterations"] >= 1 and d["levels"] >= 2, d
assert d["time_s"] > 0 and "time_setup_s" in d, d
PY

# a coefficient field and a constant one: the written system is what the command solves
$PY -c "
import struct, sys
n = 23 * 17
open(sys.argv[1], 'wb').write(struct.pack('<%dd' % n, *[1.0 + 9.0 * ((i % 23) > 11) for i in range(n)]))
" "$T/a.raw"
"$HR" $P2 --nx 23 --ny 17 --coef "$T/a.raw" --bc x=neumann:0.5,y-=dirichlet:0,y+=dirichlet:2 --rhs manufactured \
  --method cg --tol 1e-12 --output "$T/c.raw" --write-matrix "$T/A.mtx" --write-rhs "$T/b.raw" --json "$T/c.json" \
  2>"$T/err" && ok || bad "coefficient field by cg: $(cat "$T/err")"
$PY "$T/check.py" "$T/A.mtx" "$T/b.raw" "$T/c.raw" 1e-10 >"$T/py" 2>&1 && ok || bad "coef field: $(cat "$T/py")"
$PY -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['coef'] == {'file': sys.argv[2]}, d['coef']" \
  "$T/c.json" "$T/a.raw" && ok || bad "coef field: JSON coef"
"$HR" $P2 --nx 23 --ny 17 --coef 3 --bc y=neumann:1,x-=dirichlet:0 --method mg --tol 1e-11 --output "$T/c3.raw" \
  --write-matrix "$T/A.mtx" --write-rhs "$T/b.raw" 2>"$T/err" && ok || bad "coef 3 by mg: $(cat "$T/err")"
$PY "$T/check.py" "$T/A.mtx" "$T/b.raw" "$T/c3.raw" 1e-9 >"$T/py" 2>&1 && ok || bad "coef 3: $(cat "$T/py")"

# periodic along x
"$HR" $P2 --nx 24 --ny 15 --bc x=periodic,y-=dirichlet:0,y+=dirichlet:1 --rhs manufactured --method mg --tol 1e-11 \
  --output "$T/p.raw" --write-matrix "$T/A.mtx" --write-rhs "$T/b.raw" 2>"$T/err" && ok || bad "periodic x: $(cat "$T/err")"
$PY "$T/check.py" "$T/A.mtx" "$T/b.raw" "$T/p.raw" 1e-9 >"$T/py" 2>&1 && ok || bad "periodic x: $(cat "$T/py")"

# singular (no Dirichlet face): the right-hand side is projected, and the run says so
"$HR" poisson2d --no-bandwidth --nx 20 --ny 12 --bc all=neumann --method cg --tol 1e-11 --output "$T/s.raw" \
  --json "$T/s.json" --write-matrix "$T/A.mtx" --write-rhs "$T/b.raw" >"$T/out" 2>"$T/err" && ok ||
  bad "singular by cg: $(cat "$T/err")"
grep -q "^singular  no Dirichlet face: the right-hand side was projected" "$T/out" && ok ||
  bad "singular: the human output does not say the rhs was projected: $(cat "$T/out")"
$PY -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['singular'] is True and d['rhs_projection'] > 0 and d['converged'] is True, d
" "$T/s.json" && ok || bad "singular: JSON"
$PY "$T/check.py" "$T/A.mtx" "$T/b.raw" "$T/s.raw" 1e-9 singular >"$T/py" 2>&1 && ok || bad "singular: $(cat "$T/py")"
$PY -c "
import sys, numpy as np
u = np.fromfile(sys.argv[1], dtype='<f8'); assert abs(u.sum()) < 1e-8 * np.abs(u).sum(), u.sum()
" "$T/s.raw" && ok || bad "singular: the solution's unknowns do not sum to zero"

# multigrid on sizes other than 2^k - 1 (the model problem): through hr_grid_solver
"$HR" $P2 --method mg --n 100 --tol 1e-9 --json "$T/g.json" 2>"$T/err" && ok || bad "mg --n 100: $(cat "$T/err")"
$PY -c "
import json, sys
d = json.load(open(sys.argv[1])); assert d['unknowns'] == [100, 100] and d['converged'] is True, d
" "$T/g.json" && ok || bad "mg --n 100: JSON"

# --kernel general: the general-problem engine on the model problem (what GPU ranks run); the
# model engine's answer to the tolerance, a kernel name it does not know refused
"$HR" $P2 --method mg --n 63 --tol 1e-10 --kernel general --json "$T/kg.json" --output "$T/kg.raw" 2>"$T/err" &&
  ok || bad "mg --kernel general: $(cat "$T/err")"
"$HR" $P2 --method mg --n 63 --tol 1e-10 --json "$T/km.json" --output "$T/km.raw" 2>"$T/err" && ok || bad "mg model"
$PY - "$T/kg.json" "$T/km.json" "$T/kg.raw" "$T/km.raw" <<'PY' && ok || bad "mg --kernel general: not the general engine, or far from the model engine"
import json, sys, numpy as np
g, m = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert g["engine"] == "general" and g.get("general") is True and m.get("general") is not True, (g["engine"], m)
assert g["converged"] is True and g["relative_residual"] < 1e-10, g
ug, um = np.fromfile(sys.argv[3], "<f8"), np.fromfile(sys.argv[4], "<f8")
assert np.abs(ug - um).max() <= 1e-8 * np.abs(um).max(), np.abs(ug - um).max()
PY
"$HR" $P2 --method mg --n 63 --kernel pencil 2>"$T/err" && bad "mg --kernel pencil ran" || {
  grep -q -- "--kernel" "$T/err" && ok || bad "mg --kernel pencil: $(cat "$T/err")"; }

# 3-D: a mixed box
"$HR" $P3 --nx 12 --ny 9 --nz 7 --lz 0.5 --bc z-=neumann:1,z+=dirichlet:0,x=periodic --coef 2 --rhs spike \
  --method mg --tol 1e-10 --output "$T/u3.raw" --write-matrix "$T/A.mtx" --write-rhs "$T/b.raw" --json "$T/u3.json" \
  2>"$T/err" && ok || bad "3-D mixed: $(cat "$T/err")"
$PY - "$T/u3.json" <<'PY' && ok || bad "3-D mixed: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dim"] == 3 and d["unknowns"] == [12, 9, 7] and d["lengths"] == [1.0, 1.0, 0.5], d
assert d["spacings"] == [1 / 12, 1 / 10, 0.5 / 7], d["spacings"]  # x periodic, y Dirichlet, z- Neumann
assert d["bc"]["x-"] == d["bc"]["x+"] == {"type": "periodic"}, d["bc"]
assert d["bc"]["z-"] == {"type": "neumann", "value": 1.0} and d["bc"]["z+"] == {"type": "dirichlet", "value": 0.0}
assert d["coef"] == {"value": 2.0} and d["converged"] is True and d["relative_residual"] < 1e-10, d
PY
$PY "$T/check.py" "$T/A.mtx" "$T/b.raw" "$T/u3.raw" 1e-9 >"$T/py" 2>&1 && ok || bad "3-D mixed: $(cat "$T/py")"
# the random right-hand side: b as the documented generator gives it, a converged solve, the JSON's
# name, two seeds two b, and a bad seed refused
expect_usage "--rhs: random:SEED takes a non-negative integer seed (got 'x')" $G --rhs random:x
expect_usage "--rhs: random:SEED takes a non-negative integer seed (got '-3')" $G --rhs random:-3
expect_usage "--rhs: random:SEED takes a non-negative integer seed (got '')" $G --rhs random:
expect_usage "--rhs: random:SEED takes a non-negative integer seed (got '18446744073709551616')" $G \
  --rhs random:18446744073709551616
for m in jacobi redblack sor cg mg; do # every method: the general engine, the seed in the banner
  "$HR" poisson3d --no-bandwidth --nx 9 --ny 7 --nz 5 --rhs random:18446744073709551615 --method $m --iters 3 \
    --tol 0 >"$T/out" 2>"$T/err"
  grep -q "^hetrelax poisson3d: 9 x 7 x 5 unknowns, rhs random:18446744073709551615, .*general-problem engine" \
    "$T/out" && ok || bad "--rhs random, $m: $(head -2 "$T/out") $(cat "$T/err")"
done
# what the model problem's own paths refuse names the random right-hand side
expect_usage "--checkpoint: not available for .* (--bc, --coef, --lx, --rhs random)" $G --rhs random \
  --checkpoint "$T/ck"
"$HR" $P2 --nx 21 --ny 13 --rhs random:9 --method mg --tol 1e-10 --output "$T/ur.raw" --write-matrix "$T/Ar.mtx" \
  --write-rhs "$T/br.raw" --json "$T/ur.json" 2>"$T/err" && ok || bad "--rhs random:9: $(cat "$T/err")"
"$HR" $P2 --nx 21 --ny 13 --rhs random --method mg --tol 1e-10 --write-rhs "$T/b1.raw" --json "$T/u1.json" \
  2>"$T/err" && ok || bad "--rhs random: $(cat "$T/err")"
$PY - "$T/ur.json" "$T/br.raw" "$T/b1.raw" "$T/u1.json" <<'PY' && ok || bad "--rhs random: JSON or b"
import json, sys
import numpy as np
d = json.load(open(sys.argv[1]))
assert d["rhs"] == "random:9" and d["converged"] is True and d["model_problem"] is False, d
assert json.load(open(sys.argv[4]))["rhs"] == "random:1"  # the default seed
M = (1 << 64) - 1
def fin(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
def f(seed, q):
    return (fin(q ^ fin((seed + 0x9E3779B97F4A7C15) & M)) >> 11) * 2.0**-53
b9, b1 = np.fromfile(sys.argv[2]), np.fromfile(sys.argv[3])
want = np.array([f(9, q) for q in range(21 * 13)])
# Dirichlet 0 faces, one spacing: b is f times one scale (the command's scaling of the system)
assert np.allclose(b9 / b9.max(), want / want.max(), rtol=0, atol=1e-14), "b is not the documented values"
assert not np.array_equal(b9, b1), "seeds 9 and 1 give the same b"
want1 = np.array([f(1, q) for q in range(21 * 13)])
assert np.allclose(b1 / b1.max(), want1 / want1.max(), rtol=0, atol=1e-14), "--rhs random is not seed 1"
PY
$PY "$T/check.py" "$T/Ar.mtx" "$T/br.raw" "$T/ur.raw" 1e-9 >"$T/py" 2>&1 && ok || bad "--rhs random: $(cat "$T/py")"
no_tmp "general solves"

echo "$passes checks passed, $fails failed"
[ $fails -eq 0 ]
