#!/usr/bin/env bash
# The library reads no environment variable: no object of its archives (or shared objects)
# calls getenv or secure_getenv. The command, the tests and the benchmark drivers may.
set -u
command -v nm >/dev/null || { echo "nm not found"; exit 1; }
fails=0
for lib in "$@"; do
  syms=$(nm -A "$lib" 2>/dev/null) || { echo "FAIL: nm cannot read $lib"; fails=$((fails + 1)); continue; }
  # nm must have read the library's code, or an empty listing would pass
  grep -qE ' T hr_[a-z_]+$' <<<"$syms" || { echo "FAIL: $lib: no hr_ function found"; fails=$((fails + 1)); continue; }
  bad=$(grep -E ' U (secure_)?getenv(@.*)?$' <<<"$syms")
  if [ -n "$bad" ]; then
    echo "FAIL: $lib reads the environment:"; echo "$bad"; fails=$((fails + 1))
  else
    echo "ok: $lib"
  fi
done
exit $((fails > 0))
