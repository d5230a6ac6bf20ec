"""DingTalk custom group robot: ``msgtype: markdown`` with the compact message in Markdown
(``markdown.render_compact``); ``title`` is what the conversation list previews — the verdict
badge and the first line.

With 加签 (signing) on, the URL carries ``timestamp`` (Unix milliseconds) and ``sign``:
URL-encoded base64 of HMAC-SHA256 keyed with the secret over ``"{timestamp}\\n{secret}"``
(DingTalk's published algorithm). DingTalk answers HTTP 200 with ``errcode`` 0 on success;
130101 and 410100 mean "sent too fast". DingTalk refuses a body over 20000 bytes ("body 大小不合法
…请保持大小在 20000bytes 以内", 460101 "message too long, exceed 20000 bytes") — ``BODY_BYTES``;
the compact message aims at ``compact.TARGET_BYTES``, well inside.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import ClassVar

import httpx2

from veridiag.config import DestinationSettings
from veridiag.contracts.delivery import AnswerReport
from veridiag.contracts.json import JsonObject
from veridiag.delivery.compact import TARGET_BYTES, compact
from veridiag.delivery.destination import DESTINATIONS, JSON_HEADERS, Attempt, Outgoing, Reply, by_code, json_body
from veridiag.delivery.markdown import Limit, render_compact
from veridiag.delivery.markup import plain
from veridiag.delivery.report import cut

BODY_BYTES = 20_000
TITLE_CHARS = 60
_RATE_LIMITED = frozenset({130101, 410100})


def dingtalk_sign(timestamp_ms: int, secret: str) -> str:
    """The ``sign`` parameter before URL encoding (httpx encodes it into the query)."""
    digest = hmac.new(secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


@DESTINATIONS.register
class DingTalk:
    id: ClassVar[str] = "dingtalk"

    def request(self, report: AnswerReport, target: DestinationSettings, attempt: Attempt) -> Outgoing:
        assert target.url is not None  # required by the settings
        url = httpx2.URL(target.url.get_secret_value())
        if target.secret is not None:
            timestamp = int(attempt.now * 1000)
            url = url.copy_merge_params(
                {"timestamp": str(timestamp), "sign": dingtalk_sign(timestamp, target.secret.get_secret_value())}
            )
        payload: JsonObject = {
            "msgtype": "markdown",
            "markdown": {
                "title": plain(cut(compact(report).headline, TITLE_CHARS)),
                "text": render_compact(report, Limit(TARGET_BYTES, "bytes")),
            },
        }
        return Outgoing(str(url), json_body(payload), dict(JSON_HEADERS))

    def reply(self, status: int, body: bytes) -> Reply:
        return by_code(status, body, _RATE_LIMITED)
