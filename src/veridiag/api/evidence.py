"""The session page's evidence section (issue 17): each metric series and log query that an
allowed claim cites, read from the invocation as stored, drawn by ``charts.py``.

A metric chart draws the points the invocation's output lists — from the typed records kept
with it (``tools/drawn.py``), or read from its text for an invocation stored before them — its
stored baseline and anomaly episodes, and marks the points a claim's excerpt quotes — by the
very phrases the output writes them with (``point_line``, ``peak_phrase``), so a marked point is
always a stored one. A log query shows its templates with their stored counts and its lines
per time bucket. A span query (``query_traces``) draws the slowest trace it lists as a
waterfall, and the calls of every cited span query make one service call graph with the
suspects marked (``trace_charts.py``), from the records kept with the invocation; an invocation
stored before them has no figure. Claims the checks did not allow are not drawn: unverified
material is absent.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Protocol
from urllib.parse import quote

from markupsafe import Markup
from pydantic import BaseModel, ConfigDict

from veridiag.api.charts import ChartWords, CitedPoint, CountChart, MetricChart, count_svg, metric_svg
from veridiag.api.i18n import TEXT
from veridiag.api.trace_charts import (
    ServiceGraph,
    TraceWords,
    graph_svg,
    merged_graph,
    service_colours,
    waterfall_svg,
)
from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.json import JsonObject, JsonValue, json_object, json_objects
from veridiag.text.render import format_value, iso
from veridiag.tools.drawn import DrawnGraph, DrawnTrace, read_drawn, series_points
from veridiag.tools.render import peak_phrase, point_line


class CitedExcerpt(Protocol):
    """One binding of a claim to an invocation (``workbench.EvidenceView``)."""

    @property
    def invocation_id(self) -> int: ...
    @property
    def excerpt(self) -> str: ...


class CitingClaim(Protocol):
    """A claim as the page lists it (``workbench.ClaimRow``)."""

    @property
    def claim_id(self) -> str: ...
    @property
    def allowed(self) -> bool: ...
    @property
    def evidence(self) -> Sequence[CitedExcerpt]: ...


class CitedCaption(BaseModel):
    """A cited point as the figure's caption lists it (the text twin of its marker)."""

    claim_id: str
    href: str | None
    value: str
    at: str


class MetricFigure(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    invocation_id: int
    dom_id: str
    title: str
    svg: Markup
    cited: list[CitedCaption]


class TemplateRow(BaseModel):
    template: str
    count: int
    #: Whose lines, in a search over every service (a template is counted per service).
    service: str | None = None
    #: Claims whose excerpt quotes the template.
    cited_by: list[str]


class LogFigure(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    invocation_id: int
    dom_id: str
    title: str
    matched: int | None
    #: Set when only the first ``counted`` lines were read (the counts are of those).
    counted: int | None
    rows: list[TemplateRow]
    svg: Markup | None


class LegendEntry(BaseModel):
    service: str
    colour: int
    suspect: bool = False


class TraceFigure(BaseModel):
    """The slowest trace a cited ``query_traces`` invocation lists, as a waterfall."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    invocation_id: int
    dom_id: str
    title: str
    trace: DrawnTrace
    #: The trace was read by its id (``trace_id=``), not ranked slowest in a window.
    by_id: bool = False
    svg: Markup
    legend: list[LegendEntry]
    cited_by: list[str]


class GraphFigure(BaseModel):
    """The service call graph of the cited ``query_traces`` invocations, suspects marked."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    dom_id: str
    graph: ServiceGraph
    svg: Markup
    invocation_ids: list[int]


class EvidenceCharts(BaseModel):
    metrics: list[MetricFigure]
    logs: list[LogFigure]
    traces: list[TraceFigure] = []
    graph: GraphFigure | None = None

    def __bool__(self) -> bool:
        return bool(self.metrics or self.logs or self.traces or self.graph)

    @property
    def count(self) -> int:
        return len(self.metrics) + len(self.logs) + len(self.traces) + (self.graph is not None)

    def split(self, lead: Collection[int]) -> tuple[EvidenceCharts, EvidenceCharts]:
        """The figures of the ``lead`` invocations (what the answer and its key facts cite: shown
        first), and the others (folded below them); the call graph leads when a span query it
        draws does. No lead: every figure leads."""
        if not lead:
            return self, EvidenceCharts(metrics=[], logs=[])
        graph_leads = self.graph is not None and any(i in lead for i in self.graph.invocation_ids)
        first = EvidenceCharts(
            metrics=[f for f in self.metrics if f.invocation_id in lead],
            logs=[f for f in self.logs if f.invocation_id in lead],
            traces=[f for f in self.traces if f.invocation_id in lead],
            graph=self.graph if graph_leads else None,
        )
        rest = EvidenceCharts(
            metrics=[f for f in self.metrics if f.invocation_id not in lead],
            logs=[f for f in self.logs if f.invocation_id not in lead],
            traces=[f for f in self.traces if f.invocation_id not in lead],
            graph=None if graph_leads else self.graph,
        )
        return first, rest


def chart_words(lang: str) -> ChartWords:
    words = TEXT[lang]
    return ChartWords.model_validate({name: words[f"chart_{name}"] for name in ChartWords.model_fields})


def trace_words(lang: str) -> TraceWords:
    words = TEXT[lang]
    return TraceWords.model_validate({name: words[f"trace_{name}"] for name in TraceWords.model_fields})


def evidence_charts(
    invocations: Sequence[InvocationRecord],
    claims: Sequence[CitingClaim],
    *,
    session_id: str,
    lang: str,
    prefix: str = "evidence",
) -> EvidenceCharts:
    """The figures for the invocations allowed claims cite, in invocation order; ``prefix``
    keeps element ids apart where two sets share a page (the section and the claim panel)."""
    excerpts: dict[int, list[tuple[str, str]]] = {}
    for claim in claims:
        if claim.allowed:
            for item in claim.evidence:
                excerpts.setdefault(item.invocation_id, []).append((claim.claim_id, item.excerpt))
    words = chart_words(lang)
    spans_words = trace_words(lang)
    metrics, logs = [], []
    drawn_traces: list[tuple[InvocationRecord, DrawnTrace, list[str]]] = []
    graphs: list[tuple[int, DrawnGraph]] = []
    for invocation in sorted(invocations, key=lambda i: i.id):
        quoted = excerpts.get(invocation.id)
        if not quoted or invocation.status != "ok":
            continue
        claim_href = f"/sessions/{quote(session_id, safe='')}/claims/{{}}?lang={lang}"
        if invocation.tool_name == "query_metrics":
            metrics.append(metric_figure(invocation, quoted, words, claim_href, f"{prefix}-{invocation.id}"))
        elif invocation.tool_name == "query_logs":
            logs.append(log_figure(invocation, quoted, words, f"{prefix}-{invocation.id}"))
        elif invocation.tool_name == "query_traces" and (drawn := read_drawn(invocation.drawn)) is not None:
            if drawn.trace is not None and drawn.trace.spans:
                cited_by = list(dict.fromkeys(claim_id for claim_id, _excerpt in quoted))
                drawn_traces.append((invocation, drawn.trace, cited_by))
            if drawn.graph is not None:
                graphs.append((invocation.id, drawn.graph))
    graph, suspects = None, []
    if graphs:
        merged = merged_graph(graphs)
        suspects = merged.suspects
        if merged.edges or merged.suspects:
            dom_id = f"{prefix}-service-graph"
            svg = graph_svg(merged, spans_words, chart_id=f"{dom_id}-chart", title=spans_words.graph)
            graph = GraphFigure(dom_id=dom_id, graph=merged, svg=svg, invocation_ids=[i for i, _g in graphs])
    traces = [
        trace_figure(invocation, trace, spans_words, f"{prefix}-{invocation.id}", cited_by, suspects=suspects)
        for invocation, trace, cited_by in drawn_traces
    ]
    return EvidenceCharts(metrics=metrics, logs=logs, traces=traces, graph=graph)


def trace_figure(
    invocation: InvocationRecord,
    trace: DrawnTrace,
    words: TraceWords,
    dom_id: str,
    cited_by: list[str],
    *,
    suspects: Sequence[str] = (),
) -> TraceFigure:
    """The waterfall of the slowest trace the invocation lists (its records, as stored), the
    suspects of the call graph marked in it."""
    service = _title(invocation.arguments, "service", "operation")
    by_id = bool(invocation.arguments.get("trace_id"))
    title = f"#{invocation.id} {service} · {words.by_id if by_id else words.waterfall} {trace.trace_id}"
    colours = service_colours([s.service for s in trace.spans])
    return TraceFigure(
        invocation_id=invocation.id,
        dom_id=dom_id,
        title=service,
        trace=trace,
        by_id=by_id,
        svg=waterfall_svg(trace, words, chart_id=f"{dom_id}-chart", title=title, suspects=suspects),
        legend=[LegendEntry(service=name, colour=index, suspect=name in suspects) for name, index in colours.items()],
        cited_by=cited_by,
    )


def _title(arguments: JsonObject, *names: str) -> str:
    return " · ".join(str(arguments[name]) for name in names if arguments.get(name)) or "—"


def _moment(value: JsonValue) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def metric_figure(
    invocation: InvocationRecord, quoted: Sequence[tuple[str, str]], words: ChartWords, claim_href: str, dom_id: str
) -> MetricFigure:
    """The invocation's stored points; cited: each point a claim's excerpt states by time and value."""
    details = json_object(invocation.retrieval_details)
    unit = details.get("unit")
    unit = unit if isinstance(unit, str) else ""
    points = series_points(invocation.output, unit, invocation.drawn)
    # An excerpt names a few of ~240 points: its time text is looked for first, the phrases
    # are written only for the points it names (half the page's render time otherwise).
    quoting: dict[tuple[datetime, float], list[str]] = {}
    for moment, value in points:
        stamp = iso(moment)
        naming = [(c, excerpt) for c, excerpt in quoted if stamp in excerpt]
        if naming:
            quoting[moment, value] = list(dict.fromkeys(c for c, e in naming if _states(e, moment, value, unit)))
    cited = [
        CitedPoint(at=moment, value=value, claim_ids=claims, href=claim_href.format(quote(claims[0], safe="")))
        for (moment, value), claims in quoting.items()
        if claims
    ]
    edges = details.get("window")
    window = [_moment(edge) for edge in edges] if isinstance(edges, list) else []
    episodes = [(_moment(a.get("onset")), _moment(a.get("end"))) for a in json_objects(details.get("anomalies"))]
    baseline = details.get("baseline_median")
    title = _title(invocation.arguments, "service", "metric", "promql")
    chart = MetricChart(
        chart_id=f"{dom_id}-chart",
        title=f"#{invocation.id} {title}",
        unit=unit,
        points=points,
        window=(window[0], window[1]) if len(window) == 2 and window[0] and window[1] else None,
        baseline=baseline if isinstance(baseline, int | float) else None,
        anomalies=[(onset, end) for onset, end in episodes if onset and end],
        cited=cited,
    )
    captions = [
        CitedCaption(
            claim_id=claim_id,
            href=claim_href.format(quote(claim_id, safe="")),
            value=format_value(c.value, unit),
            at=iso(c.at),
        )
        for c in cited
        for claim_id in c.claim_ids
    ]
    return MetricFigure(
        invocation_id=invocation.id, dom_id=dom_id, title=title, svg=metric_svg(chart, words), cited=captions
    )


def _states(excerpt: str, moment: datetime, value: float, unit: str) -> bool:
    """Whether ``excerpt`` states the point, as the output writes a point or a peak (time and value)."""
    return point_line(moment, value, unit) in excerpt or peak_phrase(value, moment, unit) in excerpt


def log_figure(
    invocation: InvocationRecord, quoted: Sequence[tuple[str, str]], words: ChartWords, dom_id: str
) -> LogFigure:
    """The stored templates and counts (a template is cited when an excerpt quotes it whole) and
    the lines per bucket, when the backend stored them."""
    details = json_object(invocation.retrieval_details)
    rows = []
    for pattern in json_objects(details.get("patterns")):
        template, count, service = pattern.get("template"), pattern.get("count"), pattern.get("service")
        if isinstance(template, str) and isinstance(count, int):
            whose = service if isinstance(service, str) else None
            # A service's row is cited by an excerpt of its own line, not by another service's
            # row of the same template.
            cited_by = sorted(
                {
                    claim_id
                    for claim_id, excerpt in quoted
                    if template in excerpt and (whose is None or f"service={whose} " in excerpt)
                }
            )
            rows.append(TemplateRow(template=template, count=count, service=whose, cited_by=cited_by))
    title = _title(invocation.arguments, "service", "level", "query")
    buckets = json_object(details.get("counts_over_time"))
    start, step, counts = _moment(buckets.get("start")), buckets.get("step_seconds"), buckets.get("counts")
    svg = None
    if start and isinstance(step, int) and isinstance(counts, list):
        chart = CountChart(
            chart_id=f"{dom_id}-volume",
            title=f"#{invocation.id} {title}",
            start=start,
            step_seconds=step,
            counts=[n for n in counts if isinstance(n, int)],
        )
        svg = count_svg(chart, words)
    matched, counted = details.get("matched"), details.get("counted")
    return LogFigure(
        invocation_id=invocation.id,
        dom_id=dom_id,
        title=title,
        matched=matched if isinstance(matched, int) else None,
        counted=counted if isinstance(counted, int) else None,
        rows=rows,
        svg=svg,
    )
