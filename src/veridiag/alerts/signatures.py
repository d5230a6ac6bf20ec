"""HMAC signatures of webhook deliveries, for senders that sign (checked in constant time).

Checked against each vendor's documentation:

- PagerDuty v3 — https://developer.pagerduty.com/docs/webhooks/webhook-signatures/ :
  ``X-PagerDuty-Signature`` holds one or more comma-separated ``v1=<hex HMAC-SHA256 of the raw
  body>`` (one per signing secret while a secret is rotated); the delivery is authentic when any
  ``v1`` value matches. PagerDuty sends no timestamp, so there is nothing to check for replay.
- Grafana alerting — https://grafana.com/docs/grafana/latest/alerting/configure-notifications/manage-contact-points/integrations/webhook-notifier/
  (section "HMAC signature"): the signature header is set on the contact point (default
  ``X-Grafana-Alerting-Signature``) and holds the hex HMAC-SHA256 of the body, or of
  ``<timestamp>:<body>`` when the contact point also names a timestamp header (no default
  name), in which Grafana sends the Unix time in seconds; the receiver should check that it is
  recent, to refuse replays.
"""

from __future__ import annotations

import hashlib
import hmac

#: Longest signature header read (a rotation carries a few; anything longer is not one).
_MAX_HEADER = 1024
#: How far a sender's timestamp may be from our clock, either way, before the delivery is
#: refused as a replay (or a clock too wrong to trust).
REPLAY_WINDOW_SECONDS = 300


def _mac(secret: str, message: bytes) -> bytes:
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest().encode()


def pagerduty_signed(body: bytes, header: str, secret: str) -> bool:
    expected = _mac(secret, body)
    signatures = (part.strip().partition("=") for part in header[:_MAX_HEADER].split(","))
    return any(
        hmac.compare_digest(value.strip().lower().encode(), expected)
        for version, _, value in signatures
        if version == "v1"
    )


def grafana_signed(body: bytes, header: str, secret: str, timestamp: str | None = None) -> bool:
    message = f"{timestamp}:".encode() + body if timestamp is not None else body
    return hmac.compare_digest(header[:_MAX_HEADER].strip().lower().encode(), _mac(secret, message))


def stale(timestamp: str, now: float) -> str | None:
    """Why a signed delivery's timestamp (Unix seconds) is refused, or None when it is recent;
    a signature only proves who sent the body, not that it is not a recording sent again."""
    try:
        sent = int(timestamp.strip())
    except ValueError:
        return f"is not Unix seconds: {timestamp[:40]!r}"
    if now - sent > REPLAY_WINDOW_SECONDS:
        return f"is older than {REPLAY_WINDOW_SECONDS // 60} minutes (a replayed delivery?)"
    if sent - now > REPLAY_WINDOW_SECONDS:
        return f"is more than {REPLAY_WINDOW_SECONDS // 60} minutes ahead of this server's clock"
    return None
