#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, CMake option LIBSCHED_FUZZ, clang) in build-fuzz/ and runs
# each one for SECONDS (default 30), one at a time, on a scratch copy of its seed corpus
# fuzz/corpus/<harness>/ (the repository's corpus is never written). See docs/fuzzing.md.
#
#   tools/fuzz.sh [SECONDS] [HARNESS...]     fuzz; HARNESS in: scenario openb philly swf
#                                            simulate run merge report decide overrides workload
#   tools/fuzz.sh --replay [HARNESS...]      run every saved finding fuzz/findings/<harness>-* once
#                                            and say which ones still fail
#
# Exit status: 0 when every harness ran clean; 1 on any crash, timeout, OOM or sanitizer report
# (the input that caused it is kept under build-fuzz/artifacts/<harness>/ and its path printed).
# Environment: JOBS (build parallelism, default 2), FUZZ_SEED (libFuzzer -seed, default random),
# FUZZ_NICE (nice level of the fuzzer runs, default 0), FUZZ_TIMEOUT (seconds one input may take
# before it counts as a hang, default 10; libFuzzer measures wall time, so raise it when the
# machine is also busy with other work), FUZZ_ARGS (extra libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
JOBS="${JOBS:-2}"
ALL_HARNESSES=(scenario openb philly swf simulate run merge report decide overrides workload)
# FUZZ_BUILD_DIR: an existing clang build configured with LIBSCHED_FUZZ=ON (tools/check.sh's
# sanitizer build, which also holds the test suite) to build the harnesses in, instead of
# configuring build-fuzz/.
BUILD="${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"

replay=0
if [ "${1:-}" = "--replay" ]; then
  replay=1
  shift
fi
SECONDS_EACH=30
if [ $replay -eq 0 ] && [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
  SECONDS_EACH="$1"
  shift
fi
HARNESSES=("$@")
[ ${#HARNESSES[@]} -eq 0 ] && HARNESSES=("${ALL_HARNESSES[@]}")
for h in "${HARNESSES[@]}"; do
  if [[ ! " ${ALL_HARNESSES[*]} " =~ " $h " ]]; then
    echo "fuzz.sh: unknown harness '$h' (expected one of: ${ALL_HARNESSES[*]})" >&2
    exit 2
  fi
done

max_len() {
  case "$1" in
    scenario|run|merge|report|decide) echo 16384 ;;
    simulate|workload|overrides) echo 4096 ;;
    *) echo 8192 ;;
  esac
}

# ---------------------------------------------------------------------------------- build
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (tools/install-deps.sh installs clang and libclang-rt-14-dev)" >&2
  exit 2
fi
targets=()
for h in "${HARNESSES[@]}"; do targets+=("fuzz_$h"); done
echo "fuzz.sh: building ${targets[*]} in ${BUILD#"$ROOT"/}/ (clang, -fsanitize=fuzzer,address,undefined)"
if [ -z "${FUZZ_BUILD_DIR:-}" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
    -DLIBSCHED_FUZZ=ON -DLIBSCHED_BUILD_TESTS=OFF -DLIBSCHED_BUILD_BENCH=OFF -DLIBSCHED_WERROR=OFF >/dev/null
fi
cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}"

# Symbolized stacks in reports; every sanitizer report is fatal (libFuzzer saves the input).
if [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# ---------------------------------------------------------------------------------- replay
if [ $replay -eq 1 ]; then
  status=0
  for h in "${HARNESSES[@]}"; do
    shopt -s nullglob
    files=("$ROOT"/fuzz/findings/"$h"-*)
    shopt -u nullglob
    for f in "${files[@]}"; do
      if "$BUILD/fuzz/fuzz_$h" -timeout=10 -rss_limit_mb=2048 "$f" >"$BUILD/replay.log" 2>&1 </dev/null; then
        echo "fixed     $h  ${f#"$ROOT"/}"
      else
        echo "FAILS     $h  ${f#"$ROOT"/}: $(grep -a -m1 -E 'ERROR|runtime error|INVARIANT|terminate|out-of-memory' "$BUILD/replay.log" || echo '?')"
        status=1
      fi
    done
  done
  exit $status
fi

# ---------------------------------------------------------------------------------- fuzz
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/schedsim-fuzz.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT
status=0
summary=()
for h in "${HARNESSES[@]}"; do
  corpus="$SCRATCH/corpus-$h"
  artifacts="$BUILD/artifacts/$h"
  log="$BUILD/fuzz-$h.log"
  mkdir -p "$corpus" "$artifacts"
  if [ -d "fuzz/corpus/$h" ]; then cp -r "fuzz/corpus/$h/." "$corpus/"; fi
  args=(-max_total_time="$SECONDS_EACH" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -max_len="$(max_len "$h")"
        -print_final_stats=1 -artifact_prefix="$artifacts/")
  dict="$h"
  [ "$h" = run ] && dict=scenario
  [ -f "fuzz/dict/$dict.dict" ] && args+=(-dict="fuzz/dict/$dict.dict")
  # Entropic scheduling costs half of the time of a simulate run (many features per input).
  [ "$h" = simulate ] && args+=(-entropic=0)
  [ -n "${FUZZ_SEED:-}" ] && args+=(-seed="$FUZZ_SEED")
  # shellcheck disable=SC2206
  [ -n "${FUZZ_ARGS:-}" ] && args+=(${FUZZ_ARGS})
  echo "== fuzz_$h: ${SECONDS_EACH} s (log: ${log#"$ROOT"/})"
  # Findings only: libFuzzer also saves inputs slower than -report_slow_units as slow-unit-*,
  # which are not failures (a hang is a timeout-* once it passes -timeout).
  count_findings() { find "$artifacts" -maxdepth 1 \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l; }
  before=$(count_findings)
  rc=0
  nice -n "${FUZZ_NICE:-0}" "$BUILD/fuzz/fuzz_$h" "${args[@]}" "$corpus" >"$log" 2>&1 || rc=$?
  after=$(count_findings)
  execs=$(grep -a -m1 -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  [ -z "$execs" ] || [ "$execs" = 0 ] && execs=$(grep -a -o -E '^#[0-9]+' "$log" | tail -1 | tr -d '#' || echo 0)
  rate=$(grep -a -m1 -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  if [ $rc -ne 0 ] || [ "$after" -ne "$before" ]; then
    status=1
    crash=$(grep -a -m1 -o -E "(Test unit written to|artifact_prefix.*; Test unit written to) [^ ]*" "$log" | awk '{print $NF}' || true)
    [ -z "$crash" ] && crash=$(ls -t "$artifacts" | head -1 | sed "s|^|$artifacts/|")
    echo "FAIL fuzz_$h (exit $rc) after $execs executions: $(grep -a -m1 -E '==ERROR|ERROR: libFuzzer|runtime error|INVARIANT|terminate called|out-of-memory|deadly signal' "$log" || echo 'see log')"
    grep -a -E '^ *#[0-9]+ .*/(sim|libsched|fuzz)/' "$log" | grep -v build-fuzz | head -4 | sed -E 's/^ *(#[0-9]+) 0x[0-9a-f]+ in /  \1 /' | cut -c1-200 || true
    echo "  input: $crash"
    echo "  reproduce: $BUILD/fuzz/fuzz_$h $crash"
    summary+=("$(printf '%-9s FAIL  %10s execs  %6s exec/s' "$h" "$execs" "$rate")")
  else
    summary+=("$(printf '%-9s ok    %10s execs  %6s exec/s' "$h" "$execs" "$rate")")
  fi
done
echo "== fuzz summary (${SECONDS_EACH} s each)"
printf '  %s\n' "${summary[@]}"
exit $status
