"""Slack: an incoming webhook, or a bot token and a channel (``chat.postMessage``), with the
report as Block Kit.

Limits as Slack documents them: a section's text at most 3000 characters, a header's 150, a
message at most 50 blocks, a context block at most 10 elements. Facts and their evidence go
out as ``plain_text`` (Slack's mrkdwn has no escape for ``*`` or ``_``, and log lines are full
of both); only our own labels are mrkdwn. Every text, the notification ``text`` included, has
``& < >`` escaped (``markup.mrkdwn``): a ``<!channel>`` or ``<@U…>`` in evidence mentions no one.
What does not fit ends in a "…" note and the button
to the workbench, which is always the last block — the header with the verdict the first.
"""

from __future__ import annotations

from typing import ClassVar

from veridiag.config import DestinationSettings
from veridiag.contracts.delivery import AnswerReport
from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.delivery.destination import (
    DESTINATIONS,
    JSON_HEADERS,
    Attempt,
    Outgoing,
    Reply,
    by_status,
    json_body,
    reply_json,
)
from veridiag.delivery.markup import mrkdwn
from veridiag.delivery.report import Outline, cut, outline

POST_MESSAGE = "https://slack.com/api/chat.postMessage"
MAX_BLOCKS = 50
SECTION_CHARS = 3000
HEADER_CHARS = 150
CONTEXT_ELEMENTS = 10
CONTEXT_TEXT_CHARS = 2000
#: ``chat.postMessage`` errors worth another attempt (Slack's own wording).
_RETRY_ERRORS = frozenset({"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"})


def mrkdwn_escape(text: str) -> str:
    """The three characters Slack asks to be escaped in any text it parses (``markup.mrkdwn``)."""
    return mrkdwn(text)


def _plain(text: str, limit: int = SECTION_CHARS) -> JsonObject:
    """A ``plain_text`` object, escaped as well: no ``<!channel>`` or ``<url|label>`` in any
    field, whichever way a client reads it."""
    return {"type": "plain_text", "text": cut(mrkdwn(text), limit), "emoji": False}


def _section(text: JsonObject) -> JsonObject:
    return {"type": "section", "text": text}


def _label(text: str) -> JsonObject:
    return _section({"type": "mrkdwn", "text": cut(f"*{mrkdwn_escape(text)}*", SECTION_CHARS)})


def blocks(shown: Outline) -> list[JsonValue]:
    """The outline as Block Kit, at most ``MAX_BLOCKS``; header and button always kept."""
    head: list[JsonValue] = [
        {"type": "header", "text": _plain(shown.title, HEADER_CHARS)},
        _section(
            {
                "type": "mrkdwn",
                "text": cut(
                    f"*{mrkdwn_escape(shown.question_label)}*{shown.colon}{mrkdwn_escape(shown.question)}\n"
                    f"{mrkdwn_escape(shown.summary)}",
                    SECTION_CHARS,
                ),
            }
        ),
    ]
    button: JsonValue = {
        "type": "actions",
        "elements": [{"type": "button", "text": _plain(shown.link_text, 75), "url": shown.link, "style": "primary"}],
    }
    notes: list[JsonValue] = [
        {"type": "context", "elements": [_plain(note, CONTEXT_TEXT_CHARS)]} for note in shown.notes
    ]
    body: list[list[JsonValue]] = []  # groups that go in whole or not at all
    for section in shown.sections:
        for index, item in enumerate(section.items):
            group: list[JsonValue] = [_label(section.title)] if index == 0 else []
            bullet = f"{item.number}. " if item.number is not None else "• "
            group.append(_section(_plain(bullet + item.text)))
            if item.evidence:
                shown_evidence: list[JsonValue] = [
                    _plain(f"{e.ref}: {e.excerpt}", CONTEXT_TEXT_CHARS) for e in item.evidence
                ]
                if len(shown_evidence) > CONTEXT_ELEMENTS:
                    shown_evidence = [*shown_evidence[: CONTEXT_ELEMENTS - 1], _plain("…")]
                group.append({"type": "context", "elements": shown_evidence})
            body.append(group)
    room = MAX_BLOCKS - len(head) - len(notes) - 1
    kept: list[JsonValue] = []
    for number, group in enumerate(body):
        # a cut needs one block left for the "…" note
        needed = len(group) + (1 if number < len(body) - 1 else 0)
        if len(kept) + needed > room:
            kept.append({"type": "context", "elements": [_plain(shown.more, CONTEXT_TEXT_CHARS)]})
            break
        kept.extend(group)
    return [*head, *kept, *notes, button]


@DESTINATIONS.register
class Slack:
    id: ClassVar[str] = "slack"

    def request(self, report: AnswerReport, target: DestinationSettings, attempt: Attempt) -> Outgoing:
        shown = outline(report)
        payload: JsonObject = {
            # the notification text, and what clients without Block Kit show
            "text": cut(mrkdwn(f"{shown.title} — {report.question}"), SECTION_CHARS),
            "blocks": blocks(shown),
            "unfurl_links": False,
        }
        url = target.url.get_secret_value() if target.url is not None else POST_MESSAGE
        if target.token is None:  # an incoming webhook: the URL is the credential
            return Outgoing(url, json_body(payload), dict(JSON_HEADERS))
        payload["channel"] = target.channel
        headers = {**JSON_HEADERS, "Authorization": f"Bearer {target.token.get_secret_value()}"}
        return Outgoing(url, json_body(payload), headers)

    def reply(self, status: int, body: bytes) -> Reply:
        """A webhook answers ``ok`` (or an HTTP error); ``chat.postMessage`` answers 200 with
        ``{"ok": false, "error": …}`` on failure."""
        first = by_status(status)
        if first.outcome != "delivered" or body.strip() == b"ok":
            return first
        data = reply_json(body)
        if data.get("ok") is True:
            return first
        error = data.get("error")
        if data.get("ok") is False and isinstance(error, str):
            return Reply("retry" if error in _RETRY_ERRORS else "failed", f"slack: {error}")
        return Reply("failed", f"unexpected reply: {body[:200].decode('utf-8', 'replace')}")
