"""Metrics the way Prometheus users ask: the kind of a metric, the PromQL it deserves, and a
counter's rate computed as Prometheus computes it.

A counter's raw value only says how long the process has been up; what it means is how it
grows. A busy counter (requests, bytes) reads as its rate, ``rate(x_total{…}[5m])``; a sparse
one (restarts, OOM kills, failed jobs), whose steps add a few whole events, reads as its
increase per step — "+1 at 12:01" — as Prometheus users ask ``increase()`` for it. A latency
histogram's buckets mean nothing one by one; what they mean is a quantile,
``histogram_quantile(0.99, sum by (le) (rate(x_bucket{…}[5m])))``. Never a counter averaged
as if it were a gauge; the output says which kind it took the metric for and why
(Prometheus' metadata, else the naming conventions), and how it shows it and why. Both
backends decide and compute with this module (:func:`counter_rate`, :func:`at_steps`,
:func:`step_increases`), so the demo's counters read the same on either.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import replace as copy_with
from datetime import datetime, timedelta
from itertools import accumulate, pairwise
from typing import Literal, NamedTuple

from veridiag.contracts.json import JsonValue

MetricKind = Literal["counter", "gauge", "histogram", "summary"]
CounterFunction = Literal["rate", "increase"]

#: The range a rate looks back over: 5 minutes, the usual four scrapes of a 1m interval at least.
RATE_RANGE_SECONDS = 300
#: How old a sample may be and still give a raw series' value at an instant (Prometheus' default).
LOOKBACK_SECONDS = 300
#: A counter every step of which adds fewer whole events than this reads as events (restarts,
#: OOM kills, failed jobs), shown as its increase per step. Measured (CHANGELOG): the demo's
#: restarts add 0–1 a step; a real Prometheus' own event counters 1–7 at 1m steps, its byte,
#: allocation, sample and CPU counters hundreds to millions, or fractions.
SPARSE_EVENTS = 10
DEFAULT_QUANTILE = 0.99

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
#: The naming conventions (prometheus.io/docs/practices/naming), the fallback when metadata is silent.
_COUNTER_SUFFIXES = ("_total", "_count", "_sum")
_BUCKET = "_bucket"
_KINDS: dict[str, MetricKind] = {
    "counter": "counter",
    "gauge": "gauge",
    "histogram": "histogram",
    "summary": "summary",
}


class PromQLError(ValueError):
    """A name or value that cannot be written into PromQL safely."""


@dataclass(frozen=True)
class KindFound:
    """What kind a metric is taken for and why, as the tool output states it."""

    kind: MetricKind
    #: ``metadata``: Prometheus' ``/api/v1/metadata``; ``name``: the naming conventions;
    #: ``values``: the stored values overruling the name (``kind_from_values``).
    source: Literal["metadata", "name", "values"]
    reason: str


def kind_from_name(metric: str) -> KindFound:
    """``_total`` / ``_count`` / ``_sum`` are counters, ``_bucket`` a histogram, the rest gauges."""
    if metric.endswith(_BUCKET):
        return KindFound("histogram", "name", f"name ends in {_BUCKET}")
    for suffix in _COUNTER_SUFFIXES:
        if metric.endswith(suffix):
            return KindFound("counter", "name", f"name ends in {suffix}")
    return KindFound("gauge", "name", "name has no counter or histogram suffix")


#: A cumulative counter falls only when its process restarts. A series named like one that
#: falls at more than this share of its steps counts something per interval instead —
#: CloudWatch's ``RequestCount`` (a sum per period), a CSV of requests per 5 minutes — and a
#: rate of it (each fall read as a restart) states numbers the data does not hold.
COUNTER_FALL_SHARE = 0.25
#: Fewer steps than this say too little to overrule the name.
COUNTER_FALL_STEPS = 12


def kind_from_values(found: KindFound, values: Sequence[float]) -> KindFound:
    """``found``, unless it is a counter by name whose ``values`` (in time order) are not
    cumulative: then a gauge, and the reason says why. Metadata is never overruled."""
    if found.kind != "counter" or found.source != "name" or len(values) <= COUNTER_FALL_STEPS:
        return found
    falls = sum(1 for before, after in pairwise(values) if after < before)
    share = falls / (len(values) - 1)
    if share <= COUNTER_FALL_SHARE:
        return found
    return KindFound("gauge", "values", f"{found.reason}, but it falls at {share:.0%} of its steps: not cumulative")


def metadata_names(metric: str) -> list[str]:
    """The metric families ``metric`` may belong to, most specific first (``x_bucket`` → ``x``)."""
    names = [metric]
    for suffix in (*_COUNTER_SUFFIXES, _BUCKET):
        if metric.endswith(suffix) and len(metric) > len(suffix):
            names.append(metric.removesuffix(suffix))
    return names


def kind_from_metadata(metric: str, metadata: Mapping[str, JsonValue]) -> KindFound | None:
    """The kind Prometheus' metadata gives ``metric`` (or its family); None when it gives none
    we can use (no entry, ``unknown``, or entries that disagree)."""
    for name in metadata_names(metric):
        entries = metadata.get(name)
        types = {e.get("type") for e in entries if isinstance(e, dict)} if isinstance(entries, list) else set()
        if len(types) != 1:
            continue
        declared = str(types.pop())
        kind = _KINDS.get(declared)
        if kind is None:
            return None
        if name != metric and kind in ("histogram", "summary"):
            # ``x_count`` / ``x_sum`` of a histogram or summary are counters; ``x_bucket`` buckets
            kind = "histogram" if metric.endswith(_BUCKET) else "counter"
        return KindFound(kind, "metadata", f"Prometheus metadata: {name} is a {declared}")
    return None


def label_literal(value: str) -> str:
    """``value`` as a PromQL (or LogQL) double-quoted string literal.

    PromQL strings take Go's escapes (``\\"``, ``\\\\``, ``\\n``, ``\\uXXXX`` …). JSON's string
    escapes are a subset of them, so the standard library's JSON encoder writes a literal
    PromQL reads back exactly; ``ensure_ascii=False`` keeps other characters as UTF-8, since Go
    refuses the surrogate pairs JSON would use for characters beyond the BMP. A lone surrogate
    cannot be sent as UTF-8 at all, so it is refused here rather than mangled."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise PromQLError(f"label value {value!r} is not valid Unicode text") from None
    return json.dumps(value, ensure_ascii=False)


def selector(metric: str, matchers: Mapping[str, str]) -> str:
    """``metric{label="value",…}``, the name and label names checked, each value escaped."""
    if not _METRIC_NAME.fullmatch(metric):
        raise PromQLError(f"{metric!r} is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)")
    for name in matchers:
        if not _LABEL_NAME.fullmatch(name):
            raise PromQLError(f"{name!r} is not a Prometheus label name")
    return metric + "{" + ",".join(f"{name}={label_literal(value)}" for name, value in matchers.items()) + "}"


def range_seconds(step_seconds: int) -> int:
    """A rate's range: 5 minutes, or the step when points are further apart (none is skipped)."""
    return max(RATE_RANGE_SECONDS, step_seconds)


def duration(seconds: int) -> str:
    return f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"


@dataclass(frozen=True)
class Shown:
    """How a metric's values are made from it, the same whichever backend answers."""

    kind: KindFound
    #: ``rate`` / ``increase`` for a counter (None: not decided yet, see :meth:`decide`), the
    #: quantile for a histogram or summary
    function: CounterFunction | None = None
    quantile: float = DEFAULT_QUANTILE
    range_seconds: int = RATE_RANGE_SECONDS
    step_seconds: int = 60
    #: Why a counter is shown so: asked for, or what its steps add.
    because: str = ""

    @property
    def increase(self) -> bool:
        return self.kind.kind == "counter" and self.function == "increase"

    @property
    def how(self) -> str:
        """``rate[5m]``, ``increase[1m]`` (per step), ``p99 of the buckets over 5m``, ``quantile
        0.99``; empty for a gauge."""
        window = duration(self.range_seconds)
        if self.kind.kind == "counter":
            return f"increase[{duration(self.step_seconds)}]" if self.increase else f"rate[{window}]"
        if self.kind.kind == "histogram":
            return f"p{self.quantile * 100:g} of the buckets over {window}"
        return f"quantile {self.quantile:g}" if self.kind.kind == "summary" else ""

    def decide(self, increases: Sequence[float]) -> Shown:
        """A counter not asked for one way or the other: its increase per step when every step
        of ``increases`` adds a few whole events (fewer than ``SPARSE_EVENTS``), else its rate."""
        if self.kind.kind != "counter" or self.function is not None:
            return self
        busy = next((v for v in increases if not v.is_integer() or v >= SPARSE_EVENTS), None)
        if busy is None:
            most = max(increases, default=0.0)
            return copy_with(self, function="increase", because=f"each step adds a few whole events (at most {most:g})")
        return copy_with(self, function="rate", because=f"a step adds {busy:g}: more than a few whole events")

    def unit(self, unit: str) -> str:
        """A counter's rate is per second of what it counts."""
        per_second = self.kind.kind == "counter" and not self.increase
        return f"{unit}/s" if per_second else unit

    def about(self) -> dict[str, str]:
        """The request line's and retrieval details' words for it."""
        words = {"kind": self.kind.kind, "kind_from": self.kind.reason, "shown": self.how}
        return {**words, "shown_from": self.because} if self.because else words

    def promql(self, metric: str, matchers: Mapping[str, str]) -> str:
        """``rate(x[5m])`` for a counter — its raw values when shown as its increase per step,
        which :func:`step_increases` makes (``increase()`` would extrapolate one restart to 1.25
        or miss it) —, ``histogram_quantile(q, sum by (le) (rate(x_bucket[5m])))`` for a
        histogram, the ``quantile`` series of a summary, a gauge as is."""
        window = duration(self.range_seconds)
        kind = self.kind.kind
        if kind == "counter" and not self.increase:
            return f"rate({selector(metric, matchers)}[{window}])"
        if kind == "histogram":
            buckets = metric if metric.endswith(_BUCKET) else metric + _BUCKET
            return f"histogram_quantile({self.quantile:g}, sum by (le) (rate({selector(buckets, matchers)}[{window}])))"
        if kind == "summary":
            return selector(metric, {**matchers, "quantile": f"{self.quantile:g}"})
        return selector(metric, matchers)


class ShownSeries(NamedTuple):
    """A series as ``query_metrics`` shows it: its unit as shown, its points, and whether those
    are counts of whole events per step (a sparse counter's increases: restarts, OOM kills)."""

    unit: str
    points: list[tuple[datetime, float]]
    events: bool


def shown(
    kind: KindFound, *, step_seconds: int, function: CounterFunction | None = None, quantile: float | None = None
) -> Shown:
    """How ``kind`` is shown; a counter's ``function`` as asked, else decided on its data (:meth:`Shown.decide`)."""
    counter = kind.kind == "counter"
    return Shown(
        kind,
        function=function if counter else None,
        quantile=DEFAULT_QUANTILE if quantile is None else quantile,
        range_seconds=range_seconds(step_seconds),
        step_seconds=step_seconds,
        because="asked for" if counter and function else "",
    )


def at_steps(
    points: Sequence[tuple[datetime, float]], *, start: datetime, end: datetime, step_seconds: int
) -> list[tuple[datetime, float]]:
    """A raw series at the instants ``start``, ``start + step``, … before ``end``, as a Prometheus
    range query reads it: the newest sample at or before each instant, none when that is more
    than ``LOOKBACK_SECONDS`` old. ``points`` in time order."""
    out: list[tuple[datetime, float]] = []
    step, lookback = timedelta(seconds=step_seconds), timedelta(seconds=LOOKBACK_SECONDS)
    index, latest = 0, None
    moment = start
    while moment < end:
        while index < len(points) and points[index][0] <= moment:
            latest = points[index]
            index += 1
        if latest is not None and moment - latest[0] <= lookback:
            out.append((moment, latest[1]))
        moment += step
    return out


def step_increases(points: Sequence[tuple[datetime, float]], *, since: datetime) -> list[tuple[datetime, float]]:
    """A counter's increase at each of its step instants from ``since`` on: what it gained since
    the instant before (a drop is a reset, after which all of its value is new, as
    Prometheus counts it). Whole events stay whole, each counted once — unlike
    ``increase(x[5m])`` at a 1m step, which counts a restart in five points, extrapolated."""
    return [
        (moment, value - before if value >= before else value)
        for (_before_at, before), (moment, value) in pairwise(points)
        if moment >= since
    ]


def counter_rate(
    points: Sequence[tuple[datetime, float]], *, range_seconds: int, per_second: bool = True
) -> list[tuple[datetime, float]]:
    """``rate`` (or ``increase``) of a counter at each of its points, as Prometheus 2 computes it
    (``extrapolatedRate`` in promql/functions.go): over the closed range ``[t - range, t]``,
    counter resets added back, extrapolated toward the range's ends (never below zero), no
    value from fewer than two samples. Written here because the embedded store has no PromQL
    engine; the CI compares it with a real Prometheus on the demo's counter."""
    times = [t.timestamp() for t, _v in points]
    values = [v for _t, v in points]
    # resets[i]: what the counter lost at point i (added back, as Prometheus does), summed so far
    resets = list(accumulate((values[i - 1] if i and values[i] < values[i - 1] else 0.0) for i in range(len(values))))
    out: list[tuple[datetime, float]] = []
    first = 0
    for last, (moment, value) in enumerate(points):
        range_start = times[last] - range_seconds
        while times[first] < range_start:
            first += 1
        samples = last - first + 1
        if samples < 2:
            continue
        result = value - values[first] + resets[last] - resets[first]
        sampled = times[last] - times[first]
        average = sampled / (samples - 1)
        to_start = times[first] - range_start
        if result > 0 and values[first] >= 0:
            to_start = min(to_start, sampled * (values[first] / result))  # a counter starts at zero
        threshold = average * 1.1
        extrapolated = sampled + (to_start if to_start < threshold else average / 2)
        # the range ends at this point: nothing to extrapolate at the end
        factor = extrapolated / sampled / (range_seconds if per_second else 1)
        rate = result * factor
        if math.isfinite(rate):
            out.append((moment, rate))
    return out
