"""Reading container records (``container.py``): the records in file order, partial lines joined,
the application lines inside read by the format detected from them, each entry placed at its
record's time and owned by its record's pod.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Callable, Iterator
from datetime import tzinfo
from pathlib import Path

from veridiag.ingest.kubernetes import workload_of
from veridiag.ingest.logformats._base import (
    FORMATS,
    PLACEHOLDER_YEAR,
    LogEntry,
    LogFileReport,
    LogFormat,
    LogFormatError,
    severe,
)
from veridiag.ingest.logformats.container import ContainerCsv, Envelope, Wrapped, csv_columns
from veridiag.ingest.logformats.generic import Unknown
from veridiag.ingest.logformats.reader import (
    MAX_CONTINUATION,
    SAMPLE_LINES,
    _continuation_like,
    _lines,
    _no_timestamp,
    detect_format,
)

Numbered = tuple[int, Wrapped | None]
_PROGRESS_ROWS = 20_000
#: Longest CSV cell read (the csv module's default, 128 KiB, is shorter than some records).
_CELL_LIMIT = 16 * 1024 * 1024


def envelope_for(cls: type[Envelope], head: list[str], *, tz: tzinfo) -> Envelope:
    """An instance of ``cls`` for this file (a CSV's columns read from its header line)."""
    if cls is ContainerCsv:
        columns = csv_columns(_header(head))
        if columns is None:
            raise LogFormatError("container_csv needs a header with a log column and a time column")
        return ContainerCsv(columns, tz=tz)
    return cls(tz=tz)


def csv_envelope(head: list[str]) -> bool:
    """The file's first line is the header of a CSV of log records."""
    if not head or "," not in head[0]:
        return False
    return csv_columns(_header(head)) is not None


def _header(head: list[str]) -> list[str]:
    """The cells of the file's first line read as a CSV header; none when it is no CSV line (a
    bare carriage return inside it: the csv module refuses the row)."""
    try:
        return [cell.strip() for cell in next(csv.reader(head[:1]), [])]
    except csv.Error:
        return []


def _records(
    path: Path, envelope: Envelope, report: LogFileReport, progress: Callable[[int], None] | None
) -> Iterator[Numbered]:
    """(line number, record) in file order; None for a line or row that is no record."""
    if not isinstance(envelope, ContainerCsv):
        for number, line in _lines(path, report, progress):
            yield number, envelope.unwrap(line)
        return
    csv.field_size_limit(_CELL_LIMIT)
    with path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="") as text:
        reader = csv.reader(text)
        next(reader, None)  # the header
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error:
                yield reader.line_num, None
                continue
            if progress is not None and reader.line_num % _PROGRESS_ROWS == 0:
                progress(raw.tell())
            if any(cell.strip() for cell in row):
                yield reader.line_num, envelope.row(row)
        if progress is not None:
            progress(raw.tell())


def _joined(
    records: Iterator[Numbered], report: LogFileReport, starts_line: Callable[[str], bool]
) -> Iterator[Numbered]:
    """Records with a partial line (CRI ``P``, a long line Docker split at 16 KiB) joined to the
    records of the same pod, container and stream that finish it, at the first one's number and
    time. A record that starts a line of its own (``starts_line``) is no continuation: the
    partial line before it is kept as far as it goes (counted: its end is not in the file)."""
    open_parts: dict[tuple[str | None, str | None, str | None], tuple[int, Wrapped, list[str]]] = {}
    for number, record in records:
        if record is None:
            yield number, None
            continue
        if record.trailing:
            report.trailing_text += 1
        key = (record.pod, record.container, record.stream)
        started = open_parts.get(key)
        if started is not None and starts_line(record.text):
            del open_parts[key]
            report.partial_unfinished += 1
            yield started[0], _whole(started)
            started = None
        if started is None:
            if record.partial:
                open_parts[key] = (number, record, [record.text])
            else:
                yield number, record
            continue
        started[2].append(record.text)
        report.partials_joined += 1
        if not record.partial:
            del open_parts[key]
            yield started[0], _whole(started)
    for started in open_parts.values():  # the file ended inside a line
        report.partial_unfinished += 1
        yield started[0], _whole(started)


def _whole(started: tuple[int, Wrapped, list[str]]) -> Wrapped:
    _number, first, parts = started
    first.text = "".join(parts)
    return first


def wrapped_entries(
    path: Path,
    envelope: Envelope,
    report: LogFileReport,
    progress: Callable[[int], None] | None,
    *,
    tz: tzinfo,
) -> Iterator[LogEntry]:
    """The entries of a file of container records (``report`` complete once consumed)."""
    raw = _records(path, envelope, report, progress)
    head = list(itertools.islice(raw, SAMPLE_LINES))
    texts = [record.text for _n, record in head if record is not None and record.text.strip()]
    candidates = {key: cls for key, cls in FORMATS.items() if not issubclass(cls, Envelope)}
    inner: LogFormat = type(detect_format(texts, candidates))(tz=tz, year=PLACEHOLDER_YEAR)
    report.inner_format = inner.id
    records = _joined(itertools.chain(head, raw), report, lambda text: _starts(inner, text))
    fallback = Unknown(tz=tz, year=PLACEHOLDER_YEAR)
    owners: dict[tuple[str | None, str | None], str | None] = {}
    pending: LogEntry | None = None
    pending_key: tuple[str | None, str | None, str | None] | None = None
    extra: list[str] = []
    for number, record in records:
        if record is None or record.ts is None:
            _no_timestamp(report, number)
            continue
        key = (record.pod, record.container, record.stream)
        text = record.text
        try:
            parsed = inner.parse(text) if text.strip() else None
        except (ValueError, OverflowError):
            parsed = None
        if parsed is None:
            if (
                pending is not None
                and key == pending_key
                and len(extra) < MAX_CONTINUATION
                and _continuation_like(text)
            ):
                extra.append(text)
                report.continuation_lines += 1
                continue
            found = fallback.leading(text)
            level, component, message, service, change, is_parsed = (
                found[1] if found else None,
                "",
                text,
                None,
                None,
                False,
            )
        else:
            _ts, level, component, message, service, change = parsed
            is_parsed = True
        leveled = level is not None
        if level != "ERROR" and severe(message):
            level = "ERROR"
        if pending is not None:
            yield _finish(pending, extra)
        owner_key = (record.pod, record.container)
        if owner_key not in owners:
            owners[owner_key] = workload_of(record.pod) if record.pod else record.container
        report.entries += 1
        report.parsed += is_parsed
        report.unparsed += not is_parsed
        report.unleveled += not leveled
        pending = LogEntry(
            record.ts,
            level or "INFO",
            component,
            message,
            text,
            service or record.service,
            change,
            number,
            is_parsed,
            leveled,
            workload=owners[owner_key],
            trace_id=record.trace_id,
            span_id=record.span_id,
        )
        pending_key = key
    if pending is not None:
        yield _finish(pending, extra)


def _starts(inner: LogFormat, text: str) -> bool:
    """``text`` begins a line of the inner format (so it continues no partial line)."""
    try:
        return inner.parse(text) is not None
    except (ValueError, OverflowError):
        return False


def _finish(entry: LogEntry, extra: list[str]) -> LogEntry:
    if extra:
        entry.text = "\n".join([entry.text, *extra])
        extra.clear()
    return entry
