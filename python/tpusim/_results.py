"""What a run returns: tpusim.Result, and tpusim.Table for compare, bench and sweep.

The fields are read from the report `tpusim run --json` prints (tools/tpusim/kernel_run.cc,
ToJson); the metrics are the one table of the C++ code (tools/tpusim/run_metrics.h,
MetricFields), so a metric added there appears here with no change.
"""

import dataclasses
import html
import json
from typing import Optional

from . import _core

_METRIC_FIELDS = _core.metric_fields()
_METRIC_TYPES = {"check": bool, "count": int, "number": float}

# Every metric of RunMetrics under its JSON key (sim_time_ns, busbw_gbps, ...); None when
# it does not apply to the run.
Metrics = dataclasses.make_dataclass(
    "Metrics",
    [(f["key"], Optional[_METRIC_TYPES[f["kind"]]],
      dataclasses.field(default=None, metadata={"label": f["label"],
                                                "description": f["description"]}))
     for f in _METRIC_FIELDS],
    namespace={"__doc__": "The metrics of one run (tools/tpusim/run_metrics.h)."},
)
Metrics.__module__ = "tpusim"


def _metrics_from(report):
    values = {}
    for f in _METRIC_FIELDS:
        value = report.get(f["key"])
        values[f["key"]] = None if value is None else _METRIC_TYPES[f["kind"]](value)
    return Metrics(**values)


@dataclasses.dataclass
class Op:
    """One row of a program's per-op table (the device whose program ended last)."""
    name: str
    op: str
    kind: str
    is_async: bool
    count: int
    total_ns: float
    share: float  # of the simulated time
    exposed_ns: float


@dataclasses.dataclass
class Collective:
    """One lax collective of a program: the algorithm it ran and where its time went."""
    step: str
    op: str
    algorithm: str
    forced: bool  # chosen by collective_algorithm= rather than by its cost estimate
    count: int
    bytes: int
    total_ns: float
    busiest_link_bytes: int
    latency_ns: float
    bandwidth_ns: float


def _op(row):
    row = dict(row)
    row["is_async"] = row.pop("async")
    return Op(**row)


@dataclasses.dataclass(repr=False)
class Result:
    """One run: what `tpusim run ENTRY --json` reports, as typed fields."""
    entry: str
    kind: str  # "kernel" or "program"
    topology: str
    chips: int  # physical chips
    devices: int  # the mesh's devices: the chips, or their chiplets (TPU7x)
    timing_only: bool
    completed: bool
    metrics: Metrics
    ops: list
    collectives: list
    collective_algorithm: Optional[str]
    trace: Optional[str]  # the trace file's path (trace=...), None without one
    params: dict  # the entry's parameters as the run used them, defaults included
    contract: str  # inputs, specs and outputs: what the entry computes
    notes: list
    mismatch: str  # where the data differs from the host reference, when it does
    error_kind: Optional[str]
    error: Optional[str]
    outputs: list  # functional runs: the global outputs (numpy arrays)
    device_outputs: list  # ... and each device's block, [output][device]
    report: dict  # the whole JSON report
    human: dict  # each metric as `tpusim run` prints it ("1.234 ms")

    @classmethod
    def from_report(cls, report_json, outputs=(), device_outputs=()):
        report = json.loads(report_json)
        return cls(
            entry=report["kernel"], kind=report["kind"], topology=report["topology"],
            chips=report["chips"], devices=report.get("devices", report["chips"]), timing_only=report["timing_only"],
            completed=report["completed"], metrics=_metrics_from(report),
            ops=[_op(row) for row in report.get("ops", [])],
            collectives=[Collective(**row) for row in report.get("collectives", [])],
            collective_algorithm=report.get("collective_algorithm"), trace=report["trace"],
            params=report["params"], contract=report["contract"],
            notes=report.get("notes", []), mismatch=report.get("mismatch", ""),
            error_kind=report.get("error_kind"), error=report.get("error"),
            outputs=list(outputs), device_outputs=[list(d) for d in device_outputs],
            report=report, human=_core.human_metrics(report_json))

    @property
    def simulated_seconds(self):
        """When the last chip finished, in seconds of simulated time."""
        ns = self.metrics.sim_time_ns
        return None if ns is None else ns / 1e9

    @property
    def correct(self):
        """True or False when the data was checked against the host reference, else None."""
        return self.metrics.correct

    @property
    def ok(self):
        """Completed, and the data matched when it was checked (the CLI's exit status 0)."""
        return self.completed and self.correct is not False

    def __getattr__(self, name):
        # Every metric is also a field of the result: r.busbw_gbps is r.metrics.busbw_gbps.
        if name != "metrics" and "metrics" in self.__dict__ and hasattr(self.metrics, name):
            return getattr(self.metrics, name)
        raise AttributeError(f"tpusim.Result has no field '{name}'")

    def _lines(self):
        lines = []
        for f in _METRIC_FIELDS:
            if getattr(self.metrics, f["key"]) is not None:
                lines.append((f["label"], self.human[f["key"]], f["description"]))
        return lines

    def _title(self):
        mode = "timing only" if self.timing_only else "functional"
        size = f"{self.chips} chips"
        if self.devices != self.chips:
            size += f", {self.devices} devices"
        return f"{self.entry} on {self.topology} ({size}, {mode})"

    def __repr__(self):
        text = [f"<tpusim.Result {self._title()}"]
        if not self.completed:
            text.append(f"  FAILED ({self.error_kind}): {self.error}")
        text += [f"  {label:<16} {value}" for label, value, _ in self._lines()]
        if self.trace:
            text.append(f"  {'trace':<16} {self.trace}")
        if self.ops:
            text.append(f"  {'ops':<16} {len(self.ops)} (longest: {self.ops[0].name})")
        return "\n".join(text) + ">"

    def _repr_html_(self):
        rows = "".join(
            f"<tr><td>{html.escape(label)}</td><td>{html.escape(value)}</td>"
            f"<td>{html.escape(description)}</td></tr>"
            for label, value, description in self._lines())
        ops = ""
        if self.ops:
            ops = "<tr><th>op</th><th>count</th><th>total</th></tr>" + "".join(
                f"<tr><td>{html.escape(o.name)}</td><td>{o.count}</td>"
                f"<td>{o.total_ns / 1e3:.3f} us</td></tr>" for o in self.ops[:10])
            ops = f"<table>{ops}</table>"
        return (f"<b>{html.escape(self._title())}</b><table>{rows}</table>{ops}")

    def to_dict(self):
        """The run as plain values: the identifying fields and every metric, flattened;
        ops and collectives as lists of dicts. Outputs are left out (they are arrays)."""
        values = {
            "entry": self.entry, "kind": self.kind, "topology": self.topology,
            "chips": self.chips, "devices": self.devices, "timing_only": self.timing_only,
            "completed": self.completed, "error_kind": self.error_kind, "error": self.error,
            "trace": self.trace, "collective_algorithm": self.collective_algorithm,
        }
        values.update(dataclasses.asdict(self.metrics))
        values["params"] = dict(self.params)
        values["ops"] = [dataclasses.asdict(o) for o in self.ops]
        values["collectives"] = [dataclasses.asdict(c) for c in self.collectives]
        return values

    def to_pandas(self):
        """A one-row pandas.DataFrame of to_dict()'s scalars and the parameters."""
        return _frame([self])


def _row(result):
    row = {k: v for k, v in result.to_dict().items()
           if k not in ("params", "ops", "collectives")}
    row.update({f"param.{k}": v for k, v in result.params.items()})
    return row


def _frame(results):
    try:
        import pandas
    except ImportError as missing:
        raise ImportError(
            "to_pandas() needs pandas, which is not installed; install it (apt-get install "
            "python3-pandas, or pip install pandas), or use to_dict().") from missing
    return pandas.DataFrame([_row(r) for r in results])


class Table:
    """The runs of compare, bench or sweep, in order: a list of tpusim.Result."""

    def __init__(self, title, results):
        self.title = title
        self.results = list(results)

    def __len__(self):
        return len(self.results)

    def __iter__(self):
        return iter(self.results)

    def __getitem__(self, index):
        return self.results[index]

    # The columns every table shows; the metric columns are those some run has.
    def _columns(self):
        keys = [f for f in _METRIC_FIELDS
                if f["key"] not in ("wall_seconds", "events", "events_per_second",
                                    "process_seconds", "peak_rss_mib")
                and any(getattr(r.metrics, f["key"]) is not None for r in self.results)]
        swept = [name for name in (self.results[0].params if self.results else {})
                 if len({str(r.params.get(name)) for r in self.results}) > 1]
        return swept, keys

    def _cells(self):
        swept, keys = self._columns()
        header = ["entry", "topology"] + swept + [f["header"] for f in keys]
        rows = [[r.entry, r.topology] + [str(r.params[name]) for name in swept] +
                [r.human[f["key"]] for f in keys] for r in self.results]
        return header, rows

    def __repr__(self):
        header, rows = self._cells()
        widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
                 for row in [header] + rows]
        return f"<tpusim.Table {self.title}\n" + "\n".join(lines) + ">"

    def _repr_html_(self):
        header, rows = self._cells()
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in rows)
        return f"<b>{html.escape(self.title)}</b><table><tr>{head}</tr>{body}</table>"

    def to_dict(self):
        """{"title": ..., "runs": [each run's to_dict()]}."""
        return {"title": self.title, "runs": [r.to_dict() for r in self.results]}

    def to_pandas(self):
        """One row per run: its fields, metrics and parameters (param.NAME)."""
        return _frame(self.results)
