#!/usr/bin/env bash
# A shared libhetrelax exports the public API and nothing else: the functions declared in
# include/hetrelax/ (each declaration marked HR_API) and the few internal functions marked
# HR_INTERNAL_API in src/ (the MPI library calls them). libhetrelax_mpi exports exactly the
# declarations of the headers that include <mpi.h>, and every HR_INTERNAL_API function is
# one it calls. Any extra, missing or unmarked symbol fails, by name.
#   exports_test.sh SOURCE_DIR LIBHETRELAX_SO [LIBHETRELAX_MPI_SO]
set -euo pipefail
src=$1 lib=$2 mpilib=${3:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0

# every declaration statement of the headers, comments removed, one a line: "MARKED? name"
declarations() {
    for h in "$@"; do
        gcc -fpreprocessed -dD -E -P -w "$h"
    done | grep -v '^#' | tr '\n' ' ' | tr ';{}' '\n' | grep -v '\btypedef\b' |
        grep -E '\bhr_[a-z0-9_]+ *\(' |
        sed -E 's/^(.*[^a-z0-9_])?(hr_[a-z0-9_]+) *\(.*$/\1 \2/' |
        awk '{ print (($0 ~ /(^|[^A-Za-z0-9_])HR_API([^A-Za-z0-9_]|$)/) ? "api " : "unmarked ") $NF }'
}
exported() { nm -D --defined-only "$1" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u; }

core_h=() mpi_h=()
for h in "$src"/include/hetrelax/*.h; do
    if grep -q '#include <mpi.h>' "$h"; then mpi_h+=("$h"); else core_h+=("$h"); fi
done
declarations "${core_h[@]}" >"$T/core.decl"
declarations "${mpi_h[@]}" >"$T/mpi.decl"
if grep '^unmarked' "$T/core.decl" "$T/mpi.decl"; then
    echo "FAIL: public declarations without HR_API (above)"
    fail=1
fi
awk '{ print $2 }' "$T/core.decl" | sort -u >"$T/core.api"
awk '{ print $2 }' "$T/mpi.decl" | sort -u >"$T/mpi.api"
grep -rhoE '^HR_INTERNAL_API[^(;]*\bhri_[a-z0-9_]+ *\(' "$src/src" | grep -oE 'hri_[a-z0-9_]+ *\($' | tr -d ' (' |
    sort -u >"$T/internal"
test -s "$T/core.api" && test -s "$T/internal" # the parsing found something

# compare(LIB, ALLOWED, REQUIRED): nothing outside ALLOWED exported, all of REQUIRED exported
compare() {
    exported "$1" >"$T/exp"
    comm -23 "$T/exp" "$2" >"$T/extra"
    comm -13 "$T/exp" "$3" >"$T/missing"
    if [ -s "$T/extra" ]; then
        echo "FAIL: $(basename "$1") exports $(wc -l <"$T/extra") symbols that are no API:"
        sed 's/^/  /' "$T/extra"
        fail=1
    fi
    if [ -s "$T/missing" ]; then
        echo "FAIL: $(basename "$1") does not export:"
        sed 's/^/  /' "$T/missing"
        fail=1
    fi
    echo "$(basename "$1"): $(wc -l <"$T/exp") symbols exported"
}
sort -u "$T/core.api" "$T/internal" >"$T/core.allowed"
compare "$lib" "$T/core.allowed" "$T/core.allowed"
echo "  $(wc -l <"$T/core.api") API functions, $(wc -l <"$T/internal") HR_INTERNAL_API functions"
if [ -n "$mpilib" ]; then
    compare "$mpilib" "$T/mpi.api" "$T/mpi.api"
    # the internal exports are there for the MPI library only: each one must be called by it
    nm -D --undefined-only "$mpilib" | awk '{ sub(/@.*/, "", $2); print $2 }' | sort -u >"$T/mpi.undef"
    comm -23 "$T/internal" "$T/mpi.undef" >"$T/unused"
    if [ -s "$T/unused" ]; then
        echo "FAIL: HR_INTERNAL_API functions that $(basename "$mpilib") does not call:"
        sed 's/^/  /' "$T/unused"
        fail=1
    fi
fi
[ $fail -eq 0 ] && echo "exports test: ok"
exit $fail
