#!/usr/bin/env bash
# The command's choices come from the library's registry: for methods, multigrid smoothers,
# sparse methods and kernels, the names of the listing (--list-*), the --help metavar and the
# list in the error for an unknown value are the same names in the same order.
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"

# first column of a listing (header skipped), each name once, joined by '|'
names_of() { awk 'NR > 1 && !seen[$1]++ { printf "%s%s", (n++ ? "|" : ""), $1 }' "$1"; }
# the "expected a|b|c" of an unknown value's error
expected_of() { sed -n "s/.*(expected \(.*\))\$/\1/p" "$1"; }
# the metavar of --flag in --help
metavar_of() { sed -n "s/^  --$2 \([^ ]*\).*/\1/p" "$1"; }

same() { # what a b c: three name lists that must agree and be non-empty
  [ -n "$2" ] && [ "$2" = "$3" ] && [ "$2" = "$4" ] && ok ||
    bad "$1: listing '$2', error '$3', --help '$4'"
}

for cmd in poisson2d poisson3d; do
  "$HR" $cmd --help >"$T/help"
  # structured methods
  "$HR" $cmd --list-methods >"$T/list" || bad "$cmd --list-methods exited $?"
  grep -q "^jacobi .*(default)" "$T/list" && ok || bad "$cmd --list-methods: jacobi not the default"
  "$HR" $cmd --method nope 2>"$T/err" >/dev/null
  same "$cmd --method" "$(names_of "$T/list")" "$(expected_of "$T/err")" "$(metavar_of "$T/help" method)"
  # multigrid smoothers
  "$HR" $cmd --list-smoothers >"$T/list" || bad "$cmd --list-smoothers exited $?"
  grep -q "^redblack .*(default)" "$T/list" && ok || bad "$cmd --list-smoothers: redblack not the default"
  grep -q "^async3 *gpu " "$T/list" && ok || bad "$cmd --list-smoothers: async3 not gpu-only"
  "$HR" $cmd --method mg --smoother nope 2>"$T/err" >/dev/null
  same "$cmd --smoother" "$(names_of "$T/list")" "$(expected_of "$T/err")" "$(metavar_of "$T/help" smoother)"
  expect_usage "--smoother: unknown value 'nope'" $cmd --method mg --smoother nope
  # kernels: an unknown --kernel names the backend's kernels of --list-kernels
  "$HR" $cmd --list-kernels >"$T/list"
  want=$(awk 'NR > 1 && $1 == "cpu-seq" { printf "%s%s", (n++ ? ", " : ""), $2 }' "$T/list")
  expect_usage "--kernel: backend cpu-seq has no .-D kernel 'nope' (it has $want; see --list-kernels)" \
    $cmd --backend cpu-seq --kernel nope
  # red-black kernels name the methods that run on them
  grep -q "^cpu-seq *rb-seq .*\[--method redblack|sor\]" "$T/list" && ok || bad "$cmd --list-kernels: rb-seq's methods"
done

# sparse methods (a name on several backends is listed once per backend)
"$HR" sparse --help >"$T/help"
"$HR" sparse --list-methods >"$T/list" || bad "sparse --list-methods exited $?"
"$HR" sparse --gen laplace2d:8 --method nope 2>"$T/err" >/dev/null
same "sparse --method" "$(names_of "$T/list")" "$(expected_of "$T/err")" "$(metavar_of "$T/help" method)"
# the methods without fault injection are refused by capability, named in the error
expect_usage "--fault: not defined for cg (jacobi, gs, gs-mc, async)" sparse --gen laplace2d:8 --method cg --fault 0.1@5

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
