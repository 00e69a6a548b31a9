#!/usr/bin/env bash
# Bad input under mpiexec: exit status 2 (every rank), exactly one message, within seconds.
#   mpi_bad_input.sh MPIEXEC RANKS PROGRAM MODE
set -uo pipefail
mpiexec=$1 ranks=$2 prog=$3 mode=$4
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
start=$(date +%s)
timeout 30 "$mpiexec" -n "$ranks" --oversubscribe "$prog" "$mode" >"$T/out" 2>"$T/err"
rc=$?
took=$(($(date +%s) - start))
cat "$T/err"
[ "$rc" -eq 2 ] || { echo "FAIL: exit status $rc, want 2"; exit 1; }
# mpiexec adds its own lines about the exit status; our program prints one message
n=$(grep -c '^hetrelax ' "$T/err")
[ "$n" -eq 1 ] || { echo "FAIL: $n messages, want 1"; exit 1; }
[ "$took" -le 20 ] || { echo "FAIL: took ${took}s"; exit 1; }
echo "ok: $mode on $ranks ranks: status 2, one message, ${took}s"
