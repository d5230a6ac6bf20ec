"""Container log records: the record a container runtime or a log shipper writes around each
application line — Docker's json-file (``{"log": "…\\n", "stream": "stdout", "time": "…"}``),
the CRI format of containerd and CRI-O (``2023-01-29T10:03:57.916340805Z stdout F <line>``),
a shipper's JSON with a ``kubernetes`` object (Fluent Bit, Fluentd, Vector, Filebeat), and a CSV
of such records (nezha's ``Timestamp,…,PodName,…,TraceID,SpanID,Log``).

The record's time is the line's time: the runtime stamped it with a date and a zone, while the
application's own ``18:03:57.913`` is a time of day in another zone. The record's pod names the
service (its workload, ``ingest.kubernetes``). The line inside is read by the usual format
detection (``ingest.logformats.unwrap``), so its level, logger and template are kept.

Each format here is an ``Envelope``: ``unwrap`` reads one record, and ``parse`` answers format
detection with the record's time alone. Hand-written: the runtimes document these layouts
(Docker's json-file driver, the CRI logging spec), and no maintained package reads them.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import ClassVar

from veridiag.ingest.columns import is_time_name, record_role, role_of
from veridiag.ingest.logformats._base import PLACEHOLDER_YEAR, LogFormat, Parsed, field_time, register

_DECODER = json.JSONDecoder()


@dataclass(slots=True)
class Wrapped:
    """One container record: when, whose, and the application's line inside it."""

    ts: datetime | None  # None: no readable time (the reader skips and counts the record)
    text: str
    pod: str | None = None
    #: A service column's value, as written (a pod is read as its workload instead).
    service: str | None = None
    container: str | None = None
    stream: str | None = None
    trace_id: str | None = None
    span_id: str | None = None
    #: The line goes on in the next record of the same stream (CRI ``P``, Docker's split lines).
    partial: bool = False
    #: The record's JSON had text after it, which was dropped.
    trailing: bool = False


class Envelope(LogFormat):
    """A record around an application line."""

    #: Records are rows of a CSV (read with the csv module), not lines.
    csv_rows: ClassVar[bool] = False

    def unwrap(self, line: str) -> Wrapped | None:
        raise NotImplementedError

    def parse(self, line: str) -> Parsed | None:
        found = self.unwrap(line)
        if found is None or found.ts is None:
            return None
        return found.ts, None, "", found.text, None, None


def _json_object(text: str) -> tuple[dict[str, object], bool] | None:
    """The JSON object ``text`` starts with, and whether text follows it."""
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return None
    try:
        value, end = _DECODER.raw_decode(stripped)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    return value, bool(stripped[end:].strip())


def _docker(record: Mapping[str, object], fmt: LogFormat, trailing: bool) -> Wrapped | None:
    """Docker's json-file record: ``log`` (with its newline, none when Docker split a long line)
    and ``time``; ``stream`` when given."""
    log, stamp = record.get("log"), record.get("time")
    if not isinstance(log, str) or not isinstance(stamp, str):
        return None
    stream = record.get("stream")
    return Wrapped(
        field_time(stamp, fmt),
        log.removesuffix("\n").removesuffix("\r"),
        stream=stream if isinstance(stream, str) else None,
        partial=not log.endswith("\n"),
        trailing=trailing,
    )


@register
class ShipperJson(Envelope):
    """A shipper's JSON record: the line in ``log`` or ``message``, the pod in
    ``kubernetes.pod_name`` (Fluent Bit, Fluentd, Vector) or ``kubernetes.pod.name`` (Filebeat),
    the container in ``kubernetes.container_name`` / ``kubernetes.container.name``."""

    id = "kubernetes_json"
    title = "Kubernetes container records (Fluent Bit, Fluentd, Vector, Filebeat JSON)"

    def unwrap(self, line: str) -> Wrapped | None:
        found = _json_object(line)
        if found is None:
            return None
        record, trailing = found
        kubernetes = record.get("kubernetes")
        if not isinstance(kubernetes, dict):
            return None
        pod = _name(kubernetes, "pod_name", "pod")
        container = _name(kubernetes, "container_name", "container")
        if pod is None and container is None:
            return None
        text = record.get("log", record.get("message"))
        if not isinstance(text, str):
            return None
        stamp = next((record[k] for k in ("time", "@timestamp", "timestamp", "date") if k in record), None)
        stream = record.get("stream")
        return Wrapped(
            field_time(stamp, self) if stamp is not None else None,
            text.removesuffix("\n"),
            pod=pod,
            container=container,
            stream=stream if isinstance(stream, str) else None,
            trace_id=_text(record, "trace_id", "traceId", "trace.id", "TraceID"),
            span_id=_text(record, "span_id", "spanId", "span.id", "SpanID"),
            trailing=trailing,
        )


def _name(kubernetes: Mapping[str, object], flat: str, nested: str) -> str | None:
    """``kubernetes.pod_name`` (flat) or ``kubernetes.pod.name`` (nested)."""
    value = kubernetes.get(flat)
    if isinstance(value, str) and value:
        return value
    inner = kubernetes.get(nested)
    if isinstance(inner, dict):
        inner = inner.get("name")
    return inner if isinstance(inner, str) and inner else None


def _text(record: Mapping[str, object], *keys: str) -> str | None:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return None


@register
class DockerJson(Envelope):
    """Docker's json-file driver: ``{"log":"…\\n","stream":"stdout","time":"2023-01-29T10:03:57.9Z"}``."""

    id = "docker_json"
    title = "Docker json-file records"

    def unwrap(self, line: str) -> Wrapped | None:
        found = _json_object(line)
        return None if found is None else _docker(found[0], self, found[1])


@register
class Cri(Envelope):
    """The CRI format (containerd, CRI-O; ``/var/log/pods``): ``<RFC 3339 time> <stream> <F|P> <line>``,
    ``P`` for a line that goes on in the next record."""

    id = "cri"
    title = "Kubernetes CRI container logs (containerd, CRI-O)"
    _line = re.compile(r"(\d{4}-\d\d-\d\dT\S+) (stdout|stderr) ([FP])(?: (.*))?")

    def unwrap(self, line: str) -> Wrapped | None:
        match = self._line.fullmatch(line)
        if match is None:
            return None
        stamp, stream, tag, text = match.groups()
        try:
            ts = self.iso(stamp)
        except ValueError:
            return None
        return Wrapped(ts, text or "", stream=stream, partial=tag == "P")


@dataclass(frozen=True)
class CsvColumns:
    """Where a log-record CSV keeps what a record needs, by column index."""

    log: int
    times: tuple[int, ...]
    pod: int | None
    container: int | None
    service: int | None
    trace: int | None
    span: int | None


def csv_columns(header: list[str]) -> CsvColumns | None:
    """The columns of a CSV of log records (a log column and a time column at least), or None."""
    log = next((j for j, name in enumerate(header) if record_role(name) == "log"), None)
    times = tuple(j for j, name in enumerate(header) if is_time_name(name))
    if log is None or not times:
        return None

    def first(wanted: object) -> int | None:
        return next((j for j, name in enumerate(header) if wanted in (role_of(name), record_role(name))), None)

    return CsvColumns(log, times, first("pod"), first("container"), first("service"), first("trace"), first("span"))


@register
class ContainerCsv(Envelope):
    """A CSV of log records: a header with a log column (``Log``, ``message`` …) and a time column,
    and where given the pod, container, trace and span (nezha's
    ``Timestamp,TimeUnixNano,Node,PodName,Container,TraceID,SpanID,Log``). A log cell holding a
    Docker json-file record is read as one; the record's time then wins over the row's."""

    id = "container_csv"
    title = "CSV of container log records (pod, trace, log columns)"
    csv_rows = True

    def __init__(self, columns: CsvColumns | None = None, *, tz: tzinfo = UTC, year: int = PLACEHOLDER_YEAR) -> None:
        super().__init__(tz=tz, year=year)
        self.columns = columns

    def parse(self, line: str) -> Parsed | None:
        return None  # rows, not lines: recognised by the header (``csv_columns``)

    def unwrap(self, line: str) -> Wrapped | None:
        row = next(csv.reader([line]), [])
        return self.row(row)

    def row(self, row: list[str]) -> Wrapped | None:
        columns = self.columns
        if columns is None or columns.log >= len(row):
            return None

        def cell(index: int | None) -> str | None:
            return row[index].strip() or None if index is not None and index < len(row) else None

        raw = row[columns.log]
        inner = _json_object(raw) if raw.lstrip().startswith("{") else None
        found = _docker(inner[0], self, inner[1]) if inner is not None else None
        if found is None:
            found = Wrapped(None, raw.removesuffix("\n"))
        if found.ts is None:
            found.ts = next((t for j in columns.times if (c := cell(j)) and (t := field_time(c, self))), None)
        found.pod, found.container = cell(columns.pod), cell(columns.container)
        found.trace_id, found.span_id = cell(columns.trace), cell(columns.span)
        found.service = cell(columns.service)
        return found
