#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs dependencies, builds in Release with
# -Werror and runs every test, then builds with AddressSanitizer + UndefinedBehaviorSanitizer
# and runs the suite again (tests labelled `slow`, the full real-trace replays, and `packaging`,
# the installed package's consumers, run only in the Release build), then runs the libFuzzer harnesses for 10 s each (docs/fuzzing.md).
# This is the README's test command and what CI runs. Each stage prints its duration, and the
# last line sums them up (docs/packaging.md "CI budget": the whole run stays under 35 minutes
# on 2 cores).
# SKIP_SANITIZERS=1 / SKIP_FUZZ=1 skip those stages; FUZZ_HARNESSES overrides the fuzzed list.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${JOBS:-2}"

T_START=$SECONDS
T_STAGE=$SECONDS
STAGES=()
stage() {  # stage NAME: closes the previous stage (prints its duration) and opens NAME
  local now=$SECONDS
  if [ -n "${STAGE_NAME:-}" ]; then
    local d=$((now - T_STAGE))
    printf '== stage done: %-28s %4d s\n' "$STAGE_NAME" "$d"
    STAGES+=("$(printf '%-28s %5d s' "$STAGE_NAME" "$d")")
  fi
  STAGE_NAME="${1:-}"
  T_STAGE=$now
  [ -z "$STAGE_NAME" ] || echo "== $STAGE_NAME"
}
summary() {
  stage ""
  echo "== stage durations"
  for l in "${STAGES[@]}"; do echo "   $l"; done
  printf '   %-28s %5d s\n' "total" "$((SECONDS - T_START))"
}
trap 'rc=$?; [ $rc -eq 0 ] || { summary; echo "== check.sh failed (exit $rc) in stage: ${STAGE_NAME:-?}"; }' EXIT

stage "install dependencies"
tools/install-deps.sh

stage "Release build (-Werror)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLIBSCHED_WERROR=ON -DLIBSCHED_REQUIRE_TESTS=ON >/dev/null
cmake --build build -j "$JOBS"
stage "Release tests"
(cd build && ctest --output-on-failure -j "$JOBS")

# One clang build serves the sanitizer suite and the fuzzers: every target is compiled with
# AddressSanitizer + UndefinedBehaviorSanitizer (every report fatal) and libFuzzer's coverage
# instrumentation (LIBSCHED_FUZZ; not the test files), at -O1 (the e2e and io test files at -O0:
# tests/CMakeLists.txt), with line tables only (what a sanitizer report's stack needs); the
# suite runs there, then the harnesses link into the same objects (no second build of the
# simulator for tools/fuzz.sh).
if [ "${SKIP_SANITIZERS:-0}" != "1" ] || [ "${SKIP_FUZZ:-0}" != "1" ]; then
  stage "ASan+UBSan build (clang, also the fuzzers')"
  CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only -O1" \
    -DLIBSCHED_SANITIZE=ON -DLIBSCHED_FUZZ=ON -DLIBSCHED_BUILD_BENCH=OFF -DLIBSCHED_WERROR=OFF \
    -DLIBSCHED_REQUIRE_TESTS=ON >/dev/null
  if [ "${SKIP_SANITIZERS:-0}" != "1" ]; then
    cmake --build build-asan -j "$JOBS"
    stage "ASan+UBSan tests (-LE 'slow|packaging')"
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j "$JOBS" -LE 'slow|packaging')
  fi
fi

if [ "${SKIP_FUZZ:-0}" != "1" ]; then
  stage "libFuzzer (10 s per harness)"
  # Every harness; the fixed findings are part of the seed corpus (fuzz/corpus/*/finding-*), so
  # each run replays them first. A fixed seed keeps the 10 s smoke run reproducible (10 s, not 30: CI stays under 35 minutes).
  # shellcheck disable=SC2086
  FUZZ_BUILD_DIR="$PWD/build-asan" FUZZ_SEED="${FUZZ_SEED:-1}" tools/fuzz.sh 10 ${FUZZ_HARNESSES:-}
fi
summary
