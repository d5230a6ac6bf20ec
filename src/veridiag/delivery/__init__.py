"""Posting verified answers where the team works: Slack, Feishu/Lark, DingTalk, WeCom and a
generic JSON webhook (``veridiag ask --deliver``, ``veridiag deliver``).

``report.py`` builds one ``AnswerReport`` from the session's answer document and words it
once (``outline``); ``markdown.py`` is the one Markdown rendering; each destination is a small
module registered by kind in ``destination.DESTINATIONS``; ``send.py`` posts, retries and
records each attempt on the session.
"""

from veridiag.delivery import dingtalk, feishu, slack, webhook, wecom
from veridiag.delivery.destination import DESTINATIONS, Destination
from veridiag.delivery.markdown import Limit, render_markdown
from veridiag.delivery.report import build_report, session_link
from veridiag.delivery.send import DeliveryError, DeliveryResult, choose, deliver, deliver_session, session_report

__all__ = [
    "DESTINATIONS",
    "DeliveryError",
    "DeliveryResult",
    "Destination",
    "Limit",
    "build_report",
    "choose",
    "deliver",
    "deliver_session",
    "dingtalk",
    "feishu",
    "render_markdown",
    "session_link",
    "session_report",
    "slack",
    "webhook",
    "wecom",
]
