"""What a destination is: a registered kind that turns a report into one HTTP request and reads
the receiver's reply. Sending, retrying and recording live in ``send.py``; each vendor's
payload shape, signature and limits in its own module (``slack.py``, ``feishu.py``,
``dingtalk.py``, ``wecom.py``, ``webhook.py``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol

from veridiag.config import DestinationSettings
from veridiag.contracts.delivery import AnswerReport
from veridiag.contracts.json import JsonObject, json_object
from veridiag.contracts.registry import Registry


@dataclass(frozen=True)
class Outgoing:
    """One request, built afresh per attempt (signatures carry the time they were made)."""

    url: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Attempt:
    """Which attempt a request is built for: ``delivery_id`` stays the same across the retries
    of one delivery (a receiver may drop duplicates by it), ``now`` is the Unix time to sign."""

    delivery_id: str
    number: int
    now: float


@dataclass(frozen=True)
class Reply:
    """How the receiver answered: delivered, worth another attempt, or refused for good."""

    outcome: Literal["delivered", "retry", "failed"]
    error: str | None = None


class Destination(Protocol):
    """A kind of receiver, registered by ``id`` (the settings' ``kind``)."""

    id: ClassVar[str]

    def request(self, report: AnswerReport, target: DestinationSettings, attempt: Attempt) -> Outgoing:
        """The request posting ``report`` to ``target``, signed for ``attempt``."""
        ...

    def reply(self, status: int, body: bytes) -> Reply:
        """The receiver's answer, read from its HTTP status and body."""
        ...


DESTINATIONS: Registry[Destination] = Registry("destination")


def json_body(payload: JsonObject) -> bytes:
    """UTF-8 JSON as sent: Chinese stays Chinese, so a byte limit counts what the receiver counts."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


JSON_HEADERS = {"Content-Type": "application/json; charset=utf-8"}


def by_status(status: int) -> Reply:
    """The HTTP status alone: 2xx delivered; 408, 429 and 5xx retried; any other 4xx refused."""
    if 200 <= status < 300:
        return Reply("delivered")
    if status in (408, 429) or status >= 500:
        return Reply("retry", f"HTTP {status}")
    return Reply("failed", f"HTTP {status}")


def by_code(
    status: int, body: bytes, retry_codes: frozenset[int], keys: tuple[str, str] = ("errcode", "errmsg")
) -> Reply:
    """Bots that answer HTTP 200 with an error code in the JSON body (Feishu, DingTalk, WeCom):
    code 0 is delivered, a rate-limit code is retried, any other code or reply is refused."""
    first = by_status(status)
    if first.outcome != "delivered":
        return first
    data = reply_json(body)
    code_key, message_key = keys
    code = data.get(code_key)
    if code == 0:
        return Reply("delivered")
    if not isinstance(code, int):
        return Reply("failed", f"unexpected reply: {body[:200].decode('utf-8', 'replace')}")
    message = f"{code_key} {code}: {data.get(message_key)}"
    return Reply("retry" if code in retry_codes else "failed", message)


def reply_json(body: bytes) -> JsonObject:
    """A receiver's JSON reply; an empty object when it sent something else."""
    try:
        return json_object(json.loads(body))
    except ValueError:
        return {}
