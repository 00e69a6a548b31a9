#!/usr/bin/env bash
# Every function and variable a hetrelax archive defines for the linker is either the public
# API (an hr_ name declared in include/hetrelax/) or internal under the hri_ prefix, so a
# program linked statically against hetrelax meets no other name of ours. CUDA objects are
# C++: their names are demangled first; what the compilers add (guard variables, personality
# references, CUDA's registration and stub symbols) is not ours and is left out.
#   prefix_test.sh SOURCE_DIR LIB.a...
set -euo pipefail
src=$1
shift
command -v nm >/dev/null || { echo "nm not found"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
grep -ohE '\bhr_[a-z0-9_]+\b' "$src"/include/hetrelax/*.h | sort -u >"$T/public"
fail=0
for lib in "$@"; do
    nm -g --defined-only "$lib" | awk 'NF >= 3 && $2 ~ /^[TDBRCVWu]$/ { print $3 }' | sort -u >"$T/raw"
    grep -q '^hr_' "$T/raw" || { echo "FAIL: $lib: no hr_ symbol found (nm read nothing?)"; fail=1; continue; }
    # an anonymous namespace's name is kept whole: it is ours and should be static instead
    c++filt <"$T/raw" | sed -E 's/^\(anonymous namespace\)::/anonymous-namespace::/; s/\(.*$//; s/<.*$//' |
        grep -vE '^(DW\.ref\.|__|_GLOBAL_|typeinfo|vtable|guard variable)' | sort -u >"$T/names"
    grep -v '^hri_' "$T/names" | comm -23 - "$T/public" >"$T/bad" || true
    if [ -s "$T/bad" ]; then
        echo "FAIL: $(basename "$lib") defines $(wc -l <"$T/bad") names that are neither API nor hri_:"
        sed 's/^/  /' "$T/bad"
        fail=1
    else
        echo "ok: $(basename "$lib"): $(grep -c '^hri_' "$T/names") internal hri_ names, $(grep -vc '^hri_' "$T/names") API names"
    fi
done
exit $fail
