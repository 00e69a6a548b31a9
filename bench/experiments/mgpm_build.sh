#!/bin/bash
# NVIDIA's multi-gpu-programming-models Jacobi, built and run beside ours (2-D
# strong scaling): multi_threaded_p2p_opt, mpi_overlap, nccl_overlap.
#
#   bench/experiments/mgpm_build.sh OUT.json [--n 20480] [--niter 1000] [--gpus 1,2] [--build-only] [--arch 90]
#
# Their sources are NOT in this repository: fetch github:NVIDIA/multi-gpu-programming-models
# on the development machine and copy the three folders (and LICENSE.md) into .deps/mgpm/
# (gitignored), then carry .deps with the run. Built here into $MGPM_BUILD (default
# /tmp/mgpm-build) with nvcc: their Makefiles' flags for sm_ARCH, except -std=c++17 for
# -std=c++14 (CUDA 13's CUB refuses C++14).
#   - multi_threaded_p2p_opt: one process, OpenMP threads, peer copies (nvcc + -fopenmp).
#   - mpi_overlap: MPI, device pointers in MPI_Sendrecv: needs a CUDA-aware MPI. The carried
#     Debian OpenMPI (.deps/debs, unpacked into .deps/root as scripts/gpu-check.sh does) is
#     built without CUDA; their own compile-time check then refuses it and it is skipped with
#     that reason (no run that would crash on device pointers).
#   - nccl_overlap: NCCL for the halos, MPI only to start: needs nccl.h and libnccl (looked
#     for in $NCCL_HOME, the CUDA toolkit, then Python's nvidia.nccl wheel) and mpicxx.
# Each runs at N x N (their nx, ny include the boundary: N - 2 interior points a side),
# fp32, NITER iterations with the L2 norm every iteration (their nccheck = 1; p2p_opt
# supports nothing else), on each GPU count; their CSV line gives the runtime and their
# own 1-GPU reference runtime. OUT.json: per variant and GPU count the seconds per
# iteration, or why it was skipped. Exit status 0 unless a run that was built failed.
set -u -o pipefail
OUT=${1:?usage: bench/experiments/mgpm_build.sh OUT.json [--n N] [--niter K] [--gpus 1,2] [--build-only] [--arch 90]}
shift
N=20480
NITER=1000
GPUS=1,2
ARCH=90
BUILD_ONLY=0
while [ $# -gt 0 ]; do
    case $1 in
        --n) N=$2; shift 2 ;;
        --niter) NITER=$2; shift 2 ;;
        --gpus) GPUS=$2; shift 2 ;;
        --arch) ARCH=$2; shift 2 ;;
        --build-only) BUILD_ONLY=1; shift ;;
        *) echo "mgpm_build.sh: $1: unknown option"; exit 2 ;;
    esac
done
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/.deps/mgpm
B=${MGPM_BUILD:-/tmp/mgpm-build}
mkdir -p "$B"
LOG=$B/log.txt
: >"$LOG"
declare -A NOTE
note() { NOTE[$1]=$2; echo "mgpm: $1: $2"; }
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
GEN="-gencode arch=compute_$ARCH,code=sm_$ARCH"
export LD_LIBRARY_PATH=$CUDA_HOME/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} # their -lcudart

# --- MPI: the system's, else the carried Debian OpenMPI (DEVICE.md) ------------------
if ! command -v mpicxx >/dev/null; then
    DEPS=$ROOT/.deps/root
    if [ ! -x "$DEPS/usr/bin/mpicxx.openmpi" ] && [ -d "$ROOT/.deps/debs" ]; then
        mkdir -p "$DEPS"
        for f in "$ROOT"/.deps/debs/*.deb; do dpkg -x "$f" "$DEPS"; done
    fi
    if [ -x "$DEPS/usr/bin/mpicxx.openmpi" ]; then
        for t in mpicc mpicxx mpiexec mpirun ompi_info; do
            [ -e "$DEPS/usr/bin/$t" ] || ln -s "$t.openmpi" "$DEPS/usr/bin/$t" 2>/dev/null
        done
        export OPAL_PREFIX=$DEPS/usr PATH=$DEPS/usr/bin:$PATH
        export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
fi
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
HAVE_MPI=0
command -v mpicxx >/dev/null && command -v mpirun >/dev/null && HAVE_MPI=1

# --- NCCL -----------------------------------------------------------------------------
NCCL=""
for d in ${NCCL_HOME:-} "$CUDA_HOME" /usr; do
    [ -n "$d" ] && [ -f "$d/include/nccl.h" ] && { ls "$d"/lib*/libnccl.so* >/dev/null 2>&1 || ls "$d"/lib/x86_64-linux-gnu/libnccl.so* >/dev/null 2>&1; } && { NCCL=$d; break; }
done
if [ -z "$NCCL" ]; then
    d=$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)
    [ -n "$d" ] && [ -f "$d/include/nccl.h" ] && NCCL=$d
fi
NCCL_LIB=""
if [ -n "$NCCL" ]; then
    for l in "$NCCL/lib64" "$NCCL/lib" "$NCCL/lib/x86_64-linux-gnu"; do ls "$l"/libnccl.so* >/dev/null 2>&1 && { NCCL_LIB=$l; break; }; done
    # a wheel ships libnccl.so.2 only: give the linker its plain name
    if [ -n "$NCCL_LIB" ] && [ ! -e "$NCCL_LIB/libnccl.so" ]; then
        mkdir -p "$B/nccl-lib" && ln -sf "$NCCL_LIB/libnccl.so.2" "$B/nccl-lib/libnccl.so" && NCCL_LINK="-L$B/nccl-lib"
    fi
    [ -n "$NCCL_LIB" ] && export LD_LIBRARY_PATH=$NCCL_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "mgpm: NCCL from $NCCL (libraries in $NCCL_LIB)"
fi

# --- build (in parallel) -----------------------------------------------------------------
[ -d "$SRC/multi_threaded_p2p_opt" ] || { echo "mgpm: no $SRC (fetch NVIDIA/multi-gpu-programming-models and copy its folders there)"; }
# (skipped when the executable is newer than its sources: a second call only runs)
fresh() { [ -x "$1" ] && [ "$1" -nt "$2" ]; }
build_p2p() {
    fresh "$B/p2p_opt" "$SRC/multi_threaded_p2p_opt/jacobi.cu" && return 0
    nvcc -DHAVE_CUB -Xcompiler -fopenmp -lineinfo -DUSE_NVTX -ldl $GEN -std=c++17 \
        "$SRC/multi_threaded_p2p_opt/jacobi.cu" -o "$B/p2p_opt" >"$B/p2p_opt.log" 2>&1
}
build_mpi() { # their Makefile's flags; their check refuses an MPI without CUDA support (first, fast)
    fresh "$B/mpi_overlap" "$SRC/mpi_overlap/jacobi.cpp" && return 0
    mpicxx -DUSE_NVTX -I"$CUDA_HOME/include" -std=c++17 -c "$SRC/mpi_overlap/jacobi.cpp" -o "$B/mpi_main.o" \
        >"$B/mpi_overlap.log" 2>&1 &&
        nvcc -DHAVE_CUB -lineinfo $GEN -std=c++17 -c "$SRC/mpi_overlap/jacobi_kernels.cu" -o "$B/mpi_kernels.o" \
            >>"$B/mpi_overlap.log" 2>&1 &&
        mpicxx "$B/mpi_main.o" "$B/mpi_kernels.o" -L"$CUDA_HOME/lib64" -lcudart -ldl -o "$B/mpi_overlap" \
            >>"$B/mpi_overlap.log" 2>&1
}
build_nccl() {
    fresh "$B/nccl_overlap" "$SRC/nccl_overlap/jacobi.cpp" && return 0
    nvcc -DHAVE_CUB -lineinfo $GEN -std=c++17 -c "$SRC/nccl_overlap/jacobi_kernels.cu" -o "$B/nccl_kernels.o" \
        >"$B/nccl_overlap.log" 2>&1 &&
        mpicxx -DUSE_NVTX -I"$CUDA_HOME/include" -I"$NCCL/include" -std=c++17 "$SRC/nccl_overlap/jacobi.cpp" \
            "$B/nccl_kernels.o" -L"$CUDA_HOME/lib64" ${NCCL_LINK:-} -L"$NCCL_LIB" -lcudart -ldl -lnccl \
            -o "$B/nccl_overlap" >>"$B/nccl_overlap.log" 2>&1
}
declare -A PID
[ -d "$SRC/multi_threaded_p2p_opt" ] && { build_p2p & PID[multi_threaded_p2p_opt]=$!; }
if [ -d "$SRC/mpi_overlap" ] && [ $HAVE_MPI = 1 ]; then build_mpi & PID[mpi_overlap]=$!; fi
if [ -d "$SRC/nccl_overlap" ] && [ $HAVE_MPI = 1 ] && [ -n "$NCCL_LIB" ]; then build_nccl & PID[nccl_overlap]=$!; fi
[ $HAVE_MPI = 1 ] || { note mpi_overlap "skipped: no MPI (mpicxx, mpirun)"; note nccl_overlap "skipped: no MPI (it starts through MPI)"; }
[ $HAVE_MPI = 1 ] && [ -z "$NCCL_LIB" ] && note nccl_overlap "skipped: no NCCL (nccl.h and libnccl not in NCCL_HOME, the CUDA toolkit or Python's nvidia.nccl)"
declare -A EXE=([multi_threaded_p2p_opt]=$B/p2p_opt [mpi_overlap]=$B/mpi_overlap [nccl_overlap]=$B/nccl_overlap)
for v in "${!PID[@]}"; do
    if wait "${PID[$v]}"; then
        echo "mgpm: built $v"
    else
        log=$B/${v#multi_threaded_}.log
        if grep -q "CUDA-aware support" "$log" 2>/dev/null; then
            note "$v" "skipped: the MPI is not CUDA-aware (their compile-time check; opal_built_with_cuda_support is $(ompi_info --parsable --all 2>/dev/null | grep -m1 opal_built_with_cuda_support:value | cut -d: -f7))"
        else
            note "$v" "build failed: $(grep -m1 -i error "$log" | cut -c1-160)"
        fi
        EXE[$v]=""
    fi
done
if [ $BUILD_ONLY = 1 ]; then
    for v in multi_threaded_p2p_opt mpi_overlap nccl_overlap; do [ -n "${EXE[$v]}" ] && [ -x "${EXE[$v]}" ] && echo "mgpm: $v ready: ${EXE[$v]}"; done
    exit 0
fi

# --- run ------------------------------------------------------------------------------
status=0
RES=$B/results.csv
: >"$RES"
for g in ${GPUS//,/ }; do
    devs=$(seq -s, 0 $((g - 1)))
    for v in multi_threaded_p2p_opt mpi_overlap nccl_overlap; do
        exe=${EXE[$v]:-}
        [ -n "$exe" ] && [ -x "$exe" ] || continue
        if [ $v = multi_threaded_p2p_opt ]; then
            cmd=(env CUDA_VISIBLE_DEVICES=$devs OMP_PROC_BIND=TRUE "$exe" -csv -nx "$N" -ny "$N" -niter "$NITER")
        else
            cmd=(env CUDA_VISIBLE_DEVICES=$devs mpirun -np "$g" --oversubscribe --bind-to none "$exe" -csv -nx "$N" -ny "$N" -niter "$NITER")
        fi
        echo "+ ${cmd[*]}" | tee -a "$LOG"
        if line=$(timeout 300 "${cmd[@]}" 2>>"$LOG" | tee -a "$LOG" | grep "^$v,"); then
            echo "$line" | tee -a "$RES"
        else
            note "$v-$g" "run failed (see $LOG): $(tail -n 2 "$LOG" | tr '\n' ' ' | cut -c1-200)"
            status=1
        fi
    done
done
NOTES=$(for k in "${!NOTE[@]}"; do printf '%s\t%s\n' "$k" "${NOTE[$k]}"; done)
NOTES="$NOTES" python3 - "$RES" "$OUT" "$N" "$NITER" "$(git -C "$ROOT" log -1 --format=%h 2>/dev/null)" \
    "$(cat "$SRC/COMMIT" 2>/dev/null)" <<'PY'
import json, os, sys
res, out, n, niter, ours, theirs = sys.argv[1:7]
rows = []
for line in open(res):
    f = [x.strip() for x in line.split(",")]
    if len(f) < 9:
        continue
    rows.append({"variant": f[0], "nx": int(f[1]), "ny": int(f[2]), "niter": int(f[3]), "nccheck": int(f[4]),
                 "gpus": int(f[5]), "p2p": int(f[6]), "runtime_s": float(f[7]), "runtime_1gpu_s": float(f[8]),
                 "sweep_s": float(f[7]) / int(f[3]), "their_1gpu_sweep_s": float(f[8]) / int(f[3])})
notes = dict(l.split("\t", 1) for l in os.environ.get("NOTES", "").splitlines() if "\t" in l)
doc = {"source": "github.com/NVIDIA/multi-gpu-programming-models", "commit": theirs, "n": int(n), "niter": int(niter),
       "precision": "single", "norm": "L2 norm every iteration (nccheck 1)",
       "grid": "their nx = ny = n include the boundary", "records": rows, "notes": notes}
json.dump(doc, open(out, "w"), indent=1)
print("mgpm: wrote", out, "with", len(rows), "runs")
PY
exit $status
