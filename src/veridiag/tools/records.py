"""Typed evidence a backend returns beside its rendered text.

The offline engine reasons on these records, never by re-parsing rendered output. Every
record that a claim may quote carries ``line``: the exact line of the stored output that
states it, so an excerpt taken from a record is found verbatim by the Gatekeeper.
Records live in memory with the call's result; the store keeps the text, and beside it what
the pages draw by (``tools/drawn.py``: points, episodes, times — never grounded).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from veridiag.analysis.traces import Hop, WaterfallSpan
from veridiag.tools.promql import MetricKind

Level = Literal["ERROR", "WARN", "INFO", "DEBUG"]


class Span(BaseModel):
    """Where a service has data: its first and last timestamps."""

    first: datetime
    last: datetime


class Unleveled(BaseModel):
    """Of a service's imported lines, how many wrote no level of their own (stored as INFO): where
    most did, a search by level cannot find its errors, and "no ERROR lines" says nothing."""

    unleveled: int
    lines: int
    #: The output line that says so.
    line: str

    @property
    def mostly(self) -> bool:
        return self.lines > 0 and self.unleveled * 2 >= self.lines


class LogSample(BaseModel):
    ts: datetime
    service: str
    level: str
    line: str


class TemplateCount(BaseModel):
    """One log template in a window: exact count, first and last occurrence, a verbatim line."""

    #: Whose lines, when the search spanned every service (then a template is counted per service).
    service: str | None = None
    template: str
    level: str
    count: int
    first: datetime
    last: datetime
    example: str
    #: The output line stating count, first, last and template.
    line: str


class Burst(BaseModel):
    """A run of matching lines separated from the next by a quiet gap."""

    first: datetime
    last: datetime
    count: int


class LogEvidence(BaseModel):
    kind: Literal["logs"] = "logs"
    service: str | None
    level: str | None
    query: str | None
    #: The words searched when they are not the query's own (its Chinese words found nothing and
    #: their English glossary words were searched instead).
    searched: str | None = None
    start: datetime
    end: datetime
    matched: int
    #: None: every matching line was read. Else only the first ``counted`` in storage order were
    #: (a search too broad to read line by line): ``matched`` is still exact, but ``by_level``,
    #: ``templates``, ``bursts`` and ``samples`` describe those lines only — no totals to state.
    counted: int | None = None
    by_level: dict[str, int] = Field(default_factory=dict)
    templates: list[TemplateCount] = Field(default_factory=list)
    bursts: list[Burst] = Field(default_factory=list)
    #: The output line listing the bursts, when there are any.
    bursts_line: str | None = None
    samples: list[LogSample] = Field(default_factory=list)
    #: Lines in the window the importer could not parse (imported whole).
    unparsed: int = 0
    #: The output line with the total ("matched N lines (…)" or "matched 0 lines").
    line: str
    #: Where the service has logs at all (to say so when the window holds none).
    span: Span | None = None
    #: How many of the service's imported lines wrote no level; None when all did, or unknown.
    unleveled: Unleveled | None = None


class MetricPoint(BaseModel):
    ts: datetime
    value: float
    line: str


class MetricAnomaly(BaseModel):
    """An episode judged against the series' own history (robust baseline)."""

    onset: datetime
    end: datetime
    peak_at: datetime
    peak: float
    expected: float
    direction: Literal["up", "down"]
    score: float
    points: int
    factor: float | None
    #: The output line describing the episode; ``peak_line`` the point line of its peak.
    line: str
    peak_line: str

    @property
    def duration(self) -> timedelta:
        return self.end - self.onset


class StepIncrease(BaseModel):
    """One step in which a sparse counter grew: when, by how much, and its point line."""

    at: datetime
    by: float
    line: str


class CounterIncreases(BaseModel):
    """A counter shown as its increase per step (restarts, OOM kills): the steps it grew in."""

    step_seconds: int
    total: float
    #: The steps that added something, in time order (all of them, whatever the line lists).
    steps: list[StepIncrease]
    #: The output line with the total and the steps ("increases per 1m: 3 restarts in 3 steps: …").
    line: str


class AskedPoint(BaseModel):
    """The series' value at the moment a question asks about (``query_metrics`` ``at``): the
    point nearest it in the window, however long the episode around it."""

    #: The moment asked, and the point nearest it (its time and value).
    asked: datetime
    at: datetime
    value: float
    #: The output line that states it, and the point's own line (a quoted point is never thinned away).
    line: str
    point_line: str


class MetricEvidence(BaseModel):
    kind: Literal["metrics"] = "metrics"
    service: str
    metric: str
    unit: str
    start: datetime
    end: datetime
    points: int
    minimum: float
    maximum: float
    average: float
    last: float
    peak_at: datetime
    #: How the baseline was formed ("median_mad", "seasonal_median_mad") and its centre.
    baseline_method: str | None = None
    baseline_median: float | None = None
    history: Span | None = None
    anomalies: list[MetricAnomaly] = Field(default_factory=list)
    #: What the metric was taken for (counters are shown as a rate or increase); None for raw PromQL.
    metric_kind: MetricKind | None = None
    #: A counter shown as its increase per step: the steps it grew in (None otherwise).
    increases: CounterIncreases | None = None
    #: The output lines with the window's statistics and the history's baseline.
    window_line: str
    baseline_line: str | None = None
    #: The value at the moment asked, when the call named one inside the window.
    asked: AskedPoint | None = None
    #: The points the output lists after its ``points:`` heading, in its order (a thinned
    #: window, with any peak before it first): what a chart of the output draws.
    listed: list[tuple[datetime, float]] = Field(default_factory=list)


class ChangeRecord(BaseModel):
    """A deploy, configuration change, restart or scaling — from a structured source only."""

    ts: datetime
    service: str
    kind: str
    description: str
    version: str | None = None
    source: str = ""
    line: str


class ChangeEvidence(BaseModel):
    kind: Literal["changes"] = "changes"
    service: str | None
    start: datetime
    end: datetime
    changes: list[ChangeRecord] = Field(default_factory=list)
    line: str
    #: No change feed was ever imported: "no changes" then means "cannot tell", not "none".
    feed_empty: bool = False


class SuspectSignal(BaseModel):
    """One qualifying change of a suspect (``rank_suspects``): a metric episode, a new log
    template, or a recorded change; ``line`` states it in the output."""

    service: str
    source: Literal["metric", "log", "change"]
    #: The metric, the log template, or the change's kind.
    name: str
    #: What it measures (``analysis/signatures.yaml``) and whether that points at the service itself.
    family: str
    role: str
    onset: datetime
    end: datetime
    expected: float | None = None
    peak: float | None = None
    peak_at: datetime | None = None
    factor: float | None = None
    z: float | None = None
    count: int = 0
    unit: str = ""
    level: str = ""
    description: str = ""
    saturated: bool = False
    #: Events counted per step (restarts, OOM kills): how many in the window.
    events: float | None = None
    score: float
    #: How near the moment asked it began (1: in the span that counts in full).
    nearness: float = 1.0
    line: str


class Suspect(BaseModel):
    rank: int
    service: str
    score: float
    signals: list[SuspectSignal]
    #: Services whose change explains this one's (something it calls; a service its new logs name).
    explained_by: list[str] = Field(default_factory=list)
    #: The output line ranking it.
    line: str


class NotCounted(BaseModel):
    """A change that was seen but does not count as a suspect's, and why (it began before the
    window, in the first rows of its data, as a single point, or too small)."""

    service: str
    name: str
    onset: datetime
    reason: str
    line: str


class Episode(BaseModel):
    """A qualifying change as the analysis found it — every one, listed or not — to choose the
    period a question is about; never quoted (the output lines state the listed ones)."""

    service: str
    source: Literal["metric", "log", "change"]
    name: str
    family: str
    role: str
    onset: datetime
    end: datetime
    score: float
    strength: float


class LevelRank(BaseModel):
    """A service's level of the measure asked for ("which service is slowest")."""

    rank: int
    service: str
    metric: str
    unit: str
    average: float
    peak: float
    peak_at: datetime
    line: str
    #: ``log``: ranked by the service's ERROR lines in the window (``average``: their count).
    source: Literal["metric", "log"] = "metric"


class SuspectEvidence(BaseModel):
    """Which services changed in a window and which most likely started it (``rank_suspects``)."""

    kind: Literal["suspects"] = "suspects"
    start: datetime
    end: datetime
    at: datetime | None = None
    #: Services examined, and those of them with no qualifying change.
    examined: list[str] = Field(default_factory=list)
    quiet: list[str] = Field(default_factory=list)
    #: Services asked about that hold no data in the window.
    without_data: list[str] = Field(default_factory=list)
    series: int = 0
    suspects: list[Suspect] = Field(default_factory=list)
    not_counted: list[NotCounted] = Field(default_factory=list)
    #: Whether the first suspect stands out of the others (else the evidence cannot tell).
    standout: bool = False
    #: The suspect that competes with the first too strongly for it to stand out, when one does.
    close: str | None = None
    #: The earliest qualifying change, and the line stating it.
    first: SuspectSignal | None = None
    first_line: str | None = None
    #: Every qualifying change found, listed or not (for choosing a period; never quoted).
    episodes: list[Episode] = Field(default_factory=list)
    #: The measure asked to rank by, and the ranking.
    by: str | None = None
    levels: list[LevelRank] = Field(default_factory=list)
    levels_line: str | None = None
    #: The period the ranking read (around the moment asked, else the window).
    levels_start: datetime | None = None
    levels_end: datetime | None = None
    #: The output's first line (what was examined), its verdict line and its quiet line.
    line: str
    verdict_line: str
    quiet_line: str | None = None
    #: The line naming the services asked about that hold no data, when there are any.
    without_data_line: str | None = None
    #: How many of the services examined changed ("7 of 10": ``suspects`` lists the first few),
    #: and the line saying so, when any did.
    changed: int = 0
    changed_line: str | None = None
    #: No service has data in the window and every backend could be listed: where the data lies
    #: instead, and the line saying so.
    held: Span | None = None
    held_line: str | None = None


class RunbookMatch(BaseModel):
    """A runbook the search found: a source of hypotheses and checks, never of facts."""

    id: str
    title: str
    services: list[str] = Field(default_factory=list)
    score: float
    #: Words of the query the runbook contains (a match on one common word is no match).
    matched_terms: list[str] = Field(default_factory=list)
    #: Heading → its numbered or bulleted items, read from the runbook's Markdown source.
    sections: dict[str, list[str]] = Field(default_factory=dict)


class KnowledgeEvidence(BaseModel):
    kind: Literal["knowledge"] = "knowledge"
    query: str
    documents: list[RunbookMatch] = Field(default_factory=list)


class SpanFigure(BaseModel):
    """One figure of a service's spans in the window against its baseline (``query_traces``)."""

    service: str
    #: ``spans``, ``errors``, ``duration_p50`` … ``self_p90``; ``errors`` is the error rate in %.
    name: str
    unit: str
    window: float | None
    baseline: float | None
    #: window / baseline, as the line states it (None: not stated).
    factor: float | None = None
    line: str


class SlowTrace(BaseModel):
    """One of the slowest traces: when, how long the service's span took, its critical path."""

    rank: int
    trace_id: str
    at: datetime
    #: The service's longest span in the trace, and the whole trace (root or first span to last end).
    span_ms: float
    trace_ms: float
    path: list[Hop] = Field(default_factory=list)
    #: The hop with the most self time on the path.
    heaviest: Hop | None = None
    line: str
    path_line: str
    heaviest_line: str | None = None
    #: Every span of the trace as its waterfall lists it (``analysis/traces.py`` ``waterfall``):
    #: drawn on the session page (``tools/drawn.py``), never quoted — no output line states them.
    spans: list[WaterfallSpan] = Field(default_factory=list)


class CallEdge(BaseModel):
    """Calls from one service to another in the window (and the baseline)."""

    caller: str
    callee: str
    calls: int
    errors: int | None = None
    baseline_calls: int = 0
    baseline_errors: int | None = None
    line: str


class TraceEvidence(BaseModel):
    """A service's spans in a window against its own earlier spans (``query_traces``)."""

    kind: Literal["traces"] = "traces"
    service: str
    operation: str | None = None
    start: datetime
    end: datetime
    baseline_start: datetime
    baseline_end: datetime
    #: The service's figures (count, error rate, duration and self-time percentiles), each on a
    #: line; its callees' self time p90, each on a line.
    figures: list[SpanFigure] = Field(default_factory=list)
    callees: list[SpanFigure] = Field(default_factory=list)
    calls: list[CallEdge] = Field(default_factory=list)
    slowest: list[SlowTrace] = Field(default_factory=list)
    #: The line naming the window and the baseline.
    line: str
    #: The line heading the slowest traces (it says what "slowest" is measured by).
    slowest_line: str | None = None
    #: One trace read by its id (``trace_id=``): the services in the order it reached them and
    #: the ones ``service`` called in it (``slowest`` holds its path); None for a window's spans.
    trace_id: str | None = None
    trace_spans: int = 0
    reached: list[str] = Field(default_factory=list)
    called: list[str] = Field(default_factory=list)
    #: The lines stating the services reached and what ``service`` called.
    reached_line: str | None = None
    own_line: str | None = None

    def figure(self, name: str) -> SpanFigure | None:
        return next((f for f in self.figures if f.name == name), None)


Evidence = Annotated[
    LogEvidence | MetricEvidence | ChangeEvidence | KnowledgeEvidence | SuspectEvidence | TraceEvidence,
    Field(discriminator="kind"),
]
