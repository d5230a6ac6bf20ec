"""``rank_suspects``: which services changed in a window and which most likely started it.

One call surveys every service with data in the window — each of its metric series against its
own history, its ERROR and WARN log templates, the change feed, the call graph where one was
imported — and ranks them with ``analysis/suspects.py``. Its output states every figure of the
ranking on a line of its own, so "X moved first" or "X is the likely origin" is a claim that
quotes this tool's output like any other, never prose: the offline and the LLM engines cite it
alike. What was examined is stated as exactly as what was found: how many services and series,
which were quiet, which changes did not count and why.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from veridiag._collector import collector_paused
from veridiag.analysis.anomaly import SCORE_CAP
from veridiag.analysis.signatures import family_of, signatures
from veridiag.analysis.suspects import (
    AFTER_AT,
    BEFORE_AT,
    EXPLAINED_FACTOR,
    LOG_FAMILY,
    MIN_EPISODE_POINTS,
    MIN_LEAD_POINTS,
    MIN_STANDOUT,
    ChangeInput,
    Excluded,
    Level,
    LogInput,
    Question,
    SeriesInput,
    Signal,
    SuspectReport,
    levels_period,
    rank_levels,
    rank_suspects,
    rivalry,
)
from veridiag.analysis.suspects import Suspect as Ranked
from veridiag.text.render import format_value, iso, rounded
from veridiag.tools.args import QueryChangesArgs, QueryLogsArgs, RankSuspectsArgs, parse_time
from veridiag.tools.backends import ChangeBackend, LogBackend, MetricBackend
from veridiag.tools.records import (
    ChangeEvidence,
    Episode,
    LevelRank,
    LogEvidence,
    NotCounted,
    Span,
    Suspect,
    SuspectEvidence,
    SuspectSignal,
)
from veridiag.tools.results import ToolOutput
from veridiag.tools.words import plural, quantity

#: History read before the window for each series' baseline: as much as a budget of point reads
#: allows across the series (at one point a minute), between these bounds — a few series get two
#: weeks (a daily rhythm shows), fifty services' thousand series six hours (a survey in ~1 s).
SERIES_BUDGET = 250_000
SERIES_LEAD = (timedelta(hours=6), timedelta(days=14))
#: Log lines read before the window.
LOG_LEAD = timedelta(hours=1)
#: Suspects, signals per suspect and changes not counted that the output lists (the counts of
#: the rest are stated).
LISTED_SUSPECTS = 10
LISTED_SIGNALS = 3
LISTED_NOT_COUNTED = 12
_LEVELS = ("ERROR", "WARN")


class ShownPoints(Protocol):
    """A series as the backend shows it (a counter as its rate or its increase per step)."""

    @property
    def unit(self) -> str: ...
    @property
    def points(self) -> list[tuple[datetime, float]]: ...
    @property
    def events(self) -> bool: ...


@runtime_checkable
class SeriesCatalogue(Protocol):
    """A metric backend that can list its series and read them (the embedded file, a Prometheus
    server). Listing raises ValueError or RuntimeError when the backend cannot be read."""

    def services(self) -> list[str]: ...
    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]: ...
    def series_points(
        self, service: str, metric: str, unit: str, start: datetime, end: datetime
    ) -> ShownPoints | None: ...


@runtime_checkable
class LogSpans(Protocol):
    """A log backend that can say which services it holds and when."""

    def services(self) -> list[str]: ...
    def log_span(self, service: str) -> Span | None: ...


@runtime_checkable
class MetricSpans(Protocol):
    """A metrics backend that can say when a service has points (the embedded file)."""

    def metric_span(self, service: str) -> Span | None: ...


@runtime_checkable
class CallGraph(Protocol):
    """A backend that knows who calls whom (an imported dependency list or traces)."""

    def dependencies(self) -> list[tuple[str, str]]: ...


@dataclass(frozen=True)
class SuspectSearch:
    """``rank_suspects`` over a toolbox's backends."""

    metrics: MetricBackend
    logs: LogBackend
    changes: ChangeBackend
    now: datetime

    def run(self, args: RankSuspectsArgs) -> ToolOutput:
        try:
            start, end, at = self._window(args)
        except ValueError as exc:
            return ToolOutput(status="error", error=str(exc), text=f"rank_suspects error: {exc}")
        families = [f.id for f in signatures().families if f.role != "context"]
        if args.by is not None and args.by not in families:
            message = f"by={args.by!r} is no measure; measures: {', '.join(families)}"
            return ToolOutput(status="error", error=message, text=f"rank_suspects error: {message}")
        catalogue = self.metrics if isinstance(self.metrics, SeriesCatalogue) else None
        spans = self.logs if isinstance(self.logs, LogSpans) else None
        if catalogue is None and spans is None:
            message = "neither the metrics nor the logs backend can list its services; rank_suspects needs one that can"
            return ToolOutput(status="error", error=message, text=f"rank_suspects error: {message}")
        unread: list[str] = [] if catalogue else [f"the {_name(self.metrics)} backend cannot list its series"]
        listed_series: list[tuple[str, str, str]] = []
        if catalogue is not None:
            try:  # a server that is down or refuses: the metrics are said unread, never quiet
                listed_series = catalogue.metrics()
            except (ValueError, RuntimeError) as exc:
                catalogue, unread = None, [f"the {_name(self.metrics)} backend could not be read: {exc}"]
        known = sorted({*(s for s, _m, _u in listed_series), *(spans.services() if spans else [])})
        listed = list(dict.fromkeys(args.services)) if args.services else None
        named = list(dict.fromkeys(args.asked or []))
        services = list(dict.fromkeys([*(listed if listed is not None else known), *named]))
        unknown = [s for s in services if s not in known]
        services = [s for s in services if s in known]
        with collector_paused():  # a week of every series: millions of rows, none in a cycle
            series = self._series(catalogue, listed_series, services, start, end) if catalogue else []
            logs, logging = self._logs(spans, services, start, end) if spans else ([], set())
            changes = self._changes(start, end, at)
            with_data = {s.service for s in series} | logging
            # Every service listed or named is said to hold no data when it holds none; of all the
            # services (none listed), only those with data in the window are examined.
            reported = set(named) | (set(listed) if listed is not None else set())
            without = unknown + [s for s in services if s not in with_data and s in reported]
            edges = tuple(self.metrics.dependencies()) if isinstance(self.metrics, CallGraph) else ()
            question = Question(start=start, end=end, at=at, edges=edges)
            report = rank_suspects(question, series, logs, changes, [s for s in services if s in with_data])
            errors = self._error_lines(logging, *levels_period(question)) if args.by == LOG_FAMILY else None
            levels = rank_levels(question, series, args.by, errors) if args.by else []
            # freed while the collector is paused: resumed over them, its next pass walks them all
            del series, logs
        held = _held(self.metrics, spans, known) if not report.examined and catalogue is not None else None
        evidence, text = _render(
            question,
            report,
            without,
            every=listed is None,
            graph=bool(edges),
            unread=unread,
            held=held,
            asked=set(named),
        )
        if args.by:
            evidence, text = _with_levels(evidence, text, args.by, levels, levels_period(question))
        return ToolOutput(
            status="ok" if report.examined else "no_data",
            text=text,
            retrieval_details={
                "window": [iso(start), iso(end)],
                "at": iso(at) if at else None,
                "examined": len(report.examined),
                "series": report.series,
                "suspects": [s.service for s in evidence.suspects],
                "standout": evidence.standout,
            },
            evidence=[evidence],
        )

    def _window(self, args: RankSuspectsArgs) -> tuple[datetime, datetime, datetime | None]:
        end = parse_time(args.end, self.now) if args.end else self.now
        start = parse_time(args.start, self.now) if args.start else end - timedelta(hours=1)
        if start >= end:
            raise ValueError(f"start {iso(start)} must be before end {iso(end)}")
        at = parse_time(args.at, self.now) if args.at else None
        if at is not None and not (start <= at <= end):
            raise ValueError(f"at {iso(at)} is outside the window {iso(start)} – {iso(end)}")
        return start, end, at

    @staticmethod
    def _series(
        catalogue: SeriesCatalogue,
        listed_series: Sequence[tuple[str, str, str]],
        services: Sequence[str],
        start: datetime,
        end: datetime,
    ) -> list[SeriesInput]:
        """Every series of the services that has points in the window, with its history before it."""
        wanted = set(services)
        listed = [
            (service, metric, unit)
            for service, metric, unit in listed_series
            if service in wanted and family_of(metric).role != "context"
        ]
        lead = min(max(timedelta(minutes=SERIES_BUDGET / max(1, len(listed))), SERIES_LEAD[0]), SERIES_LEAD[1])
        found = []
        for service, metric, unit in listed:
            read = catalogue.series_points(service, metric, unit, start - lead, end)
            if read is not None and any(start <= moment < end for moment, _v in read.points):
                found.append(SeriesInput(service, metric, read.unit, read.points, events=read.events))
        return found

    def _logs(
        self, spans: LogSpans, services: Sequence[str], start: datetime, end: datetime
    ) -> tuple[list[LogInput], set[str]]:
        """The ERROR and WARN templates of every service whose logs reach into the window, and
        those services."""
        since = start - LOG_LEAD
        found: list[LogInput] = []
        logging: set[str] = set()
        for service in services:
            span = spans.log_span(service)
            if span is None or span.last < start or span.first >= end:
                continue
            logging.add(service)
            logs_from = max(span.first, since)
            for level in _LEVELS:
                args = QueryLogsArgs(service=service, level=level, start=iso(since), end=iso(end), limit=1)
                output = self.logs.query_logs(args)
                for evidence in (e for e in output.evidence if isinstance(e, LogEvidence)):
                    found += [
                        LogInput(service, t.level or level, t.template, t.first, t.last, t.count, logs_from)
                        for t in evidence.templates
                    ]
        return found, logging

    def _error_lines(self, services: set[str], start: datetime, end: datetime) -> dict[str, int]:
        """How many ERROR lines each service with logs in the window wrote in it."""
        counted: dict[str, int] = {}
        for service in sorted(services):
            args = QueryLogsArgs(service=service, level="ERROR", start=iso(start), end=iso(end), limit=1)
            found = [e for e in self.logs.query_logs(args).evidence if isinstance(e, LogEvidence)]
            counted[service] = sum(e.matched for e in found)
        return counted

    def _changes(self, start: datetime, end: datetime, at: datetime | None) -> list[ChangeInput]:
        since = min(start, (at or start)) - timedelta(minutes=30)
        output = self.changes.query_changes(QueryChangesArgs(start=iso(since), end=iso(end)))
        return [
            ChangeInput(c.service, c.ts, c.kind, c.description)
            for e in output.evidence
            if isinstance(e, ChangeEvidence)
            for c in e.changes
        ]


def _name(backend: object) -> str:
    return str(getattr(backend, "name", "metrics"))


def _held(metrics: object, spans: LogSpans | None, known: Sequence[str]) -> Span | None:
    """Where the data of every known service lies, when both backends can say (None: one cannot,
    so a live backend may still hold the window)."""
    if spans is None or not isinstance(metrics, MetricSpans):
        return None
    found = [span for s in known for span in (metrics.metric_span(s), spans.log_span(s)) if span is not None]
    if not found:
        return None
    return Span(first=min(s.first for s in found), last=max(s.last for s in found))


# -- the output -------------------------------------------------------------------------


def _render(
    question: Question,
    report: SuspectReport,
    without: list[str],
    *,
    every: bool,
    graph: bool,
    unread: Sequence[str] = (),
    held: Span | None = None,
    asked: Collection[str] = (),
) -> tuple[SuspectEvidence, str]:
    scope = "every service with data in the window" if every else "the services asked about"
    moment = f" at {iso(question.at)}" if question.at else ""
    header = (
        f"rank_suspects {iso(question.start)} – {iso(question.end)}{moment}: examined {len(report.examined)} "
        f"services ({scope}), {report.series} metric series"
        + ("" if graph else "; no dependency list or traces: callers and callees unknown")
        + "".join(f"; metrics not surveyed: {why}" for why in unread)
    )
    near = (
        f"; changes from {_minutes(BEFORE_AT)} before to {_minutes(AFTER_AT)} after {iso(question.at)} count in full"
        if question.at
        else ""
    )
    method = (
        "method: each metric series against its own history before the window (robust z ≥ 4, routine excursions "
        f"excluded), new ERROR/WARN log templates, recorded changes; a change counts when it starts inside the "
        f"window after ≥ {MIN_LEAD_POINTS} points of history and spans ≥ {MIN_EPISODE_POINTS} points; ranked by "
        f"its size × what it measures (the service's own resources before latency or traffic){near}"
    )
    lines = [header, method]
    without_line = None
    if without:
        without_line = "no data in the window: " + ", ".join(without)
        lines.append(without_line)
    held_line = None
    if held is not None:
        held_line = f"no service has data in the window; the data held covers {iso(held.first)} – {iso(held.last)}"
        lines.append(held_line)
    changed_line = None
    if report.suspects:
        examined = quantity(len(report.examined), "service")
        changed_line = f"changed beyond their own history: {len(report.suspects)} of {examined} examined"
        lines.append(changed_line)
    suspects = []
    for rank, ranked in enumerate(report.suspects[:LISTED_SUSPECTS], start=1):
        # A service asked about is listed with every change of it ("when did X start to be slow?"
        # is answered by X's first latency episode, whichever its largest is).
        listed = ranked.signals if ranked.service in asked else ranked.signals[:LISTED_SIGNALS]
        signals = [_signal(rank, ranked, s, first=i == 0) for i, s in enumerate(listed)]
        lines += [s.line for s in signals]
        suspects.append(
            Suspect(
                rank=rank,
                service=ranked.service,
                score=round(ranked.score, 2),
                signals=signals,
                explained_by=list(ranked.explained_by),
                line=signals[0].line,
            )
        )
    if len(report.suspects) > LISTED_SUSPECTS:
        lines.append(f"… {len(report.suspects) - LISTED_SUSPECTS} more services changed less")
    not_counted = [_not_counted(item) for item in report.excluded[:LISTED_NOT_COUNTED]]
    lines += [item.line for item in not_counted]
    if len(report.excluded) > LISTED_NOT_COUNTED:
        lines.append(f"… {len(report.excluded) - LISTED_NOT_COUNTED} more changes not counted")
    quiet_line = None
    if report.quiet:
        quiet_line = f"no qualifying change ({len(report.quiet)}): " + ", ".join(report.quiet)
        lines.append(quiet_line)
    verdict_line = _verdict(question, report)
    lines.append(verdict_line)
    first = None
    if report.first is not None:
        for suspect in suspects:
            first = next((s for s in suspect.signals if _same(s, report.first)), first)
    first_line = None
    if report.first is not None:
        first_line = f"earliest qualifying change: {report.first.service} {_what(report.first)}"
        lines.append(first_line)
    episodes = [
        Episode(
            service=s.service,
            source=s.source,
            name=s.name,
            family=s.family,
            role=s.role,
            onset=s.onset,
            end=s.end,
            score=round(s.score, 4),
            strength=round(s.strength, 4),
        )
        for suspect in report.suspects
        for s in suspect.signals
    ]
    evidence = SuspectEvidence(
        start=question.start,
        end=question.end,
        at=question.at,
        examined=list(report.examined),
        quiet=list(report.quiet),
        without_data=without,
        series=report.series,
        suspects=suspects,
        not_counted=not_counted,
        standout=report.standout,
        close=report.close,
        first=first,
        first_line=first_line,
        episodes=episodes,
        line=header,
        verdict_line=verdict_line,
        quiet_line=quiet_line,
        without_data_line=without_line,
        changed=len(report.suspects),
        changed_line=changed_line,
        held=held,
        held_line=held_line,
    )
    return evidence, "\n".join(lines)


def _with_levels(
    evidence: SuspectEvidence, text: str, by: str, levels: list[Level], period: tuple[datetime, datetime]
) -> tuple[SuspectEvidence, str]:
    """The ranking by a measure appended: one line per service (the first ``LISTED_SUSPECTS``),
    over ``period`` (the window, or around the moment asked: ``levels_period``)."""
    by_lines = bool(levels) and levels[0].source == "log"
    where = (
        "the window"
        if period == (evidence.start, evidence.end)
        else f"{iso(period[0])} – {iso(period[1])} (around {iso(evidence.at)}, the moment asked)"
        if evidence.at is not None
        else f"{iso(period[0])} – {iso(period[1])}"
    )
    lines = [
        f"ranked by {by}: no service has a {by} series with points in {where}; each service's ERROR log lines "
        f"in {where} instead:"
        if by_lines
        else f"ranked by {by} (each service's {by} series with the highest average in {where}):"
    ]
    ranked = []
    for rank, level in enumerate(levels[:LISTED_SUSPECTS], start=1):
        average, peak = (format_value(rounded(value), level.unit) for value in (level.average, level.peak))
        line = (
            f"{by} #{rank} {level.service}: {quantity(level.points, 'ERROR line')} in {where}"
            if level.source == "log"
            else f"{by} #{rank} {level.service}: {level.metric} average {average}, "
            f"peak {peak} at {iso(level.peak_at)} ({quantity(level.points, 'point')})"
        )
        lines.append(line)
        ranked.append(
            LevelRank(
                rank=rank,
                service=level.service,
                metric=level.metric,
                unit=level.unit,
                average=level.average,
                peak=level.peak,
                peak_at=level.peak_at,
                line=line,
                source=level.source,
            )
        )
    if not levels:
        nor = " nor ERROR log lines" if by == LOG_FAMILY else ""
        lines[0] = f"ranked by {by}: no service has a {by} series with points in {where}{nor}"
    elif len(levels) > LISTED_SUSPECTS:
        lines.append(f"… {len(levels) - LISTED_SUSPECTS} more services ranked lower")
    update = {"by": by, "levels": ranked, "levels_line": lines[0], "levels_start": period[0], "levels_end": period[1]}
    return evidence.model_copy(update=update), "\n".join([text, *lines])


def _signal(rank: int, suspect: Ranked, signal: Signal, *, first: bool) -> SuspectSignal:
    head = f"#{rank} {suspect.service} (score {suspect.score:.2f})" if first else f"#{rank} {suspect.service} also"
    if suspect.explained_by and first:
        head += f" [explained by {', '.join(suspect.explained_by)}]"
    line = f"{head}: {_what(signal)} [{signal.family}, {signal.role}]"
    return SuspectSignal(
        service=signal.service,
        source=signal.source,
        name=signal.name,
        family=signal.family,
        role=signal.role,
        onset=signal.onset,
        end=signal.end,
        expected=signal.expected,
        peak=signal.peak,
        peak_at=signal.peak_at,
        factor=signal.factor,
        z=signal.z,
        count=signal.count,
        unit=signal.unit,
        level=signal.level,
        description=signal.description,
        saturated=signal.saturated,
        events=signal.events,
        score=round(signal.score, 2),
        nearness=round(signal.nearness, 4),
        line=line,
    )


def _what(signal: Signal) -> str:
    """The change in words and figures, each as ``format_value`` writes it."""
    if signal.source == "change":
        return f"{signal.name} change at {iso(signal.onset)}: {signal.description}"
    if signal.source == "log":
        return (
            f"{signal.count} {signal.level} {plural(signal.count, 'line')} of a new kind from "
            f"{iso(signal.onset)} to {iso(signal.end)}: "
            f"{signal.name}"
        )
    if signal.events is not None:
        return (
            f"{signal.name} counted {format_value(signal.events, '')} in {quantity(signal.count, 'step')} "
            f"from {iso(signal.onset)} "
            f"to {iso(signal.end)} (at most {format_value(signal.peak or 0, '')} a step)"
        )
    assert signal.expected is not None and signal.peak is not None and signal.peak_at is not None
    unit = signal.unit
    verb = "rose" if signal.peak >= signal.expected else "fell"
    factor = f"×{signal.factor:.2f}, " if signal.factor is not None else ""
    limit = "; at its limit" if signal.saturated else ""
    noise = "from a flat line" if (signal.z or 0) >= SCORE_CAP else f"robust z {signal.z or 0:.1f}"
    return (
        f"{signal.name} {verb} from {format_value(rounded(signal.expected), unit)} to "
        f"{format_value(rounded(signal.peak), unit)} (at {iso(signal.peak_at)}), from {iso(signal.onset)} to "
        f"{iso(signal.end)} ({factor}{noise}, {quantity(signal.count, 'point')}{limit})"
    )


_REASONS = {
    "before_window": "began before the window",
    "first_rows": "in the first rows of its data",
    "single_point": "a single point",
    "too_small": "too small",
    "begins_during": "the data begins during a period out of its usual level",
}


def _not_counted(item: Excluded) -> NotCounted:
    line = f"not counted ({_REASONS[item.reason]}): {item.service} {item.name} from {iso(item.onset)}"
    return NotCounted(service=item.service, name=item.name, onset=item.onset, reason=item.reason, line=line)


def _verdict(question: Question, report: SuspectReport) -> str:
    if not report.examined:  # nothing to judge: "no service changed" would say more than is known
        return "verdict: none, no service has data in the window to judge"
    if not report.suspects:
        return "verdict: no service changed in the window beyond its own history"
    top = report.suspects[0]
    runner = f"; next {report.suspects[1].service} {report.suspects[1].score:.2f}" if len(report.suspects) > 1 else ""
    if report.standout:
        second = report.suspects[1] if len(report.suspects) > 1 else None
        felt = (
            f", whose changes only show where a fault is felt (counted at {EXPLAINED_FACTOR:g})"
            if second is not None and rivalry(second) < second.score
            else ""
        )
        return f"verdict: {top.service} stands out (score {top.score:.2f}{runner}{felt})"
    if top.explained_by:
        why = f"its change is explained by {', '.join(top.explained_by)}"
    elif top.signals[0].role != "cause":
        why = f"its change ({top.signals[0].family}) shows where a fault is felt, not where it started"
    elif top.signals[0].nearness < 1.0 and question.at is not None:
        why = f"its change began away from {iso(question.at)}"
    elif report.close is not None:
        why = "the first two are close" if report.close == report.suspects[1].service else f"{report.close} comes close"
    else:
        why = f"its change is small (a score below {MIN_STANDOUT})"
    return f"verdict: no service stands out: {top.service} changed most (score {top.score:.2f}{runner}), but {why}"


def _same(a: SuspectSignal, b: Signal) -> bool:
    return (a.service, a.name, a.onset) == (b.service, b.name, b.onset)


def _minutes(delta: timedelta) -> str:
    return f"{int(delta.total_seconds() // 60)} min"
