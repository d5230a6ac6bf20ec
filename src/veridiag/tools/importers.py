"""Real data into the embedded backend: metric CSVs and log files, streamed.

Log timestamps are detected from the first lines (ISO-8601 incl. ``2026-07-07 10:01:02,123``,
syslog ``Jul  7 10:01:02``, Apache ``[Sun Dec 04 04:47:44 2005]``, ``yymmdd HHMMSS``) or given
as a strptime format. Lines without a timestamp (stack traces) take the previous one's.
Bad lines are counted and reported, never fatal; non-UTF-8 bytes are replaced.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

from veridiag.tools.backends.embedded import EmbeddedEnvironment

_MONTHS = {
    m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)
}
_LEVEL = re.compile(r"\b(FATAL|CRITICAL|ERROR|ERR|WARNING|WARN|INFO|NOTICE|DEBUG|TRACE)\b", re.IGNORECASE)
_LEVELS = {"FATAL": "ERROR", "CRITICAL": "ERROR", "ERR": "ERROR", "WARNING": "WARN", "NOTICE": "INFO", "TRACE": "DEBUG"}
Progress = Callable[[int], None]


class ImportFailedError(ValueError):
    """The file cannot be imported at all (not found, no timestamps recognised, bad header)."""


@dataclass
class ImportReport:
    imported: int = 0
    skipped: int = 0
    replaced_bytes_lines: int = 0
    first_skipped: list[int] = field(default_factory=list)
    time_format: str = ""

    def skip(self, line_number: int) -> None:
        self.skipped += 1
        if len(self.first_skipped) < 5:
            self.first_skipped.append(line_number)


@dataclass(frozen=True)
class TimeFormat:
    name: str
    pattern: re.Pattern[str]
    parse: Callable[[re.Match[str], int], datetime]


def _iso(match: re.Match[str], _year: int) -> datetime:
    text = match.group(0).replace(",", ".").replace("Z", "+00:00")
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _syslog(match: re.Match[str], year: int) -> datetime:
    month, day, hh, mm, ss = match.groups()
    return datetime(year, _MONTHS[month], int(day), int(hh), int(mm), int(ss), tzinfo=UTC)


def _apache(match: re.Match[str], _year: int) -> datetime:
    month, day, hh, mm, ss, year = match.groups()
    return datetime(int(year), _MONTHS[month], int(day), int(hh), int(mm), int(ss), tzinfo=UTC)


def _compact(match: re.Match[str], _year: int) -> datetime:
    yy, mo, dd, hh, mi, ss = (int(g) for g in match.groups())
    return datetime(2000 + yy, mo, dd, hh, mi, ss, tzinfo=UTC)


def _access(match: re.Match[str], _year: int) -> datetime:
    day, month, year, hh, mm, ss, sign, oh, om = match.groups()
    offset = timedelta(hours=int(oh), minutes=int(om)) * (1 if sign == "+" else -1)
    return datetime(int(year), _MONTHS[month], int(day), int(hh), int(mm), int(ss), tzinfo=UTC) - offset


FORMATS = (
    TimeFormat(
        "iso8601", re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?(?:Z|[+-]\d{2}:?\d{2})?"), _iso
    ),
    TimeFormat(
        "apache",
        re.compile(r"\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\w{3}) (\d{2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})\]"),
        _apache,
    ),
    TimeFormat(
        "access", re.compile(r"\[(\d{2})/(\w{3})/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})\]"), _access
    ),
    TimeFormat("syslog", re.compile(r"^(\w{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2})"), _syslog),
    TimeFormat("yymmdd", re.compile(r"^(\d{2})(\d{2})(\d{2}) (\d{2})(\d{2})(\d{2})\b"), _compact),
)


def _strptime_format(fmt: str) -> TimeFormat:
    width = len(datetime(2026, 12, 31, 23, 59, 59, 999999).strftime(fmt))
    anything = re.compile(rf"^.{{{width}}}", re.DOTALL)

    def parse(match: re.Match[str], _year: int) -> datetime:
        moment = datetime.strptime(match.group(0), fmt)
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

    return TimeFormat(f"strptime:{fmt}", anything, parse)


def detect_format(lines: list[str], year: int) -> TimeFormat | None:
    """The known format that parses most of ``lines`` (at least a third of them)."""
    best, best_hits = None, 0
    for candidate in FORMATS:
        hits = 0
        for line in lines:
            match = candidate.pattern.search(line)
            if match:
                try:
                    candidate.parse(match, year)
                    hits += 1
                except ValueError:
                    pass
        if hits > best_hits:
            best, best_hits = candidate, hits
    return best if best_hits * 3 >= max(1, len(lines)) else None


def level_of(line: str) -> str:
    match = _LEVEL.search(line, 0, 200)
    if not match:
        return "INFO"
    word = match.group(1).upper()
    return _LEVELS.get(word, word)


def _open(path: Path) -> IO[bytes]:
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise ImportFailedError(f"{path}: no such file") from None
    except OSError as exc:
        raise ImportFailedError(f"{path}: {exc.strerror}") from None


def import_logs(
    env: EmbeddedEnvironment,
    path: Path,
    *,
    service: str,
    time_format: str | None = None,
    year: int | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Stream ``path`` into the embedded log store; ``progress`` gets bytes read so far."""
    year = year or datetime.now(UTC).year
    report = ImportReport()
    with _open(path) as handle:
        head = [raw.decode("utf-8", "replace").rstrip("\r\n") for _, raw in zip(range(200), handle, strict=False)]
    chosen = _strptime_format(time_format) if time_format else detect_format([h for h in head if h.strip()], year)
    if chosen is None:
        raise ImportFailedError(f"{path}: no known timestamp format in the first lines; pass --time-format")
    report.time_format = chosen.name

    def rows() -> Iterator[tuple[datetime, str, str, str]]:
        previous: datetime | None = None
        previous_level = "INFO"
        read = 0
        with _open(path) as handle:
            for number, raw in enumerate(handle, start=1):
                read += len(raw)
                if progress and number % 20_000 == 0:
                    progress(read)
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    line = raw.decode("utf-8", "replace")
                    report.replaced_bytes_lines += 1
                line = line.rstrip("\r\n").replace("\x00", "\ufffd")
                if not line.strip():
                    continue
                match = chosen.pattern.search(line, 0, 120) if chosen.name != "syslog" else chosen.pattern.match(line)
                moment = None
                if match:
                    try:
                        moment = chosen.parse(match, year)
                    except ValueError:
                        moment = None
                if moment is None:
                    if previous is None:
                        report.skip(number)
                        continue
                    level = previous_level  # a continuation line (stack trace) belongs to its entry
                    moment = previous
                else:
                    level = previous_level = level_of(line)
                previous = moment
                report.imported += 1
                yield moment, service, level, line
            if progress:
                progress(read)

    env.add_logs(rows())
    return report


def _parse_timestamp(text: str) -> datetime:
    text = text.strip()
    try:
        number = float(text)
    except ValueError:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return datetime.fromtimestamp(number / 1000 if number > 1e11 else number, tz=UTC)


def import_metrics_csv(
    env: EmbeddedEnvironment, path: Path, *, service: str, metric: str, unit: str = "", progress: Progress | None = None
) -> ImportReport:
    """``timestamp,value`` rows (ISO-8601 or epoch seconds/ms); a header row is optional."""
    report = ImportReport(time_format="csv")
    if not re.fullmatch(r"[A-Za-z_:][A-Za-z0-9_:]*", metric):
        raise ImportFailedError(f"metric name {metric!r} must look like a Prometheus name (letters, digits, _ and :)")

    def rows() -> Iterator[tuple[str, str, str, datetime, float]]:
        with _open(path) as raw_handle:
            text = (line.decode("utf-8", "replace") for line in raw_handle)
            for number, row in enumerate(csv.reader(text), start=1):
                if not row or not "".join(row).strip():
                    continue
                if len(row) < 2:
                    report.skip(number)
                    continue
                try:
                    moment, value = _parse_timestamp(row[0]), float(row[1])
                except ValueError:
                    if number == 1:
                        continue  # a header row
                    report.skip(number)
                    continue
                if not math.isfinite(value):  # NaN / inf are no measurement
                    report.skip(number)
                    continue
                report.imported += 1
                if progress and number % 20_000 == 0:
                    progress(number)
                yield service, metric, unit, moment, value

    env.add_metric_points(rows())
    if report.imported == 0:
        raise ImportFailedError(f"{path}: no 'timestamp,value' rows could be read")
    return report


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
