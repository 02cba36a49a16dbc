"""The typed exceptions of the schedsim package (docs/python.md "Errors"): each one raised by the
call that documents it, each a schedsim.Error and the builtin it refines."""

import os

import pytest

import schedsim

GIB = 1024

BUILTIN_PLACEMENTS = ["best-fit", "dot-product", "fastest-model", "fgd", "first-fit", "gpu-clustering", "gpu-packing", "random",
                      "topology", "worst-fit"]


TINY = {
    "schema": "schedsim/v1", "name": "tiny", "seed": 1,
    "cluster": {"name": "c", "region": "r",
                "instance_specs": [{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
                "pools": [{"name": "p", "kind": "shared",
                           "node_groups": [{"prefix": "n-", "count": 1, "gpu_model": "A100", "gpus": 8, "vcpu": 96,
                                            "memory_gib": 960}]}]},
    "tasks": [{"name": "job", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
               "resource_type": "pay_as_you_go", "priority": 5, "duration_s": 100}],
}


def scheduler():
    c = schedsim.Cluster()
    pool = c.add_pool("shared", schedsim.PoolKind.shared)
    c.add_node("a100-0", pool, "A100", 8, 96000, 960 * GIB)
    return schedsim.Scheduler(c, schedsim.SchedulerOptions()), pool


def one_gpu_task(name="t"):
    return schedsim.TaskSpec(name, "alice", options=[schedsim.GangOption("a100.1x", schedsim.ReplicaShape(num_gpu=1))],
                             resource_type=schedsim.ResourceType.pay_as_you_go)


def test_every_error_is_a_schedsim_error_and_the_builtin_it_refines():
    expected = {
        schedsim.ScenarioError: ValueError,
        schedsim.OutputError: OSError,
        schedsim.InvalidArgument: ValueError,
        schedsim.UnknownName: ValueError,
        schedsim.UnknownTask: IndexError,
        schedsim.UnknownNode: IndexError,
        schedsim.UnknownPool: ValueError,
        schedsim.TimeWentBackwards: ValueError,
        schedsim.InvalidState: RuntimeError,
    }
    for cls, builtin in expected.items():
        assert issubclass(cls, schedsim.Error), cls
        assert issubclass(cls, builtin), cls
        assert cls.__module__ == "schedsim", cls
        assert cls.__name__ in schedsim.__all__
    assert issubclass(schedsim.Error, Exception)
    assert not issubclass(schedsim.Error, (ValueError, OSError, IndexError, RuntimeError))


def test_an_unknown_placement_raises_unknown_name_with_the_value_and_the_registered_names():
    # Before: "unknown placement policy ''" (the name was read after the options were moved).
    options = schedsim.SchedulerOptions(placement="nope")
    with pytest.raises(schedsim.UnknownName) as e:
        schedsim.Scheduler(schedsim.Cluster(), options)
    assert str(e.value) == "unknown placement policy 'nope'; registered: " + ", ".join(BUILTIN_PLACEMENTS)
    assert e.value.names == BUILTIN_PLACEMENTS
    assert options.placement == "nope"  # the caller's options are untouched


def test_time_went_backwards_is_raised_by_schedule_explain_and_release():
    s, _ = scheduler()
    t = s.add_task(one_gpu_task())
    s.enqueue(t, 0)
    assert s.schedule(1000).started == [t]
    with pytest.raises(schedsim.TimeWentBackwards) as e:
        s.schedule(999)
    assert str(e.value) == "Scheduler::schedule: now 999 ms is earlier than the scheduler's time 1000 ms"
    with pytest.raises(schedsim.TimeWentBackwards):
        s.explain(t, 500)
    with pytest.raises(schedsim.TimeWentBackwards):
        s.release(t, 0)
    with pytest.raises(schedsim.TimeWentBackwards):
        s.set_node_up(0, True, 10)
    assert s.is_running(t)  # nothing changed
    s.release(t, 1000)  # the same time is not backwards


def test_invalid_arguments_raise_invalid_argument():
    with pytest.raises(schedsim.InvalidArgument) as e:
        schedsim.ReplicaShape(num_gpu=2, gpu_milli=500)
    assert str(e.value) == "ReplicaShape: a GPU share (gpu_milli < 1000) needs num_gpu == 1"
    c = schedsim.Cluster()
    p = c.add_pool("p")
    c.add_node("n0", p, "A100", 8, 96000, 960 * GIB)
    with pytest.raises(schedsim.InvalidArgument):
        c.add_node("n0", p, "A100", 8, 96000, 960 * GIB)  # libsched's check: a duplicate node name
    with pytest.raises(schedsim.InvalidArgument):
        c.add_pool("p")  # a duplicate pool name


def test_unknown_ids_raise_unknown_task_node_and_pool():
    s, _ = scheduler()
    with pytest.raises(schedsim.UnknownTask) as e:
        s.explain(7, 0)
    assert str(e.value) == "no task with id 7"
    with pytest.raises(schedsim.UnknownNode) as e:
        s.cluster.node(3)
    assert str(e.value) == "no node with id 3"
    with pytest.raises(schedsim.UnknownPool) as e:
        s.add_node("a100-1", "nope", "A100", 8, 96000, 960 * GIB)
    assert str(e.value) == "unknown pool 'nope'"
    t = s.add_task(one_gpu_task())
    s.forget_task(t)
    with pytest.raises(schedsim.UnknownTask):  # libsched's check: a forgotten task
        s.task(t)


def test_a_call_in_the_wrong_state_raises_invalid_state():
    s, _ = scheduler()
    t = s.add_task(one_gpu_task())
    with pytest.raises(schedsim.InvalidState):
        s.release(t, 0)  # not running
    s.enqueue(t, 0)
    with pytest.raises(schedsim.InvalidState):
        s.enqueue(t, 0)  # already waiting
    s.schedule(0)
    with pytest.raises(schedsim.InvalidState):
        s.set_node_up(0, False, 0)  # a task runs there


def test_run_raises_scenario_error_and_output_error(tmp_path):
    with pytest.raises(schedsim.ScenarioError) as e:
        schedsim.run(TINY, seed=-1)
    assert isinstance(e.value, schedsim.Error)
    assert e.value.diagnostics == [str(e.value)]
    link = tmp_path / "dangling"
    os.symlink(tmp_path / "nowhere" / "x", link)
    with pytest.raises(schedsim.OutputError) as e:
        schedsim.run(TINY, out=str(link))
    assert isinstance(e.value, OSError)
