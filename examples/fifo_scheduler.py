#!/usr/bin/env python3
"""Greedy first-fit in queue order over `schedsim run S --scheduler-cmd 'python3 examples/fifo_scheduler.py'`.

Reads one `decide` snapshot per line on stdin (docs/decide.md), writes one answer per line:
waiting tasks by priority (high first), then submit time, then name (the built-in
`priority-fifo` order); each replica on the first node, in node order, with room (`first-fit`);
a gang starts whole or not at all. Whole GPUs, vCPU and memory only: no quotas, node policies or
preemption (docs/external-scheduler.md). Reproduces `--queueing greedy --placement first-fit`."""
import json
import sys


def shapes(task, specs):
    """(head, worker) as (gpu_model or None, gpus, vcpu, memory_gib) for each option, in order."""
    n = task.get("count_per_node", 1)
    opts = [specs[s] for s in task["specs"]] if "specs" in task else [dict(task["replica"], gpu_model=None)]
    head = specs.get(task.get("head_spec", ""))
    def one(o):
        return (o.get("gpu_model"), o.get("gpus", 0) * n, o.get("vcpu", 0) * n, o.get("memory_gib", 0) * n)
    return [(o.get("name", ""), one(head) if head else one(o), one(o)) for o in opts]


for line in sys.stdin:
    snap = json.loads(line)
    specs = {s["name"]: s for s in snap["cluster"].get("instance_specs", [])}
    pools = {p["name"]: p.get("kind", "shared") for p in snap["cluster"]["pools"]}
    nodes, off = [], {s["node"] for s in snap.get("node_state", []) if not s.get("up", True) or s.get("drained")}
    for p in snap["cluster"]["pools"]:
        for g in p.get("node_groups", []):
            nodes += [dict(g, name=g["prefix"] + str(i), pool=p["name"]) for i in range(g["count"])]
        nodes += [dict(n, pool=p["name"]) for n in p.get("nodes", [])]
    open_to = lambda t, n: n["pool"] == t["pool"] if t.get("pool") else pools[n["pool"]] == "shared"
    free = {n["name"]: [n.get("gpus", 0), n.get("vcpu", 0), n.get("memory_gib", 0)] for n in nodes}
    tasks = snap["tasks"]
    for t in (t for t in tasks if "running" in t):  # what the running tasks hold
        option = shapes(t, specs)[[o[0] for o in shapes(t, specs)].index(t["running"].get("spec", ""))]
        for i, r in enumerate(t["running"]["replicas"]):
            shape = option[1] if i == 0 else option[2]
            free[r["node"]] = [a - b for a, b in zip(free[r["node"]], shape[1:])]
    waiting = sorted((t for t in tasks if "running" not in t), key=lambda t: (-t.get("priority", 5), t.get("submit_s", 0), t["name"]))
    placements = []
    for t in waiting:
        for label, head, worker in shapes(t, specs):
            taken, chosen = {}, []
            for shape in [head] + [worker] * t["workers"]:
                fit = next((n for n in nodes if n["name"] not in off and open_to(t, n) and shape[0] in (None, n.get("gpu_model"))
                            and all(f - u >= s for f, u, s in zip(free[n["name"]], taken.get(n["name"], [0, 0, 0]), shape[1:]))), None)
                if fit is None:
                    break
                taken[fit["name"]] = [u + s for u, s in zip(taken.get(fit["name"], [0, 0, 0]), shape[1:])]
                chosen.append({"node": fit["name"]})
            else:
                for name, used in taken.items():
                    free[name] = [f - u for f, u in zip(free[name], used)]
                placements.append({"task": t["name"], "spec": label, "replicas": chosen})
                break
    print(json.dumps({"placements": placements, "preemptions": []}), flush=True)
