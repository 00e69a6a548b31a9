#!/bin/bash
# The one-command GPU check for the accelerator machine:
#
#   scripts/gpu-check.sh OUTDIR [quick|full|tests|bench|build] [bench sections]
#
# (build: only the CUDA build into build-gpu, for commands of one's own after it)
#
# builds with CUDA into build-gpu (bringing json-c, cmocka and pkgconf from .deps/ when
# the machine lacks them: it has no package access), runs `ctest -L gpu` (the GPU tests
# and compute-sanitizer), then the GPU benchmarks, and writes into OUTDIR:
#   gpu-check.log      everything printed
#   ctest-gpu.log      the ctest output
#   gpu-results.json   benchmark records (bench/experiments/gpu_bench.py)
#   gpu-peers.json     CuPy / PyTorch peers (bench/experiments/gpu_peers.py)
#   gpu-tune.txt       the tuning cache the benchmarks used
#   gpu3d-results.json 3-D (512^3) and 2-D (4096, 8192) `tuned` through the library, untuned
#                      and tuned, % of the copy bandwidth of the run (bench/drivers/gpu3d_bench.c;
#                      section 3d), with the 2-D regression check against gpu-results.md
#   gpu3d-peers.json   CuPy slicing / RawKernel / torch.compile on the same 3-D sweep (peers3d)
#   general-gpu.json   the general-problem engine (bench/drivers/general_gpu.c; section general):
#                      its Jacobi sweep's GB/s against cudaMemcpy, multigrid to 1e-8 per problem kind
# GPU_CTEST_ARGS adds ctest options (e.g. "-E sanitizer" to leave compute-sanitizer out);
# GPU3D_BENCH_ARGS adds gpu3d_bench options (e.g. "--cases 3d-tuned-single,3d-tuned-double").
# Exit status: non-zero when the build, a test or a benchmark's verification fails.
set -u -o pipefail
OUT=${1:?usage: scripts/gpu-check.sh OUTDIR [quick|full|tests|bench|build] [sections]}
MODE=${2:-full}
SECTIONS=${3:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/gpu-check.log
exec > >(tee -a "$LOG") 2>&1
cd "$ROOT"
say() { printf '\n== %s\n' "$*"; }
status=0

say "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader || true
nproc
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvcc --version | tail -1

# --- tools and libraries the build needs ------------------------------------------
CMAKE=$(command -v cmake || python3 -c 'import cmake, os; print(os.path.join(cmake.CMAKE_BIN_DIR, "cmake"))' 2>/dev/null)
NINJA=$(command -v ninja || python3 -c 'import ninja, os; print(os.path.join(ninja.BIN_DIR, "ninja"))' 2>/dev/null)
echo "cmake: $CMAKE ($($CMAKE --version | head -1)); ninja: $NINJA"
need_deps=0
if ! command -v pkg-config >/dev/null || ! pkg-config --exists json-c cmocka 2>/dev/null; then need_deps=1; fi
if [ $need_deps = 1 ]; then
    DEPS=$ROOT/.deps/root
    if [ ! -d "$DEPS" ]; then
        [ -d "$ROOT/.deps/debs" ] || { echo "missing json-c/cmocka/pkg-config and no .deps/debs to unpack"; exit 2; }
        for f in "$ROOT"/.deps/debs/*.deb; do dpkg -x "$f" "$DEPS"; done
    fi
    LIBD=$DEPS/usr/lib/x86_64-linux-gnu
    export LD_LIBRARY_PATH=$LIBD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PKG_CONFIG_LIBDIR=$LIBD/pkgconfig:$DEPS/usr/share/pkgconfig
    export PKG_CONFIG_SYSROOT_DIR=$DEPS
    if command -v pkg-config >/dev/null; then PKGC=$(command -v pkg-config); else PKGC=$DEPS/usr/bin/pkgconf; fi
    export PKG_CONFIG=$PKGC
    echo "using carried libraries in $DEPS (pkg-config: $PKGC)"
fi

# --- MPI: the carried OpenMPI (DEVICE.md), used only when a test program runs with it -----
MPI_ARGS="-DHETRELAX_ENABLE_MPI=OFF"
# (Debian names them mpicc.openmpi, mpiexec.openmpi: plain names are update-alternatives links)
if [ -n "${DEPS:-}" ] && [ -x "$DEPS/usr/bin/mpicc.openmpi" ]; then
    for t in mpicc mpiexec mpirun; do [ -e "$DEPS/usr/bin/$t" ] || ln -s "$t.openmpi" "$DEPS/usr/bin/$t"; done
    export OPAL_PREFIX=$DEPS/usr PATH=$DEPS/usr/bin:$PATH OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    printf '#include <mpi.h>\nint main(int c,char**v){MPI_Init(&c,&v);MPI_Finalize();return 0;}\n' >/tmp/hr_mpi_probe.c
    if mpicc -o /tmp/hr_mpi_probe /tmp/hr_mpi_probe.c 2>/dev/null &&
        timeout 30 mpiexec -n 2 --oversubscribe /tmp/hr_mpi_probe 2>/dev/null; then
        MPI_ARGS="-DHETRELAX_ENABLE_MPI=ON -DMPI_C_COMPILER=$DEPS/usr/bin/mpicc"
        echo "carried OpenMPI works: building the MPI parts"
    else
        echo "carried OpenMPI does not run here: building without MPI"
    fi
fi

# --- build -------------------------------------------------------------------------
say "build (CUDA)"
BUILD=$ROOT/build-gpu
# the Python package for the interpreter first on PATH when it has NumPy and its headers (these
# machines' Python with CuPy is not Debian's /usr/bin/python3, CMake's default here)
PY_ARGS=
PYX=$(command -v python3 || true)
if [ -n "$PYX" ] && "$PYX" -c "import numpy, os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h'))" 2>/dev/null; then
    PY_ARGS="-DPython3_EXECUTABLE=$PYX"
fi
"$CMAKE" -S . -B "$BUILD" -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_BUILD_TYPE=Release $MPI_ARGS $PY_ARGS \
    -DHETRELAX_ENABLE_CUDA=ON -DHETRELAX_CUDA_ARCHITECTURES=90 ${PKG_CONFIG:+-DPKG_CONFIG_EXECUTABLE=$PKG_CONFIG} \
    >"$OUT/cmake.log" 2>&1 || { cat "$OUT/cmake.log"; echo "configure failed"; exit 1; }
grep "hetrelax:" "$OUT/cmake.log"
grep -q "cuda=ON" "$OUT/cmake.log" || { echo "CUDA was not enabled"; exit 1; }
# GPU_BUILD_TARGETS: only these targets (with build mode, for a short call), e.g. "hetrelax mpi_solve"
"$CMAKE" --build "$BUILD" -j "$(nproc)" ${GPU_BUILD_TARGETS:+--target $GPU_BUILD_TARGETS} 2>&1 |
    grep -E "error|warning|FAILED" ; [ "${PIPESTATUS[0]}" = 0 ] || { echo "build failed"; exit 1; }
CLI=$BUILD/hetrelax
"$CLI" info --json - --repeats 9 >"$OUT/info.json" 2>/dev/null && python3 -c "
import json; d=json.load(open('$OUT/info.json')); print('gpus', d.get('gpus'), 'host', d.get('host_bandwidth',{}).get('copy_gbps'))"
rm -f "$OUT/info.json"
[ "$MODE" = build ] && exit $status

# --- tests -------------------------------------------------------------------------
if [ "$MODE" != bench ]; then
    say "ctest -L gpu"
    (cd "$BUILD" && ctest -L gpu --output-on-failure -j 1 ${GPU_CTEST_ARGS:-}) >"$OUT/ctest-gpu.log" 2>&1
    rc=$?
    tail -n 60 "$OUT/ctest-gpu.log"
    [ $rc = 0 ] || { echo "GPU tests failed"; status=1; }
    grep -q "Skipped" "$OUT/ctest-gpu.log" && grep -E "Skipped|Not Run" "$OUT/ctest-gpu.log"
fi
[ "$MODE" = tests ] && exit $status

# --- benchmarks ----------------------------------------------------------------------
# sections: those of bench/experiments/gpu_bench.py plus peers (bench/experiments/gpu_peers.py) and fig16
# (bench/experiments/async_fig16.py on the GPU; FIG16_ARGS adds its options). GPU_BENCH_ARGS adds
# options to gpu_bench.py (GPU_BENCH_TUNE: its --tune value); HETRELAX_TUNE_SEED starts the tuning cache from a file.
say "benchmarks"
export HETRELAX_TUNE_FILE=$OUT/gpu-tune.txt
[ -n "${HETRELAX_TUNE_SEED:-}" ] && cp "$HETRELAX_TUNE_SEED" "$HETRELAX_TUNE_FILE"
export PYTHONUNBUFFERED=1
QUICK=""
[ "$MODE" = quick ] && QUICK="--quick"
ALL=tune,ladder,fig11,transfer,tb,async,peers
SECTIONS=${SECTIONS:-$ALL}
BENCH=$(echo "$SECTIONS" | tr ',' '\n' | grep -v -x -e peers -e fig16 -e 3d -e peers3d -e hybrid -e sparsecli \
    -e cpu16 -e mpi16 -e mpitrace -e mgpeers -e hypre16 -e hybrid5d -e hybrid5dmpi -e splittrace -e rowsab -e mgpu -e mpigpu -e multigrid -e mgpucli -e mgpm -e mgpurb -e regress -e general -e mpimg -e gpumg -e gpumgbig -e mgcold | paste -sd, -)
# sections beyond the GPU kernels, for a machine with many cores and a GPU:
#   hybrid     Venkatasubramanian & Vuduc fig. 14 (CPU+GPU row split, measured and modelled; HYBRID_ARGS)
#   mgpu       many GPUs in one process (bench/experiments/mgpu_all.sh; .deps/mgpm for NVIDIA's variants)
#   mpigpu     GPU ranks under MPI: 3-D weak and strong scaling (bench/experiments/mpi_gpu_scaling.py)
#   mgpucli    several GPUs through the command: --gpus N and GPU ranks, 2-D strong, 3-D weak
#              and strong, every transport (bench/experiments/multi_gpu_cli.py; MGPUCLI_ARGS)
#   regress    tuned 2-D/3-D % of copy, multigrid to 1e-8, red-black (bench/experiments/regression_gpu.py)
#   mgcold     multigrid cold command runs (time_s, time_setup_s and its parts) against the library's
#              first and repeated solves (bench/experiments/mg_cold.py; MGCOLD_ARGS)
#   general    the general-problem engine: Jacobi GB/s against cudaMemcpy (2-D 8192^2, 3-D 512^3) and
#              multigrid V-cycles to 1e-8, constant / field coefficients / mixed faces (bench/drivers/general_gpu.c;
#              GENERAL_ARGS, e.g. "--parts jacobi")
#   mgpurb     red-black on 1, 2 and 4 GPUs, rb-tuned against rb-mgpu (bench/experiments/mgpu_redblack.py)
#   mgpm       NVIDIA's multi-GPU Jacobi variants at 20480^2 interior, 300 iterations, on
#              1, 2 and 4 GPUs where present (bench/experiments/mgpm_build.sh; .deps/mgpm)
#   hybrid5d   Sourouri et al. fig. 5d (3-D CPU share, naive / nested; HYBRID5D_ARGS)
#   hybrid5dmpi  the same over MPI ranks, one GPU each, with the per-rank model and split auto
#              (HYBRID5DMPI_RANKS, default 2; HYBRID5DMPI_ARGS, default --quick)
#   sparsecli  the sparse CLI against the bench driver
#   cpu16      cpu-threads 2-D (n = 8192) and 3-D (256^3) against the STREAM copy of the run
#   mpi16      CPU ranks against threads in one process, when MPI was built
#   mpimg      multigrid to 1e-8 through the command on CPU ranks against threads in one process
#              (bench/experiments/mpi_mg.py; MPIMG_N sizes, MPIMG_RANKS, MPIMG_ARGS)
#   gpumg      multigrid to 1e-8 on GPU ranks, one GPU each, weak and strong scaling through the
#              command (bench/experiments/gpu_mg_scaling.py; GPUMG_GPUS, default every count 1, 2,
#              4 up to the GPUs present; GPUMG_WEAK, default 3:511,2:8191; GPUMG_STRONG, default
#              3:1023,2:16383; GPUMG_ARGS)
#   gpumgbig   multigrid to 1e-8 on every GPU of the machine as ranks, one grid too large for one GPU
#              (GPUMGBIG_N, default 2047: 2047^3 fp64, 69 GB a vector), --rhs random:1, made on
#              each rank for its slab (GPUMGBIG_ARGS adds options)
#   mpitrace   the same with per-round schedule traces of every rank (MPITRACE_RUNS)
#   splittrace per-engine traces of small CPU shares, fig. 5d and fig. 14 (the H100's slow mode)
#   rowsab     fig. 5d CPU shares with the rows copied directly against staged, 1 rank (and 2
#              ranks on a machine with two GPUs)
if [[ ",$SECTIONS," == *,hybrid,* ]]; then
    say "hybrid: seed 000 fig. 14 (bench/experiments/hybrid_experiments.py)"
    # its per-size raw records stay behind (the device tool returns few files)
    timeout "${HYBRID_TIMEOUT:-240}" python3 bench/experiments/hybrid_experiments.py fig14 --build "$BUILD" --out /tmp/hr-hybrid \
        ${HYBRID_ARGS:---quick} || status=1
    cp /tmp/hr-hybrid/hybrid-fig14.json /tmp/hr-hybrid/hybrid-fig14.png "$OUT/" 2>/dev/null
fi
if [[ ",$SECTIONS," == *,hybrid5d,* ]]; then
    say "hybrid: seed 003 fig. 5d, 3-D CPU share for naive / nested (bench/experiments/hybrid_experiments.py)"
    timeout "${HYBRID5D_TIMEOUT:-240}" python3 bench/experiments/hybrid_experiments.py fig5d --build "$BUILD" --out /tmp/hr-hybrid5d \
        ${HYBRID5D_ARGS:---quick} || status=1
    cp /tmp/hr-hybrid5d/hybrid-fig5d.json /tmp/hr-hybrid5d/hybrid-fig5d.png "$OUT/" 2>/dev/null
fi
if [[ ",$SECTIONS," == *,hybrid5dmpi,* ]] && [ -x "$BUILD/bench/hybrid_mpi" ]; then
    say "hybrid: seed 003 fig. 5d over ${HYBRID5DMPI_RANKS:-2} MPI ranks (bench/experiments/hybrid_experiments.py fig5d-mpi)"
    { lscpu; nvidia-smi topo -m; } >"$OUT/lscpu.txt" 2>&1
    timeout "${HYBRID5DMPI_TIMEOUT:-480}" python3 bench/experiments/hybrid_experiments.py fig5d-mpi --build "$BUILD" \
        --out /tmp/hr-5dmpi --ranks "${HYBRID5DMPI_RANKS:-2}" ${HYBRID5DMPI_ARGS:---quick} || status=1
    cp /tmp/hr-5dmpi/hybrid-fig5d-mpi.json /tmp/hr-5dmpi/hybrid-fig5d-mpi.png "$OUT/" 2>/dev/null
fi
if [[ ",$SECTIONS," == *,rowsab,* ]] && [ -x "$BUILD/bench/hybrid_mpi" ]; then
    say "hybrid: a CPU share's rows copied directly against staged (bench/experiments/rows_ab.py; ROWSAB_ARGS)"
    ranks=1
    [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ] && ranks=1,2
    rm -rf /tmp/hr-rowsab
    timeout "${ROWSAB_TIMEOUT:-300}" python3 bench/experiments/rows_ab.py --build "$BUILD" --out /tmp/hr-rowsab --ranks "$ranks" \
        ${ROWSAB_ARGS:-} || status=1
    tar czf "$OUT/rowsab.tgz" -C /tmp hr-rowsab
fi
if [[ ",$SECTIONS," == *,splittrace,* ]]; then
    say "hybrid: per-engine traces of small CPU shares (bench/experiments/split_trace.py; SPLITTRACE_ARGS)"
    # many small files: they come back as one archive (the device tool returns few files)
    rm -rf /tmp/hr-splittrace
    timeout "${SPLITTRACE_TIMEOUT:-300}" python3 bench/experiments/split_trace.py run --build "$BUILD" --out /tmp/hr-splittrace \
        ${SPLITTRACE_ARGS:-} | tee /tmp/hr-splittrace.txt | sed -n '/^per split:/,$p' || status=1
    mv /tmp/hr-splittrace.txt /tmp/hr-splittrace/report.txt 2>/dev/null
    tar czf "$OUT/splittrace.tgz" -C /tmp hr-splittrace
fi
if [[ ",$SECTIONS," == *,mgpu,* ]]; then
    say "many GPUs in one process (bench/experiments/mgpu_all.sh): 2-D/3-D scaling, NVIDIA's variants, fig. 15, rb-mgpu"
    timeout "${MGPU_TIMEOUT:-420}" bash bench/experiments/mgpu_all.sh "$OUT/mgpu" "$BUILD" || status=1
fi
if [[ ",$SECTIONS," == *,mgpm,* ]]; then
    say "NVIDIA's multi-GPU Jacobi variants (bench/experiments/mgpm_build.sh)"
    timeout "${MGPM_TIMEOUT:-300}" bash bench/experiments/mgpm_build.sh "$OUT/mgpm.json" --n 20482 --niter 300 \
        --gpus "${MGPM_GPUS:-1,2,4}" || status=1
fi
if [[ ",$SECTIONS," == *,general,* ]]; then
    say "the general-problem engine on the GPU (bench/drivers/general_gpu.c)"
    timeout "${GENERAL_TIMEOUT:-480}" "$BUILD/bench/general_gpu" --json "$OUT/general-gpu.json" $QUICK ${GENERAL_ARGS:-} ||
        status=1
fi
if [[ ",$SECTIONS," == *,regress,* ]]; then
    say "the one-GPU figures a layout change must not move (bench/experiments/regression_gpu.py; REGRESS_ARGS)"
    timeout "${REGRESS_TIMEOUT:-300}" python3 bench/experiments/regression_gpu.py --hetrelax "$CLI" --out "$OUT/regression.json" \
        ${REGRESS_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,mgcold,* ]]; then
    say "multigrid as a user meets it: cold command runs against the library's first and repeated solves (bench/experiments/mg_cold.py; MGCOLD_ARGS)"
    timeout "${MGCOLD_TIMEOUT:-400}" python3 bench/experiments/mg_cold.py --hetrelax "$CLI" --driver "$BUILD/bench/mg_driver" \
        --out "$OUT/mg-cold.json" ${MGCOLD_ARGS:-} || status=1
    # the FFT solver a user would pick instead, in the same call (cupy.fft sine transforms)
    timeout "${MGCOLD_FFT_TIMEOUT:-120}" python3 bench/experiments/mg_peers_gpu.py --out "$OUT/mg-fft.json" \
        --sections fft --fft2d 4095,8191 --fft3d 511 --budget 100 || status=1
fi
if [[ ",$SECTIONS," == *,mgpurb,* ]]; then
    say "red-black on 1, 2 and 4 GPUs (bench/experiments/mgpu_redblack.py; MGPURB_ARGS, default --quick)"
    timeout "${MGPURB_TIMEOUT:-240}" python3 bench/experiments/mgpu_redblack.py --build "$BUILD" --out "$OUT" \
        --gpus "${MGPURB_GPUS:-1,2,4}" ${MGPURB_ARGS:---quick} || status=1
fi
if [[ ",$SECTIONS," == *,mgpucli,* ]]; then
    say "several GPUs through the command (bench/experiments/multi_gpu_cli.py)"
    timeout "${MGPUCLI_TIMEOUT:-420}" python3 bench/experiments/multi_gpu_cli.py --hetrelax "$CLI" --out "$OUT/multi-gpu-cli.json" \
        ${MGPUCLI_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,mpigpu,* ]] && [ -x "$BUILD/tests/parallel/mpi/mpi_solve" ]; then
    say "GPU ranks: 3-D weak (512^3 per GPU) and strong (512x512x1024) scaling (bench/experiments/mpi_gpu_scaling.py)"
    timeout "${MPIGPU_TIMEOUT:-300}" python3 bench/experiments/mpi_gpu_scaling.py --build "$BUILD" $QUICK \
        --out "$OUT/mpi-gpu.json" ${MPIGPU_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,sparsecli,* ]]; then
    HR_BUILD=$BUILD timeout "${SPARSECLI_TIMEOUT:-200}" bash scripts/gpu-sparse-check.sh "$OUT/sparse" cli || status=1
fi
if [[ ",$SECTIONS," == *,cpu16,* ]]; then
    say "CPU threads against the STREAM copy (bench/experiments/cpu2d.py, bench/experiments/cpu3d.py)"
    timeout "${CPU16_TIMEOUT:-150}" python3 bench/experiments/cpu3d.py --bench "$BUILD/bench/cpu_bench" --n 256 --bind core \
        --out "$OUT/cpu3d.json" ${CPU3D_ARGS:-} || status=1
    timeout "${CPU16_TIMEOUT:-150}" python3 bench/experiments/cpu2d.py --bench "$BUILD/bench/cpu_bench" --sizes 8192 \
        --out "$OUT/cpu2d.json" ${CPU2D_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,mpi16,* ]] && [ -x "$BUILD/tests/parallel/mpi/mpi_solve" ]; then
    say "CPU ranks against threads (bench/experiments/mpi_scaling.py)"
    timeout "${MPI16_TIMEOUT:-150}" python3 bench/experiments/mpi_scaling.py --build "$BUILD" --ranks "${MPI16_RANKS:-1,4,16}" \
        --dim 3 --n 256 --kinds slab --threads-ref --out "$OUT/mpi-cpu.json" ${MPI16_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,mpimg,* ]] && [ -x "$BUILD/tests/parallel/mpi/mpi_solve" ]; then
    say "multigrid on CPU ranks against threads (bench/experiments/mpi_mg.py)"
    timeout "${MPIMG_TIMEOUT:-420}" python3 bench/experiments/mpi_mg.py --hetrelax "$CLI" --dim 3 \
        --n "${MPIMG_N:-255,511}" --ranks "${MPIMG_RANKS:-16,4}" --threads "$(nproc)" --repeats 2 \
        --out "$OUT/mpi-mg.json" ${MPIMG_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,gpumg,* ]] && [ -x "$BUILD/tests/parallel/mpi/mpi_solve" ]; then
    say "multigrid on GPU ranks, weak and strong scaling (bench/experiments/gpu_mg_scaling.py)"
    ngpu=$(nvidia-smi -L | grep -c '^GPU')
    counts=$(for c in 1 2 4 8; do [ "$c" -le "$ngpu" ] && echo $c; done | paste -sd, -)
    timeout "${GPUMG_TIMEOUT:-560}" python3 bench/experiments/gpu_mg_scaling.py --hetrelax "$CLI" \
        --gpus "${GPUMG_GPUS:-$counts}" --weak "${GPUMG_WEAK-3:511,2:8191}" --strong "${GPUMG_STRONG-3:1023,2:16383}" \
        --out "$OUT/gpu-mg-scaling.json" ${GPUMG_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,gpumgbig,* ]]; then
    say "multigrid on every GPU as ranks, a grid one GPU cannot hold (GPUMGBIG_N, default 2047^3)"
    ngpu=$(nvidia-smi -L | grep -c '^GPU')
    big=${GPUMGBIG_N:-2047}
    timeout "${GPUMGBIG_TIMEOUT:-400}" mpiexec --oversubscribe --bind-to none -n "$ngpu" "$CLI" poisson3d --n "$big" \
        --method mg --backend gpu --precision double --tol 1e-8 --iters 100 --rhs random:1 \
        --threads $(( $(nproc) / ngpu )) --json "$OUT/gpu-mg-big.json" ${GPUMGBIG_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,mpitrace,* ]] && [ -x "$BUILD/tests/parallel/mpi/mpi_solve" ]; then
    say "CPU ranks against threads, with schedule traces (bench/experiments/mpi_trace.py; overlapped rounds only)"
    # MPITRACE_RUNS: label:mpi_scaling options[:VAR=value ...], separated by ';'
    IFS=';' read -ra runs <<<"${MPITRACE_RUNS:-s512:--n 512;s512-bind:--n 512 --bind}"
    { lscpu; grep -H . /sys/kernel/mm/transparent_hugepage/enabled; } >"$OUT/lscpu.txt" 2>&1
    T=/tmp/hr-mpitrace
    rm -rf $T && mkdir -p $T
    for r in "${runs[@]}"; do
        IFS=':' read -r lab opts envs <<<"$r"
        echo "-- $lab: $opts ${envs:-}"
        env ${envs:-} HETRELAX_DSOLVER_TRACE=$T/trace-$lab timeout "${MPITRACE_TIMEOUT:-150}" python3 bench/experiments/mpi_scaling.py \
            --build "$BUILD" --ranks "${MPI16_RANKS:-16}" --dim 3 --kinds slab --threads-ref \
            --out "$T/mpi-$lab.json" $opts | tail -2 || status=1
        ls $T/trace-$lab.* >/dev/null 2>&1 && python3 bench/experiments/mpi_trace.py $T/trace-$lab --json "$T/summary-$lab.json" | tail -4
    done
    tar czf "$OUT/mpitrace.tgz" -C $T .
fi
if [[ ",$SECTIONS," == *,3d,* ]]; then
    say "3-D and 2-D tuned through the library (bench/drivers/gpu3d_bench.c)"
    "$BUILD/bench/gpu3d_bench" "$OUT/gpu3d-results.json" $QUICK ${GPU3D_BENCH_ARGS:-} || status=1
    # 2-D regression: GB/s of `tuned` in docs/results/gpu-jacobi.md (figure 11, T = 1000)
    python3 - "$OUT/gpu3d-results.json" <<'PY' || status=1
import json, sys
ref = {("single", 4096): (2838, 95.6), ("single", 8192): (2965, 99.8),
       ("double", 4096): (2920, 98.4), ("double", 8192): (2999, 101.0)}
d = json.load(open(sys.argv[1]))
bad = 0
for r in d["records"]:
    key = (r["precision"], r["n"])
    if r["dim"] != 2 or key not in ref or not r["ok"]:
        continue
    best = r.get("tuned", r["untuned"])
    gb, pct = ref[key]
    ok = best["pct_copy"] >= 0.98 * pct
    bad += not ok
    print(f"2-D tuned {key[0]} n={key[1]}: {best['gbps']:.0f} GB/s {best['pct_copy']:.1f}% of copy "
          f"(reference {gb} GB/s {pct}%): {'ok' if ok else 'REGRESSION > 2%'}; untuned "
          f"{r['untuned']['pct_copy']:.1f}% ({r['untuned']['source']})")
sys.exit(1 if bad else 0)
PY
fi
if [[ ",$SECTIONS," == *,peers3d,* ]]; then
    say "3-D peers (bench/experiments/gpu3d_peers.py)"
    python3 bench/experiments/gpu3d_peers.py --results "$OUT/gpu3d-results.json" --out "$OUT/gpu3d-peers.json" $QUICK || status=1
fi
# multigrid: multigrid  hetrelax multigrid on the GPU (bench/experiments/mg_gpu_bench.py)
# and its peers:
#   mgpeers  cupy.fft sine transforms, cupyx CG, hetrelax sparse CG and hetrelax GPU multigrid
#            (bench/experiments/mg_peers_gpu.py; MGPEERS_ARGS)
#   hypre16  hypre PFMG-CG / BoomerAMG-CG (.deps/debs/hypre) against hetrelax CPU multigrid on all
#            host cores (bench/experiments/hypre_device.sh; SIZES2D, SIZES3D, RHS, HYPRE_RANKS, REPEATS)
if [[ ",$SECTIONS," == *,multigrid,* ]]; then
    say "multigrid on the GPU (bench/experiments/mg_gpu_bench.py)"
    timeout "${MULTIGRID_TIMEOUT:-300}" python3 bench/experiments/mg_gpu_bench.py --build "$BUILD" --out "$OUT" $QUICK \
        ${MULTIGRID_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,mgpeers,* ]]; then
    say "multigrid peers on the GPU (bench/experiments/mg_peers_gpu.py)"
    timeout "${MGPEERS_TIMEOUT:-330}" python3 bench/experiments/mg_peers_gpu.py --cli "$CLI" --out "$OUT/mg-peers-gpu.json" \
        --md "$OUT/mg-peers-gpu.md" $QUICK ${MGPEERS_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,hypre16,* ]]; then
    say "hypre against hetrelax multigrid on the host cores (bench/experiments/hypre_device.sh)"
    [ "$MODE" = quick ] && export SIZES2D=${SIZES2D-2047} SIZES3D=${SIZES3D-127}
    HR_BUILD=$BUILD timeout "${HYPRE16_TIMEOUT:-400}" bash bench/experiments/hypre_device.sh "$OUT/mg-hypre-cpu.json" || status=1
fi
if [ -n "$BENCH" ]; then
    python3 bench/experiments/gpu_bench.py --cli "$CLI" --out "$OUT/gpu-results.json" $QUICK --sections "$BENCH" \
        ${GPU_BENCH_TUNE:+--tune "$GPU_BENCH_TUNE"} ${GPU_BENCH_ARGS:-} || status=1
fi
if [[ ",$SECTIONS," == *,peers,* ]]; then
    say "peers"
    python3 bench/experiments/gpu_peers.py --results "$OUT/gpu-results.json" --out "$OUT/gpu-peers.json" $QUICK || status=1
fi
if [[ ",$SECTIONS," == *,fig16,* ]]; then
    # one search per reference (FIG16_REFERENCES), every probe in one process
    # (bench/fig16_server); the most interesting variants first, each point saved as it
    # ends, no new point after FIG16_BUDGET seconds (the rest are listed as not measured)
    # FIG16_TUNE_ALPHAS: tune the variants' tile shapes at n = 4096 for these alphas first
    # (hetrelax tune, into the run's cache; `tuned` too, the yardstick); without it every
    # kernel runs its default shape
    [ -n "${FIG16_TUNE_ALPHAS:-}" ] && { "$CLI" tune --n 4096 --precision single --kernel tuned || status=1; }
    for a in ${FIG16_TUNE_ALPHAS:-}; do
        "$CLI" tune --n 4096 --precision single --kernel "${FIG16_KERNELS:-async3,async2,async0,async1}" \
            --alpha "$a" || status=1
    done
    [ -n "${FIG16_TUNE_ALPHAS:-}" ] && cat "$HETRELAX_TUNE_FILE"
    for ref in ${FIG16_REFERENCES:-sweeps converged}; do
        say "fig16 (bench/experiments/async_fig16.py on the GPU), reference $ref"
        python3 bench/experiments/async_fig16.py "$CLI" --backend gpu --n 4096 --sync-kernel tuned \
            --server "$BUILD/bench/fig16_server" --kernels "${FIG16_KERNELS:-async3,async2,async0,async1}" \
            --reference "$ref" --time-budget "${FIG16_BUDGET:-200}" \
            --json "$OUT/gpu-fig16-$ref.json" --png "$OUT/gpu-fig16-$ref.png" ${FIG16_ARGS:-} || status=1
    done
fi
rm -f "$OUT/cmake.log"
say "done: status $status"
exit $status
