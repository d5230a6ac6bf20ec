"""Metric files as they come: CSV with any timestamp format, OpenMetrics / Prometheus text
exposition with timestamps, and Prometheus query JSON, read as one stream of samples.

The file's shape is checked when :func:`read_metric_file` is called, so a file that cannot
be read fails at once with one :class:`MetricFileError` naming it; rows are then streamed
and a :class:`MetricFileReport` is filled as they go. A row that cannot be read is skipped
and counted, never fatal; undecodable bytes are replaced.

CSV timestamps are recognised once, from the first rows: epoch seconds/ms/µs/ns, ISO-8601,
Go's ``time.Time.String()`` (``ingest.times``), or any format dateparser reads, turned into a
strptime format by matching dateparser's reading of a cell against the cell's own digits and
words. dateparser costs 1-3 ms a call,
strptime a few µs: only a row the detected format cannot read goes to dateparser.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from prometheus_client import parser as text_parser
from prometheus_client.openmetrics import parser as openmetrics_parser

from veridiag.ingest.columns import Role, is_time_name, role_of
from veridiag.ingest.kubernetes import workload_of
from veridiag.ingest.times import EPOCHS, MONOTONIC, go_time

Format = Literal["auto", "csv", "openmetrics", "prometheus-json"]

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_SAMPLE_ROWS = 200  # rows read ahead to find a CSV's columns and time format
_DATEPARSER_CELLS = 5  # cells of a column given to dateparser while detecting
_CHUNK_LINES = 2000  # exposition lines handed to prometheus_client at a time
_METRIC_COLUMNS = {"metric", "__name__", "metric_name", "name"}
#: Header names that say nothing about what was measured: a lone value column so named
#: needs ``metric=``.
_GENERIC = {"", "value", "values", "val", "v", "y", "data", "metric", "reading", "measurement", "sample", "number"}
_SUFFIX_UNITS = (
    ("_milliseconds", "ms"),
    ("_ms", "ms"),
    ("_seconds", "s"),
    ("_bytes", "bytes"),
    ("_percent", "%"),
    ("_pct", "%"),
    ("_ratio", ""),
)
_UNIT_WORDS = {"milliseconds": "ms", "seconds": "s", "bytes": "bytes", "percent": "%", "ratio": ""}
_TYPE_SUFFIXES = ("_total", "_count", "_sum", "_bucket", "_created", "_gcount", "_gsum")
_EXPOSITION_LINE = re.compile(r"^(# (TYPE|HELP|UNIT) |[a-zA-Z_:][a-zA-Z0-9_:]*(\{|[ \t]+[-+]?(\d|\.\d|nan|inf)))", re.I)
_ENGLISH_WORDS = (
    {datetime(2000, 1, 1 + d).strftime(f).lower() for d in range(7) for f in ("%a", "%A")}
    | {datetime(2000, m, 1).strftime(f).lower() for m in range(1, 13) for f in ("%b", "%B")}
    | {"utc", "gmt"}
)
_MONOTONIC = re.compile(MONOTONIC)
_FALLBACK_GIVE_UP = 200
#: An unnamed column of epoch numbers this close to every row's time is the time again.
_SAME_TIME_SECONDS = 86_400  # dateparser failures after which a mostly unreadable column is left


class MetricFileError(ValueError):
    """The file cannot be read at all; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class Sample:
    metric: str
    service: str | None  # from a label or column when the format has one, else None
    unit: str  # "" when unknown
    ts: datetime  # aware, UTC
    value: float
    labels: tuple[tuple[str, str], ...] = ()  # the other labels of an exposition or JSON series, sorted


@dataclass
class MetricFileReport:
    format: str = ""  # "csv", "openmetrics", "prometheus-text", "prometheus-json"
    time_format: str = ""  # CSV: "epoch-s", "epoch-ms", "iso8601", a strptime format, "dateparser"
    samples: int = 0
    skipped: int = 0  # rows without a readable time, and values that are empty, NaN or inf
    first_skipped: list[int] = field(default_factory=list)  # line numbers (JSON: value positions), ≤ 5
    series: set[tuple[str | None, str]] = field(default_factory=set)  # (service, metric)
    #: CSV: the column the rows' service came from, and how ("PodName (pod → workload)").
    service_column: str = ""
    #: CSV: that column holds pod names, whose workloads are the services (a reading of the
    #: names, which ``--service`` overrides).
    service_from_pod: bool = False
    #: CSV: columns that are not series and why ("TimeStamp: another time column, …").
    left_out: list[str] = field(default_factory=list)

    def skip(self, row: int) -> None:
        self.skipped += 1
        if len(self.first_skipped) < 5 and row not in self.first_skipped:
            self.first_skipped.append(row)


@dataclass(frozen=True)
class _Naming:
    """What the caller says about the series: overrides and the service label."""

    metric: str | None
    unit: str | None
    service_label: str


def read_metric_file(
    path: Path,
    *,
    fmt: Format = "auto",
    metric: str | None = None,
    unit: str | None = None,
    service_label: str = "service",
    tz: str = "UTC",
    report: MetricFileReport | None = None,
) -> Iterator[Sample]:
    """Samples of ``path``, streamed: the shape is checked now, rows are read on iteration.

    ``metric`` names a lone CSV value column (prefixes several) or JSON series without
    ``__name__``; exposition samples always carry their own name. ``unit`` overrides what
    the file says. ``service_label`` names the label or CSV column holding the service
    (``job`` is the fallback). Naive CSV times are in ``tz``. Raises
    :class:`MetricFileError` when the file cannot be read, and from the iterator when not
    one sample could be.
    """
    report = report if report is not None else MetricFileReport()
    if metric is not None and not _NAME.fullmatch(metric):
        raise MetricFileError(f"{path}: metric name {metric!r} must look like a Prometheus name (letters, digits, _ :)")
    try:
        zone: tzinfo = UTC if tz.upper() == "UTC" else ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise MetricFileError(f"{path}: unknown time zone {tz!r}") from exc
    naming = _Naming(metric, unit, service_label)
    try:
        kind = fmt if fmt != "auto" else _sniff(path)
        if kind == "prometheus-json":
            report.format = "prometheus-json"
            samples = _json_samples(path, naming, report)
        elif kind == "openmetrics":
            strict = _ends_with_eof(path)
            report.format = "openmetrics" if strict else "prometheus-text"
            samples = _exposition_samples(path, strict, naming, report)
        else:
            report.format = "csv"
            plan = _plan_csv(path, naming, zone)
            report.time_format = plan.clock.name
            report.service_column, report.left_out = plan.service_column, list(plan.left_out)
            report.service_from_pod = plan.pods
            samples = _csv_samples(path, plan, report)
    except OSError as exc:
        raise MetricFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return _counted(path, samples, report)


def _counted(path: Path, samples: Iterator[Sample], report: MetricFileReport) -> Iterator[Sample]:
    for sample in samples:
        report.samples += 1
        report.series.add((sample.service, sample.metric))
        yield sample
    if report.samples == 0:
        where = f" (first: {', '.join(map(str, report.first_skipped))})" if report.first_skipped else ""
        raise MetricFileError(f"{path}: no sample could be read; {report.skipped} skipped{where}")


# -- shared ---------------------------------------------------------------------------------


def _sniff(path: Path) -> str:
    """From the extension, else the first bytes: JSON, exposition lines, or CSV."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "prometheus-json"
    if suffix in {".om", ".prom"}:
        return "openmetrics"
    with path.open("rb") as handle:
        head = handle.read(16_384).decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if head.startswith(("{", "[")):
        return "prometheus-json"
    lines = [line for line in head.splitlines()[:20] if line.strip()]
    return "openmetrics" if any(_EXPOSITION_LINE.match(line) for line in lines) else "csv"


def csv_header(path: Path) -> list[str] | None:
    """The header of a CSV file (its first row, when no cell of it is a number), else None:
    what a folder import looks at before choosing how to read a file."""
    if _sniff(path) != "csv":
        return None
    head = list(itertools.islice(_lines(path), 20))
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff("".join(head)[:20_000], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    first = next((row for row in _rows(head, dialect) if any(cell.strip() for cell in row)), None)
    read = _numbers(dialect)
    if first is None or any(read(cell) is not None for cell in first):
        return None
    return [cell.strip() for cell in first]


def _lines(path: Path) -> Iterator[str]:
    """Decoded lines: a BOM dropped, undecodable bytes replaced, NUL bytes removed (csv chokes)."""
    with path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="") as text:
        for line in text:
            yield line.replace("\x00", "") if "\x00" in line else line


_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _sanitize(name: str) -> str:
    """A Prometheus-style name from a header: CamelCase words apart (``PodServerLatencyP90`` →
    ``pod_server_latency_p90``), lower case, runs of other characters as ``_``."""
    cleaned = re.sub(r"[^a-z0-9_:]+", "_", _WORD_START.sub("_", name.strip()).lower())
    cleaned = re.sub(r"_+", "_", cleaned).strip("_")
    return f"_{cleaned}" if cleaned[:1].isdigit() else cleaned


def _unit_of(name: str) -> str:
    base = name
    for suffix in _TYPE_SUFFIXES:
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    return next((unit for suffix, unit in _SUFFIX_UNITS if base.endswith(suffix)), "")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _decimal_comma(text: str) -> float | None:
    """A number written with a decimal comma ("1,5", "-0,25") or as ``float`` reads it."""
    value = _number(text)
    if value is None and text.count(",") == 1:
        value = _number(text.replace(",", "."))
    return value


def _numbers(dialect: type[csv.Dialect] | csv.Dialect) -> Callable[[str], float | None]:
    """How the cells of a CSV of ``dialect`` read as numbers: where the comma does not part the
    cells (``;``, tab, ``|``: a spreadsheet's export in most of Europe), it may be a decimal comma."""
    return _number if dialect.delimiter == "," else _decimal_comma


def _utc(seconds: float) -> datetime | None:
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


# -- CSV: columns -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Clock:
    """How a CSV's timestamp cells become aware UTC datetimes."""

    name: str
    parse: Callable[[str], datetime | None]
    #: The cells state their instant (epoch, an offset, Go's zone) rather than a wall-clock
    #: time read in the zone the import assumes.
    zoned: bool = False


@dataclass(frozen=True)
class _Column:
    index: int
    metric: str  # "" when each row names its metric
    unit: str | None  # None: from each row's metric name


@dataclass(frozen=True)
class _CsvPlan:
    dialect: type[csv.Dialect] | csv.Dialect
    header: bool
    time_index: int
    clock: _Clock
    values: list[_Column]
    service_index: int | None
    metric_index: int | None
    #: The service column holds pod names: each row's service is the pod's workload.
    pods: bool = False
    service_column: str = ""
    left_out: tuple[str, ...] = ()


def _plan_csv(path: Path, naming: _Naming, zone: tzinfo) -> _CsvPlan:
    """Delimiter, header, time column and format, service column, value columns: from the first rows."""
    head = list(itertools.islice(_lines(path), _SAMPLE_ROWS + 1))
    text = "".join(head)
    if not text.strip():
        raise MetricFileError(f"{path}: the file is empty")
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:20_000], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    rows = [row for row in _rows(head, dialect) if any(cell.strip() for cell in row)]
    if not rows:
        raise MetricFileError(f"{path}: the file is empty")
    width = max(len(row) for row in rows)
    read = _numbers(dialect)
    header = not any(read(cell) is not None for cell in rows[0])
    if header and len(rows) == 1:
        raise MetricFileError(f"{path}: only a header, no rows")
    names = [cell.strip() for cell in rows[0]] + [""] * width if header else [""] * width
    columns = [[row[j].strip() if j < len(row) else "" for row in rows[header:]] for j in range(width)]

    time_index, clock, other_times = _time_column(path, names, columns, zone)
    service_index, role = _service_column(names[:width], naming.service_label, {time_index, *other_times})
    lowered = [n.lower() for n in names]
    metric_index = next(
        (j for j in range(width) if lowered[j] in _METRIC_COLUMNS and not _mostly_numeric(columns[j], read)), None
    )
    taken = {time_index, service_index, metric_index, *other_times}
    numeric = [j for j in range(width) if j not in taken and _mostly_numeric(columns[j], read)]
    left_out = [_said_time(names, j, time_index, why) for j, why in other_times.items()]
    repeated = _repeated_times(columns, numeric, columns[time_index], clock)
    for j, why in repeated.items():
        left_out.append(_said_time(names, j, time_index, why))
    numeric = [j for j in numeric if j not in repeated]
    if not numeric:
        raise MetricFileError(f"{path}: no numeric value column next to the timestamps")
    values = _value_columns(path, names if header else None, numeric, naming, each_row_named=metric_index is not None)
    said = "" if service_index is None else names[service_index] + (" (pod → workload)" if role == "pod" else "")
    return _CsvPlan(
        dialect,
        header,
        time_index,
        clock,
        values,
        service_index,
        metric_index,
        pods=role == "pod",
        service_column=said,
        left_out=tuple(left_out),
    )


def _said_time(names: list[str], index: int, time_index: int, why: str) -> str:
    name = names[index] or f"column {index + 1}"
    time_name = names[time_index] or f"column {time_index + 1}"
    return f"{name}: not a series — {why}; the time is {time_name}"


def _service_column(names: list[str], label: str, times: set[int]) -> tuple[int | None, Role | None]:
    """The column naming whose rows they are: the one named ``label`` (``--service-label``),
    else a service name, a pod name (read as its workload), a container name (``columns.yaml``)."""
    candidates = [j for j in range(len(names)) if j not in times and names[j]]
    exact = next((j for j in candidates if names[j].lower() == label.lower()), None)
    if exact is not None:
        return exact, role_of(names[exact]) or "service"
    for wanted in ("service", "pod", "container"):
        found = next((j for j in candidates if role_of(names[j]) == wanted), None)
        if found is not None:
            return found, wanted
    return None, None


def _rows(lines: Iterable[str], dialect: type[csv.Dialect] | csv.Dialect) -> Iterator[list[str]]:
    reader = csv.reader(lines, dialect)
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error:
            continue


def _mostly_numeric(cells: list[str], read: Callable[[str], float | None] = _number) -> bool:
    filled = [c for c in cells if c]
    return bool(filled) and sum(read(c) is not None for c in filled) * 2 >= len(filled)


def _time_column(
    path: Path, names: list[str], columns: list[list[str]], zone: tzinfo
) -> tuple[int, _Clock, dict[int, str]]:
    """The rows' time column and how to read it, and the other columns that hold times too (by
    their names: ``Time`` and ``TimeStamp``, ``Timestamp`` and ``TimeUnixNano``) with why they
    are left out. Of several named like a time, the first whose cells state their instant
    (epoch, an offset) wins, else the first readable; without a name, the first column whose
    cells read as times."""
    named = [j for j, name in enumerate(names[: len(columns)]) if name and is_time_name(name)]
    clocks = {j: _detect_clock(columns[j], zone) for j in named}
    readable = [j for j in named if clocks[j] is not None]
    if named and not readable:
        first = named[0]
        example = next((c for c in columns[first] if c), "")
        raise MetricFileError(f"{path}: column {names[first]!r} holds no time I can read (e.g. {example!r})")
    if readable:
        chosen = next((j for j in readable if (found := clocks[j]) is not None and found.zoned), readable[0])
        clock = clocks[chosen]
        assert clock is not None
        others = {j: _agreement(columns[j], clocks[j], columns[chosen], clock) for j in readable if j != chosen}
        return chosen, clock, others
    for j, cells in enumerate(columns):
        found = _detect_clock(cells, zone)
        if found is not None:
            return j, found, {}
    raise MetricFileError(f"{path}: no column of timestamps (name it 'timestamp', or write ISO-8601 or epoch times)")


def _agreement(cells: list[str], clock: _Clock | None, time_cells: list[str], time_clock: _Clock) -> str:
    """How a second time column compares with the time column over the first rows."""
    if clock is None:
        return "named like a time"
    gaps = [
        abs((a - b).total_seconds())
        for x, y in zip(cells, time_cells, strict=True)
        if x and y and (a := clock.parse(x)) is not None and (b := time_clock.parse(y)) is not None
    ]
    if not gaps:
        return f"another time column ({clock.name})"
    worst = max(gaps)
    within = "within 1 s of it" if worst < 1 else f"up to {_span(worst)} away from it"
    return f"another time column ({clock.name}, {within})"


def _span(seconds: float) -> str:
    if seconds >= 365.25 * 86_400:
        return f"{seconds / (365.25 * 86_400):.1f} years"
    if seconds >= 2 * 86_400:
        return f"{seconds / 86_400:.1f} days"
    if seconds >= 7200:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"


def _repeated_times(
    columns: list[list[str]], numeric: list[int], time_cells: list[str], clock: _Clock
) -> dict[int, str]:
    """Numeric columns not named like a time whose numbers are epoch times within a day of each
    row's time: the same time again, in another unit, not a measurement."""
    found: dict[int, str] = {}
    for j in numeric:
        numbers = [n for c in columns[j] if c and (n := _number(c)) is not None]
        epoch_clock = _epoch_clock(numbers, UTC) if numbers else None
        if epoch_clock is None:
            continue
        gaps = [
            abs((a - b).total_seconds())
            for x, y in zip(columns[j], time_cells, strict=True)
            if x and y and (a := epoch_clock.parse(x)) is not None and (b := clock.parse(y)) is not None
        ]
        if gaps and max(gaps) <= _SAME_TIME_SECONDS:
            found[j] = f"its numbers are the rows' times ({epoch_clock.name})"
    return found


def _value_columns(
    path: Path, names: list[str] | None, numeric: list[int], naming: _Naming, *, each_row_named: bool
) -> list[_Column]:
    """Metric name and unit of each numeric column: ``value (ms)``, ``latency_ms``, ``cpu_percent``."""
    columns: list[_Column] = []
    for j in numeric:
        header = names[j] if names else ""
        bracketed = re.fullmatch(r"(.*?)\s*[(\[]\s*([^)\]]*?)\s*[)\]]\s*", header)
        base, header_unit = (bracketed.group(1), bracketed.group(2)) if bracketed else (header, "")
        name = _sanitize(base)
        unit = naming.unit if naming.unit is not None else (header_unit or _unit_of(name))
        if each_row_named:
            columns.append(_Column(j, "", naming.unit if naming.unit is not None else header_unit or None))
        elif len(numeric) == 1:
            if naming.metric is None and name in _GENERIC:
                what = f"its value column is called {header!r}" if header else "it has no header"
                raise MetricFileError(f"{path}: {what}, which names no metric; pass --metric")
            columns.append(_Column(j, naming.metric or name, unit))
        else:
            name = name or f"column_{j + 1}"
            columns.append(_Column(j, f"{naming.metric}_{name}" if naming.metric else name, unit))
    return columns


def _csv_samples(path: Path, plan: _CsvPlan, report: MetricFileReport) -> Iterator[Sample]:
    reader = csv.reader(_lines(path), plan.dialect)
    parse = plan.clock.parse
    header_pending = plan.header
    read = _numbers(plan.dialect)
    workloads: dict[str, str] = {}
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error:  # e.g. a field over the csv module's size limit
            report.skip(reader.line_num)
            continue
        number = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if header_pending:
            header_pending = False
            continue
        stamp = row[plan.time_index].strip() if plan.time_index < len(row) else ""
        moment = parse(stamp) if stamp else None
        if moment is None:
            report.skip(number)
            continue
        service = None
        if plan.service_index is not None and plan.service_index < len(row):
            service = row[plan.service_index].strip() or None
            if plan.pods and service is not None:
                known = workloads.get(service)
                if known is None:
                    known = workloads[service] = workload_of(service)
                service = known
        row_metric = ""
        if plan.metric_index is not None:
            row_metric = _sanitize(row[plan.metric_index]) if plan.metric_index < len(row) else ""
            if not row_metric:
                report.skip(number)
                continue
        for column in plan.values:
            cell = row[column.index].strip() if column.index < len(row) else ""
            value = read(cell) if cell else None
            if value is None or not math.isfinite(value):
                report.skip(number)
                continue
            name = row_metric or column.metric
            yield Sample(name, service, _unit_of(name) if column.unit is None else column.unit, moment, value)


# -- CSV: time formats --------------------------------------------------------------------------


def _detect_clock(cells: list[str], zone: tzinfo) -> _Clock | None:
    """How ``cells`` (a column's first rows) are written, if they are times: cells without a
    digit (``n/a``, ``-``) are no evidence either way."""
    filled = [c for c in cells if any(ch.isdigit() for ch in c)]
    if not filled:
        return None
    for compact in ("%Y%m%d%H%M%S", "%Y%m%d%H%M", "%Y%m%d"):  # 20140314033000 is no epoch in ms
        if all(c.isdigit() and len(c) == len(compact) + 2 and _strptime(c, compact) for c in filled):
            return _strptime_clock(compact, zone, filled)
    numbers = [_number(c) for c in filled]
    if all(n is not None for n in numbers):
        return _epoch_clock([n for n in numbers if n is not None], zone)
    if sum(_iso(c, zone) is not None for c in filled) >= 0.9 * len(filled):
        zoned = all(_OFFSET.search(c) is not None for c in filled)
        return _with_fallback("iso8601", lambda text: _iso(text, zone), zone, zoned=zoned)
    if sum(go_time(c) is not None for c in filled) >= 0.9 * len(filled):
        return _with_fallback("go-time", go_time, zone, zoned=True)
    return _inferred_clock(filled, zone)


def _epoch_clock(numbers: list[float], zone: tzinfo) -> _Clock | None:
    """Epoch seconds/ms/µs/ns when every number has the same plausible magnitude and they
    mostly rise (a value column of large numbers does not)."""
    for name, low, high, per_second in EPOCHS:
        if all(low <= abs(n) < high for n in numbers):
            rising = sum(b >= a for a, b in itertools.pairwise(numbers))
            if len(numbers) > 2 and rising < 0.9 * (len(numbers) - 1):
                return None

            def parse(text: str, per_second: float = per_second) -> datetime | None:
                number = _number(text)
                return None if number is None or not math.isfinite(number) else _utc(number / per_second)

            return _with_fallback(name, parse, zone, zoned=True)
    return None


def _iso(text: str, zone: tzinfo) -> datetime | None:
    try:
        return _aware(datetime.fromisoformat(text), zone)
    except ValueError:
        return None


def _aware(moment: datetime, zone: tzinfo) -> datetime:
    """UTC; a naive time is read in ``zone``."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC) if zone is UTC else moment.replace(tzinfo=zone).astimezone(UTC)
    return moment.astimezone(UTC)


def _naive(moment: datetime) -> datetime:
    return moment.replace(tzinfo=None)


@lru_cache(maxsize=4096)
def _dateparser(text: str) -> datetime | None:
    """dateparser's reading in the project's languages (en, zh), else in any language (slower)."""
    import dateparser

    stated = go_time(text)
    if stated is not None:
        return stated
    if not re.search(r"\d", text) or len(text) > 64 or _MONOTONIC.search(text):
        return None  # dateparser reads Go's monotonic suffix (m=+0.3) as now: never given one
    for languages in (["en", "zh"], None):
        if languages is None and all(w.lower() in _ENGLISH_WORDS for w in re.findall(r"[^\W\d_]{3,}", text)):
            return None  # no word for another language to read (loading them all costs seconds)
        try:
            moment = dateparser.parse(text, languages=languages, settings={"STRICT_PARSING": True})
        except Exception:  # a third-party parser on arbitrary text: no reading, whatever it raised
            return None
        if isinstance(moment, datetime):
            return moment
    return None


class _Fallback:
    """dateparser for the cells a fast path cannot read; left alone once most of them fail
    (milliseconds a call: a column of garbage would take minutes)."""

    def __init__(self, zone: tzinfo) -> None:
        self._zone = zone
        self._read = 0
        self._failed = 0

    def __call__(self, text: str) -> datetime | None:
        if self._failed >= _FALLBACK_GIVE_UP and self._failed > 4 * self._read:
            return None
        moment = _dateparser(text)
        if moment is None:
            self._failed += 1
            return None
        self._read += 1
        return _aware(moment, self._zone)


def _with_fallback(name: str, fast: Callable[[str], datetime | None], zone: tzinfo, *, zoned: bool = False) -> _Clock:
    fallback = _Fallback(zone)

    def parse(text: str) -> datetime | None:
        moment = fast(text)
        return moment if moment is not None else fallback(text)

    return _Clock(name, parse, zoned)


def _inferred_clock(cells: list[str], zone: tzinfo) -> _Clock | None:
    """A strptime format learnt from dateparser's reading of the first cells: of the formats
    that reproduce it, the one reading most sampled cells (then agreeing most) wins."""
    readings = [(c, r) for c in cells[:_DATEPARSER_CELLS] if (r := _dateparser(c)) is not None]
    if not readings or len(readings) * 2 < min(len(cells), _DATEPARSER_CELLS):
        return None
    best: tuple[tuple[int, int, int], str] | None = None
    for rank, fmt in enumerate(_formats(*readings[0])):
        parsed = sum(_strptime(c, fmt) is not None for c in cells)
        agree = sum(_strptime(c, fmt) == _naive(r) for c, r in readings)
        if best is None or (parsed, agree, -rank) > best[0]:
            best = ((parsed, agree, -rank), fmt)
    if best is None or best[0][0] < 0.9 * len(cells):
        return _with_fallback("dateparser", lambda _text: None, zone)
    return _strptime_clock(best[1], zone, cells)


def _strptime_clock(fmt: str, zone: tzinfo, cells: list[str]) -> _Clock:
    """strptime with ``fmt``, or its compiled twin when that reads ``cells`` the same way."""

    def slow(text: str) -> datetime | None:
        try:
            return _aware(datetime.strptime(text, fmt), zone)
        except ValueError:
            return None

    compiled = _compiled(fmt)
    if compiled is not None and all(compiled(c) == _strptime(c, fmt) for c in cells):
        return _with_fallback(fmt, lambda text: _aware_or_none(compiled(text), zone), zone, zoned="%z" in fmt)
    return _with_fallback(fmt, slow, zone, zoned="%z" in fmt)


def _aware_or_none(moment: datetime | None, zone: tzinfo) -> datetime | None:
    return None if moment is None else _aware(moment, zone)


_ONE_OR_TWO, _TWO = r"\d{1,2}", r"\d{2}"
_FIELDS = {
    "%Y": ("Y", r"\d{4}"),
    "%y": ("y", r"\d{2}"),
    "%m": ("m", r"\d{1,2}"),
    "%d": ("d", r"\d{1,2}"),
    "%H": ("H", r"\d{1,2}"),
    "%I": ("I", r"\d{1,2}"),
    "%M": ("M", r"\d{1,2}"),
    "%S": ("S", r"\d{1,2}"),
    "%f": ("f", r"\d{1,6}"),
    "%p": ("p", r"[AaPp][Mm]"),
    "%b": ("b", r"[A-Za-z]{3}"),
}
_MONTHS = {datetime(2000, m, 1).strftime("%b").lower(): m for m in range(1, 13)}


def _compiled(fmt: str) -> Callable[[str], datetime | None] | None:
    """A regular expression for a format of digits, ``%b`` and ``%p``: strptime is pure
    Python and ~10 µs a call, this is a few. None for other directives (strptime then).
    Fields written next to each other (``%Y%m%d``) take two digits each."""
    parts = [p for p in re.split(r"(%.)", fmt) if p]
    pattern = ""
    for index, part in enumerate(parts):
        if part == "%%":
            pattern += "%"
        elif part.startswith("%") and len(part) == 2:
            if part not in _FIELDS:
                return None
            group, digits = _FIELDS[part]
            if digits == _ONE_OR_TWO and index + 1 < len(parts) and parts[index + 1] in _FIELDS:
                digits = _TWO
            pattern += f"(?P<{group}>{digits})"
        else:
            pattern += re.escape(part)
    regex = re.compile(pattern + r"\Z")

    def parse(text: str) -> datetime | None:
        found = regex.match(text)
        if found is None:
            return None
        g = found.groupdict()
        year = int(g["Y"]) if "Y" in g else int(g["y"]) + (1900 if int(g["y"]) >= 69 else 2000)
        month = int(g["m"]) if "m" in g else _MONTHS.get(g.get("b", "").lower(), 0)
        hour = int(g.get("H") or 0)
        if "I" in g:
            hour = int(g["I"]) % 12 + (12 if g.get("p", "").lower() == "pm" else 0)
        micro = int(g["f"].ljust(6, "0")) if "f" in g else 0
        try:
            return datetime(year, month, int(g["d"]), hour, int(g.get("M") or 0), int(g.get("S") or 0), micro)
        except (ValueError, KeyError):
            return None

    return parse


def _strptime(text: str, fmt: str) -> datetime | None:
    """Wall-clock reading of ``text`` (an offset is read but dropped)."""
    try:
        return _naive(datetime.strptime(text, fmt))
    except ValueError:
        return None


_TOKEN = re.compile(r"\d+|[^\W\d_]+|\W|_")
_OFFSET = re.compile(r"(?:Z|[+-]\d{2}:?\d{2})$")
_MAX_COMBINATIONS = 4096


def _formats(text: str, moment: datetime) -> list[str]:
    """strptime formats that read ``text`` as ``moment`` (dateparser's reading), then the
    same with day and month swapped, for the sampled rows to decide between."""
    body, zone_part = text, ""
    offset = _OFFSET.search(text) if moment.tzinfo is not None else None
    if offset:
        body, zone_part = text[: offset.start()], "%z"
    wall = _naive(moment)
    options: list[list[str]] = []
    previous = ""
    for token in _TOKEN.findall(body):
        options.append(_directives(token, wall, previous) or [token.replace("%", "%%")])
        previous = token
    found: list[str] = []
    for combination in itertools.islice(itertools.product(*options), _MAX_COMBINATIONS):
        used = [d for d in combination if d.startswith("%") and d != "%%"]
        if len(used) != len(set(used)) or not _is_date(used):
            continue
        fmt = "".join(combination) + zone_part
        if fmt not in found and _strptime(text, fmt) == wall:
            found.append(fmt)
    swapped = [f.replace("%d", "\x00").replace("%m", "%d").replace("\x00", "%m") for f in found]
    return found + [f for f in swapped if f not in found]


def _is_date(directives: list[str]) -> bool:
    has = set(directives)
    if any(len(d) > 2 for d in has):  # %Y%m%d… as one token
        return True
    return bool(has & {"%Y", "%y"}) and bool(has & {"%m", "%b", "%B"}) and "%d" in has


def _directives(token: str, moment: datetime, previous: str) -> list[str]:
    """The strptime directives ``token`` can stand for in ``moment``, dates before times."""
    if not token.isdigit():
        lowered = token.lower()
        out = [d for d in ("%b", "%B", "%a", "%A") if lowered == moment.strftime(d).lower()]
        return [*out, "%p"] if lowered in {"am", "pm"} else out
    value, length = int(token), len(token)
    if previous in {".", ","} and length <= 6 and int(token.ljust(6, "0")) == moment.microsecond:
        return ["%f"]
    out = ["%Y"] if length == 4 and value == moment.year else []
    if length <= 2:
        parts = (
            ("%m", moment.month),
            ("%d", moment.day),
            ("%H", moment.hour),
            ("%I", moment.hour % 12 or 12),
            ("%M", moment.minute),
            ("%S", moment.second),
        )
        out += [directive for directive, part in parts if value == part]
        if length == 2 and value == moment.year % 100:
            out.append("%y")
    out += [c for c in ("%Y%m%d%H%M%S", "%Y%m%d%H%M", "%Y%m%d") if token == moment.strftime(c)]
    return out


# -- OpenMetrics / Prometheus text exposition --------------------------------------------------


def _ends_with_eof(path: Path) -> bool:
    """OpenMetrics ends with ``# EOF``; the older Prometheus text format does not, and has
    its timestamps in milliseconds instead of seconds."""
    with path.open("rb") as handle:
        handle.seek(0, io.SEEK_END)
        handle.seek(max(0, handle.tell() - 256))
        return handle.read().decode("utf-8", "replace").rstrip().endswith("# EOF")


def _exposition_samples(path: Path, strict: bool, naming: _Naming, report: MetricFileReport) -> Iterator[Sample]:
    """prometheus_client parses ``_CHUNK_LINES`` lines at a time with the current family's
    metadata in front (its parsers hold a whole family in memory); a chunk it refuses is
    parsed again line by line so that only the bad lines are skipped."""
    meta: list[str] = []
    family: str | None = None
    chunk: list[tuple[int, str]] = []
    for number, raw in enumerate(_lines(path), start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if line == "# EOF":
            break
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in {"HELP", "TYPE", "UNIT"}:
                yield from _parse_chunk(chunk, meta, strict, naming, report)
                chunk = []
                if parts[2] != family:
                    family, meta = parts[2], []
                meta.append(line)
            continue
        chunk.append((number, line))
        if len(chunk) >= _CHUNK_LINES:
            yield from _parse_chunk(chunk, meta, strict, naming, report)
            chunk = []
    yield from _parse_chunk(chunk, meta, strict, naming, report)


def _parse_chunk(
    chunk: list[tuple[int, str]], meta: list[str], strict: bool, naming: _Naming, report: MetricFileReport
) -> Iterator[Sample]:
    if not chunk:
        return
    parsed = _families(meta, [line for _n, line in chunk], strict)
    rows: list[tuple[int, str, Any, str]] = []
    if parsed is not None and len(parsed) == len(chunk):
        rows = [(number, line, sample, unit) for (number, line), (sample, unit) in zip(chunk, parsed, strict=True)]
    else:
        for number, line in chunk:
            alone = _families(meta, [line], strict)
            if alone is not None and len(alone) == 1:
                rows.append((number, line, *alone[0]))
            else:
                report.skip(number)
    for number, line, sample, family_unit in rows:
        made = _exposition_sample(line, sample, family_unit, strict, naming)
        if made is None:
            report.skip(number)
        else:
            yield made


def _families(meta: list[str], lines: list[str], strict: bool) -> list[tuple[Any, str]] | None:
    """(sample, its family's unit) per sample line, or None when the parser refuses the text."""
    text = "\n".join([*meta, *lines]) + ("\n# EOF\n" if strict else "\n")
    parse = openmetrics_parser.text_string_to_metric_families if strict else text_parser.text_string_to_metric_families
    try:
        return [(sample, family.unit or "") for family in parse(text) for sample in family.samples]
    except (ValueError, TypeError, IndexError, KeyError):
        return None


def _exposition_sample(line: str, sample: Any, family_unit: str, strict: bool, naming: _Naming) -> Sample | None:
    if sample.timestamp is None or str(sample.name).endswith("_created"):
        return None  # a sample without a time cannot be placed; _created is a start time, not a measurement
    seconds = float(sample.timestamp)
    if not strict and seconds < 1e8:
        seconds *= 1000  # written in seconds although the text format means milliseconds
    moment = _utc(seconds)
    value = float(sample.value)
    if moment is None or not math.isfinite(value):
        return None
    name = str(sample.name)
    if not strict and name.endswith("_total") and not line.lstrip().startswith(name):
        name = name[: -len("_total")]  # the text parser renames counters; keep the name as written
    labels = {str(k): str(v) for k, v in sample.labels.items()}
    service = labels.pop(naming.service_label, None)
    if service is None:
        service = labels.pop("job", None)
    unit = naming.unit if naming.unit is not None else _UNIT_WORDS.get(family_unit, family_unit) or _unit_of(name)
    return Sample(name, service, unit, moment, value, tuple(sorted(labels.items())))


# -- Prometheus query JSON -----------------------------------------------------------------------


def _json_samples(path: Path, naming: _Naming, report: MetricFileReport) -> Iterator[Sample]:
    """The answer of ``/api/v1/query_range`` (matrix) or ``/api/v1/query`` (vector, scalar),
    or its ``data`` object alone."""
    try:
        document = json.loads(path.read_bytes().decode("utf-8", "replace"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise MetricFileError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise MetricFileError(f"{path}: expected a Prometheus query answer (an object with data.result)")
    if document.get("status") == "error":
        raise MetricFileError(f"{path}: the query failed: {document.get('error', 'no reason given')}")
    data = document.get("data", document)
    kind = data.get("resultType") if isinstance(data, dict) else None
    result = data.get("result") if isinstance(data, dict) else None
    if kind not in {"matrix", "vector", "scalar"} or not isinstance(result, list):
        raise MetricFileError(f"{path}: expected data.resultType matrix, vector or scalar and a result list")
    series: list[tuple[dict[str, str], list[Any]]] = []
    if kind == "scalar":
        series.append(({}, [result]))
    for item in result if kind != "scalar" else []:
        if isinstance(item, dict):
            labels = item.get("metric")
            points = item.get("values") if kind == "matrix" else [item.get("value")]
            series.append(
                (
                    {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
                    points if isinstance(points, list) else [],
                )
            )
    if naming.metric is None and any(not labels.get("__name__") for labels, _p in series):
        raise MetricFileError(f"{path}: a series has no __name__ label; pass --metric")
    return _json_points(series, naming, report)


def _json_points(
    series: list[tuple[dict[str, str], list[Any]]], naming: _Naming, report: MetricFileReport
) -> Iterator[Sample]:
    position = 0
    for labels, points in series:
        rest = dict(labels)
        name = rest.pop("__name__", "") or naming.metric or ""
        service = rest.pop(naming.service_label, None)
        if service is None:
            service = rest.pop("job", None)
        unit = naming.unit if naming.unit is not None else _unit_of(name)
        extra = tuple(sorted(rest.items()))
        for point in points:
            position += 1
            try:
                seconds, value = float(point[0]), float(point[1])
            except (TypeError, ValueError, IndexError, KeyError):
                report.skip(position)
                continue
            moment = _utc(seconds) if math.isfinite(seconds) else None
            if moment is None or not math.isfinite(value):
                report.skip(position)
                continue
            yield Sample(name, service, unit, moment, value, extra)
