"""Posting verified answers where the team works: Slack, Feishu/Lark, DingTalk, WeCom and a
generic JSON webhook (``veridiag ask --deliver``, ``veridiag deliver``).

``report.py`` builds one ``AnswerReport`` from the session's answer document and words it
once (``outline``, in the answer's shape); ``answer.py`` reads what an answer says first (the
one-line answer, the key facts in the answer's order, the culprit's series) and ``compact.py``
shapes the chat message; ``markdown.py`` renders the whole report (every fact folded) and the
compact message; each destination is a small
module registered by kind in ``destination.DESTINATIONS``; ``send.py`` posts, retries and
records each attempt on the session. Names are imported from their module when first used
(``veridiag._lazy``): ``ask --format markdown`` needs no HTTP client.
"""

from typing import TYPE_CHECKING

from veridiag._lazy import lazy_exports

if TYPE_CHECKING:
    from veridiag.delivery.destination import DESTINATIONS, Destination
    from veridiag.delivery.markdown import Limit, render_markdown
    from veridiag.delivery.report import build_report, session_link, session_report
    from veridiag.delivery.send import DeliveryError, DeliveryResult, choose, deliver, deliver_session

__getattr__ = lazy_exports(
    __name__,
    {
        ".destination": ("DESTINATIONS", "Destination"),
        ".markdown": ("Limit", "render_markdown"),
        ".report": ("build_report", "session_link", "session_report"),
        ".send": ("DeliveryError", "DeliveryResult", "choose", "deliver", "deliver_session"),
    },
)

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
    "render_markdown",
    "session_link",
    "session_report",
]
