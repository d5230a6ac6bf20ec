"""The compact chat message (issue 28): what an on-call engineer reads on a phone, one message per
destination, the full answer one click away.

The verdict as a badge with the one-line answer; the answer's scope and the culprit's trend (a
text sparkline); at most five key facts, each with its first piece of evidence; hypotheses, each
with what would confirm it; a few next steps and gaps; then notes counting what was left out,
and the link to the session. ``fit`` renders it at decreasing ``Detail`` until a destination's
measure accepts it — the badge, the first line and the link always stay; the first line is cut
last, and only as far as it must be.

Each destination renders a ``Compact`` in its own markup (``markdown.render_compact``,
``slack.compact_blocks``), escaping every text from the session as that markup needs
(``markup.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from veridiag.contracts.delivery import AnswerReport
from veridiag.delivery.report import (
    Evidence,
    Item,
    cut,
    evidence_ref,
    fact_label,
    hypothesis_line,
    key_facts,
    outline,
    report_words,
    scope,
    steps_shown,
)
from veridiag.delivery.sparkline import sparkline
from veridiag.text.render import format_value

T = TypeVar("T")

#: A mark before the badge, so the verdict reads at a glance in a notification.
MARKS = {"PASS": "✅", "LOW_CONFID": "⚠️", "REJECT": "❌"}
FAILED_MARK = "⛔"
#: A compact message of any destination is aimed at this many bytes (UTF-8) of text.
TARGET_BYTES = 3072


@dataclass(frozen=True)
class Detail:
    """How much a compact message shows."""

    facts: int = 5
    fact_chars: int = 240
    excerpt_chars: int = 120
    hypotheses: int = 3
    steps: int = 3
    gaps: int = 3
    item_chars: int = 200
    scope: bool = True
    trend: bool = True
    first_line_chars: int = 10_000


#: Each less than the one before: what goes first is what a reader misses least.
DETAILS: tuple[Detail, ...] = (
    Detail(),
    Detail(gaps=1, steps=2),
    Detail(gaps=1, steps=1, excerpt_chars=80, item_chars=160),
    Detail(gaps=1, steps=1, excerpt_chars=0, hypotheses=2, item_chars=160),
    Detail(gaps=1, steps=1, excerpt_chars=0, hypotheses=1, item_chars=120, scope=False, fact_chars=160),
    # the first gap (one the records know of, when there is one: a failed call, a service without
    # data) stays while any fact is shown — facts without what could not be checked read as all
    Detail(gaps=1, steps=1, excerpt_chars=0, hypotheses=1, item_chars=120, scope=False, fact_chars=120, facts=4),
    Detail(gaps=1, steps=0, excerpt_chars=0, hypotheses=0, item_chars=120, scope=False, fact_chars=120, facts=3),
    Detail(gaps=1, steps=0, excerpt_chars=0, hypotheses=0, item_chars=120, scope=False, fact_chars=100, facts=2),
    Detail(gaps=1, steps=0, excerpt_chars=0, hypotheses=0, item_chars=120, scope=False, fact_chars=100, facts=1),
    Detail(gaps=0, steps=0, excerpt_chars=0, hypotheses=0, scope=False, facts=0, trend=False),
)


@dataclass(frozen=True)
class Group:
    """A titled list of a compact message."""

    title: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class Compact:
    """A report in its compact form, worded in its language."""

    verdict: str | None
    mark: str
    badge: str
    first_line: str
    scope: str
    #: ``(label, sparkline, range)``: the culprit's series, or None.
    trend: tuple[str, str, str] | None
    groups: tuple[Group, ...]
    notes: tuple[str, ...]
    link_text: str
    link: str

    @property
    def headline(self) -> str:
        """Badge and first line as one plain line (a notification, a card title)."""
        return f"{self.mark} {self.badge}" + (f" · {self.first_line}" if self.first_line else "")


def compact(report: AnswerReport, detail: Detail = DETAILS[0]) -> Compact:
    """``report`` in its compact form at ``detail``."""
    words = report_words()[report.lang]
    shown = outline(report)
    numbers = {fact.claim_id: index for index, fact in enumerate(report.facts, 1)}
    facts = tuple(
        Item(
            fact_label(fact, report.lang, detail.fact_chars),
            tuple(
                Evidence(evidence_ref(e), cut(" ".join(e.excerpt.split()), detail.excerpt_chars))
                for e in fact.evidence[:1]
                if detail.excerpt_chars > 0
            ),
            number=numbers.get(fact.claim_id),
        )
        for fact in key_facts(report)[: detail.facts]
    )
    hypotheses = tuple(
        Item(cut(hypothesis_line(h, report.lang), detail.item_chars * 2))
        for h in report.hypotheses[: detail.hypotheses]
    )
    # a step that is a hypothesis's confirming need is said once, under the hypothesis
    kept_steps = steps_shown(report, report.hypotheses[: detail.hypotheses])
    steps = tuple(Item(cut(step, detail.item_chars)) for step in kept_steps[: detail.steps])
    gaps = tuple(Item(cut(gap, detail.item_chars)) for gap in report.gaps[: detail.gaps])
    groups = (
        Group(words.key_facts, facts),
        Group(words.hypotheses, hypotheses),
        Group(words.next_steps, steps),
        Group(words.gaps, gaps),
    )
    left = [
        (len(report.facts) - len(facts), words.more_facts),
        (len(report.hypotheses) - len(hypotheses), words.more_hypotheses),
        (len(report.gaps) - len(gaps), words.more_gaps),
    ]
    notes = tuple(wording.format(count=count) for count, wording in left if count > 0) + shown.notes
    first = report.first_line or words.no_answer
    return Compact(
        verdict=report.verdict,
        mark=MARKS.get(report.verdict or "", FAILED_MARK),
        badge=shown.title,
        first_line=cut(first, detail.first_line_chars),
        scope=cut(scope(report), 300) if detail.scope else "",
        trend=_trend(report, words.trend) if detail.trend else None,
        groups=tuple(group for group in groups if group.items),
        notes=notes,
        link_text=shown.link_text,
        link=report.link,
    )


def fit(report: AnswerReport, render: Callable[[Compact], T], fits: Callable[[T], bool]) -> T:
    """The fullest rendering of ``report`` that ``fits``: each ``Detail`` in turn, then the
    smallest with its first line cut (by halves) until it fits. The last try is returned even
    when it does not fit (a destination's own cuts then hold its limit)."""
    last = DETAILS[-1]
    for detail in DETAILS:
        rendered = render(compact(report, detail))
        if fits(rendered):
            return rendered
    low, high = 0, len(report.first_line or "")
    best = render(compact(report, replace(last, first_line_chars=1)))
    while low < high:  # the longest first line that fits
        middle = (low + high + 1) // 2
        rendered = render(compact(report, replace(last, first_line_chars=middle)))
        if fits(rendered):
            low, best = middle, rendered
        else:
            high = middle - 1
    return best


def _trend(report: AnswerReport, wording: str) -> tuple[str, str, str] | None:
    trend = report.trend
    line = sparkline(trend.values) if trend is not None else ""
    if trend is None or not line:
        return None
    label = wording.format(service=trend.service, metric=trend.metric) if trend.service else trend.metric
    low, high = min(trend.values), max(trend.values)
    span = f"{format_value(low, trend.unit)} – {format_value(high, trend.unit)}"
    return f"#{trend.invocation_id} {label}".strip(), line, span


def byte_size(text: str) -> int:
    return len(text.encode("utf-8"))


def within(limit: int) -> Callable[[str], bool]:
    """A measure: at most ``limit`` bytes of UTF-8."""
    return lambda text: byte_size(text) <= limit
