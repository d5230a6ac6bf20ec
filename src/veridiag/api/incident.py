"""The incident timeline on the session page (issue 17 item 2): when things happened, each
marker a claim of the session placed by the times its own evidence states.

A marker's times are what the stored output line its excerpt matched states (the Gatekeeper's
matched span; the excerpt found verbatim when the Gatekeeper did not run): the typed records the
tool kept for that line (``tools/drawn.py``), or — an invocation stored before them — the line
read back through ``tools/readback.py``; never the claim's text, which a model wrote. A claim whose evidence
states no time is listed "time unknown"; a claim that was not allowed out is never placed and
is listed apart, struck through; hypotheses cite no evidence and so have no time. Positions are
percentages of one axis, so the page draws them as SVG attributes with no script.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Literal
from urllib.parse import quote
from zoneinfo import ZoneInfo

from pydantic import BaseModel

from veridiag.contracts.audit import AuditChain
from veridiag.contracts.json import JsonObject, json_object, json_objects
from veridiag.contracts.material import ClaimView, ExecutorMaterial
from veridiag.contracts.plan import Plan
from veridiag.pipeline.scope import moment, plan_zone
from veridiag.text.render import iso
from veridiag.tools.drawn import LineReader
from veridiag.tools.readback import (
    AnomalyLine,
    BurstsLine,
    ChangeLine,
    IncreasesLine,
    LineFacts,
    LogLine,
    PointLine,
    TemplateLine,
)

Label = Literal["confirmed", "inferred", "hypothesis", "unverified"]
#: The verifier's labels of an allowed claim as the page names them; any other is unverified.
LABELS: dict[str, Label] = {"direct_observation": "confirmed", "reasonable_inference": "inferred"}
Role = Literal["change", "onset", "peak", "end", "first", "last", "step", "point", "line"]
#: Axis steps to choose from (seconds): the smallest that gives at most ``MAX_TICKS`` ticks.
STEPS = (60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800)
MAX_TICKS = 8
#: The asked window widens the axis only up to this many times the markers' own span; beyond,
#: it is clipped (a week's window would squeeze a half-hour incident into a line).
WINDOW_STRETCH = 4
#: Room left at each end of the axis, as a share of its span.
PAD = 0.03
#: Where a row's first lane of points sits, how far apart lanes are, and how close (percent of
#: the axis, about a glyph's width at the workbench's narrowest track) two points may be in one.
LANE_TOP = 14.0
LANE_STEP = 12.0
LANE_GAP = 2.5


class TimePoint(BaseModel):
    """One moment a line states: what it is (onset, peak, change …), where it sits, and the
    time exactly as the invocation's output writes it."""

    at: datetime
    role: Role
    stamp: str
    #: The value the line states at this moment (a peak, a point, a step), as written.
    value: str | None = None
    shown: str = ""
    x: float = 0.0
    #: Height in the row's track: points too close to share a lane are stacked, so none hides
    #: another and each stays one click away.
    y: float = LANE_TOP


class Segment(BaseModel):
    """What one line of one invocation states in time: a change, an anomaly episode, a log
    template's first to last line, a burst, a counter's steps, a point or a log line."""

    invocation_id: int
    tool: str
    kind: Literal["change", "anomaly", "template", "burst", "steps", "point", "log"]
    points: list[TimePoint]
    #: A range (onset to end, first to last line); None for moments.
    start: TimePoint | None = None
    end: TimePoint | None = None
    count: int | None = None
    level: str | None = None
    factor: str | None = None
    #: The template, or the change's kind and description, as the output writes it.
    text: str | None = None
    #: Where a range's bar starts and how wide it is (percent of the axis).
    x: float = 0.0
    width: float = 0.0

    @property
    def first(self) -> datetime:
        return min(p.at for p in self._moments())

    def _moments(self) -> Iterator[TimePoint]:
        yield from self.points
        if self.start is not None:
            yield self.start
        if self.end is not None:
            yield self.end

    def covers(self, at: datetime) -> bool:
        if self.start is not None and self.end is not None:
            return self.start.at <= at <= self.end.at
        return any(p.at == at for p in self.points)


class Marker(BaseModel):
    """One row of the timeline: a claim allowed out, its label and what its evidence states."""

    claim_id: str
    claim_type: str
    claim_text: str
    label: Label
    segments: list[Segment]
    link: str
    shown: str = ""
    #: Dashed line between the segments a claim relates ("the change came before the anomaly").
    connector: tuple[float, float] | None = None
    #: The row's track height: one lane, plus one for each lane of stacked points.
    height: float = 2 * LANE_TOP

    @property
    def at(self) -> datetime:
        return min(s.first for s in self.segments)

    def stack(self) -> None:
        """Give each point the lowest lane where no earlier point sits within a glyph of it."""
        lanes: list[float] = []
        for point in sorted((p for s in self.segments for p in s.points), key=lambda p: p.x):
            lane = next((i for i, last in enumerate(lanes) if point.x - last >= LANE_GAP), len(lanes))
            if lane == len(lanes):
                lanes.append(point.x)
            lanes[lane] = point.x
            point.y = LANE_TOP + LANE_STEP * lane
        self.height = 2 * LANE_TOP + LANE_STEP * max(0, len(lanes) - 1)

    @property
    def invocation_ids(self) -> list[int]:
        return sorted({s.invocation_id for s in self.segments})


class Unplaced(BaseModel):
    """A claim or hypothesis the axis does not hold, and where to read it."""

    ref: str
    text: str
    label: Label
    link: str | None = None


class Band(BaseModel):
    """A window on the axis; ``clipped_*``: it goes on beyond that edge."""

    x: float
    width: float
    start: str
    end: str
    clipped_start: bool
    clipped_end: bool


class Tick(BaseModel):
    x: float
    shown: str
    at: str
    #: How the label sits on its tick: kept inside the axis at either end.
    anchor: Literal["start", "middle", "end"] = "middle"


class IncidentTimeline(BaseModel):
    zone: str
    window: Band | None = None
    focus: Band | None = None
    ticks: list[Tick] = []
    markers: list[Marker] = []
    time_unknown: list[Unplaced] = []
    unverified: list[Unplaced] = []


def incident_timeline(chain: AuditChain, lang: str) -> IncidentTimeline:
    """The session's timeline from its audit chain alone; an empty or failed run gives an empty
    one (its window, if the plan had one), never an error."""
    plan = _plan(chain.session.plan)
    zone, zone_name = plan_zone(plan)
    material = ExecutorMaterial.read(json_object(chain.executor.structured_output))
    composer_input = json_object(chain.composer.input)
    # The label the composer was given; the verifier's check where an older record lacks it.
    checked = {c.get("claim_id"): c.get("verification") for c in json_objects(chain.verifier.claim_checks)}
    allowed = {
        c.get("claim_id"): LABELS.get(str(c.get("verification") or checked.get(c.get("claim_id"))), "unverified")
        for c in json_objects(composer_input.get("allowed_claims"))
    }
    spans = _spans(chain)
    outputs = {i.id: (LineReader(i.tool_name, i.drawn), i.output or "") for i in chain.invocations}
    base = f"/sessions/{quote(chain.session.id, safe='')}/claims/"
    markers, time_unknown, unverified = [], [], []
    for claim in material.claims:
        link = f"{base}{quote(claim.claim_id, safe='')}?lang={lang}"
        label = allowed.get(claim.claim_id)
        if label is None or label == "unverified":
            unverified.append(Unplaced(ref=claim.claim_id, text=claim.claim_text, label="unverified", link=link))
            continue
        segments = _segments(claim, spans, outputs)
        if not segments:
            time_unknown.append(Unplaced(ref=claim.claim_id, text=claim.claim_text, label=label, link=link))
            continue
        markers.append(
            Marker(
                claim_id=claim.claim_id,
                claim_type=claim.claim_type,
                claim_text=claim.claim_text,
                label=label,
                segments=segments,
                link=link,
            )
        )
    for number, hypothesis in enumerate(json_objects(composer_input.get("allowed_hypotheses")), start=1):
        text = hypothesis.get("hypothesis_text")
        if isinstance(text, str) and text:
            time_unknown.append(Unplaced(ref=f"H{number}", text=text, label="hypothesis"))
    order = {claim.claim_id: claim.index for claim in material.claims}
    markers.sort(key=lambda m: (m.at, order.get(m.claim_id, 0)))
    timeline = IncidentTimeline(zone=zone_name, markers=markers, time_unknown=time_unknown, unverified=unverified)
    focus = material.scope.focus if material.scope else None
    _place(timeline, zone, _window(plan.start, plan.end), _window(*focus) if focus else None)
    return timeline


def _plan(stored: JsonObject | None) -> Plan:
    try:
        return Plan.model_validate(stored or {})
    except ValueError:  # a plan stored by an older or broken planner: no window, UTC
        return Plan()


def _window(start: object, end: object) -> tuple[datetime, datetime] | None:
    first, last = moment(start), moment(end)
    return (first, last) if first is not None and last is not None and first < last else None


# -- where each claim's evidence is ------------------------------------------------------------


#: (claim id, binding index, invocation id) → (start, end) of the excerpt in the stored output.
Spans = dict[tuple[str, int, int], tuple[int, int]]


def _spans(chain: AuditChain) -> Spans | None:
    """The Gatekeeper's matched spans in invocation outputs, per binding; None when it did not
    run (no trace), so excerpts are then looked up verbatim."""
    traces = json_objects(chain.gatekeeper.trace)
    if not traces:
        return None
    spans: Spans = {}
    for trace in traces:
        claim_id = trace.get("claim_id")
        for check in json_objects(trace.get("checks")):
            span = json_object(check.get("matched_span"))
            binding = _binding_index(str(check.get("target")))
            start, end, invocation = span.get("start"), span.get("end"), span.get("invocation_id")
            if (
                isinstance(claim_id, str)
                and binding is not None
                and span.get("source") == "output"
                and isinstance(invocation, int)
                and isinstance(start, int)
                and isinstance(end, int)
            ):
                spans[(claim_id, binding, invocation)] = (start, end)
    return spans


def _binding_index(target: str) -> int | None:
    """``claims[0].evidence_bindings[2].evidence_excerpt`` → 2."""
    head, found, tail = target.partition(".evidence_bindings[")
    number = tail.partition("]")[0]
    return int(number) if found and head.startswith("claims[") and number.isdigit() else None


def _segments(claim: ClaimView, spans: Spans | None, outputs: dict[int, tuple[LineReader, str]]) -> list[Segment]:
    segments: list[Segment] = []
    for index, binding in enumerate(claim.bindings):
        for invocation_id in binding.source_invocation_ids:
            if invocation_id not in outputs:
                continue  # cites no invocation of this session: nothing to read a time from
            read, output = outputs[invocation_id]
            place = _place_of(output, binding.evidence_excerpt, spans, (claim.claim_id, index, invocation_id))
            if place is None:
                continue
            first, lines = _lines(output, *place)
            for number, line in enumerate(lines, start=first):
                if (facts := read(number, line)) is not None:
                    segments += _from_facts(invocation_id, read.tool, facts)
    return _distinct(segments)


def _place_of(output: str, excerpt: str, spans: Spans | None, key: tuple[str, int, int]) -> tuple[int, int] | None:
    if spans is not None:
        return spans.get(key)
    found = output.find(excerpt) if excerpt.strip() else -1
    return (found, found + len(excerpt)) if found >= 0 else None


def _lines(output: str, start: int, end: int) -> tuple[int, list[str]]:
    """The whole lines of ``output`` the span touches, and the index of the first: a claim may
    quote part of a line, and the line is what states the time."""
    if not 0 <= start <= end <= len(output):
        return 0, []
    head = output.rfind("\n", 0, start) + 1
    tail = output.find("\n", max(start, end - 1))
    return output.count("\n", 0, head), output[head : tail if tail >= 0 else len(output)].split("\n")


def _from_facts(invocation_id: int, tool: str, facts: LineFacts) -> list[Segment]:
    def at(moment: datetime, role: Role, value: str | None = None) -> TimePoint:
        return TimePoint(at=moment, role=role, stamp=iso(moment), value=value)

    if isinstance(facts, AnomalyLine):
        return [
            Segment(
                invocation_id=invocation_id,
                tool=tool,
                kind="anomaly",
                start=at(facts.onset, "onset"),
                end=at(facts.end, "end"),
                points=[at(facts.onset, "onset"), at(facts.peak_at, "peak", facts.peak)],
                factor=facts.factor,
            )
        ]
    if isinstance(facts, TemplateLine):
        return [
            Segment(
                invocation_id=invocation_id,
                tool=tool,
                kind="template",
                start=at(facts.first, "first"),
                end=at(facts.last, "last"),
                points=[at(facts.first, "first")],
                count=facts.count,
                level=facts.level,
                text=facts.template,
            )
        ]
    if isinstance(facts, BurstsLine):
        return [
            Segment(
                invocation_id=invocation_id,
                tool=tool,
                kind="burst",
                start=at(b.first, "first"),
                end=at(b.last, "last"),
                points=[at(b.first, "first")],
                count=b.count,
            )
            for b in facts.bursts
        ]
    if isinstance(facts, IncreasesLine):
        steps = [at(s.at, "step", "+" + s.by) for s in facts.steps]
        return [Segment(invocation_id=invocation_id, tool=tool, kind="steps", points=steps)]
    if isinstance(facts, ChangeLine):
        text = f"{facts.service} {facts.change}: {facts.description}"
        return [
            Segment(invocation_id=invocation_id, tool=tool, kind="change", points=[at(facts.at, "change")], text=text)
        ]
    if isinstance(facts, PointLine):
        return [
            Segment(invocation_id=invocation_id, tool=tool, kind="point", points=[at(facts.at, "point", facts.value)])
        ]
    assert isinstance(facts, LogLine)
    line = TimePoint(at=facts.at, role="line", stamp=facts.stamp)
    return [Segment(invocation_id=invocation_id, tool=tool, kind="log", points=[line])]


def _distinct(segments: list[Segment]) -> list[Segment]:
    """Each thing once: the same line quoted twice, or a point or log line inside what another
    line of the same invocation already states (an anomaly's peak point, a template's example)."""
    kept: list[Segment] = []
    for segment in segments:
        if any(segment == other for other in kept):
            continue
        if segment.kind in ("point", "log") and any(
            other.invocation_id == segment.invocation_id and other.kind not in ("point", "log") and other.covers(p.at)
            for other in segments
            for p in segment.points
        ):
            continue
        kept.append(segment)
    return kept


# -- the axis -------------------------------------------------------------------------------


def _place(
    timeline: IncidentTimeline,
    zone: ZoneInfo,
    window: tuple[datetime, datetime] | None,
    focus: tuple[datetime, datetime] | None,
) -> None:
    """Choose the axis (the markers, widened to the focus or asked window within reason) and
    give every moment its position and its time as shown in the session's zone."""
    moments = [p for m in timeline.markers for s in m.segments for p in _all(s)]
    region = focus or window
    if moments:
        low, high = min(p.at for p in moments), max(p.at for p in moments)
        span = max(high - low, timedelta(minutes=10))
        if region is not None and region[1] - region[0] <= span * WINDOW_STRETCH:
            low, high = min(low, region[0]), max(high, region[1])
    elif region is not None:
        low, high = region
    else:
        return
    if high <= low:
        low, high = low - timedelta(minutes=5), high + timedelta(minutes=5)
    # Dates are written only when what is shown spans more than one day in the session's zone.
    multi_day = low.astimezone(zone).date() != (high - timedelta(microseconds=1)).astimezone(zone).date()
    pad = (high - low) * PAD
    low, high = low - pad, high + pad

    def x(at: datetime) -> float:
        return round(min(100.0, max(0.0, (at - low) / (high - low) * 100)), 2)

    def shown(at: datetime) -> str:
        local = at.astimezone(zone)
        clock = "%H:%M:%S" if local.second or local.microsecond else "%H:%M"
        return local.strftime(("%m-%d " if multi_day else "") + clock)

    for point in moments:
        point.x, point.shown = x(point.at), shown(point.at)
    for marker in timeline.markers:
        marker.shown = shown(marker.at)
        for segment in marker.segments:
            if segment.start is not None and segment.end is not None:
                segment.x, segment.width = segment.start.x, max(0.4, round(segment.end.x - segment.start.x, 2))
        marker.stack()
        starts = sorted({s.first for s in marker.segments})
        if len(starts) > 1:
            marker.connector = (x(starts[0]), x(starts[-1]))

    def band(edges: tuple[datetime, datetime] | None) -> Band | None:
        if edges is None or edges[1] <= low or edges[0] >= high:
            return None
        left, right = x(edges[0]), x(edges[1])
        day = "%Y-%m-%d %H:%M"
        return Band(
            x=left,
            width=round(right - left, 2),
            start=edges[0].astimezone(zone).strftime(day),
            end=edges[1].astimezone(zone).strftime(day),
            clipped_start=edges[0] < low,
            clipped_end=edges[1] > high,
        )

    timeline.window, timeline.focus = band(window), band(focus if focus != window else None)
    timeline.ticks = [
        Tick(x=x(at), shown=shown(at), at=iso(at), anchor="start" if x(at) < 6 else "end" if x(at) > 94 else "middle")
        for at in _ticks(low, high, zone)
    ]


def _all(segment: Segment) -> list[TimePoint]:
    return [*segment.points, *(p for p in (segment.start, segment.end) if p is not None)]


def _ticks(low: datetime, high: datetime, zone: ZoneInfo) -> list[datetime]:
    """Round times in the session's zone, at the smallest step that gives few enough."""
    span = (high - low).total_seconds()
    step = next((s for s in STEPS if span / s <= MAX_TICKS), STEPS[-1])
    local = low.astimezone(zone)
    offset = local.utcoffset() or timedelta(0)
    # Whole steps of local wall time: 10:00, 10:15 … in the zone the page shows.
    wall = (local.replace(tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds()
    first = datetime.fromtimestamp((wall // step + 1) * step, tz=UTC) - offset
    ticks = []
    at = first.astimezone(UTC)
    while at < high:
        ticks.append(at)
        at += timedelta(seconds=step)
    return ticks
