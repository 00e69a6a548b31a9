#!/bin/bash
# Fills the ignored .deps/ that runs on the GPU machines carry (they have no package access):
#
#   scripts/device-deps.sh [MGPM_GIT_DIR]
#
#   .deps/debs/   the Debian packages the CUDA build and the MPI runs need there (json-c,
#                 cmocka, pkgconf, libpng, OpenMPI), fetched with apt-get download;
#                 scripts/gpu-check.sh unpacks them with dpkg -x;
#   .deps/mgpm/   NVIDIA's multi-gpu-programming-models Jacobi variants that
#                 bench/experiments/mgpm_build.sh builds there, copied from a git clone of
#                 github.com/NVIDIA/multi-gpu-programming-models (its path as the argument;
#                 a bare repository works). They are measured against, never committed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEBS=(libjson-c5 libjson-c-dev libcmocka0 libcmocka-dev pkgconf pkgconf-bin libpkgconf3
      libpng16-16 libpng-dev zlib1g-dev
      openmpi-bin libopenmpi3 openmpi-common libopenmpi-dev libevent-core-2.1-7
      libevent-pthreads-2.1-7 libhwloc15 libpmix2 libmunge2)
mkdir -p "$ROOT/.deps/debs"
(cd "$ROOT/.deps/debs" && apt-get download "${DEBS[@]}" >/dev/null)
echo "device-deps: $(ls "$ROOT/.deps/debs" | wc -l) packages in .deps/debs"
if [ $# -ge 1 ]; then
    GIT=$1
    [ -d "$GIT/.git" ] && GIT=$GIT/.git
    rm -rf "$ROOT/.deps/mgpm"
    mkdir -p "$ROOT/.deps/mgpm"
    git --git-dir="$GIT" archive HEAD LICENSE.md multi_threaded_p2p_opt mpi_overlap nccl_overlap |
        tar -x -C "$ROOT/.deps/mgpm"
    echo "device-deps: NVIDIA's variants in .deps/mgpm ($(git --git-dir="$GIT" rev-parse --short HEAD))"
fi
