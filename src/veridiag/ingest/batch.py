"""Several files and folders in one import: each file read as it comes, and per file what was
taken (services, series, lines) and what was left and why.

A folder stands for its files of the kind imported (``*.csv`` for metrics), in name order. A
file that holds something else than what is imported is left with a reason that says where it
goes instead (a call graph: ``import-dependencies``), never read as something it is not; one
that cannot be read fails alone, the others are still imported.
"""

from __future__ import annotations

import csv
import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, computed_field

from veridiag.ingest.columns import edge_role, is_time_name, role_of
from veridiag.ingest.importers import (
    ImportFailedError,
    ImportReport,
    LogStore,
    MetricFormat,
    import_logs,
    import_metrics,
)
from veridiag.ingest.metric_files import csv_header
from veridiag.ingest.spanfiles import SpanFormat
from veridiag.tools.backends.embedded import EmbeddedEnvironment

if TYPE_CHECKING:
    from veridiag.ingest.traces import SpanStore

#: Bytes of the files done so far, and the file being read.
BatchProgress = Callable[[int, str], None]
Outcome = Literal["imported", "skipped", "failed"]
_GRAPH_ROWS = 100_000  # rows of a call graph read for its services' names


class FileResult(BaseModel):
    """One file of a batch: imported (with its report), skipped (by a rule, with why) or failed."""

    path: str
    outcome: Outcome
    why: str = ""
    report: ImportReport | None = None


class BatchReport(BaseModel):
    """What a batch import did, file by file (``data import-* --json`` prints it for several files)."""

    files: list[FileResult] = Field(default_factory=list)
    seconds: float = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def imported(self) -> int:
        return sum(f.report.imported for f in self.files if f.report is not None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def duplicates(self) -> int:
        return sum(f.report.duplicates for f in self.files if f.report is not None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def in_file(self) -> int:
        """Of ``duplicates``, the rows repeating an earlier row of their own file."""
        return sum(f.report.in_file for f in self.files if f.report is not None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def services(self) -> list[str]:
        return sorted({s for f in self.files if f.report is not None for s in f.report.services})

    def counts(self) -> dict[Outcome, int]:
        found: dict[Outcome, int] = {"imported": 0, "skipped": 0, "failed": 0}
        for result in self.files:
            found[result.outcome] += 1
        return found


def expand(paths: Sequence[Path], pattern: str) -> list[Path]:
    """The files named, and the files of each folder named that match ``pattern`` (name order,
    hidden files left out); a path that does not exist fails the whole import before anything
    is read."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.glob(pattern) if p.is_file() and not p.name.startswith("."))
            if not inside:
                raise ImportFailedError(f"{path}: no {pattern} file in this folder")
            found += inside
        elif path.exists():
            found.append(path)
        else:
            raise ImportFailedError(f"{path}: no such file or folder")
    return list(dict.fromkeys(found))


# -- metrics --------------------------------------------------------------------------------------


def _owned(header: list[str], service_label: str) -> bool:
    """The CSV names whose rows they are (a service, pod or container column)."""
    return any(name.lower() == service_label.lower() or role_of(name) is not None for name in header)


def _rank(header: list[str] | None, service_label: str) -> int:
    """Files with pod columns first: their services are Kubernetes names as written, which a
    service column spelt another way (``Frontend``) then takes; then the other owned files."""
    if header is None or not _owned(header, service_label):
        return 2
    return 0 if any(role_of(name) == "pod" for name in header) else 1


def _call_graph(header: list[str]) -> bool:
    roles = {edge_role(name) for name in header}
    return {"caller", "callee"} <= roles and not any(is_time_name(name) for name in header)


def _pairs(header: list[str], known: Iterable[str]) -> list[str]:
    """Value columns named ``<caller>_<callee>`` after two known services (nezha's
    ``frontend_currencyservice``), when every value column is so named; else none."""
    services = {name.lower() for name in known}
    values = [name for name in header if name and not is_time_name(name)]

    def pair(name: str) -> bool:
        lowered = name.lower()
        return any(
            lowered[:cut] in services and lowered[cut + 1 :] in services
            for cut in range(1, len(lowered) - 1)
            if lowered[cut] == "_"
        )

    return values if values and all(pair(name) for name in values) else []


def import_metric_files(
    env: EmbeddedEnvironment,
    paths: Sequence[Path],
    *,
    service: str | None = None,
    metric: str | None = None,
    unit: str | None = None,
    fmt: MetricFormat = "auto",
    tz: str = "UTC",
    service_label: str = "service",
    progress: BatchProgress | None = None,
) -> BatchReport:
    """Metric files and folders (their ``*.csv``) into the embedded store, each as
    ``import_metrics`` reads it. Files that name their rows' service (a service, pod or
    container column) go first — pods before the rest —, so the services they bring are known
    when the others are read:

    * a call graph (caller and callee columns, no time) is left for ``import-dependencies``;
    * a file whose every value column is named ``<caller>_<callee>`` after two services known
      (stored, in the stored call graph, or in a call graph of the same import) holds per-edge series (nezha's
      ``source_50.csv``): left, because a series belongs to one service and which end's it is
      the file does not say — the call graph itself is imported with ``import-dependencies``,
      and each end's own latency with its pod's file;
    * a file that names no service, without ``--service``, is left saying so.
    """
    started = time.perf_counter()
    files = expand(paths, "*.csv")
    headers = {path: csv_header(path) if fmt in ("auto", "csv") else None for path in files}
    ordered = sorted(files, key=lambda p: _rank(headers[p], service_label))
    graph = {name for p in files if (h := headers[p]) is not None and _call_graph(h) for name in _graph_ends(p, h)}
    options = _MetricOptions(service, metric, unit, fmt, tz, service_label, frozenset(graph))
    report = BatchReport()
    done = 0
    for path in ordered:
        if progress is not None:
            progress(done, path.name)
        report.files.append(_one_metric_file(env, path, headers[path], options))
        done += path.stat().st_size
    if progress is not None:
        progress(done, "")
    order = {path: index for index, path in enumerate(files)}
    report.files.sort(key=lambda result: order[Path(result.path)])
    report.seconds = round(time.perf_counter() - started, 3)
    return report


@dataclass(frozen=True)
class _MetricOptions:
    service: str | None
    metric: str | None
    unit: str | None
    fmt: MetricFormat
    tz: str
    service_label: str
    #: Services a call graph of the same import names.
    graph: frozenset[str] = frozenset()


def _graph_ends(path: Path, header: list[str]) -> set[str]:
    """The services a call-graph CSV names (its caller and callee cells)."""
    ends = [j for j, name in enumerate(header) if edge_role(name) in ("caller", "callee")]
    found: set[str] = set()
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        for row in itertools.islice(csv.reader(handle), 1, _GRAPH_ROWS):
            found.update(row[j].strip() for j in ends if j < len(row) and row[j].strip())
    return found


def _one_metric_file(
    env: EmbeddedEnvironment, path: Path, header: list[str] | None, options: _MetricOptions
) -> FileResult:
    where = str(path)
    service, service_label = options.service, options.service_label
    if header is not None and _call_graph(header):
        ends = [name for name in header if edge_role(name) in ("caller", "callee")]
        why = f"a call graph ({' → '.join(ends[:2])}), not metrics: import it with `veridiag data import-dependencies`"
        return FileResult(path=where, outcome="skipped", why=why)
    if header is not None and service is None and not _owned(header, service_label):
        stored_graph = [end for edge in env.dependencies() for end in edge]
        pairs = _pairs(header, [*env.services(), *options.graph, *stored_graph])
        if pairs:
            why = (
                f"{len(pairs)} series named caller_callee ({pairs[0]}, …): a series belongs to one service and "
                "the file does not say which end's these are; the call graph goes in with "
                "`veridiag data import-dependencies`, each service's own latency with its pod's file"
            )
            return FileResult(path=where, outcome="skipped", why=why)
        why = "no column says whose rows they are (PodName, service, container …): pass --service to import it"
        return FileResult(path=where, outcome="skipped", why=why)
    try:
        done = import_metrics(
            env,
            path,
            service=service,
            metric=options.metric,
            unit=options.unit,
            fmt=options.fmt,
            tz=options.tz,
            service_label=service_label,
        )
    except ImportFailedError as exc:
        return FileResult(path=where, outcome="failed", why=str(exc).removeprefix(f"{path}: "))
    return FileResult(path=where, outcome="imported", report=done)


# -- logs -------------------------------------------------------------------------------------------


def import_log_files(
    env: EmbeddedEnvironment,
    paths: Sequence[Path],
    *,
    service: str | None = None,
    fmt: str = "auto",
    time_format: str | None = None,
    year: int | None = None,
    tz: str = "UTC",
    progress: BatchProgress | None = None,
    logs: LogStore | None = None,
) -> BatchReport:
    """Log files and folders (every file in them) into ``logs`` (default: the embedded file),
    each as ``import_logs`` reads it — the format detected per file, container records' pods
    naming their services unless ``service`` does."""
    started = time.perf_counter()
    files = expand(paths, "*")
    report = BatchReport()
    done = 0
    for path in files:
        offset = done

        def moved(read: int, offset: int = offset, name: str = path.name) -> None:
            if progress is not None:
                progress(offset + read, name)

        if progress is not None:
            progress(done, path.name)
        try:
            imported = import_logs(
                env,
                path,
                service=service,
                fmt=fmt,
                time_format=time_format,
                year=year,
                tz=tz,
                progress=moved,
                logs=logs,
            )
        except ImportFailedError as exc:
            report.files.append(FileResult(path=str(path), outcome="failed", why=str(exc).removeprefix(f"{path}: ")))
        else:
            report.files.append(FileResult(path=str(path), outcome="imported", report=imported))
        done += path.stat().st_size
    if progress is not None:
        progress(done, "")
    report.seconds = round(time.perf_counter() - started, 3)
    return report


# -- call graphs ------------------------------------------------------------------------------------


def import_dependency_files(
    env: EmbeddedEnvironment, paths: Sequence[Path], *, progress: BatchProgress | None = None
) -> BatchReport:
    """Call-graph files and folders (their ``*.csv``): edge lists and span CSVs, each a source
    of its own (``ingest.dependencies``)."""
    from veridiag.ingest.dependencies import import_dependencies

    started = time.perf_counter()
    report = BatchReport()
    done = 0
    for path in expand(paths, "*.csv"):
        if progress is not None:
            progress(done, path.name)
        try:
            imported = import_dependencies(env, path)
        except ImportFailedError as exc:
            report.files.append(FileResult(path=str(path), outcome="failed", why=str(exc).removeprefix(f"{path}: ")))
        else:
            report.files.append(FileResult(path=str(path), outcome="imported", report=imported))
        done += path.stat().st_size
    if progress is not None:
        progress(done, "")
    report.seconds = round(time.perf_counter() - started, 3)
    return report


# -- traces -----------------------------------------------------------------------------------------


def import_trace_files(
    env: EmbeddedEnvironment,
    paths: Sequence[Path],
    *,
    service: str | None = None,
    fmt: SpanFormat = "auto",
    progress: BatchProgress | None = None,
    store: SpanStore | None = None,
) -> BatchReport:
    """Span files and folders (every file in them) into the embedded file (or ``store``), each as
    ``import_traces`` reads it; files overlapping in time merge exactly (``ingest.traces``)."""
    from veridiag.ingest.traces import import_traces

    started = time.perf_counter()
    report = BatchReport()
    done = 0
    for path in expand(paths, "*"):
        if progress is not None:
            progress(done, path.name)
        try:
            imported = import_traces(env, path, service=service, fmt=fmt, store=store)
        except ImportFailedError as exc:
            report.files.append(FileResult(path=str(path), outcome="failed", why=str(exc).removeprefix(f"{path}: ")))
        else:
            report.files.append(FileResult(path=str(path), outcome="imported", report=imported))
        done += path.stat().st_size
    if progress is not None:
        progress(done, "")
    report.seconds = round(time.perf_counter() - started, 3)
    return report
