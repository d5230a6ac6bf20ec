"""``query_metrics`` over the embedded file: the window against the series' own history.

A metric's kind comes from its name (the file keeps no metadata); a counter is shown as its
increase per step when its steps add a few whole events, else as its rate — decided and
computed as the Prometheus backend does (``tools/promql.py``), so both state the same facts."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from functools import lru_cache

import numpy as np
from pydantic import BaseModel

from veridiag.analysis.anomaly import TimedPoints, judge_window
from veridiag.contracts.json import JsonObject
from veridiag.text.render import iso
from veridiag.tools.args import QueryMetricsArgs
from veridiag.tools.backends.embedded._ingest import ms
from veridiag.tools.backends.embedded._logs import from_ms
from veridiag.tools.promql import (
    LOOKBACK_SECONDS,
    Shown,
    ShownSeries,
    at_steps,
    counter_rate,
    kind_from_name,
    kind_from_values,
    shown,
    step_increases,
)
from veridiag.tools.records import MetricEvidence, Span
from veridiag.tools.render import metrics_output
from veridiag.tools.results import ToolOutput

#: How far back the baseline looks (at least), and how many points of history it reads at most.
HISTORY = timedelta(days=14)
HISTORY_POINTS = 20_000


def latest(conn: sqlite3.Connection) -> int | None:
    """The newest point's time (ms) of any series: a seek per series. ``MAX(ts)`` over the whole
    table reads every point (the key starts with the service): ~60 ms at 1.2 M points, and the
    clock is read at every tool call."""
    newest = conn.execute(
        "SELECT MAX((SELECT MAX(ts) FROM metric_point p WHERE p.service = s.service AND p.metric = s.metric))"
        " FROM metric_series s"
    ).fetchone()[0]
    return None if newest is None else int(newest)


def metric_span(conn: sqlite3.Connection, service: str, metric: str | None = None) -> Span | None:
    """First and last point of a series (of all the service's series): a seek per end and series."""
    names = [metric] if metric else [m for _s, m, _u in series(conn, service)]
    ends = []
    for name in names:
        key = (service, name)
        first = conn.execute("SELECT MIN(ts) FROM metric_point WHERE service=? AND metric=?", key).fetchone()[0]
        if first is not None:
            last = conn.execute("SELECT MAX(ts) FROM metric_point WHERE service=? AND metric=?", key).fetchone()[0]
            ends.append((first, last))
    if not ends:
        return None
    return Span(first=from_ms(min(a for a, _b in ends)), last=from_ms(max(b for _a, b in ends)))


def series(conn: sqlite3.Connection, service: str | None = None) -> list[tuple[str, str, str]]:
    if service:
        rows = conn.execute(
            "SELECT service, metric, unit FROM metric_series WHERE service=? ORDER BY metric", (service,)
        )
    else:
        rows = conn.execute("SELECT service, metric, unit FROM metric_series ORDER BY service, metric")
    return [(r[0], r[1], r[2]) for r in rows.fetchall()]


def query_metrics(
    conn: sqlite3.Connection,
    args: QueryMetricsArgs,
    start: datetime,
    end: datetime,
    about_service: list[str],
    *,
    at: datetime | None = None,
) -> ToolOutput:
    """``about_service``: what the asked service does have, said when it has no such metric;
    ``at``: the moment asked, whose nearest point the output states on a line of its own."""
    if not args.service or not args.metric:
        available = ", ".join(f"{s}/{m}" for s, m, _u in series(conn, args.service))
        message = f"query_metrics needs service and metric; available: {available}"
        return ToolOutput(status="error", error=message, text=message)
    how = shown(kind_from_name(args.metric), step_seconds=args.step_seconds, function=args.function)
    if how.kind.kind == "histogram":
        message = (
            f"{args.metric} holds a histogram's buckets ({how.kind.reason}): histogram_quantile needs each "
            "bucket's le label, which the embedded store does not keep; ask the prometheus backend"
        )
        return ToolOutput(status="error", error=message, text=f"query_metrics error: {message}")
    found = [s for s in series(conn, args.service) if s[1] == args.metric]
    if not found:
        known = series(conn, args.service)
        what = (
            [f"metrics of {args.service}: {', '.join(m for _s, m, _u in known)}"]
            if known
            else [*about_service, f"services with metrics: {', '.join(sorted({s for s, _m, _u in series(conn)}))}"]
        )
        message = "; ".join([f"no metric {args.metric!r} for service {args.service!r}", *what])
        return ToolOutput(status="no_data", text=message, retrieval_details={"known": [list(k) for k in known]})
    service, metric = args.service, args.metric
    raw = _points(conn, service, metric, start, end)
    past = _history(conn, service, metric, start, end)
    kind = kind_from_values(how.kind, [value for _t, value in (*past, *raw)])
    if kind is not how.kind:
        how = shown(kind, step_seconds=args.step_seconds, function=args.function)
    steps = None
    if how.kind.kind == "counter" and how.function is None:
        steps = _increases(conn, service, metric, raw, start=start, end=end, step_seconds=how.step_seconds)
        how = how.decide([v for _t, v in steps])
    unit = how.unit(found[0][2])

    # A step asked for is honoured: the points as shown, read at its instants (a counter's
    # increases are made per step already); none asked, the series as stored.
    asked_step = args.step_seconds if "step_seconds" in args.model_fields_set and not how.increase else None

    def read(points: list[tuple[datetime, float]], since: datetime, until: datetime) -> list[tuple[datetime, float]]:
        if not asked_step:
            return _as_shown(conn, service, metric, points, how=how, start=since, end=until)
        # a step's reading may be a point up to the look-back before the first step, as Prometheus's is
        lead = _points(conn, service, metric, since - timedelta(seconds=LOOKBACK_SECONDS), since)
        found = _as_shown(conn, service, metric, [*lead, *points], how=how, start=since, end=until)
        return at_steps(found, start=since, end=until, step_seconds=asked_step)

    window = steps if steps is not None and how.increase else read(raw, start, end)
    request = {"service": service, "metric": metric, **how.about(), "start": iso(start), "end": iso(end)}
    if at is not None:
        request["at"] = iso(at)
    if not window:
        span = metric_span(conn, service, metric)
        covered = f"{iso(span.first)} – {iso(span.last)}" if span else "nothing"
        message = f"no points of {service}/{metric} between {iso(start)} and {iso(end)} (data covers {covered})"
        return ToolOutput(status="no_data", text=message, retrieval_details={"window": [iso(start), iso(end)]})
    # the history's steps fall on the window's grid, as a Prometheus range query's would
    step = timedelta(seconds=how.step_seconds)
    history = read(past, start - ((start - past[0][0]) // step) * step, start) if past else []
    # what follows the window, read on its grid when a step was asked
    after = start - ((start - end) // step) * step if asked_step else end
    later = after + (end - start)
    report = judge_window(history, window, lambda: read(_points(conn, service, metric, after, later), after, later))
    everything = history or window
    span = Span(first=everything[0][0], last=window[-1][0])
    rendered, evidence = metrics_output(
        request,
        service=service,
        metric=metric,
        unit=unit,
        window=window,
        history=span,
        report=report,
        kind=how.kind.kind,
        per_step=how.step_seconds if how.increase else None,
        at=at,
        step_seconds=asked_step,
    )
    return ToolOutput(
        status="ok",
        text=rendered.text,
        model_text=rendered.model_text,
        retrieval_details=details(evidence, "embedded"),
        evidence=[evidence],
    )


def series_as_shown(
    conn: sqlite3.Connection, service: str, metric: str, unit: str, *, start: datetime, end: datetime
) -> ShownSeries | None:
    """A series' points in ``[start, end)`` as ``query_metrics`` shows them — a counter as its
    increase per minute or its rate — with the unit as shown; None for a histogram's buckets."""
    how = shown(kind_from_name(metric), step_seconds=60, function=None)
    if how.kind.kind == "histogram":
        return None
    raw = _points(conn, service, metric, start, end)
    kind = kind_from_values(how.kind, raw.raw if isinstance(raw, TimedPoints) else [value for _t, value in raw])
    if kind is not how.kind:
        how = shown(kind, step_seconds=60, function=None)
    if how.kind.kind == "counter" and how.function is None:
        steps = _increases(conn, service, metric, raw, start=start, end=end, step_seconds=how.step_seconds)
        how = how.decide([value for _t, value in steps])
        if how.increase:
            return ShownSeries(how.unit(unit), steps, events=True)
    return ShownSeries(how.unit(unit), _as_shown(conn, service, metric, raw, how=how, start=start, end=end), False)


class AnomalyDetails(BaseModel):
    onset: str
    end: str
    peak_at: str
    peak: float
    factor: float | None


class MetricDetails(BaseModel):
    """What the store keeps beside the text (small; the text has the points). Stored as its
    JSON, which the Gatekeeper also grounds facts in (``text/render.py``'s ``invocation_context``):
    names and order are the stored format."""

    backend: str
    unit: str
    points: int
    window: tuple[str, str]
    min: float
    max: float
    avg: float
    last: float
    peak_at: str
    baseline_median: float | None
    anomalies: list[AnomalyDetails]


def details(evidence: MetricEvidence, backend: str) -> JsonObject:
    """``evidence``'s figures as the stored retrieval details."""
    return MetricDetails(
        backend=backend,
        unit=evidence.unit,
        points=evidence.points,
        window=(iso(evidence.start), iso(evidence.end)),
        min=evidence.minimum,
        max=evidence.maximum,
        avg=evidence.average,
        last=evidence.last,
        peak_at=iso(evidence.peak_at),
        baseline_median=evidence.baseline_median,
        anomalies=[
            AnomalyDetails(onset=iso(a.onset), end=iso(a.end), peak_at=iso(a.peak_at), peak=a.peak, factor=a.factor)
            for a in evidence.anomalies
        ],
    ).model_dump(mode="json")


def _points(
    conn: sqlite3.Connection, service: str, metric: str, start: datetime, end: datetime
) -> list[tuple[datetime, float]]:
    rows = conn.execute(
        "SELECT ts, value FROM metric_point WHERE service=? AND metric=? AND ts >= ? AND ts < ? ORDER BY ts",
        (service, metric, ms(start), ms(end)),
    ).fetchall()
    if not rows:
        return []
    stamps, values = zip(*rows, strict=True)
    # epoch seconds as datetime.timestamp() gives them: both round ms / 1000 once
    return TimedPoints.checked(list(map(_moment, stamps)), list(values), np.array(stamps, dtype=np.float64) / 1000)


#: The instants of stored points, made once: the series of a service (and of all services
#: sampled on one clock) share their instants, and a survey of 600 series of a week made 1.2 M
#: datetimes of 2 016 instants (~1 s of its read, measured). Immutable, so shared safely.
_moment = lru_cache(maxsize=1 << 15)(from_ms)


def _as_shown(
    conn: sqlite3.Connection,
    service: str,
    metric: str,
    points: list[tuple[datetime, float]],
    *,
    how: Shown,
    start: datetime,
    end: datetime,
) -> list[tuple[datetime, float]]:
    """A counter's points (``points``: its raw ones in ``[start, end)``) as its increase per
    step or its rate; the range before the first point is read too, so the first points are
    rated as Prometheus would rate them. Other kinds as stored."""
    if how.kind.kind != "counter" or not points:
        return points
    if how.increase:
        return _increases(conn, service, metric, points, start=start, end=end, step_seconds=how.step_seconds)
    first = points[0][0]
    lead = _points(conn, service, metric, first - timedelta(seconds=how.range_seconds), first)
    rated = counter_rate([*lead, *points], range_seconds=how.range_seconds, per_second=how.function != "increase")
    return [(moment, value) for moment, value in rated if moment >= first]


def _increases(
    conn: sqlite3.Connection,
    service: str,
    metric: str,
    points: list[tuple[datetime, float]],
    *,
    start: datetime,
    end: datetime,
    step_seconds: int,
) -> list[tuple[datetime, float]]:
    """The counter's increase at each step instant of ``[start, end)``, from its raw ``points``
    there and, before them, what gives its value at the instant before ``start``."""
    before = start - timedelta(seconds=step_seconds)
    until = points[0][0] if points else end
    lead = _points(conn, service, metric, before - timedelta(seconds=LOOKBACK_SECONDS), until)
    stepped = at_steps([*lead, *points], start=before, end=end, step_seconds=step_seconds)
    return step_increases(stepped, since=start)


def _history(
    conn: sqlite3.Connection, service: str, metric: str, start: datetime, end: datetime
) -> list[tuple[datetime, float]]:
    """The series before the window: what its normal looks like."""
    since = start - max(HISTORY, 4 * (end - start))
    rows = conn.execute(
        "SELECT ts, value FROM metric_point WHERE service=? AND metric=? AND ts >= ? AND ts < ? "
        f"ORDER BY ts DESC LIMIT {HISTORY_POINTS}",
        (service, metric, ms(since), ms(start)),
    ).fetchall()
    return [(from_ms(ts), value) for ts, value in reversed(rows)]
