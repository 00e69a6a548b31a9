#!/usr/bin/env bash
# General problems (--bc, --coef) of poisson2d/poisson3d on MPI ranks: `mpiexec -n P hetrelax
# poisson2d --bc ... --coef FILE` writes an --output byte-identical to the one-process cpu-seq
# run for cg, redblack, sor, weighted jacobi, multigrid and MG-preconditioned CG on 1..4 ranks
# (and with a random right-hand side, --rhs random[:SEED], which each rank makes for its slab),
# prints once and records the ranks in its JSON; what the ranks do not run (--decomp) and bad input (an unreadable
# --coef on one rank or on all, an --output rank 0 cannot write) end every rank with status 2
# within seconds, one message, no banner before it.
#   cli_mpi_general.sh MPIEXEC HETRELAX
set -u
mpiexec=$1 HR=$2
. "$(dirname "$0")/cli_mpi_lib.sh"

# a coefficient that varies per unknown (40 x 30, x fastest), and one for the 3-D case
python3 -c "
import struct, sys
def write(name, n):
    v = [1.0 + 0.5 * (((i * 7) % 13) / 13.0) for i in range(n)]
    open(name, 'wb').write(struct.pack('<%dd' % n, *v))
write(sys.argv[1], 40 * 30)
write(sys.argv[2], 12 * 10 * 9)" "$T/coef.raw" "$T/coef3.raw"
P2="poisson2d --quiet --nx 40 --ny 30 --bc x-=dirichlet:0,x+=dirichlet:1,y=periodic --coef $T/coef.raw"
P3="poisson3d --quiet --nx 12 --ny 10 --nz 9 --bc x=dirichlet:0,y-=neumann:0.5,z=periodic --coef $T/coef3.raw"

# --- byte-identical to the one-process cpu-seq run; the JSON names the ranks
check_equal() { # "problem" "method flags" np
  local prob=$1 meth=$2 np=$3
  # shellcheck disable=SC2086
  "$HR" $prob $meth --backend cpu-seq --output "$T/ref.raw" >/dev/null 2>"$T/err" || {
    bad "reference $prob $meth: $(cat "$T/err")"
    return
  }
  rm -f "$T/m.raw" "$T/m.json"
  # shellcheck disable=SC2086
  mrun "$np" $prob $meth --output "$T/m.raw" --json "$T/m.json" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 0 ] && cmp -s "$T/ref.raw" "$T/m.raw" && ok ||
    bad "$np ranks $prob $meth: exit $rc, $(cmp "$T/ref.raw" "$T/m.raw" 2>&1) $(head -3 "$T/err")"
  # one rank runs as one process: no "mpi" object, as for the model problem
  python3 - "$T/m.json" "$np" "$prob" <<'PY' && ok || bad "$np ranks $prob $meth: JSON $(head -c 400 "$T/m.json")"
import json, sys
d = json.load(open(sys.argv[1]))
np, dim = int(sys.argv[2]), 3 if sys.argv[3].startswith("poisson3d") else 2
assert d["general"] is True, d
if np == 1:  # one process: auto is cpu-threads here
    assert "mpi" not in d, d
else:
    assert d["backend"] == "cpu-seq" and d["engine"] == "mpi-general", d
    m = d["mpi"]
    assert m["ranks"] == np and m["decomp"] == [1] * (dim - 1) + [np], m
    assert m["slab_axis"] == ("z" if dim == 3 else "y"), m
PY
  [ "$(grep -c '^summary' "$T/out")" -eq 1 ] && ok || bad "$np ranks $prob $meth: want one summary, got $(cat "$T/out")"
}
for np in 1 2 3 4; do
  check_equal "$P2" "--method cg --tol 1e-10" $np
  check_equal "$P2" "--method redblack --iters 50" $np
  check_equal "$P2" "--method jacobi --omega 0.8 --iters 100" $np
done
check_equal "$P2" "--method sor --iters 30" 3
check_equal "$P3" "--method cg --tol 1e-10" 2
check_equal "$P3" "--method redblack --iters 20" 4
# multigrid and MG-preconditioned CG: the levels too, bitwise
for np in 2 3 4; do
  check_equal "$P2" "--method mg --tol 1e-10" $np
  check_equal "$P3" "--method cg --pc mg --tol 1e-10" $np
done
check_equal "$P2" "--method mg --cycle w --smoother cheby --tol 1e-10" 3
# a random right-hand side: each rank makes its slab's values, the same bytes as one process
for np in 2 3; do
  check_equal "poisson2d --quiet --nx 101 --ny 67 --rhs random:5" "--method mg --tol 1e-8" $np
done
check_equal "poisson3d --quiet --nx 12 --ny 10 --nz 9 --bc z=periodic --rhs random" "--method cg --tol 1e-10" 3
python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['rhs'] == 'random:1'" "$T/m.json" && ok ||
  bad "--rhs random on 3 ranks: JSON rhs $(head -c 300 "$T/m.json")"
# the one-process default (cpu-threads) too: its bytes do not depend on the threads
"$HR" poisson2d --quiet --nx 101 --ny 67 --method mg --rhs random:5 --tol 1e-8 --output "$T/t.raw" >/dev/null &&
  mrun 3 poisson2d --quiet --nx 101 --ny 67 --method mg --rhs random:5 --tol 1e-8 --output "$T/m3.raw" \
    >/dev/null 2>"$T/err" && cmp -s "$T/t.raw" "$T/m3.raw" && ok ||
  bad "--rhs random:5 on 3 ranks against cpu-threads: $(cmp "$T/t.raw" "$T/m3.raw" 2>&1) $(cat "$T/err")"
# a singular problem on ranks: the absolute-residual label from the handle (a constant source,
# zeroed by the projection; --quiet prints no header, the JSON still says it), relative for a
# random source
python3 -c "import struct, sys; open(sys.argv[1], 'wb').write(struct.pack('<d', 2.5) * (40 * 30))" "$T/c.raw"
mrun 3 poisson2d --quiet --nx 40 --ny 30 --bc all=neumann --method mg --rhs "$T/c.raw" --iters 3 --tol 0 \
  --init sine --json "$T/s.json" >"$T/out" 2>"$T/err"
python3 -c "import json, sys; assert json.load(open(sys.argv[1])).get('residual_absolute') is True" "$T/s.json" &&
  ok || bad "singular, constant source on 3 ranks: $(head -c 300 "$T/s.json") $(cat "$T/err")"
mrun 3 poisson2d --nx 40 --ny 30 --bc all=neumann --method mg --rhs random:1 --iters 3 --tol 0 >"$T/out" 2>"$T/err"
grep -q "relative residual" "$T/out" && ! grep -q "absolute" "$T/out" && ok ||
  bad "singular, random source on 3 ranks: $(grep residual "$T/out") $(cat "$T/err")"
# slabs of one row: multigrid's first coarse level whole on every rank
check_equal "poisson2d --quiet --nx 20 --ny 7 --bc y=periodic" "--method mg --tol 1e-10" 4

# the banner once, before the summary, naming the ranks
mrun 3 ${P2/--quiet/} --method cg --tol 1e-10 >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && [ "$(grep -c '^hetrelax poisson2d: ' "$T/out")" -eq 1 ] &&
  grep -q 'backend cpu-seq on 3 MPI ranks (a slab of y each)' "$T/out" &&
  grep -A1000 '^hetrelax poisson2d: ' "$T/out" | grep -q '^summary' && ok ||
  bad "banner on 3 ranks: $(head -3 "$T/out") $(cat "$T/err")"

# --write-matrix and --write-rhs on ranks: rank 0 writes the system, the same bytes
# shellcheck disable=SC2086
"$HR" $P2 --method cg --backend cpu-seq --write-matrix "$T/A1.mtx" --write-rhs "$T/b1.raw" >/dev/null 2>&1
# shellcheck disable=SC2086
mrun 2 $P2 --method cg --write-matrix "$T/A2.mtx" --write-rhs "$T/b2.raw" >/dev/null 2>"$T/err" &&
  cmp -s "$T/A1.mtx" "$T/A2.mtx" && cmp -s "$T/b1.raw" "$T/b2.raw" && ok ||
  bad "--write-matrix, --write-rhs on 2 ranks: $(cmp "$T/A1.mtx" "$T/A2.mtx" 2>&1) $(cat "$T/err")"

# --- refusals and bad input: status 2 on every rank, one line, no banner, within seconds
# each rank records its status in $T/rc.RANK and exits 0 (a status other than 0 makes mpiexec
# kill the others before they record theirs)
W=$T/w.sh
cat >"$W" <<EOF
#!/bin/sh
"\$@"
echo \$? >"$T/rc.\$OMPI_COMM_WORLD_RANK"
EOF
chmod +x "$W"
expect2() { # pattern np mpiexec-args...
  local pat=$1 np=$2 why=""
  shift 2
  rm -f "$T"/rc.*
  local t0=$SECONDS
  timeout -k 10 30 "$mpiexec" --oversubscribe "$@" >"$T/out" 2>"$T/err"
  local took=$((SECONDS - t0)) statuses
  statuses=$(cat "$T"/rc.* 2>/dev/null | sort -u | tr '\n' ' ')
  [ "$statuses" = "2 " ] && [ "$(ls "$T"/rc.* 2>/dev/null | wc -l)" -eq "$np" ] ||
    why="statuses '$statuses' of $(ls "$T"/rc.* 2>/dev/null | wc -l) ranks;"
  [ $took -lt 30 ] || why="$why hung (${took}s);"
  [ "$(grep -c '^hetrelax' "$T/err")" -eq 1 ] || why="$why $(grep -c '^hetrelax' "$T/err") hetrelax lines;"
  grep -q -- "$pat" "$T/err" || why="$why no '$pat';"
  ! grep -qE '^(hetrelax |summary)' "$T/out" || why="$why output before the error: $(head -c 300 "$T/out");"
  [ -z "$why" ] && ok || bad "$*: $why stderr: $(grep '^hetrelax' "$T/err" | head -3)"
}
# shellcheck disable=SC2086
expect2 "^hetrelax poisson2d: --decomp: .* one slab of the last axis per rank" 2 -n 2 "$W" "$HR" $P2 --decomp 1x2
# shellcheck disable=SC2086
expect2 "^hetrelax poisson2d: --output: cannot write" 3 -n 3 "$W" "$HR" $P2 --method cg --output "$T/nodir/u.raw"
# the halo transport: GPU ranks only, and of those auto, host or nccl
# shellcheck disable=SC2086
expect2 "^hetrelax poisson2d: --transport: for GPU ranks" 2 -n 2 "$W" "$HR" $P2 --method mg --transport host
# shellcheck disable=SC2086
expect2 "^hetrelax poisson2d: --transport: general problems on GPU ranks take auto, host or nccl .got peer." 2 \
  -n 2 "$W" "$HR" $P2 --method mg --backend gpu --transport peer
# a bad seed: on every rank, one line
expect2 "^hetrelax poisson2d: --rhs: random:SEED takes a non-negative integer seed (got 'x')" 3 \
  -n 3 "$W" "$HR" poisson2d --nx 31 --ny 31 --method mg --rhs random:x
# more ranks than rows of the last axis
expect2 "^hetrelax poisson2d: --ny: 4 ranks need at least 4 unknowns along y" 4 \
  -n 4 "$W" "$HR" poisson2d --quiet --nx 5 --ny 3 --bc y=periodic --method cg
# an unreadable --coef: on every rank, on one rank above 0 (its own working directory), on rank 0 only
mkdir -p "$T/a" "$T/b"
cp "$T/coef.raw" "$T/a/c.raw"
C="${P2%%--coef*}--coef c.raw --method cg"
# shellcheck disable=SC2086
expect2 "^hetrelax poisson2d: --coef: cannot read 'c.raw'" 3 -n 3 -wdir "$T/b" "$W" "$HR" ${C/--quiet/}
# shellcheck disable=SC2086
expect2 "^hetrelax poisson2d: rank 1: --coef: cannot read 'c.raw'" 3 \
  -n 1 -wdir "$T/a" "$W" "$HR" ${C/--quiet/} : -n 1 -wdir "$T/b" "$W" "$HR" ${C/--quiet/} : \
  -n 1 -wdir "$T/a" "$W" "$HR" ${C/--quiet/}
# shellcheck disable=SC2086
expect2 "^hetrelax poisson2d: --coef: cannot read 'c.raw'" 2 \
  -n 1 -wdir "$T/b" "$W" "$HR" ${C/--quiet/} : -n 1 -wdir "$T/a" "$W" "$HR" ${C/--quiet/}

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
