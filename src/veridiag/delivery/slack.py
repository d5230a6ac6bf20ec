"""Slack: an incoming webhook, or a bot token and a channel (``chat.postMessage``), with the
compact message (issue 28) as Block Kit.

Limits as Slack documents them: a message at most 50 blocks, a section's text at most 3000
characters, a header's 150, a button's 75, a context block at most 10 elements (and messages far
below the 40 000-character text cap are refused as ``msg_blocks_too_long``). A chat answer is
kept much smaller: at most ``MESSAGE_BLOCKS`` blocks and ``MESSAGE_BYTES`` bytes of JSON — the
verdict badge with the one-line answer first, the link button last.

Text from the session goes out in ``rich_text`` blocks (Slack's recommended form for text it
must not read as markup: bold and code are styles, never characters in the text) and
``plain_text`` objects; only our own labels are styled. Every text, the notification ``text``
included, has ``& < >`` escaped (``markup.mrkdwn``): a ``<!channel>`` or ``<@U…>`` in evidence
mentions no one.
"""

from __future__ import annotations

from typing import ClassVar

from veridiag.config import DestinationSettings
from veridiag.contracts.delivery import AnswerReport
from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.delivery.compact import TARGET_BYTES, Compact, fit
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
from veridiag.delivery.report import Item, cut

POST_MESSAGE = "https://slack.com/api/chat.postMessage"
MAX_BLOCKS = 50
SECTION_CHARS = 3000
HEADER_CHARS = 150
BUTTON_CHARS = 75
CONTEXT_ELEMENTS = 10
CONTEXT_TEXT_CHARS = 2000
#: A chat answer's size: at most this many blocks …
MESSAGE_BLOCKS = 10
#: … and this many bytes of JSON, the whole request body.
MESSAGE_BYTES = TARGET_BYTES
#: The notification ``text`` (what a phone's lock screen shows).
NOTIFICATION_CHARS = 300
#: ``chat.postMessage`` errors worth another attempt (Slack's own wording).
_RETRY_ERRORS = frozenset({"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"})


def mrkdwn_escape(text: str) -> str:
    """The three characters Slack asks to be escaped in any text it parses (``markup.mrkdwn``)."""
    return mrkdwn(text)


def _plain(text: str, limit: int = SECTION_CHARS) -> JsonObject:
    """A ``plain_text`` object, escaped as well: no ``<!channel>`` or ``<url|label>`` in any
    field, whichever way a client reads it."""
    return {"type": "plain_text", "text": cut(mrkdwn(text), limit), "emoji": False}


def _text(text: str, limit: int = SECTION_CHARS, **style: bool) -> JsonObject:
    """A ``rich_text`` text element, escaped, styled by us only."""
    element: JsonObject = {"type": "text", "text": cut(mrkdwn(text), limit)}
    if style:
        element["style"] = dict(style)
    return element


def _rich(*elements: JsonObject) -> JsonObject:
    return {"type": "rich_text", "elements": [{"type": "rich_text_section", "elements": list(elements)}]}


def _item(item: Item) -> str:
    lines = [(f"{item.number}. " if item.number is not None else "• ") + item.text]
    lines += [f"    {e.ref}: {e.excerpt}" for e in item.evidence]
    return "\n".join(lines)


def compact_blocks(shown: Compact) -> list[JsonValue]:
    """The compact message as Block Kit: badge and first line, scope and trend, one block per
    group, notes, the button — at most ``MESSAGE_BLOCKS``."""
    found: list[JsonValue] = [
        _rich(_text(f"{shown.mark} {shown.badge}", code=True), _text(" "), _text(shown.first_line, bold=True))
    ]
    context = [shown.scope] if shown.scope else []
    if shown.trend is not None:
        label, line, span = shown.trend
        context.append(f"{label} {line} {span}")
    if context:
        found.append({"type": "context", "elements": [_plain(text, CONTEXT_TEXT_CHARS) for text in context]})
    for group in shown.groups:
        body = "\n".join(_item(item) for item in group.items)
        found.append(_rich(_text(group.title, bold=True), _text("\n" + body)))
    if shown.notes:
        notes = [_plain(note, CONTEXT_TEXT_CHARS) for note in shown.notes[:CONTEXT_ELEMENTS]]
        found.append({"type": "context", "elements": list(notes)})
    found.append(
        {
            "type": "actions",
            "elements": [
                {"type": "button", "text": _plain(shown.link_text, BUTTON_CHARS), "url": shown.link, "style": "primary"}
            ],
        }
    )
    return found


@DESTINATIONS.register
class Slack:
    id: ClassVar[str] = "slack"

    def request(self, report: AnswerReport, target: DestinationSettings, attempt: Attempt) -> Outgoing:
        def payload_of(shown: Compact) -> JsonObject:
            payload: JsonObject = {
                # the notification text, and what clients without Block Kit show
                "text": cut(mrkdwn(shown.headline), NOTIFICATION_CHARS),
                "blocks": compact_blocks(shown),
                "unfurl_links": False,
            }
            if target.token is not None:
                payload["channel"] = target.channel
            return payload

        def fits(payload: JsonObject) -> bool:
            shown_blocks = payload["blocks"]
            count = len(shown_blocks) if isinstance(shown_blocks, list) else 0
            return count <= MESSAGE_BLOCKS and len(json_body(payload)) <= MESSAGE_BYTES

        payload = fit(report, payload_of, fits)
        url = target.url.get_secret_value() if target.url is not None else POST_MESSAGE
        if target.token is None:  # an incoming webhook: the URL is the credential
            return Outgoing(url, json_body(payload), dict(JSON_HEADERS))
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
