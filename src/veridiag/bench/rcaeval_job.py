"""The baseline's own process: RCAEval's BARO and n-sigma on Nezha pod metrics.

``bench/rcaeval.py`` runs this file with the Python of the baseline's virtual environment
(Python 3.12, RCAEval 1.8.1, pandas, scikit-learn: ``rcaeval-requirements.txt``), as
``python -I rcaeval_job.py`` with a job on stdin; it prints one JSON document on stdout.
So it imports nothing but the standard library (a test reads its imports): pandas and RCAEval
are imported by name inside ``main`` (typed ``Any``: veridiag's environment has neither), and
everything else here is plain Python that veridiag's tests exercise without them.

What RCAEval's methods expect (``RCAEval.e2e.baro`` / ``nsigma``, and how its ``main.py`` feeds
them): one ``pandas.DataFrame`` with a ``time`` column (epoch seconds) and one numeric column
per ``<service>_<metric>``; the inject time as epoch seconds, rows before it being the normal
period and rows from it on the anomalous one; ``dataset`` set (any name other than
``causalrca-sock-shop``) so that their preprocessing drops ``time`` and constant columns;
infinities read as missing, then forward-filled, then 0 — ``main.py``'s own steps. Each
method returns ``{"ranks": [column, ...]}``, most suspect first.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import importlib
import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, TypedDict

#: A method: RCAEval's calling convention (frame, inject time, keywords) → {"ranks": [...]}.
Method = Callable[..., Mapping[str, Any]]
#: Builds what a method reads from the column names and the rows (RCAEval: a DataFrame).
FrameBuilder = Callable[[list[str], list[dict[str, float | None]]], Any]


class MetricFile(TypedDict):
    service: str
    path: str


class CaseJob(TypedDict):
    id: str
    #: Epoch seconds: the injection, where the normal period ends and the anomalous one starts.
    inject: int
    #: Epoch seconds: the normal period's first moment, the anomalous period's end (excluded).
    normal_start: int
    anomal_end: int


class Job(TypedDict):
    #: RCAEval's ``dataset`` argument: any name but ``causalrca-sock-shop`` turns on its preprocessing.
    dataset: str
    methods: list[str]
    metrics: list[MetricFile]
    cases: list[CaseJob]
    #: The column holding each row's time in epoch seconds.
    time_column: str
    #: The headers read as series (others are left out; one a file lacks is simply absent).
    columns: list[str]


class MethodResult(TypedDict):
    ranks: list[str]
    seconds: float
    error: str | None


class CaseOutput(TypedDict):
    id: str
    normal_rows: int
    anomal_rows: int
    methods: dict[str, MethodResult]


class Output(TypedDict):
    versions: dict[str, str]
    columns: int
    #: Rows without a readable time, and values that were no numbers (read as missing; an
    #: empty cell or ``NaN`` is a missing value, not an unreadable one).
    unreadable_rows: int
    unreadable_values: int
    load_seconds: float
    cases: list[CaseOutput]


class Table:
    """Every pod's series on one clock: a row per minute, ``time`` the latest sample in it."""

    def __init__(self) -> None:
        self.columns: list[str] = []
        #: minute → the latest sample time in it (epoch seconds), and its values by column.
        self.times: dict[int, int] = {}
        self.values: dict[int, dict[str, float | None]] = {}
        self.unreadable_rows = 0
        self.unreadable_values = 0

    def add_file(self, source: MetricFile, job: Job) -> None:
        """One pod's CSV. A column name is ``<service>_<header>``; a second pod of the same
        service gets ``#2`` after its names (RCAEval reads the service before the first ``_``)."""
        with Path(source["path"]).open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            headers = [h for h in reader.fieldnames or [] if h in job["columns"] and h != job["time_column"]]
            names = {header: self._name(source["service"], header) for header in headers}
            self.columns += names.values()
            for record in reader:
                moment, _readable = _number(record.get(job["time_column"]))
                if moment is None:
                    self.unreadable_rows += 1
                    continue
                stamp = int(moment)
                minute = stamp // 60
                # A minute's row is normal only if every sample in it came before the injection.
                self.times[minute] = max(self.times.get(minute, stamp), stamp)
                row = self.values.setdefault(minute, {})
                for header, name in names.items():
                    value, readable = _number(record.get(header))
                    self.unreadable_values += not readable
                    row[name] = value

    def _name(self, service: str, header: str) -> str:
        name, copy = f"{service}_{header}", 1
        while (f"{name}#{copy}" if copy > 1 else name) in self.columns:
            copy += 1
        return f"{name}#{copy}" if copy > 1 else name

    def window(self, start: int, end: int) -> list[dict[str, float | None]]:
        """The rows whose time is in ``[start, end)``, in time order, each with its ``time``."""
        minutes = sorted(minute for minute, stamp in self.times.items() if start <= stamp < end)
        return [{"time": float(self.times[minute]), **self.values[minute]} for minute in minutes]


def _number(text: str | None) -> tuple[float | None, bool]:
    """A finite float, or None for a missing value (empty, ``NaN``, an infinity: RCAEval's
    ``main.py`` reads infinities as missing too); the flag is False for text that is no number."""
    if text is None or not text.strip():
        return None, True
    try:
        value = float(text)
    except ValueError:
        return None, False
    return (value if math.isfinite(value) else None), True


def run(job: Job, methods: Mapping[str, Method], frame: FrameBuilder, versions: dict[str, str]) -> Output:
    """Every case of ``job`` through every method; a method that raises ranks nothing for that
    case and says why (``error``), the others go on."""
    started = time.perf_counter()
    table = Table()
    for source in job["metrics"]:
        table.add_file(source, job)
    load_seconds = time.perf_counter() - started
    cases: list[CaseOutput] = []
    for case in job["cases"]:
        rows = table.window(case["normal_start"], case["anomal_end"])
        normal = len(table.window(case["normal_start"], case["inject"]))
        results: dict[str, MethodResult] = {}
        for name in job["methods"]:
            data = functools.partial(frame, table.columns, rows)
            results[name] = _call(methods[name], data, case["inject"], job["dataset"])
        cases.append(CaseOutput(id=case["id"], normal_rows=normal, anomal_rows=len(rows) - normal, methods=results))
    return Output(
        versions=versions,
        columns=len(table.columns),
        unreadable_rows=table.unreadable_rows,
        unreadable_values=table.unreadable_values,
        load_seconds=round(load_seconds, 4),
        cases=cases,
    )


def _call(method: Method, data: Callable[[], Any], inject: int, dataset: str) -> MethodResult:
    """``data`` builds the method's input: its cost is part of the case's, as in RCAEval's own runs."""
    started = time.perf_counter()
    try:
        # RCAEval prints as it goes; stdout carries only this process's JSON.
        with contextlib.redirect_stdout(sys.stderr):
            found = method(data(), inject, dataset=dataset, anomalies=None, dk_select_useful=False)
        ranks, error = [str(column) for column in found["ranks"]], None
    except Exception as exc:  # the baseline failing on one case is a result, not a crash
        ranks, error = [], f"{exc.__class__.__name__}: {exc}"
    return MethodResult(ranks=ranks, seconds=round(time.perf_counter() - started, 4), error=error)


def dataframe_builder(pandas: Any, numpy: Any) -> FrameBuilder:
    """Rows as RCAEval's ``main.py`` prepares a case: infinities missing, forward-filled, then 0."""

    def build(columns: list[str], rows: list[dict[str, float | None]]) -> Any:
        data = pandas.DataFrame.from_records(rows, columns=["time", *columns])
        data = data.replace([numpy.inf, -numpy.inf], numpy.nan).ffill().fillna(0)
        return data

    return build


def _versions(names: Iterable[str]) -> dict[str, str]:
    found = {}
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return found


def main() -> int:
    job: Job = json.load(sys.stdin)
    pandas = importlib.import_module("pandas")
    numpy = importlib.import_module("numpy")
    with contextlib.redirect_stdout(sys.stderr):
        e2e = importlib.import_module("RCAEval.e2e")
    methods = {name: getattr(e2e, name) for name in job["methods"]}
    versions = _versions(["rcaeval", "numpy", "pandas", "scikit-learn", "scipy"])
    versions["python"] = ".".join(str(part) for part in sys.version_info[:3])
    output = run(job, methods, dataframe_builder(pandas, numpy), versions)
    json.dump(output, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
