#!/usr/bin/env bash
# The layering rule of sim/ (docs/architecture.md "Layers"), checked by tools/check_layers.py:
# 1. the source tree passes;
# 2. a copy of it with one planted upward include (sim/engine/ including a sim/cli/ header)
#    fails, naming the file and the include; so do a 1000-line source file, a source file
#    planted directly in sim/ and a test file without its namespace SCHEDSIM_UNITY_ID.
# Usage: layers_test.sh SOURCE_DIR
set -euo pipefail
src="${1:?usage: layers_test.sh SOURCE_DIR}"
check="$src/tools/check_layers.py"
python3 "$check" "$src" || { echo "layers test: FAILED: the source tree breaks the layering (above)"; exit 1; }

tmp="$(mktemp -d /tmp/schedsim-layers.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/sim" "$src/libsched" "$tmp/"
victim="$(ls "$tmp"/sim/engine/*.cpp | head -1)"
cli_header="$(cd "$tmp" && ls sim/cli/*.hpp | head -1)"
printf '#include "%s"\n' "$cli_header" >> "$victim"
if out="$(python3 "$check" "$tmp" 2>/dev/null)"; then
  echo "layers test: FAILED: a planted upward include in ${victim#"$tmp"/} was not reported"
  exit 1
fi
grep -q "${victim#"$tmp"/}:.*includes \"$cli_header\"" <<<"$out" || { echo "layers test: FAILED: unexpected report: $out"; exit 1; }
sed -i '$d' "$victim"
python3 "$check" "$tmp" >/dev/null || { echo "layers test: FAILED: the copy without the plant fails"; exit 1; }
seq 1000 | sed 's|^|// line |' > "$tmp/sim/engine/planted_long.cpp"
if python3 "$check" "$tmp" >/dev/null 2>&1; then
  echo "layers test: FAILED: a source file of 1000 lines was not reported"
  exit 1
fi
rm "$tmp/sim/engine/planted_long.cpp"
echo '// planted' > "$tmp/sim/planted.cpp"
if python3 "$check" "$tmp" >/dev/null 2>&1; then
  echo "layers test: FAILED: a file directly in sim/ was not reported"
  exit 1
fi
rm "$tmp/sim/planted.cpp"
mkdir -p "$tmp/tests/sim"
printf '#include <catch2/catch.hpp>\nnamespace {\nint helper() { return 1; }\n}\nTEST_CASE("x") { REQUIRE(helper() == 1); }\n' > "$tmp/tests/sim/planted_test.cpp"
if out="$(python3 "$check" "$tmp" 2>/dev/null)"; then
  echo "layers test: FAILED: a test file without namespace SCHEDSIM_UNITY_ID was not reported"
  exit 1
fi
grep -q "tests/sim/planted_test.cpp:1: does not wrap" <<<"$out" || { echo "layers test: FAILED: unexpected report: $out"; exit 1; }
echo "layers test: passed (the tree holds the rules; a planted upward include, a 1000-line file, a file outside the layers and a test file without its unity namespace are reported)"
