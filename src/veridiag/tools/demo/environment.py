"""The demo day, generated from its validated files: log lines, per-minute metric points and
the change feed.

Every value is drawn from the environment's seed in a fixed order — the environment's patterns
and series first, then each incident's in load order — so every install diagnoses the same day,
evals and tests can quote exact lines, and an added incident leaves the lines before it alone.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from veridiag.tools.demo.schema import (
    Counter,
    EnvironmentFile,
    IncidentFile,
    Line,
    LogPattern,
    Placeholder,
    Series,
    Shape,
)


@dataclass(frozen=True)
class LogLine:
    ts: datetime
    service: str
    level: str
    line: str
    #: The logger and the message after it ("[thread] Logger - message"): what templates are mined from.
    component: str = ""
    message: str = ""


@dataclass(frozen=True)
class ChangeEvent:
    ts: datetime
    service: str
    kind: str
    description: str


@dataclass(frozen=True)
class MetricPoint:
    service: str
    metric: str
    unit: str
    ts: datetime
    value: float


_DEMO_LINE = re.compile(r"^\[[^\]]*\]\s+(?:(\S+)\s+-\s+)?(.*)$")


def _parts(text: str) -> tuple[str, str]:
    """(component, message) of a demo line's text; the demo writes "[thread] Logger - message"
    or "[thread] message"."""
    match = _DEMO_LINE.match(text)
    return (match.group(1) or "", match.group(2)) if match else ("", text)


def _format(ts: datetime, service: str, level: str, text: str) -> str:
    return f"{ts.strftime('%Y-%m-%dT%H:%M:%S')}.{ts.microsecond // 1000:03d}Z {level:<5} {service} {text}"


def _filler(template: str, placeholders: Mapping[str, Placeholder]) -> Callable[[random.Random], str]:
    """Fills ``template``: placeholders in the order they are declared, each occurrence with a
    fresh value, left to right (the order the demo's data depends on)."""
    used = [(f"{{{name}}}", template.count(f"{{{name}}}"), value) for name, value in placeholders.items()]
    used = [(token, count, value) for token, count, value in used if count]

    def fill(rng: random.Random) -> str:
        out = template
        for token, count, value in used:
            for _ in range(count):
                out = out.replace(token, value.draw(rng), 1)
        return out

    return fill


@dataclass(frozen=True)
class DemoEnvironment:
    """The shop's ordinary day and its incidents, in load order (validated by the loader)."""

    shop: EnvironmentFile
    incidents: tuple[IncidentFile, ...]

    @property
    def start(self) -> datetime:
        return self.shop.day.start

    @property
    def end(self) -> datetime:
        """The environment's clock: questions about "today" or "since 10:00" mean this day."""
        return self.shop.day.end

    def at(self, clock: time) -> datetime:
        """A time of day on the demo day."""
        return self.start.replace(hour=clock.hour, minute=clock.minute, second=clock.second)

    def span(self, window: tuple[time, time] | None) -> tuple[datetime, datetime]:
        """``[start, end)`` of a window; the whole day when None."""
        return (self.at(window[0]), self.at(window[1])) if window else (self.start, self.end)

    def series(self) -> list[Series]:
        return [*self.shop.series, *(s for incident in self.incidents for s in incident.series)]

    def logs(self) -> list[LogLine]:
        """Every log line of the day, sorted by time."""
        rng = random.Random(self.shop.seed)
        patterns: list[tuple[LogPattern, tuple[datetime, datetime], Mapping[str, Placeholder]]] = [
            (pattern, self.span(pattern.window), self.shop.placeholders) for pattern in self.shop.logs
        ]
        for incident in self.incidents:
            values = {**self.shop.placeholders, **incident.placeholders}
            patterns += [(p, self.span(p.window or incident.window), values) for p in incident.logs]
        lines: list[LogLine] = []
        for pattern, (start, end), placeholders in patterns:
            fill = _filler(pattern.template, placeholders)
            for minute in _minutes(start, end):
                count = int(pattern.per_minute) + (1 if rng.random() < pattern.per_minute % 1 else 0)
                for _ in range(count):
                    ts = minute + timedelta(milliseconds=rng.randint(0, 59_999))
                    lines.append(self._line(ts, pattern.service, pattern.level, fill(rng)))
        for incident in self.incidents:
            single: list[Line] = [*incident.lines, *incident.changes]
            lines += [self._line(self.at(x.at), x.service, x.level, x.text) for x in single]
        lines.sort(key=lambda line: (line.ts, line.service, line.line))
        return lines

    @staticmethod
    def _line(ts: datetime, service: str, level: str, text: str) -> LogLine:
        return LogLine(ts, service, level, _format(ts, service, level, text), *_parts(text))

    def changes(self) -> list[ChangeEvent]:
        """The day's deploys, configuration changes and jobs, as a change feed would record them."""
        events = [
            ChangeEvent(self.at(change.at), change.service, change.kind, _parts(change.text)[1])
            for incident in self.incidents
            for change in incident.changes
        ]
        return sorted(events, key=lambda event: event.ts)

    def metrics(self) -> list[MetricPoint]:
        """Per-minute points for every series; an incident's shape replaces the baseline in its window,
        a counter from its window's start to the end of the day."""
        rng = random.Random(self.shop.seed + 1)
        shaped: dict[tuple[str, str], list[tuple[tuple[datetime, datetime], Shape]]] = {}
        for incident in self.incidents:
            for item in incident.metrics:
                window = self.span(item.window or incident.window)
                shaped.setdefault((item.service, item.metric), []).append((window, item.shape))
        points: list[MetricPoint] = []
        for series in self.series():
            shapes = shaped.get((series.service, series.metric), [])
            counters = [(window, shape) for window, shape in shapes if isinstance(shape, Counter)]
            for minute in _minutes(self.start, self.end):
                value = rng.uniform(*series.baseline)
                for (start, end), shape in shapes:
                    if start <= minute < end and not isinstance(shape, Counter):
                        value = shape.value((minute - start) / (end - start), (start, end), rng)
                # A counter holds its count after its window (a drop would read as a reset), and
                # the counters of one series add up, whichever incident each belongs to.
                if any(minute >= window[0] for window, _counter in counters):
                    value = float(sum(counter.count(minute, window) for window, counter in counters))
                value = max(0.0, value)
                rounded = round(value, series.decimals) if series.decimals else float(math.floor(value + 0.5))
                points.append(MetricPoint(series.service, series.metric, series.unit, minute, rounded))
        return points


def _minutes(start: datetime, end: datetime) -> Iterator[datetime]:
    minute = start
    while minute < end:
        yield minute
        minute += timedelta(minutes=1)
