#!/usr/bin/env bash
# The FGD paper's whole fill suite: 17 openb pod lists x 6 policies x 10 seeds (42-51) = 1,020
# runs with the reference semantics (docs/fill.md), two pod lists at a time. Writes
#   bench/results/fill-suite.csv   variant,policy,runs,alloc_window_mean,alloc_window_std,frag_window_mean,seconds
#   bench/results/fill-suite.md    the GPU allocation at 130 % arrived, one row per pod list
# Usage: bench/fill-suite.sh [SCHEDSIM_BINARY]   (default build/sim/schedsim)
# Needs the openb trace under $SCHEDSIM_DATA (default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-build/sim/schedsim}"
export SCHEDSIM_DATA="${SCHEDSIM_DATA:-$(pwd)/../shared/data}"
[ -x "$BIN" ] || { echo "fill-suite: $BIN: not an executable (build schedsim first)" >&2; exit 2; }
[ -f "$SCHEDSIM_DATA/openb/openb_pod_list_default.csv" ] || {
  echo "fill-suite: no openb trace under $SCHEDSIM_DATA (set SCHEDSIM_DATA)" >&2; exit 2; }
VARIANTS="default cpu050 cpu100 cpu200 cpu250 gpushare40 gpushare60 gpushare80 gpushare100
          gpuspec10 gpuspec20 gpuspec25 gpuspec33 multigpu20 multigpu30 multigpu40 multigpu50"
POLICIES=random,dot-product,gpu-clustering,gpu-packing,best-fit,fgd
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Wall time and CPU time (user + sys of all runs): on a busy machine the wall time says little,
# the CPU time divided by the 2 processes is what a quiet 2-core machine takes.
TIMEFORMAT='%R %U %S'
{ time {
printf '%s\n' $VARIANTS | xargs -P 2 -I{} sh -c \
  '"$0" fill scenarios/openb-fill.json --trace openb/openb_pod_list_{}.csv --policies "$1" --seeds 10 --seed 42 --out "$2/{}" >/dev/null' \
  "$BIN" "$POLICIES" "$WORK"
} ; } 2> "$WORK/time"
read -r wall user sys < <(tail -n 1 "$WORK/time")
mkdir -p bench/results
CSV=bench/results/fill-suite.csv
MD=bench/results/fill-suite.md
echo "variant,policy,runs,alloc_window_mean,alloc_window_std,frag_window_mean" > "$CSV"
for v in $VARIANTS; do
  # fill_summary.csv: policy,runs,alloc_at_target_mean,alloc_at_target_std,frag_at_target_mean,alloc_window_mean,alloc_window_std,frag_window_mean
  tail -n +2 "$WORK/$v/fill_summary.csv" | awk -F, -v v="$v" '{ printf "%s,%s,%s,%s,%s,%s\n", v, $1, $2, $6, $7, $8 }' >> "$CSV"
done
{
  echo "GPU allocation (%) at 130 % arrived, mean over seeds 42-51 (fill, reference semantics)."
  echo "1,020 runs in $(printf '%.0f' "$wall") s wall on 2 processes, $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f", u + s }') s CPU (a quiet 2-core machine: about $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f", (u + s) / 2 }') s)."
  echo
  echo "| pod list | random | dot-product | gpu-clustering | gpu-packing | best-fit | fgd |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for v in $VARIANTS; do
    awk -F, -v v="$v" '$1 == v { a[$2] = $4 } END {
      printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", v, a["random"], a["dot-product"], a["gpu-clustering"],
             a["gpu-packing"], a["best-fit"], a["fgd"] }' "$CSV"
  done
} > "$MD"
cat "$MD"
