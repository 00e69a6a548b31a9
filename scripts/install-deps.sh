#!/usr/bin/env bash
# Installs the Debian packages hetrelax needs to build and test, if any are missing.
# Safe to run repeatedly; does nothing when everything is present.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config git
      libjson-c-dev libhwloc-dev libcmocka-dev libpng-dev
      clang libclang-rt-14-dev python3 python3-numpy python3-dev python3-pytest python3-scipy
      openmpi-bin libopenmpi-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "hetrelax: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "hetrelax: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
