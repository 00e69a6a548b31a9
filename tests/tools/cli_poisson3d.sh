#!/usr/bin/env bash
# hetrelax poisson3d (CLI side): the grid command in 3-D. Flags as
# poisson2d plus --nx --ny --nz, --rhs zero, --init sine|FILE, --omega; bad input is one
# line naming the flag with exit 2; .raw/.vti/.png outputs; JSON with nx ny nz; the sine
# mode's error; checkpoint and restart; poisson2d refuses --nz and takes --nx --ny.
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"
expect_usage() {
  local pat=$1; shift
  "$HR" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$pat" "$T/err" && ok ||
    bad "'$*' exited $rc, stderr '$(cat "$T/err")', want exit 2 and '$pat'"
}
P="poisson3d --no-bandwidth --quiet"

"$HR" --help | grep -q poisson3d && ok || bad "poisson3d not in hetrelax --help"
"$HR" poisson3d --help >"$T/help" && for f in --nx --ny --nz --init --omega --divtol --checkpoint; do
  grep -q -- "$f" "$T/help" || bad "poisson3d --help lacks $f"; done && ok
expect_usage "--nz: unknown option" poisson2d --no-bandwidth --n 8 --nz 4
expect_usage "--nx" $P --nx 0
expect_usage "--nz" $P --n 8 --nz -3
expect_usage "--n" $P --n 100000 --iters 1
expect_usage "--omega" $P --n 8 --omega 2
expect_usage "--divtol" $P --n 8 --divtol 0.5
expect_usage "--rhs" $P --nx 4 --ny 4 --nz 4 --init sine --rhs <(head -c 100 /dev/zero)
expect_usage "--init" $P --nx 4 --ny 4 --nz 4 --init "$T/missing.raw"

# outputs and JSON on a flat, odd box
"$HR" $P --nx 17 --ny 9 --nz 33 --iters 20 --output "$T/u.raw" >/dev/null 2>&1 &&
  [ "$(stat -c %s "$T/u.raw")" -eq $((17 * 9 * 33 * 4)) ] && ok || bad "3-D raw size"
"$HR" $P --nx 17 --ny 9 --nz 33 --iters 20 --output "$T/u.vti" >/dev/null 2>&1 &&
  grep -aq 'WholeExtent="0 16 0 8 0 32"' "$T/u.vti" && ok || bad "3-D vti extent"
if "$HR" $P --nx 17 --ny 9 --nz 33 --iters 20 --output "$T/u.png" >/dev/null 2>"$T/err"; then
  [ "$(head -c 8 "$T/u.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] && ok || bad "3-D png"
else
  grep -q libpng "$T/err" && ok || bad "3-D png: $(cat "$T/err")"
fi
# Sourouri et al.'s test problem: the sine mode decays by lambda per sweep, error to rounding
"$HR" poisson3d --no-bandwidth --nx 17 --ny 9 --nz 33 --iters 50 --rhs zero --init sine --precision double \
  --json - >"$T/j" 2>/dev/null
python3 - "$T/j" <<'PY' && ok || bad "3-D JSON / sine error"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dim"] == 3 and (d["nx"], d["ny"], d["nz"]) == (17, 9, 33), d
assert d["iterations"] == 50 and d["init"] == "sine" and d["rhs"] == "zero"
assert d["max_error"] < 1e-12, d["max_error"]
PY
# --verify against cpu-seq in 3-D, and a rectangular 2-D grid
"$HR" $P --n 12 --iters 30 --rhs manufactured --verify >"$T/out" 2>&1 && grep -q "bitwise equal" "$T/out" && ok || bad "3-D --verify"
"$HR" poisson2d --no-bandwidth --quiet --nx 30 --ny 20 --iters 10 --output "$T/r.raw" >/dev/null 2>&1 &&
  [ "$(stat -c %s "$T/r.raw")" -eq $((30 * 20 * 4)) ] && ok || bad "2-D --nx --ny"
# checkpoint and restart in 3-D: bitwise
"$HR" $P --nx 9 --ny 10 --nz 11 --iters 60 --output "$T/full.raw" >/dev/null 2>&1
"$HR" $P --nx 9 --ny 10 --nz 11 --iters 20 --checkpoint "$T/c.ckpt" >/dev/null 2>&1
"$HR" $P --nx 9 --ny 10 --nz 11 --iters 60 --restart "$T/c.ckpt" --output "$T/part.raw" >/dev/null 2>"$T/err" &&
  cmp -s "$T/full.raw" "$T/part.raw" && ok || bad "3-D restart: $(cat "$T/err")"
expect_usage "--restart" poisson2d --no-bandwidth --n 9 --iters 60 --restart "$T/c.ckpt"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
