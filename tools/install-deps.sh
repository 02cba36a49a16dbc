#!/usr/bin/env bash
# Installs the Debian 12 packages libsched / schedsim need, from Debian's own archive.
#
#   tools/install-deps.sh --run   only what building and running `schedsim` needs (the README's
#                                 run command: compiler, CMake, Boost, fmt, CLI11, nlohmann/json,
#                                 Eigen, zlib, yaml-cpp, tcmalloc); about a minute on a fresh machine
#   tools/install-deps.sh         everything: also the test suite (Catch2, pkg-config), the
#                                 fuzzers (clang), the Python module and its tests (pybind11,
#                                 pandas, pytest), the report's render test and PDF export
#                                 (Chromium, poppler-utils; node runs its SVG export), the Slurm
#                                 integration test (slurm-wlm, munge), ccache, and the Vega
#                                 runtimes of `schedsim report` from the npm registry (npm ci in
#                                 tools/report, pinned by tools/report/package-lock.json;
#                                 node_modules is never committed)
#
# Idempotent: when everything is already installed it only checks and returns (well under 1 s).
# Run as root, or with sudo available.
set -euo pipefail

RUN_ONLY=0
case "${1:-}" in
  --run) RUN_ONLY=1 ;;
  "") ;;
  *) echo "usage: tools/install-deps.sh [--run]" >&2; exit 2 ;;
esac

# What `cmake --build build --target schedsim` and `schedsim run` need.
PACKAGES=(
  cmake g++ make
  # Boost headers only (Boost.Graph's adjacency_list and BFS are header-only: placement/topology.hpp);
  # zlib inflates gzip traces
  libboost-dev zlib1g-dev
  libeigen3-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  # yaml-cpp reads Kubernetes manifests (`schedsim import k8s`); linked by schedsim
  libyaml-cpp-dev
  # tcmalloc (gperftools' tcmalloc_minimal): the allocator schedsim and the benchmarks link
  # (CMake option LIBSCHED_TCMALLOC; docs/benchmarks.md)
  libgoogle-perftools-dev
)
if [ "$RUN_ONLY" = 0 ]; then
  PACKAGES+=(
    # the Catch2 test suite and the installed-package tests (pkg-config)
    pkg-config catch2
    # libFuzzer harnesses (tools/fuzz.sh) and the sanitizer build: clang, its fuzzer/sanitizer
    # runtimes, llvm-symbolizer
    clang libclang-rt-14-dev llvm-14
    # Python bindings (python/) and their pytest suite
    pybind11-dev python3-dev python3-pandas python3-numpy python3-pytest
    # pip: the python_install and python_wheel tests (pip show, pip install of the wheel)
    python3-pip
    # schedsim report: its render tests draw the page in headless Chromium, which also prints
    # `report --format pdf`; poppler-utils (pdfinfo, pdftoppm) reads the PDF back in the tests
    chromium poppler-utils
    # Sharded sweeps (schedsim sweep --shard, --emit slurm): the single-node Slurm integration
    # test starts slurmctld + slurmd + munged in a temporary folder; GNU parallel is the README's
    # one-machine example
    slurm-wlm munge parallel
    # faster rebuilds (optional; CMAKE_CXX_COMPILER_LAUNCHER=ccache)
    ccache
  )
  # node and npm (npm ci of the report runtimes; node draws `report --format svg`), from Debian
  # unless a node is already installed
  if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# The Vega runtimes that `schedsim report` inlines (tools/report/package-lock.json).
report_runtimes() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/report" && pwd)"
  if [ -f "$dir/node_modules/vega/build/vega.min.js" ] && [ -f "$dir/node_modules/vega-lite/build/vega-lite.min.js" ] &&
     [ -f "$dir/node_modules/vega-embed/build/vega-embed.min.js" ] &&
     [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
    return 0
  fi
  echo "install-deps: npm ci in $dir (vega, vega-lite, vega-embed)" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
}

if [ ${#missing[@]} -eq 0 ]; then
  [ "$RUN_ONLY" = 1 ] || report_runtimes
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
[ "$RUN_ONLY" = 1 ] || report_runtimes
