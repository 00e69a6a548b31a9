#!/usr/bin/env bash
# Each command's flags come from one table. Every flag that --help lists
# is accepted by the parser (and nothing else is), bad values get one line
# "hetrelax CMD: --FLAG: reason" with exit 2 in every command, and --help works as -h.
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"

for cmd in poisson2d poisson3d sparse info tune; do
  "$HR" $cmd --help >"$T/help" 2>&1 || { bad "$cmd --help"; continue; }
  "$HR" $cmd -h | cmp -s - "$T/help" && ok || bad "$cmd -h differs from --help"
  flags=$(grep -oE '^  --[a-z0-9-]+' "$T/help" | sed 's/^  //' | sort -u)
  [ -n "$flags" ] || bad "$cmd --help lists no flags"
  for f in $flags; do
    [ "$f" = "--help" ] && continue
    # the parser must know the flag; the unknown flags after it (one may be taken as
    # its value) stop the command before it does any work
    "$HR" $cmd "$f" --no-such-flag --no-such-flag >"$T/out" 2>"$T/err" </dev/null
    rc=$?
    { grep -q -- "--no-such-flag: unknown option" "$T/err" || grep -q -- "^hetrelax $cmd: $f: " "$T/err"; } &&
      [ $rc -eq 2 ] && ! grep -q -- "$f: unknown option" "$T/err" && ok ||
      bad "$cmd: $f is in --help but the parser says '$(cat "$T/err")' (exit $rc)"
  done
  "$HR" $cmd --no-such-flag >/dev/null 2>"$T/err"
  [ $? -eq 2 ] && grep -q "hetrelax $cmd: --no-such-flag: unknown option" "$T/err" && ok || bad "$cmd unknown flag: $(cat "$T/err")"
done

# the same strict, range-checked parsing and error line in every command
expect_usage() { # pattern args...
  local pat=$1; shift
  "$HR" "$@" >/dev/null 2>"$T/err"
  local rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$pat" "$T/err" && ok ||
    bad "'$*': exit $rc, '$(cat "$T/err")', want '$pat'"
}
expect_usage "hetrelax poisson2d: --iters: expected an integer, got '1e3'" poisson2d --iters 1e3
expect_usage "hetrelax poisson2d: --threads: 0 is out of range" poisson2d --threads 0
expect_usage "hetrelax poisson2d: --tol: expected a finite number, got 'nan'" poisson2d --tol nan
expect_usage "hetrelax poisson2d: --precision: unknown value 'half' (expected single|double|mixed)" poisson2d --precision half
expect_usage "hetrelax poisson2d: --n: missing value" poisson2d --n
expect_usage "hetrelax sparse: --threads: 5000 is out of range" sparse --threads 5000
expect_usage "hetrelax sparse: --method: unknown value 'sor'" sparse --method sor
expect_usage "hetrelax sparse: --tau: 2: must be 'auto' or in (0, 2)" sparse --gen laplace2d:4 --tau 2
expect_usage "hetrelax sparse: --fault" sparse --gen laplace2d:4 --fault 2@1
expect_usage "hetrelax sparse: --divtol" sparse --gen laplace2d:4 --divtol 0.5
expect_usage "hetrelax info: --repeats: 0 is out of range" info --repeats 0
expect_usage "hetrelax tune: --alpha: expected an integer" tune --alpha x
expect_usage "hetrelax tune: --precision: unknown value" tune --precision quad
expect_usage "hetrelax info: unexpected argument 'x'" info x
# strict numbers: no blanks, no '+', no trailing text, no overflow
expect_usage "--iters: expected an integer, got ' 5'" poisson2d --iters " 5"
expect_usage "--iters: expected an integer, got '+5'" poisson2d --iters +5
expect_usage "--iters: expected an integer, got '5x'" poisson2d --iters 5x
expect_usage "--iters: expected an integer" poisson2d --iters 99999999999999999999
expect_usage "--tol: expected a finite number, got ' 0.1'" poisson2d --tol " 0.1"
expect_usage "--tol: expected a finite number, got 'inf'" poisson2d --tol inf
# a switch takes no value; an abbreviation still works (getopt_long)
expect_usage "--quiet" poisson2d --quiet=1
"$HR" poisson2d --no-bandw --n 8 --iters 1 --qui >/dev/null 2>&1 && ok || bad "unique abbreviations"
# the shared groups keep their meaning: --bandwidth G gives the fraction against G
"$HR" poisson2d --n 32 --iters 5 --bandwidth 10 --json - 2>/dev/null |
  python3 -c "import json,sys; d=json.load(sys.stdin); assert d['reference_gbps']==10" && ok || bad "--bandwidth"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
