"""The Markdown renderings of a report: the whole report (``render_markdown``: ``veridiag ask
--format markdown`` prints it, the JSON webhook sends it) and the compact chat message
(``render_compact``: Feishu/Lark cards, DingTalk and WeCom send it, issue 28).

Written for the plainest common subset of those renderers: bold lines instead of headings,
``-`` and ``1.`` lists, inline code for evidence and one link — veridiag's own; every text
from the session is escaped (``markup.commonmark``), so evidence adds no link, image or HTML.
Within a size limit the verdict line is never dropped: items are added in order while they
fit, then "…" and the workbench link stand for the rest.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Literal

from veridiag.contracts.delivery import AnswerReport
from veridiag.delivery.compact import Compact, fit
from veridiag.delivery.markup import commonmark
from veridiag.delivery.report import Item, Outline, outline


@dataclass(frozen=True)
class Limit:
    """A receiver's size limit, in characters or in UTF-8 bytes."""

    size: int
    unit: Literal["chars", "bytes"] = "chars"

    def measure(self, text: str) -> int:
        return len(text) if self.unit == "chars" else len(text.encode("utf-8"))

    def fits(self, text: str) -> bool:
        return self.measure(text) <= self.size

    def cut(self, text: str, room: int) -> str:
        """The longest start of ``text`` that, with "…", measures at most ``room``."""
        if self.measure(text) <= room:
            return text
        keep = min(len(text), max(0, room))
        while keep > 0 and self.measure(text[:keep] + "…") > room:
            keep -= max(1, (self.measure(text[:keep] + "…") - room) // 4)
        return text[: max(0, keep)] + "…"


def escape(text: str) -> str:
    """Text from a session (claims, the question, excerpts' refs) as inert CommonMark
    (``delivery/markup.py``): a link, image or HTML in a log line stays text."""
    return commonmark(text)


def code(text: str) -> str:
    """``text`` as an inline code span, whatever backticks it holds (a longer fence, CommonMark)."""
    text = " ".join(text.split())
    runs = [len(run) for run in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def render_markdown(report: AnswerReport, limit: Limit | None = None) -> str:
    """The report as Markdown, within ``limit`` when one is given."""
    shown = outline(report)
    title = f"**{escape(shown.title)}**"
    head = f"**{escape(shown.question_label)}**{shown.colon}{escape(shown.question)}\n\n{escape(shown.summary)}"
    footer = f"[{escape(shown.link_text)}]({shown.link})"
    notes = "".join(f"\n\n_{escape(note)}_" for note in shown.notes)
    limit = limit or Limit(sys.maxsize)
    tail = f"\n\n{escape(shown.more)}\n\n{footer}"
    room = limit.size - limit.measure(f"{title}\n\n" + tail)
    text = f"{title}\n\n{limit.cut(head, room)}"
    heading = None
    for section_title, item in _items(shown):
        piece = ("\n\n" + section_title + "\n" if section_title != heading else "\n") + item
        if not limit.fits(text + piece + notes + "\n\n" + footer) or not limit.fits(text + piece + tail):
            return text + tail
        text, heading = text + piece, section_title
    return text + notes + "\n\n" + footer


def _items(shown: Outline) -> list[tuple[str, str]]:
    """(section title, item) in order, each item with its evidence lines."""
    return [(f"**{escape(section.title)}**", _item(item)) for section in shown.sections for item in section.items]


def _item(item: Item) -> str:
    lines = [("- " if item.number is None else f"{item.number}. ") + escape(item.text)]
    lines += [f"   - {escape(e.ref)}: {code(e.excerpt)}" for e in item.evidence]
    return "\n".join(lines)


def compact_markdown(shown: Compact, *, head: bool = True) -> str:
    """A compact message as Markdown: the badge and first line (left out with ``head=False``,
    where the card's own header shows them), scope, trend, groups, notes and the link. Every
    text from the session is escaped; the sparkline is our own characters, in a code span."""
    parts = []
    if head:
        parts.append(f"**{escape(f'{shown.mark} {shown.badge}')}** · **{escape(shown.first_line)}**")
    if shown.scope:
        parts.append(escape(shown.scope))
    if shown.trend is not None:
        label, line, span = shown.trend
        parts.append(f"{escape(label)} {code(line)} {escape(span)}")
    for group in shown.groups:
        parts.append(f"**{escape(group.title)}**\n" + "\n".join(_item(item) for item in group.items))
    parts += [f"_{escape(note)}_" for note in shown.notes]
    parts.append(f"[{escape(shown.link_text)}]({shown.link})")
    return "\n\n".join(parts)


def render_compact(report: AnswerReport, limit: Limit, *, head: bool = True) -> str:
    """The compact message of ``report`` as Markdown, the fullest that fits ``limit``."""
    return fit(report, lambda shown: compact_markdown(shown, head=head), limit.fits)
