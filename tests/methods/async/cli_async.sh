#!/usr/bin/env bash
# The CLI side of the async kernels: alpha errors exit 2 with one line naming alpha;
# --json reports teff, global_syncs and alpha; async0 with alpha 1 passes --verify.
set -u
cli="$1"
fail=0
check() { # name, expected exit, stderr pattern, command...
    local name="$1" want="$2" pat="$3"
    shift 3
    local err rc
    err=$("$@" 2>&1 >/dev/null)
    rc=$?
    if [ "$rc" -ne "$want" ]; then echo "FAIL $name: exit $rc, wanted $want: $err"; fail=1; return; fi
    if [ -n "$pat" ] && { ! grep -q -- "$pat" <<<"$err" || [ "$(wc -l <<<"$err")" -ne 1 ]; }; then
        echo "FAIL $name: stderr '$err' is not one line matching '$pat'"; fail=1; return
    fi
    echo "ok   $name"
}
run=("$cli" poisson2d --backend cpu-threads --n 32 --threads 4 --no-bandwidth --quiet)
check "alpha 0" 2 "alpha" "${run[@]}" --kernel async0 --alpha 0
check "alpha above the block" 2 "alpha: 17 is larger than async2" "${run[@]}" --kernel async2 --alpha 17
check "alpha at the block" 0 "" "${run[@]}" --kernel async3 --alpha 16 --iters 34
check "alpha 1 is synchronous" 0 "" "${run[@]}" --kernel async1 --alpha 1 --iters 25 --verify

json=$("${run[@]}" --kernel async0 --alpha 4 --iters 47 --json - 2>/dev/null)
for kv in '"teff":47' '"global_syncs":10' '"alpha":4' '"iterations":47'; do
    if ! tr -d ' \n' <<<"$json" | grep -q -- "$kv"; then echo "FAIL json: no $kv in $json"; fail=1; fi
done
[ $fail -eq 0 ] && echo "ok   json teff/global_syncs/alpha"
summary=$("${run[@]}" --kernel async0 --alpha 4 --iters 47 2>&1)
grep -q "Teff 47 sweeps in 10 global syncs (alpha 4" <<<"$summary" || { echo "FAIL summary: $summary"; fail=1; }
exit $fail
