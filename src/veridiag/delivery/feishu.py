"""Feishu / Lark custom group bot: an interactive card (``msg_type: interactive``) whose header
holds the verdict badge and the one-line answer, coloured by verdict, whose body is the rest of
the compact message in Markdown (``markdown.render_compact``), and a button to the workbench.

With signature verification on, each request carries ``timestamp`` (Unix seconds) and
``sign``: base64 of HMAC-SHA256 keyed with ``"{timestamp}\\n{secret}"`` over an empty message
(Feishu's published algorithm). The custom bot's guide limits a request body to 20 KB
(``BODY_BYTES``; cards are documented up to ~30 KB, the stricter one holds); the compact message
aims at ``compact.TARGET_BYTES``, well inside. Feishu answers HTTP 200 with ``code`` 0 on
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
from veridiag.delivery.compact import TARGET_BYTES, compact
from veridiag.delivery.destination import DESTINATIONS, JSON_HEADERS, Attempt, Outgoing, Reply, by_code, json_body
from veridiag.delivery.markdown import Limit, render_compact
from veridiag.delivery.markup import plain
from veridiag.delivery.report import cut

BODY_BYTES = 20_000
#: A card title shows up to four lines; the first line is cut well before.
TITLE_CHARS = 200
_TEMPLATES = {"PASS": "green", "LOW_CONFID": "orange", "REJECT": "red"}
_RATE_LIMITED = frozenset({11232, 9499})


def feishu_sign(timestamp: int, secret: str) -> str:
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


@DESTINATIONS.register
class Feishu:
    id: ClassVar[str] = "feishu"

    def request(self, report: AnswerReport, target: DestinationSettings, attempt: Attempt) -> Outgoing:
        shown = compact(report)
        card: JsonObject = {
            "config": {"wide_screen_mode": True},
            "header": {
                "title": {"tag": "plain_text", "content": plain(cut(shown.headline, TITLE_CHARS))},
                "template": _TEMPLATES.get(report.verdict or "", "grey"),
            },
            "elements": [
                {"tag": "markdown", "content": render_compact(report, Limit(TARGET_BYTES, "bytes"), head=False)},
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
