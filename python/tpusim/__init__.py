"""tpusim from Python: time a JAX program, an HLO module or a registry entry on a
simulated TPU slice (docs/python.md).

    import tpusim
    r = tpusim.run(jax.jit(f).lower(x).compile(), topology="v5e-2x4", timing_only=True)
    r.simulated_seconds, r.ops[:5], r.to_pandas()

Built by the CMake build into build/python: `PYTHONPATH=build/python python3`.
"""

import builtins
import dataclasses
import itertools
import os

import numpy as np

from . import _core
from ._errors import (CapacityError, DeadlockError, Error, InvalidArgumentError,
                      KernelMisuseError, OutOfBoundsError, RaceError, SemaphoreMisuseError,
                      SemaphoreNotZeroError, TimeLimitError, InterruptedRunError,
                      error_for)
from ._results import Collective, Metrics, Op, Result, Table

try:
    import ml_dtypes
except ImportError:  # not packaged for Debian 12: bf16 outputs come back as float32
    ml_dtypes = None

__all__ = [
    "run", "compare", "bench", "sweep", "topologies", "list", "Result", "Table", "Metrics",
    "Op", "Collective", "Topology", "Entry", "Error", "InvalidArgumentError", "DeadlockError",
    "SemaphoreNotZeroError", "SemaphoreMisuseError", "RaceError", "KernelMisuseError",
    "OutOfBoundsError", "CapacityError", "TimeLimitError", "InterruptedRunError",
    "RUN_OPTIONS"
]

# The run options, as `tpusim run` declares them (tools/tpusim/common_options.h): the
# flag without its dashes, '-' spelled '_' (timing_only, time_limit, no_race_check, ...).
RUN_OPTIONS = {name: (flag, takes_value) for name, flag, takes_value in _core.run_options()}


@dataclasses.dataclass(frozen=True)
class Topology:
    """A slice preset, usable as topology=name."""
    name: str
    chips: int  # physical chips
    devices: int  # JAX devices: the chips, or their chiplets (TPU7x: two per chip)
    shape: str  # "2x4"
    axes: tuple
    wraparound: tuple  # per axis
    chip: str
    twisted: bool = False  # a twisted torus (docs/model.md, "Twisted tori")


@dataclasses.dataclass(frozen=True)
class Entry:
    """A kernel or program of the registry, usable as run's target."""
    name: str
    kind: str  # "kernel" or "program"
    summary: str
    family: str
    params: tuple  # the parameters it declares, each a keyword argument of run()


def topologies():
    """The slice presets (`tpusim topologies`)."""
    return [Topology(t["name"], t["chips"], t["devices"], t["shape"], tuple(t["axes"]),
                     tuple(t["wraparound"]), t["chip"], t["twisted"])
            for t in _core.topologies()]


def _entries():
    return [Entry(e["name"], e["kind"], e["summary"], e["family"],
                  tuple(_core.entry_params(e["name"]))) for e in _core.entries()]


def _entry_name(target):
    """The registry entry `target` stands for, an HLO module registered as one."""
    if hasattr(target, "as_text"):  # a JAX Compiled or Lowered
        return _core.register_hlo_text(target.as_text())
    if isinstance(target, os.PathLike):
        return _core.register_hlo_file(os.fspath(target))
    if not isinstance(target, str):
        raise InvalidArgumentError(
            f"the target is a {type(target).__name__}; give a registry entry's name "
            "(tpusim.list()), HLO text, the path of an HLO file, or an object with "
            ".as_text() such as jax.jit(f).lower(x).compile().")
    if _core.is_entry(target):
        return target
    if "HloModule" in target and "\n" in target.strip():
        return _core.register_hlo_text(target)
    if _core.is_hlo_path(target):
        return _core.register_hlo_file(target)
    return target  # unknown: run() says so, naming the known entries


def _split_options(kwargs):
    """Run options as `tpusim run` flags, and the rest: the entry's parameters."""
    flags, params = [], {}
    for name, value in kwargs.items():
        if name not in RUN_OPTIONS:
            params[name] = value
            continue
        flag, takes_value = RUN_OPTIONS[name]
        if takes_value:
            flags.append(f"{flag}={value}")
        elif value is True:
            flags.append(flag)
        elif value is not False:
            raise InvalidArgumentError(f"{name}={value!r}; give {name}=True or {name}=False.")
    return flags, params


def _to_core(array):
    array = np.asarray(array)
    if array.dtype == np.float64:  # numpy's default: the entry's float type rounds it
        array = array.astype(np.float32)
    return np.ascontiguousarray(array)


def _from_core(array):
    # bf16 crosses as its 16 bits (python/module.cc).
    if array.dtype != np.uint16:
        return array
    if ml_dtypes is not None:
        return array.view(ml_dtypes.bfloat16)
    return (array.astype(np.uint32) << 16).view(np.float32)


def _inputs(inputs):
    if inputs is None:
        return []
    # Each input as a list: [the global array], or every device's block.
    return [[_to_core(block) for block in given]
            if isinstance(given, (builtins.list, tuple)) else [_to_core(given)]
            for given in inputs]


def run(target, topology=None, *, inputs=None, trace=None, **options):
    """Runs `target` on slice `topology` and returns a tpusim.Result.

    target: a registry entry's name (tpusim.list()), HLO text, the path of an HLO file, or
    an object with .as_text() (a JAX Compiled). options: the run options (RUN_OPTIONS:
    timing_only=True, time_limit=2, collective_algorithm="ring", ...) and the entry's
    parameters (bytes="16M", axis="x", ...). inputs: per entry input, one global numpy
    array or a list of each device's block, for a functional run (the data is then not
    checked against the entry's host reference, which is for its own inputs). trace: write a trace file here (.pftrace or
    .json). A run that fails raises the tpusim.Error of its kind, with the report in
    .report.
    """
    name = _entry_name(target)
    flags, params = _split_options(options)
    report, outputs, device_outputs = _core.run(
        name, topology or "", params, flags, os.fspath(trace) if trace else "",
        _inputs(inputs), not options.get("timing_only", False))
    result = Result.from_report(report, [_from_core(o) for o in outputs],
                                [[_from_core(b) for b in d] for d in device_outputs])
    if not result.completed:
        raise error_for(result.error_kind, result.error, result)
    return result


def _run_entry(name, topology, options):
    """run() with only the parameters `name` declares (compare, bench and sweep pass
    one set of parameters to entries that take different ones)."""
    declared = set(_core.entry_params(name))
    kept = {k: v for k, v in options.items() if k in RUN_OPTIONS or k in declared}
    return run(name, topology, **kept)


def _expand(targets):
    if isinstance(targets, str) or hasattr(targets, "as_text"):
        targets = [targets]
    names = []
    for target in targets:
        names += _core.family_members(_entry_name(target))
    return names


def compare(targets, topology=None, **options):
    """Runs schedules of one computation side by side (`tpusim compare`): checks first that
    they compute the same thing, then runs each. A family name stands for its members.
    Returns a tpusim.Table."""
    names = _expand(targets)
    flags, params = _split_options(options)
    _core.check_same_computation(names, topology or "", params, flags)
    return Table(f"compare on {topology}", [_run_entry(n, topology, options) for n in names])


def bench(targets, topology=None, *, sizes=None, param="bytes", **options):
    """Runs each target at each of `sizes` (values of parameter `param`, "bytes" by
    default: "1M", "16M", ...), as `tpusim bench --sweep` does. Returns a tpusim.Table."""
    if not sizes:
        raise InvalidArgumentError(
            f"bench needs the sizes to run, e.g. sizes=['1M', '4M', '16M'] (values of "
            f"{param}).")
    names = _expand(targets)
    runs = [_run_entry(n, topology, {**options, param: size}) for n in names for size in sizes]
    return Table(f"bench on {topology}", runs)


def sweep(target, topology=None, **options):
    """Runs the product of the values given as lists (`tpusim sweep --param`): e.g.
    sweep("all_gather_ring", topology=["v5e-2x2", "v5e-4x4"], bytes=["1M", "4M"]).
    Returns a tpusim.Table, one run per point in order."""
    fixed = {"topology": topology, **options}
    axes = {k: v for k, v in fixed.items() if isinstance(v, (builtins.list, tuple, range))}
    if not axes:
        raise InvalidArgumentError(
            "sweep needs at least one list of values to sweep, e.g. bytes=['1M', '4M'] or "
            "topology=['v5e-2x2', 'v5e-4x4'].")
    runs = []
    for values in itertools.product(*axes.values()):
        point = {**fixed, **dict(zip(axes, values))}
        slice_name = point.pop("topology")
        runs.extend(_run_entry(n, slice_name, point) for n in _expand(target))
    return Table(f"sweep of {', '.join(axes)}", runs)


def list():  # noqa: A001 (the name a user expects: tpusim.list())
    """The kernels and programs run accepts (`tpusim list`), HLO modules run so far
    included."""
    return _entries()
