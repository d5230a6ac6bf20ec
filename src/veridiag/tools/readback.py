"""The lines ``tools/render.py`` writes, read back: the times, counts and values one line of a
stored tool output states.

A claim rests on lines of the stored output, so a page that has to place a claim in time (the
incident timeline) reads the times the stored line its excerpt matched states — the evidence
itself, never the claim's own words. Since migration 0009 an invocation keeps typed records of
those lines beside its text (``tools/drawn.py``), and the pages read those; this module reads
the text of an invocation stored before them (and tells a log line's own zoned time when the
records are written). No library parses this grammar (it is ours); each pattern mirrors one
writer in ``tools/render.py``, and ``tests/test_readback.py`` holds every record's ``line`` to
the record it was written from, ``tests/test_drawn.py`` the stored records to this reading.

A line that fits no pattern, or a time without a zone (a raw log line of an imported file
written in local time), reads as ``None``: no time is better than a guessed one.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

#: A moment as ``text/render.py``'s ``iso`` writes it.
_ISO = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z"
#: A log line's own leading time: ISO 8601 with a zone (``Z``, ``+08:00``, ``+0800``).
_LOG_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})(?=\s|$)")

# metrics_output: "anomaly 1: <onset> – <end> (29 points, 28 min) up; peak 37 connections at <t>;
# expected 0 connections; ×4.17; score 12.8"
_ANOMALY = re.compile(
    rf"anomaly \d+: (?P<onset>{_ISO}) – (?P<end>{_ISO}) \(\d+ points?, [^)]*\) (?P<direction>up|down); "
    rf"peak (?P<peak>.+?) at (?P<peak_at>{_ISO}); expected (?P<expected>.+?)(?:; ×(?P<factor>[\d.]+))?; score [\d.]+"
)
# metrics_output's point_line: "<t> 5267ms"
_POINT = re.compile(rf"(?P<at>{_ISO}) (?P<value>\S.*)")
# metrics_output's ASKED_LINE: "at the moment asked <t>: nearest point <t> 938ms", read as that point
_ASKED = re.compile(rf"at the moment asked {_ISO}: nearest point (?P<point>.+)")
# _increases: "increases per 1m: 3 restarts in total, 3 steps rose: +1 at <t>, +1 at <t>[, and 2 more steps]"
_INCREASES = re.compile(r"increases per [^:]+: .+ steps? rose: (?P<steps>.+)")
_STEP = re.compile(rf"\+(?P<by>[^ ,]+) at (?P<at>{_ISO})")
# logs_output's template row: "  451× ERROR <first> – <last> order=<*> ERR_TIMEOUT …", with
# " service=<name>" after the level when the search spanned every service
_TEMPLATE = re.compile(
    rf" {{2}}(?P<count>\d+)× (?P<level>\S+)(?: service=(?P<service>\S+))? (?P<first>{_ISO}) – (?P<last>{_ISO})"
    r" (?P<template>.+)"
)
# logs_output's bursts: "bursts: <first> – <last> (120 lines); <first> – <last> (3 lines)"
_BURSTS = re.compile(r"bursts: (?P<bursts>.+)")
_BURST = re.compile(rf"(?P<first>{_ISO}) – (?P<last>{_ISO}) \((?P<count>\d+) lines?\)")
# a template row's example ("     e.g. <line>") or a line as stored
_EXAMPLE = re.compile(r" {5}e\.g\. ")
# change_line: "<t> payment-service config: applied config v42 …[ (version v42)]"
_CHANGE = re.compile(rf"(?P<at>{_ISO}) (?P<service>\S+) (?P<kind>[^:\s]+): (?P<description>.+)")


class _Read(BaseModel):
    model_config = ConfigDict(frozen=True)


class AnomalyLine(_Read):
    """A metric anomaly episode: onset to end, its peak (value as written) and when."""

    kind: Literal["anomaly"] = "anomaly"
    onset: datetime
    end: datetime
    direction: Literal["up", "down"]
    peak: str
    peak_at: datetime
    expected: str
    factor: str | None


class PointLine(_Read):
    """One metric point: a moment and its value as written."""

    kind: Literal["point"] = "point"
    at: datetime
    value: str


class StepLine(_Read):
    kind: Literal["step"] = "step"
    at: datetime
    by: str


class IncreasesLine(_Read):
    """A sparse counter's increases: the steps it grew in (those the line lists)."""

    kind: Literal["increases"] = "increases"
    steps: tuple[StepLine, ...]


class TemplateLine(_Read):
    """A log template in the window: how many lines, first and last, the template."""

    kind: Literal["template"] = "template"
    count: int
    level: str
    service: str | None = None
    first: datetime
    last: datetime
    template: str


class BurstLine(_Read):
    kind: Literal["burst"] = "burst"
    first: datetime
    last: datetime
    count: int


class BurstsLine(_Read):
    kind: Literal["bursts"] = "bursts"
    bursts: tuple[BurstLine, ...]


class LogLine(_Read):
    """A log line (or a template's example) whose own leading time carries a zone."""

    kind: Literal["log"] = "log"
    at: datetime
    #: The time as the line writes it (``2026-07-07T10:01:02.000Z``).
    stamp: str


class ChangeLine(_Read):
    kind: Literal["change"] = "change"
    at: datetime
    service: str
    change: str
    description: str


LineFacts = Annotated[
    AnomalyLine | PointLine | IncreasesLine | TemplateLine | BurstsLine | LogLine | ChangeLine,
    Field(discriminator="kind"),
]


def read_line(tool: str, line: str) -> LineFacts | None:
    """What one line of ``tool``'s stored output states in time; None for a line without a
    moment (totals, statistics, the request line) or one no writer of that tool produces."""
    if tool == "query_metrics":
        return _metrics_line(line)
    if tool == "query_logs":
        return _logs_line(line)
    if tool == "query_changes" and (found := _CHANGE.fullmatch(line)):
        return ChangeLine(
            at=_moment(found["at"]),
            service=found["service"],
            change=found["kind"],
            description=found["description"],
        )
    return None


def _metrics_line(line: str) -> LineFacts | None:
    if found := _ANOMALY.fullmatch(line):
        return AnomalyLine(
            onset=_moment(found["onset"]),
            end=_moment(found["end"]),
            direction="up" if found["direction"] == "up" else "down",
            peak=found["peak"],
            peak_at=_moment(found["peak_at"]),
            expected=found["expected"],
            factor=found["factor"],
        )
    if found := _INCREASES.fullmatch(line):
        steps = tuple(StepLine(at=_moment(m["at"]), by=m["by"]) for m in _STEP.finditer(found["steps"]))
        return IncreasesLine(steps=steps) if steps else None
    if asked := _ASKED.fullmatch(line):
        line = asked["point"]
    if found := _POINT.fullmatch(line):
        return PointLine(at=_moment(found["at"]), value=found["value"])
    return None


def _logs_line(line: str) -> LineFacts | None:
    if found := _TEMPLATE.fullmatch(line):
        return TemplateLine(
            count=int(found["count"]),
            level=found["level"],
            service=found["service"],
            first=_moment(found["first"]),
            last=_moment(found["last"]),
            template=found["template"],
        )
    if found := _BURSTS.fullmatch(line):
        bursts = tuple(
            BurstLine(first=_moment(m["first"]), last=_moment(m["last"]), count=int(m["count"]))
            for m in _BURST.finditer(found["bursts"])
        )
        return BurstsLine(bursts=bursts) if bursts else None
    text = line[m.end() :] if (m := _EXAMPLE.match(line)) else line
    if (stamp := _LOG_STAMP.match(text)) and (at := _zoned(stamp.group())) is not None:
        return LogLine(at=at, stamp=stamp.group())
    return None


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _zoned(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.replace(",", "."))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None
