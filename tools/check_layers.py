#!/usr/bin/env python3
"""Checks that the includes of sim/ run only down its layers (docs/architecture.md "Layers").

    cli -> experiments -> outputs -> engine -> io -> libsched

A file in sim/LAYER/ may include "sim/OTHER/..." only when OTHER is LAYER or a layer below it;
libsched/ never includes "sim/..."; no source file stands directly in sim/ (each lives in its
layer's folder); no two headers include each other, directly or through others; and no source
file in sim/ is longer than MAX_LINES (a newcomer reads a file in one sitting; split longer ones
along their seams). Each test file of tests/<area>/ wraps everything after its includes in
`namespace SCHEDSIM_UNITY_ID { ... }` (tests/common/unity.hpp), so that the unity build of its
area never mixes two files' helpers.

Usage: tools/check_layers.py [ROOT]   (ROOT: the source tree, default: this script's parent)
Exit status: 0 when every rule holds; 1 with one line per violation (FILE:LINE: ...).
"""
import os
import re
import sys

LAYERS = ["io", "engine", "outputs", "experiments", "cli"]  # bottom to top
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s*"(sim/[^"]+|libsched/[^"]+)"')
SOURCE = (".cpp", ".hpp", ".h", ".cc")
TEST_AREAS = ["core", "e2e", "io", "sim", "traces", "replay"]  # tests/CMakeLists.txt, one binary each
UNITY_OPEN = "namespace SCHEDSIM_UNITY_ID {"
MAX_LINES = 900


def sources(root, top):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            if f.endswith(SOURCE):
                yield os.path.relpath(os.path.join(d, f), root)


def includes(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1)


def layer_of(rel):
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "sim" else None


def unity_problems(root):
    """Test files that would leak their helpers into the other files of a unity batch."""
    problems = []
    for area in TEST_AREAS:
        folder = os.path.join(root, "tests", area)
        if not os.path.isdir(folder):
            continue
        for f in sorted(os.listdir(folder)):
            if not f.endswith(".cpp"):
                continue
            rel = f"tests/{area}/{f}"
            with open(os.path.join(folder, f), encoding="utf-8", errors="replace") as fh:
                lines = fh.read().split("\n")
            opens = [n for n, l in enumerate(lines, 1) if l.startswith(UNITY_OPEN)]
            incs = [n for n, l in enumerate(lines, 1) if l.lstrip().startswith("#include")]
            if not opens:
                problems.append(f"{rel}:1: does not wrap its body in `{UNITY_OPEN} ... }}` (tests/common/unity.hpp)")
            elif incs and incs[-1] > opens[0]:
                problems.append(f"{rel}:{incs[-1]}: #include inside `{UNITY_OPEN}`: move it above line {opens[0]}")
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    headers = {}
    for rel in sources(root, "sim"):
        layer = layer_of(rel)
        if layer is None:
            problems.append(f"{rel}:1: stands directly in sim/: move it into one of the layers {', '.join(LAYERS)}")
            continue
        if layer not in RANK:
            problems.append(f"{rel}:1: sim/{layer}/ is not a layer (expected one of {', '.join(LAYERS)})")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            lines = sum(1 for _ in fh)
        if lines > MAX_LINES:
            problems.append(f"{rel}:{lines}: {lines} lines, more than {MAX_LINES}: split it along its seams")
        deps = []
        for n, inc in includes(root, rel):
            if not inc.startswith("sim/"):
                continue
            other = layer_of(inc)
            if other not in RANK:
                problems.append(f"{rel}:{n}: includes \"{inc}\", which is in no layer")
            elif RANK[other] > RANK[layer]:
                problems.append(f"{rel}:{n}: includes \"{inc}\": sim/{layer}/ may include only its own layer and the ones "
                                f"below it ({', '.join(LAYERS[:RANK[layer] + 1])}), not sim/{other}/")
            deps.append(inc)
        if rel.endswith((".hpp", ".h")):
            headers[rel] = deps
    for rel in sources(root, "libsched"):
        for n, inc in includes(root, rel):
            if inc.startswith("sim/"):
                problems.append(f"{rel}:{n}: includes \"{inc}\": libsched never includes the simulator")
    # Header cycles (depth-first search over the header graph).
    state = {}
    def visit(h, stack):
        state[h] = 1
        stack.append(h)
        for d in headers.get(h, []):
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                problems.append(f"{h}:1: include cycle: {' -> '.join(cycle)}")
            elif d in headers and d not in state:
                visit(d, stack)
        stack.pop()
        state[h] = 2
    for h in sorted(headers):
        if h not in state:
            visit(h, [])
    problems += unity_problems(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} violation(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
