#!/usr/bin/env bash
# Installs every build and test dependency of libsched / schedsim from Debian 12 packages.
# Idempotent: when every package is already installed it only checks and returns (well under 1 s).
# Usage: tools/install-deps.sh        (as root, or with sudo available)
set -euo pipefail

PACKAGES=(
  cmake g++ make pkg-config
  libboost-dev libboost-graph-dev libboost-iostreams-dev zlib1g-dev
  libeigen3-dev libfmt-dev libcli11-dev nlohmann-json3-dev catch2
  # libFuzzer harnesses (tools/fuzz.sh): clang, its fuzzer/sanitizer runtimes, llvm-symbolizer
  clang libclang-rt-14-dev llvm-14
  # Python bindings (python/) and their pytest suite
  pybind11-dev python3-dev python3-pandas python3-numpy python3-pytest
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
