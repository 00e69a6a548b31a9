#!/usr/bin/env bash
# The command glue under mpiexec: a decomposed run bitwise equal to cpu-seq with rank-0
# output, and bad input (product, axis, flag syntax, no mpirun) ending every rank with
# status 2 and one message.
#   cli_glue.sh MPIEXEC PROGRAM
set -uo pipefail
mpiexec=$1 prog=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; cat "$T/out" "$T/err"; exit 1; }
run() { # ranks want_rc args...
    local np=$1 want=$2; shift 2
    if [ "$np" = 0 ]; then timeout 30 "$prog" "$@" >"$T/out" 2>"$T/err"; else
        timeout -k 10 30 "$mpiexec" -n "$np" --oversubscribe "$prog" "$@" >"$T/out" 2>"$T/err"; fi
    rc=$?
    [ "$rc" -eq "$want" ] || fail "$np ranks $*: status $rc, want $want"
}
run 3 0 --n 33 --decomp 1x3 --ghost 2
[ "$(grep -c 'bitwise equal' "$T/out")" -eq 1 ] || fail "want one report line"
grep -q '"ranks":3' "$T/out" || fail "no MPI JSON"
run 4 0 --n 12 --dim 3 --iters 9
[ "$(grep -c 'bitwise equal' "$T/out")" -eq 1 ] || fail "3-D default decomposition"
for bad in "--decomp 3x1" "--decomp 1x4 --n 3" "--decomp 2x" "--ghost 0" "--decomp 2x2 --ghost 20"; do
    # shellcheck disable=SC2086
    run 4 2 $bad
    n=$(grep -c '^hetrelax poisson2d: --' "$T/err")
    [ "$n" -eq 1 ] || fail "$bad: $n messages, want 1"
    echo "ok: $bad -> $(grep '^hetrelax' "$T/err")"
done
# a rank that leaves after parsing, while the others wait to agree before the solve: every
# rank ends with its status within seconds, and rank 0 prints its message once, naming it
for leave in 1 2 0; do
    run 3 2 --n 17 --leave-early $leave
    n=$(grep -c '^hetrelax' "$T/err")
    [ "$n" -eq 1 ] || fail "--leave-early $leave: $n messages, want 1"
    grep -q -- "--leave-early: rank $leave leaves before the solve" "$T/err" || fail "--leave-early $leave: its message"
    if [ $leave -gt 0 ]; then
        grep -q -- "poisson2d: rank $leave: --leave-early" "$T/err" || fail "--leave-early $leave: the rank not named"
    fi
    echo "ok: --leave-early $leave -> $(grep '^hetrelax' "$T/err")"
done
# the same rank leaving without a word (status 0): no hang either, status 1 everywhere, and
# rank 0 says which rank went where
run 3 1 --n 17 --leave-early 2 --leave-status 0
[ "$(grep -c '^hetrelax' "$T/err")" -eq 1 ] && grep -q "rank 2 reached the end while rank 0 reached the solve" "$T/err" ||
    fail "a rank leaving with status 0: $(grep '^hetrelax' "$T/err")"
echo "ok: --leave-early 2 --leave-status 0 -> $(grep '^hetrelax' "$T/err")"
run 0 2 --decomp 2x2
grep -q 'mpirun' "$T/err" || fail "no hint to use mpirun"
run 0 0 --n 17
echo "cli glue test: ok"
