"""Tests of the schedsim Python package (docs/python.md). Run by ctest (`python` test) with
PYTHONPATH set to build/python; SCHEDSIM_SOURCE_DIR points at the source tree."""

import csv
import json
import os
import subprocess

import pandas as pd
import pytest

import schedsim

SOURCE = os.environ.get("SCHEDSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
WHAT_IF = os.path.join(SOURCE, "scenarios", "what-if-capacity.json")

GIB = 1024


def small_scenario(count=2, tasks=3):
    """One pool of `count` 8-GPU nodes and `tasks` one-node 8-GPU jobs all submitted at 0."""
    return {
        "schema": "schedsim/v1",
        "name": "py-small",
        "seed": 1,
        "cluster": {
            "name": "c", "region": "r",
            "instance_specs": [{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
            "pools": [{"name": "p", "kind": "shared",
                       "node_groups": [{"prefix": "n-", "count": count, "gpu_model": "A100", "gpus": 8,
                                        "vcpu": 96, "memory_gib": 960}]}],
        },
        "tasks": [{"name": "job-%d" % i, "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0,
                   "specs": ["a100.8x"], "resource_type": "pay_as_you_go", "priority": 5, "duration_s": 100}
                  for i in range(tasks)],
    }


# ------------------------------------------------------------------ run()

def test_build_a_cluster_run_a_scenario_and_read_tasks_as_a_dataframe(tmp_path):
    # The acceptance line: a cluster built in Python, run as a scenario, .tasks read as a DataFrame.
    scenario = small_scenario(count=2, tasks=3)
    result = schedsim.run(scenario)
    assert isinstance(result.tasks, pd.DataFrame)
    assert list(result.tasks["task"]) == ["job-0", "job-1", "job-2"]
    assert list(result.tasks["state"]) == ["Succeeded"] * 3
    # Two nodes, three one-node jobs at 0: the third waits for the first to end (100 s).
    assert sorted(result.tasks["wait_s"]) == [0, 0, 100]
    assert result.summary["tasks"] == 3


def test_frames_have_the_columns_and_values_of_the_csv_files(tmp_path):
    out = tmp_path / "out"
    result = schedsim.run(WHAT_IF, out=str(out))
    for name, frame in (("tasks.csv", result.tasks), ("groups.csv", result.groups),
                        ("timeseries.csv", result.timeseries)):
        with open(out / name, newline="") as f:
            rows = list(csv.reader(f))
        assert list(frame.columns) == rows[0], name
        assert len(frame) == len(rows) - 1, name
        for i, row in enumerate(rows[1:]):
            for col, cell in zip(rows[0], row):
                value = frame.iloc[i][col]
                if cell == "":
                    assert pd.isna(value), (name, i, col)
                elif isinstance(value, str):
                    assert value == cell, (name, i, col)
                else:
                    assert float(value) == pytest.approx(float(cell), rel=0, abs=0), (name, i, col)
    with open(out / "summary.json") as f:
        assert result.summary == json.load(f)


def test_run_gives_the_same_files_as_the_command_line(tmp_path):
    binary = os.environ.get("SCHEDSIM_BINARY")
    if not binary:
        pytest.skip("SCHEDSIM_BINARY not set (run through ctest)")
    schedsim.run(WHAT_IF, seed=3, set={"tasks[llm-sft].priority": 9}, out=str(tmp_path / "py"))
    subprocess.run([binary, "run", WHAT_IF, "--seed", "3", "--set", "tasks[llm-sft].priority=9", "--no-progress",
                    "--out", str(tmp_path / "cli")], check=True, capture_output=True)
    names = sorted(os.listdir(tmp_path / "cli"))
    assert names == sorted(os.listdir(tmp_path / "py"))
    for n in names:
        assert (tmp_path / "py" / n).read_bytes() == (tmp_path / "cli" / n).read_bytes(), n


def test_summary_has_the_documented_keys():
    s = schedsim.run(small_scenario()).summary
    for key in ("scenario", "seed", "tasks", "attempts", "succeeded", "failed", "unfinished", "never_started",
                "makespan_s", "mean_wait_s", "p95_wait_s", "mean_jct_s", "gpu_allocation_ratio", "preemptions",
                "resubmissions", "lost_work_s", "wait_split_s", "events", "groups"):
        assert key in s, key
    assert s["scenario"] == "py-small"


def test_set_a_node_count_changes_results_as_expected():
    base = schedsim.run(small_scenario(count=2, tasks=3))
    more = schedsim.run(small_scenario(count=2, tasks=3), set={"cluster.pools[p].node_groups[0].count": 3})
    assert base.summary["mean_wait_s"] > 0
    assert more.summary["mean_wait_s"] == 0  # three nodes for three jobs: nobody waits
    assert more.resolved_scenario["cluster"]["pools"][0]["node_groups"][0]["count"] == 3


def test_set_values_are_used_as_python_values():
    r = schedsim.run(small_scenario(), set={"name": "10", "scheduler.placement": "worst-fit"})
    assert r.summary["scenario"] == "10"  # a str stays a string, even when it looks like a number
    assert r.resolved_scenario["scheduler"]["placement"] == "worst-fit"


def test_seed_is_the_run_seed_and_changes_the_default_workload():
    a = schedsim.run(seed=2, until=3600)
    b = schedsim.run(seed=2, until=3600)
    c = schedsim.run(seed=3, until=3600)
    assert a.summary["seed"] == 2
    assert a.summary == b.summary
    assert a.tasks.equals(b.tasks)
    assert not a.tasks.equals(c.tasks)


def test_until_cuts_the_run():
    r = schedsim.run(WHAT_IF, until=1000)
    assert r.summary["makespan_s"] <= 1000
    assert r.resolved_scenario["until_s"] == 1000


def test_scenario_may_be_a_path_a_json_string_or_a_dict():
    with open(WHAT_IF) as f:
        text = f.read()
    by_path = schedsim.run(WHAT_IF).summary
    assert schedsim.run(text).summary == by_path
    assert schedsim.run(json.loads(text)).summary == by_path


def test_resolved_scenario_reproduces_the_run():
    a = schedsim.run(WHAT_IF, seed=7, set={"cluster.pools[llm-h800].node_groups[0].count": 10})
    b = schedsim.run(a.resolved_scenario)
    assert a.summary == b.summary
    assert a.tasks.equals(b.tasks)


def test_default_scenario_is_what_run_without_scenario_runs():
    d = schedsim.default_scenario()
    assert d["name"] == "default"
    assert schedsim.run(d, until=7200).summary == schedsim.run(until=7200).summary


def test_a_bad_scenario_raises_scenario_error_with_the_diagnostic():
    bad = small_scenario()
    bad["tasks"][0]["priority"] = 12
    with pytest.raises(schedsim.ScenarioError) as e:
        schedsim.run(bad)
    assert e.value.diagnostics == ["<scenario>: tasks[0].priority: 12: must be between 1 and 9"]
    assert isinstance(e.value, ValueError)


def test_a_bad_override_path_raises_naming_it():
    with pytest.raises(schedsim.ScenarioError) as e:
        schedsim.run(WHAT_IF, set={"cluster.pools[9].node_groups[0].count": 10})
    assert e.value.diagnostics == [
        "set: cluster.pools[9].node_groups[0].count: 10: cluster.pools[9]: no such element (cluster.pools has 2 elements)"]


def test_a_bad_override_value_raises_naming_the_override():
    with pytest.raises(schedsim.ScenarioError) as e:
        schedsim.run(WHAT_IF, set={"tasks[llm-sft].priority": 0})
    assert e.value.diagnostics == [
        WHAT_IF + ": tasks[1].priority: 0: must be between 1 and 9 (from set tasks[llm-sft].priority=0)"]


def test_bad_arguments_raise():
    with pytest.raises(schedsim.ScenarioError):
        schedsim.run(small_scenario(), seed=-1)
    with pytest.raises(schedsim.ScenarioError):
        schedsim.run(small_scenario(), until=-5)
    with pytest.raises(schedsim.ScenarioError) as e:
        schedsim.run("/nonexistent/scenario.json")
    assert e.value.diagnostics == ["/nonexistent/scenario.json: cannot read file"]
    with pytest.raises(schedsim.ScenarioError):
        schedsim.run("{ not json")
    with pytest.raises(TypeError):
        schedsim.run(42)
    with pytest.raises(TypeError):
        schedsim.run(small_scenario(), set=[("seed", 1)])


def test_an_unwritable_out_raises_oserror(tmp_path):
    link = tmp_path / "dangling"
    os.symlink(tmp_path / "nowhere" / "x", link)  # refused before simulating (exit 1 of schedsim run)
    with pytest.raises(OSError) as e:
        schedsim.run(small_scenario(), out=str(link))
    assert "dangling" in str(e.value) or "nowhere" in str(e.value)
    assert not (tmp_path / "nowhere").exists()


# ------------------------------------------------------------------ libsched types

def two_node_scheduler(**options):
    c = schedsim.Cluster()
    pool = c.add_pool("shared", schedsim.PoolKind.shared)
    for i in range(2):
        c.add_node("a100-%d" % i, pool, "A100", 8, 96000, 960 * GIB)
    return schedsim.Scheduler(c, schedsim.SchedulerOptions(placement="best-fit", **options)), pool


def gang(name, workers, gpus, priority=5, resource_type=schedsim.ResourceType.pay_as_you_go, user="alice"):
    shape = schedsim.ReplicaShape(num_gpu=gpus, cpu_milli=8000, mem_mib=64 * GIB)
    return schedsim.TaskSpec(name, user, workers=workers, options=[schedsim.GangOption("a100.%dx" % gpus, shape)],
                             resource_type=resource_type, priority=priority)


def test_cluster_reports_its_nodes():
    c = schedsim.Cluster()
    p = c.add_pool("p")
    c.add_node("n0", p, "A100", 8, 96000, 960 * GIB)
    c.add_node("n1", "p", "H800", 4, 64000, 512 * GIB)
    assert len(c) == 2
    assert c.find_node("n1") == 1
    assert c.find_node("nope") == -1
    n = c.node(1)
    assert (n.name, n.gpu_model, n.gpus, n.free_gpus, n.up) == ("n1", "H800", 4, 4, True)
    assert n.capacity == schedsim.Resources(4000, 64000, 512 * GIB)
    assert c.total_capacity.gpu_milli == 12000
    with pytest.raises(ValueError):
        c.add_node("n0", p, "A100", 8, 1, 1)  # duplicate name
    with pytest.raises(ValueError):
        c.add_node("n9", "nope", "A100", 8, 1, 1)
    with pytest.raises(ValueError):
        c.add_node("n9", p, "A100", 65, 1, 1)
    with pytest.raises(IndexError):
        c.node(5)


def test_schedule_places_a_whole_gang_and_explain_says_why_another_waits():
    s, _ = two_node_scheduler()
    big = s.add_task(gang("big", workers=1, gpus=8))      # two 8-GPU replicas: both nodes
    late = s.add_task(gang("late", workers=0, gpus=4))
    s.enqueue(big, 0)
    s.enqueue(late, 0)
    r = s.schedule(0)
    assert r.started == [big]
    assert r.preemptions == []
    p = s.placement_of(big)
    assert sorted(rep.node for rep in p.replicas) == [0, 1]
    assert all(bin(rep.gpu_mask).count("1") == 8 for rep in p.replicas)
    assert s.is_running(big) and s.is_waiting(late)
    assert s.placement_of(late) is None
    code, blocking, reason = s.explain(late, 0)
    assert code == schedsim.WaitCode.waits_for_capacity
    assert blocking == [schedsim.WaitCode.waits_for_capacity]
    assert reason == "needs 1 x 4 GPU on any GPU model; 0 GPU free in eligible nodes"
    s.release(big, 1000)
    assert s.schedule(1000).started == [late]


def test_preemption_through_the_bindings():
    s, _ = two_node_scheduler()
    low = s.add_task(gang("low", workers=1, gpus=8, priority=2))
    s.enqueue(low, 0)
    assert s.schedule(0).started == [low]
    high = s.add_task(gang("high", workers=0, gpus=8, priority=9))
    s.enqueue(high, 1000)
    r = s.schedule(1000)
    assert r.started == [high]
    assert [(p.victim, p.preemptor, p.kind) for p in r.preemptions] == [(low, high, schedsim.PreemptionKind.priority)]
    assert not s.is_running(low)


def test_explain_reports_quota_for_a_reserved_task_without_quota():
    s, pool = two_node_scheduler()
    t = gang("res", workers=0, gpus=8, resource_type=schedsim.ResourceType.reserved)
    t.pool = pool
    tid = s.add_task(t)
    s.enqueue(tid, 0)
    assert s.schedule(0).started == []
    w = s.explain(tid, 0)
    assert w.code == schedsim.WaitCode.never_fits  # no quota entry: a zero quota, even with nothing running
    assert w.primary() == schedsim.WaitCode.waits_for_quota
    assert "exceeds quota limit 0 GPU of alice" in w.reason
    s.set_quota("alice", schedsim.ResourceType.reserved, pool, 8000, 96000, 960 * GIB)
    assert s.schedule(1).started == [tid]


def test_invalid_library_input_raises_instead_of_crashing():
    s, _ = two_node_scheduler()
    with pytest.raises(ValueError):
        schedsim.ReplicaShape(num_gpu=2, gpu_milli=500)  # a share must be one GPU
    with pytest.raises(ValueError):
        schedsim.ReplicaShape(num_gpu=1, cpu_milli=-1)
    with pytest.raises(ValueError):
        s.add_task(schedsim.TaskSpec("empty", "u"))  # no option
    with pytest.raises(IndexError):
        s.explain(99, 0)
    with pytest.raises(IndexError):
        s.enqueue(-1, 0)
    t = s.add_task(gang("x", 0, 1))
    s.enqueue(t, 0)
    with pytest.raises(RuntimeError):
        s.enqueue(t, 0)  # already waiting
    with pytest.raises(RuntimeError):
        s.release(t, 0)  # not running
    with pytest.raises(ValueError):
        schedsim.Scheduler(schedsim.Cluster(), schedsim.SchedulerOptions(placement="no-such-policy"))


def test_nodes_change_and_tasks_are_adopted_and_forgotten_through_the_bindings():
    s, pool = two_node_scheduler()
    n2 = s.add_node("a100-2", pool, "A100", 8, 96000, 960 * GIB)
    assert n2 == 2 and len(s.cluster) == 3
    s.drain_node(0)
    s.drain_node(1)
    t = s.add_task(gang("t", workers=0, gpus=8))
    s.enqueue(t, 0)
    assert s.schedule(0).started == [t]
    assert [rep.node for rep in s.placement_of(t).replicas] == [2]  # the drained nodes take nothing new
    a = s.adopt_task(gang("a", workers=0, gpus=8), 0, schedsim.ResourceType.pay_as_you_go, [(0, 0)], 0)
    assert s.is_running(a) and s.tasks_on_node(0) == [a]  # what ran before the drain is accepted
    with pytest.raises(RuntimeError):
        s.remove_node(0)  # a task still runs there
    s.release(a, 10)
    s.remove_node(0)
    assert s.cluster.node(0).removed
    s.undrain_node(1)
    assert not s.cluster.node(1).drained
    s.forget_task(a)
    assert not s.knows_task(a)
    with pytest.raises(IndexError):
        s.task(a)
    assert s.add_task(gang("u", workers=0, gpus=1)) == a  # the forgotten id is reused


# ------------------------------------------------------------------ bounds (issue #36): the scenario limits

def test_task_spec_workers_beyond_the_scenario_limit_raise_instead_of_wrapping():
    # 2**31 - 1 workers made replicas = workers + 1 wrap to a negative count.
    with pytest.raises(ValueError) as e:
        schedsim.TaskSpec("t", "u", workers=2 ** 31 - 1)
    assert str(e.value) == "task 't': workers 2147483647: must be between 0 and 1000000"
    with pytest.raises(ValueError):
        schedsim.TaskSpec("t", "u", workers=2 ** 40)
    t = schedsim.TaskSpec("t", "u", workers=1000000)
    assert t.replicas == 1000001
    with pytest.raises(ValueError):
        t.workers = 1000001
    assert t.workers == 1000000


def test_task_spec_times_beyond_1e9_seconds_raise():
    with pytest.raises(ValueError) as e:
        schedsim.TaskSpec("t", "u", submit=10 ** 12 + 1)
    assert str(e.value) == "task 't': submit 1000000000001: must be between 0 and 1000000000000"
    t = schedsim.TaskSpec("t", "u")
    with pytest.raises(ValueError):
        t.runtime_estimate = -2
    with pytest.raises(ValueError):
        t.checkpoint_interval = 2 ** 62


def test_a_node_beyond_1e9_vcpu_or_gib_raises_instead_of_overflowing_the_cluster_total():
    c = schedsim.Cluster()
    pool = c.add_pool("p")
    with pytest.raises(ValueError) as e:
        c.add_node("big", pool, "", 0, 2 ** 63 - 1, 1024)
    assert str(e.value) == "node big: cpu_milli 9223372036854775807: must be between 0 and 1000000000000"
    with pytest.raises(ValueError):
        c.add_node("big", pool, "", 0, 1000, 2 ** 63 - 1)
    c.add_node("ok", pool, "", 0, 10 ** 12, 1024 * 10 ** 9)  # the limits themselves are fine
    s = schedsim.Scheduler(c)
    with pytest.raises(ValueError):
        s.add_node("big", pool, "", 0, 2 ** 63 - 1, 1024)
    assert c.total_capacity.cpu_milli == 10 ** 12


def test_shapes_and_quotas_beyond_the_scenario_limits_raise():
    with pytest.raises(ValueError) as e:
        schedsim.ReplicaShape(cpu_milli=2 ** 62)
    assert str(e.value) == "ReplicaShape: cpu_milli 4611686018427387904: must be between 0 and 1000000000000"
    s, pool = two_node_scheduler()
    with pytest.raises(ValueError):
        s.set_quota("u", schedsim.ResourceType.reserved, pool, 2 ** 62, 0, 0)


def test_a_65th_gpu_model_raises():
    c = schedsim.Cluster()
    pool = c.add_pool("p")
    for i in range(64):
        c.add_node("n%d" % i, pool, "M%d" % i, 1, 1000, 1024)
    with pytest.raises(ValueError):
        c.add_node("n64", pool, "M64", 1, 1000, 1024)


def test_a_path_with_a_nul_byte_raises_instead_of_being_cut(tmp_path):
    # "WHAT_IF\0x" named WHAT_IF before: the text after the NUL was dropped.
    with pytest.raises(schedsim.ScenarioError) as e:
        schedsim.run(WHAT_IF + "\0x")
    assert e.value.diagnostics == [WHAT_IF + "\\x00x: scenario path must not contain a NUL byte (byte %d)" % (len(WHAT_IF) + 1)]
    assert isinstance(e.value, ValueError)
    out = str(tmp_path / "o")
    with pytest.raises(schedsim.ScenarioError):
        schedsim.run(small_scenario(), out=out + "\0x")
    assert not os.path.exists(out)


def test_a_str_override_is_the_string_itself_never_re_encoded():
    r = schedsim.run(small_scenario(), set={"name": '"quoted" \u00e9t\u00e9'})
    assert r.summary["scenario"] == '"quoted" \u00e9t\u00e9'
    # A string that is not UTF-8 (lone surrogate) or a float that is not JSON raises; before, it
    # became the literal text "\udcff" with its quotes.
    with pytest.raises(schedsim.ScenarioError) as e:
        schedsim.run(small_scenario(), set={"name": "\udcff"})
    assert e.value.diagnostics == ["set: name: '\\udcff': is not valid UTF-8 text (surrogates not allowed)"]
    with pytest.raises(schedsim.ScenarioError):
        schedsim.run(small_scenario(), set={"tasks[job-0].duration_s": float("nan")})
    with pytest.raises(schedsim.ScenarioError):
        schedsim.run(small_scenario(), set={"name": ["\udcff"]})


def test_prices_give_costs_in_summary_tasks_and_groups():
    # 3 one-node jobs of 8 A100 GPUs for 100 s each at 3.6 USD per GPU-hour:
    # 8 x 100 / 3600 x 3.6 = 0.8 USD each, 2.4 USD in all (docs/outputs.md "Costs").
    sc = small_scenario(count=2, tasks=3)
    sc["prices"] = {"currency": "USD", "gpu_models": {"A100": {"pay_as_you_go": 3.6}}}
    r = schedsim.run(sc)
    assert r.summary["currency"] == "USD"
    assert r.summary["cost_total"] == pytest.approx(2.4)
    assert r.summary["cost_pay_as_you_go"] == pytest.approx(2.4)
    assert r.summary["cost_reserved"] == 0
    assert list(r.tasks.cost) == pytest.approx([0.8, 0.8, 0.8])
    users = r.groups[r.groups.group_by == "user"]
    assert list(users.cost) == pytest.approx([2.4])
    # Without prices every cost is 0 and the currency empty.
    plain = schedsim.run(small_scenario(count=2, tasks=3))
    assert plain.summary["currency"] == "" and plain.summary["cost_total"] == 0


def test_a_bad_price_raises_scenario_error_naming_the_path():
    sc = small_scenario()
    sc["prices"] = {"gpu_models": {"A100": {"pay_as_you_go": -1}}}
    with pytest.raises(schedsim.ScenarioError, match=r"prices\.gpu_models\.A100\.pay_as_you_go"):
        schedsim.run(sc)
