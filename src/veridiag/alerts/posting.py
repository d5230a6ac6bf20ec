"""Alert answers posted to chat: the step a worker runs after an alert's diagnosis is stored.

The on-call team asked through an alert, not a prompt, so the answer goes back where they are
(``delivery.destinations``, narrowed by ``alerts.post_to``). Only a completed session has a
verified answer; any other is left unposted and says why in the log. Every attempt is recorded
on the session by ``deliver_session`` itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from veridiag.config import Settings
from veridiag.delivery.send import DeliveryError, choose, deliver_session
from veridiag.store.repository import SessionStore

log = logging.getLogger("veridiag.alerts")


def post_answers(store: SessionStore, settings: Settings) -> Callable[[str], None] | None:
    """The after-finish step for workers, or None when nothing is to be posted. A name in
    ``alerts.post_to`` that no destination has is a configuration error raised here, when the
    worker starts, not at the first alert."""
    if not settings.alerts.post_answers or not settings.delivery.destinations:
        return None
    names = tuple(settings.alerts.post_to)
    choose(settings.delivery, names)

    def post(session_id: str) -> None:
        try:
            results = deliver_session(store, settings, session_id, names)
        except DeliveryError as exc:
            log.warning("alert session %s not posted: %s", session_id, exc)
            return
        for result in results:
            log.info(
                "alert session %s → %s: %s after %d attempt(s)",
                session_id,
                result.destination,
                result.outcome,
                result.attempts,
            )

    return post
