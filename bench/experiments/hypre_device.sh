#!/bin/bash
# shellcheck disable=SC2046  # $(bind N) splits into mpiexec options on purpose
# hypre against hetrelax's CPU multigrid on all the cores of a machine without package
# access (the multigrid peers; the GPU machine's 16 cores):
#
#   bench/experiments/hypre_device.sh OUT.json        (also writes OUT.md)
#
# 1. unpacks the Debian packages carried in .deps/debs/hypre (libhypre-2.26.0, libhypre-dev
#    and what libHYPRE links: superlu-dist, combblas, metis, ptscotch, blas, lapack,
#    gfortran, quadmath) and .deps/debs (OpenMPI, json-c, pkgconf) with dpkg -x (ar + tar
#    without dpkg) into HR_DEPS, not the system. The hypre ones sit in a subfolder so that
#    scripts/gpu-check.sh (which unpacks .deps/debs/*.deb onto its LD_LIBRARY_PATH) does not
#    pick up their blas/lapack/gfortran;
# 2. compiles bench/drivers/hypre_driver.c against them (checks that libHYPRE and libmpi resolve
#    inside HR_DEPS) and runs it under the carried mpiexec: PFMG-CG and BoomerAMG-CG
#    with NP ranks (bound to cores);
# 3. runs hetrelax's multigrid (bench/mg_driver from HR_BUILD, default build-gpu, else a
#    CPU-only build made in build-mgcpu) with NP threads on the same systems: plain MG
#    V(2,2) fp64 and mixed, FMG, PCG-MG fp64 and mixed;
# all on the random rhs (splitmix64 seed 2026: both drivers generate bench/experiments/rhs_gen.py's
# values), from zero to relative residual TOL; median of REPEATS after a warm-up.
#
# Environment (defaults): NP (nproc), SIZES2D (4095), SIZES3D (255), REPEATS (3), RHS
# (random; "random,spike" adds the centre spike),
# TOL (1e-8), SOLVERS (pfmg,amg), HYPRE_RANKS (NP; e.g. "1,16"), HR_DEPS
# (.deps/root-hypre), HR_DEBS (.deps/debs), HR_BUILD (build-gpu if it has bench/mg_driver),
# RUN_TIMEOUT (300 s per run), HR_MPI_BIND (mpiexec placement, "--bind-to core --map-by
# core"; unbound when mpiexec refuses it), HR_CARRIED_PKGCONFIG (1: build-mgcpu finds json-c in the
# carried packages even where the system has it, to test that path). Exit status: 1 when a build or a run fails or an answer is
# above TOL, 2 when the packages are missing.
set -u -o pipefail
OUTJ=${1:?usage: bench/experiments/hypre_device.sh OUT.json}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
NP=${NP:-$(nproc)}
SIZES2D=${SIZES2D-4095}
SIZES3D=${SIZES3D-255}
REPEATS=${REPEATS:-3}
RHS=${RHS:-random}
TOL=${TOL:-1e-8}
SOLVERS=${SOLVERS:-pfmg,amg}
HYPRE_RANKS=${HYPRE_RANKS:-$NP}
DEPS=${HR_DEPS:-$ROOT/.deps/root-hypre}
DEBS=${HR_DEBS:-$ROOT/.deps/debs}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
mkdir -p "$(dirname "$OUTJ")"
OUTJ=$(cd "$(dirname "$OUTJ")" && pwd)/$(basename "$OUTJ")
WORK=$(mktemp -d /tmp/hr-hypre.XXXXXX)
LINES=$WORK/records.jsonl
: >"$LINES"
status=0
say() { printf '\n== %s\n' "$*"; }
t_start=$(date +%s)

# --- 1. the carried packages --------------------------------------------------------
LIBD=$DEPS/usr/lib/x86_64-linux-gnu
if [ ! -e "$LIBD/libHYPRE.so" ]; then
    ls "$DEBS"/hypre/libhypre-dev_*.deb >/dev/null 2>&1 || { echo "no libhypre-dev in $DEBS/hypre"; exit 2; }
    ls "$DEBS"/libopenmpi3_*.deb >/dev/null 2>&1 || { echo "no OpenMPI packages in $DEBS"; exit 2; }
    say "unpacking $(ls "$DEBS"/*.deb "$DEBS"/hypre/*.deb | wc -l) packages from $DEBS and $DEBS/hypre into $DEPS"
    mkdir -p "$DEPS"
    for f in "$DEBS"/*.deb "$DEBS"/hypre/*.deb; do
        if command -v dpkg >/dev/null; then
            dpkg -x "$f" "$DEPS" || { echo "dpkg -x $f failed"; exit 2; }
        else # a .deb is an ar archive holding data.tar.*
            data=$(ar t "$f" | grep '^data\.tar') && ar p "$f" "$data" | tar -xa -C "$DEPS" -f - 2>/dev/null ||
                (cd "$WORK" && ar x "$f" "$data" && tar -xf "$data" -C "$DEPS") || { echo "cannot unpack $f"; exit 2; }
        fi
    done
fi
# Debian's blas/lapack live in subfolders (the plain names are update-alternatives links)
export LD_LIBRARY_PATH=$LIBD:$LIBD/blas:$LIBD/lapack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPAL_PREFIX=$DEPS/usr OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIEXEC=$DEPS/usr/bin/mpiexec.openmpi
[ -x "$MPIEXEC" ] || { echo "no carried mpiexec ($MPIEXEC)"; exit 2; }

# --- 2. the hypre driver ------------------------------------------------------------
say "hypre driver (bench/drivers/hypre_driver.c against $DEPS)"
HYD=$WORK/hypre_driver
CC=${CC:-$(command -v gcc || command -v cc)}
"$CC" -O2 -o "$HYD" bench/drivers/hypre_driver.c -I"$DEPS/usr/include/hypre" -I"$LIBD/openmpi/include" \
    -L"$LIBD" -lHYPRE -lmpi -lm -Wl,-rpath-link,"$LIBD:$LIBD/blas:$LIBD/lapack" || { echo "hypre driver: build failed"; exit 1; }
for lib in libHYPRE libmpi.so libsuperlu_dist libblas libopen-pal; do
    where=$(ldd "$HYD" | grep -m1 "$lib" | awk '{print $3}')
    case "$where" in
    "$DEPS"/*) ;;
    *) echo "hypre driver: $lib resolves to '${where:-nothing}', not inside $DEPS"; ldd "$HYD"; exit 1 ;;
    esac
done
echo "links: $(ldd "$HYD" | grep -c "$DEPS") libraries from $DEPS; from the system: $(ldd "$HYD" | grep -v "$DEPS" | awk '{print $1}' | paste -sd' ')"
# ranks bound to cores; where mpiexec refuses that for NP ranks (fewer cores than hwloc
# counts, hyperthreads), unbound and oversubscribed
BIND=${HR_MPI_BIND:-"--bind-to core --map-by core"}
bind() { # mpiexec placement for $1 ranks
    if [ "$1" -le "$(nproc)" ]; then echo "$BIND"; else echo "--oversubscribe --bind-to none"; fi
}
probe() { timeout 60 "$MPIEXEC" -n "$NP" $(bind "$NP") "$HYD" dim=2 n=63 repeats=1 >"$WORK/probe.json" 2>"$WORK/probe.err"; }
if ! probe; then
    echo "mpiexec -n $NP $BIND failed ($(grep -v -e "^-*$" -e "^ *$" "$WORK/probe.err" | head -1)): running the ranks unbound"
    BIND="--oversubscribe --bind-to none"
    probe || { echo "hypre driver: the MPI probe failed"; cat "$WORK/probe.err"; exit 1; }
fi
echo "probe ($NP ranks, $(bind "$NP")): $(cat "$WORK/probe.json")"

# --- 3. hetrelax's multigrid driver -----------------------------------------------------
MGD=""
for b in ${HR_BUILD:-} "$ROOT/build-gpu" "$ROOT/build-mgcpu"; do
    [ -x "$b/bench/mg_driver" ] && { MGD=$b/bench/mg_driver; break; }
done
if [ -z "$MGD" ]; then
    say "building bench/mg_driver (CPU only, build-mgcpu)"
    CMAKE=$(command -v cmake || python3 -c 'import cmake, os; print(os.path.join(cmake.CMAKE_BIN_DIR, "cmake"))' 2>/dev/null)
    NINJA=$(command -v ninja || python3 -c 'import ninja, os; print(os.path.join(ninja.BIN_DIR, "ninja"))' 2>/dev/null)
    PKGARGS=()
    if [ -n "${HR_CARRIED_PKGCONFIG:-}" ] || ! command -v pkg-config >/dev/null || ! pkg-config --exists json-c 2>/dev/null; then
        # json-c and pkgconf from the same carried packages, as scripts/gpu-check.sh does
        export PKG_CONFIG_LIBDIR=$LIBD/pkgconfig:$DEPS/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$DEPS
        PKGC=$(command -v pkg-config || echo "$DEPS/usr/bin/pkgconf")
        PKGARGS=(-DPKG_CONFIG_EXECUTABLE="$PKGC")
    fi
    "$CMAKE" -S . -B build-mgcpu -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_BUILD_TYPE=Release \
        -DHETRELAX_ENABLE_CUDA=OFF -DHETRELAX_ENABLE_MPI=OFF -DHETRELAX_BUILD_TESTS=OFF "${PKGARGS[@]}" \
        >"$WORK/cmake.log" 2>&1 && "$CMAKE" --build build-mgcpu -j "$(nproc)" --target mg_driver >"$WORK/build.log" 2>&1 ||
        { tail -30 "$WORK/cmake.log" "$WORK/build.log"; echo "mg_driver: build failed"; exit 1; }
    MGD=$ROOT/build-mgcpu/bench/mg_driver
fi
echo "hetrelax: $MGD"
# the host bandwidth of this run (hetrelax info's STREAM copy/triad), when the CLI is there
CLI=$(dirname "$(dirname "$MGD")")/hetrelax
echo '{}' >"$WORK/info.json"
[ -x "$CLI" ] && timeout 120 "$CLI" info --threads "$NP" --repeats 10 --json - 2>/dev/null |
    python3 -c 'import json, sys; t = sys.stdin.read(); print(json.dumps(json.loads(t[t.index("{"):])))' \
        >"$WORK/info.json" 2>/dev/null || echo '{}' >"$WORK/info.json"

# --- 4. the runs -----------------------------------------------------------------------
run() { # label, command...: one JSON record appended (or an error record)
    local label=$1
    shift
    local t0=$SECONDS out
    if out=$(timeout "$RUN_TIMEOUT" "$@" 2>"$WORK/err"); then
        out=$(printf '%s\n' "$out" | grep -m1 '^{')
        printf '%s\n' "$out" | python3 -c "
import json, sys
r = json.loads(sys.stdin.read()); r['label'] = '$label'; r['wall_s'] = $SECONDS - $t0
print(json.dumps(r))" >>"$LINES" || { echo "$label: no JSON"; status=1; }
    else
        echo "$label: failed: $(tail -3 "$WORK/err")"
        printf '{"label": "%s", "error": "%s"}\n' "$label" "$(tail -1 "$WORK/err" | tr -d '"\\')" >>"$LINES"
        status=1
    fi
    tail -1 "$LINES" | python3 -c "
import json, sys
r = json.loads(sys.stdin.read())
if 'error' not in r:
    print(f\"{r['label']:18s} {r['dim']}-D n={r['n']:5d} {r['rhs']:6s} it={r['iterations']:3d} t={r['time_s']:9.4f} s \"
          f\"{r['ns_per_unknown']:8.2f} ns/u res={r['relative_residual']:.2e} setup={r.get('setup_s', 0):.3f} s\", flush=True)"
}
grid() { # dim, size, rhs
    local d=$1 n=$2 rhs=$3 s r
    say "$d-D n = $n, rhs $rhs ($NP threads / ranks)"
    for cfg in "mg-v:method=mg cycle=v" "mg-v-mixed:method=mg cycle=v precision=mixed" \
        "mg-fmg:method=mg cycle=fmg" "pcg-mg:method=cg pc=mg" "pcg-mg-mixed:method=cg pc=mg precision=mixed"; do
        run "${cfg%%:*}" "$MGD" dim="$d" n="$n" rhs="$rhs" tol="$TOL" threads="$NP" repeats="$REPEATS" ${cfg#*:}
    done
    for s in ${SOLVERS//,/ }; do
        for r in ${HYPRE_RANKS//,/ }; do
            run "hypre-$s-cg-${r}r" "$MPIEXEC" -n "$r" $(bind "$r") "$HYD" dim="$d" n="$n" rhs="$rhs" \
                solver="$s" tol="$TOL" repeats="$REPEATS"
        done
    done
}
for rhs in ${RHS//,/ }; do
    for n in ${SIZES2D//,/ }; do grid 2 "$n" "$rhs"; done
    for n in ${SIZES3D//,/ }; do grid 3 "$n" "$rhs"; done
done

# --- 5. JSON and Markdown ------------------------------------------------------------------
HR_BIND=$BIND python3 - "$LINES" "$OUTJ" "$TOL" "$NP" "$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null)" \
    "$(($(date +%s) - t_start))" "$WORK/info.json" <<'PY' || status=1
import datetime, json, os, platform, sys
lines, out, tol, np_, commit, wall, info = sys.argv[1:8]
bw = json.load(open(info)).get("host_bandwidth", {})
tol = float(tol)
recs = [json.loads(l) for l in open(lines) if l.strip()]
bad = 0
for r in recs:
    r["answer_ok"] = "error" not in r and r.get("relative_residual", 1.0) < tol * 1.0000001
    bad += not r["answer_ok"]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
meta = {"benchmark": "bench/experiments/hypre_device.sh", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "commit": commit, "host": platform.node(), "cpu": cpu, "cores": os.cpu_count(), "threads_ranks": int(np_),
        "load_average_end": os.getloadavg()[0], "tol": tol, "wall_s": int(wall),
        "stream_copy_gbps": bw.get("copy_gbps"), "stream_triad_gbps": bw.get("triad_gbps"),
        "hypre": "Debian libhypre-2.26.0 (MPI only, no OpenMP), carried and unpacked",
        "mpiexec_placement": os.environ.get("HR_BIND", ""),
        "rhs": "random: splitmix64 seed 2026 (bench/experiments/rhs_gen.py values); spike: h^2 f = 1 at the centre"}
json.dump({"meta": meta, "records": recs}, open(out, "w"), indent=1)
md = [f"# hypre against hetrelax multigrid, {cpu}, {np_} threads / ranks", "",
      f"Generated by `bench/experiments/hypre_device.sh` on {meta['date'][:19]} UTC, commit `{commit}`. Right-hand sides as listed (random: splitmix64 seed 2026), "
      f"zero guess, relative residual {tol:g}; median of the timed solves after a warm-up, setup not in the time. "
      f"STREAM copy {bw.get('copy_gbps') or float('nan'):.1f} GB/s, triad {bw.get('triad_gbps') or float('nan'):.1f} "
      f"GB/s ({np_} threads, hetrelax info, same run).",
      "", "| dim | n | rhs | solver | ranks/threads | iterations | time (s) | ns/unknown | rel. residual | setup (s) |",
      "|---|---|---|---|---|---|---|---|---|---|"]
for r in recs:
    if "error" in r:
        md.append(f"| | | | {r['label']} | | | failed: {r['error']} | | | |")
        continue
    md.append(f"| {r['dim']} | {r['n']} | {r['rhs']} | {r['label']} | {r.get('ranks', r.get('threads'))} | {r['iterations']} | "
              f"{r['time_s']:.4f} | {r['ns_per_unknown']:.2f} | {r['relative_residual']:.2e}"
              f"{'' if r['answer_ok'] else ' FAILED'} | {r.get('setup_s', 0):.3f} |")
key = lambda r: (r["dim"], r["n"], r["rhs"])
keys = sorted({key(r) for r in recs if "error" not in r})
md += ["", "| dim | n | rhs | best hetrelax | time (s) | best hypre PFMG-CG (s) | speed-up |",
       "|---|---|---|---|---|---|---|"]
for k in keys:
    ours = [r for r in recs if "error" not in r and key(r) == k and not r["label"].startswith("hypre")
            and r["answer_ok"]]
    hyp = [r for r in recs if "error" not in r and key(r) == k and r["label"].startswith("hypre-pfmg")
           and r["answer_ok"]]
    if ours and hyp:
        o, h = min(ours, key=lambda r: r["time_s"]), min(hyp, key=lambda r: r["time_s"])
        md.append(f"| {k[0]} | {k[1]} | {k[2]} | {o['label']} | {o['time_s']:.4f} | {h['time_s']:.4f} "
                  f"({h['label']}) | {h['time_s'] / o['time_s']:.1f}x |")
open(os.path.splitext(out)[0] + ".md", "w").write("\n".join(md) + "\n")
print("\n".join(md[-len(keys) - 2:]))
print(f"wrote {out}: {len(recs)} records, {bad} failed, {wall} s")
sys.exit(1 if bad else 0)
PY
rm -rf "$WORK"
exit $status
