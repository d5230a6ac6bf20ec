"""The Markdown renderings of a report: the whole report in the answer's shape
(``render_markdown``: ``veridiag ask --format markdown`` prints it, ``/sessions/{id}/answer.md``
serves it, the JSON webhook sends it) and the compact chat message (``render_compact``:
Feishu/Lark cards, DingTalk and WeCom send it, issue 28).

Written for the plainest common subset of those renderers: bold lines instead of headings,
``-`` and ``1.`` lists, inline code for evidence and one link — veridiag's own; every text
from the session is escaped (``markup.commonmark``), so evidence adds no link, image or HTML.
The one HTML is our own fold (``<details>``) around the full list of confirmed facts, in the
whole report only; a renderer without HTML shows the list unfolded. Within a size limit the
verdict line is never dropped: items are added in order while they fit, then "…" and the
workbench link stand for the rest (a fold cut short is closed).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Literal

from veridiag.contracts.delivery import AnswerReport
from veridiag.delivery.compact import Compact, fit
from veridiag.delivery.markup import commonmark, html, plain
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
    """``text`` as an inline code span, whatever backticks it holds (a longer fence, CommonMark);
    inert (``markup.inert``) like every other text, for renderers that link inside code, and its
    ``<`` ``>`` in their full-width forms (``markup.plain``): a code span keeps them literal in
    CommonMark, but a chat renderer without code spans (DingTalk) or one that reads its tags
    anywhere (Feishu's ``<at id=all>``, WeCom's ``<@…>``, ``<font>``) would not."""
    text = " ".join(plain(text).split())
    runs = [len(run) for run in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


#: The fold holding every confirmed fact: HTML blocks of their own lines (CommonMark type 6), so
#: the list between them is Markdown. GitHub, GitLab and most viewers show it folded.
FOLD_OPEN = "<details>\n<summary>{summary}</summary>"
FOLD_CLOSE = "</details>"


def render_markdown(report: AnswerReport, limit: Limit | None = None) -> str:
    """The report as Markdown in the answer's shape (``report.outline``), within ``limit`` when
    one is given: the verdict, the one-line answer, the question and scope; the key facts,
    hypotheses, next steps and gaps; then every confirmed fact with its evidence, folded."""
    shown = outline(report)
    limit = limit or Limit(sys.maxsize)
    footer = f"[{escape(shown.link_text)}]({shown.link})"
    notes = "".join(f"\n\n_{escape(note)}_" for note in shown.notes)
    tail = f"\n\n{escape(shown.more)}\n\n{footer}"
    head = [("**", escape(shown.first_line), "**")] if shown.first_line else []
    head.append((f"**{escape(shown.question_label)}**{shown.colon}", escape(shown.question), ""))
    if shown.scope:
        head.append(("", escape(shown.scope), ""))
    text = f"**{escape(shown.title)}**"
    for before, body, after in head:
        part = f"\n\n{before}{body}{after}"
        if not limit.fits(text + part + tail):
            room = limit.size - limit.measure(text + f"\n\n{before}{after}" + tail)
            return text + (f"\n\n{before}{limit.cut(body, room)}{after}" if room > 1 else "") + tail
        text += part
    close = f"\n\n{FOLD_CLOSE}"
    heading, inside = "", False
    for title, item, folded in _items(shown):
        if folded and not inside:
            piece = "\n\n" + FOLD_OPEN.format(summary=html(title)) + "\n\n" + item
        else:
            piece = ("\n\n" + title + "\n" if title != heading else "\n") + item
        closing = close if folded else ""
        if not limit.fits(text + piece + closing + notes + "\n\n" + footer) or not limit.fits(
            text + piece + closing + tail
        ):
            return text + (close if inside else "") + tail
        text, heading, inside = text + piece, title, folded
    return text + (close if inside else "") + notes + "\n\n" + footer


def _items(shown: Outline) -> list[tuple[str, str, bool]]:
    """(section title, item, folded) in order, each item with its evidence lines; the fold's
    title is its summary, unescaped (it goes into HTML)."""
    items = [(f"**{escape(s.title)}**", _item(item), False) for s in shown.sections for item in s.items]
    if shown.fold is not None:
        items += [(shown.fold.title, _item(item), True) for item in shown.fold.items]
    return items


def _item(item: Item) -> str:
    marker = "- " if item.number is None else f"{item.number}. "
    lines = [marker + escape(item.text)]
    # evidence nested under the item: indented to its text, whatever the number's width
    lines += [f"{' ' * len(marker)}- {escape(e.ref)}: {code(e.excerpt)}" for e in item.evidence]
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
