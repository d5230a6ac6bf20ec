"""Plain-text tool outputs. The model-facing text is always made of lines that also occur
in the stored text, so whatever a model quotes can be found by the Gatekeeper."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from veridiag.tools.knowledge import Hit, best_section

#: Units written glued to the number ("5300ms", "23.0%"); others get a space.
_GLUED = {"ms", "s", "%"}


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def format_value(value: float, unit: str) -> str:
    number = f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}".rstrip("0").rstrip(".")
    if not unit:
        return number
    return f"{number}{unit}" if unit in _GLUED else f"{number} {unit}"


def _request_line(tool: str, request: dict[str, Any]) -> str:
    parts = [f"{k}={v!r}" if isinstance(v, str) and " " in v else f"{k}={v}" for k, v in request.items() if v]
    return f"{tool} " + " ".join(parts)


def render_logs(
    request: dict[str, Any],
    total: int,
    by_level: dict[str, int],
    patterns: Sequence[tuple[str, int, str]],
    lines: Sequence[str],
    *,
    limit: int,
    note: str | None = None,
    sampled: bool = False,
    bursts: Sequence[Sequence[Any]] = (),
) -> str:
    out = [_request_line("query_logs", request)]
    if note:
        out.append(f"note: {note}")
    if total == 0:
        out.append("matched 0 lines")
        return "\n".join(out)
    levels = ", ".join(f"{level} {count}" for level, count in sorted(by_level.items(), key=lambda kv: -kv[1]))
    out.append(f"matched {total} lines ({levels})")
    if bursts:
        out.append("bursts: " + "; ".join(f"{first} – {last} ({count} lines)" for first, last, count in bursts))
    if patterns:
        out.append("patterns" + (" (in the first 5000 lines)" if sampled else "") + ":")
        for template, count, example in patterns:
            out.append(f"  {count}× {template}")
            out.append(f"     e.g. {example}")
    out.append("lines:")
    out.extend(lines[:limit])
    return "\n".join(out)


def _stats(points: Sequence[tuple[datetime, float]], unit: str) -> str:
    values = [v for _t, v in points]
    return (
        f"min {format_value(min(values), unit)}, max {format_value(max(values), unit)}, "
        f"avg {format_value(round(statistics.fmean(values), 2), unit)}, last {format_value(values[-1], unit)} "
        f"({len(values)} points)"
    )


def render_metrics(
    request: dict[str, Any],
    unit: str,
    *,
    window: Sequence[tuple[datetime, float]],
    baseline: Sequence[tuple[datetime, float]],
    shown: Sequence[tuple[datetime, float]],
    baseline_span: tuple[datetime, datetime],
) -> str:
    """Window stats, baseline stats, the change between them, then the points."""
    peak_at, peak = max(window, key=lambda point: point[1])
    out = [
        _request_line("query_metrics", {**request, "unit": unit}),
        f"window: {_stats(window, unit)}; peak {format_value(peak, unit)} at {iso(peak_at)}",
    ]
    if baseline:
        out.append(f"baseline {iso(baseline_span[0])} – {iso(baseline_span[1])}: {_stats(baseline, unit)}")
        before = statistics.fmean(v for _t, v in baseline)
        after = statistics.fmean(v for _t, v in window)
        if before > 0:
            out.append(
                f"change: avg {format_value(round(before, 2), unit)} → {format_value(round(after, 2), unit)} "
                f"(×{after / before:.2f})"
            )
        else:
            out.append(f"change: avg {format_value(round(before, 2), unit)} → {format_value(round(after, 2), unit)}")
    else:
        out.append("baseline: no points before the window")
    out.append("points:")
    out.extend(f"{iso(moment)} {format_value(value, unit)}" for moment, value in shown)
    return "\n".join(out)


def render_knowledge(query: str, hits: Sequence[Hit], *, full: bool) -> str:
    out = [f"lookup_knowledge query={query!r}: {len(hits)} runbooks (matches are hypotheses to check, not facts)"]
    for rank, hit in enumerate(hits, start=1):
        book = hit.runbook
        services = ", ".join(book.services) or "any"
        out.append(f"[{rank}] {book.id} — {book.title} (services: {services}; score {hit.score})")
        out.append(f"symptoms: {'; '.join(book.symptoms)}")
        out.append(book.body if full else best_section(book.body, query))
    return "\n".join(out)
