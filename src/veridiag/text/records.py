"""An output's records: a line with the lines indented deeper right under it — a log pattern and
its example, a trace and its hops — where a heading ("templates:") is a record of its own and
what is indented under it a list of records. One reader for the checks that tie a fact to the
line it stands on (``gatekeeper/context.py`` ``Located.record``, ``claim.entity_grounding``,
``text/pairs.py``)."""

from __future__ import annotations

from collections.abc import Iterator

#: How many lines of an output are split into records (``records``): a bound on the cost of a rare
#: look-up, past which a fact stays unpaired (fail closed).
_LINES = 5000
#: Lines a record reaches up or down from a hit (``record_span``: a pattern's example is one line below it).
_RECORD_LINES = 8


def indent(text: str, start: int) -> int:
    """The blanks opening the line of ``text`` that starts at ``start``."""
    at = start
    while at < len(text) and text[at] == " ":
        at += 1
    return at - start


def records(output: str) -> Iterator[str]:
    """The output's records: each line with the lines indented deeper right under it (a log
    pattern and its example), over its first ``_LINES`` lines. A heading ("templates:")
    is a record of its own: what is indented under it is a list of records, not one."""
    lines = output.split("\n", _LINES)[:_LINES]
    at = 0
    while at < len(lines):
        if lines[at].rstrip().endswith(":"):
            yield lines[at]
            at += 1
            continue
        depth, end = indent(lines[at], 0), at + 1
        while end < len(lines) and lines[end].strip() and indent(lines[end], 0) > depth:
            end += 1
        yield "\n".join(lines[at:end])
        at = end if end > at + 1 else at + 1


def record_span(text: str, at: int) -> tuple[int, int]:
    """The record holding ``text[at]``: up from its line while a line is indented under the one
    before it (not under a heading: "templates:" lists records), then down over the lines
    indented deeper than the record's first; at most ``_RECORD_LINES`` each way."""
    start = text.rfind("\n", 0, at) + 1
    for _ in range(_RECORD_LINES):
        depth = indent(text, start)
        if not depth or not start:
            break
        above = text.rfind("\n", 0, start - 1) + 1
        line = text[above : start - 1]
        if not line.strip() or indent(text, above) >= depth or line.rstrip().endswith(":"):
            break
        start = above
    depth = indent(text, start)
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    for _ in range(_RECORD_LINES):
        below = end + 1
        stop = text.find("\n", below)
        stop = len(text) if stop < 0 else stop
        if below >= len(text) or not text[below:stop].strip() or indent(text, below) <= depth:
            break
        end = stop
    return start, end
