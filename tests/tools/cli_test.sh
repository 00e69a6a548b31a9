#!/usr/bin/env bash
# CLI contract of `hetrelax`: every bad value gets a one-line error naming the
# flag and exit status 2; good runs write the promised JSON and output files.
set -u
HR=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0 passes=0

ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_usage PATTERN ARGS...: exit status 2, one line on stderr matching PATTERN, no stdout crash
expect_usage() {
  local pat=$1; shift
  "$HR" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ $rc -ne 2 ]; then bad "'$*' exited $rc, want 2 (stderr: $(head -c 300 "$T/err"))"; return; fi
  if [ "$(wc -l <"$T/err")" -ne 1 ]; then bad "'$*' printed $(wc -l <"$T/err") error lines, want 1"; return; fi
  grep -q -- "$pat" "$T/err" || { bad "'$*' error '$(cat "$T/err")' does not mention '$pat'"; return; }
  ok
}

expect_ok() {
  "$HR" "$@" >"$T/out" 2>"$T/err" || { bad "'$*' exited $? (stderr: $(head -c 300 "$T/err"))"; return 1; }
  ok
}

P="poisson2d --no-bandwidth --quiet"
# --- bad values, one per flag
expect_usage "--n" $P --n -5
expect_usage "--n" $P --n 0
expect_usage "--n" $P --n abc
expect_usage "--n" $P --n 99999999999
expect_usage "--n" $P --n 1000000 --iters 1
expect_usage "--iters" $P --iters -1
expect_usage "--tol" $P --tol x
expect_usage "--tol" $P --tol -1
expect_usage "--check" $P --check 0
expect_usage "--precision" $P --precision half
expect_usage "--backend" $P --backend foo
expect_usage "--threads" $P --threads 0
expect_usage "--threads" $P --threads -3
expect_usage "--thread-grid" $P --thread-grid 2x
expect_usage "--thread-grid" $P --threads 3 --thread-grid 2x2
expect_usage "--bind" $P --bind socket
expect_usage "--layout" $P --layout diagonal
expect_usage "--layout" $P --layout blocks --backend cpu-seq
expect_usage "--kernel" $P --backend cpu-seq --kernel nope
expect_usage "--rhs" $P --n 8 --rhs "$T/missing.raw"
head -c 100 /dev/zero >"$T/short.raw"
expect_usage "--rhs" $P --n 8 --rhs "$T/short.raw"
expect_usage "--output" $P --n 8 --output "$T/u.txt"
expect_usage "--monitor" $P --monitor -1
expect_usage "--alpha" $P --alpha 0
expect_usage "--bogus" $P --bogus
expect_usage "--n" $P --n
expect_usage "unexpected" $P extra
expect_usage "--threads" info --threads 0
expect_usage "--bogus" info --bogus
# the default probe measures (arrays sized by the library) and reports both rates
"$HR" info --repeats 1 --json - 2>/dev/null |
  python3 -c "import json,sys; b=json.load(sys.stdin)['host_bandwidth']; assert b['copy_gbps'] > 0 and b['triad_gbps'] > 0" &&
  ok || bad "info: no host bandwidth with the default size"
expect_usage "unknown command" frobnicate
if "$HR" info --no-bandwidth | grep -q ', 0 GPU(s)'; then
  expect_usage "gpu" $P --n 8 --backend gpu
fi
"$HR" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "no arguments should exit 2"

# --- help everywhere
for c in "--help" "info --help" "poisson2d --help"; do
  "$HR" $c >"$T/out" 2>&1 && grep -q usage "$T/out" && ok || bad "'$c' gives no usage"
done
expect_ok --version && grep -q "hetrelax" "$T/out" && ok || bad "--version"
expect_ok poisson2d --list-kernels && grep -q "cpu-threads" "$T/out" && ok || bad "--list-kernels"

# --- JSON keys
if expect_ok poisson2d --n 64 --iters 20 --rhs manufactured --backend cpu-threads --threads 2 --json - --bandwidth 10; then
  python3 - "$T/out" <<'PY' && ok || bad "JSON keys"
import json, sys
d = json.load(open(sys.argv[1]))
need = ["n", "precision", "backend", "kernel", "iterations", "time_s", "time_per_sweep_s", "gflops",
        "gbps", "bandwidth_fraction", "relative_residual", "max_error"]
missing = [k for k in need if k not in d]
assert not missing, missing
assert d["n"] == 64 and d["iterations"] == 20 and d["backend"] == "cpu-threads"
assert 0 < d["relative_residual"] < 1 and d["max_error"] > 0
assert abs(d["bandwidth_fraction"] - d["gbps"] / 10) < 1e-9
PY
  grep -q "sweep" "$T/err" && ok || bad "human output should go to stderr with --json -"
fi

# --- output files
expect_ok $P --n 33 --iters 10 --output "$T/u.raw" && [ "$(stat -c %s "$T/u.raw")" -eq $((33 * 33 * 4)) ] && ok || bad "raw size (single)"
expect_ok $P --n 33 --iters 10 --precision double --output "$T/u.raw" && [ "$(stat -c %s "$T/u.raw")" -eq $((33 * 33 * 8)) ] && ok || bad "raw size (double)"
expect_ok $P --n 33 --iters 10 --output "$T/u.vti" && head -c 200 "$T/u.vti" | grep -q ImageData && ok || bad "vti"
if "$HR" poisson2d --n 33 --iters 10 --output "$T/u.png" --quiet --no-bandwidth 2>"$T/err"; then
  [ "$(head -c 8 "$T/u.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] && ok || bad "png signature"
else
  grep -q libpng "$T/err" && ok || bad "png failed: $(cat "$T/err")"
fi

# --- right-hand side from a file: f = 1 everywhere, compared with its own run twice
python3 -c "import struct,sys; sys.stdout.buffer.write(struct.pack('<1024f', *([1.0]*1024)))" >"$T/f.raw"
expect_ok $P --n 32 --iters 50 --rhs "$T/f.raw" --output "$T/a.raw" &&
  expect_ok $P --n 32 --iters 50 --rhs "$T/f.raw" --backend cpu-threads --threads 2 --output "$T/b.raw" &&
  cmp -s "$T/a.raw" "$T/b.raw" && ok || bad "rhs file runs differ"
python3 - "$T/a.raw" <<'PY' && ok || bad "rhs file solution"
import struct, sys
u = struct.unpack('<1024f', open(sys.argv[1], 'rb').read())
assert all(x > 0 for x in u) and max(u) == u[15 * 32 + 15]
PY

# --- verification and stopping
expect_ok poisson2d --n 64 --iters 9 --threads 2 --bind core --verify --no-bandwidth &&
  grep -q "bitwise equal" "$T/out" && ok || bad "--bind core"
expect_ok poisson2d --n 101 --iters 33 --backend cpu-threads --layout blocks --threads 2 --verify --no-bandwidth &&
  grep -q "bitwise equal" "$T/out" && ok || bad "--verify"
expect_ok poisson2d --n 31 --iters 100000 --tol 1e-4 --check 10 --precision double --json - --no-bandwidth &&
  python3 -c "import json,sys; d=json.load(open('$T/out')); assert d['reason']=='converged' and d['relative_residual']<1e-4" && ok || bad "--tol"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
