"""Users' data into the embedded backend: log files, metric files and change feeds, streamed.

The formats themselves live elsewhere — log formats in ``ingest.logformats`` (syslog, Apache /
nginx, JSON lines, logfmt, log4j-style, …), metric files in ``ingest.metric_files`` (CSV,
OpenMetrics, Prometheus JSON). This module connects them to the store: the service named at
import (or a structured service field), idempotent writes, what could not be read counted
and reported, never fatal unless nothing at all could be placed in time.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Literal, Protocol, Self
from zoneinfo import ZoneInfo

import dateparser
from pydantic import BaseModel, Field

from veridiag.ingest.logformats import LogFileReport, LogFormatError, read_log_file
from veridiag.ingest.metric_files import MetricFileError, MetricFileReport, read_metric_file
from veridiag.ingest.times import MONOTONIC, go_time
from veridiag.tools.backends.embedded import ChangeRow, EmbeddedEnvironment, LogRow, Written

Progress = Callable[[int], None]
MetricFormat = Literal["auto", "csv", "openmetrics", "prometheus-json"]
_METRIC_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


class LogStore(Protocol):
    """Where imported log lines go: the embedded file, or a ClickHouse ``otel_logs`` table."""

    def add_logs(self, rows: Iterable[LogRow]) -> Written: ...


class ImportFailedError(ValueError):
    """The file cannot be imported at all (not found, no timestamps recognised, bad header)."""


class ImportReport(BaseModel):
    """What an import did (``data import-* --json`` prints it). ``imported`` counts what is new
    in the store: 0 on a re-import."""

    imported: int = 0
    skipped: int = 0
    replaced_bytes_lines: int = 0
    first_skipped: list[int] = Field(default_factory=list)
    time_format: str = ""
    format: str = ""
    #: Rows not stored anew: already stored, or repeating a row of the file (``in_file`` of them).
    duplicates: int = 0
    #: Of ``duplicates``, the rows that repeat an earlier row of the same file: not "already stored".
    in_file: int = 0
    parsed: int = 0
    unparsed: int = 0
    continuation_lines: int = 0
    year: int | None = None
    year_source: str | None = None
    changes: int = 0
    services: list[str] = Field(default_factory=list)
    series: list[str] = Field(default_factory=list)
    #: Columns of a metric CSV that are not series, each with why ("TimeStamp: not a series — …").
    left_out: list[str] = Field(default_factory=list)
    #: Where the rows' service came from ("PodName (pod → workload)", "--service x").
    service_column: str = ""
    #: Services written in another case than a known one's, stored under the known spelling.
    respelt: list[str] = Field(default_factory=list)
    #: Container records: the format of the application lines inside them; lines that named no
    #: service (skipped, in ``skipped``); lines stored with their trace and span ids; records
    #: joined to the line before (split long lines), and partial lines whose end was missing.
    inner_format: str = ""
    #: A call graph: the edges it states between two services (``data import-dependencies``).
    edges: int = 0
    without_service: int = 0
    traced: int = 0
    partials_joined: int = 0
    partial_unfinished: int = 0
    #: Spans (``data import-traces``): traces they belong to, metric points derived (new or
    #: changed), minutes recomputed, and spans whose parent span is stored nowhere.
    traces: int = 0
    points: int = 0
    minutes: int = 0
    orphans: int = 0


def require_file(path: Path) -> None:
    """``path`` is a file, else ``ImportFailedError`` saying what it is not."""
    if not path.exists():
        raise ImportFailedError(f"{path}: no such file")
    if not path.is_file():
        raise ImportFailedError(f"{path}: not a file")


# -- logs ----------------------------------------------------------------------------------


def import_logs(
    env: EmbeddedEnvironment,
    path: Path,
    *,
    service: str | None,
    fmt: str = "auto",
    time_format: str | None = None,
    year: int | None = None,
    tz: str = "UTC",
    progress: Progress | None = None,
    logs: LogStore | None = None,
) -> ImportReport:
    """Stream ``path`` into ``logs`` (default: the embedded file; change records always go
    there); ``progress`` gets bytes read so far. ``time_format`` (a strptime layout of the
    leading timestamp) overrides ``fmt``. A line's service is its record's service field, else
    ``service``, else the workload of its container record's pod; a line with none of them is
    skipped and counted (the import fails when no line has one)."""
    require_file(path)
    if time_format:
        fmt = f"strptime:{time_format}"
    found = LogFileReport()
    changes: list[ChangeRow] = []
    services: set[str] = set()
    unowned: list[int] = []
    traced = 0

    def rows() -> Iterator[LogRow]:
        nonlocal traced
        for entry in read_log_file(path, fmt=fmt, year=year, tz=tz, report=found, progress=progress):
            owner = entry.service or service or entry.workload
            if not owner:
                unowned.append(entry.line_number)
                continue
            services.add(owner)
            if entry.change is not None:
                changes.append(
                    ChangeRow(
                        entry.ts,
                        owner,
                        entry.change.kind,
                        entry.change.description,
                        entry.change.version,
                        source=f"{path.name}:{entry.line_number}",
                    )
                )
            traced += entry.trace_id is not None
            yield LogRow(
                entry.ts,
                owner,
                entry.level,
                entry.text,
                entry.message,
                entry.component,
                entry.parsed,
                entry.leveled,
                entry.trace_id or "",
                entry.span_id or "",
            )

    try:
        written = (logs or env).add_logs(rows())
    except LogFormatError as exc:
        raise ImportFailedError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ImportFailedError(f"{path}: {exc.strerror or exc}") from None
    if found.entries == 0:
        lines = ", ".join(str(n) for n in found.first_no_timestamp) or "none"
        raise ImportFailedError(
            f"{path}: no line could be placed in time ({found.no_timestamp} lines without a readable timestamp, "
            f"first at line(s) {lines}); pass --format to name the format"
        )
    if not services:
        raise ImportFailedError(
            f"{path}: no line says whose it is (no service field, no container record with a pod); pass --service"
        )
    stored = env.add_changes(changes) if changes else None
    return ImportReport(
        imported=written.added,
        skipped=found.no_timestamp + len(unowned),
        replaced_bytes_lines=found.replaced_bytes_lines,
        first_skipped=sorted([*found.first_no_timestamp, *unowned[:5]])[:5],
        time_format=found.format,
        format=found.format,
        inner_format=found.inner_format,
        duplicates=written.duplicates,
        in_file=written.in_file,
        parsed=found.parsed,
        unparsed=found.unparsed,
        continuation_lines=found.continuation_lines,
        year=found.year,
        year_source=found.year_source,
        changes=stored.added if stored else 0,
        services=sorted(services),
        without_service=len(unowned),
        traced=traced,
        partials_joined=found.partials_joined,
        partial_unfinished=found.partial_unfinished,
    )


# -- metrics -------------------------------------------------------------------------------


def import_metrics(
    env: EmbeddedEnvironment,
    path: Path,
    *,
    service: str | None,
    metric: str | None = None,
    unit: str | None = None,
    fmt: MetricFormat = "auto",
    tz: str = "UTC",
    service_label: str = "service",
    known: Iterable[str] = (),
) -> ImportReport:
    """A metric file (CSV, OpenMetrics, Prometheus JSON) into the embedded store. A sample
    without a service label belongs to ``service``; so does one whose service is read from a pod
    name (``service`` names it outright). A service spelt like one of ``known`` or of the store's
    but in another case (``Frontend``, ``frontend``) is stored under that one's spelling."""
    require_file(path)
    if metric is not None and not _METRIC_NAME.fullmatch(metric):
        raise ImportFailedError(f"metric name {metric!r} must look like a Prometheus name (letters, digits, _ and :)")
    found = MetricFileReport(format="", time_format="")
    unlabelled = False
    spelling = ServiceSpelling([*env.services(), *known])
    written_series: set[tuple[str, str]] = set()

    def rows() -> Iterator[tuple[str, str, str, datetime, float]]:
        nonlocal unlabelled
        for sample in read_metric_file(
            path,
            fmt=fmt,
            metric=metric,
            unit=unit,
            service_label=service_label,
            tz=tz,
            report=found,
        ):
            owner = service if service and found.service_from_pod else sample.service or service
            if owner is None:
                unlabelled = True
                continue
            owner = spelling.of(owner)
            written_series.add((owner, sample.metric))
            yield owner, sample.metric, sample.unit, sample.ts, sample.value

    try:
        written = env.import_metric_points(rows())
    except MetricFileError as exc:
        raise ImportFailedError(str(exc)) from None
    if unlabelled:
        raise ImportFailedError(
            f"{path}: samples without a service ({service_label!r} label or column, a pod column); pass --service"
        )
    if found.samples == 0:
        raise ImportFailedError(f"{path}: no samples could be read")
    return ImportReport(
        imported=written.added,
        skipped=found.skipped,
        first_skipped=list(found.first_skipped),
        time_format=found.time_format,
        format=found.format,
        duplicates=written.duplicates,
        in_file=written.in_file,
        services=sorted({owner for owner, _m in written_series}),
        series=sorted(f"{owner}/{m}" for owner, m in written_series),
        service_column=found.service_column if not (service and found.service_from_pod) else f"--service {service}",
        respelt=spelling.respelt(),
        left_out=found.left_out,
    )


class ServiceSpelling:
    """Service names as already stored: one told in another case takes the stored spelling."""

    def __init__(self, known: Iterable[str]) -> None:
        self._by_lower: dict[str, str] = {}
        for name in known:
            self._by_lower.setdefault(name.lower(), name)
        self._respelt: dict[str, str] = {}

    def of(self, name: str) -> str:
        stored = self._by_lower.setdefault(name.lower(), name)
        if stored != name:
            self._respelt[name] = stored
        return stored

    def respelt(self) -> list[str]:
        return [f"{said!r} is the known service {stored!r}" for said, stored in sorted(self._respelt.items())]


def import_metrics_csv(
    env: EmbeddedEnvironment, path: Path, *, service: str, metric: str, unit: str = "", progress: Progress | None = None
) -> ImportReport:
    """``timestamp,value`` rows (kept for callers of the first importer)."""
    del progress
    return import_metrics(env, path, service=service, metric=metric, unit=unit, fmt="csv")


# -- changes -------------------------------------------------------------------------------

_TIME_KEYS = ("ts", "time", "timestamp", "@timestamp", "date", "datetime")
_SERVICE_KEYS = ("service", "service.name", "app")
_KIND_KEYS = ("kind", "type", "event", "change")
_TEXT_KEYS = ("description", "message", "msg", "summary", "title")
_VERSION_KEYS = ("version",)


class ChangeFields(BaseModel):
    """What a change feed's record says, read by the spellings feeds use (any case; the first
    non-empty one wins, as text). Feeds name their columns freely, so this reads them itself
    rather than through aliases, which would take an empty column over a later filled one."""

    time: str | None
    service: str | None
    kind: str | None
    description: str | None
    version: str | None

    @classmethod
    def read(cls, record: Mapping[str, object]) -> Self:
        lowered = {str(key).lower(): value for key, value in record.items()}
        return cls(
            time=_first(lowered, _TIME_KEYS),
            service=_first(lowered, _SERVICE_KEYS),
            kind=_first(lowered, _KIND_KEYS),
            description=_first(lowered, _TEXT_KEYS),
            version=_first(lowered, _VERSION_KEYS),
        )


def import_changes(
    env: EmbeddedEnvironment, path: Path, *, service: str | None = None, tz: str = "UTC"
) -> ImportReport:
    """A change feed — deploys, config changes, restarts, scaling — as CSV with a header or JSON
    lines: a time, a service (or ``service``), a kind and a description per row."""
    require_file(path)
    report = ImportReport(format="", time_format="auto")
    rows: list[ChangeRow] = []
    with path.open("rb") as handle:
        text = handle.read().decode("utf-8", "replace")
    try:
        records, report.format = _records(text)
    except ImportFailedError as exc:
        raise ImportFailedError(f"{path}: {exc}") from None
    for number, record in records:
        said = ChangeFields.read(record)
        moment = _when(said.time, tz)
        owner = said.service or service
        kind = (said.kind or "change").lower()
        description = said.description
        if moment is None or not owner or not description:
            report.skipped += 1
            if len(report.first_skipped) < 5:
                report.first_skipped.append(number)
            continue
        rows.append(ChangeRow(moment, owner, kind, description, said.version, source=path.name))
    if not rows:
        raise ImportFailedError(
            f"{path}: no change could be read (each needs a time, a service or --service, and a description)"
        )
    written = env.add_changes(rows)
    report.imported, report.duplicates, report.changes = written.added, written.duplicates, written.added
    report.in_file = written.in_file
    report.services = sorted({row.service for row in rows})
    return report


def _records(text: str) -> tuple[list[tuple[int, Mapping[str, object]]], str]:
    """The file's records by line number (JSON lines, else CSV with a header), and which it was."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        found: list[tuple[int, Mapping[str, object]]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            try:
                value = json.loads(line) if line.strip() else None
            except json.JSONDecodeError:
                value = None
            if isinstance(value, dict):
                found.append((number, value))
        return found, "json-lines"
    reader = csv.DictReader(io.StringIO(text.replace("\x00", "\ufffd"), newline=""))
    try:
        return [(number, dict(row)) for number, row in enumerate(reader, start=2)], "csv"
    except csv.Error as exc:
        raise ImportFailedError(f"not a readable CSV: {exc}") from None


def _first(record: Mapping[str, object], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = record.get(key)
        if value not in (None, ""):
            return str(value).strip()
    return None


def _when(value: str | None, tz: str) -> datetime | None:
    """A change's time: ISO-8601, Go's ``time.Time.String()`` or epoch fast; anything else through
    dateparser (feeds are small)."""
    if value is None:
        return None
    stated = go_time(value)
    if stated is not None:
        return stated
    try:
        number = float(value)
    except ValueError:
        pass
    else:
        return datetime.fromtimestamp(number / 1000 if number > 1e11 else number, tz=UTC)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        if re.search(MONOTONIC, value):
            return None  # a Go time go_time could not read: dateparser would read its m=+… as now
        moment = dateparser.parse(value, settings={"TIMEZONE": tz, "RETURN_AS_TIMEZONE_AWARE": True})
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(tz))
    return moment.astimezone(UTC)


# -- export --------------------------------------------------------------------------------


def export_openmetrics(env: EmbeddedEnvironment, handle: IO[str]) -> int:
    """Every embedded metric point in OpenMetrics text (for ``promtool tsdb create-blocks-from``)."""
    conn = env._connection()
    count = 0
    metrics = conn.execute("SELECT DISTINCT metric FROM metric_series ORDER BY metric").fetchall()
    for (metric,) in metrics:
        handle.write(f"# TYPE {metric} gauge\n")
        rows = conn.execute(
            "SELECT service, ts, value FROM metric_point WHERE metric=? ORDER BY service, ts", (metric,)
        )
        for service, ts, value in rows:
            handle.write(f'{metric}{{service="{service}"}} {value:g} {ts / 1000:.3f}\n')
            count += 1
    handle.write("# EOF\n")
    return count
