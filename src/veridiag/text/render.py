"""How a tool call and its values are written, in one place: the stored output, the claims that
quote it and the checks that look facts up in it must spell a time, a value and an invocation's
arguments alike, or a true fact would not be found."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from veridiag.contracts.invocation import InvocationView

#: Units written glued to the number ("5300ms", "23.0%", a unitless counter's "0.4/s"); others get a space.
_GLUED = {"ms", "s", "%", "/s"}
#: A template's leading fields whose value varies (``TraceID: <*> SpanID: <*>``, ``[<*>]``,
#: ``req=<*>``): they say which request, not what happened.
_VARYING_LEAD = re.compile(r"^(?:\s*(?:[\w.\-]+\s*[:=]\s*)?[\[(]?<\*>[\])]?[,;:]?)+\s*")
#: What must remain for the rest to tell something: a word of three letters.
_WORD = re.compile(r"[^\W\d_]{3,}")
#: An exception or error class named with its message ("java.lang.IllegalStateException: No
#: instances …", "ValueError: …"): the class's own name, after its package.
_RAISED = re.compile(r"(?<![\w$])(?:[A-Za-z_][\w$]*\.)*(?P<name>[A-Z][\w$]*(?:Exception|Error|Fault))\s*:\s*(?=\S)")


def iso(moment: datetime) -> str:
    """``2026-07-07T10:01:02Z``; a naive time is taken as UTC. ``isoformat`` rather than
    ``strftime``: glibc's ``%Y`` writes year 1 as ``1``, which no ISO reader takes back."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def format_value(value: float, unit: str) -> str:
    """A metric value as outputs and claims write it: ``5300ms``, ``22.85%``, ``37 connections``;
    below 0.01 two significant digits (``0.0033 restarts/s``), so a slow counter's rate is no "0"."""
    if float(value).is_integer():
        number = f"{value:.0f}"
    else:
        digits = 2 if abs(value) >= 0.01 else 1 - math.floor(math.log10(abs(value)))
        number = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    if not unit:
        return number
    return f"{number}{unit}" if unit in _GLUED else f"{number} {unit}"


def parse_value(text: str, unit: str) -> float | None:
    """``format_value``'s inverse: the number of ``5300ms`` / ``37 connections`` written with
    ``unit``, or None when ``text`` is not such a value. Written by hand because the spelling is
    this module's own (no locale, no grouping): the unit stripped, the rest read by ``float``."""
    number = text.removesuffix(unit).rstrip() if unit else text
    if unit and number == text:
        return None
    try:
        value = float(number)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def rounded(value: float) -> float:
    """A statistic as outputs and claims state it: two decimals, but a small value (a slow
    counter's rate) keeps what ``format_value`` shows of it instead of reading 0."""
    return round(value, 2) if abs(value) >= 0.01 else value


def telling_part(template: str) -> str:
    """A log template as a sentence names it: from the last exception it names with its message
    (the innermost, in "… nested exception is java.lang.IllegalStateException: No instances …",
    read from its class name), else from its first field that does not vary ("TraceID: <*>
    SpanID: <*> Servlet … failed" reads "Servlet … failed"). A template that would keep no word
    is returned whole. What is kept is the template's own end, so a claim quoting it still
    quotes its evidence."""
    raised = list(_RAISED.finditer(template))
    if raised and _WORD.search(template[raised[-1].end() :]):
        return template[raised[-1].start("name") :]
    cut = _VARYING_LEAD.match(template)
    rest = template[cut.end() :] if cut else template
    return rest if rest != template and _WORD.search(rest) else template


def request_line(tool: str, request: Mapping[str, Any]) -> str:
    """An output's first line: the call as made (``query_logs service=payment-service …``)."""
    parts = [f"{k}={v!r}" if isinstance(v, str) and " " in v else f"{k}={v}" for k, v in request.items() if v]
    return f"{tool} " + " ".join(parts)


#: Retrieval details kept to be drawn, never to be quoted: figures no output line states (a log
#: query's lines per time bucket), so no fact is grounded in them (fail closed).
DRAWN_ONLY = frozenset({"counts_over_time"})


def invocation_json(part: Mapping[str, Any] | None) -> str:
    """An invocation's arguments or retrieval details as text a fact can be found in (keys sorted,
    values that are no JSON as text, ``DRAWN_ONLY`` keys left out); empty when there are none."""
    if part and DRAWN_ONLY.intersection(part):
        part = {key: value for key, value in part.items() if key not in DRAWN_ONLY}
    return json.dumps(part, ensure_ascii=False, sort_keys=True, default=str) if part else ""


def invocation_context(invocation: InvocationView, *, records: bool = True) -> str:
    """Arguments and retrieval details: small, and often where the service name or the window lives.
    ``records=False``: without the details' lists of records (a log query's patterns and bursts, a
    metric's anomalies), which restate lines of the output, nor the numbers the call asked for
    (``limit: 6`` grounded "报了 6 条") — what is left are the call's own properties (its window,
    service and search, its counts by level, a series' min and max)."""
    arguments, details = invocation.arguments, invocation.retrieval_details
    if not records:
        # a number asked for is a knob of the request (limit, step_seconds, top), no finding
        arguments = {key: value for key, value in arguments.items() if not _knob(value)}
        if details:
            details = {key: value for key, value in details.items() if not _records(value)}
    return "\n".join(text for text in (invocation_json(arguments), invocation_json(details)) if text)


def _knob(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _records(value: object) -> bool:
    """A list of records (of objects or rows), not a value written as a list (a window's two ends)."""
    return isinstance(value, list) and any(isinstance(item, dict | list | tuple) for item in value)
