"""Metrics from a Prometheus server over its HTTP API (``/api/v1/query_range``).

PromQL is passed through when given; otherwise the metric's kind is read from
``/api/v1/metadata`` (else its name) and the PromQL it deserves is rendered (``tools/promql.py``):
``rate(x_total{service="…"}[5m])``, ``histogram_quantile(0.99, …)``, a gauge as is; a counter
whose steps add a few whole events (restarts) is read raw and shown as its increase per step,
as the embedded backend shows it; the output says which kind, how it is shown, and why.
Calls are retried with backoff and jitter. The window is judged
against the series' own history (read at a coarser step when it is long), and rendered by the
same code as the embedded backend, so outputs read the same whichever backend answered.
"""

from __future__ import annotations

import math
from dataclasses import replace as copy_with
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import httpx2

from veridiag._retry import Backoff
from veridiag.analysis.anomaly import judge_window
from veridiag.contracts.json import JsonObject, json_object
from veridiag.text.render import iso
from veridiag.tools.args import QueryMetricsArgs, parse_time
from veridiag.tools.backends._http import QueryError, UnavailableError, get_json
from veridiag.tools.promql import (
    KindFound,
    PromQLError,
    Shown,
    ShownSeries,
    kind_from_metadata,
    kind_from_name,
    label_literal,
    metadata_names,
    shown,
    step_increases,
)
from veridiag.tools.records import Evidence, Span
from veridiag.tools.render import metrics_output
from veridiag.tools.results import ToolOutput

_SUFFIX_UNITS = (
    ("_seconds", "s"),
    ("_ms", "ms"),
    ("_milliseconds", "ms"),
    ("_percent", "%"),
    ("_bytes", "B"),
    ("_mb", "MB"),
    ("_total", ""),
    ("_connections", "connections"),
)
MAX_SERIES = 5
#: Series a survey leaves out: a histogram's sum (its quantile stands for it) and the
#: creation stamps OpenMetrics adds.
_NOT_SURVEYED = ("_sum", "_created")
#: History read before the window to judge it (at least), and Prometheus' points-per-series cap.
HISTORY = timedelta(days=1)
MAX_POINTS = 10_000


def unit_of(metric: str) -> str:
    for suffix, unit in _SUFFIX_UNITS:
        if metric.endswith(suffix) or f"{suffix}_" in metric:
            return unit
    return ""


class PrometheusBackend:
    name = "prometheus"

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 10.0,
        service_label: str = "service",
        headers: dict[str, str] | None = None,
        transport: httpx2.BaseTransport | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.service_label = service_label
        self.backoff = backoff or Backoff()
        self._client = httpx2.Client(
            base_url=base_url.rstrip("/"), timeout=timeout, headers=headers or {}, transport=transport
        )

    def _kind(self, metric: str) -> KindFound:
        """Prometheus' metadata for the metric (or its family), else its name. Metadata is only
        help: asked once, not retried, and a server without it still answers the query."""
        for name in metadata_names(metric):
            try:
                body = get_json(self._client, "/api/v1/metadata", {"metric": name}, Backoff(attempts=1))
            except (QueryError, UnavailableError):
                break
            found = kind_from_metadata(metric, json_object(body.get("data")))
            if found is not None:
                return found
        return kind_from_name(metric)

    def _shown(self, args: QueryMetricsArgs) -> Shown | None:
        """None for raw PromQL; else the metric's kind and how it is shown (a counter's way maybe
        still to decide)."""
        if args.promql:
            return None
        if not args.metric:
            raise QueryError("query_metrics needs metric (or promql)")
        return shown(
            self._kind(args.metric), step_seconds=args.step_seconds, function=args.function, quantile=args.quantile
        )

    def _promql(self, args: QueryMetricsArgs, how: Shown | None) -> str:
        """Raw PromQL as written; else the PromQL the metric's kind deserves."""
        if how is None or not args.metric:
            return args.promql or ""
        matchers = {self.service_label: args.service} if args.service else {}
        try:
            return how.promql(args.metric, matchers)
        except PromQLError as exc:
            raise QueryError(str(exc)) from None

    def _series(
        self, query: str, how: Shown | None, start: datetime, end: datetime, step: int
    ) -> list[tuple[JsonObject, list[tuple[datetime, float]]]]:
        """Each series over ``[start, end)`` and its points; a counter shown as its increase is
        read raw from a step earlier and differenced (``tools/promql.py``)."""
        if how is None or not how.increase:
            return [(s, _points(s)) for s in self._range(query, start, end, step)]
        found = self._range(query, start - timedelta(seconds=step), end, step)
        return [(s, step_increases(_points(s), since=start)) for s in found]

    def _range(self, query: str, start: datetime, end: datetime, step: int) -> list[JsonObject]:
        body = get_json(
            self._client,
            "/api/v1/query_range",
            # [start, end): like the embedded backend, the end instant belongs to the next window
            {"query": query, "start": start.timestamp(), "end": end.timestamp() - 0.001, "step": step},
            self.backoff,
        )
        data = json_object(body.get("data"))
        if data.get("resultType") != "matrix":
            raise QueryError(f"expected a range vector (matrix), got {data.get('resultType')!r}")
        result = data.get("result")
        return [series for series in result if isinstance(series, dict)] if isinstance(result, list) else []

    def _after(
        self, query: str, how: Shown | None, labels: str, *, start: datetime, end: datetime, step: int
    ) -> list[tuple[datetime, float]]:
        """The series just after the window (as long as it): normal too, when its past is short."""
        try:
            found = (
                self._series(query, how, end, min(end + (end - start), datetime.now(UTC)), step)
                if end < datetime.now(UTC)
                else []
            )
        except (QueryError, UnavailableError):
            return []
        return next((points for series, points in found if _labels(series.get("metric")) == labels), [])

    def _read(
        self, args: QueryMetricsArgs, start: datetime, end: datetime
    ) -> tuple[str, Shown | None, list[tuple[JsonObject, list[tuple[datetime, float]]]]]:
        """The PromQL the asked metric deserves, how it is shown, and its series over the window;
        a counter's raw steps decide whether it reads as its rate or its increase per step."""
        how = self._shown(args)
        window = None
        if how is not None and how.kind.kind == "counter" and how.function is None:
            # the raw counter's steps decide; they are the window already when it is sparse
            probe = copy_with(how, function="increase")
            window = self._series(self._promql(args, probe), probe, start, end, args.step_seconds)
            how = how.decide([v for _series, points in window for _t, v in points])
        query = self._promql(args, how)
        if window is None or not how or not how.increase:
            window = self._series(query, how, start, end, args.step_seconds)
        return query, how, window

    # -- the survey's catalogue (``tools/suspects.py``'s SeriesCatalogue) ---------------------

    def services(self) -> list[str]:
        """Every value of the service label the server holds. Raises UnavailableError or
        QueryError: a survey must say the metrics were not read, never that nothing moved."""
        body = get_json(self._client, f"/api/v1/label/{self.service_label}/values", {}, self.backoff)
        data = body.get("data")
        return sorted(str(v) for v in data if isinstance(v, str) and v) if isinstance(data, list) else []

    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]:
        """``(service, metric, unit)`` of every metric name with the service label; a histogram
        is listed once (its quantile), never bucket by bucket."""
        match = f"{{{self.service_label}={label_literal(service)}}}" if service else f'{{{self.service_label}!=""}}'
        body = get_json(self._client, "/api/v1/series", {"match[]": match}, self.backoff)
        data = body.get("data")
        found: set[tuple[str, str]] = set()
        for labels in data if isinstance(data, list) else []:
            name, owner = _label(labels, "__name__"), _label(labels, self.service_label)
            if not name or not owner or name.endswith(_NOT_SURVEYED):
                continue
            found.add((owner, name.removesuffix("_bucket")))
        return [(owner, name, unit_of(name)) for owner, name in sorted(found)]

    def series_points(self, service: str, metric: str, unit: str, start: datetime, end: datetime) -> ShownSeries | None:
        """The service's series of ``metric`` over ``[start, end)`` as ``query_metrics`` shows
        it, at a step that keeps under the server's points cap; several series (pods, instances)
        are one line, summed when counted (a rate, events), else averaged. None when unread."""
        step = max(60, math.ceil((end - start).total_seconds() / MAX_POINTS))
        args = QueryMetricsArgs(service=service, metric=metric, step_seconds=step)
        # on the step's grid, as the embedded store's minutes are, so both read the same points
        start -= timedelta(seconds=start.timestamp() % step)
        try:
            _query, how, window = self._read(args, start, end)
        except (QueryError, UnavailableError):
            return None
        if how is None or not window:
            return None
        counted = how.kind.kind == "counter"
        by_moment: dict[datetime, list[float]] = {}
        for _series, points in window:
            for moment, value in points:
                by_moment.setdefault(moment, []).append(value)
        points = [(t, sum(vs) if counted else sum(vs) / len(vs)) for t, vs in sorted(by_moment.items())]
        shown_unit = how.unit(_counter_unit(metric) if counted else unit or unit_of(metric))
        return ShownSeries(shown_unit, points, events=how.increase) if points else None

    def query_metrics(self, args: QueryMetricsArgs) -> ToolOutput:
        now = datetime.now(UTC)
        try:
            end = parse_time(args.end, now) if args.end else now
            start = parse_time(args.start, now) if args.start else end - timedelta(hours=1)
            at = parse_time(args.at, now) if args.at else None
            if start >= end:
                raise QueryError(f"start {iso(start)} must be before end {iso(end)}")
            query, how, window = self._read(args, start, end)
            since = start - max(HISTORY, 4 * (end - start))
            step = max(args.step_seconds, math.ceil((start - since).total_seconds() / MAX_POINTS))
            history = self._series(query, how, since, start, step) if window else []
        except QueryError as exc:
            return ToolOutput(status="error", error=str(exc), text=f"query_metrics error from prometheus: {exc}")
        except UnavailableError as exc:
            return ToolOutput(
                status="error",
                error=f"prometheus unavailable: {exc}",
                text=f"query_metrics error: prometheus unavailable: {exc}",
            )
        if not window:
            message = f"prometheus returned no series for {query} between {iso(start)} and {iso(end)}"
            return ToolOutput(status="no_data", text=message, retrieval_details={"promql": query})
        unit = unit_of(args.metric or query)
        if how is not None:
            unit = how.unit(_counter_unit(args.metric) if how.kind.kind == "counter" else unit)
        about = how.about() if how else {}
        # a step asked for is the range query's own; the output says so as the embedded file's does
        increase = how is not None and how.increase
        asked_step = args.step_seconds if "step_seconds" in args.model_fields_set and not increase else None
        texts, model_texts, series_details = [], [], []
        evidence: list[Evidence] = []
        history_by_labels = {_labels(series.get("metric")): points for series, points in history}
        for series, points in window[:MAX_SERIES]:
            if not points:
                continue
            labels = _labels(series.get("metric"))
            before = history_by_labels.get(labels, [])
            after = partial(self._after, query, how, labels, start=start, end=end, step=args.step_seconds)
            report = judge_window(before, points, after)
            request = {"promql": query, "series": labels, **about, "start": iso(start), "end": iso(end)}
            if at is not None:
                request["at"] = iso(at)
            span = Span(first=(before or points)[0][0], last=points[-1][0])
            service = _label(series.get("metric"), self.service_label) or args.service or ""
            rendered, found = metrics_output(
                request,
                service=service,
                metric=args.metric or query,
                unit=unit,
                window=points,
                history=span,
                report=report,
                kind=how.kind.kind if how else None,
                per_step=how.step_seconds if how and how.increase else None,
                at=at,
                step_seconds=asked_step,
            )
            texts.append(rendered.text)
            model_texts.append(rendered.model_text)
            evidence.append(found)
            values = [v for _t, v in points]
            series_details.append({"labels": labels, "points": len(points), "min": min(values), "max": max(values)})
        if not texts:
            return ToolOutput(status="no_data", text=f"prometheus series for {query} have no numeric points")
        note = f"\n({len(window) - MAX_SERIES} more series not shown)" if len(window) > MAX_SERIES else ""
        details = {"backend": self.name, "promql": query, **about, "series": series_details, "unit": unit}
        return ToolOutput(
            status="ok",
            text="\n\n".join(texts) + note,
            model_text="\n\n".join(model_texts),
            retrieval_details=details,
            evidence=evidence,
        )


def _counter_unit(metric: str | None) -> str:
    """What a counter counts: ``_seconds_total`` seconds, ``_count`` / ``_total`` events (no unit)."""
    name = (metric or "").removesuffix("_total")
    return "" if name.endswith("_count") else unit_of(name)


def _label(metric: Any, name: str) -> str | None:
    value = metric.get(name) if isinstance(metric, dict) else None
    return str(value) if value is not None else None


def _labels(metric: Any) -> str:
    if not isinstance(metric, dict):
        return "{}"
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(metric.items())) + "}"


def _points(series: Any) -> list[tuple[datetime, float]]:
    points = []
    for pair in series.get("values") or [] if isinstance(series, dict) else []:
        try:
            moment = datetime.fromtimestamp(float(pair[0]), tz=UTC)
            value = float(pair[1])
        except (TypeError, ValueError, IndexError):
            continue
        if math.isfinite(value):  # NaN and ±Inf are not evidence
            points.append((moment, value))
    return points
