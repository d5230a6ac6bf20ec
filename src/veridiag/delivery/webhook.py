"""A generic JSON webhook: the whole report, typed, plus its Markdown rendering.

``{"type": "veridiag.answer", "text_format": "commonmark", "report": AnswerReport, "markdown": str}``:
every text of the report that a session wrote (the question, claims, excerpts, hypotheses, gaps,
steps, the trend's names) is escaped as the Markdown is (``markup.commonmark``: inert, link shapes
defanged, ``<``/``>``/``&`` as entities), since a receiver may render any field; its ids, verdict,
status and link are veridiag's own and sent as they are. With a ``secret``
the request is signed as the Standard Webhooks specification says — ``webhook-id``,
``webhook-timestamp`` and ``webhook-signature: v1,<base64 HMAC-SHA256 of
"{id}.{timestamp}.{body}">``, so receivers can verify it with that spec's libraries (written
here: three lines of ``hmac`` do not need the SDK and its HTTP client). A ``token`` is sent as
a bearer token. Any 2xx is delivered.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import ClassVar

from veridiag.config import DestinationSettings
from veridiag.contracts.delivery import AnswerReport
from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.delivery.destination import DESTINATIONS, JSON_HEADERS, Attempt, Outgoing, Reply, by_status, json_body
from veridiag.delivery.markdown import render_markdown
from veridiag.delivery.markup import commonmark


def standard_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<signature>``; a ``whsec_`` secret is base64 (as the spec's tools issue them)."""
    key = base64.b64decode(secret.removeprefix("whsec_")) if secret.startswith("whsec_") else secret.encode()
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


#: Report fields veridiag writes itself (ids, enumerations, the workbench link): not escaped.
_OWN_FIELDS = frozenset({"session_id", "lang", "status", "verdict", "link", "claim_id", "verification", "key_facts"})


def _escaped(value: JsonValue, key: str = "") -> JsonValue:
    """The dumped report with every text a session wrote escaped (``markup.commonmark``)."""
    if isinstance(value, str):
        return value if key in _OWN_FIELDS else commonmark(value)
    if isinstance(value, list):
        return [_escaped(item, key) for item in value]
    if isinstance(value, dict):
        return {name: _escaped(item, name) for name, item in value.items()}
    return value


def escaped_report(report: AnswerReport) -> JsonValue:
    """The report as the webhook sends it: dumped, every text a session wrote escaped."""
    return _escaped(report.model_dump(mode="json"))


@DESTINATIONS.register
class Webhook:
    id: ClassVar[str] = "webhook"

    def request(self, report: AnswerReport, target: DestinationSettings, attempt: Attempt) -> Outgoing:
        assert target.url is not None  # required by the settings
        payload: JsonObject = {
            "type": "veridiag.answer",
            "text_format": "commonmark",
            "report": escaped_report(report),
            "markdown": render_markdown(report),
        }
        body = json_body(payload)
        headers = dict(JSON_HEADERS)
        if target.secret is not None:
            # the same id on every retry of this delivery: a receiver can drop a duplicate by it
            message_id, timestamp = f"msg_{attempt.delivery_id}", int(attempt.now)
            headers["webhook-id"] = message_id
            headers["webhook-timestamp"] = str(timestamp)
            headers["webhook-signature"] = standard_signature(
                target.secret.get_secret_value(), message_id, timestamp, body
            )
        if target.token is not None:
            headers["Authorization"] = f"Bearer {target.token.get_secret_value()}"
        return Outgoing(target.url.get_secret_value(), body, headers)

    def reply(self, status: int, body: bytes) -> Reply:
        return by_status(status)
