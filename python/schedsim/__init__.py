"""schedsim: the libsched gang scheduler and the schedsim simulator from Python.

Two halves (docs/python.md):

* ``schedsim.run(scenario, seed=None, set=None, until=None)`` simulates a scenario exactly as
  ``schedsim run`` does and returns a :class:`RunResult` whose ``summary`` is the
  ``summary.json`` dict and whose ``tasks``, ``groups`` and ``timeseries`` are pandas
  DataFrames with the columns of ``tasks.csv``, ``groups.csv`` and ``timeseries.csv``
  (docs/outputs.md).
* The libsched types (:class:`Cluster`, :class:`TaskSpec`, :class:`Scheduler`, ...) to build a
  cluster and ask the scheduler for placements (``schedule``) and wait reasons (``explain``).

Units of the library types are libsched's: time in milliseconds, CPU in milli-vCPU, memory in
MiB, GPU amounts in milli-GPU where a name says ``milli``.
"""

import json as _json
import os as _os
import tempfile as _tempfile

from ._schedsim import (  # noqa: F401  (re-exported)
    Cluster,
    Error,
    GangOption,
    IdleStability,
    InvalidArgument,
    InvalidState,
    NodeInfo,
    Placement,
    PoolKind,
    Preemption,
    PreemptionKind,
    Queueing,
    ReplicaAllocation,
    ReplicaShape,
    Resources,
    ResourceType,
    ScheduleResult,
    Scheduler,
    SchedulerOptions,
    TaskSpec,
    TaskType,
    TimeWentBackwards,
    UnknownName,
    UnknownNode,
    UnknownPool,
    UnknownTask,
    WaitCode,
    WaitStatus,
    _register_placement,
    _register_queue_order,
    _registered_plugins,
    _run,
    default_scenario_json,
    version,
)

__all__ = [
    "run",
    "RunResult",
    "Error",
    "ScenarioError",
    "OutputError",
    "InvalidArgument",
    "UnknownName",
    "UnknownTask",
    "UnknownNode",
    "UnknownPool",
    "TimeWentBackwards",
    "InvalidState",
    "default_scenario",
    "register_queue_order",
    "register_placement",
    "registered_plugins",
    "Cluster",
    "GangOption",
    "IdleStability",
    "NodeInfo",
    "Placement",
    "PoolKind",
    "Preemption",
    "PreemptionKind",
    "Queueing",
    "ReplicaAllocation",
    "ReplicaShape",
    "Resources",
    "ResourceType",
    "ScheduleResult",
    "Scheduler",
    "SchedulerOptions",
    "TaskSpec",
    "TaskType",
    "WaitCode",
    "WaitStatus",
    "version",
]

__version__ = version()


# The error classes (docs/python.md "Errors"): every error the package raises on purpose is a
# schedsim.Error. The library ones (InvalidArgument, UnknownName, UnknownTask,
# UnknownNode, UnknownPool, TimeWentBackwards, InvalidState) mirror libsched's C++ errors and come
# from the extension module; ScenarioError and OutputError are schedsim.run()'s.


class ScenarioError(Error, ValueError):
    """The scenario, an override or an argument of :func:`run` is invalid.

    ``str(error)`` is every diagnostic, one per line, in the ``FILE: JSON.PATH: VALUE: RULE``
    form of ``schedsim validate`` (docs/scenario-format.md); ``error.diagnostics`` is the list
    of those lines. ``schedsim run`` exits with status 2 in the same cases.
    """

    def __init__(self, diagnostics):
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(self.diagnostics) or "invalid scenario")


class OutputError(Error, OSError):
    """:func:`run` could not create, write, sync or rename its output (``out`` or the temporary
    directory): exit status 1 of ``schedsim run``. ``str(error)`` is the message of the
    command line; also an OSError."""


# Columns that are text whatever they look like (a task named "007" stays "007").
_TEXT_COLUMNS = {
    "tasks.csv": ["task", "state", "spec", "nodes", "reason", "capacity", "user", "tenant", "pool", "type",
                  "end_reason", "preemptor"],
    "groups.csv": ["group_by", "group"],
    "timeseries.csv": [],
}


def _read_csv(path):
    import pandas as pd

    name = _os.path.basename(path)
    # Only empty cells are missing values (NaN): a task named "NA" or "null" stays a string.
    return pd.read_csv(path, keep_default_na=False, na_values=[""],
                       dtype={c: str for c in _TEXT_COLUMNS.get(name, [])})


class RunResult:
    """The outputs of one simulation run (docs/outputs.md).

    Attributes:
        summary (dict): the content of ``summary.json``.
        tasks (pandas.DataFrame): ``tasks.csv``, one row per attempt, same columns in the same
            order; empty cells are NaN.
        groups (pandas.DataFrame): ``groups.csv``.
        timeseries (pandas.DataFrame): ``timeseries.csv``.
        resolved_scenario (dict): ``scenario.resolved.json``, the scenario that ran (overrides,
            seed and until applied); ``schedsim.run(result.resolved_scenario)`` reproduces it.
        events (list of dict): ``events.jsonl``, one dict per state change.
        table (str): the summary table ``schedsim run`` prints.
        warnings (list of str): warnings printed on stderr (unknown keys, unfinished tasks, ...).
        out (str or None): the output directory when ``run(..., out=DIR)`` was given.
    """

    def __init__(self, directory, table, warnings, out):
        with open(_os.path.join(directory, "summary.json"), encoding="utf-8") as f:
            self.summary = _json.load(f)
        with open(_os.path.join(directory, "scenario.resolved.json"), encoding="utf-8") as f:
            self.resolved_scenario = _json.load(f)
        with open(_os.path.join(directory, "events.jsonl"), encoding="utf-8") as f:
            self.events = [_json.loads(line) for line in f if line.strip()]
        self.tasks = _read_csv(_os.path.join(directory, "tasks.csv"))
        self.groups = _read_csv(_os.path.join(directory, "groups.csv"))
        self.timeseries = _read_csv(_os.path.join(directory, "timeseries.csv"))
        self.table = table
        self.warnings = list(warnings)
        self.out = out

    def __repr__(self):
        s = self.summary
        return "<schedsim.RunResult {}: {} tasks, mean_wait_s={}, gpu_allocation_ratio={}>".format(
            s.get("scenario"), s.get("tasks"), s.get("mean_wait_s"), s.get("gpu_allocation_ratio"))


def _utf8(text, what):
    """`text` (a str) as UTF-8 bytes; ValueError (UnicodeEncodeError) naming `what` when it
    holds lone surrogates."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ScenarioError(["{}: {!r}: is not valid UTF-8 text ({})".format(what, text, e.reason)]) from None


def _json_bytes(value, what):
    """`value` as UTF-8 JSON text; ScenarioError naming `what` for NaN or infinity (not JSON)
    and for text that is not UTF-8."""
    try:
        text = _json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError as e:
        raise ScenarioError(["{}: {}".format(what, e)]) from None
    return _utf8(text, what)


def _source(scenario):
    """(path, text) for the C++ side from a path, a JSON string, a dict or None. A path is
    passed as its file-system bytes (os.fsencode); a NUL byte in it is refused by the C++ side."""
    if scenario is None:
        return b"", b""
    if isinstance(scenario, dict):
        return b"", _json_bytes(scenario, "scenario")
    if isinstance(scenario, _os.PathLike):
        return _os.fsencode(scenario), b""
    if isinstance(scenario, str):
        if scenario.lstrip().startswith("{"):
            return b"", _utf8(scenario, "scenario")
        return _os.fsencode(scenario), b""
    raise TypeError("scenario must be a path, a JSON string, a dict or None, not " + type(scenario).__name__)


def run(scenario=None, seed=None, set=None, until=None, out=None, skip_bad_rows=False):
    """Simulates a scenario, as ``schedsim run`` does, and returns its outputs.

    Args:
        scenario: a scenario file path (str or os.PathLike), a scenario as a JSON string (text
            starting with ``{``), a dict (the parsed JSON), or None for the embedded default
            scenario (docs/scenario-format.md).
        seed (int, optional): the run's seed (``--seed``), 0 .. 2**64-1; for the default
            scenario it also draws the workload.
        set (dict, optional): overrides ``{PATH: VALUE}`` applied in order before validation,
            as ``--set PATH=VALUE`` (docs/scenario-format.md "Overrides"), e.g.
            ``{"cluster.pools[a100].node_groups[0].count": 10, "scheduler.placement": "fgd"}``.
            VALUE is any JSON-serialisable Python value and is used as is (a str stays a
            string).
        until (float, optional): stop the simulation at this time, seconds (``--until``),
            0 .. 1e9.
        out (str, optional): also keep the output files in this directory (published all or
            nothing, like ``--out``); by default they go to a temporary directory that is
            removed.
        skip_bad_rows (bool): skip and count malformed trace rows (``--skip-bad-rows``).

    Returns:
        RunResult: ``summary`` (dict), ``tasks``, ``groups``, ``timeseries`` (DataFrames), ...

    Raises:
        ScenarioError: the scenario, an override or an argument is invalid (exit status 2 of
            ``schedsim run``); carries the diagnostic lines. A schedsim.Error and a ValueError.
        OutputError: the output directory cannot be written (exit status 1). A schedsim.Error
            and an OSError.
        KeyboardInterrupt: interrupted by SIGINT (nothing is kept).
        TypeError: ``scenario`` or ``set`` has the wrong type.
    """
    path, text = _source(scenario)
    sets = []
    if set is not None:
        if not isinstance(set, dict):
            raise TypeError("set must be a dict {PATH: VALUE}, not " + type(set).__name__)
        for k, v in set.items():
            if not isinstance(k, str):
                raise TypeError("set: a PATH must be a str, not " + type(k).__name__)
            # A str is passed as the string itself (never JSON-encoded and decoded again); any
            # other value as JSON text. Text that is not UTF-8 (lone surrogates) and NaN or
            # infinity (not JSON) raise ScenarioError (a ValueError) here.
            _utf8(k, "set: PATH")
            if isinstance(v, str):
                sets.append((k, _utf8(v, "set: " + k), False))
            else:
                sets.append((k, _json_bytes(v, "set: " + k), True))
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0 or seed >= 2 ** 64:
            raise ScenarioError(["--seed: {!r}: must be an integer from 0 to 18446744073709551615".format(seed)])
    if until is not None:
        until = float(until)
    with _tempfile.TemporaryDirectory(prefix="schedsim-") as tmp:
        directory = out if out is not None else _os.path.join(tmp, "out")
        code, table, err = _run(path, text, sets, seed, until, _os.fsencode(directory), skip_bad_rows)
        lines = [line for line in err.splitlines() if line]
        if code == 2:
            raise ScenarioError(lines)
        if code == 1:
            raise OutputError("\n".join(lines))
        if code in (130, 143):
            raise KeyboardInterrupt("\n".join(lines))
        if code != 0:
            raise Error("\n".join(lines) or "schedsim run failed with status {}".format(code))
        return RunResult(directory, table, lines, out)


def register_queue_order(name, rank):
    """Registers a queue order written in Python under ``name`` (docs/python.md "Policy plugins").

    ``rank(task, task_id)`` gets the waiting task's ``TaskSpec`` (times in ms) and id and returns
    its sort key: a number, or a tuple of 1 to 3 numbers compared in order (compared as floats;
    missing items count as 0). Smaller goes first; ties by task name, then id. It is called once
    per task when the task is enqueued, so it must depend on the task alone (as every libsched
    queue order; docs/architecture.md "Plugins").

    The name then works wherever a queue order is named: ``run(..., set={"scheduler.queue_order":
    name})``, a scenario's ``scheduler.queue_order`` run through ``run``, and
    ``SchedulerOptions(queue_order=name)``. Registrations last as long as the process.

    Raises:
        InvalidArgument: ``name`` is taken (a builtin or an earlier registration), empty, longer
            than 64 characters or not printable ASCII without spaces; ``rank`` is not callable.

    During a simulation, whatever ``rank`` raises is raised by ``run`` (or ``Scheduler.schedule``
    / ``enqueue``) as is; a result that is not a number or a tuple of 1 to 3 numbers raises
    TypeError / ValueError naming the plugin and the task. The run then writes nothing.
    """
    _register_queue_order(name, rank)


def register_placement(name, score):
    """Registers a placement policy written in Python under ``name`` (docs/python.md "Policy
    plugins").

    ``score(node, shape)`` gets a ``NodeInfo`` snapshot of a node the replica fits on and the
    replica's ``ReplicaShape`` and returns a number; the replica goes to the node with the
    highest score (ties: the lowest node id), as every libsched placement policy
    (docs/architecture.md "Plugins"). It must be a pure function of its arguments: the scheduler
    may reuse it for replicas of equal shape.

    The name then works as ``scheduler.placement`` in ``run`` and in
    ``SchedulerOptions(placement=name)``. Raises InvalidArgument as ``register_queue_order``;
    errors during a run as there (TypeError for a non-number, ValueError for NaN).
    """
    _register_placement(name, score)


def registered_plugins():
    """The registered plugin names by kind: ``{"placement": [...], "queue_order": [...],
    "victim_order": [...], "admission": [...]}``, each sorted (builtin and Python ones)."""
    return _registered_plugins()


def default_scenario(seed=1):
    """The embedded default scenario as a dict (what ``schedsim show-default --seed SEED``
    prints and ``run(None, seed=SEED)`` runs)."""
    return _json.loads(default_scenario_json(seed))
