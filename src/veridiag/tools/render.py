"""Tool outputs: the typed evidence and the plain text rendered from it, built together.

Each record that a claim may quote gets the exact output line that states it, so an excerpt
taken from a record is always a line of the stored text. The model-facing text is made of
lines that also occur in the stored text, so whatever a model quotes can be found by the
Gatekeeper. Every backend (embedded, Prometheus, Loki) renders through here, so outputs
read the same whichever backend answered.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

from veridiag.analysis.anomaly import AnomalyReport
from veridiag.text.render import format_value, iso, parse_value, request_line, rounded
from veridiag.tools.knowledge import Hit, best_section
from veridiag.tools.promql import MetricKind, duration
from veridiag.tools.records import (
    AskedPoint,
    Burst,
    ChangeEvidence,
    ChangeRecord,
    CounterIncreases,
    LogEvidence,
    LogSample,
    MetricAnomaly,
    MetricEvidence,
    Span,
    StepIncrease,
    TemplateCount,
    Unleveled,
)
from veridiag.tools.words import plural, quantity

#: The call as made, argument → value as the output's first line writes it (``start`` and
#: ``end`` always there); an argument left empty is ``None`` and not written.
Request = Mapping[str, str | None]

#: Points kept in the stored output and shown to a model (anomaly points always included).
STORED_POINTS = 240
MODEL_POINTS = 60
#: Steps a counter's increases line lists (its points are all kept, whatever the thinning).
LISTED_STEPS = 12


def span_line(service: str, what: str, span: Span | None) -> str:
    if span is None:
        return f"{service} has no {what}"
    return f"{service} has {what} {iso(span.first)} – {iso(span.last)}"


# -- logs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateRow:
    """A template's figures in a window, before rendering."""

    template: str
    level: str
    count: int
    first: datetime
    last: datetime
    example: str
    #: The service whose lines these are: stores count a template per service, so a search over
    #: every service can hold the same template once per service.
    service: str | None = None


@dataclass(frozen=True)
class Rendered:
    text: str
    model_text: str


#: What a template row's example line starts with, and the heading of a logs output's lines.
EXAMPLE_PREFIX = "     e.g. "
LINES_HEADING = "lines:"

#: Lines further apart than this belong to different bursts.
BURST_GAP_MS = 10 * 60 * 1000


def group_bursts(stamps_ms: Iterable[int]) -> list[Burst]:
    """Runs of timestamps (ms, ascending) separated by quiet gaps: the five largest, in time order."""
    return group_spans((ts, ts, 1) for ts in stamps_ms)


def group_spans(spans: Iterable[tuple[int, int, int]]) -> list[Burst]:
    """``group_bursts`` over ``(first, last, count)`` spans in time order, each shorter than
    ``BURST_GAP_MS``: lines counted per minute give the same bursts as the lines themselves."""
    runs: list[list[int]] = []
    for first, last, count in spans:
        if runs and first - runs[-1][1] < BURST_GAP_MS:
            runs[-1][1] = last
            runs[-1][2] += count
        else:
            runs.append([first, last, count])
    largest = sorted(sorted(runs, key=lambda run: -run[2])[:5], key=lambda run: run[0])
    return [Burst(first=_from_ms(a), last=_from_ms(b), count=n) for a, b, n in largest]


def _from_ms(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1000, tz=UTC)


def logs_output(
    request: Request,
    *,
    matched: int,
    by_level: dict[str, int],
    templates: Sequence[TemplateRow] = (),
    bursts: Sequence[Burst] = (),
    samples: Sequence[LogSample] = (),
    limit: int | None = None,
    unparsed: int = 0,
    span: Span | None = None,
    notes: Sequence[str] = (),
    sampled: bool = False,
    counted: int | None = None,
    counted_order: str = "storage order",
    unleveled: Unleveled | None = None,
) -> tuple[Rendered, LogEvidence]:
    """``counted``: only the first ``counted`` of the ``matched`` lines (in ``counted_order``)
    were read; the levels, bursts, templates and lines are theirs, and the text says so before
    any of them. ``unleveled``: how many of the service's lines wrote no level, said after the total.
    ``limit``: the lines the call asked for — the stored text and the model's list no more, and
    say how many of the matched lines they show when that is fewer (``shown_line``)."""
    if counted is not None:
        notes = [
            *notes,
            f"{matched} lines match; only the first {counted} in {counted_order} were read: "
            "the levels, bursts, templates and lines below are theirs, not totals",
        ]
    head = [request_line("query_logs", request), *(f"note: {note}" for note in notes)]
    service = request.get("service")
    said = [unleveled.line] if unleveled else []
    if matched == 0:
        total = "matched 0 lines"
        lines = [*head, total, *said]
        if service:
            lines.append(span_line(service, "logs", span))
        text = "\n".join(lines)
        evidence = _log_evidence(request, matched=0, by_level={}, line=total, span=span, unleveled=unleveled)
        return Rendered(text, text), evidence
    levels = ", ".join(f"{level} {count}" for level, count in sorted(by_level.items(), key=lambda kv: -kv[1]))
    read = f"of the first {counted} read: " if counted else ""
    total = f"matched {quantity(matched, 'line')} ({read}{levels})"
    body = [total, *said]
    bursts_line = None
    if bursts:
        bursts_line = "bursts: " + "; ".join(
            f"{iso(b.first)} – {iso(b.last)} ({quantity(b.count, 'line')})" for b in bursts
        )
        body.append(bursts_line)
    if unparsed:
        body.append(f"unparsed: {unparsed} of these lines were not understood by the importer (stored whole)")
    rows: list[TemplateCount] = []
    if templates:
        body.append("templates" + (" (in a sample of the lines)" if sampled or counted else "") + ":")
        for row in templates:
            # Over every service, one row per service and template: each says whose it is, or
            # the same template would read as listed several times with different counts.
            whose = row.service if row.service and not service else None
            where = f" service={whose}" if whose else ""
            line = f"  {row.count}× {row.level}{where} {iso(row.first)} – {iso(row.last)} {row.template}"
            body += [line, f"{EXAMPLE_PREFIX}{row.example}"]
            rows.append(
                TemplateCount(
                    service=whose,
                    template=row.template,
                    level=row.level,
                    count=row.count,
                    first=row.first,
                    last=row.last,
                    example=row.example,
                    line=line,
                )
            )
    samples = samples[:limit]
    shown = [sample.line for sample in samples]
    if len(shown) < matched:
        body.append(shown_line(len(shown), matched, limit))
    text = "\n".join([*head, *body, LINES_HEADING, *shown])
    model_text = text
    evidence = _log_evidence(
        request,
        matched=matched,
        by_level=by_level,
        templates=rows,
        bursts=bursts,
        bursts_line=bursts_line,
        samples=samples,
        unparsed=unparsed,
        line=total,
        span=span,
        counted=counted,
        unleveled=unleveled,
    )
    return Rendered(text, model_text), evidence


def shown_line(shown: int, matched: int, limit: int | None) -> str:
    """The line before a logs output's lines when they are fewer than the lines matched: nothing
    is cut silently."""
    asked = f" (limit {limit})" if limit is not None and shown >= limit else ""
    return f"showing {shown} of {matched} {plural(matched, 'line')}{asked}"


def imported_unleveled(service: str | None, counts: tuple[int, int] | None) -> Unleveled | None:
    """Of all the lines imported for the service (the embedded file counts them at import)."""
    return _unleveled(service, counts, "imported lines of {service}")


def window_unleveled(service: str | None, counts: tuple[int, int] | None) -> Unleveled | None:
    """Of the service's lines in the asked window (a store that cannot count at import)."""
    return _unleveled(service, counts, "lines of {service} in the window")


def _unleveled(service: str | None, counts: tuple[int, int] | None, of: str) -> Unleveled | None:
    if not service or counts is None:
        return None
    none, lines = counts
    line = f"levels: {none} of the {lines} {of.format(service=service)} write no level (read as INFO)"
    return Unleveled(unleveled=none, lines=lines, line=line)


def _log_evidence(
    request: Request,
    *,
    matched: int,
    by_level: dict[str, int],
    line: str,
    templates: Sequence[TemplateCount] = (),
    bursts: Sequence[Burst] = (),
    bursts_line: str | None = None,
    samples: Sequence[LogSample] = (),
    unparsed: int = 0,
    span: Span | None,
    counted: int | None = None,
    unleveled: Unleveled | None = None,
) -> LogEvidence:
    return LogEvidence(
        service=request.get("service"),
        level=request.get("level"),
        query=request.get("query"),
        start=request["start"],
        end=request["end"],
        matched=matched,
        counted=counted,
        by_level=by_level,
        templates=list(templates),
        bursts=list(bursts),
        bursts_line=bursts_line,
        samples=list(samples),
        unparsed=unparsed,
        line=line,
        span=span,
        unleveled=unleveled,
    )


# -- metrics -----------------------------------------------------------------------------


def _stats(values: Sequence[float], unit: str) -> str:
    return (
        f"min {format_value(min(values), unit)}, max {format_value(max(values), unit)}, "
        f"avg {format_value(rounded(statistics.fmean(values)), unit)}, last {format_value(values[-1], unit)} "
        f"({quantity(len(values), 'point')})"
    )


def _minutes(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes / 60:.1f} h".replace(".0 h", " h")


#: How a metrics output read at the step asked says what its points are: a step's value is the
#: series' newest at or before the step's time, as a Prometheus range query reads it (the
#: embedded file's own points are thinned so, so both backends state the same values).
STEP_LINE = (
    "step {step}: each point is the series' newest value at or before its step's time, "
    "as a Prometheus range query reads it"
)

#: The heading after which a metrics output lists its stored points, one ``point_line`` each.
POINTS_HEADING = "points:"


def point_line(moment: datetime, value: float, unit: str) -> str:
    """A point as the stored output lists it and a claim quotes it: ``2026-07-07T10:08:00Z 5267ms``."""
    return f"{iso(moment)} {format_value(value, unit)}"


def peak_phrase(value: float, moment: datetime, unit: str) -> str:
    """A peak as the window and anomaly lines state it: ``peak 5267ms at 2026-07-07T10:08:00Z``."""
    return f"peak {format_value(value, unit)} at {iso(moment)}"


def stored_points(text: str, unit: str) -> list[tuple[datetime, float]]:
    """The points a stored metrics output lists (``POINTS_HEADING``, then ``point_line``s), as
    written — the values at the precision the output and its claims state them. For an
    invocation stored before its points were kept typed beside the text (``tools/drawn.py``,
    ``series_points``, which reads them first); read back here, beside their writer."""
    _head, found, tail = text.partition("\n" + POINTS_HEADING + "\n")
    points = []
    for line in tail.splitlines() if found else ():
        stamp, _space, written = line.partition(" ")
        try:
            moment = datetime.fromisoformat(stamp)
        except ValueError:
            continue
        value = parse_value(written, unit)
        if value is not None and moment.tzinfo is not None:
            points.append((moment, value))
    return points


def metrics_output(
    request: Request,
    *,
    service: str,
    metric: str,
    unit: str,
    window: Sequence[tuple[datetime, float]],
    history: Span | None,
    report: AnomalyReport,
    kind: MetricKind | None = None,
    per_step: int | None = None,
    at: datetime | None = None,
    step_seconds: int | None = None,
) -> tuple[Rendered, MetricEvidence]:
    """Window statistics, a counter's increases (``per_step``: the window holds its increase
    per step of that many seconds), the value at the moment asked (``at``, inside the window),
    the series' own baseline, its anomalies, then the points. ``step_seconds``: the step the call
    asked for, which the points are read at (``STEP_LINE`` says how, after the request line)."""
    values = [v for _t, v in window]
    peak_at, peak = max(window, key=lambda point: point[1])
    window_line = f"window: {_stats(values, unit)}; {peak_phrase(peak, peak_at, unit)}"
    lines = [request_line("query_metrics", {**request, "unit": unit})]
    if step_seconds is not None:
        lines.append(STEP_LINE.format(step=duration(step_seconds)))
    lines.append(window_line)
    value_at = dict(window)

    @cache
    def line_of(moment: datetime) -> str:
        """Written only for the points kept or quoted: a window holds up to ~500 (a run of ``ask``
        formatted ~7 500 times, measured), the output keeps at most ``STORED_POINTS``."""
        return point_line(moment, value_at[moment], unit)

    increases = _increases(window, unit, per_step, line_of) if per_step else None
    if increases is not None:
        lines.append(increases.line)
    asked = _asked(window, at, request, line_of) if at is not None else None
    if asked is not None:
        lines.append(asked.line)
    baseline = report.baseline
    baseline_line = None
    if baseline is not None and history is not None:
        seasonal = f"seasonal: {_minutes(baseline.period.total_seconds())}" if baseline.period else "seasonal: no"
        # The stretch the baseline's points cover: past the window when the series had too little
        # before it and was judged against itself around the window, so their count is of it.
        last = max(history.last, baseline.history_last or history.last)
        baseline_line = (
            f"history {iso(history.first)} – {iso(last)} ({quantity(baseline.history_points, 'point')}): "
            f"median {format_value(rounded(baseline.median), unit)}, "
            f"MAD {format_value(rounded(baseline.mad), unit)}; {seasonal}"
        )
        lines.append(baseline_line)
    else:
        lines.append("history: too few points to judge anomalies against the series' own history")
    anomalies: list[MetricAnomaly] = []
    for number, found in enumerate(report.anomalies[:5], start=1):
        factor = f"; ×{found.factor:.2f}" if found.factor is not None else ""
        line = (
            f"anomaly {number}: {iso(found.onset)} – {iso(found.end)} ({quantity(found.points, 'point')}, "
            f"{_minutes((found.end - found.onset).total_seconds())}) {found.direction}; "
            f"{peak_phrase(found.peak, found.peak_at, unit)}; "
            f"expected {format_value(rounded(found.expected), unit)}{factor}; score {found.score:.1f}"
        )
        lines.append(line)
        anomalies.append(
            MetricAnomaly(
                onset=found.onset,
                end=found.end,
                peak_at=found.peak_at,
                peak=found.peak,
                expected=found.expected,
                direction=found.direction,
                score=found.score,
                points=found.points,
                factor=found.factor,
                line=line,
                peak_line=line_of(found.peak_at)
                if found.peak_at in value_at
                else point_line(found.peak_at, found.peak, unit),
            )
        )
    if baseline is not None and not anomalies:
        lines.append("anomalies: none in the window against the series' own history")
    must_show = {a.onset for a in anomalies} | {a.peak_at for a in anomalies} | {a.end for a in anomalies}
    must_show |= {step.at for step in increases.steps} if increases else set()
    must_show |= {asked.at} if asked else set()
    stored = _thin([t for t, _v in window], STORED_POINTS, must_show)
    shown = _thin([t for t, _v in window], MODEL_POINTS, must_show)
    # An episode that began before the window may peak there: its peak point is stated too, or
    # the line its record quotes would be in no output.
    earlier = sorted(
        {a.peak_line: (a.peak_at, a.peak) for a in anomalies if a.peak_at not in value_at}.items(),
        key=lambda i: i[1][0],
    )
    before = [line for line, _point in earlier]
    listed = [point for _line, point in earlier] + [(t, value_at[t]) for t in stored]
    text = "\n".join([*lines, POINTS_HEADING, *before, *(line_of(t) for t in stored)])
    model_text = "\n".join([*lines, POINTS_HEADING, *before, *(line_of(t) for t in shown)])
    evidence = MetricEvidence(
        service=service,
        metric=metric,
        unit=unit,
        start=request["start"],
        end=request["end"],
        points=len(window),
        minimum=min(values),
        maximum=max(values),
        average=round(statistics.fmean(values), 4),
        last=values[-1],
        peak_at=peak_at,
        baseline_method=baseline.method if baseline else None,
        baseline_median=baseline.median if baseline else None,
        history=history,
        anomalies=anomalies,
        metric_kind=kind,
        increases=increases,
        window_line=window_line,
        baseline_line=baseline_line,
        asked=asked,
        listed=listed,
    )
    return Rendered(text, model_text), evidence


#: How the value at the moment asked is stated: ``ASKED_LINE.format(asked=…, point=point_line)``.
ASKED_LINE = "at the moment asked {asked}: nearest point {point}"


def _asked(
    window: Sequence[tuple[datetime, float]], at: datetime, request: Request, line_of: Callable[[datetime], str]
) -> AskedPoint | None:
    """The point nearest ``at`` (the earlier of two as near), when ``at`` lies in the window
    asked for: a moment inside a long episode gets its own value, not only the episode's peak."""
    start, end = request.get("start"), request.get("end")
    if (
        not window
        or start is None
        or end is None
        or not datetime.fromisoformat(start) <= at < datetime.fromisoformat(end)
    ):
        return None
    moment, value = min(window, key=lambda point: (abs((point[0] - at).total_seconds()), point[0]))
    point = line_of(moment)
    return AskedPoint(
        asked=at, at=moment, value=value, line=ASKED_LINE.format(asked=iso(at), point=point), point_line=point
    )


def _increases(
    window: Sequence[tuple[datetime, float]], unit: str, step_seconds: int, line_of: Callable[[datetime], str]
) -> CounterIncreases:
    """The steps a counter grew in, and the line that states them: the total, how many steps,
    then each step's ``+n at <time>`` (the first ``LISTED_STEPS``)."""
    steps = [StepIncrease(at=moment, by=value, line=line_of(moment)) for moment, value in window if value]
    total = sum(step.by for step in steps)
    listed = ", ".join(f"+{format_value(step.by, '')} at {iso(step.at)}" for step in steps[:LISTED_STEPS])
    left = len(steps) - LISTED_STEPS
    more = f", and {left} more {plural(left, 'step')}" if left > 0 else ""
    rose = f"{format_value(total, unit)} in total, {quantity(len(steps), 'step')} rose"
    line = f"increases per {duration(step_seconds)}: {rose}" + (f": {listed}{more}" if steps else "")
    return CounterIncreases(step_seconds=step_seconds, total=total, steps=steps, line=line)


def _thin(moments: Sequence[datetime], limit: int, keep: set[datetime]) -> list[datetime]:
    """At most ``limit`` evenly spaced points, always including ``keep`` (the quoted points)."""
    if len(moments) <= limit:
        return list(moments)
    step = len(moments) / max(1, limit - len(keep))
    chosen = {moments[int(index * step)] for index in range(max(1, limit - len(keep)))}
    return sorted(chosen | (keep & set(moments)))


# -- changes -----------------------------------------------------------------------------


def changes_output(
    request: Request, changes: Sequence[ChangeRecord], *, feed_empty: bool = False
) -> tuple[Rendered, ChangeEvidence]:
    if feed_empty:
        total = "no change feed imported: changes cannot be checked (veridiag data import-changes)"
    else:
        total = quantity(len(changes), "change") if changes else "no changes recorded"
    text = "\n".join([request_line("query_changes", request), total, *(c.line for c in changes)])
    evidence = ChangeEvidence(
        service=request.get("service"),
        start=request["start"],
        end=request["end"],
        changes=list(changes),
        line=total,
        feed_empty=feed_empty,
    )
    return Rendered(text, text), evidence


def change_line(moment: datetime, service: str, kind: str, description: str, version: str | None) -> str:
    suffix = f" (version {version})" if version else ""
    return f"{iso(moment)} {service} {kind}: {description}{suffix}"


# -- knowledge ---------------------------------------------------------------------------


def render_knowledge(query: str, hits: Sequence[Hit], *, full: bool) -> str:
    found = quantity(len(hits), "runbook")
    out = [f"lookup_knowledge query={query!r}: {found} (matches are hypotheses to check, not facts)"]
    for rank, hit in enumerate(hits, start=1):
        book = hit.runbook
        services = ", ".join(book.services) or "any"
        out.append(f"[{rank}] {book.id} — {book.title} (services: {services}; score {hit.score})")
        out.append(f"symptoms: {'; '.join(book.symptoms)}")
        out.append(book.body if full else best_section(book.body, query))
    return "\n".join(out)
