#!/usr/bin/env python3
"""Overhead of policy plugins written in Python (docs/python.md "Policy plugins").

Runs one scenario with a builtin plugin and with its Python re-implementation, in this one
process, and prints the wall times and their ratio; the queue order must give the same tasks.csv
(the script fails otherwise). Usage (after a build with the Python module):

    PYTHONPATH=build/python python3 bench/bench_python_plugins.py [SCENARIO] [--repeat N]

Default scenario: scenarios/kth-sp2.json when the SWF trace is there (28k jobs), else
scenarios/generated-workload.json.
"""

import argparse
import os
import sys
import tempfile
import time

import schedsim

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def fifo(task, task_id):
    # priority-fifo's rule: idle last, priority descending, submit time ascending.
    return (1 if task.resource_type == schedsim.ResourceType.idle else 0, -task.priority, task.submit)


def first_fit(node, shape):
    # first-fit's outcome as a score: the lowest node id wins.
    return -node.id


def timed(scenario, out, sets, repeat):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        schedsim.run(scenario, out=out, set=sets)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    scenario = a.scenario
    if scenario is None:
        kth = os.path.join(ROOT, "scenarios", "kth-sp2.json")
        data = os.environ.get("SCHEDSIM_DATA", os.path.join(ROOT, "..", "shared", "data"))
        scenario = kth if os.path.exists(os.path.join(data, "swf")) else os.path.join(ROOT, "scenarios", "generated-workload.json")
    schedsim.register_queue_order("py-fifo", fifo)
    schedsim.register_placement("py-first-fit", first_fit)
    with tempfile.TemporaryDirectory() as tmp:
        schedsim.run(scenario, out=os.path.join(tmp, "warm-up"))  # the trace in the page cache
        rows = []
        for label, sets in (("builtin priority-fifo", {}),
                            ("python py-fifo", {"scheduler.queue_order": "py-fifo"}),
                            ("builtin first-fit", {"scheduler.placement": "first-fit"}),
                            ("python py-first-fit", {"scheduler.placement": "py-first-fit"})):
            out = os.path.join(tmp, label.replace(" ", "_"))
            rows.append((label, out, timed(scenario, out, sets, a.repeat)))
        with open(os.path.join(rows[0][1], "tasks.csv"), "rb") as f1, open(os.path.join(rows[1][1], "tasks.csv"), "rb") as f2:
            if f1.read() != f2.read():
                sys.exit("py-fifo's tasks.csv differs from priority-fifo's")
        tasks = schedsim.run(scenario, out=os.path.join(tmp, "count"), set={"scheduler.queue_order": "py-fifo"}).summary["tasks"]
        print("scenario: %s (%d tasks), best of %d" % (os.path.relpath(scenario), tasks, a.repeat))
        for label, _, t in rows:
            print("  %-24s %8.3f s" % (label, t))
        print("queue order: python/builtin = %.2fx, %.1f us per task" % (rows[1][2] / rows[0][2], 1e6 * (rows[1][2] - rows[0][2]) / max(tasks, 1)))
        print("placement:   python/builtin = %.2fx" % (rows[3][2] / rows[2][2]))


if __name__ == "__main__":
    main()
