"""Typed evidence kept with each invocation, to be drawn — never grounded (issue 28).

A tool's typed records (``tools/records.py``) used to live only in memory with the call's
result, so the pages that draw a session (the incident timeline, the evidence charts) read the
times and points back out of the stored output text (``tools/readback.py``, ``render.py``'s
``stored_points``). ``Drawn`` keeps what they need beside the output, in the invocation's
``drawn`` column (migration 0009): the series points with their unit, the anomaly episodes
(onset, end, peak), a counter's steps, the log templates' and bursts' times, each listed log
line's time, the changes — each tied to the index of the output line that states it; for
``query_traces``, the slowest trace's spans (``DrawnTrace``: a waterfall, tied to the line that
names the trace) and the calls and figures of the services it states (``DrawnGraph``).

**For drawing only.** The output text stays what claims quote and the Gatekeeper grounds
against; nothing checks a fact against these records (``InvocationView`` does not even name
them), and a page drawn from them places exactly what the lines they point at state: values are
kept as the output writes them (``format_value``'s precision), times to the second as ``iso``
writes them, except a log line's own time.

Bad input never costs a call: a value that is no finite number is kept as ``None`` and never
drawn; a record whose line is not in the output is left out (and counted); more than
``MAX_POINTS`` points of a series or ``MAX_ITEMS`` items of a kind are cut, counted in
``omitted``, and then the pages read that invocation's text instead, as they do for an
invocation stored before this (no records: ``read_drawn`` is None) or of another ``version``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from veridiag.analysis.traces import own_grew
from veridiag.contracts.json import JsonObject
from veridiag.text.render import format_value, iso, parse_value, rounded
from veridiag.tools.readback import (
    AnomalyLine,
    BurstLine,
    BurstsLine,
    ChangeLine,
    IncreasesLine,
    LineFacts,
    LogLine,
    PointLine,
    StepLine,
    TemplateLine,
    read_line,
)
from veridiag.tools.records import (
    ChangeEvidence,
    Evidence,
    LogEvidence,
    LogSample,
    MetricEvidence,
    SpanFigure,
    TraceEvidence,
)
from veridiag.tools.render import EXAMPLE_PREFIX, LINES_HEADING, LISTED_STEPS, POINTS_HEADING, stored_points

#: The records' shape; a stored document of another version is not read (the text is).
VERSION: Literal[1] = 1
#: Points kept per series (an output lists at most ``render.STORED_POINTS`` and the points its
#: anomalies quote), and items kept per kind (log lines, templates, changes, episodes).
MAX_POINTS = 2000
MAX_ITEMS = 1000
#: Spans of a trace kept to draw (Jaeger's own page grows slow past a few thousand): the rest counted.
MAX_SPANS = 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class _Drawn(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DrawnEpisode(_Drawn):
    """An anomaly episode: onset to end, its peak and the value expected there (in the series' unit)."""

    line: int
    onset: datetime
    end: datetime
    direction: Literal["up", "down"]
    peak: float
    peak_at: datetime
    expected: float
    factor: float | None = None


class DrawnSteps(_Drawn):
    """A sparse counter's increases: the steps its line lists, ``(when, by how much)``."""

    line: int
    steps: list[tuple[datetime, float]]


class DrawnSeries(_Drawn):
    """A metrics output's listed points (after its ``points:`` heading, one line each, from
    ``line`` on): their times in epoch seconds as steps (``_running``: the first absolute, each
    next one the seconds after the one before), values as written (``None``: no finite number)."""

    unit: str
    line: int
    times: list[int]
    #: Whole values as integers (``0``, not ``0.0``: a series of counts is mostly such).
    values: list[int | float | None]
    episodes: list[DrawnEpisode] = []
    steps: DrawnSteps | None = None

    def points(self) -> list[tuple[datetime, float]]:
        """The drawable points, in the output's order."""
        return [
            (_EPOCH + timedelta(seconds=seconds), float(value))
            for seconds, value in zip(_running(self.times), self.values, strict=False)
            if value is not None and math.isfinite(value)
        ]


class DrawnTemplate(_Drawn):
    """A log template row: how many lines, their level (and service), first and last, the template."""

    line: int
    count: int
    level: str
    service: str | None = None
    first: datetime
    last: datetime
    template: str
    #: Its example line (the next line) when that writes a zoned time of its own: the time
    #: (epoch ms) and how long its stamp is, after the ``e.g.``.
    example_ms: int | None = None
    example_stamp: int = 0


class DrawnBursts(_Drawn):
    line: int
    bursts: list[tuple[datetime, datetime, int]]


class DrawnLines(_Drawn):
    """A logs output's listed lines (after ``lines:``, every output line from ``line`` on — an
    entry with its stack trace spans several): their times in epoch milliseconds as steps
    (``_running``), and how long each one's own time is as it writes it — its stamp; 0: an
    entry's first line that writes no zoned time of its own, timed when the tool stored it; -1:
    a line that states no time (a stack trace's ``at …``)."""

    line: int
    ms: list[int]
    stamps: list[int]


class DrawnChange(_Drawn):
    line: int
    at: datetime
    service: str
    kind: str
    #: As the line writes it after the kind (the version suffix included).
    description: str


class DrawnSpan(_Drawn):
    """A span of the drawn trace (``analysis/traces.py`` ``WaterfallSpan``), in ms from the
    trace's first start to the microsecond: ``parent`` the index of its parent's row (an earlier
    one), ``critical`` its stretches on the critical path."""

    parent: int | None = None
    depth: int = 0
    service: str
    operation: str
    start: float
    duration: float
    own: float
    error: bool | None = None
    critical: list[tuple[float, float]] = []

    @property
    def critical_ms(self) -> float:
        return sum(b - a for a, b in self.critical)


class DrawnTrace(_Drawn):
    """The slowest trace a ``query_traces`` output lists (or the one it read by its id), span by
    span, to draw as a waterfall; ``line`` is the output line naming it (``trace 1 <id> at …``, or
    the head ``trace <id> at …``), ``path_line`` its critical path's."""

    line: int
    path_line: int | None = None
    trace_id: str
    at: datetime
    trace_ms: float
    spans: list[DrawnSpan]
    #: Spans past ``MAX_SPANS``, not kept.
    more: int = 0


class DrawnCall(_Drawn):
    """A call edge as its output line states it (window, and baseline)."""

    line: int
    caller: str
    callee: str
    calls: int
    errors: int | None = None
    baseline_calls: int = 0
    baseline_errors: int | None = None


class DrawnService(_Drawn):
    """A service whose own figures the output states: its self time p90 (window, baseline,
    factor) and error rate in % (None: not stated); ``suspect`` when its own work or errors grew
    (``analysis/traces.py`` ``own_grew``, the rule the diagnosis reads spans by)."""

    line: int
    service: str
    self_p90: float | None = None
    baseline_self_p90: float | None = None
    factor: float | None = None
    errors: float | None = None
    baseline_errors: float | None = None
    suspect: bool = False


class DrawnGraph(_Drawn):
    """The calls a ``query_traces`` output states about ``service``, and the services it measures."""

    service: str
    calls: list[DrawnCall] = []
    services: list[DrawnService] = []


class Drawn(_Drawn):
    """What one invocation's output states in time and value, typed, for the pages that draw it.

    Drawn only, never grounded: no check reads it (the Gatekeeper sees invocations through
    ``InvocationView``, which has no ``drawn``; ``tests/test_drawn.py`` holds its verdict the same
    with these absent or altered); a claim's facts are looked up in the output text."""

    version: Literal[1] = VERSION
    series: list[DrawnSeries] = []
    templates: list[DrawnTemplate] = []
    bursts: DrawnBursts | None = None
    lines: DrawnLines | None = None
    changes: list[DrawnChange] = []
    trace: DrawnTrace | None = None
    graph: DrawnGraph | None = None
    #: Records left out: over a cap, or whose line the output does not hold. When any were,
    #: the pages read this invocation's text instead.
    omitted: int = 0


# -- written with the output ------------------------------------------------------------------


def drawn_records(
    tool: str, text: str, evidence: Sequence[Evidence], *, clean: Callable[[str], str] = str
) -> Drawn | None:
    """The records of ``evidence`` tied to the lines of ``text`` (the output as stored; ``clean``
    is what was done to the output's text and must be done to the records' lines to find them).
    None for a tool whose output states nothing to draw (knowledge, the survey) or no records."""
    if tool not in ("query_metrics", "query_logs", "query_changes", "query_traces") or not evidence:
        return None
    builder = _Builder(text.split("\n"), clean)
    for record in evidence:
        if isinstance(record, TraceEvidence):
            builder.traces(record)
        if isinstance(record, MetricEvidence):
            builder.metric(record)
        elif isinstance(record, LogEvidence):
            builder.logs(record)
        elif isinstance(record, ChangeEvidence):
            builder.changes(record)
    return builder.drawn()


class _Builder:
    def __init__(self, lines: list[str], clean: Callable[[str], str]) -> None:
        self.lines, self.clean = lines, clean
        self.where: dict[str, list[int]] = {}
        for index, line in enumerate(lines):
            self.where.setdefault(line, []).append(index)
        self.series: list[DrawnSeries] = []
        self.templates: list[DrawnTemplate] = []
        self.bursts: DrawnBursts | None = None
        self.lines_at: DrawnLines | None = None
        self.changed: list[DrawnChange] = []
        self.trace: DrawnTrace | None = None
        self.graph: DrawnGraph | None = None
        self.omitted = 0
        self.taken: set[int] = set()
        #: The next metrics output block starts here (several series: one after another).
        self.after = 0

    def index(self, line: str, low: int = 0, high: int | None = None) -> int | None:
        """The first index of ``line`` (as cleaned) in ``[low, high)`` that no record took yet
        (two changes can read alike); counted as omitted when none."""
        found = next(
            (
                i
                for i in self.where.get(self.clean(line), ())
                if low <= i and (high is None or i < high) and i not in self.taken
            ),
            None,
        )
        self.omitted += found is None
        if found is not None:
            self.taken.add(found)
        return found

    def metric(self, record: MetricEvidence) -> None:
        heading = next((i for i in self.where.get(POINTS_HEADING, ()) if i >= self.after), None)
        if heading is None:
            self.omitted += 1 + len(record.anomalies)
            return
        low, listed = self.after, record.listed
        self.after = heading + 1 + len(listed)
        if self.after > len(self.lines):  # the output lists fewer points than the record: none kept
            self.omitted += len(listed) + len(record.anomalies)
            return
        kept = listed[:MAX_POINTS]
        self.omitted += len(listed) - len(kept)
        times = [_seconds(at) for at, _value in kept]
        episodes = []
        for found in record.anomalies[:MAX_ITEMS]:
            line = self.index(found.line, low, heading)
            if line is None or not (math.isfinite(found.peak) and math.isfinite(found.expected)):
                self.omitted += line is not None
                continue
            episodes.append(
                DrawnEpisode(
                    line=line,
                    onset=_second(found.onset),
                    end=_second(found.end),
                    direction=found.direction,
                    peak=_as_written(found.peak, record.unit),
                    peak_at=_second(found.peak_at),
                    expected=_as_written(rounded(found.expected), record.unit),
                    factor=found.factor if found.factor is not None and math.isfinite(found.factor) else None,
                )
            )
        self.omitted += max(0, len(record.anomalies) - MAX_ITEMS)
        steps = None
        if record.increases is not None and record.increases.steps:
            line = self.index(record.increases.line, low, heading)
            if line is not None:
                listed_steps = record.increases.steps[:LISTED_STEPS]
                steps = DrawnSteps(line=line, steps=[(_second(s.at), _as_written(s.by, "")) for s in listed_steps])
        self.series.append(
            DrawnSeries(
                unit=self.clean(record.unit),
                line=heading + 1,
                times=_steps(times),
                values=[_written(value, record.unit) for _at, value in kept],
                episodes=episodes,
                steps=steps,
            )
        )

    def logs(self, record: LogEvidence) -> None:
        for row in record.templates[:MAX_ITEMS]:
            line = self.index(row.line)
            if line is None:
                continue
            example = self.lines[line + 1] if line + 1 < len(self.lines) else ""
            own = read_line("query_logs", example) if example.startswith(EXAMPLE_PREFIX) else None
            self.templates.append(
                DrawnTemplate(
                    line=line,
                    count=row.count,
                    level=self.clean(row.level),
                    service=self.clean(row.service) if row.service else None,
                    first=_second(row.first),
                    last=_second(row.last),
                    template=self.clean(row.template),
                    example_ms=_ms(own.at) if isinstance(own, LogLine) else None,
                    example_stamp=len(own.stamp) if isinstance(own, LogLine) else 0,
                )
            )
        self.omitted += max(0, len(record.templates) - MAX_ITEMS)
        if record.bursts and record.bursts_line and (line := self.index(record.bursts_line)) is not None:
            bursts = [(_second(b.first), _second(b.last), b.count) for b in record.bursts]
            self.bursts = DrawnBursts(line=line, bursts=bursts)
        heading = self.index(LINES_HEADING) if record.samples else None
        if heading is not None:
            self.samples(heading + 1, record.samples)

    def samples(self, first: int, samples: Sequence[LogSample]) -> None:
        """The listed lines' times: each one's own zoned time as it writes it, else the time the
        tool stored it at; none kept when the output does not list them as the record does."""
        kept = samples[:MAX_ITEMS]
        self.omitted += len(samples) - len(kept)
        times: list[int] = []
        stamps: list[int] = []
        for sample in kept:
            entry = self.clean(sample.line).split("\n")
            at = first + len(stamps)
            if self.lines[at : at + len(entry)] != entry:
                self.omitted += len(kept)
                return
            for number, line in enumerate(entry):
                own = read_line("query_logs", line)
                if isinstance(own, LogLine):
                    times.append(_ms(own.at))
                    stamps.append(len(own.stamp))
                elif number == 0:
                    times.append(_ms(sample.ts))
                    stamps.append(0)
                else:
                    times.append(times[-1])
                    stamps.append(-1)
        self.lines_at = DrawnLines(line=first, ms=_steps(times), stamps=stamps)

    def changes(self, record: ChangeEvidence) -> None:
        for change in record.changes[:MAX_ITEMS]:
            line = self.index(change.line)
            if line is None:
                continue
            suffix = f" (version {change.version})" if change.version else ""
            self.changed.append(
                DrawnChange(
                    line=line,
                    at=_second(change.ts),
                    service=self.clean(change.service),
                    kind=self.clean(change.kind),
                    description=self.clean(change.description + suffix),
                )
            )
        self.omitted += max(0, len(record.changes) - MAX_ITEMS)

    def traces(self, record: TraceEvidence) -> None:
        """The slowest trace's spans (a trace over ``MAX_SPANS`` keeps its first rows: a row's
        parent is always an earlier one), the calls and the services' own figures."""
        slowest = record.slowest[0] if record.slowest else None
        # A window's slowest trace is named on its own line; a trace read by its id
        # (``trace_id=``) on the output's head line.
        named = record.line if record.trace_id is not None else slowest.line if slowest is not None else None
        if slowest is not None and slowest.spans and named is not None and (line := self.index(named)) is not None:
            kept = slowest.spans[:MAX_SPANS]
            self.trace = DrawnTrace(
                line=line,
                path_line=self.index(slowest.path_line),
                trace_id=self.clean(slowest.trace_id),
                at=_second(slowest.at),
                trace_ms=_micro(slowest.trace_ms),
                spans=[
                    DrawnSpan(
                        parent=span.parent,
                        depth=span.depth,
                        service=self.clean(span.service),
                        operation=self.clean(span.operation),
                        start=_micro(span.start_ms),
                        duration=_micro(span.duration_ms),
                        own=_micro(span.self_ms),
                        error=span.error,
                        critical=[(_micro(a), _micro(b)) for a, b in span.critical],
                    )
                    for span in kept
                ],
                more=len(slowest.spans) - len(kept),
            )
        calls = []
        for edge in record.calls[:MAX_ITEMS]:
            if (line := self.index(edge.line)) is not None:
                calls.append(
                    DrawnCall(
                        line=line,
                        caller=self.clean(edge.caller),
                        callee=self.clean(edge.callee),
                        calls=edge.calls,
                        errors=edge.errors,
                        baseline_calls=edge.baseline_calls,
                        baseline_errors=edge.baseline_errors,
                    )
                )
        services = []
        own, errors = record.figure("self_p90"), record.figure("errors")
        measured = [own] if own is not None else ([errors] if errors is not None else [])
        for figure in [*measured, *record.callees[:MAX_ITEMS]]:
            if (line := self.index(figure.line)) is not None:
                stated = errors if figure.service == record.service else None
                services.append(_service(self.clean(figure.service), line, figure, stated))
        self.graph = DrawnGraph(service=self.clean(record.service), calls=calls, services=services)

    def drawn(self) -> Drawn:
        return Drawn(
            series=self.series,
            templates=self.templates,
            bursts=self.bursts,
            lines=self.lines_at,
            changes=self.changed,
            trace=self.trace,
            graph=self.graph,
            omitted=self.omitted,
        )


def _service(name: str, line: int, figure: SpanFigure, errors: SpanFigure | None) -> DrawnService:
    """A service's own figures as its lines state them, and whether they make it a suspect."""
    own = figure if figure.name == "self_p90" else None
    now = errors.window if errors is not None else None
    before = errors.baseline if errors is not None else None
    factor = own.factor if own is not None else None
    return DrawnService(
        line=line,
        service=name,
        self_p90=own.window if own is not None else None,
        baseline_self_p90=own.baseline if own is not None else None,
        factor=factor,
        errors=now,
        baseline_errors=before,
        suspect=own_grew(factor, now, before),
    )


def _micro(ms: float) -> float:
    """A time in ms to the microsecond (a drawn trace's bytes matter; no pixel shows finer)."""
    return round(ms, 3) if math.isfinite(ms) else 0.0


def stored_form(drawn: Drawn | None) -> JsonObject | None:
    """The JSON the store keeps (defaults left out: a session's bytes matter)."""
    return None if drawn is None else drawn.model_dump(mode="json", exclude_defaults=True) | {"version": VERSION}


def _second(moment: datetime) -> datetime:
    """A moment as the output writes it: UTC, to the second."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.replace(microsecond=0)


def _seconds(moment: datetime) -> int:
    return int((_second(moment) - _EPOCH).total_seconds())


def _ms(moment: datetime) -> int:
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def _steps(values: Sequence[int]) -> list[int]:
    """The first value, then each one's difference from the one before (small numbers: a
    series a minute apart is ``60`` a point, consecutive lines ``1``)."""
    return [value - before for before, value in zip([0, *values], values, strict=False)]


def _running(steps: Sequence[int]) -> list[int]:
    """``_steps`` undone."""
    return list(accumulate(steps))


def _written(value: float, unit: str) -> int | float | None:
    """The value as the output writes it (and its claims quote it); None when it is no finite number."""
    if not math.isfinite(value):
        return None
    written = _as_written(value, unit)
    whole = written.is_integer() and abs(written) < 2**53 and math.copysign(1.0, written) > 0  # -0.0 writes "-0"
    return int(written) if whole else written


def _as_written(value: float, unit: str) -> float:
    read = parse_value(format_value(value, unit), unit)
    return read if read is not None else value


# -- read by the pages ------------------------------------------------------------------------


def read_drawn(stored: Mapping[str, Any] | None) -> Drawn | None:
    """The stored records, or None: none stored (an invocation from before migration 0009), of
    another version, not of this shape, or incomplete (``omitted``) — the pages read the text then."""
    if not stored:
        return None
    try:
        drawn = Drawn.model_validate(stored)
    except ValidationError:
        return None
    return drawn if not drawn.omitted else None


def series_points(output: str, unit: str, stored: Mapping[str, Any] | None) -> list[tuple[datetime, float]]:
    """The points a metrics invocation lists, to chart: from its records, else read from its text."""
    drawn = read_drawn(stored)
    if drawn is None:
        return stored_points(output, unit)
    return [point for series in drawn.series for point in series.points()]


class LineReader:
    """What each line of one invocation's output states in time (``readback.LineFacts``): from
    the invocation's records when it has them, else read from the line's text (``read_line``)."""

    def __init__(self, tool: str, stored: Mapping[str, Any] | None) -> None:
        self.tool = tool
        drawn = read_drawn(stored)
        self._facts: dict[int, LineFacts | tuple[datetime, int]] | None = None if drawn is None else _facts(drawn)

    @property
    def typed(self) -> bool:
        return self._facts is not None

    def __call__(self, index: int, line: str) -> LineFacts | None:
        """The facts of the output's line ``index`` (whose text is ``line``)."""
        if self._facts is None:
            return read_line(self.tool, line)
        facts = self._facts.get(index)
        if isinstance(facts, tuple):
            at, length = facts
            start = len(EXAMPLE_PREFIX) if line.startswith(EXAMPLE_PREFIX) else 0
            return LogLine(at=at, stamp=line[start : start + length] if length else iso(at))
        return facts


def _facts(drawn: Drawn) -> dict[int, LineFacts | tuple[datetime, int]]:
    """Each record as the line it points at reads (``readback``'s facts), by line index."""
    facts: dict[int, LineFacts | tuple[datetime, int]] = {}
    for series in drawn.series:
        unit = series.unit
        for number, (seconds, value) in enumerate(zip(_running(series.times), series.values, strict=False)):
            if value is not None and math.isfinite(value):
                at = _EPOCH + timedelta(seconds=seconds)
                facts[series.line + number] = PointLine(at=at, value=format_value(value, unit))
        for episode in series.episodes:
            facts[episode.line] = AnomalyLine(
                onset=episode.onset,
                end=episode.end,
                direction=episode.direction,
                peak=format_value(episode.peak, unit),
                peak_at=episode.peak_at,
                expected=format_value(episode.expected, unit),
                factor=f"{episode.factor:.2f}" if episode.factor is not None else None,
            )
        if series.steps is not None and series.steps.steps:
            steps = tuple(StepLine(at=at, by=format_value(by, "")) for at, by in series.steps.steps)
            facts[series.steps.line] = IncreasesLine(steps=steps)
    for row in drawn.templates:
        if row.example_ms is not None:
            facts[row.line + 1] = (_EPOCH + timedelta(milliseconds=row.example_ms), row.example_stamp)
        facts[row.line] = TemplateLine(
            count=row.count,
            level=row.level,
            service=row.service,
            first=row.first,
            last=row.last,
            template=row.template,
        )
    if drawn.bursts is not None and drawn.bursts.bursts:
        bursts = tuple(BurstLine(first=a, last=b, count=n) for a, b, n in drawn.bursts.bursts)
        facts[drawn.bursts.line] = BurstsLine(bursts=bursts)
    if drawn.lines is not None:
        moments = _running(drawn.lines.ms)
        for number, (ms, length) in enumerate(zip(moments, drawn.lines.stamps, strict=False)):
            if length >= 0:
                facts[drawn.lines.line + number] = (_EPOCH + timedelta(milliseconds=ms), length)
    for change in drawn.changes:
        facts[change.line] = ChangeLine(
            at=change.at, service=change.service, change=change.kind, description=change.description
        )
    return facts
