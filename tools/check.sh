#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs dependencies, builds in Release with
# -Werror and runs every test, then builds with AddressSanitizer + UndefinedBehaviorSanitizer
# and runs the suite again (tests labelled `slow`, the full real-trace replays, run only in
# the Release build), then runs the libFuzzer harnesses for 30 s each (docs/fuzzing.md).
# This is the README's test command and what CI runs.
# SKIP_SANITIZERS=1 / SKIP_FUZZ=1 skip those stages; FUZZ_HARNESSES overrides the fuzzed list.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${JOBS:-2}"

tools/install-deps.sh

echo "== Release build (-Wall -Wextra -Wpedantic -Werror)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLIBSCHED_WERROR=ON >/dev/null
cmake --build build -j "$JOBS"
(cd build && ctest --output-on-failure -j "$JOBS")

if [ "${SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer build"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLIBSCHED_SANITIZE=ON -DLIBSCHED_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j "$JOBS"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j "$JOBS" -LE slow)
fi

if [ "${SKIP_FUZZ:-0}" != "1" ]; then
  echo "== libFuzzer (30 s per harness)"
  # Every harness; the fixed findings are part of the seed corpus (fuzz/corpus/*/finding-*), so
  # each run replays them first. A fixed seed keeps the 30 s smoke run reproducible.
  # shellcheck disable=SC2086
  FUZZ_SEED="${FUZZ_SEED:-1}" tools/fuzz.sh 30 ${FUZZ_HARNESSES:-}
fi
