"""Feishu / Lark custom group bot: an interactive card (``msg_type: interactive``) whose body is
the shared Markdown rendering, with a header coloured by verdict and a button to the workbench.

With signature verification on, each request carries ``timestamp`` (Unix seconds) and
``sign``: base64 of HMAC-SHA256 keyed with ``"{timestamp}\\n{secret}"`` over an empty message
(Feishu's published algorithm). The bot refuses bodies over 20 KB; the Markdown is kept to
``MARKDOWN_BYTES`` so the card around it fits. Feishu answers HTTP 200 with ``code`` 0 on
success; 11232 and 9499 are its rate limits.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import ClassVar

from veridiag.config import DestinationSettings
from veridiag.contracts.delivery import AnswerReport
from veridiag.contracts.json import JsonObject
from veridiag.delivery.destination import DESTINATIONS, JSON_HEADERS, Attempt, Outgoing, Reply, by_code, json_body
from veridiag.delivery.markdown import Limit, render_markdown
from veridiag.delivery.report import cut, outline

MARKDOWN_BYTES = 16_000
_TEMPLATES = {"PASS": "green", "LOW_CONFID": "orange", "REJECT": "red"}
_RATE_LIMITED = frozenset({11232, 9499})


def feishu_sign(timestamp: int, secret: str) -> str:
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


@DESTINATIONS.register
class Feishu:
    id: ClassVar[str] = "feishu"

    def request(self, report: AnswerReport, target: DestinationSettings, attempt: Attempt) -> Outgoing:
        shown = outline(report)
        card: JsonObject = {
            "config": {"wide_screen_mode": True},
            "header": {
                "title": {"tag": "plain_text", "content": cut(shown.title, 100)},
                "template": _TEMPLATES.get(report.verdict or "", "grey"),
            },
            "elements": [
                {"tag": "markdown", "content": render_markdown(report, Limit(MARKDOWN_BYTES, "bytes"))},
                {
                    "tag": "action",
                    "actions": [
                        {
                            "tag": "button",
                            "text": {"tag": "plain_text", "content": shown.link_text},
                            "type": "primary",
                            "url": shown.link,
                        }
                    ],
                },
            ],
        }
        payload: JsonObject = {"msg_type": "interactive", "card": card}
        if target.secret is not None:
            timestamp = int(attempt.now)
            sign = feishu_sign(timestamp, target.secret.get_secret_value())
            payload = {"timestamp": str(timestamp), "sign": sign, **payload}
        assert target.url is not None  # required by the settings
        return Outgoing(target.url.get_secret_value(), json_body(payload), dict(JSON_HEADERS))

    def reply(self, status: int, body: bytes) -> Reply:
        return by_code(status, body, _RATE_LIMITED, keys=("code", "msg"))
