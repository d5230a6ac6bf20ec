"""Span files read into typed spans, whatever wrote them:

* ``csv`` — a CSV of spans with a header: trace, span and parent-span ids, whose span it is (a
  service, or a pod: its workload), when it started, and when it ended or how long it took
  (nezha's ``trace/HH_MM_trace.csv``: ``TraceID,SpanID,ParentID,PodName,OperationName,
  StartTimeUnixNano,EndTimeUnixNano,Duration``); an operation and a status when it has them.
  Column names are data (``columns.yaml``);
* ``otlp-json`` — OpenTelemetry's OTLP/JSON as the Collector's file exporter writes it, one
  ``{"resourceSpans": […]}`` a line (or one document): the service is the resource's
  ``service.name`` (else ``k8s.deployment.name``, else the workload of ``k8s.pod.name``), a
  span failed when its ``status.code`` is 2 (``STATUS_CODE_ERROR``);
* ``jaeger-json`` — Jaeger's trace download (``{"data": [{"spans": […], "processes": {…}}]}``),
  times in µs, a failed span tagged ``error``;
* ``zipkin-json`` — Zipkin's v2 JSON (a list of spans, or of traces), times in µs, a failed
  span tagged ``error``; a span shared by client and server (``"shared": true``, one id for
  both) is kept as the server's child of the client's.

JSON is validated through pydantic models of each format's documented shape, one span at a time,
so a malformed span is skipped and counted rather than failing the file. Protobuf's own JSON
reader is not used for OTLP: OTLP/JSON writes ids as hex where protobuf's canonical mapping
expects base64.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import Field, ValidationError, field_validator

from veridiag.ingest.columns import duration_ns, failed, record_role, role_of, span_role
from veridiag.ingest.times import epoch_per_second
from veridiag.tools.spanjson import NO_PARENT, JaegerFile, JaegerSpan, Json, OtlpSpan, TracesData

SpanFormat = Literal["auto", "csv", "otlp-json", "jaeger-json", "zipkin-json"]
SPAN_FORMATS: dict[str, str] = {
    "csv": "CSV of spans (nezha's trace/*.csv: TraceID, SpanID, ParentID, PodName, start and end times)",
    "otlp-json": "OpenTelemetry OTLP/JSON (the Collector's file exporter: resourceSpans per line)",
    "jaeger-json": "Jaeger JSON (a trace download: data[].spans, processes)",
    "zipkin-json": "Zipkin v2 JSON (a list of spans)",
}
Owner = Literal["service", "pod", ""]
_FIRST_SKIPPED = 5
_NS_PER_US = 1_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class SpanFileError(ValueError):
    """The file cannot be read as spans at all; the message names the file and the problem."""


class ReadSpan(NamedTuple):
    """One span as the file states it: ``owner`` is a service or a pod name (``owner_kind``
    says which; "" and "" when the file names none); ``parent_id`` "" for a root; ``error``
    None when the format states no status; ``at`` the line (or, in a JSON document, the span's
    position) it was read from."""

    trace_id: str
    span_id: str
    parent_id: str
    owner: str
    owner_kind: Owner
    operation: str
    start_ns: int
    end_ns: int
    error: bool | None
    at: int


@dataclass
class SpanFileReport:
    """What reading a span file found (filled as it is read)."""

    format: str = ""
    spans: int = 0
    skipped: int = 0
    first_skipped: list[int] = field(default_factory=list)
    #: Why spans were skipped, counted ("no span id", "duration not a number" …).
    reasons: Counter[str] = field(default_factory=Counter)
    #: Where a span's owner comes from ("PodName (pod → workload)", "resource service.name").
    owner_column: str = ""
    #: "line" or "span": what ``first_skipped`` counts.
    position: str = "line"

    def skip(self, at: int, reason: str) -> None:
        self.skipped += 1
        self.reasons[reason] += 1
        if len(self.first_skipped) < _FIRST_SKIPPED:
            self.first_skipped.append(at)


def read_span_file(path: Path, *, fmt: SpanFormat = "auto", report: SpanFileReport) -> Iterator[ReadSpan]:
    """The spans of ``path`` in file order; what cannot be read is skipped into ``report``.
    ``SpanFileError`` when the file is of no span format or lacks what every span needs."""
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        raise SpanFileError(f"{path}: the file is empty")
    if fmt == "csv" or (fmt == "auto" and head[:1] not in (b"{", b"[")):
        report.format = "csv"
        yield from _csv_spans(path, report)
        return
    document = _json_document(path)
    report.format = _json_format(path, document) if fmt == "auto" else fmt
    yield from _json_spans(path, document, report.format, report)


def _json_format(path: Path, document: Any) -> str:
    if isinstance(document, list):
        return "zipkin-json"
    if isinstance(document, Iterator) or (isinstance(document, dict) and "resourceSpans" in document):
        return "otlp-json"
    if isinstance(document, dict) and "data" in document:
        return "jaeger-json"
    raise SpanFileError(
        f"{path}: JSON of no span format known (OTLP resourceSpans, Jaeger data[].spans, a Zipkin list of spans)"
    )


# -- CSV -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Columns:
    span: int
    start: int
    trace: int | None
    parent: int | None
    owner: int | None
    owner_kind: Owner
    end: int | None
    duration: int | None
    duration_ns: int
    operation: int | None
    status: int | None


def _csv_columns(path: Path, header: list[str]) -> _Columns:
    records = [record_role(name) for name in header]
    spans = [span_role(name) for name in header]
    owners = [role_of(name) for name in header]

    def first(found: list[Any], wanted: str) -> int | None:
        return found.index(wanted) if wanted in found else None

    span, start = first(records, "span"), first(spans, "span_start")
    end, duration = first(spans, "span_end"), first(spans, "duration")
    missing = [
        what
        for what, column in (
            ("a span id (SpanID, span_id)", span),
            ("a start time (StartTimeUnixNano, start_time)", start),
            ("an end time or a duration (EndTimeUnixNano, Duration)", end if end is not None else duration),
        )
        if column is None
    ]
    if missing:
        raise SpanFileError(f"{path}: no column of {', nor '.join(missing)} in the header {', '.join(header)}")
    assert span is not None and start is not None
    owner = next((j for wanted in ("service", "pod", "container") for j, o in enumerate(owners) if o == wanted), None)
    kind: Owner = "" if owner is None else ("pod" if owners[owner] == "pod" else "service")
    return _Columns(
        span=span,
        start=start,
        trace=first(records, "trace"),
        parent=first(records, "parent_span"),
        owner=owner,
        owner_kind=kind,
        end=end,
        duration=duration,
        duration_ns=duration_ns(header[duration]) if duration is not None else _NS_PER_US,
        operation=first(spans, "operation"),
        status=first(spans, "status"),
    )


def _csv_spans(path: Path, report: SpanFileReport) -> Iterator[ReadSpan]:
    with path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="") as text:
        reader = csv.reader(text)
        try:
            header = [cell.strip() for cell in next(reader, [])]
        except csv.Error as exc:
            raise SpanFileError(f"{path}: not a readable CSV: {exc}") from None
        columns = _csv_columns(path, header)
        if columns.owner is not None:
            name = header[columns.owner]
            report.owner_column = f"{name} (pod → workload)" if columns.owner_kind == "pod" else name
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error:
                report.skip(reader.line_num, "not a readable CSV row")
                continue
            if not any(cell.strip() for cell in row):
                continue
            span = _csv_span(row, columns, reader.line_num, report)
            if span is not None:
                report.spans += 1
                yield span


def _cell(row: list[str], index: int | None) -> str:
    return row[index].strip() if index is not None and index < len(row) else ""


def _csv_span(row: list[str], columns: _Columns, at: int, report: SpanFileReport) -> ReadSpan | None:
    span_id = _cell(row, columns.span)
    if not span_id:
        report.skip(at, "no span id")
        return None
    start = _instant(_cell(row, columns.start))
    if start is None:
        report.skip(at, "start time not a time")
        return None
    end = _instant(_cell(row, columns.end)) if columns.end is not None else None
    if end is None:
        duration = _number(_cell(row, columns.duration))
        if duration is None:
            report.skip(at, "no readable end time or duration")
            return None
        end = _stored(start + round(duration * columns.duration_ns))
        if end is None:
            report.skip(at, "duration out of range")
            return None
    if end < start:
        report.skip(at, "ends before it starts")
        return None
    parent = _cell(row, columns.parent)
    status = _cell(row, columns.status) if columns.status is not None else None
    return ReadSpan(
        trace_id=_cell(row, columns.trace),
        span_id=span_id,
        parent_id="" if parent.lower() in NO_PARENT else parent,
        owner=_cell(row, columns.owner),
        owner_kind=columns.owner_kind if _cell(row, columns.owner) else "",
        operation=_cell(row, columns.operation),
        start_ns=start,
        end_ns=end,
        error=None if status is None else failed(status),
        at=at,
    )


def _number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


#: The largest integer the store (SQLite INTEGER) holds: epoch nanoseconds until the year 2262.
_INT64 = 2**63 - 1


def _stored(nanoseconds: int) -> int | None:
    return nanoseconds if -_INT64 <= nanoseconds <= _INT64 else None


def _instant(text: str) -> int | None:
    """An epoch number (its unit told by its magnitude) or an ISO-8601 time (UTC when it gives
    no offset), as epoch nanoseconds; None when it is neither."""
    if not text:
        return None
    if text.isascii() and text.isdigit():  # ("²" is a digit to str.isdigit, no number to float)
        per_second = epoch_per_second(float(text))
        # Integers stay exact: a float holds nanoseconds since 1970 only to ~256 ns.
        return None if per_second is None else _stored(int(text) * (10**9 // int(per_second)))
    number = _number(text)
    if number is not None:
        per_second = epoch_per_second(number)
        return None if per_second is None else _stored(round(number * 1e9 / per_second))
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return _stored((moment - _EPOCH) // timedelta(microseconds=1) * _NS_PER_US)


# -- JSON ------------------------------------------------------------------------------------


def _json_document(path: Path) -> Any:
    """The file's JSON: one document, or (JSON lines of objects) an iterator of them."""
    with path.open("rb") as handle:
        first = handle.readline()
        rest = handle.readline()
    try:
        head = json.loads(first)
    except json.JSONDecodeError:
        head = None
    if isinstance(head, dict) and rest.strip():
        return _json_lines(path)
    try:
        return json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SpanFileError(f"{path}: not readable JSON: {exc}") from None


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError:
                yield number, None


def _json_spans(path: Path, document: Any, fmt: str, report: SpanFileReport) -> Iterator[ReadSpan]:
    if fmt == "otlp-json":
        report.owner_column = "resource service.name"
        lines = document if isinstance(document, Iterator) else iter([(0, document)])
        for number, value in lines:
            yield from _otlp(value, number, report)
        return
    report.position = "span"
    if isinstance(document, Iterator):
        raise SpanFileError(f"{path}: JSON lines, which {fmt} is not; pass --format otlp-json if it is OTLP")
    if fmt == "jaeger-json":
        report.owner_column = "process serviceName"
        yield from _jaeger(path, document, report)
    else:
        report.owner_column = "localEndpoint serviceName"
        yield from _zipkin(path, document, report)


_OWNER_ATTRIBUTES: tuple[tuple[str, Owner], ...] = (
    ("service.name", "service"),
    ("k8s.deployment.name", "service"),
    ("k8s.pod.name", "pod"),
)


def _otlp(value: Any, number: int, report: SpanFileReport) -> Iterator[ReadSpan]:
    try:
        data = TracesData.model_validate(value)
    except ValidationError:
        report.skip(number, "not an OTLP resourceSpans object")
        return
    for resource in data.resource_spans:
        said = resource.resource.said()
        owner, kind = next(((said[k], kind) for k, kind in _OWNER_ATTRIBUTES if said.get(k)), ("", ""))
        for scope in resource.scopes:
            for raw in scope.spans:
                try:
                    span = OtlpSpan.model_validate(raw)
                except ValidationError as exc:
                    report.skip(number, _why(exc))
                    continue
                if span.end_time_unix_nano < span.start_time_unix_nano:
                    report.skip(number, "ends before it starts")
                    continue
                report.spans += 1
                yield ReadSpan(
                    trace_id=span.trace_id,
                    span_id=span.span_id,
                    parent_id="" if span.parent_span_id.lower() in NO_PARENT else span.parent_span_id,
                    owner=owner,
                    owner_kind=kind,
                    operation=span.name,
                    start_ns=span.start_time_unix_nano,
                    end_ns=span.end_time_unix_nano,
                    error=span.failed,
                    at=number,
                )


def _why(exc: ValidationError) -> str:
    """A skipped span's reason: its first invalid field."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "span"
    return f"{where}: {error['msg'].lower()}"


def _jaeger(path: Path, document: Any, report: SpanFileReport) -> Iterator[ReadSpan]:
    try:
        traces = JaegerFile.model_validate(document).data
    except ValidationError as exc:
        raise SpanFileError(f"{path}: not Jaeger's trace JSON: {_why(exc)}") from None
    position = 0
    for trace in traces:
        for raw in trace.spans:
            position += 1
            try:
                span = JaegerSpan.model_validate(raw)
            except ValidationError as exc:
                report.skip(position, _why(exc))
                continue
            process = trace.processes.get(span.process_id)
            report.spans += 1
            yield ReadSpan(
                trace_id=span.trace_id,
                span_id=span.span_id,
                parent_id=span.parent_id,
                owner=process.service_name if process else "",
                owner_kind="service" if process and process.service_name else "",
                operation=span.operation_name,
                start_ns=span.start_ns,
                end_ns=span.end_ns,
                error=span.failed,
                at=position,
            )


class _ZipkinEndpoint(Json):
    service_name: str = ""


class _ZipkinSpan(Json):
    trace_id: str = Field(min_length=1)
    id: str = Field(min_length=1)
    parent_id: str = ""
    name: str = ""
    #: Microseconds since the epoch; a span without them was never finished.
    timestamp: int
    duration: int = Field(ge=0)
    local_endpoint: _ZipkinEndpoint = _ZipkinEndpoint()
    tags: dict[str, str] = Field(default_factory=dict)
    shared: bool = False

    @field_validator("tags", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else value


def _zipkin(path: Path, document: Any, report: SpanFileReport) -> Iterator[ReadSpan]:
    if not isinstance(document, list):
        raise SpanFileError(f"{path}: not Zipkin's JSON (a list of spans)")
    flat = [item for entry in document for item in (entry if isinstance(entry, list) else [entry])]
    for position, raw in enumerate(flat, start=1):
        try:
            span = _ZipkinSpan.model_validate(raw)
        except ValidationError as exc:
            report.skip(position, _why(exc))
            continue
        service = span.local_endpoint.service_name
        # The server's half of a span shared with its client (one id for both): the client's child.
        span_id, parent = (f"{span.id}:shared", span.id) if span.shared else (span.id, span.parent_id)
        report.spans += 1
        yield ReadSpan(
            trace_id=span.trace_id,
            span_id=span_id,
            parent_id="" if parent.lower() in NO_PARENT else parent,
            owner=service,
            owner_kind="service" if service else "",
            operation=span.name,
            start_ns=span.timestamp * _NS_PER_US,
            end_ns=(span.timestamp + span.duration) * _NS_PER_US,
            error="error" in span.tags,
            at=position,
        )
