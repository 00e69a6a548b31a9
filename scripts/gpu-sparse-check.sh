#!/bin/bash
# The GPU check of the sparse methods, for the accelerator machine:
#
#   scripts/gpu-sparse-check.sh OUTDIR [single|multi|tests|cli] [sections]
#
# cli: only the build and the "CLI against the bench driver" section (also part of
# single): the CLI's time to 1e-10, checked every iteration with the
# exact count, against the driver's unchecked time for that many iterations.
#
# builds with CUDA into build-gsparse (json-c, cmocka and pkgconf come from .deps/ when
# the machine lacks them), runs the GPU sparse tests, compute-sanitizer on small
# solves, a few CLI runs, then the experiments (bench/experiments/gpu_sparse_experiments.py) and
# their plots. Writes into OUTDIR (few files: the device tool returns at most 8):
#   gpu-sparse-check.log         everything printed
#   gpu-sparse-results.json      single: sections variation..tune  (multi: gpu-sparse-multi.json)
#   gpu-sparse-plots.tar.gz      the PNG plots
# Exit status: non-zero when the build, a test or an experiment's check fails.
set -u -o pipefail
OUT=${1:?usage: scripts/gpu-sparse-check.sh OUTDIR [single|multi|tests] [sections]}
MODE=${2:-single}
SECTIONS=${3:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/gpu-sparse-check.log") 2>&1
cd "$ROOT"
say() { printf '\n== %s (%s s)\n' "$*" "$SECONDS"; }
status=0

say "machine"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader || true
nvidia-smi topo -m 2>/dev/null | head -5 || true
nproc
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvcc --version | tail -1

CMAKE=$(command -v cmake || python3 -c 'import cmake, os; print(os.path.join(cmake.CMAKE_BIN_DIR, "cmake"))')
NINJA=$(command -v ninja || python3 -c 'import ninja, os; print(os.path.join(ninja.BIN_DIR, "ninja"))')
if ! command -v pkg-config >/dev/null || ! pkg-config --exists json-c cmocka 2>/dev/null; then
    DEPS=$ROOT/.deps/root
    if [ ! -d "$DEPS/usr" ]; then
        [ -d "$ROOT/.deps/debs" ] || { echo "no json-c/cmocka/pkg-config and no .deps/debs"; exit 2; }
        for f in "$ROOT"/.deps/debs/*.deb; do dpkg -x "$f" "$DEPS"; done
    fi
    LIBD=$DEPS/usr/lib/x86_64-linux-gnu
    export LD_LIBRARY_PATH=$LIBD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PKG_CONFIG_LIBDIR=$LIBD/pkgconfig:$DEPS/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$DEPS
    export PKG_CONFIG=$(command -v pkg-config || echo "$DEPS/usr/bin/pkgconf")
fi

if [ -n "${HR_BUILD:-}" ]; then
    BUILD=$HR_BUILD # a CUDA build made by scripts/gpu-check.sh: no second build
else
say "build (CUDA) into build-gsparse"
BUILD=$ROOT/build-gsparse
"$CMAKE" -S . -B "$BUILD" -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_BUILD_TYPE=Release \
    -DHETRELAX_ENABLE_CUDA=ON -DHETRELAX_CUDA_ARCHITECTURES=90 ${PKG_CONFIG:+-DPKG_CONFIG_EXECUTABLE=$PKG_CONFIG} \
    >"$OUT/cmake.log" 2>&1 || { cat "$OUT/cmake.log"; exit 1; }
grep "hetrelax:" "$OUT/cmake.log"
rm -f "$OUT/cmake.log"
"$CMAKE" --build "$BUILD" -j "$(nproc)" --target hetrelax-cli test_gpu_sparse gpu_sparse_driver 2>&1 |
    grep -E "error|warning|FAILED"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "build failed"; exit 1; }
fi
CLI=$BUILD/hetrelax
DRIVER=$BUILD/tests/methods/sparse/gpu/gpu_sparse_driver

if [ "$MODE" != cli ]; then
say "tests (test_gpu_sparse, test_gpu_sparse_loop)"
(cd "$BUILD" && ctest -R '^test_gpu_sparse(_loop)?$' --output-on-failure) || { echo "GPU sparse tests failed"; status=1; }
[ "$MODE" = tests ] && exit $status
fi

# The library path (CLI) against the kernels (the bench driver). The
# CLI solves to 1e-10 as a user runs it (checked every iteration, monitor every 10,
# --json for the numbers); the driver then runs exactly that many iterations unchecked
# (tol=0), its "time to 1e-10". time_s of both is the iteration loop (same clock).
# Medians of 5 (3 for the variants). Target: ratio <= 1.5. The variants beside it
# (VARIANTS below), as ratios to the driver: per-iteration checks instead of batched
# ones (periter, HETRELAX_SPARSE_BATCH=0); bodies of 16, 32, 64 iterations throughout
# (HETRELAX_SPARSE_BODY; default 16 up to iteration 256 of a solve, then 64); the body
# replayed from the host (replay, HETRELAX_SPARSE_WHILE=0); checks on the host (host,
# HETRELAX_SPARSE_DEVICE_CHECKS=0); the lean async check reading the matrix once per
# snapshot (m0) or once per 8 (m1; default m1 on rows of >= 16 entries); async's
# bodies all of the full length (fixed, HETRELAX_SPARSE_PREDICT=0; by default a body
# after the first runs as many iterations as its predecessor's residuals predict the
# tolerance needs, plus a margin). Then one
# profiled CLI run and one profiled
# driver run a case (HETRELAX_SPARSE_PROFILE=1: where the loop's time goes).
cli_vs_driver() {
    say "CLI against the bench driver (issue 15 item 1: target CLI <= 1.5x driver)"
    (cd "$BUILD" && ctest -R '^test_gpu_sparse_loop$' --output-on-failure) || { echo "device loop tests failed"; status=1; }
    python3 - "$CLI" "$DRIVER" <<'PY' || status=1
import json, os, statistics, subprocess, sys
cli, driver = sys.argv[1], sys.argv[2]
worst, bad, profiles = 0.0, [], []
# the variants beside the default, 3 runs each: name, environment
VARIANTS = [("periter", {"HETRELAX_SPARSE_BATCH": "0"}), ("b16", {"HETRELAX_SPARSE_BODY": "16"}),
            ("b32", {"HETRELAX_SPARSE_BODY": "32"}), ("b64", {"HETRELAX_SPARSE_BODY": "64"}),
            ("replay", {"HETRELAX_SPARSE_WHILE": "0"}), ("host", {"HETRELAX_SPARSE_DEVICE_CHECKS": "0"}),
            ("m0", {"HETRELAX_SPARSE_MULTI": "0"}), ("m1", {"HETRELAX_SPARSE_MULTI": "1"}),
            ("fixed", {"HETRELAX_SPARSE_PREDICT": "0"})]
print("times in us; the variants' columns are ratios to the driver")
print("%-16s %-7s %6s %-9s %9s %9s %6s" % ("matrix", "method", "iters", "reason", "cli_us", "driver_us", "ratio")
      + "".join(" %7s" % v for v, _ in VARIANTS))
def run_cli(mat, method, extra, env, n):
    recs = []
    for _ in range(n):
        out = subprocess.run([cli, "sparse", "--gen", mat, "--backend", "gpu", "--method", method, "--tol", "1e-10",
                              "--quiet", "--json", "-"] + extra, capture_output=True, text=True,
                             env=dict(os.environ, **env))
        if out.returncode != 0 and not out.stdout.strip():
            return None, out.stderr.strip()
        recs.append(json.loads(out.stdout))
    return recs, out.stderr
def med(recs):
    return statistics.median(r["time_s"] for r in recs) if recs else float("nan")
for mat in ["fv2d:99", "trefethen:20000", "laplace2d:100"]:
    for method, extra, kv in [("async", ["--local-iters", "5", "--block", "256"], "K=5 block=256"),
                              ("jacobi", [], ""), ("cg", [], "")]:
        recs, err = run_cli(mat, method, extra, {}, 5)
        if recs is None:
            print("%-16s %-7s failed: %s" % (mat, method, err)); bad.append(mat + " " + method); continue
        var = {v: run_cli(mat, method, extra, env, 3)[0] for v, env in VARIANTS}
        _, prof = run_cli(mat, method, extra, {"HETRELAX_SPARSE_PROFILE": "1"}, 1)
        iters = recs[0]["iterations"]
        job = "gen=%s method=%s backend=gpu %s tol=0 maxit=%d repeat=5\n" % (mat, method, kv, iters)
        out = subprocess.run([driver], input=job, capture_output=True, text=True,
                             env=dict(os.environ, HETRELAX_SPARSE_PROFILE="1"))
        drv = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
        if out.returncode != 0 or not drv:
            print("%-16s %-7s driver failed: %s" % (mat, method, out.stderr.strip())); bad.append(mat); continue
        t_cli, t_drv = med(recs), statistics.median(d["time_s"] for d in drv)
        ratio = t_cli / t_drv if t_drv > 0 else float("inf")
        worst = max(worst, ratio)
        # async's counts may differ run to run; the others' must not
        same = all(r["iterations"] == iters for v in var.values() for r in (v or []))
        print(("%-16s %-7s %6d %-9s %9.1f %9.1f %6.2f" % (mat, method, iters, recs[0]["reason"][:9], 1e6 * t_cli,
                                                           1e6 * t_drv, ratio))
              + "".join(" %7.2f" % (med(var[v]) / t_drv) for v, _ in VARIANTS)
              + ("" if same else "  (iteration counts differ between runs or paths)"), flush=True)
        if ratio > 1.5: bad.append("%s %s %.2fx" % (mat, method, ratio))
        keep = lambda text: [l for l in text.splitlines() if l.startswith(("hetrelax sparse profile", "  "))]
        dprof = keep(out.stderr)[-3:]
        profiles.append("%s %s\n  CLI:    %s\n  driver: %s" % (mat, method,
                        "\n          ".join(keep(prof)),
                        "\n          ".join(dprof)))
print("worst ratio %.2f; over 1.5: %s" % (worst, ", ".join(bad) if bad else "none"))
print("\nprofiles (HETRELAX_SPARSE_PROFILE=1; the driver's last repeat):")
print("\n".join(profiles))
sys.exit(1 if bad else 0)
PY
}
if [ "$MODE" = cli ]; then cli_vs_driver; say "done: status $status"; exit $status; fi

if [ "$MODE" = single ]; then
    say "compute-sanitizer on small solves"
    for job in "method=jacobi maxit=40" "method=async K=5 block=64 maxit=40" "method=cg maxit=40" \
               "method=async K=3 block=64 comm=amc maxit=40" "method=jacobi fault=0.25@5:recover=5 maxit=40" \
               "method=async K=5 block=64 fault=0.25@5 maxit=40"; do
        printf 'gen=fv2d:20 tol=0 backend=gpu %s\n' "$job" |
            compute-sanitizer --tool memcheck --error-exitcode 3 "$DRIVER" >/dev/null ||
            { echo "memcheck failed: $job"; status=1; }
    done
    # the device loop: checked every iteration, deferred monitors, WHILE graph;
    # batched checks (default) and per-iteration ones (HETRELAX_SPARSE_BATCH=0)
    for batch in 1 0; do
    for job in "method=jacobi" "method=async K=5 block=64" "method=cg" "method=jacobi fault=0.25@5:recover=5"; do
        printf 'gen=fv2d:20 tol=1e-10 maxit=300 monitor=10 deferred=1 backend=gpu %s\n' "$job" |
            HETRELAX_SPARSE_BATCH=$batch compute-sanitizer --tool memcheck --error-exitcode 3 "$DRIVER" >/dev/null ||
            { echo "memcheck failed (device loop, batch=$batch): $job"; status=1; }
    done
    done
    # the body-length policy: short bodies up to iteration 20, then the long WHILE graph
    for job in "method=jacobi" "method=async K=5 block=64" "method=jacobi fault=0.25@15:recover=10"; do
        printf 'gen=fv2d:20 tol=1e-10 maxit=300 monitor=10 deferred=1 backend=gpu %s\n' "$job" |
            HETRELAX_SPARSE_BODY_SWITCH=20 compute-sanitizer --tool memcheck --error-exitcode 3 "$DRIVER" \
            >/dev/null || { echo "memcheck failed (long bodies from 20): $job"; status=1; }
    done
    # racecheck: shared-memory hazards inside a block (x in global memory races by design)
    printf 'gen=trefethen:500 tol=0 backend=gpu method=async K=5 block=256 maxit=10\n' |
        compute-sanitizer --tool racecheck --error-exitcode 3 "$DRIVER" >/dev/null ||
        { echo "racecheck failed"; status=1; }
    for batch in 1 0; do
    for job in "method=async K=5 block=256" "method=jacobi"; do
        printf 'gen=trefethen:500 tol=1e-10 maxit=300 monitor=10 deferred=1 backend=gpu %s\n' "$job" |
            HETRELAX_SPARSE_BATCH=$batch compute-sanitizer --tool racecheck --error-exitcode 3 "$DRIVER" >/dev/null ||
            { echo "racecheck failed (device loop, batch=$batch): $job"; status=1; }
    done
    done
    echo "sanitizers done"

    say "CLI"
    "$CLI" sparse --gen fv2d:99 --backend gpu --method async --local-iters 5 --quiet || status=1
    "$CLI" sparse --gen fv2d:99 --backend gpu --method jacobi --quiet || status=1
    "$CLI" sparse --gen fv2d:99 --backend gpu --method cg --quiet || status=1
    "$CLI" sparse --gen trefethen:2000 --backend gpu --method async --fault 0.25@10:recover=10 --quiet || status=1
    cli_vs_driver
fi

if [ "$MODE" = multi ]; then
    say "compute-sanitizer on two-GPU solves (overlapped AMC: graph, live and cached-remainder paths)"
    for job in "comm=amc check=5 tol=1e-10 maxit=200" "comm=amc check=40 tol=1e-10 maxit=200" "comm=amc tol=0 maxit=45" \
               "comm=dc tol=0 maxit=45" "comm=dk tol=0 maxit=45"; do
        printf 'gen=fv2d:20 backend=gpu method=async K=3 block=64 gpus=2 %s\n' "$job" |
            compute-sanitizer --tool memcheck --error-exitcode 3 "$DRIVER" >/dev/null ||
            { echo "memcheck failed: $job"; status=1; }
    done
    echo "sanitizers done"
fi

say "experiments"
export PYTHONUNBUFFERED=1
if [ "$MODE" = multi ]; then
    RES=$OUT/gpu-sparse-multi.json
    timeout 330 python3 bench/experiments/gpu_sparse_experiments.py --driver "$DRIVER" --out "$RES" --sections "${SECTIONS:-multi,variation-s2}" ||
        { echo "experiments failed or timed out"; status=1; }
else
    RES=$OUT/gpu-sparse-results.json
    timeout 330 python3 bench/experiments/gpu_sparse_experiments.py --driver "$DRIVER" --out "$RES" \
        ${SECTIONS:+--sections $SECTIONS} || { echo "experiments failed or timed out"; status=1; }
fi
if [ -s "$RES" ]; then
    mkdir -p "$OUT/plots"
    python3 bench/plots/gpu_sparse_plots.py "$RES" --outdir "$OUT/plots" && tar -C "$OUT" -czf "$OUT/gpu-sparse-plots.tar.gz" plots
    rm -rf "$OUT/plots"
fi
say "done: status $status"
exit $status
