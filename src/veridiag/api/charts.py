"""Evidence charts as server-side SVG (issue 17): pure functions over typed inputs, no
JavaScript and no charting library, so a page reads, prints and passes through a screen reader
as it was rendered. Colours are ``currentColor`` with CSS classes over them (``workbench.css``:
light, dark, print); every number on an axis or a marker is written by ``text/render.py``'s
``format_value``, so a chart's units read as the answer's do. Values that are no finite number
are never drawn (and counted in the description); an empty series draws an empty frame.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from markupsafe import Markup, escape
from pydantic import BaseModel

from veridiag.text.periods import period_text
from veridiag.text.render import format_value, iso

#: Plot sizes in SVG user units (the element scales to its box, ``viewBox`` keeps the shape).
WIDTH, HEIGHT = 640, 220
RIGHT, TOP, BOTTOM = 16, 12, 30
#: The left margin holds the longest value label: about this many units a character, at 11 px.
CHAR_WIDTH = 6.6
SPARK_WIDTH, SPARK_HEIGHT, SPARK_LABELS = 240, 44, 12
#: Time steps an axis may tick at, smallest first.
_TIME_STEPS = [
    timedelta(minutes=m) for m in (1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080, 43200, 525600)
]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Values this large are written in scientific form on an axis: 300 digits are no label.
_PLAIN_LIMIT = 1e12


class ChartWords(BaseModel):
    """The words a chart writes, in the page's language (``i18n.py``'s ``chart_*`` keys)."""

    baseline: str
    anomaly: str
    cited: str
    no_points: str
    points: str
    not_drawn: str
    lines: str
    peak: str
    utc: str


class CitedPoint(BaseModel):
    """A point claims quote: its time and value as the invocation stores them."""

    at: datetime
    value: float
    claim_ids: list[str]
    #: Where the (first) claim and its highlighted excerpt are.
    href: str | None = None


class MetricChart(BaseModel):
    """One metric series of one invocation, with what the page marks on it."""

    chart_id: str
    title: str
    unit: str
    points: list[tuple[datetime, float]]
    #: The asked window ``[start, end)``: the axis when there are no points (``_shown_span``).
    window: tuple[datetime, datetime] | None = None
    baseline: float | None = None
    #: Anomaly episodes, onset to end: shaded.
    anomalies: list[tuple[datetime, datetime]] = []
    cited: list[CitedPoint] = []


class CountChart(BaseModel):
    """Lines per time bucket (a log query's volume), drawn as a sparkline of bars."""

    chart_id: str
    title: str
    start: datetime
    step_seconds: int
    counts: list[int]


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _num(value: float) -> str:
    """A coordinate: one decimal, never NaN (a caller's bug would otherwise reach the page)."""
    return f"{value:.1f}" if math.isfinite(value) else "0"


def axis_value(value: float, unit: str) -> str:
    """An axis label: ``format_value``'s spelling, huge magnitudes in scientific form (with the
    unit glued or spaced as ``format_value`` writes it)."""
    if abs(value) < _PLAIN_LIMIT:
        return format_value(value, unit)
    return format_value(1.0, unit).replace("1", f"{value:.3g}", 1)


def clock(moment: datetime, span: timedelta) -> str:
    """A time on an axis or in a label, as precise as the span needs (UTC)."""
    moment = _utc(moment)
    if span <= timedelta(days=1):
        return moment.strftime("%H:%M")
    if span <= timedelta(days=180):
        return moment.strftime("%m-%d %H:%M")
    return moment.strftime("%Y-%m-%d")


def period(start: datetime, end: datetime, span: timedelta) -> str:
    """A period in a label, its ends as ``clock`` writes them — on a chart of a day or less, with
    their dates when they fall on different days (``text/periods.py``: no "23:40–00:20")."""
    if span <= timedelta(days=1):
        return period_text(_utc(start), _utc(end))
    return f"{clock(start, span)}–{clock(end, span)}"


class _Scale:
    """Value → y and time → x over the plot area; halves are subtracted so that no difference of
    two finite doubles overflows to infinity."""

    def __init__(
        self, lo: float, hi: float, t0: datetime, t1: datetime, box: tuple[float, float, float, float]
    ) -> None:
        self.lo, self.hi, self.t0, self.t1 = lo, hi, t0, t1
        self.left, self.top, self.width, self.height = box
        self.half_span = hi / 2 - lo / 2 or 0.5
        self.seconds = (t1 - t0).total_seconds() or 1.0

    def x(self, moment: datetime) -> float:
        share = (_utc(moment) - self.t0).total_seconds() / self.seconds
        return self.left + min(1.0, max(0.0, share)) * self.width

    def y(self, value: float) -> float:
        share = (value / 2 - self.lo / 2) / self.half_span
        return self.top + (1 - min(1.0, max(0.0, share))) * self.height


def value_ticks(lo: float, hi: float, count: int = 4) -> tuple[float, float, list[float]]:
    """A range that holds ``lo``..``hi`` (a constant one widened) and about ``count`` round ticks in it."""
    if hi == lo:
        pad = abs(lo) * 0.1 or 1.0
        if math.isfinite(lo - pad) and math.isfinite(hi + pad):
            lo, hi = lo - pad, hi + pad
        elif lo > 0:  # widened towards zero where the other way passes the largest float (→ inf)
            lo -= 2 * pad
        else:
            hi += 2 * pad
    raw = (hi / 2 - lo / 2) / count * 2  # halves: finite for any finite pair
    magnitude = 10.0 ** math.floor(math.log10(raw)) if raw > 0 else 0.0
    step = next((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), 10 * magnitude)
    if not (step > 0 and math.isfinite(lo / step) and math.isfinite(hi / step)):
        return lo, hi, [lo, hi]
    low, high = math.floor(lo / step) * step, math.ceil(hi / step) * step
    if not (math.isfinite(low) and math.isfinite(high)):
        low, high = lo, hi
    ticks: list[float] = []
    for index in range(count + 3):
        tick = low + index * step
        if tick > high or not math.isfinite(tick) or (ticks and tick <= ticks[-1]):
            break
        ticks.append(tick)
    return low, high, ticks or [low, high]


def time_ticks(t0: datetime, t1: datetime, most: int = 6) -> list[datetime]:
    """Round times in ``[t0, t1]``: at most ``most`` of them, on the smallest step that allows it."""
    span = t1 - t0
    step = next((s for s in _TIME_STEPS if span / s <= most), span / most)
    if step <= timedelta(0):
        return [t0]
    first = math.ceil((t0 - _EPOCH) / step)
    ticks: list[datetime] = []
    for index in range(most + 1):
        try:
            tick = _EPOCH + (first + index) * step
        except OverflowError:  # past year 9999: no more ticks to draw
            break
        if tick > t1:
            break
        ticks.append(tick)
    return ticks


def _frame(
    *, chart_id: str, title: str, description: str, size: tuple[int, int], body: Sequence[str], css: str
) -> Markup:
    """The ``<svg>`` element: an image named by its title and key numbers, ``<title>`` and
    ``<desc>`` inside for readers that ignore ``aria-label``."""
    width, height = size
    label = f"{title}: {description}"
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{css}" id="{escape(chart_id)}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}" '
        f'font-size="11" fill="currentColor">'
        f"<title>{escape(title)}</title><desc>{escape(description)}</desc>" + "".join(body) + "</svg>"
    )


def metric_svg(chart: MetricChart, words: ChartWords) -> Markup:
    """The series as a line over its window, the anomaly episodes shaded, the baseline dashed,
    each cited point ringed and labelled with its value (a link to the claim that quotes it)."""
    drawn = sorted(((_utc(t), v) for t, v in chart.points if math.isfinite(v)), key=lambda p: p[0])
    cited = [c for c in chart.cited if math.isfinite(c.value)]
    baseline = chart.baseline if chart.baseline is not None and math.isfinite(chart.baseline) else None
    shown = _shown_span(chart, drawn, cited)
    drawn = [(t, v) for t, v in drawn if shown is None or shown[0] <= t <= shown[1]]
    times = [t for t, _v in drawn] + [_utc(c.at) for c in cited] + (list(shown) if shown else [])
    values = [v for _t, v in drawn] + [c.value for c in cited] + ([baseline] if baseline is not None else [])
    description = _metric_description(chart, drawn, baseline, words)
    if times and values:
        lo, hi, ticks = value_ticks(min(values), max(values))
        labels = [axis_value(tick, chart.unit) for tick in ticks]
        left = max(40.0, CHAR_WIDTH * max(len(label) for label in labels) + 10)
        scale = _Scale(lo, hi, min(times), max(times), (left, TOP, WIDTH - left - RIGHT, HEIGHT - TOP - BOTTOM))
        body = [_plot_frame(scale), *_anomaly_marks(chart.anomalies, scale, words)]
        body += _axes(list(zip(ticks, labels, strict=True)), scale, words)
        if baseline is not None:
            body.append(_baseline_mark(baseline, chart.unit, scale, words))
        body += _series_marks(drawn, scale)
        taken: list[_Box] = []  # the labels placed so far: a later one never covers one
        body += [_cited_mark(point, chart.unit, scale, words, taken) for point in cited]
    else:
        body = [f'<text x="{WIDTH // 2}" y="{HEIGHT // 2}" text-anchor="middle">{escape(words.no_points)}</text>']
    return _frame(
        chart_id=chart.chart_id,
        title=chart.title,
        description=description,
        size=(WIDTH, HEIGHT),
        body=body,
        css="chart metric-chart",
    )


#: Context kept either side of what a chart marks (anomaly episodes, cited points), at least.
ZOOM_CONTEXT = timedelta(hours=2)


def _shown_span(
    chart: MetricChart, drawn: Sequence[tuple[datetime, float]], cited: Sequence[CitedPoint]
) -> tuple[datetime, datetime] | None:
    """The time the axis covers: the stored points' span — narrowed, like a Grafana panel zoomed
    to an incident, to the episodes and cited points with ``ZOOM_CONTEXT`` (or twice their own
    length) either side, so a 30-minute episode in a week's points is not a hairline. The asked
    window only when there are no points."""
    if not drawn:
        return (_utc(chart.window[0]), _utc(chart.window[1])) if chart.window is not None else None
    first, last = drawn[0][0], drawn[-1][0]
    marks = [(_utc(a), _utc(b)) for a, b in chart.anomalies] + [(_utc(c.at), _utc(c.at)) for c in cited]
    if not marks:
        return first, last
    start, end = min(a for a, _b in marks), max(b for _a, b in marks)
    context = max(ZOOM_CONTEXT, 2 * (end - start))
    return max(first, start - context), min(last, end + context)


def _plot_frame(scale: _Scale) -> str:
    return (
        f'<rect class="plot" x="{_num(scale.left)}" y="{TOP}" width="{_num(scale.width)}" '
        f'height="{_num(scale.height)}" fill="none" stroke="currentColor" stroke-opacity=".25"/>'
    )


def _anomaly_marks(episodes: Sequence[tuple[datetime, datetime]], scale: _Scale, words: ChartWords) -> list[str]:
    span = scale.t1 - scale.t0
    marks = []
    for onset, end in episodes:
        left, right = scale.x(onset), scale.x(end)
        marks.append(
            f'<rect class="anomaly" x="{_num(left)}" y="{TOP}" width="{_num(max(right - left, 2.0))}" '
            f'height="{_num(scale.height)}" fill="currentColor" fill-opacity=".12">'
            f"<title>{escape(words.anomaly)} {escape(period(onset, end, span))} "
            f"{escape(words.utc)}</title></rect>"
        )
    return marks


def _axes(ticks: Sequence[tuple[float, str]], scale: _Scale, words: ChartWords) -> list[str]:
    """Grid lines with their labelled values on the left, round times below, "UTC" in the corner."""
    span = scale.t1 - scale.t0
    marks = []
    for tick, label in ticks:
        level = _num(scale.y(tick))
        marks.append(
            f'<line class="grid" x1="{_num(scale.left)}" x2="{WIDTH - RIGHT}" y1="{level}" y2="{level}" '
            'stroke="currentColor" stroke-opacity=".12"/>'
            f'<text class="tick" x="{_num(scale.left - 6)}" y="{level}" text-anchor="end" '
            f'dominant-baseline="middle">{escape(label)}</text>'
        )
    for moment in time_ticks(scale.t0, scale.t1):
        marks.append(
            f'<text class="tick" x="{_num(scale.x(moment))}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
            f"{escape(clock(moment, span))}</text>"
        )
    marks.append(
        f'<text class="axis-note" x="{WIDTH - RIGHT}" y="{HEIGHT - 2}" text-anchor="end">{escape(words.utc)}</text>'
    )
    return marks


def _baseline_mark(baseline: float, unit: str, scale: _Scale, words: ChartWords) -> str:
    level = scale.y(baseline)
    said = f"{words.baseline} {format_value(baseline, unit)}"
    return (
        f'<line class="baseline" x1="{_num(scale.left)}" x2="{WIDTH - RIGHT}" y1="{_num(level)}" y2="{_num(level)}" '
        f'stroke="currentColor" stroke-dasharray="5 4" stroke-opacity=".6"><title>{escape(said)}</title></line>'
        f'<text class="baseline-label" x="{WIDTH - RIGHT - 4}" y="{_num(level - 4)}" text-anchor="end">'
        f"{escape(said)}</text>"
    )


def _series_marks(drawn: Sequence[tuple[datetime, float]], scale: _Scale) -> list[str]:
    """A line through the points; a lone point as a dot."""
    if len(drawn) == 1:
        ((moment, value),) = drawn
        return [f'<circle class="series-point" cx="{_num(scale.x(moment))}" cy="{_num(scale.y(value))}" r="3"/>']
    if not drawn:
        return []
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{_num(scale.x(moment))} {_num(scale.y(value))}"
        for i, (moment, value) in enumerate(drawn)
    )
    return [
        f'<path class="series" d="{path}" fill="none" stroke="currentColor" stroke-width="1.5" '
        'stroke-linejoin="round"/>'
    ]


def _cited_mark(point: CitedPoint, unit: str, scale: _Scale, words: ChartWords, taken: list[_Box]) -> str:
    """A ring with the value above it; ``data-time`` / ``data-value`` say which stored point it is."""
    across, level = scale.x(point.at), scale.y(point.value)
    value = format_value(point.value, unit)
    claims = ", ".join(point.claim_ids)
    said = f"{claims}: {value} {clock(point.at, scale.t1 - scale.t0)} {words.utc}"
    marker = (
        f'<circle class="cited" cx="{_num(across)}" cy="{_num(level)}" r="5" fill="none" stroke="currentColor" '
        f'stroke-width="2" data-time="{iso(point.at)}" data-value="{point.value!r}" '
        f'data-claims="{escape(claims)}"><title>{escape(said)}</title></circle>'
        f"{_cited_label(across, level, value, taken)}"
    )
    return f'<a href="{escape(point.href)}">{marker}</a>' if point.href else marker


#: A label's box: left, top, right, bottom (SVG units).
_Box = tuple[float, float, float, float]
#: How far a label moves from a label it would cover, and how often it tries.
_LABEL_STEP, _LABEL_TRIES = 13.0, 4


def _cited_label(across: float, level: float, value: str, taken: list[_Box]) -> str:
    """The value away from the line: above a point in the plot's upper half, below one in its
    lower half (a dip's label would hide the dip), beside it where that leaves the plot. Two
    cited points close together would print their values over each other ("88.088.51%"): a
    label moves a line further away until it covers none placed before; where none is free, it
    is left out (the ring's title, the caption and the claim still say the value)."""
    bottom = HEIGHT - BOTTOM
    upper = level < (TOP + bottom) / 2
    above, below = (across, level - 9, "middle"), (across, level + 17, "middle")
    if upper and level - 9 >= TOP + 9:
        first, other = above, below
    elif not upper and level + 17 <= bottom:
        first, other = below, above
    else:
        beside = (across + 8, level + 4, "start") if across < WIDTH / 2 else (across - 8, level + 4, "end")
        first, other = beside, (below if upper else above)
    width = CHAR_WIDTH * len(value)
    # the first place, further the same way, then the point's other side and further that way
    tries = [(first, -1.0 if first is above or (first is not below and not upper) else 1.0)]
    tries.append((other, -1.0 if other is above else 1.0))
    for (x, y0, anchor), away in tries:
        for n in range(_LABEL_TRIES):
            y = y0 + away * n * _LABEL_STEP
            left = x - width / 2 if anchor == "middle" else (x if anchor == "start" else x - width)
            box = (left, y - 10, left + width, y + 2)
            if box[1] >= TOP and box[3] <= bottom and not any(_overlap(box, b) for b in taken):
                taken.append(box)
                where = f'x="{_num(x)}" y="{_num(y)}" text-anchor="{anchor}"'
                return f'<text class="cited-label" {where}>{escape(value)}</text>'
    return ""


def _overlap(a: _Box, b: _Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _metric_description(
    chart: MetricChart, drawn: list[tuple[datetime, float]], baseline: float | None, words: ChartWords
) -> str:
    """The key numbers a reader of the picture gets: span, peak, baseline, episodes, cited points."""
    parts = []
    if drawn:
        span = drawn[-1][0] - drawn[0][0]
        peak_at, peak = max(drawn, key=lambda p: p[1])
        parts.append(
            f"{len(drawn)} {words.points} {period(drawn[0][0], drawn[-1][0], span)} {words.utc}; "
            f"{words.peak} {format_value(peak, chart.unit)} {clock(peak_at, span)}"
        )
    else:
        parts.append(words.no_points)
        span = timedelta(0)
    if not_drawn := len(chart.points) - len(drawn):
        parts.append(f"{not_drawn} {words.not_drawn}")
    if baseline is not None:
        parts.append(f"{words.baseline} {format_value(baseline, chart.unit)}")
    for onset, end in chart.anomalies:
        parts.append(f"{words.anomaly} {period(onset, end, span)}")
    for point in chart.cited:
        if math.isfinite(point.value):
            claims = ", ".join(point.claim_ids)
            value = format_value(point.value, chart.unit)
            parts.append(f"{words.cited} ({claims}) {value} {clock(point.at, span)}")
    return "; ".join(parts)


def count_svg(chart: CountChart, words: ChartWords) -> Markup:
    """Bars of lines per bucket, the tallest bucket named in the description."""
    counts = [max(0, n) for n in chart.counts]
    step = timedelta(seconds=max(1, chart.step_seconds))
    start = _utc(chart.start)
    span = step * max(1, len(counts))
    total, most = sum(counts), max(counts, default=0)
    body = [
        f'<line class="axis" x1="0" x2="{SPARK_WIDTH}" y1="{SPARK_HEIGHT - 0.5}" y2="{SPARK_HEIGHT - 0.5}" '
        'stroke="currentColor" stroke-opacity=".3"/>'
        f'<text class="tick" x="0" y="{SPARK_HEIGHT + SPARK_LABELS - 2}" font-size="10">'
        f"{escape(clock(start, span))}</text>"
        f'<text class="tick" x="{SPARK_WIDTH}" y="{SPARK_HEIGHT + SPARK_LABELS - 2}" font-size="10" '
        f'text-anchor="end">{escape(clock(start + span, span))} {escape(words.utc)}</text>'
    ]
    width = SPARK_WIDTH / max(1, len(counts))
    for index, count in enumerate(counts):
        if not count:
            continue
        height = max(1.0, (SPARK_HEIGHT - 2) * count / most)
        at = start + index * step
        body.append(
            f'<rect class="bar" x="{_num(index * width)}" y="{_num(SPARK_HEIGHT - height)}" '
            f'width="{_num(max(width - 0.5, 0.5))}" height="{_num(height)}">'
            f"<title>{escape(period(at, at + step, span))} {escape(words.utc)}: "
            f"{count} {escape(words.lines)}</title></rect>"
        )
    description = f"{total} {words.lines} {period(start, start + span, span)} {words.utc}"
    if most:
        top = counts.index(most)
        description += f"; {words.peak} {most} {words.lines} {clock(start + top * step, span)}"
    return _frame(
        chart_id=chart.chart_id,
        title=chart.title,
        description=description,
        size=(SPARK_WIDTH, SPARK_HEIGHT + SPARK_LABELS),
        body=body,
        css="chart sparkline",
    )
