#!/usr/bin/env bash
# `cmake --install` puts the Python package where the interpreter finds it, and it imports and
# solves from there, away from the source and build trees: for this build (the library linked
# in statically) and for the shared build beside it (the module finds the installed
# libhetrelax.so through its $ORIGIN run path).
#   install_test.sh PYTHON BUILD_DIR [SHARED_BUILD_DIR]
set -euo pipefail
py=$1
shift
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
i=0
for build in "$@"; do
    i=$((i + 1))
    p=$T/prefix$i
    cmake --install "$build" --prefix "$p" >/dev/null
    mod=$(find "$p" -name '_hetrelax*.so' | head -1)
    test -n "$mod" || { echo "FAIL: no extension module installed from $build"; exit 1; }
    site=$(dirname "$(dirname "$mod")")
    if [ -e "$p/lib/libhetrelax.so" ]; then
        got=$(ldd "$mod" | awk '/libhetrelax\.so/ { print $3 }')
        [ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$p/lib/libhetrelax.so")" ] ||
            { echo "FAIL: $mod does not load $p/lib/libhetrelax.so"; ldd "$mod"; exit 1; }
        kind=shared
    else
        if ldd "$mod" | grep -q libhetrelax; then echo "FAIL: a static build's module needs libhetrelax.so"; exit 1; fi
        kind=static
    fi
    (cd "$T" && env -u HETRELAX_CLI PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1 "$py" -c '
import sys, numpy as np, hetrelax
assert hetrelax.__file__.startswith(sys.argv[1]), hetrelax.__file__
p = hetrelax.Poisson((60, 100), lengths=(0.6, 1.0), bc="x=dirichlet:0,y+=dirichlet:1,y-=neumann:0")
u, info = hetrelax.solve(p, method="mg", rtol=1e-8)
assert info.converged and u.shape == (60, 100)
print(sys.argv[2], "install: hetrelax", hetrelax.__version__, "from", hetrelax.__file__, "-", info)
' "$site" "$kind")
done
echo "python install test: ok"
