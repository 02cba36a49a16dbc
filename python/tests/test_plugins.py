"""Policy plugins written in Python (docs/python.md "Policy plugins"): register_queue_order and
register_placement, used by schedsim.run and schedsim.Scheduler. Registrations last for the
process, so every test registers its own names."""

import math
import os

import pytest

import schedsim

SOURCE = os.environ.get("SCHEDSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
WHAT_IF = os.path.join(SOURCE, "scenarios", "what-if-capacity.json")
GIB = 1024


def one_pool(count, durations):
    """`count` 8-GPU nodes and one 8-GPU one-node job per duration (s), all submitted at 0."""
    return {
        "schema": "schedsim/v1", "name": "py-plugins", "seed": 1,
        "cluster": {
            "name": "c", "region": "r",
            "instance_specs": [{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
            "pools": [{"name": "p", "kind": "shared",
                       "node_groups": [{"prefix": "n-", "count": count, "gpu_model": "A100", "gpus": 8,
                                        "vcpu": 96, "memory_gib": 960}]}],
        },
        "tasks": [{"name": "job-%d" % i, "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0,
                   "specs": ["a100.8x"], "resource_type": "pay_as_you_go", "priority": 5, "duration_s": d}
                  for i, d in enumerate(durations)],
    }


def test_a_python_queue_order_decides_who_starts_first():
    # One node, three jobs of 100 s at 0. Rank = minus the job's number: job-2, job-1, job-0.
    schedsim.register_queue_order("py-reverse", lambda task, task_id: -int(task.name.split("-")[1]))
    r = schedsim.run(one_pool(1, [100, 100, 100]), set={"scheduler.queue_order": "py-reverse"})
    waits = dict(zip(r.tasks["task"], r.tasks["wait_s"]))
    assert waits == {"job-2": 0, "job-1": 100, "job-0": 200}


def test_a_python_shortest_first_reads_the_oracle_remaining_time_and_a_tuple_rank():
    # Durations 300, 100, 200 s on one node: shortest first runs job-1, job-2, job-0.
    schedsim.register_queue_order("py-sjf", lambda task, task_id: (-task.priority, task.true_remaining, task.submit))
    r = schedsim.run(one_pool(1, [300, 100, 200]), set={"scheduler.queue_order": "py-sjf"})
    starts = dict(zip(r.tasks["task"], r.tasks["wait_s"]))
    assert starts == {"job-1": 0, "job-2": 100, "job-0": 300}


def test_a_python_priority_fifo_reproduces_the_builtin_run_byte_for_byte(tmp_path):
    # The builtin order's rule (docs/scheduler.md): idle last, priority descending, submit time.
    def fifo(task, task_id):
        return (1 if task.resource_type == schedsim.ResourceType.idle else 0, -task.priority, task.submit)
    schedsim.register_queue_order("py-fifo", fifo)
    a, b = tmp_path / "builtin", tmp_path / "python"
    schedsim.run(WHAT_IF, out=str(a))
    schedsim.run(WHAT_IF, out=str(b), set={"scheduler.queue_order": "py-fifo"})
    for name in ("tasks.csv", "events.jsonl", "groups.csv", "timeseries.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_a_python_placement_score_puts_the_replica_on_the_highest_scoring_node():
    # Two empty nodes; the score is the node id, so the only job lands on n-1 (id 1), not on
    # n-0 where best-fit's tie would put it.
    schedsim.register_placement("py-last-node", lambda node, shape: node.id)
    r = schedsim.run(one_pool(2, [100]), set={"scheduler.placement": "py-last-node"})
    assert list(r.tasks["nodes"]) == ["n-1"]


def test_python_plugins_work_in_the_library_scheduler():
    schedsim.register_queue_order("py-lib-reverse", lambda task, task_id: -task_id)
    schedsim.register_placement("py-lib-last", lambda node, shape: node.id)
    c = schedsim.Cluster()
    pool = c.add_pool("shared")
    for i in range(2):
        c.add_node("a100-%d" % i, pool, "A100", 8, 96000, 960 * GIB)
    s = schedsim.Scheduler(c, schedsim.SchedulerOptions(placement="py-lib-last", queue_order="py-lib-reverse"))
    shape = schedsim.ReplicaShape(num_gpu=8, cpu_milli=8000, mem_mib=64 * GIB)
    ids = [s.add_task(schedsim.TaskSpec("t%d" % i, "u", options=[schedsim.GangOption("x", shape)],
                                        resource_type=schedsim.ResourceType.pay_as_you_go)) for i in range(3)]
    for t in ids:
        s.enqueue(t, 0)
    # Highest id first: t2 on node 1 (the highest score), then t1 on node 0; t0 waits.
    assert s.schedule(0).started == [ids[2], ids[1]]
    assert [rep.node for rep in s.placement_of(ids[2]).replicas] == [1]
    assert [rep.node for rep in s.placement_of(ids[1]).replicas] == [0]


def test_an_exception_in_a_plugin_is_raised_by_run_and_nothing_is_written(tmp_path):
    def broken(task, task_id):
        return 1 / 0
    schedsim.register_queue_order("py-broken", broken)
    out = tmp_path / "out"
    with pytest.raises(ZeroDivisionError):
        schedsim.run(one_pool(1, [100]), out=str(out), set={"scheduler.queue_order": "py-broken"})
    assert not out.exists()
    # The package still works afterwards (no exception left pending).
    assert schedsim.run(one_pool(1, [100])).summary["tasks"] == 1


@pytest.mark.parametrize("value, error, words", [
    ("soon", TypeError, "must be a number or a tuple of numbers, not str"),
    (math.nan, ValueError, "is NaN"),
    ((1, 2, 3, 4), ValueError, "tuple of 4 items"),
    ((), ValueError, "tuple of 0 items"),
])
def test_a_rank_that_is_not_1_to_3_numbers_raises_naming_the_plugin_and_task(value, error, words):
    name = "py-bad-rank-%d" % len(schedsim.registered_plugins()["queue_order"])
    schedsim.register_queue_order(name, lambda task, task_id: value)
    with pytest.raises(error) as e:
        schedsim.run(one_pool(1, [100]), set={"scheduler.queue_order": name})
    assert "queue order '%s': rank of task 'job-0'" % name in str(e.value)
    assert words in str(e.value)


def test_a_score_that_is_not_a_number_raises():
    schedsim.register_placement("py-none-score", lambda node, shape: None)
    with pytest.raises(TypeError, match="placement 'py-none-score': score must be a number, not NoneType"):
        schedsim.run(one_pool(1, [100]), set={"scheduler.placement": "py-none-score"})


def test_registering_a_taken_or_bad_name_or_a_non_callable_raises():
    schedsim.register_queue_order("py-once", lambda t, i: 0)
    for name in ("py-once", "sjf", "priority-fifo"):
        with pytest.raises(schedsim.InvalidArgument, match="already registered"):
            schedsim.register_queue_order(name, lambda t, i: 0)
    with pytest.raises(schedsim.InvalidArgument, match="already registered"):
        schedsim.register_placement("best-fit", lambda n, s: 0)
    for name in ("", "a b", "x" * 65, "caf\u00e9"):
        with pytest.raises(schedsim.InvalidArgument, match="printable ASCII"):
            schedsim.register_queue_order(name, lambda t, i: 0)
    with pytest.raises(schedsim.InvalidArgument, match="must be callable"):
        schedsim.register_placement("py-not-callable", 42)
    assert "py-not-callable" not in schedsim.registered_plugins()["placement"]


def test_registered_names_are_listed_and_an_unknown_one_is_refused_listing_them():
    schedsim.register_queue_order("py-listed", lambda t, i: 0)
    names = schedsim.registered_plugins()
    assert "py-listed" in names["queue_order"] and "sjf" in names["queue_order"]
    assert names["queue_order"] == sorted(names["queue_order"])
    with pytest.raises(schedsim.ScenarioError) as e:
        schedsim.run(one_pool(1, [100]), set={"scheduler.queue_order": "py-missing"})
    assert "py-listed" in str(e.value)
    with pytest.raises(schedsim.UnknownName) as e:
        schedsim.Scheduler(schedsim.Cluster(), schedsim.SchedulerOptions(queue_order="py-missing"))
    assert "py-listed" in e.value.names
