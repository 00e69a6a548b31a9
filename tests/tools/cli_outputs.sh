#!/usr/bin/env bash
# Outputs are whole or absent. A failed write (ulimit -f, a full
# stdout) leaves the previous good file as it was and no temporary file behind; bad
# output paths are refused before the solve with errno's reason and exit 2; a full or
# closed stdout under --json - is exit 1.
set -u
HR=$1
. "$(dirname "$0")/cli_lib.sh"
no_temps() { # no temporary files left in $T
  if ls -A "$T" | grep -q '\.tmp-'; then bad "$1: temporary files left: $(ls -A "$T" | grep '\.tmp-')"; else ok; fi
}
P="poisson2d --no-bandwidth --quiet --backend cpu-seq"

# --- item 7: a write that fails part-way keeps the previous file (every format)
for ext in raw vti png; do
  "$HR" $P --n 33 --iters 10 --output "$T/u.$ext" >/dev/null 2>&1 || { bad "good .$ext run"; continue; }
  cp "$T/u.$ext" "$T/good.$ext"
  # an 8 KiB file-size limit, 256^2 points (a 20 KB picture): the write fails with EFBIG
  (ulimit -f 8; "$HR" $P --n 256 --iters 300 --output "$T/u.$ext") >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 1 ] && ok || bad ".$ext under ulimit -f exited $rc, want 1 ($(cat "$T/err"))"
  grep -q -- "--output: cannot write.*File too large" "$T/err" && ok || bad ".$ext: message '$(cat "$T/err")'"
  cmp -s "$T/u.$ext" "$T/good.$ext" && ok || bad ".$ext: the previous good file was damaged"
  no_temps ".$ext"
done
# the JSON record and the sparse solution likewise
"$HR" $P --n 33 --iters 10 --json "$T/r.json" >/dev/null 2>&1 && cp "$T/r.json" "$T/good.json"
(ulimit -f 0; "$HR" $P --n 33 --iters 10 --json "$T/r.json") >/dev/null 2>"$T/err"
[ $? -eq 1 ] && cmp -s "$T/r.json" "$T/good.json" && ok || bad "--json under ulimit -f: $(cat "$T/err")"
no_temps "--json"
"$HR" sparse --gen laplace2d:8 --quiet --output "$T/x.mtx" >/dev/null 2>&1 && cp "$T/x.mtx" "$T/good.mtx"
(ulimit -f 1; "$HR" sparse --gen laplace2d:60 --quiet --output "$T/x.mtx") >/dev/null 2>"$T/err"
[ $? -eq 1 ] && cmp -s "$T/x.mtx" "$T/good.mtx" && ok || bad "sparse --output under ulimit -f: $(cat "$T/err")"
no_temps "sparse --output"

# a signal during the run removes the temporary files and leaves the old output
"$HR" $P --n 512 --iters 1000000 --output "$T/u.raw" --json "$T/r.json" >/dev/null 2>&1 &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] && ok || bad "SIGTERM: exit $rc, want 143"
cmp -s "$T/u.raw" "$T/good.raw" && cmp -s "$T/r.json" "$T/good.json" && ok || bad "SIGTERM damaged an old output"
no_temps "SIGTERM"

# every terminating signal, not only SIGTERM, removes the temporary files (sent once they
# exist, so that the check can fail)
for sig in USR1 USR2 ALRM VTALRM PROF; do
  "$HR" $P --n 512 --iters 1000000 --output "$T/u.raw" --json "$T/r.json" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do ls -A "$T" | grep -q '\.tmp-' && break; sleep 0.05; done
  ls -A "$T" | grep -q '\.tmp-' || bad "SIG$sig: no temporary file to clean up"
  kill -$sig $pid
  wait $pid
  rc=$?
  [ $rc -eq $((128 + $(kill -l $sig))) ] && ok || bad "SIG$sig: exit $rc"
  cmp -s "$T/u.raw" "$T/good.raw" && cmp -s "$T/r.json" "$T/good.json" && ok || bad "SIG$sig damaged an old output"
  no_temps "SIG$sig"
done

# a replaced file keeps its mode (and, as root, its owner and group)
cp "$T/good.raw" "$T/m.raw"
cp "$T/good.json" "$T/m.json"
chmod 600 "$T/m.raw"
chmod 640 "$T/m.json"
if [ "$(id -u)" -eq 0 ]; then chown 65534:65534 "$T/m.raw"; fi
"$HR" $P --n 33 --iters 10 --output "$T/m.raw" --json "$T/m.json" >/dev/null 2>"$T/err" || bad "mode run: $(cat "$T/err")"
[ "$(stat -c %a "$T/m.raw")" = 600 ] && [ "$(stat -c %a "$T/m.json")" = 640 ] && ok ||
  bad "modes after replacing: $(stat -c %a "$T/m.raw") $(stat -c %a "$T/m.json"), want 600 640"
if [ "$(id -u)" -eq 0 ]; then
  [ "$(stat -c %u:%g "$T/m.raw")" = 65534:65534 ] && ok || bad "owner after replacing: $(stat -c %u:%g "$T/m.raw")"
fi
cp "$T/good.mtx" "$T/m.mtx" && chmod 604 "$T/m.mtx"
"$HR" sparse --gen laplace2d:8 --quiet --output "$T/m.mtx" >/dev/null 2>&1
[ "$(stat -c %a "$T/m.mtx")" = 604 ] && ok || bad "sparse --output mode: $(stat -c %a "$T/m.mtx")"
# a new file gets the mode an ordinary create gives (umask 022: 644)
(umask 022; "$HR" $P --n 33 --iters 10 --output "$T/new.raw" >/dev/null 2>&1)
[ "$(stat -c %a "$T/new.raw")" = 644 ] && ok || bad "new file mode: $(stat -c %a "$T/new.raw")"

# symbolic links are followed: a dangling link creates its target, the link stays a link
mkdir -p "$T/sub"
ln -s sub/target.raw "$T/dangling.raw"
ln -s dangling.raw "$T/chain.json"
ln -s sub/t.json "$T/dangling.json"
"$HR" $P --n 33 --iters 10 --output "$T/dangling.raw" --json "$T/dangling.json" >/dev/null 2>"$T/err" ||
  bad "dangling link run: $(cat "$T/err")"
[ -L "$T/dangling.raw" ] && [ -f "$T/sub/target.raw" ] && [ ! -L "$T/sub/target.raw" ] &&
  cmp -s "$T/sub/target.raw" "$T/good.raw" && ok || bad "--output through a dangling link: $(ls -l "$T" "$T/sub")"
[ -L "$T/dangling.json" ] && [ -s "$T/sub/t.json" ] && ok || bad "--json through a dangling link"
ln -s nowhere/x.raw "$T/lost.raw"
"$HR" $P --n 33 --iters 10 --output "$T/lost.raw" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "No such file or directory" "$T/err" && [ -L "$T/lost.raw" ] && ok ||
  bad "a link into a missing folder: $(cat "$T/err")"
ln -s loop1.raw "$T/loop2.raw"
ln -s loop2.raw "$T/loop1.raw"
"$HR" $P --n 33 --iters 10 --output "$T/loop1.raw" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "symbolic links" "$T/err" && ok || bad "a link loop: $(cat "$T/err")"
no_temps "links"

# a name at the file system's limit (255 bytes) is written: the temporary name is shorter
long=$(printf 'a%.0s' $(seq 251)).raw
"$HR" $P --n 33 --iters 10 --output "$T/$long" >/dev/null 2>"$T/err" && cmp -s "$T/$long" "$T/good.raw" && ok ||
  bad "255-byte --output name: $(cat "$T/err")"
wide=$(printf '\xc3\xa9%.0s' $(seq 125)).raw # 250 bytes of two-byte characters
"$HR" $P --n 33 --iters 10 --output "$T/$wide" >/dev/null 2>"$T/err" && [ -f "$T/$wide" ] && ok ||
  bad "254-byte UTF-8 --output name: $(cat "$T/err")"
no_temps "long names"

# two runs writing one path: the result is one of them, whole
"$HR" $P --n 300 --iters 40 --output "$T/a.raw" >/dev/null 2>&1
"$HR" $P --n 200 --iters 40 --output "$T/b.raw" >/dev/null 2>&1
for i in 1 2 3; do
  "$HR" $P --n 300 --iters 40 --output "$T/c.raw" >/dev/null 2>&1 &
  "$HR" $P --n 200 --iters 40 --output "$T/c.raw" >/dev/null 2>&1
  wait
  { cmp -s "$T/c.raw" "$T/a.raw" || cmp -s "$T/c.raw" "$T/b.raw"; } && ok || bad "concurrent writers made a mixed file"
done

# --- item 8: unwritable paths are refused before the solve, with the real reason
expect_refused() { # pattern flag path
  local pat=$1 flag=$2 path=$3
  "$HR" $P --n 2000 --iters 100000 "$flag" "$path" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 2 ] || { bad "$flag $path exited $rc, want 2 ($(cat "$T/err"))"; return; }
  [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$flag: cannot write '$path': $pat" "$T/err" &&
    [ ! -s "$T/out" ] && ok || bad "$flag $path: '$(cat "$T/err")'"
}
expect_refused "No such file or directory" --output "$T/nodir/u.raw"
expect_refused "No such file or directory" --json "$T/nodir/r.json"
mkdir "$T/d.raw" "$T/ro"
expect_refused "Is a directory" --output "$T/d.raw"
expect_refused "Is a directory" --json "$T/ro"
if [ "$(id -u)" -ne 0 ]; then # root writes anywhere
  chmod 500 "$T/ro"
  expect_refused "Permission denied" --output "$T/ro/u.raw"
  chmod 700 "$T/ro"
fi
"$HR" sparse --gen laplace2d:8 --output "$T/nodir/x.mtx" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "No such file or directory" "$T/err" && ok || bad "sparse --output nodir: $(cat "$T/err")"
"$HR" info --no-bandwidth --json "$T/nodir/i.json" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "No such file or directory" "$T/err" && ok || bad "info --json nodir: $(cat "$T/err")"

# --- item 9: a full or closed stdout is an error
for cmd in "$P --n 16 --iters 5 --json -" "info --no-bandwidth --json -" "sparse --gen laplace2d:8 --quiet --json -"; do
  "$HR" $cmd >/dev/full 2>"$T/err"
  [ $? -eq 1 ] && grep -q "standard output" "$T/err" && ok || bad "'$cmd' >/dev/full: $(cat "$T/err")"
  "$HR" $cmd >&- 2>"$T/err"
  [ $? -eq 1 ] && grep -q "standard output" "$T/err" && ok || bad "'$cmd' >&-: $(cat "$T/err")"
done
# and the report of a run (no --json) too
"$HR" info --no-bandwidth >/dev/full 2>"$T/err"
[ $? -eq 1 ] && ok || bad "info >/dev/full"
no_temps "end"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
