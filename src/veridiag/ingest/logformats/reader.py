"""Detect a file's format once, resolve its year if it writes none, and stream its entries.

The hot loop parses with one format's compiled regex; only lines it does not understand try the
leading-timestamp fallback. Lines are decoded one by one so a bad byte costs its own line only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from veridiag.ingest.logformats._base import (
    FORMATS,
    PLACEHOLDER_YEAR,
    Level,
    LogEntry,
    LogFileReport,
    LogFormat,
    LogFormatError,
    offset,
    severe,
)
from veridiag.ingest.logformats.container import ContainerCsv, Envelope
from veridiag.ingest.logformats.generic import Strptime, Unknown

SAMPLE_LINES = 200
"""Non-empty lines read to detect a format and to find a year."""
MAX_CONTINUATION = 1000
"""Continuation lines kept with one entry; past that a line is its own (unparsed) entry."""
_PROGRESS_EVERY = 20_000
_UNKNOWN_LEVEL: Level | None = None

# Lines that continue the entry above them even where a format is unknown: indented (stack frames),
# Java's "Caused by:" / "... 12 more", Python's traceback header.
_CONTINUATION = re.compile(r"\s|Caused by:|Suppressed:|\.\.\. \d+ (?:more|common frames omitted)|Traceback \(")
_FULL_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)([-./])(0[1-9]|1[0-2])\2(0[1-9]|[12]\d|3[01])(?!\d)")
_OFFSET = re.compile(r"[+-]\d\d:?\d\d")


def _continuation_like(line: str) -> bool:
    return _CONTINUATION.match(line) is not None


def detect_format(sample: list[str], formats: Mapping[str, type[LogFormat]] | None = None) -> LogFormat:
    """The format (of ``formats``, default all) that parses most of the first ~200 non-empty
    lines; ``unknown`` below a third.

    Continuation-like lines (stack frames) are left out of the count, so a Java log full of
    traces is still recognised by its entry lines. A tie goes to the format registered first.
    """
    lines = [line for line in sample if line.strip()][:SAMPLE_LINES]
    heads = [line for line in lines if not _continuation_like(line)] or lines
    best: LogFormat | None = None
    best_hits = 0
    for format_id, cls in (FORMATS if formats is None else formats).items():
        if format_id == Unknown.id:
            continue
        candidate = cls()
        hits = 0
        for line in heads:
            try:
                if candidate.parse(line) is not None:
                    hits += 1
            except (ValueError, OverflowError, RecursionError):  # a line a format cannot take is no hit
                continue
        if hits > best_hits:
            best, best_hits = candidate, hits
    if best is None or best_hits * 3 < len(heads):
        return Unknown()
    return best


def _zone(tz: str) -> tzinfo:
    if tz.upper() in ("UTC", "Z", "GMT"):
        return UTC
    if _OFFSET.fullmatch(tz):
        return timezone(offset(tz))
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise LogFormatError(f"unknown time zone {tz!r}: an IANA name (Asia/Shanghai) or an offset (+08:00)") from None


def _decode(raw: bytes) -> tuple[str, bool]:
    """A line's text without its line break, and whether bytes were replaced (bad UTF-8, NUL)."""
    try:
        line = raw.decode()
        replaced = False
    except UnicodeDecodeError:
        line = raw.decode("utf-8", "replace")
        replaced = True
    if "\x00" in line:
        line = line.replace("\x00", "\ufffd")
        replaced = True
    return line.rstrip("\r\n"), replaced


def _head(path: Path) -> list[str]:
    lines: list[str] = []
    with path.open("rb") as handle:
        for raw in handle:
            line = _decode(raw)[0]
            if line.strip():
                lines.append(line)
                if len(lines) >= SAMPLE_LINES:
                    break
    return lines


def _stated_year(head: list[str], year: int | None) -> tuple[int, str] | None:
    """``year=``, else the commonest year of the full dates written in the file's first lines."""
    if year is not None:
        return year, "--year"
    years = Counter(int(match.group(1)) for line in head for match in _FULL_DATE.finditer(line))
    return (years.most_common(1)[0][0], "file dates") if years else None


def _year_without_format(head: list[str], path: Path, year: int | None) -> tuple[int, str]:
    """The year for a user's layout that writes none: as for a format without one, minus the
    look at its first entry (the layout is the user's, not a format's)."""
    stated = _stated_year(head, year)
    return stated if stated is not None else (datetime.fromtimestamp(path.stat().st_mtime, UTC).year, "file mtime")


def _resolve_year(
    cls: type[LogFormat], head: list[str], path: Path, year: int | None, zone: tzinfo
) -> tuple[int | None, str | None]:
    """The first entry's year for a format that writes none: ``year=``, else dates in the file, else its mtime.

    With the mtime, a first entry later in the year than the file's last write is from the year before.
    """
    if cls.has_year:
        return None, None
    stated = _stated_year(head, year)
    if stated is not None:
        return stated
    written = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    guess = written.astimezone(zone).year
    probe = cls(tz=zone, year=guess)
    fallback = Unknown(tz=zone, year=guess)
    for line in head:
        try:
            parsed = probe.parse(line)
        except (ValueError, OverflowError):
            parsed = None
        ts = parsed[0] if parsed is not None else None
        if ts is None and cls is Unknown:
            found = fallback.leading(line)
            ts = found[0] if found is not None else None
        if ts is not None:
            if ts > written + timedelta(days=1):
                guess -= 1
            break
    return guess, "file mtime"


def read_log_file(
    path: Path,
    *,
    fmt: str = "auto",
    year: int | None = None,
    tz: str = "UTC",
    report: LogFileReport | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[LogEntry]:
    """The entries of ``path`` in file order; ``report`` is complete once they are all consumed.

    ``fmt`` forces a format id (``FORMATS``); ``year`` is the year of the first entry for formats
    without one; naive timestamps are in ``tz`` (an explicit offset in a line wins); ``progress``
    gets the bytes read so far. Raises ``LogFormatError`` for an unknown id or zone, ``OSError``
    when the file cannot be read — both before the first entry.
    """
    layout = fmt.removeprefix("strptime:") if fmt.startswith("strptime:") else None
    if fmt != "auto" and fmt not in FORMATS and layout is None:
        raise LogFormatError(f"unknown log format {fmt!r}; known: auto, {', '.join(FORMATS)}, or strptime:LAYOUT")
    if year is not None and not 1 <= year <= 9999:
        raise LogFormatError(f"year {year} is out of range")
    zone = _zone(tz)
    head = _head(path)
    if layout is not None:
        custom = Strptime(layout, tz=zone)
        resolved, source = (None, None) if custom.writes_year else _year_without_format(head, path, year)
        custom.clock.year = resolved or PLACEHOLDER_YEAR
        report = report if report is not None else LogFileReport()
        report.format, report.year, report.year_source = fmt, resolved, source
        fallback = Unknown(tz=zone, year=resolved or PLACEHOLDER_YEAR)
        return _entries(path, custom, fallback, report, progress)
    # Imported here: it reads records with this module's line reader and detection.
    from veridiag.ingest.logformats.unwrap import csv_envelope, envelope_for, wrapped_entries

    cls = FORMATS[fmt] if fmt != "auto" else ContainerCsv if csv_envelope(head) else type(detect_format(head))
    report = report if report is not None else LogFileReport()
    if issubclass(cls, Envelope):
        envelope = envelope_for(cls, head, tz=zone)
        report.format = cls.id
        return wrapped_entries(path, envelope, report, progress, tz=zone)
    resolved, source = _resolve_year(cls, head, path, year, zone)
    report.format, report.year, report.year_source = cls.id, resolved, source
    start_year = resolved or PLACEHOLDER_YEAR
    return _entries(path, cls(tz=zone, year=start_year), Unknown(tz=zone, year=start_year), report, progress)


def _lines(path: Path, report: LogFileReport, progress: Callable[[int], None] | None) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line; bad bytes and NULs replaced and counted."""
    read = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            read += len(raw)
            if progress is not None and number % _PROGRESS_EVERY == 0:
                progress(read)
            try:
                line = raw.decode().rstrip("\r\n")
                if "\x00" in line:  # a NUL is replaced and counted like a bad byte
                    raise UnicodeDecodeError("utf-8", raw, 0, 0, "NUL")
            except UnicodeDecodeError:
                line = _decode(raw)[0]
                report.replaced_bytes_lines += 1
            if line and not line.isspace():
                yield number, line
    if progress is not None:
        progress(read)


def _entries(
    path: Path,
    fmt: LogFormat,
    fallback: Unknown,
    report: LogFileReport,
    progress: Callable[[int], None] | None,
) -> Iterator[LogEntry]:
    """The hot loop: one regex match a line in the common case; the rare paths are out of line."""
    parse = fmt.parse
    continues = _continues_known if not isinstance(fmt, Unknown) else _continuation_like
    pending: LogEntry | None = None
    extra: list[str] = []
    last_ts: datetime | None = None
    for number, line in _lines(path, report, progress):
        try:
            parsed = parse(line)
        except (ValueError, OverflowError):  # a time that exists in no calendar or not in UTC (year 1 at +08:00)
            parsed = None
        if parsed is None:
            found = None if line[0] in " \t" else fallback.leading(line)
            if found is None and pending is not None and len(extra) < MAX_CONTINUATION and continues(line):
                extra.append(line)
                report.continuation_lines += 1
                continue
            ts, level = found if found is not None else (last_ts, _UNKNOWN_LEVEL)
            component, message, service, change, is_parsed = "", line, None, None, False
        else:
            ts, level, component, message, service, change = parsed
            ts = ts or last_ts  # a record of the format that carries no time: the time of the one before
            is_parsed = True
        if ts is None:
            _no_timestamp(report, number)
            continue
        leveled = level is not None
        if level != "ERROR" and severe(message):
            level = "ERROR"
        if pending is not None:
            yield _finish(pending, extra)
        report.entries += 1
        report.parsed += is_parsed
        report.unparsed += not is_parsed
        report.unleveled += not leveled
        pending = LogEntry(ts, level or "INFO", component, message, line, service, change, number, is_parsed, leveled)
        last_ts = ts
    if pending is not None:
        yield _finish(pending, extra)


def _finish(entry: LogEntry, extra: list[str]) -> LogEntry:
    """The entry with its continuation lines joined into ``text`` (``extra`` is emptied for the next)."""
    if extra:
        entry.text = "\n".join([entry.text, *extra])
        extra.clear()
    return entry


def _continues_known(_line: str) -> bool:
    """In a known format any line without a timestamp continues the entry above (stack traces)."""
    return True


def _no_timestamp(report: LogFileReport, number: int) -> None:
    report.no_timestamp += 1
    if len(report.first_no_timestamp) < 5:
        report.first_no_timestamp.append(number)
