"""WeCom (企业微信) group robot: ``msgtype: markdown`` with the compact message in Markdown
(``markdown.render_compact``), whose ``content`` WeCom takes up to 4096 bytes of UTF-8 (its
group-robot guide; a longer one is refused, errcode 40058 "markdown.content exceed max length
4096"). The compact message aims at ``compact.TARGET_BYTES``, well inside. WeCom answers HTTP
200 with ``errcode`` 0 on success; 45009 is its rate limit (20 messages a minute per robot)."""

from __future__ import annotations

from typing import ClassVar

from veridiag.config import DestinationSettings
from veridiag.contracts.delivery import AnswerReport
from veridiag.contracts.json import JsonObject
from veridiag.delivery.compact import TARGET_BYTES
from veridiag.delivery.destination import DESTINATIONS, JSON_HEADERS, Attempt, Outgoing, Reply, by_code, json_body
from veridiag.delivery.markdown import Limit, render_compact

CONTENT_BYTES = 4096
_RATE_LIMITED = frozenset({45009})


@DESTINATIONS.register
class WeCom:
    id: ClassVar[str] = "wecom"

    def request(self, report: AnswerReport, target: DestinationSettings, attempt: Attempt) -> Outgoing:
        assert target.url is not None  # required by the settings
        payload: JsonObject = {
            "msgtype": "markdown",
            "markdown": {"content": render_compact(report, Limit(min(CONTENT_BYTES, TARGET_BYTES), "bytes"))},
        }
        return Outgoing(target.url.get_secret_value(), json_body(payload), dict(JSON_HEADERS))

    def reply(self, status: int, body: bytes) -> Reply:
        return by_code(status, body, _RATE_LIMITED)
