"""What a measure was (``Intent.kind == "value"``: "what was order-service's p99 latency at 15:20?",
"支付服务的 CPU 是多少"), said first: the metric asked about, of the service asked about, at the
moment asked (the newest point of the period without one), and the period's peak — each figure
quoted from the ``query_metrics`` output that shows it.

Which metric: one a word of the question names by a part of its name ("lock waits"), else one
of the kind its words speak of (p99 latency: a latency metric, the statistic named first). None
found, or no point near the moment: no such sentence (fail closed) — the answer goes on as a
"why" would.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from veridiag.agents.offline import focus as focusing
from veridiag.agents.offline.findings import Findings
from veridiag.analysis.signatures import family_of
from veridiag.text.render import format_value
from veridiag.tools.records import MetricEvidence
from veridiag.tools.results import ToolCallResult

#: A point this far from the moment asked is no value "at" it.
NEAREST = timedelta(minutes=5)
#: A point line of ``query_metrics``' "points:" section: the ISO time, a space, the value as shown.
_POINT = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?Z) (\S.*)$")
_STATISTIC = re.compile(r"\bp\d{2,3}\b|\b(?:avg|mean|max|min|median)\b", re.IGNORECASE)


def asked_metric(question: str, kinds: set[str], metrics: Sequence[str], service: str = "") -> str | None:
    """The metric of ``service`` whose value is asked: the one the question names most parts of
    ("threads" → mysql_threads_running), else one of the kind asked — of those, one holding the
    statistic the question names (p99)."""
    scored = [(len(focusing.metric_words(question, m, service)), m) for m in metrics]
    most = max((count for count, _m in scored), default=0)
    named = [m for count, m in scored if most and count == most]
    statistics = {s.lower() for s in _STATISTIC.findall(question)}
    candidates = named or [m for m in metrics if family_of(m).id in kinds]
    # "X 的 p99 是多少": the statistic alone names the metrics that hold it
    candidates = candidates or [m for m in metrics if any(s in m.lower() for s in statistics)]
    if not candidates:
        return None
    return next((m for m in candidates if any(s in m.lower() for s in statistics)), candidates[0])


def point_line(text: str, at: datetime | None) -> tuple[datetime, str, str] | None:
    """The point the output shows nearest ``at`` (within ``NEAREST``; the newest without one): its
    time, its line as written, and its value as written. The line is quoted verbatim, so it is
    found in the output (our own format: "points:" then one "TIME VALUE" line a point)."""
    points: list[tuple[datetime, str, str]] = []
    listing = False
    for line in text.splitlines():
        if line.strip() == "points:":
            listing = True
            continue
        match = _POINT.match(line) if listing else None
        if match is None:
            listing = listing and bool(line.strip())  # the listing ends at a blank line
            continue
        points.append((datetime.fromisoformat(match[1].replace("Z", "+00:00")), line, match[2]))
    if not points:
        return None
    if at is None:
        return points[-1]
    nearest = min(points, key=lambda p: abs((p[0] - at).total_seconds()))
    return nearest if abs(nearest[0] - at) <= NEAREST else None


def answer_value(findings: Findings, result: ToolCallResult, series: MetricEvidence, at: datetime | None) -> bool:
    """One answering claim: the value at the moment (or the newest), and the period's peak."""
    found = point_line(result.output.text or "", at)
    if found is None:
        return False
    moment, line, shown = found
    # a moment of a period across days is dated, whatever the clock of the period chosen
    clock = findings.clock.over(series.start, series.end)
    text = findings.say(
        "value_at" if at is not None else "value_latest",
        service=series.service,
        metric=series.metric,
        at=clock(moment),
        value=shown,
        peak=format_value(series.maximum, series.unit),
        peak_at=clock(series.peak_at),
        **findings.during(series.start, series.end),
    )
    findings.claim("observation", text, [(result, line), (result, series.window_line)], answers=True)
    return True
